#include "linktablemodel.h"

#include "heatscale.h"
#include "units.h"

#include <QColor>

namespace sa::views {

namespace {

QString tierName(LinkTier t) {
    switch (t) {
    case LinkTier::InterBuilding:
        return QStringLiteral("between buildings");
    case LinkTier::BuildingUplink:
        return QStringLiteral("building uplink");
    case LinkTier::ZoneUplink:
        return QStringLiteral("zone uplink");
    }
    return {};
}

QString dimsOf(const LinkUsage& u) {
    QStringList names;
    for (Dim d : u.dims)
        names << QString::fromLatin1(toString(d)).toUpper();
    return names.join(QStringLiteral(", "));
}

} // namespace

LinkTableModel::LinkTableModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void LinkTableModel::setEvaluation(std::shared_ptr<const Evaluation> evaluation) {
    // Same links as before (a new plan on the same cluster): update the
    // values in place so the selection and scroll position survive a drag.
    const bool sameRows =
        evaluation_ && evaluation && evaluation_->links.size() == evaluation->links.size() &&
        std::equal(evaluation_->links.begin(), evaluation_->links.end(), evaluation->links.begin(),
                   [](const LinkUsage& a, const LinkUsage& b) {
                       return a.name == b.name && a.tier == b.tier;
                   });
    if (sameRows) {
        evaluation_ = std::move(evaluation);
        if (!evaluation_->links.empty())
            Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        return;
    }
    beginResetModel();
    evaluation_ = std::move(evaluation);
    endResetModel();
}

int LinkTableModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !evaluation_)
        return 0;
    return int(evaluation_->links.size());
}

int LinkTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LinkTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const LinkUsage& u = evaluation_->links[std::size_t(index.row())];
    const double step = evaluation_->step_time_s;
    // With others' traffic on the link: "job X + background Y of Z".
    const auto shared = [&] {
        const double job = step > 0 ? u.bytes_per_step * 8 / step / 1e9 : 0.0;
        return QStringLiteral("job %1 + background %2 of %3")
            .arg(formatBandwidthGbps(job), formatBandwidthGbps(u.background_gbps),
                 formatBandwidthGbps(u.capacity_gbps));
    };
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name:
            return QString::fromStdString(u.name);
        case Tier:
            return tierName(u.tier);
        case Capacity:
            return u.background_gbps > 0 ? shared() : formatBandwidthGbps(u.capacity_gbps);
        case Latency:
            // An uplink inside a building has no latency of its own in the
            // model: each collective step there pays the building's step.
            return u.tier != LinkTier::InterBuilding && u.latency_ms <= 0
                       ? QStringLiteral("per step")
                       : formatLatencyMs(u.latency_ms);
        case Technology:
            return QString::fromStdString(u.technology);
        case BytesPerStep:
            return formatBytes(u.bytes_per_step);
        case Busy:
            return formatSeconds(u.busy_s);
        case Utilization:
            return formatPercent(u.utilization);
        case PeakUtilization:
            return formatPercent(u.peak_utilization);
        case Dims:
            return dimsOf(u);
        }
        return {};
    }
    if (role == SortRole) {
        switch (index.column()) {
        case Name:
            return QString::fromStdString(u.name);
        case Tier:
            return int(u.tier);
        case Capacity:
            return u.capacity_gbps;
        case Latency:
            return u.latency_ms;
        case Technology:
            return QString::fromStdString(u.technology);
        case BytesPerStep:
            return u.bytes_per_step;
        case Busy:
            return u.busy_s;
        case Utilization:
            return u.utilization;
        case PeakUtilization:
            return u.peak_utilization;
        case Dims:
            return dimsOf(u);
        }
        return {};
    }
    if (role == Qt::TextAlignmentRole) {
        switch (index.column()) {
        case Capacity:
        case Latency:
        case BytesPerStep:
        case Busy:
        case Utilization:
        case PeakUtilization:
            return int(Qt::AlignRight | Qt::AlignVCenter);
        default:
            return int(Qt::AlignLeft | Qt::AlignVCenter);
        }
    }
    if (role == Qt::DecorationRole && index.column() == PeakUtilization && u.bytes_per_step > 0)
        return HeatScale::colorFor(u.peak_utilization);
    if (role == Qt::ToolTipRole && u.background_gbps > 0 &&
        (index.column() == Capacity || index.column() == Utilization ||
         index.column() == PeakUtilization))
        return QStringLiteral("%1 (means over the step); job and background together: %2 "
                              "of the link over the step, %3 at the peak")
            .arg(shared(), formatPercent(u.total_utilization),
                 formatPercent(u.total_peak_utilization));
    if (role == Qt::ToolTipRole && index.column() == Latency && u.tier != LinkTier::InterBuilding &&
        u.latency_ms <= 0)
        return QStringLiteral("Inside a building the link adds no latency of its own: each step of "
                              "a collective pays the building's scale-out step (the building's "
                              "scale_out_latency_us, which scaleacross calibrate fits, else "
                              "NCCL's per-step cost and 2 µs a hop), charged in the "
                              "collectives' times");
    if (role == Qt::ToolTipRole && index.column() == Busy && step > 0)
        return QStringLiteral("%1 of the %2 step")
            .arg(formatPercent(u.busy_s / step), formatSeconds(step));
    return {};
}

QVariant LinkTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        static const char* const kNames[] = {"Link",       "Tier",     "Capacity", "Latency",
                                             "Technology", "Per step", "Busy",     "Mean util.",
                                             "Peak util.", "Used by"};
        return QString::fromLatin1(kNames[section]);
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case BytesPerStep:
            return QStringLiteral("Bytes per training step, the busier direction");
        case Busy:
            return QStringLiteral("Time the link carries traffic in one step");
        case Utilization:
            return QStringLiteral("Bytes / (capacity × step time)");
        case PeakUtilization:
            return QStringLiteral("Utilisation during the link's busiest phase");
        case Dims:
            return QStringLiteral("Parallel dimensions whose traffic uses the link");
        default:
            break;
        }
    }
    return {};
}

LinkSortProxy::LinkSortProxy(QObject* parent)
    : QSortFilterProxyModel(parent) {
    setSortRole(LinkTableModel::SortRole);
}

bool LinkSortProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    if (left.column() != LinkTableModel::Tier) {
        const auto across = [this](const QModelIndex& i) {
            return sourceModel()
                       ->index(i.row(), LinkTableModel::Tier)
                       .data(LinkTableModel::SortRole)
                       .toInt() == int(LinkTier::InterBuilding);
        };
        const bool a = across(left), b = across(right);
        if (a != b) // first in both orders: the view reverses lessThan when descending
            return sortOrder() == Qt::AscendingOrder ? a : b;
    }
    return QSortFilterProxyModel::lessThan(left, right);
}

} // namespace sa::views

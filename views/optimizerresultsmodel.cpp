#include "optimizerresultsmodel.h"

#include "planmetrics.h"
#include "units.h"

#include "export/optimizer_csv.h"

#include <QColor>
#include <QFont>

#include <cmath>
#include <iterator>
#include <limits>

namespace sa::views {

namespace {

// The figures of one table row, whether a searched plan or a baseline.
struct Figures {
    double step_time_s = 0;
    double mfu = 0;
    double tokens_per_s = 0;
    double cross_building_bytes = 0;
    double peak_gib_per_gpu = 0;
    std::int64_t gpus = 0;
    RunScores run;
};

Figures figuresOf(const ScoredPlan& p) {
    return {p.step_time_s,      p.mfu,  p.tokens_per_s, p.cross_building_bytes,
            p.peak_gib_per_gpu, p.gpus, p.run};
}

Figures figuresOf(const BaselineResult& b) {
    return {b.step_time_s,
            b.mfu,
            double(b.plan.global_batch_sequences) * double(b.plan.sequence_length) / b.step_time_s,
            b.cross_building_bytes,
            b.peak_gib_per_gpu,
            b.gpus,
            b.run};
}

constexpr double kLast = std::numeric_limits<double>::infinity();

// "prior-art" names the fastest prior-art row.
const BaselineResult* baselineNamed(const OptimizerResult* r, const char* name) {
    if (!r)
        return nullptr;
    if (std::string(name) == "prior-art")
        return bestPriorArt(r->baselines);
    return findBaseline(*r, name);
}

} // namespace

OptimizerResultsModel::OptimizerResultsModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void OptimizerResultsModel::setResult(std::shared_ptr<const OptimizerResult> result, bool priced) {
    beginResetModel();
    result_ = std::move(result);
    priced_ = priced;
    paretoOnly_ = result_ ? paretoOnlyIndices(*result_) : std::vector<std::size_t>{};
    endResetModel();
}

int OptimizerResultsModel::topRowCount() const {
    return result_ ? int(result_->top.size()) : 0;
}

std::optional<OptimizerResultsModel::RowKind> OptimizerResultsModel::kindAt(int row) const {
    if (!result_ || row < 0 || row >= rowCount())
        return std::nullopt;
    if (row < topRowCount())
        return RowKind::Top;
    if (row < firstBaselineRow())
        return RowKind::Pareto;
    return RowKind::Baseline;
}

const BaselineResult* OptimizerResultsModel::baselineAt(int row) const {
    if (kindAt(row) != RowKind::Baseline)
        return nullptr;
    return &result_->baselines[std::size_t(row - firstBaselineRow())];
}

const ScoredPlan* OptimizerResultsModel::scoredPlanAt(int row) const {
    const auto kind = kindAt(row);
    if (kind == RowKind::Top)
        return &result_->top[std::size_t(row)];
    if (kind == RowKind::Pareto)
        return &result_->pareto[paretoOnly_[std::size_t(row - topRowCount())]];
    return nullptr;
}

int OptimizerResultsModel::rowOfParetoPlan(std::size_t index) const {
    if (!result_ || index >= result_->pareto.size())
        return -1;
    const Candidate& key = result_->pareto[index].key;
    for (std::size_t i = 0; i < result_->top.size(); ++i)
        if (result_->top[i].key == key)
            return int(i);
    for (std::size_t j = 0; j < paretoOnly_.size(); ++j)
        if (paretoOnly_[j] == index)
            return topRowCount() + int(j);
    return -1;
}

const Plan* OptimizerResultsModel::planAt(int row) const {
    if (const ScoredPlan* p = scoredPlanAt(row))
        return &p->plan;
    if (const BaselineResult* b = baselineAt(row))
        return b->feasible ? &b->plan : nullptr;
    return nullptr;
}

double OptimizerResultsModel::stepTimeAt(int row) const {
    if (const ScoredPlan* p = scoredPlanAt(row))
        return p->step_time_s;
    if (const BaselineResult* b = baselineAt(row))
        return b->feasible ? b->step_time_s : 0.0;
    return 0.0;
}

int OptimizerResultsModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !result_)
        return 0;
    return int(result_->top.size() + paretoOnly_.size() + result_->baselines.size());
}

int OptimizerResultsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QString OptimizerResultsModel::baselineTitle(const std::string& name) {
    if (name == "as-given")
        return QStringLiteral("As given");
    if (name == "production")
        return QStringLiteral("Production");
    if (name == "prior-art")
        return QStringLiteral("Best prior art");
    if (name == "crosspipe")
        return QStringLiteral("CrossPipe");
    if (name == "atlas")
        return QStringLiteral("Atlas");
    if (name == "megatron-multidc")
        return QStringLiteral("Megatron multi-DC");
    return QString::fromStdString(name);
}

QString OptimizerResultsModel::planSummary(const Plan& p) {
    const Parallelism& d = p.parallelism;
    QString s = QStringLiteral("tp%1 cp%2 pp%3 dp%4").arg(d.tp).arg(d.cp).arg(d.pp).arg(d.dp);
    if (d.ep > 1)
        s += QStringLiteral(" ep%1").arg(d.ep);
    if (d.expertTp() != d.tp)
        s += QStringLiteral(" etp%1").arg(d.expertTp());
    s += QStringLiteral(" mb%1 | %2")
             .arg(p.micro_batch_sequences)
             .arg(QString::fromLatin1(toString(p.schedule.kind)));
    if (p.schedule.kind == ScheduleKind::Interleaved)
        s += QStringLiteral(" v%1").arg(p.schedule.virtual_stages);
    s += QStringLiteral(" | %1 | zero%2")
             .arg(QString::fromLatin1(toString(p.recompute)))
             .arg(p.zero_stage);
    return s;
}

QString OptimizerResultsModel::formatSpeedup(double speedup) {
    const double pct = speedup * 100;
    const QString digits = QString::number(std::fabs(pct), 'f', 1);
    if (digits == QStringLiteral("0.0"))
        return QStringLiteral("±0.0 %");
    return (pct < 0 ? QStringLiteral("−") : QStringLiteral("+")) + digits + QStringLiteral(" %");
}

QString OptimizerResultsModel::formatTokensPerSecond(double tokens) {
    if (tokens >= 1e6)
        return QStringLiteral("%1 M tokens/s").arg(QString::number(tokens / 1e6, 'f', 2));
    if (tokens >= 1e3)
        return QStringLiteral("%1 k tokens/s").arg(QString::number(tokens / 1e3, 'f', 1));
    return QStringLiteral("%1 tokens/s").arg(QString::number(tokens, 'f', 0));
}

QVariant OptimizerResultsModel::displayData(int row, int column) const {
    const OptimizerResult* r = result_.get();
    const BaselineResult* production = baselineNamed(r, "production");
    const BaselineResult* priorArt = baselineNamed(r, "prior-art");
    auto speedupText = [](double step, const BaselineResult* b) -> QVariant {
        if (!b)
            return QStringLiteral("—");
        const auto s = speedupOver(step, *b);
        return s ? formatSpeedup(*s) : QStringLiteral("—");
    };

    // The figures of a row, a searched plan's or a baseline's, by column.
    auto figure = [&](const Figures& f, int col) -> QVariant {
        switch (col) {
        case StepTime:
            return formatStepTime(f.step_time_s);
        case SpeedupProduction:
            return speedupText(f.step_time_s, production);
        case SpeedupPriorArt:
            return speedupText(f.step_time_s, priorArt);
        case Mfu:
            return formatPercent(f.mfu);
        case TokensPerSecond:
            return formatTokensPerSecond(f.tokens_per_s);
        case CrossBuildingBytes:
            return formatBytes(f.cross_building_bytes);
        case PeakMemory:
            return formatGib(f.peak_gib_per_gpu);
        case Gpus:
            return formatCount(f.gpus);
        case TimeToTokens:
            return formatDuration(f.run.time_to_tokens_s);
        case TimeToLoss:
            return formatDuration(f.run.time_to_loss_s);
        case Cost:
            return formatMetric(PlanMetric::Cost, f.run.cost, priced_);
        case Energy:
            return formatEnergyKwh(f.run.energy_kwh);
        case Goodput:
            return formatPercent(f.run.goodput);
        }
        return {};
    };

    if (const ScoredPlan* p = scoredPlanAt(row)) {
        const bool top = row < topRowCount();
        switch (column) {
        case Rank:
            return top ? QString::number(row + 1) : QStringLiteral("Pareto");
        case Pareto:
            return !top || isOnParetoFront(*r, std::size_t(row)) ? QStringLiteral("yes")
                                                                 : QStringLiteral("no");
        case Label:
            return QString::fromStdString(p->label);
        }
        return figure(figuresOf(*p), column);
    }
    const BaselineResult* b = baselineAt(row);
    if (!b)
        return {};
    if (column == Rank)
        return baselineTitle(b->name);
    if (column == Label)
        return b->feasible
                   ? planSummary(b->plan)
                   : QStringLiteral("infeasible: %1").arg(QString::fromStdString(b->problem));
    if (!b->feasible || column == Pareto)
        return QStringLiteral("—");
    return figure(figuresOf(*b), column);
}

QVariant OptimizerResultsModel::sortData(int row, int column) const {
    const OptimizerResult* r = result_.get();
    auto speedupValue = [&](double step, const char* name) -> double {
        const BaselineResult* b = baselineNamed(r, name);
        const auto s = b ? speedupOver(step, *b) : std::nullopt;
        // Ascending puts the largest speedups last: a missing one goes
        // before every number so that descending leaves it at the end too.
        return s ? *s : -kLast;
    };
    auto figure = [&](const Figures& f, int col) -> QVariant {
        switch (col) {
        case StepTime:
            return f.step_time_s;
        case SpeedupProduction:
            return speedupValue(f.step_time_s, "production");
        case SpeedupPriorArt:
            return speedupValue(f.step_time_s, "prior-art");
        case Mfu:
            return f.mfu;
        case TokensPerSecond:
            return f.tokens_per_s;
        case CrossBuildingBytes:
            return f.cross_building_bytes;
        case PeakMemory:
            return f.peak_gib_per_gpu;
        case Gpus:
            return qlonglong(f.gpus);
        case TimeToTokens:
            return f.run.time_to_tokens_s;
        case TimeToLoss:
            return f.run.time_to_loss_s;
        case Cost:
            return f.run.cost;
        case Energy:
            return f.run.energy_kwh;
        case Goodput:
            return f.run.goodput;
        }
        return {};
    };
    if (const ScoredPlan* p = scoredPlanAt(row)) {
        switch (column) {
        case Rank:
            return row + 1;
        case Pareto:
            return row >= topRowCount() || isOnParetoFront(*r, std::size_t(row)) ? 1 : 0;
        case Label:
            return QString::fromStdString(p->label);
        }
        return figure(figuresOf(*p), column);
    }
    const BaselineResult* b = baselineAt(row);
    if (!b)
        return {};
    // Baselines rank after every searched plan (rows keep that order).
    if (column == Rank)
        return row + 1;
    if (column == Label)
        return displayData(row, column);
    if (column == Pareto)
        return -1;
    if (!b->feasible)
        return column == SpeedupProduction || column == SpeedupPriorArt ? -kLast : kLast;
    return figure(figuresOf(*b), column);
}

QVariant OptimizerResultsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row();
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return displayData(row, column);
    case SortRole:
        return sortData(row, column);
    case KindRole:
        switch (*kindAt(row)) {
        case RowKind::Top:
            return QStringLiteral("top");
        case RowKind::Pareto:
            return QStringLiteral("pareto");
        case RowKind::Baseline:
            return QStringLiteral("baseline");
        }
        return {};
    case Qt::TextAlignmentRole:
        return column == Label || column == Rank ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                                 : int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::FontRole:
        if (isBaselineRow(row)) {
            QFont f;
            f.setItalic(true);
            return f;
        }
        return {};
    case Qt::BackgroundRole:
        if (isBaselineRow(row))
            return QColor(255, 244, 214);
        if (kindAt(row) == RowKind::Pareto)
            return QColor(253, 235, 218); // the front's orange, faint
        return {};
    case Qt::ToolTipRole:
        if (const BaselineResult* b = baselineAt(row)) {
            QString tip =
                QStringLiteral("Baseline %1: %2\nSource: %3")
                    .arg(QString::fromStdString(b->title), QString::fromStdString(b->recipe),
                         QString::fromStdString(b->source));
            if (!b->feasible)
                tip += QStringLiteral("\nInfeasible: %1").arg(QString::fromStdString(b->problem));
            return tip;
        }
        if (kindAt(row) == RowKind::Pareto && column == Rank)
            return QStringLiteral("On the Pareto front of step time vs cross-building bytes, "
                                  "not among the top plans under the objective");
        if (column == Label)
            return displayData(row, column);
        return {};
    default:
        return {};
    }
}

QVariant OptimizerResultsModel::headerData(int section, Qt::Orientation orientation,
                                           int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        static const char* const kNames[] = {"Rank", "Step time",  "vs prod.",   "vs prior art",
                                             "MFU",  "Throughput", "Cross-bldg", "Peak mem",
                                             "GPUs", "Pareto",     "To tokens",  "To loss",
                                             "Cost", "Energy",     "Goodput",    "Plan"};
        static_assert(std::size(kNames) == ColumnCount);
        return QString::fromLatin1(kNames[section]);
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Rank:
            return QStringLiteral("Rank under the objective; the other plans of the Pareto "
                                  "front and the baselines follow");
        case SpeedupProduction:
            // The recipe the production baseline followed for this model
            // (Llama 3's, or the Megatron-Core MoE recipe for an MoE model).
            if (const BaselineResult* b =
                    result_ ? findBaseline(result_->baselines, "production") : nullptr)
                return QStringLiteral("Production step time / this step time − 1: %1, %2")
                    .arg(QString::fromStdString(b->title), QString::fromStdString(b->recipe));
            return QStringLiteral("Production step time / this step time − 1: the production "
                                  "recipe of the searched model (DP across buildings, "
                                  "interleaved 1F1B)");
        case SpeedupPriorArt:
            return QStringLiteral("Best prior-art step time / this step time − 1: the fastest "
                                  "of CrossPipe, Atlas and Megatron multi-DC, each with its "
                                  "best degrees");
        case Mfu:
            return QStringLiteral("Model FLOPs utilisation");
        case TokensPerSecond:
            return QStringLiteral("Training tokens per second");
        case CrossBuildingBytes:
            return QStringLiteral("Bytes over inter-building links per step");
        case PeakMemory:
            return QStringLiteral("Peak memory per GPU of the worst stage");
        case Pareto:
            return QStringLiteral("On the Pareto front of step time vs cross-building bytes");
        case TimeToTokens:
            return QStringLiteral("Wall clock for the plan's token budget with goodput "
                                  "(failures, checkpoints, stragglers); per step without a "
                                  "budget");
        case TimeToLoss:
            return QStringLiteral("Wall clock to the target loss: the token budget's time "
                                  "times an outer sync's extra tokens");
        case Cost:
            return priced_ ? QStringLiteral(
                                 "Dollars for the run: GPU-hours at the buildings' prices and "
                                 "link transport")
                           : QStringLiteral("GPU-hours for the run: the cluster has no prices");
        case Energy:
            return QStringLiteral("Energy for the run: GPUs, hosts and network, with the "
                                  "buildings' PUE");
        case Goodput:
            return QStringLiteral("Share of wall clock that trains: after failures, "
                                  "checkpoints and stragglers");
        case Label:
            return QStringLiteral("Degrees, placement, schedule, recompute, ZeRO, layers, "
                                  "collective, links");
        default:
            break;
        }
    }
    return {};
}

} // namespace sa::views

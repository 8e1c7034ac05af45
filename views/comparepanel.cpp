#include "comparepanel.h"

#include "breakdownchart.h"
#include "optimizerresultsmodel.h"
#include "units.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace sa::views {

namespace {

using Row = ComparePanel::Row;

// What the panel says while nothing is pinned, after `note` when there is one.
QString pinHint(const QString& note) {
    const QString hint = QStringLiteral("Pin a plan (View ▸ Pin Plan for Comparison) and change "
                                        "the current one to compare them side by side.");
    return note.isEmpty() ? hint : QStringLiteral("%1. %2").arg(note, hint);
}

QString formatRow(Row row, double v) {
    switch (row) {
    case Row::TokensPerS:
        return QStringLiteral("%1 tok/s").arg(formatCount(std::llround(v)));
    case Row::Mfu:
        return formatPercent(v);
    case Row::PeakMemory:
        return formatGib(v);
    case Row::CrossBuildingBytes:
        return formatBytes(v);
    case Row::StepTime:
        return formatStepTime(v);
    default:
        return formatSeconds(v);
    }
}

QString signedSeconds(double s) {
    return (s < 0 ? QStringLiteral("−") : QStringLiteral("+")) + formatSeconds(std::abs(s));
}

// For these rows smaller is better.
bool lowerIsBetter(Row row) {
    return row != Row::TokensPerS && row != Row::Mfu;
}

} // namespace

QString ComparePanel::rowName(Row row) {
    switch (row) {
    case StepTime:
        return QStringLiteral("Step time");
    case TokensPerS:
        return QStringLiteral("Throughput");
    case Mfu:
        return QStringLiteral("MFU");
    case PeakMemory:
        return QStringLiteral("Peak memory per GPU");
    case CrossBuildingBytes:
        return QStringLiteral("Bytes across buildings");
    case Compute:
        return QStringLiteral("Compute");
    case ExposedTp:
        return QStringLiteral("Exposed TP");
    case ExposedCp:
        return QStringLiteral("Exposed CP");
    case ExposedEp:
        return QStringLiteral("Exposed EP");
    case ExposedPp:
        return QStringLiteral("Exposed PP");
    case ExposedDp:
        return QStringLiteral("Exposed DP");
    case Bubble:
        return QStringLiteral("Pipeline bubble");
    case OptimizerStep:
        return QStringLiteral("Optimizer step");
    case RowCount:
        break;
    }
    return {};
}

double ComparePanel::value(const Evaluation& ev, Row row) {
    const Breakdown& b = ev.breakdown;
    switch (row) {
    case StepTime:
        return ev.step_time_s;
    case TokensPerS:
        return ev.tokens_per_s;
    case Mfu:
        return ev.mfu;
    case PeakMemory:
        return ev.memory.peak_gib_per_gpu;
    case CrossBuildingBytes:
        return ev.cross_building_bytes;
    case Compute:
        return b.compute_s;
    case ExposedTp:
        return b.tp_exposed_s;
    case ExposedCp:
        return b.cp_exposed_s;
    case ExposedEp:
        return b.ep_exposed_s;
    case ExposedPp:
        return b.pp_exposed_s;
    case ExposedDp:
        return b.dp_exposed_s;
    case Bubble:
        return b.bubble_s;
    case OptimizerStep:
        return b.optimizer_s;
    case RowCount:
        break;
    }
    return 0;
}

QString describePlan(const Plan& plan) {
    QStringList order;
    for (Dim d : plan.rank_order)
        order << QString::fromLatin1(toString(d));
    return OptimizerResultsModel::planSummary(plan) + QStringLiteral(" | order ") +
           order.join(QStringLiteral("›"));
}

QString explainDifference(const Evaluation& from, const Evaluation& to) {
    std::vector<std::pair<double, QString>> parts;
    for (int r = ComparePanel::Compute; r < ComparePanel::RowCount; ++r) {
        const auto row = Row(r);
        const double d = ComparePanel::value(to, row) - ComparePanel::value(from, row);
        // Below 0.5 % of the step nothing worth saying.
        if (std::abs(d) >= 0.005 * std::max(from.step_time_s, to.step_time_s)) {
            QString name = ComparePanel::rowName(row);
            name[0] = name[0].toLower(); // "exposed PP", "pipeline bubble"
            parts.emplace_back(d, name);
        }
    }
    std::sort(parts.begin(), parts.end(),
              [](const auto& a, const auto& b) { return std::abs(a.first) > std::abs(b.first); });
    QStringList said;
    for (std::size_t i = 0; i < parts.size() && i < 4; ++i)
        said << QStringLiteral("%1 %2").arg(parts[i].second, signedSeconds(parts[i].first));
    if (said.isEmpty())
        return QStringLiteral("no part of the step differs by more than 0.5 %");
    return said.join(QStringLiteral(", "));
}

ComparePanel::ComparePanel(QWidget* parent)
    : QWidget(parent)
    , summary_(new QLabel(this))
    , plans_(new QLabel(this))
    , table_(new QTableWidget(RowCount, 4, this))
    , chart_(new BreakdownChart(this)) {
    setObjectName(QStringLiteral("comparePanel"));
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::PlainText);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionMode(QAbstractItemView::NoSelection);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(false);
    table_->horizontalHeader()->setMinimumSectionSize(110);
    plans_->setTextFormat(Qt::PlainText);
    plans_->setStyleSheet(QStringLiteral("color: #475569;"));
    plans_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    plans_->hide();
    table_->setAlternatingRowColors(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(summary_);
    layout->addWidget(plans_);
    auto* row = new QHBoxLayout;
    row->addWidget(table_);
    row->addWidget(chart_, 1);
    layout->addLayout(row, 1);
    setEvaluations(nullptr, nullptr, {}, {});
}

void ComparePanel::setEvaluations(std::shared_ptr<const Evaluation> pinned,
                                  std::shared_ptr<const Evaluation> current,
                                  const QString& pinnedLabel, const QString& currentLabel) {
    const QStringList headers = {
        QString(), pinnedLabel.isEmpty() ? QStringLiteral("Pinned") : pinnedLabel,
        currentLabel.isEmpty() ? QStringLiteral("Current") : currentLabel, QStringLiteral("Δ")};
    for (int c = 0; c < headers.size(); ++c) {
        const QTableWidgetItem* h = table_->horizontalHeaderItem(c);
        if (!h || h->text() != headers[c]) {
            table_->setHorizontalHeaderLabels(headers);
            break;
        }
    }
    // The columns are measured once, below, not after every cell: with
    // ResizeToContents each cell's change would measure its whole column.
    QHeaderView* header = table_->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::Interactive);
    const QColor better(0x1b, 0x7a, 0x3a);
    const QColor worse(0xb4, 0x23, 0x18);
    for (int r = 0; r < RowCount; ++r) {
        const auto row = Row(r);
        // The items stay; only a changed text or colour is set.
        auto cell = [&](int column, const QString& text) {
            QTableWidgetItem* item = table_->item(r, column);
            if (!item) {
                item = new QTableWidgetItem(text);
                item->setTextAlignment(column == 0 ? Qt::AlignLeft | Qt::AlignVCenter
                                                   : Qt::AlignRight | Qt::AlignVCenter);
                table_->setItem(r, column, item);
            } else if (item->text() != text) {
                item->setText(text);
            }
            if (item->data(Qt::ForegroundRole).isValid())
                item->setData(Qt::ForegroundRole, QVariant());
            return item;
        };
        cell(0, rowName(row));
        cell(1, pinned ? formatRow(row, value(*pinned, row)) : QStringLiteral("—"));
        cell(2, current ? formatRow(row, value(*current, row)) : QStringLiteral("—"));
        if (!pinned || !current) {
            cell(3, QString());
            continue;
        }
        const double a = value(*pinned, row);
        const double b = value(*current, row);
        QString delta;
        if (a == b) {
            delta = QStringLiteral("=");
        } else if (row == Mfu) {
            delta = QStringLiteral("%1%2 pts")
                        .arg(b > a ? QStringLiteral("+") : QStringLiteral("−"))
                        .arg(std::abs(b - a) * 100, 0, 'f', 1);
        } else if (a != 0) {
            delta = QStringLiteral("%1%2 %")
                        .arg(b > a ? QStringLiteral("+") : QStringLiteral("−"))
                        .arg(std::abs(b / a - 1) * 100, 0, 'f', 1);
        } else {
            delta = QStringLiteral("+") + formatRow(row, b);
        }
        QTableWidgetItem* item = cell(3, delta);
        if (a != b && std::abs(b - a) > 1e-12 * std::max(std::abs(a), std::abs(b)))
            item->setForeground((b < a) == lowerIsBetter(row) ? better : worse);
    }
    table_->resizeColumnsToContents();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    int width = table_->frameWidth() * 2 + table_->verticalScrollBar()->sizeHint().width();
    for (int c = 0; c < table_->columnCount(); ++c)
        width += table_->columnWidth(c);
    table_->setFixedWidth(width);
    if (current)
        chart_->setEvaluation(current, pinned, currentLabel, pinnedLabel);
    else
        chart_->clear(QStringLiteral("The current plan cannot be evaluated"));
    pinned_ = bool(pinned);
    if (pinned)
        unpinnedNote_.clear();
    if (!pinned) {
        summary_->setText(pinHint(unpinnedNote_));
    } else if (!current) {
        summary_->setText(QStringLiteral("The current plan cannot be evaluated."));
    } else {
        const double ratio = pinned->step_time_s / current->step_time_s;
        // Within the 0.1 % shown: "as fast as", not "0.0 % faster than".
        const QString how =
            std::abs(ratio - 1) < 0.0005
                ? QStringLiteral("as fast as")
                : (ratio >= 1
                       ? QStringLiteral("%1 % faster than").arg((ratio - 1) * 100, 0, 'f', 1)
                       : QStringLiteral("%1 % slower than").arg((1 / ratio - 1) * 100, 0, 'f', 1));
        summary_->setText(
            QStringLiteral("%1 is %2 %3: %4.")
                .arg(currentLabel, how, pinnedLabel, explainDifference(*pinned, *current)));
    }
}

void ComparePanel::setUnpinnedNote(const QString& note) {
    unpinnedNote_ = note;
    if (!pinned_)
        summary_->setText(pinHint(note));
}

void ComparePanel::setPlans(const QString& pinnedDescription, const QString& currentDescription) {
    plans_->setText(
        QStringLiteral("Pinned:  %1\nCurrent: %2").arg(pinnedDescription, currentDescription));
    plans_->setVisible(!pinnedDescription.isEmpty());
}

QString ComparePanel::summary() const {
    return summary_->text();
}

} // namespace sa::views

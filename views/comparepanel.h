#pragma once
// Compare: a pinned plan beside the current one. One row per figure
// (step time, throughput, MFU, memory, cross-building bytes and each part of
// the step-time breakdown) with both values and the difference, and one
// line that says where the difference comes from.

#include "cost/evaluation.h"

#include <QString>
#include <QWidget>

#include <memory>

class QLabel;
class QTableWidget;

namespace sa::views {

class BreakdownChart;

class ComparePanel : public QWidget {
    Q_OBJECT
public:
    explicit ComparePanel(QWidget* parent = nullptr);

    // `pinned` null: nothing pinned, the panel says how to pin.
    void setEvaluations(std::shared_ptr<const Evaluation> pinned,
                        std::shared_ptr<const Evaluation> current, const QString& pinnedLabel,
                        const QString& currentLabel);

    // Said above the "pin a plan" hint while nothing is pinned, e.g. why
    // the last pin was dropped; cleared by the next pin.
    void setUnpinnedNote(const QString& note);

    // One line per plan under the summary (what each plan is).
    void setPlans(const QString& pinnedDescription, const QString& currentDescription);

    QTableWidget* table() const { return table_; }
    // Both breakdowns as bars, beside the table.
    BreakdownChart* chart() const { return chart_; }
    // "Current is 14.2 % faster than pinned: bubble −0.61 s, exposed DP −0.12 s, ..."
    QString summary() const;

    // The row order of the table.
    enum Row {
        StepTime,
        TokensPerS,
        Mfu,
        PeakMemory,
        CrossBuildingBytes,
        Compute,
        ExposedTp,
        ExposedCp,
        ExposedEp,
        ExposedPp,
        ExposedDp,
        Bubble,
        OptimizerStep,
        RowCount
    };
    static QString rowName(Row row);
    // The figure of a row in base units (seconds, tokens/s, fraction, GiB, bytes).
    static double value(const Evaluation& ev, Row row);

private:
    QLabel* summary_;
    QString unpinnedNote_;
    bool pinned_ = false;
    QLabel* plans_;
    QTableWidget* table_;
    BreakdownChart* chart_;
};

// "tp8 cp1 pp16 dp768 mb1 | 1f1b | selective | zero2 | order tp›cp›dp›pp".
QString describePlan(const Plan& plan);

// Where the step-time difference between two evaluations comes from: the
// breakdown parts that differ most, largest first ("bubble −0.61 s").
QString explainDifference(const Evaluation& from, const Evaluation& to);

} // namespace sa::views

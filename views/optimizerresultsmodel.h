#pragma once
// The optimizer's answer as a table: one row per top plan (best first), then
// the plans of the Pareto front that are not among them (the front trades
// step time for cross-building traffic, so most of it ranks low under the
// step-time objective), then one row per baseline (production, prior art)
// so the numbers they are measured against sit in the same sortable
// columns. Every point of the chart is a row. Besides step time, traffic and
// memory, each row has its run: time to the token budget and to the target
// loss, cost and energy, with goodput. Front and baseline rows are named in
// the Rank column and tinted; baselines are in italics.

#include "explore/optimizer.h"

#include <QAbstractTableModel>

#include <memory>
#include <optional>
#include <vector>

namespace sa::views {

class OptimizerResultsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Rank,
        StepTime,
        SpeedupProduction,
        SpeedupPriorArt,
        Mfu,
        TokensPerSecond,
        CrossBuildingBytes,
        PeakMemory,
        Gpus,
        Pareto,
        // The run (RunScores): per step where the plan has no token budget.
        TimeToTokens,
        TimeToLoss,
        Cost, // $, or GPU-seconds (shown as GPU-hours) where the cluster has no prices
        Energy,
        Goodput,
        Label,
        ColumnCount
    };
    // Raw numbers for sorting: seconds, fractions, bytes, GiB, counts, $ or
    // GPU-seconds, kWh; a value that does not apply sorts after all others
    // ascending.
    static constexpr int SortRole = Qt::UserRole;
    // "top", "pareto" or "baseline".
    static constexpr int KindRole = Qt::UserRole + 1;

    enum class RowKind { Top, Pareto, Baseline };

    explicit OptimizerResultsModel(QObject* parent = nullptr);

    // `priced`: the searched cluster has prices (cost in $, otherwise in
    // GPU-seconds).
    void setResult(std::shared_ptr<const OptimizerResult> result, bool priced = false);
    std::shared_ptr<const OptimizerResult> result() const { return result_; }
    bool priced() const { return priced_; }

    // Rows [0, topRowCount()) are result.top in order; then
    // paretoRowCount() rows of the front (result.pareto order, those not in
    // top); the baselines from firstBaselineRow() on.
    int topRowCount() const;
    int paretoRowCount() const { return int(paretoOnly_.size()); }
    int firstBaselineRow() const { return topRowCount() + paretoRowCount(); }
    std::optional<RowKind> kindAt(int row) const;
    bool isBaselineRow(int row) const { return kindAt(row) == RowKind::Baseline; }
    const BaselineResult* baselineAt(int row) const; // nullptr unless a baseline row
    // The top plan or front plan of a row; nullptr for a baseline row.
    const ScoredPlan* scoredPlanAt(int row) const;
    // The row of result.pareto[index] (a top row when the plan is in both).
    int rowOfParetoPlan(std::size_t index) const;
    // The plan a row stands for; nullptr out of range or for an infeasible
    // baseline (there is nothing to load).
    const Plan* planAt(int row) const;
    // Step time of a row, 0 when it has none (an infeasible baseline).
    double stepTimeAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // "Production" / "Prior art" for the baseline names of the core.
    static QString baselineTitle(const std::string& name);
    // "tp8 cp1 pp16 dp768 mb1 | 1f1b | selective | zero2": a baseline has no
    // search label, so it is described from its plan.
    static QString planSummary(const Plan& plan);
    // "+12.3 %", "−4.5 %".
    static QString formatSpeedup(double speedup);
    // "10.1 M tokens/s".
    static QString formatTokensPerSecond(double tokens);

private:
    QVariant displayData(int row, int column) const;
    QVariant sortData(int row, int column) const;

    std::shared_ptr<const OptimizerResult> result_;
    std::vector<std::size_t> paretoOnly_;
    bool priced_ = false;
};

} // namespace sa::views

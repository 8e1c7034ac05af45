#pragma once
// Two figures of the optimizer's answer against each other: every top plan
// as a point, the Pareto front of the plotted plans on the two (both
// minimised) as a connected line, the baselines as labelled markers of their
// own shapes. The axes are any two of the PlanMetric figures (planmetrics.h):
// step time, cross-building bytes, time to tokens, time to the target loss,
// cost and energy; by default step time (x) against cross-building bytes
// (y), where the front is the search's own (result.pareto). Each axis has the
// unit that fits its range. Rows are the results model's: result.top in
// order (so a top plan's row is its index into result.top), the front's
// plans that are not in the top, then the baselines. The front is computed
// from the searched rows only (not the baselines). Clicking a point selects
// it and emits planClicked(row); the chart never changes the document
// itself.
//
// The axes fit the searched plans: a baseline far outside their range (the
// production recipe can be several times slower) would squash them into a
// corner, so it is pinned near the edge of the plot, its label pointing to
// where it is with its figures ("Production → 51.73 s");
// setBaselinesToScale(true) fits the axes to the baselines too.

#include "explore/optimizer.h"

#include "planmetrics.h"

#include <QChartView>
#include <QLineSeries>
#include <QScatterSeries>
#include <QString>
#include <QValueAxis>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace sa::views {

class ParetoChart : public QChartView {
    Q_OBJECT
public:
    explicit ParetoChart(QWidget* parent = nullptr);

    // `priced`: the searched cluster has prices, so cost is $ (otherwise
    // GPU-seconds, shown as GPU-hours). The axes stay as chosen.
    void setResult(std::shared_ptr<const OptimizerResult> result, bool priced = false);
    std::shared_ptr<const OptimizerResult> result() const { return result_; }
    bool priced() const { return priced_; }

    // The figures on the axes; re-plots at once.
    void setAxes(PlanMetric x, PlanMetric y);
    PlanMetric xMetric() const { return xMetric_; }
    PlanMetric yMetric() const { return yMetric_; }

    void setBaselinesToScale(bool toScale);
    bool baselinesToScale() const { return baselinesToScale_; }

    // Highlights a row's point (-1: none) without emitting planClicked.
    void setSelectedRow(int row);
    int selectedRow() const { return selectedRow_; }

    // The series, for tests: one point per top plan in row order; the
    // Pareto front by x (for the default axes: result.pareto); one series
    // per feasible baseline.
    QScatterSeries* planSeries() const { return plans_; }
    // The front's plans beyond the top that are off the plotted front (none
    // on the default axes, where the front is theirs).
    QScatterSeries* otherSeries() const { return others_; }
    QLineSeries* paretoSeries() const { return pareto_; }
    QScatterSeries* selectionSeries() const { return selection_; }
    const std::vector<QScatterSeries*>& baselineSeries() const { return baselines_; }

    int rowCount() const;
    int firstBaselineRow() const;

    // The rows of the front's points, in paretoSeries() order.
    const std::vector<int>& frontRows() const { return frontRows_; }

    // An (x, y) pair of the axes' metrics in their base units (seconds,
    // bytes, $ or GPU-seconds, kWh) in the axes' units (ms or s; kB ... PB;
    // ...): for the default axes, (step time, bytes).
    QPointF valuePoint(double x, double y) const;
    // Where a row is plotted, in axis units: its valuePoint, or the pinned
    // position of an off-scale baseline.
    std::optional<QPointF> plottedPoint(int row) const;
    bool isPinned(int row) const;
    QValueAxis* xAxis() const { return xAxis_; }
    QValueAxis* yAxis() const { return yAxis_; }
    QString xUnit() const { return xUnit_; }
    QString yUnit() const { return yUnit_; }
    // The default axes' names.
    QValueAxis* timeAxis() const { return xAxis_; }
    QValueAxis* bytesAxis() const { return yAxis_; }
    QString timeUnit() const { return xUnit_; }
    QString bytesUnit() const { return yUnit_; }
    // The centre of a row's marker in viewport coordinates; nullopt when
    // the row has no point (out of range, an infeasible baseline).
    std::optional<QPointF> rowPosition(int row) const;
    // The row whose marker is nearest to `viewportPos` within a few pixels,
    // or -1.
    int rowAt(const QPointF& viewportPos) const;

Q_SIGNALS:
    void planClicked(int row);
    void planDoubleClicked(int row);

protected:
    void mousePressEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    // The searched plan of a row (top or front), or nullptr.
    const ScoredPlan* scoredPlanAt(int row) const;
    // The x and y metrics of a row, if it has a point.
    std::optional<std::pair<double, double>> rowValues(int row) const;
    QString rowToolTip(int row) const;
    QString pinnedLabel(const QString& title, const BaselineResult& b,
                        const QPointF& plotted) const;
    // Fits the axes; places the baselines (baselinePoints_, baselinePinned_).
    void rescaleAxes();
    // Moves pinned baselines apart so that their labels do not overlap.
    void stackPinnedLabels();
    // Each axis title whole where the plot is long enough, else brief.
    void fitAxisTitles();
    void rebuild();
    void updateSelectionPoint();

    std::shared_ptr<const OptimizerResult> result_;
    std::vector<std::size_t> paretoOnly_; // sa::paretoOnlyIndices
    std::vector<int> frontRows_;
    bool priced_ = false;
    PlanMetric xMetric_ = PlanMetric::StepTime;
    PlanMetric yMetric_ = PlanMetric::CrossBuildingBytes;
    QChart* chart_;
    QValueAxis* xAxis_;
    QValueAxis* yAxis_;
    QScatterSeries* plans_;
    QScatterSeries* others_;
    QLineSeries* pareto_;
    QScatterSeries* selection_;
    std::vector<QScatterSeries*> baselines_;
    // Per result baseline: where it is plotted (axis units), pinned or not;
    // infeasible baselines are not plotted.
    std::vector<std::optional<QPointF>> baselinePoints_;
    std::vector<bool> baselinePinned_;
    std::vector<QString> baselineLabels_; // a pinned one's "Production → 51.73 s"
    bool baselinesToScale_ = false;
    int selectedRow_ = -1;
    int hoveredRow_ = -1;
    double xScale_ = 1; // base unit -> axis unit
    double yScale_ = 1;
    std::pair<QString, QString> xTitles_, yTitles_; // whole, brief
    QString xUnit_ = QStringLiteral("s");
    QString yUnit_ = QStringLiteral("GB");
};

} // namespace sa::views

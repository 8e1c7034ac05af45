#pragma once
// Step time against cross-building traffic for the optimizer's answer: every
// top plan as a point, the Pareto front (result.pareto, by step time) as a
// connected line, the baselines as labelled markers of their own shapes.
// Rows are the results model's: result.top in order (so a top plan's row is
// its index into result.top), the front's plans that are not in the top,
// then the baselines. Clicking a point selects it and emits
// planClicked(row); the chart never changes the document itself.
//
// The axes fit the searched plans: a baseline far outside their range (the
// production recipe can be several times slower) would squash them into a
// corner, so it is pinned near the edge of the plot, its label pointing to
// where it is with its figures ("Production → 51.73 s");
// setBaselinesToScale(true) fits the axes to the baselines too.

#include "explore/optimizer.h"

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

    void setResult(std::shared_ptr<const OptimizerResult> result);
    std::shared_ptr<const OptimizerResult> result() const { return result_; }

    void setBaselinesToScale(bool toScale);
    bool baselinesToScale() const { return baselinesToScale_; }

    // Highlights a row's point (-1: none) without emitting planClicked.
    void setSelectedRow(int row);
    int selectedRow() const { return selectedRow_; }

    // The series, for tests: one point per top plan in row order; the
    // Pareto front in result.pareto order; one series per feasible baseline.
    QScatterSeries* planSeries() const { return plans_; }
    QLineSeries* paretoSeries() const { return pareto_; }
    QScatterSeries* selectionSeries() const { return selection_; }
    const std::vector<QScatterSeries*>& baselineSeries() const { return baselines_; }

    int rowCount() const;
    int firstBaselineRow() const;

    // A (step time, bytes) pair in the axes' units (ms or s; kB ... PB).
    QPointF valuePoint(double stepTimeS, double bytes) const;
    // Where a row is plotted, in axis units: its valuePoint, or the pinned
    // position of an off-scale baseline.
    std::optional<QPointF> plottedPoint(int row) const;
    bool isPinned(int row) const;
    QValueAxis* timeAxis() const { return xAxis_; }
    QValueAxis* bytesAxis() const { return yAxis_; }
    QString timeUnit() const { return timeUnit_; }
    QString bytesUnit() const { return bytesUnit_; }
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
    // Step time and bytes of a row, if it has a point.
    std::optional<std::pair<double, double>> rowValues(int row) const;
    QString rowToolTip(int row) const;
    QString pinnedLabel(const QString& title, const BaselineResult& b,
                        const QPointF& plotted) const;
    // Fits the axes; places the baselines (baselinePoints_, baselinePinned_).
    void rescaleAxes();
    void rebuild();
    void updateSelectionPoint();

    std::shared_ptr<const OptimizerResult> result_;
    std::vector<std::size_t> paretoOnly_; // sa::paretoOnlyIndices
    QChart* chart_;
    QValueAxis* xAxis_;
    QValueAxis* yAxis_;
    QScatterSeries* plans_;
    QLineSeries* pareto_;
    QScatterSeries* selection_;
    std::vector<QScatterSeries*> baselines_;
    // Per result baseline: where it is plotted (axis units), pinned or not;
    // infeasible baselines are not plotted.
    std::vector<std::optional<QPointF>> baselinePoints_;
    std::vector<bool> baselinePinned_;
    bool baselinesToScale_ = false;
    int selectedRow_ = -1;
    int hoveredRow_ = -1;
    double timeScale_ = 1;  // seconds -> axis unit
    double bytesScale_ = 1; // bytes -> axis unit
    QString timeUnit_ = QStringLiteral("s");
    QString bytesUnit_ = QStringLiteral("GB");
};

} // namespace sa::views

#pragma once
// Where a step's time goes: one horizontal stacked bar per evaluation
// (compute, exposed TP/CP/EP/PP/DP communication, pipeline bubble,
// optimizer), the current plan's and optionally, above it, a pinned one to
// compare with (before above, after below). Each category keeps its colour in every chart.

#include "cost/evaluation.h"

#include <QChartView>
#include <QColor>
#include <QObject>
#include <QString>

#include <memory>
#include <vector>

class QBarCategoryAxis;
class QChart;
class QBarSet;
class QHorizontalStackedBarSeries;
class QValueAxis;

namespace sa::views {

// The look the explorer's charts share: light theme, anti-aliased, no
// animation (a chart redrawn on every drag must not lag behind it), legend
// below the plot so it never covers data, tight margins.
void applyChartStyle(QChartView* view);
// Sets `axis` to a range covering [lo, hi] whose ticks fall on round
// numbers (1, 2, 2.5 or 5 times a power of ten, at most `maxIntervals`
// intervals, at least about 40% of that), with labels that show as many
// decimals as the tick step needs ("0.25", "10").
void setRoundAxisRange(QValueAxis* axis, double lo, double hi, int maxIntervals = 8);

// A vertical value axis kept on round ticks no closer than its labels can be
// read: as many intervals (at most 8) as the chart's plot area is tall in
// pairs of label lines, chosen again whenever the plot area changes size (a
// short dock otherwise crowds nine labels into a hundred pixels, and Qt
// elides every one of them to "...").
class LegibleAxis : public QObject {
public:
    LegibleAxis(QChart* chart, QValueAxis* axis);
    void setRange(double lo, double hi);
    int intervals() const { return intervals_; }

private:
    void fit(double height);

    QChart* chart_;
    QValueAxis* axis_;
    double lo_ = 0, hi_ = 1;
    int intervals_ = 0;
};
// Applies marker visibility changes to the legend's layout (Qt 6.4 keeps a
// visible legend's old layout after QLegendMarker::setVisible).
void relayoutLegend(QChart* chart);

class BreakdownChart : public QChartView {
    Q_OBJECT
public:
    // In stacking order, left to right; also the order of series()'s sets.
    enum Category { Compute, Tp, Cp, Ep, Pp, Dp, Bubble, Optimizer, CategoryCount };

    explicit BreakdownChart(QWidget* parent = nullptr);

    // Bar 0 (at the bottom) is `current`, bar 1 (above it, when given)
    // `pinned`. A null `current` clears the chart.
    void setEvaluation(std::shared_ptr<const Evaluation> current,
                       std::shared_ptr<const Evaluation> pinned = nullptr,
                       QString currentLabel = QStringLiteral("Current"),
                       QString pinnedLabel = QStringLiteral("Pinned"));
    // No bars; `message` says why (no scenario, plan cannot be evaluated).
    void clear(const QString& message);

    // For tests and exports. set(c) is series()->barSets()[c]; its value at
    // bar i is that evaluation's breakdown field, in seconds.
    QHorizontalStackedBarSeries* series() const { return series_; }
    QBarSet* set(Category c) const;
    QBarCategoryAxis* barAxis() const { return barAxis_; }
    QValueAxis* timeAxis() const { return timeAxis_; }
    // The message of clear(); empty while bars are shown.
    QString message() const { return message_; }
    int barCount() const { return int(evaluations_.size()); }

    static QString categoryName(Category c);
    static QColor categoryColor(Category c);

private:
    void showToolTip(bool status, int index, QBarSet* set);

    QHorizontalStackedBarSeries* series_;
    QBarCategoryAxis* barAxis_;
    QValueAxis* timeAxis_;
    QString message_;
    std::vector<std::shared_ptr<const Evaluation>> evaluations_;
};

} // namespace sa::views

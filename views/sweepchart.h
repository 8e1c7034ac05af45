#pragma once
// Step time against one swept parameter of the cluster (an inter-building
// link's bandwidth or latency) for the current plan and the baselines it
// is measured against: where the plan stops being network bound, and
// whether it beats the recipes at every link speed or only at some.
//
// The data is computed by sa::computeSweepSeries() (explore/sweepseries.h),
// which touches no widget and is meant to run on a worker (JobTracker); the
// chart only draws it.

#include "explore/sweepseries.h"
#include "model/scenario.h"

#include <QString>
#include <QWidget>

#include <limits>
#include <string>
#include <vector>

class QAbstractAxis;
class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QValueAxis;

namespace sa::views {

class LegibleAxis;

// A parameter of the cluster worth sweeping, with a default range around
// its current value.
struct SweepParameter {
    QString label;      // "B1-B2 bandwidth"
    QString axisTitle;  // "B1-B2 bandwidth (Tbit/s)": the unit the chart shows
    std::string path;   // "links.B1-B2.bandwidth_gbps" (see explore/sweep.h)
    double current = 0; // the cluster's value, in the path's unit
    // The shown value per unit of the path's ("bandwidth_gbps" shown in
    // Tbit/s: 1e-3), so that a log axis reads 10 and 100, not 10000.
    double displayScale = 1.0;
    bool logX = false; // bandwidth: spaced and drawn on a log scale
    std::vector<double> values;
};

// Each inter-building link's bandwidth (1/10x to 10x the current value,
// `points` values spaced evenly on a log scale, the current value among
// them when `points` is odd) and latency (0 to 10x the current value, or
// to 10 ms for a link without latency, evenly spaced), in the cluster's
// link order.
std::vector<SweepParameter> sweepableLinkParameters(const Cluster& cluster, int points = 15);

class SweepChart : public QWidget {
    Q_OBJECT
public:
    explicit SweepChart(QWidget* parent = nullptr);

    // Draws `series`; points that could not be evaluated are left out (the
    // line breaks there) and counted in the note under the chart.
    // `currentX`, when not NaN, is marked with a vertical line ("as built").
    // The x values (the series' and `currentX`) are drawn times `xScale`,
    // in the unit `axisTitle` names (SweepParameter::displayScale).
    void setSeries(QString axisTitle, bool logX, std::vector<SweepSeries> series,
                   double currentX = std::numeric_limits<double>::quiet_NaN(), double xScale = 1.0);
    void clear(const QString& message);

    const std::vector<SweepSeries>& data() const { return data_; }
    QString axisTitle() const { return axisTitle_; }
    QChartView* chartView() const { return view_; }
    QChart* chart() const;
    // The lines drawn for data()[i]: one per run of consecutive evaluated
    // points (an empty one when there is none, to keep its legend entry).
    QList<QLineSeries*> segments(int seriesIndex) const;
    QLineSeries* currentMarker() const { return marker_; } // null without currentX
    QAbstractAxis* xAxis() const;                          // the log or the linear one, as drawn
    QValueAxis* yAxis() const { return yAxis_; }
    bool isLogX() const { return logX_; }
    int plottedPoints() const { return plotted_; }
    int skippedPoints() const { return skipped_; }
    QString note() const;
    QString message() const { return message_; }

    static QColor seriesColor(int index);

private:
    void resetChart();

    QChartView* view_;
    QLabel* note_;
    // Made once and shown as needed: axes removed from a chart linger on
    // screen until the event loop deletes them.
    QLogValueAxis* logXAxis_;
    QValueAxis* linearXAxis_;
    QValueAxis* yAxis_;
    LegibleAxis* yTicks_;
    QLineSeries* marker_ = nullptr;
    std::vector<QList<QLineSeries*>> segments_;
    std::vector<SweepSeries> data_;
    QString axisTitle_;
    QString message_;
    bool logX_ = false;
    int plotted_ = 0;
    int skipped_ = 0;
};

} // namespace sa::views

#pragma once
// Peak memory per GPU of every pipeline stage against the memory of the
// GPU that holds it. Stages in different buildings may sit on different
// GPUs, so the limit is drawn per stage (a step line), and a stage over its
// limit gets its own colour.

#include "cost/evaluation.h"

#include <QChartView>
#include <QStringList>

#include <memory>

class QBarSet;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;

namespace sa::views {

class LegibleAxis;

class MemoryChart : public QChartView {
    Q_OBJECT
public:
    explicit MemoryChart(QWidget* parent = nullptr);

    // `buildingNames`: the cluster's buildings in order, to name the building
    // of each stage (Evaluation::stage_building) in tooltips; may be empty.
    void setEvaluation(std::shared_ptr<const Evaluation> evaluation,
                       QStringList buildingNames = {});
    void clear(const QString& message);

    // Stage i's peak is in fitsSet() when it is within its GPU's memory and
    // in overSet() when it is not; the other set holds 0 at i.
    QStackedBarSeries* series() const { return series_; }
    QBarSet* fitsSet() const { return fits_; }
    QBarSet* overSet() const { return over_; }
    // Two points per stage, (i - w, capacity) and (i + w, capacity).
    QLineSeries* capacitySeries() const { return capacity_; }
    QValueAxis* stageAxis() const { return stageAxis_; }
    QValueAxis* memoryAxis() const { return memoryAxis_; }
    int stageCount() const;
    double peakAt(int stage) const;     // from the bars, GiB
    double capacityAt(int stage) const; // from the limit line, GiB
    QString message() const { return message_; }

    static QColor fitsColor() { return QColor(0x4c, 0x78, 0xa8); }
    static QColor overColor() { return QColor(0xd6, 0x27, 0x28); }

private:
    void showToolTip(bool status, int index, QBarSet* set);

    QStackedBarSeries* series_;
    QBarSet* fits_;
    QBarSet* over_;
    QLineSeries* capacity_;
    QValueAxis* stageAxis_;
    QValueAxis* memoryAxis_;
    LegibleAxis* memoryTicks_;
    QString message_;
    std::shared_ptr<const Evaluation> evaluation_;
    QStringList buildingNames_;
};

} // namespace sa::views

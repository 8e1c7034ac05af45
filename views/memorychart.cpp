#include "memorychart.h"

#include "breakdownchart.h"
#include "units.h"

#include <QBarSet>
#include <QCursor>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace sa::views {

namespace {

// Stage ticks every 1, 2, 5, 10, 20, ... stages: at most about 16 labels.
double stageTickInterval(int stages) {
    for (double step : {1.0, 2.0, 4.0, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0})
        if (stages / step <= 16)
            return step;
    return std::ceil(stages / 16.0);
}

} // namespace

MemoryChart::MemoryChart(QWidget* parent)
    : QChartView(new QChart, parent)
    , series_(new QStackedBarSeries)
    , fits_(new QBarSet(QStringLiteral("Peak per GPU")))
    , over_(new QBarSet(QStringLiteral("Peak over the GPU's memory")))
    , capacity_(new QLineSeries)
    , stageAxis_(new QValueAxis)
    , memoryAxis_(new QValueAxis) {
    applyChartStyle(this);
    fits_->setColor(fitsColor());
    fits_->setBorderColor(fitsColor().darker(115));
    over_->setColor(overColor());
    over_->setBorderColor(overColor().darker(115));
    series_->append(fits_);
    series_->append(over_);
    series_->setBarWidth(0.7);
    capacity_->setName(QStringLiteral("GPU memory"));
    QPen limitPen(QColor(0x33, 0x33, 0x33));
    limitPen.setWidthF(2);
    limitPen.setStyle(Qt::DashLine);
    capacity_->setPen(limitPen);

    chart()->addSeries(series_);
    chart()->addSeries(capacity_);
    chart()->addAxis(stageAxis_, Qt::AlignBottom);
    chart()->addAxis(memoryAxis_, Qt::AlignLeft);
    for (QAbstractSeries* s :
         {static_cast<QAbstractSeries*>(series_), static_cast<QAbstractSeries*>(capacity_)}) {
        s->attachAxis(stageAxis_);
        s->attachAxis(memoryAxis_);
    }
    stageAxis_->setTitleText(QStringLiteral("Pipeline stage"));
    stageAxis_->setTickType(QValueAxis::TicksDynamic);
    stageAxis_->setTickAnchor(0);
    stageAxis_->setLabelFormat(QStringLiteral("%i"));
    stageAxis_->setGridLineVisible(false);
    memoryAxis_->setTitleText(QStringLiteral("GiB per GPU"));
    memoryTicks_ = new LegibleAxis(chart(), memoryAxis_);
    connect(series_, &QStackedBarSeries::hovered, this, &MemoryChart::showToolTip);
    clear(QStringLiteral("No evaluation yet"));
}

int MemoryChart::stageCount() const {
    return fits_->count();
}

double MemoryChart::peakAt(int stage) const {
    if (stage < 0 || stage >= stageCount())
        return 0;
    return fits_->at(stage) + over_->at(stage);
}

double MemoryChart::capacityAt(int stage) const {
    if (stage < 0 || 2 * stage >= capacity_->count())
        return 0;
    return capacity_->at(2 * stage).y();
}

void MemoryChart::setEvaluation(std::shared_ptr<const Evaluation> evaluation,
                                QStringList buildingNames) {
    if (!evaluation) {
        clear(QStringLiteral("No evaluation"));
        return;
    }
    const MemoryUsage& m = evaluation->memory;
    const std::size_t n = std::min(m.per_stage_peak_gib.size(), m.per_stage_capacity_gib.size());
    if (n == 0) {
        clear(QStringLiteral("No per-stage memory in this evaluation"));
        return;
    }
    evaluation_ = std::move(evaluation);
    buildingNames_ = std::move(buildingNames);
    message_.clear();

    fits_->remove(0, fits_->count());
    over_->remove(0, over_->count());
    QList<QPointF> limit;
    double top = 0;
    int overCount = 0;
    for (std::size_t s = 0; s < n; ++s) {
        const double peak = m.per_stage_peak_gib[s];
        const double cap = m.per_stage_capacity_gib[s];
        const bool over = peak > cap;
        overCount += over ? 1 : 0;
        fits_->append(over ? 0 : peak);
        over_->append(over ? peak : 0);
        limit << QPointF(double(s) - 0.5, cap) << QPointF(double(s) + 0.5, cap);
        top = std::max({top, peak, cap});
    }
    capacity_->replace(limit);

    stageAxis_->setRange(-0.5, double(n) - 0.5);
    stageAxis_->setTickInterval(stageTickInterval(int(n)));
    memoryTicks_->setRange(0, top * 1.04);
    for (QLegendMarker* marker : chart()->legend()->markers(series_)) {
        if (marker->label() == over_->label())
            marker->setVisible(overCount > 0);
        else if (marker->label() == fits_->label())
            marker->setVisible(overCount < int(n));
    }
    stageAxis_->setVisible(true);
    memoryAxis_->setVisible(true);
    capacity_->setVisible(true);
    chart()->legend()->setVisible(true);
    relayoutLegend(chart());

    const int w = m.worst_stage;
    const double worstPeak =
        w >= 0 && std::size_t(w) < n ? m.per_stage_peak_gib[std::size_t(w)] : m.peak_gib_per_gpu;
    const double worstCap =
        w >= 0 && std::size_t(w) < n ? m.per_stage_capacity_gib[std::size_t(w)] : m.capacity_gib;
    if (overCount == 0)
        chart()->setTitle(QStringLiteral("Peak memory per GPU: worst is stage %1, %2 of %3")
                              .arg(w)
                              .arg(formatGib(worstPeak), formatGib(worstCap)));
    else
        chart()->setTitle(QStringLiteral("Does not fit: %1 of %2 stages over their GPU's memory; "
                                         "worst is stage %3, %4 of %5")
                              .arg(overCount)
                              .arg(qulonglong(n))
                              .arg(w)
                              .arg(formatGib(worstPeak), formatGib(worstCap)));
}

void MemoryChart::clear(const QString& message) {
    evaluation_.reset();
    message_ = message;
    fits_->remove(0, fits_->count());
    over_->remove(0, over_->count());
    capacity_->clear();
    capacity_->setVisible(false);
    stageAxis_->setVisible(false);
    memoryAxis_->setVisible(false);
    chart()->legend()->setVisible(false);
    chart()->setTitle(message);
}

void MemoryChart::showToolTip(bool status, int index, QBarSet*) {
    if (!status || !evaluation_ || index < 0 || index >= stageCount()) {
        QToolTip::hideText();
        return;
    }
    const Evaluation& e = *evaluation_;
    const MemoryUsage& m = e.memory;
    const double peak = peakAt(index);
    const double cap = capacityAt(index);
    QString where;
    if (std::size_t(index) < e.stage_building.size()) {
        const int b = e.stage_building[std::size_t(index)];
        where = b >= 0 && b < buildingNames_.size()
                    ? QStringLiteral(" in %1").arg(buildingNames_[b])
                    : QStringLiteral(" in building %1").arg(b);
    }
    QString text =
        QStringLiteral("<b>Stage %1</b>%2<br>%3 of %4 (%5)")
            .arg(index)
            .arg(where, formatGib(peak), formatGib(cap), formatPercent(cap > 0 ? peak / cap : 0));
    if (peak > cap)
        text += QStringLiteral("<br><b>over by %1</b>").arg(formatGib(peak - cap));
    if (index == m.worst_stage)
        text += QStringLiteral("<br>weights %1, gradients %2, optimizer %3, activations %4, "
                               "other %5")
                    .arg(formatGib(m.weights_gib), formatGib(m.gradients_gib),
                         formatGib(m.optimizer_gib), formatGib(m.activations_gib),
                         formatGib(m.other_gib));
    QToolTip::showText(QCursor::pos(), text, this);
}

} // namespace sa::views

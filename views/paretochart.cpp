#include "paretochart.h"

#include "optimizerresultsmodel.h"
#include "units.h"

#include "export/optimizer_csv.h"

#include <QLegend>
#include <QLegendMarker>
#include <QMouseEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sa::views {

namespace {

const QColor kPlanColor(52, 110, 200);
const QColor kParetoColor(230, 120, 0);

struct BaselineLook {
    QColor color;
    QScatterSeries::MarkerShape shape;
};

BaselineLook lookOf(const std::string& name) {
    if (name == "production")
        return {QColor(200, 40, 40), QScatterSeries::MarkerShapeRectangle};
    if (name == "crosspipe")
        return {QColor(30, 140, 60), QScatterSeries::MarkerShapeTriangle};
    if (name == "atlas")
        return {QColor(0, 130, 150), QScatterSeries::MarkerShapeRotatedRectangle};
    if (name == "megatron-multidc")
        return {QColor(150, 110, 0), QScatterSeries::MarkerShapePentagon};
    return {QColor(120, 60, 160), QScatterSeries::MarkerShapeStar}; // as given
}

// Pinned markers sit this far inside the plot (fraction of the axis): far
// enough from the edge that their label, centred above them, stays whole.
constexpr double kPinInsetX = 0.1;
constexpr double kPinInsetY = 0.06;

// Markers closer than this (pixels) to the pointer are hit.
constexpr double kHitRadius = 10;

} // namespace

ParetoChart::ParetoChart(QWidget* parent)
    : QChartView(new QChart, parent)
    , chart_(QChartView::chart())
    , xAxis_(new QValueAxis(chart_))
    , yAxis_(new QValueAxis(chart_))
    , plans_(new QScatterSeries(chart_))
    , pareto_(new QLineSeries(chart_))
    , selection_(new QScatterSeries(chart_)) {
    setObjectName(QStringLiteral("paretoChart"));
    setRenderHint(QPainter::Antialiasing);
    setMouseTracking(true);
    setMinimumSize(320, 240);
    chart_->setAnimationOptions(QChart::NoAnimation);
    chart_->setMargins(QMargins(4, 4, 4, 4));
    // Beside the plot: panels are wider than tall, the plot needs the height.
    chart_->legend()->setAlignment(Qt::AlignRight);
    // The baselines differ by shape as well as colour: the legend shows both.
    chart_->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);

    xAxis_->setLabelFormat(QStringLiteral("%.4g"));
    yAxis_->setLabelFormat(QStringLiteral("%.4g"));
    chart_->addAxis(xAxis_, Qt::AlignBottom);
    chart_->addAxis(yAxis_, Qt::AlignLeft);

    // Added in drawing order: plans, the front over them (its orange dots
    // mark the plans on it), baselines, then the selection ring on top.
    plans_->setName(QStringLiteral("Top plans"));
    plans_->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    plans_->setMarkerSize(9);
    plans_->setColor(kPlanColor);
    plans_->setBorderColor(kPlanColor.darker(130));

    pareto_->setName(QStringLiteral("Pareto front"));
    pareto_->setPen(QPen(kParetoColor, 2));
    pareto_->setPointsVisible(true);
    pareto_->setMarkerSize(6);

    selection_->setName(QStringLiteral("Selected"));
    selection_->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    selection_->setMarkerSize(20);
    selection_->setBrush(Qt::NoBrush);
    selection_->setPen(QPen(QColor(20, 20, 20), 2.5));

    for (QAbstractSeries* s :
         std::initializer_list<QAbstractSeries*>{plans_, pareto_, selection_}) {
        chart_->addSeries(s);
        s->attachAxis(xAxis_);
        s->attachAxis(yAxis_);
    }
    for (QLegendMarker* m : chart_->legend()->markers(selection_))
        m->setVisible(false);
    rebuild();
}

QString ParetoChart::pinnedLabel(const QString& title, const BaselineResult& b,
                                 const QPointF& plotted) const {
    // The arrow points to where the baseline really is.
    const QPointF real = valuePoint(b.step_time_s, b.cross_building_bytes);
    QString arrows;
    if (real.y() > plotted.y())
        arrows += QStringLiteral("↑");
    else if (real.y() < plotted.y())
        arrows += QStringLiteral("↓");
    if (real.x() > plotted.x())
        arrows += QStringLiteral("→");
    else if (real.x() < plotted.x())
        arrows = QStringLiteral("←") + arrows;
    QStringList figures;
    if (real.x() != plotted.x())
        figures << formatStepTime(b.step_time_s);
    if (real.y() != plotted.y())
        figures << formatBytes(b.cross_building_bytes);
    return QStringLiteral("%1 %2 %3").arg(title, arrows, figures.join(QStringLiteral(", ")));
}

QPointF ParetoChart::valuePoint(double stepTimeS, double bytes) const {
    return {stepTimeS * timeScale_, bytes * bytesScale_};
}

void ParetoChart::setResult(std::shared_ptr<const OptimizerResult> result) {
    result_ = std::move(result);
    paretoOnly_ = result_ ? paretoOnlyIndices(*result_) : std::vector<std::size_t>{};
    selectedRow_ = -1;
    hoveredRow_ = -1;
    rebuild();
}

void ParetoChart::setBaselinesToScale(bool toScale) {
    if (baselinesToScale_ == toScale)
        return;
    baselinesToScale_ = toScale;
    rebuild();
}

void ParetoChart::rebuild() {
    for (QScatterSeries* s : baselines_) {
        chart_->removeSeries(s);
        delete s;
    }
    baselines_.clear();
    rescaleAxes();

    QList<QPointF> points;
    QList<QPointF> front;
    if (result_) {
        for (const ScoredPlan& p : result_->top)
            points.append(valuePoint(p.step_time_s, p.cross_building_bytes));
        for (const ScoredPlan& p : result_->pareto)
            front.append(valuePoint(p.step_time_s, p.cross_building_bytes));
    }
    plans_->replace(points);
    pareto_->replace(front);

    for (std::size_t i = 0; result_ && i < result_->baselines.size(); ++i) {
        const BaselineResult& b = result_->baselines[i];
        if (!baselinePoints_[i])
            continue;
        const BaselineLook look = lookOf(b.name);
        auto* s = new QScatterSeries(chart_);
        const QString title = OptimizerResultsModel::baselineTitle(b.name);
        s->setName(title);
        s->setMarkerShape(look.shape);
        s->setMarkerSize(13);
        s->setColor(look.color);
        s->setBorderColor(look.color.darker(140));
        s->append(*baselinePoints_[i]);
        // Five baselines often sit close together: their names are in the
        // legend, and only a pinned one (drawn away from its value) carries
        // a label with its real step time. The label is a literal: no
        // @xPoint / @yPoint in it.
        s->setPointLabelsVisible(baselinePinned_[i]);
        s->setPointLabelsFormat(baselinePinned_[i] ? pinnedLabel(title, b, *baselinePoints_[i])
                                                   : title);
        s->setPointLabelsColor(look.color.darker(130));
        s->setPointLabelsClipping(false);
        QFont f = s->pointLabelsFont();
        f.setBold(true);
        s->setPointLabelsFont(f);
        // Below the selection ring, above the plans and the front.
        chart_->removeSeries(selection_);
        chart_->addSeries(s);
        chart_->addSeries(selection_);
        for (QAbstractSeries* a : std::initializer_list<QAbstractSeries*>{s, selection_}) {
            a->attachAxis(xAxis_);
            a->attachAxis(yAxis_);
        }
        baselines_.push_back(s);
    }
    for (QLegendMarker* m : chart_->legend()->markers(selection_))
        m->setVisible(false);
    if (!rowValues(selectedRow_))
        selectedRow_ = -1;
    updateSelectionPoint();
}

void ParetoChart::rescaleAxes() {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    struct Bounds {
        double x0 = kInf, x1 = -kInf, y0 = kInf, y1 = -kInf;
        bool empty() const { return !(x1 >= x0); }
        void take(double x, double y) {
            x0 = std::min(x0, x);
            x1 = std::max(x1, x);
            y0 = std::min(y0, y);
            y1 = std::max(y1, y);
        }
    } bounds;
    if (result_) {
        for (const ScoredPlan& p : result_->top)
            bounds.take(p.step_time_s, p.cross_building_bytes);
        for (const ScoredPlan& p : result_->pareto)
            bounds.take(p.step_time_s, p.cross_building_bytes);
    }

    // Baselines within about one span of the plans widen the axes; farther
    // ones are pinned to the edge.
    const std::size_t baselineCount = result_ ? result_->baselines.size() : 0;
    baselinePoints_.assign(baselineCount, std::nullopt);
    baselinePinned_.assign(baselineCount, false);
    {
        const Bounds plans = bounds;
        const double spanX = plans.empty() ? 0 : std::max(plans.x1 - plans.x0, 0.15 * plans.x1);
        const double spanY = plans.empty() ? 0 : std::max(plans.y1 - plans.y0, 0.15 * plans.y1);
        for (std::size_t i = 0; i < baselineCount; ++i) {
            const BaselineResult& b = result_->baselines[i];
            if (!b.feasible)
                continue;
            const bool nearX =
                b.step_time_s >= plans.x0 - spanX && b.step_time_s <= plans.x1 + spanX;
            // No traffic among the plans: any baseline traffic is to scale.
            const bool nearY = spanY <= 0 || (b.cross_building_bytes >= plans.y0 - spanY &&
                                              b.cross_building_bytes <= plans.y1 + spanY);
            baselinePinned_[i] = !baselinesToScale_ && !plans.empty() && !(nearX && nearY);
            if (!baselinePinned_[i])
                bounds.take(b.step_time_s, b.cross_building_bytes);
        }
    }
    if (bounds.empty()) {
        bounds.take(0, 0);
        bounds.take(1, 0);
    }

    if (bounds.x1 < 1) {
        timeScale_ = 1e3;
        timeUnit_ = QStringLiteral("ms");
    } else {
        timeScale_ = 1;
        timeUnit_ = QStringLiteral("s");
    }
    static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int unit = 3; // GB when there is no traffic at all
    if (bounds.y1 > 0) {
        unit = 0;
        while (unit < 5 && bounds.y1 >= std::pow(1000.0, unit + 1))
            ++unit;
    }
    bytesScale_ = 1.0 / std::pow(1000.0, unit);
    bytesUnit_ = QString::fromLatin1(kUnits[unit]);

    auto padded = [](double lo, double hi) {
        const double span = hi - lo;
        const double pad = span > 0 ? span * 0.08 : std::max(std::fabs(hi) * 0.1, 1.0);
        return std::pair<double, double>(lo >= 0 ? std::max(0.0, lo - pad) : lo - pad, hi + pad);
    };
    const auto [x0, x1] = padded(bounds.x0 * timeScale_, bounds.x1 * timeScale_);
    const auto [y0, y1] = padded(bounds.y0 * bytesScale_, bounds.y1 * bytesScale_);
    xAxis_->setRange(x0, x1);
    yAxis_->setRange(y0, y1);
    xAxis_->applyNiceNumbers();
    yAxis_->applyNiceNumbers();
    xAxis_->setTitleText(QStringLiteral("Step time (%1)").arg(timeUnit_));
    yAxis_->setTitleText(QStringLiteral("Cross-building traffic (%1)").arg(bytesUnit_));

    // Pinned markers sit just inside the plot, on the side they are off.
    const double insetX = (xAxis_->max() - xAxis_->min()) * kPinInsetX;
    const double insetY = (yAxis_->max() - yAxis_->min()) * kPinInsetY;
    for (std::size_t i = 0; i < baselineCount; ++i) {
        const BaselineResult& b = result_->baselines[i];
        if (!b.feasible)
            continue;
        QPointF p = valuePoint(b.step_time_s, b.cross_building_bytes);
        if (baselinePinned_[i]) {
            p.setX(std::clamp(p.x(), xAxis_->min() + insetX, xAxis_->max() - insetX));
            p.setY(std::clamp(p.y(), yAxis_->min() + insetY, yAxis_->max() - insetY));
        }
        baselinePoints_[i] = p;
    }
}

int ParetoChart::firstBaselineRow() const {
    return result_ ? int(result_->top.size() + paretoOnly_.size()) : 0;
}

int ParetoChart::rowCount() const {
    return result_ ? firstBaselineRow() + int(result_->baselines.size()) : 0;
}

std::optional<std::pair<double, double>> ParetoChart::rowValues(int row) const {
    if (!result_ || row < 0 || row >= rowCount())
        return std::nullopt;
    const ScoredPlan* p = nullptr;
    if (row < int(result_->top.size()))
        p = &result_->top[std::size_t(row)];
    else if (row < firstBaselineRow())
        p = &result_->pareto[paretoOnly_[std::size_t(row) - result_->top.size()]];
    if (p)
        return std::pair(p->step_time_s, p->cross_building_bytes);
    const BaselineResult& b = result_->baselines[std::size_t(row - firstBaselineRow())];
    if (b.feasible)
        return std::pair(b.step_time_s, b.cross_building_bytes);
    return std::nullopt;
}

std::optional<QPointF> ParetoChart::plottedPoint(int row) const {
    const auto v = rowValues(row);
    if (!v)
        return std::nullopt;
    if (row >= firstBaselineRow())
        return baselinePoints_[std::size_t(row - firstBaselineRow())];
    return valuePoint(v->first, v->second);
}

bool ParetoChart::isPinned(int row) const {
    if (!result_ || row < firstBaselineRow())
        return false;
    const std::size_t b = std::size_t(row - firstBaselineRow());
    return b < baselinePinned_.size() && baselinePinned_[b];
}

std::optional<QPointF> ParetoChart::rowPosition(int row) const {
    const auto p = plottedPoint(row);
    if (!p)
        return std::nullopt;
    const QPointF inChart = chart_->mapToPosition(*p, plans_);
    return viewportTransform().map(chart_->mapToScene(inChart));
}

int ParetoChart::rowAt(const QPointF& viewportPos) const {
    if (!result_)
        return -1;
    const int rows = rowCount();
    int best = -1;
    double bestDistance = kHitRadius;
    for (int row = 0; row < rows; ++row) {
        const auto at = rowPosition(row);
        if (!at)
            continue;
        const double d = std::hypot(at->x() - viewportPos.x(), at->y() - viewportPos.y());
        // Ties go to the lower row: the better plan under the objective.
        if (d < bestDistance) {
            bestDistance = d;
            best = row;
        }
    }
    return best;
}

void ParetoChart::setSelectedRow(int row) {
    selectedRow_ = rowValues(row) ? row : -1;
    updateSelectionPoint();
}

void ParetoChart::updateSelectionPoint() {
    if (const auto p = plottedPoint(selectedRow_))
        selection_->replace(QList<QPointF>{*p});
    else
        selection_->clear();
}

QString ParetoChart::rowToolTip(int row) const {
    const auto v = rowValues(row);
    if (!v)
        return {};
    QString head;
    QString label;
    if (row < int(result_->top.size())) {
        head = QStringLiteral("#%1").arg(row + 1);
        label = QString::fromStdString(result_->top[std::size_t(row)].label);
    } else if (row < firstBaselineRow()) {
        head = QStringLiteral("Pareto front");
        label = QString::fromStdString(
            result_->pareto[paretoOnly_[std::size_t(row) - result_->top.size()]].label);
    } else {
        const BaselineResult& b = result_->baselines[std::size_t(row - firstBaselineRow())];
        head = QStringLiteral("%1 (baseline)").arg(OptimizerResultsModel::baselineTitle(b.name)) +
               (isPinned(row) ? QStringLiteral(", drawn off scale at the edge") : QString());
        label = QString::fromStdString(b.recipe) + QLatin1Char('\n') +
                OptimizerResultsModel::planSummary(b.plan);
    }
    return QStringLiteral("%1: %2 per step, %3 across buildings\n%4")
        .arg(head, formatStepTime(v->first), formatBytes(v->second), label);
}

void ParetoChart::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) {
        const int row = rowAt(event->position());
        if (row >= 0) {
            setSelectedRow(row);
            Q_EMIT planClicked(row);
            event->accept();
            return;
        }
    }
    QChartView::mousePressEvent(event);
}

void ParetoChart::mouseDoubleClickEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton) {
        const int row = rowAt(event->position());
        if (row >= 0) {
            Q_EMIT planDoubleClicked(row);
            event->accept();
            return;
        }
    }
    QChartView::mouseDoubleClickEvent(event);
}

void ParetoChart::mouseMoveEvent(QMouseEvent* event) {
    const int row = rowAt(event->position());
    if (row != hoveredRow_) {
        hoveredRow_ = row;
        if (row >= 0)
            QToolTip::showText(event->globalPosition().toPoint(), rowToolTip(row), viewport());
        else
            QToolTip::hideText();
    }
    QChartView::mouseMoveEvent(event);
}

} // namespace sa::views

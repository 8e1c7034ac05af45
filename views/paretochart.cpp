#include "paretochart.h"

#include "optimizerresultsmodel.h"
#include "units.h"

#include "export/optimizer_csv.h"

#include <QFontMetricsF>
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
    , others_(new QScatterSeries(chart_))
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

    others_->setName(QStringLiteral("Other plans"));
    others_->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    others_->setMarkerSize(7);
    others_->setColor(kPlanColor.lighter(160));
    others_->setBorderColor(kPlanColor);

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
         std::initializer_list<QAbstractSeries*>{plans_, others_, pareto_, selection_}) {
        chart_->addSeries(s);
        s->attachAxis(xAxis_);
        s->attachAxis(yAxis_);
    }
    for (QLegendMarker* m : chart_->legend()->markers(selection_))
        m->setVisible(false);
    connect(chart_, &QChart::plotAreaChanged, this, &ParetoChart::fitAxisTitles);
    rebuild();
}

QString ParetoChart::pinnedLabel(const QString& title, const BaselineResult& b,
                                 const QPointF& plotted) const {
    // The arrow points to where the baseline really is.
    const double x = metricValue(b, xMetric_), y = metricValue(b, yMetric_);
    const QPointF real = valuePoint(x, y);
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
        figures << formatMetric(xMetric_, x, priced_);
    if (real.y() != plotted.y())
        figures << formatMetric(yMetric_, y, priced_);
    return QStringLiteral("%1 %2 %3").arg(title, arrows, figures.join(QStringLiteral(", ")));
}

QPointF ParetoChart::valuePoint(double x, double y) const {
    return {x * xScale_, y * yScale_};
}

void ParetoChart::setResult(std::shared_ptr<const OptimizerResult> result, bool priced) {
    result_ = std::move(result);
    priced_ = priced;
    paretoOnly_ = result_ ? paretoOnlyIndices(*result_) : std::vector<std::size_t>{};
    selectedRow_ = -1;
    hoveredRow_ = -1;
    rebuild();
}

void ParetoChart::setAxes(PlanMetric x, PlanMetric y) {
    if (x == xMetric_ && y == yMetric_)
        return;
    xMetric_ = x;
    yMetric_ = y;
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
    if (result_)
        for (const ScoredPlan& p : result_->top)
            points.append(valuePoint(metricValue(p, xMetric_), metricValue(p, yMetric_)));
    plans_->replace(points);

    // The front of the searched rows on the two metrics, both minimised:
    // by x, then y, then the candidate's key (as the search orders its
    // own), each point with less y than the one before. On step time and
    // bytes this is result.pareto, which holds the front of every plan the
    // search evaluated.
    struct FrontPoint {
        double x, y;
        const Candidate* key;
        int row;
    };
    std::vector<FrontPoint> candidates;
    for (int row = 0; result_ && row < firstBaselineRow(); ++row) {
        const ScoredPlan* p = scoredPlanAt(row);
        candidates.push_back({metricValue(*p, xMetric_), metricValue(*p, yMetric_), &p->key, row});
    }
    std::sort(candidates.begin(), candidates.end(), [](const FrontPoint& a, const FrontPoint& b) {
        if (a.x != b.x)
            return a.x < b.x;
        if (a.y != b.y)
            return a.y < b.y;
        return *a.key < *b.key;
    });
    QList<QPointF> front;
    frontRows_.clear();
    double lastY = std::numeric_limits<double>::infinity();
    for (const FrontPoint& f : candidates)
        if (f.y < lastY) {
            lastY = f.y;
            front.append(valuePoint(f.x, f.y));
            frontRows_.push_back(f.row);
        }
    pareto_->replace(front);
    // The other plans of the search's own front, where they are off this one.
    QList<QPointF> others;
    for (int row = int(result_ ? result_->top.size() : 0); row < firstBaselineRow(); ++row)
        if (std::find(frontRows_.begin(), frontRows_.end(), row) == frontRows_.end())
            others.append(*plottedPoint(row));
    others_->replace(others);
    for (QLegendMarker* m : chart_->legend()->markers(others_))
        m->setVisible(!others.isEmpty());

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
        s->setPointLabelsFormat(baselinePinned_[i] ? baselineLabels_[i] : title);
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
            bounds.take(metricValue(p, xMetric_), metricValue(p, yMetric_));
        for (const ScoredPlan& p : result_->pareto)
            bounds.take(metricValue(p, xMetric_), metricValue(p, yMetric_));
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
            const double x = metricValue(b, xMetric_), y = metricValue(b, yMetric_);
            // All plans at zero (no traffic among them): any baseline value
            // is to scale.
            const bool nearX = spanX <= 0 || (x >= plans.x0 - spanX && x <= plans.x1 + spanX);
            const bool nearY = spanY <= 0 || (y >= plans.y0 - spanY && y <= plans.y1 + spanY);
            baselinePinned_[i] = !baselinesToScale_ && !plans.empty() && !(nearX && nearY);
            if (!baselinePinned_[i])
                bounds.take(x, y);
        }
    }
    if (bounds.empty()) {
        bounds.take(0, 0);
        bounds.take(1, 0);
    }

    const AxisUnit xu = metricAxisUnit(xMetric_, bounds.x1, priced_);
    const AxisUnit yu = metricAxisUnit(yMetric_, bounds.y1, priced_);
    xScale_ = xu.scale;
    xUnit_ = xu.unit;
    yScale_ = yu.scale;
    yUnit_ = yu.unit;

    auto padded = [](double lo, double hi) {
        const double span = hi - lo;
        const double pad = span > 0 ? span * 0.08 : std::max(std::fabs(hi) * 0.1, 1.0);
        return std::pair<double, double>(lo >= 0 ? std::max(0.0, lo - pad) : lo - pad, hi + pad);
    };
    const auto [x0, x1] = padded(bounds.x0 * xScale_, bounds.x1 * xScale_);
    const auto [y0, y1] = padded(bounds.y0 * yScale_, bounds.y1 * yScale_);
    xAxis_->setRange(x0, x1);
    yAxis_->setRange(y0, y1);
    xAxis_->applyNiceNumbers();
    yAxis_->applyNiceNumbers();
    const bool perStep = !result_ || runScoresPerStep(*result_);
    xTitles_ = {metricAxisTitle(xMetric_, xUnit_, perStep),
                metricAxisTitle(xMetric_, xUnit_, perStep, true)};
    yTitles_ = {metricAxisTitle(yMetric_, yUnit_, perStep),
                metricAxisTitle(yMetric_, yUnit_, perStep, true)};
    fitAxisTitles();

    // Pinned markers sit just inside the plot, on the side they are off.
    const double insetX = (xAxis_->max() - xAxis_->min()) * kPinInsetX;
    const double insetY = (yAxis_->max() - yAxis_->min()) * kPinInsetY;
    baselineLabels_.assign(baselineCount, QString());
    for (std::size_t i = 0; i < baselineCount; ++i) {
        const BaselineResult& b = result_->baselines[i];
        if (!b.feasible)
            continue;
        QPointF p = valuePoint(metricValue(b, xMetric_), metricValue(b, yMetric_));
        if (baselinePinned_[i]) {
            p.setX(std::clamp(p.x(), xAxis_->min() + insetX, xAxis_->max() - insetX));
            p.setY(std::clamp(p.y(), yAxis_->min() + insetY, yAxis_->max() - insetY));
            baselineLabels_[i] = pinnedLabel(OptimizerResultsModel::baselineTitle(b.name), b, p);
        }
        baselinePoints_[i] = p;
    }
    stackPinnedLabels();
}

void ParetoChart::stackPinnedLabels() {
    // Baselines pinned to the top or bottom edge often sit close together
    // (their step times differ by less than a label's width): each is moved
    // inward by a line until its label is clear of those placed before it.
    // Their labels, made above, keep pointing off the plot.
    const QRectF area = chart_->plotArea();
    const double widthPx = area.width() > 50 ? area.width() : 400;
    const double heightPx = area.height() > 50 ? area.height() : 200;
    const double xPerPx = (xAxis_->max() - xAxis_->min()) / widthPx;
    const double yPerPx = (yAxis_->max() - yAxis_->min()) / heightPx;
    if (!(xPerPx > 0) || !(yPerPx > 0))
        return;
    QFont font;
    font.setBold(true);
    const QFontMetricsF fm(font);
    // A label and the marker under it (13 px).
    const double line = fm.height() + 12;
    struct Placed {
        double x, y, width;
    };
    std::vector<Placed> placed;
    for (std::size_t i = 0; i < baselinePoints_.size(); ++i) {
        if (!baselinePoints_[i] || !baselinePinned_[i])
            continue;
        const BaselineResult& b = result_->baselines[i];
        QPointF& p = *baselinePoints_[i];
        const double realY = metricValue(b, yMetric_) * yScale_;
        const bool offY = realY > yAxis_->max() || realY < yAxis_->min();
        const double x = (p.x() - xAxis_->min()) / xPerPx;
        double y = (p.y() - yAxis_->min()) / yPerPx;
        const double width = fm.horizontalAdvance(baselineLabels_[i]);
        auto clashes = [&] {
            for (const Placed& q : placed)
                if (std::fabs(q.x - x) < (q.width + width) / 2 + 4 && std::fabs(q.y - y) < line)
                    return true;
            return false;
        };
        // Only those off in y move in y: one off in x alone is drawn at
        // its own y.
        const double step = realY > yAxis_->max() ? -line : line;
        int moves = 0;
        for (; offY && moves < 8 && clashes(); ++moves)
            y += step;
        placed.push_back({x, y, width});
        if (moves > 0)
            p.setY(yAxis_->min() + y * yPerPx);
    }
}

void ParetoChart::fitAxisTitles() {
    // Qt elides a title longer than its axis ("Cross-building traffic …").
    const QRectF area = chart_->plotArea();
    auto pick = [](QValueAxis* axis, const std::pair<QString, QString>& titles, double room) {
        const QFontMetricsF fm(axis->titleFont());
        const QString& t =
            fm.horizontalAdvance(titles.first) <= room - 8 ? titles.first : titles.second;
        if (axis->titleText() != t)
            axis->setTitleText(t);
    };
    pick(xAxis_, xTitles_, area.width());
    pick(yAxis_, yTitles_, area.height());
}

int ParetoChart::firstBaselineRow() const {
    return result_ ? int(result_->top.size() + paretoOnly_.size()) : 0;
}

int ParetoChart::rowCount() const {
    return result_ ? firstBaselineRow() + int(result_->baselines.size()) : 0;
}

const ScoredPlan* ParetoChart::scoredPlanAt(int row) const {
    if (!result_ || row < 0 || row >= firstBaselineRow())
        return nullptr;
    if (row < int(result_->top.size()))
        return &result_->top[std::size_t(row)];
    return &result_->pareto[paretoOnly_[std::size_t(row) - result_->top.size()]];
}

std::optional<std::pair<double, double>> ParetoChart::rowValues(int row) const {
    if (!result_ || row < 0 || row >= rowCount())
        return std::nullopt;
    if (const ScoredPlan* p = scoredPlanAt(row))
        return std::pair(metricValue(*p, xMetric_), metricValue(*p, yMetric_));
    const BaselineResult& b = result_->baselines[std::size_t(row - firstBaselineRow())];
    if (b.feasible)
        return std::pair(metricValue(b, xMetric_), metricValue(b, yMetric_));
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
    const ScoredPlan* p = scoredPlanAt(row);
    const BaselineResult* b =
        p ? nullptr : &result_->baselines[std::size_t(row - firstBaselineRow())];
    if (row < int(result_->top.size())) {
        head = QStringLiteral("#%1").arg(row + 1);
        label = QString::fromStdString(p->label);
    } else if (p) {
        head = QStringLiteral("Pareto front");
        label = QString::fromStdString(p->label);
    } else {
        head = QStringLiteral("%1 (baseline)").arg(OptimizerResultsModel::baselineTitle(b->name)) +
               (isPinned(row) ? QStringLiteral(", drawn off scale at the edge") : QString());
        label = QString::fromStdString(b->recipe) + QLatin1Char('\n') +
                OptimizerResultsModel::planSummary(b->plan);
    }
    // The two plotted figures first, then the others.
    QStringList figures;
    auto add = [&](PlanMetric m) {
        const double value = p ? metricValue(*p, m) : metricValue(*b, m);
        figures << QStringLiteral("%1 %2").arg(metricName(m), formatMetric(m, value, priced_));
    };
    add(xMetric_);
    if (yMetric_ != xMetric_)
        add(yMetric_);
    QStringList others;
    for (PlanMetric m : kPlanMetrics)
        if (m != xMetric_ && m != yMetric_) {
            const double value = p ? metricValue(*p, m) : metricValue(*b, m);
            others << QStringLiteral("%1 %2").arg(metricName(m).toLower(),
                                                  formatMetric(m, value, priced_));
        }
    return QStringLiteral("%1: %2\n%3\n%4")
        .arg(head, figures.join(QStringLiteral(", ")), others.join(QStringLiteral(", ")), label);
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

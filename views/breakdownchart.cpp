#include "breakdownchart.h"

#include "units.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCursor>
#include <QFontMetricsF>
#include <QHorizontalStackedBarSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QToolTip>
#include <QValueAxis>

#include <algorithm>
#include <array>
#include <cmath>

namespace sa::views {

namespace {

double fieldOf(const Breakdown& b, BreakdownChart::Category c) {
    switch (c) {
    case BreakdownChart::Compute:
        return b.compute_s;
    case BreakdownChart::Tp:
        return b.tp_exposed_s;
    case BreakdownChart::Cp:
        return b.cp_exposed_s;
    case BreakdownChart::Ep:
        return b.ep_exposed_s;
    case BreakdownChart::Pp:
        return b.pp_exposed_s;
    case BreakdownChart::Dp:
        return b.dp_exposed_s;
    case BreakdownChart::Bubble:
        return b.bubble_s;
    case BreakdownChart::Optimizer:
        return b.optimizer_s;
    case BreakdownChart::CategoryCount:
        break;
    }
    return 0;
}

double barTotal(const Breakdown& b) {
    double sum = 0;
    for (int c = 0; c < BreakdownChart::CategoryCount; ++c)
        sum += fieldOf(b, BreakdownChart::Category(c));
    return sum;
}

} // namespace

void applyChartStyle(QChartView* view) {
    view->setRenderHint(QPainter::Antialiasing);
    QChart* chart = view->chart();
    chart->setTheme(QChart::ChartThemeLight);
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->legend()->setShowToolTips(true);
    QFont title = chart->titleFont();
    title.setPointSizeF(title.pointSizeF() * 1.1);
    title.setBold(true);
    chart->setTitleFont(title);
    view->setMinimumSize(320, 200);
}

void setRoundAxisRange(QValueAxis* axis, double lo, double hi, int maxIntervals) {
    if (!(hi > lo)) {
        const double pad = std::max(std::fabs(hi) * 0.05, 1e-6);
        lo -= pad;
        hi += pad;
    }
    const double span = hi - lo;
    const double most = std::max(1, maxIntervals);
    double step = 1;
    for (double decade = std::pow(10.0, std::floor(std::log10(span / most)));; decade *= 10) {
        bool found = false;
        for (double m : {1.0, 2.0, 2.5, 5.0}) {
            if (span / (m * decade) <= most) {
                step = m * decade;
                found = true;
                break;
            }
        }
        if (found)
            break;
    }
    const double first = std::floor(lo / step + 1e-9) * step;
    const double last = std::ceil(hi / step - 1e-9) * step;
    const int intervals = std::max(1, int(std::lround((last - first) / step)));
    axis->setRange(first, first + intervals * step);
    axis->setTickType(QValueAxis::TicksFixed);
    axis->setTickCount(intervals + 1);
    // Decimals the step needs: 0.25 -> 2, 0.5 -> 1, 20 -> 0.
    int decimals = 0;
    while (decimals < 6 && std::fabs(step * std::pow(10.0, decimals) -
                                     std::round(step * std::pow(10.0, decimals))) > 1e-6)
        ++decimals;
    axis->setLabelFormat(QStringLiteral("%.%1f").arg(decimals));
}

LegibleAxis::LegibleAxis(QChart* chart, QValueAxis* axis)
    : QObject(chart)
    , chart_(chart)
    , axis_(axis) {
    connect(chart, &QChart::plotAreaChanged, this,
            [this](const QRectF& area) { fit(area.height()); });
}

void LegibleAxis::setRange(double lo, double hi) {
    lo_ = lo;
    hi_ = hi;
    intervals_ = 0;
    fit(chart_->plotArea().height());
}

void LegibleAxis::fit(double height) {
    // One interval per two label lines of the axis font.
    const double perInterval = 2.0 * QFontMetricsF(axis_->labelsFont()).height();
    const int n = std::clamp(int(height / perInterval), 1, 8);
    if (n == intervals_)
        return;
    intervals_ = n;
    setRoundAxisRange(axis_, lo_, hi_, n);
}

void relayoutLegend(QChart* chart) {
    QLegend* legend = chart->legend();
    if (!legend->isVisible())
        return;
    legend->setVisible(false);
    legend->setVisible(true);
}

BreakdownChart::BreakdownChart(QWidget* parent)
    : QChartView(new QChart, parent)
    , series_(new QHorizontalStackedBarSeries)
    , barAxis_(new QBarCategoryAxis)
    , timeAxis_(new QValueAxis) {
    applyChartStyle(this);
    for (int c = 0; c < CategoryCount; ++c) {
        auto* set = new QBarSet(categoryName(Category(c)));
        set->setColor(categoryColor(Category(c)));
        set->setBorderColor(categoryColor(Category(c)).darker(115));
        series_->append(set);
    }
    series_->setBarWidth(0.6);
    chart()->addSeries(series_);
    chart()->addAxis(barAxis_, Qt::AlignLeft);
    chart()->addAxis(timeAxis_, Qt::AlignBottom);
    series_->attachAxis(barAxis_);
    series_->attachAxis(timeAxis_);
    timeAxis_->setTitleText(QStringLiteral("Time per training step (s)"));
    timeAxis_->setMinorTickCount(1);
    connect(series_, &QHorizontalStackedBarSeries::hovered, this, &BreakdownChart::showToolTip);
    clear(QStringLiteral("No evaluation yet"));
}

QBarSet* BreakdownChart::set(Category c) const {
    const auto sets = series_->barSets();
    return c >= 0 && c < sets.size() ? sets[c] : nullptr;
}

QString BreakdownChart::categoryName(Category c) {
    switch (c) {
    case Compute:
        return QStringLiteral("Compute");
    case Tp:
        return QStringLiteral("TP exposed");
    case Cp:
        return QStringLiteral("CP exposed");
    case Ep:
        return QStringLiteral("EP exposed");
    case Pp:
        return QStringLiteral("PP exposed");
    case Dp:
        return QStringLiteral("DP exposed");
    case Bubble:
        return QStringLiteral("Pipeline bubble");
    case Optimizer:
        return QStringLiteral("Optimizer");
    case CategoryCount:
        break;
    }
    return {};
}

QColor BreakdownChart::categoryColor(Category c) {
    // Distinct hues that stay apart for the common colour-vision deficiencies
    // (after the Tableau 10 palette); communication is warm, idle time grey.
    static const std::array<QColor, CategoryCount> kColors{
        QColor(0x4c, 0x78, 0xa8), // compute: blue
        QColor(0xb2, 0x79, 0xa2), // TP: purple
        QColor(0xff, 0x9d, 0xa6), // CP: pink
        QColor(0x9d, 0x75, 0x5d), // EP: brown
        QColor(0xf5, 0x85, 0x18), // PP: orange
        QColor(0xe4, 0x57, 0x56), // DP: red
        QColor(0xba, 0xb0, 0xac), // bubble: grey
        QColor(0x54, 0xa2, 0x4b), // optimizer: green
    };
    return c >= 0 && c < CategoryCount ? kColors[std::size_t(c)] : QColor(Qt::black);
}

void BreakdownChart::setEvaluation(std::shared_ptr<const Evaluation> current,
                                   std::shared_ptr<const Evaluation> pinned, QString currentLabel,
                                   QString pinnedLabel) {
    if (!current) {
        clear(QStringLiteral("No evaluation"));
        return;
    }
    evaluations_.clear();
    evaluations_.push_back(std::move(current));
    QStringList labels{currentLabel};
    if (pinned) {
        evaluations_.push_back(std::move(pinned));
        labels << pinnedLabel;
    }
    message_.clear();

    // Category labels carry the step time; they must be unique for the axis.
    QStringList categories;
    double longest = 0;
    for (std::size_t i = 0; i < evaluations_.size(); ++i) {
        QString label =
            QStringLiteral("%1<br>%2")
                .arg(labels[qsizetype(i)], formatStepTime(evaluations_[i]->step_time_s));
        while (categories.contains(label))
            label += QLatin1Char(' ');
        categories << label;
        longest = std::max(longest, barTotal(evaluations_[i]->breakdown));
    }
    barAxis_->setCategories(categories);

    for (int c = 0; c < CategoryCount; ++c) {
        QBarSet* s = set(Category(c));
        s->remove(0, s->count());
        bool used = false;
        for (const auto& e : evaluations_) {
            const double v = fieldOf(e->breakdown, Category(c));
            s->append(v);
            used = used || v > 0;
        }
        // Categories no bar uses (CP and EP in most plans) stay out of the legend.
        for (QLegendMarker* m : chart()->legend()->markers(series_))
            if (m->label() == s->label())
                m->setVisible(used);
    }

    setRoundAxisRange(timeAxis_, 0, longest > 0 ? longest : 1);
    barAxis_->setVisible(true);
    timeAxis_->setVisible(true);
    chart()->legend()->setVisible(true);
    relayoutLegend(chart());

    const Evaluation& e = *evaluations_.front();
    QString title = QStringLiteral("Step time %1").arg(formatStepTime(e.step_time_s));
    if (evaluations_.size() > 1 && evaluations_[1]->step_time_s > 0 && e.step_time_s > 0) {
        const double other = evaluations_[1]->step_time_s;
        const double ratio = e.step_time_s / other;
        // Within the 0.01× shown: "as fast as", not "1.00× faster than".
        const QString comparison =
            std::abs(ratio - 1) < 0.005
                ? QStringLiteral("as fast as")
                : (ratio <= 1 ? QStringLiteral("%1× faster than").arg(1 / ratio, 0, 'f', 2)
                              : QStringLiteral("%1× slower than").arg(ratio, 0, 'f', 2));
        title = QStringLiteral("%1: step time %2, %3 %4 (%5)")
                    .arg(currentLabel, formatStepTime(e.step_time_s), comparison, pinnedLabel,
                         formatStepTime(other));
    }
    chart()->setTitle(title);
}

void BreakdownChart::clear(const QString& message) {
    evaluations_.clear();
    message_ = message;
    for (QBarSet* s : series_->barSets())
        s->remove(0, s->count());
    barAxis_->clear();
    barAxis_->setVisible(false);
    timeAxis_->setVisible(false);
    chart()->legend()->setVisible(false);
    chart()->setTitle(message);
}

void BreakdownChart::showToolTip(bool status, int index, QBarSet* barSet) {
    if (!status || index < 0 || index >= int(evaluations_.size())) {
        QToolTip::hideText();
        return;
    }
    const auto sets = series_->barSets();
    const int c = int(sets.indexOf(barSet));
    if (c < 0)
        return;
    const Evaluation& e = *evaluations_[std::size_t(index)];
    const double v = fieldOf(e.breakdown, Category(c));
    const double share = e.step_time_s > 0 ? v / e.step_time_s : 0;
    QToolTip::showText(QCursor::pos(),
                       QStringLiteral("<b>%1</b><br>%2 per step (%3 of %4)")
                           .arg(categoryName(Category(c)), formatSeconds(v), formatPercent(share),
                                formatStepTime(e.step_time_s)),
                       this);
}

} // namespace sa::views

#include "sweepchart.h"

#include "breakdownchart.h"
#include "units.h"

#include <QChart>
#include <QChartView>
#include <QCursor>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPen>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <map>

namespace sa::views {

namespace {

QString linkName(const Link& l) {
    return QString::fromStdString(l.name.empty() ? l.a + "-" + l.b : l.name);
}

std::vector<double> logSpaced(double lo, double hi, int n, double middle) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) {
        const double t = n > 1 ? double(i) / (n - 1) : 0;
        v.push_back(std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * t));
    }
    if (n % 2 == 1)
        v[std::size_t(n / 2)] = middle; // exactly the value as built
    return v;
}

std::vector<double> linSpaced(double lo, double hi, int n) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i)
        v.push_back(n > 1 ? lo + (hi - lo) * i / (n - 1) : lo);
    return v;
}

} // namespace

std::vector<SweepParameter> sweepableLinkParameters(const Cluster& cluster, int points) {
    points = std::max(points, 2);
    std::vector<SweepParameter> out;
    for (const Link& l : cluster.links) {
        const QString name = linkName(l);
        SweepParameter bw;
        bw.label = QStringLiteral("%1 bandwidth").arg(name);
        bw.path = "links." + name.toStdString() + ".bandwidth_gbps";
        bw.current = l.bandwidth_gbps;
        bw.logX = true;
        const double b = l.bandwidth_gbps > 0 ? l.bandwidth_gbps : 100;
        // In Tbit/s once the range starts at 1 Tbit/s (b / 10), as the
        // link's label reads.
        const bool tbps = b / 10 >= 1000;
        bw.displayScale = tbps ? 1e-3 : 1.0;
        bw.axisTitle =
            QStringLiteral("%1 bandwidth (%2)").arg(name, tbps ? u"Tbit/s"_qs : u"Gbit/s"_qs);
        bw.values = logSpaced(b / 10, b * 10, points, b);
        out.push_back(std::move(bw));

        SweepParameter lat;
        lat.label = QStringLiteral("%1 latency").arg(name);
        lat.axisTitle = QStringLiteral("%1 one-way latency (ms)").arg(name);
        lat.path = "links." + name.toStdString() + ".latency_ms";
        lat.current = l.latency_ms;
        lat.logX = false;
        lat.values = linSpaced(0, l.latency_ms > 0 ? 10 * l.latency_ms : 10, points);
        out.push_back(std::move(lat));
    }
    return out;
}

SweepChart::SweepChart(QWidget* parent)
    : QWidget(parent)
    , view_(new QChartView(new QChart, this))
    , note_(new QLabel(this))
    , logXAxis_(new QLogValueAxis)
    , linearXAxis_(new QValueAxis)
    , yAxis_(new QValueAxis) {
    applyChartStyle(view_);
    logXAxis_->setBase(10);
    logXAxis_->setMinorTickCount(8);
    // Short enough for a low dock (the chart's title names the quantity).
    yAxis_->setTitleText(QStringLiteral("Step (s)"));
    chart()->addAxis(logXAxis_, Qt::AlignBottom);
    chart()->addAxis(linearXAxis_, Qt::AlignBottom);
    chart()->addAxis(yAxis_, Qt::AlignLeft);
    yTicks_ = new LegibleAxis(chart(), yAxis_);
    note_->setWordWrap(true);
    note_->setTextFormat(Qt::PlainText);
    note_->setContentsMargins(8, 0, 8, 4);
    note_->setForegroundRole(QPalette::PlaceholderText);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(view_, 1);
    layout->addWidget(note_);
    clear(QStringLiteral("No sweep yet"));
}

QChart* SweepChart::chart() const {
    return view_->chart();
}

QList<QLineSeries*> SweepChart::segments(int seriesIndex) const {
    if (seriesIndex < 0 || std::size_t(seriesIndex) >= segments_.size())
        return {};
    return segments_[std::size_t(seriesIndex)];
}

QAbstractAxis* SweepChart::xAxis() const {
    return logX_ ? static_cast<QAbstractAxis*>(logXAxis_)
                 : static_cast<QAbstractAxis*>(linearXAxis_);
}

QString SweepChart::note() const {
    return note_->text();
}

QColor SweepChart::seriesColor(int index) {
    // The current plan in the breakdown's compute blue, the baselines in
    // colours that stay apart from it and from each other.
    static const QColor kColors[] = {QColor(0x1f, 0x5f, 0xa8), QColor(0xe4, 0x57, 0x56),
                                     QColor(0x54, 0xa2, 0x4b), QColor(0xb2, 0x79, 0xa2),
                                     QColor(0xf5, 0x85, 0x18), QColor(0x9d, 0x75, 0x5d)};
    constexpr int n = int(sizeof kColors / sizeof kColors[0]);
    return kColors[((index % n) + n) % n];
}

void SweepChart::resetChart() {
    chart()->removeAllSeries();
    marker_ = nullptr;
    segments_.clear();
    plotted_ = 0;
    skipped_ = 0;
}

void SweepChart::clear(const QString& message) {
    resetChart();
    data_.clear();
    axisTitle_.clear();
    message_ = message;
    chart()->setTitle(message);
    chart()->legend()->setVisible(false);
    for (QAbstractAxis* a : chart()->axes())
        a->setVisible(false);
    note_->clear();
    note_->setVisible(false);
}

void SweepChart::setSeries(QString axisTitle, bool logX, std::vector<SweepSeries> series,
                           double currentX, double xScale) {
    if (!(xScale > 0) || !std::isfinite(xScale))
        xScale = 1.0;
    currentX *= xScale;
    resetChart();
    data_ = std::move(series);
    axisTitle_ = std::move(axisTitle);
    logX_ = logX;
    message_.clear();
    QChart* c = chart();

    QAbstractAxis* xAxis = this->xAxis();
    logXAxis_->setVisible(logX);
    linearXAxis_->setVisible(!logX);
    yAxis_->setVisible(true);
    xAxis->setTitleText(axisTitle_);

    double xLo = std::numeric_limits<double>::infinity(), xHi = -xLo;
    double yLo = xLo, yHi = -xLo;
    // Reasons for skipped points, per series, counted.
    std::vector<std::map<QString, int>> reasons(data_.size());
    for (std::size_t k = 0; k < data_.size(); ++k) {
        const SweepSeries& s = data_[k];
        const QColor color = seriesColor(int(k));
        const QString name = QString::fromStdString(s.name);
        QString legendName = name;
        if (!s.fits_in_memory)
            legendName += QStringLiteral(" (does not fit in memory)");
        QList<QLineSeries*> lines;
        QLineSeries* line = nullptr;
        auto newLine = [&] {
            line = new QLineSeries;
            line->setName(legendName);
            QPen pen(color);
            pen.setWidthF(2.5);
            if (!s.fits_in_memory)
                pen.setStyle(Qt::DashLine);
            line->setPen(pen);
            line->setColor(color);
            line->setPointsVisible(true);
            line->setMarkerSize(5);
            lines << line;
        };
        for (std::size_t i = 0; i < s.x.size(); ++i) {
            const bool failed = i < s.errors.size() && !s.errors[i].empty();
            const double y = i < s.step_time_s.size() ? s.step_time_s[i]
                                                      : std::numeric_limits<double>::quiet_NaN();
            const double x = s.x[i] * xScale;
            const bool drawable = std::isfinite(x) && (!logX || x > 0);
            if (failed || !std::isfinite(y) || !drawable) {
                ++skipped_;
                ++reasons[k][failed     ? QString::fromStdString(s.errors[i])
                             : drawable ? QStringLiteral("no step time")
                                        : QStringLiteral("not drawable on a log scale")];
                line = nullptr; // the curve breaks here
                continue;
            }
            if (!line)
                newLine();
            line->append(x, y);
            ++plotted_;
            xLo = std::min(xLo, x);
            xHi = std::max(xHi, x);
            yLo = std::min(yLo, y);
            yHi = std::max(yHi, y);
        }
        if (lines.isEmpty())
            newLine(); // keeps the series in the legend
        for (QLineSeries* l : lines) {
            c->addSeries(l);
            l->attachAxis(xAxis);
            l->attachAxis(yAxis_);
            connect(l, &QLineSeries::hovered, this, [this, name](const QPointF& p, bool state) {
                if (!state) {
                    QToolTip::hideText();
                    return;
                }
                QToolTip::showText(QCursor::pos(),
                                   QStringLiteral("<b>%1</b><br>%2 = %3<br>step time %4")
                                       .arg(name, axisTitle_, QString::number(p.x(), 'g', 4),
                                            formatStepTime(p.y())),
                                   this);
            });
        }
        // One legend entry per series, however often its line breaks.
        for (int i = 1; i < lines.size(); ++i)
            for (QLegendMarker* m : c->legend()->markers(lines[i]))
                m->setVisible(false);
        segments_.push_back(lines);
    }

    if (plotted_ == 0) {
        xLo = 1;
        xHi = 10;
        yLo = 0;
        yHi = 1;
    }
    if (std::isfinite(currentX) && (!logX || currentX > 0)) {
        xLo = std::min(xLo, currentX);
        xHi = std::max(xHi, currentX);
    }
    if (xHi <= xLo)
        xHi = xLo + 1;
    if (logX) {
        logXAxis_->setRange(xLo, xHi);
        logXAxis_->setLabelFormat(xHi >= 1e6 ? QStringLiteral("%.0f") : QStringLiteral("%g"));
    } else {
        setRoundAxisRange(linearXAxis_, xLo, xHi);
        linearXAxis_->setLabelFormat(QStringLiteral("%g"));
    }
    // Step times over a sweep often differ by a few per cent: zoom in, with
    // a margin, rather than start at zero.
    const double pad = yHi > yLo ? 0.05 * (yHi - yLo) : 0.05 * std::max(std::fabs(yHi), 1e-3);
    yTicks_->setRange(std::max(0.0, yLo - pad), yHi + pad);

    if (std::isfinite(currentX) && (!logX || currentX > 0)) {
        marker_ = new QLineSeries;
        marker_->setName(QStringLiteral("As built"));
        QPen pen(QColor(0x55, 0x55, 0x55));
        pen.setWidthF(1.5);
        pen.setStyle(Qt::DotLine);
        marker_->setPen(pen);
        marker_->append(currentX, yAxis_->min());
        marker_->append(currentX, yAxis_->max());
        c->addSeries(marker_);
        marker_->attachAxis(xAxis);
        marker_->attachAxis(yAxis_);
    }

    c->legend()->setVisible(true);
    relayoutLegend(c);
    c->setTitle(
        QStringLiteral("Step time vs. %1").arg(axisTitle_.section(QStringLiteral(" ("), 0, 0)));

    // The note: how much is drawn, and why the rest is not.
    const int total = plotted_ + skipped_;
    QString text;
    if (skipped_ == 0) {
        text = QStringLiteral("All %1 points evaluated.").arg(total);
    } else {
        text = QStringLiteral("%1 of %2 points could not be evaluated and are left out:")
                   .arg(skipped_)
                   .arg(total);
        // A few reasons, the rest counted: a sweep whose every point fails
        // for its own value must not push the chart off the screen.
        constexpr int kMaxReasons = 4;
        int shown = 0, hidden = 0;
        for (std::size_t k = 0; k < data_.size(); ++k)
            for (const auto& [reason, count] : reasons[k]) {
                if (shown == kMaxReasons) {
                    hidden += count;
                    continue;
                }
                QString r = reason;
                if (r.size() > 160)
                    r = r.left(157) + QStringLiteral("...");
                text += QStringLiteral("\n• %1 (%2): %3")
                            .arg(QString::fromStdString(data_[k].name), QString::number(count), r);
                ++shown;
            }
        if (hidden > 0)
            text += QStringLiteral("\n• and %1 more for other reasons").arg(hidden);
    }
    for (const SweepSeries& s : data_)
        if (!s.fits_in_memory && s.evaluatedCount() > 0)
            text += QStringLiteral("\n%1 does not fit in the GPUs' memory (dashed); its step "
                                   "times are shown for comparison.")
                        .arg(QString::fromStdString(s.name));
    note_->setText(text);
    note_->setVisible(true);
}

} // namespace sa::views

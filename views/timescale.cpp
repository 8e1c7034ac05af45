#include "timescale.h"

#include <algorithm>
#include <cmath>

namespace sa::views {

namespace {

// Ticks are k * step; a visible range holding more than this many is a
// caller's mistake (a step far below a pixel), not something to draw.
constexpr double kMaxTicks = 100000;

struct Unit {
    double seconds;
    const char16_t* name;
};

constexpr Unit kUnits[] = {{1.0, u"s"}, {1e-3, u"ms"}, {1e-6, u"µs"}, {1e-9, u"ns"}};

// Decimals needed to write multiples of `step` (a 1-2-5 value) in `unit`.
int decimalsFor(double step, double unit) {
    const double exponent = std::floor(std::log10(step / unit) + 1e-9);
    return std::max(0, int(-exponent));
}

} // namespace

TimeScale::TimeScale(double t0, double secondsPerPixel, double width)
    : t0_(t0) {
    setSecondsPerPixel(secondsPerPixel);
    setWidth(width);
}

void TimeScale::setSecondsPerPixel(double secondsPerPixel) {
    if (!std::isfinite(secondsPerPixel) || secondsPerPixel <= 0)
        return;
    secondsPerPixel_ = std::clamp(secondsPerPixel, minSecondsPerPixel_, maxSecondsPerPixel_);
}

void TimeScale::setWidth(double width) {
    width_ = std::isfinite(width) ? std::max(1.0, width) : 1.0;
}

void TimeScale::setZoomLimits(double minSecondsPerPixel, double maxSecondsPerPixel) {
    minSecondsPerPixel_ = std::clamp(minSecondsPerPixel, kMinSecondsPerPixel, kMaxSecondsPerPixel);
    maxSecondsPerPixel_ = std::clamp(maxSecondsPerPixel, minSecondsPerPixel_, kMaxSecondsPerPixel);
    secondsPerPixel_ = std::clamp(secondsPerPixel_, minSecondsPerPixel_, maxSecondsPerPixel_);
}

void TimeScale::fit(double begin, double end, double width) {
    setWidth(width);
    if (!std::isfinite(begin) || !std::isfinite(end))
        return;
    if (end < begin)
        std::swap(begin, end);
    const double wanted = (end - begin) / width_;
    if (wanted > 0)
        setSecondsPerPixel(wanted);
    if (wanted > 0 && secondsPerPixel_ == wanted) {
        t0_ = begin;
        return;
    }
    t0_ = (begin + end) / 2 - width_ / 2 * secondsPerPixel_;
}

void TimeScale::zoomAround(double x, double factor) {
    if (!std::isfinite(factor) || factor <= 0 || !std::isfinite(x))
        return;
    const double fixed = t(x);
    setSecondsPerPixel(secondsPerPixel_ / factor);
    t0_ = fixed - x * secondsPerPixel_;
}

void TimeScale::pan(double dx) {
    if (std::isfinite(dx))
        t0_ -= dx * secondsPerPixel_;
}

double TimeScale::niceStep(double atLeast) {
    if (!std::isfinite(atLeast) || atLeast <= 0)
        return 1.0;
    const double decade = std::pow(10.0, std::floor(std::log10(atLeast)));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
        // A hair of tolerance so 0.2 (stored as 0.2000000001) stays 0.2.
        if (m * decade >= atLeast * (1 - 1e-9))
            return m * decade;
    }
    return 10 * decade;
}

double TimeScale::majorStep(double minSpacingPx) const {
    return niceStep(std::max(1.0, minSpacingPx) * secondsPerPixel_);
}

double TimeScale::minorStep(double majorStep) {
    const double decade = std::pow(10.0, std::floor(std::log10(majorStep) + 1e-9));
    const double mantissa = majorStep / decade;
    return std::fabs(mantissa - 2) < 1e-6 ? majorStep / 4 : majorStep / 5;
}

std::vector<double> TimeScale::tickTimes(double step) const {
    std::vector<double> out;
    if (!std::isfinite(step) || step <= 0)
        return out;
    const double first = std::ceil(visibleBegin() / step - 1e-9);
    const double last = std::floor(visibleEnd() / step + 1e-9);
    if (!(last >= first) || last - first > kMaxTicks)
        return out;
    out.reserve(std::size_t(last - first) + 1);
    // k * step rather than a running sum: no drift over many ticks.
    for (double k = first; k <= last; k += 1)
        out.push_back(k * step);
    return out;
}

std::vector<TimeScale::Tick> TimeScale::ticks(double minSpacingPx) const {
    const double step = majorStep(minSpacingPx);
    const double largest = std::max(std::fabs(visibleBegin()), std::fabs(visibleEnd()));
    std::vector<Tick> out;
    for (double t : tickTimes(step))
        out.push_back({t, x(t), tickLabel(t, step, largest)});
    return out;
}

QString TimeScale::tickLabel(double t, double step, double largest) {
    if (!std::isfinite(step) || step <= 0)
        step = 1;
    if (std::fabs(t) < step * 1e-6)
        return QStringLiteral("0");
    // The unit of the largest value on the axis...
    std::size_t unit = std::size(kUnits) - 1;
    for (std::size_t i = 0; i < std::size(kUnits); ++i) {
        if (std::fabs(largest) >= kUnits[i].seconds * (1 - 1e-9)) {
            unit = i;
            break;
        }
    }
    // ...or a smaller one where the step needs more than three decimals.
    while (unit + 1 < std::size(kUnits) && decimalsFor(step, kUnits[unit].seconds) > 3)
        ++unit;
    const int decimals = decimalsFor(step, kUnits[unit].seconds);
    return QStringLiteral("%1 %2").arg(QString::number(t / kUnits[unit].seconds, 'f', decimals),
                                       QString::fromUtf16(kUnits[unit].name));
}

} // namespace sa::views

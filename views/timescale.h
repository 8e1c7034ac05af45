#pragma once
// The time axis of the pipeline timeline without a window: which second sits
// under which pixel of the drawing area, zoom and pan, and where the axis
// ticks go. Pixels count from the left edge of the drawing area.

#include <QString>

#include <vector>

namespace sa::views {

class TimeScale {
public:
    // About this many pixels between two labelled ticks.
    static constexpr double kDefaultTickSpacing = 90.0;
    // 1 ns per pixel to 1000 s per pixel: beyond that nothing in a
    // training step is left to see.
    static constexpr double kMinSecondsPerPixel = 1e-9;
    static constexpr double kMaxSecondsPerPixel = 1e3;

    struct Tick {
        double t = 0; // seconds
        double x = 0; // pixels from the left edge of the area
        QString label;
    };

    TimeScale() = default;
    TimeScale(double t0, double secondsPerPixel, double width);

    double t0() const { return t0_; }
    double secondsPerPixel() const { return secondsPerPixel_; }
    double pixelsPerSecond() const { return 1.0 / secondsPerPixel_; }
    double width() const { return width_; }

    void setT0(double t0) { t0_ = t0; }
    // Clamped to the zoom limits.
    void setSecondsPerPixel(double secondsPerPixel);
    void setWidth(double width);
    // Narrows the zoom limits (within the absolute ones); the current zoom
    // is clamped into them.
    void setZoomLimits(double minSecondsPerPixel, double maxSecondsPerPixel);
    double minSecondsPerPixel() const { return minSecondsPerPixel_; }
    double maxSecondsPerPixel() const { return maxSecondsPerPixel_; }

    double x(double t) const { return (t - t0_) / secondsPerPixel_; }
    double t(double x) const { return t0_ + x * secondsPerPixel_; }
    double visibleBegin() const { return t0_; }
    double visibleEnd() const { return t(width_); }
    double visibleDuration() const { return width_ * secondsPerPixel_; }

    // [begin, end] spans `width` pixels. A range too short or too long for
    // the zoom limits is centred at the nearest allowed zoom.
    void fit(double begin, double end, double width);
    // `factor` > 1 zooms in. The time under pixel `x` stays under it (the
    // zoom itself is clamped to the limits).
    void zoomAround(double x, double factor);
    // Moves the picture `dx` pixels to the right, as a drag does: earlier
    // times come into view for dx > 0.
    void pan(double dx);

    // The smallest step of the 1-2-5 sequence (..., 0.1, 0.2, 0.5, 1, 2, 5,
    // 10, ...) that is at least `atLeast` seconds.
    static double niceStep(double atLeast);
    // The labelled tick step: at least `minSpacingPx` pixels apart.
    double majorStep(double minSpacingPx = kDefaultTickSpacing) const;
    // Unlabelled ticks between the major ones: a fifth of a 1 or 5 step, a
    // quarter of a 2 step.
    static double minorStep(double majorStep);
    // Multiples of `step` inside the visible range, both ends included.
    std::vector<double> tickTimes(double step) const;
    // Labelled ticks of the visible range.
    std::vector<Tick> ticks(double minSpacingPx = kDefaultTickSpacing) const;

    // A tick label in one unit for the whole axis: the unit of `largest`
    // (the largest time on the axis), or a smaller one where the step would
    // need more than three decimals. "0" at zero. 9.802 s on a 2 ms step
    // reads "9.802 s"; 5 ms on a 5 ms step of a 50 ms range "5 ms".
    static QString tickLabel(double t, double step, double largest);

private:
    double t0_ = 0;
    double secondsPerPixel_ = 1e-3;
    double width_ = 1;
    double minSecondsPerPixel_ = kMinSecondsPerPixel;
    double maxSecondsPerPixel_ = kMaxSecondsPerPixel;
};

} // namespace sa::views

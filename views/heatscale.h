#pragma once
// How link traffic becomes ink: colour from utilisation, width from bytes
// per step. Shared by the topology view and its legend so the two always
// agree.

#include <QColor>

namespace sa::views {

class HeatScale {
public:
    // `maxBytes`: the busiest link's bytes per step; widths are relative to it.
    explicit HeatScale(double maxBytes = 0)
        : maxBytes_(maxBytes) {}

    double maxBytes() const { return maxBytes_; }
    // Utilisation 0..1 (clamped) along a blue - teal - amber - red ramp that
    // stays readable on a light background.
    static QColor colorFor(double utilization);
    // A link that carries nothing in this plan.
    static QColor idleColor() { return QColor(0x9a, 0xa5, 0xb1); }
    // Width in scene units: 2 for an idle link up to 14 for the busiest,
    // logarithmic so a link with 1 % of the busiest traffic is still visible.
    double widthFor(double bytes) const;

    static constexpr double kMinWidth = 2.0;
    static constexpr double kMaxWidth = 14.0;

private:
    double maxBytes_;
};

} // namespace sa::views

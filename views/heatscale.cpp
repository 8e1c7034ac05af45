#include "heatscale.h"

#include <algorithm>
#include <cmath>

namespace sa::views {

QColor HeatScale::colorFor(double utilization) {
    struct Stop {
        double at;
        QColor color;
    };
    static const Stop kStops[] = {
        {0.00, QColor(0x3a, 0x7b, 0xd5)}, {0.30, QColor(0x1f, 0xa1, 0x87)},
        {0.55, QColor(0xe0, 0xa1, 0x00)}, {0.80, QColor(0xe8, 0x59, 0x0c)},
        {1.00, QColor(0xc9, 0x2a, 0x2a)},
    };
    const double u = std::clamp(utilization, 0.0, 1.0);
    for (std::size_t i = 1; i < std::size(kStops); ++i) {
        if (u <= kStops[i].at) {
            const Stop& a = kStops[i - 1];
            const Stop& b = kStops[i];
            const double t = (u - a.at) / (b.at - a.at);
            auto mix = [t](int x, int y) { return int(std::lround(x + (y - x) * t)); };
            return QColor(mix(a.color.red(), b.color.red()), mix(a.color.green(), b.color.green()),
                          mix(a.color.blue(), b.color.blue()));
        }
    }
    return kStops[std::size(kStops) - 1].color;
}

double HeatScale::widthFor(double bytes) const {
    if (maxBytes_ <= 0 || bytes <= 0)
        return kMinWidth;
    // 1 % of the busiest link -> about a third of the range.
    const double r = std::clamp(bytes / maxBytes_, 0.0, 1.0);
    const double f = std::log10(1 + 99 * r) / 2; // 0..1
    return kMinWidth + (kMaxWidth - kMinWidth) * f;
}

} // namespace sa::views

#include "units.h"

#include <cmath>

namespace sa::views {

namespace {

// Three significant digits, never scientific notation, no trailing zeros
// ("10 ms", not "10.0 ms").
QString threeDigits(double v) {
    const double a = std::fabs(v);
    const int decimals = a >= 100 ? 0 : a >= 10 ? 1 : 2;
    QString s = QString::number(v, 'f', decimals);
    if (s.contains(QLatin1Char('.'))) {
        while (s.endsWith(QLatin1Char('0')))
            s.chop(1);
        if (s.endsWith(QLatin1Char('.')))
            s.chop(1);
    }
    return s;
}

} // namespace

QString formatCount(std::int64_t n) {
    QString digits = QString::number(n < 0 ? -n : n);
    for (int i = int(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(i, QLatin1Char(','));
    return n < 0 ? QStringLiteral("-") + digits : digits;
}

QString formatBytes(double bytes) {
    static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int unit = 0;
    double v = bytes;
    while (std::fabs(v) >= 1000 && unit < 5) {
        v /= 1000;
        ++unit;
    }
    if (unit == 0)
        return QStringLiteral("%1 B").arg(std::llround(v));
    return QStringLiteral("%1 %2").arg(threeDigits(v), QLatin1String(kUnits[unit]));
}

QString formatBandwidthGbps(double gbps) {
    if (gbps >= 1000 * 1000)
        return QStringLiteral("%1 Pbit/s").arg(threeDigits(gbps / 1e6));
    if (gbps >= 1000)
        return QStringLiteral("%1 Tbit/s").arg(threeDigits(gbps / 1e3));
    if (gbps >= 1)
        return QStringLiteral("%1 Gbit/s").arg(threeDigits(gbps));
    return QStringLiteral("%1 Mbit/s").arg(threeDigits(gbps * 1e3));
}

QString formatLatencyMs(double ms) {
    if (ms <= 0)
        return QStringLiteral("0 ms");
    if (ms < 1)
        return QStringLiteral("%1 µs").arg(threeDigits(ms * 1000));
    return QStringLiteral("%1 ms").arg(threeDigits(ms));
}

QString formatSeconds(double s) {
    const double a = std::fabs(s);
    if (a == 0)
        return QStringLiteral("0 s");
    if (a < 1e-3)
        return QStringLiteral("%1 µs").arg(threeDigits(s * 1e6));
    if (a < 1)
        return QStringLiteral("%1 ms").arg(threeDigits(s * 1e3));
    return QStringLiteral("%1 s").arg(threeDigits(s));
}

QString formatStepTime(double s) {
    if (s >= 1)
        return QStringLiteral("%1 s").arg(QString::number(s, 'f', 2));
    return QStringLiteral("%1 ms").arg(QString::number(s * 1e3, 'f', 1));
}

QString formatPercent(double fraction) {
    return QStringLiteral("%1 %").arg(QString::number(fraction * 100, 'f', 1));
}

QString formatGib(double gib) {
    return QStringLiteral("%1 GiB").arg(QString::number(gib, 'f', 1));
}

QString formatRange(int first, int last) {
    if (first == last)
        return QString::number(first);
    return QStringLiteral("%1–%2").arg(first).arg(last);
}

QString formatDuration(double s) {
    if (std::isinf(s))
        return QStringLiteral("never");
    const double a = std::fabs(s);
    if (a < 60)
        return formatSeconds(s);
    if (a < 3600)
        return QStringLiteral("%1 min").arg(threeDigits(s / 60));
    if (a < 2 * 86400)
        return QStringLiteral("%1 h").arg(threeDigits(s / 3600));
    return QStringLiteral("%1 days").arg(threeDigits(s / 86400));
}

QString formatUsd(double usd) {
    const double a = std::fabs(usd);
    if (a >= 1e6)
        return QStringLiteral("$%1 M").arg(threeDigits(usd / 1e6));
    if (a >= 1e3)
        return QStringLiteral("$%1 k").arg(threeDigits(usd / 1e3));
    return QStringLiteral("$%1").arg(QString::number(usd, 'f', 2));
}

QString formatGpuHours(double gpuSeconds) {
    const double h = gpuSeconds / 3600;
    const double a = std::fabs(h);
    if (a >= 1e6)
        return QStringLiteral("%1 M GPU-h").arg(threeDigits(h / 1e6));
    if (a >= 1e3)
        return QStringLiteral("%1 k GPU-h").arg(threeDigits(h / 1e3));
    return QStringLiteral("%1 GPU-h").arg(threeDigits(h));
}

QString formatEnergyKwh(double kwh) {
    const double a = std::fabs(kwh);
    if (a >= 1e6)
        return QStringLiteral("%1 GWh").arg(threeDigits(kwh / 1e6));
    if (a >= 1e3)
        return QStringLiteral("%1 MWh").arg(threeDigits(kwh / 1e3));
    if (a >= 1 || a == 0)
        return QStringLiteral("%1 kWh").arg(threeDigits(kwh));
    return QStringLiteral("%1 Wh").arg(threeDigits(kwh * 1e3));
}

AxisUnit durationAxisUnit(double maxSeconds) {
    if (maxSeconds < 1)
        return {1e3, QStringLiteral("ms")};
    if (maxSeconds < 120)
        return {1, QStringLiteral("s")};
    if (maxSeconds < 2 * 3600)
        return {1.0 / 60, QStringLiteral("min")};
    if (maxSeconds < 3 * 86400)
        return {1.0 / 3600, QStringLiteral("h")};
    return {1.0 / 86400, QStringLiteral("days")};
}

AxisUnit bytesAxisUnit(double maxBytes) {
    static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int unit = 3; // GB when there is no traffic at all
    if (maxBytes > 0) {
        unit = 0;
        while (unit < 5 && maxBytes >= std::pow(1000.0, unit + 1))
            ++unit;
    }
    return {1.0 / std::pow(1000.0, unit), QString::fromLatin1(kUnits[unit])};
}

AxisUnit usdAxisUnit(double maxUsd) {
    if (maxUsd >= 1e6)
        return {1e-6, QStringLiteral("M$")};
    if (maxUsd >= 1e4)
        return {1e-3, QStringLiteral("k$")};
    return {1, QStringLiteral("$")};
}

AxisUnit gpuHoursAxisUnit(double maxGpuSeconds) {
    const double h = maxGpuSeconds / 3600;
    if (h >= 1e6)
        return {1.0 / 3600e6, QStringLiteral("M GPU-h")};
    if (h >= 1e4)
        return {1.0 / 3600e3, QStringLiteral("k GPU-h")};
    return {1.0 / 3600, QStringLiteral("GPU-h")};
}

AxisUnit energyAxisUnit(double maxKwh) {
    if (maxKwh >= 1e6)
        return {1e-6, QStringLiteral("GWh")};
    if (maxKwh >= 1e4)
        return {1e-3, QStringLiteral("MWh")};
    return {1, QStringLiteral("kWh")};
}

} // namespace sa::views

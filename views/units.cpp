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

} // namespace sa::views

#pragma once
// Human-readable quantities for labels, tooltips and the status bar. Decimal
// units throughout (GB = 1e9 bytes), as network people quote them; memory
// stays in GiB because GPU capacities are quoted that way.

#include <QString>

#include <cstdint>

namespace sa::views {

QString formatCount(std::int64_t n);      // 24576 -> "24,576"
QString formatBytes(double bytes);        // 1.2e10 -> "12.0 GB"
QString formatBandwidthGbps(double gbps); // 25600 -> "25.6 Tbit/s"
QString formatLatencyMs(double ms);       // 0.005 -> "5 µs", 10 -> "10 ms"
QString formatSeconds(double s);          // 0.0456 -> "45.6 ms"
QString formatStepTime(double s);         // 10.0256 -> "10.03 s", 0.4562 -> "456.2 ms"
QString formatPercent(double fraction);   // 0.432 -> "43.2 %"
QString formatGib(double gib);            // 71.3 -> "71.3 GiB"
// "0–5" or "3" for an inclusive range.
QString formatRange(int first, int last);

} // namespace sa::views

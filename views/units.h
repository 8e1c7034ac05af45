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

// Wall clock of a run: "45.6 ms", "12.3 s", "4.5 min", "3.2 h", "41.7 days".
QString formatDuration(double s);
// Dollars: "$12.34", "$45.6 k", "$1.23 M".
QString formatUsd(double usd);
// GPU-seconds as GPU-hours: "45.5 GPU-h", "12.3 k GPU-h", "1.23 M GPU-h".
QString formatGpuHours(double gpuSeconds);
// "850 Wh", "12.3 kWh", "4.56 MWh", "1.23 GWh".
QString formatEnergyKwh(double kwh);

// A unit for a chart axis whose values reach `max` (in the quantity's base
// unit: seconds, bytes, $, GPU-seconds, kWh): value * scale is in `unit`.
struct AxisUnit {
    double scale = 1;
    QString unit;
};
AxisUnit durationAxisUnit(double maxSeconds);    // ms, s, min, h, days
AxisUnit bytesAxisUnit(double maxBytes);         // B ... PB (GB when there are none)
AxisUnit usdAxisUnit(double maxUsd);             // $, k$, M$
AxisUnit gpuHoursAxisUnit(double maxGpuSeconds); // GPU-h, k GPU-h, M GPU-h
AxisUnit energyAxisUnit(double maxKwh);          // kWh, MWh, GWh

} // namespace sa::views

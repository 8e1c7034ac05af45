#pragma once
// Sweep results as CSV (RFC 4180): the table `scaleacross sweep --csv`
// prints, and the curves of the explorer's sweep chart for its "Export CSV".
// Numbers are written with printf's %g family, so a row reads back into the
// same doubles a spreadsheet would show; text fields are quoted when they
// hold a comma, a quote or a line break, and error messages always are.

#include "explore/sweep.h"
#include "export/csv.h"

#include <string>
#include <vector>

namespace sa {

// Header: the axis paths, then step_time_s, tokens_per_s, mfu,
// peak_gib_per_gpu, fits, cross_building_bytes, pp_exposed_s, dp_exposed_s,
// bubble_s, error. One row per point; a point that could not be evaluated
// keeps its axis values, leaves the numbers empty and names the reason.
std::string sweepCsv(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points);

// One named curve over one swept parameter: step time at each x, or the
// reason the point could not be evaluated (errors[i] non-empty; then
// step_time_s[i] is ignored). x, step_time_s and errors have equal sizes.
struct SweepCurve {
    std::string name;
    std::vector<double> x;
    std::vector<double> step_time_s;
    std::vector<std::string> errors;
};

// Header "series,<xColumn>,step_time_s,error" (xColumn: the swept path,
// e.g. "links.B1-B2.bandwidth_gbps"); one row per point of every curve, in
// order.
std::string sweepCurvesCsv(const std::string& xColumn, const std::vector<SweepCurve>& curves);

} // namespace sa

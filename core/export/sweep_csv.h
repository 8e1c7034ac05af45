#pragma once
// Sweep results as CSV (RFC 4180): the table `scaleacross sweep --csv`
// prints, and the series of the explorer's sweep chart (its "Export CSV",
// and `scaleacross sweep --baselines`).
// Numbers are written with printf's %g family, so a row reads back into the
// same doubles a spreadsheet would show; text fields are quoted when they
// hold a comma, a quote or a line break, and error messages always are.

#include "explore/sweep.h"
#include "explore/sweepseries.h"
#include "export/csv.h"

#include <string>
#include <vector>

namespace sa {

// Header: the axis paths, then step_time_s, tokens_per_s, mfu,
// peak_gib_per_gpu, fits, cross_building_bytes, pp_exposed_s, dp_exposed_s,
// bubble_s, error. One row per point; a point that could not be evaluated
// keeps its axis values, leaves the numbers empty and names the reason.
std::string sweepCsv(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points);

// Header "series,<xColumn>,step_time_s,error" (xColumn: the swept path,
// e.g. "links.B1-B2.bandwidth_gbps"); one row per point of every series, in
// order (explore/sweepseries.h; the explorer's "Export CSV" and `scaleacross
// sweep --baselines`). A point whose errors[i] is set has no step time and
// names the reason.
std::string sweepSeriesCsv(const std::string& xColumn, const std::vector<SweepSeries>& series);

} // namespace sa

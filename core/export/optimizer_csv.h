#pragma once
// Optimizer results as CSV (RFC 4180: comma-separated, CRLF line ends,
// fields with commas, quotes or line breaks in double quotes, quotes
// doubled) for spreadsheets: one row per top plan (kind = "top"), best
// first; optionally the plans of the Pareto front that are not in the top
// (kind = "pareto"); then one row per baseline (kind = "baseline"). Numbers are written in the
// shortest form that reads back to the same double; a value that does not apply (a speedup over an
// infeasible baseline, the figures of an infeasible baseline) is an empty field.

#include "explore/optimizer.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace sa {

// The columns, in order.
const std::vector<std::string>& optimizerCsvColumns();

struct OptimizerCsvOptions {
    bool pareto_rows = false; // add the front's plans that are not in the top
};

std::string optimizerCsv(const OptimizerResult& result, const OptimizerCsvOptions& options = {});

// Indices into result.pareto of the plans that are not in result.top (by
// candidate key), in front order.
std::vector<std::size_t> paretoOnlyIndices(const OptimizerResult& result);

// Speedup of a plan with `stepTimeS` over a baseline: baseline / plan - 1
// (0.25 = 25 % faster than the baseline); nullopt when the baseline is
// infeasible or a time is not positive.
std::optional<double> speedupOver(double stepTimeS, const BaselineResult& baseline);

// Whether result.top[topIndex] is one of result.pareto (same candidate key).
bool isOnParetoFront(const OptimizerResult& result, std::size_t topIndex);

// The baseline named `name` ("production", "prior-art"), or nullptr.
const BaselineResult* findBaseline(const OptimizerResult& result, const std::string& name);

} // namespace sa

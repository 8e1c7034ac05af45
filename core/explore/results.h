#pragma once
// Optimizer results as JSON ("format": "scaleacross.optimizer-result"): what
// `scaleacross optimize --json` prints and what `scaleacross merge` reads
// back from shards. Plans are complete plan documents (sa::toJson(Plan)), so
// `scaleacross evaluate` loads any of them once saved on its own.

#include "explore/optimizer.h"
#include "formats/documents.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace sa {

inline constexpr const char* kOptimizerResultFormat = "scaleacross.optimizer-result";
inline constexpr int kOptimizerResultVersion = 2;

nlohmann::json toJson(const OptimizerResult& r);

// Reads a result written by toJson as strictly as the documents are read
// (formats/documents.h): an unknown, missing or mistyped key, a value out of
// range, a plan that is not a valid plan document or text that is not JSON
// is a Diagnostic naming the file, the JSON path and the problem. The value
// is set only when there are none. `file` is only used in messages.
Loaded<OptimizerResult> optimizerResultFromJson(const nlohmann::json& j, const std::string& file);
Loaded<OptimizerResult> parseOptimizerResult(const std::string& text, const std::string& file);
Loaded<OptimizerResult> loadOptimizerResultFile(const std::string& path);

// A human-readable report: space, strategy, counts, speed, baselines, the
// top plans and the Pareto set.
std::string optimizerReport(const OptimizerResult& r);

// What distinguishes `p` from `best`: the label parts (" | ") of p that best
// lacks, and best's link settings p leaves as built.
std::string labelDifference(const ScoredPlan& best, const ScoredPlan& p);

} // namespace sa

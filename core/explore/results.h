#pragma once
// Optimizer results as JSON ("format": "scaleacross.optimizer-result"): what
// `scaleacross optimize --json` prints and what `scaleacross merge` reads
// back from shards. Plans are complete plan documents (sa::toJson(Plan)), so
// `scaleacross evaluate` loads any of them once saved on its own.

#include "explore/optimizer.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>

namespace sa {

inline constexpr const char* kOptimizerResultFormat = "scaleacross.optimizer-result";

nlohmann::json toJson(const OptimizerResult& r);

// Reads a result written by toJson; nullopt with a message naming the JSON
// path on error. `file` is only used in messages.
std::optional<OptimizerResult> optimizerResultFromJson(const nlohmann::json& j,
                                                       const std::string& file, std::string* error);

// A human-readable report: space, strategy, counts, speed, baselines, the
// top plans and the Pareto set.
std::string optimizerReport(const OptimizerResult& r);

} // namespace sa

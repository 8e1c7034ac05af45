#pragma once
// The Evaluation as JSON (the `--json` output of `scaleacross evaluate`)
// and as a short text report for people.

#include "cost/evaluation.h"

#include <nlohmann/json_fwd.hpp>

#include <string>

namespace sa {

struct Cluster;

// `timeline` adds every op (large); off by default.
nlohmann::json evaluationToJson(const Evaluation& ev, bool timeline = false);
std::string evaluationReport(const Evaluation& ev, const Cluster& cluster);

// Human-readable quantities: "1.23 s", "45.6 GB", "12.3 Tbit/s".
std::string formatSeconds(double s);
std::string formatBytes(double bytes);

} // namespace sa

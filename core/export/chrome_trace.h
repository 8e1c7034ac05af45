#pragma once
// The pipeline timeline in Chrome's trace event format (JSON object form),
// which Perfetto and chrome://tracing open: one process per building, one
// thread per pipeline stage, complete ("X") events in microseconds.

#include "cost/evaluation.h"
#include "model/cluster.h"

#include <nlohmann/json_fwd.hpp>

namespace sa {

nlohmann::json chromeTrace(const Evaluation& ev, const Cluster& cluster);

} // namespace sa

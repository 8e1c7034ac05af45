#pragma once
// Loading the scenario a subcommand works on: either one scenario file
// (positional) or --cluster/--model/--plan. Prints every problem and
// returns nullopt on bad input.

#include "args.h"

#include "model/scenario.h"

#include <optional>
#include <string>

namespace sa::cli {

std::optional<Scenario> loadScenarioArgs(const Args& args, bool requirePlan = true);

// The file the plan came from: --plan, the file a scenario's "plan" names,
// or the scenario itself when the plan is inline. For messages.
std::string planSourceName(const Args& args);
inline const char* kScenarioUsage =
    "  SCENARIO.json              a scenario file (cluster, model and plan), or\n"
    "  --cluster C --model M --plan P   three separate documents\n";

// Writes `contents` atomically to `path`; prints the error and returns false.
bool writeOutput(const std::string& path, const std::string& contents);

} // namespace sa::cli

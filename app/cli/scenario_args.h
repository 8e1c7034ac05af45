#pragma once
// The scenario a subcommand works on: either one scenario file (positional)
// or --cluster/--model/--plan, declared once for every command that reads
// one. Loading prints every problem and returns nullopt on bad input.

#include "model/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace sa::cli {

struct ScenarioInput {
    std::vector<std::string> files; // SCENARIO.json (one expected)
    std::optional<std::string> cluster;
    std::optional<std::string> model;
    std::optional<std::string> plan;

    // A plan was given: a scenario file or --plan.
    bool hasPlan() const { return !files.empty() || plan.has_value(); }
};

// Declares SCENARIO.json, --cluster C, --model M and --plan P on `cmd`;
// `planHelp` describes --plan (optimize's is a base plan, and optional).
void addScenarioInput(CLI::App& cmd, ScenarioInput& in,
                      const char* planHelp = "the plan document (with --cluster and --model)");

std::optional<Scenario> loadScenarioArgs(const ScenarioInput& in, bool requirePlan = true);

// The file the plan came from: --plan, the file a scenario's "plan" names,
// or the scenario itself when the plan is inline. For messages.
std::string planSourceName(const ScenarioInput& in);

// Declares -o,--output FILE.
void addOutputOption(CLI::App& cmd, std::optional<std::string>& out,
                     const char* help = "write the output to FILE (atomically)\ninstead of stdout");

// Writes `contents` atomically to `path`; prints the error and returns false.
bool writeOutput(const std::string& path, const std::string& contents);

// Writes `text` to `out` when given (exit 1 if that fails), else to stdout.
int writeResult(const std::optional<std::string>& out, const std::string& text);

} // namespace sa::cli

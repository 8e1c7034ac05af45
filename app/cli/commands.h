#pragma once
// The `scaleacross` subcommands. Each add*Command declares one subcommand
// on the application: its options, bound once to a struct the command
// owns (CLI11 checks their types and ranges and generates --help from
// them), and the function that runs it. See main.cpp for how to add one.

#include "exit_codes.h"

#include <functional>

namespace CLI {
class App;
}

namespace sa::cli {

// Runs the command the user chose, after the whole command line has parsed;
// returns the exit code (kExitOk, kExitFailure, kExitBadInput).
using CommandRun = std::function<int()>;

// Makes `run` the command to run when `cmd` is the subcommand given.
void runWhenChosen(CLI::App& cmd, CommandRun& chosen, CommandRun run);

void addCheckCommand(CLI::App& app, CommandRun& chosen);     // check FILE|DIR...
void addEvaluateCommand(CLI::App& app, CommandRun& chosen);  // evaluate SCENARIO
void addTraceCommand(CLI::App& app, CommandRun& chosen);     // trace SCENARIO -o FILE
void addOptimizeCommand(CLI::App& app, CommandRun& chosen);  // optimize SCENARIO
void addMergeCommand(CLI::App& app, CommandRun& chosen);     // merge SHARD.json...
void addSweepCommand(CLI::App& app, CommandRun& chosen);     // sweep SCENARIO --vary ...
void addImportCommand(CLI::App& app, CommandRun& chosen);    // import megatron|nemo|torchtitan ...
void addExportCommand(CLI::App& app, CommandRun& chosen);    // export --to FRAMEWORK SCENARIO
void addCalibrateCommand(CLI::App& app, CommandRun& chosen); // calibrate --cluster C ... -o C2
void addValidateCommand(CLI::App& app, CommandRun& chosen);  // validate RUNS.json...

} // namespace sa::cli

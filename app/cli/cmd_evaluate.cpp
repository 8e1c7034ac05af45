// scaleacross evaluate / trace

#include "commands.h"
#include "help_format.h"
#include "scenario_args.h"

#include "cost/balance.h"
#include "cost/evaluate.h"
#include "export/chrome_trace.h"
#include "export/evaluation_json.h"
#include "formats/documents.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace sa::cli {

namespace {

struct EvaluateArgs {
    ScenarioInput input;
    bool json = false;
    bool timeline = false;
    bool balance_layers = false;
    std::optional<std::string> out;
};

int evaluateOrTrace(const EvaluateArgs& args, bool trace) {
    auto scenario = loadScenarioArgs(args.input);
    if (!scenario)
        return kExitBadInput;
    const auto& out = args.out;
    if (trace && !out) {
        std::fprintf(stderr, "scaleacross trace: -o FILE is required\n");
        return kExitBadInput;
    }
    if (args.balance_layers) {
        if (!scenario->plan.placement)
            scenario->plan.placement = Placement{};
        scenario->plan.placement->layers_per_stage =
            balancedLayers(scenario->cluster, scenario->model, scenario->plan);
    }
    EvaluateOptions opts;
    opts.timeline = trace || args.timeline || !args.json;
    opts.plan_file = planSourceName(args.input);
    const EvaluationResult result = sa::evaluate(*scenario, opts);
    if (const auto* err = std::get_if<EvaluationError>(&result)) {
        std::fprintf(stderr, "%s\n", err->str().c_str());
        return kExitBadInput;
    }
    const Evaluation& ev = std::get<Evaluation>(result);
    std::string text;
    if (trace)
        text = chromeTrace(ev, scenario->cluster).dump() + "\n";
    else if (args.json)
        text = evaluationToJson(ev, args.timeline).dump(2) + "\n";
    else {
        text = evaluationReport(ev, scenario->cluster);
        if (args.balance_layers) {
            std::string split;
            for (int l : scenario->plan.placement->layers_per_stage)
                split += (split.empty() ? "" : ", ") + std::to_string(l);
            text = "balanced layers per stage: [" + split + "]\n" + text;
        }
    }
    if (out) {
        if (!writeOutput(*out, text))
            return kExitFailure;
        if (trace)
            std::printf("wrote %zu timeline events to %s\n", ev.timeline.ops.size(), out->c_str());
        return kExitOk;
    }
    std::fputs(text.c_str(), stdout);
    return kExitOk;
}

// The options evaluate and trace share; trace also accepts --json and
// --timeline (without effect, as it always did) but does not list them.
void addEvaluateOptions(CLI::App& cmd, EvaluateArgs& args, bool trace) {
    addScenarioInput(cmd, args.input);
    CLI::Option* json = cmd.add_flag("--json", args.json,
                                     "machine-readable output (keys: step_time_s,\n"
                                     "tokens_per_s, mfu, hfu, tflops_per_gpu, memory,\n"
                                     "breakdown, stages (per-stage breakdown), links,\n"
                                     "warnings, ...)");
    CLI::Option* timeline = cmd.add_flag("--timeline", args.timeline,
                                         "with --json: include every op of the\npipeline timeline");
    cmd.add_flag("--balance-layers", args.balance_layers,
                 "replace layers_per_stage by a split balanced\n"
                 "for the speed of the buildings holding each\n"
                 "stage (heterogeneous GPUs)");
    if (trace) {
        json->group("");
        timeline->group("");
        addOutputOption(cmd, args.out, "the trace file to write (atomically); required");
    } else {
        addOutputOption(cmd, args.out);
    }
}

} // namespace

void addEvaluateCommand(CLI::App& app, CommandRun& chosen) {
    auto args = std::make_shared<EvaluateArgs>();
    CLI::App* cmd =
        app.add_subcommand("evaluate", "predict step time, MFU, memory and link traffic of a plan");
    describe(*cmd,
             "scaleacross evaluate (SCENARIO.json | --cluster C --model M --plan P) [--json]\n"
             "                            [--timeline] [--balance-layers] [-o FILE]",
             "Predicts step time, tokens/s, MFU and HFU, memory per GPU, the step-time\n"
             "breakdown (compute, exposed TP/CP/EP/PP/DP communication, bubble) and the\n"
             "traffic on every link and tier of the cluster.",
             "Exit codes: 0 ok, 1 the output could not be written, 2 bad input (file,\n"
             "JSON path and problem printed).");
    addEvaluateOptions(*cmd, *args, false);
    runWhenChosen(*cmd, chosen, [args] { return evaluateOrTrace(*args, false); });
}

void addTraceCommand(CLI::App& app, CommandRun& chosen) {
    auto args = std::make_shared<EvaluateArgs>();
    CLI::App* cmd =
        app.add_subcommand("trace", "write the pipeline timeline as a Chrome trace (Perfetto)");
    describe(*cmd,
             "scaleacross trace (SCENARIO.json | --cluster C --model M --plan P)\n"
             "                         [--balance-layers] -o FILE",
             "Writes the pipeline timeline (every forward, backward, weight-gradient op,\n"
             "P2P transfer and DP sync) in Chrome trace event format; open it in\n"
             "https://ui.perfetto.dev or chrome://tracing. One process per building,\n"
             "one thread per pipeline stage.",
             "Exit codes: 0 ok, 1 the file could not be written, 2 bad input.");
    addEvaluateOptions(*cmd, *args, true);
    runWhenChosen(*cmd, chosen, [args] { return evaluateOrTrace(*args, true); });
}

} // namespace sa::cli

// scaleacross evaluate / trace

#include "args.h"
#include "commands.h"
#include "scenario_args.h"

#include "cost/balance.h"
#include "cost/evaluate.h"
#include "export/chrome_trace.h"
#include "export/evaluation_json.h"
#include "formats/documents.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace sa::cli {

namespace {

const char* kEvaluateHelp =
    "Usage: scaleacross evaluate (SCENARIO.json | --cluster C --model M --plan P) [--json]\n"
    "                            [--timeline] [-o FILE]\n\n"
    "Predicts step time, tokens/s, MFU and HFU, memory per GPU, the step-time\n"
    "breakdown (compute, exposed TP/CP/EP/PP/DP communication, bubble) and the\n"
    "traffic on every link and tier of the cluster.\n\n"
    "Input:\n%s\n"
    "Options:\n"
    "  --json        machine-readable output (keys: step_time_s, tokens_per_s, mfu, hfu,\n"
    "                tflops_per_gpu, memory, breakdown, stages (per-stage breakdown),\n"
    "                links, warnings, ...)\n"
    "  --timeline    with --json: include every op of the pipeline timeline\n"
    "  --balance-layers  replace layers_per_stage by a split balanced for the speed of\n"
    "                the buildings holding each stage (heterogeneous GPUs)\n"
    "  -o FILE       write the output to FILE (atomically) instead of stdout\n\n"
    "Exit codes: 0 ok, 2 bad input (file, JSON path and problem printed).\n";

const char* kTraceHelp =
    "Usage: scaleacross trace (SCENARIO.json | --cluster C --model M --plan P) -o FILE\n\n"
    "Writes the pipeline timeline (every forward, backward, weight-gradient op,\n"
    "P2P transfer and DP sync) in Chrome trace event format; open it in\n"
    "https://ui.perfetto.dev or chrome://tracing. One process per building,\n"
    "one thread per pipeline stage.\n\n"
    "Input:\n%s";

int evaluateOrTrace(int argc, char** argv, bool trace) {
    Args args(argc, argv, 2, {"json", "timeline", "help", "balance-layers"});
    if (args.has("help")) {
        std::printf(trace ? kTraceHelp : kEvaluateHelp, kScenarioUsage);
        return kExitOk;
    }
    if (!args.error().empty()) {
        std::fprintf(stderr, "scaleacross %s: %s\n", argv[1], args.error().c_str());
        return kExitBadInput;
    }
    const auto unknown = args.unknown(
        {"json", "timeline", "help", "balance-layers", "o", "output", "cluster", "model", "plan"});
    if (!unknown.empty()) {
        std::fprintf(stderr, "scaleacross %s: unknown option --%s (see --help)\n", argv[1],
                     unknown.front().c_str());
        return kExitBadInput;
    }
    auto scenario = loadScenarioArgs(args);
    if (!scenario)
        return kExitBadInput;
    auto out = args.value("o");
    if (!out)
        out = args.value("output");
    if (trace && !out) {
        std::fprintf(stderr, "scaleacross trace: -o FILE is required\n");
        return kExitBadInput;
    }
    if (args.has("balance-layers")) {
        if (!scenario->plan.placement)
            scenario->plan.placement = Placement{};
        scenario->plan.placement->layers_per_stage =
            balancedLayers(scenario->cluster, scenario->model, scenario->plan);
    }
    EvaluateOptions opts;
    opts.timeline = trace || args.has("timeline") || !args.has("json");
    opts.plan_file = planSourceName(args);
    const EvaluationResult result = sa::evaluate(*scenario, opts);
    if (const auto* err = std::get_if<EvaluationError>(&result)) {
        std::fprintf(stderr, "%s\n", err->str().c_str());
        return kExitBadInput;
    }
    const Evaluation& ev = std::get<Evaluation>(result);
    std::string text;
    if (trace)
        text = chromeTrace(ev, scenario->cluster).dump() + "\n";
    else if (args.has("json"))
        text = evaluationToJson(ev, args.has("timeline")).dump(2) + "\n";
    else {
        text = evaluationReport(ev, scenario->cluster);
        if (args.has("balance-layers")) {
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

} // namespace

int runEvaluate(int argc, char** argv) {
    return evaluateOrTrace(argc, argv, false);
}
int runTrace(int argc, char** argv) {
    return evaluateOrTrace(argc, argv, true);
}

} // namespace sa::cli

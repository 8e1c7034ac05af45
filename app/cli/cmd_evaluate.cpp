// scaleacross evaluate / trace

#include "commands.h"
#include "help_format.h"
#include "scenario_args.h"

#include "cost/balance.h"
#include "cost/evaluate.h"
#include "cost/jobs.h"
#include "export/chrome_trace.h"
#include "export/evaluation_json.h"
#include "formats/documents.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace sa::cli {

namespace {

struct EvaluateArgs {
    ScenarioInput input;
    bool json = false;
    bool timeline = false;
    bool balance_layers = false;
    std::optional<std::string> out;
    std::vector<std::string> alongside; // other jobs' scenario files on the same cluster
};

std::string fmt(const char* format, auto... values) {
    char buf[512];
    std::snprintf(buf, sizeof buf, format, values...);
    return buf;
}

// Several jobs on one cluster: each one's step time alone and with the
// others' traffic on the links they share, and those links.
std::string jobsReport(const Cluster& cluster, const JobsEvaluation& r, const JobsOptions& o) {
    std::string out = fmt("jobs on cluster '%s': mean-rate sharing of the inter-building links "
                          "and building uplinks, %s after %d sweep%s (tolerance %g)\n",
                          cluster.name.c_str(), r.converged ? "converged" : "NOT converged",
                          r.iterations, r.iterations == 1 ? "" : "s", o.tolerance);
    std::size_t width = 4;
    for (const JobOutcome& j : r.jobs)
        width = std::max(width, j.name.size());
    const int w = int(width);
    out += fmt("  %-*s  %12s  %12s  %8s\n", w, "job", "step alone", "step shared", "slower");
    for (const JobOutcome& j : r.jobs) {
        const double a = j.alone.step_time_s, s = j.shared.step_time_s;
        out += fmt("  %-*s  %10.4f s  %10.4f s  %+7.2f%%\n", w, j.name.c_str(), a, s,
                   a > 0 ? 100 * (s - a) / a : 0.0);
    }
    out += "shared links (each job's mean Gbit/s, a->b / b->a; uplinks: up / down):\n";
    for (const SharedLink& l : r.links) {
        out +=
            fmt("  %-22s %-15s capacity %.0f", l.name.c_str(), toString(l.tier), l.capacity_gbps);
        if (l.background_gbps > 0)
            out += fmt("  background %.0f", l.background_gbps);
        out += "\n";
        for (std::size_t j = 0; j < r.jobs.size(); ++j)
            if (l.job_gbps[j][0] > 0 || l.job_gbps[j][1] > 0)
                out += fmt("    %-*s  %9.3f / %9.3f Gbit/s\n", w, r.jobs[j].name.c_str(),
                           l.job_gbps[j][0], l.job_gbps[j][1]);
    }
    return out;
}

nlohmann::json jobsJson(const JobsEvaluation& r, const JobsOptions& o) {
    using nlohmann::json;
    json jobs = json::array();
    for (const JobOutcome& j : r.jobs)
        jobs.push_back({{"name", j.name},
                        {"step_time_s_alone", j.alone.step_time_s},
                        {"step_time_s_shared", j.shared.step_time_s},
                        {"tokens_per_s_alone", j.alone.tokens_per_s},
                        {"tokens_per_s_shared", j.shared.tokens_per_s},
                        {"mfu_alone", j.alone.mfu},
                        {"mfu_shared", j.shared.mfu},
                        {"gpus_per_building", j.gpus_per_building}});
    json links = json::array();
    for (const SharedLink& l : r.links) {
        json per = json::array();
        for (std::size_t j = 0; j < r.jobs.size(); ++j)
            per.push_back(
                {{"job", r.jobs[j].name}, {"gbps", {l.job_gbps[j][0], l.job_gbps[j][1]}}});
        links.push_back({{"name", l.name},
                         {"tier", toString(l.tier)},
                         {"capacity_gbps", l.capacity_gbps},
                         {"background_gbps", l.background_gbps},
                         {"jobs", per}});
    }
    return {{"sharing", "mean-rate"},
            {"converged", r.converged},
            {"iterations", r.iterations},
            {"tolerance", o.tolerance},
            {"jobs", jobs},
            {"links", links}};
}

int evaluateAlongside(const EvaluateArgs& args, const Scenario& scenario) {
    std::vector<Job> jobs{{planSourceName(args.input), scenario.model, scenario.plan}};
    for (const std::string& file : args.alongside) {
        auto loaded = loadScenarioFile(file);
        if (!loaded.ok()) {
            for (const auto& p : loaded.problems)
                std::fprintf(stderr, "%s\n", p.str().c_str());
            return kExitBadInput;
        }
        if (!(loaded.value->cluster == scenario.cluster)) {
            std::fprintf(stderr,
                         "scaleacross evaluate: %s: --alongside needs the same cluster as the "
                         "scenario evaluated (its cluster '%s' differs from '%s')\n",
                         file.c_str(), loaded.value->cluster.name.c_str(),
                         scenario.cluster.name.c_str());
            return kExitBadInput;
        }
        jobs.push_back({file, loaded.value->model, loaded.value->plan});
    }
    const JobsOptions options;
    const JobsResult result = evaluateJobs(scenario.cluster, jobs, options);
    if (const auto* err = std::get_if<EvaluationError>(&result)) {
        std::fprintf(stderr, "%s\n", err->str().c_str());
        return kExitBadInput;
    }
    const JobsEvaluation& r = std::get<JobsEvaluation>(result);
    return writeResult(args.out, args.json ? jobsJson(r, options).dump(2) + "\n"
                                           : jobsReport(scenario.cluster, r, options));
}

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
    if (!args.alongside.empty())
        return evaluateAlongside(args, *scenario);
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
    if (!trace)
        cmd.add_option("--alongside", args.alongside,
                       "other jobs' scenario files on the same cluster:\n"
                       "their traffic shares the inter-building links\n"
                       "and building uplinks (mean rates, iterated to\n"
                       "a fixed point); prints each job's step time\n"
                       "alone and shared, and the shared links")
            ->check(CLI::ExistingFile);
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
             "                            [--timeline] [--balance-layers] [-o FILE]\n"
             "                            [--alongside OTHER.json...]",
             "Predicts step time, tokens/s, MFU and HFU, memory per GPU, the step-time\n"
             "breakdown (compute, exposed TP/CP/EP/PP/DP communication, bubble) and the\n"
             "traffic on every link and tier of the cluster.\n"
             "With --alongside, the scenario and the other jobs run on one cluster (the\n"
             "same cluster document, each job on GPUs of its own): each job's traffic is\n"
             "background for the others on the inter-building links and building uplinks.",
             "Exit codes: 0 ok, 1 the output could not be written, 2 bad input (file,\n"
             "JSON path and problem printed; --alongside scenarios on another cluster;\n"
             "jobs that need more GPUs in a building than it has).");
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

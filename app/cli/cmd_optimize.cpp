// scaleacross optimize / merge

#include "commands.h"
#include "help_format.h"
#include "scenario_args.h"
#include "validators.h"

#include "cost/evaluate.h"
#include "explore/baselines.h"
#include "explore/optimizer.h"
#include "explore/results.h"
#include "explore/sweep.h"
#include "formats/documents.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <memory>

namespace sa::cli {

namespace {

int bad(const char* cmd, const std::string& msg) {
    std::fprintf(stderr, "scaleacross %s: %s\n", cmd, msg.c_str());
    return kExitBadInput;
}

struct OptimizeArgs {
    ScenarioInput input;
    OptimizerOptions opt;
    std::optional<std::string> shard;
    std::vector<std::string> set;
    std::vector<RoutingPolicy> routings;
    std::vector<int> diloco_steps, fragments;
    bool hsdp = false;
    bool no_baselines = false;
    bool json = false;
    std::optional<std::string> out;
};

struct MergeArgs {
    std::vector<std::string> shards;
    int top = 0; // 0: as the shards
    bool json = false;
    bool allow_partial = false;
    std::optional<std::string> out;
};

int runOptimize(OptimizeArgs args) {
    OptimizerOptions& opt = args.opt;
    if (args.shard) {
        const Shard shard = *parseShard(*args.shard); // checked by shardSpec()
        opt.shard_index = shard.index;
        opt.shard_count = shard.count;
    }
    opt.baselines = !args.no_baselines;
    for (RoutingPolicy p : args.routings) {
        Routing r;
        r.policy = p;
        opt.space.routings.push_back(r);
    }
    for (auto& sync : outerSyncChoices(args.diloco_steps, args.fragments, args.hsdp))
        opt.space.outer_syncs.push_back(std::move(sync));

    auto scenario = loadScenarioArgs(args.input, /*requirePlan=*/false);
    if (!scenario)
        return kExitBadInput;
    if (!args.input.hasPlan())
        scenario->plan = defaultBasePlan();
    for (const std::string& set : args.set) {
        const auto [path, value] = *parseAssignment(set); // checked by assignment()
        std::string err;
        auto changed = withValue(*scenario, path, value, &err);
        if (!changed)
            return bad("optimize", "--set " + set + ": " + err);
        scenario = std::move(changed);
    }
    const Plan base = scenario->plan;

    const bool tty = isatty(STDERR_FILENO) != 0;
    if (tty)
        opt.progress = [](std::int64_t done, std::int64_t total) {
            std::fprintf(stderr, "\r  %lld / %lld candidates", static_cast<long long>(done),
                         static_cast<long long>(total));
        };
    const Evaluator evaluator(scenario->cluster);
    const OptimizerResult result = optimize(evaluator, scenario->model, base, opt);
    if (tty)
        std::fprintf(stderr, "\r%60s\r", "");
    if (result.top.empty())
        std::fprintf(stderr, "scaleacross optimize: no feasible plan in %s\n",
                     opt.shard_count > 1 ? "this shard" : "the space");

    const std::string text = args.json ? toJson(result).dump(2) + "\n" : optimizerReport(result);
    if (const int code = writeResult(args.out, text); code != kExitOk)
        return code;
    return result.cancelled ? kExitFailure : kExitOk;
}

int runMerge(const MergeArgs& args) {
    if (args.shards.empty())
        return bad("merge", "give the shard results to merge (see --help)");
    const long long topK = args.top;
    std::vector<OptimizerResult> shards;
    for (const std::string& path : args.shards) {
        auto loaded = loadOptimizerResultFile(path);
        if (!loaded.ok()) {
            for (const Diagnostic& problem : loaded.problems)
                std::fprintf(stderr, "%s\n", problem.str().c_str());
            return kExitBadInput;
        }
        OptimizerResult& r = *loaded.value;
        if (!shards.empty()) {
            const OptimizerResult& f = shards.front();
            if (r.input_digest != f.input_digest || r.cluster != f.cluster || r.model != f.model ||
                r.objective != f.objective || r.space_size != f.space_size ||
                r.shard_count != f.shard_count)
                return bad("merge",
                           path + ": searched a different problem than " + args.shards.front() +
                               " (inputs, objective, space options or shard count differ)");
        }
        shards.push_back(std::move(r));
    }
    std::vector<std::string> problems;
    OptimizerResult merged = mergeResults(shards, &problems);
    for (const auto& p : problems)
        std::fprintf(stderr, "scaleacross merge: %s\n", p.c_str());
    if (!problems.empty() && !args.allow_partial)
        return kExitBadInput;
    if (topK > 0 && merged.top.size() > std::size_t(topK)) {
        merged.top.resize(std::size_t(topK));
        merged.top_k = int(topK);
    }
    const std::string text = args.json ? toJson(merged).dump(2) + "\n" : optimizerReport(merged);
    return writeResult(args.out, text);
}

} // namespace

void addOptimizeCommand(CLI::App& app, CommandRun& chosen) {
    auto args = std::make_shared<OptimizeArgs>();
    OptimizerOptions& opt = args->opt;
    CLI::App* cmd = app.add_subcommand(
        "optimize", "search the design space for the best plans (TBB, shardable)");
    describe(*cmd,
             "scaleacross optimize (SCENARIO.json | --cluster C --model M [--plan BASE])\n"
             "                            [--top K] [--threads N] [--objective OBJ] [--shard I/N]\n"
             "                            [--gpus N] [--space default|full] [--max-evaluations N]\n"
             "                            [--seeds N] [--set PATH=VALUE]... [--routing P,...]\n"
             "                            [--nccl-buffsize MIB,...] [--nccl-channels N,...]\n"
             "                            [--no-baselines]\n"
             "                            [--json] [-o FILE]",
             "Searches parallel degrees, micro batch, pipeline schedule, ZeRO stage, recompute,\n"
             "placement (which dimension crosses each building boundary, stages per building),\n"
             "layer split, DP collective algorithm, link technologies and, where allowed, NCCL\n"
             "buffers, channels and routing for the best plans.\n"
             "The base plan fixes the global batch, sequence length and GPU budget; without one\n"
             "the search uses 2,048 sequences of 8,192 tokens and the whole cluster.",
             "See docs/OPTIMIZER.md. Exit codes: 0 ok, 1 cancelled or I/O failure, 2 bad input.");
    addScenarioInput(*cmd, args->input, "the base plan (optional with --cluster and\n--model)");
    cmd->get_option("--plan")->type_name("BASE");
    cmd->add_option("--top", opt.top_k, "plans to keep (default 10)")
        ->type_name("K")
        ->transform(integerIn(1, 100000));
    cmd->add_option("--threads", opt.threads, "worker threads (default: all cores)")
        ->type_name("N")
        ->transform(integerIn(1, 4096));
    cmd->add_option("--objective", opt.objective,
                    "step-time (default), time-to-tokens,\n"
                    "time-to-loss, cost ($ for the run, or\n"
                    "GPU-seconds where the cluster has no\n"
                    "prices), energy or cross-building-bytes\n"
                    "(docs/RUN.md)")
        ->type_name("OBJ")
        ->transform(oneOf<Objective>([] {
            std::vector<std::pair<std::string, Objective>> m;
            for (Objective o : kAllObjectives)
                m.emplace_back(toString(o), o);
            return m;
        }()));
    cmd->add_option("--diloco", args->diloco_steps,
                    "DiLoCo inner steps H to try across\n"
                    "buildings (comma-separated): an outer-sync\n"
                    "axis beside synchronous DP")
        ->type_name("H,...")
        ->delimiter(',')
        ->transform(integerIn(1, 1000000));
    cmd->add_option("--streaming-fragments", args->fragments,
                    "Streaming DiLoCo fragment counts to try\n"
                    "with each --diloco H (comma-separated)")
        ->type_name("F,...")
        ->delimiter(',')
        ->transform(integerIn(1, 1000000));
    cmd->add_flag("--hsdp", args->hsdp,
                  "try HSDP (shard inside a building, replicate\n"
                  "across) beside synchronous DP");
    cmd->add_option("--shard", args->shard,
                    "search slice I of N (0-based); join the\n"
                    "slices with `scaleacross merge`")
        ->type_name("I/N")
        ->check(shardSpec());
    cmd->add_option("--gpus", opt.space.gpu_budget,
                    "GPU budget (default: the base plan's, else\nthe cluster's)")
        ->type_name("N")
        ->transform(integerIn(1, 100000000000LL, "a positive integer"));
    cmd->add_option("--space", opt.space.size,
                    "the default space has the usual choices per\n"
                    "axis; full adds CP 4/8, micro batches 4/8,\n"
                    "gpipe, interleaved v4, ZeRO-0, pp up to the\n"
                    "layers and every uneven stage split")
        ->type_name("default|full")
        ->transform(oneOf<SpaceSize>({{"default", SpaceSize::Default}, {"full", SpaceSize::Full}}));
    cmd->add_option("--max-evaluations", opt.max_evaluations,
                    "evaluation budget of the enumerated part\n"
                    "(default 150000); beyond it the staged\n"
                    "strategy (enumerate, then descend); for\n"
                    "Llama 3 405B on 98k GPUs ~1.5 s on two\n"
                    "cores; each baseline recipe is searched\n"
                    "with an eighth of it")
        ->type_name("N")
        ->transform(integerIn(1, 1000000000000LL, "a positive integer"));
    cmd->add_option("--seeds", opt.seeds, "starting points of the coordinate descent\n(default 6)")
        ->type_name("N")
        ->transform(integerIn(0, 10000));
    cmd->add_option("--set", args->set,
                    "change one number of the input first, as\n"
                    "`sweep --vary` names it (e.g.\n"
                    "links.B1-B3.bandwidth_gbps=2400); repeatable")
        ->type_name("PATH=VALUE")
        ->allow_extra_args(false)
        ->check(assignment());
    cmd->add_option("--routing", args->routings,
                    "routing policies the plans may ask for\n"
                    "(shortest-hops, lowest-latency, ecmp;\n"
                    "comma-separated): a search axis beside\n"
                    "the cluster's own routing")
        ->type_name("POLICY,...")
        ->delimiter(',')
        ->transform(oneOf<RoutingPolicy>({{"shortest-hops", RoutingPolicy::ShortestHops},
                                          {"lowest-latency", RoutingPolicy::LowestLatency},
                                          {"ecmp", RoutingPolicy::Ecmp}}));
    cmd->add_option("--nccl-buffsize", opt.space.nccl_buffsize_mib,
                    "NCCL_BUFFSIZE values (MiB) the link axes may\n"
                    "set where a transfer is window-limited")
        ->type_name("MIB,...")
        ->delimiter(',')
        ->check(CLI::PositiveNumber);
    cmd->add_option("--nccl-channels", opt.space.nccl_channels,
                    "NCCL_NCHANNELS_PER_NET_PEER values the link\n"
                    "axes may set where a transfer is window-\n"
                    "limited")
        ->type_name("N,...")
        ->delimiter(',')
        ->transform(integerIn(1, 64));
    cmd->add_flag("--no-baselines", args->no_baselines,
                  "skip the baselines (as given, production,\n"
                  "CrossPipe, Atlas, Megatron multi-DC), which\n"
                  "otherwise seed the search");
    cmd->add_flag("--json", args->json,
                  "machine-readable result (scaleacross.\n"
                  "optimizer-result); each plan in it is a\n"
                  "complete plan document");
    addOutputOption(*cmd, args->out);
    runWhenChosen(*cmd, chosen, [args] { return runOptimize(*args); });
}

void addMergeCommand(CLI::App& app, CommandRun& chosen) {
    auto args = std::make_shared<MergeArgs>();
    CLI::App* cmd = app.add_subcommand("merge", "join the results of sharded optimize runs");
    describe(*cmd, "scaleacross merge SHARD.json... [--top K] [--json] [-o FILE] [--allow-partial]",
             "Joins the results of `scaleacross optimize --shard I/N --json` runs: the top plans\n"
             "and the Pareto set are merged again, counts are summed and speedups recomputed.\n"
             "Shards must come from the same inputs and options (their input_digest); a missing\n"
             "or repeated shard is an error unless --allow-partial. Shards are read as strictly\n"
             "as the documents: an unknown, missing or mistyped key (or text that is not JSON)\n"
             "is reported with the file and its JSON path.",
             "Exit codes: 0 ok, 1 I/O failure, 2 bad input (an invalid shard, shards of\n"
             "different searches, missing or repeated shards).");
    cmd->add_option("SHARD.json", args->shards, "results of optimize --shard I/N --json")
        ->type_name("");
    cmd->add_option("--top", args->top, "keep at most K plans (default: as the shards)")
        ->type_name("K")
        ->transform(integerIn(1, 100000));
    cmd->add_flag("--json", args->json, "machine-readable result");
    addOutputOption(*cmd, args->out);
    cmd->add_flag("--allow-partial", args->allow_partial,
                  "merge what is there even if shards are missing");
    runWhenChosen(*cmd, chosen, [args] { return runMerge(*args); });
}

} // namespace sa::cli

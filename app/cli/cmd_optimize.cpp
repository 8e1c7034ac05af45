// scaleacross optimize / merge

#include "args.h"
#include "commands.h"
#include "scenario_args.h"

#include "cost/evaluate.h"
#include "explore/baselines.h"
#include "explore/optimizer.h"
#include "explore/results.h"
#include "explore/sweep.h"
#include "formats/documents.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace sa::cli {

namespace {

const char* kOptimizeHelp =
    "Usage: scaleacross optimize (SCENARIO.json | --cluster C --model M [--plan BASE])\n"
    "                            [--top K] [--threads N] [--objective OBJ] [--shard I/N]\n"
    "                            [--gpus N] [--space default|full] [--max-evaluations N]\n"
    "                            [--seeds N] [--set PATH=VALUE]... [--no-baselines]\n"
    "                            [--json] [-o FILE]\n\n"
    "Searches parallel degrees, micro batch, pipeline schedule, ZeRO stage, recompute,\n"
    "placement (which dimension crosses each building boundary, stages per building),\n"
    "layer split, DP collective algorithm and link technologies for the best plans.\n"
    "The base plan fixes the global batch, sequence length and GPU budget; without one\n"
    "the search uses 2,048 sequences of 8,192 tokens and the whole cluster.\n\n"
    "Input:\n%s"
    "  --plan BASE                the base plan (optional with --cluster/--model)\n\n"
    "Options:\n"
    "  --top K                    plans to keep (default 10)\n"
    "  --threads N                worker threads (default: all cores)\n"
    "  --objective OBJ            step-time (default), cost (GPU-seconds per step) or\n"
    "                             cross-building-bytes\n"
    "  --shard I/N                search slice I of N (0-based); join with `scaleacross merge`\n"
    "  --gpus N                   GPU budget (default: the base plan's, else the cluster's)\n"
    "  --space default|full       the default space has the usual choices per axis; full\n"
    "                             adds CP 4/8, micro batches 4/8, gpipe, interleaved v4,\n"
    "                             ZeRO-0, pp up to the layers and every uneven stage split\n"
    "  --max-evaluations N        evaluation budget of the enumerated part (default 150000);\n"
    "                             beyond it the staged strategy (enumerate, then descend);\n"
    "                             for Llama 3 405B on 98k GPUs ~1.5 s on two cores; each\n"
    "                             baseline recipe is searched with an eighth of it\n"
    "  --seeds N                  starting points of the coordinate descent (default 6)\n"
    "  --set PATH=VALUE           change one number of the input first, as `sweep --vary`\n"
    "                             names it (e.g. links.B1-B3.bandwidth_gbps=2400); repeatable\n"
    "  --no-baselines             skip the baselines (as given, production, CrossPipe,\n"
    "                             Atlas, Megatron multi-DC), which otherwise seed the search\n"
    "  --json                     machine-readable result (scaleacross.optimizer-result);\n"
    "                             each plan in it is a complete plan document\n"
    "  -o FILE                    write the output to FILE (atomically)\n\n"
    "See docs/OPTIMIZER.md. Exit codes: 0 ok, 1 cancelled or I/O failure, 2 bad input.\n";

const char* kMergeHelp =
    "Usage: scaleacross merge SHARD.json... [--top K] [--json] [-o FILE] [--allow-partial]\n\n"
    "Joins the results of `scaleacross optimize --shard I/N --json` runs: the top plans\n"
    "and the Pareto set are merged again, counts are summed and speedups recomputed.\n"
    "Shards must come from the same inputs and options (their input_digest); a missing\n"
    "or repeated shard is an error unless --allow-partial. Shards are read as strictly\n"
    "as the documents: an unknown, missing or mistyped key (or text that is not JSON)\n"
    "is reported with the file and its JSON path.\n\n"
    "Options:\n"
    "  --top K           keep at most K plans (default: as the shards)\n"
    "  --json            machine-readable result\n"
    "  -o FILE           write the output to FILE (atomically)\n"
    "  --allow-partial   merge what is there even if shards are missing\n\n"
    "Exit codes: 0 ok, 1 I/O failure, 2 bad input (an invalid shard, shards of\n"
    "different searches, missing or repeated shards).\n";

bool parseInt(const std::string& s, long long lo, long long hi, long long& out) {
    const char* b = s.data();
    const char* e = b + s.size();
    auto [p, ec] = std::from_chars(b, e, out);
    return ec == std::errc() && p == e && out >= lo && out <= hi;
}

int bad(const char* cmd, const std::string& msg) {
    std::fprintf(stderr, "scaleacross %s: %s\n", cmd, msg.c_str());
    return kExitBadInput;
}

std::optional<std::string> outputPath(const Args& args) {
    auto out = args.value("o");
    return out ? out : args.value("output");
}

} // namespace

int runOptimize(int argc, char** argv) {
    const std::set<std::string> flags{"json", "help", "no-baselines"};
    Args args(argc, argv, 2, flags);
    if (args.has("help")) {
        std::printf(kOptimizeHelp, kScenarioUsage);
        return kExitOk;
    }
    if (!args.error().empty())
        return bad("optimize", args.error());
    const auto unknown = args.unknown({"json", "help", "no-baselines", "o", "output", "cluster",
                                       "model", "plan", "top", "threads", "objective", "shard",
                                       "gpus", "space", "max-evaluations", "seeds", "set"});
    if (!unknown.empty())
        return bad("optimize", "unknown option --" + unknown.front() + " (see --help)");

    OptimizerOptions opt;
    long long v = 0;
    if (auto s = args.value("top")) {
        if (!parseInt(*s, 1, 100000, v))
            return bad("optimize", "--top: expected an integer from 1 to 100000, got '" + *s + "'");
        opt.top_k = int(v);
    }
    if (auto s = args.value("threads")) {
        if (!parseInt(*s, 1, 4096, v))
            return bad("optimize",
                       "--threads: expected an integer from 1 to 4096, got '" + *s + "'");
        opt.threads = int(v);
    }
    if (auto s = args.value("objective")) {
        const auto o = objectiveFromString(*s);
        if (!o)
            return bad("optimize", "--objective: expected step-time, cost or cross-building-bytes, "
                                   "got '" +
                                       *s + "'");
        opt.objective = *o;
    }
    if (auto s = args.value("shard")) {
        const auto slash = s->find('/');
        long long i = 0, n = 0;
        if (slash == std::string::npos || !parseInt(s->substr(0, slash), 0, 1000000, i) ||
            !parseInt(s->substr(slash + 1), 1, 1000000, n) || i >= n)
            return bad("optimize", "--shard: expected I/N with 0 <= I < N, got '" + *s + "'");
        opt.shard_index = int(i);
        opt.shard_count = int(n);
    }
    if (auto s = args.value("gpus")) {
        if (!parseInt(*s, 1, 100000000000LL, v))
            return bad("optimize", "--gpus: expected a positive integer, got '" + *s + "'");
        opt.space.gpu_budget = v;
    }
    if (auto s = args.value("space")) {
        if (*s == "default")
            opt.space.size = SpaceSize::Default;
        else if (*s == "full")
            opt.space.size = SpaceSize::Full;
        else
            return bad("optimize", "--space: expected default or full, got '" + *s + "'");
    }
    if (auto s = args.value("max-evaluations")) {
        if (!parseInt(*s, 1, 1000000000000LL, v))
            return bad("optimize",
                       "--max-evaluations: expected a positive integer, got '" + *s + "'");
        opt.max_evaluations = v;
    }
    if (auto s = args.value("seeds")) {
        if (!parseInt(*s, 0, 10000, v))
            return bad("optimize",
                       "--seeds: expected an integer from 0 to 10000, got '" + *s + "'");
        opt.seeds = int(v);
    }
    opt.baselines = !args.has("no-baselines");

    auto scenario = loadScenarioArgs(args, /*requirePlan=*/false);
    if (!scenario)
        return kExitBadInput;
    const bool haveBase = !args.positional().empty() || args.value("plan").has_value();
    if (!haveBase)
        scenario->plan = defaultBasePlan();
    for (const std::string& set : args.values("set")) {
        const auto eq = set.find('=');
        double value = 0;
        const std::string text = eq == std::string::npos ? std::string() : set.substr(eq + 1);
        char* end = nullptr;
        if (eq == std::string::npos || eq == 0 || text.empty() ||
            (value = std::strtod(text.c_str(), &end), *end != '\0'))
            return bad("optimize", "--set: expected PATH=NUMBER, got '" + set + "'");
        std::string err;
        auto changed = withValue(*scenario, set.substr(0, eq), value, &err);
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

    const std::string text =
        args.has("json") ? toJson(result).dump(2) + "\n" : optimizerReport(result);
    if (auto out = outputPath(args)) {
        if (!writeOutput(*out, text))
            return kExitFailure;
    } else {
        std::fputs(text.c_str(), stdout);
    }
    return result.cancelled ? kExitFailure : kExitOk;
}

int runMerge(int argc, char** argv) {
    const std::set<std::string> flags{"json", "help", "allow-partial"};
    Args args(argc, argv, 2, flags);
    if (args.has("help")) {
        std::fputs(kMergeHelp, stdout);
        return kExitOk;
    }
    if (!args.error().empty())
        return bad("merge", args.error());
    const auto unknown = args.unknown({"json", "help", "allow-partial", "o", "output", "top"});
    if (!unknown.empty())
        return bad("merge", "unknown option --" + unknown.front() + " (see --help)");
    if (args.positional().empty())
        return bad("merge", "give the shard results to merge (see --help)");
    long long topK = 0;
    if (auto s = args.value("top"); s && !parseInt(*s, 1, 100000, topK))
        return bad("merge", "--top: expected an integer from 1 to 100000, got '" + *s + "'");

    std::vector<OptimizerResult> shards;
    for (const std::string& path : args.positional()) {
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
                           path + ": searched a different problem than " +
                               args.positional().front() +
                               " (inputs, objective, space options or shard count differ)");
        }
        shards.push_back(std::move(r));
    }
    std::vector<std::string> problems;
    OptimizerResult merged = mergeResults(shards, &problems);
    for (const auto& p : problems)
        std::fprintf(stderr, "scaleacross merge: %s\n", p.c_str());
    if (!problems.empty() && !args.has("allow-partial"))
        return kExitBadInput;
    if (topK > 0 && merged.top.size() > std::size_t(topK)) {
        merged.top.resize(std::size_t(topK));
        merged.top_k = int(topK);
    }
    const std::string text =
        args.has("json") ? toJson(merged).dump(2) + "\n" : optimizerReport(merged);
    if (auto out = outputPath(args)) {
        if (!writeOutput(*out, text))
            return kExitFailure;
    } else {
        std::fputs(text.c_str(), stdout);
    }
    return kExitOk;
}

} // namespace sa::cli

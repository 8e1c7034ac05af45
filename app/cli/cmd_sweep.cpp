// scaleacross sweep

#include "commands.h"
#include "help_format.h"
#include "scenario_args.h"

#include "explore/sweep.h"
#include "explore/sweepseries.h"
#include "export/sweep_csv.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace sa::cli {

namespace {

// The series of computeSweepSeries: one object per series, its points in
// sweep order, each with its step time or the reason it has none.
nlohmann::json seriesJson(const std::string& path, const std::vector<SweepSeries>& series) {
    nlohmann::json list = nlohmann::json::array();
    for (const SweepSeries& s : series) {
        nlohmann::json points = nlohmann::json::array();
        for (std::size_t i = 0; i < s.x.size(); ++i) {
            nlohmann::json p{{"x", s.x[i]}};
            if (i < s.errors.size() && !s.errors[i].empty())
                p["error"] = s.errors[i];
            else
                p["step_time_s"] = s.step_time_s[i];
            points.push_back(std::move(p));
        }
        list.push_back({{"name", s.name},
                        {"fits_in_memory", s.fits_in_memory},
                        {"points", std::move(points)}});
    }
    return {{"path", path}, {"series", std::move(list)}};
}

struct SweepArgs {
    ScenarioInput input;
    std::vector<std::string> vary;
    bool csv = false; // the default
    bool json = false;
    bool baselines = false;
    std::optional<std::string> out;
};

int runSweep(const SweepArgs& args) {
    std::vector<SweepAxis> axes;
    for (const auto& spec : args.vary) {
        std::string err;
        auto axis = parseSweepAxis(spec, &err);
        if (!axis) {
            std::fprintf(stderr, "scaleacross sweep: %s\n", err.c_str());
            return kExitBadInput;
        }
        axes.push_back(*axis);
    }
    if (axes.empty() || axes.size() > 2) {
        std::fprintf(stderr, "scaleacross sweep: give one or two --vary PATH=RANGE (see --help)\n");
        return kExitBadInput;
    }
    const bool baselines = args.baselines;
    if (baselines && axes.size() != 1) {
        std::fprintf(stderr,
                     "scaleacross sweep: --baselines sweeps one parameter: give one --vary\n");
        return kExitBadInput;
    }
    auto scenario = loadScenarioArgs(args.input);
    if (!scenario)
        return kExitBadInput;
    // Check each path once on the base so a typo is an input error, not N rows of errors.
    for (const auto& a : axes) {
        std::string err;
        if (!withValue(*scenario, a.path, a.values.front(), &err) &&
            err.rfind("sweep path", 0) == 0) {
            std::fprintf(stderr, "scaleacross sweep: %s\n", err.c_str());
            return kExitBadInput;
        }
    }
    std::string text;
    if (baselines) {
        const SweepAxis& axis = axes.front();
        const auto series = computeSweepSeries(*scenario, axis.path, axis.values, true);
        text = args.json ? seriesJson(axis.path, series).dump(2) + "\n"
                         : sweepSeriesCsv(axis.path, series);
        return writeResult(args.out, text);
    }
    const auto points = sa::runSweep(*scenario, axes);
    if (args.json) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& p : points) {
            nlohmann::json row;
            for (std::size_t k = 0; k < axes.size(); ++k)
                row[axes[k].path] = p.values[k];
            if (p.evaluation) {
                const Evaluation& e = *p.evaluation;
                row["step_time_s"] = e.step_time_s;
                row["tokens_per_s"] = e.tokens_per_s;
                row["mfu"] = e.mfu;
                row["peak_gib_per_gpu"] = e.memory.peak_gib_per_gpu;
                row["fits"] = e.memory.fits;
                row["cross_building_bytes"] = e.cross_building_bytes;
                row["pp_exposed_s"] = e.breakdown.pp_exposed_s;
                row["dp_exposed_s"] = e.breakdown.dp_exposed_s;
                row["bubble_s"] = e.breakdown.bubble_s;
            } else {
                row["error"] = p.error;
            }
            rows.push_back(row);
        }
        text = rows.dump(2) + "\n";
    } else {
        text = sweepCsv(axes, points);
    }
    return writeResult(args.out, text);
}

} // namespace

void addSweepCommand(CLI::App& app, CommandRun& chosen) {
    auto args = std::make_shared<SweepArgs>();
    CLI::App* cmd = app.add_subcommand(
        "sweep", "vary one or two parameters over a range and print CSV or JSON");
    describe(
        *cmd,
        "scaleacross sweep (SCENARIO.json | --cluster C --model M --plan P)\n"
        "                         --vary PATH=RANGE [--vary PATH=RANGE] [--csv | --json] [-o "
        "FILE]\n"
        "       scaleacross sweep ... --vary PATH=RANGE --baselines [--csv | --json] [-o FILE]",
        "Evaluates the plan over a range of one or two parameters (their cartesian\n"
        "product) and prints one row per point: step time, tokens/s, MFU, memory,\n"
        "cross-building bytes and the exposed communication.\n\n"
        "PATH is a dotted path into the scenario; list elements by name:\n"
        "  links.B1-B3.bandwidth_gbps   links.B1-B3.latency_ms\n"
        "  plan.micro_batch_sequences   plan.parallelism.pp   plan.global_batch_sequences\n"
        "  cluster.buildings.B1.scale_out_gbps\n"
        "RANGE is one of:\n"
        "  A:B:log10[:N]   N points spaced evenly on a log scale (default 10)\n"
        "  A:B:lin[:N]     N points spaced evenly (default 10)\n"
        "  A:B:*F          A, A*F, A*F^2, ... up to B\n"
        "  A:B:+S          A, A+S, ... up to B\n"
        "  v1,v2,...       the listed values\n\n"
        "Output: CSV (default) or --json. Points that cannot be evaluated (e.g. degrees\n"
        "that no longer divide) keep their row with the reason in the 'error' column.",
        "Exit codes: 0 ok, 1 the output could not be written, 2 bad input.");
    addScenarioInput(*cmd, args->input);
    cmd->add_option("--vary", args->vary,
                    "the parameter to vary and its values; give it\ntwice for a grid")
        ->type_name("PATH=RANGE")
        ->allow_extra_args(false);
    cmd->add_flag("--csv", args->csv, "CSV output (the default)");
    cmd->add_flag("--json", args->json, "JSON output: one object per point");
    cmd->add_flag("--baselines", args->baselines,
                  "one parameter, for the plan and for the\n"
                  "production (Llama 3 recipe) and the best\n"
                  "prior-art baselines' plans, found once on\n"
                  "the unswept scenario and held fixed: the\n"
                  "series the explorer's sweep chart draws. CSV\n"
                  "columns series,PATH,step_time_s,error (as\n"
                  "the chart's Export CSV); --json gives {path,\n"
                  "series: [{name, fits_in_memory, points:\n"
                  "[{x, step_time_s or error}]}]}");
    addOutputOption(*cmd, args->out);
    runWhenChosen(*cmd, chosen, [args] { return runSweep(*args); });
}

} // namespace sa::cli

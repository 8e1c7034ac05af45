#include "export/optimizer_csv.h"

#include "export/csv.h"

#include <charconv>
#include <cstdint>

namespace sa {

namespace {

std::string number(double v) {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::string();
}

std::string number(std::optional<double> v) {
    return v ? number(*v) : std::string();
}

std::string integer(std::int64_t v) {
    return std::to_string(v);
}

std::string rankOrder(const Plan& p) {
    std::string s;
    for (Dim d : p.rank_order) {
        if (!s.empty())
            s += '-';
        s += toString(d);
    }
    return s;
}

std::string range(int first, int last) {
    return first == last ? std::to_string(first)
                         : std::to_string(first) + "-" + std::to_string(last);
}

// "B1[stages 0-4, replicas 0-767] B2[...]"; empty for the rank-order fill.
std::string placementRuns(const Plan& p) {
    if (!p.placement)
        return {};
    std::string s;
    for (const PlacementRun& r : p.placement->runs) {
        if (!s.empty())
            s += ' ';
        s += r.building + "[stages " + range(r.stage_first, r.stage_last) + ", replicas " +
             range(r.replica_first, r.replica_last) + "]";
    }
    return s;
}

std::string layersPerStage(const Plan& p) {
    if (!p.placement)
        return {};
    std::string s;
    for (int n : p.placement->layers_per_stage) {
        if (!s.empty())
            s += ' ';
        s += std::to_string(n);
    }
    return s;
}

// "B1-B3=roce-long-haul/16 B2-B3=tcp-multiflow" (flows when overridden).
std::string linkOverrides(const Plan& p) {
    std::string s;
    for (const auto& [name, o] : p.link_technologies) {
        if (!s.empty())
            s += ' ';
        s += name + "=" + (o.technology.empty() ? std::string("(cluster)") : o.technology);
        if (o.flows > 0)
            s += "/" + std::to_string(o.flows);
    }
    return s;
}

double tokensPerSecond(const Plan& p, double stepTimeS) {
    return stepTimeS > 0 ? double(p.global_batch_sequences) * double(p.sequence_length) / stepTimeS
                         : 0.0;
}

// The plan's own columns, from "tp" on.
void appendPlanColumns(std::vector<std::string>& row, const Plan& p) {
    row.push_back(integer(p.parallelism.tp));
    row.push_back(integer(p.parallelism.cp));
    row.push_back(integer(p.parallelism.pp));
    row.push_back(integer(p.parallelism.dp));
    row.push_back(integer(p.parallelism.ep));
    row.push_back(integer(p.parallelism.expertTp()));
    row.push_back(integer(p.micro_batch_sequences));
    row.push_back(integer(p.microbatches()));
    row.push_back(toString(p.schedule.kind));
    row.push_back(integer(p.schedule.virtual_stages));
    row.push_back(integer(p.zero_stage));
    row.push_back(toString(p.recompute));
    row.push_back(rankOrder(p));
    row.push_back(placementRuns(p));
    row.push_back(layersPerStage(p));
    row.push_back(toString(p.algoFor(Dim::DP)));
    row.push_back(linkOverrides(p));
}

void appendLine(std::string& out, const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
        if (i > 0)
            out += ',';
        out += csvField(row[i]);
    }
    out += "\r\n";
}

} // namespace

const std::vector<std::string>& optimizerCsvColumns() {
    static const std::vector<std::string> kColumns = {
        // What the row is.
        "kind", "rank", "name", "label", "feasible", "problem",
        // Its figures.
        "step_time_s", "speedup_vs_production", "speedup_vs_prior_art", "mfu", "tokens_per_s",
        "cross_building_bytes", "peak_gib_per_gpu", "gpus", "gpu_seconds", "pareto",
        // Its plan.
        "tp", "cp", "pp", "dp", "ep", "expert_tp", "micro_batch_sequences", "microbatches",
        "schedule", "virtual_stages", "zero_stage", "recompute", "rank_order", "placement",
        "layers_per_stage", "dp_collective", "link_technologies"};
    return kColumns;
}

std::optional<double> speedupOver(double stepTimeS, const BaselineResult& baseline) {
    if (!baseline.feasible || baseline.step_time_s <= 0 || stepTimeS <= 0)
        return std::nullopt;
    return baseline.step_time_s / stepTimeS - 1.0;
}

bool isOnParetoFront(const OptimizerResult& result, std::size_t topIndex) {
    if (topIndex >= result.top.size())
        return false;
    const Candidate& key = result.top[topIndex].key;
    for (const ScoredPlan& p : result.pareto)
        if (p.key == key)
            return true;
    return false;
}

const BaselineResult* findBaseline(const OptimizerResult& result, const std::string& name) {
    return findBaseline(result.baselines, name);
}

std::vector<std::size_t> paretoOnlyIndices(const OptimizerResult& result) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < result.pareto.size(); ++i) {
        bool inTop = false;
        for (const ScoredPlan& p : result.top)
            inTop = inTop || p.key == result.pareto[i].key;
        if (!inTop)
            out.push_back(i);
    }
    return out;
}

std::string optimizerCsv(const OptimizerResult& result, const OptimizerCsvOptions& options) {
    const BaselineResult* production = findBaseline(result, "production");
    const BaselineResult* priorArt = bestPriorArt(result.baselines);
    auto speedup = [](double step, const BaselineResult* b) {
        return b ? speedupOver(step, *b) : std::nullopt;
    };

    std::string out;
    appendLine(out, optimizerCsvColumns());
    std::vector<std::string> row;
    auto planRow = [&](const ScoredPlan& p, const char* kind, std::string rank, bool pareto) {
        row.clear();
        row.push_back(kind);
        row.push_back(std::move(rank));
        row.push_back(p.plan.name);
        row.push_back(p.label);
        row.push_back("true");
        row.push_back({});
        row.push_back(number(p.step_time_s));
        row.push_back(number(speedup(p.step_time_s, production)));
        row.push_back(number(speedup(p.step_time_s, priorArt)));
        row.push_back(number(p.mfu));
        row.push_back(number(p.tokens_per_s));
        row.push_back(number(p.cross_building_bytes));
        row.push_back(number(p.peak_gib_per_gpu));
        row.push_back(integer(p.gpus));
        row.push_back(number(p.gpu_seconds));
        row.push_back(pareto ? "true" : "false");
        appendPlanColumns(row, p.plan);
        appendLine(out, row);
    };
    for (std::size_t i = 0; i < result.top.size(); ++i)
        planRow(result.top[i], "top", integer(std::int64_t(i + 1)), isOnParetoFront(result, i));
    if (options.pareto_rows)
        for (std::size_t i : paretoOnlyIndices(result))
            planRow(result.pareto[i], "pareto", {}, true);
    for (const BaselineResult& b : result.baselines) {
        row.clear();
        row.push_back("baseline");
        row.push_back({});
        row.push_back(b.name);
        row.push_back(b.recipe);
        row.push_back(b.feasible ? "true" : "false");
        row.push_back(b.problem);
        if (b.feasible) {
            row.push_back(number(b.step_time_s));
            row.push_back(number(speedup(b.step_time_s, production)));
            row.push_back(number(speedup(b.step_time_s, priorArt)));
            row.push_back(number(b.mfu));
            row.push_back(number(tokensPerSecond(b.plan, b.step_time_s)));
            row.push_back(number(b.cross_building_bytes));
            row.push_back(number(b.peak_gib_per_gpu));
            row.push_back(integer(b.gpus));
            row.push_back(number(double(b.gpus) * b.step_time_s));
        } else {
            row.insert(row.end(), 9, std::string());
        }
        row.push_back({}); // pareto: the front holds searched plans only
        appendPlanColumns(row, b.plan);
        appendLine(out, row);
    }
    return out;
}

} // namespace sa

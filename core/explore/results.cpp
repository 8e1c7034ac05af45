#include "explore/results.h"

#include "formats/documents.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <stdexcept>

namespace sa {

namespace {

using nlohmann::json;

json keyJson(const Candidate& c) {
    return json{{"structure", c.structure}, {"choice", c.choice}};
}

json scoredJson(const ScoredPlan& p) {
    return json{{"key", keyJson(p.key)},
                {"label", p.label},
                {"step_time_s", p.step_time_s},
                {"cross_building_bytes", p.cross_building_bytes},
                {"gpu_seconds", p.gpu_seconds},
                {"gpus", p.gpus},
                {"mfu", p.mfu},
                {"tokens_per_s", p.tokens_per_s},
                {"peak_gib_per_gpu", p.peak_gib_per_gpu},
                {"plan", toJson(p.plan)}};
}

// Reading: a failed lookup throws with the JSON path in the message.
struct Reader {
    const std::string& file;

    const json& at(const json& j, const std::string& key, const std::string& path) const {
        if (!j.is_object() || !j.contains(key))
            throw std::runtime_error(path + "/" + key + ": missing");
        return j.at(key);
    }
    template <class T> T get(const json& j, const std::string& key, const std::string& path) const {
        const json& v = at(j, key, path);
        try {
            return v.get<T>();
        } catch (const json::exception&) {
            throw std::runtime_error(path + "/" + key + ": wrong type");
        }
    }
    Plan plan(const json& j, const std::string& path) const {
        Loaded<Plan> p = parsePlan(j.dump(), file + "#" + path);
        if (!p.ok())
            throw std::runtime_error(
                path + ": " + (p.problems.empty() ? "invalid plan" : p.problems.front().str()));
        return *p.value;
    }
    ScoredPlan scored(const json& j, const std::string& path) const {
        ScoredPlan p;
        const json& key = at(j, "key", path);
        p.key.structure = get<std::uint32_t>(key, "structure", path + "/key");
        p.key.choice = get<std::vector<std::uint16_t>>(key, "choice", path + "/key");
        p.label = get<std::string>(j, "label", path);
        p.step_time_s = get<double>(j, "step_time_s", path);
        p.cross_building_bytes = get<double>(j, "cross_building_bytes", path);
        p.gpu_seconds = get<double>(j, "gpu_seconds", path);
        p.gpus = get<std::int64_t>(j, "gpus", path);
        p.mfu = get<double>(j, "mfu", path);
        p.tokens_per_s = get<double>(j, "tokens_per_s", path);
        p.peak_gib_per_gpu = get<double>(j, "peak_gib_per_gpu", path);
        p.plan = plan(at(j, "plan", path), path + "/plan");
        return p;
    }
};

std::string bytesText(double b) {
    char buf[64];
    if (b >= 1e12)
        std::snprintf(buf, sizeof buf, "%.2f TB", b / 1e12);
    else if (b >= 1e9)
        std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
    else if (b >= 1e6)
        std::snprintf(buf, sizeof buf, "%.2f MB", b / 1e6);
    else
        std::snprintf(buf, sizeof buf, "%.0f B", b);
    return buf;
}

std::string planSummary(const Plan& p) {
    const Parallelism& g = p.parallelism;
    std::string s = "tp" + std::to_string(g.tp) + " cp" + std::to_string(g.cp) + " pp" +
                    std::to_string(g.pp) + " dp" + std::to_string(g.dp);
    if (g.ep > 1)
        s += " ep" + std::to_string(g.ep);
    s += " mb" + std::to_string(p.micro_batch_sequences) + ", " + toString(p.schedule.kind);
    if (p.schedule.kind == ScheduleKind::Interleaved)
        s += " v" + std::to_string(p.schedule.virtual_stages);
    s += ", zero" + std::to_string(p.zero_stage) + ", recompute " + toString(p.recompute) +
         ", rank order [";
    for (std::size_t i = 0; i < p.rank_order.size(); ++i)
        s += (i ? "," : "") + std::string(toString(p.rank_order[i]));
    s += "]";
    if (p.placement && !p.placement->runs.empty())
        s += ", " + std::to_string(p.placement->runs.size()) + " placement runs";
    s += ", dp collective ";
    s += toString(p.algoFor(Dim::DP));
    return s;
}

} // namespace

json toJson(const OptimizerResult& r) {
    json j;
    j["format"] = kOptimizerResultFormat;
    j["version"] = 1;
    j["cluster"] = r.cluster;
    j["model"] = r.model;
    j["input_digest"] = r.input_digest;
    j["objective"] = toString(r.objective);
    j["top_k"] = r.top_k;
    j["shard"] = {{"index", r.shard_index}, {"count", r.shard_count}};
    j["space"] = {
        {"gpu_budget", r.gpu_budget}, {"candidates", r.space_size}, {"structures", r.structures}};
    j["strategy"] = {{"name", r.strategy.name},
                     {"description", r.strategy.description},
                     {"enumerated_axes", r.strategy.enumerated_axes},
                     {"descent_axes", r.strategy.descent_axes},
                     {"seeds", r.strategy.seeds},
                     {"rounds", r.strategy.rounds}};
    json pruned = json::object();
    for (const auto& [why, n] : r.pruned)
        pruned[why] = n;
    j["counts"] = {{"enumerated", r.enumerated},
                   {"evaluated", r.evaluated},
                   {"feasible", r.feasible},
                   {"pruned_total", r.prunedTotal()},
                   {"pruned", pruned}};
    j["elapsed_s"] = r.elapsed_s;
    j["search_s"] = r.search_s;
    j["evaluations_per_s"] = r.evaluations_per_s;
    j["threads"] = r.threads;
    j["cancelled"] = r.cancelled;
    json baselines = json::array();
    for (const BaselineResult& b : r.baselines) {
        json x{{"name", b.name},
               {"recipe", b.recipe},
               {"feasible", b.feasible},
               {"problem", b.problem},
               {"step_time_s", b.step_time_s},
               {"cross_building_bytes", b.cross_building_bytes},
               {"mfu", b.mfu},
               {"peak_gib_per_gpu", b.peak_gib_per_gpu},
               {"gpus", b.gpus},
               {"plan", toJson(b.plan)}};
        const auto s = r.speedupOver(b);
        x["speedup"] = s ? json(*s) : json(nullptr);
        baselines.push_back(std::move(x));
    }
    j["baselines"] = std::move(baselines);
    json top = json::array(), pareto = json::array();
    for (const ScoredPlan& p : r.top)
        top.push_back(scoredJson(p));
    for (const ScoredPlan& p : r.pareto)
        pareto.push_back(scoredJson(p));
    j["top"] = std::move(top);
    j["pareto"] = std::move(pareto);
    return j;
}

std::optional<OptimizerResult> optimizerResultFromJson(const json& j, const std::string& file,
                                                       std::string* error) {
    const Reader rd{file};
    try {
        if (rd.get<std::string>(j, "format", "") != kOptimizerResultFormat)
            throw std::runtime_error(std::string("/format: not \"") + kOptimizerResultFormat +
                                     "\"");
        if (rd.get<int>(j, "version", "") != 1)
            throw std::runtime_error("/version: unsupported (this build reads version 1)");
        OptimizerResult r;
        r.cluster = rd.get<std::string>(j, "cluster", "");
        r.model = rd.get<std::string>(j, "model", "");
        r.input_digest = rd.get<std::string>(j, "input_digest", "");
        const auto obj = objectiveFromString(rd.get<std::string>(j, "objective", ""));
        if (!obj)
            throw std::runtime_error("/objective: unknown objective");
        r.objective = *obj;
        r.top_k = rd.get<int>(j, "top_k", "");
        const json& shard = rd.at(j, "shard", "");
        r.shard_index = rd.get<int>(shard, "index", "/shard");
        r.shard_count = rd.get<int>(shard, "count", "/shard");
        const json& space = rd.at(j, "space", "");
        r.gpu_budget = rd.get<std::int64_t>(space, "gpu_budget", "/space");
        r.space_size = rd.get<double>(space, "candidates", "/space");
        r.structures = rd.get<std::int64_t>(space, "structures", "/space");
        const json& st = rd.at(j, "strategy", "");
        r.strategy.name = rd.get<std::string>(st, "name", "/strategy");
        r.strategy.description = rd.get<std::string>(st, "description", "/strategy");
        r.strategy.enumerated_axes =
            rd.get<std::vector<std::string>>(st, "enumerated_axes", "/strategy");
        r.strategy.descent_axes = rd.get<std::vector<std::string>>(st, "descent_axes", "/strategy");
        r.strategy.seeds = rd.get<int>(st, "seeds", "/strategy");
        r.strategy.rounds = rd.get<int>(st, "rounds", "/strategy");
        const json& counts = rd.at(j, "counts", "");
        r.enumerated = rd.get<std::int64_t>(counts, "enumerated", "/counts");
        r.evaluated = rd.get<std::int64_t>(counts, "evaluated", "/counts");
        r.feasible = rd.get<std::int64_t>(counts, "feasible", "/counts");
        r.pruned = rd.get<std::map<std::string, std::int64_t>>(counts, "pruned", "/counts");
        r.elapsed_s = rd.get<double>(j, "elapsed_s", "");
        r.search_s = rd.get<double>(j, "search_s", "");
        r.evaluations_per_s = rd.get<double>(j, "evaluations_per_s", "");
        r.threads = rd.get<int>(j, "threads", "");
        r.cancelled = rd.get<bool>(j, "cancelled", "");
        const json& bl = rd.at(j, "baselines", "");
        for (std::size_t i = 0; i < bl.size(); ++i) {
            const std::string path = "/baselines/" + std::to_string(i);
            const json& x = bl.at(i);
            BaselineResult b;
            b.name = rd.get<std::string>(x, "name", path);
            b.recipe = rd.get<std::string>(x, "recipe", path);
            b.feasible = rd.get<bool>(x, "feasible", path);
            b.problem = rd.get<std::string>(x, "problem", path);
            b.step_time_s = rd.get<double>(x, "step_time_s", path);
            b.cross_building_bytes = rd.get<double>(x, "cross_building_bytes", path);
            b.mfu = rd.get<double>(x, "mfu", path);
            b.peak_gib_per_gpu = rd.get<double>(x, "peak_gib_per_gpu", path);
            b.gpus = rd.get<std::int64_t>(x, "gpus", path);
            b.plan = rd.plan(rd.at(x, "plan", path), path + "/plan");
            r.baselines.push_back(std::move(b));
        }
        for (const char* list : {"top", "pareto"}) {
            const json& arr = rd.at(j, list, "");
            if (!arr.is_array())
                throw std::runtime_error(std::string("/") + list + ": must be an array");
            for (std::size_t i = 0; i < arr.size(); ++i) {
                ScoredPlan p =
                    rd.scored(arr.at(i), std::string("/") + list + "/" + std::to_string(i));
                (std::string(list) == "top" ? r.top : r.pareto).push_back(std::move(p));
            }
        }
        return r;
    } catch (const std::exception& e) {
        if (error)
            *error = file + ": " + e.what();
        return std::nullopt;
    }
}

std::string optimizerReport(const OptimizerResult& r) {
    std::string out;
    char buf[512];
    auto line = [&](const char* fmt, auto... args) {
        std::snprintf(buf, sizeof buf, fmt, args...);
        out += buf;
    };
    line("Optimizer: %s on %s, objective %s", r.model.c_str(), r.cluster.c_str(),
         toString(r.objective));
    if (r.shard_count > 1)
        line(", shard %d/%d", r.shard_index, r.shard_count);
    line("\n  GPU budget %lld, %lld structures, %.4g candidates in the space\n",
         static_cast<long long>(r.gpu_budget), static_cast<long long>(r.structures), r.space_size);
    line("  strategy: %s (%s)\n", r.strategy.name.c_str(), r.strategy.description.c_str());
    if (!r.strategy.descent_axes.empty()) {
        std::string e, d;
        for (const auto& a : r.strategy.enumerated_axes)
            e += (e.empty() ? "" : ", ") + a;
        for (const auto& a : r.strategy.descent_axes)
            d += (d.empty() ? "" : ", ") + a;
        line("    enumerated: structure%s%s\n", e.empty() ? "" : ", ", e.c_str());
        line("    by descent only: %s (%d seeds, %d rounds)\n", d.c_str(), r.strategy.seeds,
             r.strategy.rounds);
    }
    line("  %lld candidates considered, %lld evaluated, %lld feasible, %lld pruned\n",
         static_cast<long long>(r.enumerated), static_cast<long long>(r.evaluated),
         static_cast<long long>(r.feasible), static_cast<long long>(r.prunedTotal()));
    for (const auto& [why, n] : r.pruned)
        line("    %9lld  %s\n", static_cast<long long>(n), why.c_str());
    line("  %.2f s (search %.2f s) on %d threads, %.0f evaluations/s%s\n", r.elapsed_s, r.search_s,
         r.threads, r.evaluations_per_s, r.cancelled ? ", CANCELLED" : "");

    if (!r.baselines.empty()) {
        out += "\nBaselines (speedup = baseline step time / best step time - 1):\n";
        for (const BaselineResult& b : r.baselines) {
            if (!b.feasible) {
                line("  %-11s infeasible: %s\n", b.name.c_str(), b.problem.c_str());
                continue;
            }
            const auto s = r.speedupOver(b);
            line("  %-11s %8.3f s  %10s across buildings  MFU %5.1f%%  speedup %+.2f%%\n",
                 b.name.c_str(), b.step_time_s, bytesText(b.cross_building_bytes).c_str(),
                 100 * b.mfu, s ? 100 * *s : 0.0);
            line("              %s\n", b.recipe.c_str());
            line("              %s\n", planSummary(b.plan).c_str());
        }
    }

    out += "\nTop plans:\n";
    for (std::size_t i = 0; i < r.top.size(); ++i) {
        const ScoredPlan& p = r.top[i];
        line("  %2zu. %8.3f s  %10s across  %6lld GPUs  MFU %5.1f%%  %5.1f GiB  %s\n", i + 1,
             p.step_time_s, bytesText(p.cross_building_bytes).c_str(),
             static_cast<long long>(p.gpus), 100 * p.mfu, p.peak_gib_per_gpu, p.label.c_str());
    }
    out += "\nPareto set (step time vs cross-building bytes):\n";
    for (const ScoredPlan& p : r.pareto)
        line("  %8.3f s  %10s  %s\n", p.step_time_s, bytesText(p.cross_building_bytes).c_str(),
             p.label.c_str());
    return out;
}

} // namespace sa

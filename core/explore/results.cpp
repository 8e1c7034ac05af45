#include "explore/results.h"

#include "formats/documents.h"
#include "formats/json_check.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <utility>
#include <vector>

namespace sa {

namespace {

using nlohmann::json;

json keyJson(const Candidate& c) {
    return json{{"structure", c.structure}, {"choice", c.choice}};
}

json runJson(const RunScores& r) {
    return json{{"time_to_tokens_s", r.time_to_tokens_s},
                {"time_to_loss_s", r.time_to_loss_s},
                {"cost", r.cost},
                {"energy_kwh", r.energy_kwh},
                {"goodput", r.goodput}};
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
                {"run", runJson(p.run)},
                {"plan", toJson(p.plan)}};
}

// ---- reading ------------------------------------------------------------

using formats::childPath;
using formats::describe;
using formats::Diagnostics;
using formats::IntRange;
using formats::ObjectReader;
constexpr formats::Presence kRequired = formats::Presence::Required;
constexpr formats::Presence kOptional = formats::Presence::Optional;

constexpr IntRange kCountRange{0, std::numeric_limits<std::int64_t>::max()};
constexpr IntRange kSmallCountRange{0, std::numeric_limits<int>::max()};
constexpr IntRange kStructureRange{0, std::numeric_limits<std::uint32_t>::max(), true};
constexpr IntRange kChoiceRange{0, std::numeric_limits<std::uint16_t>::max(), true};

// Reads one result into `d`; the plans inside it, each read as a plan
// document of its own, report into `plans` (their paths carry the prefix of
// where they sit).
class ResultReader {
public:
    ResultReader(Diagnostics& d, std::vector<Diagnostic>& plans)
        : d_(d)
        , plans_(plans) {}

    OptimizerResult read(const json& j) {
        OptimizerResult r;
        if (!formats::requireObject(d_, j, ""))
            return r;
        ObjectReader o(d_, &j, "");
        if (!header(o))
            return r;
        o.string("cluster", r.cluster, kRequired, false);
        o.string("model", r.model, kRequired, false);
        o.string("input_digest", r.input_digest, kRequired, false);
        o.choice<Objective>("objective", r.objective, kRequired, objectives());
        o.integer("top_k", r.top_k, kRequired, kSmallCountRange);
        ObjectReader shard = o.object("shard", kRequired);
        shard.integer("index", r.shard_index, kRequired, kSmallCountRange);
        shard.integer("count", r.shard_count, kRequired, IntRange{});
        if (shard.valid() && !d_.touched(shard.path()) && r.shard_index >= r.shard_count)
            d_.error(shard.pathOf("index"), "must be less than /shard/count (" +
                                                std::to_string(r.shard_count) + "), got " +
                                                std::to_string(r.shard_index));
        shard.finish();
        ObjectReader space = o.object("space", kRequired);
        space.integer("gpu_budget", r.gpu_budget, kRequired, kCountRange);
        space.number("candidates", r.space_size, kRequired, formats::kNonNegative);
        space.integer("structures", r.structures, kRequired, kCountRange);
        space.finish();
        ObjectReader st = o.object("strategy", kRequired);
        st.string("name", r.strategy.name, kRequired, true);
        st.string("description", r.strategy.description, kRequired, false);
        strings(st, "enumerated_axes", r.strategy.enumerated_axes);
        strings(st, "descent_axes", r.strategy.descent_axes);
        st.integer("seeds", r.strategy.seeds, kRequired, kSmallCountRange);
        st.integer("rounds", r.strategy.rounds, kRequired, kSmallCountRange);
        st.finish();
        counts(o, r);
        o.number("elapsed_s", r.elapsed_s, kRequired, formats::kNonNegative);
        o.number("search_s", r.search_s, kRequired, formats::kNonNegative);
        o.number("evaluations_per_s", r.evaluations_per_s, kRequired, formats::kNonNegative);
        o.integer("threads", r.threads, kRequired, kSmallCountRange);
        o.boolean("cancelled", r.cancelled, kRequired);
        strings(o, "seeded", r.seeded);
        strings(o, "seeds_not_in_space", r.seeds_not_in_space);
        o.number("coverage", r.coverage, kRequired, formats::kNonNegative);
        ObjectReader lb = o.object("lower_bound", kRequired);
        lb.number("model_flops_per_step", r.lower_bound.model_flops_per_step, kRequired,
                  formats::kNonNegative);
        lb.number("compute_s", r.lower_bound.compute_s, kRequired, formats::kNonNegative);
        lb.number("traffic_bytes", r.lower_bound.traffic_bytes, kRequired, formats::kNonNegative);
        lb.number("traffic_s", r.lower_bound.traffic_s, kRequired, formats::kNonNegative);
        double step = 0; // written for readers; recomputed
        lb.number("step_s", step, kRequired, formats::kNonNegative);
        lb.finish();
        objects(o, "baselines", [&](ObjectReader& x) { r.baselines.push_back(baseline(x)); });
        objects(o, "top", [&](ObjectReader& x) { r.top.push_back(scored(x)); });
        objects(o, "pareto", [&](ObjectReader& x) { r.pareto.push_back(scored(x)); });
        o.finish();
        return r;
    }

private:
    static std::vector<std::pair<std::string, Objective>> objectives() {
        std::vector<std::pair<std::string, Objective>> out;
        for (Objective x : kAllObjectives)
            out.emplace_back(toString(x), x);
        return out;
    }

    // "format" and "version"; false when the rest should not be read
    // (another kind of file or another version: its keys would be noise).
    bool header(ObjectReader& o) {
        const json* f = o.find("format", kRequired);
        if (f && (!f->is_string() || f->get_ref<const std::string&>() != kOptimizerResultFormat)) {
            d_.error(o.pathOf("format"),
                     std::string("must be '") + kOptimizerResultFormat + "', got " + describe(*f));
            return false;
        }
        const json* v = o.find("version", kRequired);
        const std::string supported =
            "supported versions: " + std::to_string(kOptimizerResultVersion);
        if (v && !v->is_number_integer()) {
            d_.error(o.pathOf("version"),
                     "must be an integer (" + supported + "), got " + describe(*v));
            return false;
        }
        if (v && v->get<std::int64_t>() != kOptimizerResultVersion) {
            d_.error(o.pathOf("version"),
                     "unsupported version " + describe(*v) + " (" + supported + ")");
            return false;
        }
        return true;
    }

    void counts(ObjectReader& o, OptimizerResult& r) {
        ObjectReader c = o.object("counts", kRequired);
        c.integer("enumerated", r.enumerated, kRequired, kCountRange);
        c.integer("evaluated", r.evaluated, kRequired, kCountRange);
        c.integer("feasible", r.feasible, kRequired, kCountRange);
        ObjectReader pruned = c.object("pruned", kRequired);
        if (pruned.valid()) {
            // Keyed by reason: every key is one, none is unknown.
            for (const auto& [why, value] : pruned.node()->items()) {
                std::int64_t n = 0;
                if (ObjectReader::readInteger(value, pruned.pathOf(why), kCountRange, d_, n))
                    r.pruned[why] = n;
            }
        }
        std::int64_t total = 0;
        if (c.integer("pruned_total", total, kRequired, kCountRange) && pruned.valid() &&
            !d_.touched(pruned.path()) && total != r.prunedTotal())
            d_.error(c.pathOf("pruned_total"), "must be the sum of " + pruned.path() + " (" +
                                                   std::to_string(r.prunedTotal()) + "), got " +
                                                   std::to_string(total));
        c.finish();
    }

    void strings(ObjectReader& o, const char* key, std::vector<std::string>& out) {
        const json* a = o.array(key, kRequired);
        if (!a)
            return;
        for (std::size_t i = 0; i < a->size(); ++i) {
            const json& v = (*a)[i];
            if (v.is_string())
                out.push_back(v.get<std::string>());
            else
                d_.error(childPath(o.pathOf(key), i), "must be a string, got " + describe(v));
        }
    }

    // Each element of the array `key`, which must be an object.
    template <class F> void objects(ObjectReader& o, const char* key, F readOne) {
        const json* a = o.array(key, kRequired);
        if (!a)
            return;
        for (std::size_t i = 0; i < a->size(); ++i) {
            const std::string at = childPath(o.pathOf(key), i);
            if (!formats::requireObject(d_, (*a)[i], at))
                continue;
            ObjectReader x(d_, &(*a)[i], at);
            readOne(x);
            x.finish();
        }
    }

    Plan plan(ObjectReader& o) {
        const json* v = o.find("plan", kRequired);
        if (!v)
            return {};
        Diagnostics d(d_.file(), o.pathOf("plan"));
        Plan p = formats::readPlanDocument(*v, d);
        const auto found = d.take();
        plans_.insert(plans_.end(), found.begin(), found.end());
        return p;
    }

    // "run" (optional: results written before it had one read as zeros,
    // goodput 1).
    RunScores readRun(ObjectReader& o) {
        RunScores r;
        ObjectReader run = o.object("run", kOptional);
        if (run.valid()) {
            run.number("time_to_tokens_s", r.time_to_tokens_s, kOptional, formats::kNonNegative);
            run.number("time_to_loss_s", r.time_to_loss_s, kOptional, formats::kNonNegative);
            run.number("cost", r.cost, kOptional, formats::kNonNegative);
            run.number("energy_kwh", r.energy_kwh, kOptional, formats::kNonNegative);
            run.number("goodput", r.goodput, kOptional, formats::kNonNegative);
            run.finish();
        }
        return r;
    }

    BaselineResult baseline(ObjectReader& o) {
        BaselineResult b;
        o.string("name", b.name, kRequired, true);
        o.string("title", b.title, kRequired, false);
        o.string("recipe", b.recipe, kRequired, false);
        o.string("source", b.source, kRequired, false);
        o.boolean("prior_art", b.prior_art, kRequired);
        o.boolean("feasible", b.feasible, kRequired);
        o.string("problem", b.problem, kRequired, false);
        o.number("step_time_s", b.step_time_s, kRequired, formats::kNonNegative);
        o.number("cross_building_bytes", b.cross_building_bytes, kRequired, formats::kNonNegative);
        o.number("mfu", b.mfu, kRequired, formats::kNonNegative);
        o.number("peak_gib_per_gpu", b.peak_gib_per_gpu, kRequired, formats::kNonNegative);
        o.integer("gpus", b.gpus, kRequired, kCountRange);
        // Written for readers of the file; recomputed from the top plan.
        if (const json* s = o.find("speedup", kRequired); s && !s->is_number() && !s->is_null())
            d_.error(o.pathOf("speedup"), "must be a number or null, got " + describe(*s));
        b.run = readRun(o);
        b.plan = plan(o);
        return b;
    }

    ScoredPlan scored(ObjectReader& o) {
        ScoredPlan p;
        ObjectReader key = o.object("key", kRequired);
        key.integer("structure", p.key.structure, kRequired, kStructureRange);
        if (const json* choice = key.array("choice", kRequired)) {
            for (std::size_t i = 0; i < choice->size(); ++i) {
                std::int64_t c = 0;
                if (ObjectReader::readInteger((*choice)[i], childPath(key.pathOf("choice"), i),
                                              kChoiceRange, d_, c))
                    p.key.choice.push_back(static_cast<std::uint16_t>(c));
            }
        }
        key.finish();
        o.string("label", p.label, kRequired, false);
        o.number("step_time_s", p.step_time_s, kRequired, formats::kNonNegative);
        o.number("cross_building_bytes", p.cross_building_bytes, kRequired, formats::kNonNegative);
        o.number("gpu_seconds", p.gpu_seconds, kRequired, formats::kNonNegative);
        o.integer("gpus", p.gpus, kRequired, kCountRange);
        o.number("mfu", p.mfu, kRequired, formats::kNonNegative);
        o.number("tokens_per_s", p.tokens_per_s, kRequired, formats::kNonNegative);
        o.number("peak_gib_per_gpu", p.peak_gib_per_gpu, kRequired, formats::kNonNegative);
        p.run = readRun(o);
        p.plan = plan(o);
        return p;
    }

    Diagnostics& d_;
    std::vector<Diagnostic>& plans_;
};

// readTextFile's message names the path; the diagnostic names it already.
Diagnostic fileProblem(const std::string& path, const std::string& error) {
    const std::string prefix = "cannot read '" + path + "': ";
    if (error.rfind(prefix, 0) == 0)
        return {path, "", "cannot read file: " + error.substr(prefix.size())};
    return {path, "", error};
}

Loaded<OptimizerResult> readResult(const json& j, Diagnostics& d) {
    std::vector<Diagnostic> planProblems;
    OptimizerResult r = ResultReader(d, planProblems).read(j);
    Loaded<OptimizerResult> out;
    if (d.empty() && planProblems.empty())
        out.value = std::move(r);
    out.problems = d.take();
    out.problems.insert(out.problems.end(), planProblems.begin(), planProblems.end());
    return out;
}

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
    if (g.expertTp() != g.tp)
        s += " etp" + std::to_string(g.expertTp());
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

static std::vector<std::string> labelParts(const std::string& label) {
    std::vector<std::string> parts;
    std::size_t at = 0;
    while (at <= label.size()) {
        const std::size_t bar = label.find(" | ", at);
        parts.push_back(label.substr(at, bar == std::string::npos ? std::string::npos : bar - at));
        if (bar == std::string::npos)
            break;
        at = bar + 3;
    }
    return parts;
}

std::string labelDifference(const ScoredPlan& best, const ScoredPlan& p) {
    const std::vector<std::string> a = labelParts(best.label), b = labelParts(p.label);
    std::string out;
    auto add = [&](const std::string& x) { out += (out.empty() ? "" : " | ") + x; };
    for (const std::string& x : b)
        if (std::find(a.begin(), a.end(), x) == a.end())
            add(x);
    // A link the best plan sets that this one leaves as built.
    for (const auto& [link, setting] : best.plan.link_technologies)
        if (!p.plan.link_technologies.count(link))
            add(link + " as built");
    return out.empty() ? "the same settings" : out;
}

json toJson(const OptimizerResult& r) {
    json j;
    j["format"] = kOptimizerResultFormat;
    j["version"] = kOptimizerResultVersion;
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
    j["seeded"] = r.seeded;
    j["seeds_not_in_space"] = r.seeds_not_in_space;
    j["coverage"] = r.coverage;
    j["lower_bound"] = {{"model_flops_per_step", r.lower_bound.model_flops_per_step},
                        {"compute_s", r.lower_bound.compute_s},
                        {"traffic_bytes", r.lower_bound.traffic_bytes},
                        {"traffic_s", r.lower_bound.traffic_s},
                        {"step_s", r.lower_bound.step_s()}};
    json baselines = json::array();
    for (const BaselineResult& b : r.baselines) {
        json x{{"name", b.name},
               {"title", b.title},
               {"recipe", b.recipe},
               {"source", b.source},
               {"prior_art", b.prior_art},
               {"feasible", b.feasible},
               {"problem", b.problem},
               {"step_time_s", b.step_time_s},
               {"cross_building_bytes", b.cross_building_bytes},
               {"mfu", b.mfu},
               {"peak_gib_per_gpu", b.peak_gib_per_gpu},
               {"gpus", b.gpus},
               {"run", runJson(b.run)},
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

Loaded<OptimizerResult> optimizerResultFromJson(const json& j, const std::string& file) {
    Diagnostics d(file);
    return readResult(j, d);
}

Loaded<OptimizerResult> parseOptimizerResult(const std::string& text, const std::string& file) {
    Diagnostics d(file);
    if (auto j = formats::parseJsonText(text, d))
        return readResult(*j, d);
    Loaded<OptimizerResult> out;
    out.problems = d.take();
    return out;
}

Loaded<OptimizerResult> loadOptimizerResultFile(const std::string& path) {
    std::string error;
    const auto text = readTextFile(path, &error);
    if (!text) {
        Loaded<OptimizerResult> out;
        out.problems.push_back(fileProblem(path, error));
        return out;
    }
    return parseOptimizerResult(*text, path);
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
    line("  covered %.3g%% of the space (%lld of %.4g candidates looked at)\n", 100 * r.coverage,
         static_cast<long long>(r.enumerated), r.space_size);
    if (!r.seeded.empty() || !r.seeds_not_in_space.empty()) {
        std::string s, m;
        for (const auto& x : r.seeded)
            s += (s.empty() ? "" : ", ") + x;
        for (const auto& x : r.seeds_not_in_space)
            m += (m.empty() ? "" : ", ") + x;
        line("  seeded with: %s%s%s\n", s.empty() ? "-" : s.c_str(),
             m.empty() ? "" : "; not in the space: ", m.c_str());
    }
    line("  %.2f s (search %.2f s) on %d threads, %.0f evaluations/s%s\n", r.elapsed_s, r.search_s,
         r.threads, r.evaluations_per_s, r.cancelled ? ", CANCELLED" : "");

    if (!r.baselines.empty()) {
        out += "\nBaselines (speedup = baseline step time / best step time - 1):\n";
        for (const BaselineResult& b : r.baselines) {
            if (!b.feasible) {
                line("  %-17s infeasible: %s\n", b.name.c_str(), b.problem.c_str());
                line("      %s\n", b.title.c_str());
                continue;
            }
            const auto s = r.speedupOver(b);
            line("  %-17s %8.3f s  %10s across buildings  MFU %5.1f%%  speedup %+.2f%%\n",
                 b.name.c_str(), b.step_time_s, bytesText(b.cross_building_bytes).c_str(),
                 100 * b.mfu, s ? 100 * *s : 0.0);
            line("      %s: %s\n", b.title.c_str(), b.recipe.c_str());
            line("      source: %s\n", b.source.c_str());
            line("      plan: %s\n", planSummary(b.plan).c_str());
        }
    }

    out += "\nTop plans (after #1: what differs from it):\n";
    for (std::size_t i = 0; i < r.top.size(); ++i) {
        const ScoredPlan& p = r.top[i];
        const std::string label = i == 0 ? p.label : "vs #1: " + labelDifference(r.top[0], p);
        line("  %2zu. %8.3f s  %10s across  %6lld GPUs  MFU %5.1f%%  %5.1f GiB  %s\n", i + 1,
             p.step_time_s, bytesText(p.cross_building_bytes).c_str(),
             static_cast<long long>(p.gpus), 100 * p.mfu, p.peak_gib_per_gpu, label.c_str());
        // The run-level objectives: what the plan is ranked by.
        switch (r.objective) {
        case Objective::TimeToTokens:
            line("        time to the token budget %.4g s (goodput %.1f%%)\n",
                 p.run.time_to_tokens_s, 100 * p.run.goodput);
            break;
        case Objective::TimeToLoss:
            line("        time to the target loss %.4g s (goodput %.1f%%)\n", p.run.time_to_loss_s,
                 100 * p.run.goodput);
            break;
        case Objective::Cost:
            line("        cost %.4g (goodput %.1f%%)\n", p.run.cost, 100 * p.run.goodput);
            break;
        case Objective::Energy:
            line("        energy %.4g kWh (goodput %.1f%%)\n", p.run.energy_kwh,
                 100 * p.run.goodput);
            break;
        default:
            break;
        }
    }
    if (r.lower_bound.step_s() > 0 && !r.top.empty()) {
        const StepLowerBound& lb = r.lower_bound;
        line("\nOptimality: no plan on these GPUs can be faster than %.3f s (compute at the best "
             "GEMM efficiency %.3f s; unavoidable cross-building traffic %s at line rate %.3f s); "
             "the best plan is %.1f%% above it\n",
             lb.step_s(), lb.compute_s, bytesText(lb.traffic_bytes).c_str(), lb.traffic_s,
             100 * (r.top.front().step_time_s / lb.step_s() - 1));
    }
    out += "\nPareto set (step time vs cross-building bytes):\n";
    for (const ScoredPlan& p : r.pareto)
        line("  %8.3f s  %10s  %s\n", p.step_time_s, bytesText(p.cross_building_bytes).c_str(),
             p.label.c_str());
    return out;
}

} // namespace sa

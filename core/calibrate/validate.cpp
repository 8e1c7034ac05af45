#include "calibrate/validate.h"

#include "formats/documents.h"
#include "formats/json_check.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace sa {

using formats::json;
using formats::ObjectReader;
using formats::Presence;

namespace {

std::string printed(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// One entry of the index; false (with its problems reported) when unusable.
bool readRun(ObjectReader& r, const std::string& family, ValidationRun& run,
             formats::Diagnostics& d) {
    bool ok = r.string("id", run.id, Presence::Required, true);
    if (!r.string("family", run.family, Presence::Optional, true))
        run.family = family;
    ok = r.string("cluster", run.cluster, Presence::Required, true) && ok;
    ok = r.string("model", run.model, Presence::Required, true) && ok;
    ok = r.string("plan", run.plan, Presence::Required, true) && ok;

    // The measurement: tokens/s per GPU, else a step time. The published
    // figure is shown as the source gave it.
    double tokens = 0, step = 0, value = 0;
    std::string metric;
    const bool hasTokens =
        r.number("measured_tokens_per_s_per_gpu", tokens, Presence::Optional, formats::kPositive);
    const bool hasMetric = r.string("measured_metric", metric, Presence::Optional, true);
    const bool hasValue = r.number("measured_value", value, Presence::Optional, formats::kPositive);
    const bool hasStep =
        r.number("measured_step_time_s", step, Presence::Optional, formats::kPositive);
    if (hasTokens)
        run.tokens_per_s_per_gpu = tokens;
    if (hasMetric && !hasValue && !d.isBad(r.pathOf("measured_value"))) {
        d.error(r.pathOf("measured_value"), "missing: \"measured_metric\" needs its value");
        ok = false;
    }
    if (hasMetric && hasValue) {
        if (metric == "step_time_s") {
            run.step_time_s = value;
            run.published = printed("%.3f s/step", value);
        } else if (metric == "tokens_per_s_per_gpu") {
            if (!hasTokens)
                run.tokens_per_s_per_gpu = value;
            run.published = printed("%.0f tok/s", value);
        } else if (metric == "model_tflops_per_gpu") {
            run.published = printed("%.1f TFLOP/s", value);
        } else {
            d.error(r.pathOf("measured_metric"),
                    "must be one of step_time_s, tokens_per_s_per_gpu, model_tflops_per_gpu, "
                    "got '" +
                        metric + "'");
            ok = false;
        }
    }
    if (hasStep && !run.step_time_s) {
        run.step_time_s = step;
        if (run.published.empty())
            run.published = printed("%.3f s/step", step);
    }
    if (run.published.empty() && run.tokens_per_s_per_gpu)
        run.published = printed("%.0f tok/s", *run.tokens_per_s_per_gpu);
    if (ok && !run.tokens_per_s_per_gpu && !run.step_time_s) {
        d.error(r.path(), hasMetric && metric == "model_tflops_per_gpu"
                              ? "a TFLOP/s figure needs \"measured_tokens_per_s_per_gpu\" beside "
                                "it (the FLOPs per token are the source's own count)"
                              : "missing the measurement: give \"measured_tokens_per_s_per_gpu\", "
                                "or \"measured_metric\" \"step_time_s\" with \"measured_value\"");
        ok = false;
    }

    if (const json* search = r.array("search", Presence::Optional)) {
        for (std::size_t i = 0; i < search->size(); ++i) {
            const json& knob = (*search)[i];
            const std::string path = formats::childPath(r.pathOf("search"), i);
            if (knob == "micro_batch_sequences") {
                run.search.micro_batch = true;
            } else if (knob == "virtual_stages") {
                run.search.interleaving = true;
            } else {
                d.error(path, "must be micro_batch_sequences or virtual_stages, got " +
                                  formats::describe(knob));
                ok = false;
            }
        }
    }
    bool overlap = false;
    if (r.boolean("interleaved_p2p_overlap", overlap, Presence::Optional))
        run.search.interleaved_p2p_overlap = overlap;
    return ok;
}

// bestValidationPlan, with the first evaluation error kept for the message.
std::optional<ValidationChoice> searchPlans(const Scenario& base, const ValidationSearch& space,
                                            bool mustFit, std::string* firstError) {
    std::optional<ValidationChoice> best, bestUnfit;
    const Plan& p0 = base.plan;
    const std::int64_t perReplica = p0.global_batch_sequences / p0.parallelism.dp;
    Evaluator evaluator(base.cluster);
    const std::int64_t mbsLo = space.micro_batch ? 1 : p0.micro_batch_sequences;
    const std::int64_t mbsHi = space.micro_batch ? std::min<std::int64_t>(16, perReplica) : mbsLo;
    const int vLo = space.interleaving ? 1 : p0.schedule.virtual_stages;
    const int vHi = space.interleaving ? 8 : vLo;
    for (std::int64_t mbs = mbsLo; mbs <= mbsHi; ++mbs) {
        if (perReplica % mbs != 0)
            continue;
        const std::int64_t m = perReplica / mbs;
        for (int v = vLo; v <= vHi; ++v) {
            const int pp = p0.parallelism.pp;
            Plan p = p0;
            p.micro_batch_sequences = mbs;
            if (space.interleaving) {
                // Megatron: layers divisible by pp * v; a plan that states its
                // layers per pipeline rank (frameworks with uneven stages): at
                // least v on every rank; and microbatches divisible by pp.
                const std::vector<int> perRank =
                    p0.placement ? p0.placement->layers_per_stage : std::vector<int>{};
                const bool chunks = perRank.empty()
                                        ? base.model.layers % (pp * v) == 0
                                        : *std::min_element(perRank.begin(), perRank.end()) >= v;
                if (v > 1 && (pp == 1 || !chunks || m % pp != 0))
                    continue;
                p.schedule.kind = v > 1 ? ScheduleKind::Interleaved : ScheduleKind::OneFOneB;
                p.schedule.virtual_stages = v;
                if (v > 1 && space.interleaved_p2p_overlap)
                    p.p2p_overlap = *space.interleaved_p2p_overlap;
            }
            EvaluateOptions opts;
            opts.timeline = false;
            auto r = evaluator.evaluate(base.model, p, opts);
            if (const auto* err = std::get_if<EvaluationError>(&r)) {
                if (firstError && firstError->empty())
                    *firstError = err->str();
                continue;
            }
            Evaluation& ev = std::get<Evaluation>(r);
            auto& slot = ev.memory.fits ? best : bestUnfit;
            if (!slot || ev.step_time_s < slot->evaluation.step_time_s)
                slot = ValidationChoice{p, std::move(ev)};
        }
    }
    return best || mustFit ? best : bestUnfit;
}

void printStatsLine(std::string& out, const ValidationStats& s) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%-24s %5d %+11.1f%% %11.1f%% %11.1f%%\n", s.name.c_str(),
                  s.count, s.mean() * 100, s.meanAbs() * 100, s.max_abs * 100);
    out += buf;
}

json statsJson(const ValidationStats& s) {
    return {{"name", s.name},
            {"runs", s.count},
            {"mean_error", s.mean()},
            {"mean_abs_error", s.meanAbs()},
            {"max_abs_error", s.max_abs}};
}

} // namespace

ValidationIndex parseValidationIndex(const std::string& text, const std::string& file,
                                     const std::string& family, std::vector<Diagnostic>& problems) {
    ValidationIndex index;
    index.file = file;
    formats::Diagnostics d(file);
    if (auto j = formats::parseJsonText(text, d)) {
        if (const json* root = formats::requireObject(d, *j, "")) {
            ObjectReader top(d, root, "");
            if (const json* runs = top.array("runs", Presence::Required)) {
                if (runs->empty())
                    d.error(top.pathOf("runs"), "must hold at least one run");
                std::set<std::string> ids;
                for (std::size_t i = 0; i < runs->size(); ++i) {
                    const std::string path = formats::childPath(top.pathOf("runs"), i);
                    if (!formats::requireObject(d, (*runs)[i], path))
                        continue;
                    ObjectReader r(d, &(*runs)[i], path);
                    ValidationRun run;
                    if (!readRun(r, family, run, d))
                        continue;
                    if (!ids.insert(run.id).second) {
                        d.error(r.pathOf("id"), "'" + run.id + "' is already the id of a run");
                        continue;
                    }
                    index.runs.push_back(std::move(run));
                }
            }
        }
    }
    for (auto& p : d.take())
        problems.push_back(std::move(p));
    return index;
}

std::optional<ValidationChoice> bestValidationPlan(const Scenario& base,
                                                   const ValidationSearch& search, bool mustFit) {
    return searchPlans(base, search, mustFit, nullptr);
}

std::string scheduleLabel(const Plan& p) {
    std::string s = toString(p.schedule.kind);
    if (p.schedule.virtual_stages > 1)
        s += " v=" + std::to_string(p.schedule.virtual_stages);
    return s;
}

std::string ValidationRow::planText() const {
    return std::to_string(choice.plan.micro_batch_sequences) + (search.micro_batch ? "* " : " ") +
           scheduleLabel(choice.plan) + (search.interleaving ? "*" : "");
}

std::string validationClass(const Scenario& s, const Plan& plan) {
    if (s.model.moe && plan.parallelism.ep > 1)
        return "MoE, expert parallel";
    std::string arch = "other";
    for (const auto& [name, gpu] : s.cluster.gpu_models)
        arch = toString(gpuArch(gpu));
    arch[0] = char(std::toupper(static_cast<unsigned char>(arch[0])));
    std::string kind = arch + (s.model.dtype == DType::FP8 ? " FP8" : " BF16");
    if (plan.parallelism.cp > 1)
        kind += ", CP >= 2";
    return kind;
}

std::vector<ValidationRow> validateRuns(const ValidationIndex& index, const std::string& baseDir,
                                        const ValidationOptions& options,
                                        std::vector<Diagnostic>& problems) {
    std::vector<ValidationRow> rows;
    for (std::size_t i = 0; i < index.runs.size(); ++i) {
        const ValidationRun& run = index.runs[i];
        const std::string where = "/runs/" + std::to_string(i);
        auto loaded = loadScenarioFiles(formats::resolveDocumentPath(baseDir, run.cluster),
                                        formats::resolveDocumentPath(baseDir, run.model),
                                        formats::resolveDocumentPath(baseDir, run.plan));
        if (!loaded.ok()) {
            const bool said = !loaded.problems.empty();
            for (auto& p : loaded.problems)
                problems.push_back(std::move(p));
            problems.push_back(
                {index.file, where,
                 "run '" + run.id + "': its documents do not load" + (said ? " (above)" : "")});
            continue;
        }
        const ValidationSearch search = options.search ? *options.search : run.search;
        std::string firstError;
        auto choice = searchPlans(*loaded.value, search, options.must_fit, &firstError);
        if (!choice) {
            problems.push_back({index.file, where,
                                "run '" + run.id + "': " +
                                    (firstError.empty() ? std::string("no plan fits in memory")
                                                        : "does not evaluate: " + firstError)});
            continue;
        }
        ValidationRow row;
        row.id = run.id;
        row.family = run.family;
        row.published = run.published;
        row.search = search;
        row.scenario = std::move(*loaded.value);
        row.choice = std::move(*choice);
        row.kind = validationClass(row.scenario, row.choice.plan);
        const Evaluation& ev = row.choice.evaluation;
        row.predicted = ev.tokens_per_s / double(ev.gpus);
        if (run.tokens_per_s_per_gpu) {
            row.measured = *run.tokens_per_s_per_gpu;
        } else {
            const double tokensPerGpu = double(row.choice.plan.global_batch_sequences) *
                                        double(row.choice.plan.sequence_length) / double(ev.gpus);
            row.measured = tokensPerGpu / *run.step_time_s;
        }
        if (!(std::isfinite(row.predicted) && row.predicted > 0)) {
            problems.push_back(
                {index.file, where, "run '" + run.id + "': no throughput predicted"});
            continue;
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

void ValidationStats::add(double e) {
    ++count;
    sum += e;
    sum_abs += std::abs(e);
    max_abs = std::max(max_abs, std::abs(e));
}

ValidationSummary summarizeValidation(const std::vector<ValidationRow>& rows) {
    ValidationSummary s;
    s.overall.name = "overall";
    std::map<std::string, std::size_t> familyAt;
    std::map<std::string, ValidationStats> byClass;
    for (const ValidationRow& r : rows) {
        auto [it, fresh] = familyAt.try_emplace(r.family, s.families.size());
        if (fresh) {
            s.families.push_back({});
            s.families.back().name = r.family;
        }
        s.families[it->second].add(r.error());
        s.overall.add(r.error());
        ValidationStats& c = byClass[r.kind];
        c.name = r.kind;
        c.add(r.error());
        s.rows_over_target += std::abs(r.error()) > kValidationRowTarget ? 1 : 0;
    }
    for (auto& [name, stats] : byClass)
        s.classes.push_back(stats);
    for (const ValidationStats& f : s.families)
        if (f.meanAbs() > kValidationFamilyTarget)
            s.misses += (s.misses.empty() ? "" : ", ") + std::string("family ") + f.name +
                        " mean |error| " + printed("%.0f%%", f.meanAbs() * 100);
    if (s.rows_over_target > 0)
        s.misses += (s.misses.empty() ? "" : "; ") + std::to_string(s.rows_over_target) + " of " +
                    std::to_string(rows.size()) + " rows over " +
                    printed("%.0f%%", kValidationRowTarget * 100);
    s.target_met = !rows.empty() && s.misses.empty();
    return s;
}

std::string formatValidationTable(const std::vector<ValidationRow>& rows,
                                  const ValidationSummary& summary) {
    std::string out;
    char buf[512];
    std::snprintf(buf, sizeof buf, "\n%-38s %-21s %5s %-15s %-19s %11s %11s %8s\n", "run", "family",
                  "gpus", "published", "mbs schedule", "pred tok/s", "meas tok/s", "error");
    out += buf;
    for (const ValidationRow& r : rows) {
        std::snprintf(buf, sizeof buf, "%-38s %-21s %5lld %-15s %-19s %11.1f %11.1f %+7.1f%%%s\n",
                      r.id.c_str(), r.family.c_str(), (long long)r.choice.evaluation.gpus,
                      r.published.c_str(), r.planText().c_str(), r.predicted, r.measured,
                      r.error() * 100, r.choice.evaluation.memory.fits ? "" : " (over memory)");
        out += buf;
    }
    out += "(* chosen by the search: not published. pred/meas: tokens/s per GPU; error = "
           "predicted / measured - 1, + = model optimistic)\n";
    std::snprintf(buf, sizeof buf, "\n%-24s %5s %12s %12s %12s\n", "family", "runs", "mean error",
                  "mean |error|", "max |error|");
    out += buf;
    for (const ValidationStats& f : summary.families)
        printStatsLine(out, f);
    printStatsLine(out, summary.overall);
    std::snprintf(buf, sizeof buf,
                  "accuracy target (mean |error| <= %.0f%% per family, no row over %.0f%%): "
                  "target met: %s",
                  kValidationFamilyTarget * 100, kValidationRowTarget * 100,
                  summary.target_met ? "yes" : "no");
    out += buf;
    if (!summary.misses.empty())
        out += " (" + summary.misses + ")";
    out += "\n\n";
    std::snprintf(buf, sizeof buf, "%-24s %5s %12s %12s %12s\n", "class", "runs", "mean error",
                  "mean |error|", "max |error|");
    out += buf;
    for (const ValidationStats& c : summary.classes)
        printStatsLine(out, c);
    return out;
}

json validationJson(const std::vector<ValidationRow>& rows, const ValidationSummary& summary) {
    json out = json::object();
    json list = json::array();
    for (const ValidationRow& r : rows) {
        const Evaluation& ev = r.choice.evaluation;
        list.push_back({{"id", r.id},
                        {"family", r.family},
                        {"class", r.kind},
                        {"published", r.published},
                        {"gpus", ev.gpus},
                        {"micro_batch_sequences", r.choice.plan.micro_batch_sequences},
                        {"schedule", toString(r.choice.plan.schedule.kind)},
                        {"virtual_stages", r.choice.plan.schedule.virtual_stages},
                        {"searched",
                         {{"micro_batch_sequences", r.search.micro_batch},
                          {"virtual_stages", r.search.interleaving}}},
                        {"predicted_tokens_per_s_per_gpu", r.predicted},
                        {"measured_tokens_per_s_per_gpu", r.measured},
                        {"error", r.error()},
                        {"step_time_s", ev.step_time_s},
                        {"fits", ev.memory.fits}});
    }
    out["rows"] = std::move(list);
    json families = json::array();
    for (const ValidationStats& f : summary.families)
        families.push_back(statsJson(f));
    out["families"] = std::move(families);
    out["overall"] = statsJson(summary.overall);
    json classes = json::array();
    for (const ValidationStats& c : summary.classes)
        classes.push_back(statsJson(c));
    out["classes"] = std::move(classes);
    out["target"] = {{"family_mean_abs_error", kValidationFamilyTarget},
                     {"row_abs_error", kValidationRowTarget},
                     {"rows_over", summary.rows_over_target},
                     {"met", summary.target_met},
                     {"misses", summary.misses}};
    return out;
}

} // namespace sa

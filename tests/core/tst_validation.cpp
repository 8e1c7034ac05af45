// Validation against published end-to-end runs.
//
// publishedRuns: the ten Megatron-LM runs of Narayanan et al., SC'21,
// Table 1 (tests/validation/runs.json). Micro batch size and interleaving
// depth were not published: the test picks them as a user would, the
// fastest combination that fits in memory, prints which it used and holds
// the model to mean |error| <= 10% and max |error| <= 20% on these rows.
//
// widerRuns: every run of tests/validation/published/runs.json (NeMo,
// Megatron-Core, Megatron-Bridge, torchtitan, Korthikanti et al. 2022), one
// row each, then count, signed mean, mean |error| and max |error| per
// source family and overall, with the SC'21 rows included. A run whose
// configuration is stated in full is evaluated as given; a run with a
// "search" list leaves only those settings to the same search as SC'21
// (the interleaved candidates with the P2P overlap "interleaved_p2p_overlap"
// gives, where the run's framework overlaps only its interleaved schedule).
// These rows are held to loading and evaluating, not to an accuracy: the
// target (mean |error| <= 10% per family, no row over 25%) is printed with
// whether it is met. docs/VALIDATION.md records the table and its sources.
//
// Error = predicted throughput / measured - 1 (+: the model is optimistic).

#include "cost/evaluate.h"
#include "formats/documents.h"

#include "../common/fixtures.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace sa;

namespace {

constexpr double kFamilyMeanTarget = 0.10; // mean |error| per source family
constexpr double kRowTarget = 0.25;        // no single row beyond this

struct Choice {
    Plan plan;
    Evaluation ev;
};

struct SearchSpace {
    bool microBatch = false;
    bool interleaving = false;
    // The P2P of the interleaved candidates where the run's framework sets
    // it apart from its 1F1B (runs.json "interleaved_p2p_overlap":
    // Megatron-LM overlaps only its interleaved schedule); unset: the plan's.
    std::optional<bool> interleavedP2pOverlap;
};

// Every micro batch size dividing the per-replica batch (up to 16) and
// every interleaving depth Megatron accepts (layers divisible by pp*v,
// microbatches divisible by pp), as far as `space` opens them; the
// fastest plan that fits memory, or with `mustFit` false the fastest of
// all when none fits.
std::optional<Choice> bestPlan(const Scenario& base, SearchSpace space, bool mustFit) {
    std::optional<Choice> best, bestUnfit;
    const Plan& p0 = base.plan;
    const std::int64_t perReplica = p0.global_batch_sequences / p0.parallelism.dp;
    Evaluator evaluator(base.cluster);
    const std::int64_t mbsLo = space.microBatch ? 1 : p0.micro_batch_sequences;
    const std::int64_t mbsHi = space.microBatch ? std::min<std::int64_t>(16, perReplica) : mbsLo;
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
                if (v > 1 && (pp == 1 || base.model.layers % (pp * v) != 0 || m % pp != 0))
                    continue;
                p.schedule.kind = v > 1 ? ScheduleKind::Interleaved : ScheduleKind::OneFOneB;
                p.schedule.virtual_stages = v;
                if (v > 1 && space.interleavedP2pOverlap)
                    p.p2p_overlap = *space.interleavedP2pOverlap;
            }
            EvaluateOptions opts;
            opts.timeline = false;
            auto r = evaluator.evaluate(base.model, p, opts);
            if (!std::holds_alternative<Evaluation>(r))
                continue;
            const Evaluation& ev = std::get<Evaluation>(r);
            auto& slot = ev.memory.fits ? best : bestUnfit;
            if (!slot || ev.step_time_s < slot->ev.step_time_s)
                slot = Choice{p, ev};
        }
    }
    return best || mustFit ? best : bestUnfit;
}

std::string scheduleText(const Plan& p) {
    std::string s = toString(p.schedule.kind);
    if (p.schedule.virtual_stages > 1)
        s += " v=" + std::to_string(p.schedule.virtual_stages);
    return s;
}

struct Row {
    std::string id;
    std::string family;
    std::int64_t gpus = 0;
    std::string measuredText; // what the source published
    std::string planText;     // micro batch and schedule evaluated (* = chosen by the search)
    double predicted = 0;     // tokens/s per GPU
    double measured = 0;      // tokens/s per GPU
    bool fits = true;
    double error() const { return predicted / measured - 1.0; }
};

std::string publishedText(const nlohmann::json& run) {
    const std::string metric = run["measured_metric"];
    const double v = run["measured_value"];
    char buf[64];
    if (metric == "step_time_s")
        std::snprintf(buf, sizeof buf, "%.3f s/step", v);
    else if (metric == "model_tflops_per_gpu")
        std::snprintf(buf, sizeof buf, "%.1f TFLOP/s", v);
    else
        std::snprintf(buf, sizeof buf, "%.0f tok/s", v);
    return buf;
}

struct Stats {
    int count = 0;
    double sum = 0, sumAbs = 0, maxAbs = 0;
    void add(double e) {
        ++count;
        sum += e;
        sumAbs += std::abs(e);
        maxAbs = std::max(maxAbs, std::abs(e));
    }
    double mean() const { return count ? sum / count : 0; }
    double meanAbs() const { return count ? sumAbs / count : 0; }
};

void printRows(const std::vector<Row>& rows) {
    std::printf("\n%-38s %-21s %5s %-15s %-19s %11s %11s %8s\n", "run", "family", "gpus",
                "published", "mbs schedule", "pred tok/s", "meas tok/s", "error");
    for (const Row& r : rows)
        std::printf("%-38s %-21s %5lld %-15s %-19s %11.1f %11.1f %+7.1f%%%s\n", r.id.c_str(),
                    r.family.c_str(), (long long)r.gpus, r.measuredText.c_str(), r.planText.c_str(),
                    r.predicted, r.measured, r.error() * 100, r.fits ? "" : " (over memory)");
}

// Per family in order of first appearance, then overall; the last line says
// whether the accuracy target is met and, if not, where it is missed.
void printSummary(const std::vector<Row>& rows) {
    std::vector<std::string> order;
    std::map<std::string, Stats> byFamily;
    Stats all;
    for (const Row& r : rows) {
        if (!byFamily.count(r.family))
            order.push_back(r.family);
        byFamily[r.family].add(r.error());
        all.add(r.error());
    }
    std::printf("\n%-24s %5s %12s %12s %12s\n", "family", "runs", "mean error", "mean |error|",
                "max |error|");
    auto line = [](const std::string& name, const Stats& s) {
        std::printf("%-24s %5d %+11.1f%% %11.1f%% %11.1f%%\n", name.c_str(), s.count,
                    s.mean() * 100, s.meanAbs() * 100, s.maxAbs * 100);
    };
    for (const std::string& f : order)
        line(f, byFamily[f]);
    line("overall", all);

    std::string misses;
    for (const std::string& f : order) {
        const Stats& s = byFamily[f];
        if (s.meanAbs() > kFamilyMeanTarget) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "%sfamily %s mean |error| %.0f%%",
                          misses.empty() ? "" : ", ", f.c_str(), s.meanAbs() * 100);
            misses += buf;
        }
    }
    int over = 0;
    for (const Row& r : rows)
        over += std::abs(r.error()) > kRowTarget ? 1 : 0;
    if (over > 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%d of %d rows over %.0f%%", misses.empty() ? "" : "; ",
                      over, int(rows.size()), kRowTarget * 100);
        misses += buf;
    }
    std::printf("accuracy target (mean |error| <= %.0f%% per family, no row over %.0f%%): "
                "target met: %s%s%s\n\n",
                kFamilyMeanTarget * 100, kRowTarget * 100, misses.empty() ? "yes" : "no",
                misses.empty() ? "" : " (", misses.empty() ? "" : (misses + ")").c_str());
}

nlohmann::json readIndex(const std::string& path) {
    std::ifstream in(path);
    if (!in.good())
        return {};
    return nlohmann::json::parse(in);
}

} // namespace

class TestValidation : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void publishedRuns();
    void widerRuns();

private:
    std::vector<Row> sc21Rows_;
};

void TestValidation::publishedRuns() {
    const std::string dir = sa::testing::sourceDir() + "/tests/validation/";
    const auto index = readIndex(dir + "runs.json");
    QVERIFY(index.contains("runs"));
    sc21Rows_.clear();
    double sumAbs = 0, maxAbs = 0;
    int rows = 0;
    std::printf("\n%-22s %5s %4s %-14s %10s %10s %8s %7s %7s\n", "run", "gpus", "mbs", "schedule",
                "pred [s]", "meas [s]", "error", "HFU", "MFU");
    for (const auto& run : index["runs"]) {
        const std::string id = run["id"];
        auto loaded = loadScenarioFiles(dir + run["cluster"].get<std::string>(),
                                        dir + run["model"].get<std::string>(),
                                        dir + run["plan"].get<std::string>());
        QVERIFY2(loaded.ok(),
                 loaded.problems.empty() ? id.c_str() : loaded.problems.front().str().c_str());
        auto best = bestPlan(*loaded.value, SearchSpace{true, true, std::nullopt}, true);
        QVERIFY2(best.has_value(), ("no plan fits memory for " + id).c_str());
        const double measured = run["measured_step_time_s"];
        const double predicted = best->ev.step_time_s;
        // Throughput error: predicted throughput vs measured throughput.
        const double err = measured / predicted - 1.0;
        const std::string sched = scheduleText(best->plan);
        std::printf("%-22s %5lld %4lld %-14s %10.3f %10.3f %+7.1f%% %6.1f%% %6.1f%%\n", id.c_str(),
                    (long long)best->ev.gpus, (long long)best->plan.micro_batch_sequences,
                    sched.c_str(), predicted, measured, err * 100, best->ev.hfu * 100,
                    best->ev.mfu * 100);
        sumAbs += std::abs(err);
        maxAbs = std::max(maxAbs, std::abs(err));
        ++rows;

        const double tokensPerGpu = double(best->plan.global_batch_sequences) *
                                    best->plan.sequence_length / double(best->ev.gpus);
        char measuredText[32];
        std::snprintf(measuredText, sizeof measuredText, "%.3f s/step", measured);
        sc21Rows_.push_back(
            Row{id, "megatron-sc21", best->ev.gpus, measuredText,
                std::to_string(best->plan.micro_batch_sequences) + "* " + sched + "*",
                tokensPerGpu / predicted, tokensPerGpu / measured, true});
    }
    QVERIFY(rows > 0);
    const double mean = sumAbs / rows;
    std::printf("throughput error over %d runs: mean |error| %.1f%%, max |error| %.1f%%\n\n", rows,
                mean * 100, maxAbs * 100);
    QVERIFY2(mean <= 0.10, "mean |error| above 10%");
    QVERIFY2(maxAbs <= 0.20, "a run is off by more than 20%");
}

void TestValidation::widerRuns() {
    if (sc21Rows_.empty()) // run on its own (tst_validation widerRuns): the SC'21 rows first
        publishedRuns();
    const std::string dir = sa::testing::sourceDir() + "/tests/validation/published/";
    const auto index = readIndex(dir + "runs.json");
    QVERIFY2(index.contains("runs"), (dir + "runs.json").c_str());

    std::vector<Row> rows = sc21Rows_;
    for (const auto& run : index["runs"]) {
        const std::string id = run["id"];
        auto loaded = loadScenarioFiles(dir + run["cluster"].get<std::string>(),
                                        dir + run["model"].get<std::string>(),
                                        dir + run["plan"].get<std::string>());
        QVERIFY2(loaded.ok(), (id + ": " +
                               (loaded.problems.empty() ? std::string("does not load")
                                                        : loaded.problems.front().str()))
                                  .c_str());
        SearchSpace space;
        for (const auto& knob : run.value("search", nlohmann::json::array())) {
            space.microBatch |= knob == "micro_batch_sequences";
            space.interleaving |= knob == "virtual_stages";
        }
        if (run.contains("interleaved_p2p_overlap"))
            space.interleavedP2pOverlap = run["interleaved_p2p_overlap"].get<bool>();
        auto choice = bestPlan(*loaded.value, space, false);
        QVERIFY2(choice.has_value(), (id + ": does not evaluate").c_str());
        const Evaluation& ev = choice->ev;
        const double predicted = ev.tokens_per_s / double(ev.gpus);
        const double measured = run["measured_tokens_per_s_per_gpu"];
        QVERIFY2(std::isfinite(predicted) && predicted > 0, id.c_str());
        QVERIFY2(measured > 0, id.c_str());
        const char* mark = space.microBatch || space.interleaving ? "*" : "";
        rows.push_back(Row{id, run["family"], ev.gpus, publishedText(run),
                           std::to_string(choice->plan.micro_batch_sequences) +
                               (space.microBatch ? "* " : " ") + scheduleText(choice->plan) +
                               (space.interleaving ? mark : ""),
                           predicted, measured, ev.memory.fits});
    }
    QCOMPARE(rows.size(), sc21Rows_.size() + index["runs"].size());

    printRows(rows);
    std::printf("(* chosen by the test: not published. pred/meas: tokens/s per GPU; error = "
                "predicted / measured - 1, + = model optimistic)\n");
    printSummary(rows);

    std::map<std::string, int> families;
    for (const Row& r : rows)
        ++families[r.family];
    QVERIFY(rows.size() >= 30);
    QVERIFY(families.size() >= 5);
}

QTEST_GUILESS_MAIN(TestValidation)
#include "tst_validation.moc"

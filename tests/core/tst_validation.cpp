// Validation against published end-to-end runs (tests/validation/runs.json,
// from Narayanan et al., SC'21, Table 1). For each run the micro batch size
// and the interleaving depth were not published: the test picks them as a
// user would, the fastest combination that fits in memory, and prints
// which it used. It then prints every row's throughput error and the mean
// and max |error|.

#include "cost/evaluate.h"
#include "formats/documents.h"

#include "../common/fixtures.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <cmath>
#include <cstdio>
#include <fstream>

using namespace sa;

namespace {

struct Choice {
    Plan plan;
    Evaluation ev;
};

// Every micro batch size dividing the per-replica batch (up to 16) and
// every interleaving depth Megatron accepts (layers divisible by pp*v,
// microbatches divisible by pp).
std::optional<Choice> bestPlan(const Scenario& base) {
    std::optional<Choice> best;
    const Plan& p0 = base.plan;
    const std::int64_t perReplica = p0.global_batch_sequences / p0.parallelism.dp;
    Evaluator evaluator(base.cluster);
    for (std::int64_t mbs = 1; mbs <= 16 && mbs <= perReplica; ++mbs) {
        if (perReplica % mbs != 0)
            continue;
        const std::int64_t m = perReplica / mbs;
        for (int v = 1; v <= 8; ++v) {
            const int pp = p0.parallelism.pp;
            if (v > 1 && (pp == 1 || base.model.layers % (pp * v) != 0 || m % pp != 0))
                continue;
            Plan p = p0;
            p.micro_batch_sequences = mbs;
            p.schedule.kind = v > 1 ? ScheduleKind::Interleaved : ScheduleKind::OneFOneB;
            p.schedule.virtual_stages = v;
            EvaluateOptions opts;
            opts.timeline = false;
            auto r = evaluator.evaluate(base.model, p, opts);
            if (!std::holds_alternative<Evaluation>(r))
                continue;
            const Evaluation& ev = std::get<Evaluation>(r);
            if (!ev.memory.fits)
                continue;
            if (!best || ev.step_time_s < best->ev.step_time_s)
                best = Choice{p, ev};
        }
    }
    return best;
}

} // namespace

class TestValidation : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void publishedRuns();
};

void TestValidation::publishedRuns() {
    const std::string dir = sa::testing::sourceDir() + "/tests/validation/";
    std::ifstream in(dir + "runs.json");
    QVERIFY(in.good());
    const auto index = nlohmann::json::parse(in);
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
        auto best = bestPlan(*loaded.value);
        QVERIFY2(best.has_value(), ("no plan fits memory for " + id).c_str());
        const double measured = run["measured_step_time_s"];
        const double predicted = best->ev.step_time_s;
        // Throughput error: predicted throughput vs measured throughput.
        const double err = measured / predicted - 1.0;
        std::string sched = toString(best->plan.schedule.kind);
        if (best->plan.schedule.virtual_stages > 1)
            sched += " v=" + std::to_string(best->plan.schedule.virtual_stages);
        std::printf("%-22s %5lld %4lld %-14s %10.3f %10.3f %+7.1f%% %6.1f%% %6.1f%%\n", id.c_str(),
                    (long long)best->ev.gpus, (long long)best->plan.micro_batch_sequences,
                    sched.c_str(), predicted, measured, err * 100, best->ev.hfu * 100,
                    best->ev.mfu * 100);
        sumAbs += std::abs(err);
        maxAbs = std::max(maxAbs, std::abs(err));
        ++rows;
    }
    QVERIFY(rows > 0);
    const double mean = sumAbs / rows;
    std::printf("throughput error over %d runs: mean |error| %.1f%%, max |error| %.1f%%\n\n", rows,
                mean * 100, maxAbs * 100);
    QVERIFY2(mean <= 0.10, "mean |error| above 10%");
    QVERIFY2(maxAbs <= 0.20, "a run is off by more than 20%");
}

QTEST_GUILESS_MAIN(TestValidation)
#include "tst_validation.moc"

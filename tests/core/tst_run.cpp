// A run's goodput, cost and energy (docs/RUN.md "Goodput", "Cost and
// energy"): the Chinchilla curve and its inverse, Daly's interval against
// his published examples and Young's first-order form, the goodput's
// optimum, the Llama 3 interruption rates, checkpoint sizes and storage
// times, stragglers, prices, power and the run's totals. Expected values are
// worked out here from the formulas and defaults the page states, on the
// sample two-building 405B scenario or on evaluations set up by hand.

#include "cost/evaluate.h"
#include "cost/run.h"
#include "export/evaluation_json.h"

#include "../common/costmodel_checks.h"
#include "../common/fixtures.h"

#include <QTest>

#include <cmath>
#include <limits>

using namespace sa;
using namespace sa::testing;

namespace {

// Llama 3 405B (126 layers, h 16384, f 53248, 128 heads, 8 KV heads, vocab
// 128256, untied): attention h(128 + 2*8)*128 + 128*128*h = 570,425,344,
// SwiGLU 3*h*f = 2,617,245,696, norms 2h = 32,768: 3,187,703,808 a layer,
// x 126 = 401,650,679,808; embedding + output 2*128256*h = 4,202,692,608;
// final norm 16,384.
constexpr double k405bParams = 401650679808.0 + 4202692608.0 + 16384.0;

// Llama 3, Table 5: 268 GPU interruptions over 16,384 GPUs, 151 others over
// 2,048 hosts, in 54 days.
constexpr double kGpuMtbfHours = 16384.0 * 54 * 24 / 268;
constexpr double kHostMtbfHours = 2048.0 * 54 * 24 / 151;

Scenario campus() {
    return loadSampleScenario("two-buildings-405b.json");
}

Evaluation reports(const Scenario& sc) {
    Evaluation ev = evaluated(sc);
    runReports(sc.cluster, sc.model, sc.plan, ev);
    return ev;
}

// One building of `gpus` H100 (700 W) and a TP8 DP plan on all of them, with
// a step set by hand (no evaluation needed).
struct Hand {
    Cluster cluster;
    Model model = gptModel();
    Plan plan;
    Evaluation ev;
};
Hand hand(std::int64_t gpus, double step = 10, double compute = 8) {
    Hand h;
    GpuModel g = h100();
    g.tdp_w = 700;
    h.cluster = clusterOf("one", {building("B1", gpus)}, {}, g);
    h.plan = makePlan(8, 1, int(gpus / 8), gpus / 8);
    h.ev.gpus = gpus;
    h.ev.step_time_s = step;
    h.ev.breakdown.compute_s = compute;
    h.ev.stage_building = {0};
    return h;
}

} // namespace

class TestRun : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void chinchilla() {
        // 70B on 1.4T tokens: 1.69 + 406.4 / 70e9^0.34 + 410.7 / 1.4e12^0.28
        // = 1.69 + 406.4 / 4866 + 410.7 / 2520 = 1.9366.
        QVERIFY_CLOSE(chinchillaLoss(70e9, 1.4e12), 1.9366, 1e-4);
        // The inverse gives the tokens back.
        QVERIFY_CLOSE(tokensForLoss(70e9, chinchillaLoss(70e9, 1.4e12)), 1.4e12, 1e-9);
        // At or below the model size's floor E + A / N^alpha: never.
        const double floor = 1.69 + 406.4 / std::pow(70e9, 0.34);
        QVERIFY(std::isinf(tokensForLoss(70e9, floor)));
        QVERIFY(std::isinf(tokensForLoss(70e9, floor - 0.01)));
    }

    void dalyWorkedNumber() {
        // delta = 60 s, M = 3 h = 10,800 s: sqrt(2 * 60 * 10800) = 1138.420,
        // x = delta / 2M = 1/360, 1 + sqrt(x)/3 + x/9 = 1 + 0.0175682 +
        // 0.0003086 = 1.0178768; 1138.420 * 1.0178768 - 60 = 1098.771 s.
        QVERIFY_CLOSE(dalyInterval(60, 10800), 1098.771, 1e-6);
        // Daly's own examples (delta = 5 min): M = 24 h -> 117 min, 6 h ->
        // 57 min, 15 min -> 9.1 min (to the minutes he prints).
        QVERIFY(std::abs(dalyInterval(300, 24 * 3600) / 60 - 117) < 0.5);
        QVERIFY(std::abs(dalyInterval(300, 6 * 3600) / 60 - 57) < 0.5);
        QVERIFY(std::abs(dalyInterval(300, 15 * 60) / 60 - 9.1) < 0.05);
        // delta >= 2M: checkpoint every M.
        QCOMPARE(dalyInterval(3000, 1000), 1000.0);
    }

    void youngForSmallDelta() {
        // delta << M: Daly's estimate approaches Young's sqrt(2 delta M).
        const double young = std::sqrt(2.0 * 1 * 1e6);
        QVERIFY_CLOSE(dalyInterval(1, 1e6), young, 1e-3);
        QVERIFY(std::abs(dalyInterval(1, 1e6) - young) / young <
                std::abs(dalyInterval(100, 1e6) - std::sqrt(2.0 * 100 * 1e6)) /
                    std::sqrt(2.0 * 100 * 1e6));
    }

    void dalyGoodputOptimum() {
        const double delta = 60, R = 600, M = 10800;
        const double tau = dalyInterval(delta, M);
        const double best = dalyGoodput(tau, delta, R, M);
        for (double f : {0.5, 0.8, 0.9, 1.1, 1.25, 2.0})
            QVERIFY2(dalyGoodput(tau * f, delta, R, M) < best, QByteArray::number(f));
        // By hand: tau / (M e^{R/M} (e^{(tau + delta)/M} - 1)).
        QVERIFY_CLOSE(best, tau / (M * std::exp(R / M) * (std::exp((tau + delta) / M) - 1)), 1e-12);
        // No failures: only the checkpoints cost.
        QVERIFY_CLOSE(dalyGoodput(1000, 10, 600, std::numeric_limits<double>::infinity()),
                      1000.0 / 1010, 1e-12);
    }

    void llama3JobMtbf() {
        // 16,384 GPUs on 2,048 hosts at the defaults: 419 interruptions in
        // 54 days.
        Hand h = hand(16384);
        runReports(h.cluster, h.model, h.plan, h.ev);
        QVERIFY_CLOSE(h.ev.goodput.job_mtbf_s, 54.0 * 24 / 419 * 3600, 1e-12);
        QVERIFY(h.ev.goodput.goodput > 0 && h.ev.goodput.goodput < 1);
    }

    void campusDefaults() {
        const Scenario sc = campus();
        const Evaluation ev = reports(sc);
        const GoodputReport& g = ev.goodput;
        // 24,576 GPUs on 3,072 hosts.
        QVERIFY_CLOSE(g.job_mtbf_s, 3600.0 / (24576 / kGpuMtbfHours + 3072 / kHostMtbfHours),
                      1e-12);
        // 14 bytes a parameter.
        QVERIFY_CLOSE(g.checkpoint_bytes, 14 * k405bParams, 1e-12);
        // Each building writes half at 2 TB/s x 12,288 / 16,384.
        const double write = g.checkpoint_bytes / 2 / (2e12 * 12288 / 16384);
        QVERIFY_CLOSE(g.checkpoint_write_s, write, 1e-12);
        QVERIFY_CLOSE(g.checkpoint_blocking_s, write, 1e-12);
        // 600 s and the read at the write's rate.
        QVERIFY_CLOSE(g.restart_s, 600 + write, 1e-12);
        // No stragglers in the sample: goodput is Daly's.
        QCOMPARE(g.straggler_s, 0.0);
        QVERIFY(g.interval_optimal);
        QVERIFY(g.interval_steps >= 1);
        QVERIFY_CLOSE(g.interval_s, double(g.interval_steps) * ev.step_time_s, 1e-12);
        QVERIFY_CLOSE(g.goodput, dalyGoodput(g.interval_s, write, g.restart_s, g.job_mtbf_s),
                      1e-12);
        // The interval is the better of the two whole steps around Daly's.
        const double steps = dalyInterval(write, g.job_mtbf_s) / ev.step_time_s;
        QVERIFY(std::abs(double(g.interval_steps) - steps) < 1);
        for (std::int64_t n : {g.interval_steps - 1, g.interval_steps + 1})
            if (n >= 1)
                QVERIFY(dalyGoodput(double(n) * ev.step_time_s, write, g.restart_s, g.job_mtbf_s) <=
                        g.goodput);
        // Restart and the expected rework in a segment of interval + write.
        const double L = g.interval_s + write, M = g.job_mtbf_s;
        QVERIFY_CLOSE(g.lost_per_failure_s, g.restart_s + M - L / (std::exp(L / M) - 1), 1e-9);
    }

    void goodputFallsWithMtbf() {
        Scenario sc = campus();
        const Evaluation base = reports(sc);
        for (auto& b : sc.cluster.buildings)
            b.gpu_mtbf_hours = kGpuMtbfHours / 2;
        const Evaluation worse = reports(sc);
        QVERIFY_CLOSE(worse.goodput.job_mtbf_s,
                      3600.0 / (2 * 24576 / kGpuMtbfHours + 3072 / kHostMtbfHours), 1e-12);
        QVERIFY(worse.goodput.goodput < base.goodput.goodput);
        QVERIFY(worse.goodput.interval_steps <= base.goodput.interval_steps);
    }

    void noProgressAtGoodputZero() {
        // A GPU failing every 3.6 s fails the 24,576-GPU job every 0.15 ms:
        // Daly's goodput underflows to 0 and nothing per token is finite.
        Scenario sc = campus();
        for (auto& b : sc.cluster.buildings) {
            b.gpu_mtbf_hours = 1e-3;
            b.host_mtbf_hours = 1e-3;
        }
        sc.plan.token_budget = 15e12;
        const Evaluation ev = reports(sc);
        QCOMPARE(ev.goodput.goodput, 0.0);
        QVERIFY(std::isinf(ev.cost.time_s_per_mtok));
        QVERIFY(ev.run && std::isinf(ev.run->time_s));
        QVERIFY(hasWarning(ev, "goodput: 0, the job fails every"));
        const std::string text = evaluationReport(ev, sc.cluster);
        QVERIFY2(text.find("per 1M tokens    never: goodput 0") != std::string::npos, text.c_str());
        QVERIFY2(text.find("never completes at goodput 0") != std::string::npos, text.c_str());
        QVERIFY2(text.find("inf") == std::string::npos, text.c_str());
        // A realistic MTBF keeps the figures finite and says nothing.
        const Evaluation ok = reports(campus());
        QVERIFY(ok.goodput.goodput > 0 && std::isfinite(ok.cost.time_s_per_mtok));
        QVERIFY(!hasWarning(ok, "goodput: 0"));
    }

    void planInterval() {
        Scenario sc = campus();
        sc.plan.checkpoint.interval_steps = 100;
        sc.plan.checkpoint.async = true;
        const Evaluation ev = reports(sc);
        const GoodputReport& g = ev.goodput;
        QVERIFY(!g.interval_optimal);
        QCOMPARE(g.interval_steps, std::int64_t(100));
        QVERIFY_CLOSE(g.interval_s, 100 * ev.step_time_s, 1e-12);
        // Async: the step waits for its 1/24,576 of the state at 25 GB/s.
        QVERIFY_CLOSE(g.checkpoint_blocking_s, 14 * k405bParams / 24576 / 25e9, 1e-12);
        QVERIFY(g.checkpoint_blocking_s < g.checkpoint_write_s);
    }

    void storageGiven() {
        Scenario sc = campus();
        sc.cluster.buildings[0].storage_write_gbps = 8000; // 1 TB/s
        sc.cluster.buildings[0].storage_read_gbps = 16000; // 2 TB/s
        sc.cluster.buildings[1].storage_write_gbps = 80000;
        sc.cluster.buildings[0].restart_s = 300;
        const Evaluation ev = reports(sc);
        const double half = 14 * k405bParams / 2;
        QVERIFY_CLOSE(ev.goodput.checkpoint_write_s, half / 1e12, 1e-12);
        // Reads: B1 at 2 TB/s, B2 (none given) at its write rate, 10 TB/s;
        // restart: the longer of the two buildings' restarts (B2's default).
        QVERIFY_CLOSE(ev.goodput.restart_s, 600 + half / 2e12, 1e-12);
    }

    void stragglers() {
        Scenario sc = campus();
        sc.cluster.buildings[1].straggler_slowdown = 1.05;
        sc.cluster.buildings[0].step_jitter = 0.02;
        const Evaluation ev = reports(sc);
        const double c = ev.breakdown.compute_s;
        const double want = c * 0.05 + c * 0.02 * std::sqrt(2 * std::log(24576.0));
        QVERIFY_CLOSE(ev.goodput.straggler_s, want, 1e-12);
        const double wall = ev.step_time_s + want;
        QVERIFY_CLOSE(ev.goodput.interval_s, double(ev.goodput.interval_steps) * wall, 1e-12);
        QVERIFY_CLOSE(ev.goodput.goodput,
                      dalyGoodput(ev.goodput.interval_s, ev.goodput.checkpoint_blocking_s,
                                  ev.goodput.restart_s, ev.goodput.job_mtbf_s) *
                          ev.step_time_s / wall,
                      1e-12);
    }

    void stragglersDiloco() {
        // Two workers of 8,192 GPUs, H = 100: each step waits for its
        // worker's slowest GPU, the outer sync for the slower worker's 100
        // steps.
        Hand h = hand(16384);
        h.cluster.buildings[0].step_jitter = 0.03;
        OuterSyncReport os;
        os.workers = 2;
        os.inner_steps = 100;
        h.ev.outer_sync = os;
        runReports(h.cluster, h.model, h.plan, h.ev);
        const double c = 8;
        QVERIFY_CLOSE(h.ev.goodput.straggler_s,
                      c * 0.03 *
                          (std::sqrt(2 * std::log(8192.0)) + std::sqrt(2 * std::log(2.0)) / 10),
                      1e-12);
        // HSDP synchronises every step: the job-wide term.
        h.ev.outer_sync->method = OuterSyncMethod::Hsdp;
        runReports(h.cluster, h.model, h.plan, h.ev);
        QVERIFY_CLOSE(h.ev.goodput.straggler_s, c * 0.03 * std::sqrt(2 * std::log(16384.0)), 1e-12);
    }

    void unpriced() {
        const Evaluation ev = reports(campus());
        QVERIFY(!ev.cost.priced);
        QCOMPARE(ev.cost.cost_usd_per_step, 0.0);
        QVERIFY(!hasWarning(ev, "gpu_hour_usd"));
    }

    void partlyPriced() {
        Scenario sc = campus();
        sc.cluster.buildings[0].gpu_hour_usd = 2;
        const Evaluation ev = reports(sc);
        QVERIFY(ev.cost.priced);
        QVERIFY(hasWarning(ev, "B2 has no gpu_hour_usd"));
        QVERIFY_CLOSE(ev.cost.cost_usd_per_step, 12288 * 2 * ev.step_time_s / 3600, 1e-12);
    }

    void runTotals() {
        Scenario sc = campus();
        for (auto& b : sc.cluster.buildings)
            b.gpu_hour_usd = 2.5;
        sc.cluster.links[0].price_per_gb_usd = 0.001;
        sc.plan.token_budget = 15.6e12;
        const Evaluation ev = reports(sc);
        QVERIFY(ev.cost.priced);
        // Transport: both directions of the inter-building link.
        double bytes = 0;
        for (const auto& l : ev.links)
            if (l.tier == LinkTier::InterBuilding)
                bytes += l.direction_bytes_per_step[0] + l.direction_bytes_per_step[1];
        QVERIFY(bytes > 0);
        QVERIFY_CLOSE(ev.cost.transport_usd_per_step, bytes / 1e9 * 0.001, 1e-12);
        const double gpuUsd = 24576 * 2.5 * ev.step_time_s / 3600;
        QVERIFY_CLOSE(ev.cost.cost_usd_per_step, gpuUsd + ev.cost.transport_usd_per_step, 1e-12);

        QVERIFY(ev.run.has_value());
        const RunReport& r = *ev.run;
        const double steps = 15.6e12 / (3072.0 * 8192);
        const double g = ev.goodput.goodput;
        QVERIFY_CLOSE(r.tokens, 15.6e12, 1e-12);
        QVERIFY_CLOSE(r.steps, steps, 1e-12);
        QVERIFY_CLOSE(r.time_s, steps * ev.step_time_s / g, 1e-12);
        // The GPUs are paid for the whole wall clock, transport per step.
        QVERIFY_CLOSE(r.cost_usd, gpuUsd * steps / g + ev.cost.transport_usd_per_step * steps,
                      1e-12);
        QVERIFY_CLOSE(r.energy_kwh, ev.cost.energy_kwh_per_step * steps / g, 1e-12);
        QVERIFY_CLOSE(r.restarts, r.time_s / ev.goodput.job_mtbf_s, 1e-12);
        // Target: synchronous DP's loss on the budget, reached on the budget.
        QVERIFY_CLOSE(r.target_loss, chinchillaLoss(k405bParams, 15.6e12), 1e-12);
        QVERIFY_CLOSE(r.tokens_to_loss, 15.6e12, 1e-12);
        QVERIFY_CLOSE(r.time_to_loss_s, r.time_s, 1e-12);
        // Per million tokens: the run's figures over its tokens.
        const double perStepGpuUsd = gpuUsd / g, perMtokSteps = 1e6 / (3072.0 * 8192);
        QVERIFY_CLOSE(ev.cost.time_s_per_mtok, perMtokSteps * ev.step_time_s / g, 1e-12);
        QVERIFY_CLOSE(ev.cost.usd_per_mtok,
                      perMtokSteps * (perStepGpuUsd + ev.cost.transport_usd_per_step), 1e-12);
        QVERIFY_CLOSE(ev.cost.usd_per_mtok * r.tokens / 1e6, r.cost_usd, 1e-12);
        QVERIFY_CLOSE(ev.cost.kwh_per_mtok * r.tokens / 1e6, r.energy_kwh, 1e-12);
    }

    void noBudgetNoRun() {
        const Evaluation ev = reports(campus());
        QVERIFY(!ev.run.has_value());
    }

    void targetLossDiloco() {
        Hand h = hand(16384);
        OuterSyncReport os;
        os.workers = 2;
        os.inner_steps = 100;
        os.loss_penalty = 0.01;
        os.token_multiplier = 1.3;
        h.ev.outer_sync = os;
        const double N = 1.0 * 16 * (4 * 4096.0 * 4096 + 2 * 4096 * 16384 + 2 * 4096) +
                         2 * 51200.0 * 4096 + 4096; // gptModel(): MHA, GELU 4h, untied
        h.plan.target_loss = 2.2;
        runReports(h.cluster, h.model, h.plan, h.ev);
        QVERIFY(h.ev.run.has_value());
        QVERIFY_CLOSE(h.ev.run->target_loss, 2.2, 1e-12);
        QVERIFY_CLOSE(h.ev.run->tokens_to_loss, tokensForLoss(N, 2.2 / 1.01), 1e-12);
        QVERIFY_CLOSE(h.ev.run->time_to_loss_s,
                      h.ev.run->tokens_to_loss / (h.plan.global_batch_sequences * 2048.0) * 10 /
                          h.ev.goodput.goodput,
                      1e-12);
        QVERIFY(!hasWarning(h.ev, "outer_sync"));

        // Below what DiLoCo reaches: (1 + penalty) (E + A / N^alpha) is its floor.
        h.plan.target_loss = 1.01 * (1.69 + 406.4 / std::pow(N, 0.34)) * 0.999;
        h.ev.warnings.clear();
        runReports(h.cluster, h.model, h.plan, h.ev);
        QVERIFY(std::isinf(h.ev.run->tokens_to_loss));
        QVERIFY(std::isinf(h.ev.run->time_to_loss_s));
        QVERIFY(hasWarning(h.ev, "outer_sync: the target loss is below what DiLoCo reaches"));

        // With a token budget: the outer-sync code's multiplier.
        h.plan.target_loss = 0;
        h.plan.token_budget = 1e11;
        runReports(h.cluster, h.model, h.plan, h.ev);
        QVERIFY_CLOSE(h.ev.run->tokens_to_loss, 1.3e11, 1e-12);
        QVERIFY_CLOSE(h.ev.run->time_to_loss_s, 1.3 * h.ev.run->time_s, 1e-12);
    }

    void power() {
        Hand h = hand(16384, 10, 8);
        runReports(h.cluster, h.model, h.plan, h.ev);
        // u = 8 / 10; idle 15% of 700 W = 105 W; 105 + 595 * 0.8 = 581 W.
        QVERIFY_CLOSE(h.ev.cost.gpu_power_w, 581, 1e-12);
        // 2,048 hosts at 4.6 kW, 50 W of network a GPU, PUE 1.2.
        const double kw = 1.2 * (16384 * 581.0 + 2048 * 4600.0 + 16384 * 50.0) / 1000;
        QVERIFY_CLOSE(h.ev.cost.facility_power_kw, kw, 1e-12);
        QVERIFY_CLOSE(h.ev.cost.energy_kwh_per_step, kw * 10 / 3600, 1e-12);

        // Given figures replace the defaults.
        h.cluster.gpu_models.begin()->second.power_limit_w = 600;
        h.cluster.gpu_models.begin()->second.idle_w = 80;
        h.cluster.buildings[0].host_power_w = 2000;
        h.cluster.buildings[0].network_power_w_per_gpu = 30;
        runReports(h.cluster, h.model, h.plan, h.ev);
        const double gpuW = 80 + (600 - 80) * 0.8;
        QVERIFY_CLOSE(h.ev.cost.gpu_power_w, gpuW, 1e-12);
        QVERIFY_CLOSE(h.ev.cost.facility_power_kw,
                      1.2 * (16384 * gpuW + 2048 * 2000.0 + 16384 * 30.0) / 1000, 1e-12);
    }

    void energyScalesWithPue() {
        Scenario sc = campus();
        const Evaluation base = reports(sc);
        QVERIFY(base.cost.facility_power_kw > 0);
        for (auto& b : sc.cluster.buildings)
            b.pue = 1.5;
        const Evaluation more = reports(sc);
        QVERIFY_CLOSE(more.cost.facility_power_kw, base.cost.facility_power_kw * 1.5 / 1.2, 1e-12);
        QVERIFY_CLOSE(more.cost.energy_kwh_per_step, base.cost.energy_kwh_per_step * 1.5 / 1.2,
                      1e-12);
    }

    void noTdpWarns() {
        Scenario sc = campus();
        for (auto& [name, g] : sc.cluster.gpu_models)
            g.tdp_w = 0;
        const Evaluation ev = reports(sc);
        QVERIFY(hasWarning(ev, "has no tdp_w"));
        QCOMPARE(ev.cost.facility_power_kw, 0.0);
        QCOMPARE(ev.cost.energy_kwh_per_step, 0.0);
    }
};

QTEST_GUILESS_MAIN(TestRun)
#include "tst_run.moc"

// Low-communication DP across buildings (docs/RUN.md "Outer sync"): the
// workers, the bytes an outer all-reduce puts on the inter-building link and
// how often, Streaming DiLoCo's fragments and overlap, HSDP every step, the
// convergence curve against the published tables, and the known shape: over
// a thin link DiLoCo reaches the target loss sooner than synchronous DP,
// over a fat one it does not, and the optimizer picks accordingly.

#include "cost/compute.h"
#include "cost/evaluate.h"
#include "cost/outer.h"
#include "cost/run.h"
#include "explore/designspace.h"
#include "explore/optimizer.h"

#include "../common/costmodel_checks.h"
#include "../common/fixtures.h"

#include <QTest>

#include <cmath>

using namespace sa;
using namespace sa::testing;

namespace {

// Llama 3 405B on the two-building campus: tp8 pp16 dp192 in rank order
// [tp, cp, pp, dp], so replicas 0-95 fill B1 and 96-191 fill B2: two
// workers, each with every stage inside its building.
Scenario campus(double linkGbps = 0) {
    Scenario sc = loadSampleScenario("two-buildings-405b.json");
    if (linkGbps > 0)
        for (Link& l : sc.cluster.links)
            l.bandwidth_gbps = linkGbps;
    sc.plan.token_budget = 15e12;
    return sc;
}

OuterSync diloco(int h, double outerBytes = 4) {
    OuterSync o;
    o.inner_steps = h;
    o.outer_bytes = outerBytes;
    return o;
}

} // namespace

class TestOuter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The search's outer-sync axis from `optimize --diloco H,...
    // --streaming-fragments F,... --hsdp` (the explorer's controls build it
    // the same way).
    void outerSyncChoicesFollowTheFlags() {
        auto sync = [](OuterSyncMethod m, int h, int fragments) {
            OuterSync s;
            s.method = m;
            s.inner_steps = h;
            s.fragments = fragments;
            return std::optional<OuterSync>(s);
        };
        const auto D = OuterSyncMethod::Diloco, S = OuterSyncMethod::StreamingDiloco,
                   H = OuterSyncMethod::Hsdp;
        QVERIFY(outerSyncChoices({}, {}, false).empty());
        QVERIFY(outerSyncChoices({}, {4}, false).empty()); // fragments need an H
        QVERIFY((outerSyncChoices({}, {}, true) ==
                 std::vector<std::optional<OuterSync>>{std::nullopt, sync(H, 1, 1)}));
        QVERIFY((outerSyncChoices({50, 100}, {4}, true) ==
                 std::vector<std::optional<OuterSync>>{std::nullopt, sync(D, 50, 1), sync(S, 50, 4),
                                                       sync(D, 100, 1), sync(S, 100, 4),
                                                       sync(H, 1, 1)}));
        // A fragment count above H is skipped for that H.
        QVERIFY((outerSyncChoices({2, 8}, {4}, false) ==
                 std::vector<std::optional<OuterSync>>{std::nullopt, sync(D, 2, 1), sync(D, 8, 1),
                                                       sync(S, 8, 4)}));
    }

    void dilocoPutsTheParametersOnTheLinkEveryHSteps() {
        Scenario sc = campus();
        sc.plan.outer_sync = diloco(100);
        const Evaluation ev = evaluated(sc);
        QVERIFY(ev.outer_sync);
        QCOMPARE(ev.outer_sync->workers, 2);
        const double n = planParams(sc.plan, ev);
        QVERIFY(n > 4.0e11 && n < 4.1e11); // 405B
        // A ring of two: each worker sends the other all of its fp32
        // pseudo-gradient, once each way.
        QVERIFY_CLOSE(ev.outer_sync->bytes_per_sync, 2 * 4 * n, 1e-9);
        // The workers' inner steps stay inside their buildings.
        const LinkUsage& l = linkNamed(ev, "B1-B2");
        QVERIFY_CLOSE(l.direction_bytes_per_step[0], 4 * n / 100, 1e-9);
        QVERIFY_CLOSE(l.direction_bytes_per_step[1], 4 * n / 100, 1e-9);
        QVERIFY_CLOSE(ev.cross_building_bytes, 2 * 4 * n / 100, 1e-9);
        // Blocking: the step is the inner step plus a hundredth of the sync.
        QVERIFY_CLOSE(ev.step_time_s, ev.outer_sync->inner_step_s + ev.outer_sync->sync_s / 100,
                      1e-12);
        // The sync drains 4 n bytes each way over the link at its goodput.
        const double line = sc.cluster.links[0].bandwidth_gbps * 1e9 / 8;
        QVERIFY(ev.outer_sync->sync_s > 4 * n / line);
        QVERIFY(ev.outer_sync->sync_s < 4 * n / (0.5 * line));
    }

    void streamingSyncsFragmentsBehindTheInnerSteps() {
        Scenario sc = campus();
        OuterSync s = diloco(100, 0.5);
        s.method = OuterSyncMethod::StreamingDiloco;
        s.fragments = 4;
        sc.plan.outer_sync = s;
        const Evaluation ev = evaluated(sc);
        const double n = planParams(sc.plan, ev);
        QVERIFY_CLOSE(ev.outer_sync->bytes_per_sync, 2 * 0.5 * n / 4, 1e-9);
        QVERIFY_CLOSE(ev.cross_building_bytes, 2 * 0.5 * n / 100, 1e-9);
        // A fragment's 25 GB each way over 51.2 Tbit/s hides behind one
        // inner step.
        QVERIFY(ev.outer_sync->sync_s < ev.outer_sync->inner_step_s);
        QCOMPARE(ev.outer_sync->exposed_per_step_s, 0.0);
        QCOMPARE(ev.step_time_s, ev.outer_sync->inner_step_s);
        // On a thin link the fragments keep it busy: the step is the link's.
        Scenario thin = campus(10);
        thin.plan.outer_sync = s;
        const Evaluation t = evaluated(thin);
        QVERIFY(t.outer_sync->sync_s > t.outer_sync->inner_step_s);
        QVERIFY_CLOSE(t.step_time_s,
                      std::max(t.outer_sync->inner_step_s +
                                   4.0 / 100 * (t.outer_sync->sync_s - t.outer_sync->inner_step_s),
                               4.0 / 100 * t.outer_sync->sync_s),
                      1e-12);
    }

    void hsdpReducesGradientShardsEveryStep() {
        Scenario sc = campus(400);
        OuterSync h;
        h.method = OuterSyncMethod::Hsdp;
        h.inner_steps = 1;
        sc.plan.outer_sync = h;
        const Evaluation ev = evaluated(sc);
        const double n = planParams(sc.plan, ev);
        QVERIFY_CLOSE(ev.outer_sync->bytes_per_sync, 2 * sc.plan.grad_reduce_bytes * n, 1e-9);
        QVERIFY_CLOSE(ev.cross_building_bytes, 2 * sc.plan.grad_reduce_bytes * n, 1e-9);
        QCOMPARE(ev.outer_sync->loss_penalty, 0.0);
        QCOMPARE(ev.outer_sync->token_multiplier, 1.0);
        QVERIFY(ev.step_time_s > ev.outer_sync->inner_step_s);
    }

    // Two equal workers of consecutive replicas (B1 holds replicas 0-95, B2
    // 96-191): HSDP across the buildings is the plan's own dp_shard of one
    // worker's replicas, and is priced as that plan (docs/COST_MODEL.md
    // "HSDP"): the same step, the same bytes on the link, the report's sync
    // the replicas' all-reduces. Before, the outer sync charged one ring
    // latency a step where each bucket pays its own, and came out faster
    // than the same layout written as dp_shard.
    void hsdpIsTheDpShardPlanItCanBe() {
        OuterSync h;
        h.method = OuterSyncMethod::Hsdp;
        h.inner_steps = 1;
        for (double gbps : {400.0, 51200.0}) {
            Scenario sc = campus(gbps);
            sc.plan.outer_sync = h;
            const Evaluation ev = evaluated(sc);
            Scenario sh = campus(gbps);
            sh.plan.dp_shard = sh.plan.parallelism.dp / 2;
            const Evaluation d = evaluated(sh);
            QCOMPARE(ev.outer_sync->workers, 2);
            QCOMPARE(ev.step_time_s, d.step_time_s);
            QCOMPARE(linkNamed(ev, "B1-B2").bytes_per_step, linkNamed(d, "B1-B2").bytes_per_step);
            QVERIFY(d.replica_reduce_s > 0);
            QCOMPARE(ev.outer_sync->sync_s, d.replica_reduce_s);
            QVERIFY_CLOSE(ev.outer_sync->exposed_per_step_s,
                          ev.step_time_s - ev.outer_sync->inner_step_s, 1e-12);
            QVERIFY(!hasWarning(ev, "equal blocks"));
        }
        // Each bucket is an all-reduce of its own: over a 5 ms link a tenth
        // of the bucket size adds at least the link's latency twice (a ring
        // of two) for every extra bucket.
        auto sync = [&](double bucketMib) {
            Scenario sc = campus(400);
            for (Link& l : sc.cluster.links)
                l.latency_ms = 5;
            sc.plan.outer_sync = h;
            sc.plan.dp_bucket_mib = bucketMib;
            const Evaluation ev = evaluated(sc);
            double largest = 0;
            for (double p : ev.stage_params)
                largest = std::max(largest, p);
            return std::pair{ev.outer_sync->sync_s, std::ceil(largest * sc.plan.grad_reduce_bytes /
                                                              (bucketMib * 1048576))};
        };
        const auto [coarse, fewBuckets] = sync(256);
        const auto [fine, manyBuckets] = sync(25.6);
        QVERIFY(manyBuckets > 5 * fewBuckets);
        QVERIFY2(fine - coarse >= (manyBuckets - fewBuckets) * 2 * 5e-3,
                 (std::to_string(fine) + " s against " + std::to_string(coarse) + " s").c_str());
    }

    // Workers of unequal size (B1 96 replicas, B2 64) are no HSDP any
    // framework runs: priced per worker, with a warning, each bucket's
    // all-reduce still paying its latency.
    void hsdpOverUnequalWorkersIsPricedPerWorker() {
        auto run = [](double latencyMs) {
            Scenario sc = campus(51200);
            for (Link& l : sc.cluster.links)
                l.latency_ms = latencyMs;
            sc.plan.parallelism.dp = 160;
            sc.plan.global_batch_sequences = 160 * 16;
            Placement pl;
            pl.layers_per_stage = sc.plan.placement->layers_per_stage;
            pl.runs = {{0, 15, 0, 95, "B1"}, {0, 15, 96, 159, "B2"}};
            sc.plan.placement = pl;
            OuterSync h;
            h.method = OuterSyncMethod::Hsdp;
            h.inner_steps = 1;
            sc.plan.outer_sync = h;
            return std::pair{sc, evaluated(sc)};
        };
        const auto [sc, ev] = run(5);
        const Evaluation near = run(0.1).second;
        QCOMPARE(ev.outer_sync->workers, 2);
        QVERIFY(hasWarning(ev, "not equal blocks of consecutive replicas"));
        QVERIFY(ev.step_time_s > ev.outer_sync->inner_step_s);
        // The stage's gradients in 256 MiB buckets, each all-reduced over a
        // ring of two: 4.9 ms more latency costs each bucket twice that.
        double largest = 0;
        for (double p : ev.stage_params)
            largest = std::max(largest, p);
        const double buckets = std::ceil(largest * sc.plan.grad_reduce_bytes / (256.0 * 1048576));
        QVERIFY(buckets > 10);
        QVERIFY2(ev.outer_sync->sync_s - near.outer_sync->sync_s >= buckets * 2 * 4.9e-3 * 0.999,
                 (std::to_string(ev.outer_sync->sync_s) + " s against " +
                  std::to_string(near.outer_sync->sync_s) + " s, " + std::to_string(buckets) +
                  " buckets")
                     .c_str());
    }

    void oneWorkerChangesNothing() {
        // PP across buildings (PP outermost in the rank order): every replica
        // holds stages 0-7 in B1 and 8-15 in B2.
        Scenario sc = campus();
        sc.plan.rank_order = {Dim::TP, Dim::CP, Dim::DP, Dim::PP};
        const Evaluation sync = evaluated(sc);
        sc.plan.outer_sync = diloco(30);
        const Evaluation ev = evaluated(sc);
        QCOMPARE(ev.outer_sync->workers, 1);
        QCOMPARE(ev.step_time_s, sync.step_time_s);
        QVERIFY(hasWarning(ev, "one worker"));
    }

    void workersMustHoldWholeExpertGroups() {
        Scenario sc = loadSampleScenario("two-buildings-mixtral.json");
        sc.plan.outer_sync = diloco(30);
        const EvaluationResult r = evaluate(sc);
        if (const auto* e = std::get_if<EvaluationError>(&r))
            QVERIFY(e->str().find("/outer_sync") != std::string::npos);
        else
            QVERIFY(std::get<Evaluation>(r).outer_sync);
    }

    void convergenceCurveFollowsTheTables() {
        // Charles et al. 2025 Table 4 at 2.4B (H = 30): M = 1 -0.4%, M = 2
        // -0.1%, M = 4 +0.3%, M = 8 +1.1%; Table 7's fits are within 0.25
        // points of it.
        QVERIFY(std::abs(outerLossPenalty(2.4e9, 1, 30) + 0.004) < 0.0015);
        QVERIFY(std::abs(outerLossPenalty(2.4e9, 2, 30) + 0.001) < 0.0015);
        QVERIFY(std::abs(outerLossPenalty(2.4e9, 4, 30) - 0.003) < 0.0015);
        QVERIFY(std::abs(outerLossPenalty(2.4e9, 8, 30) - 0.011) < 0.0025);
        // Smaller models lose more (35M, M = 8: +3.9%).
        QVERIFY(std::abs(outerLossPenalty(35e6, 8, 30) - 0.039) < 0.004);
        // Streaming DiLoCo Table 6, H 30 -> 100: mean +0.683% (M = 2),
        // +1.117% (M = 4) over its six sizes.
        QVERIFY_CLOSE(outerLossPenalty(1e9, 2, 100) - outerLossPenalty(1e9, 2, 30), 0.006833, 1e-3);
        QVERIFY_CLOSE(outerLossPenalty(1e9, 4, 100) - outerLossPenalty(1e9, 4, 30), 0.011171, 1e-3);
        // Fewer syncs cost more.
        QVERIFY(outerLossPenalty(1e9, 2, 300) > outerLossPenalty(1e9, 2, 100));
    }

    void tokenMultiplierOnChinchilla() {
        // N = 1e9, D = 2e10: L = 1.69 + 406.4 / N^0.34 + 410.7 / D^0.28 =
        // 2.58005; 1% more loss needs L / 1.01 on the curve: 1.19050 D.
        QVERIFY_CLOSE(outerTokenMultiplier(1e9, 2e10, 0.01), 1.190496, 1e-5);
        QCOMPARE(outerTokenMultiplier(1e9, 2e10, 0), 1.0);
        QVERIFY(outerTokenMultiplier(1e9, 2e10, -0.005) < 1);
        QVERIFY(std::isinf(outerTokenMultiplier(1e9, 2e10, 0.5)));
    }

    void thinLinkFavoursDilocoOnTimeToLoss() {
        for (const double gbps : {400.0, 51200.0}) {
            Scenario sc = campus(gbps);
            const Evaluation sync = evaluated(sc);
            sc.plan.outer_sync = diloco(100);
            const Evaluation lo = evaluated(sc);
            QVERIFY(sync.run && lo.run);
            // Equal tokens: DiLoCo's step is never much slower ...
            QVERIFY(lo.step_time_s < sync.step_time_s * 1.05);
            // ... but it needs more tokens to reach the same loss.
            QVERIFY(lo.outer_sync->token_multiplier > 1);
            QVERIFY_CLOSE(lo.run->tokens_to_loss,
                          lo.outer_sync->token_multiplier * sync.run->tokens_to_loss, 1e-6);
            if (gbps < 1000)
                QVERIFY2(lo.run->time_to_loss_s < sync.run->time_to_loss_s,
                         numbers(lo.run->time_to_loss_s, sync.run->time_to_loss_s));
            else
                QVERIFY2(lo.run->time_to_loss_s > sync.run->time_to_loss_s,
                         numbers(lo.run->time_to_loss_s, sync.run->time_to_loss_s));
        }
    }

    // A degraded link (docs/RUN.md "Stragglers"): for its share of the time
    // the step is what it is with the link at its degraded bandwidth; a
    // synchronous step waits on it every step, DiLoCo only in its syncs.
    void degradedLinkCostsSynchronousDpMore() {
        const double fraction = 0.05, degraded = 800;
        Scenario sc = campus(6400);
        Scenario slow = sc;
        for (Link& l : sc.cluster.links) {
            l.degraded_fraction = fraction;
            l.degraded_bandwidth_gbps = degraded;
        }
        for (Link& l : slow.cluster.links)
            l.bandwidth_gbps = degraded;
        double lost[2] = {0, 0};
        for (int outer = 0; outer < 2; ++outer) {
            if (outer) {
                sc.plan.outer_sync = diloco(100);
                slow.plan.outer_sync = diloco(100);
            }
            const Evaluation ev = evaluated(sc);
            const Evaluation cut = evaluated(slow);
            QCOMPARE(int(ev.degraded_steps.size()), 1);
            QCOMPARE(ev.degraded_steps[0].link, std::string("B1-B2"));
            // The degraded step is the plan on a link of the degraded
            // capacity (the cut is background on the same topology).
            QVERIFY2(std::abs(ev.degraded_steps[0].step_time_s / cut.step_time_s - 1) < 1e-3,
                     numbers(ev.degraded_steps[0].step_time_s, cut.step_time_s));
            QVERIFY(cut.step_time_s > ev.step_time_s);
            QVERIFY_CLOSE(ev.goodput.degraded_links_s,
                          fraction * (ev.degraded_steps[0].step_time_s - ev.step_time_s), 1e-9);
            // Goodput carries it: the same plan without the degradation is
            // better by about the expected extra over the wall step.
            Scenario clean = sc;
            for (Link& l : clean.cluster.links)
                l.degraded_fraction = l.degraded_bandwidth_gbps = 0;
            const Evaluation ok = evaluated(clean);
            QVERIFY(ok.degraded_steps.empty());
            QCOMPARE(ok.goodput.degraded_links_s, 0.0);
            QVERIFY(ev.goodput.goodput < ok.goodput.goodput);
            lost[outer] = ev.goodput.degraded_links_s / ev.step_time_s;
        }
        // Decoupled training loses a smaller share of its step.
        QVERIFY2(lost[1] < 0.5 * lost[0], numbers(lost[1], lost[0]));
    }

    void optimizerPicksByTimeToLoss() {
        for (const double gbps : {400.0, 51200.0}) {
            const Scenario sc = campus(gbps);
            const Evaluator e(sc.cluster);
            OptimizerOptions o;
            o.objective = Objective::TimeToLoss;
            o.baselines = false;
            o.threads = 2;
            o.space.tp = {8};
            o.space.pp = {16};
            o.space.cp = {1};
            o.space.micro_batch = {1};
            o.space.vary_links = false;
            // DP across, as given: with PP across on the table, the thin
            // link's answer is PP across (its activations fit the link).
            o.space.placement_kinds = {"dp-across"};
            o.space.outer_syncs = {std::nullopt, diloco(100)};
            const OptimizerResult r = optimize(e, sc.model, sc.plan, o);
            QVERIFY(!r.top.empty());
            const ScoredPlan& best = r.top.front();
            if (gbps < 1000)
                QVERIFY2(best.plan.outer_sync.has_value(), best.label.c_str());
            else
                QVERIFY2(!best.plan.outer_sync.has_value(), best.label.c_str());
            // Ranked by what it says.
            for (std::size_t i = 1; i < r.top.size(); ++i)
                QVERIFY(r.top[i - 1].run.time_to_loss_s <= r.top[i].run.time_to_loss_s);
        }
    }
};

QTEST_GUILESS_MAIN(TestOuter)
#include "tst_outer.moc"

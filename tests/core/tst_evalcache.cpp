// sa::EvaluationCache: what one thread keeps from one evaluation to the next
// (layout, transports, P2P, DP and ZeRO-3 collectives, layer costs, pipeline
// simulations) must never change a result. Every check compares a cached
// evaluation with a fresh one, field by field through the JSON output.

#include "cost/compute.h"
#include "cost/evaluate.h"
#include "explore/designspace.h"
#include "export/evaluation_json.h"
#include "formats/documents.h"

#include "../common/fixtures.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>

using namespace sa;
using sa::testing::loadSampleScenario;

namespace {

const char* const kSamples[] = {"three-buildings-405b.json", "two-buildings-mixtral.json",
                                "hetero-70b.json", "single-building-gpt3-175b.json",
                                "three-buildings-405b-pp-across.json"};

// One line per outcome: the evaluation as JSON (the timeline's ops as a
// digest of their exact fields, which is much cheaper), or the error.
std::string outcome(const EvaluationResult& r, bool timeline) {
    if (const auto* err = std::get_if<EvaluationError>(&r))
        return "error: " + err->str();
    const Evaluation& ev = std::get<Evaluation>(r);
    std::string out = evaluationToJson(ev, false).dump();
    if (timeline) {
        std::uint64_t h = 1469598103934665603ull; // FNV-1a
        auto mix = [&](const void* p, std::size_t n) {
            for (std::size_t i = 0; i < n; ++i) {
                h ^= static_cast<const unsigned char*>(p)[i];
                h *= 1099511628211ull;
            }
        };
        for (const TimelineOp& op : ev.timeline.ops) {
            const int ints[] = {int(op.kind), op.stage, op.chunk, op.microbatch,
                                int(op.cross_building)};
            const double reals[] = {op.start_s, op.end_s, op.exposed_s};
            mix(ints, sizeof ints);
            mix(reals, sizeof reals);
        }
        out += " timeline " + std::to_string(ev.timeline.ops.size()) + " ops " + std::to_string(h);
    }
    return out;
}

// Candidates of a sample's design space in the optimizer's order (last axis
// fastest), a few structures, every combination of the first six axes, and
// each link axis moved once: the inputs the cache keys on all change.
std::vector<Plan> candidatePlans(const Scenario& s, std::size_t perStructure) {
    DesignSpace space(s.cluster, s.model, s.plan);
    std::vector<Plan> plans;
    const std::size_t n = space.structureCount();
    const std::size_t step = std::max<std::size_t>(1, n / 6);
    for (std::size_t st = 0; st < n; st += step) {
        Candidate c;
        c.structure = std::uint32_t(st);
        c.choice.assign(std::size_t(space.axisCount()), 0);
        std::size_t taken = 0;
        while (taken < perStructure) {
            if (!space.precheck(c)) {
                plans.push_back(space.plan(c, false));
                ++taken;
            }
            int a = DesignSpace::kDpAlgo;
            for (; a >= 0; --a) {
                if (++c.choice[std::size_t(a)] < space.choices(st, a))
                    break;
                c.choice[std::size_t(a)] = 0;
            }
            if (a < 0)
                break;
        }
        for (int a = DesignSpace::kFirstLink; a < space.axisCount(); ++a)
            if (space.choices(st, a) > 1) {
                Candidate l = c;
                l.choice.assign(std::size_t(space.axisCount()), 0);
                l.choice[std::size_t(a)] = 1;
                if (!space.precheck(l))
                    plans.push_back(space.plan(l, false));
            }
    }
    return plans;
}

const EvaluateOptions kLean{false, false, false};
const EvaluateOptions kLeanTraffic{false, false, true};

} // namespace

class TestEvalCache : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cachedEqualsFresh_data();
    void cachedEqualsFresh();
    void cachedEqualsFreshAcrossClusters();
    void cachedEqualsFreshForEvaluatorsAtOneAddress();
    void leanEqualsDetail_data();
    void leanEqualsDetail();
    void layoutReusedOnlyWhenPlacementIsTheSame();
    void layerPlanKeyCoversWhatCostsRead();
};

void TestEvalCache::cachedEqualsFresh_data() {
    QTest::addColumn<QString>("file");
    for (const char* f : kSamples)
        QTest::newRow(f) << QString::fromLatin1(f);
}

// The optimizer's order, then the same plans backwards (so every memo sees
// its inputs come back out of order), with full evaluations (timeline,
// breakdown, links) mixed in on the same cache.
void TestEvalCache::cachedEqualsFresh() {
    QFETCH(QString, file);
    const Scenario s = loadSampleScenario(file.toStdString());
    const Evaluator evaluator(s.cluster);
    std::vector<Plan> plans;
    // Each pipelined candidate also with blocking P2P, right after it: the
    // pipeline memo must tell the two apart.
    for (const Plan& candidate : candidatePlans(s, 48)) {
        plans.push_back(candidate);
        if (candidate.parallelism.pp > 1) {
            plans.push_back(candidate);
            plans.back().p2p_overlap = false;
        }
    }
    QVERIFY2(plans.size() > 100, "too few candidates to exercise the cache");
    const std::size_t forward = plans.size();
    for (std::size_t i = forward; i-- > 0;)
        plans.push_back(plans[i]);

    EvaluationCache cache;
    int compared = 0, full = 0;
    for (std::size_t i = 0; i < plans.size(); ++i) {
        const Plan& plan = plans[i];
        const bool detail = i % 7 == 3;
        const EvaluateOptions& options =
            detail ? EvaluateOptions{} : (i % 2 ? kLeanTraffic : kLean);
        const std::string fresh = outcome(evaluator.evaluate(s.model, plan, options), detail);
        const std::string cached =
            outcome(evaluator.evaluate(s.model, plan, options, &cache), detail);
        if (fresh != cached)
            QFAIL(qPrintable(QStringLiteral("plan %1 (%2): cached differs\nfresh:  %3\ncached: %4")
                                 .arg(i)
                                 .arg(detail ? "full" : "lean")
                                 .arg(QString::fromStdString(fresh.substr(0, 400)))
                                 .arg(QString::fromStdString(cached.substr(0, 400)))));
        ++compared;
        full += detail;
    }
    QVERIFY(full > 10);
    // The cache was used, not bypassed.
    QVERIFY(cache.layoutHits() > 0);
    QVERIFY(cache.layoutMisses() > 1);
    QCOMPARE(cache.layoutHits() + cache.layoutMisses(), std::int64_t(compared));
}

// One cache handed between two clusters: nothing of one may leak into the
// other.
void TestEvalCache::cachedEqualsFreshAcrossClusters() {
    const Scenario a = loadSampleScenario("three-buildings-405b.json");
    const Scenario b = loadSampleScenario("two-buildings-405b.json");
    const Evaluator ea(a.cluster), eb(b.cluster);
    const std::vector<Plan> pa = candidatePlans(a, 24), pb = candidatePlans(b, 24);
    EvaluationCache cache;
    const std::size_t n = std::min(pa.size(), pb.size());
    QVERIFY(n > 20);
    for (std::size_t i = 0; i < n; ++i) {
        for (int which = 0; which < 2; ++which) {
            const Evaluator& e = which ? eb : ea;
            const Scenario& s = which ? b : a;
            const Plan& plan = which ? pb[i] : pa[i];
            QCOMPARE(outcome(e.evaluate(s.model, plan, kLeanTraffic, &cache), false),
                     outcome(e.evaluate(s.model, plan, kLeanTraffic), false));
        }
    }
}

// Evaluators made one after another in the same storage (same address):
// the cache must still see them as different clusters.
void TestEvalCache::cachedEqualsFreshForEvaluatorsAtOneAddress() {
    const Scenario a = loadSampleScenario("three-buildings-405b.json");
    Scenario b = a;
    // The same plans fit; layer costs, P2P and DP times change.
    for (Link& l : b.cluster.links)
        l.bandwidth_gbps /= 16;
    for (Building& bld : b.cluster.buildings) {
        bld.scale_up_gbps /= 2;
        bld.scale_out_gbps /= 2;
    }
    EvaluationCache cache;
    std::optional<Evaluator> e;
    // A few plans, the same every round: whatever the cache kept from the
    // previous round would fit them.
    std::vector<Plan> plans = candidatePlans(a, 8);
    QVERIFY(plans.size() > 3);
    plans.resize(3);
    for (int round = 0; round < 4; ++round) {
        const Scenario& s = round % 2 ? b : a;
        const Evaluator* before = e ? &*e : nullptr;
        e.reset();
        e.emplace(s.cluster);
        if (before)
            QCOMPARE(&*e, before);
        for (const Plan& plan : plans)
            QCOMPARE(outcome(e->evaluate(s.model, plan, kLean, &cache), false),
                     outcome(e->evaluate(s.model, plan, kLean), false));
    }
}

void TestEvalCache::leanEqualsDetail_data() {
    cachedEqualsFresh_data();
}

// The optimizer evaluates lean (no breakdown, no per-link usage): what it
// ranks by must be exactly what the full evaluation reports, ZeRO-3's and
// EP's cross-building traffic included.
void TestEvalCache::leanEqualsDetail() {
    QFETCH(QString, file);
    const Scenario s = loadSampleScenario(file.toStdString());
    const Evaluator evaluator(s.cluster);
    EvaluationCache cache;
    int zero3 = 0, ep = 0, compared = 0;
    for (const Plan& plan : candidatePlans(s, 24)) {
        const EvaluationResult lean = evaluator.evaluate(s.model, plan, kLean, &cache);
        EvaluateOptions full;
        full.timeline = false;
        full.validate = false;
        const EvaluationResult detail = evaluator.evaluate(s.model, plan, full);
        QCOMPARE(lean.index(), detail.index());
        if (lean.index() != 0)
            continue;
        const Evaluation& a = std::get<Evaluation>(lean);
        const Evaluation& b = std::get<Evaluation>(detail);
        const Parallelism& par = plan.parallelism;
        const std::string what = "tp" + std::to_string(par.tp) + " cp" + std::to_string(par.cp) +
                                 " pp" + std::to_string(par.pp) + " dp" + std::to_string(par.dp) +
                                 " ep" + std::to_string(par.ep) + " zero" +
                                 std::to_string(plan.zero_stage);
        QVERIFY2(a.step_time_s == b.step_time_s, what.c_str());
        QVERIFY2(a.cross_building_bytes == b.cross_building_bytes, what.c_str());
        QVERIFY2(a.mfu == b.mfu, what.c_str());
        QVERIFY2(a.tokens_per_s == b.tokens_per_s, what.c_str());
        QVERIFY2(a.memory.peak_gib_per_gpu == b.memory.peak_gib_per_gpu, what.c_str());
        QCOMPARE(a.memory.fits, b.memory.fits);
        zero3 += plan.zero_stage == 3 && plan.parallelism.dp > 1 && b.cross_building_bytes > 0;
        ep += plan.parallelism.ep > 1;
        ++compared;
    }
    QVERIFY(compared > 50);
    if (file.startsWith(QLatin1String("three")))
        QVERIFY2(zero3 > 0, "no ZeRO-3 plan with cross-building traffic among the candidates");
    if (file.contains(QLatin1String("mixtral")))
        QVERIFY2(ep > 0, "no EP plan among the candidates");
}

void TestEvalCache::layoutReusedOnlyWhenPlacementIsTheSame() {
    const Scenario s = loadSampleScenario("three-buildings-405b.json");
    const Evaluator evaluator(s.cluster);
    EvaluationCache cache;
    QVERIFY(std::holds_alternative<Evaluation>(evaluator.evaluate(s.model, s.plan, kLean, &cache)));
    QCOMPARE(cache.layoutMisses(), std::int64_t(1));

    // Schedule, recompute, ZeRO and the DP algorithm leave the cell grid
    // alone: reused.
    Plan p = s.plan;
    p.schedule = {ScheduleKind::OneFOneB, 1};
    p.recompute = Recompute::Full;
    p.zero_stage = 1;
    p.collectives[Dim::DP] = CollectiveAlgo::Tree;
    QVERIFY(std::holds_alternative<Evaluation>(evaluator.evaluate(s.model, p, kLean, &cache)));
    QCOMPARE(cache.layoutHits(), std::int64_t(1));
    QCOMPARE(cache.layoutMisses(), std::int64_t(1));

    // The rank order moves cells between buildings: rebuilt, and the result
    // is the fresh one.
    p.rank_order = {Dim::TP, Dim::CP, Dim::DP, Dim::PP};
    const std::string cached = outcome(evaluator.evaluate(s.model, p, kLean, &cache), false);
    QCOMPARE(cache.layoutMisses(), std::int64_t(2));
    QCOMPARE(cached, outcome(evaluator.evaluate(s.model, p, kLean), false));

    // A plan the placement rejects is reported as such, with or without the
    // cache, and does not poison the next evaluation.
    Plan bad = s.plan;
    bad.placement = Placement{};
    bad.placement->runs.push_back({0, bad.parallelism.pp - 1, 0, bad.parallelism.dp - 1, "B1"});
    const std::string badCached = outcome(evaluator.evaluate(s.model, bad, kLean, &cache), false);
    QVERIFY2(badCached.rfind("error:", 0) == 0, badCached.c_str());
    QCOMPARE(badCached, outcome(evaluator.evaluate(s.model, bad, kLean), false));
    QCOMPARE(outcome(evaluator.evaluate(s.model, p, kLean, &cache), false), cached);
}

// The layer costs are kept by layerPlanKey: changing any plan field outside
// it must leave them as they are.
void TestEvalCache::layerPlanKeyCoversWhatCostsRead() {
    const Scenario s = loadSampleScenario("two-buildings-mixtral.json");
    const Building& bld = s.cluster.buildings.front();
    struct Costs {
        LayerCost dense, moe;
        EdgeCost embedding, logits;
        bool operator==(const Costs&) const = default;
    };
    auto costsOf = [&](const Plan& plan) {
        LayerContext ctx = layerContext(s.cluster, bld, s.model, plan);
        Costs c;
        c.dense = layerCost(ctx);
        ctx.moe_layer = true;
        c.moe = layerCost(ctx);
        ctx.moe_layer = false;
        c.embedding = embeddingCost(ctx);
        c.logits = logitsCost(ctx);
        return c;
    };
    const Costs base = costsOf(s.plan);
    const std::vector<std::pair<const char*, std::function<void(Plan&)>>> outside = {
        {"zero_stage", [](Plan& p) { p.zero_stage = p.zero_stage == 3 ? 1 : 3; }},
        {"schedule",
         [](Plan& p) {
             p.schedule = {ScheduleKind::Interleaved, 2};
         }},
        {"pp and dp", [](Plan& p) { std::swap(p.parallelism.pp, p.parallelism.dp); }},
        {"rank_order",
         [](Plan& p) {
             p.rank_order = {Dim::CP, Dim::TP, Dim::DP, Dim::PP};
         }},
        {"placement",
         [](Plan& p) {
             p.placement = Placement{{{0, 0, 0, 0, "B2"}}, {}};
         }},
        {"collectives", [](Plan& p) { p.collectives[Dim::DP] = CollectiveAlgo::Tree; }},
        {"link_technologies",
         [](Plan& p) {
             p.link_technologies["x"] = {"tcp", 8};
         }},
        {"dp_overlap", [](Plan& p) { p.dp_overlap = !p.dp_overlap; }},
        {"p2p_overlap", [](Plan& p) { p.p2p_overlap = !p.p2p_overlap; }},
        {"dp_bucket_mib", [](Plan& p) { p.dp_bucket_mib *= 2; }},
        {"grad_reduce_bytes", [](Plan& p) { p.grad_reduce_bytes = 2; }},
        {"global_batch", [](Plan& p) { p.global_batch_sequences *= 2; }},
        {"latency_hiding", [](Plan& p) { p.schedule.latency_hiding = !p.schedule.latency_hiding; }},
    };
    for (const auto& [what, change] : outside) {
        Plan p = s.plan;
        change(p);
        QCOMPARE(layerPlanKey(p), layerPlanKey(s.plan));
        if (!(costsOf(p) == base))
            QFAIL(qPrintable(QStringLiteral("changing %1 changed the layer costs: add it to "
                                            "LayerPlanKey")
                                 .arg(what)));
    }
    // And the fields inside it do matter (the comparison can fail).
    Plan q = s.plan;
    q.recompute = q.recompute == Recompute::Full ? Recompute::None : Recompute::Full;
    QVERIFY(!(layerPlanKey(q) == layerPlanKey(s.plan)));
    QVERIFY(!(costsOf(q) == base));
    // Zero-bubble is in it: the host paces its weight gradients apart.
    Plan z = s.plan;
    z.schedule = {ScheduleKind::ZeroBubble, 1};
    QVERIFY(!(layerPlanKey(z) == layerPlanKey(s.plan)));
    QCOMPARE(planOf(layerPlanKey(z)).schedule.kind, ScheduleKind::ZeroBubble);
}

QTEST_GUILESS_MAIN(TestEvalCache)
#include "tst_evalcache.moc"

// The optimizer: the best plan of a small space enumerated here by brute
// force, the same answer on any number of threads, cancel within 100 ms,
// every returned plan re-evaluating to its reported figures, shards merging
// to the unsharded result, and the baselines seeding the search.

#include "cost/evaluate.h"
#include "cost/placement.h"
#include "explore/baselines.h"
#include "explore/designspace.h"
#include "explore/optimizer.h"
#include "explore/results.h"
#include "formats/documents.h"

#include "../common/candidates.h"
#include "../common/small_search.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

using namespace sa;
using namespace sa::testing;

namespace {

struct Brute {
    Candidate key;
    double step = 0, bytes = 0;
};

bool sameResults(const OptimizerResult& a, const OptimizerResult& b) {
    if (a.top.size() != b.top.size() || a.pareto.size() != b.pareto.size())
        return false;
    for (std::size_t i = 0; i < a.top.size(); ++i)
        if (a.top[i].key != b.top[i].key || a.top[i].step_time_s != b.top[i].step_time_s ||
            a.top[i].plan != b.top[i].plan)
            return false;
    for (std::size_t i = 0; i < a.pareto.size(); ++i)
        if (a.pareto[i].key != b.pareto[i].key ||
            a.pareto[i].cross_building_bytes != b.pareto[i].cross_building_bytes)
            return false;
    return a.evaluated == b.evaluated && a.feasible == b.feasible && a.pruned == b.pruned &&
           a.strategy.name == b.strategy.name && a.strategy.rounds == b.strategy.rounds;
}

} // namespace

class TestOptimizer : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void findsTheBruteForceBest();
    void sameAnswerOnAnyThreadCount();
    void cancelStopsWithin100ms();
    void returnedPlansReevaluate();
    void shardsMergeToTheUnshardedResult();
    void baselinesFollowTheirRecipes();
    void designSpaceKeepsLinkKnobs();
    void designSpaceChoosesTheCpExchange();
    void designSpaceKeepsTheHsdpGroup();
    void candidatesKeepTheFramework();
    void designSpaceOfTheSample();
    void designSpaceFoldsExpertsForMoe();
    void cliShardsAndMerge();
};

void TestOptimizer::findsTheBruteForceBest() {
    const Cluster cluster = smallCluster(false);
    const Model model = smallModel();
    const Plan base = basePlan(128);
    const DesignSpace space(cluster, model, base, smallSpace());
    QVERIFY(space.structureCount() > 0);
    const Evaluator evaluator(cluster);

    // Brute force: every candidate through the full, validating evaluation.
    std::vector<Brute> feasible;
    int memoryRejected = 0;
    for (const Candidate& c : everyCandidate(space)) {
        const Plan p = space.plan(c);
        const auto res = evaluator.evaluate(model, p, {false, true, true});
        const char* why = space.precheck(c);
        if (const auto* err = std::get_if<EvaluationError>(&res)) {
            // Only placements too large for a building may fail, never validation.
            QVERIFY2(err->str().find("would hold") != std::string::npos, err->str().c_str());
            continue;
        }
        const Evaluation& ev = std::get<Evaluation>(res);
        // The cheap memory check is a lower bound: it never rejects a plan that fits.
        if (why && std::string(why).rfind("memory", 0) == 0) {
            QVERIFY2(!ev.memory.fits, space.label(c).c_str());
            continue;
        }
        if (!ev.memory.fits) {
            ++memoryRejected;
            continue;
        }
        if (why) // a duplicate of another candidate
            continue;
        feasible.push_back({c, ev.step_time_s, std::round(ev.cross_building_bytes)});
    }
    QVERIFY(feasible.size() > 20);
    QVERIFY(memoryRejected > 0);
    std::sort(feasible.begin(), feasible.end(), [](const Brute& a, const Brute& b) {
        if (a.step != b.step)
            return a.step < b.step;
        if (a.bytes != b.bytes)
            return a.bytes < b.bytes;
        return a.key < b.key;
    });

    OptimizerOptions o;
    o.space = smallSpace();
    o.max_evaluations = 1000000;
    o.baselines = false;
    o.top_k = 5;
    o.threads = 2;
    const OptimizerResult r = optimize(evaluator, model, base, o);
    QCOMPARE(r.strategy.name, std::string("exhaustive"));
    QVERIFY(!r.top.empty());
    QCOMPARE(r.top.front().key, feasible.front().key);
    QCOMPARE(r.top.front().step_time_s, feasible.front().step);
    QCOMPARE(r.feasible, std::int64_t(feasible.size()));
    // Top-5 of distinct scores, each by its smallest key.
    std::vector<Brute> distinct;
    for (const Brute& b : feasible)
        if (distinct.empty() || distinct.back().step != b.step || distinct.back().bytes != b.bytes)
            distinct.push_back(b);
    QCOMPARE(r.top.size(), std::min<std::size_t>(5, distinct.size()));
    for (std::size_t i = 0; i < r.top.size(); ++i)
        QCOMPARE(r.top[i].key, distinct[i].key);
    // The Pareto set of (step, bytes).
    std::vector<Brute> front;
    for (const Brute& b : feasible)
        if (front.empty() || b.bytes < front.back().bytes)
            front.push_back(b);
    QCOMPARE(r.pareto.size(), front.size());
    for (std::size_t i = 0; i < front.size(); ++i)
        QCOMPARE(r.pareto[i].key, front[i].key);
    // Every candidate is counted once: evaluated, or pruned with a reason.
    std::int64_t prunedCandidates = 0;
    for (const auto& [why, n] : r.pruned)
        if (why.rfind("structure: ", 0) != 0)
            prunedCandidates += n;
    QCOMPARE(r.enumerated, std::int64_t(everyCandidate(space).size()));
    QCOMPARE(prunedCandidates + r.feasible, r.enumerated);
    QVERIFY(r.evaluated >= r.feasible);
    QVERIFY(r.pruned.count("invalid plan (validation)") == 0);
    QVERIFY(r.pruned.count("memory (lower bound before evaluation)") == 1);
    QVERIFY(r.pruned.count("memory (evaluated)") == 1);
}

void TestOptimizer::sameAnswerOnAnyThreadCount() {
    const SmallProblem problem;
    const Evaluator evaluator(problem.cluster);
    OptimizerOptions o;
    o.space = smallSpace();
    o.space.vary_links = true;
    o.max_evaluations = 150; // forces the staged strategy
    o.seeds = 3;
    o.baselines = false;
    std::vector<OptimizerResult> runs;
    for (int threads : {1, 2, 4}) {
        o.threads = threads;
        runs.push_back(optimize(evaluator, problem.model, problem.base, o));
    }
    QCOMPARE(runs.front().strategy.name, std::string("staged"));
    QVERIFY(runs.front().strategy.rounds >= 1);
    QVERIFY(!runs.front().top.empty());
    for (std::size_t i = 1; i < runs.size(); ++i)
        QVERIFY2(sameResults(runs.front(), runs[i]),
                 ("threads differ: run " + std::to_string(i)).c_str());
}

void TestOptimizer::cancelStopsWithin100ms() {
    auto loaded = loadScenarioFile(sampleScenarioFile("three-buildings-405b.json"));
    QVERIFY(loaded.ok());
    const Evaluator evaluator(loaded.value->cluster);
    std::atomic<bool> cancel{false};
    std::atomic<std::int64_t> progressed{0};
    OptimizerOptions o;
    o.cancel = &cancel;
    o.threads = 2;
    // The search itself, so that the cancel lands between candidates (with
    // the baselines first, a slow build, such as under ThreadSanitizer, is
    // still in their setup when the wait below runs out).
    o.baselines = false;
    o.progress = [&](std::int64_t done, std::int64_t) { progressed = done; };
    std::atomic<bool> finished{false};
    std::chrono::steady_clock::time_point end;
    OptimizerResult r;
    std::thread worker([&] {
        r = optimize(evaluator, loaded.value->model, loaded.value->plan, o);
        end = std::chrono::steady_clock::now();
        finished = true;
    });
    // Let the search get going, then cancel from this thread.
    QElapsedTimer wait;
    wait.start();
    while (progressed.load() < 20 && !finished && wait.elapsed() < 20000)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto start = std::chrono::steady_clock::now();
    cancel = true;
    worker.join();
    const double ms = std::chrono::duration<double, std::milli>(end - start).count();
    qInfo("cancel took %.1f ms after %lld candidates", ms,
          static_cast<long long>(progressed.load()));
    QVERIFY(r.cancelled);
    QVERIFY2(ms < 100, std::to_string(ms).c_str());
}

void TestOptimizer::returnedPlansReevaluate() {
    const SmallProblem problem;
    const Evaluator evaluator(problem.cluster);
    OptimizerOptions o;
    o.space = smallSpace();
    o.space.vary_links = true;
    o.space.zero_stages = {1, 2, 3};
    o.max_evaluations = 400;
    o.seeds = 2;
    o.threads = 2;
    const OptimizerResult r = optimize(evaluator, problem.model, problem.base, o);
    QVERIFY(!r.top.empty());
    QVERIFY(!r.pareto.empty());
    std::vector<ScoredPlan> all = r.top;
    all.insert(all.end(), r.pareto.begin(), r.pareto.end());
    for (const ScoredPlan& p : all) {
        // A complete plan document: written and read back unchanged.
        const auto back = parsePlan(dumpCanonical(toJson(p.plan)), "plan.json");
        QVERIFY2(back.ok(), p.label.c_str());
        QVERIFY(*back.value == p.plan);
        // The full evaluation, validation included, gives the reported figures.
        const auto res = evaluator.evaluate(problem.model, p.plan, {true, true, true});
        QVERIFY2(std::holds_alternative<Evaluation>(res), p.label.c_str());
        const Evaluation& ev = std::get<Evaluation>(res);
        QCOMPARE(ev.step_time_s, p.step_time_s);
        QVERIFY(ev.memory.fits);
        QVERIFY2(std::abs(ev.cross_building_bytes - p.cross_building_bytes) <= 1.0,
                 (p.label + ": " + std::to_string(ev.cross_building_bytes) + " vs " +
                  std::to_string(p.cross_building_bytes))
                     .c_str());
        QCOMPARE(ev.gpus, p.gpus);
    }
    // Baselines re-evaluate too.
    QCOMPARE(r.baselines.size(), std::size_t(5)); // as given and four recipes
    for (const BaselineResult& b : r.baselines) {
        if (b.name == "as-given" && !b.feasible)
            continue; // the small problem's base plan need not fit
        QVERIFY2(b.feasible, (b.name + ": " + b.problem).c_str());
        const auto res = evaluator.evaluate(problem.model, b.plan, {false, true, true});
        QVERIFY(std::holds_alternative<Evaluation>(res));
        QCOMPARE(std::get<Evaluation>(res).step_time_s, b.step_time_s);
    }
}

void TestOptimizer::shardsMergeToTheUnshardedResult() {
    const Cluster cluster = smallCluster(false);
    const Model model = smallModel();
    const Plan base = basePlan(128);
    const Evaluator evaluator(cluster);
    OptimizerOptions o;
    o.space = smallSpace();
    o.space.vary_links = true;
    o.max_evaluations = 1000000;
    o.baselines = false;
    o.threads = 2;
    const OptimizerResult whole = optimize(evaluator, model, base, o);
    QCOMPARE(whole.strategy.name, std::string("exhaustive"));
    std::vector<OptimizerResult> shards;
    for (int i = 0; i < 3; ++i) {
        o.shard_index = i;
        o.shard_count = 3;
        const OptimizerResult s = optimize(evaluator, model, base, o);
        QVERIFY(s.evaluated < whole.evaluated);
        // Through JSON, as `scaleacross merge` reads them.
        auto back = parseOptimizerResult(toJson(s).dump(), "shard.json");
        QVERIFY2(back.ok(), back.problems.empty() ? "" : back.problems.front().str().c_str());
        shards.push_back(std::move(*back.value));
    }
    std::vector<std::string> problems;
    const OptimizerResult merged = mergeResults(shards, &problems);
    QVERIFY(problems.empty());
    QVERIFY(sameResults(whole, merged));
    QCOMPARE(merged.enumerated, whole.enumerated);

    // A missing shard is reported.
    shards.pop_back();
    problems.clear();
    mergeResults(shards, &problems);
    QCOMPARE(problems.size(), std::size_t(1));
}

void TestOptimizer::baselinesFollowTheirRecipes() {
    // tst_baselines checks each recipe; here: the search is seeded with
    // every feasible baseline, so none beats its best.
    auto loaded = loadScenarioFile(sampleScenarioFile("three-buildings-405b.json"));
    QVERIFY(loaded.ok());
    const Scenario& s = *loaded.value;
    const Evaluator evaluator(s.cluster);
    OptimizerOptions o;
    o.max_evaluations = 2000;
    o.baseline_evaluations = 400;
    const OptimizerResult r = optimize(evaluator, s.model, s.plan, o);
    QCOMPARE(r.baselines.size(), std::size_t(5));
    QVERIFY(!r.top.empty());
    for (const BaselineResult& b : r.baselines)
        if (b.feasible) {
            QVERIFY2(r.top.front().step_time_s <= b.step_time_s, b.name.c_str());
            QVERIFY(std::find(r.seeded.begin(), r.seeded.end(), b.name) != r.seeded.end());
        }
    QVERIFY(r.seeds_not_in_space.empty());
}

// The base plan's NCCL knobs on a link stay with that link's technology in
// every candidate (the link axes vary the technology and the flows).
void TestOptimizer::candidatesKeepTheFramework() {
    const Cluster cluster = smallCluster(false);
    const Model model = smallModel();
    Plan base = basePlan(128);
    base.framework = TrainingFramework::Torchtitan;
    const DesignSpace space(cluster, model, base, smallSpace());
    int seen = 0;
    for (const Candidate& c : everyCandidate(space)) {
        QCOMPARE(space.plan(c).framework, base.framework);
        ++seen;
    }
    QVERIFY(seen > 0);
    OptimizerOptions o;
    o.space = smallSpace();
    o.baselines = false;
    o.top_k = 3;
    o.threads = 2;
    const OptimizerResult r = optimize(Evaluator(cluster), model, base, o);
    QVERIFY(!r.top.empty());
    for (const ScoredPlan& p : r.top)
        QCOMPARE(p.plan.framework, base.framework);
}

void TestOptimizer::designSpaceKeepsLinkKnobs() {
    auto loaded = loadScenarioFile(sampleScenarioFile("three-buildings-405b.json"));
    QVERIFY(loaded.ok());
    Scenario s = *loaded.value;
    const std::string name = s.cluster.links[0].name.empty()
                                 ? s.cluster.links[0].a + "-" + s.cluster.links[0].b
                                 : s.cluster.links[0].name;
    s.plan.link_technologies[name] = LinkOverride{"", 0, 0, 0, 0, 32};
    const DesignSpace space(s.cluster, s.model, s.plan);
    int axis = -1;
    for (int a = 0; a < space.axisCount(); ++a)
        if (space.isLinkAxis(a) && space.linkOfAxis(a) == name)
            axis = a;
    QVERIFY(axis >= 0);
    Candidate c;
    c.structure = 0;
    c.choice.assign(std::size_t(space.axisCount()), 0);
    int kept = 0, other = 0;
    for (int k = 0; k < space.choices(0, axis); ++k) {
        c.choice[std::size_t(axis)] = std::uint16_t(k);
        const Plan p = space.plan(c);
        const auto it = p.link_technologies.find(name);
        if (it != p.link_technologies.end() && it->second.technology.empty()) {
            QCOMPARE(it->second.buffsize_mib, 32.0);
            ++kept;
        } else {
            QVERIFY(it == p.link_technologies.end() || it->second.buffsize_mib == 0);
            ++other;
        }
    }
    QVERIFY(kept >= 1);
    QVERIFY(other >= 1);
}

// With cp > 1 the space chooses how CP exchanges the attention's inputs:
// Transformer Engine's ring, all-gather and, where a TP rank's heads split
// over cp, all-to-all; a plan on PyTorch's ring keeps to its two rotations.
void TestOptimizer::designSpaceChoosesTheCpExchange() {
    auto loaded = loadScenarioFile(sampleScenarioFile("single-building-70b.json"));
    QVERIFY(loaded.ok());
    Scenario s = *loaded.value; // Llama 3 70B: 64 heads, 8 KV heads
    DesignSpaceOptions o;
    o.tp = {2, 8};
    o.cp = {1, 2, 4};
    o.pp = {4};
    o.micro_batch = {1};
    o.vary_placement = o.vary_links = false;
    const auto ringsOf = [&](const DesignSpace& space, int tp, int cp) {
        std::vector<std::string> out;
        for (std::size_t st = 0; st < space.structureCount(); ++st) {
            const Parallelism& par = space.structure(st).parallelism;
            if (par.tp != tp || par.cp != cp)
                continue;
            Candidate c;
            c.structure = std::uint32_t(st);
            c.choice.assign(std::size_t(space.axisCount()), 0);
            for (int k = 0; k < space.choices(st, DesignSpace::kCpExchange); ++k) {
                c.choice[DesignSpace::kCpExchange] = std::uint16_t(k);
                const Plan p = space.plan(c);
                out.push_back(toString(p.cp_ring) +
                              (p.cp_a2a_size > 1 ? " " + std::to_string(p.cp_a2a_size) : ""));
                // Every choice is a valid plan the space finds again.
                if (!validateScenario({s.cluster, s.model, p}).empty())
                    out.push_back("invalid");
                const auto back = space.locate(p);
                if (!back || !(*back == c))
                    out.push_back("not located");
                if (cp == 1 && space.label(c).find("| cp ") != std::string::npos)
                    out.push_back("labelled");
            }
            break;
        }
        return out;
    };
    s.plan.cp_ring = CpRing::TeP2p;
    const DesignSpace te(s.cluster, s.model, s.plan, o);
    QCOMPARE(ringsOf(te, 2, 1), std::vector<std::string>{"te-p2p"});
    // tp 2: 32 heads and 4 KV heads a rank split over cp 2.
    QCOMPARE(ringsOf(te, 2, 2), (std::vector<std::string>{"te-p2p", "te-allgather", "te-a2a"}));
    // tp 8: one KV head a rank, no all-to-all.
    QCOMPARE(ringsOf(te, 8, 2), (std::vector<std::string>{"te-p2p", "te-allgather"}));
    // The base plan's exchange comes first.
    s.plan.cp_ring = CpRing::TeA2a;
    const DesignSpace a2a(s.cluster, s.model, s.plan, o);
    QCOMPARE(ringsOf(a2a, 2, 2), (std::vector<std::string>{"te-a2a", "te-p2p", "te-allgather"}));
    QCOMPARE(ringsOf(a2a, 8, 2), (std::vector<std::string>{"te-p2p", "te-allgather"}));
    // cp 4 at tp 2: the all-to-all over all four and the ring's hierarchical
    // form over pairs; the base plan's form first.
    QCOMPARE(ringsOf(te, 2, 4),
             (std::vector<std::string>{"te-p2p", "te-allgather", "te-a2a", "te-p2p 2"}));
    s.plan.cp_ring = CpRing::TeP2p;
    s.plan.parallelism.cp = 4;
    s.plan.parallelism.dp /= 4;
    s.plan.cp_a2a_size = 2;
    const DesignSpace hier(s.cluster, s.model, s.plan, o);
    QCOMPARE(ringsOf(hier, 2, 4),
             (std::vector<std::string>{"te-p2p 2", "te-p2p", "te-allgather", "te-a2a"}));
    QCOMPARE(ringsOf(hier, 2, 1), std::vector<std::string>{"te-p2p"});
    s.plan.cp_a2a_size = 1;
    s.plan.cp_ring = CpRing::TorchAllToAll;
    const DesignSpace torch(s.cluster, s.model, s.plan, o);
    QCOMPARE(ringsOf(torch, 2, 2), (std::vector<std::string>{"torch-alltoall", "torch-allgather"}));
    QCOMPARE(te.axisName(DesignSpace::kCpExchange), std::string("cp-exchange"));
}

// The base plan's HSDP group (dp_shard) goes with every candidate that can
// run it (its dp a multiple of the group, above it, and ZeRO on); the
// others have one group. Every candidate passes the plan check.
void TestOptimizer::designSpaceKeepsTheHsdpGroup() {
    auto loaded = loadScenarioFile(sampleScenarioFile("single-building-70b.json"));
    QVERIFY(loaded.ok());
    Scenario s = *loaded.value;
    s.plan.dp_shard = 16;
    QVERIFY(s.plan.parallelism.dp % 16 == 0 && s.plan.parallelism.dp > 16);
    QVERIFY(validateScenario(s).empty());
    DesignSpaceOptions o;
    o.vary_placement = o.vary_links = false;
    const DesignSpace space(s.cluster, s.model, s.plan, o);
    int kept = 0, dropped = 0;
    for (std::size_t st = 0; st < space.structureCount(); ++st) {
        Candidate c;
        c.structure = std::uint32_t(st);
        c.choice.assign(std::size_t(space.axisCount()), 0);
        for (int k = 0; k < space.choices(st, DesignSpace::kZero); ++k) {
            c.choice[DesignSpace::kZero] = std::uint16_t(k);
            const Plan p = space.plan(c);
            QVERIFY2(validateScenario({s.cluster, s.model, p}).empty(), space.label(c).c_str());
            const bool runs =
                p.parallelism.dp % 16 == 0 && p.parallelism.dp > 16 && p.zero_stage > 0;
            QCOMPARE(p.dp_shard, runs ? 16 : 0);
            ++(runs ? kept : dropped);
        }
    }
    QVERIFY(kept > 0 && dropped > 0);
}

void TestOptimizer::designSpaceFoldsExpertsForMoe() {
    // An MoE model under TP gets each expert whole on one rank beside its
    // experts over TP (Megatron-Core's MoE parallel folding), with EP then
    // reaching past dp into the cells' TP ranks; every such structure is a
    // valid plan. A dense model, and an explicit etp list of tp, get none.
    auto loaded = loadScenarioFile(sampleScenarioFile("two-buildings-mixtral.json"));
    QVERIFY(loaded.ok());
    const Scenario& s = *loaded.value;
    DesignSpaceOptions o;
    o.vary_placement = o.vary_links = false;
    o.tp = {8};
    o.cp = {1};
    o.pp = {4};
    o.micro_batch = {1};
    struct Count {
        int folded = 0, byTp = 0;
        std::string bad; // a folded structure that is not a valid plan
    };
    const auto count = [&](const DesignSpaceOptions& opt, const Model& m, const Plan& base) {
        const DesignSpace space(s.cluster, m, base, opt);
        Count n;
        for (std::size_t i = 0; i < space.structureCount(); ++i) {
            const Parallelism& par = space.structure(i).parallelism;
            if (par.expertTp() == par.tp) {
                ++n.byTp;
                continue;
            }
            ++n.folded;
            Candidate c;
            c.structure = std::uint32_t(i);
            c.choice.assign(std::size_t(space.axisCount()), 0);
            const Plan p = space.plan(c);
            if (par.expertTp() != 1 || par.ep <= 1 || !par.expertGroupsFit() ||
                !validateScenario({s.cluster, m, p}).empty())
                n.bad = space.label(c);
        }
        return n;
    };
    const Count moe = count(o, s.model, s.plan);
    QVERIFY(moe.folded > 0 && moe.byTp > 0);
    QVERIFY2(moe.bad.empty(), moe.bad.c_str());
    DesignSpaceOptions byTpOnly = o;
    byTpOnly.etp = {8};
    QCOMPARE(count(byTpOnly, s.model, s.plan).folded, 0);
    Model dense = s.model;
    dense.moe.reset();
    Plan densePlan = s.plan;
    densePlan.parallelism.ep = 1;
    QCOMPARE(count(o, dense, densePlan).folded, 0);
}

void TestOptimizer::designSpaceOfTheSample() {
    auto loaded = loadScenarioFile(sampleScenarioFile("three-buildings-405b.json"));
    QVERIFY(loaded.ok());
    const Scenario& s = *loaded.value;
    const DesignSpace space(s.cluster, s.model, s.plan);
    QCOMPARE(space.gpuBudget(), std::int64_t(98304));
    QVERIFY(space.size() > 1e6);
    // The base plan's structure is in the space, and its all-zeros candidate
    // keeps the base plan's choices.
    bool found = false;
    int regional = 0;
    for (std::size_t i = 0; i < space.structureCount(); ++i) {
        const Structure& st = space.structure(i);
        Candidate c;
        c.structure = std::uint32_t(i);
        c.choice.assign(std::size_t(space.axisCount()), 0);
        if (st.parallelism == s.plan.parallelism && st.micro_batch == 1) {
            found = true;
            const Plan p = space.plan(c);
            QCOMPARE(p.schedule, s.plan.schedule);
            QCOMPARE(p.recompute, s.plan.recompute);
            QCOMPARE(p.zero_stage, s.plan.zero_stage);
            QCOMPARE(p.algoFor(Dim::DP), s.plan.algoFor(Dim::DP));
            QCOMPARE(p.rank_order, s.plan.rank_order);
        }
        // Every placement is a valid plan whose cells fit the buildings.
        for (int k = 0; k < space.choices(i, DesignSpace::kPlacement); ++k) {
            c.choice[DesignSpace::kPlacement] = std::uint16_t(k);
            const Plan q = space.plan(c);
            QVERIFY2(validateScenario({s.cluster, s.model, q}).empty(), space.label(c).c_str());
            if (!q.placement || q.placement->runs.empty())
                continue; // the rank-order fill is checked by the cost model
            QVERIFY2(placeCells(s.cluster, q).ok(), space.label(c).c_str());
            // Whole stages per region: PP crosses the long-haul links, DP the campus.
            if (space.choiceLabel(i, DesignSpace::kPlacement, k).rfind("regions", 0) == 0)
                ++regional;
        }
    }
    QVERIFY(found);
    QVERIFY(regional > 0);
}

namespace {

struct Run {
    int code = -1;
    QByteArray out, err;
};

Run cli(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(SCALEACROSS_CLI_PATH), args);
    Run r;
    if (!p.waitForFinished(60000))
        return r;
    r.code = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

nlohmann::json readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
}

} // namespace

void TestOptimizer::cliShardsAndMerge() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const Scenario sc{smallCluster(true), smallModel(), basePlan(128)};
    const auto at = [&](const char* name) { return dir.filePath(QString::fromLatin1(name)); };
    QVERIFY(saveFileAtomically(at("cluster.json").toStdString(), dumpCanonical(toJson(sc.cluster)))
                .empty());
    QVERIFY(saveFileAtomically(at("model.json").toStdString(), dumpCanonical(toJson(sc.model)))
                .empty());
    QVERIFY(
        saveFileAtomically(at("base.json").toStdString(), dumpCanonical(toJson(sc.plan))).empty());
    const QStringList common{QStringLiteral("optimize"),
                             QStringLiteral("--cluster"),
                             at("cluster.json"),
                             QStringLiteral("--model"),
                             at("model.json"),
                             QStringLiteral("--plan"),
                             at("base.json"),
                             QStringLiteral("--threads"),
                             QStringLiteral("2"),
                             QStringLiteral("--max-evaluations"),
                             QStringLiteral("200"),
                             QStringLiteral("--seeds"),
                             QStringLiteral("2"),
                             QStringLiteral("--json")};
    std::int64_t evaluated = 0;
    for (int i = 0; i < 2; ++i) {
        const QString out = at(i == 0 ? "s0.json" : "s1.json");
        const Run r =
            cli(common + QStringList{QStringLiteral("--shard"), QStringLiteral("%1/2").arg(i),
                                     QStringLiteral("-o"), out});
        QVERIFY2(r.code == 0, r.err.constData());
        const auto j = readJson(out);
        QCOMPARE(j["shard"]["index"].get<int>(), i);
        evaluated += j["counts"]["evaluated"].get<std::int64_t>();
    }
    Run m = cli({QStringLiteral("merge"), at("s0.json"), at("s1.json"), QStringLiteral("--json"),
                 QStringLiteral("-o"), at("merged.json")});
    QVERIFY2(m.code == 0, m.err.constData());
    const auto merged = readJson(at("merged.json"));
    QCOMPARE(merged["counts"]["evaluated"].get<std::int64_t>(), evaluated);
    QCOMPARE(merged["baselines"].size(), std::size_t(5));
    QVERIFY(!merged["top"].empty());
    // The best plan, saved on its own, is a plan document `evaluate` loads
    // and predicts the same step time for.
    QVERIFY(saveFileAtomically(at("best.json").toStdString(), merged["top"][0]["plan"].dump(2))
                .empty());
    const Run e = cli({QStringLiteral("evaluate"), QStringLiteral("--cluster"), at("cluster.json"),
                       QStringLiteral("--model"), at("model.json"), QStringLiteral("--plan"),
                       at("best.json"), QStringLiteral("--json")});
    QVERIFY2(e.code == 0, e.err.constData());
    const auto ev = nlohmann::json::parse(e.out.toStdString());
    QCOMPARE(ev["step_time_s"].get<double>(), merged["top"][0]["step_time_s"].get<double>());
    // A shard alone is incomplete: merge says so and fails.
    const Run partial = cli({QStringLiteral("merge"), at("s0.json")});
    QCOMPARE(partial.code, 2);
    QVERIFY(partial.err.contains("missing"));
    // The text report names the strategy and both baselines.
    const Run text = cli({QStringLiteral("merge"), at("s0.json"), at("s1.json")});
    QCOMPARE(text.code, 0);
    QVERIFY(text.out.contains("strategy: staged"));
    QVERIFY(text.out.contains("production"));
    QVERIFY(text.out.contains("crosspipe"));
    QVERIFY(text.out.contains("megatron-multidc"));
}

QTEST_GUILESS_MAIN(TestOptimizer)
#include "tst_optimizer.moc"

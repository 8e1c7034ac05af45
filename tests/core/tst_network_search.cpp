// The network knobs a plan may set and the optimizer may search: a plan's
// own routing (Plan::routing) over the cluster's, and the NCCL buffer and
// channel values on window-limited links (DesignSpaceOptions).

#include "cost/evaluate.h"
#include "cost/network.h"
#include "explore/designspace.h"
#include "explore/optimizer.h"
#include "formats/documents.h"

#include "../common/candidates.h"
#include "../common/small_search.h"

#include <nlohmann/json.hpp>

#include <QTest>

#include <map>

using namespace sa;
using namespace sa::testing;

namespace {

// The three-building small cluster with B2-B3 made slower (5.2 ms) than the
// detour B2-B1-B3 (0.1 + 5 ms): the default routing takes the direct link,
// lowest-latency routing the detour.
Cluster detourCluster() {
    Cluster c = smallCluster(true);
    for (Link& l : c.links)
        if (l.name == "B2-B3")
            l.latency_ms = 5.2;
    return c;
}

Routing routingOf(RoutingPolicy p) {
    Routing r;
    r.policy = p;
    return r;
}

Evaluation evaluated(const Evaluator& e, const Model& m, const Plan& p,
                     EvaluationCache* cache = nullptr) {
    const auto r = e.evaluate(m, p, {}, cache);
    if (const auto* err = std::get_if<EvaluationError>(&r))
        qFatal("%s", err->str().c_str());
    return std::get<Evaluation>(r);
}

std::map<std::string, double> interBuildingBytes(const Evaluation& e) {
    std::map<std::string, double> out;
    for (const LinkUsage& l : e.links)
        if (l.tier == LinkTier::InterBuilding)
            out[l.name] = l.bytes_per_step;
    return out;
}

// DP over all three buildings (tp2 pp2 dp48 on 192 GPUs, rank order puts DP
// across the buildings), without recompute (a choice of smallSpace()).
Plan spreadPlan() {
    Plan p = basePlan(192);
    p.recompute = Recompute::None;
    p.collectives[Dim::DP] = CollectiveAlgo::Ring;
    return p;
}

} // namespace

class TestNetworkSearch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void planRoutingOverridesTheCluster();
    void cachedEvaluationsAcrossRoutings();
    void planRoutingRoundTrip();
    void routingAxis();
    void noRoutingAxisWithoutOption();
    void optimizerSearchesRouting();
    void ncclKnobChoicesOnWindowLimitedLinks();
};

// A plan asking for lowest-latency routing evaluates as the same plan on a
// cluster whose own routing is lowest-latency, bit for bit.
void TestNetworkSearch::planRoutingOverridesTheCluster() {
    const Model m = smallModel();
    const Cluster shortest = detourCluster();
    Cluster lowest = shortest;
    lowest.routing = routingOf(RoutingPolicy::LowestLatency);

    Plan asked = spreadPlan();
    asked.routing = routingOf(RoutingPolicy::LowestLatency);
    const Evaluation viaPlan = evaluated(Evaluator(shortest), m, asked);
    const Evaluation viaCluster = evaluated(Evaluator(lowest), m, spreadPlan());
    const Evaluation asBuilt = evaluated(Evaluator(shortest), m, spreadPlan());

    QCOMPARE(viaPlan.step_time_s, viaCluster.step_time_s);
    QCOMPARE(viaPlan.cross_building_bytes, viaCluster.cross_building_bytes);
    QCOMPARE(interBuildingBytes(viaPlan), interBuildingBytes(viaCluster));
    // The direct B2-B3 link idles under lowest-latency routing and carries
    // the B2-B3 traffic under the default.
    QCOMPARE(interBuildingBytes(viaPlan)["B2-B3"], 0.0);
    QVERIFY(interBuildingBytes(asBuilt)["B2-B3"] > 0);
    // The detour puts B2-B3's bytes on both other links: more bytes cross.
    QVERIFY(viaPlan.cross_building_bytes > asBuilt.cross_building_bytes);
    // A plan asking for the cluster's own routing is the plan without one.
    Plan same = spreadPlan();
    same.routing = Routing{};
    QCOMPARE(evaluated(Evaluator(shortest), m, same).step_time_s, asBuilt.step_time_s);
}

// One cache through plans that switch routings (the policies' defaults and
// one ECMP setting of its own) gives what fresh evaluations give.
void TestNetworkSearch::cachedEvaluationsAcrossRoutings() {
    const Model m = smallModel();
    const Evaluator e(detourCluster());
    Routing ecmpLatency = routingOf(RoutingPolicy::Ecmp);
    ecmpLatency.ecmp_metric = EcmpMetric::Latency;
    ecmpLatency.ecmp_tolerance = 0.1;
    const std::optional<Routing> routings[] = {std::nullopt,
                                               routingOf(RoutingPolicy::LowestLatency),
                                               routingOf(RoutingPolicy::Ecmp),
                                               ecmpLatency,
                                               std::nullopt,
                                               routingOf(RoutingPolicy::LowestLatency),
                                               ecmpLatency};
    EvaluationCache cache;
    std::map<int, double> steps;
    for (const auto& r : routings) {
        Plan p = spreadPlan();
        p.routing = r;
        const Evaluation cached = evaluated(e, m, p, &cache);
        const Evaluation fresh = evaluated(e, m, p);
        QCOMPARE(cached.step_time_s, fresh.step_time_s);
        QCOMPARE(interBuildingBytes(cached), interBuildingBytes(fresh));
    }
    // ECMP within 10% of the best latency splits B2-B3 over the direct link
    // and the detour: both carry bytes.
    Plan split = spreadPlan();
    split.routing = ecmpLatency;
    const auto bytes = interBuildingBytes(evaluated(e, m, split));
    QVERIFY(bytes.at("B2-B3") > 0);
    QVERIFY(bytes.at("B1-B2") > 0);
}

void TestNetworkSearch::planRoutingRoundTrip() {
    Scenario s{detourCluster(), smallModel(), spreadPlan()};
    Routing r = routingOf(RoutingPolicy::Ecmp);
    r.ecmp_metric = EcmpMetric::Latency;
    r.ecmp_tolerance = 1.0 / 3.0;
    s.plan.routing = r;
    const auto back = parsePlan(dumpCanonical(toJson(s.plan)), "p.json");
    QVERIFY(back.problems.empty());
    QVERIFY(back.value->routing == s.plan.routing);
    QVERIFY(*back.value == s.plan);

    // Bad values name the plan's JSON path.
    auto planText = dumpCanonical(toJson(spreadPlan()));
    auto withRouting = [&](const std::string& routing) {
        std::string text = planText;
        text.insert(text.rfind('}'), ",\"routing\": " + routing);
        return parsePlan(text, "p.json");
    };
    const auto unknown = withRouting(R"({"policy": "random"})");
    QVERIFY(!unknown.ok());
    QVERIFY2(unknown.problems.front().str().find("/routing/policy") != std::string::npos,
             unknown.problems.front().str().c_str());
    const auto negative = withRouting(R"({"policy": "ecmp", "ecmp_tolerance": -1})");
    QVERIFY(!negative.ok());
    QVERIFY2(negative.problems.front().str().find("/routing/ecmp_tolerance") != std::string::npos,
             negative.problems.front().str().c_str());
    QVERIFY(withRouting(R"({"policy": "lowest-latency"})").ok());
}

void TestNetworkSearch::routingAxis() {
    SmallProblem pr;
    pr.base = spreadPlan();
    DesignSpaceOptions o = smallSpace();
    o.routings = {routingOf(RoutingPolicy::ShortestHops), routingOf(RoutingPolicy::LowestLatency),
                  routingOf(RoutingPolicy::Ecmp)};
    const DesignSpace space(pr.cluster, pr.model, pr.base, o);
    const int axis = space.routingAxis();
    QCOMPARE(axis, space.axisCount() - 1);
    QVERIFY(!space.isLinkAxis(axis));
    QCOMPARE(space.axisName(axis), std::string("routing"));
    QCOMPARE(space.choices(0, axis), 3); // the cluster's (shortest-hops), lowest-latency, ecmp
    QCOMPARE(space.choiceLabel(0, axis, 1), std::string("routing lowest-latency"));

    const auto base = space.locate(pr.base);
    QVERIFY(base);
    QCOMPARE(int(base->choice[std::size_t(axis)]), 0);
    Candidate c = *base;
    c.choice[std::size_t(axis)] = 2;
    const Plan p = space.plan(c);
    QVERIFY(p.routing);
    QCOMPARE(p.routing->policy, RoutingPolicy::Ecmp);
    QVERIFY(space.label(c).find("routing ecmp") != std::string::npos);
    QCOMPARE(space.locate(p), std::optional<Candidate>(c));
    // Choice 0 leaves the plan on the cluster's routing.
    QVERIFY(!space.plan(*base).routing);
    // The space doubles... triples: every other axis is as before.
    const DesignSpace plain(pr.cluster, pr.model, pr.base, smallSpace());
    QCOMPARE(space.size(), 3 * plain.size());
}

void TestNetworkSearch::noRoutingAxisWithoutOption() {
    const SmallProblem pr;
    DesignSpaceOptions o = smallSpace();
    const DesignSpace plain(pr.cluster, pr.model, pr.base, o);
    QCOMPARE(plain.routingAxis(), -1);
    // Only the cluster's own routing allowed: nothing to choose.
    o.routings = {Routing{}};
    const DesignSpace same(pr.cluster, pr.model, pr.base, o);
    QCOMPARE(same.routingAxis(), -1);
    QCOMPARE(same.axisCount(), plain.axisCount());
    // A plan asking for another routing is not in a space without the axis.
    Plan asked = pr.base;
    asked.routing = routingOf(RoutingPolicy::LowestLatency);
    QVERIFY(!plain.locate(asked));
}

// Exhaustive search with the routing axis finds a plan at least as fast as
// without it, every plan's routing is one allowed, and the best plan's
// evaluation matches a fresh one.
void TestNetworkSearch::optimizerSearchesRouting() {
    const Cluster c = detourCluster();
    const Model m = smallModel();
    const Plan base = spreadPlan();
    const Evaluator evaluator(c);
    OptimizerOptions o;
    o.space = smallSpace();
    o.max_evaluations = 1000000;
    o.baselines = false;
    o.top_k = 5;
    o.threads = 2;
    const OptimizerResult without = optimize(evaluator, m, base, o);
    o.space.routings = {routingOf(RoutingPolicy::LowestLatency), routingOf(RoutingPolicy::Ecmp)};
    const OptimizerResult with = optimize(evaluator, m, base, o);
    QCOMPARE(with.strategy.name, std::string("exhaustive"));
    QVERIFY(!with.top.empty() && !without.top.empty());
    QVERIFY(with.top.front().step_time_s <= without.top.front().step_time_s);
    QVERIFY(with.feasible > without.feasible);
    for (const ScoredPlan& sp : with.top) {
        QVERIFY(!sp.plan.routing || sp.plan.routing->policy != RoutingPolicy::ShortestHops);
        QCOMPARE(evaluated(Evaluator(c), m, sp.plan).step_time_s, sp.step_time_s);
    }
}

// A roce link of 5 ms is window-limited (2 channels x 4 MiB in flight over
// a 10 ms round trip); the buffer and channel values the user allows appear
// as choices there, only when allowed.
void TestNetworkSearch::ncclKnobChoicesOnWindowLimitedLinks() {
    Cluster c = smallCluster(true);
    for (Link& l : c.links)
        if (l.name == "B1-B3")
            l.technology = "roce";
    const Model m = smallModel();
    DesignSpaceOptions o = smallSpace();
    o.vary_links = true;
    o.link_technologies = {"", "roce"};
    o.nccl_buffsize_mib = {16};
    o.nccl_channels = {8};
    const DesignSpace space(c, m, spreadPlan(), o);
    std::map<std::string, std::vector<std::string>> labels;
    for (int a = 0; a < space.axisCount(); ++a)
        if (space.isLinkAxis(a))
            for (int i = 0; i < space.choices(0, a); ++i)
                labels[space.linkOfAxis(a)].push_back(space.choiceLabel(0, a, i));
    QVERIFY(labels.count("B1-B3"));
    const auto& far = labels["B1-B3"];
    auto has = [&](const std::string& s) {
        return std::find(far.begin(), far.end(), s) != far.end();
    };
    QString all;
    for (const std::string& l : far)
        all += QString::fromStdString(l) + QLatin1String("; ");
    QVERIFY2(has("B1-B3 rocex4 buf16MiB"), qPrintable(all));
    QVERIFY2(has("B1-B3 rocex16 ch8"), qPrintable(all));
    QVERIFY2(has("B1-B3 rocex16 buf16MiB ch8"), qPrintable(all));
    // Without the options no link choice sets a NCCL knob.
    DesignSpaceOptions plainOptions = o;
    plainOptions.nccl_buffsize_mib.clear();
    plainOptions.nccl_channels.clear();
    const DesignSpace plain(c, m, spreadPlan(), plainOptions);
    for (int a = 0; a < plain.axisCount(); ++a)
        if (plain.isLinkAxis(a))
            for (int i = 0; i < plain.choices(0, a); ++i) {
                const std::string l = plain.choiceLabel(0, a, i);
                QVERIFY2(l.find(" buf") == std::string::npos && l.find(" ch") == std::string::npos,
                         l.c_str());
            }

    // The choice's plan sets the knob, and the link runs faster with it: the
    // window bound moves with bytes in flight / RTT.
    const auto base = space.locate(spreadPlan());
    QVERIFY(base);
    int axis = -1;
    for (int a = 0; a < space.axisCount(); ++a)
        if (space.isLinkAxis(a) && space.linkOfAxis(a) == "B1-B3")
            axis = a;
    int choice = -1;
    for (int i = 0; i < space.choices(0, axis); ++i)
        if (space.choiceLabel(base->structure, axis, i) == "B1-B3 rocex4 buf16MiB")
            choice = i;
    QVERIFY(choice > 0);
    Candidate cand = *base;
    cand.choice[std::size_t(axis)] = std::uint16_t(choice);
    const Plan tuned = space.plan(cand);
    QCOMPARE(tuned.link_technologies.at("B1-B3").buffsize_mib, 16.0);
    Technology t = *resolveTechnology(c, "roce");
    const double rtt = 2 * 5e-3;
    const double before = transferRateBps(t, 200, rtt);
    applyLinkOverride(t, tuned.link_technologies.at("B1-B3"));
    QVERIFY(closeRelative(transferRateBps(t, 200, rtt), 4 * before));
    const Evaluator e(c);
    QVERIFY(evaluated(e, m, tuned).step_time_s <= evaluated(e, m, space.plan(*base)).step_time_s);
}

QTEST_GUILESS_MAIN(TestNetworkSearch)
#include "tst_network_search.moc"

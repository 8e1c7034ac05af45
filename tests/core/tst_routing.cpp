// Routing policies between buildings (Cluster::routing): which inter-building
// links a pair's traffic takes, and how ECMP splits it. Clusters built in
// code with every expected value worked out by hand, then the three-building
// sample.

#include "cost/evaluate.h"
#include "cost/traffic.h"
#include "formats/documents.h"
#include "topology/topology.h"

#include "../common/samples.h"

#include <QElapsedTimer>
#include <QStringList>
#include <QTest>

#include <cmath>

using namespace sa;
using namespace sa::testing;

namespace {

// A transport that is only its line rate: efficiency 1, no window, no loss,
// so a link drains bytes in exactly bytes * 8 / (gbps * 1e9) seconds.
Technology wire() {
    Technology t;
    t.name = "wire";
    t.efficiency = 1;
    t.window_mib = 0;
    t.flows = 1;
    return t;
}

// Buildings of 8 GPUs (one host, one zone: uplinks of 3200 Gbit/s, far wider
// than the links below) joined by `links` of the "wire" technology.
Cluster withLinks(const std::vector<std::string>& names, std::vector<Link> links,
                  RoutingPolicy policy = RoutingPolicy::ShortestHops) {
    std::vector<Building> buildings;
    for (const std::string& n : names)
        buildings.push_back(building(n, 8));
    Cluster c = clusterOf("routing", std::move(buildings), std::move(links));
    c.technologies["wire"] = wire();
    c.routing.policy = policy;
    return c;
}

Link wireLink(const std::string& a, const std::string& b, double gbps, double ms,
              const std::string& name = {}) {
    return link(a, b, gbps, ms, "wire", name);
}

QStringList edgeNames(const Topology& t, const std::vector<int>& ids) {
    QStringList names;
    for (int id : ids)
        names << QString::fromStdString(t.edges().at(std::size_t(id)).name);
    return names;
}

// The paths of a pair as "name,name@fraction", primary first.
QStringList pathsOf(const Topology& t, int a, int b) {
    QStringList out;
    for (const Route& r : t.buildingPaths(a, b))
        out << edgeNames(t, r.edges).join(QLatin1Char(',')) + QLatin1Char('@') +
                   QString::number(r.fraction, 'g', 12);
    return out;
}

int edgeNamed(const Topology& t, const std::string& name) {
    for (const TopoEdge& e : t.edges())
        if (e.name == name)
            return e.id;
    qFatal("no edge %s", name.c_str());
}

// The triangle of the report: B2-B3 direct at 9.5 ms, or B2-B1 (0.1 ms) and
// B1-B3 (9.2 ms) at 9.3 ms.
Cluster triangle(RoutingPolicy policy) {
    return withLinks({"B1", "B2", "B3"},
                     {wireLink("B1", "B2", 51200, 0.1), wireLink("B1", "B3", 24000, 9.2),
                      wireLink("B2", "B3", 24000, 9.5)},
                     policy);
}

// A square B1-B2-B4 (100 Gbit/s, 1 + 1 ms) and B1-B3-B4 (300 Gbit/s,
// 1.5 + 1.5 ms): two 2-hop paths of capacities 100 and 300.
Cluster square(RoutingPolicy policy) {
    return withLinks({"B1", "B2", "B3", "B4"},
                     {wireLink("B1", "B2", 100, 1), wireLink("B2", "B4", 100, 1),
                      wireLink("B1", "B3", 300, 1.5), wireLink("B3", "B4", 300, 1.5)},
                     policy);
}

double wireSeconds(double bytes, double gbps) {
    return bytes * 8 / (gbps * 1e9);
}

} // namespace

class TestRouting : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void defaultPicksFewestHops();
    void lowestLatencyPicksTwoHops();
    void ecmpSplitsByCapacity();
    void ecmpSplitShowsInEvaluationLinks();
    void ecmpToleranceIncludesOrExcludes_data();
    void ecmpToleranceIncludesOrExcludes();
    void parallelLinks();
    void disconnectedPairStaysUnreachable();
    void ecmpKeepsTheCheapestPaths();
    void singlePathPoliciesHaveOnePath();
    void ecmpOnAGridIsQuick();
    void threeBuildingSampleUsesEveryLink_data();
    void threeBuildingSampleUsesEveryLink();
};

void TestRouting::defaultPicksFewestHops() {
    const Cluster c = triangle(Cluster{}.routing.policy);
    QCOMPARE(c.routing.policy, RoutingPolicy::ShortestHops);
    const Topology t(c);
    const Route& r = t.buildingRoute(1, 2);
    QCOMPARE(edgeNames(t, r.edges), QStringList{"B2-B3"});
    QCOMPARE(r.latency_ms, 9.5);
    QCOMPARE(r.bottleneck_gbps, 24000.0);
    QCOMPARE(pathsOf(t, 1, 2), QStringList{"B2-B3@1"});

    // All of B2's bytes to B3 on the direct link, none through B1.
    const auto transport = edgeTransports(c, t, Plan{});
    TrafficPhase phase(t, transport);
    phase.add({1, 0}, {2, 0}, 1e9, 8);
    QCOMPARE(phase.load(edgeNamed(t, "B2-B3"), 0), 1e9);
    QCOMPARE(phase.load(edgeNamed(t, "B1-B2"), 0) + phase.load(edgeNamed(t, "B1-B2"), 1), 0.0);
    QCOMPARE(phase.load(edgeNamed(t, "B1-B3"), 0) + phase.load(edgeNamed(t, "B1-B3"), 1), 0.0);
    QVERIFY(close(phase.routeLatency({1, 0}, {2, 0}), 9.5e-3 + 6e-6));
}

void TestRouting::lowestLatencyPicksTwoHops() {
    const Cluster c = triangle(RoutingPolicy::LowestLatency);
    const Topology t(c);
    const Route& r = t.buildingRoute(1, 2);
    QCOMPARE(edgeNames(t, r.edges), (QStringList{"B1-B2", "B1-B3"}));
    QVERIFY(close(r.latency_ms, 9.3));
    QCOMPARE(r.hops, 2);

    const auto transport = edgeTransports(c, t, Plan{});
    TrafficPhase phase(t, transport);
    phase.add({1, 0}, {2, 0}, 1e9, 8);
    // B1-B2 is listed B1 first: B2 -> B1 is its direction 1.
    QCOMPARE(phase.load(edgeNamed(t, "B1-B2"), 1), 1e9);
    QCOMPARE(phase.load(edgeNamed(t, "B1-B3"), 0), 1e9);
    QCOMPARE(phase.load(edgeNamed(t, "B2-B3"), 0) + phase.load(edgeNamed(t, "B2-B3"), 1), 0.0);
}

void TestRouting::ecmpSplitsByCapacity() {
    Cluster c = square(RoutingPolicy::Ecmp);
    const Topology t(c);
    // Both paths have 2 hops; weights 100 : 300. The primary is the cheaper
    // one under (hops, latency): through B2 at 2 ms.
    QCOMPARE(pathsOf(t, 0, 3), (QStringList{"B1-B2,B2-B4@0.25", "B1-B3,B3-B4@0.75"}));
    QCOMPARE(edgeNames(t, t.buildingRoute(0, 3).edges), (QStringList{"B1-B2", "B2-B4"}));
    QCOMPARE(t.buildingRoute(0, 3).latency_ms, 2.0);
    // Adjacent buildings have a single 1-hop path.
    QCOMPARE(pathsOf(t, 0, 1), QStringList{"B1-B2@1"});

    const auto transport = edgeTransports(c, t, Plan{});
    TrafficPhase phase(t, transport);
    phase.add({0, 0}, {3, 0}, 4e9, 8);
    QCOMPARE(phase.load(edgeNamed(t, "B1-B2"), 0), 1e9);
    QCOMPARE(phase.load(edgeNamed(t, "B2-B4"), 0), 1e9);
    QCOMPARE(phase.load(edgeNamed(t, "B1-B3"), 0), 3e9);
    QCOMPARE(phase.load(edgeNamed(t, "B3-B4"), 0), 3e9);
    QCOMPARE(phase.connections(edgeNamed(t, "B1-B2"), 0), 2.0);
    QCOMPARE(phase.connections(edgeNamed(t, "B3-B4"), 0), 6.0);
    // The uplinks carry the whole transfer once.
    QCOMPARE(phase.load(t.buildingUplink(0), 0), 4e9);
    QCOMPARE(phase.load(t.buildingUplink(3), 1), 4e9);
    QCOMPARE(phase.load(t.buildingUplink(1), 0) + phase.load(t.buildingUplink(1), 1), 0.0);
    // Both parts drain in 1e9 B over 100 Gbit/s = 3e9 B over 300 = 0.08 s,
    // a quarter of what the whole transfer takes on the narrow path alone.
    QVERIFY(close(phase.routeDrainTime({0, 0}, {3, 0}), 0.08));
    QVERIFY(close(phase.drainTime(), 0.08));
    // Latency: the slowest path used, 3 ms through B3.
    QVERIFY(close(phase.routeLatency({0, 0}, {3, 0}), 3e-3 + 6e-6));

    c.routing.policy = RoutingPolicy::ShortestHops;
    const Topology single(c);
    TrafficPhase one(single, transport);
    one.add({0, 0}, {3, 0}, 4e9, 8);
    QCOMPARE(one.load(edgeNamed(single, "B1-B2"), 0), 4e9);
    QCOMPARE(one.load(edgeNamed(single, "B1-B3"), 0), 0.0);
    QVERIFY(close(one.routeDrainTime({0, 0}, {3, 0}), wireSeconds(4e9, 100)));
    QVERIFY(close(one.routeLatency({0, 0}, {3, 0}), 2e-3 + 6e-6));
}

// The evaluation's per-link bytes come from the same loads: a pipeline
// between B1 and B4 (placed there, the transit buildings idle) puts 1/4 of
// its activations on B1-B2-B4 and 3/4 on B1-B3-B4.
void TestRouting::ecmpSplitShowsInEvaluationLinks() {
    Cluster c = square(RoutingPolicy::Ecmp);
    const Loaded<Model> m = loadModelFile(sourceDir() + "/sample_clusters/models/llama3-8b.json");
    QVERIFY(m.ok());
    Plan p = makePlan(8, 2, 1, 8);
    p.placement = Placement{};
    p.placement->runs = {PlacementRun{0, 0, 0, 0, "B1"}, PlacementRun{1, 1, 0, 0, "B4"}};
    const Evaluator ev(c);
    const auto result = ev.evaluate(*m.value, p);
    if (const auto* err = std::get_if<EvaluationError>(&result))
        QFAIL(err->str().c_str());
    const Evaluation& e = std::get<Evaluation>(result);
    std::map<std::string, double> bytes;
    for (const LinkUsage& l : e.links)
        if (l.tier == LinkTier::InterBuilding)
            bytes[l.name] = l.bytes_per_step;
    QVERIFY(bytes["B1-B2"] > 0);
    QVERIFY(closeRelative(bytes["B1-B3"], 3 * bytes["B1-B2"]));
    QVERIFY(closeRelative(bytes["B2-B4"], bytes["B1-B2"]));
    QVERIFY(closeRelative(bytes["B3-B4"], bytes["B1-B3"]));
    // Activations one way, gradients the other: both directions of all four
    // links, 2 x (1 + 1 + 3 + 3) x the bytes on B1-B2.
    QVERIFY(closeRelative(e.cross_building_bytes, 16 * bytes["B1-B2"]));
}

void TestRouting::ecmpToleranceIncludesOrExcludes_data() {
    QTest::addColumn<int>("metric"); // EcmpMetric
    QTest::addColumn<double>("tolerance");
    QTest::addColumn<QStringList>("paths");
    // B1-B3 direct: 10 ms, 100 Gbit/s; through B2: 5 + 5.4 = 10.4 ms, 300 Gbit/s.
    // 10.4 / 10 = 1.04: inside a 5% tolerance, outside 3%.
    const auto latency = int(EcmpMetric::Latency);
    QTest::newRow("latency, 5%") << latency << 0.05
                                 << QStringList{"B1-B3@0.25", "B1-B2,B2-B3@0.75"};
    QTest::newRow("latency, exactly 4%")
        << latency << 0.04 << QStringList{"B1-B3@0.25", "B1-B2,B2-B3@0.75"};
    QTest::newRow("latency, 3%") << latency << 0.03 << QStringList{"B1-B3@1"};
    QTest::newRow("latency, 0") << latency << 0.0 << QStringList{"B1-B3@1"};
    // Hops: 1 against 2, whatever the tolerance.
    QTest::newRow("hops ignore tolerance")
        << int(EcmpMetric::Hops) << 0.5 << QStringList{"B1-B3@1"};
}

void TestRouting::ecmpToleranceIncludesOrExcludes() {
    QFETCH(int, metric);
    QFETCH(double, tolerance);
    QFETCH(QStringList, paths);
    Cluster c = withLinks({"B1", "B2", "B3"},
                          {wireLink("B1", "B3", 100, 10), wireLink("B1", "B2", 300, 5),
                           wireLink("B2", "B3", 300, 5.4)},
                          RoutingPolicy::Ecmp);
    c.routing.ecmp_metric = EcmpMetric(metric);
    c.routing.ecmp_tolerance = tolerance;
    const Topology t(c);
    QCOMPARE(pathsOf(t, 0, 2), paths);
    QCOMPARE(edgeNames(t, t.buildingRoute(0, 2).edges), QStringList{"B1-B3"});
}

// Two links between the same buildings: "slow" 2 ms 10000 Gbit/s, "fast"
// 1 ms 5000 Gbit/s.
void TestRouting::parallelLinks() {
    Cluster c = withLinks({"B1", "B2"}, {wireLink("B1", "B2", 10000, 2, "slow"),
                                         wireLink("B1", "B2", 5000, 1, "fast")});
    // Default: one hop either way, the lower latency decides.
    QCOMPARE(pathsOf(Topology(c), 0, 1), QStringList{"fast@1"});
    // ECMP on hops: both, 1/3 and 2/3 by capacity, the faster one primary.
    c.routing.policy = RoutingPolicy::Ecmp;
    const Topology t(c);
    QCOMPARE(pathsOf(t, 0, 1), (QStringList{"fast@" + QString::number(1.0 / 3, 'g', 12),
                                            "slow@" + QString::number(2.0 / 3, 'g', 12)}));
    QCOMPARE(pathsOf(t, 1, 0).size(), 2);
    const auto transport = edgeTransports(c, t, Plan{});
    TrafficPhase phase(t, transport);
    phase.add({0, 0}, {1, 0}, 3e9, 3);
    QVERIFY(closeRelative(phase.load(edgeNamed(t, "fast"), 0), 1e9));
    QVERIFY(closeRelative(phase.load(edgeNamed(t, "slow"), 0), 2e9));
    // ECMP on latency, no tolerance: 1 ms against 2 ms, the fast link alone.
    c.routing.ecmp_metric = EcmpMetric::Latency;
    QCOMPARE(pathsOf(Topology(c), 0, 1), QStringList{"fast@1"});
}

void TestRouting::disconnectedPairStaysUnreachable() {
    for (RoutingPolicy policy :
         {RoutingPolicy::ShortestHops, RoutingPolicy::LowestLatency, RoutingPolicy::Ecmp}) {
        const Cluster c = withLinks({"B1", "B2", "B3"}, {wireLink("B1", "B2", 100, 1)}, policy);
        const Topology t(c);
        QVERIFY(!t.buildingRoute(0, 2).reachable);
        QVERIFY(!t.buildingRoute(2, 1).reachable);
        QCOMPARE(int(t.buildingPaths(0, 2).size()), 1);
        QVERIFY(!t.buildingPaths(0, 2).front().reachable);
        QVERIFY(!t.route({0, 0}, {2, 0}).reachable);
        QVERIFY(t.buildingRoute(0, 1).reachable);
    }
}

// 20 two-hop paths between S and D through M0..M19, latencies 1 + i/10 ms
// per link: ECMP on hops keeps 16 of them, the 16 of lowest latency, with
// capacities 100 + 10 i.
void TestRouting::ecmpKeepsTheCheapestPaths() {
    std::vector<std::string> names = {"S", "D"};
    std::vector<Link> links;
    for (int i = 19; i >= 0; --i) { // listed slowest first: the order must not matter
        const std::string m = "M" + std::to_string(i);
        names.push_back(m);
        links.push_back(wireLink("S", m, 100 + 10 * i, 1 + i / 10.0));
        links.push_back(wireLink(m, "D", 100 + 10 * i, 1 + i / 10.0));
    }
    const Cluster c = withLinks(names, links, RoutingPolicy::Ecmp);
    const Topology t(c);
    const auto paths = t.buildingPaths(0, 1);
    QCOMPARE(int(paths.size()), kMaxEcmpPaths);
    double capacity = 0;
    for (int i = 0; i < 16; ++i)
        capacity += 100 + 10 * i;
    double sum = 0;
    for (int i = 0; i < 16; ++i) {
        const Route& r = paths[std::size_t(i)];
        const QString m = QStringLiteral("M%1").arg(i);
        QCOMPARE(edgeNames(t, r.edges), (QStringList{"S-" + m, m + "-D"}));
        QVERIFY(close(r.latency_ms, 2 * (1 + i / 10.0)));
        QVERIFY(closeRelative(r.fraction, (100 + 10 * i) / capacity));
        sum += r.fraction;
    }
    QVERIFY(close(sum, 1.0));
    QCOMPARE(edgeNames(t, t.buildingRoute(0, 1).edges), (QStringList{"S-M0", "M0-D"}));
}

void TestRouting::singlePathPoliciesHaveOnePath() {
    for (RoutingPolicy policy : {RoutingPolicy::ShortestHops, RoutingPolicy::LowestLatency}) {
        const Topology t(square(policy));
        for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b) {
                const auto paths = t.buildingPaths(a, b);
                QCOMPARE(int(paths.size()), 1);
                QCOMPARE(&paths.front(), &t.buildingRoute(a, b));
                QCOMPARE(paths.front().fraction, 1.0);
            }
    }
}

// An 8 x 8 grid of buildings, 1 ms links of 100 Gbit/s: between opposite
// corners C(14, 7) = 3432 shortest paths of 14 hops, of which ECMP keeps 16
// (all equal: the first found). Built once per cluster edit in the GUI, so
// it must stay fast: 4096 pairs searched.
void TestRouting::ecmpOnAGridIsQuick() {
    constexpr int k = 8;
    std::vector<std::string> names;
    std::vector<Link> links;
    const auto at = [](int r, int c) { return "G" + std::to_string(r) + "_" + std::to_string(c); };
    for (int r = 0; r < k; ++r)
        for (int c = 0; c < k; ++c) {
            names.push_back(at(r, c));
            if (c + 1 < k)
                links.push_back(wireLink(at(r, c), at(r, c + 1), 100, 1));
            if (r + 1 < k)
                links.push_back(wireLink(at(r, c), at(r + 1, c), 100, 1));
        }
    const Cluster c = withLinks(names, links, RoutingPolicy::Ecmp);
    QElapsedTimer timer;
    timer.start();
    const Topology t(c);
    const qint64 ms = timer.elapsed();
    qInfo("ECMP routes of an 8 x 8 grid (64 buildings, 112 links) in %lld ms", ms);
    const auto corner = t.buildingPaths(0, k * k - 1);
    QCOMPARE(int(corner.size()), kMaxEcmpPaths);
    for (const Route& r : corner) {
        QCOMPARE(r.hops, 2 * (k - 1));
        QVERIFY(closeRelative(r.fraction, 1.0 / kMaxEcmpPaths));
    }
    // Neighbours: one path; two apart on a diagonal: two paths, half each.
    QCOMPARE(int(t.buildingPaths(0, 1).size()), 1);
    QCOMPARE(int(t.buildingPaths(0, k + 1).size()), 2);
    // The time is reported, not asserted: speed belongs to the benchmarks, and
    // a limit here failed a loaded sanitizer run (5.1 s under ASan beside a
    // build). The bound on paths a pair keeps (checked above) is what stops
    // the enumeration growing with the grid's 3,432 shortest corner paths.
}

void TestRouting::threeBuildingSampleUsesEveryLink_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<double>("b2b3LatencyMs"); // 0: as shipped
    QTest::addColumn<double>("b1b3LatencyMs");
    QTest::addColumn<int>("policy");
    QTest::addColumn<QStringList>("busy");
    QTest::addColumn<QStringList>("idle");
    const int hops = int(RoutingPolicy::ShortestHops);
    // DP groups span all three buildings: every pair talks, each on its
    // direct link.
    QTest::newRow("dp across") << "three-buildings-405b.json" << 0.0 << 0.0 << hops
                               << QStringList{"B1-B2", "B1-B3", "B2-B3"} << QStringList{};
    // Stages B1 -> B2 -> B3: B2's activations to B3 on their own link.
    QTest::newRow("pp across") << "three-buildings-405b-pp-across.json" << 0.0 << 0.0 << hops
                               << QStringList{"B1-B2", "B2-B3"} << QStringList{"B1-B3"};
    // The report: B2-B3 9.5 ms direct against 0.1 + 9.2 = 9.3 ms through B1.
    // Fewest hops keeps B2's bytes on the direct link; lowest latency sends
    // them all through B1 and leaves B2-B3 idle.
    QTest::newRow("pp across, 9.3 ms detour, default")
        << "three-buildings-405b-pp-across.json" << 9.5 << 9.2 << hops
        << QStringList{"B1-B2", "B2-B3"} << QStringList{"B1-B3"};
    QTest::newRow("pp across, 9.3 ms detour, lowest latency")
        << "three-buildings-405b-pp-across.json" << 9.5 << 9.2 << int(RoutingPolicy::LowestLatency)
        << QStringList{"B1-B2", "B1-B3"} << QStringList{"B2-B3"};
}

// B1-B2 0.1 ms, B1-B3 and B2-B3 10 ms: each pair's fewest-hop path is its
// direct link, so with the default routing a plan spread over all three
// buildings puts bytes on every link its building pairs use.
void TestRouting::threeBuildingSampleUsesEveryLink() {
    QFETCH(QString, scenario);
    QFETCH(double, b2b3LatencyMs);
    QFETCH(double, b1b3LatencyMs);
    QFETCH(int, policy);
    QFETCH(QStringList, busy);
    QFETCH(QStringList, idle);
    Scenario s = loadSampleScenario(scenario.toStdString());
    QCOMPARE(s.cluster.routing, Routing{});
    for (Link& l : s.cluster.links) {
        if (l.name == "B2-B3" && b2b3LatencyMs > 0)
            l.latency_ms = b2b3LatencyMs;
        if (l.name == "B1-B3" && b1b3LatencyMs > 0)
            l.latency_ms = b1b3LatencyMs;
    }
    s.cluster.routing.policy = RoutingPolicy(policy);
    const auto result = evaluate(s);
    if (const auto* err = std::get_if<EvaluationError>(&result))
        QFAIL(err->str().c_str());
    std::map<QString, double> bytes;
    for (const LinkUsage& l : std::get<Evaluation>(result).links)
        if (l.tier == LinkTier::InterBuilding)
            bytes[QString::fromStdString(l.name)] = l.bytes_per_step;
    QCOMPARE(int(bytes.size()), 3);
    for (const QString& name : busy)
        QVERIFY2(bytes[name] > 0, qPrintable(name));
    for (const QString& name : idle)
        QVERIFY2(bytes[name] == 0, qPrintable(name));
}

QTEST_GUILESS_MAIN(TestRouting)
#include "tst_routing.moc"

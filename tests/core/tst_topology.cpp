// Routes over the cluster graph: clusters built in code with every expected
// value worked out by hand, then the shipped sample clusters.

#include "formats/documents.h"
#include "topology/topology.h"

#include "../common/samples.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QStringList>
#include <QTest>

#include <cmath>
#include <limits>

using namespace sa;
using namespace sa::testing;

namespace {

// A building in region "r" with zones of zoneGpus.
Building zoned(const std::string& name, std::int64_t gpus, std::int64_t zoneGpus,
               double zoneOver = 1, double buildingOver = 1) {
    return building(name, gpus,
                    {.region = "r",
                     .zone_gpus = zoneGpus,
                     .zone_oversubscription = zoneOver,
                     .building_oversubscription = buildingOver});
}

// The clusters the data tables refer to by name.
//
// campus / campus-fat:
//   B1: 8192 GPUs, zones of 2048 (4 zones), 400 Gbit/s NICs, 3:1 zone, 1:1 building.
//       zone uplink 2048*400/3 = 273066.67, building uplink 8192*400/3 = 1092266.67
//   B2: 5000 GPUs, zones of 2048 (3 zones, the last holds 904), 2:1 zone, 4.5:1 building.
//       zone uplinks 2048*400/2 = 409600 (zones 0, 1) and 904*400/2 = 180800 (zone 2),
//       building uplink 5000*400/(2*4.5) = 222222.22
//   campus: B1-B2 25600 Gbit/s, 0.3 ms; campus-fat: the same link at 1,000,000 Gbit/s.
// chain:   B1, B2, B3 (1024 GPUs each, one zone, 1:1): B1-B2 1 ms 10000,
//          B2-B3 2 ms 8000, B1-B3 5 ms 50000 -> B1 to B3 takes the direct link
//          (one hop: the default shortest-hops routing).
// chain-latency: chain routed lowest-latency -> B1 to B3 goes through B2 (3 ms).
// line:    as chain without the B1-B3 link.
// tie:     B1-B2 0.7 ms, B2-B3 0.1 ms, B1-B3 0.8 ms direct: equal latency (0.7 + 0.1
//          is 0.7999999999999999 in binary), the direct link wins on hops.
// parallel: two links between B1 and B2: "slow" 2 ms 10000, "fast" 1 ms 5000.
// islands: B1-B2 linked, B3 on its own.
Cluster makeCluster(const QString& name) {
    Cluster c = clusterOf(name.toStdString(), {});
    if (name == QLatin1String("campus") || name == QLatin1String("campus-fat")) {
        c.buildings = {zoned("B1", 8192, 2048, 3, 1), zoned("B2", 5000, 2048, 2, 4.5)};
        c.links = {link("B1", "B2", name == QLatin1String("campus") ? 25600 : 1e6, 0.3)};
        return c;
    }
    c.buildings = {zoned("B1", 1024, 1024), zoned("B2", 1024, 1024), zoned("B3", 1024, 1024)};
    if (name == QLatin1String("chain") || name == QLatin1String("chain-latency"))
        c.links = {link("B1", "B2", 10000, 1), link("B2", "B3", 8000, 2),
                   link("B1", "B3", 50000, 5)};
    else if (name == QLatin1String("line"))
        c.links = {link("B1", "B2", 10000, 1), link("B2", "B3", 8000, 2)};
    else if (name == QLatin1String("tie"))
        c.links = {link("B1", "B2", 10000, 0.7), link("B2", "B3", 10000, 0.1),
                   link("B1", "B3", 10000, 0.8)};
    else if (name == QLatin1String("parallel"))
        c.links = {link("B1", "B2", 10000, 2, "roce", "slow"),
                   link("B1", "B2", 5000, 1, "roce", "fast")};
    else if (name == QLatin1String("islands"))
        c.links = {link("B1", "B2", 10000, 1)};
    else
        qFatal("unknown test cluster %s", qPrintable(name));
    if (name == QLatin1String("chain-latency"))
        c.routing.policy = RoutingPolicy::LowestLatency;
    return c;
}

QStringList edgeNames(const Topology& t, const std::vector<int>& ids) {
    QStringList names;
    for (int id : ids)
        names << QString::fromStdString(t.edges().at(id).name);
    return names;
}

QString sampleClusterDir() {
    return sourcePath(QStringLiteral("sample_clusters/clusters"));
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// What differs between a route's bottleneck and latency and the expected
// ones; empty when both match.
QString routeMismatch(const Route& r, double bottleneck, double latency) {
    if (!close(r.bottleneck_gbps, bottleneck))
        return QStringLiteral("bottleneck %1, expected %2")
            .arg(r.bottleneck_gbps, 0, 'g', 12)
            .arg(bottleneck, 0, 'g', 12);
    if (!close(r.latency_ms, latency))
        return QStringLiteral("latency %1 ms, expected %2 ms")
            .arg(r.latency_ms, 0, 'g', 12)
            .arg(latency, 0, 'g', 12);
    return {};
}

} // namespace

class TestTopology : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void edgesOfCampus();
    void route_data();
    void route();
    void routeIsSymmetric_data();
    void routeIsSymmetric();
    void buildingRoute_data();
    void buildingRoute();
    void invalidInput();
    void largeClusterIsQuick();
    void sampleClusters_data();
    void sampleClusters();
    void sampleRoutes_data();
    void sampleRoutes();
};

void TestTopology::edgesOfCampus() {
    const Topology t(makeCluster(QStringLiteral("campus")));
    QCOMPARE(t.buildingCount(), 2);
    QCOMPARE(t.zoneCount(0), 4);
    QCOMPARE(t.zoneCount(1), 3); // 5000 GPUs in zones of 2048: the last one is partial

    const auto& edges = t.edges();
    QCOMPARE(int(edges.size()), 4 + 3 + 2 + 1);
    for (std::size_t i = 0; i < edges.size(); ++i)
        QCOMPARE(edges[i].id, int(i));

    const TopoEdge& z = edges.at(t.zoneUplink(1, 2));
    QCOMPARE(z.kind, EdgeKind::ZoneUplink);
    QCOMPARE(QString::fromStdString(z.name), QStringLiteral("B2/zone2"));
    QCOMPARE(z.building, 1);
    QCOMPARE(z.zone, 2);
    QVERIFY(close(z.bandwidth_gbps, 904.0 * 400 / 2));
    QVERIFY(close(edges.at(t.zoneUplink(1, 0)).bandwidth_gbps, 2048.0 * 400 / 2));
    QVERIFY(close(edges.at(t.zoneUplink(0, 3)).bandwidth_gbps, 2048.0 * 400 / 3));

    const TopoEdge& u = edges.at(t.buildingUplink(1));
    QCOMPARE(u.kind, EdgeKind::BuildingUplink);
    QCOMPARE(QString::fromStdString(u.name), QStringLiteral("B2/uplink"));
    QCOMPARE(u.building, 1);
    QVERIFY(close(u.bandwidth_gbps, 5000.0 * 400 / (2 * 4.5)));
    QVERIFY(close(edges.at(t.buildingUplink(0)).bandwidth_gbps, 8192.0 * 400 / 3));

    const TopoEdge& l = edges.back();
    QCOMPARE(l.kind, EdgeKind::InterBuilding);
    QCOMPARE(QString::fromStdString(l.name), QStringLiteral("B1-B2")); // default name
    QCOMPARE(l.link, 0);
    QCOMPARE(l.bandwidth_gbps, 25600.0);
    QCOMPARE(l.latency_ms, 0.3);
}

void TestTopology::route_data() {
    QTest::addColumn<QString>("cluster");
    QTest::addColumn<int>("fromBuilding");
    QTest::addColumn<int>("fromZone");
    QTest::addColumn<int>("toBuilding");
    QTest::addColumn<int>("toZone");
    QTest::addColumn<bool>("reachable");
    QTest::addColumn<int>("hops");
    QTest::addColumn<double>("bottleneck");
    QTest::addColumn<double>("latency");
    QTest::addColumn<QStringList>("edges");

    // Same zone: the zone is non-blocking, nothing shared is crossed; its
    // capacity is all its NICs together. Fabric: 2 µs.
    QTest::newRow("same zone") << "campus" << 0 << 1 << 0 << 1 << true << 0 << 2048.0 * 400 << 0.002
                               << QStringList{};
    QTest::newRow("same partial zone")
        << "campus" << 1 << 2 << 1 << 2 << true << 0 << 904.0 * 400 << 0.002 << QStringList{};
    // Across zones: both zone uplinks, 5 µs.
    QTest::newRow("cross zone") << "campus" << 0 << 0 << 0 << 3 << true << 2 << 2048.0 * 400 / 3
                                << 0.005 << QStringList{"B1/zone0", "B1/zone3"};
    QTest::newRow("cross zone into partial zone")
        << "campus" << 1 << 0 << 1 << 2 << true << 2 << 904.0 * 400 / 2 << 0.005
        << QStringList{"B2/zone0", "B2/zone2"};
    // Across buildings: 0.3 ms link + 4 µs from each GPU up to its aggregation.
    QTest::newRow("cross building, link is the bottleneck")
        << "campus" << 0 << 2 << 1 << 1 << true << 5 << 25600.0 << 0.3 + 0.008
        << QStringList{"B1/zone2", "B1/uplink", "B1-B2", "B2/uplink", "B2/zone1"};
    QTest::newRow("cross building, building uplink is the bottleneck")
        << "campus-fat" << 0 << 0 << 1 << 0 << true << 5 << 5000.0 * 400 / (2 * 4.5) << 0.308
        << QStringList{"B1/zone0", "B1/uplink", "B1-B2", "B2/uplink", "B2/zone0"};
    QTest::newRow("cross building, partial zone is the bottleneck")
        << "campus-fat" << 0 << 0 << 1 << 2 << true << 5 << 904.0 * 400 / 2 << 0.308
        << QStringList{"B1/zone0", "B1/uplink", "B1-B2", "B2/uplink", "B2/zone2"};
    QTest::newRow("reverse direction")
        << "campus" << 1 << 1 << 0 << 2 << true << 5 << 25600.0 << 0.308
        << QStringList{"B2/zone1", "B2/uplink", "B1-B2", "B1/uplink", "B1/zone2"};
    // Routed lowest-latency, two links of 1 + 2 ms beat the direct 5 ms one;
    // one aggregation switch more in B2 (1 µs).
    QTest::newRow("lower latency through a middle building")
        << "chain-latency" << 0 << 0 << 2 << 0 << true << 6 << 8000.0 << 3.0 + 0.008 + 0.001
        << QStringList{"B1/zone0", "B1/uplink", "B1-B2", "B2-B3", "B3/uplink", "B3/zone0"};
    // The default, fewest hops: the direct link, 5 ms.
    QTest::newRow("fewest hops, the direct link")
        << "chain" << 0 << 0 << 2 << 0 << true << 5 << 50000.0 << 5.0 + 0.008
        << QStringList{"B1/zone0", "B1/uplink", "B1-B3", "B3/uplink", "B3/zone0"};
    QTest::newRow("no direct link")
        << "line" << 2 << 0 << 0 << 0 << true << 6 << 8000.0 << 3.009
        << QStringList{"B3/zone0", "B3/uplink", "B2-B3", "B1-B2", "B1/uplink", "B1/zone0"};
    QTest::newRow("equal latency, fewer hops win")
        << "tie" << 0 << 0 << 2 << 0 << true << 5 << 10000.0 << 0.808
        << QStringList{"B1/zone0", "B1/uplink", "B1-B3", "B3/uplink", "B3/zone0"};
    QTest::newRow("parallel links, the faster one")
        << "parallel" << 0 << 0 << 1 << 0 << true << 5 << 5000.0 << 1.008
        << QStringList{"B1/zone0", "B1/uplink", "fast", "B2/uplink", "B2/zone0"};
    QTest::newRow("unreachable") << "islands" << 0 << 0 << 2 << 0 << false << 0 << 0.0 << 0.0
                                 << QStringList{};
    QTest::newRow("reachable part of islands")
        << "islands" << 1 << 0 << 0 << 0 << true << 5 << 10000.0 << 1.008
        << QStringList{"B2/zone0", "B2/uplink", "B1-B2", "B1/uplink", "B1/zone0"};
}

void TestTopology::route() {
    QFETCH(QString, cluster);
    QFETCH(int, fromBuilding);
    QFETCH(int, fromZone);
    QFETCH(int, toBuilding);
    QFETCH(int, toZone);
    QFETCH(bool, reachable);
    QFETCH(int, hops);
    QFETCH(double, bottleneck);
    QFETCH(double, latency);
    QFETCH(QStringList, edges);

    const Topology t(makeCluster(cluster));
    const Route r = t.route({fromBuilding, fromZone}, {toBuilding, toZone});
    QCOMPARE(r.reachable, reachable);
    QCOMPARE(r.hops, hops);
    QCOMPARE(int(r.edges.size()), hops);
    QCOMPARE(edgeNames(t, r.edges), edges);
    const QString mismatch = routeMismatch(r, bottleneck, latency);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

void TestTopology::routeIsSymmetric_data() {
    QTest::addColumn<QString>("cluster");
    for (const char* name :
         {"campus", "chain", "chain-latency", "line", "tie", "parallel", "islands"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

// Links are full duplex and symmetric, so a route back is the same route reversed.
void TestTopology::routeIsSymmetric() {
    QFETCH(QString, cluster);
    const Topology t(makeCluster(cluster));
    for (int a = 0; a < t.buildingCount(); ++a)
        for (int za = 0; za < t.zoneCount(a); ++za)
            for (int b = 0; b < t.buildingCount(); ++b)
                for (int zb = 0; zb < t.zoneCount(b); ++zb) {
                    const Route there = t.route({a, za}, {b, zb});
                    const Route back = t.route({b, zb}, {a, za});
                    QCOMPARE(back.reachable, there.reachable);
                    QCOMPARE(back.hops, there.hops);
                    QVERIFY(close(back.bottleneck_gbps, there.bottleneck_gbps));
                    QVERIFY(close(back.latency_ms, there.latency_ms));
                    QVERIFY(std::equal(there.edges.begin(), there.edges.end(), back.edges.rbegin(),
                                       back.edges.rend()));
                }
}

void TestTopology::buildingRoute_data() {
    QTest::addColumn<QString>("cluster");
    QTest::addColumn<int>("from");
    QTest::addColumn<int>("to");
    QTest::addColumn<bool>("reachable");
    QTest::addColumn<double>("bottleneck");
    QTest::addColumn<double>("latency");
    QTest::addColumn<QStringList>("edges");

    // Only the inter-building links: no uplinks, no fabric latency.
    QTest::newRow("itself") << "chain" << 1 << 1 << true << kInf << 0.0 << QStringList{};
    QTest::newRow("direct") << "chain" << 0 << 1 << true << 10000.0 << 1.0 << QStringList{"B1-B2"};
    QTest::newRow("direct, fewest hops")
        << "chain" << 0 << 2 << true << 50000.0 << 5.0 << QStringList{"B1-B3"};
    QTest::newRow("via B2") << "chain-latency" << 0 << 2 << true << 8000.0 << 3.0
                            << QStringList{"B1-B2", "B2-B3"};
    QTest::newRow("via B2 backwards")
        << "chain-latency" << 2 << 0 << true << 8000.0 << 3.0 << QStringList{"B2-B3", "B1-B2"};
    QTest::newRow("fast parallel link")
        << "parallel" << 1 << 0 << true << 5000.0 << 1.0 << QStringList{"fast"};
    QTest::newRow("unreachable") << "islands" << 2 << 1 << false << 0.0 << 0.0 << QStringList{};
}

void TestTopology::buildingRoute() {
    QFETCH(QString, cluster);
    QFETCH(int, from);
    QFETCH(int, to);
    QFETCH(bool, reachable);
    QFETCH(double, bottleneck);
    QFETCH(double, latency);
    QFETCH(QStringList, edges);

    const Topology t(makeCluster(cluster));
    const Route& r = t.buildingRoute(from, to);
    QCOMPARE(r.reachable, reachable);
    QCOMPARE(r.hops, int(edges.size()));
    QCOMPARE(edgeNames(t, r.edges), edges);
    QVERIFY(close(r.bottleneck_gbps, bottleneck));
    QVERIFY(close(r.latency_ms, latency));
}

void TestTopology::invalidInput() {
    // Out-of-range locations are not a crash, only no route.
    const Topology t(makeCluster(QStringLiteral("campus")));
    QVERIFY(!t.route({0, 4}, {1, 0}).reachable);
    QVERIFY(!t.route({0, 0}, {2, 0}).reachable);
    QVERIFY(!t.route({-1, 0}, {0, 0}).reachable);
    QCOMPARE(t.route({0, 0}, {1, 7}).bottleneck_gbps, 0.0);
    QCOMPARE(t.zoneUplink(1, 3), -1);
    QCOMPARE(t.zoneUplink(2, 0), -1);
    QCOMPARE(t.buildingUplink(2), -1);

    // A link naming an unknown building or the same building twice is left
    // out of the graph (validation reports it); the rest still works.
    Cluster c = makeCluster(QStringLiteral("line"));
    c.links.push_back(link("B1", "B9", 1e6, 0.01));
    c.links.push_back(link("B3", "B3", 1e6, 0.01));
    const Topology t2(c);
    QCOMPARE(int(t2.edges().size()), 3 + 3 + 2);
    QVERIFY(close(t2.route({0, 0}, {2, 0}).latency_ms, 3.009));

    const Topology empty{Cluster{}};
    QCOMPARE(empty.buildingCount(), 0);
    QVERIFY(empty.edges().empty());
    QVERIFY(!empty.route({0, 0}, {0, 0}).reachable);
}

// Topology is built once per cluster, but the GUI rebuilds it on every edit
// of the cluster: a 100k-GPU, three-building cluster must take well under a
// millisecond or so (the bound below is loose for Debug and sanitizer builds).
void TestTopology::largeClusterIsQuick() {
    Cluster c = makeCluster(QStringLiteral("chain"));
    for (auto& b : c.buildings) {
        b.gpus = 32768;
        b.zone_gpus = 3072;
        b.zone_oversubscription = 7;
    }
    QElapsedTimer timer;
    timer.start();
    constexpr int kRepeats = 200;
    std::int64_t sink = 0;
    for (int i = 0; i < kRepeats; ++i) {
        const Topology t(c);
        sink += t.zoneCount(2);
        sink += t.route({0, 3}, {2, 10}).hops;
    }
    const qint64 ms = timer.elapsed();
    QCOMPARE(sink, std::int64_t(kRepeats) * (11 + 5)); // B1-B3 direct: 5 edges
    qInfo("%d topologies of 98,304 GPUs (33 zones) in %lld ms", kRepeats, ms);
    QVERIFY2(ms < 5000, "building a topology has become slow");
}

void TestTopology::sampleClusters_data() {
    QTest::addColumn<QString>("path");
    const QDir dir(sampleClusterDir());
    const QFileInfoList files =
        dir.entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    QVERIFY2(!files.isEmpty(), qPrintable(dir.absolutePath()));
    for (const QFileInfo& f : files)
        QTest::newRow(qPrintable(f.fileName())) << f.absoluteFilePath();
}

// Every shipped cluster loads, is connected and has the graph the spec says:
// one uplink per zone, one per building, one edge per link.
void TestTopology::sampleClusters() {
    QFETCH(QString, path);
    const Loaded<Cluster> loaded = loadClusterFile(path.toStdString());
    for (const auto& p : loaded.problems)
        qWarning("%s", p.str().c_str());
    QVERIFY(loaded.ok());
    const Cluster& c = *loaded.value;
    const Topology t(c);
    QCOMPARE(t.buildingCount(), int(c.buildings.size()));
    std::size_t zones = 0;
    for (int b = 0; b < t.buildingCount(); ++b) {
        const Building& bd = c.buildings[b];
        QCOMPARE(std::int64_t(t.zoneCount(b)), bd.zones());
        zones += t.zoneCount(b);
        double zoneSum = 0;
        for (int z = 0; z < t.zoneCount(b); ++z)
            zoneSum += t.edges().at(t.zoneUplink(b, z)).bandwidth_gbps;
        // The zone uplinks together carry the building's NICs / zone oversubscription.
        QVERIFY(close(zoneSum, double(bd.gpus) * bd.scale_out_gbps / bd.zone_oversubscription));
    }
    QCOMPARE(t.edges().size(), zones + c.buildings.size() + c.links.size());
    for (int a = 0; a < t.buildingCount(); ++a)
        for (int b = 0; b < t.buildingCount(); ++b) {
            QVERIFY(t.buildingRoute(a, b).reachable);
            QVERIFY(t.buildingRoute(a, b).bottleneck_gbps > 0);
        }
}

void TestTopology::sampleRoutes_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("from");
    QTest::addColumn<int>("fromZone");
    QTest::addColumn<QString>("to");
    QTest::addColumn<int>("toZone");
    QTest::addColumn<int>("hops");
    QTest::addColumn<double>("bottleneck");
    QTest::addColumn<double>("latency");

    // Zone uplink of a full H100 zone: 3072 * 400 / 7 = 175542.86 Gbit/s.
    const double zone = 3072.0 * 400 / 7;
    QTest::newRow("single building, across zones") << "single-building-h100.json"
                                                   << "B1" << 0 << "B1" << 7 << 2 << zone << 0.005;
    QTest::newRow("single building, same zone")
        << "single-building-h100.json"
        << "B1" << 5 << "B1" << 5 << 0 << 3072.0 * 400 << 0.002;
    // Building uplink 12288 * 400 / (7 * 4.5) = 156038 Gbit/s; the campus link is narrower.
    QTest::newRow("campus") << "two-buildings-campus.json"
                            << "B1" << 0 << "B2" << 3 << 5 << 51200.0 << 0.1 + 0.008;
    // 10 ms long haul (about 2,000 km of fibre) plus 4 µs of fabric at each
    // end; min(175543 zone, 416102 building uplink, 24000 long haul) = 24000.
    QTest::newRow("three buildings, B1 to B3") << "three-buildings-two-regions.json"
                                               << "B1" << 0 << "B3" << 0 << 5 << 24000.0 << 10.008;
    QTest::newRow("three buildings, B2 to B3 has its own long-haul link")
        << "three-buildings-two-regions.json"
        << "B2" << 4 << "B3" << 10 << 5 << 24000.0 << 10.008;
    // 32768 GPUs in zones of 3072: the 11th zone holds 2048 GPUs.
    QTest::newRow("three buildings, campus") << "three-buildings-two-regions.json"
                                             << "B1" << 10 << "B2" << 10 << 5 << 51200.0 << 0.108;
    QTest::newRow("three buildings, partial zone")
        << "three-buildings-two-regions.json"
        << "B3" << 10 << "B3" << 0 << 2 << 2048.0 * 400 / 7 << 0.005;
    // H100 building of 16384 GPUs: zone 5 holds 1024 GPUs (58514 Gbit/s up),
    // still wider than the 25.6 Tbit/s metro link.
    QTest::newRow("hetero pair, metro link") << "hetero-pair.json"
                                             << "B1" << 5 << "B2" << 0 << 5 << 25600.0 << 1.508;
    QTest::newRow("hetero pair, partial zone to full zone")
        << "hetero-pair.json"
        << "B1" << 5 << "B1" << 0 << 2 << 1024.0 * 400 / 7 << 0.005;
}

void TestTopology::sampleRoutes() {
    QFETCH(QString, file);
    QFETCH(QString, from);
    QFETCH(int, fromZone);
    QFETCH(QString, to);
    QFETCH(int, toZone);
    QFETCH(int, hops);
    QFETCH(double, bottleneck);
    QFETCH(double, latency);

    const Loaded<Cluster> loaded =
        loadClusterFile((sampleClusterDir() + QLatin1Char('/') + file).toStdString());
    QVERIFY(loaded.ok());
    const Cluster& c = *loaded.value;
    const Topology t(c);
    const int a = c.buildingIndex(from.toStdString());
    const int b = c.buildingIndex(to.toStdString());
    QVERIFY(a >= 0 && b >= 0);
    const Route r = t.route({a, fromZone}, {b, toZone});
    QVERIFY(r.reachable);
    QCOMPARE(r.hops, hops);
    const QString mismatch = routeMismatch(r, bottleneck, latency);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
}

QTEST_GUILESS_MAIN(TestTopology)
#include "tst_topology.moc"

// Geometry of the topology view without a window: buildings never overlap,
// sit inside their region, zones and chips inside their building, links
// start and end on building borders, for 2 to 20 buildings.

#include "topologylayout.h"

#include "../common/fixtures.h"

#include <QTest>

#include <cmath>

using namespace sa;
using namespace sa::views;
using sa::testing::building;
using sa::testing::clusterOf;

namespace {

Cluster makeCluster(int buildings, int regions, std::int64_t gpus, std::int64_t zoneGpus,
                    const QString& links) {
    Cluster c = clusterOf("test", {});
    for (int i = 0; i < buildings; ++i) {
        // Regions in blocks, so a region holds neighbours by index.
        const std::string region =
            QStringLiteral("region-%1").arg(i * regions / buildings).toStdString();
        c.buildings.push_back(building(QStringLiteral("B%1").arg(i + 1).toStdString(), gpus,
                                       {.region = region, .zone_gpus = zoneGpus}));
    }
    auto link = [&](int a, int b) {
        const std::string& from = c.buildings[std::size_t(a)].name;
        const std::string& to = c.buildings[std::size_t(b)].name;
        c.links.push_back(sa::testing::link(from, to, 25600, 1, "roce", from + "-" + to));
    };
    if (links == QLatin1String("chain")) {
        for (int i = 0; i + 1 < buildings; ++i)
            link(i, i + 1);
    } else if (links == QLatin1String("star")) {
        for (int i = 1; i < buildings; ++i)
            link(0, i);
    } else if (links == QLatin1String("mesh")) {
        for (int i = 0; i < buildings; ++i)
            for (int j = i + 1; j < buildings; ++j)
                link(i, j);
    } else if (links == QLatin1String("parallel")) {
        for (int i = 0; i + 1 < buildings; ++i) {
            link(i, i + 1);
            link(i, i + 1);
            c.links.back().name.append("-b");
        }
    }
    return c;
}

double distanceToBorder(const QRectF& r, QPointF p) {
    const double dx = std::min(std::fabs(p.x() - r.left()), std::fabs(p.x() - r.right()));
    const double dy = std::min(std::fabs(p.y() - r.top()), std::fabs(p.y() - r.bottom()));
    const bool withinX = p.x() >= r.left() - 1e-6 && p.x() <= r.right() + 1e-6;
    const bool withinY = p.y() >= r.top() - 1e-6 && p.y() <= r.bottom() + 1e-6;
    if (withinX && withinY)
        return std::min(dx, dy);
    return 1e9;
}

bool contains(const QRectF& outer, const QRectF& inner) {
    return outer.adjusted(-1e-6, -1e-6, 1e-6, 1e-6).contains(inner);
}

} // namespace

class TestTopologyLayout : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void geometry_data();
    void geometry();
    void linksAvoidBuildings_data();
    void linksAvoidBuildings();
    void parallelLinksFanOut();
    void manyZonesAreSummarised();
    void emptyCluster();
    void arrangementFollowsThePane();
};

void TestTopologyLayout::geometry_data() {
    QTest::addColumn<int>("buildings");
    QTest::addColumn<int>("regions");
    QTest::addColumn<QString>("links");
    for (int n = 2; n <= 20; ++n) {
        for (int regions : {1, 2, 3, n}) {
            if (regions > n)
                continue;
            const QString links = n <= 8 ? QStringLiteral("mesh") : QStringLiteral("chain");
            QTest::addRow("%d buildings, %d regions", n, regions) << n << regions << links;
        }
    }
}

void TestTopologyLayout::geometry() {
    QFETCH(int, buildings);
    QFETCH(int, regions);
    QFETCH(QString, links);
    const Cluster cluster = makeCluster(buildings, regions, 24576, 3072, links);
    const TopologyLayout layout = TopologyLayout::compute(cluster);

    QCOMPARE(int(layout.buildings().size()), buildings);
    QCOMPARE(int(layout.regions().size()), regions);
    const double gap = layout.metrics().buildingGap;
    for (int i = 0; i < buildings; ++i) {
        const auto& b = layout.buildings()[std::size_t(i)];
        QCOMPARE(b.index, i);
        // No overlap, and room left for link labels between neighbours.
        for (int j = i + 1; j < buildings; ++j) {
            const auto& o = layout.buildings()[std::size_t(j)];
            QVERIFY2(!b.rect.adjusted(-gap / 2 + 1, -gap / 2 + 1, gap / 2 - 1, gap / 2 - 1)
                          .intersects(o.rect),
                     qPrintable(QStringLiteral("B%1 and B%2 too close").arg(i + 1).arg(j + 1)));
        }
        const auto& region = layout.regions()[std::size_t(b.region)];
        QVERIFY(contains(region.rect, b.rect));
        QVERIFY(std::find(region.buildings.begin(), region.buildings.end(), i) !=
                region.buildings.end());
        QVERIFY(!region.title.intersects(b.rect));
        QVERIFY(contains(b.rect, b.header));
        QVERIFY(contains(b.rect, b.uplinkBar));
        QVERIFY(contains(b.rect, b.chipArea));
        QCOMPARE(int(b.zones.size()), 8);
        for (std::size_t z = 0; z < b.zones.size(); ++z) {
            QVERIFY(contains(b.rect, b.zones[z].rect));
            QVERIFY(!b.zones[z].rect.intersects(b.chipArea));
            QVERIFY(!b.zones[z].rect.intersects(b.uplinkBar));
            for (std::size_t w = z + 1; w < b.zones.size(); ++w)
                QVERIFY(!b.zones[z].rect.intersects(b.zones[w].rect));
        }
        QCOMPARE(layout.buildingAt(b.rect.center()), i);
        QVERIFY(contains(layout.bounds(), b.rect));
    }
    for (std::size_t r = 0; r < layout.regions().size(); ++r)
        for (std::size_t s = r + 1; s < layout.regions().size(); ++s)
            QVERIFY(!layout.regions()[r].rect.intersects(layout.regions()[s].rect));

    QCOMPARE(layout.links().size(), cluster.links.size());
    for (const auto& l : layout.links()) {
        const QRectF ra = layout.buildings()[std::size_t(l.a)].rect;
        const QRectF rb = layout.buildings()[std::size_t(l.b)].rect;
        QVERIFY2(distanceToBorder(ra, l.from) < 1e-6, "link does not start on its building");
        QVERIFY2(distanceToBorder(rb, l.to) < 1e-6, "link does not end on its building");
        QVERIFY(layout.bounds().contains(l.labelAnchor));
    }

    // Readable on a landscape screen: neither a tall tower nor a long strip.
    const double aspect = layout.bounds().width() / layout.bounds().height();
    QVERIFY2(aspect > 0.6 && aspect < 4.5, qPrintable(QString::number(aspect)));
}

void TestTopologyLayout::linksAvoidBuildings_data() {
    QTest::addColumn<int>("buildings");
    QTest::addColumn<int>("regions");
    QTest::addColumn<QString>("links");
    for (int n : {3, 5, 9, 12, 20}) {
        QTest::addRow("chain %d", n) << n << 1 << QStringLiteral("chain");
        QTest::addRow("chain %d in %d regions", n, n) << n << n << QStringLiteral("chain");
        QTest::addRow("star %d", n) << n << 2 << QStringLiteral("star");
    }
    QTest::addRow("three buildings, two regions, mesh") << 3 << 2 << QStringLiteral("mesh");
}

void TestTopologyLayout::linksAvoidBuildings() {
    QFETCH(int, buildings);
    QFETCH(int, regions);
    QFETCH(QString, links);
    const Cluster cluster = makeCluster(buildings, regions, 8192, 2048, links);
    const TopologyLayout layout = TopologyLayout::compute(cluster);
    int crossings = 0;
    for (const auto& l : layout.links()) {
        for (int s = 1; s < 100; ++s) {
            const QPointF p = l.pointAt(s / 100.0);
            for (const auto& b : layout.buildings())
                if (b.index != l.a && b.index != l.b && b.rect.contains(p))
                    ++crossings;
        }
    }
    // Stars with many spokes cannot always be drawn around every box; they
    // may cross a few, the others never.
    if (links == QLatin1String("star") && buildings > 5)
        QVERIFY2(crossings < 100 * buildings / 4, qPrintable(QString::number(crossings)));
    else
        QCOMPARE(crossings, 0);
}

void TestTopologyLayout::parallelLinksFanOut() {
    const Cluster cluster = makeCluster(2, 1, 8192, 8192, QStringLiteral("parallel"));
    const TopologyLayout layout = TopologyLayout::compute(cluster);
    QCOMPARE(layout.links().size(), std::size_t(2));
    const QPointF a = layout.links()[0].labelAnchor;
    const QPointF b = layout.links()[1].labelAnchor;
    // Labels of two links between the same buildings do not sit on top of
    // each other.
    QVERIFY(std::hypot(a.x() - b.x(), a.y() - b.y()) > 20);
}

void TestTopologyLayout::manyZonesAreSummarised() {
    // 100 zones: more than the tiles that fit; the last tile stands for the rest.
    const Cluster cluster = makeCluster(2, 1, 102400, 1024, QStringLiteral("chain"));
    const TopologyLayout layout = TopologyLayout::compute(cluster);
    const auto& zones = layout.buildings()[0].zones;
    const auto& m = layout.metrics();
    QCOMPARE(int(zones.size()), m.maxZoneColumns * m.maxZoneRows);
    QCOMPARE(zones.back().lastZone, 99);
    QCOMPARE(zones.front().firstZone, 0);
    QCOMPARE(zones.front().lastZone, 0);
    for (std::size_t i = 1; i < zones.size(); ++i)
        QCOMPARE(zones[i].firstZone, zones[i - 1].lastZone + 1);
}

void TestTopologyLayout::emptyCluster() {
    const TopologyLayout layout = TopologyLayout::compute(Cluster{});
    QVERIFY(layout.buildings().empty());
    QCOMPARE(layout.buildingAt(QPointF(0, 0)), -1);
}

// A wide pane gets a wide arrangement, a tall one a tall arrangement; each
// is closer to its own aspect than the other is, and stays valid.
void TestTopologyLayout::arrangementFollowsThePane() {
    for (int n : {4, 6, 9}) {
        const Cluster cluster = makeCluster(n, 1, 8192, 2048, QStringLiteral("chain"));
        const TopologyLayout wide = TopologyLayout::compute(cluster, {}, 4.0);
        const TopologyLayout tall = TopologyLayout::compute(cluster, {}, 0.5);
        const auto aspect = [](const TopologyLayout& l) {
            return l.bounds().width() / l.bounds().height();
        };
        QVERIFY2(aspect(wide) > aspect(tall), qPrintable(QStringLiteral("%1 buildings: %2 vs %3")
                                                             .arg(n)
                                                             .arg(aspect(wide))
                                                             .arg(aspect(tall))));
        QVERIFY(std::fabs(std::log(aspect(wide) / 4.0)) <= std::fabs(std::log(aspect(tall) / 4.0)));
        QVERIFY(std::fabs(std::log(aspect(tall) / 0.5)) <= std::fabs(std::log(aspect(wide) / 0.5)));
        for (const TopologyLayout* l : {&wide, &tall})
            for (std::size_t i = 0; i < l->buildings().size(); ++i)
                for (std::size_t j = i + 1; j < l->buildings().size(); ++j)
                    QVERIFY(!l->buildings()[i].rect.intersects(l->buildings()[j].rect));
    }
    // Nonsense aspects fall back to the default arrangement.
    const Cluster c = makeCluster(4, 1, 8192, 2048, QStringLiteral("chain"));
    QCOMPARE(TopologyLayout::compute(c, {}, 0).bounds(), TopologyLayout::compute(c).bounds());
    QCOMPARE(TopologyLayout::compute(c, {}, std::nan("")).bounds(),
             TopologyLayout::compute(c).bounds());
}

QTEST_GUILESS_MAIN(TestTopologyLayout)
#include "tst_topologylayout.moc"

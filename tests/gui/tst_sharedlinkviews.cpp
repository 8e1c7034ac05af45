// A link with others' traffic on it (background_gbps) in the explorer: the
// Links table says "job X + background Y of Z" and the cluster view draws
// the background's share of the link line in grey.

#include "heatscale.h"
#include "linktablemodel.h"
#include "topologyitems.h"

#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QTest>

#include <memory>

using namespace sa;
using namespace sa::views;

class TestSharedLinkViews : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void tableSaysJobAndBackground();
    void lineDrawsBackgroundShare();
};

void TestSharedLinkViews::tableSaysJobAndBackground() {
    auto ev = std::make_shared<Evaluation>();
    ev->step_time_s = 2;
    LinkUsage shared;
    shared.name = "B1-B2";
    shared.capacity_gbps = 1000;
    shared.bytes_per_step = 25e9; // 25e9 B x 8 / 2 s = 100 Gbit/s
    shared.utilization = 0.1;
    shared.peak_utilization = 0.4;
    shared.background_gbps = 300;
    shared.total_utilization = 0.4;
    shared.total_peak_utilization = 0.7;
    LinkUsage alone = shared;
    alone.name = "B2-B3";
    alone.background_gbps = 0;
    ev->links = {shared, alone};
    LinkTableModel model;
    model.setEvaluation(ev);
    QCOMPARE(model.index(0, LinkTableModel::Capacity).data().toString(),
             QString("job 100 Gbit/s + background 300 Gbit/s of 1 Tbit/s"));
    QCOMPARE(model.index(1, LinkTableModel::Capacity).data().toString(), QString("1 Tbit/s"));
    const QString tip =
        model.index(0, LinkTableModel::Utilization).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains("40") && tip.contains("70"), qPrintable(tip));
    QVERIFY(model.index(1, LinkTableModel::Utilization).data(Qt::ToolTipRole).isNull());
    // Sorting still by capacity.
    QCOMPARE(model.index(0, LinkTableModel::Capacity).data(LinkTableModel::SortRole).toDouble(),
             1000.0);
}

// A straight 400-pixel link at y = 50, a quarter of it taken by others: its
// first 100 pixels are grey, the rest the heat colour.
void TestSharedLinkViews::lineDrawsBackgroundShare() {
    Link link;
    link.a = "B1";
    link.b = "B2";
    link.bandwidth_gbps = 1000;
    link.background_gbps = 250;
    TopologyLayout::LinkPath path;
    path.from = QPointF(0, 50);
    path.to = QPointF(400, 50);
    path.control = QPointF(200, 50);
    QGraphicsScene scene(0, 0, 400, 100);
    auto* item = new LinkItem(path, link);
    scene.addItem(item);
    QCOMPARE(item->backgroundShare(), 0.25);
    LinkHeat heat;
    heat.bytes_per_step = 1e9;
    heat.peak_utilization = 0.5;
    item->setHeat(heat, 12, QString());
    QImage image(400, 100, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    scene.render(&painter, QRectF(0, 0, 400, 100), QRectF(0, 0, 400, 100));
    painter.end();
    const QColor grey(0x86, 0x8e, 0x96);
    const QColor hot = HeatScale::colorFor(0.5);
    QCOMPARE(image.pixelColor(50, 54), grey); // off the light stripe down the middle
    QCOMPARE(image.pixelColor(300, 54), hot);
    QCOMPARE(image.pixelColor(300, 50), hot);
    // Without background: the heat colour all along.
    Link clean = link;
    clean.background_gbps = 0;
    QGraphicsScene scene2(0, 0, 400, 100);
    auto* plain = new LinkItem(path, clean);
    scene2.addItem(plain);
    plain->setHeat(heat, 12, QString());
    QCOMPARE(plain->backgroundShare(), 0.0);
    QImage image2(400, 100, QImage::Format_RGB32);
    image2.fill(Qt::white);
    QPainter painter2(&image2);
    scene2.render(&painter2, QRectF(0, 0, 400, 100), QRectF(0, 0, 400, 100));
    painter2.end();
    QCOMPARE(image2.pixelColor(50, 54), hot);
}

QTEST_MAIN(TestSharedLinkViews)
#include "tst_sharedlinkviews.moc"

// The explorer end to end, offscreen: open a sample, see its buildings and
// links, move a stage by dragging its chip (the evaluation changes, undo
// restores it exactly), refused drops, bad files, the inspector's
// validation, the link table model, and the drop-to-repainted-heatmap time.

#include "document.h"
#include "elidinglabel.h"
#include "heatscale.h"
#include "linktablemodel.h"
#include "liveevaluation.h"
#include "mainwindow.h"
#include "planinspector.h"
#include "timelinepane.h"
#include "timelineview.h"
#include "topologyitems.h"
#include "topologyview.h"

#include "../common/mainwindow_wait.h"
#include "../common/samples.h"
#include "../common/text_recorder.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QLabel>
#include <QMimeData>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <QToolButton>
#include <QUrl>

#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace sa;
using namespace sa::views;
using sa::testing::sampleScenario;

namespace {

bool sameTraffic(const Evaluation& a, const Evaluation& b) {
    if (a.links.size() != b.links.size())
        return false;
    for (std::size_t i = 0; i < a.links.size(); ++i)
        if (a.links[i].name != b.links[i].name ||
            a.links[i].bytes_per_step != b.links[i].bytes_per_step ||
            a.links[i].utilization != b.links[i].utilization)
            return false;
    return true;
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void showsTheCluster();
    void dragStageChangesEvaluationAndUndoRestores();
    void illegalDropIsRefused();
    void dropOnAFullBuildingProposesASwap();
    void shiftDropMovesSomeReplicas();
    void badFileKeepsDocumentAndShowsMessage();
    void inspectorValidatesAsYouType();
    void linkTableModelPassesTester();
    void staleEvaluationNeverShown();
    void droppedFileOpensAndIsRecent();
    void exportsTopologyImages();
    void dropToRepaintedHeatmap();
    void heatmapPaintsBeforeTheDocks();
    void pinningGivesTheTimelinesRoom_data();
    void pinningGivesTheTimelinesRoom();
    void f1OpensTheGuide();
    void topologyFollowsItsPane();
    void topologyTextIsReadable();
    void notesShowTheEvaluationsWarnings();
    void buildingCountKeepsItsTotal();
    void statusLineFitsTheWindow();
    void linkLabelsKeepClearOfEachOther();

private:
    // The chip of stage `stage` in building `building`.
    int chipOf(int stage, int building) const;
    bool waitForEvaluation(int ms = 10000);
    std::unique_ptr<MainWindow> window_;
};

void TestMainWindow::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ScaleAcrossTests"));
}

void TestMainWindow::init() {
    window_ = std::make_unique<MainWindow>();
    QVERIFY(sa::testing::showSample(*window_, sampleScenario("three-buildings-405b.json")));
}

void TestMainWindow::cleanup() {
    if (window_)
        window_->document()->undoStack()->setClean(); // no "save changes?" on close
    window_.reset();
}

bool TestMainWindow::waitForEvaluation(int ms) {
    return sa::testing::waitForShownEvaluation(*window_, ms);
}

int TestMainWindow::chipOf(int stage, int building) const {
    const auto& chips = window_->topologyView()->chips();
    for (std::size_t i = 0; i < chips.size(); ++i)
        if (chips[i].stage_first == stage && chips[i].building == building)
            return int(i);
    return -1;
}

void TestMainWindow::showsTheCluster() {
    TopologyView* view = window_->topologyView();
    QCOMPARE(view->topologyLayout().buildings().size(), std::size_t(3));
    QCOMPARE(view->topologyLayout().regions().size(), std::size_t(2));
    for (int l = 0; l < 3; ++l)
        QVERIFY(view->linkItem(l));
    // 16 stages in each of the three buildings, one chip each.
    QCOMPARE(view->chips().size(), std::size_t(48));
    for (int i = 0; i < 48; ++i)
        QVERIFY(view->chipItem(i));
    QVERIFY(window_->statusText().contains(QLatin1String("Step")));
    QVERIFY(window_->statusText().contains(QLatin1String("MFU")));
    // The run: goodput in the bar, its pieces in the tooltip.
    auto* run = window_->findChild<QLabel*>(QStringLiteral("runLabel"));
    QVERIFY(run);
    QVERIFY2(run->text().startsWith(QLatin1String("Goodput ")), qPrintable(run->text()));
    QVERIFY2(run->toolTip().contains(QLatin1String("job MTBF")), qPrintable(run->toolTip()));
    QVERIFY(run->toolTip().contains(QLatin1String("kWh")));
    QVERIFY(window_->windowTitle().contains(QLatin1String("ScaleAcross Explorer")));
    // The building's zones as they are: 32,768 GPUs in zones of 3,072.
    const QString buildingTip = view->buildingItem(0)->toolTip();
    QVERIFY2(buildingTip.contains(QStringLiteral("11 zones: 10 of 3,072 GPUs and one of 2,048")),
             qPrintable(buildingTip));
    // Chips say their GPUs: each group header per stage, the drag label in all.
    QVERIFY(view->chipItem(0)->toolTip().contains(QStringLiteral("2,048 GPUs")));
    // Link labels sit beside their lines, clear of the widest line.
    for (const auto& path : view->topologyLayout().links()) {
        const LinkLabelItem* label = view->linkLabel(path.link);
        QVERIFY(label);
        const QRectF r = label->labelRect();
        QVERIFY(!r.adjusted(-HeatScale::kMaxWidth / 2, -HeatScale::kMaxWidth / 2,
                            HeatScale::kMaxWidth / 2, HeatScale::kMaxWidth / 2)
                     .contains(path.labelAnchor));
    }
    // Every inter-building link's label says, without hovering, its bytes
    // and peak; with room beside the line, how long it is busy in the step
    // and which dimensions cross (the sample's DP is outermost: DP crosses
    // every link). At 1920 x 1080 every label has that room.
    auto labelsSay = [&](bool busy) {
        for (const auto& path : view->topologyLayout().links()) {
            const QString text = view->linkLabel(path.link)->lines().join(QLatin1Char(' '));
            if (!text.contains(QLatin1String("/step")) || !text.contains(QLatin1String("peak")))
                return text;
            if (busy &&
                (!text.contains(QLatin1String("busy ")) || !text.contains(QLatin1String("DP"))))
                return text;
        }
        return QString();
    };
    QCOMPARE(labelsSay(false), QString());
    window_->resize(1920, 1080);
    QTest::qWait(50);
    view->fitToView();
    QCOMPARE(labelsSay(true), QString());
    window_->resize(1400, 900);
    QTest::qWait(50);
    // Link tooltips carry bandwidth, latency, technology and traffic.
    const QString tip = view->linkItem(1)->toolTip();
    QVERIFY2(tip.contains(QLatin1String("24 Tbit/s")), qPrintable(tip));
    QVERIFY(tip.contains(QLatin1String("10 ms")));
    QVERIFY(tip.contains(QLatin1String("tcp-64flows")));
    QVERIFY(tip.contains(QLatin1String("per step")));
    QVERIFY(tip.contains(QLatin1String("DP")));
    // Zoom steps and fit.
    const double fit = view->zoomFactor();
    view->zoomIn();
    QVERIFY(view->zoomFactor() > fit);
    view->fitToView();
    QCOMPARE(view->zoomFactor(), fit);
    // Ctrl+wheel zooms; a plain wheel does not.
    const QPointF centre = QPointF(view->viewport()->rect().center());
    QWheelEvent wheel(centre, view->viewport()->mapToGlobal(centre), {}, QPoint(0, 240),
                      Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(view->viewport(), &wheel);
    QVERIFY(view->zoomFactor() > fit * 1.2);
    // Dragging the background pans.
    const QPointF before = view->mapToScene(view->viewport()->rect().center());
    // A corner of the canvas: at most a region or building box, which let
    // the press through (only chips take it).
    const QPoint empty(5, 5);
    QVERIFY(dynamic_cast<ChipItem*>(view->itemAt(empty)) == nullptr);
    QTest::mousePress(view->viewport(), Qt::LeftButton, {}, empty);
    for (int i = 1; i <= 5; ++i)
        QTest::mouseMove(view->viewport(), empty + QPoint(20 * i, 12 * i));
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, empty + QPoint(100, 60));
    const QPointF after = view->mapToScene(view->viewport()->rect().center());
    QVERIFY2(std::hypot(after.x() - before.x(), after.y() - before.y()) > 20,
             qPrintable(QStringLiteral("%1,%2 -> %3,%4")
                            .arg(before.x())
                            .arg(before.y())
                            .arg(after.x())
                            .arg(after.y())));
    view->fitToView();
}

void TestMainWindow::dragStageChangesEvaluationAndUndoRestores() {
    TopologyView* view = window_->topologyView();
    const auto before = window_->shownSnapshot()->evaluation;
    QVERIFY(before);
    const Scenario original = window_->document()->scenario();

    // Drag stage 0 of B2's replicas with the mouse onto stage 15 in B1: a swap.
    const int moving = chipOf(0, 1);
    const int target = chipOf(15, 0);
    QVERIFY(moving >= 0 && target >= 0);
    ChipItem* from = view->chipItem(moving);
    ChipItem* to = view->chipItem(target);
    const QPoint start = view->mapFromScene(from->sceneBoundingRect().center());
    const QPoint end = view->mapFromScene(to->sceneBoundingRect().center());
    QSignalSpy dropped(view, &TopologyView::chipDropped);
    // While hovering: a legal swap, previewed.
    QVERIFY(sa::testing::dragAndHover(*window_, start, end));
    QVERIFY(view->buildingItem(0)->dropState() == BuildingItem::DropState::Legal);
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, end);
    QTRY_COMPARE(dropped.count(), 1);
    QCOMPARE(window_->document()->undoStack()->count(), 1);
    QVERIFY(window_->document()->undoStack()->undoText().startsWith(QLatin1String("Swap")));
    QVERIFY(waitForEvaluation());
    const auto moved = window_->shownSnapshot()->evaluation;
    QVERIFY(moved);
    QVERIFY(moved->step_time_s != before->step_time_s);
    QVERIFY(!sameTraffic(*moved, *before));
    // The chips follow the document: stage 0 now has a chip in B1 for B2's replicas.
    QVERIFY(chipOf(15, 1) >= 0);

    window_->document()->undoStack()->undo();
    QCOMPARE(window_->document()->scenario(), original);
    QVERIFY(waitForEvaluation());
    const auto restored = window_->shownSnapshot()->evaluation;
    QCOMPARE(restored->step_time_s, before->step_time_s);
    QCOMPARE(restored->mfu, before->mfu);
    QVERIFY(sameTraffic(*restored, *before));
    QVERIFY(window_->statusText().contains(QStringLiteral("Δ 0 %")));
}

void TestMainWindow::illegalDropIsRefused() {
    TopologyView* view = window_->topologyView();
    const Scenario original = window_->document()->scenario();
    // Stage 3 of B3 swapped for all of B1 (32,768 GPUs): B3 cannot hold it.
    ChipDrop drop;
    drop.chip = view->chips()[std::size_t(chipOf(3, 2))];
    drop.building = 0;
    const PlacementResult placed = placeCells(original.cluster, original.plan);
    for (const GroupChip& c : chipsOf(placed.grid))
        if (c.building == 0)
            drop.swapWith = c;
    QVERIFY(drop.swapWith);
    Q_EMIT view->chipDropped(drop);
    QCOMPARE(window_->document()->scenario(), original);
    QCOMPARE(window_->document()->undoStack()->count(), 0);
    const QString message = window_->statusBar()->currentMessage();
    QVERIFY2(message.startsWith(QLatin1String("Refused")), qPrintable(message));
    QVERIFY(message.contains(QLatin1String("B3")));
}

// Dragged onto a full building's header (no chip under the mouse): the drop
// proposes a swap, outlines the chip it would displace, says so in the
// status bar and applies it on release as one undo step.
void TestMainWindow::dropOnAFullBuildingProposesASwap() {
    TopologyView* view = window_->topologyView();
    const Scenario original = window_->document()->scenario();
    const int moving = chipOf(3, 2);
    QVERIFY(moving >= 0);
    const QPoint start = view->mapFromScene(view->chipItem(moving)->sceneBoundingRect().center());
    const QPoint end = view->mapFromScene(view->topologyLayout().buildings()[0].header.center());
    QVERIFY(view->viewport()->rect().contains(end));
    QVERIFY(sa::testing::dragAndHover(*window_, start, end));
    QVERIFY(view->buildingItem(0)->dropState() == BuildingItem::DropState::Legal);
    const int displaced = view->displacedChip();
    QVERIFY(displaced >= 0);
    QCOMPARE(view->chips()[std::size_t(displaced)].building, 0);
    QCOMPARE(view->chips()[std::size_t(displaced)].stage_first, 3);
    QVERIFY(view->chipItem(displaced)->isSwapTarget());
    const QString message = window_->statusBar()->currentMessage();
    QVERIFY2(message.startsWith(QLatin1String("B1 is full: Swap S3")), qPrintable(message));
    QVERIFY2(message.contains(QLatin1String("release to apply")), qPrintable(message));
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, end);
    QTRY_COMPARE(window_->document()->undoStack()->count(), 1);
    QVERIFY(window_->document()->undoStack()->undoText().startsWith(QLatin1String("B1 is full")));
    QVERIFY(view->displacedChip() < 0);
    window_->document()->undoStack()->undo();
    QCOMPARE(window_->document()->scenario(), original);
}

void TestMainWindow::badFileKeepsDocumentAndShowsMessage() {
    const Scenario original = window_->document()->scenario();
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("broken.json"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"format": "scaleacross.scenario", "version": 1, "cluster": 3})");
    f.close();
    QVERIFY(!window_->openFile(path));
    QVERIFY(window_->lastError().contains(QLatin1String("broken.json")));
    QWidget* banner = window_->findChild<QWidget*>(QStringLiteral("errorBanner"));
    QVERIFY(banner && banner->isVisible());
    QCOMPARE(window_->document()->scenario(), original);
    QVERIFY(window_->document()->filePath().isEmpty());
    // A good file afterwards clears the message.
    QVERIFY(window_->openFile(sampleScenario("two-buildings-405b.json")));
    QVERIFY(!banner->isVisible());
    QCOMPARE(window_->topologyView()->topologyLayout().buildings().size(), std::size_t(2));
}

void TestMainWindow::inspectorValidatesAsYouType() {
    PlanInspector* inspector = window_->inspector();
    Document* doc = window_->document();
    const Scenario original = doc->scenario();
    // TP 3 does not divide the heads: shown, not applied.
    inspector->spinBox(QStringLiteral("tp"))->setValue(3);
    QVERIFY(!inspector->problem().isEmpty());
    QVERIFY2(inspector->problem().contains(QLatin1String("tp")), qPrintable(inspector->problem()));
    QCOMPARE(doc->scenario(), original);
    QCOMPARE(doc->undoStack()->count(), 0);
    // Micro batch 2, then 4: valid, applied, one undo step for the field.
    QSpinBox* micro = inspector->spinBox(QStringLiteral("micro_batch_sequences"));
    micro->setValue(2);
    micro->setValue(4);
    QVERIFY(inspector->problem().isEmpty());
    QCOMPARE(doc->scenario().plan.micro_batch_sequences, std::int64_t(4));
    QCOMPARE(doc->undoStack()->count(), 1);
    // The invalid TP field was reset to the document's value.
    QCOMPARE(inspector->spinBox(QStringLiteral("tp"))->value(), original.plan.parallelism.tp);
    doc->undoStack()->undo();
    QCOMPARE(micro->value(), int(original.plan.micro_batch_sequences));
    QCOMPARE(doc->scenario(), original);

    // A link's technology: an override in the plan, seen by the evaluation.
    QComboBox* tech = nullptr;
    for (QComboBox* box : inspector->findChildren<QComboBox*>())
        if (box->itemText(0).endsWith(QLatin1String("(cluster)")) &&
            box->toolTip().contains(QLatin1String("B1-B3")))
            tech = box;
    QVERIFY(tech);
    tech->setCurrentIndex(tech->findText(QStringLiteral("tcp")));
    QCOMPARE(doc->scenario().plan.link_technologies.at("B1-B3").technology, std::string("tcp"));
    QVERIFY(waitForEvaluation());
    bool seen = false;
    for (const auto& l : window_->shownSnapshot()->evaluation->links)
        if (l.name == "B1-B3") {
            QCOMPARE(l.technology, std::string("tcp"));
            seen = true;
        }
    QVERIFY(seen);
    doc->undoStack()->undo();
    QCOMPARE(tech->currentIndex(), 0);
    QCOMPARE(doc->scenario(), original);
}

void TestMainWindow::linkTableModelPassesTester() {
    LinkTableModel* model = window_->linkTableModel();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(model);
    proxy.setSortRole(LinkTableModel::SortRole);
    proxy.sort(LinkTableModel::BytesPerStep, Qt::DescendingOrder);
    QAbstractItemModelTester proxyTester(&proxy,
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
    const auto e = window_->shownSnapshot()->evaluation;
    QCOMPARE(model->rowCount(), int(e->links.size()));
    QCOMPARE(model->columnCount(), int(LinkTableModel::ColumnCount));
    QCOMPARE(model->rowCount(model->index(0, 0)), 0);
    // Sorted by bytes, the busiest link comes first.
    double maxBytes = 0;
    for (const auto& l : e->links)
        maxBytes = std::max(maxBytes, l.bytes_per_step);
    QCOMPARE(proxy.index(0, LinkTableModel::BytesPerStep).data(LinkTableModel::SortRole).toDouble(),
             maxBytes);
    // A link between buildings shows its latency; an uplink inside one has
    // none of its own (it read "0 ms"): "per step", with the tooltip saying
    // where the model charges it.
    for (int r = 0; r < model->rowCount(); ++r) {
        const LinkUsage& l = e->links[std::size_t(r)];
        const QString shownLatency = model->index(r, LinkTableModel::Latency).data().toString();
        const QString tip =
            model->index(r, LinkTableModel::Latency).data(Qt::ToolTipRole).toString();
        if (l.tier == LinkTier::InterBuilding) {
            QVERIFY2(l.latency_ms > 0 && shownLatency.endsWith(QStringLiteral("s")),
                     qPrintable(shownLatency));
            QVERIFY(tip.isEmpty());
        } else {
            QCOMPARE(l.latency_ms, 0.0);
            QCOMPARE(shownLatency, QStringLiteral("per step"));
            QVERIFY2(tip.contains(QStringLiteral("scale_out_latency_us")), qPrintable(tip));
        }
    }
    // The Links tab: inter-building links first, then by peak utilisation
    // (its default), in either order of any column.
    auto* table = window_->findChild<QTableView*>(QStringLiteral("linkTable"));
    QVERIFY(table);
    QAbstractItemModel* shown = table->model();
    auto tierAt = [&](int row) {
        return shown->index(row, LinkTableModel::Tier).data(LinkTableModel::SortRole).toInt();
    };
    int across = 0;
    for (const auto& l : e->links)
        across += l.tier == LinkTier::InterBuilding;
    QVERIFY(across > 0 && across < shown->rowCount());
    for (const auto& [column, order] :
         {std::pair{int(LinkTableModel::PeakUtilization), Qt::DescendingOrder},
          std::pair{int(LinkTableModel::Name), Qt::AscendingOrder},
          std::pair{int(LinkTableModel::BytesPerStep), Qt::AscendingOrder}}) {
        if (column != LinkTableModel::PeakUtilization)
            table->sortByColumn(column, order);
        for (int r = 0; r < shown->rowCount(); ++r)
            QCOMPARE(tierAt(r) == int(LinkTier::InterBuilding), r < across);
        for (int r = 1; r < across; ++r) {
            const QVariant a = shown->index(r - 1, column).data(LinkTableModel::SortRole);
            const QVariant b = shown->index(r, column).data(LinkTableModel::SortRole);
            if (order == Qt::DescendingOrder)
                QVERIFY(QVariant::compare(a, b) != QPartialOrdering::Less);
            else
                QVERIFY(QVariant::compare(a, b) != QPartialOrdering::Greater);
        }
    }
    table->sortByColumn(LinkTableModel::PeakUtilization, Qt::DescendingOrder);

    // New evaluations (same links: in place; other cluster: reset), and none.
    Plan plan = window_->document()->scenario().plan;
    plan.micro_batch_sequences = 2;
    window_->document()->setPlan(plan, QStringLiteral("edit"));
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->openSample(sampleScenario("two-buildings-405b.json")));
    QVERIFY(waitForEvaluation());
    QCOMPARE(model->rowCount(), int(window_->shownSnapshot()->evaluation->links.size()));
    model->setEvaluation(nullptr);
    QCOMPARE(model->rowCount(), 0);
}

void TestMainWindow::staleEvaluationNeverShown() {
    // A burst of edits: the views end on the evaluation of the last one.
    Document* doc = window_->document();
    Plan plan = doc->scenario().plan;
    std::vector<std::uint64_t> shownRevisions;
    connect(window_->liveEvaluation(), &LiveEvaluation::evaluated, this,
            [&](std::shared_ptr<const EvaluationSnapshot> s) {
                shownRevisions.push_back(s->revision);
            });
    for (int mb : {2, 4, 8, 16, 2, 4}) {
        plan.micro_batch_sequences = mb;
        doc->setPlan(plan, QStringLiteral("edit"));
    }
    QVERIFY(waitForEvaluation());
    QVERIFY(!shownRevisions.empty());
    QVERIFY(std::is_sorted(shownRevisions.begin(), shownRevisions.end()));
    QCOMPARE(shownRevisions.back(), window_->liveEvaluation()->revision());
    QCOMPARE(window_->shownSnapshot()->plan.micro_batch_sequences, std::int64_t(4));
}

void TestMainWindow::droppedFileOpensAndIsRecent() {
    const QString path = sampleScenario("two-buildings-405b.json");
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    const QPoint at = window_->rect().center();
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, {});
    QCoreApplication::sendEvent(window_.get(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, {});
    QCoreApplication::sendEvent(window_.get(), &drop);
    QCOMPARE(window_->document()->filePath(), QFileInfo(path).absoluteFilePath());
    QCOMPARE(window_->document()->scenario().cluster.buildings.size(), std::size_t(2));
    const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    QVERIFY(!recent.isEmpty());
    QCOMPARE(recent.front(), QFileInfo(path).absoluteFilePath());
    // Not a JSON file: refused at the door.
    QMimeData text;
    text.setUrls({QUrl::fromLocalFile(QStringLiteral("/tmp/notes.txt"))});
    QDragEnterEvent other(at, Qt::CopyAction, &text, Qt::LeftButton, {});
    other.setAccepted(false);
    QCoreApplication::sendEvent(window_.get(), &other);
    QVERIFY(!other.isAccepted());
}

void TestMainWindow::exportsTopologyImages() {
    QTemporaryDir dir;
    QString error;
    const QString png = dir.filePath(QStringLiteral("topology.png"));
    QVERIFY2(window_->exportTopologyImage(png, &error), qPrintable(error));
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() > 1000);
    const QString svg = dir.filePath(QStringLiteral("topology.svg"));
    QVERIFY2(window_->exportTopologyImage(svg, &error), qPrintable(error));
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray text = f.readAll();
    QVERIFY(text.contains("<svg"));
    QVERIFY(text.contains("B3"));

    // Failures say why and leave no file behind.
    const QString missingDir = dir.filePath(QStringLiteral("no/such/dir/topology.png"));
    QVERIFY(!window_->exportTopologyImage(missingDir, &error));
    QVERIFY2(error.contains(QStringLiteral("Cannot write")), qPrintable(error));
    QVERIFY(!QFile::exists(missingDir));
    const QString jpeg = dir.filePath(QStringLiteral("topology.jpg"));
    QVERIFY(!window_->exportTopologyImage(jpeg, &error));
    QVERIFY2(error.contains(QStringLiteral(".png or .svg")), qPrintable(error));
    QVERIFY(!QFile::exists(jpeg));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 2);
}

void TestMainWindow::dropToRepaintedHeatmap() {
    // From the drop of a stage chip to the first paint of the new heatmap,
    // Llama 3 405B on the three-building sample. Cold: nothing evaluated
    // before the drop. Hovered: the user held the chip over its target, so
    // the preview evaluation of exactly this plan is already there.
    // Wall time depends on what else the machine runs; the CPU time of the
    // UI thread plus the worker's evaluation is what it costs when idle.
    TopologyView* view = window_->topologyView();
    QSignalSpy painted(view, &TopologyView::heatmapPainted);
    struct Sample {
        double wall = -1;
        double uiCpu = 0;
        double evalCpu = 0;
    };
    auto measure = [&](bool hover) {
        Sample sample;
        const int moving = chipOf(0, 1);
        const int target = chipOf(15, 0);
        ChipDrop drop{view->chips()[std::size_t(moving)], 0, view->chips()[std::size_t(target)]};
        if (hover) {
            view->previewChipDrag(moving, 0, target);
            const bool previewed = QTest::qWaitFor([&] {
                const auto s = window_->shownSnapshot();
                return s && s->preview;
            });
            if (!previewed)
                return sample;
            view->endChipPreview();
            // endPreview shows the document again; wait for that paint too.
            QTest::qWait(20);
        }
        painted.clear();
        QElapsedTimer timer;
        timer.start();
        const double cpu0 = threadCpuMs();
        Q_EMIT view->chipDropped(drop);
        const bool ok = QTest::qWaitFor([&] { return painted.count() > 0; }, 5000);
        sample.uiCpu = threadCpuMs() - cpu0;
        sample.wall = timer.nsecsElapsed() / 1e6;
        // The polling wait adds little: qWaitFor sleeps in 10 ms slices.
        if (ok && !hover)
            sample.evalCpu = window_->shownSnapshot()->evaluate_cpu_ms;
        if (!ok)
            sample.wall = -1;
        window_->document()->undoStack()->undo();
        [[maybe_unused]] const bool settled = waitForEvaluation();
        QTest::qWait(20);
        return sample;
    };
    std::vector<Sample> cold;
    std::vector<Sample> hovered;
    for (int i = 0; i < 15; ++i) {
        cold.push_back(measure(false));
        hovered.push_back(measure(true));
    }
    auto median = [](const std::vector<Sample>& v, double Sample::*field) {
        std::vector<double> x;
        for (const auto& s : v)
            x.push_back(s.*field);
        std::sort(x.begin(), x.end());
        return x[x.size() / 2];
    };
    for (const auto& s : cold)
        QVERIFY(s.wall >= 0);
    for (const auto& s : hovered)
        QVERIFY(s.wall >= 0);
    std::printf("drop-to-repainted-heatmap (llama3-405b, three buildings, %s build, medians of "
                "15):\n  cold:  wall %.1f ms; CPU: UI thread %.1f ms + evaluation %.1f ms = "
                "%.1f ms\n  after hover: wall %.1f ms; CPU: UI thread %.1f ms\n",
#ifdef NDEBUG
                "optimised",
#else
                "debug",
#endif
                median(cold, &Sample::wall), median(cold, &Sample::uiCpu),
                median(cold, &Sample::evalCpu),
                median(cold, &Sample::uiCpu) + median(cold, &Sample::evalCpu),
                median(hovered, &Sample::wall), median(hovered, &Sample::uiCpu));
    std::fflush(stdout);
}

// Help > Guide (F1): the views and keys, with links to docs that exist.
void TestMainWindow::heatmapPaintsBeforeTheDocks() {
    // A drop repaints the heatmap first; the link table, timeline, charts,
    // compare and run docks take the evaluation right after that paint.
    TopologyView* view = window_->topologyView();
    std::vector<bool> docksReadyAtPaint;
    connect(view, &TopologyView::heatmapPainted, this,
            [&] { docksReadyAtPaint.push_back(window_->panelsUpToDate()); });
    const auto before = window_->shownSnapshot()->evaluation;
    const ChipDrop drop{view->chips()[std::size_t(chipOf(0, 1))], 0,
                        view->chips()[std::size_t(chipOf(15, 0))]};
    Q_EMIT view->chipDropped(drop);
    QVERIFY(waitForEvaluation());
    const auto shown = window_->shownSnapshot()->evaluation;
    QVERIFY(shown && shown != before);
    QVERIFY(!docksReadyAtPaint.empty());
    QCOMPARE(docksReadyAtPaint.back(), false);
    // Then every dock shows what the heatmap shows.
    QVERIFY(window_->panelsUpToDate());
    QCOMPARE(window_->timelinePane()->current()->evaluation(), shown);
    QCOMPARE(window_->linkTableModel()->rowCount(), int(shown->links.size()));
    window_->document()->undoStack()->undo();
    QVERIFY(waitForEvaluation());
    QCOMPARE(window_->timelinePane()->current()->evaluation(),
             window_->shownSnapshot()->evaluation);
}

void TestMainWindow::pinningGivesTheTimelinesRoom_data() {
    // The stages each timeline shows without scrolling, of 16 (before the
    // rows were fitted, 2 to 3 at 1280 x 800).
    QTest::addColumn<QSize>("size");
    QTest::addColumn<int>("pinnedStages");
    QTest::addColumn<int>("currentStages");
    QTest::newRow("1280x800") << QSize(1280, 800) << 16 << 14;
    QTest::newRow("1920x1080") << QSize(1920, 1080) << 16 << 16;
}

void TestMainWindow::pinningGivesTheTimelinesRoom() {
    // A pinned plan and the current one share the timeline dock: it grows to
    // half the window and each timeline squeezes its rows to show its stages.
    QFETCH(QSize, size);
    QFETCH(int, pinnedStages);
    QFETCH(int, currentStages);
    window_->resize(size);
    QTest::qWait(50);
    window_->showDock(QStringLiteral("timeline"));
    window_->pinCurrentPlan();
    TopologyView* view = window_->topologyView();
    Q_EMIT view->chipDropped(ChipDrop{view->chips()[std::size_t(chipOf(0, 1))], 0,
                                      view->chips()[std::size_t(chipOf(15, 0))]});
    QVERIFY(waitForEvaluation());
    QTest::qWait(50);
    auto* dock = window_->findChild<QDockWidget*>(QStringLiteral("timelineDock"));
    QVERIFY(dock);
    QVERIFY2(
        dock->height() >= window_->height() * 45 / 100,
        qPrintable(QStringLiteral("dock %1 of %2").arg(dock->height()).arg(window_->height())));
    auto shownStages = [](const TimelineView* t) {
        int shown = 0;
        const QRect area = t->timeArea();
        for (int s = 0; s < t->evaluation()->timeline.stages; ++s)
            for (const TimelineOp& op : t->evaluation()->timeline.ops)
                if (op.stage == s && op.kind == OpKind::Forward) {
                    shown += area.contains(t->opRect(op).center().toPoint()) ? 1 : 0;
                    break;
                }
        return shown;
    };
    const TimelinePane* pane = window_->timelinePane();
    for (const TimelineView* t : {pane->current(), pane->pinned()}) {
        QVERIFY(t->isVisible());
        QVERIFY(t->fitsRows());
        QCOMPARE(t->evaluation()->timeline.stages, 16);
    }
    QVERIFY2(shownStages(pane->pinned()) >= pinnedStages,
             qPrintable(QString::number(shownStages(pane->pinned()))));
    QVERIFY2(shownStages(pane->current()) >= currentStages,
             qPrintable(QString::number(shownStages(pane->current()))));
    window_->clearPinnedPlan();
    QVERIFY(!window_->timelinePane()->current()->fitsRows());
    window_->document()->undoStack()->undo();
    QVERIFY(waitForEvaluation());
}

void TestMainWindow::f1OpensTheGuide() {
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    window_->activateWindow();
    QTest::keyClick(window_.get(), Qt::Key_F1);
    auto* dialog = window_->findChild<QDialog*>(QStringLiteral("guideDialog"));
    QVERIFY(dialog);
    QVERIFY(QTest::qWaitFor([&] { return dialog->isVisible(); }));
    auto* text = dialog->findChild<QTextBrowser*>(QStringLiteral("guideText"));
    QVERIFY(text);
    const QString html = text->toHtml();
    for (const char* must : {"Inspector", "Escape", "Ctrl+Shift+P", "Run"})
        QVERIFY2(html.contains(QLatin1String(must)), must);
    const QString plain = text->toPlainText();
    QVERIFY(plain.contains(QLatin1String("COST_MODEL.md")));
    // In the build tree the pages resolve to the source docs.
    const QRegularExpression link(QStringLiteral("href=\"(file:[^\"]+COST_MODEL\\.md)\""));
    const auto m = link.match(html);
    QVERIFY2(m.hasMatch(), qPrintable(html.right(600)));
    QVERIFY(QFileInfo::exists(QUrl(m.captured(1)).toLocalFile()));
    QTest::keyClick(dialog, Qt::Key_Escape);
    QVERIFY(!dialog->isVisible());
}

// The topology's arrangement follows the pane's shape and keeps the chips
// and the heat; the legend folds on a click and for a small pane.
void TestMainWindow::topologyFollowsItsPane() {
    TopologyView* view = window_->topologyView();
    const std::size_t chips = view->chips().size();
    QVERIFY(chips > 0 && view->evaluation());
    TopologyView wide;
    wide.setCluster(view->cluster());
    wide.setChips(view->chips(), 8, {});
    wide.setEvaluation(view->evaluation());
    wide.resize(1400, 300);
    wide.show();
    QVERIFY(QTest::qWaitForWindowExposed(&wide));
    const auto aspect = [&] {
        const QRectF b = wide.topologyLayout().bounds();
        return b.width() / b.height();
    };
    const double wideAspect = aspect();
    wide.resize(420, 520);
    QVERIFY(QTest::qWaitFor([&] { return aspect() < wideAspect; }));
    QCOMPARE(wide.chips().size(), chips);
    QVERIFY(wide.evaluation());
    // Chips too many for the pane at a readable size are counted in "+N
    // more" chips; zoomed in, their text needs no enlarging and more show.
    const auto shownAndSummarised = [&] {
        int shown = 0, summarised = 0;
        for (std::size_t i = 0; i < chips; ++i)
            shown += wide.chipItem(int(i)) ? 1 : 0;
        for (QGraphicsItem* item : wide.scene()->items()) {
            auto* chip = dynamic_cast<ChipItem*>(item);
            if (chip && chip->index() < 0 && chip->label().startsWith(QLatin1Char('+')))
                summarised += chip->label().mid(1).section(QLatin1Char(' '), 0, 0).toInt();
        }
        return std::make_pair(shown, summarised);
    };
    const auto [shownFit, summarisedFit] = shownAndSummarised();
    QCOMPARE(shownFit + summarisedFit, int(chips));
    for (int i = 0; i < 4; ++i)
        wide.zoomIn();
    const auto [shownZoomed, summarisedZoomed] = shownAndSummarised();
    QCOMPARE(shownZoomed + summarisedZoomed, int(chips));
    QVERIFY2(
        summarisedFit == 0 || shownZoomed > shownFit,
        qPrintable(QStringLiteral("%1 shown at fit, %2 zoomed").arg(shownFit).arg(shownZoomed)));
    wide.fitToView();

    // 420 x 520: the full key would crowd the pane; a click unfolds it and
    // the choice then stays.
    HeatLegend* legend = wide.legend();
    QVERIFY(legend->isCollapsed());
    const QSize folded = legend->size();
    QTest::mouseClick(legend, Qt::LeftButton, {}, legend->rect().center());
    QVERIFY(!legend->isCollapsed());
    QVERIFY(legend->height() > folded.height());
    wide.resize(430, 520);
    QVERIFY(!legend->isCollapsed());
    QTest::mouseClick(legend, Qt::LeftButton, {}, legend->rect().center());
    QVERIFY(legend->isCollapsed());
}

// Released with Shift, a chip asks how many of its replicas move; into a
// full building those trade places with as many of the same stage there.
// Escape in the dialog drops nothing.
void TestMainWindow::shiftDropMovesSomeReplicas() {
    TopologyView* view = window_->topologyView();
    const Scenario original = window_->document()->scenario();
    const int moving = chipOf(3, 2);
    QVERIFY(moving >= 0);
    const GroupChip chip = view->chips()[std::size_t(moving)];
    QCOMPARE(chip.replica_first, 512);
    const QPoint start = view->mapFromScene(view->chipItem(moving)->sceneBoundingRect().center());
    const QPoint end = view->mapFromScene(view->topologyLayout().buildings()[0].header.center());
    // The dialog runs its own event loop: a timer answers it once it is up.
    QTimer poll;
    poll.setInterval(20);
    QString typed;
    Qt::Key key = Qt::Key_Escape;
    int seenMaximum = 0;
    QString seenName;
    QObject::connect(&poll, &QTimer::timeout, [&] {
        QWidget* dialog = QApplication::activeModalWidget();
        if (!dialog)
            return;
        poll.stop();
        seenName = dialog->objectName();
        auto* spin = dialog->findChild<QSpinBox*>();
        if (!spin)
            return;
        seenMaximum = spin->maximum();
        if (!typed.isEmpty()) {
            spin->setFocus();
            QTest::keyClick(spin, Qt::Key_A, Qt::ControlModifier);
            QTest::keyClicks(spin, typed);
        }
        QTest::keyClick(spin, key);
    });
    auto answer = [&](const QString& t, Qt::Key k) {
        typed = t;
        key = k;
        seenMaximum = 0;
        poll.start();
    };

    // Escape: nothing moves.
    QVERIFY(sa::testing::dragAndHover(*window_, start, end));
    answer(QString(), Qt::Key_Escape);
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, Qt::ShiftModifier, end);
    QTRY_COMPARE(seenMaximum, 256);
    QCOMPARE(seenName, QStringLiteral("splitChipDialog"));
    QTest::qWait(50);
    QCOMPARE(window_->document()->scenario(), original);
    QCOMPARE(window_->document()->undoStack()->count(), 0);

    // 64 of the 256 replicas.
    QVERIFY(sa::testing::dragAndHover(*window_, start, end));
    answer(QStringLiteral("64"), Qt::Key_Return);
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, Qt::ShiftModifier, end);
    QTRY_COMPARE(window_->document()->undoStack()->count(), 1);
    const QString text = window_->document()->undoStack()->undoText();
    QVERIFY2(text.startsWith(QStringLiteral("B1 is full: Swap S3 · R512–575 · 512 GPUs (B3)")),
             qPrintable(text));
    const Scenario& after = window_->document()->scenario();
    const PlacementResult placed = placeCells(after.cluster, after.plan);
    QVERIFY(placed.ok());
    QCOMPARE(placed.grid.at(3, 512), 0); // moved
    QCOMPARE(placed.grid.at(3, 575), 0);
    QCOMPARE(placed.grid.at(3, 576), 2); // stayed
    QCOMPARE(placed.grid.at(3, 0), 2);   // the part of B1's stage 3 it swapped with
    QCOMPARE(placed.grid.at(3, 64), 0);
    QCOMPARE(placed.gpus_used, placeCells(original.cluster, original.plan).gpus_used);
    window_->document()->undoStack()->undo();
    QCOMPARE(window_->document()->scenario(), original);
}

// Every text of the topology, as painted at 1280x800 and 1920x1080, is at
// least 9 pt on screen (12 px at 96 dpi), and the essentials are there:
// building names and sizes, zone sizes, every stage chip, the link labels.
void TestMainWindow::topologyTextIsReadable() {
    TopologyView* view = window_->topologyView();
    for (const QSize size : {QSize(1280, 800), QSize(1920, 1080)}) {
        window_->resize(size);
        QTest::qWait(50);
        QCoreApplication::processEvents();
        // Painted directly, not from the items' pixmap caches.
        for (QGraphicsItem* item : view->scene()->items())
            item->setCacheMode(QGraphicsItem::NoCache);
        sa::testing::TextRecorder recorder(view->viewport()->size());
        {
            QPainter painter(&recorder);
            view->render(&painter);
        }
        const auto& texts = recorder.texts();
        QStringList all;
        for (const auto& t : texts) {
            all << t.text;
            QVERIFY2(t.screen_px >= kMinScreenTextPx - 0.01,
                     qPrintable(QStringLiteral("%1x%2: \"%3\" at %4 px")
                                    .arg(size.width())
                                    .arg(size.height())
                                    .arg(t.text)
                                    .arg(t.screen_px)));
        }
        const QString where = QStringLiteral("%1x%2: ").arg(size.width()).arg(size.height());
        qInfo("%stopology pane %dx%d at scale %.3f, %zu texts", qPrintable(where),
              view->viewport()->width(), view->viewport()->height(), view->zoomFactor(),
              texts.size());
        for (const QString& must :
             {QStringLiteral("B1"), QStringLiteral("B3"), QStringLiteral("32,768 GPUs"),
              QStringLiteral("3,072"), QStringLiteral("24 Tbit/s"), QStringLiteral("S0"),
              QStringLiteral("S15")})
            // A text of its own, or the first part of a link label's line.
            QVERIFY2(all.contains(must) ||
                         std::any_of(all.begin(), all.end(),
                                     [&](const QString& t) {
                                         return t.startsWith(must + QStringLiteral(" · "));
                                     }),
                     qPrintable(where + must + QStringLiteral(" missing: ") +
                                all.join(QStringLiteral(" | "))));
        // Every chip is drawn, none summarised.
        for (std::size_t i = 0; i < view->chips().size(); ++i)
            QVERIFY2(view->chipItem(int(i)), qPrintable(where + QString::number(i)));
    }
}

void TestMainWindow::notesShowTheEvaluationsWarnings() {
    // GPT 1.7B at TP 8 on 512 tokens a microbatch: its layers wait for the
    // host (docs/COST_MODEL.md "Host"). The status bar says so, the
    // list in the button's tool tip; CUDA graphs, ticked in the inspector,
    // take the note away.
    const QString published =
        sa::testing::sourcePath(QStringLiteral("tests/validation/published/"));
    QTemporaryDir dir;
    QFile plan(dir.filePath(QStringLiteral("plan.json")));
    QVERIFY(plan.open(QIODevice::WriteOnly));
    plan.write(R"({"format": "scaleacross.plan", "version": 1, "name": "tp8",
        "sequence_length": 512, "global_batch_sequences": 48, "micro_batch_sequences": 1,
        "parallelism": {"tp": 8, "cp": 1, "pp": 1, "dp": 6, "ep": 1}, "zero_stage": 1,
        "framework": "megatron-core", "sequence_parallel": true})");
    plan.close();
    QFile scenario(dir.filePath(QStringLiteral("small.json")));
    QVERIFY(scenario.open(QIODevice::WriteOnly));
    scenario.write(QStringLiteral(R"({"format": "scaleacross.scenario", "version": 1,
        "cluster": "%1clusters/dgx-h100-6144.json", "model": "%1models/mcore08-gpt-1.7b.json",
        "plan": "plan.json"})")
                       .arg(published)
                       .toUtf8());
    scenario.close();
    QVERIFY2(window_->openFile(scenario.fileName()), qPrintable(window_->lastError()));
    QVERIFY(waitForEvaluation());
    auto* notes = window_->findChild<QToolButton*>(QStringLiteral("notesButton"));
    QVERIFY(notes);
    QTRY_VERIFY(notes->isVisible());
    QVERIFY2(notes->toolTip().contains(QLatin1String("waits for the host")),
             qPrintable(notes->toolTip()));
    QVERIFY(notes->text().contains(QLatin1String("note")));
    // Not the GPUs in use: the placement label has them.
    QVERIFY(!notes->toolTip().contains(QLatin1String("placement: the plan uses")));
    QCheckBox* graphs = window_->inspector()->checkBox(QStringLiteral("cuda_graphs"));
    QVERIFY(graphs);
    window_->inspector()->scrollArea()->ensureWidgetVisible(graphs);
    QTest::mouseClick(graphs, Qt::LeftButton, {}, QPoint(4, graphs->height() / 2));
    QVERIFY(window_->document()->scenario().plan.cuda_graphs);
    QVERIFY(waitForEvaluation());
    QTRY_VERIFY(!notes->toolTip().contains(QLatin1String("waits for the host")));
}

QTEST_MAIN(TestMainWindow)
// A building header narrower than "4,096 / 12,288 GPUs" shortens it; it
// never shows the used count alone, which reads as the building's size.
void TestMainWindow::buildingCountKeepsItsTotal() {
    const auto upTo = [](int chars) {
        return [chars](const QString& text) { return text.size() <= chars; };
    };
    QCOMPARE(BuildingItem::countLabel(12288, 4096, upTo(40)),
             QStringLiteral("4,096 / 12,288 GPUs"));
    QCOMPARE(BuildingItem::countLabel(12288, 4096, upTo(15)), QStringLiteral("4,096 / 12,288"));
    QCOMPARE(BuildingItem::countLabel(12288, 4096, upTo(11)), QStringLiteral("4,096 used"));
    QCOMPARE(BuildingItem::countLabel(12288, 4096, upTo(2)), QStringLiteral("4,096 used"));
    QCOMPARE(BuildingItem::countLabel(12288, 12288, upTo(40)), QStringLiteral("12,288 GPUs"));
    QCOMPARE(BuildingItem::countLabel(12288, 12288, upTo(8)), QStringLiteral("12,288"));
    QCOMPARE(BuildingItem::countLabel(12288, -1, upTo(40)), QStringLiteral("12,288 GPUs"));
}

// The status line in a narrow window: the step, MFU and memory keep their
// width, the timing steps aside, what is still too wide is cut with "…" (its
// whole text in text()), nothing runs past the right edge; a message gets
// room of its own, and the labels come back when it clears. In a wide
// window everything shows whole.
void TestMainWindow::statusLineFitsTheWindow() {
    QStatusBar* bar = window_->statusBar();
    auto* step = window_->findChild<QLabel*>(QStringLiteral("stepLabel"));
    auto* mfu = window_->findChild<QLabel*>(QStringLiteral("mfuLabel"));
    auto* memory = window_->findChild<QLabel*>(QStringLiteral("memoryLabel"));
    auto* placement = window_->findChild<ElidingLabel*>(QStringLiteral("placementLabel"));
    auto* timing = window_->findChild<ElidingLabel*>(QStringLiteral("timingLabel"));
    auto* run = window_->findChild<ElidingLabel*>(QStringLiteral("runLabel"));
    QVERIFY(step && mfu && memory && placement && timing && run);
    QVERIFY(waitForEvaluation());
    const auto settle = [] {
        for (int i = 0; i < 5; ++i) {
            QCoreApplication::sendPostedEvents();
            QCoreApplication::processEvents();
        }
    };

    bar->clearMessage(); // the opening's
    window_->resize(1920, 1080);
    settle();
    QVERIFY(timing->isVisible() && placement->isVisible());
    for (QLabel* l : {step, mfu, memory, static_cast<QLabel*>(placement),
                      static_cast<QLabel*>(timing), static_cast<QLabel*>(run)})
        QVERIFY2(l->width() >= l->sizeHint().width(), qPrintable(l->objectName()));
    QVERIFY(!placement->isElided() && !run->isElided());

    // Narrower than the whole line.
    int whole = 0;
    for (QLabel* l : {step, mfu, memory, static_cast<QLabel*>(placement),
                      static_cast<QLabel*>(timing), static_cast<QLabel*>(run)})
        whole += l->sizeHint().width();
    const int narrow = whole * 85 / 100;
    window_->resize(narrow, 800);
    settle();
    QVERIFY2(window_->width() <= narrow + 1, qPrintable(QString::number(window_->width())));
    QVERIFY(!timing->isVisible());
    for (QLabel* l : {step, mfu, memory}) {
        QVERIFY2(l->width() >= l->sizeHint().width(), qPrintable(l->objectName()));
        QVERIFY(l->geometry().right() <= bar->width());
    }
    QVERIFY(placement->geometry().right() <= bar->width());
    QVERIFY(placement->isElided() || run->isElided());
    for (ElidingLabel* l : {placement, run})
        if (l->isElided()) {
            QVERIFY2(l->shownText().endsWith(QStringLiteral("…")), qPrintable(l->shownText()));
            QVERIFY(l->shownText().size() < l->text().size());
        }
    QVERIFY(window_->statusText().contains(placement->text()));
    // The labels fill the line: no room for a message yet.
    QVERIFY2(step->geometry().left() < 30, qPrintable(QString::number(step->geometry().left())));

    // A message: the goodput and the grid step aside, and the message has
    // the room they left; the step, MFU and memory stay beside it.
    bar->showMessage(QStringLiteral("Move S2 from B1 to B2: release to apply"));
    settle();
    QVERIFY(!placement->isVisible() && !timing->isVisible() && !run->isVisible());
    QVERIFY(step->isVisible() && mfu->isVisible() && memory->isVisible());
    QVERIFY2(step->geometry().left() >= 60, qPrintable(QString::number(step->geometry().left())));
    bar->clearMessage();
    settle();
    QVERIFY(placement->isVisible() && run->isVisible());
}

// Three buildings in two regions, at window sizes from 800 x 700 to 1920 x
// 1080: whichever arrangement the pane gets (a row, or an L with a diagonal
// link), no link's label lies over another's (a label slides along its
// line, and only where no spot is clear keeps capacity and latency alone).
void TestMainWindow::linkLabelsKeepClearOfEachOther() {
    TopologyView* view = window_->topologyView();
    QVERIFY(waitForEvaluation());
    int arrangements = 0;
    QRectF lastBounds;
    std::vector<QSize> sizes{QSize(1280, 800), QSize(1920, 1080)};
    for (int w = 800; w <= 1400; w += 100)
        for (int h = 700; h <= 1400; h += 100)
            sizes.emplace_back(w, h);
    for (const QSize size : sizes) {
        window_->resize(size);
        const QString at = QStringLiteral("%1 x %2").arg(size.width()).arg(size.height());
        QTest::qWait(20);
        QCoreApplication::processEvents();
        const auto& paths = view->topologyLayout().links();
        QVERIFY(paths.size() >= 3);
        if (view->topologyLayout().bounds() != lastBounds)
            ++arrangements;
        lastBounds = view->topologyLayout().bounds();
        for (std::size_t i = 0; i < paths.size(); ++i)
            for (std::size_t j = i + 1; j < paths.size(); ++j) {
                const QRectF a = view->linkLabel(paths[i].link)->labelRect();
                const QRectF b = view->linkLabel(paths[j].link)->labelRect();
                QVERIFY2(!a.intersects(b), qPrintable(QStringLiteral("%1: labels %2 and %3")
                                                          .arg(at)
                                                          .arg(paths[i].link)
                                                          .arg(paths[j].link)));
            }
    }
    QVERIFY(arrangements >= 2);
    // At the sizes the explorer is made for, every label shows its traffic.
    for (const QSize size : {QSize(1280, 800), QSize(1920, 1080)}) {
        window_->resize(size);
        QTest::qWait(20);
        QCoreApplication::processEvents();
        for (const auto& path : view->topologyLayout().links())
            QVERIFY(!view->linkLabel(path.link)->isCompact());
    }
}

#include "tst_mainwindow.moc"

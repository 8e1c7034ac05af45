#include "screenshottour.h"

#include "comparepanel.h"
#include "document.h"
#include "liveevaluation.h"
#include "mainwindow.h"
#include "optimizerpanel.h"
#include "sweeppanel.h"
#include "timelinepane.h"
#include "topologyview.h"

#include <QApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QDockWidget>
#include <QEventLoop>
#include <QPixmap>
#include <QTabWidget>

#include <algorithm>
#include <cstdio>

namespace sa::views {

namespace {

// Runs the event loop until `done()` holds or `ms` pass.
template <class Predicate> bool waitUntil(Predicate done, int ms) {
    QDeadlineTimer deadline(ms);
    while (!done()) {
        if (deadline.hasExpired())
            return false;
        QApplication::processEvents(QEventLoop::AllEvents, 10);
    }
    return true;
}

void settle(int ms) {
    QDeadlineTimer deadline(ms);
    while (!deadline.hasExpired())
        QApplication::processEvents(QEventLoop::AllEvents, 20);
}

bool save(QWidget* widget, const QDir& dir, const QString& name) {
    const QString path = dir.filePath(name);
    const bool ok = widget->grab().save(path, "PNG");
    std::fprintf(ok ? stdout : stderr, "%s %s\n", ok ? "wrote" : "cannot write",
                 qPrintable(QDir::toNativeSeparators(path)));
    return ok;
}

// The analysis docks, large enough to read: the timeline of the PP-across
// plan (1F1B, then interleaved), the pinned plan beside a DP-across one,
// and the charts.
template <class UpToDate>
bool analysisShots(MainWindow& window, const QDir& dir, UpToDate upToDate) {
    Document* doc = window.document();
    auto* timelineDock = window.findChild<QDockWidget*>(QStringLiteral("timelineDock"));
    auto* chartDock = window.findChild<QDockWidget*>(QStringLiteral("chartDock"));
    auto* compareDock = window.findChild<QDockWidget*>(QStringLiteral("compareDock"));
    if (!timelineDock || !chartDock || !compareDock)
        return false;
    window.resize(1700, 1200);
    window.showDock(QStringLiteral("timeline"));
    window.resizeDocks({timelineDock}, {560}, Qt::Vertical);
    const Plan opened = doc->scenario().plan;
    auto apply = [&](const Plan& plan, const QString& what) {
        if (plan != doc->scenario().plan)
            doc->setPlan(plan, what);
        waitUntil(upToDate, 15000);
        settle(300);
    };
    bool ok = true;
    Plan pp = opened;
    pp.rank_order = {Dim::TP, Dim::CP, Dim::DP, Dim::PP};
    pp.schedule.kind = ScheduleKind::OneFOneB;
    pp.schedule.virtual_stages = 1;
    apply(pp, QStringLiteral("PP across, 1F1B"));
    ok = save(window.timelinePane(), dir, QStringLiteral("timeline-1f1b.png")) && ok;
    Plan ppInterleaved = pp;
    ppInterleaved.schedule.kind = ScheduleKind::Interleaved;
    ppInterleaved.schedule.virtual_stages = 2;
    apply(ppInterleaved, QStringLiteral("PP across, interleaved"));
    ok = save(window.timelinePane(), dir, QStringLiteral("timeline-interleaved.png")) && ok;

    // Compare: PP across pinned, DP across (as opened) current.
    window.pinCurrentPlan();
    apply(opened, QStringLiteral("DP across"));
    ok = save(window.timelinePane(), dir, QStringLiteral("timeline-compare.png")) && ok;
    window.showDock(QStringLiteral("compare"));
    window.resizeDocks({compareDock}, {420}, Qt::Vertical);
    settle(200);
    ok = save(window.comparePanel(), dir, QStringLiteral("compare.png")) && ok;

    window.showDock(QStringLiteral("chart"));
    window.resizeDocks({chartDock}, {460}, Qt::Vertical);
    window.chartTabs()->setCurrentIndex(0);
    settle(300);
    ok = save(window.chartTabs(), dir, QStringLiteral("chart-breakdown.png")) && ok;
    window.clearPinnedPlan();
    window.chartTabs()->setCurrentIndex(1);
    settle(300);
    ok = save(window.chartTabs(), dir, QStringLiteral("chart-memory.png")) && ok;
    window.chartTabs()->setCurrentIndex(2);
    SweepPanel* sweep = window.sweepPanel();
    if (!sweep->parameters().empty()) {
        sweep->setBaselines(true);
        bool done = false;
        auto connection = QObject::connect(sweep, &SweepPanel::finished, [&done] { done = true; });
        sweep->run();
        if (!waitUntil([&] { return done; }, 120000))
            std::fprintf(stderr, "the sweep did not finish in 120 s\n");
        QObject::disconnect(connection);
        settle(300);
        ok = save(window.chartTabs(), dir, QStringLiteral("chart-sweep.png")) && ok;
    }

    // The optimizer on the open cluster and model, its default search.
    window.showDock(QStringLiteral("optimizer"));
    auto* optimizerDock = window.findChild<QDockWidget*>(QStringLiteral("optimizerDock"));
    window.resizeDocks({optimizerDock}, {620}, Qt::Vertical);
    OptimizerPanel* optimizer = window.optimizerPanel();
    bool searched = false;
    auto connection =
        QObject::connect(optimizer, &OptimizerPanel::finished, [&searched] { searched = true; });
    optimizer->run();
    if (!waitUntil([&] { return searched; }, 300000))
        std::fprintf(stderr, "the optimizer did not finish in 300 s\n");
    QObject::disconnect(connection);
    optimizer->selectRow(0);
    settle(400);
    ok = save(optimizer, dir, QStringLiteral("optimizer.png")) && ok;
    window.showDock(QStringLiteral("timeline"));
    return ok;
}

} // namespace

int runScreenshotTour(MainWindow& window, const QString& dirPath) {
    QDir dir(dirPath);
    if (!dir.exists() && !QDir().mkpath(dirPath)) {
        std::fprintf(stderr, "cannot create %s\n", qPrintable(dirPath));
        return 1;
    }
    window.resize(1600, 1000);
    window.show();
    TopologyView* view = window.topologyView();
    view->fitToView();
    // The heatmap needs the first evaluation on screen.
    if (!waitUntil(
            [&] {
                const auto shown = window.shownSnapshot();
                return shown && !shown->preview && window.liveEvaluation()->isUpToDate() &&
                       window.panelsUpToDate();
            },
            15000))
        std::fprintf(stderr, "no evaluation after 15 s\n");
    settle(300);
    bool ok = save(&window, dir, QStringLiteral("main-window.png"));

    // The heatmap with pipeline traffic across buildings: the same job with
    // PP outermost, so whole stages sit in one building and activations
    // cross the campus and long-haul links.
    Document* doc = window.document();
    auto upToDate = [&] {
        const auto shown = window.shownSnapshot();
        return shown && !shown->preview && window.liveEvaluation()->isUpToDate() &&
               shown->revision == window.liveEvaluation()->revision() && window.panelsUpToDate();
    };
    Plan ppOuter = doc->scenario().plan;
    ppOuter.rank_order = {Dim::TP, Dim::CP, Dim::DP, Dim::PP};
    const bool changed = ppOuter != doc->scenario().plan;
    if (changed)
        doc->setPlan(ppOuter, QStringLiteral("PP outermost"));
    waitUntil(upToDate, 15000);
    settle(300);
    ok = save(view, dir, QStringLiteral("heatmap.png")) && ok;
    if (changed) {
        doc->undoStack()->undo();
        waitUntil(upToDate, 15000);
        settle(200);
    }

    // A stage mid-move: the first stage's chip in the second building held
    // over the last stage's chip in the first building (a legal swap on a
    // full cluster), with the preview evaluation on screen.
    const auto& chips = view->chips();
    int moving = -1;
    int partner = -1;
    const int buildings = int(view->cluster().buildings.size());
    if (buildings >= 2) {
        for (int i = 0; i < int(chips.size()); ++i)
            if (chips[std::size_t(i)].building == 1 && moving < 0)
                moving = i;
        if (moving >= 0) {
            const GroupChip& m = chips[std::size_t(moving)];
            for (int i = int(chips.size()) - 1; i >= 0; --i) {
                const GroupChip& c = chips[std::size_t(i)];
                if (c.building == 0 && c.gpus == m.gpus) {
                    partner = i;
                    break;
                }
            }
        }
    }
    if (moving >= 0) {
        view->previewChipDrag(moving, 0, partner);
        if (!waitUntil(
                [&] {
                    const auto shown = window.shownSnapshot();
                    return shown && shown->preview;
                },
                15000))
            std::fprintf(stderr, "no preview evaluation after 15 s\n");
        settle(300);
        ok = save(&window, dir, QStringLiteral("stage-mid-move.png")) && ok;
        view->endChipPreview();
    } else {
        std::fprintf(stderr, "no chip to move in this scenario: stage-mid-move.png skipped\n");
    }
    ok = analysisShots(window, dir, upToDate) && ok;

    // The whole window at a laptop's and a desktop's size, the docks as a
    // first start lays them out (about 40 % of the height below the
    // topology), on the Run tab.
    auto* timelineDock = window.findChild<QDockWidget*>(QStringLiteral("timelineDock"));
    auto* inspectorDock = window.findChild<QDockWidget*>(QStringLiteral("inspectorDock"));
    for (const QSize size : {QSize(1280, 800), QSize(1920, 1080)}) {
        window.resize(size);
        settle(200);
        if (timelineDock && inspectorDock) {
            window.resizeDocks({timelineDock}, {size.height() * 38 / 100}, Qt::Vertical);
            window.resizeDocks({inspectorDock}, {std::max(360, size.width() / 5)}, Qt::Horizontal);
        }
        window.showDock(QStringLiteral("run"));
        view->fitToView();
        settle(400);
        ok = save(&window, dir,
                  QStringLiteral("main-%1x%2.png").arg(size.width()).arg(size.height())) &&
             ok;
    }
    // Nothing here is the user's work: close without "save changes?".
    window.document()->undoStack()->setClean();
    window.close();
    return ok ? 0 : 1;
}

} // namespace sa::views

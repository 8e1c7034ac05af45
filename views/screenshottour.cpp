#include "screenshottour.h"

#include "document.h"
#include "liveevaluation.h"
#include "mainwindow.h"
#include "topologyview.h"

#include <QApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QEventLoop>
#include <QPixmap>

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
                return shown && !shown->preview && window.liveEvaluation()->isUpToDate();
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
               shown->revision == window.liveEvaluation()->revision();
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
    // Nothing here is the user's work: close without "save changes?".
    window.document()->undoStack()->setClean();
    window.close();
    return ok ? 0 : 1;
}

} // namespace sa::views

// Drop to repainted heatmap in the explorer (issue 17: within one frame,
// <= 16 ms). The whole main window at 1920 x 1080, offscreen, Llama 3 405B
// on the three-building sample: a stage chip is released over another
// building's chip (the swap a user's drag makes), and each iteration times
//
//   the drop as the topology view delivers it (TopologyView::chipDropped:
//   MainWindow checks it, the document takes the plan as one undo step, the
//   chips are rebuilt, the inspector refreshes), the evaluation it starts on
//   the worker and its delivery to the views, up to
//
//   BM_DropToRepaintedHeatmap/painted   the topology view's own paint event
//       with the new heatmap, as the event loop delivers it on screen (the
//       other docks refresh after it)
//   BM_DropToRepaintedHeatmap/window    every dock refreshed (link table,
//       timeline, charts, compare, run) and the whole window painted into a
//       QImage, 1920 x 1080
//
// Nothing is previewed before the drop (no hover), so every drop evaluates.
// The undo that resets the plan runs with the timer paused. Counters:
// ui_cpu_ms, the UI thread's CPU time per drop (what it costs on an idle
// machine), and eval_cpu_ms, the worker's evaluation. Run:
//   build/rel/tests/benchmarks/bench_drop --benchmark_min_time=3

#include "document.h"
#include "liveevaluation.h"
#include "mainwindow.h"
#include "placementedits.h"
#include "topologyview.h"

#include "../common/fixtures.h"

#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>
#include <QStandardPaths>
#include <QUndoStack>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace {

using sa::views::ChipDrop;
using sa::views::MainWindow;

// Runs the event loop until `done` holds (the worker's result arrives as a
// queued call, so waiting for more events does not spin).
template <class F> bool processUntil(F done, int timeoutMs = 10000) {
    QElapsedTimer t;
    t.start();
    while (!done()) {
        if (t.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents, 5);
    }
    return true;
}

bool showsDocument(const MainWindow& w) {
    const auto shown = w.shownSnapshot();
    return shown && !shown->preview && w.liveEvaluation()->isUpToDate() &&
           shown->revision == w.liveEvaluation()->revision();
}

struct Explorer {
    MainWindow window;
    explicit Explorer(const char* sample) {
        window.resize(1920, 1080);
        const QString path =
            QDir(QString::fromStdString(sa::testing::sourceDir()))
                .filePath(QStringLiteral("sample_clusters/scenarios/") + QLatin1String(sample));
        if (!window.openSample(path))
            throw std::runtime_error("cannot open " + path.toStdString());
        window.show();
        if (!processUntil([&] { return showsDocument(window); }))
            throw std::runtime_error("no evaluation of the sample");
        settle();
    }
    ~Explorer() { window.document()->undoStack()->setClean(); }
    void settle() {
        for (int i = 0; i < 3; ++i)
            QCoreApplication::processEvents();
    }
    int chipOf(int stage, int building) const {
        const auto& chips = window.topologyView()->chips();
        for (std::size_t i = 0; i < chips.size(); ++i)
            if (chips[i].stage_first == stage && chips[i].building == building)
                return int(i);
        return -1;
    }
};

enum class Until { Painted, Window };

void dropToRepaintedHeatmap(benchmark::State& state, Until until) {
    Explorer e("three-buildings-405b.json");
    sa::views::TopologyView* view = e.window.topologyView();
    // TopologyView::heatmapPainted: the first paint after a new evaluation.
    std::optional<std::uint64_t> paintedRevision;
    QObject::connect(view, &sa::views::TopologyView::heatmapPainted, view, [&] {
        if (const auto shown = e.window.shownSnapshot(); shown && !shown->preview)
            paintedRevision = shown->revision;
    });
    QImage image(e.window.size(), QImage::Format_ARGB32_Premultiplied);
    const int moving = e.chipOf(0, 1);
    const int other = e.chipOf(15, 0);
    if (moving < 0 || other < 0) {
        state.SkipWithError("the sample's stages 0 and 15 are not in B2 and B1");
        return;
    }
    const ChipDrop drop{view->chips()[std::size_t(moving)], 0, view->chips()[std::size_t(other)]};
    auto painted = [&] {
        return showsDocument(e.window) && paintedRevision == e.window.liveEvaluation()->revision();
    };
    auto refreshed = [&] { return showsDocument(e.window) && e.window.panelsUpToDate(); };
    double uiCpu = 0;
    double evalCpu = 0;
    for (auto _ : state) {
        const double cpu0 = sa::views::threadCpuMs();
        Q_EMIT view->chipDropped(drop);
        if (!processUntil(until == Until::Painted ? std::function<bool()>(painted)
                                                  : std::function<bool()>(refreshed))) {
            state.SkipWithError("the drop was not evaluated and painted");
            return;
        }
        if (until == Until::Window) {
            QPainter p(&image);
            e.window.render(&p);
            benchmark::DoNotOptimize(image.constBits());
        }
        uiCpu += sa::views::threadCpuMs() - cpu0;
        evalCpu += e.window.shownSnapshot()->evaluate_cpu_ms;

        state.PauseTiming();
        if (!processUntil(refreshed)) {
            state.SkipWithError("the docks were not refreshed");
            return;
        }
        e.window.document()->undoStack()->undo();
        if (!processUntil(refreshed)) {
            state.SkipWithError("the undo was not evaluated");
            return;
        }
        e.settle();
        state.ResumeTiming();
    }
    const double n = double(state.iterations());
    state.counters["ui_cpu_ms"] = uiCpu / n;
    state.counters["eval_cpu_ms"] = evalCpu / n;
    state.SetLabel(
        QStringLiteral("%1x%2").arg(e.window.width()).arg(e.window.height()).toStdString());
}

} // namespace

int main(int argc, char** argv) {
    // Offscreen unless told otherwise; the user's settings stay untouched.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ScaleAcrossBenchmarks"));
    QApplication app(argc, argv);
    for (auto [name, until] : {std::pair{"BM_DropToRepaintedHeatmap/painted", Until::Painted},
                               std::pair{"BM_DropToRepaintedHeatmap/window", Until::Window}})
        benchmark::RegisterBenchmark(name, dropToRepaintedHeatmap, until)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}

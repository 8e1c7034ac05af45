#pragma once
// For the widget tests: wait until the main window shows the evaluation of
// the current document (not a drag preview, not an older revision), in the
// heatmap and in every dock.

#include "liveevaluation.h"
#include "mainwindow.h"
#include "topologyview.h"

#include <QTest>

namespace sa::testing {

inline bool waitForShownEvaluation(const sa::views::MainWindow& window, int ms) {
    return QTest::qWaitFor(
        [&] {
            const auto shown = window.shownSnapshot();
            return shown && !shown->preview && window.liveEvaluation()->isUpToDate() &&
                   shown->revision == window.liveEvaluation()->revision() &&
                   window.panelsUpToDate();
        },
        ms);
}

// Opens the bundled sample `path` in `window` at 1400 x 900, shows it and
// waits until it is exposed (and active, when asked) and evaluated.
inline bool showSample(sa::views::MainWindow& window, const QString& path, bool activate = false,
                       int ms = 10000) {
    window.resize(1400, 900);
    if (!window.openSample(path))
        return false;
    window.show();
    if (!QTest::qWaitForWindowExposed(&window))
        return false;
    if (activate) {
        window.activateWindow();
        if (!QTest::qWaitForWindowActive(&window))
            return false;
    }
    return waitForShownEvaluation(window, ms);
}

// Presses the mouse at `start` in the topology view, moves it to `end` in
// ten steps, as a hand would, and waits until the drop there is previewed.
// The button stays down: the caller releases it or presses Escape.
inline bool dragAndHover(sa::views::MainWindow& window, QPoint start, QPoint end, int ms = 5000) {
    QWidget* viewport = window.topologyView()->viewport();
    QTest::mousePress(viewport, Qt::LeftButton, {}, start);
    for (int i = 1; i <= 10; ++i)
        QTest::mouseMove(viewport, start + (end - start) * i / 10);
    return QTest::qWaitFor(
        [&] {
            const auto s = window.shownSnapshot();
            return s && s->preview;
        },
        ms);
}

} // namespace sa::testing

#pragma once
// For the widget tests: wait until the main window shows the evaluation of
// the current document (not a drag preview, not an older revision).

#include "liveevaluation.h"
#include "mainwindow.h"

#include <QTest>

namespace sa::testing {

inline bool waitForShownEvaluation(const sa::views::MainWindow& window, int ms) {
    return QTest::qWaitFor(
        [&] {
            const auto shown = window.shownSnapshot();
            return shown && !shown->preview && window.liveEvaluation()->isUpToDate() &&
                   shown->revision == window.liveEvaluation()->revision();
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

} // namespace sa::testing

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

} // namespace sa::testing

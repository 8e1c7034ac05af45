#pragma once
// The screenshots people look at (tools/screenshots.sh, the README): the
// main window on the open scenario, the heatmap, and a stage mid-move.

#include <QString>

namespace sa::views {

class MainWindow;

// Shows `window`, waits for the evaluation to be on screen, writes the PNGs
// to `dir` and returns the process exit code (0 when every file was written).
int runScreenshotTour(MainWindow& window, const QString& dir);

} // namespace sa::views

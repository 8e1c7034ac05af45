// scaleacross-explorer: the GUI. Thin: parse arguments, open the scenario,
// show the main window.

#include "mainwindow.h"
#include "samples.h"
#include "screenshottour.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QIcon>

#include <cstdio>

int main(int argc, char** argv) {
    // The icons live in the static views library: register its resources.
    Q_INIT_RESOURCE(resources);
    // Fractional scale factors (125 %, 150 %) as the desktop asks, instead
    // of rounding them: lines and text stay crisp on high-DPI screens.
    QApplication::setHighDpiScaleFactorRoundingPolicy(
        Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("ScaleAcross Explorer"));
    QApplication::setOrganizationName(QStringLiteral("ScaleAcross"));
    QApplication::setApplicationVersion(QStringLiteral(SCALEACROSS_VERSION));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/scaleacross.svg")));
    QApplication::setDesktopFileName(QStringLiteral("scaleacross-explorer"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Plan LLM training across datacenter buildings."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
        QStringLiteral("file"),
        QStringLiteral("A scenario to open (default: the bundled three-building sample)."));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QStringLiteral("Write PNGs of the main window to DIR once the evaluation is shown, then "
                       "exit."),
        QStringLiteral("DIR"));
    parser.addOption(screenshot);
    parser.process(app);

    sa::views::MainWindow window;
    const QStringList files = parser.positionalArguments();
    bool opened = false;
    // After a crash, unsaved work comes back first (not in screenshot runs).
    if (!parser.isSet(screenshot) && window.offerRecovery()) {
        opened = true;
    } else if (!files.isEmpty()) {
        opened = window.openFile(files.first());
    } else {
        const QString sample = sa::views::defaultScenario();
        if (sample.isEmpty())
            window.showError(QStringLiteral("No bundled samples found: set SCALEACROSS_SAMPLES "
                                            "to the sample_clusters folder, or open a file."));
        else
            opened = window.openSample(sample);
    }
    if (!opened)
        std::fprintf(stderr, "%s\n", qPrintable(window.lastError()));

    if (parser.isSet(screenshot)) {
        if (!opened)
            return 2;
        return sa::views::runScreenshotTour(window, parser.value(screenshot));
    }
    window.show();
    return app.exec();
}

#include "mainwindow.h"

#include "autosave.h"
#include "breakdownchart.h"
#include "comparepanel.h"
#include "document.h"
#include "elidinglabel.h"
#include "imageexport.h"
#include "linktablemodel.h"
#include "liveevaluation.h"
#include "memorychart.h"
#include "optimizerpanel.h"
#include "paretochart.h"
#include "planinspector.h"
#include "runpanel.h"
#include "samples.h"
#include "sweeppanel.h"
#include "timelinepane.h"
#include "timelineview.h"
#include "topologyview.h"
#include "units.h"

#include "cost/placement.h"
#include "export/chrome_trace.h"
#include "formats/documents.h"
#include "frameworks/framework.h"

#include <nlohmann/json.hpp>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QImage>
#include <QInputDialog>
#include <QLabel>
#include <QLocale>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QSvgGenerator>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QToolButton>
#include <QUndoStack>
#include <QUrl>
#include <QVBoxLayout>

#include <cmath>

// The icons and the guide live in this static library's resources: a
// program that links it (the explorer, a widget test) gets them with the
// window, without its own Q_INIT_RESOURCE.
static void initViewsResources() {
    Q_INIT_RESOURCE(resources);
}

namespace sa::views {

namespace {

// A dock's content in a scroll area: a panel with a tall minimum (a chart
// above a table) would otherwise hold every tabified dock at its height
// and leave the topology a strip at 1280 x 800.
QScrollArea* scrollable(QWidget* content) {
    auto* area = new QScrollArea;
    area->setFrameShape(QFrame::NoFrame);
    area->setWidgetResizable(true);
    area->setWidget(content);
    return area;
}

constexpr int kMaxRecentFiles = 8;
const QString kRecentKey = QStringLiteral("recentFiles");

QString localJsonFile(const QMimeData* mime) {
    if (!mime || !mime->hasUrls())
        return {};
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() &&
            url.toLocalFile().endsWith(QLatin1String(".json"), Qt::CaseInsensitive))
            return url.toLocalFile();
    return {};
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow((initViewsResources(), parent))
    , document_(new Document(this))
    , autosave_(new Autosave(document_, {}, this))
    , live_(new LiveEvaluation(document_, this))
    , view_(new TopologyView(this)) {
    setObjectName(QStringLiteral("MainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/scaleacross.svg")));
    setAcceptDrops(true);
    setDocumentMode(true);

    // A banner above the view for problems the user must read (bad files);
    // unlike a dialog it does not block and stays until dismissed.
    banner_ = new QWidget(this);
    banner_->setObjectName(QStringLiteral("errorBanner"));
    banner_->setAutoFillBackground(true);
    QPalette pal = banner_->palette();
    pal.setColor(QPalette::Window, QColor(0xff, 0xe3, 0xe3));
    pal.setColor(QPalette::WindowText, QColor(0x84, 0x1d, 0x1d));
    banner_->setPalette(pal);
    auto* bannerLayout = new QHBoxLayout(banner_);
    bannerLayout->setContentsMargins(12, 8, 8, 8);
    bannerText_ = new QLabel(banner_);
    bannerText_->setWordWrap(true);
    bannerText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bannerText_->setTextFormat(Qt::PlainText);
    auto* close = new QToolButton(banner_);
    close->setText(QStringLiteral("✕"));
    close->setAutoRaise(true);
    close->setToolTip(QStringLiteral("Dismiss"));
    connect(close, &QToolButton::clicked, banner_, &QWidget::hide);
    bannerLayout->addWidget(bannerText_, 1);
    bannerLayout->addWidget(close, 0, Qt::AlignTop);
    banner_->hide();

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(banner_);
    layout->addWidget(view_, 1);
    setCentralWidget(central);
    connect(autosave_, &Autosave::failed, this, [this](const QString& message) {
        statusBar()->showMessage(QStringLiteral("Autosave failed: %1").arg(message), 15000);
    });

    createActions();
    createDocks();
    createMenus();
    createStatusBar();

    connect(document_, &Document::clusterChanged, this, &MainWindow::onClusterChanged);
    connect(document_, &Document::scenarioChanged, this, &MainWindow::onScenarioChanged);
    connect(document_, &Document::filePathChanged, this, &MainWindow::updateTitle);
    connect(document_, &Document::modifiedChanged, this, &MainWindow::updateTitle);
    connect(document_, &Document::documentReset, this, &MainWindow::updateTitle);
    connect(document_, &Document::documentReset, this, &MainWindow::onDocumentReset);
    connect(view_, &TopologyView::chipDragTargetChanged, this,
            &MainWindow::onChipDragTargetChanged);
    connect(view_, &TopologyView::chipDropped, this, &MainWindow::onChipDropped);
    connect(view_, &TopologyView::chipDragCancelled, this, [this] {
        statusBar()->clearMessage();
        live_->endPreview();
    });
    connect(live_, &LiveEvaluation::evaluated, this, &MainWindow::onEvaluated);
    connect(live_, &LiveEvaluation::evaluationStarted, this,
            [this] { timingLabel_->setText(QStringLiteral("evaluating…")); });

    readSettings();
    updateTitle();
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions() {}

void MainWindow::createDocks() {
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);
    inspector_ = new PlanInspector(document_, this);
    auto* inspectorDock = new QDockWidget(QStringLiteral("Inspector"), this);
    inspectorDock->setObjectName(QStringLiteral("inspectorDock"));
    inspectorDock->setWidget(inspector_);
    addDockWidget(Qt::RightDockWidgetArea, inspectorDock);

    linkModel_ = new LinkTableModel(this);
    auto* proxy = new LinkSortProxy(this);
    proxy->setSourceModel(linkModel_);
    auto* table = new QTableView(this);
    table->setObjectName(QStringLiteral("linkTable"));
    table->setModel(proxy);
    table->setSortingEnabled(true);
    table->sortByColumn(LinkTableModel::PeakUtilization, Qt::DescendingOrder);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setAlternatingRowColors(true);
    table->verticalHeader()->hide();
    table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
    table->horizontalHeader()->setStretchLastSection(true);
    table->setWordWrap(false);
    connect(linkModel_, &QAbstractItemModel::modelReset, table,
            [table] { table->resizeColumnsToContents(); });
    auto* linkDock = new QDockWidget(QStringLiteral("Links"), this);
    linkDock->setObjectName(QStringLiteral("linkDock"));
    linkDock->setWidget(table);
    addDockWidget(Qt::BottomDockWidgetArea, linkDock);

    timeline_ = new TimelinePane(this);
    auto* timelineDock = new QDockWidget(QStringLiteral("Timeline"), this);
    timelineDock->setObjectName(QStringLiteral("timelineDock"));
    timelineDock->setWidget(timeline_);
    addDockWidget(Qt::BottomDockWidgetArea, timelineDock);

    chartTabs_ = new QTabWidget(this);
    chartTabs_->setObjectName(QStringLiteral("chartTabs"));
    chartTabs_->setDocumentMode(true);
    breakdown_ = new BreakdownChart(chartTabs_);
    memory_ = new MemoryChart(chartTabs_);
    sweep_ = new SweepPanel(document_, chartTabs_);
    chartTabs_->addTab(breakdown_, QStringLiteral("Step-time breakdown"));
    chartTabs_->addTab(memory_, QStringLiteral("Memory per stage"));
    chartTabs_->addTab(sweep_, QStringLiteral("Link sweep"));
    auto* chartDock = new QDockWidget(QStringLiteral("Charts"), this);
    chartDock->setObjectName(QStringLiteral("chartDock"));
    chartDock->setWidget(scrollable(chartTabs_));
    addDockWidget(Qt::BottomDockWidgetArea, chartDock);

    compare_ = new ComparePanel(this);
    auto* compareDock = new QDockWidget(QStringLiteral("Compare"), this);
    compareDock->setObjectName(QStringLiteral("compareDock"));
    compareDock->setWidget(scrollable(compare_));
    addDockWidget(Qt::BottomDockWidgetArea, compareDock);

    optimizer_ = new OptimizerPanel(
        document_, [this] { return live_->evaluator(); }, this);
    auto* optimizerDock = new QDockWidget(QStringLiteral("Optimizer"), this);
    optimizerDock->setObjectName(QStringLiteral("optimizerDock"));
    optimizerDock->setWidget(scrollable(optimizer_));
    addDockWidget(Qt::BottomDockWidgetArea, optimizerDock);

    runPanel_ = new RunPanel(this);
    auto* runDock = new QDockWidget(QStringLiteral("Run"), this);
    runDock->setObjectName(QStringLiteral("runDock"));
    runDock->setWidget(runPanel_);
    addDockWidget(Qt::BottomDockWidgetArea, runDock);

    tabifyDockWidget(timelineDock, chartDock);
    tabifyDockWidget(chartDock, compareDock);
    tabifyDockWidget(compareDock, optimizerDock);
    tabifyDockWidget(optimizerDock, linkDock);
    tabifyDockWidget(linkDock, runDock);
    timelineDock->raise();
    resizeDocks({inspectorDock}, {360}, Qt::Horizontal);
    resizeDocks({timelineDock}, {330}, Qt::Vertical);
    docks_ = {inspectorDock, timelineDock, chartDock, compareDock,
              optimizerDock, linkDock,     runDock};
}

void MainWindow::showDock(const QString& name) {
    for (QDockWidget* dock : docks_) {
        if (dock->objectName() == name + QStringLiteral("Dock")) {
            dock->show();
            dock->raise();
        }
    }
}

QStringList MainWindow::buildingNames() const {
    QStringList names;
    if (!document_->isEmpty())
        for (const auto& b : document_->scenario().cluster.buildings)
            names << QString::fromStdString(b.name);
    return names;
}

void MainWindow::updateAnalysis() {
    const auto& snapshot = shown_;
    const std::shared_ptr<const Evaluation> current = snapshot ? snapshot->evaluation : nullptr;
    const std::shared_ptr<const Evaluation> pinned = pinned_ ? pinned_->evaluation : nullptr;
    const QString currentLabel =
        snapshot && snapshot->preview ? QStringLiteral("Preview") : QStringLiteral("Current");
    const QStringList names = buildingNames();
    if (current) {
        const QString plan = QString::fromStdString(snapshot->plan.name);
        timeline_->setCurrent(
            current, names,
            QStringLiteral("%1 · %2 · step %3")
                .arg(currentLabel,
                     pinned_ ? describePlan(snapshot->plan)
                             : (plan.isEmpty() ? QStringLiteral("Current plan") : plan),
                     formatStepTime(current->step_time_s)));
        breakdown_->setEvaluation(current, pinned, currentLabel, pinnedLabel_);
        memory_->setEvaluation(current, names);
    } else {
        const QString why = snapshot ? snapshot->error : QStringLiteral("No plan");
        timeline_->clearCurrent(QStringLiteral("The plan cannot be evaluated:\n%1").arg(why));
        breakdown_->clear(QStringLiteral("The plan cannot be evaluated"));
        memory_->clear(QStringLiteral("The plan cannot be evaluated"));
    }
    compare_->setEvaluations(pinned, current, pinnedLabel_, currentLabel);
    compare_->setPlans(pinned_ ? describePlan(pinned_->plan) : QString(),
                       snapshot ? describePlan(snapshot->plan) : QString());
}

void MainWindow::pinCurrentPlan() {
    if (!shown_ || !shown_->evaluation || shown_->preview)
        return;
    pinned_ = shown_;
    const QString plan = QString::fromStdString(pinned_->plan.name);
    pinnedLabel_ = QStringLiteral("Pinned");
    timeline_->setPinned(
        pinned_->evaluation, buildingNames(),
        QStringLiteral("Pinned · %1 · step %2")
            .arg(describePlan(pinned_->plan), formatStepTime(pinned_->evaluation->step_time_s)));
    unpinAction_->setEnabled(true);
    // Two timelines need the room of one: at least half the window's height
    // (more would leave the topology too small to read on a short screen).
    const int room = height() / 2;
    if (QDockWidget* dock = findChild<QDockWidget*>(QStringLiteral("timelineDock"));
        dock && !dock->isFloating() && dock->height() < room)
        resizeDocks({dock}, {room}, Qt::Vertical);
    updateAnalysis();
    statusBar()->showMessage(
        QStringLiteral("Pinned %1: change the plan to compare against it").arg(plan), 5000);
}

void MainWindow::clearPinnedPlan() {
    pinned_.reset();
    pinnedLabel_.clear();
    timeline_->setPinned(nullptr, {}, {});
    unpinAction_->setEnabled(false);
    updateAnalysis();
}

bool MainWindow::exportChromeTrace(const QString& path, QString* error) const {
    if (!shown_ || !shown_->evaluation) {
        if (error)
            *error = QStringLiteral("Nothing to export: the plan cannot be evaluated");
        return false;
    }
    const std::string text =
        chromeTrace(*shown_->evaluation, document_->scenario().cluster).dump() + "\n";
    const std::string problem = saveFileAtomically(path.toStdString(), text);
    if (!problem.empty() && error)
        *error = QString::fromStdString(problem);
    return problem.empty();
}

bool MainWindow::exportTimelineImage(const QString& path, QString* error) const {
    return timeline_->current()->exportImage(path, error);
}

bool MainWindow::exportChartImage(const QString& path, QString* error) const {
    QWidget* page = chartTabs_->currentWidget();
    if (page == sweep_)
        page = sweep_->chart();
    return exportWidget(
        path, page,
        QStringLiteral("ScaleAcross %1: %2")
            .arg(chartTabs_->tabText(chartTabs_->currentIndex()), document_->displayName()),
        error);
}

namespace {

struct FrameworkFile {
    frameworks::Framework framework;
    const char* title;  // menu text
    const char* suffix; // default file name after the plan's name
    const char* filter; // file dialog filter
};

const FrameworkFile kFrameworkFiles[] = {
    {frameworks::Framework::Megatron, "&Megatron-LM Arguments…", "-megatron.sh",
     "Megatron-LM launch script (*.sh);;All files (*)"},
    {frameworks::Framework::Nemo, "&NeMo Launcher YAML…", "-nemo.yaml",
     "NeMo launcher YAML (*.yaml *.yml);;All files (*)"},
    {frameworks::Framework::Torchtitan, "torch&titan TOML…", "-torchtitan.toml",
     "torchtitan job TOML (*.toml);;All files (*)"},
};

QString frameworkTitle(frameworks::Framework f) {
    switch (f) {
    case frameworks::Framework::Megatron:
        return QStringLiteral("Megatron-LM");
    case frameworks::Framework::Nemo:
        return QStringLiteral("NeMo");
    case frameworks::Framework::Torchtitan:
        return QStringLiteral("torchtitan");
    }
    return {};
}

QString problemText(const std::vector<Diagnostic>& problems) {
    QStringList lines;
    for (const Diagnostic& d : problems)
        lines << QString::fromStdString(d.str());
    return lines.join(QLatin1Char('\n'));
}

} // namespace

bool MainWindow::exportFrameworkConfig(frameworks::Framework framework, const QString& path,
                                       QString* error, QStringList* notes) const {
    const Scenario& s = document_->scenario();
    frameworks::Exported out = frameworks::exportPlan(framework, s.cluster, s.model, s.plan);
    if (!out.ok()) {
        // What the framework cannot express is a setting of the plan being
        // edited (its paths are the plan's), not of a file.
        for (Diagnostic& d : out.problems)
            if (d.file.empty())
                d.file = "the plan";
        if (error)
            *error = problemText(out.problems);
        return false;
    }
    const std::string problem = saveFileAtomically(path.toStdString(), out.text);
    if (!problem.empty()) {
        if (error)
            *error = QString::fromStdString(problem);
        return false;
    }
    if (notes)
        for (const std::string& n : out.notes)
            *notes << QString::fromStdString(n);
    return true;
}

bool MainWindow::importFrameworkConfig(frameworks::Framework framework, const QString& path,
                                       QString* error, bool interactive) {
    const auto fail = [&](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    std::string readError;
    const auto text = readTextFile(path.toStdString(), &readError);
    if (!text)
        return fail(QString::fromStdString(readError));
    frameworks::ImportOptions opt;
    opt.file = path.toStdString();
    const auto importWith = [&] {
        switch (framework) {
        case frameworks::Framework::Megatron:
            return frameworks::importMegatronScript(*text, opt);
        case frameworks::Framework::Nemo:
            return frameworks::importNemo(*text, opt);
        case frameworks::Framework::Torchtitan:
            break;
        }
        return frameworks::importTorchtitan(*text, opt);
    };
    frameworks::Imported in = importWith();
    if (in.needs_world_size && interactive) {
        // The launcher, not the file, says how many GPUs: ask, offering the
        // open plan's count.
        bool ok = false;
        const int gpus = QInputDialog::getInt(
            this, QStringLiteral("World size"),
            QStringLiteral("%1 leaves the number of GPUs to the launcher.\nGPUs the job runs on:")
                .arg(QFileInfo(path).fileName()),
            int(std::min<std::int64_t>(document_->scenario().plan.parallelism.gpus(), 1 << 30)), 1,
            1 << 30, 1, &ok);
        if (!ok)
            return fail(problemText(in.problems));
        opt.world_size = gpus;
        in = importWith();
    }
    if (!in.ok())
        return fail(problemText(in.problems));
    Scenario next = document_->scenario();
    next.model = *in.model;
    next.plan = *in.plan;
    SourceNames names;
    names.model = names.plan = opt.file;
    if (const auto problems = validateScenario(next, names); !problems.empty())
        return fail(problemText(problems));
    document_->setScenario(next, QStringLiteral("Import %1").arg(QFileInfo(path).fileName()));
    statusBar()->showMessage(QStringLiteral("Imported %1: %2 settings mapped, %3 ignored")
                                 .arg(QFileInfo(path).fileName())
                                 .arg(in.mapped.size())
                                 .arg(in.ignored.size()),
                             8000);
    return true;
}

void MainWindow::exportWithDialog(const QString& title, const QString& fileName,
                                  const QString& filters,
                                  const std::function<bool(const QString&, QString*)>& write) {
    const QString path =
        QFileDialog::getSaveFileName(this, title, QDir::home().filePath(fileName), filters);
    if (path.isEmpty())
        return;
    QString error;
    if (!write(path, &error))
        showError(error);
    else
        statusBar()->showMessage(QStringLiteral("Exported %1").arg(QDir::toNativeSeparators(path)),
                                 5000);
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
    samplesMenu_ = file->addMenu(QStringLiteral("&New from Sample"));
    connect(samplesMenu_, &QMenu::aboutToShow, this, [this] {
        samplesMenu_->clear();
        const QStringList samples = sampleScenarios();
        for (const QString& path : samples) {
            QAction* a = samplesMenu_->addAction(QFileInfo(path).completeBaseName());
            a->setToolTip(path);
            connect(a, &QAction::triggered, this, [this, path] {
                if (maybeSave())
                    openSample(path);
            });
        }
        if (samples.isEmpty()) {
            QAction* none = samplesMenu_->addAction(
                QStringLiteral("No samples found (set SCALEACROSS_SAMPLES)"));
            none->setEnabled(false);
        }
    });
    QAction* open = file->addAction(QStringLiteral("&Open…"), this, &MainWindow::onOpen);
    open->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(QStringLiteral("Open &Recent"));
    connect(recentMenu_, &QMenu::aboutToShow, this, &MainWindow::updateRecentMenu);
    file->addSeparator();
    saveAction_ = file->addAction(QStringLiteral("&Save"), this, &MainWindow::onSave);
    saveAction_->setShortcut(QKeySequence::Save);
    QAction* saveAs = file->addAction(QStringLiteral("Save &As…"), this, &MainWindow::onSaveAs);
    saveAs->setShortcut(QKeySequence::SaveAs);
    QMenu* importMenu = file->addMenu(QStringLiteral("&Import Model and Plan"));
    for (const FrameworkFile& f : kFrameworkFiles) {
        importMenu->addAction(
            QStringLiteral("From ") + QString::fromUtf8(f.title), this, [this, f] {
                if (document_->isEmpty())
                    return;
                const QString path = QFileDialog::getOpenFileName(
                    this,
                    QStringLiteral("Import a %1 configuration").arg(frameworkTitle(f.framework)),
                    QDir::homePath(), QString::fromUtf8(f.filter));
                if (path.isEmpty())
                    return;
                QString error;
                if (!importFrameworkConfig(f.framework, path, &error, true))
                    showError(error);
            });
    }
    QAction* exportPlan =
        file->addAction(QStringLiteral("&Export Plan JSON…"), this, &MainWindow::onExportPlan);
    exportPlan->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    QMenu* exportMenu = file->addMenu(QStringLiteral("E&xport"));
    const QString images = QStringLiteral("PNG image (*.png);;SVG drawing (*.svg)");
    exportMenu->addAction(QStringLiteral("&Topology Image…"), this, [this, images] {
        exportWithDialog(
            QStringLiteral("Export topology image"), QStringLiteral("topology.png"), images,
            [this](const QString& p, QString* e) { return exportTopologyImage(p, e); });
    });
    exportMenu->addAction(QStringLiteral("Time&line Image…"), this, [this, images] {
        exportWithDialog(
            QStringLiteral("Export timeline image"), QStringLiteral("timeline.png"), images,
            [this](const QString& p, QString* e) { return exportTimelineImage(p, e); });
    });
    exportMenu->addAction(QStringLiteral("Timeline as &Chrome Trace…"), this, [this] {
        exportWithDialog(QStringLiteral("Export Chrome trace (opens in Perfetto)"),
                         QStringLiteral("timeline.trace.json"),
                         QStringLiteral("Chrome trace (*.json)"),
                         [this](const QString& p, QString* e) { return exportChromeTrace(p, e); });
    });
    exportMenu->addAction(QStringLiteral("C&hart Image…"), this, [this, images] {
        exportWithDialog(QStringLiteral("Export chart image"), QStringLiteral("chart.png"), images,
                         [this](const QString& p, QString* e) { return exportChartImage(p, e); });
    });
    exportMenu->addAction(QStringLiteral("Optimizer Chart &Image…"), this, [this, images] {
        exportWithDialog(QStringLiteral("Export optimizer chart"), QStringLiteral("optimizer.png"),
                         images, [this](const QString& p, QString* e) {
                             return exportWidget(p, optimizer_->chart(),
                                                 QStringLiteral("ScaleAcross optimizer results"),
                                                 e);
                         });
    });
    exportMenu->addAction(QStringLiteral("Co&mpare Image…"), this, [this, images] {
        exportWithDialog(QStringLiteral("Export comparison"), QStringLiteral("compare.png"), images,
                         [this](const QString& p, QString* e) {
                             return exportWidget(p, compare_,
                                                 QStringLiteral("ScaleAcross comparison"), e);
                         });
    });
    exportMenu->addSeparator();
    for (const FrameworkFile& f : kFrameworkFiles) {
        exportMenu->addAction(
            QStringLiteral("Plan as ") + QString::fromUtf8(f.title), this, [this, f] {
                if (document_->isEmpty())
                    return;
                QStringList notes;
                QString written;
                exportWithDialog(
                    QStringLiteral("Export the plan for %1").arg(frameworkTitle(f.framework)),
                    QString::fromStdString(document_->scenario().plan.name) +
                        QLatin1String(f.suffix),
                    QString::fromUtf8(f.filter),
                    [this, f, &notes, &written](const QString& p, QString* e) {
                        const bool ok = exportFrameworkConfig(f.framework, p, e, &notes);
                        if (ok)
                            written = p;
                        return ok;
                    });
                if (written.isEmpty() || notes.isEmpty())
                    return;
                // What the framework has no setting for is worth reading before
                // launching: say so where it cannot be missed.
                QMessageBox box(QMessageBox::Information,
                                QStringLiteral("Exported for %1").arg(frameworkTitle(f.framework)),
                                QStringLiteral("Wrote %1.").arg(QDir::toNativeSeparators(written)),
                                QMessageBox::Ok, this);
                box.setInformativeText(
                    QStringLiteral("Read before launching (also written as comments; what %1 "
                                   "has no setting for is kept in the last \"# scaleacross:\" "
                                   "line, which File > Import reads back):\n\n• %2")
                        .arg(frameworkTitle(f.framework), notes.join(QStringLiteral("\n• "))));
                box.exec();
            });
    }
    exportMenu->addSeparator();
    exportMenu->addAction(QStringLiteral("&Optimizer Results as CSV…"), this, [this] {
        exportWithDialog(
            QStringLiteral("Export optimizer results"), QStringLiteral("optimizer.csv"),
            QStringLiteral("CSV (*.csv)"),
            [this](const QString& p, QString* e) { return optimizer_->exportCsv(p, e); });
    });
    exportMenu->addAction(QStringLiteral("&Sweep as CSV…"), this, [this] {
        exportWithDialog(QStringLiteral("Export sweep"), QStringLiteral("sweep.csv"),
                         QStringLiteral("CSV (*.csv)"),
                         [this](const QString& p, QString* e) { return sweep_->exportCsv(p, e); });
    });
    file->addSeparator();
    QAction* quit = file->addAction(QStringLiteral("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);

    QMenu* edit = menuBar()->addMenu(QStringLiteral("&Edit"));
    QAction* undo = document_->undoStack()->createUndoAction(this, QStringLiteral("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = document_->undoStack()->createRedoAction(this, QStringLiteral("&Redo"));
    // Ctrl+Shift+Z on Linux and macOS, Ctrl+Y on Windows: both everywhere,
    // as people bring the habit from the other desktop.
    QList<QKeySequence> redoKeys = QKeySequence::keyBindings(QKeySequence::Redo);
    for (const QKeySequence& k :
         {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)})
        if (!redoKeys.contains(k))
            redoKeys << k;
    redo->setShortcuts(redoKeys);
    edit->addAction(undo);
    edit->addAction(redo);

    QMenu* viewMenu = menuBar()->addMenu(QStringLiteral("&View"));
    QAction* zoomIn = viewMenu->addAction(QStringLiteral("Zoom &In"), view_, &TopologyView::zoomIn);
    zoomIn->setShortcuts({QKeySequence::ZoomIn, QKeySequence(Qt::CTRL | Qt::Key_Equal)});
    QAction* zoomOut =
        viewMenu->addAction(QStringLiteral("Zoom &Out"), view_, &TopologyView::zoomOut);
    zoomOut->setShortcut(QKeySequence::ZoomOut);
    QAction* fit =
        viewMenu->addAction(QStringLiteral("&Fit to Window"), view_, &TopologyView::fitToView);
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    viewMenu->addSeparator();
    chipsByStageAction_ = viewMenu->addAction(QStringLiteral("Chips per Pipeline &Stage"));
    chipsByStageAction_->setCheckable(true);
    chipsByStageAction_->setChecked(chipsByStage_);
    chipsByStageAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_T));
    chipsByStageAction_->setToolTip(
        QStringLiteral("One chip per pipeline stage and building, so single stages can be "
                       "dragged; off: one chip per block of stages"));
    connect(chipsByStageAction_, &QAction::toggled, this, &MainWindow::setChipsByStage);
    viewMenu->addSeparator();
    pinAction_ = viewMenu->addAction(QStringLiteral("&Pin Plan for Comparison"), this, [this] {
        pinCurrentPlan();
        showDock(QStringLiteral("compare"));
    });
    pinAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    pinAction_->setToolTip(QStringLiteral("Keep this plan's numbers and timeline beside the "
                                          "current plan's while you change it"));
    unpinAction_ =
        viewMenu->addAction(QStringLiteral("&Unpin"), this, &MainWindow::clearPinnedPlan);
    unpinAction_->setEnabled(false);
    viewMenu->addSeparator();
    for (QDockWidget* dock : docks_)
        viewMenu->addAction(dock->toggleViewAction());

    QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
    QAction* guide = help->addAction(QStringLiteral("&Guide"), this, &MainWindow::showGuide);
    guide->setShortcut(QKeySequence::HelpContents);
    help->addSeparator();
    help->addAction(QStringLiteral("&About ScaleAcross Explorer"), this, [this] {
        QMessageBox::about(
            this, QStringLiteral("About ScaleAcross Explorer"),
            QStringLiteral("<b>ScaleAcross Explorer %1</b><p>Plan LLM training across datacenter "
                           "buildings: drag pipeline stages and DP replicas between buildings "
                           "and see step time, MFU, memory and link traffic change.</p>")
                .arg(QStringLiteral(SCALEACROSS_VERSION)));
    });
}

// Help > Guide: what each view shows, the keys, and the documentation.
void MainWindow::showGuide() {
    if (!guide_) {
        guide_ = new QDialog(this);
        guide_->setObjectName(QStringLiteral("guideDialog"));
        guide_->setWindowTitle(QStringLiteral("ScaleAcross Explorer guide"));
        auto* layout = new QVBoxLayout(guide_);
        auto* text = new QTextBrowser(guide_);
        text->setObjectName(QStringLiteral("guideText"));
        text->setOpenExternalLinks(true);
        QFile file(QStringLiteral(":/help/guide.html"));
        QString html = file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll())
                                                      : QStringLiteral("<p>The guide is missing "
                                                                       "from this build.</p>");
        const QString docs = docsDir();
        const std::pair<const char*, const char*> pages[] = {
            {"COST_MODEL.md", "the cost model: every formula, constant and source"},
            {"RUN.md", "outer sync, goodput, cost and energy"},
            {"OPTIMIZER.md", "the design space, the search and the baselines"},
            {"VALIDATION.md", "the published runs and the model's errors on them"},
            {"FORMATS.md", "the documents: cluster, model, plan, scenario"},
            {"FRAMEWORKS.md", "importing Megatron-LM, NeMo and torchtitan configurations"},
            {"CALIBRATION.md", "measuring your own cluster"}};
        html += QStringLiteral("<ul>");
        for (const auto& [page, what] : pages) {
            const QString path = QDir(docs).filePath(QLatin1String(page));
            html += docs.isEmpty() || !QFileInfo::exists(path)
                        ? QStringLiteral("<li>docs/%1: %2</li>")
                              .arg(QLatin1String(page), QLatin1String(what))
                        : QStringLiteral("<li><a href=\"%1\">%2</a>: %3</li>")
                              .arg(QUrl::fromLocalFile(path).toString(), QLatin1String(page),
                                   QLatin1String(what));
        }
        html += QStringLiteral("</ul>");
        text->setHtml(html);
        layout->addWidget(text);
        auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, guide_);
        connect(buttons, &QDialogButtonBox::rejected, guide_, &QDialog::close);
        layout->addWidget(buttons);
        guide_->resize(640, 720);
    }
    guide_->show();
    guide_->raise();
    guide_->activateWindow();
}

void MainWindow::createStatusBar() {
    // The step, MFU and memory keep their width; the longer figures give
    // theirs up first, cut with "…" (ElidingLabel), when the window is
    // narrower than the whole line.
    auto label = [this](const char* name, const QString& toolTip, bool elides = false) {
        QLabel* l = elides ? new ElidingLabel(this) : new QLabel(this);
        l->setObjectName(QLatin1String(name));
        l->setToolTip(toolTip);
        l->setContentsMargins(6, 0, 6, 0);
        statusBar()->addPermanentWidget(l);
        return l;
    };
    stepLabel_ = label("stepLabel", QStringLiteral("Predicted time of one training step"));
    mfuLabel_ = label("mfuLabel", QStringLiteral("Model FLOPs utilisation"));
    runLabel_ = label("runLabel",
                      QStringLiteral("Goodput (failures, checkpoints, stragglers), "
                                     "energy per step and the run (docs/RUN.md)"),
                      true);
    memoryLabel_ = label("memoryLabel", QStringLiteral("Peak memory per GPU on the worst stage"));
    notesButton_ = new QToolButton(this);
    notesButton_->setObjectName(QStringLiteral("notesButton"));
    notesButton_->setAutoRaise(true);
    notesButton_->hide();
    statusBar()->addPermanentWidget(notesButton_);
    connect(notesButton_, &QToolButton::clicked, this, [this] {
        QMessageBox::information(this, QStringLiteral("Notes on this plan"),
                                 notesButton_->toolTip());
    });
    deltaLabel_ = label("deltaLabel", QStringLiteral("Step time against the scenario as opened"));
    placementLabel_ =
        label("placementLabel", QStringLiteral("The job's grid and GPUs in use"), true);
    timingLabel_ = label("timingLabel", QStringLiteral("Time the last evaluation took"), true);
    connect(statusBar(), &QStatusBar::messageChanged, this, &MainWindow::fitStatusBar);
    statusBar()->installEventFilter(this);
    QFont bold = stepLabel_->font();
    bold.setBold(true);
    stepLabel_->setFont(bold);
}

// A message (a drag's preview, "Saved ...") is drawn left of the labels, in
// what they leave: the goodput, the grid and the timing step aside while one
// shows (a drag's preview keeps the step, MFU, memory and change beside it).
// The timing, the least of the figures, also steps aside when the line is
// too narrow for it; what is still too wide is cut by the eliding labels.
void MainWindow::fitStatusBar() {
    const bool message = !statusBar()->currentMessage().isEmpty();
    runLabel_->setVisible(!message);
    placementLabel_->setVisible(!message);
    const int spacing = std::max(0, statusBar()->layout() ? statusBar()->layout()->spacing() : 0);
    int need = 0;
    for (QWidget* w :
         std::initializer_list<QWidget*>{stepLabel_, mfuLabel_, runLabel_, memoryLabel_,
                                         notesButton_, deltaLabel_, placementLabel_, timingLabel_})
        if (!w->isHidden() || w == timingLabel_)
            need += w->sizeHint().width() + spacing + 4;
    // The size grip and the status bar's own margins.
    const int room = statusBar()->width() - 24;
    timingLabel_->setVisible(!message && need <= room);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (watched == statusBar() &&
        (event->type() == QEvent::Resize || event->type() == QEvent::LayoutRequest))
        fitStatusBar();
    return QMainWindow::eventFilter(watched, event);
}

QString MainWindow::statusText() const {
    QStringList parts;
    for (QLabel* l : {stepLabel_, mfuLabel_, runLabel_, memoryLabel_, deltaLabel_, placementLabel_})
        if (!l->text().isEmpty())
            parts << l->text();
    return parts.join(QStringLiteral(" | "));
}

void MainWindow::readSettings() {
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("windowState")).toByteArray());
    chipsByStage_ = settings.value(QStringLiteral("chipsByStage"), true).toBool();
    chipsByStageAction_->setChecked(chipsByStage_);
    if (settings.value(QStringLiteral("geometry")).isNull()) {
        // Most of the screen (never larger: on a 1280 × 800 laptop the
        // inspector would start cut off at the right), and the topology
        // the larger part of its height: the docks below take about 40 %.
        QSize size(1480, 920);
        if (const QScreen* s = screen()) {
            const QSize avail = s->availableGeometry().size();
            size = QSize(std::max(avail.width() * 92 / 100, std::min(1480, avail.width())),
                         std::max(avail.height() * 92 / 100, std::min(920, avail.height())));
            size = size.boundedTo(avail);
        }
        resize(size);
    }
    firstDockLayout_ = settings.value(QStringLiteral("windowState")).isNull();
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (!firstDockLayout_ || docks_.size() < 2)
        return;
    firstDockLayout_ = false;
    // Once laid out at its real size: the docks below the topology take
    // about 40 % of the height, the inspector a fixed width.
    QTimer::singleShot(0, this, [this] {
        resizeDocks({docks_[1]}, {height() * 38 / 100}, Qt::Vertical);
        resizeDocks({docks_[0]}, {std::max(360, width() / 5)}, Qt::Horizontal);
    });
}

void MainWindow::writeSettings() {
    QSettings settings;
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("windowState"), saveState());
    settings.setValue(QStringLiteral("chipsByStage"), chipsByStage_);
}

void MainWindow::addRecentFile(const QString& path) {
    QSettings settings;
    QStringList files = settings.value(kRecentKey).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > kMaxRecentFiles)
        files.removeLast();
    settings.setValue(kRecentKey, files);
}

void MainWindow::updateRecentMenu() {
    recentMenu_->clear();
    const QStringList files = QSettings().value(kRecentKey).toStringList();
    for (int i = 0; i < files.size(); ++i) {
        const QString path = files[i];
        QAction* a = recentMenu_->addAction(
            QStringLiteral("&%1 %2").arg(i + 1).arg(QDir::toNativeSeparators(path)));
        connect(a, &QAction::triggered, this, [this, path] {
            if (maybeSave())
                openFile(path);
        });
    }
    if (files.isEmpty()) {
        recentMenu_->addAction(QStringLiteral("No recent files"))->setEnabled(false);
        return;
    }
    recentMenu_->addSeparator();
    recentMenu_->addAction(QStringLiteral("Clear List"), this,
                           [] { QSettings().remove(kRecentKey); });
}

void MainWindow::updateTitle() {
    setWindowTitle(QStringLiteral("%1[*] — ScaleAcross Explorer").arg(document_->displayName()));
    setWindowModified(document_->isModified());
}

bool MainWindow::openFile(const QString& path) {
    QString error;
    if (!document_->open(path, &error)) {
        showError(error);
        return false;
    }
    banner_->hide();
    lastError_.clear();
    addRecentFile(path);
    showOpenedMessage(QStringLiteral("Opened %1").arg(QDir::toNativeSeparators(path)));
    return true;
}

bool MainWindow::openSample(const QString& path) {
    QString error;
    if (!document_->openAsNew(path, &error)) {
        showError(error);
        return false;
    }
    banner_->hide();
    lastError_.clear();
    showOpenedMessage(
        QStringLiteral("New document from sample %1").arg(QFileInfo(path).completeBaseName()));
    return true;
}

void MainWindow::showOpenedMessage(const QString& message) {
    // Said with what was opened, or the unpinning would flash by unread.
    if (unpinNote_.isEmpty()) {
        statusBar()->showMessage(message, 5000);
        return;
    }
    // The unpinning first: the status bar cuts a long message at the right.
    statusBar()->showMessage(QStringLiteral("%1 · %2").arg(unpinNote_, message), 10000);
    unpinNote_.clear();
}

void MainWindow::showError(const QString& message) {
    lastError_ = message;
    bannerText_->setText(message);
    banner_->show();
    statusBar()->showMessage(message.section(QLatin1Char('\n'), 0, 0), 8000);
}

bool MainWindow::offerRecovery() {
    bool recovered = false;
    for (const RecoverableDocument& doc : Autosave::findRecoverable(autosave_->directory())) {
        if (recovered) // one document per window; the others wait for the next start
            break;
        QMessageBox box(QMessageBox::Question, QStringLiteral("Recover unsaved changes"),
                        QStringLiteral("ScaleAcross Explorer did not close cleanly. Unsaved "
                                       "changes to %1 were kept (autosaved %2).")
                            .arg(doc.displayName, QLocale().toString(doc.savedAt.toLocalTime(),
                                                                     QLocale::ShortFormat)),
                        QMessageBox::NoButton, this);
        box.setInformativeText(
            doc.originalPath.isEmpty()
                ? QStringLiteral("Recover opens them as an untitled document.")
                : QStringLiteral("Recover opens them over %1; Undo goes back to the saved file.")
                      .arg(QDir::toNativeSeparators(doc.originalPath)));
        QPushButton* recover = box.addButton(QStringLiteral("Recover"), QMessageBox::AcceptRole);
        box.addButton(QStringLiteral("Discard"), QMessageBox::DestructiveRole);
        QPushButton* later = box.addButton(QStringLiteral("Later"), QMessageBox::RejectRole);
        box.setDefaultButton(recover);
        box.exec();
        if (box.clickedButton() == later)
            continue;
        if (box.clickedButton() == recover)
            recovered = this->recover(doc);
        else
            Autosave::remove(doc);
    }
    return recovered;
}

bool MainWindow::recover(const RecoverableDocument& doc) {
    const Loaded<Scenario> loaded = loadScenarioFile(doc.scenarioPath.toStdString());
    if (!loaded.ok()) {
        QStringList lines{QStringLiteral("Cannot recover %1:").arg(doc.displayName)};
        for (const auto& d : loaded.problems)
            lines << QString::fromStdString(d.str());
        showError(lines.join(QLatin1Char('\n')));
        return false;
    }
    document_->recover(*loaded.value, doc.originalPath);
    Autosave::remove(doc);
    // The recovered work is this session's unsaved work now: keep a copy.
    autosave_->saveNow();
    return true;
}

bool MainWindow::maybeSave() {
    if (!document_->isModified())
        return true;
    const auto answer = QMessageBox::warning(
        this, QStringLiteral("Unsaved changes"),
        QStringLiteral("%1 has unsaved changes. Save them?").arg(document_->displayName()),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Save)
        return onSave();
    return answer == QMessageBox::Discard;
}

void MainWindow::onOpen() {
    if (!maybeSave())
        return;
    const QString start = document_->filePath().isEmpty()
                              ? samplesDir()
                              : QFileInfo(document_->filePath()).absolutePath();
    const QString path = QFileDialog::getOpenFileName(
        this, QStringLiteral("Open scenario, cluster, model or plan"), start,
        QStringLiteral("ScaleAcross documents (*.json);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

bool MainWindow::onSave() {
    if (document_->filePath().isEmpty())
        return onSaveAs();
    QString error;
    if (!document_->save(&error)) {
        showError(error);
        return false;
    }
    statusBar()->showMessage(QStringLiteral("Saved %1").arg(document_->displayName()), 4000);
    return true;
}

bool MainWindow::onSaveAs() {
    QString suggestion = document_->filePath();
    if (suggestion.isEmpty())
        suggestion = QDir::home().filePath(
            QString::fromStdString(document_->scenario().plan.name).append(QLatin1String(".json")));
    const QString path =
        QFileDialog::getSaveFileName(this, QStringLiteral("Save scenario"), suggestion,
                                     QStringLiteral("ScaleAcross scenario (*.json)"));
    if (path.isEmpty())
        return false;
    QString error;
    if (!document_->saveAs(path, &error)) {
        showError(error);
        return false;
    }
    addRecentFile(path);
    statusBar()->showMessage(QStringLiteral("Saved %1").arg(QDir::toNativeSeparators(path)), 4000);
    return true;
}

void MainWindow::onExportPlan() {
    if (document_->isEmpty())
        return;
    const QString base = document_->filePath().isEmpty()
                             ? QDir::homePath()
                             : QFileInfo(document_->filePath()).absolutePath();
    const QString path = QFileDialog::getSaveFileName(
        this, QStringLiteral("Export plan"),
        QDir(base).filePath(QString::fromStdString(document_->scenario().plan.name) +
                            QStringLiteral("-plan.json")),
        QStringLiteral("ScaleAcross plan (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!document_->exportPlan(path, &error)) {
        showError(error);
        return;
    }
    statusBar()->showMessage(
        QStringLiteral("Exported the plan to %1").arg(QDir::toNativeSeparators(path)), 5000);
}

bool MainWindow::exportTopologyImage(const QString& path, QString* error) const {
    QGraphicsScene* scene = view_->scene();
    const QRectF source = view_->topologyLayout().bounds();
    const QRectF target(QPointF(0, 0), source.size());
    return exportPicture(
        path, source.size(),
        QStringLiteral("ScaleAcross topology: %1").arg(document_->displayName()),
        [&](QPainter& painter) {
            painter.fillRect(target, QColor(0xf8, 0xfa, 0xfc));
            scene->render(&painter, target, source);
        },
        error);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    writeSettings();
    autosave_->discard();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!localJsonFile(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QString path = localJsonFile(event->mimeData());
    if (path.isEmpty())
        return;
    event->acceptProposedAction();
    // A dropped scenario replaces the document; ask first as File > Open does.
    if (maybeSave())
        openFile(path);
}

void MainWindow::setChipsByStage(bool byStage) {
    if (chipsByStageAction_->isChecked() != byStage)
        chipsByStageAction_->setChecked(byStage);
    if (chipsByStage_ == byStage)
        return;
    chipsByStage_ = byStage;
    refreshChips();
}

void MainWindow::onClusterChanged() {
    view_->setCluster(document_->scenario().cluster);
}

void MainWindow::onDocumentReset() {
    // A pinned plan belongs to the scenario it was pinned in: comparing it
    // with another model on another cluster would read as a plan change.
    unpinNote_.clear();
    if (!pinned_)
        return;
    unpinNote_ = QStringLiteral("Unpinned %1: it belongs to the scenario that was closed")
                     .arg(QString::fromStdString(pinned_->plan.name));
    clearPinnedPlan();
    compare_->setUnpinnedNote(unpinNote_);
    statusBar()->showMessage(unpinNote_, 10000);
}

void MainWindow::onScenarioChanged() {
    refreshChips();
    updateTitle();
}

void MainWindow::refreshChips() {
    if (document_->isEmpty()) {
        view_->setChips({}, 0, {});
        placementLabel_->clear();
        return;
    }
    const Scenario& s = document_->scenario();
    const PlacementResult placed = placeCells(s.cluster, s.plan);
    std::vector<GroupChip> chips = chipsOf(placed.grid);
    if (chipsByStage_)
        chips = splitByStage(chips);
    view_->setChips(chips, placed.grid.cell_gpus, placed.gpus_used);
    std::int64_t used = 0;
    for (auto g : placed.gpus_used)
        used += g;
    QString text = QStringLiteral("%1 × %2 groups of %3 GPUs · %4 of %5 GPUs")
                       .arg(placed.grid.stages)
                       .arg(placed.grid.replicas)
                       .arg(placed.grid.cell_gpus)
                       .arg(formatCount(used), formatCount(s.cluster.totalGpus()));
    if (!placed.ok())
        text = QStringLiteral("⚠ %1").arg(QString::fromStdString(placed.problems.front().str()));
    placementLabel_->setText(text);
}

// Goodput, energy and the run in the status bar; the details in its tooltip.
void MainWindow::showRun(const Evaluation& e) {
    const GoodputReport& g = e.goodput;
    const CostReport& c = e.cost;
    QString text = QStringLiteral("Goodput %1").arg(formatPercent(g.goodput));
    if (e.run && std::isinf(e.run->time_s))
        text += QStringLiteral(" · never reaches the tokens");
    else if (e.run)
        text += QStringLiteral(" · %1 days to the tokens")
                    .arg(QString::number(e.run->time_s / 86400, 'f', 1));
    QStringList tip;
    tip << QStringLiteral("Goodput %1: job MTBF %2, checkpoint every %3 steps (blocks %4), "
                          "restart %5, %6 lost per failure, stragglers %7 per step")
               .arg(formatPercent(g.goodput), formatSeconds(g.job_mtbf_s))
               .arg(g.interval_steps)
               .arg(formatSeconds(g.checkpoint_blocking_s), formatSeconds(g.restart_s),
                    formatSeconds(g.lost_per_failure_s), formatSeconds(g.straggler_s));
    if (!e.degraded_steps.empty())
        tip << QStringLiteral("Degraded links %1 per step").arg(formatSeconds(g.degraded_links_s));
    tip << QStringLiteral("Per step %1 kWh (%2 W per GPU, %3 MW in all)%4")
               .arg(QString::number(c.energy_kwh_per_step, 'f', 2),
                    QString::number(c.gpu_power_w, 'f', 0),
                    QString::number(c.facility_power_kw / 1000, 'f', 2),
                    c.priced
                        ? QStringLiteral(", $%1").arg(QString::number(c.cost_usd_per_step, 'f', 2))
                        : QStringLiteral(", no prices"));
    if (e.outer_sync) {
        const OuterSyncReport& o = *e.outer_sync;
        tip << QStringLiteral("%1 over %2 workers: inner step %3, sync %4, %5 per step; loss "
                              "%6 %, %7× the tokens")
                   .arg(QString::fromLatin1(toString(o.method)))
                   .arg(o.workers)
                   .arg(formatSeconds(o.inner_step_s), formatSeconds(o.sync_s),
                        formatSeconds(o.exposed_per_step_s),
                        QString::number(100 * o.loss_penalty, 'f', 2),
                        QString::number(o.token_multiplier, 'f', 2));
    }
    if (e.run)
        tip << QStringLiteral("Run: %1 tokens in %2 days, %3 MWh%4; target loss %5 in %6 days")
                   .arg(QString::number(e.run->tokens, 'g', 3),
                        QString::number(e.run->time_s / 86400, 'f', 1),
                        QString::number(e.run->energy_kwh / 1000, 'f', 0),
                        c.priced
                            ? QStringLiteral(", $%1").arg(QString::number(e.run->cost_usd, 'g', 4))
                            : QString(),
                        QString::number(e.run->target_loss, 'f', 3),
                        QString::number(e.run->time_to_loss_s / 86400, 'f', 1));
    runLabel_->setText(text);
    runLabel_->setToolTip(tip.join(QLatin1Char('\n')));
}

namespace {

// Posted at low priority after a new evaluation reached the heatmap: it
// queues behind the window's update request, so the topology is painted
// first and the other docks follow in the next turn of the event loop.
const QEvent::Type kRefreshPanels = QEvent::Type(QEvent::registerEventType());

} // namespace

bool MainWindow::event(QEvent* event) {
    if (event->type() == kRefreshPanels) {
        refreshPanels();
        return true;
    }
    return QMainWindow::event(event);
}

void MainWindow::refreshPanels() {
    if (!panelsPending_)
        return;
    panelsPending_ = false;
    linkModel_->setEvaluation(shown_ ? shown_->evaluation : nullptr);
    updateAnalysis();
    if (shown_)
        runPanel_->setEvaluation(shown_->evaluation.get(), shown_->plan);
}

void MainWindow::onEvaluated(std::shared_ptr<const EvaluationSnapshot> snapshot) {
    shown_ = snapshot;
    const Evaluation* e = snapshot->evaluation.get();
    const QString previewNote =
        snapshot->preview ? QStringLiteral("preview of the drop") : QString();
    // The heatmap and the status bar now; the docks below after the paint.
    view_->setEvaluation(snapshot->evaluation,
                         e ? previewNote : QStringLiteral("cannot evaluate this plan"));
    if (!panelsPending_) {
        panelsPending_ = true;
        QCoreApplication::postEvent(this, new QEvent(kRefreshPanels), Qt::LowEventPriority);
    }
    auto colour = [](QLabel* l, const QColor& c) {
        l->setStyleSheet(c.isValid() ? QStringLiteral("color: %1;").arg(c.name()) : QString());
    };
    if (!e) {
        stepLabel_->setText(QStringLiteral("⚠ cannot evaluate"));
        stepLabel_->setToolTip(snapshot->error);
        mfuLabel_->clear();
        runLabel_->clear();
        runLabel_->setToolTip({});
        memoryLabel_->clear();
        notesButton_->hide();
        deltaLabel_->clear();
        colour(stepLabel_, QColor(0xc9, 0x2a, 0x2a));
    } else {
        const QString prefix = snapshot->preview ? QStringLiteral("Preview: ") : QString();
        stepLabel_->setText(prefix + QStringLiteral("Step %1").arg(formatStepTime(e->step_time_s)));
        stepLabel_->setToolTip(
            QStringLiteral("Compute %1, bubble %2, exposed DP %3, PP %4, TP %5; %6 tokens/s")
                .arg(formatSeconds(e->breakdown.compute_s), formatSeconds(e->breakdown.bubble_s),
                     formatSeconds(e->breakdown.dp_exposed_s),
                     formatSeconds(e->breakdown.pp_exposed_s),
                     formatSeconds(e->breakdown.tp_exposed_s),
                     formatCount(std::int64_t(e->tokens_per_s))));
        colour(stepLabel_, snapshot->preview ? QColor(0x1c, 0x7e, 0xd6) : QColor());
        mfuLabel_->setText(QStringLiteral("MFU %1").arg(formatPercent(e->mfu)));
        showRun(*e);
        const auto& m = e->memory;
        if (m.fits) {
            memoryLabel_->setText(
                QStringLiteral("Memory %1 of %2 ✓")
                    .arg(formatGib(m.peak_gib_per_gpu), formatGib(m.capacity_gib)));
            colour(memoryLabel_, QColor());
        } else {
            memoryLabel_->setText(QStringLiteral("⚠ Memory %1 > %2 on stage %3")
                                      .arg(formatGib(m.peak_gib_per_gpu), formatGib(m.capacity_gib))
                                      .arg(m.worst_stage));
            colour(memoryLabel_, QColor(0xc9, 0x2a, 0x2a));
        }
        // What the evaluation says about the plan beyond its figures; the
        // GPUs in use are the placement label's already.
        QStringList notes;
        for (const std::string& w : e->warnings)
            if (w.rfind("placement: the plan uses ", 0) != 0)
                notes << QString::fromStdString(w);
        notesButton_->setVisible(!notes.isEmpty());
        notesButton_->setText(notes.size() == 1 ? QStringLiteral("⚠ 1 note")
                                                : QStringLiteral("⚠ %1 notes").arg(notes.size()));
        notesButton_->setToolTip(notes.join(QStringLiteral("\n\n")));
        const auto base = live_->baseline();
        if (base && base->step_time_s > 0) {
            const double delta = e->step_time_s / base->step_time_s - 1;
            if (std::fabs(delta) < 0.0005) {
                deltaLabel_->setText(QStringLiteral("Δ 0 % vs opened"));
                colour(deltaLabel_, QColor());
            } else {
                deltaLabel_->setText(QStringLiteral("Δ %1%2 % vs opened")
                                         .arg(delta < 0 ? QStringLiteral("−") : QStringLiteral("+"))
                                         .arg(std::fabs(delta) * 100, 0, 'f', 1));
                colour(deltaLabel_,
                       delta < 0 ? QColor(0x2b, 0x8a, 0x3e) : QColor(0xc9, 0x2a, 0x2a));
            }
        } else {
            deltaLabel_->clear();
        }
    }
    timingLabel_->setText(
        QStringLiteral("evaluated in %1 ms").arg(QString::number(snapshot->evaluate_ms, 'f', 1)));
    Q_EMIT statusUpdated();
}

void MainWindow::onChipDragTargetChanged(const ChipDrop& drop) {
    if (drop.building < 0) {
        statusBar()->clearMessage();
        live_->endPreview();
        return;
    }
    const DropOutcome outcome = applyDrop(document_->scenario(), drop);
    view_->setDropHint(outcome.ok(), outcome.displaced);
    if (outcome.ok()) {
        statusBar()->showMessage(outcome.description + QStringLiteral(": release to apply"));
        // The heatmap and the status bar show what the drop would give.
        live_->preview(outcome.plan);
    } else {
        statusBar()->showMessage(QStringLiteral("Cannot drop here: %1").arg(outcome.problem));
        live_->endPreview();
    }
}

void MainWindow::onChipDropped(const ChipDrop& drop) {
    const DropOutcome outcome = applyDrop(document_->scenario(), drop);
    if (!outcome.ok()) {
        live_->endPreview();
        statusBar()->showMessage(
            QStringLiteral("Refused: %1: %2").arg(outcome.description, outcome.problem), 10000);
        return;
    }
    document_->setPlan(outcome.plan, outcome.description);
    statusBar()->showMessage(outcome.description, 5000);
}

} // namespace sa::views

#pragma once
// The explorer's window: the topology view in the middle, docks around it,
// menus, the status bar with the latest prediction, recent files and window
// state in QSettings. It wires the document to the views; it holds no
// scenario state of its own.

#include "placementedits.h"

#include "cost/evaluation.h"
#include "frameworks/framework.h"

#include <QMainWindow>
#include <QPointer>

#include <functional>
#include <memory>
#include <vector>

class QAction;
class QDialog;
class QDockWidget;
class QLabel;
class QMenu;
class QTabWidget;
class QToolButton;

namespace sa::views {

class Autosave;
class BreakdownChart;
class ComparePanel;
class Document;
class LinkTableModel;
class LiveEvaluation;
class MemoryChart;
class OptimizerPanel;
class PlanInspector;
class RunPanel;
class SweepPanel;
class TimelinePane;
class TopologyView;
struct EvaluationSnapshot;
struct RecoverableDocument;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    Document* document() const { return document_; }
    TopologyView* topologyView() const { return view_; }
    LiveEvaluation* liveEvaluation() const { return live_; }
    LinkTableModel* linkTableModel() const { return linkModel_; }
    PlanInspector* inspector() const { return inspector_; }
    TimelinePane* timelinePane() const { return timeline_; }
    BreakdownChart* breakdownChart() const { return breakdown_; }
    MemoryChart* memoryChart() const { return memory_; }
    SweepPanel* sweepPanel() const { return sweep_; }
    ComparePanel* comparePanel() const { return compare_; }
    OptimizerPanel* optimizerPanel() const { return optimizer_; }
    QTabWidget* chartTabs() const { return chartTabs_; }
    // Shows a dock (and raises its tab): "timeline", "charts", "compare",
    // "links", "inspector", "optimizer".
    void showDock(const QString& name);

    // Opens a scenario (or a cluster/model/plan into the open scenario).
    // On failure the document stays as it was and the message is shown.
    bool openFile(const QString& path);
    // Opens a bundled sample as a new, untitled document.
    bool openSample(const QString& path);
    // The last problem shown to the user (tests, --screenshot).
    QString lastError() const { return lastError_; }
    QString statusText() const;
    // The evaluation the views show now (the document's or a drop preview).
    // The topology's heatmap and the status bar take it at once; the docks
    // (links, timeline, charts, compare, run) right after the heatmap's
    // paint. panelsUpToDate(): they show it too.
    std::shared_ptr<const EvaluationSnapshot> shownSnapshot() const { return shown_; }
    bool panelsUpToDate() const { return !panelsPending_; }

    // The topology picture as PNG (twice the scene's resolution) or SVG.
    bool exportTopologyImage(const QString& path, QString* error) const;
    // The current plan's pipeline timeline as a Chrome trace (Perfetto).
    bool exportChromeTrace(const QString& path, QString* error) const;
    // The whole timeline as PNG or SVG.
    bool exportTimelineImage(const QString& path, QString* error) const;
    // The chart on the visible tab of the Charts dock as PNG or SVG.
    bool exportChartImage(const QString& path, QString* error) const;
    // The current model and plan as a framework's launch configuration
    // (Megatron-LM arguments, NeMo YAML, torchtitan TOML). `notes` gets what
    // the framework cannot express (also written as comments in the file).
    bool exportFrameworkConfig(sa::frameworks::Framework framework, const QString& path,
                               QString* error, QStringList* notes = nullptr) const;
    // Reads a framework's configuration as the open scenario's model and plan
    // (one undo step). On any problem the document stays as it was.
    // `interactive`: ask for the world size when the file leaves it to the launcher.
    bool importFrameworkConfig(sa::frameworks::Framework framework, const QString& path,
                               QString* error, bool interactive = false);

    // Compare: keeps the shown plan and its evaluation beside the current one.
    void pinCurrentPlan();
    void clearPinnedPlan();
    std::shared_ptr<const EvaluationSnapshot> pinnedSnapshot() const { return pinned_; }

    Autosave* autosave() const { return autosave_; }
    // Offers to recover documents left unsaved by an explorer that did not
    // close cleanly (asks once per copy). True when one was recovered.
    bool offerRecovery();
    // Opens an autosaved copy as the document (modified, Undo goes back to
    // the file it came from) and deletes the copy.
    bool recover(const RecoverableDocument& doc);

    // Splits chips per pipeline stage, so single stages can be dragged.
    void setChipsByStage(bool byStage);

public Q_SLOTS:
    void showError(const QString& message);

Q_SIGNALS:
    // The status bar shows the prediction for the current scenario.
    void statusUpdated();

protected:
    bool event(QEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void refreshPanels();
    void createMenus();
    void createStatusBar();
    void fitStatusBar();
    void readSettings();
    void writeSettings();
    void addRecentFile(const QString& path);
    void updateRecentMenu();
    void updateTitle();
    bool maybeSave();
    void onOpen();
    bool onSave();
    bool onSaveAs();
    void onExportPlan();
    void onClusterChanged();
    void onScenarioChanged();
    void onDocumentReset();
    void showOpenedMessage(const QString& message);
    void onChipDragTargetChanged(const ChipDrop& drop);
    void onChipDropped(const ChipDrop& drop);
    void onEvaluated(std::shared_ptr<const EvaluationSnapshot> snapshot);
    void showRun(const Evaluation& e);
    void showGuide();
    void refreshChips();
    void createDocks();
    void updateAnalysis();
    QStringList buildingNames() const;
    void exportWithDialog(const QString& title, const QString& fileName, const QString& filters,
                          const std::function<bool(const QString&, QString*)>& write);

    Document* document_;
    Autosave* autosave_;
    LiveEvaluation* live_;
    TopologyView* view_;
    LinkTableModel* linkModel_ = nullptr;
    PlanInspector* inspector_ = nullptr;
    TimelinePane* timeline_ = nullptr;
    BreakdownChart* breakdown_ = nullptr;
    MemoryChart* memory_ = nullptr;
    SweepPanel* sweep_ = nullptr;
    ComparePanel* compare_ = nullptr;
    OptimizerPanel* optimizer_ = nullptr;
    QTabWidget* chartTabs_ = nullptr;
    QAction* pinAction_ = nullptr;
    QAction* unpinAction_ = nullptr;
    std::shared_ptr<const EvaluationSnapshot> pinned_;
    bool panelsPending_ = false; // the docks wait for the heatmap's paint
    QString pinnedLabel_;
    // Why the pinned plan was dropped by the last open, for its message.
    QString unpinNote_;
    QLabel* stepLabel_ = nullptr;
    QLabel* mfuLabel_ = nullptr;
    QLabel* runLabel_ = nullptr; // goodput, energy and the run (docs/RUN.md)
    RunPanel* runPanel_ = nullptr;
    QDialog* guide_ = nullptr;
    bool firstDockLayout_ = false; // no saved window state: size the docks once shown
    QLabel* memoryLabel_ = nullptr;
    // The evaluation's notes (its warnings): a count, the list in its tool
    // tip and, clicked, in a dialog; hidden when there are none.
    QToolButton* notesButton_ = nullptr;
    QLabel* deltaLabel_ = nullptr;
    QLabel* timingLabel_ = nullptr;
    QMenu* viewMenu_ = nullptr;
    std::vector<QDockWidget*> docks_;
    std::shared_ptr<const EvaluationSnapshot> shown_;
    QWidget* banner_;
    QLabel* bannerText_;
    QLabel* placementLabel_;
    QMenu* recentMenu_ = nullptr;
    QMenu* samplesMenu_ = nullptr;
    QAction* saveAction_ = nullptr;
    QAction* chipsByStageAction_ = nullptr;
    QString lastError_;
    bool chipsByStage_ = true;
};

} // namespace sa::views

#pragma once
// The explorer's window: the topology view in the middle, docks around it,
// menus, the status bar with the latest prediction, recent files and window
// state in QSettings. It wires the document to the views; it holds no
// scenario state of its own.

#include "placementedits.h"

#include <QMainWindow>
#include <QPointer>

#include <memory>

class QAction;
class QLabel;
class QMenu;
class QToolButton;

namespace sa::views {

class Document;
class TopologyView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    Document* document() const { return document_; }
    TopologyView* topologyView() const { return view_; }

    // Opens a scenario (or a cluster/model/plan into the open scenario).
    // On failure the document stays as it was and the message is shown.
    bool openFile(const QString& path);
    // Opens a bundled sample as a new, untitled document.
    bool openSample(const QString& path);
    // The last problem shown to the user (tests, --screenshot).
    QString lastError() const { return lastError_; }
    QString statusText() const;

    // Splits chips per pipeline stage, so single stages can be dragged.
    void setChipsByStage(bool byStage);

public Q_SLOTS:
    void showError(const QString& message);

Q_SIGNALS:
    // The status bar shows the prediction for the current scenario.
    void statusUpdated();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void createMenus();
    void createStatusBar();
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
    void onChipDragTargetChanged(const ChipDrop& drop);
    void onChipDropped(const ChipDrop& drop);
    void refreshChips();

    Document* document_;
    TopologyView* view_;
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

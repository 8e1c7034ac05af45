#pragma once
// The optimizer in the explorer: search the open scenario's design space in
// the background, show the best plans as a sortable table above the step
// time vs cross-building traffic chart (a row selected in one is selected
// in the other), and load any of them into the document as one undoable
// edit (double-click, or Load plan).
//
// The search runs on the panel's JobTracker (one worker; oneTBB threads
// inside it). Progress comes from the optimizer's worker threads and is
// coalesced into at most one queued call to the UI thread at a time. Cancel
// sets the search's own stop flag, so the optimizer returns what it found
// so far and the panel shows it as cancelled; a new run stops the previous
// search and the tracker drops its result. The destructor stops the search
// and waits for the worker (it stops within one evaluation), so no worker
// ever posts to a panel being destroyed.

#include "jobtracker.h"

#include "explore/optimizer.h"
#include "model/scenario.h"

#include <QElapsedTimer>
#include <QString>
#include <QWidget>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QSplitter;
class QTableView;
class QTimer;

namespace sa::views {

class Document;
class OptimizerResultsModel;
class ParetoChart;

class OptimizerPanel : public QWidget {
    Q_OBJECT
public:
    // Gives the evaluator of the document's cluster (LiveEvaluation::evaluator)
    // so that topology and routes are not built twice; when it is empty,
    // returns null or an evaluator of another cluster, the worker builds
    // its own.
    using EvaluatorSource = std::function<std::shared_ptr<const Evaluator>()>;

    explicit OptimizerPanel(Document* document, EvaluatorSource evaluator = {},
                            QWidget* parent = nullptr);
    ~OptimizerPanel() override;

    // The options of the next run: the space, seeds and baselines as given;
    // objective, top K, threads, budget and space size also go into the
    // controls (which win when the user changes them). cancel and progress
    // are the panel's own.
    void setOptions(const OptimizerOptions& options);
    // The options the next run would use.
    OptimizerOptions options() const;

    // Starts a search of the document's scenario (stopping one that runs).
    void run();
    // Stops the running search; it finishes with the plans found so far.
    void cancel();
    bool isRunning() const { return running_; }
    // The latest finished search, or null.
    const OptimizerResult* result() const { return result_.get(); }
    std::shared_ptr<const OptimizerResult> sharedResult() const { return result_; }
    // Whether the result was searched on the document's current cluster
    // and model (a plan from it can be loaded).
    bool resultMatchesDocument() const;

    // Loads the plan of a results-model row (a top plan, a front plan or a
    // feasible baseline) into the document as one undo step. False, with
    // the reason in the status line, when there is nothing to load or it
    // does not fit the document any more.
    bool loadResult(int row);
    // Writes the table's rows (top plans, front plans, baselines) as CSV.
    bool exportCsv(const QString& path, QString* error) const;

    // Selects a model row in the table and the chart (-1 clears).
    void selectRow(int row);
    // The model row selected in the table, or -1.
    int selectedRow() const;

    OptimizerResultsModel* model() const { return model_; }
    QSortFilterProxyModel* proxyModel() const { return proxy_; }
    QTableView* table() const { return table_; }
    ParetoChart* chart() const { return chart_; }
    QProgressBar* progressBar() const { return progress_; }
    QString statusText() const;

Q_SIGNALS:
    // A search ended (completed or cancelled) and its result is shown.
    void finished();
    void runningChanged(bool running);

private:
    struct RunState {
        std::atomic<bool> stop{false};
        std::atomic<std::int64_t> done{0};
        std::atomic<std::int64_t> total{0};
        std::atomic<bool> progressQueued{false};
    };

    void onProgress(const std::shared_ptr<RunState>& state);
    // What the worker hands back: the result, or why there is none.
    struct Outcome {
        OptimizerResult result;
        QString error;
    };
    void onFinished(const std::shared_ptr<RunState>& state, std::shared_ptr<const Outcome> outcome);
    void onDocumentChanged();
    void exportCsvInteractively();
    void updateRunningStatus();
    void updateResultStatus();
    void updateButtons();
    void setRunning(bool running);
    void showMessage(const QString& text);

    Document* document_;
    EvaluatorSource evaluatorSource_;
    OptimizerOptions options_;
    std::shared_ptr<RunState> state_;
    std::shared_ptr<const OptimizerResult> result_;
    Scenario searched_; // the scenario the shown result belongs to
    Scenario searching_;
    bool running_ = false;
    QString runningLabel_; // "Searching plans for MODEL on CLUSTER by OBJECTIVE"
    QElapsedTimer clock_;

    QComboBox* objective_;
    QSpinBox* topK_;
    QSpinBox* threads_;
    QSpinBox* budget_;
    QComboBox* space_;
    QPushButton* runButton_;
    QPushButton* cancelButton_;
    QPushButton* loadButton_;
    QPushButton* exportButton_;
    QProgressBar* progress_;
    QLabel* status_;
    QLabel* message_;
    QSplitter* splitter_;
    QTableView* table_;
    OptimizerResultsModel* model_;
    QSortFilterProxyModel* proxy_;
    ParetoChart* chart_;
    QCheckBox* toScale_;
    QTimer* ticker_;

    // Last: destroyed first, after the destructor has waited for it.
    JobTracker tracker_;
};

} // namespace sa::views

#pragma once
// The optimizer in the explorer: search the open scenario's design space in
// the background, show the best plans as a sortable table above (or, in a
// short and wide panel, beside) the step
// chart of any two of their figures (step time, cross-building traffic,
// time to tokens, time to the target loss, cost, energy: two combo boxes
// pick the axes; a row selected in the table is selected in the chart and
// back), and load any of them into the document as one undoable edit
// (double-click, or Load plan). The outer-sync axis of the search (DiLoCo
// inner steps, Streaming DiLoCo fragments, HSDP) is built from the same
// lists as `scaleacross optimize --diloco --streaming-fragments --hsdp`.
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
#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
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
    QComboBox* xAxisBox() const { return xAxis_; }
    QComboBox* yAxisBox() const { return yAxis_; }
    // The outer-sync controls: the lists apply when an edit is committed
    // (Return or leaving it), not while it is typed.
    QLineEdit* dilocoEdit() const { return diloco_; }
    QLineEdit* fragmentsEdit() const { return fragments_; }
    QCheckBox* hsdpBox() const { return hsdp_; }
    QString statusText() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

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
        // The baselines the worker computed (none when they came from the
        // cache or it was cancelled before they were complete).
        std::shared_ptr<const std::vector<BaselineResult>> baselines;
    };
    void onFinished(const std::shared_ptr<RunState>& state, std::shared_ptr<const Outcome> outcome);
    void onDocumentChanged();
    void exportCsvInteractively();
    void updateRunningStatus();
    void updateResultStatus();
    void updateButtons();
    void setRunning(bool running);
    void showMessage(const QString& text);
    void onAxesChosen();
    // The table beside the chart where the panel is short and wide (a
    // dock along the bottom of the window), above it otherwise.
    void updateSplitterOrientation();
    // Reads an outer-sync edit into `applied` (`changed` set when it
    // differs); false (with a message, the edit marked and `applied` kept)
    // when its text is not a list.
    bool commitList(QLineEdit* edit, std::vector<int>& applied, const QString& what, bool* changed);
    bool commitOuterSync();
    void applyOuterSync();

    Document* document_;
    EvaluatorSource evaluatorSource_;
    OptimizerOptions options_;
    std::shared_ptr<RunState> state_;
    std::shared_ptr<const OptimizerResult> result_;
    Scenario searched_; // the scenario the shown result belongs to
    Scenario searching_;
    // Baselines are computed once per scenario: on the plan as opened (with
    // the current workload, baselineBasePlan) and the current cluster and
    // model, with the search's baseline options. Editing the plan reuses
    // them; a new cluster, model, workload, space or budget recomputes.
    struct BaselineKey {
        Cluster cluster;
        Model model;
        Plan base;
        std::int64_t gpu_budget = 0;
        std::int64_t max_evaluations = 0;
        SpaceSize size = SpaceSize::Default;
        bool operator==(const BaselineKey&) const = default;
    };
    static BaselineKey baselineKey(const Scenario& current, const Plan& asOpened,
                                   const OptimizerOptions& options);
    std::optional<BaselineKey> cachedKey_;
    std::shared_ptr<const std::vector<BaselineResult>> cachedBaselines_;
    BaselineKey searchingKey_;
    bool running_ = false;
    QString runningLabel_; // "Searching plans for MODEL on CLUSTER by OBJECTIVE"
    QElapsedTimer clock_;

    QComboBox* objective_;
    QSpinBox* topK_;
    QSpinBox* threads_;
    QSpinBox* budget_;
    QComboBox* space_;
    QLineEdit* diloco_;
    QLineEdit* fragments_;
    QCheckBox* hsdp_;
    std::vector<int> dilocoSteps_, fragmentCounts_; // as last committed
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
    QLabel* hint_;
    QComboBox* xAxis_;
    QComboBox* yAxis_;
    QCheckBox* toScale_;
    QTimer* ticker_;

    // Last: destroyed first, after the destructor has waited for it.
    JobTracker tracker_;
};

} // namespace sa::views

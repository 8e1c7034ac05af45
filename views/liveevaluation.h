#pragma once
// Keeps an evaluation of the open scenario up to date in the background.
// Every change of the document starts a job through the JobTracker; a newer
// change makes older jobs stale, so their results are dropped. The UI
// thread only builds the Evaluator when the cluster changes (topology and
// routes), then shares it read-only with the workers.

#include "cost/evaluate.h"
#include "jobtracker.h"
#include "model/scenario.h"

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <cstdint>
#include <memory>
#include <optional>

namespace sa::views {

class Document;

// CPU time of the calling thread in ms (POSIX thread CPU clock).
double threadCpuMs();

struct EvaluationSnapshot {
    std::uint64_t revision = 0; // the document revision it belongs to
    bool preview = false;       // a hypothetical plan (a chip hovering), not the document
    Model model;                // the model and plan evaluated
    Plan plan;
    std::shared_ptr<const Evaluation> evaluation; // null when the plan cannot be evaluated
    QString error;                                // why it cannot, with the JSON path
    double evaluate_ms = 0;                       // wall time inside sa::Evaluator::evaluate
    // CPU time of the worker thread for it: a loaded machine stretches the
    // wall time, not this.
    double evaluate_cpu_ms = 0;
};

class LiveEvaluation : public QObject {
    Q_OBJECT
public:
    explicit LiveEvaluation(Document* document, QObject* parent = nullptr);
    ~LiveEvaluation() override;

    // The latest evaluation of the document itself (not a preview).
    std::shared_ptr<const EvaluationSnapshot> current() const { return current_; }
    // The evaluation of the scenario as opened: the Δ compares against it.
    std::shared_ptr<const Evaluation> baseline() const { return baseline_; }
    std::shared_ptr<const Evaluator> evaluator() const { return evaluator_; }
    std::uint64_t revision() const { return revision_; }
    bool isBusy() const { return tracker_.isJobRunning(); }
    // Everything evaluated so far is delivered (tests, screenshots).
    bool isUpToDate() const;

    // Evaluates `plan` in place of the document's plan, e.g. while a chip
    // hovers over a building; endPreview() shows the document again.
    void preview(const Plan& plan);
    void endPreview();

Q_SIGNALS:
    void evaluationStarted();
    // A new snapshot for the views: the document's, or a preview's.
    void evaluated(std::shared_ptr<const sa::views::EvaluationSnapshot> snapshot);

private:
    struct JobResult {
        EvaluationSnapshot snapshot;
        std::shared_ptr<const Evaluation> baseline;
    };
    void onClusterChanged();
    void onDocumentReset();
    void onScenarioChanged();
    void start(const Plan& plan, bool preview);
    void deliver(std::shared_ptr<const JobResult> result);

    Document* document_;
    JobTracker tracker_;
    std::shared_ptr<const Evaluator> evaluator_;
    std::shared_ptr<const EvaluationSnapshot> current_;
    std::shared_ptr<const EvaluationSnapshot> lastPreview_;
    std::shared_ptr<const Evaluation> baseline_;
    std::uint64_t revision_ = 0;
    bool previewing_ = false;
    bool waitingForDocument_ = false;
};

} // namespace sa::views

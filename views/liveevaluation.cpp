#include "liveevaluation.h"

#include "document.h"

#include <chrono>
#include <ctime>
#include <variant>

namespace sa::views {

double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

LiveEvaluation::LiveEvaluation(Document* document, QObject* parent)
    : QObject(parent)
    , document_(document)
    , tracker_(this) {
    connect(document_, &Document::clusterChanged, this, &LiveEvaluation::onClusterChanged);
    connect(document_, &Document::documentReset, this, &LiveEvaluation::onDocumentReset);
    connect(document_, &Document::scenarioChanged, this, &LiveEvaluation::onScenarioChanged);
    if (!document_->isEmpty()) {
        onClusterChanged();
        onScenarioChanged();
    }
}

LiveEvaluation::~LiveEvaluation() = default;

bool LiveEvaluation::isUpToDate() const {
    return !tracker_.isJobRunning() && current_ && current_->revision == revision_;
}

void LiveEvaluation::onClusterChanged() {
    // Topology and routes depend on the cluster alone: built once here, then
    // shared read-only by every job.
    lastPreview_.reset();
    evaluator_ = document_->isEmpty()
                     ? nullptr
                     : std::make_shared<const Evaluator>(document_->scenario().cluster);
}

void LiveEvaluation::onDocumentReset() {
    baseline_.reset();
    current_.reset();
    lastPreview_.reset();
    previewing_ = false;
}

void LiveEvaluation::onScenarioChanged() {
    ++revision_;
    if (document_->isEmpty() || !evaluator_)
        return;
    // The drop the user just made was previewed while the chip hovered: the
    // result is already here, show it at once.
    const Scenario& s = document_->scenario();
    if (lastPreview_ && lastPreview_->plan == s.plan && lastPreview_->model == s.model &&
        baseline_) {
        auto promoted = std::make_shared<EvaluationSnapshot>(*lastPreview_);
        promoted->revision = revision_;
        promoted->preview = false;
        current_ = promoted;
        lastPreview_.reset();
        previewing_ = false;
        tracker_.cancel();
        Q_EMIT evaluated(current_);
        return;
    }
    previewing_ = false;
    lastPreview_.reset();
    start(s.plan, false);
}

void LiveEvaluation::preview(const Plan& plan) {
    if (document_->isEmpty() || !evaluator_)
        return;
    previewing_ = true;
    if (lastPreview_ && lastPreview_->plan == plan &&
        lastPreview_->model == document_->scenario().model) {
        Q_EMIT evaluated(lastPreview_);
        return;
    }
    start(plan, true);
}

void LiveEvaluation::endPreview() {
    if (!previewing_)
        return;
    previewing_ = false;
    if (current_ && current_->revision == revision_) {
        tracker_.cancel();
        Q_EMIT evaluated(current_);
    } else if (!document_->isEmpty()) {
        start(document_->scenario().plan, false);
    }
}

void LiveEvaluation::start(const Plan& plan, bool preview) {
    const bool needBaseline = !baseline_;
    Scenario baselineScenario;
    if (needBaseline)
        baselineScenario = document_->baseline();
    const bool baselineOnSameCluster = baselineScenario.cluster == evaluator_->cluster();
    auto job = [evaluator = evaluator_, model = document_->scenario().model, plan, preview,
                revision = revision_, needBaseline, baselineScenario,
                baselineOnSameCluster](const std::atomic<bool>& cancelled) {
        JobResult r;
        r.snapshot.revision = revision;
        r.snapshot.preview = preview;
        r.snapshot.model = model;
        r.snapshot.plan = plan;
        const auto t0 = std::chrono::steady_clock::now();
        const double cpu0 = threadCpuMs();
        EvaluationResult result = evaluator->evaluate(model, plan);
        r.snapshot.evaluate_cpu_ms = threadCpuMs() - cpu0;
        r.snapshot.evaluate_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        if (auto* e = std::get_if<Evaluation>(&result))
            r.snapshot.evaluation = std::make_shared<const Evaluation>(std::move(*e));
        else
            r.snapshot.error = QString::fromStdString(std::get<EvaluationError>(result).str());
        if (needBaseline && !cancelled) {
            EvaluationResult base =
                baselineOnSameCluster
                    ? evaluator->evaluate(baselineScenario.model, baselineScenario.plan)
                    : evaluate(baselineScenario);
            if (auto* e = std::get_if<Evaluation>(&base))
                r.baseline = std::make_shared<const Evaluation>(std::move(*e));
        }
        return r;
    };
    Q_EMIT evaluationStarted();
    tracker_.startJob(std::move(job),
                      [this](std::shared_ptr<const JobResult> r) { deliver(std::move(r)); });
}

void LiveEvaluation::deliver(std::shared_ptr<const JobResult> result) {
    if (result->baseline)
        baseline_ = result->baseline;
    auto snapshot = std::shared_ptr<const EvaluationSnapshot>(result, &result->snapshot);
    if (snapshot->preview) {
        lastPreview_ = snapshot;
        if (!previewing_)
            return; // the drag ended meanwhile
    } else {
        current_ = snapshot;
    }
    Q_EMIT evaluated(snapshot);
}

} // namespace sa::views

#include "explore/sweepseries.h"

#include "explore/baselines.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace sa {

int SweepSeries::evaluatedCount() const {
    int n = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
        if ((i >= errors.size() || errors[i].empty()) && i < step_time_s.size() &&
            std::isfinite(step_time_s[i]))
            ++n;
    return n;
}

int SweepSeries::errorCount() const {
    return int(x.size()) - evaluatedCount();
}

namespace {

SweepSeries seriesOf(const std::string& name, const std::vector<double>& values,
                     const std::vector<SweepPoint>& points) {
    SweepSeries s;
    s.name = name;
    s.x = values;
    s.step_time_s.assign(values.size(), std::numeric_limits<double>::quiet_NaN());
    s.errors.assign(values.size(), std::string());
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i >= points.size()) {
            s.errors[i] = "not evaluated (cancelled)";
            continue;
        }
        const SweepPoint& p = points[i];
        if (p.evaluation) {
            s.step_time_s[i] = p.evaluation->step_time_s;
            s.fits_in_memory = s.fits_in_memory && p.evaluation->memory.fits;
        } else {
            s.errors[i] = p.error.empty() ? "cannot be evaluated" : p.error;
        }
    }
    return s;
}

SweepSeries failedSeries(const std::string& name, const std::vector<double>& values,
                         const std::string& reason) {
    SweepSeries s;
    s.name = name;
    s.x = values;
    s.step_time_s.assign(values.size(), std::numeric_limits<double>::quiet_NaN());
    s.errors.assign(values.size(), reason);
    return s;
}

} // namespace

std::string currentPlanSeriesName() {
    return "Current plan";
}

std::string productionSeriesName() {
    return "Production (Llama 3 recipe)";
}

std::string priorArtSeriesName() {
    return "Prior art (Atlas/CrossPipe)";
}

std::vector<SweepSeries> computeSweepSeries(const Scenario& base, const std::string& path,
                                            const std::vector<double>& values, bool withBaselines,
                                            const std::atomic<bool>* cancelled) {
    auto isCancelled = [&] { return cancelled && cancelled->load(); };
    std::vector<SweepSeries> out;
    const std::vector<SweepAxis> axes{SweepAxis{path, values}};
    if (isCancelled())
        return out;
    out.push_back(seriesOf(currentPlanSeriesName(), values, runSweep(base, axes)));
    if (!withBaselines)
        return out;

    const Evaluator evaluator(base.cluster);
    // The optimizer's GPU budget (explore/designspace.cpp): the base plan's
    // GPUs when it has degrees, else the whole cluster.
    std::int64_t budget =
        base.plan.parallelism.gpus() > 1 ? base.plan.parallelism.gpus() : base.cluster.totalGpus();
    budget = std::min(budget, base.cluster.totalGpus());
    using Generator = BaselineResult (*)(const Evaluator&, const Model&, const Plan&, std::int64_t);
    const std::pair<std::string, Generator> baselines[] = {
        {productionSeriesName(), &productionBaseline},
        {priorArtSeriesName(), &priorArtBaseline},
    };
    for (const auto& [name, generate] : baselines) {
        if (isCancelled())
            return out;
        const BaselineResult r = generate(evaluator, base.model, base.plan, budget);
        // A baseline that was never evaluated has no plan worth sweeping; one
        // that was but does not fit is still drawn (and flagged).
        if (!r.feasible && r.gpus == 0) {
            out.push_back(
                failedSeries(name, values, r.problem.empty() ? "no plan found" : r.problem));
            continue;
        }
        Scenario s = base;
        s.plan = r.plan;
        out.push_back(seriesOf(name, values, runSweep(s, axes)));
    }
    return out;
}

} // namespace sa

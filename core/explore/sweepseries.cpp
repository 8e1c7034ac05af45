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

std::string baselineSeriesName(const BaselineResult& b) {
    std::string title = b.title.empty() ? b.name : b.title;
    if (!title.empty() && title[0] >= 'a' && title[0] <= 'z')
        title[0] = char(title[0] - 'a' + 'A');
    return b.prior_art ? "Best prior art: " + title : title;
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
    BaselineOptions options;
    options.cancel = cancelled;
    const std::vector<BaselineResult> all =
        computeBaselines(evaluator, base.model, base.plan, options);
    std::vector<const BaselineResult*> shown;
    if (const BaselineResult* production = findBaseline(all, "production"))
        shown.push_back(production);
    if (const BaselineResult* prior = bestPriorArt(all))
        shown.push_back(prior);
    else if (auto it = std::find_if(all.begin(), all.end(),
                                    [](const BaselineResult& b) { return b.prior_art; });
             it != all.end())
        shown.push_back(&*it);
    for (const BaselineResult* b : shown) {
        if (isCancelled())
            return out;
        const std::string name = baselineSeriesName(*b);
        // A baseline that was never evaluated has no plan worth sweeping; one
        // that was but does not fit is still drawn (and flagged).
        if (!b->feasible && b->gpus == 0) {
            out.push_back(
                failedSeries(name, values, b->problem.empty() ? "no plan found" : b->problem));
            continue;
        }
        Scenario s = base;
        s.plan = b->plan;
        out.push_back(seriesOf(name, values, runSweep(s, axes)));
    }
    return out;
}

} // namespace sa

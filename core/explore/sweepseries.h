#pragma once
// Step time against one swept parameter of the cluster (an inter-building
// link's bandwidth or latency, or any path of explore/sweep.h) for the
// scenario's plan and the baselines it is measured against: the curves the
// explorer's sweep chart draws and `scaleacross sweep --baselines` prints.

#include "explore/sweep.h"
#include "model/scenario.h"

#include <atomic>
#include <string>
#include <vector>

namespace sa {

// One curve. x, step_time_s and errors have one entry per swept value; a
// point that could not be evaluated has its reason in errors[i] and NaN as
// its step time.
struct SweepSeries {
    std::string name;
    std::vector<double> x;
    std::vector<double> step_time_s;
    std::vector<std::string> errors;
    bool fits_in_memory = true; // false when an evaluated point does not fit

    int evaluatedCount() const;
    int errorCount() const;
};

// Series names of computeSweepSeries(), in its order.
std::string currentPlanSeriesName();
struct BaselineResult;
// "Production (Llama 3 recipe)", "Best prior art: CrossPipe (...)".
std::string baselineSeriesName(const BaselineResult& b);

// Sweeps `path` over `values` for the scenario's plan and, with
// `withBaselines`, for the production baseline's and the best prior-art
// baseline's plans (explore/baselines.h, found once on the unswept
// scenario and then held fixed while the parameter varies). A baseline that cannot be
// generated gives a series whose every point carries the reason. Runs
// sa::runSweep (parallel); returns early, with what it has, once
// `cancelled` is set. Safe to call from any thread.
std::vector<SweepSeries> computeSweepSeries(const Scenario& base, const std::string& path,
                                            const std::vector<double>& values, bool withBaselines,
                                            const std::atomic<bool>* cancelled = nullptr);

} // namespace sa

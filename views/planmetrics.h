#pragma once
// The figures an optimizer result can be plotted and compared by: step time,
// cross-building bytes per step and the run-level scores (RunScores in
// core/explore/baselines.h) of every searched plan and baseline. The
// explorer's Pareto chart puts any two on its axes; the results table shows
// them all.
//
// Cost is $ where the searched cluster has prices and GPU-seconds (shown as
// GPU-hours) where it has none, as the optimizer's cost objective counts it.
// Without a token budget the run-level scores are per step.

#include "explore/optimizer.h"

#include "units.h"

#include <QString>

namespace sa::views {

enum class PlanMetric { StepTime, CrossBuildingBytes, TimeToTokens, TimeToLoss, Cost, Energy };
inline constexpr PlanMetric kPlanMetrics[] = {
    PlanMetric::StepTime,     PlanMetric::CrossBuildingBytes,
    PlanMetric::TimeToTokens, PlanMetric::TimeToLoss,
    PlanMetric::Cost,         PlanMetric::Energy};

// The value in its base unit: seconds, bytes, $ or GPU-seconds, kWh.
double metricValue(const ScoredPlan& p, PlanMetric m);
double metricValue(const BaselineResult& b, PlanMetric m);

// "Step time", "Cross-building traffic", "Time to tokens", ... for menus.
QString metricName(PlanMetric m);
// "10.03 s", "1.2 TB", "41.7 days", "$1.23 M" or "45.6 k GPU-h", "4.56 MWh".
QString formatMetric(PlanMetric m, double value, bool priced);
// The axis unit for values up to `max`.
AxisUnit metricAxisUnit(PlanMetric m, double max, bool priced);
// "Step time (s)", "Cost (M$)", "Energy per step (kWh)": the title of an
// axis in `unit`; `perStep` where the plans have no token budget; `brief`
// for an axis too short for the whole title ("Cross-bldg (GB)").
QString metricAxisTitle(PlanMetric m, const QString& unit, bool perStep, bool brief = false);

// Whether the result's run-level scores are per step: its plans have no
// token budget.
bool runScoresPerStep(const OptimizerResult& r);

} // namespace sa::views

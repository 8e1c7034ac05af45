#include "planmetrics.h"

namespace sa::views {

namespace {

double fromRun(const RunScores& r, PlanMetric m) {
    switch (m) {
    case PlanMetric::TimeToTokens:
        return r.time_to_tokens_s;
    case PlanMetric::TimeToLoss:
        return r.time_to_loss_s;
    case PlanMetric::Cost:
        return r.cost;
    case PlanMetric::Energy:
        return r.energy_kwh;
    default:
        return 0;
    }
}

} // namespace

double metricValue(const ScoredPlan& p, PlanMetric m) {
    if (m == PlanMetric::StepTime)
        return p.step_time_s;
    if (m == PlanMetric::CrossBuildingBytes)
        return p.cross_building_bytes;
    return fromRun(p.run, m);
}

double metricValue(const BaselineResult& b, PlanMetric m) {
    if (m == PlanMetric::StepTime)
        return b.step_time_s;
    if (m == PlanMetric::CrossBuildingBytes)
        return b.cross_building_bytes;
    return fromRun(b.run, m);
}

QString metricName(PlanMetric m) {
    switch (m) {
    case PlanMetric::StepTime:
        return QStringLiteral("Step time");
    case PlanMetric::CrossBuildingBytes:
        return QStringLiteral("Cross-building traffic");
    case PlanMetric::TimeToTokens:
        return QStringLiteral("Time to tokens");
    case PlanMetric::TimeToLoss:
        return QStringLiteral("Time to target loss");
    case PlanMetric::Cost:
        return QStringLiteral("Cost");
    case PlanMetric::Energy:
        return QStringLiteral("Energy");
    }
    return {};
}

QString formatMetric(PlanMetric m, double value, bool priced) {
    switch (m) {
    case PlanMetric::StepTime:
        return formatStepTime(value);
    case PlanMetric::CrossBuildingBytes:
        return formatBytes(value);
    case PlanMetric::TimeToTokens:
    case PlanMetric::TimeToLoss:
        return formatDuration(value);
    case PlanMetric::Cost:
        return priced ? formatUsd(value) : formatGpuHours(value);
    case PlanMetric::Energy:
        return formatEnergyKwh(value);
    }
    return {};
}

AxisUnit metricAxisUnit(PlanMetric m, double max, bool priced) {
    switch (m) {
    case PlanMetric::StepTime:
        // A step takes seconds or less: no minutes on the step-time axis.
        return max < 1 ? AxisUnit{1e3, QStringLiteral("ms")} : AxisUnit{1, QStringLiteral("s")};
    case PlanMetric::CrossBuildingBytes:
        return bytesAxisUnit(max);
    case PlanMetric::TimeToTokens:
    case PlanMetric::TimeToLoss:
        return durationAxisUnit(max);
    case PlanMetric::Cost:
        return priced ? usdAxisUnit(max) : gpuHoursAxisUnit(max);
    case PlanMetric::Energy:
        return energyAxisUnit(max);
    }
    return {};
}

QString metricAxisTitle(PlanMetric m, const QString& unit, bool perStep, bool brief) {
    QString name;
    switch (m) {
    case PlanMetric::StepTime:
        name = QStringLiteral("Step time");
        break;
    case PlanMetric::CrossBuildingBytes:
        name = brief ? QStringLiteral("Cross-bldg") : QStringLiteral("Cross-building traffic");
        break;
    case PlanMetric::TimeToTokens:
        if (perStep)
            name =
                brief ? QStringLiteral("With goodput") : QStringLiteral("Step time with goodput");
        else
            name = brief ? QStringLiteral("To tokens") : QStringLiteral("Time to tokens");
        break;
    case PlanMetric::TimeToLoss:
        if (perStep)
            name = brief ? QStringLiteral("To loss/step") : QStringLiteral("Time to loss per step");
        else
            name = brief ? QStringLiteral("To loss") : QStringLiteral("Time to target loss");
        break;
    case PlanMetric::Cost:
        name = !perStep ? QStringLiteral("Cost")
               : brief  ? QStringLiteral("Cost/step")
                        : QStringLiteral("Cost per step");
        break;
    case PlanMetric::Energy:
        name = !perStep ? QStringLiteral("Energy")
               : brief  ? QStringLiteral("Energy/step")
                        : QStringLiteral("Energy per step");
        break;
    }
    return QStringLiteral("%1 (%2)").arg(name, unit);
}

bool runScoresPerStep(const OptimizerResult& r) {
    for (const ScoredPlan& p : r.top)
        return p.plan.token_budget <= 0;
    for (const ScoredPlan& p : r.pareto)
        return p.plan.token_budget <= 0;
    for (const BaselineResult& b : r.baselines)
        if (b.feasible)
            return b.plan.token_budget <= 0;
    return true;
}

} // namespace sa::views

#include "placementedits.h"

#include "formats/documents.h"
#include "units.h"

namespace sa::views {

QString chipLabel(const GroupChip& chip) {
    return QStringLiteral("S%1 · R%2 · %3 GPUs")
        .arg(formatRange(chip.stage_first, chip.stage_last),
             formatRange(chip.replica_first, chip.replica_last), formatCount(chip.gpus));
}

namespace {

PlacementRun runOf(const GroupChip& chip, const std::string& building) {
    PlacementRun run;
    run.stage_first = chip.stage_first;
    run.stage_last = chip.stage_last;
    run.replica_first = chip.replica_first;
    run.replica_last = chip.replica_last;
    run.building = building;
    return run;
}

QString nameOf(const Cluster& cluster, int building) {
    if (building < 0 || building >= int(cluster.buildings.size()))
        return QStringLiteral("?");
    return QString::fromStdString(cluster.buildings[std::size_t(building)].name);
}

} // namespace

DropOutcome applyDrop(const Scenario& scenario, const ChipDrop& drop) {
    DropOutcome out;
    const Cluster& cluster = scenario.cluster;
    if (drop.building < 0 || drop.building >= int(cluster.buildings.size())) {
        out.problem = QStringLiteral("no building there");
        return out;
    }
    const std::string target = cluster.buildings[std::size_t(drop.building)].name;
    out.plan = withRun(scenario.plan, runOf(drop.chip, target));
    if (drop.swapWith) {
        const GroupChip& other = *drop.swapWith;
        out.plan = withRun(out.plan,
                           runOf(other, cluster.buildings[std::size_t(drop.chip.building)].name));
        out.description = QStringLiteral("Swap %1 (%2) ↔ %3 (%4)")
                              .arg(chipLabel(drop.chip), nameOf(cluster, drop.chip.building),
                                   chipLabel(other), nameOf(cluster, other.building));
    } else {
        out.description = QStringLiteral("Move %1 from %2 to %3")
                              .arg(chipLabel(drop.chip), nameOf(cluster, drop.chip.building),
                                   nameOf(cluster, drop.building));
    }
    const PlacementResult placed = placeCells(cluster, out.plan);
    if (!placed.ok()) {
        out.problem = QString::fromStdString(placed.problems.front().message);
        if (!drop.swapWith)
            out.problem += QStringLiteral(" — drop it onto a chip of the same size to swap");
        return out;
    }
    Scenario next = scenario;
    next.plan = out.plan;
    const auto problems = validateScenario(next);
    if (!problems.empty())
        out.problem = QString::fromStdString(problems.front().str());
    return out;
}

std::vector<GroupChip> splitByStage(const std::vector<GroupChip>& chips) {
    std::vector<GroupChip> out;
    for (const GroupChip& c : chips) {
        const int stages = c.stage_last - c.stage_first + 1;
        for (int s = c.stage_first; s <= c.stage_last; ++s) {
            GroupChip one = c;
            one.stage_first = s;
            one.stage_last = s;
            one.gpus = stages > 0 ? c.gpus / stages : c.gpus;
            out.push_back(one);
        }
    }
    return out;
}

} // namespace sa::views

#include "placementedits.h"

#include "formats/documents.h"
#include "units.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

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

namespace {

DropOutcome placeDrop(const Scenario& scenario, const ChipDrop& drop);

// The chips of `building` a move that does not fit may trade places with,
// best first.
std::vector<GroupChip> swapCandidates(const Scenario& scenario, const GroupChip& moving,
                                      int building) {
    const PlacementResult placed = placeCells(scenario.cluster, scenario.plan);
    if (!placed.ok())
        return {};
    const std::vector<GroupChip> runs = chipsOf(placed.grid);
    std::vector<GroupChip> all = splitByStage(runs);
    all.insert(all.end(), runs.begin(), runs.end());
    // Whole chips, and the parts of larger ones with as many replicas as
    // the moving chip (a part of a run moved with Shift swaps with a part).
    const int replicas = moving.replica_last - moving.replica_first + 1;
    std::vector<GroupChip> out;
    auto add = [&](const GroupChip& c) {
        if (std::find(out.begin(), out.end(), c) == out.end())
            out.push_back(c);
    };
    for (const GroupChip& c : all) {
        if (c.building != building)
            continue;
        add(c);
        if (c.replica_last - c.replica_first + 1 > replicas)
            add(replicasOf(c, replicas));
    }
    auto rank = [&](const GroupChip& c) {
        return std::make_tuple(c.gpus != moving.gpus, std::abs(c.stage_first - moving.stage_first),
                               std::abs(c.replica_first - moving.replica_first), c.stage_first,
                               c.replica_first, c.gpus);
    };
    std::stable_sort(out.begin(), out.end(),
                     [&](const GroupChip& a, const GroupChip& b) { return rank(a) < rank(b); });
    return out;
}

} // namespace

DropOutcome applyDrop(const Scenario& scenario, const ChipDrop& drop) {
    DropOutcome out = placeDrop(scenario, drop);
    if (out.ok() || drop.swapWith || drop.building < 0 ||
        drop.building >= int(scenario.cluster.buildings.size()))
        return out;
    // No room: the first chip of the target that can trade places.
    constexpr std::size_t kMaxTries = 24; // each try places every cell once
    const std::vector<GroupChip> candidates = swapCandidates(scenario, drop.chip, drop.building);
    for (std::size_t i = 0; i < candidates.size() && i < kMaxTries; ++i) {
        ChipDrop swap = drop;
        swap.swapWith = candidates[i];
        DropOutcome proposed = placeDrop(scenario, swap);
        if (!proposed.ok())
            continue;
        proposed.displaced = candidates[i];
        proposed.description =
            QStringLiteral("%1 is full: %2")
                .arg(nameOf(scenario.cluster, drop.building), proposed.description);
        return proposed;
    }
    out.problem += candidates.empty() ? QStringLiteral("; no chip there to swap with")
                                      : QStringLiteral("; no chip of %1 can trade places with it")
                                            .arg(nameOf(scenario.cluster, drop.building));
    return out;
}

namespace {

DropOutcome placeDrop(const Scenario& scenario, const ChipDrop& drop) {
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
        return out;
    }
    Scenario next = scenario;
    next.plan = out.plan;
    const auto problems = validateScenario(next);
    if (!problems.empty())
        out.problem = QString::fromStdString(problems.front().str());
    return out;
}

} // namespace

GroupChip replicasOf(const GroupChip& chip, int replicas) {
    const int all = chip.replica_last - chip.replica_first + 1;
    const int n = std::clamp(replicas, 1, std::max(1, all));
    GroupChip part = chip;
    part.replica_last = chip.replica_first + n - 1;
    part.gpus = all > 0 ? chip.gpus / all * n : chip.gpus;
    return part;
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

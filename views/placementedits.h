#pragma once
// What a chip drag means for the plan, apart from any widget: the drop
// (move cells to a building, or swap them with another chip's cells), the
// plan it produces and why it may be refused.

#include "cost/placement.h"
#include "model/scenario.h"

#include <QString>

#include <optional>
#include <vector>

namespace sa::views {

struct ChipDrop {
    GroupChip chip;
    int building = -1;                 // target building (index into Cluster::buildings)
    std::optional<GroupChip> swapWith; // dropped onto this chip: exchange the two
    bool operator==(const ChipDrop&) const = default;
};

struct DropOutcome {
    Plan plan; // the plan after the drop (valid only when problem is empty)
    // A plain move into a building without room for it became a swap with
    // this chip of the target building, which goes to the dragged chip's.
    std::optional<GroupChip> displaced;
    QString description; // "Move S0–5 · R0–127 to B2": undo text and status message
    QString problem;     // why the drop is refused; empty when it is legal
    bool ok() const { return problem.isEmpty(); }
};

// The plan after `drop`, checked with sa::placeCells and sa::validateScenario.
// A move into a building that has no room for the chip proposes a swap:
// the target building's chips (per stage and whole runs) are tried, those of
// the dragged chip's GPU count first, then by the nearest stage and
// replicas, and the first that places and validates is displaced to the
// dragged chip's building. Refused when none does.
DropOutcome applyDrop(const Scenario& scenario, const ChipDrop& drop);

// One chip per pipeline stage: a chip spanning stages 0–15 becomes sixteen,
// so a single stage can be dragged.
std::vector<GroupChip> splitByStage(const std::vector<GroupChip>& chips);

// The first `replicas` DP replicas of `chip` (all of its stages), with
// their share of its GPUs: what a Shift+drop moves.
GroupChip replicasOf(const GroupChip& chip, int replicas);

QString chipLabel(const GroupChip& chip); // "S0–5 · R0–127"

} // namespace sa::views

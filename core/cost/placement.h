#pragma once
// The job as a grid of cells: PP stages x DP replicas. Each cell is one
// model-parallel group of tp*cp GPUs and sits inside one building. The rank
// order gives the default assignment (GPUs are filled building by building
// in rank order); an explicit placement reassigns runs of cells on top.

#include "model/cluster.h"
#include "model/plan.h"
#include "model/scenario.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sa {

struct CellGrid {
    int stages = 0;
    int replicas = 0;
    std::int64_t cell_gpus = 0; // tp * cp
    // Replicas are stored in columns of `group` consecutive replicas that
    // provably share building and zone in every stage (the gcd of every
    // building, zone and placement-run boundary): 768 replicas of a
    // 98,304-GPU job become ~100 columns.
    int group = 1;
    int columns = 0;
    std::vector<std::int16_t> building; // stage-major: [stage * columns + column]
    std::vector<std::int32_t> zone;     // zone of the column's first GPU inside its building

    int at(int stage, int replica) const {
        return building[std::size_t(stage) * columns + replica / group];
    }
    int zoneAt(int stage, int replica) const {
        return zone[std::size_t(stage) * columns + replica / group];
    }
};

// A rectangle of cells held by one building: what the GUI shows as a chip.
struct GroupChip {
    int stage_first = 0;
    int stage_last = 0;
    int replica_first = 0;
    int replica_last = 0;
    int building = 0;
    std::int64_t gpus = 0;
    bool operator==(const GroupChip&) const = default;
};

struct PlacementResult {
    CellGrid grid;
    std::vector<Diagnostic> problems;    // e.g. a building asked for more GPUs than it has
    std::vector<std::int64_t> gpus_used; // per building
    bool ok() const { return problems.empty(); }
};

// `planFile` names the plan in messages.
PlacementResult placeCells(const Cluster& cluster, const Plan& plan,
                           const std::string& planFile = "plan");

// What the grid puts across buildings: PP when some replica's stages sit in
// more than one building, DP when some stage's replicas do (TP and CP stay
// inside a cell, so inside a building). In that order; empty when the job
// fits one building.
std::vector<Dim> dimsAcrossBuildings(const CellGrid& grid);

// Maximal rectangles of equal building, stage runs first: one chip per
// building per contiguous block of stages with the same replica ranges.
std::vector<GroupChip> chipsOf(const CellGrid& grid);

// Runs of consecutive replicas that sit in the same building and zone in
// every stage. Their groups are identical, so the cost model treats each
// block once with a multiplicity (symmetry: 768 replicas -> ~32 blocks).
struct ReplicaBlock {
    int first = 0;
    int count = 0;
};
std::vector<ReplicaBlock> replicaBlocks(const CellGrid& grid);

// The plan with one more placement run appended (the GUI's drag).
Plan withRun(const Plan& plan, const PlacementRun& run);

// Layers held by each stage: the plan's explicit split or an even split
// (earlier stages take the remainder).
std::vector<int> layersPerStage(const Model& model, const Plan& plan);

} // namespace sa

#include "cost/placement.h"

#include <algorithm>
#include <numeric>

namespace sa {

namespace {

// Column width: every replica index where some stage's building or zone may
// change (a building or zone boundary between two ranks, the edge of a
// placement run) is a multiple of it.
int columnWidth(const Cluster& cluster, const Plan& plan, const CellGrid& g,
                const std::vector<std::int64_t>& firstRank, std::int64_t ppStride,
                std::int64_t dpStride) {
    std::int64_t gw = g.replicas;
    auto cut = [&](std::int64_t d) {
        if (d > 0 && d < g.replicas && d % gw != 0)
            gw = std::gcd(gw, d);
    };
    for (std::size_t b = 0; b < cluster.buildings.size(); ++b) {
        const auto& bld = cluster.buildings[b];
        const std::int64_t zoneGpus = bld.zone_gpus > 0 ? bld.zone_gpus : bld.gpus;
        for (std::int64_t x = firstRank[b]; x < firstRank[b + 1] && gw > 1;
             x += std::max<std::int64_t>(1, zoneGpus))
            for (int s = 0; s < g.stages && gw > 1; ++s) {
                const std::int64_t rel = x - s * ppStride;
                if (rel > 0)
                    cut((rel + dpStride - 1) / dpStride);
            }
    }
    if (plan.placement && !plan.placement->runs.empty()) {
        for (const PlacementRun& run : plan.placement->runs) {
            cut(run.replica_first);
            cut(std::int64_t(run.replica_last) + 1);
        }
        // Cells take GPUs in rank order inside their building: where the
        // runs reshuffle buildings, zone edges fall at multiples of the zone
        // size in cells.
        for (const auto& bld : cluster.buildings)
            if (bld.zone_gpus > 0 && g.cell_gpus > 0)
                cut(std::max<std::int64_t>(1, bld.zone_gpus / g.cell_gpus));
    }
    return int(std::max<std::int64_t>(1, gw));
}

// The rank-order default: ranks grow with the replica index, so a pointer
// walks the buildings.
void defaultBuildings(CellGrid& g, const std::vector<std::int64_t>& firstRank,
                      std::int64_t ppStride, std::int64_t dpStride) {
    const int lastBuilding = int(firstRank.size()) - 2;
    for (int s = 0; s < g.stages; ++s) {
        int b = 0;
        std::int16_t* row = &g.building[std::size_t(s) * g.columns];
        for (int c = 0; c < g.columns; ++c) {
            const std::int64_t rank = s * ppStride + std::int64_t(c) * g.group * dpStride;
            while (b < lastBuilding && rank >= firstRank[std::size_t(b) + 1])
                ++b;
            row[c] = std::int16_t(b);
        }
    }
}

// Explicit runs on top of the default, in order.
void applyRuns(const Cluster& cluster, const Plan& plan, const std::string& planFile,
               PlacementResult& r) {
    CellGrid& g = r.grid;
    if (!plan.placement)
        return;
    for (std::size_t i = 0; i < plan.placement->runs.size(); ++i) {
        const PlacementRun& run = plan.placement->runs[i];
        const int b = cluster.buildingIndex(run.building);
        const std::string path = "/placement/runs/" + std::to_string(i);
        if (b < 0) {
            r.problems.push_back(
                {planFile, path + "/building", "no building named '" + run.building + "'"});
            continue;
        }
        if (run.stage_first < 0 || run.stage_last >= g.stages || run.stage_first > run.stage_last ||
            run.replica_first < 0 || run.replica_last >= g.replicas ||
            run.replica_first > run.replica_last) {
            r.problems.push_back({planFile, path,
                                  "run outside the grid of " + std::to_string(g.stages) +
                                      " stages x " + std::to_string(g.replicas) + " replicas"});
            continue;
        }
        for (int s = run.stage_first; s <= run.stage_last; ++s)
            for (int c = run.replica_first / g.group; c <= run.replica_last / g.group; ++c)
                g.building[std::size_t(s) * g.columns + c] = std::int16_t(b);
    }
}

// Zones: cells take GPUs in each building in rank order. Per building a
// running offset and the next zone boundary (no division per cell). Returns
// the GPUs each building holds.
std::vector<std::int64_t> assignZones(const Cluster& cluster, CellGrid& g, bool ppInner) {
    const std::size_t nb = cluster.buildings.size();
    std::vector<std::int64_t> offset(nb, 0), zoneSize(nb), nextBoundary(nb);
    std::vector<std::int32_t> zoneNow(nb, 0), lastZone(nb);
    for (std::size_t b = 0; b < nb; ++b) {
        const auto& bld = cluster.buildings[b];
        zoneSize[b] = std::max<std::int64_t>(1, bld.zone_gpus > 0 ? bld.zone_gpus : bld.gpus);
        nextBoundary[b] = zoneSize[b];
        lastZone[b] = std::int32_t(std::max<std::int64_t>(1, bld.zones()) - 1);
    }
    // `at` only grows per building, so the walk reaches its zone:
    // min(last zone, at / zone size).
    auto zoneOf = [&](std::size_t b, std::int64_t at) {
        while (at >= nextBoundary[b]) {
            nextBoundary[b] += zoneSize[b];
            if (zoneNow[b] < lastZone[b])
                ++zoneNow[b];
        }
        return zoneNow[b];
    };
    if (ppInner) {
        // With PP inner, a replica's cells of all stages come before the
        // next replica's: a column advances each building by one cell per
        // replica per stage it holds, interleaved; the zone of the column is
        // that of its first replica.
        std::vector<std::int64_t> perReplica(nb, 0);
        for (int c = 0; c < g.columns; ++c) {
            std::fill(perReplica.begin(), perReplica.end(), 0);
            for (int s = 0; s < g.stages; ++s) {
                const std::size_t idx = std::size_t(s) * g.columns + c;
                const std::size_t b = std::size_t(g.building[idx]);
                g.zone[idx] = zoneOf(b, offset[b] + perReplica[b]);
                perReplica[b] += g.cell_gpus;
            }
            for (std::size_t b = 0; b < nb; ++b)
                offset[b] += perReplica[b] * g.group;
        }
    } else {
        const std::int64_t columnGpus = g.cell_gpus * g.group;
        for (std::size_t idx = 0; idx < g.building.size(); ++idx) {
            const std::size_t b = std::size_t(g.building[idx]);
            g.zone[idx] = zoneOf(b, offset[b]);
            offset[b] += columnGpus;
        }
    }
    return offset;
}

// A building asked for more GPUs than it has, named at the last run that
// puts cells there (or at the degrees).
void overfullProblems(const Cluster& cluster, const Plan& plan, const std::string& planFile,
                      PlacementResult& r) {
    for (std::size_t b = 0; b < cluster.buildings.size(); ++b) {
        if (r.gpus_used[b] <= cluster.buildings[b].gpus)
            continue;
        std::string path = "/parallelism";
        if (plan.placement) {
            for (std::size_t i = plan.placement->runs.size(); i-- > 0;)
                if (plan.placement->runs[i].building == cluster.buildings[b].name) {
                    path = "/placement/runs/" + std::to_string(i);
                    break;
                }
        }
        r.problems.push_back({planFile, path,
                              "building '" + cluster.buildings[b].name + "' would hold " +
                                  std::to_string(r.gpus_used[b]) + " GPUs but has " +
                                  std::to_string(cluster.buildings[b].gpus)});
    }
}

} // namespace

PlacementResult placeCells(const Cluster& cluster, const Plan& plan, const std::string& planFile) {
    PlacementResult r;
    CellGrid& g = r.grid;
    const Parallelism& par = plan.parallelism;
    g.stages = par.pp;
    g.replicas = par.dp;
    g.cell_gpus = std::int64_t(par.tp) * par.cp;
    r.gpus_used.assign(cluster.buildings.size(), 0);
    if (cluster.buildings.empty() || g.stages <= 0 || g.replicas <= 0) {
        g.columns = std::max(0, g.replicas);
        g.building.assign(std::size_t(std::max(0, g.stages)) * std::size_t(g.columns), 0);
        g.zone = std::vector<std::int32_t>(g.building.size(), 0);
        return r;
    }
    // Default: GPUs are numbered building by building; a cell lives where
    // the rank of its first GPU falls.
    const std::size_t nb = cluster.buildings.size();
    std::vector<std::int64_t> firstRank(nb + 1, 0);
    for (std::size_t b = 0; b < nb; ++b)
        firstRank[b + 1] = firstRank[b] + cluster.buildings[b].gpus;
    const std::int64_t ppStride = plan.rankStride(Dim::PP);
    const std::int64_t dpStride = plan.rankStride(Dim::DP);
    g.group = columnWidth(cluster, plan, g, firstRank, ppStride, dpStride);
    g.columns = g.replicas / g.group;
    const std::size_t cells = std::size_t(g.stages) * std::size_t(g.columns);
    g.building.assign(cells, 0);
    g.zone.assign(cells, 0);
    defaultBuildings(g, firstRank, ppStride, dpStride);
    applyRuns(cluster, plan, planFile, r);
    r.gpus_used = assignZones(cluster, g, ppStride < dpStride);
    overfullProblems(cluster, plan, planFile, r);
    return r;
}

std::vector<Dim> dimsAcrossBuildings(const CellGrid& grid) {
    bool pp = false, dp = false;
    for (int c = 0; c < grid.columns && !(pp && dp); ++c)
        for (int st = 1; st < grid.stages && !pp; ++st)
            pp = grid.building[std::size_t(st) * grid.columns + c] != grid.building[std::size_t(c)];
    for (int st = 0; st < grid.stages && !dp; ++st) {
        const std::size_t row = std::size_t(st) * grid.columns;
        for (int c = 1; c < grid.columns && !dp; ++c)
            dp = grid.building[row + c] != grid.building[row];
    }
    std::vector<Dim> out;
    if (pp)
        out.push_back(Dim::PP);
    if (dp)
        out.push_back(Dim::DP);
    return out;
}

std::vector<GroupChip> chipsOf(const CellGrid& grid) {
    // Per stage: runs of consecutive replicas in one building. Then merge
    // consecutive stages whose runs are identical.
    struct Run {
        int first, last, building;
        bool operator==(const Run&) const = default;
    };
    std::vector<std::vector<Run>> perStage(std::size_t(grid.stages));
    for (int s = 0; s < grid.stages; ++s) {
        auto& runs = perStage[std::size_t(s)];
        for (int d = 0; d < grid.replicas; ++d) {
            const int b = grid.at(s, d);
            if (!runs.empty() && runs.back().building == b && runs.back().last == d - 1)
                runs.back().last = d;
            else
                runs.push_back({d, d, b});
        }
    }
    std::vector<GroupChip> chips;
    int s = 0;
    while (s < grid.stages) {
        int e = s;
        while (e + 1 < grid.stages && perStage[std::size_t(e + 1)] == perStage[std::size_t(s)])
            ++e;
        for (const Run& r : perStage[std::size_t(s)]) {
            GroupChip c;
            c.stage_first = s;
            c.stage_last = e;
            c.replica_first = r.first;
            c.replica_last = r.last;
            c.building = r.building;
            c.gpus = std::int64_t(e - s + 1) * (r.last - r.first + 1) * grid.cell_gpus;
            chips.push_back(c);
        }
        s = e + 1;
    }
    return chips;
}

std::vector<ReplicaBlock> replicaBlocks(const CellGrid& grid) {
    std::vector<ReplicaBlock> blocks;
    for (int c = 0; c < grid.columns; ++c) {
        bool same = c > 0;
        for (int s = 0; s < grid.stages && same; ++s) {
            const std::size_t i = std::size_t(s) * grid.columns + c;
            same = grid.building[i] == grid.building[i - 1] && grid.zone[i] == grid.zone[i - 1];
        }
        if (same)
            blocks.back().count += grid.group;
        else
            blocks.push_back({c * grid.group, grid.group});
    }
    return blocks;
}

Plan withRun(const Plan& plan, const PlacementRun& run) {
    Plan p = plan;
    if (!p.placement)
        p.placement = Placement{};
    p.placement->runs.push_back(run);
    return p;
}

std::vector<int> layersPerStage(const Model& model, const Plan& plan) {
    const int pp = std::max(1, plan.parallelism.pp);
    if (plan.placement && int(plan.placement->layers_per_stage.size()) == pp)
        return plan.placement->layers_per_stage;
    std::vector<int> out(std::size_t(pp), model.layers / pp);
    for (int i = 0; i < model.layers % pp; ++i)
        ++out[std::size_t(i)];
    return out;
}

} // namespace sa

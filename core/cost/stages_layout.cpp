// Stages of the evaluation up to the chunk times: layout, transports, layer
// costs per building, the layers of every chunk, EP's all-to-all, and the
// per-(stage, chunk) durations.
#include "cost/network.h"
#include "cost/stages.h"
#include "topology/topology.h"

#include <algorithm>
#include <functional>

namespace sa {

namespace {

// Where each stage's DP x CP group sits (sites sorted by building, then
// zone): a cell's cp ranks sit with it. `blocks` are the group's replicas
// (runs of DP indices at one pair of locations), `members` its size.
GroupSpread dpSpread(const CellGrid& grid, const std::vector<ReplicaBlock>& blocks, int s,
                     int members, int cp) {
    GroupSpread g;
    g.members = members;
    for (const ReplicaBlock& blk : blocks) {
        const Location loc{grid.at(s, blk.first), grid.zoneAt(s, blk.first)};
        const int n = blk.count * cp;
        if (!g.sites.empty() && g.sites.back().loc == loc) {
            g.sites.back().members += n;
            continue;
        }
        auto it = std::find_if(g.sites.begin(), g.sites.end(),
                               [&](const GroupSpread::Site& x) { return x.loc == loc; });
        if (it != g.sites.end())
            it->members += n;
        else
            g.sites.push_back({loc, n});
    }
    std::sort(g.sites.begin(), g.sites.end(), [](const auto& a, const auto& b) {
        return a.loc.building != b.loc.building ? a.loc.building < b.loc.building
                                                : a.loc.zone < b.loc.zone;
    });
    int lastB = -1;
    for (const auto& site : g.sites)
        if (site.loc.building != lastB) {
            ++g.buildings;
            lastB = site.loc.building;
        }
    return g;
}

// HSDP's groups: sharding group k holds DP ranks [k F, (k + 1) F), replica
// group j the ranks j, j + F, j + 2F, ...: the replica blocks each takes.
std::vector<ReplicaBlock> shardBlocks(const std::vector<ReplicaBlock>& blocks, int k, int F) {
    std::vector<ReplicaBlock> out;
    const int lo = k * F, hi = lo + F;
    for (const ReplicaBlock& b : blocks) {
        const int first = std::max(b.first, lo), last = std::min(b.first + b.count, hi);
        if (first < last)
            out.push_back({first, last - first});
    }
    return out;
}
std::vector<ReplicaBlock> replicaBlocksOf(const std::vector<ReplicaBlock>& blocks, int j, int F) {
    std::vector<ReplicaBlock> out;
    for (const ReplicaBlock& b : blocks) {
        // Members j + i F inside [first, first + count).
        const int from = b.first <= j ? 0 : (b.first - j + F - 1) / F;
        const int to = (b.first + b.count - 1 - j) >= 0 ? (b.first + b.count - 1 - j) / F : -1;
        if (to >= from)
            out.push_back({j + from * F, to - from + 1});
    }
    return out;
}

// The groups `spread` produces for 0 .. count - 1, as their distinct spreads
// with how many groups sit at each; the first spans the most sites (then
// buildings).
std::vector<std::pair<GroupSpread, int>>
distinctSpreads(int count, const std::function<GroupSpread(int)>& spread) {
    std::vector<std::pair<GroupSpread, int>> out;
    for (int k = 0; k < count; ++k) {
        GroupSpread g = spread(k);
        auto it = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.first == g; });
        if (it != out.end())
            ++it->second;
        else
            out.emplace_back(std::move(g), 1);
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return a.first.sites.size() != b.first.sites.size()
                   ? a.first.sites.size() > b.first.sites.size()
                   : a.first.buildings > b.first.buildings;
    });
    return out;
}

// Members of one DP x CP group on one host: the group's ranks are
// c * stride(CP) + d * stride(DP) in the rank order, a host the first
// `hostGpus` of them.
int dpMembersPerHost(const std::vector<Dim>& order, const Parallelism& par, int hostGpus) {
    std::int64_t stride = 1, cpStride = 0, dpStride = 0;
    for (Dim d : order) {
        if (d == Dim::CP)
            cpStride = stride;
        if (d == Dim::DP)
            dpStride = stride;
        stride *= par.of(d);
    }
    std::int64_t n = 0;
    for (int c = 0; c < par.cp && c * cpStride < hostGpus; ++c) {
        const std::int64_t room = hostGpus - c * cpStride; // ranks d * dpStride < room
        n += dpStride > 0 ? std::min<std::int64_t>(par.dp, (room + dpStride - 1) / dpStride) : 1;
    }
    return int(std::max<std::int64_t>(1, n));
}

void stageHolders(const Cluster& cluster, int pp, Layout& out) {
    const CellGrid& grid = out.placed.grid;
    const std::size_t npp = std::size_t(pp), nb = cluster.buildings.size();
    out.stageCounts.assign(npp, boost::container::small_vector<int, 4>(nb, 0));
    out.stageBuildings.assign(npp, {});
    out.stageBuilding.assign(npp, 0);
    for (int s = 0; s < pp; ++s)
        for (const ReplicaBlock& blk : out.blocks)
            out.stageCounts[std::size_t(s)][std::size_t(grid.at(s, blk.first))] += blk.count;
    for (int s = 0; s < pp; ++s) {
        const auto& counts = out.stageCounts[std::size_t(s)];
        int best = 0;
        for (std::size_t b = 0; b < nb; ++b) {
            if (counts[b] == 0)
                continue;
            out.stageBuildings[std::size_t(s)].push_back(int(b));
            if (counts[b] > counts[std::size_t(best)])
                best = int(b);
        }
        out.stageBuilding[std::size_t(s)] = best;
    }
}

void dpGroups(const Cluster& cluster, const LayoutInput& in, Layout& out) {
    const Parallelism& par = in.parallelism;
    const std::size_t npp = std::size_t(par.pp);
    std::int64_t dpSpan = 1;
    for (Dim d : in.rank_order) {
        if (d == Dim::DP)
            break;
        dpSpan *= par.of(d);
    }
    int minHost = 1 << 30;
    for (const auto& b : cluster.buildings)
        minHost = std::min(minHost, b.gpus_per_host);
    // HSDP: ZeRO's group is F consecutive DP ranks, R = dp / F of them.
    const int F = in.dp_shard > 0 ? in.dp_shard : par.dp;
    const int R = par.dp / F;
    Parallelism shardPar = par;
    shardPar.dp = F;
    const int perHost = dpMembersPerHost(in.rank_order, shardPar, minHost);
    const CellGrid& grid = out.placed.grid;
    // Hosts and NICs: a site (a zone of a building) holding fewer members
    // than a host would is where the ring runs through the fewest NICs.
    const auto finish = [&](GroupSpread& g, std::int64_t span, int members, int onHost) {
        g.single_host = in.runs.empty() && span * (members - 1) + grid.cell_gpus <= minHost;
        g.per_host = onHost;
        for (const GroupSpread::Site& site : g.sites)
            g.per_host = std::max(1, std::min(g.per_host, site.members));
    };
    out.spreads.assign(npp, {});
    out.otherShards.assign(npp, {});
    out.dpGroups = double(par.tp);
    for (int s = 0; s < par.pp; ++s) {
        GroupSpread& g = out.spreads[std::size_t(s)];
        if (R == 1) {
            g = dpSpread(grid, out.blocks, s, par.dp * par.cp, par.cp);
            finish(g, dpSpan, F, perHost);
            continue;
        }
        auto groups = distinctSpreads(R, [&](int k) {
            GroupSpread x = dpSpread(grid, shardBlocks(out.blocks, k, F), s, F * par.cp, par.cp);
            finish(x, dpSpan, F, perHost);
            return x;
        });
        g = groups.front().first;
        out.dpGroups = double(par.tp) * groups.front().second;
        for (std::size_t k = 1; k < groups.size(); ++k)
            out.otherShards[std::size_t(s)].emplace_back(std::move(groups[k].first),
                                                         double(par.tp) * groups[k].second);
    }
    out.replicaSpreads.clear();
    out.otherReplicas.clear();
    out.replicaGroups = 1;
    if (R > 1) {
        // A replica group's members are F * dpSpan ranks apart, one CP rank:
        // as many share a host as fit in one at that stride.
        const std::int64_t stride = std::int64_t(F) * dpSpan;
        const int replicaPerHost =
            int(std::clamp<std::int64_t>((minHost + stride - 1) / stride, 1, R));
        out.replicaSpreads.assign(npp, {});
        out.otherReplicas.assign(npp, {});
        for (int s = 0; s < par.pp; ++s) {
            auto groups = distinctSpreads(F, [&](int j) {
                GroupSpread x = dpSpread(grid, replicaBlocksOf(out.blocks, j, F), s, R, 1);
                finish(x, stride, R, replicaPerHost);
                return x;
            });
            out.replicaSpreads[std::size_t(s)] = groups.front().first;
            out.replicaGroups = double(par.tp) * par.cp * groups.front().second;
            for (std::size_t k = 1; k < groups.size(); ++k)
                out.otherReplicas[std::size_t(s)].emplace_back(
                    std::move(groups[k].first), double(par.tp) * par.cp * groups[k].second);
        }
    }
    out.spreadClass.assign(npp, 0);
    for (int s = 0; s < par.pp; ++s) {
        int c = s;
        for (int t = 0; t < s; ++t)
            if (out.spreadClass[std::size_t(t)] == t &&
                out.spreads[std::size_t(t)] == out.spreads[std::size_t(s)]) {
                c = t;
                break;
            }
        out.spreadClass[std::size_t(s)] = c;
    }
}

// Pipeline boundaries: stage s sends to stage (s + 1) % pp.
void boundaries(int pp, Layout& out) {
    const CellGrid& grid = out.placed.grid;
    out.boundary.assign(std::size_t(pp), {});
    for (int from = 0; from < pp; ++from) {
        const int to = (from + 1) % pp;
        auto& runs = out.boundary[std::size_t(from)];
        for (const ReplicaBlock& blk : out.blocks) {
            const Location a{grid.at(from, blk.first), grid.zoneAt(from, blk.first)};
            const Location b{grid.at(to, blk.first), grid.zoneAt(to, blk.first)};
            if (!runs.empty() && runs.back().a == a && runs.back().b == b)
                runs.back().count += blk.count;
            else
                runs.push_back({a, b, blk.count});
        }
    }
}

// NVLink bus bandwidth reaches ~80% of peak (the nvlink profile's efficiency).
double nvlinkEfficiency() {
    static const double e = builtinTechnology("nvlink")->efficiency;
    return e;
}

} // namespace

double nicBytesPerSecond(const Building& b) {
    return gbpsToBytesPerS(b.scale_out_gbps) *
           b.scale_out_efficiency.value_or(fabricTechnology().efficiency);
}

double nvlinkBytesPerSecond(const Building& b) {
    return gbpsToBytesPerS(b.scale_up_gbps) * b.scale_up_efficiency.value_or(nvlinkEfficiency());
}

double collectiveAlpha() {
    return fabricTechnology().per_message_us * 1e-6 + KernelConstants{}.kernel_overhead_s;
}

void buildLayout(const ClusterContext& ctx, const LayoutInput& in, Layout& out) {
    const Cluster& cluster = *ctx.cluster;
    Plan plan;
    plan.parallelism = in.parallelism;
    plan.rank_order = in.rank_order;
    if (!in.runs.empty())
        plan.placement = Placement{in.runs, {}};
    out.placed = placeCells(cluster, plan, in.plan_file);
    if (!out.placed.ok())
        return;
    const int pp = in.parallelism.pp;
    out.blocks = replicaBlocks(out.placed.grid);
    stageHolders(cluster, pp, out);
    dpGroups(cluster, in, out);
    boundaries(pp, out);
    out.stageEnv.assign(std::size_t(pp), {});
    for (int s = 0; s < pp; ++s) {
        CollectiveEnv& e = out.stageEnv[std::size_t(s)];
        e.alpha_s = collectiveAlpha();
        double nic = 1e300, nvl = 1e300;
        for (int b : out.stageBuildings[std::size_t(s)]) {
            nic = std::min(nic, nicBytesPerSecond(cluster.buildings[std::size_t(b)]));
            nvl = std::min(nvl, nvlinkBytesPerSecond(cluster.buildings[std::size_t(b)]));
        }
        e.nic_bps = nic;
        e.nvlink_bps = nvl;
        // Calibrated step latencies: the slowest of the stage's buildings
        // (a building without one counts with the built-in step).
        for (int b : out.stageBuildings[std::size_t(s)]) {
            const Building& bd = cluster.buildings[std::size_t(b)];
            if (bd.scale_up_latency_us)
                e.nvlink_step_s =
                    std::max(e.nvlink_step_s.value_or(0.0), *bd.scale_up_latency_us * 1e-6);
            if (bd.scale_out_latency_us)
                e.local_step_s =
                    std::max(e.local_step_s.value_or(0.0), *bd.scale_out_latency_us * 1e-6);
        }
        for (int b : out.stageBuildings[std::size_t(s)]) {
            const Building& bd = cluster.buildings[std::size_t(b)];
            if (e.nvlink_step_s && !bd.scale_up_latency_us)
                e.nvlink_step_s = std::max(*e.nvlink_step_s, e.alpha_s + kNvlinkHopLatency);
            if (e.local_step_s && !bd.scale_out_latency_us)
                e.local_step_s = std::max(*e.local_step_s, e.alpha_s + kLocalHopLatency);
        }
    }
}

void buildTransports(const ClusterContext& ctx, const TransportInput& in, Transports& out) {
    out = edgeTransports(*ctx.cluster, *ctx.topology, in.overrides);
    if (!in.background_gbps.empty())
        setBackground(*ctx.cluster, *ctx.topology, in.background_gbps, out);
}

void buildingCosts(const ClusterContext& ctx, const BuildingCostInput& in, BuildingCosts& out) {
    const Cluster& cluster = *ctx.cluster;
    const Plan plan = planOf(in.plan);
    LayerContext lc =
        layerContext(cluster, cluster.buildings[std::size_t(in.building)], in.model, plan);
    out = BuildingCosts{};
    out.gpu = lc.gpu;
    if (lc.gpu)
        out.hbm_bytes_per_s = hbmBytesPerS(*lc.gpu, lc.kc);
    out.dense = layerCost(lc);
    if (in.model.moe) {
        lc.moe_layer = true;
        out.moe = layerCost(lc);
        lc.moe_layer = false;
    }
    if (in.plan.block_recompute) {
        Plan kept = plan;
        kept.recompute = Recompute::None;
        LayerContext lk =
            layerContext(cluster, cluster.buildings[std::size_t(in.building)], in.model, kept);
        out.dense_kept = layerCost(lk);
        if (in.model.moe) {
            lk.moe_layer = true;
            out.moe_kept = layerCost(lk);
        }
    }
    out.embedding = embeddingCost(lc);
    out.logits = logitsCost(lc);
    if (in.model.mtp_layers > 0)
        out.mtp = mtpCost(lc);
}

void chunkLayers(const Model& model, const std::vector<int>& stageLayers, int pp, int v,
                 ChunkLayers& out) {
    const int nV = pp * v;
    out.layers.assign(std::size_t(nV), 0);
    out.moe.assign(std::size_t(nV), 0);
    out.first.assign(std::size_t(nV), 0);
    int next = 0;
    for (int vs = 0; vs < nV; ++vs) {
        const int s = vs % pp, c = vs / pp;
        const int layers = stageLayers[std::size_t(s)];
        const int n = layers / v + (c < layers % v ? 1 : 0);
        out.layers[std::size_t(vs)] = n;
        out.first[std::size_t(vs)] = next;
        out.moe[std::size_t(vs)] = model.moeLayersIn(next, n);
        next += n;
    }
}

void epExchange(const ClusterContext& ctx, const EpExchangeInput& in, EpExchange& out) {
    const Layout& layout = *in.layout;
    const CellGrid& grid = layout.placed.grid;
    const int pp = grid.stages, dp = grid.replicas, ep = in.ep;
    const double cellGpus = double(grid.cell_gpus);
    if (!out.phase || out.transportVersion != in.transportVersion) {
        out.phase.emplace(*ctx.topology, *in.transports);
        out.transportVersion = in.transportVersion;
    }
    out.phase->clear();
    out.cross_s.assign(std::size_t(pp), 0.0);
    // A group spans `span` replicas; a GPU has `peers` members of its group
    // in each other cell of it (one, or the cell's folded expert ranks).
    const int peers = std::max(1, in.ep_in_cell);
    const int span = ep > peers ? ep / peers : 1;
    if (!in.moe || ep <= 1 || span <= 1)
        return;
    for (int s = 0; s < pp; ++s) {
        TrafficPhase stagePhase(*ctx.topology, *in.transports);
        double worstLat = 0;
        bool crosses = false;
        for (int g0 = 0; g0 < dp; g0 += span)
            for (int i = g0; i < g0 + span && i < dp; ++i)
                for (int j = g0; j < g0 + span && j < dp; ++j) {
                    if (i == j)
                        continue;
                    const Location a{grid.at(s, i), grid.zoneAt(s, i)};
                    const Location b{grid.at(s, j), grid.zoneAt(s, j)};
                    if (a == b)
                        continue;
                    crosses = true;
                    const double perGpu =
                        (*in.costs)[std::size_t(a.building)].moe.ep_bytes_per_remote_peer;
                    stagePhase.add(a, b, cellGpus * perGpu * peers, cellGpus);
                    out.phase->add(a, b, cellGpus * perGpu * peers, cellGpus);
                    worstLat = std::max(worstLat, stagePhase.routeLatency(a, b));
                }
        if (crosses)
            out.cross_s[std::size_t(s)] = stagePhase.drainTime() + worstLat;
    }
}

double sumChunks(const std::vector<ChunkTimes>& v, double ChunkTimes::*field) {
    double s = 0;
    for (const auto& c : v)
        s += c.*field;
    return s;
}

namespace {

// Adds n layers of cost L to a chunk's times on one building.
void addLayers(ChunkTimes& t, const LayerCost& L, int n, double epCross, Recompute recompute,
               bool zeroBubble, double epOverlap, const ChunkTimesInput::WeightCasts& casts) {
    if (n <= 0)
        return;
    // The weights' FP8 casts as the step pays them (ChunkTimesInput).
    const double fwdS = L.fwd_s - (1.0 - casts.fwd) * L.fwd_weight_cast_s;
    const double bwdInputS = L.bwd_input_s - (1.0 - casts.bwd) * L.bwd_weight_cast_s;
    const double recomputeS = L.recompute_s - (1.0 - casts.recompute) * L.recompute_weight_cast_s;
    double epF = L.ep_fwd_s, epB = L.ep_bwd_s;
    if (epCross > 0 && L.ep_bytes > 0) {
        epF = std::max(epF, 2.0 * epCross);
        epB = std::max(epB, 2.0 * epCross);
    }
    if (epOverlap > 0 && epF + epB > 0) {
        // Combined 1F1B (Megatron-Core combined_1f1b.py, the layer split in
        // attention, dispatch, experts and combine, as DeepSeek-V3's
        // DualPipe pairs them): one microbatch's forward beside another's
        // backward, each communication beside the other's compute in turn:
        // forward attention with the backward combine, the forward dispatch
        // with the backward experts, the forward experts with the backward
        // dispatch, the forward combine with the backward attention; the
        // all-to-all holds its SMs meanwhile. What shows is the pair's time
        // beyond its compute. Each pass is charged the time of its own
        // computations with the other's all-to-alls beside them, so that
        // its time grows with its own compute only (the pair's is the same
        // either way; shared in proportion to traffic, a forward grew as
        // the backward's compute shrank, and faster GPUs could lengthen a
        // pipeline's warm-up of forwards). The computations are the GPU's
        // time; a pass the host paces takes at least the host's.
        const double bwdS = bwdInputS + L.bwd_weight_s;
        const double gpuF = std::min(L.gpu_fwd_s, fwdS), gpuB = std::min(L.gpu_bwd_s, bwdS);
        const double moeF = std::min(L.moe_mlp_fwd_s, gpuF);
        const double moeB = std::min(L.moe_mlp_bwd_s, gpuB);
        const double a2aF = 0.5 * epF, a2aB = 0.5 * epB; // dispatch and combine each
        // The all-to-all's kernels hold their SMs (LayerCost::ep_sm_share,
        // set wherever a layer has an EP exchange).
        const double share = L.ep_sm_share;
        // A pass's own TP and CP exchanges hold its stream beside the
        // other's all-to-all as its computations do (not the all-to-all's
        // SMs): forward the attention's (CP's and TP's but the experts'
        // half) and the experts' TP half, backward all with the attention.
        const auto beside = [share](double compute, double comm, double own) {
            return std::max(slowedCompute(compute, comm, share) + own, comm);
        };
        const double tpMlpF = std::min(L.tp_mlp_fwd_s, L.tp_fwd_s);
        const double fwdPair = beside(gpuF - moeF, a2aB, L.tp_fwd_s - tpMlpF + L.cp_fwd_s) +
                               beside(moeF, a2aB, tpMlpF);
        const double bwdPair =
            beside(moeB, a2aF, 0.0) + beside(gpuB - moeB, a2aF, L.tp_bwd_s + L.cp_bwd_s);
        const double ownF = fwdS + L.tp_fwd_s + L.cp_fwd_s;
        const double ownB = bwdS + L.tp_bwd_s + L.cp_bwd_s;
        const double aloneF = epF, aloneB = epB;
        epF = (1.0 - epOverlap) * aloneF + epOverlap * (std::max(fwdPair, ownF) - ownF);
        epB = (1.0 - epOverlap) * aloneB + epOverlap * (std::max(bwdPair, ownB) - ownB);
    }
    const double recompTp = L.tp_recompute_s;
    const double recompCp = L.cp_recompute_s;
    const double recompEp = recompute == Recompute::Full || L.ep_recomputed ? epF : 0.0;
    t.fwd += n * (fwdS + L.tp_fwd_s + L.cp_fwd_s + epF);
    const double bIn =
        bwdInputS + recomputeS + L.tp_bwd_s + L.cp_bwd_s + epB + recompTp + recompCp + recompEp;
    if (zeroBubble) {
        t.bwd += n * bIn;
        t.wgrad += n * L.bwd_weight_s;
    } else {
        t.bwd += n * (bIn + L.bwd_weight_s);
    }
    t.compute += n * (fwdS + bwdInputS + L.bwd_weight_s + recomputeS);
    t.tp += n * (L.tp_fwd_s + L.tp_bwd_s + recompTp);
    t.cp += n * (L.cp_fwd_s + L.cp_bwd_s + recompCp);
    t.ep += n * (epF + epB + recompEp);
    t.params += n * L.params;
    t.expert_params += n * L.expert_params;
    t.activation += n * L.activation_bytes;
    t.wgrad_held += n * L.wgrad_held_bytes;
    t.transient = std::max(t.transient, L.transient_bytes);
    t.fp8_copy_params += n * L.fp8_copy_params;
    t.fp8_linear_params += n * L.fp8_linear_params;
}

// One chunk's layers on one building under the plan's recompute. Full
// recompute selects its layers as Megatron-Core's checkpointed forward of a
// TransformerBlock does (megatron/core/recompute.py; one block per model
// chunk, so per virtual stage under interleaving):
//   block N:   the first N layers of the chunk are recomputed, each keeping
//              only its input; the others run as without recompute;
//   uniform N: the layers in groups of N, each group's input checkpointed,
//              every layer recomputed: ceil(n / N) inputs kept, and while a
//              group is backpropagated its N layers are re-materialised.
void addChunkLayers(ChunkTimes& t, const BuildingCosts& k, const ChunkTimesInput& in, int vs,
                    double epCross) {
    const int n = in.chunks->layers[std::size_t(vs)];
    const int nMoe = in.chunks->moe[std::size_t(vs)];
    const int nDense = n - nMoe;
    const double epOverlap = in.ep_overlap_steady;
    const ChunkTimesInput::WeightCasts& casts = in.weight_casts;
    if (in.recompute != Recompute::Full || n <= 0 ||
        (in.recompute_method == RecomputeMethod::Uniform && in.recompute_layers <= 1)) {
        addLayers(t, k.dense, nDense, epCross, in.recompute, in.zero_bubble, epOverlap, casts);
        addLayers(t, k.moe, nMoe, epCross, in.recompute, in.zero_bubble, epOverlap, casts);
        return;
    }
    if (in.recompute_method == RecomputeMethod::Block) {
        const int redo = std::min(n, in.recompute_layers);
        const int redoMoe =
            in.model ? in.model->moeLayersIn(in.chunks->first[std::size_t(vs)], redo) : 0;
        const int redoDense = redo - redoMoe;
        addLayers(t, k.dense, redoDense, epCross, Recompute::Full, in.zero_bubble, epOverlap,
                  casts);
        addLayers(t, k.moe, redoMoe, epCross, Recompute::Full, in.zero_bubble, epOverlap, casts);
        addLayers(t, k.dense_kept, nDense - redoDense, epCross, Recompute::None, in.zero_bubble,
                  epOverlap, casts);
        addLayers(t, k.moe_kept, nMoe - redoMoe, epCross, Recompute::None, in.zero_bubble,
                  epOverlap, casts);
        return;
    }
    // Uniform groups of N > 1: times as every layer recomputed; memory as
    // one checkpointed input per group, plus a whole group re-materialised.
    addLayers(t, k.dense, nDense, epCross, in.recompute, in.zero_bubble, epOverlap, casts);
    addLayers(t, k.moe, nMoe, epCross, in.recompute, in.zero_bubble, epOverlap, casts);
    const int group = std::min(n, in.recompute_layers);
    const int groups = (n + group - 1) / group;
    const LayerCost& one = nDense > 0 ? k.dense : k.moe;
    t.activation += groups * one.activation_bytes - double(nDense) * k.dense.activation_bytes -
                    double(nMoe) * k.moe.activation_bytes;
    t.transient =
        std::max(k.dense.transient_bytes, nMoe > 0 ? k.moe.transient_bytes : 0.0) * double(group);
}

// The multi-token-prediction modules after the last layer (Model::
// mtp_layers), on the last virtual stage with the output layer, as
// Megatron-Core places them (GPTModel builds them where post_process is
// set): each its own work (mtpCost), a block of the last layer's kind
// under the plan's recompute, and one more pass through the output layer
// and loss. With a pipeline the stage also holds its own copy of an untied
// embedding table, which the modules look up (GPTModel builds the
// embedding where mtp_process is set); its gradients are all-reduced with
// the first stage's copy once a step (embeddingSyncBytes).
// An edge of the model (the embedding, the output layer and loss, an MTP
// module's own work) run `times` times a microbatch: its time and its TP
// exchanges.
void addEdgeTime(ChunkTimes& t, const EdgeCost& e, double times = 1) {
    t.fwd += times * (e.fwd_s + e.tp_fwd_s);
    t.bwd += times * (e.bwd_s + e.tp_bwd_s);
    t.compute += times * (e.fwd_s + e.bwd_s);
    t.tp += times * (e.tp_fwd_s + e.tp_bwd_s);
}

void addMtp(ChunkTimes& t, const BuildingCosts& k, const ChunkTimesInput& in, double epCross) {
    const int n = in.model ? in.model->mtp_layers : 0;
    if (n <= 0)
        return;
    const bool moe = in.model->lastLayerIsMoe();
    addLayers(t, moe ? k.moe : k.dense, n, epCross, in.recompute, in.zero_bubble,
              in.ep_overlap_steady, in.weight_casts);
    addEdgeTime(t, k.mtp, n);
    addEdgeTime(t, k.logits, n);
    t.params += n * k.mtp.params;
    if (in.pp > 1 && !in.model->tied_embeddings)
        t.params += k.embedding.params;
    t.activation += n * (k.mtp.activation_bytes + k.logits.activation_bytes);
}

} // namespace

void chunkTimes(const ChunkTimesInput& in, ChunkTable& out) {
    const int pp = in.pp, v = in.v, nV = pp * v;
    out.resize(std::size_t(pp));
    for (auto& row : out)
        row.assign(std::size_t(v), ChunkTimes{});
    for (int vs = 0; vs < nV; ++vs) {
        const int s = vs % pp, c = vs / pp;
        const double epCross = (*in.ep_cross_s)[std::size_t(s)];
        ChunkTimes best;
        double bestTotal = -1;
        for (int b : in.layout->stageBuildings[std::size_t(s)]) {
            const BuildingCosts& k = (*in.costs)[std::size_t(b)];
            ChunkTimes t;
            addChunkLayers(t, k, in, vs, epCross);
            if (vs == 0) {
                addEdgeTime(t, k.embedding); // its backward exchanges nothing
                t.params += k.embedding.params;
                t.activation += k.embedding.activation_bytes;
            }
            if (vs == nV - 1) {
                addEdgeTime(t, k.logits);
                t.params += k.logits.params;
                // Tied embeddings under PP: the last stage holds its own copy
                // of the table for the output layer (Megatron-Core's
                // shared_embedding_or_output_weight, DeepSpeed's
                // TiedLayerSpec), with its gradients and optimizer state.
                if (pp > 1 && in.model->tied_embeddings)
                    t.params += k.embedding.params;
                t.activation += k.logits.activation_bytes;
                t.transient = std::max(t.transient, k.logits.transient_bytes);
                addMtp(t, k, in, epCross);
            }
            // Each microbatch's gradients added to the accumulated ones, a
            // pass over the chunk's parameters after its weight gradients.
            if (in.grad_accumulation_bytes > 0 && k.hbm_bytes_per_s > 0) {
                const double add = t.params * in.grad_accumulation_bytes / k.hbm_bytes_per_s;
                (in.zero_bubble ? t.wgrad : t.bwd) += add;
                t.compute += add;
            }
            // FSDP's copies: the gathered weights copied out to the
            // parameters before the forward (and the backward, gathered
            // again), the gradients into the reduce-scatter's input after it.
            if (in.fsdp_copies.any() && k.hbm_bytes_per_s > 0) {
                const ChunkTimesInput::FsdpCopies& f = in.fsdp_copies;
                const double fwd =
                    (t.params * f.fwd + t.fp8_linear_params * f.fwd_fp8) / k.hbm_bytes_per_s;
                const double bwd =
                    (t.params * f.bwd + t.fp8_linear_params * f.bwd_fp8) / k.hbm_bytes_per_s;
                t.fwd += fwd;
                (in.zero_bubble ? t.wgrad : t.bwd) += bwd;
                t.compute += fwd + bwd;
            }
            const double total = t.fwd + t.bwd + t.wgrad;
            if (total > bestTotal) {
                bestTotal = total;
                best = t;
            }
        }
        out[std::size_t(s)][std::size_t(c)] = best;
    }
}

} // namespace sa

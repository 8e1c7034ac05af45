#include "cost/evaluate.h"

#include "cost/collectives.h"
#include "cost/compute.h"
#include "cost/network.h"
#include "cost/placement.h"
#include "cost/schedule.h"
#include "cost/traffic.h"
#include "formats/documents.h"
#include "topology/topology.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

namespace sa {

const char* toString(OpKind k) {
    switch (k) {
    case OpKind::Forward:
        return "forward";
    case OpKind::Backward:
        return "backward";
    case OpKind::WeightGrad:
        return "weight-grad";
    case OpKind::Recompute:
        return "recompute";
    case OpKind::SendForward:
        return "send-forward";
    case OpKind::SendBackward:
        return "send-backward";
    case OpKind::DpSync:
        return "dp-sync";
    case OpKind::Optimizer:
        return "optimizer";
    }
    return "?";
}

const char* toString(LinkTier t) {
    switch (t) {
    case LinkTier::InterBuilding:
        return "inter-building";
    case LinkTier::BuildingUplink:
        return "building-uplink";
    case LinkTier::ZoneUplink:
        return "zone-uplink";
    }
    return "?";
}

std::string EvaluationError::str() const {
    std::string s;
    for (const auto& p : problems) {
        if (!s.empty())
            s += '\n';
        s += p.str();
    }
    return s;
}

Evaluator::Evaluator(const Cluster& cluster)
    : cluster_(cluster)
    , topology_(std::make_unique<Topology>(cluster_)) {
    // Not the address: a new Evaluator may be made where an old one was.
    static std::atomic<std::uint64_t> next{1};
    id_ = next.fetch_add(1, std::memory_order_relaxed);
}

Evaluator::~Evaluator() = default;

EvaluationResult evaluate(const Scenario& scenario, const EvaluateOptions& options) {
    Evaluator e(scenario.cluster);
    return e.evaluate(scenario.model, scenario.plan, options);
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// CUDA context, NCCL channel buffers and cuBLAS/cuDNN workspaces: ~1.5 GiB
// per GPU (PyTorch + NCCL defaults), plus ~5% allocator fragmentation.
constexpr double kRuntimeOverheadGiB = 1.5;
constexpr double kFragmentation = 1.05;
// Mixed-precision Adam (Rajbhandari et al. 2020, ZeRO Sec. 3): bf16 weights
// (2 B), fp32 gradients (4 B, Megatron's main_grad), fp32 master weights,
// momentum and variance (12 B).
constexpr double kWeightBytes = 2.0;
constexpr double kGradBytes = 4.0;
constexpr double kOptimizerStateBytes = 12.0;
// The optimizer step streams master weights, m, v (read + write), the
// gradient and the new bf16 weights: ~30 bytes per parameter.
constexpr double kOptimizerStepBytes = 30.0;

struct BuildingCosts {
    bool used = false;
    const GpuModel* gpu = nullptr;
    LayerCost dense, moe;
    EdgeCost embedding, logits;
    double nic_bps = 0, nvlink_bps = 0;
};

struct ChunkTimes {
    double fwd = 0, bwd = 0, wgrad = 0;         // as scheduled
    double compute = 0, tp = 0, cp = 0, ep = 0; // per microbatch, fwd+bwd parts
    double params = 0, expert_params = 0;
    double activation = 0, transient = 0;
};

double sumChunks(const std::vector<ChunkTimes>& v, double ChunkTimes::*f) {
    double s = 0;
    for (const auto& c : v)
        s += c.*f;
    return s;
}

// Runs of replicas whose cells sit at the same pair of locations on the two
// sides of a pipeline boundary.
struct PairRun {
    Location a, b;
    int count;
};

// The last few results of a step of the evaluation, by input: plans met in
// a row often alternate between a few inputs (the optimizer walks ZeRO and
// layer splits innermost). Round-robin replacement.
template <class Entry, std::size_t N = 4> class RecentMemo {
public:
    template <class Same> Entry* find(Same&& same) {
        for (Entry& e : entries_)
            if (e.valid && same(e))
                return &e;
        return nullptr;
    }
    // An entry to overwrite (marked invalid until the caller fills it).
    Entry& slot() {
        Entry& e = entries_[next_];
        next_ = (next_ + 1) % N;
        e.valid = false;
        return e;
    }
    void clear() {
        for (Entry& e : entries_)
            e.valid = false;
    }

private:
    std::array<Entry, N> entries_{};
    std::size_t next_ = 0;
};

// loadCollective with CollectiveAlgo::Auto tries every algorithm on the group
// alone; the choice depends only on the group's spread, the collective, its
// size and the environment. Stages with the same spread and size take the
// choice made for the first of them.
class AlgoMemo {
public:
    CollectiveCost load(TrafficPhase& phase, const GroupSpread& g, int spreadClass,
                        CollectiveKind kind, CollectiveAlgo algo, double bytes, double groups,
                        const CollectiveEnv& env) {
        if (algo != CollectiveAlgo::Auto)
            return loadCollective(phase, g, kind, algo, bytes, groups, env);
        for (const Choice& c : choices_)
            if (c.spreadClass == spreadClass && c.kind == kind && c.bytes == bytes &&
                c.groups == groups && c.env.nic_bps == env.nic_bps &&
                c.env.nvlink_bps == env.nvlink_bps && c.env.alpha_s == env.alpha_s)
                return loadCollective(phase, g, kind, c.algo, bytes, groups, env);
        const CollectiveCost cost = loadCollective(phase, g, kind, algo, bytes, groups, env);
        choices_.push_back({spreadClass, kind, bytes, groups, env, cost.algo});
        return cost;
    }

private:
    struct Choice {
        int spreadClass;
        CollectiveKind kind;
        double bytes, groups;
        CollectiveEnv env;
        CollectiveAlgo algo;
    };
    std::vector<Choice> choices_;
};

} // namespace

// Everything that depends only on the cluster and the plan's degrees, rank
// order and placement runs: the cell grid and what is derived from it.
struct Layout {
    PlacementResult placed;
    std::vector<ReplicaBlock> blocks;
    std::vector<std::vector<int>> stageCounts;    // [stage][building]: replicas
    std::vector<std::vector<int>> stageBuildings; // [stage]: buildings holding it
    std::vector<int> stageBuilding;               // [stage]: the building holding most of it
    std::vector<GroupSpread> spreads;             // [stage]: its DP group
    std::vector<int> spreadClass;                 // [stage]: first stage with the same group spread
    std::vector<std::vector<PairRun>> boundary;   // [stage s]: pairs s -> (s + 1) % pp
};

namespace {

bool sameLayoutKey(const Plan& a, const Plan& b) {
    const Parallelism &x = a.parallelism, &y = b.parallelism;
    if (x.tp != y.tp || x.cp != y.cp || x.pp != y.pp || x.dp != y.dp ||
        a.rank_order != b.rank_order)
        return false;
    const bool ra = a.placement && !a.placement->runs.empty();
    const bool rb = b.placement && !b.placement->runs.empty();
    return ra == rb && (!ra || a.placement->runs == b.placement->runs);
}

void buildLayout(Layout& L, const Cluster& cluster, const Plan& plan, const std::string& planFile) {
    L.placed = placeCells(cluster, plan, planFile);
    if (!L.placed.ok())
        return;
    const CellGrid& grid = L.placed.grid;
    const Parallelism& par = plan.parallelism;
    const int pp = par.pp, dp = par.dp;
    const std::size_t npp = std::size_t(pp), nb = cluster.buildings.size();
    L.blocks = replicaBlocks(grid);
    L.stageCounts.assign(npp, std::vector<int>(nb, 0));
    L.stageBuildings.assign(npp, {});
    L.stageBuilding.assign(npp, 0);
    for (int s = 0; s < pp; ++s)
        for (const ReplicaBlock& blk : L.blocks)
            L.stageCounts[std::size_t(s)][std::size_t(grid.at(s, blk.first))] += blk.count;
    for (int s = 0; s < pp; ++s) {
        const auto& counts = L.stageCounts[std::size_t(s)];
        int best = 0;
        for (std::size_t b = 0; b < nb; ++b) {
            if (counts[b] == 0)
                continue;
            L.stageBuildings[std::size_t(s)].push_back(int(b));
            if (counts[b] > counts[std::size_t(best)])
                best = int(b);
        }
        L.stageBuilding[std::size_t(s)] = best;
    }

    // The DP group of each stage: where its members sit.
    L.spreads.assign(npp, {});
    std::int64_t dpSpan = 1;
    for (Dim d : plan.rank_order) {
        if (d == Dim::DP)
            break;
        dpSpan *= par.of(d);
    }
    int minHost = 1 << 30;
    for (const auto& b : cluster.buildings)
        minHost = std::min(minHost, b.gpus_per_host);
    const bool explicitRuns = plan.placement && !plan.placement->runs.empty();
    for (int s = 0; s < pp; ++s) {
        GroupSpread& g = L.spreads[std::size_t(s)];
        g.members = dp;
        for (const ReplicaBlock& blk : L.blocks) {
            const Location loc{grid.at(s, blk.first), grid.zoneAt(s, blk.first)};
            if (!g.sites.empty() && g.sites.back().loc == loc) {
                g.sites.back().members += blk.count;
                continue;
            }
            auto it = std::find_if(g.sites.begin(), g.sites.end(),
                                   [&](const GroupSpread::Site& x) { return x.loc == loc; });
            if (it != g.sites.end())
                it->members += blk.count;
            else
                g.sites.push_back({loc, blk.count});
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
        g.single_host = !explicitRuns && dpSpan * (dp - 1) + grid.cell_gpus <= minHost;
    }

    L.spreadClass.assign(npp, 0);
    for (int s = 0; s < pp; ++s) {
        int c = s;
        for (int t = 0; t < s; ++t)
            if (L.spreadClass[std::size_t(t)] == t &&
                L.spreads[std::size_t(t)] == L.spreads[std::size_t(s)]) {
                c = t;
                break;
            }
        L.spreadClass[std::size_t(s)] = c;
    }

    // Pipeline boundaries: stage s sends to stage (s + 1) % pp.
    L.boundary.assign(npp, {});
    for (int sa = 0; sa < pp; ++sa) {
        const int sb = (sa + 1) % pp;
        auto& runs = L.boundary[std::size_t(sa)];
        for (const ReplicaBlock& blk : L.blocks) {
            const Location a{grid.at(sa, blk.first), grid.zoneAt(sa, blk.first)};
            const Location b{grid.at(sb, blk.first), grid.zoneAt(sb, blk.first)};
            if (!runs.empty() && runs.back().a == a && runs.back().b == b)
                runs.back().count += blk.count;
            else
                runs.push_back({a, b, blk.count});
        }
    }
}

} // namespace

struct EvaluationCache::State {
    std::uint64_t owner = 0; // the Evaluator's id (0: none yet)
    bool valid = false;
    Plan key; // degrees, rank order and placement of the cached layout
    Layout layout;
    std::uint64_t layoutGen = 0; // bumped whenever the layout is rebuilt
    // Inter-building transports for the link overrides in linkKey.
    bool transportValid = false;
    std::map<std::string, LinkOverride> linkKey;
    std::vector<EdgeTransport> transport;
    std::uint64_t transportGen = 0;
    // P2P over every pipeline boundary for (layout, transports, V, bytes).
    bool p2pValid = false;
    std::uint64_t p2pLayoutGen = 0, p2pTransportGen = 0;
    int p2pV = 0;
    double p2pBytes = 0;
    std::optional<TrafficPhase> p2p;
    std::vector<double> p2p_fwd, p2p_bwd;
    std::vector<char> p2p_cross;
    double p2pSlot = 0;
    // DP collectives' traffic by (layout, transports, ZeRO class, algorithm,
    // gradient bytes, stage parameters).
    struct DpSync {
        bool valid = false;
        std::uint64_t layoutGen = 0, transportGen = 0;
        int zeroClass = 0;
        CollectiveAlgo algo = CollectiveAlgo::Ring;
        double gradBytes = 0;
        std::vector<double> params;
        std::optional<TrafficPhase> dpPhase, agPhase;
        std::vector<CollectiveCost> rsCost, agCost;
        CollectiveAlgo usedAlgo = CollectiveAlgo::Ring;
        std::vector<double> dpShared, agShared; // [stage]
    };
    RecentMemo<DpSync> dpSyncs;
    struct Zero3 {
        bool valid = false;
        std::uint64_t layoutGen = 0, transportGen = 0;
        CollectiveAlgo algo = CollectiveAlgo::Ring;
        double gradBytes = 0;
        int v = 0, mb = 0;
        std::vector<double> params;
        std::vector<CollectiveCost> ag, rs; // [stage], one chunk's
        double shared = 0;                  // drain time of all stages' at once
        bool haveLoads = false;
        std::vector<double> loads; // per step, [edge * 2 + direction]
    };
    RecentMemo<Zero3> zero3;
    // Per-building layer costs by (plan fields they read, model).
    struct LayerCosts {
        bool valid = false;
        LayerPlanKey key;
        Model model;
        std::vector<char> have; // [building]
        std::vector<BuildingCosts> perBuilding;
    };
    RecentMemo<LayerCosts> layerCosts;
    // Buffers of one evaluation, reused.
    std::vector<BuildingCosts> bc;
    std::vector<int> chunkLayers, chunkMoe;
    std::optional<TrafficPhase> epPhase;
    std::uint64_t epTransportGen = 0;
    std::vector<double> epCrossTime, stageParams, dpEnd, agExposed, optTime, dpStart, dpTime;
    std::vector<std::vector<ChunkTimes>> chunk;
    PipelineInput pin;
    PipelineResult pr; // with the timeline
    struct Simulated {
        bool valid = false;
        PipelineInput in;
        PipelineResult out;
    };
    RecentMemo<Simulated> pipelines; // lean simulations
    PipelineScratch pipeline;
    std::int64_t hits = 0, misses = 0;
};

EvaluationCache::EvaluationCache()
    : state_(std::make_unique<State>()) {}
EvaluationCache::~EvaluationCache() = default;
std::int64_t EvaluationCache::layoutHits() const {
    return state_->hits;
}
std::int64_t EvaluationCache::layoutMisses() const {
    return state_->misses;
}

EvaluationResult Evaluator::evaluate(const Model& model, const Plan& plan,
                                     const EvaluateOptions& options) const {
    return evaluate(model, plan, options, nullptr);
}

EvaluationResult Evaluator::evaluate(const Model& model, const Plan& plan,
                                     const EvaluateOptions& options, EvaluationCache* cache) const {
    const Cluster& cluster = cluster_;
    const Topology& topo = *topology_;
    if (options.validate) {
        Scenario sc{cluster, model, plan};
        auto problems = validateScenario(sc);
        if (!problems.empty())
            return EvaluationError{std::move(problems)};
    }
    // What the previous plan on this thread left: reused where its inputs
    // are the same. Without a cache, a fresh state (nothing reused).
    std::unique_ptr<EvaluationCache::State> fresh;
    if (!cache)
        fresh = std::make_unique<EvaluationCache::State>();
    EvaluationCache::State& st = cache ? *cache->state_ : *fresh;
    if (st.owner != id_) {
        // Another cluster: nothing carries over.
        st.valid = st.transportValid = st.p2pValid = false;
        st.dpSyncs.clear();
        st.zero3.clear();
        st.layerCosts.clear();
        st.owner = id_;
    }
    if (!st.valid || !sameLayoutKey(st.key, plan)) {
        st.valid = false;
        ++st.layoutGen;
        buildLayout(st.layout, cluster, plan, options.plan_file);
        if (!st.layout.placed.ok())
            return EvaluationError{std::move(st.layout.placed.problems)};
        st.key.parallelism = plan.parallelism;
        st.key.rank_order = plan.rank_order;
        st.key.placement = plan.placement;
        st.valid = true;
        ++st.misses;
    } else {
        ++st.hits;
    }
    const Layout* layout = &st.layout;
    const CellGrid& grid = layout->placed.grid;

    Evaluation ev;
    const Parallelism& par = plan.parallelism;
    const int pp = par.pp;
    const int dp = par.dp;
    const int v =
        plan.schedule.kind == ScheduleKind::Interleaved ? plan.schedule.virtual_stages : 1;
    const int V = pp * v;
    const std::size_t npp = std::size_t(pp), nV = std::size_t(V), nv = std::size_t(v);
    const std::int64_t m = plan.microbatches();
    const int mb = int(std::max<std::int64_t>(1, m));
    const double cellGpus = double(grid.cell_gpus);
    const double T = double(plan.micro_batch_sequences) * plan.sequence_length / par.cp;
    const double h = double(model.hidden);
    const bool zb = plan.schedule.kind == ScheduleKind::ZeroBubble;
    ev.gpus = par.gpus();
    ev.microbatches = m;

    // ---- per building: costs of one layer on its GPUs -------------------
    const std::size_t nb = cluster.buildings.size();
    std::vector<BuildingCosts>& bc = st.bc;
    bc.assign(nb, BuildingCosts{});
    const std::vector<std::vector<int>>& stageBuildings = layout->stageBuildings;
    const std::vector<std::vector<int>>& stageCounts = layout->stageCounts;
    ev.stage_building = layout->stageBuilding;
    for (const auto& held : stageBuildings)
        for (int b : held)
            bc[std::size_t(b)].used = true;
    const bool isMoe = model.moe.has_value();
    // Costs per building depend on the model and a few plan fields: kept
    // while those stay the same.
    const LayerPlanKey layerKey = layerPlanKey(plan);
    auto* costs =
        st.layerCosts.find([&](const auto& e) { return e.key == layerKey && e.model == model; });
    if (!costs) {
        costs = &st.layerCosts.slot();
        costs->key = layerKey;
        costs->model = model;
        costs->have.assign(nb, 0);
        costs->perBuilding.assign(nb, BuildingCosts{});
        costs->valid = true;
    }
    for (std::size_t b = 0; b < nb; ++b) {
        if (!bc[b].used)
            continue;
        if (costs->have[b]) {
            bc[b] = costs->perBuilding[b];
            continue;
        }
        const Building& bld = cluster.buildings[b];
        LayerContext ctx = layerContext(cluster, bld, model, plan);
        bc[b].gpu = ctx.gpu;
        bc[b].dense = layerCost(ctx);
        if (isMoe) {
            ctx.moe_layer = true;
            bc[b].moe = layerCost(ctx);
            ctx.moe_layer = false;
        }
        bc[b].embedding = embeddingCost(ctx);
        bc[b].logits = logitsCost(ctx);
        bc[b].nic_bps = gbpsToBytesPerS(bld.scale_out_gbps) * fabricTechnology().efficiency;
        bc[b].nvlink_bps = gbpsToBytesPerS(bld.scale_up_gbps) * 0.8;
        costs->perBuilding[b] = bc[b];
        costs->have[b] = 1;
    }

    // ---- layers of every (stage, chunk), in virtual-stage order ----------
    ev.layers_per_stage = layersPerStage(model, plan);
    const std::vector<int>& stageLayers = ev.layers_per_stage;
    std::vector<int>& chunkLayers = st.chunkLayers;
    std::vector<int>& chunkMoe = st.chunkMoe;
    chunkLayers.assign(nV, 0);
    chunkMoe.assign(nV, 0);
    {
        int next = 0;
        const int denseLayers = isMoe ? model.moe->dense_layers : model.layers;
        for (int vs = 0; vs < V; ++vs) {
            const int s = vs % pp, c = vs / pp;
            const int L = stageLayers[std::size_t(s)];
            const int n = L / v + (c < L % v ? 1 : 0);
            chunkLayers[std::size_t(vs)] = n;
            chunkMoe[std::size_t(vs)] = std::max(0, next + n - std::max(next, denseLayers));
            if (!isMoe)
                chunkMoe[std::size_t(vs)] = 0;
            next += n;
        }
    }

    // ---- EP all-to-all across buildings/zones (contention) -----------------
    const Topology& tp = topo;
    if (!st.transportValid || st.linkKey != plan.link_technologies) {
        st.transport = edgeTransports(cluster, tp, plan);
        st.linkKey = plan.link_technologies;
        st.transportValid = true;
        ++st.transportGen;
    }
    const std::vector<EdgeTransport>& transport = st.transport;
    if (!st.epPhase || st.epTransportGen != st.transportGen) {
        st.epPhase.emplace(tp, transport);
        st.epTransportGen = st.transportGen;
    }
    TrafficPhase& epPhase = *st.epPhase;
    epPhase.clear();
    std::vector<double>& epCrossTime = st.epCrossTime; // per all-to-all, per stage
    epCrossTime.assign(npp, 0.0);
    if (isMoe && par.ep > 1) {
        for (int s = 0; s < pp; ++s) {
            TrafficPhase stagePhase(tp, transport);
            double worstLat = 0;
            bool crosses = false;
            for (int g0 = 0; g0 < dp; g0 += par.ep) {
                for (int i = g0; i < g0 + par.ep && i < dp; ++i)
                    for (int j = g0; j < g0 + par.ep && j < dp; ++j) {
                        if (i == j)
                            continue;
                        const Location a{grid.at(s, i), grid.zoneAt(s, i)};
                        const Location b{grid.at(s, j), grid.zoneAt(s, j)};
                        if (a == b)
                            continue;
                        crosses = true;
                        const double perGpu =
                            bc[std::size_t(a.building)].moe.ep_bytes_fwd_one_way / (par.ep - 1);
                        stagePhase.add(a, b, cellGpus * perGpu, cellGpus);
                        epPhase.add(a, b, cellGpus * perGpu, cellGpus);
                        worstLat = std::max(worstLat, stagePhase.routeLatency(a, b));
                    }
            }
            if (crosses)
                epCrossTime[std::size_t(s)] = stagePhase.drainTime() + worstLat;
        }
    }

    // ---- per (stage, chunk) durations: slowest building holding the stage ----
    std::vector<std::vector<ChunkTimes>>& chunk = st.chunk;
    chunk.resize(npp);
    for (auto& row : chunk)
        row.assign(nv, ChunkTimes{});
    PipelineInput& pin = st.pin;
    pin.kind = plan.schedule.kind;
    pin.stages = pp;
    pin.chunks = v;
    pin.microbatches = mb;
    pin.record = options.timeline;
    for (auto* d : {&pin.fwd, &pin.bwd, &pin.wgrad, &pin.activation_bytes}) {
        d->resize(npp);
        for (auto& row : *d)
            row.assign(nv, 0.0);
    }
    pin.extra_warmup.clear();
    for (int vs = 0; vs < V; ++vs) {
        const int s = vs % pp, c = vs / pp;
        const int nMoe = chunkMoe[std::size_t(vs)];
        const int nDense = chunkLayers[std::size_t(vs)] - nMoe;
        ChunkTimes best;
        double bestTotal = -1;
        for (int b : stageBuildings[std::size_t(s)]) {
            const BuildingCosts& k = bc[std::size_t(b)];
            ChunkTimes t;
            auto addLayer = [&](const LayerCost& L, int n) {
                if (n <= 0)
                    return;
                double epF = L.ep_fwd_s, epB = L.ep_bwd_s;
                if (epCrossTime[std::size_t(s)] > 0 && L.ep_bytes > 0) {
                    epF = std::max(epF, 2.0 * epCrossTime[std::size_t(s)]);
                    epB = std::max(epB, 2.0 * epCrossTime[std::size_t(s)]);
                }
                const double recompTp = L.tp_recompute_s;
                const double recompEp = plan.recompute == Recompute::Full ? epF : 0.0;
                t.fwd += n * (L.fwd_s + L.tp_fwd_s + L.cp_fwd_s + epF);
                const double bIn = L.bwd_input_s + L.recompute_s + L.tp_bwd_s + L.cp_bwd_s + epB +
                                   recompTp + recompEp;
                if (zb) {
                    t.bwd += n * bIn;
                    t.wgrad += n * L.bwd_weight_s;
                } else {
                    t.bwd += n * (bIn + L.bwd_weight_s);
                }
                t.compute += n * (L.fwd_s + L.bwd_input_s + L.bwd_weight_s + L.recompute_s);
                t.tp += n * (L.tp_fwd_s + L.tp_bwd_s + recompTp);
                t.cp += n * (L.cp_fwd_s + L.cp_bwd_s);
                t.ep += n * (epF + epB + recompEp);
                t.params += n * L.params;
                t.expert_params += n * L.expert_params;
                t.activation += n * L.activation_bytes;
                t.transient = std::max(t.transient, L.transient_bytes);
            };
            addLayer(k.dense, nDense);
            addLayer(k.moe, nMoe);
            if (vs == 0) {
                t.fwd += k.embedding.fwd_s + k.embedding.tp_fwd_s;
                t.bwd += k.embedding.bwd_s;
                t.compute += k.embedding.fwd_s + k.embedding.bwd_s;
                t.tp += k.embedding.tp_fwd_s;
                t.params += k.embedding.params;
                t.activation += k.embedding.activation_bytes;
            }
            if (vs == V - 1) {
                t.fwd += k.logits.fwd_s + k.logits.tp_fwd_s;
                t.bwd += k.logits.bwd_s + k.logits.tp_bwd_s;
                t.compute += k.logits.fwd_s + k.logits.bwd_s;
                t.tp += k.logits.tp_fwd_s + k.logits.tp_bwd_s;
                t.params += k.logits.params;
                t.activation += k.logits.activation_bytes;
            }
            const double total = t.fwd + t.bwd + t.wgrad;
            if (total > bestTotal) {
                bestTotal = total;
                best = t;
            }
        }
        chunk[std::size_t(s)][std::size_t(c)] = best;
    }

    // ---- ZeRO-3: parameter all-gathers and gradient reduce-scatters per
    //      microbatch, prefetched behind each op's compute ----------------
    CollectiveEnv env;
    env.alpha_s = fabricTechnology().per_message_us * 1e-6 + 3e-6;
    const std::vector<GroupSpread>& spreads = layout->spreads;
    auto envFor = [&](int s) {
        CollectiveEnv e = env;
        double nic = 1e300, nvl = 1e300;
        for (int b : stageBuildings[std::size_t(s)]) {
            nic = std::min(nic, bc[std::size_t(b)].nic_bps);
            nvl = std::min(nvl, bc[std::size_t(b)].nvlink_bps);
        }
        e.nic_bps = nic;
        e.nvlink_bps = nvl;
        return e;
    };
    const CollectiveAlgo dpAlgo = plan.algoFor(Dim::DP);
    AlgoMemo algoMemo;
    const double gradBytes = double(plan.grad_reduce_bytes);
    std::vector<double>& stageParams = st.stageParams;
    stageParams.assign(npp, 0.0);
    for (int s = 0; s < pp; ++s)
        stageParams[std::size_t(s)] = sumChunks(chunk[std::size_t(s)], &ChunkTimes::params);

    // ZeRO-3's per-microbatch collectives: by (layout, transports, algorithm,
    // gradient bytes, stage parameters, chunks, microbatches).
    EvaluationCache::State::Zero3* z3 = nullptr;
    if (plan.zero_stage == 3 && dp > 1) {
        z3 = st.zero3.find([&](const auto& e) {
            return e.layoutGen == st.layoutGen && e.transportGen == st.transportGen &&
                   e.algo == dpAlgo && e.gradBytes == gradBytes && e.v == v && e.mb == mb &&
                   e.params == stageParams;
        });
        if (!z3) {
            z3 = &st.zero3.slot();
            TrafficPhase phase(tp, transport);
            z3->ag.assign(npp, {});
            z3->rs.assign(npp, {});
            for (int s = 0; s < pp; ++s) {
                const double p = stageParams[std::size_t(s)] / v;
                z3->ag[std::size_t(s)] = algoMemo.load(
                    phase, spreads[std::size_t(s)], layout->spreadClass[std::size_t(s)],
                    CollectiveKind::AllGather, dpAlgo, p * kWeightBytes, cellGpus, envFor(s));
                z3->rs[std::size_t(s)] = algoMemo.load(
                    phase, spreads[std::size_t(s)], layout->spreadClass[std::size_t(s)],
                    CollectiveKind::ReduceScatter, dpAlgo, p * gradBytes, cellGpus, envFor(s));
            }
            z3->shared = phase.drainTime();
            z3->haveLoads = false;
            z3->layoutGen = st.layoutGen;
            z3->transportGen = st.transportGen;
            z3->algo = dpAlgo;
            z3->gradBytes = gradBytes;
            z3->v = v;
            z3->mb = mb;
            z3->params = stageParams;
            z3->valid = true;
        }
        const std::vector<CollectiveCost>& ag = z3->ag;
        const std::vector<CollectiveCost>& rs = z3->rs;
        const double shared = z3->shared;
        for (int s = 0; s < pp; ++s) {
            const double tAg =
                std::max(ag[std::size_t(s)].bandwidth_s, shared / 2) + ag[std::size_t(s)].latency_s;
            const double tRs =
                std::max(rs[std::size_t(s)].bandwidth_s, shared / 2) + rs[std::size_t(s)].latency_s;
            for (int c = 0; c < v; ++c) {
                ChunkTimes& t = chunk[std::size_t(s)][std::size_t(c)];
                const double f = std::max(t.fwd, tAg);
                const double b = std::max(t.bwd + t.wgrad, tAg + tRs) - t.wgrad;
                // What the prefetch could not hide is DP time on the critical path.
                t.fwd = f;
                t.bwd = b;
            }
        }
    }

    for (int s = 0; s < pp; ++s)
        for (int c = 0; c < v; ++c) {
            const ChunkTimes& t = chunk[std::size_t(s)][std::size_t(c)];
            pin.fwd[std::size_t(s)][std::size_t(c)] = t.fwd;
            pin.bwd[std::size_t(s)][std::size_t(c)] = t.bwd;
            pin.wgrad[std::size_t(s)][std::size_t(c)] = t.wgrad;
            pin.activation_bytes[std::size_t(s)][std::size_t(c)] = t.activation;
        }

    // ---- P2P between consecutive virtual stages, all boundaries at once ----
    const double p2pBytesPerGpu = T * h * kWeightBytes / par.tp; // scatter-gather: 1/tp each
    // Depends on the layout, the transports, the virtual stages and the
    // activation size only: kept while those stay the same.
    if (!st.p2pValid || st.p2pLayoutGen != st.layoutGen || st.p2pTransportGen != st.transportGen ||
        st.p2pV != V || st.p2pBytes != p2pBytesPerGpu) {
        st.p2pValid = false;
        st.p2p.emplace(tp, transport);
        TrafficPhase& p2p = *st.p2p;
        st.p2pSlot = 0;
        st.p2p_fwd.assign(std::size_t(std::max(0, V - 1)), 0.0);
        st.p2p_bwd = st.p2p_fwd;
        st.p2p_cross.assign(std::size_t(std::max(0, V - 1)), 0);
        for (int vs = 0; vs + 1 < V; ++vs) {
            const auto& runs = layout->boundary[std::size_t(vs % pp)];
            for (const PairRun& r : runs) {
                p2p.add(r.a, r.b, r.count * cellGpus * p2pBytesPerGpu, r.count * cellGpus);
                p2p.add(r.b, r.a, r.count * cellGpus * p2pBytesPerGpu, r.count * cellGpus);
                if (r.a.building != r.b.building)
                    st.p2p_cross[std::size_t(vs)] = 1;
            }
        }
        for (int vs = 0; vs + 1 < V; ++vs) {
            const int sa = vs % pp, sb = (vs + 1) % pp;
            double nic = 1e300;
            for (int b : stageBuildings[std::size_t(sa)])
                nic = std::min(nic, bc[std::size_t(b)].nic_bps);
            for (int b : stageBuildings[std::size_t(sb)])
                nic = std::min(nic, bc[std::size_t(b)].nic_bps);
            double worst = 0;
            const PairRun* prev = nullptr;
            for (const PairRun& r : layout->boundary[std::size_t(vs % pp)]) {
                if (prev && prev->a == r.a && prev->b == r.b)
                    continue;
                prev = &r;
                double t = p2pBytesPerGpu / nic;
                if (!(r.a == r.b)) {
                    // A single transfer is also bounded by its own flows' window.
                    double perTransfer = p2pBytesPerGpu / nic;
                    if (r.a.building != r.b.building) {
                        for (int id : tp.buildingRoute(r.a.building, r.b.building).edges) {
                            const EdgeTransport& et = transport[std::size_t(id)];
                            perTransfer = std::max(
                                perTransfer,
                                p2pBytesPerGpu /
                                    std::min(nic, transferRateBps(et.tech, 1e12, et.rtt_s)));
                        }
                    }
                    t = std::max(perTransfer, p2p.routeDrainTime(r.a, r.b));
                }
                t += p2p.routeLatency(r.a, r.b) + env.alpha_s;
                worst = std::max(worst, t);
            }
            st.p2p_fwd[std::size_t(vs)] = worst;
            st.p2p_bwd[std::size_t(vs)] = worst;
            st.p2pSlot = std::max(st.p2pSlot, worst);
        }
        st.p2pLayoutGen = st.layoutGen;
        st.p2pTransportGen = st.transportGen;
        st.p2pV = V;
        st.p2pBytes = p2pBytesPerGpu;
        st.p2pValid = true;
    }
    const TrafficPhase& p2p = *st.p2p;
    const double p2pSlot = st.p2pSlot;
    pin.p2p_fwd = st.p2p_fwd;
    pin.p2p_bwd = st.p2p_bwd;
    pin.p2p_cross = st.p2p_cross;
    if (plan.schedule.latency_hiding && plan.schedule.kind != ScheduleKind::GPipe && pp > 1) {
        // 1F1B's warm-up covers the compute downstream of a stage exactly,
        // so every P2P round trip stalls each cycle. Each boundary b needs
        // ceil(2 p2p_b / cycle) more microbatches in flight on every stage
        // upstream of it than on the stage after it (CrossPipe, ATC'25).
        pin.extra_warmup.assign(npp, 0);
        for (int s = 0; s < pp; ++s) {
            const double cycle = pin.fwd[std::size_t(s)][0] + pin.bwd[std::size_t(s)][0] +
                                 pin.wgrad[std::size_t(s)][0];
            if (cycle <= 0)
                continue;
            int extra = 0;
            for (int b = s; b + 1 < pp; ++b)
                extra += int(
                    std::ceil((pin.p2p_fwd[std::size_t(b)] + pin.p2p_bwd[std::size_t(b)]) / cycle));
            pin.extra_warmup[std::size_t(s)] = extra;
        }
    }

    // ---- the pipeline ------------------------------------------------------
    PipelineScratch& scratch = st.pipeline;
    // Plans that differ only where the pipeline does not look (ZeRO 0-2,
    // the DP collective) simulate the same pipeline.
    const PipelineResult* simulated = nullptr;
    if (pin.record) {
        simulatePipeline(pin, st.pr, scratch);
        simulated = &st.pr;
    } else if (auto* hit = st.pipelines.find([&](const auto& e) { return e.in == pin; })) {
        simulated = &hit->out;
    } else {
        auto& e = st.pipelines.slot();
        simulatePipeline(pin, e.out, scratch);
        e.in = pin;
        e.valid = true;
        simulated = &e.out;
    }
    const PipelineResult& pr = *simulated;
    if (!pr.ok)
        ev.warnings.push_back(
            "internal: the pipeline order deadlocked; step time is a lower bound");
    PipelineResult pr0;
    if (options.detail) {
        PipelineInput noP2p = pin;
        noP2p.record = false;
        std::fill(noP2p.p2p_fwd.begin(), noP2p.p2p_fwd.end(), 0.0);
        std::fill(noP2p.p2p_bwd.begin(), noP2p.p2p_bwd.end(), 0.0);
        simulatePipeline(noP2p, pr0, scratch);
    }

    // ---- DP / FSDP gradient sync, overlapped with the last backward ------
    std::vector<double>&dpEnd = st.dpEnd, &agExposed = st.agExposed, &optTime = st.optTime,
    &dpStart = st.dpStart, &dpTime = st.dpTime;
    for (auto* buffer : {&dpEnd, &agExposed, &optTime, &dpStart, &dpTime})
        buffer->assign(npp, 0.0);
    const double bucketBytes = std::max(1.0, plan.dp_bucket_mib * 1024 * 1024);
    // The collectives' traffic depends on the layout, the transports, the
    // stages' parameters, the gradient size, the algorithm and whether ZeRO
    // shards (1 and 2 move the same bytes): kept while those stay the same.
    const int zeroClass = plan.zero_stage == 0 ? 0 : plan.zero_stage < 3 ? 1 : 3;
    auto sameDp = [&](const EvaluationCache::State::DpSync& e) {
        return e.layoutGen == st.layoutGen && e.transportGen == st.transportGen &&
               e.zeroClass == zeroClass && e.algo == dpAlgo && e.gradBytes == gradBytes &&
               e.params == stageParams;
    };
    const EvaluationCache::State::DpSync* dpHit = st.dpSyncs.find(sameDp);
    if (!dpHit) {
        EvaluationCache::State::DpSync& d = st.dpSyncs.slot();
        d.dpPhase.emplace(tp, transport);
        d.agPhase.emplace(tp, transport);
        d.rsCost.assign(npp, {});
        d.agCost.assign(npp, {});
        d.usedAlgo = dpAlgo;
        d.dpShared.assign(npp, 0.0);
        d.agShared.assign(npp, 0.0);
        if (dp > 1 && plan.zero_stage < 3) {
            for (int s = 0; s < pp; ++s) {
                const double P = stageParams[std::size_t(s)];
                const GroupSpread& g = spreads[std::size_t(s)];
                const int cls = layout->spreadClass[std::size_t(s)];
                if (plan.zero_stage == 0) {
                    d.rsCost[std::size_t(s)] =
                        algoMemo.load(*d.dpPhase, g, cls, CollectiveKind::AllReduce, dpAlgo,
                                      P * gradBytes, cellGpus, envFor(s));
                } else {
                    d.rsCost[std::size_t(s)] =
                        algoMemo.load(*d.dpPhase, g, cls, CollectiveKind::ReduceScatter, dpAlgo,
                                      P * gradBytes, cellGpus, envFor(s));
                    d.agCost[std::size_t(s)] =
                        algoMemo.load(*d.agPhase, g, cls, CollectiveKind::AllGather, dpAlgo,
                                      P * kWeightBytes, cellGpus, envFor(s));
                }
                d.usedAlgo = d.rsCost[std::size_t(s)].algo;
            }
            // What each group's ring neighbours wait for on the shared edges.
            for (int s = 0; s < pp; ++s) {
                const auto& g = spreads[std::size_t(s)];
                const std::size_t k = g.sites.size();
                double shared = 0, sharedAg = 0;
                for (std::size_t i = 0; i < k && k > 1; ++i)
                    shared = std::max(shared, d.dpPhase->routeDrainTime(g.sites[i].loc,
                                                                        g.sites[(i + 1) % k].loc));
                if (plan.zero_stage >= 1)
                    for (std::size_t i = 0; i < k && k > 1; ++i)
                        sharedAg =
                            std::max(sharedAg, d.agPhase->routeDrainTime(g.sites[i].loc,
                                                                         g.sites[(i + 1) % k].loc));
                d.dpShared[std::size_t(s)] = shared;
                d.agShared[std::size_t(s)] = sharedAg;
            }
        }
        d.layoutGen = st.layoutGen;
        d.transportGen = st.transportGen;
        d.zeroClass = zeroClass;
        d.algo = dpAlgo;
        d.gradBytes = gradBytes;
        d.params = stageParams;
        d.valid = true;
        dpHit = &d;
    }
    const EvaluationCache::State::DpSync& dpSync = *dpHit;
    const TrafficPhase& dpPhase = *dpSync.dpPhase;
    const TrafficPhase& agPhase = *dpSync.agPhase;
    const std::vector<CollectiveCost>& rsCost = dpSync.rsCost;
    const std::vector<CollectiveCost>& agCost = dpSync.agCost;
    const CollectiveAlgo usedAlgo = dpSync.usedAlgo;
    double firstFwd = 0; // when each stage first needs its parameters
    for (int s = 0; s < pp; ++s) {
        const double P = stageParams[std::size_t(s)];
        const double endS = pr.end_s[std::size_t(s)];
        double t = 0, buckets = 1;
        if (dp > 1 && plan.zero_stage < 3) {
            buckets = std::ceil(P * gradBytes / bucketBytes);
            const double shared = dpSync.dpShared[std::size_t(s)];
            t = std::max(rsCost[std::size_t(s)].bandwidth_s, shared) +
                rsCost[std::size_t(s)].latency_s * buckets;
            if (plan.zero_stage >= 1) {
                const double sharedAg = dpSync.agShared[std::size_t(s)];
                const double agBuckets = std::ceil(P * kWeightBytes / bucketBytes);
                const double tAg = std::max(agCost[std::size_t(s)].bandwidth_s, sharedAg) +
                                   agCost[std::size_t(s)].latency_s * agBuckets;
                const double window = firstFwd + pin.fwd[std::size_t(s)][0];
                agExposed[std::size_t(s)] =
                    plan.dp_overlap ? std::max(tAg / agBuckets, tAg - window) : tAg;
            }
        }
        dpTime[std::size_t(s)] = t;
        const double start = plan.dp_overlap ? pr.last_bwd_start_s[std::size_t(s)] : endS;
        dpStart[std::size_t(s)] = start;
        dpEnd[std::size_t(s)] = t > 0 ? std::max(start + t, endS + t / buckets) : endS;
        const double shard = plan.zero_stage >= 1 ? dp : 1;
        const BuildingCosts& k = bc[std::size_t(ev.stage_building[std::size_t(s)])];
        optTime[std::size_t(s)] =
            P / shard * kOptimizerStepBytes / (k.gpu->hbm_tbps * 1e12 * 0.8) + 20e-6;
        if (s + 1 < pp)
            firstFwd += pin.fwd[std::size_t(s)][0] + pin.p2p_fwd[std::size_t(s)];
    }
    int critical = 0;
    double stepTime = 0;
    for (int s = 0; s < pp; ++s) {
        const double end =
            dpEnd[std::size_t(s)] + optTime[std::size_t(s)] + agExposed[std::size_t(s)];
        if (end > stepTime) {
            stepTime = end;
            critical = s;
        }
    }
    ev.step_time_s = stepTime;

    // ---- FLOPs, MFU, HFU -------------------------------------------------
    {
        const BuildingCosts& k = bc[std::size_t(ev.stage_building[0])];
        const int nMoeLayers = isMoe ? model.layers - model.moe->dense_layers : 0;
        const double perMicroModel =
            cellGpus * ((model.layers - nMoeLayers) * k.dense.model_flops_total +
                        nMoeLayers * k.moe.model_flops_total + k.logits.model_flops_total);
        const double perMicroHw =
            cellGpus * ((model.layers - nMoeLayers) * k.dense.hw_flops_total +
                        nMoeLayers * k.moe.hw_flops_total + k.logits.hw_flops_total);
        const double micro = double(m) * dp;
        ev.model_flops_per_step = perMicroModel * micro;
        ev.hardware_flops_per_step = perMicroHw * micro;
        double peak = 0;
        for (std::size_t b = 0; b < nb; ++b) {
            if (!bc[b].used)
                continue;
            std::int64_t cells = 0;
            for (int s = 0; s < pp; ++s)
                cells += stageCounts[std::size_t(s)][b];
            peak += double(cells) * cellGpus * gemmPeakFlops(*bc[b].gpu, model);
        }
        if (stepTime > 0 && peak > 0) {
            ev.mfu = ev.model_flops_per_step / (stepTime * peak);
            ev.hfu = ev.hardware_flops_per_step / (stepTime * peak);
            ev.tflops_per_gpu = ev.model_flops_per_step / stepTime / double(ev.gpus) / 1e12;
            ev.tokens_per_s = double(plan.global_batch_sequences) * plan.sequence_length / stepTime;
        }
    }

    // ---- breakdown on the critical stage ---------------------------------
    if (options.detail) {
        Breakdown& br = ev.breakdown;
        const auto& cs = chunk[std::size_t(critical)];
        br.compute_s = mb * sumChunks(cs, &ChunkTimes::compute);
        br.tp_exposed_s = mb * sumChunks(cs, &ChunkTimes::tp);
        br.cp_exposed_s = mb * sumChunks(cs, &ChunkTimes::cp);
        br.ep_exposed_s = mb * sumChunks(cs, &ChunkTimes::ep);
        const double busy = pr.busy_s[std::size_t(critical)];
        const double zeroPending = std::max(
            0.0, busy - (br.compute_s + br.tp_exposed_s + br.cp_exposed_s + br.ep_exposed_s));
        br.dp_exposed_s = zeroPending +
                          (dpEnd[std::size_t(critical)] - pr.end_s[std::size_t(critical)]) +
                          agExposed[std::size_t(critical)];
        br.bubble_s = std::max(0.0, pr0.end_s[std::size_t(critical)] - busy);
        br.pp_exposed_s =
            std::max(0.0, pr.end_s[std::size_t(critical)] - pr0.end_s[std::size_t(critical)]);
        br.optimizer_s = optTime[std::size_t(critical)];
    }

    // ---- memory per stage (worst building holding it) ---------------------
    {
        MemoryUsage& mem = ev.memory;
        mem.per_stage_peak_gib.assign(std::size_t(pp), 0);
        mem.per_stage_capacity_gib.assign(std::size_t(pp), 0);
        double worstRatio = -1;
        for (int s = 0; s < pp; ++s) {
            const auto& cs = chunk[std::size_t(s)];
            const double P = stageParams[std::size_t(s)];
            const double Pe = sumChunks(cs, &ChunkTimes::expert_params);
            const double Pd = P - Pe;
            const double dpShard = dp, epShard = std::max(1, dp / std::max(1, par.ep));
            const int z = plan.zero_stage;
            double weights = P * kWeightBytes;
            if (z >= 3)
                weights = Pd * kWeightBytes / dpShard + Pe * kWeightBytes / epShard +
                          2.0 * P / std::max(1, stageLayers[std::size_t(s)]) * kWeightBytes;
            const double grads =
                z >= 2 ? Pd * kGradBytes / dpShard + Pe * kGradBytes / epShard : P * kGradBytes;
            const double opt =
                z >= 1 ? Pd * kOptimizerStateBytes / dpShard + Pe * kOptimizerStateBytes / epShard
                       : P * kOptimizerStateBytes;
            double transient = 0;
            for (const auto& c : cs)
                transient = std::max(transient, c.transient);
            const double act = pr.peak_activation_bytes[std::size_t(s)] + transient;
            const double total =
                (weights + grads + opt + act) * kFragmentation / kGiB + kRuntimeOverheadGiB;
            double cap = 1e300;
            for (int b : stageBuildings[std::size_t(s)])
                cap = std::min(cap, bc[std::size_t(b)].gpu->memory_gib);
            mem.per_stage_peak_gib[std::size_t(s)] = total;
            mem.per_stage_capacity_gib[std::size_t(s)] = cap;
            if (total / cap > worstRatio) {
                worstRatio = total / cap;
                mem.worst_stage = s;
                mem.weights_gib = weights / kGiB;
                mem.gradients_gib = grads / kGiB;
                mem.optimizer_gib = opt / kGiB;
                mem.activations_gib = act / kGiB;
                mem.other_gib = total - (weights + grads + opt + act) / kGiB;
                mem.peak_gib_per_gpu = total;
                mem.capacity_gib = cap;
            }
        }
        mem.fits = mem.peak_gib_per_gpu <= mem.capacity_gib;
        if (!mem.fits) {
            char buf[256];
            std::snprintf(
                buf, sizeof buf,
                "memory: stage %d needs %.1f GiB per GPU, %.1f GiB more than the %.0f GiB "
                "it has",
                mem.worst_stage, mem.peak_gib_per_gpu, mem.peak_gib_per_gpu - mem.capacity_gib,
                mem.capacity_gib);
            ev.warnings.push_back(buf);
        }
    }

    // ---- link traffic per step --------------------------------------------
    if (!options.detail) {
        // Cross-building bytes only (the optimizer's second objective),
        // summed exactly as the detailed path below sums them. ZeRO-3 moves
        // its stage's parameters twice and gradients once per microbatch; EP
        // runs four all-to-alls per MoE layer per microbatch.
        const double dpMult = plan.zero_stage == 3 ? 0.0 : 1.0;
        double epLayers = 0;
        for (int vs = 0; vs < V; ++vs)
            epLayers = std::max(epLayers, double(chunkMoe[std::size_t(vs)]));
        const double epCalls =
            4.0 * mb * epLayers * (plan.recompute == Recompute::Full ? 1.5 : 1.0);
        const std::vector<double>* z3loads = nullptr;
        if (plan.zero_stage == 3 && dp > 1) {
            if (!z3->haveLoads) {
                TrafficPhase z3bytes(tp, transport);
                for (int s = 0; s < pp; ++s) {
                    const double p = stageParams[std::size_t(s)];
                    for (int rep = 0; rep < 2; ++rep)
                        algoMemo.load(z3bytes, spreads[std::size_t(s)],
                                      layout->spreadClass[std::size_t(s)],
                                      CollectiveKind::AllGather, dpAlgo, p * kWeightBytes * mb,
                                      cellGpus, envFor(s));
                    algoMemo.load(z3bytes, spreads[std::size_t(s)],
                                  layout->spreadClass[std::size_t(s)],
                                  CollectiveKind::ReduceScatter, dpAlgo, p * gradBytes * mb,
                                  cellGpus, envFor(s));
                }
                z3->loads.assign(2 * tp.edges().size(), 0.0);
                for (const TopoEdge& e : tp.edges())
                    for (int dir = 0; dir < 2; ++dir)
                        z3->loads[2 * std::size_t(e.id) + std::size_t(dir)] =
                            z3bytes.load(e.id, dir);
                z3->haveLoads = true;
            }
            z3loads = &z3->loads;
        }
        const double p2pCrossings = double(mb);
        for (const TopoEdge& e : tp.edges()) {
            if (e.kind != EdgeKind::InterBuilding)
                continue;
            double dirBytes[2] = {0, 0};
            for (int dir = 0; dir < 2; ++dir) {
                const double z3load =
                    z3loads ? (*z3loads)[2 * std::size_t(e.id) + std::size_t(dir)] : 0.0;
                const double lp = p2p.load(e.id, dir) * p2pCrossings;
                const double ld =
                    dpMult * (dpPhase.load(e.id, dir) + agPhase.load(e.id, dir)) + z3load;
                const double le = epPhase.load(e.id, dir) * epCalls;
                dirBytes[dir] = lp + ld + le;
            }
            ev.cross_building_bytes += dirBytes[0] + dirBytes[1];
        }
    } else {
        const auto& edges = tp.edges();
        const double dpMult = plan.zero_stage == 3 ? 0.0 : 1.0;
        TrafficPhase z3phase(tp, transport);
        if (plan.zero_stage == 3 && dp > 1) {
            for (int s = 0; s < pp; ++s) {
                const double p = stageParams[std::size_t(s)];
                for (int rep = 0; rep < 2; ++rep)
                    algoMemo.load(z3phase, spreads[std::size_t(s)],
                                  layout->spreadClass[std::size_t(s)], CollectiveKind::AllGather,
                                  dpAlgo, p * kWeightBytes * mb, cellGpus, envFor(s));
                algoMemo.load(z3phase, spreads[std::size_t(s)], layout->spreadClass[std::size_t(s)],
                              CollectiveKind::ReduceScatter, dpAlgo, p * gradBytes * mb, cellGpus,
                              envFor(s));
            }
        }
        double maxDp = 0;
        for (double t : dpTime)
            maxDp = std::max(maxDp, t);
        const double p2pCrossings = double(mb); // each boundary carries every microbatch
        double epLayers = 0;
        for (int vs = 0; vs < V; ++vs)
            epLayers = std::max(epLayers, double(chunkMoe[std::size_t(vs)]));
        const double epCalls =
            4.0 * mb * epLayers * (plan.recompute == Recompute::Full ? 1.5 : 1.0);
        for (const TopoEdge& e : edges) {
            LinkUsage u;
            u.name = e.name;
            u.edge = e.id;
            u.tier = e.kind == EdgeKind::InterBuilding    ? LinkTier::InterBuilding
                     : e.kind == EdgeKind::BuildingUplink ? LinkTier::BuildingUplink
                                                          : LinkTier::ZoneUplink;
            u.capacity_gbps = e.bandwidth_gbps;
            u.latency_ms = e.latency_ms;
            u.technology = transport[std::size_t(e.id)].tech.name;
            const double line = gbpsToBytesPerS(e.bandwidth_gbps);
            double dirBytes[2] = {0, 0}, dirBusy[2] = {0, 0}, peak = 0;
            bool usesPP = false, usesDP = false, usesEP = false;
            for (int dir = 0; dir < 2; ++dir) {
                const double lp = p2p.load(e.id, dir) * p2pCrossings;
                const double ld = dpMult * (dpPhase.load(e.id, dir) + agPhase.load(e.id, dir)) +
                                  z3phase.load(e.id, dir);
                const double le = epPhase.load(e.id, dir) * epCalls;
                dirBytes[dir] = lp + ld + le;
                if (lp > 0) {
                    usesPP = true;
                    const double r = p2p.rateBps(e.id, dir);
                    dirBusy[dir] += lp / r;
                    peak = std::max(
                        peak, std::min(1.0, p2p.load(e.id, dir) / std::max(p2pSlot, 1e-12) / line));
                }
                if (ld > 0) {
                    usesDP = true;
                    // Each phase drains at the rate its own concurrent transfers reach.
                    const TrafficPhase* phases[] = {&dpPhase, &agPhase, &z3phase};
                    const double mult[] = {dpMult, dpMult, 1.0};
                    double busy = 0;
                    for (int k = 0; k < 3; ++k) {
                        const double bytes = mult[k] * phases[k]->load(e.id, dir);
                        if (bytes > 0)
                            busy += bytes / std::max(phases[k]->rateBps(e.id, dir), 1.0);
                    }
                    dirBusy[dir] += busy;
                    const double window = plan.zero_stage == 3 ? stepTime : maxDp;
                    peak = std::max(peak, std::min(1.0, ld / std::max(window, busy) / line));
                }
                if (le > 0) {
                    usesEP = true;
                    const double r = epPhase.rateBps(e.id, dir);
                    dirBusy[dir] += le / r;
                    peak = std::max(peak, std::min(1.0, r / line));
                }
            }
            u.bytes_per_step = std::max(dirBytes[0], dirBytes[1]);
            u.busy_s = std::max(dirBusy[0], dirBusy[1]);
            u.utilization = stepTime > 0 ? std::min(1.0, u.bytes_per_step / (line * stepTime)) : 0;
            u.peak_utilization = std::max(peak, u.utilization);
            if (usesPP)
                u.dims.push_back(Dim::PP);
            if (usesDP)
                u.dims.push_back(Dim::DP);
            if (usesEP)
                u.dims.push_back(Dim::EP);
            if (e.kind == EdgeKind::InterBuilding)
                ev.cross_building_bytes += dirBytes[0] + dirBytes[1];
            ev.links.push_back(std::move(u));
        }
        // Window-limited links: the transfers sharing a link in some phase
        // cannot fill it (too few flows for its RTT). Say so: it is a design
        // choice (more flows, a long-haul profile).
        for (const TopoEdge& e : edges) {
            if (e.kind != EdgeKind::InterBuilding)
                continue;
            const EdgeTransport& t = transport[std::size_t(e.id)];
            const double line = gbpsToBytesPerS(e.bandwidth_gbps) * t.tech.efficiency;
            const std::pair<const TrafficPhase*, const char*> phases[] = {
                {&p2p, "P2P"}, {&dpPhase, "DP"}, {&epPhase, "EP"}};
            for (const auto& [phase, what] : phases) {
                int dir = phase->load(e.id, 0) >= phase->load(e.id, 1) ? 0 : 1;
                if (phase->load(e.id, dir) <= 0)
                    continue;
                const double rate = phase->rateBps(e.id, dir);
                if (rate >= 0.95 * line)
                    continue;
                char buf[400];
                std::snprintf(buf, sizeof buf,
                              "link %s: %s traffic reaches %.0f of %.0f Gbit/s: %.0f concurrent "
                              "transfers x %d %s flows at %.1f ms RTT are window-limited; more "
                              "flows (plan link_technologies) or a long-haul profile fill it",
                              e.name.c_str(), what, rate * 8 / 1e9, e.bandwidth_gbps,
                              phase->connections(e.id, dir), t.tech.flows, t.tech.name.c_str(),
                              t.rtt_s * 1e3);
                ev.warnings.push_back(buf);
                break;
            }
        }
    }

    // ---- other warnings ----------------------------------------------------
    if (options.detail && m < pp)
        ev.warnings.push_back("schedule: " + std::to_string(m) + " microbatches for " +
                              std::to_string(pp) +
                              " pipeline stages: the pipeline never fills (bubble dominates)");
    if (options.detail && dp > 1 && plan.zero_stage < 3 && usedAlgo == CollectiveAlgo::Ring) {
        for (int s = 0; s < pp; ++s)
            if (spreads[std::size_t(s)].buildings > 1) {
                ev.warnings.push_back(
                    "collectives: DP uses a flat ring across buildings; hierarchical DP "
                    "(\"collectives\": {\"dp\": \"hierarchical\"}) sends less over the "
                    "inter-building links");
                break;
            }
    }
    if (options.detail && ev.gpus < cluster.totalGpus())
        ev.warnings.push_back("placement: the plan uses " + std::to_string(ev.gpus) + " of " +
                              std::to_string(cluster.totalGpus()) + " GPUs");

    // ---- timeline -------------------------------------------------------
    if (options.timeline) {
        Timeline& tl = ev.timeline;
        tl.stages = pp;
        tl.chunks = v;
        tl.microbatches = mb;
        tl.ops = std::move(st.pr.ops);
        for (int s = 0; s < pp; ++s) {
            const double endS = pr.end_s[std::size_t(s)];
            if (dpTime[std::size_t(s)] > 0) {
                TimelineOp op;
                op.kind = OpKind::DpSync;
                op.stage = s;
                op.start_s = dpStart[std::size_t(s)];
                op.end_s = dpEnd[std::size_t(s)];
                op.exposed_s = std::max(0.0, op.end_s - endS);
                tl.ops.push_back(op);
            }
            TimelineOp opt;
            opt.kind = OpKind::Optimizer;
            opt.stage = s;
            opt.start_s = dpEnd[std::size_t(s)];
            opt.end_s = opt.start_s + optTime[std::size_t(s)] + agExposed[std::size_t(s)];
            tl.ops.push_back(opt);
        }
        tl.makespan_s = stepTime;
    }
    return ev;
}

} // namespace sa

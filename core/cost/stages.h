#pragma once
// The stages of one evaluation, in the order docs/COST_MODEL.md draws them:
//
//   layout -> layer costs -> chunk times -> ZeRO-3 -> P2P -> pipeline
//          -> DP sync -> FLOPs -> breakdown -> memory -> link traffic
//          -> warnings -> timeline
//
// Each stage is a function of an input struct into an output struct. The
// stages the optimizer meets again and again with equal inputs (layout,
// transports, layer costs, ZeRO-3, P2P, DP collectives, the pipeline) are
// kept by Memo<In, Out> in the EvaluationCache, keyed by their input struct;
// an input that is an earlier stage's output is a Ref to it. The cluster
// enters through the root inputs (layout, transports, layer costs), each
// keyed by the Evaluator's id.
//
// Not a public interface: core/cost/evaluate.cpp wires these together.

#include "cost/collectives.h"
#include "cost/compute.h"
#include "cost/evaluation.h"
#include "cost/memo.h"
#include "cost/placement.h"
#include "cost/schedule.h"
#include "cost/traffic.h"
#include "model/cluster.h"
#include "model/model.h"
#include "model/plan.h"

#include <boost/container/small_vector.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sa {

class Topology;

// What every stage may read of the cluster: fixed for one Evaluator.
struct ClusterContext {
    const Cluster* cluster = nullptr;
    const Topology* topology = nullptr;
    std::uint64_t id = 0; // the Evaluator's: a new one may be made where an old one was
};

// Per GPU: scale-out goodput of a building's NIC and scale-up goodput of its
// NVLink, bytes/s; the per-message overhead of a collective, seconds.
double nicBytesPerSecond(const Building& b);
double nvlinkBytesPerSecond(const Building& b);
double collectiveAlpha();

// ---- layout ---------------------------------------------------------------

struct LayoutInput {
    std::uint64_t cluster = 0;
    Parallelism parallelism;
    std::vector<Dim> rank_order;
    std::vector<PlacementRun> runs;
    std::string plan_file; // names the plan in the placement's messages
    int dp_shard = 0;      // ZeRO's sharding group along dp (Plan::dpShard); 0: all of dp
    bool operator==(const LayoutInput&) const = default;
};

// Runs of replicas whose cells sit at the same pair of locations on the two
// sides of a pipeline boundary.
struct PairRun {
    Location a, b;
    int count = 0;
};

// The cell grid and what follows from it alone (with the cluster).
struct Layout {
    PlacementResult placed;
    std::vector<ReplicaBlock> blocks;
    // Per stage, lists as short as the buildings, held inline (building a
    // layout allocates per table, not per stage).
    std::vector<boost::container::small_vector<int, 4>> stageCounts; // [stage][building]: replicas
    std::vector<boost::container::small_vector<int, 4>>
        stageBuildings;             // [stage]: buildings holding it
    std::vector<int> stageBuilding; // [stage]: the building holding most of it
    // [stage]: its data-parallel group with CP, dp x cp members (Megatron's
    // get_data_parallel_group(with_context_parallel=True); torchtitan's
    // dp_shard_cp mesh): CP ranks hold the same weights and reduce their
    // gradients together. `dpGroups` such groups run at once, one per TP rank.
    // Under HSDP (dp_shard < dp) the group ZeRO shards over: dp_shard
    // consecutive DP ranks x cp, the spread of the one that spans the most
    // sites, and `dpGroups` counts the groups at that spread (one per TP
    // rank and identical sharding group).
    std::vector<GroupSpread> spreads;
    double dpGroups = 1;
    // HSDP only (empty otherwise): [stage] the group that all-reduces one
    // gradient shard across the dp / dp_shard replicas of the sharding
    // group (DP ranks dp_shard apart, one CP rank), and how many such
    // groups run at once at that spread.
    std::vector<GroupSpread> replicaSpreads;
    double replicaGroups = 1;
    // HSDP: [stage] the other sharding and replica groups, each distinct
    // spread with the groups at it (x tp, x tp x cp for the replicas): they
    // load the links beside the widest one, which prices the time.
    std::vector<std::vector<std::pair<GroupSpread, double>>> otherShards, otherReplicas;
    std::vector<int> spreadClass; // [stage]: first stage with the same group spread
    std::vector<boost::container::small_vector<PairRun, 4>>
        boundary; // [stage s]: pairs s -> (s + 1) % pp
    // [stage]: the slowest NIC and NVLink among the buildings holding it, and
    // the per-message overhead of a collective.
    std::vector<CollectiveEnv> stageEnv;
};
void buildLayout(const ClusterContext& ctx, const LayoutInput& in, Layout& out);

// ---- transports on every edge ---------------------------------------------

struct TransportInput {
    std::uint64_t cluster = 0;
    std::map<std::string, LinkOverride> overrides; // the plan's link_technologies
    std::vector<double> background_gbps = {};      // EvaluateOptions::background_gbps
    bool operator==(const TransportInput&) const = default;
};
using Transports = std::vector<EdgeTransport>;
void buildTransports(const ClusterContext& ctx, const TransportInput& in, Transports& out);

// ---- layer costs per building ---------------------------------------------

struct BuildingCostInput {
    std::uint64_t cluster = 0;
    int building = 0;
    LayerPlanKey plan;
    Model model;
    bool operator==(const BuildingCostInput&) const = default;
};
struct BuildingCosts {
    bool used = false; // holds a stage of this plan (set by the caller)
    const GpuModel* gpu = nullptr;
    double hbm_bytes_per_s = 0; // its GPU's achievable HBM rate (0: unknown GPU)
    LayerCost dense, moe;
    // With block recompute: the layers as they cost without it (the layers
    // it leaves alone).
    LayerCost dense_kept, moe_kept;
    EdgeCost embedding, logits;
    EdgeCost mtp; // one multi-token-prediction module's own work (Model::mtp_layers > 0)
};
void buildingCosts(const ClusterContext& ctx, const BuildingCostInput& in, BuildingCosts& out);

// Layers of every virtual stage (chunk c of stage s is vs = c * pp + s), and
// how many of them have experts.
struct ChunkLayers {
    std::vector<int> layers, moe; // [virtual stage]
    std::vector<int> first;       // [virtual stage]: the model index of its first layer
};
void chunkLayers(const Model& model, const std::vector<int>& stageLayers, int pp, int v,
                 ChunkLayers& out);

// ---- EP all-to-all across buildings and zones -----------------------------

struct EpExchangeInput {
    const Layout* layout = nullptr;
    const Transports* transports = nullptr;
    std::uint64_t transportVersion = 0;
    const std::vector<BuildingCosts>* costs = nullptr; // [building]
    int ep = 1;
    bool moe = false;
    // Members of a group inside one cell (Parallelism::expertRanksPerCell):
    // a group spans ep / that many replicas.
    int ep_in_cell = 1;
};
struct EpExchange {
    std::optional<TrafficPhase> phase; // every stage's all-to-all at once
    std::uint64_t transportVersion = 0;
    std::vector<double> cross_s; // [stage]: one all-to-all across locations, 0 if none
};
void epExchange(const ClusterContext& ctx, const EpExchangeInput& in, EpExchange& out);

// ---- chunk times ------------------------------------------------------------

struct ChunkTimes {
    double fwd = 0, bwd = 0, wgrad = 0;         // as scheduled
    double compute = 0, tp = 0, cp = 0, ep = 0; // per microbatch, fwd+bwd parts
    double params = 0, expert_params = 0;
    double activation = 0, transient = 0;
    double wgrad_held = 0;        // of activation, kept by a deferred weight gradient
    double fp8_copy_params = 0;   // of params, with Transformer Engine's FP8 weight copies
    double fp8_linear_params = 0; // of params, the FP8 linears' weights
};
struct ChunkTimesInput {
    const Layout* layout = nullptr;
    const std::vector<BuildingCosts>* costs = nullptr;
    const ChunkLayers* chunks = nullptr;
    const std::vector<double>* ep_cross_s = nullptr;
    const Model* model = nullptr;
    int pp = 1, v = 1;
    Recompute recompute = Recompute::None;
    RecomputeMethod recompute_method = RecomputeMethod::Uniform;
    int recompute_layers = 1;
    bool zero_bubble = false;
    // The share of the forward and backward ops that run as combined 1F1B
    // steps with the MoE all-to-all beside the other microbatch's compute
    // (plan ep_overlap; 0: none).
    double ep_overlap_steady = 0;
    // The weights' FP8 casts a microbatch pays, in whole casts of the
    // layer's weights (LayerCost::fwd_weight_cast_s and the others), its
    // forward, backward and recomputed forward: every time (1), Transformer
    // Engine's cache (1/m, 0, 0), or a cast of the GPU's shard per gather.
    struct WeightCasts {
        double fwd = 1, bwd = 1, recompute = 1;
    } weight_casts;
    // HBM bytes per parameter a microbatch's backward streams to add its
    // gradients to the accumulated ones (gradAccumulationBytes; 0 when the
    // GEMMs accumulate).
    double grad_accumulation_bytes = 0;
    // FSDP's copies a microbatch streams through HBM on the compute stream
    // (fsdpCopyBytes): per parameter and per parameter of the FP8 linears
    // (gathered in FP8), forward (copy-out of the gather) and backward (the
    // re-gather's copy-out and the gradients' copy into the reduce-scatter).
    struct FsdpCopies {
        double fwd = 0, fwd_fp8 = 0, bwd = 0, bwd_fp8 = 0;
        bool any() const { return fwd != 0 || bwd != 0; }
    } fsdp_copies;
};
// [stage][chunk]: the slowest building holding the stage.
using ChunkTable = std::vector<std::vector<ChunkTimes>>;
void chunkTimes(const ChunkTimesInput& in, ChunkTable& out);
double sumChunks(const std::vector<ChunkTimes>& v, double ChunkTimes::*field);

// ---- P2P between consecutive virtual stages --------------------------------

struct P2pInput {
    Ref<Layout> layout;
    Ref<Transports> transports;
    int virtual_stages = 1;
    double bytes_per_gpu = 0; // activations of one microbatch, scatter-gather 1/tp
    // The embedding gradients each rank of the last stage all-reduces with
    // its peer on the first stage once a step (embeddingSyncBytes; 0: none).
    double embedding_sync_bytes_per_gpu = 0;
    bool operator==(const P2pInput&) const = default;
};
struct P2p {
    std::optional<TrafficPhase> phase; // every boundary at once
    std::vector<double> fwd, bwd;      // [virtual boundary]
    std::vector<char> cross;           // [virtual boundary]
    double slot = 0;                   // the slowest boundary
    // The embedding gradients' all-reduce between the last and the first
    // stage: every pair at once, and how long the slowest pair takes.
    std::optional<TrafficPhase> embeddingSync;
    double embedding_sync_s = 0;
};
void p2pTransfers(const ClusterContext& ctx, const P2pInput& in, P2p& out);

// ---- ZeRO-3: parameter all-gathers and gradient reduce-scatters ------------

struct Zero3Input {
    Ref<Layout> layout;
    Ref<Transports> transports;
    Ref<P2p> p2p; // activations flowing on the same edges meanwhile
    CollectiveAlgo algo = CollectiveAlgo::Auto;
    double grad_bytes = 4;
    int v = 1, microbatches = 1;
    std::vector<double> stage_params;       // [stage]
    std::vector<double> stage_gather_bytes; // [stage]: its parameters as gathered
    bool operator==(const Zero3Input&) const = default;
};
struct Zero3 {
    std::vector<CollectiveCost> ag, rs; // [stage], one chunk's
    double shared = 0;                  // drain time of all stages' at once
    std::optional<TrafficPhase> step;   // what a whole step puts on the edges
};
void zero3Collectives(const ClusterContext& ctx, const Zero3Input& in, Zero3& out);
// The share of the SMs an overlapped NCCL collective takes from the stage's
// compute: the most any building holding the stage loses (ncclOverlapShare).
double stageOverlapShare(const Layout& layout, const std::vector<BuildingCosts>& costs, int stage);
// Under zero-bubble, ZeRO-3's DP stream per stage: its collectives per
// microbatch (every chunk's two all-gathers and reduce-scatter) and the
// longest reduce-scatter, which follows the stage's last weight gradient.
struct Zero3Stream {
    std::vector<double> per_microbatch_s, last_rs_s; // [stage]
};
// What the prefetch cannot hide stretches each chunk's forward and backward.
// With `stream` (zero-bubble's separate weight-gradient pass W), the
// backward's re-gather goes with B and the reduce-scatter runs beside W on
// the DP stream, whose load is written to `stream`. Each FSDP unit (one per
// layer, as torchtitan and DeepSpeed wrap them) is its own all-gather and
// reduce-scatter and pays its own latency.
void applyZero3(const Zero3& z3, const ChunkLayers& layers, const Layout& layout,
                const std::vector<BuildingCosts>& costs, int pp, int v, ChunkTable& chunks,
                Zero3Stream* stream);

// ---- the pipeline's input ---------------------------------------------------

void pipelineInput(const Plan& plan, const ChunkTable& chunks, const P2p& p2p, bool record,
                   PipelineInput& out);

// ---- DP / FSDP gradient sync -------------------------------------------------

struct DpCollectivesInput {
    Ref<Layout> layout;
    Ref<Transports> transports;
    // ZeRO-2's per-microbatch reduce-scatters run while activations flow:
    // they share the edges with one microbatch's P2P (ZeRO-0/1 sync after
    // the last backward, when the pipeline has drained).
    Ref<P2p> p2p;
    int zero_class = 0; // 0, 1, 2 or 3 (as memory and traffic see it)
    // The gradients are all-reduced (ZeRO-0, or plan grad_reduce_scatter
    // false), else reduce-scattered.
    bool all_reduce = false;
    CollectiveAlgo algo = CollectiveAlgo::Auto;
    double grad_bytes = 4;
    std::vector<double> stage_params;       // [stage]
    std::vector<double> stage_gather_bytes; // [stage]: its parameters as gathered
    CrossCompression compression;           // of the gradients where they cross buildings
    bool operator==(const DpCollectivesInput&) const = default;
};
struct DpCollectives {
    std::optional<TrafficPhase> reduce, gather; // gradients; ZeRO's parameter all-gather
    // HSDP: the all-reduce of each gradient shard across the replicas, once
    // a step (Layout::replicaSpreads), and its cost per stage; empty without.
    std::optional<TrafficPhase> replicaReduce;
    std::vector<CollectiveCost> arCost;
    std::vector<double> arShared; // [stage]: what its ring neighbours wait for on shared edges
    // With compression: the same gradient collectives uncompressed (same
    // algorithms), for the bytes the compression saves.
    std::optional<TrafficPhase> reduceUncompressed;
    std::vector<CollectiveCost> rsCost, agCost; // [stage]
    CollectiveAlgo used = CollectiveAlgo::Ring;
    std::vector<double> reduceShared, gatherShared; // [stage]: what ring neighbours wait for
};
void dpCollectives(const ClusterContext& ctx, const DpCollectivesInput& in, DpCollectives& out);

// The gradient buckets of a stage of `params` parameters (per GPU): the
// gradients at grad_reduce_bytes filled into buckets of dp_bucket_mib, each
// reduced on its own (dpTiming; HSDP's all-reduces across buildings, outer.cpp).
double gradientBuckets(double params, const Plan& plan);

struct DpTimingInput {
    const Plan* plan = nullptr;
    const Layout* layout = nullptr;
    const std::vector<BuildingCosts>* costs = nullptr;
    const DpCollectives* collectives = nullptr;
    const PipelineInput* pipeline = nullptr;
    const PipelineResult* simulated = nullptr;
    const std::vector<double>* stage_params = nullptr;
    const std::vector<double>* stage_gather_bytes = nullptr;
    // Weights kept in FP8 (Transformer Engine, plan fp8_param_gather): the
    // optimizer casts its shard of each stage's FP8 linears' weights,
    // fp8_cast_bytes an element (0: nothing to cast).
    const std::vector<double>* stage_fp8_params = nullptr;
    double fp8_cast_bytes = 0;
    // ZeRO-3 under zero-bubble (applyZero3): the DP stream's load.
    const Zero3Stream* zero3_stream = nullptr;
    const std::vector<int>* stage_layers = nullptr; // [stage]: FSDP's units under HSDP
    // The embedding gradients' all-reduce between the last and the first
    // stage (P2p::embedding_sync_s), after both have synced over DP.
    double embedding_sync_s = 0;
};
struct DpTiming {
    std::vector<double> start, end, time; // [stage]: the sync, overlapped with backward
    std::vector<double> gatherExposed;    // [stage]: ZeRO's all-gather before the next forward
    std::vector<double> optimizer;        // [stage]: the optimizer step
    std::vector<double> codec;            // [stage]: compression's encode/decode, per sync
    std::vector<double> replicaReduce;    // [stage]: HSDP's all-reduces across the replicas
    int critical = 0;                     // the stage that ends last
    double step_s = 0;
};
void dpTiming(const DpTimingInput& in, DpTiming& out);

// ---- FLOPs, breakdown, memory -----------------------------------------------

struct FlopsInput {
    const Model* model = nullptr;
    const Plan* plan = nullptr;
    const Layout* layout = nullptr;
    const std::vector<BuildingCosts>* costs = nullptr;
    double step_s = 0;
};
void flops(const FlopsInput& in, Evaluation& ev);

struct BreakdownInput {
    const ChunkTable* chunks = nullptr;
    const PipelineResult* simulated = nullptr;
    const PipelineResult* withoutP2p = nullptr; // the same pipeline with free P2P
    const DpTiming* dp = nullptr;
    int microbatches = 1;
};
// Of stage s (the critical stage: in.dp->critical).
Breakdown breakdown(const BreakdownInput& in, int s);

struct MemoryInput {
    const Plan* plan = nullptr;
    const Layout* layout = nullptr;
    const std::vector<BuildingCosts>* costs = nullptr;
    const ChunkTable* chunks = nullptr;
    const std::vector<int>* stage_layers = nullptr;
    const PipelineResult* simulated = nullptr;
    const std::vector<double>* stage_params = nullptr;
    const DpCollectives* collectives = nullptr; // top-k's error-feedback residual
};
// Per stage; the warning when the worst stage does not fit.
void memory(const MemoryInput& in, MemoryUsage& out, std::vector<std::string>& warnings);

// ---- link traffic -------------------------------------------------------------

struct LinkTrafficInput {
    const Plan* plan = nullptr;
    const Transports* transports = nullptr;
    const TrafficPhase* p2p = nullptr;
    double p2pSlot = 0;
    const TrafficPhase* dpReduce = nullptr;
    const TrafficPhase* dpReduceUncompressed = nullptr; // null without compression
    const TrafficPhase* dpGather = nullptr;
    const TrafficPhase* zero3Step = nullptr; // null unless ZeRO-3 with dp > 1
    const TrafficPhase* ep = nullptr;
    const ChunkLayers* chunks = nullptr;
    const DpTiming* dp = nullptr;
    int microbatches = 1;
    bool detail = true; // every edge with its busy time; else cross-building bytes only
    const TrafficPhase* dpReplica = nullptr;     // HSDP's all-reduce across replicas, once a step
    const TrafficPhase* embeddingSync = nullptr; // first and last stage's embedding, once a step
};
// Bytes per step on every edge (lean: the inter-building ones, summed into
// cross_building_bytes; detailed: each as a LinkUsage with busy time and
// peak utilisation), and the warnings for window-limited links.
void linkTraffic(const ClusterContext& ctx, const LinkTrafficInput& in, Evaluation& ev);

// ---- warnings and timeline --------------------------------------------------

void planWarnings(const ClusterContext& ctx, const Plan& plan, const Layout& layout,
                  const DpCollectives& dp, Evaluation& ev);
// Layers that wait for the host to issue their kernels (docs/COST_MODEL.md
// "Host"), per building that holds a stage.
void hostWarnings(const ClusterContext& ctx, const Plan& plan,
                  const std::vector<BuildingCosts>& costs, Evaluation& ev);
// What the validation says of the plan's class of runs where the model is
// known to be optimistic (docs/VALIDATION.md): MoE layers whose tokens are
// exchanged between GPUs (expert parallelism); else BF16 GEMMs on Hopper.
// And, for each GPU model of an architecture the validation holds no run
// on (neither Ampere nor Hopper), that its kernel rates are unchecked.
void accuracyWarnings(const Model& model, const Plan& plan, const std::vector<BuildingCosts>& costs,
                      Evaluation& ev);

void timeline(const PipelineResult& simulated, std::vector<TimelineOp>&& ops, const DpTiming& dp,
              int pp, int v, int microbatches, Timeline& out);

} // namespace sa

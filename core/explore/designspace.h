#pragma once
// The optimizer's design space: every plan it may try for one cluster, model
// and base plan, as a product of axes.
//
// A *structure* fixes the parallel degrees and the micro batch
// (tp, cp, pp, dp, ep, micro_batch_sequences); the global batch, sequence
// length and the other switches come from the base plan. Each structure has
// its own choices on the axes below; a Candidate picks one choice per axis.
// The axes are listed from the most to the least influential, which is the
// order the staged search enumerates them in (docs/OPTIMIZER.md):
//
//   placement     which dimension crosses each building boundary: the rank
//                 orders [tp,cp,pp,dp] (DP crosses) and [tp,cp,dp,pp] (PP
//                 crosses), and explicit placements of whole stages per
//                 building or per region (PP across regions, DP between the
//                 buildings of one region), with even and uneven splits
//   schedule      1f1b, interleaved (virtual stages), zero-bubble, gpipe,
//                 each with and without latency-aware warm-up (CrossPipe)
//   recompute     none, selective, full
//   zero          ZeRO stage
//   layers        even split, or balanced (lighter first/last stages for the
//                 embedding and logits, slower buildings get fewer layers)
//   dp-collective NCCL's own choice (ring or tree), ring, tree, hierarchical
//   cp-exchange   with cp > 1, how CP exchanges the attention's inputs:
//                 Transformer Engine's ring, all-gather and all-to-all (the
//                 last where the heads split over cp), or, for a plan on
//                 PyTorch's ring, its two rotations (Plan::cp_ring)
//   link:NAME     per inter-building link: technology and flow count, and
//                 the NCCL buffer and channel values the user allows
//   routing       the routing policies the user allows (Plan::routing)
//
// Choice 0 of every axis is the base plan's value where the axis offers it,
// so a candidate with all zeros is the base plan's setting of that structure.
// Candidates compare lexicographically (structure, then choices): the stable
// key that breaks ties and makes the search deterministic.

#include "model/scenario.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sa {

enum class SpaceSize {
    Default, // the usual choices per axis (docs/OPTIMIZER.md)
    Full     // every option: more CP and micro batch sizes, gpipe, ZeRO-0, all uneven splits
};

struct DesignSpaceOptions {
    SpaceSize size = SpaceSize::Default;
    // GPUs the job may use (0 = the base plan's tp*cp*pp*dp, or the whole
    // cluster without a base plan).
    std::int64_t gpu_budget = 0;
    // Explicit value lists replace the derived ones (empty = derived).
    std::vector<int> tp, cp, pp, ep, micro_batch;
    // Expert TP degrees (0 = tp); empty = tp, and 1 for MoE models under TP
    // with sequence parallelism.
    std::vector<int> etp;
    std::vector<int> zero_stages;
    std::vector<Recompute> recompute;
    std::vector<Schedule> schedules;
    std::vector<CollectiveAlgo> dp_algos;
    bool vary_placement = true;      // explicit per-building / per-region placements
    bool vary_layers = true;         // balanced layer splits
    bool vary_links = true;          // link technologies and flows
    bool vary_latency_hiding = true; // derived schedules also with latency-aware warm-up
    int max_link_axes = 16;          // at most this many inter-building links get an axis
    // A recipe's restrictions (explore/baselines.h); empty = no restriction.
    // Placement kinds: "as-given" (the base plan's own), "dp-across",
    // "pp-across", "stages", "regions".
    std::vector<std::string> placement_kinds;
    // Technologies the link axes may set; "" is the link as built.
    std::vector<std::string> link_technologies;
    // NCCL knobs the link axes may also set where one transfer is window-
    // limited on the link (NCCL_BUFFSIZE in MiB, NCCL_NCHANNELS_PER_NET_PEER);
    // empty = the technology's own.
    std::vector<double> nccl_buffsize_mib;
    std::vector<int> nccl_channels;
    // Routings the plans may ask for (an axis when not empty; the base plan's
    // own, or the cluster's, is always choice 0).
    std::vector<Routing> routings;
    // Outer syncs the plans may use (an axis when not empty; the base plan's
    // own, or none, is always choice 0; std::nullopt: synchronous DP).
    std::vector<std::optional<OuterSync>> outer_syncs;
    // Plans whose structures (degrees and micro batch) the space must hold,
    // so that locate() finds them: the baselines that seed the search.
    std::vector<Plan> seeds;
};

// The outer-sync axis from its three lists, as `scaleacross optimize`
// --diloco H,... --streaming-fragments F,... --hsdp builds it: synchronous DP
// (std::nullopt) first whenever there is any choice, then for each H a DiLoCo
// sync every H inner steps followed by its Streaming DiLoCo variants with
// each fragment count F <= H, then HSDP. Empty when neither H nor HSDP is
// given (fragments alone add nothing).
std::vector<std::optional<OuterSync>> outerSyncChoices(const std::vector<int>& diloco_steps,
                                                       const std::vector<int>& fragments,
                                                       bool hsdp);

// One point of the space. `choice` has one entry per axis.
struct Candidate {
    std::uint32_t structure = 0;
    std::vector<std::uint16_t> choice;
    auto operator<=>(const Candidate&) const = default;
    bool operator==(const Candidate&) const = default;
};

struct Structure {
    Parallelism parallelism;
    std::int64_t micro_batch = 1;
    std::int64_t microbatches = 1;
};

struct PlacementChoice {
    std::string label;
    std::vector<Dim> rank_order;
    std::vector<PlacementRun> runs;
    // Relative compute speed of the slowest building holding each stage
    // (empty when every stage spans all buildings): for balanced layers.
    std::vector<double> stage_speed;
};

// Given: the base plan's explicit layers per stage (its structure only).
enum class LayerSplit { Even, Balanced, Given };

// A ZeRO stage and, for ZeRO-3, whether FSDP reshards after forward.
struct ZeroChoice {
    int stage = 1;
    FsdpReshard reshard = FsdpReshard::Default; // ZeRO-3 only
    bool operator==(const ZeroChoice&) const = default;
};

// A CP exchange: plan cp_ring and, for Transformer Engine's ring, the
// all-to-all group of its hierarchical form (cp_a2a_size; 1: the plain ring).
struct CpExchangeChoice {
    CpRing ring = CpRing::TeP2p;
    int a2a = 1;
    bool operator==(const CpExchangeChoice&) const = default;
};

struct LinkChoice {
    // The plan's override on the link (all empty / 0: the link as built).
    LinkOverride setting;
    std::string label;
};

class DesignSpace {
public:
    enum Axis : int {
        kPlacement = 0,
        kSchedule,
        kRecompute,
        kZero,
        kLayers,
        kDpAlgo,
        kCpExchange,
        kFirstLink
    };

    DesignSpace(const Cluster& cluster, const Model& model, const Plan& base,
                const DesignSpaceOptions& options = {});

    const Cluster& cluster() const { return cluster_; }
    const Model& model() const { return model_; }
    const Plan& base() const { return base_; }
    std::int64_t gpuBudget() const { return budget_; }

    int axisCount() const {
        return kFirstLink + int(links_.size()) + (routings_.empty() ? 0 : 1) +
               (outerSyncs_.empty() ? 0 : 1);
    }
    std::string axisName(int axis) const;
    std::size_t structureCount() const { return structures_.size(); }
    const Structure& structure(std::size_t s) const { return structures_[s].structure; }
    int choices(std::size_t s, int axis) const;
    std::string choiceLabel(std::size_t s, int axis, int choice) const;

    // Candidates in the whole space (a double: it may exceed 2^64).
    double size() const;
    // Candidates of structure s with the axes at or after `firstFixed` held
    // at a single value.
    std::uint64_t prefixCount(std::size_t s, int firstFixed) const;

    // Cheap rejection before evaluation: nullptr when the candidate may be
    // feasible, else the reason (a static string, counted by the optimizer).
    // Never rejects a candidate the cost model would find feasible: the
    // memory check is a lower bound (static state and one microbatch).
    const char* precheck(const Candidate& c) const;

    // The lower bound on the worst stage's memory per GPU that precheck uses.
    double memoryLowerBoundGiB(const Candidate& c) const;

    // The complete plan of a candidate (valid by construction); `describe`
    // puts the label into its description (off in the hot loop).
    Plan plan(const Candidate& c, bool describe = true) const;
    // The same into `p`, which must be the base plan or a plan this space
    // wrote (only what candidates vary is overwritten; the description is
    // left alone). Reuses p's storage: no allocation in the hot loop.
    void planInto(const Candidate& c, Plan& p) const;
    // "tp8 cp1 pp16 dp768 mb1 | dp-across | interleaved v2 | selective | zero2 | ..."
    std::string label(const Candidate& c) const;
    // The candidate whose plan is `p` (degrees, micro batch, placement,
    // schedule, recompute, ZeRO, layer split, DP collective, CP exchange and
    // link settings all equal), or nullopt when the space does not hold it.
    std::optional<Candidate> locate(const Plan& p) const;
    // The compute a candidate runs per step relative to the model FLOPs, as
    // a lower bound: full recompute runs every layer's forward again.
    double hardwareFlopsFactor(const Candidate& c) const;
    // The link axes (one per inter-building link that has choices).
    bool isLinkAxis(int axis) const {
        return axis >= kFirstLink && axis < kFirstLink + int(links_.size());
    }
    // The routing axis (after the link axes), -1 without one.
    int routingAxis() const { return routings_.empty() ? -1 : kFirstLink + int(links_.size()); }
    // The outer-sync axis (last), -1 without one.
    int outerSyncAxis() const {
        return outerSyncs_.empty() ? -1
                                   : kFirstLink + int(links_.size()) + (routings_.empty() ? 0 : 1);
    }
    const std::string& linkOfAxis(int axis) const {
        return linkNames_[std::size_t(axis - kFirstLink)];
    }

    // (tp, cp, pp, ep, micro batch) tuples rejected before any candidate was
    // formed, by reason.
    const std::map<std::string, std::int64_t>& structurePruned() const { return structurePruned_; }

private:
    struct StructureAxes {
        Structure structure;
        std::vector<PlacementChoice> placements;
        std::vector<Schedule> schedules;
        std::vector<Recompute> recompute;
        std::vector<ZeroChoice> zero;
        std::vector<LayerSplit> layers;
        std::vector<CollectiveAlgo> dp_algos;
        std::vector<CpExchangeChoice> cp_rings;
        // Activation bytes per layer and microbatch for each recompute
        // choice (dense and MoE layers: the smaller of the two).
        std::vector<double> activation_per_layer;
        std::vector<int> even; // the even split (earlier stages take the remainder)
        // Balanced splits by [placement][schedule] (empty without the axis).
        std::vector<std::vector<std::vector<int>>> balanced;
    };

    // The degree values structures are formed from (each list sorted), and
    // what of the cluster bounds them.
    struct Degrees {
        std::vector<int> tp, cp, pp, micro_batch;
        int host_gcd = 0;                  // of gpus_per_host: tp must divide it
        std::int64_t biggest_building = 0; // GPUs: a tp*cp cell must fit in one
    };

    // Every (tp, cp, pp, dp, ep, micro batch) tuple that passes the checks,
    // with its axes; the others are counted in structurePruned_.
    void buildStructures(const DesignSpaceOptions& o);
    Degrees degrees(const DesignSpaceOptions& o) const;
    // The reason (tp, cp, pp, micro batch) cannot work, or nullptr.
    const char* unfitDegrees(const Degrees& d, int tp, int cp, int pp, int mb) const;
    std::vector<int> dpChoices(int tp, int cp, int pp, int mb) const;
    std::vector<int> epChoices(const Parallelism& par, const DesignSpaceOptions& o) const;
    std::vector<int> etpChoices(int tp, const DesignSpaceOptions& o) const;
    void addStructure(const Parallelism& par, int mb, const DesignSpaceOptions& o);
    void pruneStructure(const char* why) { ++structurePruned_[why]; }
    void buildSchedules(StructureAxes& s, const DesignSpaceOptions& o) const;
    // Recompute and ZeRO choices, and the activation bytes precheck needs.
    void buildMemoryAxes(StructureAxes& s, const DesignSpaceOptions& o) const;
    void buildPlacements(StructureAxes& axes, const DesignSpaceOptions& o) const;
    void buildLinks(const DesignSpaceOptions& o);
    void buildRoutings(const DesignSpaceOptions& o);
    void buildOuterSyncs(const DesignSpaceOptions& o);
    void buildBalancedSplits(StructureAxes& axes) const;
    bool isBaseStructure(const Structure& st) const;
    // Empty for the cost model's even split.
    const std::vector<int>& layerSplit(const StructureAxes& axes, const Candidate& c) const;
    double staticMemoryLowerBoundGiB(const StructureAxes& axes, const Candidate& c,
                                     const std::vector<int>& layers) const;

    Cluster cluster_;
    Model model_;
    Plan base_;
    std::int64_t budget_ = 0;
    std::vector<StructureAxes> structures_;
    std::vector<std::string> linkNames_;
    std::vector<std::vector<LinkChoice>> links_;
    // Routing choices (nullopt: the cluster's); empty without the axis.
    std::vector<std::optional<Routing>> routings_;
    std::vector<std::optional<OuterSync>> outerSyncs_;
    std::map<std::string, std::int64_t> structurePruned_;
    double maxMemoryGiB_ = 0; // largest GPU memory of the cluster (a safe bound)
    double logitsLayers_ = 0; // logits cost in layer equivalents (balanced split)
};

} // namespace sa

#pragma once
// The result of evaluating a scenario: immutable once built, shared by views
// as std::shared_ptr<const Evaluation>.

#include "model/plan.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sa {

enum class OpKind {
    Forward,      // forward of one microbatch through one (virtual) stage
    Backward,     // backward (input gradient; also weight gradient unless split)
    WeightGrad,   // zero-bubble's deferred weight-gradient pass
    Recompute,    // full recompute's extra forward, shown inside Backward in 1F1B
    SendForward,  // P2P activations to the next stage
    SendBackward, // P2P gradients to the previous stage
    DpSync,       // DP/FSDP reduce-scatter / all-reduce / all-gather
    Optimizer     // optimizer step
};
const char* toString(OpKind k);

struct TimelineOp {
    OpKind kind = OpKind::Forward;
    int stage = 0;       // physical pipeline stage
    int chunk = 0;       // virtual stage (model chunk) on that stage
    int microbatch = -1; // -1 for ops not tied to one microbatch
    double start_s = 0;
    double end_s = 0;
    bool cross_building = false; // P2P that crosses a building boundary
    double exposed_s = 0;        // for DpSync: the part not hidden behind compute
};

struct Timeline {
    int stages = 0;
    int chunks = 1;
    int microbatches = 0;
    double makespan_s = 0;
    std::vector<TimelineOp> ops; // ops of the critical (slowest) replica
};

struct Breakdown {
    double compute_s = 0; // forward + backward (+ recompute) on the critical stage
    double tp_exposed_s = 0;
    double cp_exposed_s = 0;
    double ep_exposed_s = 0;
    double pp_exposed_s = 0; // P2P time on the critical path
    double dp_exposed_s = 0; // DP/FSDP traffic not hidden behind backward
    double bubble_s = 0;     // idle time of the critical stage in the pipeline
    double optimizer_s = 0;
};

struct MemoryUsage {
    double weights_gib = 0;
    double gradients_gib = 0;
    double optimizer_gib = 0;
    double activations_gib = 0;
    double other_gib = 0;        // workspace, fragmentation
    double peak_gib_per_gpu = 0; // worst stage
    double capacity_gib = 0;     // of the GPU holding the worst stage
    bool fits = true;
    int worst_stage = 0;
    double compression_gib = 0; // top-k's error-feedback residual (in the peak)
    std::vector<double> per_stage_peak_gib;
    std::vector<double> per_stage_capacity_gib;
};

enum class LinkTier { InterBuilding, BuildingUplink, ZoneUplink };
const char* toString(LinkTier t);

struct LinkUsage {
    std::string name;
    LinkTier tier = LinkTier::InterBuilding;
    int edge = -1; // Topology edge id
    double capacity_gbps = 0;
    double latency_ms = 0;
    std::string technology;
    double bytes_per_step = 0;   // one direction, the busier one
    double busy_s = 0;           // time the link carries traffic in a step
    double utilization = 0;      // mean over the step: bytes / (capacity * step)
    double peak_utilization = 0; // during its busiest phase
    std::vector<Dim> dims;       // parallel dimensions that use it
    // Others' traffic on the link (the cluster link's background_gbps, other
    // jobs' mean rates), Gbit/s, in the busier direction of this job's
    // traffic (the larger one when the job sends nothing): utilization and
    // peak_utilization are the job's share of capacity_gbps, the totals add
    // the background.
    double background_gbps = 0;
    double total_utilization = 0;
    double total_peak_utilization = 0;
    double direction_bytes_per_step[2] = {0, 0}; // each direction (0: a -> b, or up)
};

// The plan's "compression" of DP gradients across buildings, per step.
struct CompressionReport {
    CompressionMethod method = CompressionMethod::Bf16;
    bool applied = false;            // some gradient traffic crossing buildings was compressed
    double bytes_saved_per_step = 0; // over inter-building links, both directions (as
                                     // cross_building_bytes counts them)
    double compute_s = 0;            // encode/decode passes per step, critical stage
    double residual_gib = 0;         // error-feedback buffer per GPU, worst stage
};

// The plan's "outer_sync" (low-communication DP across workers;
// docs/RUN.md): one step's average with the outer syncs spread over the
// steps between them.
struct OuterSyncReport {
    OuterSyncMethod method = OuterSyncMethod::Diloco;
    int workers = 1;     // groups of replicas by the buildings they occupy
    int inner_steps = 1; // H
    int fragments = 1;
    double inner_step_s = 0;       // the slowest worker's step
    double sync_s = 0;             // one outer sync (one fragment), alone on the links
    double exposed_per_step_s = 0; // what the outer syncs add to an average step
    double bytes_per_sync = 0;     // over inter-building links, both directions
    // Relative loss over synchronous DP at equal tokens, and the tokens
    // needed for synchronous DP's loss, as a multiple of its tokens
    // (docs/RUN.md "Convergence"); 1 for hsdp.
    double loss_penalty = 0;
    double token_multiplier = 1;
    bool penalty_from_curve = true; // false: the plan's loss_penalty
};

// Failures, checkpoints and stragglers (docs/RUN.md "Goodput").
struct GoodputReport {
    double job_mtbf_s = 0;            // mean time between interruptions of the whole job
    double checkpoint_bytes = 0;      // one checkpoint (weights and optimizer state)
    double checkpoint_write_s = 0;    // the write, slowest building
    double checkpoint_blocking_s = 0; // what a step waits for (async: the host copy)
    double restart_s = 0;             // restart plus the checkpoint read
    std::int64_t interval_steps = 0;  // steps between checkpoints
    double interval_s = 0;
    bool interval_optimal = true;  // from Young/Daly, not the plan
    double lost_per_failure_s = 0; // restart and expected rework
    double straggler_s = 0;        // what one step waits for stragglers
    // Degraded links: the expected extra per step, sum over links of
    // degraded_fraction x (the step with that link degraded - the step).
    double degraded_links_s = 0;
    double goodput = 1; // useful training time / wall time
};

// Prices and power (docs/RUN.md "Cost and energy"): per step, and for the
// run when the plan has a token budget.
struct CostReport {
    double cost_usd_per_step = 0;
    double energy_kwh_per_step = 0;
    double gpu_power_w = 0;       // mean per GPU at the modelled utilisation
    double facility_power_kw = 0; // the job's draw with hosts, network and PUE
    double transport_usd_per_step = 0;
    // Per million tokens trained, with goodput (restarts and rework paid).
    double usd_per_mtok = 0;
    double kwh_per_mtok = 0;
    double time_s_per_mtok = 0;
    bool priced = false; // some building has gpu_hour_usd or a link a price
};
struct RunReport {
    double tokens = 0; // the plan's token_budget (times the outer-sync multiplier for
                       // time_to_loss: tokens_to_loss)
    double steps = 0;
    double time_s = 0;         // wall clock to train `tokens`, with goodput
    double tokens_to_loss = 0; // to reach the target loss
    double time_to_loss_s = 0;
    double target_loss = 0; // the plan's, or synchronous DP's on token_budget
    double cost_usd = 0;
    double energy_kwh = 0;
    double restarts = 0; // expected interruptions over time_s
};

struct Evaluation {
    double step_time_s = 0;
    double tokens_per_s = 0;
    double mfu = 0;
    double hfu = 0;
    double tflops_per_gpu = 0; // model FLOPs per GPU per second / 1e12
    double model_flops_per_step = 0;
    double hardware_flops_per_step = 0;
    std::int64_t gpus = 0;
    std::int64_t microbatches = 0;
    double cross_building_bytes = 0; // sum over inter-building links
    Breakdown breakdown;             // of the critical stage (the one that ends last)
    // The same for every stage: where a stage's own work differs from the
    // critical one's (an MoE stage's all-to-all behind a dense first stage).
    std::vector<Breakdown> stage_breakdown;
    MemoryUsage memory;
    std::vector<LinkUsage> links;
    std::vector<std::string> warnings;
    Timeline timeline;
    std::optional<CompressionReport> compression; // plans with "compression" only
    std::optional<OuterSyncReport> outer_sync;    // plans with "outer_sync" only
    GoodputReport goodput;
    CostReport cost;
    std::optional<RunReport> run; // plans with a token_budget (or a target_loss)
    // The step with each degraded link at its degraded bandwidth (links with
    // degraded_fraction > 0, in cluster order); read by runReports.
    struct DegradedStep {
        std::string link;
        double fraction = 0;
        double step_time_s = 0;
    };
    std::vector<DegradedStep> degraded_steps;
    // Parameters per GPU of each stage (after TP/EP sharding, before ZeRO),
    // and the expert part of them.
    std::vector<double> stage_params, stage_expert_params;
    // Per-stage facts for views.
    std::vector<int> stage_building;         // building holding most of each stage
    std::vector<std::int64_t> building_gpus; // the job's GPUs in each building of the cluster
    std::vector<int> layers_per_stage;
    // HSDP (plan dp_shard): the critical stage's all-reduces of its gradient
    // shards across the replicas in a step, alone (every bucket or FSDP
    // unit with its own latency); 0 without HSDP.
    double replica_reduce_s = 0;
};

} // namespace sa

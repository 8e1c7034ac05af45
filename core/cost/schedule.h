#pragma once
// Pipeline schedules simulated as a dependency graph: every forward,
// backward (and zero-bubble weight-gradient) op of every microbatch on every
// (virtual) stage, in the order the schedule issues them on each stage,
// starting when its stage is free and its input has arrived over P2P.
// Uneven stages and cross-building P2P latency on the critical path show up
// by construction; the classic bubble (p-1)/(m+p-1) falls out for equal
// stages and free P2P.

#include "cost/evaluation.h"
#include "model/plan.h"

#include <vector>

namespace sa {

struct PipelineInput {
    ScheduleKind kind = ScheduleKind::OneFOneB;
    int stages = 1;
    int chunks = 1; // virtual stages per physical stage
    int microbatches = 1;
    // The per-chunk tables below are flat, [stage * chunks + chunk] (at()),
    // so that filling and comparing an input allocates once per table.
    // Durations of one microbatch, seconds. With zero-bubble `bwd` is the
    // input-gradient pass and `wgrad` the deferred weight gradient;
    // otherwise `bwd` includes the weight gradient and wgrad is 0 (empty =
    // all 0).
    std::vector<double> fwd, bwd, wgrad;
    // Activation bytes one microbatch keeps until its backward (empty = 0).
    std::vector<double> activation_bytes;
    // Of those, what zero-bubble's deferred weight gradient keeps after the
    // backward (empty = none). ZB-H1 (Qi et al. 2024, Sec. 3.1): a stage
    // runs its pending weight gradients before a forward that would take it
    // past 1F1B's activation memory.
    std::vector<double> wgrad_held_bytes;
    // Per virtual boundary v -> v+1 (v = chunk * stages + stage): P2P time of
    // activations forward and of gradients backward, and whether it crosses
    // buildings. Size stages * chunks - 1.
    std::vector<double> p2p_fwd, p2p_bwd;
    std::vector<char> p2p_cross;
    // Blocking P2P (plan p2p_overlap false): a stage that sends after an op
    // is busy until the send completes (Megatron-LM's p2p_communication.py
    // _communicate waits on its requests; docs/COST_MODEL.md "Pipeline
    // schedule"). Under interleaving, Megatron's steady state exchanges after
    // each forward-backward pair: the forward's output leaves after the
    // backward, and the next forward waits for the next backward's gradient
    // too. false: sends overlap the stage's next op.
    bool blocking_p2p = false;
    bool record = true; // keep every op for the timeline
    // Per stage: forwards issued beyond the schedule's usual warm-up
    // (latency hiding); empty = none.
    std::vector<int> extra_warmup;
    // Entry (stage, chunk) of one of the tables above; 0 for an empty table.
    double at(const std::vector<double>& table, int stage, int chunk) const {
        return table.empty() ? 0.0
                             : table[std::size_t(stage) * std::size_t(chunks) + std::size_t(chunk)];
    }
    bool operator==(const PipelineInput&) const = default;
};

struct PipelineResult {
    double makespan_s = 0;
    bool ok = true;             // false if the order deadlocked (a bug, reported as a warning)
    std::vector<double> busy_s; // per stage, sum of op durations
    std::vector<double> end_s;  // per stage, end of its last op
    std::vector<double> last_bwd_start_s;  // per stage, start of the final microbatch's backward
                                           // (first chunk to get there)
    std::vector<double> first_bwd_start_s; // per stage, start of its first backward
    std::vector<double> peak_activation_bytes; // per stage
    std::vector<int> peak_in_flight;           // per stage, chunk-microbatches alive at once
    std::vector<TimelineOp> ops;
};

PipelineResult simulatePipeline(const PipelineInput& in);

// Issue order of forward (true) / backward (false) ops on one stage:
// (is_forward, chunk, microbatch) triples. Exposed for tests.
struct IssuedOp {
    bool forward;
    int chunk;
    int microbatch;
};
std::vector<IssuedOp> stageOrder(ScheduleKind kind, int stages, int chunks, int microbatches,
                                 int stage, int extraWarmup = 0);

// Buffers simulatePipeline reuses from one call to the next (one per thread).
struct PipelineScratch {
    struct PendingW {
        int chunk, mb;
    };
    // Every stage's issue order, stage after stage, for this shape:
    bool ordersValid = false;
    ScheduleKind kind = ScheduleKind::OneFOneB;
    int stages = 0, chunks = 0, microbatches = 0;
    std::vector<int> extraWarmup;
    std::vector<IssuedOp> orders;
    std::vector<std::size_t> orderBegin; // [stage], size stages + 1
    // [stage]: the steady state's forward-backward pairs, orders[steadyBegin,
    // steadyEnd) (the warm-up's forwards before, the cool-down's backwards after)
    std::vector<std::size_t> steadyBegin, steadyEnd;
    std::vector<double> fEnd, bEnd;        // [virtual stage * microbatches + microbatch]
    std::vector<std::size_t> next;         // [stage] next op to issue
    std::vector<double> freeAt, alive;     // [stage]
    std::vector<int> aliveCount;           // [stage]
    std::vector<PendingW> pendingW;        // [stage * microbatches * chunks ...], a queue per stage
    std::vector<std::size_t> wHead, wTail; // [stage]
    struct Cost {
        double fwd, bwd, wgrad, activation, held;
    };
    std::vector<double> aliveLimit; // [stage]: 1F1B's peak activation bytes (zero-bubble)
    std::vector<Cost> costs;        // [stage * chunks + chunk]
};

// The same into `out`, reusing its vectors and `scratch` (no allocation once
// they have grown).
void simulatePipeline(const PipelineInput& in, PipelineResult& out, PipelineScratch& scratch);

// Forwards stage s of p runs before its first backward under 1F1B (v 1) or
// Megatron's interleaved schedule with v chunks, m microbatches
// (schedules.py: (p - s - 1) * 2 + (v - 1) * p when interleaved).
int warmupForwards(int p, int v, int m, int s);

} // namespace sa

#pragma once
// The optimizer: a parallel search (oneTBB) of the design space for the
// plans with the best step time, cost or cross-building traffic.
//
// The space's candidates are cut into coarse partitions of fixed size;
// tbb::parallel_for runs them, each thread keeps its own top-K and Pareto
// set, and the sets are merged at the end. Every comparison breaks ties on
// the candidate's stable key, so the answer is the same for any number of
// threads. Two strategies (docs/OPTIMIZER.md):
//
//   exhaustive  every candidate, when the space (after cheap pruning) fits
//               the evaluation budget;
//   staged      otherwise: every combination of the leading axes (structure,
//               placement, schedule, ...) that fits the budget, the other
//               axes at their first choice that passes the cheap checks;
//               then coordinate descent over all axes from the best seeds.
//
// Shards: with shard_count N, shard I takes the partitions p with
// p % N == I (and descends from its own seeds); mergeResults joins them.

#include "cost/evaluate.h"
#include "explore/baselines.h"
#include "explore/designspace.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sa {

enum class Objective {
    StepTime,           // seconds per step
    Cost,               // $ for the run (per step without a token budget) with goodput;
                        // GPU-seconds where the cluster has no prices
    CrossBuildingBytes, // bytes over inter-building links per step (then step time)
    TimeToTokens,       // wall clock for the plan's token budget (per step without one)
    TimeToLoss,         // wall clock to the target loss (outer sync's extra tokens)
    Energy              // kWh for the run (per step without a token budget)
};
inline constexpr Objective kAllObjectives[] = {
    Objective::StepTime,     Objective::Cost,       Objective::CrossBuildingBytes,
    Objective::TimeToTokens, Objective::TimeToLoss, Objective::Energy};
const char* toString(Objective o);
std::optional<Objective> objectiveFromString(const std::string& s);

struct OptimizerOptions {
    Objective objective = Objective::StepTime;
    int top_k = 10;
    int threads = 0; // 0 = all cores (oneTBB's default)
    int shard_index = 0;
    int shard_count = 1;
    // Candidates that may be evaluated exhaustively (after cheap pruning);
    // beyond it the staged strategy runs. About 0.1 s on two cores for
    // Llama 3 405B on the three-building sample (BENCHMARKS.md); larger
    // budgets enumerate more axes.
    std::int64_t max_evaluations = 150000;
    int seeds = 6;       // starting points of the coordinate descent
    int max_rounds = 12; // descent rounds per seed
    // The baselines (explore/baselines.h) are computed first and seed the
    // search, so that its best is never worse than any of them.
    bool baselines = true;
    // Evaluation budget of each baseline recipe's search (0: max_evaluations
    // / 8, at least 500).
    std::int64_t baseline_evaluations = 0;
    // Baselines computed beforehand (computeBaselines with baselineOptions()
    // of these options, possibly on another base plan: the explorer's are
    // those of the scenario as opened, so that they stay put while the plan
    // is edited). When set they are reported and seed the search instead of
    // being computed again; a seed the space cannot hold is listed in
    // seeds_not_in_space.
    std::shared_ptr<const std::vector<BaselineResult>> given_baselines;
    // The full space is first searched in the default space (a quarter of
    // the budget) and seeded with its best, so that a larger space never
    // finds a worse plan than the smaller one.
    bool seed_full_from_default = true;
    // The descent skips moves whose lower bound (stepLowerBound on their
    // GPUs, full recompute's extra forward) can neither enter the top K nor
    // improve their seed: the same top K, fewer evaluations.
    bool prune_by_bound = true;
    DesignSpaceOptions space;
    // Checked between candidates: set it from any thread to stop soon.
    const std::atomic<bool>* cancel = nullptr;
    // Called from worker threads (serialised, at most every ~50 ms and at
    // the end) with candidates done and the current total (the total grows
    // when the descent starts).
    std::function<void(std::int64_t done, std::int64_t total)> progress;
};

// No plan on the budget's GPUs can be faster than this: its model FLOPs at
// the best GEMM efficiency of the fastest GPUs, or the cross-building bytes
// some dimension must send once the job spans buildings (PP activations or
// DP gradients, whichever is fewer) at the line rate of the best-connected
// building's links. Communication may hide behind compute, so the bound is
// the larger of the two, not their sum.
struct StepLowerBound {
    double model_flops_per_step = 0;
    double compute_s = 0;
    double traffic_bytes = 0; // per direction, the fewer of PP's and DP's
    double traffic_s = 0;
    double step_s() const { return std::max(compute_s, traffic_s); }
};
StepLowerBound stepLowerBound(const Cluster& cluster, const Model& model, const Plan& base,
                              std::int64_t gpuBudget, double modelFlopsPerStep);

// RunScores, runScores and clusterPriced: explore/baselines.h.

// A candidate that was evaluated and fits.
struct ScoredPlan {
    Candidate key;
    std::string label;
    Plan plan; // a complete plan document (name, description = label)
    double step_time_s = 0;
    double cross_building_bytes = 0;
    double gpu_seconds = 0; // gpus * step time
    double mfu = 0;
    double tokens_per_s = 0;
    double peak_gib_per_gpu = 0;
    std::int64_t gpus = 0;
    // The run (core/cost/run.h): wall clock for the token budget and to the
    // target loss, $ (GPU-seconds where unpriced) and kWh, with goodput; per
    // step where the plan has no token budget.
    RunScores run;
};

struct SearchStrategy {
    std::string name; // "exhaustive" or "staged"
    std::string description;
    std::vector<std::string> enumerated_axes; // all of them when exhaustive
    std::vector<std::string> descent_axes;
    int seeds = 0;
    int rounds = 0; // descent rounds actually run (the most of any seed)
};

struct OptimizerResult {
    std::string cluster;
    std::string model;
    // FNV-1a of the cluster, model and base plan documents and of the
    // options that shape the space: shards of one search share it.
    std::string input_digest;
    Objective objective = Objective::StepTime;
    int top_k = 0;
    int shard_index = 0;
    int shard_count = 1;
    std::int64_t gpu_budget = 0;
    double space_size = 0;                      // candidates in the whole space
    std::int64_t structures = 0;                // (tp, cp, pp, dp, ep, micro batch) tuples
    std::int64_t enumerated = 0;                // candidates of the enumerated part (this shard)
    std::int64_t evaluated = 0;                 // calls of the cost model
    std::int64_t feasible = 0;                  // evaluated and fitting in memory
    std::map<std::string, std::int64_t> pruned; // by reason (structure tuples and candidates)
    double elapsed_s = 0;
    double search_s = 0; // elapsed without the baselines
    double evaluations_per_s = 0;
    int threads = 0;
    bool cancelled = false;
    SearchStrategy strategy;
    std::vector<ScoredPlan> top;    // best first
    std::vector<ScoredPlan> pareto; // step time vs cross-building bytes, by step time
    std::vector<BaselineResult> baselines;
    // Plans that seeded the search (baselines and, in the full space, the
    // default space's best), by name, and those the space could not hold.
    std::vector<std::string> seeded, seeds_not_in_space;
    // Share of the space's candidates the search looked at (evaluated or
    // rejected by a cheap check), 0..1.
    double coverage = 0;
    StepLowerBound lower_bound;

    std::int64_t prunedTotal() const;
    // Speedup of the best plan over a baseline: baseline / best - 1 (0.25 = 25% faster).
    std::optional<double> speedupOver(const BaselineResult& b) const;
};

// The options the optimizer's own baseline searches run with.
BaselineOptions baselineOptions(const OptimizerOptions& options);

// Order of scored plans under an objective: primary, secondary, then key.
bool betterThan(const ScoredPlan& a, const ScoredPlan& b, Objective objective);

// Searches the space of `base` (its global batch, sequence length and
// switches stay fixed) on the evaluator's cluster. Thread-safe with respect
// to other searches; the evaluator is shared read-only.
OptimizerResult optimize(const Evaluator& evaluator, const Model& model, const Plan& base,
                         const OptimizerOptions& options = {});

// Joins shard results (same cluster, model, objective and space): top-K and
// Pareto re-merged, counts summed, speedups recomputed. `problems` gets a
// line per inconsistency (missing or repeated shards, different inputs).
OptimizerResult mergeResults(const std::vector<OptimizerResult>& shards,
                             std::vector<std::string>* problems = nullptr);

} // namespace sa

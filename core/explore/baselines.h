#pragma once
// Baselines the optimizer's best plan is measured against: what people
// really run, each evaluated on the links as built. docs/OPTIMIZER.md gives
// every recipe with its source.
//
// as-given          the base plan, unchanged.
// production        Meta's Llama 3 recipe (Dubey et al. 2024, Sec. 3.3.2
//                   and Table 4): TP fills a host, CP keeps 8K tokens per
//                   rank, PP for the best step time, DP fills the GPUs; rank order [tp, cp, pp, dp]
//                   (DP crosses the buildings), interleaved 1F1B, FSDP without resharding after
//                   forward (ZeRO-1 here), NCCL's own algorithm choice; the link transports tuned
//                   as an operator tunes NCCL. For an MoE model, the same with EP searched (named
//                   so).
// crosspipe         prior art: only PP crosses buildings, CrossPipe's
//                   latency-aware 1F1B warm-up, links as built.
// atlas             prior art: only PP crosses, 1F1B, several TCP flows per
//                   transfer on every inter-building link.
// megatron-multidc  prior art: DP crosses with a hierarchical all-reduce
//                   (reduce inside each building, then across), links as
//                   built.
//
// Each recipe is a restriction of the optimizer's design space; its free
// axes (degrees where the recipe leaves them open, recompute, ZeRO, layer
// split, ...) are found by the same search, so a baseline is the best its
// recipe can do. Its plan seeds the full search, which therefore never
// returns a worse plan.

#include "cost/evaluate.h"
#include "explore/designspace.h"
#include "model/scenario.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace sa {

// What the run-level objectives read of an evaluation.
struct RunScores {
    double time_to_tokens_s = 0;
    double time_to_loss_s = 0;
    double cost = 0; // $, or GPU-seconds where the cluster has no prices
    double energy_kwh = 0;
    double goodput = 1;
    bool operator==(const RunScores&) const = default;
};
// `priced`: the cluster has prices (a building's gpu_hour_usd or a link's
// price_per_gb_usd); otherwise cost is GPU-seconds.
RunScores runScores(const Evaluation& ev, bool priced);
bool clusterPriced(const Cluster& cluster);

struct BaselineResult {
    std::string name;   // "as-given", "production", "crosspipe", "atlas", "megatron-multidc"
    std::string title;  // for people: "production (Llama 3 recipe)"
    std::string recipe; // what the recipe fixes and what was searched
    std::string source; // the publication or documentation it follows
    bool prior_art = false;
    Plan plan;
    bool feasible = false; // evaluated and fits in memory
    std::string problem;   // why not, when !feasible
    double step_time_s = 0;
    double cross_building_bytes = 0;
    double mfu = 0;
    double peak_gib_per_gpu = 0;
    std::int64_t gpus = 0;
    // The run-level scores of its plan (RunScores in explore/optimizer.h),
    // as the search scores its own plans: wall clock for the token budget
    // and to the target loss, $ (GPU-seconds where unpriced), kWh, goodput.
    RunScores run;
};

// A baseline as a restriction of the design space.
struct BaselineRecipe {
    std::string name, title, recipe, source;
    bool prior_art = false;
    DesignSpaceOptions space;
};

struct BaselineOptions {
    std::int64_t gpu_budget = 0;         // 0: as the design space derives it
    std::int64_t max_evaluations = 2000; // per recipe search
    SpaceSize size = SpaceSize::Default;
    int threads = 0;
    const std::atomic<bool>* cancel = nullptr;
};

std::vector<BaselineRecipe> baselineRecipes(const Cluster& cluster, const Model& model,
                                            const Plan& base);

// The base plan evaluated unchanged; not feasible (with the reason) when it
// has no degrees, does not validate or does not fit.
BaselineResult asGivenBaseline(const Evaluator& evaluator, const Model& model, const Plan& base);

// The best plan of the recipe's space.
BaselineResult recipeBaseline(const Evaluator& evaluator, const Model& model, const Plan& base,
                              const BaselineRecipe& recipe, const BaselineOptions& options);

// as-given (when the base plan has degrees), then every recipe.
std::vector<BaselineResult> computeBaselines(const Evaluator& evaluator, const Model& model,
                                             const Plan& base, const BaselineOptions& options);

// The baseline named `name`, or nullptr.
const BaselineResult* findBaseline(const std::vector<BaselineResult>& baselines,
                                   const std::string& name);

// The fastest feasible prior-art row, or nullptr.
const BaselineResult* bestPriorArt(const std::vector<BaselineResult>& baselines);

// The plan baselines are computed from while a plan is being edited: the
// plan as it was opened (what is run today), with the workload of the
// current plan (sequence length, global batch, token budget, target loss),
// so that edits to degrees, placement, schedule or links do not move the
// baselines while a new batch or token budget, which changes the question,
// does.
Plan baselineBasePlan(const Plan& asOpened, const Plan& current);

// A base plan for a search without one: the Llama 3 405B pre-training
// batch (2,048 sequences of 8,192 tokens, Dubey et al. 2024, Table 4) and
// the plan defaults; tp*cp*pp*dp = 1 marks it as "no degrees given".
Plan defaultBasePlan();

} // namespace sa

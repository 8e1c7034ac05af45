#pragma once
// Baselines the optimizer's best plan is measured against, as the paper
// does (speedup over the production configuration and over the best prior
// approach). Each is a plan generator that follows a published recipe;
// docs/OPTIMIZER.md gives the rationale.
//
// production  The Llama 3 recipe (Dubey et al. 2024, Sec. 3.3): rank order
//             [tp, cp, pp, dp] so DP/FSDP spans the slowest links (here the
//             buildings), interleaved 1F1B, flat ring collectives, RoCE on
//             every link. Degrees, micro batch, ZeRO stage and recompute
//             are the base plan's (the job as it runs); without a base plan
//             tp fills a host and pp is the smallest that fits in memory.
// prior-art   Atlas (Dash et al. 2024) and CrossPipe (ATC'25): only PP
//             crosses buildings, TP x DP stay inside one; whole stages are
//             assigned to buildings greedily, the buildings with the most
//             GPUs first; 1F1B; the links keep the cluster's transport.
//             pp and dp are chosen (best step time over the pp values whose
//             stages fit whole into the buildings), tp, cp, micro batch,
//             ZeRO stage and recompute are the base plan's.
//
// Both raise recompute (none -> selective -> full) when the plan would not
// fit in memory otherwise.

#include "cost/evaluate.h"
#include "model/scenario.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sa {

struct BaselineResult {
    std::string name;   // "production" or "prior-art"
    std::string recipe; // one line: what the generator did
    Plan plan;
    bool feasible = false; // evaluated and fits in memory
    std::string problem;   // why not, when !feasible
    double step_time_s = 0;
    double cross_building_bytes = 0;
    double mfu = 0;
    double peak_gib_per_gpu = 0;
    std::int64_t gpus = 0;
};

// `gpuBudget`: GPUs the job may use (as the optimizer's space).
BaselineResult productionBaseline(const Evaluator& evaluator, const Model& model, const Plan& base,
                                  std::int64_t gpuBudget);
BaselineResult priorArtBaseline(const Evaluator& evaluator, const Model& model, const Plan& base,
                                std::int64_t gpuBudget);

// A base plan for a search without one: the Llama 3 405B pre-training
// batch (2,048 sequences of 8,192 tokens, Dubey et al. 2024, Table 4) and
// the plan defaults; tp*cp*pp*dp = 1 marks it as "no degrees given".
Plan defaultBasePlan();

} // namespace sa

#pragma once
// Low-communication data parallelism across buildings (the plan's
// "outer_sync"; docs/RUN.md): DiLoCo, Streaming DiLoCo and HSDP.
//
// The DP replicas are grouped into workers by the buildings their cells
// occupy (replicas that hold every stage in the same buildings form one
// worker). Each worker's inner step is the plan confined to the worker (its
// replicas, its cells, its share of the global batch), evaluated as any
// plan; the workers run at once and the slowest sets the pace. The outer
// sync is an all-reduce across the workers of every stage's parameters
// (DiLoCo's pseudo-gradients, HSDP's gradient shards), put on the real
// topology with the links' transports, and spread over the steps between
// syncs.

#include "cost/evaluate.h"

#include <optional>

namespace sa {

// Relative loss of DiLoCo with `workers` replicas synchronising every
// `inner_steps` steps over synchronous DP at equal tokens, for a model of
// `params` parameters (docs/RUN.md "Convergence": Charles et al. 2025
// Table 7 per-M power laws at H = 30, Douillard et al. 2025 Table 6 for H).
double outerLossPenalty(double params, int workers, int inner_steps);
// Tokens DiLoCo needs to reach the loss synchronous DP reaches on `tokens`
// (0: Chinchilla-optimal 20 N), as a multiple of `tokens`: the loss
// (1 + penalty) L(N, D) solved for D on Chinchilla's curve. Infinity when
// that loss is never reached.
double outerTokenMultiplier(double params, double tokens, double penalty);

// Parameters of the model as the plan holds them: every stage's dense
// parameters x tp and expert parameters x tp x ep (Evaluation::stage_params).
double planParams(const Plan& plan, const Evaluation& ev);

// An outer-sync hsdp plan whose workers are equal blocks of consecutive
// replicas, written as the plan's own dp_shard (one worker's replicas)
// without the outer sync: what the evaluation prices it as, and what a
// framework runs (docs/COST_MODEL.md "HSDP"). Nothing for any other plan.
std::optional<Plan> outerHsdpAsDpShard(const Cluster& cluster, const Plan& plan);

// evaluateOuterSync (declared in cost/evaluate.h) evaluates a plan with an
// outer_sync; Evaluator::evaluate calls it.

} // namespace sa

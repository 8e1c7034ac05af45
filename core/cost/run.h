#pragma once
// A training run's goodput, cost and energy (docs/RUN.md): what failures,
// checkpoints and stragglers take from the wall clock, what the GPUs,
// hosts, network and transport cost and draw, and the run's totals for the
// plan's token budget or target loss. Pure functions of the scenario and
// the step's evaluation.

#include "cost/evaluation.h"
#include "model/scenario.h"

namespace sa {

// ---- convergence (Chinchilla, Hoffmann et al. 2022, approach 3) ------------

// L(N, D) = E + A / N^alpha + B / D^beta; N parameters, D tokens.
struct LossCurve {
    double E = 1.69, A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28;
};
double chinchillaLoss(double params, double tokens, const LossCurve& c = {});
// Tokens at which the curve reaches `loss` (infinity when the loss is at or
// below the model size's floor E + A / N^alpha).
double tokensForLoss(double params, double loss, const LossCurve& c = {});

// ---- goodput ------------------------------------------------------------------

// Daly's (2006) higher-order estimate of the compute time between
// checkpoints that minimises wall time, for a checkpoint that takes
// `delta_s` and a mean time between failures `mtbf_s`: sqrt(2 delta M) [1 +
// sqrt(delta / 2M) / 3 + delta / 18M] - delta for delta < 2M, else M.
double dalyInterval(double delta_s, double mtbf_s);
// Useful time / wall time for compute intervals `tau_s` between
// checkpoints of `delta_s`, restarts of `restart_s` and exponential
// failures of mean `mtbf_s` (Daly 2006, eq. 7: T_w = M e^{R/M}
// (e^{(tau + delta)/M} - 1) T_s / tau).
double dalyGoodput(double tau_s, double delta_s, double restart_s, double mtbf_s);

// Fills ev.goodput, ev.cost and ev.run (when the plan has a token budget or
// a target loss) from the step already in `ev` (step time, breakdown,
// links, outer sync); appends warnings (unpriced buildings, no board power).
void runReports(const Cluster& cluster, const Model& model, const Plan& plan, Evaluation& ev);

} // namespace sa

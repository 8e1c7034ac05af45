#include "cost/memory.h"

#include "model/plan.h"

#include <algorithm>

namespace sa {

OptimizerPrecision optimizerPrecision(const Plan& plan) {
    OptimizerPrecision o;
    o.moment_bytes = plan.optimizer_moments == OptimizerMoments::Bf16 ? 2.0 : 4.0;
    o.master_bytes = plan.master_weights == MasterWeights::Fp32   ? 4.0
                     : plan.master_weights == MasterWeights::Half ? 2.0
                                                                  : 0.0;
    return o;
}

double optimizerStateBytes(double gradBytes, const OptimizerPrecision& o) {
    return 2.0 * o.moment_bytes + o.master_bytes + (gradBytes < kGradBytes ? o.moment_bytes : 0.0);
}

double optimizerStepBytes(double gradBytes, const OptimizerPrecision& o, OptimizerImpl impl) {
    const double grad = gradBytes < kGradBytes ? o.moment_bytes : gradBytes;
    const double weightsRead = o.master_bytes < 4.0 ? kWeightBytes : 0.0;
    const double fused =
        2.0 * o.master_bytes + 4.0 * o.moment_bytes + grad + kWeightBytes + weightsRead;
    if (impl == OptimizerImpl::Fused)
        return fused;
    // PyTorch's multi-tensor AdamW (torch/optim/adam.py _multi_tensor_adam,
    // one kernel per op over the parameter list): the weight decay's
    // _foreach_mul_ (the stepped weights read and written), the first
    // moment's _foreach_lerp_ (moment and gradient read, moment written),
    // the second's _foreach_mul_ and _foreach_addcmul_, the denominator's
    // _foreach_sqrt (a new tensor in the moments' precision), _foreach_div_
    // and _foreach_add_ (eps), then _foreach_addcdiv_ into the weights:
    // 4w + 14m + 2g against the fused kernel's 2w + 4m + g.
    const double stepped = o.master_bytes > 0 ? o.master_bytes : kWeightBytes;
    return fused + 2.0 * stepped + 10.0 * o.moment_bytes + grad;
}

ParamBytes paramBytes(int zero, double shard, double gradBytes, const OptimizerPrecision& o) {
    const double opt = optimizerStateBytes(gradBytes, o);
    return {zero >= 3 ? kWeightBytes / shard : kWeightBytes,
            zero >= 2 ? gradBytes / shard : gradBytes, zero >= 1 ? opt / shard : opt};
}

StageMemory stageMemory(const StageMemoryInput& in) {
    const double dense = in.params - in.expert_params;
    const double experts = in.expert_params;
    const int z = in.zero;
    StageMemory m;
    m.weights = in.params * kWeightBytes;
    if (z >= 3) // sharded, plus the two layers gathered at once (prefetch)
        m.weights = dense * kWeightBytes / in.dp_shard + experts * kWeightBytes / in.ep_shard +
                    2.0 * in.params / std::max(1, in.layers) * kWeightBytes;
    const double perLayer = 1.0 / std::max(1, in.layers);
    const double fp8 = in.fp8_gathered_params, saved = kWeightBytes - kFp8WeightBytes;
    if (fp8 > 0) {
        // The gathered layers' FP8 weights; kept in FP8, the weights held
        // (their shards pro rata of dense and expert weights).
        if (z >= 3)
            m.weights -= 2.0 * fp8 * perLayer * saved;
        if (in.fp8_kept)
            m.weights -=
                fp8 * saved *
                (z >= 3 && in.params > 0 ? (dense / in.dp_shard + experts / in.ep_shard) / in.params
                                         : 1.0);
    }
    // FP8 weight copies live beside the weights they are cast from: all of
    // them, or under ZeRO-3 those of the two layers gathered at once. Kept
    // in FP8, the copy is only the transpose.
    const double copyBytes = in.fp8_kept && fp8 > 0 ? in.fp8_copy_bytes / 2.0 : in.fp8_copy_bytes;
    m.weights += copyBytes * (z >= 3 ? 2.0 * in.fp8_copy_params * perLayer : in.fp8_copy_params);
    const double g = in.grad_bytes, o = optimizerStateBytes(in.grad_bytes, in.optimizer);
    m.gradients = z >= 2 ? dense * g / in.dp_shard + experts * g / in.ep_shard : in.params * g;
    m.optimizer = z >= 1 ? dense * o / in.dp_shard + experts * o / in.ep_shard : in.params * o;
    m.activations = in.activation_bytes;
    m.residual = in.residual_bytes;
    m.total_gib =
        withRuntimeOverheadGiB(m.weights + m.gradients + m.optimizer + m.activations + m.residual);
    return m;
}

} // namespace sa

#include "cost/memory.h"

#include <algorithm>

namespace sa {

double optimizerStateBytes(double gradBytes) {
    return kOptimizerStateBytes + (gradBytes < kGradBytes ? kFp32GradCopyBytes : 0.0);
}

ParamBytes paramBytes(int zero, double shard, double gradBytes) {
    const double opt = optimizerStateBytes(gradBytes);
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
    // FP8 weight copies live beside the weights they are cast from: all of
    // them, or under ZeRO-3 those of the two layers gathered at once.
    m.weights += in.fp8_copy_bytes *
                 (z >= 3 ? 2.0 * in.fp8_copy_params / std::max(1, in.layers) : in.fp8_copy_params);
    const double g = in.grad_bytes, o = optimizerStateBytes(in.grad_bytes);
    m.gradients = z >= 2 ? dense * g / in.dp_shard + experts * g / in.ep_shard : in.params * g;
    m.optimizer = z >= 1 ? dense * o / in.dp_shard + experts * o / in.ep_shard : in.params * o;
    m.activations = in.activation_bytes;
    m.residual = in.residual_bytes;
    m.total_gib =
        withRuntimeOverheadGiB(m.weights + m.gradients + m.optimizer + m.activations + m.residual);
    return m;
}

} // namespace sa

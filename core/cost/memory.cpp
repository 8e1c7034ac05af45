#include "cost/memory.h"

#include <algorithm>

namespace sa {

ParamBytes paramBytes(int zero, double shard) {
    return {zero >= 3 ? kWeightBytes / shard : kWeightBytes,
            zero >= 2 ? kGradBytes / shard : kGradBytes,
            zero >= 1 ? kOptimizerStateBytes / shard : kOptimizerStateBytes};
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
    m.gradients = z >= 2 ? dense * kGradBytes / in.dp_shard + experts * kGradBytes / in.ep_shard
                         : in.params * kGradBytes;
    m.optimizer = z >= 1 ? dense * kOptimizerStateBytes / in.dp_shard +
                               experts * kOptimizerStateBytes / in.ep_shard
                         : in.params * kOptimizerStateBytes;
    m.activations = in.activation_bytes;
    m.total_gib = withRuntimeOverheadGiB(m.weights + m.gradients + m.optimizer + m.activations);
    return m;
}

} // namespace sa

#pragma once
// Balanced layer splits: when the buildings holding the pipeline stages run
// at different speeds (heterogeneous GPUs, different NICs), give each stage a
// number of layers proportional to its speed so that no stage holds up the
// pipeline.

#include "model/scenario.h"

#include <vector>

namespace sa {

// Layers per stage (size pp, sum = model.layers, each >= 1) minimising the
// slowest stage's forward+backward time per microbatch, including the
// embedding on the first and the logits on the last stage. Greedy
// water-filling over per-layer times of the slowest building holding each
// stage, which is optimal for this separable objective.
std::vector<int> balancedLayers(const Cluster& cluster, const Model& model, const Plan& plan);

} // namespace sa

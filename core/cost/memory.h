#pragma once
// The memory model: what one GPU holds for the parameters it trains
// (weights, gradients, optimizer state, by ZeRO stage), its activations and
// the runtime's own overhead. Used by the evaluation and by the optimizer's
// lower bound before evaluation, so the two cannot disagree.

namespace sa {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Mixed-precision Adam (Rajbhandari et al. 2020, ZeRO Sec. 3): bf16 weights
// (2 B), fp32 gradients (4 B, Megatron's main_grad), fp32 master weights,
// momentum and variance (12 B).
constexpr double kWeightBytes = 2.0;
constexpr double kGradBytes = 4.0;
constexpr double kOptimizerStateBytes = 12.0;
// CUDA context, NCCL channel buffers and cuBLAS/cuDNN workspaces: ~1.5 GiB
// per GPU (PyTorch + NCCL defaults), plus ~5% allocator fragmentation.
constexpr double kRuntimeOverheadGiB = 1.5;
constexpr double kFragmentation = 1.05;

// Bytes per parameter one GPU holds for parameters sharded over `shard`
// ranks at ZeRO stage `zero`: stage 1 shards the optimizer state, 2 also
// the gradients, 3 also the weights (ZeRO Sec. 5).
struct ParamBytes {
    double weights = 0, gradients = 0, optimizer = 0;
    double total() const { return weights + gradients + optimizer; }
};
ParamBytes paramBytes(int zero, double shard);

// What one GPU of a pipeline stage holds, bytes.
struct StageMemoryInput {
    int zero = 0;
    double params = 0;        // per GPU, after TP/EP sharding
    double expert_params = 0; // the part that is expert weights
    double dp_shard = 1;      // ranks the dense parameters are sharded over
    double ep_shard = 1;      // ranks the expert parameters are sharded over (dp / ep)
    int layers = 1;           // of the stage (ZeRO-3 gathers two layers at once)
    double activation_bytes = 0;
};
struct StageMemory {
    double weights = 0, gradients = 0, optimizer = 0, activations = 0; // bytes
    double total_gib = 0; // with fragmentation and the runtime's overhead
};
StageMemory stageMemory(const StageMemoryInput& in);

// Bytes -> GiB per GPU with fragmentation and the runtime's overhead.
inline double withRuntimeOverheadGiB(double bytes) {
    return bytes * kFragmentation / kGiB + kRuntimeOverheadGiB;
}

} // namespace sa

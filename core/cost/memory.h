#pragma once
// The memory model: what one GPU holds for the parameters it trains
// (weights, gradients, optimizer state, by ZeRO stage), its activations and
// the runtime's own overhead. Used by the evaluation and by the optimizer's
// lower bound before evaluation, so the two cannot disagree.

namespace sa {

struct Plan;
enum class OptimizerImpl; // model/plan.h

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Mixed-precision Adam (Rajbhandari et al. 2020, ZeRO Sec. 3): bf16 weights
// (2 B), gradients in the main-grad buffer (4 B fp32 by default, 2 B when
// the plan reduces bf16 gradients), fp32 master weights, momentum and
// variance (12 B), and with 16-bit gradients an fp32 copy of the gradient
// for the step (4 B): Megatron-LM docs/source/distrib_optimizer.md, "bf16
// parameters, fp32 gradients: 18 / 6 + 12/d; fp16 parameters, fp16
// gradients: 20 / 4 + 16/d" bytes per parameter.
constexpr double kWeightBytes = 2.0;
constexpr double kFp8WeightBytes = 1.0; // a weight kept or gathered in FP8
constexpr double kGradBytes = 4.0;
// CUDA context, NCCL channel buffers and cuBLAS/cuDNN workspaces: ~1.5 GiB
// per GPU (PyTorch + NCCL defaults), plus ~5% allocator fragmentation.
constexpr double kRuntimeOverheadGiB = 1.5;
constexpr double kFragmentation = 1.05;

// Bytes per parameter one GPU holds for parameters sharded over `shard`
// ranks at ZeRO stage `zero`, with `gradBytes`-byte gradients: stage 1
// shards the optimizer state (Megatron's distributed optimizer), 2 also the
// gradients (DeepSpeed stage 2), 3 also the weights (FSDP; ZeRO Sec. 5).
// Megatron shards over the data-parallel group with context parallelism,
// dp x cp (CP ranks hold the same weights).
struct ParamBytes {
    double weights = 0, gradients = 0, optimizer = 0;
    double total() const { return weights + gradients + optimizer; }
};
// The optimizer's precision (plan optimizer_moments, master_weights): bytes
// per parameter of each Adam moment and of the master weights (4 and 4 by
// default; 2 for bf16 moments, 2 for 16-bit masters, 0 for none).
struct OptimizerPrecision {
    double moment_bytes = 4;
    double master_bytes = 4;
};
// The plan's (optimizer_moments, master_weights).
OptimizerPrecision optimizerPrecision(const Plan& plan);
ParamBytes paramBytes(int zero, double shard, double gradBytes = kGradBytes,
                      const OptimizerPrecision& opt = {});
// The optimizer's own bytes per parameter (before sharding): two moments,
// the master weights and, with 16-bit gradients, the step's copy of the
// gradient shard in the moments' precision (Megatron's distributed
// optimizer: fp32 main_grad shards, the "+4" of 16/d; Apex
// DistributedFusedAdam: its grads_shard in the optimizer dtype). The
// default is Megatron's 12 (+4).
double optimizerStateBytes(double gradBytes, const OptimizerPrecision& opt = {});
// Bytes per parameter the optimizer step streams: masters and moments read
// and written, the gradient (or its copy) read and the bf16 weights written;
// without fp32 masters it reads the bf16 weights too (30 by default).
// PyTorch's foreach AdamW passes over the state once per op (82 with fp32
// state; optimizerStepBytes in memory.cpp).
double optimizerStepBytes(double gradBytes, const OptimizerPrecision& opt, OptimizerImpl impl);

// What one GPU of a pipeline stage holds, bytes.
struct StageMemoryInput {
    int zero = 0; // as memory sees it (Plan::effectiveZeroStage)
    double grad_bytes = kGradBytes;
    OptimizerPrecision optimizer;
    double params = 0;        // per GPU, after TP/EP sharding
    double expert_params = 0; // the part that is expert weights
    double dp_shard = 1;      // ranks the dense parameters are sharded over
    double ep_shard = 1;      // ranks the expert parameters are sharded over (expert DP)
    int layers = 1;           // of the stage (ZeRO-3 gathers two layers at once)
    double activation_bytes = 0;
    double residual_bytes = 0; // top-k's error-feedback residual (fp32, of the DP shard)
    // Of params, those whose FP8 copy and transpose Transformer Engine keeps
    // (fp8_weight_copy_bytes each); with ZeRO-3 only the gathered layers'.
    double fp8_copy_params = 0;
    double fp8_copy_bytes = 2.0;
    // Plan fp8_param_gather: of params, the FP8 linears' weights, gathered
    // in FP8 (ZeRO-3's two gathered layers hold them at 1 byte), and with
    // `fp8_kept` (Transformer Engine) kept in FP8 too: 1 byte each, sharded
    // or not, and the FP8 copy only the transpose (half of fp8_copy_bytes).
    double fp8_gathered_params = 0;
    bool fp8_kept = false;
};
struct StageMemory {
    double weights = 0, gradients = 0, optimizer = 0, activations = 0; // bytes; weights with
                                                                       // the FP8 copies
    double residual = 0;                                               // bytes
    double total_gib = 0; // with fragmentation and the runtime's overhead
};
StageMemory stageMemory(const StageMemoryInput& in);

// Bytes -> GiB per GPU with fragmentation and the runtime's overhead.
inline double withRuntimeOverheadGiB(double bytes) {
    return bytes * kFragmentation / kGiB + kRuntimeOverheadGiB;
}

} // namespace sa

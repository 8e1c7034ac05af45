#pragma once
// Compute and memory of one transformer layer (and the embedding / logits)
// on one GPU, for one microbatch. Every formula cites its source; every
// constant is listed in docs/COST_MODEL.md.

#include "model/cluster.h"
#include "model/model.h"
#include "model/plan.h"

namespace sa {

// One attention kernel on Hopper, head dim 128, BF16, as a fraction of the
// dense BF16 peak: eff(s) = peak x s / (s + s0), s the keys one call attends
// over (the sequence; one CP rank's chunk under context parallelism). Peaks
// and s0 through Shah et al. 2024 (FlashAttention-3), Fig. 5 (forward, causal
// and not) and Fig. 6 (backward, FLOPs counted as 2.5x the forward), H100
// SXM5 (989 TFLOP/s), at 512 and 16k tokens; FlashAttention-2's measured on
// an H200 instead (below).
struct AttentionEfficiency {
    double fwd_causal = 0, fwd_causal_s0 = 0;
    double fwd_full = 0, fwd_full_s0 = 0;
    double bwd_causal = 0, bwd_causal_s0 = 0;
    double bwd_full = 0, bwd_full_s0 = 0;
};
struct HopperAttention {
    // FlashAttention-2 as PyTorch's SDPA flash backend runs it (no wgmma or
    // TMA): the least-squares curves through PyTorch 2.11's kernel measured
    // on an H200 (tests/validation/gpu, 16 heads of 128, 16k tokens, 1k to
    // 32k; each point within 4%, the full forward's within 3%). Causal
    // forward 239 -> 331 TFLOP/s, full 330 -> 346, causal backward 168 ->
    // 322, full 228 -> 312. The paper's FlashAttention-2 forward agrees
    // (causal 0.347 / 409, full 0.376 / 105); its backward bars (214 at 512)
    // are the full backward's, not the causal one's.
    AttentionEfficiency flash2{0.337, 400, 0.356, 60, 0.326, 975, 0.319, 405};
    // cuDNN fused attention (Transformer Engine's FusedAttention): 315 -> 539
    // causal forward, 497 -> 595 full, 305 -> 516 backward (one backward
    // curve, causal or not).
    AttentionEfficiency cudnn{0.558, 385, 0.605, 105, 0.534, 374, 0.534, 374};
    // FlashAttention-3: 292 -> 616 causal forward, 467 -> 648 full, 316 -> 561
    // backward.
    AttentionEfficiency flash3{0.646, 608, 0.663, 207, 0.581, 420, 0.581, 420};
    // The same kernels at head dim 64: Shah et al. 2024, Fig. 5 (forward,
    // causal and not) and Fig. 6 (backward), the head-dim-64 panels' 512 and
    // 16k bars, H100 SXM5. cuDNN: 225 -> 388 causal forward, 335 -> 413
    // full, 266 -> 433 backward; FlashAttention-3: 197 -> 473, 333 -> 497,
    // 272 -> 474. FlashAttention-2: the measured head-dim-128 curves above
    // times the paper's FlashAttention-2 ratio of head dim 64 to 128 at each
    // end (forward causal 180 / 191 -> 299 / 335, full 282 / 309 -> 324 /
    // 370, backward 198 / 214 -> 291 / 322).
    AttentionEfficiency flash2_d64{0.300, 349, 0.311, 36, 0.294, 937, 0.288, 382};
    AttentionEfficiency cudnn_d64{0.402, 392, 0.421, 124, 0.447, 339, 0.447, 339};
    AttentionEfficiency flash3_d64{0.501, 776, 0.511, 264, 0.491, 402, 0.491, 402};
};

// Times of one kernel class: compute roofline with a size-dependent
// efficiency, memory roofline, and a fixed per-kernel overhead.
struct KernelConstants {
    // Achievable fraction of HBM bandwidth for streaming kernels
    // (STREAM-like copies reach 85-90% on A100/H100; fused elementwise
    // kernels somewhat less).
    double hbm_efficiency = 0.8;
    // Per-kernel fixed cost (launch + ramp-up/tail), seconds.
    double kernel_overhead_s = 3e-6;
    // GEMM tile edge in elements (cuBLAS/CUTLASS 128x128 or 128x256 tiles).
    double tile_m = 128;
    double tile_n = 128;
    // Mainloop vs prologue/epilogue: efficiency k / (k + k0).
    double k0 = 64;
    // FlashAttention-2 reaches ~70% of peak forward and ~60% backward at
    // head dim 128 (Dao 2023, Fig. 5-6): relative to large-GEMM efficiency.
    // Used where the kernel runs as it was written for the GPU
    // (FlashAttention-2 on Ampere) and where no measurement is at hand
    // (Blackwell, unknown GPUs).
    double flash_fwd_relative = 0.9;
    double flash_bwd_relative = 0.8;
    HopperAttention hopper_attention;
    // TP communication overlap (Transformer Engine's initialize_ub
    // defaults): a GEMM overlapped with a pipelined or bulk reduce-scatter
    // gives the communication kernels 16 SMs ("num_sm"), and a pipelined one
    // runs in 4 splits ("num_splits"), the last of which is exposed; the
    // all-gathers use copy engines ("ring_exchange", use_ce).
    double tp_overlap_comm_sms = 16;
    double tp_overlap_splits = 4;
    // An NCCL collective on its own stream, overlapped with compute (DP
    // gradient reduce-scatter under backward, the distributed optimizer's
    // parameter all-gather under forward, FSDP's prefetched gathers): NCCL
    // runs one CTA per channel, each resident on an SM for the whole
    // collective (NCCL_MAX_CTAS, default 32 = MAXCHANNELS), and a GEMM sized
    // to one wave of the SMs spills into a second wave. 24 CTAs is what an
    // ncclAllGather launched on an H100 in an FSDP prefetch (NVIDIA developer
    // forum, "Compute-Communication Overlap Causes Severe GEMM Performance
    // Degradation because of Tail Effect", 2025, Nsight Systems); 24 of 132
    // SMs is 18%, the mean compute slowdown under overlap Lee et al. measured
    // on H100, A100, MI250 and MI210 (arXiv:2507.03114: 18.9%, up to 40%).
    double nccl_overlap_ctas = 24;
    // The host's time to issue one op of a layer to the GPU (Python
    // dispatch and the launch), forward and through autograd's backward; a
    // device-to-host copy waited for with the GPU idle; and a kernel replayed
    // from a CUDA graph. Measured on the H200 machine, PyTorch 2.11
    // (tests/validation/gpu/h200-host.json: autograd_fwd_per_op_s,
    // autograd_bwd_per_op_s, sync_cpu_s, graph_add_per_kernel_s).
    // docs/COST_MODEL.md "Host".
    double host_op_fwd_s = 9.3e-6;
    double host_op_bwd_s = 10.7e-6;
    double host_sync_s = 11.6e-6;
    double graph_kernel_s = 0.96e-6;
    // A fused attention kernel (FlashAttention, cuDNN) with dropout on its
    // probabilities, against the same kernel without: H200, cuDNN, sbhd,
    // forward + backward 0.594 -> 0.614 ms at p = 0.1
    // (NVIDIA/TransformerEngine issue 3312); FlashAttention-2 pays +0.024 ms
    // of ~0.7 (pull request 3313). docs/COST_MODEL.md "Dropout".
    double attention_dropout_factor = 0.614 / 0.594;
    // Sustained tensor clock under a board power limit below the rated
    // power: dynamic power ~ C V^2 f with V rising ~ f over the DVFS range,
    // so P ~ f^3 and f ~ P^(1/3) (see docs/COST_MODEL.md for the check
    // against a 500 W H100).
    double power_clock_exponent = 1.0 / 3.0;
    // A Hopper GPU (H100 / H200 SXM, 700 W) in a training run: the kernel
    // efficiencies are short-benchmark figures at the boost clock (the H200
    // of tests/validation/gpu held 1965-1980 MHz through its layer and
    // attention measurements), while back-to-back GEMMs pull the board to
    // its 700 W limit and the clock down to 1725-1875 MHz (the same runs'
    // nvidia-smi readings, tests/validation/gpu/README.md "Clocks"): the
    // midpoints, 1972 and 1800 MHz. Used when the GPU model gives neither
    // clock. docs/COST_MODEL.md "GPU clocks".
    double hopper_boost_clock_mhz = 1972;
    double hopper_sustained_clock_mhz = 1800;
    // Quantising one bf16 GEMM input to FP8 with current (per-tensor
    // dynamic) scaling: an amax pass reads it (2 B), the cast reads it again
    // (2 B) and writes row- and column-major FP8 copies (1 + 1 B), for the
    // forward and the transposed backward GEMM: 6 bytes per element in two
    // kernels (torchao torchao/testing/training/roofline_utils.py,
    // "tensorwise"; Transformer Engine's Float8CurrentScaling does the same
    // passes).
    double fp8_cast_bytes_per_element = 6.0;
    double fp8_cast_kernels = 2.0;
    // Delayed scaling (Transformer Engine's DelayedScaling) casts with the
    // scale taken from the amax history and reduces the tensor's amax inside
    // the same kernel (transformer_engine/common/transpose/cast_transpose.cu,
    // cast_transpose_kernel: "computes amax" into amax_ptr while it writes
    // the output and its transpose): read 2 B, write 1 + 1 B, one kernel.
    double fp8_delayed_cast_bytes_per_element = 4.0;
    double fp8_delayed_cast_kernels = 1.0;
    // torchao's tensorwise cast run by PyTorch eager, one kernel per op
    // (torchao/float8: tensor_to_amax "torch.max(torch.abs(x))" 2+2 and 2 B;
    // _ToFloat8ConstrFunc "tensor.to(torch.float32) * scale" 2+4 and 4+4 B;
    // to_fp8_saturated's clamp 4+4 B and cast 4+1 B): 33 bytes per element
    // in six kernels, and five more on the scalar scale (amax_to_scale's
    // float64 cast, clamp, division and float32 cast; the reciprocal).
    double fp8_eager_cast_bytes_per_element = 33.0;
    double fp8_eager_cast_kernels = 11.0;
    // Transformer Engine's FP8 linear layers keep their weight's FP8 copy and
    // its transpose across the microbatches of a step (module/base.py
    // get_fp8_workspace with cache_name "weight", filled on the first
    // microbatch; 2.x get_weight_workspace with rowwise and columnwise
    // usage): 1 + 1 bytes per parameter.
    double fp8_weight_copy_bytes = 2.0;
};

// Compute and a collective that runs beside it on another stream: while both
// run, the collective's CTAs hold `share` of the SMs and the compute goes at
// 1 - share of its rate; what remains after the collective ends runs at full
// rate. slowedCompute is when the compute ends, overlappedWithCompute when
// both have.
inline double slowedCompute(double compute_s, double comm_s, double share) {
    if (!(share > 0) || !(comm_s > 0) || !(compute_s > 0))
        return compute_s;
    const double alone = compute_s / (1 - share); // the compute, all of it beside the collective
    return compute_s + (comm_s < alone ? comm_s : alone) * share;
}
inline double overlappedWithCompute(double compute_s, double comm_s, double share) {
    const double c = slowedCompute(compute_s, comm_s, share);
    return c > comm_s ? c : comm_s;
}

// The share of a GPU's SMs an overlapped NCCL collective holds.
inline double ncclOverlapShare(int sms) {
    const double ctas = KernelConstants{}.nccl_overlap_ctas;
    return sms > ctas ? ctas / double(sms) : 0.5;
}

// The fraction of the BF16 peak (at the sustained clock) the fused attention
// kernel reaches, forward and backward, for calls over `keys` keys (the
// sequence; one rank's chunk under context parallelism `cp`;
// docs/COST_MODEL.md "Attention"). On Hopper each kernel has its own
// measured curve (HopperAttention); auto is Transformer Engine's choice
// there, cuDNN (get_attention_backend: "give FusedAttention preference on
// Hopper+"). Elsewhere every kernel runs at FlashAttention-2's efficiency
// relative to the large-GEMM one (Dao 2023, on A100): FlashAttention-3 is
// Hopper-only, and no measurement of cuDNN's kernel off Hopper is at hand.
// `headDim`: the larger of the score and value head dimensions. On Hopper
// a head dimension of 64 or less runs at the head-dim-64 curves, 128 or more
// at the head-dim-128 ones, one between at the efficiency linear in the head
// dimension between the two.
struct AttentionRates {
    double fwd = 0, bwd = 0;
};
AttentionRates attentionRates(const GpuModel& gpu, AttentionKernel kernel, double keys, int cp,
                              const KernelConstants& kc = {}, double headDim = 128);

enum class GemmPrecision { Bf16, Fp8 };

// Sustained tensor-core clock in a training run relative to the one the
// kernel efficiencies are figures at: sustained / boost clock (the GPU
// model's, else its architecture's measured pair), times
// (power_limit_w / tdp_w)^power_clock_exponent when a limit below the rated
// power is given. Memory-bound kernels keep the HBM rate.
double powerClockFactor(const GpuModel& gpu, const KernelConstants& kc = {});
// The GPU as a short kernel benchmark finds it: at the clock its efficiencies
// are figures at (sustained = boost), its power limit kept.
GpuModel atBoostClock(const GpuModel& gpu, const KernelConstants& kc = {});

// What the GEMMs of one precision run at on a GPU: sustained peak FLOP/s
// (rated peak x power clock factor) and the large-GEMM efficiency.
struct GemmRate {
    double peak_flops = 0;
    double efficiency = 0;
    GemmPrecision precision = GemmPrecision::Bf16;
    Fp8Recipe fp8_recipe = Fp8Recipe::Current;           // how an FP8 GEMM's inputs are cast
    Fp8Linear fp8_linear = Fp8Linear::TransformerEngine; // which library casts them
    bool eager = false; // the casts run as PyTorch eager ops (plan elementwise "eager")
};
GemmRate gemmRate(const GpuModel& gpu, GemmPrecision precision, const KernelConstants& kc = {});

// Efficiency (fraction of peak) of an m x n x k GEMM: the GPU's large-GEMM
// efficiency, times wave quantisation over its SMs, times the k-loop share.
double gemmEfficiency(const GpuModel& gpu, double m, double n, double k, double batch = 1,
                      const KernelConstants& kc = {});

// Time of an m x n x k GEMM (batch of them) at `rate`: compute at its peak
// and efficiency, memory at 1-byte (FP8) or 2-byte (BF16) inputs and a bf16
// output. The FP8 cast of the inputs is not included (see layerCost).
double gemmTime(const GpuModel& gpu, const GemmRate& rate, double m, double n, double k,
                double batch = 1, const KernelConstants& kc = {});
// A BF16 GEMM at `peak_flops` (FLOP/s) and the GPU's gemm_efficiency.
double gemmTime(const GpuModel& gpu, double peak_flops, double m, double n, double k,
                double batch = 1, const KernelConstants& kc = {});

// One transformer layer, one microbatch, one GPU of a tp x cp cell.
struct LayerCost {
    // Compute stream times, seconds.
    double fwd_s = 0;         // forward compute (GEMMs + attention + elementwise)
    double bwd_input_s = 0;   // backward, input gradients
    double bwd_weight_s = 0;  // backward, weight gradients
    double recompute_s = 0;   // extra forward work in backward (recompute policy)
    double moe_permute_s = 0; // of fwd_s, and again of bwd_input_s: MoE token permutations
    // An MoE layer's expert half (router, experts, shared experts, token
    // permutations): of fwd_s, and of bwd_input_s + bwd_weight_s, the GPU's
    // time.
    double moe_mlp_fwd_s = 0, moe_mlp_bwd_s = 0;
    // What the host spends issuing the layer's kernels, forward and backward
    // (docs/COST_MODEL.md "Host"), and what the GPU waits for it with
    // nothing to run: fwd_s, bwd_input_s and bwd_weight_s include the host's
    // pace, host_wait_s is what of it the TP and CP exchanges do not fill.
    double host_fwd_s = 0, host_bwd_s = 0, host_wait_s = 0;
    // The passes' GPU time alone: fwd_s and bwd_input_s + bwd_weight_s
    // without the host's pace (with every weight cast).
    double gpu_fwd_s = 0, gpu_bwd_s = 0;
    // Of those, forward and backward together: the GEMMs (FP8 casts
    // included) and the fused attention kernels; the rest is the
    // memory-bound work and the launches. What a profiler's kernel classes
    // are compared with (tst_validation gpuLayer).
    double gemm_s = 0, attention_s = 0;
    bool host_sync = false; // the forward waits once for a device-to-host copy
    // Of fwd_s, recompute_s and bwd_input_s, the FP8 casts of the weights
    // (the backward's: torchao's). How many of them a microbatch pays is the
    // step's business (chunkTimes): Megatron-Core tells Transformer Engine
    // which microbatch is a step's first (TELinear.forward's
    // is_first_microbatch) and the later ones, and every recomputed forward,
    // reuse the cached FP8 weights; FP8 weights gathered in FP8 are cast
    // once a gather (docs/COST_MODEL.md "FP8 linear layers").
    double fwd_weight_cast_s = 0, recompute_weight_cast_s = 0, bwd_weight_cast_s = 0;
    // Communication on the critical path, seconds (per layer, per microbatch).
    double tp_fwd_s = 0;
    double tp_bwd_s = 0;
    double tp_recompute_s = 0;
    double cp_recompute_s = 0;  // the exposed CP ring exchange, run again
    double tp_mlp_fwd_s = 0;    // the MLP's part of tp_fwd_s
    bool ep_recomputed = false; // selective recompute re-runs the all-to-alls
    double cp_fwd_s = 0;        // exposed part (the ring overlaps attention)
    double cp_bwd_s = 0;
    double ep_fwd_s = 0; // all-to-all, dispatch + combine (time, not yet with contention)
    double ep_bwd_s = 0;
    // The share of the SMs the all-to-all's kernels hold while they run
    // beside compute (plan ep_overlap): NCCL's CTAs, or the flex
    // dispatcher's SMs (plan ep_dispatcher_sms).
    double ep_sm_share = 0;
    // FLOPs per GPU, forward only (backward = 2x model, executed as below).
    double model_flops_fwd = 0;   // causal attention counted at half
    double hw_flops_total = 0;    // executed: fwd + bwd + recompute
    double model_flops_total = 0; // fwd + bwd
    // Bytes each GPU sends per microbatch (for traffic accounting).
    double tp_bytes = 0; // per GPU, all TP collectives of the layer (fwd+bwd+recompute)
    double cp_bytes = 0;
    double ep_bytes = 0; // leaving the GPU, all directions summed
    double ep_bytes_fwd_one_way = 0;
    // What the GPU sends each EP peer on another host, one way (the traffic
    // the network carries between locations).
    double ep_bytes_per_remote_peer = 0;
    // Parameters held per GPU (after TP/EP sharding, before ZeRO).
    double params = 0;
    double expert_params = 0; // part of params that are expert weights (sharded by ep)
    // Of params, the weights of the FP8 linear layers, and of those the ones
    // whose FP8 copies Transformer Engine keeps
    // (KernelConstants::fp8_weight_copy_bytes).
    double fp8_linear_params = 0, fp8_copy_params = 0;
    // Activation bytes kept per microbatch until its backward.
    double activation_bytes = 0;
    // Peak transient activation bytes while backpropagating this layer
    // (full recompute re-materialises one layer).
    double transient_bytes = 0;
    // Of those kept until the backward, what a deferred weight gradient
    // still holds after the input-gradient pass (zero-bubble).
    double wgrad_held_bytes = 0;
    bool operator==(const LayerCost&) const = default;
};

// What a memory-bound kernel streams a second on `gpu`: its HBM bandwidth
// times KernelConstants::hbm_efficiency.
double hbmBytesPerS(const GpuModel& gpu, const KernelConstants& kc);

// The built-in tier constants of the layer's TP, CP and EP communication:
// NVLink bus bandwidth ~80% of its peak and 1 us a step (the nvlink
// profile); the NIC fabric's roce profile, 92% and 2 us a message, plus the
// kernel's fixed cost (KernelConstants::kernel_overhead_s).
double builtinScaleUpEfficiency();
double builtinScaleUpStep();
double builtinScaleOutEfficiency();
double builtinScaleOutStep();

struct LayerContext {
    const Model* model = nullptr;
    const Plan* plan = nullptr;
    const GpuModel* gpu = nullptr;
    double scale_up_gbps = 0;  // NVLink per GPU
    double scale_out_gbps = 0; // NIC per GPU
    // The building's tiers (layerContext fills them: its calibrated values,
    // else the built-in nvlink and roce profiles, core/cost/network.cpp):
    // goodput = line rate x efficiency; a ring step costs the step latency.
    double scale_up_efficiency = builtinScaleUpEfficiency();
    double scale_up_step_s = builtinScaleUpStep();
    double scale_out_efficiency = builtinScaleOutEfficiency();
    double scale_out_step_s = builtinScaleOutStep();
    int gpus_per_host = 8;
    bool moe_layer = false;
    KernelConstants kc;
};

// One layer of `model` under `plan` on a GPU of `building` (null gpu when
// the cluster does not know its GPU model).
LayerContext layerContext(const Cluster& cluster, const Building& building, const Model& model,
                          const Plan& plan);

LayerCost layerCost(const LayerContext& ctx);

// The plan fields layerCost, embeddingCost and logitsCost read: equal keys
// (same model, GPU and building) give equal costs, so callers can keep them.
struct LayerPlanKey {
    int tp = 0, cp = 0, ep = 0, etp = 0;
    std::int64_t micro_batch_sequences = 0, sequence_length = 0;
    Recompute recompute = Recompute::None;
    unsigned recompute_modules = kDefaultRecomputeModules;
    bool sequence_parallel = false, flash_attention = false;
    bool sequence_parallel_regather = true;
    bool hidden_dropout = false, attention_dropout = false;
    AttentionKernel attention_kernel = AttentionKernel::Auto;
    bool tp_comm_overlap = false;
    bool cuda_graphs = false;
    Elementwise elementwise = Elementwise::Fused;
    bool rope_fusion = true;
    Fp8Recipe fp8_recipe = Fp8Recipe::Current;
    Fp8Linear fp8_linear = Fp8Linear::TransformerEngine;
    CrossEntropy cross_entropy = CrossEntropy::Megatron;
    EpDispatcher ep_dispatcher = EpDispatcher::AllToAll;
    int ep_dispatcher_sms = 0;
    CpRing cp_ring = CpRing::TeP2p;
    int cp_a2a_size = 1;
    // Full recompute of some layers only (Megatron's block method): the
    // building's costs then hold the layers without recompute too.
    bool block_recompute = false;
    // Zero-bubble issues the weight gradients as a pass of their own, which
    // the host paces apart (hostPace).
    bool zero_bubble = false;
    bool operator==(const LayerPlanKey&) const = default;
};
LayerPlanKey layerPlanKey(const Plan& plan);
// A plan with exactly the key's fields set (what layerCost needs of a plan).
Plan planOf(const LayerPlanKey& key);

// Embedding lookup (first stage) and logits + cross-entropy (last stage).
struct EdgeCost {
    double fwd_s = 0;
    double bwd_s = 0;
    double model_flops_total = 0;
    double hw_flops_total = 0;
    double params = 0;
    double activation_bytes = 0; // kept per microbatch
    // Held beyond activation_bytes while it runs, one microbatch at a time
    // (the loss's working copies of the logits).
    double transient_bytes = 0;
    double tp_fwd_s = 0;
    double tp_bwd_s = 0;
    bool operator==(const EdgeCost&) const = default;
};
// The loss's memory traffic per logit element (bytes) and its kernels,
// forward and backward, the bytes per logit it saves for the backward, and
// the most bytes per logit alive at once while it runs (the saved ones
// included).
struct LossPasses {
    double fwd_bytes = 0;
    int fwd_kernels = 0;
    double bwd_bytes = 0;
    int bwd_kernels = 0;
    double saved_bytes = 0;
    double peak_bytes = 0;
};
LossPasses lossPasses(CrossEntropy c);
// The hosts an MoE token's top_k experts lie on, expected over routing
// that is uniform inside the model's group limit, the experts in contiguous
// blocks over `hosts` hosts (docs/COST_MODEL.md, EP); with the EP degree
// for `hosts`, the EP ranks it touches.
double expectedHostsTouched(const MoeConfig& moe, int hosts);
EdgeCost embeddingCost(const LayerContext& ctx);
EdgeCost logitsCost(const LayerContext& ctx);
// One multi-token-prediction module's own work (Model::mtp_layers): the
// embedding looked up again, its norms and projection with their TP
// exchanges; its transformer block and its pass through the output layer
// and loss are a layer and a logitsCost of their own.
EdgeCost mtpCost(const LayerContext& ctx);

// Rated peak FLOP/s for this model's dtype on this GPU (the FP8 peak for an
// FP8 model): the denominator of MFU. What the GEMMs sustain is gemmRate.
double gemmPeakFlops(const GpuModel& gpu, const Model& model);

// The precision of a model's linear layers (QKV, projection, MLP, experts)
// on this GPU: FP8 for an FP8 model on a GPU with an FP8 peak. The attention
// core, the router and the logits stay BF16 (Transformer Engine's recipe).
GemmPrecision linearPrecision(const GpuModel& gpu, const Model& model);

// Ring collectives inside the scale-up domain (NVLink), alpha-beta:
// all-reduce 2(n-1)/n * S / B + 2(n-1) alpha (Thakur et al. 2005; Patarasuk
// & Yuan 2009). Reduce-scatter or all-gather: half of that.
double ringAllReduceTime(double bytes, int n, double bytes_per_s, double alpha_s);
double ringAllGatherTime(double bytes, int n, double bytes_per_s, double alpha_s);

// Activation bytes per layer per microbatch, Korthikanti et al. 2022,
// "Reducing Activation Recomputation in Large Transformer Models", Table 2,
// generalised to GQA and a gated MLP (see docs/COST_MODEL.md).
// fp8Linear: the linear layers run FP8 (linearPrecision); with Transformer
// Engine's layers (plan fp8_linear) their saved inputs are FP8.
double activationBytesPerLayer(const Model& model, const Plan& plan, bool moeLayer,
                               bool fp8Linear = false);

// Bytes a deferred weight-gradient pass (zero-bubble's W) keeps alive per
// layer per microbatch after its input-gradient pass: every linear layer's
// input and output gradient, which dW = X^T dY reads (Qi et al. 2024, Sec.
// 2: "B frees part of the activations, W the rest").
double weightGradHeldBytesPerLayer(const Model& model, const Plan& plan, bool moeLayer);

} // namespace sa

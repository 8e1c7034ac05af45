#include "cost/compute.h"

#include "cost/network.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace sa {

namespace {

constexpr double kBf16 = 2.0;

struct Gemm {
    double m, n, k, batch;
    // Separate linear layers of the framework's eager code that read the
    // same input, which the model runs as this one GEMM (torchtitan's wq, wk
    // and wv: 3; w1 and w3: 2): each casts that input to FP8 on its own.
    double readers = 1;
    // Where Transformer Engine's FP8 casts run (docs/COST_MODEL.md "Where
    // Transformer Engine casts"): the input is a norm's output
    // (LayerNormLinear: QKV, FC1), and under sequence parallelism the input
    // (column-parallel) or the output gradient (row-parallel: the
    // projection, FC2) is all-gathered from this many shards, in FP8.
    bool norm_input = false;
    double input_shards = 1, grad_shards = 1;
};

// Elementwise bytes per token per layer in the forward pass, in units of
// hidden: two layer norms (read + write, 4 B/elem each) and two residual
// adds (two reads, one write: 6 B/elem each) = 20 bytes per hidden element.
constexpr double kElementwiseBytesPerHidden = 20.0;
// Fused kernels per layer: forward ~10 (norms, GEMMs, attention,
// activation, adds), backward about twice that.
constexpr double kKernelsFwd = 10.0;
// Unfused 2021-era attention: Megatron's fused scale-mask-softmax over the
// b*a*s*s score tensor reads the scores and writes the probabilities (4
// bytes per score element); its backward reads the probabilities and their
// gradient and writes the scores' (6).
constexpr double kSoftmaxBytesFwd = 4.0;
constexpr double kSoftmaxBytesBwd = 6.0;
// Dropout as a kernel of its own (torch dropout, not fused into a
// neighbour), per BF16 element and each way: forward read, write and the
// 1-byte mask autograd keeps; backward the gradient and the mask read and
// the gradient written. docs/COST_MODEL.md "Dropout".
constexpr double kDropoutKernelBytes = 5.0;

double streamTime(const GpuModel& gpu, double bytes, const KernelConstants& kc) {
    return bytes / hbmBytesPerS(gpu, kc);
}

// Forward GEMM plus its two backward GEMMs (dgrad, wgrad), Megatron's
// standard decomposition: Y = X W (m x n x k); dX = dY W^T (m x k x n);
// dW = X^T dY (k x n x m).
struct GemmTimes {
    double fwd = 0, dgrad = 0, wgrad = 0, flops = 0;
    // FP8 cast kernels each pass launches (one batch element's).
    double fwd_casts = 0, dgrad_casts = 0, wgrad_casts = 0;
    // Of fwd and of dgrad, the weight's casts (LayerCost::fwd_weight_cast_s).
    double fwd_weight_cast = 0, dgrad_weight_cast = 0;
};

GemmTimes gemmTriple(const GpuModel& gpu, const GemmRate& rate, const Gemm& g,
                     const KernelConstants& kc) {
    GemmTimes t;
    t.fwd = gemmTime(gpu, rate, g.m, g.n, g.k, g.batch, kc);
    t.dgrad = gemmTime(gpu, rate, g.m, g.k, g.n, g.batch, kc);
    t.wgrad = gemmTime(gpu, rate, g.k, g.n, g.m, g.batch, kc);
    t.flops = 2.0 * g.m * g.n * g.k * g.batch;
    if (rate.precision == GemmPrecision::Fp8) {
        // Quantise the forward inputs (activation m x k, weight k x n) and,
        // in backward, the output gradient (m x n); each cast also writes the
        // transposed copy the backward GEMM reads (dgrad and wgrad reuse them).
        const bool delayed = rate.fp8_recipe == Fp8Recipe::Delayed;
        const bool torchao = rate.fp8_linear == Fp8Linear::Torchao;
        const bool eager = torchao && rate.eager;
        const double castBytes = eager     ? kc.fp8_eager_cast_bytes_per_element
                                 : delayed ? kc.fp8_delayed_cast_bytes_per_element
                                           : kc.fp8_cast_bytes_per_element;
        const double castCount = eager     ? kc.fp8_eager_cast_kernels
                                 : delayed ? kc.fp8_delayed_cast_kernels
                                           : kc.fp8_cast_kernels;
        const double castKernels = castCount * kc.kernel_overhead_s;
        // Eager runs each reading linear's cast of the shared input; a
        // compiled graph computes it once.
        const double inputCasts = eager ? g.readers : 1.0;
        const double x = g.m * g.k * g.batch, w = g.k * g.n * g.batch, dy = g.m * g.n * g.batch;
        const auto cast = [&](double elements, double times) {
            return streamTime(gpu, castBytes * elements * times, kc) + times * castKernels;
        };
        // Transformer Engine casts a tensor that is all-gathered under
        // sequence parallelism on its shard, row-wise only (read 2 B, write
        // 1 B, after the amax pass of current scaling), gathers it in FP8
        // and transposes the gathered copy for the backward GEMM that reads
        // it column-wise (fp8_transpose / _create_transpose: read 1 B, write
        // 1 B, one kernel), in the backward: TE 1.9 linear.py,
        // layernorm_linear.py, module/base.py grad_output_preprocess; TE 2.4
        // distributed.py _all_gather_fp8. With delayed scaling the norm of
        // a LayerNormLinear writes its output in FP8 itself (rmsnorm_fwd_fp8
        // / layernorm_fwd_fp8: no cast kernel) and only the transpose is
        // separate: in the forward without SP (TE 2.x, after the norm
        // kernel), in the backward with it.
        const auto rowwise = [&](double elements) {
            return streamTime(gpu, (castBytes - 1.0) * elements, kc) + castKernels;
        };
        const auto transpose = [&](double elements) {
            return streamTime(gpu, 2.0 * elements, kc) + kc.kernel_overhead_s;
        };
        const bool te = !torchao;
        const double weightCast = cast(w, 1);
        t.fwd += weightCast;
        t.fwd_weight_cast = weightCast;
        t.fwd_casts = castCount;
        if (te && g.norm_input && delayed) {
            if (g.input_shards > 1) {
                t.wgrad += transpose(x);
                t.wgrad_casts += 1;
            } else {
                t.fwd += transpose(x);
                t.fwd_casts += 1;
            }
        } else if (te && g.input_shards > 1) {
            t.fwd += rowwise(x / g.input_shards);
            t.fwd_casts += castCount;
            t.wgrad += transpose(x);
            t.wgrad_casts += 1;
        } else {
            t.fwd += cast(x, inputCasts);
            t.fwd_casts += castCount * inputCasts;
        }
        if (te && g.grad_shards > 1) {
            t.dgrad += rowwise(dy / g.grad_shards);
            t.wgrad += transpose(dy);
            t.wgrad_casts += 1;
        } else {
            t.dgrad += cast(dy, 1);
        }
        t.dgrad_casts = castCount;
        if (torchao) {
            // torchao's matmul_with_hp_or_float8_args.backward keeps the
            // BF16 input and weight and casts again: the weight for dgrad,
            // the input and (along the other dimension) the output gradient
            // for wgrad; compiled, the gradient's second cast shares the
            // first's passes.
            t.dgrad_weight_cast = cast(w, 1);
            t.dgrad += t.dgrad_weight_cast;
            t.wgrad += cast(x, inputCasts) + (eager ? cast(dy, 1) : 0.0);
            t.dgrad_casts += castCount;
            t.wgrad_casts = castCount * (inputCasts + (eager ? 1.0 : 0.0));
        }
    }
    return t;
}

// A tier's goodput per GPU, bytes/s: line rate x efficiency.
double tierBytesPerS(double gbps, double efficiency) {
    return gbpsToBytesPerS(gbps) * efficiency;
}

} // namespace

double hbmBytesPerS(const GpuModel& gpu, const KernelConstants& kc) {
    return gpu.hbm_tbps * 1e12 * kc.hbm_efficiency;
}

double builtinScaleUpEfficiency() {
    return builtinTechnology("nvlink")->efficiency;
}

double builtinScaleUpStep() {
    return builtinTechnology("nvlink")->per_message_us * 1e-6;
}

double builtinScaleOutEfficiency() {
    return builtinTechnology("roce")->efficiency;
}

double builtinScaleOutStep() {
    return builtinTechnology("roce")->per_message_us * 1e-6 + KernelConstants{}.kernel_overhead_s;
}

double gemmPeakFlops(const GpuModel& gpu, const Model& model) {
    if (model.dtype == DType::FP8 && gpu.peak_tflops_fp8 > 0)
        return gpu.peak_tflops_fp8 * 1e12;
    return gpu.peak_tflops_bf16 * 1e12;
}

GemmPrecision linearPrecision(const GpuModel& gpu, const Model& model) {
    return model.dtype == DType::FP8 && gpu.peak_tflops_fp8 > 0 ? GemmPrecision::Fp8
                                                                : GemmPrecision::Bf16;
}

double powerClockFactor(const GpuModel& gpu, const KernelConstants& kc) {
    double clock = 1.0;
    if (gpu.boost_clock_mhz > 0 && gpu.sustained_clock_mhz > 0)
        clock = gpu.sustained_clock_mhz / gpu.boost_clock_mhz;
    else if (gpuArch(gpu) == GpuArch::Hopper)
        clock = kc.hopper_sustained_clock_mhz / kc.hopper_boost_clock_mhz;
    if (!(gpu.tdp_w > 0) || !(gpu.power_limit_w > 0) || gpu.power_limit_w >= gpu.tdp_w)
        return clock;
    return clock * std::pow(gpu.power_limit_w / gpu.tdp_w, kc.power_clock_exponent);
}

GpuModel atBoostClock(const GpuModel& gpu, const KernelConstants& kc) {
    GpuModel g = gpu;
    g.boost_clock_mhz = g.boost_clock_mhz > 0 ? g.boost_clock_mhz : kc.hopper_boost_clock_mhz;
    g.sustained_clock_mhz = g.boost_clock_mhz;
    return g;
}

GemmRate gemmRate(const GpuModel& gpu, GemmPrecision precision, const KernelConstants& kc) {
    GemmRate r;
    r.precision = precision;
    const bool fp8 = precision == GemmPrecision::Fp8;
    r.peak_flops =
        (fp8 ? gpu.peak_tflops_fp8 : gpu.peak_tflops_bf16) * 1e12 * powerClockFactor(gpu, kc);
    r.efficiency = fp8 ? gpu.gemm_efficiency_fp8 : gpu.gemm_efficiency;
    return r;
}

namespace {

// Wave quantisation, partial tiles and the k-loop share of an m x n x k GEMM.
double gemmShapeFactor(const GpuModel& gpu, double m, double n, double k, double batch,
                       const KernelConstants& kc) {
    if (m <= 0 || n <= 0 || k <= 0)
        return 1.0;
    const double tiles = std::ceil(m / kc.tile_m) * std::ceil(n / kc.tile_n) * batch;
    const double sms = std::max(1, gpu.sms);
    const double waves = std::ceil(tiles / sms);
    // Partial tiles do full work: the useful fraction of the tiles' area.
    const double tileFill =
        (m * n) / (std::ceil(m / kc.tile_m) * kc.tile_m * std::ceil(n / kc.tile_n) * kc.tile_n);
    const double waveUse = tiles / (waves * sms);
    const double kShare = k / (k + kc.k0);
    return waveUse * tileFill * kShare;
}

} // namespace

double gemmEfficiency(const GpuModel& gpu, double m, double n, double k, double batch,
                      const KernelConstants& kc) {
    return gpu.gemm_efficiency * gemmShapeFactor(gpu, m, n, k, batch, kc);
}

double gemmTime(const GpuModel& gpu, const GemmRate& rate, double m, double n, double k,
                double batch, const KernelConstants& kc) {
    if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
        return 0;
    const double flops = 2.0 * m * n * k * batch;
    const double compute =
        flops / (rate.peak_flops * rate.efficiency * gemmShapeFactor(gpu, m, n, k, batch, kc));
    const double inputBytes = rate.precision == GemmPrecision::Fp8 ? 1.0 : kBf16;
    const double bytes = (inputBytes * (m * k + k * n) + kBf16 * m * n) * batch;
    return std::max(compute, streamTime(gpu, bytes, kc)) + kc.kernel_overhead_s;
}

double gemmTime(const GpuModel& gpu, double peak, double m, double n, double k, double batch,
                const KernelConstants& kc) {
    GemmRate rate;
    rate.peak_flops = peak;
    rate.efficiency = gpu.gemm_efficiency;
    return gemmTime(gpu, rate, m, n, k, batch, kc);
}

double ringAllReduceTime(double bytes, int n, double bps, double alpha) {
    if (n <= 1 || bytes <= 0)
        return 0;
    return 2.0 * (n - 1) / n * bytes / bps + 2.0 * (n - 1) * alpha;
}

double ringAllGatherTime(double bytes, int n, double bps, double alpha) {
    if (n <= 1 || bytes <= 0)
        return 0;
    return double(n - 1) / n * bytes / bps + double(n - 1) * alpha;
}

// The matmuls of a block in the forward order of torchtitan's models (its
// per-op activation checkpointing counts them, per block): output and input
// features on one of `tp` ranks, and what the output is. Attention: wq wk wv
// wo (models/llama/model.py); MLA: wq_a wq_b (or wq) wkv_a wkv_b wo
// (models/deepseek_v3/model.py); then a dense MLP's w1 w3 w2 (GELU: w1 w2).
// An MoE layer's grouped expert GEMMs are not aten.mm and are left out.
// An output split by TP, or whole on every rank without SP (hidden-wide, or
// an MLA latent).
enum class MmOutput { Split, Whole };
struct BlockMatmul {
    double out = 0, in = 0;
    MmOutput kind = MmOutput::Split;
};
struct BlockMatmuls {
    std::array<BlockMatmul, 8> mm;
    int n = 0;
    void add(double out, double in, MmOutput kind) { mm[std::size_t(n++)] = {out, in, kind}; }
};

BlockMatmuls blockMatmuls(const Model& m, double tp, bool moeLayer) {
    BlockMatmuls b;
    const double h = double(m.hidden), a = m.headsPerRank(tp);
    if (m.mla) {
        const MlaConfig& l = *m.mla;
        const double qk = double(l.qk_head_dim + l.rope_head_dim);
        if (l.q_lora_rank > 0) {
            b.add(double(l.q_lora_rank), h, MmOutput::Whole);
            b.add(a * qk, double(l.q_lora_rank), MmOutput::Split);
        } else {
            b.add(a * qk, h, MmOutput::Split);
        }
        b.add(double(l.kv_lora_rank + l.rope_head_dim), h, MmOutput::Whole);
        b.add(a * double(l.qk_head_dim + l.v_head_dim), double(l.kv_lora_rank), MmOutput::Split);
        b.add(h, a * double(l.v_head_dim), MmOutput::Whole);
    } else {
        const double dh = double(m.headDim()), kv = m.kvHeadsPerRank(tp) * dh;
        b.add(a * dh, h, MmOutput::Split);
        b.add(kv, h, MmOutput::Split);
        b.add(kv, h, MmOutput::Split);
        b.add(h, a * dh, MmOutput::Whole);
    }
    if (!(moeLayer && m.moe)) {
        const double f = double(m.ffn_hidden) / tp;
        b.add(f, h, MmOutput::Split);
        if (m.mlp == MlpKind::SwiGlu)
            b.add(f, h, MmOutput::Split);
        b.add(h, f, MmOutput::Whole);
    }
    return b;
}

double weightGradHeldBytesPerLayer(const Model& model, const Plan& plan, bool moeLayer) {
    const double t = plan.parallelism.tp;
    const double h = double(model.hidden);
    const AttentionWidths w = model.attentionWidths();
    const double tokens =
        double(plan.micro_batch_sequences) * double(plan.sequence_length) / plan.parallelism.cp;
    const bool sp = plan.sequence_parallel && t > 1;
    double ffn = double(model.ffn_hidden), tokensFactor = 1.0;
    if (moeLayer && model.moe) {
        ffn = double(model.moe->expert_ffn_hidden);
        tokensFactor = model.moe->top_k * model.moe->executedFactor() + model.moe->shared_experts;
    }
    const double up = (model.mlp == MlpKind::SwiGlu ? 2.0 : 1.0) * ffn;
    // Inputs of QKV and of the MLP's first GEMM: replicated across TP
    // without SP (as in activationBytesPerLayer).
    const double replicated = h + tokensFactor * h;
    // Projection and down-projection inputs; the output gradients of QKV,
    // projection, up and down GEMMs: split by t. MLA's latents (the up
    // projections' inputs) and their gradients: like the QKV input.
    const double split =
        w.out + tokensFactor * ffn + (w.q + w.k + w.v) + h + tokensFactor * (up + h);
    const double whole = replicated + 2.0 * w.latent;
    const double perValue = sp ? (whole + split) / t : whole + split / t;
    return tokens * kBf16 * perValue;
}

double activationBytesPerLayer(const Model& model, const Plan& plan, bool moeLayer,
                               bool fp8Linear) {
    const double t = plan.parallelism.tp;
    const double h = double(model.hidden);
    const AttentionWidths w = model.attentionWidths();
    const double s = double(plan.sequence_length) / plan.parallelism.cp;
    const double tokens = double(plan.micro_batch_sequences) * s;
    const bool sp = plan.sequence_parallel && t > 1;

    if (plan.recompute == Recompute::Full) // only each layer's input is kept
        return tokens * kBf16 * h / (sp ? t : 1.0);
    if (plan.recompute == Recompute::SelectiveOp) {
        // torchtitan's per-op policy keeps the block's input, the attention
        // output and the outputs of the odd matmuls (blockMatmuls: wq, wv,
        // w1 and, SwiGLU, w2 of wq wk wv wo w1 w3 w2; GELU's w2 is the 6th
        // and recomputed). An MoE layer's grouped expert GEMMs are not
        // aten.mm: they keep their activations as without recompute.
        const bool gatedMlp = model.mlp == MlpKind::SwiGlu;
        double replicatedOp = h, splitOp = w.out;
        const BlockMatmuls mms = blockMatmuls(model, 1.0, moeLayer);
        for (int i = 0; i < mms.n; i += 2) {
            const BlockMatmul& mm = mms.mm[std::size_t(i)];
            (mm.kind == MmOutput::Split ? splitOp : replicatedOp) += mm.out;
        }
        if (moeLayer && model.moe) {
            const double fe = double(model.moe->expert_ffn_hidden);
            const double copies =
                model.moe->top_k * model.moe->executedFactor() + model.moe->shared_experts;
            splitOp += copies * ((gatedMlp ? 2.0 : 1.0) * fe + fe);
        }
        if (plan.hidden_dropout > 0)
            replicatedOp += h; // the two 1-byte dropout masks, in 2-byte units
        const double perValue = sp ? (replicatedOp + splitOp) / t : replicatedOp + splitOp / t;
        return tokens * kBf16 * perValue;
    }

    // Korthikanti et al. 2022 Table 2, per token, bf16: with dropout (plan
    // hidden_dropout, attention_dropout) MHA + GeLU gives their
    // 34 sbh + 5 as^2 b; without, 32 sbh + 2 as^2 b.
    // Replicated across TP without SP: the two norm inputs and the inputs of
    // the QKV and first MLP GEMMs (8h); the rest is split by t.
    double ffnIn, ffnOut;
    double ffn = double(model.ffn_hidden);
    double tokensFactor = 1.0;
    if (moeLayer && model.moe) {
        ffn = double(model.moe->expert_ffn_hidden);
        tokensFactor = model.moe->top_k * model.moe->executedFactor() +
                       model.moe->shared_experts; // each routed copy keeps its activations
    }
    const bool gated = model.mlp == MlpKind::SwiGlu;
    ffnIn = (gated ? 2.0 : 1.0) * ffn;
    ffnOut = ffn;
    double replicated = 8.0 * h;
    double split = 2.0 * (w.q + w.k) + 2.0 * w.v + 2.0 * w.out // Q, K, V, projection input
                   + tokensFactor * (kBf16 * ffnIn + kBf16 * ffnOut);
    // MLA's latents, the up projections' inputs (split only by SP, as the
    // QKV input is; FP8 below with Transformer Engine's linears).
    replicated += kBf16 * w.latent;
    if (fp8Linear && plan.fp8_linear == Fp8Linear::TransformerEngine) {
        // Transformer Engine's FP8 linears save their input as FP8 for the
        // backward, 1 byte per element (TE 1.8 module/linear.py keeps
        // inputmat_t, the FP8 transpose, or the FP8 input under SP;
        // layernorm_linear.py keeps the norm's FP8 output ln_out beside the
        // BF16 norm input; 2.x keeps the quantized input's columnwise data):
        // the QKV and FC1 inputs drop to 1 byte (the norm inputs stay
        // BF16), the FC2 input too (Megatron's activation output, freed once
        // FC2 has its FP8 copy). The projection's FP8 input is a copy beside
        // the attention output that the attention kernel itself keeps in
        // BF16 for its backward: 1 byte more.
        replicated = 6.0 * h + w.latent;
        split += w.out - tokensFactor * ffnOut;
    }
    // Hidden dropout keeps its two 1-byte masks (Korthikanti et al.'s 2sbh).
    if (plan.hidden_dropout > 0)
        replicated += 2.0 * h;
    // The unfused core keeps the softmax output (2 bytes a score) and, with
    // attention dropout, its mask and output (1 + 2): Korthikanti's 5as^2b.
    if (!plan.flash_attention && !plan.recomputes(RecomputeModule::CoreAttn))
        split += (plan.attention_dropout > 0 ? 5.0 : 2.0) * model.heads * s;
    if (plan.recompute == Recompute::Selective) {
        // What the other modules of selective recompute free (Plan::
        // recompute_modules). Transformer Engine's FP8 linears keep their
        // own FP8 copy of the input, which discarding a BF16 output does not
        // free.
        const bool te8 = fp8Linear && plan.fp8_linear == Fp8Linear::TransformerEngine;
        const double ffnKept = te8 ? 2.0 * ffnIn + ffnOut : kBf16 * (ffnIn + ffnOut);
        const double shared = moeLayer && model.moe ? double(model.moe->shared_experts) : 0.0;
        if (plan.recomputes(RecomputeModule::Layernorm) && !te8)
            replicated -= 2.0 * kBf16 * h; // the QKV and FC1 inputs, the norms' outputs
        if (plan.recomputes(RecomputeModule::MlaUpProj) && model.mla)
            split -= 2.0 * (w.q + w.k) + 2.0 * w.v; // the attention's Q, K, V: made again
        const bool wholeMlp = moeLayer && model.moe ? plan.recomputes(RecomputeModule::Moe)
                                                    : plan.recomputes(RecomputeModule::Mlp);
        if (wholeMlp) {
            // Checkpointed at the module's input (the residual stream the
            // fused pre-MLP norm reads): FC1's input and everything after go.
            if (!plan.recomputes(RecomputeModule::Layernorm) || te8)
                replicated -= (te8 ? 1.0 : kBf16) * h;
            split -= tokensFactor * ffnKept;
        } else if (moeLayer && model.moe) {
            if (plan.recomputes(RecomputeModule::MoeAct) && !te8)
                split -= (tokensFactor - shared) * kBf16 * ffnOut; // the FC2 inputs
            if (plan.recomputes(RecomputeModule::SharedExperts))
                split -= shared * ffnKept;
        }
    }
    // Without the backward re-gather (plan sequence_parallel_regather
    // false: DTensor's ColwiseParallel) the QKV and FC1 inputs are kept as
    // gathered, whole on every TP rank, where recompute does not free them.
    double gatheredKept = 0;
    if (sp && !plan.sequence_parallel_regather) {
        const bool te8 = fp8Linear && plan.fp8_linear == Fp8Linear::TransformerEngine;
        const double input = (te8 ? 1.0 : kBf16) * h;
        const bool selective = plan.recompute == Recompute::Selective;
        const bool normsFreed = selective && plan.recomputes(RecomputeModule::Layernorm) && !te8;
        const bool mlpFreed =
            selective && !(moeLayer && model.moe) && plan.recomputes(RecomputeModule::Mlp);
        if (!model.mla && !normsFreed)
            gatheredKept += input;
        if (!(moeLayer && model.moe) && !normsFreed && !mlpFreed)
            gatheredKept += input;
    }
    const double perToken =
        sp ? (replicated - gatheredKept + split) / t + gatheredKept : replicated + split / t;
    return tokens * perToken;
}

LayerContext layerContext(const Cluster& cluster, const Building& building, const Model& model,
                          const Plan& plan) {
    LayerContext ctx;
    ctx.model = &model;
    ctx.plan = &plan;
    ctx.gpu = cluster.gpuOf(building);
    ctx.scale_up_gbps = building.scale_up_gbps;
    ctx.scale_out_gbps = building.scale_out_gbps;
    if (building.scale_up_efficiency)
        ctx.scale_up_efficiency = *building.scale_up_efficiency;
    if (building.scale_up_latency_us)
        ctx.scale_up_step_s = *building.scale_up_latency_us * 1e-6;
    if (building.scale_out_efficiency)
        ctx.scale_out_efficiency = *building.scale_out_efficiency;
    if (building.scale_out_latency_us)
        ctx.scale_out_step_s = *building.scale_out_latency_us * 1e-6;
    ctx.gpus_per_host = building.gpus_per_host;
    return ctx;
}

LayerPlanKey layerPlanKey(const Plan& plan) {
    LayerPlanKey k;
    k.tp = plan.parallelism.tp;
    k.cp = plan.parallelism.cp;
    k.ep = plan.parallelism.ep;
    k.etp = plan.parallelism.etp;
    k.micro_batch_sequences = plan.micro_batch_sequences;
    k.sequence_length = plan.sequence_length;
    k.recompute = plan.recompute;
    k.recompute_modules =
        plan.recompute == Recompute::Selective ? plan.recompute_modules : kDefaultRecomputeModules;
    k.sequence_parallel = plan.sequence_parallel;
    k.sequence_parallel_regather = plan.sequence_parallel_regather;
    k.hidden_dropout = plan.hidden_dropout > 0;
    k.attention_dropout = plan.attention_dropout > 0;
    k.flash_attention = plan.flash_attention;
    k.attention_kernel = plan.attention_kernel;
    k.elementwise = plan.elementwise;
    k.rope_fusion = plan.rope_fusion;
    k.tp_comm_overlap = plan.tp_comm_overlap;
    k.cuda_graphs = plan.cuda_graphs;
    k.fp8_recipe = plan.fp8_recipe;
    k.fp8_linear = plan.fp8_linear;
    k.cross_entropy = plan.cross_entropy;
    k.ep_dispatcher = plan.ep_dispatcher;
    k.ep_dispatcher_sms = plan.ep_dispatcher_sms;
    k.cp_ring = plan.cp_ring;
    k.cp_a2a_size = plan.cp_a2a_size;
    k.block_recompute =
        plan.recompute == Recompute::Full && plan.recompute_method == RecomputeMethod::Block;
    k.zero_bubble = plan.schedule.kind == ScheduleKind::ZeroBubble;
    return k;
}

Plan planOf(const LayerPlanKey& key) {
    Plan p;
    p.parallelism.tp = key.tp;
    p.parallelism.cp = key.cp;
    p.parallelism.ep = key.ep;
    p.parallelism.etp = key.etp;
    p.micro_batch_sequences = key.micro_batch_sequences;
    p.sequence_length = key.sequence_length;
    p.recompute = key.recompute;
    p.recompute_modules = key.recompute_modules;
    p.sequence_parallel = key.sequence_parallel;
    p.sequence_parallel_regather = key.sequence_parallel_regather;
    // Only whether each dropout runs changes a layer's cost, not its rate.
    p.hidden_dropout = key.hidden_dropout ? 0.1 : 0.0;
    p.attention_dropout = key.attention_dropout ? 0.1 : 0.0;
    p.flash_attention = key.flash_attention;
    p.attention_kernel = key.attention_kernel;
    p.elementwise = key.elementwise;
    p.rope_fusion = key.rope_fusion;
    p.tp_comm_overlap = key.tp_comm_overlap;
    p.cuda_graphs = key.cuda_graphs;
    p.fp8_recipe = key.fp8_recipe;
    p.fp8_linear = key.fp8_linear;
    p.cross_entropy = key.cross_entropy;
    p.ep_dispatcher = key.ep_dispatcher;
    p.ep_dispatcher_sms = key.ep_dispatcher_sms;
    p.cp_ring = key.cp_ring;
    p.cp_a2a_size = key.cp_a2a_size;
    if (key.block_recompute)
        p.recompute_method = RecomputeMethod::Block;
    if (key.zero_bubble)
        p.schedule.kind = ScheduleKind::ZeroBubble;
    return p;
}

AttentionRates attentionRates(const GpuModel& gpu, AttentionKernel kernel, double keys, int cp,
                              const KernelConstants& kc, double headDim) {
    AttentionRates r;
    if (gpuArch(gpu) != GpuArch::Hopper) {
        r.fwd = gpu.gemm_efficiency * kc.flash_fwd_relative;
        r.bwd = gpu.gemm_efficiency * kc.flash_bwd_relative;
        return r;
    }
    const HopperAttention& h = kc.hopper_attention;
    const bool fa2 = kernel == AttentionKernel::Flash2, fa3 = kernel == AttentionKernel::Flash3;
    const AttentionEfficiency& e128 = fa2 ? h.flash2 : fa3 ? h.flash3 : h.cudnn;
    const AttentionEfficiency& e64 = fa2 ? h.flash2_d64 : fa3 ? h.flash3_d64 : h.cudnn_d64;
    const auto curve = [keys](double peak, double s0) { return peak * keys / (keys + s0); };
    // Under CP the diagonal ring step is causal, the other cp - 1 attend to
    // a whole chunk: they share the (causal-halved) FLOPs evenly, forward
    // and backward.
    const double causalShare = 1.0 / std::max(1, cp);
    const auto mix = [causalShare](double causal, double full) {
        return 1.0 / (causalShare / causal + (1.0 - causalShare) / full);
    };
    const auto rates = [&](const AttentionEfficiency& e) {
        AttentionRates x;
        x.fwd = mix(curve(e.fwd_causal, e.fwd_causal_s0), curve(e.fwd_full, e.fwd_full_s0));
        x.bwd = mix(curve(e.bwd_causal, e.bwd_causal_s0), curve(e.bwd_full, e.bwd_full_s0));
        return x;
    };
    r = rates(e128);
    if (headDim < 128) {
        // The kernels' tiles are narrower at a smaller head dimension: less
        // work per loaded K, V block against the softmax's fixed cost per
        // score. Measured at 64 and 128; linear between.
        const AttentionRates r64 = rates(e64);
        const double w = std::clamp((128.0 - headDim) / 64.0, 0.0, 1.0);
        r.fwd += w * (r64.fwd - r.fwd);
        r.bwd += w * (r64.bwd - r.bwd);
    }
    return r;
}

namespace {

// The sizes of one layer on one GPU of a tp x cp cell.
struct LayerShape {
    double t, cp, ep;     // degrees
    double et;            // the experts' TP degree (Parallelism::expertTp)
    double b;             // sequences per microbatch
    double sFull, sLocal; // sequence length, and its share on one CP rank
    double T;             // tokens per GPU
    double Texp;          // tokens an expert TP group gathers: T, or etp sequence shards of it
    double h, dh;         // hidden, head dimension
    double headsLocal, kvLocal;
    AttentionWidths w;     // the attention's tensors on this rank
    GemmRate linear, bf16; // the linear layers' GEMMs (FP8 for an FP8 model), and BF16
    bool sp, gated;
};

LayerShape layerShape(const LayerContext& ctx) {
    const Model& model = *ctx.model;
    const Plan& plan = *ctx.plan;
    LayerShape s;
    s.t = plan.parallelism.tp;
    s.cp = plan.parallelism.cp;
    s.ep = plan.parallelism.ep;
    s.et = plan.parallelism.expertTp();
    s.b = double(plan.micro_batch_sequences);
    s.sFull = double(plan.sequence_length);
    s.sLocal = s.sFull / s.cp;
    s.T = s.b * s.sLocal;
    s.Texp = s.et < s.t ? s.T / s.t * s.et : s.T;
    s.h = double(model.hidden);
    s.dh = double(model.headDim());
    s.headsLocal = model.headsPerRank(s.t);
    s.kvLocal = model.kvHeadsPerRank(s.t);
    s.w = model.attentionWidths(s.t);
    s.linear = gemmRate(*ctx.gpu, linearPrecision(*ctx.gpu, model), ctx.kc);
    s.linear.fp8_recipe = plan.fp8_recipe;
    s.linear.fp8_linear = plan.fp8_linear;
    s.linear.eager = plan.elementwise == Elementwise::Eager;
    s.bf16 = gemmRate(*ctx.gpu, GemmPrecision::Bf16, ctx.kc);
    s.sp = plan.sequence_parallel && s.t > 1;
    s.gated = model.mlp == MlpKind::SwiGlu;
    return s;
}

// Output features of the GEMMs that read the layer's (normed) input on one
// rank: the fused QKV, or MLA's down projections.
double inputProjectionWidth(const Model& m, const LayerShape& s) {
    if (!m.mla)
        return s.w.q + s.w.k + s.w.v;
    const MlaConfig& l = *m.mla;
    return (l.q_lora_rank > 0 ? double(l.q_lora_rank) : s.w.q) +
           double(l.kv_lora_rank + l.rope_head_dim);
}

// A dense layer's linears as Megatron-Core's Transformer Engine spec builds
// them (gpt_layer_specs.py): QKV and FC1 are LayerNormColumnParallelLinear
// (the norm's output is their input, all-gathered under SP), the
// projection and FC2 RowParallelLinear (their output gradient all-gathered
// under SP). Only the FP8 casts (gemmTriple) read these.
Gemm normColumnLinear(Gemm g, const LayerShape& s) {
    g.norm_input = true;
    g.input_shards = s.sp ? s.t : 1.0;
    return g;
}
Gemm rowLinear(Gemm g, const LayerShape& s) {
    g.grad_shards = s.sp ? s.t : 1.0;
    return g;
}
// Bytes an element of the tensors Transformer Engine all-gathers over TP
// under SP (the norm's output before QKV and FC1, the output gradient
// before the projection's and FC2's dgrad): FP8 in an FP8 model, cast
// before the gather (TE 1.9 gather_along_first_dim on the uint8 ln_out;
// TE 2.4 distributed.py _all_gather_fp8; the userbuffers' fp8_buf); the
// reduce-scatters stay BF16.
double tpGatherBytes(const LayerShape& s) {
    const bool fp8 = s.linear.precision == GemmPrecision::Fp8 &&
                     s.linear.fp8_linear == Fp8Linear::TransformerEngine;
    return s.sp && fp8 ? 1.0 : kBf16;
}

// Bytes of the tensor an MoE layer's expert half all-gathers over its
// expert TP group before its experts and reduce-scatters after them (BF16),
// the experts being split over etp ranks (Megatron-Core's
// expert_tensor_parallel_size, TP by default). The all-to-all dispatcher
// sends each rank's sequence shard's top_k copies over EP, then gathers what
// arrived across the expert TP group (MoEAlltoAllTokenDispatcher
// dispatch_postprocess: gather_from_sequence_parallel_region over
// tp_group, the expert TP group), and the combine reduce-scatters it back
// before the reverse all-to-all: top_k copies of every token, each expert's
// whole capacity when padded to it. Without EP (Megatron-Core's all-gather
// dispatcher) the hidden states themselves are gathered and the output
// reduce-scattered; the flex dispatchers are charged the same. With the
// experts on fewer ranks than TP each gathers etp sequence shards, not the
// whole TP group's (LayerShape::Texp).
double moeTpTensorBytes(const LayerContext& ctx, const LayerShape& s) {
    const double hidden = s.Texp * s.h * kBf16;
    const Plan& plan = *ctx.plan;
    if (plan.parallelism.ep <= 1 || plan.ep_dispatcher != EpDispatcher::AllToAll)
        return hidden;
    const MoeConfig& moe = *ctx.model->moe;
    return hidden * double(moe.top_k) * moe.executedFactor();
}

// The GEMMs of a layer, summed: forward, input and weight gradients, FLOPs.
struct GemmSums {
    double fwd = 0, dgrad = 0, wgrad = 0, modelFlops = 0, hwFlops = 0;
    // Kernels the host launches for them: FP8 casts, and the GEMMs of a
    // batch (grouped experts) beyond the first (docs/COST_MODEL.md "Host").
    double fwdLaunches = 0, bwdLaunches = 0;
    double weightCastFwd = 0, weightCastDgrad = 0; // of fwd and dgrad, the weights' casts
    void add(const LayerContext& ctx, const GemmRate& rate, const Gemm& g,
             double modelShare = 1.0) {
        const GemmTimes gt = gemmTriple(*ctx.gpu, rate, g, ctx.kc);
        fwd += gt.fwd;
        weightCastFwd += gt.fwd_weight_cast;
        weightCastDgrad += gt.dgrad_weight_cast;
        dgrad += gt.dgrad;
        wgrad += gt.wgrad;
        modelFlops += gt.flops * modelShare;
        hwFlops += gt.flops;
        // Transformer Engine's GroupedLinear (Megatron-Core's grouped
        // experts) runs one GEMM per expert and quantises each expert's
        // input apart (general_grouped_gemm, split_quantize); PyTorch's
        // grouped_mm (torchtitan) is one kernel over all of them.
        const double perBatch = ctx.plan->elementwise == Elementwise::Fused ? g.batch : 1.0;
        fwdLaunches += perBatch * gt.fwd_casts + (perBatch - 1.0);
        bwdLaunches += perBatch * (gt.dgrad_casts + gt.wgrad_casts) + 2.0 * (perBatch - 1.0);
    }
};

// Attention core: QK^T and PV, 4 * b * a * s_q * s_kv * dh FLOPs, half of
// it for a causal mask (Narayanan et al. 2021 count it unmasked).
struct AttentionCore {
    double flopsFull = 0, model = 0; // unmasked FLOPs; model FLOPs (causal)
    double fwd = 0, bwd = 0, hw = 0; // times; executed FLOPs
    // Of fwd and bwd, the attention kernels alone (a CP ring's exchange
    // runs beside them, not beside its own merges).
    double kernel_fwd = 0, kernel_bwd = 0;
    double ring_kv_bytes = 0;        // a PyTorch CP ring's K and V a step (torchCpRing)
    double ring_transient_bytes = 0; // a CP exchange's buffers (torchCpRing, teCpExchange)
    // and the kernels it adds, forward and backward (each issued by the host)
    double exchange_fwd_kernels = 0, exchange_bwd_kernels = 0;
};

// PyTorch's context-parallel ring (plan cp_ring torch-*) on one rank, per
// layer and microbatch, from torch/distributed/tensor/experimental/
// _attention.py (_templated_ring_attention and its backward, _SDPAMerger,
// the rotaters; docs/COST_MODEL.md "Communication", CP). Counted for the
// rank whose every step after the first attends with all its queries (the
// last: load balancing halves the keys instead), as the ring waits for it.
// E: the output's elements; Ekv: K's and V's together, as SDPA receives
// them (torchtitan's block repeats them to the query heads first).
//   forward: K and V made contiguous and, before each of the c - 1 sends,
//     concatenated (2 + 2 B per Ekv each: c copies); every step's output
//     cast to fp32 (2 + 4 B per E), each after the first merged with the
//     running output (out - block_out, sigmoid(lse difference) x that,
//     out - that: 12 + 8 + 12 B per E), the result cast back (4 + 2);
//   backward: fp32 accumulators zeroed (4 B per E and per Ekv), the copies
//     again; each of the c steps adds its dK, dV (2 + 4 + 4 B per Ekv) and
//     dQ (2 + 4 + 4 per E) to them and concatenates the fp32 dK, dV to send
//     (4 + 4 per Ekv); the results cast back (4 + 2 per E and per Ekv).
//   held while it runs: the gathered K and V (all c chunks; two with the
//     alltoall rotation) and, forward, the fp32 running and step outputs
//     or, backward, the fp32 dQ, dK, dV and the dK, dV in flight.
struct CpExchangeWork {
    double kv_bytes = 0; // PyTorch's ring: K and V of one rank's chunk, BF16, each step
    double fwd_bytes = 0, bwd_bytes = 0, fwd_kernels = 0, bwd_kernels = 0;
    double transient_bytes = 0;
};

CpExchangeWork torchCpRing(const LayerContext& ctx, const LayerShape& s) {
    CpExchangeWork r;
    const double c = s.cp;
    // torchtitan's block (elementwise eager or compiled) repeats K and V to
    // the query heads before SDPA (repeat_kv, models/llama/model.py); MLA
    // has no repeat.
    const bool repeat =
        ctx.plan->elementwise != Elementwise::Fused && !ctx.model->mla && s.headsLocal > s.kvLocal;
    const double rep = repeat ? s.headsLocal / s.kvLocal : 1.0;
    const double E = s.T * s.w.out;
    const double Ekv = s.T * (s.w.k + s.w.v) * rep;
    r.kv_bytes = Ekv * kBf16;
    r.fwd_bytes = 4.0 * c * Ekv + E * (6.0 * c + 32.0 * (c - 1.0) + 6.0);
    r.bwd_bytes = 4.0 * (E + Ekv) + 4.0 * c * Ekv + c * (18.0 * Ekv + 10.0 * E) + 6.0 * (E + Ekv);
    // Kernels beyond the one attention call the model has: c - 1 more
    // calls, 2 copies, c - 1 concatenations, 2 casts a step, 7 merge ops a
    // step after the first (out and lse), 2 casts back; backward 3 zeros,
    // the copies, 4 ops a step, 2 casts back.
    r.fwd_kernels = (c - 1.0) + 2.0 + (c - 1.0) + 2.0 * c + 7.0 * (c - 1.0) + 2.0;
    r.bwd_kernels = (c - 1.0) + 3.0 + 2.0 + (c - 1.0) + 4.0 * c + 2.0;
    const double held = (ctx.plan->cp_ring == CpRing::TorchAllToAll ? 2.0 : c) * r.kv_bytes;
    r.transient_bytes = held + std::max(8.0 * E, 4.0 * E + 3.0 * 4.0 * Ekv);
    return r;
}

// The all-to-all group of Transformer Engine's hierarchical CP (plan
// cp_a2a_size with cp_ring te-p2p; 1 for every other exchange).
int cpA2aGroup(const LayerContext& ctx, const LayerShape& s) {
    return s.cp > 1 && ctx.plan->cp_ring == CpRing::TeP2p ? std::max(1, ctx.plan->cp_a2a_size) : 1;
}

// Transformer Engine's all-gather and all-to-all CP (plan cp_ring
// te-allgather, te-a2a; context_parallel.py AttnFuncWithCPAndKVAllGather,
// AttnFuncWithCPAndQKVOA2A) on one rank, per layer and microbatch: the
// memory-bound work around the attention kernels (the exchanges are
// layerComm's). Ekv: K's and V's elements on the rank, Eq, Eo: Q's and the
// output's.
//   all-gather: forward, the gathered K and V put in sequence order
//     (index_select, 2 + 2 B an element of the cp chunks) and a second
//     attention call (the rank's two chunks, each against the keys up to
//     it); backward, K and V gathered and reordered again, full-length dK
//     and dV zeroed (2 B), each call's dK, dV added into them (2 + 2 + 2 B)
//     and reordered for the reduce-scatter (2 + 2 B); held: the gathered K
//     and V and the full-length dK and dV.
//   a2a: Q, K, V and the output made contiguous head-major before their
//     all-to-all and put in sequence order after it (flash_attn_a2a_
//     communicate: two copies, 2 + 2 B an element each); backward the same
//     for dO and for dQ, dK, dV; held: each tensor and its exchanged copy.
//     The ring's hierarchical form (te-p2p with cp_a2a_size > 1) does the
//     same around its ring, over its all-to-all group.
//   ring (te-p2p, AttnFuncWithCPAndKVP2P with bshd/sbhd tensors, c ring
//     ranks): one attention call a step (c - 1 more than the model's one),
//     each step's output and softmax statistics kept, the statistics merged
//     after each step (c - 1 small kernels) and the outputs after the last
//     (flash_attn_fwd_out_correction_init and _out_correction, one fused
//     kernel each: the first reads and writes 2 + 2 B an element, each
//     later one reads the output and the step's and writes the output,
//     6 B, over half of the rows on the steps where this rank attends with
//     its second half only, which are half of the c - 1 over the ranks:
//     4 + 4.5 (c - 1) B an output element); held meanwhile, the c steps'
//     outputs. Backward: an attention call a step, dQ copied then added a
//     step (the same 4 + 4.5 (c - 1) B of Q's elements) and dK, dV copied
//     then added into the ring's buffer (where this rank's queries attend
//     with the whole chunk an add over half and a copy over the other half,
//     5 B, else 6 B: 4 + 5.5 (c - 1) B of K's and V's), 3 kernels the first
//     step, 5 and 3 on the two kinds of later step.
CpExchangeWork teCpExchange(const LayerContext& ctx, const LayerShape& s) {
    CpExchangeWork r;
    const double Ekv = s.T * (s.w.k + s.w.v);
    if (ctx.plan->cp_ring == CpRing::TeAllGather) {
        const double all = s.cp * Ekv;
        r.fwd_bytes = 4.0 * all;
        r.bwd_bytes = (4.0 + 2.0 + 6.0 + 4.0) * all;
        r.fwd_kernels = 2.0 + 1.0;
        r.bwd_kernels = 2.0 + 2.0 + 4.0 + 2.0 + 1.0;
        r.transient_bytes = 2.0 * all * kBf16;
        return r;
    }
    const int group = cpA2aGroup(ctx, s);
    if (ctx.plan->cp_ring == CpRing::TeA2a || group > 1) {
        const double E = s.T * (s.w.q + s.w.out) + Ekv;
        r.fwd_bytes += 2.0 * 4.0 * E;
        r.bwd_bytes += 2.0 * 4.0 * E;
        r.fwd_kernels += 2.0 * 4.0;
        r.bwd_kernels += 2.0 * 4.0;
        r.transient_bytes += 2.0 * E * kBf16;
    }
    const double c = ctx.plan->cp_ring == CpRing::TeP2p ? s.cp / group : 1.0;
    if (c > 1) {
        const double Eq = s.T * s.w.q, Eo = s.T * s.w.out;
        r.fwd_bytes += (4.0 + 4.5 * (c - 1.0)) * Eo;
        r.fwd_kernels += (c - 1.0) + c + (c - 1.0);
        r.bwd_bytes += (4.0 + 4.5 * (c - 1.0)) * Eq + (4.0 + 5.5 * (c - 1.0)) * Ekv;
        r.bwd_kernels += (c - 1.0) + 3.0 + 4.0 * (c - 1.0);
        r.transient_bytes += c * Eo * kBf16;
    }
    return r;
}

AttentionCore attentionCore(const LayerContext& ctx, const LayerShape& s) {
    const GpuModel& gpu = *ctx.gpu;
    const KernelConstants& kc = ctx.kc;
    AttentionCore a;
    // QK^T over the score dimension, PV over the value dimension (both the
    // head dimension, except for MLA: qk_head_dim + rope_head_dim and
    // v_head_dim).
    a.flopsFull = 2.0 * s.b * s.headsLocal * s.sLocal * s.sFull * (s.w.score_dim + s.w.value_dim);
    a.model = 0.5 * a.flopsFull;
    if (ctx.plan->flash_attention) {
        // FlashAttention skips masked blocks; backward recomputes the scores:
        // 2.5x the forward FLOPs (Dao 2023).
        // The attention core stays BF16 in an FP8 model (Transformer
        // Engine runs DotProductAttention in BF16 unless fp8_dpa is set).
        // Transformer Engine's all-to-all CP runs the attention over the
        // whole sequence on cp-th of the heads: one causal call, no ring.
        // Its hierarchical form rings cp / A chunks of A ranks' tokens, on
        // A-th of the heads.
        const bool a2a = s.cp > 1 && ctx.plan->cp_ring == CpRing::TeA2a;
        const int group = cpA2aGroup(ctx, s);
        const double headDim = std::max(s.w.score_dim, s.w.value_dim);
        const AttentionRates r =
            attentionRates(gpu, ctx.plan->attention_kernel, a2a ? s.sFull : s.sLocal * group,
                           a2a ? 1 : int(s.cp) / group, kc, headDim);
        const double peak = s.bf16.peak_flops;
        // Attention dropout runs inside the fused kernel (Philox numbers
        // drawn in the forward and drawn again in the backward, no mask
        // kept): KernelConstants::attention_dropout_factor on its time.
        const double dropout = ctx.plan->attention_dropout > 0 ? kc.attention_dropout_factor : 1.0;
        a.fwd = dropout * a.model / (peak * r.fwd) + kc.kernel_overhead_s;
        a.bwd = dropout * 2.5 * a.model / (peak * r.bwd) + kc.kernel_overhead_s;
        const double windowed = ctx.model->windowedLayerShare();
        if (windowed > 0 && ctx.model->sliding_window->size < s.sFull) {
            // Sliding-window layers (Model::sliding_window): a query meets
            // min(position + 1, w) keys, w S - w^2 / 2 pairs of a sequence
            // against the causal S^2 / 2, and the kernels skip the blocks
            // outside the band. Their rate is a causal attention's over 2w
            // keys, whose queries meet as many keys on average; under CP
            // (Transformer Engine's all-to-all or all-gather only) each rank
            // holds its share of the pairs. Counted as the layers' mean: the
            // pattern's full and windowed layers alternate inside a stage.
            const double w = double(ctx.model->sliding_window->size), S = s.sFull;
            const double share = (w * S - 0.5 * w * w) / (0.5 * S * S);
            const AttentionRates rw =
                attentionRates(gpu, ctx.plan->attention_kernel, 2.0 * w, 1, kc, headDim);
            const double model = share * a.model;
            const double fwd = dropout * model / (peak * rw.fwd) + kc.kernel_overhead_s;
            const double bwd = dropout * 2.5 * model / (peak * rw.bwd) + kc.kernel_overhead_s;
            a.fwd = (1.0 - windowed) * a.fwd + windowed * fwd;
            a.bwd = (1.0 - windowed) * a.bwd + windowed * bwd;
            a.model = (1.0 - windowed) * a.model + windowed * model;
        }
        a.hw = 3.5 * a.model;
    } else {
        // Unfused: two batched GEMMs over the full score matrix plus a
        // memory-bound softmax/dropout over it.
        const double batch = s.b * s.headsLocal;
        const double scoreElems = batch * s.sLocal * s.sFull;
        const double dq = s.w.score_dim, dv = s.w.value_dim;
        // Attention dropout: a dropout kernel over the probabilities.
        const double dropout = ctx.plan->attention_dropout > 0 ? kDropoutKernelBytes : 0.0;
        a.fwd = gemmTime(gpu, s.bf16, s.sLocal, s.sFull, dq, batch, kc) +
                gemmTime(gpu, s.bf16, s.sLocal, dv, s.sFull, batch, kc) +
                streamTime(gpu, (kSoftmaxBytesFwd + dropout) * scoreElems, kc) +
                kc.kernel_overhead_s;
        a.bwd = 2.0 * (gemmTime(gpu, s.bf16, s.sLocal, s.sFull, dq, batch, kc) +
                       gemmTime(gpu, s.bf16, s.sLocal, dv, s.sFull, batch, kc)) +
                streamTime(gpu, (kSoftmaxBytesBwd + dropout) * scoreElems, kc) +
                kc.kernel_overhead_s;
        a.hw = 3.0 * a.flopsFull;
    }
    a.kernel_fwd = a.fwd;
    a.kernel_bwd = a.bwd;
    if (s.cp > 1) {
        const CpExchangeWork ring =
            isTorchCpRing(ctx.plan->cp_ring) ? torchCpRing(ctx, s) : teCpExchange(ctx, s);
        a.fwd += streamTime(gpu, ring.fwd_bytes, kc) + ring.fwd_kernels * kc.kernel_overhead_s;
        a.bwd += streamTime(gpu, ring.bwd_bytes, kc) + ring.bwd_kernels * kc.kernel_overhead_s;
        a.ring_kv_bytes = ring.kv_bytes;
        a.ring_transient_bytes = ring.transient_bytes;
        a.exchange_fwd_kernels = ring.fwd_kernels;
        a.exchange_bwd_kernels = ring.bwd_kernels;
    }
    return a;
}

// MLP: dense, or routed experts (+ shared experts) for an MoE layer. Adds
// its GEMMs and parameters; returns the bytes its activation functions
// stream, and the shared experts' part of them and of the forward GEMMs.
struct MlpWork {
    double act_bytes = 0;        // all activation functions, forward
    double shared_act_bytes = 0; // the shared experts' of them
    double shared_fwd_s = 0;     // the shared experts' forward GEMMs
    double shared_flops = 0;     // and their FLOPs
};
MlpWork mlp(const LayerContext& ctx, const LayerShape& s, GemmSums& gemms, LayerCost& c) {
    const Model& model = *ctx.model;
    const double t = s.t, T = s.T, h = s.h;
    const bool gated = s.gated;
    MlpWork work;
    double& ffnActBytes = work.act_bytes;
    if (ctx.moe_layer && model.moe) {
        const MoeConfig& moe = *model.moe;
        const double fe = double(moe.expert_ffn_hidden);
        const double localExperts = double(moe.experts) / s.ep;
        // The tokens an expert rank runs: its expert TP group's (the whole TP
        // group's, or etp sequence shards when the experts fold TP ranks into
        // EP) from each of the ep ranks, top_k copies each. Each expert is
        // split over et ranks.
        const double groupTokens = s.Texp;
        const double et = s.et;
        const double tokensPerExpert =
            groupTokens * s.ep * moe.top_k * moe.executedFactor() / moe.experts;
        // The router stays BF16 (Megatron-Core's TopKRouter is not a TE layer).
        gemms.add(ctx, s.bf16, {T, double(moe.experts), h, 1});
        // Capacity padding (pad_to_capacity, capacity_factor > 1) is executed, not model work.
        const double routed = 1.0 / std::max(1.0, moe.executedFactor());
        gemms.add(ctx, s.linear, {tokensPerExpert, (gated ? 2.0 : 1.0) * fe / et, h, localExperts},
                  routed);
        gemms.add(ctx, s.linear, {tokensPerExpert, h, fe / et, localExperts}, routed);
        c.expert_params = localExperts * (gated ? 3.0 : 2.0) * h * fe / et;
        c.params += c.expert_params + h * moe.experts;
        ffnActBytes +=
            groupTokens * moe.top_k * moe.executedFactor() * (gated ? 3.0 : 2.0) * fe / et * kBf16;
        if (moe.shared_experts > 0) {
            const double fs = fe * moe.shared_experts;
            const GemmSums before = gemms;
            gemms.add(ctx, s.linear, {T, (gated ? 2.0 : 1.0) * fs / t, h, 1, gated ? 2.0 : 1.0});
            gemms.add(ctx, s.linear, {T, h, fs / t, 1});
            work.shared_fwd_s = gemms.fwd - before.fwd;
            work.shared_flops = gemms.hwFlops - before.hwFlops;
            c.params += (gated ? 3.0 : 2.0) * h * fs / t;
            work.shared_act_bytes = T * (gated ? 3.0 : 2.0) * fs / t * kBf16;
            ffnActBytes += work.shared_act_bytes;
        }
    } else {
        const double f = double(model.ffn_hidden);
        gemms.add(ctx, s.linear,
                  normColumnLinear({T, (gated ? 2.0 : 1.0) * f / t, h, 1, gated ? 2.0 : 1.0}, s));
        gemms.add(ctx, s.linear, rowLinear({T, h, f / t, 1}, s));
        c.params += (gated ? 3.0 : 2.0) * h * f / t;
        ffnActBytes += T * (gated ? 3.0 : 2.0) * f / t * kBf16;
    }
    return work;
}

// A layer's elementwise work in the forward pass: bytes streamed per GPU
// and kernels launched. Fused (Megatron-Core / Transformer Engine kernels,
// torch.compile): two norms (read + write, 4 B per element each), two
// residual adds (6 B each) and the MLP activation, 10 kernels with the
// GEMMs. Eager: PyTorch runs each tensor op of the block as its own kernel,
// reading its inputs from HBM and writing its output; the ops are those of
// torchtitan's Llama block (torchtitan/models/llama/model.py and
// models/norms.py):
//   RMSNorm (x2): x.float() 2+4 B, pow 4+4, mean 4, x * rsqrt 4+4,
//     type_as 4+2, * weight 2+2 = 36 B per element, 7 kernels (with the
//     row statistics' add and rsqrt);
//   residual adds (x2): 6 B per element, 1 kernel each;
//   apply_rotary_emb on Q and K: float() 2+4, complex multiply 4+4,
//     type_as 4+2 = 20 B per element, 3 kernels each;
//   repeat_kv with fewer KV heads than query heads: K and V expanded and
//     copied (read the KV width, write the query width, 2 B each), 2 kernels;
//   the attention output's transpose(1, 2).contiguous(): 2+2 B per element;
//   the MLP: silu(w1 x) 2+2 and * w3 x 4+2 = 10 B per FFN element for
//     SwiGLU, 2 kernels (GELU: 2+2, 1 kernel);
//   separate GEMMs for wq, wk and wv (7 GEMM kernels for SwiGLU).
// Fused, the backward streams twice the forward's bytes in twice the
// kernels. Eager, each op's gradient is what PyTorch's autograd formulas
// (tools/autograd/derivatives.yaml, FunctionsManual.cpp) run, and autograd
// adds the gradients of a tensor that feeds several ops (InputBuffer::add):
//   RMSNorm: * weight: grad * weight 2+2, grad * y and its sum over the
//     tokens for the weight 2+2+2, 2; type_as back to fp32 2+4; x * rsqrt:
//     grad * rsqrt 4+4, grad * x and its row sum 4+4+4, 4; the row
//     statistics (rsqrt's, the mean's expand / h 4); pow's
//     grad * 2 * x.pow(1) (a copy 4+4, the scalar product 4+4, the product
//     4+4+4); the two gradients of x.float() added 4+4+4; the cast back to
//     BF16 4+2: 92 B per element, 16 kernels;
//   residual adds: the add passes its gradient through; the stream feeds
//     the norm and the add, so autograd adds the two: 6 B, 1 kernel each;
//   the gradients of the GEMMs that share an input added: wq, wk, wv (2
//     adds) and w1, w3 (1) over the gathered [T, h] input, 6 B each;
//   apply_rotary_emb: its three ops have one input and one output, and so
//     have their gradients (the casts back, the product with the
//     conjugate frequencies): 20 B per element in 3 kernels again;
//   repeat_kv: expand's gradient sums the repeated heads (read the query
//     width, write the KV width): the forward's bytes, 2 kernels;
//   the output's transpose(1, 2).contiguous(): the gradient passes as a
//     view, SDPA's backward reads it in place: nothing;
//   silu(a) * b: grad * b and grad * silu(a) (6 B each), silu_backward (6):
//     18 B per FFN element, 3 kernels (GELU: gelu_backward 6 B, 1);
//   MLA (torchtitan's DeepSeek-V3): its latent norms as the RMSNorm above,
//     the concatenations' gradients split as the forward joined (its
//     bytes), the attention input shared by the query and KV down
//     projections (1 add); an MoE layer's shared inputs are not counted.
// Compiled (torch.compile over torchtitan's blocks): fused, but for that
// rotary embedding, which Inductor cannot generate code for (complex
// tensors) and runs as the eager ATen kernels.
struct ElementwiseWork {
    double bytes = 0, kernels = 0;           // forward, all but the rotary embedding
    double bwd_bytes = 0, bwd_kernels = 0;   // their backward
    double rope_bytes = 0, rope_kernels = 0; // forward, as much again backward
    // Hidden dropout, forward, as much again backward.
    double dropout_bytes = 0, dropout_kernels = 0;
    double fwdBytes() const { return bytes + rope_bytes + dropout_bytes; }
    double bwdBytes() const { return bwd_bytes + rope_bytes + dropout_bytes; }
    double fwdKernels() const { return kernels + rope_kernels + dropout_kernels; }
    double bwdKernels() const { return bwd_kernels + rope_kernels + dropout_kernels; }
};

// Hidden dropout on the two residual branches (the attention projection's
// and the MLP's output, Megatron-Core's bias-dropout-add; docs/COST_MODEL.md
// "Dropout"). Fused into the bias-dropout-add (Megatron's jit-fused
// bias_dropout_add_fused_train, Transformer Engine's layers, Inductor), the
// dropout adds the 1-byte mask autograd keeps: written in the forward, read
// in the backward. Eager, it is a dropout kernel of its own on each branch
// (kDropoutKernelBytes).
void addHiddenDropout(const LayerContext& ctx, const LayerShape& s, ElementwiseWork& w) {
    if (!(ctx.plan->hidden_dropout > 0))
        return;
    const double elems = 2.0 * s.T * s.h / (s.sp ? s.t : 1.0);
    const bool eager = ctx.plan->elementwise == Elementwise::Eager;
    w.dropout_bytes = elems * (eager ? kDropoutKernelBytes : 1.0);
    w.dropout_kernels = eager ? 2.0 : 0.0;
}
ElementwiseWork elementwiseForward(const LayerContext& ctx, const LayerShape& s,
                                   double ffnActBytes) {
    // torchtitan's apply_rotary_emb (eager, and compiled: Inductor leaves
    // complex tensors to ATen): float() 2+4, complex multiply 4+4, type_as
    // 4+2 = 20 B per element of Q and K (MLA: of their decoupled RoPE
    // parts), 3 kernels on each. Unfused beside fused kernels (rope_fusion
    // false): the rotate-half form, t * cos + rotate_half(t) * sin, with
    // rotate_half = cat(-t2, t1): the negation 2 B per element of t (half
    // of it read and written), cat 2+2, the two products 2+2 each (cos and
    // sin broadcast over the heads), their sum 2+2+2 = 20 B in 5 kernels;
    // its gradient the same ops' (the products by cos and sin, the
    // negation, the halves joined, the two paths added): as much again.
    const double hq = s.headsLocal * s.dh, hk = s.kvLocal * s.dh;
    const auto& mla = ctx.model->mla;
    ElementwiseWork w;
    const double ropeElems =
        mla ? s.headsLocal * double(mla->rope_head_dim) + double(mla->rope_head_dim) : hq + hk;
    if (ctx.plan->elementwise != Elementwise::Fused) {
        w.rope_bytes = s.T * 20.0 * ropeElems;
        w.rope_kernels = 6.0;
    } else if (!ctx.plan->rope_fusion) {
        w.rope_bytes = s.T * 20.0 * ropeElems;
        w.rope_kernels = 10.0;
    }
    // Norms and residuals are split by TP only with sequence parallelism.
    // MLA's latent norms (fused into the up projections' LayerNormLinear):
    // read and write each latent element once more.
    if (ctx.plan->elementwise != Elementwise::Eager) {
        w.bytes = s.T * (kElementwiseBytesPerHidden * s.h / (s.sp ? s.t : 1.0) +
                         2.0 * kBf16 * s.w.latent) +
                  ffnActBytes;
        w.kernels = kKernelsFwd;
        w.bwd_bytes = 2.0 * w.bytes;
        w.bwd_kernels = 2.0 * w.kernels;
        return w;
    }
    // Eager backward (above): RMSNorm 92 B per element and 16 kernels, a
    // residual's gradient sum 6 B and 1, the shared GEMM inputs' gradient
    // sums 6 B per element of the gathered input, the activation's
    // gradient (SwiGLU 18 B per FFN element in 3 kernels against the
    // forward's 10 in 2; GELU 6 in 1 against 4 in 1).
    constexpr double kNormBwd = 92.0, kNormBwdKernels = 16.0, kResidualBwd = 6.0, kSumBwd = 6.0;
    const double actFwd = s.gated ? ffnActBytes * 10.0 / 6.0 : ffnActBytes;
    const double actBwd = s.gated ? ffnActBytes * 18.0 / 6.0 : ffnActBytes * 6.0 / 4.0;
    const double actBwdKernels = s.gated ? 3.0 : 1.0;
    const bool denseMlp = !(ctx.moe_layer && ctx.model->moe);
    const double mlpInputSums = denseMlp && s.gated ? 1.0 : 0.0; // w1 and w3
    const double hN = s.h / (s.sp ? s.t : 1.0);
    if (mla) {
        // torchtitan's DeepSeek-V3 attention (models/deepseek_v3/model.py):
        // RMSNorms on the query and KV latents, RoPE on the decoupled parts
        // only (each head's query part, the key part shared by the heads),
        // the nope and RoPE parts concatenated into Q and K; no repeat_kv.
        const bool qLatent = mla->q_lora_rank > 0;
        w.bytes = s.T * (2.0 * 36.0 * hN + 2.0 * 6.0 * hN + 36.0 * s.w.latent +
                         4.0 * (s.w.q + s.w.k) + 4.0 * s.w.out) +
                  actFwd;
        // 14 + 7 per latent norm, 2 residual, (6 RoPE,) 2 concatenations, 1
        // transpose, the activation's, the GEMMs and the attention.
        const double gemmsAndAttention = (qLatent ? 5.0 : 4.0) + (s.gated ? 3.0 : 2.0) + 1.0;
        w.kernels = 14.0 + (qLatent ? 14.0 : 7.0) + 2.0 + 2.0 + 1.0 + (s.gated ? 2.0 : 1.0) +
                    gemmsAndAttention;
        const double norms = qLatent ? 4.0 : 3.0;
        // The query and KV down projections share the attention input, on
        // the sequence shard under SP; w1 and w3 the gathered MLP input.
        const double sums = 1.0 + mlpInputSums;
        w.bwd_bytes = s.T * (2.0 * kNormBwd * hN + 2.0 * kResidualBwd * hN + kNormBwd * s.w.latent +
                             4.0 * (s.w.q + s.w.k) + kSumBwd * (hN + mlpInputSums * s.h)) +
                      actBwd;
        w.bwd_kernels =
            norms * kNormBwdKernels + 2.0 + 2.0 + sums + actBwdKernels + 2.0 * gemmsAndAttention;
        return w;
    }
    const bool repeat = s.headsLocal > s.kvLocal;
    w.bytes =
        s.T * (2.0 * 36.0 * hN + 2.0 * 6.0 * hN + (repeat ? 4.0 * (hq + hk) : 0.0) + 4.0 * hq) +
        actFwd;
    // 14 norm, 2 residual, (6 RoPE,) 2 repeat, 1 transpose, 2 (1) activation
    // kernels, 7 GEMMs (wq, wk, wv, wo, w1, w2, w3) and the attention.
    const double gemmsAndAttention = (s.gated ? 7.0 : 6.0) + 1.0;
    w.kernels = 14.0 + 2.0 + (repeat ? 2.0 : 0.0) + 1.0 + (s.gated ? 2.0 : 1.0) + gemmsAndAttention;
    const double sums = 2.0 + mlpInputSums; // wq, wk, wv; w1, w3
    w.bwd_bytes = s.T * (2.0 * kNormBwd * hN + 2.0 * kResidualBwd * hN +
                         (repeat ? 4.0 * (hq + hk) : 0.0) + sums * kSumBwd * s.h) +
                  actBwd;
    w.bwd_kernels = 2.0 * kNormBwdKernels + 2.0 + (repeat ? 2.0 : 0.0) + sums + actBwdKernels +
                    2.0 * gemmsAndAttention;
    return w;
}

// Permutation passes of an MoE layer's forward (the backward runs each one's
// mirror image, the same bytes). The dispatcher gathers each token's top_k
// copies into expert order before the experts and scatters them back,
// weighted, after (Megatron-Core token_dispatcher.py permute / unpermute,
// fused or not; torchtitan's MoE index_select / scatter_add): 2. Under EP
// Megatron-Core's all-to-all dispatcher permutes into rank order before the
// exchange and, with several local experts, regroups the received tokens by
// expert after it and back again (MoEAlltoAllTokenDispatcher
// sort_chunks_by_idxs): 4. The flex dispatcher's kernels take the tokens in
// their own order: DeepEP's received tokens are permuted by expert once and
// unpermuted once before the combine (_DeepepManager), HybridEP does the
// same inside its dispatch and combine (_HybridEPManager): 2.
double moePermutePasses(const LayerContext& ctx, const LayerShape& s) {
    const double localExperts = double(ctx.model->moe->experts) / s.ep;
    if (s.ep > 1 && ctx.plan->ep_dispatcher != EpDispatcher::AllToAll)
        return 2.0;
    return 2.0 + (s.ep > 1 && localExperts > 1 ? 2.0 : 0.0);
}

// The passes' time: each reads and writes every copy's hidden vector in BF16.
double moePermuteTime(const LayerContext& ctx, const LayerShape& s) {
    if (!ctx.moe_layer || !ctx.model->moe)
        return 0;
    const MoeConfig& moe = *ctx.model->moe;
    const double copies = (s.sp ? s.T / s.t : s.T) * moe.top_k * moe.executedFactor();
    const double passes = moePermutePasses(ctx, s);
    return passes *
           (streamTime(*ctx.gpu, 2.0 * copies * s.h * kBf16, ctx.kc) + ctx.kc.kernel_overhead_s);
}

// One all-to-all among `ep` ranks, each a cell of `cellGpus` consecutive GPUs
// (the rank order puts TP and CP inside EP), sending `perPeer` bytes to every
// other rank. NCCL runs an all-to-all as grouped point-to-point sends to all
// peers at once (nccl-tests alltoall.cu: ncclSend/ncclRecv per peer inside
// ncclGroupStart/End), so the peers on the same host are reached over the
// scale-up fabric while those on other hosts go through the GPU's own NIC,
// concurrently: the slower of the two bounds the exchange (the split
// DeepSeek-V3, §3.2.2, builds its dispatch around: IB and NVLink in
// parallel, 50 vs 160 GB/s per GPU).
// Probability that none of k distinct experts drawn from `pool` falls among
// `held` of them (hypergeometric).
double missAll(double pool, double held, int k) {
    double p = 1;
    for (int i = 0; i < k; ++i) {
        const double left = pool - held - i;
        if (left <= 0)
            return 0;
        p *= left / (pool - i);
    }
    return p;
}

double logChoose(double n, double r) {
    return std::lgamma(n + 1) - std::lgamma(r + 1) - std::lgamma(n - r + 1);
}

} // namespace

double expectedHostsTouched(const MoeConfig& moe, int hosts) {
    const double E = moe.experts, H = std::max(1, hosts);
    const int k = moe.top_k;
    const int G = moe.router_groups, M = moe.router_group_topk;
    if (G <= 0 || M <= 0 || (G % hosts != 0 && hosts % G != 0))
        return H * (1 - missAll(E, E / H, k)); // no limit, or groups not aligned to hosts
    const double pool = double(M) * E / G;     // the experts of the chosen groups
    if (hosts % G == 0)                        // each group spans hosts / G hosts
        return H * (double(M) / G) * (1 - missAll(pool, E / H, k));
    // Each host holds q whole groups; c of them chosen (hypergeometric).
    const int q = G / hosts;
    double touched = 0;
    for (int c = std::max(0, M - (G - q)); c <= std::min(q, M); ++c) {
        const double pc = std::exp(logChoose(q, c) + logChoose(G - q, M - c) - logChoose(G, M));
        touched += pc * (1 - missAll(pool, c * E / G, k));
    }
    return H * touched;
}

namespace {

// One EP exchange, dispatch or combine: `local` peers reached over NVLink
// with `localBytes` each and `remote` peers through the NIC with
// `remoteBytes` each, all at once; the slower side bounds it.
double epExchangeTime(const LayerContext& ctx, int local, double localBytes, int remote,
                      double remoteBytes) {
    const double nvlink =
        local * (localBytes / tierBytesPerS(ctx.scale_up_gbps, ctx.scale_up_efficiency) +
                 ctx.scale_up_step_s);
    const double network =
        remote * (remoteBytes / tierBytesPerS(ctx.scale_out_gbps, ctx.scale_out_efficiency) +
                  ctx.scale_out_step_s);
    return std::max(nvlink, network);
}

// Copies of a token the flex dispatcher moves over NVLink: DeepEP sends a
// token once to each rank holding one of its experts, however many of
// them that rank holds (get_dispatch_layout's is_token_in_rank; the rank
// permutes its received tokens to its experts after). HybridEP's NVLink
// side is taken as the all-to-all's, one copy per (token, expert).
double nvlinkCopies(const Plan& plan, const MoeConfig& moe, int ep) {
    if (plan.ep_dispatcher == EpDispatcher::Flex)
        return expectedHostsTouched(moe, ep);
    return moe.top_k;
}

// The outputs of the column-parallel GEMMs whose input sequence parallelism
// gathers (the dgrad GEMMs' k): QKV's, or none for MLA, whose down
// projections run on the shard; a dense MLP's FC1. An MoE layer's experts
// receive their tokens from the dispatcher.
std::vector<double> regatheredInputs(const LayerContext& ctx, const LayerShape& s) {
    std::vector<double> out;
    if (!ctx.model->mla)
        out.push_back(inputProjectionWidth(*ctx.model, s));
    if (!(ctx.moe_layer && ctx.model->moe))
        out.push_back((s.gated ? 2.0 : 1.0) * double(ctx.model->ffn_hidden) / s.t);
    return out;
}

// The share of the SMs the EP exchange's kernels hold. NCCL's all-to-all
// holds one CTA per channel (ncclOverlapShare). The flex dispatcher's
// kernels run on the SMs they were given: Megatron-Core's
// moe_flex_dispatcher_num_sms (before it moe_deepep_num_sms and
// moe_hybridep_num_sms), else the backend's default: DeepEP 20
// (token_dispatcher.py, "DeepEP's historical mcore default"), HybridEP 24
// for a group inside one NVLink domain and 8 for one across them (DeepEP
// hybrid-ep branch, csrc/hybrid_ep/config.cuh Configurer: num_sms_dispatch_api
// and num_sms_combine_api).
constexpr int kDeepEpSms = 20;
constexpr int kHybridEpSmsInDomain = 24, kHybridEpSmsAcross = 8;
double epSmShare(const Plan& plan, const GpuModel& gpu, bool acrossHosts) {
    if (plan.ep_dispatcher == EpDispatcher::AllToAll || gpu.sms <= 0)
        return ncclOverlapShare(gpu.sms);
    int sms = plan.ep_dispatcher_sms;
    if (sms <= 0)
        sms = plan.ep_dispatcher == EpDispatcher::Flex
                  ? kDeepEpSms
                  : (acrossHosts ? kHybridEpSmsAcross : kHybridEpSmsInDomain);
    return std::min(double(sms), double(gpu.sms) - 1.0) / double(gpu.sms);
}

// TP, CP and EP communication of the layer on the critical path.
void layerComm(const LayerContext& ctx, const LayerShape& s, const AttentionCore& attn,
               LayerCost& c) {
    const Plan& plan = *ctx.plan;
    const bool full = plan.recompute == Recompute::Full;
    const double T = s.T, h = s.h;
    // TP: two all-reduces (or RS+AG pairs with SP, same volume) per layer
    // forward and two backward (Shoeybi et al. 2019, Fig. 4; Korthikanti
    // et al. 2022, Fig. 5).
    const int ti = plan.parallelism.tp;
    if (ti > 1) {
        const double bytes = T * h * kBf16;
        const double bps = tierBytesPerS(ctx.scale_up_gbps, ctx.scale_up_efficiency);
        // With SP an all-gather and a reduce-scatter: the gather in FP8 where
        // Transformer Engine casts first (tpGatherBytes).
        const double gatherBytes = T * h * tpGatherBytes(s);
        const double one = s.sp ? ringAllGatherTime(gatherBytes, ti, bps, ctx.scale_up_step_s) +
                                      ringAllGatherTime(bytes, ti, bps, ctx.scale_up_step_s)
                                : ringAllReduceTime(bytes, ti, bps, ctx.scale_up_step_s);
        // An MoE layer's tokens reach the experts through the dispatcher,
        // in BF16 (moeTpTensorBytes).
        const bool moe = ctx.moe_layer && ctx.model->moe;
        const double moeBytes = moe ? moeTpTensorBytes(ctx, s) : 0.0;
        const int eti = int(s.et);
        const double mlpOne =
            moe ? ringAllReduceTime(moeBytes, eti, bps, ctx.scale_up_step_s) : one;
        // MLA under SP runs its down projections on the sequence shard and
        // all-gathers the latents, not the hidden states, before the up
        // projections (Megatron-Core MultiLatentAttention: TELinear
        // "duplicated", q_compressed [s/TP, b, q_lora_rank]).
        const bool latents = ctx.model->mla && s.sp;
        const double gathered = latents ? s.w.latent + double(ctx.model->mla->rope_head_dim) : h;
        const double attnBytes = 0.5 * (bytes + T * gathered * kBf16);
        const double attnTp =
            latents ? ringAllReduceTime(attnBytes, ti, bps, ctx.scale_up_step_s) : one;
        c.tp_fwd_s = mlpOne + attnTp;
        c.tp_bwd_s = mlpOne + attnTp;
        c.tp_mlp_fwd_s = mlpOne;
        if (full)
            c.tp_recompute_s = mlpOne + attnTp;
        // Bytes each GPU sends: (t-1)/t of each all-gather's and each
        // reduce-scatter's tensor (an all-reduce is one of each).
        const double share = double(ti - 1) / ti;
        const double oneBytes = share * (s.sp ? gatherBytes + bytes : 2.0 * bytes);
        const double attnOneBytes = latents ? 2.0 * share * attnBytes : oneBytes;
        const double mlpOneBytes = moe ? 2.0 * double(eti - 1) / eti * moeBytes : oneBytes;
        c.tp_bytes = (mlpOneBytes + attnOneBytes) * (2.0 + (full ? 1.0 : 0.0));
        // Sequence parallelism's backward all-gather: the QKV and FC1 inputs
        // were kept as the shard and are gathered again for wgrad, on NCCL's
        // stream beside the input-gradient GEMM (regatheredInputs).
        if (s.sp && plan.sequence_parallel_regather) {
            const double smShare = ncclOverlapShare(ctx.gpu->sms);
            const double gather = ringAllGatherTime(gatherBytes, ti, bps, ctx.scale_up_step_s);
            for (const double in : regatheredInputs(ctx, s)) {
                const double dgrad = gemmTime(*ctx.gpu, s.linear, T, h, in, 1, ctx.kc);
                c.tp_bwd_s += overlappedWithCompute(dgrad, gather, smShare) - dgrad;
                c.tp_bytes += share * gatherBytes;
            }
        }
    }
    // CP: the exchange of plan cp_ring (a ring of K and V chunks overlapped
    // with the attention blocks, an all-gather or an all-to-all); backward
    // also returns dK, dV.
    const int cpi = plan.parallelism.cp;
    if (cpi > 1) {
        const bool nvlink = ti * cpi <= ctx.gpus_per_host;
        const double bps = nvlink ? tierBytesPerS(ctx.scale_up_gbps, ctx.scale_up_efficiency)
                                  : tierBytesPerS(ctx.scale_out_gbps, ctx.scale_out_efficiency);
        const double alpha = nvlink ? ctx.scale_up_step_s : ctx.scale_out_step_s;
        // Full recompute and selective recompute of the core attention re-run
        // the attention core, and with it the ring exchange of K and V.
        const bool redo = full || plan.recomputes(RecomputeModule::CoreAttn);
        // An all-to-all over `group` CP ranks `tp` apart (TE's a2a and the
        // hierarchical ring's): a tensor `width` wide, 1/group of it to
        // every other rank, the host's over NVLink, the others' over the
        // network.
        const auto a2a = [&](int group, double width) {
            const int onHost = std::clamp(ctx.gpus_per_host / std::max(1, ti), 1, group);
            const double perPeer = T * width * kBf16 / group;
            return epExchangeTime(ctx, onHost - 1, perPeer, group - onHost, perPeer);
        };
        if (plan.cp_ring == CpRing::TeP2p) {
            // Transformer Engine's ring (Megatron context parallelism,
            // AttnFuncWithCPAndKVP2P): each step posts the next step's
            // exchange, runs its own attention (1/cp of the whole: the
            // balanced chunk pairs) and waits for the exchange before the
            // next, so each transfer hides under one step. Forward: K, V to
            // the next rank beside each of the first cp - 1 steps. Backward:
            // K, V beside the first step, K, V with the accumulated dK, dV
            // (one buffer) beside the cp - 2 middle ones, the finished dK, dV
            // to their owner beside the last.
            //
            // Hierarchical (cp_a2a_size A > 1, Megatron's a2a+p2p): Q, K, V
            // all-to-all'd over A neighbouring ranks first (each then holds
            // A ranks' tokens on A-th of the heads), the ring over the
            // cp / A groups (a chunk of the same bytes, 1/(cp/A) of the
            // attention a step), the output all-to-all'd back; backward dO
            // before the ring, dQ, dK, dV after it. The all-to-alls wait.
            const int group = cpA2aGroup(ctx, s);
            const int ring = cpi / group;
            const double kvBytes = T * (s.w.k + s.w.v) * kBf16; // MLA: each head's K and V
            const double one = kvBytes / bps + alpha, two = 2.0 * kvBytes / bps + alpha;
            const double fwdStep = attn.kernel_fwd / ring, bwdStep = attn.kernel_bwd / ring;
            c.cp_fwd_s = (ring - 1) * std::max(0.0, one - fwdStep);
            c.cp_bwd_s = ring > 1 ? 2.0 * std::max(0.0, one - bwdStep) +
                                        (ring - 2) * std::max(0.0, two - bwdStep)
                                  : 0.0;
            c.cp_bytes = (ring - 1) * kvBytes * (3.0 + (redo ? 1.0 : 0.0));
            if (group > 1) {
                const double pass =
                    a2a(group, s.w.q) + a2a(group, s.w.k) + a2a(group, s.w.v) + a2a(group, s.w.out);
                c.cp_fwd_s += pass;
                c.cp_bwd_s += pass;
                c.cp_bytes += double(group - 1) / group * T * (s.w.q + s.w.k + s.w.v + s.w.out) *
                              kBf16 * (2.0 + (redo ? 1.0 : 0.0));
            }
        } else if (plan.cp_ring == CpRing::TeAllGather) {
            // Transformer Engine's all-gather (teCpExchange): K and V
            // gathered (one all-gather each) before the attention, again in
            // the backward, and dK, dV reduce-scattered after it; none
            // overlapped (Megatron-Core TransformerConfig.cp_comm_type: "The
            // all-gather is not async, and cannot be overlapped").
            const double kvBytes = T * (s.w.k + s.w.v) * kBf16;
            const double pass = 2.0 * ringAllGatherTime(cpi * kvBytes / 2.0, cpi, bps, alpha);
            c.cp_fwd_s = pass;
            c.cp_bwd_s = 2.0 * pass;
            c.cp_bytes = (cpi - 1) * kvBytes * (3.0 + (redo ? 1.0 : 0.0));
        } else if (plan.cp_ring == CpRing::TeA2a) {
            // Transformer Engine's all-to-all (teCpExchange): Q, K, V, then
            // the output, one all-to-all each (1/cp of the tensor to every
            // other rank); backward dO, then dQ, dK, dV. The attention waits
            // for all of its inputs: nothing is hidden. The ranks on the
            // host exchange over NVLink, the others over the network.
            const double pass =
                a2a(cpi, s.w.q) + a2a(cpi, s.w.k) + a2a(cpi, s.w.v) + a2a(cpi, s.w.out);
            c.cp_fwd_s = pass;
            c.cp_bwd_s = pass;
            c.cp_bytes = double(cpi - 1) / cpi * T * (s.w.q + s.w.k + s.w.v + s.w.out) * kBf16 *
                         (2.0 + (redo ? 1.0 : 0.0));
        } else {
            // PyTorch's ring (torchCpRing): each step's exchange is waited
            // for before the next step's attention, so it hides under one
            // step's (1/cp of the attention's time). K and V: gathered once,
            // beside the first step, or passed on beside each step; the fp32
            // dK, dV passed on beside the next step, the last waited for at
            // the end.
            const double kv = attn.ring_kv_bytes;
            const double fwdStep = attn.kernel_fwd / cpi, bwdStep = attn.kernel_bwd / cpi;
            const auto kvExposed = [&](double step) {
                if (plan.cp_ring == CpRing::TorchAllGather)
                    return std::max(0.0, ringAllGatherTime(cpi * kv, cpi, bps, alpha) - step);
                return (cpi - 1) * std::max(0.0, kv / bps + alpha - step);
            };
            const double dkv = 2.0 * kv / bps + alpha;
            c.cp_fwd_s = kvExposed(fwdStep);
            c.cp_bwd_s = kvExposed(bwdStep) + (cpi - 1) * std::max(0.0, dkv - bwdStep) + dkv;
            c.cp_bytes = (cpi - 1) * kv * (2.0 + (redo ? 1.0 : 0.0)) + 2.0 * cpi * kv;
        }
        if (redo)
            c.cp_recompute_s = c.cp_fwd_s;
    }
    // EP: all-to-all dispatch and combine of top_k copies of each token
    // (Lepikhin et al. 2020; Megatron-Core MoE). With SP each TP rank
    // dispatches its own 1/t of the tokens.
    const int epi = plan.parallelism.ep;
    if (ctx.moe_layer && ctx.model->moe && epi > 1) {
        const double tokensDispatched = s.sp ? T / s.t : T;
        // Padded to capacity, the all-to-all carries every expert's whole
        // capacity, padding included (MoEAlltoAllTokenDispatcher.preprocess
        // with drop_and_pad: capacity x experts out, capacity a split).
        const double padded =
            plan.ep_dispatcher == EpDispatcher::AllToAll ? ctx.model->moe->executedFactor() : 1.0;
        const double oneWay =
            tokensDispatched * ctx.model->moe->top_k * padded * h * kBf16 * (epi - 1) / epi;
        // The group's ranks on one host: every etp-th rank (the experts fold
        // the cell's ranks first, Parallelism::ep).
        const int onHost = std::clamp(ctx.gpus_per_host / std::max(1, int(s.et)), 1, epi);
        c.ep_bytes_per_remote_peer = oneWay / (epi - 1);
        double sent = oneWay; // leaving the GPU, one way
        if (plan.ep_dispatcher != EpDispatcher::AllToAll && onHost < epi) {
            // DeepEP / HybridEP (Megatron's flex dispatcher): a token crosses
            // the network once per host its experts lie on, to the GPU of
            // the same local rank there, which forwards it over NVLink to
            // the GPUs holding its experts. Combine is the mirror. The NIC
            // carries the distinct remote hosts' copies, NVLink the top_k
            // copies but those landing on the GPU itself, both at once. The
            // own host's copy takes the same path: the sender writes it into
            // its own RDMA receive buffer, in the channel's slots and flow
            // control, and the forwarder fans it out with the rest (DeepEP
            // internode.cu; HybridEP copies the input into its RDMA buffer
            // first). So the channel moves one copy per host touched, the
            // own host's included, at the NIC's pace: what both libraries'
            // benchmarks count as their RDMA bandwidth (test_internode.py
            // rdma_send_bytes), 41-58 GB/s on a 50 GB/s NIC at 2-8 hosts.
            const int hosts = (epi + onHost - 1) / onHost;
            const double touched = expectedHostsTouched(*ctx.model->moe, hosts);
            const double nic = tokensDispatched * touched * (hosts - 1) / hosts * h * kBf16;
            const double channel = tokensDispatched * touched * h * kBf16;
            const double nvl = tokensDispatched * nvlinkCopies(plan, *ctx.model->moe, epi) * h *
                               kBf16 * (onHost - 1) / onHost;
            c.ep_fwd_s = 2.0 * epExchangeTime(ctx, onHost - 1, nvl / std::max(1, onHost - 1),
                                              hosts - 1, channel / (hosts - 1));
            c.ep_bytes_per_remote_peer = nic / (epi - onHost);
            sent = nic + nvl;
        } else if (plan.ep_dispatcher == EpDispatcher::Flex) {
            // DeepEP inside one NVLink domain (intranode.cu): each token
            // goes once to every rank holding one of its experts, the
            // rank's share of the ranks it touches to each peer.
            const double perPeer =
                tokensDispatched * nvlinkCopies(plan, *ctx.model->moe, epi) / epi * h * kBf16;
            c.ep_fwd_s = 2.0 * epExchangeTime(ctx, epi - 1, perPeer, 0, 0);
            c.ep_bytes_per_remote_peer = perPeer;
            sent = perPeer * (epi - 1);
        } else {
            // NCCL's all-to-all: 1/ep of the copies to every peer.
            const double perPeer = oneWay / (epi - 1);
            c.ep_fwd_s = 2.0 * epExchangeTime(ctx, onHost - 1, perPeer, epi - onHost, perPeer);
        }
        c.ep_bwd_s = c.ep_fwd_s;
        c.ep_sm_share = epSmShare(plan, *ctx.gpu, onHost < epi);
        c.ep_bytes_fwd_one_way = sent;
        c.ep_bytes = sent * (4.0 + (full ? 2.0 : 0.0));
        if (plan.ep_dispatcher == EpDispatcher::HybridEp) {
            // HybridEP's metadata: before each forward's dispatch every rank
            // all-gathers the routing maps of the whole EP group, one bool a
            // token and expert (DeepEP hybrid-ep branch, executor.cu
            // allgather_routing_map: NCCL all_gather_into_tensor of the
            // [tokens, experts] kBool map when the group spans hosts, a
            // custom NVLink gather or NCCL inside one), on the dispatch's
            // stream; the combine and the backward reuse the handle. Across
            // hosts the ring runs at each member's NIC, inside one over
            // NVLink.
            const double map = tokensDispatched * ctx.model->moe->experts;
            const bool acrossHosts = onHost < epi;
            const double bps = acrossHosts
                                   ? tierBytesPerS(ctx.scale_out_gbps, ctx.scale_out_efficiency)
                                   : tierBytesPerS(ctx.scale_up_gbps, ctx.scale_up_efficiency);
            c.ep_fwd_s += ringAllGatherTime(
                epi * map, epi, bps, acrossHosts ? ctx.scale_out_step_s : ctx.scale_up_step_s);
        }
    }
}

// TP communication overlapped with the GEMMs (Megatron --tp-comm-overlap,
// Transformer Engine userbuffers with initialize_ub's default methods; needs
// sequence parallelism). Forward: the all-gathers before QKV and FC1 run as a
// ring exchange under those GEMMs (the local chunk first: only what the GEMM
// cannot cover shows); the reduce-scatters after the projection and FC2 are
// pipelined in splits, the GEMM losing the communication SMs meanwhile and
// the last split exposed. Backward: the all-gathers of the output gradients
// under the projection's and FC2's dgrad (ring exchange), the reduce-scatters
// of the input gradients under QKV's and FC1's wgrad (bulk). An MoE layer's
// expert half stays unoverlapped. The times replace layerComm's tp_*_s.
void overlapTpComm(const LayerContext& ctx, const LayerShape& s, LayerCost& c) {
    const int ti = int(s.t);
    if (ti <= 1)
        return;
    const KernelConstants& kc = ctx.kc;
    const GpuModel& gpu = *ctx.gpu;
    const double bytes = s.T * s.h * kBf16;
    const double bps = tierBytesPerS(ctx.scale_up_gbps, ctx.scale_up_efficiency);
    const double half =
        ringAllGatherTime(bytes, ti, bps, ctx.scale_up_step_s); // one BF16 collective
    // The dense layers' all-gathers, in FP8 where Transformer Engine casts
    // first (tpGatherBytes); MLA's gathers its latents in BF16.
    const double gather =
        ringAllGatherTime(s.T * s.h * tpGatherBytes(s), ti, bps, ctx.scale_up_step_s);
    const double attnGather = ctx.model->mla ? half : gather;
    const double slow = double(gpu.sms) / std::max(1.0, double(gpu.sms) - kc.tp_overlap_comm_sms);
    // A GEMM in `n` row chunks: Transformer Engine issues the chunk GEMMs on
    // up to three streams (_NUM_MAX_UB_STREAMS), so together they fill the
    // GPU as the whole GEMM does; each chunk adds its kernel's fixed cost.
    // The exposures are against the GEMM run whole (without FP8 casts,
    // which do not change).
    const auto time = [&](const Gemm& g, double n) {
        return gemmTime(gpu, s.linear, g.m, g.n, g.k, g.batch, kc) + (n - 1) * kc.kernel_overhead_s;
    };
    // Ring exchange (all-gather): tp chunk GEMMs, each on the chunk that
    // arrived during the previous one; the first is local.
    const auto ring = [&](const Gemm& g, double comm) {
        const double parts = time(g, double(ti));
        return std::max(parts, comm + parts / ti) - time(g, 1);
    };
    // Pipelined reduce-scatter: chunk GEMMs on fewer SMs, each chunk's
    // reduce-scatter behind the next: the last chunk's is exposed when the
    // GEMM is the longer, the first chunk's GEMM when the traffic is.
    const auto pipelined = [&](const Gemm& g) {
        const double n = kc.tp_overlap_splits;
        const double parts = time(g, n) * slow;
        return std::max(parts + half / n, parts / n + half) - time(g, 1);
    };
    // Bulk: the whole GEMM on fewer SMs beside the whole collective.
    const auto bulk = [&](const Gemm& g, double comm) {
        return std::max(time(g, 1) * slow, comm) - time(g, 1);
    };
    // Shapes as m x n x k: forward T x out x in; dgrad T x in x out; wgrad
    // in x out x T.
    // The all-gathered input feeds the QKV GEMM, or MLA's down projections
    // (the query's up projection when it has no latent).
    const double q = inputProjectionWidth(*ctx.model, s), o = s.w.out;
    double fwd = ring({s.T, q, s.h, 1}, attnGather) + pipelined({s.T, s.h, o, 1});
    double bwd = ring({s.T, o, s.h, 1}, gather) + bulk({s.h, q, s.T, 1}, half);
    const double attnFwd = fwd;
    if (ctx.moe_layer && ctx.model->moe) {
        // The expert half's all-gather and reduce-scatter as they were.
        const double moeHalf =
            ringAllGatherTime(moeTpTensorBytes(ctx, s), int(s.et), bps, ctx.scale_up_step_s);
        fwd += 2.0 * moeHalf;
        bwd += 2.0 * moeHalf;
    } else {
        const double f = double(ctx.model->ffn_hidden) / s.t;
        const double up = (s.gated ? 2.0 : 1.0) * f;
        fwd += ring({s.T, up, s.h, 1}, gather) + pipelined({s.T, s.h, f, 1});
        bwd += ring({s.T, f, s.h, 1}, gather) + bulk({s.h, up, s.T, 1}, half);
    }
    c.tp_mlp_fwd_s = fwd - attnFwd;
    c.tp_fwd_s = fwd;
    // Sequence parallelism's backward all-gather of the QKV and FC1 inputs,
    // beside their dgrad GEMMs as Transformer Engine's bulk overlap
    // (ub_bulk_dgrad: the GEMM on fewer SMs beside the whole collective).
    if (ctx.plan->sequence_parallel_regather)
        for (const double in : regatheredInputs(ctx, s))
            bwd += bulk({s.T, s.h, in, 1}, gather);
    c.tp_bwd_s = bwd;
    if (ctx.plan->recompute == Recompute::Full)
        c.tp_recompute_s = fwd;
}

// The host's side of a layer (docs/COST_MODEL.md "Host"). PyTorch issues a
// layer's kernels from the host one op at a time and the GPU runs each as it
// arrives; with no sync between them the host runs ahead, so a pass takes
// the longer of the GPU's time and the host's (identical layers one after
// another: the host's lead neither grows nor shrinks across them). Ops: the
// kernels the layer's work is counted in (ElementwiseWork: GEMMs, attention,
// norms, activations, adds), a CP exchange's (torchCpRing, teCpExchange),
// the FP8 casts, the TP collectives, and for an
// MoE layer the router's GEMM and top-k, the dispatcher's bookkeeping on the
// token counts (Megatron-Core MoEAlltoAllTokenDispatcher.preprocess: the
// routing map's sums, their all-gather, slices and the device-to-host copy:
// 6), the token permutations, the two all-to-alls and, under Transformer
// Engine's GroupedLinear, one GEMM and one set of casts per local expert. A CUDA
// graph replays its kernels at the GPU's own per-kernel cost; a dropless MoE
// layer's expert half has data-dependent shapes and stays host-issued, and
// its forward waits once for the token counts on the host (Megatron-Core's
// dispatchers whenever tokens are not padded to capacity, token_dispatcher.py
// cuda_sync_point; torchtitan's all-to-all splits under EP): the GPU's queue
// drains, and the op after the wait starts on an idle GPU.
void hostPace(const LayerContext& ctx, const LayerShape& s, const ElementwiseWork& elem,
              const GemmSums& gemms, const GemmSums& attentionGemms, const AttentionCore& attn,
              LayerCost& c) {
    const KernelConstants& kc = ctx.kc;
    const Plan& plan = *ctx.plan;
    const bool moe = ctx.moe_layer && ctx.model->moe;
    // (A CP exchange's kernels with the attention's.)
    double denseFwd = elem.fwdKernels() + attentionGemms.fwdLaunches + attn.exchange_fwd_kernels;
    double denseBwd = elem.bwdKernels() + attentionGemms.bwdLaunches + attn.exchange_bwd_kernels;
    // The MLP half's (an MoE layer's expert half: it stays host-issued when
    // its shapes are data-dependent).
    double mlpFwd = gemms.fwdLaunches - attentionGemms.fwdLaunches;
    double mlpBwd = gemms.bwdLaunches - attentionGemms.bwdLaunches;
    if (s.t > 1) {
        // The TP collectives: with SP an all-gather before and a
        // reduce-scatter after attention and the MLP, else two all-reduces;
        // as many in the backward.
        denseFwd += s.sp ? 4.0 : 2.0;
        denseBwd += s.sp ? 4.0 : 2.0;
    }
    bool dynamic = false;
    if (moe) {
        const MoeConfig& m = *ctx.model->moe;
        const double permutes = moePermutePasses(ctx, s);
        const double allToAlls = s.ep > 1 ? 2.0 : 0.0;
        mlpFwd += 2.0 + 6.0 + permutes + allToAlls;
        mlpBwd += 2.0 + permutes + allToAlls;
        if (m.shared_experts > 0) {
            // FC1, the activation, FC2; their gradients.
            mlpFwd += 3.0;
            mlpBwd += 5.0;
        }
        dynamic = !m.padded();
    }
    const bool fusedStack = plan.elementwise == Elementwise::Fused;
    const double graphFwd = plan.cuda_graphs ? kc.graph_kernel_s : kc.host_op_fwd_s;
    const double graphBwd = plan.cuda_graphs ? kc.graph_kernel_s : kc.host_op_bwd_s;
    c.host_fwd_s = denseFwd * graphFwd + mlpFwd * (dynamic ? kc.host_op_fwd_s : graphFwd);
    c.host_bwd_s = denseBwd * graphBwd + mlpBwd * (dynamic ? kc.host_op_bwd_s : graphBwd);
    c.host_sync = dynamic && (fusedStack || s.ep > 1);
    const double gpuFwd = c.fwd_s, gpuBwd = c.bwd_input_s + c.bwd_weight_s;
    c.fwd_s =
        std::max(gpuFwd, c.host_fwd_s) + (c.host_sync ? kc.host_sync_s + kc.host_op_fwd_s : 0.0);
    if (plan.schedule.kind == ScheduleKind::ZeroBubble) {
        // Zero-bubble issues the weight gradients (W) apart from the input
        // gradients (B): each pass takes the longer of its GPU time and the
        // host's time for its own kernels, half of the backward's (each
        // GEMM's weight gradient and its casts against the rest, as the
        // kernels' fixed cost is split above). Scaled together, a faster
        // W lengthened B, which the pipeline waits for.
        c.bwd_input_s = std::max(c.bwd_input_s, 0.5 * c.host_bwd_s);
        c.bwd_weight_s = std::max(c.bwd_weight_s, 0.5 * c.host_bwd_s);
    } else if (gpuBwd > 0 && c.host_bwd_s > gpuBwd) {
        const double f = c.host_bwd_s / gpuBwd;
        c.bwd_input_s *= f;
        c.bwd_weight_s *= f;
    }
    c.host_wait_s = (c.fwd_s - gpuFwd) + (c.bwd_input_s + c.bwd_weight_s - gpuBwd);
    c.gpu_fwd_s = gpuFwd;
    c.gpu_bwd_s = gpuBwd;
}

// A pass the host paces (hostPace) leaves the GPU idle between kernels,
// host_*_s - its own time in all: the TP and CP exchanges counted as exposed
// run in those gaps (issued in order with the compute, their kernels run
// while the host issues what follows), so the pass takes the longer of the
// host's time and the GPU's with the exchanges, not their sum. Only what
// the gaps cannot hold stays exposed. (The all-to-alls of an MoE layer
// follow its wait for the token counts, when the GPU has nothing queued.)
void hideCommInHostGaps(const Plan& plan, LayerCost& c, double gpuFwd, double gpuBwd) {
    // Returns what the gaps hold.
    const auto hide = [](double gap, double& a, double& b, double* partOfA = nullptr) {
        const double exposed = a + b;
        if (!(gap > 0) || !(exposed > 0))
            return 0.0;
        const double keep = std::max(0.0, exposed - gap) / exposed;
        a *= keep;
        b *= keep;
        if (partOfA)
            *partOfA *= keep;
        return exposed * (1.0 - keep);
    };
    const double gapFwd = std::max(0.0, c.host_fwd_s - gpuFwd);
    double held = hide(gapFwd, c.tp_fwd_s, c.cp_fwd_s, &c.tp_mlp_fwd_s);
    held += hide(std::max(0.0, c.host_bwd_s - gpuBwd), c.tp_bwd_s, c.cp_bwd_s);
    // What the GPU still waits for the host (the host warning's figure).
    c.host_wait_s = std::max(0.0, c.host_wait_s - held);
    // Full recompute runs the forward again, host-paced as it was.
    if (plan.recompute == Recompute::Full)
        hide(gapFwd, c.tp_recompute_s, c.cp_recompute_s);
}

} // namespace

LayerCost layerCost(const LayerContext& ctx) {
    const Model& model = *ctx.model;
    const Plan& plan = *ctx.plan;
    const KernelConstants& kc = ctx.kc;
    const LayerShape s = layerShape(ctx);
    LayerCost c;
    GemmSums gemms, mlaUp;

    if (model.mla) {
        // MLA (Megatron-Core MLASelfAttention): the down projections to the
        // query and key/value latents are not tensor-parallel (TELinear,
        // "duplicated"): without SP each rank runs them whole (counted once
        // as model FLOPs); the up and output projections split by heads.
        // Under SP each rank runs them on its own sequence shard.
        const MlaConfig& l = *model.mla;
        const double tokens = s.sp ? s.T / s.t : s.T, once = s.sp ? 1.0 : 1.0 / s.t;
        const double ql = double(l.q_lora_rank), kvl = double(l.kv_lora_rank);
        // The up projections (the query's projection when it has no
        // latent), which selective recompute's mla_up_proj runs again.
        const bool upAgain =
            plan.recompute == Recompute::Selective && plan.recomputes(RecomputeModule::MlaUpProj);
        const auto addUp = [&](const Gemm& g) {
            gemms.add(ctx, s.linear, g);
            if (upAgain)
                mlaUp.add(ctx, s.linear, g);
        };
        if (ql > 0) {
            gemms.add(ctx, s.linear, {tokens, ql, s.h, 1}, once);
            addUp({s.T, s.w.q, ql, 1});
        } else {
            addUp({s.T, s.w.q, s.h, 1});
        }
        gemms.add(ctx, s.linear, {tokens, kvl + double(l.rope_head_dim), s.h, 1}, once);
        addUp({s.T, s.headsLocal * double(l.qk_head_dim + l.v_head_dim), kvl, 1});
        gemms.add(ctx, s.linear, rowLinear({s.T, s.h, s.w.out, 1}, s));
    } else {
        // Attention projections (GQA: K and V have kv_heads heads;
        // replicated across TP ranks when tp > kv_heads: executed on every
        // rank, counted once as model FLOPs).
        const double kvModel = double(model.kv_heads) / s.t;
        gemms.add(ctx, s.linear,
                  normColumnLinear({s.T, (s.headsLocal + 2.0 * s.kvLocal) * s.dh, s.h, 1, 3}, s),
                  (s.headsLocal + 2.0 * kvModel) / (s.headsLocal + 2.0 * s.kvLocal));
        gemms.add(ctx, s.linear, rowLinear({s.T, s.h, s.headsLocal * s.dh, 1}, s));
    }
    c.params += model.attentionParams(s.t);
    const AttentionCore attn = attentionCore(ctx, s);
    const GemmSums attentionGemms = gemms;
    const MlpWork mlpWork = mlp(ctx, s, gemms, c);
    const double ffnActBytes = mlpWork.act_bytes;
    c.params += 2.0 * s.h; // norms

    // Memory-bound elementwise work; norms and residuals are split by TP
    // only with sequence parallelism.
    ElementwiseWork elem = elementwiseForward(ctx, s, ffnActBytes);
    addHiddenDropout(ctx, s, elem);
    const double elemFwdS = streamTime(*ctx.gpu, elem.fwdBytes(), kc);
    const double elemBwdS = streamTime(*ctx.gpu, elem.bwdBytes(), kc);
    const double kernelsFwd = elem.fwdKernels(), kernelsBwd = elem.bwdKernels();
    const double permuteS = moePermuteTime(ctx, s);
    c.moe_permute_s = permuteS;
    if (ctx.moe_layer && model.moe) {
        c.moe_mlp_fwd_s = gemms.fwd - attentionGemms.fwd + permuteS;
        c.moe_mlp_bwd_s =
            gemms.dgrad - attentionGemms.dgrad + gemms.wgrad - attentionGemms.wgrad + permuteS;
    }
    c.fwd_s = gemms.fwd + attn.fwd + elemFwdS + permuteS + kernelsFwd * kc.kernel_overhead_s;
    c.bwd_input_s =
        gemms.dgrad + attn.bwd + elemBwdS + permuteS + 0.5 * kernelsBwd * kc.kernel_overhead_s;
    c.bwd_weight_s = gemms.wgrad + 0.5 * kernelsBwd * kc.kernel_overhead_s;
    const double gpuFwd = c.fwd_s, gpuBwd = c.bwd_input_s + c.bwd_weight_s;
    c.gemm_s = gemms.fwd + gemms.dgrad + gemms.wgrad;
    c.attention_s = attn.fwd + attn.bwd;
    hostPace(ctx, s, elem, gemms, attentionGemms, attn, c);
    // What the passes save without their weight casts (nothing while the
    // host paces them).
    c.fwd_weight_cast_s =
        std::max(gpuFwd, c.host_fwd_s) - std::max(gpuFwd - gemms.weightCastFwd, c.host_fwd_s);
    c.bwd_weight_cast_s =
        std::max(gpuBwd, c.host_bwd_s) - std::max(gpuBwd - gemms.weightCastDgrad, c.host_bwd_s);

    c.model_flops_fwd = gemms.modelFlops + attn.model;
    c.model_flops_total = 3.0 * c.model_flops_fwd;
    double hwTotal = 3.0 * gemms.hwFlops + attn.hw;
    bool mlpRecomputed = false; // selective recompute of the whole MLP module
    if (plan.recompute == Recompute::Full) {
        c.recompute_s = c.fwd_s;
        c.recompute_weight_cast_s = c.fwd_weight_cast_s;
        hwTotal += gemms.hwFlops + (plan.flash_attention ? attn.model : attn.flopsFull);
    } else if (plan.recompute == Recompute::Selective) {
        // Megatron-Core's selective recompute re-runs the modules of
        // recompute_modules (Plan::recompute_modules) in the backward.
        const bool moeLayer = ctx.moe_layer && model.moe;
        if (plan.recomputes(RecomputeModule::CoreAttn)) {
            // The attention core (Korthikanti et al. 2022, Sec. 5), whatever
            // its kernel: attention.py checkpoints Transformer Engine's
            // DotProductAttention (_checkpointed_attention_forward), so the
            // backward runs a FlashAttention or cuDNN forward again before
            // that kernel's own backward, which recomputes the scores inside
            // itself besides (TransformerConfig warns that fused attention
            // has "no need" of it, and recomputes it all the same).
            c.recompute_s += attn.fwd;
            hwTotal += plan.flash_attention ? attn.model : attn.flopsFull;
        }
        if (plan.recomputes(RecomputeModule::Layernorm)) {
            // The two norms (read 2 B, write 2 B an element, one kernel each).
            const double hN = s.h / (s.sp ? s.t : 1.0);
            c.recompute_s +=
                streamTime(*ctx.gpu, 2.0 * 4.0 * s.T * hN, kc) + 2.0 * kc.kernel_overhead_s;
        }
        if (plan.recomputes(RecomputeModule::MlaUpProj) && model.mla) {
            // MLA's up projections again, with the latent norms fused into
            // them (read and write each latent element) and the RoPE that
            // makes the queries and keys (Megatron-Core's
            // qkv_up_proj_and_rope_apply under CheckpointWithoutOutput).
            c.recompute_s += mlaUp.fwd + streamTime(*ctx.gpu, 2.0 * kBf16 * s.T * s.w.latent, kc) +
                             2.0 * kc.kernel_overhead_s;
            c.recompute_weight_cast_s += mlaUp.weightCastFwd;
            hwTotal += mlaUp.hwFlops;
        }
        const double actS = streamTime(*ctx.gpu, ffnActBytes, kc) + kc.kernel_overhead_s;
        const bool wholeMlp = moeLayer ? plan.recomputes(RecomputeModule::Moe)
                                       : plan.recomputes(RecomputeModule::Mlp);
        if (wholeMlp) {
            // The MLP module from its input: its GEMMs (an MoE layer's router
            // and token permutations with them), its activation, and its
            // collectives (the TP pair here, the all-to-alls in the stage).
            c.recompute_s += gemms.fwd - attentionGemms.fwd + permuteS + actS;
            c.recompute_weight_cast_s += gemms.weightCastFwd - attentionGemms.weightCastFwd;
            hwTotal += gemms.hwFlops - attentionGemms.hwFlops;
            mlpRecomputed = true;
            c.ep_recomputed = moeLayer;
        } else if (moeLayer) {
            if (plan.recomputes(RecomputeModule::MoeAct))
                c.recompute_s += streamTime(*ctx.gpu, ffnActBytes - mlpWork.shared_act_bytes, kc) +
                                 kc.kernel_overhead_s;
            if (plan.recomputes(RecomputeModule::SharedExperts) && model.moe->shared_experts > 0) {
                c.recompute_s += mlpWork.shared_fwd_s +
                                 streamTime(*ctx.gpu, mlpWork.shared_act_bytes, kc) +
                                 kc.kernel_overhead_s;
                hwTotal += mlpWork.shared_flops;
            }
        }
    } else if (plan.recompute == Recompute::SelectiveOp) {
        // torchtitan's per-op policy (activation_checkpoint.py
        // _apply_op_sac: "Saves output of all compute ops, except every
        // second mm"): the backward re-runs the even matmuls of
        // blockMatmuls (wk, wo and w3; GELU: w2; an MoE layer's experts are
        // grouped GEMMs, saved) and every elementwise op.
        GemmSums redo;
        const BlockMatmuls mms = blockMatmuls(model, s.t, ctx.moe_layer);
        for (int i = 1; i < mms.n; i += 2)
            redo.add(ctx, s.linear,
                     {s.T, mms.mm[std::size_t(i)].out, mms.mm[std::size_t(i)].in, 1});
        c.recompute_s = redo.fwd + elemFwdS + permuteS + kernelsFwd * kc.kernel_overhead_s;
        c.recompute_weight_cast_s = redo.weightCastFwd;
        hwTotal += redo.hwFlops;
    }
    c.hw_flops_total = hwTotal;
    layerComm(ctx, s, attn, c);
    if (plan.tp_comm_overlap && s.sp)
        overlapTpComm(ctx, s, c);
    if (mlpRecomputed)
        c.tp_recompute_s += c.tp_mlp_fwd_s;
    hideCommInHostGaps(plan, c, gpuFwd, gpuBwd);

    const bool fp8 = s.linear.precision == GemmPrecision::Fp8;
    if (fp8) {
        // Every linear weight of the layer; the norms and the BF16 router
        // are not FP8.
        c.fp8_linear_params = c.params - 2.0 * s.h;
        if (ctx.moe_layer && model.moe)
            c.fp8_linear_params -= s.h * model.moe->experts;
        if (plan.fp8_linear == Fp8Linear::TransformerEngine)
            c.fp8_copy_params = c.fp8_linear_params;
    }
    c.activation_bytes = activationBytesPerLayer(model, plan, ctx.moe_layer, fp8);
    c.wgrad_held_bytes = weightGradHeldBytesPerLayer(model, plan, ctx.moe_layer);
    if (plan.recompute == Recompute::Full) {
        Plan noRecompute = plan;
        noRecompute.recompute = Recompute::None;
        c.transient_bytes = activationBytesPerLayer(model, noRecompute, ctx.moe_layer, fp8);
    }
    c.transient_bytes += attn.ring_transient_bytes;
    return c;
}

EdgeCost embeddingCost(const LayerContext& ctx) {
    const Model& model = *ctx.model;
    const Plan& plan = *ctx.plan;
    EdgeCost e;
    const double t = plan.parallelism.tp;
    const double T =
        double(plan.micro_batch_sequences) * plan.sequence_length / plan.parallelism.cp;
    const double h = double(model.hidden);
    e.params = double(model.vocab) * h / t;
    // A gather of T rows, and its scatter-add in backward: memory-bound.
    e.fwd_s = streamTime(*ctx.gpu, 2.0 * T * h * kBf16, ctx.kc) + ctx.kc.kernel_overhead_s;
    e.bwd_s = 2.0 * e.fwd_s;
    const double shard = T * h / (plan.sequence_parallel && t > 1 ? t : 1.0); // output elements
    e.activation_bytes = shard * kBf16;
    // Hidden dropout on the embedding's output (Megatron's
    // LanguageModelEmbedding.embedding_dropout, after the scatter to the
    // sequence-parallel region): a dropout kernel of its own, its 1-byte mask
    // kept (docs/COST_MODEL.md "Dropout").
    if (plan.hidden_dropout > 0) {
        const double pass =
            streamTime(*ctx.gpu, kDropoutKernelBytes * shard, ctx.kc) + ctx.kc.kernel_overhead_s;
        e.fwd_s += pass;
        e.bwd_s += pass;
        e.activation_bytes += shard;
    }
    if (plan.parallelism.tp > 1) // vocab-parallel embedding: all-reduce of the output
        e.tp_fwd_s = ringAllReduceTime(T * h * kBf16, plan.parallelism.tp,
                                       tierBytesPerS(ctx.scale_up_gbps, ctx.scale_up_efficiency),
                                       ctx.scale_up_step_s);
    return e;
}

LossPasses lossPasses(CrossEntropy c) {
    switch (c) {
    case CrossEntropy::Megatron:
        // tensor_parallel/cross_entropy.py (and 2021 Megatron's mpu): the
        // BF16 logits cast to fp32 (read 2, write 4), max (4), subtract in
        // place (4 + 4), exp in place (4 + 4), sum (4), divide in place
        // (4 + 4); the fp32 softmax is saved. Backward: the target's entry
        // corrected (a gather-sized scatter), the product with the output
        // gradient in place (4 + 4) and autograd's cast back to BF16 (4 + 2).
        // At most the BF16 logits and their fp32 copy (2 + 4) at once, and in
        // the backward the fp32 gradient and its BF16 cast (4 + 2).
        return {38, 6, 14, 2, 4, 6};
    case CrossEntropy::MegatronFused:
        // fusions/fused_cross_entropy.py (jit_fuser): cast and max in one
        // kernel (2 + 4), subtract and exp in place in one (4 + 4), the row
        // sum (4), the divide (4 + 4); backward the in-place scaling (4 + 4)
        // and the cast to the logits' dtype (4 + 2). At most 2 + 4 at once.
        return {26, 4, 14, 2, 4, 6};
    case CrossEntropy::Te:
        // transformer_engine/pytorch/triton/cross_entropy.py on the BF16
        // logits: online_softmax_kernel reads each row once (max and sum in
        // one pass); the loss kernel touches per-row values only; backward
        // one kernel reads the saved logits and writes the gradient over
        // them (2 + 2). Nothing beside the logits themselves.
        return {2, 2, 4, 1, 2, 2};
    case CrossEntropy::Pytorch:
        // F.cross_entropy(logits.float()): the cast (2 + 4); log_softmax's
        // cunn_SoftMaxForward reads a row for its max, again for the sum of
        // exponentials, and again to write the fp32 log-probabilities
        // (4 + 4 + 4 + 4; saved); nll_loss gathers. Backward: nll_loss
        // zero-fills its gradient (4) and scatters the targets,
        // cunn_SoftMaxBackward sums the gradient row (4) and writes
        // grad - exp(out) * sum (4 + 4 + 4), then the cast back (4 + 2).
        // At once: in the forward the BF16 logits, their fp32 copy and the
        // log-probabilities (2 + 4 + 4); in the backward (torchtitan's
        // train.py deletes the logits first) the saved log-probabilities,
        // nll_loss's gradient and the softmax backward's output (4 + 4 + 4).
        return {22, 3, 26, 4, 4, 12};
    }
    return {};
}

EdgeCost logitsCost(const LayerContext& ctx) {
    const Model& model = *ctx.model;
    const Plan& plan = *ctx.plan;
    const GpuModel& gpu = *ctx.gpu;
    EdgeCost e;
    const double t = plan.parallelism.tp;
    const double T =
        double(plan.micro_batch_sequences) * plan.sequence_length / plan.parallelism.cp;
    const double h = double(model.hidden);
    const double v = double(model.vocab) / t;
    // The output layer stays BF16 in an FP8 model: Megatron's output_layer
    // is outside the TE layers, torchtitan's float8 filter skips "output".
    GemmTimes g = gemmTriple(gpu, gemmRate(gpu, GemmPrecision::Bf16, ctx.kc), {T, v, h, 1}, ctx.kc);
    // The loss: memory-bound passes over the T x v logits (lossPasses).
    const LossPasses loss = lossPasses(plan.cross_entropy);
    const double logits = T * v;
    e.fwd_s = g.fwd + streamTime(gpu, loss.fwd_bytes * logits, ctx.kc) +
              loss.fwd_kernels * ctx.kc.kernel_overhead_s +
              streamTime(gpu, T * h * 4.0, ctx.kc); // final norm
    e.bwd_s = g.dgrad + g.wgrad + streamTime(gpu, loss.bwd_bytes * logits, ctx.kc) +
              loss.bwd_kernels * ctx.kc.kernel_overhead_s;
    e.model_flops_total = 3.0 * g.flops;
    e.hw_flops_total = 3.0 * g.flops;
    e.params = model.tied_embeddings ? 0.0 : v * h;
    e.activation_bytes = T * v * loss.saved_bytes + T * h * kBf16;
    e.transient_bytes = T * v * (loss.peak_bytes - loss.saved_bytes);
    if (plan.parallelism.tp > 1 && plan.sequence_parallel) {
        const double ag = ringAllGatherTime(
            T * h * kBf16, plan.parallelism.tp,
            tierBytesPerS(ctx.scale_up_gbps, ctx.scale_up_efficiency), ctx.scale_up_step_s);
        e.tp_fwd_s = ag;
        e.tp_bwd_s = ag;
    }
    return e;
}

EdgeCost mtpCost(const LayerContext& ctx) {
    // One multi-token-prediction module around its transformer block, as
    // Megatron-Core's MultiTokenPredictionLayer runs it
    // (transformer/multi_token_prediction.py): the next tokens' embedding
    // looked up again (the shared table), enorm on it and hnorm on the
    // hidden state, the two joined (2h wide) and projected to h by eh_proj,
    // a column-parallel linear (its input all-gathered under SP, its output
    // gathered over TP and scattered back to the sequence shard), then the
    // block (a layer of the last layer's kind, counted by the caller), the
    // final norm, and the shared output layer and loss (logitsCost, counted
    // by the caller too).
    const GpuModel& gpu = *ctx.gpu;
    const LayerShape s = layerShape(ctx);
    EdgeCost e;
    const double Tsp = s.sp ? s.T / s.t : s.T; // tokens of the GPU's sequence shard
    const double kernel = ctx.kc.kernel_overhead_s;
    // The embedding's gather of T rows (its backward a scatter-add), the two
    // norms and the concatenation: memory-bound passes.
    const double lookup = streamTime(gpu, 2.0 * s.T * s.h * kBf16, ctx.kc) + kernel;
    const double norms = 2.0 * (streamTime(gpu, 2.0 * Tsp * s.h * kBf16, ctx.kc) + kernel);
    const double join = streamTime(gpu, 2.0 * Tsp * 2.0 * s.h * kBf16, ctx.kc) + kernel;
    const GemmTimes g = gemmTriple(gpu, s.linear, {s.T, s.h / s.t, 2.0 * s.h, 1}, ctx.kc);
    e.fwd_s = lookup + norms + join + g.fwd;
    e.bwd_s = 2.0 * lookup + 2.0 * norms + join + g.dgrad + g.wgrad;
    // Megatron's FLOP count (training.py num_floating_point_operations,
    // "MTP norms and proj"): 3 x 2 x (3h + 2h^2) a token; the projection's
    // GEMMs are the hardware's.
    e.model_flops_total = 3.0 * g.flops + 6.0 * 3.0 * s.h * s.T / s.t;
    e.hw_flops_total = 3.0 * g.flops;
    e.params = 2.0 * s.h * s.h / s.t + 3.0 * s.h; // eh_proj's shard, enorm, hnorm, final norm
    // Saved: the norms' inputs and the projection's input (the SP shard,
    // gathered again in the backward as every column-parallel input is).
    e.activation_bytes = (2.0 * s.h + 2.0 * s.h) * Tsp * kBf16;
    if (s.t > 1) {
        const double bps = tierBytesPerS(ctx.scale_up_gbps, ctx.scale_up_efficiency);
        // The embedding's vocab-parallel all-reduce, the projection's output
        // gathered over TP; under SP its input all-gathered (its gradient
        // reduce-scattered in the backward, as long).
        e.tp_fwd_s = ringAllReduceTime(s.T * s.h * kBf16, int(s.t), bps, ctx.scale_up_step_s) +
                     ringAllGatherTime(s.T * s.h * kBf16, int(s.t), bps, ctx.scale_up_step_s);
        if (s.sp) {
            const double input =
                ringAllGatherTime(s.T * 2.0 * s.h * kBf16, int(s.t), bps, ctx.scale_up_step_s);
            e.tp_fwd_s += input;
            e.tp_bwd_s += input;
        }
    }
    return e;
}

} // namespace sa

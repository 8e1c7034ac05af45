#pragma once
// Plain value type of a plan document ("format": "scaleacross.plan").

#include "model/routing.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sa {

enum class Dim { TP = 0, CP = 1, PP = 2, DP = 3, EP = 4 };
constexpr int kDimCount = 5;
constexpr std::array<Dim, kDimCount> kAllDims = {Dim::TP, Dim::CP, Dim::PP, Dim::DP, Dim::EP};

// Selective: Megatron's (Korthikanti et al. 2022), the attention core only.
// SelectiveOp: torchtitan's per-op policy (activation_checkpoint mode
// "selective", selective_ac_option "op"): it saves the outputs of matmuls,
// attention and reduce-scatters except every second matmul of a block, and
// recomputes the rest (those matmuls and every elementwise op).
enum class Recompute { None, Selective, Full, SelectiveOp };
enum class ScheduleKind { GPipe, OneFOneB, Interleaved, ZeroBubble };
enum class CollectiveAlgo { Auto, Ring, Tree, Hierarchical };
// FSDP (ZeRO-3): whether a unit frees its gathered parameters after each
// microbatch's forward (and gathers them again for its backward).
// Default: torchtitan's policy (get_fsdp_reshard_after_forward_policy,
// "default"): reshard unless pipeline parallelism is on; under PP,
// torch.distributed.pipelining also skips the gradient reduce-scatter until
// the last microbatch (backward_maybe_with_nosync).
enum class FsdpReshard { Default, Always, Never };
// The fused attention kernel (with flash_attention): FlashAttention-2 (Dao
// 2023; PyTorch SDPA's flash backend), FlashAttention-3 (Shah et al. 2024,
// Hopper only), cuDNN's fused attention (Transformer Engine's
// FusedAttention, PyTorch SDPA's cuDNN backend). auto: what Transformer
// Engine picks (get_attention_backend prefers FusedAttention on Hopper and
// newer, FlashAttention-2 before).
enum class AttentionKernel { Auto, Flash2, Flash3, Cudnn };
// How a layer's elementwise ops (norms, RoPE, activation, residual adds,
// layout copies) run. Fused: in a few fused kernels, as Megatron-Core and
// Transformer Engine run them. Eager: PyTorch eager mode, one kernel per
// tensor op, each reading its inputs from HBM and writing its output
// (torchtitan without [compile]). Compiled: torch.compile (Inductor) over
// torchtitan's blocks, fused as Transformer Engine's except the rotary
// embedding, which torchtitan applies in complex form (view_as_complex)
// and Inductor, with no code generation for complex operators, leaves to
// eager ATen kernels (torch/_inductor/lowering.py's warning, torchtitan
// issue #15).
enum class Elementwise { Fused, Eager, Compiled };
// Which layers full recompute re-runs (Megatron --recompute-method with
// --recompute-num-layers N; megatron/core/recompute.py, the checkpointed
// forward of a TransformerBlock, one per model chunk). Uniform: the chunk's
// layers in groups of N, each group's input checkpointed and every layer
// recomputed (N = 1: each layer's input). Block: the first N layers of each
// model chunk (pipeline stage, or virtual stage under interleaving)
// recomputed, the rest keep all their activations.
enum class RecomputeMethod { Uniform, Block };
// What selective recompute re-runs in the backward (Megatron-Core
// --recompute-modules, TransformerConfig.recompute_modules, default
// ["core_attn"]; transformer_layer.py and moe/experts.py):
//   core_attn:      the attention core (FlashAttention or the unfused
//                   scores, softmax and PV), checkpointed;
//   layernorm:      the two norms, their outputs discarded after use;
//   mlp:            a dense layer's MLP (FC1, activation, FC2 and their TP
//                   collectives), checkpointed at its input;
//   moe:            an MoE layer's MLP whole (router, dispatch, experts,
//                   combine, the all-to-alls again);
//   moe_act:        the experts' activation, its output discarded;
//   shared_experts: an MoE layer's shared experts, checkpointed;
//   mla_up_proj:    MLA's up projections (with their fused latent norms)
//                   and RoPE, their outputs (the attention's queries, keys
//                   and values) discarded after the attention and made
//                   again in the backward (multi_latent_attention.py
//                   qkv_up_checkpoint, CheckpointWithoutOutput).
enum class RecomputeModule { CoreAttn, Layernorm, Mlp, Moe, MoeAct, SharedExperts, MlaUpProj };
inline constexpr std::array<RecomputeModule, 7> kAllRecomputeModules = {
    RecomputeModule::CoreAttn, RecomputeModule::Layernorm, RecomputeModule::Mlp,
    RecomputeModule::Moe,      RecomputeModule::MoeAct,    RecomputeModule::SharedExperts,
    RecomputeModule::MlaUpProj};
// A set of modules, one bit each.
constexpr unsigned recomputeBit(RecomputeModule m) {
    return 1u << unsigned(m);
}
inline constexpr unsigned kDefaultRecomputeModules = recomputeBit(RecomputeModule::CoreAttn);
// How an FP8 GEMM's input gets its scale. Current: per-tensor dynamic
// scaling, an amax pass before each cast (torchao's float8 tensorwise,
// Transformer Engine's Float8CurrentScaling, Megatron --fp8-recipe
// tensorwise). Delayed: the scale from the amax history of earlier
// iterations, the amax computed inside the cast kernel (Transformer Engine's
// DelayedScaling, Megatron --fp8-recipe delayed).
enum class Fp8Recipe { Current, Delayed };
// Which library runs the FP8 linear layers, which decides what they keep.
// TransformerEngine: each linear saves its input for the backward as FP8 (1
// byte per element; the norm input and the FC1 output stay BF16) and caches
// its weight's FP8 copy and transposed copy (2 bytes per parameter) across
// the microbatches of a step. Torchao: Float8Linear saves the BF16 input and
// weight and casts them again in the backward; no copies are kept.
enum class Fp8Linear { TransformerEngine, Torchao };
// Which kernels compute the loss over the logits (docs/COST_MODEL.md
// "Logits and loss"). Megatron: Megatron-Core's VocabParallelCrossEntropy
// (and 2021 Megatron's), fp32 passes over the logits, the default.
// MegatronFused: its --cross-entropy-loss-fusion with the native
// implementation. Te: Transformer Engine's Triton kernels
// (--cross-entropy-fusion-impl te), on the BF16 logits. Pytorch: eager
// torch.nn.functional.cross_entropy on the logits cast to fp32 (torchtitan).
enum class CrossEntropy { Megatron, MegatronFused, Te, Pytorch };
// The optimizer's own state (docs/COST_MODEL.md "Memory", "Optimizer
// state"): Adam's two moments in fp32 (4 B each) or bf16 (2 B each:
// Megatron-Core --use-precision-aware-optimizer with --exp-avg-dtype and
// --exp-avg-sq-dtype bf16; Apex DistributedFusedAdam with dtype bf16, NeMo's
// optim.dtype), and the master copy of the weights in fp32 (4 B), in 16 bits
// (2 B: Apex's store_param_remainders, the low halves of fp32 values whose
// high halves are the bf16 weights, NeMo's default with its
// distributed_fused_adam and BF16 weights; Megatron-Core's --main-params-dtype
// fp16), or none (the bf16 weights are stepped in place: NeMo's
// distributed_fused_adam with optim.dtype bf16).
enum class OptimizerMoments { Fp32, Bf16 };
enum class MasterWeights { Fp32, Half, None };
// How the optimizer's step runs (docs/COST_MODEL.md "Optimizer step"):
// fused, one kernel streaming each parameter's state once (Apex and
// Transformer Engine FusedAdam, PyTorch's AdamW(fused=True), torchtitan's
// default since 2025-02-24), or foreach, PyTorch's multi-tensor AdamW, one
// pass over the state per op (torchtitan's default before).
enum class OptimizerImpl { Fused, Foreach };
// How MoE tokens reach their experts' ranks (docs/COST_MODEL.md, EP).
// AllToAll: every (token, expert) copy to its expert's rank (Megatron's
// alltoall dispatcher). Flex: one copy per destination host over the
// network, fanned out over NVLink there (Megatron's flex dispatcher with
// DeepEP, its default backend). HybridEp: the same exchange with HybridEP
// (--moe-flex-dispatcher-backend hybridep), which also all-gathers every
// rank's routing map once per forward.
enum class EpDispatcher { AllToAll, Flex, HybridEp };
// How context parallelism exchanges the attention's inputs (docs/COST_MODEL.md
// "Communication", CP). Transformer Engine's (Megatron-Core --cp-comm-type,
// transformer_engine/pytorch/attention/dot_product_attention/
// context_parallel.py): TeP2p (p2p, the default), each step's K/V chunk sent
// to the next rank under the attention of the one before, corrections
// inside its kernels; TeAllGather (allgather), K and V all-gathered before
// the attention and their gradients reduce-scattered after it, neither
// overlapped; TeA2a (a2a, DeepSpeed-Ulysses), Q, K and V all-to-all'd from
// sequence shards to head shards, the attention run over the whole
// sequence on cp-th of the heads, its output all-to-all'd back.
// TorchAllGather, TorchAllToAll: PyTorch's context_parallel
// (torch.distributed.tensor.experimental, torchtitan): K and V as SDPA
// receives them, gathered once (rotate method allgather, its default) or
// passed rank to rank (alltoall); each step's output merged in fp32 by
// eager ops, the K/V gradients accumulated in fp32 and passed on in fp32.
enum class CpRing { TeP2p, TeAllGather, TeA2a, TorchAllGather, TorchAllToAll };
inline bool isTorchCpRing(CpRing r) {
    return r == CpRing::TorchAllGather || r == CpRing::TorchAllToAll;
}
// The training framework whose defaults the plan's knobs take (plan
// "framework"; absent: the document format's own defaults). The defaults
// and their sources: frameworkDefaults() in core/model/framework_defaults.h,
// docs/FRAMEWORKS.md "Framework defaults".
enum class TrainingFramework { MegatronCore, Nemo, Torchtitan };
inline bool fsdpPerMicrobatch(int zero, FsdpReshard reshard, int pp) {
    return zero == 3 &&
           (reshard == FsdpReshard::Always || (reshard == FsdpReshard::Default && pp == 1));
}
inline int effectiveZeroStage(int zero, FsdpReshard reshard, int pp) {
    return zero == 3 && !fsdpPerMicrobatch(zero, reshard, pp) ? 1 : zero;
}

struct Parallelism {
    int tp = 1;
    int cp = 1;
    int pp = 1;
    int dp = 1;
    // Expert parallel: the expert layers fold each TP x CP cell's ranks
    // beyond the experts' own TP group into expert parallelism, then whole
    // replicas (Megatron-Core's MoE parallel folding, 0.10 on: its expert
    // rank generator orders etp-ep-dp, cp folded, over the same
    // tp x cp x dp ranks; torchtitan's EP mesh takes cp, and tp at etp 1,
    // before dp_shard). ep divides the cell's (tp / etp) x cp ranks or is a
    // multiple of them by a divisor of dp: with tp = etp and cp 1, ep
    // divides dp.
    int ep = 1;
    // Expert tensor parallel (Megatron-Core's expert_tensor_parallel_size,
    // torchtitan's expert_tensor_parallel_degree): the experts split over
    // etp ranks, a divisor of tp; 0 = tp, the experts split as the dense
    // layers are.
    int etp = 0;

    int expertTp() const { return etp > 0 ? etp : tp; }
    // An expert-parallel group's ranks inside one TP x CP cell (consecutive
    // ranks etp apart).
    int expertRanksPerCell() const { return tp / expertTp() * cp; }
    // Whether ep divides the cell's folded ranks or is a multiple of them by
    // a divisor of dp (degrees assumed positive, etp dividing tp).
    bool expertGroupsFit() const {
        const int inCell = expertRanksPerCell();
        return ep <= inCell ? inCell % ep == 0 : ep % inCell == 0 && dp % (ep / inCell) == 0;
    }
    // Replicas an expert-parallel group spans.
    int expertReplicaSpan() const {
        const int inCell = expertRanksPerCell();
        return ep > inCell ? ep / inCell : 1;
    }
    // The experts' data-parallel group: the ranks that hold the same expert
    // shard, tp x cp x dp / (etp x ep).
    double expertDataShards() const { return double(tp) * cp * dp / (double(expertTp()) * ep); }

    std::int64_t gpus() const { return std::int64_t(tp) * cp * pp * dp; }
    int of(Dim d) const {
        switch (d) {
        case Dim::TP:
            return tp;
        case Dim::CP:
            return cp;
        case Dim::PP:
            return pp;
        case Dim::DP:
            return dp;
        case Dim::EP:
            return ep;
        }
        return 1;
    }
    bool operator==(const Parallelism&) const = default;
};

struct Schedule {
    ScheduleKind kind = ScheduleKind::OneFOneB;
    int virtual_stages = 1; // model chunks per stage (interleaved only)
    // Latency-aware warm-up (CrossPipe, ATC'25): each stage runs enough extra
    // forwards before its first backward to cover the round trip of the P2P
    // links downstream of it, so a long link does not stall every 1F1B cycle.
    bool latency_hiding = false;
    bool operator==(const Schedule&) const = default;
};

// A run of grid cells (inclusive ranges) that one building holds.
struct PlacementRun {
    int stage_first = 0;
    int stage_last = 0;
    int replica_first = 0;
    int replica_last = 0;
    std::string building;
    bool operator==(const PlacementRun&) const = default;
};

struct Placement {
    std::vector<PlacementRun> runs;    // applied in order over the rank-order default
    std::vector<int> layers_per_stage; // empty = even split
    bool operator==(const Placement&) const = default;
};

struct LinkOverride {
    std::string technology; // empty = keep the cluster's
    int flows = 0;          // 0 = keep the technology's
    // NCCL knobs over the technology's (0 = keep; Technology in
    // core/model/cluster.h; a given knob re-derives the flows).
    int nccl_channels = 0;
    int qps_per_connection = 0;
    int sockets_per_connection = 0;
    double buffsize_mib = 0;
    bool operator==(const LinkOverride&) const = default;
};

// Compression of a dimension's gradient traffic where it crosses buildings
// (plan "compression": {"dp": {...}}); inside a building NCCL runs
// uncompressed. bf16 / fp8: the crossing bytes are cast to 2 or 1 byte per
// element (fp8 with one fp32 scale per block of values); topk: each building
// sends its largest-magnitude fraction `topk_ratio` of its shard as (value,
// 32-bit index) pairs, the rest kept in a residual (error feedback).
enum class CompressionMethod { Bf16, Fp8, TopK };
struct Compression {
    CompressionMethod method = CompressionMethod::Bf16;
    double topk_ratio = 0.01;   // topk only: kept fraction, (0, 1]
    bool error_feedback = true; // topk only: add the dropped part to the next step's gradient
    bool operator==(const Compression&) const = default;
};

// Low-communication data parallelism across buildings (plan "outer_sync";
// docs/RUN.md). The DP replicas are grouped into workers by the buildings
// their cells occupy; inside a worker the replicas synchronise every step
// as the rest of the plan says, across workers:
//   diloco            every `inner_steps` steps, an all-reduce of each
//                     worker's pseudo-gradient (its parameter change) at
//                     `outer_bytes` per element, blocking (Douillard et al.
//                     2023, arXiv 2311.08105);
//   streaming-diloco  the parameters in `fragments` pieces, one synced every
//                     inner_steps / fragments steps, its all-reduce
//                     overlapped with the next `overlap_steps` inner steps
//                     (Douillard et al. 2025, arXiv 2501.18512);
//   hsdp              every step, an all-reduce of the gradient shards across
//                     workers after each worker's reduce-scatter; FSDP
//                     shards inside the worker only (torchtitan
//                     data_parallel_replicate_degree); no convergence cost.
enum class OuterSyncMethod { Diloco, StreamingDiloco, Hsdp };
struct OuterSync {
    OuterSyncMethod method = OuterSyncMethod::Diloco;
    int inner_steps = 100; // H (hsdp: 1)
    int fragments = 1;     // streaming-diloco: pieces synced in turn
    int overlap_steps = 1; // streaming-diloco: inner steps a fragment's sync may hide behind
    double outer_bytes =
        4; // bytes per element of the outer gradients (fp32 4, bf16 2, fp8 1, 4-bit 0.5)
    // Relative loss of DiLoCo over synchronous DP at equal tokens (0.01 = 1%
    // higher); absent: the scaling-law curve (docs/RUN.md).
    std::optional<double> loss_penalty;
    bool operator==(const OuterSync&) const = default;
};

// Checkpoints (plan "checkpoint"): every `interval_steps` steps (0: the
// interval that maximises goodput, Young/Daly); async: the step pauses only
// for the copy to host memory, the write to storage overlaps training.
struct Checkpointing {
    std::int64_t interval_steps = 0;
    bool async = false;
    bool operator==(const Checkpointing&) const = default;
};

struct Plan {
    std::string name;
    std::string description;
    std::optional<TrainingFramework> framework;
    std::int64_t sequence_length = 0;
    std::int64_t global_batch_sequences = 0;
    std::int64_t micro_batch_sequences = 1;
    Parallelism parallelism;
    int zero_stage = 1;
    // ZeRO's sharding group (HSDP): the optimizer state, and with ZeRO-2/3
    // the gradients and parameters, sharded over dp_shard consecutive DP
    // ranks (x cp) and replicated over the dp / dp_shard groups, which
    // all-reduce their gradient shards once a step. torchtitan's
    // data_parallel_shard_degree (its replicate degree is dp / dp_shard),
    // PyTorch FSDP's HYBRID_SHARD over a node, Megatron-LM's
    // --num-distributed-optimizer-instances dp / dp_shard. 0: all of dp.
    int dp_shard = 0;
    Recompute recompute = Recompute::None;
    // With recompute full: which layers (Megatron's default granularity is
    // every layer, uniform 1).
    RecomputeMethod recompute_method = RecomputeMethod::Uniform;
    int recompute_layers = 1;
    // With recompute selective: the modules re-run (recomputeBit set).
    unsigned recompute_modules = kDefaultRecomputeModules;
    // Whether selective recompute re-runs `m`.
    bool recomputes(RecomputeModule m) const {
        return recompute == Recompute::Selective && (recompute_modules & recomputeBit(m)) != 0;
    }
    bool sequence_parallel = true;
    // With sequence parallelism, how the QKV and FC1 inputs (all-gathered
    // over TP before those GEMMs) are kept for the weight gradient: as the
    // GPU's sequence shard, all-gathered again in the backward beside the
    // input-gradient GEMM (true: Megatron-Core's
    // LinearWithGradAccumulationAndAsyncCommunication and Transformer
    // Engine's column-parallel layers, ln_out_needs_gather), or whole, as
    // gathered in the forward (false: PyTorch DTensor's ColwiseParallel,
    // torchtitan, whose autograd saves the replicated input).
    // docs/COST_MODEL.md "Sequence parallelism's backward all-gather".
    bool sequence_parallel_regather = true;
    // Dropout probabilities in training: on the hidden states (the residual
    // branches' bias-dropout-add after the attention projection and the MLP,
    // Megatron's --hidden-dropout) and on the attention probabilities
    // (--attention-dropout). 0 runs no dropout kernel (PyTorch's dropout
    // returns its input at p = 0). docs/COST_MODEL.md "Dropout".
    double hidden_dropout = 0;
    double attention_dropout = 0;
    Schedule schedule;
    std::vector<Dim> rank_order = {Dim::TP, Dim::CP, Dim::PP, Dim::DP};
    std::optional<Placement> placement;
    std::map<Dim, CollectiveAlgo> collectives;             // per dimension
    std::map<std::string, LinkOverride> link_technologies; // by link name
    bool dp_overlap = true;                                // overlap DP/FSDP traffic with backward
    // TP communication overlapped with the GEMMs next to it (with sequence
    // parallelism): Megatron --tp-comm-overlap / NeMo ub_tp_comm_overlap
    // (Transformer Engine userbuffers), torchtitan's AsyncTP. Off by default
    // as in Megatron and torchtitan.
    bool tp_comm_overlap = false;
    // Each transformer layer's kernels captured once in a CUDA graph and
    // replayed (Megatron-Core --cuda-graph-impl local / transformer_engine /
    // full_iteration): the host issues a layer's forward and backward as one
    // graph launch each instead of one op per kernel. A dropless MoE layer's
    // expert half has data-dependent shapes and stays host-issued, as
    // Megatron-Core's MoE README says. Off by default in Megatron-Core
    // (TransformerConfig.cuda_graph_impl "none"); torchtitan has no option
    // for it. docs/COST_MODEL.md "Host".
    bool cuda_graphs = false;
    // Pipeline P2P beside compute: a stage's send runs while its next op
    // computes (true), or the stage waits for each send to complete before
    // its next op (false: blocking, as Megatron's non-interleaved 1F1B,
    // whose send_forward_recv_backward and send_backward_recv_forward wait on
    // their requests). docs/COST_MODEL.md "Pipeline schedule"; each
    // framework's default in core/model/framework_defaults.cpp.
    bool p2p_overlap = true;
    // MoE all-to-all beside another microbatch's compute (Megatron-Core
    // --overlap-moe-expert-parallel-comm: the 1F1B phase runs one
    // microbatch's forward and another's backward as one combined step,
    // pipeline/combined_1f1b.py). Applies with EP, and under PP with
    // interleaving, as Megatron-Core asserts; off by default as there.
    bool ep_overlap = false;
    EpDispatcher ep_dispatcher = EpDispatcher::AllToAll;
    // SMs the flex dispatcher's dispatch and combine kernels hold while they
    // run (Megatron-Core --moe-flex-dispatcher-num-sms, before it
    // --moe-deepep-num-sms / --moe-hybridep-num-sms); 0: the backend's
    // default (DeepEP 20, Megatron's; HybridEP 24 inside one NVLink domain,
    // 8 across them, DeepEP hybrid-ep Configurer). Beside another
    // microbatch's compute (ep_overlap) the compute loses that share of the
    // SMs. The all-to-all dispatcher's NCCL kernels take NCCL's CTAs.
    int ep_dispatcher_sms = 0;
    CpRing cp_ring = CpRing::TeP2p;
    // Megatron's hierarchical CP (--cp-comm-type a2a+p2p with
    // --hierarchical-context-parallel-sizes A P): with cp_ring te-p2p and
    // cp_a2a_size A > 1, Transformer Engine all-to-alls Q, K and V over A
    // neighbouring ranks of each CP group (their heads split over them) and
    // runs its ring over the cp / A groups (AttnFuncWithCPAndKVP2P with
    // cp_group [a2a group, p2p group]). 1: the plain ring.
    int cp_a2a_size = 1;
    double dp_bucket_mib = 256; // gradient bucket size
    int grad_reduce_bytes = 4;  // bytes per element of reduced gradients (fp32)
    // How ZeRO-1 and 2 sync the gradients: reduce-scatter, each rank
    // receiving the shard it steps (Megatron's distributed optimizer,
    // DeepSpeed stage 1/2 with its default reduce_scatter true). false: an
    // all-reduce of the whole gradients, twice the bytes, each rank then
    // stepping its shard (DeepSpeed "reduce_scatter": false, DeepSpeed's
    // BF16_Optimizer, PyTorch's ZeroRedundancyOptimizer under DDP). The
    // parameters are all-gathered after the step either way.
    bool grad_reduce_scatter = true;
    OptimizerMoments optimizer_moments = OptimizerMoments::Fp32;
    MasterWeights master_weights = MasterWeights::Fp32;
    OptimizerImpl optimizer_implementation = OptimizerImpl::Fused;
    // The weight-gradient GEMMs add into the accumulated gradients
    // themselves (Megatron's gradient accumulation fusion, on by default:
    // the GEMM writes into main_grad). false: each microbatch's gradients
    // are added to them in a pass of their own (Megatron and NeMo with the
    // fusion off, DeepSpeed and FSDP2 through autograd). docs/COST_MODEL.md
    // "Gradient accumulation".
    bool grad_accumulation_fusion = true;
    // FSDP (ZeRO-3) that copies (docs/COST_MODEL.md "FSDP's copies"): each
    // all-gather's output copied out to the parameters, each microbatch's
    // gradients copied into the reduce-scatter's input, on the compute
    // stream (PyTorch FSDP2 _fsdp_collectives.py, DeepSpeed ZeRO-3); false:
    // the parameters and gradients are views of the communication buffers
    // (FSDP1's FlatParameter, Megatron-FSDP).
    bool fsdp_copies = true;
    // Fused attention (FlashAttention): causal blocks skipped, no s^2 tensors
    // stored. false = the unfused kernels of 2021-era Megatron (full QK^T,
    // softmax and its output kept in memory).
    bool flash_attention = true;
    AttentionKernel attention_kernel = AttentionKernel::Auto;
    Elementwise elementwise = Elementwise::Fused;
    // The rotary embedding in its fused kernel (Megatron's default,
    // Transformer Engine's fused RoPE; charged nothing, docs/COST_MODEL.md
    // "Elementwise"). false, under fused elementwise ops: the rotate-half
    // form in eager PyTorch ops, t * cos + rotate_half(t) * sin (Megatron
    // --no-rope-fusion, Megatron-Core's _apply_rotary_pos_emb_bshd; Hugging
    // Face's apply_rotary_pos_emb), on Q and K (MLA: their RoPE parts).
    // Eager and compiled elementwise ops already run torchtitan's complex
    // form unfused: there it changes nothing.
    bool rope_fusion = true;
    // FP8 models only (docs/COST_MODEL.md "FP8"): the scaling recipe and the
    // library of the FP8 linear layers.
    Fp8Recipe fp8_recipe = Fp8Recipe::Current;
    Fp8Linear fp8_linear = Fp8Linear::TransformerEngine;
    // FP8 models only: the FP8 linears' weights all-gathered in FP8, 1 byte
    // each (docs/COST_MODEL.md "FP8 parameter all-gather"). Megatron-Core
    // --fp8-param-gather (Transformer Engine's fp8_model_init: the weights
    // are kept in FP8 and cast once a step from the optimizer's main copy);
    // torchtitan's float8 enable_fsdp_float8_all_gather (FSDP2 casts each
    // shard before gathering it). Off by default in both.
    bool fp8_param_gather = false;
    CrossEntropy cross_entropy = CrossEntropy::Megatron;
    FsdpReshard fsdp_reshard_after_forward = FsdpReshard::Default;
    // The routing the job asks the network for (a traffic-engineering policy
    // for its flows); absent: the cluster's `routing`.
    std::optional<Routing> routing;
    std::optional<Compression> dp_compression; // "compression": {"dp": ...}; none: uncompressed
    std::optional<OuterSync> outer_sync;       // none: synchronous DP every step
    Checkpointing checkpoint;
    // Tokens the run trains on (0: not given; the run's totals are then not
    // reported), and the loss it must reach (0: the loss synchronous DP
    // reaches on token_budget).
    double token_budget = 0;
    double target_loss = 0;

    // The ranks of one ZeRO sharding group along dp, and the groups that
    // replicate it (1 without HSDP).
    int dpShard() const {
        return dp_shard > 0 && dp_shard < parallelism.dp ? dp_shard : parallelism.dp;
    }
    int dpReplicas() const { return parallelism.dp / std::max(1, dpShard()); }
    std::int64_t microbatches() const {
        const std::int64_t per = micro_batch_sequences * parallelism.dp;
        return per > 0 ? global_batch_sequences / per : 0;
    }
    // ZeRO-3 that gathers parameters and reduce-scatters gradients every
    // microbatch; without it (no reshard under PP) a step gathers once and
    // reduces once, holding the whole stage's parameters and gradients.
    bool fsdpPerMicrobatch() const {
        return sa::fsdpPerMicrobatch(zero_stage, fsdp_reshard_after_forward, parallelism.pp);
    }
    // The ZeRO stage as memory and traffic see it: FSDP that keeps its
    // parameters and gradients unsharded through the step is ZeRO-1.
    int effectiveZeroStage() const {
        return sa::effectiveZeroStage(zero_stage, fsdp_reshard_after_forward, parallelism.pp);
    }
    // Ranks between neighbouring members of dimension `d`'s groups: the
    // product of the degrees the rank order puts inside it.
    std::int64_t rankStride(Dim d) const;
    // A data or pipeline dimension the rank order puts inside TP or CP
    // (degrees above 1 only), as {outer, inner}: a model-parallel group of
    // tp*cp GPUs then no longer takes consecutive ranks, which the placement
    // (one cell a group) and the layer's TP, CP and EP costs assume, as
    // Megatron-Core's orders (tp-cp-ep-dp-pp, tp-cp-ep-pp-dp) and
    // torchtitan's device mesh do. Null when none.
    std::optional<std::pair<Dim, Dim>> modelParallelSplit() const;
    CollectiveAlgo algoFor(Dim d) const {
        auto it = collectives.find(d);
        return it == collectives.end() ? CollectiveAlgo::Auto : it->second;
    }
    bool operator==(const Plan&) const = default;
};

const char* toString(Dim d);
const char* toString(Recompute r);
const char* toString(ScheduleKind k);
const char* toString(CollectiveAlgo a);
const char* toString(FsdpReshard r);
const char* toString(AttentionKernel k);
const char* toString(Elementwise e);
const char* toString(RecomputeMethod m);
const char* toString(RecomputeModule m);
const char* toString(Fp8Recipe r);
const char* toString(CrossEntropy c);
const char* toString(OptimizerMoments m);
const char* toString(MasterWeights m);
const char* toString(OptimizerImpl o);
const char* toString(EpDispatcher d);
const char* toString(CpRing r);
const char* toString(Fp8Linear l);
const char* toString(TrainingFramework f);
const char* toString(CompressionMethod m);
const char* toString(OuterSyncMethod m);
std::optional<Dim> dimFromString(const std::string& s);
std::optional<Recompute> recomputeFromString(const std::string& s);
std::optional<RecomputeModule> recomputeModuleFromString(const std::string& s);
// "core_attn, mlp": the set's names in kAllRecomputeModules order.
std::string recomputeModulesText(unsigned modules, const char* separator = ", ");
std::optional<ScheduleKind> scheduleFromString(const std::string& s);
std::optional<CollectiveAlgo> algoFromString(const std::string& s);
std::optional<TrainingFramework> trainingFrameworkFromString(const std::string& s);

// Why a plan cannot shard ZeRO over its dp_shard group (HSDP), in the
// order the plan check reports them; None where it can, or where it runs
// no HSDP. One place for the rules: the check words them, the optimizer's
// candidates drop a group they cannot run.
enum class DpShardProblem {
    None,
    NotDividing,
    NothingSharded,
    ExpertParallel,
    Compression,
    OuterSync
};
DpShardProblem dpShardProblem(const Plan& p);

} // namespace sa

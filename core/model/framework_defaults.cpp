#include "model/framework_defaults.h"

#include <algorithm>

namespace sa {

namespace {

// Megatron-LM's pretrain_gpt.py arguments (megatron/training/arguments.py)
// and Megatron-Core's configs, each knob at the value the framework uses
// when its setting is not given.
Plan megatronCore() {
    Plan p;
    // --use-distributed-optimizer is off by default: plain DDP, every rank
    // holds the whole optimizer state.
    p.zero_stage = 0;
    // validate_args: with --bf16 the gradients are accumulated and reduced in
    // fp32 (accumulate_allreduce_grads_in_fp32) unless --grad-reduce-in-bf16.
    p.grad_reduce_bytes = 4;
    // --overlap-grad-reduce and --tp-comm-overlap are off by default, as is
    // --overlap-moe-expert-parallel-comm (model_parallel_config.py).
    p.dp_overlap = false;
    p.tp_comm_overlap = false;
    p.ep_overlap = false;
    // TransformerConfig.cuda_graph_impl = "none": no CUDA graphs.
    p.cuda_graphs = false;
    // --sequence-parallel is off by default. With it, a column-parallel
    // linear saves its input shard and all-gathers it again in the backward
    // (tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication;
    // Transformer Engine ln_out_needs_gather).
    p.sequence_parallel = false;
    p.sequence_parallel_regather = true;
    // --hidden-dropout and --attention-dropout default to 0.1 (arguments.py;
    // TransformerConfig.hidden_dropout / attention_dropout 0.1): Megatron's
    // GPT runs with dropout unless a recipe sets 0 (its Llama examples do).
    p.hidden_dropout = 0.1;
    p.attention_dropout = 0.1;
    // --recompute-granularity: default None.
    p.recompute = Recompute::None;
    // Without virtual stages Megatron runs 1F1B
    // (forward_backward_pipelining_without_interleaving), whose P2P blocks.
    p.schedule.kind = ScheduleKind::OneFOneB;
    p.p2p_overlap = frameworkP2pOverlap(TrainingFramework::MegatronCore, p.schedule.kind);
    // parallel_state.initialize_model_parallel: order "tp-cp-ep-dp-pp".
    p.rank_order = megatronRankOrder(false);
    // --transformer-impl transformer_engine, --attention-backend auto: TE
    // picks the fused kernel (plan attention_kernel auto).
    p.flash_attention = true;
    p.attention_kernel = AttentionKernel::Auto;
    // Transformer Engine's fused layers and Megatron's bias/activation and
    // softmax fusions (on by default).
    p.elementwise = Elementwise::Fused;
    // TransformerConfig.fp8_recipe defaults to "delayed" (TE DelayedScaling);
    // FP8 linears are Transformer Engine's.
    p.fp8_recipe = Fp8Recipe::Delayed;
    p.fp8_linear = Fp8Linear::TransformerEngine;
    // --fp8-param-gather is off by default (arguments.py): BF16 weights, cast
    // to FP8 by Transformer Engine.
    p.fp8_param_gather = false;
    // --cross-entropy-loss-fusion is off by default: the loss is
    // tensor_parallel.vocab_parallel_cross_entropy over the fp32 logits.
    p.cross_entropy = CrossEntropy::Megatron;
    // --cp-comm-type p2p (arguments.py default): Transformer Engine's
    // AttnFuncWithCPAndKVP2P ring.
    p.cp_ring = CpRing::TeP2p;
    // --no-gradient-accumulation-fusion (store_false): the fusion is on, the
    // wgrad GEMMs accumulate into main_grad (fused_weight_gradient_mlp_cuda,
    // Transformer Engine's fuse_wgrad_accumulation).
    p.grad_accumulation_fusion = true;
    // The distributed optimizer reduce-scatters the gradient buckets
    // (param_and_grad_buffer.py start_grad_sync: reduce_scatter_tensor with
    // use_distributed_optimizer; all-reduce without it, ZeRO-0).
    p.grad_reduce_scatter = true;
    // ZeRO-3 is Megatron-FSDP (--use-megatron-fsdp): each FSDP unit's
    // parameters and gradients are sliced views of its contiguous
    // communication buffers, with no copy in or out
    // (docs/user-guide/features/megatron_fsdp.md, "FSDP2 requires COPY
    // operations ... Megatron-FSDP assigns sliced views"); --use-torch-fsdp2
    // is FSDP2's copies.
    p.fsdp_copies = false;
    // --optimizer adam is Transformer Engine's (else Apex's) FusedAdam
    // (megatron/core/optimizer/__init__.py), one fused kernel.
    p.optimizer_implementation = OptimizerImpl::Fused;
    p.framework = TrainingFramework::MegatronCore;
    return p;
}

// NeMo (1.x / 24.x MegatronGPTModel): model.* keys are Megatron's settings,
// read with Megatron's defaults, except where NeMo's code defaults differ.
Plan nemo() {
    Plan p = megatronCore();
    // model.transformer_engine: cfg.get('transformer_engine', False) and
    // model.use_flash_attention default False: Megatron-Core's local layers
    // with the unfused attention core. (optim.name has no default; without a
    // distributed optimizer it is plain Adam: zero_stage 0.
    // optim.grad_sync_dtype: fp32 by default, as Megatron's.)
    p.flash_attention = false;
    // model.hidden_dropout / model.attention_dropout: cfg.get(..., 0.1) in
    // megatron_gpt_model.py model_provider_func, Megatron's 0.1
    // (NeMo's launcher recipes for GPT-3 and Llama set 0.0).
    p.p2p_overlap = frameworkP2pOverlap(TrainingFramework::Nemo, p.schedule.kind);
    // model.gradient_accumulation_fusion: cfg.get('gradient_accumulation_fusion',
    // False) in megatron_gpt_model.py (the launcher's recipes set True).
    p.grad_accumulation_fusion = false;
    // NeMo's distributed optimizer is Megatron-Core's (reduce-scatter).
    p.grad_reduce_scatter = true;
    // model.fsdp is torch FSDP (NLPFSDPStrategy over
    // torch.distributed.fsdp.FullyShardedDataParallel): each unit's
    // parameters are views of its FlatParameter, gathered and reduced in
    // place (fsdp_copies false, as Megatron-Core's).
    p.framework = TrainingFramework::Nemo;
    return p;
}

// torchtitan's JobConfig (torchtitan/config/job_config.py) and
// parallelize_llama.
Plan torchtitan() {
    Plan p;
    // parallelism.data_parallel_shard_degree = -1: FSDP2 (fully_shard) over
    // every remaining GPU; fsdp_reshard_after_forward = "default".
    p.zero_stage = 3;
    p.fsdp_reshard_after_forward = FsdpReshard::Default;
    // training.mixed_precision_reduce = "float32" (the only value accepted).
    p.grad_reduce_bytes = 4;
    // FSDP2 prefetches and reduce-scatters on their own streams.
    p.dp_overlap = true;
    // parallelism.enable_async_tensor_parallel = false.
    p.tp_comm_overlap = false;
    // No CUDA graph option for training (torch.compile's default mode
    // captures none).
    p.cuda_graphs = false;
    // apply_tp always shards norms over the sequence (SequenceParallel);
    // ColwiseParallel all-gathers the input as a DTensor redistribution and
    // autograd keeps the gathered input for the weight gradient: no second
    // gather in the backward.
    p.sequence_parallel = true;
    p.sequence_parallel_regather = false;
    // torchtitan's models have no dropout layers.
    p.hidden_dropout = 0;
    p.attention_dropout = 0;
    // parallelism.pipeline_parallel_schedule = "1F1B" (Schedule1F1B, blocking
    // in its steady state).
    p.schedule.kind = ScheduleKind::OneFOneB;
    p.p2p_overlap = frameworkP2pOverlap(TrainingFramework::Torchtitan, p.schedule.kind);
    // ParallelDims.build_mesh: [pp, dp_replicate, dp_shard, cp, tp] outermost
    // first.
    p.rank_order = {Dim::TP, Dim::CP, Dim::DP, Dim::PP};
    // SDPA's flash backend (FlashAttention-2); its cuDNN backend is opt-in
    // (pytorch/pytorch#138522) and preferred on Hopper only with cuDNN newer
    // than 9.15 (sdp_utils.cpp check_prefer_cudnn_attention).
    p.flash_attention = true;
    p.attention_kernel = AttentionKernel::Flash2;
    // compile.enable = false: eager PyTorch, one kernel per op.
    p.elementwise = Elementwise::Eager;
    // torchao Float8Linear, tensorwise (dynamic per-tensor) scaling; it saves
    // BF16 inputs and keeps no FP8 weight copies.
    p.fp8_recipe = Fp8Recipe::Current;
    p.fp8_linear = Fp8Linear::Torchao;
    // float8.enable_fsdp_float8_all_gather = false: FSDP2 gathers the BF16
    // weights.
    p.fp8_param_gather = false;
    // The loss is torch.nn.functional.cross_entropy(pred.float(), labels),
    // eager (train.py loss_fn; compiling it was commented out at 9dec370,
    // later layouts compile it with compile.components "loss").
    p.cross_entropy = CrossEntropy::Pytorch;
    // context_parallel (torch/distributed/tensor/experimental/_attention.py)
    // with its _ContextParallelOptions.rotate_method ALL_GATHER, which
    // torchtitan's context_parallel_rotate_method = "allgather" keeps.
    p.cp_ring = CpRing::TorchAllGather;
    // FSDP2 adds each microbatch's gradients to its fp32 accumulated
    // gradient while it does not reduce (_fsdp_param.py
    // accumulate_unsharded_grad_if_needed); autograd's own accumulation
    // otherwise.
    p.grad_accumulation_fusion = false;
    // FSDP2 reduce-scatters (foreach_reduce); DDP all-reduces (ZeRO-0).
    p.grad_reduce_scatter = true;
    // fully_shard is FSDP2: its gathers are copied out to the parameters
    // and its gradients into the reduce-scatter's input
    // (_fsdp_collectives.py foreach_all_gather_copy_out, foreach_reduce).
    p.fsdp_copies = true;
    // optimizer.implementation = "fused" (torch AdamW(fused=True)) since
    // 6e4988550 (2025-02-24, "use Fused AdamW as default"); before it
    // optimizer.fused = false, i.e. foreach (the importer reads either).
    p.optimizer_implementation = OptimizerImpl::Fused;
    // activation_checkpoint: mode "selective", selective_ac_option "2" (full
    // recompute of every second layer) is not expressible; recompute stays
    // none.
    p.framework = TrainingFramework::Torchtitan;
    return p;
}

} // namespace

Plan frameworkDefaults(TrainingFramework f) {
    switch (f) {
    case TrainingFramework::MegatronCore:
        return megatronCore();
    case TrainingFramework::Nemo:
        return nemo();
    case TrainingFramework::Torchtitan:
        return torchtitan();
    }
    return Plan{};
}

bool frameworkP2pOverlap(TrainingFramework f, ScheduleKind kind) {
    switch (f) {
    case TrainingFramework::MegatronCore:
        // megatron/training/arguments.py: --no-overlap-p2p-communication
        // (store_false, dest overlap_p2p_comm), so overlap is on by default
        // since commit 4eeff55d1f (2023-10, "Make overlap_p2p_comm the
        // default", first in core_v0.4.0; before it an opt-in
        // --overlap-p2p-communication from f9283c5a8a, 2023-05, and no overlap
        // at all in 2021-22 Megatron-LM). validate_args turns it off without
        // virtual stages, and forward_backward_pipelining_without_interleaving
        // (core/pipeline_parallel/schedules.py) raises if it is set: 1F1B's
        // send_forward_recv_backward / send_backward_recv_forward go through
        // p2p_communication.py _communicate with wait_on_reqs=True.
        return kind == ScheduleKind::Interleaved;
    case TrainingFramework::Nemo:
        // NeMo 1.x megatron_base_model.py build_model_parallel_config takes
        // model.overlap_p2p_comm from the config, else Megatron-Core's
        // ModelParallelConfig default, False (batch_p2p_comm True).
        return false;
    case TrainingFramework::Torchtitan:
        // torch/distributed/pipelining/schedules.py: Schedule1F1B (pytorch
        // #127673, 2024-06) batches each steady-state forward send with the
        // next backward's receive ("fwd_send_bwd_recv") and each backward
        // send with the next forward's receive, and waits for the batch
        // before computing: blocking in the steady state (its warm-up and
        // cool-down sends overlap one op). ScheduleGPipe and the
        // _PipelineScheduleRuntime schedules (Interleaved1F1B, zero bubble)
        // wait only for receives before an op and for sends at the step's end.
        return kind != ScheduleKind::OneFOneB;
    }
    return true;
}

void applyDerivedFrameworkDefaults(Plan& p, GivenKnobs given) {
    if (!p.framework)
        return;
    if (!given.p2p_overlap)
        p.p2p_overlap = frameworkP2pOverlap(*p.framework, p.schedule.kind);
    if (given.dp_bucket_mib)
        return;
    switch (*p.framework) {
    case TrainingFramework::MegatronCore:
    case TrainingFramework::Nemo:
        if (p.dp_overlap)
            p.dp_bucket_mib = megatronDefaultBucketMib(
                std::int64_t(p.parallelism.dp) * p.parallelism.cp, p.grad_reduce_bytes);
        break;
    case TrainingFramework::Torchtitan:
        if (p.zero_stage == 0)
            p.dp_bucket_mib = kTorchtitanDdpBucketMib;
        break;
    }
}

void applyFrameworkSoftwareDefaults(Plan& p, TrainingFramework f) {
    const Plan d = frameworkDefaults(f);
    p.framework = d.framework;
    p.zero_stage = d.zero_stage;
    p.fsdp_reshard_after_forward = d.fsdp_reshard_after_forward;
    p.grad_reduce_bytes = d.grad_reduce_bytes;
    p.optimizer_moments = d.optimizer_moments;
    p.master_weights = d.master_weights;
    p.dp_overlap = d.dp_overlap;
    p.dp_bucket_mib = d.dp_bucket_mib;
    p.tp_comm_overlap = d.tp_comm_overlap;
    p.cuda_graphs = d.cuda_graphs;
    p.ep_overlap = d.ep_overlap;
    p.sequence_parallel = d.sequence_parallel;
    p.sequence_parallel_regather = d.sequence_parallel_regather;
    p.hidden_dropout = d.hidden_dropout;
    p.attention_dropout = d.attention_dropout;
    p.flash_attention = d.flash_attention;
    p.attention_kernel = d.attention_kernel;
    p.elementwise = d.elementwise;
    p.fp8_recipe = d.fp8_recipe;
    p.fp8_linear = d.fp8_linear;
    p.fp8_param_gather = d.fp8_param_gather;
    p.cross_entropy = d.cross_entropy;
    p.cp_ring = d.cp_ring;
    p.grad_accumulation_fusion = d.grad_accumulation_fusion;
    p.grad_reduce_scatter = d.grad_reduce_scatter;
    p.fsdp_copies = d.fsdp_copies;
    p.optimizer_implementation = d.optimizer_implementation;
    applyDerivedFrameworkDefaults(p, {});
}

double megatronDefaultBucketMib(std::int64_t dpTimesCp, int gradBytes) {
    const std::int64_t params = std::max<std::int64_t>(40000000, 1000000 * dpTimesCp);
    return double(params) * gradBytes / (1024.0 * 1024.0);
}

std::vector<Dim> megatronRankOrder(bool tpPpDp) {
    // ep lives inside dp in the documents; --use-tp-pp-dp-mapping gives
    // "tp-cp-ep-pp-dp".
    if (tpPpDp)
        return {Dim::TP, Dim::CP, Dim::PP, Dim::DP};
    return {Dim::TP, Dim::CP, Dim::DP, Dim::PP};
}

} // namespace sa

#!/bin/bash
# Megatron-Bridge 25.11 performance summary (DGX-H100, FP8 current scaling),
# row LLAMA3.1_405B: 1024 GPUs, TP8 PP8 CP2 VP8 DP8, MBS 1, GBS 512, seq 8192,
# written as Megatron-LM arguments. The embedding and the loss count as a
# layer each in the pipeline split (126 + 2 = 128 = 8 stages x 8 chunks x 2).
# --fp8-param-gather: v0.2.0's scripts/performance/utils/helpers.py get_precision_config
# takes fp8_cs from training/mixed_precision.py bf16_with_fp8_current_scaling_mixed,
# which sets fp8_param_gather = True (first_last_layers_bf16 turned off there).
# --grad-reduce-in-bf16: Megatron-Bridge v0.2.0 (25.11) scripts/performance/configs set
# mixed_precision.grad_reduce_in_fp32 and ddp.grad_reduce_in_fp32 to False.
# --cross-entropy-loss-fusion --cross-entropy-fusion-impl te: v0.2.0's
# scripts/performance/utils/helpers.py set_common_perf_overrides sets
# model.cross_entropy_fusion_impl "te" for every performance run, and
# GPTModelProvider.cross_entropy_loss_fusion defaults to True (models/gpt_provider.py).
# --tp-comm-overlap: v0.2.0's recipes/llama/llama3.py llama31_405b_pretrain_config sets
# CommOverlapConfig(tp_comm_overlap=True), and scripts/performance/configs/llama31/
# llama31_llm_pretrain.py llama31_405b_h100_config keeps it, only swapping in
# userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192 for FP8.

GPUS_PER_NODE=8
NODES=128

# --hidden-dropout 0 --attention-dropout 0: Megatron-Bridge's Llama provider
# sets both to 0.0 (models/llama/llama_provider.py at v0.2.0; later releases take
# hidden_dropout 0.0 from the Llama bridge and attention_dropout 0.0 from the
# Hugging Face config); Megatron's own default is 0.1.

torchrun --nnodes ${NODES} --nproc-per-node ${GPUS_PER_NODE} pretrain_gpt.py \
    --hidden-dropout 0 --attention-dropout 0 \
    --num-layers 126 --hidden-size 16384 --ffn-hidden-size 53248 \
    --num-attention-heads 128 --group-query-attention --num-query-groups 8 \
    --swiglu --untie-embeddings-and-output-weights \
    --normalization RMSNorm --position-embedding-type rope \
    --seq-length 8192 --max-position-embeddings 8192 \
    --micro-batch-size 1 --global-batch-size 512 \
    --tensor-model-parallel-size 8 --sequence-parallel \
    --context-parallel-size 2 \
    --pipeline-model-parallel-size 8 --num-virtual-stages-per-pipeline-rank 8 \
    --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --bf16 --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16 \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tp-comm-overlap \
    --tokenizer-type NullTokenizer --vocab-size 128256 --mock-data \
    --train-iters 50

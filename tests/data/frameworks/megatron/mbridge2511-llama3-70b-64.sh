#!/bin/bash
# Megatron-Bridge 25.11 performance summary (DGX-H100, FP8 current scaling),
# row LLAMA3_70B: 64 GPUs, TP4 PP8 VP5 DP2, MBS 1, GBS 128, seq 8192,
# written as Megatron-LM arguments.
# --fp8-param-gather: v0.2.0's scripts/performance/utils/helpers.py get_precision_config
# takes fp8_cs from training/mixed_precision.py bf16_with_fp8_current_scaling_mixed,
# which sets fp8_param_gather = True (first_last_layers_bf16 turned off there).
# --grad-reduce-in-bf16: Megatron-Bridge v0.2.0 (25.11) scripts/performance/configs set
# mixed_precision.grad_reduce_in_fp32 and ddp.grad_reduce_in_fp32 to False.
# --cross-entropy-loss-fusion --cross-entropy-fusion-impl te: v0.2.0's
# scripts/performance/utils/helpers.py set_common_perf_overrides sets
# model.cross_entropy_fusion_impl "te" for every performance run, and
# GPTModelProvider.cross_entropy_loss_fusion defaults to True (models/gpt_provider.py).

export NNODES=8
export GPUS_PER_NODE=8

MODEL="--num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 --num-attention-heads 64"
ATTN="--group-query-attention --num-query-groups 8"

# --hidden-dropout 0 --attention-dropout 0: Megatron-Bridge's Llama provider
# sets both to 0.0 (models/llama/llama_provider.py at v0.2.0; later releases take
# hidden_dropout 0.0 from the Llama bridge and attention_dropout 0.0 from the
# Hugging Face config); Megatron's own default is 0.1.

torchrun --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE pretrain_gpt.py \
    --hidden-dropout 0 --attention-dropout 0 \
    $MODEL $ATTN \
    --swiglu --untie-embeddings-and-output-weights \
    --normalization RMSNorm --position-embedding-type rope \
    --disable-bias-linear \
    --seq-length 8192 --max-position-embeddings 8192 \
    --micro-batch-size 1 --global-batch-size 128 \
    --tensor-model-parallel-size 4 --sequence-parallel \
    --pipeline-model-parallel-size 8 --num-layers-per-virtual-pipeline-stage 2 \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --tp-comm-overlap \
    --bf16 --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16 \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tokenizer-type NullTokenizer --vocab-size 128256 --mock-data \
    --lr 1.5e-4 --train-iters 50

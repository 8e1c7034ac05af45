#!/bin/bash
# Megatron-Bridge 25.11 performance summary (DGX-H100, FP8 current scaling),
# row LLAMA3_8B: 8 GPUs, Megatron FSDP over 8 ranks, MBS 1, GBS 128, seq 8192,
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

NNODES=1
GPUS=8
SEQ=8192

# --hidden-dropout 0 --attention-dropout 0: Megatron-Bridge's Llama provider
# sets both to 0.0 (models/llama/llama_provider.py at v0.2.0; later releases take
# hidden_dropout 0.0 from the Llama bridge and attention_dropout 0.0 from the
# Hugging Face config); Megatron's own default is 0.1.

torchrun --nnodes=$NNODES --nproc-per-node=$GPUS pretrain_gpt.py \
    --hidden-dropout 0 --attention-dropout 0 \
    --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 \
    --num-attention-heads 32 --group-query-attention --num-query-groups 8 \
    --swiglu --untie-embeddings-and-output-weights \
    --normalization RMSNorm --position-embedding-type rope --rotary-base 500000 \
    --disable-bias-linear \
    --seq-length ${SEQ} --max-position-embeddings ${SEQ} \
    --micro-batch-size 1 --global-batch-size 128 \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 \
    --context-parallel-size 1 \
    --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params \
    --ckpt-format fsdp_dtensor \
    --overlap-grad-reduce --overlap-param-gather \
    --bf16 --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16 \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tokenizer-type NullTokenizer --vocab-size 128256 --mock-data \
    --lr 3e-4 --min-lr 3e-5 --weight-decay 0.1 --clip-grad 1.0 \
    --train-iters 50 --log-interval 1

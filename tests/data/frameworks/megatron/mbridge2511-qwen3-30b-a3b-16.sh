#!/bin/bash
# Megatron-Bridge 25.11 performance summary (DGX-H100, FP8 current scaling),
# row Qwen3_30B_a3B: 16 GPUs, TP1 PP2 VP24 EP8 DP8, MBS 2, GBS 512, seq 4096,
# token-dropless with force-balanced routing, written as Megatron-LM
# arguments. Qwen3's attention heads are 128 wide (--kv-channels 128), twice
# hidden / heads.
# --fp8-param-gather: v0.2.0's scripts/performance/utils/helpers.py get_precision_config
# takes fp8_cs from training/mixed_precision.py bf16_with_fp8_current_scaling_mixed,
# which sets fp8_param_gather = True (first_last_layers_bf16 turned off there).
# --grad-reduce-in-bf16: Megatron-Bridge v0.2.0 (25.11) scripts/performance/configs set
# mixed_precision.grad_reduce_in_fp32 and ddp.grad_reduce_in_fp32 to False.
# --overlap-moe-expert-parallel-comm: v0.2.0's QWEN3_30B_A3B_H100_FP8_CS_BASE_CONFIG
# (scripts/performance/configs/qwen3/workload_base_configs.py) sets moe_a2a_overlap=True
# (with PP 2, VP 12, where the table's row says VP 24).
# --cross-entropy-loss-fusion --cross-entropy-fusion-impl te: v0.2.0's
# scripts/performance/utils/helpers.py set_common_perf_overrides sets
# model.cross_entropy_fusion_impl "te" for every performance run, and
# GPTModelProvider.cross_entropy_loss_fusion defaults to True (models/gpt_provider.py).

# --hidden-dropout 0 --attention-dropout 0: Megatron-Bridge's Qwen3 provider
# sets both to 0.0 (models/qwen/qwen_provider.py at v0.2.0; later releases take
# hidden_dropout 0.0 from the Qwen3 bridge and attention_dropout 0.0 from the
# Hugging Face config); Megatron's own default is 0.1.

torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py \
    --hidden-dropout 0 --attention-dropout 0 \
    --num-layers 48 --hidden-size 2048 --ffn-hidden-size 6144 \
    --num-attention-heads 32 --group-query-attention --num-query-groups 4 \
    --kv-channels 128 --qk-layernorm \
    --swiglu --untie-embeddings-and-output-weights \
    --normalization RMSNorm --position-embedding-type rope --disable-bias-linear \
    --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 768 \
    --moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-3 \
    --moe-router-force-load-balancing --moe-token-dispatcher-type alltoall \
    --moe-grouped-gemm --overlap-moe-expert-parallel-comm \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 2 --global-batch-size 512 \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 2 \
    --num-virtual-stages-per-pipeline-rank 24 \
    --expert-model-parallel-size 8 \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --bf16 --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16 \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tokenizer-type NullTokenizer --vocab-size 151936 --mock-data \
    --train-iters 50

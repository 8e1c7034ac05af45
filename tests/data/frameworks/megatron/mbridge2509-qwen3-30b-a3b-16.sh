#!/bin/bash
# Megatron-Bridge 25.09 performance summary (DGX-H100), row Qwen3_30B_a3B
# (tokendrop): 16 GPUs, TP1 PP2 VP24 EP8 DP8, MBS 2, GBS 512, seq 4096,
# written as Megatron-LM arguments. Qwen3's attention heads are 128 wide
# (--kv-channels 128), twice hidden / heads.
# Followed: Megatron-Bridge v0.1.0rc4 (2025-10-23, the release whose
# docs/performance-summary.md carries the table): scripts/performance/run_script.py
# applies training/utils/moe_token_drop.py apply_moe_token_drop to the Qwen3
# recipe (--moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity,
# routing not force-balanced) and sets no MoE all-to-all overlap;
# configs/qwen3/qwen3_30b_a3b_llm_pretrain.yaml h100 num_gpus_16 (MBS 2 for
# fp8_cs, vp 12 where the table's row says 24), which resets the recipe's full
# recompute to none and sets mixed_precision.grad_reduce_in_fp32 false and
# cross_entropy_fusion_impl te; utils/helpers.py get_precision_config fp8_cs
# (bf16_with_fp8_current_scaling_mixed: tensorwise, --fp8-param-gather).

# --hidden-dropout 0 --attention-dropout 0: Megatron-Bridge's Qwen3 provider
# sets both to 0.0; Megatron's own default is 0.1.

torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py \
    --hidden-dropout 0 --attention-dropout 0 \
    --num-layers 48 --hidden-size 2048 --ffn-hidden-size 6144 \
    --num-attention-heads 32 --group-query-attention --num-query-groups 4 \
    --kv-channels 128 --qk-layernorm \
    --swiglu --untie-embeddings-and-output-weights \
    --normalization RMSNorm --position-embedding-type rope --disable-bias-linear \
    --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 768 \
    --moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-3 \
    --moe-token-dispatcher-type alltoall \
    --moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity \
    --moe-grouped-gemm \
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

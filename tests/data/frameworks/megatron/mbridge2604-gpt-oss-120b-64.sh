#!/bin/bash
# Megatron-Bridge performance summary, '26.04.01 NeMo Container', Pre-Training
# Performance, Model GPT OSS 120B, row DGX-H100 BF16: 64 GPUs, TP1 PP4 EP8
# DP16, MBS 1, GBS 1280, seq 4096 (5824 tokens/s/GPU, 158 model TFLOP/s/GPU;
# token-dropless with force-balanced routing), written as Megatron-LM
# arguments. GPT-OSS's heads are 64 wide (--kv-channels 64); every other
# layer attends to 128 keys (--window-size 127,0 --window-attn-skip-freq 2).
# Followed: Megatron-Bridge v0.4.2 (c81012934, the 26.04.01 release):
# scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py
# GPT_OSS_120B_PRETRAIN_CONFIG_H100_BF16_V2 (PP4, EP8, expert TP 1, GBS 1280,
# selective recompute of layernorm and moe_act), gpt_oss_llm_pretrain.py
# (gradients reduced in BF16, router fusion, force-balanced routing),
# recipes/gpt_oss/gpt_oss.py gpt_oss_120b_pretrain_config (alltoall
# dispatcher, grouped GEMM, permute fusion, CUDA graphs off, fp32 optimizer
# state) and models/gpt_oss/gpt_oss_bridge.py over openai/gpt-oss-120b
# (quick-GELU GLU with clamp 7.0 and linear offset 1.0, written as --swiglu;
# biases on the linear layers; the learnable softmax offset, attention sinks;
# YaRN RoPE), utils/overrides.py (cross_entropy_fusion_impl te).

torchrun --nnodes 8 --nproc-per-node 8 pretrain_gpt.py \
    --hidden-dropout 0 --attention-dropout 0 \
    --num-layers 36 --hidden-size 2880 --ffn-hidden-size 2880 \
    --num-attention-heads 64 --group-query-attention --num-query-groups 8 \
    --kv-channels 64 --window-size 127,0 --window-attn-skip-freq 2 \
    --swiglu --untie-embeddings-and-output-weights \
    --normalization RMSNorm --position-embedding-type rope \
    --num-experts 128 --moe-router-topk 4 --moe-ffn-hidden-size 2880 \
    --moe-router-load-balancing-type aux_loss --moe-router-force-load-balancing \
    --moe-router-fusion --moe-token-dispatcher-type alltoall \
    --moe-grouped-gemm --moe-permute-fusion \
    --expert-model-parallel-size 8 --expert-tensor-parallel-size 1 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 1280 \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 \
    --recompute-granularity selective --recompute-modules layernorm moe_act \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --grad-reduce-in-bf16 --bf16 \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --manual-gc --manual-gc-interval 100 \
    --tokenizer-type NullTokenizer --vocab-size 201088 --mock-data \
    --train-iters 50 --log-interval 1

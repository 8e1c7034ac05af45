#!/bin/bash
# Megatron-Bridge skills/nemo-mbridge-perf-expert-parallel-overlap/SKILL.md
# (commit 067f987df), "HybridEP Production-Shape Benchmark": a 2026-07-25
# controlled Qwen3 30B-A3B pretraining comparison on 16 H100 GPUs, BF16,
# sequence 4096, TP1 PP1 CP1 EP16, MBS 1, GBS 1024, force-balanced routing,
# the flex dispatcher with HybridEP, Transformer Engine CUDA graphs over the
# moe_router and moe_preprocess scopes, delayed wgrad off; only the plain EP
# overlap differs between its two cases. This file: EP overlap on (the
# independent validation run, iterations 41-50: 20.9920 s a step, 287.305
# model TFLOP/s/GPU). Written as Megatron-LM arguments. The rest follows the
# recipe the benchmark ran, Megatron-Bridge
# src/megatron/bridge/recipes/qwen/h100/qwen3_moe.py
# qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config (067f987df): HybridEP on 32
# SMs, router fusion, permute fusion, grouped GEMM, gradients reduced in BF16,
# distributed optimizer with overlapped grad reduce and param gather, no
# recompute, TE cross-entropy; Qwen3's heads are 128 wide (--kv-channels 128).

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
    --normalization RMSNorm --position-embedding-type rope --rotary-base 1000000 \
    --disable-bias-linear \
    --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 768 \
    --moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-3 \
    --moe-router-force-load-balancing --moe-router-fusion \
    --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep \
    --moe-hybridep-num-sms 32 \
    --moe-grouped-gemm --moe-permute-fusion \
    --expert-model-parallel-size 16 --expert-tensor-parallel-size 1 \
    --overlap-moe-expert-parallel-comm \
    --cuda-graph-impl transformer_engine --cuda-graph-scope moe_router moe_preprocess \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 1024 \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --ddp-bucket-size 134217728 --grad-reduce-in-bf16 \
    --bf16 \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --manual-gc --manual-gc-interval 100 \
    --tokenizer-type NullTokenizer --vocab-size 151936 --mock-data \
    --train-iters 50 --log-interval 1

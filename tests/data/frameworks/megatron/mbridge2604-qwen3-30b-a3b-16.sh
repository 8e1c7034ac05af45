#!/bin/bash
# Megatron-Bridge performance summary, '26.04.01 NeMo Container', Pre-Training
# Performance, Model Qwen3_30B_a3B, row DGX-H100 FP8: 16 GPUs, TP1 PP1 EP16
# DP16, MBS 1, GBS 1024, seq 4096 (8960 tokens/s/GPU, 206 model TFLOP/s/GPU;
# token-dropless with force-balanced routing), written as Megatron-LM
# arguments. Qwen3's attention heads are 128 wide (--kv-channels 128), twice
# hidden / heads.
# Followed: Megatron-Bridge v0.4.2 (c81012934, the 26.04.01 release; Megatron-LM
# 2edffadb52): scripts/performance/configs/qwen/qwen3_workload_base_configs.py
# QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1 (EP16, expert TP 1, HybridEP,
# no MoE all-to-all overlap, no CUDA graphs), qwen3_llm_pretrain.py
# qwen3_30b_a3b_pretrain_config_h100 and set_qwen3_common_configs over
# recipes/qwen/qwen3_moe.py qwen3_30b_a3b_pretrain_config and the Qwen3 MoE
# bridge (models/qwen/qwen3_moe_bridge.py), utils/precision.py fp8_cs,
# utils/overrides.py. The flex dispatcher with the HybridEP backend runs on
# 32 SMs (moe_hybridep_num_sms, _set_common_perf_overrides). TP overlap is
# requested but Bridge drops it at TP 1; DDP bucket 128M parameters
# (training/comm_overlap.py); gradients reduced in BF16; recompute off.

# perf_plugins.py: DeepEP/HybridEP dispatchers get 32 connections; HybridEP's
# NVLink domain is the DGX node (8 GPUs).
export CUDA_DEVICE_MAX_CONNECTIONS=32
export NVLINK_DOMAIN_SIZE=8
export USE_MNNVL=0
export NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN=8
export NUM_OF_TOKENS_PER_CHUNK_COMBINE_API=128

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
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 1024 \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --ddp-bucket-size 134217728 --grad-reduce-in-bf16 \
    --bf16 --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --manual-gc --manual-gc-interval 100 \
    --tokenizer-type NullTokenizer --vocab-size 151936 --mock-data \
    --train-iters 50 --log-interval 1

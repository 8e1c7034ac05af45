#!/bin/bash
# Megatron-Bridge performance summary, '26.04.01 NeMo Container', Pre-Training
# Performance, Model Qwen3_235B_a22B, row DGX-H100 FP8: 256 GPUs, TP2 PP8 VP4
# EP32 DP16, MBS 1, GBS 8192, seq 4096 (1712 tokens/s/GPU, 253 model
# TFLOP/s/GPU; token-dropless with force-balanced routing), written as
# Megatron-LM arguments. Qwen3's attention heads are 128 wide (--kv-channels
# 128), twice hidden / heads. The embedding and the loss count as a layer each
# in the pipeline split (94 + 2 = 96 = 8 stages x 4 chunks x 3).
# Followed: Megatron-Bridge v0.4.2 (c81012934, the 26.04.01 release; Megatron-LM
# 2edffadb52): scripts/performance/configs/qwen/qwen3_workload_base_configs.py
# QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V2 (GBS 8192; expert TP 1, MoE
# all-to-all overlap), qwen3_llm_pretrain.py qwen3_235b_a22b_pretrain_config_h100
# (alltoall dispatcher, no TP overlap) and set_qwen3_common_configs over
# recipes/qwen/qwen3_moe.py qwen3_235b_a22b_pretrain_config and the Qwen3 MoE
# bridge (models/qwen/qwen3_moe_bridge.py), utils/precision.py fp8_cs,
# utils/overrides.py (_set_moe_a2a_overlap_overrides: delayed wgrad). DDP
# bucket 128M parameters (training/comm_overlap.py); gradients reduced in
# BF16; recompute off. Expert parallelism 32 with expert TP 1 spans the
# tp x dp = 32 GPUs of a pipeline stage.

# perf_plugins.py: with MoE all-to-all overlap the Hopper default of 8 stays.
export CUDA_DEVICE_MAX_CONNECTIONS=8

# --hidden-dropout 0 --attention-dropout 0: Megatron-Bridge's Qwen3 provider
# sets both to 0.0 (models/qwen/qwen_provider.py at v0.2.0; later releases take
# hidden_dropout 0.0 from the Qwen3 bridge and attention_dropout 0.0 from the
# Hugging Face config); Megatron's own default is 0.1.

torchrun --nnodes 32 --nproc-per-node 8 pretrain_gpt.py \
    --hidden-dropout 0 --attention-dropout 0 \
    --num-layers 94 --hidden-size 4096 --ffn-hidden-size 12288 \
    --num-attention-heads 64 --group-query-attention --num-query-groups 4 \
    --kv-channels 128 --qk-layernorm \
    --swiglu --untie-embeddings-and-output-weights \
    --normalization RMSNorm --position-embedding-type rope --rotary-base 1000000 \
    --disable-bias-linear \
    --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 1536 \
    --moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-3 \
    --moe-router-force-load-balancing --moe-router-fusion \
    --moe-token-dispatcher-type alltoall \
    --moe-grouped-gemm --moe-permute-fusion \
    --overlap-moe-expert-parallel-comm --delay-wgrad-compute \
    --expert-model-parallel-size 32 --expert-tensor-parallel-size 1 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 8192 \
    --tensor-model-parallel-size 2 --sequence-parallel \
    --pipeline-model-parallel-size 8 --num-virtual-stages-per-pipeline-rank 4 \
    --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --overlap-param-gather-with-optimizer-step \
    --ddp-bucket-size 134217728 --grad-reduce-in-bf16 \
    --bf16 --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --manual-gc --manual-gc-interval 100 \
    --tokenizer-type NullTokenizer --vocab-size 151936 --mock-data \
    --train-iters 50 --log-interval 1

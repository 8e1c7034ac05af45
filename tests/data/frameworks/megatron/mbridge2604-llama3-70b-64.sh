#!/bin/bash
# Megatron-Bridge performance summary, '26.04.01 NeMo Container', Pre-Training
# Performance, Model LLAMA3_70B, row DGX-H100 FP8: 64 GPUs, TP4 PP8 VP5 DP2,
# MBS 1, GBS 256, seq 8192 (1664 tokens/s/GPU, 731 model TFLOP/s/GPU),
# written as Megatron-LM arguments.
# Followed: Megatron-Bridge v0.4.2 (c81012934, the 26.04.01 release; Megatron-LM
# 2edffadb52): scripts/performance/configs/llama/llama3_workload_base_configs.py
# LLAMA3_70B_PRETRAIN_CONFIG_H100_FP8_CS_V2 (GBS 256), llama3_llm_pretrain.py
# llama3_70b_pretrain_config_h100 over recipes/llama/llama3.py
# llama3_70b_pretrain_config, utils/precision.py fp8_cs (tensorwise current
# scaling, first_last_layers_bf16 off, fp8_param_gather), utils/overrides.py.
# TP overlap with userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192; DDP bucket
# 128M parameters (training/comm_overlap.py); gradients reduced in BF16
# (set_llama3_common_configs); no recompute, no CUDA graphs, attention_backend
# None (Transformer Engine's pick).

# perf_plugins.py: TP on Hopper without MoE all-to-all overlap.
export CUDA_DEVICE_MAX_CONNECTIONS=1

# --hidden-dropout 0 --attention-dropout 0: Megatron-Bridge's Llama provider
# sets both to 0.0 (models/llama/llama_provider.py at v0.2.0; later releases take
# hidden_dropout 0.0 from the Llama bridge and attention_dropout 0.0 from the
# Hugging Face config); Megatron's own default is 0.1.

torchrun --nnodes 8 --nproc-per-node 8 pretrain_gpt.py \
    --hidden-dropout 0 --attention-dropout 0 \
    --num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 \
    --num-attention-heads 64 --group-query-attention --num-query-groups 8 \
    --swiglu --untie-embeddings-and-output-weights \
    --normalization RMSNorm --position-embedding-type rope --rotary-base 500000 \
    --disable-bias-linear \
    --seq-length 8192 --max-position-embeddings 8192 \
    --micro-batch-size 1 --global-batch-size 256 \
    --tensor-model-parallel-size 4 --sequence-parallel \
    --pipeline-model-parallel-size 8 --num-virtual-stages-per-pipeline-rank 5 \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --overlap-param-gather-with-optimizer-step \
    --ddp-bucket-size 134217728 --grad-reduce-in-bf16 \
    --tp-comm-overlap \
    --bf16 --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --manual-gc --manual-gc-interval 100 \
    --tokenizer-type NullTokenizer --vocab-size 128256 --mock-data \
    --train-iters 50 --log-interval 1

#!/bin/bash
# Megatron-Bridge performance summary, '26.04.01 NeMo Container', Pre-Training
# Performance, Model LLAMA3.1_405B, row DGX-H100 FP8: 1024 GPUs, TP8 PP8 CP2
# VP8 DP8, MBS 1, GBS 1536, seq 8192 (328 tokens/s/GPU, 827 model
# TFLOP/s/GPU), written as Megatron-LM arguments.
# Followed: Megatron-Bridge v0.4.2 (c81012934, the 26.04.01 release; Megatron-LM
# 2edffadb52): scripts/performance/configs/llama/llama31_workload_base_configs.py
# LLAMA31_405B_PRETRAIN_CONFIG_H100_FP8_CS_V2 (GBS 1536), llama31_llm_pretrain.py
# llama31_405b_pretrain_config_h100 over recipes/llama/llama3.py
# llama31_405b_pretrain_config, utils/precision.py fp8_cs (tensorwise current
# scaling, first_last_layers_bf16 off, fp8_param_gather), utils/overrides.py.
# The embedding and the loss count as a layer each in the pipeline split
# (126 + 2 = 128 = 8 stages x 8 chunks x 2). TP overlap with
# userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192; DDP bucket 128M
# parameters (training/comm_overlap.py); gradients reduced in BF16
# (set_llama31_common_configs); no recompute, no CUDA graphs, attention_backend
# None (Transformer Engine's pick).

# perf_plugins.py: TP/CP on Hopper without MoE all-to-all overlap.
export CUDA_DEVICE_MAX_CONNECTIONS=1

# --hidden-dropout 0 --attention-dropout 0: Megatron-Bridge's Llama provider
# sets both to 0.0 (models/llama/llama_provider.py at v0.2.0; later releases take
# hidden_dropout 0.0 from the Llama bridge and attention_dropout 0.0 from the
# Hugging Face config); Megatron's own default is 0.1.

torchrun --nnodes 128 --nproc-per-node 8 pretrain_gpt.py \
    --hidden-dropout 0 --attention-dropout 0 \
    --num-layers 126 --hidden-size 16384 --ffn-hidden-size 53248 \
    --num-attention-heads 128 --group-query-attention --num-query-groups 8 \
    --swiglu --untie-embeddings-and-output-weights \
    --normalization RMSNorm --position-embedding-type rope --rotary-base 500000 \
    --disable-bias-linear \
    --seq-length 8192 --max-position-embeddings 8192 \
    --micro-batch-size 1 --global-batch-size 1536 \
    --tensor-model-parallel-size 8 --sequence-parallel \
    --context-parallel-size 2 \
    --pipeline-model-parallel-size 8 --num-virtual-stages-per-pipeline-rank 8 \
    --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --overlap-param-gather-with-optimizer-step \
    --ddp-bucket-size 134217728 --grad-reduce-in-bf16 \
    --tp-comm-overlap \
    --bf16 --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --manual-gc --manual-gc-interval 100 \
    --tokenizer-type NullTokenizer --vocab-size 128256 --mock-data \
    --train-iters 50 --log-interval 1

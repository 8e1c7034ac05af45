#!/bin/bash
# Megatron-Bridge 25.09 performance summary (DGX-H100), row DeepSeekV3
# (dropless): 1024 GPUs, TP2 PP8 VP4 EP64, MBS 1, GBS 8192, seq 4096 (1297
# tokens/s/GPU, 338 model TFLOP/s/GPU), written as Megatron-LM arguments.
# Followed: Megatron-Bridge v0.1.0rc4 (2025-10-23): scripts/performance/run_script.py's
# deepseek branch for h100 (DeepEP with force-balanced routing, the layout
# 'Et|(tt|)*30mL', the MoE all-to-all overlap with delayed wgrad, shared-expert
# overlap off, selective recompute of mla_up_proj and mlp, overlap_grad_reduce
# off), recipes/deepseek/deepseek_v3.py pretrain_config (DeepSeekV3Provider, one
# MTP module weighted 0.1, the precision-aware optimizer with bf16 moments and
# gradients, overlap_param_gather, no TP comm overlap; its MLA RoPE unfused, which
# run_script.py's apply_rope_fusion = True for every model overrides) and
# configs/deepseek/deepseek_v3_llm_pretrain.yaml h100 num_gpus_1024 (TP2 PP8 VP4
# EP64, expert TP 1, GBS 8192, CUDA graphs off, grad_reduce_in_fp32 false,
# cross_entropy_fusion_impl te); utils/helpers.py fp8_cs. Expert parallelism 64
# with expert TP 1 spans 64 of the tp x dp = 128 GPUs of a pipeline stage.

torchrun --nnodes 128 --nproc-per-node 8 pretrain_gpt.py \
    --num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 \
    --num-attention-heads 128 --kv-channels 128 \
    --multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 \
    --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 --qk-layernorm \
    --rotary-scaling-factor 40 --mscale 1.0 --mscale-all-dim 1.0 \
    --swiglu --untie-embeddings-and-output-weights \
    --normalization RMSNorm --norm-epsilon 1e-6 --position-embedding-type rope \
    --disable-bias-linear --hidden-dropout 0 --attention-dropout 0 \
    --num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 \
    --moe-shared-expert-intermediate-size 2048 --moe-layer-freq '([0]*3+[1]*58)' \
    --moe-router-num-groups 8 --moe-router-group-topk 4 \
    --moe-router-topk-scaling-factor 2.5 --moe-router-score-function sigmoid \
    --moe-router-enable-expert-bias --moe-router-bias-update-rate 1e-3 \
    --moe-router-load-balancing-type seq_aux_loss --moe-router-pre-softmax \
    --moe-router-dtype fp32 --moe-router-force-load-balancing \
    --moe-token-dispatcher-type flex --moe-enable-deepep \
    --moe-grouped-gemm --moe-permute-fusion \
    --overlap-moe-expert-parallel-comm --delay-wgrad-compute \
    --mtp-num-layers 1 --mtp-loss-scaling-factor 0.1 \
    --expert-model-parallel-size 64 --expert-tensor-parallel-size 1 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 8192 \
    --tensor-model-parallel-size 2 --sequence-parallel \
    --pipeline-model-parallel-size 8 --pipeline-model-parallel-layout 'Et|(tt|)*30mL' \
    --recompute-granularity selective --recompute-modules mla_up_proj mlp \
    --use-distributed-optimizer --overlap-param-gather \
    --use-precision-aware-optimizer --main-grads-dtype bf16 \
    --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --grad-reduce-in-bf16 \
    --bf16 --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --manual-gc --manual-gc-interval 5 \
    --tokenizer-type NullTokenizer --vocab-size 129280 --mock-data \
    --train-iters 100 --log-interval 1

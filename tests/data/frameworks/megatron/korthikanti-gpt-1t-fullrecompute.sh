#!/bin/bash
# Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
# Models" (arXiv:2205.05198), Table 3: GPT 1t on 512 A100 GPUs, full recompute, no sequence parallelism (the baseline).
# Micro batch and interleaving were not stated (1 and 1F1B here); 16-bit
# precision as fp16 (with DP = 1 no gradient is reduced).

GPUS_PER_NODE=8
NNODES=64

MODEL_ARGS=(
    --num-layers 128
    --hidden-size 25600
    --num-attention-heads 160
    --seq-length 2048
    --max-position-embeddings 2048
)
PARALLEL_ARGS=(
    --tensor-model-parallel-size 8
    --pipeline-model-parallel-size 64
    --recompute-granularity full
    --recompute-method uniform
    --recompute-num-layers 1
)
TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 512
    --train-iters 20
    --lr 6.0e-5
    --min-lr 6.0e-6
    --lr-decay-style cosine
    --fp16
    --transformer-impl local   # 2022 Megatron-LM: unfused softmax attention
)
DATA_ARGS=(
    --tokenizer-type GPT2BPETokenizer
    --vocab-file gpt2-vocab.json
    --merge-file gpt2-merges.txt
    --mock-data
)

torchrun --nproc-per-node $GPUS_PER_NODE --nnodes $NNODES pretrain_gpt.py \
    ${MODEL_ARGS[@]} ${PARALLEL_ARGS[@]} ${TRAINING_ARGS[@]} ${DATA_ARGS[@]} \
    --log-interval 1

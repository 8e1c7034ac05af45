#!/bin/bash
# Megatron-Core r0.8.0 weak-scaling table (README, 2024-07): GPT 177b on 2304 H100.
# The README gives heads, hidden, layers, TP, PP, DP, GBS; micro batch and
# interleaving were not published (1 and no interleaving here). No recompute
# (Megatron-LM's default: the README names none), distributed optimizer,
# overlapped grad reduce and param gather.

GPUS_PER_NODE=8
NUM_NODES=288
TP=8
PP=6

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --master_addr localhost
    --master_port 6000
)

GPT_MODEL_ARGS=(
    --num-layers 96
    --hidden-size 12288
    --num-attention-heads 96
    --seq-length 4096
    --max-position-embeddings 4096
    --position-embedding-type rope
)

TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 1152
    --train-iters 100
    --weight-decay 0.1
    --adam-beta1 0.9
    --adam-beta2 0.95
    --init-method-std 0.006
    --clip-grad 1.0
    --bf16
    --lr 6.0e-5
    --lr-decay-style cosine
)

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size $PP
    --sequence-parallel
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
    --tp-comm-overlap
)

DATA_ARGS=(
    --mock-data
    --tokenizer-type NullTokenizer
    --vocab-size 131072
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${GPT_MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    --log-interval 10 --eval-iters 0

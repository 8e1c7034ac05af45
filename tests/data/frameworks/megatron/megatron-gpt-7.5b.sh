#!/bin/bash
# GPT 7.5B: Narayanan et al., SC'21, Table 1 (128 A100 GPUs on Selene).
# Written after Megatron-LM's 2021 examples/pretrain_gpt_distributed_with_mp.sh.
# The micro batch size and the schedule were not published (1 and 1F1B here).

GPUS_PER_NODE=8
MASTER_ADDR=localhost
MASTER_PORT=6000
NNODES=16
NODE_RANK=0

DATA_PATH=/data/my-gpt2_text_document
CHECKPOINT_PATH=/checkpoints/gpt-7.5b

DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --node_rank $NODE_RANK --master_addr $MASTER_ADDR --master_port $MASTER_PORT"

python -m torch.distributed.launch $DISTRIBUTED_ARGS \
       pretrain_gpt.py \
       --tensor-model-parallel-size 4 \
       --pipeline-model-parallel-size 1 \
       --num-layers 36 \
       --hidden-size 4096 \
       --num-attention-heads 32 \
       --micro-batch-size 1 \
       --global-batch-size 512 \
       --seq-length 2048 \
       --max-position-embeddings 2048 \
       --train-iters 500000 \
       --lr-decay-iters 320000 \
       --save $CHECKPOINT_PATH \
       --load $CHECKPOINT_PATH \
       --data-path $DATA_PATH \
       --vocab-file gpt2-vocab.json \
       --merge-file gpt2-merges.txt \
       --tokenizer-type GPT2BPETokenizer \
       --split 949,50,1 \
       --distributed-backend nccl \
       --lr 0.00015 \
       --lr-decay-style cosine \
       --min-lr 1.0e-5 \
       --weight-decay 1e-2 \
       --clip-grad 1.0 \
       --lr-warmup-fraction .01 \
       --checkpoint-activations \
       --log-interval 100 \
       --save-interval 10000 \
       --eval-interval 1000 \
       --eval-iters 10 \
       --fp16 \
       --transformer-impl local  # 2021 Megatron-LM had only its own unfused attention

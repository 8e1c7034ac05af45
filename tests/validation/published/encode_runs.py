#!/usr/bin/env python3
"""Writes the published runs of tests/validation/published/ as scaleacross
documents (clusters/, models/, plans/) and the index runs.json.

The seven runs of the first batch (NeMo 24.07 FP8 and torchtitan FSDP rows
from shared/validation/published-runs-2) were copied as they were; this
script keeps their documents and index entries and adds the others. Every
entry names its source (document, table, row), what the source measured,
the tokens/s/GPU the test compares with (converted with the source's own
FLOP formula where only TFLOP/s or an iteration time was published) and
the assumptions made where the source is silent or the documents cannot
express a setting.

Run it from anywhere: python3 tests/validation/published/encode_runs.py
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def dump(path, doc):
    with open(os.path.join(HERE, path), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def model(name, desc, layers, hidden, ffn, heads, kv, vocab, mlp, dtype, tied, moe=None,
          head_dim=None):
    doc = {
        "format": "scaleacross.model", "version": 1, "name": name, "description": desc,
        "layers": layers, "hidden": hidden, "ffn_hidden": ffn, "heads": heads,
        "kv_heads": kv, "vocab": vocab, "mlp": mlp, "dtype": dtype, "tied_embeddings": tied,
    }
    if head_dim:
        doc["head_dim"] = head_dim
    if moe:
        doc["moe"] = moe
    dump("models/" + name + ".json", doc)
    return doc


def plan(name, desc, seq, gbs, mbs, tp, cp, pp, dp, ep=1, zero=1, recompute="none", sp=True,
         kind="1f1b", v=1, dp_overlap=True, grad_bytes=4, flash=True, layers_per_stage=None,
         attention=None, rank_order=("tp", "cp", "dp", "pp"), fp8_gather=False, etp=None):
    # Every encoded run lays its ranks out tp fastest, then cp, dp and pp:
    # Megatron-Core's initialize_model_parallel(order="tp-cp-ep-dp-pp")
    # (ep lives inside dp in the documents; 2021 Megatron's mpu builds the
    # same groups), NeMo and Megatron-Bridge through it, and torchtitan's
    # device mesh ["pp", "dp_replicate", "dp_shard", "cp", "tp"] (outermost
    # first). The documents' own default puts pp before dp.
    doc = {
        "format": "scaleacross.plan", "version": 1, "name": name, "description": desc,
        "sequence_length": seq, "global_batch_sequences": gbs, "micro_batch_sequences": mbs,
        "parallelism": {"tp": tp, "cp": cp, "pp": pp, "dp": dp, "ep": ep,
                        **({"etp": etp} if etp else {})},
        "zero_stage": zero, "recompute": recompute, "sequence_parallel": sp,
        "schedule": {"kind": kind, "virtual_stages": v},
        "dp_overlap": dp_overlap, "grad_reduce_bytes": grad_bytes, "flash_attention": flash,
    }
    if attention:
        doc["attention_kernel"] = attention
    if fp8_gather:
        doc["fp8_param_gather"] = True
    if rank_order:
        doc["rank_order"] = list(rank_order)
    if layers_per_stage:
        doc["placement"] = {"layers_per_stage": layers_per_stage}
    dump("plans/" + name + ".json", doc)
    return doc


def megatron_flops_per_token(layers, hidden, heads, kv, ffn, vocab, seq, gated, experts_routed=1,
                             head_dim=None):
    """Model FLOPs per token as Megatron-LM / NeMo count them
    (megatron/training/training.py num_floating_point_operations, 2024): full
    (non-causal) attention score term s/h, logits once, 3x forward for
    forward + backward."""
    head_dim = head_dim or hidden // heads
    q_ratio = heads * head_dim / hidden
    attn = (1 + kv / heads + seq / hidden) * q_ratio
    mlp = ffn / hidden * experts_routed * (1.5 if gated else 1.0)
    logit = vocab / (2 * layers * hidden)
    return 12 * layers * hidden * hidden * (attn + mlp + logit)


runs = []


def set_note(run_entry, key, note, also_drop=()):
    """Replaces the run's assumption derived for plan `key` (the one that
    starts with "key ") by `note`; no note drops it. `also_drop` lists stale
    assumptions the derivation supersedes."""
    kept = [a for a in run_entry["assumptions"]
            if not a.startswith(key + " ") and a not in also_drop]
    run_entry["assumptions"] = kept + ([note] if note else [])


def run(rid, family, source, cluster, model_doc, plan_doc, metric, value, tokens, assumptions,
        search=None, **extra):
    entry = {
        "id": rid, "family": family, "source": source, "cluster": "clusters/" + cluster,
        "model": "models/" + model_doc["name"] + ".json", "plan": "plans/" + plan_doc["name"] + ".json",
        "measured_metric": metric, "measured_value": value,
        "measured_tokens_per_s_per_gpu": round(tokens, 1),
    }
    entry.update(extra)
    if search:
        entry["search"] = search
    entry["assumptions"] = assumptions
    runs.append(entry)


def load(path):
    with open(os.path.join(HERE, path)) as f:
        return json.load(f)


def derived_cluster(base, name, description, building):
    """clusters/<name>.json: the cluster document `base` renamed, described
    anew and its one building updated with `building`; returned."""
    doc = load("clusters/" + base)
    doc["name"] = name
    doc["description"] = description
    doc["buildings"][0].update(building)
    dump("clusters/%s.json" % name, doc)
    return doc


# ---------------------------------------------------------------- clusters
derived_cluster("dgx-h100.json", "dgx-h100-6144", (
    "A DGX H100 SuperPOD large enough for the Megatron-Core r0.8.0 weak-scaling runs (6,144 GPUs): "
    "same GPU and links as dgx-h100.json (NVLink4 450 GB/s per direction, 8x 400 Gb/s NDR IB per "
    "node), non-blocking. The README does not name the machine (NVIDIA Eos has this shape)."),
    {"gpus": 6144})

# ------------------------------------------------ NeMo 24.07 (FP8, DGX-H100)
NEMO = ("NVIDIA/NeMo docs/source/performance/performance_summary.md (NeMo 24.07, DGX-H100, FP8; "
        "commit 4c73f77670, 2024-08-14, the revision the first seven rows were taken from)")
NEMO_ASSUME = [
    "recompute none, sequence parallel on, distributed optimizer (ZeRO-1) with overlapped "
    "grad/param sync: NeMo launcher defaults; TP comm overlap (ub_tp_comm_overlap) is not "
    "expressible",
    "later revisions of the same table (commit 8e3d65dcfe, 2024-09-09) differ by up to 6% on "
    "some rows; this revision is kept for all NeMo 24.07 rows",
]

gpt5 = model("gpt3-5b-fp8", "GPT-3 5B as in NeMo (24 x 4096, 32 heads, ffn 16384, 51200 vocab, "
             "GeLU, tied), FP8 GEMMs", 24, 4096, 16384, 32, 32, 51200, "gelu", "fp8", True)
gpt20 = model("gpt3-20b-fp8", "GPT-3 20B as in NeMo (44 x 6144, 48 heads, ffn 24576, 51200 "
              "vocab, GeLU, tied), FP8 GEMMs", 44, 6144, 24576, 48, 48, 51200, "gelu", "fp8", True)
l2_7 = model("llama2-7b-fp8", "Llama 2 7B (32 x 4096, 32 heads MHA, ffn 11008, 32K vocab), FP8 "
             "GEMMs", 32, 4096, 11008, 32, 32, 32000, "swiglu", "fp8", False)
l2_13 = model("llama2-13b-fp8", "Llama 2 13B (40 x 5120, 40 heads MHA, ffn 13824, 32K vocab), "
              "FP8 GEMMs", 40, 5120, 13824, 40, 40, 32000, "swiglu", "fp8", False)
gpt175 = load("models/gpt3-175b-fp8.json")
# Revised: the first batch assumed selective recompute for GPT-3 175B.
GPT175_RECOMPUTE_OLD = ("selective recompute (NeMo GPT-3 launcher default; no compute effect "
                        "with flash attention)")
GPT175_RECOMPUTE = (
    "recompute none: NeMo-Framework-Launcher's conf/training/gpt3/175b.yaml sets "
    "activations_checkpoint_granularity null in every revision of 2024 (9c087b63 2024-04-10, "
    "77b69bba and 1a7171d7 2024-07-31, the NeMo 24.07 launcher); selective recompute is not "
    "free with flash attention (Megatron-Core re-runs the core attention)")

p = plan("nemo2407-gpt3-5b-64", "NeMo 24.07 perf table: GPT3-5B 64 GPUs, TP1 PP1 CP1 VP1 DP64, "
         "MBS 4, GBS 2048", 2048, 2048, 4, 1, 1, 1, 64)
run("nemo2407-gpt3-5b-64", "nemo-24.07", NEMO + ", row 'GPT3-5B': 22521 tokens/s/GPU, 736 model "
    "TFLOP/s/GPU", "dgx-h100.json", gpt5, p, "tokens_per_s_per_gpu", 22521, 22521, NEMO_ASSUME,
    published_tflops_per_gpu=736)
p = plan("nemo2407-gpt3-20b-64", "NeMo 24.07 perf table: GPT3-20B 64 GPUs, TP2 PP1 CP1 VP1 "
         "DP32, MBS 2, GBS 256", 2048, 256, 2, 2, 1, 1, 32)
run("nemo2407-gpt3-20b-64", "nemo-24.07", NEMO + ", row 'GPT3-20B': 5851 tokens/s/GPU, 750 model "
    "TFLOP/s/GPU", "dgx-h100.json", gpt20, p, "tokens_per_s_per_gpu", 5851, 5851, NEMO_ASSUME,
    published_tflops_per_gpu=750)
p = plan("nemo2407-gpt3-175b-512", "NeMo 24.07 perf table: GPT3-175B 512 GPUs, TP4 PP8 CP1 VP6 "
         "DP16, MBS 2, GBS 2048", 2048, 2048, 2, 4, 1, 8, 16, kind="interleaved", v=6)
run("nemo2407-gpt3-175b-512", "nemo-24.07", NEMO + ", row 'GPT3-175B 512 GPUs': 782 "
    "tokens/s/GPU, 842 model TFLOP/s/GPU (the MLPerf-style configuration)", "dgx-h100.json",
    gpt175, p, "tokens_per_s_per_gpu", 782, 782,
    NEMO_ASSUME + [GPT175_RECOMPUTE],
    published_tflops_per_gpu=842)
p = plan("nemo2407-llama2-7b-8", "NeMo 24.07 perf table: LLAMA2-7B 8 GPUs, TP1 PP1 CP1 VP1 DP8, "
         "MBS 1, GBS 128", 4096, 128, 1, 1, 1, 1, 8)
run("nemo2407-llama2-7b-8", "nemo-24.07", NEMO + ", row 'LLAMA2-7B': 16847 tokens/s/GPU, 776 "
    "model TFLOP/s/GPU", "dgx-h100.json", l2_7, p, "tokens_per_s_per_gpu", 16847, 16847,
    NEMO_ASSUME, published_tflops_per_gpu=776)
p = plan("nemo2407-llama2-13b-16", "NeMo 24.07 perf table: LLAMA2-13B 16 GPUs, TP1 PP4 CP1 VP10 "
         "DP4, MBS 1, GBS 128", 4096, 128, 1, 1, 1, 4, 4, kind="interleaved", v=10)
run("nemo2407-llama2-13b-16", "nemo-24.07", NEMO + ", row 'LLAMA2-13B': 8646 tokens/s/GPU, 754 "
    "model TFLOP/s/GPU", "dgx-h100.json", l2_13, p, "tokens_per_s_per_gpu", 8646, 8646,
    NEMO_ASSUME, published_tflops_per_gpu=754)
# Nemotron-3 8B and Nemotron 22B: the launcher's nemotron_8b.yaml and
# nemotron_22b.yaml at the table's time (1ab2c781): MHA, squared ReLU (not
# gated), LayerNorm1p, RoPE on half the head, untied 256,000-entry vocabulary
# (the table's FLOPs per token give it: 5.141e10 and 1.302e11, Megatron's
# formula 5.139e10 and 1.302e11).
NEMOTRON_ARCH = ("squared ReLU encoded as the non-gated gelu MLP: the same GEMM shapes, and NeMo's "
                 "squared_relu (nemo/collections/nlp/modules/common/megatron/utils.py) is compiled "
                 "by torch.compile (jit_fuser) into one kernel each way, as a fused GeLU is; "
                 "LayerNorm1p and RoPE on half the head are not described by the documents")
for label, size, layers, hidden, ffn, heads, mbs, tp, pp, v, tps, tflops in [
        ("Nemotron-8B", "8b", 32, 4096, 16384, 32, 4, 2, 1, 1, 12701, 653),
        ("Nemotron-22B", "22b", 40, 6144, 24576, 48, 2, 2, 4, 10, 4256, 554)]:
    m = model("nemotron-%s-fp8" % size, "%s as NeMo's launcher builds it (%d x %d, %d heads MHA, "
              "ffn %d squared-ReLU (non-gated: encoded as gelu, same GEMM shapes), 256K vocab, "
              "untied), FP8 GEMMs" % (label, layers, hidden, heads, ffn), layers, hidden, ffn,
              heads, heads, 256000, "gelu", "fp8", False)
    name = "nemo2407-nemotron-%s-64" % size
    dp = 64 // (tp * pp)
    p = plan(name, "NeMo 24.07 perf table: %s 64 GPUs, TP%d PP%d CP1 VP%d DP%d, MBS %d, GBS 256"
             % (label, tp, pp, v, dp, mbs), 4096, 256, mbs, tp, 1, pp, dp,
             kind="interleaved" if v > 1 else "1f1b", v=v)
    run(name, "nemo-24.07", NEMO + ", row '%s': %d tokens/s/GPU, %d model TFLOP/s/GPU" %
        (label, tps, tflops), "dgx-h100.json", m, p, "tokens_per_s_per_gpu", tps, tps,
        NEMO_ASSUME + [NEMOTRON_ARCH], published_tflops_per_gpu=tflops)

# ------------------------- NeMo long-sequence table (LLAMA2-7B FP8, DGX-H100, CP)
LONG = ("NVIDIA/NeMo docs/source/performance/performance_long_sequence.md, table 'LLAMA2-7B (FP8) "
        "- H100' (NeMo 24.03.01, DGX-H100), 'With CP' columns")
# The batch sizes are the table's 'Batch Size' column (the revision of
# 2025-05-08, 19fadb67b0); the rows at CP 1 (4K to 16K) are the same runs
# as its without-CP column, and the 1024K row has CP 32.
for seq_k, gpus, gbs, tp, pp, dp, cp, tflops in [(4, 4, 1024, 1, 1, 4, 1, 768),
                                                 (8, 8, 512, 1, 2, 4, 1, 730),
                                                 (16, 16, 256, 2, 1, 8, 1, 660),
                                                 (32, 32, 128, 2, 1, 8, 2, 610),
                                                 (64, 64, 64, 4, 1, 8, 2, 574),
                                                 (128, 128, 32, 4, 1, 8, 4, 555),
                                                 (256, 256, 16, 4, 1, 8, 8, 549),
                                                 (512, 512, 8, 8, 1, 4, 16, 549),
                                                 (1024, 1024, 4, 8, 1, 4, 32, 536)]:
    seq = seq_k * 1024
    name = "nemo-longctx-llama2-7b-%dk" % seq_k
    p = plan(name, "NeMo long-sequence table: LLAMA2-7B FP8 %dK, %d GPUs, TP%d PP%d DP%d CP%d, GBS "
             "%d (MBS 1 assumed)" % (seq_k, gpus, tp, pp, dp, cp, gbs), seq, gbs, 1, tp, cp, pp, dp)
    fpt = megatron_flops_per_token(32, 4096, 32, 32, 11008, 32000, seq, True)
    run(name, "nemo-long-context", LONG + ", row SeqLen %dK: %d model TFLOP/s/GPU with CP%d" %
        (seq_k, tflops, cp), "dgx-h100.json", l2_7, p, "model_tflops_per_gpu", tflops,
        tflops * 1e12 / fpt,
        ["tokens/s/GPU = TFLOP/s / (%.4g FLOPs per token), NeMo's FLOP count (full s^2 attention "
         "term, 3x forward; it reproduces the 24.07 table's LLAMA2-7B tokens-to-TFLOP ratio)" % fpt,
         "micro batch 1, no recompute, sequence parallel on, distributed optimizer (ZeRO-1), "
         "overlapped DP: not stated in the table; NeMo defaults"] +
        (["TP comm overlap and CP's overlap of the KV ring with attention are not expressible "
          "beyond what the model assumes"] if cp > 1 else []))

# ---------------------------------------- torchtitan (Grand Teton H100, Dec 2024)
TT = ("pytorch/torchtitan docs/performance.md (commit d4c86e375, 2025-01-30; runs at torchtitan "
      "9dec370, Dec 2024)")
TT_ATTENTION = ("attention_kernel flash2: torchtitan calls PyTorch SDPA, whose flash backend is "
                "FlashAttention-2; cuDNN attention was made opt-in before these runs "
                "(pytorch/pytorch#138522, Oct 2024), and a nightly of 2024-12-04 runs SDPA at "
                "329 TFLOP/s on an H100 where cuDNN runs at 631 (pytorch/pytorch#142132)")
TT_SAC = ("'selective op' AC mapped to recompute=selective-op: torchtitan's policy "
          "(activation_checkpoint.py, 'Saves output of all compute ops, except every second mm') "
          "recomputes wk, wo, w3 and the elementwise ops in the backward")
TT_COMMON = ["the cards ran at 500 W: power_limit_w 500 of tdp_w 700, so the 700 W SXM peaks are "
             "sustained at (500/700)^(1/3) = 0.894 (docs/COST_MODEL.md); 96 GB HBM2e at 2.4 TB/s, "
             "the figure torchao's roofline_utils.py gives for Meta's H100 variant",
             "torch.compile is not expressible (the model has no notion of kernel fusion by the "
             "compiler)",
             "Float8 (torchao, nn.Linear only) mapped to dtype fp8; float8's "
             "enable_fsdp_float8_all_gather (set in the run's TOML) to fp8_param_gather",
             TT_ATTENTION]
l3_8_fp8 = load("models/llama3-8b-fp8.json")
l3_70_fp8 = load("models/llama3-70b-fp8.json")
l31_405_fp8 = model("llama31-405b-fp8", "Llama 3.1 405B (126 x 16384, 128 heads, 8 KV heads, ffn "
                    "53248, 128256 vocab), FP8 GEMMs", 126, 16384, 53248, 128, 8, 128256, "swiglu",
                    "fp8", False)
for fsdp, cp, seq, tps in [(8, 1, 32768, 3890), (4, 2, 65536, 2540), (2, 4, 131072, 1071),
                           (1, 8, 262144, 548)]:
    name = "torchtitan-llama31-8b-fsdp%d-cp%d" % (fsdp, cp)
    p = plan(name, "torchtitan Llama 3.1 8B, FSDP%d CP%d, seq %d, local batch 1, full AC, "
             "compile + Float8" % (fsdp, cp, seq), seq, fsdp, 1, 1, cp, 1, fsdp, zero=3,
             recompute="full", attention="flash2", fp8_gather=True)
    run(name, "torchtitan", TT + ", Table 2 row 'FSDP %d, CP %d' (seq %d): %d TPS/GPU" %
        (fsdp, cp, seq, tps), "grand-teton-h100-96gb.json", l3_8_fp8, p, "tokens_per_s_per_gpu",
        tps, tps, TT_COMMON + ["FSDP shards over the dp x cp ranks (torchtitan's dp_shard_cp "
                               "mesh), as the model's ZeRO does"])
p = plan("torchtitan-llama31-70b-fsdp32-tp8", "torchtitan Llama 3.1 70B, FSDP32 TP8, local batch "
         "16, full AC, compile + Float8", 8192, 512, 16, 8, 1, 1, 32, zero=3, recompute="full",
         attention="flash2", fp8_gather=True)
run("torchtitan-llama31-70b-fsdp32-tp8", "torchtitan", TT + ", Table 4 row '2D' (no AsyncTP): 829 "
    "TPS/GPU", "grand-teton-h100-96gb.json", l3_70_fp8, p, "tokens_per_s_per_gpu", 829, 829,
    TT_COMMON + ["sequence length 8192 (llama3_70b.toml at 9dec370)",
                 "no gradient accumulation: the local batch of 16 is one micro batch",
                 "TP with sequence parallel norms (torchtitan's SequenceParallel) mapped to "
                 "sequence_parallel=true"])
for kind, v, tps in [("1f1b", 1, 100), ("interleaved", 2, 128)]:
    name = "torchtitan-llama31-405b-3d-%s" % kind
    p = plan(name, "torchtitan Llama 3.1 405B, FSDP8 TP8 PP8, local batch 32 in 8 microbatches, "
             "full AC, compile + Float8 + AsyncTP, %s" % kind, 8192, 256, 4, 8, 1, 8, 8, zero=3,
             recompute="full", kind=kind, v=v, layers_per_stage=[15, 16, 16, 16, 16, 16, 16, 15],
             attention="flash2", fp8_gather=True)
    run(name, "torchtitan", TT + ", Table 5 row '%s': %d TPS/GPU" %
        ("1F1B" if kind == "1f1b" else "Interleaved 1F1B", tps), "grand-teton-h100-96gb.json",
        l31_405_fp8, p, "tokens_per_s_per_gpu", tps, tps,
        TT_COMMON + ["microbatches = pp degree (8, torchtitan's default), so micro batch 4",
                     "interleaved: 2 stages per rank (torchtitan's default for looped schedules)",
                     "layers per stage from torchtitan's generate_split_points: "
                     "[15,16,16,16,16,16,16,15]",
                     "FSDP under PP keeps parameters unsharded between forward and backward "
                     "(reshard_after_forward=False) and reduces gradients once a step "
                     "(fsdp_reshard_after_forward default: zero_stage 3 costed as ZeRO-1, "
                     "docs/COST_MODEL.md; encoded as ZeRO-2 before the plan had the key, which "
                     "gave the same time and 21 GiB too little gradient memory)",
                     "AsyncTP (TP comm overlap) is not expressible"])
# Table 1 and Table 3's other rows: the FSDP runs with torch.compile, then
# with Float8 too (same jobs as the first batch's 'FSDP' rows otherwise).
l3_8_bf16 = load("models/llama3-8b-bf16.json")
TT_FSDP = ["sequence length 8192 (torchtitan llama3_8b.toml default; the table does not restate "
           "it)", TT_SAC]
for gpus, table in [(8, 1), (128, 3)]:
    for tag, row, tps, fp8 in [("compile", "FSDP + torch.compile", 6667 if gpus == 8 else 6514,
                                False),
                               ("compile-float8", "FSDP + torch.compile + Float8",
                                8532 if gpus == 8 else 8380, True)]:
        name = "torchtitan-llama31-8b-fsdp%d-%s" % (gpus, tag)
        p = plan(name, "torchtitan Llama 3.1 8B, FSDP%d (ZeRO-3), local batch 2, selective AC, "
                 "%s" % (gpus, "compile + Float8" if fp8 else "BF16 compile"), 8192, 2 * gpus, 2,
                 1, 1, 1, gpus, zero=3, recompute="selective-op", attention="flash2",
                 fp8_gather=fp8)
        run(name, "torchtitan", TT + ", Table %d row '%s': %d TPS/GPU" % (table, row, tps),
            "grand-teton-h100-96gb.json", l3_8_fp8 if fp8 else l3_8_bf16, p,
            "tokens_per_s_per_gpu", tps, tps,
            [a for a in TT_COMMON if fp8 or not a.startswith("Float8")] + TT_FSDP)
p = plan("torchtitan-llama31-70b-fsdp32-tp8-asynctp", "torchtitan Llama 3.1 70B, FSDP32 TP8, "
         "local batch 16, full AC, compile + Float8 + AsyncTP", 8192, 512, 16, 8, 1, 1, 32, zero=3,
         recompute="full", attention="flash2", fp8_gather=True)
run("torchtitan-llama31-70b-fsdp32-tp8-asynctp", "torchtitan", TT + ", Table 4 row '2D + AsyncTP': "
    "876 TPS/GPU", "grand-teton-h100-96gb.json", l3_70_fp8, p, "tokens_per_s_per_gpu", 876, 876,
    TT_COMMON + ["sequence length 8192 (llama3_70b.toml at 9dec370)",
                 "no gradient accumulation: the local batch of 16 is one micro batch",
                 "TP with sequence parallel norms (torchtitan's SequenceParallel) mapped to "
                 "sequence_parallel=true",
                 "AsyncTP mapped to tp_comm_overlap: the micro-pipelined all-gather / "
                 "reduce-scatter matmuls of torch._inductor's fused collectives, costed with the "
                 "model's TP overlap (docs/COST_MODEL.md)"])
# Table 6: 4D, the 405B model with CP at 32k-262k tokens per sequence; local
# batch 8 in pp = 8 microbatches of one sequence.
for fsdp, cp, seq, tps in [(8, 1, 32768, 76), (4, 2, 65536, 47), (2, 4, 131072, 31),
                           (1, 8, 262144, 16)]:
    name = "torchtitan-llama31-405b-4d-fsdp%d-cp%d" % (fsdp, cp)
    p = plan(name, "torchtitan Llama 3.1 405B, FSDP%d CP%d TP8 PP8, seq %d, local batch 8 in 8 "
             "microbatches, full AC, compile + Float8 + AsyncTP, 1F1B" % (fsdp, cp, seq), seq,
             8 * fsdp, 1, 8, cp, 8, fsdp, zero=3, recompute="full",
             layers_per_stage=[15, 16, 16, 16, 16, 16, 16, 15], attention="flash2",
             fp8_gather=True)
    run(name, "torchtitan", TT + ", Table 6 row 'FSDP %d, CP %d' (seq %d): %d TPS/GPU" %
        (fsdp, cp, seq, tps), "grand-teton-h100-96gb.json", l31_405_fp8, p,
        "tokens_per_s_per_gpu", tps, tps,
        TT_COMMON + ["torchtitan's TPS/GPU counts a step's tokens (labels before CP shards them) "
                     "over cp x tp x pp GPUs (train.py, non_data_parallel_size): the per-GPU rate "
                     "compared here",
                     "microbatches = pp degree (8, torchtitan's default), so micro batch 1",
                     "layers per stage from torchtitan's generate_split_points: "
                     "[15,16,16,16,16,16,16,15]",
                     "FSDP shards over the dp x cp ranks (torchtitan's dp_shard_cp mesh); under "
                     "PP it keeps parameters unsharded between forward and backward and reduces "
                     "gradients once a step (fsdp_reshard_after_forward default: zero_stage 3 "
                     "costed as ZeRO-1, docs/COST_MODEL.md)"])

# ------------- Trainy on WhiteFiber: torchtitan Llama 3.1 8B on 32 and 64 H200 (June 2025)
# pytorch/torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md
# (1e216ce3a; the same table as llama3_8b_h200_2025-06_torchtitan.md):
# torchtitan e7c0cae's llama3_8b.toml with local batch 2, compile, Float8
# with the FP8 FSDP all-gather, on hosts of 8 H200 with 400 Gb/s RDMA a GPU.
TRAINY = ("pytorch/torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md (1e216ce3a; "
          "Trainy on WhiteFiber, June 2025; torch 2.8.0a0+5228986c39, torchao 0afa4c1, "
          "torchtitan e7c0cae), Results table")
h200 = load("../gpu/h200.json")["gpu_models"]["H200"]
for k in ("boost_clock_mhz", "sustained_clock_mhz"):
    h200.pop(k)  # the benchmark's clocks: a training run takes Hopper's sustained pair
dump("clusters/whitefiber-h200.json", {
    "format": "scaleacross.cluster", "version": 1, "name": "whitefiber-h200",
    "description": "The H200 hosts of Trainy's torchtitan runs on WhiteFiber (torchtitan "
    "benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md): 8 NVIDIA H200 SXM (141 GB HBM3e "
    "at 4.8 TB/s, 989 dense BF16 and 1,979 FP8 TFLOP/s at 700 W, 132 SMs; the datasheet's "
    "figures, as tests/validation/gpu/h200.json) per host on NVLink, a 400 Gb/s RDMA fabric "
    "(Mellanox CX-7) per GPU, non-blocking (the source names no oversubscription)",
    "gpu_models": {"H200-SXM-141GB": h200},
    "buildings": [{"name": "B1", "region": "us", "gpu_model": "H200-SXM-141GB", "gpus": 64,
                   "gpus_per_host": 8, "scale_up_gbps": 3600, "scale_out_gbps": 400}],
    "links": []})
for gpus, tps in [(32, 10938), (64, 10753)]:
    name = "torchtitan-trainy-llama31-8b-h200-%d" % gpus
    p = plan(name, "Trainy's torchtitan Llama 3.1 8B on %d H200: FSDP%d (ZeRO-3), local batch 2, "
             "selective op AC, compile + Float8 with the FP8 all-gather" % (gpus, gpus), 8192,
             2 * gpus, 2, 1, 1, 1, gpus, zero=3, recompute="selective-op", attention="flash2",
             fp8_gather=True)
    run(name, "trainy-h200-2025", TRAINY + ", NUM_NODES %d: %d TPS/GPU (%d H200; 'sampled at the "
        "100th iteration')" % (gpus // 8, tps, gpus), "whitefiber-h200.json", l3_8_fp8, p,
        "tokens_per_s_per_gpu", tps, tps,
        ["sequence length 8192 and selective op AC: llama3_8b.toml at e7c0cae", TT_SAC,
         "attention_kernel flash2: torchtitan calls PyTorch SDPA, whose flash backend is "
         "FlashAttention-2; PyTorch prefers cuDNN attention on Hopper only with cuDNN newer than "
         "9.15 (check_prefer_cudnn_attention), and the NGC 25.05 container of torch "
         "2.8.0a0+5228986c39 ships an older one",
         "Float8 (torchao tensorwise, nn.Linear but the output layer: filter_fqns) mapped to "
         "dtype fp8; enable_fsdp_float8_all_gather to fp8_param_gather; "
         "force_recompute_fp8_weight_in_bwd (the FP8 weight cast again in the backward, not "
         "kept) is what the documents charge torchao for; the amax all-reduce of "
         "precompute_float8_dynamic_scale_for_fsdp is not charged",
         "no gradient accumulation: the local batch of 2 is one micro batch (global batch 2 x "
         "the GPUs)",
         "FSDP2 over every GPU (data_parallel_shard_degree -1), resharded after forward (no PP: "
         "the default policy), gradients reduced in fp32 (mixed_precision_reduce float32)",
         "the GPUs at their 700 W default: Hopper's sustained clock pair (docs/COST_MODEL.md); "
         "the source gives no power limit"])

# ---------------------------- Megatron-Core r0.8.0 weak scaling (H100, BF16)
MC = ("NVIDIA/Megatron-LM README.md 'Performance Benchmarking' (images/model_table.png, added "
      "2024-07-15 with Megatron-Core r0.8.0)")
for size, heads, hidden, layers, tp, pp, dp, gpus, gbs, tflops in [
        ("1.7b", 16, 2048, 24, 1, 1, 48, 48, 192, 408.8),
        ("7.1b", 32, 4096, 30, 2, 1, 48, 96, 192, 465.9),
        ("16b", 48, 6144, 32, 4, 1, 48, 192, 192, 489.1),
        ("32b", 56, 7168, 48, 8, 1, 48, 384, 192, 459.6),
        ("70b", 64, 8192, 84, 8, 2, 48, 768, 384, 419.7),
        ("119b", 80, 10240, 92, 8, 4, 48, 1536, 768, 420.5),
        ("177b", 96, 12288, 96, 8, 6, 48, 2304, 1152, 432.8),
        ("314b", 128, 16384, 96, 8, 8, 48, 3072, 1536, 474.4),
        ("462b", 144, 18432, 112, 8, 16, 48, 6144, 3072, 459.9)]:
    name = "mcore08-gpt-" + size
    m = model(name, "GPT %s of the Megatron-Core r0.8.0 weak-scaling table: %d layers, hidden %d, "
              "%d heads, ffn 4h, vocab 131072 (GeLU, tied: Megatron GPT defaults)" %
              (size.upper(), layers, hidden, heads), layers, hidden, 4 * hidden, heads, heads,
              131072, "gelu", "bf16", True)
    p = plan(name, "Megatron-Core r0.8.0 weak scaling: TP%d PP%d DP%d, GBS %d, seq 4096; micro "
             "batch and interleaving not published (chosen by the validation test)" %
             (tp, pp, dp, gbs), 4096, gbs, 1, tp, 1, pp, dp)
    fpt = megatron_flops_per_token(layers, hidden, heads, heads, 4 * hidden, 131072, 4096, False)
    run(name, "megatron-core-0.8", MC + ", row %s: %.1f TFLOP/s/GPU on %d GPUs" %
        (size.upper(), tflops, gpus), "dgx-h100-6144.json", m, p, "model_tflops_per_gpu", tflops,
        tflops * 1e12 / fpt,
        ["tokens/s/GPU = TFLOP/s / (%.4g FLOPs per token), Megatron's num_floating_point_operations "
         "(full s^2 attention term; MFU column = TFLOP/s / 989 confirms BF16 peak)" % fpt,
         "micro batch size and interleaving depth are not published: the test picks the fastest "
         "that fits, as for SC'21",
         "ffn 4h, GeLU, tied embeddings, MHA: Megatron GPT defaults (the table gives heads, hidden "
         "and layers only)",
         "recompute none: Megatron-LM's default, the README names no recompute flag (selective "
         "recompute would re-run the core attention), sequence parallel on, "
         "distributed optimizer (ZeRO-1) with --overlap-grad-reduce/--overlap-param-gather as the "
         "README states; --tp-comm-overlap is not expressible",
         "the machine is not named: dgx-h100-6144.json (DGX H100, 400 Gb/s per GPU, "
         "non-blocking)"],
        search=["micro_batch_sequences", "virtual_stages"], gpus_published=gpus)

# ------------------- Korthikanti et al. 2022 (MLSys'23), A100 Selene, DP = 1
KO = ("Korthikanti et al., 'Reducing Activation Recomputation in Large Transformer Models' "
      "(arXiv:2205.05198), Table 3 (configurations) and Table 5 (end-to-end iteration time)")
for size, heads, hidden, layers, pp, gpus, gbs, t_full, t_present in [
        ("22b", 64, 6144, 48, 1, 8, 4, 1.42, 1.10),
        ("175b", 96, 12288, 96, 8, 64, 64, 18.13, 13.75),
        ("530b", 128, 20480, 105, 35, 280, 280, 49.05, 37.83),
        ("1t", 160, 25600, 128, 64, 512, 512, 94.42, 71.49)]:
    m = model("korthikanti-gpt-" + size, "GPT %s of Korthikanti et al. 2022, Table 3: %d layers, "
              "hidden %d, %d heads, ffn 4h, vocab 51200, seq 2048" % (size.upper(), layers, hidden,
                                                                      heads),
              layers, hidden, 4 * hidden, heads, heads, 51200, "gelu", "bf16", True)
    for variant, t, rc, sp in [("present", t_present, "selective", True),
                               ("fullrecompute", t_full, "full", False)]:
        name = "korthikanti-gpt-%s-%s" % (size, variant)
        p = plan(name, "Korthikanti et al. 2022: GPT %s, TP8 PP%d DP1, batch %d, seq 2048, %s" %
                 (size.upper(), pp, gbs,
                  "sequence parallel + selective recompute" if sp else "full recompute, no SP"),
                 2048, gbs, 1, 8, 1, pp, 1, zero=0, recompute=rc, sp=sp, dp_overlap=False,
                 grad_bytes=2, flash=False)
        run(name, "korthikanti-2022", KO + ", row %s '%s': %.2f s per iteration" %
            (size.upper(), "Present work" if sp else "Full recompute", t),
            "selene-a100.json", m, p, "step_time_s", t, gbs * 2048 / (t * gpus),
            ["tokens/s/GPU = batch x 2048 / (iteration time x GPUs); the iteration times reproduce "
             "the MFU the paper and the Megatron-LM README (commit 2e90a342f5) give (41.5%, 51.4%, "
             "56.0%, 56.3% for 'present work')",
             "micro batch size and interleaving are not stated: the test picks the fastest that "
             "fits, as for SC'21",
             "2022 Megatron-LM: unfused softmax attention (no FlashAttention), DP = 1 so no "
             "gradient all-reduce, fp16/bf16 peak 312 TFLOP/s",
             "'full recompute' baseline encoded without sequence parallelism, 'present work' with "
             "SP + selective recompute (Section 6 of the paper)"],
            search=["micro_batch_sequences", "virtual_stages"])

# ------------------- Megatron-Bridge 25.11 (DGX-H100; FP8 current scaling; MoE, FSDP)
MB = ("NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md, '25.11 NeMo Container', "
      "'System: DGX-H100' table (commit 067f987df)")
MB_ASSUME = ["FP8-CS (per-tensor current scaling) mapped to dtype fp8",
             "recompute none, sequence parallel where TP > 1, distributed optimizer (ZeRO-1) with "
             "overlapped grad/param sync: Megatron-Bridge performance recipe defaults",
             "grad_reduce_bytes 2: Megatron-Bridge v0.2.0 (the 25.11 release) "
             "scripts/performance/configs set mixed_precision.grad_reduce_in_fp32 and "
             "ddp.grad_reduce_in_fp32 to False for Llama 3 / 3.1 and Qwen3 "
             "(set_llama3_common_configs, llama31_llm_pretrain.py, qwen3_llm_pretrain.py): "
             "gradients reduced in BF16",
             "fp8_param_gather: v0.2.0's scripts/performance/utils/helpers.py "
             "get_precision_config takes fp8_cs from training/mixed_precision.py "
             "bf16_with_fp8_current_scaling_mixed, which sets fp8_param_gather = True (the "
             "parameters kept and all-gathered in FP8); encoded without it before"]
p = plan("mbridge2511-llama3-8b-fsdp8", "Megatron-Bridge 25.11: LLAMA3_8B 8 GPUs, FSDP8, MBS 1, "
         "GBS 128, seq 8192 (GA 16)", 8192, 128, 1, 1, 1, 1, 8, zero=3, grad_bytes=2, fp8_gather=True)
run("mbridge2511-llama3-8b-fsdp8", "megatron-bridge-25.11", MB + ", row LLAMA3_8B: 14451 "
    "tokens/s/GPU, 744 model TFLOP/s/GPU", "dgx-h100.json", l3_8_fp8, p, "tokens_per_s_per_gpu",
    14451, 14451, MB_ASSUME + ["Megatron FSDP (FSDP = 8) encoded as ZeRO-3 over dp 8"],
    published_tflops_per_gpu=744)
p = plan("mbridge2511-llama3-70b-64", "Megatron-Bridge 25.11: LLAMA3_70B 64 GPUs, TP4 PP8 VP5 "
         "DP2, MBS 1, GBS 128, seq 8192 (GA 64)", 8192, 128, 1, 4, 1, 8, 2, kind="interleaved", v=5,
         grad_bytes=2, fp8_gather=True)
run("mbridge2511-llama3-70b-64", "megatron-bridge-25.11", MB + ", row LLAMA3_70B: 1602 "
    "tokens/s/GPU, 719 model TFLOP/s/GPU", "dgx-h100.json", l3_70_fp8, p, "tokens_per_s_per_gpu",
    1602, 1602, MB_ASSUME, published_tflops_per_gpu=719)
p = plan("mbridge2511-llama31-405b-1024", "Megatron-Bridge 25.11: LLAMA3.1_405B 1024 GPUs, TP8 PP8 "
         "CP2 VP8 DP8, MBS 1, GBS 512, seq 8192 (GA 64)", 8192, 512, 1, 8, 2, 8, 8,
         kind="interleaved", v=8, layers_per_stage=[15, 16, 16, 16, 16, 16, 16, 15], grad_bytes=2, fp8_gather=True)
run("mbridge2511-llama31-405b-1024", "megatron-bridge-25.11", MB + ", row LLAMA3.1_405B: 292 "
    "tokens/s/GPU, 737 model TFLOP/s/GPU", "dgx-h100.json", l31_405_fp8, p,
    "tokens_per_s_per_gpu", 292, 292,
    MB_ASSUME + ["126 layers over 64 virtual stages: Megatron counts the embedding and the loss "
                 "as a layer each (account_for_embedding/loss_in_pipeline_split), giving "
                 "[15,16,...,16,15] layers per pipeline rank; the documents give layers per "
                 "stage, not per virtual stage"],
    published_tflops_per_gpu=737)
q30 = model("qwen3-30b-a3b-fp8", "Qwen3-30B-A3B: 48 layers, hidden 2048, 32 heads of 128 (a "
            "4096-wide q projection, twice hidden), 4 KV heads, 128 experts top-8 with expert ffn "
            "768, vocab 151936, untied; FP8 GEMMs", 48, 2048, 6144, 32, 4, 151936, "swiglu", "fp8",
            False, moe={"experts": 128, "top_k": 8, "expert_ffn_hidden": 768}, head_dim=128)
p = plan("mbridge2511-qwen3-30b-a3b-16", "Megatron-Bridge 25.11: Qwen3_30B_a3B 16 GPUs, TP1 PP2 "
         "VP24 EP8 DP8, MBS 2, GBS 512, seq 4096 (GA 32)", 4096, 512, 2, 1, 1, 2, 8, ep=8,
         kind="interleaved", v=24, grad_bytes=2, fp8_gather=True)
run("mbridge2511-qwen3-30b-a3b-16", "megatron-bridge-25.11", MB + ", row Qwen3_30B_a3B: 5275 "
    "tokens/s/GPU, 121 model TFLOP/s/GPU (token-dropless, force-balanced routing)",
    "dgx-h100.json", q30, p, "tokens_per_s_per_gpu", 5275, 5275,
    MB_ASSUME + ["force-balanced routing matches the model's even expert load; capacity factor 1",
                 "MoE all-to-all overlap: Bridge v0.2.0's H100 FP8 preset for this model sets "
                 "moe_a2a_overlap (with PP 2 and VP 12 where the table's row says VP 24)"],
    published_tflops_per_gpu=121)

# ------------- Megatron-Bridge 26.04.01 (DGX-H100; FP8 current scaling; MoE)
# The presets are those of Megatron-Bridge v0.4.2 (c81012934, 2026-05-28), the
# release the docs' version list pairs with the 26.04.01 container ("0.4.2 ·
# 26.04.01", docs/versions1.json); it carries the table itself (2b82f6f17,
# "26.04.01_perf_summary") and pins Megatron-LM 2edffadb52.
MB26 = ("NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md, '26.04.01 NeMo Container', "
        "'Pre-Training Performance' (commit 067f987df; the same table is docs/performance-summary.md "
        "at v0.4.2, c81012934, the 26.04.01 release)")
MB26_CFG = ("Megatron-Bridge v0.4.2 (c81012934) scripts/performance: ")
MB26_ASSUME = [
    "FP8 is the H100 presets' fp8_cs (utils/precision.py: bf16_with_fp8_current_scaling_mixed, "
    "per-tensor current scaling, with first_last_layers_bf16 off so every layer runs FP8) mapped "
    "to dtype fp8; its fp8_param_gather (the distributed optimizer all-gathers FP8 parameters) "
    "mapped to the plan's fp8_param_gather",
    "grad_reduce_bytes 2: the perf configs set mixed_precision.grad_reduce_in_fp32 and "
    "ddp.grad_reduce_in_fp32 to False (gradients reduced in BF16)",
    "distributed optimizer (ZeRO-1) with overlap_grad_reduce / overlap_param_gather (the recipe's "
    "ddp config); Bridge's CommOverlapConfig sets the DDP bucket to 128M parameters, 256 MiB in "
    "BF16, the documents' default",
    "rank order [tp, cp, dp, pp]: Megatron-Core's default (no use_tp_pp_dp_mapping in the recipes)",
    "recompute none and CUDA graphs off: the recipe's recompute_granularity None and "
    "cuda_graph_impl 'none', which the H100 FP8_CS preset leaves as they are",
    "attention_kernel auto (Transformer Engine's pick, cuDNN fused attention on Hopper): the "
    "recipes set attention_backend None and perf_plugins.py sets neither NVTE_FUSED_ATTN nor "
    "NVTE_FLASH_ATTN",
    "sequence parallel where TP > 1 (WorkloadBaseConfig.sequence_parallel = tp > 1)",
]
MB26_PG = ("overlap_param_gather_with_optimizer_step (utils/overrides.py set_post_overrides, "
           "dp > 1, pp > 1, vp > 1) is not expressible")

p = plan("mbridge2604-llama3-70b-64", "Megatron-Bridge 26.04.01: LLAMA3_70B 64 GPUs, TP4 PP8 VP5 "
         "DP2, MBS 1, GBS 256, seq 8192 (GA 128)", 8192, 256, 1, 4, 1, 8, 2, kind="interleaved",
         v=5, grad_bytes=2, rank_order=["tp", "cp", "dp", "pp"], fp8_gather=True)
run("mbridge2604-llama3-70b-64", "megatron-bridge-26.04", MB26 + ", Model LLAMA3_70B, row DGX-H100 "
    "FP8: 1664 tokens/s/GPU, 731 model TFLOP/s/GPU", "dgx-h100.json", l3_70_fp8, p,
    "tokens_per_s_per_gpu", 1664, 1664,
    [MB26_CFG + "configs/llama/llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_H100_"
     "FP8_CS_V2 (TP4 PP8 VP5, GBS 256: the default variant v2), llama3_llm_pretrain.py "
     "llama3_70b_pretrain_config_h100 over recipes/llama/llama3.py llama3_70b_pretrain_config"]
    + MB26_ASSUME +
    ["TP comm overlap with userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192 (the recipe's "
     "CommOverlapConfig(tp_comm_overlap=True)); its per-GEMM userbuffer settings are not "
     "expressible (the model takes Transformer Engine's defaults)",
     MB26_PG,
     "the row's TFLOP/s and tokens/s disagree by 2%: Bridge's own FLOP count (flop_utils.py, "
     "3.68e15 per 8192-token sequence in its tests) gives 747 TFLOP/s for 1664 tokens/s, or "
     "1627 tokens/s for 731 TFLOP/s; the 26.04 and 25.11 rows agree with it. The tokens/s "
     "column is compared, as for 25.11"],
    published_tflops_per_gpu=731)
p = plan("mbridge2604-llama31-405b-1024", "Megatron-Bridge 26.04.01: LLAMA3.1_405B 1024 GPUs, TP8 "
         "PP8 CP2 VP8 DP8, MBS 1, GBS 1536, seq 8192 (GA 192)", 8192, 1536, 1, 8, 2, 8, 8,
         kind="interleaved", v=8, grad_bytes=2, layers_per_stage=[15, 16, 16, 16, 16, 16, 16, 15],
         rank_order=["tp", "cp", "dp", "pp"], fp8_gather=True)
run("mbridge2604-llama31-405b-1024", "megatron-bridge-26.04", MB26 + ", Model LLAMA3.1_405B, row "
    "DGX-H100 FP8: 328 tokens/s/GPU, 827 model TFLOP/s/GPU", "dgx-h100.json", l31_405_fp8, p,
    "tokens_per_s_per_gpu", 328, 328,
    [MB26_CFG + "configs/llama/llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_H100_"
     "FP8_CS_V2 (TP8 PP8 CP2 VP8, GBS 1536), llama31_llm_pretrain.py "
     "llama31_405b_pretrain_config_h100 over recipes/llama/llama3.py llama31_405b_pretrain_config"]
    + MB26_ASSUME +
    ["126 layers over 64 virtual stages: the recipe sets account_for_embedding_in_pipeline_split "
     "and account_for_loss_in_pipeline_split (the embedding and the loss count as a layer each), "
     "giving [15,16,...,16,15] layers per pipeline rank; the documents give layers per stage, not "
     "per virtual stage",
     "TP comm overlap with userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192; its per-GEMM "
     "userbuffer settings are not expressible (the model takes Transformer Engine's defaults)",
     "CP 2 with Megatron-Core's default P2P ring (the recipe sets no cp_comm_type)",
     MB26_PG],
    published_tflops_per_gpu=827)
p = plan("mbridge2604-qwen3-30b-a3b-16", "Megatron-Bridge 26.04.01: Qwen3_30B_a3B 16 GPUs, TP1 PP1 "
         "EP16 DP16, MBS 1, GBS 1024, seq 4096 (GA 64)", 4096, 1024, 1, 1, 1, 1, 16, ep=16,
         sp=False, grad_bytes=2, rank_order=["tp", "cp", "dp", "pp"], fp8_gather=True)
run("mbridge2604-qwen3-30b-a3b-16", "megatron-bridge-26.04", MB26 + ", Model Qwen3_30B_a3B, row "
    "DGX-H100 FP8: 8960 tokens/s/GPU, 206 model TFLOP/s/GPU (token-dropless, force-balanced "
    "routing)", "dgx-h100.json", q30, p, "tokens_per_s_per_gpu", 8960, 8960,
    [MB26_CFG + "configs/qwen/qwen3_workload_base_configs.py QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_"
     "FP8_CS_V1 (EP16, expert TP 1, GBS 1024), qwen3_llm_pretrain.py "
     "qwen3_30b_a3b_pretrain_config_h100 and set_qwen3_common_configs over "
     "recipes/qwen/qwen3_moe.py qwen3_30b_a3b_pretrain_config"]
    + MB26_ASSUME +
    ["force-balanced routing (set_qwen3_common_configs: moe_router_force_load_balancing, "
     "'required for token dropless') matches the model's even expert load; capacity factor 1",
     "the flex dispatcher with the HybridEP backend (moe_flex_dispatcher_backend 'hybridep', "
     "32 SMs: moe_hybridep_num_sms in _set_common_perf_overrides): ep_dispatcher hybridep (one copy "
     "per destination host over the network, NVLink fan-out there, the routing maps all-gathered "
     "before each forward's dispatch); ep_dispatcher_sms 32 (they matter only beside "
     "compute, and the all-to-all is not overlapped with compute in this run)",
     "no MoE all-to-all overlap (moe_a2a_overlap False in the preset); the recipe's full "
     "recompute is reset to none by set_qwen3_common_configs; the recipe's TP overlap is dropped "
     "by Bridge at TP 1; grouped GEMM, permute and router fusion on (kernel choices the "
     "documents do not distinguish)"],
    published_tflops_per_gpu=206)
q235 = model("qwen3-235b-a22b-fp8", "Qwen3-235B-A22B: 94 layers, hidden 4096, 64 heads of 128 (an "
             "8192-wide q projection, twice hidden), 4 KV heads, 128 experts top-8 with expert ffn "
             "1536 in every layer, vocab 151936, untied; FP8 GEMMs", 94, 4096, 12288, 64, 4, 151936,
             "swiglu", "fp8", False, moe={"experts": 128, "top_k": 8, "expert_ffn_hidden": 1536},
             head_dim=128)
p = plan("mbridge2604-qwen3-235b-a22b-256", "Megatron-Bridge 26.04.01: Qwen3_235B_a22B 256 GPUs, TP2 "
         "PP8 VP4 DP16, EP32 with expert TP 1, MBS 1, GBS 8192, seq 4096 (GA 512)", 4096, 8192, 1,
         2, 1, 8, 16, ep=32, etp=1, kind="interleaved", v=4,
         grad_bytes=2, layers_per_stage=[11, 12, 12, 12, 12, 12, 12, 11],
         rank_order=["tp", "cp", "dp", "pp"], fp8_gather=True)
run("mbridge2604-qwen3-235b-a22b-256", "megatron-bridge-26.04", MB26 + ", Model Qwen3_235B_a22B, "
    "row DGX-H100 FP8: 1712 tokens/s/GPU, 253 model TFLOP/s/GPU (token-dropless, force-balanced "
    "routing)", "dgx-h100.json", q235, p, "tokens_per_s_per_gpu", 1712, 1712,
    [MB26_CFG + "configs/qwen/qwen3_workload_base_configs.py QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_"
     "FP8_CS_V2 (TP2 PP8 VP4 EP32, expert TP 1, GBS 8192, moe_a2a_overlap), qwen3_llm_pretrain.py "
     "qwen3_235b_a22b_pretrain_config_h100 and set_qwen3_common_configs over "
     "recipes/qwen/qwen3_moe.py qwen3_235b_a22b_pretrain_config",
     "architecture from the Qwen3 MoE bridge's test config for Qwen/Qwen3-235B-A22B "
     "(tests/unit_tests/models/qwen/test_qwen3_moe_bridge.py at v0.4.2: 94 layers, hidden 4096, "
     "64 heads, 4 KV heads, 128 experts top-8, moe_intermediate_size 1536, vocab 151936, untied); "
     "head_dim 128 (HF config.json head_dim; Bridge's flop test, 6.06e14 FLOPs per 4096-token "
     "sequence, holds with 128 and not with hidden / heads = 64)"]
    + MB26_ASSUME +
    ["EP 32 with expert TP 1 (Megatron-Core's MoE parallel folding): each expert whole on one "
     "GPU, the EP group the tp x dp = 32 GPUs of a pipeline stage (plan etp 1: the cell's two TP "
     "ranks, then 16 replicas)",
     "94 layers over 32 virtual stages: the recipe sets account_for_embedding_in_pipeline_split "
     "and account_for_loss_in_pipeline_split, giving [11,12,...,12,11] layers per pipeline rank "
     "(3 per chunk, 2 in the first and last)",
     "force-balanced routing (set_qwen3_common_configs) matches the model's even expert load; "
     "capacity factor 1",
     "alltoall dispatcher (qwen3_235b_a22b_pretrain_config_h100, no flex backend in the "
     "preset); its delay_wgrad_compute beside the all-to-all overlap "
     "(_set_moe_a2a_overlap_overrides) is not expressible",
     "no TP comm overlap: qwen3_235b_a22b_pretrain_config_h100 sets "
     "CommOverlapConfig(tp_comm_overlap=False)",
     MB26_PG],
    published_tflops_per_gpu=253)

# ----------- Megatron-Bridge main (16 H100, BF16; Qwen3 30B-A3B, HybridEP A/B)
# A controlled comparison the Bridge repository records with its Nsight
# decomposition: the same job with the plain EP overlap off and on.
MBMAIN = ("NVIDIA-NeMo/Megatron-Bridge skills/nemo-mbridge-perf-expert-parallel-overlap/SKILL.md "
          "(commit 067f987df), 'HybridEP Production-Shape Benchmark', a 2026-07-25 controlled "
          "Qwen3 30B-A3B pretraining comparison on 16 H100 GPUs")
MBMAIN_ASSUME = [
    "configuration from the benchmark's statement (BF16, sequence 4096, TP1 PP1 CP1 EP16, MBS 1, "
    "GBS 1024, force-balanced routing, flex dispatcher with HybridEP, Transformer Engine CUDA "
    "graphs over moe_router and moe_preprocess, delayed wgrad off) and, for the rest, the recipe "
    "it ran: src/megatron/bridge/recipes/qwen/h100/qwen3_moe.py "
    "qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config at 067f987df (HybridEP on 32 SMs, router and "
    "permute fusion, grouped GEMM, gradients reduced in BF16, distributed optimizer with "
    "overlapped grad reduce and param gather, no recompute, TE cross-entropy)",
    "grad_reduce_bytes 2: the recipe sets mixed_precision.grad_reduce_in_fp32 and "
    "ddp.grad_reduce_in_fp32 to False",
    "rank order [tp, cp, dp, pp]: Megatron-Core's default",
    "attention_kernel auto (Transformer Engine's pick, cuDNN fused attention on Hopper): the "
    "recipe sets attention_backend None",
    "cuda_graphs true: the launch configuration's --cuda-graph-impl transformer_engine; the run "
    "captured the router and the dispatcher's preprocessing, the model takes each layer's "
    "attention half as captured and the dropless expert half as host-issued (the host pace does "
    "not bind this job's layers either way)",
    "force-balanced routing matches the model's even expert load; capacity factor 1",
    "the flex dispatcher with the HybridEP backend (32 SMs) as ep_dispatcher hybridep: one copy per "
    "destination host over the network, NVLink fan-out there, the routing maps all-gathered "
    "before each forward's dispatch; ep_dispatcher_sms 32: beside another microbatch's "
    "compute its kernels hold 32 of the 132 SMs",
    "the precision-aware optimizer with FP32 moments and masters (the recipe keeps them): the "
    "plan's optimizer_moments and master_weights defaults",
]
q30bf16 = model("qwen3-30b-a3b-bf16", "Qwen3-30B-A3B: 48 layers, hidden 2048, 32 heads of 128 (a "
                "4096-wide q projection, twice hidden), 4 KV heads, 128 experts top-8 with expert ffn "
                "768, vocab 151936, untied; BF16", 48, 2048, 6144, 32, 4, 151936, "swiglu", "bf16",
                False, moe={"experts": 128, "top_k": 8, "expert_ffn_hidden": 768}, head_dim=128)
for suffix, step, tflops, window in (("", 24.7138, 244.039, "overlap off, iterations 5-20"),
                                     ("-epoverlap", 20.9920, 287.305,
                                      "overlap on, the independent validation run, iterations "
                                      "41-50")):
    name = "mbridge-main-qwen3-30b-a3b-bf16-16" + suffix
    p = plan(name, "Megatron-Bridge main (2026-07-25 A/B): Qwen3 30B-A3B BF16 on 16 H100, TP1 PP1 "
             "EP16 DP16, MBS 1, GBS 1024, seq 4096 (GA 64), HybridEP, EP overlap " +
             ("on" if suffix else "off"), 4096, 1024, 1, 1, 1, 1, 16, ep=16, sp=False, grad_bytes=2,
             rank_order=["tp", "cp", "dp", "pp"])
    p["cuda_graphs"] = True
    dump("plans/" + name + ".json", p)
    tokens = 1024 * 4096 / 16 / step
    run(name, "megatron-bridge-main", MBMAIN + ": %s: %.4f s a step, %.3f model TFLOP/s/GPU" %
        (window, step, tflops), "dgx-h100.json", q30bf16, p, "step_time_s", step, tokens,
        MBMAIN_ASSUME, published_tflops_per_gpu=tflops)

# ------------- Llama 3 (Dubey et al. 2024), 405B pretraining on Meta's RoCE H100 cluster
# Table 4 of the paper states every parallel dimension, the batch and the
# achieved BF16 TFLOP/s per GPU; Section 3.3 states the machine and the
# framework's choices used below.
L3 = ("Dubey et al., 'The Llama 3 Herd of Models' (arXiv 2407.21783, 2024), Section 3.3.2, "
      "Table 4 (scaling configurations and MFU of Llama 3 405B pre-training)")
derived_cluster("dgx-h100.json", "meta-roce-h100-24k", (
    "Meta's RoCE AI cluster of the Llama 3 paper (Section 3.3.1): 24K H100 SXM5 80GB HBM3 at 700 W, "
    "8 per Grand Teton server on NVLink, 400 Gb/s RoCE per GPU in a three-layer Clos: pods of "
    "3,072 GPUs (192 racks of 16) at full bisection, 1:7 oversubscribed between pods at the "
    "aggregation layer."),
    {"gpus": 24576, "zone_gpus": 3072, "zone_oversubscription": 7})
l405 = model("llama31-405b-bf16", "Llama 3 405B (Table 3 of the paper: 126 x 16384, 128 heads, "
             "8 KV heads, ffn 53248, vocab 128256), BF16", 126, 16384, 53248, 128, 8, 128256,
             "swiglu", "bf16", False)
L3_FPT = megatron_flops_per_token(126, 16384, 128, 8, 53248, 128256, 8192, True)
L3_ASSUME = [
    "parallelism, sequence length and batch from Table 4; rank order [tp, cp, pp, dp] as Section "
    "3.3.2 gives it ('the order of parallelism dimensions, [TP, CP, PP, DP], is optimized for "
    "network communication')",
    "tokens/s/GPU = TFLOP/s / (%.4g FLOPs per token): the paper does not give its FLOP count; "
    "this is Megatron's and torchtitan's (6 x parameters plus the full s^2 attention term, "
    "12 x layers x hidden x seq); a causal count would halve the attention term and give "
    "~4%% more tokens/s" % L3_FPT,
    "zero_stage 3 with fsdp_reshard_after_forward never: 'we shard the optimizer states and "
    "gradients, but for the model shards we do not reshard after forward computation to avoid an "
    "extra all-gather communication during backward passes'",
    "grad_reduce_bytes 4: 'we ... reduce-scatter gradients in FP32 across data parallel workers "
    "in FSDP' (Section 3.3.2, numerical stability)",
    "recompute none: 'we could pretrain Llama 3 on sequences of 8K tokens without activation "
    "checkpointing'",
    "layers per pipeline rank 7, 8 x 14, 7: 'we reduce one Transformer layer each from the first "
    "and the last stages'",
    "interleaved schedule ('we use an interleaved schedule ... with V pipeline stages on one "
    "pipeline rank'); V and the micro batch are not published: the test picks the fastest that "
    "fits. The paper's tunable N (contiguous microbatches per round) is not expressible: the "
    "model runs Megatron's interleaving",
    "asynchronous point-to-point communication in PP: p2p_overlap true (the documents' default)",
    "not stated, the documents' defaults: sequence parallel on, attention kernel auto, fused "
    "elementwise kernels, Megatron's loss kernels",
    "the job's GPUs are the cluster's first ones (pods filled in rank order); the paper's "
    "network-aware placement is not otherwise expressible",
]
for gpus, dp, per_dp, tflops in ((8192, 64, 32, 430.0), (16384, 128, 16, 400.0)):
    name = "llama3-405b-%dk" % (gpus // 1024)
    p = plan(name, "Llama 3 405B pre-training (Dubey et al. 2024, Table 4): %d H100, TP8 CP1 PP16 "
             "DP%d, %d sequences of 8192 per DP rank (16M tokens a batch)" % (gpus, dp, per_dp),
             8192, dp * per_dp, 1, 8, 1, 16, dp, zero=3, kind="interleaved", v=2,
             layers_per_stage=[7] + [8] * 14 + [7], rank_order=("tp", "cp", "pp", "dp"))
    p["fsdp_reshard_after_forward"] = "never"
    dump("plans/" + name + ".json", p)
    run(name, "llama3-herd", L3 + ", row %d GPUs: %.0f TFLOP/s/GPU (BF16 MFU %d%%)" %
        (gpus, tflops, round(tflops / 9.89)), "meta-roce-h100-24k.json", l405, p,
        "model_tflops_per_gpu", tflops, tflops * 1e12 / L3_FPT, L3_ASSUME,
        search=["micro_batch_sequences", "virtual_stages"], gpus_published=gpus)

# ------------- Megatron-Turing NLG 530B (Smith et al. 2022), DeepSpeed + Megatron on Selene
# The paper's end-to-end iteration times of the 530B model at three data-
# parallel widths: the same model and machine as SC'21's 529.6B row, run by
# DeepSpeed's pipeline engine instead of Megatron's schedule.
MT = ("Smith et al., 'Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B' (arXiv "
      "2201.11990, 2022), Section 2 (system performance of the 530B model on Selene; the same "
      "figures in Microsoft's and NVIDIA's 2021-10-11 announcement)")
mt = model("mtnlg-530b", "Megatron-Turing NLG 530B: 105 layers, hidden 20480, 128 heads, ffn 4h, "
           "vocab 51200 (GPT-2 BPE padded to a multiple of 128 x TP), seq 2048 (GeLU, tied: "
           "Megatron GPT)", 105, 20480, 4 * 20480, 128, 128, 51200, "gelu", "bf16", True)
MT_ASSUME = [
    "8-way tensor and 35-way pipeline parallelism (3 layers a stage), data parallelism filling "
    "280, 350 and 420 DGX A100 (DP 8, 10, 12), batch 1920 sequences of 2048 (paper, Section 2)",
    "tokens/s/GPU = 1920 x 2048 / (iteration time x GPUs); the paper's TFLOP/s (126, 121, 113) are "
    "these times under Megatron's FLOP count with full activation recomputation "
    "(96 B s l h^2 (1 + s/6h + V/16lh)): recompute full",
    "DeepSpeed's pipeline engine: 1F1B without virtual stages; its P2P blocks "
    "(deepspeed/runtime/pipe/p2p.py send/recv assert async_op == False); the gradients are "
    "reduced after the last backward (TrainSchedule's ReduceGrads), dp_overlap false, in the "
    "training precision (grad_reduce_bytes 2)",
    "2021 Megatron kernels: unfused softmax attention (no FlashAttention), no sequence "
    "parallelism, no TP overlap",
    "zero_stage 1 (DeepSpeed's pipeline engine takes ZeRO stage 0 or 1): it changes memory, not "
    "the reduction's volume",
    "micro batch size not stated: the test picks the fastest that fits",
    "the machine: selene-a100.json (DGX A100 80GB, 8 x 200 Gb/s HDR per node, non-blocking), "
    "as for SC'21 and Korthikanti et al.",
]
for dgx, t in ((280, 60.1), (350, 50.2), (420, 44.4)):
    gpus = 8 * dgx
    dp = gpus // (8 * 35)
    name = "mtnlg-530b-%d" % gpus
    p = plan(name, "MT-NLG 530B (Smith et al. 2022): %d DGX A100, TP8 PP35 DP%d, batch 1920, seq "
             "2048, full recompute, DeepSpeed pipeline engine" % (dgx, dp), 2048, 1920, 1, 8, 1,
             35, dp, zero=1, recompute="full", sp=False, dp_overlap=False, grad_bytes=2,
             flash=False)
    run(name, "mtnlg-2022", MT + ": %d GPUs, %.1f s per iteration" % (gpus, t),
        "selene-a100.json", mt, p, "step_time_s", t, 1920 * 2048 / (t * gpus), MT_ASSUME,
        search=["micro_batch_sequences"])

# ------------------------------------------------------------------ index
# The first batch stays as it was copied (runs.json holds it); the rest is
# rewritten on every run of this script.
FIRST_BATCH = ["torchtitan-llama31-8b-fsdp8", "torchtitan-llama31-8b-fsdp128",
               "nemo2407-gpt3-175b-128", "nemo2407-llama2-70b-64", "nemo2407-nemotron4-340b-128",
               "nemo2407-llama3-8b-8", "nemo2407-llama3-70b-64"]
index = load("runs.json")
kept = [r for r in index["runs"] if r["id"] in FIRST_BATCH]
# Revised from the first batch: the torchtitan rows' attention kernel.
for r in kept:
    if r["family"] == "torchtitan":
        path = r["plan"]
        doc = load(path)
        doc["attention_kernel"] = "flash2"
        # torchtitan's "selective op" AC is its own policy (every second
        # matmul and the elementwise ops recomputed), not Megatron's.
        if doc["recompute"] == "selective":
            doc["recompute"] = "selective-op"
        dump(path, doc)
        r["assumptions"] = [TT_SAC if a == "'selective op' AC mapped to recompute=selective" else a
                            for a in r["assumptions"]]
        if TT_ATTENTION not in r["assumptions"]:
            r["assumptions"].append(TT_ATTENTION)
# Revised from the first batch: GPT-3 175B's recompute (GPT175_RECOMPUTE).
for r in kept:
    if r["id"] == "nemo2407-gpt3-175b-128":
        doc = load(r["plan"])
        doc["recompute"] = "none"
        dump(r["plan"], doc)
        r["assumptions"] = [GPT175_RECOMPUTE if a == GPT175_RECOMPUTE_OLD else a
                            for a in r["assumptions"]]
# Revised from the first batch: every run's rank order, as plan() writes it
# (NeMo through Megatron-Core, torchtitan's device mesh).
for r in kept:
    doc = load(r["plan"])
    doc["rank_order"] = ["tp", "cp", "dp", "pp"]
    dump(r["plan"], doc)
assert len(kept) == len(FIRST_BATCH), "runs.json lost a first-batch run"
index["runs"] = kept + runs

# TP communication overlap where the run's own launch configuration
# (tests/data/frameworks/) turns it on: NeMo ub_tp_comm_overlap, Megatron
# --tp-comm-overlap, torchtitan enable_async_tensor_parallel (AsyncTP).
import re
FRAMEWORKS = os.path.join(HERE, "..", "..", "data", "frameworks")
TP_OVERLAP = [("nemo", ".yaml", re.compile(r"^\s*ub_tp_comm_overlap:\s*true", re.M),
               "ub_tp_comm_overlap: true"),
              ("megatron", ".sh", re.compile(r"--tp-comm-overlap\b"), "--tp-comm-overlap"),
              ("torchtitan", ".toml", re.compile(r"^\s*enable_async_tensor_parallel\s*=\s*true",
                                                 re.M), "enable_async_tensor_parallel = true")]
STALE = [r";? ?TP comm overlap \(ub_tp_comm_overlap\) is not expressible",
         r";? ?--tp-comm-overlap is not expressible", r";? ?TP comm overlap is not expressible",
         r"TP comm overlap and "]
for r in index["runs"]:
    for folder, ext, pattern, flag in TP_OVERLAP:
        path = os.path.join(FRAMEWORKS, folder, r["id"] + ext)
        if not os.path.exists(path) or not pattern.search(open(path).read()):
            continue
        doc = load(r["plan"])
        doc["tp_comm_overlap"] = True
        dump(r["plan"], doc)
        kept_assumptions = []
        for a in r["assumptions"]:
            if a == "AsyncTP (TP comm overlap) is not expressible":
                continue
            for stale in STALE:
                a = re.sub(stale, "", a)
            if a.startswith("CP's overlap"):
                a = a.replace("are not expressible", "is not expressible")
            kept_assumptions.append(a)
        note = ("tp_comm_overlap true: the run's launch configuration (tests/data/frameworks/%s/"
                "%s%s) sets %s" % (folder, r["id"], ext, flag))
        r["assumptions"] = [a for a in kept_assumptions if a != note] + [note]

# Elementwise kernels from the torchtitan launch configurations: compile on
# (Inductor fuses the elementwise ops but for the complex-form rotary
# embedding) or off (PyTorch eager, one kernel per op).
COMPILE = re.compile(r"^\s*(?:compile|enable)\s*=\s*(true|false)", re.M)
NO_COMPILE = "torch.compile is not expressible (the model has no notion of kernel fusion by the compiler)"
for r in index["runs"]:
    path = os.path.join(FRAMEWORKS, "torchtitan", r["id"] + ".toml")
    if not os.path.exists(path):
        continue
    m = COMPILE.search(open(path).read())
    compiled = bool(m) and m.group(1) == "true"
    doc = load(r["plan"])
    doc["elementwise"] = "compiled" if compiled else "eager"
    dump(r["plan"], doc)
    note = ("elementwise %s: the run's launch configuration (tests/data/frameworks/torchtitan/%s.toml) "
            "sets compile = %s" % ("compiled" if compiled else "eager", r["id"],
                                   "true" if compiled else "false"))
    if compiled:
        note += (" (Inductor fuses the norms, residuals and activation; torchtitan's "
                 "apply_rotary_emb works on complex tensors, which Inductor has no code generation "
                 "for, so it stays eager: torchtitan issue #15)")
    set_note(r, "elementwise", note, also_drop=(NO_COMPILE,))

# The loss kernels from the launch configurations: a Megatron script's
# --cross-entropy-loss-fusion (with --cross-entropy-fusion-impl te:
# Transformer Engine's Triton kernels; native: Megatron-Core's fused
# version), NeMo's cross_entropy_loss_fusion, torchtitan's eager
# F.cross_entropy on the fp32 logits; otherwise Megatron-Core's unfused
# VocabParallelCrossEntropy, the documents' default.
for r in index["runs"]:
    doc = load(r["plan"])
    doc.pop("cross_entropy", None)
    note = None
    megatron = os.path.join(FRAMEWORKS, "megatron", r["id"] + ".sh")
    nemo = os.path.join(FRAMEWORKS, "nemo", r["id"] + ".yaml")
    titan = os.path.join(FRAMEWORKS, "torchtitan", r["id"] + ".toml")
    if os.path.exists(megatron) and "--cross-entropy-loss-fusion" in open(megatron).read():
        te = "--cross-entropy-fusion-impl te" in open(megatron).read()
        doc["cross_entropy"] = "te" if te else "megatron-fused"
        note = ("cross_entropy %s: the run's launch configuration (tests/data/frameworks/megatron/"
                "%s.sh) sets --cross-entropy-loss-fusion%s" %
                (doc["cross_entropy"], r["id"], " --cross-entropy-fusion-impl te" if te else ""))
    elif os.path.exists(nemo) and re.search(r"^\s*cross_entropy_loss_fusion:\s*true", open(nemo).read(),
                                            re.M):
        doc["cross_entropy"] = "megatron-fused"
        note = ("cross_entropy megatron-fused: the run's launch configuration (tests/data/frameworks/"
                "nemo/%s.yaml) sets cross_entropy_loss_fusion: true" % r["id"])
    elif os.path.exists(titan) and "local_batch_size" in open(titan).read():
        doc["cross_entropy"] = "pytorch"
        compiled = COMPILE.search(open(titan).read())
        note = ("cross_entropy pytorch: torchtitan's cross_entropy_loss (components/loss.py) is "
                "F.cross_entropy(pred.flatten(0, 1).float(), ...)" +
                (", which build_cross_entropy_loss compiles with training.compile: a compiled "
                 "loss is not expressible and is charged as eager (docs/COST_MODEL.md, 'Logits "
                 "and loss')" if compiled and compiled.group(1) == "true" else ", eager"))
    elif os.path.exists(titan):
        doc["cross_entropy"] = "pytorch"
        note = ("cross_entropy pytorch: torchtitan 9dec370's train.py loss_fn is "
                "F.cross_entropy(pred.flatten(0, 1).float(), ...), eager (compiling it is "
                "commented out there)")
    dump(r["plan"], doc)
    set_note(r, "cross_entropy", note)

# The MoE dispatcher from the Megatron scripts: --moe-token-dispatcher-type
# flex (DeepEP, or HybridEP with --moe-flex-dispatcher-backend hybridep)
# sends one copy per destination host; HybridEP also all-gathers the
# routing maps.
for r in index["runs"]:
    megatron = os.path.join(FRAMEWORKS, "megatron", r["id"] + ".sh")
    doc = load(r["plan"])
    doc.pop("ep_dispatcher", None)
    script = open(megatron).read() if os.path.exists(megatron) else ""
    doc.pop("ep_dispatcher_sms", None)
    if "--moe-token-dispatcher-type flex" in script:
        hybrid = "--moe-flex-dispatcher-backend hybridep" in script
        doc["ep_dispatcher"] = "hybridep" if hybrid else "flex"
        # The SMs its kernels hold: the unified knob, else the backend's own.
        own = "--moe-hybridep-num-sms" if hybrid else "--moe-deepep-num-sms"
        for flag in ("--moe-flex-dispatcher-num-sms", own):
            m = re.search(re.escape(flag) + r"\s+(\d+)", script)
            if m:
                doc["ep_dispatcher_sms"] = int(m.group(1))
                break
    dump(r["plan"], doc)

# FP8 scaling recipe and FP8 linear layers from the launch configurations:
# NeMo 24.07 (Transformer Engine DelayedScaling, its only recipe; the YAML
# sets fp8_amax_history_len / fp8_amax_compute_algo), Megatron-Bridge
# (--fp8-recipe tensorwise: TE Float8CurrentScaling, "FP8-CS"), torchtitan
# (torchao Float8Linear, tensorwise dynamic scaling: current; saves BF16
# inputs and keeps no FP8 weight copies).
AMAX = re.compile(r"^\s*fp8_amax_history_len:\s*(\d+)\s*\n\s*fp8_amax_compute_algo:\s*(\w+)",
                  re.M)
for r in index["runs"]:
    if load(r["model"]).get("dtype") != "fp8":
        continue
    doc = load(r["plan"])
    doc.pop("fp8_recipe", None)
    doc.pop("fp8_linear", None)
    nemo = os.path.join(FRAMEWORKS, "nemo", r["id"] + ".yaml")
    megatron = os.path.join(FRAMEWORKS, "megatron", r["id"] + ".sh")
    titan = os.path.join(FRAMEWORKS, "torchtitan", r["id"] + ".toml")
    if os.path.exists(nemo):
        m = AMAX.search(open(nemo).read())
        assert m, nemo + " has no amax history"
        doc["fp8_recipe"] = "delayed"
        note = ("fp8_recipe delayed: the run's launch configuration (tests/data/frameworks/nemo/"
                "%s.yaml) sets fp8_amax_history_len %s, fp8_amax_compute_algo %s (Transformer "
                "Engine DelayedScaling, NeMo 24.07's only recipe); Transformer Engine's FP8 "
                "layers (saved FP8 inputs, FP8 weight copies)" % (r["id"], m.group(1), m.group(2)))
    elif os.path.exists(megatron) and "--fp8-recipe tensorwise" in open(megatron).read():
        note = ("fp8_recipe current: the run's launch configuration (tests/data/frameworks/"
                "megatron/%s.sh) sets --fp8-recipe tensorwise (Transformer Engine "
                "Float8CurrentScaling); Transformer Engine's FP8 layers (saved FP8 inputs, FP8 "
                "weight copies)" % r["id"])
    elif os.path.exists(titan):
        doc["fp8_linear"] = "torchao"
        note = ("fp8_recipe current, fp8_linear torchao: torchtitan's float8 converter is "
                "torchao's Float8Linear with tensorwise dynamic scaling (BF16 inputs saved, no FP8 "
                "weight copies)")
    else:
        raise SystemExit("no launch configuration states the FP8 recipe of " + r["id"])
    dump(r["plan"], doc)
    set_note(r, "fp8_recipe", note)

# Transformer Engine's attention backend from the launch configurations'
# environment (TE DotProductAttention reads NVTE_FLASH_ATTN / NVTE_FUSED_ATTN,
# both on by default): NeMo's launcher passes conf/config.yaml env_vars, a
# Megatron script exports them. NVTE_FUSED_ATTN=0 leaves flash-attn
# (FlashAttention-2 in the TE 1.x containers), NVTE_FLASH_ATTN=0 cuDNN.
NVTE = re.compile(r"^\s*(?:export\s+)?(NVTE_FUSED_ATTN|NVTE_FLASH_ATTN)\s*[:=]\s*(\d)", re.M)
for r in index["runs"]:
    for folder, ext in (("nemo", ".yaml"), ("megatron", ".sh")):
        path = os.path.join(FRAMEWORKS, folder, r["id"] + ext)
        if not os.path.exists(path):
            continue
        env = dict(NVTE.findall(open(path).read()))
        if not env:
            continue
        doc = load(r["plan"])
        doc.pop("attention_kernel", None)
        fused, flash = env.get("NVTE_FUSED_ATTN", "1") != "0", env.get("NVTE_FLASH_ATTN", "1") != "0"
        if flash and not fused:
            doc["attention_kernel"] = "flash2"
        elif fused and not flash:
            doc["attention_kernel"] = "cudnn"
        dump(r["plan"], doc)
        kernel = doc.get("attention_kernel", "auto")
        note = ("attention_kernel %s: the run's launch configuration (tests/data/frameworks/%s/%s%s) "
                "sets %s" % (kernel, folder, r["id"], ext,
                             ", ".join("%s=%s" % kv for kv in sorted(env.items()))))
        if kernel == "flash2":
            note += (" (Transformer Engine then runs flash-attn, FlashAttention-2, instead of "
                     "cuDNN's fused attention)")
        elif kernel == "auto":
            note += " (Transformer Engine prefers cuDNN's fused attention on Hopper)"
        set_note(r, "attention_kernel", note)

# Pipeline P2P blocking or beside compute (plan p2p_overlap), as the run's
# launch configuration (tests/data/frameworks/) runs it; without a pipeline
# there is no P2P and the key stays out. Megatron-LM overlaps only its
# interleaved schedule, by default (--no-overlap-p2p-communication off, since
# core_v0.4.0); its 1F1B waits on every send (p2p_communication.py
# _communicate, wait_on_reqs). NeMo passes model.overlap_p2p_comm to
# Megatron-Core (default False). torchtitan's Schedule1F1B waits for each
# steady-state send with the next receive; its other schedules do not.
MEGATRON_1F1B = ("p2p_overlap false: the run's launch configuration (tests/data/frameworks/"
                 "megatron/%s.sh) has no virtual stages, and Megatron's 1F1B blocks on its P2P "
                 "(send_forward_recv_backward / send_backward_recv_forward wait on their requests; "
                 "validate_args turns overlap_p2p_comm off)")
TITAN_1F1B = ("p2p_overlap false: the run's launch configuration (tests/data/frameworks/torchtitan/"
              "%s.toml) runs pipeline_parallel_schedule 1F1B, whose steady state waits for each "
              "send together with the next receive (torch.distributed.pipelining Schedule1F1B)")
NEMO_BLOCKING = ("p2p_overlap false: the run's launch configuration (tests/data/frameworks/nemo/"
                 "%s.yaml) leaves overlap_p2p_comm off (Megatron-Core's default)")
SEARCH_OVERLAP = ("interleaving chosen by the search runs with overlapped P2P "
                  "(interleaved_p2p_overlap): Megatron-LM's default for its interleaved schedule "
                  "since core_v0.4.0 (--no-overlap-p2p-communication absent)")
SEARCH_BLOCKING = ("interleaving chosen by the search keeps blocking P2P: the Megatron-LM of 2022 had "
                   "no P2P overlap (--overlap-p2p-communication came in 2023-05)")
NEMO_OVERLAP = re.compile(r"^\s*overlap_p2p_comm:\s*true", re.M)
DEEPSPEED_PIPE = ("p2p_overlap false: DeepSpeed's pipeline engine sends and receives "
                  "synchronously (deepspeed/runtime/pipe/p2p.py: send and recv assert "
                  "async_op == False)")
for r in index["runs"]:
    doc = load(r["plan"])
    doc.pop("p2p_overlap", None)
    pp = doc["parallelism"]["pp"]
    kind = doc["schedule"]["kind"]
    note = None
    megatron = os.path.join(FRAMEWORKS, "megatron", r["id"] + ".sh")
    nemo = os.path.join(FRAMEWORKS, "nemo", r["id"] + ".yaml")
    titan = os.path.join(FRAMEWORKS, "torchtitan", r["id"] + ".toml")
    if pp > 1 and os.path.exists(megatron):
        assert "--no-overlap-p2p-communication" not in open(megatron).read(), megatron
        if kind != "interleaved":
            note = MEGATRON_1F1B % r["id"]
    elif pp > 1 and os.path.exists(nemo):
        if not (kind == "interleaved" and NEMO_OVERLAP.search(open(nemo).read())):
            note = NEMO_BLOCKING % r["id"]
    elif pp > 1 and os.path.exists(titan):
        if kind == "1f1b":
            note = TITAN_1F1B % r["id"]
    elif pp > 1 and r["family"] == "mtnlg-2022":
        note = DEEPSPEED_PIPE
    if note:
        doc["p2p_overlap"] = False
    dump(r["plan"], doc)
    kept_assumptions = [a for a in r["assumptions"] if not a.startswith("p2p_overlap ")
                        and not a.startswith("interleaving chosen by the search ")]
    r.pop("interleaved_p2p_overlap", None)
    if note:
        kept_assumptions.append(note)
    if note and "virtual_stages" in r.get("search", []):
        # The search may pick interleaving, which Megatron-Core 0.8 overlaps
        # by default; 2022's Megatron-LM could not.
        if r["family"] == "megatron-core-0.8":
            r["interleaved_p2p_overlap"] = True
            kept_assumptions.append(SEARCH_OVERLAP)
        else:
            kept_assumptions.append(SEARCH_BLOCKING)
    r.pop("assumptions")  # re-added last, after interleaved_p2p_overlap
    r["assumptions"] = kept_assumptions

# The MoE all-to-all beside another microbatch's compute (plan ep_overlap)
# where the launch configuration turns Megatron-Core's
# --overlap-moe-expert-parallel-comm on.
for r in index["runs"]:
    path = os.path.join(FRAMEWORKS, "megatron", r["id"] + ".sh")
    doc = load(r["plan"])
    doc.pop("ep_overlap", None)
    if os.path.exists(path) and "--overlap-moe-expert-parallel-comm" in open(path).read():
        doc["ep_overlap"] = True
        note = ("ep_overlap true: the run's launch configuration (tests/data/frameworks/megatron/"
                "%s.sh) sets --overlap-moe-expert-parallel-comm (Megatron-Core combined 1F1B)"
                % r["id"])
        set_note(r, "ep_overlap", note)
    dump(r["plan"], doc)

# Sequence parallelism's second all-gather: torchtitan's TP is DTensor's
# ColwiseParallel, whose autograd keeps the gathered QKV / FC1 inputs (no
# re-gather in the backward); Megatron-Core and Transformer Engine keep the
# shard and gather it again (the format's default).
for r in index["runs"]:
    doc = load(r["plan"])
    doc.pop("sequence_parallel_regather", None)
    note = None
    if os.path.exists(os.path.join(FRAMEWORKS, "torchtitan", r["id"] + ".toml")):
        doc["sequence_parallel_regather"] = False
        note = ("sequence_parallel_regather false: torchtitan's TP (DTensor SequenceParallel + "
                "ColwiseParallel) keeps the gathered inputs for wgrad instead of gathering them "
                "again in the backward" + ("" if doc["parallelism"]["tp"] > 1 else
                                            " (no TP here: nothing changes)"))
    set_note(r, "sequence_parallel_regather", note)
    dump(r["plan"], doc)

# Dropout (plan hidden_dropout, attention_dropout) as the run's launch
# configuration sets it: Megatron-LM's arguments and NeMo's model keys
# default to 0.1 each (arguments.py; NeMo megatron_gpt_model.py
# cfg.get(..., 0.1)); torchtitan's models have none. Runs without a launch
# configuration: DeepSpeed's Megatron (MT-NLG) takes Megatron's arguments,
# Meta's Llama 3 has no dropout.
DROPOUT_FLAG = re.compile(r"--(hidden|attention)-dropout\s+([0-9.eE+-]+)")
DROPOUT_KEY = re.compile(r"^\s*(hidden|attention)_dropout:\s*([0-9.eE+-]+)", re.M)
for r in index["runs"]:
    doc = load(r["plan"])
    for k in ("hidden_dropout", "attention_dropout"):
        doc.pop(k, None)
    megatron = os.path.join(FRAMEWORKS, "megatron", r["id"] + ".sh")
    nemo = os.path.join(FRAMEWORKS, "nemo", r["id"] + ".yaml")
    given, source = {}, None
    if os.path.exists(megatron):
        given = {k: float(v) for k, v in DROPOUT_FLAG.findall(open(megatron).read())}
        source = "tests/data/frameworks/megatron/%s.sh" % r["id"]
        what = "--hidden-dropout / --attention-dropout"
    elif os.path.exists(nemo):
        given = {k: float(v) for k, v in DROPOUT_KEY.findall(open(nemo).read())}
        source = "tests/data/frameworks/nemo/%s.yaml" % r["id"]
        what = "model.hidden_dropout / model.attention_dropout"
    if source:
        hidden, attention = given.get("hidden", 0.1), given.get("attention", 0.1)
        note = ("dropout %g / %g (hidden / attention): the run's launch configuration (%s) %s" %
                (hidden, attention, source,
                 "sets " + what if given else
                 "sets no dropout, and the framework's default is 0.1 each"))
    elif r["family"] == "mtnlg-2022":
        hidden = attention = 0.1
        note = ("dropout 0.1 / 0.1 (hidden / attention): not stated; DeepSpeed's Megatron takes "
                "Megatron-LM's arguments, whose defaults these are")
    else:
        hidden = attention = 0.0
        note = None
    if hidden > 0:
        doc["hidden_dropout"] = hidden
    if attention > 0:
        doc["attention_dropout"] = attention
    set_note(r, "dropout", note if hidden > 0 or attention > 0 else None)
    dump(r["plan"], doc)

# Context parallelism's ring from the torchtitan launch configurations:
# PyTorch's context_parallel, whose rotate method is all-gather unless
# context_parallel_rotate_method says otherwise (torch/distributed/tensor/
# experimental/_attention.py _ContextParallelOptions); the Megatron runs keep
# Transformer Engine's ring, the documents' default.
OLD_CP = ("PyTorch's context_parallel ring as the model's CP ring: its all-gather rotation of K/V "
          "(torchtitan's default rotate method), fp32 merges and round-robin load balancing are "
          "not modelled apart")
ROTATE = re.compile(r'^\s*context_parallel_rotate_method\s*=\s*"(\w+)"', re.M)
for r in index["runs"]:
    titan = os.path.join(FRAMEWORKS, "torchtitan", r["id"] + ".toml")
    doc = load(r["plan"])
    doc.pop("cp_ring", None)
    note = None
    if os.path.exists(titan):
        m = ROTATE.search(open(titan).read())
        method = m.group(1) if m else "allgather"
        doc["cp_ring"] = "torch-" + method
    if os.path.exists(titan) and doc["parallelism"]["cp"] > 1:
        note = ("cp_ring torch-%s: torchtitan runs CP through PyTorch's context_parallel "
                "(torch.distributed.tensor.experimental); the run's launch configuration "
                "(tests/data/frameworks/torchtitan/%s.toml) %s; K and V cross the ring as "
                "torchtitan's block hands them to SDPA, repeated to the query heads (repeat_kv), "
                "each step's output is merged in fp32 by eager ops and the K/V gradients travel "
                "in fp32; round-robin load balancing (its default) matches the model's "
                "balanced chunk pairs" %
                (method, r["id"],
                 "sets context_parallel_rotate_method = \"%s\"" % method if m else
                 "sets no rotate method, and PyTorch's default is all-gather"))
    dump(r["plan"], doc)
    set_note(r, "cp_ring", note, also_drop=(OLD_CP,))

# Gradient accumulation outside the GEMMs (plan grad_accumulation_fusion
# false): torchtitan's FSDP2 adds each microbatch's gradients to its fp32
# accumulator (_fsdp_param.py accumulate_unsharded_grad_if_needed); DeepSpeed's
# engine keeps no Megatron main_grad for the wgrad GEMMs to accumulate into,
# so autograd adds them. Megatron-LM scripts keep Megatron's default (fused)
# unless they pass --no-gradient-accumulation-fusion; the NeMo files set it.
for r in index["runs"]:
    titan = os.path.join(FRAMEWORKS, "torchtitan", r["id"] + ".toml")
    megatron = os.path.join(FRAMEWORKS, "megatron", r["id"] + ".sh")
    doc = load(r["plan"])
    doc.pop("grad_accumulation_fusion", None)
    note = None
    if os.path.exists(titan):
        doc["grad_accumulation_fusion"] = False
        if doc["global_batch_sequences"] > doc["micro_batch_sequences"] * doc["parallelism"]["dp"]:
            note = ("grad_accumulation_fusion false: torchtitan's FSDP2 adds each microbatch's "
                    "gradients to its fp32 accumulated gradient (torch _fsdp_param.py "
                    "accumulate_unsharded_grad_if_needed) while it reduces once a step")
    elif os.path.exists(megatron) and "--no-gradient-accumulation-fusion" in open(megatron).read():
        doc["grad_accumulation_fusion"] = False
        note = ("grad_accumulation_fusion false: the run's launch configuration "
                "(tests/data/frameworks/megatron/%s.sh) sets --no-gradient-accumulation-fusion"
                % r["id"])
    elif r["family"] == "mtnlg-2022":
        doc["grad_accumulation_fusion"] = False
        note = ("grad_accumulation_fusion false: DeepSpeed's pipeline engine keeps no Megatron "
                "main_grad for the wgrad GEMMs to accumulate into (Megatron's fusion needs it), "
                "so autograd adds each microbatch's BF16 gradients to .grad")
    dump(r["plan"], doc)
    set_note(r, "grad_accumulation_fusion", note)

# The optimizer from the NeMo launch configurations: the NeMo 24.07 launcher
# (1a7171d7) runs Apex's DistributedFusedAdam (optim.name
# distributed_fused_adam), which NeMo sets up (megatron_base_model.py
# setup_optimization) with fp32 state unless optim.dtype says otherwise and,
# with BF16 weights (megatron_amp_O2), 16-bit remainders of the fp32 masters
# (store_param_remainders) or, with BF16 state, no masters; gradients in
# optim.grad_sync_dtype (fp32 when absent).
OPTIM_NAME = re.compile(r"^\s*name:\s*(distributed_fused_adam|mcore_distributed_optim)\s*$", re.M)
OPTIM_KEY = lambda key: re.compile(r"^\s*%s:\s*(\w+)\s*$" % key, re.M)
for r in index["runs"]:
    nemo = os.path.join(FRAMEWORKS, "nemo", r["id"] + ".yaml")
    doc = load(r["plan"])
    doc.pop("optimizer_moments", None)
    doc.pop("master_weights", None)
    notes = {}
    if os.path.exists(nemo):
        text = open(nemo).read()
        name = OPTIM_NAME.search(text)
        sync = OPTIM_KEY("grad_sync_dtype").search(text)
        state = OPTIM_KEY("dtype").search(text)
        where = "the run's launch configuration (tests/data/frameworks/nemo/%s.yaml)" % r["id"]
        if sync and sync.group(1) == "bf16":
            doc["grad_reduce_bytes"] = 2
            notes["grad_reduce_bytes"] = (
                "grad_reduce_bytes 2: %s sets optim.grad_sync_dtype bf16 (the NeMo 24.07 "
                "launcher's H100 example scripts pass +training.model.optim.grad_sync_dtype=bf16; "
                "nemotron_340b.yaml sets it); encoded with fp32 gradients before" % where)
        if name and name.group(1) == "distributed_fused_adam":
            bf16State = bool(state and state.group(1) == "bf16")
            if bf16State:
                doc["optimizer_moments"] = "bf16"
                doc["master_weights"] = "none"
            else:
                doc["master_weights"] = "16bit"
            notes["master_weights"] = (
                "master_weights %s%s: %s runs optim.name distributed_fused_adam (Apex's "
                "DistributedFusedAdam, the NeMo launcher's optimizer until 2024-12-05; NeMo's "
                "setup_optimization keeps %s)" %
                (doc["master_weights"], ", optimizer_moments bf16" if bf16State else "", where,
                 "no masters with optim.dtype bf16" if bf16State else
                 "16-bit remainders of the fp32 masters, store_param_remainders"))
    dump(r["plan"], doc)
    set_note(r, "grad_reduce_bytes", notes.get("grad_reduce_bytes"))
    set_note(r, "master_weights", notes.get("master_weights"))

# FSDP's implementation (plan fsdp_copies) for the ZeRO-3 runs: a Megatron
# script's --use-megatron-fsdp is Megatron-FSDP, whose parameters and
# gradients are views of its buffers; torchtitan's fully_shard is FSDP2,
# which copies each gather out and each microbatch's gradients in; others
# keep the documents' default (copies) and say so.
for r in index["runs"]:
    doc = load(r["plan"])
    doc.pop("fsdp_copies", None)
    note = None
    if doc.get("zero_stage") == 3:
        megatron = os.path.join(FRAMEWORKS, "megatron", r["id"] + ".sh")
        titan = os.path.join(FRAMEWORKS, "torchtitan", r["id"] + ".toml")
        if os.path.exists(megatron) and "--use-megatron-fsdp" in open(megatron).read():
            doc["fsdp_copies"] = False
            note = ("fsdp_copies false: the run's launch configuration (tests/data/frameworks/"
                    "megatron/%s.sh) sets --use-megatron-fsdp, whose parameters and gradients are "
                    "sliced views of its communication buffers (Megatron-LM docs/user-guide/"
                    "features/megatron_fsdp.md)" % r["id"])
        elif os.path.exists(titan):
            note = ("fsdp_copies true: torchtitan's fully_shard is FSDP2, which copies each "
                    "all-gather's output to the parameters and each microbatch's gradients into "
                    "the reduce-scatter's input on the compute stream (torch/distributed/fsdp/"
                    "_fully_shard/_fsdp_collectives.py)")
        else:
            note = ("fsdp_copies true (the documents' default): the FSDP implementation is not "
                    "stated")
    dump(r["plan"], doc)
    set_note(r, "fsdp_copies", note)

# The optimizer's kernels (plan optimizer_implementation) for the torchtitan
# runs: at 9dec370 (Dec 2024) build_optimizers passes fused =
# optimizer.fused (false unless set) and foreach = not fused; the launch
# configurations set no optimizer.fused, so PyTorch's foreach AdamW stepped
# them. torchtitan made fused the default on 2025-02-24 (6e4988550, which
# measured fused 2.24% faster than foreach on Llama 3 8B FSDP eager and
# 1.63% compiled). The Megatron and NeMo runs step with a fused Adam (the
# documents' default).
for r in index["runs"]:
    doc = load(r["plan"])
    doc.pop("optimizer_implementation", None)
    note = None
    titan = os.path.join(FRAMEWORKS, "torchtitan", r["id"] + ".toml")
    if os.path.exists(titan):
        text = open(titan).read()
        fused = re.search(r"^\s*fused\s*=\s*true", text, re.M)
        if "local_batch_size" in text and "implementation" not in text:
            note = ("optimizer_implementation fused: the run's launch configuration "
                    "(tests/data/frameworks/torchtitan/%s.toml) sets no optimizer.implementation, "
                    "whose default is fused since torchtitan 6e4988550 (2025-02-24)" % r["id"])
        elif not fused:
            doc["optimizer_implementation"] = "foreach"
            note = ("optimizer_implementation foreach: the run's launch configuration "
                    "(tests/data/frameworks/torchtitan/%s.toml) sets no optimizer.fused, and "
                    "torchtitan 9dec370's build_optimizers passes fused = false, foreach = true "
                    "(PyTorch's multi-tensor AdamW; fused became the default on 2025-02-24, "
                    "6e4988550, measured 1.6-2.2%% faster on Llama 3 8B)" % r["id"])
    dump(r["plan"], doc)
    set_note(r, "optimizer_implementation", note)

# ------------- IBM and Meta's PyTorch FSDP runs (fms-fsdp, Llama 2 34B and 70B, A100 and H100)
# The PyTorch blog "Maximizing training throughput using PyTorch FSDP" (Team
# PyTorch at IBM and at Meta, 2024-03-13; pytorch/pytorch.github.io
# _posts/2024-03-13-maximizing-training.md), Table 1: tokens/s/GPU of Llama 2
# models trained by foundation-model-stack/fms-fsdp with PyTorch FSDP on 128
# A100 80GB (400 Gb/s inter-node) and 96 H100 80GB (800 Gb/s inter-node),
# batch 2 per GPU at 4k tokens. Appended after the passes above: none of
# those runs has a launch configuration under tests/data/frameworks, and
# every key the passes derive is set here from fms-fsdp's own code.
FMS = ("PyTorch blog 'Maximizing training throughput using PyTorch FSDP' (IBM and Meta, 2024-03-13, "
       "pytorch/pytorch.github.io _posts/2024-03-13-maximizing-training.md), Table 1")
derived_cluster("selene-a100.json", "fms-a100-128", (
    "The A100 cluster of the fms-fsdp runs (PyTorch blog, 2024-03-13): 128 A100 80GB, 8 per node on "
    "NVLink3 (300 GB/s per GPU each way), '400Gbps network connectivity and GPU direct RDMA' per "
    "node (50 Gb/s per GPU), non-blocking."),
    {"name": "B1", "gpus": 128, "scale_out_gbps": 50, "zone_gpus": 128})
derived_cluster("dgx-h100.json", "fms-h100-96", (
    "The H100 cluster of the fms-fsdp runs (PyTorch blog, 2024-03-13): 96 H100 SXM 80GB, 8 per "
    "node on NVLink4 (450 GB/s per GPU each way), '800Gbps inter-node interconnect' per node "
    "(100 Gb/s per GPU), non-blocking."),
    {"gpus": 96, "scale_out_gbps": 100})
FMS_MODELS = {
    "7b": model("llama2-7b-bf16", "Llama 2 7B as fms-fsdp builds it (get_model_config llama2_7b: "
                "32 x 4096, 32 heads, ffn 11008, vocab 32000), BF16", 32, 4096, 11008, 32, 32,
                32000, "swiglu", "bf16", False),
    "13b": model("llama2-13b-bf16", "Llama 2 13B as fms-fsdp builds it (get_model_config "
                 "llama2_13b: 40 x 5120, 40 heads, ffn 13824, vocab 32000), BF16", 40, 5120, 13824,
                 40, 40, 32000, "swiglu", "bf16", False),
    "34b": model("llama2-34b-bf16", "Llama 2 34B as fms-fsdp builds it (get_model_config "
                 "llama2_34b: 48 x 8192, 64 heads, 8 KV heads, ffn 22016, vocab 32000), BF16",
                 48, 8192, 22016, 64, 8, 32000, "swiglu", "bf16", False),
    "70b": model("llama2-70b-bf16", "Llama 2 70B as fms-fsdp builds it (get_model_config "
                 "llama2_70b: 80 x 8192, 64 heads, 8 KV heads, ffn 28672, vocab 32000), BF16",
                 80, 8192, 28672, 64, 8, 32000, "swiglu", "bf16", False),
}
FMS_ASSUME = [
    "per node, not per GPU, for the blog's 400 and 800 Gb/s ('400Gbps network connectivity and GPU "
    "direct RDMA' for the cluster; H100s 'only' reach 0.32-0.37 MFU, with 'a 10% gap due to "
    "network peeking out', which a 3.2 Tb/s node would not show)",
    "zero_stage 3, fsdp_reshard_after_forward default: FSDP1 (fms_fsdp/utils/train_utils.py "
    "get_policies), one FSDP unit per LLaMABlock (get_wrapper), limit_all_gathers; 34B and 70B "
    "FULL_SHARD over every GPU (sharding_strategy fsdp), 7B and 13B HYBRID_SHARD (hsdp: "
    "'HSDP will only shard your model across devices within the same node', docs/"
    "configurations.md, which names hsdp for 7b and 13b and fsdp for 34b and 70b, as the "
    "README's table does): dp_shard 8",
    "fsdp_copies false: FSDP1 (torch.distributed.fsdp.FullyShardedDataParallel, use_orig_params "
    "false without compile) keeps each unit's parameters as views of its FlatParameter",
    "grad_reduce_bytes 2: the bfSixteen policy reduces in bf16 (fms_fsdp/policies/"
    "mixed_precision.py, param_dtype and reduce_dtype bfloat16)",
    "recompute: Table 1's 'No' (7B) none; 'Yes' (34B, 70B) full, every block: fms-fsdp's "
    "apply_fsdp_checkpointing with selective_checkpointing 1 (docs/configurations.md), as MFU / "
    "HFU (0.47 / 0.64, 0.50 / 0.67 on A100) say: 4/3 of the model FLOPs; 'Selective' (13B) "
    "checkpoints a fraction p of the blocks evenly spaced (policies/ac_handler.py), p not "
    "stated: its MFU / HFU (0.51 / 0.59 on A100, 0.35 / 0.40 on H100) put 1 + p/3 at 1.16 and "
    "1.14, so p = 1/2, encoded as recompute full, method block, 20 of the 40 layers (the same "
    "layers re-run; the model does not place them)",
    "no gradient accumulation: batch 2 per GPU is one micro batch (1M tokens a step on 128 GPUs, "
    "as the blog says)",
    "attention_kernel flash2: 'SDPA FlashAttention v2' (PyTorch nightlies after 2.2)",
    "elementwise eager: use_torch_compile false; the model's eager op list is torchtitan's Llama "
    "block, where FMS's LLaMABlock fuses QKV and w1 / wg into one GEMM each (fused_weights) and "
    "differs in its norm and rotary ops",
    "cross_entropy pytorch: eager CrossEntropyLoss on the logits (bf16 in FMS, fp32 in the model's "
    "pytorch kernels; 32000 vocab entries, a small part of the step)",
    "optimizer_implementation foreach: torch.optim.AdamW without fused or foreach, which PyTorch "
    "runs as foreach on CUDA tensors",
]
for size, hw, cluster, gpus, tps in (("7b", "a100", "fms-a100-128.json", 128, 3700),
                                     ("13b", "a100", "fms-a100-128.json", 128, 1800),
                                     ("34b", "a100", "fms-a100-128.json", 128, 700),
                                     ("70b", "a100", "fms-a100-128.json", 128, 370),
                                     ("7b", "h100", "fms-h100-96.json", 96, 7500),
                                     ("13b", "h100", "fms-h100-96.json", 96, 3800),
                                     ("34b", "h100", "fms-h100-96.json", 96, 1550),
                                     ("70b", "h100", "fms-h100-96.json", 96, 800)):
    name = "fms-llama2-%s-%s-%d" % (size, hw, gpus)
    hsdp = size in ("7b", "13b")
    recompute = {"7b": "none", "13b": "full"}.get(size, "full")
    ac = {"7b": "no activation checkpointing", "13b": "every other block checkpointed"}.get(
        size, "activation checkpointing every block")
    p = plan(name, "fms-fsdp Llama 2 %s on %d %s: %s, batch 2 of 4096 per GPU, %s, BF16 eager" %
             (size.upper(), gpus, hw.upper(),
              "HSDP (sharded over the 8 GPUs of a node)" if hsdp else
              "FSDP (ZeRO-3) over %d" % gpus, ac), 4096, 2 * gpus, 2, 1, 1, 1, gpus, zero=3,
             recompute=recompute, grad_bytes=2, attention="flash2")
    if hsdp:
        p["dp_shard"] = 8
    if size == "13b":
        p["recompute_method"] = "block"
        p["recompute_layers"] = 20
    p.update({"elementwise": "eager", "cross_entropy": "pytorch", "fsdp_copies": False,
              "optimizer_implementation": "foreach"})
    dump("plans/" + name + ".json", p)
    entry = {
        "id": name, "family": "fms-fsdp-2024",
        "source": FMS + ", row %s: %d tokens/sec/GPU (%s 80GB)" % (size.upper(), tps, hw.upper()),
        "cluster": "clusters/" + cluster, "model": "models/" + FMS_MODELS[size]["name"] + ".json",
        "plan": "plans/" + name + ".json", "measured_metric": "tokens_per_s_per_gpu",
        "measured_value": tps, "measured_tokens_per_s_per_gpu": float(tps),
        "assumptions": FMS_ASSUME,
    }
    index["runs"].append(entry)

# ------------- Megatron-Bridge 25.09 (DGX-H100; FP8 current scaling; MoE token drop, DeepSeek-V3)
# The archive's '25.09 NeMo Container' DGX-H100 table. Its settings are those
# of Megatron-Bridge v0.1.0rc4 (2025-10-23), the last tag before v0.2.0 (the
# 25.11 release) whose docs/performance-summary.md carries that table:
# scripts/performance/run_script.py, utils/helpers.py and the perf_matrix
# YAMLs under scripts/performance/configs. Appended after the passes above:
# every key they derive is set here from those files.
MB25 = ("NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md, '25.09 NeMo Container', "
        "'System: DGX-H100' table (commit 067f987df; the same table is docs/performance-summary.md "
        "at v0.1.0rc4)")
MB25_CFG = "Megatron-Bridge v0.1.0rc4 scripts/performance: "
MB25_ASSUME = [
    "FP8 current scaling: the table names no precision, the H100 presets' FP8 entry is fp8_cs "
    "(utils/helpers.py get_precision_config: bf16_with_fp8_current_scaling_mixed with "
    "first_last_layers_bf16 off, fp8_param_gather True), the later archives' H100 rows say "
    "FP8-CS, and the Llama rows' model TFLOP/s exceed BF16's reach; dtype fp8, fp8_recipe current",
    "grad_reduce_bytes 2: the perf YAMLs set mixed_precision.grad_reduce_in_fp32 false",
    "distributed optimizer (ZeRO-1); rank order [tp, cp, dp, pp] (Megatron-Core's default); "
    "cross_entropy te (the YAMLs' cross_entropy_fusion_impl te); attention_kernel auto",
]


def bridge2509(name, desc, model_doc, tps, tflops, assumptions, base=None, **keys):
    """A 25.09 row: a plan from `keys` over the 25.11 row `base` (same
    presets where noted), or from scratch."""
    doc = load("plans/" + base + ".json") if base else {
        "format": "scaleacross.plan", "version": 1, "name": name, "description": desc,
        "zero_stage": 1, "recompute": "none",
        "sequence_parallel": True, "dp_overlap": True, "grad_reduce_bytes": 2,
        "flash_attention": True, "fp8_param_gather": True,
        "rank_order": ["tp", "cp", "dp", "pp"], "cross_entropy": "te"}
    doc.update({"name": name, "description": desc})
    doc.update(keys)
    dump("plans/" + name + ".json", doc)
    index["runs"].append({
        "id": name, "family": "megatron-bridge-25.09",
        "source": MB25 + ", row %s" % tps[0],
        "cluster": "clusters/dgx-h100.json", "model": "models/" + model_doc + ".json",
        "plan": "plans/" + name + ".json", "measured_metric": "tokens_per_s_per_gpu",
        "measured_value": tps[1], "measured_tokens_per_s_per_gpu": float(tps[1]),
        "published_tflops_per_gpu": tflops, "assumptions": MB25_ASSUME + assumptions})


bridge2509("mbridge2509-llama3-8b-fsdp8", "Megatron-Bridge 25.09: LLAMA3_8B 8 GPUs, FSDP8, MBS 1, "
           "GBS 128, seq 8192 (GA 16)", "llama3-8b-fp8",
           ("LLAMA3_8B: 14079 tokens/s/GPU, 725 model TFLOP/s/GPU", 14079), 725,
           [MB25_CFG + "configs/llama3/llama3_8b_llm_pretrain.yaml h100 num_gpus_8 fp8_cs "
            "(use_megatron_fsdp, cp 1): the 25.11 row's settings (mbridge2511-llama3-8b-fsdp8: "
            "ZeRO-3 over dp 8, fsdp_copies false for Megatron-FSDP's buffer views)"],
           base="mbridge2511-llama3-8b-fsdp8")
bridge2509("mbridge2509-llama3-70b-64", "Megatron-Bridge 25.09: LLAMA3_70B 64 GPUs, TP4 PP8 VP5 "
           "DP2, MBS 1, GBS 128, seq 8192 (GA 64)", "llama3-70b-fp8",
           ("LLAMA3_70B: 1619 tokens/s/GPU, 727 model TFLOP/s/GPU", 1619), 727,
           [MB25_CFG + "configs/llama3/llama3_70b_llm_pretrain.yaml h100 num_gpus_64 fp8_cs (TP4 "
            "PP8 VP5, GBS 128): the 25.11 row's settings (mbridge2511-llama3-70b-64, TP comm "
            "overlap on)"], base="mbridge2511-llama3-70b-64")
bridge2509("mbridge2509-llama31-405b-1024", "Megatron-Bridge 25.09: LLAMA3.1_405B 1024 GPUs, TP8 "
           "PP8 CP2 VP8 DP8, MBS 1, GBS 512, seq 8192 (GA 64)", "llama31-405b-fp8",
           ("LLAMA3.1_405B: 302 tokens/s/GPU, 763 model TFLOP/s/GPU", 302), 763,
           [MB25_CFG + "configs/llama31/llama31_405b_llm_pretrain.yaml h100 num_gpus_1024 (TP8 "
            "PP8 CP2 VP8, GBS 512): the 25.11 row's settings (mbridge2511-llama31-405b-1024: "
            "[15,16,...,16,15] layers per pipeline rank, TP comm overlap on)"],
           base="mbridge2511-llama31-405b-1024")

TOKENDROP = ("token drop: run_script.py applies training/utils/moe_token_drop.py "
             "apply_moe_token_drop to both Qwen3 recipes (capacity factor 1.0, "
             "moe_pad_expert_input_to_capacity True): moe capacity_factor 1, pad_to_capacity "
             "true. Padded to capacity, every expert runs exactly its capacity whatever the "
             "routing (not force-balanced here), the model's even load")
for size, src in (("30b-a3b", "qwen3-30b-a3b-fp8"), ("235b-a22b", "qwen3-235b-a22b-fp8")):
    m = load("models/" + src + ".json")
    m["name"] = src + "-tokendrop"
    m["description"] += "; token drop: capacity factor 1, each expert's input padded to it"
    m["moe"]["capacity_factor"] = 1.0
    m["moe"]["pad_to_capacity"] = True
    dump("models/" + m["name"] + ".json", m)
bridge2509("mbridge2509-qwen3-30b-a3b-16", "Megatron-Bridge 25.09: Qwen3_30B_a3B (token drop) 16 "
           "GPUs, TP1 PP2 VP24 EP8 DP8, MBS 2, GBS 512, seq 4096 (GA 32)",
           "qwen3-30b-a3b-fp8-tokendrop",
           ("Qwen3_30B_a3B (tokendrop): 10494 tokens/s/GPU, 241 model TFLOP/s/GPU", 10494), 241,
           [MB25_CFG + "configs/qwen3/qwen3_30b_a3b_llm_pretrain.yaml h100 num_gpus_16 (TP1 PP2 "
            "EP8, MBS 2 for fp8_cs, GBS 512; the YAML's vp 12 where the table's row says 24, "
            "encoded as the table says, as the 25.11 row is); the YAML resets the recipe's full "
            "recompute to none",
            TOKENDROP,
            "alltoall dispatcher (apply_moe_token_drop asserts it), no MoE all-to-all overlap "
            "(run_script.py sets none for Qwen3); the recipe's TP comm overlap is moot at TP 1"],
           sequence_length=4096, global_batch_sequences=512, micro_batch_sequences=2,
           parallelism={"tp": 1, "cp": 1, "pp": 2, "dp": 8, "ep": 8},
           schedule={"kind": "interleaved", "virtual_stages": 24})
bridge2509("mbridge2509-qwen3-235b-a22b-256", "Megatron-Bridge 25.09: Qwen3_235B_a22B (token drop) "
           "256 GPUs, TP2 PP8 VP4 DP16, EP32 with expert TP 1, MBS 1, GBS 2048, seq 4096 (GA 128)",
           "qwen3-235b-a22b-fp8-tokendrop",
           ("Qwen3_235B_a22B (tokendrop): 1204 tokens/s/GPU, 178 model TFLOP/s/GPU", 1204), 178,
           [MB25_CFG + "configs/qwen3/qwen3_235b_a22b_llm_pretrain.yaml h100 num_gpus_256 (TP2 PP8 "
            "VP4 EP32, expert TP 1, GBS 2048); the YAML resets recompute to none",
            TOKENDROP,
            "EP 32 with expert TP 1 (plan etp 1: each expert whole on one GPU, the EP group the "
            "stage's tp x dp = 32 GPUs), as the 26.04 row (mbridge2604-qwen3-235b-a22b-256) is",
            "94 layers over 32 virtual stages with the embedding and the loss counted as a layer "
            "each (the recipe's account_for_embedding/loss_in_pipeline_split): [11,12,...,12,11] "
            "layers per pipeline rank",
            "TP comm overlap on (run_script.py passes CommOverlapConfig(tp_comm_overlap=True)); "
            "alltoall dispatcher, no MoE all-to-all overlap"],
           sequence_length=4096, global_batch_sequences=2048, micro_batch_sequences=1,
           parallelism={"tp": 2, "cp": 1, "pp": 8, "dp": 16, "ep": 32, "etp": 1},
           schedule={"kind": "interleaved", "virtual_stages": 4},
           placement={"layers_per_stage": [11, 12, 12, 12, 12, 12, 12, 11]}, tp_comm_overlap=True)
model("deepseek-v3-fp8", "DeepSeek-V3 as Megatron-Bridge v0.1.0rc4 builds it (DeepSeekV3Provider: "
      "61 layers, hidden 7168, dense ffn 18432 in the first 3, 128 heads of MLA with q_lora_rank "
      "1536, kv_lora_rank 512, qk 128 + rope 64, v 128; 256 experts top-8 of width 2048 and one "
      "shared, node-limited routing over 8 groups, top 4; vocab 129280, untied; one MTP module); "
      "FP8 GEMMs", 61, 7168, 18432, 128, 128, 129280, "swiglu", "fp8", False,
      moe={"experts": 256, "top_k": 8, "expert_ffn_hidden": 2048, "shared_experts": 1,
           "dense_layers": 3, "router_groups": 8, "router_group_topk": 4})
ds = load("models/deepseek-v3-fp8.json")
ds.pop("kv_heads")
ds["mla"] = {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_head_dim": 128, "rope_head_dim": 64,
             "v_head_dim": 128}
ds["mtp_layers"] = 1
dump("models/deepseek-v3-fp8.json", ds)
bridge2509("mbridge2509-deepseek-v3-1024", "Megatron-Bridge 25.09: DeepSeekV3 (dropless) 1024 GPUs, "
           "TP2 PP8 VP4 DP64, EP64 with expert TP 1, MBS 1, GBS 8192, seq 4096 (GA 128)",
           "deepseek-v3-fp8",
           ("DeepSeekV3 (dropless): 1297 tokens/s/GPU, 338 model TFLOP/s/GPU", 1297), 338,
           [MB25_CFG + "run_script.py's deepseek branch on h100 over recipes/deepseek/deepseek_v3.py "
            "pretrain_config and configs/deepseek/deepseek_v3_llm_pretrain.yaml h100 num_gpus_1024 "
            "(TP2 PP8 VP4 EP64, expert TP 1, GBS 8192, CUDA graphs off)",
            "the table's 1297 tokens/s are its main column; its parenthesised TFLOP/s (330) are "
            "the DeepSeek-V3 blockwise FP8 recipe (the table's note)",
            "EP 64 with expert TP 1 (plan etp 1): each expert whole on one GPU, the EP group 64 of "
            "the stage's tp x dp = 128 GPUs (the cell's two TP ranks, then 32 replicas)",
            "pipeline layout 'Et|(tt|)*30mL' (run_script.py for h100): the embedding and one "
            "layer, thirty chunks of two layers, then the MTP module and the loss in a chunk of "
            "their own; over PP 8 x VP 4 that is [7,8,8,8,8,8,8,6] layers per pipeline rank, the "
            "MTP module and the loss on the last; the documents give layers per rank (the chunks "
            "inside a rank are even) and put the MTP module on the last rank's last chunk",
            "force-balanced routing (run_script.py with DeepEP) matches the model's even load; "
            "dropless",
            "flex dispatcher with DeepEP (the recipe's enable_deepep: moe_token_dispatcher_type "
            "flex, moe_enable_deepep): ep_dispatcher flex",
            "MoE all-to-all overlap (overlap_moe_expert_parallel_comm, combined 1F1B): ep_overlap "
            "true; its delay_wgrad_compute is not expressible; moe_shared_expert_overlap off",
            "selective recompute of mla_up_proj and mlp (run_script.py for h100); mlp touches the "
            "three dense layers only (Megatron-Core's MoE layers answer to moe)",
            "dp_overlap false: run_script.py sets overlap_grad_reduce False on h100 (the recipe's "
            "overlap_param_gather stays on, which the documents' single switch cannot say)",
            "optimizer_moments bf16: the recipe's precision-aware optimizer with exp_avg and "
            "exp_avg_sq in bf16, main params fp32",
            "no TP comm overlap (the recipe's CommOverlapConfig(tp_comm_overlap=False))",
            "rope_fusion true: run_script.py sets model.apply_rope_fusion True for every model, "
            "over the DeepSeek-V3 recipe's False (read as unfused before)"],
           sequence_length=4096, global_batch_sequences=8192, micro_batch_sequences=1,
           parallelism={"tp": 2, "cp": 1, "pp": 8, "dp": 64, "ep": 64, "etp": 1},
           schedule={"kind": "interleaved", "virtual_stages": 4},
           placement={"layers_per_stage": [7, 8, 8, 8, 8, 8, 8, 6]}, recompute="selective",
           recompute_modules=["mla_up_proj", "mlp"], dp_overlap=False, ep_dispatcher="flex",
           ep_overlap=True, optimizer_moments="bf16")

# ------------- Megatron-Bridge 26.04.01, GPT-OSS 120B (DGX-H100, BF16)
# Appended after the passes above, every key set here from Bridge v0.4.2
# (the 26.04.01 release, as the family's other rows).
oss = model("gpt-oss-120b-bf16", "GPT-OSS 120B as Megatron-Bridge v0.4.2 builds it from openai/gpt-oss-120b "
            "(models/gpt_oss/gpt_oss_bridge.py over the Hugging Face config: 36 layers, hidden 2880, 64 "
            "query heads of 64 (a 4096-wide q projection), 8 KV heads, 128 experts top-4 of width 2880 "
            "in every layer, vocab 201088, untied; window_size (127, 0) with window_attn_skip_freq 2: "
            "every other layer attends to 128 keys); BF16", 36, 2880, 2880, 64, 8, 201088, "swiglu",
            "bf16", False, moe={"experts": 128, "top_k": 4, "expert_ffn_hidden": 2880}, head_dim=64)
oss["sliding_window"] = {"size": 128, "full_every": 2}
dump("models/gpt-oss-120b-bf16.json", oss)
name = "mbridge2604-gpt-oss-120b-64"
p = {"format": "scaleacross.plan", "version": 1, "name": name,
     "description": "Megatron-Bridge 26.04.01: GPT OSS 120B 64 GPUs, TP1 PP4 EP8 DP16, MBS 1, GBS 1280, "
                    "seq 4096 (GA 80), BF16",
     "sequence_length": 4096, "global_batch_sequences": 1280, "micro_batch_sequences": 1,
     "parallelism": {"tp": 1, "cp": 1, "pp": 4, "dp": 16, "ep": 8}, "zero_stage": 1,
     "recompute": "selective", "recompute_modules": ["layernorm", "moe_act"],
     "sequence_parallel": False, "schedule": {"kind": "1f1b", "virtual_stages": 1},
     "dp_overlap": True, "grad_reduce_bytes": 2, "flash_attention": True,
     "rank_order": ["tp", "cp", "dp", "pp"], "cross_entropy": "te", "p2p_overlap": False}
dump("plans/" + name + ".json", p)
index["runs"].append({
    "id": name, "family": "megatron-bridge-26.04",
    "source": MB26 + ", Model GPT OSS 120B, row DGX-H100 BF16: 5824 tokens/s/GPU, 158 model "
                     "TFLOP/s/GPU (token-dropless, force-balanced routing)",
    "cluster": "clusters/dgx-h100.json", "model": "models/gpt-oss-120b-bf16.json",
    "plan": "plans/" + name + ".json", "measured_metric": "tokens_per_s_per_gpu",
    "measured_value": 5824, "measured_tokens_per_s_per_gpu": 5824.0,
    "published_tflops_per_gpu": 158,
    "assumptions": [
        MB26_CFG + "configs/gpt_oss/gpt_oss_workload_base_configs.py "
        "GPT_OSS_120B_PRETRAIN_CONFIG_H100_BF16_V2 (PP4, EP8, expert TP 1, GBS 1280, micro batch 1, "
        "selective recompute of layernorm and moe_act), gpt_oss_llm_pretrain.py "
        "gpt_oss_120b_pretrain_config_h100 and set_gpt_oss_common_configs over "
        "recipes/gpt_oss/gpt_oss.py gpt_oss_120b_pretrain_config",
        "the architecture from the GPT-OSS bridge over openai/gpt-oss-120b's config (36 layers, 128 "
        "experts top-4, head_dim 64, 8 KV heads, sliding_window 128 on every other layer)",
        "force-balanced routing (set_gpt_oss_common_configs) matches the model's even load; "
        "dropless; the recipe's alltoall dispatcher (no flex backend in the H100 preset), no MoE "
        "all-to-all overlap, CUDA graphs off (the recipe's cuda_graph_impl 'none')",
        "grad_reduce_bytes 2: set_gpt_oss_common_configs sets grad_reduce_in_fp32 False; "
        "distributed optimizer with overlapped grad reduce and param gather; fp32 optimizer state "
        "(no precision-aware optimizer)",
        "cross_entropy te (utils/overrides.py _set_common_perf_overrides); attention_kernel auto "
        "(Transformer Engine's cuDNN fused attention with the learnable softmax offset)",
        MEGATRON_1F1B % name,
        "not expressible: attention sinks (charged at the kernel's plain rate), GPT-OSS's clamped "
        "GLU activation with its linear offset (charged as SwiGLU), the linear layers' biases; "
        "head dim 64 takes cuDNN's head-dim-64 attention rates (docs/COST_MODEL.md)",
    ]})

# ------------- NeMo AutoModel (PyTorch backend), DGX-H100, BF16
# A source of its own: NVIDIA-NeMo/Automodel's docs/performance-summary
# (FSDP2, Transformer Engine kernels, DeepEP). Appended after the passes
# above, every key set here from the commit that published each row.
AM = ("NVIDIA-NeMo/Automodel docs/performance-summary.md (performance-summary.mdx since "
      "6255c40a7), 'Pre-Training Performance', 'System: DGX-H100, Precision: BF16'")
AM_COMMON = [
    "tokens/s per GPU as published (mock data, the step includes the optimizer); the table's "
    "model TFLOP/s count the same FLOPs a token as the model's (within 1%)",
    "rank order [tp, cp, dp, pp]: FSDP2's device mesh puts dp outermost of the three "
    "(dp_shard, cp, tp), pp 1",
]


def automodel(name, plan_keys, model_doc, commit_row, tps, tflops, assumptions):
    """One NeMo AutoModel row: its plan (the family's common keys, then
    `plan_keys`) and its entry."""
    doc = {"format": "scaleacross.plan", "version": 1, "name": name,
           "sequence_parallel": False, "schedule": {"kind": "1f1b", "virtual_stages": 1},
           "zero_stage": 3, "recompute": "full", "dp_overlap": True, "flash_attention": True,
           "rank_order": ["tp", "cp", "dp", "pp"], "grad_accumulation_fusion": False,
           "cross_entropy": "pytorch"}
    doc.update(plan_keys)
    dump("plans/" + name + ".json", doc)
    index["runs"].append({
        "id": name, "family": "nemo-automodel", "source": AM + " at " + commit_row,
        "cluster": "clusters/dgx-h100.json", "model": "models/" + model_doc + ".json",
        "plan": "plans/" + name + ".json", "measured_metric": "tokens_per_s_per_gpu",
        "measured_value": tps, "measured_tokens_per_s_per_gpu": float(tps),
        "published_tflops_per_gpu": tflops, "assumptions": AM_COMMON + assumptions})


am_qwen = load("models/qwen3-30b-a3b-bf16.json")
am_qwen["name"] = "qwen3-30b-a3b-bf16-contiguous-routing"
am_qwen["description"] = (
    "Qwen3-30B-A3B (48 layers, hidden 2048, 32 heads of 128, 4 KV heads, 128 experts top-8 of "
    "width 768, vocab 151936, untied; BF16) under NeMo AutoModel's FakeBalancedGate: token i "
    "routed to experts 8i to 8i + 7 (mod 128), which is group-limited routing over 16 groups of "
    "8 consecutive experts, one group a token")
am_qwen["moe"]["router_groups"] = 16
am_qwen["moe"]["router_group_topk"] = 1
dump("models/" + am_qwen["name"] + ".json", am_qwen)
automodel("automodel-qwen3-30b-a3b-8", {
    "description": "NeMo AutoModel: Qwen3 MoE 30B on 8 GPUs, EP8 inside one host, FSDP2 over 8, "
                   "local batch 4 (one micro batch), GBS 512, seq 4096 (GA 16), full activation "
                   "checkpointing, DeepEP, BF16",
    "sequence_length": 4096, "global_batch_sequences": 512, "micro_batch_sequences": 4,
    "parallelism": {"tp": 1, "cp": 1, "pp": 1, "dp": 8, "ep": 8}, "grad_reduce_bytes": 4,
    "ep_dispatcher": "flex", "optimizer_implementation": "foreach", "optimizer_moments": "bf16",
    "master_weights": "none", "rope_fusion": False},
    am_qwen["name"], "8d9bfb90e (2025-10-08), row Qwen3 MoE 30B: 8 GPUs, 21.773 s a step, "
    "12,040 tokens/s/GPU, 277 model TFLOP/s/GPU", 12040, 277, [
        "configuration: examples/benchmark/configs/qwen3_moe_30b_te_deepep.yaml at 8d9bfb90e (EP 8, "
        "FSDP2 over 8, local batch 4, GBS 512, seq 4096, activation_checkpointing true, backend "
        "attn/linear/rms_norm te, enable_deepep, fake_balanced_gate, torch.optim.Adam, "
        "MaskedCrossEntropy with fp32_upcast false)",
        "routing: FakeBalancedGate (components/moe/layers.py) gives token i the experts 8i to "
        "8i + 7 mod 128: with 16 experts a rank every token's 8 experts lie on one rank; encoded as "
        "the model's group-limited routing (16 groups of 8, one a token), which gives DeepEP one "
        "copy a token (get_dispatch_layout: one per rank touched)",
        "ep_dispatcher flex: DeepEP through AutoModel's MoEFlexTokenDispatcher, inside one NVLink "
        "domain; dropless, so the forward waits for the token counts (and GroupedExpertsDeepEP's "
        "torch.count_nonzero(tokens_per_expert) > 0 syncs too)",
        "recompute full: moe/parallelizer.py apply_ac wraps every block in checkpoint_wrapper",
        "zero_stage 3: apply_fsdp shards every block's non-expert parameters over the 8 ranks; "
        "the experts (EP 8 on 8 ranks) are FSDP's ignored_params, unsharded and unreduced; "
        "reduce_dtype float32 (grad_reduce_bytes 4); reshard_after_forward False there, taken "
        "as the documents' default (the non-expert parameters are 1.5B on NVLink: their "
        "all-gathers are under 1% of the step either way)",
        "the YAML's enable_fsdp_optimization (sic) did not reach BackendConfig's "
        "enable_fsdp_optimizations until a6d88dd39 (2025-10-17): gradients reduced every micro "
        "batch, FSDP2's default",
        "parameters in BF16 (Qwen3MoeForCausalLM casts the model to config.torch_dtype), "
        "torch.optim.Adam (foreach) keeps its moments in their dtype: optimizer_moments bf16, "
        "master_weights none",
        "elementwise fused: Transformer Engine's RMSNorm (also the q/k norms) and Megatron's fused "
        "weighted SwiGLU; rope_fusion false: the RoPE on Q and K runs in eager ops "
        "(gpt_oss/layers.py _apply_rotary_emb, the chunked form: 18 B an element in 7 kernels, "
        "charged as the rotate-half form's 20 B in 5)",
        "expert GEMMs: grouped_gemm's ops.gmm (one CUTLASS kernel per GEMM over the local experts), "
        "the documents' grouped expert GEMMs",
        "attention_kernel auto: Transformer Engine's DotProductAttention, cuDNN on Hopper",
        "cross_entropy pytorch: F.cross_entropy on the BF16 logits (the model's pytorch loss "
        "passes are over FP32 logits: a little slower)",
        "cluster: DGX H100 (one host used); the table names the system only",
    ])

am_llama = load("models/llama3-70b-fp8.json")
am_llama["name"] = "llama31-70b-bf16"
am_llama["description"] = "Llama 3.1 70B, BF16"
am_llama["dtype"] = "bf16"
dump("models/llama31-70b-bf16.json", am_llama)
automodel("automodel-llama31-70b-64", {
    "description": "NeMo AutoModel: Llama 3.1 70B on 64 GPUs, FSDP2 over dp 32 x cp 2, CP 2 "
                   "(PyTorch ring attention), local batch 1, GBS 128, seq 8192 (GA 4), full "
                   "activation checkpointing, per-layer torch.compile, BF16",
    "sequence_length": 8192, "global_batch_sequences": 128, "micro_batch_sequences": 1,
    "parallelism": {"tp": 1, "cp": 2, "pp": 1, "dp": 32, "ep": 1}, "grad_reduce_bytes": 2,
    "attention_kernel": "flash2", "cp_ring": "torch-allgather", "master_weights": "none"},
    "llama31-70b-bf16", "2013a4dd6 (2026-04-10), row Llama3 70B: 64 GPUs, 18.90 s a step, "
    "866.77 tokens/s/GPU, 389 model TFLOP/s/GPU", 866.77, 389, [
        "configuration: examples/llm_pretrain/custom_llama3_1_70b_pretrain_benchmark_8nodes.yaml "
        "at 2013a4dd6 (8 nodes; tp 1, cp 2, dp 32; local batch 1, GBS 128, seq 8192; "
        "activation_checkpointing, enable_fsdp2_prefetch, enable_compile; attn sdpa; rms_norm "
        "torch_fp32; TE FusedAdam; defer_fsdp_grad_sync false)",
        "zero_stage 3 over dp x cp: FSDP2 with the default MixedPrecisionPolicy of "
        "distributed/config.py at 2013a4dd6 (param and reduce dtype bfloat16: grad_reduce_bytes "
        "2); every block but the last resharded after forward (parallelizer.py "
        "apply_fsdp2_sharding_recursively without PP): the documents' default; gradients reduced "
        "every micro batch (defer_fsdp_grad_sync false); the prefetch chains (one unit ahead "
        "forward, two backward) are the documents' overlapped gathers",
        "cp_ring torch-allgather: PyTorch's context_parallel with its default rotate method "
        "(AutoModel sets none); attention_kernel flash2: SDPA's flash backend, as for torchtitan",
        "recompute full: activation checkpointing of every decoder layer (NO_REENTRANT inside "
        "each compiled layer)",
        "elementwise fused: per-layer torch.compile over the fp32 RMSNorms, the adds and SwiGLU, "
        "and Transformer Engine's fused RoPE (BackendConfig rope_fusion); the documents' "
        "'compiled' would charge torchtitan's complex RoPE as eager",
        "optimizer: Transformer Engine's FusedAdam (fused) on the BF16 parameters, FP32 moments, "
        "no master copy (master_weights none)",
        "cross_entropy pytorch: MaskedCrossEntropy (F.cross_entropy, FP32 upcast)",
        "cluster: DGX H100, 400 Gb/s a GPU (the table names the system only)",
    ])

# ------------- BigScience BLOOM 176B (Megatron-DeepSpeed, Jean Zay A100 80GB, 2022)
# A source of its own: the BLOOM training's own README and chronicles
# (bigscience-workshop/bigscience, train/tr11-176B-ml/), which give the
# launch script, the layout, the machine, a measured all-reduce on it and
# the logged iteration times. Appended after the passes above, every key
# set here from those files.
BS = ("bigscience-workshop/bigscience train/tr11-176B-ml/ (commit 9e64edec2): chronicles.md "
      "'7 days after the launch ... full throttle of GBS=2048', the logged iteration 12695: "
      "105.22 s a step, 19.463 samples/s, 149.02 TFLOPs (the same in README.md's iteration "
      "85376, 104.70 s, and chronicles.md's 42780-42781, 105.16-105.17 s)")
def appended(plan_doc, family, source, cluster, model_name, step_s, gbs, gpus, assumptions):
    """An appended run measured as a step time: its plan written, its entry
    (id = the plan's name) added to the index."""
    dump("plans/" + plan_doc["name"] + ".json", plan_doc)
    index["runs"].append({
        "id": plan_doc["name"], "family": family, "source": source,
        "cluster": "clusters/" + cluster, "model": "models/" + model_name + ".json",
        "plan": "plans/" + plan_doc["name"] + ".json", "measured_metric": "step_time_s",
        "measured_value": step_s,
        "measured_tokens_per_s_per_gpu": round(gbs * plan_doc["sequence_length"] / (step_s * gpus), 1),
        "assumptions": assumptions})


def hydra_override(text, dotted, value):
    """The YAML text with the key at `dotted` (section.group...key, two spaces
    of indentation a level) set to `value`: the key's line replaced, comment
    and all, or added at the end of its group."""
    lines = text.split("\n")

    def indentation(line):
        return len(line) - len(line.lstrip(" "))

    lo, hi = 0, len(lines)
    parts = dotted.split(".")
    for depth, part in enumerate(parts):
        indent = "  " * depth
        found = next((i for i in range(lo, hi) if lines[i].startswith(indent + part + ":") and
                      indentation(lines[i]) == len(indent)), None)
        if depth + 1 == len(parts):
            if found is not None:
                lines[found] = indent + part + ": " + value
            else:
                while hi > lo and not lines[hi - 1].strip():
                    hi -= 1
                lines.insert(hi, indent + part + ": " + value)
            return "\n".join(lines)
        lo = found + 1
        hi = next((i for i in range(lo, hi) if lines[i].strip() and
                   not lines[i].lstrip().startswith("#") and indentation(lines[i]) <= len(indent)),
                  hi)


def hydra_overridden(text, overrides):
    """The YAML text with each (dotted key, value) of `overrides` applied in
    turn (hydra_override), and the overrides as Hydra's command line writes
    them ("+" before a key the YAML lacks is left to the caller)."""
    for key, value in overrides:
        text = hydra_override(text, key, value)
    return text


def nemo_fixture(rid, header, text, env_vars=()):
    """Writes tests/data/frameworks/nemo/<rid>.yaml: a comment header, the
    launch YAML and the exported environment as the launcher's env_vars."""
    env = "".join("\n  %s: %s" % kv for kv in env_vars)
    with open(os.path.join(FRAMEWORKS, "nemo", rid + ".yaml"), "w") as f:
        f.write(header + text.rstrip("\n") + ("\nenv_vars:" + env if env else "") + "\n")


# The machine every DGX Cloud row ran on, as its assumptions state it.
DGXC_MACHINE = ("the machine: DGX H100 nodes of DGX Cloud, 8 x 400 Gb/s a node, taken as "
                "non-blocking (clusters/dgx-cloud-h100.json)")
# How the DGX Cloud READMEs measured their step, as the rows state it.
DGXC_LAST_STEP = ("the step time as the README gives it: train_step_timing at the run's last "
                  "step (NeMo's timer, synchronised, averaged over its last 5 steps)")


def nemo_fp8(doc):
    """The plan keys of NeMo's FP8 launches (model.fp8 with fp8_params):
    Transformer Engine's delayed scaling, the parameters gathered in FP8."""
    doc["fp8_recipe"] = "delayed"
    doc["fp8_param_gather"] = True

BS_CLUSTER = "jean-zay-a100.json"
dump("clusters/" + BS_CLUSTER, {
    "format": "scaleacross.cluster", "version": 1, "name": "jean-zay-a100",
    "description": (
        "IDRIS Jean Zay's A100 partition as BLOOM 176B ran on it (bigscience train/tr11-176B-ml/"
        "README.md 'Hardware'): 52 nodes of 8 A100 SXM4 80GB (416 GPUs), NVLink inside a node "
        "(taken as the HGX A100 NVSwitch board: 300 GB/s per GPU each way), 4 x 100 Gb/s "
        "Omni-Path per node (50 Gb/s per GPU), NCCL over the hfi1 verbs without GPUDirect RDMA. "
        "scale_out_efficiency 0.81 is measured: experiments/bandwidth/all_reduce_bench-a100-n4.txt "
        "(4 nodes, 32 ranks, 4 GB fp32 all-reduce, NCCL 2.10.3) logs 40.5-40.8 Gb/s bus bandwidth "
        "after the first trial, 81% of 50 Gb/s. The fabric's topology (an enhanced 8D hypercube) "
        "is taken as non-blocking."),
    "gpu_models": {"A100-SXM4-80GB": {
        "peak_tflops": {"bf16": 312, "fp8": 0}, "memory_gib": 80, "hbm_tbps": 2.039,
        "sms": 108, "gemm_efficiency": 0.74}},
    "buildings": [{
        "name": "jean-zay", "region": "fr", "gpu_model": "A100-SXM4-80GB", "gpus": 416,
        "gpus_per_host": 8, "scale_up_gbps": 2400, "scale_out_gbps": 50,
        "scale_out_efficiency": 0.81, "zone_gpus": 416, "zone_oversubscription": 1,
        "building_oversubscription": 1}],
    "links": []})
bloom = model("bloom-176b", "BLOOM 176B (BigScience, 2022): 70 layers, hidden 14336, 112 heads of "
              "128, ffn 4h (GeLU), vocab 250880 (250,680 padded by --pad-vocab-size-to), tied "
              "embeddings, seq 2048; ALiBi (no rotary work), a LayerNorm after the embedding",
              70, 14336, 4 * 14336, 112, 112, 250880, "gelu", "bf16", True)
bs_plan = {
    "format": "scaleacross.plan", "version": 1, "name": "bigscience-bloom-176b-384",
    "description": "BLOOM 176B on 384 A100 80GB (48 nodes): TP4 PP12 DP8, MBS 2, GBS 2048, seq "
                   "2048 (128 microbatches a pipeline), full activation checkpointing, "
                   "Megatron-DeepSpeed with DeepSpeed's pipeline engine and BF16_Optimizer",
    "sequence_length": 2048, "global_batch_sequences": 2048, "micro_batch_sequences": 2,
    "parallelism": {"tp": 4, "cp": 1, "pp": 12, "dp": 8, "ep": 1},
    "zero_stage": 1, "recompute": "full", "sequence_parallel": False,
    "schedule": {"kind": "1f1b", "virtual_stages": 1},
    "dp_overlap": False, "grad_reduce_bytes": 4, "dp_bucket_mib": 1907,
    "grad_reduce_scatter": False,
    "flash_attention": False, "rank_order": ["tp", "cp", "dp", "pp"], "p2p_overlap": False,
    "hidden_dropout": 0.1, "attention_dropout": 0.1, "grad_accumulation_fusion": False,
    "placement": {"layers_per_stage": [5] + [6] * 10 + [5]}}
appended(bs_plan, "bigscience-2022", BS, BS_CLUSTER, "bloom-176b", 105.22, 2048, 384, [
        "layout and batch from tr11-176B-ml.slurm (the training's launch script): TP_SIZE 4, "
        "PP_SIZE 12 on 48 nodes (DP 8), MICRO_BATCH_SIZE 2, GLOBAL_BATCH_SIZE 2048 after the "
        "ramp-up, SEQ_LEN 2048, --checkpoint-activations with --deepspeed-activation-"
        "checkpointing (every layer: checkpoint-num-layers 1), --bf16",
        "the logged TFLOPs are Megatron-DeepSpeed's count with recomputation, "
        "96 B s l h^2 (1 + s/6h + V/16lh) / (t x GPUs): 149.02 at 105.22 s, as logged; the step "
        "time is compared",
        "layers per stage 5, 6 x 10, 5: --pp-partition-method 'type:transformer|embedding' "
        "counts the tied embedding on the first and last stages as a layer (README.md "
        "'Architecture')",
        "rank order [tp, cp, dp, pp]: DeepSpeed's PipeModelDataParallelTopology orders its axes "
        "pipe, data, model (model fastest), so a node holds 2 DP ranks x TP 4 of one stage",
        "zero_stage 1: DeepSpeed's BF16_Optimizer (ZERO_STAGE=0 in the script: 'it implements its "
        "own zero stage 1 equivalent') shards the fp32 master weights and moments over DP and "
        "keeps an unsharded fp32 gradient accumulator (README.md 'Deepspeed config'): "
        "grad_reduce_bytes 4; it all-reduces those fp32 gradients after the last backward "
        "(pipe/engine.py _bf16_reduce_grads through buffered_allreduce_fallback, buckets of "
        "500M elements: dp_bucket_mib 1907), grad_reduce_scatter false, and all-gathers the "
        "updated bf16 partitions",
        "grad_accumulation_fusion false: BF16_Optimizer adds each microbatch's BF16 gradients "
        "into its fp32 accumulator (update_hp_grads), a pass of its own",
        "p2p_overlap false, dp_overlap false: DeepSpeed's pipeline engine sends and receives "
        "synchronously and reduces after the last backward (TrainSchedule's ReduceGrads), as for "
        "the MT-NLG rows",
        "flash_attention false: 2022 Megatron-DeepSpeed attention (baddbmm with the ALiBi bias, "
        "the fused scale-mask-softmax kernel, --abort-on-unmet-fused-kernel-constraints); "
        "ALiBi's bias tensor is read by the score GEMM and costs no kernel of its own",
        "dropout 0.1 / 0.1 (hidden / attention): the script sets neither, and Megatron-DeepSpeed's "
        "arguments.py defaults are 0.1 each",
        "CUDA_LAUNCH_BLOCKING=1 (set in the script against a hang) is not modelled: the "
        "chronicles' own A/B on a 200B trial (chronicles-prequel.md) measured 0-6% from it",
        "tied embeddings: the last stage's copy of the table (0.9B parameters a TP rank) and its "
        "fp32 gradients' all-reduce with the first stage after the last backward (pipe/engine.py "
        "_exec_reduce_tied_grads on the BF16_Optimizer's _hp_grad), as the model charges any "
        "tied pipeline",
    ])

# ------------- Megatron-LM's GPT-3 175B example (README, January 2021; Selene A100)
# The README's own figure for examples/pretrain_gpt3_175B.sh at the commit
# that added it: one run on 1,024 GPUs, the layout and software of the
# script. Appended after the passes above, every key set here.
G3 = ("NVIDIA/Megatron-LM README.md 'GPT-3 Example' (commit 152aab304d, 2021-01-11): 'With full "
      "global batch size of 1536 on 1024 A100 GPUs, each iteration takes around 32 seconds "
      "resulting in 138 teraFLOPs per GPU'")
g3 = model("megatron-gpt3-175b", "GPT-3 175B as examples/pretrain_gpt3_175B.sh builds it: 96 layers, "
           "hidden 12288, 96 heads, ffn 4h (GeLU), vocab 51200 (GPT-2 BPE padded to a multiple of "
           "128 x TP), tied embeddings, learned positions, seq 2048", 96, 12288, 4 * 12288, 96, 96,
           51200, "gelu", "bf16", True)
g3_plan = {
    "format": "scaleacross.plan", "version": 1, "name": "megatron-readme-gpt3-175b-1024",
    "description": "Megatron-LM's GPT-3 175B example on 1024 A100: TP8 PP16 DP8, MBS 1, GBS 1536, "
                   "seq 2048 (192 microbatches a pipeline), full activation checkpointing, fp16, "
                   "1F1B with blocking P2P, gradients all-reduced after the backward",
    "sequence_length": 2048, "global_batch_sequences": 1536, "micro_batch_sequences": 1,
    "parallelism": {"tp": 8, "cp": 1, "pp": 16, "dp": 8, "ep": 1},
    "zero_stage": 0, "recompute": "full", "sequence_parallel": False,
    "schedule": {"kind": "1f1b", "virtual_stages": 1},
    "dp_overlap": False, "grad_reduce_bytes": 2, "flash_attention": False,
    "rank_order": ["tp", "cp", "dp", "pp"], "p2p_overlap": False,
    "hidden_dropout": 0.1, "attention_dropout": 0.1}
appended(g3_plan, "megatron-readme-2021", G3, "selene-a100.json", "megatron-gpt3-175b", 31.92, 1536,
         1024, [
        "the step time from the README's 138 TFLOP/s under Megatron's count with full "
        "recomputation, 96 B s l h^2 (1 + s/6h + V/16lh) = 4.511e18 FLOPs a step: 31.92 s on "
        "1024 GPUs (the README's 'around 32 seconds')",
        "layout and batch from examples/pretrain_gpt3_175B.sh at that commit: "
        "--tensor-model-parallel-size 8, --pipeline-model-parallel-size 16 on 128 nodes (DP 8), "
        "--micro-batch-size 1, --global-batch-size 1536 (after the ramp-up), --seq-length 2048, "
        "--checkpoint-activations, --fp16 (costed at the BF16 rates: the same tensor-core peak)",
        "the January 2021 Megatron-LM: no distributed optimizer (zero_stage 0), the local DDP "
        "all-reduces the fp16 gradients after the backward (--accumulate-allreduce-grads-in-fp32 "
        "not set: grad_reduce_bytes 2, dp_overlap false), 1F1B without interleaving with blocking "
        "P2P (p2p_communication.py waits on every request), the fused scale-mask-softmax "
        "attention (no FlashAttention), no sequence parallelism, dropout 0.1 / 0.1 "
        "(arguments.py defaults)",
        "the machine: selene-a100.json (DGX A100 80GB, 8 x 200 Gb/s HDR per node, non-blocking), "
        "as for the SC'21 rows; the README names 'A100 GPUs' only, and the memory size does not "
        "enter the step time",
    ])

# ------------- NVIDIA DGX Cloud Benchmarking: NeMo GPT-3 175B on 128-2048 H100
# NVIDIA/dgxc-benchmarking's nemo_megatron recipe, two releases of it: each
# README gives the step time (step 50 of a 50-step run) at five scales, BF16
# and FP8, and the release's files give the launch configuration. The
# upstream training YAMLs are kept verbatim under sources/; each row's launch
# configuration (tests/data/frameworks/nemo/<id>.yaml) is that YAML with the
# overrides its launch.sh / configure.sh pass (trainer.num_nodes,
# model.global_batch_size = 16 x nodes, model.fp8) and its NVTE_FUSED_ATTN
# as the launcher's env_vars. The plans are what the NeMo importer reads
# from those files (tst_frameworks publishedRuns checks it).
DGXC = ("NVIDIA/dgxc-benchmarking nemo_megatron/README_175b.md, 'Expected Performance' tables "
        "(NeMo Megatron BF16 and FP8, TP=4, PP=8, MBS=1, SEQ=2048; GBS = 2 x GPUs), release %s "
        "(commit %s, container nvcr.io/nvidia/nemo:%s): %s %d GPUs, %.3f s a step")
DGXC_RELEASES = [
    # release, commit, container, VP, NVTE_FUSED_ATTN, {bf16: [...], fp8: [...]} at 128..2048
    ("v24.11.1", "35a9aec", "24.05", 12, 0,
     {"bf16": [8.91, 8.95, 9.09, 9.01, 9.02], "fp8": [5.92, 5.96, 6.44, 6.72, 6.24]}),
    ("v25.02", "8f5cbb3", "24.12", 6, 1,
     {"bf16": [8.309, 8.408, 8.42, 8.453, 8.49], "fp8": [5.626, 5.725, 5.774, 5.82, 5.96]}),
]
derived_cluster("dgx-h100.json", "dgx-cloud-h100", (
    "NVIDIA DGX Cloud as the dgxc-benchmarking recipes ran on it: DGX H100 (H100 SXM5 80GB, "
    "NVLink4 450 GB/s per direction, 8 x 400 Gb/s per node), 2,304 GPUs (the largest scale its "
    "tables give), taken as non-blocking (the recipes name 'DGX H100' and nothing of the "
    "fabric)."),
    {"gpus": 2304})
for dtype in ("bf16", "fp8"):
    model("gpt3-175b-nemo-" + dtype, "GPT-3 175B as NeMo's gpt3_175b_hydra.yaml builds it: 96 layers, "
          "hidden 12288, 96 heads, ffn 4h (GeLU), GPT-2 BPE (50,257) padded to a multiple of "
          "128 x TP 4 (50,688), tied embeddings, learned positions; " + dtype.upper() + " GEMMs",
          96, 12288, 49152, 96, 96, 50688, "gelu", dtype, True)
for release, commit, container, vp, fused_attn, steps in DGXC_RELEASES:
    base = open(os.path.join(HERE, "sources", "dgxc-%s-gpt3_175b_hydra.yaml" % release)).read()
    tag = "dgxc" + release[1:].replace(".", "")[:4]
    for dtype in ("bf16", "fp8"):
        for k, gpus in enumerate((128, 256, 512, 1024, 2048)):
            nodes, gbs, t = gpus // 8, 2 * gpus, steps[dtype][k]
            rid = "%s-gpt3-175b-%s-%d" % (tag, dtype, gpus)
            text = base.replace("  num_nodes: 16\n", "  num_nodes: %d\n" % nodes, 1)
            text = text.replace("  global_batch_size: 256\n", "  global_batch_size: %d\n" % gbs, 1)
            text = text.replace("  fp8: true\n", "  fp8: %s\n" % str(dtype == "fp8").lower(), 1)
            assert text.count("num_nodes: %d" % nodes) == 1
            header = ("# NVIDIA/dgxc-benchmarking %s (%s) nemo_megatron/gpt3_175b_hydra.yaml with the "
                      "overrides of its launch:\n# trainer.num_nodes=%d model.global_batch_size=%d "
                      "model.fp8=%s; NVTE_FUSED_ATTN=%d exported by the launch script.\n" %
                      (release, commit, nodes, gbs, str(dtype == "fp8").lower(), fused_attn))
            nemo_fixture(rid, header, text, [("NVTE_FUSED_ATTN", fused_attn)])
            doc = {
                "format": "scaleacross.plan", "version": 1, "name": rid,
                "description": "dgxc-benchmarking %s: NeMo %s GPT-3 175B %s on %d H100, TP4 PP8 VP%d "
                               "DP%d, MBS 1, GBS %d, seq 2048" % (release, container, dtype.upper(), gpus,
                                                               vp, gpus // 32, gbs),
                "sequence_length": 2048, "global_batch_sequences": gbs, "micro_batch_sequences": 1,
                "parallelism": {"tp": 4, "cp": 1, "pp": 8, "dp": gpus // 32, "ep": 1},
                "zero_stage": 1, "recompute": "none", "sequence_parallel": True,
                "schedule": {"kind": "interleaved", "virtual_stages": vp},
                "rank_order": ["tp", "cp", "dp", "pp"], "dp_overlap": True, "tp_comm_overlap": True,
                "dp_bucket_mib": max(40e6, 1e6 * (gpus // 32)) * 2 / (1024 * 1024),
                "grad_reduce_bytes": 2, "master_weights": "16bit", "flash_attention": True,
                "hidden_dropout": 0.1, "attention_dropout": 0.1}
            if fused_attn == 0:
                doc["attention_kernel"] = "flash2"
            if dtype == "fp8":
                nemo_fp8(doc)
            appended(doc, "dgxc-benchmarking",
                     DGXC % (release, commit, container, dtype.upper(), gpus, t),
                     "dgx-cloud-h100.json", "gpt3-175b-nemo-" + dtype, t, gbs, gpus, [
                    "the step time as the README gives it: train_step_timing at step 50 (NeMo's "
                    "timer, synchronised, averaged over its last 5 steps)",
                    "launch configuration: tests/data/frameworks/nemo/%s.yaml, the release's "
                    "gpt3_175b_hydra.yaml (sources/dgxc-%s-gpt3_175b_hydra.yaml) with its launch "
                    "overrides; the plan is the NeMo importer's reading of it: TP 4, PP 8, "
                    "virtual stages %d (the YAML's; the README's table header says VP=12 in both "
                    "releases), sequence parallelism, TP communication overlap (ub_tp_comm_overlap), "
                    "overlapped P2P, Apex distributed Adam with overlapped grad and param sync, "
                    "BF16 gradient sync (grad_sync_dtype bf16), BF16 parameter remainders "
                    "(master_weights 16bit), no recompute, dropout 0.1 / 0.1%s" % (
                        rid, release, vp, ", FP8 with delayed scaling (amax history 1024, max) "
                        "and FP8 parameters (fp8_params)" if dtype == "fp8" else
                        "; model.fp8 false, so the YAML's FP8 keys do nothing"),
                    "attention: NVTE_FUSED_ATTN=%d in the release's launch script: %s" % (
                        fused_attn, "Transformer Engine's flash-attn backend (attention_kernel "
                        "flash2)" if fused_attn == 0 else "Transformer Engine's fused (cuDNN) "
                        "attention, the plan's auto"),
                    DGXC_MACHINE,
                    "not modelled: NCCL_NVLS_ENABLE=0 (the model prices no NVLS for these "
                    "collectives either), the conditional layer-norm SM margins and the "
                    "userbuffers' per-GEMM SM counts of the YAML (Transformer Engine's defaults "
                    "are charged)",
                ])

# The same repository's Llama 3.1 recipe at v25.02 (NeMo 24.12): 8B (TP 1,
# CP 2) on 8-128 GPUs and 70B (TP 4, PP 4, VP 5, CP 2) on 64-2048, BF16 and
# FP8, GBS 16 per 8B node and 16 per 70B 8-node group (launch.sh: 128 x
# GPUs / 8, 128 x GPUs / 64), sequence 8192; its configure.sh passes
# model.fp8, model.fp8_hybrid and +model.fp8_params and exports
# NVTE_FLASH_ATTN=0, NVTE_FUSED_ATTN=1.
DGXC_LLAMA = ("NVIDIA/dgxc-benchmarking llama3.1/README_%s.md, 'Expected Performance' tables "
              "(Llama 3.1 %s %s), release v25.02 (commit 8f5cbb3, container nvcr.io/nvidia/nemo:"
              "24.12): %d GPUs, %.2f s a step")
DGXC_LLAMA_ROWS = {
    # size: (GPUs, {dtype: step times}, per-8-GPU GBS divisor, model docs by dtype)
    "8b": ((8, 16, 32, 64, 128), {"bf16": [12.78, 12.99, 13.00, 13.00, 13.16],
                                  "fp8": [9.44, 9.47, 9.60, 9.64, 9.73]}, 8),
    "70b": ((64, 128, 256, 512, 1024, 2048), {"bf16": [14.61, 14.70, 14.72, 14.80, 14.86, 14.84],
                                              "fp8": [10.46, 10.52, 10.75, 10.76, 10.83, 10.99]},
            64),
}
for dtype in ("bf16", "fp8"):
    model("llama31-70b-nemo-" + dtype, "Llama 3.1 70B as NeMo's llama3.1_70b.yaml builds it: 80 "
          "layers, hidden 8192, 64 heads, 8 KV heads, SwiGLU 28672, the Llama 3 tokenizer (128,256) "
          "padded to a multiple of 128 x TP 4 (128,512), untied; " + dtype.upper() + " GEMMs",
          80, 8192, 28672, 64, 8, 128512, "swiglu", dtype, False)
for size, (scales, steps, per) in DGXC_LLAMA_ROWS.items():
    base = open(os.path.join(HERE, "sources", "dgxc-v25.02-llama3.1_%s.yaml" % size)).read()
    base_nodes = 1 if size == "8b" else 8
    for dtype in ("bf16", "fp8"):
        fp8 = str(dtype == "fp8").lower()
        for k, gpus in enumerate(scales):
            nodes, gbs, t = gpus // 8, 128 * gpus // per, steps[dtype][k]
            rid = "dgxc2502-llama31-%s-%s-%d" % (size, dtype, gpus)
            text = base.replace("  num_nodes: %d\n" % base_nodes, "  num_nodes: %d\n" % nodes, 1)
            text = text.replace("  global_batch_size: 128\n", "  global_batch_size: %d\n" % gbs, 1)
            text = text.replace("  fp8: false\n", "  fp8: %s\n  fp8_params: %s\n" % (fp8, fp8), 1)
            text = text.replace("  fp8_hybrid: false\n", "  fp8_hybrid: %s\n" % fp8, 1)
            assert text.count("num_nodes: %d\n" % nodes) == 1 and text.count("fp8_params") == 1
            header = ("# NVIDIA/dgxc-benchmarking v25.02 (8f5cbb3) llama3.1/llama3.1_%s.yaml with the "
                      "overrides of its launch:\n# trainer.num_nodes=%d model.global_batch_size=%d "
                      "model.fp8=%s model.fp8_hybrid=%s +model.fp8_params=%s;\n# NVTE_FLASH_ATTN=0 "
                      "NVTE_FUSED_ATTN=1 exported by configure.sh.\n" % (size, nodes, gbs, fp8, fp8, fp8))
            nemo_fixture(rid, header, text, [("NVTE_FLASH_ATTN", 0), ("NVTE_FUSED_ATTN", 1)])
            tp, pp, cp = (1, 1, 2) if size == "8b" else (4, 4, 2)
            dp = gpus // (tp * pp * cp)
            doc = {
                "format": "scaleacross.plan", "version": 1, "name": rid,
                "description": "dgxc-benchmarking v25.02: NeMo 24.12 Llama 3.1 %s %s on %d H100, TP%d "
                               "PP%d CP%d%s DP%d, MBS 1, GBS %d, seq 8192" % (
                                   size.upper(), dtype.upper(), gpus, tp, pp, cp,
                                   " VP5" if pp > 1 else "", dp, gbs),
                "sequence_length": 8192, "global_batch_sequences": gbs, "micro_batch_sequences": 1,
                "parallelism": {"tp": tp, "cp": cp, "pp": pp, "dp": dp, "ep": 1},
                "zero_stage": 1, "recompute": "none", "sequence_parallel": tp > 1,
                "schedule": {"kind": "interleaved", "virtual_stages": 5} if pp > 1 else
                            {"kind": "1f1b", "virtual_stages": 1},
                "rank_order": ["tp", "cp", "dp", "pp"], "dp_overlap": True,
                "dp_bucket_mib": max(40e6, 1e6 * dp * cp) * 2 / (1024 * 1024),
                "grad_reduce_bytes": 2, "master_weights": "16bit", "flash_attention": True,
                "attention_kernel": "cudnn", "cross_entropy": "megatron-fused"}
            if tp > 1:
                doc["tp_comm_overlap"] = True
            if dtype == "fp8":
                nemo_fp8(doc)
            model_doc = ("llama3-8b-" + dtype) if size == "8b" else ("llama31-70b-nemo-" + dtype)
            appended(doc, "dgxc-benchmarking",
                     DGXC_LLAMA % (size, size.upper(), dtype.upper(), gpus, t),
                     "dgx-cloud-h100.json", model_doc, t, gbs, gpus, [
                    DGXC_LAST_STEP,
                    "launch configuration: tests/data/frameworks/nemo/%s.yaml, the release's "
                    "llama3.1_%s.yaml (sources/dgxc-v25.02-llama3.1_%s.yaml) with its launch "
                    "overrides; the plan is the NeMo importer's reading of it: %s, no recompute, "
                    "Megatron's fused cross entropy, Apex distributed Adam with overlapped grad and "
                    "param sync, BF16 gradient sync, BF16 parameter remainders, no dropout%s" % (
                        rid, size, size, "TP 1, CP 2 (Transformer Engine's ring), no PP" if size ==
                        "8b" else "TP 4 with sequence parallelism and TP communication overlap, "
                        "PP 4 with 5 virtual stages and overlapped P2P, CP 2",
                        ", FP8 with delayed scaling (amax history 1024, max) and FP8 parameters"
                        if dtype == "fp8" else ""),
                    "attention: NVTE_FLASH_ATTN=0 and NVTE_FUSED_ATTN=1 in configure.sh: "
                    "Transformer Engine's fused (cuDNN) attention (attention_kernel cudnn)",
                    DGXC_MACHINE,
                    "not modelled: NVTE_FWD_LAYERNORM_SM_MARGIN=8 and its backward twin (the "
                    "norms' kernels leave 8 SMs to overlapped communication) and the userbuffers' "
                    "per-GEMM SM counts of the YAML (Transformer Engine's defaults are charged)",
                ])


# Its Llama 3.1 405B rows at v25.02 (NeMo 24.12): TP 8, CP 2, PP 9 with 7
# virtual stages at 576 GPUs and more (GBS 252 per 576 GPUs), and below that
# the model shrunk by configure.sh (7, 21 or 42 layers on 32, 96 or 192 GPUs),
# each scale its own model document. configure.sh gives the 405B the GPT-2
# tokenizer (huggingface /megatron-gpt2-345m: 50,257, padded to 51,200 at TP 8).
DGXC_405B = ("NVIDIA/dgxc-benchmarking llama3.1/README_405b.md, 'Expected Performance' tables "
             "(Llama 3.1 405b %s), release v25.02 (commit 8f5cbb3, container nvcr.io/nvidia/nemo:"
             "24.12): %d GPUs, %.2f s a step")
# GPUs: (layers, PP, VP, GBS)
DGXC_405B_SCALES = {32: (7, 1, None, 126), 96: (21, 3, 7, 126), 192: (42, 3, 7, 252),
                    576: (126, 9, 7, 252), 1152: (126, 9, 7, 504), 2304: (126, 9, 7, 1008)}
DGXC_405B_STEPS = {"bf16": [9.00, 8.87, 17.30, 17.50, 17.60, 17.70],
                   "fp8": [5.75, 5.63, 10.8, 11.00, 11.10, 11.20]}
for layers in sorted({v[0] for v in DGXC_405B_SCALES.values()}):
    for dtype in ("bf16", "fp8"):
        model("llama31-405b-dgxc-%dl-%s" % (layers, dtype), "Llama 3.1 405B as dgxc-benchmarking "
              "v25.02's llama3.1_405b.yaml builds it, with %d of its 126 layers (configure.sh's "
              "layer count at the scales that ran it): hidden 16384, 128 heads, 16 KV heads (the "
              "YAML's num_query_groups), SwiGLU 53248, the GPT-2 tokenizer configure.sh passes "
              "(50,257, padded to a multiple of 128 x TP 8: 51,200), untied; %s GEMMs" % (
                  layers, dtype.upper()),
              layers, 16384, 53248, 128, 16, 51200, "swiglu", dtype, False)
l405_base = open(os.path.join(HERE, "sources", "dgxc-v25.02-llama3.1_405b.yaml")).read()
for dtype in ("bf16", "fp8"):
    fp8 = str(dtype == "fp8").lower()
    for k, (gpus, (layers, pp, vp, gbs)) in enumerate(sorted(DGXC_405B_SCALES.items())):
        nodes, tp, cp, t = gpus // 8, 8, 2, DGXC_405B_STEPS[dtype][k]
        dp = gpus // (tp * pp * cp)
        rid = "dgxc2502-llama31-405b-%s-%d" % (dtype, gpus)
        overrides = [("model.tokenizer.library", "huggingface"),
                     ("model.tokenizer.type", "/megatron-gpt2-345m"),
                     ("model.ub_tp_comm_overlap_cfg.proj_fprop.fp8_buf", fp8),
                     ("model.ub_tp_comm_overlap_cfg.fc2_fprop.fp8_buf", fp8)]
        if gpus == 32:
            overrides.append(("model.defer_embedding_wgrad_compute", "false"))
        overrides += [("trainer.num_nodes", str(nodes)), ("trainer.devices", "8"),
                      ("model.global_batch_size", str(gbs)), ("model.fp8", fp8),
                      ("model.fp8_hybrid", fp8), ("model.fp8_params", fp8)]
        if gpus < 576:
            overrides += [("model.pipeline_model_parallel_size", str(pp)),
                          ("model.virtual_pipeline_model_parallel_size", str(vp) if vp else "null"),
                          ("model.num_layers", str(layers))]
        text = hydra_overridden(l405_base, overrides)
        header = ("# NVIDIA/dgxc-benchmarking v25.02 (8f5cbb3) llama3.1/llama3.1_405b.yaml with the "
                  "overrides of its\n# configure.sh for %d GPUs (the data and run-bookkeeping ones "
                  "left out):\n# %s\n# NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=1 exported by configure.sh.\n" % (
                      gpus, " ".join(("+" if key == "model.fp8_params" else "") + key + "=" + value
                                     for key, value in overrides)))
        nemo_fixture(rid, header, text, [("NVTE_FLASH_ATTN", 0), ("NVTE_FUSED_ATTN", 1)])
        doc = {
            "format": "scaleacross.plan", "version": 1, "name": rid,
            "description": "dgxc-benchmarking v25.02: NeMo 24.12 Llama 3.1 405B (%d layers) %s on %d "
                           "H100, TP8 PP%d%s CP2 DP%d, MBS 1, GBS %d, seq 8192" % (
                               layers, dtype.upper(), gpus, pp, " VP%d" % vp if vp else "", dp, gbs),
            "sequence_length": 8192, "global_batch_sequences": gbs, "micro_batch_sequences": 1,
            "parallelism": {"tp": tp, "cp": cp, "pp": pp, "dp": dp, "ep": 1},
            "zero_stage": 1, "recompute": "none", "sequence_parallel": True,
            "schedule": {"kind": "interleaved", "virtual_stages": vp} if vp else
                        {"kind": "1f1b", "virtual_stages": 1},
            "rank_order": ["tp", "cp", "dp", "pp"], "dp_overlap": True, "tp_comm_overlap": True,
            "dp_bucket_mib": max(40e6, 1e6 * dp * cp) * 2 / (1024 * 1024),
            "grad_reduce_bytes": 2, "master_weights": "16bit", "flash_attention": True,
            "attention_kernel": "cudnn", "cross_entropy": "megatron-fused"}
        if fp8 == "true":
            nemo_fp8(doc)
        appended(doc, "dgxc-benchmarking", DGXC_405B % (dtype.upper(), gpus, t),
                 "dgx-cloud-h100.json", "llama31-405b-dgxc-%dl-%s" % (layers, dtype), t, gbs, gpus, [
                DGXC_LAST_STEP,
                "launch configuration: tests/data/frameworks/nemo/%s.yaml, the release's "
                "llama3.1_405b.yaml (sources/dgxc-v25.02-llama3.1_405b.yaml) with the overrides of "
                "its configure.sh for %d GPUs (%d layers, PP %d, GBS %d); the plan is the NeMo "
                "importer's reading of it: TP 8 with sequence parallelism and TP communication "
                "overlap, CP 2 (Transformer Engine's ring), %s, no recompute, Megatron's fused cross "
                "entropy, Apex distributed Adam with overlapped grad and param sync, BF16 gradient "
                "sync, BF16 parameter remainders, no dropout%s" % (
                    rid, gpus, layers, pp, gbs,
                    "PP %d with 7 virtual stages and overlapped, unbatched P2P" % pp if vp else
                    "no PP",
                    ", FP8 with delayed scaling (amax history 1024, max) and FP8 parameters"
                    if fp8 == "true" else ""),
                "attention: NVTE_FLASH_ATTN=0 and NVTE_FUSED_ATTN=1 in configure.sh: Transformer "
                "Engine's fused (cuDNN) attention (attention_kernel cudnn)",
                DGXC_MACHINE,
                "not modelled: the deferred embedding weight gradient (defer_embedding_wgrad_compute), "
                "NVTE_FWD_LAYERNORM_SM_MARGIN=8 and its backward twin, the userbuffers' per-GEMM SM "
                "counts and aggregation of the YAML (Transformer Engine's defaults are charged), "
                "NCCL_P2P_NET_CHUNKSIZE=262144",
            ])

# The same repository's Nemotron-4 recipe at v25.02: 15B (NeMo 24.12; TP 4,
# MBS 4, GBS 4 per GPU) on 16-2048 GPUs and 340B (NeMo 24.09; TP 8, PP 8, VP
# 12, MBS 1, GBS 2 per node, CP 2 in BF16 and 1 in FP8) on 128-2048, BF16 and
# FP8, sequence 4096. configure.sh passes its settings as Hydra overrides of
# the release's YAMLs (kept verbatim under sources/); here each override
# replaces its key in place (or is added to its section, as Hydra's "+" adds
# it), and the exported NVTE_FUSED_ATTN becomes the launcher's env_vars.
DGXC_NEMOTRON = ("NVIDIA/dgxc-benchmarking nemotron/README_%s.md, 'Expected Slurm Performance' "
                 "tables (Nemotron4 %s %s), release v25.02 (commit 8f5cbb3, container "
                 "nvcr.io/nvidia/nemo:%s): %d GPUs, %.3f s a step")
DGXC_NEMOTRON_ROWS = {
    # size: (container, GPUs, {dtype: step times})
    "15b": ("24.12", (16, 32, 64, 128, 256, 512, 1024, 2048),
            {"bf16": [2.812, 2.824, 2.845, 2.859, 2.852, 2.875, 2.895, 2.887],
             "fp8": [2.039, 2.046, 2.048, 2.059, 2.075, 2.12, 2.094, 2.12]}),
    "340b": ("24.09", (128, 256, 512, 1024, 2048),
             {"bf16": [4.61, 4.67, 4.7, 4.73, 4.84], "fp8": [3.16, 3.21, 3.26, 3.34, 3.49]}),
}
for dtype in ("bf16", "fp8"):
    model("nemotron4-15b-" + dtype, "Nemotron-4 15B as NeMo's nemotron4-15b-synth.yaml (dgxc-benchmarking "
          "v25.02) builds it: 32 layers, hidden 6144, 48 heads, 8 KV heads, ffn 24576 squared-ReLU "
          "(non-gated: encoded as gelu, the same GEMM shapes), RoPE on half of each head, "
          "LayerNorm1p, no biases, the 256,000-token sentencepiece vocabulary (a multiple of "
          "128 x TP 4), untied; " + dtype.upper() + " GEMMs",
          32, 6144, 24576, 48, 8, 256000, "gelu", dtype, False)
model("nemotron4-340b-bf16", "Nemotron-4 340B as NeMo's nemotron4-340b-synth.yaml (dgxc-benchmarking "
      "v25.02) builds it: 96 layers, hidden 18432, 96 heads, 8 KV heads, ffn 73728 squared-ReLU "
      "(non-gated: encoded as gelu, the same GEMM shapes), RoPE on half of each head, "
      "LayerNorm1p, no biases, 256,000-token vocabulary, untied; BF16 GEMMs",
      96, 18432, 73728, 96, 8, 256000, "gelu", "bf16", False)
for size, (container, scales, steps) in DGXC_NEMOTRON_ROWS.items():
    base = open(os.path.join(HERE, "sources", "dgxc-v25.02-nemotron4-%s-synth.yaml" % size)).read()
    for dtype in ("bf16", "fp8"):
        fp8 = dtype == "fp8"
        for k, gpus in enumerate(scales):
            nodes, t = gpus // 8, steps[dtype][k]
            if size == "15b":
                tp, pp, cp, vp, mbs, gbs, fused = 4, 1, 1, None, 4, 4 * gpus, 1
            else:
                tp, pp, cp, vp, mbs, gbs, fused = 8, 8, 1 if fp8 else 2, 12, 1, 2 * nodes, 0
            dp = gpus // (tp * pp * cp)
            # 15B: Megatron-Core's distributed optimizer without optim.grad_sync_dtype
            # reduces FP32 gradients; 340B: Apex's with grad_sync_dtype bf16.
            grad_bytes = 4 if size == "15b" else 2
            rid = "dgxc2502-nemotron4-%s-%s-%d" % (size, dtype, gpus)
            overrides = []
            if size == "340b":
                overrides += [("model.overlap_p2p_comm", "True"), ("model.batch_p2p_comm", "False")]
            overrides += [
                ("model.global_batch_size", str(gbs)), ("trainer.num_nodes", str(nodes)),
                ("model.tensor_model_parallel_size", str(tp)),
                ("model.pipeline_model_parallel_size", str(pp)),
                ("model.context_parallel_size", str(cp)),
                ("model.virtual_pipeline_model_parallel_size", str(vp) if vp else "null"),
                ("model.fp8", str(fp8)), ("model.ub_tp_comm_overlap", "True"),
                ("model.sequence_parallel", "True"), ("model.micro_batch_size", str(mbs)),
                ("model.mcore_gpt", "True"), ("model.transformer_engine", "True"),
                ("model.fp8_hybrid", "True"), ("model.fp8_params", str(fp8))]
            text = hydra_overridden(base, overrides)
            header = ("# NVIDIA/dgxc-benchmarking v25.02 (8f5cbb3) nemotron/nemotron4-%s-synth.yaml with "
                      "the overrides of its\n# configure.sh (the run-bookkeeping ones left out):\n# %s\n"
                      "# NVTE_FUSED_ATTN=%d exported by configure.sh.\n" % (
                          size, " ".join(("+" if key == "model.fp8_params" else "") + key + "=" + value
                                         for key, value in overrides), fused))
            nemo_fixture(rid, header, text, [("NVTE_FUSED_ATTN", fused)])
            doc = {
                "format": "scaleacross.plan", "version": 1, "name": rid,
                "description": "dgxc-benchmarking v25.02: NeMo %s Nemotron-4 %s %s on %d H100, TP%d "
                               "PP%d%s CP%d DP%d, MBS %d, GBS %d, seq 4096" % (
                                   container, size.upper(), dtype.upper(), gpus, tp, pp,
                                   " VP%d" % vp if vp else "", cp, dp, mbs, gbs),
                "sequence_length": 4096, "global_batch_sequences": gbs, "micro_batch_sequences": mbs,
                "parallelism": {"tp": tp, "cp": cp, "pp": pp, "dp": dp, "ep": 1},
                "zero_stage": 1, "recompute": "none" if size == "15b" else "selective",
                "sequence_parallel": True,
                "schedule": {"kind": "interleaved", "virtual_stages": vp} if vp else
                            {"kind": "1f1b", "virtual_stages": 1},
                "rank_order": ["tp", "cp", "dp", "pp"], "dp_overlap": True, "tp_comm_overlap": True,
                "dp_bucket_mib": max(40e6, 1e6 * dp * cp) * grad_bytes / (1024 * 1024),
                "grad_reduce_bytes": grad_bytes, "flash_attention": True,
                "cross_entropy": "megatron-fused"}
            if not fused:
                doc["attention_kernel"] = "flash2"
            if size == "340b":
                doc["optimizer_moments"] = "bf16"
                doc["master_weights"] = "none"
            if fp8:
                nemo_fp8(doc)
            model_doc = "nemotron4-%s-%s" % (size, dtype)
            appended(doc, "dgxc-benchmarking",
                     DGXC_NEMOTRON % (size, size.upper(), dtype.upper(), container, gpus, t),
                     "dgx-cloud-h100.json", model_doc, t, gbs, gpus, [
                    DGXC_LAST_STEP,
                    "launch configuration: tests/data/frameworks/nemo/%s.yaml, the release's "
                    "nemotron4-%s-synth.yaml (sources/dgxc-v25.02-nemotron4-%s-synth.yaml) with the "
                    "overrides of its configure.sh; the plan is the NeMo importer's reading of it: "
                    "%s, no dropout%s" % (rid, size, size, (
                        "TP 4 with sequence parallelism and TP communication overlap, no PP, micro "
                        "batch 4, no recompute, Megatron-Core's distributed optimizer with overlapped "
                        "grad and param sync reducing FP32 gradients (optim.grad_sync_dtype unset: "
                        "NeMo's setup_mcore_distributed_parallel sets grad_reduce_in_fp32), Megatron's "
                        "fused cross entropy" if size == "15b" else
                        "TP 8 with sequence parallelism and TP communication overlap, PP 8 with 12 "
                        "virtual stages and overlapped, unbatched P2P, CP %d, selective recompute, "
                        "Apex distributed Adam with BF16 moments and no master copy (optim.dtype "
                        "bf16), BF16 gradient sync, Megatron's fused cross entropy" % cp),
                        ", FP8 with delayed scaling (amax history 1024, max) and FP8 parameters"
                        if fp8 else ""),
                    "attention: NVTE_FUSED_ATTN=%d in configure.sh: %s" % (
                        fused, "Transformer Engine's pick (cuDNN fused attention on Hopper), the "
                        "plan's auto" if fused else "Transformer Engine's flash-attn backend "
                        "(attention_kernel flash2)"),
                    DGXC_MACHINE,
                    "not modelled: RoPE on half of each head (rotary_percentage 0.5: charged over "
                    "the whole head), LayerNorm1p (charged as the documents' norm)%s" % (
                        "" if size == "15b" else ", the deferred embedding weight gradient "
                        "(defer_embedding_wgrad_compute), the conditional layer-norm SM margins and "
                        "NVTE_UB_SPLIT_AG; CP %d is configure.sh's (CP 2 for BF16), where the README's "
                        "table header gives GA=16, which matches CP 1" % cp),
                ])


# The same repository's Grok-1 recipe at v25.02 (NeMo 24.12): an MoE of 8
# experts, top 2, with token drop (capacity 1, padded), on 8 to 2048 GPUs.
# configure.sh shrinks the model below 64 nodes (layers, PP, CP, EP and the
# sequence change with the scale, GBS 1024 there): each scale is its own
# model document, with the layer count it ran.
DGXC_GROK = ("NVIDIA/dgxc-benchmarking grok1/README_314b.md, 'Expected Performance' tables "
             "(Grok 1 314b %s), release v25.02 (commit 8f5cbb3, container nvcr.io/nvidia/nemo:24.12): "
             "%d GPUs, %.2f s a step")
# GPUs: (layers, PP, CP, EP, VP, sequence, GBS); configure.sh by node count.
DGXC_GROK_SCALES = {8: (2, 1, 1, 2, None, 4096, 1024), 16: (4, 1, 1, 4, None, 4096, 1024),
                    32: (4, 1, 1, 8, None, 4096, 1024), 64: (8, 1, 2, 8, None, 8192, 1024),
                    128: (16, 2, 2, 8, 8, 8192, 1024), 256: (32, 4, 2, 8, 8, 8192, 1024),
                    512: (64, 8, 2, 8, 8, 8192, 1024), 1024: (64, 8, 2, 8, 8, 8192, 2048),
                    2048: (64, 8, 2, 8, 8, 8192, 4096)}
DGXC_GROK_STEPS = {"bf16": [24.00, 21.71, 10.70, 21.42, 20.73, 20.83, 21.01, 21.20, 21.29],
                   "fp8": [19.71, 17.80, 8.70, 17.53, 16.70, 16.75, 16.90, 17.01, 17.30]}
grok_base = open(os.path.join(HERE, "sources", "dgxc-v25.02-grok1_314b.yaml")).read()
for layers in sorted({v[0] for v in DGXC_GROK_SCALES.values()}):
    for dtype in ("bf16", "fp8"):
        model("grok1-%dl-%s" % (layers, dtype), "Grok-1 as NeMo's grok1_314b.yaml (dgxc-benchmarking "
              "v25.02) builds it, with %d of its 64 layers (configure.sh's layer count at the "
              "scales that ran it): hidden 6144, 48 heads, 8 KV heads, 8 experts top-2 of ffn 32768 "
              "GeGLU (gated: encoded as swiglu, the same GEMM shapes), token drop at capacity 1 with "
              "each expert's input padded to it, the Llama 3 tokenizer (128,256) padded to a "
              "multiple of 128 x TP 4 (128,512), untied; %s GEMMs" % (layers, dtype.upper()),
              layers, 6144, 32768, 48, 8, 128512, "swiglu", dtype, False,
              moe={"experts": 8, "top_k": 2, "expert_ffn_hidden": 32768, "capacity_factor": 1.0,
                   "pad_to_capacity": True})
for dtype in ("bf16", "fp8"):
    fp8 = dtype == "fp8"
    for k, (gpus, (layers, pp, cp, ep, vp, seq, gbs)) in enumerate(sorted(DGXC_GROK_SCALES.items())):
        nodes, tp, t = gpus // 8, 4, DGXC_GROK_STEPS[dtype][k]
        dp = gpus // (tp * pp * cp)
        overlap_opt = pp > 1
        rid = "dgxc2502-grok1-%s-%d" % (dtype, gpus)
        overrides = [
            ("model.global_batch_size", str(gbs)), ("trainer.num_nodes", str(nodes)),
            ("model.encoder_seq_length", str(seq)), ("model.data.seq_length", str(seq)),
            ("model.tensor_model_parallel_size", str(tp)),
            ("model.pipeline_model_parallel_size", str(pp)),
            ("model.context_parallel_size", str(cp)), ("model.expert_model_parallel_size", str(ep)),
            ("model.virtual_pipeline_model_parallel_size", str(vp) if vp else "null"),
            ("model.num_layers", str(layers)),
            ("model.optim.overlap_param_gather_with_optimizer_step", str(overlap_opt).lower()),
            ("model.fp8", str(fp8)), ("model.ub_tp_comm_overlap", "true"),
            ("model.sequence_parallel", "true"), ("model.micro_batch_size", "1"),
            ("model.mcore_gpt", "true"), ("model.transformer_engine", "true"),
            ("model.fp8_hybrid", "true"), ("model.fp8_params", str(fp8)),
            ("model.gc_interval", "40")]
        text = hydra_overridden(grok_base, overrides)
        header = ("# NVIDIA/dgxc-benchmarking v25.02 (8f5cbb3) grok1/grok1_314b.yaml with the overrides "
                  "of its\n# configure.sh for %d nodes (the run-bookkeeping ones left out):\n# %s\n" % (
                      nodes, " ".join(key + "=" + value for key, value in overrides)))
        nemo_fixture(rid, header, text)
        doc = {
            "format": "scaleacross.plan", "version": 1, "name": rid,
            "description": "dgxc-benchmarking v25.02: NeMo 24.12 Grok-1 (%d layers) %s on %d H100, TP4 "
                           "PP%d%s CP%d EP%d DP%d, MBS 1, GBS %d, seq %d" % (
                               layers, dtype.upper(), gpus, pp, " VP%d" % vp if vp else "", cp, ep,
                               dp, gbs, seq),
            "sequence_length": seq, "global_batch_sequences": gbs, "micro_batch_sequences": 1,
            "parallelism": {"tp": tp, "cp": cp, "pp": pp, "dp": dp, "ep": ep},
            "zero_stage": 1, "recompute": "none", "sequence_parallel": True,
            "schedule": {"kind": "interleaved", "virtual_stages": vp} if vp else
                        {"kind": "1f1b", "virtual_stages": 1},
            "rank_order": ["tp", "cp", "dp", "pp"], "dp_overlap": True, "tp_comm_overlap": True,
            "dp_bucket_mib": max(40e6, 1e6 * dp * cp) * 2 / (1024 * 1024),
            "grad_reduce_bytes": 2, "flash_attention": True}
        if fp8:
            nemo_fp8(doc)
        appended(doc, "dgxc-benchmarking", DGXC_GROK % (dtype.upper(), gpus, t),
                 "dgx-cloud-h100.json", "grok1-%dl-%s" % (layers, dtype), t, gbs, gpus, [
                DGXC_LAST_STEP,
                "launch configuration: tests/data/frameworks/nemo/%s.yaml, the release's "
                "grok1_314b.yaml (sources/dgxc-v25.02-grok1_314b.yaml) with the overrides of its "
                "configure.sh for %d nodes (%d layers, PP %d, CP %d, EP %d, sequence %d, GBS %d); the "
                "plan is the NeMo importer's reading of it: TP 4 with sequence parallelism and TP "
                "communication overlap, the experts split over TP as well (Megatron-Core 0.10's "
                "expert_tensor_parallel_size defaults to TP), the all-to-all dispatcher, token drop "
                "at capacity 1 with each expert's input padded to it (every expert runs its capacity "
                "whatever the routing), %s, no recompute, Megatron-Core's distributed optimizer with "
                "overlapped grad and param sync, BF16 gradient sync, no dropout%s" % (
                    rid, nodes, layers, pp, cp, ep, seq, gbs,
                    "interleaved PP with overlapped, unbatched P2P" if pp > 1 else "no PP",
                    ", FP8 with delayed scaling (amax history 1024, max) and FP8 parameters"
                    if fp8 else ""),
                "not modelled: overlap_param_gather_with_optimizer_step (PP > 1: the first "
                "bucket's all-gather starts inside the optimizer step), sequential expert GEMMs "
                "(moe_grouped_gemm false; %d local expert%s a rank), the expert grid's own rank order "
                "(Megatron-Core 0.10 lays EP over consecutive TP groups, the documents carve EP out "
                "of DP at stride TP x CP: %s)" % (
                    8 // ep, "" if ep == 8 else "s",
                    "the all-to-all stays inside a node either way" if tp * cp * ep <= 8 else
                    "the all-to-all crosses nodes either way"),
                DGXC_MACHINE,
            ])

dump("runs.json", index)
print("%d runs (%d new)" % (len(index["runs"]), len(runs)))

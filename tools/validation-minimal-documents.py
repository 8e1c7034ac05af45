#!/usr/bin/env python3
"""How far a published run's structure alone takes the cost model.

Evaluates every run of tests/validation/published/runs.json twice with the
CLI: with its plan and cluster as encoded (every software knob the run's
launch configuration gives), and with them cut down to the keys the first
published-runs documents used (parallelism, batch, ZeRO stage, recompute,
schedule, rank order, placement, DP overlap, gradient bytes, flash
attention; no framework, kernels, FP8 recipe, power limit, ...), where the
plan format's defaults stand in for the rest. Prints the error per run and
per family for both. docs/VALIDATION.md ("Documents without the software
knobs") quotes it.

  tools/validation-minimal-documents.py BUILD/app/scaleacross

Micro batch and interleaving are taken as the plans store them (the
validation test's search for unpublished ones is not repeated), so the
"as encoded" column differs from tst_validation's table on those rows.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = os.path.join(ROOT, "tests", "validation", "published")
MINIMAL_PLAN_KEYS = {
    "format", "version", "name", "description", "sequence_length",
    "global_batch_sequences", "micro_batch_sequences", "parallelism",
    "zero_stage", "recompute", "sequence_parallel", "schedule", "rank_order",
    "placement", "dp_overlap", "grad_reduce_bytes", "flash_attention",
}
GPU_KEYS_DROPPED = ("tdp_w", "power_limit_w")


def minimal(plan, cluster):
    plan = {k: v for k, v in plan.items() if k in MINIMAL_PLAN_KEYS}
    if plan.get("recompute") == "selective-op":
        plan["recompute"] = "selective"  # what the first documents wrote for it
    for gpu in cluster.get("gpu_models", {}).values():
        for k in GPU_KEYS_DROPPED:
            gpu.pop(k, None)
    return plan, cluster


def predicted(cli, cluster, model, plan, tmp):
    p = os.path.join(tmp, "plan.json")
    c = os.path.join(tmp, "cluster.json")
    with open(p, "w") as f:
        json.dump(plan, f)
    with open(c, "w") as f:
        json.dump(cluster, f)
    out = subprocess.run([cli, "evaluate", "--cluster", c, "--model", model, "--plan", p,
                          "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    e = json.loads(out.stdout)
    tokens = plan["global_batch_sequences"] * plan["sequence_length"]
    return tokens / e["step_time_s"] / e["gpus"]


def summary(errors):
    n = len(errors)
    return (f"{n:3d} runs  signed {sum(errors) / n:+6.1%}  mean |error| "
            f"{sum(map(abs, errors)) / n:6.1%}  max {max(map(abs, errors)):6.1%}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cli = os.path.abspath(sys.argv[1])
    with open(os.path.join(BASE, "runs.json")) as f:
        runs = json.load(f)["runs"]
    families = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in runs:
            with open(os.path.join(BASE, r["plan"])) as f:
                plan = json.load(f)
            with open(os.path.join(BASE, r["cluster"])) as f:
                cluster = json.load(f)
            model = os.path.join(BASE, r["model"])
            measured = r["measured_tokens_per_s_per_gpu"]
            full = predicted(cli, json.loads(json.dumps(cluster)), model, plan, tmp)
            mplan, mcluster = minimal(json.loads(json.dumps(plan)), json.loads(json.dumps(cluster)))
            cut = predicted(cli, mcluster, model, mplan, tmp)
            if full is None or cut is None:
                print(f"{r['id']:46s} not evaluated")
                continue
            ef, ec = full / measured - 1, cut / measured - 1
            families.setdefault(r["family"], ([], []))
            families[r["family"]][0].append(ef)
            families[r["family"]][1].append(ec)
            print(f"{r['id']:46s} as encoded {ef:+7.1%}   minimal {ec:+7.1%}")
    print()
    everything = ([], [])
    for fam, (ef, ec) in families.items():
        everything[0].extend(ef)
        everything[1].extend(ec)
        print(f"{fam:24s} as encoded: {summary(ef)}")
        print(f"{'':24s} minimal:    {summary(ec)}")
    print(f"{'overall':24s} as encoded: {summary(everything[0])}")
    print(f"{'':24s} minimal:    {summary(everything[1])}")


if __name__ == "__main__":
    main()

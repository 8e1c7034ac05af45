#!/usr/bin/env python3
"""How far a published run's structure alone takes the cost model.

Evaluates every run of tests/validation/published/runs.json twice with
`scaleacross validate`: with its plan and cluster as encoded (every software knob the run's
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


def validate(cli, runs, tmp, name):
    """The runs as an index of their own (no search), through `scaleacross
    validate --json`: {id: error}, and the per-family summaries."""
    index = os.path.join(tmp, name + ".json")
    with open(index, "w") as f:
        json.dump({"runs": runs}, f)
    out = subprocess.run([cli, "validate", index, "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    result = json.loads(out.stdout)
    return {r["id"]: r["error"] for r in result["rows"]}, result


def summary(stats):
    return (f"{stats['runs']:3d} runs  signed {stats['mean_error']:+6.1%}  mean |error| "
            f"{stats['mean_abs_error']:6.1%}  max {stats['max_abs_error']:6.1%}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cli = os.path.abspath(sys.argv[1])
    with open(os.path.join(BASE, "runs.json")) as f:
        runs = json.load(f)["runs"]
    encoded, cut = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i, r in enumerate(runs):
            with open(os.path.join(BASE, r["plan"])) as f:
                plan = json.load(f)
            with open(os.path.join(BASE, r["cluster"])) as f:
                cluster = json.load(f)
            entry = {"id": r["id"], "family": r["family"],
                     "cluster": os.path.join(BASE, r["cluster"]),
                     "model": os.path.join(BASE, r["model"]),
                     "plan": os.path.join(BASE, r["plan"]),
                     "measured_tokens_per_s_per_gpu": r["measured_tokens_per_s_per_gpu"]}
            encoded.append(entry)
            mplan, mcluster = minimal(plan, cluster)
            for kind, doc in (("plan", mplan), ("cluster", mcluster)):
                path = os.path.join(tmp, "%s-%d.json" % (kind, i))
                with open(path, "w") as f:
                    json.dump(doc, f)
                entry = dict(entry, **{kind: path})
            cut.append(entry)
        full, full_summary = validate(cli, encoded, tmp, "encoded")
        minimal_errors, minimal_summary = validate(cli, cut, tmp, "minimal")
    for r in runs:
        print(f"{r['id']:46s} as encoded {full[r['id']]:+7.1%}   "
              f"minimal {minimal_errors[r['id']]:+7.1%}")
    print()
    for f, m in zip(full_summary["families"], minimal_summary["families"]):
        print(f"{f['name']:24s} as encoded: {summary(f)}")
        print(f"{'':24s} minimal:    {summary(m)}")
    print(f"{'overall':24s} as encoded: {summary(full_summary['overall'])}")
    print(f"{'':24s} minimal:    {summary(minimal_summary['overall'])}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets from sample_clusters/ and
tests/validation/ (run from anywhere; rewrites tests/fuzz/corpus/*/seed-*).

cluster, model, plan: every sample document, compact (descriptions dropped).
scenario, evaluate:   every sample scenario with its three parts inline, the
                      Megatron 1.7B validation run, and small variants that
                      reach the schedules, ZeRO-3, EP and explicit placement
                      on few GPUs. scenario also gets part references that
                      do not resolve (the fuzzer runs with an empty folder).
Regression inputs (crashes found by fuzzing) are named regress-*, and inputs
the fuzzers found that add coverage beyond the seeds are named found-*; both
are kept."""

import copy
import glob
import json
import os

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")


def load(path):
    with open(os.path.join(ROOT, path)) as f:
        doc = json.load(f)
    doc.pop("description", None)
    return doc


def dump(doc):
    return json.dumps(doc, separators=(",", ":")) + "\n"


def write(target, name, doc):
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    with open(os.path.join(OUT, target, "seed-" + name), "w") as f:
        f.write(doc if isinstance(doc, str) else dump(doc))


def inline(scenario_path):
    s = load(scenario_path)
    base = os.path.dirname(scenario_path)
    out = {"format": s["format"], "version": s["version"]}
    for part in ("cluster", "model", "plan"):
        doc = load(os.path.normpath(os.path.join(base, s[part])))
        del doc["format"], doc["version"]
        out[part] = doc
    return out


def main():
    for old in glob.glob(os.path.join(OUT, "*", "seed-*")):
        os.remove(old)
    for kind, pattern in (("cluster", "sample_clusters/clusters/*.json"),
                          ("model", "sample_clusters/models/*.json"),
                          ("plan", "sample_clusters/plans/*.json")):
        for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
            write(kind, os.path.basename(path), load(os.path.relpath(path, ROOT)))
    write("cluster", "selene-a100.json", load("tests/validation/selene-a100.json"))
    write("model", "megatron-1.7b.json", load("tests/validation/model-megatron-gpt-1.7b.json"))
    write("plan", "megatron-1.7b.json", load("tests/validation/plan-megatron-gpt-1.7b.json"))

    scenarios = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "sample_clusters/scenarios/*.json"))):
        scenarios[os.path.basename(path)] = inline(os.path.relpath(path, ROOT))

    megatron = {"format": "scaleacross.scenario", "version": 1}
    for part, path in (("cluster", "tests/validation/selene-a100.json"),
                       ("model", "tests/validation/model-megatron-gpt-1.7b.json"),
                       ("plan", "tests/validation/plan-megatron-gpt-1.7b.json")):
        doc = load(path)
        del doc["format"], doc["version"]
        megatron[part] = doc
    scenarios["megatron-1.7b.json"] = megatron

    # Small variants on the heterogeneous pair with Llama 3 8B (32 layers).
    small = inline("sample_clusters/scenarios/hetero-70b.json")
    small["model"] = load("sample_clusters/models/llama3-8b.json")
    del small["model"]["format"], small["model"]["version"]
    small["cluster"]["buildings"][0]["gpus"] = 64
    small["cluster"]["buildings"][1]["gpus"] = 64
    for b in small["cluster"]["buildings"]:
        b["zone_gpus"] = 32
    plan = small["plan"]
    plan.update({"name": "small", "sequence_length": 4096, "global_batch_sequences": 32,
                 "parallelism": {"tp": 2, "cp": 2, "pp": 4, "dp": 4, "ep": 1}})
    plan["placement"] = {"runs": [{"stages": [0, 1], "replicas": [0, 3], "building": "B1"},
                                  {"stages": [2, 3], "replicas": [0, 3], "building": "B2"}],
                         "layers_per_stage": [6, 6, 10, 10]}
    variants = {
        "interleaved": {"schedule": {"kind": "interleaved", "virtual_stages": 2},
                        "collectives": {"dp": "hierarchical", "tp": "ring"}},
        "zero-bubble": {"schedule": {"kind": "zero-bubble"}, "zero_stage": 3,
                        "recompute": "full", "dp_overlap": False},
        "gpipe": {"schedule": {"kind": "gpipe"}, "grad_reduce_bytes": 2,
                  "flash_attention": False, "sequence_parallel": False},
        "selective-modules": {"recompute": "selective",
                              "recompute_modules": ["core_attn", "layernorm", "mlp"]},
        "compiled": {"elementwise": "compiled", "cross_entropy": "pytorch",
                     "recompute": "selective-op"},
        "latency-hiding": {"schedule": {"kind": "1f1b", "latency_hiding": True},
                           "link_technologies": {"B1-B2": {"technology": "tcp", "flows": 8}},
                           "rank_order": ["tp", "cp", "dp", "pp"]},
    }
    for name, change in variants.items():
        s = copy.deepcopy(small)
        s["plan"].update(change)
        scenarios["small-" + name + ".json"] = s
    moe = inline("sample_clusters/scenarios/two-buildings-mixtral.json")
    moe["cluster"]["technologies"] = {"tcp-64": {"efficiency": 0.9, "window_mib": 16,
                                                 "flows": 64, "loss_rate": 1e-6,
                                                 "lossless": False}}
    moe["cluster"]["links"][0]["technology"] = "tcp-64"
    moe["plan"].update({"global_batch_sequences": 64, "zero_stage": 3,
                        "parallelism": {"tp": 8, "cp": 1, "pp": 4, "dp": 16, "ep": 8}})
    scenarios["small-moe.json"] = moe
    moe = copy.deepcopy(moe)
    moe["plan"].update({"zero_stage": 1, "recompute": "selective",
                        "recompute_modules": ["moe_act", "shared_experts", "moe"]})
    scenarios["small-moe-recompute-modules.json"] = moe
    # The GPU models' clocks and CUDA graphs.
    clocks = copy.deepcopy(small)
    for g in clocks["cluster"]["gpu_models"].values():
        g.update({"boost_clock_mhz": 1980, "sustained_clock_mhz": 1755})
    clocks["plan"]["cuda_graphs"] = True
    scenarios["small-clocks-graphs.json"] = clocks

    for name, s in scenarios.items():
        write("scenario", name, s)
        write("evaluate", name, s)
    write("scenario", "references.json",
          {"format": "scaleacross.scenario", "version": 1, "cluster": "clusters/c.json",
           "model": "../models/m.json", "plan": "plan.json"})
    write("scenario", "empty-object.json", "{}\n")


if __name__ == "__main__":
    main()

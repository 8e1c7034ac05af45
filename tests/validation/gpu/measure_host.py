#!/usr/bin/env python3
"""What the host spends issuing one PyTorch op to the GPU, and what a
device-to-host synchronisation costs: the figures a model of host-bound
layers needs (a layer whose kernels are shorter than the host's time to
issue them runs at the host's pace; a sync, as Megatron-Core's all-to-all
MoE dispatcher makes once per layer, drains the GPU's queue so that the
host cannot run ahead).

Each op runs on tensors so small that its kernel takes a few microseconds:
the wall time per op, with the GPU keeping up, is the host's issue time.
Forward ops are timed from Python (eager dispatch + launch); backward ops
through the autograd engine (C++). Writes host.json to $OUT.

Usage: OUT=dir python3 measure_host.py
"""

import json
import os
import statistics
import time

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", ".")
R = {"ops": {}}


def per_call(fn, n=2000, rounds=7):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t) / n)
    return statistics.median(out)


def main():
    dev = "cuda"
    a = torch.randn(64, 64, device=dev, dtype=torch.bfloat16)
    b = torch.randn(64, 64, device=dev, dtype=torch.bfloat16)
    w = torch.randn(64, 64, device=dev, dtype=torch.bfloat16)
    idx = torch.randint(0, 64, (64,), device=dev)
    logits = torch.randn(64, 128, device=dev)
    ops = {
        "add": lambda: a + b,
        "mul_scalar": lambda: a * 2.0,
        "silu": lambda: F.silu(a),
        "linear": lambda: F.linear(a, w),
        "softmax": lambda: torch.softmax(logits, dim=-1),
        "topk": lambda: torch.topk(logits, 8, dim=-1),
        "index_select": lambda: a.index_select(0, idx),
        "cumsum": lambda: torch.cumsum(idx, 0),
        "view_reshape": lambda: a.view(-1).reshape(64, 64),  # no kernel
        "empty_like": lambda: torch.empty_like(a),
    }
    for name, fn in ops.items():
        R["ops"][name] = per_call(fn)
        print("%-14s %6.2f us per op (host)" % (name, R["ops"][name] * 1e6), flush=True)

    # The same add from a CUDA graph: the GPU's own time per tiny kernel.
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            a + b
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(100):
            a + b
    R["graph_add_per_kernel_s"] = per_call(g.replay, n=200) / 100
    print("add in a CUDA graph: %.2f us per kernel (GPU)" % (R["graph_add_per_kernel_s"] * 1e6))

    # Autograd: a chain of n elementwise ops, forward recorded, then backward.
    x = torch.randn(64, 64, device=dev, requires_grad=True)
    n = 200

    def chain():
        y = x
        for _ in range(n):
            y = y * 1.001 + 0.0
        return y.sum()

    fwd = per_call(lambda: chain(), n=20)
    both = per_call(lambda: chain().backward(), n=20)
    R["autograd_fwd_per_op_s"] = fwd / (2 * n)
    R["autograd_bwd_per_op_s"] = (both - fwd) / (2 * n)
    print("autograd: forward %.2f us, backward %.2f us per op"
          % (R["autograd_fwd_per_op_s"] * 1e6, R["autograd_bwd_per_op_s"] * 1e6))

    # A device-to-host sync with the GPU idle: .item(), .cpu() and
    # torch.cuda.synchronize().
    t = torch.ones(8, device=dev, dtype=torch.int64)
    R["sync_item_s"] = per_call(lambda: t.sum().item(), n=500)
    R["sync_cpu_s"] = per_call(lambda: t.cpu(), n=500)
    R["sync_synchronize_s"] = per_call(torch.cuda.synchronize, n=500)
    print("sync: sum().item() %.2f us, .cpu() %.2f us, synchronize %.2f us"
          % (R["sync_item_s"] * 1e6, R["sync_cpu_s"] * 1e6, R["sync_synchronize_s"] * 1e6))
    try:
        import platform
        R["cpu"] = platform.processor() or ""
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    R["cpu"] = line.split(":", 1)[1].strip()
                    break
    except Exception:  # noqa: BLE001
        pass
    R["torch"] = torch.__version__
    R["gpu"] = torch.cuda.get_device_name(0)
    print("cpu:", R.get("cpu"))
    with open(os.path.join(OUT, "host.json"), "w") as f:
        json.dump(R, f, indent=1)


if __name__ == "__main__":
    main()

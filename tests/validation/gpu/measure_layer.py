#!/usr/bin/env python3
"""Measure one transformer layer and its GEMMs on the GPU at hand.

What the cost model predicts is checked against these figures by
tst_validation (gpuLayer); the figures are committed beside this script
(tests/validation/gpu/README.md says how they were taken). The test needs
no GPU; this script does.

The layer is torchtitan's Llama block (torchtitan 9dec370,
torchtitan/models/llama/model.py and models/norms.py: RMSNorm in fp32, RoPE
through complex multiplies, repeat_kv, SDPA, separate wq/wk/wv and
w1/w3/w2 linears) with the shard shapes one rank of Llama 3 70B holds at
tensor parallelism 4 with sequence parallelism: the norms and residual adds
run on sequence / 4 tokens, the linears and the attention on the whole
sequence. The sequence-parallel all-gather and reduce-scatter are replaced
by a local copy (repeat) and its backward (a sum), so the figures are the
compute stream alone.

Variants: BF16 eager; BF16 with torch.compile; FP8 linears (per-tensor
dynamic scaling, torchao's "tensorwise" recipe: E4M3 inputs and weights,
E5M2 output gradients, torch._scaled_mm, fast accumulation in the forward
only) eager and compiled. Also: GEMM TFLOP/s over shapes (BF16 and FP8),
the fused attention kernels (flash and cuDNN through SDPA) over sequence
lengths, and the HBM copy bandwidth.

Usage: OUT=dir python3 measure_layer.py   (writes gemm.csv, layer.json, log)
"""

import json
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", ".")
T0 = time.time()
BUDGET_S = float(os.environ.get("MEASURE_BUDGET_S", "330"))
LOG = open(os.path.join(OUT, "log.txt"), "w")
RESULT = {"variants": {}, "gemm": [], "attention": [], "errors": []}


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


def elapsed():
    return time.time() - T0


def save():
    with open(os.path.join(OUT, "layer.json"), "w") as f:
        json.dump(RESULT, f, indent=1)


def timed(fn, iters, rounds=5):
    """Median over rounds of the mean time of `iters` back-to-back calls
    (device events; the host runs ahead as in training)."""
    fn()
    torch.cuda.synchronize()
    per = []
    for _ in range(rounds):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        e.synchronize()
        per.append(s.elapsed_time(e) / 1e3 / iters)
    return statistics.median(per), min(per), max(per)


def timed_graph(fn, iters, rounds=5):
    """As timed, with the `iters` calls captured in one CUDA graph and
    replayed: the kernels' own time, without the host's launch cost (which
    bounds kernels of a few microseconds when launched from Python). Falls
    back to plain launches where capture fails."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(iters):
                fn()
        med, lo, hi = timed(graph.replay, 1, rounds)
        return med / iters, lo / iters, hi / iters, True
    except Exception as ex:  # noqa: BLE001
        RESULT["errors"].append("graph capture: %r" % ex)
        torch.cuda.synchronize()
        med, lo, hi = timed(fn, iters, rounds)
        return med, lo, hi, False


def env():
    p = torch.cuda.get_device_properties(0)
    RESULT["device"] = {
        "name": p.name,
        "sms": p.multi_processor_count,
        "memory_gib": p.total_memory / 2**30,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
    }
    try:
        q = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,power.limit,power.default_limit,"
             "power.max_limit,clocks.max.sm,clocks.max.mem,driver_version",
             "--format=csv"], capture_output=True, text=True, timeout=20)
        RESULT["device"]["nvidia_smi"] = q.stdout.strip()
    except Exception as ex:  # noqa: BLE001
        RESULT["errors"].append("nvidia-smi: %r" % ex)
    log("device", json.dumps(RESULT["device"]))


def smi_clocks(tag):
    try:
        q = subprocess.run(
            ["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu",
             "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        RESULT.setdefault("clocks", []).append({"when": tag, "reading": q.stdout.strip()})
        log("clocks", tag, q.stdout.strip())
    except Exception as ex:  # noqa: BLE001
        RESULT["errors"].append("nvidia-smi clocks: %r" % ex)


def copy_bandwidth():
    n = 2 * 2**30  # bytes per buffer
    a = torch.randn(n // 2, device="cuda", dtype=torch.bfloat16)
    b = torch.empty_like(a)
    med, lo, hi = timed(lambda: b.copy_(a), 10)
    RESULT["copy_tbps"] = 2 * n / med / 1e12
    log("copy  %.2f TB/s (read + write)" % RESULT["copy_tbps"])
    del a, b


# ------------------------------------------------------------------ FP8
E4M3 = torch.float8_e4m3fn
E5M2 = torch.float8_e5m2


def to_fp8(x, dtype):
    """torchao's tensorwise cast (float8/float8_scaling_utils.py
    hp_tensor_to_float8_dynamic): amax of |x|, scale = max / amax, saturate,
    cast. Returns the FP8 tensor and its inverse scale."""
    amax = torch.max(torch.abs(x)).to(torch.float32)
    scale = torch.finfo(dtype).max / torch.clamp(amax, min=1e-12)
    fmax = torch.finfo(dtype).max
    y = (x.to(torch.float32) * scale).clamp(-fmax, fmax).to(dtype)
    return y, scale.reciprocal()


def mm8(a8, sa, b8_colmajor, sb, fast):
    return torch._scaled_mm(a8, b8_colmajor, scale_a=sa, scale_b=sb,
                            out_dtype=torch.bfloat16, use_fast_accum=fast)


class Fp8Matmul(torch.autograd.Function):
    """y = x W^T with every GEMM in FP8 (torchao Float8Linear, tensorwise):
    forward E4M3 x E4M3, dgrad E5M2 x E4M3, wgrad E5M2 x E4M3; the BF16 x and
    W are saved and cast again in the backward (no FP8 copy is kept)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        x2 = x.reshape(-1, x.shape[-1])
        x8, sx = to_fp8(x2, E4M3)
        w8, sw = to_fp8(w, E4M3)
        y = mm8(x8, sx, w8.t(), sw, True)
        return y.reshape(*x.shape[:-1], w.shape[0])

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        x2 = x.reshape(-1, x.shape[-1])
        dy2 = dy.reshape(-1, dy.shape[-1])
        g8, sg = to_fp8(dy2, E5M2)
        wt8, sw = to_fp8(w.t().contiguous(), E4M3)          # [in, out]
        dx = mm8(g8, sg, wt8.t(), sw, False)                 # [T, in]
        gt8 = g8.t().contiguous()                            # [out, T]
        xt8, sx = to_fp8(x2.t().contiguous(), E4M3)          # [in, T]
        dw = mm8(gt8, sg, xt8.t(), sx, False)                # [out, in]
        return dx.reshape(x.shape), dw


# ---------------------------------------------------------------- layer
class Cfg:
    """Llama 3 70B at TP 4 (the default), or another of CONFIGS."""
    hidden = 8192
    heads = 64
    kv_heads = 8
    head_dim = 128
    ffn = 28672
    tp = 4
    seq = 8192
    eps = 1e-5
    batch = 1  # sequences a microbatch
    gpt = False  # Megatron's GPT block instead of torchtitan's Llama block
    vocab = 128256

    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)


# name -> shape: Llama 3 70B at TP 4, and Llama 3.1 8B on one GPU (the
# torchtitan FSDP runs' layer).
CONFIGS = {
    "llama3-70b-tp4": {},
    "llama3-8b-tp1": {"hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336, "tp": 1},
    # The GPT 1.7B of Megatron-Core r0.8.0's weak-scaling table at micro
    # batch 4 (its validation row): LayerNorm, fused QKV, learned positions
    # (no RoPE), GeLU MLP, biases, vocabulary 131072.
    "gpt-1.7b-mbs4": {"hidden": 2048, "heads": 16, "kv_heads": 16, "ffn": 8192, "tp": 1,
                      "seq": 4096, "batch": 4, "gpt": True, "vocab": 131072},
}
# The variants run per configuration: (name, linear, compiled, attention).
LLAMA_VARIANTS = (("bf16-eager-flash", "bf16", False, "flash"),
                  ("bf16-eager-cudnn", "bf16", False, "cudnn"),
                  ("fp8-eager-flash", "fp8", False, "flash"),
                  ("bf16-compiled-flash", "bf16", True, "flash"),
                  ("fp8-compiled-flash", "fp8", True, "flash"))
# Megatron runs its GPT block through Transformer Engine's fused kernels:
# compiled is the closer stand-in, and the model's eager op list is
# torchtitan's Llama block's. (A compiled cuDNN variant after the flash one
# reused the flash graph from Inductor's cache and measured flash again.)
GPT_VARIANTS = (("bf16-compiled-flash", "bf16", True, "flash"),)


def make_params(c):
    g = lambda *s: (torch.randn(*s, device="cuda", dtype=torch.bfloat16) * 0.02).requires_grad_()
    hq = c.heads // c.tp * c.head_dim
    hk = c.kv_heads // c.tp * c.head_dim
    f = c.ffn // c.tp
    if c.gpt:
        ones = lambda n: torch.ones(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        zeros = lambda n: torch.zeros(n, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        return {
            "ln1_w": ones(c.hidden), "ln1_b": zeros(c.hidden),
            "ln2_w": ones(c.hidden), "ln2_b": zeros(c.hidden),
            "wqkv": g(hq + 2 * hk, c.hidden), "bqkv": zeros(hq + 2 * hk),
            "wo": g(c.hidden, hq), "bo": zeros(c.hidden),
            "w1": g(f, c.hidden), "b1": zeros(f), "w2": g(c.hidden, f), "b2": zeros(c.hidden),
        }
    return {
        "attn_norm": torch.ones(c.hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True),
        "ffn_norm": torch.ones(c.hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True),
        "wq": g(hq, c.hidden), "wk": g(hk, c.hidden), "wv": g(hk, c.hidden),
        "wo": g(c.hidden, hq),
        "w1": g(f, c.hidden), "w3": g(f, c.hidden), "w2": g(c.hidden, f),
    }


def rmsnorm(x, w, eps):
    # torchtitan 9dec370 models/norms.py RMSNorm
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).type_as(x) * w


def rope(xq, xk, freqs):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    f = freqs.view(1, xq_.shape[1], 1, xq_.shape[-1])
    return (torch.view_as_real(xq_ * f).flatten(3).type_as(xq),
            torch.view_as_real(xk_ * f).flatten(3).type_as(xk))


def repeat_kv(x, n):
    if n == 1:
        return x
    b, s, h, d = x.shape
    return x.unsqueeze(3).expand(b, s, h, n, d).reshape(b, s, h * n, d)


def gpt_block(p, x, c, lin):
    """Megatron-Core's GPT layer (tp 1): pre-LayerNorm, fused QKV with bias,
    causal attention, projection, GeLU MLP, residual adds. x: [b, s, h]."""
    b, s = c.batch, c.seq
    n = F.layer_norm(x, (c.hidden,), p["ln1_w"], p["ln1_b"], c.eps)
    qkv = lin(n, p["wqkv"]) + p["bqkv"]
    q, k, v = qkv.view(b, s, 3 * c.heads, c.head_dim).split(c.heads, dim=2)
    o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                       is_causal=True)
    o = o.transpose(1, 2).contiguous().view(b, s, -1)
    h = x + lin(o, p["wo"]) + p["bo"]
    n2 = F.layer_norm(h, (c.hidden,), p["ln2_w"], p["ln2_b"], c.eps)
    m = lin(F.gelu(lin(n2, p["w1"]) + p["b1"]), p["w2"]) + p["b2"]
    return h + m


def block(p, x, freqs, c, lin):
    """x: [1, seq / tp, hidden] (the sequence-parallel shard)."""
    if c.gpt:
        return gpt_block(p, x, c, lin)
    def gather(y):  # stands in for the SP all-gather: [1, s/tp, h] -> [1, s, h]
        return y.repeat(1, c.tp, 1) if c.tp > 1 else y

    def scatter(y):  # stands in for the SP reduce-scatter: keep one shard
        return y[:, : y.shape[1] // c.tp] if c.tp > 1 else y

    b, s = 1, c.seq
    n = gather(rmsnorm(x, p["attn_norm"], c.eps))
    xq, xk, xv = lin(n, p["wq"]), lin(n, p["wk"]), lin(n, p["wv"])
    xq = xq.view(b, s, -1, c.head_dim)
    xk = xk.view(b, s, -1, c.head_dim)
    xv = xv.view(b, s, -1, c.head_dim)
    xq, xk = rope(xq, xk, freqs)
    rep = c.heads // c.kv_heads
    k = repeat_kv(xk, rep).transpose(1, 2)
    v = repeat_kv(xv, rep).transpose(1, 2)
    o = F.scaled_dot_product_attention(xq.transpose(1, 2), k, v, is_causal=True)
    o = o.transpose(1, 2).contiguous().view(b, s, -1)
    h = x + scatter(lin(o, p["wo"]))
    n2 = gather(rmsnorm(h, p["ffn_norm"], c.eps))
    m = lin(F.silu(lin(n2, p["w1"])) * lin(n2, p["w3"]), p["w2"])
    return h + scatter(m)


def bf16_linear(x, w):
    return F.linear(x, w)


def fp8_linear(x, w):
    return Fp8Matmul.apply(x, w)


def measure_layer(config, name, lin, compiled, backend):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    c = Cfg(**CONFIGS[config])
    name = config + "/" + name
    p = make_params(c)
    x = torch.randn(c.batch, c.seq // c.tp, c.hidden, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    dy = torch.randn_like(x)
    theta = 500000.0
    inv = 1.0 / (theta ** (torch.arange(0, c.head_dim, 2, device="cuda").float() / c.head_dim))
    freqs = torch.polar(torch.ones(c.seq, c.head_dim // 2, device="cuda"),
                        torch.outer(torch.arange(c.seq, device="cuda").float(), inv))
    fn = lambda xx: block(p, xx, freqs, c, lin)
    params = list(p.values()) + [x]
    if compiled:
        torch._dynamo.reset()  # a fresh compilation (no shapes made dynamic by an earlier one)
        fn = torch.compile(fn)
    kern = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[backend]
    with sdpa_kernel([kern]):
        t = time.time()
        for _ in range(3):  # warm-up (and compilation)
            out = fn(x)
            out.backward(dy)
        torch.cuda.synchronize()
        warm = time.time() - t
        iters = 10
        fw, bw = [], []
        for _ in range(4):
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(3 * iters)]
            for i in range(iters):
                for t in params:  # as the optimizer's zero_grad(set_to_none=True) leaves them
                    t.grad = None
                ev[3 * i].record()
                out = fn(x)
                ev[3 * i + 1].record()
                out.backward(dy)
                ev[3 * i + 2].record()
            torch.cuda.synchronize()
            fw += [ev[3 * i].elapsed_time(ev[3 * i + 1]) / 1e3 for i in range(iters)]
            bw += [ev[3 * i + 1].elapsed_time(ev[3 * i + 2]) / 1e3 for i in range(iters)]
    r = {"fwd_s": statistics.median(fw), "bwd_s": statistics.median(bw),
         "fwd_min_s": min(fw), "bwd_min_s": min(bw), "warmup_s": warm,
         "attention": backend, "compiled": compiled,
         "linear": "fp8" if lin is fp8_linear else "bf16",
         "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30}
    RESULT["variants"][name] = r
    log("layer %-22s fwd %.3f ms  bwd %.3f ms  (min %.3f / %.3f, warm-up %.1f s)"
        % (name, r["fwd_s"] * 1e3, r["bwd_s"] * 1e3, r["fwd_min_s"] * 1e3,
           r["bwd_min_s"] * 1e3, warm))
    save()
    del p, x, dy, out
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()


# ---------------------------------------------------------------- GEMMs
def gemm_shapes():
    c = Cfg()
    hq = c.heads // c.tp * c.head_dim
    hk = c.kv_heads // c.tp * c.head_dim
    f = c.ffn // c.tp
    h = c.hidden
    shapes = []
    for T in (2048, 8192, 16384):
        for (out, inp) in ((hq, h), (hk, h), (hq + 2 * hk, h), (h, hq), (f, h), (2 * f, h), (h, f)):
            shapes.append(("fwd", T, out, inp))     # Y[T,out] = X[T,in] W^T
            shapes.append(("dgrad", T, inp, out))   # dX[T,in] = dY[T,out] W
            shapes.append(("wgrad", out, inp, T))   # dW[out,in] = dY^T X
    for n in (1024, 2048, 4096, 8192, 16384):
        shapes.append(("square", n, n, n))
    seen, uniq = set(), []
    for s in shapes:
        if s[1:] not in seen:
            seen.add(s[1:])
            uniq.append(s)
    return uniq


def measure_gemms():
    rows = []
    for kind, m, n, k in gemm_shapes():
        flops = 2.0 * m * n * k
        iters = max(3, min(50, int(2e12 / flops)))
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()  # column-major [k, n]
        med, _, _, graphed = timed_graph(lambda: torch.mm(a, b), iters)
        rows.append({"pass": kind, "m": m, "n": n, "k": k, "dtype": "bf16",
                     "tflops": flops / med / 1e12, "s": med, "graph": graphed})
        a8, sa = to_fp8(a, E4M3)
        b8, sb = to_fp8(b.t().contiguous(), E4M3)
        for fast in (True, False):
            med8, _, _, graphed = timed_graph(lambda: mm8(a8, sa, b8.t(), sb, fast), iters)
            rows.append({"pass": kind, "m": m, "n": n, "k": k,
                         "dtype": "fp8" if fast else "fp8-precise",
                         "tflops": flops / med8 / 1e12, "s": med8, "graph": graphed})
        # the cast of the bf16 input a, as the eager tensorwise recipe runs it
        medc, _, _, _ = timed_graph(lambda: to_fp8(a, E4M3), iters)
        rows.append({"pass": kind, "m": m, "n": n, "k": k, "dtype": "cast-a", "s": medc,
                     "bytes_per_element_equiv": medc * RESULT.get("copy_tbps", 4.0) * 1e12 / (m * k)})
        log("gemm %-6s %6d x %6d x %6d  bf16 %6.1f  fp8 %6.1f  fp8-precise %6.1f TFLOP/s  cast %.3f ms"
            % (kind, m, n, k, rows[-4]["tflops"], rows[-3]["tflops"], rows[-2]["tflops"], medc * 1e3))
        del a, b, a8, b8
    RESULT["gemm"] = rows
    with open(os.path.join(OUT, "gemm.csv"), "w") as f:
        f.write("# GEMM TFLOP/s measured by tests/validation/gpu/measure_layer.py on %s\n"
                % RESULT["device"]["name"])
        f.write("# torch %s, random normal operands, torch.mm (bf16) and torch._scaled_mm "
                "(fp8, per-tensor scales, fast accumulation)\n" % torch.__version__)
        f.write("# scaleacross-gpu: H200\n")
        f.write("m,n,k,dtype,tflops\n")
        for r in rows:
            if r["dtype"] in ("bf16", "fp8"):
                f.write("%d,%d,%d,%s,%.1f\n" % (r["m"], r["n"], r["k"], r["dtype"], r["tflops"]))
    save()


# ------------------------------------------------------------ attention
def measure_attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    heads, d = 16, 128
    for backend, kern in (("flash", SDPBackend.FLASH_ATTENTION),
                          ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        seqs = (1024, 2048, 4096, 8192, 16384, 32768)
        for tokens, s, layout, causal in [(16384, s, "bhsd", True) for s in seqs] + \
                [(65536, s, "bhsd", True) for s in (1024, 2048, 4096)] + \
                [(16384, s, "bshd", True) for s in (2048, 8192)] + \
                [(16384, s, "bhsd", False) for s in seqs]:
            b = max(1, tokens // s)
            try:
                if layout == "bhsd":
                    q, k, v = (torch.randn(b, heads, s, d, device="cuda", dtype=torch.bfloat16,
                                           requires_grad=True) for _ in range(3))
                else:  # torchtitan's: [b, s, h, d] tensors transposed to [b, h, s, d] views
                    q, k, v = (torch.randn(b, s, heads, d, device="cuda", dtype=torch.bfloat16)
                               .transpose(1, 2).requires_grad_() for _ in range(3))
                flops = 4.0 * b * heads * s * s * d / (2 if causal else 1)
                with sdpa_kernel([kern]):
                    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    g = torch.randn_like(out)
                    fwd, _, _ = timed(
                        lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 5)

                    def fb():
                        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        torch.autograd.grad(o, (q, k, v), g)
                    both, _, _ = timed(fb, 5)
                bwd = max(both - fwd, 1e-9)
                RESULT["attention"].append({"kernel": backend, "seq": s, "batch": b, "heads": heads,
                                            "fwd_s": fwd, "bwd_s": bwd, "tokens": tokens, "layout": layout,
                                            "causal": causal,
                                            "fwd_tflops": flops / fwd / 1e12,
                                            "bwd_tflops": 2.5 * flops / bwd / 1e12})
                log("attn %-5s %s %-6s tokens %5d s=%6d  fwd %6.1f  bwd %6.1f TFLOP/s (bwd 2.5x)"
                    % (backend, layout, "causal" if causal else "full", tokens, s,
                       flops / fwd / 1e12, 2.5 * flops / bwd / 1e12))
                del q, k, v, out, g
            except Exception as ex:  # noqa: BLE001
                RESULT["errors"].append("attention %s %d: %r" % (backend, s, ex))
                log("attention", backend, s, "failed:", repr(ex)[:300])
    save()


def measure_logits(config):
    """The output layer and the loss of one microbatch: logits = x W^T in
    BF16, then F.cross_entropy on the logits cast to fp32 (torchtitan
    9dec370's loss_fn), forward and backward."""
    c = Cfg(**CONFIGS[config])
    if c.tp > 1:  # the vocabulary-parallel loss is not this one
        return
    tokens = c.batch * c.seq
    x = torch.randn(tokens, c.hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(c.vocab, c.hidden, device="cuda", dtype=torch.bfloat16) * 0.02).requires_grad_()
    target = torch.randint(0, c.vocab, (tokens,), device="cuda")
    fw, bw = [], []
    for r in range(6):
        x.grad = None
        w.grad = None
        e = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        e[0].record()
        loss = F.cross_entropy(F.linear(x, w).float(), target)
        e[1].record()
        loss.backward()
        e[2].record()
        torch.cuda.synchronize()
        if r > 0:
            fw.append(e[0].elapsed_time(e[1]) / 1e3)
            bw.append(e[1].elapsed_time(e[2]) / 1e3)
    r = {"tokens": tokens, "vocab": c.vocab, "hidden": c.hidden,
         "fwd_s": statistics.median(fw), "bwd_s": statistics.median(bw)}
    RESULT.setdefault("logits", {})[config] = r
    log("logits %-16s fwd %.3f ms  bwd %.3f ms" % (config, r["fwd_s"] * 1e3, r["bwd_s"] * 1e3))
    save()
    del x, w, target, loss
    torch.cuda.empty_cache()


def kernel_class(name):
    n = name.lower()
    if any(x in n for x in ("flash", "fmha", "cudnn", "attention", "sdpa")):
        return "attention"
    if any(x in n for x in ("gemm", "nvjet", "cutlass", "xmma", "cublas", "matmul")):
        return "gemm"
    return "other"


def profile_layer(config, name, lin, compiled, backend):
    """Kernel time per class (GEMM, attention, other) of one layer's forward
    and backward, from the profiler, against the layer's wall time: what
    the rest of the layer (norms, RoPE, casts, copies) and the gaps cost."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile
    c = Cfg(**CONFIGS[config])
    p = make_params(c)
    x = torch.randn(c.batch, c.seq // c.tp, c.hidden, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    dy = torch.randn_like(x)
    inv = 1.0 / (500000.0 ** (torch.arange(0, c.head_dim, 2, device="cuda").float() / c.head_dim))
    freqs = torch.polar(torch.ones(c.seq, c.head_dim // 2, device="cuda"),
                        torch.outer(torch.arange(c.seq, device="cuda").float(), inv))
    fn = lambda xx: block(p, xx, freqs, c, lin)
    if compiled:
        torch._dynamo.reset()
        fn = torch.compile(fn)
    kern = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[backend]
    iters = 5
    with sdpa_kernel([kern]):
        for _ in range(3):
            fn(x).backward(dy)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(iters):
                for t in list(p.values()) + [x]:
                    t.grad = None
                fn(x).backward(dy)
            e.record()
            torch.cuda.synchronize()
    wall = s.elapsed_time(e) / 1e3 / iters
    classes = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
    counts = {"gemm": 0, "attention": 0, "other": 0}
    top = []
    for ev in prof.key_averages():
        t = getattr(ev, "device_time_total", None)
        if t is None:
            t = getattr(ev, "cuda_time_total", 0)
        if not t or ev.key.startswith("ProfilerStep"):
            continue
        if getattr(ev, "device_type", None) is not None and "CUDA" not in str(ev.device_type):
            continue
        k = kernel_class(ev.key)
        classes[k] += t / 1e6 / iters
        counts[k] += ev.count // iters
        top.append((t / 1e6 / iters, ev.count // iters, ev.key[:120], k))
    top.sort(reverse=True)
    r = {"wall_s": wall, "kernel_s": classes, "kernels": counts,
         "top": [{"s": a, "count": b, "name": n, "class": k} for a, b, n, k in top[:25]]}
    RESULT.setdefault("profiles", {})[config + "/" + name] = r
    log("profile %s/%-20s wall %.3f ms  gemm %.3f  attention %.3f  other %.3f ms  (%d/%d/%d kernels)"
        % (config, name, wall * 1e3, classes["gemm"] * 1e3, classes["attention"] * 1e3,
           classes["other"] * 1e3, counts["gemm"], counts["attention"], counts["other"]))
    save()
    del p, x, dy
    torch.cuda.empty_cache()


PARTS = os.environ.get("MEASURE_PARTS", "")  # e.g. "attention,gemms"; empty: all


def step(name, fn):
    if PARTS and name.split()[0] not in PARTS.split(","):
        return
    if elapsed() > BUDGET_S:
        log("skipped (time):", name)
        RESULT["errors"].append("skipped for time: " + name)
        return
    try:
        fn()
    except Exception as ex:  # noqa: BLE001
        RESULT["errors"].append("%s: %r" % (name, ex))
        log(name, "failed:", repr(ex)[:600])
        torch.cuda.empty_cache()
    save()


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    env()
    smi_clocks("start")
    step("copy", copy_bandwidth)
    configs = os.environ.get("MEASURE_CONFIGS", "llama3-70b-tp4").split(",")
    sweeps = os.environ.get("MEASURE_SWEEPS", "1") != "0"
    linears = {"bf16": bf16_linear, "fp8": fp8_linear}
    variants = lambda cfg: GPT_VARIANTS if CONFIGS[cfg].get("gpt") else LLAMA_VARIANTS
    for cfg in configs:
        for name, lin, comp, backend in variants(cfg):
            if not comp:
                step("layer %s %s" % (cfg, name),
                     lambda: measure_layer(cfg, name, linears[lin], False, backend))
    smi_clocks("after eager layers")
    if sweeps:
        step("attention", measure_attention)
    for cfg in configs:
        for name, lin, comp, backend in variants(cfg):
            if comp:
                step("layer %s %s" % (cfg, name),
                     lambda: measure_layer(cfg, name, linears[lin], True, backend))
    for cfg in configs:
        step("logits %s" % cfg, lambda: measure_logits(cfg))
    profiles = os.environ.get("MEASURE_PROFILES", "1") != "0"
    for cfg in configs if profiles else []:
        for name, lin, comp, backend in variants(cfg):
            if name in ("bf16-eager-flash", "bf16-compiled-flash", "fp8-compiled-flash"):
                step("profile %s %s" % (cfg, name),
                     lambda: profile_layer(cfg, name, linears[lin], comp, backend))
    if sweeps:  # last: CUDA graph capture
        smi_clocks("before gemms")
        step("gemms", measure_gemms)
    smi_clocks("end")
    RESULT["elapsed_s"] = elapsed()
    save()
    log("done in %.0f s; errors: %d" % (elapsed(), len(RESULT["errors"])))
    for e in RESULT["errors"]:
        log("  ", e[:300])


if __name__ == "__main__":
    sys.exit(main())

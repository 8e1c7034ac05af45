#!/usr/bin/env python3
"""Writes the calibration fixtures of tests/core/tst_calibrate.cpp.

None of them is a recorded run. The nccl-tests files are laid out as
nccl-tests prints them (src/util.cu of github.com/NVIDIA/nccl-tests:
writeResultHeader, writeBenchmarkLinePreamble, writeBenchmarkLineBody,
getFloatStr); algbw = S / t and busbw = algbw x bus factor as in its
doc/PERFORMANCE.md. Their times are an alpha-beta curve with a slower
middle (NCCL's protocol switches, LL -> LL128 -> Simple, make real curves
bend there) and a little noise; the magnitudes are in the range public
H100 reports give, not taken from one. The GEMM CSV is the cost model's
own GEMM roofline (core/cost/compute.cpp gemmTime) at known efficiencies
with 2% noise. Run it from this folder: python3 make_fixtures.py
"""
import math
import random


def float_str(v, width):
    # nccl-tests getFloatStr: %.2f, else %.1f, else %.0f, else %e.
    for f in ("%*.2f", "%*.1f", "%*.0f"):
        s = f % (width, v)
        if len(s) <= width:
            return s
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, v)


def nccl_file(path, comment, program, hosts, gpus_per_host, device, alpha_us, busbw_gbs,
              bump, noise, seed, tier):
    rng = random.Random(seed)
    n = hosts * gpus_per_host
    factor = 2.0 * (n - 1) / n
    out = []
    for line in comment:
        out.append("# " + line if line else "#")
    out.append("# scaleacross-tier: " + tier)
    out.append("# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703")
    out.append("# Collective test starting: " + program)
    out.append("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 "
               "iters: 20 agg iters: 1 validation: 1 graph: 0")
    out.append("#")
    out.append("# Using devices")
    pid = 41862
    for h in range(hosts):
        for g in range(gpus_per_host):
            r = h * gpus_per_host + g
            bus = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb][g % 8]
            out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" %
                       (r, 0, pid + r, "dgx-h100-%02d" % (h + 1), g, 0, bus, 0, device))
    out.append("#")
    out.append("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " %
               ("", "", "", "", ""))
    out.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " %
               ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                "time", "algbw", "busbw", "#wrong"))
    out.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " %
               ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
                "(GB/s)", ""))
    total = 0.0
    rows = 0
    size = 8
    while size <= 8589934592:
        x = math.log2(size)
        slow = 1.0 + bump * math.exp(-((x - 20.0) / 3.0) ** 2)  # around 1 MiB
        line = "%12li  %12li  %8s  %6s  %6s" % (size, size // 4, "float", "sum", "%6i" % -1)
        for _ in range(2):
            t = (alpha_us + factor * size / (busbw_gbs * 1e3) * slow) * (1 + rng.gauss(0, noise))
            alg = size / 1e3 / t
            bus = alg * factor
            line += "  %7s  %6s  %6s  %6g" % (float_str(t, 7), float_str(alg, 6),
                                             float_str(bus, 6), 0)
            total += bus
        rows += 1
        out.append(line)
        size *= 2
    out.append("# Out of bounds values : 0 OK")
    out.append("# Avg bus bandwidth    : %g " % (total / (2 * rows)))
    out.append("#")
    out.append("# Collective test concluded: " + program)
    out.append("#")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def shape_factor(m, n, k, sms=132, tile=128, k0=64):
    tiles = math.ceil(m / tile) * math.ceil(n / tile)
    waves = math.ceil(tiles / sms)
    fill = (m * n) / (math.ceil(m / tile) * tile * math.ceil(n / tile) * tile)
    return tiles / (waves * sms) * fill * k / (k + k0)


def gemm_csv(path):
    # The H100 of tests/common/fixtures.h: 989 / 1979 TFLOP/s, 3.35 TB/s, 132 SMs.
    rng = random.Random(18)
    eff = {"bf16": 0.78, "fp8": 0.66}
    peak = {"bf16": 989e12, "fp8": 1979e12}
    shapes = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (16384, 8192, 1024),
              (4096, 28672, 8192), (4096, 8192, 28672), (8192, 1280, 8192), (1024, 1024, 1024),
              (16384, 16384, 16384), (4096, 14336, 4096), (2048, 53248, 16384), (512, 8192, 8192)]
    out = ["# Not a recorded run: the cost model's GEMM roofline (core/cost/compute.cpp gemmTime:",
           "# peak x efficiency x shape factor, HBM at 80%, 3 us a kernel) for the H100 of",
           "# tests/common/fixtures.h at gemm_efficiency 0.78 and gemm_efficiency_fp8 0.66,",
           "# with 2% noise; written by make_fixtures.py.",
           "# scaleacross-gpu: H100",
           "m,n,k,dtype,tflops"]
    for dtype in ("bf16", "fp8"):
        for m, n, k in shapes:
            flops = 2.0 * m * n * k
            compute = flops / (peak[dtype] * eff[dtype] * shape_factor(m, n, k))
            inb = 1.0 if dtype == "fp8" else 2.0
            mem = (inb * (m * k + k * n) + 2.0 * m * n) / (3.35e12 * 0.8)
            t = max(compute, mem) + 3e-6
            tf = flops / t / 1e12 * (1 + rng.gauss(0, 0.02))
            out.append("%d,%d,%d,%s,%.1f" % (m, n, k, dtype, tf))
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


nccl_file("h100_nvlink_all_reduce.txt",
          ["Not a recorded run: 8 H100 SXM5 on one host over NVLink 4 (NVSwitch), written by",
           "make_fixtures.py in the layout nccl-tests 2.17 prints (src/util.cu). Times: alpha 12 us,",
           "bus bandwidth 365 GB/s (the range public DGX H100 all_reduce_perf runs without NVLS",
           "report at GiB sizes), 12% slower around 1 MiB (protocol switches), 1.5% noise."],
          "all_reduce_perf", 1, 8, "NVIDIA H100 80GB HBM3", 12.0, 365.0, 0.12, 0.015, 1, "host")
nccl_file("h100_2node_ib_all_reduce.txt",
          ["Not a recorded run: 2 hosts of 8 H100 SXM5, one 400 Gbit/s InfiniBand NDR NIC per GPU",
           "(ConnectX-7), written by make_fixtures.py in the layout nccl-tests 2.17 prints",
           "(src/util.cu), ring algorithm. Times: alpha 38 us, bus bandwidth 356 GB/s of the",
           "400 GB/s of a host's eight NICs (44.5 GB/s a NIC; NVIDIA quotes 46-48 GB/s a NIC and",
           "'above 380 GB/s' for eight, nccl-tests issues 290 and 309), 10% slower around 1 MiB,",
           "1.5% noise."],
          "all_reduce_perf", 2, 8, "NVIDIA H100 80GB HBM3", 38.0, 356.0, 0.10, 0.015, 2, "building")
gemm_csv("h100_gemm.csv")

#pragma once
// Measured GEMM throughput against the cost model's GEMM roofline
// (core/cost/compute.h gemmTime: peak x gemm_efficiency x shape factor,
// the shape factor being wave quantisation over the SMs, partial tiles and
// the k-loop share k / (k + k0); memory-bound when the operands' bytes take
// longer; plus the per-kernel overhead).
//
// CSV, one GEMM a row, a header naming the columns (any order):
//
//   m,n,k,dtype,tflops
//   8192,8192,8192,bf16,742.5
//   4096,28672,8192,fp8,1288
//
// m x n x k the GEMM (C[m,n] = A[m,k] B[k,n]), dtype bf16 or fp8, tflops
// the achieved dense TFLOP/s (2 m n k / time / 1e12), e.g. from a cuBLAS
// or torch.matmul benchmark. Lines starting with '#' are comments;
// "# scaleacross-gpu: NAME" names the cluster's GPU model they were
// measured on.

#include "cost/compute.h"
#include "model/scenario.h"

#include <string>
#include <vector>

namespace sa {

struct GemmRow {
    int line = 0;
    double m = 0, n = 0, k = 0;
    GemmPrecision precision = GemmPrecision::Bf16;
    double tflops = 0;
};

struct GemmTable {
    std::string file;
    std::string gpu_model; // "# scaleacross-gpu:" (optional)
    std::vector<GemmRow> rows;
};

GemmTable readGemmCsv(const std::string& text, const std::string& file,
                      std::vector<Diagnostic>& problems);

// The gemm_efficiency (or gemm_efficiency_fp8) for which the model's own
// gemmTime reproduces the measured TFLOP/s best: least squares of the
// relative error over the rows of that precision, efficiency in (0, 1].
struct GemmFit {
    bool ok = false;
    std::string problem;
    GemmPrecision precision = GemmPrecision::Bf16;
    double efficiency = 0;
    double rms_relative_residual = 0;
    double max_relative_residual = 0;
    int points = 0;
    bool at_bound = false; // the best efficiency is 1: the model cannot reach the measurements
};

GemmFit fitGemmEfficiency(const GpuModel& gpu, const std::vector<GemmRow>& rows,
                          GemmPrecision precision);

// What the model predicts for one GEMM, TFLOP/s (2 m n k / gemmTime).
double modelGemmTflops(const GpuModel& gpu, const GemmRow& row);

} // namespace sa

#pragma once
// Alpha-beta fit of a collective's measured times (Hockney's model as used
// by Thakur, Rabenseifner & Gropp 2005 for MPI collectives and by NCCL's
// tuner, src/graph/tuning.cc: time = latency + bytes / bandwidth):
//
//   t(S) = alpha + busfactor(n) * S / B
//
// with S the nccl-tests "size" and busfactor its bus factor
// (doc/PERFORMANCE.md of nccl-tests), so that B is the bus bandwidth the
// large sizes approach. The fit is linear least squares weighted by 1/t^2:
// it minimises the relative error, so 8-byte and 8-GiB rows count alike.

#include "calibrate/nccl_tests.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sa {

struct AlphaBetaFit {
    bool ok = false;
    std::string problem;        // why not, when !ok
    double alpha_s = 0;         // fixed time per call, seconds
    double bus_bytes_per_s = 0; // B, bytes/s
    double rms_relative_residual = 0;
    double max_relative_residual = 0;
    int points = 0;                  // (size, time) points used
    std::vector<std::int64_t> sizes; // distinct sizes used, ascending
    std::vector<int> skipped_lines;  // rows left out: #wrong != 0 in both results
    bool alpha_clamped = false;      // the unconstrained fit gave alpha < 0
};

// One point of a fit: x = busfactor * S (bytes each rank moves), t seconds.
struct FitPoint {
    double x = 0, t = 0;
};

// Weighted least squares of t = alpha + x / B over the points (alpha >= 0).
AlphaBetaFit fitAlphaBeta(const std::vector<FitPoint>& points);

// The points of a table: every row's out-of-place and in-place time (the
// same collective on two buffer layouts: both are measurements of t(S), and
// using both halves the variance), each left out when its #wrong is not 0
// (the result was wrong: the time is not of a correct collective).
std::vector<FitPoint> tablePoints(const NcclTestsTable& t, NcclCollective c, int ranks,
                                  std::vector<std::int64_t>* sizes = nullptr,
                                  std::vector<int>* skippedLines = nullptr);

// tablePoints then fitAlphaBeta, with the sizes and skipped rows recorded.
AlphaBetaFit fitTable(const NcclTestsTable& t);

} // namespace sa

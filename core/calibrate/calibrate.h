#pragma once
// Calibration of a cluster document from the user's own measurements
// (docs/CALIBRATION.md): nccl-tests runs give each tier's bus bandwidth and
// per-step latency, a GEMM benchmark the GPU's GEMM efficiencies.
//
// What `scaleacross calibrate --nccl-tests FILE... [--gemm FILE] --cluster C -o C2` does:
//
//   std::vector<Diagnostic> problems;
//   std::vector<NcclTestsInput> runs;
//   for (const std::string& path : ncclFiles)
//       if (auto in = loadNcclTestsInput(path, tier, building, link, problems))
//           runs.push_back(*in);
//   std::optional<GemmInput> gemm; // loadGemmInput(path, gpuModel, problems) for --gemm
//   CalibrationResult r = calibrateCluster(cluster, runs, gemm);
//   // print problems, r.problems and r.warnings (Diagnostic::str()), then r.report;
//   // when r.ok(): saveFileAtomically(out, dumpCanonical(toJson(r.cluster)))
//
// Host and building tiers write Building::scale_up_* and scale_out_* of the
// measured building; the cross-building tier writes a technology profile
// "calibrated-<link>" (a copy of the link's profile with the measured
// efficiency or window and per_message_us) and points the link at it.

#include "calibrate/fit.h"
#include "calibrate/gemm.h"
#include "calibrate/nccl_tests.h"
#include "model/cluster.h"
#include "model/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace sa {

struct NcclTestsInput {
    std::string file; // its name, for messages (and the collective, if the text does not say)
    std::string text; // its contents
    // --tier; else the file's "# scaleacross-tier:" line (one of the two is required).
    std::optional<CalibrationTier> tier;
    // The building measured (host, building tiers) and the link measured
    // (cross-building); else the file's "# scaleacross-building:" /
    // "# scaleacross-link:" line, else the cluster's only building / link.
    std::string building;
    std::string link;
};

struct GemmInput {
    std::string file, text;
    std::string gpu_model; // else the file's "# scaleacross-gpu:" line, else the only GPU model
};

// One nccl-tests table, fitted and mapped onto the model's parameters.
struct TierMeasurement {
    std::string file;
    CalibrationTier tier = CalibrationTier::Host;
    NcclCollective collective = NcclCollective::AllReduce;
    int ranks = 0, hosts = 0;
    std::string building; // host and building tiers
    std::string link;     // cross-building
    AlphaBetaFit fit;
    double line_bytes_per_s = 0; // the tier's line rate per GPU (or the link's)
    double efficiency = 0;       // fit.bus_bytes_per_s / line_bytes_per_s
    int steps = 0;               // ring steps the model charges this collective's latency for
    double step_latency_us = 0;  // fit.alpha_s / steps
    bool written = false;        // false: another measurement of the same tier was preferred
    std::string note;            // what was written, or why not
};

struct GemmCalibration {
    std::string file;
    std::string gpu_model;
    GemmFit bf16, fp8;
};

struct CalibrationResult {
    Cluster cluster;                  // the input cluster with the measured values written
    std::string report;               // for a person: per tier and GEMM what was fitted
    std::vector<Diagnostic> problems; // errors (unreadable input, nothing to fit, unknown names)
    std::vector<Diagnostic> warnings; // written, but check (efficiency clamped to 1, ...)
    std::vector<TierMeasurement> tiers;
    std::optional<GemmCalibration> gemm;
    bool ok() const { return problems.empty(); }
};

CalibrationResult calibrateCluster(const Cluster& cluster, const std::vector<NcclTestsInput>& runs,
                                   const std::optional<GemmInput>& gemm);

// Reads a file into an input; nullopt (and a problem naming the path) when unreadable.
std::optional<NcclTestsInput> loadNcclTestsInput(const std::string& path,
                                                 std::optional<CalibrationTier> tier,
                                                 const std::string& building,
                                                 const std::string& link,
                                                 std::vector<Diagnostic>& problems);
std::optional<GemmInput> loadGemmInput(const std::string& path, const std::string& gpuModel,
                                       std::vector<Diagnostic>& problems);

// Ring steps the model charges a collective of n ranks (core/cost/compute.cpp
// ringAllReduceTime / ringAllGatherTime, the EP all-to-all and the CP ring
// step; core/cost/collectives.cpp ring): all-reduce 2(n-1), all-gather,
// reduce-scatter and alltoall n-1, sendrecv 1.
int modelSteps(NcclCollective c, int ranks);

} // namespace sa

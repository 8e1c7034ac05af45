#pragma once
// Reader of NVIDIA nccl-tests output (all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, sendrecv_perf, alltoall_perf), the text the tests
// print on stdout (src/util.cu in github.com/NVIDIA/nccl-tests):
//
//   # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) ...
//   #  Rank  0 Group  0 Pid  41862 on  node-a01 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
//   #       size         count      type   redop    root     time   algbw   busbw #wrong     time
//   algbw   busbw #wrong #        (B)    (elements)                               (us)  (GB/s)
//   (GB/s)            (us)  (GB/s)  (GB/s)
//              8             2     float     sum      -1    24.16    0.00    0.00      0    23.87
//              0.00    0.00      0
//   # Avg bus bandwidth    : 115.6
//
// Ranks are the "# Rank" lines, hosts the distinct host names on them. The
// columns are read by the names of the column header, so a timestamp or the
// per-iteration columns (-I 1) may follow. "size" is what nccl-tests
// prints: the larger of the send and receive buffers (all-gather: the
// gathered output; reduce-scatter: the input), the S that its algbw = S / t
// and busbw = algbw x bus factor use (doc/PERFORMANCE.md).

#include "model/scenario.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sa {

enum class NcclCollective { AllReduce, AllGather, ReduceScatter, SendRecv, AllToAll };
// The fabric a measurement ran over: inside one host (NVLink, scale-up),
// across hosts of one building (NIC fabric, scale-out), across buildings.
enum class CalibrationTier { Host, Building, CrossBuilding };

const char* collectiveName(NcclCollective c); // "all_reduce", ...
const char* tierName(CalibrationTier t);      // "host", "building", "cross-building"
std::optional<NcclCollective> parseCollectiveName(const std::string& s);
std::optional<CalibrationTier> parseTierName(const std::string& s);

// Bus factor of nccl-tests' doc/PERFORMANCE.md: busbw = algbw x factor, and
// the bytes each rank moves per byte of "size" on a ring: all-reduce
// 2(n-1)/n, all-gather and reduce-scatter (n-1)/n, alltoall (n-1)/n,
// sendrecv 1.
double busFactor(NcclCollective c, int ranks);

struct NcclTestsResult {
    double time_us = 0;
    double algbw_gbs = 0;
    double busbw_gbs = 0;
    std::int64_t wrong = -1; // -1: "N/A" (run with -c 0)
    bool present = false;
};

struct NcclTestsRow {
    int line = 0;
    std::int64_t bytes = 0;
    std::int64_t count = 0;
    std::string type, redop;
    NcclTestsResult out_of_place, in_place;
};

struct NcclTestsTable {
    std::string file;
    std::optional<NcclCollective> collective; // "# Collective test starting:", or the file name
    std::optional<CalibrationTier> tier;      // "# scaleacross-tier: host"
    std::string building;                     // "# scaleacross-building: B1" (optional)
    std::string link;                         // "# scaleacross-link: B1-B2" (optional)
    int ranks = 0;                            // "# Rank" lines
    std::vector<std::string> hosts;           // distinct host names, in order of appearance
    std::string device;                       // device name of rank 0
    std::optional<double> avg_busbw_gbs;      // "# Avg bus bandwidth : x"
    std::vector<NcclTestsRow> rows;
};

// Reads `text` (the contents of `file`, which names it in messages). Every
// problem is a Diagnostic with path "line N"; a table with no rows, no
// "# Rank" lines or an unknown collective is an error.
NcclTestsTable readNcclTests(const std::string& text, const std::string& file,
                             std::vector<Diagnostic>& problems);

} // namespace sa

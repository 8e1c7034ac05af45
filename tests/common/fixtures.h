#pragma once
// Inputs the tests and benchmarks build in code: an H100, buildings, links,
// clusters and plans with the figures most cases share, the source tree's
// sample scenarios, and floating-point comparisons. Plain C++ (no Qt), so
// that the benchmarks can use it too; tests/common/samples.h adds QString
// paths for the Qt tests.

#include "formats/documents.h"
#include "model/cluster.h"
#include "model/plan.h"
#ifdef QT_TESTLIB_LIB // a Qt test (the benchmarks use these fixtures without Qt Test)
#include "qtest_enums.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace sa::testing {

// ---- the source tree ----------------------------------------------------------

// The repository root: $SCALEACROSS_SOURCE_DIR when set (ctest sets it), else
// the folder the test was built from.
inline std::string sourceDir() {
    const char* env = std::getenv("SCALEACROSS_SOURCE_DIR");
    return env && *env ? std::string(env) : std::string(SCALEACROSS_SOURCE_DIR);
}

// sample_clusters/scenarios/<fileName>.
inline std::string sampleScenarioFile(const std::string& fileName) {
    return sourceDir() + "/sample_clusters/scenarios/" + fileName;
}

// A bundled sample scenario; one that does not load stops the program with
// its problems (the samples are inputs of the test, not what it checks).
inline Scenario loadSampleScenario(const std::string& fileName) {
    Loaded<Scenario> loaded = loadScenarioFile(sampleScenarioFile(fileName));
    if (!loaded.ok()) {
        std::fprintf(stderr, "cannot load %s\n", fileName.c_str());
        for (const auto& p : loaded.problems)
            std::fprintf(stderr, "%s\n", p.str().c_str());
        std::abort();
    }
    return std::move(*loaded.value);
}

// ---- clusters built in code -----------------------------------------------------

// H100 SXM5: 989 dense BF16 TFLOP/s (1,979 FP8), 3.35 TB/s, 132 SMs; 80 GiB
// unless a test wants memory to prune.
inline GpuModel h100(double memoryGib = 80) {
    GpuModel g;
    g.name = "H100";
    g.peak_tflops_bf16 = 989;
    g.peak_tflops_fp8 = 1979;
    g.memory_gib = memoryGib;
    g.hbm_tbps = 3.35;
    g.sms = 132;
    g.gemm_efficiency = 0.8;
    return g;
}

// What differs between the buildings of the tests. zone_gpus 0 leaves the
// zone size unset (one zone, and no zone cut in placement); set it to the
// building's GPUs for one explicit non-blocking zone.
struct BuildingShape {
    std::string region = "r1";
    std::int64_t zone_gpus = 0;
    double zone_oversubscription = 1;
    double building_oversubscription = 1;
    double scale_out_gbps = 400; // NIC per GPU
    double scale_up_gbps = 3600; // NVLink per GPU
};

// A building of H100 with 8 GPUs per host.
inline Building building(const std::string& name, std::int64_t gpus,
                         const BuildingShape& shape = {}) {
    Building b;
    b.name = name;
    b.region = shape.region;
    b.gpu_model = "H100";
    b.gpus = gpus;
    b.gpus_per_host = 8;
    b.scale_up_gbps = shape.scale_up_gbps;
    b.scale_out_gbps = shape.scale_out_gbps;
    b.zone_gpus = shape.zone_gpus;
    b.zone_oversubscription = shape.zone_oversubscription;
    b.building_oversubscription = shape.building_oversubscription;
    return b;
}

// A link between buildings a and b; an empty name stays empty (the topology
// then calls it "a-b").
inline Link link(const std::string& a, const std::string& b, double gbps, double ms,
                 const std::string& technology = "roce", const std::string& name = {}) {
    Link l;
    l.a = a;
    l.b = b;
    l.name = name;
    l.bandwidth_gbps = gbps;
    l.latency_ms = ms;
    l.technology = technology;
    return l;
}

// A cluster of `gpu` (an H100 by default) in the given buildings and links.
inline Cluster clusterOf(const std::string& name, std::vector<Building> buildings,
                         std::vector<Link> links = {}, const GpuModel& gpu = h100()) {
    Cluster c;
    c.name = name;
    c.gpu_models[gpu.name] = gpu;
    c.buildings = std::move(buildings);
    c.links = std::move(links);
    return c;
}

// ---- plans ------------------------------------------------------------------------

// tp x pp x dp (cp 1, ep 1) on sequences of 2,048 tokens, micro batch 1,
// ZeRO-1, sequence parallel, 1F1B.
inline Plan makePlan(int tp = 1, int pp = 1, int dp = 1, std::int64_t globalBatch = 8,
                     Recompute recompute = Recompute::None, const std::string& name = "plan") {
    Plan p;
    p.name = name;
    p.sequence_length = 2048;
    p.global_batch_sequences = globalBatch;
    p.micro_batch_sequences = 1;
    p.parallelism = {tp, 1, pp, dp, 1};
    p.zero_stage = 1;
    p.recompute = recompute;
    p.sequence_parallel = true;
    p.schedule.kind = ScheduleKind::OneFOneB;
    return p;
}

// ---- comparisons ------------------------------------------------------------------

// |got - want| within `rel` of |want|, however small want is: for values
// worked out from a formula, where a floor would hide errors in tiny terms.
inline bool closeRelative(double got, double want, double rel = 1e-12) {
    return std::abs(got - want) <= rel * std::max(std::abs(want), 1e-300);
}

// |a - b| within `tolerance` of the larger magnitude, or of 1 below that (an
// absolute tolerance near zero). Infinities are close only to themselves.
inline bool close(double a, double b, double tolerance = 1e-9) {
    if (std::isinf(a) || std::isinf(b))
        return a == b;
    return std::abs(a - b) <= tolerance * std::max({1.0, std::abs(a), std::abs(b)});
}

// Problems one to a line, for a failed check's message.
inline std::string problemsText(const std::vector<Diagnostic>& problems) {
    std::string s;
    for (const auto& p : problems)
        s += p.str() + "\n";
    return s;
}

} // namespace sa::testing

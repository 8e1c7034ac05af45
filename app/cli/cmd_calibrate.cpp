// scaleacross calibrate: a cluster document fitted to the user's own
// measurements — nccl-tests runs per tier, a GEMM benchmark per GPU model
// (core/calibrate, docs/CALIBRATION.md).

#include "commands.h"
#include "help_format.h"
#include "scenario_args.h"
#include "validators.h"

#include "calibrate/calibrate.h"
#include "formats/documents.h"

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sa::cli {

namespace {

struct CalibrateArgs {
    std::string cluster;
    std::vector<std::string> nccl;
    std::optional<std::string> gemm;
    std::optional<int> tier; // CalibrationTier
    std::string building;
    std::string link;
    std::string gpuModel;
    std::optional<std::string> out;
};

void print(const std::vector<Diagnostic>& list, const char* prefix = "") {
    for (const auto& d : list)
        std::fprintf(stderr, "%s%s\n", prefix, d.str().c_str());
}

int runCalibrate(const CalibrateArgs& a) {
    if (a.nccl.empty() && !a.gemm) {
        std::fprintf(stderr, "scaleacross calibrate: give --nccl-tests FILE... or --gemm FILE "
                             "(see --help)\n");
        return kExitBadInput;
    }
    const auto cluster = loadClusterFile(a.cluster);
    print(cluster.problems);
    if (!cluster.ok())
        return kExitBadInput;
    std::vector<Diagnostic> problems;
    std::vector<NcclTestsInput> runs;
    std::optional<CalibrationTier> tier;
    if (a.tier)
        tier = static_cast<CalibrationTier>(*a.tier);
    for (const std::string& path : a.nccl)
        if (auto in = loadNcclTestsInput(path, tier, a.building, a.link, problems))
            runs.push_back(*in);
    std::optional<GemmInput> gemm;
    if (a.gemm)
        gemm = loadGemmInput(*a.gemm, a.gpuModel, problems);
    if (!problems.empty()) {
        print(problems);
        return kExitBadInput;
    }
    const CalibrationResult r = calibrateCluster(*cluster.value, runs, gemm);
    print(r.problems);
    print(r.warnings, "warning: ");
    // The report goes to stdout unless it is where the cluster goes.
    std::fputs(r.report.c_str(), a.out ? stdout : stderr);
    if (!r.ok())
        return kExitBadInput;
    return writeResult(a.out, dumpCanonical(toJson(r.cluster)));
}

} // namespace

void addCalibrateCommand(CLI::App& app, CommandRun& chosen) {
    auto a = std::make_shared<CalibrateArgs>();
    CLI::App* cmd = app.add_subcommand(
        "calibrate", "fit a cluster's tiers and GEMMs to nccl-tests and GEMM measurements");
    describe(*cmd,
             "scaleacross calibrate --cluster FILE --nccl-tests FILE... [--gemm FILE] -o FILE",
             "Fits each nccl-tests run (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
             "sendrecv_perf output) to t = alpha + busfactor * size / B and writes the tier's\n"
             "efficiency and per-step latency into the cluster: inside a host (NVLink), inside\n"
             "a building (the NIC fabric) or across buildings (the link's transport profile).\n"
             "--gemm fits the GPU's GEMM efficiencies to measured TFLOP/s per shape. The fit\n"
             "(sizes used, alpha, B, residual) is reported; docs/CALIBRATION.md has the input\n"
             "formats and an example of each.",
             "Exit codes: 0 written, 1 the output could not be written, 2 bad input.");
    cmd->add_option("--cluster", a->cluster, "the cluster document to calibrate")
        ->type_name("FILE")
        ->required();
    cmd->add_option("--nccl-tests", a->nccl, "nccl-tests output files (repeatable)")
        ->type_name("FILE...");
    cmd->add_option("--tier", a->tier,
                    "host | building | cross-building, for files\nwithout a "
                    "\"# scaleacross-tier:\" line")
        ->transform(oneOf<int>({{"host", int(CalibrationTier::Host)},
                                {"building", int(CalibrationTier::Building)},
                                {"cross-building", int(CalibrationTier::CrossBuilding)}}))
        ->type_name("TIER");
    cmd->add_option("--building", a->building,
                    "the building measured (default: the file's\nline, else the only one)")
        ->type_name("NAME");
    cmd->add_option("--link", a->link,
                    "the link measured across buildings (default:\nthe file's line, else the "
                    "only one)")
        ->type_name("NAME");
    cmd->add_option("--gemm", a->gemm, "a CSV of m,n,k,dtype,tflops measurements")
        ->type_name("FILE");
    cmd->add_option("--gpu-model", a->gpuModel,
                    "the GPU model the GEMMs ran on (default: the\nfile's line, else the only one)")
        ->type_name("NAME");
    addOutputOption(*cmd, a->out,
                    "write the calibrated cluster to FILE\n(atomically) instead of stdout");
    runWhenChosen(*cmd, chosen, [a] { return runCalibrate(*a); });
}

} // namespace sa::cli

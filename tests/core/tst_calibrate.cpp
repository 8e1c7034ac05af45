// Calibration from the user's measurements (core/calibrate): the
// nccl-tests reader on its real layout (src/util.cu of NVIDIA/nccl-tests),
// the alpha-beta fit (t = alpha + busfactor S / B, doc/PERFORMANCE.md's bus
// factors), the mapping onto the cluster's tier fields and technology
// profiles, and the check that matters: the cost model's own collective
// time for the measured group, with the written fields, reproduces the
// measurement. Also the GEMM efficiency fit against the model's shape
// factor, and the cluster fields' parse / validate / write.

#include "calibrate/calibrate.h"
#include "cost/collectives.h"
#include "cost/compute.h"
#include "cost/evaluate.h"
#include "cost/network.h"
#include "cost/stages.h"
#include "cost/traffic.h"
#include "export/evaluation_json.h"
#include "formats/documents.h"
#include "topology/topology.h"

#include "../common/fixtures.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

using namespace sa;
using namespace sa::testing;

namespace {

std::string fixture(const std::string& name) {
    return sourceDir() + "/tests/data/calibrate/" + name;
}

std::string readAll(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const char* programOf(NcclCollective c) {
    switch (c) {
    case NcclCollective::AllReduce:
        return "all_reduce_perf";
    case NcclCollective::AllGather:
        return "all_gather_perf";
    case NcclCollective::ReduceScatter:
        return "reduce_scatter_perf";
    case NcclCollective::SendRecv:
        return "sendrecv_perf";
    case NcclCollective::AllToAll:
        return "alltoall_perf";
    }
    return "?";
}

// A table in nccl-tests' layout from t(S) = alpha + busfactor S / B with a
// deterministic relative noise, uniform in [-noise, noise].
std::string syntheticTable(NcclCollective c, int hosts, int perHost, double alphaUs, double busGBs,
                           double noise, const std::string& tier, unsigned seed = 7) {
    const int n = hosts * perHost;
    const double f = busFactor(c, n);
    std::string s = "# scaleacross-tier: " + tier + "\n";
    s += "# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703\n";
    s += std::string("# Collective test starting: ") + programOf(c) + "\n";
    s += "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 "
         "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n";
    char buf[512];
    for (int r = 0; r < n; ++r) {
        std::snprintf(buf, sizeof buf,
                      "#  Rank %2d Group %2d Pid %6d on %10s device %2d [0000:%02x:00] NVIDIA H100 "
                      "80GB HBM3\n",
                      r, 0, 1000 + r, ("node" + std::to_string(r / perHost)).c_str(), r % perHost,
                      0x18 + r % perHost);
        s += buf;
    }
    s += "#\n#       size         count      type   redop    root     time   algbw   busbw #wrong  "
         "   time   algbw   busbw #wrong\n";
    s += "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)         "
         "   (us)  (GB/s)  (GB/s)\n";
    unsigned state = seed;
    auto uniform = [&] {
        state = state * 1664525u + 1013904223u;
        return double(state >> 8) / double(1u << 24) * 2.0 - 1.0;
    };
    for (std::int64_t size = 8; size <= (std::int64_t(1) << 33); size *= 2) {
        std::snprintf(buf, sizeof buf, "%12lld  %12lld  %8s  %6s  %6i", (long long)size,
                      (long long)(size / 4), "float", "sum", -1);
        s += buf;
        for (int k = 0; k < 2; ++k) {
            const double t =
                (alphaUs + f * double(size) / (busGBs * 1e3)) * (1 + noise * uniform());
            const double alg = double(size) / 1e3 / t;
            std::snprintf(buf, sizeof buf, "  %7.2f  %6.2f  %6.2f  %6g", t, alg, alg * f, 0.0);
            s += buf;
        }
        s += "\n";
    }
    s += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 100.0\n#\n";
    return s;
}

std::vector<double> tableTimesUs(const std::string& text, std::vector<std::int64_t>& sizes) {
    std::vector<Diagnostic> problems;
    const NcclTestsTable t = readNcclTests(text, "t", problems);
    std::vector<double> out;
    for (const NcclTestsRow& r : t.rows) {
        sizes.push_back(r.bytes);
        out.push_back(0.5 * (r.out_of_place.time_us + r.in_place.time_us));
    }
    return out;
}

// The cost model's all-reduce time of the data-parallel group of a dp x 1
// plan on `c`: its layout (buildLayout: the group's spread, the stage's
// CollectiveEnv from the buildings' fields), its transports, and
// loadCollective's ring, as the evaluation charges it.
struct ModelCollective {
    Cluster cluster;
    Topology topo;
    Layout layout;
    Transports transports;
    ModelCollective(const Cluster& c, int dp)
        : cluster(c)
        , topo(cluster) {
        const ClusterContext ctx{&cluster, &topo, 1};
        Plan p = makePlan(1, 1, dp, dp);
        buildLayout(ctx, {1, p.parallelism, p.rank_order, {}, "plan"}, layout);
        buildTransports(ctx, {1, {}}, transports);
    }
    double seconds(double bytes, CollectiveKind kind = CollectiveKind::AllReduce) const {
        TrafficPhase phase(topo, transports);
        const CollectiveCost cost =
            loadCollective(phase, layout.spreads[0], kind, CollectiveAlgo::Ring, bytes,
                           layout.dpGroups, layout.stageEnv[0]);
        return std::max(cost.bandwidth_s, phase.drainTime()) + cost.latency_s;
    }
};

CalibrationResult calibrated(const Cluster& c, const std::string& file, const std::string& text,
                             std::optional<CalibrationTier> tier = std::nullopt) {
    CalibrationResult r = calibrateCluster(c, {{file, text, tier, {}, {}}}, std::nullopt);
    for (const Diagnostic& d : r.problems)
        qWarning("%s", d.str().c_str());
    return r;
}

bool hasProblem(const std::vector<Diagnostic>& problems, const std::string& file,
                const std::string& line, const std::string& words) {
    for (const Diagnostic& d : problems)
        if (d.file == file && d.path == line && d.message.find(words) != std::string::npos)
            return true;
    return false;
}

} // namespace

class TestCalibrate : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void syntheticRecoversAlphaBeta_data();
    void syntheticRecoversAlphaBeta();
    void readsRealLayout();
    void fixturesGiveSensibleValues();
    void hostCalibrationReproducesMeasurement();
    void buildingCalibrationReproducesMeasurement();
    void crossBuildingWritesProfile();
    void brokenFilesNameFileAndLine();
    void wrongRowsLeftOut();
    void gemmFitRecoversEfficiency();
    void calibratedDiffersOnlyInWrittenFields();
    void builtinValuesGiveIdenticalEvaluation();
    void fieldsParsedStrictlyAndWrittenOnlyWhenPresent();
};

void TestCalibrate::syntheticRecoversAlphaBeta_data() {
    QTest::addColumn<int>("collective");
    QTest::addColumn<int>("hosts");
    QTest::addColumn<int>("perHost");
    QTest::addColumn<double>("alphaUs");
    QTest::addColumn<double>("busGBs");
    QTest::newRow("all_reduce 8") << int(NcclCollective::AllReduce) << 1 << 8 << 20.0 << 300.0;
    QTest::newRow("all_reduce 32") << int(NcclCollective::AllReduce) << 4 << 8 << 45.0 << 42.0;
    QTest::newRow("all_gather 16") << int(NcclCollective::AllGather) << 2 << 8 << 30.0 << 40.0;
    QTest::newRow("reduce_scatter 8")
        << int(NcclCollective::ReduceScatter) << 1 << 8 << 15.0 << 320.0;
    QTest::newRow("sendrecv 2") << int(NcclCollective::SendRecv) << 2 << 1 << 8.0 << 45.0;
    QTest::newRow("alltoall 8") << int(NcclCollective::AllToAll) << 1 << 8 << 25.0 << 280.0;
}

void TestCalibrate::syntheticRecoversAlphaBeta() {
    QFETCH(int, collective);
    QFETCH(int, hosts);
    QFETCH(int, perHost);
    QFETCH(double, alphaUs);
    QFETCH(double, busGBs);
    const auto c = NcclCollective(collective);
    const std::string text = syntheticTable(c, hosts, perHost, alphaUs, busGBs, 0.02, "host");
    std::vector<Diagnostic> problems;
    const NcclTestsTable t = readNcclTests(text, "synthetic.txt", problems);
    QVERIFY(problems.empty());
    QCOMPARE(t.ranks, hosts * perHost);
    QCOMPARE(int(t.hosts.size()), hosts);
    QVERIFY(t.collective && *t.collective == c);
    const AlphaBetaFit f = fitTable(t);
    QVERIFY2(f.ok, f.problem.c_str());
    QCOMPARE(f.points, 2 * 31);
    QVERIFY2(std::abs(f.alpha_s * 1e6 - alphaUs) <= 0.02 * alphaUs,
             std::to_string(f.alpha_s * 1e6).c_str());
    QVERIFY2(std::abs(f.bus_bytes_per_s / 1e9 - busGBs) <= 0.02 * busGBs,
             std::to_string(f.bus_bytes_per_s / 1e9).c_str());
    QVERIFY(f.rms_relative_residual < 0.02);
}

void TestCalibrate::readsRealLayout() {
    std::vector<Diagnostic> problems;
    const std::string file = fixture("h100_2node_ib_all_reduce.txt");
    const NcclTestsTable t = readNcclTests(readAll(file), file, problems);
    QVERIFY(problems.empty());
    QCOMPARE(t.ranks, 16);
    QCOMPARE(t.hosts, (std::vector<std::string>{"dgx-h100-01", "dgx-h100-02"}));
    QCOMPARE(t.device, std::string("NVIDIA H100 80GB HBM3"));
    QVERIFY(t.collective && *t.collective == NcclCollective::AllReduce);
    QVERIFY(t.tier && *t.tier == CalibrationTier::Building);
    QVERIFY(t.avg_busbw_gbs && *t.avg_busbw_gbs > 0);
    QCOMPARE(int(t.rows.size()), 31);
    QCOMPARE(t.rows.front().bytes, std::int64_t(8));
    QCOMPARE(t.rows.front().type, std::string("float"));
    QCOMPARE(t.rows.front().redop, std::string("sum"));
    QCOMPARE(t.rows.back().bytes, std::int64_t(8589934592));
    QVERIFY(t.rows.back().out_of_place.present && t.rows.back().in_place.present);
    QCOMPARE(t.rows.back().in_place.wrong, std::int64_t(0));

    // Older layouts: no root column, "error" for #wrong, no Group; NCCL log
    // lines and a launcher banner around the table; -c 0 prints N/A.
    const std::string old =
        "Warning: Permanently added 'node2' to the list of known hosts.\n"
        "# nThread 1 nGpus 8 minBytes 8 maxBytes 1048576 step: 4(factor)\n"
        "#   Rank  0 Pid  1234 on node1 device  0 [0x18] Tesla V100-SXM2-32GB\n"
        "#   Rank  1 Pid  1234 on node1 device  1 [0x19] Tesla V100-SXM2-32GB\n"
        "node1:1234:1234 [0] NCCL INFO Ring 00 : 0 1\n"
        "#\n"
        "#       size         count    type   redop     time   algbw   busbw  "
        "error     time   algbw   busbw  error\n"
        "           8             2   float     sum    20.00    0.00    0.00  "
        "0e+00    20.10    0.00    0.00  0e+00\n"
        "     1048576        262144   float     sum    70.00   14.98   14.98    "
        "N/A    70.20   14.94   14.94    N/A\n";
    problems.clear();
    const NcclTestsTable o = readNcclTests(old, "runs/all_reduce_v100.log", problems);
    for (const auto& p : problems)
        qWarning("%s", p.str().c_str());
    QVERIFY(problems.empty());
    QCOMPARE(o.ranks, 2);
    QCOMPARE(o.hosts.size(), std::size_t(1));
    QVERIFY(o.collective && *o.collective == NcclCollective::AllReduce); // from the file name
    QCOMPARE(int(o.rows.size()), 2);
    QCOMPARE(o.rows[1].out_of_place.wrong, std::int64_t(-1));
    QCOMPARE(o.device, std::string("Tesla V100-SXM2-32GB"));
}

void TestCalibrate::fixturesGiveSensibleValues() {
    Cluster c = clusterOf("one", {building("B1", 16)});
    std::vector<NcclTestsInput> runs;
    std::vector<Diagnostic> problems;
    for (const char* name : {"h100_nvlink_all_reduce.txt", "h100_2node_ib_all_reduce.txt"})
        runs.push_back(*loadNcclTestsInput(fixture(name), std::nullopt, {}, {}, problems));
    QVERIFY(problems.empty());
    const CalibrationResult r = calibrateCluster(c, runs, std::nullopt);
    QVERIFY(r.ok());
    QCOMPARE(int(r.tiers.size()), 2);
    qInfo("%s", r.report.c_str());
    const Building& b = r.cluster.buildings[0];
    QVERIFY(b.scale_up_efficiency && b.scale_up_latency_us && b.scale_out_efficiency &&
            b.scale_out_latency_us);
    for (double e : {*b.scale_up_efficiency, *b.scale_out_efficiency})
        QVERIFY(e > 0.5 && e <= 1.0);
    for (double l : {*b.scale_up_latency_us, *b.scale_out_latency_us})
        QVERIFY(l > 0.1 && l < 20.0); // microseconds a step
    // The fixtures' curves: 365 GB/s of 450 and 356 of the 400 of a host's
    // eight NICs, alpha 12 and 38 us; a slower middle makes the fit a
    // compromise, within ~10%.
    QVERIFY(std::abs(*b.scale_up_efficiency - 365.0 / 450.0) < 0.1 * 365.0 / 450.0);
    QVERIFY(std::abs(*b.scale_out_efficiency - 356.0 / 400.0) < 0.1 * 356.0 / 400.0);
    QVERIFY(std::abs(*b.scale_up_latency_us - 12.0 / 14) < 0.15 * 12.0 / 14);
    QVERIFY(std::abs(*b.scale_out_latency_us - 38.0 / 30) < 0.15 * 38.0 / 30);
    for (const TierMeasurement& m : r.tiers) {
        QVERIFY(m.written);
        QVERIFY(m.fit.rms_relative_residual < 0.08);
        QCOMPARE(int(m.fit.sizes.size()), 31);
    }
}

void TestCalibrate::hostCalibrationReproducesMeasurement() {
    // Measured: 8 GPUs of one host, alpha 20 us, 300 GB/s bus bandwidth.
    const Cluster c = clusterOf("one", {building("B1", 8)});
    const std::string text =
        syntheticTable(NcclCollective::AllReduce, 1, 8, 20.0, 300.0, 0.01, "host");
    const CalibrationResult r = calibrated(c, "nvlink.txt", text);
    QVERIFY(r.ok());
    const Building& b = r.cluster.buildings[0];
    QVERIFY(b.scale_up_efficiency && b.scale_up_latency_us);
    QVERIFY(!b.scale_out_efficiency && !b.scale_out_latency_us);
    std::vector<std::int64_t> sizes;
    const std::vector<double> measured = tableTimesUs(text, sizes);

    // The DP ring of a dp8 plan on the host (core/cost/collectives.cpp).
    const ModelCollective model(r.cluster, 8);
    QVERIFY(model.layout.spreads[0].single_host);
    double worst = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const double t = model.seconds(double(sizes[i])) * 1e6;
        worst = std::max(worst, std::abs(t - measured[i]) / measured[i]);
    }
    QVERIFY2(worst < 0.02, std::to_string(worst).c_str());
    // Uncalibrated, the same group is off (the built-in 80% and 6 us a step).
    const ModelCollective builtin(c, 8);
    QVERIFY(std::abs(builtin.seconds(8.0) * 1e6 - measured[0]) > 0.2 * measured[0]);

    // TP's ring all-reduce (core/cost/compute.cpp layerComm), from the
    // layer context of the calibrated building.
    const Model m = [] {
        Model x;
        x.layers = 1;
        x.hidden = 4096;
        x.ffn_hidden = 16384;
        x.heads = 32;
        x.kv_heads = 8;
        x.vocab = 32000;
        return x;
    }();
    const Plan p = makePlan(8, 1, 1, 1);
    const LayerContext ctx = layerContext(r.cluster, b, m, p);
    worst = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const double t =
            ringAllReduceTime(double(sizes[i]), 8,
                              gbpsToBytesPerS(ctx.scale_up_gbps) * ctx.scale_up_efficiency,
                              ctx.scale_up_step_s) *
            1e6;
        worst = std::max(worst, std::abs(t - measured[i]) / measured[i]);
    }
    QVERIFY2(worst < 0.02, std::to_string(worst).c_str());
}

void TestCalibrate::buildingCalibrationReproducesMeasurement() {
    // Measured: 16 GPUs on 2 hosts over the NICs, alpha 40 us, 352 GB/s:
    // 44 GB/s through each of a host's eight 400 Gbit/s NICs.
    const Cluster c = clusterOf("one", {building("B1", 16)});
    const std::string text =
        syntheticTable(NcclCollective::AllReduce, 2, 8, 40.0, 352.0, 0.01, "building");
    const CalibrationResult r = calibrated(c, "ib.txt", text);
    QVERIFY(r.ok());
    const Building& b = r.cluster.buildings[0];
    QVERIFY(b.scale_out_efficiency && b.scale_out_latency_us);
    QVERIFY(std::abs(*b.scale_out_efficiency - 44.0 / 50.0) < 0.02 * 44.0 / 50.0);
    QCOMPARE(ModelCollective(r.cluster, 16).layout.spreads[0].per_host, 8);
    std::vector<std::int64_t> sizes;
    const std::vector<double> measured = tableTimesUs(text, sizes);
    const ModelCollective model(r.cluster, 16);
    QVERIFY(!model.layout.spreads[0].single_host);
    double worst = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const double t = model.seconds(double(sizes[i])) * 1e6;
        worst = std::max(worst, std::abs(t - measured[i]) / measured[i]);
    }
    QVERIFY2(worst < 0.02, std::to_string(worst).c_str());

    QVERIFY(r.warnings.empty());
    // Faster than eight GPUs can hand the ring on over NVLink (450 GB/s
    // at 80%, times 8/7): said, as the model cannot reach it.
    const CalibrationResult fast =
        calibrated(c, "fast.txt",
                   syntheticTable(NcclCollective::AllReduce, 2, 8, 40.0, 440.0, 0.0, "building"));
    QVERIFY(fast.ok());
    bool said = false;
    for (const Diagnostic& w : fast.warnings)
        said = said || w.message.find("over NVLink") != std::string::npos;
    QVERIFY(said);

    // The realistic fixture: the model reproduces the fit exactly, so it is
    // as far from the measurement as the fit's own residual.
    const std::string file = fixture("h100_2node_ib_all_reduce.txt");
    const std::string real = readAll(file);
    const CalibrationResult rr = calibrated(c, file, real);
    QVERIFY(rr.ok());
    const AlphaBetaFit& f = rr.tiers[0].fit;
    sizes.clear();
    const std::vector<double> realTimes = tableTimesUs(real, sizes);
    const ModelCollective realModel(rr.cluster, 16);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const double t = realModel.seconds(double(sizes[i]));
        const double fit = f.alpha_s + busFactor(NcclCollective::AllReduce, 16) * double(sizes[i]) /
                                           f.bus_bytes_per_s;
        QVERIFY2(closeRelative(t, fit, 1e-9), std::to_string(sizes[i]).c_str());
        QVERIFY(std::abs(t * 1e6 - realTimes[i]) / realTimes[i] <= f.max_relative_residual + 0.02);
    }
}

void TestCalibrate::crossBuildingWritesProfile() {
    // Two buildings of 8 behind one link of 1 ms; the measured 16-rank ring
    // reaches 20 GB/s where the eight NICs of a host give 8 x 46: one
    // connection's window.
    const Cluster c = clusterOf(
        "pair", {building("B1", 8, {.zone_gpus = 8}), building("B2", 8, {.zone_gpus = 8})},
        {link("B1", "B2", 3200, 1.0, "roce")});
    const std::string text =
        syntheticTable(NcclCollective::AllReduce, 2, 8, 4000.0, 20.0, 0.01, "cross-building");
    const CalibrationResult r = calibrated(c, "wan.txt", text);
    QVERIFY(r.ok());
    qInfo("%s", r.report.c_str());
    QCOMPARE(r.cluster.links[0].technology, std::string("calibrated-B1-B2"));
    const Technology& t = r.cluster.technologies.at("calibrated-B1-B2");
    QVERIFY(t.window_mib > 0);
    QVERIFY(t.per_message_us >= 0);
    // The model's rate on the link for this group is the measured one: the
    // large sizes, bandwidth-bound, agree.
    const ModelCollective model(r.cluster, 16);
    QCOMPARE(model.layout.spreads[0].buildings, 2);
    std::vector<std::int64_t> sizes;
    const std::vector<double> measured = tableTimesUs(text, sizes);
    for (std::size_t i = sizes.size() - 6; i < sizes.size(); ++i) {
        const double got = model.seconds(double(sizes[i])) * 1e6;
        QVERIFY2(std::abs(got - measured[i]) / measured[i] < 0.03,
                 (std::to_string(got) + " vs " + std::to_string(measured[i])).c_str());
    }
    // A link slower than one GPU's NIC (100 Gbit/s = 12.5 GB/s): link-bound,
    // the profile's efficiency is the measured share of its line rate.
    Cluster thin = c;
    thin.links[0].bandwidth_gbps = 100;
    const std::string thinText =
        syntheticTable(NcclCollective::AllReduce, 2, 8, 4000.0, 11.0, 0.01, "cross-building");
    const CalibrationResult rt = calibrated(thin, "thin.txt", thinText);
    QVERIFY(rt.ok());
    const Technology& tt = rt.cluster.technologies.at("calibrated-B1-B2");
    QVERIFY2(std::abs(tt.efficiency - 11.0 / 12.5) < 0.02 * 11.0 / 12.5,
             std::to_string(tt.efficiency).c_str());
    QCOMPARE(tt.window_mib, 0.0);
    const ModelCollective thinModel(rt.cluster, 16);
    sizes.clear();
    const std::vector<double> thinMeasured = tableTimesUs(thinText, sizes);
    for (std::size_t i = sizes.size() - 6; i < sizes.size(); ++i) {
        const double got = thinModel.seconds(double(sizes[i])) * 1e6;
        QVERIFY2(std::abs(got - thinMeasured[i]) / thinMeasured[i] < 0.03,
                 (std::to_string(got) + " vs " + std::to_string(thinMeasured[i])).c_str());
    }
    // As fast as the NICs: nothing about the link to learn; its profile's
    // efficiency and window are kept.
    const CalibrationResult rn = calibrated(
        c, "fast.txt",
        syntheticTable(NcclCollective::AllReduce, 2, 8, 4000.0, 8 * 46.0, 0.0, "cross-building"));
    QVERIFY(rn.ok());
    const Technology& tn = rn.cluster.technologies.at("calibrated-B1-B2");
    QCOMPARE(tn.efficiency, builtinTechnology("roce")->efficiency);
    QCOMPARE(tn.window_mib, builtinTechnology("roce")->window_mib);

    // Round trip: the profile and the link's pointer survive the document.
    const Loaded<Cluster> back = parseCluster(dumpCanonical(toJson(r.cluster)), "c2.json");
    QVERIFY(back.ok());
    QCOMPARE(back.value->technologies.at("calibrated-B1-B2").window_mib, t.window_mib);
    QCOMPARE(dumpCanonical(toJson(*back.value)), dumpCanonical(toJson(r.cluster)));
}

void TestCalibrate::brokenFilesNameFileAndLine() {
    const std::string good =
        syntheticTable(NcclCollective::AllReduce, 1, 8, 20.0, 300.0, 0.0, "host");
    auto replaceLine = [&](int lineNo, const std::string& with) {
        std::istringstream in(good);
        std::string out, l;
        for (int i = 1; std::getline(in, l); ++i)
            out += (i == lineNo ? with : l) + "\n";
        return out;
    };
    // Line numbers in the synthetic table: 1 tier, 2-4 header, 5 '#', 6
    // "Using devices", 7-14 ranks, 15 '#', 16 column header, 17 units, 18- rows.
    struct Case {
        std::string text, line, words;
    };
    const std::vector<Case> cases = {
        {replaceLine(20, "          32             8     float     sum      -1    abc    0.00"
                         "    0.00      0    12.00    0.00    0.00      0"),
         "line 20", "out-of-place time must be a positive number"},
        {replaceLine(21, "          64            16     float     sum      -1"), "line 21",
         "a result row with 5 columns"},
        {replaceLine(22, "         128            32     float     sum      -1    12.0    0.01"
                         "    0.02      x    12.00    0.01    0.02      0"),
         "line 22", "#wrong must be a count or N/A"},
        {replaceLine(1, "# scaleacross-tier: rack"), "line 1", "unknown tier 'rack'"},
        {replaceLine(18, "        -8             2     float     sum      -1    12.0    0.00"
                         "    0.00      0    12.00    0.00    0.00      0"),
         "line 18", "size must be a positive integer"},
        {good + "#       size   count  type  redop  root  time algbw busbw #wrong\n", "line 52",
         "a second result table (the first begins at line 16)"},
        {replaceLine(16, "# size count type"), "line 16", "a column header without"},
        {"# nThread 1\n#  Rank  0 Group 0 Pid 1 on h device 0 [0] GPU\n", "", "no result table"},
    };
    for (const Case& c : cases) {
        std::vector<Diagnostic> problems;
        readNcclTests(c.text, "runs/x_all_reduce.txt", problems);
        QVERIFY2(hasProblem(problems, "runs/x_all_reduce.txt", c.line, c.words),
                 (c.line + ": " + c.words +
                  " / got: " + (problems.empty() ? std::string("nothing") : problems[0].str()))
                     .c_str());
        QVERIFY(problems[0].str().find("runs/x_all_reduce.txt: ") == 0);
    }
    // No tier anywhere: calibrateCluster says how to give one.
    std::string noTier = good.substr(good.find('\n') + 1);
    const CalibrationResult r = calibrateCluster(clusterOf("one", {building("B1", 8)}),
                                                 {{"x.txt", noTier, {}, {}, {}}}, std::nullopt);
    QVERIFY(!r.ok());
    QVERIFY(hasProblem(r.problems, "x.txt", "", "--tier host|building|cross-building"));
    // The file's collective unknown (no program line, a neutral name).
    std::string noColl = good;
    noColl.erase(noColl.find("# Collective test starting"),
                 noColl.find('\n', noColl.find("# Collective test starting")) -
                     noColl.find("# Collective test starting") + 1);
    std::vector<Diagnostic> problems;
    readNcclTests(noColl, "run1.txt", problems);
    QVERIFY(hasProblem(problems, "run1.txt", "", "the collective is unknown"));
    // A missing file names its path.
    problems.clear();
    QVERIFY(!loadNcclTestsInput("/nonexistent/run.txt", {}, {}, {}, problems));
    QVERIFY(!problems.empty() && problems[0].file == "/nonexistent/run.txt");
}

void TestCalibrate::wrongRowsLeftOut() {
    std::string text = syntheticTable(NcclCollective::AllReduce, 1, 8, 20.0, 300.0, 0.0, "host");
    // Row 5 (line 22) is wrong in both results, row 6 (line 23) out-of-place only.
    std::istringstream in(text);
    std::string out, l;
    for (int i = 1; std::getline(in, l); ++i) {
        if (i == 22 || i == 23) {
            const auto last = l.find_last_not_of(' ');
            l[last] = '3';
            if (i == 22) {
                const auto mid = l.find("      0", 60);
                l.replace(mid, 7, "     12");
            }
        }
        out += l + "\n";
    }
    std::vector<Diagnostic> problems;
    const NcclTestsTable t = readNcclTests(out, "w_all_reduce.txt", problems);
    QVERIFY(problems.empty());
    const AlphaBetaFit f = fitTable(t);
    QVERIFY(f.ok);
    QCOMPARE(f.skipped_lines, std::vector<int>{22});
    QCOMPARE(f.points, 2 * 31 - 3);
    QCOMPARE(int(f.sizes.size()), 30);
}

void TestCalibrate::gemmFitRecoversEfficiency() {
    Cluster c = clusterOf("one", {building("B1", 8)});
    std::vector<Diagnostic> problems;
    const auto gemm = loadGemmInput(fixture("h100_gemm.csv"), {}, problems);
    QVERIFY(gemm && problems.empty());
    const CalibrationResult r = calibrateCluster(c, {}, gemm);
    QVERIFY(r.ok());
    qInfo("%s", r.report.c_str());
    QVERIFY(r.gemm);
    QCOMPARE(r.gemm->gpu_model, std::string("H100"));
    const GpuModel& g = r.cluster.gpu_models.at("H100");
    // The fixture: the model's roofline at 0.78 and 0.66 with 2% noise.
    QVERIFY2(std::abs(g.gemm_efficiency - 0.78) < 0.02 * 0.78,
             std::to_string(g.gemm_efficiency).c_str());
    QVERIFY2(std::abs(g.gemm_efficiency_fp8 - 0.66) < 0.02 * 0.66,
             std::to_string(g.gemm_efficiency_fp8).c_str());
    QVERIFY(r.gemm->bf16.rms_relative_residual < 0.04);
    QCOMPARE(r.gemm->bf16.points, 12);
    QCOMPARE(r.gemm->fp8.points, 12);

    // Broken CSV: file and line named.
    problems.clear();
    readGemmCsv("m,n,k,dtype,tflops\n8192,8192,8192,bf16,700\n4096,4096,x,bf16,600\n"
                "1024,1024,1024,fp16,300\n",
                "g.csv", problems);
    QVERIFY(hasProblem(problems, "g.csv", "line 3", "k must be an integer"));
    QVERIFY(hasProblem(problems, "g.csv", "line 4", "dtype must be bf16 or fp8"));
    problems.clear();
    readGemmCsv("m,n,dtype,tflops\n", "g.csv", problems);
    QVERIFY(hasProblem(problems, "g.csv", "line 1", "no 'k' column"));
    // Two GPU models and none named: a problem, not a guess.
    Cluster two = c;
    GpuModel other = h100();
    other.name = "B200";
    two.gpu_models["B200"] = other;
    GemmInput noGpu{"g.csv", "m,n,k,dtype,tflops\n8192,8192,8192,bf16,700\n", {}};
    const CalibrationResult rr = calibrateCluster(two, {}, noGpu);
    QVERIFY(hasProblem(rr.problems, "g.csv", "", "name the measured one"));
}

void TestCalibrate::calibratedDiffersOnlyInWrittenFields() {
    const Scenario s = loadSampleScenario("single-building-70b.json");
    const std::string text =
        syntheticTable(NcclCollective::AllReduce, 1, 8, 20.0, 300.0, 0.01, "host");
    const std::string ib =
        syntheticTable(NcclCollective::AllReduce, 2, 8, 40.0, 44.0, 0.01, "building");
    const CalibrationResult r =
        calibrateCluster(s.cluster,
                         {{"nvlink.txt", text, {}, s.cluster.buildings[0].name, {}},
                          {"ib.txt", ib, {}, s.cluster.buildings[0].name, {}}},
                         std::nullopt);
    QVERIFY(r.ok());
    // The documents differ in exactly the four written keys.
    const nlohmann::json before = toJson(s.cluster), after = toJson(r.cluster);
    const nlohmann::json patch = nlohmann::json::diff(before, after);
    QCOMPARE(int(patch.size()), 4);
    for (const auto& op : patch) {
        QCOMPARE(op["op"].get<std::string>(), std::string("add"));
        const std::string path = op["path"].get<std::string>();
        QVERIFY2(path.rfind("/buildings/0/scale_", 0) == 0, path.c_str());
    }
    // Clearing them gives back the input, and its evaluation.
    Cluster cleared = r.cluster;
    for (Building& b : cleared.buildings)
        b.scale_up_efficiency = b.scale_up_latency_us = b.scale_out_efficiency =
            b.scale_out_latency_us = std::nullopt;
    QCOMPARE(cleared, s.cluster);
    // The calibrated cluster evaluates (differently: the fields are used).
    const EvaluationResult e0 = evaluate(s);
    const EvaluationResult e1 = evaluate(Scenario{r.cluster, s.model, s.plan});
    QVERIFY(std::holds_alternative<Evaluation>(e0) && std::holds_alternative<Evaluation>(e1));
    QVERIFY(std::get<Evaluation>(e0).step_time_s != std::get<Evaluation>(e1).step_time_s);
}

void TestCalibrate::builtinValuesGiveIdenticalEvaluation() {
    // Efficiencies equal to the built-in profiles' (nvlink 0.8, roce 0.92)
    // reproduce every figure bit for bit: the fields replace exactly the
    // constants. (The step latencies have no single built-in value: 1 us
    // a TP step, alpha + 1 or 2 us a DP step; see docs/CALIBRATION.md.)
    for (const char* name : {"single-building-70b.json", "two-buildings-405b.json"}) {
        const Scenario s = loadSampleScenario(name);
        Scenario same = s;
        for (Building& b : same.cluster.buildings) {
            b.scale_up_efficiency = builtinScaleUpEfficiency();
            b.scale_out_efficiency = builtinScaleOutEfficiency();
        }
        const EvaluationResult a = evaluate(s), b = evaluate(same);
        QVERIFY(std::holds_alternative<Evaluation>(a) && std::holds_alternative<Evaluation>(b));
        QCOMPARE(std::get<Evaluation>(a).step_time_s, std::get<Evaluation>(b).step_time_s);
        QCOMPARE(evaluationToJson(std::get<Evaluation>(a), true).dump(),
                 evaluationToJson(std::get<Evaluation>(b), true).dump());
    }
}

void TestCalibrate::fieldsParsedStrictlyAndWrittenOnlyWhenPresent() {
    const std::string path = sourceDir() + "/sample_clusters/clusters/single-building-h100.json";
    const std::string text = readAll(path);
    const Loaded<Cluster> plain = parseCluster(text, "c.json");
    QVERIFY(plain.ok());
    const std::string written = dumpCanonical(toJson(*plain.value));
    QVERIFY(written.find("scale_up_efficiency") == std::string::npos);
    QVERIFY(written.find("latency_us") == std::string::npos);

    auto withFields = [&](const std::string& fields) {
        nlohmann::json j = nlohmann::json::parse(text);
        const nlohmann::json add = nlohmann::json::parse("{" + fields + "}");
        for (auto& [k, v] : add.items())
            j["buildings"][0][k] = v;
        return parseCluster(j.dump(), "c.json");
    };
    const Loaded<Cluster> cal =
        withFields("\"scale_up_efficiency\": 0.83, \"scale_up_latency_us\": 0.9,"
                   "\"scale_out_efficiency\": 0.88, \"scale_out_latency_us\": 1.3");
    QVERIFY(cal.ok());
    const Building& b = cal.value->buildings[0];
    QCOMPARE(*b.scale_up_efficiency, 0.83);
    QCOMPARE(*b.scale_up_latency_us, 0.9);
    QCOMPARE(*b.scale_out_efficiency, 0.88);
    QCOMPARE(*b.scale_out_latency_us, 1.3);
    const Loaded<Cluster> again = parseCluster(dumpCanonical(toJson(*cal.value)), "c2.json");
    QVERIFY(again.ok());
    QCOMPARE(*again.value, *cal.value);

    struct Bad {
        std::string fields, path;
    };
    for (const Bad& bad :
         std::vector<Bad>{{"\"scale_up_efficiency\": 0", "scale_up_efficiency"},
                          {"\"scale_out_efficiency\": 1.2", "scale_out_efficiency"},
                          {"\"scale_up_latency_us\": -1", "scale_up_latency_us"},
                          {"\"scale_out_latency_us\": 20000", "scale_out_latency_us"},
                          {"\"scale_out_latency_us\": \"1\"", "scale_out_latency_us"}}) {
        const Loaded<Cluster> l = withFields(bad.fields);
        QVERIFY(!l.problems.empty());
        QVERIFY2(l.problems[0].path == "/buildings/0/" + bad.path, l.problems[0].str().c_str());
    }
    // A cluster built in code gets the same checks.
    Scenario s = loadSampleScenario("single-building-70b.json");
    s.cluster.buildings[0].scale_out_efficiency = 1.5;
    const std::vector<Diagnostic> v = validateScenario(s);
    QVERIFY(!v.empty());
    QVERIFY(v[0].path == "/buildings/0/scale_out_efficiency");
}

QTEST_GUILESS_MAIN(TestCalibrate)
#include "tst_calibrate.moc"

// The plan's "compression" of DP gradients across buildings: bytes on the
// edges of a two-building cluster by hand for bf16, fp8 and top-k (with
// hierarchical, ring and tree algorithms), the encode/decode passes and the
// error-feedback residual, what it does to a step, and the plan key's
// parse / validate / write and framework round trips. Every expected value
// is worked out here from the mechanism in docs/COST_MODEL.md
// ("Compression across buildings"), not by calling the code under test twice.

#include "cost/collectives.h"
#include "cost/evaluate.h"
#include "cost/network.h"
#include "cost/traffic.h"
#include "explore/designspace.h"
#include "formats/documents.h"
#include "frameworks/framework.h"
#include "topology/topology.h"

#include "../common/costmodel_checks.h"
#include "../common/fixtures.h"

#include <QTest>
#include <nlohmann/json.hpp>

#include <cmath>

using namespace sa;
using namespace sa::testing;

Q_DECLARE_METATYPE(sa::Compression)
Q_DECLARE_METATYPE(std::optional<sa::Compression>)

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kHbmBps = 3.35e12 * 0.8; // H100 HBM at the kernels' efficiency

// Two buildings of 32 H100, each in two zones of 16 (so the ring inside a
// building crosses zone uplinks), joined by one link.
Cluster twoBuildings(double linkGbps, double latencyMs, std::int64_t zoneGpus = 16) {
    return clusterOf(
        "two-buildings",
        {building("B1", 32, {.zone_gpus = zoneGpus}), building("B2", 32, {.zone_gpus = zoneGpus})},
        {link("B1", "B2", linkGbps, latencyMs)});
}

Compression method(CompressionMethod m, double ratio = 0.01, bool ef = true) {
    Compression c;
    c.method = m;
    c.topk_ratio = ratio;
    c.error_feedback = ef;
    return c;
}

// TP8 PP2 DP4 on 64 GPUs, DP outermost: replicas 0-1 in B1, 2-3 in B2.
Plan dpAcross(int zero, CollectiveAlgo algo, std::optional<Compression> c) {
    Plan p = makePlan(8, 2, 4, 32);
    p.zero_stage = zero;
    p.collectives[Dim::DP] = algo;
    p.dp_compression = c;
    return p;
}

// Per-GPU parameters of one stage of gptModel() at TP8: 8 layers of
// 12 h^2 / t + 2 h, and the embedding (stage 0) or output layer (stage 1)
// of V h / t.
double stageParams() {
    const double h = 4096, V = 51200, t = 8;
    return 8 * (12 * h * h / t + 2 * h) + V * h / t;
}

const LinkUsage* interBuilding(const Evaluation& ev) {
    for (const LinkUsage& l : ev.links)
        if (l.tier == LinkTier::InterBuilding)
            return &l;
    return nullptr;
}

std::vector<Diagnostic> planProblems(const nlohmann::json& j) {
    return parsePlan(j.dump(), "plan.json").problems;
}

bool hasProblem(const std::vector<Diagnostic>& ds, const std::string& path,
                const std::string& words) {
    for (const Diagnostic& d : ds)
        if (d.path == path && d.message.find(words) != std::string::npos && d.file == "plan.json")
            return true;
    return false;
}

QByteArray listed(const std::vector<Diagnostic>& ds) {
    QByteArray out;
    for (const Diagnostic& d : ds)
        out += QByteArray::fromStdString(d.file + ": " + d.path + ": " + d.message + "\n");
    return out;
}

} // namespace

class TestCompression : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // sa::loadCollective on a hand-made group.
    void hierarchicalCrossBytes_data();
    void hierarchicalCrossBytes();
    void flatRingAndTreeCastCrossingsOnly();
    void topkNeedsHierarchical();
    // Through sa::evaluate.
    void evaluationBytesAndSavings_data();
    void evaluationBytesAndSavings();
    void codecTimeAndResidual();
    void stepFallsOnSlowLink();
    void noCompressionUnchanged();
    void nothingCrossesWarns();
    // The plan key.
    void writeParseRoundTrip();
    void badInputs_data();
    void badInputs();
    void frameworkRoundTrip_data();
    void frameworkRoundTrip();
    void optimizerKeepsTopkHierarchical();
};

// ---- the collective ------------------------------------------------------------

void TestCompression::hierarchicalCrossBytes_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<Compression>("compression");
    QTest::addColumn<double>("perDirection");
    QTest::addColumn<double>("codec");
    QTest::addColumn<double>("residual");
    // 8 members, 2 per zone, 4 per building; 3 concurrent groups of
    // S = 1e9 fp32 bytes. Shard per member S / 4 = 2.5e8 B = 6.25e7
    // elements; across the 2 buildings 4 shard rings of 2 members.
    const double groups = 3, shard = 2.5e8, elems = 6.25e7;
    const int AR = int(CollectiveKind::AllReduce), RS = int(CollectiveKind::ReduceScatter);
    // All-reduce: each member sends 2 (k-1)/k = 1 shard across; cast
    // passes encode what it sends, decode what it receives: 2 x elems x
    // (4 + wire) bytes of HBM.
    QTest::newRow("all-reduce bf16") << AR << method(CompressionMethod::Bf16)
                                     << groups * 4 * shard * 2 / 4 << 2 * elems * (4 + 2) << 0.0;
    const double fp8 = 1 + 4.0 / 128; // E4M3 value + one fp32 scale per 128
    QTest::newRow("all-reduce fp8") << AR << method(CompressionMethod::Fp8)
                                    << groups * 4 * shard * fp8 / 4 << 2 * elems * (4 + fp8) << 0.0;
    // Top-k 1 %: all-gather of (value 4 B, index 4 B) pairs, (k-1) = 1
    // building's worth per member: 0.01 x 6.25e7 x 8 B. HBM per element:
    // error feedback 3 x 4, threshold 4, compaction 4 + 0.01 x 8 + residual
    // 4, decode 4 + 2 buildings x 0.01 x (8 + 2 x 4).
    const double topkPerElem = 12 + 4 + (4 + 0.08 + 4) + (4 + 2 * 0.01 * 16);
    QTest::newRow("all-reduce topk")
        << AR << method(CompressionMethod::TopK) << groups * 4 * 0.01 * elems * 8
        << elems * topkPerElem << elems;
    // Without error feedback: no add, no residual write, no residual.
    const double noEfPerElem = 4 + (4 + 0.08) + (4 + 2 * 0.01 * 16);
    QTest::newRow("all-reduce topk no feedback")
        << AR << method(CompressionMethod::TopK, 0.01, false) << groups * 4 * 0.01 * elems * 8
        << elems * noEfPerElem << 0.0;
    // Reduce-scatter: (k-1)/k = 1/2 shard across; top-k sends the pairs in
    // the other building's half, decodes only its own half.
    QTest::newRow("reduce-scatter bf16")
        << RS << method(CompressionMethod::Bf16) << groups * 4 * 0.5 * shard * 2 / 4
        << 2 * 0.5 * elems * (4 + 2) << 0.0;
    const double rsPerElem = 12 + 4 + (4 + 0.1 * 8 + 4) + (2 + 0.1 * 16);
    QTest::newRow("reduce-scatter topk 10%")
        << RS << method(CompressionMethod::TopK, 0.1) << groups * 4 * 0.5 * 0.1 * elems * 8
        << elems * rsPerElem << elems;
}

namespace {
struct Loaded2 {
    double cross[2] = {0, 0};
    std::vector<double> other[2]; // every other edge's load, per direction
    CollectiveCost cost;
};

Loaded2 loadOnTwoBuildings(CollectiveKind kind, CollectiveAlgo algo, std::optional<Compression> c) {
    const Cluster cl = twoBuildings(1000, 1.0);
    const Topology topo(cl);
    const std::vector<EdgeTransport> transport = edgeTransports(cl, topo, makePlan());
    TrafficPhase phase(topo, transport);
    GroupSpread g;
    g.sites = {{Location{0, 0}, 2}, {Location{0, 1}, 2}, {Location{1, 0}, 2}, {Location{1, 1}, 2}};
    g.members = 8;
    g.buildings = 2;
    CollectiveEnv env;
    env.nic_bps = 46e9;
    env.nvlink_bps = 360e9;
    env.alpha_s = 5e-6;
    Loaded2 out;
    out.cost = loadCollective(phase, g, kind, algo, 1e9, 3, env, CrossCompression{c, 4});
    for (const TopoEdge& e : topo.edges())
        for (int dir = 0; dir < 2; ++dir) {
            if (e.kind == EdgeKind::InterBuilding)
                out.cross[dir] = phase.load(e.id, dir);
            else
                out.other[dir].push_back(phase.load(e.id, dir));
        }
    return out;
}
} // namespace

void TestCompression::hierarchicalCrossBytes() {
    QFETCH(int, kind);
    QFETCH(Compression, compression);
    QFETCH(double, perDirection);
    QFETCH(double, codec);
    QFETCH(double, residual);
    const CollectiveKind k = CollectiveKind(kind);
    const Loaded2 plain = loadOnTwoBuildings(k, CollectiveAlgo::Hierarchical, std::nullopt);
    const Loaded2 packed = loadOnTwoBuildings(k, CollectiveAlgo::Hierarchical, compression);
    QVERIFY(packed.cost.compressed);
    QVERIFY(!plain.cost.compressed);
    for (int dir = 0; dir < 2; ++dir)
        QVERIFY_CLOSE(packed.cross[dir], perDirection, 1e-12);
    QVERIFY_CLOSE(packed.cost.codec_hbm_bytes, codec, 1e-12);
    QCOMPARE(packed.cost.residual_elements, residual);
    QCOMPARE(plain.cost.codec_hbm_bytes, 0.0);
    // Inside a building the rings run uncompressed: the uplink of each
    // building's second zone carries only its reduce-scatter and
    // all-gather, the same bytes as without compression (zone 0's uplinks
    // also carry the shards that leave the building, so they shrink).
    int sameEdges = 0;
    for (int dir = 0; dir < 2; ++dir)
        for (std::size_t i = 0; i < plain.other[dir].size(); ++i) {
            QVERIFY(packed.other[dir][i] <= plain.other[dir][i]);
            sameEdges += plain.other[dir][i] > 0 && packed.other[dir][i] == plain.other[dir][i];
        }
    QVERIFY2(sameEdges >= 4, QByteArray::number(sameEdges)); // 2 zone-1 uplinks, both ways
    // The NIC term of a member: its share of the intra-building ring plus
    // the bytes it sends across (per member: perDirection / 3 groups / 4).
    const double f = k == CollectiveKind::AllReduce ? 2 : 1;
    const double intra = f * 3.0 / 4 * 1e9 / 46e9;
    QVERIFY_CLOSE(packed.cost.bandwidth_s, intra + perDirection / 12 / 46e9, 1e-12);
}

void TestCompression::flatRingAndTreeCastCrossingsOnly() {
    // A flat ring over the 4 sites crosses the building boundary twice
    // (B1 zone 1 -> B2 zone 0 and the wrap-around); each crossing carries
    // the ring's 2 (n-1)/n S = 1.75e9 bytes per group, bf16 halves it. The
    // zone crossings inside each building stay fp32.
    const auto ring = loadOnTwoBuildings(CollectiveKind::AllReduce, CollectiveAlgo::Ring,
                                         method(CompressionMethod::Bf16));
    const auto ringPlain =
        loadOnTwoBuildings(CollectiveKind::AllReduce, CollectiveAlgo::Ring, std::nullopt);
    for (int dir = 0; dir < 2; ++dir) {
        QVERIFY_CLOSE(ringPlain.cross[dir], 3 * 1.75e9, 1e-12);
        QVERIFY_CLOSE(ring.cross[dir], 3 * 1.75e9 / 2, 1e-12);
    }
    QVERIFY(ring.cost.compressed);
    // The boundary GPU encodes the 1.75e9 B it sends (4.375e8 elements)
    // and decodes as many: 2 x 4.375e8 x (4 + 2).
    QVERIFY_CLOSE(ring.cost.codec_hbm_bytes, 2 * 4.375e8 * 6, 1e-12);
    QCOMPARE(ring.cost.bandwidth_s, ringPlain.cost.bandwidth_s);
    // A tree: f S / 2 = 1e9 per direction across the boundary; fp8.
    const double fp8 = 1 + 4.0 / 128;
    const auto tree = loadOnTwoBuildings(CollectiveKind::AllReduce, CollectiveAlgo::Tree,
                                         method(CompressionMethod::Fp8));
    for (int dir = 0; dir < 2; ++dir)
        QVERIFY_CLOSE(tree.cross[dir], 3 * 1e9 * fp8 / 4, 1e-12);
    QVERIFY_CLOSE(tree.cost.codec_hbm_bytes, 2 * 2.5e8 * (4 + fp8), 1e-12);
}

void TestCompression::topkNeedsHierarchical() {
    // Sparse vectors do not add up along a ring: the collective leaves
    // top-k out (validation refuses such plans; see badInputs).
    const auto ring = loadOnTwoBuildings(CollectiveKind::AllReduce, CollectiveAlgo::Ring,
                                         method(CompressionMethod::TopK));
    QVERIFY(!ring.cost.compressed);
    QVERIFY_CLOSE(ring.cross[0], 3 * 1.75e9, 1e-12);
    // Parameter all-gathers are never compressed.
    const auto ag = loadOnTwoBuildings(CollectiveKind::AllGather, CollectiveAlgo::Hierarchical,
                                       method(CompressionMethod::Bf16));
    QVERIFY(!ag.cost.compressed);
    QVERIFY_CLOSE(ag.cross[0], 3 * 0.5e9, 1e-12);
}

// ---- through the evaluation ------------------------------------------------------

void TestCompression::evaluationBytesAndSavings_data() {
    QTest::addColumn<int>("zero");
    QTest::addColumn<std::optional<Compression>>("compression");
    QTest::addColumn<double>("perDirection");
    QTest::addColumn<double>("saved");
    const double P = 2 * stageParams(); // both stages, per GPU
    const double cell = 8;              // 8 TP ranks: 8 concurrent DP groups per stage
    // Hierarchical over 2 buildings of 2 replicas: per direction the
    // gradients send (k-1)/k x S / 2 x 2 = S / 2 per group for a
    // reduce-scatter, S for an all-reduce (S = 4 P bytes fp32).
    // ZeRO-1 also all-gathers bf16 weights: 0.5 x 2 P, never compressed.
    QTest::newRow("zero-1 none") << 1 << std::optional<Compression>() << cell * 0.5 * (4 + 2) * P
                                 << 0.0;
    QTest::newRow("zero-1 bf16") << 1 << std::optional<Compression>(method(CompressionMethod::Bf16))
                                 << cell * 0.5 * (2 + 2) * P << 2 * cell * 0.5 * 2 * P;
    const double fp8 = 1 + 4.0 / 128;
    QTest::newRow("zero-1 fp8") << 1 << std::optional<Compression>(method(CompressionMethod::Fp8))
                                << cell * 0.5 * (fp8 + 2) * P << 2 * cell * 0.5 * (4 - fp8) * P;
    // Top-k 1 %: a member's shard is P / 2 elements; it sends the pairs in
    // the other building's half: 1/2 x 0.01 x P / 2 x 8 B = 0.02 P, times 2
    // members per building and 8 groups.
    QTest::newRow("zero-1 topk") << 1 << std::optional<Compression>(method(CompressionMethod::TopK))
                                 << cell * (2 * 0.02 * P + 0.5 * 2 * P)
                                 << 2 * cell * (0.5 * 4 * P - 2 * 0.02 * P);
    // ZeRO-0: an all-reduce; top-k all-gathers the other building's pairs:
    // 0.01 x P / 2 x 8 B per member.
    QTest::newRow("zero-0 topk") << 0 << std::optional<Compression>(method(CompressionMethod::TopK))
                                 << cell * 2 * 0.04 * P << 2 * cell * (4 * P - 2 * 0.04 * P);
}

void TestCompression::evaluationBytesAndSavings() {
    QFETCH(int, zero);
    QFETCH(std::optional<Compression>, compression);
    QFETCH(double, perDirection);
    QFETCH(double, saved);
    const Plan p = dpAcross(zero, CollectiveAlgo::Hierarchical, compression);
    EVALUATE(ev, (Scenario{twoBuildings(1000, 5.0, 32), gptModel(), p}));
    const LinkUsage* l = interBuilding(ev);
    QVERIFY(l);
    QVERIFY_CLOSE(l->bytes_per_step, perDirection, 1e-9);
    QVERIFY_CLOSE(ev.cross_building_bytes, 2 * perDirection, 1e-9);
    QCOMPARE(bool(ev.compression), bool(compression));
    if (compression) {
        QVERIFY(ev.compression->applied);
        QCOMPARE(ev.compression->method, compression->method);
        QVERIFY_CLOSE(ev.compression->bytes_saved_per_step, saved, 1e-9);
    }
}

void TestCompression::codecTimeAndResidual() {
    const double Ps = stageParams();
    const Scenario none{twoBuildings(1000, 5.0, 32), gptModel(),
                        dpAcross(1, CollectiveAlgo::Hierarchical, std::nullopt)};
    EVALUATE(base, none);
    // bf16, ZeRO-1: a member sends 1/2 of its shard (Ps / 2 elements) =
    // Ps / 4 elements and receives as many: 2 x Ps / 4 x (4 + 2) B of HBM.
    Scenario bf16 = none;
    bf16.plan.dp_compression = method(CompressionMethod::Bf16);
    EVALUATE(cast, bf16);
    QVERIFY_CLOSE(cast.compression->compute_s, 2 * Ps / 4 * 6 / kHbmBps, 1e-12);
    QCOMPARE(cast.compression->residual_gib, 0.0);
    QCOMPARE(cast.memory.peak_gib_per_gpu, base.memory.peak_gib_per_gpu);
    // Top-k with error feedback: the residual is the fp32 shard, Ps / 2
    // elements x 4 B per GPU, in the peak with the allocator's 5 %.
    Scenario topk = none;
    topk.plan.dp_compression = method(CompressionMethod::TopK);
    EVALUATE(sparse, topk);
    QVERIFY_CLOSE(sparse.compression->residual_gib, Ps / 2 * 4 / kGiB, 1e-12);
    QVERIFY_CLOSE(sparse.memory.compression_gib, Ps / 2 * 4 / kGiB, 1e-12);
    QVERIFY_CLOSE(sparse.memory.peak_gib_per_gpu - base.memory.peak_gib_per_gpu,
                  Ps / 2 * 4 * 1.05 / kGiB, 1e-9);
    // Reduce-scatter passes per shard element (k = 2, r = 0.01, 4 B):
    // 12 + 4 + (4 + 0.08 + 4) + (2 + 0.16).
    const double perElem = 12 + 4 + 8.08 + 2.16;
    QVERIFY_CLOSE(sparse.compression->compute_s, Ps / 2 * perElem / kHbmBps, 1e-12);
    bool warned = false;
    for (const std::string& w : sparse.warnings)
        warned = warned || (w.find("optimizer's numerics") != std::string::npos &&
                            w.find("1%") != std::string::npos);
    QVERIFY(warned);
    for (const std::string& w : cast.warnings)
        QVERIFY2(w.find("numerics") == std::string::npos, w.c_str());
}

void TestCompression::stepFallsOnSlowLink() {
    // A 25 Gbit/s link between the buildings: the gradient sync is the
    // bottleneck, and the fewer bytes cross it, the shorter the step.
    const Cluster c = twoBuildings(25, 5.0, 32);
    double previous = 1e300;
    for (const auto& comp :
         {std::optional<Compression>(), std::optional<Compression>(method(CompressionMethod::Bf16)),
          std::optional<Compression>(method(CompressionMethod::Fp8)),
          std::optional<Compression>(method(CompressionMethod::TopK))}) {
        EVALUATE(ev, (Scenario{c, gptModel(), dpAcross(0, CollectiveAlgo::Hierarchical, comp)}));
        QVERIFY2(ev.step_time_s < previous, numbers(ev.step_time_s, previous).constData());
        previous = ev.step_time_s;
    }
    // Inside one building nothing crosses: a compression changes nothing.
    const Cluster one = clusterOf("one", {building("B1", 64, {.zone_gpus = 32})});
    EVALUATE(plain, (Scenario{one, gptModel(), dpAcross(0, CollectiveAlgo::Ring, std::nullopt)}));
    EVALUATE(cast, (Scenario{one, gptModel(),
                             dpAcross(0, CollectiveAlgo::Ring, method(CompressionMethod::Fp8))}));
    QCOMPARE(cast.step_time_s, plain.step_time_s);
    QVERIFY(!cast.compression->applied);
    QCOMPARE(cast.compression->bytes_saved_per_step, 0.0);
}

void TestCompression::noCompressionUnchanged() {
    // Without the key nothing is reported and nothing is written.
    EVALUATE(ev, (Scenario{twoBuildings(100, 5.0, 32), gptModel(),
                           dpAcross(1, CollectiveAlgo::Hierarchical, std::nullopt)}));
    QVERIFY(!ev.compression);
    QCOMPARE(ev.memory.compression_gib, 0.0);
    QVERIFY(!toJson(makePlan()).contains("compression"));
    // A cast on the parameter all-gather's side of ZeRO-1 is never applied:
    // the evaluation with bf16 gradients already is the same as bf16
    // compression of fp32 gradients, bar the cast passes.
    Plan reduced = dpAcross(1, CollectiveAlgo::Hierarchical, std::nullopt);
    reduced.grad_reduce_bytes = 2;
    EVALUATE(b16, (Scenario{twoBuildings(100, 5.0, 32), gptModel(), reduced}));
    EVALUATE(cast, (Scenario{twoBuildings(100, 5.0, 32), gptModel(),
                             dpAcross(1, CollectiveAlgo::Hierarchical,
                                      method(CompressionMethod::Bf16))}));
    QVERIFY_CLOSE(cast.cross_building_bytes, b16.cross_building_bytes, 1e-12);
}

void TestCompression::nothingCrossesWarns() {
    Plan p = dpAcross(3, CollectiveAlgo::Hierarchical, method(CompressionMethod::Bf16));
    p.parallelism.pp = 1;
    p.parallelism.dp = 8;
    EVALUATE(ev, (Scenario{twoBuildings(100, 5.0, 32), gptModel(), p}));
    QVERIFY(!ev.compression->applied);
    bool warned = false;
    for (const std::string& w : ev.warnings)
        warned = warned || w.find("ZeRO-3") != std::string::npos;
    QVERIFY(warned);
}

// ---- the plan key ------------------------------------------------------------------

void TestCompression::writeParseRoundTrip() {
    for (const Compression& c :
         {method(CompressionMethod::Bf16), method(CompressionMethod::Fp8),
          method(CompressionMethod::TopK, 0.001, false), method(CompressionMethod::TopK, 1.0)}) {
        const Plan p = dpAcross(1, CollectiveAlgo::Hierarchical, c);
        const nlohmann::json j = toJson(p);
        QCOMPARE(QString::fromStdString(j["compression"]["dp"]["method"].get<std::string>()),
                 QString(toString(c.method)));
        QCOMPARE(j["compression"]["dp"].contains("topk_ratio"),
                 c.method == CompressionMethod::TopK);
        const Loaded<Plan> back = parsePlan(dumpCanonical(j), "plan.json");
        QVERIFY2(back.ok(), listed(back.problems).constData());
        QVERIFY(*back.value == p);
        QCOMPARE(dumpCanonical(toJson(*back.value)), dumpCanonical(j));
    }
}

void TestCompression::badInputs_data() {
    QTest::addColumn<QString>("compression");
    QTest::addColumn<QString>("algo");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("words");
    QTest::newRow("unknown method") << R"({"dp": {"method": "int4"}})"
                                    << "hierarchical"
                                    << "/compression/dp/method"
                                    << "must be one of bf16, fp8, topk, got 'int4'";
    QTest::newRow("no method") << R"({"dp": {}})"
                               << "hierarchical"
                               << "/compression/dp"
                               << "method";
    QTest::newRow("ratio zero") << R"({"dp": {"method": "topk", "topk_ratio": 0}})"
                                << "hierarchical"
                                << "/compression/dp/topk_ratio"
                                << "got 0";
    QTest::newRow("ratio above one") << R"({"dp": {"method": "topk", "topk_ratio": 1.5}})"
                                     << "hierarchical"
                                     << "/compression/dp/topk_ratio"
                                     << "got 1.5";
    QTest::newRow("topk with a ring") << R"({"dp": {"method": "topk"}})"
                                      << "ring"
                                      << "/compression/dp/method"
                                      << R"(use "collectives": {"dp": "hierarchical"})";
    QTest::newRow("topk with auto") << R"({"dp": {"method": "topk"}})"
                                    << ""
                                    << "/compression/dp/method"
                                    << "topk needs the hierarchical DP algorithm";
    QTest::newRow("ratio with a cast") << R"({"dp": {"method": "bf16", "topk_ratio": 0.1}})"
                                       << "ring"
                                       << "/compression/dp/topk_ratio"
                                       << "applies to method topk only, not bf16";
    QTest::newRow("other dimension") << R"({"dp": {"method": "fp8"}, "pp": {"method": "fp8"}})"
                                     << "ring"
                                     << "/compression"
                                     << "pp";
    QTest::newRow("feedback not a boolean") << R"({"dp": {"method": "topk", "error_feedback": 1}})"
                                            << "hierarchical"
                                            << "/compression/dp/error_feedback"
                                            << "";
}

void TestCompression::badInputs() {
    QFETCH(QString, compression);
    QFETCH(QString, algo);
    QFETCH(QString, path);
    QFETCH(QString, words);
    nlohmann::json j = toJson(makePlan(8, 2, 4, 32));
    if (!algo.isEmpty())
        j["collectives"]["dp"] = algo.toStdString();
    j["compression"] = nlohmann::json::parse(compression.toStdString());
    const auto problems = planProblems(j);
    QVERIFY2(hasProblem(problems, path.toStdString(), words.toStdString()),
             listed(problems).constData());
}

void TestCompression::frameworkRoundTrip_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<Compression>("compression");
    for (frameworks::Framework f : {frameworks::Framework::Megatron, frameworks::Framework::Nemo,
                                    frameworks::Framework::Torchtitan}) {
        QTest::newRow((std::string(toString(f)) + " fp8").c_str())
            << int(f) << method(CompressionMethod::Fp8);
        QTest::newRow((std::string(toString(f)) + " topk").c_str())
            << int(f) << method(CompressionMethod::TopK, 0.05, false);
    }
}

void TestCompression::frameworkRoundTrip() {
    QFETCH(int, framework);
    QFETCH(Compression, compression);
    using namespace sa::frameworks;
    const Framework f = Framework(framework);
    Plan plan = dpAcross(1, CollectiveAlgo::Hierarchical, compression);
    plan.name = "compressed";
    const Model model = gptModel();
    const Exported ex = exportPlan(f, model, plan);
    QVERIFY2(ex.ok(), listed(ex.problems).constData());
    bool noted = false;
    for (const std::string& n : ex.notes)
        noted = noted || n.find("compression") != std::string::npos;
    QVERIFY2(noted, ex.text.c_str());
    ImportOptions opt;
    opt.file = "exported";
    const Imported back = f == Framework::Nemo         ? importNemo(ex.text, opt)
                          : f == Framework::Torchtitan ? importTorchtitan(ex.text, opt)
                                                       : importMegatronScript(ex.text, opt);
    QVERIFY2(back.ok(), (listed(back.problems) + QByteArray::fromStdString(ex.text)).constData());
    QVERIFY(back.plan->dp_compression);
    QVERIFY(*back.plan->dp_compression == compression);
    Plan p = *back.plan;
    p.name = plan.name;
    p.description = plan.description;
    QVERIFY2(p == plan, (toJson(p).dump() + "\n" + toJson(plan).dump() + "\n" + ex.text).c_str());
}

void TestCompression::optimizerKeepsTopkHierarchical() {
    // The optimizer varies the DP algorithm; with top-k only the
    // hierarchical one is valid, with a cast all four are.
    const Cluster c = twoBuildings(100, 5.0, 32);
    for (CompressionMethod m : {CompressionMethod::TopK, CompressionMethod::Fp8}) {
        const DesignSpace space(c, gptModel(),
                                dpAcross(1, CollectiveAlgo::Hierarchical, method(m)));
        QVERIFY(space.structureCount() > 0);
        for (std::size_t s = 0; s < space.structureCount(); ++s) {
            const int n = space.choices(s, DesignSpace::kDpAlgo);
            if (space.structure(s).parallelism.dp > 1)
                QCOMPARE(n, m == CompressionMethod::TopK ? 1 : 4);
            if (m == CompressionMethod::TopK)
                QCOMPARE(QString::fromStdString(space.choiceLabel(s, DesignSpace::kDpAlgo, 0)),
                         QStringLiteral("dp hierarchical"));
        }
    }
}

QTEST_GUILESS_MAIN(TestCompression)
#include "tst_compression.moc"

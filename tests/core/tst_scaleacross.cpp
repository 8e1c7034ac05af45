// The physics of scale-across training, each as a named case: which
// dimension should cross the slow link, how bandwidth, latency and
// microbatches interact, hierarchical vs flat DP, traffic conservation and
// window-limited transports.

#include "cost/balance.h"
#include "cost/collectives.h"
#include "cost/evaluate.h"
#include "cost/network.h"
#include "cost/stages.h"
#include "explore/sweep.h"
#include "formats/documents.h"

#include "../common/costmodel_checks.h"
#include "../common/fixtures.h"

#include <QtTest>

#include <cmath>

using namespace sa;
using namespace sa::testing;

namespace {

// Two buildings of 1,024 H100 each, one zone each, joined by one link.
Scenario twoBuildings(double linkGbps, double latencyMs,
                      const std::string& tech = "roce-long-haul") {
    Scenario s;
    s.cluster = clusterOf("pair",
                          {building("B1", 1024, {.region = "B1", .zone_gpus = 1024}),
                           building("B2", 1024, {.region = "B2", .zone_gpus = 1024})},
                          {link("B1", "B2", linkGbps, latencyMs, tech, "B1-B2")});

    s.model.name = "llama-70b-like";
    s.model.layers = 80;
    s.model.hidden = 8192;
    s.model.ffn_hidden = 28672;
    s.model.heads = 64;
    s.model.kv_heads = 8;
    s.model.vocab = 128256;

    // 2,048 GPUs.
    s.plan = makePlan(8, 4, 64, 64 * 16, Recompute::Selective, "base");
    s.plan.sequence_length = 4096;
    return s;
}

Scenario dpAcross(Scenario s) {
    s.plan.rank_order = {Dim::TP, Dim::CP, Dim::PP, Dim::DP}; // DP outermost: DP crosses
    s.plan.collectives[Dim::DP] = CollectiveAlgo::Hierarchical;
    return s;
}

Scenario ppAcross(Scenario s) {
    s.plan.rank_order = {Dim::TP, Dim::CP, Dim::DP, Dim::PP}; // PP outermost: only P2P crosses
    return s;
}

} // namespace

class TestScaleAcross : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void placementFollowsRankOrder();
    void crossoverDpVsPpAcrossLink();
    void moreBandwidthNeverSlower_data();
    void moreBandwidthNeverSlower();
    void moreLatencyNeverFaster_data();
    void moreLatencyNeverFaster();
    void latencyHurtsPpAcrossMoreWithFewMicrobatches();
    void strict1F1BStallsOnLongLink();
    void latencyHidingWarmupFallsStageByStage();
    void hierarchicalBeatsFlatRingOnThinLink();
    void dpTrafficConservation();
    void p2pTrafficConservation();
    void windowLimitedSingleFlow();
    void moreFlowsLiftLongLinkToLineRate();
    void flowOverrideSpeedsUpPpAcrossLongLink();
    void ncclBuffsizeOverrideSpeedsUpPpAcrossLongLink();
    void shortPfcHeadroomWarnsAndSlows();
    void hostCpuCapSlowsTcpLink();
    void balancedLayersFollowGpuSpeed();
    void placementOverCapacityNamesBuilding();
    void sweepPathsAndRanges();
};

void TestScaleAcross::placementFollowsRankOrder() {
    const auto base = twoBuildings(1000, 1);
    const Evaluation dp = evaluated(dpAcross(base));
    const Evaluation pp = evaluated(ppAcross(base));
    // DP across: every stage spans both buildings; PP across: stages 0-1 in
    // B1 and 2-3 in B2.
    QCOMPARE(pp.stage_building, (std::vector<int>{0, 0, 1, 1}));
    const auto& dpLink = linkNamed(dp, "B1-B2");
    const auto& ppLink = linkNamed(pp, "B1-B2");
    QVERIFY(std::find(dpLink.dims.begin(), dpLink.dims.end(), Dim::DP) != dpLink.dims.end());
    QVERIFY(std::find(dpLink.dims.begin(), dpLink.dims.end(), Dim::PP) == dpLink.dims.end());
    QCOMPARE(ppLink.dims, std::vector<Dim>{Dim::PP});
}

void TestScaleAcross::crossoverDpVsPpAcrossLink() {
    // An 8B model with 16 microbatches of 4K tokens per replica: P2P moves
    // more bytes per step than the DP gradient sync, so on a thin link DP
    // across wins; on a fat link the DP sync that crosses buildings is
    // exposed past the backward pass and PP across wins. The tool finds
    // where the two meet.
    auto base = twoBuildings(1000, 1);
    base.model.layers = 32;
    base.model.hidden = 4096;
    base.model.ffn_hidden = 14336;
    base.model.heads = 32;
    const Scenario a = ppAcross(base), b = dpAcross(base);
    std::string err;
    auto x = findCrossover(a, b, "links.B1-B2.bandwidth_gbps", 10, 1e6, &err);
    QVERIFY2(x.has_value(), err.c_str());
    QVERIFY(!x->a_wins_below); // DP across wins on thin links
    std::printf("DP-vs-PP crossover at %.0f Gbit/s on a 1 ms link\n", x->value);
    std::string e2;
    const Evaluation thinA =
        evaluated(*withValue(a, "links.B1-B2.bandwidth_gbps", x->value / 4, &e2));
    const Evaluation thinB =
        evaluated(*withValue(b, "links.B1-B2.bandwidth_gbps", x->value / 4, &e2));
    const Evaluation fatA =
        evaluated(*withValue(a, "links.B1-B2.bandwidth_gbps", x->value * 4, &e2));
    const Evaluation fatB =
        evaluated(*withValue(b, "links.B1-B2.bandwidth_gbps", x->value * 4, &e2));
    QVERIFY(thinB.step_time_s < thinA.step_time_s);
    QVERIFY(fatA.step_time_s < fatB.step_time_s);
    QVERIFY(thinA.cross_building_bytes > thinB.cross_building_bytes);
}

void TestScaleAcross::moreBandwidthNeverSlower_data() {
    QTest::addColumn<bool>("ppCrosses");
    QTest::newRow("dp-across") << false;
    QTest::newRow("pp-across") << true;
}

void TestScaleAcross::moreBandwidthNeverSlower() {
    QFETCH(bool, ppCrosses);
    double prev = 1e300;
    for (double gbps = 10; gbps <= 1e6; gbps *= 1.7) {
        const auto s = twoBuildings(gbps, 2);
        const double t = evaluated(ppCrosses ? ppAcross(s) : dpAcross(s)).step_time_s;
        QVERIFY2(t <= prev * (1 + 1e-12),
                 qPrintable(QStringLiteral("slower at %1 Gbit/s").arg(gbps)));
        prev = t;
    }
}

void TestScaleAcross::moreLatencyNeverFaster_data() {
    moreBandwidthNeverSlower_data();
}

void TestScaleAcross::moreLatencyNeverFaster() {
    QFETCH(bool, ppCrosses);
    double prev = 0;
    for (double ms = 0; ms <= 40; ms += 2.5) {
        const auto s = twoBuildings(5000, ms);
        const double t = evaluated(ppCrosses ? ppAcross(s) : dpAcross(s)).step_time_s;
        QVERIFY2(t >= prev * (1 - 1e-12), qPrintable(QStringLiteral("faster at %1 ms").arg(ms)));
        prev = t;
    }
}

void TestScaleAcross::latencyHurtsPpAcrossMoreWithFewMicrobatches() {
    // With latency-aware warm-up, the round trip is paid in the pipeline's
    // fill and drain only, which more microbatches amortise.
    auto slowdown = [](std::int64_t microbatches) {
        auto near = ppAcross(twoBuildings(5000, 0.01));
        auto far = ppAcross(twoBuildings(5000, 10));
        near.plan.global_batch_sequences = far.plan.global_batch_sequences = 64 * microbatches;
        near.plan.schedule.latency_hiding = far.plan.schedule.latency_hiding = true;
        return evaluated(far).step_time_s / evaluated(near).step_time_s - 1.0;
    };
    const double few = slowdown(4), many = slowdown(64);
    std::printf("10 ms link slows PP-across by %.1f%% with 4 microbatches, %.1f%% with 64\n",
                few * 100, many * 100);
    QVERIFY(few > 0);
    QVERIFY(many >= 0);
    QVERIFY(few > 2 * many);
}

void TestScaleAcross::strict1F1BStallsOnLongLink() {
    // Plain 1F1B keeps only p - s - 1 forwards ahead: a 10 ms link stalls
    // every cycle, so the loss grows with the microbatches; latency hiding
    // removes most of it (CrossPipe's observation).
    auto far = ppAcross(twoBuildings(5000, 10));
    far.plan.global_batch_sequences = 64 * 64;
    auto hidden = far;
    hidden.plan.schedule.latency_hiding = true;
    const Evaluation strict = evaluated(far), aware = evaluated(hidden);
    std::printf("10 ms link, 64 microbatches: 1F1B %.3f s, latency-aware %.3f s\n",
                strict.step_time_s, aware.step_time_s);
    QVERIFY(aware.step_time_s < 0.95 * strict.step_time_s);
    // ... at the price of more activations in flight.
    QVERIFY(aware.memory.activations_gib > strict.memory.activations_gib);
}

// The extra warm-up of latency hiding (CrossPipe: ceil(round trip / cycle)
// more microbatches in flight upstream of each boundary) is counted against
// the steady state's cycle, the slowest stage's forward and backward, the
// same for every stage: the warm-ups fall stage by stage, as 1F1B's do. With
// each stage's own cycle, a fast stage behind a slow one got more than the
// slow one, and GPUs 1.5x faster made a 27-stage three-building plan of the
// 405B sample's space 8.8% slower.
void TestScaleAcross::latencyHidingWarmupFallsStageByStage() {
    Plan plan;
    plan.parallelism.pp = 4;
    plan.global_batch_sequences = 16;
    plan.micro_batch_sequences = 1;
    plan.schedule.kind = ScheduleKind::OneFOneB;
    plan.schedule.latency_hiding = true;
    // Stages 0 and 2 take 1.0 s a forward-backward pair, 1 and 3 half that.
    ChunkTable chunks(4, std::vector<ChunkTimes>(1));
    for (int s = 0; s < 4; ++s) {
        chunks[std::size_t(s)][0].fwd = s % 2 ? 1.0 / 6 : 1.0 / 3;
        chunks[std::size_t(s)][0].bwd = s % 2 ? 1.0 / 3 : 2.0 / 3;
    }
    // Round trips of 0.6 s, 1.4 s and 0.2 s over the three boundaries.
    P2p p2p;
    p2p.fwd = {0.3, 0.7, 0.1};
    p2p.bwd = p2p.fwd;
    p2p.cross = {1, 1, 0};
    PipelineInput in;
    pipelineInput(plan, chunks, p2p, false, in);
    // ceil(0.6 / 1) + ceil(1.4 / 1) + ceil(0.2 / 1) = 1 + 2 + 1 upstream of all three.
    QCOMPARE(in.extra_warmup, (std::vector<int>{4, 3, 1, 0}));
    // Zero-bubble's cycle counts its weight gradients too: 1.5 s.
    plan.schedule.kind = ScheduleKind::ZeroBubble;
    for (int s = 0; s < 4; ++s)
        chunks[std::size_t(s)][0].wgrad = s % 2 ? 0.25 : 0.5;
    pipelineInput(plan, chunks, p2p, false, in);
    QCOMPARE(in.extra_warmup, (std::vector<int>{3, 2, 1, 0}));
}

void TestScaleAcross::hierarchicalBeatsFlatRingOnThinLink() {
    auto flat = dpAcross(twoBuildings(800, 5));
    flat.plan.collectives[Dim::DP] = CollectiveAlgo::Ring;
    auto hier = flat;
    hier.plan.collectives[Dim::DP] = CollectiveAlgo::Hierarchical;
    const Evaluation f = evaluated(flat), h = evaluated(hier);
    QVERIFY(h.step_time_s < f.step_time_s);
    // ... and it sends fewer bytes across (k = 2 buildings: half of a flat ring).
    QVERIFY(linkNamed(h, "B1-B2").bytes_per_step < linkNamed(f, "B1-B2").bytes_per_step);
}

void TestScaleAcross::dpTrafficConservation() {
    // Flat ring, ZeRO-0 all-reduce: each of the 8 (tp x cp) rings of each
    // stage crosses the link once in each direction and carries
    // 2(n-1)/n * S there, S = the stage's gradient bytes per GPU.
    auto s = dpAcross(twoBuildings(1000, 1));
    s.plan.collectives[Dim::DP] = CollectiveAlgo::Ring;
    s.plan.zero_stage = 0;
    const Evaluation ev = evaluated(s);
    // Per-GPU parameters of a stage, by hand: 20 layers of Llama-70B-like / tp.
    const double h = 8192, f = 28672, kv = 8 * 128, t = 8;
    const double layer = (h * (h + 2 * kv) + h * h) / t + 3 * h * f / t + 2 * h;
    const double emb = 128256.0 * h / t;
    const int n = 64;
    double expected = 0;
    for (int stage = 0; stage < 4; ++stage) {
        double params = 20 * layer + (stage == 0 ? emb : 0) + (stage == 3 ? emb : 0);
        expected +=
            8 /*rings*/ * collectiveBytesPerMember(CollectiveKind::AllReduce, n, params * 4);
    }
    const double got = linkNamed(ev, "B1-B2").bytes_per_step;
    QVERIFY2(std::abs(got / expected - 1) < 1e-9,
             qPrintable(QStringLiteral("link carries %1, expected %2").arg(got).arg(expected)));
    // Both directions together = the cross-building total.
    QVERIFY(std::abs(ev.cross_building_bytes / (2 * expected) - 1) < 1e-9);
}

void TestScaleAcross::p2pTrafficConservation() {
    // PP across: only the stage-1 -> stage-2 boundary crosses. Every
    // microbatch of every replica sends its activations (b*s*h*2 bytes for
    // the whole tp group) forward and its gradients back.
    const auto s = ppAcross(twoBuildings(1000, 1));
    const Evaluation ev = evaluated(s);
    const double perMicro = 1.0 * 4096 * 8192 * 2;
    const double expected = perMicro * 64 /*replicas*/ * 16 /*microbatches*/;
    const double got = linkNamed(ev, "B1-B2").bytes_per_step;
    QVERIFY2(std::abs(got / expected - 1) < 1e-9,
             qPrintable(QStringLiteral("link carries %1, expected %2").arg(got).arg(expected)));
}

void TestScaleAcross::windowLimitedSingleFlow() {
    // One flow, 16 MiB window, 10 ms one way (20 ms RTT): window/RTT.
    Technology tcp = *builtinTechnology("tcp");
    tcp.flows = 1;
    tcp.loss_rate = 0; // isolate the window limit
    const double rtt = 0.020;
    const double expected = 16.0 * 1024 * 1024 / rtt;
    QCOMPARE(perFlowRateBps(tcp, rtt), expected);
    QCOMPARE(transferRateBps(tcp, 400, rtt), expected); // far below 400 Gbit/s
}

void TestScaleAcross::moreFlowsLiftLongLinkToLineRate() {
    Technology tcp = *builtinTechnology("tcp");
    tcp.loss_rate = 0;
    const double rtt = 0.020, line = 400;
    const double lineRate = gbpsToBytesPerS(line) * tcp.efficiency;
    double prev = 0;
    for (int flows : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
        tcp.flows = flows;
        const double r = transferRateBps(tcp, line, rtt);
        QVERIFY(r >= prev);
        QVERIFY(r <= lineRate * (1 + 1e-12));
        QCOMPARE(r, std::min(lineRate, flows * 16.0 * 1024 * 1024 / rtt));
        prev = r;
    }
    QCOMPARE(prev, lineRate);
}

void TestScaleAcross::flowOverrideSpeedsUpPpAcrossLongLink() {
    auto one = ppAcross(twoBuildings(20000, 10, "tcp"));
    auto many = one;
    many.plan.link_technologies["B1-B2"] = LinkOverride{"tcp", 256};
    const Evaluation a = evaluated(one), b = evaluated(many);
    QVERIFY(b.breakdown.pp_exposed_s < a.breakdown.pp_exposed_s);
    QVERIFY(b.step_time_s < a.step_time_s);
}

// Bigger NCCL buffers on a window-limited roce link: more in flight, faster
// P2P (roce: 8 MiB per transfer over a 10 ms link).
void TestScaleAcross::ncclBuffsizeOverrideSpeedsUpPpAcrossLongLink() {
    auto base = ppAcross(twoBuildings(20000, 10, "roce"));
    auto big = base;
    big.plan.link_technologies["B1-B2"] = LinkOverride{"", 0, 0, 0, 0, 64};
    const Evaluation a = evaluated(base), b = evaluated(big);
    QVERIFY(b.breakdown.pp_exposed_s < a.breakdown.pp_exposed_s);
    QVERIFY(b.step_time_s < a.step_time_s);
}

// A RoCE link whose PFC headroom is short of its RTT runs lossy: the
// evaluation says so, and go-back-N makes the crossing slower.
void TestScaleAcross::shortPfcHeadroomWarnsAndSlows() {
    auto lossless = ppAcross(twoBuildings(3200, 5, "roce-pfc"));
    Technology pfc = *builtinTechnology("roce-long-haul");
    pfc.lossy_loss_rate = 1e-4;
    // 3.2 Tbit/s (one port), 5 ms one way: 2 x 400e9 B/s x 5e-3 + 2 x 4096 B
    // = 4.0e9 B = 3,815 MiB of headroom needed.
    pfc.pfc_headroom_mib = 4096;
    lossless.cluster.technologies["roce-pfc"] = pfc;
    auto lossy = lossless;
    lossy.cluster.technologies["roce-pfc"].pfc_headroom_mib = 3800;
    const Evaluation a = evaluated(lossless), b = evaluated(lossy);
    QVERIFY(!hasWarning(a, "PFC headroom"));
    QVERIFY2(hasWarning(b, "PFC headroom of 3800 MiB per port is short of the 3815 MiB"),
             qPrintable(QString::fromStdString(b.warnings.empty() ? "" : b.warnings.back())));
    QVERIFY(b.breakdown.pp_exposed_s > a.breakdown.pp_exposed_s);
    // The port's rate, not the link's: 400 Gbit/s ports need 477 MiB.
    lossy.cluster.technologies["roce-pfc"].port_gbps = 400;
    QVERIFY(!hasWarning(evaluated(lossy), "PFC headroom"));
}

// A socket profile on a host with few network cores: the CPU caps the link.
void TestScaleAcross::hostCpuCapSlowsTcpLink() {
    auto free = ppAcross(twoBuildings(20000, 1, "tcp-host"));
    Technology t = *builtinTechnology("tcp-multiflow");
    t.loss_rate = 0;
    free.cluster.technologies["tcp-host"] = t;
    auto capped = free;
    capped.cluster.technologies["tcp-host"].host_net_cores = 1;
    capped.cluster.technologies["tcp-host"].host_gbps_per_core = 42;
    const Evaluation a = evaluated(free), b = evaluated(capped);
    QVERIFY(b.breakdown.pp_exposed_s > a.breakdown.pp_exposed_s);
    // More flows do not lift a CPU-bound host.
    auto more = capped;
    more.plan.link_technologies["B1-B2"] = LinkOverride{"", 1024};
    QCOMPARE(evaluated(more).step_time_s, b.step_time_s);
}

void TestScaleAcross::balancedLayersFollowGpuSpeed() {
    auto s = ppAcross(twoBuildings(20000, 1));
    GpuModel fast = h100();
    fast.name = "fast";
    fast.peak_tflops_bf16 *= 2;
    fast.hbm_tbps *= 2;
    s.cluster.gpu_models["fast"] = fast;
    s.cluster.buildings[1].gpu_model = "fast";
    const auto layers = balancedLayers(s.cluster, s.model, s.plan);
    QCOMPARE(int(layers.size()), 4);
    int sum = 0;
    for (int l : layers)
        sum += l;
    QCOMPARE(sum, 80);
    QVERIFY(layers[2] > layers[1]); // stages in the faster building take more layers
    auto balanced = s;
    balanced.plan.placement = Placement{};
    balanced.plan.placement->layers_per_stage = layers;
    QVERIFY(evaluated(balanced).step_time_s < evaluated(s).step_time_s);
}

void TestScaleAcross::placementOverCapacityNamesBuilding() {
    auto s = dpAcross(twoBuildings(1000, 1));
    s.plan.placement = Placement{};
    s.plan.placement->runs.push_back({0, 3, 0, 63, "B2"}); // all 2,048 GPUs into B2
    auto r = evaluate(s);
    QVERIFY(std::holds_alternative<EvaluationError>(r));
    const std::string msg = std::get<EvaluationError>(r).str();
    QVERIFY2(msg.find("/placement/runs/0") != std::string::npos, msg.c_str());
    QVERIFY2(msg.find("'B2' would hold 2048 GPUs but has 1024") != std::string::npos, msg.c_str());
}

void TestScaleAcross::sweepPathsAndRanges() {
    std::string err;
    auto axis = parseSweepAxis("links.B1-B2.bandwidth_gbps=100:100000:log10:4", &err);
    QVERIFY2(axis.has_value(), err.c_str());
    QCOMPARE(axis->values.size(), std::size_t(4));
    QVERIFY(std::abs(axis->values[1] - 1000) < 1e-6);
    auto mul = parseSweepAxis("plan.parallelism.pp=1:16:*2", &err);
    QVERIFY(mul.has_value());
    QCOMPARE(mul->values, (std::vector<double>{1, 2, 4, 8, 16}));
    QVERIFY(!parseSweepAxis("nonsense", &err));
    QVERIFY(!parseSweepAxis("x=1:2:bogus", &err));
    const auto base = twoBuildings(1000, 1);
    QVERIFY(!withValue(base, "links.B9-B2.bandwidth_gbps", 1, &err));
    QVERIFY2(err.find("no element named 'B9-B2'") != std::string::npos, err.c_str());
    auto points = runSweep(dpAcross(base), {*axis});
    QCOMPARE(points.size(), std::size_t(4));
    for (const auto& p : points)
        QVERIFY2(p.evaluation.has_value(), p.error.c_str());
    QVERIFY(points.back().evaluation->step_time_s <= points.front().evaluation->step_time_s);
}

QTEST_GUILESS_MAIN(TestScaleAcross)
#include "tst_scaleacross.moc"

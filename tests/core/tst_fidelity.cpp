// Mechanisms the cost model takes from the frameworks and libraries it
// models, each checked against its source: Megatron's distributed-optimizer
// memory (gradient dtype, fp32 gradient copy, sharding over dp x cp), NCCL's
// tree only for all-reduce, FSDP under pipeline parallelism (torchtitan /
// torch.distributed.pipelining: gather once, reduce once per step), FSDP
// units paying their own latency, DeepSpeed ZeRO-2's per-microbatch
// reduce-scatter, and MoE capacity padding counted as hardware, not model,
// FLOPs.

#include "cost/collectives.h"
#include "cost/compute.h"
#include "cost/evaluate.h"
#include "cost/memory.h"
#include "cost/network.h"
#include "cost/schedule.h"
#include "cost/stages.h"
#include "topology/topology.h"

#include "../common/costmodel_checks.h"
#include "../common/fixtures.h"

#include <QTest>

#include <string>
#include <tuple>

using namespace sa;
using namespace sa::testing;

namespace {

// A Llama-like 1.5B dense model: 8 layers of h 2048, GQA 16/4, SwiGLU.
Model smallLlama(int layers = 8) {
    Model m;
    m.name = "small-llama";
    m.layers = layers;
    m.hidden = 2048;
    m.ffn_hidden = 8192;
    m.heads = 16;
    m.kv_heads = 4;
    m.vocab = 32000;
    m.mlp = MlpKind::SwiGlu;
    return m;
}

// The FP8 cast tests' case: one layer of smallLlama in FP8 on an H100 of
// a 64-GPU building, tp 1, 8192 tokens a microbatch; the tests vary the
// plan's FP8 and elementwise knobs. Its linear GEMMs, n x k at m = 8192,
// and the separate linears of torchtitan's block that read each one's
// input: QKV (2048 + 2 x 512 wide; wq, wk, wv), projection, gate + up (w1,
// w3), down.
struct Fp8Layer {
    Cluster cluster = clusterOf("one", {building("B1", 64)});
    Model model = [] {
        Model m = smallLlama();
        m.dtype = DType::FP8;
        return m;
    }();
    static Plan plan() {
        Plan p = makePlan(1, 1, 8, 64);
        p.micro_batch_sequences = 4;
        return p;
    }
    LayerCost cost(const Plan& p) const {
        return layerCost(layerContext(cluster, cluster.buildings[0], model, p));
    }
    static constexpr double tokens = 8192;
    struct Linear {
        double n, k, readers;
        bool norm; // reads a norm's output (Transformer Engine's LayerNormLinear)
    };
    static constexpr Linear linears[] = {{3072, 2048, 3, true},
                                         {2048, 2048, 1, false},
                                         {16384, 2048, 2, true},
                                         {2048, 8192, 1, false}};
};

// Routed experts: `experts` of width `ffn`, `topK` per token.
MoeConfig moeOf(int experts, int topK, int ffn) {
    MoeConfig moe;
    moe.experts = experts;
    moe.top_k = topK;
    moe.expert_ffn_hidden = ffn;
    return moe;
}

// Two buildings of 64 H100 behind one link.
Cluster twoBuildings(double gbps = 400, double ms = 10) {
    return clusterOf("pair",
                     {building("B1", 64, {.zone_gpus = 64}), building("B2", 64, {.zone_gpus = 64})},
                     {link("B1", "B2", gbps, ms)});
}

Evaluation evaluated(const Cluster& c, const Model& m, const Plan& p) {
    const EvaluationResult r = evaluate(Scenario{c, m, p});
    if (const auto* e = std::get_if<EvaluationError>(&r))
        qFatal("evaluate failed: %s", e->str().c_str());
    return std::get<Evaluation>(r);
}

// A pipeline of equal stages: forward 1, input gradient 1, weight gradient
// 1 (zero-bubble splits the backward), activations 1 per microbatch of
// which the deferred weight gradient keeps `held`; P2P 0.3 each way.
PipelineInput splitPipeline(ScheduleKind kind, double held) {
    PipelineInput in;
    in.kind = kind;
    in.stages = 4;
    in.microbatches = 8;
    const bool zb = kind == ScheduleKind::ZeroBubble;
    auto grid = [&](double x) { return std::vector<double>(4, x); }; // 4 stages, 1 chunk
    in.fwd = grid(1);
    in.bwd = grid(zb ? 1 : 2);
    in.wgrad = grid(zb ? 1 : 0);
    in.activation_bytes = grid(1);
    in.wgrad_held_bytes = grid(held);
    in.p2p_fwd.assign(3, 0.3);
    in.p2p_bwd.assign(3, 0.3);
    in.p2p_cross.assign(3, 0);
    in.record = true;
    return in;
}

// Peak activation bytes of stage s rebuilt from its recorded ops: a forward
// takes 1, a backward frees 1 - held, a weight gradient the held rest.
double peakFromOps(const PipelineResult& r, int s, double held) {
    std::vector<const TimelineOp*> ops;
    for (const TimelineOp& op : r.ops)
        if (op.stage == s && (op.kind == OpKind::Forward || op.kind == OpKind::Backward ||
                              op.kind == OpKind::WeightGrad))
            ops.push_back(&op);
    std::sort(ops.begin(), ops.end(),
              [](const TimelineOp* a, const TimelineOp* b) { return a->start_s < b->start_s; });
    double alive = 0, peak = 0;
    for (const TimelineOp* op : ops) {
        if (op->kind == OpKind::Forward)
            peak = std::max(peak, alive += 1);
        else if (op->kind == OpKind::Backward)
            alive -= 1 - held;
        else
            alive -= held;
    }
    return peak;
}

// Parameters per GPU of the worst stage, read back from its bf16 weights
// (unsharded below ZeRO-3).
double paramsPerGpu(const Evaluation& ev) {
    return ev.memory.weights_gib * kGiB / kWeightBytes;
}

// TP 8 x DP 8 on 64 GPUs (one host a replica), 4096-token sequences, one
// microbatch of 32 a replica, plain DDP over rings with `bucketMib` buckets.
Plan dpOverEightHosts(double bucketMib) {
    Plan p = makePlan(8, 1, 8, 256);
    p.sequence_length = 4096;
    p.micro_batch_sequences = 32;
    p.zero_stage = 0;
    p.dp_bucket_mib = bucketMib;
    p.collectives[Dim::DP] = CollectiveAlgo::Ring;
    return p;
}

} // namespace

class TestFidelity : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void distributedOptimizerBytes_data();
    void distributedOptimizerBytes();
    void optimizerPrecisionBytes_data();
    void optimizerPrecisionBytes();
    void foreachOptimizerPassesPerOp();
    void treeOnlyForAllReduce();
    void fsdpUnderPipelineGathersOncePerStep();
    void fsdpUnitsPayTheirOwnLatency();
    void zero2ReduceScattersEveryMicrobatch();
    void capacityPaddingIsNotModelWork();
    void zeroBubbleStaysAtOneFOneBMemory();
    void gradientsReducedOverDpTimesCp();
    void hsdpShardsInsideItsGroup();
    void everyStageHasItsBreakdown();
    void dataParallelSharesLinksWithActivations();
    void overlappedCollectivesTakeSmsFromCompute();
    void embeddingBucketIsReducedLast();
    void tiedEmbeddingsSyncAcrossThePipeline();
    void shardedOptimizerAllReducesOnRequest();
    void moeTokensArePermutedAroundTheExperts();
    void epAllToAllSplitsHostAndNetwork();
    void dpRingLeavesAHostThroughAllItsNics();
    void lossKernelsPerFramework();
    void flexDispatchSendsOneCopyPerHost();
    void latentAttentionLayer();
    void epAllToAllBesideAnotherMicrobatch();
    void flexDispatcherHoldsItsSms();
    void eagerOpsStreamEachTensor();
    void compileLeavesComplexRopeEager();
    void unfusedRopeRunsRotateHalf();
    void delayedScalingCastsInOnePass();
    void transformerEngineCastsBeforeTheGather();
    void sequenceParallelGathersAgainInBackward();
    void dropoutCostsItsMasksAndPasses();
    void torchCpRingMergesAndWaits();
    void teCpAllGatherAndAllToAll();
    void teHierarchicalCpRingsOverGroups();
    void teRingHidesEachChunkUnderOneStep();
    void gradientAccumulationOutsideTheGemms();
    void fsdpCopiesStreamTheWeights();
    void transformerEngineSavesFp8Inputs();
    void torchaoCastsAgainInBackward();
    void transformerEngineCastsWeightsOncePerStep();
    void fp8ParamGatherSendsOneBytePerWeight();
    void selectiveRecomputeRerunsTheAttentionCore();
    void recomputeModulesFreeAndRerun_data();
    void recomputeModulesFreeAndRerun();
    void moeRecomputeRepeatsTheAllToAll();
    void partialRecomputeSelectsLayers_data();
    void partialRecomputeSelectsLayers();
    void blockRecomputeBetweenNoneAndFull();
    void hostIssuesEveryKernel();
    void groupedExpertsLaunchPerExpert();
    void moeForwardWaitsForTokenCounts();
    void moeTokenDropPadsToCapacity();
    void moeExpertTpGathersTheDispatchedCopies();
    void expertTensorParallelFoldsTpIntoEp();
    void expertTensorParallelShardsAndGroups();
    void expertGroupsFoldContextParallelRanks();
    void mlaUpProjectionRecompute();
    void slidingWindowAttention();
    void hostBoundPlanWarns();
    void exchangesRunInHostGaps();
    void expertParallelPlanCarriesTheAccuracyNote();
    void bf16OnHopperCarriesTheAccuracyNote();
    void unvalidatedArchitectureCarriesTheAccuracyNote();
    void multiTokenPrediction();
    void multiTokenPredictionBlockHasExperts();
};

void TestFidelity::distributedOptimizerBytes_data() {
    QTest::addColumn<int>("cp");
    QTest::addColumn<int>("gradBytes");
    QTest::addColumn<double>("gradientsPerParam");
    QTest::addColumn<double>("optimizerPerParam");
    // Megatron-LM docs/source/distrib_optimizer.md: bf16 parameters with
    // fp32 gradients hold 6 + 12/d bytes per parameter, fp16/bf16 gradients
    // 4 + 16/d; d is the data-parallel group with CP (dp x cp).
    const double dp = 8;
    QTest::newRow("fp32 grads, cp1") << 1 << 4 << 4.0 << 12 / dp;
    QTest::newRow("bf16 grads, cp1") << 1 << 2 << 2.0 << 16 / dp;
    QTest::newRow("fp32 grads, cp2") << 2 << 4 << 4.0 << 12 / (2 * dp);
    QTest::newRow("bf16 grads, cp2") << 2 << 2 << 2.0 << 16 / (2 * dp);
}

void TestFidelity::distributedOptimizerBytes() {
    QFETCH(int, cp);
    QFETCH(int, gradBytes);
    QFETCH(double, gradientsPerParam);
    QFETCH(double, optimizerPerParam);
    Plan p = makePlan(4, 1, 8, 64);
    p.parallelism.cp = cp;
    p.zero_stage = 1;
    p.grad_reduce_bytes = gradBytes;
    const Cluster c = clusterOf("one", {building("B1", 64 * cp, {.zone_gpus = 64 * cp})});
    const Evaluation ev = evaluated(c, smallLlama(), p);
    const double P = paramsPerGpu(ev);
    QVERIFY(P > 1e8);
    QVERIFY(closeRelative(ev.memory.gradients_gib * kGiB, P * gradientsPerParam, 1e-9));
    QVERIFY(closeRelative(ev.memory.optimizer_gib * kGiB, P * optimizerPerParam, 1e-9));
}

void TestFidelity::optimizerPrecisionBytes_data() {
    QTest::addColumn<int>("gradBytes");
    QTest::addColumn<int>("moments");
    QTest::addColumn<int>("master");
    QTest::addColumn<double>("optimizerPerParam"); // before sharding
    QTest::addColumn<double>("stepPerParam");
    const int fp32 = 0, bf16 = 1, half = 1, none = 2;
    // Megatron's distributed optimizer: 12 (+4 for the fp32 copy of 16-bit
    // gradients); the step streams 30 bytes.
    QTest::newRow("megatron, fp32 grads") << 4 << fp32 << fp32 << 12.0 << 30.0;
    QTest::newRow("megatron, bf16 grads") << 2 << fp32 << fp32 << 16.0 << 30.0;
    // Apex DistributedFusedAdam under NeMo with BF16 weights: moments 4 + 4,
    // 16-bit remainders of the masters 2, its fp32 grads_shard 4; the step
    // reads the bf16 weights to rebuild each fp32 master (2 x 2 + 16 + 4 +
    // 2 + 2 bytes).
    QTest::newRow("apex remainders") << 2 << fp32 << half << 14.0 << 28.0;
    // ... with optim.dtype bf16: bf16 moments 2 + 2, no masters, bf16 grads_shard 2.
    QTest::newRow("apex bf16 state") << 2 << bf16 << none << 6.0 << 14.0;
    // Megatron's precision-aware optimizer with bf16 moments and fp32 masters.
    QTest::newRow("bf16 moments, fp32 grads") << 4 << bf16 << fp32 << 8.0 << 22.0;
}

void TestFidelity::optimizerPrecisionBytes() {
    QFETCH(int, gradBytes);
    QFETCH(int, moments);
    QFETCH(int, master);
    QFETCH(double, optimizerPerParam);
    QFETCH(double, stepPerParam);
    Plan p = makePlan(4, 1, 8, 64);
    p.zero_stage = 1;
    p.grad_reduce_bytes = gradBytes;
    p.optimizer_moments = moments == 0 ? OptimizerMoments::Fp32 : OptimizerMoments::Bf16;
    p.master_weights = master == 0   ? MasterWeights::Fp32
                       : master == 1 ? MasterWeights::Half
                                     : MasterWeights::None;
    const OptimizerPrecision prec = optimizerPrecision(p);
    QCOMPARE(optimizerStateBytes(gradBytes, prec), optimizerPerParam);
    QCOMPARE(optimizerStepBytes(gradBytes, prec, OptimizerImpl::Fused), stepPerParam);
    const Cluster c = clusterOf("one", {building("B1", 64, {.zone_gpus = 64})});
    const Evaluation ev = evaluated(c, smallLlama(), p);
    const double P = paramsPerGpu(ev);
    QVERIFY(closeRelative(ev.memory.optimizer_gib * kGiB, P * optimizerPerParam / 8, 1e-9));
    QVERIFY(closeRelative(ev.memory.gradients_gib * kGiB, P * gradBytes, 1e-9));
    // The step streams its state at the HBM rate, after a fixed launch: its
    // time above the launch is in proportion to the bytes.
    Plan reference = p;
    reference.optimizer_moments = OptimizerMoments::Fp32;
    reference.master_weights = MasterWeights::Fp32;
    reference.grad_reduce_bytes = 4;
    const double launch = 20e-6;
    const double step = evaluated(c, smallLlama(), p).breakdown.optimizer_s - launch;
    const double ref = evaluated(c, smallLlama(), reference).breakdown.optimizer_s - launch;
    QVERIFY(closeRelative(step / ref, stepPerParam / 30.0, 1e-9));
}

void TestFidelity::foreachOptimizerPassesPerOp() {
    // PyTorch's multi-tensor AdamW passes over the state once per op:
    // weight decay (w read and written), lerp into the first moment (m, g
    // read, m written), the second moment's mul and addcmul (2m; m, g, m),
    // sqrt into a new tensor, div and add on it (2m each), addcdiv into the
    // weights (w, m, m read, w written): 4w + 14m + 2g, plus the bf16 weights
    // the fused count writes. fp32 state: 16 + 56 + 8 + 2 = 82 against 30;
    // bf16 moments: 16 + 28 + 8 + 2 = 54 against 22.
    Plan fused = makePlan(4, 1, 8, 64);
    fused.zero_stage = 1;
    Plan foreach = fused;
    foreach
        .optimizer_implementation = OptimizerImpl::Foreach;
    QCOMPARE(optimizerStepBytes(4, optimizerPrecision(fused), OptimizerImpl::Foreach), 82.0);
    Plan bf16 = fused;
    bf16.optimizer_moments = OptimizerMoments::Bf16;
    QCOMPARE(optimizerStepBytes(4, optimizerPrecision(bf16), OptimizerImpl::Foreach), 54.0);
    const Cluster c = clusterOf("one", {building("B1", 64, {.zone_gpus = 64})});
    const double launch = 20e-6;
    const double a = evaluated(c, smallLlama(), fused).breakdown.optimizer_s - launch;
    const double b = evaluated(c, smallLlama(), foreach).breakdown.optimizer_s - launch;
    QVERIFY(closeRelative(b / a, 82.0 / 30.0, 1e-9));
}

void TestFidelity::treeOnlyForAllReduce() {
    const Cluster c = twoBuildings(1000, 1);
    const Topology topo(c);
    const std::vector<EdgeTransport> transport = edgeTransports(c, topo, makePlan());
    GroupSpread g;
    g.sites = {{Location{0, 0}, 4}, {Location{1, 0}, 4}};
    g.members = 8;
    g.buildings = 2;
    CollectiveEnv env{46e9, 360e9, 5e-6, {}, {}}; // no calibrated steps
    int link = -1;
    for (const TopoEdge& e : topo.edges())
        if (e.kind == EdgeKind::InterBuilding)
            link = e.id;
    for (CollectiveKind kind : {CollectiveKind::ReduceScatter, CollectiveKind::AllGather}) {
        TrafficPhase tree(topo, transport), ring(topo, transport), autoPhase(topo, transport);
        const CollectiveCost t = loadCollective(tree, g, kind, CollectiveAlgo::Tree, 1e9, 3, env);
        const CollectiveCost r = loadCollective(ring, g, kind, CollectiveAlgo::Ring, 1e9, 3, env);
        QCOMPARE(t.algo, CollectiveAlgo::Ring);
        QCOMPARE(t.bandwidth_s, r.bandwidth_s);
        QCOMPARE(t.latency_s, r.latency_s);
        QCOMPARE(tree.load(link, 0), ring.load(link, 0));
        // Auto picks among what NCCL offers: never a tree here.
        for (double bytes : {1e3, 1e6, 1e9})
            QVERIFY(loadCollective(autoPhase, g, kind, CollectiveAlgo::Auto, bytes, 3, env).algo !=
                    CollectiveAlgo::Tree);
    }
    // All-reduce keeps its tree: fewer bytes on the link than the ring's 2(n-1)/n S.
    TrafficPhase tree(topo, transport), ring(topo, transport);
    QCOMPARE(
        loadCollective(tree, g, CollectiveKind::AllReduce, CollectiveAlgo::Tree, 1e9, 3, env).algo,
        CollectiveAlgo::Tree);
    loadCollective(ring, g, CollectiveKind::AllReduce, CollectiveAlgo::Ring, 1e9, 3, env);
    QVERIFY(tree.load(link, 0) < ring.load(link, 0));
}

void TestFidelity::fsdpUnderPipelineGathersOncePerStep() {
    // tp4 pp2 dp16 over two buildings, DP across them (rank order
    // [tp, cp, pp, dp]): 4 microbatches per replica.
    const Cluster c = twoBuildings();
    Plan z1 = makePlan(4, 2, 16, 64);
    z1.zero_stage = 1;
    z1.collectives[Dim::DP] = CollectiveAlgo::Ring;
    Plan z3 = z1;
    z3.zero_stage = 3;
    // torchtitan's default under PP keeps parameters and gradients unsharded
    // through the step: exactly ZeRO-1's memory, bytes and time, but for
    // FSDP2's copies of its one gather and one reduce (fsdp_copies).
    const Evaluation d = evaluated(c, smallLlama(), z3);
    const Evaluation one = evaluated(c, smallLlama(), z1);
    QCOMPARE(d.cross_building_bytes, one.cross_building_bytes);
    QVERIFY(d.step_time_s > one.step_time_s);
    QCOMPARE(d.memory.peak_gib_per_gpu, one.memory.peak_gib_per_gpu);
    Plan views = z3;
    views.fsdp_copies = false;
    QCOMPARE(evaluated(c, smallLlama(), views).step_time_s, one.step_time_s);
    z3.fsdp_reshard_after_forward = FsdpReshard::Never;
    QCOMPARE(evaluated(c, smallLlama(), z3).cross_building_bytes, one.cross_building_bytes);
    // Resharding after every forward gathers twice and reduces once per
    // microbatch: 16 units of P x 2 bytes (two gathers of 1, a reduce of 2,
    // x 4) where ZeRO-1 moves 3, and less memory for the weights.
    z3.fsdp_reshard_after_forward = FsdpReshard::Always;
    const Evaluation always = evaluated(c, smallLlama(), z3);
    QVERIFY2(always.cross_building_bytes > 4 * one.cross_building_bytes,
             (std::to_string(always.cross_building_bytes) + " vs " +
              std::to_string(one.cross_building_bytes))
                 .c_str());
    QVERIFY(always.memory.weights_gib < one.memory.weights_gib);
}

void TestFidelity::fsdpUnitsPayTheirOwnLatency() {
    // FSDP over two buildings 50 ms apart, no PP: every layer's all-gather
    // (forward and backward) and reduce-scatter waits at least the one-way
    // latency, per microbatch.
    const Cluster c = twoBuildings(100000, 50);
    Plan p = makePlan(8, 1, 16, 64);
    p.zero_stage = 3;
    p.collectives[Dim::DP] = CollectiveAlgo::Ring;
    const int layers = 8;
    const std::int64_t m = p.microbatches();
    QCOMPARE(m, std::int64_t(4));
    const Evaluation ev = evaluated(c, smallLlama(layers), p);
    // Forward: one gather per layer; backward: a gather and a reduce-scatter.
    QVERIFY2(ev.step_time_s > double(m) * layers * 2 * 0.050,
             std::to_string(ev.step_time_s).c_str());
}

void TestFidelity::zero2ReduceScattersEveryMicrobatch() {
    // DeepSpeed ZeRO-2 reduce-scatters each microbatch's gradients into
    // their shards during its backward (stage_1_and_2.py, reduce per
    // bucket); ZeRO-1 reduces once per step. With bf16 gradients a
    // reduce-scatter moves as many bytes as the parameter all-gather, so
    // ZeRO-1 puts 2 units on the link and ZeRO-2 m + 1.
    const Cluster c = twoBuildings();
    Plan z1 = makePlan(8, 1, 16, 64);
    z1.grad_reduce_bytes = 2;
    z1.collectives[Dim::DP] = CollectiveAlgo::Ring;
    Plan z2 = z1;
    z2.zero_stage = 2;
    const double m = double(z1.microbatches());
    const Evaluation one = evaluated(c, smallLlama(), z1);
    const Evaluation two = evaluated(c, smallLlama(), z2);
    QVERIFY(one.cross_building_bytes > 0);
    QVERIFY(closeRelative(two.cross_building_bytes / one.cross_building_bytes, (m + 1) / 2, 1e-9));
    QVERIFY(two.step_time_s >= one.step_time_s);
}

void TestFidelity::capacityPaddingIsNotModelWork() {
    Model m = smallLlama();
    m.moe = moeOf(8, 2, 4096);
    Plan p = makePlan(1, 1, 8, 64);
    p.parallelism.ep = 8;
    const Cluster c = clusterOf("one", {building("B1", 64)});
    LayerContext ctx = layerContext(c, c.buildings[0], m, p);
    ctx.moe_layer = true;
    const LayerCost exact = layerCost(ctx);
    m.moe->capacity_factor = 1.25;
    ctx = layerContext(c, c.buildings[0], m, p);
    ctx.moe_layer = true;
    const LayerCost padded = layerCost(ctx);
    // The padded tokens are computed (more hardware FLOPs, more time) but
    // are no model work: model FLOPs are those of top_k copies of each token.
    QVERIFY(padded.hw_flops_total > exact.hw_flops_total * 1.1);
    QVERIFY(padded.fwd_s > exact.fwd_s);
    QVERIFY(closeRelative(padded.model_flops_total, exact.model_flops_total, 1e-12));
}

void TestFidelity::zeroBubbleStaysAtOneFOneBMemory() {
    const PipelineResult one = simulatePipeline(splitPipeline(ScheduleKind::OneFOneB, 0));
    // Without the held bytes the weight gradients may wait as long as they
    // like: rebuilt with what they really hold, some stage goes past 1F1B.
    const PipelineResult loose = simulatePipeline(splitPipeline(ScheduleKind::ZeroBubble, 0));
    double worstLoose = 0;
    for (int s = 0; s < 4; ++s)
        worstLoose = std::max(worstLoose, peakFromOps(loose, s, 0.5) -
                                              one.peak_activation_bytes[std::size_t(s)]);
    QVERIFY2(worstLoose > 0, "the unbounded queue never exceeds 1F1B here: the test shows nothing");
    // ZB-H1 with the held bytes: the reported peak is what the ops hold, and
    // never above 1F1B's, and the schedule still beats 1F1B.
    const PipelineResult zb = simulatePipeline(splitPipeline(ScheduleKind::ZeroBubble, 0.5));
    QVERIFY(zb.ok);
    for (int s = 0; s < 4; ++s) {
        const std::size_t i = std::size_t(s);
        QVERIFY(closeRelative(zb.peak_activation_bytes[i], peakFromOps(zb, s, 0.5), 1e-12));
        QVERIFY2(zb.peak_activation_bytes[i] <= one.peak_activation_bytes[i] * (1 + 1e-12),
                 (std::to_string(zb.peak_activation_bytes[i]) + " > " +
                  std::to_string(one.peak_activation_bytes[i]))
                     .c_str());
    }
    QVERIFY(zb.makespan_s < one.makespan_s);
}

void TestFidelity::hsdpShardsInsideItsGroup() {
    // tp 4 x dp 32 over two buildings of 64 GPUs (DP outermost: 16 replicas
    // in each). HSDP with dp_shard 16 keeps every sharding group inside one
    // building: the link carries only the all-reduce of each GPU's reduced
    // shard across the two replicas of its group, once a step. A ring of
    // two crosses once each way with the shard's 2 (R - 1) / R = 1 times its
    // bytes, and tp x dp_shard = 64 such groups run at once.
    const Cluster c = twoBuildings();
    for (int zero : {1, 3}) {
        Plan full = makePlan(4, 1, 32, 128);
        full.zero_stage = zero;
        full.grad_reduce_bytes = 2;
        full.collectives[Dim::DP] = CollectiveAlgo::Ring;
        Plan hsdp = full;
        hsdp.dp_shard = 16;
        Plan unsharded = full;
        unsharded.zero_stage = 0;
        const double P = paramsPerGpu(evaluated(c, smallLlama(), unsharded));
        const Evaluation a = evaluated(c, smallLlama(), full);
        const Evaluation b = evaluated(c, smallLlama(), hsdp);
        double linkA = -1, linkB = -1;
        for (const LinkUsage& u : a.links)
            if (u.tier == LinkTier::InterBuilding)
                linkA = u.bytes_per_step;
        for (const LinkUsage& u : b.links)
            if (u.tier == LinkTier::InterBuilding)
                linkB = u.bytes_per_step;
        QVERIFY2(closeRelative(linkB, 64 * P * 2 / 16, 1e-9),
                 (std::to_string(linkB) + " vs " + std::to_string(64 * P * 2 / 16)).c_str());
        // Without HSDP the ring over all 32 crosses with the reduce-scatter and
        // the all-gather (ZeRO-3: both gathers, each of 4 microbatches).
        QVERIFY(linkA > (zero == 3 ? 8.0 : 1.5) * linkB);
        // The state is sharded over half the ranks: twice the optimizer's
        // bytes (and ZeRO-3's gradients) a GPU, and a longer optimizer step.
        QVERIFY(closeRelative(b.memory.optimizer_gib, 2 * a.memory.optimizer_gib, 1e-9));
        if (zero == 3)
            QVERIFY(closeRelative(b.memory.gradients_gib, 2 * a.memory.gradients_gib, 1e-9));
        else
            QVERIFY(closeRelative(b.memory.gradients_gib, a.memory.gradients_gib, 1e-9));
        QVERIFY(b.breakdown.optimizer_s > a.breakdown.optimizer_s);
        // Over a slow link the per-step all-reduce of a shard beats ZeRO's
        // collectives across it.
        const Cluster slow = twoBuildings(25, 10);
        QVERIFY(evaluated(slow, smallLlama(), hsdp).step_time_s <
                evaluated(slow, smallLlama(), full).step_time_s);
        // dp_shard = dp is no HSDP.
        Plan whole = full;
        whole.dp_shard = 32;
        QCOMPARE(evaluated(c, smallLlama(), whole).step_time_s, a.step_time_s);
    }
    // The plan check: a group that divides dp, something sharded, and no
    // other grouping of the replicas (experts, the outer sync, compression).
    const auto says = [&](Plan p, const std::string& what) {
        for (const Diagnostic& d : validateScenario({c, smallLlama(), p}))
            if (d.path == "/dp_shard" && d.message.find(what) != std::string::npos)
                return true;
        return false;
    };
    Plan p = makePlan(4, 1, 32, 128);
    p.dp_shard = 16;
    QVERIFY(validateScenario({c, smallLlama(), p}).empty());
    Plan bad = p;
    bad.dp_shard = 12;
    QVERIFY(says(bad, "must divide dp (32), got 12"));
    bad = p;
    bad.zero_stage = 0;
    QVERIFY(says(bad, "zero_stage 0 shards nothing"));
    bad = p;
    bad.outer_sync = OuterSync{};
    bad.outer_sync->method = OuterSyncMethod::Hsdp;
    bad.outer_sync->inner_steps = 1;
    QVERIFY(says(bad, "outer_sync already groups the replicas"));
    bad = p;
    bad.dp_compression = Compression{};
    QVERIFY(says(bad, "compressing the replicas' all-reduce is not modelled"));
}

void TestFidelity::gradientsReducedOverDpTimesCp() {
    // tp4 cp2 dp16 over two buildings (DP outermost): each TP rank's
    // gradients are reduced over its dp x cp = 32 peers, 16 in each building;
    // 4 such groups (one per TP rank) run at once. A flat ring crosses the
    // link once each way: per direction 4 x (n-1)/n x (bytes of the
    // reduce-scatter + bytes of the parameter all-gather), n = 32.
    const Cluster c = twoBuildings();
    Plan p = makePlan(4, 1, 16, 64);
    p.parallelism.cp = 2;
    p.zero_stage = 1;
    p.grad_reduce_bytes = 2;
    p.collectives[Dim::DP] = CollectiveAlgo::Ring;
    const Evaluation ev = evaluated(c, smallLlama(), p);
    const double P = paramsPerGpu(ev);
    const double n = 32, groups = 4;
    double link = -1;
    for (const LinkUsage& u : ev.links)
        if (u.tier == LinkTier::InterBuilding)
            link = u.bytes_per_step;
    QVERIFY(closeRelative(link, groups * (n - 1) / n * (P * 2 + P * kWeightBytes), 1e-9));
    // CP alone still reduces its gradients (dp 1, cp 2: a group of two).
    Plan cpOnly = makePlan(4, 1, 1, 4);
    cpOnly.parallelism.cp = 2;
    const Evaluation one = evaluated(clusterOf("one", {building("B1", 8)}), smallLlama(), cpOnly);
    QVERIFY(one.breakdown.dp_exposed_s > 0);
}

void TestFidelity::everyStageHasItsBreakdown() {
    // An MoE model whose first four layers are dense, on two stages of four
    // layers: stage 0 has no all-to-all, stage 1 does (EP 8 across hosts).
    Model m = smallLlama();
    MoeConfig moe = moeOf(8, 2, 4096);
    moe.dense_layers = 4;
    m.moe = moe;
    Plan p = makePlan(2, 2, 16, 64);
    p.parallelism.ep = 8;
    const Evaluation ev = evaluated(clusterOf("one", {building("B1", 64)}), m, p);
    QCOMPARE(int(ev.stage_breakdown.size()), 2);
    QCOMPARE(ev.stage_breakdown[0].ep_exposed_s, 0.0);
    QVERIFY(ev.stage_breakdown[1].ep_exposed_s > 0);
    // The critical stage's breakdown is one of them.
    const Breakdown& crit = ev.stage_breakdown[std::size_t(
        ev.stage_breakdown[0].compute_s == ev.breakdown.compute_s ? 0 : 1)];
    QCOMPARE(crit.compute_s, ev.breakdown.compute_s);
    QCOMPARE(crit.ep_exposed_s, ev.breakdown.ep_exposed_s);
}

void TestFidelity::dataParallelSharesLinksWithActivations() {
    // Two phases on one link: the drain with the other's bytes on it is
    // (a + b) / rate, on the edges this phase uses only.
    const Cluster c = twoBuildings(1000, 1);
    const Topology topo(c);
    const std::vector<EdgeTransport> transport = edgeTransports(c, topo, makePlan());
    TrafficPhase dp(topo, transport), p2p(topo, transport);
    const Location a{0, 0}, b{1, 0};
    dp.add(a, b, 4e9, 64);
    p2p.add(a, b, 2e9, 64);
    p2p.add(Location{0, 0}, Location{0, 0}, 1e12, 1); // same site: no edge
    QVERIFY(closeRelative(dp.drainTimeWith(p2p, 1.0), dp.drainTime() * 1.5, 1e-12));
    QVERIFY(
        closeRelative(dp.routeDrainTimeWith(p2p, 1.0, a, b), dp.routeDrainTime(a, b) * 1.5, 1e-12));
    QCOMPARE(dp.drainTimeWith(p2p, 0.0), dp.drainTime());

    // The ZeRO-3 stage: all stages' gathers and reduce-scatters drain slower
    // when the activations of a microbatch cross the same link. tp8 pp2 dp4
    // on two buildings of 32; stage 1's replicas swapped between the
    // buildings, so both DP groups and every P2P pair cross.
    Plan p = makePlan(8, 2, 4, 16);
    p.placement = Placement{{{1, 1, 0, 1, "B2"}, {1, 1, 2, 3, "B1"}}, {}};
    const Cluster pair =
        clusterOf("pair", {building("B1", 32), building("B2", 32)}, {link("B1", "B2", 200, 1)});
    const Topology pairTopo(pair);
    const ClusterContext ctx{&pair, &pairTopo, 1};
    Layout layout;
    buildLayout(ctx, {1, p.parallelism, p.rank_order, p.placement->runs, "plan"}, layout);
    QVERIFY(layout.placed.ok());
    Transports transports;
    buildTransports(ctx, {1, {}}, transports);
    P2p act;
    p2pTransfers(ctx, {Ref<Layout>(&layout, 1), Ref<Transports>(&transports, 1), 2, 64e6}, act);
    Zero3Input zi{Ref<Layout>(&layout, 1),
                  Ref<Transports>(&transports, 1),
                  Ref<P2p>(),
                  CollectiveAlgo::Ring,
                  2,
                  1,
                  4,
                  {1e8, 1e8},
                  {2e8, 2e8}};
    Zero3 alone, shared;
    zero3Collectives(ctx, zi, alone);
    zi.p2p = Ref<P2p>(&act, 1);
    zero3Collectives(ctx, zi, shared);
    QVERIFY(alone.shared > 0);
    QVERIFY2(shared.shared > alone.shared * 1.01,
             (std::to_string(shared.shared) + " vs " + std::to_string(alone.shared)).c_str());
}

void TestFidelity::overlappedCollectivesTakeSmsFromCompute() {
    // While a collective runs beside compute its CTAs hold share of the SMs:
    // the compute goes at 1 - share while both run, at full rate after.
    const double share = 0.2;
    QVERIFY(closeRelative(slowedCompute(10, 2, share), 10 + 2 * share));
    // A collective longer than the slowed compute: all of it ran slowed.
    QVERIFY(closeRelative(slowedCompute(8, 100, share), 8 / (1 - share)));
    QVERIFY(closeRelative(overlappedWithCompute(8, 100, share), 100));
    QVERIFY(closeRelative(overlappedWithCompute(10, 2, share), 10.4));
    QCOMPARE(slowedCompute(10, 0, share), 10.0);
    QCOMPARE(slowedCompute(10, 2, 0), 10.0);
    // NCCL's CTAs on an H100's 132 SMs and an A100's 108.
    QVERIFY(closeRelative(ncclOverlapShare(132), KernelConstants{}.nccl_overlap_ctas / 132));
    QVERIFY(ncclOverlapShare(108) > ncclOverlapShare(132));

    // Data parallelism over 8 hosts of one building, one microbatch per
    // replica, small buckets: the all-reduce runs beside the backward and
    // all but its last bucket hides there, but it slows that backward by
    // share x its time. Without overlap it all comes after the backward.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const Plan on = dpOverEightHosts(1);
    Plan off = on;
    off.dp_overlap = false;
    const Evaluation hidden = evaluated(c, smallLlama(), on);
    const Evaluation after = evaluated(c, smallLlama(), off);
    const double sync = after.breakdown.dp_exposed_s; // all of the all-reduce
    const double slowdown = ncclOverlapShare(h100().sms) * sync;
    QVERIFY(sync > 0);
    QVERIFY2(
        hidden.breakdown.dp_exposed_s >= 0.99 * slowdown,
        (std::to_string(hidden.breakdown.dp_exposed_s) + " < " + std::to_string(slowdown)).c_str());
    QVERIFY(hidden.breakdown.dp_exposed_s < 0.5 * sync);
    QVERIFY(hidden.step_time_s < after.step_time_s);
}

void TestFidelity::embeddingBucketIsReducedLast() {
    // Data parallelism over 8 hosts, one microbatch a replica, 16 MiB
    // buckets: every bucket's all-reduce hides beside the backward but the
    // last. Buckets never split a parameter, and the last one holds the
    // input embedding (its gradient is complete only when the backward has
    // passed the first layer; Megatron-Core param_and_grad_buffer.py): with
    // a 256k vocabulary its all-reduce, a sixth of the stage's, comes after
    // the backward. With a 1k vocabulary the last bucket is 16 MiB again.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const Plan on = dpOverEightHosts(16);
    Plan off = on;
    off.dp_overlap = false;
    for (const std::int64_t vocab : {std::int64_t(1024), std::int64_t(262144)}) {
        Model m = smallLlama();
        m.vocab = vocab;
        const Evaluation hidden = evaluated(c, m, on);
        const Evaluation after = evaluated(c, m, off);
        const double sync = after.breakdown.dp_exposed_s;
        const double P = paramsPerGpu(after);
        const double embedding = double(vocab) * m.hidden / on.parallelism.tp;
        const double tail = sync * embedding / P;
        QVERIFY(sync > 0);
        // Beside the backward the other buckets slow it by the NCCL share
        // of their time; the last bucket's comes after it (tail: its share
        // of the bytes, with the buckets' latency, 13% of sync, in it).
        const double share = ncclOverlapShare(h100().sms);
        const double exposed = hidden.breakdown.dp_exposed_s;
        if (vocab > 100000) {
            QVERIFY(embedding / P > 0.15);
            const double want = share * (sync - tail) + 0.8 * tail;
            QVERIFY2(exposed >= want,
                     (std::to_string(exposed) + " < " + std::to_string(want)).c_str());
        } else {
            QVERIFY(exposed <= (share + 0.1) * sync);
        }
    }
}

void TestFidelity::tiedEmbeddingsSyncAcrossThePipeline() {
    // Tied input and output embeddings under PP: the last stage holds its
    // own copy of the table for the output layer, and the two copies'
    // gradients are all-reduced between the first and the last stage once
    // a step, after the DP sync (Megatron-Core's
    // _allreduce_word_embedding_grads, DeepSpeed's _exec_reduce_tied_grads).
    // TP 8 x PP 2 x DP 8, each stage in a building of its own: the pairs'
    // all-reduce crosses the link, where the DP rings do not.
    const Cluster c = twoBuildings(100, 10);
    Model tied = smallLlama();
    tied.vocab = 262144;
    tied.tied_embeddings = true;
    Model untied = tied;
    untied.tied_embeddings = false;
    Plan p = makePlan(8, 2, 8, 64);
    p.placement = Placement{{{0, 0, 0, 7, "B1"}, {1, 1, 0, 7, "B2"}}, {}};
    const Evaluation t = evaluated(c, tied, p);
    const Evaluation u = evaluated(c, untied, p);
    QCOMPARE(t.stage_building, (std::vector<int>{0, 1}));
    // The copy: the last stage holds what an untied output layer holds.
    QCOMPARE(t.stage_params, u.stage_params);
    // Its gradients, fp32 (grad_reduce_bytes 4), once each way per pair.
    const double perGpu = double(tied.vocab) * tied.hidden / 8 * 4;
    const double pairs = 8.0 * 8.0;
    QCOMPARE(t.links.size(), u.links.size());
    const LinkUsage* lt = nullptr;
    const LinkUsage* lu = nullptr;
    for (std::size_t i = 0; i < t.links.size(); ++i)
        if (t.links[i].tier == LinkTier::InterBuilding) {
            lt = &t.links[i];
            lu = &u.links[i];
        }
    QVERIFY(lt && lu);
    for (int dir = 0; dir < 2; ++dir)
        QVERIFY(closeRelative(lt->direction_bytes_per_step[dir] - lu->direction_bytes_per_step[dir],
                              pairs * perGpu, 1e-9));
    // Exposed after the DP sync: at least the bytes at the link's line rate,
    // at most a third more with the latency.
    const double line = 100e9 / 8;
    const double extra = t.step_time_s - u.step_time_s;
    QVERIFY2(extra >= pairs * perGpu / line && extra <= 1.34 * pairs * perGpu / line + 0.05,
             std::to_string(extra).c_str());
    QVERIFY(t.breakdown.dp_exposed_s >= u.breakdown.dp_exposed_s + pairs * perGpu / line);
    // Without DP the first and last stage still sync the table: the
    // timeline shows it as their gradient sync, from the pipeline's end to
    // the optimizer, and the middle has none.
    Plan solo = makePlan(8, 2, 1, 8);
    solo.placement = Placement{{{0, 0, 0, 0, "B1"}, {1, 1, 0, 0, "B2"}}, {}};
    const Evaluation ts = evaluated(c, tied, solo);
    int syncs = 0;
    for (const TimelineOp& op : ts.timeline.ops)
        if (op.kind == OpKind::DpSync) {
            ++syncs;
            QVERIFY2(op.end_s - op.start_s >= perGpu * 8 / line, std::to_string(op.end_s).c_str());
            QVERIFY(op.exposed_s > 0);
        }
    QCOMPARE(syncs, 2);
    // Without a pipeline there is one table and nothing to sync.
    const Plan flat = makePlan(8, 1, 16, 64);
    const Evaluation t1 = evaluated(c, tied, flat);
    const Evaluation u1 = evaluated(c, untied, flat);
    const double table = double(tied.vocab) * tied.hidden / 8;
    QVERIFY(closeRelative(u1.stage_params[0] - t1.stage_params[0], table, 1e-9));
}

void TestFidelity::shardedOptimizerAllReducesOnRequest() {
    // ZeRO-1 that all-reduces its gradients (DeepSpeed reduce_scatter false,
    // its BF16_Optimizer, PyTorch's ZeroRedundancyOptimizer): the memory of
    // ZeRO-1, the gradient traffic of ZeRO-0, the parameter all-gather of
    // ZeRO-1. TP 8 x DP 16 with the DP rings across the two buildings'
    // link: a ring all-reduce sends twice what its reduce-scatter does, so
    // the link carries one more gradient reduce-scatter's bytes a step.
    const Cluster c = twoBuildings(400, 1);
    const Model m = smallLlama();
    Plan rs = makePlan(8, 1, 16, 64);
    rs.collectives[Dim::DP] = CollectiveAlgo::Ring;
    Plan ar = rs;
    ar.grad_reduce_scatter = false;
    Plan z0 = rs;
    z0.zero_stage = 0;
    const Evaluation e1 = evaluated(c, m, rs), eAr = evaluated(c, m, ar), e0 = evaluated(c, m, z0);
    QCOMPARE(eAr.memory.optimizer_gib, e1.memory.optimizer_gib);
    QCOMPARE(eAr.memory.gradients_gib, e1.memory.gradients_gib);
    QVERIFY(e0.memory.optimizer_gib > 10 * e1.memory.optimizer_gib);
    auto crossBytes = [](const Evaluation& e) {
        for (const LinkUsage& u : e.links)
            if (u.tier == LinkTier::InterBuilding)
                return u.bytes_per_step;
        return 0.0;
    };
    // ZeRO-1: reduce-scatter of fp32 gradients + all-gather of bf16 weights
    // (4 + 2 bytes); all-reduce: 4 + 4 + 2; ZeRO-0: 4 + 4.
    QVERIFY(crossBytes(e1) > 0);
    QVERIFY2(closeRelative(crossBytes(eAr) / crossBytes(e1), 10.0 / 6.0, 1e-9),
             std::to_string(crossBytes(eAr) / crossBytes(e1)).c_str());
    QVERIFY(closeRelative(crossBytes(e0) / crossBytes(e1), 8.0 / 6.0, 1e-9));
    QVERIFY(eAr.breakdown.dp_exposed_s > e1.breakdown.dp_exposed_s);
    QVERIFY(eAr.step_time_s > e1.step_time_s);
}

void TestFidelity::expertParallelPlanCarriesTheAccuracyNote() {
    // The validation's MoE rows with expert parallelism all come out too
    // fast (tst_validation widerRuns holds the note to that): a plan of
    // that kind says so; without EP, or without experts, the EP note is not
    // said (the BF16 one, below, is). Tokens padded to capacity (capacity
    // factor > 1) do not wait for their counts, and the note leaves that
    // part out.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const auto note = [&](const Model& m, int ep, bool overlap = false) {
        Plan p = makePlan(1, 1, 8, 64);
        p.parallelism.ep = ep;
        p.ep_overlap = overlap;
        for (const std::string& w : evaluated(c, m, p).warnings)
            if (w.rfind("accuracy:", 0) == 0)
                return w;
        return std::string();
    };
    const auto ep = [](const std::string& w) {
        return w.find("expert parallelism") != std::string::npos;
    };
    Model moe = smallLlama();
    moe.moe = moeOf(64, 8, 768);
    QVERIFY(ep(note(moe, 8)));
    QVERIFY(note(moe, 8).find("lower bound") != std::string::npos);
    QVERIFY(note(moe, 8).find("token counts") != std::string::npos);
    // With the all-to-alls overlapped the note says how much less the
    // profiled run hid; without, it does not speak of overlap.
    QVERIFY(note(moe, 8).find("overlap") == std::string::npos);
    QVERIFY(note(moe, 8, true).find("overlap") != std::string::npos);
    QVERIFY(note(moe, 8, true).find("token counts") != std::string::npos);
    QVERIFY(!ep(note(moe, 1)));
    QVERIFY(!ep(note(smallLlama(), 1)));
    moe.moe->capacity_factor = 1.25;
    QVERIFY(ep(note(moe, 8)));
    QVERIFY(note(moe, 8).find("token counts") == std::string::npos);
    QVERIFY(note(moe, 8, true).find("overlap") != std::string::npos);
}

void TestFidelity::bf16OnHopperCarriesTheAccuracyNote() {
    // The dense BF16 runs on Hopper in the validation come out too fast on
    // average (tst_validation widerRuns holds the note to that), the FP8
    // ones do not: a BF16 plan on an H100 says so; an FP8 one, or a BF16
    // one on a GPU of another architecture, does not.
    const auto note = [](const GpuModel& gpu, const Model& m) {
        Building b = building("B1", 64);
        b.gpu_model = gpu.name;
        const Cluster c = clusterOf("one", {b}, {}, gpu);
        for (const std::string& w : evaluated(c, m, makePlan(1, 1, 8, 64)).warnings)
            if (w.rfind("accuracy:", 0) == 0)
                return w;
        return std::string();
    };
    Model bf16 = smallLlama();
    Model fp8 = smallLlama();
    fp8.dtype = DType::FP8;
    const std::string said = note(h100(), bf16);
    QVERIFY2(said.find("BF16") != std::string::npos, said.c_str());
    QVERIFY(said.find("on average") != std::string::npos);
    QVERIFY(note(h100(), fp8).empty());
    GpuModel a100 = h100();
    a100.name = "A100";
    a100.peak_tflops_bf16 = 312;
    a100.peak_tflops_fp8 = 0;
    a100.sms = 108;
    QVERIFY(note(a100, bf16).empty());
}

void TestFidelity::unvalidatedArchitectureCarriesTheAccuracyNote() {
    // The validation holds A100 and H100 runs: a GPU of another architecture
    // (Blackwell, or one its name does not tell) gets a note naming it, the
    // architecture and the GEMM efficiencies its step time rests on; an
    // A100 or an H100 does not. One note per GPU model, however many
    // buildings hold it.
    const auto notes = [](const GpuModel& gpu, int buildings = 1, DType dtype = DType::FP8) {
        std::vector<Building> bs;
        std::vector<Link> links;
        for (int i = 0; i < buildings; ++i) {
            Building b = building("B" + std::to_string(i + 1), 64);
            b.gpu_model = gpu.name;
            bs.push_back(b);
            if (i > 0)
                links.push_back(link("B1", b.name, 25600, 1));
        }
        const Cluster c = clusterOf("one", bs, links, gpu);
        Model m = smallLlama();
        m.dtype = dtype;
        std::vector<std::string> out;
        for (const std::string& w : evaluated(c, m, makePlan(1, buildings, 64, 64)).warnings)
            if (w.rfind("accuracy: no published run on GPU model", 0) == 0)
                out.push_back(w);
        return out;
    };
    GpuModel mi = h100();
    mi.name = "MI300X";
    mi.peak_tflops_bf16 = 1307;
    mi.peak_tflops_fp8 = 2615;
    mi.sms = 304;
    mi.gemm_efficiency = 0.6;
    auto said = notes(mi);
    QCOMPARE(said.size(), std::size_t(1));
    QVERIFY2(said[0].find("'MI300X' (architecture unknown)") != std::string::npos, said[0].c_str());
    QVERIFY2(said[0].find("0.60 of the BF16 peak, 0.70 of the FP8") != std::string::npos,
             said[0].c_str());
    QVERIFY(said[0].find("calibrate --gemm") != std::string::npos);
    GpuModel b200 = h100();
    b200.name = "B200";
    b200.peak_tflops_bf16 = 2250;
    b200.peak_tflops_fp8 = 4500;
    said = notes(b200, 2);
    QCOMPARE(said.size(), std::size_t(1));
    QVERIFY2(said[0].find("(architecture blackwell)") != std::string::npos, said[0].c_str());
    QVERIFY(notes(h100()).empty());
    QVERIFY(notes(h100(), 1, DType::BF16).empty());
    GpuModel a100 = h100();
    a100.name = "A100";
    a100.peak_tflops_bf16 = 312;
    a100.peak_tflops_fp8 = 0;
    a100.sms = 108;
    QVERIFY(notes(a100, 1, DType::BF16).empty());
    // Its architecture named in the GPU model counts as well as its name.
    mi.architecture = "hopper";
    QVERIFY(notes(mi).empty());
}

void TestFidelity::moeTokensArePermutedAroundTheExperts() {
    // 8192 tokens per GPU, top 8 of 128 experts, h 2048: each permutation
    // pass reads and writes 8192 x 8 hidden vectors in BF16. Without EP the
    // dispatcher permutes and unpermutes (2 passes); under EP 8 (16 local
    // experts) it also regroups the received tokens by expert and back (4).
    // The flex dispatcher (DeepEP, HybridEP) receives the tokens in its own
    // order and permutes them by expert once each way (2).
    Model m = smallLlama();
    MoeConfig moe = moeOf(128, 8, 768);
    m.moe = moe;
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const auto layer = [&](int ep, EpDispatcher dispatcher = EpDispatcher::AllToAll) {
        Plan p = makePlan(1, 1, 8, 64);
        p.micro_batch_sequences = 4;
        p.parallelism.ep = ep;
        p.ep_dispatcher = dispatcher;
        LayerContext ctx = layerContext(c, c.buildings[0], m, p);
        ctx.moe_layer = true;
        return layerCost(ctx);
    };
    const GpuModel& gpu = h100();
    const double pass = 2.0 * 8192 * 8 * 2048 * 2.0 / (gpu.hbm_tbps * 1e12 * 0.8) + 3e-6;
    const LayerCost one = layer(1), eight = layer(8);
    QVERIFY_CLOSE(one.moe_permute_s, 2 * pass, 1e-9);
    QVERIFY_CLOSE(eight.moe_permute_s, 4 * pass, 1e-9);
    QVERIFY_CLOSE(layer(8, EpDispatcher::Flex).moe_permute_s, 2 * pass, 1e-9);
    QVERIFY_CLOSE(layer(1, EpDispatcher::Flex).moe_permute_s, 2 * pass, 1e-9);
    QVERIFY(one.fwd_s > one.moe_permute_s);
    // One expert per GPU: nothing to regroup.
    moe.experts = 8;
    moe.top_k = 2;
    m.moe = moe;
    const double pass2 = 2.0 * 8192 * 2 * 2048 * 2.0 / (gpu.hbm_tbps * 1e12 * 0.8) + 3e-6;
    QVERIFY_CLOSE(layer(8).moe_permute_s, 2 * pass2, 1e-9);
    // A dense layer permutes nothing.
    Plan p = makePlan(1, 1, 8, 64);
    QCOMPARE(layerCost(layerContext(c, c.buildings[0], smallLlama(), p)).moe_permute_s, 0.0);
}

void TestFidelity::epAllToAllSplitsHostAndNetwork() {
    // EP 16 over two 8-GPU hosts: each GPU sends 1/16 of its top_k copies to
    // each peer, 7 of them on its host (NVLink) and 8 on the other (its NIC),
    // both at once; the NIC's share bounds the exchange. Before, every byte
    // was charged to the NIC as soon as the group left the host.
    Model m = smallLlama();
    m.moe = moeOf(128, 8, 768);
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const auto layer = [&](int ep) {
        Plan p = makePlan(1, 1, 16, 64);
        p.micro_batch_sequences = 2;
        p.parallelism.ep = ep;
        LayerContext ctx = layerContext(c, c.buildings[0], m, p);
        ctx.moe_layer = true;
        return std::pair(ctx, layerCost(ctx));
    };
    const auto [ctx16, ep16] = layer(16);
    const double T = 2.0 * 2048; // tokens per GPU (makePlan's sequence of 2048)
    const double perPeer = T * 8 * m.hidden * 2.0 / 16;
    const double up = ctx16.scale_up_gbps * 1e9 / 8 * ctx16.scale_up_efficiency;
    const double out = ctx16.scale_out_gbps * 1e9 / 8 * ctx16.scale_out_efficiency;
    const double local = 7 * (perPeer / up + ctx16.scale_up_step_s);
    const double remote = 8 * (perPeer / out + ctx16.scale_out_step_s);
    QVERIFY(remote > local);
    QVERIFY_CLOSE(ep16.ep_fwd_s, 2 * remote, 1e-9);
    QVERIFY_CLOSE(ep16.ep_bwd_s, ep16.ep_fwd_s, 1e-12);
    // The old charge: all 15 peers' bytes through the NIC.
    QVERIFY(ep16.ep_fwd_s < 0.6 * 2 * 15 * (perPeer / out + ctx16.scale_out_step_s));
    // Inside one host nothing changes: all peers over NVLink.
    const auto [ctx8, ep8] = layer(8);
    const double perPeer8 = T * 8 * m.hidden * 2.0 / 8;
    QVERIFY_CLOSE(ep8.ep_fwd_s, 2 * 7 * (perPeer8 / up + ctx8.scale_up_step_s), 1e-9);
    // The bytes leaving the GPU are the same either way.
    QVERIFY_CLOSE(ep16.ep_bytes_fwd_one_way, 15 * perPeer, 1e-12);
}

void TestFidelity::dpRingLeavesAHostThroughAllItsNics() {
    // A DP group of 16 on two 8-GPU hosts: NCCL's channels run their rings
    // through the NICs of all eight members of a host, so a member sends
    // 1/8 of the ring's bytes through its NIC and 7/8 over NVLink to the
    // next member, at once (NVIDIA: ~380 GB/s of all_reduce bus bandwidth
    // from eight 400 Gbit/s NICs). Before, the whole ring went through one
    // NIC. With TP 8 each host holds one member of each group: one NIC.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const auto dpRing = [&](int tp, int dp, std::vector<Dim> order) {
        Topology topo(c);
        const ClusterContext ctx{&c, &topo, 1};
        Plan p = makePlan(tp, 1, dp, tp * dp);
        p.rank_order = std::move(order);
        Layout layout;
        buildLayout(ctx, {1, p.parallelism, p.rank_order, {}, "plan"}, layout);
        Transports transports;
        buildTransports(ctx, {1, {}}, transports);
        TrafficPhase phase(topo, transports);
        const double S = 1e9;
        const CollectiveCost cost =
            loadCollective(phase, layout.spreads[0], CollectiveKind::ReduceScatter,
                           CollectiveAlgo::Ring, S, layout.dpGroups, layout.stageEnv[0]);
        return std::tuple(layout.spreads[0].per_host, cost.bandwidth_s, layout.stageEnv[0]);
    };
    const std::vector<Dim> tcdp = {Dim::TP, Dim::CP, Dim::DP, Dim::PP};
    const auto [k16, t16, env] = dpRing(1, 16, tcdp);
    QCOMPARE(k16, 8);
    const double ring = 15.0 / 16 * 1e9;
    QVERIFY(env.nvlink_bps * 8 / 7 > 8 * env.nic_bps); // the NICs bound it
    QVERIFY_CLOSE(t16, ring / (8 * env.nic_bps), 1e-12);
    // TP 2: four members a host, four NICs.
    const auto [k4, t4, env4] = dpRing(2, 16, tcdp);
    QCOMPARE(k4, 4);
    QVERIFY_CLOSE(t4, ring / (4 * env4.nic_bps), 1e-12);
    // TP 8: one member a host, one NIC, as before.
    const auto [k1, t1, env1] = dpRing(8, 8, tcdp);
    QCOMPARE(k1, 1);
    QVERIFY_CLOSE(t1, 7.0 / 8 * 1e9 / env1.nic_bps, 1e-12);
    // The rank order decides who shares a host: with pp before dp and pp 1
    // the group is still contiguous; dp outermost behind tp 2 x cp 1 x pp 1.
    const auto [kOrder, tOrder, envOrder] = dpRing(2, 16, {Dim::TP, Dim::CP, Dim::PP, Dim::DP});
    QCOMPARE(kOrder, 4);
    // A group inside one host stays on NVLink.
    const auto [kHost, tHost, envHost] = dpRing(1, 8, tcdp);
    QVERIFY_CLOSE(tHost, 7.0 / 8 * 1e9 / envHost.nvlink_bps, 1e-12);
}

void TestFidelity::flexDispatchSendsOneCopyPerHost() {
    // Hosts a token's experts lie on, worked by hand. 128 experts over 2
    // hosts, top 8: a host misses all 8 with C(64,8)/C(128,8).
    MoeConfig moe = moeOf(128, 8, 768);
    double miss = 1;
    for (int i = 0; i < 8; ++i)
        miss *= (64.0 - i) / (128.0 - i);
    QVERIFY_CLOSE(expectedHostsTouched(moe, 2), 2 * (1 - miss), 1e-12);
    // DeepSeek-V3: 256 experts in 8 groups, one a node, a token's 8 inside
    // its 4 best groups. A node is among the chosen groups with 4/8; then
    // its 32 experts of the 128 chosen: missed with C(96,8)/C(128,8).
    MoeConfig v3 = moeOf(256, 8, 2048);
    v3.router_groups = 8;
    v3.router_group_topk = 4;
    double miss3 = 1;
    for (int i = 0; i < 8; ++i)
        miss3 *= (96.0 - i) / (128.0 - i);
    const double limited = 8 * 0.5 * (1 - miss3);
    QVERIFY_CLOSE(expectedHostsTouched(v3, 8), limited, 1e-12);
    QVERIFY(limited <= 4.0); // "sent to at most 4 nodes"
    // Two groups a host (16 groups over 8 hosts): a host holds 0, 1 or 2
    // of the 4 chosen groups (hypergeometric over 16 groups, 2 per host).
    MoeConfig two = v3;
    two.router_groups = 16;
    double t2 = 0;
    const double choose16_4 = 1820;
    const double pc[3] = {1365.0 / choose16_4, 2 * 364.0 / choose16_4, 91.0 / choose16_4};
    for (int c = 0; c <= 2; ++c) {
        double m = 1;
        for (int i = 0; i < 8; ++i)
            m *= (64.0 - 16.0 * c - i) / (64.0 - i);
        t2 += pc[c] * (1 - m);
    }
    QVERIFY_CLOSE(expectedHostsTouched(two, 8), 8 * t2, 1e-12);
    // Without the limit the same token touches more nodes.
    v3.router_groups = v3.router_group_topk = 0;
    QVERIFY(expectedHostsTouched(v3, 8) > limited + 1);

    // The ranks a token's experts lie on, by the same formula: 128 experts
    // over 16 ranks of 8, a rank missed with C(120,8)/C(128,8).
    double missRank = 1;
    for (int i = 0; i < 8; ++i)
        missRank *= (120.0 - i) / (128.0 - i);
    const double ranksTouched = 16 * (1 - missRank);
    QVERIFY_CLOSE(expectedHostsTouched(moe, 16), ranksTouched, 1e-12);
    QVERIFY(ranksTouched < 7 && ranksTouched > 6); // 6.6 of the 8 copies

    // The layer: EP 16 over two 8-GPU hosts. The NIC carries each token
    // once to the other host when its experts are there; NVLink one copy
    // for each other GPU of the host holding one of its experts (DeepEP's
    // is_token_in_rank), not one per expert; both at once. The channel
    // also moves the own host's copy (DeepEP's sender writes it into its own
    // RDMA receive buffer), so it runs one copy per host touched at the
    // NIC's pace: twice the wire's bytes here.
    Model m = smallLlama();
    m.moe = moe;
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const auto layer = [&](EpDispatcher d) {
        Plan p = makePlan(1, 1, 16, 64);
        p.micro_batch_sequences = 2;
        p.parallelism.ep = 16;
        p.ep_dispatcher = d;
        LayerContext ctx = layerContext(c, c.buildings[0], m, p);
        ctx.moe_layer = true;
        return std::pair(ctx, layerCost(ctx));
    };
    const auto [ctx, flex] = layer(EpDispatcher::Flex);
    const auto [ctxA, a2a] = layer(EpDispatcher::AllToAll);
    const double T = 2.0 * 2048, hb = m.hidden * 2.0;
    const double up = ctx.scale_up_gbps * 1e9 / 8 * ctx.scale_up_efficiency;
    const double out = ctx.scale_out_gbps * 1e9 / 8 * ctx.scale_out_efficiency;
    const double nic = T * (2 * (1 - miss)) * 0.5 * hb;
    const double channel = T * (2 * (1 - miss)) * hb;
    const double nvl = T * ranksTouched * hb * 7.0 / 8;
    const double want =
        std::max(channel / out + ctx.scale_out_step_s, nvl / up + 7 * ctx.scale_up_step_s);
    QVERIFY(channel / out > nvl / up); // the channel bounds this layer
    QVERIFY_CLOSE(flex.ep_bytes_fwd_one_way, nic + nvl, 1e-12);
    QVERIFY_CLOSE(flex.ep_fwd_s, 2 * want, 1e-9);
    QVERIFY(flex.ep_fwd_s < 0.5 * a2a.ep_fwd_s);
    // The network between locations sees the NIC's bytes, spread over the
    // 8 peers on the other host.
    QVERIFY_CLOSE(flex.ep_bytes_per_remote_peer, nic / 8, 1e-12);
    QVERIFY_CLOSE(a2a.ep_bytes_per_remote_peer, T * 8 * hb / 16, 1e-12);
    // Inside one host DeepEP (intranode.cu) sends a token once to each
    // other rank holding one of its experts; NCCL's all-to-all once per
    // expert. EP 8: 16 experts a rank.
    const auto inHost = [&](EpDispatcher d, const Model& mm) {
        Plan p = makePlan(1, 1, 8, 64);
        p.micro_batch_sequences = 2;
        p.parallelism.ep = 8;
        p.ep_dispatcher = d;
        LayerContext x = layerContext(c, c.buildings[0], mm, p);
        x.moe_layer = true;
        return std::pair(x, layerCost(x));
    };
    double missOf8 = 1;
    for (int i = 0; i < 8; ++i)
        missOf8 *= (112.0 - i) / (128.0 - i);
    const double ranks8 = 8 * (1 - missOf8);
    const auto [xf, inFlex] = inHost(EpDispatcher::Flex, m);
    const auto [xa, inA2a] = inHost(EpDispatcher::AllToAll, m);
    const double upIn = xf.scale_up_gbps * 1e9 / 8 * xf.scale_up_efficiency;
    const double perPeer = T * ranks8 / 8 * hb;
    QVERIFY_CLOSE(inFlex.ep_bytes_per_remote_peer, perPeer, 1e-12);
    QVERIFY_CLOSE(inFlex.ep_bytes_fwd_one_way, 7 * perPeer, 1e-12);
    QVERIFY_CLOSE(inFlex.ep_fwd_s, 2 * 7 * (perPeer / upIn + xf.scale_up_step_s), 1e-9);
    QVERIFY_CLOSE(inA2a.ep_bytes_fwd_one_way, T * 8 * hb * 7.0 / 8, 1e-12);
    QVERIFY(inFlex.ep_fwd_s < inA2a.ep_fwd_s);
    // Routing inside blocks of 8 consecutive experts (16 groups, one a
    // token: NeMo AutoModel's FakeBalancedGate gives token i experts 8i to
    // 8i + 7): one rank a token, 7/8 of them another GPU.
    Model grouped = m;
    grouped.moe->router_groups = 16;
    grouped.moe->router_group_topk = 1;
    QVERIFY_CLOSE(expectedHostsTouched(*grouped.moe, 8), 1.0, 1e-12);
    const auto [xg, inGrouped] = inHost(EpDispatcher::Flex, grouped);
    QVERIFY_CLOSE(inGrouped.ep_bytes_fwd_one_way, T * hb * 7.0 / 8, 1e-12);
    // NCCL's all-to-all moves every expert's copy whatever the routing.
    QCOMPARE(inHost(EpDispatcher::AllToAll, grouped).second.ep_fwd_s, inA2a.ep_fwd_s);

    // HybridEP: the same exchange, and before each forward's dispatch an
    // NCCL all-gather of every rank's routing map (one bool a token and
    // expert) over the 16 ranks, at each member's NIC across the hosts.
    // The backward reuses the handle.
    const auto [ctxH, hybrid] = layer(EpDispatcher::HybridEp);
    const double gathered = 16 * T * moe.experts;
    QVERIFY_CLOSE(hybrid.ep_fwd_s - flex.ep_fwd_s,
                  15.0 / 16 * gathered / out + 15 * ctxH.scale_out_step_s, 1e-9);
    QVERIFY_CLOSE(hybrid.ep_bwd_s, flex.ep_bwd_s, 1e-12);
    // HybridEP's NVLink side is taken as one copy per expert.
    QVERIFY_CLOSE(hybrid.ep_bytes_fwd_one_way, nic + T * 8 * hb * 7.0 / 8, 1e-12);
    // Inside one host the gather runs over NVLink, beside the all-to-all's
    // exchange.
    const double inHostGather = inHost(EpDispatcher::HybridEp, m).second.ep_fwd_s - inA2a.ep_fwd_s;
    QVERIFY_CLOSE(inHostGather, 7.0 / 8 * 8 * T * moe.experts / up + 7 * ctx.scale_up_step_s, 1e-9);
}

void TestFidelity::lossKernelsPerFramework() {
    // The loss's passes over the T x V/t logits, counted from each
    // implementation's code (docs/COST_MODEL.md "Logits and loss"): bytes
    // per logit forward / backward, kernels, and what it saves.
    // Megatron-Core's unfused VocabParallelCrossEntropy: 38 / 14 bytes,
    // 6 / 2 kernels, 4 bytes saved. Transformer Engine's Triton kernels:
    // 2 / 4 bytes, 2 / 1 kernels, 2 saved. Megatron's native fusion: 26 / 14,
    // 4 / 2, 4. PyTorch's eager F.cross_entropy: 22 / 26, 3 / 4, 4.
    Model m = smallLlama();
    const Cluster c = clusterOf("one", {building("B1", 8)});
    Plan p = makePlan(2, 1, 1, 2);
    p.micro_batch_sequences = 2;
    const auto logits = [&](CrossEntropy ce) {
        p.cross_entropy = ce;
        return logitsCost(layerContext(c, c.buildings[0], m, p));
    };
    const EdgeCost meg = logitsCost(layerContext(c, c.buildings[0], m, p));
    QCOMPARE(p.cross_entropy, CrossEntropy::Megatron); // the format's default
    const EdgeCost te = logits(CrossEntropy::Te), torch = logits(CrossEntropy::Pytorch),
                   fused = logits(CrossEntropy::MegatronFused);
    const GpuModel& gpu = c.gpu_models.begin()->second;
    const KernelConstants kc;
    const double bw = gpu.hbm_tbps * 1e12 * kc.hbm_efficiency;
    const double T = 2.0 * 2048, v = double(m.vocab) / 2;
    const double k = kc.kernel_overhead_s;
    // The GEMMs and the final norm are the same for every loss.
    QVERIFY_CLOSE(meg.fwd_s - te.fwd_s, (38 - 2) * T * v / bw + (6 - 2) * k, 1e-9);
    QVERIFY_CLOSE(meg.bwd_s - te.bwd_s, (14 - 4) * T * v / bw + (2 - 1) * k, 1e-9);
    QVERIFY_CLOSE(meg.fwd_s - torch.fwd_s, (38 - 22) * T * v / bw + (6 - 3) * k, 1e-9);
    QVERIFY_CLOSE(torch.bwd_s - meg.bwd_s, (26 - 14) * T * v / bw + (4 - 2) * k, 1e-9);
    QVERIFY_CLOSE(meg.fwd_s - fused.fwd_s, (38 - 26) * T * v / bw + (6 - 4) * k, 1e-9);
    QVERIFY_CLOSE(meg.bwd_s, fused.bwd_s, 1e-12);
    // Saved for the backward: the fp32 softmax (Megatron) or log-softmax
    // (PyTorch), the BF16 logits themselves (TE).
    QVERIFY_CLOSE(meg.activation_bytes - te.activation_bytes, 2 * T * v, 1e-12);
    QVERIFY_CLOSE(meg.activation_bytes, torch.activation_bytes, 1e-12);
    // Held while it runs beyond what it saves: Megatron the BF16 logits
    // beside their fp32 copy (2 + 4 - 4), PyTorch's backward the saved
    // log-probabilities, nll_loss's gradient and the softmax backward's
    // output (4 + 4 + 4 - 4), TE nothing (it works in place).
    QVERIFY_CLOSE(meg.transient_bytes, 2 * T * v, 1e-12);
    QVERIFY_CLOSE(fused.transient_bytes, 2 * T * v, 1e-12);
    QVERIFY_CLOSE(torch.transient_bytes, 8 * T * v, 1e-12);
    QCOMPARE(te.transient_bytes, 0.0);
    // The working copies add to the stage's peak once, not per microbatch
    // in flight: a two-stage 1F1B pipeline's last stage holds one
    // microbatch, and without recompute no layer is re-materialised.
    {
        Plan e = makePlan(1, 2, 1, 4);
        e.micro_batch_sequences = 2;
        e.cross_entropy = CrossEntropy::Te;
        const Evaluation a = evaluated(c, m, e);
        e.cross_entropy = CrossEntropy::Pytorch;
        const Evaluation b = evaluated(c, m, e);
        const double logitsAll = T * double(m.vocab);
        QCOMPARE(b.memory.per_stage_peak_gib.size(), std::size_t(2));
        QVERIFY_CLOSE(b.memory.per_stage_peak_gib[1] - a.memory.per_stage_peak_gib[1],
                      (4 + 8 - 2) * logitsAll * kFragmentation / kGiB, 1e-9);
        QCOMPARE(b.memory.per_stage_peak_gib[0], a.memory.per_stage_peak_gib[0]);
    }
    // The whole of Megatron's loss against the GEMM's output: 52 bytes a
    // logit, over ten times the GEMM's own 2-byte BF16 write.
    QVERIFY(meg.fwd_s + meg.bwd_s > te.fwd_s + te.bwd_s + 40 * T * v / bw);
}

void TestFidelity::latentAttentionLayer() {
    // MLA (DeepSeek-V2 §2.1): against the same layer with multi-head
    // attention, the projections are the latents' down and up projections,
    // the attention core runs q·k over qk + rope dims and p·v over v dims,
    // and SP all-gathers the latents, not the hidden states.
    Model gqa = smallLlama();
    gqa.kv_heads = gqa.heads;
    Model mla = gqa;
    mla.mla = MlaConfig{256, 128, 64, 32, 96};
    const double h = double(gqa.hidden), a = gqa.heads, dh = double(gqa.headDim());
    const double ql = 256, kvl = 128, qk = 64 + 32, v = 96;
    // Weights: q down + its norm, q up, kv down (latent and the shared RoPE
    // key) + its norm, kv up (each head's key and value), output.
    const double mlaParams =
        h * ql + ql + ql * a * qk + h * (kvl + 32) + kvl + kvl * a * (64 + v) + a * v * h;
    QVERIFY_CLOSE(mla.attentionParams(), mlaParams, 1e-15);
    QVERIFY_CLOSE(gqa.attentionParams(), 4 * h * a * dh, 1e-15);
    // Tensor parallel: the down projections and their norms on every rank.
    QVERIFY_CLOSE(mla.attentionParams(2),
                  h * ql + ql + h * (kvl + 32) + kvl +
                      (mlaParams - h * ql - ql - h * (kvl + 32) - kvl) / 2,
                  1e-15);

    const Cluster c = clusterOf("one", {building("B1", 64)});
    const auto layer = [&](const Model& m, int tp, bool sp) {
        Plan p = makePlan(tp, 1, 8, 64);
        p.sequence_parallel = sp;
        return layerCost(layerContext(c, c.buildings[0], m, p));
    };
    const LayerCost g1 = layer(gqa, 1, true), m1 = layer(mla, 1, true);
    QVERIFY_CLOSE(m1.params - g1.params, mlaParams - gqa.attentionParams(), 1e-12);
    // Model FLOPs per token forward: 2 per projection weight (norms aside),
    // and the causal core: (qk + v) per head and key against (2 dh) before.
    const double T = 2048, linearMla = mlaParams - ql - kvl;
    const double coreMla = 0.5 * 2.0 * T * a * (qk + v), coreGqa = 0.5 * 2.0 * T * a * 2.0 * dh;
    QVERIFY_CLOSE(m1.model_flops_fwd - g1.model_flops_fwd,
                  T * (2.0 * (linearMla - 4 * h * a * dh) + coreMla - coreGqa), 1e-9);
    // TP 2 with SP: each rank runs the down projections on its half of the
    // sequence: the model work halves. Without SP each runs them whole.
    const LayerCost sp2 = layer(mla, 2, true), full2 = layer(mla, 2, false);
    QVERIFY_CLOSE(2 * sp2.model_flops_fwd, m1.model_flops_fwd, 1e-9);
    QVERIFY_CLOSE(full2.model_flops_fwd, sp2.model_flops_fwd, 1e-9);
    const double down = 2.0 * T * h * (ql + kvl + 32);
    QVERIFY_CLOSE(full2.hw_flops_total - sp2.hw_flops_total, 3.0 * down / 2, 1e-9);
    // SP gathers the latents (ql, and kvl with the RoPE key) before the up
    // projections: less TP traffic than gathering the hidden states; the
    // MLP's collectives are untouched. Nor is there an input to gather
    // again in the backward, where GQA's QKV gathers the hidden states once
    // more (half of them leave each of the 2 ranks).
    const LayerCost gqa2 = layer(gqa, 2, true);
    QVERIFY(sp2.tp_bytes < gqa2.tp_bytes);
    QVERIFY_CLOSE(gqa2.tp_bytes - sp2.tp_bytes,
                  2.0 * 0.5 * 2.0 * (2 - 1) / 2.0 * T * (h - (ql + kvl + 32)) * 2.0 +
                      0.5 * T * h * 2.0,
                  1e-12);
    // Saved activations (SP off, tp 1): Q and K of qk + rope dims per head,
    // V and the core's output of v dims, and the two latents, in BF16.
    Plan p = makePlan(1, 1, 8, 64);
    const double perTokenDelta =
        2.0 * (a * qk + a * qk - 2 * h) + 2.0 * (a * v - h) + 2.0 * (a * v - h) + 2.0 * (ql + kvl);
    QVERIFY_CLOSE(activationBytesPerLayer(mla, p, false, false) -
                      activationBytesPerLayer(gqa, p, false, false),
                  T * perTokenDelta, 1e-12);
}

void TestFidelity::epAllToAllBesideAnotherMicrobatch() {
    // Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm):
    // without a pipeline every forward but the first runs beside the
    // previous microbatch's backward, so 3 of 4 microbatches pair their
    // layers' parts: forward attention with the backward combine, the
    // forward dispatch with the backward experts, the forward experts with
    // the backward dispatch, the forward combine with the backward
    // attention, each compute slowed while the all-to-all holds its SMs;
    // what shows is the pair's time beyond its compute.
    Model m = smallLlama();
    m.moe = moeOf(64, 8, 1024);
    const Cluster c = clusterOf("one", {building("B1", 64)});
    Plan p = makePlan(1, 1, 16, 64); // 4 microbatches per replica
    p.micro_batch_sequences = 1;
    p.parallelism.ep = 16; // over two hosts: the NIC's share bounds it
    const Evaluation alone = evaluated(c, m, p);
    p.ep_overlap = true;
    const Evaluation beside = evaluated(c, m, p);
    LayerContext ctx = layerContext(c, c.buildings[0], m, p);
    ctx.moe_layer = true;
    const LayerCost L = layerCost(ctx);
    const double compute = L.fwd_s + L.bwd_input_s + L.bwd_weight_s;
    const double ep = L.ep_fwd_s + L.ep_bwd_s;
    QVERIFY(L.moe_mlp_fwd_s > 0 && L.moe_mlp_fwd_s < L.fwd_s);
    QVERIFY(L.moe_mlp_bwd_s > 0 && L.moe_mlp_bwd_s < L.bwd_input_s + L.bwd_weight_s);
    const double share = ncclOverlapShare(h100().sms);
    const double half = 0.5 * L.ep_fwd_s; // dispatch or combine, either way
    const double pair =
        overlappedWithCompute(L.fwd_s - L.moe_mlp_fwd_s, half, share) +
        overlappedWithCompute(L.moe_mlp_bwd_s, half, share) +
        overlappedWithCompute(L.moe_mlp_fwd_s, half, share) +
        overlappedWithCompute(L.bwd_input_s + L.bwd_weight_s - L.moe_mlp_bwd_s, half, share);
    const double shown = pair - compute;
    // Pairing the parts hides less than the whole layer's compute would.
    QVERIFY(shown > overlappedWithCompute(compute, ep, share) - compute);
    QVERIFY(shown < ep);
    const double steady = 1.0 - 1.0 / 4.0;
    QVERIFY_CLOSE(beside.breakdown.ep_exposed_s,
                  alone.breakdown.ep_exposed_s * (1.0 - steady + steady * shown / ep), 1e-9);
    QVERIFY(beside.step_time_s < alone.step_time_s);
    // Under a pipeline without interleaving Megatron-Core refuses it: no
    // effect; with full recompute too.
    Plan piped = makePlan(1, 2, 8, 64);
    piped.parallelism.ep = 8;
    piped.ep_overlap = true;
    Plan plain = piped;
    plain.ep_overlap = false;
    QCOMPARE(evaluated(c, m, piped).step_time_s, evaluated(c, m, plain).step_time_s);
    p.recompute = Recompute::Full;
    Plan noOverlap = p;
    noOverlap.ep_overlap = false;
    QCOMPARE(evaluated(c, m, p).step_time_s, evaluated(c, m, noOverlap).step_time_s);
}

void TestFidelity::flexDispatcherHoldsItsSms() {
    // Beside another microbatch's compute the exchange's kernels hold their
    // SMs: NCCL's all-to-all one CTA a channel, the flex dispatcher the SMs
    // it was given (Megatron --moe-flex-dispatcher-num-sms), else its
    // backend's default: DeepEP 20 (Megatron's), HybridEP 24 inside one
    // NVLink domain and 8 across them (DeepEP hybrid-ep config.cuh).
    Model m = smallLlama();
    m.moe = moeOf(64, 8, 1024);
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const double sms = h100().sms;
    const auto layer = [&](EpDispatcher d, int ep, int given) {
        Plan p = makePlan(1, 1, 16, 64);
        p.micro_batch_sequences = 1;
        p.parallelism.ep = ep;
        p.ep_dispatcher = d;
        p.ep_dispatcher_sms = given;
        LayerContext ctx = layerContext(c, c.buildings[0], m, p);
        ctx.moe_layer = true;
        return layerCost(ctx);
    };
    const double nccl = ncclOverlapShare(h100().sms);
    QCOMPARE(layer(EpDispatcher::AllToAll, 16, 0).ep_sm_share, nccl);
    QCOMPARE(layer(EpDispatcher::AllToAll, 16, 32).ep_sm_share, nccl); // NCCL picks its own
    QCOMPARE(layer(EpDispatcher::Flex, 16, 0).ep_sm_share, 20 / sms);
    QCOMPARE(layer(EpDispatcher::HybridEp, 16, 0).ep_sm_share, 8 / sms); // two hosts
    QCOMPARE(layer(EpDispatcher::HybridEp, 8, 0).ep_sm_share, 24 / sms); // one host
    QCOMPARE(layer(EpDispatcher::HybridEp, 16, 32).ep_sm_share, 32 / sms);
    QCOMPARE(layer(EpDispatcher::Flex, 16, 32).ep_sm_share, 32 / sms);
    // Only the compute beside the exchange pays: the pairs of the combined
    // 1F1B at the dispatcher's share, and nothing without the overlap.
    Plan p = makePlan(1, 1, 16, 64); // 4 microbatches per replica
    p.micro_batch_sequences = 1;
    p.parallelism.ep = 16;
    p.ep_dispatcher = EpDispatcher::HybridEp;
    p.ep_dispatcher_sms = 32;
    const Evaluation alone = evaluated(c, m, p);
    Plan fewer = p;
    fewer.ep_dispatcher_sms = 8;
    QCOMPARE(evaluated(c, m, fewer).step_time_s, alone.step_time_s);
    p.ep_overlap = true;
    fewer.ep_overlap = true;
    const Evaluation beside = evaluated(c, m, p);
    const LayerCost L = layer(EpDispatcher::HybridEp, 16, 32);
    const double share = 32 / sms;
    // HybridEP's forward also gathers the routing maps: the forward's
    // exchange is longer than the backward's. Each pass's computations run
    // beside the other pass's dispatch and combine.
    const double bwd = L.bwd_input_s + L.bwd_weight_s;
    const double fwdPair =
        overlappedWithCompute(L.fwd_s - L.moe_mlp_fwd_s, 0.5 * L.ep_bwd_s, share) +
        overlappedWithCompute(L.moe_mlp_fwd_s, 0.5 * L.ep_bwd_s, share);
    const double bwdPair = overlappedWithCompute(L.moe_mlp_bwd_s, 0.5 * L.ep_fwd_s, share) +
                           overlappedWithCompute(bwd - L.moe_mlp_bwd_s, 0.5 * L.ep_fwd_s, share);
    const double shown = (fwdPair - L.fwd_s) + (bwdPair - bwd);
    const double ep = L.ep_fwd_s + L.ep_bwd_s;
    const double steady = 1.0 - 1.0 / 4.0;
    QVERIFY_CLOSE(beside.breakdown.ep_exposed_s,
                  alone.breakdown.ep_exposed_s * (1.0 - steady + steady * shown / ep), 1e-9);
    // More SMs for the exchange, slower compute beside it.
    QVERIFY(beside.step_time_s > evaluated(c, m, fewer).step_time_s);
    fewer.ep_dispatcher_sms = 0; // HybridEP across hosts: 8
    QCOMPARE(evaluated(c, m, fewer).step_time_s, evaluated(c, m,
                                                           [&] {
                                                               Plan e = fewer;
                                                               e.ep_dispatcher_sms = 8;
                                                               return e;
                                                           }())
                                                     .step_time_s);
}

void TestFidelity::eagerOpsStreamEachTensor() {
    // torchtitan's Llama block in PyTorch eager mode (no torch.compile): each
    // op reads its inputs and writes its output. Against the fused kernels, a
    // token of the forward streams 64 more bytes per hidden element in the
    // two RMSNorms (36 B each against 4), 24 B per Q and K element in RoPE
    // (20 B) and repeat_kv (4 B: GQA 16/4), 4 B per Q element in the output
    // transpose and 4 B more per FFN element in silu(w1 x) * w3 x; 25 more
    // kernels. The backward runs PyTorch's autograd formulas: each RMSNorm
    // 92 B per element (the fused norm's backward 8), each residual's
    // gradient sum 6 (12), the sums of the gradients of wq, wk, wv and of
    // w1, w3 over the gathered input (3 x 6 B per hidden element, none
    // fused), repeat_kv's head sum (its forward's 4 B per Q and K element),
    // RoPE's three ops again (20 B), nothing for the output transpose
    // (its gradient is a view), SwiGLU's 18 B per FFN element (12 fused);
    // as many kernels more as the old rule of twice the forward's.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const GpuModel& gpu = h100();
    const double hbm = gpu.hbm_tbps * 1e12 * 0.8;
    for (int tp : {1, 2}) {
        Plan p = makePlan(tp, 1, 8 / tp, 64);
        p.micro_batch_sequences = 4; // 8192 tokens
        const LayerCost fused = layerCost(layerContext(c, c.buildings[0], smallLlama(), p));
        p.elementwise = Elementwise::Eager;
        const LayerCost eager = layerCost(layerContext(c, c.buildings[0], smallLlama(), p));
        // Norms are split over TP by sequence parallelism, Q, K and the FFN
        // by heads and columns.
        const double h = 2048.0 / tp, q = 2048.0 / tp, k = 512.0 / tp, f = 8192.0 / tp;
        const double bytes = 8192 * (64 * h + 24 * (q + k) + 4 * q + 4 * f);
        const double bwdBytes = 8192 * ((2 * 92 - 2 * 8) * h + (2 * 6 - 2 * 12) * h + 4 * (q + k) +
                                        3 * 6 * 2048.0 + 20 * (q + k) + (18 - 12) * f);
        QVERIFY_CLOSE(eager.fwd_s - fused.fwd_s, bytes / hbm + 25 * 3e-6, 1e-9);
        QVERIFY_CLOSE(eager.bwd_input_s - fused.bwd_input_s, bwdBytes / hbm + 22 * 3e-6, 1e-9);
        QVERIFY_CLOSE(eager.bwd_weight_s - fused.bwd_weight_s, 22 * 3e-6, 1e-9);
        // The same FLOPs either way: eager only moves more bytes.
        QCOMPARE(eager.model_flops_total, fused.model_flops_total);
    }
}

void TestFidelity::unfusedRopeRunsRotateHalf() {
    // Beside fused kernels, rope_fusion false runs the rotate-half form in
    // eager ops (Megatron --no-rope-fusion, Hugging Face models): 20 B per
    // element of Q and K in 5 kernels on each, forward and backward alike;
    // under eager or compiled elementwise ops (torchtitan's complex form,
    // unfused already) it changes nothing. MLA: the RoPE parts only.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const double hbm = h100().hbm_tbps * 1e12 * 0.8;
    Model m = smallLlama();
    Plan p = makePlan(1, 1, 8, 64);
    p.micro_batch_sequences = 4; // 8192 tokens
    const auto cost = [&](const Model& mm, const Plan& pp) {
        return layerCost(layerContext(c, c.buildings[0], mm, pp));
    };
    const LayerCost fused = cost(m, p);
    Plan unfused = p;
    unfused.rope_fusion = false;
    const LayerCost rotate = cost(m, unfused);
    const double rope = 8192 * 20 * (2048.0 + 512.0) / hbm;
    QVERIFY_CLOSE(rotate.fwd_s - fused.fwd_s, rope + 10 * 3e-6, 1e-9);
    QVERIFY_CLOSE(rotate.bwd_input_s - fused.bwd_input_s, rope + 5 * 3e-6, 1e-9);
    QVERIFY_CLOSE(rotate.bwd_weight_s - fused.bwd_weight_s, 5 * 3e-6, 1e-9);
    QCOMPARE(rotate.model_flops_total, fused.model_flops_total);
    QVERIFY(!(layerPlanKey(unfused) == layerPlanKey(p)));
    for (const Elementwise e : {Elementwise::Eager, Elementwise::Compiled}) {
        Plan a = p, b = unfused;
        a.elementwise = b.elementwise = e;
        QCOMPARE(cost(m, b).fwd_s, cost(m, a).fwd_s);
    }
    // MLA: each head's RoPE part of the query and the shared RoPE key.
    Model mla = smallLlama();
    mla.mla = MlaConfig{};
    mla.mla->q_lora_rank = 512;
    mla.mla->kv_lora_rank = 256;
    mla.mla->qk_head_dim = 128;
    mla.mla->rope_head_dim = 64;
    mla.mla->v_head_dim = 128;
    const double ropeMla = 8192 * 20 * (mla.heads * 64.0 + 64.0) / hbm;
    QVERIFY_CLOSE(cost(mla, unfused).fwd_s - cost(mla, p).fwd_s, ropeMla + 10 * 3e-6, 1e-9);
}

void TestFidelity::compileLeavesComplexRopeEager() {
    // torch.compile over torchtitan's block fuses its norms, residuals and
    // activation as Transformer Engine does, but not apply_rotary_emb, which
    // works on complex tensors: Inductor has no code generation for them
    // and runs the eager ATen kernels, 20 B per Q and K element in 3 kernels
    // each, forward and backward alike. The FP8 casts of torchao's linears
    // are compiled too (fused, not eager).
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const double hbm = h100().hbm_tbps * 1e12 * 0.8;
    for (const bool fp8 : {false, true}) {
        Model m = smallLlama();
        Plan p = makePlan(1, 1, 8, 64);
        p.micro_batch_sequences = 4; // 8192 tokens
        if (fp8) {
            m.dtype = DType::FP8;
            p.fp8_linear = Fp8Linear::Torchao;
        }
        const LayerCost fused = layerCost(layerContext(c, c.buildings[0], m, p));
        p.elementwise = Elementwise::Compiled;
        const LayerCost compiled = layerCost(layerContext(c, c.buildings[0], m, p));
        p.elementwise = Elementwise::Eager;
        const LayerCost eager = layerCost(layerContext(c, c.buildings[0], m, p));
        const double rope = 8192 * 20 * (2048.0 + 512.0) / hbm;
        QVERIFY_CLOSE(compiled.fwd_s - fused.fwd_s, rope + 6 * 3e-6, 1e-9);
        QVERIFY_CLOSE(compiled.bwd_input_s - fused.bwd_input_s, rope + 3 * 3e-6, 1e-9);
        QVERIFY_CLOSE(compiled.bwd_weight_s - fused.bwd_weight_s, 3 * 3e-6, 1e-9);
        QVERIFY(compiled.fwd_s < eager.fwd_s);
        QCOMPARE(compiled.model_flops_total, fused.model_flops_total);
        // The layer-cost memo key tells the three apart.
        Plan f = p;
        f.elementwise = Elementwise::Fused;
        p.elementwise = Elementwise::Compiled;
        QVERIFY(!(layerPlanKey(p) == layerPlanKey(f)));
    }
}

void TestFidelity::delayedScalingCastsInOnePass() {
    // Current scaling reads each GEMM input twice (amax, cast: 2 + 2 B) and
    // writes the FP8 copy and its transpose (1 + 1 B) in two kernels;
    // Transformer Engine's delayed scaling casts with the scale from the
    // amax history and reduces the amax inside the cast kernel: 2 B fewer
    // per element and one kernel fewer per input. Forward: activation
    // m x k and weight k x n of each linear GEMM; backward: its output
    // gradient m x n. The QKV and FC1 inputs are the norms' outputs, which
    // the norm kernel writes in FP8 under delayed scaling: no cast, only
    // the transpose (read 1 B, write 1 B, one kernel; in the forward
    // without sequence parallelism).
    const Fp8Layer f;
    const double hbm = h100().hbm_tbps * 1e12 * 0.8, T = Fp8Layer::tokens;
    Plan p = Fp8Layer::plan();
    const LayerCost current = f.cost(p);
    p.fp8_recipe = Fp8Recipe::Delayed;
    const LayerCost delayed = f.cost(p);
    double fwd = 0, bwd = 0;
    for (const Fp8Layer::Linear& g : Fp8Layer::linears) {
        fwd += ((g.norm ? 6.0 - 2.0 : 2.0) * T * g.k + 2.0 * g.k * g.n) / hbm + 2 * 3e-6;
        bwd += 2.0 * T * g.n / hbm + 3e-6;
    }
    QVERIFY_CLOSE(current.fwd_s - delayed.fwd_s, fwd, 1e-9);
    QVERIFY_CLOSE(current.bwd_input_s - delayed.bwd_input_s, bwd, 1e-9);
    QCOMPARE(delayed.bwd_weight_s, current.bwd_weight_s);
    // A BF16 model casts nothing: the recipe changes nothing.
    Plan b = Fp8Layer::plan();
    const LayerCost bf16 =
        layerCost(layerContext(f.cluster, f.cluster.buildings[0], smallLlama(), b));
    b.fp8_recipe = Fp8Recipe::Delayed;
    QCOMPARE(layerCost(layerContext(f.cluster, f.cluster.buildings[0], smallLlama(), b)), bf16);
    // The layer-cost memo key tells the recipes apart.
    QVERIFY(!(layerPlanKey(p) == layerPlanKey(makePlan(1, 1, 8, 64))));
}

void TestFidelity::transformerEngineCastsBeforeTheGather() {
    // TP 2 with sequence parallelism. Transformer Engine casts what it
    // all-gathers on the GPU's shard, row-wise (current scaling: amax 2 B,
    // cast 2 + 1 B in two kernels; delayed: the cast only, or nothing for
    // a norm's output, which the norm writes in FP8), gathers FP8 and
    // transposes the gathered copy in the backward (1 + 1 B, one kernel,
    // with wgrad). The gathered tensors are the QKV and FC1 inputs in the
    // forward and the projection's and FC2's output gradients in the
    // backward; the projection's and FC2's inputs and the QKV and FC1
    // gradients are not gathered and are cast whole (6 / 4 B with their
    // transposes).
    const Fp8Layer f;
    const double hbm = h100().hbm_tbps * 1e12 * 0.8, k0 = 3e-6, T = Fp8Layer::tokens;
    Plan p = makePlan(2, 1, 8, 32);
    p.micro_batch_sequences = 4; // 8192 tokens, gathered
    p.sequence_parallel = true;
    const LayerCost current = f.cost(p);
    p.fp8_recipe = Fp8Recipe::Delayed;
    const LayerCost delayed = f.cost(p);
    double fwd = 0, dgrad = 0;
    for (const Fp8Layer::Linear& g : Fp8Layer::linears) {
        // At TP 2 the column-parallel linears (the norm readers) split n,
        // the row-parallel ones k.
        const double n = g.norm ? g.n / 2 : g.n, k = g.norm ? g.k : g.k / 2;
        const double x = T * k, w = k * n, dy = T * n;
        fwd += 2.0 * w / hbm + k0; // weights: 6 B in 2 kernels against 4 B in 1
        // Gathered inputs: the shard's row-wise cast (5 B, 2 kernels) against
        // none; the rest 6 B against 4 B.
        fwd += g.norm ? 5.0 * x / 2 / hbm + 2 * k0 : 2.0 * x / hbm + k0;
        // Gathered gradients: the shard's cast, 5 B against 3 B; the rest
        // 6 B against 4 B.
        dgrad += g.norm ? 2.0 * dy / hbm + k0 : 2.0 * dy / 2 / hbm + k0;
    }
    QVERIFY_CLOSE(current.fwd_s - delayed.fwd_s, fwd, 1e-9);
    QVERIFY_CLOSE(current.bwd_input_s - delayed.bwd_input_s, dgrad, 1e-9);
    // The transposes are the same under both recipes.
    QVERIFY_CLOSE(current.bwd_weight_s, delayed.bwd_weight_s, 1e-12);
    // The transposes against torchao, which gathers nothing in FP8 here and
    // casts its inputs again for wgrad (6 B, 2 kernels) where TE transposes
    // the gathered FP8 copies (2 B, 1 kernel): the QKV and FC1 inputs and
    // the projection's and FC2's gradients.
    Plan a = p;
    a.fp8_recipe = Fp8Recipe::Current;
    a.fp8_linear = Fp8Linear::Torchao;
    const LayerCost ao = f.cost(a);
    double wgrad = 0;
    for (const Fp8Layer::Linear& g : Fp8Layer::linears) {
        const double n = g.norm ? g.n / 2 : g.n, k = g.norm ? g.k : g.k / 2;
        const double x = T * k, dy = T * n;
        wgrad += 6.0 * x / hbm + 2 * k0 - (g.norm ? 2.0 * x / hbm + k0 : 2.0 * dy / hbm + k0);
    }
    QVERIFY_CLOSE(ao.bwd_weight_s - current.bwd_weight_s, wgrad, 1e-9);

    // The all-gathers carry 1 byte an element, the reduce-scatters 2: three
    // quarters of a BF16 layer's TP bytes, and less time. torchao's TP
    // gathers are modelled in BF16. (Without the backward re-gather, which
    // also runs in FP8: sequenceParallelGathersAgainInBackward.)
    p.sequence_parallel_regather = false;
    a.sequence_parallel_regather = false;
    const LayerCost delayedOnce = f.cost(p), aoOnce = f.cost(a);
    Plan b = makePlan(2, 1, 8, 32);
    b.micro_batch_sequences = 4;
    b.sequence_parallel = true;
    b.sequence_parallel_regather = false;
    const LayerCost bf16 =
        layerCost(layerContext(f.cluster, f.cluster.buildings[0], smallLlama(), b));
    QVERIFY(bf16.tp_bytes > 0);
    QVERIFY_CLOSE(delayedOnce.tp_bytes, 0.75 * bf16.tp_bytes, 1e-12);
    QVERIFY(delayedOnce.tp_fwd_s < bf16.tp_fwd_s && delayedOnce.tp_bwd_s < bf16.tp_bwd_s);
    QCOMPARE(aoOnce.tp_bytes, bf16.tp_bytes);
    // Without sequence parallelism nothing is gathered: all-reduces in BF16.
    p.sequence_parallel = false;
    b.sequence_parallel = false;
    QCOMPARE(f.cost(p).tp_bytes,
             layerCost(layerContext(f.cluster, f.cluster.buildings[0], smallLlama(), b)).tp_bytes);
}

void TestFidelity::sequenceParallelGathersAgainInBackward() {
    // TP 2 with SP, BF16. Megatron-Core and Transformer Engine keep the QKV
    // and FC1 inputs as the GPU's sequence shard and all-gather them again
    // in the backward for wgrad, on NCCL's stream beside each one's dgrad
    // GEMM (its CTAs slowing the GEMM meanwhile); DTensor (torchtitan) keeps
    // the gathered inputs instead: no second gather, more memory.
    const Fp8Layer f;
    const Model m = smallLlama();
    Plan p = makePlan(2, 1, 8, 32);
    p.micro_batch_sequences = 4;
    p.sequence_parallel = true;
    const LayerContext ctx = layerContext(f.cluster, f.cluster.buildings[0], m, p);
    const LayerCost again = layerCost(ctx);
    Plan kept = p;
    kept.sequence_parallel_regather = false;
    const LayerCost once = layerCost(layerContext(f.cluster, f.cluster.buildings[0], m, kept));
    const double T = Fp8Layer::tokens, h = 2048;
    const GpuModel& gpu = h100();
    const double gather = ringAllGatherTime(
        T * h * 2.0, 2, ctx.scale_up_gbps * 1e9 / 8 * ctx.scale_up_efficiency, ctx.scale_up_step_s);
    double extra = 0;
    for (const double k : {3072.0 / 2, 16384.0 / 2}) { // QKV's and FC1's outputs on a rank
        const double dgrad = gemmTime(gpu, gemmRate(gpu, GemmPrecision::Bf16), T, h, k);
        extra += overlappedWithCompute(dgrad, gather, ncclOverlapShare(gpu.sms)) - dgrad;
    }
    QVERIFY(extra > 0);
    QVERIFY_CLOSE(again.tp_bwd_s - once.tp_bwd_s, extra, 1e-9);
    QCOMPARE(again.tp_fwd_s, once.tp_fwd_s);
    QVERIFY_CLOSE(again.tp_bytes - once.tp_bytes, 2 * 0.5 * T * h * 2.0, 1e-12);
    // Memory: the kept inputs are whole on each rank: half of them more.
    QVERIFY_CLOSE(activationBytesPerLayer(m, kept, false, false) -
                      activationBytesPerLayer(m, p, false, false),
                  2 * 0.5 * T * h * 2.0, 1e-12);
    // Without SP nothing is gathered, either way.
    p.sequence_parallel = kept.sequence_parallel = false;
    QCOMPARE(layerCost(layerContext(f.cluster, f.cluster.buildings[0], m, p)),
             layerCost(layerContext(f.cluster, f.cluster.buildings[0], m, kept)));
    // The layer-cost memo tells the two apart.
    QVERIFY(!(layerPlanKey(p) == layerPlanKey(kept)));
}

void TestFidelity::dropoutCostsItsMasksAndPasses() {
    // smallLlama, BF16, tp 1, 4 x 2048 tokens. Hidden dropout fused into the
    // bias-dropout-add writes a 1-byte mask on each of the two residual
    // branches and the backward reads it; eager it is a kernel of its own
    // (5 bytes each way). Attention dropout slows a fused kernel by
    // attention_dropout_factor and is a 5-byte pass each way over the
    // scores of the unfused one, which also keeps its mask and output.
    const Fp8Layer f;
    const Model m = smallLlama();
    const KernelConstants kc;
    const GpuModel& gpu = h100();
    const double T = Fp8Layer::tokens, h = 2048, s = 2048, heads = 16;
    const double hbm = gpu.hbm_tbps * 1e12 * kc.hbm_efficiency;
    auto cost = [&](const Plan& p) {
        return layerCost(layerContext(f.cluster, f.cluster.buildings[0], m, p));
    };
    Plan p = Fp8Layer::plan();
    const LayerCost none = cost(p);

    Plan hidden = p;
    hidden.hidden_dropout = 0.1;
    const LayerCost masked = cost(hidden);
    const double masks = 2.0 * T * h; // bytes, one per value and branch
    QVERIFY_CLOSE(masked.fwd_s - none.fwd_s, masks / hbm, 1e-9);
    QVERIFY_CLOSE(masked.bwd_input_s - none.bwd_input_s, masks / hbm, 1e-9);
    QCOMPARE(masked.bwd_weight_s, none.bwd_weight_s);
    QVERIFY_CLOSE(activationBytesPerLayer(m, hidden, false, false) -
                      activationBytesPerLayer(m, p, false, false),
                  masks, 1e-12);
    // The embedding's output: a dropout kernel of its own on the first
    // stage, 5 bytes a value each way, its mask kept.
    const EdgeCost emb0 = embeddingCost(layerContext(f.cluster, f.cluster.buildings[0], m, p));
    const EdgeCost emb1 = embeddingCost(layerContext(f.cluster, f.cluster.buildings[0], m, hidden));
    QVERIFY_CLOSE(emb1.fwd_s - emb0.fwd_s, 5 * T * h / hbm + kc.kernel_overhead_s, 1e-9);
    QVERIFY_CLOSE(emb1.bwd_s - emb0.bwd_s, 5 * T * h / hbm + kc.kernel_overhead_s, 1e-9);
    QVERIFY_CLOSE(emb1.activation_bytes - emb0.activation_bytes, T * h, 1e-12);
    // Fully recomputed layers keep only their input.
    Plan full = p, fullHidden = hidden;
    full.recompute = fullHidden.recompute = Recompute::Full;
    QCOMPARE(activationBytesPerLayer(m, fullHidden, false, false),
             activationBytesPerLayer(m, full, false, false));
    // Eager: a kernel of its own on each branch.
    Plan eager = p, eagerHidden = hidden;
    eager.elementwise = eagerHidden.elementwise = Elementwise::Eager;
    const LayerCost e0 = cost(eager), e1 = cost(eagerHidden);
    QVERIFY_CLOSE(e1.fwd_s - e0.fwd_s, 5 * masks / hbm + 2 * kc.kernel_overhead_s, 1e-9);
    QVERIFY_CLOSE(e1.bwd_input_s - e0.bwd_input_s, 5 * masks / hbm + kc.kernel_overhead_s, 1e-9);

    // Attention dropout in the fused kernel: its forward and backward times
    // grow by the same factor, so their growths stand as the times do.
    Plan attn = p;
    attn.attention_dropout = 0.1;
    const LayerCost slowed = cost(attn);
    const AttentionRates r = attentionRates(gpu, p.attention_kernel, s, 1, kc);
    const double dFwd = slowed.fwd_s - none.fwd_s, dBwd = slowed.bwd_input_s - none.bwd_input_s;
    QVERIFY(dFwd > 0);
    QVERIFY_CLOSE(dBwd / dFwd, 2.5 * r.fwd / r.bwd, 1e-9);
    QVERIFY_CLOSE(kc.attention_dropout_factor, 0.614 / 0.594, 1e-12);
    QCOMPARE(activationBytesPerLayer(m, attn, false, false),
             activationBytesPerLayer(m, p, false, false)); // no mask kept
    // Unfused: a 5-byte pass over the b x a x s x s scores each way, and 3
    // bytes a score more kept (the mask and the dropout's output).
    Plan unfused = p, unfusedAttn = attn;
    unfused.flash_attention = unfusedAttn.flash_attention = false;
    const LayerCost u0 = cost(unfused), u1 = cost(unfusedAttn);
    const double scores = 4 * heads * s * s;
    QVERIFY_CLOSE(u1.fwd_s - u0.fwd_s, 5 * scores / hbm, 1e-9);
    QVERIFY_CLOSE(u1.bwd_input_s - u0.bwd_input_s, 5 * scores / hbm, 1e-9);
    QVERIFY_CLOSE(activationBytesPerLayer(m, unfusedAttn, false, false) -
                      activationBytesPerLayer(m, unfused, false, false),
                  T * 3 * heads * s, 1e-12);
    // The layer-cost memo tells them apart.
    QVERIFY(!(layerPlanKey(p) == layerPlanKey(hidden)));
    QVERIFY(!(layerPlanKey(p) == layerPlanKey(attn)));
}

// The CP exchange tests' case: smallLlama (16 heads of 128, 4 KV heads),
// BF16, cp 4 on 8,192-token sequences on one host of a 64-GPU building:
// 2,048 tokens a rank.
struct CpCase {
    Cluster cluster = clusterOf("one", {building("B1", 64)});
    Model model = smallLlama();
    KernelConstants kc;
    GpuModel gpu = h100();
    double hbm = gpu.hbm_tbps * 1e12 * kc.hbm_efficiency;
    static constexpr double cp = 4, T = 2048;
    static Plan plan() {
        Plan p = makePlan(1, 1, 2, 64);
        p.parallelism.cp = int(cp);
        p.sequence_length = 8192;
        return p;
    }
    LayerContext context(const Plan& p) const {
        return layerContext(cluster, cluster.buildings[0], model, p);
    }
    LayerCost cost(const Plan& p) const { return layerCost(context(p)); }
    // The JSON paths the documents' check names for `p` on this cluster and
    // model.
    std::vector<std::string> problemPaths(const Plan& p) const {
        std::vector<std::string> at;
        for (const Diagnostic& d : validateScenario({cluster, model, p}))
            at.push_back(d.path);
        return at;
    }
};

// Transformer Engine's ring's own work around its attention calls on `c`
// ring ranks (compute.cpp teCpExchange, from AttnFuncWithCPAndKVP2P): a
// call a step, the softmax statistics merged after each step and the
// outputs after the last (4 + 4.5 (c - 1) B an output element), backward
// dQ (4 + 4.5 (c - 1) B) and dK, dV (4 + 5.5 (c - 1) B) copied and added a
// step; held, the steps' outputs. Eq, Eo, Ekv: Q's, the output's and K's
// plus V's elements on the rank.
struct TeRingWork {
    double fwdBytes, fwdKernels, bwdBytes, bwdKernels, held;
};
TeRingWork teRingWork(double c, double Eq, double Eo, double Ekv) {
    return {(4 + 4.5 * (c - 1)) * Eo, (c - 1) + c + (c - 1),
            (4 + 4.5 * (c - 1)) * Eq + (4 + 5.5 * (c - 1)) * Ekv, (c - 1) + 3 + 4 * (c - 1),
            c * Eo * 2};
}

void TestFidelity::torchCpRingMergesAndWaits() {
    // PyTorch's context_parallel (torch/distributed/tensor/experimental/
    // _attention.py) against Transformer Engine's ring, same attention
    // kernels.
    const CpCase k;
    const KernelConstants& kc = k.kc;
    const double hbm = k.hbm, cp = CpCase::cp, T = CpCase::T;
    Plan te = CpCase::plan();
    te.elementwise = Elementwise::Eager; // torchtitan's block: repeat_kv before SDPA
    Plan torch = te;
    torch.cp_ring = CpRing::TorchAllGather;
    auto cost = [&](const Plan& p) { return k.cost(p); };
    const LayerCost a = cost(te), b = cost(torch);
    // The output's elements, and K's and V's as SDPA receives them: repeated
    // from 4 to the 16 query heads.
    const double E = T * 16 * 128, Ekv = T * 2 * 16 * 128;
    // Forward: K, V made contiguous, then concatenated before each of the 3
    // sends (2 + 2 bytes an element each time); each step's output cast to
    // fp32 (6), the 3 later ones merged (out - block_out 12, x sigmoid 8,
    // out - that 12), the result cast back (6).
    const double fwdBytes = 4 * cp * Ekv + E * (6 * cp + 32 * (cp - 1) + 6);
    const double fwdKernels =
        (cp - 1) /* more SDPA calls */ + 2 + (cp - 1) + 2 * cp + 7 * (cp - 1) + 2;
    // Against Transformer Engine's ring, which has work of its own (K and
    // V at their width there).
    const TeRingWork ring = teRingWork(cp, E, E, T * 2 * 4 * 128);
    QVERIFY_CLOSE(b.fwd_s - a.fwd_s,
                  (fwdBytes - ring.fwdBytes) / hbm +
                      (fwdKernels - ring.fwdKernels) * kc.kernel_overhead_s,
                  1e-9);
    // Backward: fp32 accumulators zeroed, the copies again, each step's dK,
    // dV and dQ added (2 + 4 + 4) and the fp32 dK, dV concatenated to send
    // (4 + 4), the results cast back.
    const double bwdBytes = 4 * (E + Ekv) + 4 * cp * Ekv + cp * (18 * Ekv + 10 * E) + 6 * (E + Ekv);
    const double bwdKernels = (cp - 1) + 3 + 2 + (cp - 1) + 4 * cp + 2;
    QVERIFY_CLOSE(b.bwd_input_s - a.bwd_input_s,
                  (bwdBytes - ring.bwdBytes) / hbm +
                      (bwdKernels - ring.bwdKernels) * kc.kernel_overhead_s,
                  1e-9);
    QCOMPARE(b.bwd_weight_s, a.bwd_weight_s);
    // The host issues each of those kernels too.
    QVERIFY_CLOSE(b.host_fwd_s - a.host_fwd_s, (fwdKernels - ring.fwdKernels) * kc.host_op_fwd_s,
                  1e-12);
    QVERIFY_CLOSE(b.host_bwd_s - a.host_bwd_s, (bwdKernels - ring.bwdKernels) * kc.host_op_bwd_s,
                  1e-12);
    // The fp32 gradients travel too: the ring sends K, V forward (3 steps),
    // again in the backward, and dK, dV in fp32 at every step (4 B each).
    const double kv = 2 * Ekv;
    QVERIFY_CLOSE(b.cp_bytes, (cp - 1) * kv * 2 + 2 * cp * kv, 1e-12);
    // The last dK, dV is waited for after the attention: never hidden.
    const LayerContext ctx = k.context(torch);
    const double bps = gbpsToBytesPerS(ctx.scale_up_gbps) * ctx.scale_up_efficiency;
    QVERIFY(b.cp_bwd_s >= 2 * kv / bps);
    QVERIFY(a.cp_bwd_s < 2 * kv / bps);
    // Held while the attention runs: all gathered K, V chunks and the fp32
    // accumulators with the gradients in flight.
    QVERIFY_CLOSE(b.transient_bytes - a.transient_bytes,
                  cp * kv + std::max(8 * E, 4 * E + 12 * Ekv) - ring.held, 1e-12);
    // Passing K, V rank to rank holds two chunks, not all of them.
    Plan a2a = torch;
    a2a.cp_ring = CpRing::TorchAllToAll;
    QVERIFY_CLOSE(b.transient_bytes - cost(a2a).transient_bytes, (cp - 2) * kv, 1e-12);
    // Without torchtitan's repeat (fused elementwise), K and V at their own
    // width: a quarter of the ring's bytes.
    Plan fused = torch;
    fused.elementwise = Elementwise::Fused;
    QVERIFY_CLOSE(cost(fused).cp_bytes, b.cp_bytes / 4, 1e-12);
    // Nothing changes without context parallelism, and the memo tells the
    // rings apart.
    Plan one = te, oneTorch = torch;
    one.parallelism.cp = oneTorch.parallelism.cp = 1;
    one.sequence_length = oneTorch.sequence_length = 2048;
    QCOMPARE(cost(oneTorch).fwd_s, cost(one).fwd_s);
    QVERIFY(!(layerPlanKey(te) == layerPlanKey(torch)));
}

void TestFidelity::teCpAllGatherAndAllToAll() {
    // Transformer Engine's all-gather and all-to-all CP (context_parallel.py
    // AttnFuncWithCPAndKVAllGather, AttnFuncWithCPAndQKVOA2A) against its
    // ring.
    const CpCase k;
    const KernelConstants& kc = k.kc;
    const GpuModel& gpu = k.gpu;
    const double hbm = k.hbm, cp = CpCase::cp, T = CpCase::T;
    Plan ring = CpCase::plan();
    Plan gather = ring, a2a = ring;
    gather.cp_ring = CpRing::TeAllGather;
    a2a.cp_ring = CpRing::TeA2a;
    auto cost = [&](const Plan& p) { return k.cost(p); };
    const LayerCost r = cost(ring), g = cost(gather), a = cost(a2a);
    const LayerContext ctx = k.context(ring);
    const double bps = gbpsToBytesPerS(ctx.scale_up_gbps) * ctx.scale_up_efficiency;
    const double step = ctx.scale_up_step_s;
    // K's and V's elements on a rank (4 KV heads, no repeat), and the cp
    // chunks gathered.
    const double Ekv = T * 2 * 4 * 128, all = cp * Ekv, kvBytes = 2 * Ekv;
    // The ring's own work, which the two others do not have.
    const double q = T * 16 * 128, kvOne = T * 4 * 128, out = q;
    const TeRingWork w = teRingWork(cp, q, out, Ekv);
    const double ringFwd = w.fwdBytes / hbm + w.fwdKernels * kc.kernel_overhead_s;
    const double ringBwd = w.bwdBytes / hbm + w.bwdKernels * kc.kernel_overhead_s;
    // All-gather: the gathered K, V reordered (4 B an element) and a second
    // attention call forward; backward gathered and reordered again, dK, dV
    // zeroed (2), added (6) and reordered (4), 11 more kernels.
    QVERIFY_CLOSE(g.fwd_s - r.fwd_s, 4 * all / hbm + 3 * kc.kernel_overhead_s - ringFwd, 1e-9);
    QVERIFY_CLOSE(g.bwd_input_s - r.bwd_input_s,
                  16 * all / hbm + 11 * kc.kernel_overhead_s - ringBwd, 1e-9);
    QVERIFY_CLOSE(g.host_fwd_s - r.host_fwd_s, (3 - w.fwdKernels) * kc.host_op_fwd_s, 1e-12);
    QVERIFY_CLOSE(g.host_bwd_s - r.host_bwd_s, (11 - w.bwdKernels) * kc.host_op_bwd_s, 1e-12);
    // K and V gathered one after the other, nothing hidden; backward again,
    // and dK, dV reduce-scattered: twice the forward's.
    const double gatherOne = (cp - 1) / cp * (cp * kvBytes / 2) / bps + (cp - 1) * step;
    QVERIFY_CLOSE(g.cp_fwd_s, 2 * gatherOne, 1e-9);
    QVERIFY_CLOSE(g.cp_bwd_s, 4 * gatherOne, 1e-9);
    QVERIFY(g.cp_fwd_s > r.cp_fwd_s); // the ring hides its chunks under the attention
    QCOMPARE(g.cp_bytes, r.cp_bytes); // the same K, V and dK, dV cross the ranks
    QVERIFY_CLOSE(g.transient_bytes - r.transient_bytes, 2 * all * 2 - w.held, 1e-12);
    // All-to-all: Q, K, V and the output, 1/cp of each to every other rank
    // (three on the host's NVLink), one after another; backward the same.
    double pass = 0;
    for (const double e : {q, kvOne, kvOne, out})
        pass += (cp - 1) * (e * 2 / cp / bps + step);
    QVERIFY_CLOSE(a.cp_fwd_s, pass, 1e-9);
    QVERIFY_CLOSE(a.cp_bwd_s, pass, 1e-9);
    QVERIFY_CLOSE(a.cp_bytes, (cp - 1) / cp * (q + 2 * kvOne + out) * 2 * 2, 1e-9);
    // Its attention runs over the whole sequence on a quarter of the heads:
    // one causal call at 8,192 keys, not the ring's steps at 2,048; around
    // it two copies of each tensor (8 B an element), 8 kernels.
    const AttentionRates ringRate = attentionRates(gpu, ring.attention_kernel, T, int(cp), kc);
    const AttentionRates whole = attentionRates(gpu, ring.attention_kernel, cp * T, 1, kc);
    QVERIFY(whole.fwd != ringRate.fwd);
    const double peak = gemmRate(gpu, GemmPrecision::Bf16, kc).peak_flops;
    const double model = 0.5 * 2 * 16 * T * cp * T * (128 + 128); // causal, this rank's share
    const double copies = 8 * (q + 2 * kvOne + out) / hbm + 8 * kc.kernel_overhead_s;
    QVERIFY_CLOSE(a.fwd_s - r.fwd_s,
                  model / (peak * whole.fwd) - model / (peak * ringRate.fwd) + copies - ringFwd,
                  1e-9);
    QVERIFY_CLOSE(a.bwd_input_s - r.bwd_input_s,
                  2.5 * model / (peak * whole.bwd) - 2.5 * model / (peak * ringRate.bwd) + copies -
                      ringBwd,
                  1e-9);
    QVERIFY_CLOSE(a.transient_bytes - r.transient_bytes, 2 * (q + 2 * kvOne + out) * 2 - w.held,
                  1e-12);
    // The memo tells the three apart; without CP they are the same layer.
    QVERIFY(!(layerPlanKey(ring) == layerPlanKey(gather)));
    QVERIFY(!(layerPlanKey(ring) == layerPlanKey(a2a)));
    Plan one = ring, oneA2a = a2a;
    one.parallelism.cp = oneA2a.parallelism.cp = 1;
    one.sequence_length = oneA2a.sequence_length = 2048;
    QCOMPARE(cost(oneA2a).fwd_s, cost(one).fwd_s);
    // The all-to-all splits each TP rank's heads over the cp ranks: 4 KV
    // heads take cp 4, not cp 8, nor cp 4 at tp 2 (2 KV heads a rank).
    const auto problems = [&](int tp, int cpDegree) {
        Plan p = a2a;
        p.parallelism.tp = tp;
        p.parallelism.cp = cpDegree;
        p.parallelism.dp = 8 / (tp * cpDegree) > 0 ? 8 / (tp * cpDegree) : 1;
        p.global_batch_sequences = 8;
        return k.problemPaths(p);
    };
    QVERIFY(problems(1, 4).empty());
    const auto eight = problems(1, 8), tp2 = problems(2, 4);
    QVERIFY(std::find(eight.begin(), eight.end(), "/cp_ring") != eight.end());
    QVERIFY(std::find(tp2.begin(), tp2.end(), "/cp_ring") != tp2.end());
}

void TestFidelity::teHierarchicalCpRingsOverGroups() {
    // Megatron's a2a+p2p (Transformer Engine's AttnFuncWithCPAndKVP2P with
    // cp_group [a2a group, p2p group]): cp 4 as an all-to-all over 2
    // neighbouring ranks and a ring over the 2 groups of them.
    const CpCase k;
    const KernelConstants& kc = k.kc;
    const GpuModel& gpu = k.gpu;
    const double hbm = k.hbm, cp = CpCase::cp, T = CpCase::T, A = 2, P = cp / A;
    Plan ring = CpCase::plan();
    Plan hier = ring;
    hier.cp_a2a_size = int(A);
    const LayerCost r = k.cost(ring), h = k.cost(hier);
    const LayerContext ctx = k.context(ring);
    const double bps = gbpsToBytesPerS(ctx.scale_up_gbps) * ctx.scale_up_efficiency;
    const double step = ctx.scale_up_step_s;
    // Each rank then holds 2 ranks' tokens on half of the heads: the ring's
    // steps attend over 4,096 keys, 2 steps of half the attention each.
    const AttentionRates ringRate = attentionRates(gpu, ring.attention_kernel, T, int(cp), kc);
    const AttentionRates hierRate = attentionRates(gpu, ring.attention_kernel, A * T, int(P), kc);
    QVERIFY(hierRate.fwd != ringRate.fwd);
    const double peak = gemmRate(gpu, GemmPrecision::Bf16, kc).peak_flops;
    const double model = 0.5 * 2 * 16 * T * cp * T * (128 + 128); // causal, this rank's share
    const double q = T * 16 * 128, kvOne = T * 4 * 128, out = q;
    // Around the ring the all-to-all's two copies of each tensor, 8 kernels;
    // the ring's own work over 2 ranks, not 4.
    const double copies = 8 * (q + 2 * kvOne + out) / hbm + 8 * kc.kernel_overhead_s;
    const TeRingWork w2 = teRingWork(P, q, out, 2 * kvOne), w4 = teRingWork(cp, q, out, 2 * kvOne);
    QVERIFY_CLOSE(h.fwd_s - r.fwd_s,
                  model / (peak * hierRate.fwd) - model / (peak * ringRate.fwd) + copies +
                      (w2.fwdBytes - w4.fwdBytes) / hbm +
                      (w2.fwdKernels - w4.fwdKernels) * kc.kernel_overhead_s,
                  1e-9);
    QVERIFY_CLOSE(h.bwd_input_s - r.bwd_input_s,
                  2.5 * model / (peak * hierRate.bwd) - 2.5 * model / (peak * ringRate.bwd) +
                      copies + (w2.bwdBytes - w4.bwdBytes) / hbm +
                      (w2.bwdKernels - w4.bwdKernels) * kc.kernel_overhead_s,
                  1e-9);
    QVERIFY_CLOSE(h.host_fwd_s - r.host_fwd_s,
                  (8 + w2.fwdKernels - w4.fwdKernels) * kc.host_op_fwd_s, 1e-12);
    // The exchange: Q, K, V and the output all-to-all'd over the pair (one
    // peer, on NVLink), nothing hidden, and the ring's one step, its chunk
    // (the same K and V bytes) beside half of the attention.
    double pass = 0;
    for (const double e : {q, kvOne, kvOne, out})
        pass += (A - 1) * (e * 2 / A / bps + step);
    const double kvBytes = 2 * kvOne * 2;
    const double one = kvBytes / bps + step;
    const double fwdKernel = model / (peak * hierRate.fwd) + kc.kernel_overhead_s;
    const double bwdKernel = 2.5 * model / (peak * hierRate.bwd) + kc.kernel_overhead_s;
    QVERIFY_CLOSE(h.cp_fwd_s, pass + (P - 1) * std::max(0.0, one - fwdKernel / P), 1e-9);
    QVERIFY_CLOSE(h.cp_bwd_s, pass + 2 * std::max(0.0, one - bwdKernel / P), 1e-9);
    QVERIFY(h.cp_fwd_s > r.cp_fwd_s); // the all-to-all waits, the ring's chunks hide
    QVERIFY_CLOSE(h.cp_bytes, (P - 1) * kvBytes * 3 + (A - 1) / A * (q + 2 * kvOne + out) * 2 * 2,
                  1e-9);
    QVERIFY_CLOSE(h.transient_bytes - r.transient_bytes,
                  2 * (q + 2 * kvOne + out) * 2 + w2.held - w4.held, 1e-12);
    QVERIFY(!(layerPlanKey(ring) == layerPlanKey(hier)));
    // The plan check: a proper divisor of cp, with TE's ring, and each TP
    // rank's heads and KV heads split over the group (tp 4 leaves one KV
    // head a rank).
    const auto problems = [&](int tp, int a2a, CpRing exchange) {
        Plan p = hier;
        p.parallelism.tp = tp;
        p.parallelism.dp = 2;
        p.global_batch_sequences = 8;
        p.cp_a2a_size = a2a;
        p.cp_ring = exchange;
        return k.problemPaths(p);
    };
    QVERIFY(problems(1, 2, CpRing::TeP2p).empty());
    QVERIFY(problems(2, 2, CpRing::TeP2p).empty());
    for (const auto& at : {problems(1, 4, CpRing::TeP2p), problems(1, 3, CpRing::TeP2p),
                           problems(1, 2, CpRing::TeAllGather), problems(4, 2, CpRing::TeP2p)})
        QVERIFY(std::find(at.begin(), at.end(), "/cp_a2a_size") != at.end());
}

void TestFidelity::teRingHidesEachChunkUnderOneStep() {
    // smallLlama at tp 8, cp 4: the ring crosses hosts (the NIC). Transformer
    // Engine's ring (AttnFuncWithCPAndKVP2P) posts each step's exchange, runs
    // that step's attention (a quarter of it) and waits: a transfer longer
    // than one step shows by the difference, every step, even where all the
    // transfers together are shorter than the whole attention.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const Model m = smallLlama();
    const KernelConstants kc;
    const GpuModel& gpu = h100();
    const double cp = 4, T = 2048;
    Plan p = makePlan(8, 1, 2, 64);
    p.parallelism.cp = int(cp);
    p.sequence_length = 8192;
    // The host would pace this small layer and its gaps hold some of the
    // ring's exposure (exchangesRunInHostGaps): CUDA graphs keep it out.
    p.cuda_graphs = true;
    const LayerContext ctx = layerContext(c, c.buildings[0], m, p);
    const LayerCost l = layerCost(ctx);
    const double bps = gbpsToBytesPerS(ctx.scale_out_gbps) * ctx.scale_out_efficiency;
    const double step = ctx.scale_out_step_s;
    // One KV head a rank (4 KV heads over 8 TP ranks), 2 of the 16 heads.
    const double kvBytes = T * 2 * 128 * 2;
    const AttentionRates r = attentionRates(gpu, p.attention_kernel, T, int(cp), kc);
    const double peak = gemmRate(gpu, GemmPrecision::Bf16, kc).peak_flops;
    const double model = 0.5 * 2 * 2 * T * cp * T * (128 + 128);
    const double fwdStep = (model / (peak * r.fwd) + kc.kernel_overhead_s) / cp;
    const double bwdStep = (2.5 * model / (peak * r.bwd) + kc.kernel_overhead_s) / cp;
    const double one = kvBytes / bps + step, two = 2 * kvBytes / bps + step;
    QVERIFY(one > fwdStep); // a chunk outlasts a step
    QVERIFY_CLOSE(l.cp_fwd_s, (cp - 1) * (one - fwdStep), 1e-9);
    // Backward: K, V beside the first step, K, V and the accumulated dK, dV
    // beside the two middle ones, the finished dK, dV beside the last.
    QVERIFY_CLOSE(l.cp_bwd_s,
                  2 * std::max(0.0, one - bwdStep) + (cp - 2) * std::max(0.0, two - bwdStep), 1e-9);
}

// DP 8 on one 64-GPU host of H100s, smallLlama, 8 microbatches a step
// (makePlan(1, 1, 8, 64)), and the HBM rate passes over the weights run at.
struct OneHostPasses {
    Cluster cluster = clusterOf("one", {building("B1", 64)});
    Model model = smallLlama();
    double hbm = h100().hbm_tbps * 1e12 * KernelConstants{}.hbm_efficiency;
    double micro = 8;
};

void TestFidelity::gradientAccumulationOutsideTheGemms() {
    // smallLlama, BF16, DP 8 on one host, 8 microbatches a step. With
    // Megatron's fusion the wgrad GEMMs add into the gradients; without it
    // each microbatch's BF16 gradients are added to the accumulated ones in
    // a pass of their own: read both, write the sum (4 + 2 + 4 bytes a
    // parameter with fp32 gradients, 2 + 2 + 2 with BF16), every microbatch.
    const OneHostPasses host;
    const Cluster& c = host.cluster;
    const Model& m = host.model;
    const double hbm = host.hbm, micro = host.micro;
    Plan fused = makePlan(1, 1, 8, 64);
    Plan apart = fused;
    apart.grad_accumulation_fusion = false;
    for (const int g : {4, 2}) {
        fused.grad_reduce_bytes = apart.grad_reduce_bytes = g;
        const Evaluation a = evaluated(c, m, fused), b = evaluated(c, m, apart);
        const double P = paramsPerGpu(a);
        QVERIFY(P > 1e8);
        QVERIFY_CLOSE(b.breakdown.compute_s - a.breakdown.compute_s,
                      micro * P * (2.0 * g + 2.0) / hbm, 1e-6);
    }
    // FSDP2 under PP reduces once a step: its first microbatch's gradients,
    // cast to fp32 (2 + 4 bytes), become the accumulator, the other 7 are
    // added (10 bytes); reducing in BF16 the first is kept as it is (0) and
    // the others added (6). The two differences stand as 76 / 42.
    Plan fsdp = makePlan(1, 2, 4, 32);
    fsdp.zero_stage = 3;
    fsdp.fsdp_reshard_after_forward = FsdpReshard::Default;
    QVERIFY(!fsdp.fsdpPerMicrobatch());
    auto grows = [&](int g) {
        Plan on = fsdp, off = fsdp;
        on.grad_reduce_bytes = off.grad_reduce_bytes = g;
        off.grad_accumulation_fusion = false;
        return evaluated(c, m, off).breakdown.compute_s - evaluated(c, m, on).breakdown.compute_s;
    };
    const double fp32 = grows(4), bf16 = grows(2);
    QVERIFY(bf16 > 0);
    QVERIFY_CLOSE(fp32 / bf16, (6.0 + 7 * 10.0) / (7 * 6.0), 1e-6);
    // One microbatch: reduced as it is, nothing added.
    Plan one = fsdp, oneApart = fsdp;
    one.global_batch_sequences = oneApart.global_batch_sequences = 4;
    oneApart.grad_accumulation_fusion = false;
    QCOMPARE(evaluated(c, m, oneApart).breakdown.compute_s,
             evaluated(c, m, one).breakdown.compute_s);
    // FSDP reducing every microbatch (no PP) accumulates shards only.
    Plan perMb = makePlan(1, 1, 8, 64), perMbApart;
    perMb.zero_stage = 3;
    perMbApart = perMb;
    perMbApart.grad_accumulation_fusion = false;
    QVERIFY(perMb.fsdpPerMicrobatch());
    QCOMPARE(evaluated(c, m, perMbApart).breakdown.compute_s,
             evaluated(c, m, perMb).breakdown.compute_s);
}

void TestFidelity::fsdpCopiesStreamTheWeights() {
    // smallLlama, BF16, FSDP over 8 GPUs of one host, 8 microbatches a step.
    // FSDP2 copies each gather's output to the parameters (read and write, 2
    // bytes each) and each microbatch's BF16 gradients into the
    // reduce-scatter's input in the reduction's precision (2 + g), on the
    // compute stream: without PP a microbatch gathers twice and reduces once,
    // 4 + 4 + 2 + g bytes a parameter. Views of flat buffers (FSDP1,
    // Megatron-FSDP) copy nothing, nor does ZeRO-1.
    const OneHostPasses host;
    const Cluster& c = host.cluster;
    const Model& m = host.model;
    const double hbm = host.hbm, micro = host.micro;
    Plan copies = makePlan(1, 1, 8, 64);
    const double P = paramsPerGpu(evaluated(c, m, copies)); // ZeRO-1: unsharded weights
    QVERIFY(P > 1e8);
    copies.zero_stage = 3;
    QVERIFY(copies.fsdp_copies && copies.fsdpPerMicrobatch());
    Plan views = copies;
    views.fsdp_copies = false;
    for (const int g : {4, 2}) {
        copies.grad_reduce_bytes = views.grad_reduce_bytes = g;
        QVERIFY_CLOSE(evaluated(c, m, copies).breakdown.compute_s -
                          evaluated(c, m, views).breakdown.compute_s,
                      micro * P * (4.0 + 4.0 + 2.0 + g) / hbm, 1e-6);
    }
    Plan zero1 = makePlan(1, 1, 8, 64), zero1Views = zero1;
    zero1Views.fsdp_copies = false;
    QCOMPARE(evaluated(c, m, zero1).step_time_s, evaluated(c, m, zero1Views).step_time_s);
    // Under PP (not resharding) once a step: one gather's copy-out (4) and
    // the accumulated gradients' copy (read g, write g: 8 with fp32, 2 + 2
    // with BF16 gradients): 12 / 8 on any stage.
    Plan pp = makePlan(1, 2, 4, 32);
    pp.zero_stage = 3;
    QVERIFY(!pp.fsdpPerMicrobatch());
    auto grows = [&](int g) {
        Plan on = pp, off = pp;
        on.grad_reduce_bytes = off.grad_reduce_bytes = g;
        off.fsdp_copies = false;
        return evaluated(c, m, on).breakdown.compute_s - evaluated(c, m, off).breakdown.compute_s;
    };
    const double fp32 = grows(4), bf16 = grows(2);
    QVERIFY(bf16 > 0);
    QVERIFY_CLOSE(fp32 / bf16, 12.0 / 8.0, 1e-6);
}

void TestFidelity::transformerEngineSavesFp8Inputs() {
    // Transformer Engine's FP8 linears save their inputs for the backward as
    // FP8: the QKV and FC1 inputs (the norms' outputs) and the FC2 input at
    // 1 byte instead of 2; the projection keeps an FP8 copy beside the
    // attention output the attention kernel keeps (1 byte more per Q
    // element). torchao's Float8Linear saves the BF16 input, as BF16 does.
    // Per token at tp 1 (h 2048, q 2048, f 8192): 2h + f - q = 10240 bytes
    // fewer. TE also keeps each linear weight's FP8 copy and transpose
    // (2 bytes per parameter) through the step.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    Model m = smallLlama();
    m.dtype = DType::FP8;
    Plan p = makePlan(1, 1, 8, 64);
    p.micro_batch_sequences = 4; // 8192 tokens
    p.fp8_linear = Fp8Linear::Torchao;
    const LayerCost ao = layerCost(layerContext(c, c.buildings[0], m, p));
    p.fp8_linear = Fp8Linear::TransformerEngine;
    const LayerCost te = layerCost(layerContext(c, c.buildings[0], m, p));
    const LayerCost bf16 = layerCost(layerContext(c, c.buildings[0], smallLlama(), p));
    QCOMPARE(ao.activation_bytes, bf16.activation_bytes);
    QVERIFY_CLOSE(ao.activation_bytes - te.activation_bytes, 8192.0 * 10240, 1e-6);
    QCOMPARE(ao.fp8_copy_params, 0.0);
    QCOMPARE(bf16.fp8_copy_params, 0.0);
    QCOMPARE(te.fp8_copy_params, te.params - 2 * 2048.0); // all but the norms
    // Full recompute re-materialises a layer with FP8 inputs.
    p.recompute = Recompute::Full;
    QCOMPARE(layerCost(layerContext(c, c.buildings[0], m, p)).transient_bytes, te.activation_bytes);
    // In memory: the copies sit beside the bf16 weights, 2 bytes each.
    const Cluster c8 = clusterOf("one", {building("B1", 8)});
    Plan q = makePlan(1, 1, 1, 8);
    q.global_batch_sequences = 8;
    const Evaluation withCopies = evaluated(c8, m, q);
    q.fp8_linear = Fp8Linear::Torchao;
    const Evaluation without = evaluated(c8, m, q);
    const double copyParams = 8 * te.fp8_copy_params;
    QVERIFY_CLOSE((withCopies.memory.weights_gib - without.memory.weights_gib) * kGiB,
                  2.0 * copyParams, 1e-3);
    QVERIFY(!(layerPlanKey(q) == layerPlanKey(makePlan(1, 1, 1, 8))));
}

void TestFidelity::torchaoCastsAgainInBackward() {
    // torchao's Float8Linear keeps the BF16 input and weight and casts them
    // again in the backward: the weight for dgrad, the input (and the
    // output gradient along its other dimension) for wgrad. Transformer
    // Engine reuses its FP8 copies. Compiled (plan elementwise fused) each
    // cast is the tensorwise recipe's 6 B per element in two kernels; eager,
    // each op of the cast is its own kernel (33 B, 11 kernels), and every
    // one of torchtitan's separate linears casts its input: wq, wk and wv
    // the attention norm's output three times, w1 and w3 the MLP norm's
    // twice.
    const Fp8Layer f;
    const double hbm = h100().hbm_tbps * 1e12 * 0.8, k0 = 3e-6, T = Fp8Layer::tokens;
    Plan p = Fp8Layer::plan();
    const LayerCost te = f.cost(p);
    p.fp8_linear = Fp8Linear::Torchao;
    const LayerCost ao = f.cost(p);
    p.elementwise = Elementwise::Eager;
    const LayerCost aoEager = f.cost(p);
    p.fp8_linear = Fp8Linear::TransformerEngine;
    const LayerCost teEager = f.cost(p);
    double dgrad = 0, wgrad = 0;
    double eagerFwd = 0, eagerDgrad = 0, eagerWgrad = 0;
    for (const Fp8Layer::Linear& g : Fp8Layer::linears) {
        const double x = T * g.k, w = g.k * g.n, dy = T * g.n;
        dgrad += 6.0 * w / hbm + 2 * k0;
        wgrad += 6.0 * x / hbm + 2 * k0;
        // Eager against compiled: every cast at 33 B and 11 kernels, the
        // shared inputs cast by each reader, the gradient cast twice.
        eagerFwd += (33.0 * (g.readers * x + w) - 6.0 * (x + w)) / hbm +
                    ((g.readers + 1) * 11 - 2 * 2) * k0;
        eagerDgrad += (33.0 - 6.0) * (dy + w) / hbm + 2 * (11 - 2) * k0;
        eagerWgrad +=
            (33.0 * (g.readers * x + dy) - 6.0 * x) / hbm + ((g.readers + 1) * 11 - 2) * k0;
    }
    QVERIFY_CLOSE(ao.fwd_s, te.fwd_s, 1e-12);
    QVERIFY_CLOSE(ao.bwd_input_s - te.bwd_input_s, dgrad, 1e-9);
    QVERIFY_CLOSE(ao.bwd_weight_s - te.bwd_weight_s, wgrad, 1e-9);
    QVERIFY_CLOSE(aoEager.fwd_s - ao.fwd_s - (teEager.fwd_s - te.fwd_s), eagerFwd, 1e-9);
    QVERIFY_CLOSE(aoEager.bwd_input_s - ao.bwd_input_s - (teEager.bwd_input_s - te.bwd_input_s),
                  eagerDgrad, 1e-9);
    QVERIFY_CLOSE(aoEager.bwd_weight_s - ao.bwd_weight_s - (teEager.bwd_weight_s - te.bwd_weight_s),
                  eagerWgrad, 1e-9);
    // Transformer Engine's casts are its own fused kernels, eager or not:
    // eager changes its FP8 layer as it changes a BF16 one.
    Plan b = Fp8Layer::plan();
    const LayerCost bf16 =
        layerCost(layerContext(f.cluster, f.cluster.buildings[0], smallLlama(), b));
    b.elementwise = Elementwise::Eager;
    const LayerCost bf16Eager =
        layerCost(layerContext(f.cluster, f.cluster.buildings[0], smallLlama(), b));
    QVERIFY_CLOSE(teEager.fwd_s - te.fwd_s, bf16Eager.fwd_s - bf16.fwd_s, 1e-9);
    QVERIFY_CLOSE(teEager.bwd_weight_s - te.bwd_weight_s,
                  bf16Eager.bwd_weight_s - bf16.bwd_weight_s, 1e-9);
}

void TestFidelity::transformerEngineCastsWeightsOncePerStep() {
    // Megatron-Core marks a step's first microbatch to Transformer Engine
    // (TELinear.forward's is_first_microbatch): TE casts each weight to FP8
    // (with its transpose) then, and the later microbatches and every
    // recomputed forward read the cached copy. torchao's Float8Linear casts
    // every time (the step charges them all); BF16 casts nothing.
    const Fp8Layer f;
    const double hbm = h100().hbm_tbps * 1e12 * 0.8, k0 = 3e-6;
    Plan p = Fp8Layer::plan();
    double weights = 0;
    for (const Fp8Layer::Linear& g : Fp8Layer::linears)
        weights += 6.0 * g.k * g.n / hbm + 2 * k0;
    const LayerCost te = f.cost(p);
    QVERIFY_CLOSE(te.fwd_weight_cast_s, weights, 1e-9);
    QCOMPARE(te.recompute_weight_cast_s, 0.0);
    p.recompute = Recompute::Full;
    QVERIFY_CLOSE(f.cost(p).recompute_weight_cast_s, weights, 1e-9);
    p.recompute = Recompute::None;
    QCOMPARE(te.bwd_weight_cast_s, 0.0);
    // torchao casts the weight in the forward and again for dgrad.
    p.fp8_linear = Fp8Linear::Torchao;
    QVERIFY_CLOSE(f.cost(p).fwd_weight_cast_s, weights, 1e-9);
    QVERIFY_CLOSE(f.cost(p).bwd_weight_cast_s, weights, 1e-9);
    QCOMPARE(
        layerCost(layerContext(f.cluster, f.cluster.buildings[0], smallLlama(), Fp8Layer::plan()))
            .fwd_weight_cast_s,
        0.0);

    // One replica of 8 layers, 8 microbatches of 4 sequences: keeping the
    // weights (ZeRO-1) saves 7 of the 8 forward weight casts a layer against
    // gathering them for every microbatch (ZeRO-3, resharded after forward;
    // nothing to gather on one replica, so only the casts differ).
    const int layers = 8;
    Plan kept = makePlan(1, 1, 1, 32);
    kept.micro_batch_sequences = 4;
    QCOMPARE(kept.microbatches(), std::int64_t(8));
    Plan regathered = kept;
    regathered.zero_stage = 3;
    regathered.fsdp_reshard_after_forward = FsdpReshard::Always;
    const Evaluation once = evaluated(f.cluster, f.model, kept);
    const Evaluation every = evaluated(f.cluster, f.model, regathered);
    QVERIFY_CLOSE(every.step_time_s - once.step_time_s, layers * 7.0 * te.fwd_weight_cast_s, 1e-9);
    // Full recompute re-runs the forward from the cache as well.
    kept.recompute = regathered.recompute = Recompute::Full;
    QVERIFY_CLOSE(evaluated(f.cluster, f.model, regathered).step_time_s -
                      evaluated(f.cluster, f.model, kept).step_time_s,
                  layers * (7.0 + 8.0) * te.fwd_weight_cast_s, 1e-9);
}

void TestFidelity::fp8ParamGatherSendsOneBytePerWeight() {
    // Megatron-Core --fp8-param-gather keeps the FP8 linears' weights in FP8
    // (Transformer Engine's fp8_model_init) and its distributed optimizer
    // gathers them at 1 byte; torchtitan's enable_fsdp_float8_all_gather has
    // FSDP2 cast each shard and gather FP8. TP 4 x DP 32 over two buildings,
    // DP across them, ZeRO-1, 4 microbatches.
    const Cluster c = twoBuildings();
    Model m = smallLlama();
    m.dtype = DType::FP8;
    Plan off = makePlan(4, 1, 32, 128);
    off.collectives[Dim::DP] = CollectiveAlgo::Ring;
    Plan on = off;
    on.fp8_param_gather = true;
    Plan bf16Grads = off;
    bf16Grads.grad_reduce_bytes = 2;
    const Evaluation a = evaluated(c, m, off), b = evaluated(c, m, on),
                     g = evaluated(c, m, bf16Grads);
    // The FP8 linears' weights per GPU: QKV (2048 x (512 + 2 x 128)), the
    // projection (2048 x 512) and the SwiGLU MLP (3 x 2048 x 2048) of 8
    // layers; every other weight (norms, embedding, output layer) stays BF16.
    const double fp8 = 8 * (2048.0 * 768 + 2048.0 * 512 + 3 * 2048.0 * 2048);
    const double P = a.stage_params[0];
    // The reduce-scatter's 2 bytes less a parameter against the gather's 1
    // byte less an FP8 weight: the same ring, the same share crossing.
    QVERIFY2(closeRelative((a.cross_building_bytes - b.cross_building_bytes) /
                               (a.cross_building_bytes - g.cross_building_bytes),
                           fp8 / (2.0 * P), 1e-9),
             (std::to_string(a.cross_building_bytes - b.cross_building_bytes) + " vs " +
              std::to_string(a.cross_building_bytes - g.cross_building_bytes))
                 .c_str());
    // Kept in FP8: 1 byte a weight and a 1-byte transpose where BF16 weights
    // had a 2-byte FP8 copy besides; no weight cast in the step.
    QVERIFY_CLOSE((a.memory.weights_gib - b.memory.weights_gib) * kGiB, 2.0 * fp8, 1e-9);
    QVERIFY(b.step_time_s < a.step_time_s);
    // Nothing to gather in FP8 on a BF16 model.
    const auto problems = validateScenario({c, smallLlama(), on});
    QCOMPARE(problems.size(), std::size_t(1));
    QVERIFY2(problems[0].str().find("/fp8_param_gather") != std::string::npos,
             problems[0].str().c_str());

    // torchao under FSDP, resharded after every forward: each microbatch
    // gathers twice and casts the GPU's shard each time instead of the
    // whole weight in the forward and again for dgrad.
    Plan fsdp = makePlan(4, 1, 32, 128);
    fsdp.zero_stage = 3;
    fsdp.fsdp_reshard_after_forward = FsdpReshard::Always;
    fsdp.fp8_linear = Fp8Linear::Torchao;
    fsdp.collectives[Dim::DP] = CollectiveAlgo::Ring;
    Plan fsdpOn = fsdp;
    fsdpOn.fp8_param_gather = true;
    const Evaluation t = evaluated(c, m, fsdp), u = evaluated(c, m, fsdpOn);
    // A microbatch gathers P twice (2 bytes each, the FP8 weights 1) and
    // reduce-scatters P at 4: (8P - 2 fp8) against 8P, on the same rings.
    QVERIFY2(
        closeRelative((t.cross_building_bytes - u.cross_building_bytes) / t.cross_building_bytes,
                      fp8 / (4.0 * P), 1e-9),
        (std::to_string(t.cross_building_bytes) + " vs " + std::to_string(u.cross_building_bytes))
            .c_str());
    QVERIFY(u.step_time_s < t.step_time_s);
    // The two gathered layers hold FP8 weights; the shards stay BF16.
    QVERIFY_CLOSE((t.memory.weights_gib - u.memory.weights_gib) * kGiB, 2.0 * fp8 / 8, 1e-9);
}

// Megatron-Core's selective recompute checkpoints the core-attention module
// whatever its kernel (attention.py _checkpointed_attention_forward): with
// FlashAttention the backward runs the attention forward kernel once more.
// The activations stay (FlashAttention keeps no score matrix to free). Under
// CP the ring exchange of K and V runs again with it.
void TestFidelity::selectiveRecomputeRerunsTheAttentionCore() {
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const Model m = smallLlama();
    Plan none = makePlan(1, 1, 8, 64);
    none.micro_batch_sequences = 4;
    Plan sel = none;
    sel.recompute = Recompute::Selective;
    const auto cost = [&](const Plan& p) {
        return layerCost(layerContext(c, c.buildings[0], m, p));
    };
    const LayerCost a = cost(none), b = cost(sel);
    // The attention forward: 4 sequences x 2048 x 2048 x 128 x 16 heads x 2
    // (QK^T, PV) x 2 FLOPs, halved by the causal mask, at the cuDNN
    // curve's rate, at an H100's sustained clock in a training run.
    const double s = 2048, flops = 0.5 * 4.0 * 4 * 16 * s * s * 128;
    const AttentionRates r = attentionRates(h100(), AttentionKernel::Auto, s, 1, KernelConstants{});
    const double attnFwd =
        flops / (h100().peak_tflops_bf16 * 1e12 * (1800.0 / 1972.0) * r.fwd) + 3e-6;
    QCOMPARE(a.recompute_s, 0.0);
    QVERIFY_CLOSE(b.recompute_s, attnFwd, 1e-9);
    QVERIFY_CLOSE(b.hw_flops_total - a.hw_flops_total, flops, 1e-9);
    QCOMPARE(b.activation_bytes, a.activation_bytes);
    // Without core_attn in the modules the attention is not re-run.
    sel.recompute_modules = 0;
    QCOMPARE(cost(sel).recompute_s, 0.0);
    // Under CP the exposed part of the K/V ring runs again, as under full
    // recompute (which counted its bytes and not its time): tp 4 x cp 4
    // spans two hosts, and a chunk over the NIC outlasts a ring step.
    Plan cp = none;
    cp.parallelism.tp = 4;
    cp.parallelism.cp = 4;
    cp.parallelism.dp = 4;
    cp.sequence_length = 8192;
    Plan cpSel = cp;
    cpSel.recompute = Recompute::Selective;
    const LayerCost d = cost(cpSel);
    QVERIFY(d.cp_fwd_s > 0);
    QCOMPARE(d.cp_recompute_s, d.cp_fwd_s);
    QCOMPARE(cost(cp).cp_recompute_s, 0.0);
    cpSel.recompute_modules = recomputeBit(RecomputeModule::Mlp); // the attention stays
    QCOMPARE(cost(cpSel).cp_recompute_s, 0.0);
    Plan cpFull = cp;
    cpFull.recompute = Recompute::Full;
    QCOMPARE(cost(cpFull).cp_recompute_s, cost(cpFull).cp_fwd_s);
}

// Megatron-Core's other selective modules (--recompute-modules), on one
// layer of smallLlama (h 2048, SwiGLU ffn 8192) and of an MoE variant (8
// experts of 1024, top 2, one shared expert), BF16, tp 1, 4 x 2048 tokens:
// the bytes each frees per layer and microbatch, and the FLOPs it runs
// again.
void TestFidelity::recomputeModulesFreeAndRerun_data() {
    QTest::addColumn<bool>("moeLayer");
    QTest::addColumn<int>("module");
    QTest::addColumn<double>("freedPerToken");
    QTest::addColumn<double>("flopsPerToken");
    const double h = 2048, f = 8192, fe = 1024, k = 2, E = 8;
    // layernorm: the QKV and FC1 inputs (the norms' outputs), 2 B each.
    QTest::newRow("dense layernorm") << false << int(RecomputeModule::Layernorm) << 4 * h << 0.0;
    QTest::newRow("moe layernorm") << true << int(RecomputeModule::Layernorm) << 4 * h << 0.0;
    // mlp: FC1's input (2h) and output (2 x 2f), the activation's output
    // (2f); FC1 and FC2 again: 2 x (2f x h + f x h).
    QTest::newRow("dense mlp") << false << int(RecomputeModule::Mlp) << 2 * h + 6 * f << 6 * f * h;
    QTest::newRow("moe layer's mlp: nothing") << true << int(RecomputeModule::Mlp) << 0.0 << 0.0;
    // moe: the same for the top 2 routed copies and the shared expert, and
    // the router's GEMM (h x 8) again.
    QTest::newRow("moe") << true << int(RecomputeModule::Moe) << 2 * h + (k + 1) * 6 * fe
                         << (k + 1) * 6 * fe * h + 2 * h * E;
    QTest::newRow("dense layer's moe: nothing") << false << int(RecomputeModule::Moe) << 0.0 << 0.0;
    // moe_act: the routed copies' activation outputs (FC2's inputs).
    QTest::newRow("moe_act") << true << int(RecomputeModule::MoeAct) << k * 2 * fe << 0.0;
    // shared_experts: the shared expert's MLP.
    QTest::newRow("shared_experts")
        << true << int(RecomputeModule::SharedExperts) << 6 * fe << 6 * fe * h;
}

void TestFidelity::recomputeModulesFreeAndRerun() {
    QFETCH(bool, moeLayer);
    QFETCH(int, module);
    QFETCH(double, freedPerToken);
    QFETCH(double, flopsPerToken);
    const Cluster c = clusterOf("one", {building("B1", 64)});
    Model m = smallLlama();
    if (moeLayer) {
        m.moe = moeOf(8, 2, 1024);
        m.moe->shared_experts = 1;
    }
    Plan none = makePlan(1, 1, 8, 64);
    none.micro_batch_sequences = 4;
    none.recompute = Recompute::Selective;
    none.recompute_modules = 0; // selective, nothing named: as no recompute
    Plan sel = none;
    sel.recompute_modules = recomputeBit(RecomputeModule(module));
    const auto cost = [&](const Plan& p) {
        LayerContext ctx = layerContext(c, c.buildings[0], m, p);
        ctx.moe_layer = moeLayer;
        return layerCost(ctx);
    };
    const LayerCost a = cost(none), b = cost(sel);
    const double T = 4 * 2048;
    QCOMPARE(a.recompute_s, 0.0);
    QVERIFY_CLOSE(a.activation_bytes - b.activation_bytes, T * freedPerToken, 1e-12);
    QVERIFY_CLOSE(b.hw_flops_total - a.hw_flops_total, T * flopsPerToken, 1e-12);
    // Whatever frees memory runs something again; nothing else is charged.
    if (freedPerToken > 0)
        QVERIFY(b.recompute_s > 0 && b.recompute_s < b.fwd_s);
    else
        QCOMPARE(b.recompute_s, 0.0);
    if (RecomputeModule(module) == RecomputeModule::MoeAct) {
        // One pass over the SwiGLU: read 2 fe, write fe, 2 B each, per copy.
        const double hbm = h100().hbm_tbps * 1e12 * 0.8;
        QVERIFY_CLOSE(b.recompute_s, T * 2 * 3 * 1024 * 2 / hbm + 3e-6, 1e-9);
    }
    if (RecomputeModule(module) == RecomputeModule::Layernorm) {
        const double hbm = h100().hbm_tbps * 1e12 * 0.8;
        QVERIFY_CLOSE(b.recompute_s, 2 * 4 * T * 2048 / hbm + 2 * 3e-6, 1e-9);
    }
}

// Recomputing the MoE module re-runs its dispatch and combine all-to-alls
// (the checkpoint's forward is the whole MoE layer's); Megatron refuses it
// beside the EP overlap ("disable moe in recompute_modules when enabling
// overlap_moe_expert_parallel_comm"), and the overlap then does not apply.
void TestFidelity::moeRecomputeRepeatsTheAllToAll() {
    const Cluster c = clusterOf("one", {building("B1", 64)});
    Model m = smallLlama();
    m.moe = moeOf(64, 4, 1024);
    Plan p = makePlan(1, 1, 64, 256);
    p.parallelism.ep = 16;
    p.recompute = Recompute::Selective;
    const Evaluation attn = evaluated(c, m, p);
    p.recompute_modules |= recomputeBit(RecomputeModule::Moe);
    const Evaluation moe = evaluated(c, m, p);
    QVERIFY(attn.breakdown.ep_exposed_s > 0);
    QVERIFY_CLOSE(moe.breakdown.ep_exposed_s, 1.5 * attn.breakdown.ep_exposed_s, 1e-9);
    QVERIFY(moe.memory.activations_gib < attn.memory.activations_gib);
    QVERIFY(moe.step_time_s > attn.step_time_s);
    p.ep_overlap = true;
    const Evaluation overlapped = evaluated(c, m, p);
    QCOMPARE(overlapped.breakdown.ep_exposed_s, moe.breakdown.ep_exposed_s);
}

void TestFidelity::partialRecomputeSelectsLayers_data() {
    QTest::addColumn<int>("method"); // RecomputeMethod
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("virtualStages");
    QTest::addColumn<int>("redone");      // layers re-run per chunk
    QTest::addColumn<int>("inputsKept");  // layers per chunk keeping only an input
    QTest::addColumn<int>("wholeKept");   // layers per chunk keeping everything
    QTest::addColumn<int>("transientOf"); // layers re-materialised at once
    // A chunk of 6 layers (pp 2, 12 layers) or two of 3 (interleaved).
    QTest::newRow("uniform 1") << int(RecomputeMethod::Uniform) << 1 << 1 << 6 << 6 << 0 << 1;
    QTest::newRow("block 2") << int(RecomputeMethod::Block) << 2 << 1 << 2 << 2 << 4 << 1;
    QTest::newRow("block 2, two chunks")
        << int(RecomputeMethod::Block) << 2 << 2 << 2 << 2 << 1 << 1;
    QTest::newRow("block beyond the chunk")
        << int(RecomputeMethod::Block) << 8 << 1 << 6 << 6 << 0 << 1;
    // Groups of 4 over 6 layers: two checkpointed inputs.
    QTest::newRow("uniform 4") << int(RecomputeMethod::Uniform) << 4 << 1 << 6 << 2 << 0 << 4;
}

void TestFidelity::partialRecomputeSelectsLayers() {
    // Megatron-Core's checkpointed forward (megatron/core/recompute.py), per
    // model chunk: block N recomputes the chunk's first N layers and leaves
    // the rest alone; uniform N checkpoints the input of every group of N
    // layers, recomputes them all and re-materialises a group at a time.
    QFETCH(int, method);
    QFETCH(int, n);
    QFETCH(int, virtualStages);
    QFETCH(int, redone);
    QFETCH(int, inputsKept);
    QFETCH(int, wholeKept);
    QFETCH(int, transientOf);
    LayerCost full, kept;
    full.fwd_s = kept.fwd_s = 1;
    full.bwd_input_s = kept.bwd_input_s = 2;
    full.recompute_s = 1;
    full.activation_bytes = 10;
    full.transient_bytes = kept.activation_bytes = 100;
    BuildingCosts costs;
    costs.dense = full;
    costs.dense_kept = kept;
    const std::vector<BuildingCosts> all = {costs};
    const Model m = smallLlama(12);
    ChunkLayers chunks;
    chunkLayers(m, {6, 6}, 2, virtualStages, chunks);
    Layout layout;
    layout.stageBuildings = {{0}, {0}};
    const std::vector<double> cross = {0, 0};
    ChunkTable table;
    chunkTimes({&layout,
                &all,
                &chunks,
                &cross,
                &m,
                2,
                virtualStages,
                Recompute::Full,
                RecomputeMethod(method),
                n,
                false,
                0,
                {},
                0,
                {}},
               table);
    const ChunkTimes& t = table[1][0]; // no embedding or logits on it
    const int layers = 6 / virtualStages;
    QCOMPARE(t.fwd, double(layers));
    QCOMPARE(t.bwd, 2.0 * layers + redone);
    QCOMPARE(t.activation, 10.0 * inputsKept + 100.0 * wholeKept);
    QCOMPARE(t.transient, 100.0 * transientOf);
}

void TestFidelity::blockRecomputeBetweenNoneAndFull() {
    // Evaluated end to end: block recompute of every layer of a stage is
    // full recompute; of fewer layers, a step between none and full, and
    // more memory than full, less than none.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const Model m = smallLlama();
    Plan p = makePlan(2, 2, 4, 128); // 4 layers a stage
    const Evaluation none = evaluated(c, m, p);
    p.recompute = Recompute::Full;
    const Evaluation full = evaluated(c, m, p);
    p.recompute_method = RecomputeMethod::Block;
    p.recompute_layers = 4;
    const Evaluation all = evaluated(c, m, p);
    QCOMPARE(all.step_time_s, full.step_time_s);
    QCOMPARE(all.memory.peak_gib_per_gpu, full.memory.peak_gib_per_gpu);
    p.recompute_layers = 2;
    const Evaluation half = evaluated(c, m, p);
    QVERIFY(half.step_time_s < full.step_time_s && half.step_time_s > none.step_time_s);
    QVERIFY(half.memory.peak_gib_per_gpu > full.memory.peak_gib_per_gpu);
    QVERIFY(half.memory.peak_gib_per_gpu < none.memory.peak_gib_per_gpu);
}

// A pass the host paces leaves the GPU idle between kernels; the TP and CP
// exchanges it counts as exposed run in those gaps, so the pass takes the
// longer of the host's time and the GPU's with its exchanges, not their sum.
// The GPU's side is read off the same layer under CUDA graphs, which the
// host does not pace: the same kernels and exchanges.
void TestFidelity::exchangesRunInHostGaps() {
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const Model m = smallLlama();
    Plan p = makePlan(2, 1, 4, 64);
    p.parallelism.cp = 2;
    p.parallelism.dp = 2;
    p.sequence_length = 512;
    const LayerCost eager = layerCost(layerContext(c, c.buildings[0], m, p));
    p.cuda_graphs = true;
    const LayerCost graphed = layerCost(layerContext(c, c.buildings[0], m, p));
    QCOMPARE(graphed.host_wait_s, 0.0);
    QVERIFY(eager.host_fwd_s > eager.gpu_fwd_s && eager.host_bwd_s > eager.gpu_bwd_s);
    QVERIFY_CLOSE(eager.gpu_fwd_s, graphed.gpu_fwd_s, 1e-12);
    QVERIFY_CLOSE(eager.gpu_bwd_s, graphed.gpu_bwd_s, 1e-12);
    const double exposedFwd = graphed.tp_fwd_s + graphed.cp_fwd_s;
    const double exposedBwd = graphed.tp_bwd_s + graphed.cp_bwd_s;
    QVERIFY(exposedFwd > 0 && exposedBwd > 0);
    QVERIFY_CLOSE(eager.fwd_s + eager.tp_fwd_s + eager.cp_fwd_s,
                  std::max(eager.host_fwd_s, graphed.fwd_s + exposedFwd), 1e-9);
    QVERIFY_CLOSE(
        eager.bwd_input_s + eager.bwd_weight_s + eager.tp_bwd_s + eager.cp_bwd_s,
        std::max(eager.host_bwd_s, graphed.bwd_input_s + graphed.bwd_weight_s + exposedBwd), 1e-9);
    // Less shows than on the graphed layer: the gaps held some of it.
    QVERIFY(eager.tp_fwd_s + eager.cp_fwd_s < exposedFwd);
    // Zero-bubble issues the weight gradients as a pass of their own: B and
    // W each take the longer of their GPU time and half the host's backward.
    // The layer's key carries it, so the evaluation's kept costs do too.
    p.cuda_graphs = false;
    p.parallelism.pp = 2;
    p.parallelism.dp = 1;
    p.schedule.kind = ScheduleKind::ZeroBubble;
    const LayerContext zbCtx = layerContext(c, c.buildings[0], m, p);
    const LayerCost zb = layerCost(zbCtx);
    QVERIFY_CLOSE(zb.bwd_input_s, std::max(graphed.bwd_input_s, 0.5 * zb.host_bwd_s), 1e-12);
    QVERIFY_CLOSE(zb.bwd_weight_s, std::max(graphed.bwd_weight_s, 0.5 * zb.host_bwd_s), 1e-12);
    QVERIFY(zb.bwd_input_s != eager.bwd_input_s);
    LayerContext keyed = zbCtx;
    const Plan fromKey = planOf(layerPlanKey(p));
    keyed.plan = &fromKey;
    QVERIFY(layerCost(keyed) == zb);
}

void TestFidelity::hostIssuesEveryKernel() {
    // The host issues each of a layer's kernels at 9.3 us forward and
    // 10.7 us backward (tests/validation/gpu/h200-host.json): a fused dense
    // layer is 10 kernels forward and 20 backward, and with TP and SP its
    // two all-gathers and two reduce-scatters each way. At TP 2 a layer of
    // 256 tokens runs faster than that on an H100 and waits for the host;
    // at TP 1 reading its weights takes longer, and 8192 tokens do not wait
    // either. A CUDA graph replays each kernel in ~1 us.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const Model m = smallLlama();
    Plan p = makePlan(2, 1, 4, 64);
    p.sequence_length = 256;
    const LayerCost small = layerCost(layerContext(c, c.buildings[0], m, p));
    QVERIFY_CLOSE(small.host_fwd_s, 14 * 9.3e-6, 1e-12);
    QVERIFY_CLOSE(small.host_bwd_s, 24 * 10.7e-6, 1e-12);
    QVERIFY_CLOSE(small.fwd_s, small.host_fwd_s, 1e-12);
    QVERIFY_CLOSE(small.bwd_input_s + small.bwd_weight_s, small.host_bwd_s, 1e-12);
    QVERIFY(small.host_wait_s > 0);
    QVERIFY(!small.host_sync);
    p.cuda_graphs = true;
    const LayerCost graphed = layerCost(layerContext(c, c.buildings[0], m, p));
    QVERIFY_CLOSE(graphed.host_fwd_s, 14 * 0.96e-6, 1e-12);
    QCOMPARE(graphed.host_wait_s, 0.0);
    // Without the host's pace the GPU runs the same kernels; what of the
    // host's gaps the TP exchanges fill (exchangesRunInHostGaps) is not
    // waiting.
    const double held = graphed.tp_fwd_s + graphed.tp_bwd_s - (small.tp_fwd_s + small.tp_bwd_s);
    QVERIFY(held >= 0);
    QVERIFY_CLOSE(small.fwd_s + small.bwd_input_s + small.bwd_weight_s - small.host_wait_s,
                  graphed.fwd_s + graphed.bwd_input_s + graphed.bwd_weight_s + held, 1e-9);
    Plan plain = p;
    plain.cuda_graphs = false;
    QVERIFY(!(layerPlanKey(p) == layerPlanKey(plain)));
    Plan tp1 = makePlan(1, 1, 8, 64);
    tp1.sequence_length = 256;
    const LayerCost one = layerCost(layerContext(c, c.buildings[0], m, tp1));
    QVERIFY_CLOSE(one.host_fwd_s, 10 * 9.3e-6, 1e-12);
    QVERIFY_CLOSE(one.host_bwd_s, 20 * 10.7e-6, 1e-12);
    QCOMPARE(one.host_wait_s, 0.0);
    Plan big = makePlan(2, 1, 4, 64);
    big.micro_batch_sequences = 4;
    const LayerCost large = layerCost(layerContext(c, c.buildings[0], m, big));
    QCOMPARE(large.host_wait_s, 0.0);
    big.cuda_graphs = true;
    QCOMPARE(layerCost(layerContext(c, c.buildings[0], m, big)).fwd_s, large.fwd_s);
}

void TestFidelity::groupedExpertsLaunchPerExpert() {
    // Transformer Engine's GroupedLinear (Megatron-Core) runs a GEMM per
    // local expert and quantises each expert's input and weight apart
    // (current scaling: 2 kernels a cast); PyTorch's grouped_mm (torchtitan)
    // is one kernel whatever the count. Eight more local experts: 8 x 2
    // GEMMs x (1 + 2 x 2) forward, 8 x (4 GEMMs + 2 x 2 output-gradient
    // casts) backward.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const auto host = [&](int experts, Elementwise e, Fp8Linear lin) {
        Model m = smallLlama();
        m.dtype = DType::FP8;
        m.moe = moeOf(experts, 2, 1024);
        Plan p = makePlan(1, 1, 8, 64);
        p.elementwise = e;
        p.fp8_linear = lin;
        LayerContext ctx = layerContext(c, c.buildings[0], m, p);
        ctx.moe_layer = true;
        return layerCost(ctx);
    };
    const LayerCost te8 = host(8, Elementwise::Fused, Fp8Linear::TransformerEngine);
    const LayerCost te16 = host(16, Elementwise::Fused, Fp8Linear::TransformerEngine);
    QVERIFY_CLOSE(te16.host_fwd_s - te8.host_fwd_s, 8 * 2 * 5 * 9.3e-6, 1e-9);
    QVERIFY_CLOSE(te16.host_bwd_s - te8.host_bwd_s, 8 * 8 * 10.7e-6, 1e-9);
    const LayerCost tt8 = host(8, Elementwise::Compiled, Fp8Linear::Torchao);
    const LayerCost tt16 = host(16, Elementwise::Compiled, Fp8Linear::Torchao);
    QCOMPARE(tt16.host_fwd_s, tt8.host_fwd_s);
    QCOMPARE(tt16.host_bwd_s, tt8.host_bwd_s);
}

void TestFidelity::moeForwardWaitsForTokenCounts() {
    // Megatron-Core's dispatchers copy the token counts to the host and wait
    // for them once per forward unless tokens are padded to capacity;
    // torchtitan waits for its all-to-all's splits, so only under EP. The
    // wait drains the GPU: the sync's 11.6 us, then the next op's issue.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const auto cost = [&](Elementwise e, int ep, double cf, double syncS) {
        Model m = smallLlama();
        m.moe = moeOf(8, 2, 4096);
        m.moe->capacity_factor = cf;
        Plan p = makePlan(1, 1, 8, 64);
        p.micro_batch_sequences = 4;
        p.parallelism.ep = ep;
        p.elementwise = e;
        LayerContext ctx = layerContext(c, c.buildings[0], m, p);
        ctx.moe_layer = true;
        ctx.kc.host_sync_s = syncS;
        return layerCost(ctx);
    };
    const LayerCost megatron = cost(Elementwise::Fused, 1, 1.0, 11.6e-6);
    QVERIFY(megatron.host_sync);
    QVERIFY_CLOSE(megatron.host_wait_s, 11.6e-6 + 9.3e-6, 1e-12);
    QVERIFY_CLOSE(megatron.fwd_s - cost(Elementwise::Fused, 1, 1.0, 0.0).fwd_s, 11.6e-6, 1e-9);
    QVERIFY(!cost(Elementwise::Fused, 1, 1.25, 11.6e-6).host_sync);
    QVERIFY(!cost(Elementwise::Eager, 1, 1.0, 11.6e-6).host_sync);
    QVERIFY(cost(Elementwise::Eager, 2, 1.0, 11.6e-6).host_sync);
    // A dense layer never waits.
    Plan p = makePlan(1, 1, 8, 64);
    p.micro_batch_sequences = 4;
    QVERIFY(!layerCost(layerContext(c, c.buildings[0], smallLlama(), p)).host_sync);
}

void TestFidelity::moeExpertTpGathersTheDispatchedCopies() {
    // Experts split over TP 4 behind Megatron-Core's all-to-all dispatcher:
    // each rank sends its sequence shard's top_k copies over EP, then the TP
    // group all-gathers what arrived (dispatch_postprocess:
    // gather_from_sequence_parallel_region) and the combine reduce-scatters
    // it: top_k copies of every token, each expert's capacity when padded.
    // Before, the expert half's TP collectives moved the hidden states once
    // whatever top_k, as a dense MLP's do.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const auto cost = [&](int topK, double cf, int ep, EpDispatcher dispatcher,
                          bool tpOverlap = false) {
        Model m = smallLlama();
        m.moe = moeOf(8, topK, 4096);
        m.moe->capacity_factor = cf;
        if (cf > 1)
            m.moe->pad_to_capacity = true;
        Plan p = makePlan(4, 1, 16, 64);
        p.micro_batch_sequences = 2;
        p.parallelism.ep = ep;
        p.ep_dispatcher = dispatcher;
        p.tp_comm_overlap = tpOverlap;
        LayerContext ctx = layerContext(c, c.buildings[0], m, p);
        ctx.moe_layer = true;
        return layerCost(ctx);
    };
    const double T = 2.0 * 2048, h = double(smallLlama().hidden);
    const double share = 3.0 / 4.0;
    // Forward and backward each gather and reduce-scatter the tensor once.
    const auto expertTpBytes = [&](double copies) {
        return 2.0 * 2.0 * share * T * h * 2.0 * copies;
    };
    const LayerCost one = cost(1, 1.0, 8, EpDispatcher::AllToAll);
    const LayerCost two = cost(2, 1.0, 8, EpDispatcher::AllToAll);
    QVERIFY_CLOSE(two.tp_bytes - one.tp_bytes, expertTpBytes(2) - expertTpBytes(1), 1e-9);
    QVERIFY(two.tp_fwd_s > one.tp_fwd_s);
    QVERIFY(two.tp_bwd_s > one.tp_bwd_s);
    // Padded to a capacity factor of 1.5: half as much again.
    const LayerCost padded = cost(2, 1.5, 8, EpDispatcher::AllToAll);
    QVERIFY_CLOSE(padded.tp_bytes - one.tp_bytes, expertTpBytes(3) - expertTpBytes(1), 1e-9);
    // Without EP (the all-gather dispatcher) and under the flex dispatcher
    // the hidden states are what moves, whatever top_k.
    QCOMPARE(cost(2, 1.0, 1, EpDispatcher::AllToAll).tp_bytes,
             cost(1, 1.0, 1, EpDispatcher::AllToAll).tp_bytes);
    QCOMPARE(cost(2, 1.0, 8, EpDispatcher::Flex).tp_bytes,
             cost(1, 1.0, 8, EpDispatcher::Flex).tp_bytes);
    // Under TP communication overlap the expert half stays unoverlapped, and
    // as large.
    QVERIFY(cost(2, 1.0, 8, EpDispatcher::AllToAll, true).tp_mlp_fwd_s >
            1.9 * cost(1, 1.0, 8, EpDispatcher::AllToAll, true).tp_mlp_fwd_s);
}

void TestFidelity::expertTensorParallelFoldsTpIntoEp() {
    // Megatron-Core's MoE parallel folding: experts on etp of the TP ranks
    // (--expert-tensor-parallel-size). Each TP rank dispatches its own
    // sequence shard; the expert TP group gathers etp shards' copies, none
    // at etp 1; each expert runs whole (etp 1) on etp x ep ranks' tokens.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const auto cost = [&](int etp) {
        Model m = smallLlama();
        m.moe = moeOf(8, 2, 4096);
        Plan p = makePlan(4, 1, 16, 64);
        p.micro_batch_sequences = 2;
        p.parallelism.ep = 8;
        p.parallelism.etp = etp;
        LayerContext ctx = layerContext(c, c.buildings[0], m, p);
        ctx.moe_layer = true;
        return layerCost(ctx);
    };
    const LayerCost tp4 = cost(0), et2 = cost(2), et1 = cost(1);
    QCOMPARE(cost(4).tp_bytes, tp4.tp_bytes); // etp = tp is the default
    const double T = 2.0 * 2048, h = double(smallLlama().hidden), topK = 2;
    // Forward and backward each gather and reduce-scatter the tensor once:
    // etp sequence shards (T / 4 tokens each), top_k copies.
    const auto expertTpBytes = [&](double etp) {
        return 2.0 * 2.0 * (etp - 1) / etp * (T / 4 * etp) * h * 2.0 * topK;
    };
    QVERIFY_CLOSE(tp4.tp_bytes - et1.tp_bytes, expertTpBytes(4), 1e-9);
    QVERIFY_CLOSE(et2.tp_bytes - et1.tp_bytes, expertTpBytes(2), 1e-9);
    QCOMPARE(et1.tp_mlp_fwd_s, 0.0);
    QVERIFY(et2.tp_mlp_fwd_s > 0 && et2.tp_mlp_fwd_s < tp4.tp_mlp_fwd_s);
    // One expert's weights: a quarter at etp 4, whole at etp 1.
    QVERIFY_CLOSE(et1.expert_params, 4.0 * tp4.expert_params, 1e-12);
    QVERIFY_CLOSE(et2.expert_params, 2.0 * tp4.expert_params, 1e-12);
    // The same expert FLOPs on each rank, the same tokens dispatched.
    QVERIFY_CLOSE(et1.model_flops_fwd, tp4.model_flops_fwd, 1e-12);
    QCOMPARE(et1.ep_bytes, tp4.ep_bytes);
}

void TestFidelity::expertTensorParallelShardsAndGroups() {
    // The experts' optimizer state is sharded over the expert data-parallel
    // group, tp x cp x dp / (etp x ep): four times the weights per GPU at
    // etp 1, over four times the ranks.
    Model m = smallLlama();
    m.moe = moeOf(16, 2, 4096);
    Plan p = makePlan(4, 1, 16, 64);
    p.zero_stage = 1;
    p.parallelism.ep = 16;
    const Cluster one = clusterOf("one", {building("B1", 64, {.zone_gpus = 64})});
    const Evaluation byTp = evaluated(one, m, p);
    Plan folded = p;
    folded.parallelism.etp = 1;
    const Evaluation byEp = evaluated(one, m, folded);
    QVERIFY(byEp.memory.weights_gib > 1.5 * byTp.memory.weights_gib);
    QVERIFY_CLOSE(byEp.memory.optimizer_gib, byTp.memory.optimizer_gib, 1e-9);
    // Two buildings of 8 replicas: ep 16 over replicas crosses the link;
    // folded, a group is 4 replicas' cells (16 / (4 / 1)), inside one.
    const Cluster pair = clusterOf(
        "pair", {building("B1", 32, {.zone_gpus = 32}), building("B2", 32, {.zone_gpus = 32})},
        {link("B1", "B2", 400, 10)});
    const auto epAcross = [&](const Evaluation& ev) {
        for (const LinkUsage& l : ev.links)
            if (l.tier == LinkTier::InterBuilding &&
                std::find(l.dims.begin(), l.dims.end(), Dim::EP) != l.dims.end())
                return true;
        return false;
    };
    QVERIFY(epAcross(evaluated(pair, m, p)));
    QVERIFY(!epAcross(evaluated(pair, m, folded)));
    // A group of 2 inside a cell of 4 folded ranks never leaves the cell.
    folded.parallelism.ep = 2;
    QVERIFY(!epAcross(evaluated(pair, m, folded)));
}

void TestFidelity::expertGroupsFoldContextParallelRanks() {
    // Megatron-Core's expert rank generator (0.10 on) orders etp-ep-dp with
    // cp folded: with the experts over all of TP, an EP group takes a cell's
    // CP ranks before whole replicas. TP 4 x CP 2 cells, 4 replicas in each
    // of two buildings: EP 8 is 2 CP ranks x 4 replicas, inside a building;
    // EP 16 spans 8 replicas, across the link. Before, EP 8 took 8 replicas.
    Model m = smallLlama();
    m.moe = moeOf(16, 2, 4096);
    Plan p = makePlan(4, 1, 8, 64);
    p.parallelism.cp = 2;
    p.parallelism.ep = 8;
    const Cluster pair = clusterOf(
        "pair", {building("B1", 32, {.zone_gpus = 32}), building("B2", 32, {.zone_gpus = 32})},
        {link("B1", "B2", 400, 10)});
    const auto epAcross = [&](const Plan& plan) {
        for (const LinkUsage& l : evaluated(pair, m, plan).links)
            if (l.tier == LinkTier::InterBuilding &&
                std::find(l.dims.begin(), l.dims.end(), Dim::EP) != l.dims.end())
                return true;
        return false;
    };
    QVERIFY(!epAcross(p));
    p.parallelism.ep = 16;
    QVERIFY(epAcross(p));
    // The two EP ranks of a TP 4 x CP 2 cell share its 8-GPU host, as two
    // TP 4 cells' do without CP: the same tokens per GPU make the same
    // all-to-all (before, CP 2 put one EP rank on a host: 7 of 8 copies off
    // it, not 6).
    const Cluster one = clusterOf("one", {building("B1", 64)});
    const auto layer = [&](int cp) {
        Plan q = makePlan(4, 1, 16 / cp, 64);
        q.parallelism.cp = cp;
        q.parallelism.ep = 8;
        q.micro_batch_sequences = 2 * cp; // the same tokens per GPU
        LayerContext ctx = layerContext(one, one.buildings[0], m, q);
        ctx.moe_layer = true;
        return layerCost(ctx);
    };
    QCOMPARE(layer(2).ep_bytes, layer(1).ep_bytes);
    QCOMPARE(layer(2).ep_fwd_s, layer(1).ep_fwd_s);
}

void TestFidelity::moeTokenDropPadsToCapacity() {
    // Megatron-Bridge's token-drop runs (apply_moe_token_drop): capacity
    // factor 1 with each expert's input padded to it. Static shapes, so no
    // host wait for the token counts, and under an even load the same
    // expert work as dropless. Above 1 without padding, an even load drops
    // nothing and pads nothing: dropless work, with the wait.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const auto cost = [&](double cf, std::optional<bool> pad) {
        Model m = smallLlama();
        m.moe = moeOf(8, 2, 4096);
        m.moe->capacity_factor = cf;
        m.moe->pad_to_capacity = pad;
        Plan p = makePlan(1, 1, 8, 64);
        p.micro_batch_sequences = 4;
        p.parallelism.ep = 2;
        LayerContext ctx = layerContext(c, c.buildings[0], m, p);
        ctx.moe_layer = true;
        return layerCost(ctx);
    };
    const LayerCost dropless = cost(1.0, std::nullopt);
    const LayerCost drop1 = cost(1.0, true);
    QVERIFY(dropless.host_sync);
    QVERIFY(!drop1.host_sync);
    QCOMPARE(drop1.gemm_s, dropless.gemm_s);
    QCOMPARE(drop1.ep_bytes, dropless.ep_bytes);
    QCOMPARE(drop1.model_flops_fwd, dropless.model_flops_fwd);
    QVERIFY(drop1.fwd_s < dropless.fwd_s);
    // Padded by default above 1: a quarter more expert work and all-to-all
    // bytes, the same model FLOPs.
    const LayerCost padded = cost(1.25, std::nullopt);
    QVERIFY(!padded.host_sync);
    QVERIFY(padded.gemm_s > dropless.gemm_s);
    QVERIFY_CLOSE(padded.ep_bytes, 1.25 * dropless.ep_bytes, 1e-12);
    QVERIFY_CLOSE(padded.model_flops_fwd, dropless.model_flops_fwd, 1e-12);
    const LayerCost unpadded = cost(1.25, false);
    QVERIFY(unpadded.host_sync);
    QCOMPARE(unpadded.gemm_s, dropless.gemm_s);
    QCOMPARE(unpadded.ep_bytes, dropless.ep_bytes);
}

void TestFidelity::mlaUpProjectionRecompute() {
    // Megatron-Core's mla_up_proj: the up projections (and their fused
    // latent norms and RoPE) run again in the backward, and the queries,
    // keys and values they made are not kept.
    Model m = smallLlama();
    m.kv_heads = m.heads;
    m.mla = MlaConfig{256, 128, 64, 32, 96};
    const Cluster c = clusterOf("one", {building("B1", 64)});
    Plan base = makePlan(1, 1, 8, 64);
    base.recompute = Recompute::Selective;
    base.recompute_modules = 0;
    Plan up = base;
    up.recompute_modules = recomputeBit(RecomputeModule::MlaUpProj);
    const LayerCost none = layerCost(layerContext(c, c.buildings[0], m, base));
    const LayerCost again = layerCost(layerContext(c, c.buildings[0], m, up));
    QCOMPARE(none.recompute_s, 0.0);
    QVERIFY(again.recompute_s > 0);
    QCOMPARE(again.fwd_s, none.fwd_s);
    // The re-run GEMMs' FLOPs: the query's up projection (256 -> heads x
    // 96) and the key/value one (128 -> heads x (64 + 96)), 2 per weight
    // and token.
    const double T = 2048, a = m.heads;
    QVERIFY_CLOSE(again.hw_flops_total - none.hw_flops_total,
                  2.0 * T * (256 * a * 96 + 128 * a * (64 + 96)), 1e-12);
    // Memory: Q and K (heads x 96 each) and V (heads x 96) in BF16 a token.
    const double kept = activationBytesPerLayer(m, base, false, false);
    const double freed = kept - activationBytesPerLayer(m, up, false, false);
    QVERIFY_CLOSE(freed, T * 2.0 * a * (96 + 96 + 96), 1e-12);
    // Without MLA the module does nothing.
    Model plain = smallLlama();
    QCOMPARE(layerCost(layerContext(c, c.buildings[0], plain, up)).recompute_s, 0.0);
    QCOMPARE(activationBytesPerLayer(plain, up, false, false),
             activationBytesPerLayer(plain, base, false, false));
}

void TestFidelity::slidingWindowAttention() {
    // A window of w keys (itself included) leaves a sequence of S tokens
    // w S - w^2 / 2 (query, key) pairs against the causal S^2 / 2; with
    // full_every N, every N-th layer keeps the whole prefix and the layer's
    // attention is the mean of the two kinds.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const Plan p = makePlan(1, 1, 8, 64);
    const auto layer = [&](const Model& m) {
        return layerCost(layerContext(c, c.buildings[0], m, p));
    };
    const Model full = smallLlama();
    const double S = 2048, w = 512;
    // Causal model FLOPs of the core, forward: QK^T and PV over 16 heads of 128.
    const double core = 0.5 * 2.0 * 16 * S * S * (128 + 128);
    const double share = (w * S - 0.5 * w * w) / (0.5 * S * S);
    Model windowed = full;
    windowed.sliding_window = SlidingWindow{512, 0};
    const LayerCost f = layer(full), a = layer(windowed);
    QVERIFY_CLOSE(f.model_flops_fwd - a.model_flops_fwd, (1.0 - share) * core, 1e-12);
    QVERIFY(a.attention_s < f.attention_s);
    QCOMPARE(a.gemm_s, f.gemm_s);
    // Every second layer full (GPT-OSS): half the layers windowed.
    Model alternating = full;
    alternating.sliding_window = SlidingWindow{512, 2};
    QCOMPARE(alternating.windowedLayerShare(), 0.5);
    const LayerCost h = layer(alternating);
    QVERIFY_CLOSE(f.model_flops_fwd - h.model_flops_fwd, 0.5 * (1.0 - share) * core, 1e-12);
    QVERIFY_CLOSE(h.attention_s, 0.5 * (f.attention_s + a.attention_s), 1e-12);
    // Every third of 8 layers full: layers 3 and 6, the other six windowed.
    alternating.sliding_window->full_every = 3;
    QCOMPARE(alternating.windowedLayerShare(), 6.0 / 8.0);
    // A window as long as the sequence changes nothing.
    Model wide = full;
    wide.sliding_window = SlidingWindow{2048, 0};
    QCOMPARE(layer(wide).attention_s, f.attention_s);
    QCOMPARE(layer(wide).model_flops_fwd, f.model_flops_fwd);
}

void TestFidelity::hostBoundPlanWarns() {
    // TP 2 on a 1.5B model with one 256-token sequence per microbatch: each
    // GPU's kernels are a few microseconds, the host's ops ~10 us each, more
    // than the kernels and the TP exchanges together. The evaluation says
    // so; CUDA graphs take the host out.
    const Cluster c = clusterOf("one", {building("B1", 64)});
    Plan p = makePlan(2, 1, 32, 64);
    p.sequence_length = 256;
    const auto hostWarning = [](const Evaluation& ev) {
        for (const std::string& w : ev.warnings)
            if (w.rfind("host: ", 0) == 0)
                return w;
        return std::string();
    };
    const Evaluation plain = evaluated(c, smallLlama(), p);
    const std::string w = hostWarning(plain);
    QVERIFY2(w.find("dense layer waits for the host") != std::string::npos, w.c_str());
    QVERIFY2(w.find("cuda_graphs") != std::string::npos, w.c_str());
    p.cuda_graphs = true;
    const Evaluation graphed = evaluated(c, smallLlama(), p);
    QCOMPARE(hostWarning(graphed), std::string());
    QVERIFY(graphed.step_time_s < plain.step_time_s);
    // At TP 8 with 2k tokens the host is slower than the kernels too, but
    // the all-reduces between them fill its gaps: nothing waits, and CUDA
    // graphs would not help.
    Plan tp8 = makePlan(8, 1, 8, 64);
    const Evaluation eager8 = evaluated(c, smallLlama(), tp8);
    QCOMPARE(hostWarning(eager8), std::string());
    tp8.cuda_graphs = true;
    QVERIFY_CLOSE(evaluated(c, smallLlama(), tp8).step_time_s, eager8.step_time_s, 1e-9);
}

// Multi-token prediction (Model::mtp_layers; docs/COST_MODEL.md): each
// module is a block of the last layer's kind, Megatron's norms and 2h -> h
// projection, and one more pass through the output layer and loss, all on
// the last stage, which also keeps a copy of an untied embedding table.
void TestFidelity::multiTokenPrediction() {
    const Cluster c = clusterOf("one", {building("B1", 64)});
    const Model m0 = smallLlama(8);
    Model m1 = m0;
    m1.mtp_layers = 1;
    const Plan p = makePlan(2, 2, 4, 32);
    const Evaluation e0 = evaluated(c, m0, p), e1 = evaluated(c, m1, p);
    const Evaluation deeper = evaluated(c, smallLlama(9), p);
    // Model FLOPs: a layer (as one more layer adds), the logits again and
    // 6 (3h + 2h^2) a token (training.py num_floating_point_operations).
    const double tokens = double(p.global_batch_sequences) * double(p.sequence_length);
    const double h = double(m0.hidden), V = double(m0.vocab);
    const double layer = deeper.model_flops_per_step - e0.model_flops_per_step;
    QVERIFY(layer > 0);
    QVERIFY_CLOSE(e1.model_flops_per_step,
                  e0.model_flops_per_step + layer +
                      tokens * (6.0 * h * V + 6.0 * (3.0 * h + 2.0 * h * h)),
                  1e-12);
    // On the last stage only: the first keeps its time, parameters and memory.
    QCOMPARE(e1.stage_breakdown[0].compute_s, e0.stage_breakdown[0].compute_s);
    QCOMPARE(e1.stage_params[0], e0.stage_params[0]);
    QCOMPARE(e1.memory.per_stage_peak_gib[0], e0.memory.per_stage_peak_gib[0]);
    // Its four layers gain a fifth, the output layer a second pass.
    QVERIFY2(e1.stage_breakdown[1].compute_s > 1.25 * e0.stage_breakdown[1].compute_s,
             numbers(e1.stage_breakdown[1].compute_s, e0.stage_breakdown[1].compute_s));
    QVERIFY(e1.memory.per_stage_peak_gib[1] > e0.memory.per_stage_peak_gib[1]);
    QVERIFY(e1.step_time_s > e0.step_time_s);
    // Parameters on one GPU of the last stage: the block, the projection's
    // TP shard and three norms, and the untied embedding table's copy.
    const double t = p.parallelism.tp;
    const LayerCost block = layerCost(layerContext(c, c.buildings[0], m0, p));
    QVERIFY_CLOSE(e1.stage_params[1] - e0.stage_params[1],
                  block.params + 2.0 * h * h / t + 3.0 * h + V * h / t, 1e-12);
    // Tied embeddings share the table already there; without a pipeline
    // the stage holds it anyway.
    Model tied0 = m0, tied1 = m1;
    tied0.tied_embeddings = tied1.tied_embeddings = true;
    QVERIFY_CLOSE(evaluated(c, tied1, p).stage_params[1] - evaluated(c, tied0, p).stage_params[1],
                  block.params + 2.0 * h * h / t + 3.0 * h, 1e-12);
    const Plan flat = makePlan(2, 1, 8, 32);
    QVERIFY_CLOSE(evaluated(c, m1, flat).stage_params[0] - evaluated(c, m0, flat).stage_params[0],
                  block.params + 2.0 * h * h / t + 3.0 * h, 1e-12);
}

// DeepSeek-V3's module is an MoE block: with experts in the last layer the
// module's block has them too (and their all-to-all), with dense layers only
// it is dense.
void TestFidelity::multiTokenPredictionBlockHasExperts() {
    const Cluster c = clusterOf("one", {building("B1", 64)});
    Model moe = smallLlama(8);
    moe.moe = moeOf(16, 2, 1024);
    Model moeMtp = moe;
    moeMtp.mtp_layers = 1;
    Plan p = makePlan(1, 2, 8, 32);
    p.parallelism.ep = 8;
    const Evaluation e0 = evaluated(c, moe, p), e1 = evaluated(c, moeMtp, p);
    const LayerCost expertLayer = [&] {
        LayerContext lc = layerContext(c, c.buildings[0], moe, p);
        lc.moe_layer = true;
        return layerCost(lc);
    }();
    QVERIFY(expertLayer.expert_params > 0);
    QVERIFY_CLOSE(e1.stage_expert_params[1] - e0.stage_expert_params[1], expertLayer.expert_params,
                  1e-12);
    QCOMPARE(e1.stage_expert_params[0], e0.stage_expert_params[0]);
    // Experts only after four leading dense layers: the last layer has them,
    // so the module's block does; a dense model's module is dense.
    Model firstDense = moeMtp;
    firstDense.moe->dense_layers = 4;
    QVERIFY(firstDense.lastLayerIsMoe());
    QVERIFY(!smallLlama(8).lastLayerIsMoe());
    const Evaluation f1 = evaluated(c, firstDense, p);
    QVERIFY_CLOSE(f1.stage_expert_params[1] - e0.stage_expert_params[1], expertLayer.expert_params,
                  1e-12);
}

QTEST_GUILESS_MAIN(TestFidelity)
#include "tst_fidelity.moc"

// The memory model (core/cost/memory.h) and the optimizer's lower bound on
// it: bytes per parameter by ZeRO stage as ZeRO defines them, and the bound
// the search prunes with never above the memory the evaluation reports, for
// a dense and an MoE model, over every candidate of a small space.

#include "cost/evaluate.h"
#include "cost/memory.h"
#include "explore/designspace.h"

#include "../common/candidates.h"
#include "../common/small_search.h"

#include <QTest>

#include <string>

using namespace sa;
using namespace sa::testing;

namespace {

// The small model with experts: 8 experts, top-2, the first layer dense.
Model smallMoe() {
    Model m = smallModel();
    m.name = "tiny-moe";
    MoeConfig moe;
    moe.experts = 8;
    moe.top_k = 2;
    moe.expert_ffn_hidden = 2048;
    moe.dense_layers = 1;
    m.moe = moe;
    return m;
}

struct BoundStats {
    int evaluated = 0;
    int prunedByBound = 0;
    double tightest = 0;   // the largest bound / evaluated ratio met
    std::string violation; // the first plan whose bound is above its memory
};

// Every candidate: evaluated memory against the bound.
BoundStats checkBound(const Model& model, const DesignSpaceOptions& options) {
    const Cluster cluster = smallCluster(true);
    const Plan base = basePlan(128);
    const DesignSpace space(cluster, model, base, options);
    const Evaluator evaluator(cluster);
    BoundStats st;
    for (const Candidate& c : everyCandidate(space)) {
        const double bound = space.memoryLowerBoundGiB(c);
        const auto res = evaluator.evaluate(model, space.plan(c), {false, true, true});
        const auto* ev = std::get_if<Evaluation>(&res);
        if (!ev)
            continue; // a placement too large for a building
        ++st.evaluated;
        const double peak = ev->memory.peak_gib_per_gpu;
        if (bound > peak * (1 + 1e-12) && st.violation.empty())
            st.violation = "bound " + std::to_string(bound) + " GiB above the evaluated " +
                           std::to_string(peak) + " GiB for " + space.label(c);
        st.tightest = std::max(st.tightest, bound / peak);
        if (bound > cluster.gpu_models.at("H100").memory_gib)
            ++st.prunedByBound;
    }
    return st;
}

} // namespace

class TestMemoryBound : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void bytesPerParameter_data();
    void bytesPerParameter();
    void stageMemoryShardsExperts();
    void boundNeverAboveEvaluated_data();
    void boundNeverAboveEvaluated();
    void bf16BoundKeepsBf16Activations();
};

void TestMemoryBound::bytesPerParameter_data() {
    QTest::addColumn<int>("zero");
    QTest::addColumn<double>("weights");
    QTest::addColumn<double>("gradients");
    QTest::addColumn<double>("optimizer");
    // Mixed-precision Adam over 8 ranks (ZeRO, Rajbhandari et al. 2020,
    // Fig. 1): 2 + 4 + 12 bytes, each term sharded from its stage on.
    QTest::newRow("zero-0") << 0 << 2.0 << 4.0 << 12.0;
    QTest::newRow("zero-1") << 1 << 2.0 << 4.0 << 1.5;
    QTest::newRow("zero-2") << 2 << 2.0 << 0.5 << 1.5;
    QTest::newRow("zero-3") << 3 << 0.25 << 0.5 << 1.5;
}

void TestMemoryBound::bytesPerParameter() {
    QFETCH(int, zero);
    QFETCH(double, weights);
    QFETCH(double, gradients);
    QFETCH(double, optimizer);
    const ParamBytes b = paramBytes(zero, 8);
    QCOMPARE(b.weights, weights);
    QCOMPARE(b.gradients, gradients);
    QCOMPARE(b.optimizer, optimizer);
    QCOMPARE(b.total(), weights + gradients + optimizer);
}

void TestMemoryBound::stageMemoryShardsExperts() {
    // 1e9 parameters, 4e8 of them experts; ZeRO-1 over dp 8, experts over
    // dp / ep = 2: optimizer state 6e8 * 12 / 8 + 4e8 * 12 / 2.
    StageMemoryInput in;
    in.zero = 1;
    in.params = 1e9;
    in.expert_params = 4e8;
    in.dp_shard = 8;
    in.ep_shard = 2;
    in.layers = 10;
    in.activation_bytes = 3e9;
    const StageMemory m = stageMemory(in);
    QCOMPARE(m.weights, 2e9);
    QCOMPARE(m.gradients, 4e9);
    QCOMPARE(m.optimizer, 6e8 * 12 / 8 + 4e8 * 12 / 2.0);
    QCOMPARE(m.total_gib,
             (2e9 + 4e9 + m.optimizer + 3e9) * kFragmentation / kGiB + kRuntimeOverheadGiB);
    // ZeRO-3 also shards the weights, and holds two gathered layers.
    in.zero = 3;
    const StageMemory z3 = stageMemory(in);
    QCOMPARE(z3.weights, 6e8 * 2 / 8 + 4e8 * 2 / 2.0 + 2.0 * 1e9 / 10 * 2);
    QCOMPARE(z3.gradients, 6e8 * 4 / 8 + 4e8 * 4 / 2.0);
}

void TestMemoryBound::boundNeverAboveEvaluated_data() {
    QTest::addColumn<bool>("moe");
    QTest::newRow("dense") << false;
    QTest::newRow("moe") << true;
}

void TestMemoryBound::boundNeverAboveEvaluated() {
    QFETCH(bool, moe);
    DesignSpaceOptions o = smallSpace();
    if (moe)
        o.ep = {1, 2, 4};
    const BoundStats st = checkBound(moe ? smallMoe() : smallModel(), o);
    QVERIFY2(st.violation.empty(), st.violation.c_str());
    // Not vacuous: many plans evaluated, the bound prunes some of them, and
    // it is close to the evaluated figure somewhere.
    QVERIFY2(st.evaluated > 50, std::to_string(st.evaluated).c_str());
    QVERIFY(st.prunedByBound > 0);
    QVERIFY2(st.tightest > 0.8, std::to_string(st.tightest).c_str());
}

void TestMemoryBound::bf16BoundKeepsBf16Activations() {
    // FP8 saved inputs shrink an FP8 model's activations only: the bound of
    // a BF16 model stays on its BF16 activations, above the same model's in
    // FP8 wherever activations count (a looser bound prunes less and lets
    // the search enumerate fewer axes).
    const Cluster cluster = smallCluster(true);
    const Plan base = basePlan(128);
    Model fp8 = smallModel();
    fp8.dtype = DType::FP8;
    const DesignSpace bf16Space(cluster, smallModel(), base, smallSpace());
    const DesignSpace fp8Space(cluster, fp8, base, smallSpace());
    int above = 0;
    for (const Candidate& c : everyCandidate(bf16Space))
        if (bf16Space.memoryLowerBoundGiB(c) > fp8Space.memoryLowerBoundGiB(c) * (1 + 1e-9))
            ++above;
    QVERIFY2(above > 0, "the BF16 bound equals the FP8 one everywhere");
}

QTEST_GUILESS_MAIN(TestMemoryBound)
#include "tst_memorybound.moc"

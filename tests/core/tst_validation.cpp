// Validation against published end-to-end runs.
//
// publishedRuns: the ten Megatron-LM runs of Narayanan et al., SC'21,
// Table 1 (tests/validation/runs.json). Micro batch size and interleaving
// depth were not published: the test picks them as a user would, the
// fastest combination that fits in memory, prints which it used and holds
// the model to mean |error| <= 10% and max |error| <= 20% on these rows.
//
// widerRuns: every run of tests/validation/published/runs.json (NeMo,
// Megatron-Core, Megatron-Bridge, torchtitan, Korthikanti et al. 2022), one
// row each, then count, signed mean, mean |error| and max |error| per
// source family and overall, with the SC'21 rows included. A run whose
// configuration is stated in full is evaluated as given; a run with a
// "search" list leaves only those settings to the same search as SC'21
// (the interleaved candidates with the P2P overlap "interleaved_p2p_overlap"
// gives, where the run's framework overlaps only its interleaved schedule).
// These rows are held to loading and evaluating, not to an accuracy: the
// target (mean |error| <= 10% per family, no row over 25%) is printed with
// whether it is met. docs/VALIDATION.md records the table and its sources.
//
// Error = predicted throughput / measured - 1 (+: the model is optimistic).
// Both read and evaluate their indexes with core/calibrate/validate.h, as
// `scaleacross validate tests/validation/runs.json
// tests/validation/published/runs.json` does.

#include "calibrate/gemm.h"
#include "calibrate/validate.h"
#include "cost/compute.h"
#include "cost/evaluate.h"
#include "formats/documents.h"

#include "../common/fixtures.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace sa;
using sa::testing::problemsText;

namespace {

// One of the indexes under tests/validation/, evaluated (core/calibrate/validate.h).
std::vector<ValidationRow> validateIndex(const std::string& path, const ValidationOptions& options,
                                         std::vector<Diagnostic>& problems) {
    std::string error;
    const auto text = readTextFile(path, &error);
    if (!text) {
        problems.push_back({path, "", error});
        return {};
    }
    const ValidationIndex index = parseValidationIndex(*text, path, "", problems);
    if (index.runs.empty())
        problems.push_back({path, "/runs", "no run"});
    return validateRuns(index, path.substr(0, path.rfind('/')), options, problems);
}

nlohmann::json readJson(const std::string& path) {
    std::ifstream in(path);
    if (!in.good())
        return {};
    return nlohmann::json::parse(in);
}

} // namespace

class TestValidation : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void publishedRuns();
    void widerRuns();
    void gpuLayer();
    void gpuKernels();

private:
    std::vector<ValidationRow> sc21Rows_;
};

void TestValidation::publishedRuns() {
    // Micro batch and interleaving searched for every row, and the plan
    // chosen must fit.
    ValidationOptions options;
    options.search = ValidationSearch{true, true, std::nullopt};
    options.must_fit = true;
    std::vector<Diagnostic> problems;
    sc21Rows_ =
        validateIndex(sa::testing::sourceDir() + "/tests/validation/runs.json", options, problems);
    QVERIFY2(problems.empty(), problemsText(problems).c_str());
    QCOMPARE(sc21Rows_.size(), std::size_t(10));
    double sumAbs = 0, maxAbs = 0;
    std::printf("\n%-22s %5s %4s %-14s %10s %10s %8s %7s %7s\n", "run", "gpus", "mbs", "schedule",
                "pred [s]", "meas [s]", "error", "HFU", "MFU");
    for (const ValidationRow& r : sc21Rows_) {
        QCOMPARE(r.family, std::string("megatron-sc21"));
        const Evaluation& ev = r.choice.evaluation;
        const double measured = ev.step_time_s * r.predicted / r.measured;
        const std::string sched = scheduleLabel(r.choice.plan);
        std::printf("%-22s %5lld %4lld %-14s %10.3f %10.3f %+7.1f%% %6.1f%% %6.1f%%\n",
                    r.id.c_str(), (long long)ev.gpus,
                    (long long)r.choice.plan.micro_batch_sequences, sched.c_str(), ev.step_time_s,
                    measured, r.error() * 100, ev.hfu * 100, ev.mfu * 100);
        sumAbs += std::abs(r.error());
        maxAbs = std::max(maxAbs, std::abs(r.error()));
    }
    const double mean = sumAbs / double(sc21Rows_.size());
    std::printf("throughput error over %zu runs: mean |error| %.1f%%, max |error| %.1f%%\n\n",
                sc21Rows_.size(), mean * 100, maxAbs * 100);
    QVERIFY2(mean <= 0.10, "mean |error| above 10%");
    QVERIFY2(maxAbs <= 0.20, "a run is off by more than 20%");
}

void TestValidation::widerRuns() {
    if (sc21Rows_.empty()) // run on its own (tst_validation widerRuns): the SC'21 rows first
        publishedRuns();
    const std::string path = sa::testing::sourceDir() + "/tests/validation/published/runs.json";
    std::vector<Diagnostic> problems;
    const std::vector<ValidationRow> published = validateIndex(path, {}, problems);
    QVERIFY2(problems.empty(), problemsText(problems).c_str());
    QCOMPARE(published.size(), readJson(path)["runs"].size());

    std::vector<double> bf16HopperErrors; // dense BF16 runs on Hopper: predicted / measured - 1
    for (const ValidationRow& r : published) {
        QVERIFY2(!r.family.empty(), r.id.c_str());
        // The evaluation's "accuracy:" notes tell a user that every MoE run
        // with expert parallelism here comes out too fast, and the other
        // BF16 runs on Hopper on average: they hold while it is true, and
        // each note carries the evaluations of its runs, and only those.
        const Scenario& sc = r.scenario;
        const bool expertParallel = sc.model.moe && r.choice.plan.parallelism.ep > 1;
        bool bf16Hopper = false;
        for (const auto& [name, gpu] : sc.cluster.gpu_models)
            bf16Hopper =
                bf16Hopper || (sc.model.dtype == DType::BF16 && gpuArch(gpu) == GpuArch::Hopper);
        std::string note;
        for (const std::string& w : r.choice.evaluation.warnings)
            if (w.rfind("accuracy:", 0) == 0)
                note = w;
        QVERIFY2(expertParallel == (note.find("expert parallelism") != std::string::npos),
                 r.id.c_str());
        QVERIFY2((bf16Hopper && !expertParallel) == (note.find("BF16") != std::string::npos),
                 r.id.c_str());
        if (expertParallel)
            QVERIFY2(r.predicted > r.measured,
                     (r.id + ": an MoE run with expert parallelism now comes out pessimistic; "
                             "revise the evaluation's accuracy note")
                         .c_str());
        else if (bf16Hopper)
            bf16HopperErrors.push_back(r.error());
    }
    double bf16HopperMean = 0;
    for (double e : bf16HopperErrors)
        bf16HopperMean += e / double(bf16HopperErrors.size());
    QVERIFY2(!bf16HopperErrors.empty() && bf16HopperMean > 0,
             "the dense BF16 runs on Hopper no longer come out too fast on average; revise the "
             "evaluation's accuracy note");

    std::vector<ValidationRow> rows = sc21Rows_;
    rows.insert(rows.end(), published.begin(), published.end());
    const ValidationSummary summary = summarizeValidation(rows);
    std::fputs(formatValidationTable(rows, summary).c_str(), stdout);
    std::printf("\n");

    QVERIFY(rows.size() >= 30);
    QVERIFY(summary.families.size() >= 5);
    QCOMPARE(summary.overall.count, int(rows.size()));
}

namespace {

// tests/validation/gpu/: what measure_layer.py measured on an H200, and the
// cluster document that describes that GPU.
struct GpuMeasurements {
    nlohmann::json layer;
    std::string gemmCsv;
    Cluster cluster;
};

std::optional<GpuMeasurements> loadGpuMeasurements(std::string* why) {
    const std::string dir = sa::testing::sourceDir() + "/tests/validation/gpu/";
    GpuMeasurements g;
    g.layer = readJson(dir + "h200-layer.json");
    std::string error;
    const auto csv = readTextFile(dir + "h200-gemm.csv", &error);
    auto cluster = loadClusterFile(dir + "h200.json");
    if (g.layer.is_null() || !csv || !cluster.ok()) {
        *why = "tests/validation/gpu: h200-layer.json, h200-gemm.csv or h200.json does not load";
        return std::nullopt;
    }
    g.gemmCsv = *csv;
    g.cluster = std::move(*cluster.value);
    return g;
}

// The shapes measure_layer.py measured (its CONFIGS): the model document
// and the plan of each.
struct GpuConfig {
    Model model;
    Plan plan;
};

std::optional<GpuConfig> gpuConfig(const std::string& config) {
    const std::string root = sa::testing::sourceDir();
    struct Shape {
        const char* name;
        const char* model;
        int tp;
        std::int64_t seq, mbs;
    };
    const Shape shapes[] = {
        {"llama3-70b-tp4", "/sample_clusters/models/llama3-70b.json", 4, 8192, 1},
        {"llama3-8b-tp1", "/sample_clusters/models/llama3-8b.json", 1, 8192, 1},
        {"gpt-1.7b-mbs4", "/tests/validation/published/models/mcore08-gpt-1.7b.json", 1, 4096, 4},
    };
    for (const Shape& s : shapes) {
        if (config != s.name)
            continue;
        auto model = loadModelFile(root + s.model);
        if (!model.ok())
            return std::nullopt;
        GpuConfig c{*model.value, Plan{}};
        c.plan.parallelism.tp = s.tp;
        c.plan.sequence_length = s.seq;
        c.plan.micro_batch_sequences = s.mbs;
        c.plan.global_batch_sequences = s.mbs;
        c.plan.sequence_parallel = s.tp > 1;
        c.plan.flash_attention = true;
        return c;
    }
    return std::nullopt;
}

// A measured variant (h200-layer.json "variants", "profiles") of a shape:
// its linears (BF16, or FP8 through torchao's tensorwise current scaling),
// its attention kernel and its elementwise ops. Compiled: torchtitan's Llama
// block under torch.compile (its complex RoPE eager); Megatron's GPT block,
// which has no RoPE, compiled stands in for Megatron's fused kernels.
std::optional<GpuConfig> variantConfig(const std::string& name, const nlohmann::json& v) {
    auto c = gpuConfig(name.substr(0, name.find('/')));
    if (!c)
        return std::nullopt;
    if (v["linear"] == "fp8")
        c->model.dtype = DType::FP8;
    Plan& p = c->plan;
    p.attention_kernel =
        v["attention"] == "cudnn" ? AttentionKernel::Cudnn : AttentionKernel::Flash2;
    const bool gpt = name.rfind("gpt-", 0) == 0;
    p.elementwise = !v["compiled"].get<bool>() ? Elementwise::Eager
                    : gpt                      ? Elementwise::Fused
                                               : Elementwise::Compiled;
    p.fp8_linear = Fp8Linear::Torchao;
    p.fp8_recipe = Fp8Recipe::Current;
    return c;
}

} // namespace

// One transformer layer on one H200 (tests/validation/gpu/measure_layer.py:
// torchtitan's Llama block at Llama 3 70B TP 4 and Llama 3.1 8B shard shapes,
// sequence 8192, BF16 and FP8 linears, eager and torch.compile; Megatron's
// GPT 1.7B block at micro batch 4, sequence 4096, compiled) against the
// layer cost the model predicts for the same plan: forward, and backward
// (input + weight gradients). The compute stream only: the measurement
// stands a local copy in for the sequence-parallel collectives, and the
// model's TP time is not part of its fwd_s / bwd.
void TestValidation::gpuLayer() {
    std::string why;
    auto g = loadGpuMeasurements(&why);
    QVERIFY2(g.has_value(), why.c_str());
    const Building& building = g->cluster.buildings.front();
    std::printf("\n%-38s %10s %10s %8s   %10s %10s %8s\n", "layer (H200)", "pred fwd", "meas fwd",
                "error", "pred bwd", "meas bwd", "error");
    ValidationStats all;
    int rows = 0;
    for (const auto& [name, v] : g->layer["variants"].items()) {
        auto shape = variantConfig(name, v);
        QVERIFY2(shape.has_value(), name.c_str());
        const LayerCost c =
            layerCost(layerContext(g->cluster, building, shape->model, shape->plan));
        const double fwd = v["fwd_s"], bwd = v["bwd_s"];
        const double pf = c.fwd_s, pb = c.bwd_input_s + c.bwd_weight_s;
        std::printf("%-38s %8.3fms %8.3fms %+7.1f%%   %8.3fms %8.3fms %+7.1f%%\n", name.c_str(),
                    pf * 1e3, fwd * 1e3, (fwd / pf - 1) * 100, pb * 1e3, bwd * 1e3,
                    (bwd / pb - 1) * 100);
        all.add(fwd / pf - 1);
        all.add(bwd / pb - 1);
        ++rows;
    }
    std::printf("layer passes: %d, mean error %+.1f%%, mean |error| %.1f%%, max |error| %.1f%% "
                "(error = measured time / predicted - 1, + = model optimistic)\n\n",
                all.count, all.mean() * 100, all.meanAbs() * 100, all.max_abs * 100);

    // Where the layer's error lies: the profiled BF16 variants' kernel time
    // by class (measure_layer.py profile_layer: GEMM, attention, the rest)
    // against the model's GEMMs, fused attention and the rest (memory-bound
    // work and launches), forward and backward together. The measurement's
    // device-to-device copies stand in for the sequence-parallel
    // collectives, which the model's layer time leaves out: not counted.
    // (FP8 variants are left out: the model counts their casts with the
    // GEMMs, the profiler with the rest.)
    std::printf("%-38s %16s %16s %16s  (ms, fwd + bwd: pred / meas)\n", "kernel classes (H200)",
                "GEMM", "attention", "other");
    ValidationStats gemmClass, attnClass, otherClass;
    const nlohmann::json profiles =
        g->layer.contains("profiles") ? g->layer["profiles"] : nlohmann::json::object();
    for (const auto& [name, prof] : profiles.items()) {
        const nlohmann::json& v = g->layer["variants"][name];
        if (v["linear"] != "bf16")
            continue;
        auto shape = variantConfig(name, v);
        QVERIFY2(shape.has_value(), name.c_str());
        const LayerCost c =
            layerCost(layerContext(g->cluster, building, shape->model, shape->plan));
        const double pg = c.gemm_s, pa = c.attention_s;
        const double po = c.gpu_fwd_s + c.gpu_bwd_s - pg - pa;
        double copies = 0;
        for (const auto& k : prof["top"])
            if (k["name"].get<std::string>().rfind("Memcpy DtoD", 0) == 0)
                copies += k["s"].get<double>();
        const double mg = prof["kernel_s"]["gemm"], ma = prof["kernel_s"]["attention"];
        const double mo = prof["kernel_s"]["other"].get<double>() - copies;
        std::printf("%-38s %7.2f / %6.2f %7.2f / %6.2f %7.2f / %6.2f\n", name.c_str(), pg * 1e3,
                    mg * 1e3, pa * 1e3, ma * 1e3, po * 1e3, mo * 1e3);
        QVERIFY(pg > 0 && pa > 0 && po > 0);
        // The kernel curves the model is built on hold inside a layer:
        // GEMMs within 15%, the attention kernel within 20% (it runs 0-16%
        // slower inside the layer than alone in the sweep above). The rest
        // is printed: the memory-bound work is where the model is furthest.
        QVERIFY2(std::abs(mg / pg - 1) <= 0.15, name.c_str());
        QVERIFY2(std::abs(ma / pa - 1) <= 0.20, name.c_str());
        gemmClass.add(mg / pg - 1);
        attnClass.add(ma / pa - 1);
        otherClass.add(mo / po - 1);
    }
    std::printf("kernel classes over %d variants, mean error (+ = model optimistic): GEMM %+.1f%%, "
                "attention %+.1f%%, other %+.1f%%\n\n",
                gemmClass.count, gemmClass.mean() * 100, attnClass.mean() * 100,
                otherClass.mean() * 100);
    QVERIFY(gemmClass.count >= 3);
    QVERIFY(rows >= 8);
    // The validation target, applied to the layer: no pass beyond 25%, the
    // mean within 10%.
    QVERIFY2(all.max_abs <= kValidationRowTarget, "a measured layer pass is off by more than 25%");
    QVERIFY2(all.meanAbs() <= kValidationFamilyTarget, "the layer passes are off by more than 10%");

    // The output layer and torchtitan's loss (F.cross_entropy on the fp32
    // logits) of one microbatch, against logitsCost with the pytorch loss.
    ValidationStats logits;
    const nlohmann::json measuredLogits =
        g->layer.contains("logits") ? g->layer["logits"] : nlohmann::json::object();
    for (const auto& [config, v] : measuredLogits.items()) {
        auto shape = gpuConfig(config);
        QVERIFY2(shape.has_value(), config.c_str());
        Plan p = shape->plan;
        p.cross_entropy = CrossEntropy::Pytorch;
        const EdgeCost c = logitsCost(layerContext(g->cluster, building, shape->model, p));
        const double fwd = v["fwd_s"], bwd = v["bwd_s"];
        std::printf("%-38s %8.3fms %8.3fms %+7.1f%%   %8.3fms %8.3fms %+7.1f%%\n",
                    (config + "/logits+loss").c_str(), c.fwd_s * 1e3, fwd * 1e3,
                    (fwd / c.fwd_s - 1) * 100, c.bwd_s * 1e3, bwd * 1e3, (bwd / c.bwd_s - 1) * 100);
        logits.add(fwd / c.fwd_s - 1);
        logits.add(bwd / c.bwd_s - 1);
    }
    std::printf("\n");
    QVERIFY(logits.count > 0);
    QVERIFY2(logits.max_abs <= kValidationRowTarget,
             "the measured logits and loss are off by more than 25%");
}

// The kernels under the layer: GEMM TFLOP/s per shape (BF16 and FP8) and
// the fused attention kernels' TFLOP/s per sequence length, measured on the
// H200, against the model's roofline for each.
void TestValidation::gpuKernels() {
    std::string why;
    auto g = loadGpuMeasurements(&why);
    QVERIFY2(g.has_value(), why.c_str());
    const GpuModel& gpu = g->cluster.gpu_models.begin()->second;
    std::vector<Diagnostic> problems;
    const GemmTable table = readGemmCsv(g->gemmCsv, "h200-gemm.csv", problems);
    QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().str().c_str());
    ValidationStats bf16, fp8;
    for (const GemmRow& r : table.rows) {
        const double e = modelGemmTflops(gpu, r) / r.tflops - 1;
        (r.precision == GemmPrecision::Fp8 ? fp8 : bf16).add(e);
    }
    std::printf("\nGEMMs (%d BF16, %d FP8 shapes): model TFLOP/s vs measured, mean %+.1f%% / "
                "%+.1f%%, mean |error| %.1f%% / %.1f%%, max |error| %.1f%% / %.1f%%\n",
                bf16.count, fp8.count, bf16.mean() * 100, fp8.mean() * 100, bf16.meanAbs() * 100,
                fp8.meanAbs() * 100, bf16.max_abs * 100, fp8.max_abs * 100);
    // The large-GEMM efficiencies the model defaults to (the H200 document
    // sets none) against the ones the measured shapes give through the
    // model's own shape factor: BF16 within 0.05 either way (runs of the
    // script differ by 0.02 with the GPU's temperature). FP8's default is
    // that of the libraries the validation runs used (docs/COST_MODEL.md,
    // FP8); CUDA 13's cuBLAS reaches more on the H200, so FP8's default is
    // held only to not promising more than the measurement.
    for (GemmPrecision prec : {GemmPrecision::Bf16, GemmPrecision::Fp8}) {
        const GemmFit fit = fitGemmEfficiency(gpu, table.rows, prec);
        const double model =
            prec == GemmPrecision::Fp8 ? gpu.gemm_efficiency_fp8 : gpu.gemm_efficiency;
        std::printf("  fitted %s efficiency %.3f (the model's %.3f), rms residual %.1f%%\n",
                    prec == GemmPrecision::Fp8 ? "FP8 " : "BF16", fit.efficiency, model,
                    fit.rms_relative_residual * 100);
        QVERIFY(fit.ok);
        if (prec == GemmPrecision::Bf16)
            QVERIFY2(std::abs(fit.efficiency - model) <= 0.05,
                     "the default BF16 large-GEMM efficiency is off the H200 measurement");
        else
            QVERIFY2(model <= fit.efficiency + 0.05,
                     "the default FP8 large-GEMM efficiency is beyond the H200 measurement");
    }
    std::printf("\n%-6s %-6s %-6s %6s %6s %10s %10s %10s %10s  (TFLOP/s)\n", "kernel", "mask",
                "layout", "tokens", "seq", "pred fwd", "meas fwd", "pred bwd", "meas bwd");
    ValidationStats attn;
    for (const auto& a : g->layer["attention"]) {
        const AttentionKernel k =
            a["kernel"] == "cudnn" ? AttentionKernel::Cudnn : AttentionKernel::Flash2;
        // An unmasked call is a CP ring step with no causal share: a CP
        // degree so large that the one causal step in it vanishes.
        const bool causal = a.value("causal", true);
        const AttentionRates r =
            attentionRates(gpu, k, a["seq"].get<double>(), causal ? 1 : 1 << 20);
        const double pf = r.fwd * gpu.peak_tflops_bf16, pb = r.bwd * gpu.peak_tflops_bf16;
        const double mf = a["fwd_tflops"], mb = a["bwd_tflops"];
        std::printf("%-6s %-6s %-6s %6d %6d %10.1f %10.1f %10.1f %10.1f\n",
                    a["kernel"].get<std::string>().c_str(), causal ? "causal" : "full",
                    a.value("layout", std::string("bhsd")).c_str(), a.value("tokens", 16384),
                    a["seq"].get<int>(), pf, mf, pb, mb);
        attn.add(pf / mf - 1);
        attn.add(pb / mb - 1);
        // FlashAttention-2 is the kernel PyTorch 2.11 runs as it ran in the
        // validation runs; each point of the layout the curves describe (16k
        // tokens, contiguous [b, h, s, d]) within 10%. Printed only: with 65k
        // tokens (four times the sequences in flight), or laid out as
        // torchtitan passes them ([b, s, h, d] transposed), sequences of 1k
        // to 2k run up to 12% faster; the curves have no batch or layout
        // term. cuDNN is printed only: the model's curve is the paper's (cuDNN
        // 9.0 era, what the Megatron and NeMo runs had), the measurement
        // cuDNN 9.19.
        if (k == AttentionKernel::Flash2 && a.value("tokens", 16384) == 16384 &&
            a.value("layout", std::string("bhsd")) == "bhsd") {
            QVERIFY2(std::abs(pf / mf - 1) <= 0.10, "FlashAttention-2 forward off by over 10%");
            QVERIFY2(std::abs(pb / mb - 1) <= 0.10, "FlashAttention-2 backward off by over 10%");
        }
    }
    std::printf(
        "attention TFLOP/s: mean error %+.1f%%, mean |error| %.1f%%, max |error| %.1f%%\n\n",
        attn.mean() * 100, attn.meanAbs() * 100, attn.max_abs * 100);
    QVERIFY(bf16.count > 0 && fp8.count > 0 && attn.count > 0);
}

QTEST_GUILESS_MAIN(TestValidation)
#include "tst_validation.moc"

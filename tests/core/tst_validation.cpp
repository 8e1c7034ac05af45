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

#include "calibrate/gemm.h"
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

namespace {

constexpr double kFamilyMeanTarget = 0.10; // mean |error| per source family
constexpr double kRowTarget = 0.25;        // no single row beyond this

struct Choice {
    Plan plan;
    Evaluation ev;
};

struct SearchSpace {
    bool microBatch = false;
    bool interleaving = false;
    // The P2P of the interleaved candidates where the run's framework sets
    // it apart from its 1F1B (runs.json "interleaved_p2p_overlap":
    // Megatron-LM overlaps only its interleaved schedule); unset: the plan's.
    std::optional<bool> interleavedP2pOverlap;
};

// Every micro batch size dividing the per-replica batch (up to 16) and
// every interleaving depth the run's framework accepts (Megatron: layers
// divisible by pp*v; a plan that states its layers per pipeline rank, as
// frameworks with uneven stages do: at least v layers on every rank; and
// microbatches divisible by pp), as far as `space` opens them; the
// fastest plan that fits memory, or with `mustFit` false the fastest of
// all when none fits.
std::optional<Choice> bestPlan(const Scenario& base, SearchSpace space, bool mustFit) {
    std::optional<Choice> best, bestUnfit;
    const Plan& p0 = base.plan;
    const std::int64_t perReplica = p0.global_batch_sequences / p0.parallelism.dp;
    Evaluator evaluator(base.cluster);
    const std::int64_t mbsLo = space.microBatch ? 1 : p0.micro_batch_sequences;
    const std::int64_t mbsHi = space.microBatch ? std::min<std::int64_t>(16, perReplica) : mbsLo;
    const int vLo = space.interleaving ? 1 : p0.schedule.virtual_stages;
    const int vHi = space.interleaving ? 8 : vLo;
    for (std::int64_t mbs = mbsLo; mbs <= mbsHi; ++mbs) {
        if (perReplica % mbs != 0)
            continue;
        const std::int64_t m = perReplica / mbs;
        for (int v = vLo; v <= vHi; ++v) {
            const int pp = p0.parallelism.pp;
            Plan p = p0;
            p.micro_batch_sequences = mbs;
            if (space.interleaving) {
                const std::vector<int> perRank =
                    p0.placement ? p0.placement->layers_per_stage : std::vector<int>{};
                const bool chunks = perRank.empty()
                                        ? base.model.layers % (pp * v) == 0
                                        : *std::min_element(perRank.begin(), perRank.end()) >= v;
                if (v > 1 && (pp == 1 || !chunks || m % pp != 0))
                    continue;
                p.schedule.kind = v > 1 ? ScheduleKind::Interleaved : ScheduleKind::OneFOneB;
                p.schedule.virtual_stages = v;
                if (v > 1 && space.interleavedP2pOverlap)
                    p.p2p_overlap = *space.interleavedP2pOverlap;
            }
            EvaluateOptions opts;
            opts.timeline = false;
            auto r = evaluator.evaluate(base.model, p, opts);
            if (!std::holds_alternative<Evaluation>(r))
                continue;
            const Evaluation& ev = std::get<Evaluation>(r);
            auto& slot = ev.memory.fits ? best : bestUnfit;
            if (!slot || ev.step_time_s < slot->ev.step_time_s)
                slot = Choice{p, ev};
        }
    }
    return best || mustFit ? best : bestUnfit;
}

std::string scheduleText(const Plan& p) {
    std::string s = toString(p.schedule.kind);
    if (p.schedule.virtual_stages > 1)
        s += " v=" + std::to_string(p.schedule.virtual_stages);
    return s;
}

struct Row {
    std::string id;
    std::string family;
    std::int64_t gpus = 0;
    std::string measuredText; // what the source published
    std::string planText;     // micro batch and schedule evaluated (* = chosen by the search)
    double predicted = 0;     // tokens/s per GPU
    double measured = 0;      // tokens/s per GPU
    bool fits = true;
    std::string kind; // the class of run (runClass), for the summary by class
    double error() const { return predicted / measured - 1.0; }
};

// The class a run belongs to across families, where the model's error is
// known to depend on it (docs/VALIDATION.md): MoE layers with expert
// parallelism, else the GPU architecture and the GEMMs' precision, with
// context parallelism apart.
std::string runClass(const Scenario& sc, const Plan& plan) {
    if (sc.model.moe && plan.parallelism.ep > 1)
        return "MoE, expert parallel";
    std::string arch = "other";
    for (const auto& [name, gpu] : sc.cluster.gpu_models)
        arch = toString(gpuArch(gpu));
    arch[0] = char(std::toupper(static_cast<unsigned char>(arch[0])));
    std::string kind = arch + (sc.model.dtype == DType::FP8 ? " FP8" : " BF16");
    if (plan.parallelism.cp > 1)
        kind += ", CP >= 2";
    return kind;
}

std::string publishedText(const nlohmann::json& run) {
    const std::string metric = run["measured_metric"];
    const double v = run["measured_value"];
    char buf[64];
    if (metric == "step_time_s")
        std::snprintf(buf, sizeof buf, "%.3f s/step", v);
    else if (metric == "model_tflops_per_gpu")
        std::snprintf(buf, sizeof buf, "%.1f TFLOP/s", v);
    else
        std::snprintf(buf, sizeof buf, "%.0f tok/s", v);
    return buf;
}

struct Stats {
    int count = 0;
    double sum = 0, sumAbs = 0, maxAbs = 0;
    void add(double e) {
        ++count;
        sum += e;
        sumAbs += std::abs(e);
        maxAbs = std::max(maxAbs, std::abs(e));
    }
    double mean() const { return count ? sum / count : 0; }
    double meanAbs() const { return count ? sumAbs / count : 0; }
};

void printRows(const std::vector<Row>& rows) {
    std::printf("\n%-38s %-21s %5s %-15s %-19s %11s %11s %8s\n", "run", "family", "gpus",
                "published", "mbs schedule", "pred tok/s", "meas tok/s", "error");
    for (const Row& r : rows)
        std::printf("%-38s %-21s %5lld %-15s %-19s %11.1f %11.1f %+7.1f%%%s\n", r.id.c_str(),
                    r.family.c_str(), (long long)r.gpus, r.measuredText.c_str(), r.planText.c_str(),
                    r.predicted, r.measured, r.error() * 100, r.fits ? "" : " (over memory)");
}

// Per family in order of first appearance, then overall; the last line says
// whether the accuracy target is met and, if not, where it is missed.
void printSummary(const std::vector<Row>& rows) {
    std::vector<std::string> order;
    std::map<std::string, Stats> byFamily;
    Stats all;
    for (const Row& r : rows) {
        if (!byFamily.count(r.family))
            order.push_back(r.family);
        byFamily[r.family].add(r.error());
        all.add(r.error());
    }
    std::printf("\n%-24s %5s %12s %12s %12s\n", "family", "runs", "mean error", "mean |error|",
                "max |error|");
    auto line = [](const std::string& name, const Stats& s) {
        std::printf("%-24s %5d %+11.1f%% %11.1f%% %11.1f%%\n", name.c_str(), s.count,
                    s.mean() * 100, s.meanAbs() * 100, s.maxAbs * 100);
    };
    for (const std::string& f : order)
        line(f, byFamily[f]);
    line("overall", all);

    std::string misses;
    for (const std::string& f : order) {
        const Stats& s = byFamily[f];
        if (s.meanAbs() > kFamilyMeanTarget) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "%sfamily %s mean |error| %.0f%%",
                          misses.empty() ? "" : ", ", f.c_str(), s.meanAbs() * 100);
            misses += buf;
        }
    }
    int over = 0;
    for (const Row& r : rows)
        over += std::abs(r.error()) > kRowTarget ? 1 : 0;
    if (over > 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%s%d of %d rows over %.0f%%", misses.empty() ? "" : "; ",
                      over, int(rows.size()), kRowTarget * 100);
        misses += buf;
    }
    std::printf("accuracy target (mean |error| <= %.0f%% per family, no row over %.0f%%): "
                "target met: %s%s%s\n\n",
                kFamilyMeanTarget * 100, kRowTarget * 100, misses.empty() ? "yes" : "no",
                misses.empty() ? "" : " (", misses.empty() ? "" : (misses + ")").c_str());

    // The same rows by class across the families (no target: a view of
    // where the model's error lies).
    std::vector<std::string> kinds;
    std::map<std::string, Stats> byKind;
    for (const Row& r : rows) {
        if (!byKind.count(r.kind))
            kinds.push_back(r.kind);
        byKind[r.kind].add(r.error());
    }
    std::sort(kinds.begin(), kinds.end());
    std::printf("%-24s %5s %12s %12s %12s\n", "class", "runs", "mean error", "mean |error|",
                "max |error|");
    for (const std::string& k : kinds)
        line(k, byKind[k]);
    std::printf("\n");
}

nlohmann::json readIndex(const std::string& path) {
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
    std::vector<Row> sc21Rows_;
};

void TestValidation::publishedRuns() {
    const std::string dir = sa::testing::sourceDir() + "/tests/validation/";
    const auto index = readIndex(dir + "runs.json");
    QVERIFY(index.contains("runs"));
    sc21Rows_.clear();
    double sumAbs = 0, maxAbs = 0;
    int rows = 0;
    std::printf("\n%-22s %5s %4s %-14s %10s %10s %8s %7s %7s\n", "run", "gpus", "mbs", "schedule",
                "pred [s]", "meas [s]", "error", "HFU", "MFU");
    for (const auto& run : index["runs"]) {
        const std::string id = run["id"];
        auto loaded = loadScenarioFiles(dir + run["cluster"].get<std::string>(),
                                        dir + run["model"].get<std::string>(),
                                        dir + run["plan"].get<std::string>());
        QVERIFY2(loaded.ok(),
                 loaded.problems.empty() ? id.c_str() : loaded.problems.front().str().c_str());
        auto best = bestPlan(*loaded.value, SearchSpace{true, true, std::nullopt}, true);
        QVERIFY2(best.has_value(), ("no plan fits memory for " + id).c_str());
        const double measured = run["measured_step_time_s"];
        const double predicted = best->ev.step_time_s;
        // Throughput error: predicted throughput vs measured throughput.
        const double err = measured / predicted - 1.0;
        const std::string sched = scheduleText(best->plan);
        std::printf("%-22s %5lld %4lld %-14s %10.3f %10.3f %+7.1f%% %6.1f%% %6.1f%%\n", id.c_str(),
                    (long long)best->ev.gpus, (long long)best->plan.micro_batch_sequences,
                    sched.c_str(), predicted, measured, err * 100, best->ev.hfu * 100,
                    best->ev.mfu * 100);
        sumAbs += std::abs(err);
        maxAbs = std::max(maxAbs, std::abs(err));
        ++rows;

        const double tokensPerGpu = double(best->plan.global_batch_sequences) *
                                    best->plan.sequence_length / double(best->ev.gpus);
        char measuredText[32];
        std::snprintf(measuredText, sizeof measuredText, "%.3f s/step", measured);
        sc21Rows_.push_back(
            Row{id, "megatron-sc21", best->ev.gpus, measuredText,
                std::to_string(best->plan.micro_batch_sequences) + "* " + sched + "*",
                tokensPerGpu / predicted, tokensPerGpu / measured, true,
                runClass(*loaded.value, best->plan)});
    }
    QVERIFY(rows > 0);
    const double mean = sumAbs / rows;
    std::printf("throughput error over %d runs: mean |error| %.1f%%, max |error| %.1f%%\n\n", rows,
                mean * 100, maxAbs * 100);
    QVERIFY2(mean <= 0.10, "mean |error| above 10%");
    QVERIFY2(maxAbs <= 0.20, "a run is off by more than 20%");
}

void TestValidation::widerRuns() {
    if (sc21Rows_.empty()) // run on its own (tst_validation widerRuns): the SC'21 rows first
        publishedRuns();
    const std::string dir = sa::testing::sourceDir() + "/tests/validation/published/";
    const auto index = readIndex(dir + "runs.json");
    QVERIFY2(index.contains("runs"), (dir + "runs.json").c_str());

    std::vector<Row> rows = sc21Rows_;
    std::vector<double> bf16HopperErrors; // dense BF16 runs on Hopper: predicted / measured - 1
    for (const auto& run : index["runs"]) {
        const std::string id = run["id"];
        auto loaded = loadScenarioFiles(dir + run["cluster"].get<std::string>(),
                                        dir + run["model"].get<std::string>(),
                                        dir + run["plan"].get<std::string>());
        QVERIFY2(loaded.ok(), (id + ": " +
                               (loaded.problems.empty() ? std::string("does not load")
                                                        : loaded.problems.front().str()))
                                  .c_str());
        SearchSpace space;
        for (const auto& knob : run.value("search", nlohmann::json::array())) {
            space.microBatch |= knob == "micro_batch_sequences";
            space.interleaving |= knob == "virtual_stages";
        }
        if (run.contains("interleaved_p2p_overlap"))
            space.interleavedP2pOverlap = run["interleaved_p2p_overlap"].get<bool>();
        auto choice = bestPlan(*loaded.value, space, false);
        QVERIFY2(choice.has_value(), (id + ": does not evaluate").c_str());
        const Evaluation& ev = choice->ev;
        const double predicted = ev.tokens_per_s / double(ev.gpus);
        const double measured = run["measured_tokens_per_s_per_gpu"];
        QVERIFY2(std::isfinite(predicted) && predicted > 0, id.c_str());
        QVERIFY2(measured > 0, id.c_str());
        // The evaluation's "accuracy:" notes tell a user that every MoE run
        // with expert parallelism here comes out too fast, and the other
        // BF16 runs on Hopper on average: they hold while it is true, and
        // each note carries the evaluations of its runs, and only those.
        const Scenario& sc = *loaded.value;
        const bool expertParallel = sc.model.moe && choice->plan.parallelism.ep > 1;
        bool bf16Hopper = false;
        for (const auto& [name, gpu] : sc.cluster.gpu_models)
            bf16Hopper =
                bf16Hopper || (sc.model.dtype == DType::BF16 && gpuArch(gpu) == GpuArch::Hopper);
        std::string note;
        for (const std::string& w : ev.warnings)
            if (w.rfind("accuracy:", 0) == 0)
                note = w;
        QVERIFY2(expertParallel == (note.find("expert parallelism") != std::string::npos),
                 id.c_str());
        QVERIFY2((bf16Hopper && !expertParallel) == (note.find("BF16") != std::string::npos),
                 id.c_str());
        if (expertParallel)
            QVERIFY2(predicted > measured,
                     (id + ": an MoE run with expert parallelism now comes out pessimistic; "
                           "revise the evaluation's accuracy note")
                         .c_str());
        else if (bf16Hopper)
            bf16HopperErrors.push_back(predicted / measured - 1.0);
        const char* mark = space.microBatch || space.interleaving ? "*" : "";
        rows.push_back(Row{id, run["family"], ev.gpus, publishedText(run),
                           std::to_string(choice->plan.micro_batch_sequences) +
                               (space.microBatch ? "* " : " ") + scheduleText(choice->plan) +
                               (space.interleaving ? mark : ""),
                           predicted, measured, ev.memory.fits, runClass(sc, choice->plan)});
    }
    QCOMPARE(rows.size(), sc21Rows_.size() + index["runs"].size());
    double bf16HopperMean = 0;
    for (double e : bf16HopperErrors)
        bf16HopperMean += e / double(bf16HopperErrors.size());
    QVERIFY2(!bf16HopperErrors.empty() && bf16HopperMean > 0,
             "the dense BF16 runs on Hopper no longer come out too fast on average; revise the "
             "evaluation's accuracy note");

    printRows(rows);
    std::printf("(* chosen by the test: not published. pred/meas: tokens/s per GPU; error = "
                "predicted / measured - 1, + = model optimistic)\n");
    printSummary(rows);

    std::map<std::string, int> families;
    for (const Row& r : rows)
        ++families[r.family];
    QVERIFY(rows.size() >= 30);
    QVERIFY(families.size() >= 5);
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
    g.layer = readIndex(dir + "h200-layer.json");
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
    Stats all;
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
                all.count, all.mean() * 100, all.meanAbs() * 100, all.maxAbs * 100);

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
    Stats gemmClass, attnClass, otherClass;
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
    QVERIFY2(all.maxAbs <= kRowTarget, "a measured layer pass is off by more than 25%");
    QVERIFY2(all.meanAbs() <= kFamilyMeanTarget, "the layer passes are off by more than 10%");

    // The output layer and torchtitan's loss (F.cross_entropy on the fp32
    // logits) of one microbatch, against logitsCost with the pytorch loss.
    Stats logits;
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
    QVERIFY2(logits.maxAbs <= kRowTarget, "the measured logits and loss are off by more than 25%");
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
    Stats bf16, fp8;
    for (const GemmRow& r : table.rows) {
        const double e = modelGemmTflops(gpu, r) / r.tflops - 1;
        (r.precision == GemmPrecision::Fp8 ? fp8 : bf16).add(e);
    }
    std::printf("\nGEMMs (%d BF16, %d FP8 shapes): model TFLOP/s vs measured, mean %+.1f%% / "
                "%+.1f%%, mean |error| %.1f%% / %.1f%%, max |error| %.1f%% / %.1f%%\n",
                bf16.count, fp8.count, bf16.mean() * 100, fp8.mean() * 100, bf16.meanAbs() * 100,
                fp8.meanAbs() * 100, bf16.maxAbs * 100, fp8.maxAbs * 100);
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
    Stats attn;
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
        attn.mean() * 100, attn.meanAbs() * 100, attn.maxAbs * 100);
    QVERIFY(bf16.count > 0 && fp8.count > 0 && attn.count > 0);
}

QTEST_GUILESS_MAIN(TestValidation)
#include "tst_validation.moc"

// Speed of the cost model: sa::evaluate for Llama 3 405B on 16,384 GPUs in
// one building (the production plan) and on ~100,000 GPUs over three
// buildings, with the full output (timeline, breakdown, links, warnings)
// and lean (what the optimizer's hot loop asks for). One thread.
//
//   "scenario" rows call sa::evaluate(Scenario): topology built every call;
//   "evaluator" rows reuse an sa::Evaluator (topology and routes built once),
//   as the optimizer and the GUI do.
//
// Target: <= 1 ms per evaluation. Run:
//   build/tests/benchmarks/bench_evaluate --benchmark_min_time=1

#include "cost/evaluate.h"
#include "formats/documents.h"

#include "../common/fixtures.h"

#include <benchmark/benchmark.h>

#include <map>
#include <string>

namespace {

const sa::Scenario& scenario(const std::string& name) {
    static std::map<std::string, sa::Scenario> cache;
    auto it = cache.find(name);
    if (it != cache.end())
        return it->second;
    return cache.emplace(name, sa::testing::loadSampleScenario(name + ".json")).first->second;
}

sa::EvaluateOptions optionsFor(bool lean) {
    sa::EvaluateOptions o; // full: timeline + validate + detail
    if (lean)
        o = sa::EvaluateOptions{false, false, false};
    return o;
}

void setCounters(benchmark::State& state, const sa::EvaluationResult& r) {
    if (const auto* ev = std::get_if<sa::Evaluation>(&r)) {
        state.counters["gpus"] = double(ev->gpus);
        state.counters["step_s"] = ev->step_time_s;
        state.counters["ops"] = double(ev->timeline.ops.size());
    } else {
        state.SkipWithError("evaluation failed");
    }
}

void BM_EvaluateScenario(benchmark::State& state, const std::string& name, bool lean) {
    const sa::Scenario& sc = scenario(name);
    const sa::EvaluateOptions opts = optionsFor(lean);
    sa::EvaluationResult last = sa::evaluate(sc, opts);
    for (auto _ : state) {
        sa::EvaluationResult r = sa::evaluate(sc, opts);
        benchmark::DoNotOptimize(r);
    }
    setCounters(state, last);
}

void BM_EvaluateEvaluator(benchmark::State& state, const std::string& name, bool lean) {
    const sa::Scenario& sc = scenario(name);
    const sa::Evaluator evaluator(sc.cluster);
    const sa::EvaluateOptions opts = optionsFor(lean);
    sa::EvaluationResult last = evaluator.evaluate(sc.model, sc.plan, opts);
    for (auto _ : state) {
        sa::EvaluationResult r = evaluator.evaluate(sc.model, sc.plan, opts);
        benchmark::DoNotOptimize(r);
    }
    setCounters(state, last);
}

} // namespace

// Llama 3 405B production plan: TP8 PP16 DP128, 16,384 H100 in one building.
BENCHMARK_CAPTURE(BM_EvaluateScenario, 405b_16k_full, "single-building-405b", false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EvaluateScenario, 405b_16k_lean, "single-building-405b", true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EvaluateEvaluator, 405b_16k_full, "single-building-405b", false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EvaluateEvaluator, 405b_16k_lean, "single-building-405b", true)
    ->Unit(benchmark::kMicrosecond);

// Llama 3 405B on ~100k H100 over three buildings in two regions.
BENCHMARK_CAPTURE(BM_EvaluateScenario, 405b_3bldg_full, "three-buildings-405b", false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EvaluateScenario, 405b_3bldg_lean, "three-buildings-405b", true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EvaluateEvaluator, 405b_3bldg_full, "three-buildings-405b", false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_EvaluateEvaluator, 405b_3bldg_lean, "three-buildings-405b", true)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();

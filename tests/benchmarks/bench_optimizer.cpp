// Speed of the optimizer on Llama 3 405B over the three-building sample
// (98,304 H100, sample_clusters/scenarios/three-buildings-405b.json):
//
//   BM_Evaluations/threads:N  evaluations per second of the search on N
//                             threads: the default space's enumerated part
//                             (no descent, no baselines), space construction
//                             and pruning included
//   BM_Precheck               cheap checks per second (memory lower bound,
//                             layer split), what pruning costs
//   BM_DefaultSearch          the default full search as `scaleacross
//                             optimize` runs it (2 threads, baselines included)
//
// Target (issue 5): >= 100,000 evaluations/s on 2 threads and <= 10 s for the
// default search. Run:
//   build/tests/benchmarks/bench_optimizer --benchmark_min_time=1s

#include "cost/evaluate.h"
#include "explore/designspace.h"
#include "explore/optimizer.h"
#include "formats/documents.h"

#include "../common/fixtures.h"

#include <benchmark/benchmark.h>

#include <sys/resource.h>

namespace {

const sa::Scenario& sample() {
    static const sa::Scenario s = sa::testing::loadSampleScenario("three-buildings-405b.json");
    return s;
}

// CPU seconds of the whole process (all threads): on a shared machine the
// wall clock also counts other jobs, CPU time per evaluation does not.
double processCpuS() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

const sa::Evaluator& evaluator() {
    static const sa::Evaluator e(sample().cluster);
    return e;
}

void BM_Evaluations(benchmark::State& state) {
    sa::OptimizerOptions o;
    o.threads = int(state.range(0));
    o.seeds = 0; // the enumerated part only: every evaluation is one of the search loop
    o.baselines = false;
    std::int64_t evaluated = 0;
    double searchS = 0, cpuS = 0;
    for (auto _ : state) {
        const double cpu0 = processCpuS();
        const sa::OptimizerResult r = sa::optimize(evaluator(), sample().model, sample().plan, o);
        cpuS += processCpuS() - cpu0;
        evaluated += r.evaluated;
        searchS += r.search_s;
        benchmark::DoNotOptimize(r.top.data());
    }
    state.counters["evaluations"] = double(evaluated) / double(state.iterations());
    state.counters["evaluations_per_s"] = searchS > 0 ? double(evaluated) / searchS : 0.0;
    state.counters["cpu_us_per_evaluation"] = evaluated > 0 ? cpuS * 1e6 / double(evaluated) : 0.0;
}
BENCHMARK(BM_Evaluations)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("threads")
    ->Iterations(10)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

void BM_Precheck(benchmark::State& state) {
    const sa::DesignSpace space(sample().cluster, sample().model, sample().plan);
    sa::Candidate c;
    c.choice.assign(std::size_t(space.axisCount()), 0);
    std::size_t s = 0;
    std::int64_t n = 0;
    for (auto _ : state) {
        c.structure = std::uint32_t(s);
        const int nr = space.choices(s, sa::DesignSpace::kRecompute);
        c.choice[sa::DesignSpace::kRecompute] = std::uint16_t(n % nr);
        benchmark::DoNotOptimize(space.precheck(c));
        s = (s + 1) % space.structureCount();
        ++n;
    }
    state.SetItemsProcessed(n);
}
BENCHMARK(BM_Precheck);

void BM_DefaultSearch(benchmark::State& state) {
    sa::OptimizerOptions o;
    o.threads = 2;
    sa::OptimizerResult last;
    double cpuS = 0, searchS = 0;
    std::int64_t evaluated = 0;
    for (auto _ : state) {
        const double cpu0 = processCpuS();
        last = sa::optimize(evaluator(), sample().model, sample().plan, o);
        cpuS += processCpuS() - cpu0;
        searchS += last.search_s;
        evaluated += last.evaluated;
    }
    state.counters["cpu_s"] = cpuS / double(state.iterations());
    state.counters["evaluated"] = double(last.evaluated);
    state.counters["evaluations_per_s"] = searchS > 0 ? double(evaluated) / searchS : 0.0;
    state.counters["best_step_s"] = last.top.empty() ? 0.0 : last.top.front().step_time_s;
    for (const auto& b : last.baselines)
        if (const auto s = last.speedupOver(b))
            state.counters["speedup_" + b.name] = *s;
    state.SetLabel(last.strategy.name);
}
BENCHMARK(BM_DefaultSearch)->Iterations(5)->Unit(benchmark::kSecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();

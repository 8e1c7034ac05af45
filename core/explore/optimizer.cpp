#include "explore/optimizer.h"

#include "cost/compute.h"
#include "cost/network.h"
#include "formats/documents.h"
#include "util/parallel.h"

#include <nlohmann/json.hpp>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <set>
#include <unordered_map>

namespace sa {

const char* toString(Objective o) {
    switch (o) {
    case Objective::StepTime:
        return "step-time";
    case Objective::Cost:
        return "cost";
    case Objective::CrossBuildingBytes:
        return "cross-building-bytes";
    case Objective::TimeToTokens:
        return "time-to-tokens";
    case Objective::TimeToLoss:
        return "time-to-loss";
    case Objective::Energy:
        return "energy";
    }
    return "?";
}

std::optional<Objective> objectiveFromString(const std::string& s) {
    for (Objective o : kAllObjectives)
        if (s == toString(o))
            return o;
    return std::nullopt;
}

bool clusterPriced(const Cluster& cluster) {
    for (const Building& b : cluster.buildings)
        if (b.gpu_hour_usd > 0)
            return true;
    for (const Link& l : cluster.links)
        if (l.price_per_gb_usd > 0)
            return true;
    return false;
}

RunScores runScores(const Evaluation& ev, bool priced) {
    RunScores r;
    const double goodput = ev.goodput.goodput > 0 ? ev.goodput.goodput : 1;
    r.goodput = goodput;
    const double multiplier = ev.outer_sync ? ev.outer_sync->token_multiplier : 1;
    const double unpriced = ev.step_time_s * double(ev.gpus) / goodput;
    if (ev.run) {
        r.time_to_tokens_s = ev.run->time_s;
        r.time_to_loss_s = ev.run->time_to_loss_s;
        r.cost = priced ? ev.run->cost_usd : unpriced * ev.run->steps;
        r.energy_kwh = ev.run->energy_kwh;
    } else {
        r.time_to_tokens_s = ev.step_time_s / goodput;
        r.time_to_loss_s = r.time_to_tokens_s * multiplier;
        r.cost = priced ? ev.cost.cost_usd_per_step / goodput : unpriced;
        r.energy_kwh = ev.cost.energy_kwh_per_step / goodput;
    }
    return r;
}

std::int64_t OptimizerResult::prunedTotal() const {
    std::int64_t n = 0;
    for (const auto& [why, count] : pruned)
        n += count;
    return n;
}

std::optional<double> OptimizerResult::speedupOver(const BaselineResult& b) const {
    if (!b.feasible || top.empty() || top.front().step_time_s <= 0)
        return std::nullopt;
    return b.step_time_s / top.front().step_time_s - 1.0;
}

namespace {

using Clock = std::chrono::steady_clock;
// Step time, memory, MFU and cross-building bytes (ZeRO-3's and EP's
// traffic included) are the same as with detail; breakdown and per-link
// usage are left out.
const EvaluateOptions kLean{false, false, false};
// Raw points of the enumerated prefix per partition: coarse enough that
// scheduling costs nothing next to the evaluations, fine enough to balance
// two cores and many shards.
constexpr std::uint64_t kPartitionPoints = 64;
// The staged strategy counts the survivors of a prefix only when its raw
// size is below this multiple of the evaluation budget.
constexpr std::int64_t kRawPerEvaluation = 12;
constexpr const char* kMemoryEvaluated = "memory (evaluated)";
constexpr const char* kPlacementRejected = "placement: a building would hold more GPUs than it has";
constexpr const char* kModelRejected = "rejected by the cost model";
constexpr const char* kInvalid = "invalid plan (validation)";
constexpr const char* kBoundRejected = "bound: cannot beat the top list or its seed";

struct Entry {
    Candidate key;
    double step = 0, bytes = 0, gpuSeconds = 0, mfu = 0, tokens = 0, peak = 0;
    double modelFlops = 0; // per step (the same for every plan of one model and batch)
    std::int64_t gpus = 0;
    RunScores run;
};

std::pair<double, double> scoreOf(double step, double bytes, const RunScores& run, Objective o) {
    switch (o) {
    case Objective::StepTime:
        return {step, bytes};
    case Objective::Cost:
        return {run.cost, step};
    case Objective::CrossBuildingBytes:
        return {bytes, step};
    case Objective::TimeToTokens:
        return {run.time_to_tokens_s, step};
    case Objective::TimeToLoss:
        return {run.time_to_loss_s, step};
    case Objective::Energy:
        return {run.energy_kwh, step};
    }
    return {step, bytes};
}

bool sameScore(const Entry& a, const Entry& b, Objective o) {
    return scoreOf(a.step, a.bytes, a.run, o) == scoreOf(b.step, b.bytes, b.run, o);
}

bool better(const Entry& a, const Entry& b, Objective o) {
    const auto scoreA = scoreOf(a.step, a.bytes, a.run, o);
    const auto scoreB = scoreOf(b.step, b.bytes, b.run, o);
    if (scoreA != scoreB)
        return scoreA < scoreB;
    return a.key < b.key;
}

template <class T> bool dominates(const T& a, const T& b) {
    if (a.step > b.step || a.bytes > b.bytes)
        return false;
    return a.step < b.step || a.bytes < b.bytes || a.key < b.key;
}

// The 2-D Pareto front (step time, bytes) with ties broken by key.
template <class T> std::vector<T> paretoFront(std::vector<T> pts) {
    std::sort(pts.begin(), pts.end(), [](const T& a, const T& b) {
        if (a.step != b.step)
            return a.step < b.step;
        if (a.bytes != b.bytes)
            return a.bytes < b.bytes;
        return a.key < b.key;
    });
    std::vector<T> out;
    for (T& p : pts)
        if (out.empty() || p.bytes < out.back().bytes)
            out.push_back(std::move(p));
    return out;
}

struct Accumulator {
    Objective objective = Objective::StepTime;
    std::size_t k = 10;
    std::vector<Entry> top; // best first, unique keys
    std::vector<Entry> pareto;
    std::unordered_map<std::uint32_t, Entry> bestPerStructure;
    std::int64_t evaluated = 0, feasible = 0, considered = 0;
    std::unordered_map<const char*, std::int64_t> pruned;

    // Top-K of distinct scores: plans that score exactly alike (e.g. a
    // link technology on a link the plan does not use) are kept once, by
    // their smallest key.
    void offer(const Entry& e) {
        if (top.size() < k || better(e, top.back(), objective)) {
            auto it =
                std::lower_bound(top.begin(), top.end(), e, [&](const Entry& a, const Entry& b) {
                    return better(a, b, objective);
                });
            if (it != top.begin() && sameScore(*(it - 1), e, objective)) {
                // an equal plan with a smaller (or the same) key is kept
            } else if (it != top.end() && sameScore(*it, e, objective)) {
                *it = e;
            } else {
                top.insert(it, e);
                if (top.size() > k)
                    top.pop_back();
            }
        }
        bool keep = true;
        for (const Entry& p : pareto)
            if (p.key == e.key || dominates(p, e)) {
                keep = false;
                break;
            }
        if (keep) {
            std::erase_if(pareto, [&](const Entry& p) { return dominates(e, p); });
            pareto.push_back(e);
        }
        auto [it, inserted] = bestPerStructure.try_emplace(e.key.structure, e);
        if (!inserted && better(e, it->second, objective))
            it->second = e;
    }
};

struct SearchContext {
    SearchContext(const DesignSpace& s, const Evaluator& e, const Model& m,
                  const OptimizerOptions& o)
        : space(s)
        , evaluator(e)
        , model(m)
        , options(o)
        , costInGpuSeconds(!clusterPriced(e.cluster())) {
        const double perStep =
            double(s.base().global_batch_sequences) * double(s.base().sequence_length);
        if (s.base().token_budget > 0 && perStep > 0)
            runSteps = s.base().token_budget / perStep;
    }

    const DesignSpace& space;
    const Evaluator& evaluator;
    const Model& model;
    const OptimizerOptions& options;
    bool costInGpuSeconds = true;
    double runSteps = 1; // steps of the base plan's token budget (1 without one)
    // Per thread: the plan being evaluated (its storage reused) and what
    // the evaluator keeps from one plan to the next.
    struct Worker {
        explicit Worker(const Plan& base)
            : plan(base) {}
        Plan plan;
        EvaluationCache cache;
    };
    tbb::enumerable_thread_specific<Worker> workers{std::cref(space.base())};
    std::atomic<std::int64_t> done{0};
    std::atomic<std::int64_t> total{0};
    std::mutex progressMutex;
    Clock::time_point lastProgress = Clock::now();

    bool cancelled() const {
        return options.cancel && options.cancel->load(std::memory_order_relaxed);
    }
    void tick() {
        const std::int64_t d = done.fetch_add(1, std::memory_order_relaxed) + 1;
        if (!options.progress)
            return;
        const auto now = Clock::now();
        std::unique_lock lock(progressMutex, std::try_to_lock);
        if (!lock.owns_lock() || now - lastProgress < std::chrono::milliseconds(50))
            return;
        lastProgress = now;
        options.progress(d, total.load(std::memory_order_relaxed));
    }
    void finalProgress() {
        if (!options.progress)
            return;
        std::lock_guard lock(progressMutex);
        options.progress(done.load(), total.load());
    }
};

// Evaluates a candidate that passed the cheap checks.
std::optional<Entry> evaluateChecked(SearchContext& ctx, const Candidate& c, Accumulator& acc) {
    SearchContext::Worker& worker = ctx.workers.local();
    ctx.space.planInto(c, worker.plan);
    const Plan& plan = worker.plan;
    ++acc.evaluated;
    const EvaluationResult res = ctx.evaluator.evaluate(ctx.model, plan, kLean, &worker.cache);
    if (const auto* err = std::get_if<EvaluationError>(&res)) {
        const bool placement = !err->problems.empty() && err->problems.front().message.find(
                                                             "would hold") != std::string::npos;
        ++acc.pruned[placement ? kPlacementRejected : kModelRejected];
        return std::nullopt;
    }
    const Evaluation& ev = std::get<Evaluation>(res);
    if (!ev.memory.fits) {
        ++acc.pruned[kMemoryEvaluated];
        return std::nullopt;
    }
    ++acc.feasible;
    Entry e;
    e.key = c;
    e.step = ev.step_time_s;
    // Whole bytes: sums over links differ in the last bits between
    // equivalent plans, which would split Pareto points.
    e.bytes = std::round(ev.cross_building_bytes);
    e.gpus = ev.gpus;
    e.gpuSeconds = ev.step_time_s * double(ev.gpus);
    e.mfu = ev.mfu;
    e.tokens = ev.tokens_per_s;
    e.peak = ev.memory.peak_gib_per_gpu;
    e.modelFlops = ev.model_flops_per_step;
    e.run = runScores(ev, !ctx.costInGpuSeconds);
    acc.offer(e);
    return e;
}

std::optional<Entry> evaluateCandidate(SearchContext& ctx, const Candidate& c, Accumulator& acc) {
    ++acc.considered;
    if (const char* why = ctx.space.precheck(c)) {
        ++acc.pruned[why];
        return std::nullopt;
    }
    return evaluateChecked(ctx, c, acc);
}

// The enumerated part: every combination of the first `prefix` axes; the
// other axes at their first choice, or, where that fails the cheap checks,
// the first combination of the memory axes (recompute, zero, layers) that
// passes.
class PrefixSpace {
public:
    PrefixSpace(const DesignSpace& space, int prefix)
        : space_(space)
        , prefix_(prefix) {
        offsets_.push_back(0);
        constexpr std::uint64_t kCap = std::uint64_t(1) << 62; // as prefixCount: no overflow
        for (std::size_t s = 0; s < space.structureCount(); ++s)
            offsets_.push_back(std::min(kCap, offsets_.back() + space.prefixCount(s, prefix)));
        for (int a : {DesignSpace::kRecompute, DesignSpace::kZero, DesignSpace::kLayers})
            if (a >= prefix)
                repairAxes_.push_back(a);
    }
    std::uint64_t size() const { return offsets_.back(); }
    std::uint64_t partitions() const { return (size() + kPartitionPoints - 1) / kPartitionPoints; }

    Candidate decode(std::uint64_t i) const {
        const auto it = std::upper_bound(offsets_.begin(), offsets_.end(), i);
        const std::size_t s = std::size_t(it - offsets_.begin()) - 1;
        std::uint64_t r = i - offsets_[s];
        Candidate c;
        c.structure = std::uint32_t(s);
        c.choice.assign(std::size_t(space_.axisCount()), 0);
        for (int a = prefix_ - 1; a >= 0; --a) {
            const auto n = std::uint64_t(space_.choices(s, a));
            c.choice[std::size_t(a)] = std::uint16_t(r % n);
            r /= n;
        }
        return c;
    }

    // nullptr and the repaired candidate, or the reason of the first failure.
    const char* complete(Candidate& c) const {
        const char* first = space_.precheck(c);
        if (!first || repairAxes_.empty())
            return first;
        const std::size_t s = c.structure;
        Candidate t = c;
        std::vector<int> idx(repairAxes_.size(), 0);
        while (true) {
            // Odometer, last axis fastest.
            std::size_t k = idx.size();
            while (k > 0) {
                --k;
                if (++idx[k] < space_.choices(s, repairAxes_[k]))
                    break;
                idx[k] = 0;
                if (k == 0)
                    return first;
            }
            for (std::size_t j = 0; j < idx.size(); ++j)
                t.choice[std::size_t(repairAxes_[j])] = std::uint16_t(idx[j]);
            if (!space_.precheck(t)) {
                c = t;
                return nullptr;
            }
        }
    }

private:
    const DesignSpace& space_;
    int prefix_;
    std::vector<std::uint64_t> offsets_;
    std::vector<int> repairAxes_;
};

Accumulator merged(tbb::enumerable_thread_specific<Accumulator>& locals, Objective o,
                   std::size_t k) {
    Accumulator out;
    out.objective = o;
    out.k = k;
    std::vector<Entry> top, pareto;
    for (Accumulator& a : locals) {
        top.insert(top.end(), a.top.begin(), a.top.end());
        pareto.insert(pareto.end(), a.pareto.begin(), a.pareto.end());
        out.evaluated += a.evaluated;
        out.feasible += a.feasible;
        out.considered += a.considered;
        for (const auto& [why, n] : a.pruned)
            out.pruned[why] += n;
        for (const auto& [s, e] : a.bestPerStructure) {
            auto [it, inserted] = out.bestPerStructure.try_emplace(s, e);
            if (!inserted && better(e, it->second, o))
                it->second = e;
        }
    }
    std::sort(top.begin(), top.end(),
              [&](const Entry& a, const Entry& b) { return better(a, b, o); });
    top.erase(std::unique(top.begin(), top.end(),
                          [&](const Entry& a, const Entry& b) { return sameScore(a, b, o); }),
              top.end());
    if (top.size() > k)
        top.resize(k);
    out.top = std::move(top);
    out.pareto = paretoFront(std::move(pareto));
    return out;
}

ScoredPlan materialise(const DesignSpace& space, const Entry& e, const std::string& name) {
    ScoredPlan p;
    p.key = e.key;
    p.label = space.label(e.key);
    p.plan = space.plan(e.key);
    p.plan.name = name;
    p.step_time_s = e.step;
    p.cross_building_bytes = e.bytes;
    p.gpu_seconds = e.gpuSeconds;
    p.mfu = e.mfu;
    p.tokens_per_s = e.tokens;
    p.peak_gib_per_gpu = e.peak;
    p.gpus = e.gpus;
    p.run = e.run;
    return p;
}

std::string inputDigest(const Cluster& cluster, const Model& model, const Plan& base,
                        const OptimizerOptions& o) {
    std::string text =
        dumpCanonical(toJson(cluster)) + dumpCanonical(toJson(model)) + dumpCanonical(toJson(base));
    const DesignSpaceOptions& sp = o.space;
    auto add = [&](const auto& list) {
        for (const auto& x : list)
            text += std::to_string(int(x)) + ",";
        text += ";";
    };
    text += std::string(toString(o.objective)) + ";" + std::to_string(int(sp.size)) + ";" +
            std::to_string(sp.gpu_budget) + ";" + std::to_string(o.max_evaluations) + ";" +
            std::to_string(o.seeds) + ";" + std::to_string(o.max_rounds) + ";" +
            std::to_string(o.top_k) + ";" + std::to_string(sp.vary_placement) +
            std::to_string(sp.vary_layers) + std::to_string(sp.vary_links) + ";" +
            std::to_string(sp.max_link_axes) + ";";
    add(sp.tp);
    add(sp.cp);
    add(sp.pp);
    add(sp.ep);
    add(sp.etp);
    add(sp.micro_batch);
    add(sp.zero_stages);
    add(sp.recompute);
    add(sp.dp_algos);
    for (const Schedule& x : sp.schedules)
        text += std::to_string(int(x.kind)) + "/" + std::to_string(x.virtual_stages) + "/" +
                std::to_string(x.latency_hiding) + ",";
    // What seeds the search and restricts it changes what the shards find.
    text += ";" + std::to_string(o.baselines) + std::to_string(o.seed_full_from_default) +
            std::to_string(sp.vary_latency_hiding) + ";" + std::to_string(o.baseline_evaluations) +
            ";";
    for (const auto* list : {&sp.placement_kinds, &sp.link_technologies}) {
        for (const std::string& x : *list)
            text += x + ",";
        text += ";";
    }
    // The network knobs the search may set (nothing added without them).
    if (!sp.nccl_buffsize_mib.empty() || !sp.nccl_channels.empty() || !sp.routings.empty()) {
        text += "network;";
        for (double b : sp.nccl_buffsize_mib)
            text += std::to_string(b) + ",";
        text += ";";
        add(sp.nccl_channels);
        for (const Routing& r : sp.routings)
            text += std::string(toString(r.policy)) + "/" + toString(r.ecmp_metric) + "/" +
                    std::to_string(r.ecmp_tolerance) + ",";
        text += ";";
    }
    if (!sp.outer_syncs.empty()) {
        text += "outer;";
        for (const std::optional<OuterSync>& x : sp.outer_syncs) {
            Plan p;
            p.outer_sync = x;
            text += x ? dumpCanonical(toJson(p)) : std::string("none,");
        }
        text += ";";
    }
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

using Accumulators = tbb::enumerable_thread_specific<Accumulator>;

// What the result says about its inputs, before anything is searched.
OptimizerResult describeInputs(const Evaluator& evaluator, const Model& model, const Plan& base,
                               const OptimizerOptions& options) {
    OptimizerResult result;
    result.cluster = evaluator.cluster().name;
    result.model = model.name;
    result.input_digest = inputDigest(evaluator.cluster(), model, base, options);
    result.objective = options.objective;
    result.top_k = std::max(1, options.top_k);
    result.shard_count = std::max(1, options.shard_count);
    result.shard_index = std::clamp(options.shard_index, 0, result.shard_count - 1);
    return result;
}

void describeSpace(const DesignSpace& space, OptimizerResult& result) {
    result.gpu_budget = space.gpuBudget();
    result.space_size = space.size();
    result.structures = std::int64_t(space.structureCount());
    if (result.shard_index == 0) // counted once over all shards
        for (const auto& [why, n] : space.structurePruned())
            result.pruned["structure: " + why] += n;
}

// Candidates of the prefix that pass the cheap checks; every shard counts
// all of them, so that all shards choose the same prefix.
std::int64_t countSurvivors(const PrefixSpace& ps, SearchContext& ctx, tbb::task_arena& arena) {
    tbb::enumerable_thread_specific<std::int64_t> counts(0);
    parallelChunks(ps.size(), 512, &arena, [&](std::uint64_t begin, std::uint64_t end) {
        std::int64_t& n = counts.local();
        if (ctx.cancelled())
            return;
        for (std::uint64_t i = begin; i != end; ++i) {
            Candidate c = ps.decode(i);
            if (!ps.complete(c))
                ++n;
        }
    });
    std::int64_t survivors = 0;
    for (std::int64_t n : counts)
        survivors += n;
    return survivors;
}

// The most leading axes whose every combination fits the evaluation budget.
// The survivors of the cheap checks are counted only where the raw count is
// within kRawPerEvaluation of the budget: counting is cheap, not free.
int enumeratedPrefix(SearchContext& ctx, tbb::task_arena& arena, std::int64_t budget) {
    for (int p = ctx.space.axisCount(); p >= 0; --p) {
        const PrefixSpace ps(ctx.space, p);
        if (p > 0 && double(ps.size()) > double(budget) * kRawPerEvaluation)
            continue;
        if (p == 0 || ps.size() <= std::uint64_t(budget))
            return p;
        if (countSurvivors(ps, ctx, arena) <= budget)
            return p;
    }
    return 0;
}

std::vector<std::uint64_t> partitionsOfShard(const PrefixSpace& ps, const OptimizerResult& result) {
    std::vector<std::uint64_t> mine;
    for (std::uint64_t p = 0; p < ps.partitions(); ++p)
        if (p % std::uint64_t(result.shard_count) == std::uint64_t(result.shard_index))
            mine.push_back(p);
    return mine;
}

// Stage 1: the enumerated part, partition by partition.
void searchEnumerated(const PrefixSpace& ps, SearchContext& ctx, tbb::task_arena& arena,
                      Accumulators& locals, OptimizerResult& result) {
    const std::vector<std::uint64_t> mine = partitionsOfShard(ps, result);
    {
        std::uint64_t n = 0;
        for (std::uint64_t p : mine)
            n += std::min(kPartitionPoints, ps.size() - p * kPartitionPoints);
        ctx.total = std::int64_t(n);
        result.enumerated = std::int64_t(n);
    }
    parallelChunks(mine.size(), 1, &arena, [&](std::uint64_t begin, std::uint64_t end) {
        Accumulator& acc = locals.local();
        for (std::uint64_t j = begin; j != end; ++j) {
            const std::uint64_t first = mine[j] * kPartitionPoints;
            const std::uint64_t last = std::min(first + kPartitionPoints, ps.size());
            for (std::uint64_t i = first; i < last; ++i) {
                if (ctx.cancelled())
                    return;
                Candidate c = ps.decode(i);
                ++acc.considered;
                if (const char* why = ps.complete(c))
                    ++acc.pruned[why];
                else
                    evaluateChecked(ctx, c, acc);
                ctx.tick();
            }
        }
    });
}

// The best plan of each structure, the best `maxSeeds` of them: seeds from
// different structures explore different parts of the space.
std::vector<Entry> bestSeeds(Accumulators& locals, Objective obj, int maxSeeds) {
    std::vector<Entry> seeds;
    for (Accumulator& a : locals)
        for (const auto& [s, e] : a.bestPerStructure) {
            // An init-capture: clang before 16 cannot capture a structured binding.
            auto it = std::find_if(seeds.begin(), seeds.end(), [structure = s](const Entry& x) {
                return x.key.structure == structure;
            });
            if (it == seeds.end())
                seeds.push_back(e);
            else if (better(e, *it, obj))
                *it = e;
        }
    std::sort(seeds.begin(), seeds.end(),
              [&](const Entry& a, const Entry& b) { return better(a, b, obj); });
    if (int(seeds.size()) > maxSeeds)
        seeds.resize(std::size_t(std::max(0, maxSeeds)));
    return seeds;
}

struct DescentState {
    std::map<Candidate, std::optional<Entry>> known; // evaluated; nullopt: does not fit
    std::vector<Entry> current;                      // per seed, where it stands
    std::vector<char> active;                        // per seed: not converged yet
};

struct DescentMoves {
    std::vector<std::vector<Candidate>> perSeed; // every single-axis move of each active seed
    std::vector<Candidate> fresh;                // those not evaluated before, each once
};

DescentMoves proposeMoves(const DesignSpace& space, const DescentState& st) {
    DescentMoves moves;
    moves.perSeed.resize(st.current.size());
    std::set<Candidate> queued;
    for (std::size_t i = 0; i < st.current.size(); ++i) {
        if (!st.active[i])
            continue;
        const Candidate& at = st.current[i].key;
        for (int a = 0; a < space.axisCount(); ++a)
            for (int x = 0; x < space.choices(at.structure, a); ++x) {
                if (x == at.choice[std::size_t(a)])
                    continue;
                Candidate c = at;
                c.choice[std::size_t(a)] = std::uint16_t(x);
                moves.perSeed[i].push_back(c);
                if (!st.known.count(c) && queued.insert(c).second)
                    moves.fresh.push_back(c);
            }
    }
    return moves;
}

std::vector<std::optional<Entry>> evaluateAll(const std::vector<Candidate>& fresh,
                                              SearchContext& ctx, tbb::task_arena& arena,
                                              Accumulators& locals) {
    std::vector<std::optional<Entry>> results(fresh.size());
    parallelChunks(fresh.size(), 4, &arena, [&](std::uint64_t begin, std::uint64_t end) {
        Accumulator& acc = locals.local();
        for (std::uint64_t j = begin; j != end; ++j) {
            if (ctx.cancelled())
                return;
            results[j] = evaluateCandidate(ctx, fresh[j], acc);
            ctx.tick();
        }
    });
    return results;
}

// Each active seed moves to its best neighbour.
void advanceSeeds(DescentState& st, const DescentMoves& moves, Objective obj) {
    std::set<Candidate> positions;
    for (std::size_t i = 0; i < st.current.size(); ++i) {
        if (!st.active[i])
            continue;
        Entry best = st.current[i];
        for (const Candidate& c : moves.perSeed[i]) {
            const auto& r = st.known[c];
            if (r && better(*r, best, obj))
                best = *r;
        }
        if (best.key == st.current[i].key || !positions.insert(best.key).second)
            st.active[i] = 0; // converged, or joined another seed's path
        st.current[i] = best;
    }
}

// A lower bound on a candidate's objective (seconds, or GPU-seconds for the
// cost objective): stepLowerBound on its own GPUs, with full recompute's
// extra forward. 0 where the objective has none (cross-building bytes).
double candidateBound(const SearchContext& ctx, const Candidate& c, double modelFlops) {
    const Objective o = ctx.options.objective;
    // Goodput, prices, power and DiLoCo's extra tokens have no bound here.
    if (modelFlops <= 0 || (o != Objective::StepTime && o != Objective::Cost))
        return 0;
    if (o == Objective::Cost && !ctx.costInGpuSeconds)
        return 0;
    const DesignSpace& space = ctx.space;
    const std::int64_t gpus = space.structure(c.structure).parallelism.gpus();
    const StepLowerBound lb =
        stepLowerBound(space.cluster(), space.model(), space.base(), gpus, modelFlops);
    const double step = std::max(lb.compute_s * space.hardwareFlopsFactor(c), lb.traffic_s);
    // Cost in GPU-seconds: per step, or for the run's steps, with goodput <= 1.
    return o == Objective::Cost ? step * double(gpus) * ctx.runSteps : step;
}

// Drops the moves that can neither enter the top K (their bound exceeds the
// K-th best objective so far) nor improve the seed that proposed them (the
// bound exceeds its objective too): the descent takes the same path and the
// top K are the same; only the Pareto set, which in the staged strategy
// holds the plans evaluated, may miss such a plan. The threshold is read
// between rounds, from a set of evaluated plans that does not depend on the
// thread count.
std::int64_t pruneByBound(SearchContext& ctx, Accumulators& locals, const DescentState& st,
                          DescentMoves& moves, std::map<Candidate, std::optional<Entry>>& known) {
    const Objective o = ctx.options.objective;
    if (!ctx.options.prune_by_bound)
        return 0;
    const Accumulator sofar = merged(locals, o, std::size_t(std::max(1, ctx.options.top_k)));
    if (sofar.top.size() < std::size_t(std::max(1, ctx.options.top_k)))
        return 0;
    const double modelFlops = sofar.top.front().modelFlops;
    auto score = [&](const Entry& e) { return scoreOf(e.step, e.bytes, e.run, o).first; };
    const double kth = score(sofar.top.back());
    std::map<Candidate, double> proposer; // the worst objective of a seed proposing the move
    for (std::size_t i = 0; i < st.current.size(); ++i)
        for (const Candidate& c : moves.perSeed[i]) {
            auto [it, fresh] = proposer.try_emplace(c, score(st.current[i]));
            if (!fresh)
                it->second = std::max(it->second, score(st.current[i]));
        }
    Accumulator& acc = locals.local();
    return std::int64_t(std::erase_if(moves.fresh, [&](const Candidate& c) {
        const double bound = candidateBound(ctx, c, modelFlops);
        if (!(bound > kth && bound > proposer[c]))
            return false;
        ++acc.pruned[kBoundRejected];
        ++acc.considered;
        known[c] = std::nullopt;
        return true;
    }));
}

// Stage 2: coordinate descent from the best seeds.
void descend(SearchContext& ctx, tbb::task_arena& arena, Accumulators& locals,
             const std::vector<Entry>& extraSeeds, OptimizerResult& result) {
    const OptimizerOptions& options = ctx.options;
    std::vector<Entry> seeds = bestSeeds(locals, options.objective, options.seeds);
    for (const Entry& e : extraSeeds)
        if (std::none_of(seeds.begin(), seeds.end(),
                         [&](const Entry& x) { return x.key == e.key; }))
            seeds.push_back(e);
    result.strategy.seeds = int(seeds.size());

    DescentState st;
    for (const Entry& e : seeds)
        st.known[e.key] = e;
    st.current = seeds;
    st.active.assign(st.current.size(), 1);
    for (int round = 0; round < options.max_rounds && !ctx.cancelled(); ++round) {
        if (std::none_of(st.active.begin(), st.active.end(), [](char a) { return a; }))
            break;
        result.strategy.rounds = round + 1;
        DescentMoves moves = proposeMoves(ctx.space, st);
        const std::int64_t bounded = pruneByBound(ctx, locals, st, moves, st.known);
        ctx.total += std::int64_t(moves.fresh.size());
        result.enumerated += std::int64_t(moves.fresh.size()) + bounded;
        const std::vector<std::optional<Entry>> results =
            evaluateAll(moves.fresh, ctx, arena, locals);
        if (ctx.cancelled())
            break;
        for (std::size_t j = 0; j < moves.fresh.size(); ++j)
            st.known[moves.fresh[j]] = results[j];
        advanceSeeds(st, moves, options.objective);
    }
}

// The same plan for the cost model with every link axis whose link carries
// no bytes at its first choice (the link as built or the base plan's
// setting): a technology on an idle link does not make another plan. Only a
// candidate that sets a link needs the detailed evaluation (per-link bytes).
Candidate canonical(const SearchContext& ctx, const Candidate& c) {
    const DesignSpace& space = ctx.space;
    bool setsALink = false;
    for (int a = 0; a < space.axisCount(); ++a)
        setsALink = setsALink || (space.isLinkAxis(a) && c.choice[std::size_t(a)] != 0);
    if (!setsALink)
        return c;
    const EvaluationResult res = ctx.evaluator.evaluate(ctx.model, space.plan(c, false),
                                                        EvaluateOptions{false, false, true});
    const auto* ev = std::get_if<Evaluation>(&res);
    if (!ev)
        return c;
    Candidate out = c;
    for (int a = 0; a < space.axisCount(); ++a) {
        if (!space.isLinkAxis(a) || out.choice[std::size_t(a)] == 0)
            continue;
        const auto it = std::find_if(ev->links.begin(), ev->links.end(), [&](const LinkUsage& u) {
            return u.tier == LinkTier::InterBuilding && u.name == space.linkOfAxis(a);
        });
        if (it != ev->links.end() && it->bytes_per_step <= 0)
            out.choice[std::size_t(a)] = 0;
    }
    return out;
}

// The merged counts, and the top-K and Pareto entries as complete plan
// documents, each by its canonical key (not after a cancel: the partial
// result comes back at once). The space builds valid plans by
// construction; a plan the validator still rejects is counted rather than
// handed out.
void reportMerged(const Accumulator& all, const SearchContext& ctx, OptimizerResult& result) {
    result.evaluated = all.evaluated;
    result.feasible = all.feasible;
    for (const auto& [why, n] : all.pruned)
        result.pruned[why] += n;
    const Cluster& cluster = ctx.evaluator.cluster();
    auto keep = [&](Entry e, const std::string& name, std::vector<ScoredPlan>& out) {
        if (!ctx.cancelled())
            e.key = canonical(ctx, e.key);
        if (std::any_of(out.begin(), out.end(),
                        [&](const ScoredPlan& x) { return x.key == e.key; }))
            return;
        ScoredPlan p = materialise(ctx.space, e, name);
        if (!validateScenario({cluster, ctx.model, p.plan}).empty()) {
            ++result.pruned[kInvalid];
            return;
        }
        out.push_back(std::move(p));
    };
    for (std::size_t i = 0; i < all.top.size(); ++i)
        keep(all.top[i], "optimized-" + std::to_string(result.top.size() + 1), result.top);
    for (std::size_t i = 0; i < all.pareto.size(); ++i)
        keep(all.pareto[i], "pareto-" + std::to_string(result.pareto.size() + 1), result.pareto);
}

// The plans the search starts from: the feasible baselines and, in the full
// space, the default space's best.
std::vector<std::pair<std::string, Plan>> seedPlans(const Evaluator& evaluator, const Model& model,
                                                    const Plan& base,
                                                    const OptimizerOptions& options,
                                                    OptimizerResult& result) {
    std::vector<std::pair<std::string, Plan>> seeds;
    if (options.baselines) {
        result.baselines = options.given_baselines
                               ? *options.given_baselines
                               : computeBaselines(evaluator, model, base, baselineOptions(options));
        for (const BaselineResult& r : result.baselines)
            if (r.feasible)
                seeds.emplace_back(r.name, r.plan);
    }
    if (options.space.size == SpaceSize::Full && options.seed_full_from_default) {
        OptimizerOptions d = options;
        d.space.size = SpaceSize::Default;
        d.baselines = false;
        d.max_evaluations = std::max<std::int64_t>(1, options.max_evaluations / 4);
        d.progress = nullptr;
        const OptimizerResult r = optimize(evaluator, model, base, d);
        if (!r.top.empty())
            seeds.emplace_back("default-space best", r.top.front().plan);
    }
    return seeds;
}

std::string strategyDescription(bool exhaustive, int prefix, const OptimizerResult& result,
                                std::int64_t budget) {
    std::string d;
    if (exhaustive) {
        d = "every candidate that passed the cheap checks was evaluated";
    } else {
        d = "every combination of the first " + std::to_string(prefix) +
            " axes was evaluated (the others at their first choice that passes the cheap "
            "checks), then coordinate descent over all axes from the best plan of each of "
            "the " +
            std::to_string(result.strategy.seeds) + " best structures";
    }
    d += "; the space holds " + std::to_string(std::int64_t(std::min(result.space_size, 9e18))) +
         " candidates, the evaluation budget is " + std::to_string(budget);
    return d;
}

} // namespace

BaselineOptions baselineOptions(const OptimizerOptions& options) {
    BaselineOptions b;
    b.gpu_budget = options.space.gpu_budget;
    b.max_evaluations = options.baseline_evaluations > 0
                            ? options.baseline_evaluations
                            : std::max<std::int64_t>(500, options.max_evaluations / 8);
    b.size = options.space.size;
    b.threads = options.threads;
    b.cancel = options.cancel;
    return b;
}

bool betterThan(const ScoredPlan& a, const ScoredPlan& b, Objective o) {
    const auto scoreA = scoreOf(a.step_time_s, a.cross_building_bytes, a.run, o);
    const auto scoreB = scoreOf(b.step_time_s, b.cross_building_bytes, b.run, o);
    if (scoreA != scoreB)
        return scoreA < scoreB;
    return a.key < b.key;
}

OptimizerResult optimize(const Evaluator& evaluator, const Model& model, const Plan& base,
                         const OptimizerOptions& options) {
    const auto t0 = Clock::now();
    OptimizerResult result = describeInputs(evaluator, model, base, options);
    auto cancelled = [&] { return options.cancel && options.cancel->load(); };
    std::vector<std::pair<std::string, Plan>> seeds;
    if (!cancelled())
        seeds = seedPlans(evaluator, model, base, options, result);
    if (cancelled()) { // while the baselines ran: the space is not even built
        result.cancelled = true;
        result.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
        return result;
    }
    const auto tSearch = Clock::now();
    DesignSpaceOptions spaceOptions = options.space;
    for (const auto& [name, plan] : seeds)
        spaceOptions.seeds.push_back(plan);
    const DesignSpace space(evaluator.cluster(), model, base, spaceOptions);
    describeSpace(space, result);

    // More threads than cores (e.g. to check determinism) need a higher
    // process-wide limit; never lower it, other TBB work shares the process.
    std::optional<tbb::global_control> moreThreads;
    if (options.threads > tbb::info::default_concurrency())
        moreThreads.emplace(tbb::global_control::max_allowed_parallelism,
                            std::size_t(options.threads));
    tbb::task_arena arena(options.threads > 0 ? options.threads : int(tbb::task_arena::automatic));
    result.threads = arena.max_concurrency();
    SearchContext ctx(space, evaluator, model, options);
    const Objective obj = options.objective;
    const std::size_t k = std::size_t(result.top_k);
    Accumulators locals([&] {
        Accumulator a;
        a.objective = obj;
        a.k = k;
        return a;
    });

    const int axes = space.axisCount();
    const std::int64_t budget = std::max<std::int64_t>(1, options.max_evaluations);
    const int prefix = enumeratedPrefix(ctx, arena, budget);
    const bool exhaustive = prefix == axes;
    const PrefixSpace ps(space, prefix);
    for (int a = 0; a < axes; ++a)
        (a < prefix ? result.strategy.enumerated_axes : result.strategy.descent_axes)
            .push_back(space.axisName(a));
    result.strategy.name = exhaustive ? "exhaustive" : "staged";

    searchEnumerated(ps, ctx, arena, locals, result);
    // The seeds are candidates like any other; evaluated here they enter
    // the top list whatever the enumeration held, and the descent starts
    // from them too.
    std::vector<Entry> seedEntries;
    for (const auto& [name, plan] : seeds) {
        const std::optional<Candidate> c = space.locate(plan);
        if (!c) {
            result.seeds_not_in_space.push_back(name);
            continue;
        }
        result.seeded.push_back(name);
        if (ctx.cancelled())
            continue; // listed, not evaluated: a cancel returns at once
        ++result.enumerated;
        if (auto e = evaluateCandidate(ctx, *c, locals.local()))
            seedEntries.push_back(*e);
    }
    if (!exhaustive && !ctx.cancelled())
        descend(ctx, arena, locals, seedEntries, result);

    result.cancelled = ctx.cancelled();
    ctx.finalProgress();
    const Accumulator all = merged(locals, obj, k);
    reportMerged(all, ctx, result);
    result.search_s = std::chrono::duration<double>(Clock::now() - tSearch).count();
    result.evaluations_per_s =
        result.search_s > 0 ? double(result.evaluated) / result.search_s : 0.0;
    result.strategy.description = strategyDescription(exhaustive, prefix, result, budget);
    result.coverage =
        result.space_size > 0 ? std::min(1.0, double(result.enumerated) / result.space_size) : 0.0;
    if (!all.top.empty())
        result.lower_bound = stepLowerBound(evaluator.cluster(), model, base, space.gpuBudget(),
                                            all.top.front().modelFlops);
    result.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
    return result;
}

namespace {

// Parameters whose gradients every replica must exchange: attention and
// dense MLPs of every layer, the embeddings (experts are left out: their
// gradients are reduced over the expert-data-parallel group only).
double replicatedParameters(const Model& m) {
    const double h = double(m.hidden);
    const double attention = m.attentionParams();
    const double gated = m.mlp == MlpKind::SwiGlu ? 3.0 : 2.0;
    const int moeLayers = m.moeLayersIn(0, m.layers);
    const double dense = (m.layers - moeLayers) * gated * h * double(m.ffn_hidden);
    // Multi-token prediction's blocks (attention, a dense MLP when the last
    // layer has one) and projections.
    const double mtp =
        m.mtp_layers *
        (attention + 2.0 * h * h + (m.lastLayerIsMoe() ? 0.0 : gated * h * double(m.ffn_hidden)));
    return m.layers * attention + dense + double(m.vocab) * h + mtp;
}

} // namespace

StepLowerBound stepLowerBound(const Cluster& cluster, const Model& model, const Plan& base,
                              std::int64_t gpuBudget, double modelFlopsPerStep) {
    StepLowerBound lb;
    lb.model_flops_per_step = modelFlopsPerStep;
    // The fastest GPUs first: the most FLOP/s the budget can have.
    std::vector<std::pair<double, std::int64_t>> rates; // (FLOP/s per GPU, GPUs)
    std::int64_t biggest = 0;
    for (const Building& b : cluster.buildings) {
        biggest = std::max(biggest, b.gpus);
        if (const GpuModel* g = cluster.gpuOf(b)) {
            // The faster of the GEMM precisions the model may run in.
            double rate = g->peak_tflops_bf16 * 1e12 * g->gemm_efficiency;
            if (model.dtype == DType::FP8)
                rate = std::max(rate, g->peak_tflops_fp8 * 1e12 * g->gemm_efficiency_fp8);
            rates.emplace_back(rate * powerClockFactor(*g), b.gpus);
        }
    }
    std::sort(rates.begin(), rates.end(), std::greater<>());
    double flops = 0;
    std::int64_t left = gpuBudget;
    for (const auto& [rate, n] : rates) {
        const std::int64_t take = std::min(left, n);
        flops += rate * double(take);
        left -= take;
    }
    if (flops > 0)
        lb.compute_s = modelFlopsPerStep / flops;
    // Beyond the largest building some dimension crosses a boundary: PP
    // sends every token's activation one way and its gradient back (bf16);
    // DP exchanges each parameter's gradient at least once each way between
    // two groups of replicas. Either leaves or enters one building over its
    // links.
    if (gpuBudget > biggest && cluster.buildings.size() > 1) {
        const double tokens = double(base.global_batch_sequences) * double(base.sequence_length);
        const double ppBytes = tokens * double(model.hidden) * 2.0;
        const double dpBytes = replicatedParameters(model) * double(base.grad_reduce_bytes);
        lb.traffic_bytes = std::min(ppBytes, dpBytes);
        double best = 0;
        for (const Building& b : cluster.buildings) {
            double bps = 0;
            for (const Link& l : cluster.links)
                if (l.a == b.name || l.b == b.name)
                    bps += gbpsToBytesPerS(l.bandwidth_gbps);
            best = std::max(best, bps);
        }
        if (best > 0)
            lb.traffic_s = lb.traffic_bytes / best;
    }
    return lb;
}

OptimizerResult mergeResults(const std::vector<OptimizerResult>& shards,
                             std::vector<std::string>* problems) {
    OptimizerResult out;
    if (shards.empty())
        return out;
    auto complain = [&](const std::string& s) {
        if (problems)
            problems->push_back(s);
    };
    const OptimizerResult& f = shards.front();
    out.cluster = f.cluster;
    out.model = f.model;
    out.input_digest = f.input_digest;
    out.objective = f.objective;
    out.shard_index = 0;
    out.shard_count = 1;
    out.gpu_budget = f.gpu_budget;
    out.space_size = f.space_size;
    out.structures = f.structures;
    out.strategy = f.strategy;
    out.baselines = f.baselines;
    out.seeded = f.seeded; // every shard starts from the same seeds
    out.seeds_not_in_space = f.seeds_not_in_space;
    std::set<int> seen;
    std::vector<ScoredPlan> top, pareto;
    for (const OptimizerResult& r : shards) {
        if (r.input_digest != f.input_digest || r.cluster != f.cluster || r.model != f.model ||
            r.objective != f.objective || r.space_size != f.space_size ||
            r.shard_count != f.shard_count)
            complain("shard " + std::to_string(r.shard_index) + "/" +
                     std::to_string(r.shard_count) +
                     " searched a different problem (cluster, model, objective, space or shard "
                     "count differ)");
        if (!seen.insert(r.shard_index).second)
            complain("shard " + std::to_string(r.shard_index) + " given twice");
        out.top_k = std::max(out.top_k, r.top_k);
        out.enumerated += r.enumerated;
        out.evaluated += r.evaluated;
        out.feasible += r.feasible;
        for (const auto& [why, n] : r.pruned)
            out.pruned[why] += n;
        out.elapsed_s = std::max(out.elapsed_s, r.elapsed_s);
        out.search_s = std::max(out.search_s, r.search_s);
        out.evaluations_per_s += r.evaluations_per_s;
        out.threads += r.threads;
        out.cancelled = out.cancelled || r.cancelled;
        out.strategy.rounds = std::max(out.strategy.rounds, r.strategy.rounds);
        if (out.baselines.empty())
            out.baselines = r.baselines;
        if (out.lower_bound.step_s() <= 0)
            out.lower_bound = r.lower_bound;
        top.insert(top.end(), r.top.begin(), r.top.end());
        pareto.insert(pareto.end(), r.pareto.begin(), r.pareto.end());
    }
    for (int i = 0; i < f.shard_count; ++i)
        if (!seen.count(i))
            complain("shard " + std::to_string(i) + "/" + std::to_string(f.shard_count) +
                     " is missing: the result covers part of the space");
    const Objective o = out.objective;
    std::sort(top.begin(), top.end(),
              [&](const ScoredPlan& a, const ScoredPlan& b) { return betterThan(a, b, o); });
    top.erase(std::unique(top.begin(), top.end(),
                          [&](const ScoredPlan& a, const ScoredPlan& b) {
                              return scoreOf(a.step_time_s, a.cross_building_bytes, a.run, o) ==
                                     scoreOf(b.step_time_s, b.cross_building_bytes, b.run, o);
                          }),
              top.end());
    if (top.size() > std::size_t(std::max(1, out.top_k)))
        top.resize(std::size_t(std::max(1, out.top_k)));
    for (std::size_t i = 0; i < top.size(); ++i)
        top[i].plan.name = "optimized-" + std::to_string(i + 1);
    struct Point {
        double step, bytes;
        Candidate key;
        std::size_t index;
    };
    std::vector<Point> pts;
    for (std::size_t i = 0; i < pareto.size(); ++i)
        pts.push_back({pareto[i].step_time_s, pareto[i].cross_building_bytes, pareto[i].key, i});
    for (const Point& p : paretoFront(std::move(pts))) {
        ScoredPlan s = pareto[p.index];
        s.plan.name = "pareto-" + std::to_string(out.pareto.size() + 1);
        out.pareto.push_back(std::move(s));
    }
    out.top = std::move(top);
    out.coverage =
        out.space_size > 0 ? std::min(1.0, double(out.enumerated) / out.space_size) : 0.0;
    return out;
}

} // namespace sa

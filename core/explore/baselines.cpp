#include "explore/baselines.h"

#include "formats/documents.h"

#include <algorithm>
#include <numeric>

namespace sa {

namespace {

const EvaluateOptions kLean{false, false, false};

std::string linkNameOf(const Link& l) {
    return l.name.empty() ? l.a + "-" + l.b : l.name;
}

// Largest dp that divides the batch (over micro batches) and fits `gpus`.
int largestDp(const Plan& p, std::int64_t cellStage, std::int64_t gpus) {
    const std::int64_t per =
        p.global_batch_sequences / std::max<std::int64_t>(1, p.micro_batch_sequences);
    for (std::int64_t d = std::min(per, gpus / std::max<std::int64_t>(1, cellStage)); d >= 1; --d)
        if (per % d == 0)
            return int(d);
    return 0;
}

std::vector<int> evenLayers(int layers, int pp) {
    std::vector<int> out(std::size_t(pp), layers / pp);
    for (int i = 0; i < layers % pp; ++i)
        ++out[std::size_t(i)];
    return out;
}

// Evaluates `plan`, raising recompute until it fits. The result carries
// the plan as evaluated.
BaselineResult evaluateRaising(const Evaluator& evaluator, const Model& model, Plan plan,
                               BaselineResult r) {
    std::vector<Recompute> ladder{plan.recompute};
    for (Recompute x : {Recompute::Selective, Recompute::Full})
        if (int(x) > int(plan.recompute))
            ladder.push_back(x);
    for (Recompute x : ladder) {
        plan.recompute = x;
        const auto problems = validateScenario({evaluator.cluster(), model, plan});
        if (!problems.empty()) {
            r.plan = plan;
            r.problem = problems.front().str();
            return r;
        }
        const auto res = evaluator.evaluate(model, plan, kLean);
        r.plan = plan;
        if (const auto* err = std::get_if<EvaluationError>(&res)) {
            r.problem = err->str();
            return r;
        }
        const Evaluation& ev = std::get<Evaluation>(res);
        r.step_time_s = ev.step_time_s;
        r.cross_building_bytes = ev.cross_building_bytes;
        r.mfu = ev.mfu;
        r.peak_gib_per_gpu = ev.memory.peak_gib_per_gpu;
        r.gpus = ev.gpus;
        if (ev.memory.fits) {
            r.feasible = true;
            r.problem.clear();
            return r;
        }
        r.problem = "does not fit in memory even with recompute " + std::string(toString(x));
    }
    return r;
}

// The largest tp the cluster and the model allow inside one host.
int hostTp(const Cluster& c, const Model& m) {
    int g = 0;
    for (const auto& b : c.buildings)
        g = std::gcd(g, b.gpus_per_host);
    for (int tp = std::max(1, g); tp > 1; --tp) {
        if (g % tp != 0 || m.heads % tp != 0 || m.ffn_hidden % tp != 0)
            continue;
        if (m.kv_heads % tp != 0 && tp % m.kv_heads != 0)
            continue;
        if (m.moe && m.moe->expert_ffn_hidden % tp != 0)
            continue;
        return tp;
    }
    return 1;
}

std::vector<int> ppValues(const Model& m) {
    std::vector<int> out;
    for (int p = 1; p <= std::min(m.layers, 128); ++p) {
        int q = p;
        while (q % 2 == 0)
            q /= 2;
        while (q % 3 == 0)
            q /= 3;
        if (q == 1 || m.layers % p == 0)
            out.push_back(p);
    }
    return out;
}

// The production recipe applied to degrees already chosen.
Plan productionPlan(const Cluster& cluster, const Model& model, Plan p) {
    p.name = "baseline-production";
    p.rank_order = {Dim::TP, Dim::CP, Dim::PP, Dim::DP};
    const int pp = p.parallelism.pp;
    std::vector<int> layers;
    if (p.placement && int(p.placement->layers_per_stage.size()) == pp)
        layers = p.placement->layers_per_stage;
    p.placement.reset();
    const std::int64_t m = p.microbatches();
    const bool canInterleave = pp > 1 && m % pp == 0 && model.layers >= 2 * pp;
    if (canInterleave) {
        p.schedule = {ScheduleKind::Interleaved, 2};
        if (layers.empty() && model.layers % (2 * pp) != 0)
            layers = evenLayers(model.layers, pp);
        if (std::any_of(layers.begin(), layers.end(), [](int n) { return n < 2; }))
            layers = evenLayers(model.layers, pp);
    } else {
        p.schedule = {ScheduleKind::OneFOneB, 1};
    }
    if (!layers.empty())
        p.placement = Placement{{}, layers};
    p.collectives.clear();
    p.collectives[Dim::DP] = CollectiveAlgo::Ring;
    p.link_technologies.clear();
    for (const Link& l : cluster.links)
        p.link_technologies[linkNameOf(l)] = LinkOverride{"roce", 0};
    return p;
}

} // namespace

Plan defaultBasePlan() {
    Plan p;
    p.name = "base";
    p.sequence_length = 8192;
    p.global_batch_sequences = 2048;
    p.micro_batch_sequences = 1;
    p.parallelism = {1, 1, 1, 1, 1};
    p.zero_stage = 1;
    p.recompute = Recompute::Selective;
    return p;
}

BaselineResult productionBaseline(const Evaluator& evaluator, const Model& model, const Plan& base,
                                  std::int64_t gpuBudget) {
    const Cluster& cluster = evaluator.cluster();
    BaselineResult r;
    r.name = "production";
    if (base.parallelism.gpus() > 1) {
        r.recipe = "the base plan's degrees with the Llama 3 recipe: rank order [tp,cp,pp,dp] "
                   "(DP across buildings), interleaved 1F1B, flat ring DP collectives, RoCE on "
                   "every link";
        return evaluateRaising(evaluator, model, productionPlan(cluster, model, base), r);
    }
    // No degrees given: tp fills a host, the smallest pp that fits.
    r.recipe = "Llama 3 recipe: tp fills a host, the smallest pp that fits, dp fills the GPUs; "
               "rank order [tp,cp,pp,dp], interleaved 1F1B, ring DP collectives, RoCE everywhere";
    Plan p = base;
    p.parallelism.tp = hostTp(cluster, model);
    p.parallelism.cp = 1;
    p.parallelism.ep = 1;
    BaselineResult last = r;
    last.problem = "no pipeline depth fits";
    for (int pp : ppValues(model)) {
        p.parallelism.pp = pp;
        const int dp = largestDp(p, std::int64_t(p.parallelism.tp) * pp, gpuBudget);
        if (dp < 1)
            break;
        p.parallelism.dp = dp;
        BaselineResult x = evaluateRaising(evaluator, model, productionPlan(cluster, model, p), r);
        if (x.feasible)
            return x;
        last = x;
    }
    return last;
}

BaselineResult priorArtBaseline(const Evaluator& evaluator, const Model& model, const Plan& base,
                                std::int64_t gpuBudget) {
    const Cluster& cluster = evaluator.cluster();
    BaselineResult r;
    r.name = "prior-art";
    r.recipe = "Atlas/CrossPipe: only PP crosses buildings (rank order [tp,cp,dp,pp], whole "
               "stages per building, assigned greedily to the buildings with the most GPUs), "
               "1F1B, links as built; pp and dp chosen for the best step time";
    Plan p = base;
    p.name = "baseline-prior-art";
    if (p.parallelism.gpus() <= 1)
        p.parallelism.tp = hostTp(cluster, model);
    p.parallelism.ep = std::max(1, p.parallelism.ep);
    p.rank_order = {Dim::TP, Dim::CP, Dim::DP, Dim::PP};
    p.schedule = {ScheduleKind::OneFOneB, 1};
    p.link_technologies.clear();
    const std::int64_t cell = std::int64_t(p.parallelism.tp) * p.parallelism.cp;

    // Buildings by GPUs, most first (ties: cluster order).
    std::vector<std::size_t> order(cluster.buildings.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return cluster.buildings[a].gpus > cluster.buildings[b].gpus;
    });

    BaselineResult best = r;
    best.problem = "no pipeline depth lets whole stages fit into the buildings";
    for (int pp : ppValues(model)) {
        p.parallelism.pp = pp;
        // The largest dp whose stages fit whole, greedily.
        const std::int64_t per =
            p.global_batch_sequences / std::max<std::int64_t>(1, p.micro_batch_sequences);
        int dp = 0;
        std::vector<int> stagesIn;
        for (std::int64_t d = std::min(per, gpuBudget / (cell * pp)); d >= 1 && dp == 0; --d) {
            if (per % d != 0 || (p.parallelism.ep > 1 && d % p.parallelism.ep != 0))
                continue;
            std::vector<int> n(cluster.buildings.size(), 0);
            int left = pp;
            for (std::size_t b : order) {
                const int fit =
                    int(std::min<std::int64_t>(left, cluster.buildings[b].gpus / (cell * d)));
                n[b] = fit;
                left -= fit;
            }
            if (left == 0) {
                dp = int(d);
                stagesIn = n;
            }
        }
        if (dp == 0)
            continue;
        p.parallelism.dp = dp;
        Placement pl;
        int s0 = 0;
        for (std::size_t b : order) {
            if (stagesIn[b] == 0)
                continue;
            pl.runs.push_back({s0, s0 + stagesIn[b] - 1, 0, dp - 1, cluster.buildings[b].name});
            s0 += stagesIn[b];
        }
        p.placement = pl;
        BaselineResult x = evaluateRaising(evaluator, model, p, r);
        if (x.feasible) {
            if (!best.feasible || x.step_time_s < best.step_time_s)
                best = x;
        } else if (!best.feasible) {
            best = x; // the latest reason, until one fits
        }
    }
    return best;
}

} // namespace sa

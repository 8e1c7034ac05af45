#include "explore/baselines.h"

#include "explore/optimizer.h"
#include "formats/documents.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sa {

namespace {

// Llama 3 runs context parallelism so that each rank holds 8,192 tokens
// (Dubey et al. 2024, Table 4: CP1 at 8K, CP16 at 131K sequences).
constexpr std::int64_t kLlama3TokensPerCpRank = 8192;

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

int llama3Cp(std::int64_t sequence) {
    std::int64_t cp = std::max<std::int64_t>(1, sequence / kLlama3TokensPerCpRank);
    while (cp > 1 && sequence % (2 * cp) != 0)
        --cp;
    return int(cp);
}

const std::vector<std::string> kPpAcrossKinds{"pp-across", "stages", "regions"};

BaselineRecipe production(const Cluster& cluster, const Model& model, const Plan& base) {
    BaselineRecipe r;
    r.name = "production";
    const bool moe = model.moe.has_value();
    r.title = moe ? "production (Megatron-Core MoE recipe)" : "production (Llama 3 recipe)";
    DesignSpaceOptions& s = r.space;
    s.tp = {hostTp(cluster, model)};
    s.cp = {llama3Cp(base.sequence_length)};
    s.micro_batch = {1};
    if (!moe)
        s.ep = {1};
    s.etp = {0}; // Megatron-Core's default: the experts split over tp
    s.placement_kinds = {"dp-across"};
    s.schedules = {{ScheduleKind::Interleaved, 2, false}, {ScheduleKind::OneFOneB, 1, false}};
    s.zero_stages = {1};
    s.dp_algos = {CollectiveAlgo::Auto};
    r.recipe =
        "tp" + std::to_string(s.tp[0]) + " (a host) cp" + std::to_string(s.cp[0]) +
        " (8K tokens per rank), pp for the best step time, dp fills the GPUs" +
        (moe ? ", ep searched" : "") +
        "; rank order [tp,cp,pp,dp] (DP across buildings), interleaved 1F1B (1F1B where "
        "the microbatches do not allow it), ZeRO-1 (FSDP under pipeline parallelism: weights "
        "kept after forward, gradients reduced once per step), NCCL's own "
        "algorithm; recompute only as needed to fit; link transports tuned per link";
    r.source = moe ? "Megatron-Core MoE guide (EP inside the DP group, TP inside a host) with "
                     "the Llama 3 recipe for the rest (Dubey et al. 2024, Sec. 3.3.2)"
                   : "Dubey et al., The Llama 3 Herd of Models (2024), Sec. 3.3.2 and Table 4: "
                     "16,384 H100 at TP8 CP1 PP16 DP128 with 8K sequences, rank order "
                     "[TP, CP, PP, DP], interleaved 1F1B, FSDP without resharding weights after "
                     "forward; gradients reduced once per step under PP as torchtitan's "
                     "pipelining does (backward_maybe_with_nosync)";
    return r;
}

BaselineRecipe crosspipe() {
    BaselineRecipe r;
    r.name = "crosspipe";
    r.title = "CrossPipe (latency-aware PP across)";
    r.prior_art = true;
    r.space.placement_kinds = kPpAcrossKinds;
    r.space.schedules = {{ScheduleKind::OneFOneB, 1, true}};
    r.space.vary_links = false;
    r.recipe = "only PP crosses buildings (whole stages per building or region), 1F1B with "
               "latency-aware warm-up, links as built; degrees, recompute, ZeRO and layer split "
               "searched";
    r.source = "CrossPipe (USENIX ATC'25): cross-datacenter pipeline parallelism with a "
               "latency-aware 1F1B warm-up";
    return r;
}

BaselineRecipe atlas() {
    BaselineRecipe r;
    r.name = "atlas";
    r.title = "Atlas (PP across, multi-TCP)";
    r.prior_art = true;
    r.space.placement_kinds = kPpAcrossKinds;
    r.space.schedules = {{ScheduleKind::OneFOneB, 1, false}};
    r.space.link_technologies = {"tcp-multiflow"};
    r.recipe = "only PP activations cross buildings (whole stages per building or region), "
               "1F1B, several TCP flows per transfer on every inter-building link; degrees, "
               "recompute, ZeRO and layer split searched";
    r.source = "Atlas (Dash et al. 2024): geo-distributed training that sends only pipeline "
               "activations over the WAN, with multiple TCP connections per transfer";
    return r;
}

BaselineRecipe megatronMultiDc() {
    BaselineRecipe r;
    r.name = "megatron-multidc";
    r.title = "Megatron multi-DC (hierarchical DP across)";
    r.prior_art = true;
    r.space.placement_kinds = {"dp-across"};
    r.space.dp_algos = {CollectiveAlgo::Hierarchical};
    r.space.schedules = {{ScheduleKind::Interleaved, 2, false}, {ScheduleKind::OneFOneB, 1, false}};
    r.space.vary_links = false;
    r.recipe = "DP crosses buildings with a hierarchical all-reduce (reduce-scatter inside each "
               "building, all-reduce across, all-gather inside), 1F1B or interleaved, links as "
               "built; degrees, recompute, ZeRO and layer split searched";
    r.source = "NeMo / Megatron-Core multi-data-center training: hierarchical data parallelism "
               "that keeps the cross-site step of the gradient all-reduce to one shard per rank";
    return r;
}

BaselineResult fromSearch(const BaselineRecipe& recipe, const OptimizerResult& r) {
    BaselineResult b;
    b.name = recipe.name;
    b.title = recipe.title;
    b.recipe = recipe.recipe;
    b.source = recipe.source;
    b.prior_art = recipe.prior_art;
    if (r.top.empty()) {
        std::string why = "no plan of this recipe fits";
        std::int64_t most = 0;
        for (const auto& [reason, n] : r.pruned)
            if (n > most) {
                most = n;
                why = "no plan of this recipe fits (most were rejected for: " + reason + ")";
            }
        b.problem = why;
        return b;
    }
    const ScoredPlan& best = r.top.front();
    b.plan = best.plan;
    b.plan.name = "baseline-" + recipe.name;
    b.plan.description = recipe.title + ": " + best.label;
    b.feasible = true;
    b.step_time_s = best.step_time_s;
    b.cross_building_bytes = best.cross_building_bytes;
    b.mfu = best.mfu;
    b.peak_gib_per_gpu = best.peak_gib_per_gpu;
    b.gpus = best.gpus;
    b.run = best.run;
    return b;
}

} // namespace

std::vector<BaselineRecipe> baselineRecipes(const Cluster& cluster, const Model& model,
                                            const Plan& base) {
    return {production(cluster, model, base), crosspipe(), atlas(), megatronMultiDc()};
}

BaselineResult asGivenBaseline(const Evaluator& evaluator, const Model& model, const Plan& base) {
    BaselineResult b;
    b.name = "as-given";
    b.title = "as given (the base plan)";
    b.recipe = "the base plan, unchanged";
    b.source = "the plan document searched from";
    b.plan = base;
    if (base.parallelism.gpus() <= 1) {
        b.problem = "the base plan gives no degrees";
        return b;
    }
    const EvaluationResult res =
        evaluator.evaluate(model, base, EvaluateOptions{false, true, false});
    if (const auto* err = std::get_if<EvaluationError>(&res)) {
        b.problem = err->str();
        return b;
    }
    const Evaluation& ev = std::get<Evaluation>(res);
    b.step_time_s = ev.step_time_s;
    b.cross_building_bytes = std::round(ev.cross_building_bytes);
    b.mfu = ev.mfu;
    b.peak_gib_per_gpu = ev.memory.peak_gib_per_gpu;
    b.gpus = ev.gpus;
    b.run = runScores(ev, clusterPriced(evaluator.cluster()));
    b.feasible = ev.memory.fits;
    if (!b.feasible)
        b.problem = "does not fit in memory (" + std::to_string(int(ev.memory.peak_gib_per_gpu)) +
                    " GiB per GPU)";
    return b;
}

BaselineResult recipeBaseline(const Evaluator& evaluator, const Model& model, const Plan& base,
                              const BaselineRecipe& recipe, const BaselineOptions& options) {
    OptimizerOptions o;
    o.space = recipe.space;
    o.space.size = options.size;
    o.space.gpu_budget = options.gpu_budget;
    o.top_k = 1;
    o.threads = options.threads;
    o.max_evaluations = options.max_evaluations;
    o.seeds = 3;
    o.baselines = false;
    o.cancel = options.cancel;
    return fromSearch(recipe, optimize(evaluator, model, base, o));
}

std::vector<BaselineResult> computeBaselines(const Evaluator& evaluator, const Model& model,
                                             const Plan& base, const BaselineOptions& options) {
    std::vector<BaselineResult> out;
    if (base.parallelism.gpus() > 1)
        out.push_back(asGivenBaseline(evaluator, model, base));
    for (const BaselineRecipe& r : baselineRecipes(evaluator.cluster(), model, base)) {
        if (options.cancel && options.cancel->load())
            break;
        out.push_back(recipeBaseline(evaluator, model, base, r, options));
    }
    return out;
}

const BaselineResult* findBaseline(const std::vector<BaselineResult>& baselines,
                                   const std::string& name) {
    for (const BaselineResult& b : baselines)
        if (b.name == name)
            return &b;
    return nullptr;
}

const BaselineResult* bestPriorArt(const std::vector<BaselineResult>& baselines) {
    const BaselineResult* best = nullptr;
    for (const BaselineResult& b : baselines)
        if (b.prior_art && b.feasible && (!best || b.step_time_s < best->step_time_s))
            best = &b;
    return best;
}

Plan baselineBasePlan(const Plan& asOpened, const Plan& current) {
    Plan p = asOpened;
    p.sequence_length = current.sequence_length;
    p.global_batch_sequences = current.global_batch_sequences;
    p.token_budget = current.token_budget;
    p.target_loss = current.target_loss;
    return p;
}

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

} // namespace sa

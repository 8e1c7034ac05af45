#include "cost/evaluate.h"

#include "cost/memory.h"
#include "cost/outer.h"
#include "cost/run.h"
#include "cost/schedule.h"
#include "cost/stages.h"
#include "formats/documents.h"
#include "topology/topology.h"

#include <atomic>

namespace sa {

const char* toString(OpKind k) {
    switch (k) {
    case OpKind::Forward:
        return "forward";
    case OpKind::Backward:
        return "backward";
    case OpKind::WeightGrad:
        return "weight-grad";
    case OpKind::Recompute:
        return "recompute";
    case OpKind::SendForward:
        return "send-forward";
    case OpKind::SendBackward:
        return "send-backward";
    case OpKind::DpSync:
        return "dp-sync";
    case OpKind::Optimizer:
        return "optimizer";
    }
    return "?";
}

const char* toString(LinkTier t) {
    switch (t) {
    case LinkTier::InterBuilding:
        return "inter-building";
    case LinkTier::BuildingUplink:
        return "building-uplink";
    case LinkTier::ZoneUplink:
        return "zone-uplink";
    }
    return "?";
}

std::string EvaluationError::str() const {
    std::string s;
    for (const auto& p : problems) {
        if (!s.empty())
            s += '\n';
        s += p.str();
    }
    return s;
}

namespace {

// Not the address: a new Evaluator may be made where an old one was.
std::uint64_t nextEvaluatorId() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

std::unique_ptr<Topology> topologyWith(const Cluster& cluster, const Routing& routing) {
    Cluster routed = cluster;
    routed.routing = routing;
    return std::make_unique<Topology>(routed);
}

} // namespace

Evaluator::Evaluator(const Cluster& cluster)
    : cluster_(cluster)
    , topology_(std::make_unique<Topology>(cluster_))
    , id_(nextEvaluatorId()) {}

const Topology& Evaluator::topologyFor(const Plan& plan, std::unique_ptr<Topology>& scratch,
                                       std::uint64_t& id) const {
    id = id_;
    if (!plan.routing || *plan.routing == cluster_.routing)
        return *topology_;
    const Routing& want = *plan.routing;
    Routing preset;
    preset.policy = want.policy;
    if (want == preset) {
        RoutingVariant& v = variants_[std::size_t(want.policy)];
        std::call_once(v.built, [&] {
            v.topology = topologyWith(cluster_, want);
            v.id = nextEvaluatorId();
        });
        id = v.id;
        return *v.topology;
    }
    scratch = topologyWith(cluster_, want);
    id = nextEvaluatorId();
    return *scratch;
}

Evaluator::~Evaluator() = default;

EvaluationResult evaluate(const Scenario& scenario, const EvaluateOptions& options) {
    Evaluator e(scenario.cluster);
    return e.evaluate(scenario.model, scenario.plan, options);
}

// What one thread's evaluations hand to the next: each memoised stage keyed
// by its input (core/cost/stages.h), and the buffers of one evaluation.
struct EvaluationCache::State {
    Memo<LayoutInput, Layout, 1> layouts;
    Memo<TransportInput, Transports, 1> transports;
    Memo<BuildingCostInput, BuildingCosts, 16> buildingCosts; // ~4 plans' worth of buildings
    Memo<Zero3Input, Zero3> zero3;
    Memo<P2pInput, P2p, 1> p2p;
    Memo<DpCollectivesInput, DpCollectives> dpCollectives;
    Memo<PipelineInput, PipelineResult> pipelines; // lean simulations (no timeline)
    // The inputs, kept so that filling them reuses their buffers.
    LayoutInput layoutIn;
    TransportInput transportIn;
    BuildingCostInput costIn;
    Zero3Input zero3In;
    P2pInput p2pIn;
    DpCollectivesInput dpIn;
    // Buffers of one evaluation.
    std::vector<BuildingCosts> costs; // [building]
    ChunkLayers chunkLayers;
    EpExchange ep;
    ChunkTable chunks;
    std::vector<double> stageParams;
    std::vector<double> stageGatherBytes, stageFp8Params; // [stage]
    PipelineInput pipelineIn;
    PipelineResult recorded, withoutP2p; // with the timeline; with free P2P (the breakdown)
    PipelineScratch scratch;
    DpTiming dp;
    Zero3Stream zero3Stream; // ZeRO-3 under zero-bubble: its DP stream
    bool zero3StreamUsed = false;
};

EvaluationCache::EvaluationCache()
    : state_(std::make_unique<State>()) {}
EvaluationCache::~EvaluationCache() = default;
std::int64_t EvaluationCache::layoutHits() const {
    return state_->layouts.hits();
}
std::int64_t EvaluationCache::layoutMisses() const {
    return state_->layouts.misses();
}

EvaluationResult Evaluator::evaluate(const Model& model, const Plan& plan,
                                     const EvaluateOptions& options) const {
    return evaluate(model, plan, options, nullptr);
}

namespace {

using State = EvaluationCache::State;

Ref<Layout> layoutOf(const ClusterContext& ctx, const Plan& plan, const std::string& planFile,
                     State& st) {
    LayoutInput& in = st.layoutIn;
    in.cluster = ctx.id;
    in.parallelism = plan.parallelism;
    in.rank_order = plan.rank_order;
    if (plan.placement)
        in.runs = plan.placement->runs;
    else
        in.runs.clear();
    in.plan_file = planFile;
    in.dp_shard = plan.dpShard();
    return st.layouts.get(in, [&](const LayoutInput& i, Layout& out) { buildLayout(ctx, i, out); });
}

Ref<Transports> transportsOf(const ClusterContext& ctx, const Plan& plan,
                             const std::vector<double>& background, State& st) {
    st.transportIn.cluster = ctx.id;
    st.transportIn.overrides = plan.link_technologies;
    st.transportIn.background_gbps = background;
    return st.transports.get(st.transportIn, [&](const TransportInput& i, Transports& out) {
        buildTransports(ctx, i, out);
    });
}

// Layer costs on every building that holds a stage (st.costs).
void layerCostsOf(const ClusterContext& ctx, const Model& model, const Plan& plan,
                  const Layout& layout, State& st) {
    st.costs.assign(ctx.cluster->buildings.size(), BuildingCosts{});
    for (const auto& held : layout.stageBuildings)
        for (int b : held)
            st.costs[std::size_t(b)].used = true;
    BuildingCostInput& in = st.costIn;
    in.cluster = ctx.id;
    in.plan = layerPlanKey(plan);
    in.model = model;
    for (std::size_t b = 0; b < st.costs.size(); ++b) {
        if (!st.costs[b].used)
            continue;
        in.building = int(b);
        st.costs[b] =
            *st.buildingCosts.get(in, [&](const BuildingCostInput& i, BuildingCosts& out) {
                buildingCosts(ctx, i, out);
            });
        st.costs[b].used = true;
    }
}

// Per (stage, chunk) durations with EP's contention and ZeRO-3's collectives;
// returns ZeRO-3's output when the plan has one.
// The share of a stage's forward and backward ops that Megatron-Core's
// combined 1F1B runs with the MoE all-to-all beside the other microbatch's
// compute (plan ep_overlap): with EP, without full recompute or the MoE
// module's selective recompute, under PP only
// with interleaving (transformer_config.py asserts all three). The warm-up
// and cool-down run alone: each rank's warm-up forwards (warmupForwards),
// one more microbatch with the overlap, the same number of backwards after
// the last forward, averaged over the ranks; without a pipeline only the
// first forward and the last backward.
double epOverlapSteady(const Plan& plan, int v) {
    const Parallelism& par = plan.parallelism;
    if (!plan.ep_overlap || par.ep <= 1 || plan.recompute == Recompute::Full ||
        plan.recomputes(RecomputeModule::Moe) || (par.pp > 1 && v <= 1))
        return 0;
    const int m = int(std::max<std::int64_t>(1, plan.microbatches()));
    double warm = 0;
    for (int s = 0; s < par.pp; ++s)
        warm += warmupForwards(par.pp, v, m, s);
    const double alone = warm / par.pp + 1.0;
    return std::clamp(1.0 - alone / (double(m) * v), 0.0, 1.0);
}

// The weights' FP8 casts a step pays (docs/COST_MODEL.md "FP8 linear
// layers"). Transformer Engine keeps a linear's FP8 weight (and its
// transpose) from the step's first microbatch to its last when
// Megatron-Core says which is first (TELinear.forward's
// is_first_microbatch, set by the schedules' forward_step; TE's
// Linear.forward caches the "weight" workspace) and the weights stay in
// place between them: not under ZeRO-3 gathering them again for every
// microbatch. torchao's Float8Linear casts every time, forward and
// backward. Weights gathered in FP8 (plan fp8_param_gather) come cast:
// Megatron-Core keeps them in FP8 and casts its optimizer shard once a step
// (dpTiming); torchao casts each GPU's shard before every gather, twice a
// microbatch when FSDP gathers for each forward and backward, else once a
// step.
ChunkTimesInput::WeightCasts weightCasts(const Plan& plan) {
    const double m = double(std::max<std::int64_t>(1, plan.microbatches()));
    const bool te = plan.fp8_linear == Fp8Linear::TransformerEngine;
    if (plan.fp8_param_gather) {
        if (te)
            return {0, 0, 0};
        const double gathers = plan.fsdpPerMicrobatch() ? 2.0 * m : 1.0;
        const double shard = double(plan.dpShard()) * plan.parallelism.cp;
        return {gathers / (m * shard), 0, 0};
    }
    if (te && !plan.fsdpPerMicrobatch())
        return {1.0 / m, 0, 0};
    return {1, 1, 1};
}

// HBM bytes per parameter a microbatch streams to add its weight gradients
// to the accumulated ones when the GEMMs do not (plan
// grad_accumulation_fusion false; docs/COST_MODEL.md "Gradient
// accumulation"). The accumulated gradients are in the reduction's precision
// (g bytes), a microbatch's in BF16: read both, write the sum, 2g + 2 bytes,
// each microbatch (Megatron's main_grad hook; autograd). FSDP2 under PP,
// which reduces once a step, keeps the first microbatch's gradients as its
// accumulator, cast to fp32 (2 + 4 bytes; nothing when it reduces in BF16);
// FSDP reducing every microbatch accumulates shards only (left out).
double gradAccumulationBytes(const Plan& plan) {
    if (plan.grad_accumulation_fusion || plan.fsdpPerMicrobatch())
        return 0;
    const double m = double(std::max<std::int64_t>(1, plan.microbatches()));
    const double g = double(plan.grad_reduce_bytes);
    const double add = 2.0 * g + 2.0;
    if (plan.zero_stage < 3)
        return add;
    if (m <= 1) // the only microbatch's gradients are reduced as they are
        return 0;
    const double first = g > kWeightBytes ? kWeightBytes + g : 0.0;
    return (first + (m - 1.0) * add) / m;
}

// FSDP's copies (plan fsdp_copies; docs/COST_MODEL.md "FSDP's copies"),
// from PyTorch FSDP2's torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py:
// foreach_all_gather_copy_out copies the all-gather's output into each
// parameter's own tensor (split_with_sizes_copy: read and write the gathered
// bytes, 2 per BF16 weight, 1 per weight gathered in FP8), and foreach_reduce
// copies the gradients into the reduce-scatter's input in the reduction's
// precision (chunk_cat: read 2, write g), both on the compute stream (the
// copy into the all-gather's input is a shard's, on its own stream: left
// out). Each microbatch when FSDP gathers and reduces every microbatch (the
// forward's gather, the backward's second gather and reduce); else once a
// step, the gradients then read from their accumulator (g bytes when it is
// wider than BF16).
ChunkTimesInput::FsdpCopies fsdpCopyBytes(const Plan& plan) {
    if (plan.zero_stage != 3 || !plan.fsdp_copies ||
        std::int64_t(plan.parallelism.dp) * plan.parallelism.cp <= 1)
        return {};
    const double m = double(std::max<std::int64_t>(1, plan.microbatches()));
    const double g = double(plan.grad_reduce_bytes);
    const double out = 2.0 * kWeightBytes;
    const double fp8Out = plan.fp8_param_gather ? -2.0 * (kWeightBytes - kFp8WeightBytes) : 0.0;
    if (plan.fsdpPerMicrobatch())
        return {out, fp8Out, out + kWeightBytes + g, fp8Out};
    const double read = m > 1 && g > kWeightBytes ? g : kWeightBytes;
    return {out / m, fp8Out / m, (read + g) / m, 0.0};
}

const Zero3* chunkTimesOf(const ClusterContext& ctx, const Model& model, const Plan& plan,
                          Ref<Layout> layout, Ref<Transports> transports, Ref<P2p> p2p,
                          Evaluation& ev, State& st) {
    const Parallelism& par = plan.parallelism;
    const int v =
        plan.schedule.kind == ScheduleKind::Interleaved ? plan.schedule.virtual_stages : 1;
    ev.layers_per_stage = layersPerStage(model, plan);
    chunkLayers(model, ev.layers_per_stage, par.pp, v, st.chunkLayers);
    epExchange(ctx,
               {&*layout, &*transports, transports.version(), &st.costs, par.ep, bool(model.moe),
                par.expertRanksPerCell()},
               st.ep);
    chunkTimes({&*layout, &st.costs, &st.chunkLayers, &st.ep.cross_s, &model, par.pp, v,
                plan.recompute, plan.recompute_method, plan.recompute_layers,
                plan.schedule.kind == ScheduleKind::ZeroBubble, epOverlapSteady(plan, v),
                weightCasts(plan), gradAccumulationBytes(plan), fsdpCopyBytes(plan)},
               st.chunks);
    st.stageParams.assign(std::size_t(par.pp), 0.0);
    for (int s = 0; s < par.pp; ++s)
        st.stageParams[std::size_t(s)] = sumChunks(st.chunks[std::size_t(s)], &ChunkTimes::params);
    // What ZeRO gathers: BF16 weights, the FP8 linears' in FP8 with
    // fp8_param_gather.
    st.stageFp8Params.assign(std::size_t(par.pp), 0.0);
    st.stageGatherBytes.assign(std::size_t(par.pp), 0.0);
    for (int s = 0; s < par.pp; ++s) {
        const std::size_t i = std::size_t(s);
        st.stageFp8Params[i] = sumChunks(st.chunks[i], &ChunkTimes::fp8_linear_params);
        st.stageGatherBytes[i] = st.stageParams[i] * kWeightBytes;
        if (plan.fp8_param_gather)
            st.stageGatherBytes[i] -= st.stageFp8Params[i] * (kWeightBytes - kFp8WeightBytes);
    }
    st.zero3StreamUsed = false;
    if (!plan.fsdpPerMicrobatch() || par.dp * par.cp <= 1)
        return nullptr;
    Zero3Input& in = st.zero3In;
    in.layout = layout;
    in.transports = transports;
    in.p2p = p2p;
    in.algo = plan.algoFor(Dim::DP);
    in.grad_bytes = double(plan.grad_reduce_bytes);
    in.v = v;
    in.microbatches = int(std::max<std::int64_t>(1, plan.microbatches()));
    in.stage_params = st.stageParams;
    in.stage_gather_bytes = st.stageGatherBytes;
    const Ref<Zero3> z3 =
        st.zero3.get(in, [&](const Zero3Input& i, Zero3& out) { zero3Collectives(ctx, i, out); });
    st.zero3StreamUsed = plan.schedule.kind == ScheduleKind::ZeroBubble;
    applyZero3(*z3, st.chunkLayers, *layout, st.costs, par.pp, v, st.chunks,
               st.zero3StreamUsed ? &st.zero3Stream : nullptr);
    return &*z3;
}

// The bytes each TP rank of the last stage all-reduces with the first
// stage once a step: the gradients of its copy of the embedding table,
// which it holds for tied output weights or for the MTP modules' lookups
// (Megatron-Core's _allreduce_word_embedding_grads over the embedding
// group, in the gradient buffer's type; DeepSpeed's
// _exec_reduce_tied_grads). None without a pipeline.
double embeddingSyncBytes(const Model& model, const Plan& plan) {
    const Parallelism& par = plan.parallelism;
    if (par.pp <= 1 || !(model.tied_embeddings || model.mtp_layers > 0))
        return 0;
    return double(model.vocab) * double(model.hidden) / par.tp * plan.grad_reduce_bytes;
}

Ref<P2p> p2pOf(const ClusterContext& ctx, const Model& model, const Plan& plan, Ref<Layout> layout,
               Ref<Transports> transports, State& st) {
    const Parallelism& par = plan.parallelism;
    const int v =
        plan.schedule.kind == ScheduleKind::Interleaved ? plan.schedule.virtual_stages : 1;
    const double tokens = double(plan.micro_batch_sequences) * plan.sequence_length / par.cp;
    P2pInput& in = st.p2pIn;
    in.layout = layout;
    in.transports = transports;
    in.virtual_stages = par.pp * v;
    in.bytes_per_gpu = tokens * double(model.hidden) * kWeightBytes / par.tp; // scatter-gather
    in.embedding_sync_bytes_per_gpu = embeddingSyncBytes(model, plan);
    return st.p2p.get(in, [&](const P2pInput& i, P2p& out) { p2pTransfers(ctx, i, out); });
}

// The pipeline with the timeline recorded, or the lean simulation kept for
// equal inputs (plans that differ only where the pipeline does not look).
const PipelineResult& simulated(State& st) {
    if (st.pipelineIn.record) {
        simulatePipeline(st.pipelineIn, st.recorded, st.scratch);
        return st.recorded;
    }
    return *st.pipelines.get(st.pipelineIn, [&](const PipelineInput& in, PipelineResult& out) {
        simulatePipeline(in, out, st.scratch);
    });
}

const PipelineResult& withFreeP2p(State& st) {
    PipelineInput in = st.pipelineIn;
    in.record = false;
    std::fill(in.p2p_fwd.begin(), in.p2p_fwd.end(), 0.0);
    std::fill(in.p2p_bwd.begin(), in.p2p_bwd.end(), 0.0);
    simulatePipeline(in, st.withoutP2p, st.scratch);
    return st.withoutP2p;
}

Ref<DpCollectives> dpCollectivesOf(const ClusterContext& ctx, const Plan& plan, Ref<Layout> layout,
                                   Ref<Transports> transports, Ref<P2p> p2p, State& st) {
    DpCollectivesInput& in = st.dpIn;
    in.layout = layout;
    in.transports = transports;
    const int zero = plan.effectiveZeroStage();
    in.zero_class = zero;
    in.all_reduce = zero == 0 || !plan.grad_reduce_scatter;
    in.p2p = p2p;
    in.algo = plan.algoFor(Dim::DP);
    in.grad_bytes = double(plan.grad_reduce_bytes);
    in.stage_params = st.stageParams;
    in.stage_gather_bytes = st.stageGatherBytes;
    in.compression = {};
    if (plan.dp_compression)
        in.compression = CrossCompression{plan.dp_compression, double(plan.grad_reduce_bytes)};
    return st.dpCollectives.get(
        in, [&](const DpCollectivesInput& i, DpCollectives& out) { dpCollectives(ctx, i, out); });
}

} // namespace

EvaluationResult Evaluator::evaluate(const Model& model, const Plan& plan,
                                     const EvaluateOptions& options, EvaluationCache* cache) const {
    if (options.validate) {
        auto problems = validateScenario(Scenario{cluster_, model, plan});
        if (!problems.empty())
            return EvaluationError{std::move(problems)};
    }
    EvaluationResult r = plan.outer_sync ? evaluateOuterSync(*this, model, plan, options, cache)
                                         : evaluateStep(model, plan, options, cache);
    if (auto* ev = std::get_if<Evaluation>(&r)) {
        degradedSteps(model, plan, options, cache, *ev);
        runReports(cluster_, model, plan, *ev);
    }
    return r;
}

void Evaluator::degradedSteps(const Model& model, const Plan& plan, const EvaluateOptions& options,
                              EvaluationCache* cache, Evaluation& ev) const {
    // One link degraded at a time (first order in the fractions): the whole
    // plan again with that link's capacity cut to degraded_bandwidth_gbps,
    // taken as extra background on both directions of its edges. A
    // synchronous step waits on the slow link every step; an outer sync only
    // in the syncs, so decoupled training loses less (docs/RUN.md).
    ev.degraded_steps.clear();
    for (std::size_t i = 0; i < cluster_.links.size(); ++i) {
        const Link& link = cluster_.links[i];
        if (!(link.degraded_fraction > 0))
            continue;
        const Topology& topo = topology();
        EvaluateOptions o = options;
        o.timeline = false;
        o.detail = false;
        o.validate = false;
        o.background_gbps.resize(topo.edges().size() * 2, 0.0);
        for (const TopoEdge& e : topo.edges())
            if (e.kind == EdgeKind::InterBuilding && e.link == int(i))
                for (int dir = 0; dir < 2; ++dir)
                    o.background_gbps[std::size_t(e.id) * 2 + std::size_t(dir)] +=
                        link.bandwidth_gbps - link.degraded_bandwidth_gbps;
        const EvaluationResult r = plan.outer_sync ? evaluateOuterSync(*this, model, plan, o, cache)
                                                   : evaluateStep(model, plan, o, cache);
        const auto* slow = std::get_if<Evaluation>(&r);
        ev.degraded_steps.push_back(
            {link.name, link.degraded_fraction,
             slow ? std::max(slow->step_time_s, ev.step_time_s) : ev.step_time_s});
    }
}

EvaluationResult Evaluator::evaluateStep(const Model& model, const Plan& plan,
                                         const EvaluateOptions& options,
                                         EvaluationCache* cache) const {
    std::unique_ptr<State> fresh = cache ? nullptr : std::make_unique<State>();
    State& st = cache ? *cache->state_ : *fresh;
    std::unique_ptr<Topology> scratchTopology;
    std::uint64_t contextId = 0;
    const Topology& topology = topologyFor(plan, scratchTopology, contextId);
    const ClusterContext ctx{&cluster_, &topology, contextId};
    const int pp = plan.parallelism.pp;
    const int mb = int(std::max<std::int64_t>(1, plan.microbatches()));

    const Ref<Layout> layout = layoutOf(ctx, plan, options.plan_file, st);
    if (!layout->placed.ok())
        return EvaluationError{layout->placed.problems};
    const Ref<Transports> transports = transportsOf(ctx, plan, options.background_gbps, st);
    Evaluation ev;
    ev.gpus = plan.parallelism.gpus();
    ev.microbatches = plan.microbatches();
    ev.stage_building = layout->stageBuilding;
    ev.building_gpus = layout->placed.gpus_used;

    layerCostsOf(ctx, model, plan, *layout, st);
    const Ref<P2p> p2p = p2pOf(ctx, model, plan, layout, transports, st);
    const Zero3* z3 = chunkTimesOf(ctx, model, plan, layout, transports, p2p, ev, st);
    ev.stage_params = st.stageParams;
    ev.stage_expert_params.assign(std::size_t(pp), 0.0);
    for (int s = 0; s < pp; ++s)
        ev.stage_expert_params[std::size_t(s)] =
            sumChunks(st.chunks[std::size_t(s)], &ChunkTimes::expert_params);
    pipelineInput(plan, st.chunks, *p2p, options.timeline, st.pipelineIn);
    const PipelineResult& pr = simulated(st);
    if (!pr.ok) // never expected: a plan that passed validation has a valid order
        return EvaluationError{{Diagnostic{options.plan_file, "/schedule",
                                           "internal: the pipeline order deadlocked"}}};
    const Ref<DpCollectives> dp = dpCollectivesOf(ctx, plan, layout, transports, p2p, st);
    const bool fp8Kept = plan.fp8_param_gather && plan.fp8_linear == Fp8Linear::TransformerEngine;
    const KernelConstants kc;
    dpTiming({&plan, &*layout, &st.costs, &*dp, &st.pipelineIn, &pr, &st.stageParams,
              &st.stageGatherBytes, &st.stageFp8Params,
              !fp8Kept                                ? 0.0
              : plan.fp8_recipe == Fp8Recipe::Delayed ? kc.fp8_delayed_cast_bytes_per_element
                                                      : kc.fp8_cast_bytes_per_element,
              st.zero3StreamUsed ? &st.zero3Stream : nullptr, &ev.layers_per_stage,
              p2p->embedding_sync_s},
             st.dp);
    ev.step_time_s = st.dp.step_s;
    ev.replica_reduce_s = st.dp.replicaReduce[std::size_t(st.dp.critical)];

    flops({&model, &plan, &*layout, &st.costs, ev.step_time_s}, ev);
    if (options.detail) {
        const BreakdownInput in{&st.chunks, &pr, &withFreeP2p(st), &st.dp, mb};
        ev.breakdown = breakdown(in, st.dp.critical);
        for (int s = 0; s < pp; ++s)
            ev.stage_breakdown.push_back(breakdown(in, s));
    } else {
        // What the run's reports read (GPU busy time, stragglers), cheaply.
        ev.breakdown.compute_s =
            mb * sumChunks(st.chunks[std::size_t(st.dp.critical)], &ChunkTimes::compute);
    }
    memory(
        {&plan, &*layout, &st.costs, &st.chunks, &ev.layers_per_stage, &pr, &st.stageParams, &*dp},
        ev.memory, ev.warnings);
    if (plan.dp_compression) {
        CompressionReport& c = ev.compression.emplace();
        c.method = plan.dp_compression->method;
        for (const CollectiveCost& rs : dp->rsCost)
            c.applied = c.applied || rs.compressed;
        // ZeRO-2 reduce-scatters (and so encodes) every microbatch.
        const double syncs = plan.effectiveZeroStage() == 2 ? double(mb) : 1.0;
        c.compute_s = st.dp.codec[std::size_t(st.dp.critical)] * syncs;
        c.residual_gib = ev.memory.compression_gib;
    }
    linkTraffic(ctx,
                {&plan, &*transports, &*p2p->phase, p2p->slot, &*dp->reduce,
                 dp->reduceUncompressed ? &*dp->reduceUncompressed : nullptr, &*dp->gather,
                 z3 ? &*z3->step : nullptr, &*st.ep.phase, &st.chunkLayers, &st.dp, mb,
                 options.detail, dp->replicaReduce ? &*dp->replicaReduce : nullptr,
                 p2p->embeddingSync ? &*p2p->embeddingSync : nullptr},
                ev);
    if (options.detail) {
        planWarnings(ctx, plan, *layout, *dp, ev);
        hostWarnings(ctx, plan, st.costs, ev);
        accuracyWarnings(model, plan, st.costs, ev);
    }
    if (options.timeline)
        timeline(pr, std::move(st.recorded.ops), st.dp, pp, st.pipelineIn.chunks, mb, ev.timeline);
    return ev;
}

} // namespace sa

// Stages of the evaluation that read the simulated step: FLOPs and MFU, the
// breakdown on the critical stage, memory per stage, link traffic, warnings
// and the timeline.
#include "cost/memory.h"
#include "cost/network.h"
#include "cost/stages.h"
#include "topology/topology.h"

#include <algorithm>
#include <cstdio>

namespace sa {

namespace {
std::string formatPercent(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g%%", fraction * 100);
    return buf;
}
} // namespace

void flops(const FlopsInput& in, Evaluation& ev) {
    const Model& model = *in.model;
    const Plan& plan = *in.plan;
    const Layout& layout = *in.layout;
    const std::vector<BuildingCosts>& bc = *in.costs;
    const double cellGpus = double(layout.placed.grid.cell_gpus);
    const BuildingCosts& k = bc[std::size_t(layout.stageBuilding[0])];
    // The multi-token-prediction modules count as a block of the last
    // layer's kind, their own projection and one more output layer each,
    // as Megatron's FLOP count has them (training.py: the block among the
    // layers, "MTP norms and proj", the logits x (mtp_num_layers + 1)).
    const int mtp = model.mtp_layers;
    const int nMoeLayers =
        model.moeLayersIn(0, model.layers) + (mtp > 0 && model.lastLayerIsMoe() ? mtp : 0);
    const int nDenseLayers = model.layers + mtp - nMoeLayers;
    const double perMicroModel =
        cellGpus *
        (nDenseLayers * k.dense.model_flops_total + nMoeLayers * k.moe.model_flops_total +
         (1 + mtp) * k.logits.model_flops_total + mtp * k.mtp.model_flops_total);
    const double perMicroHw =
        cellGpus * (nDenseLayers * k.dense.hw_flops_total + nMoeLayers * k.moe.hw_flops_total +
                    (1 + mtp) * k.logits.hw_flops_total + mtp * k.mtp.hw_flops_total);
    const double micro = double(plan.microbatches()) * plan.parallelism.dp;
    ev.model_flops_per_step = perMicroModel * micro;
    ev.hardware_flops_per_step = perMicroHw * micro;
    double peak = 0;
    for (std::size_t b = 0; b < bc.size(); ++b) {
        if (!bc[b].used)
            continue;
        std::int64_t cells = 0;
        for (const auto& counts : layout.stageCounts)
            cells += counts[b];
        peak += double(cells) * cellGpus * gemmPeakFlops(*bc[b].gpu, model);
    }
    const double step = in.step_s;
    if (step > 0 && peak > 0) {
        ev.mfu = ev.model_flops_per_step / (step * peak);
        ev.hfu = ev.hardware_flops_per_step / (step * peak);
        ev.tflops_per_gpu = ev.model_flops_per_step / step / double(ev.gpus) / 1e12;
        ev.tokens_per_s = double(plan.global_batch_sequences) * plan.sequence_length / step;
    }
}

Breakdown breakdown(const BreakdownInput& in, int s) {
    const std::size_t c = std::size_t(s);
    const auto& cs = (*in.chunks)[c];
    const PipelineResult& pr = *in.simulated;
    const double mb = in.microbatches;
    Breakdown br;
    br.compute_s = mb * sumChunks(cs, &ChunkTimes::compute);
    br.tp_exposed_s = mb * sumChunks(cs, &ChunkTimes::tp);
    br.cp_exposed_s = mb * sumChunks(cs, &ChunkTimes::cp);
    br.ep_exposed_s = mb * sumChunks(cs, &ChunkTimes::ep);
    const double busy = pr.busy_s[c];
    const double zeroPending =
        std::max(0.0, busy - (br.compute_s + br.tp_exposed_s + br.cp_exposed_s + br.ep_exposed_s));
    br.dp_exposed_s = zeroPending + (in.dp->end[c] - pr.end_s[c]) + in.dp->gatherExposed[c];
    // The stage's idle time in the pipeline: the P2P's share is what the
    // run without P2P ends sooner, the bubble the rest. A list schedule can
    // end later without the P2P (zero-bubble places its deferred weight
    // gradients by what is ready when), so the share is bounded by the idle
    // time: the parts add up to the stage's end either way.
    const double idle = std::max(0.0, pr.end_s[c] - busy);
    br.pp_exposed_s = std::clamp(pr.end_s[c] - in.withoutP2p->end_s[c], 0.0, idle);
    br.bubble_s = idle - br.pp_exposed_s;
    br.optimizer_s = in.dp->optimizer[c];
    return br;
}

void memory(const MemoryInput& in, MemoryUsage& mem, std::vector<std::string>& warnings) {
    const Plan& plan = *in.plan;
    const Parallelism& par = plan.parallelism;
    const int pp = par.pp;
    mem.per_stage_peak_gib.assign(std::size_t(pp), 0);
    mem.per_stage_capacity_gib.assign(std::size_t(pp), 0);
    double worstRatio = -1;
    for (int s = 0; s < pp; ++s) {
        const auto& cs = (*in.chunks)[std::size_t(s)];
        StageMemoryInput si;
        si.zero = plan.effectiveZeroStage();
        si.grad_bytes = plan.grad_reduce_bytes;
        si.optimizer = optimizerPrecision(plan);
        si.params = (*in.stage_params)[std::size_t(s)];
        si.expert_params = sumChunks(cs, &ChunkTimes::expert_params);
        si.fp8_copy_params = sumChunks(cs, &ChunkTimes::fp8_copy_params);
        si.fp8_copy_bytes = KernelConstants{}.fp8_weight_copy_bytes;
        if (plan.fp8_param_gather) {
            si.fp8_gathered_params = sumChunks(cs, &ChunkTimes::fp8_linear_params);
            si.fp8_kept = plan.fp8_linear == Fp8Linear::TransformerEngine;
        }
        // The data-parallel group with CP (Megatron's dp x cp), or its
        // sharding group under HSDP; experts over the expert-data-parallel
        // group (Parallelism::expertDataShards; no HSDP with ep > 1).
        si.dp_shard = double(plan.dpShard()) * par.cp;
        si.ep_shard = std::max(1.0, par.expertDataShards());
        si.layers = (*in.stage_layers)[std::size_t(s)];
        double transient = 0;
        for (const auto& c : cs)
            transient = std::max(transient, c.transient);
        si.activation_bytes = in.simulated->peak_activation_bytes[std::size_t(s)] + transient;
        if (in.collectives && std::size_t(s) < in.collectives->rsCost.size())
            si.residual_bytes =
                in.collectives->rsCost[std::size_t(s)].residual_elements * kGradBytes;
        const StageMemory sm = stageMemory(si);
        double cap = 1e300;
        for (int b : in.layout->stageBuildings[std::size_t(s)])
            cap = std::min(cap, (*in.costs)[std::size_t(b)].gpu->memory_gib);
        mem.per_stage_peak_gib[std::size_t(s)] = sm.total_gib;
        mem.per_stage_capacity_gib[std::size_t(s)] = cap;
        if (sm.total_gib / cap > worstRatio) {
            worstRatio = sm.total_gib / cap;
            mem.worst_stage = s;
            mem.weights_gib = sm.weights / kGiB;
            mem.gradients_gib = sm.gradients / kGiB;
            mem.optimizer_gib = sm.optimizer / kGiB;
            mem.activations_gib = sm.activations / kGiB;
            mem.compression_gib = sm.residual / kGiB;
            mem.other_gib =
                sm.total_gib -
                (sm.weights + sm.gradients + sm.optimizer + sm.activations + sm.residual) / kGiB;
            mem.peak_gib_per_gpu = sm.total_gib;
            mem.capacity_gib = cap;
        }
    }
    mem.fits = mem.peak_gib_per_gpu <= mem.capacity_gib;
    if (!mem.fits) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "memory: stage %d needs %.1f GiB per GPU, %.1f GiB more than the %.0f GiB "
                      "it has",
                      mem.worst_stage, mem.peak_gib_per_gpu,
                      mem.peak_gib_per_gpu - mem.capacity_gib, mem.capacity_gib);
        warnings.push_back(buf);
    }
}

namespace {

// One direction of one edge: bytes per step by the dimension that sends them.
struct DirectedBytes {
    double pp = 0, dp = 0, ep = 0;
    double total() const { return pp + dp + ep; }
};

struct StepTraffic {
    const LinkTrafficInput& in;
    double dpMult;     // ZeRO-3's traffic is in zero3Step, not in the DP phases
    double reduceMult; // ZeRO-2 reduce-scatters every microbatch
    double epCalls;    // all-to-alls per step: four per MoE layer per microbatch
    double p2pCrossings;

    explicit StepTraffic(const LinkTrafficInput& input)
        : in(input)
        , dpMult(input.plan->effectiveZeroStage() == 3 ? 0.0 : 1.0)
        , reduceMult(input.plan->effectiveZeroStage() == 2 ? double(input.microbatches) : 1.0)
        , p2pCrossings(double(input.microbatches)) { // each boundary carries every microbatch
        double epLayers = 0;
        for (int n : in.chunks->moe)
            epLayers = std::max(epLayers, double(n));
        // Full recompute runs the forward's two all-to-alls again in the
        // recomputed layers (block: the first recompute_layers of a chunk).
        double redone = 0;
        if (in.plan->recompute == Recompute::Full)
            redone = in.plan->recompute_method == RecomputeMethod::Block
                         ? std::min(epLayers, double(in.plan->recompute_layers))
                         : epLayers;
        epCalls = 4.0 * input.microbatches * epLayers + 2.0 * input.microbatches * redone;
    }
    DirectedBytes bytes(int edge, int dir) const {
        DirectedBytes b;
        b.pp = in.p2p->load(edge, dir) * p2pCrossings;
        b.dp = dpMult * (reduceMult * in.dpReduce->load(edge, dir) + in.dpGather->load(edge, dir)) +
               (in.zero3Step ? in.zero3Step->load(edge, dir) : 0.0) +
               (in.dpReplica ? in.dpReplica->load(edge, dir) : 0.0) +
               (in.embeddingSync ? in.embeddingSync->load(edge, dir) : 0.0);
        b.ep = in.ep->load(edge, dir) * epCalls;
        return b;
    }
};

LinkUsage linkUsage(const TopoEdge& e, const StepTraffic& traffic, double maxDp, double stepTime,
                    const EdgeTransport& transport) {
    const LinkTrafficInput& in = traffic.in;
    LinkUsage u;
    u.name = e.name;
    u.edge = e.id;
    u.tier = e.kind == EdgeKind::InterBuilding    ? LinkTier::InterBuilding
             : e.kind == EdgeKind::BuildingUplink ? LinkTier::BuildingUplink
                                                  : LinkTier::ZoneUplink;
    u.capacity_gbps = e.bandwidth_gbps;
    u.latency_ms = e.latency_ms;
    u.technology = transport.tech.name;
    const double line = gbpsToBytesPerS(e.bandwidth_gbps);
    double dirBytes[2] = {0, 0}, dirBusy[2] = {0, 0}, peak = 0;
    bool usesPP = false, usesDP = false, usesEP = false;
    for (int dir = 0; dir < 2; ++dir) {
        const DirectedBytes b = traffic.bytes(e.id, dir);
        dirBytes[dir] = b.total();
        if (b.pp > 0) {
            usesPP = true;
            dirBusy[dir] += b.pp / in.p2p->rateBps(e.id, dir);
            peak = std::max(
                peak, std::min(1.0, in.p2p->load(e.id, dir) / std::max(in.p2pSlot, 1e-12) / line));
        }
        if (b.dp > 0) {
            usesDP = true;
            // Each phase drains at the rate its own concurrent transfers reach.
            const TrafficPhase* phases[] = {in.dpReduce, in.dpGather, in.zero3Step, in.dpReplica,
                                            in.embeddingSync};
            const double mult[] = {traffic.dpMult * traffic.reduceMult, traffic.dpMult, 1.0, 1.0,
                                   1.0};
            double busy = 0;
            for (int k = 0; k < 5; ++k) {
                const double bytes = phases[k] ? mult[k] * phases[k]->load(e.id, dir) : 0.0;
                if (bytes > 0)
                    busy += bytes / std::max(phases[k]->rateBps(e.id, dir), 1.0);
            }
            dirBusy[dir] += busy;
            const double window = in.plan->effectiveZeroStage() == 3 ? stepTime : maxDp;
            peak = std::max(peak, std::min(1.0, b.dp / std::max(window, busy) / line));
        }
        if (b.ep > 0) {
            usesEP = true;
            const double r = in.ep->rateBps(e.id, dir);
            dirBusy[dir] += b.ep / r;
            peak = std::max(peak, std::min(1.0, r / line));
        }
    }
    u.bytes_per_step = std::max(dirBytes[0], dirBytes[1]);
    u.direction_bytes_per_step[0] = dirBytes[0];
    u.direction_bytes_per_step[1] = dirBytes[1];
    u.busy_s = std::max(dirBusy[0], dirBusy[1]);
    u.utilization = stepTime > 0 ? std::min(1.0, u.bytes_per_step / (line * stepTime)) : 0;
    u.peak_utilization = std::max(peak, u.utilization);
    const double* bg = transport.background_gbps;
    u.background_gbps = dirBytes[0] > dirBytes[1]   ? bg[0]
                        : dirBytes[1] > dirBytes[0] ? bg[1]
                                                    : std::max(bg[0], bg[1]);
    const double bgShare = e.bandwidth_gbps > 0 ? u.background_gbps / e.bandwidth_gbps : 0.0;
    u.total_utilization = std::min(1.0, u.utilization + bgShare);
    u.total_peak_utilization = std::min(1.0, u.peak_utilization + bgShare);
    if (usesPP)
        u.dims.push_back(Dim::PP);
    if (usesDP)
        u.dims.push_back(Dim::DP);
    if (usesEP)
        u.dims.push_back(Dim::EP);
    return u;
}

// Window-limited links: the transfers sharing a link in some phase cannot
// fill it (too few flows for its RTT). Say so: it is a design choice (more
// flows, a long-haul profile).
void windowWarnings(const ClusterContext& ctx, const LinkTrafficInput& in,
                    std::vector<std::string>& warnings) {
    for (const TopoEdge& e : ctx.topology->edges()) {
        if (e.kind != EdgeKind::InterBuilding)
            continue;
        const EdgeTransport& t = (*in.transports)[std::size_t(e.id)];
        const std::pair<const TrafficPhase*, const char*> phases[] = {
            {in.p2p, "P2P"}, {in.dpReduce, "DP"}, {in.ep, "EP"}};
        // A RoCE link whose PFC headroom cannot hold its round trip drops
        // packets (core/cost/network.h applyPfcHeadroom).
        if (t.pfc_short) {
            for (const auto& [phase, what] : phases) {
                const int dir = phase->load(e.id, 0) >= phase->load(e.id, 1) ? 0 : 1;
                if (phase->load(e.id, dir) <= 0)
                    continue;
                char buf[480];
                std::snprintf(
                    buf, sizeof buf,
                    "link %s: %s PFC headroom of %.4g MiB per port is short of the %.4g MiB a "
                    "%.0f Gbit/s port needs at %.3g ms one way: the link is lossy (loss rate "
                    "%.3g) and RDMA's go-back-N resends what is in flight; %s traffic reaches "
                    "%.0f of %.0f Gbit/s",
                    e.name.c_str(), t.tech.name.c_str(), t.tech.pfc_headroom_mib,
                    pfcHeadroomNeededBytes(t.tech, e.bandwidth_gbps, e.latency_ms * 1e-3) /
                        (1024.0 * 1024.0),
                    t.tech.port_gbps > 0 ? t.tech.port_gbps : e.bandwidth_gbps, e.latency_ms,
                    t.tech.loss_rate, what, phase->rateBps(e.id, dir) * 8 / 1e9, e.bandwidth_gbps);
                warnings.push_back(buf);
                break;
            }
            continue; // its rate is loss-bound, not window-bound
        }
        for (const auto& [phase, what] : phases) {
            int dir = phase->load(e.id, 0) >= phase->load(e.id, 1) ? 0 : 1;
            if (phase->load(e.id, dir) <= 0)
                continue;
            // Of what the background leaves: the line minus the others' traffic.
            const double line = gbpsToBytesPerS(availableGbps(e, t, dir)) * t.tech.efficiency;
            const double rate = phase->rateBps(e.id, dir);
            if (rate >= 0.95 * line)
                continue;
            char buf[400];
            std::snprintf(buf, sizeof buf,
                          "link %s: %s traffic reaches %.0f of %.0f Gbit/s: %.0f concurrent "
                          "transfers x %d %s flows at %.1f ms RTT are window-limited; more "
                          "flows (plan link_technologies) or a long-haul profile fill it",
                          e.name.c_str(), what, rate * 8 / 1e9, availableGbps(e, t, dir),
                          phase->connections(e.id, dir), t.tech.flows, t.tech.name.c_str(),
                          t.rtt_s * 1e3);
            warnings.push_back(buf);
            break;
        }
    }
}

} // namespace

void linkTraffic(const ClusterContext& ctx, const LinkTrafficInput& in, Evaluation& ev) {
    const StepTraffic traffic(in);
    if (in.dpReduceUncompressed && ev.compression) {
        // What the gradients would have put on the inter-building links
        // uncompressed, less what they do.
        const double mult = traffic.dpMult * traffic.reduceMult;
        double saved = 0;
        for (const TopoEdge& e : ctx.topology->edges())
            if (e.kind == EdgeKind::InterBuilding)
                for (int dir = 0; dir < 2; ++dir)
                    saved += mult * (in.dpReduceUncompressed->load(e.id, dir) -
                                     in.dpReduce->load(e.id, dir));
        ev.compression->bytes_saved_per_step = saved;
    }
    double maxDp = 0;
    for (double t : in.dp->time)
        maxDp = std::max(maxDp, t);
    for (const TopoEdge& e : ctx.topology->edges()) {
        if (!in.detail && e.kind != EdgeKind::InterBuilding)
            continue;
        if (!in.detail) {
            ev.cross_building_bytes +=
                traffic.bytes(e.id, 0).total() + traffic.bytes(e.id, 1).total();
            continue;
        }
        LinkUsage u =
            linkUsage(e, traffic, maxDp, ev.step_time_s, (*in.transports)[std::size_t(e.id)]);
        if (e.kind == EdgeKind::InterBuilding) {
            const DirectedBytes b0 = traffic.bytes(e.id, 0), b1 = traffic.bytes(e.id, 1);
            ev.cross_building_bytes += b0.total() + b1.total();
        }
        ev.links.push_back(std::move(u));
    }
    if (in.detail)
        windowWarnings(ctx, in, ev.warnings);
}

void planWarnings(const ClusterContext& ctx, const Plan& plan, const Layout& layout,
                  const DpCollectives& dp, Evaluation& ev) {
    const int pp = plan.parallelism.pp;
    const std::int64_t m = plan.microbatches();
    if (m < pp)
        ev.warnings.push_back("schedule: " + std::to_string(m) + " microbatches for " +
                              std::to_string(pp) +
                              " pipeline stages: the pipeline never fills (bubble dominates)");
    if (plan.parallelism.dp > 1 && plan.effectiveZeroStage() < 3 &&
        dp.used == CollectiveAlgo::Ring) {
        for (const GroupSpread& g : layout.spreads)
            if (g.buildings > 1) {
                ev.warnings.push_back(
                    "collectives: DP uses a flat ring across buildings; hierarchical DP "
                    "(\"collectives\": {\"dp\": \"hierarchical\"}) sends less over the "
                    "inter-building links");
                break;
            }
    }
    if (plan.parallelism.dp > 1 && plan.effectiveZeroStage() >= 1 &&
        plan.algoFor(Dim::DP) == CollectiveAlgo::Tree)
        ev.warnings.push_back(plan.grad_reduce_scatter || plan.effectiveZeroStage() == 3
                                  ? "collectives: NCCL runs trees for all-reduce only; ZeRO's "
                                    "gradient reduce-scatter and parameter all-gather run as rings"
                                  : "collectives: NCCL runs trees for all-reduce only; the "
                                    "gradients' all-reduce may take one, ZeRO's parameter "
                                    "all-gather runs as a ring");
    if (plan.dp_compression) {
        const Compression& c = *plan.dp_compression;
        if (!ev.compression || !ev.compression->applied)
            ev.warnings.push_back(
                std::string("compression: dp ") + toString(c.method) + " changes nothing here: " +
                (plan.effectiveZeroStage() == 3
                     ? "ZeRO-3's per-microbatch collectives run uncompressed"
                 : c.method == CompressionMethod::TopK &&
                         plan.algoFor(Dim::DP) != CollectiveAlgo::Hierarchical
                     ? "top-k runs only with \"collectives\": {\"dp\": \"hierarchical\"}"
                 : c.method == CompressionMethod::Bf16 && plan.grad_reduce_bytes == 2
                     ? "the gradients are reduced in bf16 already"
                     : "no gradient traffic crosses a building"));
        else if (c.method == CompressionMethod::TopK)
            ev.warnings.push_back(
                "compression: top-k sends only the largest " + formatPercent(c.topk_ratio) +
                " of each building's gradient shard" +
                (c.error_feedback ? " (the rest is fed back into the next step)"
                                  : " and drops the rest") +
                ": this changes the optimizer's numerics; that the model still converges "
                "is the user's responsibility");
    }
    if (ev.gpus < ctx.cluster->totalGpus())
        ev.warnings.push_back("placement: the plan uses " + std::to_string(ev.gpus) + " of " +
                              std::to_string(ctx.cluster->totalGpus()) + " GPUs");
}

void hostWarnings(const ClusterContext& ctx, const Plan& plan,
                  const std::vector<BuildingCosts>& costs, Evaluation& ev) {
    for (std::size_t b = 0; b < costs.size(); ++b) {
        const BuildingCosts& bc = costs[b];
        if (!bc.used)
            continue;
        for (const LayerCost* l : {&bc.dense, &bc.moe}) {
            const double pass = l->fwd_s + l->bwd_input_s + l->bwd_weight_s;
            // Under 2% of a layer is within the model's own noise.
            if (!(pass > 0) || l->host_wait_s < 0.02 * pass)
                continue;
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * l->host_wait_s / pass);
            ev.warnings.push_back(
                "host: on " + ctx.cluster->buildings[b].name + " each " +
                (l == &bc.moe ? "MoE" : "dense") +
                " layer waits for the host to issue its kernels (" + buf +
                " of its forward and backward)" +
                (l == &bc.moe && l->host_sync ? ", and syncs with the host once per forward" : "") +
                (plan.cuda_graphs ? ""
                                  : "; CUDA graphs (\"cuda_graphs\": true) or a larger micro "
                                    "batch would hide it"));
        }
    }
}

void accuracyWarnings(const Model& model, const Plan& plan, const std::vector<BuildingCosts>& costs,
                      Evaluation& ev) {
    // The validation holds runs on A100 and H100 / H200 only: on a GPU of
    // another architecture (Blackwell, AMD's, one the name does not tell)
    // the kernel rates are the GPU model's GEMM efficiencies (0.8 / 0.7 of
    // the peaks unless it gives its own) and FlashAttention-2's published
    // ratios, neither checked against a run there. Once per GPU model.
    std::vector<std::string> named;
    for (const BuildingCosts& bc : costs) {
        if (!bc.used || !bc.gpu)
            continue;
        const GpuArch arch = gpuArch(*bc.gpu);
        if (arch == GpuArch::Ampere || arch == GpuArch::Hopper ||
            std::find(named.begin(), named.end(), bc.gpu->name) != named.end())
            continue;
        named.push_back(bc.gpu->name);
        char rates[96];
        std::snprintf(rates, sizeof rates, "%.2f of the BF16 peak, %.2f of the FP8",
                      bc.gpu->gemm_efficiency, bc.gpu->gemm_efficiency_fp8);
        ev.warnings.push_back(
            "accuracy: no published run on GPU model '" + bc.gpu->name + "' (" +
            (arch == GpuArch::Unknown ? std::string("architecture unknown")
                                      : std::string("architecture ") + toString(arch)) +
            ") is in this model's validation, which holds A100 and H100 runs "
            "(docs/VALIDATION.md): its GEMMs run at the GPU model's efficiencies (" +
            rates +
            ") and its attention at FlashAttention-2's published ratios to them; fit them to "
            "the GPU with `scaleacross calibrate --gemm` before reading the step time as a "
            "prediction");
    }
    // Every published MoE run with expert parallelism the validation holds
    // (Megatron-Core's and Megatron-Bridge's across hosts, NeMo AutoModel's
    // inside one) comes out too fast, and a profiled one says where:
    // the GPU idled after each forward's wait for the token counts, and the
    // overlap of the all-to-alls with another microbatch's compute hid about
    // a third of them where the model hides most (docs/VALIDATION.md).
    for (const BuildingCosts& bc : costs)
        if (bc.used && bc.moe.ep_fwd_s > 0) {
            std::string where;
            if (bc.moe.host_sync)
                where = "the GPU idled after each forward's wait for the token counts";
            if (plan.ep_overlap)
                where += std::string(where.empty() ? "" : ", and ") +
                         "the overlap of the all-to-alls with compute hid about a third of "
                         "them, where this model hides most";
            ev.warnings.push_back(
                "accuracy: this model predicts every published MoE run with expert "
                "parallelism too fast (Megatron's and NeMo AutoModel's, docs/VALIDATION.md)" +
                (where.empty() ? std::string() : "; in a profiled run " + where) +
                ": read the EP time as a lower bound");
            return;
        }
    // The dense BF16 runs on Hopper GPUs the validation holds come out too
    // fast on average (Megatron-Core r0.8.0, Llama 3, torchtitan, fms-fsdp
    // all optimistic; NeMo AutoModel's FSDP2 Llama 3.1 70B close), where
    // FP8 runs on the same GPUs do not; no mechanism found so far explains
    // it (docs/VALIDATION.md, "BF16 and FP8 on H100 part ways").
    for (const BuildingCosts& bc : costs)
        if (bc.used && model.dtype == DType::BF16 && gpuArch(*bc.gpu) == GpuArch::Hopper) {
            ev.warnings.push_back(
                "accuracy: this model predicts the published dense BF16 runs on Hopper GPUs too "
                "fast on average (docs/VALIDATION.md), where FP8 runs on the same GPUs come out "
                "close: expect the run to take longer than this step time");
            return;
        }
}

void timeline(const PipelineResult& simulated, std::vector<TimelineOp>&& ops, const DpTiming& dp,
              int pp, int v, int microbatches, Timeline& tl) {
    tl.stages = pp;
    tl.chunks = v;
    tl.microbatches = microbatches;
    tl.ops = std::move(ops);
    for (int s = 0; s < pp; ++s) {
        const std::size_t i = std::size_t(s);
        const double endS = simulated.end_s[i];
        // The gradient syncs: DP's, and the tied embedding's between the
        // first and the last stage (which a stage without DP has alone).
        if (dp.time[i] > 0 || dp.end[i] > endS) {
            TimelineOp op;
            op.kind = OpKind::DpSync;
            op.stage = s;
            op.start_s = dp.time[i] > 0 ? dp.start[i] : endS;
            op.end_s = dp.end[i];
            op.exposed_s = std::max(0.0, op.end_s - endS);
            tl.ops.push_back(op);
        }
        TimelineOp opt;
        opt.kind = OpKind::Optimizer;
        opt.stage = s;
        opt.start_s = dp.end[i];
        opt.end_s = opt.start_s + dp.optimizer[i] + dp.gatherExposed[i];
        tl.ops.push_back(opt);
    }
    tl.makespan_s = dp.step_s;
}

} // namespace sa

// Stages of the evaluation that move data between cells: ZeRO-3's
// per-microbatch collectives, P2P over the pipeline boundaries, the
// pipeline's input, and the DP/FSDP gradient sync with the optimizer step.
#include "cost/memory.h"
#include "cost/network.h"
#include "cost/stages.h"
#include "topology/topology.h"

#include <algorithm>
#include <cmath>

namespace sa {

namespace {

// The optimizer step streams its state (optimizerStepBytes: 30 bytes per
// parameter with fp32 masters and moments), plus the launch of its fused
// kernels (docs/COST_MODEL.md).
constexpr double kOptimizerLaunchS = 20e-6;

// loadCollective with CollectiveAlgo::Auto tries every algorithm on the group
// alone; the choice depends only on the group's spread, the collective, its
// size and the environment. Stages with the same spread and size take the
// choice made for the first of them.
class AlgoMemo {
public:
    // The stage's group, and under HSDP its other sharding groups beside it
    // (the same algorithm; the widest group's cost is the one returned).
    CollectiveCost load(TrafficPhase& phase, const Layout& layout, int s, CollectiveKind kind,
                        CollectiveAlgo algo, double bytes, const CrossCompression& cx = {}) {
        const CollectiveCost cost = loadWidest(phase, layout, s, kind, algo, bytes, cx);
        if (std::size_t(s) < layout.otherShards.size())
            for (const auto& [g, groups] : layout.otherShards[std::size_t(s)])
                loadCollective(phase, g, kind, cost.algo, bytes, groups,
                               layout.stageEnv[std::size_t(s)], cx);
        return cost;
    }

private:
    CollectiveCost loadWidest(TrafficPhase& phase, const Layout& layout, int s, CollectiveKind kind,
                              CollectiveAlgo algo, double bytes, const CrossCompression& cx) {
        const GroupSpread& g = layout.spreads[std::size_t(s)];
        const int spreadClass = layout.spreadClass[std::size_t(s)];
        const CollectiveEnv& env = layout.stageEnv[std::size_t(s)];
        const double groups = layout.dpGroups;
        if (algo != CollectiveAlgo::Auto)
            return loadCollective(phase, g, kind, algo, bytes, groups, env, cx);
        for (const Choice& c : choices_)
            if (c.spreadClass == spreadClass && c.kind == kind && c.bytes == bytes &&
                c.groups == groups && c.env == env)
                return loadCollective(phase, g, kind, c.algo, bytes, groups, env, cx);
        const CollectiveCost cost = loadCollective(phase, g, kind, algo, bytes, groups, env, cx);
        choices_.push_back({spreadClass, kind, bytes, groups, env, cost.algo});
        return cost;
    }

    struct Choice {
        int spreadClass;
        CollectiveKind kind;
        double bytes, groups;
        CollectiveEnv env;
        CollectiveAlgo algo;
    };
    std::vector<Choice> choices_;
};

} // namespace

void zero3Collectives(const ClusterContext& ctx, const Zero3Input& in, Zero3& out) {
    const Layout& layout = *in.layout;
    const int pp = layout.placed.grid.stages;
    const double mb = in.microbatches;
    AlgoMemo algos;
    TrafficPhase phase(*ctx.topology, *in.transports);
    out.ag.assign(std::size_t(pp), {});
    out.rs.assign(std::size_t(pp), {});
    for (int s = 0; s < pp; ++s) {
        const double p = in.stage_params[std::size_t(s)] / in.v;
        out.ag[std::size_t(s)] = algos.load(phase, layout, s, CollectiveKind::AllGather, in.algo,
                                            in.stage_gather_bytes[std::size_t(s)] / in.v);
        out.rs[std::size_t(s)] =
            algos.load(phase, layout, s, CollectiveKind::ReduceScatter, in.algo, p * in.grad_bytes);
    }
    // All stages' gathers and reduce-scatters share the edges with the
    // activations of the microbatch in flight.
    out.shared =
        in.p2p.version() != 0 ? phase.drainTimeWith(*in.p2p->phase, 1.0) : phase.drainTime();
    // A step gathers each stage's parameters twice (forward, backward) and
    // reduce-scatters its gradients once, per microbatch.
    out.step.emplace(*ctx.topology, *in.transports);
    for (int s = 0; s < pp; ++s) {
        const double p = in.stage_params[std::size_t(s)];
        for (int rep = 0; rep < 2; ++rep)
            algos.load(*out.step, layout, s, CollectiveKind::AllGather, in.algo,
                       in.stage_gather_bytes[std::size_t(s)] * mb);
        algos.load(*out.step, layout, s, CollectiveKind::ReduceScatter, in.algo,
                   p * in.grad_bytes * mb);
    }
}

double stageOverlapShare(const Layout& layout, const std::vector<BuildingCosts>& costs, int stage) {
    double share = 0;
    for (int b : layout.stageBuildings[std::size_t(stage)])
        if (const GpuModel* gpu = costs[std::size_t(b)].gpu)
            share = std::max(share, ncclOverlapShare(gpu->sms));
    return share;
}

void applyZero3(const Zero3& z3, const ChunkLayers& layers, const Layout& layout,
                const std::vector<BuildingCosts>& costs, int pp, int v, ChunkTable& chunks,
                Zero3Stream* stream) {
    if (stream) {
        stream->per_microbatch_s.assign(std::size_t(pp), 0.0);
        stream->last_rs_s.assign(std::size_t(pp), 0.0);
    }
    for (int s = 0; s < pp; ++s) {
        const CollectiveCost &ag = z3.ag[std::size_t(s)], &rs = z3.rs[std::size_t(s)];
        const double share = stageOverlapShare(layout, costs, s);
        for (int c = 0; c < v; ++c) {
            const double units = std::max(1, layers.layers[std::size_t(c * pp + s)]);
            const double tAg = std::max(ag.bandwidth_s, z3.shared / 2) + ag.latency_s * units;
            const double tRs = std::max(rs.bandwidth_s, z3.shared / 2) + rs.latency_s * units;
            ChunkTimes& t = chunks[std::size_t(s)][std::size_t(c)];
            // What the prefetch could not hide is DP time on the critical path;
            // what it hides still takes SMs from the compute beside it.
            t.fwd = overlappedWithCompute(t.fwd, tAg, share);
            if (stream) {
                // Zero-bubble runs the weight gradients (W) apart from the
                // input gradients (B): the re-gather goes before B, which
                // needs the weights; the reduce-scatter after W, whose
                // output it sends (W reads the saved input and the output
                // gradient, not the weights). Nothing on the compute stream
                // waits for the reduce-scatter: W only loses the SMs it
                // holds, and the DP stream's whole load bounds the stage's
                // end (dpTiming).
                t.bwd = overlappedWithCompute(t.bwd, tAg, share);
                t.wgrad = slowedCompute(t.wgrad, tRs, share);
                stream->per_microbatch_s[std::size_t(s)] += 2.0 * tAg + tRs;
                stream->last_rs_s[std::size_t(s)] =
                    std::max(stream->last_rs_s[std::size_t(s)], tRs);
            } else {
                t.bwd = overlappedWithCompute(t.bwd, tAg + tRs, share);
            }
        }
    }
}

namespace {

// The slowest transfer of `bytes` a GPU over virtual boundary vs -> vs + 1,
// the traffic of `p2p` (all boundaries at once) sharing the edges.
double boundaryTime(const ClusterContext& ctx, const P2pInput& in, const TrafficPhase& p2p, int vs,
                    double bytes) {
    const Layout& layout = *in.layout;
    const Transports& transport = *in.transports;
    const int pp = layout.placed.grid.stages;
    const int from = vs % pp, to = (vs + 1) % pp;
    const double nic = std::min(layout.stageEnv[std::size_t(from)].nic_bps,
                                layout.stageEnv[std::size_t(to)].nic_bps);
    double worst = 0;
    const PairRun* prev = nullptr;
    for (const PairRun& r : layout.boundary[std::size_t(from)]) {
        if (prev && prev->a == r.a && prev->b == r.b)
            continue;
        prev = &r;
        double t = bytes / nic;
        if (!(r.a == r.b)) {
            // A single transfer is also bounded by its own flows' window; a
            // transfer split over ECMP paths sends each path its share.
            double perTransfer = bytes / nic;
            if (r.a.building != r.b.building) {
                for (const Route& path : ctx.topology->buildingPaths(r.a.building, r.b.building))
                    for (int id : path.edges) {
                        const EdgeTransport& et = transport[std::size_t(id)];
                        perTransfer = std::max(
                            perTransfer, bytes * path.fraction /
                                             std::min(nic, transferRateBps(et.tech, 1e12, et.rtt_s,
                                                                           et.gpus_per_host)));
                    }
            }
            t = std::max(perTransfer, p2p.routeDrainTime(r.a, r.b));
        }
        t += layout.stageEnv[std::size_t(from)].routeStep(p2p.routeLatency(r.a, r.b));
        worst = std::max(worst, t);
    }
    return worst;
}

} // namespace

void p2pTransfers(const ClusterContext& ctx, const P2pInput& in, P2p& out) {
    const Layout& layout = *in.layout;
    const int pp = layout.placed.grid.stages, nV = in.virtual_stages;
    const double cellGpus = double(layout.placed.grid.cell_gpus);
    const std::size_t boundaries = std::size_t(std::max(0, nV - 1));
    out.phase.emplace(*ctx.topology, *in.transports);
    TrafficPhase& p2p = *out.phase;
    out.slot = 0;
    out.fwd.assign(boundaries, 0.0);
    out.bwd = out.fwd;
    out.cross.assign(boundaries, 0);
    for (int vs = 0; vs + 1 < nV; ++vs)
        for (const PairRun& r : layout.boundary[std::size_t(vs % pp)]) {
            p2p.add(r.a, r.b, r.count * cellGpus * in.bytes_per_gpu, r.count * cellGpus);
            p2p.add(r.b, r.a, r.count * cellGpus * in.bytes_per_gpu, r.count * cellGpus);
            if (r.a.building != r.b.building)
                out.cross[std::size_t(vs)] = 1;
        }
    for (int vs = 0; vs + 1 < nV; ++vs) {
        const double worst = boundaryTime(ctx, in, p2p, vs, in.bytes_per_gpu);
        out.fwd[std::size_t(vs)] = worst;
        out.bwd[std::size_t(vs)] = worst;
        out.slot = std::max(out.slot, worst);
    }
    // The embedding gradients' all-reduce: each rank of the last stage and
    // its peer on the first stage (the pairs of the boundary pp - 1 -> 0),
    // all at once. A two-rank ring sends each rank's whole buffer once each
    // way, as a transfer of that size in both directions.
    out.embeddingSync.reset();
    out.embedding_sync_s = 0;
    const double sync = in.embedding_sync_bytes_per_gpu;
    if (sync > 0 && pp > 1) {
        out.embeddingSync.emplace(*ctx.topology, *in.transports);
        for (const PairRun& r : layout.boundary[std::size_t(pp - 1)]) {
            out.embeddingSync->add(r.a, r.b, r.count * cellGpus * sync, r.count * cellGpus);
            out.embeddingSync->add(r.b, r.a, r.count * cellGpus * sync, r.count * cellGpus);
        }
        out.embedding_sync_s = boundaryTime(ctx, in, *out.embeddingSync, pp - 1, sync);
    }
}

void pipelineInput(const Plan& plan, const ChunkTable& chunks, const P2p& p2p, bool record,
                   PipelineInput& out) {
    const int pp = plan.parallelism.pp;
    const int v =
        plan.schedule.kind == ScheduleKind::Interleaved ? plan.schedule.virtual_stages : 1;
    const std::size_t npp = std::size_t(pp), nv = std::size_t(v);
    out.kind = plan.schedule.kind;
    out.stages = pp;
    out.chunks = v;
    out.microbatches = int(std::max<std::int64_t>(1, plan.microbatches()));
    out.record = record;
    for (auto* d : {&out.fwd, &out.bwd, &out.wgrad, &out.activation_bytes, &out.wgrad_held_bytes})
        d->resize(npp * nv);
    for (std::size_t s = 0; s < npp; ++s)
        for (std::size_t c = 0; c < nv; ++c) {
            const ChunkTimes& t = chunks[s][c];
            const std::size_t i = s * nv + c;
            out.fwd[i] = t.fwd;
            out.bwd[i] = t.bwd;
            out.wgrad[i] = t.wgrad;
            out.activation_bytes[i] = t.activation;
            out.wgrad_held_bytes[i] = t.wgrad_held;
        }
    out.p2p_fwd = p2p.fwd;
    out.p2p_bwd = p2p.bwd;
    out.p2p_cross = p2p.cross;
    out.blocking_p2p = !plan.p2p_overlap;
    out.extra_warmup.clear();
    if (plan.schedule.latency_hiding && plan.schedule.kind != ScheduleKind::GPipe && pp > 1) {
        // 1F1B's warm-up covers the compute downstream of a stage exactly,
        // so every P2P round trip stalls each cycle. Each boundary b needs
        // ceil(2 p2p_b / cycle) more microbatches in flight on every stage
        // upstream of it than on the stage after it (CrossPipe, ATC'25).
        // The cycle is the steady state's, the slowest stage's forward and
        // backward: one per boundary, so that the warm-ups fall by at least
        // one from each stage to the next, as 1F1B's do. (Each stage's own
        // cycle gave a fast stage behind a slow one as many warm-ups as the
        // slow one: its first backward came later than the pipeline needed.)
        double cycle = 0;
        for (std::size_t s = 0; s < npp; ++s)
            cycle = std::max(cycle, out.fwd[s * nv] + out.bwd[s * nv] + out.wgrad[s * nv]);
        out.extra_warmup.assign(npp, 0);
        if (cycle > 0) {
            int extra = 0;
            for (std::size_t b = npp - 1; b-- > 0;) {
                extra += int(std::ceil((out.p2p_fwd[b] + out.p2p_bwd[b]) / cycle));
                out.extra_warmup[b] = extra;
            }
        }
    }
}

void dpCollectives(const ClusterContext& ctx, const DpCollectivesInput& in, DpCollectives& out) {
    const Layout& layout = *in.layout;
    const int pp = layout.placed.grid.stages;
    const std::size_t npp = std::size_t(pp);
    out.reduce.emplace(*ctx.topology, *in.transports);
    out.gather.emplace(*ctx.topology, *in.transports);
    out.rsCost.assign(npp, {});
    out.agCost.assign(npp, {});
    out.used = in.algo;
    out.reduceShared.assign(npp, 0.0);
    out.gatherShared.assign(npp, 0.0);
    out.arCost.clear();
    out.arShared.clear();
    out.replicaReduce.reset();
    if (!layout.replicaSpreads.empty()) {
        // HSDP: each GPU's reduced shard of the stage's gradients, all-reduced
        // across the replicas of its sharding group.
        out.replicaReduce.emplace(*ctx.topology, *in.transports);
        out.arCost.assign(npp, {});
        for (int s = 0; s < pp; ++s) {
            const std::size_t i = std::size_t(s);
            const double shard = std::max(1, layout.spreads[i].members);
            const double bytes = in.stage_params[i] * in.grad_bytes / shard;
            out.arCost[i] = loadCollective(*out.replicaReduce, layout.replicaSpreads[i],
                                           CollectiveKind::AllReduce, in.algo, bytes,
                                           layout.replicaGroups, layout.stageEnv[i]);
            for (const auto& [g, groups] : layout.otherReplicas[i])
                loadCollective(*out.replicaReduce, g, CollectiveKind::AllReduce, out.arCost[i].algo,
                               bytes, groups, layout.stageEnv[i]);
        }
        out.arShared.assign(npp, 0.0);
        for (int s = 0; s < pp; ++s) {
            const auto& sites = layout.replicaSpreads[std::size_t(s)].sites;
            const std::size_t k = sites.size();
            for (std::size_t i = 0; i < k && k > 1; ++i)
                out.arShared[std::size_t(s)] = std::max(
                    out.arShared[std::size_t(s)],
                    out.replicaReduce->routeDrainTime(sites[i].loc, sites[(i + 1) % k].loc));
        }
    }
    if (layout.spreads.empty() || layout.spreads[0].members <= 1 || in.zero_class == 3)
        return;
    AlgoMemo algos;
    const CrossCompression& cx = in.compression;
    if (cx.method)
        out.reduceUncompressed.emplace(*ctx.topology, *in.transports);
    for (int s = 0; s < pp; ++s) {
        const double P = in.stage_params[std::size_t(s)];
        const CollectiveKind kind =
            in.all_reduce ? CollectiveKind::AllReduce : CollectiveKind::ReduceScatter;
        const CollectiveCost rs =
            algos.load(*out.reduce, layout, s, kind, in.algo, P * in.grad_bytes, cx);
        out.rsCost[std::size_t(s)] = rs;
        if (cx.method)
            loadCollective(*out.reduceUncompressed, layout.spreads[std::size_t(s)], kind, rs.algo,
                           P * in.grad_bytes, layout.dpGroups, layout.stageEnv[std::size_t(s)]);
        if (in.zero_class != 0)
            out.agCost[std::size_t(s)] =
                algos.load(*out.gather, layout, s, CollectiveKind::AllGather, in.algo,
                           in.stage_gather_bytes[std::size_t(s)]);
        out.used = out.rsCost[std::size_t(s)].algo;
    }
    // What each group's ring neighbours wait for on the shared edges.
    for (int s = 0; s < pp; ++s) {
        const auto& sites = layout.spreads[std::size_t(s)].sites;
        const std::size_t k = sites.size();
        double shared = 0, sharedAg = 0;
        const bool withP2p = in.zero_class == 2 && in.p2p.version() != 0;
        for (std::size_t i = 0; i < k && k > 1; ++i) {
            const Location a = sites[i].loc, b = sites[(i + 1) % k].loc;
            shared =
                std::max(shared, withP2p ? out.reduce->routeDrainTimeWith(*in.p2p->phase, 1.0, a, b)
                                         : out.reduce->routeDrainTime(a, b));
        }
        if (in.zero_class >= 1)
            for (std::size_t i = 0; i < k && k > 1; ++i)
                sharedAg = std::max(
                    sharedAg, out.gather->routeDrainTime(sites[i].loc, sites[(i + 1) % k].loc));
        out.reduceShared[std::size_t(s)] = shared;
        out.gatherShared[std::size_t(s)] = sharedAg;
    }
}

namespace {

// The share of stage s's P parameters in the gradient bucket reduced last
// (and gathered first), with buckets of `bucketParams` parameters. Buckets
// fill in backward order and close once they reach the bucket size, never
// splitting a parameter (Megatron-Core param_and_grad_buffer.py; PyTorch
// DDP's bucket assignment likewise): the stage holding the input embedding
// ends with the embedding table, whose gradient is complete only once the
// backward has passed the first layer, together with what the earlier
// buckets left over. Elsewhere the buckets are taken as equal.
double lastBucketShare(const DpTimingInput& in, int s, double P, double buckets,
                       double bucketParams) {
    const double even = 1.0 / buckets;
    if (s != 0 || P <= 0)
        return even;
    double embedding = 0;
    for (int b : in.layout->stageBuildings[std::size_t(s)])
        embedding = std::max(embedding, (*in.costs)[std::size_t(b)].embedding.params);
    const double last =
        std::min(P, embedding + std::fmod(std::max(0.0, P - embedding), bucketParams));
    return std::max(even, last / P);
}

} // namespace

double gradientBuckets(double params, const Plan& plan) {
    return std::ceil(params * double(plan.grad_reduce_bytes) /
                     std::max(1.0, plan.dp_bucket_mib * 1024 * 1024));
}

void dpTiming(const DpTimingInput& in, DpTiming& out) {
    const Plan& plan = *in.plan;
    const PipelineResult& pr = *in.simulated;
    const PipelineInput& pin = *in.pipeline;
    const DpCollectives& d = *in.collectives;
    const int pp = plan.parallelism.pp, dp = plan.parallelism.dp;
    const int zero = plan.effectiveZeroStage();
    const int dpPeers = dp * plan.parallelism.cp; // the gradients' reduction group
    const double m = double(pin.microbatches);
    for (auto* buffer : {&out.end, &out.gatherExposed, &out.optimizer, &out.start, &out.time,
                         &out.codec, &out.replicaReduce})
        buffer->assign(std::size_t(pp), 0.0);
    const double gradBytes = double(plan.grad_reduce_bytes);
    const double stepBytes =
        optimizerStepBytes(gradBytes, optimizerPrecision(plan), plan.optimizer_implementation);
    const double bucketBytes = std::max(1.0, plan.dp_bucket_mib * 1024 * 1024);
    const double hbmEfficiency = KernelConstants{}.hbm_efficiency;
    double firstFwd = 0; // when each stage first needs its parameters
    for (int s = 0; s < pp; ++s) {
        const std::size_t i = std::size_t(s);
        const double P = (*in.stage_params)[i];
        const double endS = pr.end_s[i];
        const double share = stageOverlapShare(*in.layout, *in.costs, s);
        double t = 0, buckets = 1, tail = 0, lastShare = 1;
        if (dpPeers > 1 && zero < 3) {
            buckets = gradientBuckets(P, plan);
            lastShare = lastBucketShare(in, s, P, buckets, bucketBytes / gradBytes);
            // Compression's encode and decode passes run in the DP stream,
            // before each bucket is sent and after it arrives, at the HBM
            // rate of the slowest GPU holding the stage (memory-bound).
            if (d.rsCost[i].codec_hbm_bytes > 0) {
                double hbm = 1e300;
                for (int b : in.layout->stageBuildings[i])
                    hbm = std::min(hbm, (*in.costs)[std::size_t(b)].gpu->hbm_tbps);
                out.codec[i] = d.rsCost[i].codec_hbm_bytes / (hbm * 1e12 * hbmEfficiency);
            }
            const double bandwidth =
                std::max(d.rsCost[i].bandwidth_s, d.reduceShared[i]) + out.codec[i];
            t = bandwidth + d.rsCost[i].latency_s * buckets;
            tail = bandwidth * lastShare + d.rsCost[i].latency_s;
            if (zero >= 1) {
                const double agBuckets = std::ceil((*in.stage_gather_bytes)[i] / bucketBytes);
                const double agBandwidth = std::max(d.agCost[i].bandwidth_s, d.gatherShared[i]);
                const double tAg = agBandwidth + d.agCost[i].latency_s * agBuckets;
                // Overlapped, the first bucket is exposed (the same bucket
                // the backward reduced last: Megatron gathers the buckets in
                // the reverse of their order) and the rest runs beside the
                // first forwards (this stage's and those before it, when
                // this stage has no compute), slowing this stage's.
                const double head =
                    agBandwidth * std::max(lastShare, 1.0 / agBuckets) + d.agCost[i].latency_s;
                const double window = firstFwd + pin.at(pin.fwd, s, 0);
                const double beside = std::clamp(std::min(tAg, window) - firstFwd, 0.0, tAg);
                const double slowdown =
                    slowedCompute(pin.at(pin.fwd, s, 0), beside, share) - pin.at(pin.fwd, s, 0);
                out.gatherExposed[i] =
                    plan.dp_overlap ? std::max(head + slowdown, tAg - window) : tAg;
            }
        }
        // HSDP: each bucket's (ZeRO-3: each FSDP unit's, one a layer)
        // reduced shard is all-reduced across the replicas after its
        // reduce-scatter, once a step (torch FSDP HYBRID_SHARD and FSDP2's
        // HSDP reduce-scatter, then all-reduce; Megatron's distributed
        // optimizer instances likewise); the last one waits for the backward.
        const double reduceScatter = t;
        if (!d.arCost.empty()) {
            const CollectiveCost& ar = d.arCost[i];
            const double bandwidth = std::max(ar.bandwidth_s, d.arShared[i]);
            double units = buckets, last = lastShare;
            if (zero >= 3) {
                units = std::max(1, (*in.stage_layers)[i]);
                last = lastBucketShare(in, s, P, units, P / units);
            }
            out.replicaReduce[i] = bandwidth + ar.latency_s * units;
            t += out.replicaReduce[i];
            tail += bandwidth * last + ar.latency_s;
        }
        out.time[i] = t;
        const double start = plan.dp_overlap ? pr.last_bwd_start_s[i] : endS;
        out.start[i] = start;
        // The overlapped sync takes SMs from the last backward beside it:
        // every bucket but the last, which waits for the backward to end.
        const double computeEnd =
            start < endS ? start + slowedCompute(endS - start, t - tail, share) : endS;
        out.end[i] = t > 0 ? std::max(start + t, computeEnd + tail) : endS;
        // ZeRO-3 under zero-bubble (applyZero3): the DP stream runs every
        // microbatch's gathers and reduce-scatters from the stage's first
        // forward, the last weight gradient's reduce-scatter after it.
        if (in.zero3_stream) {
            const Zero3Stream& z = *in.zero3_stream;
            out.start[i] = firstFwd;
            out.time[i] = m * z.per_microbatch_s[i] + (t - reduceScatter);
            out.end[i] = std::max(endS + z.last_rs_s[i] + tail, firstFwd + out.time[i]);
        }
        // ZeRO-2 (DeepSpeed stage 2) reduce-scatters every microbatch's
        // gradients into their shards during its backward: the DP stream
        // runs m of them, none before the stage's first backward.
        if (zero == 2 && reduceScatter > 0)
            out.end[i] = std::max(out.end[i], pr.first_bwd_start_s[i] + m * reduceScatter +
                                                  (t - reduceScatter));
        // The optimizer steps its shard of the dp x cp group (HSDP: of the
        // sharding group).
        const double shard = zero >= 1 ? double(plan.dpShard()) * plan.parallelism.cp : 1;
        const BuildingCosts& k = (*in.costs)[std::size_t(in.layout->stageBuilding[i])];
        out.optimizer[i] = P / shard * stepBytes / k.hbm_bytes_per_s + kOptimizerLaunchS;
        if (in.stage_fp8_params && in.fp8_cast_bytes > 0)
            out.optimizer[i] +=
                (*in.stage_fp8_params)[i] / shard * in.fp8_cast_bytes / k.hbm_bytes_per_s;
        if (s + 1 < pp)
            firstFwd += pin.at(pin.fwd, s, 0) + pin.p2p_fwd[i];
    }
    // The first and last stage's embedding gradients, all-reduced after
    // both have synced over DP and before the optimizer (Megatron-Core's
    // finalize_model_grads: finish_grad_sync, then
    // _allreduce_word_embedding_grads; DeepSpeed's TrainSchedule:
    // ReduceTiedGrads beside ReduceGrads, both before OptimizerStep).
    if (in.embedding_sync_s > 0 && pp > 1) {
        const std::size_t last = std::size_t(pp - 1);
        const double end = std::max(out.end[0], out.end[last]) + in.embedding_sync_s;
        out.end[0] = out.end[last] = end;
    }
    out.critical = 0;
    out.step_s = 0;
    for (int s = 0; s < pp; ++s) {
        const std::size_t i = std::size_t(s);
        const double end = out.end[i] + out.optimizer[i] + out.gatherExposed[i];
        if (end > out.step_s) {
            out.step_s = end;
            out.critical = s;
        }
    }
}

} // namespace sa

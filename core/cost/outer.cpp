#include "cost/outer.h"

#include "cost/memory.h"
#include "cost/network.h"
#include "cost/placement.h"
#include "cost/run.h"
#include "cost/stages.h"
#include "cost/traffic.h"
#include "topology/topology.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace sa {

namespace {

// ---- convergence (docs/RUN.md "Convergence") ---------------------------------

// Charles et al. 2025, "Scaling Laws for DiLoCo" (arXiv 2503.09799), Table 7:
// evaluation loss L(N) = A N^alpha fitted per algorithm at H = 30 over 35M
// to 2.4B parameters (C4, Chinchilla-optimal tokens).
struct PowerLaw {
    double A, alpha;
    double at(double n) const { return A * std::pow(n, alpha); }
};
constexpr PowerLaw kDataParallelLoss{18.129, -0.0953};
constexpr PowerLaw kDilocoLoss[] = {{18.363, -0.0961},  // M = 1
                                    {18.768, -0.0969},  // M = 2
                                    {19.762, -0.0992},  // M = 4
                                    {21.051, -0.1018}}; // M = 8
constexpr double kFitMinParams = 35e6, kFitMaxParams = 2.4e9;
constexpr int kFitH = 30;

// Douillard et al. 2025, "Streaming DiLoCo" (arXiv 2501.18512), Table 6:
// evaluation loss at H = 30 and H = 100 for M = 2 and M = 4 (35M .. 1B).
struct CadenceRow {
    double m2h30, m4h30, m2h100, m4h100;
};
constexpr CadenceRow kCadence[] = {{3.53, 3.60, 3.56, 3.64}, {3.21, 3.25, 3.22, 3.29},
                                   {2.98, 3.02, 3.00, 3.05}, {2.81, 2.84, 2.83, 2.87},
                                   {2.67, 2.70, 2.69, 2.73}, {2.48, 2.50, 2.50, 2.53}};
constexpr double kCadenceH0 = 30, kCadenceH1 = 100;

// The loss increase from H = 30 to H = 100, mean over the table's sizes.
double cadenceIncrease(int m) {
    double sum = 0;
    for (const CadenceRow& r : kCadence)
        sum += m == 2 ? r.m2h100 / r.m2h30 - 1 : r.m4h100 / r.m4h30 - 1;
    return sum / double(std::size(kCadence));
}

// Linear in log2(M) through the points (M = 1, 2, 4, 8 ...); beyond the
// last point, the last segment's slope.
double inLog2(const double* values, int count, double m) {
    const double x = std::log2(std::max(1.0, m));
    const int i = std::min(count - 2, int(std::floor(x)));
    return values[i] + (values[i + 1] - values[i]) * (x - i);
}

} // namespace

double outerLossPenalty(double params, int workers, int innerSteps) {
    if (workers <= 1 && innerSteps <= 1)
        return 0;
    const double n = std::clamp(params, kFitMinParams, kFitMaxParams);
    double base[4];
    for (int i = 0; i < 4; ++i)
        base[i] = kDilocoLoss[i].at(n) / kDataParallelLoss.at(n) - 1;
    double penalty = inLog2(base, 4, workers);
    if (innerSteps > kFitH) {
        const double k[3] = {0, cadenceIncrease(2), cadenceIncrease(4)};
        const double perDecade = inLog2(k, 3, workers);
        penalty +=
            perDecade * std::log(double(innerSteps) / kFitH) / std::log(kCadenceH1 / kCadenceH0);
    }
    return penalty;
}

double outerTokenMultiplier(double params, double tokens, double penalty) {
    if (penalty == 0)
        return 1;
    const double d = tokens > 0 ? tokens : 20 * params;
    const double target = chinchillaLoss(params, d);
    const double needed = tokensForLoss(params, target / (1 + penalty));
    return std::isfinite(needed) ? needed / d : std::numeric_limits<double>::infinity();
}

double planParams(const Plan& plan, const Evaluation& ev) {
    const Parallelism& g = plan.parallelism;
    double n = 0;
    for (std::size_t s = 0; s < ev.stage_params.size(); ++s) {
        const double expert = s < ev.stage_expert_params.size() ? ev.stage_expert_params[s] : 0;
        n += (ev.stage_params[s] - expert) * g.tp + expert * g.expertTp() * g.ep;
    }
    return n;
}

namespace {

struct Worker {
    std::vector<int> replicas;  // of the plan's grid, ascending
    std::vector<int> buildings; // [stage]: where its cells sit (the signature)
};

std::string buildingList(const Cluster& c, const Worker& w) {
    std::set<int> seen(w.buildings.begin(), w.buildings.end());
    std::string s;
    for (int b : seen)
        s += (s.empty() ? "" : ", ") + c.buildings[std::size_t(b)].name;
    return s;
}

// The plan confined to one worker: its replicas renumbered from 0, its cells
// in the buildings they hold, the same microbatches per replica.
Plan workerPlan(const Cluster& cluster, const Plan& plan, const CellGrid& grid, const Worker& w) {
    Plan p = plan;
    p.outer_sync.reset();
    const int n = int(w.replicas.size());
    p.parallelism.dp = n;
    p.global_batch_sequences = plan.microbatches() * plan.micro_batch_sequences * n;
    Placement placement;
    if (plan.placement)
        placement.layers_per_stage = plan.placement->layers_per_stage;
    for (int s = 0; s < grid.stages; ++s) {
        int first = 0;
        for (int i = 1; i <= n; ++i) {
            const int b = grid.at(s, w.replicas[std::size_t(first)]);
            if (i < n && grid.at(s, w.replicas[std::size_t(i)]) == b)
                continue;
            const std::string& name = cluster.buildings[std::size_t(b)].name;
            PlacementRun run{s, s, first, i - 1, name};
            // Stages with the same runs merge.
            auto& runs = placement.runs;
            auto same = std::find_if(runs.begin(), runs.end(), [&](const PlacementRun& r) {
                return r.stage_last == s - 1 && r.replica_first == run.replica_first &&
                       r.replica_last == run.replica_last && r.building == name;
            });
            if (same != runs.end())
                same->stage_last = s;
            else
                runs.push_back(run);
            first = i;
        }
    }
    p.placement = placement;
    return p;
}

// What one outer all-reduce puts on the edges and how long it takes.
struct OuterTraffic {
    std::unique_ptr<TrafficPhase> phase;
    double seconds = 0;
    double latency_s = 0;          // the ring's steps, in `seconds` once
    double interBuildingBytes = 0; // both directions
};

OuterTraffic outerAllReduce(const Cluster& cluster, const Topology& topo,
                            const std::vector<EdgeTransport>& transports, const Plan& plan,
                            const CellGrid& grid, const std::vector<Worker>& workers,
                            const std::vector<Evaluation>& inner, double elementBytes,
                            double fraction, bool gatherAfter) {
    OuterTraffic out;
    out.phase = std::make_unique<TrafficPhase>(topo, transports);
    const int W = int(workers.size());
    const Parallelism& g = plan.parallelism;
    const double cellGpus = double(g.tp) * g.cp;
    double nicS = 0, latencyS = 0;
    for (int s = 0; s < grid.stages; ++s) {
        // Every worker holds the stage's full parameters (its shard of the
        // ring per GPU): ring all-reduce over W members, 2 (W - 1) / W of it
        // leaves each worker towards the next.
        const Evaluation& ev0 = inner[0];
        const double expert = std::size_t(s) < ev0.stage_expert_params.size()
                                  ? ev0.stage_expert_params[std::size_t(s)]
                                  : 0;
        const double full =
            ((ev0.stage_params[std::size_t(s)] - expert) * g.tp + expert * g.expertTp() * g.ep) *
            elementBytes * fraction;
        const double hop = 2.0 * (W - 1) / W * full;
        double stepLatency = 0;
        for (int w = 0; w < W; ++w) {
            const Worker& a = workers[std::size_t(w)];
            const Worker& b = workers[std::size_t((w + 1) % W)];
            // Cells of each side by location; bytes spread evenly over the
            // cells and paired in proportion.
            std::map<std::pair<int, int>, double> from, to;
            for (int r : a.replicas)
                from[{grid.at(s, r), grid.zoneAt(s, r)}] += 1.0 / double(a.replicas.size());
            for (int r : b.replicas)
                to[{grid.at(s, r), grid.zoneAt(s, r)}] += 1.0 / double(b.replicas.size());
            const double conns = cellGpus * double(std::min(a.replicas.size(), b.replicas.size()));
            for (const auto& [la, fa] : from)
                for (const auto& [lb, fb] : to) {
                    const Location x{la.first, la.second}, y{lb.first, lb.second};
                    out.phase->add(x, y, hop * fa * fb, std::max(1.0, conns * fa * fb));
                    stepLatency = std::max(stepLatency, out.phase->routeLatency(x, y));
                }
            // Each GPU of the worker sends its part through its own NIC.
            const double perGpu = hop / (cellGpus * double(a.replicas.size()));
            const Building& bd = cluster.buildings[std::size_t(a.buildings[std::size_t(s)])];
            nicS = std::max(nicS, perGpu / nicBytesPerSecond(bd));
            // DiLoCo: the worker's replicas then gather the new parameters
            // (bf16) from the shards they each reduced.
            if (gatherAfter && a.replicas.size() > 1) {
                const double n = double(a.replicas.size()) * g.cp;
                const double gather = (n - 1) / n * full / elementBytes * kWeightBytes / g.tp;
                nicS =
                    std::max(nicS, perGpu / nicBytesPerSecond(bd) + gather / nicBytesPerSecond(bd));
            }
        }
        latencyS = std::max(latencyS, 2.0 * (W - 1) * (stepLatency + collectiveAlpha()));
    }
    out.latency_s = latencyS;
    out.seconds = std::max(out.phase->drainTime(), nicS) + latencyS;
    for (const TopoEdge& e : topo.edges())
        if (e.kind == EdgeKind::InterBuilding)
            out.interBuildingBytes += out.phase->load(e.id, 0) + out.phase->load(e.id, 1);
    return out;
}

// Workers: replicas by the buildings of their cells, in order of their
// first replica.
std::vector<Worker> workersOf(const CellGrid& grid) {
    std::vector<Worker> workers;
    std::map<std::vector<int>, std::size_t> bySignature;
    // A column's `group` replicas share building and zone in every stage.
    for (int first = 0; first < grid.replicas; first += grid.group) {
        std::vector<int> sig(std::size_t(grid.stages));
        for (int s = 0; s < grid.stages; ++s)
            sig[std::size_t(s)] = grid.at(s, first);
        auto [it, fresh] = bySignature.emplace(sig, workers.size());
        if (fresh)
            workers.push_back({{}, sig});
        for (int r = first; r < std::min(grid.replicas, first + grid.group); ++r)
            workers[it->second].replicas.push_back(r);
    }
    return workers;
}

// Whether the workers are equal blocks of consecutive replicas, as HSDP's
// groups are in every framework that runs it (PyTorch's device mesh,
// replicate x shard; Megatron's distributed optimizer instances).
bool equalBlocks(const std::vector<Worker>& workers) {
    const std::size_t f = workers.front().replicas.size();
    for (std::size_t w = 0; w < workers.size(); ++w) {
        if (workers[w].replicas.size() != f)
            return false;
        for (std::size_t k = 0; k < f; ++k)
            if (workers[w].replicas[k] != int(w * f + k))
                return false;
    }
    return true;
}

// HSDP over such workers is the plan's own dp_shard (the sharding group a
// worker's replicas, the replica groups across the workers): the plan with
// that group, where it can have one.
std::optional<Plan> hsdpAsDpShard(const Plan& sync, const std::vector<Worker>& workers) {
    if (!equalBlocks(workers))
        return std::nullopt;
    Plan p = sync;
    p.dp_shard = int(workers.front().replicas.size());
    if (dpShardProblem(p) != DpShardProblem::None)
        return std::nullopt;
    return p;
}

} // namespace

std::optional<Plan> outerHsdpAsDpShard(const Cluster& cluster, const Plan& plan) {
    if (!plan.outer_sync || plan.outer_sync->method != OuterSyncMethod::Hsdp)
        return std::nullopt;
    const PlacementResult placed = placeCells(cluster, plan, "");
    if (!placed.ok())
        return std::nullopt;
    const std::vector<Worker> workers = workersOf(placed.grid);
    if (workers.size() < 2)
        return std::nullopt;
    Plan sync = plan;
    sync.outer_sync.reset();
    return hsdpAsDpShard(sync, workers);
}

EvaluationResult evaluateOuterSync(const Evaluator& evaluator, const Model& model, const Plan& plan,
                                   const EvaluateOptions& options, EvaluationCache* cache) {
    const Cluster& cluster = evaluator.cluster();
    const OuterSync& os = *plan.outer_sync;
    Plan sync = plan;
    sync.outer_sync.reset();
    EvaluateOptions inner = options;
    inner.validate = false;

    const PlacementResult placed = placeCells(cluster, plan, options.plan_file);
    if (!placed.ok())
        return EvaluationError{placed.problems};
    const CellGrid& grid = placed.grid;

    const std::vector<Worker> workers = workersOf(grid);
    const int W = int(workers.size());
    if (W <= 1) {
        EvaluationResult r = evaluator.evaluateStep(model, sync, inner, cache);
        if (auto* ev = std::get_if<Evaluation>(&r)) {
            OuterSyncReport& rep = ev->outer_sync.emplace();
            rep.method = os.method;
            rep.workers = 1;
            rep.inner_steps = os.inner_steps;
            rep.fragments = os.fragments;
            rep.inner_step_s = ev->step_time_s;
            ev->warnings.push_back(
                std::string("outer_sync: every data-parallel replica holds its stages in the same "
                            "buildings, so there is one worker and nothing to decouple; ") +
                toString(os.method) +
                " changes nothing here (place replicas in different "
                "buildings: DP across buildings)");
        }
        return r;
    }
    for (const Worker& w : workers)
        if (const int span = plan.parallelism.expertReplicaSpan();
            int(w.replicas.size()) % span != 0)
            return EvaluationError{{Diagnostic{
                options.plan_file, "/outer_sync",
                "the worker in " + buildingList(cluster, w) + " has " +
                    std::to_string(w.replicas.size()) + " data-parallel replicas, which " +
                    (span == plan.parallelism.ep
                         ? "ep (" + std::to_string(span) + ")"
                         : "the replicas an expert group spans (" + std::to_string(span) + ")") +
                    " does not divide: experts are sharded inside a worker"}}};

    // Inner steps: each worker alone.
    std::vector<Evaluation> evs;
    std::size_t critical = 0;
    for (std::size_t w = 0; w < workers.size(); ++w) {
        EvaluationResult r = evaluator.evaluateStep(
            model, workerPlan(cluster, plan, grid, workers[w]), inner, cache);
        if (auto* e = std::get_if<EvaluationError>(&r)) {
            for (Diagnostic& d : e->problems)
                d.message =
                    "outer_sync worker in " + buildingList(cluster, workers[w]) + ": " + d.message;
            return r;
        }
        evs.push_back(std::get<Evaluation>(std::move(r)));
        if (evs.back().step_time_s > evs[critical].step_time_s)
            critical = w;
    }
    const double innerStep = evs[critical].step_time_s;

    // The outer all-reduce on the plan's topology and transports.
    std::unique_ptr<Topology> routed;
    const Topology* topo = &evaluator.topology();
    if (plan.routing && *plan.routing != cluster.routing) {
        Cluster c = cluster;
        c.routing = *plan.routing;
        routed = std::make_unique<Topology>(c);
        topo = routed.get();
    }
    std::vector<EdgeTransport> transports = edgeTransports(cluster, *topo, plan);
    if (!options.background_gbps.empty()) // other jobs, a degraded link
        setBackground(cluster, *topo, options.background_gbps, transports);
    const bool hsdp = os.method == OuterSyncMethod::Hsdp;
    const int fragments = os.method == OuterSyncMethod::StreamingDiloco ? os.fragments : 1;
    const double elementBytes = hsdp ? double(plan.grad_reduce_bytes) : os.outer_bytes;
    const OuterTraffic outer = outerAllReduce(cluster, *topo, transports, plan, grid, workers, evs,
                                              elementBytes, 1.0 / fragments, !hsdp);
    double sync_s = outer.seconds;
    // HSDP the plan can say with dp_shard is priced as that plan: each
    // bucket's (ZeRO-3: each FSDP unit's) all-reduce across the replicas
    // after its reduce-scatter inside the worker, on the DP stream
    // (docs/COST_MODEL.md "HSDP"), the replicas' traffic on the links with
    // everything else. One mechanism for one layout.
    if (hsdp)
        if (const std::optional<Plan> sharded = hsdpAsDpShard(sync, workers)) {
            EvaluationResult r = evaluator.evaluateStep(model, *sharded, inner, cache);
            if (auto* ev = std::get_if<Evaluation>(&r)) {
                OuterSyncReport& rep = ev->outer_sync.emplace();
                rep.method = os.method;
                rep.workers = W;
                rep.inner_steps = os.inner_steps;
                rep.fragments = 1;
                rep.inner_step_s = innerStep;
                rep.sync_s = ev->replica_reduce_s;
                rep.exposed_per_step_s = std::max(0.0, ev->step_time_s - innerStep);
                rep.bytes_per_sync = outer.interBuildingBytes;
            }
            return r;
        }
    // DiLoCo's outer step (Nesterov SGD on the shard: parameters, momentum
    // and the pseudo-gradient in fp32) at the HBM rate.
    const KernelConstants kc;
    double largestStage = 0;
    for (double p : evs[critical].stage_params)
        largestStage = std::max(largestStage, p);
    const Worker& cw = workers[critical];
    const double shard = double(cw.replicas.size()) * plan.parallelism.cp;
    const GpuModel* gpu = cluster.gpuOf(
        cluster
            .buildings[std::size_t(cw.buildings[std::size_t(evs[critical].memory.worst_stage)])]);
    const double hbm = gpu ? hbmBytesPerS(*gpu, kc) : 1e12;
    if (!hsdp)
        sync_s += largestStage / shard / fragments * 5 * 4 / hbm;

    // Per step: the syncs spread over the steps between them.
    double step = innerStep;
    double syncsPerStep = 1;
    if (os.method == OuterSyncMethod::Diloco) {
        syncsPerStep = 1.0 / os.inner_steps;
        step = innerStep + sync_s * syncsPerStep;
    } else if (os.method == OuterSyncMethod::StreamingDiloco) {
        syncsPerStep = double(fragments) / os.inner_steps;
        const double hidden = os.overlap_steps * innerStep;
        step = std::max(innerStep + syncsPerStep * std::max(0.0, sync_s - hidden),
                        syncsPerStep * sync_s);
    } else {
        // HSDP: each bucket's all-reduce across workers follows its
        // reduce-scatter inside the worker, behind the last microbatch's
        // backward (about 2/3 of its compute), whose SMs it shares
        // (slowedCompute).
        const Evaluation& c = evs[critical];
        // Each bucket of the stage's gradients is reduce-scattered and its
        // shard all-reduced (as dpTiming): every bucket (ZeRO-3: FSDP unit,
        // one a layer) is an all-reduce with its own ring latency.
        const double buckets = std::max(1.0, gradientBuckets(largestStage, plan));
        double units = buckets;
        if (plan.effectiveZeroStage() >= 3) {
            units = 1;
            for (int layers : c.layers_per_stage)
                units = std::max(units, double(layers));
        }
        sync_s += (units - 1) * outer.latency_s;
        const double window =
            c.breakdown.compute_s / double(std::max<std::int64_t>(1, c.microbatches)) * 2.0 / 3.0;
        const double share = gpu ? ncclOverlapShare(gpu->sms) : 0.0;
        const double exposed =
            plan.dp_overlap
                ? std::max(slowedCompute(window, sync_s - sync_s / units, share) + sync_s / units,
                           sync_s) -
                      window
                : sync_s;
        step = innerStep + exposed;
    }

    // The job's evaluation: the critical worker's, widened to every worker.
    Evaluation ev = evs[critical];
    ev.step_time_s = step;
    ev.gpus = plan.parallelism.gpus();
    ev.microbatches = plan.microbatches();
    ev.tokens_per_s = double(plan.global_batch_sequences) * double(plan.sequence_length) / step;
    ev.mfu = ev.hfu = ev.tflops_per_gpu = 0;
    ev.model_flops_per_step = ev.hardware_flops_per_step = 0;
    ev.cross_building_bytes = outer.interBuildingBytes * syncsPerStep;
    for (const Evaluation& e : evs) {
        const double share = double(e.gpus) * e.step_time_s / (double(ev.gpus) * step);
        ev.mfu += e.mfu * share;
        ev.hfu += e.hfu * share;
        ev.tflops_per_gpu += e.tflops_per_gpu * share;
        ev.model_flops_per_step += e.model_flops_per_step;
        ev.hardware_flops_per_step += e.hardware_flops_per_step;
        ev.cross_building_bytes += e.cross_building_bytes;
    }
    const double exposed = step - innerStep;
    ev.breakdown.dp_exposed_s += exposed;
    for (Breakdown& b : ev.stage_breakdown)
        b.dp_exposed_s += exposed;
    // DiLoCo keeps the outer parameters and momentum (fp32) of its shard.
    if (!hsdp) {
        const double outerGib = largestStage / shard * 8 / (1024.0 * 1024 * 1024);
        ev.memory.other_gib += outerGib;
        ev.memory.peak_gib_per_gpu += outerGib;
        for (double& p : ev.memory.per_stage_peak_gib)
            p += outerGib;
        ev.memory.fits = ev.memory.peak_gib_per_gpu <= ev.memory.capacity_gib;
    }
    ev.building_gpus = placed.gpus_used;
    ev.stage_building.assign(std::size_t(grid.stages), 0);
    for (int s = 0; s < grid.stages; ++s) {
        // By columns: `group` consecutive replicas share their building.
        std::map<int, int> count;
        for (int r = 0; r < grid.replicas; r += grid.group)
            count[grid.at(s, r)] += std::min(grid.group, grid.replicas - r);
        ev.stage_building[std::size_t(s)] =
            std::max_element(count.begin(), count.end(), [](auto& a, auto& b) {
                return a.second < b.second;
            })->first;
    }

    // Links: every worker's inner traffic plus the outer syncs per step.
    if (options.detail && !ev.links.empty()) {
        for (std::size_t i = 0; i < ev.links.size(); ++i) {
            LinkUsage& u = ev.links[i];
            double dir[2] = {0, 0};
            double busy = 0, peak = 0;
            for (const Evaluation& e : evs) {
                if (i >= e.links.size())
                    continue;
                const LinkUsage& o = e.links[i];
                dir[0] += o.direction_bytes_per_step[0];
                dir[1] += o.direction_bytes_per_step[1];
                busy = std::max(busy, o.busy_s);
                peak = std::max(peak, o.peak_utilization);
                for (Dim d : o.dims)
                    if (std::find(u.dims.begin(), u.dims.end(), d) == u.dims.end())
                        u.dims.push_back(d);
            }
            const double capBytes = gbpsToBytesPerS(u.capacity_gbps);
            bool outerUses = false;
            for (int d = 0; d < 2; ++d) {
                const double o = outer.phase->load(u.edge, d);
                if (o > 0) {
                    outerUses = true;
                    dir[d] += o * syncsPerStep;
                    if (sync_s > 0 && capBytes > 0)
                        peak = std::max(peak, o / (sync_s * capBytes));
                }
            }
            if (outerUses) {
                busy += sync_s * syncsPerStep;
                if (std::find(u.dims.begin(), u.dims.end(), Dim::DP) == u.dims.end())
                    u.dims.push_back(Dim::DP);
            }
            u.direction_bytes_per_step[0] = dir[0];
            u.direction_bytes_per_step[1] = dir[1];
            u.bytes_per_step = std::max(dir[0], dir[1]);
            u.busy_s = std::min(busy, step);
            u.utilization = capBytes > 0 ? u.bytes_per_step / (capBytes * step) : 0;
            u.peak_utilization = std::min(1.0, peak);
            const double bg = u.capacity_gbps > 0 ? u.background_gbps / u.capacity_gbps : 0;
            u.total_utilization = u.utilization + bg;
            u.total_peak_utilization = u.peak_utilization + bg;
        }
    }
    if (hsdp && !equalBlocks(workers))
        ev.warnings.push_back(
            "outer_sync: hsdp over workers that are not equal blocks of consecutive replicas, "
            "which no framework's HSDP runs (PyTorch's replicate x shard mesh, Megatron's "
            "distributed optimizer instances divide the replicas evenly); priced per worker");
    std::set<std::string> seen(ev.warnings.begin(), ev.warnings.end());
    for (const Evaluation& e : evs)
        for (const std::string& w : e.warnings)
            if (seen.insert(w).second)
                ev.warnings.push_back(w);

    OuterSyncReport& rep = ev.outer_sync.emplace();
    rep.method = os.method;
    rep.workers = W;
    rep.inner_steps = os.inner_steps;
    rep.fragments = fragments;
    rep.inner_step_s = innerStep;
    rep.sync_s = sync_s;
    rep.exposed_per_step_s = exposed;
    rep.bytes_per_sync = outer.interBuildingBytes;
    if (!hsdp) {
        const double n = planParams(plan, ev);
        rep.penalty_from_curve = !os.loss_penalty;
        rep.loss_penalty =
            os.loss_penalty ? *os.loss_penalty : outerLossPenalty(n, W, os.inner_steps);
        rep.token_multiplier = outerTokenMultiplier(n, plan.token_budget, rep.loss_penalty);
        if (rep.penalty_from_curve && n > kFitMaxParams)
            ev.warnings.push_back(
                "outer_sync: the convergence curve is measured up to 2.4B parameters "
                "(Charles et al. 2025); this model's " +
                std::to_string(int(std::lround(n / 1e9))) +
                "B is read at 2.4B; set outer_sync.loss_penalty to override");
        if (!std::isfinite(rep.token_multiplier))
            ev.warnings.push_back("outer_sync: with a loss penalty of " +
                                  std::to_string(rep.loss_penalty * 100) +
                                  "% DiLoCo never reaches synchronous DP's loss on this curve");
    }
    if (os.method == OuterSyncMethod::StreamingDiloco && step > innerStep &&
        syncsPerStep * sync_s >= step - 1e-12)
        ev.warnings.push_back(
            "outer_sync: the fragments' syncs keep the links busy back to back; fewer fragments "
            "per inner_steps or fewer outer_bytes");
    return ev;
}

} // namespace sa

#include "cost/run.h"

#include "cost/placement.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace sa {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- defaults (docs/RUN.md) -------------------------------------------------------

// Llama 3 (Dubey et al. 2024, arXiv 2407.21783), Sec. 3.3.4, Table 5: 419
// unexpected interruptions in a 54-day snapshot of 405B pre-training on
// 16,384 H100 (2,048 hosts of 8). The GPU categories (faulty GPU 148, GPU
// HBM3 memory 72, GPU SRAM memory 19, GPU system processor 17, silent data
// corruption 6, GPU thermal interface + sensor 6) give 268 interruptions,
// counted per GPU; the other 151 (software, network, host maintenance, NIC,
// NCCL watchdog, SSD, power supply, chassis, ...) are counted per host.
constexpr double kLlama3Hours = 54.0 * 24.0;
constexpr double kLlama3Gpus = 16384;
constexpr double kLlama3Hosts = 2048;
constexpr double kLlama3GpuInterruptions = 148 + 72 + 19 + 17 + 6 + 6; // 268
constexpr double kLlama3Interruptions = 419;
constexpr double kDefaultGpuMtbfHours = kLlama3Gpus * kLlama3Hours / kLlama3GpuInterruptions;
constexpr double kDefaultHostMtbfHours =
    kLlama3Hosts * kLlama3Hours / (kLlama3Interruptions - kLlama3GpuInterruptions);

// Llama 3, Sec. 3.3.1: Tectonic "supports a sustainable throughput of 2 TB/s"
// for the 16K-GPU job; spread evenly, per GPU of the job.
constexpr double kDefaultStorageBytesPerSPerGpu = 2e12 / 16384;

// One checkpoint per parameter: bf16 weights (2 bytes) + fp32 master
// weights (4) + Adam's first and second moments in fp32 (4 + 4) = 14 bytes,
// what Megatron's distributed checkpoint writes for mixed-precision Adam.
constexpr double kCheckpointBytesPerParam = 2 + 4 + 4 + 4;

// Async checkpoints block only for the copy of each GPU's shard to host
// memory. Assumption: 25 GB/s per GPU, half of the ~50 GB/s that pinned
// device-to-host copies reach on a PCIe Gen5 x16 link (64 GB/s raw), since
// all GPUs of a host copy at once into the same host memory.
constexpr double kHostCopyBytesPerS = 25e9;

// Detect the failure, reschedule, re-initialise (NCCL communicators, data
// loaders): an assumption, Llama 3 gives no number. The checkpoint read is
// added to it.
constexpr double kDefaultRestartS = 600;

// Board power with nothing running, as a fraction of the rated board power
// (assumption, docs/RUN.md).
constexpr double kIdleFractionOfTdp = 0.15;
// Per host besides its GPUs: the DGX H100 datasheet's 10.2 kW maximum system
// power less its 8 x 700 W GPUs (CPUs, memory, NVSwitches, NICs, fans, power
// conversion). A maximum, so an upper estimate of the sustained draw.
constexpr double kDefaultHostPowerW = 10200 - 8 * 700;
// Switches and optics per GPU (assumption).
constexpr double kDefaultNetworkPowerWPerGpu = 50;
// Power usage effectiveness of a modern AI facility (assumption).
constexpr double kDefaultPue = 1.2;

double orDefault(double v, double d) {
    return v > 0 ? v : d;
}

// Parameters of the whole model: attention, MLP (dense, or routed + shared
// experts and the router), norms, embedding and output layer (counted as
// layerCost, embeddingCost and logitsCost count them, unsharded).
double modelParams(const Model& m) {
    const double h = double(m.hidden);
    const double gatedFactor = m.mlp == MlpKind::SwiGlu ? 3.0 : 2.0;
    const double attention = m.attentionParams();
    const double norms = 2.0 * h;
    const double denseMlp = gatedFactor * h * double(m.ffn_hidden);
    double moeMlp = denseMlp;
    if (m.moe) {
        const MoeConfig& moe = *m.moe;
        const double fe = double(moe.expert_ffn_hidden);
        moeMlp = moe.experts * gatedFactor * h * fe + h * moe.experts +
                 gatedFactor * h * fe * moe.shared_experts;
    }
    const int moeLayers = m.moeLayersIn(0, m.layers);
    double p =
        m.layers * (attention + norms) + (m.layers - moeLayers) * denseMlp + moeLayers * moeMlp;
    p += double(m.vocab) * h;                           // embedding
    p += m.tied_embeddings ? 0.0 : double(m.vocab) * h; // output layer
    p += h;                                             // final norm
    // Multi-token prediction: each module a block of the last layer's kind,
    // its 2h -> h projection and three norms (the embedding and output
    // layer shared).
    p += m.mtp_layers *
         (attention + norms + (m.lastLayerIsMoe() ? moeMlp : denseMlp) + 2.0 * h * h + 3.0 * h);
    return p;
}

// The job's GPUs in each building: the placement's, or (when the plan cannot
// be placed) an even share of each stage in the building holding most of it.
std::vector<double> jobGpus(const Cluster& cluster, const Plan& plan, const Evaluation& ev) {
    std::vector<double> g(cluster.buildings.size(), 0.0);
    if (ev.building_gpus.size() == g.size()) {
        for (std::size_t b = 0; b < g.size(); ++b)
            g[b] = double(ev.building_gpus[b]);
        return g;
    }
    const PlacementResult placed = placeCells(cluster, plan);
    if (placed.ok() && placed.gpus_used.size() == g.size()) {
        for (std::size_t b = 0; b < g.size(); ++b)
            g[b] = double(placed.gpus_used[b]);
        return g;
    }
    const std::size_t stages = ev.stage_building.size();
    for (std::size_t s = 0; s < stages; ++s) {
        const int b = ev.stage_building[s];
        if (b >= 0 && std::size_t(b) < g.size())
            g[std::size_t(b)] += double(ev.gpus) / double(stages);
    }
    return g;
}

double hostsOf(const Building& b, double gpus) {
    const double per = std::max(1, b.gpus_per_host);
    return std::ceil(gpus / per);
}

// sqrt(2 ln n): the expected maximum of n standard normal variables, to
// first order (0 for a single one).
double maxOfGaussians(double n) {
    return n > 1 ? std::sqrt(2.0 * std::log(n)) : 0.0;
}

// Expected compute time lost when a failure lands in a segment of length L
// (exponential failures of mean M, conditioned on one before L).
double expectedRework(double L, double M) {
    if (!(L > 0) || !(M > 0) || std::isinf(M))
        return 0;
    return M - L / std::expm1(L / M);
}

const Link* clusterLink(const Cluster& cluster, const std::string& name) {
    for (const auto& l : cluster.links) {
        const std::string n = l.name.empty() ? l.a + "-" + l.b : l.name;
        if (n == name)
            return &l;
    }
    return nullptr;
}

} // namespace

// ---- convergence ------------------------------------------------------------------

double chinchillaLoss(double params, double tokens, const LossCurve& c) {
    return c.E + c.A / std::pow(params, c.alpha) + c.B / std::pow(tokens, c.beta);
}

double tokensForLoss(double params, double loss, const LossCurve& c) {
    const double rest = loss - c.E - c.A / std::pow(params, c.alpha);
    if (!(rest > 0))
        return kInf;
    return std::pow(c.B / rest, 1.0 / c.beta);
}

// ---- goodput ------------------------------------------------------------------------

double dalyInterval(double delta_s, double mtbf_s) {
    if (!(delta_s < 2.0 * mtbf_s))
        return mtbf_s;
    const double x = delta_s / (2.0 * mtbf_s);
    return std::sqrt(2.0 * delta_s * mtbf_s) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - delta_s;
}

double dalyGoodput(double tau_s, double delta_s, double restart_s, double mtbf_s) {
    if (!(tau_s > 0))
        return 0;
    if (std::isinf(mtbf_s))
        return tau_s / (tau_s + delta_s);
    if (!(mtbf_s > 0))
        return 0;
    const double M = mtbf_s;
    return tau_s / (M * std::exp(restart_s / M) * std::expm1((tau_s + delta_s) / M));
}

// ---- the run ------------------------------------------------------------------------

void runReports(const Cluster& cluster, const Model& model, const Plan& plan, Evaluation& ev) {
    const std::vector<double> gpus = jobGpus(cluster, plan, ev);
    double totalGpus = 0;
    for (double g : gpus)
        totalGpus += g;
    const double step = ev.step_time_s;
    const double params = modelParams(model);

    // Failures: every GPU and host of the job interrupts it.
    double lambda = 0; // per second
    for (std::size_t b = 0; b < gpus.size(); ++b) {
        if (!(gpus[b] > 0))
            continue;
        const Building& bd = cluster.buildings[b];
        const double gpuMtbf = orDefault(bd.gpu_mtbf_hours, kDefaultGpuMtbfHours) * 3600;
        const double hostMtbf = orDefault(bd.host_mtbf_hours, kDefaultHostMtbfHours) * 3600;
        lambda += gpus[b] / gpuMtbf + hostsOf(bd, gpus[b]) / hostMtbf;
    }
    GoodputReport& gp = ev.goodput;
    gp = GoodputReport{};
    gp.job_mtbf_s = lambda > 0 ? 1.0 / lambda : kInf;

    // Checkpoints: every building writes (and reads back) its share of the
    // job's GPUs' state in parallel.
    gp.checkpoint_bytes = params * kCheckpointBytesPerParam;
    double restartBase = 0;
    for (std::size_t b = 0; b < gpus.size(); ++b) {
        if (!(gpus[b] > 0) || !(totalGpus > 0))
            continue;
        const Building& bd = cluster.buildings[b];
        const double share = gpus[b] / totalGpus * gp.checkpoint_bytes;
        const double write = bd.storage_write_gbps > 0 ? bd.storage_write_gbps * 1e9 / 8
                                                       : kDefaultStorageBytesPerSPerGpu * gpus[b];
        const double read = bd.storage_read_gbps > 0 ? bd.storage_read_gbps * 1e9 / 8 : write;
        gp.checkpoint_write_s = std::max(gp.checkpoint_write_s, share / write);
        gp.restart_s = std::max(gp.restart_s, share / read);
        restartBase = std::max(restartBase, orDefault(bd.restart_s, kDefaultRestartS));
    }
    gp.restart_s += restartBase;
    gp.checkpoint_blocking_s = plan.checkpoint.async && totalGpus > 0
                                   ? gp.checkpoint_bytes / totalGpus / kHostCopyBytesPerS
                                   : gp.checkpoint_write_s;

    // Stragglers: a synchronous step waits for the slowest GPU.
    const double c = ev.breakdown.compute_s;
    double slowdown = 1, jitter = 0;
    for (std::size_t b = 0; b < gpus.size(); ++b)
        if (gpus[b] > 0) {
            slowdown = std::max(slowdown, cluster.buildings[b].straggler_slowdown);
            jitter = std::max(jitter, cluster.buildings[b].step_jitter);
        }
    gp.straggler_s = c * (slowdown - 1);
    if (ev.outer_sync && ev.outer_sync->method != OuterSyncMethod::Hsdp &&
        ev.outer_sync->workers > 1) {
        // Inside a worker every step waits for the worker's slowest GPU;
        // across workers the outer sync waits for the slowest worker's sum of
        // H steps, whose jitter averages down by sqrt(H).
        const double W = ev.outer_sync->workers;
        const double H = std::max(1, ev.outer_sync->inner_steps);
        gp.straggler_s +=
            c * jitter * (maxOfGaussians(totalGpus / W) + maxOfGaussians(W) / std::sqrt(H));
    } else {
        gp.straggler_s += c * jitter * maxOfGaussians(totalGpus);
    }
    // Degraded links: each, for its share of the time, makes the step what
    // it is with that link at its degraded bandwidth (first order: one link
    // at a time).
    for (const auto& d : ev.degraded_steps)
        gp.degraded_links_s += d.fraction * std::max(0.0, d.step_time_s - step);
    const double wall = step + gp.straggler_s + gp.degraded_links_s;

    // The interval between checkpoints, in steps.
    const double M = gp.job_mtbf_s;
    if (plan.checkpoint.interval_steps > 0) {
        gp.interval_steps = plan.checkpoint.interval_steps;
        gp.interval_optimal = false;
    } else if (wall > 0) {
        const double steps =
            std::isinf(M) ? kInf : dalyInterval(gp.checkpoint_blocking_s, M) / wall;
        if (std::isinf(steps) || steps > 1e15) {
            gp.interval_steps = 0; // never: no failures
        } else {
            const auto lo = std::max<std::int64_t>(1, std::int64_t(std::floor(steps)));
            const std::int64_t hi = std::max<std::int64_t>(1, std::int64_t(std::ceil(steps)));
            const double gLo =
                dalyGoodput(double(lo) * wall, gp.checkpoint_blocking_s, gp.restart_s, M);
            const double gHi =
                dalyGoodput(double(hi) * wall, gp.checkpoint_blocking_s, gp.restart_s, M);
            gp.interval_steps = gHi > gLo ? hi : lo;
        }
        gp.interval_optimal = true;
    }
    double daly = 1;
    if (gp.interval_steps > 0) {
        gp.interval_s = double(gp.interval_steps) * wall;
        daly = dalyGoodput(gp.interval_s, gp.checkpoint_blocking_s, gp.restart_s, M);
        gp.lost_per_failure_s =
            gp.restart_s + expectedRework(gp.interval_s + gp.checkpoint_blocking_s, M);
    } else {
        gp.interval_s = kInf;
        gp.lost_per_failure_s = gp.restart_s;
    }
    gp.goodput = wall > 0 ? daly * step / wall : 0;
    if (wall > 0 && !(gp.goodput > 0)) {
        char mtbf[160];
        std::snprintf(mtbf, sizeof mtbf,
                      "goodput: 0, the job fails every %.4g s on average, before a step of "
                      "%.4g s and its checkpoint complete: no progress is kept",
                      M, wall);
        ev.warnings.emplace_back(mtbf);
    }

    // Prices: GPU hours for the wall-clock step, transport by the GB.
    CostReport& cost = ev.cost;
    cost = CostReport{};
    bool anyPriced = false, anyUnpriced = false;
    double gpuUsd = 0;
    for (std::size_t b = 0; b < gpus.size(); ++b) {
        if (!(gpus[b] > 0))
            continue;
        const Building& bd = cluster.buildings[b];
        if (bd.gpu_hour_usd > 0)
            anyPriced = true;
        else
            anyUnpriced = true;
        gpuUsd += gpus[b] * bd.gpu_hour_usd * wall / 3600;
    }
    if (anyPriced && anyUnpriced) {
        std::string names;
        for (std::size_t b = 0; b < gpus.size(); ++b)
            if (gpus[b] > 0 && !(cluster.buildings[b].gpu_hour_usd > 0))
                names += (names.empty() ? "" : ", ") + cluster.buildings[b].name;
        ev.warnings.push_back("cost: building " + names +
                              " has no gpu_hour_usd: its GPUs are counted at $0 in the cost");
    }
    bool linkPriced = false;
    for (const LinkUsage& u : ev.links) {
        if (u.tier != LinkTier::InterBuilding)
            continue;
        const Link* l = clusterLink(cluster, u.name);
        if (!l || !(l->price_per_gb_usd > 0))
            continue;
        linkPriced = true;
        const double bytes = u.direction_bytes_per_step[0] + u.direction_bytes_per_step[1];
        cost.transport_usd_per_step += bytes / 1e9 * l->price_per_gb_usd;
    }
    cost.priced = anyPriced || linkPriced;
    cost.cost_usd_per_step = gpuUsd + cost.transport_usd_per_step;

    // Power: GPUs between idle and their limit by the busy fraction, hosts,
    // network, all times the facility's PUE.
    const double busy = wall > 0 ? std::clamp(c / wall, 0.0, 1.0) : 0.0;
    double facilityW = 0, gpuW = 0, poweredGpus = 0;
    for (std::size_t b = 0; b < gpus.size(); ++b) {
        if (!(gpus[b] > 0))
            continue;
        const Building& bd = cluster.buildings[b];
        const GpuModel* gpu = cluster.gpuOf(bd);
        if (!gpu || !(gpu->tdp_w > 0)) {
            ev.warnings.push_back("energy: the GPU model of building " + bd.name +
                                  " has no tdp_w: the building is left out of power and energy");
            continue;
        }
        const double limit = orDefault(gpu->power_limit_w, gpu->tdp_w);
        const double idle = orDefault(gpu->idle_w, kIdleFractionOfTdp * gpu->tdp_w);
        const double perGpu = idle + (limit - idle) * busy;
        const double it =
            gpus[b] * perGpu +
            hostsOf(bd, gpus[b]) * orDefault(bd.host_power_w, kDefaultHostPowerW) +
            gpus[b] * orDefault(bd.network_power_w_per_gpu, kDefaultNetworkPowerWPerGpu);
        facilityW += orDefault(bd.pue, kDefaultPue) * it;
        gpuW += gpus[b] * perGpu;
        poweredGpus += gpus[b];
    }
    cost.gpu_power_w = poweredGpus > 0 ? gpuW / poweredGpus : 0;
    cost.facility_power_kw = facilityW / 1000;
    cost.energy_kwh_per_step = cost.facility_power_kw * wall / 3600;

    // Wall time per useful step: the straggler-free step over goodput (which
    // holds the stragglers' share), i.e. the wall step over Daly's goodput.
    // The whole wall clock is paid at the GPU price and draws the job's
    // power (restarts and rework included); transport is paid per step done.
    const double perStep = gp.goodput > 0 ? step / gp.goodput : kInf;
    const double gpuUsdPerS = wall > 0 ? gpuUsd / wall : 0;
    const double tokensPerStep = double(plan.global_batch_sequences) * plan.sequence_length;
    if (tokensPerStep > 0) {
        const double steps = 1e6 / tokensPerStep;
        cost.time_s_per_mtok = steps * perStep;
        cost.usd_per_mtok = gpuUsdPerS * cost.time_s_per_mtok + cost.transport_usd_per_step * steps;
        cost.kwh_per_mtok = cost.facility_power_kw * cost.time_s_per_mtok / 3600;
    }

    // The run's totals.
    ev.run.reset();
    if (!(plan.token_budget > 0) && !(plan.target_loss > 0))
        return;
    RunReport run;
    const bool lowComm = ev.outer_sync && ev.outer_sync->method != OuterSyncMethod::Hsdp;
    if (plan.target_loss > 0) {
        run.target_loss = plan.target_loss;
        const double penalty = lowComm ? ev.outer_sync->loss_penalty : 0.0;
        run.tokens_to_loss = tokensForLoss(params, plan.target_loss / (1 + penalty));
        if (std::isinf(run.tokens_to_loss))
            ev.warnings.push_back(
                lowComm
                    ? "outer_sync: the target loss is below what DiLoCo reaches at any token count"
                    : "run: the target loss is below what the model reaches at any token count");
    } else {
        run.target_loss = chinchillaLoss(params, plan.token_budget);
        run.tokens_to_loss =
            plan.token_budget * (ev.outer_sync ? ev.outer_sync->token_multiplier : 1.0);
    }
    // The run trains on its token budget, or (without one) to the target loss.
    run.tokens = plan.token_budget > 0
                     ? plan.token_budget
                     : (std::isinf(run.tokens_to_loss) ? 0.0 : run.tokens_to_loss);
    if (tokensPerStep > 0) {
        run.steps = run.tokens / tokensPerStep;
        run.time_s = run.steps > 0 ? run.steps * perStep : 0.0;
        run.time_to_loss_s =
            run.tokens_to_loss > 0 ? run.tokens_to_loss / tokensPerStep * perStep : 0.0;
    }
    run.cost_usd = gpuUsdPerS * run.time_s + cost.transport_usd_per_step * run.steps;
    run.energy_kwh = cost.facility_power_kw * run.time_s / 3600;
    run.restarts = std::isinf(gp.job_mtbf_s) ? 0 : run.time_s / gp.job_mtbf_s;
    ev.run = run;
}

} // namespace sa

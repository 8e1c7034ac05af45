#include "cost/collectives.h"

#include <algorithm>
#include <cmath>

namespace sa {

namespace {

double kindFactor(CollectiveKind k) {
    return k == CollectiveKind::AllReduce ? 2.0 : 1.0;
}

struct Cost {
    double bandwidth = 0, latency = 0;
};

// Flat ring over all members in site order; crossings between consecutive
// sites (and the wrap-around) carry the ring's bytes.
Cost ring(TrafficPhase& phase, const GroupSpread& g, CollectiveKind kind, double S, double groups,
          const CollectiveEnv& env) {
    const int n = g.members;
    const double f = kindFactor(kind);
    const double ringBytes = f * (n - 1) / n * S;
    Cost c;
    if (g.single_host) {
        c.bandwidth = ringBytes / env.nvlink_bps;
        c.latency = f * (n - 1) * env.nvlinkStep();
        return c;
    }
    c.bandwidth = ringBytes / env.nic_bps;
    double hopSum = 0;
    int crossings = 0;
    const std::size_t k = g.sites.size();
    if (k > 1) {
        for (std::size_t i = 0; i < k; ++i) {
            const Location a = g.sites[i].loc;
            const Location b = g.sites[(i + 1) % k].loc;
            phase.add(a, b, groups * ringBytes, groups);
            hopSum += env.routeStep(phase.routeLatency(a, b));
            ++crossings;
        }
    }
    hopSum += (n - crossings) * env.localStep();
    // Pipelined ring: a chunk travels around the ring f times (n-1)/n.
    c.latency = f * (n - 1) / n * hopSum;
    return c;
}

// NCCL-style double binary tree: ~S per direction across every boundary
// between consecutive sites, log-depth latency.
Cost tree(TrafficPhase& phase, const GroupSpread& g, CollectiveKind kind, double S, double groups,
          const CollectiveEnv& env) {
    const int n = g.members;
    const double f = kindFactor(kind);
    Cost c;
    const double depth = std::ceil(std::log2(std::max(2, n)));
    if (g.single_host) {
        c.bandwidth = f * S / env.nvlink_bps;
        c.latency = f * depth * env.nvlinkStep();
        return c;
    }
    c.bandwidth = f * S / env.nic_bps;
    double maxCross = 0;
    for (std::size_t i = 0; i + 1 < g.sites.size(); ++i) {
        const Location a = g.sites[i].loc;
        const Location b = g.sites[i + 1].loc;
        phase.add(a, b, groups * f / 2 * S, 2 * groups);
        phase.add(b, a, groups * f / 2 * S, 2 * groups);
        maxCross = std::max(maxCross, phase.routeLatency(a, b));
    }
    const double bDepth = std::ceil(std::log2(std::max(1, g.buildings))) + (g.sites.size() > 1);
    c.latency = f * (depth * env.localStep() + bDepth * maxCross);
    return c;
}

// Hierarchical: inside each building a ring reduce-scatter, across
// buildings a ring all-reduce of each shard, then an all-gather inside.
Cost hierarchical(TrafficPhase& phase, const GroupSpread& g, CollectiveKind kind, double S,
                  double groups, const CollectiveEnv& env) {
    if (g.buildings < 2)
        return ring(phase, g, kind, S, groups, env);
    const double f = kindFactor(kind);
    // Sites grouped by building (sites are sorted by building).
    struct B {
        std::size_t first = 0, last = 0;
        int members = 0;
    };
    std::vector<B> bs;
    for (std::size_t i = 0; i < g.sites.size(); ++i) {
        if (bs.empty() || g.sites[bs.back().first].loc.building != g.sites[i].loc.building)
            bs.push_back({i, i, 0});
        bs.back().last = i;
        bs.back().members += g.sites[i].members;
    }
    int nMin = g.members, nMax = 0;
    for (const B& b : bs) {
        nMin = std::min(nMin, b.members);
        nMax = std::max(nMax, b.members);
    }
    Cost c;
    // Intra-building rings.
    double localHops = 0;
    for (const B& b : bs) {
        const std::size_t k = b.last - b.first + 1;
        const double bytes = f * (b.members - 1) / std::max(1, b.members) * S;
        if (k > 1)
            for (std::size_t i = b.first; i <= b.last; ++i) {
                const std::size_t j = i == b.last ? b.first : i + 1;
                phase.add(g.sites[i].loc, g.sites[j].loc, groups * bytes, groups);
            }
        localHops = std::max(localHops, double(b.members) * env.localStep());
    }
    c.bandwidth = f * (nMax - 1) / std::max(1, nMax) * S / env.nic_bps;
    c.latency = f * localHops;
    // Across buildings: n_min shard rings of k members, each S / n_min.
    const int k = int(bs.size());
    const double shard = S / nMin;
    const double crossBytes = f * (k - 1) / k * shard * nMin;
    double wan = 0;
    for (int i = 0; i < k; ++i) {
        const Location a = g.sites[bs[std::size_t(i)].first].loc;
        const Location b = g.sites[bs[std::size_t((i + 1) % k)].first].loc;
        phase.add(a, b, groups * crossBytes, groups * nMin);
        wan = std::max(wan, env.routeStep(phase.routeLatency(a, b)));
    }
    c.bandwidth += f * (k - 1) / k * shard / env.nic_bps;
    c.latency += f * (k - 1) * wan;
    return c;
}

Cost run(TrafficPhase& phase, const GroupSpread& g, CollectiveKind kind, CollectiveAlgo algo,
         double S, double groups, const CollectiveEnv& env) {
    switch (algo) {
    case CollectiveAlgo::Tree:
        return tree(phase, g, kind, S, groups, env);
    case CollectiveAlgo::Hierarchical:
        return hierarchical(phase, g, kind, S, groups, env);
    default:
        return ring(phase, g, kind, S, groups, env);
    }
}

} // namespace

double collectiveBytesPerMember(CollectiveKind kind, int n, double bytes) {
    if (n <= 1)
        return 0;
    return kindFactor(kind) * (n - 1) / n * bytes;
}

CollectiveCost loadCollective(TrafficPhase& phase, const GroupSpread& g, CollectiveKind kind,
                              CollectiveAlgo algo, double S, double groups,
                              const CollectiveEnv& env) {
    CollectiveCost out;
    if (g.members <= 1 || S <= 0)
        return out;
    // NCCL runs its trees for all-reduce only; reduce-scatter and all-gather
    // are rings (src/graph/tuning.cc: ncclTopoTuneModel gives tree no
    // bandwidth for other collectives).
    if (algo == CollectiveAlgo::Tree && kind != CollectiveKind::AllReduce)
        algo = CollectiveAlgo::Ring;
    if (algo == CollectiveAlgo::Auto) {
        // What NCCL's tuner picks (src/graph/tuning.cc): ring or tree,
        // whichever is faster for this group alone at this size. NCCL knows
        // nothing of buildings: the hierarchical (per-building, then across)
        // scheme is a framework's choice, never NCCL's own.
        TrafficPhase scratch(phase.topology(), phase.transport());
        double best = 1e300;
        for (CollectiveAlgo a : {CollectiveAlgo::Ring, CollectiveAlgo::Tree}) {
            if (a == CollectiveAlgo::Tree && kind != CollectiveKind::AllReduce)
                continue;
            scratch.clear();
            const Cost c = run(scratch, g, kind, a, S, groups, env);
            const double t = std::max(c.bandwidth, scratch.drainTime()) + c.latency;
            if (t < best) {
                best = t;
                algo = a;
            }
        }
    }
    const Cost c = run(phase, g, kind, algo, S, groups, env);
    out.bandwidth_s = c.bandwidth;
    out.latency_s = c.latency;
    out.algo = algo;
    return out;
}

} // namespace sa

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
    double codec = 0, residual = 0; // CollectiveCost::codec_hbm_bytes, residual_elements
    bool compressed = false;
};

// What one collective does to the bytes it sends across buildings.
struct Codec {
    double e = 4;    // bytes per uncompressed element
    double wire = 4; // bytes per element on building crossings (a cast), e if none
    const Compression* topk = nullptr;
    double factor() const { return wire / e; }
    bool cast() const { return wire < e; }
    // Encoding `sent` and decoding as many received elements: each pass
    // reads one format and writes the other.
    double castPasses(double sent) const { return 2 * sent * (e + wire); }
};

Codec codecOf(const CrossCompression& cx, CollectiveKind kind) {
    Codec c;
    c.e = c.wire = cx.element_bytes;
    if (!cx.method || kind == CollectiveKind::AllGather)
        return c;
    if (cx.method->method == CompressionMethod::TopK)
        c.topk = &*cx.method;
    else
        c.wire = std::min(c.e, castWireBytes(cx.method->method));
    return c;
}

// Seconds a member needs to push `bytes` of a collective through the
// hosts of a group that spans hosts. NCCL builds one ring (or tree) per
// channel and spreads the channels over the NICs of the member GPUs
// (src/graph/search.cc), so the `per_host` members of a host send through
// `per_host` NICs: each member's NIC carries 1/per_host of the bytes and
// its NVLink the rest, to the next member on the host, both at once. A
// host of eight 400 Gbit/s NICs thus reaches ~370-400 GB/s of bus
// bandwidth, NVIDIA's figures for all_reduce_perf across nodes
// (nccl-tests issue 309; 192 GB/s on DGX A100's 8 x 200 Gbit/s, NCCL
// issue 812), not one NIC's 46-48 GB/s.
double scaleOutSeconds(double bytes, const GroupSpread& g, const CollectiveEnv& env) {
    const double k = std::max(1, g.per_host);
    return std::max(bytes / (k * env.nic_bps), bytes * (k - 1) / k / env.nvlink_bps);
}

// Flat ring over all members in site order; crossings between consecutive
// sites (and the wrap-around) carry the ring's bytes.
Cost ring(TrafficPhase& phase, const GroupSpread& g, CollectiveKind kind, double S, double groups,
          const CollectiveEnv& env, const Codec& codec) {
    const int n = g.members;
    const double f = kindFactor(kind);
    const double ringBytes = f * (n - 1) / n * S;
    Cost c;
    if (g.single_host) {
        c.bandwidth = ringBytes / env.nvlink_bps;
        c.latency = f * (n - 1) * env.nvlinkStep();
        return c;
    }
    c.bandwidth = scaleOutSeconds(ringBytes, g, env);
    double hopSum = 0;
    int crossings = 0;
    const std::size_t k = g.sites.size();
    if (k > 1) {
        for (std::size_t i = 0; i < k; ++i) {
            const Location a = g.sites[i].loc;
            const Location b = g.sites[(i + 1) % k].loc;
            const bool cast = codec.cast() && a.building != b.building;
            phase.add(a, b, groups * ringBytes * (cast ? codec.factor() : 1.0), groups);
            hopSum += env.routeStep(phase.routeLatency(a, b));
            ++crossings;
            c.compressed = c.compressed || cast;
        }
    }
    // A GPU at a building boundary encodes the ring's bytes it sends over
    // it and decodes what it receives.
    if (c.compressed)
        c.codec = codec.castPasses(ringBytes / codec.e);
    hopSum += (n - crossings) * env.localStep();
    // Pipelined ring: a chunk travels around the ring f times (n-1)/n.
    c.latency = f * (n - 1) / n * hopSum;
    return c;
}

// NCCL-style double binary tree: ~S per direction across every boundary
// between consecutive sites, log-depth latency.
Cost tree(TrafficPhase& phase, const GroupSpread& g, CollectiveKind kind, double S, double groups,
          const CollectiveEnv& env, const Codec& codec) {
    const int n = g.members;
    const double f = kindFactor(kind);
    Cost c;
    const double depth = std::ceil(std::log2(std::max(2, n)));
    if (g.single_host) {
        c.bandwidth = f * S / env.nvlink_bps;
        c.latency = f * depth * env.nvlinkStep();
        return c;
    }
    c.bandwidth = scaleOutSeconds(f * S, g, env);
    double maxCross = 0;
    for (std::size_t i = 0; i + 1 < g.sites.size(); ++i) {
        const Location a = g.sites[i].loc;
        const Location b = g.sites[i + 1].loc;
        const bool cast = codec.cast() && a.building != b.building;
        const double bytes = groups * f / 2 * S * (cast ? codec.factor() : 1.0);
        phase.add(a, b, bytes, 2 * groups);
        phase.add(b, a, bytes, 2 * groups);
        maxCross = std::max(maxCross, phase.routeLatency(a, b));
        c.compressed = c.compressed || cast;
    }
    // Each direction of a boundary carries f S / 2 of a GPU's buffer.
    if (c.compressed)
        c.codec = codec.castPasses(f / 2 * S / codec.e);
    const double bDepth = std::ceil(std::log2(std::max(1, g.buildings))) + (g.sites.size() > 1);
    c.latency = f * (depth * env.localStep() + bDepth * maxCross);
    return c;
}

// Hierarchical: inside each building a ring reduce-scatter, across
// buildings a ring all-reduce of each shard, then an all-gather inside.
Cost hierarchical(TrafficPhase& phase, const GroupSpread& g, CollectiveKind kind, double S,
                  double groups, const CollectiveEnv& env, const Codec& codec) {
    if (g.buildings < 2)
        return ring(phase, g, kind, S, groups, env, codec);
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
    c.bandwidth = scaleOutSeconds(f * (nMax - 1) / std::max(1, nMax) * S, g, env);
    c.latency = f * localHops;
    // Across buildings: n_min shard rings of k members, each S / n_min.
    const int k = int(bs.size());
    const double shard = S / nMin;
    // Per member of a shard ring: the bytes it sends across, and the ring's
    // steps (a ring all-reduce 2(k-1), reduce-scatter or all-gather k-1).
    double perMember = f * (k - 1) / k * shard;
    double steps = f * (k - 1);
    if (codec.topk) {
        // Top-k: an all-gather of every building's (value, index) pairs of
        // its shard, k-1 ring steps; a reduce-scatter sends each piece's
        // pairs to its owner, (k-1)/k of them.
        const double elements = shard / codec.e;
        const double pairs = codec.topk->topk_ratio * elements * (codec.e + kTopkIndexBytes);
        perMember = (kind == CollectiveKind::AllReduce ? (k - 1) : double(k - 1) / k) * pairs;
        steps = k - 1;
        c.codec = elements * topkCodecBytesPerElement(kind, k, codec.e, codec.topk->topk_ratio,
                                                      codec.topk->error_feedback);
        c.residual = codec.topk->error_feedback ? elements : 0;
        c.compressed = true;
    } else if (codec.cast()) {
        c.codec = codec.castPasses(perMember / codec.e);
        perMember *= codec.factor();
        c.compressed = true;
    }
    const double crossBytes = perMember * nMin;
    double wan = 0;
    for (int i = 0; i < k; ++i) {
        const Location a = g.sites[bs[std::size_t(i)].first].loc;
        const Location b = g.sites[bs[std::size_t((i + 1) % k)].first].loc;
        phase.add(a, b, groups * crossBytes, groups * nMin);
        wan = std::max(wan, env.routeStep(phase.routeLatency(a, b)));
    }
    c.bandwidth += perMember / env.nic_bps;
    c.latency += steps * wan;
    return c;
}

Cost run(TrafficPhase& phase, const GroupSpread& g, CollectiveKind kind, CollectiveAlgo algo,
         double S, double groups, const CollectiveEnv& env, const Codec& codec) {
    switch (algo) {
    case CollectiveAlgo::Tree:
        return tree(phase, g, kind, S, groups, env, codec);
    case CollectiveAlgo::Hierarchical:
        return hierarchical(phase, g, kind, S, groups, env, codec);
    default:
        return ring(phase, g, kind, S, groups, env, codec);
    }
}

} // namespace

double castWireBytes(CompressionMethod m) {
    switch (m) {
    case CompressionMethod::Bf16:
        return 2;
    case CompressionMethod::Fp8:
        return 1 + kFp8ScaleBytes / kFp8BlockValues;
    case CompressionMethod::TopK:
        break;
    }
    return 0;
}

double topkCodecBytesPerElement(CollectiveKind kind, int k, double e, double ratio,
                                bool errorFeedback) {
    const double pair = e + kTopkIndexBytes;
    // Error feedback: acc = gradient + residual (read two, write one).
    const double feedback = errorFeedback ? 3 * e : 0;
    // Two passes over acc: one finds the k-th largest magnitude (a radix-
    // select histogram, or DGC's sampled threshold refined once), one
    // writes the pairs above it and, with error feedback, the residual
    // (acc with the sent entries zeroed).
    const double select = e + (e + ratio * pair + (errorFeedback ? e : 0));
    // Decoding: the dense result is written once and every received pair
    // (own included) is read and added into it (read-modify-write). An
    // all-reduce decodes all k buildings' pairs into the whole shard; a
    // reduce-scatter only its own piece (1/k of the shard, k of r/k pairs).
    const bool all = kind == CollectiveKind::AllReduce;
    const double decode = (all ? e : e / k) + (all ? k * ratio : ratio) * (pair + 2 * e);
    return feedback + select + decode;
}

double collectiveBytesPerMember(CollectiveKind kind, int n, double bytes) {
    if (n <= 1)
        return 0;
    return kindFactor(kind) * (n - 1) / n * bytes;
}

CollectiveCost loadCollective(TrafficPhase& phase, const GroupSpread& g, CollectiveKind kind,
                              CollectiveAlgo algo, double S, double groups,
                              const CollectiveEnv& env, const CrossCompression& compression) {
    CollectiveCost out;
    const Codec codec = codecOf(compression, kind);
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
            const Cost c = run(scratch, g, kind, a, S, groups, env, codec);
            const double t = std::max(c.bandwidth, scratch.drainTime()) + c.latency;
            if (t < best) {
                best = t;
                algo = a;
            }
        }
    }
    const Cost c = run(phase, g, kind, algo, S, groups, env, codec);
    out.bandwidth_s = c.bandwidth;
    out.latency_s = c.latency;
    out.algo = algo;
    out.codec_hbm_bytes = c.codec;
    out.residual_elements = c.residual;
    out.compressed = c.compressed;
    return out;
}

} // namespace sa

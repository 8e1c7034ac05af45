#pragma once
// Data-parallel collectives over the real topology: a group's members are
// spread over buildings and zones; ring, tree and hierarchical algorithms
// put different bytes on the shared edges and pay different latencies.
// Alpha-beta costs: Thakur, Rabenseifner & Gropp 2005 (ring, tree); NCCL's
// double binary trees (Sanders et al. 2009); hierarchical all-reduce as in
// NeMo/Megatron multi-datacenter training (reduce-scatter inside each DC,
// all-reduce across DCs on a shard, all-gather inside).

#include "cost/traffic.h"
#include "model/plan.h"

#include <boost/container/small_vector.hpp>

#include <optional>
#include <vector>

namespace sa {

// Where the members of one group sit: (location, member count), sorted by
// building then zone. Members in one location talk over that zone's fabric.
struct GroupSpread {
    struct Site {
        Location loc;
        int members = 0;
        bool operator==(const Site&) const = default;
    };
    // Held inline up to 8 sites (a group rarely spans more zones): building
    // a spread allocates nothing.
    boost::container::small_vector<Site, 8> sites;
    int members = 0;
    int buildings = 0;
    bool single_host = false; // the whole group shares one NVLink domain
    // Members that share one host when the group spans hosts. Each GPU has
    // its own NIC and NCCL spreads its channels' rings over all of them, so
    // the group's traffic between hosts leaves through `per_host` NICs.
    int per_host = 1;
    bool operator==(const GroupSpread&) const = default;
};

enum class CollectiveKind { AllReduce, ReduceScatter, AllGather };

struct CollectiveCost {
    double bandwidth_s = 0; // per-GPU NIC term (the shared edges are added by the phase)
    double latency_s = 0;   // per call (per bucket)
    CollectiveAlgo algo = CollectiveAlgo::Ring;
    // With CrossCompression: bytes the busiest GPU moves through HBM to
    // encode what it sends across buildings and decode what it receives, and
    // the elements of its error-feedback residual (top-k); 0 when nothing
    // crossing a building was compressed.
    double codec_hbm_bytes = 0;
    double residual_elements = 0;
    bool compressed = false;
};

// What a gradient collective sends across buildings (the plan's
// "compression"; docs/COST_MODEL.md, "Compression across buildings"):
// inside a building NCCL runs uncompressed. A cast (bf16, fp8) works for
// any algorithm: the bytes on building-crossing ring or tree edges become
// castWireBytes per element. Top-k needs the hierarchical algorithm: sparse
// vectors do not add up in a ring, so across buildings each building's
// top-k of its shard is all-gathered (reduce-scatter: sent to the owner of
// each piece) as (value, 32-bit index) pairs.
struct CrossCompression {
    std::optional<Compression> method; // none: uncompressed
    double element_bytes = 4;          // of the uncompressed gradients (Plan::grad_reduce_bytes)
    bool operator==(const CrossCompression&) const = default;
};
// fp8 (E4M3) with one fp32 scale per block of 128 values (DeepSeek-V3
// tech report Sec. 3.3, 1x128 tiles; MS-AMP's per-tensor scaling is coarser).
inline constexpr double kFp8BlockValues = 128;
inline constexpr double kFp8ScaleBytes = 4;
inline constexpr double kTopkIndexBytes = 4; // int32 index per kept value
// Bytes per element on the wire for a cast: bf16 2, fp8 1 + 4/128.
double castWireBytes(CompressionMethod m);
// HBM bytes per shard element of top-k with (or without) error feedback
// across k buildings, of a shard whose elements are `e` bytes, keeping a
// fraction `ratio`: the passes listed in docs/COST_MODEL.md.
double topkCodecBytesPerElement(CollectiveKind kind, int k, double e, double ratio,
                                bool errorFeedback);

// Fabric latency of a hop between two GPUs of one zone (NIC to NIC through
// the leaf), and of a hop inside the NVLink domain, seconds.
inline constexpr double kLocalHopLatency = 2e-6;
inline constexpr double kNvlinkHopLatency = 1e-6;

struct CollectiveEnv {
    double nic_bps = 0;    // per GPU scale-out goodput
    double nvlink_bps = 0; // per GPU scale-up goodput
    double alpha_s = 0;    // per message software/NIC overhead
    // Calibrated step latencies (Building::scale_up_latency_us and
    // scale_out_latency_us), seconds; absent: alpha_s + kNvlinkHopLatency
    // and alpha_s + kLocalHopLatency.
    std::optional<double> nvlink_step_s;
    std::optional<double> local_step_s;

    // One step of a ring inside the NVLink domain; between two GPUs of one
    // zone; over a route of one-way latency `route_s` (a calibrated zone
    // step keeps its measured overhead, the route's extra latency is added).
    double nvlinkStep() const {
        return nvlink_step_s ? *nvlink_step_s : alpha_s + kNvlinkHopLatency;
    }
    double localStep() const { return local_step_s ? *local_step_s : alpha_s + kLocalHopLatency; }
    double routeStep(double route_s) const {
        return local_step_s ? *local_step_s - kLocalHopLatency + route_s : alpha_s + route_s;
    }
    bool operator==(const CollectiveEnv&) const = default;
};

// Loads `groups` identical concurrent groups' bytes onto `phase` and returns
// the per-GPU and latency terms. `bytes` is the per-GPU buffer size S.
// `compression` applies to all-reduce and reduce-scatter only.
CollectiveCost loadCollective(TrafficPhase& phase, const GroupSpread& spread, CollectiveKind kind,
                              CollectiveAlgo algo, double bytes, double groups,
                              const CollectiveEnv& env, const CrossCompression& compression = {});

// Bytes each member sends for a collective of S bytes on n members, per the
// algorithm's definition (for conservation checks): ring all-reduce
// 2(n-1)/n S, reduce-scatter / all-gather (n-1)/n S.
double collectiveBytesPerMember(CollectiveKind kind, int n, double bytes);

} // namespace sa

#pragma once
// Routing between buildings: a cluster's policy, which a plan may override
// (the optimizer tries the policies a user allows).

namespace sa {

// How traffic between two buildings picks its inter-building links
// (docs/COST_MODEL.md, "Routing").
enum class RoutingPolicy {
    ShortestHops,  // fewest links, then lowest latency (routed DCIs: unit link costs)
    LowestLatency, // lowest latency, then fewest links
    Ecmp           // split over the equal-cost paths, by capacity (weighted ECMP)
};
enum class EcmpMetric { Hops, Latency };

inline const char* toString(RoutingPolicy p) {
    switch (p) {
    case RoutingPolicy::ShortestHops:
        return "shortest-hops";
    case RoutingPolicy::LowestLatency:
        return "lowest-latency";
    case RoutingPolicy::Ecmp:
        return "ecmp";
    }
    return "shortest-hops";
}
inline const char* toString(EcmpMetric m) {
    return m == EcmpMetric::Latency ? "latency" : "hops";
}

struct Routing {
    RoutingPolicy policy = RoutingPolicy::ShortestHops;
    EcmpMetric ecmp_metric = EcmpMetric::Hops;
    // Latency metric: paths within (1 + tolerance) x the best latency are equal.
    double ecmp_tolerance = 0;

    bool operator==(const Routing&) const = default;
};

} // namespace sa

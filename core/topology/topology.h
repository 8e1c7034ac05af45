#pragma once
// The cluster as a graph (Boost.Graph): zones, building spines, building
// aggregation points, and the inter-building links between them. Routes
// between any two GPU locations come with their hops, bottleneck bandwidth,
// total latency and the edges they use.

#include "model/cluster.h"

#include <cassert>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace sa {

// Where a GPU sits: building index in Cluster::buildings and zone inside it.
struct Location {
    int building = 0;
    int zone = 0;
    bool operator==(const Location&) const = default;
};

enum class EdgeKind {
    ZoneUplink,     // a zone's uplinks to its building spine (zone oversubscription)
    BuildingUplink, // a building spine to its aggregation layer (building oversubscription)
    InterBuilding   // a link of the cluster document between two buildings
};

struct TopoEdge {
    int id = 0;
    EdgeKind kind = EdgeKind::InterBuilding;
    std::string name;          // "B1/zone3", "B1/uplink", or the link's name
    int building = -1;         // for uplinks
    int zone = -1;             // for zone uplinks
    int link = -1;             // index into Cluster::links for inter-building edges
    double bandwidth_gbps = 0; // aggregate capacity, one direction
    double latency_ms = 0;
};

struct Route {
    int hops = 0;               // edges traversed
    double bottleneck_gbps = 0; // smallest edge capacity on the route (0 = no route)
    double latency_ms = 0;      // sum of edge latencies plus intra-fabric latency
    std::vector<int> edges;     // edge ids, in order from source to destination
    bool reachable = true;
    double fraction = 1; // share of the pair's traffic on this path (ECMP splits)
};

// Bound on the equal-cost paths kept per building pair under ECMP routing
// (the cheapest ones; routers' ECMP groups hold 16-64 next hops).
inline constexpr int kMaxEcmpPaths = 16;

class Topology {
public:
    explicit Topology(const Cluster& cluster);

    const std::vector<TopoEdge>& edges() const { return edges_; }
    int buildingCount() const { return static_cast<int>(zoneCounts_.size()); }
    int zoneCount(int building) const { return zoneCounts_.at(building); }

    // Route between two GPU locations. Same zone: no edges (the zone is
    // non-blocking); same building: two zone uplinks; otherwise zone uplink,
    // building uplink, the cheapest path of inter-building links, and back down.
    Route route(Location a, Location b) const;
    // Inter-building part only: the primary (cheapest) path under the
    // cluster's routing policy (Cluster::routing).
    const Route& buildingRoute(int a, int b) const { return buildingRoutes_[pairIndex(a, b)]; }
    // Every path the pair's traffic takes, with the fraction each carries
    // (summing to 1); the primary path first. One path unless the policy is
    // ECMP and the pair has several equal-cost paths.
    std::span<const Route> buildingPaths(int a, int b) const {
        const std::size_t i = pairIndex(a, b);
        if (pathBegin_.empty() || pathBegin_[i] == pathBegin_[i + 1])
            return {&buildingRoutes_[i], 1};
        return {paths_.data() + pathBegin_[i], std::size_t(pathBegin_[i + 1] - pathBegin_[i])};
    }

    // Edge ids for convenience.
    int zoneUplink(int building, int zone) const {
        if (building < 0 || building >= buildingCount() || zone < 0 ||
            zone >= zoneCounts_[std::size_t(building)])
            return -1;
        return zoneEdgeBase_[std::size_t(building)] + zone;
    }
    int buildingUplink(int building) const {
        if (building < 0 || building >= buildingCount())
            return -1;
        return buildingUplinkEdge_[std::size_t(building)];
    }

private:
    std::size_t pairIndex(int a, int b) const {
        const int n = buildingCount();
        assert(a >= 0 && a < n && b >= 0 && b < n);
        return static_cast<std::size_t>(a) * std::size_t(n) + std::size_t(b);
    }
    // The constructor's steps; the three that add edges run in id order.
    int countZones(const Cluster& cluster); // returns the zones of all buildings
    void addZoneUplinks(const Cluster& cluster);
    void addBuildingUplinks(const Cluster& cluster);
    void addInterBuildingLinks(const Cluster& cluster);
    void addSameZoneRoutes(const Cluster& cluster);

    std::vector<TopoEdge> edges_;
    std::vector<int> zoneCounts_;
    std::vector<int> zoneEdgeBase_; // first zone-uplink edge id per building
    std::vector<int> buildingUplinkEdge_;
    std::vector<Route> buildingRoutes_; // n x n primary paths, then same-zone routes
    // ECMP only: the pair a * n + b's paths are paths_[pathBegin_[i], pathBegin_[i + 1]);
    // an empty range means the primary path alone. Empty without ECMP.
    std::vector<Route> paths_;
    std::vector<std::uint32_t> pathBegin_;
    std::vector<double> fabricLatencyMs_; // per building, a few switch hops
};

} // namespace sa

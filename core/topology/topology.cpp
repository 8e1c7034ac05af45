#include "topology/topology.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/property_map.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace sa {

namespace {

// Switch latency inside a building. A cut-through Ethernet switch forwards in
// well under a microsecond; NIC, serialisation and cabling bring a hop to
// about 1 µs. The figures below count the switch tiers a message crosses:
//   same zone:      GPU -> ToR -> zone spine -> ToR -> GPU         ~2 µs
//   across zones:   ToR, zone spine, building spine, zone spine, ToR ~5 µs
//   to aggregation: ToR, zone spine, building spine, aggregation   ~4 µs per side
// Every intermediate building on a multi-hop inter-building path adds one
// aggregation switch. These microseconds are noise beside a 10 ms long-haul
// link but not beside a sub-millisecond campus link or an NVLink-free TP group.
constexpr double kSwitchHopMs = 0.001;
constexpr double kSameZoneLatencyMs = 2 * kSwitchHopMs;
constexpr double kCrossZoneLatencyMs = 5 * kSwitchHopMs;
constexpr double kToAggregationLatencyMs = 4 * kSwitchHopMs;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct EdgeProps {
    int id = 0;
    double latency_ms = 0;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                    boost::no_property, EdgeProps>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using GraphEdge = boost::graph_traits<Graph>::edge_descriptor;

// Path cost for Dijkstra: latency first, hop count breaks ties (a direct link
// beats a two-hop path of the same total latency: fewer switches, fewer
// links to share).
struct PathCost {
    double latency_ms = 0;
    int hops = 0;
};

struct PathCostLess {
    bool operator()(const PathCost& a, const PathCost& b) const {
        // Latencies summed in a different order may differ in the last bits;
        // treat them as equal so that the hop count decides.
        const double tol = 1e-12 * std::max(1.0, std::abs(a.latency_ms) + std::abs(b.latency_ms));
        if (std::abs(a.latency_ms - b.latency_ms) > tol || std::isinf(a.latency_ms) ||
            std::isinf(b.latency_ms)) {
            return a.latency_ms < b.latency_ms;
        }
        return a.hops < b.hops;
    }
};

struct PathCostPlus {
    PathCost operator()(const PathCost& d, double latency_ms) const {
        if (std::isinf(d.latency_ms)) {
            return d; // saturate: infinity stays infinity
        }
        return {d.latency_ms + latency_ms, d.hops + 1};
    }
};

// Only the inter-building links take part in building-to-building routing:
// zone and spine vertices hang off their aggregation vertex as dead ends.
struct InterBuildingOnly {
    const Graph* graph = nullptr;
    const std::vector<TopoEdge>* edges = nullptr;
    bool operator()(const GraphEdge& e) const {
        return (*edges)[(*graph)[e].id].kind == EdgeKind::InterBuilding;
    }
};

// Records the edge that last improved each vertex; with parallel links
// between two buildings a vertex predecessor would not say which one.
struct PredecessorEdgeRecorder : boost::default_dijkstra_visitor {
    std::vector<int>* predEdge = nullptr;
    template <class E, class G> void edge_relaxed(const E& e, const G& g) const {
        (*predEdge)[boost::target(e, g)] = g[e].id;
    }
};

double atLeastOne(double x) {
    // An oversubscription below 1 would give a zone more uplink than its GPUs
    // can inject; the NICs are the limit then.
    return x >= 1 ? x : 1.0;
}

} // namespace

// Layout of the edge ids (edges_[i].id == i):
//   [0, Z)            zone uplinks, building by building, zone by zone
//   [Z, Z + n)        building uplinks, one per building
//   [Z + n, ...)      inter-building links, in Cluster::links order (links
//                     whose ends do not name two different buildings are skipped)
// buildingRoutes_ holds the precomputed routes: n x n inter-building routes,
// then one same-zone route per zone, indexed by the zone's uplink edge id.
// route() then only copies or concatenates precomputed pieces.
Topology::Topology(const Cluster& cluster) {
    const int n = static_cast<int>(cluster.buildings.size());
    zoneCounts_.resize(n);
    zoneEdgeBase_.resize(n);
    buildingUplinkEdge_.resize(n);
    fabricLatencyMs_.assign(n, kToAggregationLatencyMs);

    int totalZones = 0;
    for (int b = 0; b < n; ++b) {
        const auto zones = std::max<std::int64_t>(1, cluster.buildings[b].zones());
        zoneCounts_[b] = static_cast<int>(zones);
        zoneEdgeBase_[b] = totalZones;
        totalZones += zoneCounts_[b];
    }

    // Vertices: per building its zones, then its spine, then its aggregation.
    std::vector<Vertex> spineVertex(n), aggVertex(n);
    std::vector<Vertex> zoneVertexBase(n);
    Graph g(static_cast<std::size_t>(totalZones + 2 * n));
    {
        Vertex next = 0;
        for (int b = 0; b < n; ++b) {
            zoneVertexBase[b] = next;
            next += zoneCounts_[b];
            spineVertex[b] = next++;
            aggVertex[b] = next++;
        }
    }

    edges_.reserve(totalZones + n + cluster.links.size());
    std::vector<double> fullZoneCapacity(totalZones);
    buildingRoutes_.resize(static_cast<std::size_t>(n) * n + totalZones);

    for (int b = 0; b < n; ++b) {
        const Building& bd = cluster.buildings[b];
        const std::int64_t zoneGpus = bd.zone_gpus > 0 ? bd.zone_gpus : bd.gpus;
        const double zoneOver = atLeastOne(bd.zone_oversubscription);
        for (int z = 0; z < zoneCounts_[b]; ++z) {
            // The last zone may be partial: it has only the GPUs left over.
            const std::int64_t gpus =
                std::max<std::int64_t>(0, std::min(zoneGpus, bd.gpus - zoneGpus * z));
            const double nonBlocking = double(gpus) * bd.scale_out_gbps;
            TopoEdge e;
            e.id = static_cast<int>(edges_.size());
            e.kind = EdgeKind::ZoneUplink;
            e.name = bd.name + "/zone" + std::to_string(z);
            e.building = b;
            e.zone = z;
            e.bandwidth_gbps = nonBlocking / zoneOver;
            boost::add_edge(zoneVertexBase[b] + z, spineVertex[b], EdgeProps{e.id, 0.0}, g);

            // Inside a zone the fabric is non-blocking (full bisection), so
            // the zone's aggregate injection rate is what limits it.
            Route& local = buildingRoutes_[static_cast<std::size_t>(n) * n + e.id];
            local.hops = 0;
            local.bottleneck_gbps = nonBlocking;
            local.latency_ms = kSameZoneLatencyMs;
            local.reachable = true;
            edges_.push_back(std::move(e));
        }
    }
    for (int b = 0; b < n; ++b) {
        const Building& bd = cluster.buildings[b];
        TopoEdge e;
        e.id = static_cast<int>(edges_.size());
        e.kind = EdgeKind::BuildingUplink;
        e.name = bd.name + "/uplink";
        e.building = b;
        // Each tier divides by its own oversubscription: the spine gets
        // 1/zone_oversubscription of the GPUs' NIC rate, and the aggregation
        // layer 1/building_oversubscription of that.
        e.bandwidth_gbps =
            double(bd.gpus) * bd.scale_out_gbps /
            (atLeastOne(bd.zone_oversubscription) * atLeastOne(bd.building_oversubscription));
        buildingUplinkEdge_[b] = e.id;
        boost::add_edge(spineVertex[b], aggVertex[b], EdgeProps{e.id, 0.0}, g);
        edges_.push_back(std::move(e));
    }
    for (std::size_t li = 0; li < cluster.links.size(); ++li) {
        const Link& l = cluster.links[li];
        const int a = cluster.buildingIndex(l.a);
        const int b = cluster.buildingIndex(l.b);
        if (a < 0 || b < 0 || a == b) {
            continue; // validation reports these; the graph just leaves them out
        }
        TopoEdge e;
        e.id = static_cast<int>(edges_.size());
        e.kind = EdgeKind::InterBuilding;
        e.name = l.name.empty() ? l.a + "-" + l.b : l.name;
        e.link = static_cast<int>(li);
        e.bandwidth_gbps = l.bandwidth_gbps;
        e.latency_ms = std::max(0.0, l.latency_ms);
        boost::add_edge(aggVertex[a], aggVertex[b], EdgeProps{e.id, e.latency_ms}, g);
        edges_.push_back(std::move(e));
    }

    // All-pairs inter-building routes: one Dijkstra per building over the
    // aggregation vertices and the links between them.
    InterBuildingOnly onlyLinks{&g, &edges_};
    boost::filtered_graph<Graph, InterBuildingOnly> links(g, onlyLinks);
    const std::size_t vertexCount = boost::num_vertices(g);
    std::vector<PathCost> dist(vertexCount);
    std::vector<Vertex> pred(vertexCount);
    std::vector<int> predEdge(vertexCount);
    std::vector<int> path;
    auto index = boost::get(boost::vertex_index, g);
    auto weight = boost::get(&EdgeProps::latency_ms, g);
    for (int src = 0; src < n; ++src) {
        std::fill(predEdge.begin(), predEdge.end(), -1);
        PredecessorEdgeRecorder recorder;
        recorder.predEdge = &predEdge;
        boost::dijkstra_shortest_paths(
            links, aggVertex[src],
            boost::predecessor_map(boost::make_iterator_property_map(pred.begin(), index))
                .distance_map(boost::make_iterator_property_map(dist.begin(), index))
                .weight_map(weight)
                .distance_compare(PathCostLess{})
                .distance_combine(PathCostPlus{})
                .distance_inf(PathCost{kInfinity, std::numeric_limits<int>::max()})
                .distance_zero(PathCost{0.0, 0})
                .visitor(recorder));

        for (int dst = 0; dst < n; ++dst) {
            Route& r = buildingRoutes_[static_cast<std::size_t>(src) * n + dst];
            if (dst == src) {
                // Nothing between a building and itself constrains traffic.
                r.hops = 0;
                r.bottleneck_gbps = kInfinity;
                r.latency_ms = 0;
                r.reachable = true;
                continue;
            }
            const PathCost& d = dist[aggVertex[dst]];
            if (std::isinf(d.latency_ms)) {
                r.hops = 0;
                r.bottleneck_gbps = 0;
                r.latency_ms = 0;
                r.reachable = false;
                continue;
            }
            path.clear();
            double bottleneck = kInfinity;
            for (Vertex v = aggVertex[dst]; v != aggVertex[src];) {
                const int id = predEdge[v];
                assert(id >= 0);
                path.push_back(id);
                bottleneck = std::min(bottleneck, edges_[id].bandwidth_gbps);
                v = pred[v];
            }
            std::reverse(path.begin(), path.end());
            r.edges = path;
            r.hops = static_cast<int>(path.size());
            r.bottleneck_gbps = bottleneck;
            r.latency_ms = d.latency_ms;
            r.reachable = true;
        }
    }
}

// Why the pieces:
// - Same zone: the zone is a non-blocking leaf-spine pod, so no shared edge
//   is crossed; the pod's aggregate injection rate bounds the traffic.
// - Same building, other zone: traffic leaves through the source zone's
//   oversubscribed uplinks and enters through the destination's; the building
//   spine itself is not modelled as a bottleneck (its oversubscription is on
//   the zone uplinks).
// - Other building: it also crosses both buildings' spine-to-aggregation
//   uplinks (building oversubscription) and the inter-building links of the
//   lowest-latency path.
Route Topology::route(Location a, Location b) const {
    Route r;
    const int za = zoneUplink(a.building, a.zone);
    const int zb = zoneUplink(b.building, b.zone);
    if (za < 0 || zb < 0) {
        r.reachable = false;
        return r;
    }
    const int n = buildingCount();
    if (a.building == b.building) {
        if (a.zone == b.zone) {
            return buildingRoutes_[static_cast<std::size_t>(n) * n + za];
        }
        r.edges = {za, zb};
        r.hops = 2;
        r.bottleneck_gbps = std::min(edges_[za].bandwidth_gbps, edges_[zb].bandwidth_gbps);
        r.latency_ms = kCrossZoneLatencyMs;
        return r;
    }

    const Route& across = buildingRoute(a.building, b.building);
    if (!across.reachable) {
        r.reachable = false;
        return r;
    }
    const int ua = buildingUplinkEdge_[a.building];
    const int ub = buildingUplinkEdge_[b.building];
    r.edges.reserve(across.edges.size() + 4);
    r.edges.push_back(za);
    r.edges.push_back(ua);
    r.edges.insert(r.edges.end(), across.edges.begin(), across.edges.end());
    r.edges.push_back(ub);
    r.edges.push_back(zb);
    r.hops = static_cast<int>(r.edges.size());
    r.bottleneck_gbps =
        std::min({edges_[za].bandwidth_gbps, edges_[ua].bandwidth_gbps, across.bottleneck_gbps,
                  edges_[ub].bandwidth_gbps, edges_[zb].bandwidth_gbps});
    r.latency_ms = across.latency_ms + fabricLatencyMs_[a.building] + fabricLatencyMs_[b.building] +
                   (across.hops - 1) * kSwitchHopMs;
    return r;
}

} // namespace sa

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

// The last zone may be partial: it has only the GPUs left over.
std::int64_t zoneGpuCount(const Building& bd, int zone) {
    const std::int64_t zoneGpus = bd.zone_gpus > 0 ? bd.zone_gpus : bd.gpus;
    return std::max<std::int64_t>(0, std::min(zoneGpus, bd.gpus - zoneGpus * zone));
}

// What a zone's GPUs inject at once: the zone uplink's capacity before
// oversubscription, and the limit of traffic that stays inside the zone.
double zoneInjectionGbps(const Building& bd, int zone) {
    return double(zoneGpuCount(bd, zone)) * bd.scale_out_gbps;
}

int vertexCount(const std::vector<int>& zoneCounts) {
    int n = 0;
    for (int zones : zoneCounts)
        n += zones + 2;
    return n;
}

// The edge list as a graph for Dijkstra. Vertices: per building its zones,
// then its spine, then its aggregation. Edges are added in id order, the
// order Dijkstra relaxes them in, so that ties between equal paths always
// resolve the same way.
struct FabricGraph {
    FabricGraph(const Cluster& cluster, const std::vector<int>& zoneCounts,
                const std::vector<TopoEdge>& edges)
        : graph(static_cast<std::size_t>(vertexCount(zoneCounts)))
        , zoneBase(zoneCounts.size())
        , spine(zoneCounts.size())
        , aggregation(zoneCounts.size()) {
        Vertex next = 0;
        for (std::size_t b = 0; b < zoneCounts.size(); ++b) {
            zoneBase[b] = next;
            next += zoneCounts[b];
            spine[b] = next++;
            aggregation[b] = next++;
        }
        for (const TopoEdge& e : edges)
            addEdge(cluster, e);
    }

    void addEdge(const Cluster& cluster, const TopoEdge& e) {
        switch (e.kind) {
        case EdgeKind::ZoneUplink:
            boost::add_edge(zoneBase[e.building] + e.zone, spine[e.building], EdgeProps{e.id, 0.0},
                            graph);
            break;
        case EdgeKind::BuildingUplink:
            boost::add_edge(spine[e.building], aggregation[e.building], EdgeProps{e.id, 0.0},
                            graph);
            break;
        case EdgeKind::InterBuilding: {
            const Link& l = cluster.links[std::size_t(e.link)];
            boost::add_edge(aggregation[cluster.buildingIndex(l.a)],
                            aggregation[cluster.buildingIndex(l.b)], EdgeProps{e.id, e.latency_ms},
                            graph);
            break;
        }
        }
    }

    Graph graph;
    std::vector<Vertex> zoneBase, spine, aggregation; // per building
};

// Dijkstra's answer from one source, kept between sources to reuse storage.
struct ShortestPathTree {
    explicit ShortestPathTree(std::size_t vertices)
        : dist(vertices)
        , pred(vertices)
        , predEdge(vertices) {}
    std::vector<PathCost> dist;
    std::vector<Vertex> pred;
    std::vector<int> predEdge;
};

template <class LinkGraph>
void shortestPathsFrom(const LinkGraph& links, const Graph& g, Vertex source,
                       ShortestPathTree& tree) {
    std::fill(tree.predEdge.begin(), tree.predEdge.end(), -1);
    PredecessorEdgeRecorder recorder;
    recorder.predEdge = &tree.predEdge;
    auto index = boost::get(boost::vertex_index, g);
    auto weight = boost::get(&EdgeProps::latency_ms, g);
    boost::dijkstra_shortest_paths(
        links, source,
        boost::predecessor_map(boost::make_iterator_property_map(tree.pred.begin(), index))
            .distance_map(boost::make_iterator_property_map(tree.dist.begin(), index))
            .weight_map(weight)
            .distance_compare(PathCostLess{})
            .distance_combine(PathCostPlus{})
            .distance_inf(PathCost{kInfinity, std::numeric_limits<int>::max()})
            .distance_zero(PathCost{0.0, 0})
            .visitor(recorder));
}

// Walks the predecessor edges back from dst: the edge that improved a
// vertex last, not the vertex, says which of two parallel links was taken.
Route routeTo(Vertex source, Vertex dst, const ShortestPathTree& tree,
              const std::vector<TopoEdge>& edges) {
    Route r;
    const PathCost& d = tree.dist[dst];
    if (std::isinf(d.latency_ms)) {
        r.hops = 0;
        r.bottleneck_gbps = 0;
        r.latency_ms = 0;
        r.reachable = false;
        return r;
    }
    double bottleneck = kInfinity;
    for (Vertex v = dst; v != source;) {
        const int id = tree.predEdge[v];
        assert(id >= 0);
        r.edges.push_back(id);
        bottleneck = std::min(bottleneck, edges[id].bandwidth_gbps);
        v = tree.pred[v];
    }
    std::reverse(r.edges.begin(), r.edges.end());
    r.hops = static_cast<int>(r.edges.size());
    r.bottleneck_gbps = bottleneck;
    r.latency_ms = d.latency_ms;
    r.reachable = true;
    return r;
}

// All-pairs inter-building routes (n x n, row = source): one Dijkstra per
// building over the aggregation vertices and the links between them.
std::vector<Route> interBuildingRoutes(FabricGraph& fabric, const std::vector<TopoEdge>& edges) {
    const std::size_t n = fabric.aggregation.size();
    std::vector<Route> routes(n * n);
    InterBuildingOnly onlyLinks{&fabric.graph, &edges};
    boost::filtered_graph<Graph, InterBuildingOnly> links(fabric.graph, onlyLinks);
    ShortestPathTree tree(boost::num_vertices(fabric.graph));
    for (std::size_t src = 0; src < n; ++src) {
        shortestPathsFrom(links, fabric.graph, fabric.aggregation[src], tree);
        for (std::size_t dst = 0; dst < n; ++dst) {
            Route& r = routes[src * n + dst];
            if (dst == src) {
                // Nothing between a building and itself constrains traffic.
                r.hops = 0;
                r.bottleneck_gbps = kInfinity;
                r.latency_ms = 0;
                r.reachable = true;
                continue;
            }
            r = routeTo(fabric.aggregation[src], fabric.aggregation[dst], tree, edges);
        }
    }
    return routes;
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
    fabricLatencyMs_.assign(n, kToAggregationLatencyMs);
    const int totalZones = countZones(cluster);
    edges_.reserve(totalZones + n + cluster.links.size());
    addZoneUplinks(cluster);
    addBuildingUplinks(cluster);
    addInterBuildingLinks(cluster);

    FabricGraph fabric(cluster, zoneCounts_, edges_);
    buildingRoutes_ = interBuildingRoutes(fabric, edges_);
    addSameZoneRoutes(cluster);
}

int Topology::countZones(const Cluster& cluster) {
    const std::size_t n = cluster.buildings.size();
    zoneCounts_.resize(n);
    zoneEdgeBase_.resize(n);
    int totalZones = 0;
    for (std::size_t b = 0; b < n; ++b) {
        const auto zones = std::max<std::int64_t>(1, cluster.buildings[b].zones());
        zoneCounts_[b] = static_cast<int>(zones);
        zoneEdgeBase_[b] = totalZones;
        totalZones += zoneCounts_[b];
    }
    return totalZones;
}

void Topology::addZoneUplinks(const Cluster& cluster) {
    for (int b = 0; b < buildingCount(); ++b) {
        const Building& bd = cluster.buildings[b];
        const double zoneOver = atLeastOne(bd.zone_oversubscription);
        for (int z = 0; z < zoneCounts_[b]; ++z) {
            TopoEdge e;
            e.id = static_cast<int>(edges_.size());
            e.kind = EdgeKind::ZoneUplink;
            e.name = bd.name + "/zone" + std::to_string(z);
            e.building = b;
            e.zone = z;
            e.bandwidth_gbps = zoneInjectionGbps(bd, z) / zoneOver;
            edges_.push_back(std::move(e));
        }
    }
}

void Topology::addBuildingUplinks(const Cluster& cluster) {
    buildingUplinkEdge_.resize(cluster.buildings.size());
    for (int b = 0; b < buildingCount(); ++b) {
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
        edges_.push_back(std::move(e));
    }
}

void Topology::addInterBuildingLinks(const Cluster& cluster) {
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
        edges_.push_back(std::move(e));
    }
}

// Appended after the n x n inter-building routes, in zone-uplink id order,
// so that route() finds a zone's at n * n + its uplink's id.
void Topology::addSameZoneRoutes(const Cluster& cluster) {
    for (int b = 0; b < buildingCount(); ++b) {
        const Building& bd = cluster.buildings[b];
        for (int z = 0; z < zoneCounts_[b]; ++z) {
            // Inside a zone the fabric is non-blocking (full bisection), so
            // the zone's aggregate injection rate is what limits it.
            Route local;
            local.hops = 0;
            local.bottleneck_gbps = zoneInjectionGbps(bd, z);
            local.latency_ms = kSameZoneLatencyMs;
            local.reachable = true;
            buildingRoutes_.push_back(std::move(local));
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

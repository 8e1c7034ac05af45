#include "topology/topology.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/property_map.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <queue>

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

// Path cost for Dijkstra and the ECMP search: the policy's metric first,
// the other one breaks ties. Latency first (lowest-latency): a direct link
// beats a two-hop path of the same total latency (fewer switches, fewer
// links to share). Hops first (shortest-hops, the default): a routed
// interconnect with unit link costs; of the paths with the fewest links the
// lowest-latency one.
struct PathCost {
    double latency_ms = 0;
    int hops = 0;
};

// Latencies summed in a different order may differ in the last bits; they
// count as equal.
bool sameLatency(double a, double b) {
    if (std::isinf(a) || std::isinf(b))
        return a == b;
    return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(a) + std::abs(b));
}

struct PathCostLess {
    bool hopsFirst = false;
    bool operator()(const PathCost& a, const PathCost& b) const {
        if (hopsFirst) {
            if (a.hops != b.hops)
                return a.hops < b.hops;
            return !sameLatency(a.latency_ms, b.latency_ms) && a.latency_ms < b.latency_ms;
        }
        if (!sameLatency(a.latency_ms, b.latency_ms))
            return a.latency_ms < b.latency_ms;
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
void shortestPathsFrom(const LinkGraph& links, const Graph& g, Vertex source, PathCostLess less,
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
            .distance_compare(less)
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

bool hopsFirst(const Routing& routing) {
    switch (routing.policy) {
    case RoutingPolicy::ShortestHops:
        return true;
    case RoutingPolicy::LowestLatency:
        return false;
    case RoutingPolicy::Ecmp:
        return routing.ecmp_metric == EcmpMetric::Hops;
    }
    return true;
}

// All-pairs inter-building routes (n x n, row = source): one Dijkstra per
// building over the aggregation vertices and the links between them, under
// the routing policy's path order. `dist` (n x n) gets the path costs.
std::vector<Route> interBuildingRoutes(FabricGraph& fabric, const std::vector<TopoEdge>& edges,
                                       PathCostLess less, std::vector<PathCost>* dist) {
    const std::size_t n = fabric.aggregation.size();
    std::vector<Route> routes(n * n);
    if (dist)
        dist->assign(n * n, PathCost{});
    InterBuildingOnly onlyLinks{&fabric.graph, &edges};
    boost::filtered_graph<Graph, InterBuildingOnly> links(fabric.graph, onlyLinks);
    ShortestPathTree tree(boost::num_vertices(fabric.graph));
    for (std::size_t src = 0; src < n; ++src) {
        shortestPathsFrom(links, fabric.graph, fabric.aggregation[src], less, tree);
        for (std::size_t dst = 0; dst < n; ++dst) {
            Route& r = routes[src * n + dst];
            if (dist)
                (*dist)[src * n + dst] =
                    dst == src ? PathCost{} : tree.dist[fabric.aggregation[dst]];
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

// The inter-building links seen from each building, in edge id order.
struct LinkArc {
    int edge = 0;
    int to = 0;
    double latency_ms = 0;
};

std::vector<std::vector<LinkArc>> linkArcs(const Cluster& cluster,
                                           const std::vector<TopoEdge>& edges) {
    std::vector<std::vector<LinkArc>> arcs(cluster.buildings.size());
    for (const TopoEdge& e : edges) {
        if (e.kind != EdgeKind::InterBuilding)
            continue;
        const Link& l = cluster.links[std::size_t(e.link)];
        const int a = cluster.buildingIndex(l.a), b = cluster.buildingIndex(l.b);
        arcs[std::size_t(a)].push_back({e.id, b, e.latency_ms});
        arcs[std::size_t(b)].push_back({e.id, a, e.latency_ms});
    }
    return arcs;
}

// Work bound of one pair's search (partial paths taken off the queue): far
// above what 16 paths need on any real interconnect, it keeps a hostile
// mesh of 1,000 buildings from taking hours.
constexpr int kMaxEcmpExpansions = 1 << 14;

// The equal-cost paths between two buildings, cheapest first: an A* search
// over partial loop-free paths, keyed by cost so far plus the exact
// remaining cost (`dist`, from the Dijkstra runs; links are undirected, so
// dist[dst][v] is v's cost to dst). Goals leave the queue in order of cost,
// so the first kMaxEcmpPaths within the bound are the cheapest ones.
class EcmpSearch {
public:
    EcmpSearch(const std::vector<std::vector<LinkArc>>& arcs, const std::vector<PathCost>& dist,
               const Routing& routing, PathCostLess less)
        : arcs_(arcs)
        , dist_(dist)
        , routing_(routing)
        , less_(less)
        , n_(arcs.size()) {}

    std::vector<Route> paths(int src, int dst, const std::vector<TopoEdge>& edges) {
        std::vector<Route> found;
        const PathCost best = dist_[std::size_t(src) * n_ + std::size_t(dst)];
        if (src == dst || std::isinf(best.latency_ms))
            return found;
        pool_.clear();
        queue_ = {};
        push({src, -1, -1, PathCost{}}, dst, best);
        int expansions = 0;
        while (!queue_.empty() && int(found.size()) < kMaxEcmpPaths &&
               expansions++ < kMaxEcmpExpansions) {
            const int at = queue_.top().state;
            queue_.pop();
            const Partial p = pool_[std::size_t(at)];
            if (p.node == dst) {
                found.push_back(routeOf(at, edges));
                continue;
            }
            for (const LinkArc& arc : arcs_[std::size_t(p.node)])
                if (!onPath(at, arc.to))
                    push({arc.to, at, arc.edge,
                          PathCost{p.cost.latency_ms + arc.latency_ms, p.cost.hops + 1}},
                         dst, best);
        }
        // Weighted ECMP: each path carries traffic in proportion to its
        // capacity (its narrowest link).
        double capacity = 0;
        for (const Route& r : found)
            capacity += r.bottleneck_gbps;
        for (Route& r : found)
            r.fraction = capacity > 0 ? r.bottleneck_gbps / capacity : 1.0 / double(found.size());
        return found;
    }

private:
    struct Partial {
        int node = 0;
        int parent = -1; // index into pool_
        int edge = -1;   // the link from the parent
        PathCost cost;
    };
    struct Queued {
        PathCost key;
        int seq = 0; // first pushed first among equal keys: the order is deterministic
        int state = 0;
    };
    struct QueuedAfter {
        PathCostLess less;
        bool operator()(const Queued& a, const Queued& b) const {
            if (less(a.key, b.key))
                return false;
            if (less(b.key, a.key))
                return true;
            return a.seq > b.seq;
        }
    };

    // Within the ECMP bound: the same hop count as the best path, or a
    // latency at most (1 + ecmp_tolerance) x the best.
    bool withinBound(const PathCost& key, const PathCost& best) const {
        if (routing_.ecmp_metric == EcmpMetric::Hops)
            return key.hops <= best.hops;
        const double bound = (1 + routing_.ecmp_tolerance) * best.latency_ms;
        return key.latency_ms <= bound || sameLatency(key.latency_ms, bound);
    }

    void push(const Partial& p, int dst, const PathCost& best) {
        const PathCost rest = dist_[std::size_t(dst) * n_ + std::size_t(p.node)];
        if (std::isinf(rest.latency_ms))
            return;
        const PathCost key{p.cost.latency_ms + rest.latency_ms, p.cost.hops + rest.hops};
        if (!withinBound(key, best))
            return;
        pool_.push_back(p);
        queue_.push({key, int(pool_.size()) - 1, int(pool_.size()) - 1});
    }

    bool onPath(int at, int node) const {
        for (int i = at; i >= 0; i = pool_[std::size_t(i)].parent)
            if (pool_[std::size_t(i)].node == node)
                return true;
        return false;
    }

    Route routeOf(int at, const std::vector<TopoEdge>& edges) const {
        Route r;
        double bottleneck = kInfinity;
        for (int i = at; pool_[std::size_t(i)].parent >= 0; i = pool_[std::size_t(i)].parent) {
            const int id = pool_[std::size_t(i)].edge;
            r.edges.push_back(id);
            bottleneck = std::min(bottleneck, edges[std::size_t(id)].bandwidth_gbps);
        }
        std::reverse(r.edges.begin(), r.edges.end());
        r.hops = int(r.edges.size());
        r.bottleneck_gbps = bottleneck;
        r.latency_ms = pool_[std::size_t(at)].cost.latency_ms;
        r.reachable = true;
        return r;
    }

    const std::vector<std::vector<LinkArc>>& arcs_;
    const std::vector<PathCost>& dist_;
    const Routing& routing_;
    PathCostLess less_;
    std::size_t n_;
    std::vector<Partial> pool_;
    std::priority_queue<Queued, std::vector<Queued>, QueuedAfter> queue_{QueuedAfter{less_}};
};

// ECMP: every pair's equal-cost paths; the cheapest becomes the pair's
// primary route. Pairs with one path keep an empty range in `paths`.
void ecmpPaths(const Cluster& cluster, const std::vector<TopoEdge>& edges,
               const std::vector<PathCost>& dist, std::vector<Route>& primary,
               std::vector<Route>& paths, std::vector<std::uint32_t>& begin) {
    const std::size_t n = cluster.buildings.size();
    const auto arcs = linkArcs(cluster, edges);
    EcmpSearch search(arcs, dist, cluster.routing, PathCostLess{hopsFirst(cluster.routing)});
    begin.assign(n * n + 1, 0);
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b) {
            const std::size_t i = a * n + b;
            std::vector<Route> found = search.paths(int(a), int(b), edges);
            if (!found.empty())
                primary[i] = found.front();
            if (found.size() > 1)
                for (Route& r : found)
                    paths.push_back(std::move(r));
            begin[i + 1] = std::uint32_t(paths.size());
        }
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
    const PathCostLess less{hopsFirst(cluster.routing)};
    if (cluster.routing.policy != RoutingPolicy::Ecmp) {
        buildingRoutes_ = interBuildingRoutes(fabric, edges_, less, nullptr);
    } else {
        std::vector<PathCost> dist;
        buildingRoutes_ = interBuildingRoutes(fabric, edges_, less, &dist);
        ecmpPaths(cluster, edges_, dist, buildingRoutes_, paths_, pathBegin_);
    }
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

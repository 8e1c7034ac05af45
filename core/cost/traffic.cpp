#include "cost/traffic.h"

#include "cost/network.h"

#include <algorithm>

namespace sa {

const Technology& fabricTechnology() {
    static const Technology roce = *builtinTechnology("roce");
    return roce;
}

std::vector<EdgeTransport> edgeTransports(const Cluster& cluster, const Topology& topo,
                                          const Plan& plan) {
    return edgeTransports(cluster, topo, plan.link_technologies);
}

std::vector<EdgeTransport> edgeTransports(const Cluster& cluster, const Topology& topo,
                                          const std::map<std::string, LinkOverride>& overrides) {
    std::vector<EdgeTransport> out(topo.edges().size());
    for (const TopoEdge& e : topo.edges()) {
        EdgeTransport& t = out[std::size_t(e.id)];
        t.tech = fabricTechnology();
        t.rtt_s = 2.0 * e.latency_ms * 1e-3 + 10e-6;
        // A building's zone and building uplinks: its own fabric, with the
        // efficiency measured on it when the cluster has one.
        if (e.kind != EdgeKind::InterBuilding && e.building >= 0 &&
            std::size_t(e.building) < cluster.buildings.size())
            if (const auto& eff = cluster.buildings[std::size_t(e.building)].scale_out_efficiency)
                t.tech.efficiency = *eff;
        if (e.kind != EdgeKind::InterBuilding || e.link < 0)
            continue;
        const Link& link = cluster.links[std::size_t(e.link)];
        t.from = cluster.buildingIndex(link.a);
        t.to = cluster.buildingIndex(link.b);
        std::string techName = link.technology;
        int flows = 0;
        if (auto it = overrides.find(e.name); it != overrides.end()) {
            if (!it->second.technology.empty())
                techName = it->second.technology;
            flows = it->second.flows;
        }
        if (auto tech = resolveTechnology(cluster, techName))
            t.tech = *tech;
        t.tech.name = techName;
        if (flows > 0)
            t.tech.flows = flows;
    }
    setBackground(cluster, topo, {}, out);
    return out;
}

void setBackground(const Cluster& cluster, const Topology& topo, const std::vector<double>& extra,
                   std::vector<EdgeTransport>& transports) {
    for (const TopoEdge& e : topo.edges()) {
        EdgeTransport& t = transports[std::size_t(e.id)];
        const double own = e.kind == EdgeKind::InterBuilding && e.link >= 0
                               ? cluster.links[std::size_t(e.link)].background_gbps
                               : 0.0;
        for (int dir = 0; dir < 2; ++dir) {
            const std::size_t i = std::size_t(e.id) * 2 + std::size_t(dir);
            t.background_gbps[dir] = own + (i < extra.size() ? extra[i] : 0.0);
        }
    }
}

TrafficPhase::TrafficPhase(const Topology& topo, const std::vector<EdgeTransport>& transport)
    : topo_(topo)
    , transport_(transport)
    , load_(topo.edges().size() * 2, 0.0)
    , conns_(topo.edges().size() * 2, 0.0) {}

template <class F> void TrafficPhase::forEachEdge(Location src, Location dst, F&& f) const {
    // Directed edges from src to dst: up the source zone (and building), the
    // inter-building path walked from the source side, down at the other end.
    if (src.building == dst.building) {
        if (src.zone == dst.zone)
            return;
        f(topo_.zoneUplink(src.building, src.zone), 0);
        f(topo_.zoneUplink(dst.building, dst.zone), 1);
        return;
    }
    f(topo_.zoneUplink(src.building, src.zone), 0);
    f(topo_.buildingUplink(src.building), 0);
    int cur = src.building;
    for (int id : topo_.buildingRoute(src.building, dst.building).edges) {
        const EdgeTransport& t = transport_[std::size_t(id)];
        const int dir = t.from == cur ? 0 : 1;
        cur = dir == 0 ? t.to : t.from;
        f(id, dir);
    }
    f(topo_.buildingUplink(dst.building), 1);
    f(topo_.zoneUplink(dst.building, dst.zone), 1);
}

void TrafficPhase::add(Location src, Location dst, double bytes, double connections) {
    if (bytes <= 0)
        return;
    dirty_ = true;
    forEachEdge(src, dst, [&](int edge, int dir) {
        const std::size_t i = std::size_t(edge) * 2 + std::size_t(dir);
        if (load_[i] == 0 && conns_[i] == 0)
            touched_.push_back(int(i));
        load_[i] += bytes;
        conns_[i] += connections;
    });
}

void TrafficPhase::clear() {
    for (int i : touched_) {
        load_[std::size_t(i)] = 0;
        conns_[std::size_t(i)] = 0;
    }
    touched_.clear();
    dirty_ = true;
}

double TrafficPhase::edgeDrain(int edge, int dir) const {
    if (dirty_) {
        drain_.assign(load_.size(), 0.0);
        for (int i : touched_)
            if (load_[std::size_t(i)] > 0)
                drain_[std::size_t(i)] = load_[std::size_t(i)] / rateBps(i / 2, i % 2);
        dirty_ = false;
    }
    return drain_[std::size_t(edge) * 2 + dir];
}

double TrafficPhase::rateBps(int edge, int dir) const {
    const TopoEdge& e = topo_.edges()[std::size_t(edge)];
    const EdgeTransport& t = transport_[std::size_t(edge)];
    return aggregateRateBps(t.tech, availableGbps(e, t, dir), t.rtt_s,
                            std::max(1.0, conns_[std::size_t(edge) * 2 + dir]));
}

double TrafficPhase::drainTime() const {
    double worst = 0;
    for (int i : touched_)
        worst = std::max(worst, edgeDrain(i / 2, i % 2));
    return worst;
}

double TrafficPhase::routeDrainTime(Location src, Location dst) const {
    double worst = 0;
    forEachEdge(src, dst,
                [&](int edge, int dir) { worst = std::max(worst, edgeDrain(edge, dir)); });
    return worst;
}

namespace {

double drainWith(const TrafficPhase& phase, const TrafficPhase& bg, double scale, int edge,
                 int dir) {
    const double bytes = phase.load(edge, dir);
    if (bytes <= 0)
        return 0;
    const TopoEdge& e = phase.topology().edges()[std::size_t(edge)];
    const EdgeTransport& t = phase.transport()[std::size_t(edge)];
    const double conns = phase.connections(edge, dir) + scale * bg.connections(edge, dir);
    return (bytes + scale * bg.load(edge, dir)) /
           aggregateRateBps(t.tech, availableGbps(e, t, dir), t.rtt_s, std::max(1.0, conns));
}

} // namespace

double TrafficPhase::drainTimeWith(const TrafficPhase& background, double scale) const {
    double worst = 0;
    for (int i : touched_)
        worst = std::max(worst, drainWith(*this, background, scale, i / 2, i % 2));
    return worst;
}

double TrafficPhase::routeDrainTimeWith(const TrafficPhase& background, double scale, Location src,
                                        Location dst) const {
    double worst = 0;
    forEachEdge(src, dst, [&](int edge, int dir) {
        worst = std::max(worst, drainWith(*this, background, scale, edge, dir));
    });
    return worst;
}

double TrafficPhase::routeLatency(Location src, Location dst) const {
    // Fabric: ~1 us per switch tier crossed (same zone: leaf + spine; other
    // zone: + building spine; other building: + aggregation).
    if (src.building == dst.building)
        return src.zone == dst.zone ? 2e-6 : 4e-6;
    const Route& r = topo_.buildingRoute(src.building, dst.building);
    return r.latency_ms * 1e-3 + 6e-6;
}

} // namespace sa

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
            std::size_t(e.building) < cluster.buildings.size()) {
            const Building& b = cluster.buildings[std::size_t(e.building)];
            t.gpus_per_host = std::max(1, b.gpus_per_host);
            if (const auto& eff = b.scale_out_efficiency)
                t.tech.efficiency = *eff;
        }
        if (e.kind != EdgeKind::InterBuilding || e.link < 0)
            continue;
        const Link& link = cluster.links[std::size_t(e.link)];
        t.from = cluster.buildingIndex(link.a);
        t.to = cluster.buildingIndex(link.b);
        for (int bi : {t.from, t.to})
            if (bi >= 0)
                t.gpus_per_host =
                    std::max(t.gpus_per_host, cluster.buildings[std::size_t(bi)].gpus_per_host);
        std::string techName = link.technology;
        const LinkOverride* o = nullptr;
        if (auto it = overrides.find(e.name); it != overrides.end()) {
            o = &it->second;
            if (!o->technology.empty())
                techName = o->technology;
        }
        if (auto tech = resolveTechnology(cluster, techName))
            t.tech = *tech;
        t.tech.name = techName;
        if (o)
            applyLinkOverride(t.tech, *o);
        t.pfc_short = applyPfcHeadroom(t.tech, e.bandwidth_gbps, e.latency_ms * 1e-3);
    }
    for (EdgeTransport& t : out)
        t.transfer_bound_bps = transferBoundBps(t.tech, t.rtt_s, t.gpus_per_host);
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
    , conns_(topo.edges().size() * 2, 0.0) {
    touched_.reserve(load_.size()); // each directed edge is listed once
}

template <class F> void TrafficPhase::forEachEdge(Location src, Location dst, F&& f) const {
    // Directed edges from src to dst: up the source zone (and building), the
    // inter-building paths walked from the source side, down at the other
    // end. f(edge, dir, share): share is the fraction of the transfer on the
    // edge (1 but on the paths of an ECMP split).
    if (src.building == dst.building) {
        if (src.zone == dst.zone)
            return;
        f(topo_.zoneUplink(src.building, src.zone), 0, 1.0);
        f(topo_.zoneUplink(dst.building, dst.zone), 1, 1.0);
        return;
    }
    f(topo_.zoneUplink(src.building, src.zone), 0, 1.0);
    f(topo_.buildingUplink(src.building), 0, 1.0);
    for (const Route& path : topo_.buildingPaths(src.building, dst.building)) {
        int cur = src.building;
        for (int id : path.edges) {
            const EdgeTransport& t = transport_[std::size_t(id)];
            const int dir = t.from == cur ? 0 : 1;
            cur = dir == 0 ? t.to : t.from;
            f(id, dir, path.fraction);
        }
    }
    f(topo_.buildingUplink(dst.building), 1, 1.0);
    f(topo_.zoneUplink(dst.building, dst.zone), 1, 1.0);
}

void TrafficPhase::add(Location src, Location dst, double bytes, double connections) {
    if (bytes <= 0)
        return;
    dirty_ = true;
    // An ECMP split puts each path's share of the bytes and of the
    // connections on its links (a flow hashes onto one path).
    forEachEdge(src, dst, [&](int edge, int dir, double share) {
        const std::size_t i = std::size_t(edge) * 2 + std::size_t(dir);
        if (load_[i] == 0 && conns_[i] == 0)
            touched_.push_back(int(i));
        load_[i] += bytes * share;
        conns_[i] += connections * share;
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
    return aggregateRateFromBoundBps(t.tech, availableGbps(e, t, dir), t.rtt_s,
                                     std::max(1.0, conns_[std::size_t(edge) * 2 + dir]),
                                     t.gpus_per_host, t.transfer_bound_bps);
}

double TrafficPhase::drainTime() const {
    double worst = 0;
    for (int i : touched_)
        worst = std::max(worst, edgeDrain(i / 2, i % 2));
    return worst;
}

double TrafficPhase::routeDrainTime(Location src, Location dst) const {
    double worst = 0;
    // Split over paths: the slowest part (every used edge of every path).
    forEachEdge(src, dst,
                [&](int edge, int dir, double) { worst = std::max(worst, edgeDrain(edge, dir)); });
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
           aggregateRateFromBoundBps(t.tech, availableGbps(e, t, dir), t.rtt_s,
                                     std::max(1.0, conns), t.gpus_per_host, t.transfer_bound_bps);
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
    forEachEdge(src, dst, [&](int edge, int dir, double) {
        worst = std::max(worst, drainWith(*this, background, scale, edge, dir));
    });
    return worst;
}

double TrafficPhase::routeLatency(Location src, Location dst) const {
    // Fabric: ~1 us per switch tier crossed (same zone: leaf + spine; other
    // zone: + building spine; other building: + aggregation).
    if (src.building == dst.building)
        return src.zone == dst.zone ? 2e-6 : 4e-6;
    // Split over paths: the transfer ends with its slowest part, so the
    // latency of the slowest path it uses.
    double latencyMs = 0;
    for (const Route& r : topo_.buildingPaths(src.building, dst.building))
        latencyMs = std::max(latencyMs, r.latency_ms);
    return latencyMs * 1e-3 + 6e-6;
}

} // namespace sa

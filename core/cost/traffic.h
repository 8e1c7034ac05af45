#pragma once
// Link traffic: bytes that a communication phase puts on each directed edge
// of the topology, and how long the phase takes when every group sharing an
// edge shares its bandwidth (max-min bottleneck over the edges).

#include "cost/placement.h"
#include "model/cluster.h"
#include "model/plan.h"
#include "topology/topology.h"

#include <map>
#include <string>
#include <vector>

namespace sa {

// Effective transport on each inter-building edge, after plan overrides.
struct EdgeTransport {
    Technology tech;
    double rtt_s = 0;
    int from = -1; // building indices of the link's endpoints (direction 0 = from -> to)
    int to = -1;
    // GPUs per host at the edge's ends (the more crowded end of a link):
    // a socket profile's host limits are shared by that many transfers.
    int gpus_per_host = 1;
    // The profile's PFC headroom cannot cover the link's RTT: the link runs
    // lossy (Technology::lossy_loss_rate; core/cost/network.h).
    bool pfc_short = false;
    // One transfer's bound on this edge (transferBoundBps: flows x per-flow
    // rate, NCCL staging, host copies), computed once by edgeTransports so
    // the rate of a phase's edges is a min and a product.
    double transfer_bound_bps = 0;
    // Inelastic cross traffic, Gbit/s per direction: the link's own
    // background_gbps plus, for several jobs on one cluster, the other jobs'
    // mean rates (core/cost/jobs.h). The job's transfers get the line minus
    // this; efficiency and window limits apply to what is left.
    double background_gbps[2] = {0, 0};
};

// The line rate left to the job on `edge` in direction `dir`, Gbit/s.
inline double availableGbps(const TopoEdge& edge, const EdgeTransport& t, int dir) {
    return edge.bandwidth_gbps - t.background_gbps[dir];
}
// Sets every edge's background: the cluster links' background_gbps plus
// `extra` ([edge * 2 + dir], Gbit/s; empty: none).
void setBackground(const Cluster& cluster, const Topology& topo, const std::vector<double>& extra,
                   std::vector<EdgeTransport>& transports);

class TrafficPhase {
public:
    TrafficPhase(const Topology& topo, const std::vector<EdgeTransport>& transport);

    // `bytes` from a GPU in `src` to one in `dst`, carried by `connections`
    // concurrent transfers (for the per-flow window limit).
    void add(Location src, Location dst, double bytes, double connections);
    void clear();

    // Time to drain the phase on the shared edges (ignores per-GPU NICs and
    // latency, which the caller adds).
    double drainTime() const;
    // Time for `bytes` over the busiest edge of the route src->dst, given
    // everything loaded in this phase.
    double routeDrainTime(Location src, Location dst) const;
    // The same two while `background` (scaled) shares the edges: the drain
    // of this phase's edges with the other's bytes and connections on them
    // too (P2P activations that flow while a DP collective runs).
    double drainTimeWith(const TrafficPhase& background, double scale) const;
    double routeDrainTimeWith(const TrafficPhase& background, double scale, Location src,
                              Location dst) const;
    double rateBps(int edge, int dir) const;
    double load(int edge, int dir) const { return load_[std::size_t(edge) * 2 + dir]; }
    double connections(int edge, int dir) const { return conns_[std::size_t(edge) * 2 + dir]; }
    // Latency (one way) of the route, seconds, with per-hop fabric latency.
    double routeLatency(Location src, Location dst) const;
    const Topology& topology() const { return topo_; }
    const std::vector<EdgeTransport>& transport() const { return transport_; }

private:
    template <class F> void forEachEdge(Location src, Location dst, F&& f) const;
    const Topology& topo_;
    const std::vector<EdgeTransport>& transport_;
    std::vector<double> load_;  // [edge * 2 + dir]
    std::vector<double> conns_; // [edge * 2 + dir]
    std::vector<int> touched_;
    // Drain time per directed edge, computed once after the last add().
    double edgeDrain(int edge, int dir) const;
    mutable std::vector<double> drain_;
    mutable bool dirty_ = true;
};

// Inter-building edge transports for a cluster and a plan's overrides.
std::vector<EdgeTransport> edgeTransports(const Cluster& cluster, const Topology& topo,
                                          const Plan& plan);
// The same for the link overrides alone (all a plan's transports depend on).
std::vector<EdgeTransport> edgeTransports(const Cluster& cluster, const Topology& topo,
                                          const std::map<std::string, LinkOverride>& overrides);

// Intra-building scale-out technology (zone and building uplinks).
const Technology& fabricTechnology();

} // namespace sa

#pragma once
// Transport technologies on a link and what they can push through it.
//
// A single flow over a long link is window-limited: rate <= window / RTT
// (bandwidth-delay product). A lossy transport is further limited by loss:
// Mathis et al., "The Macroscopic Behavior of the TCP Congestion Avoidance
// Algorithm", CCR 1997: rate <= (MSS / RTT) * C / sqrt(p), C = sqrt(3/2).
// Many flows (or QPs) add up until the line rate times the protocol
// efficiency is reached.
//
// A profile given with NCCL's knobs (Technology::nccl_channels, ...) adds
// NCCL's own bound: one transfer keeps at most its channels' staging
// buffers in flight, channels x NCCL_BUFFSIZE, so its rate <= that / RTT.
// A socket profile's host copies bound it too (cores x Gbit/s per core,
// shared by the host's GPUs), and a RoCE link whose PFC headroom cannot
// cover its RTT drops packets, which RDMA's go-back-N recovery pays for by
// resending what was in flight (Mittal et al., "Revisiting Network Support
// for RDMA", SIGCOMM 2018). Sources and formulas: docs/COST_MODEL.md.

#include "model/cluster.h"
#include "model/plan.h"

#include <optional>
#include <string>

namespace sa {

// NCCL's defaults (src/graph/paths.cc NCHANNELS_PER_NET_PEER, src/transport/
// net_ib IB_QPS_PER_CONNECTION, src/init.cc DEFAULT_BUFFSIZE; the socket
// transport's one data socket and at most MAX_SOCKETS = 64, net_socket.cc).
inline constexpr int kNcclDefaultChannels = 2;
inline constexpr int kNcclDefaultQpsPerConnection = 1;
inline constexpr double kNcclDefaultBuffsizeMib = 4.0;
inline constexpr int kNcclDefaultSocketsPerConnection = 1;
inline constexpr int kNcclMaxSocketsPerConnection = 64;
// What one core moves through the Linux TCP stack with its copies, Gbit/s
// (Cai et al., "Understanding Host Network Stack Overheads", SIGCOMM 2021:
// ~42 Gbit/s for one flow with TSO/GRO, jumbo frames and aRFS): the default
// of host_gbps_per_core when a profile gives host_net_cores.
inline constexpr double kDefaultHostGbpsPerCore = 42.0;

// Built-in profiles: roce, roce-long-haul, tcp, tcp-multiflow, nvlink.
std::optional<Technology> builtinTechnology(const std::string& name);
// The cluster's own profile of that name, else the built-in one.
std::optional<Technology> resolveTechnology(const Cluster& cluster, const std::string& name);

// Whether the profile is given with NCCL's knobs (any of them non-zero).
inline bool usesNcclKnobs(const Technology& tech) {
    return tech.nccl_channels > 0 || tech.qps_per_connection > 0 ||
           tech.sockets_per_connection > 0 || tech.buffsize_mib > 0;
}
// A socket (TCP) transport: sockets_per_connection given.
inline bool isSocketTransport(const Technology& tech) {
    return tech.sockets_per_connection > 0;
}
// An RDMA transport: QPs or a PFC headroom given (its losses are recovered
// by go-back-N, not by TCP's congestion control).
inline bool isRdmaTransport(const Technology& tech) {
    return tech.qps_per_connection > 0 || tech.pfc_headroom_mib > 0;
}
// Flows of one NCCL connection: its QPs or its sockets.
inline int flowsPerConnection(const Technology& tech) {
    return tech.sockets_per_connection > 0
               ? tech.sockets_per_connection
               : (tech.qps_per_connection > 1 ? tech.qps_per_connection : 1);
}
// NCCL channels' flows: nccl_channels x flowsPerConnection.
int ncclFlows(const Technology& tech);
// Fills the knobs a NCCL profile leaves out with NCCL's defaults and sets
// `flows` to channels x QPs (or sockets). A profile without knobs is left
// as it is.
void completeNcclKnobs(Technology& tech);
// Drops the NCCL knobs (the profile keeps its flows and becomes the plain
// window_mib x flows one).
void clearNcclKnobs(Technology& tech);
// Bytes one transfer keeps in flight in NCCL's staging buffers:
// flows / flowsPerConnection channels x buffsize_mib (infinite without knobs).
double stagingBytes(const Technology& tech);

// Bytes per second one flow of `tech` sustains at round-trip time `rtt_s`
// (infinite when neither window nor loss limits it; loss enters through
// Mathis' bound for a non-RDMA transport only).
double perFlowRateBps(const Technology& tech, double rtt_s);

// Goodput in bytes/s of `connections` concurrent transfers (each using
// tech.flows flows) sharing a line of `line_gbps`, the transfers' GPUs
// sitting `gpus_per_host` to a host (for the host limits of a socket
// profile).
double aggregateRateBps(const Technology& tech, double line_gbps, double rtt_s, double connections,
                        int gpus_per_host = 1);

// What of aggregateRateBps scales with the number of transfers: one
// transfer's bound (flows x per-flow rate, NCCL staging, host copies),
// bytes/s (infinite when none binds).
double transferBoundBps(const Technology& tech, double rtt_s, int gpus_per_host = 1);
// aggregateRateBps with that bound computed beforehand (EdgeTransport keeps it).
double aggregateRateFromBoundBps(const Technology& tech, double line_gbps, double rtt_s,
                                 double connections, int gpus_per_host, double transferBound);

// Goodput in bytes/s of ONE transfer (tech.flows flows) that gets at most
// `share_gbps` of the line.
double transferRateBps(const Technology& tech, double share_gbps, double rtt_s,
                       int gpus_per_host = 1);

// PFC headroom a port of `tech` needs on a link of `link_gbps` with one-way
// delay `one_way_s`, bytes: what arrives after the pause is sent, the
// round trip of the wire at the port's rate, plus a maximum frame at each
// end (Cisco, "Priority Flow Control: Build Reliable Layer 2
// Infrastructure"; IEEE 802.1Qbb Annex N).
double pfcHeadroomNeededBytes(const Technology& tech, double link_gbps, double one_way_s);
// Whether the profile's headroom (when given) is short of that.
bool pfcHeadroomShort(const Technology& tech, double link_gbps, double one_way_s);
// The profile as the link runs it: lossy at lossy_loss_rate when its PFC
// headroom is short; true when it is.
bool applyPfcHeadroom(Technology& tech, double link_gbps, double one_way_s);

// A plan's override of a link (Plan::link_technologies) applied to the
// link's profile: NCCL knobs first (they re-derive the flows), then flows.
// The technology name is the caller's to set.
void applyLinkOverride(Technology& tech, const LinkOverride& o);

inline double gbpsToBytesPerS(double gbps) {
    return gbps * 1e9 / 8.0;
}

} // namespace sa

#include "cost/network.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sa {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

Technology make(const char* name, double eff, double windowMib, int flows, double loss,
                bool lossless, double mtu, double perMsgUs) {
    Technology t;
    t.name = name;
    t.efficiency = eff;
    t.window_mib = windowMib;
    t.flows = flows;
    t.loss_rate = loss;
    t.lossless = lossless;
    t.mtu_bytes = mtu;
    t.per_message_us = perMsgUs;
    return t;
}

// A profile in NCCL's terms: channels x (QPs or sockets) flows, `buffsize`
// MiB staged per channel.
Technology nccl(Technology t, int channels, int qps, int sockets, double buffsizeMib) {
    t.nccl_channels = channels;
    t.qps_per_connection = qps;
    t.sockets_per_connection = sockets;
    t.buffsize_mib = buffsizeMib;
    completeNcclKnobs(t);
    return t;
}

} // namespace

std::optional<Technology> builtinTechnology(const std::string& name) {
    // Figures and their sources are listed in docs/COST_MODEL.md ("Network
    // technologies", "NCCL transport knobs"). Each keeps the bytes in flight
    // per transfer it had as a window_mib x flows profile: a flow's share of
    // its channel's staging buffer (buffsize / QPs or sockets) is the old
    // per-flow window.
    // roce: lossless RoCEv2 inside a datacenter; 2 channels x 2 QPs, NCCL's
    // 4 MiB buffers: 8 MiB in flight per transfer, which only bites on long
    // links.
    if (name == "roce")
        return nccl(make("roce", 0.92, 0.0, 4, 0.0, true, 4096, 2.0), 2, 2, 0, 4.0);
    // roce-long-haul: deep-buffer long-haul RoCE, 16 channels x 1 QP with
    // 64 MiB buffers (1 GiB in flight; PFC headroom sized for the distance).
    if (name == "roce-long-haul")
        return nccl(make("roce-long-haul", 0.9, 0.0, 16, 0.0, true, 4096, 4.0), 16, 1, 0, 64.0);
    // tcp: one Linux TCP connection (one channel, one socket), 16 MiB max
    // window, lossy WAN.
    if (name == "tcp")
        return nccl(make("tcp", 0.85, 16.0, 1, 1e-6, false, 9000, 20.0), 1, 0, 1, 16.0);
    // tcp-multiflow: the same with 64 parallel connections (Atlas-style):
    // 2 channels x 32 sockets, 16 MiB staged per socket.
    if (name == "tcp-multiflow")
        return nccl(make("tcp-multiflow", 0.85, 16.0, 64, 1e-6, false, 9000, 20.0), 2, 0, 32,
                    512.0);
    // nvlink: the scale-up domain (NCCL bus bandwidth ~80% of NVLink peak).
    if (name == "nvlink")
        return make("nvlink", 0.8, 0.0, 1, 0.0, true, 4096, 1.0);
    return std::nullopt;
}

std::optional<Technology> resolveTechnology(const Cluster& cluster, const std::string& name) {
    if (auto it = cluster.technologies.find(name); it != cluster.technologies.end()) {
        Technology t = it->second;
        t.name = name;
        return t;
    }
    return builtinTechnology(name);
}

int ncclFlows(const Technology& tech) {
    return std::max(1, tech.nccl_channels) * flowsPerConnection(tech);
}

void completeNcclKnobs(Technology& tech) {
    if (!usesNcclKnobs(tech))
        return;
    if (tech.nccl_channels <= 0)
        tech.nccl_channels = kNcclDefaultChannels;
    if (tech.buffsize_mib <= 0)
        tech.buffsize_mib = kNcclDefaultBuffsizeMib;
    if (tech.sockets_per_connection <= 0 && tech.qps_per_connection <= 0)
        tech.qps_per_connection = kNcclDefaultQpsPerConnection;
    tech.flows = ncclFlows(tech);
}

void clearNcclKnobs(Technology& tech) {
    tech.nccl_channels = 0;
    tech.qps_per_connection = 0;
    tech.sockets_per_connection = 0;
    tech.buffsize_mib = 0;
}

double stagingBytes(const Technology& tech) {
    if (!usesNcclKnobs(tech) || tech.buffsize_mib <= 0)
        return std::numeric_limits<double>::infinity();
    const double channels = double(std::max(1, tech.flows)) / flowsPerConnection(tech);
    return channels * tech.buffsize_mib * kMiB;
}

double perFlowRateBps(const Technology& tech, double rtt_s) {
    double rate = std::numeric_limits<double>::infinity();
    if (rtt_s <= 0)
        return rate;
    if (tech.window_mib > 0)
        rate = std::min(rate, tech.window_mib * kMiB / rtt_s);
    if (!tech.lossless && tech.loss_rate > 0 && !isRdmaTransport(tech))
        rate = std::min(rate, tech.mtu_bytes / rtt_s * std::sqrt(1.5) / std::sqrt(tech.loss_rate));
    return rate;
}

namespace {

// Flows past the host's limit add nothing: each of its GPUs' transfers gets
// its share of max_flows_per_host.
double flowsPerTransfer(const Technology& tech, int gpus_per_host) {
    double flows = std::max(1, tech.flows);
    if (tech.max_flows_per_host > 0)
        flows = std::min(flows, tech.max_flows_per_host / double(std::max(1, gpus_per_host)));
    return flows;
}

} // namespace

double transferBoundBps(const Technology& tech, double rtt_s, int gpus_per_host) {
    const double hostGpus = std::max(1, gpus_per_host);
    double rate = flowsPerTransfer(tech, gpus_per_host) * perFlowRateBps(tech, rtt_s);
    // NCCL's staging buffers: bytes in flight per transfer / RTT (the same
    // figure as stagingBytes, without its division where the flows are the
    // derived channels x QPs). Where a flow's share of its channel's buffer
    // is at least its window, the window binds first.
    if (rtt_s > 0 && tech.buffsize_mib > 0) {
        const int perConn = flowsPerConnection(tech);
        if (!(tech.window_mib > 0 && tech.buffsize_mib >= tech.window_mib * perConn)) {
            const int flows = std::max(1, tech.flows);
            const double channels = flows == tech.nccl_channels * perConn
                                        ? double(tech.nccl_channels)
                                        : double(flows) / perConn;
            rate = std::min(rate, channels * tech.buffsize_mib * kMiB / rtt_s);
        }
    }
    // Host copies: the host's network cores, shared by its GPUs' transfers.
    if (tech.host_net_cores > 0 && tech.host_gbps_per_core > 0)
        rate = std::min(rate,
                        gbpsToBytesPerS(tech.host_net_cores * tech.host_gbps_per_core) / hostGpus);
    return rate;
}

double aggregateRateFromBoundBps(const Technology& tech, double line_gbps, double rtt_s,
                                 double connections, int gpus_per_host, double transferBound) {
    const double line = gbpsToBytesPerS(line_gbps) * tech.efficiency;
    const double conns = std::max(1.0, connections);
    double rate = std::min(line, conns * transferBound);
    // RDMA over a lossy link: go-back-N resends what a flow has in flight
    // after each loss, so each delivered packet costs 1 + p x (packets in
    // flight) sent (Mittal et al., SIGCOMM 2018).
    if (!tech.lossless && tech.loss_rate > 0 && rtt_s > 0 && tech.mtu_bytes > 0 &&
        isRdmaTransport(tech)) {
        const double packetsInFlight =
            rate / (conns * flowsPerTransfer(tech, gpus_per_host)) * rtt_s / tech.mtu_bytes;
        rate /= 1.0 + tech.loss_rate * packetsInFlight;
    }
    return rate;
}

double aggregateRateBps(const Technology& tech, double line_gbps, double rtt_s, double connections,
                        int gpus_per_host) {
    return aggregateRateFromBoundBps(tech, line_gbps, rtt_s, connections, gpus_per_host,
                                     transferBoundBps(tech, rtt_s, gpus_per_host));
}

double transferRateBps(const Technology& tech, double share_gbps, double rtt_s, int gpus_per_host) {
    return aggregateRateBps(tech, share_gbps, rtt_s, 1.0, gpus_per_host);
}

double pfcHeadroomNeededBytes(const Technology& tech, double link_gbps, double one_way_s) {
    const double port = tech.port_gbps > 0 ? tech.port_gbps : link_gbps;
    return 2.0 * gbpsToBytesPerS(port) * std::max(0.0, one_way_s) + 2.0 * tech.mtu_bytes;
}

bool pfcHeadroomShort(const Technology& tech, double link_gbps, double one_way_s) {
    return tech.pfc_headroom_mib > 0 && tech.lossless &&
           tech.pfc_headroom_mib * kMiB < pfcHeadroomNeededBytes(tech, link_gbps, one_way_s);
}

bool applyPfcHeadroom(Technology& tech, double link_gbps, double one_way_s) {
    if (!pfcHeadroomShort(tech, link_gbps, one_way_s))
        return false;
    tech.lossless = false;
    tech.loss_rate = tech.lossy_loss_rate;
    return true;
}

void applyLinkOverride(Technology& tk, const LinkOverride& o) {
    // NCCL knobs first (they re-derive the flows), then the flows.
    if (o.nccl_channels > 0 || o.qps_per_connection > 0 || o.sockets_per_connection > 0 ||
        o.buffsize_mib > 0) {
        if (o.nccl_channels > 0)
            tk.nccl_channels = o.nccl_channels;
        if (o.qps_per_connection > 0) {
            tk.qps_per_connection = o.qps_per_connection;
            tk.sockets_per_connection = 0;
        }
        if (o.sockets_per_connection > 0) {
            tk.sockets_per_connection = o.sockets_per_connection;
            tk.qps_per_connection = 0;
        }
        if (o.buffsize_mib > 0)
            tk.buffsize_mib = o.buffsize_mib;
        completeNcclKnobs(tk);
    }
    if (o.flows > 0)
        tk.flows = o.flows;
}

} // namespace sa

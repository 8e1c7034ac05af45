#include "cost/network.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sa {

namespace {

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

} // namespace

std::optional<Technology> builtinTechnology(const std::string& name) {
    // Figures and their sources are listed in docs/COST_MODEL.md ("Network technologies").
    // roce: lossless RoCEv2 inside a datacenter; a QP keeps a bounded amount
    // of data in flight (NIC outstanding-request limits), which only bites
    // on long links.
    if (name == "roce")
        return make("roce", 0.92, 2.0, 4, 0.0, true, 4096, 2.0);
    // roce-long-haul: deep-buffer long-haul RoCE with many QPs and large
    // in-flight limits (PFC headroom sized for the distance).
    if (name == "roce-long-haul")
        return make("roce-long-haul", 0.9, 64.0, 16, 0.0, true, 4096, 4.0);
    // tcp: one Linux TCP connection, 16 MiB max window, lossy WAN.
    if (name == "tcp")
        return make("tcp", 0.85, 16.0, 1, 1e-6, false, 9000, 20.0);
    // tcp-multiflow: the same with 64 parallel connections (Atlas-style).
    if (name == "tcp-multiflow")
        return make("tcp-multiflow", 0.85, 16.0, 64, 1e-6, false, 9000, 20.0);
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

double perFlowRateBps(const Technology& tech, double rtt_s) {
    double rate = std::numeric_limits<double>::infinity();
    if (rtt_s <= 0)
        return rate;
    if (tech.window_mib > 0)
        rate = std::min(rate, tech.window_mib * 1024.0 * 1024.0 / rtt_s);
    if (!tech.lossless && tech.loss_rate > 0)
        rate = std::min(rate, tech.mtu_bytes / rtt_s * std::sqrt(1.5) / std::sqrt(tech.loss_rate));
    return rate;
}

double aggregateRateBps(const Technology& tech, double line_gbps, double rtt_s,
                        double connections) {
    const double line = gbpsToBytesPerS(line_gbps) * tech.efficiency;
    const double flows = std::max(1.0, connections) * std::max(1, tech.flows);
    return std::min(line, flows * perFlowRateBps(tech, rtt_s));
}

double transferRateBps(const Technology& tech, double share_gbps, double rtt_s) {
    return aggregateRateBps(tech, share_gbps, rtt_s, 1.0);
}

} // namespace sa

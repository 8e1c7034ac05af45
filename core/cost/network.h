#pragma once
// Transport technologies on a link and what they can push through it.
//
// A single flow over a long link is window-limited: rate <= window / RTT
// (bandwidth-delay product). A lossy transport is further limited by loss:
// Mathis et al., "The Macroscopic Behavior of the TCP Congestion Avoidance
// Algorithm", CCR 1997: rate <= (MSS / RTT) * C / sqrt(p), C = sqrt(3/2).
// Many flows (or QPs) add up until the line rate times the protocol
// efficiency is reached.

#include "model/cluster.h"

#include <optional>
#include <string>

namespace sa {

// Built-in profiles: roce, roce-long-haul, tcp, tcp-multiflow, nvlink.
std::optional<Technology> builtinTechnology(const std::string& name);
// The cluster's own profile of that name, else the built-in one.
std::optional<Technology> resolveTechnology(const Cluster& cluster, const std::string& name);

// Bytes per second one flow of `tech` sustains at round-trip time `rtt_s`
// (infinite when neither window nor loss limits it).
double perFlowRateBps(const Technology& tech, double rtt_s);

// Goodput in bytes/s of `connections` concurrent transfers (each using
// tech.flows flows) sharing a line of `line_gbps`.
double aggregateRateBps(const Technology& tech, double line_gbps, double rtt_s, double connections);

// Goodput in bytes/s of ONE transfer (tech.flows flows) that gets at most
// `share_gbps` of the line.
double transferRateBps(const Technology& tech, double share_gbps, double rtt_s);

inline double gbpsToBytesPerS(double gbps) {
    return gbps * 1e9 / 8.0;
}

} // namespace sa

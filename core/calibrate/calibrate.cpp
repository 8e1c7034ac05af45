#include "calibrate/calibrate.h"

#include "cost/collectives.h"
#include "cost/network.h"
#include "cost/stages.h"
#include "cost/traffic.h"
#include "formats/documents.h"
#include "formats/json_check.h"
#include "topology/topology.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace sa {

namespace {

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// Which measurement of a tier to write when several are given: the
// collective the model charges most with it first (all-reduce: TP and DP
// gradients), then its halves, then EP's all-to-all and CP's sendrecv.
int preference(NcclCollective c) {
    switch (c) {
    case NcclCollective::AllReduce:
        return 0;
    case NcclCollective::ReduceScatter:
    case NcclCollective::AllGather:
        return 1;
    case NcclCollective::AllToAll:
        return 2;
    case NcclCollective::SendRecv:
        return 3;
    }
    return 4;
}

std::string sizesText(const std::vector<std::int64_t>& sizes) {
    if (sizes.empty())
        return "none";
    auto human = [](std::int64_t b) {
        const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = double(b);
        int u = 0;
        while (v >= 1024 && u < 4) {
            v /= 1024;
            ++u;
        }
        return fmt("%.4g", v) + " " + unit[u];
    };
    return human(sizes.front()) + " .. " + human(sizes.back()) + " (" +
           std::to_string(sizes.size()) + " sizes)";
}

std::optional<std::string> readFile(const std::string& path, std::vector<Diagnostic>& problems) {
    std::string error;
    auto text = readTextFile(path, &error);
    if (!text)
        problems.push_back({path, {}, error.empty() ? "cannot read the file" : error});
    return text;
}

} // namespace

int modelSteps(NcclCollective c, int n) {
    if (n <= 1)
        return c == NcclCollective::SendRecv ? 1 : 0;
    switch (c) {
    case NcclCollective::AllReduce:
        return 2 * (n - 1);
    case NcclCollective::AllGather:
    case NcclCollective::ReduceScatter:
    case NcclCollective::AllToAll:
        return n - 1;
    case NcclCollective::SendRecv:
        return 1;
    }
    return 1;
}

std::optional<NcclTestsInput> loadNcclTestsInput(const std::string& path,
                                                 std::optional<CalibrationTier> tier,
                                                 const std::string& building,
                                                 const std::string& link,
                                                 std::vector<Diagnostic>& problems) {
    auto text = readFile(path, problems);
    if (!text)
        return std::nullopt;
    return NcclTestsInput{path, *text, tier, building, link};
}

std::optional<GemmInput> loadGemmInput(const std::string& path, const std::string& gpuModel,
                                       std::vector<Diagnostic>& problems) {
    auto text = readFile(path, problems);
    if (!text)
        return std::nullopt;
    return GemmInput{path, *text, gpuModel};
}

namespace {

// Ranks of a measurement on each of its hosts (an uneven spread counts by
// its floor: the host with the fewest NICs bounds the ring).
int ranksPerHost(const TierMeasurement& m) {
    return std::max(1, m.ranks / std::max(1, m.hosts));
}

} // namespace

CalibrationResult calibrateCluster(const Cluster& input, const std::vector<NcclTestsInput>& runs,
                                   const std::optional<GemmInput>& gemmInput) {
    CalibrationResult res;
    res.cluster = input;
    Cluster& c = res.cluster;
    auto problem = [&](const std::string& file, const std::string& msg) {
        res.problems.push_back({file, {}, msg});
    };
    auto warn = [&](const std::string& file, const std::string& msg) {
        res.warnings.push_back({file, {}, msg});
    };

    // ---- read and fit every table ----------------------------------------
    for (const NcclTestsInput& in : runs) {
        const std::size_t before = res.problems.size();
        NcclTestsTable t = readNcclTests(in.text, in.file, res.problems);
        if (res.problems.size() != before)
            continue;
        TierMeasurement m;
        m.file = in.file;
        m.collective = *t.collective;
        m.ranks = t.ranks;
        m.hosts = int(t.hosts.size());
        if (in.tier)
            m.tier = *in.tier;
        else if (t.tier)
            m.tier = *t.tier;
        else {
            problem(in.file, "the tier is unknown: give --tier host|building|cross-building or a "
                             "'# scaleacross-tier: host' line in the file");
            continue;
        }
        if (m.tier == CalibrationTier::CrossBuilding) {
            m.link = !in.link.empty() ? in.link : t.link;
            if (m.link.empty()) {
                if (c.links.size() != 1) {
                    problem(in.file, "the cluster has " + std::to_string(c.links.size()) +
                                         " links: name the measured one (--link or a "
                                         "'# scaleacross-link:' line)");
                    continue;
                }
                m.link =
                    c.links[0].name.empty() ? c.links[0].a + "-" + c.links[0].b : c.links[0].name;
            }
        } else {
            m.building = !in.building.empty() ? in.building : t.building;
            if (m.building.empty()) {
                if (c.buildings.size() != 1) {
                    problem(in.file, "the cluster has " + std::to_string(c.buildings.size()) +
                                         " buildings: name the measured one (--building or a "
                                         "'# scaleacross-building:' line)");
                    continue;
                }
                m.building = c.buildings[0].name;
            }
            if (c.buildingIndex(m.building) < 0) {
                problem(in.file, "no building named '" + m.building + "' in the cluster");
                continue;
            }
        }
        if (m.ranks < 2) {
            problem(in.file, "a run of " + std::to_string(m.ranks) +
                                 " rank: a collective needs at least two");
            continue;
        }
        if (m.tier == CalibrationTier::Host && m.hosts > 1)
            warn(in.file, "tier host, but the ranks are on " + std::to_string(m.hosts) +
                              " hosts: the bus bandwidth is the NIC's, not NVLink's");
        if (m.tier != CalibrationTier::Host && m.hosts < 2)
            warn(in.file, std::string("tier ") + tierName(m.tier) +
                              ", but all ranks are on one host: the bus bandwidth is NVLink's");
        m.fit = fitTable(t);
        if (!m.fit.ok) {
            problem(in.file, "cannot fit t = alpha + busfactor S / B: " + m.fit.problem);
            continue;
        }
        m.steps = modelSteps(m.collective, m.ranks);
        m.step_latency_us = m.fit.alpha_s / m.steps * 1e6;
        res.tiers.push_back(m);
    }

    // ---- choose one measurement per tier and target ----------------------
    std::map<std::pair<int, std::string>, std::size_t> chosen;
    for (std::size_t i = 0; i < res.tiers.size(); ++i) {
        const TierMeasurement& m = res.tiers[i];
        const auto key =
            std::pair{int(m.tier), m.tier == CalibrationTier::CrossBuilding ? m.link : m.building};
        auto it = chosen.find(key);
        if (it == chosen.end() ||
            preference(m.collective) < preference(res.tiers[it->second].collective))
            chosen[key] = i;
    }
    for (auto& [key, i] : chosen)
        res.tiers[i].written = true;

    // ---- host and building tiers: the building's fields -------------------
    for (TierMeasurement& m : res.tiers) {
        if (m.tier == CalibrationTier::CrossBuilding)
            continue;
        Building& b = c.buildings[std::size_t(c.buildingIndex(m.building))];
        const bool up = m.tier == CalibrationTier::Host;
        // Across hosts the ring leaves each host through the NICs of all its
        // ranks (core/cost/collectives.cpp scaleOutSeconds): the bus
        // bandwidth is theirs together.
        m.line_bytes_per_s = up ? gbpsToBytesPerS(b.scale_up_gbps)
                                : gbpsToBytesPerS(b.scale_out_gbps) * ranksPerHost(m);
        m.efficiency = m.fit.bus_bytes_per_s / m.line_bytes_per_s;
        if (!m.written) {
            m.note = "not written: another measurement of this tier is preferred";
            continue;
        }
        double eff = m.efficiency;
        if (eff > 1) {
            warn(m.file,
                 "the bus bandwidth " + fmt("%.1f", m.fit.bus_bytes_per_s / 1e9) +
                     " GB/s exceeds the line rate " + fmt("%.1f", m.line_bytes_per_s / 1e9) +
                     " GB/s (" +
                     (up ? std::string("scale_up_gbps")
                         : "scale_out_gbps x " + std::to_string(ranksPerHost(m)) + " NICs a host") +
                     "): efficiency written as 1; is the line rate right?");
            eff = 1;
        }
        // Each rank also passes (k - 1)/k of the ring's bytes to the next rank
        // over NVLink: a bus bandwidth beyond k/(k - 1) of the NVLink goodput
        // is one the model's ring cannot reach, whatever the NICs.
        if (const int k = ranksPerHost(m); !up && k > 1) {
            const double nvl = nvlinkBytesPerSecond(b) * k / (k - 1);
            if (m.fit.bus_bytes_per_s > nvl)
                warn(m.file, "the bus bandwidth " + fmt("%.1f", m.fit.bus_bytes_per_s / 1e9) +
                                 " GB/s exceeds what " + std::to_string(k) +
                                 " ranks a host can pass on over NVLink (" +
                                 fmt("%.1f", nvl / 1e9) + " GB/s at the building's " +
                                 "scale_up_gbps and efficiency): the model's ring stays below it");
        }
        if (up && m.ranks > b.gpus_per_host)
            warn(m.file, std::to_string(m.ranks) + " ranks in one NVLink domain, but " +
                             m.building + " has " + std::to_string(b.gpus_per_host) +
                             " GPUs per host");
        const double maxStep = formats::kStepLatencyUs.max.value_or(1e4);
        if (m.step_latency_us > maxStep)
            warn(m.file, "a step of " + fmt("%.4g", m.step_latency_us) + " us: written as " +
                             fmt("%.4g", maxStep) + " us, the most a building's step may be");
        const double step = std::min(m.step_latency_us, maxStep);
        (up ? b.scale_up_efficiency : b.scale_out_efficiency) = eff;
        (up ? b.scale_up_latency_us : b.scale_out_latency_us) = step;
        m.note = std::string("written: ") + m.building + "." +
                 (up ? "scale_up_efficiency = " : "scale_out_efficiency = ") + fmt("%.4g", eff) +
                 ", " + (up ? "scale_up_latency_us = " : "scale_out_latency_us = ") +
                 fmt("%.4g", step);
    }

    // ---- cross-building: a technology profile for the link ---------------
    for (TierMeasurement& m : res.tiers) {
        if (m.tier != CalibrationTier::CrossBuilding)
            continue;
        int li = -1;
        for (std::size_t i = 0; i < c.links.size(); ++i) {
            const Link& l = c.links[i];
            if ((l.name.empty() ? l.a + "-" + l.b : l.name) == m.link)
                li = int(i);
        }
        if (li < 0) {
            problem(m.file, "no link named '" + m.link + "' in the cluster");
            continue;
        }
        Link& link = c.links[std::size_t(li)];
        m.line_bytes_per_s = gbpsToBytesPerS(link.bandwidth_gbps);
        m.efficiency = m.fit.bus_bytes_per_s / m.line_bytes_per_s;
        if (!m.written) {
            m.note = "not written: another measurement of this link is preferred";
            continue;
        }
        const int ia = c.buildingIndex(link.a), ib = c.buildingIndex(link.b);
        if (ia < 0 || ib < 0) {
            problem(m.file, "the link '" + m.link + "' names a building the cluster lacks");
            continue;
        }
        auto base = resolveTechnology(c, link.technology);
        Technology tech = base ? *base : Technology{};
        // The ring's bytes cross the link once per direction (the ring's two
        // crossings, core/cost/collectives.cpp ring) as one connection: the
        // model's rate there is min(line x efficiency, flows x window / RTT)
        // (core/cost/network.cpp aggregateRateBps), and the NICs of each
        // host's ranks bound it too (the per-GPU term, scaleOutSeconds).
        const double B = m.fit.bus_bytes_per_s;
        const double nic =
            ranksPerHost(m) * std::min(nicBytesPerSecond(c.buildings[std::size_t(ia)]),
                                       nicBytesPerSecond(c.buildings[std::size_t(ib)]));
        const double rtt = 2.0 * std::max(0.0, link.latency_ms) * 1e-3 + 10e-6; // traffic.cpp
        std::string what;
        if (B >= 0.97 * nic) {
            what = "as fast as the NICs (" + fmt("%.1f", nic / 1e9) +
                   " GB/s): neither the link's efficiency nor its window limits a group this "
                   "size; kept the profile's";
        } else if (m.line_bytes_per_s < nic) {
            tech.efficiency = std::min(1.0, m.efficiency);
            tech.window_mib = 0;
            clearNcclKnobs(tech); // no staging limit either: the link bounds it
            what = "link-bound: efficiency = " + fmt("%.4g", tech.efficiency) + " of " +
                   fmt("%.4g", link.bandwidth_gbps) + " Gbit/s";
        } else {
            // The line and the NICs are faster than what was measured: one
            // connection's flows are window-limited (rate = flows x window / RTT);
            // the measured window replaces NCCL's staging bound.
            clearNcclKnobs(tech);
            tech.window_mib = B * rtt / std::max(1, tech.flows) / (1024.0 * 1024.0);
            what = "window-bound: window_mib = " + fmt("%.4g", tech.window_mib) + " (" +
                   std::to_string(std::max(1, tech.flows)) + " flows, RTT " +
                   fmt("%.4g", rtt * 1e3) + " ms)";
            if (!tech.lossless && tech.loss_rate > 0 &&
                std::max(1, tech.flows) * perFlowRateBps(tech, rtt) < 0.99 * B)
                warn(m.file, "the profile's loss rate alone limits the link below the "
                             "measured bandwidth; the loss rate is kept");
        }
        // Latency: the model's ring over two buildings (n/2 ranks each)
        // charges f (n-1)/n x [2 crossing steps + (n-2) zone steps]; the
        // measured alpha less the zone steps gives the crossing step, less
        // the route's one-way latency the per-message overhead.
        Topology topo(c);
        const std::vector<EdgeTransport> transports = edgeTransports(c, topo, Plan{});
        TrafficPhase phase(topo, transports);
        const double route = phase.routeLatency({ia, 0}, {ib, 0});
        CollectiveEnv env;
        env.alpha_s = collectiveAlpha();
        for (int bi : {ia, ib})
            if (const auto& l = c.buildings[std::size_t(bi)].scale_out_latency_us)
                env.local_step_s = std::max(env.local_step_s.value_or(0.0), *l * 1e-6);
        const int n = m.ranks;
        const double f = m.collective == NcclCollective::AllReduce ? 2.0 : 1.0;
        const double hopSum = m.fit.alpha_s * n / (f * (n - 1));
        const double crossing = 0.5 * (hopSum - (n - 2) * env.localStep());
        tech.per_message_us = std::max(0.0, (crossing - route) * 1e6);
        const std::string name = "calibrated-" + m.link;
        tech.name = name;
        c.technologies[name] = tech;
        link.technology = name;
        m.note = "written: technologies." + name + " (" + what +
                 "; per_message_us = " + fmt("%.4g", tech.per_message_us) +
                 ", the crossing step less the route's " + fmt("%.4g", route * 1e6) +
                 " us; not read by the cost model, whose crossing "
                 "step is the zone step + the route's extra latency = " +
                 fmt("%.4g", env.routeStep(route) * 1e6) + " us); " + m.link +
                 ".technology = " + name;
    }

    // ---- GEMM ------------------------------------------------------------
    if (gemmInput) {
        const std::size_t before = res.problems.size();
        GemmTable t = readGemmCsv(gemmInput->text, gemmInput->file, res.problems);
        if (res.problems.size() == before) {
            std::string gpu = !gemmInput->gpu_model.empty() ? gemmInput->gpu_model : t.gpu_model;
            if (gpu.empty() && c.gpu_models.size() == 1)
                gpu = c.gpu_models.begin()->first;
            auto it = gpu.empty() ? c.gpu_models.end() : c.gpu_models.find(gpu);
            if (gpu.empty())
                problem(gemmInput->file, "the cluster has " + std::to_string(c.gpu_models.size()) +
                                             " GPU models: name the measured one (--gpu or a "
                                             "'# scaleacross-gpu:' line)");
            else if (it == c.gpu_models.end())
                problem(gemmInput->file, "no GPU model named '" + gpu + "' in the cluster");
            else {
                GemmCalibration g;
                g.file = gemmInput->file;
                g.gpu_model = gpu;
                g.bf16 = fitGemmEfficiency(it->second, t.rows, GemmPrecision::Bf16);
                g.fp8 = fitGemmEfficiency(it->second, t.rows, GemmPrecision::Fp8);
                bool any = false;
                for (const GemmFit* fit : {&g.bf16, &g.fp8}) {
                    if (!fit->ok) {
                        if (fit->points > 0)
                            problem(gemmInput->file, fit->problem);
                        continue;
                    }
                    any = true;
                    (fit->precision == GemmPrecision::Fp8 ? it->second.gemm_efficiency_fp8
                                                          : it->second.gemm_efficiency) =
                        fit->efficiency;
                    if (fit->at_bound)
                        warn(gemmInput->file,
                             "the measured TFLOP/s exceed what the model reaches at efficiency "
                             "1: check the GPU model's peak_tflops");
                }
                if (!any && res.problems.size() == before)
                    problem(gemmInput->file, "no rows to fit");
                res.gemm = g;
            }
        }
    }

    // The written document must load as it is saved (a value outside the
    // ranges the parser accepts would make -o write a file nothing reads).
    if (res.problems.empty()) {
        const Loaded<Cluster> back = parseCluster(dumpCanonical(toJson(c)), "calibrated cluster");
        for (const Diagnostic& d : back.problems)
            res.problems.push_back(d);
    }

    // ---- report ----------------------------------------------------------
    std::string r;
    for (const TierMeasurement& m : res.tiers) {
        r += std::string(tierName(m.tier)) + " tier (" +
             (m.tier == CalibrationTier::CrossBuilding ? "link " + m.link
                                                       : "building " + m.building) +
             "), " + m.file + "\n";
        r += "  collective      " + std::string(collectiveName(m.collective)) + ", " +
             std::to_string(m.ranks) + " ranks on " + std::to_string(m.hosts) + " host" +
             (m.hosts == 1 ? "" : "s") + "\n";
        r += "  sizes used      " + sizesText(m.fit.sizes) + ", " + std::to_string(m.fit.points) +
             " points (out-of-place and in-place)";
        if (!m.fit.skipped_lines.empty())
            r += ", " + std::to_string(m.fit.skipped_lines.size()) + " rows left out (#wrong != 0)";
        r += "\n";
        r += "  fit             t = " + fmt("%.4g", m.fit.alpha_s * 1e6) + " us + " +
             fmt("%.6g", busFactor(m.collective, m.ranks)) + " S / " +
             fmt("%.4g", m.fit.bus_bytes_per_s / 1e9) + " GB/s" +
             (m.fit.alpha_clamped ? " (alpha < 0 unconstrained: held at 0)" : "") + "\n";
        r += "  residual        " + fmt("%.2f", m.fit.rms_relative_residual * 100) + "% rms, " +
             fmt("%.2f", m.fit.max_relative_residual * 100) + "% max (relative)\n";
        r += "  efficiency      " + fmt("%.4g", m.efficiency) + " of " +
             fmt("%.4g", m.line_bytes_per_s / 1e9) + " GB/s\n";
        r += "  step latency    " + fmt("%.4g", m.step_latency_us) + " us (alpha over " +
             std::to_string(m.steps) + " ring steps)\n";
        r += "  " + m.note + "\n";
    }
    if (res.gemm) {
        for (const GemmFit* fit : {&res.gemm->bf16, &res.gemm->fp8}) {
            if (!fit->ok)
                continue;
            const bool fp8 = fit->precision == GemmPrecision::Fp8;
            r += std::string("GEMM ") + (fp8 ? "fp8" : "bf16") + " (" + res.gemm->gpu_model +
                 "), " + res.gemm->file + "\n";
            r += "  rows            " + std::to_string(fit->points) + "\n";
            r += std::string("  written         ") +
                 (fp8 ? "gemm_efficiency_fp8 = " : "gemm_efficiency = ") +
                 fmt("%.4g", fit->efficiency) + "\n";
            r += "  residual        " + fmt("%.2f", fit->rms_relative_residual * 100) + "% rms, " +
                 fmt("%.2f", fit->max_relative_residual * 100) +
                 "% max (relative, against the model's shape factor)\n";
        }
    }
    res.report = r;
    return res;
}

} // namespace sa

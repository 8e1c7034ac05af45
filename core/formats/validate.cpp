#include "formats/checks.h"
#include "formats/documents.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace sa::formats {

const std::vector<BuildingRunField> kBuildingRunFields = {
    {"gpu_mtbf_hours", &Building::gpu_mtbf_hours, &kMtbfHoursRange},
    {"host_mtbf_hours", &Building::host_mtbf_hours, &kMtbfHoursRange},
    {"restart_s", &Building::restart_s, &kRestartSRange},
    {"storage_write_gbps", &Building::storage_write_gbps, &kStorageGbpsRange},
    {"storage_read_gbps", &Building::storage_read_gbps, &kStorageGbpsRange},
    {"gpu_hour_usd", &Building::gpu_hour_usd, &kGpuHourUsdRange},
    {"host_power_w", &Building::host_power_w, &kHostPowerWRange},
    {"network_power_w_per_gpu", &Building::network_power_w_per_gpu, &kNetworkPowerWRange},
    {"step_jitter", &Building::step_jitter, &kStepJitterRange}};

namespace {

std::string str(std::int64_t v) {
    return std::to_string(v);
}

bool knownTechnology(const Cluster& c, const std::string& name) {
    const auto& builtin = builtinTechnologies();
    return c.technologies.count(name) ||
           std::find(builtin.begin(), builtin.end(), name) != builtin.end();
}

std::string unknownTechnology(const Cluster& c, const std::string& name) {
    std::string message =
        "unknown technology '" + name + "' (built-in: " + joined(builtinTechnologies());
    if (!c.technologies.empty()) {
        std::vector<std::string> own;
        for (const auto& [key, t] : c.technologies)
            own.push_back(key);
        message += "; defined in technologies: " + joined(own);
    }
    return message + ")";
}

// Product of the four grid degrees without overflow; capped just above the limit.
std::int64_t jobGpus(const Parallelism& p) {
    std::int64_t n = 1;
    for (int v : {p.tp, p.cp, p.pp, p.dp}) {
        if (v <= 0)
            return 0;
        if (n > (kMaxJobGpus + 1) / v)
            return kMaxJobGpus + 1;
        n *= v;
    }
    return n;
}

std::string rankOrderText(const std::vector<Dim>& order) {
    std::vector<std::string> names;
    for (Dim d : order)
        names.push_back(toString(d));
    return "[" + joined(names) + "]";
}

} // namespace

namespace {

// The NCCL knobs of a technology profile or a plan's link override (the
// same keys on both; 0 = not given).
template <class Knobs>
void checkNcclKnobs(Diagnostics& d, const std::string& at, const Knobs& k, const char* subject) {
    if (k.nccl_channels != 0)
        checkInt(d, at + "/nccl_channels", k.nccl_channels, kNcclChannelsRange);
    if (k.qps_per_connection != 0)
        checkInt(d, at + "/qps_per_connection", k.qps_per_connection, kQpsPerConnectionRange);
    if (k.sockets_per_connection != 0)
        checkInt(d, at + "/sockets_per_connection", k.sockets_per_connection,
                 kSocketsPerConnectionRange);
    if (k.buffsize_mib != 0)
        checkNumber(d, at + "/buffsize_mib", k.buffsize_mib, kPositive);
    if (k.qps_per_connection > 0 && k.sockets_per_connection > 0 &&
        !d.isBad(at + "/sockets_per_connection"))
        d.error(at + "/sockets_per_connection",
                std::string(subject) + " either RDMA QPs (qps_per_connection = " +
                    str(k.qps_per_connection) + ") or sockets (sockets_per_connection), not both");
}

} // namespace

void checkCluster(const Cluster& c, Diagnostics& d) {
    checkName(d, "/name", c.name);
    if (c.gpu_models.empty() && !d.isBad("/gpu_models"))
        d.error("/gpu_models", "must name at least one GPU model");
    for (const auto& [key, g] : c.gpu_models) {
        const std::string at = childPath("/gpu_models", key);
        if (key.empty() && !d.isBad(at))
            d.error(at, "a GPU model needs a non-empty name");
        checkNumber(d, at + "/peak_tflops/bf16", g.peak_tflops_bf16, kPositive);
        checkNumber(d, at + "/peak_tflops/fp8", g.peak_tflops_fp8, kNonNegative);
        checkNumber(d, at + "/memory_gib", g.memory_gib, kPositive);
        checkNumber(d, at + "/hbm_tbps", g.hbm_tbps, kPositive);
        checkInt(d, at + "/sms", g.sms, kSmsRange);
        checkNumber(d, at + "/gemm_efficiency", g.gemm_efficiency, kFraction);
        checkNumber(d, at + "/gemm_efficiency_fp8", g.gemm_efficiency_fp8, kFraction);
        const bool tdpOk = checkNumber(d, at + "/tdp_w", g.tdp_w, kGpuPowerWRange);
        const bool limitOk =
            checkNumber(d, at + "/power_limit_w", g.power_limit_w, kGpuPowerWRange);
        checkNumber(d, at + "/idle_w", g.idle_w, kGpuPowerWRange);
        // The clocks come as a pair: the sustained one read against the one
        // the efficiencies were measured at.
        const bool boostOk =
            checkNumber(d, at + "/boost_clock_mhz", g.boost_clock_mhz, kNonNegative);
        const bool sustainedOk =
            checkNumber(d, at + "/sustained_clock_mhz", g.sustained_clock_mhz, kNonNegative);
        if (boostOk && sustainedOk && !d.isBad(at + "/boost_clock_mhz") &&
            !d.isBad(at + "/sustained_clock_mhz") &&
            (g.boost_clock_mhz > 0 || g.sustained_clock_mhz > 0)) {
            if (!(g.sustained_clock_mhz > 0))
                d.error(at + "/sustained_clock_mhz",
                        "is needed with boost_clock_mhz (the clock a training run holds)");
            else if (!(g.boost_clock_mhz > 0))
                d.error(at + "/boost_clock_mhz", "is needed with sustained_clock_mhz (the clock "
                                                 "the efficiencies were measured at)");
            else if (g.sustained_clock_mhz > g.boost_clock_mhz)
                d.error(at + "/sustained_clock_mhz",
                        "must be at most boost_clock_mhz (" + formatNumber(g.boost_clock_mhz) +
                            "), got " + formatNumber(g.sustained_clock_mhz));
        }
        // A power limit is read against the power the peaks are rated at.
        if (tdpOk && limitOk && g.power_limit_w > 0) {
            if (!(g.tdp_w > 0))
                d.error(at + "/power_limit_w",
                        "needs tdp_w > 0 (the board power the peaks are rated at), got tdp_w = " +
                            formatNumber(g.tdp_w));
            else if (g.power_limit_w > g.tdp_w)
                d.error(at + "/power_limit_w", "must be at most tdp_w (" + formatNumber(g.tdp_w) +
                                                   "), got " + formatNumber(g.power_limit_w));
        }
    }

    if (c.buildings.empty() && !d.isBad("/buildings"))
        d.error("/buildings", "must list at least one building");
    if (c.buildings.size() > static_cast<std::size_t>(kMaxBuildings) && !d.isBad("/buildings"))
        d.error("/buildings", "must list at most " + str(kMaxBuildings) + " buildings, got " +
                                  str(static_cast<std::int64_t>(c.buildings.size())));
    // Reference checks only make sense when every name could be read.
    bool buildingNamesKnown = !d.isBad("/buildings");
    std::map<std::string, std::size_t> buildingAt;
    std::int64_t zones = 0;
    std::string tooManyZonesAt;
    for (std::size_t i = 0; i < c.buildings.size(); ++i) {
        const Building& b = c.buildings[i];
        const std::string at = childPath("/buildings", i);
        if (!checkName(d, at + "/name", b.name)) {
            buildingNamesKnown = false;
        } else if (auto [it, fresh] = buildingAt.emplace(b.name, i); !fresh) {
            d.error(at + "/name", "duplicate building name '" + b.name + "' (also " +
                                      childPath("/buildings", it->second) + ")");
        }
        checkName(d, at + "/region", b.region);
        for (const auto& [key, member, range] : kBuildingRunFields)
            checkNumber(d, at + "/" + key, b.*member, *range);
        checkNumber(d, at + "/straggler_slowdown", b.straggler_slowdown, kStragglerRange);
        if (b.pue != 0)
            checkNumber(d, at + "/pue", b.pue, kPueRange);
        if (checkName(d, at + "/gpu_model", b.gpu_model) && !d.isBad("/gpu_models") &&
            !d.isBad(at + "/gpu_model") && !c.gpu_models.count(b.gpu_model))
            d.error(at + "/gpu_model", "no GPU model named '" + b.gpu_model + "' in /gpu_models");
        const bool gpusOk = checkInt(d, at + "/gpus", b.gpus, kGpusRange) && !d.isBad(at + "/gpus");
        bool perHostOk = checkInt(d, at + "/gpus_per_host", b.gpus_per_host, kGpusPerHostRange) &&
                         !d.isBad(at + "/gpus_per_host");
        if (gpusOk && perHostOk && b.gpus % b.gpus_per_host != 0) {
            d.error(at + "/gpus_per_host",
                    "must divide gpus (" + str(b.gpus) + "), got " + str(b.gpus_per_host));
            perHostOk = false;
        }
        checkNumber(d, at + "/scale_up_gbps", b.scale_up_gbps, kScaleUpGbpsRange);
        checkNumber(d, at + "/scale_out_gbps", b.scale_out_gbps, kScaleOutGbpsRange);
        // zone_gpus 0 (a value built in code) means one zone, as Building::zones() reads it.
        if (b.zone_gpus != 0 && checkInt(d, at + "/zone_gpus", b.zone_gpus, kGpusRange) &&
            !d.isBad(at + "/zone_gpus")) {
            if (gpusOk && b.zone_gpus > b.gpus)
                d.error(at + "/zone_gpus",
                        "must be at most gpus (" + str(b.gpus) + "), got " + str(b.zone_gpus));
            else if (perHostOk && b.zone_gpus % b.gpus_per_host != 0)
                d.error(at + "/zone_gpus", "must be a multiple of gpus_per_host (" +
                                               str(b.gpus_per_host) + "), got " + str(b.zone_gpus));
        }
        checkNumber(d, at + "/zone_oversubscription", b.zone_oversubscription,
                    kOversubscriptionRange);
        checkNumber(d, at + "/building_oversubscription", b.building_oversubscription,
                    kOversubscriptionRange);
        if (b.scale_up_efficiency)
            checkNumber(d, at + "/scale_up_efficiency", *b.scale_up_efficiency, kFraction);
        if (b.scale_up_latency_us)
            checkNumber(d, at + "/scale_up_latency_us", *b.scale_up_latency_us, kStepLatencyUs);
        if (b.scale_out_efficiency)
            checkNumber(d, at + "/scale_out_efficiency", *b.scale_out_efficiency, kFraction);
        if (b.scale_out_latency_us)
            checkNumber(d, at + "/scale_out_latency_us", *b.scale_out_latency_us, kStepLatencyUs);
        if (gpusOk && !d.touched(at + "/zone_gpus")) {
            zones += b.zones();
            if (zones > kMaxZones && tooManyZonesAt.empty())
                tooManyZonesAt = at + "/zone_gpus";
        }
    }
    if (!tooManyZonesAt.empty())
        d.error(tooManyZonesAt, "the cluster must have at most " + str(kMaxZones) +
                                    " zones (gpus / zone_gpus summed over the buildings), got " +
                                    str(zones));

    for (const auto& [key, t] : c.technologies) {
        const std::string at = childPath("/technologies", key);
        if (key.empty() && !d.isBad(at))
            d.error(at, "a technology needs a non-empty name");
        checkNumber(d, at + "/efficiency", t.efficiency, kFraction);
        checkNumber(d, at + "/window_mib", t.window_mib, kNonNegative);
        checkInt(d, at + "/flows", t.flows, kFlowsRange);
        checkNumber(d, at + "/loss_rate", t.loss_rate, kProbability);
        checkNumber(d, at + "/mtu_bytes", t.mtu_bytes, kPositive);
        checkNumber(d, at + "/per_message_us", t.per_message_us, kNonNegative);
        checkNcclKnobs(d, at, t, "a profile uses");
        if (t.host_gbps_per_core != 0)
            checkNumber(d, at + "/host_gbps_per_core", t.host_gbps_per_core, kPositive);
        if (t.host_net_cores != 0)
            checkInt(d, at + "/host_net_cores", t.host_net_cores, kHostNetCoresRange);
        if (t.max_flows_per_host != 0)
            checkInt(d, at + "/max_flows_per_host", t.max_flows_per_host, kFlowsRange);
        if (t.qps_per_connection > 0 && !d.isBad(at + "/qps_per_connection")) {
            const std::pair<const char*, bool> hostKeys[] = {
                {"/host_net_cores", t.host_net_cores > 0},
                {"/max_flows_per_host", t.max_flows_per_host > 0}};
            for (const auto& [hostKey, set] : hostKeys)
                if (set && !d.isBad(at + hostKey))
                    d.error(at + hostKey, "host copy limits describe a socket transport; this "
                                          "profile is RDMA (qps_per_connection), which moves "
                                          "data without the host's copies");
        }
        if (t.pfc_headroom_mib != 0)
            checkNumber(d, at + "/pfc_headroom_mib", t.pfc_headroom_mib, kPositive);
        if (t.port_gbps != 0)
            checkNumber(d, at + "/port_gbps", t.port_gbps, kPositive);
        checkNumber(d, at + "/lossy_loss_rate", t.lossy_loss_rate, kProbability);
        if (t.pfc_headroom_mib > 0 && !d.isBad(at + "/pfc_headroom_mib")) {
            if (t.sockets_per_connection > 0 && !d.isBad(at + "/sockets_per_connection"))
                d.error(at + "/pfc_headroom_mib",
                        "PFC headroom describes a lossless RoCE profile; this one uses sockets "
                        "(sockets_per_connection)");
            else if (t.lossy_loss_rate <= 0 && !d.isBad(at + "/lossy_loss_rate"))
                d.error(at + "/pfc_headroom_mib",
                        "needs 'lossy_loss_rate' (a probability above 0): the loss rate the "
                        "link has once its headroom cannot hold the round trip");
        }
    }

    if (c.links.size() > static_cast<std::size_t>(kMaxLinks) && !d.isBad("/links"))
        d.error("/links", "must list at most " + str(kMaxLinks) + " links, got " +
                              str(static_cast<std::int64_t>(c.links.size())));
    std::map<std::string, std::size_t> linkAt;
    for (std::size_t i = 0; i < c.links.size(); ++i) {
        const Link& l = c.links[i];
        const std::string at = childPath("/links", i);
        const std::string between = at + "/between";
        if (!d.touched(between)) {
            if (checkName(d, between + "/0", l.a) && checkName(d, between + "/1", l.b)) {
                if (l.a == l.b) {
                    d.error(between, "must name two different buildings, got '" + l.a + "' twice");
                } else if (buildingNamesKnown) {
                    if (!buildingAt.count(l.a))
                        d.error(between + "/0", "no building named '" + l.a + "'");
                    if (!buildingAt.count(l.b))
                        d.error(between + "/1", "no building named '" + l.b + "'");
                }
            }
        }
        const std::string name = l.name.empty() ? l.a + "-" + l.b : l.name;
        if (!d.isBad(at + "/name") && !d.touched(between)) {
            if (auto [it, fresh] = linkAt.emplace(name, i); !fresh)
                d.error(at + "/name", "duplicate link name '" + name + "' (also " +
                                          childPath("/links", it->second) + ")");
        }
        checkNumber(d, at + "/bandwidth_gbps", l.bandwidth_gbps, kLinkGbpsRange);
        checkNumber(d, at + "/latency_ms", l.latency_ms, kLinkLatencyMsRange);
        checkNumber(d, at + "/price_per_gb_usd", l.price_per_gb_usd, kTransportPriceRange);
        const bool fractionOk =
            checkNumber(d, at + "/degraded_fraction", l.degraded_fraction, kProbability);
        const bool degradedOk = checkNumber(d, at + "/degraded_bandwidth_gbps",
                                            l.degraded_bandwidth_gbps, kLinkGbpsOrNoneRange);
        if (fractionOk && degradedOk && !d.isBad(at + "/degraded_fraction") &&
            !d.isBad(at + "/degraded_bandwidth_gbps") && !d.isBad(at + "/bandwidth_gbps") &&
            !d.isBad(at + "/background_gbps")) {
            // While degraded the link still carries its background and some
            // of the job (a link that is down is a failure, not a straggler).
            if (l.degraded_fraction > 0 && !(l.degraded_bandwidth_gbps > l.background_gbps &&
                                             l.degraded_bandwidth_gbps < l.bandwidth_gbps))
                d.error(at + "/degraded_bandwidth_gbps",
                        "must be more than background_gbps (" + formatNumber(l.background_gbps) +
                            ") and less than bandwidth_gbps (" + formatNumber(l.bandwidth_gbps) +
                            ") when degraded_fraction is set, got " +
                            formatNumber(l.degraded_bandwidth_gbps));
        }
        if (checkNumber(d, at + "/background_gbps", l.background_gbps, kLinkGbpsOrNoneRange) &&
            !d.isBad(at + "/background_gbps") && !d.isBad(at + "/bandwidth_gbps") &&
            l.bandwidth_gbps > 0 && l.background_gbps >= l.bandwidth_gbps)
            d.error(at + "/background_gbps", "must be less than bandwidth_gbps (" +
                                                 formatNumber(l.bandwidth_gbps) +
                                                 "): the job needs some of the link, got " +
                                                 formatNumber(l.background_gbps));
        if (checkName(d, at + "/technology", l.technology) && !d.isBad(at + "/technology") &&
            !d.touched("/technologies") && !knownTechnology(c, l.technology))
            d.error(at + "/technology", unknownTechnology(c, l.technology));
    }
    checkNumber(d, "/routing/ecmp_tolerance", c.routing.ecmp_tolerance, kNonNegative);
}

void checkModel(const Model& m, Diagnostics& d) {
    checkName(d, "/name", m.name);
    const bool layersOk = checkInt(d, "/layers", m.layers, kLayersRange) && !d.isBad("/layers");
    const bool hiddenOk = checkInt(d, "/hidden", m.hidden, kWidthRange) && !d.isBad("/hidden");
    checkInt(d, "/ffn_hidden", m.ffn_hidden, kWidthRange);
    const bool headsOk = checkInt(d, "/heads", m.heads, kHeadsRange) && !d.isBad("/heads");
    const bool kvOk = checkInt(d, "/kv_heads", m.kv_heads, kHeadsRange) && !d.isBad("/kv_heads");
    checkInt(d, "/vocab", m.vocab, kVocabRange);
    if (headsOk && kvOk && m.heads % m.kv_heads != 0)
        d.error("/kv_heads", "must divide heads (" + str(m.heads) + "), got " + str(m.kv_heads));
    if (m.mla && !d.isBad("/mla")) {
        // Every head has its own key and value (from the shared latent).
        if (headsOk && kvOk && m.kv_heads != m.heads)
            d.error("/kv_heads", "must equal heads (" + str(m.heads) +
                                     ") with multi-head latent attention (mla), got " +
                                     str(m.kv_heads));
        if (m.head_dim != 0)
            d.error("/head_dim",
                    "is set by mla (qk_head_dim, rope_head_dim, v_head_dim): leave it out");
        const MlaConfig& a = *m.mla;
        checkInt(d, "/mla/q_lora_rank", a.q_lora_rank, kWidthOrNoneRange);
        checkInt(d, "/mla/kv_lora_rank", a.kv_lora_rank, kWidthRange);
        checkInt(d, "/mla/qk_head_dim", a.qk_head_dim, kWidthRange);
        checkInt(d, "/mla/rope_head_dim", a.rope_head_dim, kWidthOrNoneRange);
        checkInt(d, "/mla/v_head_dim", a.v_head_dim, kWidthRange);
    } else if (m.head_dim != 0) {
        checkInt(d, "/head_dim", m.head_dim, kWidthRange);
    } else if (headsOk && hiddenOk && m.hidden % m.heads != 0) {
        d.error("/heads", "must divide hidden (" + str(m.hidden) + "), got " + str(m.heads));
    }
    if (m.moe && !d.isBad("/moe")) {
        const MoeConfig& e = *m.moe;
        const bool expertsOk =
            checkInt(d, "/moe/experts", e.experts, kExpertsRange) && !d.isBad("/moe/experts");
        if (checkInt(d, "/moe/top_k", e.top_k, kExpertsRange) && !d.isBad("/moe/top_k") &&
            expertsOk && e.top_k > e.experts)
            d.error("/moe/top_k",
                    "must be at most experts (" + str(e.experts) + "), got " + str(e.top_k));
        checkInt(d, "/moe/expert_ffn_hidden", e.expert_ffn_hidden, kWidthRange);
        checkInt(d, "/moe/shared_experts", e.shared_experts, kSharedExpertsRange);
        if (checkInt(d, "/moe/dense_layers", e.dense_layers, kDenseLayersRange) &&
            !d.isBad("/moe/dense_layers") && layersOk && e.dense_layers >= m.layers)
            d.error("/moe/dense_layers",
                    "must be less than layers (" + str(m.layers) + "), got " + str(e.dense_layers));
        checkNumber(d, "/moe/capacity_factor", e.capacity_factor, kAtLeastOne);
        const bool groupsOk =
            checkInt(d, "/moe/router_groups", e.router_groups, kSharedExpertsRange) &&
            !d.isBad("/moe/router_groups");
        const bool topkOk =
            checkInt(d, "/moe/router_group_topk", e.router_group_topk, kSharedExpertsRange) &&
            !d.isBad("/moe/router_group_topk");
        if (groupsOk && topkOk && expertsOk && !d.isBad("/moe/top_k")) {
            if ((e.router_groups > 0) != (e.router_group_topk > 0))
                d.error(e.router_groups > 0 ? "/moe/router_group_topk" : "/moe/router_groups",
                        "router_groups and router_group_topk go together (group-limited "
                        "routing), got " +
                            str(e.router_groups) + " groups, top " + str(e.router_group_topk));
            else if (e.router_groups > 0 && e.experts % e.router_groups != 0)
                d.error("/moe/router_groups", "must divide experts (" + str(e.experts) + "), got " +
                                                  str(e.router_groups));
            else if (e.router_group_topk > e.router_groups)
                d.error("/moe/router_group_topk", "must be at most router_groups (" +
                                                      str(e.router_groups) + "), got " +
                                                      str(e.router_group_topk));
            else if (e.router_groups > 0 &&
                     e.top_k > e.router_group_topk * (e.experts / e.router_groups))
                d.error("/moe/router_group_topk",
                        "leaves " + str(e.router_group_topk * (e.experts / e.router_groups)) +
                            " experts for top_k " + str(e.top_k));
        }
    }
    if (m.sliding_window) {
        checkInt(d, "/sliding_window/size", m.sliding_window->size, kSequenceRange);
        checkInt(d, "/sliding_window/full_every", m.sliding_window->full_every, kMtpLayersRange);
    }
}

void checkPlan(const Plan& p, Diagnostics& d) {
    checkName(d, "/name", p.name);
    if (p.routing)
        checkNumber(d, "/routing/ecmp_tolerance", p.routing->ecmp_tolerance, kNonNegative);
    const bool seqOk = checkInt(d, "/sequence_length", p.sequence_length, kSequenceRange) &&
                       !d.isBad("/sequence_length");
    const bool globalOk =
        checkInt(d, "/global_batch_sequences", p.global_batch_sequences, kBatchRange) &&
        !d.isBad("/global_batch_sequences");
    const bool microOk =
        checkInt(d, "/micro_batch_sequences", p.micro_batch_sequences, kBatchRange) &&
        !d.isBad("/micro_batch_sequences");
    const Parallelism& g = p.parallelism;
    const auto degreeOk = [&](const char* key, int v) {
        const std::string at = std::string("/parallelism/") + key;
        return checkInt(d, at, v, kDegreeRange) && !d.isBad(at);
    };
    const bool tpOk = degreeOk("tp", g.tp);
    const bool cpOk = degreeOk("cp", g.cp);
    const bool ppOk = degreeOk("pp", g.pp);
    const bool dpOk = degreeOk("dp", g.dp);
    const bool epOk = degreeOk("ep", g.ep);
    if (tpOk && cpOk && ppOk && dpOk && jobGpus(g) > kMaxJobGpus)
        d.error("/parallelism", "tp*cp*pp*dp must be at most " + str(kMaxJobGpus) + " GPUs");
    else if (ppOk && dpOk && std::int64_t(g.pp) * g.dp > kMaxGridCells)
        d.error("/parallelism", "pp*dp must be at most " + str(kMaxGridCells) + ", got " +
                                    str(g.pp) + "*" + str(g.dp));
    else if (ppOk && dpOk && epOk && double(g.pp) * g.dp * g.ep > double(kMaxExpertPairs))
        d.error("/parallelism/ep", "pp*dp*ep must be at most " + str(kMaxExpertPairs) +
                                       " (expert all-to-all pairs), got " + str(g.pp) + "*" +
                                       str(g.dp) + "*" + str(g.ep));
    const bool etpOk = g.etp == 0 || degreeOk("etp", g.etp);
    if (etpOk && tpOk && g.etp > 0 && g.tp % g.etp != 0) {
        d.error("/parallelism/etp", "must divide tp (" + str(g.tp) + "), got " + str(g.etp));
    } else if (etpOk && tpOk && cpOk) {
        if (g.expertTp() < g.tp && !p.sequence_parallel)
            d.error("/parallelism/etp",
                    "experts on fewer ranks than tp (" + str(g.etp) + " < " + str(g.tp) +
                        ") need sequence_parallel: each TP rank dispatches its own sequence "
                        "shard to the experts");
        // The experts fold each cell's (tp / etp) x cp ranks into expert
        // parallelism first, then whole replicas (Parallelism::ep).
        const int inCell = g.expertRanksPerCell();
        if (epOk && dpOk && !g.expertGroupsFit()) {
            if (inCell == 1)
                d.error("/parallelism/ep", "must divide dp (" + str(g.dp) + "), got " + str(g.ep));
            else
                d.error("/parallelism/ep",
                        "an expert group takes the (tp/etp)*cp = " + str(g.tp / g.expertTp()) +
                            "*" + str(g.cp) + " = " + str(inCell) +
                            " ranks of a TP x CP cell first, then whole replicas: ep must "
                            "divide " +
                            str(inCell) + " or be a multiple of it by a divisor of dp (" +
                            str(g.dp) + "), got " + str(g.ep));
        }
    }
    if (cpOk && seqOk) {
        if (p.sequence_length % g.cp != 0)
            d.error("/parallelism/cp", "must divide sequence_length (" + str(p.sequence_length) +
                                           "), got " + str(g.cp));
        else if (g.cp > 1 && p.sequence_length % (2 * std::int64_t(g.cp)) != 0)
            d.error("/parallelism/cp",
                    "2*cp must divide sequence_length (" + str(p.sequence_length) +
                        ") so that causal attention splits into balanced chunks, got cp = " +
                        str(g.cp));
    }
    checkInt(d, "/ep_dispatcher_sms", p.ep_dispatcher_sms, kDispatcherSmsRange);
    // Hierarchical CP: the all-to-all group is a proper divisor of cp, and
    // the ring it feeds is Transformer Engine's.
    if (checkInt(d, "/cp_a2a_size", p.cp_a2a_size, kDegreeRange) && !d.isBad("/cp_a2a_size") &&
        p.cp_a2a_size > 1) {
        if (p.cp_ring != CpRing::TeP2p)
            d.error("/cp_a2a_size", std::string("applies to cp_ring te-p2p (Megatron's a2a+p2p), "
                                                "got cp_ring ") +
                                        toString(p.cp_ring));
        else if (cpOk && (g.cp % p.cp_a2a_size != 0 || p.cp_a2a_size == g.cp))
            d.error("/cp_a2a_size", "must divide cp (" + str(g.cp) +
                                        ") and be less than it (cp_ring te-a2a is "
                                        "the all-to-all over all of cp), got " +
                                        str(p.cp_a2a_size));
    }
    bool batchOk = globalOk && microOk && dpOk;
    if (batchOk && p.global_batch_sequences % (p.micro_batch_sequences * g.dp) != 0) {
        d.error("/global_batch_sequences", "must be a multiple of micro_batch_sequences*dp (" +
                                               str(p.micro_batch_sequences) + "*" + str(g.dp) +
                                               " = " + str(p.micro_batch_sequences * g.dp) +
                                               "), got " + str(p.global_batch_sequences));
        batchOk = false;
    }
    checkInt(d, "/zero_stage", p.zero_stage, kZeroStageRange);
    // HSDP: the sharding group divides dp, and something is sharded; expert
    // parallelism and the outer sync across buildings group the replicas
    // their own way (dpShardProblem holds the rules).
    if (p.dp_shard != 0 && dpOk && checkInt(d, "/dp_shard", p.dp_shard, kDegreeRange) &&
        !d.isBad("/dp_shard")) {
        switch (dpShardProblem(p)) {
        case DpShardProblem::None:
            break;
        case DpShardProblem::NotDividing:
            d.error("/dp_shard", "must divide dp (" + str(g.dp) + "), got " + str(p.dp_shard));
            break;
        case DpShardProblem::NothingSharded:
            d.error("/dp_shard", "groups the ranks ZeRO shards over, and zero_stage 0 shards "
                                 "nothing: leave dp_shard out or set zero_stage 1 to 3");
            break;
        case DpShardProblem::ExpertParallel:
            d.error("/dp_shard", "HSDP with expert parallelism is not modelled (the experts' "
                                 "data-parallel group is dp / ep): leave dp_shard out or set "
                                 "ep 1");
            break;
        case DpShardProblem::Compression:
            d.error("/dp_shard", "compressing the replicas' all-reduce is not modelled: leave "
                                 "dp_shard or compression out");
            break;
        case DpShardProblem::OuterSync:
            d.error("/dp_shard", "outer_sync already groups the replicas, by building: leave "
                                 "dp_shard or outer_sync out");
            break;
        }
    }
    // FSDP (ZeRO-3) reduce-scatters: its units' gradients are sharded as
    // they are reduced (torch FSDP, DeepSpeed stage 3).
    if (!p.grad_reduce_scatter && p.zero_stage == 3)
        d.error("/grad_reduce_scatter", "false all-reduces the gradients of a sharded optimizer "
                                        "(ZeRO-1 or 2); ZeRO-3 always reduce-scatters them: leave "
                                        "it out or set zero_stage 1 or 2");
    // Megatron: --recompute-method and --recompute-num-layers select the
    // layers of full recompute; "selective always uses all layers".
    if (checkInt(d, "/recompute_layers", p.recompute_layers, kRecomputeLayersRange) &&
        !d.isBad("/recompute_layers") && p.recompute != Recompute::Full &&
        (p.recompute_layers != 1 || p.recompute_method != RecomputeMethod::Uniform))
        d.error(p.recompute_layers != 1 ? "/recompute_layers" : "/recompute_method",
                std::string("selects the layers of full recompute; recompute is '") +
                    toString(p.recompute) + "'");

    const bool vOk =
        checkInt(d, "/schedule/virtual_stages", p.schedule.virtual_stages, kVirtualStagesRange) &&
        !d.touched("/schedule");
    if (vOk) {
        if (p.schedule.kind == ScheduleKind::Interleaved) {
            // Its virtual stages go round a pipeline: with one stage there
            // is none (Megatron-LM's validate_args asserts pp > 1, torchtitan
            // builds no schedule without pipeline_parallel_degree > 1).
            if (ppOk && g.pp < 2)
                d.error("/schedule/kind", "the interleaved schedule needs a pipeline (pp >= 2), "
                                          "got pp = " +
                                              str(g.pp) + ": use 1f1b");
            else if (p.schedule.virtual_stages < 2)
                d.error("/schedule/virtual_stages",
                        "the interleaved schedule needs at least 2 virtual stages, got " +
                            str(p.schedule.virtual_stages));
            else if (batchOk && ppOk && p.microbatches() % g.pp != 0)
                d.error("/global_batch_sequences",
                        "the interleaved schedule needs the number of microbatches (" +
                            str(p.microbatches()) + ") to be a multiple of pp (" + str(g.pp) + ")");
            // CrossPipe's extra warm-up is defined for one chunk per stage:
            // with interleaving, stage 0's extra forwards wait on the last
            // stage's, which wait on stage 0's backwards (the chunks wrap
            // around the pipeline), and the order deadlocks.
            if (p.schedule.latency_hiding)
                d.error("/schedule/latency_hiding",
                        "latency-aware warm-up works with the 1f1b and zero-bubble schedules, "
                        "not with interleaved (its chunks wrap around the pipeline)");
        } else if (p.schedule.virtual_stages != 1) {
            d.error("/schedule/virtual_stages",
                    std::string("must be 1 for the ") + toString(p.schedule.kind) +
                        " schedule (only interleaved uses virtual stages), got " +
                        str(p.schedule.virtual_stages));
        }
    }
    // The pipeline is simulated op by op.
    if (vOk && batchOk && ppOk && !d.isBad("/global_batch_sequences") &&
        double(g.pp) * p.schedule.virtual_stages * double(p.microbatches()) >
            double(kMaxPipelineSlots))
        d.error("/global_batch_sequences", "pp*virtual_stages*microbatches must be at most " +
                                               str(kMaxPipelineSlots) + ", got " + str(g.pp) + "*" +
                                               str(p.schedule.virtual_stages) + "*" +
                                               str(p.microbatches()));

    if (!d.touched("/rank_order")) {
        std::vector<Dim> sorted = p.rank_order;
        std::sort(sorted.begin(), sorted.end());
        if (sorted != std::vector<Dim>{Dim::TP, Dim::CP, Dim::PP, Dim::DP})
            d.error("/rank_order",
                    "must be a permutation of tp, cp, pp, dp, got " + rankOrderText(p.rank_order));
        else if (tpOk && cpOk && ppOk && dpOk)
            if (const auto split = p.modelParallelSplit())
                d.error("/rank_order",
                        std::string("puts ") + toString(split->second) + " (" +
                            str(g.of(split->second)) + ") inside " + toString(split->first) + " (" +
                            str(g.of(split->first)) +
                            "): tp and cp must be the innermost dimensions, in either order, so "
                            "that each model-parallel group of tp*cp GPUs takes consecutive ranks "
                            "(as Megatron-Core's and torchtitan's orders do); got " +
                            rankOrderText(p.rank_order));
    }

    if (p.placement && !d.isBad("/placement")) {
        const Placement& pl = *p.placement;
        if (pl.runs.size() > static_cast<std::size_t>(kMaxPlacementRuns) &&
            !d.isBad("/placement/runs"))
            d.error("/placement/runs", "must list at most " + str(kMaxPlacementRuns) +
                                           " runs, got " +
                                           str(static_cast<std::int64_t>(pl.runs.size())));
        for (std::size_t i = 0; i < pl.runs.size(); ++i) {
            const PlacementRun& r = pl.runs[i];
            const std::string at = childPath("/placement/runs", i);
            const auto range = [&](const char* key, int first, int last, bool degreeKnown,
                                   const char* degree, int size) {
                const std::string rp = at + "/" + key;
                if (d.touched(rp) || !degreeKnown)
                    return;
                if (first < 0 || first > last || last >= size)
                    d.error(rp, std::string("must be [first, last] with 0 <= first <= last < ") +
                                    degree + " (" + str(size) + "), got [" + str(first) + ", " +
                                    str(last) + "]");
            };
            range("stages", r.stage_first, r.stage_last, ppOk, "pp", g.pp);
            range("replicas", r.replica_first, r.replica_last, dpOk, "dp", g.dp);
            checkName(d, at + "/building", r.building);
        }
        if (!pl.layers_per_stage.empty() && !d.isBad("/placement/layers_per_stage")) {
            for (std::size_t i = 0; i < pl.layers_per_stage.size(); ++i)
                checkInt(d, childPath("/placement/layers_per_stage", i), pl.layers_per_stage[i],
                         kLayersRange);
            if (ppOk && pl.layers_per_stage.size() != static_cast<std::size_t>(g.pp))
                d.error("/placement/layers_per_stage",
                        "must have one entry per pipeline stage (pp = " + str(g.pp) + "), got " +
                            str(static_cast<std::int64_t>(pl.layers_per_stage.size())));
        }
    }

    for (const auto& [link, o] : p.link_technologies) {
        const std::string at = childPath("/link_technologies", link);
        if (link.empty() && !d.isBad(at))
            d.error(at, "a link override needs a non-empty link name");
        if (o.flows != 0)
            checkInt(d, at + "/flows", o.flows, kFlowsRange);
        checkNcclKnobs(d, at, o, "an override sets");
    }
    checkNumber(d, "/dp_bucket_mib", p.dp_bucket_mib, kPositive);
    checkNumber(d, "/hidden_dropout", p.hidden_dropout, kProbability);
    checkNumber(d, "/attention_dropout", p.attention_dropout, kProbability);
    if (p.grad_reduce_bytes != 2 && p.grad_reduce_bytes != 4 && !d.isBad("/grad_reduce_bytes"))
        d.error("/grad_reduce_bytes", "must be 2 or 4, got " + str(p.grad_reduce_bytes));
    if (p.dp_compression && !d.isBad("/compression/dp")) {
        const Compression& c = *p.dp_compression;
        if (c.method == CompressionMethod::TopK) {
            checkNumber(d, "/compression/dp/topk_ratio", c.topk_ratio, kFraction);
            // Sparse vectors do not add up along a ring or tree: top-k is an
            // all-gather of each building's pairs, after a reduce-scatter
            // inside each building.
            if (p.algoFor(Dim::DP) != CollectiveAlgo::Hierarchical &&
                !d.isBad("/compression/dp/method"))
                d.error("/compression/dp/method",
                        std::string("topk needs the hierarchical DP algorithm (sparse gradients "
                                    "do not add up along a ") +
                            (p.algoFor(Dim::DP) == CollectiveAlgo::Tree ? "tree" : "ring") +
                            "); use \"collectives\": {\"dp\": \"hierarchical\"}");
        } else {
            const Compression defaults;
            const std::string m = toString(c.method);
            if (c.topk_ratio != defaults.topk_ratio && !d.isBad("/compression/dp/topk_ratio"))
                d.error("/compression/dp/topk_ratio",
                        "applies to method topk only, not " + m + "; leave it out");
            if (c.error_feedback != defaults.error_feedback &&
                !d.isBad("/compression/dp/error_feedback"))
                d.error("/compression/dp/error_feedback",
                        "applies to method topk only, not " + m + "; leave it out");
        }
    }
    if (p.outer_sync && !d.isBad("/outer_sync")) {
        const OuterSync& o = *p.outer_sync;
        checkInt(d, "/outer_sync/inner_steps", o.inner_steps, kOuterStepsRange);
        checkInt(d, "/outer_sync/fragments", o.fragments, kOuterStepsRange);
        checkInt(d, "/outer_sync/overlap_steps", o.overlap_steps, kOuterStepsRange);
        checkNumber(d, "/outer_sync/outer_bytes", o.outer_bytes, kOuterBytesRange);
        if (o.loss_penalty)
            checkNumber(d, "/outer_sync/loss_penalty", *o.loss_penalty, kLossPenaltyRange);
        if (o.method == OuterSyncMethod::Hsdp && o.inner_steps != 1 &&
            !d.isBad("/outer_sync/inner_steps"))
            d.error("/outer_sync/inner_steps", "hsdp synchronises every step; leave it out");
        // Streaming DiLoCo syncs one fragment every inner_steps / fragments
        // steps; its sync must end before the same fragment's next one.
        if (o.method == OuterSyncMethod::StreamingDiloco && o.fragments >= 1 &&
            o.inner_steps >= 1) {
            if (o.fragments > o.inner_steps && !d.isBad("/outer_sync/fragments"))
                d.error("/outer_sync/fragments", "must be at most inner_steps (" +
                                                     str(o.inner_steps) + "), got " +
                                                     str(o.fragments));
            else if (o.overlap_steps > o.inner_steps && !d.isBad("/outer_sync/overlap_steps"))
                d.error("/outer_sync/overlap_steps", "must be at most inner_steps (" +
                                                         str(o.inner_steps) + "), got " +
                                                         str(o.overlap_steps));
        }
    }
    checkInt(d, "/checkpoint/interval_steps", p.checkpoint.interval_steps, kCheckpointStepsRange);
    checkNumber(d, "/token_budget", p.token_budget, kNonNegative);
    checkNumber(d, "/target_loss", p.target_loss, kNonNegative);
}

void checkAcross(const Scenario& s, Diagnostics& dc, Diagnostics& dm, Diagnostics& dp) {
    checkAcross(&s.cluster, s.model, s.plan, dc, dm, dp);
}

void checkAcross(const Cluster* cluster, const Model& m, const Plan& p, Diagnostics& dc,
                 Diagnostics& dm, Diagnostics& dp) {
    // Without a cluster: no buildings, links or GPU models to check against
    // (the flags below skip those checks).
    static const Cluster kNone;
    const Cluster& c = cluster ? *cluster : kNone;
    const bool haveCluster = cluster != nullptr;
    const Parallelism& g = p.parallelism;
    // Degrees and sizes that failed their own checks are not used below.
    const auto good = [](Diagnostics& d, const std::string& path, std::int64_t v) {
        return v > 0 && !d.isBad(path);
    };
    const bool tpOk = good(dp, "/parallelism/tp", g.tp);
    const bool ppOk = good(dp, "/parallelism/pp", g.pp);
    const bool epOk = good(dp, "/parallelism/ep", g.ep);
    const bool layersOk = good(dm, "/layers", m.layers);
    const bool vOk = good(dp, "/schedule/virtual_stages", p.schedule.virtual_stages);

    // GPUs: the job may use part of the cluster, never more.
    if (haveCluster && !dp.touched("/parallelism") && !dc.touched("/buildings")) {
        const std::int64_t need = jobGpus(g);
        const std::int64_t have = c.totalGpus();
        if (need <= kMaxJobGpus && need > have)
            dp.error("/parallelism",
                     "tp*cp*pp*dp = " + str(need) + " GPUs but the cluster has " + str(have));
    }

    // The flex dispatcher's kernels leave SMs to the compute (HybridEP's
    // Configurer asserts sm_count >= its blocks; DeepEP's Buffer likewise).
    if (p.ep_dispatcher_sms > 0 && !dp.isBad("/ep_dispatcher_sms"))
        for (const Building& b : c.buildings) {
            const GpuModel* gpu = c.gpuOf(b);
            if (gpu && gpu->sms > 0 && p.ep_dispatcher_sms >= gpu->sms) {
                dp.error("/ep_dispatcher_sms", "must be fewer than the GPU's SMs: building '" +
                                                   b.name + "' has " + b.gpu_model + " (" +
                                                   str(gpu->sms) + " SMs), got " +
                                                   str(p.ep_dispatcher_sms));
                break;
            }
        }

    if (tpOk) {
        // TP stays inside a host's NVLink domain.
        for (std::size_t i = 0; i < c.buildings.size(); ++i) {
            const Building& b = c.buildings[i];
            if (b.gpus_per_host <= 0 || dc.isBad(childPath("/buildings", i) + "/gpus_per_host"))
                continue;
            if (b.gpus_per_host % g.tp != 0) {
                dp.error("/parallelism/tp",
                         "must divide gpus_per_host of every building (TP stays inside a host's "
                         "NVLink domain); building '" +
                             b.name + "' has " + str(b.gpus_per_host) + ", got " + str(g.tp));
                break;
            }
            // With cp inside tp in the rank order a TP group spans tp*cp
            // consecutive ranks.
            const std::int64_t span = p.rankStride(Dim::TP) * g.tp;
            if (span > g.tp && !dp.touched("/rank_order") && b.gpus_per_host % span != 0) {
                dp.error("/rank_order",
                         "puts cp inside tp, so each TP group spans tp*cp = " + str(span) +
                             " GPUs, which must divide gpus_per_host of every building (TP "
                             "stays inside a host's NVLink domain); building '" +
                             b.name + "' has " + str(b.gpus_per_host) + ": put tp first");
                break;
            }
        }
        if (good(dm, "/heads", m.heads) && m.heads % g.tp != 0)
            dp.error("/parallelism/tp",
                     "must divide the model's heads (" + str(m.heads) + "), got " + str(g.tp));
        // KV heads are split over TP ranks, or replicated when there are fewer of them.
        if (good(dm, "/kv_heads", m.kv_heads) && m.kv_heads % g.tp != 0 && g.tp % m.kv_heads != 0)
            dp.error("/parallelism/tp", "must divide the model's kv_heads (" + str(m.kv_heads) +
                                            ") or be a multiple of it, got " + str(g.tp));
        if (good(dm, "/ffn_hidden", m.ffn_hidden) && m.ffn_hidden % g.tp != 0)
            dp.error("/parallelism/tp", "must divide the model's ffn_hidden (" + str(m.ffn_hidden) +
                                            "), got " + str(g.tp));
        if (m.moe && good(dm, "/moe/expert_ffn_hidden", m.moe->expert_ffn_hidden) &&
            m.moe->expert_ffn_hidden % g.tp != 0)
            dp.error("/parallelism/tp", "must divide the model's moe.expert_ffn_hidden (" +
                                            str(m.moe->expert_ffn_hidden) + "), got " + str(g.tp));
    }

    // Transformer Engine's all-to-all CP (AttnFuncWithCPAndQKVOA2A) splits
    // a TP rank's heads over the cp ranks: it asserts num_heads % cp_size
    // == 0 for Q and for K and V.
    const bool cpGood = good(dp, "/parallelism/cp", g.cp);
    if (tpOk && cpGood && g.cp > 1 && p.cp_ring == CpRing::TeA2a && good(dm, "/heads", m.heads) &&
        good(dm, "/kv_heads", m.kv_heads) && m.heads % g.tp == 0 && !m.headsSplitOver(g.tp, g.cp))
        dp.error("/cp_ring", "te-a2a splits each TP rank's attention heads over the cp ranks: a "
                             "rank's heads (" +
                                 str(m.heads / g.tp) + ") and KV heads (" +
                                 str(int(m.kvHeadsPerRank(g.tp))) + ") must be multiples of cp (" +
                                 str(g.cp) + "); te-p2p and te-allgather do not need it");
    // Its hierarchical form splits them over the all-to-all group only.
    const int a2a = p.cp_a2a_size;
    if (tpOk && cpGood && g.cp > 1 && p.cp_ring == CpRing::TeP2p && a2a > 1 && g.cp % a2a == 0 &&
        good(dm, "/heads", m.heads) && good(dm, "/kv_heads", m.kv_heads) && m.heads % g.tp == 0 &&
        !m.headsSplitOver(g.tp, a2a))
        dp.error("/cp_a2a_size", "splits each TP rank's attention heads over the all-to-all "
                                 "group: a rank's heads (" +
                                     str(m.heads / g.tp) + ") and KV heads (" +
                                     str(int(m.kvHeadsPerRank(g.tp))) +
                                     ") must be multiples of cp_a2a_size (" + str(a2a) + ")");

    const bool haveLayerSplit = p.placement && !p.placement->layers_per_stage.empty();
    if (ppOk && vOk && layersOk) {
        const std::int64_t chunks = std::int64_t(g.pp) * p.schedule.virtual_stages;
        if (chunks > m.layers)
            dp.error("/parallelism/pp", "pp*virtual_stages (" + str(g.pp) + "*" +
                                            str(p.schedule.virtual_stages) + " = " + str(chunks) +
                                            ") must not exceed the model's layers (" +
                                            str(m.layers) + ")");
        else if (p.schedule.kind == ScheduleKind::Interleaved && !haveLayerSplit &&
                 m.layers % chunks != 0)
            dp.error("/schedule/virtual_stages",
                     "the interleaved schedule needs the model's layers (" + str(m.layers) +
                         ") to be a multiple of pp*virtual_stages (" + str(g.pp) + "*" +
                         str(p.schedule.virtual_stages) + " = " + str(chunks) +
                         "), or placement.layers_per_stage");
    }

    if (epOk) {
        if (!m.moe) {
            if (g.ep > 1)
                dp.error("/parallelism/ep", "ep = " + str(g.ep) +
                                                " needs a mixture-of-experts model, but the "
                                                "model has no moe");
            if (g.etp > 0 && g.etp != g.tp && !dp.isBad("/parallelism/etp"))
                dp.error("/parallelism/etp", "etp = " + str(g.etp) +
                                                 " needs a mixture-of-experts model, but the "
                                                 "model has no moe");
        } else if (good(dm, "/moe/experts", m.moe->experts) && m.moe->experts % g.ep != 0) {
            dp.error("/parallelism/ep", "must divide the model's moe.experts (" +
                                            str(m.moe->experts) + "), got " + str(g.ep));
        }
    }

    if (p.placement && !dp.isBad("/placement")) {
        const bool namesKnown = haveCluster && !dc.touched("/buildings");
        for (std::size_t i = 0; i < p.placement->runs.size() && namesKnown; ++i) {
            const PlacementRun& r = p.placement->runs[i];
            const std::string at = childPath("/placement/runs", i) + "/building";
            if (!r.building.empty() && !dp.isBad(at) && c.buildingIndex(r.building) < 0)
                dp.error(at, "no building named '" + r.building + "' in the cluster");
        }
        const auto& lps = p.placement->layers_per_stage;
        if (!lps.empty() && ppOk && layersOk && lps.size() == static_cast<std::size_t>(g.pp) &&
            !dp.touched("/placement/layers_per_stage")) {
            const std::int64_t sum = std::accumulate(lps.begin(), lps.end(), std::int64_t(0));
            if (sum != m.layers)
                dp.error("/placement/layers_per_stage",
                         "sums to " + str(sum) + " but the model has " + str(m.layers) + " layers");
        }
    }

    if (haveCluster && !dc.touched("/links")) {
        for (const auto& [link, o] : p.link_technologies) {
            const std::string at = childPath("/link_technologies", link);
            if (dp.isBad(at))
                continue;
            // clang 14 cannot capture a structured binding.
            const std::string& wanted = link;
            const bool exists = std::any_of(c.links.begin(), c.links.end(), [&](const Link& l) {
                return (l.name.empty() ? l.a + "-" + l.b : l.name) == wanted;
            });
            if (!exists)
                dp.error(at, "no link named '" + link + "' in the cluster");
            if (!o.technology.empty() && !dp.isBad(at + "/technology") &&
                !dc.touched("/technologies") && !knownTechnology(c, o.technology))
                dp.error(at + "/technology", unknownTechnology(c, o.technology));
        }
    }

    // Transformer Engine's CP runs windowed attention only by all-to-all or
    // all-gather (context_parallel.py attn_forward_func_with_cp: "Context
    // parallelism does not support sliding window attention with
    // cp_comm_type"); PyTorch's SDPA takes no window.
    if (m.sliding_window && p.parallelism.cp > 1 && p.cp_ring != CpRing::TeA2a &&
        p.cp_ring != CpRing::TeAllGather && !dm.isBad("/sliding_window"))
        dp.error("/cp_ring",
                 std::string("context parallelism over windowed attention runs as te-a2a or "
                             "te-allgather (Transformer Engine refuses its ring), got ") +
                     toString(p.cp_ring));
    // Megatron-Core refuses drop-and-pad under DeepEP (TransformerConfig:
    // "Flex token dispatcher with deepep backend does not support
    // moe_pad_expert_input_to_capacity").
    if (m.moe && m.moe->padded() && p.parallelism.ep > 1 && p.ep_dispatcher == EpDispatcher::Flex &&
        !dm.isBad("/moe"))
        dp.error("/ep_dispatcher",
                 "flex (DeepEP) does not pad experts to capacity, but the model's moe pads them "
                 "(capacity_factor above 1 or pad_to_capacity true): use alltoall or hybridep, or "
                 "set pad_to_capacity to false");
    if (p.fp8_param_gather && m.dtype != DType::FP8 && !dm.isBad("/dtype"))
        dp.error("/fp8_param_gather",
                 "gathers the weights of FP8 linear layers, but the model's dtype is 'bf16' "
                 "(set it to 'fp8', or fp8_param_gather to false)");
    if (m.dtype == DType::FP8 && !dm.isBad("/dtype")) {
        for (std::size_t i = 0; i < c.buildings.size(); ++i) {
            const Building& b = c.buildings[i];
            const GpuModel* gpu = c.gpuOf(b);
            if (gpu && !(gpu->peak_tflops_fp8 > 0)) {
                dm.error("/dtype",
                         "fp8 needs GPUs with FP8 support, but GPU model '" + b.gpu_model +
                             "' (building '" + b.name +
                             "') has peak_tflops.fp8 = " + formatNumber(gpu->peak_tflops_fp8));
                break;
            }
        }
    }
}

} // namespace sa::formats

namespace sa {

std::vector<Diagnostic> validateScenario(const Scenario& s, const SourceNames& names) {
    formats::Diagnostics dc(names.cluster), dm(names.model), dp(names.plan);
    formats::checkCluster(s.cluster, dc);
    formats::checkModel(s.model, dm);
    formats::checkPlan(s.plan, dp);
    formats::checkAcross(s, dc, dm, dp);
    std::vector<Diagnostic> out = dc.take();
    for (auto* d : {&dm, &dp}) {
        auto more = d->take();
        out.insert(out.end(), more.begin(), more.end());
    }
    return out;
}

std::vector<Diagnostic> validateModelAndPlan(const Model& m, const Plan& p,
                                             const SourceNames& names) {
    formats::Diagnostics dc(names.cluster), dm(names.model), dp(names.plan);
    formats::checkModel(m, dm);
    formats::checkPlan(p, dp);
    formats::checkAcross(nullptr, m, p, dc, dm, dp);
    std::vector<Diagnostic> out = dm.take();
    auto more = dp.take();
    out.insert(out.end(), more.begin(), more.end());
    return out;
}

} // namespace sa

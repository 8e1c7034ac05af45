// Strict readers of the four documents. Each reader fills its value as far
// as it can, reports every problem it finds, and marks the paths that
// failed so the semantic checks that follow skip what they depend on.

#include "cost/network.h"
#include "formats/checks.h"
#include "formats/documents.h"
#include "formats/json_check.h"
#include "model/framework_defaults.h"

#include <filesystem>

namespace sa {

namespace {

using formats::childPath;
using formats::describe;
using formats::Diagnostics;
using formats::json;
using formats::ObjectReader;
using formats::Presence;
constexpr Presence kRequired = Presence::Required;
constexpr Presence kOptional = Presence::Optional;

// ---- JSON text ---------------------------------------------------------

// Tracks the open containers while nlohmann parses, to find duplicate keys
// (nlohmann keeps the last one silently) and absurd nesting.
class StructureWatch {
public:
    bool onEvent(int depth, json::parse_event_t event, const json& parsed) {
        switch (event) {
        case json::parse_event_t::object_start:
        case json::parse_event_t::array_start:
            if (depth > formats::kMaxNesting)
                tooDeep_ = true;
            stack_.push_back({event == json::parse_event_t::object_start, {}, {}, 0});
            break;
        case json::parse_event_t::key:
            if (!stack_.empty()) {
                Frame& f = stack_.back();
                f.lastKey = parsed.get<std::string>();
                if (!f.keys.insert(f.lastKey).second && duplicates_.size() < 20)
                    duplicates_.push_back({containerPath(), f.lastKey});
            }
            break;
        case json::parse_event_t::value:
            if (!stack_.empty() && !stack_.back().object)
                ++stack_.back().index;
            break;
        case json::parse_event_t::object_end:
        case json::parse_event_t::array_end:
            if (!stack_.empty())
                stack_.pop_back();
            if (!stack_.empty() && !stack_.back().object)
                ++stack_.back().index;
            break;
        }
        return true;
    }

    bool tooDeep() const { return tooDeep_; }
    const std::vector<std::pair<std::string, std::string>>& duplicates() const {
        return duplicates_;
    }

private:
    struct Frame {
        bool object = false;
        std::set<std::string> keys;
        std::string lastKey;
        std::size_t index = 0;
    };

    // Path of the innermost open container.
    std::string containerPath() const {
        std::string path;
        for (std::size_t i = 0; i + 1 < stack_.size(); ++i)
            path = stack_[i].object ? childPath(path, stack_[i].lastKey)
                                    : childPath(path, stack_[i].index);
        return path;
    }

    std::vector<Frame> stack_;
    std::vector<std::pair<std::string, std::string>> duplicates_;
    bool tooDeep_ = false;
};

// nlohmann's DOM parser with the watch on every event. json::parse with a
// callback is quadratic: closing an object scans its parent for discarded
// values, so an array of a million {} took hours. Parsing stops at the first
// container nested too deep.
class WatchedDomParser {
public:
    WatchedDomParser(json& result, StructureWatch& watch)
        : dom_(result, /*allow_exceptions=*/true)
        , watch_(watch) {}

    bool null() { return value() && dom_.null(); }
    bool boolean(bool v) { return value() && dom_.boolean(v); }
    bool number_integer(json::number_integer_t v) { return value() && dom_.number_integer(v); }
    bool number_unsigned(json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
    bool number_float(json::number_float_t v, const json::string_t& s) {
        return value() && dom_.number_float(v, s);
    }
    bool string(json::string_t& v) { return value() && dom_.string(v); }
    bool binary(json::binary_t& v) { return value() && dom_.binary(v); }
    bool key(json::string_t& k) {
        return watch_.onEvent(depth_, json::parse_event_t::key, json(k)) && dom_.key(k);
    }
    bool start_object(std::size_t n) {
        return open(json::parse_event_t::object_start) && dom_.start_object(n);
    }
    bool end_object() { return close(json::parse_event_t::object_end) && dom_.end_object(); }
    bool start_array(std::size_t n) {
        return open(json::parse_event_t::array_start) && dom_.start_array(n);
    }
    bool end_array() { return close(json::parse_event_t::array_end) && dom_.end_array(); }
    // Throws `ex` with its own type, as json::parse does.
    template <class Exception>
    bool parse_error(std::size_t position, const std::string& token, const Exception& ex) {
        return dom_.parse_error(position, token, ex);
    }

private:
    bool value() { return watch_.onEvent(depth_, json::parse_event_t::value, nullJson()); }
    bool open(json::parse_event_t event) {
        watch_.onEvent(depth_++, event, nullJson());
        return !watch_.tooDeep();
    }
    bool close(json::parse_event_t event) { return watch_.onEvent(--depth_, event, nullJson()); }
    static const json& nullJson() {
        static const json null;
        return null;
    }

    nlohmann::detail::json_sax_dom_parser<json> dom_;
    StructureWatch& watch_;
    int depth_ = 0;
};

std::string lineAndColumn(const std::string& text, std::size_t offset) {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// nlohmann's messages start with "[json.exception.parse_error.101] parse
// error at line 3, column 5: "; keep what a person needs.
std::string syntaxMessage(const std::string& what) {
    std::string m = what;
    if (auto close = m.find("] ");
        m.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
        m = m.substr(close + 2);
    if (m.rfind("parse error at ", 0) == 0)
        m = m.substr(15);
    return "invalid JSON at " + m;
}

std::optional<json> parseText(const std::string& text, Diagnostics& d) {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
        d.error("", "the document is empty (expected a JSON object)");
        return std::nullopt;
    }
    StructureWatch watch;
    json j;
    try {
        WatchedDomParser sax(j, watch);
        json::sax_parse(text, &sax, json::input_format_t::json, /*strict=*/true,
                        /*ignore_comments=*/false);
    } catch (const json::parse_error& e) {
        d.error("", syntaxMessage(e.what()));
        return std::nullopt;
    } catch (const json::exception& e) {
        // Number overflow ("1e400") and the like: no position from nlohmann.
        std::string m = e.what();
        if (auto close = m.find("] "); close != std::string::npos)
            m = m.substr(close + 2);
        if (auto q = m.find('\''); q != std::string::npos) {
            const std::string token = m.substr(q + 1, m.rfind('\'') - q - 1);
            if (auto at = text.find(token); !token.empty() && at != std::string::npos)
                m = "invalid JSON at " + lineAndColumn(text, at) + ": " + m;
        }
        d.error("", m);
        return std::nullopt;
    }
    if (watch.tooDeep()) {
        d.error("", "nesting deeper than " + std::to_string(formats::kMaxNesting) +
                        " levels is not a document");
        return std::nullopt;
    }
    // Reading goes on (nlohmann kept the last value) so that other problems show too.
    for (const auto& [path, key] : watch.duplicates())
        d.report(path, "duplicate key " + describe(json(key)));
    return j;
}

// ---- header ------------------------------------------------------------

// A document's name when it gives none: the stem of its file
// ("plans/pp-across.json" -> "pp-across"); a document inline in a scenario
// takes the scenario's stem, one parsed from text without a file its kind.
std::string defaultName(const Diagnostics& d, const char* kind) {
    const std::string stem = std::filesystem::path(d.file()).stem().string();
    return stem.empty() || d.file() == "<input>" ? std::string(kind) : stem;
}

void readName(ObjectReader& r, Diagnostics& d, std::string& name, const char* kind) {
    if (r.find("name", kOptional))
        r.string("name", name, kOptional, true);
    else
        name = defaultName(d, kind);
}

// "format" and "version". A document inside a scenario may leave them out.
// Returns false when the rest should not be read (another kind of document
// or another version: its keys would only produce noise).
bool readHeader(ObjectReader& r, Diagnostics& d, const char* format, bool inlinePart) {
    const Presence p = inlinePart ? kOptional : kRequired;
    if (const json* f = r.find("format", p)) {
        if (!f->is_string() || f->get_ref<const std::string&>() != format) {
            d.error(r.pathOf("format"),
                    std::string("must be '") + format + "', got " + describe(*f));
            return false;
        }
    }
    if (const json* v = r.find("version", p)) {
        const std::string supported = "supported versions: " + std::to_string(kFormatVersion);
        if (!v->is_number_integer()) {
            d.error(r.pathOf("version"),
                    "must be an integer (" + supported + "), got " + describe(*v));
            return false;
        }
        if (v->get<std::int64_t>() != kFormatVersion) {
            d.error(r.pathOf("version"),
                    "unsupported version " + describe(*v) + " (" + supported + ")");
            return false;
        }
    }
    return true;
}

bool requireRootObject(const json& j, Diagnostics& d) {
    if (j.is_object())
        return true;
    d.error("", "must be a JSON object, got " + describe(j));
    return false;
}

// ---- cluster -----------------------------------------------------------

void readGpuModel(const json& v, const std::string& at, Diagnostics& d, GpuModel& g) {
    if (!formats::requireObject(d, v, at))
        return;
    ObjectReader o(d, &v, at);
    ObjectReader peak = o.object("peak_tflops", kRequired);
    peak.number("bf16", g.peak_tflops_bf16, kRequired, formats::kPositive);
    peak.number("fp8", g.peak_tflops_fp8, kOptional, formats::kNonNegative);
    peak.finish();
    o.number("memory_gib", g.memory_gib, kRequired, formats::kPositive);
    o.number("hbm_tbps", g.hbm_tbps, kRequired, formats::kPositive);
    o.integer("sms", g.sms, kOptional, formats::kSmsRange);
    o.number("gemm_efficiency", g.gemm_efficiency, kOptional, formats::kFraction);
    o.number("gemm_efficiency_fp8", g.gemm_efficiency_fp8, kOptional, formats::kFraction);
    o.number("tdp_w", g.tdp_w, kOptional, formats::kGpuPowerWRange);
    o.number("power_limit_w", g.power_limit_w, kOptional, formats::kGpuPowerWRange);
    o.number("boost_clock_mhz", g.boost_clock_mhz, kOptional, formats::kNonNegative);
    o.number("sustained_clock_mhz", g.sustained_clock_mhz, kOptional, formats::kNonNegative);
    o.number("idle_w", g.idle_w, kOptional, formats::kGpuPowerWRange);
    GpuArch arch = GpuArch::Unknown;
    if (o.choice<GpuArch>("architecture", arch, kOptional,
                          {{"ampere", GpuArch::Ampere},
                           {"hopper", GpuArch::Hopper},
                           {"blackwell", GpuArch::Blackwell}}))
        g.architecture = toString(arch);
    o.finish();
}

void readBuilding(const json& v, const std::string& at, Diagnostics& d, Building& b) {
    if (!formats::requireObject(d, v, at))
        return;
    ObjectReader o(d, &v, at);
    o.string("name", b.name, kRequired, true);
    // A building without a region is a region of its own; without a GPU
    // model it has the cluster's only one (readCluster fills it in).
    if (o.find("region", kOptional))
        o.string("region", b.region, kOptional, true);
    else if (!b.name.empty())
        b.region = b.name;
    else
        d.markBad(o.pathOf("region"));
    o.string("gpu_model", b.gpu_model, kOptional, true);
    o.integer("gpus", b.gpus, kRequired, formats::kGpusRange);
    o.integer("gpus_per_host", b.gpus_per_host, kRequired, formats::kGpusPerHostRange);
    o.number("scale_up_gbps", b.scale_up_gbps, kRequired, formats::kScaleUpGbpsRange);
    o.number("scale_out_gbps", b.scale_out_gbps, kRequired, formats::kScaleOutGbpsRange);
    b.zone_gpus = b.gpus; // one zone unless told otherwise
    if (o.find("zone_gpus", kOptional) &&
        !o.integer("zone_gpus", b.zone_gpus, kOptional, formats::kGpusRange))
        b.zone_gpus = 0;
    o.number("zone_oversubscription", b.zone_oversubscription, kOptional,
             formats::kOversubscriptionRange);
    o.number("building_oversubscription", b.building_oversubscription, kOptional,
             formats::kOversubscriptionRange);
    // Calibrated tiers (docs/CALIBRATION.md): absent = the built-in values.
    auto measured = [&](const char* key, std::optional<double>& out,
                        const formats::NumberRange& range) {
        double value = 0;
        if (o.number(key, value, kOptional, range))
            out = value;
    };
    measured("scale_up_efficiency", b.scale_up_efficiency, formats::kFraction);
    measured("scale_up_latency_us", b.scale_up_latency_us, formats::kStepLatencyUs);
    measured("scale_out_efficiency", b.scale_out_efficiency, formats::kFraction);
    measured("scale_out_latency_us", b.scale_out_latency_us, formats::kStepLatencyUs);
    // Reliability, storage, prices, power (docs/RUN.md): 0 = the default.
    for (const auto& [key, member, range] : formats::kBuildingRunFields)
        o.number(key, b.*member, kOptional, *range);
    o.number("straggler_slowdown", b.straggler_slowdown, kOptional, formats::kStragglerRange);
    if (o.find("pue", kOptional))
        o.number("pue", b.pue, kOptional, formats::kPueRange);
    o.finish();
}

void readLink(const json& v, const std::string& at, Diagnostics& d, Link& l) {
    if (!formats::requireObject(d, v, at))
        return;
    ObjectReader o(d, &v, at);
    bool endsOk = false;
    if (const json* between = o.array("between", kRequired)) {
        const std::string bp = o.pathOf("between");
        if (between->size() != 2) {
            d.error(bp,
                    "must name two buildings, got " + std::to_string(between->size()) + " entries");
        } else {
            endsOk = true;
            std::string* ends[2] = {&l.a, &l.b};
            for (std::size_t k = 0; k < 2; ++k) {
                const json& e = (*between)[k];
                if (!e.is_string() || e.get_ref<const std::string&>().empty()) {
                    d.error(childPath(bp, k),
                            "must be a building name (a non-empty string), got " + describe(e));
                    endsOk = false;
                } else {
                    *ends[k] = e.get<std::string>();
                }
            }
        }
    }
    if (o.find("name", kOptional)) {
        o.string("name", l.name, kOptional, true);
    } else if (endsOk) {
        l.name = l.a + "-" + l.b;
    } else {
        d.markBad(o.pathOf("name"));
    }
    o.number("bandwidth_gbps", l.bandwidth_gbps, kRequired, formats::kLinkGbpsRange);
    o.number("latency_ms", l.latency_ms, kRequired, formats::kLinkLatencyMsRange);
    o.string("technology", l.technology, kOptional, true);
    o.number("background_gbps", l.background_gbps, kOptional, formats::kLinkGbpsOrNoneRange);
    o.number("price_per_gb_usd", l.price_per_gb_usd, kOptional, formats::kTransportPriceRange);
    o.number("degraded_fraction", l.degraded_fraction, kOptional, formats::kProbability);
    o.number("degraded_bandwidth_gbps", l.degraded_bandwidth_gbps, kOptional,
             formats::kLinkGbpsOrNoneRange);
    o.finish();
}

void readTechnology(const json& v, const std::string& at, Diagnostics& d, Technology& t) {
    if (!formats::requireObject(d, v, at))
        return;
    ObjectReader o(d, &v, at);
    o.number("efficiency", t.efficiency, kOptional, formats::kFraction);
    o.number("window_mib", t.window_mib, kOptional, formats::kNonNegative);
    o.integer("flows", t.flows, kOptional, formats::kFlowsRange);
    o.number("loss_rate", t.loss_rate, kOptional, formats::kProbability);
    o.boolean("lossless", t.lossless, kOptional);
    o.number("mtu_bytes", t.mtu_bytes, kOptional, formats::kPositive);
    o.number("per_message_us", t.per_message_us, kOptional, formats::kNonNegative);
    // NCCL's knobs (docs/FORMATS.md): the flows follow channels x QPs (or
    // sockets) unless `flows` is given too.
    const bool flowsGiven = o.find("flows", kOptional) != nullptr;
    o.integer("nccl_channels", t.nccl_channels, kOptional, formats::kNcclChannelsRange);
    o.integer("qps_per_connection", t.qps_per_connection, kOptional,
              formats::kQpsPerConnectionRange);
    o.integer("sockets_per_connection", t.sockets_per_connection, kOptional,
              formats::kSocketsPerConnectionRange);
    o.number("buffsize_mib", t.buffsize_mib, kOptional, formats::kPositive);
    if (usesNcclKnobs(t)) {
        const int flows = t.flows;
        completeNcclKnobs(t);
        if (flowsGiven)
            t.flows = flows;
    }
    o.number("host_gbps_per_core", t.host_gbps_per_core, kOptional, formats::kPositive);
    const bool coresGiven =
        o.integer("host_net_cores", t.host_net_cores, kOptional, formats::kHostNetCoresRange);
    if (coresGiven && !o.find("host_gbps_per_core", kOptional))
        t.host_gbps_per_core = kDefaultHostGbpsPerCore;
    o.integer("max_flows_per_host", t.max_flows_per_host, kOptional, formats::kFlowsRange);
    o.number("pfc_headroom_mib", t.pfc_headroom_mib, kOptional, formats::kPositive);
    o.number("port_gbps", t.port_gbps, kOptional, formats::kPositive);
    o.number("lossy_loss_rate", t.lossy_loss_rate, kOptional, formats::kProbability);
    o.finish();
}

// Reads an array of at most `limit` entries with `readOne(value, path)`.
template <class F>
void readArray(const json* a, const std::string& at, Diagnostics& d, std::int64_t limit,
               const char* what, F readOne) {
    if (!a)
        return;
    if (static_cast<std::int64_t>(a->size()) > limit) {
        d.error(at, "must list at most " + std::to_string(limit) + " " + what + ", got " +
                        std::to_string(a->size()));
        return;
    }
    for (std::size_t i = 0; i < a->size(); ++i)
        readOne((*a)[i], childPath(at, i));
}

// A cluster's or a plan's `routing` object (docs/FORMATS.md).
void readRouting(ObjectReader& parent, Routing& out) {
    ObjectReader routing = parent.object("routing", kOptional);
    routing.choice<RoutingPolicy>("policy", out.policy, kOptional,
                                  {{"shortest-hops", RoutingPolicy::ShortestHops},
                                   {"lowest-latency", RoutingPolicy::LowestLatency},
                                   {"ecmp", RoutingPolicy::Ecmp}});
    routing.choice<EcmpMetric>("ecmp_metric", out.ecmp_metric, kOptional,
                               {{"hops", EcmpMetric::Hops}, {"latency", EcmpMetric::Latency}});
    routing.number("ecmp_tolerance", out.ecmp_tolerance, kOptional, formats::kNonNegative);
    routing.finish();
}

Cluster readCluster(const json& j, Diagnostics& d, bool inlinePart) {
    Cluster c;
    if (!requireRootObject(j, d))
        return c;
    ObjectReader r(d, &j, "");
    if (!readHeader(r, d, kClusterFormat, inlinePart))
        return c;
    readName(r, d, c.name, "cluster");
    r.string("description", c.description, kOptional, false);
    ObjectReader models = r.object("gpu_models", kRequired);
    if (models.valid()) {
        for (const auto& [key, value] : models.node()->items()) {
            GpuModel g;
            g.name = key;
            readGpuModel(value, childPath("/gpu_models", key), d, g);
            c.gpu_models[key] = g;
        }
    }
    readArray(r.array("buildings", kRequired), "/buildings", d, formats::kMaxBuildings, "buildings",
              [&](const json& v, const std::string& at) {
                  Building b;
                  readBuilding(v, at, d, b);
                  if (v.is_object() && !v.contains("gpu_model")) {
                      if (c.gpu_models.size() == 1) {
                          b.gpu_model = c.gpu_models.begin()->first;
                      } else {
                          if (!d.isBad("/gpu_models"))
                              d.report(at,
                                       "missing required key 'gpu_model' (the cluster has " +
                                           std::to_string(c.gpu_models.size()) +
                                           " GPU models; it may be left out when there is one)");
                          d.markBad(at + "/gpu_model");
                      }
                  }
                  c.buildings.push_back(b);
              });
    readArray(r.array("links", kOptional), "/links", d, formats::kMaxLinks, "links",
              [&](const json& v, const std::string& at) {
                  Link l;
                  readLink(v, at, d, l);
                  c.links.push_back(l);
              });
    ObjectReader techs = r.object("technologies", kOptional);
    if (techs.valid()) {
        for (const auto& [key, value] : techs.node()->items()) {
            Technology t;
            t.name = key;
            readTechnology(value, childPath("/technologies", key), d, t);
            c.technologies[key] = t;
        }
    }
    readRouting(r, c.routing);
    r.finish();
    formats::checkCluster(c, d);
    return c;
}

// ---- model -------------------------------------------------------------

Model readModel(const json& j, Diagnostics& d, bool inlinePart) {
    Model m;
    if (!requireRootObject(j, d))
        return m;
    ObjectReader r(d, &j, "");
    if (!readHeader(r, d, kModelFormat, inlinePart))
        return m;
    readName(r, d, m.name, "model");
    r.string("description", m.description, kOptional, false);
    r.integer("layers", m.layers, kRequired, formats::kLayersRange);
    r.integer("hidden", m.hidden, kRequired, formats::kWidthRange);
    r.integer("ffn_hidden", m.ffn_hidden, kRequired, formats::kWidthRange);
    r.integer("heads", m.heads, kRequired, formats::kHeadsRange);
    // Without kv_heads the model has multi-head attention: a KV head per head.
    if (r.find("kv_heads", kOptional))
        r.integer("kv_heads", m.kv_heads, kOptional, formats::kHeadsRange);
    else
        m.kv_heads = m.heads;
    r.integer("head_dim", m.head_dim, kOptional, formats::kWidthRange);
    r.integer("vocab", m.vocab, kRequired, formats::kVocabRange);
    r.choice<MlpKind>("mlp", m.mlp, kOptional,
                      {{"swiglu", MlpKind::SwiGlu}, {"gelu", MlpKind::Gelu}});
    r.choice<DType>("dtype", m.dtype, kOptional, {{"bf16", DType::BF16}, {"fp8", DType::FP8}});
    r.boolean("tied_embeddings", m.tied_embeddings, kOptional);
    ObjectReader moe = r.object("moe", kOptional);
    if (moe.valid()) {
        MoeConfig e;
        moe.integer("experts", e.experts, kRequired, formats::kExpertsRange);
        moe.integer("top_k", e.top_k, kRequired, formats::kExpertsRange);
        moe.integer("expert_ffn_hidden", e.expert_ffn_hidden, kRequired, formats::kWidthRange);
        moe.integer("shared_experts", e.shared_experts, kOptional, formats::kSharedExpertsRange);
        moe.integer("dense_layers", e.dense_layers, kOptional, formats::kDenseLayersRange);
        moe.number("capacity_factor", e.capacity_factor, kOptional, formats::kAtLeastOne);
        if (moe.find("pad_to_capacity", kOptional)) {
            bool pad = false;
            moe.boolean("pad_to_capacity", pad, kOptional);
            e.pad_to_capacity = pad;
        }
        moe.integer("router_groups", e.router_groups, kOptional, formats::kSharedExpertsRange);
        moe.integer("router_group_topk", e.router_group_topk, kOptional,
                    formats::kSharedExpertsRange);
        moe.finish();
        m.moe = e;
    }
    ObjectReader mla = r.object("mla", kOptional);
    if (mla.valid()) {
        MlaConfig a;
        mla.integer("q_lora_rank", a.q_lora_rank, kOptional, formats::kWidthOrNoneRange);
        mla.integer("kv_lora_rank", a.kv_lora_rank, kRequired, formats::kWidthRange);
        mla.integer("qk_head_dim", a.qk_head_dim, kRequired, formats::kWidthRange);
        mla.integer("rope_head_dim", a.rope_head_dim, kRequired, formats::kWidthOrNoneRange);
        mla.integer("v_head_dim", a.v_head_dim, kRequired, formats::kWidthRange);
        mla.finish();
        m.mla = a;
    }
    r.integer("mtp_layers", m.mtp_layers, kOptional, formats::kMtpLayersRange);
    ObjectReader window = r.object("sliding_window", kOptional);
    if (window.valid()) {
        SlidingWindow w;
        window.integer("size", w.size, kRequired, formats::kSequenceRange);
        window.integer("full_every", w.full_every, kOptional, formats::kMtpLayersRange);
        window.finish();
        m.sliding_window = w;
    }
    r.finish();
    formats::checkModel(m, d);
    return m;
}

// ---- plan --------------------------------------------------------------

const std::vector<std::pair<std::string, Dim>> kGridDims = {
    {"tp", Dim::TP}, {"cp", Dim::CP}, {"pp", Dim::PP}, {"dp", Dim::DP}};

// "[first, last]" of a placement run; absent means the whole range.
void readRange(ObjectReader& o, const char* key, Diagnostics& d, int& first, int& last, int size) {
    const json* v = o.find(key, kOptional);
    if (!v) {
        first = 0;
        last = size - 1;
        return;
    }
    const std::string at = o.pathOf(key);
    if (!v->is_array() || v->size() != 2) {
        d.error(at,
                "must be [first, last], two indices, got " +
                    (v->is_array() ? "an array of " + std::to_string(v->size()) : describe(*v)));
        return;
    }
    std::int64_t a = 0, b = 0;
    const bool okA =
        ObjectReader::readInteger((*v)[0], childPath(at, 0), formats::kIndexRange, d, a);
    const bool okB =
        ObjectReader::readInteger((*v)[1], childPath(at, 1), formats::kIndexRange, d, b);
    if (okA && okB) {
        first = static_cast<int>(a);
        last = static_cast<int>(b);
    }
}

Plan readPlan(const json& j, Diagnostics& d, bool inlinePart) {
    Plan p;
    if (!requireRootObject(j, d))
        return p;
    ObjectReader r(d, &j, "");
    if (!readHeader(r, d, kPlanFormat, inlinePart))
        return p;
    // A framework's defaults first; every knob the document gives is read
    // over them.
    TrainingFramework framework = TrainingFramework::MegatronCore;
    if (r.choice<TrainingFramework>("framework", framework, kOptional,
                                    {{"megatron-core", TrainingFramework::MegatronCore},
                                     {"nemo", TrainingFramework::Nemo},
                                     {"torchtitan", TrainingFramework::Torchtitan}}))
        p = frameworkDefaults(framework);
    readName(r, d, p.name, "plan");
    r.string("description", p.description, kOptional, false);
    r.integer("sequence_length", p.sequence_length, kRequired, formats::kSequenceRange);
    r.integer("global_batch_sequences", p.global_batch_sequences, kRequired, formats::kBatchRange);
    r.integer("micro_batch_sequences", p.micro_batch_sequences, kOptional, formats::kBatchRange);
    ObjectReader par = r.object("parallelism", kRequired);
    par.integer("tp", p.parallelism.tp, kOptional, formats::kDegreeRange);
    par.integer("cp", p.parallelism.cp, kOptional, formats::kDegreeRange);
    par.integer("pp", p.parallelism.pp, kOptional, formats::kDegreeRange);
    par.integer("dp", p.parallelism.dp, kRequired, formats::kDegreeRange);
    par.integer("ep", p.parallelism.ep, kOptional, formats::kDegreeRange);
    // etp equal to tp is the default: kept as 0, so that a plan reads back
    // equal however it was written.
    if (par.integer("etp", p.parallelism.etp, kOptional, formats::kDegreeRange) &&
        p.parallelism.etp == p.parallelism.tp)
        p.parallelism.etp = 0;
    par.finish();
    r.integer("zero_stage", p.zero_stage, kOptional, formats::kZeroStageRange);
    // dp_shard equal to dp is no HSDP: kept as the default, so that a plan
    // reads back equal however it was written.
    if (r.integer("dp_shard", p.dp_shard, kOptional, formats::kDegreeRange) &&
        p.dp_shard == p.parallelism.dp)
        p.dp_shard = 0;
    r.choice<Recompute>("recompute", p.recompute, kOptional,
                        {{"none", Recompute::None},
                         {"selective", Recompute::Selective},
                         {"full", Recompute::Full},
                         {"selective-op", Recompute::SelectiveOp}});
    r.choice<RecomputeMethod>(
        "recompute_method", p.recompute_method, kOptional,
        {{"uniform", RecomputeMethod::Uniform}, {"block", RecomputeMethod::Block}});
    r.integer("recompute_layers", p.recompute_layers, kOptional, formats::kRecomputeLayersRange);
    if (const json* mods = r.array("recompute_modules", kOptional)) {
        unsigned set = 0;
        bool ok = true;
        for (std::size_t i = 0; i < mods->size() && i < 16; ++i) {
            const json& e = (*mods)[i];
            const auto m =
                e.is_string() ? recomputeModuleFromString(e.get<std::string>()) : std::nullopt;
            if (!m) {
                d.error(childPath("/recompute_modules", i),
                        "must be one of core_attn, layernorm, mlp, moe, moe_act, "
                        "shared_experts, mla_up_proj, got " +
                            describe(e));
                ok = false;
            } else if (set & recomputeBit(*m)) {
                d.error(childPath("/recompute_modules", i),
                        std::string("names '") + toString(*m) + "' twice");
                ok = false;
            } else {
                set |= recomputeBit(*m);
            }
        }
        if (mods->size() > 16) {
            d.error("/recompute_modules",
                    "has " + std::to_string(mods->size()) + " entries; there are 7 modules");
            ok = false;
        }
        if (ok)
            p.recompute_modules = set;
        if (p.recompute != Recompute::Selective && !d.isBad("/recompute"))
            d.error("/recompute_modules",
                    std::string("selects what selective recompute re-runs; recompute is '") +
                        toString(p.recompute) + "'");
    }
    r.boolean("sequence_parallel", p.sequence_parallel, kOptional);
    ObjectReader sched = r.object("schedule", kOptional);
    sched.choice<ScheduleKind>("kind", p.schedule.kind, kOptional,
                               {{"gpipe", ScheduleKind::GPipe},
                                {"1f1b", ScheduleKind::OneFOneB},
                                {"interleaved", ScheduleKind::Interleaved},
                                {"zero-bubble", ScheduleKind::ZeroBubble}});
    sched.integer("virtual_stages", p.schedule.virtual_stages, kOptional,
                  formats::kVirtualStagesRange);
    sched.boolean("latency_hiding", p.schedule.latency_hiding, kOptional);
    sched.finish();

    if (const json* order = r.array("rank_order", kOptional)) {
        std::vector<Dim> dims;
        bool ok = true;
        for (std::size_t i = 0; i < order->size() && i < 16; ++i) {
            const json& e = (*order)[i];
            bool found = false;
            for (const auto& [name, dim] : kGridDims) {
                if (e.is_string() && e.get_ref<const std::string&>() == name) {
                    dims.push_back(dim);
                    found = true;
                }
            }
            if (!found) {
                d.error(childPath("/rank_order", i),
                        "must be one of tp, cp, pp, dp, got " + describe(e));
                ok = false;
            }
        }
        if (ok)
            p.rank_order = dims;
    }

    ObjectReader place = r.object("placement", kOptional);
    if (place.valid()) {
        Placement pl;
        readArray(place.array("runs", kOptional), "/placement/runs", d, formats::kMaxPlacementRuns,
                  "runs", [&](const json& v, const std::string& at) {
                      PlacementRun run;
                      if (formats::requireObject(d, v, at)) {
                          ObjectReader o(d, &v, at);
                          readRange(o, "stages", d, run.stage_first, run.stage_last,
                                    p.parallelism.pp);
                          readRange(o, "replicas", d, run.replica_first, run.replica_last,
                                    p.parallelism.dp);
                          o.string("building", run.building, kRequired, true);
                          o.finish();
                      }
                      pl.runs.push_back(run);
                  });
        const json* lps = place.array("layers_per_stage", kOptional);
        if (lps && lps->empty())
            d.error("/placement/layers_per_stage",
                    "must have one entry per pipeline stage, got none (leave it out for an "
                    "even split)");
        else
            readArray(lps, "/placement/layers_per_stage", d, formats::kMaxLayers, "entries",
                      [&](const json& v, const std::string& at) {
                          std::int64_t n = 0;
                          ObjectReader::readInteger(v, at, formats::kLayersRange, d, n);
                          pl.layers_per_stage.push_back(static_cast<int>(n));
                      });
        place.finish();
        p.placement = pl;
    }

    ObjectReader coll = r.object("collectives", kOptional);
    for (Dim dim : kAllDims) {
        CollectiveAlgo a = CollectiveAlgo::Auto;
        if (coll.choice<CollectiveAlgo>(toString(dim), a, kOptional,
                                        {{"auto", CollectiveAlgo::Auto},
                                         {"ring", CollectiveAlgo::Ring},
                                         {"tree", CollectiveAlgo::Tree},
                                         {"hierarchical", CollectiveAlgo::Hierarchical}}))
            p.collectives[dim] = a;
    }
    coll.finish();

    ObjectReader links = r.object("link_technologies", kOptional);
    if (links.valid()) {
        for (const auto& [key, value] : links.node()->items()) {
            const std::string at = childPath("/link_technologies", key);
            LinkOverride o;
            if (formats::requireObject(d, value, at)) {
                ObjectReader lo(d, &value, at);
                lo.string("technology", o.technology, kOptional, true);
                lo.integer("flows", o.flows, kOptional, formats::kFlowsRange);
                lo.integer("nccl_channels", o.nccl_channels, kOptional,
                           formats::kNcclChannelsRange);
                lo.integer("qps_per_connection", o.qps_per_connection, kOptional,
                           formats::kQpsPerConnectionRange);
                lo.integer("sockets_per_connection", o.sockets_per_connection, kOptional,
                           formats::kSocketsPerConnectionRange);
                lo.number("buffsize_mib", o.buffsize_mib, kOptional, formats::kPositive);
                lo.finish();
            }
            p.link_technologies[key] = o;
        }
    }

    r.boolean("dp_overlap", p.dp_overlap, kOptional);
    r.boolean("tp_comm_overlap", p.tp_comm_overlap, kOptional);
    r.boolean("cuda_graphs", p.cuda_graphs, kOptional);
    r.boolean("ep_overlap", p.ep_overlap, kOptional);
    r.choice<EpDispatcher>("ep_dispatcher", p.ep_dispatcher, kOptional,
                           {{"alltoall", EpDispatcher::AllToAll},
                            {"flex", EpDispatcher::Flex},
                            {"hybridep", EpDispatcher::HybridEp}});
    r.integer("ep_dispatcher_sms", p.ep_dispatcher_sms, kOptional, formats::kDispatcherSmsRange);
    r.choice<CpRing>("cp_ring", p.cp_ring, kOptional,
                     {{"te-p2p", CpRing::TeP2p},
                      {"te-allgather", CpRing::TeAllGather},
                      {"te-a2a", CpRing::TeA2a},
                      {"torch-allgather", CpRing::TorchAllGather},
                      {"torch-alltoall", CpRing::TorchAllToAll}});
    r.integer("cp_a2a_size", p.cp_a2a_size, kOptional, formats::kDegreeRange);
    const bool p2pGiven = r.boolean("p2p_overlap", p.p2p_overlap, kOptional);
    const bool bucketGiven = r.find("dp_bucket_mib", kOptional) != nullptr;
    r.number("dp_bucket_mib", p.dp_bucket_mib, kOptional, formats::kPositive);
    if (const json* g = r.find("grad_reduce_bytes", kOptional)) {
        if (g->is_number_integer() && (g->get<std::int64_t>() == 2 || g->get<std::int64_t>() == 4))
            p.grad_reduce_bytes = g->get<int>();
        else
            d.error("/grad_reduce_bytes", "must be 2 or 4, got " + describe(*g));
    }
    r.choice<OptimizerMoments>(
        "optimizer_moments", p.optimizer_moments, kOptional,
        {{"fp32", OptimizerMoments::Fp32}, {"bf16", OptimizerMoments::Bf16}});
    r.choice<MasterWeights>("master_weights", p.master_weights, kOptional,
                            {{"fp32", MasterWeights::Fp32},
                             {"16bit", MasterWeights::Half},
                             {"none", MasterWeights::None}});
    r.choice<OptimizerImpl>("optimizer_implementation", p.optimizer_implementation, kOptional,
                            {{"fused", OptimizerImpl::Fused}, {"foreach", OptimizerImpl::Foreach}});
    r.boolean("grad_accumulation_fusion", p.grad_accumulation_fusion, kOptional);
    r.boolean("grad_reduce_scatter", p.grad_reduce_scatter, kOptional);
    r.boolean("fsdp_copies", p.fsdp_copies, kOptional);
    r.boolean("flash_attention", p.flash_attention, kOptional);
    r.choice<AttentionKernel>("attention_kernel", p.attention_kernel, kOptional,
                              {{"auto", AttentionKernel::Auto},
                               {"flash2", AttentionKernel::Flash2},
                               {"flash3", AttentionKernel::Flash3},
                               {"cudnn", AttentionKernel::Cudnn}});
    r.boolean("rope_fusion", p.rope_fusion, kOptional);
    r.choice<Elementwise>("elementwise", p.elementwise, kOptional,
                          {{"fused", Elementwise::Fused},
                           {"eager", Elementwise::Eager},
                           {"compiled", Elementwise::Compiled}});
    r.choice<Fp8Recipe>("fp8_recipe", p.fp8_recipe, kOptional,
                        {{"current", Fp8Recipe::Current}, {"delayed", Fp8Recipe::Delayed}});
    r.choice<CrossEntropy>("cross_entropy", p.cross_entropy, kOptional,
                           {{"megatron", CrossEntropy::Megatron},
                            {"megatron-fused", CrossEntropy::MegatronFused},
                            {"te", CrossEntropy::Te},
                            {"pytorch", CrossEntropy::Pytorch}});
    r.choice<Fp8Linear>(
        "fp8_linear", p.fp8_linear, kOptional,
        {{"transformer-engine", Fp8Linear::TransformerEngine}, {"torchao", Fp8Linear::Torchao}});
    r.boolean("fp8_param_gather", p.fp8_param_gather, kOptional);
    r.boolean("sequence_parallel_regather", p.sequence_parallel_regather, kOptional);
    r.number("hidden_dropout", p.hidden_dropout, kOptional, formats::kProbability);
    r.number("attention_dropout", p.attention_dropout, kOptional, formats::kProbability);
    r.choice<FsdpReshard>("fsdp_reshard_after_forward", p.fsdp_reshard_after_forward, kOptional,
                          {{"default", FsdpReshard::Default},
                           {"always", FsdpReshard::Always},
                           {"never", FsdpReshard::Never}});
    if (r.find("routing", kOptional)) {
        p.routing.emplace();
        readRouting(r, *p.routing);
    }
    ObjectReader comp = r.object("compression", kOptional);
    if (comp.valid()) {
        ObjectReader cd = comp.object("dp", kRequired);
        if (cd.valid()) {
            Compression c;
            const bool known = cd.choice<CompressionMethod>("method", c.method, kRequired,
                                                            {{"bf16", CompressionMethod::Bf16},
                                                             {"fp8", CompressionMethod::Fp8},
                                                             {"topk", CompressionMethod::TopK}});
            // Top-k's own settings; a cast has none.
            if (!known || c.method == CompressionMethod::TopK) {
                cd.number("topk_ratio", c.topk_ratio, kOptional, formats::kFraction);
                cd.boolean("error_feedback", c.error_feedback, kOptional);
            } else {
                for (const char* key : {"topk_ratio", "error_feedback"})
                    if (cd.find(key, kOptional))
                        d.error(cd.pathOf(key), std::string("applies to method topk only, not ") +
                                                    toString(c.method) + "; leave it out");
            }
            cd.finish();
            if (known)
                p.dp_compression = c;
        }
        comp.finish();
    }
    ObjectReader os = r.object("outer_sync", kOptional);
    if (os.valid()) {
        OuterSync o;
        const bool known =
            os.choice<OuterSyncMethod>("method", o.method, kRequired,
                                       {{"diloco", OuterSyncMethod::Diloco},
                                        {"streaming-diloco", OuterSyncMethod::StreamingDiloco},
                                        {"hsdp", OuterSyncMethod::Hsdp}});
        if (known && o.method == OuterSyncMethod::Hsdp) {
            o.inner_steps = 1;
            for (const char* key :
                 {"inner_steps", "fragments", "overlap_steps", "outer_bytes", "loss_penalty"})
                if (os.find(key, kOptional))
                    d.error(os.pathOf(key),
                            "applies to diloco and streaming-diloco, not hsdp; leave it out");
        } else {
            os.integer("inner_steps", o.inner_steps, kOptional, formats::kOuterStepsRange);
            if (known && o.method == OuterSyncMethod::StreamingDiloco) {
                o.fragments = 4; // Streaming DiLoCo's usual split (docs/RUN.md)
                os.integer("fragments", o.fragments, kOptional, formats::kOuterStepsRange);
                os.integer("overlap_steps", o.overlap_steps, kOptional, formats::kOuterStepsRange);
            } else {
                for (const char* key : {"fragments", "overlap_steps"})
                    if (os.find(key, kOptional))
                        d.error(os.pathOf(key), "applies to streaming-diloco only; leave it out");
            }
            os.number("outer_bytes", o.outer_bytes, kOptional, formats::kOuterBytesRange);
            double penalty = 0;
            if (os.number("loss_penalty", penalty, kOptional, formats::kLossPenaltyRange))
                o.loss_penalty = penalty;
        }
        os.finish();
        if (known)
            p.outer_sync = o;
    }
    ObjectReader ck = r.object("checkpoint", kOptional);
    if (ck.valid()) {
        ck.integer("interval_steps", p.checkpoint.interval_steps, kOptional,
                   formats::kCheckpointStepsRange);
        ck.boolean("async", p.checkpoint.async, kOptional);
        ck.finish();
    }
    r.number("token_budget", p.token_budget, kOptional, formats::kNonNegative);
    r.number("target_loss", p.target_loss, kOptional, formats::kNonNegative);
    r.finish();
    applyDerivedFrameworkDefaults(p, {bucketGiven, p2pGiven});
    formats::checkPlan(p, d);
    return p;
}

// ---- documents ---------------------------------------------------------

template <class T, class Reader>
Loaded<T> parseDocument(const std::string& text, const std::string& file, Reader read) {
    Loaded<T> out;
    Diagnostics d(file);
    if (auto j = parseText(text, d)) {
        T value = read(*j, d, false);
        if (d.empty())
            out.value = std::move(value);
    }
    out.problems = d.take();
    return out;
}

std::filesystem::path resolve(const std::string& baseDir, const std::string& relative) {
    std::filesystem::path p(relative);
    if (p.is_absolute() || baseDir.empty())
        return p.lexically_normal();
    return (std::filesystem::path(baseDir) / p).lexically_normal();
}

std::string directoryOf(const std::string& path) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

// Where a part of a scenario came from, for messages.
struct PartSource {
    std::string file;
    std::string prefix; // "/plan" when inline, "" when a file of its own
};

template <class T, class Reader>
std::optional<T> readPart(const ObjectReader& r, const char* key, const char* kind,
                          const std::string& file, const std::string& baseDir, Reader read,
                          Diagnostics& scenario, std::vector<Diagnostic>& problems,
                          PartSource& source) {
    const std::string at = r.pathOf(key);
    const json& v = r.node()->at(key);
    if (v.is_object()) {
        Diagnostics d(file, at);
        T value = read(v, d, true);
        source = {file, at};
        const bool ok = d.empty();
        auto found = d.take();
        problems.insert(problems.end(), found.begin(), found.end());
        return ok ? std::optional<T>(std::move(value)) : std::nullopt;
    }
    if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
        scenario.error(at, std::string("must be an inline ") + kind + " object or the path of a " +
                               kind + " file, got " + describe(v));
        return std::nullopt;
    }
    const std::string path = resolve(baseDir, v.get<std::string>()).string();
    // A part names a document file, never a device or a pipe (/dev/stdin or a
    // FIFO would block, /dev/zero would be read up to the size limit).
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
        !std::filesystem::is_directory(status)) {
        scenario.error(at, "cannot read '" + path + "': not a regular file");
        return std::nullopt;
    }
    std::string error;
    auto text = readTextFile(path, &error);
    if (!text) {
        scenario.error(at, error);
        return std::nullopt;
    }
    Loaded<T> loaded = parseDocument<T>(*text, path, read);
    problems.insert(problems.end(), loaded.problems.begin(), loaded.problems.end());
    source = {path, ""};
    return loaded.value;
}

Loaded<Scenario> readScenario(const json& j, const std::string& file, const std::string& baseDir,
                              Diagnostics& d) {
    Loaded<Scenario> out;
    std::vector<Diagnostic> partProblems;
    if (!requireRootObject(j, d))
        return out;
    ObjectReader r(d, &j, "");
    if (!readHeader(r, d, kScenarioFormat, false))
        return out;
    PartSource cs, ms, ps;
    std::optional<Cluster> cluster;
    std::optional<Model> model;
    std::optional<Plan> plan;
    if (r.find("cluster", kRequired))
        cluster = readPart<Cluster>(r, "cluster", "cluster", file, baseDir, readCluster, d,
                                    partProblems, cs);
    if (r.find("model", kRequired))
        model = readPart<Model>(r, "model", "model", file, baseDir, readModel, d, partProblems, ms);
    if (r.find("plan", kRequired))
        plan = readPart<Plan>(r, "plan", "plan", file, baseDir, readPlan, d, partProblems, ps);
    r.finish();
    out.problems = std::move(partProblems);
    // The value is kept when only the checks across documents fail, so that
    // a caller can show the documents and point at what does not fit.
    if (cluster && model && plan && d.empty()) {
        Scenario s{std::move(*cluster), std::move(*model), std::move(*plan)};
        Diagnostics dc(cs.file, cs.prefix), dm(ms.file, ms.prefix), dp(ps.file, ps.prefix);
        formats::checkAcross(s, dc, dm, dp);
        for (auto* x : {&dc, &dm, &dp}) {
            auto more = x->take();
            out.problems.insert(out.problems.end(), more.begin(), more.end());
        }
        out.value = std::move(s);
    }
    return out;
}

} // namespace

std::string formats::resolveDocumentPath(const std::string& baseDir, const std::string& path) {
    return resolve(baseDir, path).string();
}

std::optional<json> formats::parseJsonText(const std::string& text, Diagnostics& d) {
    return parseText(text, d);
}

Plan formats::readPlanDocument(const json& j, Diagnostics& d) {
    return readPlan(j, d, false);
}

Loaded<Cluster> parseCluster(const std::string& text, const std::string& file) {
    return parseDocument<Cluster>(text, file, readCluster);
}

Loaded<Model> parseModel(const std::string& text, const std::string& file) {
    return parseDocument<Model>(text, file, readModel);
}

Loaded<Plan> parsePlan(const std::string& text, const std::string& file) {
    return parseDocument<Plan>(text, file, readPlan);
}

Loaded<Scenario> parseScenario(const std::string& text, const std::string& file,
                               const std::string& baseDir) {
    Diagnostics d(file);
    Loaded<Scenario> out;
    if (auto j = parseText(text, d))
        out = readScenario(*j, file, baseDir, d);
    auto own = d.take();
    out.problems.insert(out.problems.begin(), own.begin(), own.end());
    return out;
}

namespace {

// readTextFile's message names the path; the diagnostic names it already.
Diagnostic fileProblem(const std::string& path, const std::string& error) {
    const std::string prefix = "cannot read '" + path + "': ";
    if (error.rfind(prefix, 0) == 0)
        return {path, "", "cannot read file: " + error.substr(prefix.size())};
    return {path, "", error};
}

template <class T>
Loaded<T> loadFile(const std::string& path,
                   Loaded<T> (*parse)(const std::string&, const std::string&)) {
    std::string error;
    auto text = readTextFile(path, &error);
    if (!text) {
        Loaded<T> out;
        out.problems.push_back(fileProblem(path, error));
        return out;
    }
    return parse(*text, path);
}

} // namespace

Loaded<Cluster> loadClusterFile(const std::string& path) {
    return loadFile(path, parseCluster);
}
Loaded<Model> loadModelFile(const std::string& path) {
    return loadFile(path, parseModel);
}
Loaded<Plan> loadPlanFile(const std::string& path) {
    return loadFile(path, parsePlan);
}

Loaded<Scenario> loadScenarioFile(const std::string& path) {
    std::string error;
    auto text = readTextFile(path, &error);
    if (!text) {
        Loaded<Scenario> out;
        out.problems.push_back(fileProblem(path, error));
        return out;
    }
    return parseScenario(*text, path, directoryOf(path));
}

Loaded<Scenario> loadScenarioFiles(const std::string& clusterPath, const std::string& modelPath,
                                   const std::string& planPath) {
    Loaded<Scenario> out;
    auto c = loadClusterFile(clusterPath);
    auto m = loadModelFile(modelPath);
    auto p = loadPlanFile(planPath);
    for (auto* problems : {&c.problems, &m.problems, &p.problems})
        out.problems.insert(out.problems.end(), problems->begin(), problems->end());
    if (c.value && m.value && p.value) {
        Scenario s{std::move(*c.value), std::move(*m.value), std::move(*p.value)};
        Diagnostics dc(clusterPath), dm(modelPath), dp(planPath);
        formats::checkAcross(s, dc, dm, dp);
        for (auto* x : {&dc, &dm, &dp}) {
            auto more = x->take();
            out.problems.insert(out.problems.end(), more.begin(), more.end());
        }
        out.value = std::move(s);
    }
    return out;
}

Loaded<AnyDocument> loadAnyFile(const std::string& path) {
    Loaded<AnyDocument> out;
    std::string error;
    auto text = readTextFile(path, &error);
    if (!text) {
        out.problems.push_back(fileProblem(path, error));
        return out;
    }
    Diagnostics d(path);
    auto j = parseText(*text, d);
    if (j && requireRootObject(*j, d)) {
        const auto format = j->find("format");
        const std::string kinds = std::string(kClusterFormat) + ", " + kModelFormat + ", " +
                                  kPlanFormat + ", " + kScenarioFormat;
        const auto finish = [&](auto value) {
            if (d.empty())
                out.value = AnyDocument(std::move(value));
        };
        if (format == j->end()) {
            d.report("", "missing required key 'format' (one of " + kinds + ")");
        } else if (*format == kClusterFormat) {
            finish(readCluster(*j, d, false));
        } else if (*format == kModelFormat) {
            finish(readModel(*j, d, false));
        } else if (*format == kPlanFormat) {
            finish(readPlan(*j, d, false));
        } else if (*format == kScenarioFormat) {
            Loaded<Scenario> s = readScenario(*j, path, directoryOf(path), d);
            out.problems = std::move(s.problems);
            if (s.value)
                out.value = AnyDocument(std::move(*s.value));
        } else {
            d.error("/format", "must be one of " + kinds + ", got " + describe(*format));
        }
    }
    auto own = d.take();
    out.problems.insert(out.problems.begin(), own.begin(), own.end());
    return out;
}

} // namespace sa

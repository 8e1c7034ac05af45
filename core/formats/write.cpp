// Canonical JSON of the documents: every key, defaults included, in a fixed
// order a person can read (format, version and name first, then the keys in
// the order docs/FORMATS.md lists them).

#include "cost/network.h"
#include "formats/documents.h"
#include "formats/json_check.h"

#include <cmath>
#include <map>

namespace sa {

namespace {

using formats::json;

// Whole numbers are written without ".0": "memory_gib": 80, not 80.0.
json number(double v) {
    if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 9.0e15)
        return static_cast<std::int64_t>(v);
    return v;
}

json routingJson(const Routing& r) {
    return {{"policy", toString(r.policy)},
            {"ecmp_metric", toString(r.ecmp_metric)},
            {"ecmp_tolerance", number(r.ecmp_tolerance)}};
}

json range(int first, int last) {
    return json::array({first, last});
}

std::string linkName(const Link& l) {
    return l.name.empty() ? l.a + "-" + l.b : l.name;
}

json body(const char* format) {
    json j = json::object();
    j["format"] = format;
    j["version"] = kFormatVersion;
    return j;
}

// Keys in the order they are written; others follow alphabetically.
const std::map<std::string, int>& keyRank() {
    static const std::map<std::string, int> rank = [] {
        const char* order[] = {
            "format", "version", "name", "description",
            // cluster
            "gpu_models", "buildings", "links", "technologies", "peak_tflops", "bf16", "fp8",
            "memory_gib", "hbm_tbps", "sms", "gemm_efficiency", "gemm_efficiency_fp8", "tdp_w",
            "power_limit_w", "idle_w", "boost_clock_mhz", "sustained_clock_mhz", "architecture",
            "region", "gpu_model", "gpus", "gpus_per_host", "scale_up_gbps", "scale_out_gbps",
            "zone_gpus", "zone_oversubscription", "building_oversubscription",
            "scale_up_efficiency", "scale_up_latency_us", "scale_out_efficiency",
            "scale_out_latency_us", "gpu_mtbf_hours", "host_mtbf_hours", "restart_s",
            "storage_write_gbps", "storage_read_gbps", "straggler_slowdown", "step_jitter",
            "gpu_hour_usd", "host_power_w", "network_power_w_per_gpu", "pue", "between",
            "bandwidth_gbps", "latency_ms", "technology", "background_gbps", "price_per_gb_usd",
            "degraded_fraction", "degraded_bandwidth_gbps", "efficiency", "window_mib", "flows",
            "loss_rate", "lossless", "mtu_bytes", "per_message_us", "nccl_channels",
            "qps_per_connection", "sockets_per_connection", "buffsize_mib", "host_gbps_per_core",
            "host_net_cores", "max_flows_per_host", "pfc_headroom_mib", "port_gbps",
            "lossy_loss_rate", "routing", "policy", "ecmp_metric", "ecmp_tolerance",
            // model
            "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim", "vocab", "mlp",
            "dtype", "tied_embeddings", "moe", "experts", "top_k", "expert_ffn_hidden",
            "shared_experts", "dense_layers", "capacity_factor", "pad_to_capacity", "router_groups",
            "router_group_topk", "mla", "q_lora_rank", "kv_lora_rank", "qk_head_dim",
            "rope_head_dim", "v_head_dim", "mtp_layers", "sliding_window", "size", "full_every",
            // plan
            "framework", "sequence_length", "global_batch_sequences", "micro_batch_sequences",
            "parallelism", "tp", "cp", "pp", "dp", "ep", "etp", "zero_stage", "dp_shard",
            "recompute", "recompute_method", "recompute_layers", "recompute_modules",
            "sequence_parallel", "schedule", "kind", "virtual_stages", "latency_hiding",
            "rank_order", "placement", "runs", "stages", "replicas", "building", "layers_per_stage",
            "collectives", "link_technologies", "dp_overlap", "tp_comm_overlap", "cuda_graphs",
            "p2p_overlap", "ep_overlap", "ep_dispatcher", "ep_dispatcher_sms", "cp_ring",
            "cp_a2a_size", "dp_bucket_mib", "grad_reduce_bytes", "optimizer_moments",
            "master_weights", "optimizer_implementation", "grad_accumulation_fusion",
            "grad_reduce_scatter", "flash_attention", "attention_kernel", "elementwise",
            "rope_fusion", "fp8_recipe", "fp8_linear", "fp8_param_gather",
            "sequence_parallel_regather", "hidden_dropout", "attention_dropout", "cross_entropy",
            "fsdp_reshard_after_forward", "fsdp_copies", "compression", "method", "topk_ratio",
            "error_feedback", "outer_sync", "inner_steps", "fragments", "overlap_steps",
            "outer_bytes", "loss_penalty", "checkpoint", "interval_steps", "async", "token_budget",
            "target_loss",
            // scenario
            "cluster", "model", "plan"};
        std::map<std::string, int> r;
        int i = 0;
        for (const char* k : order)
            r.emplace(k, i++);
        return r;
    }();
    return rank;
}

std::string scalar(const json& v) {
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

void write(std::string& out, const json& v, int indent) {
    const std::string pad(static_cast<std::size_t>(indent) + 2, ' ');
    if (v.is_object()) {
        if (v.empty()) {
            out += "{}";
            return;
        }
        std::vector<std::pair<std::string, const json*>> items;
        for (auto it = v.begin(); it != v.end(); ++it)
            items.emplace_back(it.key(), &it.value());
        const auto& rank = keyRank();
        std::stable_sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
            const auto ra = rank.find(a.first), rb = rank.find(b.first);
            const int ia = ra == rank.end() ? 1 << 30 : ra->second;
            const int ib = rb == rank.end() ? 1 << 30 : rb->second;
            return ia != ib ? ia < ib : a.first < b.first;
        });
        out += "{\n";
        for (std::size_t i = 0; i < items.size(); ++i) {
            out += pad + scalar(json(items[i].first)) + ": ";
            write(out, *items[i].second, indent + 2);
            out += i + 1 < items.size() ? ",\n" : "\n";
        }
        out += std::string(static_cast<std::size_t>(indent), ' ') + "}";
    } else if (v.is_array()) {
        const bool flat =
            std::none_of(v.begin(), v.end(), [](const json& e) { return e.is_structured(); });
        if (v.empty() || flat) {
            // Short lists of numbers or names stay on one line: "stages": [0, 7].
            out += "[";
            for (std::size_t i = 0; i < v.size(); ++i)
                out += (i ? ", " : "") + scalar(v[i]);
            out += "]";
            return;
        }
        out += "[\n";
        for (std::size_t i = 0; i < v.size(); ++i) {
            out += pad;
            write(out, v[i], indent + 2);
            out += i + 1 < v.size() ? ",\n" : "\n";
        }
        out += std::string(static_cast<std::size_t>(indent), ' ') + "]";
    } else {
        out += scalar(v);
    }
}

} // namespace

nlohmann::json toJson(const Cluster& c) {
    json j = body(kClusterFormat);
    j["name"] = c.name;
    j["description"] = c.description;
    json models = json::object();
    for (const auto& [key, g] : c.gpu_models) {
        models[key] = {{"peak_tflops",
                        {{"bf16", number(g.peak_tflops_bf16)}, {"fp8", number(g.peak_tflops_fp8)}}},
                       {"memory_gib", number(g.memory_gib)},
                       {"hbm_tbps", number(g.hbm_tbps)},
                       {"sms", g.sms},
                       {"gemm_efficiency", number(g.gemm_efficiency)},
                       {"gemm_efficiency_fp8", number(g.gemm_efficiency_fp8)},
                       {"tdp_w", number(g.tdp_w)},
                       {"power_limit_w", number(g.power_limit_w)}};
        if (g.idle_w != 0)
            models[key]["idle_w"] = number(g.idle_w);
        if (g.boost_clock_mhz != 0 || g.sustained_clock_mhz != 0) {
            models[key]["boost_clock_mhz"] = number(g.boost_clock_mhz);
            models[key]["sustained_clock_mhz"] = number(g.sustained_clock_mhz);
        }
        if (!g.architecture.empty())
            models[key]["architecture"] = g.architecture;
    }
    j["gpu_models"] = models;
    json buildings = json::array();
    for (const auto& b : c.buildings) {
        buildings.push_back({{"name", b.name},
                             {"region", b.region},
                             {"gpu_model", b.gpu_model},
                             {"gpus", b.gpus},
                             {"gpus_per_host", b.gpus_per_host},
                             {"scale_up_gbps", number(b.scale_up_gbps)},
                             {"scale_out_gbps", number(b.scale_out_gbps)},
                             // 0 (one zone, from code) is written as what it means
                             {"zone_gpus", b.zone_gpus > 0 ? b.zone_gpus : b.gpus},
                             {"zone_oversubscription", number(b.zone_oversubscription)},
                             {"building_oversubscription", number(b.building_oversubscription)}});
        // Calibrated tiers only when measured: absent means the built-in values.
        json& written = buildings.back();
        using Measured = std::pair<const char*, const std::optional<double>*>;
        for (const Measured& m : {Measured{"scale_up_efficiency", &b.scale_up_efficiency},
                                  Measured{"scale_up_latency_us", &b.scale_up_latency_us},
                                  Measured{"scale_out_efficiency", &b.scale_out_efficiency},
                                  Measured{"scale_out_latency_us", &b.scale_out_latency_us}})
            if (*m.second)
                written[m.first] = number(**m.second);
        // Reliability, storage, prices, power: only when given (0 = default).
        for (auto [key, value] :
             {std::pair{"gpu_mtbf_hours", b.gpu_mtbf_hours},
              std::pair{"host_mtbf_hours", b.host_mtbf_hours}, std::pair{"restart_s", b.restart_s},
              std::pair{"storage_write_gbps", b.storage_write_gbps},
              std::pair{"storage_read_gbps", b.storage_read_gbps},
              std::pair{"step_jitter", b.step_jitter}, std::pair{"gpu_hour_usd", b.gpu_hour_usd},
              std::pair{"host_power_w", b.host_power_w},
              std::pair{"network_power_w_per_gpu", b.network_power_w_per_gpu},
              std::pair{"pue", b.pue}})
            if (value != 0)
                written[key] = number(value);
        if (b.straggler_slowdown != 1)
            written["straggler_slowdown"] = number(b.straggler_slowdown);
    }
    j["buildings"] = buildings;
    json links = json::array();
    for (const auto& l : c.links) {
        links.push_back({{"between", json::array({l.a, l.b})},
                         {"name", linkName(l)},
                         {"bandwidth_gbps", number(l.bandwidth_gbps)},
                         {"latency_ms", number(l.latency_ms)},
                         {"technology", l.technology}});
        if (l.background_gbps != 0)
            links.back()["background_gbps"] = number(l.background_gbps);
        if (l.price_per_gb_usd != 0)
            links.back()["price_per_gb_usd"] = number(l.price_per_gb_usd);
        if (l.degraded_fraction != 0)
            links.back()["degraded_fraction"] = number(l.degraded_fraction);
        if (l.degraded_bandwidth_gbps != 0)
            links.back()["degraded_bandwidth_gbps"] = number(l.degraded_bandwidth_gbps);
    }
    j["links"] = links;
    json techs = json::object();
    for (const auto& [key, t] : c.technologies) {
        json e = {{"efficiency", number(t.efficiency)},
                  {"window_mib", number(t.window_mib)},
                  {"flows", t.flows},
                  {"loss_rate", number(t.loss_rate)},
                  {"lossless", t.lossless},
                  {"mtu_bytes", number(t.mtu_bytes)},
                  {"per_message_us", number(t.per_message_us)}};
        // The NCCL knobs and the rest only when given; `flows` then only
        // where it differs from channels x QPs (or sockets).
        const auto positive = [&](const char* k, double v) {
            if (v > 0)
                e[k] = number(v);
        };
        const auto count = [&](const char* k, int v) {
            if (v > 0)
                e[k] = v;
        };
        count("nccl_channels", t.nccl_channels);
        count("qps_per_connection", t.qps_per_connection);
        count("sockets_per_connection", t.sockets_per_connection);
        positive("buffsize_mib", t.buffsize_mib);
        if (t.nccl_channels > 0 && t.flows == ncclFlows(t))
            e.erase("flows");
        positive("host_gbps_per_core", t.host_gbps_per_core);
        count("host_net_cores", t.host_net_cores);
        count("max_flows_per_host", t.max_flows_per_host);
        positive("pfc_headroom_mib", t.pfc_headroom_mib);
        positive("port_gbps", t.port_gbps);
        positive("lossy_loss_rate", t.lossy_loss_rate);
        techs[key] = e;
    }
    j["technologies"] = techs;
    // Only when not the default, so a cluster without it saves as before.
    if (c.routing != Routing{})
        j["routing"] = routingJson(c.routing);
    return j;
}

nlohmann::json toJson(const Model& m) {
    json j = body(kModelFormat);
    j["name"] = m.name;
    j["description"] = m.description;
    j["layers"] = m.layers;
    j["hidden"] = m.hidden;
    j["ffn_hidden"] = m.ffn_hidden;
    j["heads"] = m.heads;
    j["kv_heads"] = m.kv_heads;
    if (m.head_dim != 0)
        j["head_dim"] = m.head_dim;
    j["vocab"] = m.vocab;
    j["mlp"] = m.mlp == MlpKind::Gelu ? "gelu" : "swiglu";
    j["dtype"] = m.dtype == DType::FP8 ? "fp8" : "bf16";
    j["tied_embeddings"] = m.tied_embeddings;
    if (m.moe) {
        j["moe"] = {{"experts", m.moe->experts},
                    {"top_k", m.moe->top_k},
                    {"expert_ffn_hidden", m.moe->expert_ffn_hidden},
                    {"shared_experts", m.moe->shared_experts},
                    {"dense_layers", m.moe->dense_layers},
                    {"capacity_factor", number(m.moe->capacity_factor)}};
        if (m.moe->pad_to_capacity)
            j["moe"]["pad_to_capacity"] = *m.moe->pad_to_capacity;
        if (m.moe->router_groups > 0) {
            j["moe"]["router_groups"] = m.moe->router_groups;
            j["moe"]["router_group_topk"] = m.moe->router_group_topk;
        }
    }
    if (m.mla)
        j["mla"] = {{"q_lora_rank", m.mla->q_lora_rank},
                    {"kv_lora_rank", m.mla->kv_lora_rank},
                    {"qk_head_dim", m.mla->qk_head_dim},
                    {"rope_head_dim", m.mla->rope_head_dim},
                    {"v_head_dim", m.mla->v_head_dim}};
    if (m.mtp_layers > 0)
        j["mtp_layers"] = m.mtp_layers;
    if (m.sliding_window)
        j["sliding_window"] = {{"size", m.sliding_window->size},
                               {"full_every", m.sliding_window->full_every}};
    return j;
}

nlohmann::json toJson(const Plan& p) {
    json j = body(kPlanFormat);
    j["name"] = p.name;
    j["description"] = p.description;
    // With a framework, every knob is written: one left out would read back
    // as the framework's default, not the format's.
    const bool all = p.framework.has_value();
    if (all)
        j["framework"] = toString(*p.framework);
    j["sequence_length"] = p.sequence_length;
    j["global_batch_sequences"] = p.global_batch_sequences;
    j["micro_batch_sequences"] = p.micro_batch_sequences;
    j["parallelism"] = {{"tp", p.parallelism.tp},
                        {"cp", p.parallelism.cp},
                        {"pp", p.parallelism.pp},
                        {"dp", p.parallelism.dp},
                        {"ep", p.parallelism.ep}};
    if (p.parallelism.etp > 0 && p.parallelism.etp != p.parallelism.tp)
        j["parallelism"]["etp"] = p.parallelism.etp;
    j["zero_stage"] = p.zero_stage;
    if (all || p.dpShard() != p.parallelism.dp)
        j["dp_shard"] = p.dpShard();
    j["recompute"] = toString(p.recompute);
    if (all || p.recompute_method != RecomputeMethod::Uniform)
        j["recompute_method"] = toString(p.recompute_method);
    if (all || p.recompute_layers != 1)
        j["recompute_layers"] = p.recompute_layers;
    if (p.recompute == Recompute::Selective &&
        (all || p.recompute_modules != kDefaultRecomputeModules)) {
        json mods = json::array();
        for (RecomputeModule m : kAllRecomputeModules)
            if (p.recompute_modules & recomputeBit(m))
                mods.push_back(toString(m));
        j["recompute_modules"] = mods;
    }
    j["sequence_parallel"] = p.sequence_parallel;
    j["schedule"] = {{"kind", toString(p.schedule.kind)},
                     {"virtual_stages", p.schedule.virtual_stages},
                     {"latency_hiding", p.schedule.latency_hiding}};
    json order = json::array();
    for (Dim d : p.rank_order)
        order.push_back(toString(d));
    j["rank_order"] = order;
    if (p.placement) {
        json runs = json::array();
        for (const auto& r : p.placement->runs) {
            runs.push_back({{"stages", range(r.stage_first, r.stage_last)},
                            {"replicas", range(r.replica_first, r.replica_last)},
                            {"building", r.building}});
        }
        json placement = {{"runs", runs}};
        // An empty list means an even split, which the document says by leaving the key out.
        if (!p.placement->layers_per_stage.empty())
            placement["layers_per_stage"] = p.placement->layers_per_stage;
        j["placement"] = placement;
    }
    json collectives = json::object();
    for (const auto& [dim, algo] : p.collectives)
        collectives[toString(dim)] = toString(algo);
    j["collectives"] = collectives;
    json overrides = json::object();
    for (const auto& [link, o] : p.link_technologies) {
        json e = json::object();
        if (!o.technology.empty())
            e["technology"] = o.technology;
        if (o.flows > 0)
            e["flows"] = o.flows;
        if (o.nccl_channels > 0)
            e["nccl_channels"] = o.nccl_channels;
        if (o.qps_per_connection > 0)
            e["qps_per_connection"] = o.qps_per_connection;
        if (o.sockets_per_connection > 0)
            e["sockets_per_connection"] = o.sockets_per_connection;
        if (o.buffsize_mib > 0)
            e["buffsize_mib"] = number(o.buffsize_mib);
        overrides[link] = e;
    }
    j["link_technologies"] = overrides;
    j["dp_overlap"] = p.dp_overlap;
    if (all || p.tp_comm_overlap)
        j["tp_comm_overlap"] = p.tp_comm_overlap;
    if (all || p.cuda_graphs)
        j["cuda_graphs"] = p.cuda_graphs;
    if (all || p.ep_overlap)
        j["ep_overlap"] = p.ep_overlap;
    if (all || p.ep_dispatcher != EpDispatcher::AllToAll)
        j["ep_dispatcher"] = toString(p.ep_dispatcher);
    if (all || p.ep_dispatcher_sms != 0)
        j["ep_dispatcher_sms"] = p.ep_dispatcher_sms;
    if (all || p.cp_ring != CpRing::TeP2p)
        j["cp_ring"] = toString(p.cp_ring);
    if (all || p.cp_a2a_size != 1)
        j["cp_a2a_size"] = p.cp_a2a_size;
    if (all || !p.p2p_overlap)
        j["p2p_overlap"] = p.p2p_overlap;
    j["dp_bucket_mib"] = number(p.dp_bucket_mib);
    j["grad_reduce_bytes"] = p.grad_reduce_bytes;
    if (all || p.optimizer_moments != OptimizerMoments::Fp32)
        j["optimizer_moments"] = toString(p.optimizer_moments);
    if (all || p.master_weights != MasterWeights::Fp32)
        j["master_weights"] = toString(p.master_weights);
    if (all || p.optimizer_implementation != OptimizerImpl::Fused)
        j["optimizer_implementation"] = toString(p.optimizer_implementation);
    if (all || !p.grad_accumulation_fusion)
        j["grad_accumulation_fusion"] = p.grad_accumulation_fusion;
    if (all || !p.grad_reduce_scatter)
        j["grad_reduce_scatter"] = p.grad_reduce_scatter;
    j["flash_attention"] = p.flash_attention;
    if (all || p.attention_kernel != AttentionKernel::Auto)
        j["attention_kernel"] = toString(p.attention_kernel);
    if (all || p.elementwise != Elementwise::Fused)
        j["elementwise"] = toString(p.elementwise);
    if (all || !p.rope_fusion)
        j["rope_fusion"] = p.rope_fusion;
    if (all || p.fp8_recipe != Fp8Recipe::Current)
        j["fp8_recipe"] = toString(p.fp8_recipe);
    if (all || p.cross_entropy != CrossEntropy::Megatron)
        j["cross_entropy"] = toString(p.cross_entropy);
    if (all || p.fp8_linear != Fp8Linear::TransformerEngine)
        j["fp8_linear"] = toString(p.fp8_linear);
    if (all || p.fp8_param_gather)
        j["fp8_param_gather"] = p.fp8_param_gather;
    if (all || !p.sequence_parallel_regather)
        j["sequence_parallel_regather"] = p.sequence_parallel_regather;
    if (all || p.hidden_dropout > 0)
        j["hidden_dropout"] = number(p.hidden_dropout);
    if (all || p.attention_dropout > 0)
        j["attention_dropout"] = number(p.attention_dropout);
    j["fsdp_reshard_after_forward"] = toString(p.fsdp_reshard_after_forward);
    if (all || !p.fsdp_copies)
        j["fsdp_copies"] = p.fsdp_copies;
    if (p.routing)
        j["routing"] = routingJson(*p.routing);
    if (p.dp_compression) {
        const Compression& c = *p.dp_compression;
        json dp = {{"method", toString(c.method)}};
        if (c.method == CompressionMethod::TopK) {
            dp["topk_ratio"] = number(c.topk_ratio);
            dp["error_feedback"] = c.error_feedback;
        }
        j["compression"] = {{"dp", dp}};
    }
    if (p.outer_sync) {
        const OuterSync& o = *p.outer_sync;
        json os = {{"method", toString(o.method)}};
        if (o.method != OuterSyncMethod::Hsdp) {
            os["inner_steps"] = o.inner_steps;
            if (o.method == OuterSyncMethod::StreamingDiloco) {
                os["fragments"] = o.fragments;
                os["overlap_steps"] = o.overlap_steps;
            }
            os["outer_bytes"] = number(o.outer_bytes);
            if (o.loss_penalty)
                os["loss_penalty"] = number(*o.loss_penalty);
        }
        j["outer_sync"] = os;
    }
    if (p.checkpoint != Checkpointing{})
        j["checkpoint"] = {{"interval_steps", p.checkpoint.interval_steps},
                           {"async", p.checkpoint.async}};
    if (p.token_budget != 0)
        j["token_budget"] = number(p.token_budget);
    if (p.target_loss != 0)
        j["target_loss"] = number(p.target_loss);
    return j;
}

nlohmann::json toJson(const Scenario& s) {
    json j = body(kScenarioFormat);
    j["cluster"] = toJson(s.cluster);
    j["model"] = toJson(s.model);
    j["plan"] = toJson(s.plan);
    return j;
}

std::string dumpCanonical(const nlohmann::json& j) {
    std::string out;
    write(out, j, 0);
    out += '\n';
    return out;
}

} // namespace sa

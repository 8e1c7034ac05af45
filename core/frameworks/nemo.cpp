// NeMo (1.x) launcher training YAML (conf/training/<family>/<size>.yaml) in and
// out. model.* keys are Megatron's in snake_case: they are collected under
// Megatron's argument names and resolved by the shared mapping (mapping.cpp).

#include "frameworks/framework.h"
#include "frameworks/mapping.h"

#include "formats/documents.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace sa::frameworks {

using namespace detail;

namespace {

struct Leaf {
    std::string path;
    std::string value;
    bool null = false;
};

// Nesting deeper than this is refused (an alias can make a node its own child).
constexpr int kMaxDepth = 64;

bool flatten(const YAML::Node& node, const std::string& path, std::vector<Leaf>& out,
             int depth = 0) {
    if (depth > kMaxDepth)
        return false;
    if (node.IsMap()) {
        for (const auto& kv : node) {
            if (!kv.first.IsScalar())
                return false;
            const std::string key = kv.first.Scalar();
            if (!flatten(kv.second, path.empty() ? key : path + "." + key, out, depth + 1))
                return false;
        }
    } else if (node.IsSequence()) {
        std::string s = "[";
        for (std::size_t i = 0; i < node.size(); ++i) {
            if (i)
                s += ", ";
            s += node[i].IsScalar() ? node[i].Scalar() : std::string("...");
        }
        out.push_back({path, s + "]", false});
    } else if (node.IsNull()) {
        out.push_back({path, "null", true});
    } else if (node.IsScalar()) {
        out.push_back({path, node.Scalar(), false});
    }
    return true;
}

std::string numberString(double v) {
    if (v == std::floor(v) && std::abs(v) < 1e15)
        return std::to_string(static_cast<long long>(v));
    std::ostringstream s;
    s << v;
    return s.str();
}

// OmegaConf interpolations the launcher files use: ${.sibling},
// ${training.model.key} / ${model.key}, ${multiply:a, b}, ${divide_ceil:a, b},
// ${divide_floor:a, b}. Anything else stays as written.
std::string interpolate(std::string value, const std::string& parent,
                        const std::map<std::string, std::string>& all) {
    for (int round = 0; round < 32; ++round) {
        const std::size_t open = value.rfind("${");
        if (open == std::string::npos)
            break;
        const std::size_t close = value.find('}', open);
        if (close == std::string::npos)
            break;
        std::string inner = value.substr(open + 2, close - open - 2);
        std::optional<std::string> got;
        auto lookup = [&](std::string key) -> std::optional<std::string> {
            if (!key.empty() && key[0] == '.') {
                std::string base = parent;
                std::size_t k = 1;
                while (k < key.size() && key[k] == '.') {
                    base =
                        base.substr(0, base.rfind('.') == std::string::npos ? 0 : base.rfind('.'));
                    ++k;
                }
                key = (base.empty() ? "" : base + ".") + key.substr(k);
            }
            if (key.rfind("training.", 0) == 0)
                key = key.substr(9);
            auto it = all.find(key);
            return it == all.end() ? std::nullopt : std::optional<std::string>(it->second);
        };
        const std::size_t colon = inner.find(':');
        if (colon != std::string::npos) {
            const std::string fn = inner.substr(0, colon);
            std::string args = inner.substr(colon + 1);
            const std::size_t comma = args.find(',');
            if (comma != std::string::npos) {
                auto num = [](std::string t) -> std::optional<double> {
                    t.erase(0, t.find_first_not_of(' '));
                    t.erase(t.find_last_not_of(' ') + 1);
                    char* end = nullptr;
                    const double v = std::strtod(t.c_str(), &end);
                    return end && *end == '\0' && !t.empty() ? std::optional<double>(v)
                                                             : std::nullopt;
                };
                auto a = num(args.substr(0, comma));
                auto b = num(args.substr(comma + 1));
                if (a && b) {
                    if (fn == "multiply")
                        got = numberString(*a * *b);
                    else if (fn == "divide_ceil" && *b != 0)
                        got = numberString(std::ceil(*a / *b));
                    else if (fn == "divide_floor" && *b != 0)
                        got = numberString(std::floor(*a / *b));
                }
            }
        } else {
            got = lookup(inner);
        }
        if (!got)
            break;
        value = value.substr(0, open) + *got + value.substr(close + 1);
    }
    return value;
}

// model.* keys NeMo spells differently from Megatron's argument names.
const std::map<std::string, std::string>& renamed() {
    static const std::map<std::string, std::string> m = {
        {"virtual_pipeline_model_parallel_size", "num_virtual_stages_per_pipeline_rank"},
        {"encoder_seq_length", "seq_length"},
        {"num_moe_experts", "num_experts"},
        {"activations_checkpoint_granularity", "recompute_granularity"},
        {"activations_checkpoint_method", "recompute_method"},
        {"activations_checkpoint_num_layers", "recompute_num_layers"},
        {"num_layers_in_first_pipeline_stage", "decoder_first_pipeline_num_layers"},
        {"num_layers_in_last_pipeline_stage", "decoder_last_pipeline_num_layers"},
        {"use_flash_attention", "use_flash_attn"},
        {"ub_tp_comm_overlap", "tp_comm_overlap"},
        {"optim.overlap_grad_sync", "overlap_grad_reduce"},
        {"optim.ddp_bucket_size", "ddp_bucket_size"},
    };
    return m;
}

std::string topLevelReason(const std::string& path) {
    if (path.rfind("trainer.", 0) == 0)
        return "trainer loop setting (steps, logging, validation)";
    if (path.rfind("exp_manager.", 0) == 0)
        return "logging and checkpoint manager";
    if (path.rfind("run.", 0) == 0)
        return "launcher job setting";
    if (path.rfind("hydra", 0) == 0 || path.rfind("defaults", 0) == 0)
        return "launcher configuration";
    return "not modelled";
}

} // namespace

Imported importNemo(const std::string& yamlText, const ImportOptions& opt) {
    Settings s;
    s.dialect = Dialect::Nemo;
    std::optional<Carried> carried;
    YAML::Node root;
    try {
        root = YAML::Load(yamlText);
    } catch (const YAML::Exception& e) {
        Imported bad;
        bad.problems.push_back(
            {opt.file, "line " + std::to_string(e.mark.line + 1), "YAML syntax error: " + e.msg});
        return bad;
    }
    {
        std::istringstream in(yamlText);
        std::string line;
        while (std::getline(in, line)) {
            const std::size_t a = line.find_first_not_of(" \t");
            if (a != std::string::npos &&
                line.compare(a, std::char_traits<char>::length(kCarriedPrefix), kCarriedPrefix) ==
                    0)
                carried =
                    parseCarried(line.substr(a + std::char_traits<char>::length(kCarriedPrefix)),
                                 opt.file, s.problems);
        }
    }
    if (!root.IsMap() && !root.IsNull()) {
        Imported bad;
        bad.problems.push_back({opt.file, "", "not a YAML mapping"});
        return bad;
    }
    std::vector<Leaf> leaves;
    if (!flatten(root, "", leaves)) {
        Imported bad;
        bad.problems.push_back(
            {opt.file, "", "keys must be plain names, nested at most 64 levels deep"});
        return bad;
    }
    std::map<std::string, std::string> all;
    for (const auto& l : leaves)
        all[l.path] = l.value;
    for (auto& l : leaves)
        if (!l.null && l.value.find("${") != std::string::npos)
            l.value = interpolate(l.value, l.path.substr(0, l.path.rfind('.')), all);

    std::optional<std::int64_t> nodes, devices;
    std::string nodesText, devicesText;
    std::string runName;
    bool fsdp = false;
    std::string encoderSeq;
    for (const auto& l : leaves)
        if (l.path == "model.fsdp")
            fsdp = l.value == "true" || l.value == "True";
    for (const auto& l : leaves)
        if (l.path == "model.encoder_seq_length")
            encoderSeq = l.value;

    auto put = [&](const std::string& key, const Leaf& l, std::string value = {},
                   std::string shown = {}) {
        RawSetting r;
        r.spelled = l.path;
        r.null = l.null;
        r.value = value.empty() ? l.value : value;
        r.shown = shown;
        s.set(key, std::move(r));
    };
    auto mapped = [&](const Leaf& l, const std::string& target) {
        s.mapped.push_back({l.path, l.value, target});
    };
    auto ignored = [&](const Leaf& l, const std::string& why) {
        s.ignored.push_back({l.path, l.value, why});
    };
    auto positive = [&](const Leaf& l, std::optional<std::int64_t>& v, std::string& text) {
        std::int64_t n = 0;
        std::istringstream in(l.value);
        if (!(in >> n) || !in.eof() || n < 1) {
            s.problems.push_back(
                {opt.file, l.path, "must be a positive integer, got '" + l.value + "'"});
            return;
        }
        v = n;
        text = l.value;
        mapped(l, "plan:/parallelism/dp (world size)");
    };

    for (const auto& l : leaves) {
        const std::string& path = l.path;
        if (path == "trainer.num_nodes") {
            positive(l, nodes, nodesText);
        } else if (path == "trainer.devices") {
            positive(l, devices, devicesText);
        } else if (path == "trainer.precision") {
            const std::string& v = l.value;
            if (v == "bf16" || v == "bf16-mixed" || v == "bf16-true")
                put("bf16", l, "true", v);
            else if (v == "16" || v == "16-mixed" || v == "fp16")
                put("fp16", l, "true", v);
            else
                mapped(l, "model:/dtype (fp32: refused)");
        } else if (path == "run.name") {
            runName = l.value;
            ignored(l, "launcher job setting (the documents' name when no other is given)");
        } else if (path.rfind("env_vars.", 0) == 0) {
            // The launcher's environment (conf/config.yaml env_vars).
            const std::string name = path.substr(9);
            if (readsEnvironment(name))
                put(name, l);
            else
                ignored(l, "environment variable not modelled");
        } else if (path.rfind("model.", 0) != 0) {
            ignored(l, topLevelReason(path));
        } else {
            const std::string key = path.substr(6);
            auto ren = renamed().find(key);
            if (ren != renamed().end()) {
                put(ren->second, l);
            } else if (key == "activation") {
                // megatron_base_model.py build_transformer_config: gated when the name
                // ends in "glu"; the documents' mlp says gated (swiglu) or not (gelu).
                const std::string& v = l.value;
                if (v.size() >= 3 && v.compare(v.size() - 3, 3, "glu") == 0)
                    put("swiglu", l, "true", v);
                else if (v == "gelu")
                    mapped(l, "model:/mlp (gelu)");
                else
                    put("squared_relu", l, "true", v);
            } else if (key == "fp8") {
                if (l.value == "true" || l.value == "True") {
                    std::string format = "hybrid";
                    if (all.count("model.fp8_e4m3") &&
                        (all["model.fp8_e4m3"] == "true" || all["model.fp8_e4m3"] == "True"))
                        format = "e4m3";
                    put("fp8_format", l, format, l.value);
                } else {
                    mapped(l, "model:/dtype");
                }
            } else if (key == "transformer_engine") {
                const bool te = l.value == "true" || l.value == "True";
                put("transformer_impl", l, te ? "transformer_engine" : "local", l.value);
            } else if (key == "optim.name") {
                const std::string& v = l.value;
                const bool dist = v == "distributed_fused_adam" || v == "mcore_distributed_optim";
                put("use_distributed_optimizer", l, dist ? "true" : "false", v);
                // Apex's DistributedFusedAdam as NeMo sets it up
                // (megatron_base_model.py setup_optimization): fp32 state
                // unless optim.dtype; with BF16 weights (trainer.precision
                // bf16 and megatron_amp_O2) and fp32 state it keeps 16-bit
                // remainders of the masters (store_param_remainders), with
                // bf16 state no masters; with fp16 weights fp32 masters.
                const auto precision = all.find("trainer.precision");
                const bool bf16Weights = precision != all.end() &&
                                         precision->second.rfind("bf16", 0) == 0 &&
                                         all.count("model.megatron_amp_O2") &&
                                         (all["model.megatron_amp_O2"] == "true" ||
                                          all["model.megatron_amp_O2"] == "True");
                if (v == "distributed_fused_adam" && bf16Weights) {
                    const auto dt = all.find("model.optim.dtype");
                    const bool bf16State =
                        dt != all.end() && (dt->second == "bf16" || dt->second == "bfloat16");
                    put("use_precision_aware_optimizer", l, "true", v);
                    put("main_params_dtype", l, bf16State ? "none" : "fp16", v);
                    if (bf16State) {
                        put("exp_avg_dtype", l, "bf16", v);
                        put("exp_avg_sq_dtype", l, "bf16", v);
                    }
                }
            } else if (key == "optim.dtype") {
                mapped(l, "plan:/optimizer_moments (with optim.name distributed_fused_adam)");
            } else if (key == "optim.grad_sync_dtype") {
                const std::string& v = l.value;
                if (v == "bf16" || v == "fp16" || v == "16")
                    put("grad_reduce_in_bf16", l, "true", v);
                else if (v == "fp32" || v == "32")
                    put("accumulate_allreduce_grads_in_fp32", l, "true", v);
                else
                    s.problems.push_back({opt.file, path, "must be fp32 or bf16, got '" + v + "'"});
            } else if (key == "fsdp") {
                if (fsdp)
                    put("use_megatron_fsdp", l, "true", l.value);
                else
                    mapped(l, "plan:/zero_stage");
            } else if (key == "fsdp_sharding_strategy") {
                if (!fsdp)
                    ignored(l, "only read with model.fsdp");
                else if (l.value == "full")
                    put("data_parallel_sharding_strategy", l, "optim_grads_params", l.value);
                else if (l.value == "grad")
                    put("data_parallel_sharding_strategy", l, "optim_grads", l.value);
                else
                    s.problems.push_back({opt.file, path,
                                          "'" + l.value +
                                              "' sharding is not expressible (full "
                                              "or grad: ZeRO-3 or ZeRO-2)"});
            } else if (key == "fsdp_grad_reduce_dtype") {
                if (!fsdp)
                    ignored(l, "only read with model.fsdp");
                else if (l.value == "32" || l.value == "fp32")
                    put("megatron_fsdp_grad_comm_dtype", l, "fp32", l.value);
                else if (l.value == "bf16" || l.value == "16")
                    put("megatron_fsdp_grad_comm_dtype", l, "bf16", l.value);
                else
                    s.problems.push_back(
                        {opt.file, path, "must be 32 or bf16, got '" + l.value + "'"});
            } else if (key == "tokenizer.library") {
                mapped(l, "model:/vocab (tokenizer)");
            } else if (key == "tokenizer.type") {
                const std::string lib = all.count("model.tokenizer.library")
                                            ? all["model.tokenizer.library"]
                                            : std::string("megatron");
                if (l.null)
                    ignored(l, "null: the tokenizer is named by model.tokenizer.model");
                else if (lib == "megatron")
                    put("tokenizer_type", l);
                else if (lib == "huggingface")
                    put("tokenizer_model", l);
                else
                    ignored(l, "a " + lib + " tokenizer is named by model.tokenizer.model");
            } else if (key == "tokenizer.model") {
                put("tokenizer_model", l);
            } else if (key == "data.seq_length") {
                if (encoderSeq.empty())
                    put("seq_length", l);
                else if (encoderSeq == l.value)
                    ignored(l, "the data loader's copy of model.encoder_seq_length");
                else
                    s.problems.push_back(
                        {opt.file, path,
                         l.value + " differs from model.encoder_seq_length " + encoderSeq});
            } else if (key.find('.') != std::string::npos) {
                // Nested groups (optim, data, nsys_profile, tokenizer ...).
                const std::string group = key.substr(0, key.find('.'));
                const std::string last = key.substr(key.rfind('.') + 1);
                std::string why = group == "data"           ? "data pipeline"
                                  : group == "optim"        ? (key.rfind("optim.sched", 0) == 0
                                                                   ? "learning-rate schedule"
                                                                   : "optimizer hyper-parameter")
                                  : group == "tokenizer"    ? "tokenizer file or option"
                                  : group == "nsys_profile" ? "profiling"
                                                            : "not modelled";
                if (last == "bucket_cap_mb" || last == "overlap_param_sync" ||
                    last == "contiguous_grad_buffer" || last == "contiguous_param_buffer")
                    why = last == "bucket_cap_mb"
                              ? "Apex distributed Adam bucket; Megatron Core DDP buckets come "
                                "from optim.ddp_bucket_size"
                          : last == "overlap_param_sync"
                              ? "parameter all-gather overlap: the plan's dp_overlap is the "
                                "gradient reduce"
                              : "buffer layout";
                ignored(l, why);
            } else {
                put(key, l);
            }
        }
    }

    ResolveInput in;
    in.opt = opt;
    if (opt.world_size > 0) {
        in.world = opt.world_size;
        in.worldSetting = "from the import options";
    } else if (nodes || devices) {
        in.world = nodes.value_or(1) * devices.value_or(1);
        in.worldSetting = "trainer.num_nodes " + (nodes ? nodesText : "1") + " x trainer.devices " +
                          (devices ? devicesText : "1");
    } else if (carried && carried->world_size > 0) {
        in.world = carried->world_size;
        in.worldSetting = "from the # scaleacross line";
    }
    in.vocab = opt.vocab > 0 ? opt.vocab : (carried ? carried->vocab : 0);
    in.carried = carried;
    in.name = documentName(opt, runName.empty() ? "nemo" : runName);
    in.description =
        "Imported from a NeMo launcher config" + (opt.file.empty() ? "" : " (" + opt.file + ")");
    return resolve(s, in);
}

namespace {

std::string yamlBool(bool b) {
    return b ? "true" : "false";
}

} // namespace

Exported exportNemo(const Model& m, const Plan& p) {
    Exported out;
    const Parallelism& par = p.parallelism;
    const std::int64_t world = par.gpus();
    const std::int64_t perNode = world % 8 == 0 ? 8 : world;
    std::vector<std::pair<std::string, std::string>> model; // key (dotted under model), value
    auto add = [&](const std::string& k, const std::string& v) { model.emplace_back(k, v); };
    auto num = [](std::int64_t v) { return std::to_string(v); };
    add("mcore_gpt", "true");
    add("micro_batch_size", num(p.micro_batch_sequences));
    add("global_batch_size", num(p.global_batch_sequences));
    add("tensor_model_parallel_size", num(par.tp));
    add("pipeline_model_parallel_size", num(par.pp));
    add("virtual_pipeline_model_parallel_size",
        p.schedule.kind == ScheduleKind::Interleaved && p.schedule.virtual_stages > 1
            ? num(p.schedule.virtual_stages)
            : "null");
    // Megatron-Core overlaps pipeline P2P only in the interleaved schedule, and
    // never with batched P2P (schedules.py raises for both); without a
    // pipeline neither key is read.
    const bool p2pOverlap = p.p2p_overlap && par.pp > 1 &&
                            p.schedule.kind == ScheduleKind::Interleaved &&
                            p.schedule.virtual_stages > 1;
    add("overlap_p2p_comm", yamlBool(p2pOverlap));
    add("batch_p2p_comm", yamlBool(!p2pOverlap));
    add("context_parallel_size", num(par.cp));
    add("expert_model_parallel_size", num(par.ep));
    if (par.expertTp() != par.tp)
        add("expert_tensor_parallel_size", num(par.expertTp()));
    add("sequence_parallel", yamlBool(p.sequence_parallel && par.tp > 1));
    if (p.rank_order == megatronRankOrder(true))
        add("use_tp_pp_dp_mapping", "true");
    add("encoder_seq_length", num(p.sequence_length));
    add("max_position_embeddings", num(p.sequence_length));
    add("num_layers", num(m.layers));
    add("hidden_size", num(m.hidden));
    add("ffn_hidden_size", num(m.ffn_hidden));
    add("num_attention_heads", num(m.heads));
    add("num_query_groups", m.kv_heads != m.heads ? num(m.kv_heads) : "null");
    if (m.head_dim != 0 && m.head_dim != m.hidden / m.heads)
        add("kv_channels", num(m.head_dim));
    if (m.mla) {
        add("multi_latent_attention", "true");
        add("q_lora_rank", m.mla->q_lora_rank > 0 ? num(m.mla->q_lora_rank) : "null");
        add("kv_lora_rank", num(m.mla->kv_lora_rank));
        add("qk_head_dim", num(m.mla->qk_head_dim));
        add("qk_pos_emb_head_dim", num(m.mla->rope_head_dim));
        add("v_head_dim", num(m.mla->v_head_dim));
    }
    if (m.mtp_layers > 0)
        add("mtp_num_layers", num(m.mtp_layers));
    if (m.sliding_window) {
        add("window_size", "[" + num(m.sliding_window->size - 1) + ", 0]");
        if (m.sliding_window->full_every > 0)
            add("window_attn_skip_freq", num(m.sliding_window->full_every));
    }
    add("activation", m.mlp == MlpKind::SwiGlu ? "fast-swiglu" : "gelu");
    add("share_embeddings_and_output_weights", yamlBool(m.tied_embeddings));
    if (const std::int64_t d = identityDivisor(m.vocab, par.tp); d > 0)
        add("make_vocab_size_divisible_by", num(d));
    // Layers per stage, as Megatron Core splits them (the same rules as --decoder-first-...).
    const StageSplit split = megatronStageSplit(m, p);
    for (const auto& [key, value] : stageSplitSettings(
             split,
             {"account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
              "num_layers_in_first_pipeline_stage", "num_layers_in_last_pipeline_stage", "true"}))
        add(key, value);
    // NeMo's keys have no per-chunk layout. Stages given apart from the
    // first and last ride in the carried line; an even split's remainder, or
    // first and last stages that do not split into the chunks, cannot be
    // written at all.
    const bool midEven = split.kind == StageSplit::Kind::Layout &&
                         std::all_of(split.layers.begin() + 1, split.layers.end() - 1,
                                     [&](int x) { return x == split.per; });
    const bool given = p.placement && !p.placement->layers_per_stage.empty();
    if (split.kind == StageSplit::Kind::Layout && (midEven || !given)) {
        out.problems.push_back(
            {"", "plan:/placement/layers_per_stage",
             midEven
                 ? "NeMo's first and last stage settings cannot split these stages into " +
                       std::to_string(split.chunks) +
                       " virtual stages each; Megatron-LM's --pipeline-model-parallel-layout can "
                       "(export to megatron)"
                 : std::string("NeMo needs the layers divisible by the pipeline size, or only "
                               "the first and last stages different")});
        return out;
    }
    add("activations_checkpoint_granularity",
        p.recompute == Recompute::None ? "null"
        : p.recompute == Recompute::SelectiveOp
            ? "selective" // torchtitan's per-op policy: NeMo's nearest
            : toString(p.recompute));
    add("activations_checkpoint_method",
        p.recompute == Recompute::Full ? toString(p.recompute_method) : "null");
    add("activations_checkpoint_num_layers",
        p.recompute == Recompute::Full ? std::to_string(p.recompute_layers) : "null");
    if (p.recompute == Recompute::Selective && p.recompute_modules != kDefaultRecomputeModules) {
        add("recompute_modules", "[" + recomputeModulesText(p.recompute_modules) + "]");
        out.notes.push_back("model.recompute_modules is Megatron-Core's TransformerConfig field "
                            "(Megatron-Core 0.12 and later); an older NeMo recomputes the core "
                            "attention only");
    }
    add("transformer_engine", yamlBool(p.flash_attention));
    add("use_flash_attention", yamlBool(p.flash_attention));
    add("hidden_dropout", numberText(p.hidden_dropout));
    add("attention_dropout", numberText(p.attention_dropout));
    add("ub_tp_comm_overlap", yamlBool(p.tp_comm_overlap));
    add("gradient_accumulation_fusion", yamlBool(p.grad_accumulation_fusion));
    if (!p.rope_fusion)
        add("apply_rope_fusion", "false");
    if (par.cp > 1 && (p.cp_ring == CpRing::TeA2a || p.cp_ring == CpRing::TeAllGather))
        add("cp_comm_type", p.cp_ring == CpRing::TeA2a ? "a2a" : "all_gather");
    if (par.cp > 1 && p.cp_ring == CpRing::TeP2p && p.cp_a2a_size > 1) {
        add("cp_comm_type", "a2a+p2p");
        add("hierarchical_context_parallel_sizes",
            "[" + num(p.cp_a2a_size) + ", " + num(par.cp / p.cp_a2a_size) + "]");
    }
    if (p.cuda_graphs) {
        add("cuda_graph_impl", "transformer_engine");
        if (m.moe && !m.moe->padded())
            add("cuda_graph_modules", "[attn]");
        out.notes.push_back("model.cuda_graph_impl is Megatron-Core's TransformerConfig field "
                            "(Megatron-LM 5769804591, 2025-10); NeMo before it spells it "
                            "enable_cuda_graph");
    }
    if (p.ep_overlap)
        add("overlap_moe_expert_parallel_comm", "true");
    if (p.cross_entropy == CrossEntropy::MegatronFused || p.cross_entropy == CrossEntropy::Te)
        add("cross_entropy_loss_fusion", "true");
    if (p.cross_entropy == CrossEntropy::Te)
        add("cross_entropy_fusion_impl", "te");
    add("fp8", yamlBool(m.dtype == DType::FP8));
    if (m.dtype == DType::FP8) {
        add("fp8_hybrid", "true");
        if (p.fp8_param_gather)
            add("fp8_params", "true");
        // NeMo 24.07's only recipe is delayed scaling (its launcher's amax
        // history: 1024 steps, max); current scaling is NeMo 2's
        // fp8_recipe: tensorwise.
        if (p.fp8_recipe == Fp8Recipe::Delayed) {
            add("fp8_amax_history_len", "1024");
            add("fp8_amax_compute_algo", "max");
        } else {
            add("fp8_recipe", "tensorwise");
        }
    }
    if (m.moe) {
        add("num_moe_experts", num(m.moe->experts));
        add("moe_router_topk", num(m.moe->top_k));
        add("moe_ffn_hidden_size", num(m.moe->expert_ffn_hidden));
        if (par.ep > 1) {
            add("moe_token_dispatcher_type",
                p.ep_dispatcher == EpDispatcher::AllToAll ? "alltoall" : "flex");
            if (p.ep_dispatcher == EpDispatcher::HybridEp)
                add("moe_flex_dispatcher_backend", "hybridep");
            if (p.ep_dispatcher != EpDispatcher::AllToAll && p.ep_dispatcher_sms > 0)
                add(p.ep_dispatcher == EpDispatcher::HybridEp ? "moe_hybridep_num_sms"
                                                              : "moe_deepep_num_sms",
                    num(p.ep_dispatcher_sms));
        }
        if (m.moe->router_groups > 0) {
            add("moe_router_num_groups", num(m.moe->router_groups));
            add("moe_router_group_topk", num(m.moe->router_group_topk));
        }
        if (m.moe->shared_experts > 0)
            add("moe_shared_expert_intermediate_size",
                num(std::int64_t(m.moe->shared_experts) * m.moe->expert_ffn_hidden));
        if (m.moe->dense_layers > 0)
            add("moe_layer_freq", "'([0]*" + num(m.moe->dense_layers) + "+[1]*" +
                                      num(m.layers - m.moe->dense_layers) + ")'");
        if (m.moe->capacity_factor != 1.0 || m.moe->padded())
            add("moe_expert_capacity_factor", numberText(m.moe->capacity_factor));
        if (m.moe->padded())
            add("moe_pad_expert_input_to_capacity", yamlBool(true));
    }
    const bool fsdp = p.zero_stage >= 2;
    add("fsdp", yamlBool(fsdp));
    if (fsdp) {
        add("fsdp_sharding_strategy", p.zero_stage == 3 ? "full" : "grad");
        add("fsdp_grad_reduce_dtype", p.grad_reduce_bytes == 2 ? "bf16" : "32");
    }
    // Apex's DistributedFusedAdam holds 16-bit masters with fp32 moments, or
    // no masters with bf16 moments (NeMo's setup with megatron_amp_O2);
    // Megatron Core's optimizer fp32 ones.
    const bool apex = p.zero_stage == 1 && ((p.master_weights == MasterWeights::Half &&
                                             p.optimizer_moments == OptimizerMoments::Fp32) ||
                                            (p.master_weights == MasterWeights::None &&
                                             p.optimizer_moments == OptimizerMoments::Bf16));
    if (apex)
        add("megatron_amp_O2", "true");
    add("optim.name", apex                ? "distributed_fused_adam"
                      : p.zero_stage == 1 ? "mcore_distributed_optim"
                                          : "fused_adam");
    if (apex && p.optimizer_moments == OptimizerMoments::Bf16)
        add("optim.dtype", "bf16");
    add("optim.overlap_grad_sync", yamlBool(p.dp_overlap));
    if (!fsdp)
        add("optim.grad_sync_dtype", p.grad_reduce_bytes == 2 ? "bf16" : "fp32");
    if (p.dp_overlap) {
        const double def = defaultBucketMib(std::int64_t(par.dp) * par.cp, p.grad_reduce_bytes);
        if (p.dp_bucket_mib != def)
            add("optim.ddp_bucket_size",
                num(std::llround(p.dp_bucket_mib * 1024.0 * 1024.0 / p.grad_reduce_bytes)));
    }
    out.notes.push_back("add model.tokenizer (and model.data) for a real run; the vocabulary "
                        "size is kept in the # scaleacross line");

    // What the YAML does not reproduce goes into the carried line.
    std::ostringstream body;
    body << "trainer:\n  num_nodes: " << world / perNode << "\n  devices: " << perNode
         << "\n  precision: bf16\nmodel:\n";
    bool inOptim = false;
    for (const auto& [k, v] : model) {
        if (k.rfind("optim.", 0) == 0) {
            if (!inOptim)
                body << "  optim:\n";
            inOptim = true;
            body << "    " << k.substr(6) << ": " << v << "\n";
        } else {
            body << "  " << k << ": " << v << "\n";
        }
    }
    // Transformer Engine's backend switches, as the launcher passes them
    // (conf/config.yaml env_vars): flash-attn or cuDNN instead of TE's pick.
    if (p.flash_attention && p.attention_kernel == AttentionKernel::Flash2)
        body << "env_vars:\n  NVTE_FUSED_ATTN: 0\n";
    else if (p.flash_attention && p.attention_kernel == AttentionKernel::Cudnn)
        body << "env_vars:\n  NVTE_FLASH_ATTN: 0\n";
    Carried carried;
    carried.vocab = m.vocab;
    {
        ImportOptions opt;
        opt.vocab = m.vocab;
        Imported again = importNemo(body.str(), opt);
        if (!again.ok()) {
            for (const auto& d : again.problems)
                out.problems.push_back({"", d.path, "NeMo cannot run this plan: " + d.message});
            return out;
        }
        // The vocabulary was padded again on import: carry the size as the
        // tokenizer's when that padding is the identity, else the model key.
        carryDifferences(m, p, again, carried);
        for (auto& n : carriedNotes(carried, again, "NeMo"))
            out.notes.push_back(std::move(n));
    }
    std::ostringstream t;
    t << "# NeMo launcher training config (conf/training/...): model '" << m.name << "', plan '"
      << p.name << "'\n";
    for (const auto& n : out.notes)
        t << "# note: " << n << "\n";
    t << "run:\n  name: "
      << nlohmann::json(p.name.empty() ? std::string("scaleacross") : p.name).dump() << "\n";
    t << body.str();
    t << carriedLine(carried) << "\n";
    out.text = t.str();
    return out;
}

} // namespace sa::frameworks

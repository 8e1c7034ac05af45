#include "frameworks/mapping.h"

#include "formats/documents.h"
#include "formats/json_check.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <sstream>

namespace sa::frameworks::detail {

using nlohmann::json;

namespace {

// The words of a setting that holds several: Megatron's space-separated
// values or NeMo's YAML list `[a, b]`.
std::vector<std::string> listWords(const std::string& text) {
    std::string list = text;
    for (char& ch : list)
        if (ch == '[' || ch == ']' || ch == ',')
            ch = ' ';
    std::istringstream in(list);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

std::string kebab(std::string s) {
    std::replace(s.begin(), s.end(), '_', '-');
    return s;
}

bool startsWith(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

std::optional<std::int64_t> parseInteger(const std::string& s) {
    if (s.empty())
        return std::nullopt;
    std::size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
    if (i == s.size())
        return std::nullopt;
    for (std::size_t k = i; k < s.size(); ++k)
        if (s[k] < '0' || s[k] > '9')
            return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno == ERANGE || *end != '\0')
        return std::nullopt;
    return v;
}

std::optional<double> parseNumber(const std::string& s) {
    if (s.empty())
        return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (errno == ERANGE || *end != '\0' || !std::isfinite(v))
        return std::nullopt;
    return v;
}

std::optional<bool> parseBool(const std::string& s) {
    if (s == "true" || s == "True" || s == "TRUE" || s == "yes" || s == "on")
        return true;
    if (s == "false" || s == "False" || s == "FALSE" || s == "no" || s == "off")
        return false;
    return std::nullopt;
}

// Why a setting that was read is not used, by Megatron argument name.
std::string ignoreReason(const std::string& key, Dialect dialect) {
    struct Rule {
        const char* prefix;
        const char* why;
    };
    static const Rule exact[] = {
        {"lr", "optimizer hyper-parameter"},
        {"min_lr", "optimizer hyper-parameter"},
        {"weight_decay", "optimizer hyper-parameter"},
        {"clip_grad", "optimizer hyper-parameter"},
        {"optimizer", "optimizer choice: the memory model assumes Adam"},
        {"init_method_std", "initialisation"},
        {"seed", "randomness"},
        {"train_iters", "run length"},
        {"train_samples", "run length"},
        {"save", "checkpoint path"},
        {"load", "checkpoint path"},
        {"split", "data split"},
        {"mock_data", "data pipeline (synthetic data)"},
        {"vocab_file",
         "tokenizer file: give the vocabulary size with --vocab-size or the import options"},
        {"merge_file", "tokenizer file"},
        {"normalization", "architecture detail the documents do not describe (norm kind)"},
        {"norm_epsilon", "numerics"},
        {"layernorm_epsilon", "numerics"},
        {"position_embedding_type",
         "architecture detail the documents do not describe (positions)"},
        {"max_position_embeddings", "positions table size: not part of the step time modelled"},
        {"use_rotary_position_embeddings", "architecture detail (positions)"},
        {"rotary_percent", "architecture detail (positions)"},
        {"rotary_base", "architecture detail (positions)"},
        {"no_position_embedding", "architecture detail (positions)"},
        {"disable_bias_linear", "biases: not counted by the cost model"},
        {"add_bias_linear", "biases: not counted by the cost model"},
        {"qk_layernorm", "architecture detail the documents do not describe"},
        {"apply_query_key_layer_scaling", "numerics"},
        {"attention_softmax_in_fp32", "numerics"},
        {"fp8_recipe", "FP8 is off (no --fp8-format)"},
        {"fp8_margin", "FP8 scaling detail"},
        {"fp8_interval", "FP8 scaling detail"},
        {"fp8_amax_history_len", "FP8 is off (no --fp8-format)"},
        {"fp8_amax_compute_algo", "FP8 is off (no --fp8-format)"},
        {"fp8_param_gather", "FP8 is off (no --fp8-format)"},
        {"fp8_params", "FP8 is off (no fp8)"},
        {"overlap_param_gather",
         "parameter all-gather overlap: the plan's dp_overlap is the gradient reduce"},
        {"overlap_param_gather_with_optimizer_step", "parameter all-gather overlap"},
        {"overlap_p2p_communication", "P2P overlap: no pipeline (pipeline size 1)"},
        {"no_overlap_p2p_communication", "P2P overlap: no pipeline (pipeline size 1)"},
        {"overlap_p2p_comm", "P2P overlap: no pipeline (pipeline size 1)"},
        {"batch_p2p_comm", "P2P batching: no pipeline (pipeline size 1)"},
        {"batch_p2p_sync",
         "torch.cuda.synchronize() after each batched P2P call: costs the next kernel's launch "
         "latency (microseconds), not modelled"},
        {"overlap_p2p_communication_warmup_flush",
         "P2P overlap in the interleaved warm-up and flush: the plan's p2p_overlap covers "
         "every phase"},
        {"overlap_p2p_comm_warmup_flush",
         "P2P overlap in the interleaved warm-up and flush: the plan's p2p_overlap covers "
         "every phase"},
        {"distributed_backend", "process-group setup"},
        {"distributed_timeout_minutes", "process-group setup"},
        {"use_mcore_models", "implementation choice (Megatron Core models)"},
        {"mcore_gpt", "implementation choice (Megatron Core models)"},
        {"ckpt_format", "checkpoint format"},
        {"no_masked_softmax_fusion", "kernel fusion"},
        {"no_bias_gelu_fusion", "kernel fusion"},
        {"no_bias_swiglu_fusion", "kernel fusion"},
        {"no_bias_dropout_fusion", "kernel fusion"},
        {"loss_scale", "fp16 loss scaling"},
        {"initial_loss_scale", "fp16 loss scaling"},
        {"min_loss_scale", "fp16 loss scaling"},
        {"loss_scale_window", "fp16 loss scaling"},
        {"hysteresis", "fp16 loss scaling"},
        {"use_cpu_initialization", "initialisation"},
        {"manual_gc", "garbage collection"},
        {"manual_gc_interval", "garbage collection"},
        {"gc_interval", "garbage collection"},
        {"exit_duration_in_mins", "run length"},
        {"exit_interval", "run length"},
        {"rampup_batch_size", "batch-size ramp-up: the plan is the steady-state batch"},
        {"data_parallel_sharding_strategy", "only read with Megatron FSDP"},
        {"torch_fsdp2_no_reshard_after_forward", "only read with --use-torch-fsdp2"},
        {"ddp_bucket_size",
         "without --overlap-grad-reduce Megatron reduces all gradients in one bucket"},
        {"recompute_method", "without --recompute-granularity nothing is recomputed"},
        {"recompute_num_layers", "without --recompute-granularity nothing is recomputed"},
        {"num_query_groups", "without --group-query-attention Megatron uses one group per head"},
        {"fp8_e4m3", "FP8 format detail (E4M3 or hybrid)"},
        {"fp8_hybrid", "FP8 format detail (E4M3 or hybrid)"},
        {"fp8_wgrad", "FP8 detail"},
        {"megatron_amp_O2", "O2 master weights: the documents' weights are 16-bit; their masters "
                            "follow optim.name (plan:/master_weights)"},
        {"bucket_cap_mb", "Apex distributed Adam bucket; Megatron Core DDP buckets come from "
                          "optim.ddp_bucket_size"},
        {"contiguous_grad_buffer", "buffer layout"},
        {"contiguous_param_buffer", "buffer layout"},
        {"overlap_param_sync",
         "parameter all-gather overlap: the plan's dp_overlap is the gradient "
         "reduce"},
        {"kv_channels", "null: hidden / heads"},
    };
    for (const auto& r : exact)
        if (key == r.prefix)
            return r.why;
    static const Rule prefixes[] = {
        {"log_", "logging"},
        {"tensorboard", "logging"},
        {"wandb", "logging"},
        {"timing_log", "logging"},
        {"profile", "profiling"},
        {"nsys_profile", "profiling"},
        {"eval_", "evaluation cadence"},
        {"save_", "checkpointing"},
        {"ckpt_", "checkpointing"},
        {"lr_", "learning-rate schedule"},
        {"adam_", "optimizer hyper-parameter"},
        {"sgd_", "optimizer hyper-parameter"},
        {"betas", "optimizer hyper-parameter"},
        {"sched", "learning-rate schedule"},
        {"data", "data pipeline"},
        {"train_data", "data path"},
        {"valid_data", "data path"},
        {"test_data", "data path"},
        {"tokenizer", "tokenizer detail"},
        {"moe_router_", "MoE router detail (the model spreads tokens evenly over experts)"},
        {"moe_aux_loss", "MoE loss term"},
        {"moe_z_loss", "MoE loss term"},
        {"moe_token_dispatcher", "MoE dispatcher implementation"},
        {"moe_grouped_gemm", "MoE kernel choice"},
        {"moe_permute_fusion", "kernel fusion"},
        {"moe_", "MoE setting without an expert count, or a detail not modelled"},
        {"cuda_graph", "CUDA graph detail (plan cuda_graphs is on or off)"},
        {"num_workers", "data loader"},
        {"dataloader", "data loader"},
        {"fp8_", "FP8 detail"},
        {"grad_", "numerics detail"},
        {"apex_", "logging"},
    };
    for (const auto& r : prefixes)
        if (startsWith(key, r.prefix))
            return r.why;
    if (key.size() > 7 && key.compare(key.size() - 7, 7, "_fusion") == 0)
        return "kernel fusion";
    if (key == "pre_process" || key == "post_process")
        return "pipeline-stage build flags (embedding and head on the first and last stage)";
    if (key == "persist_layer_norm")
        return "kernel choice";
    (void)dialect;
    return "not modelled";
}

class Reader {
public:
    Reader(Settings& s, Imported& out, std::string file)
        : s_(s)
        , out_(out)
        , file_(std::move(file)) {}

    // The setting if given (null counts as not given, but is reported mapped).
    RawSetting* get(const std::string& key, const std::string& target) {
        auto it = s_.byKey.find(key);
        if (it == s_.byKey.end())
            return nullptr;
        RawSetting& r = it->second;
        r.used = true;
        out_.mapped.push_back({r.spelled, r.null ? "null" : shown(r), target});
        return r.null ? nullptr : &r;
    }
    bool has(const std::string& key) const {
        auto it = s_.byKey.find(key);
        return it != s_.byKey.end() && !it->second.null;
    }
    std::optional<std::int64_t> integer(const std::string& key, const std::string& target,
                                        std::int64_t min = 1, std::int64_t max = 1000000000) {
        RawSetting* r = get(key, target);
        if (!r)
            return std::nullopt;
        auto v = r->bare ? std::nullopt : parseInteger(r->value);
        if (!v) {
            problem(r->spelled, "must be an integer, got '" + shown(*r) + "'");
            return std::nullopt;
        }
        if (*v < min) {
            problem(r->spelled, "must be at least " + integerText(min) + ", got " + shown(*r));
            return std::nullopt;
        }
        if (*v > max) {
            problem(r->spelled, "must be at most " + integerText(max) + ", got " + shown(*r));
            return std::nullopt;
        }
        return v;
    }
    std::optional<double> number(const std::string& key, const std::string& target) {
        RawSetting* r = get(key, target);
        if (!r)
            return std::nullopt;
        auto v = r->bare ? std::nullopt : parseNumber(r->value);
        if (!v)
            problem(r->spelled, "must be a number, got '" + shown(*r) + "'");
        return v;
    }
    bool flag(const std::string& key, const std::string& target) {
        RawSetting* r = get(key, target);
        if (!r)
            return false;
        if (r->bare)
            return true;
        if (s_.dialect == Dialect::Megatron && r->shown.empty()) {
            problem(r->spelled, "is a flag and takes no value, got '" + r->value + "'");
            return false;
        }
        auto b = parseBool(r->value);
        if (!b) {
            problem(r->spelled, "must be true or false, got '" + shown(*r) + "'");
            return false;
        }
        return *b;
    }
    std::optional<std::string> text(const std::string& key, const std::string& target) {
        RawSetting* r = get(key, target);
        if (!r)
            return std::nullopt;
        if (r->bare) {
            problem(r->spelled, "needs a value");
            return std::nullopt;
        }
        return r->value;
    }
    // A setting read but not used after all: ignored with `why`.
    void unuse(const std::string& key, const std::string& why) {
        auto it = s_.byKey.find(key);
        if (it == s_.byKey.end())
            return;
        it->second.used = true;
        const std::string spelled = it->second.spelled;
        auto m = std::find_if(out_.mapped.rbegin(), out_.mapped.rend(),
                              [&](const MappedSetting& ms) { return ms.setting == spelled; });
        if (m != out_.mapped.rend())
            out_.mapped.erase(std::next(m).base());
        out_.ignored.push_back({spelled, shown(it->second), why});
    }
    std::string spelled(const std::string& key) const {
        auto it = s_.byKey.find(key);
        return it != s_.byKey.end() ? it->second.spelled : s_.spell(key);
    }
    void problem(const std::string& path, const std::string& message) {
        out_.problems.push_back({file_, path, message});
    }
    void refuse(const std::string& key, const std::string& message) {
        problem(spelled(key), message);
    }
    bool failed() const { return !out_.problems.empty(); }

private:
    static std::string shown(const RawSetting& r) { return r.shown.empty() ? r.value : r.shown; }
    Settings& s_;
    Imported& out_;
    std::string file_;
};

// Megatron's --moe-layer-freq list patterns ("([0]*3+[1]*29)", "[0,1,1]"):
// sums of lists, each list possibly repeated.
class PatternParser {
public:
    explicit PatternParser(const std::string& s)
        : s_(s) {}
    std::optional<std::vector<int>> parse() {
        auto v = sum();
        skip();
        if (!v || pos_ != s_.size())
            return std::nullopt;
        return v;
    }

private:
    void skip() {
        while (pos_ < s_.size() && s_[pos_] == ' ')
            ++pos_;
    }
    bool eat(char c) {
        skip();
        if (pos_ < s_.size() && s_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    std::optional<long> count() {
        skip();
        std::size_t start = pos_;
        while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])))
            ++pos_;
        if (start == pos_ || pos_ - start > 6)
            return std::nullopt;
        return std::stol(s_.substr(start, pos_ - start));
    }
    std::optional<std::vector<int>> sum() {
        auto v = product();
        if (!v)
            return std::nullopt;
        while (eat('+')) {
            auto w = product();
            if (!w)
                return std::nullopt;
            v->insert(v->end(), w->begin(), w->end());
        }
        return v;
    }
    std::optional<std::vector<int>> product() {
        std::optional<std::vector<int>> v;
        if (eat('(')) {
            v = sum();
            if (!v || !eat(')'))
                return std::nullopt;
        } else if (eat('[')) {
            v.emplace();
            if (!eat(']')) {
                do {
                    auto n = count();
                    if (!n || *n > 1)
                        return std::nullopt;
                    v->push_back(int(*n));
                } while (eat(','));
                if (!eat(']'))
                    return std::nullopt;
            }
        } else {
            return std::nullopt;
        }
        while (eat('*')) {
            auto n = count();
            if (!n || std::int64_t(v->size()) * *n > 1000000)
                return std::nullopt;
            std::vector<int> r;
            for (long i = 0; i < *n; ++i)
                r.insert(r.end(), v->begin(), v->end());
            v = std::move(r);
        }
        return v;
    }
    const std::string& s_;
    std::size_t pos_ = 0;
};

void applyCarried(const json& overlay, json& doc) {
    for (auto it = overlay.begin(); it != overlay.end(); ++it) {
        if (it.value().is_null())
            doc.erase(it.key());
        else
            doc[it.key()] = it.value();
    }
}

} // namespace

void Settings::set(const std::string& key, RawSetting s) {
    auto it = byKey.find(key);
    if (it != byKey.end()) {
        const RawSetting& old = it->second;
        ignored.push_back({old.spelled, old.shown.empty() ? old.value : old.shown,
                           "given again later: the last one counts"});
        it->second = std::move(s);
        return;
    }
    byKey.emplace(key, std::move(s));
}

std::string Settings::spell(const std::string& key) const {
    return dialect == Dialect::Megatron ? "--" + kebab(key) : "model." + key;
}

std::string documentName(const ImportOptions& opt, const std::string& fallback) {
    if (!opt.name.empty())
        return opt.name;
    if (opt.file.empty())
        return fallback;
    std::string base = opt.file.substr(opt.file.find_last_of("/\\") + 1);
    const std::size_t dot = base.find_last_of('.');
    return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

std::string integerText(std::int64_t v) {
    return std::to_string(v);
}

std::string numberText(double v) {
    json j = v;
    if (v == std::floor(v) && std::abs(v) < 1e15)
        return std::to_string(std::int64_t(v));
    return j.dump();
}

std::int64_t paddedVocab(std::int64_t vocab, std::int64_t divisibleBy, int tp) {
    const std::int64_t multiple = divisibleBy * tp;
    return (vocab + multiple - 1) / multiple * multiple;
}

StageSplit megatronStageSplit(const Model& m, const Plan& p) {
    StageSplit out;
    const int pp = p.parallelism.pp;
    out.chunks =
        p.schedule.kind == ScheduleKind::Interleaved ? std::max(1, p.schedule.virtual_stages) : 1;
    std::vector<int> lps = p.placement ? p.placement->layers_per_stage : std::vector<int>{};
    if (lps.empty() && pp > 1 && m.layers % pp != 0) {
        // The documents' even split gives the first stages one layer more.
        for (int s = 0; s < pp; ++s)
            lps.push_back(m.layers / pp + (s < m.layers % pp ? 1 : 0));
    }
    if (int(lps.size()) != pp || pp <= 1 ||
        std::all_of(lps.begin(), lps.end(), [&](int x) { return x == lps.front(); }))
        return out;
    out.layers = lps;
    out.per = pp > 2 ? lps[1] : std::max(lps.front(), lps.back());
    const bool midEven =
        std::all_of(lps.begin() + 1, lps.end() - 1, [&](int x) { return x == out.per; });
    const int e = out.per - lps.front(), l = out.per - lps.back();
    // Each way but the layout splits every stage's layers (with the
    // embedding and loss where they count) evenly into its chunks.
    const bool perSplits = out.per % out.chunks == 0;
    if (midEven && (e == 0 || e == 1) && (l == 0 || l == 1) && perSplits) {
        out.kind = StageSplit::Kind::Accounted;
        out.embedding = e == 1;
        out.loss = l == 1;
    } else if (midEven && perSplits && lps.front() % out.chunks == 0 &&
               lps.back() % out.chunks == 0) {
        out.kind = StageSplit::Kind::FirstLast;
    } else {
        out.kind = StageSplit::Kind::Layout;
    }
    return out;
}

std::string megatronLayout(const Model& m, const StageSplit& split) {
    const int pp = int(split.layers.size()), v = split.chunks;
    std::string layout;
    for (int c = 0; c < v; ++c)
        for (int r = 0; r < pp; ++r) {
            const int layers = split.layers[std::size_t(r)];
            const int n = layers / v + (c < layers % v ? 1 : 0);
            if (!layout.empty())
                layout += '|';
            if (c == 0 && r == 0)
                layout += 'E';
            layout += std::string(std::size_t(n), 't');
            if (c == v - 1 && r == pp - 1)
                layout += std::string(std::size_t(m.mtp_layers), 'm') + 'L';
        }
    return layout;
}

std::vector<std::pair<std::string, std::string>> stageSplitSettings(const StageSplit& split,
                                                                    const StageSplitNames& names) {
    std::vector<std::pair<std::string, std::string>> out;
    if (split.kind == StageSplit::Kind::Accounted) {
        if (split.embedding)
            out.emplace_back(names.embedding, names.flag);
        if (split.loss)
            out.emplace_back(names.loss, names.flag);
    } else if (split.kind == StageSplit::Kind::FirstLast) {
        if (split.layers.front() != split.per)
            out.emplace_back(names.first, std::to_string(split.layers.front()));
        if (split.layers.back() != split.per)
            out.emplace_back(names.last, std::to_string(split.layers.back()));
    }
    return out;
}

std::int64_t identityDivisor(std::int64_t vocab, int tp) {
    if (tp <= 0 || vocab % tp != 0)
        return 0;
    return std::gcd(vocab / tp, std::int64_t(128));
}

std::int64_t knownTokenizerVocab(const std::string& name) {
    // Sizes before padding, from the tokenizers' own files.
    if (name == "GPT2BPETokenizer" || name == "gpt2")
        return 50257; // GPT-2 BPE (encoder.json)
    auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
    if (has("Llama-3") || has("Meta-Llama-3") || has("llama3") || has("Llama3"))
        return 128256; // tiktoken-based, 128,000 + 256 special tokens
    if (has("Llama-2") || has("llama2") || has("Llama2"))
        return 32000; // sentencepiece
    return 0;
}

std::optional<Carried> parseCarried(const std::string& text, const std::string& file,
                                    std::vector<Diagnostic>& problems) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        problems.push_back({file, kCarriedPrefix, "is not a JSON object"});
        return std::nullopt;
    }
    Carried c;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        const json& v = it.value();
        if ((k == "world_size" || k == "vocab") && v.is_number_integer() &&
            v.get<std::int64_t>() > 0) {
            (k == "world_size" ? c.world_size : c.vocab) = v.get<std::int64_t>();
        } else if ((k == "plan" || k == "model") && v.is_object()) {
            (k == "plan" ? c.plan : c.model) = v;
        } else {
            problems.push_back(
                {file, std::string(kCarriedPrefix) + " /" + k, "unknown key or wrong type"});
        }
    }
    return c;
}

std::string carriedLine(const Carried& c) {
    json j = json::object();
    if (c.world_size > 0)
        j["world_size"] = c.world_size;
    if (c.vocab > 0)
        j["vocab"] = c.vocab;
    if (!c.model.empty())
        j["model"] = c.model;
    if (!c.plan.empty())
        j["plan"] = c.plan;
    return std::string(kCarriedPrefix) + " " + j.dump();
}

void carryDifferences(const Model& want, const Plan& wantPlan, const Imported& got,
                      Carried& carried) {
    auto diff = [](json a, json b, json& out) {
        for (const char* k : {"format", "version", "name", "description"}) {
            a.erase(k);
            b.erase(k);
        }
        for (auto it = a.begin(); it != a.end(); ++it)
            if (!b.contains(it.key()) || b[it.key()] != it.value())
                out[it.key()] = it.value();
        for (auto it = b.begin(); it != b.end(); ++it)
            if (!a.contains(it.key()))
                out[it.key()] = nullptr;
    };
    // Without documents the whole of each is carried.
    diff(toJson(want), got.model ? toJson(*got.model) : json::object(), carried.model);
    diff(toJson(wantPlan), got.plan ? toJson(*got.plan) : json::object(), carried.plan);
}

namespace {
// A value for a note: its JSON, cut short (the carried line has it whole).
std::string shortened(const json& v) {
    std::string s = v.dump();
    return s.size() <= 120 ? s : s.substr(0, 117) + "...";
}
} // namespace

std::vector<std::string> carriedNotes(const Carried& c, const Imported& got,
                                      const char* framework) {
    std::vector<std::string> notes;
    const json gotPlan = got.plan ? toJson(*got.plan) : json::object();
    for (auto it = c.plan.begin(); it != c.plan.end(); ++it) {
        if (it.value().is_null()) {
            // Unset in the plan, set by what the framework reads: the run
            // launched from these settings does that, the plan's evaluation
            // its default.
            const auto run = gotPlan.find(it.key());
            notes.push_back("plan key '" + it.key() + "' is not set (the plan's default): " +
                            framework + " with these settings runs " +
                            (run != gotPlan.end() ? shortened(*run) : std::string("its own")) +
                            "; kept unset in the # scaleacross line");
            continue;
        }
        notes.push_back("plan key '" + it.key() + "' " + shortened(it.value()) + ": " + framework +
                        " cannot express it; kept in the # scaleacross line");
    }
    for (auto it = c.model.begin(); it != c.model.end(); ++it)
        notes.push_back("model key '" + it.key() + "' " + shortened(it.value()) + ": " + framework +
                        " cannot express it; kept in the # scaleacross line");
    return notes;
}

Imported resolve(Settings& s, const ResolveInput& in) {
    Imported out;
    out.mapped = s.mapped;
    out.ignored = s.ignored;
    out.problems = s.problems;
    Reader r(s, out, in.opt.file);
    const bool nemo = s.dialect == Dialect::Nemo;

    // ---- parallelism
    // The documents' limit on each degree (docs/FORMATS.md).
    constexpr std::int64_t kDegreeMax = 10000000;
    auto degree = [&](const char* key, const char* target) {
        return int(r.integer(key, target, 1, kDegreeMax).value_or(1));
    };
    const int tp = degree("tensor_model_parallel_size", "plan:/parallelism/tp");
    const int pp = degree("pipeline_model_parallel_size", "plan:/parallelism/pp");
    const int cp = degree("context_parallel_size", "plan:/parallelism/cp");
    const int ep = degree("expert_model_parallel_size", "plan:/parallelism/ep");
    std::int64_t modelParallel = 0; // tp x cp x pp, 0 when it overflows
    if (__builtin_mul_overflow(std::int64_t(tp) * cp, std::int64_t(pp), &modelParallel))
        modelParallel = 0;
    int dp = 0;
    if (in.world <= 0) {
        out.needs_world_size = true;
        r.problem(nemo ? "trainer.num_nodes" : "world size",
                  nemo ? "the world size is unknown: give trainer.num_nodes and trainer.devices "
                         "or the world size to import with (--world-size)"
                       : "the world size is unknown: give torchrun --nnodes and --nproc-per-node "
                         "in the script or the world size to import with (--world-size)");
    } else if (in.world > 100000000000) {
        r.problem(in.worldSetting.empty() ? "world size" : in.worldSetting,
                  "a world of " + integerText(in.world) +
                      " GPUs is beyond the documents' limit of 100,000,000,000");
    } else if (modelParallel == 0 || in.world % modelParallel != 0) {
        r.refuse("tensor_model_parallel_size",
                 "the world size " + integerText(in.world) + " (" + in.worldSetting +
                     ") is not a multiple of tp x cp x pp = " + std::to_string(tp) + " x " +
                     std::to_string(cp) + " x " + std::to_string(pp));
    } else if (in.world / modelParallel > kDegreeMax) {
        r.refuse("tensor_model_parallel_size", "dp = " + integerText(in.world / modelParallel) +
                                                   " is beyond the documents' limit of 10,000,000");
    } else {
        dp = int(in.world / modelParallel);
    }

    // ---- batch and sequence
    auto mbs = r.integer("micro_batch_size", "plan:/micro_batch_sequences");
    if (!mbs && !r.has("micro_batch_size"))
        r.refuse("micro_batch_size", "missing: Megatron needs the micro batch size");
    auto gbs = r.integer("global_batch_size", "plan:/global_batch_sequences");
    auto seq = r.integer("seq_length", "plan:/sequence_length");
    if (!seq && r.has("encoder_seq_length"))
        seq = r.integer("encoder_seq_length", "plan:/sequence_length");
    if (!seq && !r.has("seq_length"))
        r.refuse("seq_length", "missing: the sequence length is required");
    std::int64_t global = 0;
    if (mbs && dp > 0) {
        global = gbs.value_or(*mbs * dp);
        if (global % (*mbs * dp) != 0)
            r.refuse("global_batch_size", "global batch " + integerText(global) +
                                              " is not a multiple of micro batch x dp = " +
                                              integerText(*mbs) + " x " + std::to_string(dp));
    }

    // ---- model shape
    Model m;
    m.name = in.name;
    m.description = in.description;
    auto layers = r.integer("num_layers", "model:/layers");
    if (!layers && !r.has("num_layers"))
        r.refuse("num_layers", "missing: the number of layers is required");
    auto hidden = r.integer("hidden_size", "model:/hidden");
    if (!hidden && !r.has("hidden_size"))
        r.refuse("hidden_size", "missing: the hidden size is required");
    auto heads = r.integer("num_attention_heads", "model:/heads");
    if (!heads && !r.has("num_attention_heads"))
        r.refuse("num_attention_heads", "missing: the number of attention heads is required");
    const bool swiglu = r.flag("swiglu", "model:/mlp (swiglu)");
    const bool squaredRelu = r.flag("squared_relu", "model:/mlp (non-gated: gelu)");
    m.mlp = swiglu ? MlpKind::SwiGlu : MlpKind::Gelu;
    (void)squaredRelu;
    m.layers = int(layers.value_or(0));
    m.hidden = hidden.value_or(0);
    m.heads = int(heads.value_or(0));
    if (auto f = r.integer("ffn_hidden_size", "model:/ffn_hidden")) {
        m.ffn_hidden = *f;
    } else if (nemo && !r.has("ffn_hidden_size")) {
        r.refuse("ffn_hidden_size", "missing: NeMo needs the FFN size");
    } else if (swiglu) {
        // megatron/training/arguments.py validate_args: 2/3 of 4h, down to a multiple of 64.
        m.ffn_hidden = std::int64_t(double(4 * m.hidden * 2) / 3.0 / 64.0) * 64;
    } else {
        m.ffn_hidden = 4 * m.hidden;
    }
    {
        bool gqa =
            nemo ? r.has("num_query_groups") : r.flag("group_query_attention", "model:/kv_heads");
        if (gqa) {
            m.kv_heads = int(r.integer("num_query_groups", "model:/kv_heads").value_or(1));
        } else {
            m.kv_heads = m.heads;
            if (r.has("num_query_groups"))
                r.unuse("num_query_groups",
                        "without --group-query-attention Megatron uses one group per head");
            else if (nemo)
                r.get("num_query_groups", "model:/kv_heads (null: one group per head)");
        }
    }
    // --kv-channels: the width of one head (Megatron: hidden / heads when
    // absent); Qwen3 sets it apart.
    if (auto kv = r.integer("kv_channels", "model:/head_dim");
        kv && *kv > 0 && m.heads > 0 && *kv != m.hidden / m.heads)
        m.head_dim = *kv;
    // --multi-latent-attention (Megatron-Core MLATransformerConfig): the
    // latent ranks and head widths, with argparse's defaults
    // (megatron/training/arguments.py: --q-lora-rank None, --kv-lora-rank 32,
    // --qk-head-dim 128, --qk-pos-emb-head-dim 64, --v-head-dim 128). Every
    // head has its own key and value: query groups and kv-channels do not
    // apply.
    {
        static const char* const kMlaKeys[] = {"q_lora_rank", "kv_lora_rank", "qk_head_dim",
                                               "qk_pos_emb_head_dim", "v_head_dim"};
        if (r.flag("multi_latent_attention", "model:/mla")) {
            MlaConfig a;
            a.q_lora_rank = r.integer("q_lora_rank", "model:/mla/q_lora_rank").value_or(0);
            a.kv_lora_rank = r.integer("kv_lora_rank", "model:/mla/kv_lora_rank").value_or(32);
            a.qk_head_dim = r.integer("qk_head_dim", "model:/mla/qk_head_dim").value_or(128);
            a.rope_head_dim =
                r.integer("qk_pos_emb_head_dim", "model:/mla/rope_head_dim", 0).value_or(64);
            a.v_head_dim = r.integer("v_head_dim", "model:/mla/v_head_dim").value_or(128);
            m.mla = a;
            m.kv_heads = m.heads;
            m.head_dim = 0;
        } else {
            for (const char* key : kMlaKeys)
                if (r.has(key))
                    r.unuse(key, "only read with multi-latent attention");
        }
    }
    // --mtp-num-layers (Megatron-Core's multi-token prediction, None by
    // default; NeMo's and Bridge's mtp_num_layers): the modules after the
    // last layer. --mtp-loss-scaling-factor weighs their loss and costs
    // nothing.
    if (auto mtp = r.integer("mtp_num_layers", "model:/mtp_layers"); mtp && *mtp > 0)
        m.mtp_layers = int(*mtp);
    // --window-size (left, right) and --window-attn-skip-freq N (Megatron-
    // Core's sliding-window attention; None by default): a query attends to
    // itself and `left` keys before it; every N-th layer attends fully
    // (transformer/utils.py is_layer_window_attention). NeMo and Bridge
    // pass the TransformerConfig fields of the same names.
    if (auto ws = r.text("window_size", "model:/sliding_window/size")) {
        std::string t;
        for (char ch : *ws)
            if (!std::isspace(static_cast<unsigned char>(ch)) && ch != '(' && ch != ')' &&
                ch != '[' && ch != ']')
                t += ch;
        const auto comma = t.find(',');
        const auto left = parseInteger(t.substr(0, comma));
        const auto right =
            comma == std::string::npos ? std::nullopt : parseInteger(t.substr(comma + 1));
        if (!left || !right)
            r.refuse("window_size", "must be two integers (left, right), got '" + *ws + "'");
        else if (*right != 0)
            r.refuse("window_size", "a window reaching " + integerText(*right) +
                                        " keys ahead is not causal: only (left, 0) is modelled");
        else if (*left >= 0)
            m.sliding_window = SlidingWindow{*left + 1, 0};
    }
    if (auto freq = r.text("window_attn_skip_freq", "model:/sliding_window/full_every")) {
        const auto n = parseInteger(*freq);
        if (!n || *n < 0)
            r.refuse("window_attn_skip_freq",
                     "only an integer N (every N-th layer full) is modelled, got '" + *freq + "'");
        else if (!m.sliding_window)
            r.unuse("window_attn_skip_freq", "no window: every layer attends fully");
        else
            m.sliding_window->full_every = int(*n);
    }
    if (r.has("mtp_loss_scaling_factor"))
        r.unuse("mtp_loss_scaling_factor", "the MTP loss's weight changes no cost");
    if (nemo) {
        m.tied_embeddings = true; // share_embeddings_and_output_weights defaults to true
        if (r.has("share_embeddings_and_output_weights"))
            m.tied_embeddings =
                r.flag("share_embeddings_and_output_weights", "model:/tied_embeddings");
    } else {
        m.tied_embeddings =
            !r.flag("untie_embeddings_and_output_weights", "model:/tied_embeddings");
    }

    // ---- vocabulary, padded as Megatron pads (vocab_size_with_padding)
    {
        const std::int64_t divisor =
            r.integer("make_vocab_size_divisible_by", "model:/vocab (padding)").value_or(128);
        std::int64_t orig = in.vocab;
        auto vs = r.integer("vocab_size", "model:/vocab");
        auto type = r.text("tokenizer_type", "model:/vocab (tokenizer)");
        auto tmodel = r.text("tokenizer_model", "model:/vocab (tokenizer)");
        if (orig <= 0 && vs)
            orig = *vs;
        if (orig <= 0 && type)
            orig = knownTokenizerVocab(*type);
        if (orig <= 0 && tmodel)
            orig = knownTokenizerVocab(*tmodel);
        if (orig <= 0) {
            if (!r.failed() || !vs)
                r.refuse("vocab_size",
                         "the vocabulary size is unknown: give it (--vocab-size, or the import "
                         "options' vocab) for this tokenizer");
        } else {
            m.vocab = paddedVocab(orig, divisor, tp);
        }
    }

    // ---- precision
    {
        const bool bf16 = r.flag("bf16", "model:/dtype");
        const bool fp16 = r.flag("fp16", "model:/dtype (fp16 as 16-bit: same GEMM rate)");
        auto fp8 = r.text("fp8_format", "model:/dtype");
        if (fp8 && *fp8 != "e4m3" && *fp8 != "hybrid")
            r.refuse("fp8_format", "must be e4m3 or hybrid, got '" + *fp8 + "'");
        m.dtype = fp8 ? DType::FP8 : DType::BF16;
        if (!bf16 && !fp16) {
            const std::string why =
                "fp32 training: the documents model 16-bit (bf16 / fp16) or FP8 GEMMs";
            if (nemo)
                r.problem("trainer.precision", why);
            else
                r.refuse("bf16", why);
        }
        if (bf16 && fp16)
            r.refuse("fp16", "--bf16 and --fp16 together");
    }

    // Megatron's (NeMo's) defaults for what the configuration leaves out,
    // shared with the plan's "framework" key.
    const Plan fw =
        frameworkDefaults(nemo ? TrainingFramework::Nemo : TrainingFramework::MegatronCore);
    Plan p;
    p.name = in.name;
    p.description = in.description;
    p.sequence_length = seq.value_or(0);
    p.micro_batch_sequences = mbs.value_or(1);
    p.global_batch_sequences = global;
    p.parallelism = {tp, cp, pp, dp, ep};
    p.rank_order = megatronRankOrder(r.flag("use_tp_pp_dp_mapping", "plan:/rank_order"));
    // ---- dropout (--hidden-dropout, --attention-dropout; NeMo model.*),
    // Megatron's 0.1 when not given.
    {
        const std::pair<const char*, double Plan::*> dropouts[] = {
            {"hidden_dropout", &Plan::hidden_dropout},
            {"attention_dropout", &Plan::attention_dropout}};
        for (const auto& [key, field] : dropouts) {
            p.*field = fw.*field;
            if (auto v = r.number(key, std::string("plan:/") + key)) {
                if (!formats::kProbability.contains(*v))
                    r.refuse(key,
                             "must be " + formats::kProbability.rule() + ", got " + numberText(*v));
                else
                    p.*field = *v;
            }
        }
    }

    // ---- gradient accumulation in the wgrad GEMMs: Megatron's
    // --no-gradient-accumulation-fusion turns it off; NeMo's
    // model.gradient_accumulation_fusion, False when not given.
    if (nemo)
        p.grad_accumulation_fusion =
            r.has("gradient_accumulation_fusion")
                ? r.flag("gradient_accumulation_fusion", "plan:/grad_accumulation_fusion")
                : fw.grad_accumulation_fusion;
    else
        p.grad_accumulation_fusion =
            !r.flag("no_gradient_accumulation_fusion", "plan:/grad_accumulation_fusion");

    // ---- the rotary embedding's kernel: Megatron's --no-rope-fusion
    // (arguments.py: store_false into apply_rope_fusion, fused by default);
    // NeMo's model.apply_rope_fusion, read when given.
    if (nemo) {
        if (r.has("apply_rope_fusion"))
            p.rope_fusion = r.flag("apply_rope_fusion", "plan:/rope_fusion");
    } else {
        p.rope_fusion = !r.flag("no_rope_fusion", "plan:/rope_fusion");
    }

    // ---- gradients (arguments.py validate_args: bf16 reduces in fp32 unless
    // --grad-reduce-in-bf16; fp16 reduces in fp16 unless
    // --accumulate-allreduce-grads-in-fp32)
    {
        const bool fp16 = r.has("fp16") && !r.has("bf16");
        const bool inBf16 = r.flag("grad_reduce_in_bf16", "plan:/grad_reduce_bytes");
        const bool inFp32 = r.flag("accumulate_allreduce_grads_in_fp32", "plan:/grad_reduce_bytes");
        auto mainGrads = r.text("main_grads_dtype", "plan:/grad_reduce_bytes");
        if (mainGrads && *mainGrads != "fp32" && *mainGrads != "bf16")
            r.refuse("main_grads_dtype", "must be fp32 or bf16, got '" + *mainGrads + "'");
        if (fp16)
            p.grad_reduce_bytes = inFp32 ? 4 : 2;
        else
            p.grad_reduce_bytes =
                inBf16 || (!inFp32 && mainGrads == "bf16") ? 2 : fw.grad_reduce_bytes;
    }

    // ---- optimizer precision (arguments.py: --use-precision-aware-optimizer
    // with --main-params-dtype fp32|fp16 and --exp-avg-dtype /
    // --exp-avg-sq-dtype fp32|fp16|bf16|fp8; without it fp32 throughout).
    // The NeMo importer maps Apex's DistributedFusedAdam onto the same
    // settings, with main_params_dtype none when the bf16 weights are the
    // masters.
    {
        const std::string target = "plan:/optimizer_moments, plan:/master_weights";
        const bool aware = r.flag("use_precision_aware_optimizer", target);
        const auto mainParams = r.text("main_params_dtype", "plan:/master_weights");
        const auto avg = r.text("exp_avg_dtype", "plan:/optimizer_moments");
        const auto avgSq = r.text("exp_avg_sq_dtype", "plan:/optimizer_moments");
        const auto half = [](const std::optional<std::string>& v) {
            return v && (*v == "bf16" || *v == "fp16");
        };
        const auto known = [&](const char* key, const std::optional<std::string>& v) {
            if (v && *v != "fp32" && !half(v))
                r.refuse(key, "must be fp32, fp16 or bf16, got '" + *v +
                                  "' (8-bit moments are not modelled)");
        };
        known("exp_avg_dtype", avg);
        known("exp_avg_sq_dtype", avgSq);
        if (mainParams && *mainParams != "fp32" && *mainParams != "fp16" && *mainParams != "none")
            r.refuse("main_params_dtype", "must be fp32 or fp16, got '" + *mainParams + "'");
        if (aware) {
            if (half(avg) != half(avgSq))
                r.refuse("exp_avg_dtype", "must match exp_avg_sq_dtype: both 16-bit or both fp32 "
                                          "(the plan has one precision for both moments)");
            p.optimizer_moments = half(avg) ? OptimizerMoments::Bf16 : fw.optimizer_moments;
            p.master_weights = mainParams == "fp16"   ? MasterWeights::Half
                               : mainParams == "none" ? MasterWeights::None
                                                      : fw.master_weights;
        }
    }

    // ---- optimizer sharding
    {
        const bool distOpt = r.flag("use_distributed_optimizer", "plan:/zero_stage (1)");
        const bool megatronFsdp = r.flag("use_megatron_fsdp", "plan:/zero_stage") ||
                                  r.flag("use_custom_fsdp", "plan:/zero_stage");
        const bool torchFsdp = r.flag("use_torch_fsdp2", "plan:/zero_stage (3)");
        if (torchFsdp) {
            p.zero_stage = 3;
            p.fsdp_reshard_after_forward = FsdpReshard::Always;
            p.fsdp_copies = true; // FSDP2 copies its gathers and gradients
            if (r.flag("torch_fsdp2_no_reshard_after_forward",
                       "plan:/fsdp_reshard_after_forward (never)"))
                p.fsdp_reshard_after_forward = FsdpReshard::Never;
            if (pp > 1)
                r.refuse("use_torch_fsdp2", "is not supported with pipeline parallelism "
                                            "(Megatron asserts)");
            if (megatronFsdp)
                r.refuse("use_torch_fsdp2", "together with Megatron FSDP");
            if (m.tied_embeddings)
                r.refuse("use_torch_fsdp2", "needs --untie-embeddings-and-output-weights "
                                            "(Megatron asserts)");
        } else if (megatronFsdp) {
            // Megatron-FSDP's parameters and gradients are views of its
            // buffers, as NeMo's torch FSDP's are of its FlatParameters.
            p.fsdp_copies = false;
            // NeMo's fsdp is torch FSDP, which NeMo refuses with FP8
            // (megatron_base_model.py _validate_and_override_config).
            if (nemo && m.dtype == DType::FP8)
                r.refuse("use_megatron_fsdp", "torch FSDP does not support FP8 in NeMo");
            // megatron/training/arguments.py: --data-parallel-sharding-strategy,
            // default optim_grads_params.
            const std::string strategy =
                r.text("data_parallel_sharding_strategy", "plan:/zero_stage")
                    .value_or("optim_grads_params");
            if (strategy == "no_shard")
                p.zero_stage = 0;
            else if (strategy == "optim")
                p.zero_stage = 1;
            else if (strategy == "optim_grads")
                p.zero_stage = 2;
            else if (strategy == "optim_grads_params")
                p.zero_stage = 3;
            else
                r.refuse("data_parallel_sharding_strategy",
                         "must be no_shard, optim, optim_grads or optim_grads_params, got '" +
                             strategy + "'");
            if (auto comm = r.text("megatron_fsdp_grad_comm_dtype", "plan:/grad_reduce_bytes")) {
                if (*comm == "bf16" || *comm == "fp16")
                    p.grad_reduce_bytes = 2;
                else if (*comm == "fp32")
                    p.grad_reduce_bytes = 4;
                else if (*comm != "auto")
                    r.refuse("megatron_fsdp_grad_comm_dtype",
                             "must be fp32, bf16, fp16 or auto, got '" + *comm + "'");
            }
        } else {
            p.zero_stage = distOpt ? 1 : fw.zero_stage;
        }
        // Partial distributed optimizer (Megatron-Core parallel_state.py:
        // the dp x cp ranks split into `instances` consecutive groups, each
        // sharding the optimizer; ParamAndGradBuffer reduce-scatters inside
        // one and all-reduces across them): HSDP's dp_shard = dp / instances.
        if (auto inst = r.integer("num_distributed_optimizer_instances",
                                  "plan:/dp_shard (dp / instances)", 1, kDegreeMax);
            inst && *inst > 1) {
            if (!distOpt || megatronFsdp || torchFsdp)
                r.refuse("num_distributed_optimizer_instances",
                         "splits the distributed optimizer (--use-distributed-optimizer), which "
                         "these settings do not run");
            else if (dp > 0 && dp % *inst != 0)
                r.refuse("num_distributed_optimizer_instances",
                         "must divide dp (" + std::to_string(dp) + "), got " + integerText(*inst));
            else if (dp > 0)
                p.dp_shard = int(dp / *inst);
        }
    }

    // ---- data-parallel overlap and buckets
    p.dp_overlap = r.flag("overlap_grad_reduce", "plan:/dp_overlap");
    // Transformer Engine's userbuffers (NeMo: ub_tp_comm_overlap).
    p.tp_comm_overlap = r.flag("tp_comm_overlap", "plan:/tp_comm_overlap");
    // CUDA graphs: TransformerConfig.cuda_graph_impl ("none" by default);
    // before Megatron-LM 5769804591 (2025-10) --enable-cuda-graph (local)
    // and --external-cuda-graph (Transformer Engine).
    if (auto impl = r.text("cuda_graph_impl", "plan:/cuda_graphs")) {
        if (*impl == "local" || *impl == "transformer_engine" || *impl == "full_iteration")
            p.cuda_graphs = true;
        else if (*impl != "none")
            r.refuse("cuda_graph_impl", "must be none, local, transformer_engine or "
                                        "full_iteration, got '" +
                                            *impl + "'");
    }
    const bool localGraphs = r.flag("enable_cuda_graph", "plan:/cuda_graphs");
    const bool teGraphs = r.flag("external_cuda_graph", "plan:/cuda_graphs");
    p.cuda_graphs = p.cuda_graphs || localGraphs || teGraphs;
    for (const char* key : {"cuda_graph_modules", "cuda_graph_scope"})
        if (p.cuda_graphs && r.has(key))
            r.unuse(key, "the captured modules are not told apart: every layer is costed as "
                         "captured, but a dropless MoE layer's expert half, which cannot be");
    // --overlap-moe-expert-parallel-comm: the MoE all-to-all beside another
    // microbatch's compute (Megatron-Core combined_1f1b.py).
    p.ep_overlap = r.flag("overlap_moe_expert_parallel_comm", "plan:/ep_overlap");
    if (r.has("ddp_num_buckets"))
        r.refuse("ddp_num_buckets", "a bucket count: the documents give a bucket size");
    if (p.dp_overlap) {
        auto elems = r.integer("ddp_bucket_size", "plan:/dp_bucket_mib");
        p.dp_bucket_mib = elems ? double(*elems) * p.grad_reduce_bytes / (1024.0 * 1024.0)
                                : defaultBucketMib(std::int64_t(dp) * cp, p.grad_reduce_bytes);
    }

    // ---- sequence parallel: Megatron turns it off at tp 1 (validate_args)
    p.sequence_parallel =
        r.flag("sequence_parallel",
               tp > 1 ? "plan:/sequence_parallel" : "plan:/sequence_parallel (off at tp 1)") &&
        tp > 1;

    // ---- attention kernels
    {
        const std::string impl = r.text("transformer_impl", "plan:/flash_attention")
                                     .value_or(nemo ? "local" : "transformer_engine");
        const std::string backend =
            r.text("attention_backend", "plan:/flash_attention").value_or("auto");
        const bool useFlash = r.flag("use_flash_attn", "plan:/flash_attention");
        if (impl != "transformer_engine" && impl != "local")
            r.refuse("transformer_impl", "must be transformer_engine or local, got '" + impl + "'");
        // Transformer Engine's backends: fused is cuDNN's FusedAttention,
        // flash the flash-attn package (version 2 unless flash_attn_3 is
        // installed); auto lets TE pick (FusedAttention on Hopper and newer).
        if (backend == "flash" || backend == "fused") {
            p.flash_attention = true;
            p.attention_kernel =
                backend == "fused" ? AttentionKernel::Cudnn : AttentionKernel::Flash2;
        } else if (backend == "unfused" || backend == "local")
            p.flash_attention = false;
        else if (backend == "auto")
            p.flash_attention = impl == "transformer_engine" || useFlash;
        else
            r.refuse("attention_backend",
                     "must be flash, fused, unfused, local or auto, got '" + backend + "'");
        // With --attention-backend auto, Transformer Engine's environment
        // switches decide (TE 1.x DotProductAttention: NVTE_FLASH_ATTN and
        // NVTE_FUSED_ATTN, both 1 by default; 0 turns a backend off). NeMo's
        // launcher set NVTE_FUSED_ATTN=0 from 2024-02 to 2024-08
        // (NeMo-Framework-Launcher 562dcb45 .. 04b8d098), so its runs of that
        // time ran flash-attn, FlashAttention-2.
        auto envSwitch = [&](const char* name) {
            const RawSetting* v = r.get(name, "plan:/attention_kernel");
            if (!v)
                return true;
            const auto n = parseInteger(v->value);
            if (!n) {
                r.problem(v->spelled,
                          "must be an integer (0 turns the backend off), got '" + v->value + "'");
                return true;
            }
            return *n != 0;
        };
        const bool fusedOn = envSwitch("NVTE_FUSED_ATTN");
        const bool flashOn = envSwitch("NVTE_FLASH_ATTN");
        if (backend == "auto" && impl == "transformer_engine") {
            if (!fusedOn && !flashOn)
                p.flash_attention = false; // TE's unfused DotProductAttention
            else if (!fusedOn)
                p.attention_kernel = AttentionKernel::Flash2;
            else if (!flashOn)
                p.attention_kernel = AttentionKernel::Cudnn;
        }
    }

    // ---- the loss: --cross-entropy-loss-fusion (store_true; NeMo's
    // model.cross_entropy_loss_fusion) with --cross-entropy-fusion-impl
    // native (the default) or te; without the fusion Megatron-Core runs
    // tensor_parallel.vocab_parallel_cross_entropy.
    if (r.flag("cross_entropy_loss_fusion", "plan:/cross_entropy")) {
        const std::string impl =
            r.text("cross_entropy_fusion_impl", "plan:/cross_entropy").value_or("native");
        if (impl == "native")
            p.cross_entropy = CrossEntropy::MegatronFused;
        else if (impl == "te")
            p.cross_entropy = CrossEntropy::Te;
        else
            r.refuse("cross_entropy_fusion_impl", "must be native or te, got '" + impl + "'");
    } else {
        p.cross_entropy = CrossEntropy::Megatron;
        if (r.has("cross_entropy_fusion_impl"))
            r.unuse("cross_entropy_fusion_impl",
                    "only read with --cross-entropy-loss-fusion (the unfused loss otherwise)");
    }

    // ---- context parallelism: --cp-comm-type (default p2p; NeMo's
    // model.cp_comm_type), one type for every layer or one per layer:
    // Transformer Engine's ring (p2p), all-gather (all_gather, what
    // Transformer Engine accepts and Megatron-Core passes it unchanged;
    // arguments.py's help spells it allgather), all-to-all (a2a) or the
    // hierarchical a2a+p2p with --hierarchical-context-parallel-sizes
    // (NeMo's hierarchical_context_parallel_sizes): the all-to-all group's
    // size, then the ring's (Transformer Engine takes exactly the two; a
    // size of 1 makes it the plain ring or the plain all-to-all). Different
    // types per layer are not modelled.
    bool hierarchical = false;
    if (cp > 1)
        if (auto comm = r.text("cp_comm_type", "plan:/cp_ring")) {
            // Megatron's words, or NeMo's YAML list [a, b, ...].
            std::string first;
            bool ok = true;
            for (const std::string& w : listWords(*comm)) {
                if (!ok)
                    break;
                if (first.empty())
                    first = w;
                if (w != first) {
                    r.refuse("cp_comm_type", "a communication type per layer ('" + first + "', '" +
                                                 w + "'): the documents give every layer one");
                    ok = false;
                } else if (w != "p2p" && w != "a2a" && w != "allgather" && w != "all_gather" &&
                           w != "a2a+p2p") {
                    r.refuse("cp_comm_type",
                             "'" + w +
                                 "' is not modelled: the documents have Transformer Engine's "
                                 "p2p ring, allgather, a2a and a2a+p2p");
                    ok = false;
                }
            }
            if (ok && !first.empty())
                p.cp_ring = first == "p2p" || first == "a2a+p2p" ? CpRing::TeP2p
                            : first == "a2a"                     ? CpRing::TeA2a
                                                                 : CpRing::TeAllGather;
            hierarchical = ok && first == "a2a+p2p";
        }
    if (hierarchical) {
        auto sizes = r.text("hierarchical_context_parallel_sizes", "plan:/cp_a2a_size");
        std::vector<std::int64_t> n;
        bool ok = sizes.has_value();
        if (sizes) {
            for (const std::string& w : listWords(*sizes)) {
                if (!ok)
                    break;
                const bool digits =
                    !w.empty() && w.size() < 7 && std::all_of(w.begin(), w.end(), [](char ch) {
                        return std::isdigit(static_cast<unsigned char>(ch));
                    });
                ok = digits && std::stoll(w) >= 1;
                if (ok)
                    n.push_back(std::stoll(w));
            }
        }
        if (!sizes)
            r.refuse("cp_comm_type", "a2a+p2p needs --hierarchical-context-parallel-sizes (the "
                                     "all-to-all group's size, then the ring's)");
        else if (!ok || n.size() != 2 || n[0] * n[1] != cp)
            r.refuse("hierarchical_context_parallel_sizes",
                     "must be two positive sizes, the all-to-all group's and the ring's, whose "
                     "product is the context-parallel size (" +
                         std::to_string(cp) + "), got '" + *sizes + "'");
        else if (n[1] == 1)
            p.cp_ring = CpRing::TeA2a; // Transformer Engine falls back to a2a
        else
            p.cp_a2a_size = int(n[0]); // 1: the plain ring
    } else if (r.has("hierarchical_context_parallel_sizes")) {
        r.unuse("hierarchical_context_parallel_sizes", "only read with --cp-comm-type a2a+p2p");
    }

    // ---- pipeline split and interleaving
    const int L = m.layers;
    std::vector<int> lps;
    int vp = 1;
    if (L > 0 && pp > 0) {
        auto first =
            r.integer("decoder_first_pipeline_num_layers", "plan:/placement/layers_per_stage");
        auto last =
            r.integer("decoder_last_pipeline_num_layers", "plan:/placement/layers_per_stage");
        const bool embed =
            r.flag("account_for_embedding_in_pipeline_split", "plan:/placement/layers_per_stage");
        const bool loss =
            r.flag("account_for_loss_in_pipeline_split", "plan:/placement/layers_per_stage");
        auto vpLayers =
            r.integer("num_layers_per_virtual_pipeline_stage", "plan:/schedule/virtual_stages");
        auto vpStages =
            r.integer("num_virtual_stages_per_pipeline_rank", "plan:/schedule/virtual_stages");
        if (vpLayers && vpStages)
            r.refuse("num_layers_per_virtual_pipeline_stage",
                     "give either this or --num-virtual-stages-per-pipeline-rank");
        if ((first || last) && (embed || loss))
            r.refuse(embed ? "account_for_embedding_in_pipeline_split"
                           : "account_for_loss_in_pipeline_split",
                     "cannot be combined with uneven first/last pipeline stages");
        std::int64_t perStage = 0;
        auto layout = r.text("pipeline_model_parallel_layout", "plan:/placement/layers_per_stage");
        if (layout) {
            // Megatron-Core's PipelineParallelLayerLayout: '|' ends a (virtual)
            // stage, 't' is a decoder layer, 'E' the embedding, 'L' the loss,
            // 'm' a multi-token prediction module, X*N repeats an item, (...)
            // groups; stages run virtual chunk by chunk over the pp ranks.
            std::vector<int> stages = {0};
            std::string why;
            int mtpModules = 0;
            const std::string& text = *layout;
            std::size_t i = 0;
            std::function<std::vector<int>(bool)> sequence = [&](bool nested) {
                // Returns stage deltas: counts per '|'-separated part.
                std::vector<int> parts = {0};
                while (i < text.size() && why.empty()) {
                    const char c = text[i];
                    std::vector<int> item;
                    if (c == ')') {
                        if (!nested)
                            why = "unbalanced ')'";
                        break;
                    }
                    ++i;
                    if (c == 't') {
                        item = {1};
                    } else if (c == 'E' || c == 'L' || c == ',' || c == ' ') {
                        item = {0};
                    } else if (c == 'm' && !nested) {
                        item = {0};
                    } else if (c == '|') {
                        item = {0, 0};
                    } else if (c == '(') {
                        item = sequence(true);
                        if (i >= text.size() || text[i] != ')')
                            why = "unbalanced '('";
                        ++i;
                    } else {
                        why = std::string("'") + c +
                              "' (only decoder layers t, E, L, MTP modules m outside groups, | and "
                              "repetition are modelled)";
                        break;
                    }
                    int times = 1;
                    if (i < text.size() && text[i] == '*') {
                        std::size_t j = ++i;
                        while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])))
                            ++j;
                        if (j == i || j - i > 6) {
                            why = "'*' needs a repeat count";
                            break;
                        }
                        times = std::stoi(text.substr(i, j - i));
                        i = j;
                    }
                    if (c == 'm')
                        mtpModules += times;
                    for (int k = 0; k < times && why.empty(); ++k) {
                        parts.back() += item.front();
                        for (std::size_t q = 1; q < item.size(); ++q)
                            parts.push_back(item[q]);
                        if (parts.size() > 1000000)
                            why = "too many stages";
                    }
                }
                return parts;
            };
            stages = sequence(false);
            if (why.empty() && i != text.size())
                why = "unbalanced ')'";
            const std::size_t n = stages.size();
            // The documents run the MTP modules on the last rank's last chunk
            // (Megatron-Core's GPTModel without a standalone MTP stage).
            if (why.empty() && mtpModules > 0 && text.find('m') < text.rfind('|'))
                why = "MTP modules ('m') before the last stage: the documents run them on the "
                      "last pipeline rank's last chunk";
            else if (why.empty() && mtpModules != m.mtp_layers)
                why = "holds " + std::to_string(mtpModules) + " MTP modules ('m'), " +
                      r.spelled("mtp_num_layers") + " " + std::to_string(m.mtp_layers);
            if (!why.empty()) {
                r.refuse("pipeline_model_parallel_layout", why);
            } else if (first || last || embed || loss || vpLayers || vpStages) {
                r.refuse("pipeline_model_parallel_layout",
                         "the layout replaces the first/last, embedding/loss and virtual-stage "
                         "settings; give it alone");
            } else if (pp < 1 || n % std::size_t(pp) != 0) {
                r.refuse("pipeline_model_parallel_layout",
                         std::to_string(n) + " stages are not a multiple of the pipeline size " +
                             std::to_string(pp));
            } else {
                std::int64_t sum = 0;
                lps.assign(std::size_t(pp), 0);
                for (std::size_t k = 0; k < n; ++k) {
                    lps[k % std::size_t(pp)] += stages[k];
                    sum += stages[k];
                }
                if (sum != L)
                    r.refuse("pipeline_model_parallel_layout", "holds " + integerText(sum) +
                                                                   " decoder layers, the model " +
                                                                   std::to_string(L));
                else if (std::any_of(lps.begin(), lps.end(), [](int x) { return x < 1; }))
                    r.refuse("pipeline_model_parallel_layout", "a pipeline rank holds no layer");
                vp = int(n / std::size_t(pp));
                if (std::all_of(lps.begin(), lps.end(), [&](int x) { return x == lps.front(); }))
                    lps.clear();
            }
        } else if (first || last) {
            if (vpLayers)
                r.refuse("num_layers_per_virtual_pipeline_stage",
                         "uneven pipeline stages need --num-virtual-stages-per-pipeline-rank");
            if (pp < 2) {
                r.refuse(first ? "decoder_first_pipeline_num_layers"
                               : "decoder_last_pipeline_num_layers",
                         "needs a pipeline of at least 2 stages");
            } else {
                std::int64_t rest = L - first.value_or(0) - last.value_or(0);
                int left = pp - (first ? 1 : 0) - (last ? 1 : 0);
                if (rest < 0 || (left == 0 && rest != 0) || (left > 0 && rest % left != 0) ||
                    (left > 0 && rest / left < 1)) {
                    r.refuse(first ? "decoder_first_pipeline_num_layers"
                                   : "decoder_last_pipeline_num_layers",
                             "the other " + std::to_string(left) + " stages cannot share the " +
                                 integerText(rest) + " layers left evenly");
                } else {
                    const int mid = left > 0 ? int(rest / left) : 0;
                    lps.assign(std::size_t(pp), mid);
                    if (first)
                        lps.front() = int(*first);
                    if (last)
                        lps.back() = int(*last);
                }
            }
        } else {
            const std::int64_t total = L + (embed ? 1 : 0) + (loss ? 1 : 0);
            if (total % pp != 0) {
                r.refuse("num_layers", integerText(total) + " layers" +
                                           (embed || loss ? " (with embedding/loss)" : "") +
                                           " are not divisible by the pipeline size " +
                                           std::to_string(pp));
            } else {
                perStage = total / pp;
                if ((embed || loss) && pp > 1) {
                    lps.assign(std::size_t(pp), int(perStage));
                    lps.front() -= embed ? 1 : 0;
                    lps.back() -= loss ? 1 : 0;
                    if (lps.front() < 1 || lps.back() < 1)
                        r.refuse("num_layers", "a pipeline stage would hold no layer");
                }
            }
        }
        if (vpLayers && perStage > 0) {
            if (perStage % *vpLayers != 0)
                r.refuse("num_layers_per_virtual_pipeline_stage",
                         integerText(perStage) +
                             " layers per pipeline stage are not divisible by " +
                             integerText(*vpLayers));
            else
                vp = int(perStage / *vpLayers);
        } else if (vpStages) {
            vp = int(*vpStages);
        }
        if (vp > 1 && pp == 2 && r.has("no_overlap_p2p_communication"))
            r.refuse("no_overlap_p2p_communication",
                     "interleaving without P2P overlap needs a pipeline of more than 2 stages "
                     "(validate_args)");
        if (vp > 1 && pp < 2) {
            r.refuse(vpLayers ? "num_layers_per_virtual_pipeline_stage"
                              : "num_virtual_stages_per_pipeline_rank",
                     "interleaving needs a pipeline of at least 2 stages");
            vp = 1;
        }
        if (vp > 1 && !layout) {
            const std::vector<int> counts =
                lps.empty() ? std::vector<int>(std::size_t(pp), int(L / pp)) : lps;
            // The first and last chunks hold the embedding and loss when those count.
            std::vector<int> slots = counts;
            if (!lps.empty() && (embed || loss)) {
                slots.front() += embed ? 1 : 0;
                slots.back() += loss ? 1 : 0;
            }
            for (int c : slots)
                if (c % vp != 0) {
                    r.refuse(vpLayers ? "num_layers_per_virtual_pipeline_stage"
                                      : "num_virtual_stages_per_pipeline_rank",
                             "a stage of " + std::to_string(c) + " layers does not split into " +
                                 std::to_string(vp) + " virtual stages");
                    break;
                }
        }
    }
    if (!lps.empty())
        p.placement = Placement{{}, lps};
    p.schedule.kind = vp > 1 ? ScheduleKind::Interleaved : ScheduleKind::OneFOneB;
    p.schedule.virtual_stages = vp;

    // ---- pipeline P2P beside compute or blocking (plan p2p_overlap; the
    // sources in model/framework_defaults.cpp frameworkP2pOverlap). Only the
    // interleaved schedule can overlap: Megatron's validate_args turns
    // overlap_p2p_comm off without virtual stages, Megatron-Core's
    // forward_backward_pipelining_without_interleaving raises if it is on.
    // Without a pipeline there is no P2P: the documents' default stays.
    if (pp > 1) {
        const bool interleaved = p.schedule.kind == ScheduleKind::Interleaved;
        const std::string target = "plan:/p2p_overlap";
        const std::string blocking =
            "without virtual stages Megatron's P2P blocks (validate_args turns overlap_p2p_comm "
            "off; Megatron-Core's 1F1B cannot overlap)";
        if (nemo) {
            // model.overlap_p2p_comm and model.batch_p2p_comm go to
            // Megatron-Core's ModelParallelConfig (default False and True).
            const bool overlap = r.flag("overlap_p2p_comm", target);
            const bool batched = r.has("batch_p2p_comm")
                                     ? r.flag("batch_p2p_comm", target + " (batched P2P)")
                                     : true;
            if (overlap && !interleaved)
                r.refuse("overlap_p2p_comm",
                         "Megatron-Core's non-interleaved schedule raises 'Non-interleaved "
                         "pipeline parallelism does not support overlapping p2p communication' "
                         "(schedules.py); set it false or give virtual stages");
            else if (overlap && batched)
                r.refuse(r.has("batch_p2p_comm") ? "batch_p2p_comm" : "overlap_p2p_comm",
                         "with overlap_p2p_comm Megatron-Core raises 'Can not use both "
                         "overlap_p2p_comm and batch_p2p_comm' (schedules.py "
                         "forward_backward_pipelining_with_interleaving); set batch_p2p_comm "
                         "false");
            p.p2p_overlap = r.has("overlap_p2p_comm")
                                ? overlap && interleaved
                                : frameworkP2pOverlap(TrainingFramework::Nemo, p.schedule.kind);
        } else {
            // --no-overlap-p2p-communication (store_false) since 2023-10;
            // from 2023-05 to then overlap was the opt-in
            // --overlap-p2p-communication, today's default.
            const bool off = r.flag("no_overlap_p2p_communication", target);
            const bool on = r.flag("overlap_p2p_communication", target);
            if (off && on)
                r.refuse("overlap_p2p_communication",
                         "together with --no-overlap-p2p-communication");
            p.p2p_overlap =
                frameworkP2pOverlap(TrainingFramework::MegatronCore, p.schedule.kind) && !off;
            if (!interleaved) {
                if (off)
                    r.unuse("no_overlap_p2p_communication", blocking);
                if (on)
                    r.unuse("overlap_p2p_communication", blocking);
            }
        }
    }

    // ---- recompute (TransformerConfig.__post_init__ rules)
    {
        const bool legacyFull = r.flag("checkpoint_activations", "plan:/recompute (full)");
        const bool selectiveFlag = r.flag("recompute_activations", "plan:/recompute (selective)");
        auto gran = r.text("recompute_granularity", "plan:/recompute");
        if (r.has("activations_checkpoint_layers_per_pipeline"))
            r.refuse("activations_checkpoint_layers_per_pipeline",
                     "a different recompute depth per pipeline stage is not expressible");
        if (r.has("num_micro_batches_with_partial_activation_checkpoints"))
            r.refuse("num_micro_batches_with_partial_activation_checkpoints",
                     "recompute for some microbatches only is not expressible");
        if (selectiveFlag)
            gran = "selective";
        // The deprecated --moe-layer-recompute: selective recompute with
        // "moe" added to the modules (TransformerConfig.__post_init__).
        const bool moeLayerFlag =
            r.flag("moe_layer_recompute", "plan:/recompute_modules (moe, selective)");
        if (moeLayerFlag && gran && *gran == "full")
            r.refuse("moe_layer_recompute", "must not be set with full recompute");
        else if (moeLayerFlag)
            gran = "selective";
        if (r.has("recompute_modules") && (!gran || *gran != "selective"))
            r.unuse("recompute_modules", "only selective recompute re-runs modules");
        if (legacyFull && !gran) {
            // 2021 Megatron-LM: --checkpoint-activations with --checkpoint-num-layers
            // (default 1) layers per checkpoint.
            auto n =
                r.integer("checkpoint_num_layers", "plan:/recompute_layers (uniform)").value_or(1);
            p.recompute = Recompute::Full;
            p.recompute_method = RecomputeMethod::Uniform;
            p.recompute_layers = int(n);
        } else if (!gran) {
            p.recompute = Recompute::None;
            if (r.has("recompute_method"))
                r.unuse("recompute_method",
                        "without a recompute granularity nothing is recomputed");
            if (r.has("recompute_num_layers"))
                r.unuse("recompute_num_layers",
                        "without a recompute granularity nothing is recomputed");
        } else if (*gran == "selective") {
            p.recompute = Recompute::Selective;
            if (r.has("recompute_method"))
                r.refuse("recompute_method", "is not supported with selective recompute");
            if (r.has("recompute_num_layers"))
                r.refuse("recompute_num_layers", "must not be given with selective recompute");
            // --recompute-modules (nargs "*"; a YAML list), default core_attn.
            if (auto mods = r.text("recompute_modules", "plan:/recompute_modules")) {
                std::string words = *mods;
                std::replace_if(
                    words.begin(), words.end(),
                    [](char ch) {
                        return ch == '[' || ch == ']' || ch == ',' || ch == '\'' || ch == '"';
                    },
                    ' ');
                std::istringstream list(words);
                unsigned set = 0;
                for (std::string w; list >> w;) {
                    if (auto mod = recomputeModuleFromString(w))
                        set |= recomputeBit(*mod);
                    else if (w == "gdn_norm_out" || w == "gdp_in_proj" || w == "gdp_qkv" ||
                             w == "mhc")
                        r.refuse("recompute_modules",
                                 "'" + w +
                                     "' is not expressible (plan recompute_modules: "
                                     "core_attn, layernorm, mlp, moe, moe_act, "
                                     "shared_experts, mla_up_proj)");
                    else
                        r.refuse("recompute_modules",
                                 "must name Megatron-Core's modules (core_attn, layernorm, mlp, "
                                 "moe, moe_act, shared_experts, mla_up_proj, ...), got '" +
                                     w + "'");
                }
                p.recompute_modules = set;
            }
            if (moeLayerFlag)
                p.recompute_modules |= recomputeBit(RecomputeModule::Moe);
        } else if (*gran == "full") {
            p.recompute = Recompute::Full;
            auto method = r.text("recompute_method", "plan:/recompute_method");
            auto n = r.integer("recompute_num_layers", "plan:/recompute_layers", 0);
            if (!method) {
                r.refuse("recompute_granularity", "full recompute needs a recompute method "
                                                  "(uniform or block)");
            } else if (!n) {
                if (!r.has("recompute_num_layers"))
                    r.refuse("recompute_num_layers",
                             "missing: full recompute needs the number of layers");
            } else if (*n < 1) {
                // TransformerConfig: "recompute_num_layers must be between 1 and
                // num_layers_per_pipeline_rank".
                r.refuse("recompute_num_layers",
                         "must be at least 1 with full recompute, got " + integerText(*n));
            } else if (*method == "uniform") {
                p.recompute_method = RecomputeMethod::Uniform;
                p.recompute_layers = int(*n);
            } else if (*method == "block") {
                // megatron/core/recompute.py: the first N layers of each model
                // chunk's TransformerBlock.
                p.recompute_method = RecomputeMethod::Block;
                p.recompute_layers = int(*n);
            } else {
                r.refuse("recompute_method", "must be uniform or block, got '" + *method + "'");
            }
        } else {
            r.refuse("recompute_granularity", "must be full or selective, got '" + *gran + "'");
        }
    }

    // ---- FP8 scaling recipe (Transformer Engine's layers: plan fp8_linear's default)
    if (m.dtype == DType::FP8) {
        // Megatron-Core's TransformerConfig.fp8_recipe defaults to "delayed"
        // (TE DelayedScaling), the only recipe before --fp8-recipe existed
        // (NeMo 24.07); "tensorwise" is TE's Float8CurrentScaling.
        auto recipe = r.text("fp8_recipe", "plan:/fp8_recipe");
        if (!recipe)
            p.fp8_recipe = fw.fp8_recipe;
        else if (*recipe == "delayed")
            p.fp8_recipe = Fp8Recipe::Delayed;
        else if (*recipe == "tensorwise")
            p.fp8_recipe = Fp8Recipe::Current;
        else if (*recipe == "mxfp8" || *recipe == "blockwise")
            r.refuse("fp8_recipe", "'" + *recipe +
                                       "': block-scaled FP8 (one scale per block of values) is "
                                       "not expressible (plan fp8_recipe: current or delayed)");
        else
            r.refuse("fp8_recipe",
                     "must be delayed, tensorwise, mxfp8 or blockwise, got '" + *recipe + "'");
        // --fp8-param-gather (Megatron-Core; NeMo 1.x model.fp8_params): the
        // FP8 linears' weights kept in FP8 and gathered so.
        const bool gather = r.flag("fp8_param_gather", "plan:/fp8_param_gather");
        const bool params = r.flag("fp8_params", "plan:/fp8_param_gather");
        p.fp8_param_gather = gather || params;
        for (const char* k : {"fp8_amax_history_len", "fp8_amax_compute_algo"}) {
            if (p.fp8_recipe == Fp8Recipe::Delayed)
                r.text(k, "plan:/fp8_recipe (delayed: the amax history)");
            else if (r.has(k))
                r.unuse(k, "only delayed scaling keeps an amax history");
        }
    }

    // ---- mixture of experts
    {
        auto experts = r.integer("num_experts", "model:/moe/experts", 0);
        if (experts && *experts > 0) {
            MoeConfig moe;
            moe.experts = int(*experts);
            moe.top_k = int(r.integer("moe_router_topk", "model:/moe/top_k").value_or(2));
            if (moe.top_k > moe.experts)
                r.refuse("moe_router_topk", "routes to " + std::to_string(moe.top_k) + " of only " +
                                                std::to_string(moe.experts) + " experts");
            moe.expert_ffn_hidden = r.integer("moe_ffn_hidden_size", "model:/moe/expert_ffn_hidden")
                                        .value_or(m.ffn_hidden);
            if (auto shared =
                    r.integer("moe_shared_expert_intermediate_size", "model:/moe/shared_experts")) {
                if (moe.expert_ffn_hidden <= 0 || *shared % moe.expert_ffn_hidden != 0)
                    r.refuse("moe_shared_expert_intermediate_size",
                             integerText(*shared) + " is not a whole number of experts of " +
                                 integerText(moe.expert_ffn_hidden));
                else
                    moe.shared_experts = int(*shared / moe.expert_ffn_hidden);
            }
            if (auto freq = r.text("moe_layer_freq", "model:/moe/dense_layers")) {
                if (auto n = parseInteger(*freq)) {
                    if (*n != 1)
                        r.refuse("moe_layer_freq",
                                 "one expert layer in " + *freq +
                                     " is not expressible: the documents have leading dense "
                                     "layers, then expert layers");
                } else if (auto pattern = PatternParser(*freq).parse()) {
                    int dense = 0;
                    while (dense < int(pattern->size()) && (*pattern)[std::size_t(dense)] == 0)
                        ++dense;
                    const bool tailMoe = std::all_of(pattern->begin() + dense, pattern->end(),
                                                     [](int x) { return x == 1; });
                    if (int(pattern->size()) != L)
                        r.refuse("moe_layer_freq",
                                 "the pattern has " + std::to_string(pattern->size()) +
                                     " entries for " + std::to_string(L) + " layers");
                    else if (!tailMoe)
                        r.refuse("moe_layer_freq",
                                 "dense layers after expert layers are not expressible");
                    else
                        moe.dense_layers = dense;
                } else {
                    r.refuse("moe_layer_freq", "must be an integer or a list pattern such as "
                                               "([0]*3+[1]*29), got '" +
                                                   *freq + "'");
                }
            }
            // Group-limited routing (TransformerConfig moe_router_num_groups /
            // moe_router_group_topk, both None by default; the router asserts
            // the one with the other).
            {
                auto groups = r.integer("moe_router_num_groups", "model:/moe/router_groups");
                auto topk = r.integer("moe_router_group_topk", "model:/moe/router_group_topk");
                if (groups && *groups > 0 && (!topk || *topk <= 0))
                    r.refuse("moe_router_num_groups",
                             "group-limited routing needs " + r.spelled("moe_router_group_topk"));
                else if (topk && *topk > 0 && (!groups || *groups <= 0))
                    r.refuse("moe_router_group_topk",
                             "group-limited routing needs " + r.spelled("moe_router_num_groups"));
                else if (groups && *groups > 0) {
                    if (moe.experts % *groups != 0)
                        r.refuse("moe_router_num_groups",
                                 integerText(*groups) + " groups do not divide the " +
                                     std::to_string(moe.experts) + " experts");
                    else if (*topk > *groups || moe.top_k > *topk * (moe.experts / *groups))
                        r.refuse("moe_router_group_topk",
                                 integerText(*topk) + " of " + integerText(*groups) +
                                     " groups cannot hold the top " + std::to_string(moe.top_k) +
                                     " experts");
                    else {
                        moe.router_groups = int(*groups);
                        moe.router_group_topk = int(*topk);
                    }
                }
            }
            if (auto cap = r.number("moe_expert_capacity_factor", "model:/moe/capacity_factor")) {
                if (*cap < 1)
                    r.refuse("moe_expert_capacity_factor",
                             "below 1 drops tokens: the documents need at least 1");
                else
                    moe.capacity_factor = *cap;
            }
            // Without a capacity factor Megatron-Core refuses the padding
            // (TransformerConfig); with one, it pads only when asked.
            if (r.has("moe_expert_capacity_factor")) {
                moe.pad_to_capacity =
                    r.flag("moe_pad_expert_input_to_capacity", "model:/moe/pad_to_capacity");
            } else if (r.flag("moe_pad_expert_input_to_capacity", "model:/moe/pad_to_capacity")) {
                r.refuse("moe_pad_expert_input_to_capacity",
                         "needs " + r.spelled("moe_expert_capacity_factor"));
            }
            // Expert TP below TP folds the rest of the TP x CP cell into
            // expert parallelism (Megatron-Core's MoE parallel folding;
            // Parallelism::etp). Above TP the documents cannot say it.
            if (auto etp = r.integer("expert_tensor_parallel_size", "plan:/parallelism/etp");
                etp && *etp != tp) {
                if (*etp > tp || tp % *etp != 0)
                    r.refuse("expert_tensor_parallel_size",
                             std::to_string(*etp) + " does not divide tp = " + std::to_string(tp) +
                                 ": the documents split experts over a divisor of tp");
                else
                    p.parallelism.etp = int(*etp);
            }
            if (ep > 1) {
                // TransformerConfig's default dispatcher is allgather; the cost
                // model's expert parallelism is an all-to-all (core/cost/compute.cpp).
                const std::string dispatcher =
                    r.text("moe_token_dispatcher_type", "plan:/ep_dispatcher")
                        .value_or("allgather");
                if (dispatcher != "alltoall" && dispatcher != "flex")
                    r.refuse("moe_token_dispatcher_type",
                             "the " + dispatcher +
                                 " dispatcher (Megatron's default is allgather) is not the "
                                 "all-to-all the documents model: give alltoall or flex");
                // flex: DeepEP (--moe-enable-deepep, or --moe-flex-dispatcher-backend
                // deepep, its default) or HybridEP, both one copy per destination
                // host; HybridEP also all-gathers the routing maps.
                p.ep_dispatcher =
                    dispatcher == "flex" ? EpDispatcher::Flex : EpDispatcher::AllToAll;
                if (dispatcher == "flex") {
                    const std::string backend =
                        r.text("moe_flex_dispatcher_backend", "plan:/ep_dispatcher")
                            .value_or("deepep");
                    if (backend == "hybridep")
                        p.ep_dispatcher = EpDispatcher::HybridEp;
                    else if (backend != "deepep")
                        r.refuse("moe_flex_dispatcher_backend",
                                 "the " + backend +
                                     " backend is not one the documents model: give deepep or "
                                     "hybridep");
                    // Megatron's TransformerConfig refuses the deprecated
                    // DeepEP switch beside HybridEP ("Only one backend is
                    // supported for flex token dispatcher").
                    if (r.flag("moe_enable_deepep", "plan:/ep_dispatcher (flex)") &&
                        backend == "hybridep")
                        r.refuse("moe_enable_deepep",
                                 "asks for DeepEP where the flex backend is HybridEP: Megatron "
                                 "accepts one backend");
                    // The SMs its kernels hold: moe_flex_dispatcher_num_sms,
                    // else the backend's own (deprecated) knob, as
                    // TransformerConfig.__post_init__ routes them; the other
                    // backend's knob does not apply.
                    const char* own =
                        backend == "hybridep" ? "moe_hybridep_num_sms" : "moe_deepep_num_sms";
                    const char* other =
                        backend == "hybridep" ? "moe_deepep_num_sms" : "moe_hybridep_num_sms";
                    const auto unified = r.integer("moe_flex_dispatcher_num_sms",
                                                   "plan:/ep_dispatcher_sms", 1, 100000);
                    const auto perBackend = r.integer(own, "plan:/ep_dispatcher_sms", 1, 100000);
                    if (unified) {
                        p.ep_dispatcher_sms = int(*unified);
                        if (perBackend)
                            r.unuse(own, "moe_flex_dispatcher_num_sms takes precedence");
                    } else if (perBackend) {
                        p.ep_dispatcher_sms = int(*perBackend);
                    }
                    r.unuse(other, std::string("applies to the ") +
                                       (backend == "hybridep" ? "DeepEP" : "HybridEP") +
                                       " backend, not this run's");
                }
            }
            if (moe.experts % ep != 0)
                r.refuse("expert_model_parallel_size",
                         std::to_string(ep) + " does not divide the " +
                             std::to_string(moe.experts) + " experts");
            m.moe = moe;
        } else if (ep > 1) {
            r.refuse("expert_model_parallel_size",
                     "expert parallelism needs experts (" + r.spelled("num_experts") + ")");
        }
        // The expert group: the cell's (tp / etp) x cp ranks, then replicas
        // (Megatron-Core's MoE parallel folding; Parallelism::ep).
        const Parallelism folded{tp, cp, pp, dp, ep, p.parallelism.etp};
        const int inCell = folded.expertRanksPerCell();
        if (ep > 1 && dp > 0 && !folded.expertGroupsFit()) {
            if (inCell == 1)
                r.refuse("expert_model_parallel_size",
                         std::to_string(ep) + " does not divide dp = " + std::to_string(dp) +
                             " (the documents carve expert parallelism out of data parallelism)");
            else
                r.refuse("expert_model_parallel_size",
                         std::to_string(ep) + ": an expert group takes the (tp/etp) x cp = " +
                             std::to_string(inCell) +
                             " ranks of a TP x CP cell, then whole data-parallel replicas; ep "
                             "must divide that or be a multiple of it by a divisor of dp = " +
                             std::to_string(dp));
        }
    }

    // ---- everything else read is ignored, with the reason
    for (auto& [key, raw] : s.byKey) {
        if (raw.used)
            continue;
        out.ignored.push_back(
            {raw.spelled, raw.null ? "null" : (raw.shown.empty() ? raw.value : raw.shown),
             raw.null ? "null: the default applies" : ignoreReason(key, s.dialect)});
    }
    if (!out.problems.empty())
        return out;

    // ---- the carried line, then the documents' own checks
    json mj = toJson(m);
    json pj = toJson(p);
    const std::string where = in.opt.file.empty() ? std::string("<input>") : in.opt.file;
    if (in.carried) {
        applyCarried(in.carried->model, mj);
        applyCarried(in.carried->plan, pj);
        for (auto it = in.carried->model.begin(); it != in.carried->model.end(); ++it)
            out.mapped.push_back({std::string(kCarriedPrefix) + " model." + it.key(),
                                  it.value().dump(), "model:/" + it.key()});
        for (auto it = in.carried->plan.begin(); it != in.carried->plan.end(); ++it)
            out.mapped.push_back({std::string(kCarriedPrefix) + " plan." + it.key(),
                                  it.value().dump(), "plan:/" + it.key()});
    }
    Loaded<Model> lm = parseModel(mj.dump(), where + " (model)");
    Loaded<Plan> lp = parsePlan(pj.dump(), where + " (plan)");
    for (const auto& d : lm.problems)
        out.problems.push_back({in.opt.file, "model:" + d.path, d.message});
    for (const auto& d : lp.problems)
        out.problems.push_back({in.opt.file, "plan:" + d.path, d.message});
    if (out.problems.empty()) {
        out.model = std::move(*lm.value);
        out.plan = std::move(*lp.value);
    }
    return out;
}

} // namespace sa::frameworks::detail

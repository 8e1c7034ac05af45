// torchtitan job TOML in and out (framework.h). docs/FRAMEWORKS-TORCHTITAN.md
// lists every key, where it goes and torchtitan's source for each default.
//
// Two layouts are read: the one of the published runs (torchtitan 9dec370,
// Dec 2024 .. Mar 2025: [training] batch_size and data/tensor degrees,
// [experimental] pipeline and context parallelism, [float8]) and the
// current TOML one (Mar 2025 .. Feb 2026, when torchtitan moved to Python
// config registries: [parallelism], training.local_batch_size /
// global_batch_size, model.converters, [compile], [quantize.linear.float8]).
// The exporter writes the current layout.

#include "frameworks/framework.h"
#include "model/framework_defaults.h"

#include "formats/documents.h"

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace sa::frameworks {
namespace {

using nlohmann::json;

constexpr const char* kCommentTag = "# scaleacross:";
// Batch sizes and sequence lengths beyond this are refused (no overflow in
// local x dp x accumulation).
constexpr std::int64_t kMaxCount = std::int64_t(1) << 31;

// ---- the flavor table ----------------------------------------------------------

// torchtitan/models/llama3/__init__.py llama3_args (current; 9dec370:
// torchtitan/models/llama/__init__.py llama3_configs). vocab: 128256, the
// Llama 3 tokenizer (TransformerModelArgs.vocab_size; at 9dec370 the
// tokenizer's n_words). ffn: FeedForward's rule from dim, ffn_dim_multiplier
// and multiple_of.
struct Flavor {
    const char* name;
    int layers;
    std::int64_t dim;
    int heads;
    int kv_heads;
    double ffn_multiplier; // 0 = None
    std::int64_t multiple_of;
    std::int64_t vocab;
};

// torchtitan FeedForward.__init__(dim, hidden_dim=4*dim, multiple_of, ffn_dim_multiplier):
//   hidden = int(2 * hidden / 3); hidden = int(multiplier * hidden) if given;
//   hidden = multiple_of * ceil(hidden / multiple_of)
std::int64_t feedForwardHidden(std::int64_t dim, double multiplier, std::int64_t multipleOf) {
    std::int64_t h = 4 * dim;
    h = static_cast<std::int64_t>(double(2 * h) / 3.0);
    if (multiplier > 0)
        h = static_cast<std::int64_t>(multiplier * double(h));
    return multipleOf * ((h + multipleOf - 1) / multipleOf);
}

const std::vector<Flavor>& currentFlavors() {
    static const std::vector<Flavor> f = {
        {"debugmodel", 6, 256, 16, 16, 0, 256, 2048},
        {"8B", 32, 4096, 32, 8, 1.3, 1024, 128256},
        {"70B", 80, 8192, 64, 8, 1.3, 4096, 128256},
        {"405B", 126, 16384, 128, 8, 1.2, 4096, 128256},
    };
    return f;
}

// 9dec370: debugmodel had 8 layers and took its vocabulary from
// tests/assets/test_tiktoken.model (2000 ranks + 256 reserved specials).
const std::vector<Flavor>& oldFlavors() {
    static const std::vector<Flavor> f = {
        {"debugmodel", 8, 256, 16, 16, 0, 256, 2256},
        {"8B", 32, 4096, 32, 8, 1.3, 1024, 128256},
        {"70B", 80, 8192, 64, 8, 1.3, 4096, 128256},
        {"405B", 126, 16384, 128, 8, 1.2, 4096, 128256},
    };
    return f;
}

const Flavor* findFlavor(const std::vector<Flavor>& table, const std::string& name) {
    for (const Flavor& f : table)
        if (name == f.name)
            return &f;
    return nullptr;
}

Model modelOf(const Flavor& f) {
    Model m;
    m.layers = f.layers;
    m.hidden = f.dim;
    m.heads = f.heads;
    m.kv_heads = f.kv_heads;
    m.ffn_hidden = feedForwardHidden(f.dim, f.ffn_multiplier, f.multiple_of);
    m.vocab = f.vocab;
    m.mlp = MlpKind::SwiGlu;
    m.tied_embeddings = false;
    return m;
}

bool sameArchitecture(const Model& a, const Model& b) {
    return a.layers == b.layers && a.hidden == b.hidden && a.ffn_hidden == b.ffn_hidden &&
           a.heads == b.heads && a.kv_heads == b.kv_heads && a.vocab == b.vocab && a.mlp == b.mlp &&
           a.tied_embeddings == b.tied_embeddings && a.moe == b.moe;
}

// ---- small helpers ---------------------------------------------------------------

std::string lower(std::string s) {
    for (char& c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string nodeText(const toml::node& n) {
    if (const auto* s = n.as_string())
        return s->get();
    if (const auto* i = n.as_integer())
        return std::to_string(i->get());
    if (const auto* b = n.as_boolean())
        return b->get() ? "true" : "false";
    if (const auto* f = n.as_floating_point()) {
        std::ostringstream o;
        o << f->get();
        return o.str();
    }
    if (const auto* a = n.as_array()) {
        std::string s = "[";
        for (std::size_t i = 0; i < a->size(); ++i) {
            if (i)
                s += ", ";
            const toml::node& e = *a->get(i);
            s += e.is_string() ? "\"" + nodeText(e) + "\"" : nodeText(e);
        }
        return s + "]";
    }
    if (n.is_table())
        return "{table}";
    return "(" +
           std::string(n.is_date_time() || n.is_date() || n.is_time() ? "date/time" : "value") +
           ")";
}

std::string tomlString(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

std::string stemOf(const std::string& file) {
    std::string base = file.substr(file.find_last_of("/\\") + 1);
    const auto dot = base.find_last_of('.');
    return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

std::string joinInts(const std::vector<int>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

// The plan's even split (core/cost/placement.cpp layersPerStage).
std::vector<int> evenSplit(int layers, int pp) {
    std::vector<int> out(std::size_t(pp), layers / pp);
    for (int i = 0; i < layers % pp; ++i)
        ++out[std::size_t(i)];
    return out;
}

// Layers of each chunk of one rank as the plan places them (core/cost
// stages_layout.cpp chunkLayers): an even share, the remainder first.
int planChunkLayers(int rankLayers, int v, int chunk) {
    return rankLayers / v + (chunk < rankLayers % v ? 1 : 0);
}

// The trailing `# scaleacross: {...}` line, if any.
std::optional<std::string> commentLine(const std::string& text) {
    std::optional<std::string> found;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos)
            continue;
        std::string_view rest(line);
        rest.remove_prefix(first);
        if (rest.substr(0, std::string_view(kCommentTag).size()) == kCommentTag)
            found = std::string(rest.substr(std::string_view(kCommentTag).size()));
    }
    return found;
}

// ---- reading the TOML ------------------------------------------------------------

class Reader {
public:
    Reader(const toml::table& t, const ImportOptions& opt, Imported& out)
        : opt_(opt)
        , out_(out) {
        flatten(t, "");
    }

    bool has(const std::string& key) const { return leaves_.count(key) > 0; }
    bool hasPrefix(const std::string& prefix) const {
        auto it = leaves_.lower_bound(prefix);
        return it != leaves_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
    }
    // The one of `keys` the file sets (the first one if none); a file that
    // sets two spellings of one setting is refused.
    // With none set, an old-layout file (`old`) names the last spelling.
    std::string pick(std::initializer_list<const char*> keys, bool old = false) {
        std::string found;
        for (const char* k : keys) {
            if (!has(k))
                continue;
            if (!found.empty()) {
                refuse(k,
                       std::string("the same setting as ") + found + " (older layout); give one");
                used_.insert(k);
                continue;
            }
            found = k;
        }
        if (found.empty())
            return std::string(old ? *(keys.end() - 1) : *keys.begin());
        return found;
    }
    const toml::node* node(const std::string& key) {
        auto it = leaves_.find(key);
        if (it == leaves_.end())
            return nullptr;
        used_.insert(key);
        return it->second;
    }
    std::string text(const std::string& key) {
        const toml::node* n = node(key);
        return n ? nodeText(*n) : std::string();
    }

    std::optional<std::int64_t> integer(const std::string& key, std::int64_t fallback) {
        const toml::node* n = node(key);
        if (!n)
            return fallback;
        if (const auto* i = n->as_integer())
            return i->get();
        refuse(key, "must be an integer, got " + nodeText(*n));
        return std::nullopt;
    }
    std::optional<std::string> string(const std::string& key, const std::string& fallback) {
        const toml::node* n = node(key);
        if (!n)
            return fallback;
        if (const auto* s = n->as_string())
            return s->get();
        refuse(key, "must be a string, got " + nodeText(*n));
        return std::nullopt;
    }
    std::optional<bool> boolean(const std::string& key, bool fallback) {
        const toml::node* n = node(key);
        if (!n)
            return fallback;
        if (const auto* b = n->as_boolean())
            return b->get();
        refuse(key, "must be true or false, got " + nodeText(*n));
        return std::nullopt;
    }
    // A list of strings (TOML array, or one comma-separated string as
    // torchtitan's string_list accepts).
    std::optional<std::vector<std::string>> strings(const std::string& key) {
        const toml::node* n = node(key);
        if (!n)
            return std::vector<std::string>{};
        std::vector<std::string> out;
        if (const auto* s = n->as_string()) {
            std::string item;
            std::istringstream in(s->get());
            while (std::getline(in, item, ','))
                if (!item.empty())
                    out.push_back(item);
            return out;
        }
        if (const auto* a = n->as_array()) {
            for (const toml::node& e : *a) {
                if (!e.is_string()) {
                    refuse(key, "must be a list of strings, got " + nodeText(*n));
                    return std::nullopt;
                }
                out.push_back(e.as_string()->get());
            }
            return out;
        }
        refuse(key, "must be a list of strings, got " + nodeText(*n));
        return std::nullopt;
    }

    void mapped(const std::string& key, const std::string& target) {
        if (has(key))
            out_.mapped.push_back({key, text(key), target});
    }
    void mappedValue(const std::string& key, const std::string& value, const std::string& target) {
        used_.insert(key);
        out_.mapped.push_back({key, value, target});
    }
    void ignored(const std::string& key, const std::string& why) {
        if (has(key))
            out_.ignored.push_back({key, text(key), why});
    }
    void ignoredValue(const std::string& key, const std::string& value, const std::string& why) {
        used_.insert(key);
        out_.ignored.push_back({key, value, why});
    }
    void refuse(const std::string& key, const std::string& why) {
        out_.problems.push_back({opt_.file, key, why});
    }

    // Every key not read above: housekeeping sections are ignored with a
    // reason, anything else is refused (it may change the run).
    void finish() {
        static const std::vector<std::pair<std::string, std::string>> sections = {
            {"job.", "job bookkeeping (output folder, config printing)"},
            {"profiling.", "profiler traces and memory snapshots: not part of the step"},
            {"metrics.", "logging"},
            {"optimizer.", "optimizer hyper-parameters: the cost model assumes Adam state"},
            {"lr_scheduler.", "learning-rate schedule"},
            {"checkpoint.", "checkpointing: not part of the step"},
            {"comm.", "communication timeouts and flight recorder"},
            {"memory_estimation.", "torchtitan's own memory estimate"},
            {"validation.", "validation runs between steps"},
            {"debug.", "seeds and determinism"},
            {"fault_tolerance.", "TorchFT settings (enable is checked)"},
            {"training.dataloader.", "data loading"},
            {"experimental.custom", "custom modules (their effect is not known)"},
        };
        static const std::map<std::string, std::string> housekeeping = {
            {"training.dataset", "data"},
            {"training.dataset_path", "data"},
            {"training.steps", "run length"},
            {"training.max_norm", "gradient clipping: no effect on time or memory modelled"},
            {"training.warmup_steps", "learning-rate schedule"},
            {"training.gc_freq", "Python garbage collection"},
            {"training.gc_debug", "Python garbage collection"},
            {"training.seed", "seeds"},
            {"training.deterministic", "determinism"},
            {"model.tokenizer_path", "tokenizer path (the vocabulary comes from the flavor)"},
            {"model.hf_assets_path",
             "tokenizer and weights path (the vocabulary comes from the flavor)"},
            {"model.norm_type", "norm kind: norms are not timed separately"},
            {"model.print_after_conversion", "printing"},
        };
        for (const auto& [key, n] : leaves_) {
            if (used_.count(key))
                continue;
            auto hk = housekeeping.find(key);
            if (hk != housekeeping.end()) {
                out_.ignored.push_back({key, nodeText(*n), hk->second});
                continue;
            }
            bool done = false;
            for (const auto& [prefix, why] : sections) {
                if (key.compare(0, prefix.size(), prefix) == 0) {
                    out_.ignored.push_back({key, nodeText(*n), why});
                    done = true;
                    break;
                }
            }
            if (!done)
                refuse(key, "not a torchtitan setting this importer knows; it may change the run, "
                            "so it is not left out silently");
        }
    }

private:
    void flatten(const toml::table& t, const std::string& prefix) {
        for (const auto& [k, v] : t) {
            const std::string key = prefix + std::string(k.str());
            if (const auto* sub = v.as_table())
                flatten(*sub, key + ".");
            else
                leaves_[key] = &v;
        }
    }

    const ImportOptions& opt_;
    Imported& out_;
    std::map<std::string, const toml::node*> leaves_;
    std::set<std::string> used_;
};

// torchtitan 9dec370 pipelining_utils.generate_split_points: the first stage
// gets the base share, the middle stages the remainder one each, the last
// what is left.
std::vector<int> oldSplit(int stages, int layers) {
    const int base = layers / stages;
    int extra = layers % stages;
    std::vector<int> out;
    int used = 0;
    for (int i = 0; i + 1 < stages; ++i) {
        int n = base;
        if (i > 0 && extra > 0) {
            ++n;
            --extra;
        }
        out.push_back(n);
        used += n;
    }
    out.push_back(layers - used);
    return out;
}

// torchtitan generate_llm_fqn_per_model_part (torchtitan/distributed/
// pipeline_parallel.py, Jul 2025 on): the embedding counts as `in` layers
// and norm + output as `out`; the effective layers are spread evenly, the
// remainder to the first stages. Empty string = ok, else why not.
std::string currentSplit(int stages, int layers, int in, int out, std::vector<int>& split) {
    split.clear();
    if (stages == 1) {
        split.push_back(layers);
        return {};
    }
    const int effective = layers + in + out;
    if (stages > effective)
        return "more stages (" + std::to_string(stages) + ") than effective layers (" +
               std::to_string(effective) + ")";
    const int per = effective / stages;
    const int extra = effective % stages;
    if (in > per || out > per)
        return "the first/last stage weights exceed the layers per stage (" + std::to_string(per) +
               ")";
    int next = 0;
    for (int s = 0; s < stages; ++s) {
        int n = per + (s < extra ? 1 : 0);
        if (s == 0)
            n -= in;
        else if (s == stages - 1)
            n -= out;
        n = std::max(0, std::min(n, layers - next));
        split.push_back(n);
        next += n;
    }
    if (next != layers)
        return "the generated split covers " + std::to_string(next) + " of " +
               std::to_string(layers) + " layers";
    return {};
}

struct CommentParts {
    std::optional<json> plan;   // plan keys to lay over the TOML's
    std::optional<Model> model; // a model that is no known flavor
};

Imported importImpl(const std::string& text, const ImportOptions& opt) {
    Imported out;
    toml::table tbl;
    try {
        tbl = toml::parse(text, opt.file);
    } catch (const toml::parse_error& e) {
        std::ostringstream msg;
        msg << "not valid TOML: " << e.description() << " (line " << e.source().begin.line
            << ", column " << e.source().begin.column << ")";
        out.problems.push_back({opt.file, "", msg.str()});
        return out;
    }
    Reader r(tbl, opt, out);

    // ---- the scaleacross comment -----------------------------------------------------
    CommentParts comment;
    if (auto line = commentLine(text)) {
        json j = json::parse(*line, nullptr, false);
        if (!j.is_object()) {
            out.problems.push_back(
                {opt.file, "# scaleacross", "the comment is not one JSON object on one line"});
        } else {
            if (j.contains("model")) {
                json m = j["model"];
                if (m.is_object()) {
                    m["format"] = kModelFormat;
                    m["version"] = kFormatVersion;
                }
                Loaded<Model> lm = parseModel(m.dump(), opt.file + " (# scaleacross model)");
                for (auto& p : lm.problems)
                    out.problems.push_back({opt.file, "# scaleacross: model" + p.path, p.message});
                if (lm.ok())
                    comment.model = *lm.value;
                j.erase("model");
            }
            comment.plan = j;
        }
    }

    // ---- layout ------------------------------------------------------------------------
    const bool old =
        r.has("training.batch_size") || r.hasPrefix("experimental.pipeline_") ||
        r.has("experimental.context_parallel_degree") || r.has("training.tensor_parallel_degree") ||
        r.has("training.data_parallel_shard_degree") ||
        r.has("training.data_parallel_replicate_degree") || r.has("float8.enable_float8_linear");

    // ---- model ---------------------------------------------------------------------------
    std::optional<Model> model;
    std::string flavorName;
    {
        const auto name = r.string("model.name", "llama3");
        const auto flavor = r.string("model.flavor", "debugmodel");
        flavorName = flavor.value_or("");
        if (comment.model) {
            model = comment.model;
            r.mapped("model.name", "model: (the scaleacross comment holds the dimensions)");
            if (r.has("model.flavor"))
                r.mappedValue("model.flavor", flavorName,
                              "model: (a flavor registered with the dimensions of the "
                              "scaleacross comment)");
        } else if (name && flavor) {
            if (*name != "llama3" && *name != "llama") {
                r.refuse("model.name",
                         "'" + *name + "' flavor '" + *flavor +
                             "': only llama3 flavors are carried (torchtitan's llama4, "
                             "deepseek_v3, qwen3, ... use interleaved MoE layers, MLA or "
                             "chunked attention, which the model document cannot express)");
            } else if (const Flavor* f =
                           findFlavor(old ? oldFlavors() : currentFlavors(), *flavor)) {
                model = modelOf(*f);
                model->description = std::string("torchtitan llama3 flavor ") + f->name;
                r.mapped("model.name", "model:");
                r.mappedValue("model.flavor", *flavor,
                              "model:/layers, /hidden, /ffn_hidden, /heads, /kv_heads, /vocab");
            } else {
                const bool masked = flavor->find("_flex") != std::string::npos ||
                                    flavor->find("_varlen") != std::string::npos;
                r.refuse("model.flavor",
                         "'" + *flavor + "' " +
                             (masked ? "uses block-causal (document) masks, which the cost model "
                                       "cannot express"
                                     : "is not a llama3 flavor (debugmodel, 8B, 70B, 405B); a "
                                       "registered custom flavor needs its dimensions in the "
                                       "scaleacross comment"));
            }
        }
        if (model && opt.vocab > 0)
            model->vocab = opt.vocab;
    }

    // ---- precision ---------------------------------------------------------------------
    bool fp8 = false, fp8Gather = false;
    {
        const std::string key = "model.converters";
        if (auto conv = r.strings(key)) {
            for (const std::string& c : *conv) {
                if (c == "float8" || c == "quantize.linear.float8") {
                    fp8 = true;
                } else if (c == "mx" || c == "quantize.linear.mx") {
                    r.refuse(key, "'" + c +
                                      "': MX block-scaled formats are not expressible (dtype "
                                      "is bf16 or fp8 per-tensor)");
                } else if (c == "quantize.grouped_mm.float8" || c == "quantize.grouped_mm.mx") {
                    if (model && model->moe)
                        r.refuse(key,
                                 "'" + c + "': quantised grouped expert GEMMs are not expressible");
                } else {
                    r.refuse(key, "'" + c + "': unknown model converter");
                }
            }
            if (r.has(key))
                out.mapped.push_back({key, r.text(key), "model:/dtype"});
        }
        if (auto en = r.boolean("float8.enable_float8_linear", false)) {
            if (*en)
                fp8 = true;
            r.mapped("float8.enable_float8_linear", "model:/dtype");
        }
        const std::string f8why = fp8 ? "Float8 detail (filtered modules, scaling variants, "
                                        "the amax all-reduce for FSDP): not expressible; GEMMs "
                                        "run FP8 with torchao's tensorwise current scaling"
                                      : "Float8 is not enabled (no float8 converter)";
        // FSDP2 gathers the Float8 weights in FP8, each shard cast first
        // (torchao fsdp_utils WeightWithDynamicFloat8CastTensor).
        for (const char* k : {"float8.enable_fsdp_float8_all_gather",
                              "quantize.linear.float8.enable_fsdp_float8_all_gather"}) {
            if (!fp8) {
                r.ignored(k, f8why);
            } else if (auto on = r.boolean(k, false)) {
                fp8Gather = fp8Gather || *on;
                r.mapped(k, "plan:/fp8_param_gather");
            }
        }
        for (const char* k :
             {"float8.precompute_float8_dynamic_scale_for_fsdp", "float8.scaling_type_input",
              "float8.scaling_type_weight", "float8.scaling_type_grad_output", "float8.recipe_name",
              "float8.filter_fqns", "float8.emulate", "float8.force_recompute_fp8_weight_in_bwd",
              "quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp",
              "quantize.linear.float8.recipe_name", "quantize.linear.float8.filter_fqns",
              "quantize.linear.float8.emulate"})
            r.ignored(k, f8why);
        if (model)
            model->dtype = fp8 ? DType::FP8 : DType::BF16;

        if (auto p = r.string("training.mixed_precision_param", "bfloat16")) {
            if (*p == "bfloat16")
                r.mapped("training.mixed_precision_param", "model:/dtype");
            else
                r.refuse("training.mixed_precision_param",
                         "'" + *p + "': compute in float32 is not expressible (bf16 or fp8)");
        }
        if (auto d = r.string("training.dtype", "float32")) {
            if (*d == "float32")
                r.ignored("training.dtype",
                          "float32 master weights and Adam state: what the cost model assumes");
            else
                r.refuse("training.dtype", "'" + *d +
                                               "': pure bf16 training (bf16 weights, gradients and "
                                               "optimizer state) is not expressible");
        }
        if (auto off = r.boolean("training.enable_cpu_offload", false)) {
            if (*off)
                r.refuse("training.enable_cpu_offload", "CPU offloading is not expressible");
            else
                r.ignored("training.enable_cpu_offload", "off");
        }
        if (auto ft = r.boolean("fault_tolerance.enable", false)) {
            if (*ft)
                r.refuse("fault_tolerance.enable",
                         "TorchFT (dynamic HSDP replica groups) is not expressible");
            else
                r.ignored("fault_tolerance.enable", "off");
        }
    }

    // torchtitan's defaults (model/framework_defaults.cpp, with their
    // sources), shared with the plan's "framework" key: SDPA's flash backend
    // (FlashAttention-2), sequence-parallel norms under TP, eager elementwise
    // ops, torchao's tensorwise FP8.
    const Plan tt = frameworkDefaults(TrainingFramework::Torchtitan);
    Plan plan;
    plan.flash_attention = tt.flash_attention;
    plan.attention_kernel = tt.attention_kernel;
    plan.sequence_parallel = tt.sequence_parallel;
    plan.sequence_parallel_regather = tt.sequence_parallel_regather;
    if (auto d = r.string("job.description", ""); d && r.has("job.description")) {
        plan.description = *d;
        r.mapped("job.description", "plan:/description");
    }

    // ---- degrees -----------------------------------------------------------------------
    bool degreesOk = true;
    auto degree = [&](std::initializer_list<const char*> keys, std::int64_t fallback,
                      bool allowRest) -> std::pair<std::int64_t, std::string> {
        const std::string key = r.pick(keys, old);
        auto v = r.integer(key, fallback);
        if (!v) {
            degreesOk = false;
            return {1, key};
        }
        if ((*v < 1 && !(allowRest && *v == -1)) || *v > kMaxCount) {
            r.refuse(key, "must be >= 1" + std::string(allowRest ? " or -1 (the rest)" : "") +
                              ", got " + std::to_string(*v));
            degreesOk = false;
            return {1, key};
        }
        return {*v, key};
    };
    auto [rep, repKey] = degree(
        {"parallelism.data_parallel_replicate_degree", "training.data_parallel_replicate_degree"},
        1, false);
    auto [shard, shardKey] =
        degree({"parallelism.data_parallel_shard_degree", "training.data_parallel_shard_degree"},
               -1, true);
    auto [tp, tpKey] =
        degree({"parallelism.tensor_parallel_degree", "training.tensor_parallel_degree"}, 1, false);
    auto [cp, cpKey] = degree(
        {"parallelism.context_parallel_degree", "experimental.context_parallel_degree"}, 1, false);
    auto [pp, ppKey] =
        degree({"parallelism.pipeline_parallel_degree", "experimental.pipeline_parallel_degree"}, 1,
               false);
    auto [ep, epKey] = degree({"parallelism.expert_parallel_degree"}, 1, false);
    auto [etp, etpKey] = degree({"parallelism.expert_tensor_parallel_degree"}, 1, false);

    if (degreesOk &&
        (rep * tp > kMaxCount || rep * tp * cp > kMaxCount || rep * tp * cp * pp > kMaxCount ||
         rep * tp * cp * pp * std::max<std::int64_t>(shard, 1) > kMaxCount)) {
        r.refuse(ppKey, "the degrees multiply to more than 2^31 GPUs");
        degreesOk = false;
        rep = tp = cp = pp = shard = 1;
    }
    const std::int64_t others = rep * tp * cp * pp;
    if (degreesOk) {
        if (shard == -1) {
            if (opt.world_size <= 0) {
                out.needs_world_size = true;
                r.refuse(shardKey, "-1 (the rest of the GPUs) needs the world size to import "
                                   "with (--world-size; torchrun's nnodes x nproc_per_node)");
                degreesOk = false;
            } else if (opt.world_size % others != 0) {
                r.refuse(shardKey, "-1: the world size " + std::to_string(opt.world_size) +
                                       " is not a multiple of replicate x tp x cp x pp = " +
                                       std::to_string(others));
                degreesOk = false;
            } else {
                shard = opt.world_size / others;
                r.mappedValue(shardKey,
                              "-1 (= " + std::to_string(shard) + " of world size " +
                                  std::to_string(opt.world_size) + ")",
                              "plan:/parallelism/dp, plan:/zero_stage");
            }
        } else {
            if (opt.world_size > 0 && others * shard != opt.world_size) {
                r.refuse(shardKey, "the degrees multiply to " + std::to_string(others * shard) +
                                       ", the world size is " + std::to_string(opt.world_size));
                degreesOk = false;
            }
            r.mapped(shardKey, "plan:/parallelism/dp, plan:/zero_stage, plan:/dp_shard");
        }
    }
    r.mapped(repKey, "plan:/parallelism/dp, plan:/zero_stage, plan:/dp_shard");
    r.mapped(tpKey, "plan:/parallelism/tp, plan:/sequence_parallel");
    r.mapped(cpKey, "plan:/parallelism/cp");
    r.mapped(ppKey, "plan:/parallelism/pp");

    if (degreesOk && std::int64_t(rep) * shard > INT_MAX) {
        r.refuse(shardKey, "data-parallel degree too large");
        degreesOk = false;
    }
    const bool fsdp = shard > 1 || cp > 1; // ParallelDims.fsdp_enabled
    if (degreesOk && rep > 1 && fsdp && ep > 1) {
        r.refuse(repKey, "HSDP (" + repKey + " = " + std::to_string(rep) + " with " + shardKey +
                             " = " + std::to_string(shard) +
                             ") with expert parallelism: the plan's HSDP (dp_shard) is not "
                             "modelled with ep > 1");
        degreesOk = false;
    }
    if (degreesOk && rep > 1 && !fsdp && (tp > 1 || pp > 1)) {
        r.refuse(repKey, "DDP combined with tensor or pipeline parallelism: torchtitan raises "
                         "'DDP has not supported > 1D parallelism'");
        degreesOk = false;
    }
    plan.parallelism.tp = int(tp);
    plan.parallelism.cp = int(cp);
    plan.parallelism.pp = int(pp);
    plan.parallelism.dp = int(rep * (shard > 0 ? shard : 1));
    plan.zero_stage = fsdp ? 3 : 0;
    // HSDP: FSDP over dp_shard x cp, replicated dp_replicate times (the mesh
    // puts dp_shard inside dp_replicate, as the plan's sharding group is
    // consecutive DP ranks).
    if (degreesOk && fsdp && rep > 1) {
        plan.dp_shard = int(shard > 0 ? shard : 1);
    }
    if (!fsdp && rep > 1)
        plan.dp_bucket_mib = kTorchtitanDdpBucketMib;

    // Expert parallelism: borrowed from dp_shard (x cp, x tp when etp = 1).
    if (ep > 1) {
        if (!model || !model->moe) {
            r.ignored(epKey, "no effect on a dense flavor (torchtitan: 'No effect for non-MoE "
                             "models')");
        } else if (tp > 1 && etp != tp && etp != 1) {
            r.refuse(etpKey, "expert_tensor_parallel_degree " + std::to_string(etp) +
                                 ": torchtitan splits experts over tp or not at all (1 or " +
                                 std::to_string(tp) + ")");
        } else {
            // EP borrows the cp ranks, and the tp ranks at etp 1 (torchtitan's
            // default), then dp_shard's (ParallelDims: ep a multiple of cp,
            // of cp x tp at etp 1): the plan's experts fold the cell
            // (Parallelism::ep).
            const bool folded = tp > 1 && etp != tp;
            const std::int64_t inCell = (folded ? tp : 1) * cp;
            if (ep % inCell != 0 || (shard > 0 && (shard * inCell) % ep != 0)) {
                r.refuse(epKey, "expert_parallel_degree " + std::to_string(ep) +
                                    ": torchtitan's EP group takes the " +
                                    (folded ? "tp x cp" : "cp") + " = " + std::to_string(inCell) +
                                    " ranks first, then dp_shard's, so ep must be a multiple of "
                                    "it that divides dp_shard x " +
                                    std::to_string(inCell));
            } else {
                plan.parallelism.ep = int(ep);
                r.mapped(epKey, "plan:/parallelism/ep");
                if (folded) {
                    plan.parallelism.etp = 1;
                    r.mapped(etpKey, "plan:/parallelism/etp");
                } else {
                    r.mapped(etpKey, "plan:/parallelism/ep (experts tensor-parallel over tp)");
                }
            }
        }
    } else {
        r.mapped(epKey, "plan:/parallelism/ep");
        r.ignored(etpKey, "expert parallelism is off");
    }
    for (const char* k : {"parallelism.expert_parallel_comm_backend",
                          "parallelism.pipeline_parallel_expert_parallel_overlap"})
        r.ignored(k, "expert all-to-all kernels and overlap: not expressible");

    {
        const std::string key = r.pick(
            {"parallelism.fsdp_reshard_after_forward", "training.fsdp_reshard_after_forward"}, old);
        if (auto v = r.string(key, "default")) {
            std::optional<FsdpReshard> f;
            if (*v == "default")
                f = FsdpReshard::Default;
            else if (*v == "always")
                f = FsdpReshard::Always;
            else if (*v == "never")
                f = FsdpReshard::Never;
            if (!f)
                r.refuse(key, "'" + *v + "': must be default, always or never");
            else if (fsdp) {
                plan.fsdp_reshard_after_forward = *f;
                r.mapped(key, "plan:/fsdp_reshard_after_forward");
            } else
                r.ignored(key, "FSDP is off (data_parallel_shard_degree and "
                               "context_parallel_degree are 1)");
        }
    }
    for (const char* k :
         {"parallelism.enable_async_tensor_parallel", "experimental.enable_async_tensor_parallel"})
        if (r.has(k))
            if (auto b = r.boolean(k, false)) {
                plan.tp_comm_overlap = *b;
                r.mapped(k, "plan:/tp_comm_overlap (AsyncTP)");
            }
    for (const char* k : {"parallelism.disable_loss_parallel", "training.disable_loss_parallel"})
        r.ignored(k, "loss parallelism: the logits cost is modelled sharded over tp");
    // PyTorch's context_parallel (torch.distributed.tensor.experimental):
    // K and V gathered once (rotate method "allgather", the default) or
    // passed rank to rank ("alltoall").
    plan.cp_ring = tt.cp_ring;
    // FSDP2 and autograd add each microbatch's gradients in a pass of their
    // own.
    plan.grad_accumulation_fusion = tt.grad_accumulation_fusion;
    // FSDP2 copies its gathers out and its gradients in.
    plan.fsdp_copies = tt.fsdp_copies;
    for (const char* k : {"parallelism.context_parallel_rotate_method",
                          "experimental.context_parallel_rotate_method"}) {
        if (!r.has(k))
            continue;
        if (auto v = r.string(k, "allgather")) {
            if (*v == "allgather")
                plan.cp_ring = CpRing::TorchAllGather;
            else if (*v == "alltoall")
                plan.cp_ring = CpRing::TorchAllToAll;
            else {
                r.refuse(k, "'" + *v + "': must be allgather or alltoall");
                continue;
            }
            r.mapped(k, "plan:/cp_ring");
        }
    }
    r.ignored("parallelism.context_parallel_load_balancer",
              "CP load balancing: the plan's CP is balanced chunk pairs");
    // torchao's Float8Linear (tensorwise: dynamic per-tensor scaling) saves
    // its BF16 input and weight for the backward and keeps no FP8 copies
    // (torchao/float8/float8_linear.py, matmul_with_hp_or_float8_args).
    if (fp8) {
        plan.fp8_recipe = tt.fp8_recipe;
        plan.fp8_linear = tt.fp8_linear;
        plan.fp8_param_gather = fp8Gather;
    }
    // The loss: eager F.cross_entropy on the fp32 logits (train.py loss_fn).
    // Layouts that compile it (compile.components "loss") are charged the
    // eager kernels too.
    plan.cross_entropy = tt.cross_entropy;
    // torch.compile (Inductor) fuses the block's elementwise ops but for the
    // complex-form rotary embedding (elementwise compiled); without it
    // (torchtitan's default) PyTorch runs them eagerly, one kernel per op.
    plan.elementwise = tt.elementwise;
    if (r.has("training.compile"))
        if (auto b = r.boolean("training.compile", false)) {
            plan.elementwise = *b ? Elementwise::Compiled : Elementwise::Eager;
            r.mapped("training.compile", "plan:/elementwise");
        }
    if (r.has("compile.enable"))
        if (auto b = r.boolean("compile.enable", false)) {
            bool blocks = true; // components default: model and loss
            if (r.has("compile.components"))
                if (auto parts = r.strings("compile.components")) {
                    blocks = std::find(parts->begin(), parts->end(), "model") != parts->end();
                    r.mapped("compile.components", "plan:/elementwise (the model component)");
                }
            plan.elementwise = *b && blocks ? Elementwise::Compiled : Elementwise::Eager;
            r.mapped("compile.enable", "plan:/elementwise");
        }
    if (r.has("compile.components") && !r.has("compile.enable"))
        r.ignored("compile.components", "compile is off (compile.enable is not set)");
    for (const char* k : {"compile.backend", "experimental.enable_compiled_autograd",
                          "parallelism.enable_compiled_autograd"})
        r.ignored(k, "the compiler's backend and compiled autograd: elementwise fusion is "
                     "plan:/elementwise");

    // ---- batch ---------------------------------------------------------------------------
    const std::string localKey = r.pick({"training.local_batch_size", "training.batch_size"}, old);
    const std::string globalKey = "training.global_batch_size";
    std::int64_t local = 8, global = -1;
    if (auto v = r.integer(localKey, 8)) {
        if (*v < 1 || *v > kMaxCount)
            r.refuse(localKey, "must be 1 .. 2^31, got " + std::to_string(*v));
        else
            local = *v;
    }
    if (auto v = r.integer(globalKey, -1)) {
        if (*v == 0 || *v < -1 || *v > kMaxCount * kMaxCount)
            r.refuse(globalKey, "must be > 0 or -1 (local batch x data-parallel degree), got " +
                                    std::to_string(*v));
        else
            global = *v;
    }
    const std::int64_t dp = plan.parallelism.dp;
    std::int64_t accumulation = 1;
    if (global > 0) {
        if (global % (local * dp) != 0) {
            r.refuse(globalKey, std::to_string(global) +
                                    " is not a multiple of local batch x "
                                    "data-parallel degree (" +
                                    std::to_string(local) + " x " + std::to_string(dp) + ")");
        } else {
            accumulation = global / (local * dp);
        }
        r.mapped(globalKey, "plan:/global_batch_sequences");
    }
    if (auto v = r.integer("training.seq_len", 2048)) {
        if (*v < 1 || *v > kMaxCount)
            r.refuse("training.seq_len", "must be 1 .. 2^31, got " + std::to_string(*v));
        else
            plan.sequence_length = *v;
        r.mapped("training.seq_len", "plan:/sequence_length");
    }

    // ---- pipeline --------------------------------------------------------------------------
    const std::string schedKey = r.pick(
        {"parallelism.pipeline_parallel_schedule", "experimental.pipeline_parallel_schedule"}, old);
    const std::string csvKey = r.pick({"parallelism.pipeline_parallel_schedule_csv",
                                       "experimental.pipeline_parallel_schedule_csv"},
                                      old);
    const std::string fqnKey = "parallelism.module_fqns_per_model_part";
    const std::string splitKey = r.pick({"parallelism.pipeline_parallel_split_points",
                                         "experimental.pipeline_parallel_split_points"},
                                        old);
    const std::string lpsKey = "parallelism.pipeline_parallel_layers_per_stage";
    const std::string firstKey = "parallelism.pipeline_parallel_first_stage_less_layers";
    const std::string lastKey = "parallelism.pipeline_parallel_last_stage_less_layers";
    const std::string mbCountKey = r.pick({"parallelism.pipeline_parallel_microbatches",
                                           "experimental.pipeline_parallel_microbatches"},
                                          old);
    const std::string mbSizeKey = "parallelism.pipeline_parallel_microbatch_size";
    std::int64_t micro = local;
    if (pp <= 1) {
        for (const std::string& k :
             {schedKey, csvKey, fqnKey, splitKey, lpsKey, firstKey, lastKey, mbCountKey, mbSizeKey})
            r.ignored(k, "pipeline parallelism is off (degree 1)");
    } else {
        bool single = true;
        if (auto s = r.string(schedKey, "1F1B")) {
            const std::string n = lower(*s);
            if (n == "1f1b") {
                plan.schedule.kind = ScheduleKind::OneFOneB;
            } else if (n == "gpipe") {
                plan.schedule.kind = ScheduleKind::GPipe;
            } else if (n == "interleaved1f1b") {
                plan.schedule.kind = ScheduleKind::Interleaved;
                single = false;
            } else if (n == "zbvzerobubble" || n == "dualpipev") {
                r.refuse(schedKey, "'" + *s +
                                       "': a V-shaped schedule (two chunks per rank, folded); the "
                                       "plan's chunks loop round the pipeline");
            } else if (n == "interleavedzerobubble") {
                r.refuse(schedKey, "'" + *s +
                                       "': zero bubble over looped chunks; the plan's zero-bubble "
                                       "schedule has one chunk per rank");
            } else if (n == "loopedbfs") {
                r.refuse(schedKey,
                         "'" + *s + "': breadth-first looped schedule is not expressible");
            } else if (n == "pipelineschedulesingle" || n == "pipelineschedulemulti") {
                r.refuse(schedKey, "'" + *s + "': a schedule read from a CSV is not expressible");
            } else {
                r.refuse(schedKey, "'" + *s + "': not a torch.distributed.pipelining schedule");
            }
            r.mapped(schedKey, "plan:/schedule/kind, plan:/p2p_overlap");
        }
        if (auto csv = r.string(csvKey, "")) {
            if (!csv->empty())
                r.refuse(csvKey, "a schedule read from a CSV is not expressible");
            else
                r.ignored(csvKey, "empty");
        }

        // Layers per (virtual) stage, in stage order.
        std::vector<int> stages;
        std::string splitFrom;
        const int L = model ? model->layers : 0;
        auto first = r.integer(firstKey, 1);
        auto last = r.integer(lastKey, 1);
        for (auto* w : {&first, &last})
            if (*w && (**w < 0 || **w > L + 1)) {
                r.refuse(w == &first ? firstKey : lastKey,
                         "must be 0 .. layers + 1, got " + std::to_string(**w));
                *w = 1;
            }
        if (model) {
            if (r.has(fqnKey)) {
                splitFrom = fqnKey;
                const toml::node* n = r.node(fqnKey);
                const toml::array* parts = n->as_array();
                bool ok = parts != nullptr && !parts->empty();
                int next = 0;
                for (std::size_t i = 0; ok && i < parts->size(); ++i) {
                    const toml::array* part = parts->get(i)->as_array();
                    if (!part) {
                        ok = false;
                        break;
                    }
                    int count = 0;
                    for (const toml::node& e : *part) {
                        if (!e.is_string()) {
                            ok = false;
                            break;
                        }
                        const std::string name = e.as_string()->get();
                        if (name.rfind("layers.", 0) == 0) {
                            if (name != "layers." + std::to_string(next)) {
                                r.refuse(fqnKey, "'" + name + "' out of order (expected layers." +
                                                     std::to_string(next) + ")");
                                ok = false;
                                break;
                            }
                            ++next;
                            ++count;
                        } else if (!((name == "tok_embeddings" && i == 0) ||
                                     ((name == "norm" || name == "output") &&
                                      i + 1 == parts->size()))) {
                            r.refuse(fqnKey, "'" + name + "' in model part " + std::to_string(i) +
                                                 ": not expressible (the embedding belongs to "
                                                 "the first part, norm and output to the last)");
                            ok = false;
                            break;
                        }
                    }
                    stages.push_back(count);
                }
                if (ok && next != L) {
                    r.refuse(fqnKey, "names " + std::to_string(next) + " layers, the flavor has " +
                                         std::to_string(L));
                    ok = false;
                }
                if (!ok) {
                    if (parts == nullptr || parts->empty())
                        r.refuse(fqnKey, "must be a list of lists of module names");
                    stages.clear();
                }
                for (const std::string& k : {splitKey, lpsKey, firstKey, lastKey})
                    r.ignored(k, "module_fqns_per_model_part takes precedence");
            } else if (r.has(splitKey)) {
                splitFrom = splitKey;
                if (auto pts = r.strings(splitKey)) {
                    int prev = 0;
                    bool ok = true;
                    for (const std::string& p : *pts) {
                        int at = -1;
                        if (p.rfind("layers.", 0) == 0) {
                            try {
                                at = std::stoi(p.substr(7));
                            } catch (...) {
                                at = -1;
                            }
                        }
                        if (at <= prev || at >= L) {
                            r.refuse(splitKey, "'" + p +
                                                   "': split points are layers.N, increasing, "
                                                   "inside the model");
                            ok = false;
                            break;
                        }
                        stages.push_back(at - prev);
                        prev = at;
                    }
                    if (ok)
                        stages.push_back(L - prev);
                    else
                        stages.clear();
                }
            } else {
                int total = 0;
                if (auto lps = r.integer(lpsKey, 0); lps && r.has(lpsKey)) {
                    splitFrom = lpsKey;
                    if (*lps < 1 || *lps > kMaxCount)
                        r.refuse(lpsKey, "must be 1 .. 2^31");
                    else
                        total = int((L + first.value_or(1) + last.value_or(1) + *lps - 1) / *lps);
                } else {
                    splitFrom = schedKey;
                    total = int(pp) * (single ? 1 : 2);
                }
                if (total > 0) {
                    if (old) {
                        if (total > L)
                            r.refuse(splitFrom.empty() ? ppKey : splitFrom,
                                     "more stages than layers");
                        else
                            stages = oldSplit(total, L);
                    } else {
                        const std::string why = currentSplit(total, L, int(first.value_or(1)),
                                                             int(last.value_or(1)), stages);
                        if (!why.empty()) {
                            r.refuse(splitFrom, why);
                            stages.clear();
                        }
                    }
                }
                r.mapped(firstKey, "plan:/placement/layers_per_stage");
                r.mapped(lastKey, "plan:/placement/layers_per_stage");
                r.mapped(lpsKey, "plan:/schedule/virtual_stages, plan:/placement/layers_per_stage");
            }
        }
        if (!stages.empty()) {
            const int total = int(stages.size());
            if (total % pp != 0) {
                r.refuse(splitFrom, std::to_string(total) +
                                        " stages do not divide evenly over pipeline degree " +
                                        std::to_string(pp));
            } else {
                const int v = total / int(pp);
                if (single && v != 1)
                    r.refuse(splitFrom,
                             std::to_string(v) + " stages per rank with a single-stage schedule");
                else if (!single && v < 2)
                    r.refuse(splitFrom, "a looped schedule needs at least 2 stages per rank");
                else {
                    plan.schedule.virtual_stages = v;
                    std::vector<int> perRank(std::size_t(pp), 0);
                    for (int s = 0; s < total; ++s)
                        perRank[std::size_t(s % pp)] += stages[std::size_t(s)];
                    bool chunksMatch = true;
                    for (int s = 0; s < total; ++s)
                        if (stages[std::size_t(s)] !=
                            planChunkLayers(perRank[std::size_t(s % pp)], v, s / int(pp)))
                            chunksMatch = false;
                    if (!chunksMatch)
                        out.ignored.push_back(
                            {splitFrom == schedKey ? (old ? splitKey : fqnKey) : splitFrom,
                             "layers per virtual stage " + joinInts(stages),
                             "per-chunk counts inside a rank: the plan shares each rank's layers "
                             "evenly over its chunks (the layers per rank are kept)"});
                    if (perRank != evenSplit(L, int(pp))) {
                        plan.placement = Placement{};
                        plan.placement->layers_per_stage = perRank;
                    }
                    if (r.has(fqnKey) || r.has(splitKey))
                        r.mapped(splitFrom,
                                 "plan:/placement/layers_per_stage, plan:/schedule/virtual_stages");
                    else if (splitFrom == schedKey)
                        out.mapped.push_back(
                            {old ? splitKey : fqnKey,
                             std::string("(not set: torchtitan's ") +
                                 (old ? "generate_split_points"
                                      : "generate_llm_fqn_per_model_part") +
                                 ") " + joinInts(stages),
                             "plan:/placement/layers_per_stage, plan:/schedule/virtual_stages"});
                }
            }
        }

        // Microbatches.
        if (r.has(mbCountKey) && r.has(mbSizeKey))
            r.refuse(mbSizeKey, "given with " + mbCountKey + "; give one");
        if (r.has(mbCountKey) || (old && !r.has(mbSizeKey))) {
            // 9dec370: pipeline_parallel_microbatches, default the pp degree.
            if (auto n = r.integer(mbCountKey, pp)) {
                if (*n < 1 || local % *n != 0)
                    r.refuse(r.has(mbCountKey) ? mbCountKey : localKey,
                             std::to_string(*n) + " microbatches do not divide the local batch " +
                                 std::to_string(local));
                else
                    micro = local / *n;
                if (r.has(mbCountKey))
                    r.mapped(mbCountKey, "plan:/micro_batch_sequences");
            }
        } else if (auto m = r.integer(mbSizeKey, 1)) {
            if (*m < 1 || local % *m != 0)
                r.refuse(r.has(mbSizeKey) ? mbSizeKey : localKey,
                         "microbatch size " + std::to_string(*m) +
                             " does not divide the local batch " + std::to_string(local));
            else
                micro = *m;
            r.mapped(mbSizeKey, "plan:/micro_batch_sequences");
        }
        if (accumulation > 1)
            r.refuse(globalKey,
                     "gradient accumulation (" + std::to_string(accumulation) +
                         " steps) around the pipeline: torchtitan runs the schedule once per "
                         "step, each with its own fill and drain; the plan runs all "
                         "microbatches in one schedule");
    }
    plan.micro_batch_sequences = micro;
    plan.global_batch_sequences = local * dp * accumulation;
    r.mapped(localKey, "plan:/global_batch_sequences, plan:/micro_batch_sequences");

    // torchtitan's device mesh is [pp, dp_replicate, dp_shard, cp, tp],
    // outermost first (ParallelDims.build_mesh): innermost first tp, cp, dp,
    // pp (the same layout as the plan's default when pp or dp is 1).
    plan.rank_order = {Dim::TP, Dim::CP, Dim::DP, Dim::PP};
    // torch.distributed.pipelining: Schedule1F1B waits for each steady-state
    // send together with the next receive (blocking); GPipe and
    // Interleaved1F1B leave sends running beside compute
    // (frameworkP2pOverlap). Without a pipeline there is no P2P: the plan's
    // default stays.
    if (plan.parallelism.pp > 1)
        plan.p2p_overlap = frameworkP2pOverlap(TrainingFramework::Torchtitan, plan.schedule.kind);

    // ---- activation checkpointing -----------------------------------------------------
    {
        const std::string modeKey = "activation_checkpoint.mode";
        const std::string optKey = "activation_checkpoint.selective_ac_option";
        const auto mode = r.string(modeKey, "selective");
        std::optional<std::string> option = "2";
        if (const toml::node* n = r.node(optKey))
            option = n->is_integer()
                         ? std::to_string(n->as_integer()->get())
                         : (n->is_string() ? std::optional<std::string>(n->as_string()->get())
                                           : std::nullopt);
        if (mode) {
            if (*mode == "none") {
                plan.recompute = Recompute::None;
                r.mapped(modeKey, "plan:/recompute");
                r.ignored(optKey, "only used by mode 'selective'");
            } else if (*mode == "full") {
                plan.recompute = Recompute::Full;
                r.mapped(modeKey, "plan:/recompute");
                r.ignored(optKey, "only used by mode 'selective'");
            } else if (*mode == "selective") {
                if (!option) {
                    r.refuse(optKey, "must be 'op' or a layer interval");
                } else if (*option == "op") {
                    plan.recompute = Recompute::SelectiveOp;
                    r.mapped(modeKey, "plan:/recompute");
                    r.mappedValue(optKey, "op", "plan:/recompute (selective-op)");
                } else if (*option == "1") {
                    plan.recompute = Recompute::Full;
                    r.mapped(modeKey, "plan:/recompute");
                    r.mappedValue(optKey, "1", "plan:/recompute (every layer: full)");
                } else {
                    r.refuse(r.has(optKey) ? optKey : modeKey,
                             "selective AC every " + *option + " layers" +
                                 (r.has(optKey) ? ""
                                                : " (torchtitan's default: mode 'selective', "
                                                  "selective_ac_option '2')") +
                                 ": full recompute of a subset of layers is not expressible");
                }
            } else {
                r.refuse(modeKey,
                         "'" + *mode + "': only none, selective ('op') and full are expressible");
            }
        }
        for (const char* k :
             {"activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns",
              "activation_checkpoint.early_stop", "activation_checkpoint.memory_budget",
              "activation_checkpoint.visualize_memory_budget_pareto",
              "activation_checkpoint.preserve_rng_state", "activation_checkpoint.determinism_check",
              "activation_checkpoint.debug"})
            r.ignored(k, "activation checkpointing detail: not expressible");
    }

    // ---- gradients -----------------------------------------------------------------------
    if (auto red = r.string("training.mixed_precision_reduce", "float32")) {
        if (*red == "float32") {
            plan.grad_reduce_bytes = 4;
            r.mapped("training.mixed_precision_reduce", "plan:/grad_reduce_bytes");
        } else {
            r.refuse("training.mixed_precision_reduce",
                     "'" + *red + "': torchtitan accepts only float32");
        }
    }
    if (auto name = r.string("optimizer.name", "AdamW")) {
        if (*name != "AdamW" && *name != "Adam")
            r.refuse("optimizer.name", "'" + *name + "': the cost model assumes Adam state");
        else
            r.ignored("optimizer.name", "Adam state: what the cost model assumes");
    }
    // The optimizer's kernels: optimizer.implementation (for-loop, foreach,
    // fused, fused_opt_states_bf16; "fused" by default since 6e4988550,
    // 2025-02-24), before it optimizer.fused (false by default: foreach).
    // An old-layout file that gives neither ran foreach.
    if (r.has("optimizer.implementation")) {
        if (auto impl = r.string("optimizer.implementation", "fused")) {
            if (*impl == "fused" || *impl == "fused_opt_states_bf16") {
                plan.optimizer_implementation = OptimizerImpl::Fused;
                if (*impl == "fused_opt_states_bf16") {
                    plan.optimizer_moments = OptimizerMoments::Bf16;
                    r.mapped("optimizer.implementation",
                             "plan:/optimizer_implementation, plan:/optimizer_moments");
                } else {
                    r.mapped("optimizer.implementation", "plan:/optimizer_implementation");
                }
            } else if (*impl == "foreach" || *impl == "for-loop") {
                plan.optimizer_implementation = OptimizerImpl::Foreach;
                r.mapped("optimizer.implementation",
                         *impl == "foreach" ? "plan:/optimizer_implementation"
                                            : "plan:/optimizer_implementation (foreach: the same "
                                              "passes; the for-loop's launch per tensor is left "
                                              "out)");
            } else {
                r.refuse("optimizer.implementation",
                         "must be for-loop, foreach, fused or fused_opt_states_bf16, got '" +
                             *impl + "'");
            }
        }
    } else if (r.has("optimizer.fused")) {
        if (auto fused = r.boolean("optimizer.fused", false)) {
            plan.optimizer_implementation = *fused ? OptimizerImpl::Fused : OptimizerImpl::Foreach;
            r.mapped("optimizer.fused", "plan:/optimizer_implementation");
        }
    } else if (old) {
        // Said in the mapped list: the plan's own default is fused.
        plan.optimizer_implementation = OptimizerImpl::Foreach;
        r.mappedValue("optimizer.fused", "(not set: false, torchtitan's default before 2025-02-24)",
                      "plan:/optimizer_implementation (foreach)");
    }
    if (auto early = r.boolean("optimizer.early_step_in_backward", false); early && *early)
        r.refuse("optimizer.early_step_in_backward",
                 "optimizer steps inside the backward (gradients freed early) are not expressible");

    r.finish();

    // ---- names, the comment, validation ---------------------------------------------
    std::string name = opt.name;
    if (name.empty() && !opt.file.empty())
        name = stemOf(opt.file);
    if (name.empty())
        name = "torchtitan-llama3-" + lower(flavorName);
    plan.name = name;
    if (model && !comment.model)
        model->name = name;

    if (!model || !out.problems.empty())
        return out;

    json j = toJson(plan);
    if (comment.plan) {
        static const std::set<std::string> allowed = {"name",
                                                      "cross_entropy",
                                                      "sequence_parallel",
                                                      "sequence_parallel_regather",
                                                      "hidden_dropout",
                                                      "attention_dropout",
                                                      "zero_stage",
                                                      "recompute",
                                                      "recompute_method",
                                                      "recompute_layers",
                                                      "recompute_modules",
                                                      "fp8_recipe",
                                                      "fp8_linear",
                                                      "fp8_param_gather",
                                                      "schedule",
                                                      "rank_order",
                                                      "placement",
                                                      "collectives",
                                                      "link_technologies",
                                                      "dp_overlap",
                                                      "p2p_overlap",
                                                      "ep_overlap",
                                                      "cuda_graphs",
                                                      "ep_dispatcher",
                                                      "ep_dispatcher_sms",
                                                      "cp_ring",
                                                      "cp_a2a_size",
                                                      "grad_accumulation_fusion",
                                                      "grad_reduce_scatter",
                                                      "fsdp_copies",
                                                      "dp_bucket_mib",
                                                      "grad_reduce_bytes",
                                                      "optimizer_moments",
                                                      "master_weights",
                                                      "flash_attention",
                                                      "attention_kernel",
                                                      "elementwise",
                                                      "rope_fusion",
                                                      "fsdp_reshard_after_forward",
                                                      "compression",
                                                      "routing",
                                                      "outer_sync",
                                                      "checkpoint",
                                                      "token_budget",
                                                      "target_loss"};
        for (auto it = comment.plan->begin(); it != comment.plan->end(); ++it) {
            if (!allowed.count(it.key())) {
                out.problems.push_back(
                    {opt.file, "# scaleacross: " + it.key(),
                     "not a plan field the comment may carry (the TOML sets it)"});
                continue;
            }
            if (it.key() == "name" && !opt.name.empty())
                continue; // a name the caller gives wins over the carried one
            // The fusion the comment carries refines compile; with compile
            // off (edited after export) the TOML wins.
            if (it.key() == "elementwise" && j.value("elementwise", "") == "eager") {
                out.ignored.push_back({"# scaleacross: elementwise", it.value().dump(),
                                       "compile is off in the TOML, which wins"});
                continue;
            }
            if (it.key() == "placement" && it.value().is_null())
                j.erase("placement");
            else
                j[it.key()] = it.value();
            out.mapped.push_back(
                {"# scaleacross: " + it.key(), it.value().dump(), "plan:/" + it.key()});
        }
    }
    Loaded<Plan> lp = parsePlan(dumpCanonical(j), opt.file);
    for (const Diagnostic& p : lp.problems)
        out.problems.push_back({opt.file, "plan:" + p.path, "the imported plan: " + p.message});
    if (!lp.ok())
        return out;
    out.model = model;
    out.plan = *lp.value;
    return out;
}

// ---- writing -----------------------------------------------------------------------------

const char* scheduleName(ScheduleKind k) {
    switch (k) {
    case ScheduleKind::GPipe:
        return "GPipe";
    case ScheduleKind::OneFOneB:
        return "1F1B";
    case ScheduleKind::Interleaved:
        return "Interleaved1F1B";
    case ScheduleKind::ZeroBubble:
        return "1F1B";
    }
    return "1F1B";
}

std::string rankOrderText(const std::vector<Dim>& order) {
    std::string s;
    for (Dim d : order)
        s += (s.empty() ? "" : ", ") + std::string(toString(d));
    return s;
}

// The TOML without the scaleacross comment; notes about what it cannot say.
std::string body(const Model& model, const Plan& plan, const char* flavor,
                 std::vector<std::string>& notes, std::vector<Diagnostic>& problems) {
    const Parallelism& par = plan.parallelism;
    std::ostringstream t;
    t << "[job]\n";
    t << "description = " << tomlString(plan.description) << "\n\n";

    if (model.mtp_layers > 0)
        notes.push_back("mtp_layers " + std::to_string(model.mtp_layers) +
                        ": torchtitan builds multi-token prediction into the model flavor "
                        "(DeepSeek-V3's model_registry num_mtp_layers), not from this "
                        "configuration: the flavor named must carry it");
    t << "[model]\nname = \"llama3\"\n";
    t << "flavor = " << tomlString(flavor ? std::string(flavor) : model.name) << "\n";
    if (model.dtype == DType::FP8)
        t << "converters = [\"quantize.linear.float8\"]\n";
    t << "\n";
    if (model.dtype == DType::FP8 && plan.fp8_param_gather)
        t << "[quantize.linear.float8]\nenable_fsdp_float8_all_gather = true\n\n";

    t << "[training]\n";
    const std::int64_t perRank = par.dp > 0 ? plan.global_batch_sequences / par.dp : 0;
    t << "local_batch_size = " << (par.pp > 1 ? perRank : plan.micro_batch_sequences) << "\n";
    t << "global_batch_size = " << plan.global_batch_sequences << "\n";
    t << "seq_len = " << plan.sequence_length << "\n";
    t << "mixed_precision_param = \"bfloat16\"\n";
    t << "mixed_precision_reduce = \"float32\"\n\n";

    // AdamW's kernels; bf16 moments with the fused kernel are
    // fused_opt_states_bf16.
    const bool bf16States = plan.optimizer_implementation == OptimizerImpl::Fused &&
                            plan.optimizer_moments == OptimizerMoments::Bf16 &&
                            plan.master_weights == MasterWeights::Fp32;
    t << "[optimizer]\nimplementation = \""
      << (bf16States ? "fused_opt_states_bf16" : toString(plan.optimizer_implementation))
      << "\"\n\n";

    t << "[parallelism]\n";
    const bool ddp =
        plan.zero_stage == 0 && par.dp > 1 && par.cp == 1 && par.tp == 1 && par.pp == 1;
    if (plan.zero_stage == 0 && par.dp > 1 && !ddp)
        notes.push_back("zero_stage 0 with other parallelism: torchtitan's DDP is 1D only, so the "
                        "data-parallel ranks shard (FSDP); zero_stage is kept in the scaleacross "
                        "comment");
    if ((plan.zero_stage == 1 || plan.zero_stage == 2) && (par.dp > 1 || par.cp > 1))
        notes.push_back("zero_stage " + std::to_string(plan.zero_stage) +
                        ": torchtitan has no ZeRO-1/2; written as FSDP (fully_shard, ZeRO-3"
                        " with fsdp_reshard_after_forward '" +
                        toString(plan.fsdp_reshard_after_forward) +
                        "'); zero_stage is kept in the scaleacross comment");
    if (plan.zero_stage == 0 && par.dp == 1 && par.cp > 1)
        notes.push_back("context parallelism applies FSDP over the cp ranks in torchtitan "
                        "(dp_shard_cp); zero_stage 0 is kept in the scaleacross comment");
    t << "data_parallel_replicate_degree = " << (ddp ? par.dp : plan.dpReplicas()) << "\n";
    t << "data_parallel_shard_degree = " << (ddp ? 1 : plan.dpShard()) << "\n";
    t << "fsdp_reshard_after_forward = \"" << toString(plan.fsdp_reshard_after_forward) << "\"\n";
    t << "tensor_parallel_degree = " << par.tp << "\n";
    t << "context_parallel_degree = " << par.cp << "\n";
    if (plan.cp_ring == CpRing::TorchAllToAll)
        t << "context_parallel_rotate_method = \"alltoall\"\n";
    t << "pipeline_parallel_degree = " << par.pp << "\n";
    if (plan.tp_comm_overlap)
        t << "enable_async_tensor_parallel = true\n";
    if (par.ep > 1) {
        // torchtitan's experts are split over tp or not at all, and its EP
        // group takes the cell's folded ranks (cp, tp x cp at etp 1) whole.
        if (par.expertTp() < par.tp && par.expertTp() != 1)
            problems.push_back({"", "/parallelism/etp",
                                "experts split over " + std::to_string(par.expertTp()) + " of " +
                                    std::to_string(par.tp) +
                                    " TP ranks: torchtitan's expert_tensor_parallel_degree is 1 "
                                    "or tp"});
        else if (par.ep % par.expertRanksPerCell() != 0)
            problems.push_back({"", "/parallelism/ep",
                                "an expert group inside a TP x CP cell: torchtitan's EP group "
                                "takes the cell's " +
                                    std::to_string(par.expertRanksPerCell()) +
                                    " folded ranks whole, so ep must be a multiple of them"});
        t << "expert_parallel_degree = " << par.ep << "\n";
        t << "expert_tensor_parallel_degree = " << par.expertTp() << "\n";
    }
    if (par.pp > 1) {
        if (plan.schedule.kind == ScheduleKind::ZeroBubble)
            notes.push_back("zero-bubble with one chunk per rank has no torchtitan schedule "
                            "(ZBVZeroBubble is V-shaped, InterleavedZeroBubble looped): written "
                            "as 1F1B; the schedule is kept in the scaleacross comment");
        t << "pipeline_parallel_schedule = \"" << scheduleName(plan.schedule.kind) << "\"\n";
        t << "pipeline_parallel_microbatch_size = " << plan.micro_batch_sequences << "\n";
        const int v = std::max(1, plan.schedule.virtual_stages);
        const std::vector<int> perStage =
            plan.placement && int(plan.placement->layers_per_stage.size()) == par.pp
                ? plan.placement->layers_per_stage
                : evenSplit(model.layers, par.pp);
        t << "module_fqns_per_model_part = [\n";
        int next = 0;
        const int nV = par.pp * v;
        for (int vs = 0; vs < nV; ++vs) {
            const int s = vs % par.pp, c = vs / par.pp;
            const int n = planChunkLayers(perStage[std::size_t(s)], v, c);
            t << "  [";
            bool firstName = true;
            auto put = [&](const std::string& name) {
                t << (firstName ? "" : ", ") << "\"" << name << "\"";
                firstName = false;
            };
            if (vs == 0)
                put("tok_embeddings");
            for (int i = 0; i < n; ++i)
                put("layers." + std::to_string(next++));
            if (vs == nV - 1) {
                put("norm");
                put("output");
            }
            t << "]" << (vs + 1 < nV ? "," : "") << "\n";
        }
        t << "]\n";
        if (next != model.layers)
            problems.push_back({"", "/placement/layers_per_stage",
                                "the stages hold " + std::to_string(next) + " layers, the model " +
                                    std::to_string(model.layers)});
    }
    t << "\n[activation_checkpoint]\n";
    switch (plan.recompute) {
    case Recompute::None:
        t << "mode = \"none\"\n";
        break;
    case Recompute::Selective:
        t << "mode = \"selective\"\nselective_ac_option = \"op\"\n";
        notes.push_back("recompute 'selective' is written as torchtitan's per-op selective AC "
                        "('op'): it saves matmul outputs and recomputes the rest, not only the "
                        "attention core");
        break;
    case Recompute::SelectiveOp:
        t << "mode = \"selective\"\nselective_ac_option = \"op\"\n";
        break;
    case Recompute::Full:
        t << "mode = \"full\"\n";
        break;
    }
    // Compiled elementwise ops are torch.compile's; eager is torchtitan's
    // default. Transformer Engine's fusion (fused) is the nearest torchtitan
    // has: compile, which leaves its complex rotary embedding eager.
    t << "\n[compile]\n";
    if (plan.elementwise != Elementwise::Eager)
        t << "enable = true\ncomponents = [\"model\", \"loss\"]\n";
    else
        t << "enable = false\n";
    // What torchtitan has no setting for.
    if (par.tp > 1 && !plan.sequence_parallel)
        notes.push_back("sequence_parallel false: torchtitan's TP always shards norms over the "
                        "sequence; kept in the scaleacross comment");
    if (plan.grad_reduce_bytes != 4)
        notes.push_back("grad_reduce_bytes " + std::to_string(plan.grad_reduce_bytes) +
                        ": torchtitan reduces gradients in float32 only "
                        "(mixed_precision_reduce); kept in the scaleacross comment");
    if ((plan.optimizer_moments != OptimizerMoments::Fp32 ||
         plan.master_weights != MasterWeights::Fp32) &&
        !bf16States)
        notes.push_back("optimizer_moments / master_weights: torchtitan's AdamW steps the fp32 "
                        "parameters FSDP2 shards, with fp32 moments (bf16 ones only with the "
                        "fused kernel, fused_opt_states_bf16); kept in the scaleacross comment");
    if (plan.schedule.latency_hiding)
        notes.push_back("latency_hiding: torchtitan's schedules have no extra warm-up forwards; "
                        "kept in the scaleacross comment");
    if (plan.placement && !plan.placement->runs.empty())
        notes.push_back("placement runs (which building holds which stages and replicas) are "
                        "not expressible: torchtitan takes ranks in launcher order; kept in the "
                        "scaleacross comment");
    if (!plan.collectives.empty())
        notes.push_back("collective algorithms per dimension are NCCL's choice in torchtitan; "
                        "kept in the scaleacross comment");
    if (!plan.link_technologies.empty())
        notes.push_back("per-link technologies and flows are not expressible; kept in the "
                        "scaleacross comment");
    if (par.pp > 1 && par.dp > 1 &&
        plan.rank_order != std::vector<Dim>{Dim::TP, Dim::CP, Dim::DP, Dim::PP})
        notes.push_back("rank order " + rankOrderText(plan.rank_order) +
                        ": torchtitan's mesh is pp, dp, cp, tp (outermost first), i.e. tp, cp, "
                        "dp, pp innermost first; the plan's order is kept in the scaleacross "
                        "comment");
    if (!plan.dp_overlap)
        notes.push_back("dp_overlap false: torchtitan always overlaps FSDP/DDP traffic with "
                        "compute; kept in the scaleacross comment");
    if (!plan.flash_attention)
        notes.push_back("flash_attention false: torchtitan's SDPA uses fused kernels; kept in "
                        "the scaleacross comment");
    return t.str();
}

} // namespace

Imported importTorchtitan(const std::string& tomlText, const ImportOptions& opt) {
    return importImpl(tomlText, opt);
}

Exported exportTorchtitan(const Model& model, const Plan& plan) {
    Exported ex;
    const Flavor* flavor = nullptr;
    for (const Flavor& f : currentFlavors())
        if (sameArchitecture(model, modelOf(f)))
            flavor = &f;
    std::vector<std::string> notes;
    if (!flavor) {
        std::ostringstream n;
        n << "the model is no torchtitan llama3 flavor: register flavor '" << model.name
          << "' with dim=" << model.hidden << ", n_layers=" << model.layers
          << ", n_heads=" << model.heads << ", n_kv_heads=" << model.kv_heads
          << ", vocab_size=" << model.vocab << " and an FFN hidden size of " << model.ffn_hidden;
        if (model.mlp != MlpKind::SwiGlu)
            n << " (GELU MLP: not torchtitan's llama3 SwiGLU block)";
        if (model.moe)
            n << " (MoE: " << model.moe->experts << " experts, top " << model.moe->top_k
              << ": a MoE train spec, not llama3)";
        if (model.tied_embeddings)
            n << " (tied embeddings)";
        n << "; the dimensions are in the scaleacross comment";
        notes.push_back(n.str());
    }
    const std::string text = body(model, plan, flavor ? flavor->name : nullptr, notes, ex.problems);

    // What the TOML alone reads back as; the comment holds the rest.
    json comment = json::object();
    if (!flavor) {
        json m = toJson(model);
        m.erase("format");
        m.erase("version");
        comment["model"] = m;
    }
    const std::string probe = text + kCommentTag + " " + comment.dump() + "\n";
    const Imported back = importTorchtitan(probe, ImportOptions{});
    const json want = toJson(plan);
    if (!back.plan) {
        // What the writer refused already says why; the read-back would name
        // the same setting again in torchtitan's keys.
        if (ex.problems.empty())
            for (const Diagnostic& d : back.problems)
                ex.problems.push_back(
                    {"", d.path, "torchtitan cannot take this plan: " + d.message});
    } else {
        const json got = toJson(*back.plan);
        for (const char* k : {"name", "rank_order", "collectives", "link_technologies",
                              "dp_overlap", "dp_bucket_mib", "flash_attention"})
            comment[k] = want.contains(k) ? want[k] : json();
        for (auto it = want.begin(); it != want.end(); ++it) {
            const std::string& k = it.key();
            if (k == "format" || k == "version" || comment.contains(k))
                continue;
            if (!got.contains(k) || got[k] != it.value())
                comment[k] = it.value();
        }
        if (!want.contains("placement") && got.contains("placement"))
            comment["placement"] = nullptr;
        // Written only when not the default; torchtitan's float8 reads back as
        // torchao's Float8Linear with current scaling.
        if (back.plan->fp8_linear != plan.fp8_linear) {
            comment["fp8_linear"] = toString(plan.fp8_linear);
            notes.push_back(std::string("fp8_linear ") + toString(plan.fp8_linear) +
                            ": torchtitan's float8 is torchao's Float8Linear; kept in the "
                            "scaleacross comment");
        }
        if (back.plan->fp8_recipe != plan.fp8_recipe)
            comment["fp8_recipe"] = toString(plan.fp8_recipe);
        // torchtitan's loss reads back as PyTorch's F.cross_entropy.
        if (back.plan->cross_entropy != plan.cross_entropy)
            comment["cross_entropy"] = toString(plan.cross_entropy);
        // Written only when false; the schedule decides it in torchtitan.
        if (back.plan->p2p_overlap != plan.p2p_overlap)
            comment["p2p_overlap"] = plan.p2p_overlap;
        // DTensor's TP keeps the gathered inputs; Megatron's second gather
        // in the backward has no torchtitan setting.
        if (back.plan->sequence_parallel_regather != plan.sequence_parallel_regather) {
            comment["sequence_parallel_regather"] = plan.sequence_parallel_regather;
            if (plan.parallelism.tp > 1 && plan.sequence_parallel)
                notes.push_back("sequence_parallel_regather true: torchtitan's TP (DTensor "
                                "ColwiseParallel) keeps the gathered inputs for wgrad instead of "
                                "gathering them again; kept in the scaleacross comment");
        }
        // Megatron-Core's combined 1F1B has no torchtitan counterpart.
        if (back.plan->ep_overlap != plan.ep_overlap) {
            comment["ep_overlap"] = plan.ep_overlap;
            notes.push_back("ep_overlap: Megatron-Core's all-to-all overlap has no torchtitan "
                            "setting; kept in the scaleacross comment");
        }
        // Megatron's fused accumulation has no torchtitan counterpart.
        if (back.plan->grad_accumulation_fusion != plan.grad_accumulation_fusion) {
            comment["grad_accumulation_fusion"] = plan.grad_accumulation_fusion;
            notes.push_back("grad_accumulation_fusion: Megatron's wgrad GEMMs accumulating into "
                            "the gradients have no torchtitan counterpart; kept in the "
                            "scaleacross comment");
        }
        // FSDP2 reduce-scatters and DDP all-reduces: a sharded optimizer
        // over all-reduced gradients has no torchtitan setting.
        if (back.plan->grad_reduce_scatter != plan.grad_reduce_scatter) {
            comment["grad_reduce_scatter"] = plan.grad_reduce_scatter;
            notes.push_back("grad_reduce_scatter false: torchtitan's FSDP2 reduce-scatters the "
                            "gradients (DDP all-reduces them, without a sharded optimizer); kept "
                            "in the scaleacross comment");
        }
        // FSDP2 copies; FSDP over views of flat buffers has no torchtitan
        // setting.
        if (back.plan->fsdp_copies != plan.fsdp_copies) {
            comment["fsdp_copies"] = plan.fsdp_copies;
            notes.push_back(plan.zero_stage == 3
                                ? "fsdp_copies false: torchtitan's FSDP2 copies its gathered "
                                  "parameters out and its gradients in; kept in the scaleacross "
                                  "comment"
                                : "fsdp_copies false: no effect without ZeRO-3; kept in the "
                                  "scaleacross comment");
        }
        // Transformer Engine's exchanges have no torchtitan setting: they read back
        // as PyTorch's.
        if (back.plan->cp_ring != plan.cp_ring) {
            comment["cp_ring"] = toString(plan.cp_ring);
            if (plan.parallelism.cp > 1)
                notes.push_back(std::string("cp_ring ") + toString(plan.cp_ring) +
                                ": torchtitan runs PyTorch's context_parallel ring; kept in the "
                                "scaleacross comment");
        }
        // Transformer Engine's fusion reads back as torch.compile's.
        if (back.plan->elementwise != plan.elementwise) {
            comment["elementwise"] = toString(plan.elementwise);
            notes.push_back(std::string("elementwise ") + toString(plan.elementwise) +
                            ": torchtitan's nearest is torch.compile, which leaves the complex "
                            "rotary embedding to eager kernels (elementwise compiled); kept in the "
                            "scaleacross comment");
        }
        // torchtitan has one rotary embedding (its complex form).
        if (back.plan->rope_fusion != plan.rope_fusion) {
            comment["rope_fusion"] = plan.rope_fusion;
            notes.push_back("rope_fusion false: torchtitan applies its own complex-form rotary "
                            "embedding; kept in the scaleacross comment");
        }
        // The kernel is written only when set; torchtitan's SDPA reads back as flash2.
        if (back.plan->attention_kernel != plan.attention_kernel) {
            comment["attention_kernel"] = toString(plan.attention_kernel);
            notes.push_back(std::string("attention_kernel ") + toString(plan.attention_kernel) +
                            ": torchtitan's SDPA runs FlashAttention-2 unless its cuDNN backend "
                            "is chosen in code; kept in the scaleacross comment");
        }
        static const std::set<std::string> explained = {"model",
                                                        "name",
                                                        "rank_order",
                                                        "collectives",
                                                        "link_technologies",
                                                        "dp_overlap",
                                                        "dp_bucket_mib",
                                                        "flash_attention",
                                                        "attention_kernel",
                                                        "elementwise",
                                                        "zero_stage",
                                                        "schedule",
                                                        "placement",
                                                        "sequence_parallel",
                                                        "sequence_parallel_regather",
                                                        "grad_reduce_bytes",
                                                        "fsdp_reshard_after_forward",
                                                        "fsdp_copies"};
        // A key a note above already explains (the note starts with it).
        const auto noted = [&notes](const std::string& key) {
            return std::any_of(notes.begin(), notes.end(), [&key](const std::string& n) {
                return n.size() > key.size() && n.compare(0, key.size(), key) == 0 &&
                       std::strchr(" :'", n[key.size()]) != nullptr;
            });
        };
        for (auto it = comment.begin(); it != comment.end(); ++it)
            if (!explained.count(it.key()) && !noted(it.key()))
                notes.push_back(it.key() + " " + it.value().dump() +
                                ": torchtitan cannot express it; kept in the scaleacross comment");
    }

    std::ostringstream out;
    out << "# torchtitan job config (TOML, torchtitan 2025-09-30 .. 2026-02-23) written by "
           "ScaleAcross Explorer\n";
    out << "# from plan " << tomlString(plan.name) << " and model " << tomlString(model.name)
        << ".\n";
    out << "# Add the data and tokenizer: [training] dataset / dataset_path, [model] "
           "hf_assets_path.\n";
    for (const std::string& n : notes)
        out << "# Note: " << n << "\n";
    out << "\n" << text << "\n";
    out << kCommentTag << " " << comment.dump() << "\n";
    ex.text = out.str();
    ex.notes = notes;
    ex.notes.push_back("add the data and tokenizer: [training] dataset / dataset_path, [model] "
                       "hf_assets_path");

    // The promise: reading this back gives the plan (and the model's dimensions).
    if (ex.problems.empty()) {
        const Imported again = importTorchtitan(ex.text, ImportOptions{});
        if (!again.plan || *again.plan != plan) {
            // Where they differ, for the report.
            std::string where;
            if (again.plan)
                for (const auto& op : nlohmann::json::diff(toJson(plan), toJson(*again.plan)))
                    where += (where.empty() ? " (at " : ", ") + op.value("path", std::string());
            ex.problems.push_back({"", "",
                                   "internal: the written TOML does not read back as "
                                   "the plan" +
                                       (where.empty() ? std::string() : where + ")")});
        }
    }
    return ex;
}

} // namespace sa::frameworks

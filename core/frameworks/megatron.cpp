// Megatron-LM: pretrain_gpt.py arguments and launch scripts in, arguments out.
// The mapping itself (defaults, refusals) is shared with NeMo (mapping.cpp).

#include "frameworks/framework.h"
#include "frameworks/mapping.h"

#include "formats/documents.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace sa::frameworks {

using namespace detail;

namespace {

using Vars = std::map<std::string, std::vector<std::string>>;

bool isNameStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isNameChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& w : v) {
        if (!s.empty())
            s += ' ';
        s += w;
    }
    return s;
}

// $(( ... )) with + - * / % and parentheses over integers and variables.
class Arithmetic {
public:
    Arithmetic(const std::string& s, const Vars& vars)
        : s_(s)
        , vars_(vars) {}
    std::optional<long long> eval() {
        auto v = sum();
        skip();
        if (!v || pos_ != s_.size())
            return std::nullopt;
        return v;
    }

private:
    void skip() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
            ++pos_;
    }
    std::optional<long long> sum() {
        auto v = product();
        while (v) {
            skip();
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) {
                const char op = s_[pos_++];
                auto w = product();
                if (!w)
                    return std::nullopt;
                v = op == '+' ? *v + *w : *v - *w;
            } else {
                break;
            }
        }
        return v;
    }
    std::optional<long long> product() {
        auto v = atom();
        while (v) {
            skip();
            if (pos_ < s_.size() && (s_[pos_] == '*' || s_[pos_] == '/' || s_[pos_] == '%')) {
                const char op = s_[pos_++];
                auto w = atom();
                if (!w || ((op == '/' || op == '%') && *w == 0))
                    return std::nullopt;
                v = op == '*' ? *v * *w : op == '/' ? *v / *w : *v % *w;
            } else {
                break;
            }
        }
        return v;
    }
    std::optional<long long> atom() {
        skip();
        if (pos_ >= s_.size())
            return std::nullopt;
        if (s_[pos_] == '(') {
            ++pos_;
            auto v = sum();
            skip();
            if (!v || pos_ >= s_.size() || s_[pos_] != ')')
                return std::nullopt;
            ++pos_;
            return v;
        }
        if (s_[pos_] == '$')
            ++pos_;
        if (pos_ < s_.size() && s_[pos_] == '{')
            ++pos_;
        std::size_t start = pos_;
        if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
            while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])))
                ++pos_;
            if (pos_ - start > 15)
                return std::nullopt;
            return std::stoll(s_.substr(start, pos_ - start));
        }
        while (pos_ < s_.size() && isNameChar(s_[pos_]))
            ++pos_;
        if (start == pos_)
            return std::nullopt;
        const std::string name = s_.substr(start, pos_ - start);
        if (pos_ < s_.size() && s_[pos_] == '}')
            ++pos_;
        auto it = vars_.find(name);
        if (it == vars_.end() || it->second.size() != 1)
            return std::nullopt;
        Arithmetic inner(it->second.front(), vars_);
        return inner.eval();
    }
    const std::string& s_;
    const Vars& vars_;
    std::size_t pos_ = 0;
};

// One logical shell line into words: quotes, backslashes, comments,
// $VAR / ${VAR} / ${VAR:-default} / ${ARRAY[@]} / $((arithmetic)).
// Unquoted expansions split on blanks; unknown variables stay as written.
class WordSplitter {
public:
    WordSplitter(const std::string& line, const Vars& vars)
        : s_(line)
        , vars_(vars) {}

    std::vector<std::string> run() {
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (c == '#' && !have_) {
                break;
            } else if (std::isspace(static_cast<unsigned char>(c))) {
                flush();
                ++i_;
            } else if (c == '\'') {
                const std::size_t end = s_.find('\'', i_ + 1);
                cur_ += s_.substr(i_ + 1, (end == std::string::npos ? s_.size() : end) - i_ - 1);
                have_ = true;
                i_ = end == std::string::npos ? s_.size() : end + 1;
            } else if (c == '"') {
                ++i_;
                have_ = true;
                while (i_ < s_.size() && s_[i_] != '"') {
                    if (s_[i_] == '\\' && i_ + 1 < s_.size() &&
                        std::string("\"\\$`").find(s_[i_ + 1]) != std::string::npos) {
                        cur_ += s_[i_ + 1];
                        i_ += 2;
                    } else if (s_[i_] == '$') {
                        expand(true);
                    } else {
                        cur_ += s_[i_++];
                    }
                }
                ++i_;
            } else if (c == '\\') {
                if (i_ + 1 < s_.size())
                    cur_ += s_[i_ + 1];
                have_ = true;
                i_ += 2;
            } else if (c == '$') {
                expand(false);
            } else {
                cur_ += c;
                have_ = true;
                ++i_;
            }
        }
        flush();
        return std::move(words_);
    }

private:
    void flush() {
        if (have_)
            words_.push_back(cur_);
        cur_.clear();
        have_ = false;
    }
    void emit(const std::vector<std::string>& parts, bool quoted, bool array) {
        if (quoted && !array) {
            cur_ += joined(parts);
            have_ = true;
            return;
        }
        // Split into fields; the first joins the current word, the last stays open.
        std::vector<std::string> fields;
        for (const auto& part : parts) {
            if (quoted) {
                fields.push_back(part);
                continue;
            }
            std::istringstream in(part);
            std::string w;
            while (in >> w)
                fields.push_back(w);
        }
        for (std::size_t k = 0; k < fields.size(); ++k) {
            if (k > 0)
                flush();
            cur_ += fields[k];
            have_ = true;
        }
    }
    void expand(bool quoted) {
        const std::size_t start = i_;
        ++i_; // '$'
        if (s_.compare(i_, 2, "((") == 0) {
            const std::size_t end = s_.find("))", i_ + 2);
            if (end != std::string::npos) {
                const std::string expr = s_.substr(i_ + 2, end - i_ - 2);
                i_ = end + 2;
                if (auto v = Arithmetic(expr, vars_).eval()) {
                    emit({std::to_string(*v)}, quoted, false);
                    return;
                }
                literal(start);
                return;
            }
        }
        std::string name, fallback;
        bool braced = false, array = false, hasFallback = false;
        if (i_ < s_.size() && s_[i_] == '{') {
            braced = true;
            const std::size_t end = s_.find('}', i_);
            if (end == std::string::npos) {
                literal(start);
                return;
            }
            std::string body = s_.substr(i_ + 1, end - i_ - 1);
            i_ = end + 1;
            std::size_t k = 0;
            while (k < body.size() && isNameChar(body[k]))
                ++k;
            name = body.substr(0, k);
            std::string rest = body.substr(k);
            if (rest == "[@]" || rest == "[*]") {
                array = true;
            } else if (rest.rfind(":-", 0) == 0 || rest.rfind("-", 0) == 0) {
                hasFallback = true;
                fallback = rest.substr(rest[0] == ':' ? 2 : 1);
            } else if (!rest.empty()) {
                name.clear();
            }
        } else if (i_ < s_.size() && isNameStart(s_[i_])) {
            const std::size_t b = i_;
            while (i_ < s_.size() && isNameChar(s_[i_]))
                ++i_;
            name = s_.substr(b, i_ - b);
        }
        (void)braced;
        if (name.empty()) {
            literal(start);
            return;
        }
        auto it = vars_.find(name);
        if (it != vars_.end()) {
            emit(array ? it->second : std::vector<std::string>{joined(it->second)}, quoted, array);
            return;
        }
        if (hasFallback) {
            emit({fallback}, quoted, false);
            return;
        }
        literal(start);
    }
    void literal(std::size_t start) {
        if (i_ <= start)
            i_ = start + 1;
        cur_ += s_.substr(start, i_ - start);
        have_ = true;
    }

    const std::string& s_;
    const Vars& vars_;
    std::size_t i_ = 0;
    std::string cur_;
    bool have_ = false;
    std::vector<std::string> words_;
};

bool assignmentWord(const std::string& w, std::string& name, std::string& value) {
    const std::size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0 || !isNameStart(w[0]))
        return false;
    for (std::size_t k = 0; k < eq; ++k)
        if (!isNameChar(w[k]))
            return false;
    name = w.substr(0, eq);
    value = w.substr(eq + 1);
    return true;
}

std::string trim(const std::string& s) {
    std::size_t a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos)
        return {};
    std::size_t b = s.find_last_not_of(" \t\r");
    return s.substr(a, b - a + 1);
}

bool endsWith(const std::string& s, const char* suffix) {
    const std::size_t n = std::char_traits<char>::length(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

Settings settingsFromArgs(const std::vector<std::string>& args) {
    Settings s;
    s.dialect = Dialect::Megatron;
    for (std::size_t i = 0; i < args.size();) {
        const std::string& w = args[i];
        if (w.rfind("--", 0) != 0 || w.size() < 3) {
            s.ignored.push_back({w, "", "not an argument (a word without --name before it)"});
            ++i;
            continue;
        }
        RawSetting raw;
        std::string name = w.substr(2);
        const std::size_t eq = name.find('=');
        if (eq != std::string::npos) {
            raw.value = name.substr(eq + 1);
            name = name.substr(0, eq);
            ++i;
        } else {
            std::vector<std::string> values;
            ++i;
            while (i < args.size() && args[i].rfind("--", 0) != 0)
                values.push_back(args[i++]);
            raw.bare = values.empty();
            raw.value = raw.bare ? "true" : joined(values);
        }
        raw.spelled = "--" + name;
        std::string key = name;
        std::replace(key.begin(), key.end(), '-', '_');
        s.set(key, std::move(raw));
    }
    return s;
}

// The launcher's GPUs: torchrun / torch.distributed.run|launch options.
struct Launcher {
    std::optional<std::int64_t> nnodes, nproc;
    std::string nnodesText, nprocText;
    bool seen = false;
    // Exported environment variables the import reads (Transformer Engine's
    // attention backend switches), by name.
    std::map<std::string, std::string> env;
};

void readLauncher(const std::vector<std::string>& words, std::size_t end, Launcher& l,
                  Imported& report) {
    for (std::size_t i = 0; i < end; ++i) {
        std::string w = words[i];
        std::string value;
        bool hasValue = false;
        const std::size_t eq = w.find('=');
        if (w.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = w.substr(eq + 1);
            w = w.substr(0, eq);
            hasValue = true;
        }
        const bool nodes = w == "--nnodes";
        const bool procs = w == "--nproc-per-node" || w == "--nproc_per_node";
        if (!nodes && !procs) {
            if (w.rfind("--", 0) == 0) {
                if (!hasValue && i + 1 < end && words[i + 1].rfind("-", 0) != 0)
                    value = words[++i];
                report.ignored.push_back(
                    {w, value, "launcher setting (rendezvous, node rank, ...): not modelled"});
            }
            continue;
        }
        if (!hasValue && i + 1 < end) {
            value = words[++i];
            hasValue = true;
        }
        l.seen = true;
        std::int64_t v = 0;
        bool ok = hasValue && !value.empty() &&
                  std::all_of(value.begin(), value.end(),
                              [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
                  value.size() < 10;
        if (ok)
            v = std::stoll(value);
        if (!ok || v < 1) {
            report.problems.push_back(
                {"", w,
                 "must be a positive integer (a fixed size, not a range), got '" + value + "'"});
            continue;
        }
        if (nodes) {
            l.nnodes = v;
            l.nnodesText = value;
        } else {
            l.nproc = v;
            l.nprocText = value;
        }
        report.mapped.push_back({w, value, "plan:/parallelism/dp (world size)"});
    }
}

Imported importWords(const std::vector<std::string>& args, const ImportOptions& opt,
                     const Launcher* launcher, const std::optional<Carried>& carried,
                     const Imported& pre) {
    Settings s = settingsFromArgs(args);
    if (launcher)
        for (const auto& [name, value] : launcher->env) {
            RawSetting r;
            r.spelled = "export " + name;
            r.value = value;
            s.set(name, std::move(r));
        }
    s.mapped = pre.mapped;
    s.problems = pre.problems;
    for (auto& d : s.problems)
        d.file = opt.file;
    s.ignored.insert(s.ignored.begin(), pre.ignored.begin(), pre.ignored.end());
    ResolveInput in;
    in.opt = opt;
    if (opt.world_size > 0) {
        in.world = opt.world_size;
        in.worldSetting = "from the import options";
    } else if (launcher && launcher->seen) {
        in.world = launcher->nnodes.value_or(1) * launcher->nproc.value_or(1);
        in.worldSetting = "torchrun --nnodes " + (launcher->nnodes ? launcher->nnodesText : "1") +
                          " x --nproc-per-node " + (launcher->nproc ? launcher->nprocText : "1");
    } else if (carried && carried->world_size > 0) {
        in.world = carried->world_size;
        in.worldSetting = "from the # scaleacross line";
    }
    in.vocab = opt.vocab > 0 ? opt.vocab : (carried ? carried->vocab : 0);
    in.carried = carried;
    in.name = documentName(opt, "megatron");
    in.description = "Imported from Megatron-LM arguments" +
                     (opt.file.empty() ? std::string() : " (" + opt.file + ")");
    return resolve(s, in);
}

} // namespace

Imported importMegatronArgs(const std::vector<std::string>& args, const ImportOptions& opt) {
    return importWords(args, opt, nullptr, std::nullopt, {});
}

Imported importMegatronScript(const std::string& text, const ImportOptions& opt) {
    Imported pre;
    Vars vars;
    std::optional<Carried> carried;
    Launcher launcher;
    std::vector<std::string> args;
    bool commandSeen = false;

    // Physical lines, with backslash-newline continuations joined.
    std::vector<std::string> lines;
    {
        std::string cur;
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) {
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            if (!line.empty() && line.back() == '\\') {
                cur += line.substr(0, line.size() - 1);
                cur += ' ';
                continue;
            }
            lines.push_back(cur + line);
            cur.clear();
        }
        if (!cur.empty())
            lines.push_back(cur);
    }
    std::vector<std::string> bareArgs; // lines of arguments without a command
    for (std::size_t li = 0; li < lines.size(); ++li) {
        std::string line = trim(lines[li]);
        if (line.rfind(kCarriedPrefix, 0) == 0) {
            carried = parseCarried(line.substr(std::char_traits<char>::length(kCarriedPrefix)),
                                   opt.file, pre.problems);
            continue;
        }
        // NAME=( words ... ) may span lines.
        std::string name, value;
        std::string head = line.rfind("export ", 0) == 0 ? trim(line.substr(7)) : line;
        const std::size_t open = head.find("=(");
        if (open != std::string::npos && open > 0 &&
            std::all_of(head.begin(), head.begin() + long(open), isNameChar) &&
            isNameStart(head[0])) {
            // Each line on its own, so that a comment ends only its line.
            std::vector<std::string> body{head.substr(open + 2)};
            while (body.back().find(')') == std::string::npos && li + 1 < lines.size())
                body.push_back(lines[++li]);
            body.back() = body.back().substr(0, body.back().rfind(')'));
            std::vector<std::string> items;
            for (const auto& part : body) {
                std::vector<std::string> w = WordSplitter(part, vars).run();
                items.insert(items.end(), w.begin(), w.end());
            }
            vars[head.substr(0, open)] = std::move(items);
            continue;
        }
        std::vector<std::string> words = WordSplitter(line, vars).run();
        if (words.empty())
            continue;
        std::size_t w0 = words[0] == "export" ? 1 : 0;
        bool allAssign = w0 < words.size();
        for (std::size_t k = w0; k < words.size(); ++k)
            if (!assignmentWord(words[k], name, value))
                allAssign = false;
        if (allAssign) {
            for (std::size_t k = w0; k < words.size(); ++k) {
                assignmentWord(words[k], name, value);
                vars[name] = {value};
                if (w0 == 1 && readsEnvironment(name))
                    launcher.env[name] = value;
            }
            continue;
        }
        auto py = std::find_if(words.begin(), words.end(),
                               [](const std::string& w) { return endsWith(w, ".py"); });
        if (py != words.end()) {
            if (commandSeen) {
                pre.ignored.push_back({*py, "", "a second Python command: the first one is read"});
                continue;
            }
            commandSeen = true;
            readLauncher(words, std::size_t(py - words.begin()), launcher, pre);
            args.assign(py + 1, words.end());
            continue;
        }
        if (words[0].rfind("--", 0) == 0)
            bareArgs.insert(bareArgs.end(), words.begin(), words.end());
    }
    if (!commandSeen)
        args = bareArgs;
    return importWords(args, opt, &launcher, carried, pre);
}

namespace {

struct Arg {
    std::string flag;
    std::string value; // empty: a bare flag
    bool list = false; // value holds several words (argparse nargs "*")
};

std::vector<Arg> megatronArgs(const Model& m, const Plan& p, std::vector<std::string>& notes) {
    const Parallelism& par = p.parallelism;
    std::vector<Arg> a;
    auto add = [&](const char* flag, std::string value = {}) {
        a.push_back({flag, std::move(value)});
    };
    auto num = [](std::int64_t v) { return std::to_string(v); };
    add("--num-layers", num(m.layers));
    add("--hidden-size", num(m.hidden));
    add("--ffn-hidden-size", num(m.ffn_hidden));
    add("--num-attention-heads", num(m.heads));
    if (m.kv_heads != m.heads) {
        add("--group-query-attention");
        add("--num-query-groups", num(m.kv_heads));
    }
    if (m.head_dim != 0 && m.head_dim != m.hidden / m.heads)
        add("--kv-channels", num(m.head_dim));
    if (m.mla) {
        add("--multi-latent-attention");
        if (m.mla->q_lora_rank > 0)
            add("--q-lora-rank", num(m.mla->q_lora_rank));
        add("--kv-lora-rank", num(m.mla->kv_lora_rank));
        add("--qk-head-dim", num(m.mla->qk_head_dim));
        add("--qk-pos-emb-head-dim", num(m.mla->rope_head_dim));
        add("--v-head-dim", num(m.mla->v_head_dim));
    }
    if (m.mtp_layers > 0)
        add("--mtp-num-layers", num(m.mtp_layers));
    if (m.sliding_window) {
        add("--window-size", num(m.sliding_window->size - 1) + ",0");
        if (m.sliding_window->full_every > 0)
            add("--window-attn-skip-freq", num(m.sliding_window->full_every));
    }
    if (m.mlp == MlpKind::SwiGlu)
        add("--swiglu");
    if (!m.tied_embeddings)
        add("--untie-embeddings-and-output-weights");
    add("--tokenizer-type", "NullTokenizer");
    add("--vocab-size", num(m.vocab));
    if (const std::int64_t d = identityDivisor(m.vocab, par.tp); d > 0 && d != 128)
        add("--make-vocab-size-divisible-by", num(d));
    add("--seq-length", num(p.sequence_length));
    add("--max-position-embeddings", num(p.sequence_length));
    add("--micro-batch-size", num(p.micro_batch_sequences));
    add("--global-batch-size", num(p.global_batch_sequences));
    add("--tensor-model-parallel-size", num(par.tp));
    add("--pipeline-model-parallel-size", num(par.pp));
    if (p.schedule.kind == ScheduleKind::Interleaved && p.schedule.virtual_stages > 1) {
        add("--num-virtual-stages-per-pipeline-rank", num(p.schedule.virtual_stages));
        // Interleaving overlaps P2P by default; blocking is
        // --no-overlap-p2p-communication, which validate_args refuses at pp 2
        // (there the plan's setting is carried). 1F1B always blocks.
        if (!p.p2p_overlap && par.pp > 2)
            add("--no-overlap-p2p-communication");
    }
    add("--context-parallel-size", num(par.cp));
    if (par.cp > 1 && (p.cp_ring == CpRing::TeA2a || p.cp_ring == CpRing::TeAllGather))
        add("--cp-comm-type", p.cp_ring == CpRing::TeA2a ? "a2a" : "all_gather");
    if (par.cp > 1 && p.cp_ring == CpRing::TeP2p && p.cp_a2a_size > 1) {
        add("--cp-comm-type", "a2a+p2p");
        a.push_back({"--hierarchical-context-parallel-sizes",
                     num(p.cp_a2a_size) + " " + num(par.cp / p.cp_a2a_size), true});
    }
    if (par.ep > 1)
        add("--expert-model-parallel-size", num(par.ep));
    if (par.expertTp() != par.tp)
        add("--expert-tensor-parallel-size", num(par.expertTp()));
    if (p.sequence_parallel && par.tp > 1)
        add("--sequence-parallel");
    if (p.rank_order == megatronRankOrder(true))
        add("--use-tp-pp-dp-mapping");
    switch (p.zero_stage) {
    case 0:
        break;
    case 1:
        add("--use-distributed-optimizer");
        if (p.dpShard() < par.dp)
            add("--num-distributed-optimizer-instances", num(p.dpReplicas()));
        break;
    case 2:
        add("--use-megatron-fsdp");
        add("--data-parallel-sharding-strategy", "optim_grads");
        add("--ckpt-format", "fsdp_dtensor");
        break;
    default:
        // FSDP that copies is Megatron's torch FSDP2 (one stage, untied
        // embeddings: Megatron asserts both), FSDP of views Megatron-FSDP;
        // elsewhere the plan's fsdp_copies is carried in the # scaleacross
        // line.
        if (p.fsdp_copies && par.pp == 1 && !m.tied_embeddings) {
            add("--use-torch-fsdp2");
            if (p.fsdp_reshard_after_forward == FsdpReshard::Never)
                add("--torch-fsdp2-no-reshard-after-forward");
            add("--ckpt-format", "torch_dist");
        } else {
            add("--use-megatron-fsdp");
            add("--data-parallel-sharding-strategy", "optim_grads_params");
            add("--ckpt-format", "fsdp_dtensor");
        }
        break;
    }
    if (p.dp_overlap) {
        add("--overlap-grad-reduce");
        const double def = defaultBucketMib(std::int64_t(par.dp) * par.cp, p.grad_reduce_bytes);
        if (p.dp_bucket_mib != def) {
            const double elems = p.dp_bucket_mib * 1024.0 * 1024.0 / p.grad_reduce_bytes;
            add("--ddp-bucket-size", num(std::int64_t(std::llround(elems))));
        }
    }
    if (p.grad_reduce_bytes == 2)
        add("--grad-reduce-in-bf16");
    // The precision-aware optimizer: 16-bit masters and bf16 moments (no
    // masters at all has no Megatron spelling: carried).
    const bool halfMasters = p.master_weights == MasterWeights::Half;
    const bool bf16Moments = p.optimizer_moments == OptimizerMoments::Bf16;
    if (halfMasters || bf16Moments)
        add("--use-precision-aware-optimizer");
    if (halfMasters)
        add("--main-params-dtype", "fp16");
    if (bf16Moments) {
        add("--exp-avg-dtype", "bf16");
        add("--exp-avg-sq-dtype", "bf16");
    }
    // Megatron's dropout defaults to 0.1: written whenever the plan's differs.
    const Plan megatron = frameworkDefaults(TrainingFramework::MegatronCore);
    if (p.hidden_dropout != megatron.hidden_dropout)
        add("--hidden-dropout", numberText(p.hidden_dropout));
    if (p.attention_dropout != megatron.attention_dropout)
        add("--attention-dropout", numberText(p.attention_dropout));
    add("--bf16");
    if (m.dtype == DType::FP8) {
        add("--fp8-format", "hybrid");
        add("--fp8-recipe", p.fp8_recipe == Fp8Recipe::Delayed ? "delayed" : "tensorwise");
        if (p.fp8_param_gather)
            add("--fp8-param-gather");
    }
    if (p.cross_entropy == CrossEntropy::MegatronFused || p.cross_entropy == CrossEntropy::Te)
        add("--cross-entropy-loss-fusion");
    if (p.cross_entropy == CrossEntropy::Te)
        add("--cross-entropy-fusion-impl", "te");
    if (p.recompute == Recompute::Selective || p.recompute == Recompute::SelectiveOp) {
        // (torchtitan's per-op policy has no Megatron counterpart: the
        // nearest is Megatron's selective recompute.)
        add("--recompute-granularity", "selective");
        if (p.recompute == Recompute::Selective &&
            p.recompute_modules != kDefaultRecomputeModules) {
            const std::string words = recomputeModulesText(p.recompute_modules, " ");
            // (No module at all is the bare flag, which the import reads as
            // a missing value: written as the one module, then carried.)
            a.push_back({"--recompute-modules", words.empty() ? "core_attn" : words, true});
        }
    } else if (p.recompute == Recompute::Full) {
        add("--recompute-granularity", "full");
        add("--recompute-method", toString(p.recompute_method));
        add("--recompute-num-layers", std::to_string(p.recompute_layers));
    }
    add("--transformer-impl", "transformer_engine");
    if (p.tp_comm_overlap)
        add("--tp-comm-overlap");
    if (!p.grad_accumulation_fusion)
        add("--no-gradient-accumulation-fusion");
    if (!p.rope_fusion)
        add("--no-rope-fusion");
    if (p.cuda_graphs) {
        add("--cuda-graph-impl", "transformer_engine");
        // A dropless MoE layer cannot be captured whole (Megatron-Core's MoE
        // README): the attention part only, as it says.
        if (m.moe && !m.moe->padded())
            add("--cuda-graph-modules", "attn");
    }
    if (p.ep_overlap)
        add("--overlap-moe-expert-parallel-comm");
    if (!p.flash_attention)
        add("--attention-backend", "unfused");
    else if (p.attention_kernel == AttentionKernel::Cudnn)
        add("--attention-backend", "fused");
    else if (p.attention_kernel == AttentionKernel::Flash2 ||
             p.attention_kernel == AttentionKernel::Flash3)
        add("--attention-backend", "flash");

    // Layers per pipeline stage: Megatron splits evenly, or counts the
    // embedding / loss as a layer, or sets the first and last stage apart,
    // or takes a per-chunk layout.
    const StageSplit split = megatronStageSplit(m, p);
    for (const auto& [flag, value] : stageSplitSettings(
             split,
             {"--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split",
              "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers", ""}))
        add(flag.c_str(), value);
    if (split.kind == StageSplit::Kind::Layout) {
        add("--pipeline-model-parallel-layout", megatronLayout(m, split));
        // The layout sets the virtual stages itself.
        std::erase_if(
            a, [](const Arg& x) { return x.flag == "--num-virtual-stages-per-pipeline-rank"; });
    }

    if (m.moe) {
        const MoeConfig& moe = *m.moe;
        add("--num-experts", num(moe.experts));
        add("--moe-router-topk", num(moe.top_k));
        add("--moe-ffn-hidden-size", num(moe.expert_ffn_hidden));
        if (par.ep > 1) {
            add("--moe-token-dispatcher-type",
                p.ep_dispatcher == EpDispatcher::AllToAll ? "alltoall" : "flex");
            if (p.ep_dispatcher == EpDispatcher::HybridEp)
                add("--moe-flex-dispatcher-backend", "hybridep");
            // The per-backend spelling, which the releases before
            // --moe-flex-dispatcher-num-sms read and later ones route to it.
            if (p.ep_dispatcher != EpDispatcher::AllToAll && p.ep_dispatcher_sms > 0)
                add(p.ep_dispatcher == EpDispatcher::HybridEp ? "--moe-hybridep-num-sms"
                                                              : "--moe-deepep-num-sms",
                    num(p.ep_dispatcher_sms));
        }
        if (moe.router_groups > 0) {
            add("--moe-router-num-groups", num(moe.router_groups));
            add("--moe-router-group-topk", num(moe.router_group_topk));
        }
        if (moe.shared_experts > 0)
            add("--moe-shared-expert-intermediate-size",
                num(std::int64_t(moe.shared_experts) * moe.expert_ffn_hidden));
        if (moe.dense_layers > 0)
            add("--moe-layer-freq", "'([0]*" + num(moe.dense_layers) + "+[1]*" +
                                        num(m.layers - moe.dense_layers) + ")'");
        if (moe.capacity_factor != 1.0 || moe.padded())
            add("--moe-expert-capacity-factor", numberText(moe.capacity_factor));
        if (moe.padded())
            add("--moe-pad-expert-input-to-capacity");
    }
    notes.push_back("add the data and tokenizer arguments (--data-path, --tokenizer-type, "
                    "--tokenizer-model ...) for a real run: NullTokenizer keeps the vocabulary "
                    "size only");
    return a;
}

std::vector<std::string> argWords(const std::vector<Arg>& args) {
    std::vector<std::string> w;
    for (const auto& a : args) {
        w.push_back(a.flag);
        if (a.list) {
            std::istringstream in(a.value);
            for (std::string word; in >> word;)
                w.push_back(word);
        } else if (!a.value.empty()) {
            std::string v = a.value;
            if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'')
                v = v.substr(1, v.size() - 2);
            w.push_back(v);
        }
    }
    return w;
}

} // namespace

Exported exportMegatron(const Model& model, const Plan& plan) {
    Exported out;
    std::vector<Arg> args = megatronArgs(model, plan, out.notes);
    if (!out.problems.empty())
        return out;
    ImportOptions opt;
    opt.world_size = plan.parallelism.gpus();
    Imported again = importMegatronArgs(argWords(args), opt);
    if (!again.ok()) {
        for (const auto& d : again.problems)
            out.problems.push_back({"", d.path, "Megatron-LM cannot run this plan: " + d.message});
        return out;
    }
    Carried carried;
    carried.world_size = plan.parallelism.gpus();
    carryDifferences(model, plan, again, carried);
    for (auto& n : carriedNotes(carried, again, "Megatron-LM"))
        out.notes.push_back(std::move(n));

    const std::int64_t world = plan.parallelism.gpus();
    const std::int64_t perNode = world % 8 == 0 ? 8 : world;
    // A launch script: run on every node with NODE_RANK, MASTER_ADDR and
    // MASTER_PORT set, as Megatron-LM's examples/ scripts are.
    std::ostringstream t;
    t << "#!/usr/bin/env bash\n";
    t << "# Megatron-LM launch: model '" << model.name << "', plan '" << plan.name << "', " << world
      << " GPUs (" << world / perNode << " nodes x " << perNode << ").\n";
    t << "# Run on every node with NODE_RANK, MASTER_ADDR and MASTER_PORT set; add the data\n"
         "# arguments. The # scaleacross line keeps what Megatron-LM has no argument for.\n";
    for (const auto& n : out.notes)
        t << "# note: " << n << "\n";
    t << "torchrun --nnodes " << world / perNode << " --nproc-per-node " << perNode
      << " --node-rank \"${NODE_RANK:-0}\" \\\n"
         "  --master-addr \"${MASTER_ADDR:-localhost}\" --master-port \"${MASTER_PORT:-6000}\" \\\n"
         "  pretrain_gpt.py \\\n";
    for (std::size_t i = 0; i < args.size(); ++i) {
        t << "  " << args[i].flag;
        if (!args[i].value.empty()) {
            // Quoted where the shell would read a character itself (a layout's '|').
            const bool quote = !args[i].list && args[i].value.find_first_of(
                                                    "|&;<>()$`\\\"' *?[#~") != std::string::npos;
            t << ' ' << (quote ? "'" + args[i].value + "'" : args[i].value);
        }
        t << (i + 1 < args.size() ? " \\\n" : "\n");
    }
    t << carriedLine(carried) << "\n";
    out.text = t.str();
    return out;
}

} // namespace sa::frameworks

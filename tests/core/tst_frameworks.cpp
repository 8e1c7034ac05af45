// Megatron-LM and NeMo configurations in and out (core/frameworks): the
// published runs' launch configurations import to their documents, every
// sample and published plan survives export then import, and what the
// documents cannot express is refused naming the setting.

#include "formats/documents.h"
#include "frameworks/framework.h"

#include "../common/files.h"
#include "../common/samples.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QtTest>

#include <map>
#include <set>
#include <string>
#include <vector>

using nlohmann::json;
using namespace sa::frameworks;

namespace {

// A small GPT as Megatron-LM arguments on `nodes` 8-GPU nodes, TP 2.
QString smallMegatron(int nodes) {
    return QStringLiteral("torchrun --nnodes %1 --nproc-per-node 8 pretrain_gpt.py --num-layers 16 "
                          "--hidden-size 1024 --num-attention-heads 16 --seq-length 2048 "
                          "--micro-batch-size 1 --global-batch-size 64 --vocab-size 32000 --bf16 "
                          "--tensor-model-parallel-size 2 ")
        .arg(nodes);
}

// The same as a NeMo launcher training config on one node, with `model`
// lines added.
QString smallNemo(const QString& model) {
    return QStringLiteral("trainer: {num_nodes: 1, devices: 8, precision: bf16}\n"
                          "model:\n  micro_batch_size: 1\n  global_batch_size: 16\n"
                          "  tensor_model_parallel_size: 2\n  encoder_seq_length: 2048\n"
                          "  num_layers: 8\n  hidden_size: 1024\n  ffn_hidden_size: 4096\n"
                          "  num_attention_heads: 16\n"
                          "  tokenizer: {library: megatron, type: GPT2BPETokenizer}\n") +
           model;
}

QString dataPath(const QString& rel) {
    return sa::testing::sourcePath(QStringLiteral("tests/data/frameworks/") + rel);
}

std::string readText(const QString& path) {
    return sa::testing::readAll(path).toStdString();
}

QByteArray problems(const std::vector<sa::Diagnostic>& ds) {
    QByteArray out;
    for (const auto& d : ds)
        out += QByteArray::fromStdString(d.str()) + '\n';
    return out;
}

// A Megatron script or a NeMo YAML, by the framework that reads it.
Imported importText(Framework f, const std::string& text, const ImportOptions& opt = {}) {
    return f == Framework::Nemo ? importNemo(text, opt) : importMegatronScript(text, opt);
}

Imported importFile(Framework f, const QString& rel, const ImportOptions& base = {}) {
    ImportOptions opt = base;
    opt.file = rel.toStdString();
    return importText(f, readText(dataPath(rel)), opt);
}

// A document's values by "/key", or "/key/sub" one level into objects (whole
// arrays), without name and description.
std::map<std::string, json> leaves(const json& doc) {
    std::map<std::string, json> out;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (it.key() == "name" || it.key() == "description")
            continue;
        if (it.value().is_object() && !it.value().empty()) {
            for (auto sub = it.value().begin(); sub != it.value().end(); ++sub)
                out["/" + it.key() + "/" + sub.key()] = sub.value();
        } else {
            out["/" + it.key()] = it.value();
        }
    }
    return out;
}

// "plan:/x" or "model:/x" of every value that differs.
std::set<std::string> differing(const char* doc, const json& got, const json& want) {
    std::set<std::string> out;
    auto g = leaves(got), w = leaves(want);
    for (const auto& [k, v] : w)
        if (!g.count(k) || g[k] != v)
            out.insert(std::string(doc) + ":" + k);
    for (const auto& [k, v] : g)
        if (!w.count(k))
            out.insert(std::string(doc) + ":" + k);
    return out;
}

// Where the faithful import of a run's launch configuration differs from how
// the published row was encoded, and why. The importer follows the framework;
// these are the encodings' simplifications.
struct Difference {
    const char* pointer;
    const char* why;
};
const Difference kBucket{
    "plan:/dp_bucket_mib",
    "Megatron's default gradient bucket is max(40M, 1M x dp x cp) parameters "
    "(distributed_data_parallel.py), in fp32 152.6 MiB or more; the encoding kept the documents' "
    "default 256 MiB"};
const Difference kSpAtTp1{
    "plan:/sequence_parallel",
    "at tp 1 Megatron turns sequence parallelism off (arguments.py validate_args; NeMo likewise); "
    "the encoding kept it on"};
const Difference kVocabPadding{
    "model:/vocab",
    "Megatron pads the tokenizer's vocabulary to a multiple of 128 x tp (vocab_size_with_padding); "
    "the encoding used the unpadded size, or GPT-2's 51,200 padded at tp 8"};
const Difference kNemotronRecompute{
    "plan:/recompute",
    "the launcher's nemotron_340b.yaml recomputes selectively; the encoding assumed the "
    "no-recompute default of the Llama files"};

struct PublishedRow {
    std::string fixture;   // under tests/data/frameworks/
    std::string documents; // folder of the plan and model, under tests/validation/
    std::string plan;      // file names
    std::string model;
    std::int64_t vocab; // the tokenizer's size when the configuration names only a file
    std::vector<Difference> differences;
    const char* refused = nullptr; // the setting a faithful import refuses
};

std::vector<PublishedRow> publishedRows() {
    const auto B = kBucket, S = kSpAtTp1, V = kVocabPadding;
    const char* pub = "published/";
    std::vector<PublishedRow> rows;
    // Megatron-LM SC'21 (Narayanan et al., Table 1).
    for (const char* size : {"1.7b", "3.6b", "7.5b", "18.4b", "39.1b", "76.1b", "145.6b", "310.1b",
                             "529.6b", "1008.0b"}) {
        const std::string s = size;
        PublishedRow row{
            "megatron/megatron-gpt-" + s + ".sh", "", "plan-megatron-gpt-" + s + ".json",
            "model-megatron-gpt-" + s + ".json",  0,  {}};
        if (s == "1.7b" || s == "3.6b" || s == "7.5b")
            row.differences.push_back(V); // tp 1, 2, 4: GPT-2's 50,257 pads to less than 51,200
        rows.push_back(row);
    }
    auto add = [&](const std::string& fixture, const std::string& plan, const std::string& model,
                   std::int64_t vocab, std::vector<Difference> d, const char* refused = nullptr) {
        rows.push_back({fixture, pub, plan, model, vocab, std::move(d), refused});
    };
    // Korthikanti et al. 2022 (DP = 1: no gradient reduce, so no bucket).
    for (const char* size : {"22b", "175b", "530b", "1t"})
        for (const char* variant : {"present", "fullrecompute"}) {
            const std::string name = std::string("korthikanti-gpt-") + size + "-" + variant;
            add("megatron/" + name + ".sh", "plans/" + name + ".json",
                std::string("models/korthikanti-gpt-") + size + ".json", 0, {});
        }
    // Megatron-Core r0.8.0 weak scaling.
    for (const char* size : {"1.7b", "7.1b", "16b", "32b", "70b", "119b", "177b", "314b", "462b"}) {
        const std::string name = std::string("mcore08-gpt-") + size;
        std::vector<Difference> d{B};
        if (std::string(size) == "1.7b")
            d.push_back(S);
        add("megatron/" + name + ".sh", "plans/" + name + ".json", "models/" + name + ".json", 0,
            d);
    }
    // Megatron-Bridge 25.11, as Megatron-LM arguments.
    add("megatron/mbridge2511-llama3-8b-fsdp8.sh", "plans/mbridge2511-llama3-8b-fsdp8.json",
        "models/llama3-8b-fp8.json", 0, {B, S});
    add("megatron/mbridge2511-llama3-70b-64.sh", "plans/mbridge2511-llama3-70b-64.json",
        "models/llama3-70b-fp8.json", 0, {B, V});
    add("megatron/mbridge2511-llama31-405b-1024.sh", "plans/mbridge2511-llama31-405b-1024.json",
        "models/llama31-405b-fp8.json", 0, {B, V});
    // Qwen3's heads are 128 wide, twice hidden / heads (--kv-channels 128: the model's head_dim).
    add("megatron/mbridge2511-qwen3-30b-a3b-16.sh", "plans/mbridge2511-qwen3-30b-a3b-16.json",
        "models/qwen3-30b-a3b-fp8.json", 0, {B, S});
    // Megatron-Bridge 25.09 (v0.1.0rc4 presets): token drop, capacity 1 padded.
    add("megatron/mbridge2509-qwen3-30b-a3b-16.sh", "plans/mbridge2509-qwen3-30b-a3b-16.json",
        "models/qwen3-30b-a3b-fp8-tokendrop.json", 0, {B, S});
    // EP 64 with expert TP 1 over tp 2 x dp 64: the plan's etp 1.
    add("megatron/mbridge2509-deepseek-v3-1024.sh", "plans/mbridge2509-deepseek-v3-1024.json",
        "models/deepseek-v3-fp8.json", 0, {});
    // Megatron-Bridge 26.04.01 (v0.4.2 presets): encoded with Megatron's rank order, its
    // sequence parallelism off at tp 1 and Bridge's 128M-parameter bucket (256 MiB in BF16).
    add("megatron/mbridge2604-llama3-70b-64.sh", "plans/mbridge2604-llama3-70b-64.json",
        "models/llama3-70b-fp8.json", 0, {V});
    add("megatron/mbridge2604-llama31-405b-1024.sh", "plans/mbridge2604-llama31-405b-1024.json",
        "models/llama31-405b-fp8.json", 0, {V});
    add("megatron/mbridge2604-qwen3-30b-a3b-16.sh", "plans/mbridge2604-qwen3-30b-a3b-16.json",
        "models/qwen3-30b-a3b-fp8.json", 0, {});
    // GPT-OSS 120B: sliding-window attention on every other layer.
    add("megatron/mbridge2604-gpt-oss-120b-64.sh", "plans/mbridge2604-gpt-oss-120b-64.json",
        "models/gpt-oss-120b-bf16.json", 0, {B});
    // Megatron-Bridge main: the 2026-07-25 HybridEP A/B (EP overlap off and on).
    for (const char* suffix : {"", "-epoverlap"}) {
        const std::string name = std::string("mbridge-main-qwen3-30b-a3b-bf16-16") + suffix;
        add("megatron/" + name + ".sh", "plans/" + name + ".json", "models/qwen3-30b-a3b-bf16.json",
            0, {});
    }
    // EP 32 with expert TP 1 over tp 2 x dp 16: the plan's etp 1. Megatron pads the
    // vocabulary to a multiple of 128 x tp.
    add("megatron/mbridge2604-qwen3-235b-a22b-256.sh", "plans/mbridge2604-qwen3-235b-a22b-256.json",
        "models/qwen3-235b-a22b-fp8.json", 0, {V});
    // NeMo 24.07 (launcher YAML). Llama 2 and Nemotron name a sentencepiece file: the
    // vocabulary size comes with the import options.
    add("nemo/nemo2407-gpt3-5b-64.yaml", "plans/nemo2407-gpt3-5b-64.json",
        "models/gpt3-5b-fp8.json", 0, {B, S, V});
    add("nemo/nemo2407-gpt3-20b-64.yaml", "plans/nemo2407-gpt3-20b-64.json",
        "models/gpt3-20b-fp8.json", 0, {B, V});
    add("nemo/nemo2407-gpt3-175b-128.yaml", "plans/nemo2407-gpt3-175b-128.json",
        "models/gpt3-175b-fp8.json", 0, {B, V});
    add("nemo/nemo2407-gpt3-175b-512.yaml", "plans/nemo2407-gpt3-175b-512.json",
        "models/gpt3-175b-fp8.json", 0, {B, V});
    add("nemo/nemo2407-llama2-7b-8.yaml", "plans/nemo2407-llama2-7b-8.json",
        "models/llama2-7b-fp8.json", 32000, {B, S});
    add("nemo/nemo2407-llama2-13b-16.yaml", "plans/nemo2407-llama2-13b-16.json",
        "models/llama2-13b-fp8.json", 32000, {B, S});
    add("nemo/nemo2407-llama2-70b-64.yaml", "plans/nemo2407-llama2-70b-64.json",
        "models/llama2-70b-fp8.json", 32000, {B, V});
    add("nemo/nemo2407-llama3-8b-8.yaml", "plans/nemo2407-llama3-8b-8.json",
        "models/llama3-8b-fp8.json", 0, {B, S});
    add("nemo/nemo2407-llama3-70b-64.yaml", "plans/nemo2407-llama3-70b-64.json",
        "models/llama3-70b-fp8.json", 0, {B, V});
    add("nemo/nemo2407-nemotron4-340b-128.yaml", "plans/nemo2407-nemotron4-340b-128.json",
        "models/nemotron4-340b-fp8.json", 256000, {B, kNemotronRecompute});
    for (const char* size : {"8b", "22b"}) {
        const std::string name = std::string("nemo2407-nemotron-") + size + "-64";
        add("nemo/" + name + ".yaml", "plans/" + name + ".json",
            std::string("models/nemotron-") + size + "-fp8.json", 256000, {B});
    }
    // NeMo long-sequence table (LLAMA2-7B FP8, its rows at CP 1 and with CP).
    for (const char* k : {"4k", "8k"}) {
        const std::string name = std::string("nemo-longctx-llama2-7b-") + k;
        add("nemo/" + name + ".yaml", "plans/" + name + ".json", "models/llama2-7b-fp8.json", 32000,
            {B, S});
    }
    for (const char* k : {"16k", "32k"}) {
        const std::string name = std::string("nemo-longctx-llama2-7b-") + k;
        add("nemo/" + name + ".yaml", "plans/" + name + ".json", "models/llama2-7b-fp8.json", 32000,
            {B});
    }
    for (const char* k : {"64k", "128k", "256k", "512k", "1024k"}) {
        const std::string name = std::string("nemo-longctx-llama2-7b-") + k;
        add("nemo/" + name + ".yaml", "plans/" + name + ".json", "models/llama2-7b-fp8.json", 32000,
            {B, V});
    }
    // NVIDIA's DGX Cloud benchmarking recipe for NeMo's GPT-3 175B, two releases, BF16 and
    // FP8 at 128 to 2048 GPUs: the release's YAML with its launch overrides, as encoded.
    for (const char* release : {"dgxc2411", "dgxc2502"})
        for (const char* dtype : {"bf16", "fp8"})
            for (const char* gpus : {"128", "256", "512", "1024", "2048"}) {
                const std::string name = std::string(release) + "-gpt3-175b-" + dtype + "-" + gpus;
                add("nemo/" + name + ".yaml", "plans/" + name + ".json",
                    std::string("models/gpt3-175b-nemo-") + dtype + ".json", 50257, {});
            }
    // Its Llama 3.1 recipe at v25.02: 8B on 8 to 128 GPUs, 70B on 64 to 2048.
    for (const char* dtype : {"bf16", "fp8"}) {
        for (const char* gpus : {"8", "16", "32", "64", "128"}) {
            const std::string name = std::string("dgxc2502-llama31-8b-") + dtype + "-" + gpus;
            add("nemo/" + name + ".yaml", "plans/" + name + ".json",
                std::string("models/llama3-8b-") + dtype + ".json", 128256, {});
        }
        for (const char* gpus : {"64", "128", "256", "512", "1024", "2048"}) {
            const std::string name = std::string("dgxc2502-llama31-70b-") + dtype + "-" + gpus;
            add("nemo/" + name + ".yaml", "plans/" + name + ".json",
                std::string("models/llama31-70b-nemo-") + dtype + ".json", 128256, {});
        }
    }
    // Its Llama 3.1 405B rows at v25.02, on 32 to 2304 GPUs (configure.sh shrinks the model
    // below 576: 7, 21 or 42 layers), with the GPT-2 tokenizer configure.sh passes.
    const std::pair<const char*, const char*> l405Scales[] = {
        {"32", "7"}, {"96", "21"}, {"192", "42"}, {"576", "126"}, {"1152", "126"}, {"2304", "126"}};
    for (const char* dtype : {"bf16", "fp8"})
        for (const auto& [gpus, layers] : l405Scales) {
            const std::string name = std::string("dgxc2502-llama31-405b-") + dtype + "-" + gpus;
            add("nemo/" + name + ".yaml", "plans/" + name + ".json",
                std::string("models/llama31-405b-dgxc-") + layers + "l-" + dtype + ".json", 50257,
                {});
        }
    // Its Nemotron-4 recipe at v25.02: 15B on 16 to 2048 GPUs, 340B on 128 to 2048 (CP 2 in
    // BF16), each YAML with configure.sh's overrides in place.
    for (const char* dtype : {"bf16", "fp8"}) {
        for (const char* gpus : {"16", "32", "64", "128", "256", "512", "1024", "2048"}) {
            const std::string name = std::string("dgxc2502-nemotron4-15b-") + dtype + "-" + gpus;
            add("nemo/" + name + ".yaml", "plans/" + name + ".json",
                std::string("models/nemotron4-15b-") + dtype + ".json", 256000, {});
        }
        for (const char* gpus : {"128", "256", "512", "1024", "2048"}) {
            const std::string name = std::string("dgxc2502-nemotron4-340b-") + dtype + "-" + gpus;
            add("nemo/" + name + ".yaml", "plans/" + name + ".json",
                std::string("models/nemotron4-340b-") + dtype + ".json", 256000, {});
        }
    }
    // Its Grok-1 recipe (MoE, token drop): configure.sh's layer count at each scale.
    const std::pair<const char*, const char*> grokScales[] = {
        {"8", "2"},    {"16", "4"},   {"32", "4"},    {"64", "8"},   {"128", "16"},
        {"256", "32"}, {"512", "64"}, {"1024", "64"}, {"2048", "64"}};
    for (const char* dtype : {"bf16", "fp8"})
        for (const auto& [gpus, layers] : grokScales) {
            const std::string name = std::string("dgxc2502-grok1-") + dtype + "-" + gpus;
            add("nemo/" + name + ".yaml", "plans/" + name + ".json",
                std::string("models/grok1-") + layers + "l-" + dtype + ".json", 128256, {});
        }
    return rows;
}

json documentJson(const QString& path) {
    return json::parse(readText(path));
}

// Every plan of the published runs with its model, and the sample scenarios.
struct PlanCase {
    std::string label;
    sa::Model model;
    sa::Plan plan;
};

// Everything the frameworks cannot say at once: placement runs, link
// technologies, collectives, zero-bubble with latency hiding, a custom rank
// order, FSDP that never reshards under PP, uneven stages, an odd bucket; an
// MoE model with dense and shared experts.
PlanCase everythingCase() {
    sa::Model m;
    m.name = "moe";
    m.layers = 24;
    m.hidden = 2048;
    m.ffn_hidden = 8192;
    m.heads = 16;
    m.kv_heads = 4;
    m.vocab = 50000;
    m.mlp = sa::MlpKind::Gelu;
    m.tied_embeddings = true;
    m.moe = sa::MoeConfig{16, 2, 1408, 1, 1, 1.25};
    sa::Plan p = sa::testing::makePlan(4, 4, 16, 256, sa::Recompute::Selective, "everything");
    p.parallelism.cp = 2;
    p.parallelism.ep = 8;
    p.zero_stage = 3;
    p.fsdp_reshard_after_forward = sa::FsdpReshard::Never;
    p.sequence_parallel = false;
    p.schedule.kind = sa::ScheduleKind::ZeroBubble;
    p.schedule.latency_hiding = true;
    p.rank_order = {sa::Dim::CP, sa::Dim::TP, sa::Dim::PP, sa::Dim::DP};
    p.placement = sa::Placement{{{0, 1, 0, 15, "B1"}, {2, 3, 0, 15, "B2"}}, {5, 7, 6, 6}};
    p.collectives = {{sa::Dim::DP, sa::CollectiveAlgo::Hierarchical},
                     {sa::Dim::TP, sa::CollectiveAlgo::Ring}};
    p.link_technologies = {{"B1-B2", {"tcp", 64}}};
    p.dp_bucket_mib = 12.5;
    p.grad_reduce_bytes = 2;
    p.flash_attention = false;
    p.cuda_graphs = true; // padded experts (capacity 1.25): the whole layer
    return {"everything", m, p};
}

// GPipe, a vocabulary tp does not divide, the embedding and loss counted as
// layers, FP8, no overlap.
PlanCase gpipeCase() {
    sa::Model m;
    m.name = "odd";
    m.layers = 26;
    m.hidden = 1024;
    m.ffn_hidden = 2816;
    m.heads = 8;
    m.kv_heads = 8;
    m.vocab = 50257;
    m.dtype = sa::DType::FP8;
    m.tied_embeddings = false;
    sa::Plan p = sa::testing::makePlan(2, 4, 2, 64, sa::Recompute::Full, "gpipe");
    p.schedule.kind = sa::ScheduleKind::GPipe;
    p.placement = sa::Placement{{}, {6, 7, 7, 6}};
    p.dp_overlap = false;
    return {"gpipe", m, p};
}

PlanCase torchFsdpCase() {
    sa::Model m = gpipeCase().model;
    sa::Plan p = sa::testing::makePlan(2, 1, 8, 64, sa::Recompute::None, "fsdp2");
    p.zero_stage = 3;
    p.fsdp_reshard_after_forward = sa::FsdpReshard::Always;
    p.rank_order = {sa::Dim::TP, sa::Dim::CP, sa::Dim::DP, sa::Dim::PP};
    return {"torch-fsdp2", m, p};
}

// Pipeline P2P each way: interleaved and blocking (Megatron:
// --no-overlap-p2p-communication, which validate_args refuses at pp 2, where
// it is carried), 1F1B overlapped (Megatron's 1F1B cannot: carried).
std::vector<PlanCase> p2pCases() {
    std::vector<PlanCase> out;
    for (int pp : {2, 4}) {
        PlanCase c = gpipeCase();
        c.plan.name = "interleaved-blocking-pp" + std::to_string(pp);
        c.plan.placement.reset();
        c.model.layers = 24;
        c.plan.parallelism.pp = pp;
        c.plan.parallelism.dp = 8 / pp;
        c.plan.schedule = {sa::ScheduleKind::Interleaved, 2, false};
        c.plan.p2p_overlap = false;
        out.push_back(c);
    }
    PlanCase o = gpipeCase();
    o.plan.name = "1f1b-overlapped";
    o.plan.schedule = {sa::ScheduleKind::OneFOneB, 1, false};
    o.plan.p2p_overlap = true;
    out.push_back(o);
    return out;
}

std::vector<PlanCase> allPlans() {
    std::vector<PlanCase> out{everythingCase(), gpipeCase(), torchFsdpCase()};
    for (const PlanCase& c : p2pCases())
        out.push_back(c);
    QDir samples(sa::testing::sourcePath(QStringLiteral("sample_clusters/scenarios")));
    for (const QString& name :
         samples.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
        sa::Scenario s = sa::testing::loadSampleScenario(name.toStdString());
        out.push_back({"sample " + name.toStdString(), s.model, s.plan});
    }
    for (const char* index :
         {"tests/validation/runs.json", "tests/validation/published/runs.json"}) {
        const QString indexPath = sa::testing::sourcePath(QLatin1String(index));
        const QString dir = QFileInfo(indexPath).path();
        const json runs = documentJson(indexPath);
        for (const auto& run : runs.at("runs")) {
            auto m = sa::loadModelFile(
                (dir + '/' + QString::fromStdString(run.at("model").get<std::string>()))
                    .toStdString());
            auto p = sa::loadPlanFile(
                (dir + '/' + QString::fromStdString(run.at("plan").get<std::string>()))
                    .toStdString());
            if (!m.ok() || !p.ok()) {
                qWarning("cannot load the documents of %s", run.at("id").dump().c_str());
                std::abort();
            }
            out.push_back({"run " + run.at("id").get<std::string>(), *m.value, *p.value});
        }
    }
    return out;
}

} // namespace

class TestFrameworks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void names();
    void publishedRuns_data();
    void publishedRuns();
    void roundTrip_data();
    void roundTrip();
    void refusals_data();
    void refusals();
    void scriptExpansion();
    void headSizeFromKvChannels();
    void latentAttention();
    void multiTokenPrediction();
    void moeTokenDrop();
    void expertTensorParallel();
    void slidingWindow();
    void moeDispatchAndGroups();
    void lossKernels_data();
    void lossKernels();
    void attentionBackendEnvironment_data();
    void attentionBackendEnvironment();
    void everySettingReported();
    void dropoutImported_data();
    void dropoutImported();
    void megatronDefaults();
    void p2pOverlapImported_data();
    void p2pOverlapImported();
    void cudaGraphsImported_data();
    void cudaGraphsImported();
    void cpCommTypeImported_data();
    void cpCommTypeImported();
    void fp8ParamGatherImported_data();
    void fp8ParamGatherImported();
    void gradAccumulationFusionImported_data();
    void gradAccumulationFusionImported();
    void ropeFusionImported_data();
    void ropeFusionImported();
    void fsdpCopiesImported_data();
    void fsdpCopiesImported();
    void partialDistributedOptimizerIsHsdp();
    void outerHsdpExportsItsGroups();
    void optimizerPrecisionImported_data();
    void optimizerPrecisionImported();
    void exportText();
    void malformedInputs_data();
    void malformedInputs();
};

void TestFrameworks::names() {
    for (Framework f : {Framework::Megatron, Framework::Nemo, Framework::Torchtitan})
        QCOMPARE(frameworkFromString(toString(f)), std::optional<Framework>(f));
    QCOMPARE(QString(toString(Framework::Megatron)), QString("megatron"));
    QCOMPARE(QString(toString(Framework::Nemo)), QString("nemo"));
    QCOMPARE(QString(toString(Framework::Torchtitan)), QString("torchtitan"));
    QVERIFY(!frameworkFromString("Megatron"));
}

void TestFrameworks::publishedRuns_data() {
    QTest::addColumn<int>("row");
    const auto rows = publishedRows();
    for (std::size_t i = 0; i < rows.size(); ++i)
        QTest::newRow(rows[i].fixture.c_str()) << int(i);
}

void TestFrameworks::publishedRuns() {
    QFETCH(int, row);
    const PublishedRow r = publishedRows()[std::size_t(row)];
    const QString fixture = QString::fromStdString(r.fixture);
    const Framework f = fixture.startsWith("nemo/") ? Framework::Nemo : Framework::Megatron;
    ImportOptions opt;
    opt.vocab = r.vocab;
    const Imported got = importFile(f, fixture, opt);
    if (r.refused) {
        QVERIFY2(!got.ok(), "a faithful import refuses this run");
        bool named = false;
        for (const auto& d : got.problems)
            named = named || d.path == r.refused;
        QVERIFY2(named, problems(got.problems).constData());
        return;
    }
    QVERIFY2(got.ok(), problems(got.problems).constData());
    const QString docs = sa::testing::sourcePath(QStringLiteral("tests/validation/") +
                                                 QString::fromStdString(r.documents));
    // The published documents in canonical form (defaults written out).
    const auto planDoc = sa::loadPlanFile((docs + QString::fromStdString(r.plan)).toStdString());
    const auto modelDoc = sa::loadModelFile((docs + QString::fromStdString(r.model)).toStdString());
    QVERIFY(planDoc.ok() && modelDoc.ok());
    const json wantPlan = sa::toJson(*planDoc.value);
    const json wantModel = sa::toJson(*modelDoc.value);
    std::set<std::string> diff = differing("plan", sa::toJson(*got.plan), wantPlan);
    for (const auto& d : differing("model", sa::toJson(*got.model), wantModel))
        diff.insert(d);
    std::set<std::string> listed;
    for (const auto& d : r.differences)
        listed.insert(d.pointer);
    for (const auto& d : diff) {
        const std::string k = d.substr(0, d.find(':'));
        const json& g = k == "plan" ? sa::toJson(*got.plan) : sa::toJson(*got.model);
        QVERIFY2(listed.count(d),
                 ("unexpected difference " + d + "; imported:\n" + g.dump(1)).c_str());
    }
    for (const auto& d : r.differences)
        QVERIFY2(diff.count(d.pointer),
                 (std::string("listed difference not seen: ") + d.pointer).c_str());
}

void TestFrameworks::roundTrip_data() {
    QTest::addColumn<int>("index");
    QTest::addColumn<int>("framework");
    const auto plans = allPlans();
    for (std::size_t i = 0; i < plans.size(); ++i)
        for (Framework f : {Framework::Megatron, Framework::Nemo})
            QTest::newRow((std::string(toString(f)) + " " + plans[i].label).c_str())
                << int(i) << int(f);
}

void TestFrameworks::roundTrip() {
    QFETCH(int, index);
    QFETCH(int, framework);
    const PlanCase c = allPlans()[std::size_t(index)];
    const Framework f = Framework(framework);
    const Exported ex = exportPlan(f, c.model, c.plan);
    // NeMo 1.x's FSDP is torch FSDP, which it refuses with FP8
    // (megatron_base_model.py _validate_and_override_config).
    if (f == Framework::Nemo && c.plan.zero_stage >= 2 && c.model.dtype == sa::DType::FP8) {
        QVERIFY(!ex.ok());
        QVERIFY2(QString::fromStdString(ex.problems.front().message).contains("FP8"),
                 problems(ex.problems).constData());
        return;
    }
    // Stages whose layers do not split into their chunks: only Megatron's
    // per-chunk layout says so.
    if (f == Framework::Nemo && !ex.ok() &&
        QString::fromStdString(ex.problems.front().message)
            .contains("--pipeline-model-parallel-layout")) {
        const auto& lps = c.plan.placement->layers_per_stage;
        const int v = c.plan.schedule.virtual_stages;
        QVERIFY(v > 1);
        QVERIFY(lps.front() % v != 0 || lps.back() % v != 0);
        return;
    }
    QVERIFY2(ex.ok(), problems(ex.problems).constData());
    ImportOptions opt;
    opt.file = "exported";
    const Imported back = importText(f, ex.text, opt);
    QVERIFY2(back.ok(), (problems(back.problems) + QByteArray::fromStdString(ex.text)).constData());
    sa::Model m = *back.model;
    sa::Plan p = *back.plan;
    m.name = c.model.name;
    m.description = c.model.description;
    p.name = c.plan.name;
    p.description = c.plan.description;
    QVERIFY2(m == c.model, (sa::toJson(m).dump() + "\n" + sa::toJson(c.model).dump()).c_str());
    QVERIFY2(p == c.plan,
             (sa::toJson(p).dump() + "\n" + sa::toJson(c.plan).dump() + "\n" + ex.text).c_str());
}

void TestFrameworks::refusals_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("setting");
    QTest::addColumn<QString>("message");
    const QString base = smallMegatron(2) + "--pipeline-model-parallel-size 2 ";
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    QTest::newRow("block recompute of no layer")
        << M
        << base + "--recompute-granularity full --recompute-method block --recompute-num-layers 0"
        << "--recompute-num-layers"
        << "at least 1";
    QTest::newRow("8-bit Adam moments")
        << M << base + "--use-precision-aware-optimizer --exp-avg-dtype fp8 --exp-avg-sq-dtype fp8"
        << "--exp-avg-dtype"
        << "8-bit moments are not modelled";
    QTest::newRow("moments of two precisions")
        << M << base + "--use-precision-aware-optimizer --exp-avg-dtype bf16"
        << "--exp-avg-dtype"
        << "both 16-bit or both fp32";
    QTest::newRow("block-scaled FP8") << M << base + "--fp8-format hybrid --fp8-recipe mxfp8"
                                      << "--fp8-recipe"
                                      << "block-scaled FP8";
    QTest::newRow("full recompute without a method")
        << M << base + "--recompute-granularity full --recompute-num-layers 1"
        << "--recompute-granularity"
        << "recompute method";
    QTest::newRow("degrees do not divide the world") << M << base + "--context-parallel-size 3"
                                                     << "--tensor-model-parallel-size"
                                                     << "not a multiple";
    QTest::newRow("layers do not divide the pipeline")
        << M << QString(base).replace("--num-layers 16", "--num-layers 15") << "--num-layers"
        << "not divisible";
    QTest::newRow("malformed degree") << M << base + "--tensor-model-parallel-size two"
                                      << "--tensor-model-parallel-size"
                                      << "must be an integer";
    QTest::newRow("non-integer batch") << M << base + "--micro-batch-size 1.5"
                                       << "--micro-batch-size"
                                       << "must be an integer";
    QTest::newRow("flag with a value") << M << base + "--sequence-parallel yes"
                                       << "--sequence-parallel"
                                       << "takes no value";
    QTest::newRow("CUDA graph implementation")
        << M << base + "--cuda-graph-impl sometimes"
        << "--cuda-graph-impl"
        << "must be none, local, transformer_engine or full_iteration";
    QTest::newRow("head size") << M << base + "--kv-channels 0"
                               << "--kv-channels"
                               << "must be at least 1";
    QTest::newRow("moe every other layer") << M << base + "--num-experts 8 --moe-layer-freq 2"
                                           << "--moe-layer-freq"
                                           << "not expressible";
    QTest::newRow("allgather dispatcher")
        << M << base + "--num-experts 8 --expert-model-parallel-size 2"
        << "--moe-token-dispatcher-type"
        << "allgather";
    QTest::newRow("hierarchical context parallelism without sizes")
        << M
        << QString(base).replace("--nnodes 2", "--nnodes 4") +
               "--context-parallel-size 4 --cp-comm-type a2a+p2p"
        << "--cp-comm-type"
        << "a2a+p2p needs --hierarchical-context-parallel-sizes";
    QTest::newRow("hierarchical context parallelism sizes")
        << M
        << QString(base).replace("--nnodes 2", "--nnodes 4") +
               "--context-parallel-size 4 --cp-comm-type a2a+p2p "
               "--hierarchical-context-parallel-sizes 2 3"
        << "--hierarchical-context-parallel-sizes"
        << "whose product is the context-parallel size (4), got '2 3'";
    QTest::newRow("context parallelism per layer")
        << M
        << QString(base).replace("--nnodes 2", "--nnodes 4") +
               "--context-parallel-size 2 --cp-comm-type p2p a2a"
        << "--cp-comm-type"
        << "per layer";
    QTest::newRow("fp32") << M << QString(base).replace("--bf16", "") << "--bf16"
                          << "fp32";
    QTest::newRow("no world size") << M
                                   << QString(base).replace("torchrun --nnodes 2 "
                                                            "--nproc-per-node 8 pretrain_gpt.py",
                                                            "")
                                   << "world size"
                                   << "unknown";
    const QString yaml = smallNemo("  pipeline_model_parallel_size: 2\n"
                                   "  optim: {name: distributed_fused_adam}\n");
    QTest::newRow("nemo block recompute of no layer")
        << N
        << yaml + "  activations_checkpoint_granularity: full\n"
                  "  activations_checkpoint_method: block\n  activations_checkpoint_num_layers: 0\n"
        << "model.activations_checkpoint_num_layers"
        << "at least 1";
    QTest::newRow("nemo recompute per pipeline stage")
        << N << yaml + "  activations_checkpoint_layers_per_pipeline: 2\n"
        << "model.activations_checkpoint_layers_per_pipeline"
        << "not expressible";
    QTest::newRow("nemo malformed batch")
        << N << QString(yaml).replace("micro_batch_size: 1", "micro_batch_size: 1.5")
        << "model.micro_batch_size"
        << "must be an integer";
    QTest::newRow("nemo degrees") << N << QString(yaml).replace("devices: 8", "devices: 6")
                                  << "model.tensor_model_parallel_size"
                                  << "not a multiple";
    QTest::newRow("nemo hybrid fsdp")
        << N << yaml + "  fsdp: true\n  fsdp_sharding_strategy: hybrid\n"
        << "model.fsdp_sharding_strategy"
        << "not expressible";
    QTest::newRow("nemo fsdp with fp8")
        << N << yaml + "  fsdp: true\n  fsdp_sharding_strategy: full\n  fp8: true\n"
        << "model.fsdp"
        << "FP8";
    QTest::newRow("nemo fp32") << N << QString(yaml).replace("precision: bf16", "precision: 32")
                               << "trainer.precision"
                               << "fp32";
    QTest::newRow("nemo backend switch") << N << yaml + "env_vars: {NVTE_FUSED_ATTN: off}\n"
                                         << "env_vars.NVTE_FUSED_ATTN"
                                         << "must be an integer";
    QTest::newRow("megatron backend switch")
        << M << "export NVTE_FLASH_ATTN=no\n" + base << "export NVTE_FLASH_ATTN"
        << "must be an integer";
    // P2P overlap only where Megatron-Core runs it (schedules.py raises otherwise).
    QTest::newRow("nemo p2p overlap without interleaving")
        << N << yaml + "  overlap_p2p_comm: true\n  batch_p2p_comm: false\n"
        << "model.overlap_p2p_comm"
        << "Non-interleaved";
    QTest::newRow("nemo p2p overlap with batched p2p")
        << N << yaml + "  virtual_pipeline_model_parallel_size: 2\n  overlap_p2p_comm: true\n"
        << "model.overlap_p2p_comm"
        << "batch_p2p_comm";
    QTest::newRow("p2p overlap on and off")
        << M << base + "--overlap-p2p-communication --no-overlap-p2p-communication"
        << "--overlap-p2p-communication"
        << "together";
}

void TestFrameworks::refusals() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(QString, setting);
    QFETCH(QString, message);
    ImportOptions opt;
    opt.file = "input";
    const Imported got = importText(Framework(framework), text.toStdString(), opt);
    QVERIFY(!got.ok());
    bool found = false;
    for (const auto& d : got.problems)
        found = found || (d.file == "input" && d.path == setting.toStdString() &&
                          QString::fromStdString(d.message).contains(message));
    QVERIFY2(found, problems(got.problems).constData());
    // Only a missing world size asks the caller for one (the explorer then does).
    QCOMPARE(got.needs_world_size, setting == QLatin1String("world size"));
}

void TestFrameworks::headSizeFromKvChannels() {
    // --kv-channels sets the head width apart from hidden / heads (Qwen3); the
    // exports write it back, and leave it out where it is hidden / heads.
    const std::string script =
        "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 16 --hidden-size "
        "1024 --num-attention-heads 16 --kv-channels 128 --seq-length 2048 --micro-batch-size 1 "
        "--global-batch-size 64 --vocab-size 32000 --bf16 --tensor-model-parallel-size 2";
    ImportOptions opt;
    opt.file = "qwen-like.sh";
    const Imported got = importMegatronScript(script, opt);
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(got.model->head_dim, 128);
    QCOMPARE(got.model->headDim(), 128);
    for (Framework f : {Framework::Megatron, Framework::Nemo}) {
        const Exported ex = exportPlan(f, *got.model, *got.plan);
        QVERIFY2(ex.ok(), problems(ex.problems).constData());
        const std::string want = f == Framework::Nemo ? "kv_channels: 128" : "--kv-channels 128";
        QVERIFY2(ex.text.find(want) != std::string::npos, ex.text.c_str());
    }
    // The same width as hidden / heads is the default: nothing to set.
    const Imported same =
        importMegatronScript(std::string(script).replace(script.find("128"), 3, "64"), opt);
    QVERIFY2(same.ok(), problems(same.problems).constData());
    QCOMPARE(same.model->head_dim, 0);
    QVERIFY(exportPlan(Framework::Megatron, *same.model, *same.plan).text.find("--kv-channels") ==
            std::string::npos);
}

void TestFrameworks::latentAttention() {
    // --multi-latent-attention with DeepSeek-V3's widths; what is left out
    // takes Megatron's argparse default (--qk-pos-emb-head-dim 64).
    const std::string script =
        "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py --num-layers 8 --hidden-size "
        "7168 --num-attention-heads 128 --seq-length 4096 --micro-batch-size 1 "
        "--global-batch-size 64 --vocab-size 129280 --bf16 --tensor-model-parallel-size 8 "
        "--sequence-parallel --multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 "
        "--qk-head-dim 128 --v-head-dim 128 --group-query-attention --num-query-groups 8";
    ImportOptions opt;
    opt.file = "mla.sh";
    const Imported got = importMegatronScript(script, opt);
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QVERIFY(got.model->mla);
    QCOMPARE(*got.model->mla, (sa::MlaConfig{1536, 512, 128, 64, 128}));
    QCOMPARE(got.model->kv_heads, 128); // every head its own key and value
    for (Framework f : {Framework::Megatron, Framework::Nemo}) {
        const Exported ex = exportPlan(f, *got.model, *got.plan);
        QVERIFY2(ex.ok(), problems(ex.problems).constData());
        const Imported again = importText(f, ex.text);
        QVERIFY2(again.ok(), problems(again.problems).constData());
        QCOMPARE(again.model->mla, got.model->mla);
    }
    // The MoE all-to-all overlap flag (Megatron-Core combined 1F1B) reads
    // into ep_overlap and is written back by both exports.
    const Imported overlapped =
        importMegatronScript(script + " --overlap-moe-expert-parallel-comm", opt);
    QVERIFY2(overlapped.ok(), problems(overlapped.problems).constData());
    QVERIFY(overlapped.plan->ep_overlap);
    QVERIFY(!got.plan->ep_overlap);
    for (Framework f : {Framework::Megatron, Framework::Nemo}) {
        const Exported ex = exportPlan(f, *overlapped.model, *overlapped.plan);
        QVERIFY2(ex.ok(), problems(ex.problems).constData());
        const Imported again = importText(f, ex.text);
        QVERIFY2(again.ok(), problems(again.problems).constData());
        QVERIFY(again.plan->ep_overlap);
    }
    // Without the flag the latent settings are reported and not used.
    const std::string plain = "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py "
                              "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 "
                              "--seq-length 2048 --micro-batch-size 1 --global-batch-size 64 "
                              "--vocab-size 32000 --bf16 --kv-lora-rank 512";
    const Imported without = importMegatronScript(plain, opt);
    QVERIFY2(without.ok(), problems(without.problems).constData());
    QVERIFY(!without.model->mla);
    bool ignored = false;
    for (const auto& i : without.ignored)
        ignored = ignored || (i.setting == "--kv-lora-rank" &&
                              i.why.find("multi-latent attention") != std::string::npos);
    QVERIFY(ignored);
}

void TestFrameworks::multiTokenPrediction() {
    // --mtp-num-layers (Megatron-Core; Bridge's and NeMo's mtp_num_layers)
    // reads into the model's mtp_layers and is written back; the loss's
    // weight costs nothing and is reported as not used.
    const std::string script =
        "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py --num-layers 8 --hidden-size "
        "2048 --num-attention-heads 16 --seq-length 4096 --micro-batch-size 1 "
        "--global-batch-size 64 --vocab-size 129280 --bf16 --tensor-model-parallel-size 2 "
        "--pipeline-model-parallel-size 2 --untie-embeddings-and-output-weights "
        "--mtp-num-layers 2 --mtp-loss-scaling-factor 0.1";
    ImportOptions opt;
    opt.file = "mtp.sh";
    const Imported got = importMegatronScript(script, opt);
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(got.model->mtp_layers, 2);
    bool weightIgnored = false;
    for (const auto& i : got.ignored)
        weightIgnored = weightIgnored || i.setting == "--mtp-loss-scaling-factor";
    QVERIFY(weightIgnored);
    for (Framework f : {Framework::Megatron, Framework::Nemo}) {
        const Exported ex = exportPlan(f, *got.model, *got.plan);
        QVERIFY2(ex.ok(), problems(ex.problems).constData());
        QVERIFY(ex.text.find(f == Framework::Nemo ? "mtp_num_layers" : "--mtp-num-layers 2") !=
                std::string::npos);
        const Imported again = importText(f, ex.text);
        QVERIFY2(again.ok(), problems(again.problems).constData());
        QCOMPARE(again.model->mtp_layers, 2);
    }
    // Without modules nothing is written.
    sa::Model none = *got.model;
    none.mtp_layers = 0;
    QVERIFY(exportPlan(Framework::Megatron, none, *got.plan).text.find("--mtp-num-layers") ==
            std::string::npos);
    // torchtitan takes the modules from its model flavor: the export says so.
    const Exported tt = exportPlan(Framework::Torchtitan, *got.model, *got.plan);
    bool noted = false;
    for (const auto& n : tt.notes)
        noted = noted || n.find("mtp_layers 2") != std::string::npos;
    QVERIFY(noted);
}

void TestFrameworks::moeTokenDrop() {
    // --moe-pad-expert-input-to-capacity reads into pad_to_capacity and is
    // written back (Megatron-Bridge's apply_moe_token_drop: capacity 1,
    // padded); a capacity factor without it drops without padding; the
    // padding without a capacity factor is refused, as TransformerConfig
    // refuses it.
    const QString moe = smallMegatron(2) +
                        "--num-experts 16 --moe-router-topk 4 --moe-ffn-hidden-size 1024 "
                        "--expert-model-parallel-size 4 --moe-token-dispatcher-type alltoall ";
    const Imported drop = importMegatronScript(
        (moe + "--moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity").toStdString(),
        {});
    QVERIFY2(drop.ok(), problems(drop.problems).constData());
    QCOMPARE(drop.model->moe->capacity_factor, 1.0);
    QVERIFY(drop.model->moe->padded());
    for (Framework f : {Framework::Megatron, Framework::Nemo}) {
        const Exported ex = exportPlan(f, *drop.model, *drop.plan);
        QVERIFY2(ex.ok(), problems(ex.problems).constData());
        QVERIFY(ex.text.find(f == Framework::Nemo
                                 ? "moe_pad_expert_input_to_capacity"
                                 : "--moe-pad-expert-input-to-capacity") != std::string::npos);
        const Imported again = importText(f, ex.text);
        QVERIFY2(again.ok(), problems(again.problems).constData());
        QCOMPARE(again.model->moe->capacity_factor, 1.0);
        QVERIFY(again.model->moe->padded());
    }
    const Imported unpadded =
        importMegatronScript((moe + "--moe-expert-capacity-factor 1.5").toStdString(), {});
    QVERIFY2(unpadded.ok(), problems(unpadded.problems).constData());
    QVERIFY(!unpadded.model->moe->padded());
    QVERIFY(exportMegatron(*unpadded.model, *unpadded.plan)
                .text.find("--moe-pad-expert-input-to-capacity") == std::string::npos);
    const Imported dropless = importMegatronScript(moe.toStdString(), {});
    QVERIFY2(dropless.ok(), problems(dropless.problems).constData());
    QVERIFY(!dropless.model->moe->padded());
    QVERIFY(
        exportMegatron(*dropless.model, *dropless.plan).text.find("--moe-expert-capacity-factor") ==
        std::string::npos);
    const Imported alone =
        importMegatronScript((moe + "--moe-pad-expert-input-to-capacity").toStdString(), {});
    QVERIFY(!alone.ok());
    QVERIFY2(problems(alone.problems).contains("needs --moe-expert-capacity-factor"),
             problems(alone.problems).constData());
}

void TestFrameworks::expertTensorParallel() {
    // --expert-tensor-parallel-size below TP reads into the plan's etp
    // (Megatron-Core's MoE parallel folding) and is written back, Megatron
    // and NeMo; above TP, or not dividing it, it is refused.
    const QString moe = smallMegatron(2) +
                        "--num-experts 16 --moe-router-topk 4 --moe-ffn-hidden-size 1024 "
                        "--expert-model-parallel-size 4 --moe-token-dispatcher-type alltoall "
                        "--sequence-parallel ";
    const Imported folded =
        importMegatronScript((moe + "--expert-tensor-parallel-size 1").toStdString(), {});
    QVERIFY2(folded.ok(), problems(folded.problems).constData());
    QCOMPARE(folded.plan->parallelism.etp, 1);
    QCOMPARE(folded.plan->parallelism.ep, 4);
    for (Framework f : {Framework::Megatron, Framework::Nemo}) {
        const Exported ex = exportPlan(f, *folded.model, *folded.plan);
        QVERIFY2(ex.ok(), problems(ex.problems).constData());
        QVERIFY(ex.text.find(f == Framework::Nemo
                                 ? "expert_tensor_parallel_size: 1"
                                 : "--expert-tensor-parallel-size 1") != std::string::npos);
        const Imported again = importText(f, ex.text);
        QVERIFY2(again.ok(), problems(again.problems).constData());
        QCOMPARE(again.plan->parallelism.etp, 1);
    }
    // Equal to TP is the default; nothing written.
    const Imported same =
        importMegatronScript((moe + "--expert-tensor-parallel-size 2").toStdString(), {});
    QVERIFY2(same.ok(), problems(same.problems).constData());
    QCOMPARE(same.plan->parallelism.etp, 0);
    QVERIFY(exportMegatron(*same.model, *same.plan).text.find("--expert-tensor-parallel-size") ==
            std::string::npos);
    const Imported wide =
        importMegatronScript((moe + "--expert-tensor-parallel-size 4").toStdString(), {});
    QVERIFY(!wide.ok());
    QVERIFY2(problems(wide.problems).contains("does not divide tp = 2"),
             problems(wide.problems).constData());
}

void TestFrameworks::slidingWindow() {
    // --window-size (left, 0) and --window-attn-skip-freq N read into the
    // model's sliding_window and are written back, Megatron and NeMo; a
    // window reaching ahead, and a layer pattern, are refused.
    const QString base = smallMegatron(2);
    const Imported got = importMegatronScript(
        (base + "--window-size 127,0 --window-attn-skip-freq 2").toStdString(), {});
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QVERIFY(got.model->sliding_window.has_value());
    QCOMPARE(got.model->sliding_window->size, std::int64_t(128));
    QCOMPARE(got.model->sliding_window->full_every, 2);
    for (Framework f : {Framework::Megatron, Framework::Nemo}) {
        const Exported ex = exportPlan(f, *got.model, *got.plan);
        QVERIFY2(ex.ok(), problems(ex.problems).constData());
        const Imported again = importText(f, ex.text);
        QVERIFY2(again.ok(),
                 (problems(again.problems) + QByteArray::fromStdString(ex.text)).constData());
        QVERIFY(again.model->sliding_window == got.model->sliding_window);
    }
    const Imported ahead =
        importMegatronScript((base + "--window-size '(127, 4)'").toStdString(), {});
    QVERIFY(!ahead.ok());
    QVERIFY2(problems(ahead.problems).contains("not causal"), problems(ahead.problems).constData());
    const Imported pattern = importMegatronScript(
        (base + "--window-size 127,0 --window-attn-skip-freq '([0]+[1]*15)'").toStdString(), {});
    QVERIFY(!pattern.ok());
    QVERIFY2(problems(pattern.problems).contains("--window-attn-skip-freq"),
             problems(pattern.problems).constData());
    // No window: every layer attends fully; the skip frequency is unused.
    const Imported none =
        importMegatronScript((base + "--window-attn-skip-freq 2").toStdString(), {});
    QVERIFY2(none.ok(), problems(none.problems).constData());
    QVERIFY(!none.model->sliding_window);
}

void TestFrameworks::moeDispatchAndGroups() {
    // Megatron's flex dispatcher (DeepEP or HybridEP) and group-limited
    // routing read into the documents and written back.
    const QString moe = smallMegatron(2) +
                        "--num-experts 16 --moe-router-topk 4 --moe-ffn-hidden-size 1024 "
                        "--expert-model-parallel-size 4 ";
    const Imported flex = importMegatronScript(
        (moe + "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep "
               "--moe-router-num-groups 4 --moe-router-group-topk 2")
            .toStdString(),
        {});
    QVERIFY2(flex.ok(), problems(flex.problems).constData());
    QCOMPARE(flex.plan->ep_dispatcher, sa::EpDispatcher::HybridEp);
    QCOMPARE(flex.model->moe->router_groups, 4);
    QCOMPARE(flex.model->moe->router_group_topk, 2);
    const Exported out = exportMegatron(*flex.model, *flex.plan);
    QVERIFY2(out.ok(), problems(out.problems).constData());
    QVERIFY(QString::fromStdString(out.text).contains("--moe-token-dispatcher-type flex"));
    QVERIFY(QString::fromStdString(out.text).contains("--moe-flex-dispatcher-backend hybridep"));
    const Imported again = importMegatronScript(out.text, {});
    QVERIFY2(again.ok(), problems(again.problems).constData());
    QCOMPARE(again.plan->ep_dispatcher, sa::EpDispatcher::HybridEp);
    QCOMPARE(*again.model->moe, *flex.model->moe);
    // NeMo's YAML carries the backend the same way.
    const Exported yaml = exportNemo(*flex.model, *flex.plan);
    QVERIFY2(yaml.ok(), problems(yaml.problems).constData());
    QVERIFY(QString::fromStdString(yaml.text).contains("moe_flex_dispatcher_backend: hybridep"));
    // DeepEP, Megatron's default backend, spelt or not; the deprecated
    // --moe-enable-deepep too. Another backend is refused.
    for (const char* backend :
         {"", "--moe-flex-dispatcher-backend deepep", "--moe-enable-deepep"}) {
        const Imported deepep = importMegatronScript(
            (moe + "--moe-token-dispatcher-type flex " + backend).toStdString(), {});
        QVERIFY2(deepep.ok(), problems(deepep.problems).constData());
        QCOMPARE(deepep.plan->ep_dispatcher, sa::EpDispatcher::Flex);
        const Exported back = exportMegatron(*deepep.model, *deepep.plan);
        QVERIFY(!QString::fromStdString(back.text).contains("--moe-flex-dispatcher-backend"));
    }
    const Imported ncclep = importMegatronScript(
        (moe + "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend ncclep")
            .toStdString(),
        {});
    QVERIFY(!ncclep.ok());
    QVERIFY(problems(ncclep.problems).contains("ncclep"));
    // Both backends at once, as Megatron's TransformerConfig refuses.
    const Imported both = importMegatronScript(
        (moe + "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep "
               "--moe-enable-deepep")
            .toStdString(),
        {});
    QVERIFY(!both.ok());
    QVERIFY2(problems(both.problems).contains("moe-enable-deepep"),
             problems(both.problems).constData());

    // The SMs the dispatcher's kernels hold: the unified knob over the
    // backend's own; the other backend's knob is ignored, with the reason.
    const auto smsOf = [&](const QString& args) {
        const Imported i = importMegatronScript(
            (moe + "--moe-token-dispatcher-type flex " + args).toStdString(), {});
        return i.ok() ? i.plan->ep_dispatcher_sms : -1;
    };
    QCOMPARE(smsOf(""), 0);
    QCOMPARE(smsOf("--moe-deepep-num-sms 24"), 24);
    QCOMPARE(smsOf("--moe-flex-dispatcher-backend hybridep --moe-hybridep-num-sms 32"), 32);
    QCOMPARE(smsOf("--moe-flex-dispatcher-backend hybridep --moe-hybridep-num-sms 32 "
                   "--moe-flex-dispatcher-num-sms 16"),
             16);
    const Imported otherKnob = importMegatronScript(
        (moe + "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep "
               "--moe-deepep-num-sms 24")
            .toStdString(),
        {});
    QVERIFY2(otherKnob.ok(), problems(otherKnob.problems).constData());
    QCOMPARE(otherKnob.plan->ep_dispatcher_sms, 0);
    QVERIFY(std::any_of(otherKnob.ignored.begin(), otherKnob.ignored.end(), [](const auto& i) {
        return i.setting == "--moe-deepep-num-sms" &&
               i.why.find("DeepEP backend") != std::string::npos;
    }));
    QCOMPARE(smsOf("--moe-flex-dispatcher-backend hybridep --moe-hybridep-num-sms 0"),
             -1); // at least one SM
    // Written back in the backend's own spelling, which every release reads.
    sa::Plan withSms = *flex.plan;
    withSms.ep_dispatcher_sms = 32;
    const Exported smsOut = exportMegatron(*flex.model, withSms);
    QVERIFY(QString::fromStdString(smsOut.text).contains("--moe-hybridep-num-sms 32"));
    QCOMPARE(importMegatronScript(smsOut.text, {}).plan->ep_dispatcher_sms, 32);
    const Exported smsYaml = exportNemo(*flex.model, withSms);
    QVERIFY(QString::fromStdString(smsYaml.text).contains("moe_hybridep_num_sms: 32"));

    const Imported a2a =
        importMegatronScript((moe + "--moe-token-dispatcher-type alltoall").toStdString(), {});
    QVERIFY2(a2a.ok(), problems(a2a.problems).constData());
    QCOMPARE(a2a.plan->ep_dispatcher, sa::EpDispatcher::AllToAll);
    QCOMPARE(a2a.model->moe->router_groups, 0);
    // One without the other, or groups that cannot hold top_k, is refused.
    const Imported half = importMegatronScript(
        (moe + "--moe-token-dispatcher-type alltoall --moe-router-num-groups 4").toStdString(), {});
    QVERIFY(!half.ok());
    QVERIFY(problems(half.problems).contains("moe-router-group-topk"));
    const Imported tight = importMegatronScript(
        (moe + "--moe-token-dispatcher-type alltoall --moe-router-num-groups 8 "
               "--moe-router-group-topk 1")
            .toStdString(),
        {});
    QVERIFY(!tight.ok());
    QVERIFY(problems(tight.problems).contains("cannot hold the top 4 experts"));
}

void TestFrameworks::lossKernels_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("loss"); // plan cross_entropy; empty: refused
    const QString script = smallMegatron(1);
    const QString yaml = smallNemo("  transformer_engine: true\n");
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    QTest::newRow("megatron default") << M << script << "megatron";
    QTest::newRow("megatron fused, native") << M << script + "--cross-entropy-loss-fusion"
                                            << "megatron-fused";
    QTest::newRow("megatron fused, te")
        << M << script + "--cross-entropy-loss-fusion --cross-entropy-fusion-impl te"
        << "te";
    QTest::newRow("megatron impl without fusion") << M << script + "--cross-entropy-fusion-impl te"
                                                  << "megatron";
    QTest::newRow("megatron unknown impl")
        << M << script + "--cross-entropy-loss-fusion --cross-entropy-fusion-impl liger"
        << "";
    QTest::newRow("nemo default") << N << yaml << "megatron";
    QTest::newRow("nemo fused") << N << yaml + "  cross_entropy_loss_fusion: true\n"
                                << "megatron-fused";
    QTest::newRow("nemo te") << N
                             << yaml + "  cross_entropy_loss_fusion: true\n"
                                       "  cross_entropy_fusion_impl: te\n"
                             << "te";
}

void TestFrameworks::lossKernels() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(QString, loss);
    const Framework f = Framework(framework);
    const Imported got = importText(f, text.toStdString());
    if (loss.isEmpty()) {
        QVERIFY(!got.ok());
        QVERIFY(problems(got.problems).contains("cross-entropy-fusion-impl"));
        QVERIFY(problems(got.problems).contains("must be native or te, got 'liger'"));
        return;
    }
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(QString::fromLatin1(toString(got.plan->cross_entropy)), loss);
    // An implementation without the fusion is reported unused, not mapped.
    if (text.contains(QLatin1String("fusion-impl")) &&
        !text.contains(QLatin1String("loss-fusion"))) {
        bool ignored = false;
        for (const auto& i : got.ignored)
            ignored = ignored || QString::fromStdString(i.setting).contains(
                                     QLatin1String("cross-entropy-fusion-impl"));
        QVERIFY(ignored);
    }
    // Exported and imported again, the loss survives.
    const Exported out = f == Framework::Nemo ? exportNemo(*got.model, *got.plan)
                                              : exportMegatron(*got.model, *got.plan);
    QVERIFY2(out.ok(), problems(out.problems).constData());
    const Imported again = importText(f, out.text);
    QVERIFY2(again.ok(), problems(again.problems).constData());
    QCOMPARE(again.plan->cross_entropy, got.plan->cross_entropy);
}

void TestFrameworks::attentionBackendEnvironment_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("flash");
    QTest::addColumn<QString>("kernel");
    const QString script = smallMegatron(1) + "--transformer-impl transformer_engine\n";
    const QString yaml = smallNemo("  transformer_engine: true\n");
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    // Transformer Engine picks its backend (cuDNN's on Hopper) unless the
    // environment turns one off.
    QTest::newRow("megatron, TE's pick") << M << script << true << "auto";
    QTest::newRow("megatron, no cuDNN")
        << M << "export NVTE_FUSED_ATTN=0\n" + script << true << "flash2";
    QTest::newRow("megatron, no flash-attn")
        << M << "export NVTE_FLASH_ATTN=0\n" + script << true << "cudnn";
    QTest::newRow("megatron, neither")
        << M << "export NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=0\n" + script << false << "auto";
    QTest::newRow("megatron, explicit backend wins")
        << M << "export NVTE_FUSED_ATTN=0\n" + script.trimmed() + " --attention-backend fused\n"
        << true << "cudnn";
    QTest::newRow("megatron, switch on")
        << M << "export NVTE_FUSED_ATTN=1\n" + script << true << "auto";
    QTest::newRow("nemo, TE's pick") << N << yaml << true << "auto";
    QTest::newRow("nemo, launcher without cuDNN")
        << N << yaml + "env_vars:\n  NVTE_FUSED_ATTN: 0\n  NCCL_NVLS_ENABLE: 0\n"
        << true << "flash2";
    QTest::newRow("nemo, launcher without flash-attn")
        << N << yaml + "env_vars: {NVTE_FLASH_ATTN: 0}\n"
        << true << "cudnn";
    QTest::newRow("nemo, local layers ignore TE's switches")
        << N
        << QString(yaml).replace("transformer_engine: true", "transformer_engine: false") +
               "env_vars: {NVTE_FUSED_ATTN: 0}\n"
        << false << "auto";
}

void TestFrameworks::attentionBackendEnvironment() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(bool, flash);
    QFETCH(QString, kernel);
    const Framework f = Framework(framework);
    const Imported got = importText(f, text.toStdString());
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(got.plan->flash_attention, flash);
    QCOMPARE(QString::fromLatin1(toString(got.plan->attention_kernel)), kernel);
    // Every switch read is reported where it went; others are reported ignored.
    for (const char* name : {"NVTE_FUSED_ATTN", "NVTE_FLASH_ATTN"}) {
        if (!text.contains(QLatin1String(name)))
            continue;
        bool reported = false;
        for (const auto& m : got.mapped)
            reported =
                reported || (QString::fromStdString(m.setting).contains(QLatin1String(name)) &&
                             m.target == "plan:/attention_kernel");
        QVERIFY2(reported, name);
    }
    if (text.contains(QLatin1String("NCCL_NVLS_ENABLE"))) {
        bool ignored = false;
        for (const auto& i : got.ignored)
            ignored = ignored || i.setting == "env_vars.NCCL_NVLS_ENABLE";
        QVERIFY(ignored);
    }
    // The exports write the kernel back, and it reads back the same.
    if (got.plan->flash_attention && got.plan->attention_kernel != sa::AttentionKernel::Auto) {
        const Exported ex = exportPlan(f, *got.model, *got.plan);
        QVERIFY2(ex.ok(), problems(ex.problems).constData());
        const Imported again = importText(f, ex.text);
        QVERIFY2(again.ok(), problems(again.problems).constData());
        QCOMPARE(again.plan->attention_kernel, got.plan->attention_kernel);
        if (f == Framework::Nemo)
            QVERIFY2(ex.text.find("env_vars:") != std::string::npos, ex.text.c_str());
    }
}

void TestFrameworks::scriptExpansion() {
    const std::string script = R"(#!/bin/bash
# A comment --tensor-model-parallel-size 99
export NODES=2
GPUS=${GPUS_PER_NODE:-8}
TP=4 PP=2
WORLD=$((NODES * GPUS))
MODEL_ARGS=(
    --num-layers 16   # inline comment
    --hidden-size "1024"
    --num-attention-heads '16'
)
OPTS="--micro-batch-size 2 --global-batch-size 32"
echo "starting on $WORLD GPUs"
torchrun --nnodes=$NODES --nproc_per_node ${GPUS} pretrain_gpt.py \
    ${MODEL_ARGS[@]} $OPTS \
    --tensor-model-parallel-size $TP --pipeline-model-parallel-size ${PP} \
    --seq-length $((1024 * 2)) \
    --vocab-size 32000 --bf16 \
    --sequence-parallel   # trailing comment
)";
    const Imported got = importMegatronScript(script, {});
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(got.plan->parallelism.tp, 4);
    QCOMPARE(got.plan->parallelism.pp, 2);
    QCOMPARE(got.plan->parallelism.dp, 2); // 16 GPUs / (4 x 2)
    QCOMPARE(got.plan->micro_batch_sequences, std::int64_t(2));
    QCOMPARE(got.plan->global_batch_sequences, std::int64_t(32));
    QCOMPARE(got.plan->sequence_length, std::int64_t(2048));
    QCOMPARE(got.model->layers, 16);
    QCOMPARE(got.model->hidden, std::int64_t(1024));
    QCOMPARE(got.model->heads, 16);
    QVERIFY(got.plan->sequence_parallel);
    // The world size given by the caller wins over the launcher.
    ImportOptions opt;
    opt.world_size = 64;
    QCOMPARE(importMegatronScript(script, opt).plan->parallelism.dp, 8);
}

void TestFrameworks::everySettingReported() {
    const std::vector<std::string> args = {"--num-layers",
                                           "8",
                                           "--hidden-size",
                                           "512",
                                           "--num-attention-heads",
                                           "8",
                                           "--seq-length",
                                           "1024",
                                           "--micro-batch-size",
                                           "1",
                                           "--vocab-size",
                                           "1000",
                                           "--bf16",
                                           "--lr",
                                           "1e-4",
                                           "--data-path",
                                           "a",
                                           "0.5",
                                           "b",
                                           "--log-interval",
                                           "10",
                                           "--some-future-flag",
                                           "--tensor-model-parallel-size",
                                           "2",
                                           "--tensor-model-parallel-size",
                                           "4",
                                           "--num-query-groups",
                                           "2"};
    ImportOptions opt;
    opt.world_size = 8;
    const Imported got = importMegatronArgs(args, opt);
    QVERIFY2(got.ok(), problems(got.problems).constData());
    std::multiset<std::string> seen;
    std::map<std::string, std::string> why;
    for (const auto& m : got.mapped)
        seen.insert(m.setting);
    for (const auto& i : got.ignored) {
        seen.insert(i.setting);
        why[i.setting] = i.why;
    }
    for (const auto& a : args)
        if (a.rfind("--", 0) == 0)
            QVERIFY2(seen.count(a), a.c_str());
    QCOMPARE(int(seen.count("--tensor-model-parallel-size")), 2); // the first one ignored
    QCOMPARE(got.plan->parallelism.tp, 4);
    QCOMPARE(QString::fromStdString(why["--lr"]), QString("optimizer hyper-parameter"));
    QCOMPARE(QString::fromStdString(why["--some-future-flag"]), QString("not modelled"));
    QVERIFY(QString::fromStdString(why["--num-query-groups"]).contains("group-query-attention"));
    QCOMPARE(got.model->kv_heads, 8);
    // NeMo: launcher keys outside model.* are reported too.
    const Imported nemo = importFile(Framework::Nemo, "nemo/nemo2407-llama3-8b-8.yaml");
    QVERIFY2(nemo.ok(), problems(nemo.problems).constData());
    std::map<std::string, std::string> nemoWhy;
    for (const auto& i : nemo.ignored)
        nemoWhy[i.setting] = i.why;
    QVERIFY(nemoWhy.count("exp_manager.name"));
    QCOMPARE(QString::fromStdString(nemoWhy["model.optim.lr"]),
             QString("optimizer hyper-parameter"));
    bool ffn = false;
    for (const auto& m : nemo.mapped)
        ffn = ffn || (m.setting == "model.ffn_hidden_size" && m.target == "model:/ffn_hidden");
    QVERIFY(ffn);
}

void TestFrameworks::p2pOverlapImported_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("overlap");
    QTest::addColumn<QString>("ignored"); // a setting reported ignored, or empty
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    // 16 GPUs, tp 2, pp 4 (dp 2, 32 microbatches), 16 layers.
    const QString script = smallMegatron(2) + "--pipeline-model-parallel-size 4 ";
    const QString vp = "--num-virtual-stages-per-pipeline-rank 2 ";
    // Megatron-LM: 1F1B blocks (validate_args turns overlap_p2p_comm off);
    // interleaving overlaps unless --no-overlap-p2p-communication.
    QTest::newRow("megatron 1f1b") << M << script << false << QString();
    QTest::newRow("megatron 1f1b, no-overlap flag")
        << M << script + "--no-overlap-p2p-communication" << false
        << "--no-overlap-p2p-communication";
    QTest::newRow("megatron 1f1b, 2023 overlap flag")
        << M << script + "--overlap-p2p-communication" << false << "--overlap-p2p-communication";
    QTest::newRow("megatron interleaved") << M << script + vp << true << QString();
    QTest::newRow("megatron interleaved, 2023 overlap flag")
        << M << script + vp + "--overlap-p2p-communication" << true << QString();
    QTest::newRow("megatron interleaved, no-overlap flag")
        << M << script + vp + "--no-overlap-p2p-communication" << false << QString();
    QTest::newRow("megatron no pipeline")
        << M
        << QString(script).replace("--pipeline-model-parallel-size 4",
                                   "--pipeline-model-parallel-size 1") +
               "--no-overlap-p2p-communication"
        << true << "--no-overlap-p2p-communication";
    // NeMo: model.overlap_p2p_comm, Megatron-Core's default False.
    const QString yaml = smallNemo("  pipeline_model_parallel_size: 2\n"
                                   "  optim: {name: distributed_fused_adam}\n");
    const QString nemoVp = "  virtual_pipeline_model_parallel_size: 2\n";
    QTest::newRow("nemo 1f1b") << N << yaml << false << QString();
    QTest::newRow("nemo interleaved") << N << yaml + nemoVp << false << QString();
    QTest::newRow("nemo interleaved, overlap")
        << N << yaml + nemoVp + "  overlap_p2p_comm: true\n  batch_p2p_comm: false\n"
        << true << QString();
    QTest::newRow("nemo no pipeline, overlap")
        << N
        << QString(yaml).replace("pipeline_model_parallel_size: 2",
                                 "pipeline_model_parallel_size: 1") +
               "  overlap_p2p_comm: true\n  batch_p2p_comm: false\n"
        << true << "model.overlap_p2p_comm";
}

// The plan's p2p_overlap as each framework runs the configuration; a P2P
// setting the schedule does not read is reported ignored.
void TestFrameworks::p2pOverlapImported() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(bool, overlap);
    QFETCH(QString, ignored);
    ImportOptions opt;
    opt.file = "input";
    const Imported got = importText(Framework(framework), text.toStdString(), opt);
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(got.plan->p2p_overlap, overlap);
    bool reported = ignored.isEmpty();
    for (const auto& i : got.ignored)
        reported = reported || QString::fromStdString(i.setting) == ignored;
    QVERIFY2(reported, qPrintable(ignored));
    for (const auto& m : got.mapped)
        if (m.target.rfind("plan:/p2p_overlap", 0) == 0)
            QVERIFY2(QString::fromStdString(m.setting) != ignored, m.setting.c_str());
    // And the exports write it back.
    const Exported ex = exportPlan(Framework(framework), *got.model, *got.plan);
    QVERIFY2(ex.ok(), problems(ex.problems).constData());
    const QString t = QString::fromStdString(ex.text);
    QVERIFY2(!t.contains("p2p_overlap"), qPrintable(t)); // expressed, not carried
    if (Framework(framework) == Framework::Megatron)
        QCOMPARE(t.contains("--no-overlap-p2p-communication"),
                 !overlap && got.plan->schedule.kind == sa::ScheduleKind::Interleaved);
    else if (got.plan->parallelism.pp > 1)
        QVERIFY(t.contains(overlap ? "overlap_p2p_comm: true" : "overlap_p2p_comm: false"));
}

void TestFrameworks::cudaGraphsImported_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("graphs");
    QTest::addColumn<QString>("ignored"); // a setting reported ignored, or empty
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    const QString script = smallMegatron(2) + "--pipeline-model-parallel-size 2 ";
    // TransformerConfig.cuda_graph_impl, "none" by default; before
    // Megatron-LM 5769804591 two flags.
    QTest::newRow("megatron default") << M << script << false << QString();
    QTest::newRow("megatron none") << M << script + "--cuda-graph-impl none" << false << QString();
    QTest::newRow("megatron local") << M << script + "--cuda-graph-impl local" << true << QString();
    QTest::newRow("megatron te, attention only")
        << M << script + "--cuda-graph-impl transformer_engine --cuda-graph-modules attn" << true
        << "--cuda-graph-modules";
    QTest::newRow("megatron full iteration")
        << M << script + "--cuda-graph-impl full_iteration" << true << QString();
    QTest::newRow("megatron 2025 local flag")
        << M << script + "--enable-cuda-graph" << true << QString();
    QTest::newRow("megatron 2025 te flag")
        << M << script + "--external-cuda-graph" << true << QString();
    const QString yaml = smallNemo("  pipeline_model_parallel_size: 2\n"
                                   "  optim: {name: distributed_fused_adam}\n");
    QTest::newRow("nemo default") << N << yaml << false << QString();
    QTest::newRow("nemo impl") << N << yaml + "  cuda_graph_impl: transformer_engine\n"
                               << true << QString();
    QTest::newRow("nemo enable flag") << N << yaml + "  enable_cuda_graph: true\n"
                                      << true << QString();
}

// A Megatron launch script or NeMo YAML read as the named framework.
static Imported importedAs(int framework, const std::string& text) {
    ImportOptions opt;
    opt.file = "input";
    return importText(Framework(framework), text, opt);
}

// The plan's cuda_graphs from each spelling; the exports write it back.
void TestFrameworks::cudaGraphsImported() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(bool, graphs);
    QFETCH(QString, ignored);
    const bool nemo = Framework(framework) == Framework::Nemo;
    const Imported got = importedAs(framework, text.toStdString());
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(got.plan->cuda_graphs, graphs);
    bool reported = ignored.isEmpty();
    for (const auto& i : got.ignored)
        reported = reported || QString::fromStdString(i.setting) == ignored;
    QVERIFY2(reported, qPrintable(ignored));
    const Exported ex = exportPlan(Framework(framework), *got.model, *got.plan);
    QVERIFY2(ex.ok(), problems(ex.problems).constData());
    const QString t = QString::fromStdString(ex.text);
    QCOMPARE(t.contains(nemo ? "cuda_graph_impl: transformer_engine"
                             : "--cuda-graph-impl transformer_engine"),
             graphs);
    const Imported back = importedAs(framework, ex.text);
    QVERIFY2(back.ok(), problems(back.problems).constData());
    QCOMPARE(back.plan->cuda_graphs, graphs);
}

void TestFrameworks::gradAccumulationFusionImported_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("fusion");
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    // Megatron: on unless --no-gradient-accumulation-fusion; NeMo:
    // model.gradient_accumulation_fusion, False when absent.
    const QString script = smallMegatron(2);
    QTest::newRow("megatron default") << M << script << true;
    QTest::newRow("megatron off") << M << script + "--no-gradient-accumulation-fusion" << false;
    const QString yaml = smallNemo("  optim: {name: distributed_fused_adam}\n");
    QTest::newRow("nemo default") << N << yaml << false;
    QTest::newRow("nemo on") << N << yaml + "  gradient_accumulation_fusion: true\n" << true;
    QTest::newRow("nemo off") << N << yaml + "  gradient_accumulation_fusion: false\n" << false;
}

// A boolean plan field read from `text`, then from the framework's export
// of that plan; `switchWords` (either spelling) appear in the export
// exactly when the field is off.
static void flagRoundTrips(int framework, const QString& text, bool sa::Plan::*field, bool want,
                           std::initializer_list<const char*> switchWords = {}) {
    const Imported got = importedAs(framework, text.toStdString());
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE((*got.plan).*field, want);
    const Exported ex = exportPlan(Framework(framework), *got.model, *got.plan);
    QVERIFY2(ex.ok(), problems(ex.problems).constData());
    if (switchWords.size() > 0) {
        bool written = false;
        for (const char* w : switchWords)
            written = written || ex.text.find(w) != std::string::npos;
        QCOMPARE(written, !want);
    }
    const Imported back = importedAs(framework, ex.text);
    QVERIFY2(back.ok(), problems(back.problems).constData());
    QCOMPARE((*back.plan).*field, want);
}

// The plan's grad_accumulation_fusion from each spelling; the exports write
// it back.
void TestFrameworks::gradAccumulationFusionImported() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(bool, fusion);
    flagRoundTrips(framework, text, &sa::Plan::grad_accumulation_fusion, fusion);
}

void TestFrameworks::ropeFusionImported_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("fusion");
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    // Megatron fuses the rotary embedding unless --no-rope-fusion; NeMo's
    // model.apply_rope_fusion is read when given.
    const QString script = smallMegatron(2);
    QTest::newRow("megatron default") << M << script << true;
    QTest::newRow("megatron off") << M << script + "--no-rope-fusion" << false;
    const QString yaml = smallNemo("");
    QTest::newRow("nemo default") << N << yaml << true;
    QTest::newRow("nemo on") << N << yaml + "  apply_rope_fusion: true\n" << true;
    QTest::newRow("nemo off") << N << yaml + "  apply_rope_fusion: false\n" << false;
}

// The plan's rope_fusion from each spelling; the exports write it back.
void TestFrameworks::ropeFusionImported() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(bool, fusion);
    flagRoundTrips(framework, text, &sa::Plan::rope_fusion, fusion,
                   {"--no-rope-fusion", "apply_rope_fusion"});
    // torchtitan has its own rotary embedding: an unfused one is kept in
    // the export's scaleacross comment (the export's own read-back, which
    // ok() reports, compares every plan key) and the notes say so.
    if (!fusion) {
        const Imported got = importedAs(framework, text.toStdString());
        const Exported tt = exportPlan(Framework::Torchtitan, *got.model, *got.plan);
        QVERIFY2(tt.ok(), problems(tt.problems).constData());
        QVERIFY(tt.text.find("\"rope_fusion\":false") != std::string::npos);
        bool noted = false;
        for (const auto& n : tt.notes)
            noted = noted || n.find("rope_fusion false") != std::string::npos;
        QVERIFY(noted);
    }
}

void TestFrameworks::fsdpCopiesImported_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("copies");
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    // Megatron: --use-torch-fsdp2 is FSDP2 (copies; one stage, untied
    // embeddings), --use-megatron-fsdp Megatron-FSDP (views); NeMo's
    // model.fsdp is torch FSDP over FlatParameters (views).
    const QString script = smallMegatron(2) + "--untie-embeddings-and-output-weights ";
    QTest::newRow("megatron torch fsdp2") << M << script + "--use-torch-fsdp2" << true;
    QTest::newRow("megatron fsdp") << M << script + "--use-megatron-fsdp" << false;
    QTest::newRow("nemo fsdp") << N << smallNemo("  fsdp: true\n  fsdp_sharding_strategy: full\n")
                               << false;
}

// The plan's fsdp_copies from each FSDP; the exports pick the FSDP that
// does what the plan says.
void TestFrameworks::fsdpCopiesImported() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(bool, copies);
    const Imported got = importedAs(framework, text.toStdString());
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(got.plan->zero_stage, 3);
    QCOMPARE(got.plan->fsdp_copies, copies);
    const Exported ex = exportPlan(Framework(framework), *got.model, *got.plan);
    QVERIFY2(ex.ok(), problems(ex.problems).constData());
    const Imported back = importedAs(framework, ex.text);
    QVERIFY2(back.ok(), problems(back.problems).constData());
    QCOMPARE(back.plan->fsdp_copies, copies);
    // The other way: Megatron switches to the FSDP that does it; NeMo, with
    // one FSDP, carries it in its # scaleacross line, with a note.
    sa::Plan other = *got.plan;
    other.fsdp_copies = !copies;
    const Exported ex2 = exportPlan(Framework(framework), *got.model, other);
    QVERIFY2(ex2.ok(), problems(ex2.problems).constData());
    const bool noted = std::any_of(ex2.notes.begin(), ex2.notes.end(), [](const std::string& n) {
        return n.find("'fsdp_copies'") != std::string::npos;
    });
    QCOMPARE(noted, Framework(framework) == Framework::Nemo);
    const Imported back2 = importedAs(framework, ex2.text);
    QVERIFY2(back2.ok(), problems(back2.problems).constData());
    QCOMPARE(back2.plan->fsdp_copies, other.fsdp_copies);
}

// Megatron's partial distributed optimizer: two instances over dp 16 (two
// nodes of 8 at tp 2) are HSDP over 8 ranks, and the export writes the
// instances back; without the distributed optimizer, or with a count that
// does not divide dp, it is refused by name. NeMo carries dp_shard in its
// # scaleacross line.
void TestFrameworks::partialDistributedOptimizerIsHsdp() {
    const QString script = smallMegatron(4) + "--use-distributed-optimizer ";
    const Imported got =
        importedAs(int(Framework::Megatron),
                   (script + "--num-distributed-optimizer-instances 2").toStdString());
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(got.plan->parallelism.dp, 16);
    QCOMPARE(got.plan->dp_shard, 8);
    QCOMPARE(got.plan->zero_stage, 1);
    const Exported ex = exportPlan(Framework::Megatron, *got.model, *got.plan);
    QVERIFY2(ex.ok(), problems(ex.problems).constData());
    QVERIFY(ex.text.find("--num-distributed-optimizer-instances 2") != std::string::npos);
    const Imported back = importedAs(int(Framework::Megatron), ex.text);
    QVERIFY2(back.ok(), problems(back.problems).constData());
    QCOMPARE(back.plan->dp_shard, 8);
    const Exported nemo = exportPlan(Framework::Nemo, *got.model, *got.plan);
    QVERIFY2(nemo.ok(), problems(nemo.problems).constData());
    QVERIFY(std::any_of(nemo.notes.begin(), nemo.notes.end(), [](const std::string& n) {
        return n.find("'dp_shard' 8") != std::string::npos;
    }));
    const Imported nemoBack = importedAs(int(Framework::Nemo), nemo.text);
    QVERIFY2(nemoBack.ok(), problems(nemoBack.problems).constData());
    QCOMPARE(nemoBack.plan->dp_shard, 8);
    for (const QString& bad : {smallMegatron(4) + "--num-distributed-optimizer-instances 2",
                               script + "--num-distributed-optimizer-instances 3"}) {
        const Imported refused = importedAs(int(Framework::Megatron), bad.toStdString());
        QVERIFY(!refused.ok());
        QVERIFY2(problems(refused.problems).contains("num-distributed-optimizer-instances"),
                 problems(refused.problems).constData());
    }
}

// An outer-sync hsdp plan over equal buildings (the three-building sample:
// 256 of its 768 replicas in each) is HSDP with a sharding group of one
// building's replicas: exported with its cluster, the framework gets those
// groups (Megatron's optimizer instances, torchtitan's replicate x shard
// degrees), not flat FSDP or DP with the sync left in a comment.
void TestFrameworks::outerHsdpExportsItsGroups() {
    sa::Scenario sc = sa::testing::loadSampleScenario("three-buildings-405b.json");
    QCOMPARE(sc.plan.zero_stage, 1);
    QCOMPARE(sc.plan.parallelism.dp, 768);
    const Exported plain = exportPlan(Framework::Megatron, sc.model, sc.plan);
    QCOMPARE(exportPlan(Framework::Megatron, sc.cluster, sc.model, sc.plan).text, plain.text);
    sa::OuterSync h;
    h.method = sa::OuterSyncMethod::Hsdp;
    sc.plan.outer_sync = h;
    const Exported alone = exportPlan(Framework::Megatron, sc.model, sc.plan);
    QVERIFY(alone.text.find("--num-distributed-optimizer-instances") == std::string::npos);
    const Exported ex = exportPlan(Framework::Megatron, sc.cluster, sc.model, sc.plan);
    QVERIFY2(ex.ok(), problems(ex.problems).constData());
    QVERIFY(ex.text.find("--num-distributed-optimizer-instances 3") != std::string::npos);
    QVERIFY(!ex.notes.empty() && ex.notes.front().find("dp_shard 256") != std::string::npos);
    QVERIFY(ex.text.rfind("#!", 0) == 0); // the note goes after the shebang
    const Imported back = importedAs(int(Framework::Megatron), ex.text);
    QVERIFY2(back.ok(), problems(back.problems).constData());
    QCOMPARE(back.plan->dp_shard, 256);
    QVERIFY(!back.plan->outer_sync);
    const Exported tt = exportPlan(Framework::Torchtitan, sc.cluster, sc.model, sc.plan);
    QVERIFY2(tt.ok(), problems(tt.problems).constData());
    QVERIFY(tt.text.find("data_parallel_replicate_degree = 3\n") != std::string::npos);
    QVERIFY(tt.text.find("data_parallel_shard_degree = 256\n") != std::string::npos);
}

void TestFrameworks::optimizerPrecisionImported_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("moments");
    QTest::addColumn<int>("master");
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    const int fp32 = int(sa::OptimizerMoments::Fp32), bf16 = int(sa::OptimizerMoments::Bf16);
    const int m32 = int(sa::MasterWeights::Fp32), half = int(sa::MasterWeights::Half),
              none = int(sa::MasterWeights::None);
    // Megatron: fp32 throughout unless --use-precision-aware-optimizer, which
    // reads --main-params-dtype and --exp-avg(-sq)-dtype.
    const QString script = smallMegatron(2) + "--use-distributed-optimizer ";
    QTest::newRow("megatron default") << M << script << fp32 << m32;
    QTest::newRow("megatron dtypes without the switch")
        << M << script + "--main-params-dtype fp16 --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16"
        << fp32 << m32;
    QTest::newRow("megatron fp16 masters")
        << M << script + "--use-precision-aware-optimizer --main-params-dtype fp16" << fp32 << half;
    QTest::newRow("megatron bf16 moments")
        << M
        << script + "--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16"
        << bf16 << m32;
    // NeMo: Apex's DistributedFusedAdam with BF16 weights keeps 16-bit
    // remainders of the masters, or none with optim.dtype bf16; Megatron
    // Core's optimizer fp32 ones.
    QTest::newRow("nemo mcore optimizer")
        << N << smallNemo("  megatron_amp_O2: true\n  optim: {name: mcore_distributed_optim}\n")
        << fp32 << m32;
    QTest::newRow("nemo apex")
        << N << smallNemo("  megatron_amp_O2: true\n  optim: {name: distributed_fused_adam}\n")
        << fp32 << half;
    QTest::newRow("nemo apex, bf16 state")
        << N
        << smallNemo(
               "  megatron_amp_O2: true\n"
               "  optim: {name: distributed_fused_adam, dtype: bf16, grad_sync_dtype: bf16}\n")
        << bf16 << none;
    QString fp16 = smallNemo("  megatron_amp_O2: true\n  optim: {name: distributed_fused_adam}\n");
    fp16.replace(QLatin1String("precision: bf16"), QLatin1String("precision: 16"));
    QTest::newRow("nemo apex, fp16 weights") << N << fp16 << fp32 << m32;
    QTest::newRow("nemo apex without O2")
        << N << smallNemo("  optim: {name: distributed_fused_adam}\n") << fp32 << m32;
}

// The plan's optimizer precision from each spelling; the exports write it
// back (Megatron has no spelling for no masters: the carried line has it).
void TestFrameworks::optimizerPrecisionImported() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(int, moments);
    QFETCH(int, master);
    const Imported got = importedAs(framework, text.toStdString());
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(int(got.plan->optimizer_moments), moments);
    QCOMPARE(int(got.plan->master_weights), master);
    for (Framework to : {Framework::Megatron, Framework::Nemo}) {
        const Exported ex = exportPlan(to, *got.model, *got.plan);
        QVERIFY2(ex.ok(), problems(ex.problems).constData());
        const Imported back = importedAs(int(to), ex.text);
        QVERIFY2(back.ok(), problems(back.problems).constData());
        QCOMPARE(int(back.plan->optimizer_moments), moments);
        QCOMPARE(int(back.plan->master_weights), master);
    }
}

void TestFrameworks::cpCommTypeImported_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("ring");
    QTest::addColumn<int>("a2a");
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    // Megatron-Core's --cp-comm-type (default p2p), one type for every
    // layer or the same one per layer; NeMo's model.cp_comm_type.
    const QString script = smallMegatron(4) + "--context-parallel-size 2 ";
    // The hierarchical a2a+p2p with the all-to-all group's size and the
    // ring's; a size of 1 makes it the plain ring or all-to-all, as
    // Transformer Engine does.
    const QString script4 = smallMegatron(4) + "--context-parallel-size 4 --cp-comm-type a2a+p2p ";
    QTest::newRow("megatron a2a+p2p") << M << script4 + "--hierarchical-context-parallel-sizes 2 2"
                                      << int(sa::CpRing::TeP2p) << 2;
    QTest::newRow("megatron a2a+p2p, all-to-all of 1")
        << M << script4 + "--hierarchical-context-parallel-sizes 1 4" << int(sa::CpRing::TeP2p)
        << 1;
    QTest::newRow("megatron a2a+p2p, ring of 1")
        << M << script4 + "--hierarchical-context-parallel-sizes 4 1" << int(sa::CpRing::TeA2a)
        << 1;
    QTest::newRow("nemo a2a+p2p") << N
                                  << smallNemo(
                                         "  context_parallel_size: 4\n  cp_comm_type: a2a+p2p\n"
                                         "  hierarchical_context_parallel_sizes: [2, 2]\n")
                                  << int(sa::CpRing::TeP2p) << 2;
    QTest::newRow("megatron default") << M << script << int(sa::CpRing::TeP2p) << 1;
    QTest::newRow("megatron a2a") << M << script + "--cp-comm-type a2a" << int(sa::CpRing::TeA2a)
                                  << 1;
    QTest::newRow("megatron all_gather")
        << M << script + "--cp-comm-type all_gather" << int(sa::CpRing::TeAllGather) << 1;
    QTest::newRow("megatron allgather (the help's spelling)")
        << M << script + "--cp-comm-type allgather" << int(sa::CpRing::TeAllGather) << 1;
    QTest::newRow("megatron a2a per layer")
        << M << script + "--cp-comm-type " + QStringLiteral("a2a ").repeated(16)
        << int(sa::CpRing::TeA2a) << 1;
    const QString yaml = smallNemo("  context_parallel_size: 2\n");
    QTest::newRow("nemo default") << N << yaml << int(sa::CpRing::TeP2p) << 1;
    QTest::newRow("nemo a2a") << N << yaml + "  cp_comm_type: a2a\n" << int(sa::CpRing::TeA2a) << 1;
    QTest::newRow("nemo list")
        << N
        << yaml + "  cp_comm_type: [all_gather, all_gather, all_gather, all_gather, "
                  "all_gather, all_gather, all_gather, all_gather]\n"
        << int(sa::CpRing::TeAllGather) << 1;
}

// The plan's cp_ring from Megatron's and NeMo's communication types; the
// exports write them back.
void TestFrameworks::cpCommTypeImported() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(int, ring);
    QFETCH(int, a2a);
    const Imported got = importedAs(framework, text.toStdString());
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(int(got.plan->cp_ring), ring);
    QCOMPARE(got.plan->cp_a2a_size, a2a);
    const Exported ex = exportPlan(Framework(framework), *got.model, *got.plan);
    QVERIFY2(ex.ok(), problems(ex.problems).constData());
    // Written in the framework's own words, not carried in the comment.
    const QString t = QString::fromStdString(ex.text);
    QCOMPARE(t.contains("a2a+p2p"), a2a > 1);
    QVERIFY(!t.contains("cp_a2a_size"));
    const Imported back = importedAs(framework, ex.text);
    QVERIFY2(back.ok(), problems(back.problems).constData());
    QCOMPARE(int(back.plan->cp_ring), ring);
    QCOMPARE(back.plan->cp_a2a_size, a2a);
}

void TestFrameworks::fp8ParamGatherImported_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("gather");
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    const QString script = smallMegatron(2) + "--use-distributed-optimizer --fp8-format hybrid ";
    QTest::newRow("megatron default") << M << script << false;
    QTest::newRow("megatron flag") << M << script + "--fp8-param-gather" << true;
    const QString yaml = smallNemo("  optim: {name: distributed_fused_adam}\n"
                                   "  fp8: true\n  fp8_hybrid: true\n");
    QTest::newRow("nemo default") << N << yaml << false;
    QTest::newRow("nemo fp8_params") << N << yaml + "  fp8_params: true\n" << true;
}

// The plan's fp8_param_gather from each spelling; the exports write it back.
void TestFrameworks::fp8ParamGatherImported() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(bool, gather);
    const bool nemo = Framework(framework) == Framework::Nemo;
    const Imported got = importedAs(framework, text.toStdString());
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(got.model->dtype, sa::DType::FP8);
    QCOMPARE(got.plan->fp8_param_gather, gather);
    const Exported ex = exportPlan(Framework(framework), *got.model, *got.plan);
    QVERIFY2(ex.ok(), problems(ex.problems).constData());
    const QString t = QString::fromStdString(ex.text);
    QCOMPARE(t.contains(nemo ? "fp8_params: true" : "--fp8-param-gather"), gather);
    const Imported back = importedAs(framework, ex.text);
    QVERIFY2(back.ok(), problems(back.problems).constData());
    QCOMPARE(back.plan->fp8_param_gather, gather);
}

void TestFrameworks::dropoutImported_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("hidden");
    QTest::addColumn<double>("attention");
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    const QString script = smallMegatron(2);
    QTest::newRow("megatron default 0.1") << M << script << 0.1 << 0.1;
    QTest::newRow("megatron flags")
        << M << script + "--hidden-dropout 0 --attention-dropout 0.05" << 0.0 << 0.05;
    const QString yaml = smallNemo("");
    QTest::newRow("nemo default 0.1") << N << yaml << 0.1 << 0.1;
    QTest::newRow("nemo keys") << N << yaml + "  hidden_dropout: 0.0\n  attention_dropout: 0.0\n"
                               << 0.0 << 0.0;
}

// Dropout from each spelling, Megatron's 0.1 where none is given; the
// exports write what differs from it, and it reads back equal.
void TestFrameworks::dropoutImported() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    QFETCH(double, hidden);
    QFETCH(double, attention);
    const Imported got = importedAs(framework, text.toStdString());
    QVERIFY2(got.ok(), problems(got.problems).constData());
    QCOMPARE(got.plan->hidden_dropout, hidden);
    QCOMPARE(got.plan->attention_dropout, attention);
    const Exported ex = exportPlan(Framework(framework), *got.model, *got.plan);
    QVERIFY2(ex.ok(), problems(ex.problems).constData());
    const Imported back = importedAs(framework, ex.text);
    QVERIFY2(back.ok(), problems(back.problems).constData());
    QCOMPARE(back.plan->hidden_dropout, hidden);
    QCOMPARE(back.plan->attention_dropout, attention);
    // A probability of 1 drops everything: refused, naming the setting.
    const bool nemo = Framework(framework) == Framework::Nemo;
    const Imported bad = importedAs(
        framework,
        (text + (nemo ? "  attention_dropout: 1\n" : " --attention-dropout 1")).toStdString());
    QVERIFY(!bad.ok());
    bool named = false;
    for (const auto& d : bad.problems)
        named = named || d.message.find("attention") != std::string::npos ||
                d.path.find("attention") != std::string::npos;
    QVERIFY2(named, problems(bad.problems).constData());
}

void TestFrameworks::megatronDefaults() {
    // Megatron's own defaults when the arguments leave things out.
    ImportOptions opt;
    opt.world_size = 16;
    auto imp = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = {"--num-layers",
                                      "24",
                                      "--hidden-size",
                                      "4096",
                                      "--num-attention-heads",
                                      "32",
                                      "--seq-length",
                                      "4096",
                                      "--micro-batch-size",
                                      "1",
                                      "--tokenizer-type",
                                      "GPT2BPETokenizer",
                                      "--bf16"};
        a.insert(a.end(), extra.begin(), extra.end());
        return importMegatronArgs(a, opt);
    };
    Imported d = imp({});
    QVERIFY2(d.ok(), problems(d.problems).constData());
    QCOMPARE(d.model->ffn_hidden, std::int64_t(4 * 4096));
    QCOMPARE(d.model->mlp, sa::MlpKind::Gelu);
    QVERIFY(d.model->tied_embeddings);
    QCOMPARE(d.model->vocab, std::int64_t(50304));              // 50,257 up to a multiple of 128
    QCOMPARE(d.plan->global_batch_sequences, std::int64_t(16)); // micro batch x dp
    QCOMPARE(d.plan->zero_stage, 0);
    QVERIFY(!d.plan->dp_overlap);
    QCOMPARE(d.plan->grad_reduce_bytes, 4);
    QVERIFY(d.plan->flash_attention); // Transformer Engine, attention backend auto
    QCOMPARE(d.plan->recompute, sa::Recompute::None);
    Imported s = imp({"--swiglu", "--tensor-model-parallel-size", "8", "--grad-reduce-in-bf16",
                      "--overlap-grad-reduce", "--use-distributed-optimizer"});
    QVERIFY2(s.ok(), problems(s.problems).constData());
    // int((4 * 4096 * 2 / 3) / 64) * 64 = 10880
    QCOMPARE(s.model->ffn_hidden, std::int64_t(10880));
    QCOMPARE(s.model->vocab, std::int64_t(51200)); // a multiple of 128 x 8
    QCOMPARE(s.plan->grad_reduce_bytes, 2);
    QCOMPARE(s.plan->zero_stage, 1);
    QCOMPARE(s.plan->dp_bucket_mib, 40000000.0 * 2 / (1024 * 1024));
    Imported v = imp({"--pipeline-model-parallel-size", "2", "--global-batch-size", "32",
                      "--num-layers-per-virtual-pipeline-stage", "3", "--recompute-granularity",
                      "full", "--recompute-method", "block", "--recompute-num-layers", "3"});
    QVERIFY2(v.ok(), problems(v.problems).constData());
    QCOMPARE(v.plan->schedule.kind, sa::ScheduleKind::Interleaved);
    QCOMPARE(v.plan->schedule.virtual_stages, 4);     // 12 layers per stage / 3
    QCOMPARE(v.plan->recompute, sa::Recompute::Full); // every layer of each 3-layer chunk
    QCOMPARE(v.plan->recompute_method, sa::RecomputeMethod::Block);
    QCOMPARE(v.plan->recompute_layers, 3);
    // Partial recompute: the first 2 layers of each chunk, or groups of 2.
    Imported b2 = imp({"--recompute-granularity", "full", "--recompute-method", "block",
                       "--recompute-num-layers", "2"});
    QVERIFY2(b2.ok(), problems(b2.problems).constData());
    QCOMPARE(b2.plan->recompute_method, sa::RecomputeMethod::Block);
    QCOMPARE(b2.plan->recompute_layers, 2);
    Imported u2 = imp({"--recompute-granularity", "full", "--recompute-method", "uniform",
                       "--recompute-num-layers", "2"});
    QVERIFY2(u2.ok(), problems(u2.problems).constData());
    QCOMPARE(u2.plan->recompute_method, sa::RecomputeMethod::Uniform);
    QCOMPARE(u2.plan->recompute_layers, 2);
    // Selective recompute's modules: --recompute-modules (nargs "*"),
    // default core_attn; the deprecated --moe-layer-recompute adds moe.
    using sa::RecomputeModule;
    Imported sd = imp({"--recompute-activations"});
    QVERIFY2(sd.ok(), problems(sd.problems).constData());
    QCOMPARE(sd.plan->recompute, sa::Recompute::Selective);
    QCOMPARE(sd.plan->recompute_modules, sa::recomputeBit(RecomputeModule::CoreAttn));
    Imported sm = imp({"--recompute-granularity", "selective", "--recompute-modules", "mlp",
                       "moe_act", "layernorm"});
    QVERIFY2(sm.ok(), problems(sm.problems).constData());
    QCOMPARE(sm.plan->recompute_modules, sa::recomputeBit(RecomputeModule::Mlp) |
                                             sa::recomputeBit(RecomputeModule::MoeAct) |
                                             sa::recomputeBit(RecomputeModule::Layernorm));
    Imported ml = imp({"--moe-layer-recompute"});
    QVERIFY2(ml.ok(), problems(ml.problems).constData());
    QCOMPARE(ml.plan->recompute, sa::Recompute::Selective);
    QCOMPARE(ml.plan->recompute_modules,
             sa::recomputeBit(RecomputeModule::CoreAttn) | sa::recomputeBit(RecomputeModule::Moe));
    Imported mla = imp({"--recompute-granularity", "selective", "--recompute-modules", "core_attn",
                        "mla_up_proj"});
    QVERIFY2(mla.ok(), problems(mla.problems).constData());
    QCOMPARE(mla.plan->recompute_modules, sa::recomputeBit(RecomputeModule::CoreAttn) |
                                              sa::recomputeBit(RecomputeModule::MlaUpProj));
    Imported mhc =
        imp({"--recompute-granularity", "selective", "--recompute-modules", "core_attn", "mhc"});
    QVERIFY(!mhc.ok());
    QVERIFY2(problems(mhc.problems).contains("--recompute-modules: 'mhc' is not expressible"),
             problems(mhc.problems).constData());
    Imported unread = imp({"--recompute-modules", "mlp"});
    QVERIFY2(unread.ok(), problems(unread.problems).constData());
    QCOMPARE(unread.plan->recompute, sa::Recompute::None);
    bool ignoredModules = false;
    for (const auto& i : unread.ignored)
        ignoredModules = ignoredModules || i.setting == "--recompute-modules";
    QVERIFY(ignoredModules);
    // Both exports write the modules and read them back.
    for (auto f : {Framework::Megatron, Framework::Nemo}) {
        const Exported out = f == Framework::Nemo ? exportNemo(*sm.model, *sm.plan)
                                                  : exportMegatron(*sm.model, *sm.plan);
        QVERIFY2(out.ok(), problems(out.problems).constData());
        QVERIFY(QString::fromStdString(out.text).contains(
            f == Framework::Nemo ? "recompute_modules: [layernorm, mlp, moe_act]"
                                 : "--recompute-modules layernorm mlp moe_act"));
        const Imported again = importText(f, out.text);
        QVERIFY2(again.ok(), problems(again.problems).constData());
        QCOMPARE(again.plan->recompute_modules, sm.plan->recompute_modules);
    }
    // FP8: Megatron-Core's default recipe is delayed; tensorwise is current.
    Imported d8 = imp({"--fp8-format", "hybrid"});
    QVERIFY2(d8.ok(), problems(d8.problems).constData());
    QCOMPARE(d8.plan->fp8_recipe, sa::Fp8Recipe::Delayed);
    Imported c8 = imp({"--fp8-format", "hybrid", "--fp8-recipe", "tensorwise"});
    QVERIFY2(c8.ok(), problems(c8.problems).constData());
    QCOMPARE(c8.plan->fp8_recipe, sa::Fp8Recipe::Current);
    Imported u =
        imp({"--pipeline-model-parallel-size", "4", "--decoder-first-pipeline-num-layers", "4",
             "--decoder-last-pipeline-num-layers", "6", "--torch-fsdp2-no-reshard-after-forward"});
    QVERIFY2(u.ok(), problems(u.problems).constData());
    QCOMPARE(u.plan->placement->layers_per_stage, (std::vector<int>{4, 7, 7, 6}));
    bool ignoredFsdp = false;
    for (const auto& i : u.ignored)
        ignoredFsdp = ignoredFsdp || i.setting == "--torch-fsdp2-no-reshard-after-forward";
    QVERIFY(ignoredFsdp);
    Imported moe =
        imp({"--num-experts", "8", "--moe-layer-freq", "([0]*2+[1]*22)",
             "--moe-shared-expert-intermediate-size", "32768", "--moe-ffn-hidden-size", "16384",
             "--expert-model-parallel-size", "2", "--moe-token-dispatcher-type", "alltoall"});
    QVERIFY2(moe.ok(), problems(moe.problems).constData());
    QCOMPARE(moe.model->moe->dense_layers, 2);
    QCOMPARE(moe.model->moe->shared_experts, 2);
    QCOMPARE(moe.model->moe->top_k, 2); // moe_router_topk defaults to 2
    QCOMPARE(moe.plan->parallelism.ep, 2);
}

void TestFrameworks::exportText() {
    const sa::Scenario s = sa::testing::loadSampleScenario("two-buildings-405b.json");
    const Exported mg = exportMegatron(s.model, s.plan);
    QVERIFY2(mg.ok(), problems(mg.problems).constData());
    const QString text = QString::fromStdString(mg.text);
    // A launch script: torchrun with the world size, then pretrain_gpt.py's arguments.
    QVERIFY(text.startsWith("#!/usr/bin/env bash\n"));
    QVERIFY(text.contains(QStringLiteral("\ntorchrun --nnodes %1 --nproc-per-node 8 ")
                              .arg(s.plan.parallelism.gpus() / 8)));
    QVERIFY(text.contains("  pretrain_gpt.py \\\n"));
    QVERIFY(text.contains("--tensor-model-parallel-size 8 \\\n"));
    const QStringList lines = text.split('\n', Qt::SkipEmptyParts);
    QVERIFY(lines.last().startsWith("# scaleacross: {"));
    // The sample leaves p2p_overlap to the plan's default (overlapped), which
    // Megatron's 1F1B without virtual stages cannot run: the note says what
    // the script runs, where it had said "absent: Megatron-LM cannot express it".
    QVERIFY(!s.plan.schedule.virtual_stages || s.plan.schedule.virtual_stages == 1);
    QVERIFY(s.plan.p2p_overlap);
    QVERIFY2(text.contains("# note: plan key 'p2p_overlap' is not set (the plan's default): "
                           "Megatron-LM with these settings runs false; kept unset in the # "
                           "scaleacross line\n"),
             qPrintable(text));
    // Placement runs, link technologies and zero-bubble are not Megatron's or
    // NeMo's: notes, comments and the carried line.
    const PlanCase all = everythingCase();
    for (Framework f : {Framework::Megatron, Framework::Nemo}) {
        const Exported e = exportPlan(f, all.model, all.plan);
        QVERIFY2(e.ok(), problems(e.problems).constData());
        const QString t = QString::fromStdString(e.text);
        for (const char* key : {"placement", "link_technologies", "collectives", "schedule",
                                "rank_order", "fsdp_reshard_after_forward"}) {
            bool noted = false;
            for (const auto& n : e.notes)
                noted = noted || QString::fromStdString(n).contains(QLatin1String(key));
            QVERIFY2(noted, key);
            QVERIFY2(t.contains(QStringLiteral("# note: plan key '") + key), key);
            QVERIFY2(t.split('\n', Qt::SkipEmptyParts)
                         .last()
                         .contains(QStringLiteral("\"") + key + "\""),
                     key);
        }
    }
    const Exported nm = exportNemo(s.model, s.plan);
    QVERIFY2(nm.ok(), problems(nm.problems).constData());
    QVERIFY(QString::fromStdString(nm.text).contains("  tensor_model_parallel_size: 8\n"));
    // Layers that split neither evenly nor by the first and last stage: Megatron-Core's
    // --pipeline-model-parallel-layout, one stage per (chunk, rank), read back the same.
    for (const int v : {1, 2}) {
        sa::Plan odd = s.plan;
        odd.placement = sa::Placement{{}, {}};
        odd.parallelism.pp = 4;
        odd.parallelism.dp = 96;
        odd.global_batch_sequences = 96 * 8;
        odd.schedule = {v > 1 ? sa::ScheduleKind::Interleaved : sa::ScheduleKind::OneFOneB, v,
                        false};
        sa::Model m = s.model;
        m.layers = 26;
        odd.placement->layers_per_stage = {5, 8, 7, 6};
        const Exported lay = exportMegatron(m, odd);
        QVERIFY2(lay.ok(), problems(lay.problems).constData());
        const QString layText = QString::fromStdString(lay.text);
        QVERIFY2(layText.contains(v == 1 ? "--pipeline-model-parallel-layout "
                                           "'Ettttt|tttttttt|ttttttt|ttttttL'"
                                         : "--pipeline-model-parallel-layout "
                                           "'Ettt|tttt|tttt|ttt|tt|tttt|ttt|tttL'"),
                 qPrintable(layText));
        QVERIFY(!layText.contains("--num-virtual-stages-per-pipeline-rank"));
        ImportOptions o;
        const Imported back = importMegatronScript(lay.text, o);
        QVERIFY2(back.ok(), problems(back.problems).constData());
        QCOMPARE(back.plan->placement->layers_per_stage, odd.placement->layers_per_stage);
        QCOMPARE(back.plan->schedule.virtual_stages, v);
    }
    // A layout with a layer kind the documents do not model is refused, naming it.
    ImportOptions o;
    o.world_size = 8;
    const Imported mtp = importMegatronArgs(
        {"--num-layers", "4", "--hidden-size", "256", "--num-attention-heads", "8", "--seq-length",
         "128", "--micro-batch-size", "1", "--global-batch-size", "4", "--vocab-size", "1000",
         "--bf16", "--pipeline-model-parallel-size", "2", "--pipeline-model-parallel-layout",
         "Ett|t,m|tL"},
        o);
    QVERIFY(!mtp.ok());
    QCOMPARE(QString::fromStdString(mtp.problems.front().path),
             QStringLiteral("--pipeline-model-parallel-layout"));
    // MTP modules in the last stage (DeepSeek-V3's 'Et|(tt|)*30mL'), as many as
    // --mtp-num-layers: read, the layers counted without them; written back.
    const std::vector<std::string> small = {"--num-layers",
                                            "5",
                                            "--hidden-size",
                                            "256",
                                            "--num-attention-heads",
                                            "8",
                                            "--seq-length",
                                            "128",
                                            "--micro-batch-size",
                                            "1",
                                            "--global-batch-size",
                                            "16",
                                            "--vocab-size",
                                            "1000",
                                            "--bf16",
                                            "--pipeline-model-parallel-size",
                                            "2",
                                            "--pipeline-model-parallel-layout",
                                            "Et|(tt|)*2mL"};
    std::vector<std::string> withMtp = small;
    withMtp.insert(withMtp.end(), {"--mtp-num-layers", "1"});
    const Imported last = importMegatronArgs(withMtp, o);
    QVERIFY2(last.ok(), problems(last.problems).constData());
    QCOMPARE(last.model->mtp_layers, 1);
    QCOMPARE(last.plan->placement->layers_per_stage, (std::vector<int>{3, 2}));
    QCOMPARE(last.plan->schedule.virtual_stages, 2);
    const Exported lastOut = exportMegatron(*last.model, *last.plan);
    QVERIFY2(lastOut.ok(), problems(lastOut.problems).constData());
    QVERIFY2(lastOut.text.find("'Ett|t|t|tmL'") != std::string::npos, lastOut.text.c_str());
    const Imported lastBack = importMegatronScript(lastOut.text, o);
    QVERIFY2(lastBack.ok(), problems(lastBack.problems).constData());
    QCOMPARE(lastBack.plan->placement->layers_per_stage, (std::vector<int>{3, 2}));
    const Imported uncounted = importMegatronArgs(small, o);
    QVERIFY(!uncounted.ok());
    QVERIFY2(problems(uncounted.problems).contains("holds 1 MTP modules ('m')"),
             problems(uncounted.problems).constData());
    // Interleaving without a pipeline: the documents allow it, Megatron asserts pp > 1.
    sa::Plan flat = sa::testing::makePlan(8, 1, 4, 64);
    flat.schedule = {sa::ScheduleKind::Interleaved, 2, false};
    const Exported e = exportMegatron(s.model, flat);
    QVERIFY(!e.ok());
    QVERIFY2(QString::fromStdString(e.problems.front().message).contains("pipeline"),
             problems(e.problems).constData());
}

void TestFrameworks::malformedInputs_data() {
    QTest::addColumn<int>("framework");
    QTest::addColumn<QString>("text");
    const int M = int(Framework::Megatron), N = int(Framework::Nemo);
    QTest::newRow("empty script") << M << QString();
    QTest::newRow("open quote") << M << "torchrun x.py --num-layers '12";
    QTest::newRow("open arithmetic") << M << "N=$((2*\ntorchrun --nnodes $N x.py";
    QTest::newRow("open brace") << M << "torchrun --nnodes ${N x.py --num-layers ${";
    QTest::newRow("division by zero") << M << "torchrun --nnodes $((1/0)) x.py";
    QTest::newRow("open array") << M << "A=( --num-layers 2\n# no end";
    QTest::newRow("huge degree")
        << M
        << "torchrun --nnodes 999999999 --nproc-per-node 999999999 x.py "
           "--tensor-model-parallel-size 99999999999999999999 --pipeline-model-parallel-size "
           "10000000 --context-parallel-size 10000000 --num-layers 2";
    QTest::newRow("bad carried line") << M << "--num-layers 2\n# scaleacross: {\"plan\": 3}";
    QTest::newRow("empty yaml") << N << QString();
    QTest::newRow("yaml scalar") << N << "just text";
    QTest::newRow("yaml syntax") << N << "model: {a: [1, 2}";
    QTest::newRow("yaml complex key") << N << "? [a, b]\n: 1\n";
    QTest::newRow("yaml self alias") << N << "model: &a\n  x: *a\n";
    QTest::newRow("yaml interpolation loop")
        << N << "model:\n  num_layers: ${.hidden_size}\n  hidden_size: ${.num_layers}\n";
}

void TestFrameworks::malformedInputs() {
    QFETCH(int, framework);
    QFETCH(QString, text);
    const std::string t = text.toStdString();
    const Imported got = importText(Framework(framework), t);
    QVERIFY(!got.ok());
    QVERIFY(!got.problems.empty());
    for (const auto& d : got.problems)
        QVERIFY(!d.message.empty());
}

QTEST_GUILESS_MAIN(TestFrameworks)
#include "tst_frameworks.moc"

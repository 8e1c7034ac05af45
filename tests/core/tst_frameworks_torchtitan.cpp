// torchtitan job TOML in and out (core/frameworks/torchtitan.cpp,
// docs/FRAMEWORKS-TORCHTITAN.md): the published torchtitan runs written in
// the TOML layout of their era read back as their published plans and
// models exactly, every sample and
// published plan survives export -> import, and what the documents cannot
// express is refused naming the key. Only importTorchtitan and
// exportTorchtitan are called, so the test links without framework.cpp.

#include "formats/documents.h"
#include "frameworks/framework.h"

#include "../common/files.h"
#include "../common/fixtures.h"
#include "../common/samples.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QtTest>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using nlohmann::json;
using sa::frameworks::Exported;
using sa::frameworks::exportTorchtitan;
using sa::frameworks::Imported;
using sa::frameworks::ImportOptions;
using sa::frameworks::importTorchtitan;
using sa::testing::readAll;
using sa::testing::sourcePath;

namespace {

std::string fixture(const std::string& name) {
    return sa::testing::sourceDir() + "/tests/data/frameworks/torchtitan/" + name;
}

std::string readText(const std::string& path) {
    return readAll(QString::fromStdString(path)).toStdString();
}

std::string problemsOf(const Imported& im) {
    std::string s;
    for (const auto& p : im.problems)
        s += p.str() + "\n";
    return s;
}

std::string problemsOf(const Exported& ex) {
    std::string s;
    for (const auto& p : ex.problems)
        s += p.str() + "\n";
    return s;
}

// The top-level keys whose canonical values differ (name, description and
// the format header aside).
std::set<std::string> differingKeys(const json& got, const json& want) {
    std::set<std::string> keys;
    for (const json* j : {&got, &want})
        for (auto it = j->begin(); it != j->end(); ++it)
            keys.insert(it.key());
    std::set<std::string> out;
    for (const std::string& k : keys) {
        if (k == "name" || k == "description" || k == "format" || k == "version")
            continue;
        if (!got.contains(k) || !want.contains(k) || got[k] != want[k])
            out.insert(k);
    }
    return out;
}

QString joined(const std::set<std::string>& s) {
    QStringList l;
    for (const auto& k : s)
        l << QString::fromStdString(k);
    return l.join(QStringLiteral(", "));
}

// The keys a (simple) TOML file sets, as section.key.
std::vector<std::string> tomlKeys(const std::string& text) {
    std::vector<std::string> keys;
    std::string section;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const auto first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#')
            continue;
        if (line[first] == '[') {
            section = line.substr(first + 1, line.find(']') - first - 1);
            continue;
        }
        const auto eq = line.find('=');
        if (eq == std::string::npos)
            continue;
        std::string key = line.substr(first, eq - first);
        key.erase(key.find_last_not_of(" \t") + 1);
        keys.push_back(section.empty() ? key : section + "." + key);
    }
    return keys;
}

const sa::frameworks::MappedSetting* findMapped(const Imported& im, const std::string& key) {
    for (const auto& m : im.mapped)
        if (m.setting == key)
            return &m;
    return nullptr;
}

bool hasIgnored(const Imported& im, const std::string& key) {
    for (const auto& i : im.ignored)
        if (i.setting == key)
            return true;
    return false;
}

// The published runs' documents.
struct PublishedRun {
    std::string id;
    sa::Model model;
    sa::Plan plan;
};

std::vector<PublishedRun> loadPublishedRuns() {
    const std::string dir = sa::testing::sourceDir() + "/tests/validation/published/";
    const json index = json::parse(readText(dir + "runs.json"));
    std::vector<PublishedRun> runs;
    for (const json& r : index["runs"]) {
        auto m = sa::loadModelFile(dir + r["model"].get<std::string>());
        auto p = sa::loadPlanFile(dir + r["plan"].get<std::string>());
        if (!m.ok() || !p.ok())
            qFatal("cannot load the published run %s", r["id"].get<std::string>().c_str());
        runs.push_back({r["id"].get<std::string>(), *m.value, *p.value});
    }
    return runs;
}

// The comment line the exporter writes last.
json scaleacrossComment(const std::string& text) {
    const std::string tag = "# scaleacross: ";
    const auto at = text.rfind(tag);
    if (at == std::string::npos)
        return json();
    const auto end = text.find('\n', at);
    return json::parse(text.substr(at + tag.size(), end - at - tag.size()), nullptr, false);
}

} // namespace

class TestFrameworksTorchtitan : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void flavors_data();
    void flavors();
    void publishedRuns_data();
    void publishedRuns();
    void everyKeyAccounted_data();
    void everyKeyAccounted();
    void currentLayout();
    void worldSize();
    void compileSetsElementwise_data();
    void compileSetsElementwise();
    void fusedKeptInTheComment();
    void cudaGraphsKeptInTheComment();
    void fsdpCopiesKeptInTheComment();
    void optimizerImplementation_data();
    void optimizerImplementation();
    void float8AllGatherIsFp8ParamGather();
    void rotateMethodIsCpRing();
    void scheduleSetsP2pOverlap_data();
    void scheduleSetsP2pOverlap();
    void refusals_data();
    void refusals();
    void hsdpImportsAsTheShardingGroup();
    void roundTripSamples_data();
    void roundTripSamples();
    void roundTripPublished_data();
    void roundTripPublished();
    void expertTensorParallelOne();
    void exportNotes();
};

// ---- flavors ---------------------------------------------------------------------

void TestFrameworksTorchtitan::flavors_data() {
    QTest::addColumn<QString>("flavor");
    QTest::addColumn<QString>("modelFile"); // the sample model with Meta's published dimensions
    QTest::newRow("8B") << "8B"
                        << "sample_clusters/models/llama3-8b.json";
    QTest::newRow("70B") << "70B"
                         << "sample_clusters/models/llama3-70b.json";
    QTest::newRow("405B") << "405B"
                          << "sample_clusters/models/llama3-405b.json";
}

// The flavor table with torchtitan's FeedForward rule gives Meta's Llama 3
// dimensions (the sample models were written from Meta's model cards).
void TestFrameworksTorchtitan::flavors() {
    QFETCH(QString, flavor);
    QFETCH(QString, modelFile);
    const std::string toml = "[model]\nname = \"llama3\"\nflavor = \"" + flavor.toStdString() +
                             "\"\n[parallelism]\ndata_parallel_shard_degree = 8\n"
                             "[activation_checkpoint]\nmode = \"full\"\n";
    const Imported im = importTorchtitan(toml, {"job.toml", "", 0, 0});
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    auto want = sa::loadModelFile(sourcePath(modelFile).toStdString());
    QVERIFY(want.ok());
    const json got = sa::toJson(*im.model);
    QCOMPARE(joined(differingKeys(got, sa::toJson(*want.value))), QString());
}

// ---- the published runs -------------------------------------------------------

void TestFrameworksTorchtitan::publishedRuns_data() {
    QTest::addColumn<QString>("id");
    int rows = 0;
    for (const PublishedRun& r : loadPublishedRuns()) {
        if (r.id.rfind("torchtitan-", 0) != 0)
            continue;
        QTest::newRow(r.id.c_str()) << QString::fromStdString(r.id);
        ++rows;
    }
    QVERIFY(rows >= 18);
}

void TestFrameworksTorchtitan::publishedRuns() {
    QFETCH(QString, id);
    PublishedRun run;
    for (const PublishedRun& r : loadPublishedRuns())
        if (r.id == id.toStdString())
            run = r;
    const std::string file = fixture(id.toStdString() + ".toml");
    ImportOptions opt;
    opt.file = file;
    opt.world_size = run.plan.parallelism.gpus(); // the launcher's GPUs of the run
    const Imported im = importTorchtitan(readText(file), opt);
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    QCOMPARE(im.plan->name, id.toStdString()); // from the file's stem

    const std::set<std::string> planDiff =
        differingKeys(sa::toJson(*im.plan), sa::toJson(run.plan));
    QCOMPARE(joined(planDiff), QString());
    QCOMPARE(joined(differingKeys(sa::toJson(*im.model), sa::toJson(run.model))), QString());

    if (run.plan.parallelism.pp > 1) {
        // torchtitan 9dec370 applies fully_shard (ZeRO-3) and, under PP,
        // reshard_after_forward=False with the gradient reduce-scatter
        // deferred to the last microbatch: the default policy, ZeRO-1 as
        // memory and traffic see it.
        QCOMPARE(im.plan->zero_stage, 3);
        QCOMPARE(im.plan->fsdp_reshard_after_forward, sa::FsdpReshard::Default);
        QCOMPARE(im.plan->effectiveZeroStage(), 1);
    }
    if (run.plan.schedule.kind == sa::ScheduleKind::Interleaved) {
        // torchtitan's chunks of a rank hold (7, 8) layers where the plan
        // shares a rank's 15 as (8, 7): reported, the per-rank counts kept.
        QVERIFY(hasIgnored(im, "experimental.pipeline_parallel_split_points"));
    }
}

void TestFrameworksTorchtitan::everyKeyAccounted_data() {
    QTest::addColumn<QString>("file");
    const QDir dir(sourcePath(QStringLiteral("tests/data/frameworks/torchtitan")));
    for (const QString& name : dir.entryList({QStringLiteral("*.toml")}, QDir::Files, QDir::Name))
        QTest::newRow(name.toUtf8().constData()) << dir.filePath(name);
}

// Every key of the fixtures is reported as mapped or ignored, exactly once.
void TestFrameworksTorchtitan::everyKeyAccounted() {
    QFETCH(QString, file);
    const std::string text = readText(file.toStdString());
    ImportOptions opt;
    opt.file = file.toStdString();
    opt.world_size = 0;
    Imported im = importTorchtitan(text, opt);
    if (!im.ok()) { // -1 shard degrees: give the run's world size
        for (std::int64_t w : {128, 256}) {
            opt.world_size = w;
            im = importTorchtitan(text, opt);
            if (im.ok())
                break;
        }
    }
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    std::map<std::string, int> seen;
    for (const auto& m : im.mapped) {
        QVERIFY2(!m.target.empty(), m.setting.c_str());
        ++seen[m.setting];
    }
    for (const auto& i : im.ignored) {
        QVERIFY2(!i.why.empty(), i.setting.c_str());
        ++seen[i.setting];
    }
    for (const std::string& k : tomlKeys(text))
        QVERIFY2(seen.count(k), ("not reported: " + k).c_str());
}

// ---- the current layout -------------------------------------------------------

void TestFrameworksTorchtitan::currentLayout() {
    // 3D with looped chunks, microbatch size, and the current split rule.
    const std::string toml = R"(
[job]
description = "3D run"
[model]
name = "llama3"
flavor = "8B"
converters = ["float8"]
[training]
local_batch_size = 8
seq_len = 4096
[parallelism]
data_parallel_shard_degree = 4
fsdp_reshard_after_forward = "always"
tensor_parallel_degree = 2
pipeline_parallel_degree = 4
pipeline_parallel_schedule = "Interleaved1F1B"
pipeline_parallel_microbatch_size = 2
[activation_checkpoint]
mode = "selective"
selective_ac_option = "op"
[compile]
enable = true
components = ["model", "loss"]
)";
    const Imported im = importTorchtitan(toml, {"3d.toml", "", 0, 0});
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    const sa::Plan& p = *im.plan;
    QCOMPARE(p.description, std::string("3D run"));
    QCOMPARE(p.parallelism, (sa::Parallelism{2, 1, 4, 4, 1}));
    QCOMPARE(p.sequence_length, std::int64_t(4096));
    QCOMPARE(p.micro_batch_sequences, std::int64_t(2));
    QCOMPARE(p.global_batch_sequences, std::int64_t(8 * 4));
    QCOMPARE(p.microbatches(), std::int64_t(4)); // local 8 / microbatch 2
    QCOMPARE(p.zero_stage, 3);
    QCOMPARE(p.fsdp_reshard_after_forward, sa::FsdpReshard::Always);
    QCOMPARE(p.recompute, sa::Recompute::SelectiveOp);
    QCOMPARE(p.schedule.kind, sa::ScheduleKind::Interleaved);
    QCOMPARE(p.schedule.virtual_stages, 2); // torchtitan's default for looped schedules
    // generate_llm_fqn_per_model_part(8 stages, 32 layers, 1, 1): 34
    // effective layers, 4 each and the first two 5; stage 0 loses one to the
    // embedding, stage 7 one to norm + output: 4 5 4 4 4 4 4 3. Rank r holds
    // stages r and r + 4.
    QVERIFY(p.placement);
    QCOMPARE(p.placement->layers_per_stage, (std::vector<int>{4 + 4, 5 + 4, 4 + 4, 4 + 3}));
    QCOMPARE(p.rank_order,
             (std::vector<sa::Dim>{sa::Dim::TP, sa::Dim::CP, sa::Dim::DP, sa::Dim::PP}));
    QCOMPARE(im.model->dtype, sa::DType::FP8);
    QCOMPARE(p.elementwise, sa::Elementwise::Compiled); // [compile] of the model component
    QVERIFY(findMapped(im, "compile.enable") != nullptr);

    // The example of docs/FRAMEWORKS-TORCHTITAN.md: layers_per_stage 11 gives
    // ceil((80 + 1 + 1) / 11) = 8 stages; generate_llm_fqn_per_model_part
    // spreads 82 effective layers as 11 11 10 10 10 10 10 10, less one for
    // the embedding (stage 0) and one for norm + output (stage 7).
    const std::string example = fixture("current-llama3-70b-3d.toml");
    const Imported ex = importTorchtitan(readText(example), {example, "", 0, 0});
    QVERIFY2(ex.ok(), problemsOf(ex).c_str());
    QCOMPARE(ex.plan->parallelism.gpus(), std::int64_t(256));
    QCOMPARE(ex.plan->schedule.virtual_stages, 2);
    QCOMPARE(ex.plan->microbatches(), std::int64_t(8));
    QVERIFY(ex.plan->placement);
    QCOMPARE(ex.plan->placement->layers_per_stage,
             (std::vector<int>{10 + 10, 11 + 10, 10 + 10, 10 + 9}));
    QCOMPARE(ex.plan->effectiveZeroStage(), 1);

    // Gradient accumulation without PP: local batch 2 is the micro batch.
    const std::string ga = R"(
[model]
flavor = "8B"
[training]
local_batch_size = 2
global_batch_size = 64
[parallelism]
data_parallel_shard_degree = 8
[activation_checkpoint]
mode = "none"
)";
    const Imported g = importTorchtitan(ga, {"ga.toml", "", 8, 0});
    QVERIFY2(g.ok(), problemsOf(g).c_str());
    QCOMPARE(g.plan->micro_batch_sequences, std::int64_t(2));
    QCOMPARE(g.plan->global_batch_sequences, std::int64_t(64));
    QCOMPARE(g.plan->microbatches(), std::int64_t(4));
    QCOMPARE(g.plan->sequence_length, std::int64_t(2048)); // Training.seq_len default
    QCOMPARE(g.plan->recompute, sa::Recompute::None);
    QCOMPARE(g.plan->zero_stage, 3);

    // DDP: replicate only.
    const std::string ddp = R"(
[model]
flavor = "debugmodel"
[parallelism]
data_parallel_replicate_degree = 8
data_parallel_shard_degree = 1
[activation_checkpoint]
mode = "full"
)";
    const Imported d = importTorchtitan(ddp, {"ddp.toml", "", 0, 0});
    QVERIFY2(d.ok(), problemsOf(d).c_str());
    QCOMPARE(d.plan->zero_stage, 0);
    QCOMPARE(d.plan->parallelism.dp, 8);
    QCOMPARE(d.plan->dp_bucket_mib, 100.0);                   // apply_ddp bucket_cap_mb
    QCOMPARE(d.plan->micro_batch_sequences, std::int64_t(8)); // Training.local_batch_size default
    QCOMPARE(d.model->layers, 6);                             // current debugmodel
    QCOMPARE(d.model->vocab, std::int64_t(2048));
    QCOMPARE(d.model->ffn_hidden, std::int64_t(768)); // int(2*1024/3)=682 -> multiple of 256
}

void TestFrameworksTorchtitan::worldSize() {
    const std::string toml = "[model]\nflavor = \"8B\"\n[parallelism]\ntensor_parallel_degree = 8\n"
                             "[activation_checkpoint]\nmode = \"full\"\n";
    // -1 (the default) without a world size: named.
    Imported im = importTorchtitan(toml, {"w.toml", "", 0, 0});
    QVERIFY(!im.ok());
    QCOMPARE(im.problems.front().path, std::string("parallelism.data_parallel_shard_degree"));
    QCOMPARE(im.problems.front().file, std::string("w.toml"));
    QVERIFY(im.needs_world_size);
    im = importTorchtitan(toml, {"w.toml", "", 64, 0});
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    QVERIFY(!im.needs_world_size);
    QCOMPARE(im.plan->parallelism.dp, 8);
    QVERIFY(findMapped(im, "parallelism.data_parallel_shard_degree") == nullptr ||
            findMapped(im, "parallelism.data_parallel_shard_degree")->value.find("-1") == 0);
    im = importTorchtitan(toml, {"w.toml", "", 60, 0});
    QVERIFY(!im.ok());
    // The vocabulary can be given.
    im = importTorchtitan(toml, {"w.toml", "named", 64, 32000});
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    QCOMPARE(im.model->vocab, std::int64_t(32000));
    QCOMPARE(im.plan->name, std::string("named"));
}

// torch.compile decides how the elementwise ops run: compiled by Inductor
// (fused, but for the complex rotary embedding) when the model component is
// compiled, eager (one kernel per op) otherwise, and eager is torchtitan's
// default.
void TestFrameworksTorchtitan::compileSetsElementwise_data() {
    QTest::addColumn<QString>("compile");
    QTest::addColumn<bool>("fused");
    QTest::newRow("absent") << "" << false;
    QTest::newRow("old layout, on") << "[training]\ncompile = true\n" << true;
    QTest::newRow("old layout, off") << "[training]\ncompile = false\n" << false;
    QTest::newRow("on, default components") << "[compile]\nenable = true\n" << true;
    QTest::newRow("on, model") << "[compile]\nenable = true\ncomponents = [\"model\"]\n" << true;
    QTest::newRow("on, loss only") << "[compile]\nenable = true\ncomponents = [\"loss\"]\n"
                                   << false;
    QTest::newRow("off") << "[compile]\nenable = false\ncomponents = [\"model\"]\n" << false;
}

void TestFrameworksTorchtitan::compileSetsElementwise() {
    QFETCH(QString, compile);
    QFETCH(bool, fused);
    const std::string toml = "[model]\nflavor = \"8B\"\n" + compile.toStdString() +
                             "[parallelism]\ndata_parallel_shard_degree = 8\n"
                             "[activation_checkpoint]\nmode = \"full\"\n";
    const Imported im = importTorchtitan(toml, {"c.toml", "", 0, 0});
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    QCOMPARE(im.plan->elementwise, fused ? sa::Elementwise::Compiled : sa::Elementwise::Eager);
    // Exported and read back, the setting survives as [compile].
    const auto out = sa::frameworks::exportTorchtitan(*im.model, *im.plan);
    QVERIFY(out.problems.empty());
    const Imported again = importTorchtitan(out.text, {"back.toml", "", 0, 0});
    QVERIFY2(again.ok(), problemsOf(again).c_str());
    QCOMPARE(again.plan->elementwise, im.plan->elementwise);
}

// Transformer Engine's fusion has no torchtitan setting: a fused plan is
// written with compile on, says so, and reads back fused through the
// scaleacross comment, unless compile is turned off in the file, which wins.
void TestFrameworksTorchtitan::fusedKeptInTheComment() {
    const std::string toml = "[model]\nflavor = \"8B\"\n[compile]\nenable = true\n"
                             "[parallelism]\ndata_parallel_shard_degree = 8\n"
                             "[activation_checkpoint]\nmode = \"full\"\n";
    Imported im = importTorchtitan(toml, {"c.toml", "", 0, 0});
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    sa::Plan plan = *im.plan;
    plan.elementwise = sa::Elementwise::Fused;
    const auto out = sa::frameworks::exportTorchtitan(*im.model, plan);
    QVERIFY2(out.problems.empty(), out.problems.empty() ? "" : out.problems[0].message.c_str());
    QVERIFY(out.text.find("enable = true") != std::string::npos);
    QVERIFY(std::any_of(out.notes.begin(), out.notes.end(), [](const std::string& n) {
        return n.rfind("elementwise fused: ", 0) == 0;
    }));
    const Imported back = importTorchtitan(out.text, {"back.toml", "", 0, 0});
    QVERIFY2(back.ok(), problemsOf(back).c_str());
    QCOMPARE(back.plan->elementwise, sa::Elementwise::Fused);

    std::string edited = out.text;
    const auto at = edited.find("[compile]\nenable = true");
    QVERIFY(at != std::string::npos);
    edited.replace(at, std::string("[compile]\nenable = true").size(), "[compile]\nenable = false");
    const Imported off = importTorchtitan(edited, {"edited.toml", "", 0, 0});
    QVERIFY2(off.ok(), problemsOf(off).c_str());
    QCOMPARE(off.plan->elementwise, sa::Elementwise::Eager);
    QVERIFY(std::any_of(off.ignored.begin(), off.ignored.end(),
                        [](const auto& i) { return i.setting == "# scaleacross: elementwise"; }));
}

void TestFrameworksTorchtitan::float8AllGatherIsFp8ParamGather() {
    // float8.enable_fsdp_float8_all_gather (and the later
    // quantize.linear.float8 spelling) is the plan's fp8_param_gather; the
    // export writes it back.
    for (const std::string& spelling :
         {std::string("[model]\nflavor = \"8B\"\nconverters = [\"float8\"]\n"
                      "[float8]\nenable_fsdp_float8_all_gather = true\n"),
          std::string("[model]\nflavor = \"8B\"\nconverters = [\"quantize.linear.float8\"]\n"
                      "[quantize.linear.float8]\nenable_fsdp_float8_all_gather = true\n")}) {
        const std::string toml = spelling + "[parallelism]\ndata_parallel_shard_degree = 8\n"
                                            "[activation_checkpoint]\nmode = \"full\"\n";
        Imported im = importTorchtitan(toml, {"c.toml", "", 0, 0});
        QVERIFY2(im.ok(), problemsOf(im).c_str());
        QCOMPARE(im.model->dtype, sa::DType::FP8);
        QVERIFY(im.plan->fp8_param_gather);
        const auto out = sa::frameworks::exportTorchtitan(*im.model, *im.plan);
        QVERIFY2(out.problems.empty(), out.problems.empty() ? "" : out.problems[0].message.c_str());
        QVERIFY2(out.text.find("enable_fsdp_float8_all_gather = true") != std::string::npos,
                 out.text.c_str());
        const Imported back = importTorchtitan(out.text, {"back.toml", "", 0, 0});
        QVERIFY2(back.ok(), problemsOf(back).c_str());
        QVERIFY(back.plan->fp8_param_gather);
    }
    // Off by default.
    Imported off = importTorchtitan("[model]\nflavor = \"8B\"\nconverters = [\"float8\"]\n"
                                    "[parallelism]\ndata_parallel_shard_degree = 8\n"
                                    "[activation_checkpoint]\nmode = \"full\"\n",
                                    {"c.toml", "", 0, 0});
    QVERIFY2(off.ok(), problemsOf(off).c_str());
    QVERIFY(!off.plan->fp8_param_gather);
}

void TestFrameworksTorchtitan::rotateMethodIsCpRing() {
    // torchtitan runs CP through PyTorch's context_parallel: all-gather
    // rotation unless context_parallel_rotate_method says alltoall (both
    // spellings of the key); the export writes alltoall back, and keeps
    // Transformer Engine's ring, which torchtitan cannot run, in its comment.
    const std::string base = "[model]\nflavor = \"8B\"\n[activation_checkpoint]\nmode = \"full\"\n";
    Imported plain = importTorchtitan(
        base + "[parallelism]\ndata_parallel_shard_degree = 2\ncontext_parallel_degree = 4\n",
        {"c.toml", "", 0, 0});
    QVERIFY2(plain.ok(), problemsOf(plain).c_str());
    QCOMPARE(plain.plan->cp_ring, sa::CpRing::TorchAllGather);
    for (const std::string cpSection : {"", "[experimental]\n"}) {
        const std::string toml = base + "[parallelism]\ndata_parallel_shard_degree = 2\n" +
                                 cpSection +
                                 "context_parallel_degree = 4\n"
                                 "context_parallel_rotate_method = \"alltoall\"\n";
        Imported im = importTorchtitan(toml, {"c.toml", "", 0, 0});
        QVERIFY2(im.ok(), problemsOf(im).c_str());
        QCOMPARE(im.plan->cp_ring, sa::CpRing::TorchAllToAll);
        const auto out = sa::frameworks::exportTorchtitan(*im.model, *im.plan);
        QVERIFY2(out.problems.empty(), out.problems.empty() ? "" : out.problems[0].message.c_str());
        QVERIFY2(out.text.find("context_parallel_rotate_method = \"alltoall\"") !=
                     std::string::npos,
                 out.text.c_str());
        const Imported back = importTorchtitan(out.text, {"back.toml", "", 0, 0});
        QVERIFY2(back.ok(), problemsOf(back).c_str());
        QCOMPARE(back.plan->cp_ring, sa::CpRing::TorchAllToAll);
    }
    // Transformer Engine's exchanges have no torchtitan setting: the
    // comment keeps them.
    for (const sa::CpRing ring : {sa::CpRing::TeP2p, sa::CpRing::TeAllGather, sa::CpRing::TeA2a}) {
        sa::Plan te = *plain.plan;
        te.cp_ring = ring;
        const std::string name = sa::toString(ring);
        const auto out = sa::frameworks::exportTorchtitan(*plain.model, te);
        QVERIFY2(out.problems.empty(), out.problems.empty() ? "" : out.problems[0].message.c_str());
        const json comment = scaleacrossComment(out.text);
        QVERIFY2(comment.is_object(), out.text.c_str());
        QCOMPARE(comment.value("cp_ring", std::string()), name);
        QVERIFY(std::any_of(out.notes.begin(), out.notes.end(), [&](const std::string& n) {
            return n.rfind("cp_ring " + name, 0) == 0;
        }));
        const Imported back = importTorchtitan(out.text, {"back.toml", "", 0, 0});
        QVERIFY2(back.ok(), problemsOf(back).c_str());
        QCOMPARE(back.plan->cp_ring, ring);
    }
    // Anything else is refused, naming the key.
    Imported bad = importTorchtitan(base + "[parallelism]\ncontext_parallel_degree = 2\n"
                                           "context_parallel_rotate_method = \"ring\"\n",
                                    {"c.toml", "", 0, 0});
    QVERIFY(!bad.ok());
    QVERIFY2(problemsOf(bad).find("parallelism.context_parallel_rotate_method") !=
                 std::string::npos,
             problemsOf(bad).c_str());
}

void TestFrameworksTorchtitan::cudaGraphsKeptInTheComment() {
    // torchtitan has no CUDA graph option for training: the export says so
    // and keeps the setting in its comment, which reads back.
    const std::string toml = "[model]\nflavor = \"8B\"\n"
                             "[parallelism]\ndata_parallel_shard_degree = 8\n"
                             "[activation_checkpoint]\nmode = \"full\"\n";
    Imported im = importTorchtitan(toml, {"c.toml", "", 0, 0});
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    QVERIFY(!im.plan->cuda_graphs);
    sa::Plan plan = *im.plan;
    plan.cuda_graphs = true;
    const auto out = sa::frameworks::exportTorchtitan(*im.model, plan);
    QVERIFY2(out.problems.empty(), out.problems.empty() ? "" : out.problems[0].message.c_str());
    QVERIFY(std::any_of(out.notes.begin(), out.notes.end(), [](const std::string& n) {
        return n.rfind("cuda_graphs true: torchtitan cannot express it", 0) == 0;
    }));
    const Imported back = importTorchtitan(out.text, {"back.toml", "", 0, 0});
    QVERIFY2(back.ok(), problemsOf(back).c_str());
    QVERIFY(back.plan->cuda_graphs);
}

void TestFrameworksTorchtitan::fsdpCopiesKeptInTheComment() {
    // fully_shard is FSDP2, which copies: the import says so. FSDP over
    // views has no torchtitan setting: the export notes it and keeps it in
    // the comment, which reads back.
    const std::string toml = "[model]\nflavor = \"8B\"\n"
                             "[parallelism]\ndata_parallel_shard_degree = 8\n"
                             "[activation_checkpoint]\nmode = \"full\"\n";
    Imported im = importTorchtitan(toml, {"c.toml", "", 0, 0});
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    QCOMPARE(im.plan->zero_stage, 3);
    QVERIFY(im.plan->fsdp_copies);
    sa::Plan plan = *im.plan;
    plan.fsdp_copies = false;
    const auto out = sa::frameworks::exportTorchtitan(*im.model, plan);
    QVERIFY2(out.problems.empty(), out.problems.empty() ? "" : out.problems[0].message.c_str());
    QCOMPARE(std::count_if(
                 out.notes.begin(), out.notes.end(),
                 [](const std::string& n) { return n.find("fsdp_copies") != std::string::npos; }),
             std::ptrdiff_t(1));
    QVERIFY(std::any_of(out.notes.begin(), out.notes.end(), [](const std::string& n) {
        return n.rfind("fsdp_copies false: torchtitan's FSDP2 copies", 0) == 0;
    }));
    const Imported back = importTorchtitan(out.text, {"back.toml", "", 0, 0});
    QVERIFY2(back.ok(), problemsOf(back).c_str());
    QVERIFY(!back.plan->fsdp_copies);
}

void TestFrameworksTorchtitan::optimizerImplementation_data() {
    QTest::addColumn<QString>("lines"); // the file's layout and [optimizer] lines
    QTest::addColumn<int>("impl");      // sa::OptimizerImpl, or -1: refused
    QTest::addColumn<bool>("bf16Moments");
    const int fused = int(sa::OptimizerImpl::Fused), foreach = int(sa::OptimizerImpl::Foreach);
    const QString current = "[parallelism]\ndata_parallel_shard_degree = 8\n";
    const QString old = "[training]\ndata_parallel_shard_degree = 8\n";
    // optimizer.implementation, "fused" by default since 2025-02-24; before
    // it optimizer.fused, false by default (foreach): an old-layout file
    // that says nothing ran foreach.
    QTest::newRow("current default") << current << fused << false;
    QTest::newRow("foreach") << current + "[optimizer]\nimplementation = \"foreach\"\n"
                             << foreach << false;
    QTest::newRow("for-loop") << current + "[optimizer]\nimplementation = \"for-loop\"\n"
                              << foreach << false;
    QTest::newRow("fused bf16 states")
        << current + "[optimizer]\nimplementation = \"fused_opt_states_bf16\"\n"
        << fused << true;
    QTest::newRow("unknown") << current + "[optimizer]\nimplementation = \"apex\"\n" << -1 << false;
    QTest::newRow("old default") << old << foreach << false;
    QTest::newRow("old fused") << old + "[optimizer]\nfused = true\n" << fused << false;
}

void TestFrameworksTorchtitan::optimizerImplementation() {
    QFETCH(QString, lines);
    QFETCH(int, impl);
    QFETCH(bool, bf16Moments);
    const std::string toml = "[model]\nflavor = \"8B\"\n[activation_checkpoint]\nmode = "
                             "\"full\"\n" +
                             lines.toStdString();
    Imported im = importTorchtitan(toml, {"c.toml", "", 0, 0});
    if (impl < 0) {
        QVERIFY(!im.ok());
        QVERIFY2(problemsOf(im).find("optimizer.implementation") != std::string::npos,
                 problemsOf(im).c_str());
        return;
    }
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    QCOMPARE(int(im.plan->optimizer_implementation), impl);
    QCOMPARE(im.plan->optimizer_moments == sa::OptimizerMoments::Bf16, bf16Moments);
    // The import's list says which setting decided, an old layout's unset
    // optimizer.fused too (the plan's own default is fused).
    int decided = 0;
    for (const auto& m : im.mapped)
        if (m.setting.rfind("optimizer.", 0) == 0 &&
            m.target.find("optimizer_implementation") != std::string::npos)
            ++decided;
    QCOMPARE(decided, QTest::currentDataTag() == QByteArray("current default") ? 0 : 1);
    // The export writes the current key, which reads back.
    const auto out = sa::frameworks::exportTorchtitan(*im.model, *im.plan);
    QVERIFY2(out.problems.empty(), out.problems.empty() ? "" : out.problems[0].message.c_str());
    QVERIFY(out.text.find("[optimizer]\nimplementation = ") != std::string::npos);
    const Imported back = importTorchtitan(out.text, {"back.toml", "", 0, 0});
    QVERIFY2(back.ok(), problemsOf(back).c_str());
    QCOMPARE(int(back.plan->optimizer_implementation), impl);
    QCOMPARE(back.plan->optimizer_moments, im.plan->optimizer_moments);
}

void TestFrameworksTorchtitan::scheduleSetsP2pOverlap_data() {
    QTest::addColumn<QString>("schedule"); // the [parallelism] lines replacing the fixture's
    QTest::addColumn<bool>("overlap");
    const QString lps = "pipeline_parallel_layers_per_stage = 11\n";
    QTest::newRow("Interleaved1F1B")
        << "pipeline_parallel_schedule = \"Interleaved1F1B\"\n" + lps << true;
    QTest::newRow("1F1B") << "pipeline_parallel_schedule = \"1F1B\"\n" << false;
    QTest::newRow("default (1F1B)") << QString() << false;
    QTest::newRow("GPipe") << "pipeline_parallel_schedule = \"GPipe\"\n" << true;
}

// torch.distributed.pipelining: Schedule1F1B waits for each steady-state
// send with the next receive; GPipe and Interleaved1F1B do not wait for
// sends before computing. Without a pipeline, the plan's default.
void TestFrameworksTorchtitan::scheduleSetsP2pOverlap() {
    QFETCH(QString, schedule);
    QFETCH(bool, overlap);
    QString toml = QString::fromStdString(readText(fixture("current-llama3-70b-3d.toml")));
    toml.replace("pipeline_parallel_schedule = \"Interleaved1F1B\"\n", QString())
        .replace("pipeline_parallel_layers_per_stage = 11\n", QString());
    toml.replace("pipeline_parallel_degree = 4\n", "pipeline_parallel_degree = 4\n" + schedule);
    const Imported im = importTorchtitan(toml.toStdString(), {"p2p.toml", "", 256, 0});
    QVERIFY2(im.ok(), problemsOf(im).c_str());
    QCOMPARE(im.plan->p2p_overlap, overlap);
    if (!schedule.isEmpty()) {
        const auto* m = findMapped(im, "parallelism.pipeline_parallel_schedule");
        QVERIFY(m);
        QVERIFY2(m->target.find("plan:/p2p_overlap") != std::string::npos, m->target.c_str());
    }
    // The schedule says it on export; the other setting travels in the comment.
    for (bool p2p : {overlap, !overlap}) {
        sa::Plan plan = *im.plan;
        plan.p2p_overlap = p2p;
        const Exported ex = exportTorchtitan(*im.model, plan);
        QVERIFY2(ex.ok(), problemsOf(ex).c_str());
        QCOMPARE(scaleacrossComment(ex.text).contains("p2p_overlap"), p2p != overlap);
        const Imported back = importTorchtitan(ex.text, {"back.toml", "", 0, 0});
        QVERIFY2(back.ok(), problemsOf(back).c_str());
        QCOMPARE(back.plan->p2p_overlap, p2p);
    }
    // No pipeline, no P2P: the plan's default.
    QString flat = toml;
    flat.replace("pipeline_parallel_degree = 4\n", "pipeline_parallel_degree = 1\n")
        .replace("data_parallel_shard_degree = 8\n", "data_parallel_shard_degree = 32\n")
        .replace("global_batch_size = 128\n", "global_batch_size = 512\n");
    const Imported noPp = importTorchtitan(flat.toStdString(), {"flat.toml", "", 256, 0});
    QVERIFY2(noPp.ok(), problemsOf(noPp).c_str());
    QCOMPARE(noPp.plan->p2p_overlap, true);
}

// ---- refusals -------------------------------------------------------------------

void TestFrameworksTorchtitan::refusals_data() {
    QTest::addColumn<QString>("toml");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("says");
    const QString ok = QStringLiteral("[activation_checkpoint]\nmode = \"full\"\n");
    QTest::newRow("unknown flavor") << ok + "[model]\nname = \"llama3\"\nflavor = \"13B\"\n"
                                    << "model.flavor"
                                    << "13B";
    QTest::newRow("masked flavor") << ok + "[model]\nflavor = \"8B_flex\"\n"
                                   << "model.flavor"
                                   << "block-causal";
    QTest::newRow("other model") << ok + "[model]\nname = \"deepseek_v3\"\nflavor = \"16B\"\n"
                                 << "model.name"
                                 << "deepseek_v3' flavor '16B";
    QTest::newRow("llama4") << ok + "[model]\nname = \"llama4\"\nflavor = \"17bx16e\"\n"
                            << "model.name"
                            << "17bx16e";
    QTest::newRow("layers per stage uneven")
        << ok + "[parallelism]\npipeline_parallel_degree = 4\n"
                "pipeline_parallel_layers_per_stage = 6\n"
                "pipeline_parallel_schedule = \"Interleaved1F1B\"\n"
        << "parallelism.pipeline_parallel_layers_per_stage"
        << "divide evenly";
    QTest::newRow("tp 0") << ok + "[parallelism]\ntensor_parallel_degree = 0\n"
                          << "parallelism.tensor_parallel_degree"
                          << "got 0";
    QTest::newRow("tp text") << ok + "[parallelism]\ntensor_parallel_degree = \"8\"\n"
                             << "parallelism.tensor_parallel_degree"
                             << "integer";
    QTest::newRow("shard -2") << ok + "[parallelism]\ndata_parallel_shard_degree = -2\n"
                              << "parallelism.data_parallel_shard_degree"
                              << "-1";
    QTest::newRow("world mismatch") << ok + "[parallelism]\ndata_parallel_shard_degree = 16\n"
                                    << "parallelism.data_parallel_shard_degree"
                                    << "world size";
    QTest::newRow("zbv") << ok + "[parallelism]\npipeline_parallel_degree = 2\n"
                                 "pipeline_parallel_schedule = \"ZBVZeroBubble\"\n"
                         << "parallelism.pipeline_parallel_schedule"
                         << "V-shaped";
    QTest::newRow("looped bfs") << ok + "[parallelism]\npipeline_parallel_degree = 2\n"
                                        "pipeline_parallel_schedule = \"LoopedBFS\"\n"
                                << "parallelism.pipeline_parallel_schedule"
                                << "LoopedBFS";
    QTest::newRow("ac every 2nd layer")
        << "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"2\"\n"
        << "activation_checkpoint.selective_ac_option"
        << "every 2 layers";
    QTest::newRow("ac default") << QString() << "activation_checkpoint.mode"
                                << "default";
    QTest::newRow("memory budget") << "[activation_checkpoint]\nmode = \"memory_budget\"\n"
                                   << "activation_checkpoint.mode"
                                   << "memory_budget";
    QTest::newRow("bf16 reduce") << ok + "[training]\nmixed_precision_reduce = \"bfloat16\"\n"
                                 << "training.mixed_precision_reduce"
                                 << "float32";
    QTest::newRow("fp32 compute") << ok + "[training]\nmixed_precision_param = \"float32\"\n"
                                  << "training.mixed_precision_param"
                                  << "float32";
    QTest::newRow("mx") << ok + "[model]\nconverters = [\"quantize.linear.mx\"]\n"
                        << "model.converters"
                        << "MX";
    QTest::newRow("ddp with tp") << ok + "[parallelism]\ndata_parallel_replicate_degree = 4\n"
                                         "data_parallel_shard_degree = 1\n"
                                         "tensor_parallel_degree = 2\n"
                                 << "parallelism.data_parallel_replicate_degree"
                                 << "DDP";
    QTest::newRow("accumulation around pp")
        << ok + "[training]\nlocal_batch_size = 8\nglobal_batch_size = 128\n"
                "[parallelism]\npipeline_parallel_degree = 2\ndata_parallel_shard_degree = 4\n"
        << "training.global_batch_size"
        << "accumulation";
    QTest::newRow("global not a multiple")
        << ok + "[training]\nlocal_batch_size = 2\nglobal_batch_size = 20\n"
        << "training.global_batch_size"
        << "multiple";
    QTest::newRow("unknown key") << ok + "[parallelism]\nwarp_drive = true\n"
                                 << "parallelism.warp_drive"
                                 << "not a torchtitan setting";
    QTest::newRow("two layouts") << ok + "[training]\ntensor_parallel_degree = 2\n"
                                         "[parallelism]\ntensor_parallel_degree = 2\n"
                                 << "training.tensor_parallel_degree"
                                 << "same setting";
    QTest::newRow("cpu offload") << ok + "[training]\nenable_cpu_offload = true\n"
                                 << "training.enable_cpu_offload"
                                 << "offload";
    QTest::newRow("csv schedule") << ok + "[parallelism]\npipeline_parallel_degree = 2\n"
                                          "pipeline_parallel_schedule_csv = \"s.csv\"\n"
                                  << "parallelism.pipeline_parallel_schedule_csv"
                                  << "CSV";
    QTest::newRow("bad split") << ok + "[parallelism]\npipeline_parallel_degree = 2\n"
                                       "pipeline_parallel_split_points = [\"layers.40\"]\n"
                               << "parallelism.pipeline_parallel_split_points"
                               << "layers.40";
    QTest::newRow("microbatch size") << ok + "[training]\nlocal_batch_size = 6\n"
                                             "[parallelism]\npipeline_parallel_degree = 2\n"
                                             "pipeline_parallel_microbatch_size = 4\n"
                                     << "parallelism.pipeline_parallel_microbatch_size"
                                     << "divide";
    QTest::newRow("not toml") << "[parallelism\ntensor_parallel_degree = 2\n"
                              << ""
                              << "TOML";
}

void TestFrameworksTorchtitan::refusals() {
    QFETCH(QString, toml);
    QFETCH(QString, path);
    QFETCH(QString, says);
    std::string text = toml.toStdString();
    if (text.find("[model]") == std::string::npos)
        text += "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
    const Imported im = importTorchtitan(text, {"bad.toml", "", 8, 0});
    QVERIFY2(!im.ok(), "accepted");
    bool found = false;
    for (const auto& p : im.problems)
        if (p.path == path.toStdString() && p.file == "bad.toml" &&
            p.message.find(says.toStdString()) != std::string::npos)
            found = true;
    QVERIFY2(found, problemsOf(im).c_str());
}

// HSDP: FSDP over dp_shard (x cp), dp_replicate copies of it; the plan's
// dp_shard, which the export writes back as the two degrees.
void TestFrameworksTorchtitan::hsdpImportsAsTheShardingGroup() {
    const std::string head = "[activation_checkpoint]\nmode = \"full\"\n[model]\nname = "
                             "\"llama3\"\nflavor = \"8B\"\n";
    for (const char* section : {"parallelism", "training"}) {
        const std::string toml = head + "[" + section +
                                 "]\ndata_parallel_replicate_degree = 4\n"
                                 "data_parallel_shard_degree = 8\n";
        const Imported im = importTorchtitan(toml, {"hsdp.toml", "", 32, 0});
        QVERIFY2(im.ok(), problemsOf(im).c_str());
        QCOMPARE(im.plan->parallelism.dp, 32);
        QCOMPARE(im.plan->dp_shard, 8);
        QCOMPARE(im.plan->dpReplicas(), 4);
        QCOMPARE(im.plan->zero_stage, 3);
    }
    // Over CP alone: each CP group shards, the dp_replicate ranks replicate.
    const Imported cp =
        importTorchtitan(head + "[parallelism]\ndata_parallel_replicate_degree = 2\n"
                                "data_parallel_shard_degree = 1\n"
                                "context_parallel_degree = 4\n",
                         {"hsdp.toml", "", 8, 0});
    QVERIFY2(cp.ok(), problemsOf(cp).c_str());
    QCOMPARE(cp.plan->parallelism.dp, 2);
    QCOMPARE(cp.plan->dpShard(), 1);
    QCOMPARE(cp.plan->dpReplicas(), 2);
    // Exported again: the same two degrees.
    const Imported eight = importTorchtitan(
        head +
            "[parallelism]\ndata_parallel_replicate_degree = 4\ndata_parallel_shard_degree = 8\n",
        {"hsdp.toml", "", 32, 0});
    QVERIFY2(eight.ok(), problemsOf(eight).c_str());
    const auto ex = sa::frameworks::exportTorchtitan(*eight.model, *eight.plan);
    QVERIFY2(ex.ok(), ex.problems.empty() ? "" : ex.problems.front().message.c_str());
    QVERIFY(ex.text.find("data_parallel_replicate_degree = 4\n") != std::string::npos);
    QVERIFY(ex.text.find("data_parallel_shard_degree = 8\n") != std::string::npos);
    const Imported back = importTorchtitan(ex.text, {"back.toml", "", 0, 0});
    QVERIFY2(back.ok(), problemsOf(back).c_str());
    QCOMPARE(back.plan->dp_shard, 8);
}

// ---- export -> import -----------------------------------------------------------

void TestFrameworksTorchtitan::roundTripSamples_data() {
    QTest::addColumn<QString>("scenario");
    const QDir dir(sourcePath(QStringLiteral("sample_clusters/scenarios")));
    for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
        QTest::newRow(name.toUtf8().constData()) << name;
    QVERIFY(dir.entryList({QStringLiteral("*.json")}, QDir::Files).size() >= 7);
}

namespace {

// Export, import, compare; the model exactly when it is no flavor (its
// dimensions travel in the comment), else its dimensions.
void roundTrip(const sa::Model& model, const sa::Plan& plan) {
    const Exported ex = exportTorchtitan(model, plan);
    QVERIFY2(ex.ok(), problemsOf(ex).c_str());
    const json comment = scaleacrossComment(ex.text);
    QVERIFY2(comment.is_object(), ex.text.c_str());
    // One trailing comment line.
    QCOMPARE(std::count(ex.text.begin(), ex.text.end(), '\n') > 0, true);
    QVERIFY(ex.text.rfind("# scaleacross: ") > ex.text.rfind("[activation_checkpoint]"));
    // Each key kept in the comment is explained once: a note of its own
    // ("fp8_linear transformer-engine: ...") is not followed by the generic
    // "torchtitan cannot express it" for the same key.
    for (auto it = comment.begin(); it != comment.end(); ++it) {
        const std::string& key = it.key();
        const auto count = std::count_if(ex.notes.begin(), ex.notes.end(), [&key](const auto& n) {
            return n.size() > key.size() && n.compare(0, key.size(), key) == 0 &&
                   std::string(" :'").find(n[key.size()]) != std::string::npos;
        });
        QVERIFY2(count <= 1, (key + " noted " + std::to_string(count) + " times").c_str());
    }
    const Imported im = importTorchtitan(ex.text, {"export.toml", "", 0, 0});
    QVERIFY2(im.ok(), (problemsOf(im) + ex.text).c_str());
    QCOMPARE(sa::dumpCanonical(sa::toJson(*im.plan)), sa::dumpCanonical(sa::toJson(plan)));
    QVERIFY(*im.plan == plan);
    if (comment.contains("model"))
        QCOMPARE(sa::dumpCanonical(sa::toJson(*im.model)), sa::dumpCanonical(sa::toJson(model)));
    else
        QCOMPARE(joined(differingKeys(sa::toJson(*im.model), sa::toJson(model))), QString());
}

} // namespace

void TestFrameworksTorchtitan::roundTripSamples() {
    QFETCH(QString, scenario);
    const sa::Scenario s = sa::testing::loadSampleScenario(scenario.toStdString());
    roundTrip(s.model, s.plan);
}

void TestFrameworksTorchtitan::roundTripPublished_data() {
    QTest::addColumn<QString>("id");
    for (const PublishedRun& r : loadPublishedRuns())
        QTest::newRow(r.id.c_str()) << QString::fromStdString(r.id);
}

// Every published plan survives; those with zero_stage 0 or 3 say it in
// torchtitan's own keys, ZeRO-1/2 (which torchtitan lacks) are written as
// FSDP and kept in the comment. Expert beside context parallelism (Grok-1's
// NeMo recipe) is written as torchtitan's EP group over the cp ranks first,
// as the plan folds them.
void TestFrameworksTorchtitan::roundTripPublished() {
    QFETCH(QString, id);
    for (const PublishedRun& r : loadPublishedRuns()) {
        if (r.id != id.toStdString())
            continue;
        roundTrip(r.model, r.plan);
        if (QTest::currentTestFailed())
            return;
        const Exported ex = exportTorchtitan(r.model, r.plan);
        const json comment = scaleacrossComment(ex.text);
        const bool native =
            r.plan.zero_stage == 3 ||
            (r.plan.zero_stage == 0 &&
             r.plan.parallelism.tp * r.plan.parallelism.pp * r.plan.parallelism.cp == 1);
        if (native && r.plan.parallelism.dp > 1)
            QVERIFY2(!comment.contains("zero_stage"), comment.dump().c_str());
        if ((r.plan.zero_stage == 1 || r.plan.zero_stage == 2) && r.plan.parallelism.dp > 1)
            QVERIFY2(comment.contains("zero_stage"), comment.dump().c_str());
    }
}

// Experts on one TP rank (torchtitan's expert_tensor_parallel_degree 1, its
// default): EP takes the tp x cp ranks first, the plan's etp 1. Written and
// read back; an EP group smaller than tp x cp is refused at /parallelism/ep.
void TestFrameworksTorchtitan::expertTensorParallelOne() {
    const sa::Scenario s = sa::testing::loadSampleScenario("two-buildings-mixtral.json");
    sa::Plan p = s.plan;
    p.placement.reset();
    p.parallelism = {2, 1, 4, 16, 8};
    p.parallelism.etp = 1;
    roundTrip(s.model, p);
    if (QTest::currentTestFailed())
        return;
    const Exported ex = exportTorchtitan(s.model, p);
    QVERIFY(ex.text.find("expert_tensor_parallel_degree = 1\n") != std::string::npos);
    p.parallelism = {4, 1, 4, 16, 2};
    p.parallelism.etp = 1;
    const Exported small = exportTorchtitan(s.model, p);
    QVERIFY(!small.ok());
    QVERIFY2(small.problems.size() == 1 && small.problems.front().path == "/parallelism/ep",
             problemsOf(small).c_str());
}

void TestFrameworksTorchtitan::exportNotes() {
    // The 405B production sample: a flavor, ZeRO-2, interleaved.
    const sa::Scenario s = sa::testing::loadSampleScenario("single-building-405b.json");
    const Exported ex = exportTorchtitan(s.model, s.plan);
    QVERIFY2(ex.ok(), problemsOf(ex).c_str());
    QVERIFY(ex.text.find("flavor = \"405B\"") != std::string::npos);
    QVERIFY(ex.text.find("pipeline_parallel_schedule = \"Interleaved1F1B\"") != std::string::npos);
    bool zeroNote = false;
    for (const auto& n : ex.notes)
        zeroNote = zeroNote || n.find("zero_stage 2") != std::string::npos;
    QVERIFY(zeroNote);
    QVERIFY(ex.text.find("# Note: zero_stage 2") != std::string::npos);

    // A model that is no flavor: the note names the dimensions to register.
    const sa::Scenario g = sa::testing::loadSampleScenario("single-building-gpt3-175b.json");
    const Exported eg = exportTorchtitan(g.model, g.plan);
    QVERIFY2(eg.ok(), problemsOf(eg).c_str());
    bool flavorNote = false;
    for (const auto& n : eg.notes)
        flavorNote =
            flavorNote || (n.find("register flavor") != std::string::npos &&
                           n.find("dim=" + std::to_string(g.model.hidden)) != std::string::npos);
    QVERIFY(flavorNote);
}

QTEST_GUILESS_MAIN(TestFrameworksTorchtitan)
#include "tst_frameworks_torchtitan.moc"

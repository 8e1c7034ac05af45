// Strict loading, canonical saving and cross-document checks of the
// cluster, model, plan and scenario documents, and `scaleacross check`.

#include "cost/evaluate.h"
#include "formats/documents.h"
#include "model/framework_defaults.h"

#include "../common/files.h"
#include "../common/fixtures.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using nlohmann::json;
using sa::testing::readAll;
using sa::testing::writeFile;

namespace {

// The same documents as tests/data/formats/{cluster,model,plan}.json.
const char* const kCluster = R"({
  "format": "scaleacross.cluster", "version": 1, "name": "two-buildings",
  "description": "Two buildings, 1024 H100 each, joined by a long-haul link",
  "gpu_models": {
    "H100": {"peak_tflops": {"bf16": 989, "fp8": 1979}, "memory_gib": 80, "hbm_tbps": 3.35, "sms": 132},
    "A100": {"peak_tflops": {"bf16": 312}, "memory_gib": 80, "hbm_tbps": 2.039}
  },
  "buildings": [
    {"name": "B1", "region": "us-east", "gpu_model": "H100", "gpus": 1024, "gpus_per_host": 8,
     "scale_up_gbps": 3600, "scale_out_gbps": 400, "zone_gpus": 512, "zone_oversubscription": 2},
    {"name": "B2", "region": "us-west", "gpu_model": "H100", "gpus": 1024, "gpus_per_host": 8,
     "scale_up_gbps": 3600, "scale_out_gbps": 400}
  ],
  "links": [{"between": ["B1", "B2"], "bandwidth_gbps": 25600, "latency_ms": 5, "technology": "tcp-64"}],
  "technologies": {
    "tcp-64": {"efficiency": 0.9, "window_mib": 16, "flows": 64, "loss_rate": 1e-6, "lossless": false}
  }
})";

const char* const kModel = R"({
  "format": "scaleacross.model", "version": 1, "name": "llama3-8b",
  "layers": 32, "hidden": 4096, "ffn_hidden": 14336, "heads": 32, "kv_heads": 8, "vocab": 128256
})";

const char* const kPlan = R"({
  "format": "scaleacross.plan", "version": 1, "name": "pp-across-buildings",
  "sequence_length": 8192, "global_batch_sequences": 512, "micro_batch_sequences": 1,
  "parallelism": {"tp": 8, "pp": 4, "dp": 64},
  "placement": {"runs": [{"stages": [0, 1], "building": "B1"}, {"stages": [2, 3], "building": "B2"}]},
  "link_technologies": {"B1-B2": {"flows": 32}}
})";

// Only the required keys.
const char* const kMinimalCluster =
    R"({"format": "scaleacross.cluster", "version": 1, "name": "one",
  "gpu_models": {"G": {"peak_tflops": {"bf16": 100}, "memory_gib": 16, "hbm_tbps": 1}},
  "buildings": [{"name": "B", "region": "r", "gpu_model": "G", "gpus": 8, "gpus_per_host": 8,
                 "scale_up_gbps": 100, "scale_out_gbps": 100}]})";
const char* const kMinimalModel = R"({"format": "scaleacross.model", "version": 1, "name": "m",
  "layers": 2, "hidden": 64, "ffn_hidden": 256, "heads": 4, "kv_heads": 1, "vocab": 1000})";
const char* const kMinimalPlan = R"({"format": "scaleacross.plan", "version": 1, "name": "p",
  "sequence_length": 128, "global_batch_sequences": 4, "micro_batch_sequences": 1,
  "parallelism": {"tp": 1, "pp": 1, "dp": 1}})";

// Every optional key set to something other than its default.
const char* const kFullModel = R"({"format": "scaleacross.model", "version": 1, "name": "moe",
  "description": "sparse", "layers": 24, "hidden": 2048, "ffn_hidden": 8192, "heads": 16,
  "kv_heads": 4, "vocab": 50000, "mlp": "gelu", "dtype": "fp8", "tied_embeddings": true,
  "moe": {"experts": 16, "top_k": 2, "expert_ffn_hidden": 1408, "shared_experts": 1,
          "dense_layers": 1, "capacity_factor": 1.25, "pad_to_capacity": false, "router_groups": 4,
          "router_group_topk": 2}, "sliding_window": {"size": 4096, "full_every": 2}})";
// Multi-head latent attention, DeepSeek-V3's widths (its config.json).
const char* const kMlaModel = R"({"format": "scaleacross.model", "version": 1, "name": "mla",
  "layers": 4, "hidden": 7168, "ffn_hidden": 18432, "heads": 128, "vocab": 129280,
  "mla": {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_head_dim": 128, "rope_head_dim": 64,
          "v_head_dim": 128}, "mtp_layers": 1})";
const char* const kFullPlan = R"({"format": "scaleacross.plan", "version": 1, "name": "full",
  "description": "everything", "sequence_length": 4096, "global_batch_sequences": 256,
  "micro_batch_sequences": 2, "parallelism": {"tp": 4, "cp": 2, "pp": 4, "dp": 16, "ep": 8},
  "zero_stage": 3, "recompute": "selective", "sequence_parallel": false,
  "schedule": {"kind": "interleaved", "virtual_stages": 2}, "rank_order": ["cp", "tp", "dp", "pp"],
  "placement": {"runs": [{"stages": [0, 3], "replicas": [0, 7], "building": "B1"},
                         {"stages": [0, 3], "replicas": [8, 15], "building": "B2"}],
                "layers_per_stage": [5, 7, 6, 6]},
  "collectives": {"dp": "hierarchical", "tp": "ring", "ep": "auto"},
  "link_technologies": {"B1-B2": {"technology": "tcp", "flows": 64}, "B2-B3": {}},
  "dp_overlap": false, "p2p_overlap": false, "ep_overlap": true, "ep_dispatcher": "flex",
  "ep_dispatcher_sms": 32,
  "dp_bucket_mib": 12.5, "grad_reduce_bytes": 2,
  "flash_attention": false, "attention_kernel": "flash2"})";

std::string dataDir() {
    return sa::testing::sourceDir() + "/tests/data/formats";
}
QString dataPath(const QString& rel) {
    return QString::fromStdString(dataDir()) + '/' + rel;
}

QStringList strings(const std::vector<sa::Diagnostic>& ds) {
    QStringList out;
    for (const auto& d : ds)
        out << QString::fromStdString(d.str());
    return out;
}

std::string scenarioText() {
    json s = {{"format", "scaleacross.scenario"}, {"version", 1}};
    s["cluster"] = json::parse(kCluster);
    s["model"] = json::parse(kModel);
    s["plan"] = json::parse(kPlan);
    return s.dump();
}

std::string baseText(const QString& kind) {
    if (kind == "cluster")
        return kCluster;
    if (kind == "model")
        return kModel;
    if (kind == "plan")
        return kPlan;
    return scenarioText();
}

// Each edit is "/json/pointer=JSON" (set) or "-/json/pointer" (remove).
std::string edited(const std::string& text, const QStringList& edits) {
    json j = json::parse(text);
    for (const QString& e : edits) {
        const std::string s = e.toStdString();
        if (s.front() == '-') {
            const json::json_pointer ptr(s.substr(1));
            json& parent = j.at(ptr.parent_pointer());
            if (parent.is_array())
                parent.erase(std::stoul(ptr.back()));
            else
                parent.erase(ptr.back());
        } else {
            const auto eq = s.find('=');
            j[json::json_pointer(s.substr(0, eq))] = json::parse(s.substr(eq + 1));
        }
    }
    return j.dump();
}

std::vector<sa::Diagnostic> problemsOf(const QString& kind, const std::string& text) {
    if (kind == "cluster")
        return sa::parseCluster(text, "cluster.json").problems;
    if (kind == "model")
        return sa::parseModel(text, "model.json").problems;
    if (kind == "plan")
        return sa::parsePlan(text, "plan.json").problems;
    auto loaded = sa::parseScenario(text, "scenario.json", dataDir());
    return loaded.problems;
}

template <class T> T parsed(const sa::Loaded<T>& l) {
    if (!l.ok())
        qWarning() << strings(l.problems);
    return l.value.value_or(T{});
}

sa::Scenario baseScenario() {
    return {parsed(sa::parseCluster(kCluster, "cluster.json")),
            parsed(sa::parseModel(kModel, "model.json")),
            parsed(sa::parsePlan(kPlan, "plan.json"))};
}

} // namespace

class TestFormats : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void goodDocuments_data();
    void goodDocuments();
    void defaults();
    void ncclKnobDefaults();
    void frameworkDefaults_data();
    void frameworkDefaults();
    void frameworkKnobOverrides();
    void crossEntropyKey();
    void optimizerPrecisionKeys();
    void frameworkP2pFollowsSchedule_data();
    void frameworkP2pFollowsSchedule();
    void frameworkRoundTrip();
    void frameworkEvaluatesAsWrittenOut();
    void elementwiseValues();
    void cpRingValues();
    void cudaGraphsValues();
    void fp8ParamGatherValues();
    void sequenceParallelRegatherValues();
    void dropoutValues();
    void gradAccumulationFusionValues();
    void gradReduceScatterValues();
    void ropeFusionValues();
    void fsdpCopiesValues();
    void optimizerImplementationValues();
    void frameworkUnknown();
    void optionalKeys();
    void badDocuments_data();
    void badDocuments();
    void crossChecks_data();
    void crossChecks();
    void crossChecksOnValuesBuiltInCode();
    void roundTrip_data();
    void roundTrip();
    void roundTripBuiltInCode();
    void expertTensorParallelReadsBack();
    void canonicalText();
    void scenarioRelativePaths();
    void scenarioReferencedFileProblems();
    void loadAnyFileDetectsKind();
    void truncatedInputNeverThrows();
    void readTextFileErrors();
    void saveReplacesContents();
    void saveKeepsOldFileWhenDirectoryUnwritable();
    void saveKeepsOldFileWhenWriteFails();
    void cliCheck_data();
    void cliCheck();
};

void TestFormats::goodDocuments_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("text");
    QTest::newRow("cluster") << "cluster" << kCluster;
    QTest::newRow("model") << "model" << kModel;
    QTest::newRow("plan") << "plan" << kPlan;
    QTest::newRow("minimal cluster") << "cluster" << kMinimalCluster;
    QTest::newRow("minimal model") << "model" << kMinimalModel;
    QTest::newRow("minimal plan") << "plan" << kMinimalPlan;
    QTest::newRow("full model") << "model" << kFullModel;
    QTest::newRow("selective recompute modules")
        << "plan"
        << QString::fromStdString(
               edited(kPlan, {"/recompute=\"selective\"",
                              "/recompute_modules=[\"core_attn\", \"moe_act\", \"layernorm\"]"}));
    QTest::newRow("selective recompute of no module")
        << "plan"
        << QString::fromStdString(
               edited(kPlan, {"/recompute=\"selective\"", "/recompute_modules=[]"}));
    QTest::newRow("latent attention model") << "model" << kMlaModel;
    QTest::newRow("latent attention without a query latent")
        << "model"
        << QString::fromStdString(
               edited(kMlaModel, {"/mla/q_lora_rank=0", "/mla/rope_head_dim=0"}));
    QTest::newRow("full plan") << "plan" << kFullPlan;
    QTest::newRow("inline scenario") << "scenario" << QString::fromStdString(scenarioText());
    QTest::newRow("power-capped gpu")
        << "cluster"
        << QString::fromStdString(edited(kCluster, {"/gpu_models/H100/gemm_efficiency_fp8=0.65",
                                                    "/gpu_models/H100/architecture=\"hopper\"",
                                                    "/gpu_models/H100/tdp_w=700",
                                                    "/gpu_models/H100/power_limit_w=500"}));
    QTest::newRow("gpu clocks") << "cluster"
                                << QString::fromStdString(edited(
                                       kCluster, {"/gpu_models/H100/boost_clock_mhz=1980",
                                                  "/gpu_models/H100/sustained_clock_mhz=1755"}));
    QTest::newRow("ecmp routing") << "cluster"
                                  << QString::fromStdString(
                                         edited(kCluster, {R"(/routing={"policy": "ecmp",
            "ecmp_metric": "latency", "ecmp_tolerance": 0.05})"}));
    QTest::newRow("lowest-latency routing")
        << "cluster"
        << QString::fromStdString(edited(kCluster, {R"(/routing={"policy": "lowest-latency"})"}));
    // NCCL knobs, host limits and PFC headroom (docs/FORMATS.md).
    QTest::newRow("nccl knobs")
        << "cluster"
        << QString::fromStdString(edited(
               kCluster, {R"(/technologies/roce-wan={"nccl_channels": 4, "qps_per_connection": 2,
                   "buffsize_mib": 16, "pfc_headroom_mib": 64, "port_gbps": 400,
                   "lossy_loss_rate": 1e-5})",
                          R"(/technologies/tcp-host={"lossless": false, "window_mib": 16,
                   "sockets_per_connection": 8, "host_net_cores": 16, "host_gbps_per_core": 30,
                   "max_flows_per_host": 128})",
                          R"(/technologies/tcp-flows={"sockets_per_connection": 8, "flows": 12,
                   "host_net_cores": 4})"}));
    QTest::newRow("nccl knobs on a link override")
        << "plan"
        << QString::fromStdString(
               edited(kPlan, {R"(/link_technologies/B1-B2={"nccl_channels": 8, "buffsize_mib": 0.5,
                          "qps_per_connection": 4, "flows": 16})",
                              R"(/link_technologies/B2-B3={"technology": "tcp",
                          "sockets_per_connection": 64})"}));
    QTest::newRow("kv heads replicated")
        << "model" << QString::fromStdString(edited(kModel, {"/kv_heads=1"}));
    QTest::newRow("gpu model with slash")
        << "cluster"
        << QString::fromStdString(edited(
               kCluster, {R"(/gpu_models/H100~1SXM={"peak_tflops": {"bf16": 989}, "memory_gib": 80,
                                                      "hbm_tbps": 3.35})",
                          "/buildings/1/gpu_model=\"H100/SXM\""}));
}

void TestFormats::goodDocuments() {
    QFETCH(QString, kind);
    QFETCH(QString, text);
    const auto problems = problemsOf(kind, text.toStdString());
    QCOMPARE(strings(problems), QStringList());
}

void TestFormats::defaults() {
    const sa::Cluster c = parsed(sa::parseCluster(kMinimalCluster, "c.json"));
    QCOMPARE(c.buildings.size(), std::size_t(1));
    QCOMPARE(c.buildings[0].zone_gpus, std::int64_t(8)); // one zone
    QCOMPARE(c.buildings[0].zone_oversubscription, 1.0);
    QCOMPARE(c.gpu_models.at("G").name, std::string("G"));
    QCOMPARE(c.gpu_models.at("G").sms, 108);
    QCOMPARE(c.gpu_models.at("G").gemm_efficiency, 0.8);
    QCOMPARE(c.gpu_models.at("G").peak_tflops_fp8, 0.0);
    QCOMPARE(c.gpu_models.at("G").gemm_efficiency_fp8, 0.7);
    QCOMPARE(c.gpu_models.at("G").tdp_w, 0.0);
    QCOMPARE(c.gpu_models.at("G").power_limit_w, 0.0);
    QCOMPARE(c.routing.policy, sa::RoutingPolicy::ShortestHops);
    QCOMPARE(c.routing.ecmp_metric, sa::EcmpMetric::Hops);
    QCOMPARE(c.routing.ecmp_tolerance, 0.0);
    // The default is not written: a cluster without routing saves as before.
    QVERIFY(!sa::toJson(c).contains("routing"));
    QVERIFY(c.links.empty());

    const sa::Cluster two = parsed(sa::parseCluster(kCluster, "c.json"));
    QCOMPARE(two.links[0].name, std::string("B1-B2"));
    QCOMPARE(two.technologies.at("tcp-64").mtu_bytes, 4096.0);
    const sa::Cluster roce =
        parsed(sa::parseCluster(edited(kCluster, {"-/links/0/technology"}), "c.json"));
    QCOMPARE(roce.links[0].technology, std::string("roce"));

    const sa::Plan p = parsed(sa::parsePlan(kMinimalPlan, "p.json"));
    QCOMPARE(p.parallelism.cp, 1);
    QCOMPARE(p.parallelism.ep, 1);
    QCOMPARE(p.zero_stage, 1);
    QCOMPARE(p.schedule.kind, sa::ScheduleKind::OneFOneB);
    QCOMPARE(p.schedule.virtual_stages, 1);
    QCOMPARE(p.p2p_overlap, true); // sends beside compute, as before the key existed
    QVERIFY(!sa::toJson(p).contains("p2p_overlap"));
    QCOMPARE(p.ep_overlap, false); // Megatron-Core's default
    QVERIFY(!sa::toJson(p).contains("ep_overlap"));
    QCOMPARE(p.rank_order,
             (std::vector<sa::Dim>{sa::Dim::TP, sa::Dim::CP, sa::Dim::PP, sa::Dim::DP}));
    QVERIFY(!p.placement);
    QVERIFY(p.collectives.empty());

    // A run without ranges covers the whole grid.
    const sa::Plan withRuns = parsed(sa::parsePlan(kPlan, "p.json"));
    QCOMPARE(withRuns.placement->runs[0].replica_first, 0);
    QCOMPARE(withRuns.placement->runs[0].replica_last, 63);
    QCOMPARE(withRuns.placement->runs[1].stage_first, 2);

    const sa::Model m = parsed(sa::parseModel(kMinimalModel, "m.json"));
    QCOMPARE(m.mlp, sa::MlpKind::SwiGlu);
    QCOMPARE(m.dtype, sa::DType::BF16);
    QVERIFY(!m.moe);
}

// Keys with a default may be left out: a name comes from the file, a
// building's region is its own, the only GPU model is everyone's, kv_heads is
// heads, tp and pp are 1, the micro batch one sequence.
// A NCCL profile's knobs left out take NCCL's defaults; flows follow them
// unless given (docs/FORMATS.md).
void TestFormats::ncclKnobDefaults() {
    const sa::Cluster c = parsed(sa::parseCluster(
        edited(kCluster, {R"(/technologies/a={"buffsize_mib": 8})",
                          R"(/technologies/b={"nccl_channels": 4, "qps_per_connection": 2})",
                          R"(/technologies/c={"sockets_per_connection": 16, "host_net_cores": 8})",
                          R"(/technologies/d={"nccl_channels": 4, "flows": 3})"}),
        "c.json"));
    const sa::Technology& a = c.technologies.at("a");
    QCOMPARE(a.nccl_channels, 2);
    QCOMPARE(a.qps_per_connection, 1);
    QCOMPARE(a.sockets_per_connection, 0);
    QCOMPARE(a.buffsize_mib, 8.0);
    QCOMPARE(a.flows, 2);
    const sa::Technology& b = c.technologies.at("b");
    QCOMPARE(b.flows, 8);
    QCOMPARE(b.buffsize_mib, 4.0);
    const sa::Technology& t = c.technologies.at("c");
    QCOMPARE(t.qps_per_connection, 0);
    QCOMPARE(t.flows, 32);
    QCOMPARE(t.host_net_cores, 8);
    QCOMPARE(t.host_gbps_per_core, 42.0);
    QCOMPARE(c.technologies.at("d").flows, 3);
    // The legacy profile is untouched.
    const sa::Technology& legacy = c.technologies.at("tcp-64");
    QCOMPARE(legacy.nccl_channels, 0);
    QCOMPARE(legacy.flows, 64);
    // The writer leaves out a derived flow count and keeps a given one.
    const json j = sa::toJson(c);
    QVERIFY(!j["technologies"]["b"].contains("flows"));
    QCOMPARE(j["technologies"]["d"]["flows"].get<int>(), 3);
    QCOMPARE(j["technologies"]["tcp-64"]["flows"].get<int>(), 64);
    QVERIFY(!j["technologies"]["tcp-64"].contains("nccl_channels"));
}

void TestFormats::optionalKeys() {
    const sa::Plan p =
        parsed(sa::parsePlan(edited(kPlan, {"-/name", "-/parallelism/tp", "-/parallelism/pp",
                                            "-/micro_batch_sequences", "-/placement"}),
                             "plans/pp-across.json"));
    QCOMPARE(p.name, std::string("pp-across"));
    QCOMPARE(p.parallelism.tp, 1);
    QCOMPARE(p.parallelism.pp, 1);
    QCOMPARE(p.micro_batch_sequences, std::int64_t(1));
    QCOMPARE(parsed(sa::parsePlan(edited(kPlan, {"-/name"}), "")).name, std::string("plan"));

    const sa::Model m =
        parsed(sa::parseModel(edited(kModel, {"-/name", "-/kv_heads"}), "m/x.json"));
    QCOMPARE(m.name, std::string("x"));
    QCOMPARE(m.kv_heads, m.heads);

    const sa::Cluster c = parsed(sa::parseCluster(
        edited(kMinimalCluster, {"-/name", "-/buildings/0/region", "-/buildings/0/gpu_model"}),
        "/tmp/site.cluster.json"));
    QCOMPARE(c.name, std::string("site.cluster"));
    QCOMPARE(c.buildings[0].region, c.buildings[0].name);
    QCOMPARE(c.buildings[0].gpu_model, std::string("G"));

    // Inline parts of a scenario are named after the scenario file.
    const std::string scenario = R"({"format": "scaleacross.scenario", "version": 1,
        "cluster": )" + edited(kCluster, {"-/name"}) +
                                 R"(, "model": )" + edited(kModel, {"-/name"}) + R"(, "plan": )" +
                                 edited(kPlan, {"-/name"}) + "}";
    const auto s = sa::parseScenario(scenario, "runs/three-dc.json", "runs");
    QVERIFY2(s.ok(), s.problems.empty() ? "" : s.problems.front().str().c_str());
    QCOMPARE(s.value->plan.name, std::string("three-dc"));
    QCOMPARE(s.value->cluster.name, std::string("three-dc"));

    // `check` takes a nameless plan as it is: ok, nothing on stderr.
    QTemporaryDir dir;
    const QString path = dir.filePath("unnamed-plan.json");
    QVERIFY(writeFile(path, QByteArray::fromStdString(edited(kPlan, {"-/name"}))));
    QProcess proc;
    proc.start(SCALEACROSS_CLI_PATH, {"check", path});
    QVERIFY(proc.waitForFinished(30000));
    QCOMPARE(proc.exitCode(), 0);
    QCOMPARE(QString::fromUtf8(proc.readAllStandardError()), QString());
    QCOMPARE(QString::fromUtf8(proc.readAllStandardOutput()),
             path + ": ok (plan 'unnamed-plan')\n");
}

void TestFormats::badDocuments_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QStringList>("edits");
    QTest::addColumn<QString>("raw"); // replaces the edited base document when set
    QTest::addColumn<QStringList>("expected");
    const auto bad = [](const char* name, const char* kind, const QStringList& edits,
                        const QStringList& expected) {
        QTest::newRow(name) << kind << edits << QString() << expected;
    };
    const auto raw = [](const char* name, const char* kind, const QString& text,
                        const QStringList& expected) {
        QTest::newRow(name) << kind << QStringList() << text << expected;
    };

    // JSON itself
    raw("syntax error", "cluster", "{\"format\": \"scaleacross.cluster\",\n  \"version\": 1,",
        {"cluster.json: invalid JSON at line 2, column 16: syntax error while parsing object key "
         "- unexpected end of input; expected string literal"});
    raw("empty input", "model", "", {"model.json: the document is empty (expected a JSON object)"});
    raw("NaN", "plan", "{\"format\": \"scaleacross.plan\", \"version\": NaN}",
        {"plan.json: invalid JSON at line 1, column 43: syntax error while parsing value - invalid "
         "literal; last read: '\"version\": N'"});
    raw("Infinity", "plan", "{\"version\": -Infinity}",
        {"plan.json: invalid JSON at line 1, column 14: syntax error while parsing value - invalid "
         "number; expected digit after '-'; last read: '-I'"});
    raw("number overflow", "plan", "{\"format\": \"scaleacross.plan\",\n \"version\": 1e400}",
        {"plan.json: invalid JSON at line 2, column 13: number overflow parsing '1e400'"});
    raw("comments are not JSON", "model", "{\"name\": \"m\" // a comment\n}",
        {"model.json: invalid JSON at line 1, column 14: syntax error while parsing object - "
         "invalid literal; last read: '\"m\" /'; expected '}'"});
    raw("nesting too deep", "plan", QString(100, '[') + QString(100, ']'),
        {"plan.json: nesting deeper than 64 levels is not a document"});
    raw("not an object", "cluster", "[1, 2]",
        {"cluster.json: must be a JSON object, got an array"});
    raw("duplicate key", "model",
        R"({"format": "scaleacross.model", "version": 1, "name": "a", "name": "b", "layers": 2,
            "hidden": 64, "ffn_hidden": 256, "heads": 4, "kv_heads": 1, "vocab": 1000})",
        {"model.json: duplicate key 'name'"});
    raw("nested duplicate key", "plan",
        R"({"format": "scaleacross.plan", "version": 1, "name": "p", "sequence_length": 128,
            "global_batch_sequences": 4, "micro_batch_sequences": 1,
            "parallelism": {"tp": 1, "pp": 1, "dp": 1, "tp": 2}})",
        {"plan.json: /parallelism: duplicate key 'tp'"});

    // format and version
    bad("wrong format", "cluster", {"/format=\"scaleacross.plan\""},
        {"cluster.json: /format: must be 'scaleacross.cluster', got 'scaleacross.plan'"});
    bad("unsupported version", "cluster", {"/version=2"},
        {"cluster.json: /version: unsupported version 2 (supported versions: 1)"});
    bad("version as string", "model", {"/version=\"1\""},
        {"model.json: /version: must be an integer (supported versions: 1), got '1'"});
    bad("missing format", "plan", {"-/format"}, {"plan.json: missing required key 'format'"});

    // keys
    bad("unknown key", "cluster", {"/colour=\"red\""}, {"cluster.json: unknown key 'colour'"});
    // routing
    bad("unknown routing policy", "cluster", {R"(/routing={"policy": "fastest"})"},
        {"cluster.json: /routing/policy: must be one of shortest-hops, lowest-latency, ecmp, got "
         "'fastest'"});
    bad("unknown ecmp metric", "cluster", {R"(/routing={"policy": "ecmp", "ecmp_metric": 1})"},
        {"cluster.json: /routing/ecmp_metric: must be one of hops, latency, got 1"});
    bad("negative ecmp tolerance", "cluster",
        {R"(/routing={"policy": "ecmp", "ecmp_tolerance": -0.1})"},
        {"cluster.json: /routing/ecmp_tolerance: must be a number >= 0, got -0.1"});
    bad("routing not an object", "cluster", {R"(/routing="ecmp")"},
        {"cluster.json: /routing: must be an object, got 'ecmp'"});
    bad("unknown routing key", "cluster", {R"(/routing={"policy": "ecmp", "paths": 4})"},
        {"cluster.json: /routing: unknown key 'paths'"});
    bad("misspelt key", "cluster", {"-/buildings/0/gpus_per_host", "/buildings/0/gpus_per_hots=8"},
        {"cluster.json: /buildings/0: missing required key 'gpus_per_host'",
         "cluster.json: /buildings/0: unknown key 'gpus_per_hots' (did you mean "
         "'gpus_per_host'?)"});
    bad("long unknown key is shortened", "model", {"/" + QString(100, 'k') + "=1"},
        {"model.json: unknown key '" + QString(60, 'k') + "...'"});
    bad("no suggestion when ambiguous", "plan", {"/collectives={\"xp\": \"ring\"}"},
        {"plan.json: /collectives: unknown key 'xp'"});
    bad("missing keys", "cluster", {"-/name", "-/buildings", "-/links/0/latency_ms"},
        {"cluster.json: missing required key 'buildings'",
         "cluster.json: /links/0: missing required key 'latency_ms'"});
    bad("gpu model left out with two to choose from", "cluster", {"-/buildings/1/gpu_model"},
        {"cluster.json: /buildings/1: missing required key 'gpu_model' (the cluster has 2 GPU "
         "models; it may be left out when there is one)"});

    // cluster values
    bad("negative gpus", "cluster", {"/buildings/1/gpus=-8"},
        {"cluster.json: /buildings/1/gpus: must be a positive integer, got -8"});
    bad("too many gpus", "cluster", {"/buildings/0/gpus=20000000"},
        {"cluster.json: /buildings/0/gpus: must be a positive integer no larger than 10000000, "
         "got 20000000"});
    bad("huge integer", "cluster", {"/buildings/0/gpus=99999999999999999999"},
        {"cluster.json: /buildings/0/gpus: must be a positive integer no larger than 10000000, "
         "got 1e+20"});
    bad("fractional gpus", "cluster", {"/buildings/0/gpus=1024.5"},
        {"cluster.json: /buildings/0/gpus: must be a positive integer, got 1024.5"});
    bad("gpus as string", "cluster", {"/buildings/0/gpus=\"1024\""},
        {"cluster.json: /buildings/0/gpus: must be a positive integer, got '1024'"});
    bad("gpus per host does not divide", "cluster", {"/buildings/0/gpus_per_host=6"},
        {"cluster.json: /buildings/0/gpus_per_host: must divide gpus (1024), got 6"});
    bad("zone larger than building", "cluster", {"/buildings/1/zone_gpus=2048"},
        {"cluster.json: /buildings/1/zone_gpus: must be at most gpus (1024), got 2048"});
    bad("zone splits a host", "cluster", {"/buildings/0/zone_gpus=100"},
        {"cluster.json: /buildings/0/zone_gpus: must be a multiple of gpus_per_host (8), got 100"});
    bad("oversubscription below one", "cluster", {"/buildings/0/zone_oversubscription=0.5"},
        {"cluster.json: /buildings/0/zone_oversubscription: must be a number >= 1, got 0.5"});
    // Beyond any hardware (the inspector's fields stop there too): the
    // figures would overflow rather than mean anything.
    bad("oversubscription beyond any fabric", "cluster",
        {"/buildings/0/building_oversubscription=1e20"},
        {"cluster.json: /buildings/0/building_oversubscription: must be a number >= 1 no larger "
         "than 1000, got 1e+20"});
    bad("straggler beyond reason", "cluster", {"/buildings/0/straggler_slowdown=500"},
        {"cluster.json: /buildings/0/straggler_slowdown: must be a number >= 1 no larger than "
         "100, got 500"});
    bad("NIC beyond any", "cluster", {"/buildings/0/scale_out_gbps=10000000"},
        {"cluster.json: /buildings/0/scale_out_gbps: must be a number > 0 no larger than "
         "1000000, got 10000000"});
    bad("MTBF beyond reason", "cluster", {"/buildings/0/gpu_mtbf_hours=1000000000000"},
        {"cluster.json: /buildings/0/gpu_mtbf_hours: must be a number >= 0 no larger than "
         "1000000000, got 1000000000000"});
    bad("empty name", "cluster", {"/name=\"\""},
        {"cluster.json: /name: must be a non-empty string"});
    bad("region not a string", "cluster", {"/buildings/0/region=7"},
        {"cluster.json: /buildings/0/region: must be a non-empty string, got 7"});
    bad("building not an object", "cluster", {"/buildings/1=42"},
        {"cluster.json: /buildings/1: must be an object, got 42"});
    bad("no buildings", "cluster", {"/buildings=[]"},
        {"cluster.json: /buildings: must list at least one building"});
    bad("duplicate building name", "cluster", {"/buildings/1/name=\"B1\""},
        {"cluster.json: /buildings/1/name: duplicate building name 'B1' (also /buildings/0)",
         "cluster.json: /links/0/between/1: no building named 'B2'"});
    bad("unknown gpu model", "cluster", {"/buildings/1/gpu_model=\"B200\""},
        {"cluster.json: /buildings/1/gpu_model: no GPU model named 'B200' in /gpu_models"});
    bad("gpu models not an object", "cluster", {"/gpu_models=[]"},
        {"cluster.json: /gpu_models: must be an object, got an array"});
    bad("no gpu models", "cluster", {"/gpu_models={}"},
        {"cluster.json: /gpu_models: must name at least one GPU model"});
    bad("zero peak", "cluster", {"/gpu_models/H100/peak_tflops/bf16=0"},
        {"cluster.json: /gpu_models/H100/peak_tflops/bf16: must be a number > 0, got 0"});
    bad("escaped pointer", "cluster",
        {R"(/gpu_models/a~1b={"peak_tflops": {"bf16": 1}, "memory_gib": -1, "hbm_tbps": 1})"},
        {"cluster.json: /gpu_models/a~1b/memory_gib: must be a number > 0, got -1"});
    bad("unknown architecture", "cluster", {"/gpu_models/A100/architecture=\"volta\""},
        {"cluster.json: /gpu_models/A100/architecture: must be one of ampere, hopper, blackwell, "
         "got 'volta'"});
    bad("efficiency above one", "cluster", {"/gpu_models/A100/gemm_efficiency=1.5"},
        {"cluster.json: /gpu_models/A100/gemm_efficiency: must be a number in (0, 1], got 1.5"});
    bad("fp8 efficiency above one", "cluster", {"/gpu_models/H100/gemm_efficiency_fp8=1.5"},
        {"cluster.json: /gpu_models/H100/gemm_efficiency_fp8: must be a number in (0, 1], got "
         "1.5"});
    bad("negative tdp", "cluster", {"/gpu_models/H100/tdp_w=-700"},
        {"cluster.json: /gpu_models/H100/tdp_w: must be a number >= 0, got -700"});
    bad("tdp beyond any board", "cluster", {"/gpu_models/H100/tdp_w=1e308"},
        {"cluster.json: /gpu_models/H100/tdp_w: must be a number >= 0 no larger than 100000, got "
         "1e+308"});
    bad("power limit as text", "cluster", {"/gpu_models/H100/power_limit_w=\"500 W\""},
        {"cluster.json: /gpu_models/H100/power_limit_w: must be a number >= 0, got '500 W'"});
    bad("power limit without tdp", "cluster", {"/gpu_models/H100/power_limit_w=500"},
        {"cluster.json: /gpu_models/H100/power_limit_w: needs tdp_w > 0 (the board power the "
         "peaks are rated at), got tdp_w = 0"});
    bad("power limit above tdp", "cluster",
        {"/gpu_models/H100/tdp_w=700", "/gpu_models/H100/power_limit_w=800"},
        {"cluster.json: /gpu_models/H100/power_limit_w: must be at most tdp_w (700), got 800"});
    bad("sustained clock alone", "cluster", {"/gpu_models/H100/sustained_clock_mhz=1800"},
        {"cluster.json: /gpu_models/H100/boost_clock_mhz: is needed with sustained_clock_mhz "
         "(the clock the efficiencies were measured at)"});
    bad("boost clock alone", "cluster", {"/gpu_models/H100/boost_clock_mhz=1980"},
        {"cluster.json: /gpu_models/H100/sustained_clock_mhz: is needed with boost_clock_mhz "
         "(the clock a training run holds)"});
    bad("sustained above boost", "cluster",
        {"/gpu_models/H100/boost_clock_mhz=1755", "/gpu_models/H100/sustained_clock_mhz=1980"},
        {"cluster.json: /gpu_models/H100/sustained_clock_mhz: must be at most boost_clock_mhz "
         "(1755), got 1980"});
    bad("clock as text", "cluster",
        {"/gpu_models/H100/boost_clock_mhz=\"fast\"", "/gpu_models/H100/sustained_clock_mhz=1"},
        {"cluster.json: /gpu_models/H100/boost_clock_mhz: must be a number >= 0, got 'fast'"});
    bad("link to missing building", "cluster", {"/links/0/between/1=\"B9\""},
        {"cluster.json: /links/0/between/1: no building named 'B9'"});
    bad("link to itself", "cluster", {"/links/0/between=[\"B1\", \"B1\"]"},
        {"cluster.json: /links/0/between: must name two different buildings, got 'B1' twice"});
    bad("link with three ends", "cluster", {"/links/0/between=[\"B1\", \"B2\", \"B3\"]"},
        {"cluster.json: /links/0/between: must name two buildings, got 3 entries"});
    bad("duplicate link name", "cluster",
        {R"(/links/1={"between": ["B2", "B1"], "name": "B1-B2", "bandwidth_gbps": 100,
                      "latency_ms": 1})"},
        {"cluster.json: /links/1/name: duplicate link name 'B1-B2' (also /links/0)"});
    bad("negative latency", "cluster", {"/links/0/latency_ms=-1"},
        {"cluster.json: /links/0/latency_ms: must be a number >= 0, got -1"});
    bad("negative background", "cluster", {"/links/0/background_gbps=-1"},
        {"cluster.json: /links/0/background_gbps: must be a number >= 0, got -1"});
    bad("background as text", "cluster", {"/links/0/background_gbps=\"10 Gbit/s\""},
        {"cluster.json: /links/0/background_gbps: must be a number >= 0, got '10 Gbit/s'"});
    bad("background fills the link", "cluster", {"/links/0/background_gbps=25600"},
        {"cluster.json: /links/0/background_gbps: must be less than bandwidth_gbps (25600): the "
         "job needs some of the link, got 25600"});
    bad("background above the link", "cluster",
        {"/links/0/bandwidth_gbps=100", "/links/0/background_gbps=150.5"},
        {"cluster.json: /links/0/background_gbps: must be less than bandwidth_gbps (100): the "
         "job needs some of the link, got 150.5"});
    bad("unknown technology", "cluster", {"/links/0/technology=\"quic\""},
        {"cluster.json: /links/0/technology: unknown technology 'quic' (built-in: roce, "
         "roce-long-haul, tcp, tcp-multiflow, nvlink; defined in technologies: tcp-64)"});
    bad("loss rate of one", "cluster", {"/technologies/tcp-64/loss_rate=1"},
        {"cluster.json: /technologies/tcp-64/loss_rate: must be a number in [0, 1), got 1"});
    bad("zero flows", "cluster", {"/technologies/tcp-64/flows=0"},
        {"cluster.json: /technologies/tcp-64/flows: must be a positive integer, got 0"});
    bad("zero nccl channels", "cluster", {"/technologies/tcp-64/nccl_channels=0"},
        {"cluster.json: /technologies/tcp-64/nccl_channels: must be an integer from 1 to 64, "
         "got 0"});
    bad("65 sockets", "cluster", {"/technologies/tcp-64/sockets_per_connection=65"},
        {"cluster.json: /technologies/tcp-64/sockets_per_connection: must be an integer from 1 "
         "to 64, got 65"});
    bad("qps and sockets", "cluster",
        {"/technologies/tcp-64/sockets_per_connection=4",
         "/technologies/tcp-64/qps_per_connection=2"},
        {"cluster.json: /technologies/tcp-64/sockets_per_connection: a profile uses either RDMA "
         "QPs (qps_per_connection = 2) or sockets (sockets_per_connection), not both"});
    bad("negative buffsize", "cluster", {"/technologies/tcp-64/buffsize_mib=-4"},
        {"cluster.json: /technologies/tcp-64/buffsize_mib: must be a number > 0, got -4"});
    bad("host limits on rdma", "cluster",
        {"/technologies/tcp-64/qps_per_connection=1", "/technologies/tcp-64/host_net_cores=8"},
        {"cluster.json: /technologies/tcp-64/host_net_cores: host copy limits describe a socket "
         "transport; this profile is RDMA (qps_per_connection), which moves data without the "
         "host's copies"});
    bad("pfc headroom without a loss rate", "cluster",
        {"/technologies/tcp-64/qps_per_connection=1", "/technologies/tcp-64/pfc_headroom_mib=32"},
        {"cluster.json: /technologies/tcp-64/pfc_headroom_mib: needs 'lossy_loss_rate' (a "
         "probability above 0): the loss rate the link has once its headroom cannot hold the "
         "round trip"});
    bad("pfc headroom on sockets", "cluster",
        {"/technologies/tcp-64/sockets_per_connection=8",
         "/technologies/tcp-64/pfc_headroom_mib=32", "/technologies/tcp-64/lossy_loss_rate=1e-4"},
        {"cluster.json: /technologies/tcp-64/pfc_headroom_mib: PFC headroom describes a lossless "
         "RoCE profile; this one uses sockets (sockets_per_connection)"});
    bad("lossy loss rate of one", "cluster", {"/technologies/tcp-64/lossy_loss_rate=1"},
        {"cluster.json: /technologies/tcp-64/lossy_loss_rate: must be a number in [0, 1), got 1"});
    bad("host cores not an integer", "cluster", {"/technologies/tcp-64/host_net_cores=2.5"},
        {"cluster.json: /technologies/tcp-64/host_net_cores: must be an integer from 1 to 4096, "
         "got 2.5"});
    bad("lossless not a bool", "cluster", {"/technologies/tcp-64/lossless=\"no\""},
        {"cluster.json: /technologies/tcp-64/lossless: must be true or false, got 'no'"});
    bad("all problems at once", "cluster",
        {"/buildings/0/gpus=-1", "/links/0/bandwidth_gbps=0",
         "/technologies/tcp-64/mtu_bytes=null"},
        {"cluster.json: /buildings/0/gpus: must be a positive integer, got -1",
         "cluster.json: /links/0/bandwidth_gbps: must be a number > 0, got 0",
         "cluster.json: /technologies/tcp-64/mtu_bytes: must be a number > 0, got null"});

    // model values
    bad("zero layers", "model", {"/layers=0"},
        {"model.json: /layers: must be a positive integer, got 0"});
    bad("too many layers", "model", {"/layers=200000"},
        {"model.json: /layers: must be a positive integer no larger than 100000, got 200000"});
    bad("vocab too large", "model", {"/vocab=20000000"},
        {"model.json: /vocab: must be a positive integer no larger than 10000000, got 20000000"});
    bad("kv heads do not divide heads", "model", {"/kv_heads=5"},
        {"model.json: /kv_heads: must divide heads (32), got 5"});
    bad("heads do not divide hidden", "model", {"/heads=24"},
        {"model.json: /heads: must divide hidden (4096), got 24"});
    bad("unknown dtype", "model", {"/dtype=\"fp16\""},
        {"model.json: /dtype: must be one of bf16, fp8, got 'fp16'"});
    bad("mlp not a string", "model", {"/mlp=3"},
        {"model.json: /mlp: must be one of swiglu, gelu, got 3"});
    bad("top k above experts", "model",
        {R"(/moe={"experts": 8, "top_k": 9, "expert_ffn_hidden": 1024})"},
        {"model.json: /moe/top_k: must be at most experts (8), got 9"});
    bad("moe missing key", "model", {R"(/moe={"experts": 8, "top_k": 2})"},
        {"model.json: /moe: missing required key 'expert_ffn_hidden'"});
    bad("latent attention with kv heads", "model",
        {R"(/mla={"kv_lora_rank": 512, "qk_head_dim": 128, "rope_head_dim": 64, "v_head_dim": 128})",
         "/kv_heads=8"},
        {"model.json: /kv_heads: must equal heads (32) with multi-head latent attention (mla), "
         "got 8"});
    bad("latent attention with a head dim", "model",
        {R"(/mla={"kv_lora_rank": 512, "qk_head_dim": 128, "rope_head_dim": 64, "v_head_dim": 128})",
         "/kv_heads=32", "/head_dim=192"},
        {"model.json: /head_dim: is set by mla (qk_head_dim, rope_head_dim, v_head_dim): leave it "
         "out"});
    bad("latent attention missing its rank", "model",
        {R"(/mla={"qk_head_dim": 128, "rope_head_dim": 64, "v_head_dim": 128})", "/kv_heads=32"},
        {"model.json: /mla: missing required key 'kv_lora_rank'"});
    bad("latent attention negative rank", "model",
        {R"(/mla={"q_lora_rank": -1, "kv_lora_rank": 512, "qk_head_dim": 128, "rope_head_dim": 64,
          "v_head_dim": 128})",
         "/kv_heads=32"},
        {"model.json: /mla/q_lora_rank: must be a non-negative integer, got -1"});
    bad("window without a size", "model", {"/sliding_window={\"full_every\": 2}"},
        {"model.json: /sliding_window: missing required key 'size'"});
    bad("window of no keys", "model", {"/sliding_window={\"size\": 0}"},
        {"model.json: /sliding_window/size: must be a positive integer, got 0"});
    bad("padding not a boolean", "model",
        {"/moe={\"experts\": 8, \"top_k\": 2, \"expert_ffn_hidden\": 64, \"pad_to_capacity\": 1}"},
        {"model.json: /moe/pad_to_capacity: must be true or false, got 1"});
    bad("multi-token prediction negative", "model", {"/mtp_layers=-1"},
        {"model.json: /mtp_layers: must be a non-negative integer, got -1"});
    bad("all layers dense", "model",
        {R"(/moe={"experts": 8, "top_k": 2, "expert_ffn_hidden": 1024, "dense_layers": 32})"},
        {"model.json: /moe/dense_layers: must be less than layers (32), got 32"});
    bad("router groups without top groups", "model",
        {R"(/moe={"experts": 8, "top_k": 2, "expert_ffn_hidden": 1024, "router_groups": 4})"},
        {"model.json: /moe/router_group_topk: router_groups and router_group_topk go together "
         "(group-limited routing), got 4 groups, top 0"});
    bad("router groups not dividing experts", "model",
        {R"(/moe={"experts": 8, "top_k": 2, "expert_ffn_hidden": 1024, "router_groups": 3,
          "router_group_topk": 1})"},
        {"model.json: /moe/router_groups: must divide experts (8), got 3"});
    bad("top groups too few for top_k", "model",
        {R"(/moe={"experts": 8, "top_k": 4, "expert_ffn_hidden": 1024, "router_groups": 4,
          "router_group_topk": 1})"},
        {"model.json: /moe/router_group_topk: leaves 2 experts for top_k 4"});
    bad("unknown master weights", "plan", {"/master_weights=\"half\""},
        {"plan.json: /master_weights: must be one of fp32, 16bit, none, got 'half'"});
    bad("fp8 moments", "plan", {"/optimizer_moments=\"fp8\""},
        {"plan.json: /optimizer_moments: must be one of fp32, bf16, got 'fp8'"});
    bad("unknown dispatcher", "plan", {"/ep_dispatcher=\"deepep\""},
        {"plan.json: /ep_dispatcher: must be one of alltoall, flex, hybridep, got 'deepep'"});
    bad("dispatcher sms negative", "plan", {"/ep_dispatcher_sms=-1"},
        {"plan.json: /ep_dispatcher_sms: must be an integer from 0 to 100000, got -1"});
    bad("dispatcher sms as text", "plan", {"/ep_dispatcher_sms=\"32\""},
        {"plan.json: /ep_dispatcher_sms: must be an integer from 0 to 100000, got '32'"});
    bad("dispatcher sms fractional", "plan", {"/ep_dispatcher_sms=2.5"},
        {"plan.json: /ep_dispatcher_sms: must be an integer from 0 to 100000, got 2.5"});

    // plan values
    bad("negative tp", "plan", {"/parallelism/tp=-2"},
        {"plan.json: /parallelism/tp: must be a positive integer, got -2"});
    bad("missing dp", "plan", {"-/parallelism/dp"},
        {"plan.json: /parallelism: missing required key 'dp'"});
    bad("empty name", "plan", {"/name=\"\""}, {"plan.json: /name: must be a non-empty string"});
    bad("unknown schedule", "plan", {"/schedule={\"kind\": \"x\"}"},
        {"plan.json: /schedule/kind: must be one of gpipe, 1f1b, interleaved, zero-bubble, got "
         "'x'"});
    bad("zero stage 4", "plan", {"/zero_stage=4"},
        {"plan.json: /zero_stage: must be an integer from 0 to 3, got 4"});
    bad("unknown attention kernel", "plan", {"/attention_kernel=\"flash4\""},
        {"plan.json: /attention_kernel: must be one of auto, flash2, flash3, cudnn, got 'flash4'"});
    bad("ep overlap as a number", "plan", {"/ep_overlap=1"},
        {"plan.json: /ep_overlap: must be true or false, got 1"});
    bad("p2p overlap as a word", "plan", {"/p2p_overlap=\"blocking\""},
        {"plan.json: /p2p_overlap: must be true or false, got 'blocking'"});
    bad("p2p overlap as a number", "plan", {"/p2p_overlap=0"},
        {"plan.json: /p2p_overlap: must be true or false, got 0"});
    bad("p2p overlap inside the schedule", "plan", {"/schedule/p2p_overlap=false"},
        {"plan.json: /schedule: unknown key 'p2p_overlap'"});
    bad("unknown recompute", "plan", {"/recompute=\"some\""},
        {"plan.json: /recompute: must be one of none, selective, full, selective-op, got 'some'"});
    bad("unknown recompute module", "plan",
        {"/recompute=\"selective\"", "/recompute_modules=[\"core_attn\", \"attention\"]"},
        {"plan.json: /recompute_modules/1: must be one of core_attn, layernorm, mlp, moe, "
         "moe_act, shared_experts, mla_up_proj, got 'attention'"});
    bad("recompute module twice", "plan",
        {"/recompute=\"selective\"", "/recompute_modules=[\"mlp\", \"mlp\"]"},
        {"plan.json: /recompute_modules/1: names 'mlp' twice"});
    bad("recompute modules without selective", "plan",
        {"/recompute=\"full\"", "/recompute_modules=[\"mlp\"]"},
        {"plan.json: /recompute_modules: selects what selective recompute re-runs; recompute is "
         "'full'"});
    bad("ep in rank order", "plan", {"/rank_order=[\"tp\", \"cp\", \"pp\", \"ep\"]"},
        {"plan.json: /rank_order/3: must be one of tp, cp, pp, dp, got 'ep'"});
    bad("rank order not a permutation", "plan", {"/rank_order=[\"tp\", \"tp\", \"pp\", \"dp\"]"},
        {"plan.json: /rank_order: must be a permutation of tp, cp, pp, dp, got [tp, tp, pp, dp]"});
    bad("cp all-to-all group beyond cp", "plan", {"/cp_a2a_size=2"},
        {"plan.json: /cp_a2a_size: must divide cp (1) and be less than it (cp_ring te-a2a is the "
         "all-to-all over all of cp), got 2"});
    bad("cp all-to-all group of zero", "plan", {"/cp_a2a_size=0"},
        {"plan.json: /cp_a2a_size: must be a positive integer, got 0"});
    bad("cp all-to-all group with the all-gather", "plan",
        {"/cp_a2a_size=2", "/parallelism/cp=4", "/parallelism/dp=16", "/cp_ring=\"te-allgather\""},
        {"plan.json: /cp_a2a_size: applies to cp_ring te-p2p (Megatron's a2a+p2p), got cp_ring "
         "te-allgather"});
    bad("dp inside tp", "plan", {"/rank_order=[\"dp\", \"tp\", \"cp\", \"pp\"]"},
        {"plan.json: /rank_order: puts dp (64) inside tp (8): tp and cp must be the innermost "
         "dimensions, in either order, so that each model-parallel group of tp*cp GPUs takes "
         "consecutive ranks (as Megatron-Core's and torchtitan's orders do); got [dp, tp, cp, "
         "pp]"});
    bad("pp inside cp", "plan",
        {"/rank_order=[\"tp\", \"pp\", \"cp\", \"dp\"]", "/parallelism/cp=2", "/parallelism/dp=32"},
        {"plan.json: /rank_order: puts pp (4) inside cp (2): tp and cp must be the innermost "
         "dimensions, in either order, so that each model-parallel group of tp*cp GPUs takes "
         "consecutive ranks (as Megatron-Core's and torchtitan's orders do); got [tp, pp, cp, "
         "dp]"});
    bad("ep does not divide dp", "plan", {"/parallelism/ep=3"},
        {"plan.json: /parallelism/ep: must divide dp (64), got 3"});
    bad("etp does not divide tp", "plan", {"/parallelism/etp=3"},
        {"plan.json: /parallelism/etp: must divide tp (8), got 3"});
    bad("folded ep neither divides nor fills the cell", "plan",
        {"/parallelism/etp=1", "/parallelism/ep=12"},
        {"plan.json: /parallelism/ep: an expert group takes the (tp/etp)*cp = 8*1 = 8 "
         "ranks of a TP x CP cell first, then whole replicas: ep must divide 8 or be a multiple "
         "of it by a divisor of dp (64), got 12"});
    bad("ep over cp ranks neither divides nor fills them", "plan",
        {"/parallelism/cp=2", "/parallelism/dp=32", "/parallelism/ep=3"},
        {"plan.json: /parallelism/ep: an expert group takes the (tp/etp)*cp = 1*2 = 2 ranks of a "
         "TP x CP cell first, then whole replicas: ep must divide 2 or be a multiple of it by a "
         "divisor of dp (32), got 3"});
    bad("folded experts without sequence parallelism", "plan",
        {"/parallelism/etp=2", "/sequence_parallel=false"},
        {"plan.json: /parallelism/etp: experts on fewer ranks than tp (2 < 8) need "
         "sequence_parallel: each TP rank dispatches its own sequence shard to the experts"});
    bad("cp does not divide sequence", "plan", {"/parallelism/cp=3"},
        {"plan.json: /parallelism/cp: must divide sequence_length (8192), got 3"});
    bad("cp chunks unbalanced", "plan", {"/parallelism/cp=2", "/sequence_length=8194"},
        {"plan.json: /parallelism/cp: 2*cp must divide sequence_length (8194) so that causal "
         "attention splits into balanced chunks, got cp = 2"});
    bad("global batch not divisible", "plan", {"/global_batch_sequences=500"},
        {"plan.json: /global_batch_sequences: must be a multiple of micro_batch_sequences*dp "
         "(1*64 = 64), got 500"});
    bad("interleaved without virtual stages", "plan", {"/schedule={\"kind\": \"interleaved\"}"},
        {"plan.json: /schedule/virtual_stages: the interleaved schedule needs at least 2 virtual "
         "stages, got 1"});
    bad("virtual stages without interleaving", "plan", {"/schedule/virtual_stages=2"},
        {"plan.json: /schedule/virtual_stages: must be 1 for the 1f1b schedule (only interleaved "
         "uses virtual stages), got 2"});
    bad("interleaved microbatches", "plan",
        {R"(/schedule={"kind": "interleaved", "virtual_stages": 2})",
         "/global_batch_sequences=384"},
        {"plan.json: /global_batch_sequences: the interleaved schedule needs the number of "
         "microbatches (6) to be a multiple of pp (4)"});
    bad("run beyond last stage", "plan", {"/placement/runs/1/stages=[2, 4]"},
        {"plan.json: /placement/runs/1/stages: must be [first, last] with 0 <= first <= last < pp "
         "(4), got [2, 4]"});
    bad("reversed replicas", "plan", {"/placement/runs/0/replicas=[5, 2]"},
        {"plan.json: /placement/runs/0/replicas: must be [first, last] with 0 <= first <= last < "
         "dp (64), got [5, 2]"});
    bad("stages not a range", "plan", {"/placement/runs/0/stages=\"0\""},
        {"plan.json: /placement/runs/0/stages: must be [first, last], two indices, got '0'"});
    bad("negative stage", "plan", {"/placement/runs/0/stages=[-1, 1]"},
        {"plan.json: /placement/runs/0/stages/0: must be a non-negative integer, got -1"});
    bad("run without building", "plan", {"-/placement/runs/0/building"},
        {"plan.json: /placement/runs/0: missing required key 'building'"});
    bad("layers per stage length", "plan", {"/placement/layers_per_stage=[10, 10, 12]"},
        {"plan.json: /placement/layers_per_stage: must have one entry per pipeline stage (pp = 4), "
         "got 3"});
    bad("empty layers per stage", "plan", {"/placement/layers_per_stage=[]"},
        {"plan.json: /placement/layers_per_stage: must have one entry per pipeline stage, got none "
         "(leave it out for an even split)"});
    bad("unknown collective", "plan", {"/collectives={\"dp\": \"butterfly\"}"},
        {"plan.json: /collectives/dp: must be one of auto, ring, tree, hierarchical, got "
         "'butterfly'"});
    bad("grad reduce bytes", "plan", {"/grad_reduce_bytes=3"},
        {"plan.json: /grad_reduce_bytes: must be 2 or 4, got 3"});
    bad("zero bucket", "plan", {"/dp_bucket_mib=0"},
        {"plan.json: /dp_bucket_mib: must be a number > 0, got 0"});
    bad("zero flows override", "plan", {"/link_technologies/B1-B2/flows=0"},
        {"plan.json: /link_technologies/B1-B2/flows: must be a positive integer, got 0"});
    bad("override channels out of range", "plan", {"/link_technologies/B1-B2/nccl_channels=65"},
        {"plan.json: /link_technologies/B1-B2/nccl_channels: must be an integer from 1 to 64, "
         "got 65"});
    bad("override buffsize a string", "plan", {"/link_technologies/B1-B2/buffsize_mib=\"4M\""},
        {"plan.json: /link_technologies/B1-B2/buffsize_mib: must be a number > 0, got '4M'"});
    bad("override qps and sockets", "plan",
        {"/link_technologies/B1-B2/qps_per_connection=2",
         "/link_technologies/B1-B2/sockets_per_connection=2"},
        {"plan.json: /link_technologies/B1-B2/sockets_per_connection: an override sets either "
         "RDMA QPs (qps_per_connection = 2) or sockets (sockets_per_connection), not both"});
    bad("job larger than any cluster", "plan",
        {"/parallelism/tp=10000000", "/parallelism/pp=10000000", "/parallelism/dp=10000000",
         "-/placement"},
        {"plan.json: /parallelism: tp*cp*pp*dp must be at most 100000000000 GPUs",
         "plan.json: /global_batch_sequences: must be a multiple of micro_batch_sequences*dp "
         "(1*10000000 = 10000000), got 512"});
    bad("bad pp does not cascade", "plan", {"/parallelism/pp=\"four\""},
        {"plan.json: /parallelism/pp: must be a positive integer, got 'four'"});

    // scenarios
    bad("scenario without plan", "scenario", {"-/plan"},
        {"scenario.json: missing required key 'plan'"});
    bad("inline plan problem", "scenario", {"/plan/parallelism/tp=0"},
        {"scenario.json: /plan/parallelism/tp: must be a positive integer, got 0"});
    bad("inline part of the wrong kind", "scenario", {"/cluster/format=\"scaleacross.model\""},
        {"scenario.json: /cluster/format: must be 'scaleacross.cluster', got 'scaleacross.model'"});
    bad("part neither object nor path", "scenario", {"/plan=5"},
        {"scenario.json: /plan: must be an inline plan object or the path of a plan file, got 5"});
    bad("referenced file missing", "scenario", {"/cluster=\"nowhere.json\""},
        {QString("scenario.json: /cluster: cannot read '%1': No such file or directory")
             .arg(dataPath("nowhere.json"))});
    bad("inline cross check", "scenario", {"/plan/parallelism/tp=16"},
        {"scenario.json: /plan/parallelism: tp*cp*pp*dp = 4096 GPUs but the cluster has 2048",
         "scenario.json: /plan/parallelism/tp: must divide gpus_per_host of every building (TP "
         "stays inside a host's NVLink domain); building 'B1' has 8, got 16"});
}

void TestFormats::badDocuments() {
    QFETCH(QString, kind);
    QFETCH(QStringList, edits);
    QFETCH(QString, raw);
    QFETCH(QStringList, expected);
    const std::string text = raw.isNull() ? edited(baseText(kind), edits) : raw.toStdString();
    QCOMPARE(strings(problemsOf(kind, text)), expected);
}

void TestFormats::crossChecks_data() {
    QTest::addColumn<QStringList>("clusterEdits");
    QTest::addColumn<QStringList>("modelEdits");
    QTest::addColumn<QStringList>("planEdits");
    QTest::addColumn<QStringList>("expected");
    const auto row = [](const char* name, const QStringList& c, const QStringList& m,
                        const QStringList& p, const QStringList& expected) {
        QTest::newRow(name) << c << m << p << expected;
    };
    row("valid", {}, {}, {}, {});
    row("part of the cluster", {}, {}, {"/parallelism/dp=32", "-/placement"}, {});
    row("kv heads replicated over tp", {}, {"/kv_heads=4"}, {}, {});
    row("interleaved with explicit layer split", {}, {"/layers=30"},
        {R"(/schedule={"kind": "interleaved", "virtual_stages": 2})",
         "/placement/layers_per_stage=[8, 8, 7, 7]"},
        {});

    row("dispatcher within the gpu", {}, {}, {"/ep_dispatcher_sms=131"}, {});
    row("dispatcher sms beyond the gpu", {}, {}, {"/ep_dispatcher_sms=132"},
        {"plan.json: /ep_dispatcher_sms: must be fewer than the GPU's SMs: building 'B1' has "
         "H100 (132 SMs), got 132"});
    row("more gpus than the cluster", {}, {}, {"/parallelism/dp=128", "-/placement"},
        {"plan.json: /parallelism: tp*cp*pp*dp = 4096 GPUs but the cluster has 2048"});
    row("tp beyond a host", {"/buildings/1/gpus_per_host=4"}, {}, {},
        {"plan.json: /parallelism/tp: must divide gpus_per_host of every building (TP stays "
         "inside a host's NVLink domain); building 'B2' has 4, got 8"});
    // Degrees of 1 place nothing: cp 1 may sit anywhere, and cp inside tp
    // keeps the TP group in a host while tp*cp fits it.
    row("a dimension of one anywhere", {}, {}, {"/rank_order=[\"tp\", \"pp\", \"dp\", \"cp\"]"},
        {});
    row("cp inside tp in a host", {}, {},
        {"/rank_order=[\"cp\", \"tp\", \"pp\", \"dp\"]", "/parallelism/tp=4", "/parallelism/cp=2"},
        {});
    row("cp inside tp beyond a host", {}, {},
        {"/rank_order=[\"cp\", \"tp\", \"pp\", \"dp\"]", "/parallelism/cp=2", "/parallelism/dp=32",
         "-/placement"},
        {"plan.json: /rank_order: puts cp inside tp, so each TP group spans tp*cp = 16 GPUs, "
         "which must divide gpus_per_host of every building (TP stays inside a host's NVLink "
         "domain); building 'B1' has 8: put tp first"});
    row("tp does not divide heads", {}, {"/heads=36", "/hidden=4608", "/kv_heads=4"}, {},
        {"plan.json: /parallelism/tp: must divide the model's heads (36), got 8"});
    row("tp and kv heads", {}, {"/heads=48", "/hidden=6144", "/kv_heads=6"}, {},
        {"plan.json: /parallelism/tp: must divide the model's kv_heads (6) or be a multiple of "
         "it, got 8"});
    row("tp does not divide ffn", {}, {"/ffn_hidden=14340"}, {},
        {"plan.json: /parallelism/tp: must divide the model's ffn_hidden (14340), got 8"});
    row("tp does not divide expert ffn", {},
        {R"(/moe={"experts": 8, "top_k": 2, "expert_ffn_hidden": 2052})"}, {},
        {"plan.json: /parallelism/tp: must divide the model's moe.expert_ffn_hidden (2052), got "
         "8"});
    row("fewer layers than stages", {}, {"/layers=3"}, {},
        {"plan.json: /parallelism/pp: pp*virtual_stages (4*1 = 4) must not exceed the model's "
         "layers (3)"});
    row("interleaved chunks", {}, {}, {R"(/schedule={"kind": "interleaved", "virtual_stages": 3})"},
        {"plan.json: /schedule/virtual_stages: the interleaved schedule needs the model's layers "
         "(32) to be a multiple of pp*virtual_stages (4*3 = 12), or placement.layers_per_stage"});
    row("ep without moe", {}, {}, {"/parallelism/ep=2"},
        {"plan.json: /parallelism/ep: ep = 2 needs a mixture-of-experts model, but the model has "
         "no moe"});
    row("ep does not divide experts", {},
        {R"(/moe={"experts": 6, "top_k": 2, "expert_ffn_hidden": 2048})"}, {"/parallelism/ep=4"},
        {"plan.json: /parallelism/ep: must divide the model's moe.experts (6), got 4"});
    row("windowed attention over a cp ring", {}, {R"(/sliding_window={"size": 1024})"},
        {"/parallelism/dp=32", "/parallelism/cp=2"},
        {"plan.json: /cp_ring: context parallelism over windowed attention runs as te-a2a or "
         "te-allgather (Transformer Engine refuses its ring), got te-p2p"});
    row("windowed attention over an all-gather", {}, {R"(/sliding_window={"size": 1024})"},
        {"/parallelism/dp=32", "/parallelism/cp=2", "/cp_ring=\"te-allgather\""}, {});
    row("padded experts under the flex dispatcher", {},
        {R"(/moe={"experts": 8, "top_k": 2, "expert_ffn_hidden": 2048, "pad_to_capacity": true})"},
        {"/parallelism/ep=4", "/ep_dispatcher=\"flex\""},
        {"plan.json: /ep_dispatcher: flex (DeepEP) does not pad experts to capacity, but the "
         "model's moe pads them (capacity_factor above 1 or pad_to_capacity true): use alltoall "
         "or hybridep, or set pad_to_capacity to false"});
    row("padded experts under the all-to-all", {},
        {R"(/moe={"experts": 8, "top_k": 2, "expert_ffn_hidden": 2048, "capacity_factor": 1.5})"},
        {"/parallelism/ep=4"}, {});
    row("placement names a missing building", {}, {}, {"/placement/runs/1/building=\"B9\""},
        {"plan.json: /placement/runs/1/building: no building named 'B9' in the cluster"});
    row("layers per stage sum", {}, {}, {"/placement/layers_per_stage=[8, 8, 8, 7]"},
        {"plan.json: /placement/layers_per_stage: sums to 31 but the model has 32 layers"});
    row("override of a missing link", {}, {}, {"/link_technologies={\"B1-B3\": {\"flows\": 2}}"},
        {"plan.json: /link_technologies/B1-B3: no link named 'B1-B3' in the cluster"});
    row("override with unknown technology", {}, {},
        {"/link_technologies={\"B1-B2\": {\"technology\": \"quic\"}}"},
        {"plan.json: /link_technologies/B1-B2/technology: unknown technology 'quic' (built-in: "
         "roce, roce-long-haul, tcp, tcp-multiflow, nvlink; defined in technologies: tcp-64)"});
    row("fp8 on a gpu without fp8", {"/buildings/1/gpu_model=\"A100\""}, {"/dtype=\"fp8\""}, {},
        {"model.json: /dtype: fp8 needs GPUs with FP8 support, but GPU model 'A100' (building "
         "'B2') has peak_tflops.fp8 = 0"});
    row("several at once", {}, {"/layers=3", "/ffn_hidden=14340"}, {"/parallelism/dp=128"},
        {"plan.json: /parallelism: tp*cp*pp*dp = 4096 GPUs but the cluster has 2048",
         "plan.json: /parallelism/tp: must divide the model's ffn_hidden (14340), got 8",
         "plan.json: /parallelism/pp: pp*virtual_stages (4*1 = 4) must not exceed the model's "
         "layers (3)"});
}

void TestFormats::crossChecks() {
    QFETCH(QStringList, clusterEdits);
    QFETCH(QStringList, modelEdits);
    QFETCH(QStringList, planEdits);
    QFETCH(QStringList, expected);
    const auto c = sa::parseCluster(edited(kCluster, clusterEdits), "cluster.json");
    const auto m = sa::parseModel(edited(kModel, modelEdits), "model.json");
    const auto p = sa::parsePlan(edited(kPlan, planEdits), "plan.json");
    QCOMPARE(strings(c.problems) + strings(m.problems) + strings(p.problems), QStringList());
    const sa::Scenario s{*c.value, *m.value, *p.value};
    QCOMPARE(strings(sa::validateScenario(s, {"cluster.json", "model.json", "plan.json"})),
             expected);
}

void TestFormats::crossChecksOnValuesBuiltInCode() {
    // Values that never went through the parser get the same messages, and
    // nothing divides by zero.
    sa::Scenario s = baseScenario();
    QCOMPARE(strings(sa::validateScenario(s)), QStringList());
    s.plan.parallelism.tp = 0;
    s.plan.rank_order = {sa::Dim::TP, sa::Dim::EP, sa::Dim::PP, sa::Dim::DP};
    s.cluster.buildings[1].gpus_per_host = 0;
    s.model.kv_heads = 0;
    s.cluster.routing.ecmp_tolerance = -1;
    QCOMPARE(strings(sa::validateScenario(s)),
             (QStringList{"cluster: /buildings/1/gpus_per_host: must be a positive integer, got 0",
                          "cluster: /routing/ecmp_tolerance: must be a number >= 0, got -1",
                          "model: /kv_heads: must be a positive integer, got 0",
                          "plan: /parallelism/tp: must be a positive integer, got 0",
                          "plan: /rank_order: must be a permutation of tp, cp, pp, dp, got [tp, "
                          "ep, pp, dp]"}));

    const auto empty = strings(sa::validateScenario(sa::Scenario{}));
    QVERIFY(empty.contains("cluster: /name: must be a non-empty string"));
    QVERIFY(empty.contains("cluster: /buildings: must list at least one building"));
    QVERIFY(empty.contains("model: /layers: must be a positive integer, got 0"));
    QVERIFY(empty.contains("plan: /sequence_length: must be a positive integer, got 0"));
}

void TestFormats::roundTrip_data() {
    goodDocuments_data();
}

void TestFormats::roundTrip() {
    QFETCH(QString, kind);
    QFETCH(QString, text);
    const std::string t = text.toStdString();
    const auto check = [](const auto& first, auto parse) {
        QVERIFY(first.ok());
        const std::string dumped = sa::dumpCanonical(sa::toJson(*first.value));
        const auto second = parse(dumped);
        QCOMPARE(strings(second.problems), QStringList());
        QVERIFY(*second.value == *first.value);
        QCOMPARE(sa::dumpCanonical(sa::toJson(*second.value)), dumped);
    };
    if (kind == "cluster")
        check(sa::parseCluster(t, "a"),
              [](const std::string& s) { return sa::parseCluster(s, "b"); });
    else if (kind == "model")
        check(sa::parseModel(t, "a"), [](const std::string& s) { return sa::parseModel(s, "b"); });
    else if (kind == "plan")
        check(sa::parsePlan(t, "a"), [](const std::string& s) { return sa::parsePlan(s, "b"); });
    else
        check(sa::parseScenario(t, "a", ""),
              [](const std::string& s) { return sa::parseScenario(s, "b", ""); });
}

void TestFormats::expertTensorParallelReadsBack() {
    const auto plan = [](const std::string& etp) {
        return sa::parsePlan(R"({"format": "scaleacross.plan", "version": 1, "name": "p",
            "sequence_length": 4096, "global_batch_sequences": 64,
            "parallelism": {"tp": 4, "dp": 16, "ep": 8)" +
                                 etp + R"(}, "sequence_parallel": true})",
                             "plan.json");
    };
    // etp equal to tp is the default, read as such and not written.
    const auto same = plan(R"(, "etp": 4)");
    QVERIFY(same.ok());
    QCOMPARE(same.value->parallelism.etp, 0);
    QVERIFY(*same.value == *plan("").value);
    QVERIFY(!sa::toJson(*same.value)["parallelism"].contains("etp"));
    // Below tp it is kept, and reads back equal.
    const auto folded = plan(R"(, "etp": 1)");
    QVERIFY(folded.ok());
    QCOMPARE(folded.value->parallelism.expertTp(), 1);
    QCOMPARE(folded.value->parallelism.expertRanksPerCell(), 4);
    QCOMPARE(folded.value->parallelism.expertReplicaSpan(), 2);
    QCOMPARE(folded.value->parallelism.expertDataShards(), 8.0);
    const std::string dumped = sa::dumpCanonical(sa::toJson(*folded.value));
    QVERIFY(dumped.find("\"etp\": 1") != std::string::npos);
    QVERIFY(*sa::parsePlan(dumped, "b").value == *folded.value);
}

void TestFormats::roundTripBuiltInCode() {
    sa::Scenario s = baseScenario();
    s.cluster.buildings[0].scale_out_gbps = 0.1 + 0.2; // not a short decimal
    s.cluster.links[0].latency_ms = 1.0 / 3.0;
    s.cluster.links[0].background_gbps = s.cluster.links[0].bandwidth_gbps / 3.0;
    for (auto& [key, g] : s.cluster.gpu_models) {
        g.gemm_efficiency_fp8 = 0.1 + 0.55; // not a short decimal
        g.tdp_w = 700;
        g.power_limit_w = 1000.0 / 3.0;
    }
    s.cluster.technologies["x"] = sa::Technology{"x", 0.7, 1e-9, 3, 1e-7, false, 1500, 0.25};
    s.model.moe = sa::MoeConfig{8, 2, 2048, 0, 0, 1.0};
    s.plan.parallelism.ep = 8;
    s.plan.collectives[sa::Dim::PP] = sa::CollectiveAlgo::Tree;
    s.plan.link_technologies["B1-B2"] = {"x", 0};
    s.cluster.routing = {sa::RoutingPolicy::Ecmp, sa::EcmpMetric::Latency, 1.0 / 3.0};
    sa::Technology knobs{"k", 0.8, 0, 1, 0, true, 4096, 2};
    knobs.nccl_channels = 3;
    knobs.qps_per_connection = 5;
    knobs.buffsize_mib = 1.0 / 3.0;
    knobs.flows = 15;
    knobs.pfc_headroom_mib = 0.1 + 0.2;
    knobs.port_gbps = 800;
    knobs.lossy_loss_rate = 1e-5;
    s.cluster.technologies["k"] = knobs;
    sa::Technology sockets{"s", 0.8, 16, 7, 1e-6, false, 9000, 20};
    sockets.nccl_channels = 1;
    sockets.sockets_per_connection = 64;
    sockets.buffsize_mib = 64;
    sockets.host_net_cores = 12;
    sockets.host_gbps_per_core = 1.0 / 7.0;
    sockets.max_flows_per_host = 100;
    s.cluster.technologies["s"] = sockets;
    s.plan.link_technologies["B1-B2"] = {"k", 9, 2, 0, 0, 0.1 + 0.2};
    QCOMPARE(strings(sa::validateScenario(s)), QStringList());
    const auto back = sa::parseScenario(sa::dumpCanonical(sa::toJson(s)), "s.json", "");
    QCOMPARE(strings(back.problems), QStringList());
    QVERIFY(*back.value == s);
}

void TestFormats::canonicalText() {
    // Known keys in the order of docs/FORMATS.md, others alphabetically after
    // them; short lists of scalars on one line.
    const json j = {{"zeta", 1},
                    {"alpha", nullptr},
                    {"name", "p"},
                    {"format", "scaleacross.plan"},
                    {"version", 1},
                    {"parallelism", {{"dp", 64}, {"tp", 8}, {"pp", 4}}},
                    {"placement", {{"runs", {{{"building", "B1"}, {"stages", {0, 1}}}}}}},
                    {"rank_order", {"tp", "cp", "pp", "dp"}},
                    {"collectives", json::object()},
                    {"hbm_tbps", 3.35}};
    QCOMPARE(QString::fromStdString(sa::dumpCanonical(j)), QString(R"({
  "format": "scaleacross.plan",
  "version": 1,
  "name": "p",
  "hbm_tbps": 3.35,
  "parallelism": {
    "tp": 8,
    "pp": 4,
    "dp": 64
  },
  "rank_order": ["tp", "cp", "pp", "dp"],
  "placement": {
    "runs": [
      {
        "stages": [0, 1],
        "building": "B1"
      }
    ]
  },
  "collectives": {},
  "alpha": null,
  "zeta": 1
}
)"));
    const std::string plan =
        sa::dumpCanonical(sa::toJson(parsed(sa::parsePlan(kMinimalPlan, "p"))));
    QVERIFY2(plan.rfind("{\n  \"format\": \"scaleacross.plan\",\n  \"version\": 1,\n  \"name\": "
                        "\"p\",\n  \"description\": \"\",\n",
                        0) == 0,
             plan.c_str());
    QVERIFY2(plan.find("\"dp_bucket_mib\": 256,") != std::string::npos, plan.c_str());
    for (const char* key : {"zero_stage", "recompute", "sequence_parallel", "schedule",
                            "virtual_stages", "rank_order", "collectives", "link_technologies",
                            "dp_overlap", "grad_reduce_bytes", "cp", "ep"})
        QVERIFY2(plan.find(std::string("\"") + key + "\":") != std::string::npos, key);
    // Every key of the model is written, defaults included.
    const json m = sa::toJson(parsed(sa::parseModel(kMinimalModel, "m.json")));
    for (const char* key : {"description", "mlp", "dtype", "tied_embeddings"})
        QVERIFY2(m.contains(key), key);
    const json c = sa::toJson(parsed(sa::parseCluster(kMinimalCluster, "c.json")));
    QCOMPARE(c["buildings"][0]["zone_gpus"].get<int>(), 8);
    QCOMPARE(c["gpu_models"]["G"]["sms"].get<int>(), 108);
}

void TestFormats::scenarioRelativePaths() {
    const auto loaded = sa::loadScenarioFile(dataDir() + "/scenarios/relative.json");
    QCOMPARE(strings(loaded.problems), QStringList());
    QVERIFY(*loaded.value == baseScenario());

    const auto mixed = sa::loadScenarioFile(dataDir() + "/scenarios/mixed.json");
    QCOMPARE(strings(mixed.problems), QStringList());
    QCOMPARE(mixed.value->cluster.name, std::string("two-buildings"));
    QCOMPARE(mixed.value->model.name, std::string("tiny"));

    // Relative to baseDir, not to the working directory.
    const std::string text = "{\"format\": \"scaleacross.scenario\", \"version\": 1, "
                             "\"cluster\": \"cluster.json\", \"model\": \"model.json\", "
                             "\"plan\": \"plan.json\"}";
    const auto fromText = sa::parseScenario(text, "inline.json", dataDir());
    QCOMPARE(strings(fromText.problems), QStringList());
    QVERIFY(*fromText.value == baseScenario());

    const auto files = sa::loadScenarioFiles(dataDir() + "/cluster.json", dataDir() + "/model.json",
                                             dataDir() + "/bad/plan-too-big.json");
    QCOMPARE(strings(files.problems),
             QStringList{dataPath("bad/plan-too-big.json") +
                         ": /parallelism: tp*cp*pp*dp = 4096 GPUs but the cluster has 2048"});
    QVERIFY(files.value); // the documents themselves are fine
    QVERIFY(!files.ok());
}

void TestFormats::scenarioReferencedFileProblems() {
    // A problem inside a referenced file names that file.
    const auto loaded = sa::loadScenarioFile(dataDir() + "/bad/scenario-bad-plan.json");
    QCOMPARE(strings(loaded.problems),
             QStringList{dataPath("bad/plan-bad-tp.json") +
                         ": /parallelism/tp: must be a positive integer, got -2"});
    QVERIFY(!loaded.value);

    const auto wrongKind = sa::parseScenario(
        R"({"format": "scaleacross.scenario", "version": 1, "cluster": "model.json",
            "model": "model.json", "plan": "plan.json"})",
        "s.json", dataDir());
    QCOMPARE(strings(wrongKind.problems),
             QStringList{dataPath("model.json") +
                         ": /format: must be 'scaleacross.cluster', got 'scaleacross.model'"});
}

void TestFormats::loadAnyFileDetectsKind() {
    const auto cluster = sa::loadAnyFile(dataDir() + "/cluster.json");
    QVERIFY(cluster.ok());
    QVERIFY(std::holds_alternative<sa::Cluster>(*cluster.value));
    const auto plan = sa::loadAnyFile(dataDir() + "/plan.json");
    QVERIFY(std::holds_alternative<sa::Plan>(*plan.value));
    const auto scenario = sa::loadAnyFile(dataDir() + "/scenarios/relative.json");
    QVERIFY(scenario.ok());
    QVERIFY(std::holds_alternative<sa::Scenario>(*scenario.value));

    QTemporaryDir dir;
    const QString unknown = dir.filePath("x.json");
    QVERIFY(writeFile(unknown, R"({"format": "scaleacross.trace", "version": 1})"));
    QCOMPARE(strings(sa::loadAnyFile(unknown.toStdString()).problems),
             QStringList{unknown + ": /format: must be one of scaleacross.cluster, "
                                   "scaleacross.model, scaleacross.plan, scaleacross.scenario, "
                                   "got 'scaleacross.trace'"});
    QVERIFY(writeFile(unknown, R"({"version": 1})"));
    QCOMPARE(strings(sa::loadAnyFile(unknown.toStdString()).problems),
             QStringList{unknown + ": missing required key 'format' (one of scaleacross.cluster, "
                                   "scaleacross.model, scaleacross.plan, scaleacross.scenario)"});
}

void TestFormats::truncatedInputNeverThrows() {
    const std::string text = scenarioText();
    for (std::size_t n = 0; n < text.size(); n += 7) {
        const auto loaded = sa::parseScenario(text.substr(0, n), "s.json", "");
        QVERIFY(!loaded.ok());
        QVERIFY(!loaded.problems.empty());
    }
    // Every value of the plan replaced by values of other types and sizes:
    // no exception, and null or an array is wrong for every key.
    const json plan = json::parse(kFullPlan);
    for (auto it = plan.begin(); it != plan.end(); ++it) {
        for (const json& other : {json(nullptr), json::array(), json("x"), json(-1), json(1e300),
                                  json::object(), json(true)}) {
            json j = plan;
            j[it.key()] = other;
            const auto loaded = sa::parsePlan(j.dump(), "p.json");
            if (other.is_null() || other.is_array())
                QVERIFY2(!loaded.problems.empty(), j.dump().c_str());
        }
    }
}

void TestFormats::readTextFileErrors() {
    QTemporaryDir dir;
    std::string error;
    const std::string missing = dir.filePath("missing.json").toStdString();
    QVERIFY(!sa::readTextFile(missing, &error));
    QCOMPARE(error, "cannot read '" + missing + "': No such file or directory");
    QCOMPARE(strings(sa::loadClusterFile(missing).problems),
             QStringList{QString::fromStdString(missing) +
                         ": cannot read file: No such file or directory"});

    QVERIFY(!sa::readTextFile(dir.path().toStdString(), &error));
    QCOMPARE(error, "cannot read '" + dir.path().toStdString() + "': it is a directory");

    const QString big = dir.filePath("big.json");
    {
        QFile f(big);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QVERIFY(f.resize(65 << 20)); // sparse: no 65 MiB written
    }
    QVERIFY(!sa::readTextFile(big.toStdString(), &error));
    QCOMPARE(QString::fromStdString(error),
             "cannot read '" + big +
                 "': 65.0 MiB is larger than the limit of 64.0 MiB for a "
                 "document");

    const QString small = dir.filePath("small.json");
    QVERIFY(writeFile(small, "{}\n"));
    QCOMPARE(sa::readTextFile(small.toStdString(), nullptr).value_or("?"), std::string("{}\n"));
}

void TestFormats::saveReplacesContents() {
    QTemporaryDir dir;
    const QString path = dir.filePath("doc.json");
    QVERIFY(writeFile(path, "old contents"));
    QVERIFY(QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner));
    QCOMPARE(sa::saveFileAtomically(path.toStdString(), "new contents\n"), std::string());
    QCOMPARE(readAll(path), QByteArray("new contents\n"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"doc.json"});
    // The permissions of the replaced file are kept.
    QCOMPARE(QFile::permissions(path) & (QFileDevice::ReadGroup | QFileDevice::ReadOther),
             QFileDevice::Permissions());

    const QString fresh = dir.filePath("fresh.json");
    QCOMPARE(sa::saveFileAtomically(fresh.toStdString(), "x"), std::string());
    QCOMPARE(readAll(fresh), QByteArray("x"));

    const QString nowhere = dir.filePath("no/such/dir/doc.json");
    QCOMPARE(QString::fromStdString(sa::saveFileAtomically(nowhere.toStdString(), "x")),
             "cannot write '" + nowhere +
                 "': cannot create a temporary file next to it: No such file or directory");
}

void TestFormats::saveKeepsOldFileWhenDirectoryUnwritable() {
    QTemporaryDir dir;
    const QString sub = dir.filePath("readonly");
    QVERIFY(QDir().mkdir(sub));
    const QString path = sub + "/doc.json";
    QVERIFY(writeFile(path, "old contents"));
    QVERIFY(::chmod(sub.toLocal8Bit().constData(), 0555) == 0);
    QVERIFY(::chmod(dir.path().toLocal8Bit().constData(), 0755) == 0);

    std::string message;
    if (::geteuid() != 0) {
        message = sa::saveFileAtomically(path.toStdString(), "new contents");
    } else {
        // root writes anywhere: try as an unprivileged user in a child process.
        int fds[2];
        QVERIFY(::pipe(fds) == 0);
        const pid_t pid = ::fork();
        QVERIFY(pid >= 0);
        if (pid == 0) {
            ::close(fds[0]);
            if (::setgid(65534) != 0 || ::setuid(65534) != 0)
                ::_exit(77);
            const std::string m = sa::saveFileAtomically(path.toStdString(), "new contents");
            const ssize_t written = ::write(fds[1], m.data(), m.size());
            ::_exit(written == static_cast<ssize_t>(m.size()) ? 0 : 1);
        }
        ::close(fds[1]);
        char buf[4096];
        ssize_t n = 0;
        while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
            message.append(buf, static_cast<std::size_t>(n));
        ::close(fds[0]);
        int status = 0;
        ::waitpid(pid, &status, 0);
        ::chmod(sub.toLocal8Bit().constData(), 0755);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
            QSKIP("cannot drop root privileges here");
        QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    ::chmod(sub.toLocal8Bit().constData(), 0755);
    QCOMPARE(QString::fromStdString(message),
             "cannot write '" + path +
                 "': cannot create a temporary file next to it: Permission denied");
    QCOMPARE(readAll(path), QByteArray("old contents"));
    QCOMPARE(QDir(sub).entryList(QDir::Files), QStringList{"doc.json"});
}

void TestFormats::saveKeepsOldFileWhenWriteFails() {
    // A full disk, simulated with a file size limit: the write fails half way.
    QTemporaryDir dir;
    const QString path = dir.filePath("doc.json");
    QVERIFY(writeFile(path, "old contents"));
    const std::string big(4096, 'x');
    rlimit old{};
    QVERIFY(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    auto* previous = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = 1024;
    QVERIFY(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    const std::string message = sa::saveFileAtomically(path.toStdString(), big);
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);
    QCOMPARE(QString::fromStdString(message),
             "cannot write '" + path + "': write failed: File too large");
    QCOMPARE(readAll(path), QByteArray("old contents"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"doc.json"});
}

void TestFormats::cliCheck_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("out");
    QTest::addColumn<QString>("err");
    const QString cluster = dataPath("cluster.json");
    QTest::newRow("good cluster") << QStringList{"check", cluster} << 0
                                  << cluster + ": ok (cluster 'two-buildings')\n"
                                  << QString();
    QTest::newRow("folder") << QStringList{"check", dataPath("")} << 0
                            << dataPath("plan.json") + ": ok (plan 'pp-across-buildings')"
                            << QString();
    QTest::newRow("scenario")
        << QStringList{"check", dataPath("scenarios/relative.json")} << 0
        << dataPath("scenarios/relative.json") +
               ": ok (scenario: cluster 'two-buildings', model 'llama3-8b', plan "
               "'pp-across-buildings')\n"
        << QString();
    QTest::newRow("broken plan") << QStringList{"check", cluster, dataPath("bad/plan-bad-tp.json")}
                                 << 2 << cluster + ": ok (cluster 'two-buildings')\n"
                                 << dataPath("bad/plan-bad-tp.json") +
                                        ": /parallelism/tp: must be a positive integer, got -2\n";
    QTest::newRow("scenario with broken plan")
        << QStringList{"check", dataPath("bad/scenario-bad-plan.json")} << 2 << QString()
        << dataPath("bad/plan-bad-tp.json") +
               ": /parallelism/tp: must be a positive integer, got -2\n";
    QTest::newRow("missing file") << QStringList{"check", dataPath("nope.json")} << 2 << QString()
                                  << dataPath("nope.json") +
                                         ": cannot read file: No such file or directory\n";
    QTest::newRow("separate files are checked together on request")
        << QStringList{"check",
                       "--cluster",
                       cluster,
                       "--model",
                       dataPath("model.json"),
                       "--plan",
                       dataPath("bad/plan-too-big.json")}
        << 2 << QString()
        << dataPath("bad/plan-too-big.json") +
               ": /parallelism: tp*cp*pp*dp = 4096 GPUs but the cluster has 2048\n";
    QTest::newRow("separate files alone") << QStringList{"check", dataPath("bad/plan-too-big.json")}
                                          << 0 << "ok (plan 'needs-4096-gpus')" << QString();
    QTest::newRow("no files") << QStringList{"check"} << 2 << QString()
                              << "scaleacross check: no documents given (see --help)\n";
    QTest::newRow("help") << QStringList{"check", "--help"} << 0
                          << "Usage: scaleacross check FILE|DIR..." << QString();
    QTest::newRow("unknown option")
        << QStringList{"check", "--strict", cluster} << 2 << QString() << "unknown option --strict";
}

void TestFormats::cliCheck() {
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    QFETCH(QString, out);
    QFETCH(QString, err);
    QProcess p;
    p.start(SCALEACROSS_CLI_PATH, args);
    QVERIFY(p.waitForFinished(30000));
    const QString stdoutText = QString::fromUtf8(p.readAllStandardOutput());
    const QString stderrText = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QVERIFY2(p.exitCode() == exitCode, qPrintable(stderrText));
    // A full expected text ends with a newline; otherwise it is a part of the output.
    if (out.endsWith('\n'))
        QCOMPARE(stdoutText, out);
    else
        QVERIFY2(stdoutText.contains(out), qPrintable(stdoutText));
    if (err.isNull() || err.endsWith('\n'))
        QCOMPARE(stderrText, err);
    else
        QVERIFY2(stderrText.contains(err), qPrintable(stderrText));
}

void TestFormats::frameworkDefaults_data() {
    QTest::addColumn<QString>("framework");
    QTest::addColumn<int>("zero");
    QTest::addColumn<bool>("sequenceParallel");
    QTest::addColumn<bool>("dpOverlap");
    QTest::addColumn<bool>("flash");
    QTest::addColumn<int>("kernel");
    QTest::addColumn<int>("elementwise");
    QTest::addColumn<int>("recipe");
    QTest::addColumn<int>("linear");
    QTest::addColumn<double>("bucketMib");
    // kPlan: dp 64, cp 1; Megatron's overlap is off, so its bucket stays the
    // format's 256 MiB.
    QTest::newRow("megatron-core")
        << "megatron-core" << 0 << false << false << true << int(sa::AttentionKernel::Auto)
        << int(sa::Elementwise::Fused) << int(sa::Fp8Recipe::Delayed)
        << int(sa::Fp8Linear::TransformerEngine) << 256.0;
    QTest::newRow("nemo") << "nemo" << 0 << false << false << false
                          << int(sa::AttentionKernel::Auto) << int(sa::Elementwise::Fused)
                          << int(sa::Fp8Recipe::Delayed) << int(sa::Fp8Linear::TransformerEngine)
                          << 256.0;
    QTest::newRow("torchtitan") << "torchtitan" << 3 << true << true << true
                                << int(sa::AttentionKernel::Flash2) << int(sa::Elementwise::Eager)
                                << int(sa::Fp8Recipe::Current) << int(sa::Fp8Linear::Torchao)
                                << 256.0;
}

void TestFormats::frameworkDefaults() {
    QFETCH(QString, framework);
    QFETCH(int, zero);
    QFETCH(bool, sequenceParallel);
    QFETCH(bool, dpOverlap);
    QFETCH(bool, flash);
    QFETCH(int, kernel);
    QFETCH(int, elementwise);
    QFETCH(int, recipe);
    QFETCH(int, linear);
    QFETCH(double, bucketMib);
    const auto loaded =
        sa::parsePlan(edited(kPlan, {"/framework=\"" + framework + "\""}), "plan.json");
    QVERIFY2(loaded.ok(), qPrintable(strings(loaded.problems).join("; ")));
    const sa::Plan& p = *loaded.value;
    QVERIFY(p.framework.has_value());
    QCOMPARE(QString::fromLatin1(sa::toString(*p.framework)), framework);
    QCOMPARE(p.zero_stage, zero);
    QCOMPARE(p.sequence_parallel, sequenceParallel);
    QCOMPARE(p.dp_overlap, dpOverlap);
    QCOMPARE(p.flash_attention, flash);
    QCOMPARE(int(p.attention_kernel), kernel);
    QCOMPARE(int(p.elementwise), elementwise);
    QCOMPARE(int(p.fp8_recipe), recipe);
    QCOMPARE(int(p.fp8_linear), linear);
    QCOMPARE(p.dp_bucket_mib, bucketMib);
    QCOMPARE(p.grad_reduce_bytes, 4);
    QCOMPARE(p.rank_order,
             (std::vector<sa::Dim>{sa::Dim::TP, sa::Dim::CP, sa::Dim::DP, sa::Dim::PP}));
    // The document's own fields are untouched by the defaults.
    QCOMPARE(p.parallelism.dp, 64);
    QCOMPARE(p.name, std::string("pp-across-buildings"));
    QVERIFY(p.placement.has_value());

    // Without the key: the format's defaults, as before.
    const sa::Plan plain = parsed(sa::parsePlan(kPlan, "plan.json"));
    QVERIFY(!plain.framework);
    QCOMPARE(plain.zero_stage, 1);
    QCOMPARE(plain.sequence_parallel, true);
    QCOMPARE(plain.fp8_recipe, sa::Fp8Recipe::Current);
    QCOMPARE(plain.rank_order,
             (std::vector<sa::Dim>{sa::Dim::TP, sa::Dim::CP, sa::Dim::PP, sa::Dim::DP}));
}

void TestFormats::optimizerPrecisionKeys() {
    using sa::MasterWeights;
    using sa::OptimizerMoments;
    const sa::Plan plain = parsed(sa::parsePlan(kPlan, "plan.json"));
    QCOMPARE(plain.optimizer_moments, OptimizerMoments::Fp32);
    QCOMPARE(plain.master_weights, MasterWeights::Fp32);
    const std::string plainOut = sa::dumpCanonical(sa::toJson(plain));
    QVERIFY(plainOut.find("\"optimizer_moments\"") == std::string::npos);
    QVERIFY(plainOut.find("\"master_weights\"") == std::string::npos);
    const std::tuple<const char*, const char*, OptimizerMoments, MasterWeights> values[] = {
        {"fp32", "16bit", OptimizerMoments::Fp32, MasterWeights::Half},
        {"bf16", "none", OptimizerMoments::Bf16, MasterWeights::None},
        {"bf16", "fp32", OptimizerMoments::Bf16, MasterWeights::Fp32}};
    for (const auto& [moments, master, wantMoments, wantMaster] : values) {
        const sa::Plan p = parsed(
            sa::parsePlan(edited(kPlan, {QStringLiteral("/optimizer_moments=\"") + moments + "\"",
                                         QStringLiteral("/master_weights=\"") + master + "\""}),
                          "plan.json"));
        QCOMPARE(p.optimizer_moments, wantMoments);
        QCOMPARE(p.master_weights, wantMaster);
        QCOMPARE(QString::fromLatin1(sa::toString(p.master_weights)), QString::fromLatin1(master));
        QVERIFY(parsed(sa::parsePlan(sa::dumpCanonical(sa::toJson(p)), "plan.json")) == p);
    }
}

void TestFormats::crossEntropyKey() {
    using sa::CrossEntropy;
    const std::pair<const char*, CrossEntropy> values[] = {
        {"megatron", CrossEntropy::Megatron},
        {"megatron-fused", CrossEntropy::MegatronFused},
        {"te", CrossEntropy::Te},
        {"pytorch", CrossEntropy::Pytorch}};
    for (const auto& [text, want] : values) {
        const sa::Plan p = parsed(sa::parsePlan(
            edited(kPlan, {QStringLiteral("/cross_entropy=\"") + text + "\""}), "plan.json"));
        QCOMPARE(p.cross_entropy, want);
        QCOMPARE(QString::fromLatin1(sa::toString(p.cross_entropy)), QString::fromLatin1(text));
        // Written back only when it is not the format's default.
        const std::string out = sa::dumpCanonical(sa::toJson(p));
        QCOMPARE(out.find("\"cross_entropy\"") != std::string::npos,
                 want != CrossEntropy::Megatron);
        QVERIFY(parsed(sa::parsePlan(out, "plan.json")) == p);
    }
    QCOMPARE(parsed(sa::parsePlan(kPlan, "plan.json")).cross_entropy, CrossEntropy::Megatron);
    // The frameworks' own loss: Megatron-Core's unfused one unless
    // --cross-entropy-loss-fusion; torchtitan's eager F.cross_entropy.
    QCOMPARE(parsed(sa::parsePlan(edited(kPlan, {"/framework=\"megatron-core\""}), "plan.json"))
                 .cross_entropy,
             CrossEntropy::Megatron);
    QCOMPARE(parsed(sa::parsePlan(edited(kPlan, {"/framework=\"torchtitan\""}), "plan.json"))
                 .cross_entropy,
             CrossEntropy::Pytorch);
    const auto bad = sa::parsePlan(edited(kPlan, {"/cross_entropy=\"fused\""}), "p.json");
    QVERIFY(!bad.ok());
    QVERIFY(strings(bad.problems).join(";").contains("/cross_entropy: must be one of"));
}

void TestFormats::frameworkKnobOverrides() {
    // A knob the document gives wins over the framework's default.
    const sa::Plan tt = parsed(sa::parsePlan(
        edited(kPlan, {"/framework=\"torchtitan\"", "/zero_stage=1", "/elementwise=\"fused\"",
                       "/rank_order=[\"tp\",\"cp\",\"pp\",\"dp\"]"}),
        "plan.json"));
    QCOMPARE(tt.zero_stage, 1);
    QCOMPARE(tt.elementwise, sa::Elementwise::Fused);
    QCOMPARE(tt.rank_order,
             (std::vector<sa::Dim>{sa::Dim::TP, sa::Dim::CP, sa::Dim::PP, sa::Dim::DP}));
    QCOMPARE(tt.fp8_linear, sa::Fp8Linear::Torchao); // not given: the framework's
    // torchtitan's DDP bucket (no FSDP) unless the document gives one.
    const sa::Plan ddp = parsed(
        sa::parsePlan(edited(kPlan, {"/framework=\"torchtitan\"", "/zero_stage=0"}), "plan.json"));
    QCOMPARE(ddp.dp_bucket_mib, sa::kTorchtitanDdpBucketMib);
    const sa::Plan ddpGiven = parsed(sa::parsePlan(
        edited(kPlan, {"/framework=\"torchtitan\"", "/zero_stage=0", "/dp_bucket_mib=64"}),
        "plan.json"));
    QCOMPARE(ddpGiven.dp_bucket_mib, 64.0);
    // Megatron's bucket follows dp and the gradient bytes when overlap is on.
    const sa::Plan mc =
        parsed(sa::parsePlan(edited(kPlan, {"/framework=\"megatron-core\"", "/dp_overlap=true",
                                            "/grad_reduce_bytes=2", "/sequence_parallel=true"}),
                             "plan.json"));
    QCOMPARE(mc.dp_bucket_mib, sa::megatronDefaultBucketMib(64, 2));
    QCOMPARE(mc.dp_bucket_mib, 64e6 * 2 / (1024.0 * 1024.0)); // 1M x dp 64 > 40M
    QCOMPARE(mc.sequence_parallel, true);
    QCOMPARE(mc.zero_stage, 0);
}

void TestFormats::frameworkP2pFollowsSchedule_data() {
    QTest::addColumn<QString>("framework"); // empty: none
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<bool>("overlap");
    const char* schedules[] = {"{\"kind\": \"gpipe\"}", "{\"kind\": \"1f1b\"}",
                               "{\"kind\": \"interleaved\", \"virtual_stages\": 2}",
                               "{\"kind\": \"zero-bubble\"}"};
    const char* names[] = {"gpipe", "1f1b", "interleaved", "zero-bubble"};
    // Megatron-LM overlaps only interleaved (--no-overlap-p2p-communication
    // off); NeMo passes overlap_p2p_comm to Megatron-Core, default False;
    // torchtitan's Schedule1F1B waits for its steady-state sends, its other
    // schedules do not; without a framework, the format's overlap.
    const bool expected[][4] = {{false, false, true, false},
                                {false, false, false, false},
                                {true, false, true, true},
                                {true, true, true, true}};
    const char* frameworks[] = {"megatron-core", "nemo", "torchtitan", ""};
    for (int f = 0; f < 4; ++f)
        for (int k = 0; k < 4; ++k)
            QTest::addRow("%s %s", *frameworks[f] ? frameworks[f] : "none", names[k])
                << QString::fromLatin1(frameworks[f]) << QString::fromLatin1(schedules[k])
                << expected[f][k];
}

void TestFormats::frameworkP2pFollowsSchedule() {
    QFETCH(QString, framework);
    QFETCH(QString, schedule);
    QFETCH(bool, overlap);
    QStringList edits{"/schedule=" + schedule};
    if (!framework.isEmpty())
        edits << "/framework=\"" + framework + "\"";
    const sa::Plan p = parsed(sa::parsePlan(edited(kPlan, edits), "plan.json"));
    QCOMPARE(p.p2p_overlap, overlap);
    // A value the document gives wins.
    for (bool given : {false, true}) {
        const sa::Plan g = parsed(sa::parsePlan(
            edited(kPlan,
                   edits + QStringList{QString("/p2p_overlap=%1").arg(given ? "true" : "false")}),
            "plan.json"));
        QCOMPARE(g.p2p_overlap, given);
    }
    // Choosing the framework in the explorer gives the same.
    sa::Plan chosen = parsed(sa::parsePlan(edited(kPlan, {"/schedule=" + schedule}), "plan.json"));
    if (!framework.isEmpty()) {
        sa::applyFrameworkSoftwareDefaults(
            chosen, *sa::trainingFrameworkFromString(framework.toStdString()));
        QCOMPARE(chosen.p2p_overlap, overlap);
    }
}

void TestFormats::frameworkRoundTrip() {
    for (const char* fw : {"megatron-core", "nemo", "torchtitan"}) {
        // Overrides that equal the format's defaults must survive writing.
        const sa::Plan p = parsed(sa::parsePlan(
            edited(kPlan, {QString("/framework=\"%1\"").arg(fw), "/elementwise=\"fused\"",
                           "/attention_kernel=\"auto\"", "/fp8_recipe=\"current\"",
                           "/fp8_linear=\"transformer-engine\""}),
            "plan.json"));
        QVERIFY(p.framework.has_value());
        const std::string text = sa::dumpCanonical(sa::toJson(p));
        QVERIFY(text.find("\"framework\"") != std::string::npos);
        const sa::Plan back = parsed(sa::parsePlan(text, "plan.json"));
        QVERIFY2(back == p, fw);
        QCOMPARE(back.elementwise, sa::Elementwise::Fused);
    }
    // Without a framework the written text has no framework key.
    const sa::Plan plain = parsed(sa::parsePlan(kPlan, "plan.json"));
    QVERIFY(sa::dumpCanonical(sa::toJson(plain)).find("\"framework\"") == std::string::npos);
}

void TestFormats::frameworkEvaluatesAsWrittenOut() {
    // A plan that only names torchtitan evaluates as the same plan with
    // torchtitan's knobs written out, and differently from the format's
    // defaults.
    const std::string only = edited(kPlan, {"/framework=\"torchtitan\""});
    const std::string written = edited(
        kPlan, {"/zero_stage=3", "/sequence_parallel=true", "/dp_overlap=true",
                "/flash_attention=true", "/attention_kernel=\"flash2\"", "/elementwise=\"eager\"",
                "/fp8_recipe=\"current\"", "/fp8_linear=\"torchao\"", "/grad_reduce_bytes=4",
                "/fsdp_reshard_after_forward=\"default\"", "/tp_comm_overlap=false",
                "/p2p_overlap=false", "/rank_order=[\"tp\",\"cp\",\"dp\",\"pp\"]",
                "/cross_entropy=\"pytorch\"", "/sequence_parallel_regather=false",
                "/cp_ring=\"torch-allgather\"", "/grad_accumulation_fusion=false"});
    sa::Scenario a = baseScenario(), b = baseScenario(), c = baseScenario();
    a.plan = parsed(sa::parsePlan(only, "plan.json"));
    b.plan = parsed(sa::parsePlan(written, "plan.json"));
    auto step = [](const sa::Scenario& s) {
        const sa::EvaluationResult r = sa::evaluate(s);
        if (const auto* e = std::get_if<sa::EvaluationError>(&r))
            qFatal("evaluate failed: %s", e->str().c_str());
        return std::get<sa::Evaluation>(r).step_time_s;
    };
    QVERIFY(!b.plan.framework);
    b.plan.framework = a.plan.framework;
    QVERIFY(a.plan == b.plan);
    const double sa_ = step(a), sb = step(b), sc = step(c);
    QCOMPARE(sa_, sb);
    QVERIFY2(sa_ != sc, "torchtitan's defaults must change the evaluation");
}

// A plan key with named values: each reads as its value and writes back as
// itself, the first (the default) left out of the written plan; `bad` is
// refused, naming the path and the values.
template <class E>
static void checkChoiceKnob(const char* key,
                            std::initializer_list<std::pair<const char*, E>> values,
                            E (*read)(const sa::Plan&), const char* bad) {
    const QString path = QStringLiteral("/") + QLatin1String(key);
    QStringList names;
    for (const auto& [text, value] : values) {
        names << QLatin1String(text);
        const sa::Plan p = parsed(
            sa::parsePlan(edited(kPlan, {QString("%1=\"%2\"").arg(path, text)}), "plan.json"));
        QCOMPARE(read(p), value);
        const nlohmann::json j = sa::toJson(p);
        if (value == values.begin()->second)
            QVERIFY(!j.contains(key));
        else
            QCOMPARE(j[key].template get<std::string>(), std::string(text));
        QVERIFY(parsed(sa::parsePlan(sa::dumpCanonical(j), "plan.json")) == p);
    }
    const auto problems = strings(
        sa::parsePlan(edited(kPlan, {QString("%1=\"%2\"").arg(path, bad)}), "plan.json").problems);
    QCOMPARE(problems.size(), 1);
    QCOMPARE(problems[0], QString("plan.json: %1: must be one of %2, got '%3'")
                              .arg(path, names.join(QStringLiteral(", ")), bad));
}

void TestFormats::elementwiseValues() {
    checkChoiceKnob<sa::Elementwise>(
        "elementwise",
        {{"fused", sa::Elementwise::Fused},
         {"eager", sa::Elementwise::Eager},
         {"compiled", sa::Elementwise::Compiled}},
        [](const sa::Plan& p) { return p.elementwise; }, "inductor");
}

void TestFormats::optimizerImplementationValues() {
    checkChoiceKnob<sa::OptimizerImpl>(
        "optimizer_implementation",
        {{"fused", sa::OptimizerImpl::Fused}, {"foreach", sa::OptimizerImpl::Foreach}},
        [](const sa::Plan& p) { return p.optimizer_implementation; }, "for-loop");
}

void TestFormats::cpRingValues() {
    checkChoiceKnob<sa::CpRing>(
        "cp_ring",
        {{"te-p2p", sa::CpRing::TeP2p},
         {"te-allgather", sa::CpRing::TeAllGather},
         {"te-a2a", sa::CpRing::TeA2a},
         {"torch-allgather", sa::CpRing::TorchAllGather},
         {"torch-alltoall", sa::CpRing::TorchAllToAll}},
        [](const sa::Plan& p) { return p.cp_ring; }, "ring");
    // torchtitan's default is PyTorch's ring with its all-gather rotation.
    const sa::Plan titan =
        parsed(sa::parsePlan(edited(kPlan, {"/framework=\"torchtitan\""}), "plan.json"));
    QCOMPARE(titan.cp_ring, sa::CpRing::TorchAllGather);
    // The ring's hierarchical form: left out at 1, read and written back.
    QCOMPARE(parsed(sa::parsePlan(kPlan, "plan.json")).cp_a2a_size, 1);
    QVERIFY(!sa::toJson(parsed(sa::parsePlan(kPlan, "plan.json"))).contains("cp_a2a_size"));
    const sa::Plan hier = parsed(sa::parsePlan(
        edited(kPlan, {"/parallelism/cp=4", "/parallelism/dp=16", "/cp_a2a_size=2"}), "plan.json"));
    QCOMPARE(hier.cp_a2a_size, 2);
    QCOMPARE(sa::toJson(hier)["cp_a2a_size"].get<int>(), 2);
    QVERIFY(parsed(sa::parsePlan(sa::dumpCanonical(sa::toJson(hier)), "plan.json")) == hier);
}

// A boolean plan key: its default left out of the written plan, the other
// value read and written back, anything but a boolean refused with its path.
static void checkBooleanKnob(const char* key, bool byDefault, bool (*read)(const sa::Plan&)) {
    const QString path = QStringLiteral("/") + QLatin1String(key);
    const sa::Plan plain = parsed(sa::parsePlan(kPlan, "plan.json"));
    QCOMPARE(read(plain), byDefault);
    QVERIFY(!sa::toJson(plain).contains(key));
    const sa::Plan other = parsed(
        sa::parsePlan(edited(kPlan, {path + (byDefault ? "=false" : "=true")}), "plan.json"));
    QCOMPARE(read(other), !byDefault);
    QCOMPARE(sa::toJson(other)[key].get<bool>(), !byDefault);
    QVERIFY(parsed(sa::parsePlan(sa::dumpCanonical(sa::toJson(other)), "plan.json")) == other);
    const auto problems =
        strings(sa::parsePlan(edited(kPlan, {path + "=1"}), "plan.json").problems);
    QCOMPARE(problems.size(), 1);
    QVERIFY2(problems[0].startsWith("plan.json: " + path + ": "), qPrintable(problems[0]));
}

void TestFormats::cudaGraphsValues() {
    checkBooleanKnob("cuda_graphs", false, [](const sa::Plan& p) { return p.cuda_graphs; });
}

void TestFormats::fp8ParamGatherValues() {
    checkBooleanKnob("fp8_param_gather", false,
                     [](const sa::Plan& p) { return p.fp8_param_gather; });
}

void TestFormats::sequenceParallelRegatherValues() {
    checkBooleanKnob("sequence_parallel_regather", true,
                     [](const sa::Plan& p) { return p.sequence_parallel_regather; });
}

void TestFormats::gradAccumulationFusionValues() {
    checkBooleanKnob("grad_accumulation_fusion", true,
                     [](const sa::Plan& p) { return p.grad_accumulation_fusion; });
}

void TestFormats::gradReduceScatterValues() {
    checkBooleanKnob("grad_reduce_scatter", true,
                     [](const sa::Plan& p) { return p.grad_reduce_scatter; });
    // FSDP always reduce-scatters: refused there, with the path and why.
    const auto problems = strings(
        sa::parsePlan(edited(kPlan, {"/zero_stage=3", "/grad_reduce_scatter=false"}), "plan.json")
            .problems);
    QCOMPARE(problems.size(), 1);
    QVERIFY2(problems[0].startsWith("plan.json: /grad_reduce_scatter: ") &&
                 problems[0].contains("ZeRO-3 always reduce-scatters"),
             qPrintable(problems[0]));
}

void TestFormats::ropeFusionValues() {
    checkBooleanKnob("rope_fusion", true, [](const sa::Plan& p) { return p.rope_fusion; });
}

void TestFormats::fsdpCopiesValues() {
    checkBooleanKnob("fsdp_copies", true, [](const sa::Plan& p) { return p.fsdp_copies; });
}

void TestFormats::dropoutValues() {
    for (const char* key : {"hidden_dropout", "attention_dropout"}) {
        const QString path = QStringLiteral("/") + QLatin1String(key);
        const sa::Plan plain = parsed(sa::parsePlan(kPlan, "plan.json"));
        QCOMPARE(plain.hidden_dropout + plain.attention_dropout, 0.0);
        QVERIFY(!sa::toJson(plain).contains(key)); // 0 is left out
        const sa::Plan set = parsed(sa::parsePlan(edited(kPlan, {path + "=0.1"}), "plan.json"));
        QCOMPARE(sa::toJson(set)[key].get<double>(), 0.1);
        QVERIFY(parsed(sa::parsePlan(sa::dumpCanonical(sa::toJson(set)), "plan.json")) == set);
        // A probability below 1: 1 (every value dropped) and negatives are refused.
        for (const char* bad : {"=1", "=-0.1", "=\"0.1\""}) {
            const auto problems =
                strings(sa::parsePlan(edited(kPlan, {path + bad}), "plan.json").problems);
            QCOMPARE(problems.size(), 1);
            QVERIFY2(problems[0].startsWith("plan.json: " + path + ": "), qPrintable(problems[0]));
        }
    }
    // Megatron's default, carried by a framework plan when written.
    sa::Plan megatron =
        parsed(sa::parsePlan(edited(kPlan, {"/framework=\"megatron-core\""}), "plan.json"));
    QCOMPARE(megatron.hidden_dropout, 0.1);
    QCOMPARE(megatron.attention_dropout, 0.1);
    QCOMPARE(sa::toJson(megatron)["hidden_dropout"].get<double>(), 0.1);
}

void TestFormats::frameworkUnknown() {
    const auto problems =
        strings(sa::parsePlan(edited(kPlan, {"/framework=\"megatron\""}), "plan.json").problems);
    QCOMPARE(problems.size(), 1);
    QCOMPARE(problems[0], QString("plan.json: /framework: must be one of megatron-core, nemo, "
                                  "torchtitan, got 'megatron'"));
}

QTEST_GUILESS_MAIN(TestFormats)
#include "tst_formats.moc"

// `scaleacross import`, `export` and `calibrate` as a user runs them: a plan
// exported for a framework and imported back predicts the same step time; a
// setting the documents cannot express exits 2 naming it; calibration from
// nccl-tests and GEMM files writes a cluster that loads and predicts
// differently only where the measurements say so.

#include "../common/cli.h"
#include "../common/samples.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <sstream>
#include <string>

using nlohmann::json;
using sa::testing::CliRun;
using sa::testing::runCli;
using sa::testing::sourcePath;

namespace {

QByteArray describe(const CliRun& r) {
    return QByteArray::fromStdString("exit " + std::to_string(r.code) + "\nstdout: " +
                                     r.out.substr(0, 2000) + "\nstderr: " + r.err.substr(0, 2000));
}

double stepTime(const QString& scenario) {
    const CliRun r = runCli({QStringLiteral("evaluate"), scenario, QStringLiteral("--json")});
    if (r.code != 0)
        return -1;
    return json::parse(r.out).at("step_time_s").get<double>();
}

std::string readText(const QString& path) {
    std::ifstream in(path.toStdString());
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const QString kCluster = QStringLiteral("sample_clusters/clusters/two-buildings-campus.json");

} // namespace

class TestCliFrameworks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void exportThenImport_data();
    void exportThenImport();
    void importArgumentsAfterDashes();
    void importRefusals_data();
    void importRefusals();
    void exportRefusesWhatAScenarioWould_data();
    void exportRefusesWhatAScenarioWould();
    void exportWritesHsdpGroupsWithTheCluster();
    void exportNamesThePlanForWhatTheFrameworkCannotSay();
    void calibrate();
    void calibrateBadInput();
};

void TestCliFrameworks::exportThenImport_data() {
    QTest::addColumn<QString>("framework");
    QTest::addColumn<QString>("suffix");
    QTest::newRow("megatron") << "megatron"
                              << "sh";
    QTest::newRow("nemo") << "nemo"
                          << "yaml";
    QTest::newRow("torchtitan") << "torchtitan"
                                << "toml";
}

// The sample places pipeline stages on buildings and tunes a link: settings
// no framework has, carried in the # scaleacross line, so the imported
// scenario predicts exactly what the original does.
void TestCliFrameworks::exportThenImport() {
    QFETCH(QString, framework);
    QFETCH(QString, suffix);
    QTemporaryDir dir;
    const QString scenario =
        sourcePath(QStringLiteral("sample_clusters/scenarios/three-buildings-405b-pp-across.json"));
    const QString config = dir.filePath(QStringLiteral("launch.") + suffix);
    const CliRun e = runCli({QStringLiteral("export"), QStringLiteral("--to"), framework, scenario,
                             QStringLiteral("-o"), config});
    QVERIFY2(e.code == 0, describe(e).constData());
    QVERIFY2(e.err.find("note: ") == 0, describe(e).constData()); // what the framework lacks
    QVERIFY(readText(config).find("# scaleacross: {") != std::string::npos);

    const QString cluster =
        sourcePath(QStringLiteral("sample_clusters/clusters/three-buildings-two-regions.json"));
    QStringList importArgs = {QStringLiteral("import"), framework};
    if (framework == QLatin1String("megatron"))
        importArgs << QStringLiteral("--script");
    importArgs << config << QStringLiteral("--cluster") << cluster << QStringLiteral("-o")
               << dir.path() << QStringLiteral("--name") << QStringLiteral("back");
    const CliRun i = runCli(importArgs);
    QVERIFY2(i.code == 0, describe(i).constData());
    QVERIFY(i.out.find("mapped (") != std::string::npos);
    QVERIFY(
        i.out.find("wrote " + dir.filePath(QStringLiteral("back-scenario.json")).toStdString()) !=
        std::string::npos);
    const double original = stepTime(scenario);
    QVERIFY(original > 0);
    QCOMPARE(stepTime(dir.filePath(QStringLiteral("back-scenario.json"))), original);

    // The report as JSON says the same.
    importArgs << QStringLiteral("--json");
    const CliRun j = runCli(importArgs);
    QCOMPARE(j.code, 0);
    const json report = json::parse(j.out);
    QVERIFY(!report.at("mapped").empty());
    QVERIFY(report.at("problems").empty());
    QCOMPARE(report.at("wrote").size(), std::size_t(3));
}

void TestCliFrameworks::importArgumentsAfterDashes() {
    QTemporaryDir dir;
    const CliRun r = runCli({"import",
                             "megatron",
                             "--world-size",
                             "64",
                             "-o",
                             dir.path(),
                             "--name",
                             "small",
                             "--",
                             "--tensor-model-parallel-size",
                             "8",
                             "--pipeline-model-parallel-size",
                             "2",
                             "--num-layers",
                             "32",
                             "--hidden-size",
                             "4096",
                             "--num-attention-heads",
                             "32",
                             "--seq-length",
                             "4096",
                             "--micro-batch-size",
                             "1",
                             "--global-batch-size",
                             "64",
                             "--vocab-size",
                             "32000",
                             "--bf16",
                             "--swiglu",
                             "--use-distributed-optimizer",
                             "--lr",
                             "3e-4"});
    QVERIFY2(r.code == 0, describe(r).constData());
    QVERIFY(r.out.find("--lr 3e-4: ") != std::string::npos); // ignored, with its reason
    const json plan = json::parse(readText(dir.filePath(QStringLiteral("small-plan.json"))));
    QCOMPARE(plan.at("parallelism").at("dp").get<int>(), 64 / (8 * 2));
    QCOMPARE(plan.at("zero_stage").get<int>(), 1);
    const json model = json::parse(readText(dir.filePath(QStringLiteral("small-model.json"))));
    // Megatron's SwiGLU default: int(4h * 2/3 / 64) * 64.
    QCOMPARE(model.at("ffn_hidden").get<int>(), int(4 * 4096 * 2 / 3 / 64) * 64);
}

void TestCliFrameworks::importRefusals_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    const QStringList base = {"import",
                              "megatron",
                              "--world-size",
                              "64",
                              "--",
                              "--tensor-model-parallel-size",
                              "8",
                              "--pipeline-model-parallel-size",
                              "2",
                              "--num-layers",
                              "32",
                              "--hidden-size",
                              "4096",
                              "--num-attention-heads",
                              "32",
                              "--seq-length",
                              "4096",
                              "--micro-batch-size",
                              "1",
                              "--global-batch-size",
                              "64",
                              "--vocab-size",
                              "32000",
                              "--bf16"};
    QTest::newRow("block recompute of no layer")
        << (base + QStringList{"--recompute-granularity", "full", "--recompute-method", "block",
                               "--recompute-num-layers", "0"})
        << "--recompute-num-layers";
    QTest::newRow("tp does not divide the world") << QStringList{"import",
                                                                 "megatron",
                                                                 "--world-size",
                                                                 "60",
                                                                 "--",
                                                                 "--tensor-model-parallel-size",
                                                                 "8",
                                                                 "--num-layers",
                                                                 "2",
                                                                 "--hidden-size",
                                                                 "256",
                                                                 "--num-attention-heads",
                                                                 "8",
                                                                 "--seq-length",
                                                                 "128",
                                                                 "--micro-batch-size",
                                                                 "1",
                                                                 "--global-batch-size",
                                                                 "8",
                                                                 "--vocab-size",
                                                                 "1000",
                                                                 "--bf16"}
                                                  << "--tensor-model-parallel-size";
    QTest::newRow("malformed number")
        << (base + QStringList{"--context-parallel-size", "two"}) << "--context-parallel-size";
    QTest::newRow("missing file") << QStringList{"import", "nemo", "no/such/config.yaml"}
                                  << "no/such/config.yaml";
    QTest::newRow("unknown framework")
        << QStringList{"export", "--to", "deepspeed", "x.json"} << "--to";
}

void TestCliFrameworks::importRefusals() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QTemporaryDir dir;
    args.insert(2, QStringLiteral("-o"));
    args.insert(3, dir.path());
    if (args.first() == QLatin1String("export"))
        args = args.mid(0, 2) + args.mid(4); // export takes -o FILE, not a folder
    const CliRun r = runCli(args);
    QVERIFY2(r.code == 2, describe(r).constData());
    QVERIFY2(r.err.find(message.toStdString()) != std::string::npos, describe(r).constData());
    QVERIFY(QDir(dir.path()).isEmpty()); // nothing written on bad input
}

void TestCliFrameworks::exportRefusesWhatAScenarioWould_data() {
    QTest::addColumn<QString>("framework");
    for (const char* f : {"megatron", "nemo", "torchtitan"})
        QTest::newRow(f) << QString::fromLatin1(f);
}

// A model and a plan that a scenario's checks refuse together are refused by
// export too, with the document to fix and its JSON path, as evaluate says
// it: each framework had answered "<input>: --expert-model-parallel-size:
// Megatron-LM cannot run this plan" (the file unnamed), or torchtitan's
// "internal: the written TOML does not read back as the plan".
void TestCliFrameworks::exportRefusesWhatAScenarioWould() {
    QFETCH(QString, framework);
    QTemporaryDir dir;
    const QString model = sourcePath(QStringLiteral("sample_clusters/models/llama3-8b.json"));
    json plan = json::parse(
        readText(sourcePath(QStringLiteral("sample_clusters/plans/mixtral-8x22b-campus.json"))));
    QCOMPARE(plan["parallelism"]["ep"].get<int>(), 8);
    const QString planPath = dir.filePath(QStringLiteral("plan.json"));
    const QString out = dir.filePath(QStringLiteral("launch.txt"));
    const auto refused = [&](const json& p, const std::string& message) {
        std::ofstream(planPath.toStdString()) << p.dump(2);
        const CliRun r = runCli({QStringLiteral("export"), QStringLiteral("--to"), framework,
                                 QStringLiteral("--model"), model, QStringLiteral("--plan"),
                                 planPath, QStringLiteral("-o"), out});
        QVERIFY2(r.code == 2, describe(r).constData());
        QVERIFY2(r.err.find(planPath.toStdString() + ": " + message) != std::string::npos,
                 describe(r).constData());
        QVERIFY2(r.err.find("<input>") == std::string::npos, describe(r).constData());
        QVERIFY2(r.err.find("internal") == std::string::npos, describe(r).constData());
        QVERIFY(!QFileInfo::exists(out)); // nothing written on bad input
    };
    // Expert parallelism on a model without experts.
    refused(plan, "/parallelism/ep: ep = 8 needs a mixture-of-experts model");
    if (QTest::currentTestFailed())
        return;
    // An interleaved schedule on one pipeline stage (now refused by the plan
    // check itself, as Megatron-LM's validate_args refuses it).
    plan["parallelism"]["ep"] = 1;
    plan["parallelism"].erase("pp");
    refused(plan,
            "/schedule/kind: the interleaved schedule needs a pipeline (pp >= 2), got pp = 1");
}

// A plan the checks accept but the framework cannot express (torchtitan:
// expert parallelism beside context parallelism) is refused naming the
// plan's document and the setting, given with --plan or through a
// scenario, once, and nothing is written.
void TestCliFrameworks::exportNamesThePlanForWhatTheFrameworkCannotSay() {
    QTemporaryDir dir;
    const QString model = sourcePath(QStringLiteral("sample_clusters/models/mixtral-8x22b.json"));
    json plan = json::parse(
        readText(sourcePath(QStringLiteral("sample_clusters/plans/mixtral-8x22b-campus.json"))));
    plan["parallelism"]["etp"] = 2;
    const QString planPath = dir.filePath(QStringLiteral("plan.json"));
    std::ofstream(planPath.toStdString()) << plan.dump(2);
    const QString out = dir.filePath(QStringLiteral("job.toml"));
    const std::string want = ": /parallelism/etp: experts split over 2 of 8 TP ranks";
    const CliRun r = runCli({QStringLiteral("export"), QStringLiteral("--to"),
                             QStringLiteral("torchtitan"), QStringLiteral("--model"), model,
                             QStringLiteral("--plan"), planPath, QStringLiteral("-o"), out});
    QVERIFY2(r.code == 2, describe(r).constData());
    QVERIFY2(r.err.find(planPath.toStdString() + want) != std::string::npos,
             describe(r).constData());
    QVERIFY2(r.err.find("<input>") == std::string::npos, describe(r).constData());
    QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), std::ptrdiff_t(1));
    QVERIFY(!QFileInfo::exists(out));
    // The same plan through a scenario that names it.
    const QString scenarioPath = dir.filePath(QStringLiteral("scenario.json"));
    std::ofstream(scenarioPath.toStdString()) << json{
        {"format", "scaleacross.scenario"},
        {"version", 1},
        {"cluster", sourcePath(QStringLiteral("sample_clusters/clusters/two-buildings-campus.json"))
                        .toStdString()},
        {"model", model.toStdString()},
        {"plan", "plan.json"}}.dump(2);
    const CliRun s =
        runCli({QStringLiteral("export"), QStringLiteral("--to"), QStringLiteral("torchtitan"),
                scenarioPath, QStringLiteral("-o"), out});
    QVERIFY2(s.code == 2, describe(s).constData());
    QVERIFY2(s.err.find(planPath.toStdString() + want) != std::string::npos,
             describe(s).constData());
    QVERIFY(!QFileInfo::exists(out));
}

// An outer-sync hsdp plan says its HSDP groups only on a cluster: with
// --cluster (or a scenario) Megatron gets the optimizer instances the three
// buildings make, without it the sync stays in the comment with a note; a
// cluster the plan does not fit, or a broken one, is refused by name.
void TestCliFrameworks::exportWritesHsdpGroupsWithTheCluster() {
    QTemporaryDir dir;
    const QString model = sourcePath(QStringLiteral("sample_clusters/models/llama3-405b.json"));
    const QString cluster =
        sourcePath(QStringLiteral("sample_clusters/clusters/three-buildings-two-regions.json"));
    json plan = json::parse(readText(
        sourcePath(QStringLiteral("sample_clusters/plans/llama3-405b-three-buildings.json"))));
    plan["outer_sync"] = {{"method", "hsdp"}};
    const QString planPath = dir.filePath(QStringLiteral("plan.json"));
    std::ofstream(planPath.toStdString()) << plan.dump(2);
    const QString out = dir.filePath(QStringLiteral("launch.sh"));
    const auto run = [&](const QStringList& extra) {
        return runCli(QStringList{QStringLiteral("export"), QStringLiteral("--to"),
                                  QStringLiteral("megatron"), QStringLiteral("--model"), model,
                                  QStringLiteral("--plan"), planPath, QStringLiteral("-o"), out} +
                      extra);
    };
    CliRun r = run({QStringLiteral("--cluster"), cluster});
    QVERIFY2(r.code == 0, describe(r).constData());
    QVERIFY2(r.err.find("written as the plan's dp_shard 256") != std::string::npos,
             describe(r).constData());
    QVERIFY(readText(out).find("--num-distributed-optimizer-instances 3") != std::string::npos);
    r = run({});
    QVERIFY2(r.code == 0, describe(r).constData());
    QVERIFY2(r.err.find("give the cluster") != std::string::npos, describe(r).constData());
    QVERIFY(readText(out).find("--num-distributed-optimizer-instances") == std::string::npos);
    QFile::remove(out);
    r = run({QStringLiteral("--cluster"), sourcePath(kCluster)}); // 24,576 GPUs, not 98,304
    QVERIFY2(r.code == 2, describe(r).constData());
    QVERIFY2(r.err.find(planPath.toStdString() + ": /parallelism") != std::string::npos,
             describe(r).constData());
    QVERIFY(!QFileInfo::exists(out));
    const QString broken = dir.filePath(QStringLiteral("broken.json"));
    std::ofstream(broken.toStdString()) << "{\"format\": \"scaleacross.cluster\"";
    r = run({QStringLiteral("--cluster"), broken});
    QVERIFY2(r.code == 2 && r.err.find(broken.toStdString()) != std::string::npos,
             describe(r).constData());
    QVERIFY(!QFileInfo::exists(out));
}

void TestCliFrameworks::calibrate() {
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("calibrated.json"));
    const CliRun r =
        runCli({"calibrate", "--cluster", sourcePath(kCluster), "--building", "B1", "--nccl-tests",
                sourcePath(QStringLiteral("tests/data/calibrate/h100_nvlink_all_reduce.txt")),
                sourcePath(QStringLiteral("tests/data/calibrate/h100_2node_ib_all_reduce.txt")),
                "--gemm", sourcePath(QStringLiteral("tests/data/calibrate/h100_gemm.csv")),
                "--gpu-model", "H100-SXM5-80GB", "-o", out});
    QVERIFY2(r.code == 0, describe(r).constData());
    QVERIFY(r.out.find("host tier (building B1)") != std::string::npos);
    QVERIFY(r.out.find("building tier (building B1)") != std::string::npos);
    const CliRun check = runCli({QStringLiteral("check"), out});
    QVERIFY2(check.code == 0, describe(check).constData());

    const json before = json::parse(readText(sourcePath(kCluster)));
    const json after = json::parse(readText(out));
    const json& b1 = after.at("buildings").at(0);
    QCOMPARE(b1.at("name").get<std::string>(), std::string("B1"));
    for (const char* key : {"scale_up_efficiency", "scale_out_efficiency"}) {
        const double e = b1.at(key).get<double>();
        QVERIFY2(e > 0.5 && e <= 1.0, key);
    }
    QVERIFY(b1.at("scale_up_latency_us").get<double>() > 0);
    QVERIFY(!after.at("buildings").at(1).contains("scale_up_efficiency")); // B2 was not measured
    const double gemm = after.at("gpu_models").at("H100-SXM5-80GB").at("gemm_efficiency");
    QVERIFY(gemm > 0.5 && gemm < 1.0);
    QCOMPARE(after.at("buildings").size(), before.at("buildings").size());

    // The calibrated cluster predicts a different step time for the same plan.
    const auto scenarioWith = [&](const QString& cluster, const QString& name) {
        const QString path = dir.filePath(name);
        const json s = {
            {"format", "scaleacross.scenario"},
            {"version", 1},
            {"cluster", cluster.toStdString()},
            {"model",
             sourcePath(QStringLiteral("sample_clusters/models/llama3-405b.json")).toStdString()},
            {"plan", sourcePath(QStringLiteral("sample_clusters/plans/llama3-405b-campus.json"))
                         .toStdString()}};
        std::ofstream(path.toStdString()) << s.dump();
        return path;
    };
    const double t0 = stepTime(scenarioWith(sourcePath(kCluster), QStringLiteral("a.json")));
    const double t1 = stepTime(scenarioWith(out, QStringLiteral("b.json")));
    QVERIFY(t0 > 0 && t1 > 0);
    QVERIFY2(t0 != t1, qPrintable(QString::number(t0)));
}

void TestCliFrameworks::calibrateBadInput() {
    QTemporaryDir dir;
    const QString out = dir.filePath(QStringLiteral("c.json"));
    // Two buildings and no --building: which one was measured is not guessed.
    const CliRun r = runCli(
        {"calibrate", "--cluster", sourcePath(kCluster), "--nccl-tests",
         sourcePath(QStringLiteral("tests/data/calibrate/h100_nvlink_all_reduce.txt")), "-o", out});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.find("h100_nvlink_all_reduce.txt") != std::string::npos, r.err.c_str());
    QVERIFY(!QFile::exists(out));
    const CliRun none = runCli({"calibrate", "--cluster", sourcePath(kCluster), "-o", out});
    QCOMPARE(none.code, 2);
    QVERIFY(none.err.find("--nccl-tests") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestCliFrameworks)
#include "tst_cli_frameworks.moc"

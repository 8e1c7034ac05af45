// `scaleacross evaluate` and `scaleacross trace` as a user runs them: every
// sample scenario gives sensible JSON, impossible plans exit 2 with a
// message naming the file and the JSON path, a plan that does not fit is
// still evaluated, and the trace opens as Chrome trace event JSON. Also the
// command line itself: every command's --help, --version, and a bad
// command line (unknown option, missing or malformed value) exits 2 with
// one line naming the option.

#include "../common/samples.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

using sa::testing::sourcePath;

namespace {

struct CliRun {
    int code = -1;
    QByteArray out;
    QByteArray err;
};

CliRun runCli(const QStringList& args) {
    QProcess proc;
    proc.setWorkingDirectory(QString::fromStdString(sa::testing::sourceDir()));
    proc.start(QStringLiteral(SCALEACROSS_CLI_PATH), args);
    CliRun r;
    if (!proc.waitForStarted(10000) || !proc.waitForFinished(60000)) {
        proc.kill();
        proc.waitForFinished();
        r.err = "did not finish: " + proc.errorString().toUtf8();
        return r;
    }
    r.code = proc.exitStatus() == QProcess::NormalExit ? proc.exitCode() : -1;
    r.out = proc.readAllStandardOutput();
    r.err = proc.readAllStandardError();
    return r;
}

QByteArray describe(const CliRun& r) {
    return "exit " + QByteArray::number(r.code) + "\nstdout: " + r.out.left(2000) +
           "\nstderr: " + r.err.left(2000);
}

QStringList sampleScenarios() {
    QDir dir(sourcePath(QStringLiteral("sample_clusters/scenarios")));
    QStringList out;
    for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name))
        out << dir.filePath(name);
    return out;
}

bool isNumber(const QJsonObject& o, const char* key) {
    return o.contains(QLatin1String(key)) && o.value(QLatin1String(key)).isDouble();
}

} // namespace

class TestCliEvaluate : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void help_data();
    void help();
    void evaluateSamples_data();
    void evaluateSamples();
    void textReport();
    void separateFilesMatchScenario();
    void outputFile();
    void impossiblePlans_data();
    void impossiblePlans();
    void oversizedPlanStillEvaluated();
    void trace_data();
    void trace();
    void traceNeedsOutput();
    void version();
    void alongside();
    void alongsideOtherCluster();
    void badCommandLine_data();
    void badCommandLine();
};

void TestCliEvaluate::initTestCase() {
    QVERIFY2(QFile::exists(QStringLiteral(SCALEACROSS_CLI_PATH)), SCALEACROSS_CLI_PATH);
    QVERIFY(!sampleScenarios().isEmpty());
}

void TestCliEvaluate::help_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("--help") << QStringList{"--help"} << "evaluate";
    QTest::newRow("help") << QStringList{"help"} << "trace";
    QTest::newRow("evaluate --help") << QStringList{"evaluate", "--help"} << "--json";
    QTest::newRow("trace --help") << QStringList{"trace", "--help"} << "Chrome trace";
    QTest::newRow("trace -h") << QStringList{"trace", "-h"} << "-o,--output FILE";
    QTest::newRow("check --help") << QStringList{"check", "--help"} << "--cluster FILE";
    QTest::newRow("optimize --help") << QStringList{"optimize", "--help"} << "--max-evaluations N";
    QTest::newRow("merge --help") << QStringList{"merge", "--help"} << "--allow-partial";
    QTest::newRow("sweep --help") << QStringList{"sweep", "--help"} << "--vary PATH=RANGE";
    // After other arguments, even bad ones: help wins.
    QTest::newRow("optimize --top 0 --help")
        << QStringList{"optimize", "--top", "0", "--help"} << "--top K";
}

void TestCliEvaluate::help() {
    QFETCH(QStringList, args);
    QFETCH(QString, mentions);
    const CliRun r = runCli(args);
    QVERIFY2(r.code == 0, describe(r));
    QVERIFY(r.out.contains("Usage"));
    QVERIFY2(QString::fromUtf8(r.out).contains(mentions), r.out);
}

void TestCliEvaluate::evaluateSamples_data() {
    QTest::addColumn<QString>("file");
    for (const QString& f : sampleScenarios())
        QTest::newRow(QFileInfo(f).fileName().toUtf8().constData()) << f;
}

// The keys of DESIGN.md's CLI contract, with sensible values.
void TestCliEvaluate::evaluateSamples() {
    QFETCH(QString, file);
    const CliRun r = runCli({"evaluate", file, "--json"});
    QVERIFY2(r.code == 0, describe(r));
    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(r.out, &perr);
    QVERIFY2(perr.error == QJsonParseError::NoError, qPrintable(perr.errorString()));
    QVERIFY(doc.isObject());
    const QJsonObject o = doc.object();

    for (const char* key : {"step_time_s", "tokens_per_s", "mfu", "hfu", "tflops_per_gpu"})
        QVERIFY2(isNumber(o, key), key);
    const double step = o["step_time_s"].toDouble();
    const double mfu = o["mfu"].toDouble();
    const double hfu = o["hfu"].toDouble();
    QVERIFY(step > 0 && step < 3600);
    QVERIFY2(mfu > 0 && mfu < 1, QByteArray::number(mfu));
    QVERIFY2(hfu >= mfu && hfu <= 1, QByteArray::number(hfu));
    QVERIFY(o["tokens_per_s"].toDouble() > 0);
    const double tflops = o["tflops_per_gpu"].toDouble();
    QVERIFY(tflops > 0 && tflops < 2000);
    // tflops_per_gpu * GPUs * step = model FLOPs per step.
    const double gpus = o["gpus"].toDouble();
    QVERIFY(gpus > 0);
    QVERIFY(std::abs(tflops * 1e12 * gpus * step / o["model_flops_per_step"].toDouble() - 1) <
            1e-9);

    QVERIFY(o["memory"].isObject());
    const QJsonObject mem = o["memory"].toObject();
    QVERIFY(isNumber(mem, "peak_gib_per_gpu"));
    QVERIFY(mem["fits"].isBool());
    const double peak = mem["peak_gib_per_gpu"].toDouble();
    QVERIFY(peak > 1 && peak < 10000);
    QCOMPARE(mem["fits"].toBool(), peak <= mem["capacity_gib"].toDouble());

    QVERIFY(o["breakdown"].isObject());
    const QJsonObject br = o["breakdown"].toObject();
    for (const char* key : {"compute_s", "tp_exposed_s", "cp_exposed_s", "ep_exposed_s",
                            "pp_exposed_s", "dp_exposed_s", "bubble_s", "optimizer_s"}) {
        QVERIFY2(isNumber(br, key), key);
        const double v = br[QLatin1String(key)].toDouble();
        QVERIFY2(v >= 0 && v <= step * (1 + 1e-9), key);
    }
    // Compute is a large part of every sample's step (the 405B samples
    // leave a 42-47% pipeline bubble: 16 microbatches for 16 stages).
    QVERIFY(br["compute_s"].toDouble() > 0.25 * step);

    QVERIFY(o["links"].isArray());
    const QJsonArray links = o["links"].toArray();
    QVERIFY(!links.isEmpty());
    bool crossTraffic = false, interBuilding = false;
    for (const QJsonValue& v : links) {
        QVERIFY(v.isObject());
        const QJsonObject l = v.toObject();
        QVERIFY(l["name"].isString() && !l["name"].toString().isEmpty());
        for (const char* key : {"bytes_per_step", "busy_s", "utilization"})
            QVERIFY2(isNumber(l, key), key);
        QVERIFY(l["bytes_per_step"].toDouble() >= 0);
        QVERIFY(l["busy_s"].toDouble() >= 0);
        const double u = l["utilization"].toDouble();
        QVERIFY(u >= 0 && u <= 1);
        if (l["tier"].toString() == QLatin1String("inter-building")) {
            interBuilding = true;
            crossTraffic = crossTraffic || l["bytes_per_step"].toDouble() > 0;
        }
    }
    // Jobs that span buildings put bytes on the links between them.
    if (interBuilding)
        QVERIFY(crossTraffic == (o["cross_building_bytes"].toDouble() > 0));

    QVERIFY(o["warnings"].isArray());
    for (const QJsonValue& w : o["warnings"].toArray())
        QVERIFY(w.isString() && !w.toString().isEmpty());
    QVERIFY(r.err.isEmpty());
}

void TestCliEvaluate::textReport() {
    const CliRun r =
        runCli({"evaluate", sourcePath("sample_clusters/scenarios/single-building-70b.json")});
    QVERIFY2(r.code == 0, describe(r));
    for (const char* word : {"step time", "MFU", "memory per GPU", "breakdown", "compute"})
        QVERIFY2(r.out.contains(word), word);
}

// `--cluster C --model M --plan P` is the same scenario as the bundle.
void TestCliEvaluate::separateFilesMatchScenario() {
    const CliRun a = runCli(
        {"evaluate", sourcePath("sample_clusters/scenarios/single-building-405b.json"), "--json"});
    const CliRun b = runCli(
        {"evaluate", "--cluster", sourcePath("sample_clusters/clusters/single-building-h100.json"),
         "--model", sourcePath("sample_clusters/models/llama3-405b.json"), "--plan",
         sourcePath("sample_clusters/plans/llama3-405b-production.json"), "--json"});
    QVERIFY2(a.code == 0, describe(a));
    QVERIFY2(b.code == 0, describe(b));
    const QJsonObject ja = QJsonDocument::fromJson(a.out).object();
    const QJsonObject jb = QJsonDocument::fromJson(b.out).object();
    QCOMPARE(jb["step_time_s"].toDouble(), ja["step_time_s"].toDouble());
    QCOMPARE(jb["mfu"].toDouble(), ja["mfu"].toDouble());
    QCOMPARE(jb["memory"].toObject()["peak_gib_per_gpu"].toDouble(),
             ja["memory"].toObject()["peak_gib_per_gpu"].toDouble());
}

void TestCliEvaluate::outputFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("eval.json");
    const QString scenario = sourcePath("sample_clusters/scenarios/single-building-70b.json");
    const CliRun r = runCli({"evaluate", scenario, "--json", "-o", path});
    QVERIFY2(r.code == 0, describe(r));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    QVERIFY(o["step_time_s"].toDouble() > 0);
    const CliRun direct = runCli({"evaluate", scenario, "--json"});
    QCOMPARE(QJsonDocument::fromJson(direct.out).object()["step_time_s"].toDouble(),
             o["step_time_s"].toDouble());
}

void TestCliEvaluate::impossiblePlans_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("words");
    const QString data = sourcePath("tests/data/costmodel/");
    const QString cluster = sourcePath("sample_clusters/clusters/single-building-h100.json");
    const QString model70 = sourcePath("sample_clusters/models/llama3-70b.json");
    QTest::newRow("tp does not divide (inline plan)")
        << QStringList{"evaluate", data + "bad-tp-inline.json", "--json"} << "bad-tp-inline.json"
        << "/plan/parallelism/tp"
        << "must divide";
    QTest::newRow("more GPUs than the cluster")
        << QStringList{"evaluate", data + "too-many-gpus.json", "--json"}
        << "plan-too-many-gpus.json"
        << "/parallelism"
        << "32768 GPUs but the cluster has 24576";
    QTest::newRow("batch does not divide (separate files)")
        << QStringList{"evaluate",
                       "--cluster",
                       cluster,
                       "--model",
                       model70,
                       "--plan",
                       data + "plan-bad-batch.json",
                       "--json"}
        << "plan-bad-batch.json"
        << "/global_batch_sequences"
        << "multiple";
    QTest::newRow("more GPUs than a building (placement)")
        << QStringList{"evaluate", data + "building-overflow.json"} << "plan-building-overflow.json"
        << "/placement/runs/0"
        << "has 12288";
    QTest::newRow("trace of an impossible plan")
        << QStringList{"trace", data + "too-many-gpus.json", "-o", "/nonexistent/never.json"}
        << "plan-too-many-gpus.json"
        << "/parallelism"
        << "cluster has";
    QTest::newRow("missing file") << QStringList{"evaluate", data + "no-such-scenario.json"}
                                  << "no-such-scenario.json" << QString() << QString();
    QTest::newRow("unknown option")
        << QStringList{"evaluate", data + "oversized.json", "--frobnicate", "1"} << QString()
        << QString() << "unknown option --frobnicate";
    QTest::newRow("unknown trailing flag")
        << QStringList{"evaluate", data + "oversized.json", "--json", "--frobnicate"} << QString()
        << QString() << "unknown option --frobnicate";
}

// Exit 2, nothing on stdout, and a message naming the file and JSON path.
void TestCliEvaluate::impossiblePlans() {
    QFETCH(QStringList, args);
    QFETCH(QString, file);
    QFETCH(QString, path);
    QFETCH(QString, words);
    const CliRun r = runCli(args);
    QVERIFY2(r.code == 2, describe(r));
    QVERIFY2(r.out.isEmpty(), describe(r));
    const QString err = QString::fromUtf8(r.err);
    if (!file.isEmpty()) {
        QVERIFY2(err.contains(file), describe(r));
    }
    if (!path.isEmpty())
        QVERIFY2(err.contains(": " + path + ": "), describe(r));
    if (!words.isEmpty())
        QVERIFY2(err.contains(words), describe(r));
}

// Memory is a result, not an error: fits = false and a warning giving the
// shortfall.
void TestCliEvaluate::oversizedPlanStillEvaluated() {
    const CliRun r =
        runCli({"evaluate", sourcePath("tests/data/costmodel/oversized.json"), "--json"});
    QVERIFY2(r.code == 0, describe(r));
    const QJsonObject o = QJsonDocument::fromJson(r.out).object();
    const QJsonObject mem = o["memory"].toObject();
    QCOMPARE(mem["fits"].toBool(true), false);
    const double over = mem["peak_gib_per_gpu"].toDouble() - mem["capacity_gib"].toDouble();
    QVERIFY(over > 0);
    bool found = false;
    for (const QJsonValue& w : o["warnings"].toArray())
        if (w.toString().contains(QString::number(over, 'f', 1) + " GiB more than"))
            found = true;
    QVERIFY2(found, r.out.left(4000));
    QVERIFY(o["step_time_s"].toDouble() > 0);
}

void TestCliEvaluate::trace_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("stages");
    QTest::newRow("single-building-70b (interleaved)")
        << sourcePath("sample_clusters/scenarios/single-building-70b.json") << 4;
    QTest::newRow("three-buildings-405b")
        << sourcePath("sample_clusters/scenarios/three-buildings-405b.json") << -1;
}

// Chrome trace event format (JSON object form): complete events ("X") with
// name, ph, ts, dur (microseconds), pid, tid; metadata events ("M") name
// the processes and threads (the format gives them no ts or dur).
void TestCliEvaluate::trace() {
    QFETCH(QString, file);
    QFETCH(int, stages);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString out = dir.filePath("timeline.json");
    const CliRun r = runCli({"trace", file, "-o", out});
    QVERIFY2(r.code == 0, describe(r));
    QVERIFY(r.out.contains("timeline events"));
    QFile f(out);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &perr);
    QVERIFY2(perr.error == QJsonParseError::NoError, qPrintable(perr.errorString()));
    const QJsonArray events = doc.object()["traceEvents"].toArray();
    QVERIFY(!events.isEmpty());
    int complete = 0, forward = 0, backward = 0;
    QSet<int> threads;
    double end = 0;
    for (const QJsonValue& v : events) {
        const QJsonObject e = v.toObject();
        QVERIFY(e["name"].isString() && !e["name"].toString().isEmpty());
        QVERIFY(e["ph"].isString());
        QVERIFY(e["pid"].isDouble());
        QVERIFY(e["tid"].isDouble());
        const QString ph = e["ph"].toString();
        QVERIFY2(ph == "X" || ph == "M", qPrintable(ph));
        if (ph != "X")
            continue;
        ++complete;
        QVERIFY(e["ts"].isDouble() && e["dur"].isDouble());
        QVERIFY(e["ts"].toDouble() >= 0);
        QVERIFY(e["dur"].toDouble() >= 0);
        end = std::max(end, e["ts"].toDouble() + e["dur"].toDouble());
        const QString cat = e["cat"].toString();
        if (cat == "forward") {
            ++forward;
            threads.insert(e["tid"].toInt());
        }
        if (cat == "backward")
            ++backward;
    }
    QVERIFY(complete > 0);
    QVERIFY(forward > 0);
    QCOMPARE(forward, backward);
    if (stages > 0)
        QCOMPARE(threads.size(), stages);
    // The trace spans the step (microseconds).
    const double step = doc.object()["otherData"].toObject()["step_time_s"].toDouble();
    QVERIFY(step > 0);
    QVERIFY2(end <= step * 1e6 * (1 + 1e-9) && end >= 0.5 * step * 1e6,
             QByteArray::number(end) + " vs " + QByteArray::number(step * 1e6));
}

void TestCliEvaluate::traceNeedsOutput() {
    const CliRun r =
        runCli({"trace", sourcePath("sample_clusters/scenarios/single-building-70b.json")});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("-o FILE"));
}

void TestCliEvaluate::version() {
    const CliRun r = runCli({"--version"});
    QVERIFY2(r.code == 0, describe(r));
    QCOMPARE(r.out, QByteArray("scaleacross " SCALEACROSS_VERSION "\n"));
}

namespace {

// Four buildings of 32 H100 in a line, 100 Gbit/s links.
const char* kLineCluster = R"({"format": "scaleacross.cluster", "version": 1, "name": "line",
  "gpu_models": {"H100": {"peak_tflops": {"bf16": 989, "fp8": 1979}, "memory_gib": 80,
                          "hbm_tbps": 3.35, "sms": 132}},
  "buildings": [
    {"name": "B1", "region": "r", "gpus": 32, "gpus_per_host": 8, "scale_up_gbps": 3600, "scale_out_gbps": 400},
    {"name": "B2", "region": "r", "gpus": 32, "gpus_per_host": 8, "scale_up_gbps": 3600, "scale_out_gbps": 400},
    {"name": "B3", "region": "r", "gpus": 32, "gpus_per_host": 8, "scale_up_gbps": 3600, "scale_out_gbps": 400},
    {"name": "B4", "region": "r", "gpus": 32, "gpus_per_host": 8, "scale_up_gbps": 3600, "scale_out_gbps": 400}],
  "links": [{"between": ["B1", "B2"], "bandwidth_gbps": 100, "latency_ms": 5},
            {"between": ["B2", "B3"], "bandwidth_gbps": 100, "latency_ms": 5},
            {"between": ["B3", "B4"], "bandwidth_gbps": 100, "latency_ms": 5}]})";

// A scenario of Llama 3 8B, TP8 PP2 DP2, stage 0 in `first`, stage 1 in `second`.
QString lineScenario(const QString& dir, const QString& name, const QString& cluster,
                     const QString& first, const QString& second) {
    const QString path = dir + "/" + name;
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(path));
    const QString model = sourcePath(QStringLiteral("sample_clusters/models/llama3-8b.json"));
    f.write(QStringLiteral(R"({"format": "scaleacross.scenario", "version": 1,
  "cluster": %1, "model": "%2",
  "plan": {"format": "scaleacross.plan", "version": 1, "name": "%3",
           "sequence_length": 4096, "global_batch_sequences": 32, "micro_batch_sequences": 1,
           "parallelism": {"tp": 8, "pp": 2, "dp": 2},
           "placement": {"runs": [{"stages": [0, 0], "replicas": [0, 1], "building": "%4"},
                                  {"stages": [1, 1], "replicas": [0, 1], "building": "%5"}]}}})")
                .arg(cluster, model, name, first, second)
                .toUtf8());
    return path;
}

} // namespace

// Two jobs over B1-B2 and one over B3-B4: the first two slow each other,
// the third is as alone; text and JSON.
void TestCliEvaluate::alongside() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString c = QString::fromLatin1(kLineCluster);
    const QString a = lineScenario(dir.path(), "a.json", c, "B1", "B2");
    const QString b = lineScenario(dir.path(), "b.json", c, "B1", "B2");
    const QString far = lineScenario(dir.path(), "c.json", c, "B3", "B4");
    const CliRun json = runCli({"evaluate", a, "--json", "--alongside", b, far});
    QVERIFY2(json.code == 0, describe(json).constData());
    const QJsonObject o = QJsonDocument::fromJson(json.out).object();
    QCOMPARE(o["sharing"].toString(), QString("mean-rate"));
    QVERIFY(o["converged"].toBool());
    const QJsonArray jobs = o["jobs"].toArray();
    QCOMPARE(jobs.size(), 3);
    QCOMPARE(jobs[0].toObject()["name"].toString(), a);
    QCOMPARE(jobs[2].toObject()["name"].toString(), far);
    for (int j : {0, 1}) {
        const QJsonObject x = jobs[j].toObject();
        QVERIFY(x["step_time_s_shared"].toDouble() > x["step_time_s_alone"].toDouble());
    }
    const QJsonObject third = jobs[2].toObject();
    QCOMPARE(third["step_time_s_shared"].toDouble(), third["step_time_s_alone"].toDouble());
    QCOMPARE(third["gpus_per_building"].toArray(), QJsonArray({0, 0, 16, 16}));
    bool sawB1B2 = false;
    for (const auto& v : o["links"].toArray()) {
        const QJsonObject l = v.toObject();
        if (l["name"].toString() != "B1-B2")
            continue;
        sawB1B2 = true;
        QCOMPARE(l["capacity_gbps"].toDouble(), 100.0);
        const QJsonArray per = l["jobs"].toArray();
        QCOMPARE(per.size(), 3);
        QVERIFY(per[0].toObject()["gbps"].toArray()[0].toDouble() > 0);
        QVERIFY(per[1].toObject()["gbps"].toArray()[0].toDouble() > 0);
        QCOMPARE(per[2].toObject()["gbps"].toArray()[0].toDouble(), 0.0);
    }
    QVERIFY(sawB1B2);

    const CliRun text = runCli({"evaluate", a, "--alongside", b});
    QVERIFY2(text.code == 0, describe(text).constData());
    QVERIFY2(text.out.contains("jobs on cluster 'line'") && text.out.contains("step shared") &&
                 text.out.contains("B1-B2") && text.out.contains("Gbit/s"),
             text.out.constData());
}

void TestCliEvaluate::alongsideOtherCluster() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString c = QString::fromLatin1(kLineCluster);
    QString other = c;
    other.replace(R"("name": "line")", R"("name": "other")");
    const QString a = lineScenario(dir.path(), "a.json", c, "B1", "B2");
    const QString b = lineScenario(dir.path(), "b.json", other, "B3", "B4");
    const CliRun r = runCli({"evaluate", a, "--alongside", b});
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QCOMPARE(QString::fromUtf8(r.err),
             "scaleacross evaluate: " + b +
                 ": --alongside needs the same cluster as the scenario evaluated (its cluster "
                 "'other' differs from 'line')\n");
    // Both on B1 and B2 with more GPUs than they have: exit 2 naming the building.
    const QString big = lineScenario(dir.path(), "big.json", c, "B1", "B2");
    const CliRun full = runCli({"evaluate", a, "--alongside", big, big});
    QCOMPARE(full.code, 2);
    QVERIFY2(full.err.contains("building 'B1' has 32 GPUs"), full.err.constData());
}

void TestCliEvaluate::badCommandLine_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    const QString s = sourcePath("sample_clusters/scenarios/single-building-70b.json");
    QTest::newRow("no command") << QStringList{} << QString();
    QTest::newRow("unknown command")
        << QStringList{"evalute", s} << "scaleacross: unknown command 'evalute'";
    QTest::newRow("option before the command")
        << QStringList{"--json", "evaluate", s} << "scaleacross: unknown command '--json'";
    QTest::newRow("unknown short option")
        << QStringList{"evaluate", s, "-x"} << "scaleacross evaluate: unknown option -x";
    QTest::newRow("missing value") << QStringList{"evaluate", s, "-o"}
                                   << "scaleacross evaluate: option -o,--output needs a value";
    QTest::newRow("missing number") << QStringList{"optimize", s, "--top"}
                                    << "scaleacross optimize: option --top needs a value";
    QTest::newRow("not a number")
        << QStringList{"optimize", s, "--top", "ten"}
        << "scaleacross optimize: --top: expected an integer from 1 to 100000, got 'ten'";
    QTest::newRow("out of range")
        << QStringList{"optimize", s, "--threads", "0"}
        << "scaleacross optimize: --threads: expected an integer from 1 to 4096, got '0'";
    QTest::newRow("octal-looking") << QStringList{"optimize", s, "--seeds", "0x10"}
                                   << "--seeds: expected an integer from 0 to 10000, got '0x10'";
    QTest::newRow("bad choice")
        << QStringList{"optimize", s, "--objective", "fast"}
        << "--objective: expected step-time, cost, cross-building-bytes, time-to-tokens, "
           "time-to-loss or energy, got 'fast'";
    QTest::newRow("bad shard") << QStringList{"optimize", s, "--shard", "2/2"}
                               << "--shard: expected I/N with 0 <= I < N, got '2/2'";
    QTest::newRow("bad --set") << QStringList{"optimize", s, "--set", "plan.zero_stage"}
                               << "--set: expected PATH=NUMBER, got 'plan.zero_stage'";
    QTest::newRow("merge --top")
        << QStringList{"merge", "a.json", "--top", "-1"}
        << "scaleacross merge: --top: expected an integer from 1 to 100000, got '-1'";
    QTest::newRow("check together")
        << QStringList{"check", "--cluster", s}
        << "scaleacross check: --cluster, --model and --plan go together";
}

// Exit 2 before any work: nothing on stdout, one line on stderr (the help
// on stdout for no command at all).
void TestCliEvaluate::badCommandLine() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const CliRun r = runCli(args);
    QVERIFY2(r.code == 2, describe(r));
    if (message.isEmpty()) {
        QVERIFY2(r.out.contains("Usage"), describe(r));
        return;
    }
    QVERIFY2(r.out.isEmpty(), describe(r));
    QVERIFY2(r.err.count('\n') == 1 && r.err.endsWith('\n'), describe(r));
    QVERIFY2(QString::fromUtf8(r.err).contains(message), describe(r));
}

QTEST_GUILESS_MAIN(TestCliEvaluate)
#include "tst_cli_evaluate.moc"

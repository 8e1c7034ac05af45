// Hostile and broken input, as a user gets it from someone else: every file
// in tests/bad_inputs/ (and a few made here because they are huge: a million
// buildings, 100,000 nested arrays, a 65 MiB file, a folder) is given to
// `scaleacross check` and, for scenarios, to `scaleacross evaluate`. Each
// must exit 2 with the message that tests/bad_inputs/expected.json lists for
// it (file, JSON path, problem) on stderr, finish within a few seconds of CPU
// time and 2 GiB of address space, and never crash or trip a sanitizer.
//
// The seed and regression inputs of the fuzz targets (tests/fuzz/corpus/)
// are replayed through the same functions libFuzzer calls, so CI runs them
// with any compiler.

#include "../common/files.h"
#include "../common/samples.h"
#include "../fuzz/targets.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <sys/resource.h>
#include <sys/stat.h>

using sa::testing::readAll;
using sa::testing::sourcePath;
using sa::testing::writeFile;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// A bad input is rejected in well under a second of CPU time (the million
// buildings take 0.3 s in a release build); the bound leaves room for the
// sanitizers' unoptimised builds (8 s under ASan, 17 s under TSan). CPU time,
// not wall time: the machine may be busy with other builds. A run that takes
// much longer on the clock than this is killed as hung.
constexpr qint64 kCpuBoundMs = kSanitized ? 60000 : 5000;
constexpr int kHangMs = kSanitized ? 300000 : 60000;
// Address space of the CLI (not under sanitizers: their shadow memory needs
// terabytes of address space).
constexpr rlim_t kMemoryBound = rlim_t(2) << 30;

struct CliRun {
    int code = -1;
    bool crashed = false;
    bool timedOut = false;
    qint64 ms = 0;
    qint64 cpuMs = 0;
    QByteArray err;
};

qint64 childrenCpuMs() {
    struct rusage usage {};
    ::getrusage(RUSAGE_CHILDREN, &usage);
    const auto ms = [](const timeval& t) { return qint64(t.tv_sec) * 1000 + t.tv_usec / 1000; };
    return ms(usage.ru_utime) + ms(usage.ru_stime);
}

CliRun runCli(const QString& workDir, const QStringList& args) {
    QProcess proc;
    proc.setWorkingDirectory(workDir);
    proc.setProcessChannelMode(QProcess::SeparateChannels);
    proc.setChildProcessModifier([] {
        // A CLI that spins is stopped by the kernel well past the bound.
        const rlim_t cpu = rlim_t(3 * kCpuBoundMs / 1000);
        const struct rlimit cpuLimit { cpu, cpu };
        ::setrlimit(RLIMIT_CPU, &cpuLimit);
        if (!kSanitized) {
            const struct rlimit memory { kMemoryBound, kMemoryBound };
            ::setrlimit(RLIMIT_AS, &memory);
        }
    });
    const qint64 cpuBefore = childrenCpuMs();
    QElapsedTimer timer;
    timer.start();
    proc.start(QStringLiteral(SCALEACROSS_CLI_PATH), args);
    CliRun r;
    if (!proc.waitForStarted(10000)) {
        r.err = "did not start: " + proc.errorString().toUtf8();
        return r;
    }
    if (!proc.waitForFinished(kHangMs)) {
        proc.kill();
        proc.waitForFinished();
        r.timedOut = true;
    }
    r.ms = timer.elapsed();
    r.cpuMs = childrenCpuMs() - cpuBefore;
    r.crashed = proc.exitStatus() == QProcess::CrashExit;
    r.code = r.crashed ? -1 : proc.exitCode();
    r.err = proc.readAllStandardError();
    return r;
}

QByteArray describe(const CliRun& r) {
    return "exit " + QByteArray::number(r.code) + (r.crashed ? " (crashed)" : "") +
           (r.timedOut ? " (killed as hung)" : "") + " after " + QByteArray::number(r.ms) +
           " ms (" + QByteArray::number(r.cpuMs) + " ms CPU)\nstderr: " + r.err.left(3000);
}

const char* const kFuzzTargets[] = {"cluster", "model", "plan", "scenario", "evaluate"};

int replay(const QString& target, const QByteArray& data) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(data.constData());
    const auto size = static_cast<std::size_t>(data.size());
    if (target == QLatin1String("cluster"))
        return sa::fuzz::cluster(bytes, size);
    if (target == QLatin1String("model"))
        return sa::fuzz::model(bytes, size);
    if (target == QLatin1String("plan"))
        return sa::fuzz::plan(bytes, size);
    if (target == QLatin1String("scenario"))
        return sa::fuzz::scenario(bytes, size);
    return sa::fuzz::evaluate(bytes, size);
}

} // namespace

class TestBadInputs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void manifestCoversCorpus();
    void rejected_data();
    void rejected();
    void fuzzCorpus_data();
    void fuzzCorpus();

private:
    void makeGenerated();

    QString corpusDir_;
    QJsonObject expected_;
    QTemporaryDir generated_;
};

void TestBadInputs::initTestCase() {
    corpusDir_ = sourcePath(QStringLiteral("tests/bad_inputs"));
    QVERIFY(QFileInfo::exists(QStringLiteral(SCALEACROSS_CLI_PATH)));
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(
        readAll(QDir(corpusDir_).filePath(QStringLiteral("expected.json"))), &error);
    QVERIFY2(doc.isObject(), qPrintable(error.errorString()));
    expected_ = doc.object();
    QVERIFY(generated_.isValid());
    makeGenerated();
}

// Inputs too big to keep in the repository, made in a temporary folder.
void TestBadInputs::makeGenerated() {
    const QDir dir(generated_.path());
    const QByteArray gpu =
        R"("gpu_models": {"H100": {"peak_tflops": {"bf16": 989}, "memory_gib": 80, "hbm_tbps": 3.35}})";

    // 10^6 buildings: the array is rejected by its size before anything is read.
    QByteArray million = R"({"format": "scaleacross.cluster", "version": 1, "name": "huge", )" +
                         gpu + R"(, "buildings": [)";
    million.reserve(million.size() + 3'000'000);
    for (int i = 0; i < 1'000'000; ++i)
        million += i ? ",{}" : "{}";
    million += "]}\n";
    QVERIFY(writeFile(dir.filePath(QStringLiteral("million-buildings.json")), million));

    // 1,001 links: one more than the limit.
    QByteArray links = R"({"format": "scaleacross.cluster", "version": 1, "name": "many", )" + gpu +
                       R"(, "buildings": [)";
    for (const char* name : {"B1", "B2"})
        links += QByteArray(name == QByteArray("B1") ? "" : ",") + R"({"name": ")" + name +
                 R"(", "region": "r", "gpu_model": "H100", "gpus": 8, "gpus_per_host": 8,
                   "scale_up_gbps": 3600, "scale_out_gbps": 400})";
    links += R"(], "links": [)";
    for (int i = 0; i < 1001; ++i)
        links += QByteArray(i ? "," : "") + R"({"between": ["B1", "B2"], "name": "L)" +
                 QByteArray::number(i) + R"(", "bandwidth_gbps": 100, "latency_ms": 1})";
    links += "]}\n";
    QVERIFY(writeFile(dir.filePath(QStringLiteral("1001-links.json")), links));

    // A scenario whose cluster is a named pipe: refused, not waited on.
    QVERIFY(::mkfifo(QFile::encodeName(dir.filePath(QStringLiteral("pipe"))).constData(), 0600) ==
            0);
    QVERIFY(writeFile(dir.filePath(QStringLiteral("scenario-fifo.json")),
                      R"({"format": "scaleacross.scenario", "version": 1, "cluster": "pipe",
                          "model": "pipe", "plan": "pipe"})"));

    // 100,000 nested arrays and objects, closed and unclosed.
    constexpr int kDeep = 100'000;
    QVERIFY(writeFile(dir.filePath(QStringLiteral("deep-arrays.json")),
                      QByteArray(kDeep, '[') + QByteArray(kDeep, ']')));
    QVERIFY(writeFile(dir.filePath(QStringLiteral("deep-arrays-unclosed.json")),
                      QByteArray(kDeep, '[')));
    QByteArray objects = R"({"format": "scaleacross.model", "version": 1, "description": )";
    for (int i = 0; i < kDeep; ++i)
        objects += R"({"a": )";
    objects += "1" + QByteArray(kDeep + 1, '}');
    QVERIFY(writeFile(dir.filePath(QStringLiteral("deep-objects.json")), objects));

    // 100,000 unknown keys: suggestions are bounded, messages capped.
    QByteArray keys = R"({"format": "scaleacross.model", "version": 1, "name": "m", "layers": 1,
        "hidden": 64, "ffn_hidden": 64, "heads": 1, "kv_heads": 1, "vocab": 8)";
    for (int i = 0; i < 100'000; ++i)
        keys += ", \"unknown_key_number_" + QByteArray::number(i) + "\": " + QByteArray::number(i);
    keys += "}\n";
    QVERIFY(writeFile(dir.filePath(QStringLiteral("many-unknown-keys.json")), keys));

    // A 4 MiB key: the message shows its start only.
    QVERIFY(writeFile(dir.filePath(QStringLiteral("long-key.json")),
                      R"({"format": "scaleacross.plan", "version": 1, ")" +
                          QByteArray(4 << 20, 'k') + "\": 1}\n"));

    // 65 MiB (sparse): over the 64 MiB limit, refused before reading.
    QFile big(dir.filePath(QStringLiteral("oversized.json")));
    QVERIFY(big.open(QIODevice::WriteOnly));
    QVERIFY(big.resize(qint64(65) << 20));
    big.close();

    // A folder with no documents in it.
    QVERIFY(dir.mkpath(QStringLiteral("empty-folder")));
}

void TestBadInputs::manifestCoversCorpus() {
    // Every file of the corpus has an expected message, and every entry a file.
    QSet<QString> files;
    const QDir dir(corpusDir_);
    for (const QString& name : dir.entryList(QDir::Files, QDir::Name))
        if (name != QLatin1String("expected.json"))
            files.insert(name);
    QSet<QString> listed;
    for (auto it = expected_.begin(); it != expected_.end(); ++it)
        if (!it.key().startsWith(QLatin1String("generated/")))
            listed.insert(it.key());
    for (const QString& f : files)
        QVERIFY2(listed.contains(f), qPrintable(f + " has no entry in expected.json"));
    for (const QString& f : listed)
        QVERIFY2(files.contains(f), qPrintable("expected.json lists a missing file: " + f));
    QVERIFY2(files.size() >= 50, qPrintable(QString::number(files.size()) + " files"));
}

void TestBadInputs::rejected_data() {
    QTest::addColumn<QString>("workDir");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("command");
    QTest::addColumn<QString>("message");
    for (auto it = expected_.begin(); it != expected_.end(); ++it) {
        QString file = it.key();
        QString workDir = corpusDir_;
        if (file.startsWith(QLatin1String("generated/"))) {
            file = file.mid(10);
            workDir = generated_.path();
        }
        // "FILE": "message" runs check, and evaluate too for a scenario;
        // {"check": "...", "evaluate": "..."} names the commands to run.
        if (it.value().isString()) {
            const QString message = it.value().toString();
            QTest::addRow("check %s", qPrintable(it.key()))
                << workDir << file << QStringLiteral("check") << message;
            if (file.startsWith(QLatin1String("scenario-")))
                QTest::addRow("evaluate %s", qPrintable(it.key()))
                    << workDir << file << QStringLiteral("evaluate") << message;
            continue;
        }
        const QJsonObject o = it.value().toObject();
        for (auto c = o.begin(); c != o.end(); ++c)
            QTest::addRow("%s %s", qPrintable(c.key()), qPrintable(it.key()))
                << workDir << file << c.key() << c.value().toString();
    }
}

void TestBadInputs::rejected() {
    QFETCH(QString, workDir);
    QFETCH(QString, file);
    QFETCH(QString, command);
    QFETCH(QString, message);
    QVERIFY2(!message.isEmpty(), "expected.json: an empty message");
    const CliRun r = runCli(workDir, {command, file});
    QVERIFY2(!r.crashed && !r.timedOut, describe(r).constData());
    QVERIFY2(!r.err.contains("Sanitizer") && !r.err.contains("runtime error:"),
             describe(r).constData());
    QVERIFY2(r.code == 2, describe(r).constData());
    QVERIFY2(r.err.contains(message.toUtf8()),
             ("expected on stderr: " + message.toUtf8() + "\n" + describe(r)).constData());
    QVERIFY2(r.cpuMs < kCpuBoundMs, describe(r).constData());
}

void TestBadInputs::fuzzCorpus_data() {
    QTest::addColumn<QString>("target");
    QTest::addColumn<QString>("path");
    int inputs = 0;
    for (const char* target : kFuzzTargets) {
        const QDir dir(sourcePath(QStringLiteral("tests/fuzz/corpus/") + QLatin1String(target)));
        for (const QString& name : dir.entryList(QDir::Files, QDir::Name)) {
            QTest::addRow("%s/%s", target, qPrintable(name))
                << QString::fromLatin1(target) << dir.filePath(name);
            ++inputs;
        }
    }
    QVERIFY2(inputs > 0, "no fuzz corpus found");
}

void TestBadInputs::fuzzCorpus() {
    QFETCH(QString, target);
    QFETCH(QString, path);
    QVERIFY(QFileInfo(path).isFile());
    // The targets abort with a message when a property fails.
    replay(target, readAll(path));
}

QTEST_GUILESS_MAIN(TestBadInputs)
#include "tst_badinputs.moc"

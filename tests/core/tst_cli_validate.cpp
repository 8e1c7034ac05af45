// `scaleacross validate` and the index reader behind it
// (core/calibrate/validate.h): broken indexes and documents are named by
// file and JSON path, a step time is converted with the plan's batch, the
// summary's arithmetic and target, and the command as a user runs it on
// the repository's own indexes, as JSON, and with --check-target.

#include "calibrate/validate.h"

#include "../common/cli.h"
#include "../common/files.h"
#include "../common/fixtures.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace sa;
using sa::testing::problemsText;
using sa::testing::runCli;

namespace {

std::string source(const std::string& relative) {
    return sa::testing::sourceDir() + "/" + relative;
}

// A run of the SC'21 index with absolute paths, as JSON text.
std::string sc21Run(const std::string& id, const std::string& measured) {
    const std::string dir = source("tests/validation/");
    return "{\"id\": \"" + id + "\", \"family\": \"f\", \"cluster\": \"" + dir +
           "selene-a100.json\", \"model\": \"" + dir +
           "model-megatron-gpt-1.7b.json\", \"plan\": \"" + dir +
           "plan-megatron-gpt-1.7b.json\", " + measured + "}";
}

ValidationRow syntheticRow(const std::string& family, double predicted, double measured) {
    ValidationRow r;
    r.id = family + std::to_string(predicted);
    r.family = family;
    r.kind = "Hopper FP8";
    r.predicted = predicted;
    r.measured = measured;
    return r;
}

int indexRuns(const std::string& path) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    return int(QJsonDocument::fromJson(f.readAll()).object().value("runs").toArray().size());
}

} // namespace

class TestCliValidate : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void indexProblems_data();
    void indexProblems();
    void documentProblems();
    void stepTimeConverted();
    void summaryTarget();
    void repositoryIndexes();
    void jsonOutput();
    void checkTarget();
    void badInputExitsTwo();
};

void TestCliValidate::indexProblems_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("mentions");
    const auto run = [](const char* measured) {
        return QString::fromStdString(sc21Run("a", measured));
    };
    QTest::newRow("not JSON") << "{\"runs\": ["
                              << ""
                              << "line";
    QTest::newRow("no runs") << "{\"about\": 1}"
                             << ""
                             << "runs";
    QTest::newRow("empty") << "{\"runs\": []}"
                           << "/runs"
                           << "at least one run";
    QTest::newRow("not an object") << "{\"runs\": [1]}"
                                   << "/runs/0"
                                   << "object";
    QTest::newRow("no id") << "{\"runs\": [{\"cluster\": \"c\", \"model\": \"m\", \"plan\": \"p\", "
                              "\"measured_tokens_per_s_per_gpu\": 1}]}"
                           << "/runs/0"
                           << "id";
    QTest::newRow("no measurement") << "{\"runs\": [" + run("\"gpus\": 32") + "]}"
                                    << "/runs/0"
                                    << "measured_tokens_per_s_per_gpu";
    QTest::newRow("negative tokens")
        << "{\"runs\": [" + run("\"measured_tokens_per_s_per_gpu\": -5") + "]}"
        << "/runs/0/measured_tokens_per_s_per_gpu"
        << "-5";
    QTest::newRow("TFLOP/s alone")
        << "{\"runs\": [" +
               run("\"measured_metric\": \"model_tflops_per_gpu\", \"measured_value\": 400") + "]}"
        << "/runs/0"
        << "FLOPs per token";
    QTest::newRow("unknown metric")
        << "{\"runs\": [" + run("\"measured_metric\": \"mfu\", \"measured_value\": 0.4") + "]}"
        << "/runs/0/measured_metric"
        << "mfu";
    QTest::newRow("metric without value")
        << "{\"runs\": [" + run("\"measured_metric\": \"step_time_s\"") + "]}"
        << "/runs/0/measured_value"
        << "missing";
    QTest::newRow("bad search") << "{\"runs\": [" +
                                       run("\"measured_step_time_s\": 3, \"search\": [\"tp\"]") +
                                       "]}"
                                << "/runs/0/search/0"
                                << "micro_batch_sequences";
    QTest::newRow("duplicate id") << "{\"runs\": [" + run("\"measured_step_time_s\": 3") + ", " +
                                         run("\"measured_step_time_s\": 4") + "]}"
                                  << "/runs/1/id"
                                  << "already";
}

void TestCliValidate::indexProblems() {
    QFETCH(QString, text);
    QFETCH(QString, path);
    QFETCH(QString, mentions);
    std::vector<Diagnostic> problems;
    const ValidationIndex index =
        parseValidationIndex(text.toStdString(), "runs.json", "default", problems);
    QVERIFY2(!problems.empty(), qPrintable(text));
    bool found = false;
    for (const Diagnostic& d : problems)
        found = found || (d.file == "runs.json" && d.path == path.toStdString() &&
                          d.str().find(mentions.toStdString()) != std::string::npos);
    QVERIFY2(found, problemsText(problems).c_str());
    // A broken entry is left out; nothing half-read is evaluated.
    QVERIFY(index.runs.size() <= 1);
}

void TestCliValidate::documentProblems() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    // A plan whose TP does not divide the model's heads.
    auto plan = nlohmann::json::parse(
        sa::testing::readAll(
            QString::fromStdString(source("tests/validation/plan-megatron-gpt-1.7b.json")))
            .toStdString());
    plan["parallelism"]["tp"] = 3;
    const QString planPath = tmp.filePath("plan.json");
    QVERIFY(sa::testing::writeFile(planPath, QByteArray::fromStdString(plan.dump(2))));
    const std::string dir = source("tests/validation/");
    const std::string text =
        "{\"runs\": [{\"id\": \"bad-tp\", \"cluster\": \"" + dir + "selene-a100.json\", " +
        "\"model\": \"" + dir + "model-megatron-gpt-1.7b.json\", \"plan\": \"plan.json\", " +
        "\"measured_step_time_s\": 3}, " +
        "{\"id\": \"gone\", \"cluster\": \"nowhere.json\", \"model\": \"" + dir +
        "model-megatron-gpt-1.7b.json\", \"plan\": \"plan.json\", \"measured_step_time_s\": 3}]}";
    std::vector<Diagnostic> problems;
    const ValidationIndex index = parseValidationIndex(text, "runs.json", "f", problems);
    QVERIFY2(problems.empty(), problemsText(problems).c_str());
    QCOMPARE(index.runs.size(), std::size_t(2));
    const auto rows = validateRuns(index, tmp.path().toStdString(), {}, problems);
    QVERIFY(rows.empty());
    const std::string all = problemsText(problems);
    // The plan's own file and JSON pointer, and the missing cluster by name.
    QVERIFY2(all.find(planPath.toStdString()) != std::string::npos &&
                 all.find("/parallelism/tp") != std::string::npos,
             all.c_str());
    QVERIFY2(all.find("nowhere.json") != std::string::npos, all.c_str());
}

void TestCliValidate::stepTimeConverted() {
    std::vector<Diagnostic> problems;
    const ValidationIndex index =
        parseValidationIndex("{\"runs\": [" + sc21Run("a", "\"measured_step_time_s\": 3.5") + "]}",
                             "runs.json", "f", problems);
    const auto rows = validateRuns(index, "", {}, problems);
    QVERIFY2(problems.empty(), problemsText(problems).c_str());
    QCOMPARE(rows.size(), std::size_t(1));
    const ValidationRow& r = rows.front();
    const Plan& p = r.choice.plan;
    const double tokensPerGpu = double(p.global_batch_sequences) * double(p.sequence_length) /
                                double(r.choice.evaluation.gpus);
    QVERIFY(std::abs(r.measured - tokensPerGpu / 3.5) < 1e-9 * r.measured);
    QCOMPARE(r.published, std::string("3.500 s/step"));
    // Unsearched: the plan's own micro batch and schedule, no marks.
    QCOMPARE(r.choice.plan.micro_batch_sequences, r.scenario.plan.micro_batch_sequences);
    QVERIFY(r.planText().find('*') == std::string::npos);
    // Searched: the fastest that fits, marked, and no slower.
    ValidationOptions searched;
    searched.search = ValidationSearch{true, true, std::nullopt};
    const auto best = validateRuns(index, "", searched, problems);
    QCOMPARE(best.size(), std::size_t(1));
    QVERIFY(best.front().predicted >= r.predicted * (1 - 1e-12));
    QVERIFY(best.front().planText().find('*') != std::string::npos);
    QVERIFY(best.front().choice.evaluation.memory.fits);
}

void TestCliValidate::summaryTarget() {
    // Two families within the target: met.
    std::vector<ValidationRow> rows = {syntheticRow("a", 105, 100), syntheticRow("a", 95, 100),
                                       syntheticRow("b", 108, 100)};
    ValidationSummary s = summarizeValidation(rows);
    QCOMPARE(s.families.size(), std::size_t(2));
    QCOMPARE(s.families[0].name, std::string("a"));
    QCOMPARE(s.families[0].count, 2);
    QVERIFY(std::abs(s.families[0].mean()) < 1e-12);
    QVERIFY(std::abs(s.families[0].meanAbs() - 0.05) < 1e-12);
    QVERIFY(std::abs(s.overall.max_abs - 0.08) < 1e-12);
    QVERIFY(s.target_met);
    QVERIFY(s.misses.empty());
    // A row over 25% (and its family over 10% on average): missed, and said where.
    rows.push_back(syntheticRow("b", 70, 100));
    s = summarizeValidation(rows);
    QVERIFY(!s.target_met);
    QCOMPARE(s.rows_over_target, 1);
    QVERIFY2(s.misses.find("family b") != std::string::npos &&
                 s.misses.find("1 of 4 rows over 25%") != std::string::npos,
             s.misses.c_str());
    QVERIFY(s.misses.find("family a") == std::string::npos);
    const std::string table = formatValidationTable(rows, s);
    QVERIFY(table.find("target met: no") != std::string::npos);
    QVERIFY(table.find("-30.0%") != std::string::npos);
}

void TestCliValidate::repositoryIndexes() {
    const std::string sc21 = source("tests/validation/runs.json");
    const std::string published = source("tests/validation/published/runs.json");
    const auto r =
        runCli({"validate", QString::fromStdString(sc21), QString::fromStdString(published)});
    QVERIFY2(r.code == 0, (r.out + r.err).c_str());
    const int runs = indexRuns(sc21) + indexRuns(published);
    QVERIFY(runs > 30);
    char overall[64];
    std::snprintf(overall, sizeof overall, "overall %d", runs);
    std::string squeezed; // runs of spaces as one, to find "overall 98"
    for (char c : r.out)
        if (c != ' ' || squeezed.empty() || squeezed.back() != ' ')
            squeezed += c;
    QVERIFY2(squeezed.find(overall) != std::string::npos, r.out.c_str());
    QVERIFY(r.out.find("megatron-sc21") != std::string::npos);
    QVERIFY(r.out.find("accuracy target") != std::string::npos);
    QVERIFY(r.out.find("MoE, expert parallel") != std::string::npos);
}

void TestCliValidate::jsonOutput() {
    const std::string published = source("tests/validation/published/runs.json");
    const auto r = runCli({"validate", QString::fromStdString(published), "--json"});
    QVERIFY2(r.code == 0, r.err.c_str());
    const QJsonObject doc = QJsonDocument::fromJson(QByteArray::fromStdString(r.out)).object();
    const QJsonArray rows = doc.value("rows").toArray();
    QCOMPARE(rows.size(), indexRuns(published));
    int families = 0;
    for (const auto& f : doc.value("families").toArray())
        families += f.toObject().value("runs").toInt();
    QCOMPARE(families, rows.size());
    for (const auto& v : rows) {
        const QJsonObject row = v.toObject();
        const double p = row.value("predicted_tokens_per_s_per_gpu").toDouble();
        const double m = row.value("measured_tokens_per_s_per_gpu").toDouble();
        QVERIFY(p > 0 && m > 0);
        QVERIFY(std::abs(row.value("error").toDouble() - (p / m - 1)) < 1e-9);
    }
    QVERIFY(doc.value("target").toObject().contains("met"));
    QCOMPARE(doc.value("overall").toObject().value("runs").toInt(), rows.size());
}

void TestCliValidate::checkTarget() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    // The model's own prediction as the measurement: every error 0, target met.
    const QString exact = tmp.filePath("exact.json");
    QVERIFY(sa::testing::writeFile(
        exact, QByteArray::fromStdString("{\"runs\": [" +
                                         sc21Run("a", "\"measured_step_time_s\": 3.5") + "]}")));
    auto first = runCli({"validate", exact, "--json"});
    QVERIFY2(first.code == 0, first.err.c_str());
    const double predicted = QJsonDocument::fromJson(QByteArray::fromStdString(first.out))
                                 .object()
                                 .value("rows")
                                 .toArray()
                                 .first()
                                 .toObject()
                                 .value("predicted_tokens_per_s_per_gpu")
                                 .toDouble();
    QVERIFY(predicted > 0);
    char measured[96];
    std::snprintf(measured, sizeof measured, "\"measured_tokens_per_s_per_gpu\": %.17g", predicted);
    QVERIFY(sa::testing::writeFile(
        exact, QByteArray::fromStdString("{\"runs\": [" + sc21Run("a", measured) + "]}")));
    auto met = runCli({"validate", exact, "--check-target"});
    QVERIFY2(met.code == 0, (met.out + met.err).c_str());
    QVERIFY(met.out.find("target met: yes") != std::string::npos);
    // Measured at half the prediction: +100%, missed, exit 1 (0 without the flag).
    std::snprintf(measured, sizeof measured, "\"measured_tokens_per_s_per_gpu\": %.17g",
                  predicted / 2);
    const QString off = tmp.filePath("off.json");
    QVERIFY(sa::testing::writeFile(
        off, QByteArray::fromStdString("{\"runs\": [" + sc21Run("a", measured) + "]}")));
    auto missed = runCli({"validate", off, "--check-target"});
    QCOMPARE(missed.code, 1);
    QVERIFY(missed.out.find("+100.0%") != std::string::npos);
    QVERIFY(missed.out.find("target met: no") != std::string::npos);
    QCOMPARE(runCli({"validate", off}).code, 0);
}

void TestCliValidate::badInputExitsTwo() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString broken = tmp.filePath("broken.json");
    QVERIFY(sa::testing::writeFile(
        broken, QByteArray::fromStdString(
                    "{\"runs\": [" + sc21Run("a", "\"measured_tokens_per_s_per_gpu\": 0") + "]}")));
    auto r = runCli({"validate", broken});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.find(broken.toStdString()) != std::string::npos &&
                 r.err.find("/runs/0/measured_tokens_per_s_per_gpu") != std::string::npos,
             r.err.c_str());
    QVERIFY(r.out.empty());
    r = runCli({"validate", tmp.filePath("missing.json")});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.find("missing.json") != std::string::npos);
    r = runCli({"validate", broken, "--search", "tp"});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.find("--search") != std::string::npos);
    r = runCli({"validate", "--help"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.find("--check-target") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestCliValidate)
#include "tst_cli_validate.moc"

// The series of the explorer's sweep chart, without the chart: step time
// over a link's bandwidth for the plan (each point the plain evaluation of
// the scenario with that value), failed points kept in place with their
// reason, the baselines' plans swept as the baselines generate them, and
// `scaleacross sweep --baselines` printing exactly these numbers as CSV and
// JSON.

#include "explore/baselines.h"
#include "explore/sweep.h"
#include "explore/sweepseries.h"
#include "export/sweep_csv.h"
#include "formats/documents.h"

#include "../common/cli.h"
#include "../common/csv_reader.h"

#include <nlohmann/json.hpp>

#include <QProcess>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <vector>

using namespace sa;
using sa::testing::CliRun;
using sa::testing::runCli;

namespace {

std::string samplePath(const std::string& name) {
    return std::string(SCALEACROSS_SOURCE_DIR) + "/sample_clusters/scenarios/" + name;
}

Scenario sample(const std::string& name) {
    const auto loaded = loadScenarioFile(samplePath(name));
    if (!loaded.ok())
        qFatal("cannot load %s", name.c_str());
    return *loaded.value;
}

double stepTime(const Scenario& s) {
    EvaluateOptions opts;
    opts.timeline = false;
    auto r = evaluate(s, opts);
    if (auto* e = std::get_if<EvaluationError>(&r))
        qFatal("evaluation failed: %s", e->str().c_str());
    return std::get<Evaluation>(r).step_time_s;
}

Scenario withLinkValue(const Scenario& s, const std::string& path, double v) {
    std::string error;
    auto out = withValue(s, path, v, &error);
    if (!out)
        qFatal("%s", error.c_str());
    return *out;
}

} // namespace

class TestSweepSeries : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void stepTimeFallsAsBandwidthGrows();
    void failedPointsKeepTheirPlace();
    void baselinesAreTheirPlansSwept();
    void cancelledGivesWhatItHas();
    void cliPrintsTheSeries_data();
    void cliPrintsTheSeries();
    void cliBaselinesNeedOneParameter();
};

void TestSweepSeries::stepTimeFallsAsBandwidthGrows() {
    // two-buildings-405b puts DP across the campus link: the more bandwidth,
    // the less exposed DP traffic, never a slower step.
    const Scenario s = sample("two-buildings-405b.json");
    QCOMPARE(s.plan.rank_order.back(), Dim::DP);
    const Link& link = s.cluster.links.front();
    const std::string path = "links." + link.name + ".bandwidth_gbps";
    const double bw = link.bandwidth_gbps;
    // Deep into network-bound territory, then 1/10x to 10x with the value as
    // built in the middle.
    std::vector<double> values{10, 100};
    for (int i = 0; i < 9; ++i)
        values.push_back(i == 4 ? bw : bw * std::pow(10.0, (i - 4) / 4.0));
    const auto series = computeSweepSeries(s, path, values, false);
    QCOMPARE(series.size(), std::size_t(1));
    const SweepSeries& cur = series.front();
    QCOMPARE(cur.name, currentPlanSeriesName());
    QCOMPARE(cur.x, values);
    QCOMPARE(cur.evaluatedCount(), int(values.size()));
    QCOMPARE(cur.errorCount(), 0);
    QVERIFY(cur.fits_in_memory);
    for (std::size_t i = 1; i < values.size(); ++i)
        QVERIFY2(cur.step_time_s[i] <= cur.step_time_s[i - 1] * (1 + 1e-12),
                 (std::to_string(values[i]) + " Gbit/s: " + std::to_string(cur.step_time_s[i]) +
                  " s after " + std::to_string(cur.step_time_s[i - 1]) + " s")
                     .c_str());
    // And it matters: at 10 Gbit/s the step is much slower than as built.
    QVERIFY(cur.step_time_s.front() > 1.5 * cur.step_time_s.back());
    // The point as built is the plain evaluation; every other point the
    // evaluation of the scenario with that bandwidth.
    QCOMPARE(cur.step_time_s[2 + 4], stepTime(s));
    for (std::size_t i : {std::size_t(0), std::size_t(3), values.size() - 1})
        QCOMPARE(cur.step_time_s[i], stepTime(withLinkValue(s, path, values[i])));
}

void TestSweepSeries::failedPointsKeepTheirPlace() {
    // Bandwidth must be positive: 0 and -5 cannot be evaluated.
    const Scenario s = sample("two-buildings-405b.json");
    const std::string path = "links.B1-B2.bandwidth_gbps";
    const std::vector<double> values{1000, 5000, 0, -5, 20000, 51200, 100000};
    const auto series = computeSweepSeries(s, path, values, false);
    QCOMPARE(series.size(), std::size_t(1));
    const SweepSeries& cur = series.front();
    QCOMPARE(cur.errorCount(), 2);
    QCOMPARE(cur.evaluatedCount(), 5);
    QCOMPARE(cur.errors.size(), values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        const bool bad = i == 2 || i == 3;
        QCOMPARE(cur.errors[i].empty(), !bad);
        if (bad) {
            QVERIFY(std::isnan(cur.step_time_s[i]));
            QVERIFY2(cur.errors[i].find("bandwidth_gbps") != std::string::npos,
                     cur.errors[i].c_str());
        } else {
            QCOMPARE(cur.step_time_s[i], stepTime(withLinkValue(s, path, values[i])));
        }
    }

    // The CSV has every point, failed ones with their reason.
    bool ok = false;
    const auto rows = sa::testing::readCsv(sweepSeriesCsv(path, series), &ok);
    QVERIFY(ok);
    QCOMPARE(rows.size(), values.size() + 1);
    QCOMPARE(rows[0], (sa::testing::CsvRow{"series", path, "step_time_s", "error"}));
    QCOMPARE(rows[3], (sa::testing::CsvRow{currentPlanSeriesName(), "0", "", cur.errors[2]}));
    QCOMPARE(std::stod(rows[5][1]), 20000.0);
    QVERIFY(std::abs(std::stod(rows[5][2]) / cur.step_time_s[4] - 1) < 1e-5);
}

void TestSweepSeries::baselinesAreTheirPlansSwept() {
    const Scenario s = sample("two-buildings-405b.json");
    const std::string path = "links.B1-B2.bandwidth_gbps";
    const std::vector<double> values{5120, 51200, 512000};
    const auto series = computeSweepSeries(s, path, values, true);
    QCOMPARE(series.size(), std::size_t(3));
    QCOMPARE(series[0].name, currentPlanSeriesName());
    for (const SweepSeries& x : series) {
        QCOMPARE(x.x, values);
        QCOMPARE(x.step_time_s.size(), values.size());
        QCOMPARE(x.errors.size(), values.size());
        QVERIFY2(x.evaluatedCount() == int(values.size()),
                 (x.name + ": " + x.errors.front()).c_str());
    }
    // Each baseline is found once on the unswept scenario and its plan then
    // evaluated at every value: production and the best prior art.
    const Evaluator evaluator(s.cluster);
    const auto all = computeBaselines(evaluator, s.model, s.plan, BaselineOptions{});
    const BaselineResult* production = findBaseline(all, "production");
    QVERIFY(production && bestPriorArt(all));
    const BaselineResult* generated[] = {production, bestPriorArt(all)};
    QCOMPARE(series[1].name, baselineSeriesName(*production));
    QCOMPARE(series[2].name, baselineSeriesName(*bestPriorArt(all)));
    QVERIFY(series[2].name.rfind("Best prior art: ", 0) == 0);
    for (std::size_t k = 0; k < 2; ++k) {
        const BaselineResult& b = *generated[k];
        QVERIFY2(b.feasible, b.problem.c_str());
        QVERIFY(b.plan != s.plan);
        Scenario planned = s;
        planned.plan = b.plan;
        // As built, the series gives the baseline's own step time.
        QCOMPARE(stepTime(planned), b.step_time_s);
        for (std::size_t i = 0; i < values.size(); ++i)
            QCOMPARE(series[k + 1].step_time_s[i],
                     stepTime(withLinkValue(planned, path, values[i])));
    }
    // Production sends DP over the link: its step time follows the bandwidth.
    auto spread = [](const SweepSeries& x) { return x.step_time_s.front() / x.step_time_s.back(); };
    QVERIFY(spread(series[1]) > 1.01);
}

void TestSweepSeries::cancelledGivesWhatItHas() {
    const Scenario s = sample("two-buildings-405b.json");
    std::atomic<bool> cancelled{true};
    QVERIFY(computeSweepSeries(s, "links.B1-B2.bandwidth_gbps", {5120, 51200}, true, &cancelled)
                .empty());
    cancelled = false;
    QCOMPARE(
        computeSweepSeries(s, "links.B1-B2.bandwidth_gbps", {5120, 51200}, true, &cancelled).size(),
        std::size_t(3));
}

void TestSweepSeries::cliPrintsTheSeries_data() {
    QTest::addColumn<QString>("scenario");
    QTest::addColumn<QString>("vary");
    QTest::addColumn<bool>("json");
    for (bool json : {false, true}) {
        const char* format = json ? " json" : " csv";
        QTest::newRow(QByteArray("two buildings, bandwidth").append(format).constData())
            << "two-buildings-405b.json"
            << "links.B1-B2.bandwidth_gbps=5120:512000:log10:5" << json;
        QTest::newRow(QByteArray("two buildings, a failing point").append(format).constData())
            << "two-buildings-405b.json"
            << "links.B1-B2.bandwidth_gbps=0,1000,51200" << json;
        QTest::newRow(QByteArray("three buildings, latency").append(format).constData())
            << "three-buildings-405b.json"
            << "links.B1-B3.latency_ms=0:40:lin:4" << json;
    }
}

void TestSweepSeries::cliPrintsTheSeries() {
    QFETCH(QString, scenario);
    QFETCH(QString, vary);
    QFETCH(bool, json);
    QStringList args{QStringLiteral("sweep"),
                     QString::fromStdString(samplePath(scenario.toStdString())),
                     QStringLiteral("--vary"), vary, QStringLiteral("--baselines")};
    if (json)
        args << QStringLiteral("--json");
    const CliRun r = runCli(args);
    QVERIFY2(r.code == 0, r.err.c_str());

    // What the explorer's chart would be given for the same values.
    std::string error;
    const auto axis = parseSweepAxis(vary.toStdString(), &error);
    QVERIFY2(axis, error.c_str());
    const auto series =
        computeSweepSeries(sample(scenario.toStdString()), axis->path, axis->values, true);
    QCOMPARE(series.size(), std::size_t(3));
    QVERIFY(series[0].evaluatedCount() > 0);

    if (!json) {
        // The chart's "Export CSV" of the same series, byte for byte ...
        QCOMPARE(r.out, sweepSeriesCsv(axis->path, series));
        // ... and read back, its numbers.
        bool ok = false;
        const auto rows = sa::testing::readCsv(r.out, &ok);
        QVERIFY(ok);
        std::size_t row = 1;
        QCOMPARE(rows.size(), 1 + series.size() * axis->values.size());
        for (const SweepSeries& s : series)
            for (std::size_t i = 0; i < s.x.size(); ++i, ++row) {
                QCOMPARE(rows[row][0], s.name);
                QVERIFY(std::abs(std::stod(rows[row][1]) - s.x[i]) <= 1e-5 * std::abs(s.x[i]));
                QCOMPARE(rows[row][3], s.errors[i]);
                if (s.errors[i].empty())
                    QVERIFY2(std::abs(std::stod(rows[row][2]) / s.step_time_s[i] - 1) < 1e-5,
                             (rows[row][2] + " vs " + std::to_string(s.step_time_s[i])).c_str());
            }
        return;
    }
    // JSON: the same doubles, exactly.
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    QVERIFY(j.is_object());
    QCOMPARE(j.at("path").get<std::string>(), axis->path);
    const auto& list = j.at("series");
    QCOMPARE(list.size(), series.size());
    for (std::size_t k = 0; k < series.size(); ++k) {
        const SweepSeries& s = series[k];
        QCOMPARE(list[k].at("name").get<std::string>(), s.name);
        QCOMPARE(list[k].at("fits_in_memory").get<bool>(), s.fits_in_memory);
        const auto& points = list[k].at("points");
        QCOMPARE(points.size(), s.x.size());
        for (std::size_t i = 0; i < s.x.size(); ++i) {
            QCOMPARE(points[i].at("x").get<double>(), s.x[i]);
            if (s.errors[i].empty()) {
                QCOMPARE(points[i].at("step_time_s").get<double>(), s.step_time_s[i]);
                QVERIFY(!points[i].contains("error"));
            } else {
                QCOMPARE(points[i].at("error").get<std::string>(), s.errors[i]);
                QVERIFY(!points[i].contains("step_time_s"));
            }
        }
    }
}

void TestSweepSeries::cliBaselinesNeedOneParameter() {
    const CliRun r = runCli({QStringLiteral("sweep"),
                             QString::fromStdString(samplePath("two-buildings-405b.json")),
                             QStringLiteral("--vary"), QStringLiteral("links.B1-B2.latency_ms=1,2"),
                             QStringLiteral("--vary"), QStringLiteral("plan.parallelism.pp=4,8"),
                             QStringLiteral("--baselines")});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.find("--baselines") != std::string::npos, r.err.c_str());
    QVERIFY(r.out.empty());
    const CliRun help = runCli({QStringLiteral("sweep"), QStringLiteral("--help")});
    QCOMPARE(help.code, 0);
    QVERIFY(help.out.find("--baselines") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestSweepSeries)
#include "tst_sweepseries.moc"

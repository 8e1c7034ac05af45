// The series of the explorer's sweep chart, without the chart: step time
// over a link's bandwidth for the plan (each point the plain evaluation of
// the scenario with that value), failed points kept in place with their
// reason, and the baselines' plans swept as the baselines generate them.

#include "explore/baselines.h"
#include "explore/sweep.h"
#include "explore/sweepseries.h"
#include "export/sweep_csv.h"
#include "formats/documents.h"

#include "../common/csv_reader.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <vector>

using namespace sa;

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
    QCOMPARE(series[1].name, productionSeriesName());
    QCOMPARE(series[2].name, priorArtSeriesName());
    for (const SweepSeries& x : series) {
        QCOMPARE(x.x, values);
        QCOMPARE(x.step_time_s.size(), values.size());
        QCOMPARE(x.errors.size(), values.size());
        QVERIFY2(x.evaluatedCount() == int(values.size()),
                 (x.name + ": " + x.errors.front()).c_str());
    }
    // Each baseline is generated once on the unswept scenario (within the
    // plan's GPUs) and its plan then evaluated at every value.
    const Evaluator evaluator(s.cluster);
    const std::int64_t budget = std::min(s.plan.parallelism.gpus(), s.cluster.totalGpus());
    const BaselineResult generated[] = {
        productionBaseline(evaluator, s.model, s.plan, budget),
        priorArtBaseline(evaluator, s.model, s.plan, budget),
    };
    for (std::size_t k = 0; k < 2; ++k) {
        const BaselineResult& b = generated[k];
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
    // Prior art keeps the link out of DP: bandwidth barely matters to it,
    // far less than to the DP-across plan.
    auto spread = [](const SweepSeries& x) { return x.step_time_s.front() / x.step_time_s.back(); };
    QVERIFY(spread(series[2]) < spread(series[0]));
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

QTEST_GUILESS_MAIN(TestSweepSeries)
#include "tst_sweepseries.moc"

// Optimizer results as CSV: the header, one row per top plan then one per
// baseline, the figures as the result holds them (shortest round-trip
// numbers), and RFC 4180 quoting of labels and problems.

#include "explore/optimizer.h"
#include "export/optimizer_csv.h"

#include "../common/csv_reader.h"
#include "../common/small_search.h"

#include <QTest>

#include <charconv>
#include <string>
#include <vector>

using namespace sa;
using namespace sa::testing;

namespace {

using Row = sa::testing::CsvRow;

std::vector<Row> parseCsv(const std::string& text, bool* ok) {
    return sa::testing::readCsv(text, ok);
}

double toDouble(const std::string& s) {
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
        return -12345.678;
    return v;
}

int column(const std::string& name) {
    const auto& cols = optimizerCsvColumns();
    for (std::size_t i = 0; i < cols.size(); ++i)
        if (cols[i] == name)
            return int(i);
    return -1;
}

OptimizerOptions smallOptions() {
    OptimizerOptions o;
    o.space = smallSpace();
    o.space.schedules = {{ScheduleKind::OneFOneB, 1}, {ScheduleKind::Interleaved, 2}};
    o.max_evaluations = 100000;
    o.top_k = 6;
    o.threads = 2;
    return o;
}

ScoredPlan scored(const std::string& label, double step, double bytes, std::uint32_t key) {
    ScoredPlan p;
    p.key.structure = key;
    p.label = label;
    p.plan.name = "optimized-" + std::to_string(key);
    p.plan.description = label;
    p.plan.sequence_length = 4096;
    p.plan.global_batch_sequences = 64;
    p.plan.parallelism = {2, 1, 4, 8, 1};
    p.step_time_s = step;
    p.cross_building_bytes = bytes;
    p.gpus = 64;
    p.gpu_seconds = 64 * step;
    p.mfu = 0.4;
    p.tokens_per_s = 64.0 * 4096 / step;
    p.peak_gib_per_gpu = 61.5;
    return p;
}

// Two plans and two baselines, one of them infeasible, with text that
// needs quoting.
OptimizerResult syntheticResult(const std::string& label) {
    OptimizerResult r;
    r.top = {scored(label, 2.0, 3e9, 1), scored("plain", 2.5, 1e9, 2)};
    r.pareto = {r.top[0], r.top[1]};
    BaselineResult production;
    production.name = "production";
    production.recipe = "Llama 3, DP across buildings";
    production.feasible = true;
    production.step_time_s = 3.0;
    production.cross_building_bytes = 9e9;
    production.plan = r.top[0].plan;
    production.gpus = 64;
    BaselineResult prior;
    prior.name = "prior-art";
    prior.recipe = "Atlas";
    prior.feasible = false;
    prior.problem = "does not fit: 90.1 GiB > 80 GiB, \"stage 0\"";
    prior.plan = r.top[1].plan;
    r.baselines = {production, prior};
    return r;
}

} // namespace

class TestOptimizerCsv : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void headerColumns();
    void rowsOfASearch();
    void quoting_data();
    void quoting();
    void infeasibleBaselineHasEmptyFigures();
    void paretoRowsOnRequest();
};

void TestOptimizerCsv::headerColumns() {
    const std::string csv = optimizerCsv(OptimizerResult{});
    bool ok = false;
    const auto rows = parseCsv(csv, &ok);
    QVERIFY(ok);
    QCOMPARE(rows.size(), std::size_t(1));
    QCOMPARE(rows.front(), optimizerCsvColumns());
    for (const char* name : {"kind",
                             "rank",
                             "label",
                             "step_time_s",
                             "speedup_vs_production",
                             "speedup_vs_prior_art",
                             "mfu",
                             "tokens_per_s",
                             "cross_building_bytes",
                             "peak_gib_per_gpu",
                             "gpus",
                             "pareto",
                             "tp",
                             "cp",
                             "pp",
                             "dp",
                             "ep",
                             "micro_batch_sequences",
                             "schedule",
                             "zero_stage",
                             "recompute"})
        QVERIFY2(column(name) >= 0, name);
}

void TestOptimizerCsv::rowsOfASearch() {
    const SmallProblem s;
    const Evaluator evaluator(s.cluster);
    const OptimizerResult r = optimize(evaluator, s.model, s.base, smallOptions());
    QVERIFY(!r.cancelled);
    QVERIFY(r.top.size() >= 3);
    QCOMPARE(r.baselines.size(), std::size_t(5));

    bool ok = false;
    const auto rows = parseCsv(optimizerCsv(r), &ok);
    QVERIFY(ok);
    QCOMPARE(rows.size(), 1 + r.top.size() + r.baselines.size());
    for (const Row& row : rows)
        QCOMPARE(row.size(), optimizerCsvColumns().size());

    const BaselineResult* production = findBaseline(r, "production");
    QVERIFY(production);
    for (std::size_t i = 0; i < r.top.size(); ++i) {
        const Row& row = rows[1 + i];
        const ScoredPlan& p = r.top[i];
        QCOMPARE(row[std::size_t(column("kind"))], std::string("top"));
        QCOMPARE(row[std::size_t(column("rank"))], std::to_string(i + 1));
        QCOMPARE(row[std::size_t(column("label"))], p.label);
        // Shortest round-trip form: the same double back.
        QCOMPARE(toDouble(row[std::size_t(column("step_time_s"))]), p.step_time_s);
        QCOMPARE(toDouble(row[std::size_t(column("cross_building_bytes"))]),
                 p.cross_building_bytes);
        QCOMPARE(toDouble(row[std::size_t(column("mfu"))]), p.mfu);
        QCOMPARE(toDouble(row[std::size_t(column("tokens_per_s"))]), p.tokens_per_s);
        QCOMPARE(toDouble(row[std::size_t(column("peak_gib_per_gpu"))]), p.peak_gib_per_gpu);
        QCOMPARE(row[std::size_t(column("gpus"))], std::to_string(p.gpus));
        QCOMPARE(row[std::size_t(column("tp"))], std::to_string(p.plan.parallelism.tp));
        QCOMPARE(row[std::size_t(column("pp"))], std::to_string(p.plan.parallelism.pp));
        QCOMPARE(row[std::size_t(column("dp"))], std::to_string(p.plan.parallelism.dp));
        QCOMPARE(row[std::size_t(column("zero_stage"))], std::to_string(p.plan.zero_stage));
        QCOMPARE(row[std::size_t(column("schedule"))], std::string(toString(p.plan.schedule.kind)));
        QCOMPARE(row[std::size_t(column("recompute"))], std::string(toString(p.plan.recompute)));
        QCOMPARE(row[std::size_t(column("pareto"))],
                 std::string(isOnParetoFront(r, i) ? "true" : "false"));
        if (production->feasible)
            QCOMPARE(toDouble(row[std::size_t(column("speedup_vs_production"))]),
                     production->step_time_s / p.step_time_s - 1.0);
    }
    // The best plan's speedup is the one the optimizer reports.
    if (const auto s0 = r.speedupOver(*production))
        QCOMPARE(toDouble(rows[1][std::size_t(column("speedup_vs_production"))]), *s0);
    // At least the fastest plan is on the front.
    QCOMPARE(rows[1][std::size_t(column("pareto"))], std::string("true"));
    for (std::size_t b = 0; b < r.baselines.size(); ++b) {
        const Row& row = rows[1 + r.top.size() + b];
        QCOMPARE(row[std::size_t(column("kind"))], std::string("baseline"));
        QCOMPARE(row[std::size_t(column("rank"))], std::string());
        QCOMPARE(row[std::size_t(column("name"))], r.baselines[b].name);
        QCOMPARE(row[std::size_t(column("tp"))],
                 std::to_string(r.baselines[b].plan.parallelism.tp));
        if (r.baselines[b].feasible)
            QCOMPARE(toDouble(row[std::size_t(column("step_time_s"))]), r.baselines[b].step_time_s);
    }
    // A baseline compared with itself.
    if (production->feasible) {
        bool found = false;
        for (const auto& row : rows)
            if (row[0] == "baseline" && row[std::size_t(column("name"))] == "production") {
                QCOMPARE(row[std::size_t(column("speedup_vs_production"))], std::string("0"));
                found = true;
            }
        QVERIFY(found);
    }
}

void TestOptimizerCsv::quoting_data() {
    QTest::addColumn<QString>("label");
    QTest::addColumn<QString>("encoded");
    QTest::newRow("plain") << "tp8 pp16 | 1f1b"
                           << "tp8 pp16 | 1f1b";
    QTest::newRow("comma") << "B1:4, B2:4"
                           << "\"B1:4, B2:4\"";
    QTest::newRow("quote") << "say \"hi\""
                           << "\"say \"\"hi\"\"\"";
    QTest::newRow("newline") << "two\nlines"
                             << "\"two\nlines\"";
    QTest::newRow("carriage return") << "a\rb"
                                     << "\"a\rb\"";
    QTest::newRow("spaces kept") << "  padded  "
                                 << "  padded  ";
    QTest::newRow("empty") << ""
                           << "";
}

void TestOptimizerCsv::quoting() {
    QFETCH(QString, label);
    QFETCH(QString, encoded);
    const OptimizerResult r = syntheticResult(label.toStdString());
    const std::string csv = optimizerCsv(r);
    // The first data row: kind, rank, name, then the label field.
    const std::string expectedStart = "top,1,optimized-1," + encoded.toStdString() + ",";
    const std::size_t firstRow = csv.find("\r\n") + 2;
    QCOMPARE(csv.substr(firstRow, expectedStart.size()), expectedStart);

    bool ok = false;
    const auto rows = parseCsv(csv, &ok);
    QVERIFY(ok);
    QCOMPARE(rows.size(), std::size_t(1 + 2 + 2));
    QCOMPARE(rows[1][std::size_t(column("label"))], label.toStdString());
    // The baseline's problem has a comma and quotes too.
    QCOMPARE(rows[4][std::size_t(column("problem"))], r.baselines[1].problem);
    QCOMPARE(rows[3][std::size_t(column("label"))], r.baselines[0].recipe);
}

void TestOptimizerCsv::infeasibleBaselineHasEmptyFigures() {
    const OptimizerResult r = syntheticResult("x");
    bool ok = false;
    const auto rows = parseCsv(optimizerCsv(r), &ok);
    QVERIFY(ok);
    const Row& production = rows[3];
    const Row& prior = rows[4];
    QCOMPARE(prior[std::size_t(column("kind"))], std::string("baseline"));
    QCOMPARE(prior[std::size_t(column("feasible"))], std::string("false"));
    for (const char* name : {"step_time_s", "mfu", "tokens_per_s", "cross_building_bytes", "gpus",
                             "speedup_vs_production", "speedup_vs_prior_art", "pareto"})
        QVERIFY2(prior[std::size_t(column(name))].empty(), name);
    // Plans have no speedup over the infeasible one, 50 % / 20 % over
    // production (3 s vs 2 s and 2.5 s).
    QCOMPARE(rows[1][std::size_t(column("speedup_vs_prior_art"))], std::string());
    QCOMPARE(toDouble(rows[1][std::size_t(column("speedup_vs_production"))]), 0.5);
    QCOMPARE(toDouble(rows[2][std::size_t(column("speedup_vs_production"))]), 3.0 / 2.5 - 1.0);
    QCOMPARE(production[std::size_t(column("feasible"))], std::string("true"));
    QCOMPARE(toDouble(production[std::size_t(column("tokens_per_s"))]), 64.0 * 4096 / 3.0);
    QCOMPARE(rows[1][std::size_t(column("pareto"))], std::string("true"));
}

void TestOptimizerCsv::paretoRowsOnRequest() {
    OptimizerResult r = syntheticResult("x");
    // A slower plan with no cross-building traffic: on the front, not in
    // the top.
    r.pareto.push_back(scored("no traffic", 4.0, 0, 7));
    QCOMPARE(paretoOnlyIndices(r), std::vector<std::size_t>{2});
    bool ok = false;
    QCOMPARE(parseCsv(optimizerCsv(r), &ok).size(), std::size_t(1 + 2 + 2));
    QVERIFY(ok);
    OptimizerCsvOptions o;
    o.pareto_rows = true;
    const auto rows = parseCsv(optimizerCsv(r, o), &ok);
    QVERIFY(ok);
    QCOMPARE(rows.size(), std::size_t(1 + 2 + 1 + 2));
    const Row& front = rows[3];
    QCOMPARE(front[std::size_t(column("kind"))], std::string("pareto"));
    QCOMPARE(front[std::size_t(column("rank"))], std::string());
    QCOMPARE(front[std::size_t(column("label"))], std::string("no traffic"));
    QCOMPARE(front[std::size_t(column("pareto"))], std::string("true"));
    QCOMPARE(toDouble(front[std::size_t(column("cross_building_bytes"))]), 0.0);
    QCOMPARE(toDouble(front[std::size_t(column("speedup_vs_production"))]), 3.0 / 4.0 - 1.0);
    QCOMPARE(rows[4][std::size_t(column("kind"))], std::string("baseline"));
}

QTEST_GUILESS_MAIN(TestOptimizerCsv)
#include "tst_optimizer_csv.moc"

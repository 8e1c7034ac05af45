// Sweep results as CSV: the columns `scaleacross sweep` prints, one row per
// point, RFC 4180 quoting that survives commas, quotes and line breaks in
// paths, names and error messages, and rows for points that failed. Every
// document is read back with an independent CSV reader.

#include "explore/sweep.h"
#include "export/sweep_csv.h"
#include "formats/documents.h"

#include "../common/csv_reader.h"
#include "../common/fixtures.h"

#include <QTest>

#include <cmath>
#include <string>
#include <vector>

using namespace sa;

namespace {

using Row = sa::testing::CsvRow;
using sa::testing::loadSampleScenario;
using sa::testing::readCsv;

std::vector<Row> parsed(const std::string& text) {
    bool ok = false;
    auto rows = readCsv(text, &ok);
    if (!ok)
        qWarning("malformed CSV:\n%s", text.c_str());
    return ok ? rows : std::vector<Row>{};
}

const Row kSweepColumns{
    "step_time_s",          "tokens_per_s", "mfu",          "peak_gib_per_gpu", "fits",
    "cross_building_bytes", "pp_exposed_s", "dp_exposed_s", "bubble_s",         "error"};

Evaluation fakeEvaluation(double step) {
    Evaluation e;
    e.step_time_s = step;
    e.tokens_per_s = 1.5e6;
    e.mfu = 0.4321;
    e.memory.peak_gib_per_gpu = 71.25;
    e.memory.fits = true;
    e.cross_building_bytes = 3.2e12;
    e.breakdown.pp_exposed_s = 0.25;
    e.breakdown.dp_exposed_s = 0.5;
    e.breakdown.bubble_s = 1.125;
    return e;
}

} // namespace

class TestSweepCsv : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fieldQuoting_data();
    void fieldQuoting();
    void readerRejectsMalformed();
    void columnsAndRows_data();
    void columnsAndRows();
    void errorRowsKeepValuesAndQuoteTheReason();
    void axisPathsWithCommasAreQuoted();
    void realSweepWithFailingPoints();
    void curvesColumnsRowsAndQuoting();
    void emptyInputsGiveHeaderOnly();
};

void TestSweepCsv::fieldQuoting_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("always");
    QTest::addColumn<QString>("expected");
    QTest::newRow("plain") << "abc" << false << "abc";
    QTest::newRow("plain forced") << "abc" << true << "\"abc\"";
    QTest::newRow("empty") << "" << false << "";
    QTest::newRow("empty forced") << "" << true << "\"\"";
    QTest::newRow("comma") << "a,b" << false << "\"a,b\"";
    QTest::newRow("quote") << "say \"hi\"" << false << "\"say \"\"hi\"\"\"";
    QTest::newRow("newline") << "a\nb" << false << "\"a\nb\"";
    QTest::newRow("carriage return") << "a\rb" << false << "\"a\rb\"";
    QTest::newRow("spaces stay") << " a b " << false << " a b ";
}

void TestSweepCsv::fieldQuoting() {
    QFETCH(QString, text);
    QFETCH(bool, always);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(csvField(text.toStdString(), always)), expected);
}

void TestSweepCsv::readerRejectsMalformed() {
    // The reader below the other tests must itself be able to say no.
    bool ok = true;
    readCsv("a,\"b\n", &ok);
    QVERIFY(!ok);
    readCsv("a,b\"c\"\n", &ok);
    QVERIFY(!ok);
    readCsv("a,b", &ok);
    QVERIFY(!ok);
    const auto rows = readCsv("a,\"b,\"\"c\"\"\n d\"\n", &ok);
    QVERIFY(ok);
    QCOMPARE(rows.size(), std::size_t(1));
    QCOMPARE(rows[0], (Row{"a", "b,\"c\"\n d"}));
}

void TestSweepCsv::columnsAndRows_data() {
    QTest::addColumn<int>("axisCount");
    QTest::addColumn<int>("pointCount");
    QTest::newRow("one axis, one point") << 1 << 1;
    QTest::newRow("one axis, 15 points") << 1 << 15;
    QTest::newRow("two axes, 12 points") << 2 << 12;
}

void TestSweepCsv::columnsAndRows() {
    QFETCH(int, axisCount);
    QFETCH(int, pointCount);
    std::vector<SweepAxis> axes;
    for (int a = 0; a < axisCount; ++a)
        axes.push_back({"links.B1-B" + std::to_string(a + 2) + ".bandwidth_gbps", {}});
    std::vector<SweepPoint> points;
    for (int i = 0; i < pointCount; ++i) {
        SweepPoint p;
        for (int a = 0; a < axisCount; ++a)
            p.values.push_back(100.0 * (i + 1) + a);
        p.evaluation = fakeEvaluation(10.0 + i);
        points.push_back(p);
    }
    const auto rows = parsed(sweepCsv(axes, points));
    QCOMPARE(rows.size(), std::size_t(pointCount + 1));
    Row header;
    for (const auto& a : axes)
        header.push_back(a.path);
    header.insert(header.end(), kSweepColumns.begin(), kSweepColumns.end());
    QCOMPARE(rows[0], header);
    for (int i = 0; i < pointCount; ++i) {
        const Row& r = rows[std::size_t(i + 1)];
        QCOMPARE(r.size(), header.size());
        for (int a = 0; a < axisCount; ++a)
            QCOMPARE(std::stod(r[std::size_t(a)]), 100.0 * (i + 1) + a);
        const std::size_t c = std::size_t(axisCount);
        QCOMPARE(std::stod(r[c + 0]), 10.0 + i);
        QCOMPARE(std::stod(r[c + 1]), 1.5e6);
        QCOMPARE(r[c + 2], std::string("0.43210"));
        QCOMPARE(r[c + 3], std::string("71.250"));
        QCOMPARE(r[c + 4], std::string("true"));
        QCOMPARE(std::stod(r[c + 5]), 3.2e12);
        QCOMPARE(std::stod(r[c + 6]), 0.25);
        QCOMPARE(std::stod(r[c + 7]), 0.5);
        QCOMPARE(std::stod(r[c + 8]), 1.125);
        QCOMPARE(r[c + 9], std::string());
    }
}

void TestSweepCsv::errorRowsKeepValuesAndQuoteTheReason() {
    const std::vector<SweepAxis> axes{{"plan.parallelism.pp", {}}};
    SweepPoint good;
    good.values = {16};
    good.evaluation = fakeEvaluation(9);
    good.evaluation->memory.fits = false;
    SweepPoint bad;
    bad.values = {3};
    bad.error = "plan: /parallelism/pp: 126 layers do not split into 3 \"even\" stages, sorry\n"
                "second line";
    const std::string text = sweepCsv(axes, {good, bad});
    const auto rows = parsed(text);
    QCOMPARE(rows.size(), std::size_t(3));
    QCOMPARE(rows[1].size(), rows[0].size());
    QCOMPARE(rows[1][5], std::string("false"));
    QCOMPARE(rows[2].size(), rows[0].size());
    QCOMPARE(rows[2][0], std::string("3"));
    for (std::size_t c = 1; c + 1 < rows[2].size(); ++c)
        QVERIFY2(rows[2][c].empty(), rows[2][c].c_str());
    QCOMPARE(rows[2].back(), bad.error);
    // The error column is quoted even when it needs no quoting (as the CLI
    // has always written it).
    SweepPoint plain;
    plain.values = {5};
    plain.error = "no";
    QVERIFY(sweepCsv(axes, {plain}).find(",,,,,,,,,\"no\"\n") != std::string::npos);
}

void TestSweepCsv::axisPathsWithCommasAreQuoted() {
    const std::vector<SweepAxis> axes{{"links.a,b.latency_ms", {}}};
    SweepPoint p;
    p.values = {0.5};
    p.evaluation = fakeEvaluation(1);
    const auto rows = parsed(sweepCsv(axes, {p}));
    QCOMPARE(rows.size(), std::size_t(2));
    QCOMPARE(rows[0].front(), std::string("links.a,b.latency_ms"));
    QCOMPARE(rows[0].size(), rows[1].size());
}

void TestSweepCsv::realSweepWithFailingPoints() {
    // pp that does not divide the GPUs or the layers fails; the rest are
    // evaluated. The CSV keeps one row per point, in order.
    const Scenario s = loadSampleScenario("two-buildings-405b.json");
    std::string err;
    auto axis = parseSweepAxis("plan.parallelism.pp=16,5,0,16", &err);
    QVERIFY2(axis.has_value(), err.c_str());
    const auto points = runSweep(s, {*axis});
    QCOMPARE(points.size(), std::size_t(4));
    const auto rows = parsed(sweepCsv({*axis}, points));
    QCOMPARE(rows.size(), std::size_t(5));
    int failed = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const Row& r = rows[i + 1];
        QCOMPARE(r.size(), rows[0].size());
        QCOMPARE(std::stod(r[0]), points[i].values[0]);
        if (points[i].evaluation) {
            QVERIFY(r.back().empty());
            const double step = points[i].evaluation->step_time_s;
            QVERIFY(std::fabs(std::stod(r[1]) - step) <= 1e-5 * step);
        } else {
            ++failed;
            QVERIFY(!r.back().empty());
            QCOMPARE(r.back(), points[i].error);
            QVERIFY(r[1].empty());
        }
    }
    QVERIFY(points[0].evaluation && points[3].evaluation);
    QCOMPARE(failed, 2);
}

void TestSweepCsv::curvesColumnsRowsAndQuoting() {
    SweepSeries a;
    a.name = "Current plan";
    a.x = {100, 1000, 10000};
    a.step_time_s = {12.5, std::nan(""), 10.25};
    a.errors = {"", "links.B1-B2: bandwidth must be > 0, got \"0\"", ""};
    SweepSeries b;
    b.name = "Prior art (Atlas, CrossPipe)";
    b.x = {100, 1000, 10000};
    b.step_time_s = {13, 12, 11};
    b.errors = {"", "", ""};
    const auto rows = parsed(sweepSeriesCsv("links.B1-B2.bandwidth_gbps", {a, b}));
    QCOMPARE(rows.size(), std::size_t(7));
    QCOMPARE(rows[0], (Row{"series", "links.B1-B2.bandwidth_gbps", "step_time_s", "error"}));
    for (const Row& r : rows)
        QCOMPARE(r.size(), std::size_t(4));
    QCOMPARE(rows[1], (Row{"Current plan", "100", "12.5", ""}));
    QCOMPARE(rows[2], (Row{"Current plan", "1000", "", a.errors[1]}));
    QCOMPARE(rows[3], (Row{"Current plan", "10000", "10.25", ""}));
    QCOMPARE(rows[4][0], b.name);
    QCOMPARE(std::stod(rows[6][2]), 11.0);
}

void TestSweepCsv::emptyInputsGiveHeaderOnly() {
    QCOMPARE(parsed(sweepCsv({{"x", {}}}, {})).size(), std::size_t(1));
    QCOMPARE(sweepSeriesCsv("x", {}), std::string("series,x,step_time_s,error\n"));
    SweepSeries empty;
    empty.name = "nothing";
    QCOMPARE(parsed(sweepSeriesCsv("x", {empty})).size(), std::size_t(1));
}

QTEST_GUILESS_MAIN(TestSweepCsv)
#include "tst_sweep_csv.moc"

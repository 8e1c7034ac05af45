// The explorer's charts show the numbers of the evaluation they were given:
// every stacked segment of the step-time breakdown is the breakdown field it
// stands for, memory bars are the per-stage peaks against each stage's own
// GPU memory, stages over it are flagged; the sweep chart draws step time
// against a link's bandwidth for the plan and its baselines, leaves out (and
// counts) points that cannot be evaluated (the series themselves:
// tests/core/tst_sweepseries.cpp). Offscreen; with
// SCALEACROSS_CHART_SHOTS set, the rendered charts are saved there as PNGs.

#include "breakdownchart.h"
#include "memorychart.h"
#include "sweepchart.h"

#include "cost/evaluate.h"
#include "formats/documents.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QDir>
#include <QFontMetricsF>
#include <QHorizontalStackedBarSeries>
#include <QImage>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QSet>
#include <QStackedBarSeries>
#include <QTest>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace sa;
using namespace sa::views;

namespace {

Scenario sample(const QString& name) {
    const QString path =
        QStringLiteral(SCALEACROSS_SOURCE_DIR "/sample_clusters/scenarios/") + name;
    const auto loaded = loadScenarioFile(path.toStdString());
    if (!loaded.ok())
        qFatal("cannot load %s", qPrintable(path));
    return *loaded.value;
}

std::shared_ptr<const Evaluation> evaluated(const Scenario& s) {
    auto r = evaluate(s);
    if (auto* e = std::get_if<EvaluationError>(&r))
        qFatal("evaluation failed: %s", e->str().c_str());
    return std::make_shared<const Evaluation>(std::get<Evaluation>(std::move(r)));
}

// The same cluster and model with PP across the buildings instead of DP.
Scenario ppAcross(Scenario s) {
    s.plan.rank_order = {Dim::TP, Dim::CP, Dim::DP, Dim::PP};
    s.plan.placement.reset();
    return s;
}

// Legend entries shown with `label` (marker visibility settles once
// events are processed).
int legendEntries(QChart* chart, const QString& label) {
    QCoreApplication::processEvents();
    int n = 0;
    for (QLegendMarker* m : chart->legend()->markers())
        n += m->isVisible() && m->label() == label ? 1 : 0;
    return n;
}

bool legendShows(QChart* chart, const QString& label) {
    return legendEntries(chart, label) > 0;
}

// Distinct colours in the middle of an image: a chart that drew nothing is
// one or two colours.
int distinctColours(const QImage& image) {
    QSet<QRgb> colours;
    for (int y = image.height() / 8; y < image.height() * 7 / 8; y += 3)
        for (int x = image.width() / 8; x < image.width() * 7 / 8; x += 3)
            colours.insert(image.pixel(x, y));
    return int(colours.size());
}

void saveShot(QWidget* w, const QString& name) {
    QCoreApplication::processEvents();
    const QImage image = w->grab().toImage();
    QVERIFY2(distinctColours(image) > 8, qPrintable(name + QStringLiteral(" is blank")));
    const QString dir = qEnvironmentVariable("SCALEACROSS_CHART_SHOTS");
    if (!dir.isEmpty()) {
        QDir().mkpath(dir);
        QVERIFY(image.save(QDir(dir).filePath(name + QStringLiteral(".png"))));
    }
}

} // namespace

class TestCharts : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void breakdownMatchesEvaluation_data();
    void breakdownMatchesEvaluation();
    void breakdownComparesPinned();
    void breakdownClear();
    void memoryMatchesEvaluation_data();
    void memoryMatchesEvaluation();
    void memoryCapacityPerStageGpu();
    void memoryAxisLegibleWhenShort();
    void memoryFlagsStagesOverCapacity();
    void memoryFlagsOneStage();
    void sweepableLinkParameters();
    void sweepChartDrawsEveryPoint();
    void sweepChartCountsPointsAndErrors();
    void sweepChartWithBaselines();
    void shots();
};

void TestCharts::breakdownMatchesEvaluation_data() {
    QTest::addColumn<QString>("scenario");
    for (const char* name :
         {"two-buildings-405b.json", "three-buildings-405b.json", "hetero-70b.json",
          "two-buildings-mixtral.json", "single-building-70b.json"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestCharts::breakdownMatchesEvaluation() {
    QFETCH(QString, scenario);
    const auto e = evaluated(sample(scenario));
    const Breakdown& b = e->breakdown;
    BreakdownChart chart;
    chart.setEvaluation(e);
    QVERIFY(chart.message().isEmpty());
    QCOMPARE(chart.barCount(), 1);
    QCOMPARE(chart.series()->count(), int(BreakdownChart::CategoryCount));
    const std::pair<BreakdownChart::Category, double> expected[] = {
        {BreakdownChart::Compute, b.compute_s}, {BreakdownChart::Tp, b.tp_exposed_s},
        {BreakdownChart::Cp, b.cp_exposed_s},   {BreakdownChart::Ep, b.ep_exposed_s},
        {BreakdownChart::Pp, b.pp_exposed_s},   {BreakdownChart::Dp, b.dp_exposed_s},
        {BreakdownChart::Bubble, b.bubble_s},   {BreakdownChart::Optimizer, b.optimizer_s},
    };
    double total = 0;
    for (const auto& [category, value] : expected) {
        QBarSet* set = chart.set(category);
        QVERIFY(set);
        QCOMPARE(set, chart.series()->barSets().at(category));
        QCOMPARE(set->label(), BreakdownChart::categoryName(category));
        QCOMPARE(set->count(), 1);
        QCOMPARE(set->at(0), value);
        // A category no bar uses stays out of the legend; the others are in it.
        QCOMPARE(legendShows(chart.chart(), set->label()), value > 0);
        total += value;
    }
    QVERIFY(b.compute_s > 0);
    // The bar fits on the axis and the axis says its unit.
    QVERIFY(chart.timeAxis()->min() == 0);
    QVERIFY(chart.timeAxis()->max() >= total);
    QVERIFY(chart.timeAxis()->titleText().contains(QStringLiteral("(s)")));
    QCOMPARE(chart.barAxis()->count(), 1);
    QVERIFY(chart.barAxis()->at(0).startsWith(QStringLiteral("Current")));
}

void TestCharts::breakdownComparesPinned() {
    const Scenario base = sample(QStringLiteral("two-buildings-405b.json"));
    const auto current = evaluated(base);
    const auto pinned = evaluated(ppAcross(base));
    QVERIFY(current->breakdown.dp_exposed_s != pinned->breakdown.dp_exposed_s ||
            current->breakdown.pp_exposed_s != pinned->breakdown.pp_exposed_s);
    BreakdownChart chart;
    chart.setEvaluation(current, pinned, QStringLiteral("DP across"), QStringLiteral("PP across"));
    QCOMPARE(chart.barCount(), 2);
    QCOMPARE(chart.barAxis()->count(), 2);
    QVERIFY(chart.barAxis()->at(0).startsWith(QStringLiteral("DP across")));
    QVERIFY(chart.barAxis()->at(1).startsWith(QStringLiteral("PP across")));
    for (const auto* e : {current.get(), pinned.get()}) {
        const int bar = e == current.get() ? 0 : 1;
        QCOMPARE(chart.set(BreakdownChart::Compute)->at(bar), e->breakdown.compute_s);
        QCOMPARE(chart.set(BreakdownChart::Tp)->at(bar), e->breakdown.tp_exposed_s);
        QCOMPARE(chart.set(BreakdownChart::Cp)->at(bar), e->breakdown.cp_exposed_s);
        QCOMPARE(chart.set(BreakdownChart::Ep)->at(bar), e->breakdown.ep_exposed_s);
        QCOMPARE(chart.set(BreakdownChart::Pp)->at(bar), e->breakdown.pp_exposed_s);
        QCOMPARE(chart.set(BreakdownChart::Dp)->at(bar), e->breakdown.dp_exposed_s);
        QCOMPARE(chart.set(BreakdownChart::Bubble)->at(bar), e->breakdown.bubble_s);
        QCOMPARE(chart.set(BreakdownChart::Optimizer)->at(bar), e->breakdown.optimizer_s);
    }
    QVERIFY(chart.chart()->title().contains(QStringLiteral("PP across")));
    // Back to one bar: the pinned values are gone.
    chart.setEvaluation(pinned);
    QCOMPARE(chart.set(BreakdownChart::Compute)->count(), 1);
    QCOMPARE(chart.set(BreakdownChart::Compute)->at(0), pinned->breakdown.compute_s);
}

void TestCharts::breakdownClear() {
    BreakdownChart chart;
    QVERIFY(!chart.message().isEmpty()); // empty until given an evaluation
    chart.setEvaluation(evaluated(sample(QStringLiteral("single-building-70b.json"))));
    QVERIFY(chart.message().isEmpty());
    chart.clear(QStringLiteral("The plan cannot be evaluated"));
    QCOMPARE(chart.message(), QStringLiteral("The plan cannot be evaluated"));
    QCOMPARE(chart.chart()->title(), QStringLiteral("The plan cannot be evaluated"));
    QCOMPARE(chart.barCount(), 0);
    for (QBarSet* set : chart.series()->barSets())
        QCOMPARE(set->count(), 0);
    chart.setEvaluation(nullptr);
    QVERIFY(!chart.message().isEmpty());
}

void TestCharts::memoryMatchesEvaluation_data() {
    breakdownMatchesEvaluation_data();
}

void TestCharts::memoryMatchesEvaluation() {
    QFETCH(QString, scenario);
    const auto e = evaluated(sample(scenario));
    const MemoryUsage& m = e->memory;
    QVERIFY(!m.per_stage_peak_gib.empty());
    MemoryChart chart;
    chart.setEvaluation(e);
    QVERIFY(chart.message().isEmpty());
    const int n = int(m.per_stage_peak_gib.size());
    QCOMPARE(chart.stageCount(), n);
    QCOMPARE(chart.fitsSet()->count(), n);
    QCOMPARE(chart.overSet()->count(), n);
    QCOMPARE(chart.capacitySeries()->count(), 2 * n);
    for (int s = 0; s < n; ++s) {
        const double peak = m.per_stage_peak_gib[std::size_t(s)];
        const double cap = m.per_stage_capacity_gib[std::size_t(s)];
        QCOMPARE(chart.peakAt(s), peak);
        QCOMPARE(chart.capacityAt(s), cap);
        // The limit spans the stage's bar on both sides.
        QCOMPARE(chart.capacitySeries()->at(2 * s + 1).y(), cap);
        QVERIFY(chart.capacitySeries()->at(2 * s).x() < s);
        QVERIFY(chart.capacitySeries()->at(2 * s + 1).x() > s);
        QCOMPARE(chart.overSet()->at(s), peak > cap ? peak : 0.0);
        QCOMPARE(chart.fitsSet()->at(s), peak > cap ? 0.0 : peak);
    }
    QVERIFY(chart.memoryAxis()->max() >=
            *std::max_element(m.per_stage_peak_gib.begin(), m.per_stage_peak_gib.end()));
    QVERIFY(chart.memoryAxis()->titleText().contains(QStringLiteral("GiB")));
    QVERIFY2(chart.chart()->title().contains(QStringLiteral("stage %1").arg(m.worst_stage)),
             qPrintable(chart.chart()->title()));
    QCOMPARE(legendShows(chart.chart(), chart.overSet()->label()), !m.fits);
    chart.clear(QStringLiteral("nothing"));
    QCOMPARE(chart.stageCount(), 0);
    QCOMPARE(chart.capacitySeries()->count(), 0);
}

void TestCharts::memoryCapacityPerStageGpu() {
    // hetero-pair: an H100 (80 GiB) and a B200 (180 GiB) building with PP
    // across them, so the limit differs between stages.
    const auto e = evaluated(sample(QStringLiteral("hetero-70b.json")));
    MemoryChart chart;
    chart.setEvaluation(e, {QStringLiteral("H1"), QStringLiteral("B1")});
    bool saw80 = false, saw180 = false;
    for (int s = 0; s < chart.stageCount(); ++s) {
        saw80 = saw80 || chart.capacityAt(s) == 80;
        saw180 = saw180 || chart.capacityAt(s) == 180;
    }
    QVERIFY(saw80);
    QVERIFY(saw180);
}

void TestCharts::memoryAxisLegibleWhenShort() {
    // A low charts dock (about 100 px of plot at 1920 x 1080) crowded nine
    // labels onto the memory axis and Qt drew each as "...": the axis keeps
    // two label lines per interval, and takes more intervals when it grows.
    const auto e = evaluated(sample(QStringLiteral("hetero-70b.json")));
    MemoryChart chart;
    chart.resize(900, 230);
    chart.setEvaluation(e);
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    QCoreApplication::processEvents();
    const double line = QFontMetricsF(chart.memoryAxis()->labelsFont()).height();
    const auto intervals = [&] { return chart.memoryAxis()->tickCount() - 1; };
    const auto height = [&] { return chart.chart()->plotArea().height(); };
    QVERIFY2(intervals() >= 1 && intervals() * 2 * line <= height() + 1e-9,
             qPrintable(QStringLiteral("%1 intervals in %2 px").arg(intervals()).arg(height())));
    const int shortIntervals = intervals();
    QVERIFY(chart.memoryAxis()->max() >= 180); // the B200's capacity stays on the axis
    chart.resize(900, 700);
    QTRY_VERIFY2(
        intervals() > shortIntervals,
        qPrintable(QStringLiteral("%1 intervals in %2 px").arg(intervals()).arg(height())));
    QVERIFY(intervals() <= 8 && intervals() * 2 * line <= height() + 1e-9);
    QVERIFY(chart.memoryAxis()->max() >= 180);
}

void TestCharts::memoryFlagsStagesOverCapacity() {
    // No recompute, no ZeRO and four sequences per micro batch: Llama 3 405B
    // no longer fits on 80 GiB.
    Scenario s = sample(QStringLiteral("two-buildings-405b.json"));
    s.plan.recompute = Recompute::None;
    s.plan.zero_stage = 0;
    s.plan.micro_batch_sequences = 4;
    const auto e = evaluated(s);
    QVERIFY(!e->memory.fits);
    MemoryChart chart;
    chart.setEvaluation(e);
    int over = 0;
    for (int st = 0; st < chart.stageCount(); ++st) {
        const bool isOver = e->memory.per_stage_peak_gib[std::size_t(st)] >
                            e->memory.per_stage_capacity_gib[std::size_t(st)];
        QCOMPARE(chart.overSet()->at(st) > 0, isOver);
        QCOMPARE(chart.fitsSet()->at(st) > 0, !isOver);
        over += isOver ? 1 : 0;
    }
    QVERIFY(over > 0);
    QVERIFY(chart.overSet()->color() != chart.fitsSet()->color());
    QVERIFY(legendShows(chart.chart(), chart.overSet()->label()));
    QVERIFY2(chart.chart()->title().startsWith(QStringLiteral("Does not fit")),
             qPrintable(chart.chart()->title()));
    QVERIFY(chart.chart()->title().contains(QStringLiteral("%1 of").arg(over)));
}

void TestCharts::memoryFlagsOneStage() {
    // One stage pushed just over its limit: exactly that stage is flagged.
    auto e = std::make_shared<Evaluation>(*evaluated(sample(QStringLiteral("hetero-70b.json"))));
    QVERIFY(e->memory.fits);
    const std::size_t k = 2;
    QVERIFY(e->memory.per_stage_peak_gib.size() > k);
    e->memory.per_stage_peak_gib[k] = e->memory.per_stage_capacity_gib[k] + 0.5;
    e->memory.fits = false;
    e->memory.worst_stage = int(k);
    MemoryChart chart;
    chart.setEvaluation(e);
    for (int st = 0; st < chart.stageCount(); ++st) {
        QCOMPARE(chart.overSet()->at(st) > 0, st == int(k));
        QCOMPARE(chart.fitsSet()->at(st) > 0, st != int(k));
    }
    QCOMPARE(chart.overSet()->at(int(k)), e->memory.per_stage_capacity_gib[k] + 0.5);
    QVERIFY(chart.chart()->title().contains(QStringLiteral("stage 2")));
}

void TestCharts::sweepableLinkParameters() {
    const Scenario s = sample(QStringLiteral("three-buildings-405b.json"));
    const auto params = views::sweepableLinkParameters(s.cluster, 15);
    QCOMPARE(params.size(), 2 * s.cluster.links.size());
    for (std::size_t i = 0; i < s.cluster.links.size(); ++i) {
        const Link& l = s.cluster.links[i];
        const SweepParameter& bw = params[2 * i];
        const SweepParameter& lat = params[2 * i + 1];
        QCOMPARE(bw.path, "links." + l.name + ".bandwidth_gbps");
        QCOMPARE(lat.path, "links." + l.name + ".latency_ms");
        QVERIFY(bw.logX);
        QVERIFY(!lat.logX);
        // The links here carry 24 and 51.2 Tbit/s: the range starts at 1
        // Tbit/s or more and is shown in Tbit/s (10, 100 on the log axis,
        // where Gbit/s read 10000, 100000). The values stay in the path's
        // Gbit/s.
        QVERIFY(l.bandwidth_gbps / 10 >= 1000);
        QVERIFY2(bw.axisTitle.endsWith(QStringLiteral("bandwidth (Tbit/s)")),
                 qPrintable(bw.axisTitle));
        QCOMPARE(bw.displayScale, 1e-3);
        QVERIFY(lat.axisTitle.contains(QStringLiteral("(ms)")));
        QCOMPARE(lat.displayScale, 1.0);
        QCOMPARE(bw.current, l.bandwidth_gbps);
        QCOMPARE(bw.values.size(), std::size_t(15));
        QCOMPARE(lat.values.size(), std::size_t(15));
        QCOMPARE(bw.values.front(), l.bandwidth_gbps / 10);
        QCOMPARE(bw.values.back(), l.bandwidth_gbps * 10);
        QCOMPARE(bw.values[7], l.bandwidth_gbps);
        // Evenly spaced on a log scale.
        for (std::size_t j = 1; j + 1 < bw.values.size(); ++j)
            QCOMPARE(bw.values[j] / bw.values[j - 1], bw.values[j + 1] / bw.values[j]);
        QCOMPARE(lat.values.front(), 0.0);
        QCOMPARE(lat.values.back(), 10 * l.latency_ms);
        QVERIFY(std::is_sorted(lat.values.begin(), lat.values.end()));
    }
    // A link under 10 Tbit/s keeps Gbit/s.
    Cluster thin = s.cluster;
    thin.links.front().bandwidth_gbps = 400;
    const SweepParameter slow = views::sweepableLinkParameters(thin, 15).front();
    QVERIFY2(slow.axisTitle.endsWith(QStringLiteral("bandwidth (Gbit/s)")),
             qPrintable(slow.axisTitle));
    QCOMPARE(slow.displayScale, 1.0);
}

void TestCharts::sweepChartDrawsEveryPoint() {
    // The series themselves are checked in tests/core/tst_sweepseries.cpp;
    // here the chart draws each of their points where it belongs.
    const Scenario s = sample(QStringLiteral("two-buildings-405b.json"));
    const auto params = views::sweepableLinkParameters(s.cluster, 9);
    const SweepParameter& bw = params.front();
    std::vector<double> values = bw.values;
    values.insert(values.begin(), {10, 100}); // deep into network-bound territory
    const auto series = computeSweepSeries(s, bw.path, values, false);
    QCOMPARE(series.size(), std::size_t(1));
    const SweepSeries& cur = series.front();
    QCOMPARE(cur.evaluatedCount(), int(values.size()));
    // At 10 Gbit/s the step is much slower than as built: the y axis spans both.
    QVERIFY(cur.step_time_s.front() > 1.5 * cur.step_time_s.back());

    SweepChart chart;
    chart.setSeries(bw.axisTitle, true, series, bw.current, bw.displayScale);
    QCOMPARE(chart.plottedPoints(), int(values.size()));
    QCOMPARE(chart.skippedPoints(), 0);
    QCOMPARE(chart.segments(0).size(), 1);
    QLineSeries* line = chart.segments(0).front();
    QCOMPARE(line->count(), int(values.size()));
    // Drawn in the axis title's unit (Tbit/s for this link).
    QVERIFY(bw.displayScale < 1);
    for (int i = 0; i < line->count(); ++i) {
        QCOMPARE(line->at(i).x(), values[std::size_t(i)] * bw.displayScale);
        QCOMPARE(line->at(i).y(), cur.step_time_s[std::size_t(i)]);
    }
    QCOMPARE(chart.xAxis()->property("min").toDouble(), values.front() * bw.displayScale);
    QCOMPARE(chart.xAxis()->property("max").toDouble(), values.back() * bw.displayScale);
    QVERIFY(qobject_cast<QLogValueAxis*>(chart.xAxis()));
    QCOMPARE(chart.xAxis()->titleText(), bw.axisTitle);
    QVERIFY(chart.yAxis()->titleText().contains(QStringLiteral("(s)")));
    QVERIFY(chart.yAxis()->min() <= cur.step_time_s.back());
    QVERIFY(chart.yAxis()->max() >= cur.step_time_s.front());
    QVERIFY(chart.currentMarker());
    QCOMPARE(chart.currentMarker()->at(0).x(), bw.current * bw.displayScale);
    QVERIFY(chart.note().startsWith(QStringLiteral("All 11 points")));
}

void TestCharts::sweepChartCountsPointsAndErrors() {
    // Bandwidth must be positive: 0 and -5 cannot be evaluated and break the
    // line into two pieces.
    const Scenario s = sample(QStringLiteral("two-buildings-405b.json"));
    const std::string path = "links.B1-B2.bandwidth_gbps";
    const std::vector<double> values{1000, 5000, 0, -5, 20000, 51200, 100000};
    const auto series = computeSweepSeries(s, path, values, false);
    QCOMPARE(series.size(), std::size_t(1));
    const SweepSeries& cur = series.front();
    QCOMPARE(cur.errorCount(), 2);

    SweepChart chart;
    chart.setSeries(QStringLiteral("B1-B2 bandwidth (Gbit/s)"), false, series);
    QCOMPARE(chart.plottedPoints(), 5);
    QCOMPARE(chart.skippedPoints(), 2);
    const auto lines = chart.segments(0);
    QCOMPARE(lines.size(), 2);
    QCOMPARE(lines[0]->count(), 2);
    QCOMPARE(lines[1]->count(), 3);
    QCOMPARE(lines[1]->at(0).x(), 20000.0);
    QVERIFY(qobject_cast<QValueAxis*>(chart.xAxis()));
    // One legend entry for the broken line.
    QCOMPARE(legendEntries(chart.chart(), QString::fromStdString(currentPlanSeriesName())), 1);
    QVERIFY2(chart.note().startsWith(QStringLiteral("2 of 7 points could not be evaluated")),
             qPrintable(chart.note()));
    QVERIFY(chart.note().contains(QString::fromStdString(cur.errors[2]).left(40)));
    QVERIFY(!chart.currentMarker());

    chart.clear(QStringLiteral("Sweeping..."));
    QCOMPARE(chart.plottedPoints(), 0);
    QVERIFY(chart.data().empty());
    QCOMPARE(chart.chart()->title(), QStringLiteral("Sweeping..."));
}

void TestCharts::sweepChartWithBaselines() {
    const Scenario s = sample(QStringLiteral("two-buildings-405b.json"));
    const std::vector<double> values{5120, 51200, 512000};
    const auto series = computeSweepSeries(s, "links.B1-B2.bandwidth_gbps", values, true);
    QCOMPARE(series.size(), std::size_t(3));
    for (const SweepSeries& x : series)
        QVERIFY2(x.evaluatedCount() == int(values.size()), x.name.c_str());

    SweepChart chart;
    chart.setSeries(QStringLiteral("B1-B2 bandwidth (Gbit/s)"), true, series);
    QCOMPARE(chart.plottedPoints(), 9);
    for (int k = 0; k < 3; ++k) {
        QCOMPARE(chart.segments(k).size(), 1);
        QCOMPARE(chart.segments(k).front()->color(), SweepChart::seriesColor(k));
    }
    QVERIFY(SweepChart::seriesColor(0) != SweepChart::seriesColor(1));
    // One legend entry per series, under its name.
    for (const SweepSeries& x : series) {
        QVERIFY(x.fits_in_memory);
        QCOMPARE(legendEntries(chart.chart(), QString::fromStdString(x.name)), 1);
    }
}

void TestCharts::shots() {
    const Scenario s = sample(QStringLiteral("two-buildings-405b.json"));
    const auto current = evaluated(s);
    const auto pinned = evaluated(ppAcross(s));
    BreakdownChart breakdown;
    breakdown.resize(900, 400);
    breakdown.setEvaluation(current, pinned, QStringLiteral("DP across"),
                            QStringLiteral("PP across"));
    saveShot(&breakdown, QStringLiteral("breakdown"));

    const Scenario hetero = sample(QStringLiteral("hetero-70b.json"));
    QStringList names;
    for (const auto& b : hetero.cluster.buildings)
        names << QString::fromStdString(b.name);
    MemoryChart memory;
    memory.resize(900, 400);
    memory.setEvaluation(evaluated(hetero), names);
    saveShot(&memory, QStringLiteral("memory-hetero"));

    Scenario big = s;
    big.plan.recompute = Recompute::None;
    big.plan.zero_stage = 0;
    big.plan.micro_batch_sequences = 4;
    memory.setEvaluation(evaluated(big));
    saveShot(&memory, QStringLiteral("memory-over"));

    const auto params = views::sweepableLinkParameters(s.cluster, 15);
    SweepChart sweep;
    sweep.resize(900, 400);
    std::vector<double> values = params[0].values;
    values.insert(values.begin() + 3, 0); // one point that cannot be evaluated
    sweep.setSeries(params[0].axisTitle, params[0].logX,
                    computeSweepSeries(s, params[0].path, values, true), params[0].current);
    saveShot(&sweep, QStringLiteral("sweep-bandwidth"));
    sweep.setSeries(params[1].axisTitle, params[1].logX,
                    computeSweepSeries(s, params[1].path, params[1].values, true),
                    params[1].current);
    saveShot(&sweep, QStringLiteral("sweep-latency"));
}

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"

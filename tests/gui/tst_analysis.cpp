// The analysis docks of the main window: the timeline, the charts and the
// compare panel follow the evaluation shown; pinning puts a plan beside
// the current one; every export writes a file that parses.

#include "breakdownchart.h"
#include "comparepanel.h"
#include "document.h"
#include "liveevaluation.h"
#include "mainwindow.h"
#include "memorychart.h"
#include "sweeppanel.h"
#include "timelinepane.h"
#include "timelineview.h"
#include "units.h"

#include "formats/documents.h"
#include "frameworks/framework.h"

#include "../common/files.h"
#include "../common/mainwindow_wait.h"
#include "../common/samples.h"

#include <QBarSet>
#include <QFile>
#include <QHorizontalStackedBarSeries>
#include <QImage>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <QXmlStreamReader>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

using namespace sa;
using namespace sa::views;
using sa::testing::readAll;
using sa::testing::sampleScenario;

namespace {

bool isWellFormedXml(const QByteArray& bytes) {
    QXmlStreamReader xml(bytes);
    while (!xml.atEnd())
        xml.readNext();
    return !xml.hasError();
}

} // namespace

class TestAnalysis : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void viewsFollowTheEvaluation();
    void pinAndCompare();
    void exportsParse();
    void sweepRunsAndExportsCsv();
    void frameworkExportImportRoundTrips();

private:
    bool waitForEvaluation(int ms = 15000);
    std::unique_ptr<MainWindow> window_;
};

void TestAnalysis::initTestCase() {
    Q_INIT_RESOURCE(resources);
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ScaleAcrossTests"));
}

void TestAnalysis::init() {
    window_ = std::make_unique<MainWindow>();
    window_->resize(1500, 1000);
    QVERIFY(window_->openSample(sampleScenario("three-buildings-405b-pp-across.json")));
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QVERIFY(waitForEvaluation());
}

void TestAnalysis::cleanup() {
    if (window_)
        window_->document()->undoStack()->setClean();
    window_.reset();
}

bool TestAnalysis::waitForEvaluation(int ms) {
    return sa::testing::waitForShownEvaluation(*window_, ms);
}

void TestAnalysis::viewsFollowTheEvaluation() {
    auto shown = window_->shownSnapshot();
    QVERIFY(shown->evaluation);
    const Evaluation& ev = *shown->evaluation;
    TimelineView* timeline = window_->timelinePane()->current();
    QCOMPARE(timeline->evaluation(), shown->evaluation);
    QCOMPARE(timeline->rowCount(), ev.timeline.stages * ev.timeline.chunks);
    QVERIFY(!window_->timelinePane()->isComparing());

    // The breakdown bar is the evaluation's breakdown, part by part.
    BreakdownChart* chart = window_->breakdownChart();
    QCOMPARE(chart->barCount(), 1);
    QCOMPARE(chart->set(BreakdownChart::Compute)->at(0), ev.breakdown.compute_s);
    QCOMPARE(chart->set(BreakdownChart::Pp)->at(0), ev.breakdown.pp_exposed_s);
    QCOMPARE(chart->set(BreakdownChart::Dp)->at(0), ev.breakdown.dp_exposed_s);
    QCOMPARE(chart->set(BreakdownChart::Bubble)->at(0), ev.breakdown.bubble_s);
    QCOMPARE(window_->memoryChart()->stageCount(), int(ev.memory.per_stage_peak_gib.size()));
    QCOMPARE(window_->memoryChart()->peakAt(0), ev.memory.per_stage_peak_gib[0]);

    // An edit: every view moves to the new evaluation.
    Plan plan = window_->document()->scenario().plan;
    plan.schedule.kind = plan.schedule.kind == ScheduleKind::Interleaved
                             ? ScheduleKind::OneFOneB
                             : ScheduleKind::Interleaved;
    plan.schedule.virtual_stages = plan.schedule.kind == ScheduleKind::Interleaved ? 2 : 1;
    window_->document()->setPlan(plan, QStringLiteral("schedule"));
    QVERIFY(waitForEvaluation());
    shown = window_->shownSnapshot();
    QVERIFY2(shown->evaluation, qPrintable(shown->error));
    QCOMPARE(timeline->evaluation(), shown->evaluation);
    QCOMPARE(timeline->rowCount(),
             shown->evaluation->timeline.stages * shown->evaluation->timeline.chunks);
    QCOMPARE(chart->set(BreakdownChart::Bubble)->at(0), shown->evaluation->breakdown.bubble_s);
}

void TestAnalysis::pinAndCompare() {
    const auto before = window_->shownSnapshot();
    window_->pinCurrentPlan();
    QCOMPARE(window_->pinnedSnapshot(), before);
    QVERIFY(window_->timelinePane()->isComparing());
    QCOMPARE(window_->timelinePane()->pinned()->evaluation(), before->evaluation);

    // Another schedule: a different step.
    Plan plan = window_->document()->scenario().plan;
    plan.schedule.kind = ScheduleKind::GPipe;
    plan.schedule.virtual_stages = 1;
    window_->document()->setPlan(plan, QStringLiteral("schedule"));
    QVERIFY(waitForEvaluation());
    const auto after = window_->shownSnapshot();
    QVERIFY(after->evaluation);
    QVERIFY(after->evaluation->step_time_s != before->evaluation->step_time_s);

    // Both bars, pinned and current, in the breakdown chart.
    BreakdownChart* chart = window_->breakdownChart();
    QCOMPARE(chart->barCount(), 2);
    QCOMPARE(chart->set(BreakdownChart::Bubble)->at(0), after->evaluation->breakdown.bubble_s);
    QCOMPARE(chart->set(BreakdownChart::Bubble)->at(1), before->evaluation->breakdown.bubble_s);

    // The compare table holds both step times and says which is faster, and why.
    ComparePanel* compare = window_->comparePanel();
    const QString summary = compare->summary();
    const bool slower = after->evaluation->step_time_s > before->evaluation->step_time_s;
    QVERIFY2(summary.contains(slower ? QStringLiteral("slower") : QStringLiteral("faster")),
             qPrintable(summary));
    // ... and names first the part of the step that differs most.
    int largest = -1;
    double most = 0;
    for (int r = ComparePanel::Compute; r < ComparePanel::RowCount; ++r) {
        const auto row = ComparePanel::Row(r);
        const double d = std::abs(ComparePanel::value(*after->evaluation, row) -
                                  ComparePanel::value(*before->evaluation, row));
        if (d > most) {
            most = d;
            largest = r;
        }
    }
    QVERIFY(largest >= 0);
    QString part = ComparePanel::rowName(ComparePanel::Row(largest));
    part[0] = part[0].toLower();
    QVERIFY2(summary.contains(QStringLiteral(": ") + part), qPrintable(summary + " / " + part));
    QCOMPARE(compare->table()->item(ComparePanel::StepTime, 1)->text(),
             formatStepTime(before->evaluation->step_time_s));
    QCOMPARE(compare->table()->item(ComparePanel::StepTime, 2)->text(),
             formatStepTime(after->evaluation->step_time_s));
    QVERIFY(
        compare->table()->item(ComparePanel::StepTime, 3)->text().endsWith(QStringLiteral("%")));
    QCOMPARE(ComparePanel::value(*after->evaluation, ComparePanel::Bubble),
             after->evaluation->breakdown.bubble_s);
    // The Δ is coloured by which way the step moved; back at the pinned
    // plan, the table's items (kept between updates) lose the colour.
    QTableWidgetItem* delta = compare->table()->item(ComparePanel::StepTime, 3);
    QVERIFY(delta->data(Qt::ForegroundRole).isValid());
    QCOMPARE(delta->foreground().color().red() > delta->foreground().color().green(), slower);
    window_->document()->undoStack()->undo();
    QVERIFY(waitForEvaluation());
    QCOMPARE(compare->table()->item(ComparePanel::StepTime, 3), delta);
    QCOMPARE(delta->text(), QStringLiteral("="));
    QVERIFY(!delta->data(Qt::ForegroundRole).isValid());
    // The same step says so in words (it read "0.0 % faster than" and
    // "1.00× faster than").
    QVERIFY2(compare->summary().contains(QStringLiteral(" is as fast as ")),
             qPrintable(compare->summary()));
    QVERIFY2(compare->chart()->chart()->title().contains(QStringLiteral("as fast as")),
             qPrintable(compare->chart()->chart()->title()));
    window_->document()->undoStack()->redo();
    QVERIFY(waitForEvaluation());

    // The two timelines share one time axis: zooming one moves the other.
    TimelineView* pinned = window_->timelinePane()->pinned();
    TimelineView* current = window_->timelinePane()->current();
    // Both whole steps are in view, on the same axis.
    const double longer = std::max(before->evaluation->step_time_s, after->evaluation->step_time_s);
    QVERIFY(current->scale().visibleBegin() <= 0);
    QVERIFY(current->scale().visibleEnd() >= longer * (1 - 1e-9));
    QCOMPARE(pinned->scale().visibleEnd(), current->scale().visibleEnd());
    current->zoomIn();
    QCOMPARE(pinned->scale().secondsPerPixel(), current->scale().secondsPerPixel());
    QCOMPARE(pinned->scale().t0(), current->scale().t0());
    QCOMPARE(pinned->timeArea().left(), current->timeArea().left());

    window_->clearPinnedPlan();
    QVERIFY(!window_->timelinePane()->isComparing());
    QCOMPARE(chart->barCount(), 1);
}

void TestAnalysis::exportsParse() {
    QTemporaryDir dir;
    QString error;

    // Chrome trace: the fields Perfetto needs on every event.
    const QString trace = dir.filePath(QStringLiteral("t.json"));
    QVERIFY2(window_->exportChromeTrace(trace, &error), qPrintable(error));
    const auto json = nlohmann::json::parse(readAll(trace).toStdString());
    QVERIFY(json.at("traceEvents").is_array());
    int complete = 0;
    for (const auto& e : json.at("traceEvents")) {
        QVERIFY(e.contains("name") && e.contains("ph") && e.contains("pid") && e.contains("tid"));
        if (e.at("ph") == "X") {
            QVERIFY(e.at("ts").is_number() && e.at("dur").is_number());
            QVERIFY(e.at("dur").get<double>() >= 0);
            ++complete;
        }
    }
    QCOMPARE(complete, int(window_->shownSnapshot()->evaluation->timeline.ops.size()));

    // Timeline and chart pictures.
    for (const char* name : {"timeline.png", "timeline.svg"}) {
        const QString path = dir.filePath(QLatin1String(name));
        QVERIFY2(window_->exportTimelineImage(path, &error), qPrintable(error));
    }
    QVERIFY(!QImage(dir.filePath(QStringLiteral("timeline.png"))).isNull());
    QVERIFY(isWellFormedXml(readAll(dir.filePath(QStringLiteral("timeline.svg")))));
    window_->showDock(QStringLiteral("chart"));
    for (int tab = 0; tab < 2; ++tab) {
        window_->chartTabs()->setCurrentIndex(tab);
        QCoreApplication::processEvents();
        const QString png = dir.filePath(QStringLiteral("chart%1.png").arg(tab));
        const QString svg = dir.filePath(QStringLiteral("chart%1.svg").arg(tab));
        QVERIFY2(window_->exportChartImage(png, &error), qPrintable(error));
        QVERIFY2(window_->exportChartImage(svg, &error), qPrintable(error));
        const QImage image(png);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 200);
        const QByteArray bytes = readAll(svg);
        QVERIFY(bytes.contains("<svg"));
        QVERIFY(isWellFormedXml(bytes));
    }
    // A failed export says why and leaves nothing.
    const QString bad = dir.filePath(QStringLiteral("missing/t.json"));
    QVERIFY(!window_->exportChromeTrace(bad, &error));
    QVERIFY(!error.isEmpty());
    QVERIFY(!QFile::exists(bad));
}

// File > Export > Plan as …: the file reads back as the same model and plan
// through File > Import (one undo step); a broken file changes nothing.
void TestAnalysis::frameworkExportImportRoundTrips() {
    QTemporaryDir dir;
    const Scenario before = window_->document()->scenario();
    for (const auto framework : {frameworks::Framework::Megatron, frameworks::Framework::Nemo,
                                 frameworks::Framework::Torchtitan}) {
        const QString path =
            dir.filePath(QStringLiteral("plan.%1").arg(frameworks::toString(framework)));
        QString error;
        QStringList notes;
        QVERIFY2(window_->exportFrameworkConfig(framework, path, &error, &notes),
                 qPrintable(error));
        QVERIFY(!readAll(path).isEmpty());
        // The sample places stages on buildings: no framework has that setting.
        QVERIFY(!notes.isEmpty());

        Scenario edited = before;
        edited.plan.micro_batch_sequences = 2; // the import must set it back
        edited.plan.global_batch_sequences = before.plan.global_batch_sequences * 2;
        window_->document()->setScenario(edited, QStringLiteral("edit"));
        QVERIFY2(window_->importFrameworkConfig(framework, path, &error), qPrintable(error));
        const Scenario& after = window_->document()->scenario();
        QCOMPARE(after.cluster, before.cluster);
        Plan plan = after.plan;
        plan.name = before.plan.name;
        plan.description = before.plan.description;
        QVERIFY2(plan == before.plan,
                 qPrintable(QString::fromStdString(dumpCanonical(toJson(after.plan)))));
        window_->document()->undoStack()->undo();
        QCOMPARE(window_->document()->scenario().plan.micro_batch_sequences, 2);
        window_->document()->setScenario(before, QStringLiteral("restore"));
    }
    // HSDP across the buildings (DP outermost: 256 replicas in each) goes
    // out as the groups it is, Megatron's optimizer instances, and comes
    // back as the plan's dp_shard: the same step.
    {
        Scenario hsdp = before;
        hsdp.plan.rank_order = {Dim::TP, Dim::CP, Dim::PP, Dim::DP};
        OuterSync h;
        h.method = OuterSyncMethod::Hsdp;
        hsdp.plan.outer_sync = h;
        window_->document()->setScenario(hsdp, QStringLiteral("hsdp"));
        const QString path = dir.filePath(QStringLiteral("hsdp.sh"));
        QString error;
        QStringList notes;
        QVERIFY2(
            window_->exportFrameworkConfig(frameworks::Framework::Megatron, path, &error, &notes),
            qPrintable(error));
        QVERIFY(readAll(path).contains("--num-distributed-optimizer-instances 3"));
        QVERIFY2(!notes.isEmpty() && notes.front().contains(QStringLiteral("dp_shard 256")),
                 qPrintable(notes.join(QLatin1Char('\n'))));
        QVERIFY2(window_->importFrameworkConfig(frameworks::Framework::Megatron, path, &error),
                 qPrintable(error));
        QCOMPARE(window_->document()->scenario().plan.dp_shard, 256);
        QVERIFY(!window_->document()->scenario().plan.outer_sync);
        window_->document()->setScenario(before, QStringLiteral("restore"));
    }
    // A plan torchtitan cannot express (experts over 2 of 8 TP ranks):
    // refused naming the plan's setting, nothing written, nothing changed.
    {
        Scenario moe = sa::testing::loadSampleScenario("two-buildings-mixtral.json");
        moe.plan.parallelism.etp = 2;
        window_->document()->setScenario(moe, QStringLiteral("moe"));
        const QString path = dir.filePath(QStringLiteral("moe.toml"));
        QString error;
        QStringList notes;
        QVERIFY(!window_->exportFrameworkConfig(frameworks::Framework::Torchtitan, path, &error,
                                                &notes));
        QVERIFY2(error.startsWith(QStringLiteral("the plan: /parallelism/etp: ")),
                 qPrintable(error));
        QVERIFY2(!error.contains(QStringLiteral("<input>")), qPrintable(error));
        QVERIFY(!QFile::exists(path));
        window_->document()->setScenario(before, QStringLiteral("restore"));
    }
    const QString broken = dir.filePath(QStringLiteral("broken.toml"));
    QVERIFY(sa::testing::writeFile(broken, "[parallelism]\ntensor_parallel_degree = \"eight\"\n"));
    QString error;
    QVERIFY(!window_->importFrameworkConfig(frameworks::Framework::Torchtitan, broken, &error));
    QVERIFY2(error.contains(broken), qPrintable(error));
    QVERIFY(error.contains(QStringLiteral("tensor_parallel_degree")));
    QCOMPARE(window_->document()->scenario(), before);
}

void TestAnalysis::sweepRunsAndExportsCsv() {
    SweepPanel* sweep = window_->sweepPanel();
    QVERIFY(!sweep->parameters().empty());
    sweep->setBaselines(false);
    QSignalSpy finished(sweep, &SweepPanel::finished);
    sweep->setParameter(0);
    sweep->run();
    QVERIFY(finished.wait(60000));
    const auto& data = sweep->chart()->data();
    QCOMPARE(int(data.size()), 1);
    QCOMPARE(data[0].x.size(), sweep->parameters()[0].values.size());
    // At the cluster's own value the sweep agrees with the live evaluation.
    const double current = sweep->parameters()[0].current;
    const auto& xs = data[0].x;
    int matched = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        if (std::abs(xs[i] - current) <= 1e-9 * current) {
            QCOMPARE(data[0].step_time_s[i], window_->shownSnapshot()->evaluation->step_time_s);
            ++matched;
        }
    }
    QCOMPARE(matched, 1);

    QTemporaryDir dir;
    const QString csv = dir.filePath(QStringLiteral("sweep.csv"));
    QString error;
    QVERIFY2(sweep->exportCsv(csv, &error), qPrintable(error));
    const QList<QByteArray> lines = readAll(csv).trimmed().split('\n');
    QCOMPARE(lines.size(), 1 + int(xs.size()));
    QVERIFY(lines[0].startsWith("series,"));
    QVERIFY(lines[0].contains("step_time_s"));
    QCOMPARE(lines[1].count(','), lines[0].count(','));
}

QTEST_MAIN(TestAnalysis)
#include "tst_analysis.moc"

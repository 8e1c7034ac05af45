// The document model: open, edit, undo/redo, merged edits, bad files that
// leave the document alone, save -> open round trips, chip drops.

#include "document.h"
#include "placementedits.h"
#include "samples.h"

#include "cost/placement.h"
#include "formats/documents.h"

#include "../common/files.h"
#include "../common/samples.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace sa;
using namespace sa::views;
using sa::testing::sampleScenario;
using sa::testing::writeFile;

namespace {} // namespace

class TestDocument : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void openScenario();
    void editUndoRedo();
    void mergedEdits();
    void mergeBackToOriginalLeavesNothing();
    void badFileKeepsDocument_data();
    void badFileKeepsDocument();
    void openPlanReplacesPlan();
    void saveOpenRoundTrip();
    void exportPlan();
    void swapStagesThroughDocument();
    void moveIntoFullBuildingProposesSwap();
    void splitByStage();
    void samplesAreFound();

private:
    std::unique_ptr<Document> doc_;
};

void TestDocument::init() {
    doc_ = std::make_unique<Document>();
    QString error;
    QVERIFY2(doc_->open(sampleScenario("three-buildings-405b.json"), &error), qPrintable(error));
}

void TestDocument::openScenario() {
    QVERIFY(!doc_->isEmpty());
    QCOMPARE(doc_->scenario().cluster.buildings.size(), std::size_t(3));
    QCOMPARE(doc_->scenario().model.name, std::string("llama3-405b"));
    QVERIFY(doc_->filePath().endsWith(QLatin1String("three-buildings-405b.json")));
    QVERIFY(!doc_->isModified());
    QCOMPARE(doc_->undoStack()->count(), 0);
    QCOMPARE(doc_->baseline(), doc_->scenario());
}

void TestDocument::editUndoRedo() {
    const Scenario original = doc_->scenario();
    QSignalSpy changed(doc_.get(), &Document::scenarioChanged);
    QSignalSpy clusterChanged(doc_.get(), &Document::clusterChanged);
    Plan plan = original.plan;
    plan.micro_batch_sequences = 2;
    doc_->setPlan(plan, QStringLiteral("Micro batch 2"));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(clusterChanged.count(), 0);
    QCOMPARE(doc_->scenario().plan.micro_batch_sequences, std::int64_t(2));
    QVERIFY(doc_->isModified());
    QCOMPARE(doc_->undoStack()->undoText(), QStringLiteral("Micro batch 2"));

    doc_->undoStack()->undo();
    QCOMPARE(doc_->scenario(), original);
    QVERIFY(!doc_->isModified());
    doc_->undoStack()->redo();
    QCOMPARE(doc_->scenario().plan, plan);
    QCOMPARE(changed.count(), 3);
    // The baseline stays what was opened.
    QCOMPARE(doc_->baseline(), original);

    // An edit that changes nothing is not an undo step.
    doc_->setPlan(plan, QStringLiteral("same"));
    QCOMPARE(doc_->undoStack()->count(), 1);
}

void TestDocument::mergedEdits() {
    const Scenario original = doc_->scenario();
    Plan plan = original.plan;
    // Typing "128" into a field: 1, 12, 128 are one step.
    for (int v : {1, 12, 128}) {
        plan.dp_bucket_mib = v;
        doc_->setPlan(plan, QStringLiteral("Bucket"), QStringLiteral("plan/dp_bucket_mib"));
    }
    QCOMPARE(doc_->undoStack()->count(), 1);
    QCOMPARE(doc_->scenario().plan.dp_bucket_mib, 128.0);
    // Another field is another step.
    plan.dp_overlap = false;
    doc_->setPlan(plan, QStringLiteral("Overlap"), QStringLiteral("plan/dp_overlap"));
    QCOMPARE(doc_->undoStack()->count(), 2);
    doc_->undoStack()->undo();
    doc_->undoStack()->undo();
    QCOMPARE(doc_->scenario(), original);
    // Edits without a key never merge.
    plan = original.plan;
    plan.micro_batch_sequences = original.plan.micro_batch_sequences * 2;
    doc_->setPlan(plan, QStringLiteral("a"));
    plan.micro_batch_sequences = original.plan.micro_batch_sequences * 4;
    doc_->setPlan(plan, QStringLiteral("b"));
    QCOMPARE(doc_->undoStack()->count(), 2);
}

void TestDocument::mergeBackToOriginalLeavesNothing() {
    const Scenario original = doc_->scenario();
    Plan plan = original.plan;
    plan.zero_stage = original.plan.zero_stage == 3 ? 0 : 3;
    doc_->setPlan(plan, QStringLiteral("ZeRO"), QStringLiteral("plan/zero_stage"));
    QCOMPARE(doc_->undoStack()->count(), 1);
    plan.zero_stage = original.plan.zero_stage;
    doc_->setPlan(plan, QStringLiteral("ZeRO"), QStringLiteral("plan/zero_stage"));
    QCOMPARE(doc_->undoStack()->count(), 0);
    QCOMPARE(doc_->scenario(), original);
    QVERIFY(!doc_->isModified());
}

void TestDocument::badFileKeepsDocument_data() {
    QTest::addColumn<QByteArray>("contents"); // empty: the file does not exist
    QTest::addColumn<QString>("expected");    // part of the message
    QTest::newRow("missing file") << QByteArray() << QString();
    QTest::newRow("not JSON") << QByteArray("{ \"format\": ") << QString();
    QTest::newRow("unknown format")
        << QByteArray(R"({"format": "scaleacross.nonsense", "version": 1})")
        << QStringLiteral("/format");
    QTest::newRow("unknown key in a plan")
        << QByteArray(R"({"format": "scaleacross.plan", "version": 1, "name": "p",
             "sequence_length": 8192, "global_batch_sequences": 12288,
             "parallelism": {"tp": 8, "pp": 16, "dp": 768}, "colour": "red"})")
        << QStringLiteral("colour");
    QTest::newRow("plan that does not fit the cluster")
        << QByteArray(R"({"format": "scaleacross.plan", "version": 1, "name": "p",
             "sequence_length": 8192, "global_batch_sequences": 12288,
             "parallelism": {"tp": 8, "pp": 16, "dp": 1536}})")
        << QString();
    QTest::newRow("negative tp") << QByteArray(
                                        R"({"format": "scaleacross.plan", "version": 1, "name": "p",
             "sequence_length": 8192, "global_batch_sequences": 12288,
             "parallelism": {"tp": -2, "pp": 16, "dp": 768}})")
                                 << QStringLiteral("/parallelism/tp");
}

void TestDocument::badFileKeepsDocument() {
    QFETCH(QByteArray, contents);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad.json"));
    if (!contents.isEmpty())
        QVERIFY(writeFile(path, contents));

    const Scenario before = doc_->scenario();
    const QString pathBefore = doc_->filePath();
    QSignalSpy changed(doc_.get(), &Document::scenarioChanged);
    QString error;
    QVERIFY(!doc_->open(path, &error));
    QVERIFY2(error.contains(QLatin1String("bad.json")), qPrintable(error));
    if (!expected.isEmpty())
        QVERIFY2(error.contains(expected), qPrintable(error));
    QVERIFY(error.count(QLatin1Char('\n')) >= 1); // the path line and at least one problem
    QCOMPARE(doc_->scenario(), before);
    QCOMPARE(doc_->filePath(), pathBefore);
    QCOMPARE(doc_->undoStack()->count(), 0);
    QCOMPARE(changed.count(), 0);
}

void TestDocument::openPlanReplacesPlan() {
    const Scenario before = doc_->scenario();
    QTemporaryDir dir;
    Plan plan = before.plan;
    plan.name = "variant";
    plan.micro_batch_sequences = 2;
    const QString path = dir.filePath(QStringLiteral("variant.json"));
    QVERIFY(writeFile(path, QByteArray::fromStdString(dumpCanonical(toJson(plan)))));
    QString error;
    QVERIFY2(doc_->open(path, &error), qPrintable(error));
    QCOMPARE(doc_->scenario().plan, plan);
    QCOMPARE(doc_->scenario().cluster, before.cluster);
    QCOMPARE(doc_->undoStack()->count(), 1);
    doc_->undoStack()->undo();
    QCOMPARE(doc_->scenario(), before);
}

void TestDocument::saveOpenRoundTrip() {
    Document doc;
    QString error;
    QVERIFY(doc.openAsNew(sampleScenario("three-buildings-405b.json"), &error));
    QVERIFY(doc.filePath().isEmpty()); // a sample is never overwritten by Save
    QVERIFY(!doc.save(&error));
    Plan plan = doc.scenario().plan;
    plan.micro_batch_sequences = 2;
    plan.schedule.kind = ScheduleKind::ZeroBubble;
    doc.setPlan(plan, QStringLiteral("edit"));
    QVERIFY(doc.isModified());

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("saved.json"));
    QVERIFY2(doc.saveAs(path, &error), qPrintable(error));
    QVERIFY(!doc.isModified());
    QCOMPARE(doc.filePath(), path);

    Document reopened;
    QVERIFY2(reopened.open(path, &error), qPrintable(error));
    QCOMPARE(reopened.scenario(), doc.scenario());
    // Saving again gives the same bytes: canonical output.
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray first = f.readAll();
    f.close();
    QVERIFY(reopened.save(&error));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), first);
}

void TestDocument::exportPlan() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("plan.json"));
    QString error;
    QVERIFY2(doc_->exportPlan(path, &error), qPrintable(error));
    const auto loaded = loadPlanFile(path.toStdString());
    QVERIFY(loaded.ok());
    QCOMPARE(*loaded.value, doc_->scenario().plan);
    // A folder that does not exist: a message naming the path, no crash.
    QVERIFY(!doc_->exportPlan(dir.filePath(QStringLiteral("no/such/dir/plan.json")), &error));
    QVERIFY(!error.isEmpty());
}

void TestDocument::swapStagesThroughDocument() {
    const Scenario original = doc_->scenario();
    PlacementResult placed = placeCells(original.cluster, original.plan);
    QVERIFY(placed.ok());
    const auto chips = views::splitByStage(chipsOf(placed.grid));
    // Stage 0 of B2's replicas and stage 15 of B1's replicas trade places.
    const GroupChip* s0b2 = nullptr;
    const GroupChip* s15b1 = nullptr;
    for (const auto& c : chips) {
        if (c.building == 1 && c.stage_first == 0)
            s0b2 = &c;
        if (c.building == 0 && c.stage_first == 15)
            s15b1 = &c;
    }
    QVERIFY(s0b2 && s15b1);
    ChipDrop drop{*s0b2, 0, *s15b1};
    const DropOutcome outcome = applyDrop(original, drop);
    QVERIFY2(outcome.ok(), qPrintable(outcome.problem));
    QVERIFY2(outcome.description.startsWith(QStringLiteral("Swap S0 · R256–511 · 2,048 GPUs (B2)")),
             qPrintable(outcome.description));
    doc_->setPlan(outcome.plan, outcome.description);
    QCOMPARE(doc_->undoStack()->count(), 1);

    placed = placeCells(doc_->scenario().cluster, doc_->scenario().plan);
    QVERIFY(placed.ok());
    QCOMPARE(placed.grid.at(0, 300), 0); // stage 0, a B2 replica: now in B1
    QCOMPARE(placed.grid.at(15, 10), 1); // stage 15, a B1 replica: now in B2
    QCOMPARE(placed.grid.at(0, 10), 0);  // untouched
    QCOMPARE(placed.gpus_used[0], std::int64_t(32768));

    doc_->undoStack()->undo();
    QCOMPARE(doc_->scenario(), original);
}

void TestDocument::moveIntoFullBuildingProposesSwap() {
    const Scenario original = doc_->scenario();
    const PlacementResult placed = placeCells(original.cluster, original.plan);
    const auto chips = views::splitByStage(chipsOf(placed.grid));
    // Stage 3 of B3's replicas onto B1, which is full: B1's chip of the
    // same size and stage goes to B3 instead.
    ChipDrop drop;
    for (const auto& c : chips)
        if (c.building == 2 && c.stage_first == 3)
            drop.chip = c;
    QCOMPARE(drop.chip.building, 2);
    drop.building = 0;
    const DropOutcome outcome = applyDrop(original, drop);
    QVERIFY2(outcome.ok(), qPrintable(outcome.problem));
    QVERIFY(outcome.displaced);
    QCOMPARE(outcome.displaced->building, 0);
    QCOMPARE(outcome.displaced->gpus, drop.chip.gpus);
    QCOMPARE(outcome.displaced->stage_first, 3);
    QVERIFY2(outcome.description.startsWith(QStringLiteral("B1 is full: Swap S3 · R512–767")),
             qPrintable(outcome.description));
    Scenario next = original;
    next.plan = outcome.plan;
    const PlacementResult after = placeCells(next.cluster, next.plan);
    QVERIFY(after.ok());
    QCOMPARE(after.grid.at(3, drop.chip.replica_first), 0);
    QCOMPARE(after.grid.at(3, outcome.displaced->replica_first), 2);
    QCOMPARE(after.gpus_used, placed.gpus_used);

    // An explicit swap that cannot fit stays refused: B1's whole run of
    // 32,768 GPUs for one stage of 2,048 would overfill B3.
    const auto runs = chipsOf(placed.grid);
    ChipDrop tooBig = drop;
    for (const auto& c : runs)
        if (c.building == 0)
            tooBig.swapWith = c;
    QVERIFY(tooBig.swapWith && tooBig.swapWith->gpus > drop.chip.gpus);
    const DropOutcome refused = applyDrop(original, tooBig);
    QVERIFY(!refused.ok());
    QVERIFY(!refused.displaced);
    QVERIFY2(refused.problem.contains(QLatin1String("GPUs")), qPrintable(refused.problem));
}

void TestDocument::splitByStage() {
    GroupChip c{2, 5, 0, 9, 1, 4 * 10 * 8};
    const auto parts = views::splitByStage({c});
    QCOMPARE(parts.size(), std::size_t(4));
    for (int i = 0; i < 4; ++i) {
        QCOMPARE(parts[std::size_t(i)].stage_first, 2 + i);
        QCOMPARE(parts[std::size_t(i)].stage_last, 2 + i);
        QCOMPARE(parts[std::size_t(i)].gpus, std::int64_t(80));
        QCOMPARE(parts[std::size_t(i)].building, 1);
    }
    QCOMPARE(chipLabel(c), QStringLiteral("S2–5 · R0–9 · 320 GPUs"));
    // A part of its replicas, with its share of the GPUs; clamped to the chip.
    const GroupChip part = views::replicasOf(c, 3);
    QCOMPARE(part.replica_first, 0);
    QCOMPARE(part.replica_last, 2);
    QCOMPARE(part.stage_first, 2);
    QCOMPARE(part.stage_last, 5);
    QCOMPARE(part.gpus, std::int64_t(96));
    QCOMPARE(views::replicasOf(c, 99), c);
    QCOMPARE(views::replicasOf(c, 0).replica_last, 0);
}

void TestDocument::samplesAreFound() {
    // The source tree's samples (the build-tree binary has no share/ copy).
    qunsetenv("SCALEACROSS_SAMPLES");
    QVERIFY(views::samplesDir().endsWith(QLatin1String("sample_clusters")));
    const QStringList all = views::sampleScenarios();
    QVERIFY(all.size() >= 3);
    QVERIFY(std::is_sorted(all.begin(), all.end()));
    QVERIFY(views::defaultScenario().endsWith(QLatin1String("three-buildings-405b.json")));
    // The environment variable wins; without three-buildings-405b.json the
    // first scenario is the default.
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("scenarios")));
    for (const char* name : {"b.json", "a.json"})
        QVERIFY(writeFile(dir.filePath(QStringLiteral("scenarios/") + QLatin1String(name)), "{}"));
    qputenv("SCALEACROSS_SAMPLES", dir.path().toLocal8Bit());
    QCOMPARE(views::samplesDir(), QDir(dir.path()).absolutePath());
    QCOMPARE(views::sampleScenarios().size(), 2);
    QVERIFY(views::defaultScenario().endsWith(QLatin1String("scenarios/a.json")));
    qunsetenv("SCALEACROSS_SAMPLES");
}

QTEST_GUILESS_MAIN(TestDocument)
#include "tst_document.moc"

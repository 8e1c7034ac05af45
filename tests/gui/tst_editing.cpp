// The explorer edited as a user edits it, offscreen: typing into inspector
// fields (applied on Enter or Tab only, one undo step per value, refused
// values shown below the fields), the wheel over fields that do not have
// the focus, the problem box going away when the document changes, Escape
// during a chip drag, Ctrl+Y and the pinned plan when another scenario is
// opened. Every gesture goes through QTest key and mouse events or a wheel
// event, not through setters.

#include "comparepanel.h"
#include "cost/balance.h"
#include "cost/placement.h"
#include "document.h"
#include "formats/json_check.h"
#include "liveevaluation.h"
#include "mainwindow.h"
#include "planinspector.h"
#include "runpanel.h"
#include "topologyitems.h"
#include "topologyview.h"
#include "units.h"

#include "../common/mainwindow_wait.h"
#include "../common/samples.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTest>
#include <QTimer>
#include <QToolButton>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QUndoStack>
#include <QWheelEvent>

using namespace sa;
using namespace sa::views;
using sa::testing::sampleScenario;

class TestEditing : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void typedValueAppliesOnEnterOnly();
    void eachCommittedValueIsOneUndoStep();
    void refusedValueIsShownNotApplied();
    void escapeInAFieldRevertsIt();
    void problemClearsWhenTheDocumentChanges_data();
    void problemClearsWhenTheDocumentChanges();
    void everyPlanKnobIsEditable();
    void scheduleCarriesItsVirtualStages();
    void optimizerPrecisionFields();
    void partialRecomputeAndFp8Fields();
    void zeroShardGroupIsHsdp();
    void fp8WeightGatherOnlyForFp8Models();
    void epDispatcherSmsField();
    void expertTpField();
    void recomputeModulesFromTheMenu();
    void frameworkSetsItsDefaults();
    void wheelOverUnfocusedFieldScrollsTheInspector();
    void wheelChangesTheFocusedField();
    void escapeCancelsAChipDrag();
    void ctrlYRedoes();
    void undoShortcutFromACommittedField();
    void openingAnotherScenarioUnpins();
    void outerSyncAndRunFields();
    void buildingAndLinkFieldsEditTheCluster();
    void failuresFasterThanAStepShowNever();
    void clusterFieldsTakeTheFilesRanges();
    void oneBuildingRankOrdersStayShort();
    void layersPerStageAndRankOrder();
    void secondRefusalPutsTheFirstFieldBack();
    void rankOrderItemsKeepTheExplicitPlacement();

private:
    bool waitForEvaluation(int ms = 10000) {
        return sa::testing::waitForShownEvaluation(*window_, ms);
    }
    QSpinBox* spin(const char* field) const {
        return window_->inspector()->spinBox(QLatin1String(field));
    }
    // Clicks into the field, selects its text and types `text` as a user.
    void typeInto(QAbstractSpinBox* box, const QString& text);
    // Focuses a combo box and steps it with the arrow keys to `index`.
    void choose(QComboBox* box, int index);
    // Types DP 2000 (more GPUs than the cluster has) and presses Enter.
    void causeProblem();
    void dragChip(int chip, int building, bool release);
    int chipOf(int stage, int building) const;
    QWidget* problemBox() const { return window_->inspector()->problemBox(); }

    std::unique_ptr<MainWindow> window_;
};

void TestEditing::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ScaleAcrossTests"));
}

void TestEditing::init() {
    window_ = std::make_unique<MainWindow>();
    QVERIFY(sa::testing::showSample(*window_, sampleScenario("three-buildings-405b.json"), true));
}

void TestEditing::cleanup() {
    if (window_)
        window_->document()->undoStack()->setClean(); // no "save changes?" on close
    window_.reset();
}

void TestEditing::choose(QComboBox* box, int index) {
    window_->inspector()->scrollArea()->ensureWidgetVisible(box);
    box->setFocus();
    QVERIFY(box->hasFocus());
    while (box->currentIndex() < index)
        QTest::keyClick(box, Qt::Key_Down);
    while (box->currentIndex() > index)
        QTest::keyClick(box, Qt::Key_Up);
}

void TestEditing::typeInto(QAbstractSpinBox* box, const QString& text) {
    window_->inspector()->scrollArea()->ensureWidgetVisible(box);
    auto* edit = box->findChild<QLineEdit*>();
    QVERIFY(edit);
    QTest::mouseClick(edit, Qt::LeftButton, {}, edit->rect().center());
    QVERIFY(box->hasFocus());
    QTest::keyClick(box, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(box, text);
}

void TestEditing::causeProblem() {
    typeInto(spin("dp"), QStringLiteral("2000"));
    QTest::keyClick(spin("dp"), Qt::Key_Return);
    QVERIFY(!window_->inspector()->problem().isEmpty());
    QVERIFY(problemBox()->isVisible());
}

int TestEditing::chipOf(int stage, int building) const {
    const auto& chips = window_->topologyView()->chips();
    for (std::size_t i = 0; i < chips.size(); ++i)
        if (chips[i].stage_first == stage && chips[i].building == building)
            return int(i);
    return -1;
}

void TestEditing::dragChip(int chip, int target, bool release) {
    TopologyView* view = window_->topologyView();
    ChipItem* from = view->chipItem(chip);
    ChipItem* onto = view->chipItem(target);
    QVERIFY(from && onto);
    const QPoint start = view->mapFromScene(from->sceneBoundingRect().center());
    const QPoint end = view->mapFromScene(onto->sceneBoundingRect().center());
    QVERIFY(sa::testing::dragAndHover(*window_, start, end));
    if (release)
        QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, end);
}

void TestEditing::typedValueAppliesOnEnterOnly() {
    Document* doc = window_->document();
    const Scenario original = doc->scenario();
    QCOMPARE(original.plan.parallelism.dp, 768);
    QSignalSpy changed(doc, &Document::scenarioChanged);
    QSignalSpy started(window_->liveEvaluation(), &LiveEvaluation::evaluationStarted);

    // "384": 3 and 38 on the way are never applied nor evaluated.
    typeInto(spin("dp"), QStringLiteral("384"));
    QCOMPARE(spin("dp")->text(), QStringLiteral("384"));
    QCOMPARE(doc->scenario(), original);
    QCOMPARE(doc->undoStack()->count(), 0);
    QCOMPARE(changed.count(), 0);
    QCOMPARE(started.count(), 0);
    QVERIFY(window_->inspector()->problem().isEmpty());

    QTest::keyClick(spin("dp"), Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.parallelism.dp, 384);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(started.count(), 1);
    QCOMPARE(doc->undoStack()->count(), 1);
    QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Set Data (DP) to 384"));
    QVERIFY(waitForEvaluation());
    QCOMPARE(window_->shownSnapshot()->plan.parallelism.dp, 384);

    // Leaving the field commits too (Tab to the next one).
    typeInto(spin("micro_batch_sequences"), QStringLiteral("2"));
    QCOMPARE(doc->scenario().plan.micro_batch_sequences, original.plan.micro_batch_sequences);
    QTest::keyClick(spin("micro_batch_sequences"), Qt::Key_Tab);
    QVERIFY(!spin("micro_batch_sequences")->hasFocus());
    QCOMPARE(doc->scenario().plan.micro_batch_sequences, std::int64_t(2));
    QCOMPARE(doc->undoStack()->count(), 2);
}

void TestEditing::eachCommittedValueIsOneUndoStep() {
    Document* doc = window_->document();
    QSpinBox* dp = spin("dp");
    typeInto(dp, QStringLiteral("384"));
    QTest::keyClick(dp, Qt::Key_Return);
    // Still in the field: the next value typed is its own edit.
    QVERIFY(dp->hasFocus());
    QTest::keyClick(dp, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(dp, QStringLiteral("192"));
    QTest::keyClick(dp, Qt::Key_Enter);
    QCOMPARE(doc->scenario().plan.parallelism.dp, 192);
    QCOMPARE(doc->undoStack()->count(), 2);
    // Arrow steps in a row are one edit.
    QSpinBox* micro = spin("micro_batch_sequences");
    typeInto(micro, QStringLiteral("1"));
    QTest::keyClick(micro, Qt::Key_Up);
    QTest::keyClick(micro, Qt::Key_Up);
    QTest::keyClick(micro, Qt::Key_Up);
    QCOMPARE(doc->scenario().plan.micro_batch_sequences, std::int64_t(4));
    QCOMPARE(doc->undoStack()->count(), 3);
    QTest::keyClick(micro, Qt::Key_Return);

    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.micro_batch_sequences, std::int64_t(1));
    QCOMPARE(micro->value(), 1);
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.parallelism.dp, 384);
    QCOMPARE(dp->value(), 384);
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.parallelism.dp, 768);
    QCOMPARE(dp->text(), QStringLiteral("768"));
}

void TestEditing::refusedValueIsShownNotApplied() {
    Document* doc = window_->document();
    const Scenario original = doc->scenario();
    QSpinBox* dp = spin("dp");
    QSpinBox* ep = spin("ep");
    const QRect dpAt(dp->mapTo(window_->inspector(), QPoint(0, 0)), dp->size());
    const QRect epAt(ep->mapTo(window_->inspector(), QPoint(0, 0)), ep->size());
    QSignalSpy started(window_->liveEvaluation(), &LiveEvaluation::evaluationStarted);

    causeProblem();
    QCOMPARE(doc->scenario(), original);
    QCOMPARE(doc->undoStack()->count(), 0);
    QCOMPARE(started.count(), 0);
    auto* text = problemBox()->findChild<QLabel*>(QStringLiteral("inspectorMessageText"));
    QVERIFY(text);
    QVERIFY2(text->text().contains(QLatin1String("Data (DP) to 2000")), qPrintable(text->text()));
    // The fields did not move when the problem appeared (once laid out),
    // not even the refused one marked in red.
    QTest::qWait(50);
    QCOMPARE(QRect(dp->mapTo(window_->inspector(), QPoint(0, 0)), dp->size()), dpAt);
    QCOMPARE(QRect(ep->mapTo(window_->inspector(), QPoint(0, 0)), ep->size()), epAt);
    QVERIFY(dp->palette().color(QPalette::Base) != ep->palette().color(QPalette::Base));
    QVERIFY(problemBox()->geometry().top() >=
            window_->inspector()->scrollArea()->geometry().bottom());

    // ✕ dismisses it and puts the plan's value back in the field.
    auto* close = problemBox()->findChild<QToolButton*>(QStringLiteral("inspectorMessageClose"));
    QVERIFY(close);
    QTest::mouseClick(close, Qt::LeftButton);
    QVERIFY(!problemBox()->isVisible());
    QVERIFY(window_->inspector()->problem().isEmpty());
    QCOMPARE(dp->text(), QStringLiteral("768"));
    QCOMPARE(doc->scenario(), original);
}

void TestEditing::escapeInAFieldRevertsIt() {
    Document* doc = window_->document();
    const Scenario original = doc->scenario();
    QSpinBox* dp = spin("dp");
    typeInto(dp, QStringLiteral("999"));
    QTest::keyClick(dp, Qt::Key_Escape);
    QCOMPARE(dp->text(), QStringLiteral("768"));
    // Leaving the field afterwards applies nothing.
    QTest::keyClick(dp, Qt::Key_Tab);
    QCOMPARE(doc->scenario(), original);
    QCOMPARE(doc->undoStack()->count(), 0);
}

void TestEditing::problemClearsWhenTheDocumentChanges_data() {
    QTest::addColumn<QString>("change");
    QTest::newRow("another field") << QStringLiteral("field");
    QTest::newRow("undo") << QStringLiteral("undo");
    QTest::newRow("redo") << QStringLiteral("redo");
    QTest::newRow("a drag") << QStringLiteral("drag");
    QTest::newRow("opening a file") << QStringLiteral("open");
}

void TestEditing::problemClearsWhenTheDocumentChanges() {
    QFETCH(QString, change);
    Document* doc = window_->document();
    if (change == QLatin1String("undo") || change == QLatin1String("redo")) {
        typeInto(spin("micro_batch_sequences"), QStringLiteral("2"));
        QTest::keyClick(spin("micro_batch_sequences"), Qt::Key_Return);
        QCOMPARE(doc->undoStack()->count(), 1);
        if (change == QLatin1String("redo"))
            doc->undoStack()->undo();
    }
    causeProblem();
    if (change == QLatin1String("field")) {
        typeInto(spin("micro_batch_sequences"), QStringLiteral("2"));
        QTest::keyClick(spin("micro_batch_sequences"), Qt::Key_Return);
    } else if (change == QLatin1String("undo")) {
        QTest::keyClick(window_.get(), Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(doc->undoStack()->index(), 0);
    } else if (change == QLatin1String("redo")) {
        QTest::keyClick(window_.get(), Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(doc->undoStack()->index(), 1);
    } else if (change == QLatin1String("drag")) {
        dragChip(chipOf(0, 1), chipOf(15, 0), true);
        QTRY_COMPARE(doc->undoStack()->count(), 1);
    } else if (change == QLatin1String("open")) {
        QVERIFY(window_->openFile(sampleScenario("two-buildings-405b.json")));
    }
    QVERIFY(!problemBox()->isVisible());
    QVERIFY(window_->inspector()->problem().isEmpty());
    QCOMPARE(spin("dp")->value(), doc->scenario().plan.parallelism.dp);
}

void TestEditing::everyPlanKnobIsEditable() {
    // Latency-aware warm-up, FSDP's resharding and the gradients' dtype, as
    // a user sets them: a click on the box, arrow keys in a focused combo.
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    QCheckBox* hiding = inspector->checkBox(QStringLiteral("latency_hiding"));
    QVERIFY(hiding && !hiding->isChecked());
    inspector->scrollArea()->ensureWidgetVisible(hiding);
    QTest::mouseClick(hiding, Qt::LeftButton, {}, QPoint(4, hiding->height() / 2));
    QVERIFY(doc->scenario().plan.schedule.latency_hiding);
    QCOMPARE(doc->undoStack()->count(), 1);
    QVERIFY(waitForEvaluation());

    QComboBox* grads = inspector->comboBox(QStringLiteral("grad_reduce_bytes"));
    QComboBox* reshard = inspector->comboBox(QStringLiteral("fsdp_reshard_after_forward"));
    QVERIFY(grads && reshard);
    QCOMPARE(grads->currentIndex(), doc->scenario().plan.grad_reduce_bytes == 4 ? 0 : 1);
    inspector->scrollArea()->ensureWidgetVisible(reshard);
    reshard->setFocus();
    QTest::keyClick(reshard, Qt::Key_Down);
    QCOMPARE(doc->scenario().plan.fsdp_reshard_after_forward, FsdpReshard::Always);
    QCOMPARE(doc->undoStack()->count(), 2);
    QVERIFY(waitForEvaluation());
    // Undo puts the plan and the field back.
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.fsdp_reshard_after_forward, FsdpReshard::Default);
    QCOMPARE(reshard->currentIndex(), 0);
    doc->undoStack()->undo();
    QVERIFY(!hiding->isChecked());

    // TP communication overlap: a click on its box, then undo.
    QCheckBox* tpOverlap = inspector->checkBox(QStringLiteral("tp_comm_overlap"));
    QVERIFY(tpOverlap && !tpOverlap->isChecked());
    inspector->scrollArea()->ensureWidgetVisible(tpOverlap);
    QTest::mouseClick(tpOverlap, Qt::LeftButton, {}, QPoint(4, tpOverlap->height() / 2));
    QVERIFY(doc->scenario().plan.tp_comm_overlap);
    QVERIFY(waitForEvaluation());
    doc->undoStack()->undo();
    QVERIFY(!doc->scenario().plan.tp_comm_overlap);
    QVERIFY(!tpOverlap->isChecked());

    // Gradient accumulation outside the GEMMs: the step gets longer (the
    // sample accumulates over its microbatches), undo restores it.
    QCheckBox* fusion = inspector->checkBox(QStringLiteral("grad_accumulation_fusion"));
    QVERIFY(fusion && fusion->isChecked());
    QVERIFY(waitForEvaluation());
    const double fusedAccumStep = window_->liveEvaluation()->current()->evaluation->step_time_s;
    inspector->scrollArea()->ensureWidgetVisible(fusion);
    QTest::mouseClick(fusion, Qt::LeftButton, {}, QPoint(4, fusion->height() / 2));
    QVERIFY(!doc->scenario().plan.grad_accumulation_fusion);
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->liveEvaluation()->current()->evaluation->step_time_s > fusedAccumStep);
    doc->undoStack()->undo();
    QVERIFY(doc->scenario().plan.grad_accumulation_fusion);
    QVERIFY(fusion->isChecked());

    // The sharded optimizer's gradients all-reduced: twice the gradient
    // bytes across the buildings, a step no shorter; undo restores it.
    QCheckBox* reduceScatter = inspector->checkBox(QStringLiteral("grad_reduce_scatter"));
    QVERIFY(reduceScatter && reduceScatter->isChecked());
    QVERIFY(waitForEvaluation());
    const sa::Evaluation before = *window_->liveEvaluation()->current()->evaluation;
    inspector->scrollArea()->ensureWidgetVisible(reduceScatter);
    QTest::mouseClick(reduceScatter, Qt::LeftButton, {}, QPoint(4, reduceScatter->height() / 2));
    QVERIFY(!doc->scenario().plan.grad_reduce_scatter);
    QVERIFY(waitForEvaluation());
    const sa::Evaluation& after = *window_->liveEvaluation()->current()->evaluation;
    QVERIFY(after.cross_building_bytes > before.cross_building_bytes);
    QVERIFY(after.step_time_s >= before.step_time_s);
    doc->undoStack()->undo();
    QVERIFY(doc->scenario().plan.grad_reduce_scatter);
    QVERIFY(reduceScatter->isChecked());

    // The rotary embedding unfused: its eager ops lengthen the step; with
    // eager elementwise ops (torchtitan's own RoPE) the box is disabled.
    QCheckBox* rope = inspector->checkBox(QStringLiteral("rope_fusion"));
    QVERIFY(rope && rope->isChecked() && rope->isEnabled());
    QVERIFY(waitForEvaluation());
    const double fusedRopeStep = window_->liveEvaluation()->current()->evaluation->step_time_s;
    inspector->scrollArea()->ensureWidgetVisible(rope);
    QTest::mouseClick(rope, Qt::LeftButton, {}, QPoint(4, rope->height() / 2));
    QVERIFY(!doc->scenario().plan.rope_fusion);
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->liveEvaluation()->current()->evaluation->step_time_s > fusedRopeStep);
    doc->undoStack()->undo();
    QVERIFY(doc->scenario().plan.rope_fusion);
    QVERIFY(rope->isChecked());
    choose(inspector->comboBox(QStringLiteral("elementwise")), 1);
    QVERIFY(!rope->isEnabled());
    doc->undoStack()->undo();
    QVERIFY(rope->isEnabled());

    // FSDP's copies: with ZeRO-3 a step streams the weights through HBM for
    // each gather's copy-out and the gradients' copy-in; views of the
    // buffers (FSDP1, Megatron-FSDP) are faster. Undo puts them back.
    choose(inspector->comboBox(QStringLiteral("zero_stage")), 3);
    QCOMPARE(doc->scenario().plan.zero_stage, 3);
    QVERIFY(waitForEvaluation());
    const double copiesStep = window_->liveEvaluation()->current()->evaluation->step_time_s;
    QCheckBox* copies = inspector->checkBox(QStringLiteral("fsdp_copies"));
    QVERIFY(copies && copies->isChecked());
    inspector->scrollArea()->ensureWidgetVisible(copies);
    QTest::mouseClick(copies, Qt::LeftButton, {}, QPoint(4, copies->height() / 2));
    QVERIFY(!doc->scenario().plan.fsdp_copies);
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->liveEvaluation()->current()->evaluation->step_time_s < copiesStep);
    doc->undoStack()->undo();
    QVERIFY(doc->scenario().plan.fsdp_copies);
    QVERIFY(copies->isChecked());
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.zero_stage, 1);

    // PyTorch's foreach AdamW passes over the state once per op: a longer
    // optimizer step than the fused kernel's.
    QVERIFY(waitForEvaluation());
    const double fusedOptimizer =
        window_->liveEvaluation()->current()->evaluation->breakdown.optimizer_s;
    QComboBox* kernels = inspector->comboBox(QStringLiteral("optimizer_implementation"));
    QVERIFY(kernels && kernels->currentIndex() == 0);
    choose(kernels, 1);
    QCOMPARE(doc->scenario().plan.optimizer_implementation, OptimizerImpl::Foreach);
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->liveEvaluation()->current()->evaluation->breakdown.optimizer_s >
            fusedOptimizer);
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.optimizer_implementation, OptimizerImpl::Fused);
    QCOMPARE(kernels->currentIndex(), 0);

    // Sequence parallelism's second gather (the sample runs TP 8 with SP):
    // unticked, the inputs stay gathered: more memory, no backward gather.
    QCheckBox* regather = inspector->checkBox(QStringLiteral("sequence_parallel_regather"));
    QVERIFY(regather && regather->isEnabled() && regather->isChecked());
    QVERIFY(waitForEvaluation());
    const Evaluation shard = *window_->liveEvaluation()->current()->evaluation;
    inspector->scrollArea()->ensureWidgetVisible(regather);
    QTest::mouseClick(regather, Qt::LeftButton, {}, QPoint(4, regather->height() / 2));
    QVERIFY(!doc->scenario().plan.sequence_parallel_regather);
    QVERIFY(waitForEvaluation());
    const Evaluation& whole = *window_->liveEvaluation()->current()->evaluation;
    QVERIFY(whole.memory.peak_gib_per_gpu > shard.memory.peak_gib_per_gpu);
    QVERIFY(whole.step_time_s < shard.step_time_s);
    doc->undoStack()->undo();
    QVERIFY(regather->isChecked());
    // Without sequence parallelism there is nothing to gather again.
    QCheckBox* sp = inspector->checkBox(QStringLiteral("sequence_parallel"));
    QTest::mouseClick(sp, Qt::LeftButton, {}, QPoint(4, sp->height() / 2));
    QVERIFY(!doc->scenario().plan.sequence_parallel);
    QVERIFY(!regather->isEnabled());
    doc->undoStack()->undo();
    QVERIFY(regather->isEnabled());
    // Hidden dropout, typed: nothing changes until Return, then the masks'
    // passes make the step longer; undo restores "none".
    QVERIFY(waitForEvaluation());
    const double dry = window_->liveEvaluation()->current()->evaluation->step_time_s;
    QDoubleSpinBox* dropout = inspector->doubleSpinBox(QStringLiteral("hidden_dropout"));
    QVERIFY(dropout);
    QCOMPARE(dropout->text(), QStringLiteral("none"));
    inspector->scrollArea()->ensureWidgetVisible(dropout);
    typeInto(dropout, QStringLiteral("0.1"));
    QCOMPARE(doc->scenario().plan.hidden_dropout, 0.0);
    QTest::keyClick(dropout, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.hidden_dropout, 0.1);
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->liveEvaluation()->current()->evaluation->step_time_s > dry);
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.hidden_dropout, 0.0);
    QCOMPARE(dropout->text(), QStringLiteral("none"));
    QVERIFY(inspector->doubleSpinBox(QStringLiteral("attention_dropout")));
    // CUDA graphs: a click on the box, re-evaluated, then undo; the box
    // follows the plan both ways.
    QCheckBox* graphs = inspector->checkBox(QStringLiteral("cuda_graphs"));
    QVERIFY(graphs && !graphs->isChecked());
    inspector->scrollArea()->ensureWidgetVisible(graphs);
    QTest::mouseClick(graphs, Qt::LeftButton, {}, QPoint(4, graphs->height() / 2));
    QVERIFY(doc->scenario().plan.cuda_graphs);
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->liveEvaluation()->current()->evaluation);
    doc->undoStack()->undo();
    QVERIFY(!doc->scenario().plan.cuda_graphs);
    QVERIFY(!graphs->isChecked());

    // Blocking P2P, with the keyboard: the stages wait for their sends over
    // the links between buildings, so the step gets longer; undo restores.
    QVERIFY(waitForEvaluation());
    const double overlapped = window_->liveEvaluation()->current()->evaluation->step_time_s;
    QCheckBox* p2p = inspector->checkBox(QStringLiteral("p2p_overlap"));
    QVERIFY(p2p && p2p->isChecked());
    inspector->scrollArea()->ensureWidgetVisible(p2p);
    p2p->setFocus();
    QTest::keyClick(p2p, Qt::Key_Space);
    QVERIFY(!doc->scenario().plan.p2p_overlap);
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->liveEvaluation()->current()->evaluation->step_time_s > overlapped);
    doc->undoStack()->undo();
    QVERIFY(doc->scenario().plan.p2p_overlap);
    QVERIFY(p2p->isChecked());

    // The attention kernel: auto, the three fused kernels, then unfused.
    QComboBox* kernel = inspector->comboBox(QStringLiteral("attention_kernel"));
    QVERIFY(kernel);
    QCOMPARE(kernel->currentIndex(), 0);
    inspector->scrollArea()->ensureWidgetVisible(kernel);
    kernel->setFocus();
    QTest::keyClick(kernel, Qt::Key_Down);
    QCOMPARE(doc->scenario().plan.attention_kernel, AttentionKernel::Flash2);
    QVERIFY(doc->scenario().plan.flash_attention);
    QVERIFY(waitForEvaluation());
    QTest::keyClick(kernel, Qt::Key_End);
    QVERIFY(!doc->scenario().plan.flash_attention);
    QCOMPARE(kernel->currentIndex(), 4);
    QVERIFY(waitForEvaluation());
    // Arrowing through one combo is one undo step.
    QCOMPARE(doc->undoStack()->index(), 1);
    doc->undoStack()->undo();
    QVERIFY(doc->scenario().plan.flash_attention);
    QCOMPARE(doc->scenario().plan.attention_kernel, AttentionKernel::Auto);
    QCOMPARE(kernel->currentIndex(), 0);

    // Eager elementwise ops stream more bytes: the step gets slower.
    QComboBox* elementwise = inspector->comboBox(QStringLiteral("elementwise"));
    QVERIFY(elementwise);
    QCOMPARE(elementwise->currentIndex(), 0);
    QVERIFY(waitForEvaluation());
    const double fusedStep = window_->liveEvaluation()->current()->evaluation->step_time_s;
    inspector->scrollArea()->ensureWidgetVisible(elementwise);
    elementwise->setFocus();
    QTest::keyClick(elementwise, Qt::Key_Down);
    QCOMPARE(doc->scenario().plan.elementwise, Elementwise::Eager);
    QVERIFY(waitForEvaluation());
    const double eagerStep = window_->liveEvaluation()->current()->evaluation->step_time_s;
    QVERIFY(eagerStep > fusedStep);
    // torch.compile: fused but for the complex RoPE, between the two.
    QTest::keyClick(elementwise, Qt::Key_Down);
    QCOMPARE(doc->scenario().plan.elementwise, Elementwise::Compiled);
    QVERIFY(waitForEvaluation());
    const double compiledStep = window_->liveEvaluation()->current()->evaluation->step_time_s;
    QVERIFY(compiledStep > fusedStep);
    QVERIFY(compiledStep < eagerStep);
    doc->undoStack()->undo();
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.elementwise, Elementwise::Fused);
    QCOMPARE(elementwise->currentIndex(), 0);
}

// Only interleaved has virtual stages, and the plan check refuses any other
// count for the others: the schedule's field sets them with the kind, in one
// undo step, or no schedule could follow another (interleaved at 5 refused
// 1F1B, and 1 refused interleaved).
void TestEditing::scheduleCarriesItsVirtualStages() {
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    QComboBox* schedule = inspector->comboBox(QStringLiteral("schedule"));
    QSpinBox* stages = inspector->spinBox(QStringLiteral("virtual_stages"));
    QVERIFY(schedule && stages);
    // 126 layers over 14 stages: 2 chunks a stage would split them unevenly,
    // 3 evenly (14 microbatches a step, as interleaving needs a multiple).
    Plan plan = doc->scenario().plan;
    QCOMPARE(doc->scenario().model.layers, 126);
    plan.parallelism.pp = 14;
    plan.placement.reset(); // its layers per stage are the sample's 16
    plan.global_batch_sequences = 14 * plan.parallelism.dp * plan.micro_batch_sequences;
    doc->setPlan(plan, QStringLiteral("pipeline"));
    QVERIFY(waitForEvaluation());
    QCOMPARE(doc->scenario().plan.schedule.kind, ScheduleKind::OneFOneB);
    const int steps = doc->undoStack()->count();
    choose(schedule, 2); // interleaved
    QCOMPARE(doc->scenario().plan.schedule.kind, ScheduleKind::Interleaved);
    QCOMPARE(doc->scenario().plan.schedule.virtual_stages, 3);
    QCOMPARE(stages->value(), 3);
    QCOMPARE(doc->undoStack()->count(), steps + 1);
    QVERIFY(waitForEvaluation());
    typeInto(stages, QStringLiteral("9"));
    QTest::keyClick(stages, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.schedule.virtual_stages, 9);
    QVERIFY(waitForEvaluation());
    choose(schedule, 3); // zero-bubble, from interleaved at 9
    QCOMPARE(doc->scenario().plan.schedule.kind, ScheduleKind::ZeroBubble);
    QCOMPARE(doc->scenario().plan.schedule.virtual_stages, 1);
    QCOMPARE(stages->value(), 1);
    QCOMPARE(doc->undoStack()->count(), steps + 3);
    QVERIFY(waitForEvaluation());
    // One undo puts back the interleaved schedule at 9, with its field.
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.schedule.kind, ScheduleKind::Interleaved);
    QCOMPARE(doc->scenario().plan.schedule.virtual_stages, 9);
    QCOMPARE(schedule->currentIndex(), 2);
    QCOMPARE(stages->value(), 9);
    // Where no count splits the layers evenly (126 over 16 stages) the plan
    // check asks for the layers per stage, and the plan stays as it was.
    plan = doc->scenario().plan;
    plan.parallelism.pp = 16;
    plan.schedule = Schedule{};
    plan.global_batch_sequences = 16 * plan.parallelism.dp * plan.micro_batch_sequences;
    doc->setPlan(plan, QStringLiteral("pipeline"));
    QVERIFY(waitForEvaluation());
    QCOMPARE(schedule->currentIndex(), 1);
    choose(schedule, 2);
    QVERIFY2(inspector->problem().contains(QLatin1String("/schedule/virtual_stages")) &&
                 inspector->problem().contains(QLatin1String("layers_per_stage")),
             qPrintable(inspector->problem()));
    QCOMPARE(doc->scenario().plan.schedule.kind, ScheduleKind::OneFOneB);
    QCOMPARE(doc->scenario().plan.schedule.virtual_stages, 1);
}

void TestEditing::optimizerPrecisionFields() {
    // bf16 moments and no masters hold less optimizer state than fp32 ones
    // (6 + 4 bytes a parameter fewer with fp32 gradients); one undo each.
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    QComboBox* moments = inspector->comboBox(QStringLiteral("optimizer_moments"));
    QComboBox* master = inspector->comboBox(QStringLiteral("master_weights"));
    QVERIFY(moments && master);
    QCOMPARE(moments->currentIndex(), 0);
    QCOMPARE(master->currentIndex(), 0);
    QVERIFY(waitForEvaluation());
    const double before = window_->liveEvaluation()->current()->evaluation->memory.optimizer_gib;
    const int steps = doc->undoStack()->count();
    choose(moments, 1);
    QCOMPARE(doc->scenario().plan.optimizer_moments, OptimizerMoments::Bf16);
    choose(master, 2);
    QCOMPARE(doc->scenario().plan.master_weights, MasterWeights::None);
    QCOMPARE(doc->undoStack()->count(), steps + 2);
    QVERIFY(waitForEvaluation());
    const double after = window_->liveEvaluation()->current()->evaluation->memory.optimizer_gib;
    const int gradBytes = doc->scenario().plan.grad_reduce_bytes;
    const double want = gradBytes == 4 ? 4.0 / 12.0 : 6.0 / 16.0;
    QVERIFY2(std::abs(after / before - want) < 1e-9, qPrintable(QString::number(after / before)));
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.master_weights, MasterWeights::Fp32);
    QCOMPARE(master->currentIndex(), 0);
    QCOMPARE(moments->currentIndex(), 1);
    doc->undoStack()->undo();
    QCOMPARE(moments->currentIndex(), 0);
}

void TestEditing::zeroShardGroupIsHsdp() {
    // The sample runs ZeRO-1 over dp 768: its shard group reads 768. A group
    // that does not divide dp is refused with its path and Escape puts the
    // field back; half of dp, typed and applied with Enter, is HSDP: each
    // GPU holds twice the optimizer state. Undo restores one group, and
    // without ZeRO there is nothing to group.
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    QSpinBox* group = spin("dp_shard");
    QVERIFY(group && group->isEnabled());
    const int dp = doc->scenario().plan.parallelism.dp;
    QCOMPARE(group->value(), dp);
    QVERIFY(waitForEvaluation());
    const double whole = window_->liveEvaluation()->current()->evaluation->memory.optimizer_gib;
    typeInto(group, QStringLiteral("5"));
    QTest::keyClick(group, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.dp_shard, 0);
    QVERIFY2(inspector->problem().contains(QLatin1String("/dp_shard")) &&
                 inspector->problem().contains(QLatin1String("must divide dp")),
             qPrintable(inspector->problem()));
    QTest::keyClick(group, Qt::Key_Escape);
    QCOMPARE(group->value(), dp);
    typeInto(group, QString::number(dp / 2));
    QCOMPARE(doc->scenario().plan.dp_shard, 0); // not before Enter
    QTest::keyClick(group, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.dp_shard, dp / 2);
    QCOMPARE(doc->scenario().plan.dpReplicas(), 2);
    QCOMPARE(doc->undoStack()->count(), 1);
    QVERIFY(waitForEvaluation());
    const double half = window_->liveEvaluation()->current()->evaluation->memory.optimizer_gib;
    QVERIFY2(std::abs(half / whole - 2) < 1e-9, qPrintable(QString::number(half / whole)));
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.dp_shard, 0);
    QCOMPARE(group->value(), dp);
    choose(inspector->comboBox(QStringLiteral("zero_stage")), 0);
    QCOMPARE(doc->scenario().plan.zero_stage, 0);
    QVERIFY(!group->isEnabled());
    // HSDP across the buildings (the outer sync) groups the replicas by
    // building: the field shows that group (a building's 256 of the 768)
    // and is set there, not here.
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.zero_stage, 1);
    QVERIFY(group->isEnabled());
    choose(inspector->comboBox(QStringLiteral("outer_sync")), 3);
    QVERIFY(doc->scenario().plan.outer_sync);
    QCOMPARE(doc->scenario().plan.outer_sync->method, OuterSyncMethod::Hsdp);
    QCOMPARE(group->value(), dp / 3);
    QVERIFY(!group->isEnabled());
    QCOMPARE(doc->scenario().plan.dp_shard, 0);
    choose(inspector->comboBox(QStringLiteral("outer_sync")), 0);
    QVERIFY(!doc->scenario().plan.outer_sync);
    QCOMPARE(group->value(), dp);
    QVERIFY(group->isEnabled());
}

void TestEditing::partialRecomputeAndFp8Fields() {
    // Full recompute of every layer, then of the first 2 of each chunk only
    // (Megatron's block method, typed and applied with Enter): less is
    // recomputed, so the step gets faster and the memory larger.
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    choose(inspector->comboBox(QStringLiteral("recompute")), 2);
    QCOMPARE(doc->scenario().plan.recompute, Recompute::Full);
    QVERIFY(waitForEvaluation());
    const Evaluation full = *window_->liveEvaluation()->current()->evaluation;
    choose(inspector->comboBox(QStringLiteral("recompute_method")), 1);
    QCOMPARE(doc->scenario().plan.recompute_method, RecomputeMethod::Block);
    QSpinBox* layers = spin("recompute_layers");
    typeInto(layers, QStringLiteral("2"));
    QCOMPARE(doc->scenario().plan.recompute_layers, 1); // not before Enter
    QTest::keyClick(layers, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.recompute_layers, 2);
    QCOMPARE(doc->undoStack()->count(), 3);
    QVERIFY(waitForEvaluation());
    const Evaluation& block = *window_->liveEvaluation()->current()->evaluation;
    QVERIFY(block.step_time_s < full.step_time_s);
    QVERIFY(block.memory.peak_gib_per_gpu > full.memory.peak_gib_per_gpu);

    // The FP8 knobs edit the plan too (a BF16 model ignores them).
    choose(inspector->comboBox(QStringLiteral("fp8_recipe")), 1);
    QCOMPARE(doc->scenario().plan.fp8_recipe, Fp8Recipe::Delayed);
    choose(inspector->comboBox(QStringLiteral("fp8_linear")), 1);
    QCOMPARE(doc->scenario().plan.fp8_linear, Fp8Linear::Torchao);
    QCOMPARE(doc->undoStack()->count(), 5);
    // The loss kernels: Transformer Engine's stream far fewer bytes than
    // Megatron's default, so the step gets shorter.
    QVERIFY(waitForEvaluation());
    const double megatronLoss = window_->liveEvaluation()->current()->evaluation->step_time_s;
    QCOMPARE(doc->scenario().plan.cross_entropy, CrossEntropy::Megatron);
    choose(inspector->comboBox(QStringLiteral("cross_entropy")), 2);
    QCOMPARE(doc->scenario().plan.cross_entropy, CrossEntropy::Te);
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->liveEvaluation()->current()->evaluation->step_time_s < megatronLoss);
    choose(inspector->comboBox(QStringLiteral("ep_dispatcher")), 2);
    QCOMPARE(doc->scenario().plan.ep_dispatcher, EpDispatcher::HybridEp);
    choose(inspector->comboBox(QStringLiteral("cp_ring")), 4);
    QCOMPARE(doc->scenario().plan.cp_ring, CpRing::TorchAllToAll);
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.cp_ring, CpRing::TeP2p);
    QCOMPARE(inspector->comboBox(QStringLiteral("cp_ring"))->currentIndex(), 0);
    // The ring's hierarchical form: its group only where there is a CP
    // group and Transformer Engine's ring; a group as large as cp is
    // refused with the document's path, the plan kept.
    QSpinBox* cpA2a = spin("cp_a2a_size");
    QVERIFY(!cpA2a->isEnabled());
    const int before = doc->undoStack()->index();
    typeInto(spin("dp"), QString::number(doc->scenario().plan.parallelism.dp / 2));
    QTest::keyClick(spin("dp"), Qt::Key_Return);
    typeInto(spin("cp"), QStringLiteral("2"));
    QTest::keyClick(spin("cp"), Qt::Key_Return);
    QVERIFY2(doc->scenario().plan.parallelism.cp == 2, qPrintable(window_->inspector()->problem()));
    QVERIFY(cpA2a->isEnabled());
    typeInto(cpA2a, QStringLiteral("2"));
    QCOMPARE(doc->scenario().plan.cp_a2a_size, 1); // not before Enter
    QTest::keyClick(cpA2a, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.cp_a2a_size, 1);
    QVERIFY2(window_->inspector()->problem().contains(QLatin1String("/cp_a2a_size")),
             qPrintable(window_->inspector()->problem()));
    QTest::keyClick(cpA2a, Qt::Key_Escape);
    QCOMPARE(cpA2a->value(), 1);
    doc->undoStack()->undo();
    doc->undoStack()->undo();
    QCOMPARE(doc->undoStack()->index(), before);
    QCOMPARE(doc->scenario().plan.parallelism.cp, 1);
    QVERIFY(!cpA2a->isEnabled());
    doc->undoStack()->undo();
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.cross_entropy, CrossEntropy::Megatron);
    QCOMPARE(inspector->comboBox(QStringLiteral("cross_entropy"))->currentIndex(), 0);
    QCOMPARE(inspector->comboBox(QStringLiteral("ep_dispatcher"))->currentIndex(), 0);
    doc->undoStack()->undo();
    doc->undoStack()->undo();
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.recompute_layers, 1);
    QCOMPARE(layers->value(), 1);
    QCOMPARE(inspector->comboBox(QStringLiteral("fp8_recipe"))->currentIndex(), 0);
}

void TestEditing::expertTpField() {
    // Experts over "= TP" until typed; a degree that does not divide TP is
    // refused with the document's path and Escape puts the field back; 1,
    // applied on Enter, puts each expert whole on a GPU (the Mixtral sample:
    // 8 experts, EP 8 inside its TP 8 cells): more weights per GPU. Typing
    // TP itself is the default again. Undo restores; a dense model has no
    // experts to split.
    QVERIFY(!spin("etp")->isEnabled()); // the 405B sample is dense
    QVERIFY(window_->openSample(sampleScenario("two-buildings-mixtral.json")));
    QVERIFY(waitForEvaluation());
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    QSpinBox* etp = spin("etp");
    QVERIFY(etp && etp->isEnabled());
    QCOMPARE(etp->text(), QStringLiteral("= TP"));
    const double weights = window_->liveEvaluation()->current()->evaluation->memory.weights_gib;
    typeInto(etp, QStringLiteral("3"));
    QTest::keyClick(etp, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.parallelism.etp, 0);
    QVERIFY2(inspector->problem().contains(QLatin1String("/parallelism/etp: must divide tp (8)")),
             qPrintable(inspector->problem()));
    QTest::keyClick(etp, Qt::Key_Escape);
    QCOMPARE(etp->text(), QStringLiteral("= TP"));
    typeInto(etp, QStringLiteral("1"));
    QCOMPARE(doc->scenario().plan.parallelism.etp, 0); // not before Enter
    QTest::keyClick(etp, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.parallelism.etp, 1);
    QVERIFY(inspector->problem().isEmpty());
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->liveEvaluation()->current()->evaluation->memory.weights_gib > 2 * weights);
    typeInto(etp, QStringLiteral("8"));
    QTest::keyClick(etp, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.parallelism.etp, 0);
    QCOMPARE(etp->text(), QStringLiteral("= TP"));
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.parallelism.etp, 1);
    QCOMPARE(etp->value(), 1);
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.parallelism.etp, 0);
}

void TestEditing::epDispatcherSmsField() {
    // The SMs the flex dispatcher holds: off for the all-to-all, "default"
    // until typed, applied on Enter, refused past the GPU's SMs with the
    // document's path, Escape puts the field back.
    QVERIFY(window_->openSample(sampleScenario("two-buildings-mixtral.json")));
    QVERIFY(waitForEvaluation());
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    QVERIFY(doc->scenario().plan.parallelism.ep > 1);
    QSpinBox* sms = spin("ep_dispatcher_sms");
    QVERIFY(sms);
    QVERIFY(!sms->isEnabled()); // the all-to-all: NCCL picks its CTAs
    QCOMPARE(sms->text(), QStringLiteral("default"));
    choose(inspector->comboBox(QStringLiteral("ep_dispatcher")), 2); // HybridEP
    QVERIFY(sms->isEnabled());
    typeInto(sms, QStringLiteral("32"));
    QCOMPARE(doc->scenario().plan.ep_dispatcher_sms, 0); // not before Enter
    QTest::keyClick(sms, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.ep_dispatcher_sms, 32);
    QCOMPARE(doc->undoStack()->count(), 2);
    typeInto(sms, QStringLiteral("500"));
    QTest::keyClick(sms, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.ep_dispatcher_sms, 32);
    QVERIFY2(inspector->problem().contains(QLatin1String("/ep_dispatcher_sms")),
             qPrintable(inspector->problem()));
    QTest::keyClick(sms, Qt::Key_Escape);
    QCOMPARE(sms->value(), 32);
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.ep_dispatcher_sms, 0);
    QCOMPARE(sms->text(), QStringLiteral("default"));
    doc->undoStack()->undo();
    QVERIFY(!sms->isEnabled());
}

void TestEditing::fp8WeightGatherOnlyForFp8Models() {
    // The default sample's model is BF16: it has no FP8 weights to gather,
    // so the box is off and cannot be ticked.
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    QCheckBox* gather = inspector->checkBox(QStringLiteral("fp8_param_gather"));
    QVERIFY(gather);
    QCOMPARE(doc->scenario().model.dtype, DType::BF16);
    QVERIFY(!gather->isEnabled() && !gather->isChecked());
    inspector->scrollArea()->ensureWidgetVisible(gather);
    QTest::mouseClick(gather, Qt::LeftButton, {}, QPoint(4, gather->height() / 2));
    QVERIFY(!doc->scenario().plan.fp8_param_gather);
    QCOMPARE(doc->undoStack()->count(), 0);

    // The FP8 sample gathers its FP8 weights at 1 byte. A click switches
    // that off: BF16 gathers and a cast of the weights each step make it
    // slower, and the BF16 weights with their FP8 copy take more memory.
    QVERIFY(window_->openSample(sampleScenario("single-building-70b-fp8.json")));
    QCOMPARE(doc->scenario().model.dtype, DType::FP8);
    QVERIFY(gather->isEnabled() && gather->isChecked());
    QVERIFY(waitForEvaluation());
    const Evaluation on = *window_->liveEvaluation()->current()->evaluation;
    inspector->scrollArea()->ensureWidgetVisible(gather);
    QTest::mouseClick(gather, Qt::LeftButton, {}, QPoint(4, gather->height() / 2));
    QVERIFY(!doc->scenario().plan.fp8_param_gather);
    QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Disable fp8 weight gather"));
    QVERIFY(waitForEvaluation());
    const Evaluation& off = *window_->liveEvaluation()->current()->evaluation;
    QVERIFY2(off.step_time_s > on.step_time_s,
             qPrintable(QStringLiteral("%1 vs %2 s").arg(off.step_time_s).arg(on.step_time_s)));
    QVERIFY(off.memory.peak_gib_per_gpu > on.memory.peak_gib_per_gpu);
    // Still an FP8 model: the box stays usable, and undo ticks it again.
    QVERIFY(gather->isEnabled() && !gather->isChecked());
    doc->undoStack()->undo();
    QVERIFY(doc->scenario().plan.fp8_param_gather);
    QVERIFY(gather->isChecked());
}

void TestEditing::recomputeModulesFromTheMenu() {
    // The 405B sample recomputes selectively (Megatron-Core's default
    // module, core_attn). Ticking mlp in the button's menu, by keyboard,
    // re-runs the MLPs too: less memory, a longer step, one undo step.
    // Escape in the menu changes nothing; without selective recompute the
    // button is off.
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    auto* button = inspector->findChild<QToolButton*>(QStringLiteral("recompute_modules"));
    QVERIFY(button);
    QCOMPARE(doc->scenario().plan.recompute, Recompute::Selective);
    QVERIFY(button->isEnabled());
    QCOMPARE(button->text(), QStringLiteral("core_attn"));
    QVERIFY(waitForEvaluation());
    const Evaluation before = *window_->liveEvaluation()->current()->evaluation;
    inspector->scrollArea()->ensureWidgetVisible(button);
    const auto inMenu = [&](std::vector<Qt::Key> keys) {
        QTimer::singleShot(0, [keys] {
            QWidget* menu = QApplication::activePopupWidget();
            QVERIFY(menu);
            for (Qt::Key k : keys)
                QTest::keyClick(menu, k);
        });
        QTest::mouseClick(button, Qt::LeftButton);
    };
    inMenu({Qt::Key_Down, Qt::Key_Escape});
    QCOMPARE(doc->scenario().plan.recompute_modules, recomputeBit(RecomputeModule::CoreAttn));
    QCOMPARE(doc->undoStack()->count(), 0);
    // core_attn, layernorm, mlp: the third entry.
    inMenu({Qt::Key_Down, Qt::Key_Down, Qt::Key_Down, Qt::Key_Return});
    QCOMPARE(doc->scenario().plan.recompute_modules,
             recomputeBit(RecomputeModule::CoreAttn) | recomputeBit(RecomputeModule::Mlp));
    QCOMPARE(button->text(), QStringLiteral("core_attn, mlp"));
    QCOMPARE(doc->undoStack()->count(), 1);
    QVERIFY(waitForEvaluation());
    const Evaluation& mlp = *window_->liveEvaluation()->current()->evaluation;
    QVERIFY(mlp.step_time_s > before.step_time_s);
    QVERIFY(mlp.memory.activations_gib < before.memory.activations_gib);
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan.recompute_modules, recomputeBit(RecomputeModule::CoreAttn));
    QCOMPARE(button->text(), QStringLiteral("core_attn"));
    // The offscreen platform leaves the closed menu the active window.
    QApplication::setActiveWindow(window_.get());
    QVERIFY(window_->isActiveWindow());
    choose(inspector->comboBox(QStringLiteral("recompute")), 0);
    QCOMPARE(doc->scenario().plan.recompute, Recompute::None);
    QVERIFY(!button->isEnabled());
}

void TestEditing::frameworkSetsItsDefaults() {
    // Choosing torchtitan in the combo, by keyboard: its software defaults
    // (FSDP, SDPA's FlashAttention-2, eager elementwise ops) in one undo
    // step, the plan's structure untouched; undo puts the plan back.
    Document* doc = window_->document();
    const Plan before = doc->scenario().plan;
    QComboBox* framework = window_->inspector()->comboBox(QStringLiteral("framework"));
    QVERIFY(framework);
    QCOMPARE(framework->currentIndex(), 0);
    choose(framework, 3);
    const Plan& p = doc->scenario().plan;
    QVERIFY(p.framework == TrainingFramework::Torchtitan);
    QCOMPARE(p.zero_stage, 3);
    QCOMPARE(p.attention_kernel, AttentionKernel::Flash2);
    QCOMPARE(p.elementwise, Elementwise::Eager);
    QCOMPARE(p.parallelism, before.parallelism);
    QCOMPARE(p.rank_order, before.rank_order);
    QCOMPARE(p.schedule, before.schedule);
    QCOMPARE(doc->undoStack()->count(), 1);
    QCOMPARE(window_->inspector()->comboBox(QStringLiteral("elementwise"))->currentIndex(), 1);
    QVERIFY(waitForEvaluation());
    doc->undoStack()->undo();
    QCOMPARE(doc->scenario().plan, before);
    QCOMPARE(framework->currentIndex(), 0);
}

void TestEditing::wheelOverUnfocusedFieldScrollsTheInspector() {
    Document* doc = window_->document();
    const Scenario original = doc->scenario();
    QScrollArea* scroll = window_->inspector()->scrollArea();
    QScrollBar* bar = scroll->verticalScrollBar();
    QVERIFY2(bar->maximum() > 0, "the inspector must be taller than its dock here");
    window_->topologyView()->setFocus();
    QSpinBox* layers = spin("layers");
    QComboBox* schedule = window_->inspector()->comboBox(QStringLiteral("schedule"));
    QVERIFY(!layers->hasFocus() && !schedule->hasFocus());

    // Over the text of an unfocused spin box (the event goes to its line
    // edit first, as the mouse is over it), then over a combo box.
    scroll->ensureWidgetVisible(layers);
    const int bottom = bar->value();
    auto* layersText = layers->findChild<QLineEdit*>();
    for (QWidget* target : {static_cast<QWidget*>(layersText), static_cast<QWidget*>(schedule)}) {
        const QPointF at = QPointF(target->rect().center());
        QWheelEvent up(at, target->mapToGlobal(at), {}, QPoint(0, 120), Qt::NoButton,
                       Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(target, &up);
    }
    QCOMPARE(layers->value(), 126);
    QCOMPARE(doc->scenario(), original);
    QCOMPARE(doc->undoStack()->count(), 0);
    QVERIFY2(bar->value() < bottom,
             qPrintable(QStringLiteral("%1 -> %2").arg(bottom).arg(bar->value())));
    QVERIFY(!layers->hasFocus());
}

void TestEditing::wheelChangesTheFocusedField() {
    Document* doc = window_->document();
    QSpinBox* layers = spin("layers");
    typeInto(layers, QString());
    QTest::keyClick(layers, Qt::Key_Escape); // the focus, nothing typed
    QVERIFY(layers->hasFocus());
    QScrollBar* bar = window_->inspector()->scrollArea()->verticalScrollBar();
    const int scrolled = bar->value();
    const QPointF at = QPointF(layers->rect().center());
    QWheelEvent down(at, layers->mapToGlobal(at), {}, QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                     Qt::NoScrollPhase, false);
    QApplication::sendEvent(layers, &down);
    QCOMPARE(layers->value(), 125);
    QCOMPARE(doc->scenario().model.layers, 125);
    QCOMPARE(doc->undoStack()->count(), 1);
    QCOMPARE(bar->value(), scrolled);
}

void TestEditing::escapeCancelsAChipDrag() {
    Document* doc = window_->document();
    const Scenario original = doc->scenario();
    TopologyView* view = window_->topologyView();
    const int moving = chipOf(0, 1);
    const int target = chipOf(15, 0);
    QVERIFY(moving >= 0 && target >= 0);
    ChipItem* chip = view->chipItem(moving);
    const QPointF home = chip->pos();
    QSignalSpy dropped(view, &TopologyView::chipDropped);
    QSignalSpy cancelled(view, &TopologyView::chipDragCancelled);

    dragChip(moving, target, false);
    QVERIFY(view->isDragging());
    QVERIFY(chip->pos() != home);
    QVERIFY(view->hasFocus());
    QTest::keyClick(view, Qt::Key_Escape);
    QVERIFY(!view->isDragging());
    QCOMPARE(cancelled.count(), 1);
    QCOMPARE(view->chipItem(moving), chip);
    QCOMPARE(chip->pos(), home);
    QVERIFY(!chip->isDragging());
    QVERIFY(view->buildingItem(0)->dropState() == BuildingItem::DropState::None);
    // The preview is dropped: the views show the document's plan again.
    QVERIFY(waitForEvaluation());
    QCOMPARE(window_->shownSnapshot()->plan, original.plan);
    QVERIFY(!window_->statusText().contains(QLatin1String("Preview")));

    // The rest of the gesture does nothing: moves and the release over B1.
    const QPoint end = view->mapFromScene(view->chipItem(target)->sceneBoundingRect().center());
    QTest::mouseMove(view->viewport(), end + QPoint(3, 3));
    QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, end);
    QTest::qWait(50);
    QCOMPARE(dropped.count(), 0);
    QCOMPARE(doc->undoStack()->count(), 0);
    QCOMPARE(doc->scenario(), original);
    QCOMPARE(chip->pos(), home);
    QVERIFY(!window_->shownSnapshot()->preview);

    // And the next drag works as ever.
    dragChip(moving, target, true);
    QTRY_COMPARE(dropped.count(), 1);
    QCOMPARE(doc->undoStack()->count(), 1);
}

void TestEditing::undoShortcutFromACommittedField() {
    // Enter commits and leaves the focus in the field: Ctrl+Z there undoes
    // the document's change (the field has nothing of its own to undo),
    // Ctrl+Y redoes it. While a typed value waits for Enter, Ctrl+Z is the
    // field's own and the document keeps its state.
    Document* doc = window_->document();
    QSpinBox* mbs = spin("micro_batch_sequences");
    const int before = mbs->value();
    typeInto(mbs, QStringLiteral("2"));
    QTest::keyClick(mbs, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.micro_batch_sequences, 2);
    QCOMPARE(doc->undoStack()->index(), 1);
    QVERIFY(mbs->hasFocus());
    QTest::keyClick(mbs, Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(doc->undoStack()->index(), 0);
    QCOMPARE(doc->scenario().plan.micro_batch_sequences, before);
    QCOMPARE(mbs->value(), before);
    QTest::keyClick(mbs, Qt::Key_Y, Qt::ControlModifier);
    QCOMPARE(doc->undoStack()->index(), 1);
    QCOMPARE(mbs->value(), 2);
    // Typed, not committed: the field's undo, not the document's.
    QTest::keyClick(mbs, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(mbs, QStringLiteral("4"));
    QTest::keyClick(mbs, Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(doc->undoStack()->index(), 1);
    QCOMPARE(doc->scenario().plan.micro_batch_sequences, 2);
    QCOMPARE(mbs->text(), QStringLiteral("2"));
    QTest::keyClick(mbs, Qt::Key_Escape);
    QCOMPARE(mbs->value(), 2);
    // Escape dropped the typing: Ctrl+Z is the document's again.
    QTest::keyClick(mbs, Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(doc->undoStack()->index(), 0);
}

void TestEditing::ctrlYRedoes() {
    Document* doc = window_->document();
    typeInto(spin("micro_batch_sequences"), QStringLiteral("2"));
    QTest::keyClick(spin("micro_batch_sequences"), Qt::Key_Return);
    window_->topologyView()->setFocus();
    QCOMPARE(doc->undoStack()->index(), 1);
    QTest::keyClick(window_->topologyView(), Qt::Key_Z, Qt::ControlModifier);
    QCOMPARE(doc->undoStack()->index(), 0);
    QTest::keyClick(window_->topologyView(), Qt::Key_Y, Qt::ControlModifier);
    QCOMPARE(doc->undoStack()->index(), 1);
    QCOMPARE(doc->scenario().plan.micro_batch_sequences, std::int64_t(2));
    QTest::keyClick(window_->topologyView(), Qt::Key_Z, Qt::ControlModifier);
    QTest::keyClick(window_->topologyView(), Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    QCOMPARE(doc->undoStack()->index(), 1);
}

void TestEditing::openingAnotherScenarioUnpins() {
    QTest::keyClick(window_->topologyView(), Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(window_->pinnedSnapshot());
    // A plan change keeps the pin: that is what it is for.
    typeInto(spin("micro_batch_sequences"), QStringLiteral("2"));
    QTest::keyClick(spin("micro_batch_sequences"), Qt::Key_Return);
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->pinnedSnapshot());
    QVERIFY(!window_->comparePanel()->summary().isEmpty());

    window_->document()->undoStack()->setClean();
    QVERIFY(window_->openSample(sampleScenario("two-buildings-mixtral.json")));
    QVERIFY(!window_->pinnedSnapshot());
    const QString message = window_->statusBar()->currentMessage();
    QVERIFY2(message.startsWith(QLatin1String("Unpinned llama3-405b-three-buildings")),
             qPrintable(message));
    QVERIFY(message.contains(QLatin1String("two-buildings-mixtral")));
    QVERIFY(waitForEvaluation());
    QVERIFY(!window_->pinnedSnapshot());
    // The compare panel says why it holds nothing, until the next pin.
    QString summary = window_->comparePanel()->summary();
    QVERIFY2(!summary.contains(QLatin1String("faster")) &&
                 !summary.contains(QLatin1String("slower")),
             qPrintable(summary));
    QVERIFY2(summary.startsWith(QLatin1String("Unpinned llama3-405b-three-buildings")),
             qPrintable(summary));
    QTest::keyClick(window_->topologyView(), Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(window_->pinnedSnapshot());
    QCOMPARE(window_->pinnedSnapshot()->plan.name, std::string("mixtral-8x22b-campus"));
    summary = window_->comparePanel()->summary();
    QVERIFY2(!summary.contains(QLatin1String("Unpinned")), qPrintable(summary));
}

// The outer sync, checkpoints and the run's budget, typed as a user types
// them; the Run panel shows what they change.
void TestEditing::outerSyncAndRunFields() {
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    const Scenario original = doc->scenario();
    QVERIFY(!original.plan.outer_sync);
    QSpinBox* h = spin("inner_steps");
    QSpinBox* fragments = spin("fragments");
    QVERIFY(h && fragments);
    QVERIFY(!h->isEnabled() && !fragments->isEnabled());

    choose(inspector->comboBox(QStringLiteral("outer_sync")), 1); // DiLoCo
    QVERIFY(doc->scenario().plan.outer_sync);
    QCOMPARE(doc->scenario().plan.outer_sync->method, OuterSyncMethod::Diloco);
    QCOMPARE(doc->scenario().plan.outer_sync->inner_steps, 100);
    QVERIFY(h->isEnabled() && !fragments->isEnabled());
    QCOMPARE(h->value(), 100);

    // H 50: "5" on the way is not applied.
    typeInto(h, QStringLiteral("50"));
    QCOMPARE(doc->scenario().plan.outer_sync->inner_steps, 100);
    QTest::keyClick(h, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.outer_sync->inner_steps, 50);
    QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Set Inner steps (H) to 50"));

    // Streaming DiLoCo starts with 4 fragments; more fragments than H is
    // refused with the document's JSON path.
    choose(inspector->comboBox(QStringLiteral("outer_sync")), 2);
    QCOMPARE(doc->scenario().plan.outer_sync->method, OuterSyncMethod::StreamingDiloco);
    QCOMPARE(doc->scenario().plan.outer_sync->fragments, 4);
    QVERIFY(fragments->isEnabled());
    typeInto(fragments, QStringLiteral("60"));
    QTest::keyClick(fragments, Qt::Key_Return);
    QVERIFY2(inspector->problem().contains(QLatin1String("/outer_sync/fragments")),
             qPrintable(inspector->problem()));
    QCOMPARE(doc->scenario().plan.outer_sync->fragments, 4);
    QTest::keyClick(fragments, Qt::Key_Escape);
    QCOMPARE(fragments->value(), 4);

    // The token budget in billions: 15,000 B = 15T tokens.
    QDoubleSpinBox* budget = inspector->doubleSpinBox(QStringLiteral("token_budget"));
    QVERIFY(budget);
    QCOMPARE(budget->text(), QStringLiteral("none"));
    typeInto(budget, QStringLiteral("15000"));
    QCOMPARE(doc->scenario().plan.token_budget, 0.0);
    QTest::keyClick(budget, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.token_budget, 15e12);

    // Checkpoints: the Young/Daly interval until a number is typed.
    QSpinBox* interval = spin("checkpoint_interval");
    QCOMPARE(interval->text(), QStringLiteral("optimal (Young/Daly)"));
    typeInto(interval, QStringLiteral("500"));
    QTest::keyClick(interval, Qt::Key_Return);
    QCOMPARE(doc->scenario().plan.checkpoint.interval_steps, std::int64_t(500));

    QVERIFY(waitForEvaluation());
    auto* panel = window_->findChild<RunPanel*>();
    QVERIFY(panel);
    const Evaluation& e = *window_->shownSnapshot()->evaluation;
    QVERIFY(e.outer_sync && e.run);
    QCOMPARE(panel->value(QStringLiteral("Goodput"), QStringLiteral("Goodput")),
             formatPercent(e.goodput.goodput));
    QVERIFY2(
        panel->value(QStringLiteral("Goodput"), QStringLiteral("Checkpoint interval"))
            .startsWith(QLatin1String("500 steps")),
        qPrintable(panel->value(QStringLiteral("Goodput"), QStringLiteral("Checkpoint interval"))));
    QCOMPARE(panel->value(QStringLiteral("Outer sync"), QStringLiteral("Inner steps")),
             QStringLiteral("H 50, 4 fragments"));
    QCOMPARE(panel->value(QStringLiteral("Run"), QStringLiteral("Tokens")),
             QStringLiteral("15.00 T"));
    QCOMPARE(panel->value(QStringLiteral("Run"), QStringLiteral("Time to the tokens")),
             formatDuration(e.run->time_s));
    // Unpriced: no dollar rows.
    QVERIFY(panel->value(QStringLiteral("Run"), QStringLiteral("Cost")).isEmpty());

    // HSDP drops DiLoCo's knobs; synchronous DP drops the outer sync.
    choose(inspector->comboBox(QStringLiteral("outer_sync")), 3);
    QCOMPARE(doc->scenario().plan.outer_sync->method, OuterSyncMethod::Hsdp);
    QVERIFY(!h->isEnabled());
    choose(inspector->comboBox(QStringLiteral("outer_sync")), 0);
    QVERIFY(!doc->scenario().plan.outer_sync);
    while (doc->undoStack()->canUndo())
        doc->undoStack()->undo();
    QCOMPARE(doc->scenario(), original);
}

// A building's price and a link's degradation, chosen with the selectors.
void TestEditing::buildingAndLinkFieldsEditTheCluster() {
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    const Scenario original = doc->scenario();
    QComboBox* building = inspector->buildingSelector();
    QVERIFY(building);
    QCOMPARE(building->count(), int(original.cluster.buildings.size()));
    choose(building, 1);
    QDoubleSpinBox* price = inspector->doubleSpinBox(QStringLiteral("building/gpu_hour_usd"));
    QVERIFY(price);
    QCOMPARE(price->text(), QStringLiteral("not priced"));
    typeInto(price, QStringLiteral("2.5"));
    QTest::keyClick(price, Qt::Key_Return);
    QCOMPARE(doc->scenario().cluster.buildings[1].gpu_hour_usd, 2.5);
    QCOMPARE(doc->scenario().cluster.buildings[0].gpu_hour_usd, 0.0);
    // The field follows the selector.
    choose(building, 0);
    QCOMPARE(price->text(), QStringLiteral("not priced"));
    choose(building, 1);
    QCOMPARE(price->value(), 2.5);

    // A degraded link: the fraction alone fills in half the link.
    QComboBox* link = inspector->linkSelector();
    QVERIFY(link && link->count() == int(original.cluster.links.size()));
    choose(link, 0);
    const Link& l0 = original.cluster.links[0];
    QDoubleSpinBox* fraction = inspector->doubleSpinBox(QStringLiteral("link/degraded_fraction"));
    QDoubleSpinBox* degraded =
        inspector->doubleSpinBox(QStringLiteral("link/degraded_bandwidth_gbps"));
    QVERIFY(fraction && degraded);
    typeInto(fraction, QStringLiteral("5"));
    QTest::keyClick(fraction, Qt::Key_Return);
    QCOMPARE(doc->scenario().cluster.links[0].degraded_fraction, 0.05);
    QCOMPARE(doc->scenario().cluster.links[0].degraded_bandwidth_gbps,
             std::round(l0.background_gbps + (l0.bandwidth_gbps - l0.background_gbps) / 2));
    QCOMPARE(degraded->value(), doc->scenario().cluster.links[0].degraded_bandwidth_gbps);
    // More than the link is refused.
    typeInto(degraded, QString::number(2 * l0.bandwidth_gbps, 'f', 0));
    QTest::keyClick(degraded, Qt::Key_Return);
    QVERIFY2(inspector->problem().contains(QLatin1String("degraded_bandwidth_gbps")),
             qPrintable(inspector->problem()));
    QTest::keyClick(degraded, Qt::Key_Escape);

    QVERIFY(waitForEvaluation());
    const Evaluation& e = *window_->shownSnapshot()->evaluation;
    QCOMPARE(int(e.degraded_steps.size()), 1);
    QVERIFY(e.cost.priced);
    auto* panel = window_->findChild<RunPanel*>();
    QVERIFY(panel);
    QCOMPARE(panel->value(QStringLiteral("Per step"), QStringLiteral("Cost")),
             formatUsd(e.cost.cost_usd_per_step));
    QCOMPARE(panel->value(QStringLiteral("Per million tokens"), QStringLiteral("Cost")),
             formatUsd(e.cost.usd_per_mtok));
    QCOMPARE(panel->value(QStringLiteral("Per million tokens"), QStringLiteral("Wall clock")),
             formatDuration(e.cost.time_s_per_mtok));
    QVERIFY(!panel
                 ->value(QStringLiteral("Goodput"),
                         QStringLiteral("Degraded ") + QString::fromStdString(l0.name))
                 .isEmpty());
    while (doc->undoStack()->canUndo())
        doc->undoStack()->undo();
    QCOMPARE(doc->scenario(), original);
}

// A GPU and a host MTBF of 1 h typed into every building: the job fails
// every fraction of a second, goodput is 0, and the run panel and the status
// bar say "never" where there is no finite figure.
void TestEditing::failuresFasterThanAStepShowNever() {
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    const Scenario original = doc->scenario();
    QComboBox* building = inspector->buildingSelector();
    QVERIFY(building);
    for (int b = 0; b < building->count(); ++b) {
        choose(building, b);
        for (const char* key : {"building/gpu_mtbf_hours", "building/host_mtbf_hours"}) {
            QDoubleSpinBox* mtbf = inspector->doubleSpinBox(QLatin1String(key));
            QVERIFY(mtbf);
            typeInto(mtbf, QStringLiteral("1"));
            QTest::keyClick(mtbf, Qt::Key_Return);
        }
        QCOMPARE(doc->scenario().cluster.buildings[std::size_t(b)].gpu_mtbf_hours, 1.0);
        QCOMPARE(doc->scenario().cluster.buildings[std::size_t(b)].host_mtbf_hours, 1.0);
    }
    QVERIFY(waitForEvaluation());
    const Evaluation& e = *window_->shownSnapshot()->evaluation;
    QCOMPARE(e.goodput.goodput, 0.0);
    auto* panel = window_->findChild<RunPanel*>();
    QVERIFY(panel);
    // A checkpoint every step, said in the singular.
    QCOMPARE(e.goodput.interval_steps, std::int64_t(1));
    QVERIFY2(
        panel->value(QStringLiteral("Goodput"), QStringLiteral("Checkpoint interval"))
            .startsWith(QStringLiteral("1 step (")),
        qPrintable(panel->value(QStringLiteral("Goodput"), QStringLiteral("Checkpoint interval"))));
    QCOMPARE(panel->value(QStringLiteral("Per million tokens"), QStringLiteral("Wall clock")),
             QStringLiteral("never"));
    QVERIFY(panel->value(QStringLiteral("Per million tokens"), QStringLiteral("Energy")).isEmpty());
    for (QTreeWidgetItemIterator it(panel->tree()); *it; ++it)
        QVERIFY2(!(*it)->text(1).contains(QLatin1String("inf")), qPrintable((*it)->text(1)));
    while (doc->undoStack()->canUndo())
        doc->undoStack()->undo();
    QCOMPARE(doc->scenario(), original);
    QVERIFY(waitForEvaluation());
    QVERIFY(window_->shownSnapshot()->evaluation->goodput.goodput > 0);
    QCOMPARE(panel->value(QStringLiteral("Per million tokens"), QStringLiteral("Wall clock")),
             formatDuration(window_->shownSnapshot()->evaluation->cost.time_s_per_mtok));
}

// Each cluster field stops where a file's value must stop
// (formats/json_check.h): whatever a file holds, its field can show it, and
// nothing typed there is a value a file would refuse.
void TestEditing::clusterFieldsTakeTheFilesRanges() {
    PlanInspector* inspector = window_->inspector();
    const std::pair<const char*, const formats::NumberRange*> fields[] = {
        {"building/scale_up_gbps", &formats::kScaleUpGbpsRange},
        {"building/scale_out_gbps", &formats::kScaleOutGbpsRange},
        {"building/zone_oversubscription", &formats::kOversubscriptionRange},
        {"building/building_oversubscription", &formats::kOversubscriptionRange},
        {"building/gpu_mtbf_hours", &formats::kMtbfHoursRange},
        {"building/host_mtbf_hours", &formats::kMtbfHoursRange},
        {"building/restart_s", &formats::kRestartSRange},
        {"building/storage_write_gbps", &formats::kStorageGbpsRange},
        {"building/storage_read_gbps", &formats::kStorageGbpsRange},
        {"building/straggler_slowdown", &formats::kStragglerRange},
        {"building/step_jitter", &formats::kStepJitterRange},
        {"building/gpu_hour_usd", &formats::kGpuHourUsdRange},
        {"building/host_power_w", &formats::kHostPowerWRange},
        {"building/network_power_w_per_gpu", &formats::kNetworkPowerWRange},
        {"building/pue", &formats::kPueRange},
        {"link/bandwidth_gbps", &formats::kLinkGbpsRange},
        {"link/latency_ms", &formats::kLinkLatencyMsRange},
        {"link/background_gbps", &formats::kLinkGbpsOrNoneRange},
        {"link/price_per_gb_usd", &formats::kTransportPriceRange},
        {"link/degraded_bandwidth_gbps", &formats::kLinkGbpsOrNoneRange},
    };
    for (const auto& [key, range] : fields) {
        QDoubleSpinBox* box = inspector->doubleSpinBox(QLatin1String(key));
        QVERIFY2(box, key);
        QVERIFY2(range->max, key);
        QCOMPARE(box->maximum(), *range->max);
    }
    // The largest latency a file may give, typed: applied and shown whole.
    Document* doc = window_->document();
    const Scenario original = doc->scenario();
    QDoubleSpinBox* latency = inspector->doubleSpinBox(QStringLiteral("link/latency_ms"));
    typeInto(latency, QStringLiteral("10000"));
    QTest::keyClick(latency, Qt::Key_Return);
    QCOMPARE(doc->scenario().cluster.links[0].latency_ms, *formats::kLinkLatencyMsRange.max);
    QVERIFY(inspector->problem().isEmpty());
    while (doc->undoStack()->canUndo())
        doc->undoStack()->undo();
    QCOMPARE(doc->scenario(), original);
}

// Layers per stage typed, balanced and evened; the rank order says what it
// puts across buildings; routing and NCCL knobs as plan overrides.
void TestEditing::layersPerStageAndRankOrder() {
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    const Scenario original = doc->scenario();
    const int pp = original.plan.parallelism.pp;
    QLineEdit* edit = inspector->layersPerStage();
    QVERIFY(edit);
    // The sample's own split (Llama 3's lighter first and last stages).
    QVERIFY(original.plan.placement);
    QStringList given;
    for (int l : original.plan.placement->layers_per_stage)
        given << QString::number(l);
    QCOMPARE(edit->text(), given.join(QStringLiteral(", ")));

    // A split typed as a list: applied on Enter, not while typing.
    Plan evenPlan = original.plan;
    evenPlan.placement.reset();
    std::vector<int> typed = layersPerStage(original.model, evenPlan);
    QCOMPARE(int(typed.size()), pp);
    typed.front() -= 1;
    typed.back() += 1;
    QStringList split;
    for (int l : typed)
        split << QString::number(l);
    inspector->scrollArea()->ensureWidgetVisible(edit);
    QTest::mouseClick(edit, Qt::LeftButton);
    QTest::keyClick(edit, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(edit, split.join(QStringLiteral(", ")));
    QCOMPARE(doc->scenario(), original);
    QTest::keyClick(edit, Qt::Key_Return);
    QVERIFY(doc->scenario().plan.placement);
    QCOMPARE(int(doc->scenario().plan.placement->layers_per_stage.size()), pp);
    QCOMPARE(doc->scenario().plan.placement->layers_per_stage, typed);

    // Not a number: refused, named; a wrong sum: refused by the plan check.
    QTest::keyClick(edit, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(edit, QStringLiteral("8, x"));
    QTest::keyClick(edit, Qt::Key_Return);
    QVERIFY2(inspector->problem().contains(QLatin1String("'x'")), qPrintable(inspector->problem()));
    QTest::keyClick(edit, Qt::Key_Escape);
    QCOMPARE(edit->text(), split.join(QStringLiteral(", ")));
    QTest::keyClick(edit, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(edit, QStringLiteral("1, 2"));
    QTest::keyClick(edit, Qt::Key_Return);
    QVERIFY2(inspector->problem().contains(QLatin1String("layers_per_stage")),
             qPrintable(inspector->problem()));
    QCOMPARE(int(doc->scenario().plan.placement->layers_per_stage.size()), pp);
    QTest::keyClick(edit, Qt::Key_Escape);

    // Balance: the core's balanced split; Even: none.
    auto* balance = inspector->findChild<QToolButton*>(QStringLiteral("balanceLayers"));
    auto* even = inspector->findChild<QToolButton*>(QStringLiteral("evenLayers"));
    QVERIFY(balance && even);
    QTest::mouseClick(balance, Qt::LeftButton);
    const Scenario& now = doc->scenario();
    QCOMPARE(now.plan.placement->layers_per_stage,
             balancedLayers(now.cluster, now.model, now.plan));
    QTest::mouseClick(even, Qt::LeftButton);
    QVERIFY(!doc->scenario().plan.placement ||
            doc->scenario().plan.placement->layers_per_stage.empty());
    QVERIFY(edit->text().isEmpty());
    QCOMPARE(edit->placeholderText(), QStringLiteral("even split"));

    // Rank order: dp outermost puts DP across buildings; the list says what
    // each order would (pp outermost: 16 stages of 6,144 GPUs over buildings
    // of 32,768 split stage 5's replicas too).
    auto* across = inspector->findChild<QLabel*>(QStringLiteral("acrossBuildings"));
    QVERIFY(across);
    QCOMPARE(across->text(), QStringLiteral("Across buildings: DP"));
    QComboBox* rank = inspector->comboBox(QStringLiteral("rank_order"));
    int ppOuter = -1;
    for (int i = 0; i < rank->count(); ++i)
        if (rank->itemText(i).startsWith(QStringLiteral("tp › cp › dp › pp")))
            ppOuter = i;
    QVERIFY(ppOuter >= 0);
    QVERIFY2(rank->itemText(ppOuter).endsWith(QStringLiteral("— PP and DP")),
             qPrintable(rank->itemText(ppOuter)));
    choose(rank, ppOuter);
    QCOMPARE(doc->scenario().plan.rank_order,
             (std::vector<Dim>{Dim::TP, Dim::CP, Dim::DP, Dim::PP}));
    QCOMPARE(across->text(), QStringLiteral("Across buildings: PP and DP"));
    // The orders the plan check refuses (pp or dp inside tp) are listed,
    // greyed, with the reason; End skips them to the last one it takes.
    auto* orderItems = qobject_cast<QStandardItemModel*>(rank->model());
    QVERIFY(orderItems);
    int dpInner = -1;
    for (int i = 0; i < rank->count(); ++i)
        if (rank->itemText(i).startsWith(QStringLiteral("dp › tp › cp › pp")))
            dpInner = i;
    QVERIFY(dpInner >= 0);
    QCOMPARE(rank->itemText(dpInner),
             QStringLiteral("dp › tp › cp › pp — dp inside tp splits the model-parallel groups"));
    QVERIFY(!orderItems->item(dpInner)->isEnabled());
    QVERIFY(orderItems->item(ppOuter)->isEnabled());
    QTest::keyClick(rank, Qt::Key_End);
    QVERIFY(orderItems->item(rank->currentIndex())->isEnabled());
    QCOMPARE(doc->scenario().plan.rank_order,
             (std::vector<Dim>{Dim::CP, Dim::TP, Dim::DP, Dim::PP}));
    QCOMPARE(across->text(), QStringLiteral("Across buildings: PP and DP"));

    // Routing and an NCCL knob on the chosen link: plan overrides.
    choose(inspector->comboBox(QStringLiteral("routing")), 3);
    QVERIFY(doc->scenario().plan.routing);
    QCOMPARE(doc->scenario().plan.routing->policy, RoutingPolicy::Ecmp);
    choose(inspector->linkSelector(), 1);
    QDoubleSpinBox* channels = inspector->doubleSpinBox(QStringLiteral("link/nccl_channels"));
    QVERIFY(channels);
    QCOMPARE(channels->text(), QStringLiteral("technology's"));
    typeInto(channels, QStringLiteral("16"));
    QTest::keyClick(channels, Qt::Key_Return);
    const std::string link = original.cluster.links[1].name;
    QCOMPARE(doc->scenario().plan.link_technologies.at(link).nccl_channels, 16);
    QVERIFY(waitForEvaluation());
    while (doc->undoStack()->canUndo())
        doc->undoStack()->undo();
    QCOMPARE(doc->scenario(), original);
    QVERIFY(doc->scenario().plan.link_technologies.count(link) == 0);
}

// Two refusals in a row (found by tst_monkey): the first field shows the
// plan's value again, the second keeps what was typed and is marked.
void TestEditing::secondRefusalPutsTheFirstFieldBack() {
    Document* doc = window_->document();
    const Scenario original = doc->scenario();
    typeInto(spin("tp"), QStringLiteral("16"));
    QTest::keyClick(spin("tp"), Qt::Key_Return);
    QVERIFY(!window_->inspector()->problem().isEmpty());
    QCOMPARE(spin("tp")->value(), 16);
    typeInto(spin("dp"), QStringLiteral("17"));
    QTest::keyClick(spin("dp"), Qt::Key_Return);
    QVERIFY(!window_->inspector()->problem().isEmpty());
    QCOMPARE(spin("tp")->value(), original.plan.parallelism.tp);
    QCOMPARE(spin("dp")->value(), 17);
    QCOMPARE(doc->scenario(), original);
    QTest::keyClick(spin("dp"), Qt::Key_Escape);
    QCOMPARE(spin("dp")->value(), original.plan.parallelism.dp);
}

QTEST_MAIN(TestEditing)
// A plan whose explicit placement puts stages in a second building: each
// rank order's item says what picking it would put across buildings with
// those runs, as the line below the list does for the current one (it had
// placed every order without them: "nothing (one building)" over
// "Across buildings: PP"). A drag that moves the stages back changes both.
void TestEditing::rankOrderItemsKeepTheExplicitPlacement() {
    QVERIFY(window_->openSample(sampleScenario("hetero-70b.json")));
    QVERIFY(waitForEvaluation());
    Document* doc = window_->document();
    QVERIFY(doc->scenario().plan.placement && !doc->scenario().plan.placement->runs.empty());
    PlanInspector* inspector = window_->inspector();
    auto* across = inspector->findChild<QLabel*>(QStringLiteral("acrossBuildings"));
    QComboBox* rank = inspector->comboBox(QStringLiteral("rank_order"));
    QVERIFY(across && rank && rank->currentIndex() >= 0);
    QCOMPARE(across->text(), QStringLiteral("Across buildings: PP"));
    // The runs put PP across whatever the order: the line says it once and
    // the items name their orders alone.
    QVERIFY2(!rank->currentText().contains(QStringLiteral(" — ")), qPrintable(rank->currentText()));
    auto* orderItems = qobject_cast<QStandardItemModel*>(rank->model());
    QVERIFY(orderItems);
    for (int i = 0; i < rank->count(); ++i)
        if (orderItems->item(i)->isEnabled())
            QVERIFY2(!rank->itemText(i).contains(QStringLiteral(" — ")),
                     qPrintable(rank->itemText(i)));
    // Without the runs the plan fits the first building whatever the order:
    // the line below says so, and the items (which no longer differ in what
    // they put across) name the order alone, as in a one-building cluster
    // (at 1280 x 800 "tp › cp › dp › pp — nothing (one buil" was cut in the
    // box after the optimizer's best plan, all in one building, was loaded).
    Plan next = doc->scenario().plan;
    next.placement.reset();
    doc->setPlan(next, QStringLiteral("drop placement"));
    QVERIFY(waitForEvaluation());
    QCOMPARE(across->text(), QStringLiteral("Across buildings: nothing (one building)"));
    QVERIFY2(!rank->currentText().contains(QStringLiteral(" — ")), qPrintable(rank->currentText()));
    int refused = 0;
    for (int i = 0; i < rank->count(); ++i) {
        const bool enabled = orderItems->item(i)->isEnabled();
        QVERIFY2(rank->itemText(i).contains(QStringLiteral(" — ")) == !enabled,
                 qPrintable(rank->itemText(i)));
        refused += enabled ? 0 : 1;
    }
    QVERIFY(refused > 0);
    doc->undoStack()->undo();
    QVERIFY(waitForEvaluation());
    QCOMPARE(across->text(), QStringLiteral("Across buildings: PP"));
}

// In a one-building cluster nothing crosses whatever the order: the items
// name the order alone (at 1920 x 1080 "tp › cp › pp › dp — nothing (one
// building)" was cut in the box), the line below says it once; a refused
// order keeps its reason. A second building brings the words back.
void TestEditing::oneBuildingRankOrdersStayShort() {
    QVERIFY(window_->openSample(sampleScenario("single-building-70b-fp8.json")));
    QVERIFY(waitForEvaluation());
    Document* doc = window_->document();
    QCOMPARE(doc->scenario().cluster.buildings.size(), std::size_t(1));
    PlanInspector* inspector = window_->inspector();
    auto* across = inspector->findChild<QLabel*>(QStringLiteral("acrossBuildings"));
    QComboBox* rank = inspector->comboBox(QStringLiteral("rank_order"));
    QVERIFY(across && rank);
    QCOMPARE(across->text(), QStringLiteral("Across buildings: nothing (one building)"));
    auto* orderItems = qobject_cast<QStandardItemModel*>(rank->model());
    QVERIFY(orderItems);
    int refused = 0;
    for (int i = 0; i < rank->count(); ++i) {
        if (orderItems->item(i)->isEnabled()) {
            QVERIFY2(!rank->itemText(i).contains(QStringLiteral(" — ")),
                     qPrintable(rank->itemText(i)));
        } else {
            QVERIFY2(rank->itemText(i).contains(QStringLiteral(" — ")),
                     qPrintable(rank->itemText(i)));
            ++refused;
        }
    }
    QVERIFY(refused > 0);
    // Two buildings of half the plan's GPUs each (the cluster changes): the
    // orders put different dimensions across, and each item says again which.
    Cluster two = doc->scenario().cluster;
    const Parallelism& grid = doc->scenario().plan.parallelism;
    two.buildings[0].gpus = std::int64_t(grid.tp) * grid.cp * grid.pp * grid.dp / 2;
    Building b2 = two.buildings[0];
    b2.name = "B2";
    two.buildings.push_back(b2);
    Link link;
    link.a = two.buildings[0].name;
    link.b = "B2";
    link.name = link.a + "-B2";
    link.bandwidth_gbps = 25600;
    link.latency_ms = 1;
    two.links.push_back(link);
    doc->setCluster(two, QStringLiteral("second building"));
    QVERIFY(waitForEvaluation());
    QVERIFY2(rank->currentText().contains(QStringLiteral(" — ")), qPrintable(rank->currentText()));
    QSet<QString> acrossWords;
    for (int i = 0; i < rank->count(); ++i)
        if (orderItems->item(i)->isEnabled())
            acrossWords.insert(rank->itemText(i).section(QStringLiteral(" — "), 1));
    QVERIFY2(acrossWords.size() > 1, qPrintable(QStringList(acrossWords.values()).join(u',')));
    doc->undoStack()->undo();
    QVERIFY(waitForEvaluation());
    QVERIFY2(!rank->currentText().contains(QStringLiteral(" — ")), qPrintable(rank->currentText()));
}

#include "tst_editing.moc"

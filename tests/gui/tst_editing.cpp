// The explorer edited as a user edits it, offscreen: typing into inspector
// fields (applied on Enter or Tab only, one undo step per value, refused
// values shown below the fields), the wheel over fields that do not have
// the focus, the problem box going away when the document changes, Escape
// during a chip drag, Ctrl+Y and the pinned plan when another scenario is
// opened. Every gesture goes through QTest key and mouse events or a wheel
// event, not through setters.

#include "comparepanel.h"
#include "document.h"
#include "liveevaluation.h"
#include "mainwindow.h"
#include "planinspector.h"
#include "topologyitems.h"
#include "topologyview.h"

#include "../common/mainwindow_wait.h"
#include "../common/samples.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTest>
#include <QToolButton>
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
    void wheelOverUnfocusedFieldScrollsTheInspector();
    void wheelChangesTheFocusedField();
    void escapeCancelsAChipDrag();
    void ctrlYRedoes();
    void openingAnotherScenarioUnpins();

private:
    bool waitForEvaluation(int ms = 10000) {
        return sa::testing::waitForShownEvaluation(*window_, ms);
    }
    QSpinBox* spin(const char* field) const {
        return window_->inspector()->spinBox(QLatin1String(field));
    }
    // Clicks into the field, selects its text and types `text` as a user.
    void typeInto(QSpinBox* box, const QString& text);
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

void TestEditing::typeInto(QSpinBox* box, const QString& text) {
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
    QTest::mousePress(view->viewport(), Qt::LeftButton, {}, start);
    for (int i = 1; i <= 10; ++i)
        QTest::mouseMove(view->viewport(), start + (end - start) * i / 10);
    QVERIFY(QTest::qWaitFor([&] {
        const auto s = window_->shownSnapshot();
        return s && s->preview;
    }));
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

QTEST_MAIN(TestEditing)
#include "tst_editing.moc"

// Random use of the explorer as a user would use it, offscreen: typed
// values (committed with Enter, dropped with Escape), combo steps, the
// wheel over unfocused fields, chip drags (some cancelled with Escape),
// undo and redo, small optimizer searches (cancelled, left running under
// the next edits, or awaited and their best plan loaded), and now and then
// another sample opened. After every action: the document is valid, the
// shown evaluation is the document's (never a stale or preview one), the
// inspector shows the document's values, the status bar shows the
// evaluation's step, and the evaluation equals the core's for the same
// document; every 40 actions the document is written out and `scaleacross
// evaluate --json` must give the same step.
//
// SCALEACROSS_MONKEY_STEPS (default 240) and SCALEACROSS_MONKEY_SEED
// (default 20261202) set the run; a failure prints the seed, the step and
// the actions that led there.

#include "cost/evaluate.h"
#include "document.h"
#include "formats/documents.h"
#include "liveevaluation.h"
#include "mainwindow.h"
#include "optimizerpanel.h"
#include "planinspector.h"
#include "topologyitems.h"
#include "topologyview.h"
#include "units.h"

#include "../common/mainwindow_wait.h"
#include "../common/samples.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <QWheelEvent>

#include <nlohmann/json.hpp>

#include <cmath>
#include <memory>
#include <random>

using namespace sa;
using namespace sa::views;

class TestMonkey : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void randomUse();

private:
    bool step(int i);
    bool checkInvariants(int i, QString* why);
    bool cliAgrees(QString* why);
    void typeInto(QAbstractSpinBox* box, const QString& text);
    void drag(bool release);
    void optimizerRun();

    std::unique_ptr<MainWindow> window_;
    std::mt19937 rng_;
    QStringList log_;
    QTemporaryDir dir_;
    int cliChecks_ = 0;
    bool cliDue_ = false;
    int optimizerRuns_ = 0;
};

void TestMonkey::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("ScaleAcrossTests"));
    QVERIFY(dir_.isValid());
}

void TestMonkey::typeInto(QAbstractSpinBox* box, const QString& text) {
    window_->inspector()->scrollArea()->ensureWidgetVisible(box);
    box->setFocus();
    QTest::keyClick(box, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(box, text);
}

void TestMonkey::drag(bool release) {
    TopologyView* view = window_->topologyView();
    const auto& chips = view->chips();
    const int n = int(view->topologyLayout().buildings().size());
    if (chips.empty() || n == 0)
        return;
    const int chip = int(rng_() % chips.size());
    const int target = int(rng_() % std::size_t(n));
    ChipItem* from = view->chipItem(chip);
    if (!from)
        return;
    const QRectF area = view->topologyLayout().buildings()[std::size_t(target)].chipArea;
    const QPoint start = view->mapFromScene(from->sceneBoundingRect().center());
    const QPoint end = view->mapFromScene(area.center());
    log_ << QStringLiteral("drag chip %1 to building %2%3")
                .arg(chip)
                .arg(target)
                .arg(release ? QString() : QStringLiteral(", Escape"));
    QTest::mousePress(view->viewport(), Qt::LeftButton, {}, start);
    for (int k = 1; k <= 6; ++k)
        QTest::mouseMove(view->viewport(), start + (end - start) * k / 6);
    QTest::qWait(5);
    if (release) {
        QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, end);
    } else {
        QTest::keyClick(view, Qt::Key_Escape);
        QTest::mouseRelease(view->viewport(), Qt::LeftButton, {}, end);
    }
}

// A small search: cancelled at once, left running while the next actions
// edit the document, or awaited and its best plan loaded.
void TestMonkey::optimizerRun() {
    OptimizerPanel* panel = window_->optimizerPanel();
    OptimizerOptions o;
    o.max_evaluations = 400;
    o.baseline_evaluations = 100;
    o.seeds = 1;
    o.top_k = 3;
    o.threads = 2;
    panel->setOptions(o);
    const int how = int(rng_() % 3);
    log_ << QStringLiteral("optimizer run, %1")
                .arg(how == 0   ? QStringLiteral("cancelled")
                     : how == 1 ? QStringLiteral("left running")
                                : QStringLiteral("awaited, best loaded"));
    QSignalSpy finished(panel, &OptimizerPanel::finished);
    panel->run();
    ++optimizerRuns_;
    if (how == 0) {
        panel->cancel();
    } else if (how == 2) {
        if (panel->isRunning() && !finished.wait(120000))
            return;
        if (panel->result() && !panel->result()->top.empty())
            panel->loadResult(0);
    }
}

bool TestMonkey::step(int i) {
    Document* doc = window_->document();
    PlanInspector* inspector = window_->inspector();
    static const char* spins[] = {"tp",
                                  "cp",
                                  "pp",
                                  "dp",
                                  "ep",
                                  "micro_batch_sequences",
                                  "global_batch_sequences",
                                  "virtual_stages",
                                  "dp_bucket_mib",
                                  "inner_steps",
                                  "checkpoint_interval"};
    static const char* combos[] = {"schedule", "zero_stage", "recompute",         "rank_order",
                                   "dp_algo",  "outer_sync", "grad_reduce_bytes", "routing"};
    const int kind = int(rng_() % 100);
    if (kind < 35) {
        QSpinBox* box = inspector->spinBox(QLatin1String(spins[rng_() % std::size(spins)]));
        if (!box || !box->isEnabled())
            return true;
        // Plausible values, the current one doubled or halved, and nonsense.
        const int current = box->value();
        const int choices[] = {1,           2, 4, 8,      16, current * 2, std::max(1, current / 2),
                               current + 1, 3, 0, 1000000};
        const int v = choices[rng_() % std::size(choices)];
        const bool escape = rng_() % 5 == 0;
        log_ << QStringLiteral("type %1 = %2%3")
                    .arg(box->toolTip().left(30))
                    .arg(v)
                    .arg(escape ? QStringLiteral(", Escape") : QString());
        typeInto(box, QString::number(v));
        QTest::keyClick(box, escape ? Qt::Key_Escape : Qt::Key_Return);
    } else if (kind < 50) {
        QComboBox* box = inspector->comboBox(QLatin1String(combos[rng_() % std::size(combos)]));
        if (!box || !box->isEnabled())
            return true;
        inspector->scrollArea()->ensureWidgetVisible(box);
        box->setFocus();
        const bool down = rng_() % 2;
        log_ << QStringLiteral("combo %1 %2").arg(box->toolTip().left(30), down ? "down" : "up");
        QTest::keyClick(box, down ? Qt::Key_Down : Qt::Key_Up);
    } else if (kind < 58) {
        // The wheel over a field without the focus changes nothing.
        const Scenario before = doc->scenario();
        window_->topologyView()->setFocus();
        QSpinBox* box = inspector->spinBox(QLatin1String(spins[rng_() % std::size(spins)]));
        if (!box)
            return true;
        auto* text = box->findChild<QLineEdit*>();
        const QPointF at = QPointF(text->rect().center());
        QWheelEvent wheel(at, text->mapToGlobal(at), {}, QPoint(0, rng_() % 2 ? 120 : -120),
                          Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(text, &wheel);
        log_ << QStringLiteral("wheel over %1").arg(box->toolTip().left(30));
        if (!(doc->scenario() == before)) {
            log_ << QStringLiteral("the wheel changed the document");
            return false;
        }
    } else if (kind < 78) {
        drag(rng_() % 6 != 0);
    } else if (kind < 88) {
        log_ << QStringLiteral("undo");
        QTest::keyClick(window_.get(), Qt::Key_Z, Qt::ControlModifier);
    } else if (kind < 95) {
        log_ << QStringLiteral("redo");
        QTest::keyClick(window_.get(), Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
    } else if (kind < 97) {
        optimizerRun();
    } else if (kind < 98) {
        inspector->findChild<QLineEdit*>(QStringLiteral("layers_per_stage"))->clear();
        log_ << QStringLiteral("clear the layer split (not committed)");
    } else {
        static const char* samples[] = {"three-buildings-405b.json", "two-buildings-405b.json",
                                        "two-buildings-mixtral.json", "hetero-70b.json",
                                        "three-buildings-405b-run.json"};
        const char* s = samples[rng_() % std::size(samples)];
        log_ << QStringLiteral("open %1").arg(QLatin1String(s));
        doc->undoStack()->setClean();
        if (!window_->openSample(sa::testing::sampleScenario(s)))
            return false;
    }
    Q_UNUSED(i);
    return true;
}

bool TestMonkey::checkInvariants(int i, QString* why) {
    Document* doc = window_->document();
    if (!sa::testing::waitForShownEvaluation(*window_, 20000)) {
        *why = QStringLiteral("the shown evaluation is not the document's after 20 s");
        return false;
    }
    const Scenario& s = doc->scenario();
    const auto problems = validateScenario(s);
    if (!problems.empty()) {
        *why = QStringLiteral("the document is invalid: ") +
               QString::fromStdString(problems.front().str());
        return false;
    }
    const auto shown = window_->shownSnapshot();
    if (!(shown->plan == s.plan) || !(shown->model == s.model)) {
        *why = QStringLiteral("the shown plan is not the document's");
        return false;
    }
    PlanInspector* inspector = window_->inspector();
    const std::pair<const char*, int> fields[] = {{"tp", s.plan.parallelism.tp},
                                                  {"pp", s.plan.parallelism.pp},
                                                  {"dp", s.plan.parallelism.dp},
                                                  {"layers", s.model.layers}};
    // A refused value stays in its field, marked, beside its problem, until
    // the document changes or the problem is dismissed: then every field
    // but the refused one shows the document.
    for (const auto& [field, value] : fields) {
        QSpinBox* box = inspector->spinBox(QLatin1String(field));
        const bool refused = !inspector->problem().isEmpty() &&
                             box->palette().color(QPalette::Base) == QColor(0xff, 0xe3, 0xe3);
        if (!box->hasFocus() && !refused && box->value() != value) {
            *why = QStringLiteral("the inspector shows %1 = %2, the document %3")
                       .arg(QLatin1String(field))
                       .arg(box->value())
                       .arg(value);
            return false;
        }
    }
    const EvaluationResult fresh = evaluate(s);
    const auto* e = std::get_if<Evaluation>(&fresh);
    if (bool(e) != bool(shown->evaluation)) {
        *why = QStringLiteral("the core %1 the plan, the window %2")
                   .arg(e ? "evaluates" : "refuses", shown->evaluation ? "shows it" : "does not");
        return false;
    }
    if (e) {
        const double a = e->step_time_s, b = shown->evaluation->step_time_s;
        if (std::fabs(a - b) > 1e-9 * std::max(a, b)) {
            *why = QStringLiteral("step %1 s in the core, %2 s shown").arg(a).arg(b);
            return false;
        }
        auto* label = window_->findChild<QLabel*>(QStringLiteral("stepLabel"));
        if (label && !label->text().contains(formatStepTime(b))) {
            *why = QStringLiteral("the status bar says '%1' for a %2 step")
                       .arg(label->text(), formatStepTime(b));
            return false;
        }
    }
    // Every 40 actions, or at the next one with an evaluation.
    if (i % 40 == 39)
        cliDue_ = true;
    if (cliDue_ && e) {
        cliDue_ = false;
        return cliAgrees(why);
    }
    return true;
}

bool TestMonkey::cliAgrees(QString* why) {
    const Scenario& s = window_->document()->scenario();
    const QString path = dir_.filePath(QStringLiteral("monkey.json"));
    const std::string error = saveFileAtomically(path.toStdString(), dumpCanonical(toJson(s)));
    if (!error.empty()) {
        *why = QString::fromStdString(error);
        return false;
    }
    QProcess cli;
    cli.start(QStringLiteral(SCALEACROSS_CLI_PATH),
              {QStringLiteral("evaluate"), path, QStringLiteral("--json")});
    if (!cli.waitForFinished(60000) || cli.exitCode() != 0) {
        *why = QStringLiteral("scaleacross evaluate failed: ") +
               QString::fromUtf8(cli.readAllStandardError());
        return false;
    }
    const auto j = nlohmann::json::parse(cli.readAllStandardOutput().toStdString(), nullptr, false);
    const double shown = window_->shownSnapshot()->evaluation->step_time_s;
    if (!j.is_object() || !j.contains("step_time_s") ||
        std::fabs(j["step_time_s"].get<double>() - shown) > 1e-9 * shown) {
        *why = QStringLiteral("the CLI's step is not the window's %1 s").arg(shown);
        return false;
    }
    log_ << QStringLiteral("CLI agrees: %1 s").arg(shown);
    ++cliChecks_;
    return true;
}

void TestMonkey::randomUse() {
    const int steps = qEnvironmentVariableIsSet("SCALEACROSS_MONKEY_STEPS")
                          ? qEnvironmentVariableIntValue("SCALEACROSS_MONKEY_STEPS")
                          : 240;
    const unsigned seed = qEnvironmentVariableIsSet("SCALEACROSS_MONKEY_SEED")
                              ? unsigned(qEnvironmentVariableIntValue("SCALEACROSS_MONKEY_SEED"))
                              : 20261202u;
    rng_.seed(seed);
    window_ = std::make_unique<MainWindow>();
    QVERIFY(sa::testing::showSample(
        *window_, sa::testing::sampleScenario("three-buildings-405b.json"), true));
    for (int i = 0; i < steps; ++i) {
        const bool acted = step(i);
        QString why;
        const bool ok = acted && checkInvariants(i, &why);
        if (!ok) {
            const QStringList last = log_.mid(std::max<qsizetype>(0, log_.size() - 12));
            QFAIL(qPrintable(QStringLiteral("seed %1, step %2: %3\nlast actions:\n  %4")
                                 .arg(seed)
                                 .arg(i)
                                 .arg(acted ? why : QStringLiteral("the action failed"),
                                      last.join(QStringLiteral("\n  ")))));
        }
    }
    qInfo("monkey: %d actions (seed %u), %d CLI comparisons, %d optimizer runs, %lld undo steps "
          "at the end",
          steps, seed, cliChecks_, optimizerRuns_,
          (long long)window_->document()->undoStack()->count());
    QVERIFY(cliChecks_ >= steps / 40 - 1);
    QVERIFY(steps < 200 || optimizerRuns_ > 0);
    window_->document()->undoStack()->setClean();
    window_.reset();
}

QTEST_MAIN(TestMonkey)
#include "tst_monkey.moc"

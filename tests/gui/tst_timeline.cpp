// The pipeline timeline, offscreen, on real evaluations of the two-building
// heterogeneous sample (stages 0-3 in B1, 4-7 in B2) as 1F1B and as
// interleaved 1F1B: a row per (virtual) stage, hit tests where ops are
// drawn (the pixels there have the op's colour), tooltips, zoom that keeps
// the time under the cursor, two views kept in step, bubbles, exports that
// never leave a partial file, and a 16k-op step painted quickly.

#include "cost/evaluate.h"
#include "cost/schedule.h"
#include "formats/documents.h"
#include "timelinepane.h"
#include "timelineview.h"
#include "units.h"

#include "../common/samples.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QHelpEvent>
#include <QImage>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>
#include <QWheelEvent>
#include <QXmlStreamReader>

#include <algorithm>
#include <cmath>
#include <functional>

using namespace sa;
using namespace sa::views;
using sa::testing::sampleScenario;

namespace {

struct Evaluated {
    std::shared_ptr<const Evaluation> evaluation;
    QStringList buildings;
    QString problem;
};

Evaluated evaluateSample(const char* name, std::optional<Schedule> schedule = std::nullopt) {
    Evaluated out;
    const auto loaded = loadScenarioFile(sampleScenario(name).toStdString());
    if (!loaded.ok()) {
        out.problem = QStringLiteral("cannot load %1").arg(QLatin1String(name));
        return out;
    }
    Scenario scenario = *loaded.value;
    if (schedule)
        scenario.plan.schedule = *schedule;
    for (const auto& b : scenario.cluster.buildings)
        out.buildings << QString::fromStdString(b.name);
    const Evaluator evaluator(scenario.cluster);
    auto result = evaluator.evaluate(scenario.model, scenario.plan);
    if (auto* error = std::get_if<EvaluationError>(&result)) {
        out.problem = QString::fromStdString(error->str());
        return out;
    }
    out.evaluation = std::make_shared<const Evaluation>(std::get<Evaluation>(std::move(result)));
    return out;
}

// `view` at w x h showing `e`, on screen.
bool showEvaluated(TimelineView& view, const Evaluated& e, int w, int h) {
    view.resize(w, h);
    view.setEvaluation(e.evaluation, e.buildings);
    view.show();
    return QTest::qWaitForWindowExposed(&view);
}

bool sameOp(const TimelineOp& a, const TimelineOp& b) {
    return a.kind == b.kind && a.stage == b.stage && a.chunk == b.chunk &&
           a.microbatch == b.microbatch && a.start_s == b.start_s && a.end_s == b.end_s;
}

QString describe(const TimelineOp& op) {
    return QStringLiteral("%1 stage %2 chunk %3 mb %4 [%5, %6]")
        .arg(QLatin1String(toString(op.kind)))
        .arg(op.stage)
        .arg(op.chunk)
        .arg(op.microbatch)
        .arg(op.start_s, 0, 'g', 12)
        .arg(op.end_s, 0, 'g', 12);
}

bool isCompute(OpKind k) {
    return k == OpKind::Forward || k == OpKind::Backward || k == OpKind::WeightGrad ||
           k == OpKind::Recompute;
}

// The first compute op of `stage`'s first chunk in `view`'s timeline.
TimelineOp firstCompute(const TimelineView& view, int stage) {
    for (const TimelineOp& op : view.evaluation()->timeline.ops)
        if (op.stage == stage && op.chunk == 0 && isCompute(op.kind))
            return op;
    return {};
}

// Scrolls `rect`'s row into the middle of the time area.
QRectF reveal(TimelineView& view, const TimelineOp& op) {
    QRectF rect = view.opRect(op);
    const QRect area = view.timeArea();
    QScrollBar* v = view.verticalScrollBar();
    v->setValue(v->value() + int(std::lround(rect.center().y() - area.center().y())));
    return view.opRect(op);
}

// Share of the pixels inside `rect` (logical coordinates) that have one of
// `colors` exactly.
double shareOf(const QImage& image, const QRectF& rect, std::initializer_list<QColor> colors) {
    const double dpr = image.devicePixelRatio();
    const QRect r = QRectF(rect.topLeft() * dpr, rect.bottomRight() * dpr)
                        .toAlignedRect()
                        .adjusted(2, 1, -2, -1)
                        .intersected(image.rect());
    if (r.isEmpty())
        return 0;
    int hits = 0;
    for (int y = r.top(); y <= r.bottom(); ++y)
        for (int x = r.left(); x <= r.right(); ++x) {
            const QRgb px = image.pixel(x, y);
            for (const QColor& c : colors)
                if (qRed(px) == c.red() && qGreen(px) == c.green() && qBlue(px) == c.blue()) {
                    ++hits;
                    break;
                }
        }
    return double(hits) / (r.width() * r.height());
}

void sendWheel(QWidget* target, QPoint pos, int delta, Qt::KeyboardModifiers modifiers) {
    QWheelEvent event(QPointF(pos), QPointF(target->mapToGlobal(pos)), QPoint(), QPoint(0, delta),
                      Qt::NoButton, modifiers, Qt::NoScrollPhase, false);
    QApplication::sendEvent(target, &event);
}

std::shared_ptr<const Evaluation> stretched(const Evaluation& ev, double factor) {
    auto copy = std::make_shared<Evaluation>(ev);
    for (auto& op : copy->timeline.ops) {
        op.start_s *= factor;
        op.end_s *= factor;
        op.exposed_s *= factor;
    }
    copy->timeline.makespan_s *= factor;
    copy->step_time_s *= factor;
    return copy;
}

} // namespace

class TestTimeline : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void rows();
    void buildingsOfStages();
    void opAtWhereDrawn_data();
    void opAtWhereDrawn();
    void toolTips();
    void ctrlWheelZoomsAroundCursor_data();
    void ctrlWheelZoomsAroundCursor();
    void keysAndFit();
    void followsNewEvaluations();
    void twoViewsInStep();
    void paneRefitsWhenWidened();
    void compareFitsEveryStage();
    void dragPans();
    void bubbles();
    void exportImage();
    void exportFailuresLeaveNoFile();
    void clearShowsMessage();
    void manyOpsPaintFast();
    void screenshots();

private:
    Evaluated oneFOneB_;
    Evaluated interleaved_;
};

void TestTimeline::initTestCase() {
    oneFOneB_ = evaluateSample("hetero-70b.json");
    QVERIFY2(oneFOneB_.evaluation, qPrintable(oneFOneB_.problem));
    interleaved_ = evaluateSample("hetero-70b.json", Schedule{ScheduleKind::Interleaved, 2, false});
    QVERIFY2(interleaved_.evaluation, qPrintable(interleaved_.problem));
    QCOMPARE(oneFOneB_.evaluation->timeline.chunks, 1);
    QCOMPARE(interleaved_.evaluation->timeline.chunks, 2);
    QCOMPARE(interleaved_.evaluation->timeline.stages, 8);
}

void TestTimeline::rows() {
    TimelineView view;
    view.resize(1200, 700);
    QCOMPARE(view.rowCount(), 0);
    view.setEvaluation(oneFOneB_.evaluation, oneFOneB_.buildings, QStringLiteral("1F1B"));
    QCOMPARE(view.rowCount(), 8);
    QCOMPARE(view.rowLabel(0), QStringLiteral("Stage 0"));
    QCOMPARE(view.rowLabel(7), QStringLiteral("Stage 7"));

    view.setEvaluation(interleaved_.evaluation, interleaved_.buildings);
    const Timeline& tl = interleaved_.evaluation->timeline;
    QCOMPARE(view.rowCount(), tl.stages * tl.chunks);
    QCOMPARE(view.rowCount(), 16);
    QCOMPARE(view.rowLabel(0), QStringLiteral("Stage 0 · chunk 0"));
    QCOMPARE(view.rowLabel(3), QStringLiteral("Stage 1 · chunk 1"));
    QCOMPARE(view.rowLabel(15), QStringLiteral("Stage 7 · chunk 1"));
    QVERIFY(view.rowLabel(16).isEmpty());
    // Rows are stacked in order and never overlap; a stage's chunks touch,
    // the next stage starts below its send and sync lanes.
    for (int r = 0; r + 1 < view.rowCount(); ++r) {
        const QRectF a = view.rowRect(r), b = view.rowRect(r + 1);
        QVERIFY(a.height() > 10);
        QVERIFY2(a.bottom() <= b.top(), qPrintable(QStringLiteral("row %1").arg(r)));
        if (r % 2 == 0)
            QCOMPARE(a.bottom(), b.top());
        else
            QVERIFY(b.top() - a.bottom() >= 10);
    }
    // The building changes between stages 3 and 4: a band with its name
    // sits between them.
    QVERIFY(view.rowRect(8).top() - view.rowRect(7).bottom() >
            view.rowRect(6).top() - view.rowRect(5).bottom());
}

void TestTimeline::buildingsOfStages() {
    // The premise of the crossing tests: the sample puts stages 0-3 in B1
    // and 4-7 in B2, and only the P2P across that boundary crosses.
    const Evaluation& ev = *oneFOneB_.evaluation;
    QCOMPARE(int(ev.stage_building.size()), 8);
    for (int s = 0; s < 8; ++s)
        QCOMPARE(ev.stage_building[std::size_t(s)], s < 4 ? 0 : 1);
    int crossing = 0;
    for (const auto& op : ev.timeline.ops) {
        if (op.kind == OpKind::SendForward) {
            QCOMPARE(op.cross_building, op.stage == 3);
            crossing += op.cross_building;
        }
        if (op.kind == OpKind::SendBackward)
            QCOMPARE(op.cross_building, op.stage == 4);
    }
    QCOMPARE(crossing, ev.timeline.microbatches);
}

void TestTimeline::opAtWhereDrawn_data() {
    QTest::addColumn<bool>("interleaved");
    QTest::addColumn<QString>("which");
    for (bool interleaved : {false, true}) {
        const char* name = interleaved ? "interleaved" : "1F1B";
        for (const char* which : {"forward", "backward", "crossing send forward",
                                  "crossing send backward", "local send", "dp sync", "optimizer"})
            QTest::addRow("%s, %s", name, which) << interleaved << QString::fromLatin1(which);
    }
}

void TestTimeline::opAtWhereDrawn() {
    QFETCH(bool, interleaved);
    QFETCH(QString, which);
    const Evaluated& e = interleaved ? interleaved_ : oneFOneB_;
    const Timeline& tl = e.evaluation->timeline;
    const int lastChunk = tl.chunks - 1;
    std::function<bool(const TimelineOp&)> pick;
    if (which == QLatin1String("forward"))
        pick = [&](const TimelineOp& op) {
            return op.kind == OpKind::Forward && op.stage == 5 && op.chunk == lastChunk &&
                   op.microbatch == 3;
        };
    else if (which == QLatin1String("backward"))
        pick = [&](const TimelineOp& op) {
            return op.kind == OpKind::Backward && op.stage == 0 && op.chunk == 0 &&
                   op.microbatch == tl.microbatches - 1;
        };
    else if (which == QLatin1String("crossing send forward"))
        pick = [](const TimelineOp& op) {
            return op.kind == OpKind::SendForward && op.cross_building && op.microbatch == 2;
        };
    else if (which == QLatin1String("crossing send backward"))
        pick = [](const TimelineOp& op) {
            return op.kind == OpKind::SendBackward && op.cross_building && op.microbatch == 1;
        };
    else if (which == QLatin1String("local send"))
        pick = [](const TimelineOp& op) {
            return op.kind == OpKind::SendForward && !op.cross_building && op.stage == 1 &&
                   op.microbatch == 4;
        };
    else if (which == QLatin1String("dp sync"))
        pick = [](const TimelineOp& op) { return op.kind == OpKind::DpSync && op.stage == 6; };
    else
        pick = [](const TimelineOp& op) { return op.kind == OpKind::Optimizer && op.stage == 2; };
    const auto found = std::find_if(tl.ops.begin(), tl.ops.end(), pick);
    QVERIFY2(found != tl.ops.end(), qPrintable(which));
    const TimelineOp op = *found;
    QVERIFY2(op.end_s > op.start_s, qPrintable(describe(op)));

    TimelineView view;
    // shorter than the rows: the op has to be scrolled to
    QVERIFY(showEvaluated(view, e, 1000, 360));
    QVERIFY(view.verticalScrollBar()->maximum() > 0);
    // The op across the middle half of the time area.
    const double d = op.end_s - op.start_s;
    view.setTimeRange(op.start_s - d / 2, op.end_s + d / 2);
    const QRectF rect = reveal(view, op);
    const QRect area = view.timeArea();
    QVERIFY2(area.contains(rect.center().toPoint()),
             qPrintable(QStringLiteral("%1 not inside the area").arg(describe(op))));
    QVERIFY(std::fabs(rect.width() - area.width() / 2.0) < 2);
    QVERIFY(std::fabs(rect.left() - (area.left() + area.width() / 4.0)) < 1.5);
    // In its stage's (and chunk's) row, or in the lanes right under the
    // stage's last chunk.
    const int row = op.stage * tl.chunks + (isCompute(op.kind) ? op.chunk : tl.chunks - 1);
    const QRectF rowRect = view.rowRect(row);
    if (isCompute(op.kind))
        QVERIFY(rowRect.contains(rect.center()));
    else
        QVERIFY(rect.top() >= rowRect.bottom() && rect.bottom() <= rowRect.bottom() + 30);

    const auto hit = view.opAt(rect.center().toPoint());
    QVERIFY2(hit, qPrintable(describe(op)));
    QVERIFY2(sameOp(*hit, op), qPrintable(describe(*hit) + QStringLiteral(" != ") + describe(op)));
    QCOMPARE(hit->cross_building, op.cross_building);
    // Just outside the op, left of it: not this op.
    const auto before = view.opAt(QPoint(int(rect.left()) - 3, int(rect.center().y())));
    QVERIFY(!before || !sameOp(*before, op));

    // What is drawn there has the op's colour.
    const QImage image = view.viewport()->grab().toImage();
    double share = 0;
    if (op.kind == OpKind::DpSync) {
        const double exposedX =
            view.opRect(op).right() - op.exposed_s / view.scale().secondsPerPixel();
        QRectF hidden = rect;
        hidden.setRight(exposedX);
        if (hidden.width() > 6)
            QVERIFY2(shareOf(image, hidden, {TimelineView::colorFor(op.kind)}) > 0.9,
                     qPrintable(QString::number(
                         shareOf(image, hidden, {TimelineView::colorFor(op.kind)}))));
        share = 1;
    } else {
        share = shareOf(image, rect, {TimelineView::colorFor(op.kind, op.cross_building)});
    }
    // Compute blocks carry their microbatch number, crossing sends a hatch.
    const double wanted = op.cross_building ? 0.4 : isCompute(op.kind) ? 0.8 : 0.9;
    QVERIFY2(
        share > wanted,
        qPrintable(
            QStringLiteral("%1: %2 of the pixels in its colour").arg(describe(op)).arg(share)));
}

void TestTimeline::toolTips() {
    TimelineView view;
    QVERIFY(showEvaluated(view, oneFOneB_, 1200, 900));
    const Timeline& tl = oneFOneB_.evaluation->timeline;
    const auto fwd = std::find_if(tl.ops.begin(), tl.ops.end(), [](const TimelineOp& op) {
        return op.kind == OpKind::Forward && op.stage == 2 && op.microbatch == 7;
    });
    QVERIFY(fwd != tl.ops.end());
    const QString text = view.toolTipFor(*fwd);
    QVERIFY2(text.contains(QStringLiteral("Forward")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("microbatch 7")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("stage 2")), qPrintable(text));
    QVERIFY2(text.contains(formatSeconds(fwd->end_s - fwd->start_s)), qPrintable(text));
    QVERIFY2(text.contains(formatSeconds(fwd->start_s)), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("B1")), qPrintable(text));
    QVERIFY(!text.contains(QStringLiteral("crosses buildings")));

    const auto crossing = std::find_if(tl.ops.begin(), tl.ops.end(), [](const TimelineOp& op) {
        return op.kind == OpKind::SendForward && op.cross_building;
    });
    QVERIFY(crossing != tl.ops.end());
    const QString sendText = view.toolTipFor(*crossing);
    QVERIFY2(sendText.contains(QStringLiteral("crosses buildings")), qPrintable(sendText));
    QVERIFY2(sendText.contains(QStringLiteral("stage 3 → stage 4")), qPrintable(sendText));
    QVERIFY2(sendText.contains(QStringLiteral("B1 → B2")), qPrintable(sendText));
    QVERIFY2(sendText.contains(formatSeconds(crossing->end_s - crossing->start_s)),
             qPrintable(sendText));

    const auto sync = std::find_if(tl.ops.begin(), tl.ops.end(),
                                   [](const TimelineOp& op) { return op.kind == OpKind::DpSync; });
    QVERIFY(sync != tl.ops.end());
    const QString syncText = view.toolTipFor(*sync);
    QVERIFY2(syncText.contains(QStringLiteral("DP sync")), qPrintable(syncText));
    QVERIFY2(syncText.contains(QStringLiteral("exposed ") + formatSeconds(sync->exposed_s)),
             qPrintable(syncText));

    // A real tooltip event over the forward block shows the same text.
    view.setTimeRange(fwd->start_s - 0.1, fwd->end_s + 0.1);
    const QPoint pos = reveal(view, *fwd).center().toPoint();
    QHelpEvent help(QEvent::ToolTip, pos, view.viewport()->mapToGlobal(pos));
    QApplication::sendEvent(view.viewport(), &help);
    QTRY_VERIFY(QToolTip::isVisible());
    QCOMPARE(QToolTip::text(), text);
    QToolTip::hideText();
}

void TestTimeline::ctrlWheelZoomsAroundCursor_data() {
    QTest::addColumn<double>("where"); // fraction of the time area
    QTest::addColumn<int>("delta");
    QTest::newRow("in at 10 %") << 0.1 << 120;
    QTest::newRow("in at the middle") << 0.5 << 120;
    QTest::newRow("in three notches at 93 %") << 0.93 << 360;
    QTest::newRow("out at 30 %") << 0.3 << -120;
    QTest::newRow("out two notches at 75 %") << 0.75 << -240;
    QTest::newRow("half a notch") << 0.6 << 60;
}

void TestTimeline::ctrlWheelZoomsAroundCursor() {
    QFETCH(double, where);
    QFETCH(int, delta);
    TimelineView view;
    QVERIFY(showEvaluated(view, interleaved_, 1100, 500));
    // Start from a zoomed-in view so zooming out is not clamped.
    const double makespan = interleaved_.evaluation->timeline.makespan_s;
    view.setTimeRange(0.2 * makespan, 0.4 * makespan);
    const QRect area = view.timeArea();
    const QPoint pos(area.left() + int(std::lround(where * area.width())), area.center().y());
    const double t = view.scale().t(pos.x() - area.left());
    const double spp = view.scale().secondsPerPixel();
    QSignalSpy spy(&view, &TimelineView::scaleChanged);
    sendWheel(view.viewport(), pos, delta, Qt::ControlModifier);
    QCOMPARE(spy.count(), 1);
    QVERIFY2(std::fabs(view.scale().t(pos.x() - area.left()) - t) < 1e-9 * makespan,
             qPrintable(QString::number(view.scale().t(pos.x() - area.left()) - t)));
    const double expected = spp / std::pow(1.25, delta / 120.0);
    QVERIFY(std::fabs(view.scale().secondsPerPixel() / expected - 1) < 1e-9);
    QCOMPARE(spy.at(0).at(0).toDouble(), view.scale().t0());
    QCOMPARE(spy.at(0).at(1).toDouble(), view.scale().secondsPerPixel());
    QVERIFY(!view.isFitted());

    // A plain wheel does not zoom.
    sendWheel(view.viewport(), pos, 120, Qt::NoModifier);
    QVERIFY(std::fabs(view.scale().secondsPerPixel() / expected - 1) < 1e-9);
}

void TestTimeline::keysAndFit() {
    TimelineView view;
    QVERIFY(showEvaluated(view, oneFOneB_, 1100, 500));
    const double makespan = oneFOneB_.evaluation->timeline.makespan_s;
    // Fitted: the whole step with a 1 % margin on each side.
    QVERIFY(view.isFitted());
    QVERIFY(std::fabs(view.scale().visibleBegin() + 0.01 * makespan) < 1e-9 * makespan);
    QVERIFY(std::fabs(view.scale().visibleEnd() - 1.01 * makespan) < 1e-6 * makespan);
    QCOMPARE(view.scale().width(), double(view.timeArea().width()));

    const double spp = view.scale().secondsPerPixel();
    view.setFocus();
    QTest::keyClick(&view, Qt::Key_Plus);
    QVERIFY(std::fabs(view.scale().secondsPerPixel() - spp / 1.25) < 1e-12 * spp);
    QTest::keyClick(&view, Qt::Key_Plus);
    QTest::keyClick(&view, Qt::Key_Minus);
    QVERIFY(std::fabs(view.scale().secondsPerPixel() - spp / 1.25) < 1e-9 * spp);
    QVERIFY(!view.isFitted());
    QTest::keyClick(&view, Qt::Key_0);
    QVERIFY(view.isFitted());
    QCOMPARE(view.scale().secondsPerPixel(), spp);

    // Zooming out stops at four steps across the window.
    for (int i = 0; i < 40; ++i)
        view.zoomOut();
    QVERIFY(view.scale().visibleDuration() <= 4 * makespan * (1 + 1e-9));
    QVERIFY(view.scale().visibleDuration() >= 3.9 * makespan);

    // A fitted view refits when resized; a zoomed one keeps its scale.
    view.fitToWindow();
    view.resize(800, 500);
    QTRY_COMPARE(view.scale().width(), double(view.timeArea().width()));
    QVERIFY(std::fabs(view.scale().visibleEnd() - 1.01 * makespan) < 1e-6 * makespan);
    view.zoomIn();
    const double zoomed = view.scale().secondsPerPixel();
    view.resize(1000, 500);
    QTRY_COMPARE(view.scale().width(), double(view.timeArea().width()));
    QCOMPARE(view.scale().secondsPerPixel(), zoomed);
}

void TestTimeline::followsNewEvaluations() {
    TimelineView view;
    view.resize(1100, 500);
    view.setEvaluation(oneFOneB_.evaluation, oneFOneB_.buildings);
    const double makespan = oneFOneB_.evaluation->timeline.makespan_s;
    view.setTimeRange(0.3 * makespan, 0.5 * makespan);
    const double t0 = view.scale().t0();
    const double spp = view.scale().secondsPerPixel();
    QVERIFY(!view.isFitted());

    // The same plan again, and one 20 % slower: the user's zoom stays.
    view.setEvaluation(oneFOneB_.evaluation, oneFOneB_.buildings);
    QCOMPARE(view.scale().t0(), t0);
    QCOMPARE(view.scale().secondsPerPixel(), spp);
    view.setEvaluation(stretched(*oneFOneB_.evaluation, 1.2), oneFOneB_.buildings);
    QCOMPARE(view.scale().t0(), t0);
    QCOMPARE(view.scale().secondsPerPixel(), spp);
    // Three times slower: a different picture, fitted again.
    QSignalSpy spy(&view, &TimelineView::scaleChanged);
    view.setEvaluation(stretched(*oneFOneB_.evaluation, 3.6), oneFOneB_.buildings);
    QVERIFY(view.isFitted());
    QCOMPARE(spy.count(), 1);
    QVERIFY(std::fabs(view.scale().visibleEnd() - 1.01 * 3.6 * makespan) < 1e-6 * makespan);
    // A plan that cannot be evaluated, then a good one: the zoom survives
    // the message.
    view.setTimeRange(makespan, 2 * makespan);
    const double kept = view.scale().secondsPerPixel();
    view.clear(QStringLiteral("The plan cannot be evaluated: pp must divide the layers"));
    view.setEvaluation(stretched(*oneFOneB_.evaluation, 3.6), oneFOneB_.buildings);
    QCOMPARE(view.scale().secondsPerPixel(), kept);
}

void TestTimeline::twoViewsInStep() {
    TimelineView a, b;
    for (TimelineView* v : {&a, &b}) {
        v->resize(900, 400);
        v->show();
    }
    a.setEvaluation(oneFOneB_.evaluation, oneFOneB_.buildings);
    b.setEvaluation(interleaved_.evaluation, interleaved_.buildings);
    QVERIFY(QTest::qWaitForWindowExposed(&a));
    connect(&a, &TimelineView::scaleChanged, &b, &TimelineView::setScale);
    connect(&b, &TimelineView::scaleChanged, &a, &TimelineView::setScale);
    QSignalSpy spyA(&a, &TimelineView::scaleChanged);
    QSignalSpy spyB(&b, &TimelineView::scaleChanged);
    const QRect area = a.timeArea();
    sendWheel(a.viewport(), QPoint(area.left() + 200, area.center().y()), 240, Qt::ControlModifier);
    QCOMPARE(spyA.count(), 1);
    QCOMPARE(spyB.count(), 1); // followed once, without echoing back
    QCOMPARE(b.scale().t0(), a.scale().t0());
    QCOMPARE(b.scale().secondsPerPixel(), a.scale().secondsPerPixel());
    // Aligned to one range (compare mode): with label columns of one width
    // the two time areas coincide, so one second sits at the same x in both.
    QVERIFY(a.labelWidth() < b.labelWidth()); // "Stage 7" vs "Stage 7 · chunk 1"
    const int labels = std::max(a.labelWidth(), b.labelWidth());
    a.setMinimumLabelWidth(labels);
    b.setMinimumLabelWidth(labels);
    QCOMPARE(a.timeArea(), b.timeArea());
    a.setTimeRange(1.0, 2.0);
    QCOMPARE(b.scale().visibleBegin(), 1.0);
    QVERIFY(std::fabs(b.scale().visibleEnd() - 2.0) < 1e-9);
    QCOMPARE(b.scale().x(1.5), a.scale().x(1.5));
}

void TestTimeline::paneRefitsWhenWidened() {
    // The explorer opens at its default size and the user enlarges the
    // window: the step, fitted to the narrow pane, is fitted again to the
    // wide one. The hidden pinned view follows the current one's scale and
    // echoes it back; the echo is no zoom of the user's.
    TimelinePane pane;
    pane.resize(700, 400);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    pane.setCurrent(oneFOneB_.evaluation, oneFOneB_.buildings, QStringLiteral("current"));
    QCoreApplication::processEvents();
    TimelineView* current = pane.current();
    QVERIFY(current->isFitted());
    const double makespan = oneFOneB_.evaluation->timeline.makespan_s;
    const auto fitsTheStep = [&] {
        const TimeScale& s = current->scale();
        return s.visibleBegin() < 0 && s.visibleBegin() > -0.1 * makespan &&
               s.visibleEnd() > makespan && s.visibleEnd() < 1.1 * makespan;
    };
    QVERIFY(fitsTheStep());
    pane.resize(1600, 400);
    QCoreApplication::processEvents();
    QVERIFY(current->isFitted());
    QVERIFY2(fitsTheStep(), qPrintable(QStringLiteral("shows %1 s to %2 s of a %3 s step")
                                           .arg(current->scale().visibleBegin())
                                           .arg(current->scale().visibleEnd())
                                           .arg(makespan)));
    // A zoom of the user's is kept through the same resize.
    const QRect area = current->timeArea();
    sendWheel(current->viewport(), QPoint(area.left() + 200, area.center().y()), 240,
              Qt::ControlModifier);
    QVERIFY(!current->isFitted());
    const double spp = current->scale().secondsPerPixel();
    pane.resize(900, 400);
    QCoreApplication::processEvents();
    QVERIFY(!current->isFitted());
    QCOMPARE(current->scale().secondsPerPixel(), spp);
}

void TestTimeline::compareFitsEveryStage() {
    // Compare mode as a user sees it: the interleaved plan (8 stages x 2
    // chunks) pinned over the 1F1B one in a dock 460 px high.
    TimelinePane pane;
    pane.resize(1000, 460);
    pane.setCurrent(interleaved_.evaluation, interleaved_.buildings, QStringLiteral("current"));
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    TimelineView* current = pane.current();
    // Alone, the rows keep a line of text each and the view scrolls.
    QVERIFY(current->verticalScrollBar()->maximum() > 0);
    const double aloneRow = current->opRect(firstCompute(*current, 0)).height();

    pane.setPinned(oneFOneB_.evaluation, oneFOneB_.buildings, QStringLiteral("pinned"));
    QCoreApplication::processEvents();
    TimelineView* pinned = pane.pinned();
    QVERIFY(pinned->isVisible());
    auto fitsEveryStage = [](TimelineView* v) {
        if (v->verticalScrollBar()->maximum() != 0)
            return QStringLiteral("scrolls by %1 px").arg(v->verticalScrollBar()->maximum());
        const QRect area = v->timeArea();
        for (int s = 0; s < v->evaluation()->timeline.stages; ++s) {
            const TimelineOp op = firstCompute(*v, s);
            const QRectF r = v->opRect(op);
            if (!area.contains(r.center().toPoint()))
                return QStringLiteral("stage %1 drawn at y %2 outside %3..%4")
                    .arg(s)
                    .arg(r.center().y())
                    .arg(area.top())
                    .arg(area.bottom());
            const auto hit = v->opAt(r.center().toPoint());
            if (!hit || hit->stage != s)
                return QStringLiteral("stage %1 not hit where drawn").arg(s);
        }
        return QString();
    };
    QCOMPARE(fitsEveryStage(current), QString());
    QCOMPARE(fitsEveryStage(pinned), QString());
    const double squeezed = current->opRect(firstCompute(*current, 0)).height();
    QVERIFY2(squeezed < aloneRow,
             qPrintable(QStringLiteral("%1 vs %2").arg(squeezed).arg(aloneRow)));

    // A taller dock gives the rows back some height; still no scrolling.
    pane.resize(1000, 760);
    QCoreApplication::processEvents();
    QCOMPARE(fitsEveryStage(current), QString());
    QCOMPARE(fitsEveryStage(pinned), QString());
    QVERIFY(current->opRect(firstCompute(*current, 0)).height() > squeezed);

    // Unpinned: one timeline again, rows of a text line, scrolling.
    pane.resize(1000, 460);
    pane.setPinned(nullptr, {}, {});
    QCoreApplication::processEvents();
    QVERIFY(pinned->isHidden());
    QCOMPARE(current->opRect(firstCompute(*current, 0)).height(), aloneRow);
    QVERIFY(current->verticalScrollBar()->maximum() > 0);
}

void TestTimeline::dragPans() {
    TimelineView view;
    QVERIFY(showEvaluated(view, oneFOneB_, 1000, 400));
    view.zoomIn();
    view.zoomIn();
    const double t0 = view.scale().t0();
    const double spp = view.scale().secondsPerPixel();
    const int v0 = view.verticalScrollBar()->value();
    const QPoint from = view.timeArea().center();
    QTest::mousePress(view.viewport(), Qt::LeftButton, Qt::NoModifier, from);
    const QPoint to = from + QPoint(120, -30);
    QMouseEvent move(QEvent::MouseMove, QPointF(to), QPointF(view.viewport()->mapToGlobal(to)),
                     Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(view.viewport(), &move);
    QTest::mouseRelease(view.viewport(), Qt::LeftButton, Qt::NoModifier, to);
    QVERIFY(std::fabs(view.scale().t0() - (t0 - 120 * spp)) < 1e-9 * std::fabs(t0 + 1));
    QCOMPARE(view.scale().secondsPerPixel(), spp);
    QCOMPARE(view.verticalScrollBar()->value(),
             std::min(view.verticalScrollBar()->maximum(), v0 + 30));
    // The scroll bar follows the pan, and moving it pans.
    QScrollBar* h = view.horizontalScrollBar();
    QVERIFY(h->maximum() > 0);
    const int value = h->value();
    h->setValue(value + 50);
    // (the bar counts whole pixels)
    QVERIFY(std::fabs(view.scale().t0() - (t0 - 120 * spp + 50 * spp)) <= 0.5 * spp);
}

void TestTimeline::bubbles() {
    TimelineView view;
    QVERIFY(showEvaluated(view, oneFOneB_, 1200, 900));
    const Timeline& tl = oneFOneB_.evaluation->timeline;
    for (int s = 0; s < tl.stages; ++s) {
        const auto list = view.bubbles(s);
        double firstStart = 1e300;
        for (const auto& op : tl.ops)
            if (op.stage == s && isCompute(op.kind)) {
                firstStart = std::min(firstStart, op.start_s);
                for (const auto& b : list)
                    QVERIFY2(op.end_s <= b.start_s + 1e-12 || op.start_s >= b.end_s - 1e-12,
                             qPrintable(describe(op)));
            }
        // A later stage waits for the first forward to arrive.
        if (s > 0) {
            QVERIFY(!list.empty());
            QCOMPARE(list.front().start_s, 0.0);
            QCOMPARE(list.front().end_s, firstStart);
        }
        for (std::size_t i = 1; i < list.size(); ++i)
            QVERIFY(list[i - 1].end_s <= list[i].start_s);
    }
    // The last stage idles longest at the start; hovering there finds the bubble.
    const auto last = view.bubbles(tl.stages - 1).front();
    view.setTimeRange(last.start_s, last.end_s);
    const int lastRow = view.rowCount() - 1;
    QRectF row = view.rowRect(lastRow);
    QScrollBar* v = view.verticalScrollBar();
    v->setValue(v->value() + int(row.center().y() - view.timeArea().center().y()));
    row = view.rowRect(lastRow);
    const QPoint pos(view.timeArea().center().x(), int(row.center().y()));
    QVERIFY(!view.opAt(pos));
    const auto hit = view.bubbleAt(pos);
    QVERIFY(hit);
    QCOMPARE(hit->stage, tl.stages - 1);
    QCOMPARE(hit->end_s, last.end_s);
    QVERIFY(view.toolTipFor(*hit).contains(QStringLiteral("Bubble")));
    QVERIFY(view.toolTipFor(*hit).contains(formatSeconds(last.end_s - last.start_s)));
    // Drawn: neither white nor an op colour.
    const QImage image = view.viewport()->grab().toImage();
    QVERIFY(shareOf(image, QRectF(pos - QPoint(40, 4), QSizeF(80, 8)), {QColor(Qt::white)}) < 0.05);
}

void TestTimeline::exportImage() {
    TimelineView view;
    view.resize(900, 400);
    view.setEvaluation(interleaved_.evaluation, interleaved_.buildings,
                       QStringLiteral("Hetero 70B"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QString error;
    const QString png = dir.filePath(QStringLiteral("timeline.png"));
    QVERIFY2(view.exportImage(png, &error), qPrintable(error));
    QImage image;
    QVERIFY(image.load(png));
    // Twice the size, all rows (taller than the window), the whole step.
    QVERIFY2(image.width() >= 2 * 1200, qPrintable(QString::number(image.width())));
    QVERIFY(image.height() > 2 * view.rowRect(15).bottom() - 2 * view.rowRect(0).top());
    // Forward blocks are in it.
    QVERIFY(shareOf(image, QRectF(0, 0, image.width() / 2.0, image.height() / 2.0),
                    {TimelineView::colorFor(OpKind::Forward)}) > 0.01);

    const QString svg = dir.filePath(QStringLiteral("timeline.svg"));
    QVERIFY2(view.exportImage(svg, &error), qPrintable(error));
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&file);
    int rects = 0;
    bool sawSvg = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            sawSvg |= xml.name() == QLatin1String("svg");
            rects += xml.name() == QLatin1String("rect") || xml.name() == QLatin1String("path");
        }
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(sawSvg);
    QVERIFY(rects > 100);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 2);
}

void TestTimeline::exportFailuresLeaveNoFile() {
    TimelineView view;
    view.resize(900, 400);
    view.setEvaluation(oneFOneB_.evaluation, oneFOneB_.buildings);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // A "folder" that is a file.
    const QString blocker = dir.filePath(QStringLiteral("not-a-folder"));
    {
        QFile f(blocker);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("x");
    }
    for (const QString& path :
         {blocker + QStringLiteral("/timeline.png"), blocker + QStringLiteral("/timeline.svg"),
          dir.filePath(QStringLiteral("missing/timeline.png"))}) {
        QString error;
        QVERIFY2(!view.exportImage(path, &error), qPrintable(path));
        QVERIFY2(error.contains(QDir::toNativeSeparators(path)), qPrintable(error));
        QVERIFY(!QFileInfo::exists(path));
    }
    QString error;
    const QString jpg = dir.filePath(QStringLiteral("timeline.jpg"));
    QVERIFY(!view.exportImage(jpg, &error));
    QVERIFY2(error.contains(QStringLiteral(".png or .svg")), qPrintable(error));
    // An existing picture stays as it was when a new export fails.
    const QString kept = dir.filePath(QStringLiteral("kept.png"));
    QVERIFY(view.exportImage(kept, &error));
    const QByteArray before = [&] {
        QFile f(kept);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    view.clear(QStringLiteral("The plan cannot be evaluated: tp must divide the heads"));
    QVERIFY(!view.exportImage(kept, &error));
    QVERIFY2(error.contains(QStringLiteral("no timeline")), qPrintable(error));
    QFile f(kept);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), before);
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 2);
}

void TestTimeline::clearShowsMessage() {
    TimelineView view;
    QVERIFY(showEvaluated(view, oneFOneB_, 800, 300));
    const QString message =
        QStringLiteral("The plan cannot be evaluated: pp*virtual_stages exceeds the layers");
    view.clear(message);
    QCOMPARE(view.message(), message);
    QCOMPARE(view.rowCount(), 0);
    QVERIFY(!view.evaluation());
    QVERIFY(!view.opAt(view.timeArea().center()));
    QCOMPARE(view.horizontalScrollBar()->maximum(), 0);
    const QImage image = view.viewport()->grab().toImage();
    // Text in the middle, nothing else.
    const QRectF middle(0, view.viewport()->height() / 2.0 - 10, view.viewport()->width(), 20);
    const double white = shareOf(image, middle, {QColor(Qt::white)});
    QVERIFY2(white < 0.99 && white > 0.7, qPrintable(QString::number(white)));
    const QRectF top(0, 0, view.viewport()->width(), 20);
    QCOMPARE(shareOf(image, top, {QColor(Qt::white)}), 1.0);
}

void TestTimeline::manyOpsPaintFast() {
    // 16 stages x 4 chunks x 128 microbatches, interleaved, half the stages
    // in each building: 16k compute ops and as many sends.
    PipelineInput in;
    in.kind = ScheduleKind::Interleaved;
    in.stages = 16;
    in.chunks = 4;
    in.microbatches = 128;
    const int V = in.stages * in.chunks;
    in.fwd.assign(16 * 4, 0.010);
    in.bwd.assign(16 * 4, 0.021);
    in.p2p_fwd.assign(std::size_t(V - 1), 0.0004);
    in.p2p_bwd.assign(std::size_t(V - 1), 0.0004);
    in.p2p_cross.assign(std::size_t(V - 1), 0);
    for (int vs = 0; vs + 1 < V; ++vs)
        in.p2p_cross[std::size_t(vs)] = (vs % 16 == 7 || vs % 16 == 15) ? 1 : 0;
    const PipelineResult r = simulatePipeline(in);
    QVERIFY(r.ok);
    auto ev = std::make_shared<Evaluation>();
    ev->timeline.stages = 16;
    ev->timeline.chunks = 4;
    ev->timeline.microbatches = 128;
    ev->timeline.makespan_s = r.makespan_s;
    ev->timeline.ops = r.ops;
    ev->step_time_s = r.makespan_s;
    for (int s = 0; s < 16; ++s)
        ev->stage_building.push_back(s < 8 ? 0 : 1);
    QVERIFY(ev->timeline.ops.size() > 30000);

    TimelineView view;
    view.resize(1400, 700);
    QElapsedTimer timer;
    timer.start();
    view.setEvaluation(ev, {QStringLiteral("B1"), QStringLiteral("B2")});
    const qint64 setMs = timer.restart();
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    timer.restart();
    const QImage fitted = view.viewport()->grab().toImage();
    const qint64 fitMs = timer.restart();
    view.setTimeRange(0.4 * r.makespan_s, 0.45 * r.makespan_s);
    const QImage zoomed = view.viewport()->grab().toImage();
    const qint64 zoomMs = timer.elapsed();
    qInfo("%zu ops: set %lld ms, paint fitted %lld ms, paint zoomed %lld ms",
          ev->timeline.ops.size(), setMs, fitMs, zoomMs);
    QCOMPARE(view.rowCount(), 64);
    // Generous bounds: these hold in debug and sanitizer builds too.
    QVERIFY2(setMs < 1000, qPrintable(QString::number(setMs)));
    QVERIFY2(fitMs < 1000, qPrintable(QString::number(fitMs)));
    QVERIFY2(zoomMs < 1000, qPrintable(QString::number(zoomMs)));
    QVERIFY(!fitted.isNull() && !zoomed.isNull());
    // Hit tests still land on the right op.
    const auto op =
        std::find_if(ev->timeline.ops.begin(), ev->timeline.ops.end(), [](const TimelineOp& o) {
            return o.kind == OpKind::Backward && o.stage == 13 && o.chunk == 2 &&
                   o.microbatch == 100;
        });
    QVERIFY(op != ev->timeline.ops.end());
    view.setTimeRange(op->start_s - 0.05, op->end_s + 0.05);
    const auto hit = view.opAt(reveal(view, *op).center().toPoint());
    QVERIFY(hit && sameOp(*hit, *op));
}

void TestTimeline::screenshots() {
    // For people to look at: SCALEACROSS_SCREENSHOT_DIR=/some/folder.
    const QString out = qEnvironmentVariable("SCALEACROSS_SCREENSHOT_DIR");
    if (out.isEmpty())
        QSKIP("set SCALEACROSS_SCREENSHOT_DIR to write timeline screenshots");
    QVERIFY(QDir().mkpath(out));
    struct Shot {
        const char* file;
        const char* scenario;
        std::optional<Schedule> schedule;
        bool zoom;
    };
    const Shot shots[] = {
        {"hetero-1f1b.png", "hetero-70b.json", std::nullopt, false},
        {"hetero-interleaved.png", "hetero-70b.json", Schedule{ScheduleKind::Interleaved, 2, false},
         false},
        {"hetero-interleaved-zoomed.png", "hetero-70b.json",
         Schedule{ScheduleKind::Interleaved, 2, false}, true},
        {"three-buildings-pp-1f1b.png", "three-buildings-405b-pp-across.json", std::nullopt, false},
        {"three-buildings-pp-interleaved.png", "three-buildings-405b-pp-across.json",
         Schedule{ScheduleKind::Interleaved, 2, true}, false},
        {"three-buildings-dp-1f1b.png", "three-buildings-405b.json", std::nullopt, false},
    };
    for (const Shot& shot : shots) {
        const Evaluated e = evaluateSample(shot.scenario, shot.schedule);
        QVERIFY2(e.evaluation, qPrintable(e.problem));
        TimelineView view;
        view.resize(1400, 600);
        view.setEvaluation(e.evaluation, e.buildings, QString::fromLatin1(shot.scenario));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        if (shot.zoom) {
            const double m = e.evaluation->timeline.makespan_s;
            view.setTimeRange(0.55 * m, 0.62 * m);
            view.verticalScrollBar()->setValue(view.verticalScrollBar()->maximum() / 2);
        }
        QVERIFY(view.grab().save(QDir(out).filePath(QLatin1String(shot.file))));
        const QString base = QDir(out).filePath(QLatin1String(shot.file)).chopped(4);
        QString error;
        QVERIFY2(view.exportImage(base + QStringLiteral("-export.png"), &error), qPrintable(error));
        // The SVG export as a viewer would draw it.
        QVERIFY2(view.exportImage(base + QStringLiteral("-export.svg"), &error), qPrintable(error));
        QSvgRenderer svg(base + QStringLiteral("-export.svg"));
        QVERIFY(svg.isValid());
        QImage drawn(svg.defaultSize(), QImage::Format_ARGB32);
        drawn.fill(Qt::white);
        QPainter painter(&drawn);
        svg.render(&painter);
        painter.end();
        QVERIFY(drawn.save(base + QStringLiteral("-export-svg.png")));
    }
}

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"

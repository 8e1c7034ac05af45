// The timeline's time axis without a window: seconds to pixels and back,
// zoom around a pixel, fit, pan, the 1-2-5 tick steps for ranges from
// nanoseconds to hours, and tick labels in one unit per axis.

#include "timescale.h"

#include "../common/fixtures.h"

#include <QSet>
#include <QTest>

#include <cmath>

using namespace sa::views;
using sa::testing::close;

namespace {

QString unitOf(const QString& label) {
    const auto space = label.lastIndexOf(QLatin1Char(' '));
    return space < 0 ? QString() : label.mid(space + 1);
}

} // namespace

class TestTimeScale : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void mapping();
    void roundTrip_data();
    void roundTrip();
    void zoomAround_data();
    void zoomAround();
    void zoomIsClamped();
    void fit_data();
    void fit();
    void fitOfAnEmptyRangeCentres();
    void pan();
    void niceStep_data();
    void niceStep();
    void majorStep_data();
    void majorStep();
    void ticks_data();
    void ticks();
    void minorStep_data();
    void minorStep();
    void tickLabel_data();
    void tickLabel();
};

void TestTimeScale::mapping() {
    const TimeScale s(1.0, 0.01, 800);
    QCOMPARE(s.x(1.5), 50.0);
    QCOMPARE(s.t(50), 1.5);
    QCOMPARE(s.visibleBegin(), 1.0);
    QCOMPARE(s.visibleEnd(), 9.0);
    QCOMPARE(s.visibleDuration(), 8.0);
    QCOMPARE(s.pixelsPerSecond(), 100.0);
}

void TestTimeScale::roundTrip_data() {
    QTest::addColumn<double>("t0");
    QTest::addColumn<double>("secondsPerPixel");
    QTest::addColumn<double>("x");
    QTest::newRow("origin") << 0.0 << 1e-3 << 0.0;
    QTest::newRow("10 s step, 1 px = 11 ms") << -0.1 << 0.011 << 937.0;
    QTest::newRow("negative x") << 2.0 << 0.5 << -120.0;
    QTest::newRow("deep zoom at 9.8 s") << 9.8 << 1e-9 << 1333.0;
    QTest::newRow("deep zoom, fraction of a pixel") << 9.8 << 1e-9 << 0.25;
    QTest::newRow("zoomed out") << -1000.0 << 100.0 << 640.5;
    QTest::newRow("microseconds") << 1e-6 << 3e-8 << 77.0;
}

void TestTimeScale::roundTrip() {
    QFETCH(double, t0);
    QFETCH(double, secondsPerPixel);
    QFETCH(double, x);
    const TimeScale s(t0, secondsPerPixel, 1000);
    const double t = s.t(x);
    QVERIFY2(close(s.x(t), x, 1e-6), qPrintable(QString::number(s.x(t), 'g', 17)));
    QVERIFY(close(s.t(s.x(t)), t, 1e-12));
    QVERIFY(close(t, t0 + x * secondsPerPixel, 1e-12));
}

void TestTimeScale::zoomAround_data() {
    QTest::addColumn<double>("t0");
    QTest::addColumn<double>("secondsPerPixel");
    QTest::addColumn<double>("x");
    QTest::addColumn<double>("factor");
    QTest::newRow("in at the left edge") << 0.0 << 0.01 << 0.0 << 2.0;
    QTest::newRow("in at the middle") << -0.1 << 0.011 << 500.0 << 1.25;
    QTest::newRow("out at the right edge") << 3.0 << 0.001 << 1000.0 << 0.8;
    QTest::newRow("in ten times, off centre") << 1.0 << 0.02 << 137.0 << 10.0;
    QTest::newRow("out a hundred times") << 5.0 << 1e-6 << 800.0 << 0.01;
    QTest::newRow("outside the area") << 0.0 << 0.01 << -50.0 << 1.5;
}

void TestTimeScale::zoomAround() {
    QFETCH(double, t0);
    QFETCH(double, secondsPerPixel);
    QFETCH(double, x);
    QFETCH(double, factor);
    TimeScale s(t0, secondsPerPixel, 1000);
    const double before = s.t(x);
    s.zoomAround(x, factor);
    QVERIFY2(
        close(s.t(x), before, 1e-12),
        qPrintable(QStringLiteral("%1 != %2").arg(s.t(x), 0, 'g', 17).arg(before, 0, 'g', 17)));
    QVERIFY(close(s.secondsPerPixel(), secondsPerPixel / factor, 1e-12));
    QCOMPARE(s.width(), 1000.0);
}

void TestTimeScale::zoomIsClamped() {
    TimeScale s(2.0, 1e-6, 1000);
    const double before = s.t(300);
    s.zoomAround(300, 1e9);
    QCOMPARE(s.secondsPerPixel(), TimeScale::kMinSecondsPerPixel);
    QVERIFY(close(s.t(300), before, 1e-12));
    s.setZoomLimits(1e-6, 1e-2);
    QCOMPARE(s.secondsPerPixel(), 1e-6);
    const double after = s.t(300);
    s.zoomAround(300, 1e-9);
    QCOMPARE(s.secondsPerPixel(), 1e-2);
    QVERIFY(close(s.t(300), after, 1e-12));
    // Limits clamp the current zoom too; nonsense factors change nothing.
    s.setZoomLimits(1e-6, 1e-3);
    QCOMPARE(s.secondsPerPixel(), 1e-3);
    const double t0 = s.t0();
    s.zoomAround(10, 0);
    s.zoomAround(10, -2);
    s.zoomAround(10, std::nan(""));
    QCOMPARE(s.t0(), t0);
    QCOMPARE(s.secondsPerPixel(), 1e-3);
}

void TestTimeScale::fit_data() {
    QTest::addColumn<double>("begin");
    QTest::addColumn<double>("end");
    QTest::addColumn<double>("width");
    QTest::newRow("a 10 s step in 1200 px") << -0.1 << 10.1 << 1200.0;
    QTest::newRow("50 ms in 300 px") << 0.0 << 0.05 << 300.0;
    QTest::newRow("reversed") << 7.0 << 3.0 << 640.0;
    QTest::newRow("microseconds") << 1e-6 << 5e-6 << 1000.0;
    QTest::newRow("an hour") << 0.0 << 3600.0 << 1800.0;
}

void TestTimeScale::fit() {
    QFETCH(double, begin);
    QFETCH(double, end);
    QFETCH(double, width);
    TimeScale s;
    s.fit(begin, end, width);
    const double lo = std::min(begin, end), hi = std::max(begin, end);
    QCOMPARE(s.width(), width);
    QVERIFY(close(s.x(lo), 0, 1e-9));
    QVERIFY(close(s.x(hi), width, 1e-9));
    QVERIFY(close(s.visibleBegin(), lo, 1e-12));
    QVERIFY(close(s.visibleEnd(), hi, 1e-9));
}

void TestTimeScale::fitOfAnEmptyRangeCentres() {
    TimeScale s(0, 0.5, 100);
    s.fit(3.0, 3.0, 200);
    QCOMPARE(s.secondsPerPixel(), 0.5);
    QVERIFY(close(s.x(3.0), 100, 1e-12));
    // Shorter than the zoom limit allows: the closest zoom, centred.
    s.fit(1.0, 1.0 + 1e-10, 1000);
    QCOMPARE(s.secondsPerPixel(), TimeScale::kMinSecondsPerPixel);
    QVERIFY(close(s.x(1.0 + 0.5e-10), 500, 1e-6));
}

void TestTimeScale::pan() {
    TimeScale s(1.0, 0.01, 500);
    s.pan(100); // drag right: earlier times come in from the left
    QVERIFY(close(s.t0(), 0.0, 1e-12));
    s.pan(-250);
    QVERIFY(close(s.t0(), 2.5, 1e-12));
    QCOMPARE(s.secondsPerPixel(), 0.01);
}

void TestTimeScale::niceStep_data() {
    QTest::addColumn<double>("atLeast");
    QTest::addColumn<double>("step");
    QTest::newRow("1") << 1.0 << 1.0;
    QTest::newRow("1.01") << 1.01 << 2.0;
    QTest::newRow("2") << 2.0 << 2.0;
    QTest::newRow("2.5") << 2.5 << 5.0;
    QTest::newRow("5") << 5.0 << 5.0;
    QTest::newRow("7") << 7.0 << 10.0;
    QTest::newRow("0.3") << 0.3 << 0.5;
    QTest::newRow("0.2") << 0.2 << 0.2;
    QTest::newRow("0.1") << 0.1 << 0.1;
    QTest::newRow("0.001") << 0.001 << 0.001;
    QTest::newRow("0.00013") << 0.00013 << 0.0002;
    QTest::newRow("1.5e-7") << 1.5e-7 << 2e-7;
    QTest::newRow("4.2e-9") << 4.2e-9 << 5e-9;
    QTest::newRow("12345") << 12345.0 << 20000.0;
    QTest::newRow("zero") << 0.0 << 1.0;
}

void TestTimeScale::niceStep() {
    QFETCH(double, atLeast);
    QFETCH(double, step);
    QVERIFY2(close(TimeScale::niceStep(atLeast), step, 1e-12),
             qPrintable(QString::number(TimeScale::niceStep(atLeast), 'g', 17)));
}

void TestTimeScale::majorStep_data() {
    QTest::addColumn<double>("duration");
    QTest::addColumn<double>("width");
    QTest::addColumn<double>("step");
    QTest::newRow("10 s in 900 px") << 10.0 << 900.0 << 1.0;
    QTest::newRow("10.2 s in 1000 px") << 10.2 << 1000.0 << 1.0;
    QTest::newRow("10 s in 1500 px") << 10.0 << 1500.0 << 1.0;
    QTest::newRow("10 s in 400 px") << 10.0 << 400.0 << 5.0;
    QTest::newRow("50 ms in 1000 px") << 0.05 << 1000.0 << 0.005;
    QTest::newRow("30 ms in 1000 px") << 0.03 << 1000.0 << 0.005;
    QTest::newRow("3 µs in 800 px") << 3e-6 << 800.0 << 5e-7;
    QTest::newRow("1 h in 1800 px") << 3600.0 << 1800.0 << 200.0;
}

void TestTimeScale::majorStep() {
    QFETCH(double, duration);
    QFETCH(double, width);
    QFETCH(double, step);
    TimeScale s;
    s.fit(0, duration, width);
    QVERIFY2(close(s.majorStep(), step, 1e-12),
             qPrintable(QString::number(s.majorStep(), 'g', 17)));
}

void TestTimeScale::ticks_data() {
    QTest::addColumn<double>("begin");
    QTest::addColumn<double>("duration");
    QTest::addColumn<double>("width");
    // Ranges over twelve decades, odd offsets, several window widths.
    for (int decade = -8; decade <= 3; ++decade) {
        for (double mantissa : {1.0, 2.7, 6.1}) {
            for (double width : {320.0, 1013.0, 2560.0}) {
                const double duration = mantissa * std::pow(10.0, decade);
                const double begin = decade % 2 == 0 ? -0.013 * duration : 3.37 * duration;
                QTest::addRow("%g s from %g in %g px", duration, begin, width)
                    << begin << duration << width;
            }
        }
    }
}

void TestTimeScale::ticks() {
    QFETCH(double, begin);
    QFETCH(double, duration);
    QFETCH(double, width);
    TimeScale s;
    s.fit(begin, begin + duration, width);
    const double step = s.majorStep();
    const auto ticks = s.ticks();
    QVERIFY(!ticks.empty());
    // At least the wanted spacing, and never more than a 1-2-5 jump above it.
    const double spacing = step / s.secondsPerPixel();
    QVERIFY2(spacing >= TimeScale::kDefaultTickSpacing * (1 - 1e-9),
             qPrintable(QString::number(spacing)));
    QVERIFY2(spacing <= 2.5 * TimeScale::kDefaultTickSpacing * (1 + 1e-9),
             qPrintable(QString::number(spacing)));
    QVERIFY(ticks.front().t - s.visibleBegin() < step * (1 + 1e-9));
    QVERIFY(s.visibleEnd() - ticks.back().t < step * (1 + 1e-9));
    QSet<QString> labels;
    const QString unit = unitOf(ticks.back().label);
    QVERIFY2(!unit.isEmpty(), qPrintable(ticks.back().label));
    for (const auto& tick : ticks) {
        QVERIFY(tick.t >= s.visibleBegin() - step * 1e-9);
        QVERIFY(tick.t <= s.visibleEnd() + step * 1e-9);
        QVERIFY(close(tick.x, s.x(tick.t), 1e-9));
        const double k = tick.t / step;
        QVERIFY2(std::fabs(k - std::round(k)) < 1e-6, qPrintable(QString::number(k, 'g', 17)));
        // One unit for the whole axis, and no two ticks read the same.
        if (tick.label != QLatin1String("0"))
            QCOMPARE(unitOf(tick.label), unit);
        QVERIFY2(!labels.contains(tick.label), qPrintable(tick.label));
        labels.insert(tick.label);
        // Short enough to sit between two ticks.
        QVERIFY2(tick.label.size() <= 12, qPrintable(tick.label));
    }
}

void TestTimeScale::minorStep_data() {
    QTest::addColumn<double>("major");
    QTest::addColumn<double>("minor");
    QTest::newRow("1 s") << 1.0 << 0.2;
    QTest::newRow("2 ms") << 0.002 << 0.0005;
    QTest::newRow("5 µs") << 5e-6 << 1e-6;
    QTest::newRow("20 s") << 20.0 << 5.0;
}

void TestTimeScale::minorStep() {
    QFETCH(double, major);
    QFETCH(double, minor);
    QVERIFY(close(TimeScale::minorStep(major), minor, 1e-12));
}

void TestTimeScale::tickLabel_data() {
    QTest::addColumn<double>("t");
    QTest::addColumn<double>("step");
    QTest::addColumn<double>("largest");
    QTest::addColumn<QString>("label");
    QTest::newRow("zero") << 0.0 << 1.0 << 10.0 << QStringLiteral("0");
    QTest::newRow("almost zero") << 1e-19 << 0.001 << 10.0 << QStringLiteral("0");
    QTest::newRow("seconds") << 12.0 << 2.0 << 20.0 << QStringLiteral("12 s");
    QTest::newRow("tenths") << 1.2 << 0.2 << 1.4 << QStringLiteral("1.2 s");
    QTest::newRow("ms steps on a 10 s axis") << 9.802 << 0.002 << 10.0 << QStringLiteral("9.802 s");
    QTest::newRow("half-ms steps on a 10 s axis")
        << 9.8005 << 0.0005 << 10.0 << QStringLiteral("9800.5 ms");
    QTest::newRow("ms axis") << 0.005 << 0.005 << 0.05 << QStringLiteral("5 ms");
    QTest::newRow("half ms") << 0.0015 << 0.0005 << 0.004 << QStringLiteral("1.5 ms");
    QTest::newRow("microseconds") << 1e-6 << 1e-6 << 1e-5 << QStringLiteral("1 µs");
    QTest::newRow("nanoseconds") << 2.5e-8 << 5e-9 << 1e-7 << QStringLiteral("25 ns");
    QTest::newRow("negative") << -0.5 << 0.5 << 3.0 << QStringLiteral("-0.5 s");
    QTest::newRow("hours") << 3600.0 << 200.0 << 3700.0 << QStringLiteral("3600 s");
    QTest::newRow("float noise") << 0.1 + 0.2 << 0.1 << 1.0 << QStringLiteral("0.3 s");
}

void TestTimeScale::tickLabel() {
    QFETCH(double, t);
    QFETCH(double, step);
    QFETCH(double, largest);
    QFETCH(QString, label);
    QCOMPARE(TimeScale::tickLabel(t, step, largest), label);
}

QTEST_GUILESS_MAIN(TestTimeScale)
#include "tst_timescale.moc"

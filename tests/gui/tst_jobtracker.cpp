// The background job helper: results arrive on the context's thread as
// shared immutable values; a stale generation never overwrites a newer
// one; a dead context or a cancel drops the result.

#include "jobtracker.h"

#include <QSemaphore>
#include <QTest>
#include <QThread>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace sa::views;
using namespace std::chrono_literals;

class TestJobTracker : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void deliversOnContextThread();
    void staleResultNeverOverwritesNewer();
    void onlyNewestOfABurstArrives();
    void cancelDropsResult();
    void deadContextDropsResult();
    void trackerDestroyedWhileRunning();
};

void TestJobTracker::deliversOnContextThread() {
    QObject context;
    JobTracker tracker(&context);
    std::shared_ptr<const int> got;
    QThread* worker = nullptr;
    QThread* delivery = nullptr;
    tracker.startJob(
        [&](const std::atomic<bool>&) {
            worker = QThread::currentThread();
            return 42;
        },
        [&](std::shared_ptr<const int> r) {
            delivery = QThread::currentThread();
            got = std::move(r);
        });
    QVERIFY(tracker.isJobRunning());
    QTRY_VERIFY(got);
    QCOMPARE(*got, 42);
    QCOMPARE(delivery, QThread::currentThread());
    QVERIFY(worker != QThread::currentThread());
    QVERIFY(!tracker.isJobRunning());
}

void TestJobTracker::staleResultNeverOverwritesNewer() {
    QObject context;
    // Two workers, so the slow old job and the quick new one run at once.
    JobTracker tracker(&context, 2);
    QSemaphore started;
    QSemaphore release;
    std::atomic<bool> oldSawCancel{false};
    std::vector<int> delivered;
    tracker.startJob(
        [&](const std::atomic<bool>& cancelled) {
            started.release();
            release.acquire();
            oldSawCancel = cancelled.load();
            return 1;
        },
        [&](std::shared_ptr<const int> r) { delivered.push_back(*r); });
    started.acquire(); // the old job is running, not merely queued
    const auto newer =
        tracker.startJob([](const std::atomic<bool>&) { return 2; },
                         [&](std::shared_ptr<const int> r) { delivered.push_back(*r); });
    QCOMPARE(tracker.generation(), newer);
    QTRY_COMPARE(delivered.size(), std::size_t(1));
    QCOMPARE(delivered.front(), 2);
    // Now the old job finishes: its result must not arrive.
    release.release();
    tracker.waitForIdle();
    QTest::qWait(50);
    QCoreApplication::processEvents();
    QCOMPARE(delivered, std::vector<int>{2});
    QVERIFY(oldSawCancel.load());
}

void TestJobTracker::onlyNewestOfABurstArrives() {
    QObject context;
    JobTracker tracker(&context, 4);
    std::vector<int> delivered;
    std::atomic<int> ran{0};
    for (int i = 0; i < 50; ++i)
        tracker.startJob(
            [i, &ran](const std::atomic<bool>&) {
                ++ran;
                std::this_thread::sleep_for(1ms);
                return i;
            },
            [&](std::shared_ptr<const int> r) { delivered.push_back(*r); });
    QTRY_COMPARE(delivered.size(), std::size_t(1));
    tracker.waitForIdle();
    QTest::qWait(20);
    QCOMPARE(delivered, std::vector<int>{49});
    // Jobs queued behind newer ones are skipped before they start.
    QVERIFY2(ran.load() < 50, qPrintable(QString::number(ran.load())));
}

void TestJobTracker::cancelDropsResult() {
    QObject context;
    JobTracker tracker(&context);
    bool delivered = false;
    tracker.startJob(
        [](const std::atomic<bool>&) {
            std::this_thread::sleep_for(20ms);
            return 1;
        },
        [&](std::shared_ptr<const int>) { delivered = true; });
    tracker.cancel();
    QVERIFY(!tracker.isJobRunning());
    tracker.waitForIdle();
    QTest::qWait(50);
    QVERIFY(!delivered);
}

void TestJobTracker::deadContextDropsResult() {
    auto* context = new QObject;
    bool delivered = false;
    {
        JobTracker tracker(context);
        QSemaphore release;
        tracker.startJob(
            [&](const std::atomic<bool>&) {
                release.acquire();
                return 1;
            },
            [&](std::shared_ptr<const int>) { delivered = true; });
        delete context;
        release.release();
        tracker.waitForIdle();
    }
    QTest::qWait(50);
    QVERIFY(!delivered);
}

void TestJobTracker::trackerDestroyedWhileRunning() {
    QObject context;
    bool delivered = false;
    {
        JobTracker tracker(&context);
        tracker.startJob(
            [](const std::atomic<bool>& cancelled) {
                // A cooperative job: stops soon after the cancel.
                for (int i = 0; i < 1000 && !cancelled; ++i)
                    std::this_thread::sleep_for(1ms);
                return 1;
            },
            [&](std::shared_ptr<const int>) { delivered = true; });
        std::this_thread::sleep_for(5ms);
    } // the destructor cancels and waits
    QTest::qWait(50);
    QVERIFY(!delivered);
}

QTEST_GUILESS_MAIN(TestJobTracker)
#include "tst_jobtracker.moc"

#pragma once
// One helper for all background work of the GUI, after KDAB hotspot's
// JobTracker. Each startJob() begins a new generation and cancels the
// previous one; the job runs on a worker thread and gets a cancel flag to
// poll; its result travels back to the context's thread through a queued
// invokeMethod and is handed over as an immutable shared value, unless a
// newer generation started meanwhile or the context is gone — then it is
// dropped. The UI thread never waits for a job (except in the destructor,
// for a job that is already cancelled).
//
// Qt's thread pool and event queue synchronise inside libQt6Core, which
// ThreadSanitizer cannot see: every hand-over here (job to worker, result
// to the context's thread, worker to waitForIdle) is annotated, see
// util/tsan_annotations.h.

#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QRunnable>
#include <QThreadPool>

#include "util/tsan_annotations.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

namespace sa::views {

// Queues f() to run on `receiver`'s thread (a queued call), from any thread.
template <class F> bool postTo(QObject* receiver, F&& f) {
    return QMetaObject::invokeMethod(receiver, tsan::handOver(std::forward<F>(f)),
                                     Qt::QueuedConnection);
}

class JobTracker {
public:
    // Results are delivered on `context`'s thread while it lives.
    explicit JobTracker(QObject* context, int threads = 1);
    ~JobTracker();
    JobTracker(const JobTracker&) = delete;
    JobTracker& operator=(const JobTracker&) = delete;

    // job: (const std::atomic<bool>& cancelled) -> T, runs on a worker.
    // then: (std::shared_ptr<const T>) -> void, runs on the context's thread,
    // only for the newest generation. Returns the new generation.
    template <class Job, class Then> std::uint64_t startJob(Job&& job, Then&& then);

    // Cancels the running generation; its result will be dropped.
    void cancel();
    bool isJobRunning() const { return running_; }
    std::uint64_t generation() const { return state_->generation.load(); }
    // Blocks until every worker is idle (tests, shutdown).
    void waitForIdle();

private:
    struct State {
        std::atomic<std::uint64_t> generation{0};
    };
    // A pool job: constructing it releases, running it acquires, on its own
    // address; the end of a run releases on `idle` for waitForIdle().
    template <class F> class Runnable final : public QRunnable {
    public:
        Runnable(F f, const void* idle)
            : f_(std::move(f))
            , idle_(idle) {
            tsan::release(this);
        }
        void run() override {
            tsan::acquire(this);
            f_();
            tsan::release(idle_);
        }

    private:
        F f_;
        const void* idle_;
    };

    QPointer<QObject> context_;
    // Results are posted to this object, not to the context: it lives
    // exactly as long as the tracker, which waits for its workers before
    // destroying it, so a worker never posts to an object being deleted on
    // another thread. The context is checked on its own thread instead.
    std::unique_ptr<QObject> receiver_;
    std::shared_ptr<State> state_ = std::make_shared<State>();
    std::shared_ptr<std::atomic<bool>> cancelFlag_;
    bool running_ = false;
    QThreadPool pool_;
};

template <class Job, class Then> std::uint64_t JobTracker::startJob(Job&& job, Then&& then) {
    using Result = std::decay_t<std::invoke_result_t<Job&, const std::atomic<bool>&>>;

    if (cancelFlag_)
        cancelFlag_->store(true);
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    cancelFlag_ = cancelled;
    const std::uint64_t generation = ++state_->generation;
    running_ = true;

    auto deliver = [this, then = std::forward<Then>(then), state = state_, context = context_,
                    generation](std::shared_ptr<const Result> result) mutable {
        // Runs on the context's thread, from the receiver's event queue:
        // the tracker (which owns the receiver) is alive.
        if (!context || state->generation.load() != generation)
            return;
        running_ = false;
        then(std::move(result));
    };

    auto work = [job = std::forward<Job>(job), deliver = std::move(deliver), cancelled,
                 receiver = receiver_.get(), state = state_, generation]() mutable {
        // A job queued behind a newer one is dropped before it starts.
        if (cancelled->load() || state->generation.load() != generation)
            return;
        auto result = std::make_shared<const Result>(job(*cancelled));
        if (cancelled->load())
            return;
        postTo(receiver, [deliver = std::move(deliver), result = std::move(result)]() mutable {
            deliver(std::move(result));
        });
    };
    pool_.start(new Runnable<decltype(work)>(std::move(work), &pool_));
    return generation;
}

} // namespace sa::views

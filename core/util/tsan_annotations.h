#pragma once
// Happens-before annotations for ThreadSanitizer.
//
// TSan sees the synchronisation of code built with -fsanitize=thread and of
// the C library, not the one inside the distribution's oneTBB and Qt: a task
// taken by a TBB worker, a job taken from a QThreadPool or a call taken from
// another thread's event queue looks to it like unsynchronised sharing.
// These helpers state, at the points where our code hands work to such a
// library and takes it back, what the library guarantees: everything one
// thread did before release(key) happens before everything another thread
// does after a later acquire(key). A key is only an address.
//
// Without TSan everything here compiles to nothing (HandedOver<F> to a plain
// wrapper of F).

#include <type_traits>
#include <utility>

#if defined(__SANITIZE_THREAD__)
#define SCALEACROSS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SCALEACROSS_TSAN 1
#endif
#endif

#ifdef SCALEACROSS_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace sa::tsan {

inline void release([[maybe_unused]] const void* key) {
#ifdef SCALEACROSS_TSAN
    __tsan_release(const_cast<void*>(key));
#endif
}

inline void acquire([[maybe_unused]] const void* key) {
#ifdef SCALEACROSS_TSAN
    __tsan_acquire(const_cast<void*>(key));
#endif
}

// A fork/join loop run by a task scheduler: fork() before handing the loop
// over, a Task guard for the whole body of each task, join() once the loop
// has returned. The two directions use separate keys, so tasks are not
// ordered with each other: a race between two tasks is still reported.
class ForkJoin {
public:
    ForkJoin() = default;
    ForkJoin(const ForkJoin&) = delete;
    ForkJoin& operator=(const ForkJoin&) = delete;

    void fork() const { release(&toTasks_); }
    void join() const { acquire(&fromTasks_); }

    class Task {
    public:
        explicit Task(const ForkJoin& loop)
            : loop_(loop) {
            acquire(&loop_.toTasks_);
        }
        ~Task() { release(&loop_.fromTasks_); }
        Task(const Task&) = delete;
        Task& operator=(const Task&) = delete;

    private:
        const ForkJoin& loop_;
    };

private:
    char toTasks_ = 0;
    char fromTasks_ = 0;
};

// A callable that travels to another thread through a library's queue (a
// queued Qt call). Each construction releases on the new object's address,
// and calling or destroying it acquires on its own address first: whatever
// the sending thread did before the callable reached its final place
// happens before the receiving thread runs or drops it. A call releases
// again when it returns, for the library may destroy the callable on the
// sending thread (Qt: whichever thread drops the last reference to the
// queued call). The key is `this`, so nothing is read before the acquire.
template <class F> class HandedOver {
public:
    explicit HandedOver(F f)
        : f_(std::move(f)) {
        release(this);
    }
    HandedOver(HandedOver&& other) noexcept(std::is_nothrow_move_constructible_v<F>)
        : f_(std::move(other.f_)) {
        release(this);
    }
    HandedOver(const HandedOver& other)
        : f_(other.f_) {
        release(this);
    }
    HandedOver& operator=(const HandedOver&) = delete;
    HandedOver& operator=(HandedOver&&) = delete;
    ~HandedOver() { acquire(this); }

    decltype(auto) operator()() {
        acquire(this);
        const ReleaseOnReturn done{this};
        return f_();
    }

private:
    struct ReleaseOnReturn {
        const void* key;
        ~ReleaseOnReturn() { release(key); }
    };
    F f_;
};

template <class F> HandedOver<std::decay_t<F>> handOver(F&& f) {
    return HandedOver<std::decay_t<F>>(std::forward<F>(f));
}

} // namespace sa::tsan

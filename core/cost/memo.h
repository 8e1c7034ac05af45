#pragma once
// Memo<In, Out, N>: the last N results of one stage of the evaluation, each
// kept by the stage's whole input. A stage's input struct is its key by
// construction (operator== = default), so a key cannot drift from what the
// stage reads.
//
// Inputs that are the output of an earlier stage are held as a Ref: the
// address of that output and the version its memo gave it when it was
// computed. Refs compare by version alone, so comparing a downstream key
// costs nothing however large the upstream output is, and an equal version
// means the very same computation.

#include <array>
#include <cstddef>
#include <cstdint>

namespace sa {

template <class T> class Ref {
public:
    Ref() = default;
    Ref(const T* value, std::uint64_t version)
        : value_(value)
        , version_(version) {}
    const T& operator*() const { return *value_; }
    const T* operator->() const { return value_; }
    std::uint64_t version() const { return version_; }
    bool operator==(const Ref& o) const { return version_ == o.version_; }

private:
    const T* value_ = nullptr;
    std::uint64_t version_ = 0; // 0: nothing
};

// Round-robin replacement: plans met in a row often alternate between a few
// inputs (the optimizer walks ZeRO stages and layer splits innermost).
// Entries never move, so a Ref into one stays valid until that entry is
// recomputed, and then its version changes.
template <class In, class Out, std::size_t N = 4> class Memo {
public:
    // The output for `in`: kept, or computed by compute(in, out) into an
    // entry (whose previous output it may reuse as a buffer).
    template <class Compute> Ref<Out> get(const In& in, Compute&& compute) {
        for (Entry& e : entries_)
            if (e.version != 0 && e.in == in) {
                ++hits_;
                return {&e.out, e.version};
            }
        ++misses_;
        Entry& e = entries_[next_];
        next_ = (next_ + 1) % N;
        e.version = 0;
        e.in = in;
        compute(e.in, e.out);
        e.version = ++lastVersion_;
        return {&e.out, e.version};
    }
    std::int64_t hits() const { return hits_; }
    std::int64_t misses() const { return misses_; }

private:
    struct Entry {
        In in{};
        Out out{};
        std::uint64_t version = 0; // 0: empty
    };
    std::array<Entry, N> entries_{};
    std::size_t next_ = 0;
    std::uint64_t lastVersion_ = 0; // never reset: a version names one computation
    std::int64_t hits_ = 0, misses_ = 0;
};

} // namespace sa

// Uninstrumented in ThreadSanitizer builds, see util/parallel.h.
#include "util/parallel.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>

namespace sa::detail {

void forEachChunk(std::uint64_t n, std::uint64_t grain, tbb::task_arena* arena, RunChunk run,
                  const void* context) {
    auto loop = [&] {
        tbb::parallel_for(
            tbb::blocked_range<std::uint64_t>(0, n, std::max<std::uint64_t>(1, grain)),
            [&](const tbb::blocked_range<std::uint64_t>& r) { run(context, r.begin(), r.end()); });
    };
    if (arena)
        arena->execute(loop);
    else
        loop();
}

} // namespace sa::detail

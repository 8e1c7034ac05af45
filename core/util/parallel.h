#pragma once
// Fork/join loops on oneTBB.
//
// ThreadSanitizer cannot see the synchronisation inside libtbb, so the loop
// is split in two: parallel_tbb.cpp instantiates the scheduler's templates
// and is left uninstrumented in TSan builds, like libtbb itself (see
// core/CMakeLists.txt); parallel.cpp stays instrumented and annotates the
// hand-overs: to each chunk before it reads anything of the caller's, and
// from each chunk to the return (util/tsan_annotations.h). The bodies
// themselves are instrumented: a race between two chunks is reported.

#include <tbb/task_arena.h>

#include <cstdint>
#include <functional>

namespace sa {

using ChunkBody = std::function<void(std::uint64_t begin, std::uint64_t end)>;

// Calls body(begin, end) for chunks that cover [0, n), each at least `grain`
// long where n allows, in parallel inside `arena` (the caller's arena when
// null), and returns when all have run. Everything the caller did before
// happens before each chunk; each chunk happens before the return.
void parallelChunks(std::uint64_t n, std::uint64_t grain, tbb::task_arena* arena,
                    const ChunkBody& body);

namespace detail {
// parallel_tbb.cpp: the loop itself; run(context, begin, end) per chunk.
using RunChunk = void (*)(const void* context, std::uint64_t begin, std::uint64_t end);
void forEachChunk(std::uint64_t n, std::uint64_t grain, tbb::task_arena* arena, RunChunk run,
                  const void* context);
} // namespace detail

} // namespace sa

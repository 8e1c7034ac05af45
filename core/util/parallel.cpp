#include "util/parallel.h"

#include "util/tsan_annotations.h"

namespace sa {

namespace {

struct Loop {
    tsan::ForkJoin handOver;
    const ChunkBody* body = nullptr;
};

// Called on a TBB thread by the uninstrumented loop: the acquire needs only
// the address, so it comes before any read of the caller's data.
void runChunk(const void* context, std::uint64_t begin, std::uint64_t end) {
    const Loop& loop = *static_cast<const Loop*>(context);
    const tsan::ForkJoin::Task task(loop.handOver);
    (*loop.body)(begin, end);
}

} // namespace

void parallelChunks(std::uint64_t n, std::uint64_t grain, tbb::task_arena* arena,
                    const ChunkBody& body) {
    Loop loop;
    loop.body = &body;
    loop.handOver.fork();
    detail::forEachChunk(n, grain, arena, &runChunk, &loop);
    loop.handOver.join();
}

} // namespace sa

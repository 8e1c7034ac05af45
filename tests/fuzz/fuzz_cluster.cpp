// libFuzzer entry point; the target itself is sa::fuzz::cluster in targets.h.
#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return sa::fuzz::cluster(data, size);
}

#include "model/cluster.h"

#include <algorithm>
#include <cctype>

namespace sa {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// A chip name ("h100", "a100", ...) as a word of the GPU model's name:
// "H100-SXM5-80GB", "GH200", "nvidia_a100_80gb" match; "xh1000" does not.
bool namesChip(const std::string& name, const char* chip) {
    const std::string c = chip;
    for (std::size_t at = name.find(c); at != std::string::npos; at = name.find(c, at + 1)) {
        const std::size_t end = at + c.size();
        const bool digitAfter = end < name.size() && std::isdigit((unsigned char)name[end]);
        if (!digitAfter)
            return true;
    }
    return false;
}

} // namespace

GpuArch gpuArch(const GpuModel& g) {
    const std::string given = lower(g.architecture);
    if (given == "ampere")
        return GpuArch::Ampere;
    if (given == "hopper")
        return GpuArch::Hopper;
    if (given == "blackwell")
        return GpuArch::Blackwell;
    const std::string n = lower(g.name);
    for (const char* chip : {"h100", "h200", "h800", "h20"})
        if (namesChip(n, chip))
            return GpuArch::Hopper;
    for (const char* chip : {"b100", "b200", "b300"})
        if (namesChip(n, chip))
            return GpuArch::Blackwell;
    for (const char* chip : {"a100", "a800", "a30", "a10"})
        if (namesChip(n, chip))
            return GpuArch::Ampere;
    return GpuArch::Unknown;
}

const char* toString(GpuArch a) {
    switch (a) {
    case GpuArch::Unknown:
        return "";
    case GpuArch::Ampere:
        return "ampere";
    case GpuArch::Hopper:
        return "hopper";
    case GpuArch::Blackwell:
        return "blackwell";
    }
    return "";
}

} // namespace sa

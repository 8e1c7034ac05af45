// Stand-in for core/frameworks/torchtitan.cpp until it lands: both entry
// points answer with a problem, so that the other frameworks link.
#include "frameworks/framework.h"

namespace sa::frameworks {

Imported importTorchtitan(const std::string&, const ImportOptions& opt) {
    Imported out;
    out.problems.push_back({opt.file, "", "torchtitan import is not built yet"});
    return out;
}

Exported exportTorchtitan(const Model&, const Plan&) {
    Exported out;
    out.problems.push_back({"", "", "torchtitan export is not built yet"});
    return out;
}

} // namespace sa::frameworks

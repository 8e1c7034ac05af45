#include "frameworks/framework.h"

namespace sa::frameworks {

const char* toString(Framework f) {
    switch (f) {
    case Framework::Megatron:
        return "megatron";
    case Framework::Nemo:
        return "nemo";
    case Framework::Torchtitan:
        return "torchtitan";
    }
    return "?";
}

std::optional<Framework> frameworkFromString(const std::string& s) {
    for (Framework f : {Framework::Megatron, Framework::Nemo, Framework::Torchtitan})
        if (s == toString(f))
            return f;
    return std::nullopt;
}

Exported exportPlan(Framework f, const Model& model, const Plan& plan) {
    switch (f) {
    case Framework::Megatron:
        return exportMegatron(model, plan);
    case Framework::Nemo:
        return exportNemo(model, plan);
    case Framework::Torchtitan:
        return exportTorchtitan(model, plan);
    }
    Exported out;
    out.problems.push_back({"", "", "unknown framework"});
    return out;
}

} // namespace sa::frameworks

#include "frameworks/framework.h"

#include "cost/outer.h"

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

Exported exportPlan(Framework f, const Cluster& cluster, const Model& model, const Plan& plan) {
    const std::optional<Plan> hsdp = outerHsdpAsDpShard(cluster, plan);
    if (!hsdp)
        return exportPlan(f, model, plan);
    Exported out = exportPlan(f, model, *hsdp);
    const int shard = hsdp->dpShard();
    const std::string note = "outer_sync hsdp over " + std::to_string(plan.parallelism.dp / shard) +
                             " workers of " + std::to_string(shard) +
                             " replicas each, written as the plan's dp_shard " +
                             std::to_string(shard) + " (the same HSDP groups, priced the same)";
    out.notes.insert(out.notes.begin(), note);
    // After the first line (a shebang, or the file's title comment).
    const std::size_t eol = out.text.find('\n');
    out.text.insert(eol == std::string::npos ? out.text.size() : eol + 1, "# note: " + note + "\n");
    return out;
}

} // namespace sa::frameworks

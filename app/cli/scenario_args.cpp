#include "scenario_args.h"

#include "formats/documents.h"

#include <nlohmann/json.hpp>

#include <filesystem>

#include <cstdio>

namespace sa::cli {

namespace {
void printProblems(const std::vector<Diagnostic>& problems) {
    for (const auto& p : problems)
        std::fprintf(stderr, "%s\n", p.str().c_str());
}
} // namespace

std::optional<Scenario> loadScenarioArgs(const Args& args, bool requirePlan) {
    const auto cluster = args.value("cluster");
    const auto model = args.value("model");
    const auto plan = args.value("plan");
    if (!args.positional().empty()) {
        if (cluster || model || plan) {
            std::fprintf(stderr, "give either a scenario file or --cluster/--model/--plan\n");
            return std::nullopt;
        }
        if (args.positional().size() > 1) {
            std::fprintf(stderr, "one scenario file expected, got %zu\n", args.positional().size());
            return std::nullopt;
        }
        auto loaded = loadScenarioFile(args.positional().front());
        if (!loaded.ok()) {
            printProblems(loaded.problems);
            return std::nullopt;
        }
        return loaded.value;
    }
    if (!cluster || !model || (requirePlan && !plan)) {
        std::fprintf(stderr, "missing input: give SCENARIO.json or --cluster, --model%s\n",
                     requirePlan ? " and --plan" : "");
        return std::nullopt;
    }
    if (!plan) {
        auto c = loadClusterFile(*cluster);
        auto m = loadModelFile(*model);
        printProblems(c.problems);
        printProblems(m.problems);
        if (!c.ok() || !m.ok())
            return std::nullopt;
        Scenario s;
        s.cluster = *c.value;
        s.model = *m.value;
        return s;
    }
    auto loaded = loadScenarioFiles(*cluster, *model, *plan);
    if (!loaded.ok()) {
        printProblems(loaded.problems);
        return std::nullopt;
    }
    return loaded.value;
}

std::string planSourceName(const Args& args) {
    if (auto plan = args.value("plan"))
        return *plan;
    if (args.positional().empty())
        return "plan";
    const std::string scenario = args.positional().front();
    std::string err;
    if (auto text = readTextFile(scenario, &err)) {
        const auto j = nlohmann::json::parse(*text, nullptr, false);
        if (j.is_object() && j.contains("plan") && j["plan"].is_string()) {
            const auto base = std::filesystem::path(scenario).parent_path();
            return (base / j["plan"].get<std::string>()).lexically_normal().string();
        }
    }
    return scenario;
}

bool writeOutput(const std::string& path, const std::string& contents) {
    const std::string err = saveFileAtomically(path, contents);
    if (!err.empty()) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return false;
    }
    return true;
}

} // namespace sa::cli

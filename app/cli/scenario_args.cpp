#include "scenario_args.h"
#include "exit_codes.h"

#include "formats/documents.h"

#include <CLI/CLI.hpp>
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

void addScenarioInput(CLI::App& cmd, ScenarioInput& in, const char* planHelp) {
    cmd.add_option(
           "SCENARIO.json", in.files,
           "a scenario file (cluster, model and plan), or\ngive --cluster, --model and --plan")
        ->type_name("");
    cmd.add_option("--cluster", in.cluster, "the cluster document")->type_name("C");
    cmd.add_option("--model", in.model, "the model document")->type_name("M");
    cmd.add_option("--plan", in.plan, planHelp)->type_name("P");
}

std::optional<Scenario> loadScenarioArgs(const ScenarioInput& in, bool requirePlan) {
    const auto& cluster = in.cluster;
    const auto& model = in.model;
    const auto& plan = in.plan;
    if (!in.files.empty()) {
        if (cluster || model || plan) {
            std::fprintf(stderr, "give either a scenario file or --cluster/--model/--plan\n");
            return std::nullopt;
        }
        if (in.files.size() > 1) {
            std::fprintf(stderr, "one scenario file expected, got %zu\n", in.files.size());
            return std::nullopt;
        }
        auto loaded = loadScenarioFile(in.files.front());
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

std::string planSourceName(const ScenarioInput& in) {
    if (in.plan)
        return *in.plan;
    if (in.files.empty())
        return "plan";
    const std::string scenario = in.files.front();
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

void addOutputOption(CLI::App& cmd, std::optional<std::string>& out, const char* help) {
    cmd.add_option("-o,--output", out, help)->type_name("FILE");
}

bool writeOutput(const std::string& path, const std::string& contents) {
    const std::string err = saveFileAtomically(path, contents);
    if (!err.empty()) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return false;
    }
    return true;
}

int writeResult(const std::optional<std::string>& out, const std::string& text) {
    if (out)
        return writeOutput(*out, text) ? kExitOk : kExitFailure;
    std::fputs(text.c_str(), stdout);
    return kExitOk;
}

} // namespace sa::cli

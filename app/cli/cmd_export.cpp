// scaleacross export --to megatron|nemo|torchtitan: a plan as the
// framework's launch arguments or config, ready to launch; what the framework
// cannot express is said on stderr and written as comments (core/frameworks).

#include "commands.h"
#include "help_format.h"
#include "scenario_args.h"
#include "validators.h"

#include "formats/documents.h"
#include "frameworks/framework.h"

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sa::cli {

namespace {

struct ExportArgs {
    frameworks::Framework to = frameworks::Framework::Megatron;
    std::vector<std::string> files; // SCENARIO.json
    std::optional<std::string> model;
    std::optional<std::string> plan;
    std::optional<std::string> result;  // an optimizer result: its plan of rank `rank`
    std::optional<std::string> cluster; // with --plan or --result: where the plan runs
    int rank = 1;
    std::optional<std::string> out;
};

int bad(const std::string& message) {
    std::fprintf(stderr, "scaleacross export: %s (see --help)\n", message.c_str());
    return kExitBadInput;
}

template <class T> bool printed(const Loaded<T>& loaded) {
    for (const auto& p : loaded.problems)
        std::fprintf(stderr, "%s\n", p.str().c_str());
    return loaded.ok();
}

bool printedAll(const std::vector<Diagnostic>& problems) {
    for (const auto& p : problems)
        std::fprintf(stderr, "%s\n", p.str().c_str());
    return problems.empty();
}

// Where the plan being exported was read from: the file a problem with it
// names, and the pointer its paths sit under there (a scenario's inline
// plan: "/plan").
struct PlanSource {
    std::string file;
    std::string prefix;
};

// What the framework cannot express is a problem of the plan: it names the
// plan's document, as a document check does.
std::vector<Diagnostic> namingThePlan(std::vector<Diagnostic> problems, const PlanSource& source) {
    for (Diagnostic& d : problems) {
        if (!d.file.empty())
            continue;
        d.file = source.file;
        if (!d.path.empty() && d.path.front() == '/')
            d.path = source.prefix + d.path;
    }
    return problems;
}

int runExport(const ExportArgs& a) {
    Model model;
    Plan plan;
    PlanSource source;
    std::optional<Cluster> cluster; // a scenario's: what the plan's placement means
    if (!a.files.empty()) {
        if (a.model || a.plan || a.cluster)
            return bad("give either a scenario file or --model and --plan");
        if (a.files.size() > 1)
            return bad("one scenario file expected, got " + std::to_string(a.files.size()));
        const auto s = loadScenarioFile(a.files.front());
        if (!printed(s))
            return kExitBadInput;
        model = s.value->model;
        plan = s.value->plan;
        cluster = s.value->cluster;
        // The file the scenario names for its plan, else the scenario with
        // the inline plan's pointer.
        source.file = planSourceName({a.files, {}, {}, {}});
        if (source.file == a.files.front())
            source.prefix = "/plan";
    } else if (a.result) {
        if (a.plan || !a.model)
            return bad("--result takes --model (the result names its model only), not --plan");
        const auto m = loadModelFile(*a.model);
        if (!printed(m))
            return kExitBadInput;
        std::string error;
        const auto text = readTextFile(*a.result, &error);
        if (!text) {
            std::fprintf(stderr, "%s\n", error.c_str());
            return kExitBadInput;
        }
        const auto j = nlohmann::json::parse(*text, nullptr, false);
        if (!j.is_object() || j.value("format", "") != "scaleacross.optimizer-result") {
            std::fprintf(stderr,
                         "%s: not an optimizer result (\"format\": "
                         "\"scaleacross.optimizer-result\")\n",
                         a.result->c_str());
            return kExitBadInput;
        }
        const auto top = j.find("top");
        if (top == j.end() || !top->is_array() || std::size_t(a.rank) > top->size()) {
            std::fprintf(stderr, "%s: /top: has %zu plans, --rank %d asked for\n",
                         a.result->c_str(), top == j.end() || !top->is_array() ? 0 : top->size(),
                         a.rank);
            return kExitBadInput;
        }
        const std::string at = "/top/" + std::to_string(a.rank - 1) + "/plan";
        const nlohmann::json& pj = (*top)[std::size_t(a.rank - 1)].value("plan", nlohmann::json());
        const auto p = parsePlan(pj.dump(), *a.result + " " + at);
        if (!printed(p))
            return kExitBadInput;
        if (const std::string searched = j.value("model", ""); searched != m.value->name)
            std::fprintf(stderr, "note: the result was searched for model '%s', not '%s'\n",
                         searched.c_str(), m.value->name.c_str());
        model = *m.value;
        plan = *p.value;
        source = {*a.result + " " + at, ""};
        if (!printedAll(validateModelAndPlan(model, plan, {"", *a.model, source.file})))
            return kExitBadInput;
    } else {
        if (!a.model || !a.plan)
            return bad("missing input: give SCENARIO.json, --model and --plan, or --result and "
                       "--model");
        const auto m = loadModelFile(*a.model);
        const auto p = loadPlanFile(*a.plan);
        const bool ok = printed(m) & printed(p);
        if (!ok)
            return kExitBadInput;
        model = *m.value;
        plan = *p.value;
        source = {*a.plan, ""};
        // What a scenario's checks say of the two together (a plan's EP
        // on a model without experts, interleaving on one stage, ...),
        // naming the document to fix, before the framework is asked.
        if (!printedAll(validateModelAndPlan(model, plan, {"", *a.model, *a.plan})))
            return kExitBadInput;
    }
    if (a.cluster) {
        const auto c = loadClusterFile(*a.cluster);
        if (!printed(c))
            return kExitBadInput;
        Scenario sc{*c.value, model, plan};
        const std::string planName = a.plan ? *a.plan : *a.result;
        if (!printedAll(validateScenario(sc, {*a.cluster, *a.model, planName})))
            return kExitBadInput;
        cluster = *c.value;
    }
    const frameworks::Exported e = cluster ? frameworks::exportPlan(a.to, *cluster, model, plan)
                                           : frameworks::exportPlan(a.to, model, plan);
    if (!printedAll(namingThePlan(e.problems, source)))
        return kExitBadInput;
    for (const auto& n : e.notes)
        std::fprintf(stderr, "note: %s\n", n.c_str());
    if (!cluster && plan.outer_sync && plan.outer_sync->method == OuterSyncMethod::Hsdp)
        std::fprintf(stderr, "note: outer_sync hsdp: give the cluster (--cluster, or a scenario) "
                             "to write the HSDP groups its buildings make as dp_shard\n");
    return writeResult(a.out, e.text);
}

} // namespace

void addExportCommand(CLI::App& app, CommandRun& chosen) {
    auto a = std::make_shared<ExportArgs>();
    CLI::App* cmd = app.add_subcommand(
        "export", "write a plan as Megatron-LM arguments, NeMo YAML or torchtitan TOML");
    describe(*cmd,
             "scaleacross export --to megatron|nemo|torchtitan SCENARIO.json [-o FILE]\n"
             "       scaleacross export --to FRAMEWORK --model FILE --plan FILE [--cluster FILE]\n"
             "                          [-o FILE]\n"
             "       scaleacross export --to FRAMEWORK --model FILE --result OPTIMIZE.json "
             "[--rank N]\n"
             "                          [--cluster FILE]",
             "Writes the plan (and its model) as the framework launches it: Megatron-LM's\n"
             "arguments as a torchrun script, a NeMo launcher YAML, a torchtitan job TOML.\n"
             "What the framework cannot express (building placement, link transports, ...)\n"
             "is listed on stderr as \"note: ...\" and kept in a last \"# scaleacross:\" comment,\n"
             "so `scaleacross import` reads the same plan back.",
             "Exit codes: 0 written, 1 the output could not be written, 2 bad input or a plan\n"
             "the framework cannot run.");
    cmd->add_option("--to", a->to, "the framework")
        ->transform(
            oneOf<frameworks::Framework>({{"megatron", frameworks::Framework::Megatron},
                                          {"nemo", frameworks::Framework::Nemo},
                                          {"torchtitan", frameworks::Framework::Torchtitan}}))
        ->type_name("FRAMEWORK")
        ->required();
    cmd->add_option("SCENARIO", a->files, "a scenario document")->type_name("");
    cmd->add_option("--model", a->model, "a model document (with --plan)")->type_name("FILE");
    cmd->add_option("--plan", a->plan, "a plan document (with --model)")->type_name("FILE");
    cmd->add_option("--result", a->result,
                    "an optimize --json result: export its plan\nof --rank (with --model)")
        ->type_name("FILE");
    cmd->add_option("--cluster", a->cluster,
                    "the cluster the plan runs on (with --plan\nor --result): an outer-sync "
                    "hsdp is written\nas the HSDP groups its buildings make")
        ->type_name("FILE");
    cmd->add_option("--rank", a->rank, "which plan of --result (default 1, the best)")
        ->transform(integerIn(1, 1000000))
        ->type_name("N");
    addOutputOption(*cmd, a->out);
    runWhenChosen(*cmd, chosen, [a] { return runExport(*a); });
}

} // namespace sa::cli

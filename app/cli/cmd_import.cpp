// scaleacross import megatron|nemo|torchtitan: a framework's launch
// configuration as model and plan documents, with what was mapped, what was
// ignored and why, and what cannot be expressed (core/frameworks).

#include "commands.h"
#include "help_format.h"
#include "scenario_args.h"
#include "validators.h"

#include "formats/documents.h"
#include "frameworks/framework.h"

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sa::cli {

namespace {

struct ImportArgs {
    frameworks::Framework framework = frameworks::Framework::Megatron;
    std::optional<std::string> file; // the YAML, TOML or launch script
    std::vector<std::string> words;  // Megatron-LM arguments after --
    std::optional<std::string> cluster;
    std::string outDir = ".";
    std::optional<std::string> name;
    long long worldSize = 0;
    long long vocab = 0;
    bool json = false;
};

int fail(const std::string& message) {
    std::fprintf(stderr, "scaleacross import: %s\n", message.c_str());
    return kExitBadInput;
}

nlohmann::json reportJson(const frameworks::Imported& in, const std::vector<std::string>& wrote) {
    nlohmann::json mapped = nlohmann::json::array(), ignored = nlohmann::json::array(),
                   problems = nlohmann::json::array();
    for (const auto& m : in.mapped)
        mapped.push_back({{"setting", m.setting}, {"value", m.value}, {"target", m.target}});
    for (const auto& i : in.ignored)
        ignored.push_back({{"setting", i.setting}, {"value", i.value}, {"why", i.why}});
    for (const auto& p : in.problems)
        problems.push_back({{"file", p.file}, {"setting", p.path}, {"message", p.message}});
    return {{"mapped", mapped}, {"ignored", ignored}, {"problems", problems}, {"wrote", wrote}};
}

std::string reportText(const frameworks::Imported& in, const std::vector<std::string>& wrote) {
    std::string s;
    const auto line = [&s](const std::string& text) { s += text + "\n"; };
    line("mapped (" + std::to_string(in.mapped.size()) + "):");
    for (const auto& m : in.mapped)
        line("  " + m.setting + (m.value.empty() ? "" : " " + m.value) + " -> " + m.target);
    line("ignored (" + std::to_string(in.ignored.size()) + "):");
    for (const auto& i : in.ignored)
        line("  " + i.setting + (i.value.empty() ? "" : " " + i.value) + ": " + i.why);
    for (const auto& w : wrote)
        line("wrote " + w);
    return s;
}

int runImport(const ImportArgs& a) {
    frameworks::ImportOptions opt;
    opt.world_size = a.worldSize;
    opt.vocab = a.vocab;
    if (a.name)
        opt.name = *a.name;
    frameworks::Imported in;
    if (a.framework == frameworks::Framework::Megatron && !a.file) {
        if (a.words.empty())
            return fail("give the Megatron-LM arguments after --, or --script FILE (see --help)");
        opt.file = ""; // messages say <input>; the documents are named "megatron"
        in = frameworks::importMegatronArgs(a.words, opt);
    } else {
        if (!a.file)
            return fail("no configuration file given (see --help)");
        if (!a.words.empty())
            return fail("give either a file or arguments after --, not both");
        std::string error;
        const auto text = readTextFile(*a.file, &error);
        if (!text)
            return fail(error);
        opt.file = *a.file;
        switch (a.framework) {
        case frameworks::Framework::Megatron:
            in = frameworks::importMegatronScript(*text, opt);
            break;
        case frameworks::Framework::Nemo:
            in = frameworks::importNemo(*text, opt);
            break;
        case frameworks::Framework::Torchtitan:
            in = frameworks::importTorchtitan(*text, opt);
            break;
        }
    }
    std::vector<Diagnostic> problems = in.problems;
    if (in.ok() && a.cluster) {
        // The plan must also fit the cluster it is meant for.
        auto cluster = loadClusterFile(*a.cluster);
        problems.insert(problems.end(), cluster.problems.begin(), cluster.problems.end());
        if (cluster.ok()) {
            SourceNames names;
            names.cluster = *a.cluster;
            names.model = names.plan = opt.file;
            auto across = validateScenario({*cluster.value, *in.model, *in.plan}, names);
            problems.insert(problems.end(), across.begin(), across.end());
        }
    }
    std::vector<std::string> wrote;
    if (in.ok() && problems.empty()) {
        namespace fs = std::filesystem;
        const fs::path dir(a.outDir);
        std::error_code ec;
        fs::create_directories(dir, ec);
        const std::string modelPath = (dir / (in.plan->name + "-model.json")).string();
        const std::string planPath = (dir / (in.plan->name + "-plan.json")).string();
        if (!writeOutput(modelPath, dumpCanonical(toJson(*in.model))) ||
            !writeOutput(planPath, dumpCanonical(toJson(*in.plan))))
            return kExitFailure;
        wrote = {modelPath, planPath};
        if (a.cluster) {
            nlohmann::json scenario = {
                {"format", kScenarioFormat},
                {"version", kFormatVersion},
                {"cluster", fs::absolute(*a.cluster).lexically_normal().string()},
                {"model", fs::path(modelPath).filename().string()},
                {"plan", fs::path(planPath).filename().string()}};
            const std::string scenarioPath = (dir / (in.plan->name + "-scenario.json")).string();
            if (!writeOutput(scenarioPath, dumpCanonical(scenario)))
                return kExitFailure;
            wrote.push_back(scenarioPath);
        }
    }
    for (const auto& p : problems)
        std::fprintf(stderr, "%s\n", p.str().c_str());
    const std::string report =
        a.json ? reportJson(in, wrote).dump(2) + "\n" : reportText(in, wrote);
    std::fputs(report.c_str(), stdout);
    std::fflush(stdout);
    return problems.empty() && in.ok() ? kExitOk : kExitBadInput;
}

void addShared(CLI::App& cmd, ImportArgs& a) {
    cmd.add_option("--world-size", a.worldSize,
                   "GPUs the job runs on, when the configuration\ndoes not say (torchrun, "
                   "trainer.num_nodes)")
        ->transform(integerIn(1, 100000000000LL))
        ->type_name("N");
    cmd.add_option("--vocab", a.vocab, "vocabulary size, when the configuration\ndoes not give it")
        ->transform(integerIn(1, 10000000))
        ->type_name("N");
    cmd.add_option("--name", a.name,
                   "the documents' name (default: the name the\nfile carries, else its stem)")
        ->type_name("NAME");
    cmd.add_option("--cluster", a.cluster,
                   "check the plan against this cluster and\nwrite NAME-scenario.json too")
        ->type_name("FILE");
    cmd.add_option("-o,--output-dir", a.outDir,
                   "where NAME-model.json and NAME-plan.json go\n(default: .)")
        ->type_name("DIR");
    cmd.add_flag("--json", a.json, "the report as JSON");
}

} // namespace

void addImportCommand(CLI::App& app, CommandRun& chosen) {
    CLI::App* cmd = app.add_subcommand(
        "import", "read a Megatron-LM, NeMo or torchtitan configuration as documents");
    describe(*cmd,
             "scaleacross import megatron [OPTIONS] -- MEGATRON-ARGUMENTS...\n"
             "       scaleacross import megatron [OPTIONS] --script LAUNCH.sh\n"
             "       scaleacross import nemo [OPTIONS] CONFIG.yaml\n"
             "       scaleacross import torchtitan [OPTIONS] JOB.toml",
             "Writes the model and the plan a framework's configuration describes, and reports\n"
             "every setting read: mapped (to which key), ignored (and why). A setting the\n"
             "documents cannot express is refused with a message naming it. The settings and\n"
             "their defaults are listed in docs/FRAMEWORKS.md.",
             "Exit codes: 0 imported, 1 a file could not be written, 2 bad input.");
    cmd->require_subcommand(0, 1);
    cmd->callback([cmd, &chosen] {
        if (cmd->get_subcommands().empty())
            chosen = [] {
                return fail("name the framework: megatron, nemo or torchtitan (see --help)");
            };
    });
    struct Sub {
        const char* name;
        frameworks::Framework framework;
        const char* summary;
    };
    for (const Sub& s :
         {Sub{"megatron", frameworks::Framework::Megatron,
              "Megatron-LM arguments (pretrain_gpt.py) or a launch script"},
          Sub{"nemo", frameworks::Framework::Nemo, "a NeMo launcher training YAML"},
          Sub{"torchtitan", frameworks::Framework::Torchtitan, "a torchtitan job TOML"}}) {
        auto a = std::make_shared<ImportArgs>();
        a->framework = s.framework;
        CLI::App* sub = cmd->add_subcommand(s.name, s.summary);
        addShared(*sub, *a);
        if (s.framework == frameworks::Framework::Megatron) {
            sub->add_option("--script", a->file,
                            "a launch script: torchrun ... pretrain_gpt.py\nARGS (VAR=value and "
                            "$VAR expanded)")
                ->type_name("FILE");
            sub->add_option("ARGS", a->words, "Megatron-LM's arguments, after --")->type_name("");
        } else {
            sub->add_option("FILE", a->file, "the configuration")->type_name("")->required();
        }
        runWhenChosen(*sub, chosen, [a] { return runImport(*a); });
    }
}

} // namespace sa::cli

// scaleacross check: validate documents without evaluating anything.

#include "commands.h"
#include "help_format.h"

#include "formats/documents.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sa::cli {

namespace {

std::string quoted(const std::string& s) {
    return "'" + s + "'";
}

std::string summary(const Scenario& s) {
    return "scenario: cluster " + quoted(s.cluster.name) + ", model " + quoted(s.model.name) +
           ", plan " + quoted(s.plan.name);
}

std::string summary(const AnyDocument& doc) {
    if (const auto* c = std::get_if<Cluster>(&doc))
        return "cluster " + quoted(c->name);
    if (const auto* m = std::get_if<Model>(&doc))
        return "model " + quoted(m->name);
    if (const auto* p = std::get_if<Plan>(&doc))
        return "plan " + quoted(p->name);
    return summary(std::get<Scenario>(doc));
}

template <class T> bool report(const Loaded<T>& loaded, const std::string& what) {
    for (const auto& d : loaded.problems)
        std::fprintf(stderr, "%s\n", d.str().c_str());
    if (!loaded.ok())
        return false;
    std::printf("%s: ok (%s)\n", what.c_str(), summary(*loaded.value).c_str());
    return true;
}

// FILE arguments with folders replaced by the .json files in them, sorted.
bool expand(const std::vector<std::string>& args, std::vector<std::string>& files) {
    namespace fs = std::filesystem;
    bool ok = true;
    for (const auto& a : args) {
        std::error_code ec;
        if (!fs::is_directory(a, ec)) {
            files.push_back(a);
            continue;
        }
        std::vector<std::string> found;
        for (fs::directory_iterator it(a, ec), end; !ec && it != end; it.increment(ec)) {
            if (it->path().extension() == ".json" && it->is_regular_file(ec))
                found.push_back(it->path().string());
        }
        if (ec) {
            std::fprintf(stderr, "%s: cannot list folder: %s\n", a.c_str(), ec.message().c_str());
            ok = false;
        } else if (found.empty()) {
            std::fprintf(stderr, "%s: no .json documents in this folder\n", a.c_str());
            ok = false;
        }
        std::sort(found.begin(), found.end());
        files.insert(files.end(), found.begin(), found.end());
    }
    return ok;
}

struct CheckOptions {
    std::vector<std::string> paths; // FILE|DIR...
    std::optional<std::string> cluster;
    std::optional<std::string> model;
    std::optional<std::string> plan;
};

int bad(const char* msg) {
    std::fprintf(stderr, "scaleacross check: %s (see --help)\n", msg);
    return kExitBadInput;
}

int runCheck(const CheckOptions& o) {
    const bool together = o.cluster || o.model || o.plan;
    if (together && !(o.cluster && o.model && o.plan))
        return bad("--cluster, --model and --plan go together");
    if (!together && o.paths.empty())
        return bad("no documents given");

    std::vector<std::string> files;
    bool ok = expand(o.paths, files);
    for (const auto& f : files)
        ok = report(loadAnyFile(f), f) && ok;
    if (together) {
        const auto loaded = loadScenarioFiles(*o.cluster, *o.model, *o.plan);
        ok = report(loaded, *o.cluster + ", " + *o.model + ", " + *o.plan) && ok;
    }
    std::fflush(stdout);
    return ok ? kExitOk : kExitBadInput;
}

} // namespace

void addCheckCommand(CLI::App& app, CommandRun& chosen) {
    auto o = std::make_shared<CheckOptions>();
    CLI::App* cmd =
        app.add_subcommand("check", "validate cluster, model, plan or scenario documents");
    describe(*cmd,
             "scaleacross check FILE|DIR...\n"
             "       scaleacross check --cluster FILE --model FILE --plan FILE",
             "Validates cluster, model, plan and scenario documents; each file's \"format\" says\n"
             "which it is, and a folder stands for the .json files in it. A scenario is also\n"
             "checked across its three documents. Separate cluster, model and plan files are\n"
             "checked one by one, unless given together with --cluster, --model and --plan.\n\n"
             "Prints \"FILE: ok (...)\" on stdout for each valid document, and each problem on\n"
             "stderr as \"FILE: /json/pointer: what is wrong\".",
             "Exit codes: 0 every document is valid, 2 a problem was found.");
    cmd->add_option("FILE|DIR", o->paths, "documents, or folders of .json documents")
        ->type_name("");
    cmd->add_option("--cluster", o->cluster, "a cluster document, checked with\n--model and --plan")
        ->type_name("FILE");
    cmd->add_option("--model", o->model, "its model document")->type_name("FILE");
    cmd->add_option("--plan", o->plan, "its plan document")->type_name("FILE");
    runWhenChosen(*cmd, chosen, [o] { return runCheck(*o); });
}

} // namespace sa::cli

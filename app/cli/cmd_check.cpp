// scaleacross check: validate documents without evaluating anything.

#include "args.h"
#include "commands.h"
#include "formats/documents.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace sa::cli {

namespace {

void printUsage(std::FILE* to) {
    std::fprintf(
        to, "Usage: scaleacross check FILE|DIR...\n"
            "       scaleacross check --cluster FILE --model FILE --plan FILE\n\n"
            "Validates cluster, model, plan and scenario documents; each file's \"format\" says\n"
            "which it is, and a folder stands for the .json files in it. A scenario is also\n"
            "checked across its three documents. Separate cluster, model and plan files are\n"
            "checked one by one, unless given together with --cluster, --model and --plan.\n\n"
            "Prints \"FILE: ok (...)\" on stdout for each valid document, and each problem on\n"
            "stderr as \"FILE: /json/pointer: what is wrong\".\n\n"
            "Options:\n"
            "  --cluster FILE --model FILE --plan FILE   check three documents together\n"
            "  --help                                    this text\n\n"
            "Exit codes: 0 every document is valid, 2 a problem was found.\n");
}

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

} // namespace

int runCheck(int argc, char** argv) {
    const Args args(argc, argv, 2, {"help"});
    if (args.has("help")) {
        printUsage(stdout);
        return kExitOk;
    }
    if (!args.error().empty()) {
        std::fprintf(stderr, "scaleacross check: %s\n\n", args.error().c_str());
        printUsage(stderr);
        return kExitBadInput;
    }
    if (const auto unknown = args.unknown({"help", "cluster", "model", "plan"}); !unknown.empty()) {
        std::fprintf(stderr, "scaleacross check: unknown option --%s\n\n", unknown.front().c_str());
        printUsage(stderr);
        return kExitBadInput;
    }
    const auto cluster = args.value("cluster");
    const auto model = args.value("model");
    const auto plan = args.value("plan");
    const bool together = cluster || model || plan;
    if (together && !(cluster && model && plan)) {
        std::fprintf(stderr, "scaleacross check: --cluster, --model and --plan go together\n\n");
        printUsage(stderr);
        return kExitBadInput;
    }
    if (!together && args.positional().empty()) {
        std::fprintf(stderr, "scaleacross check: no documents given\n\n");
        printUsage(stderr);
        return kExitBadInput;
    }

    std::vector<std::string> files;
    bool ok = expand(args.positional(), files);
    for (const auto& f : files)
        ok = report(loadAnyFile(f), f) && ok;
    if (together) {
        const auto loaded = loadScenarioFiles(*cluster, *model, *plan);
        ok = report(loaded, *cluster + ", " + *model + ", " + *plan) && ok;
    }
    std::fflush(stdout);
    return ok ? kExitOk : kExitBadInput;
}

} // namespace sa::cli

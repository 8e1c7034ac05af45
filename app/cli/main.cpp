// scaleacross: the command-line twin of the explorer. Everything the GUI
// shows can be produced here, headless.

#include "args.h"
#include "commands.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace {

struct Command {
    const char* name;
    const char* summary;
    int (*run)(int, char**);
};

const Command kCommands[] = {
    {"check", "validate cluster, model, plan or scenario documents", sa::cli::runCheck},
    {"evaluate", "predict step time, MFU, memory and link traffic of a plan", sa::cli::runEvaluate},
    {"trace", "write the pipeline timeline as a Chrome trace (Perfetto)", sa::cli::runTrace},
    {"optimize", "search the design space for the best plans (TBB, shardable)",
     sa::cli::runOptimize},
    {"merge", "join the results of sharded optimize runs", sa::cli::runMerge},
    {"sweep", "vary one or two parameters over a range and print CSV or JSON", sa::cli::runSweep},
};

void printHelp() {
    std::printf("scaleacross %s — plan LLM training across datacenter buildings\n\n"
                "Usage: scaleacross COMMAND [OPTIONS]\n\nCommands:\n",
                SCALEACROSS_VERSION);
    for (const auto& c : kCommands)
        std::printf("  %-10s %s\n", c.name, c.summary);
    std::printf("\nOptions:\n  --help     this text (COMMAND --help for a command)\n"
                "  --version  print the version\n\n"
                "Exit codes: 0 ok, 1 failure, 2 bad input (message names file, JSON path, "
                "problem).\n");
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        printHelp();
        return sa::cli::kExitBadInput;
    }
    const std::string cmd = argv[1];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        printHelp();
        return sa::cli::kExitOk;
    }
    if (cmd == "--version") {
        std::printf("scaleacross %s\n", SCALEACROSS_VERSION);
        return sa::cli::kExitOk;
    }
    for (const auto& c : kCommands)
        if (cmd == c.name)
            return c.run(argc, argv);
    std::fprintf(stderr, "scaleacross: unknown command '%s' (see scaleacross --help)\n",
                 cmd.c_str());
    return sa::cli::kExitBadInput;
}

// scaleacross: the command-line twin of the explorer. Everything the GUI
// shows can be produced here, headless.
//
// The command line is one CLI::App (CLI11) with a subcommand per command.
// To add a command (say `import`):
//   1. write app/cli/cmd_import.cpp with a struct of its options and
//      `void addImportCommand(CLI::App& app, CommandRun& chosen)`, which
//      calls app.add_subcommand("import", "one-line summary"), describe()s
//      its usage, paragraph and exit codes (help_format.h), declares each
//      option once, bound to a field of that struct (addScenarioInput,
//      addOutputOption and validators.h for the common ones), and ends with
//      runWhenChosen(*cmd, chosen, [args] { return runImport(*args); });
//   2. declare it in commands.h and call it below, in the order of --help.
// The run function returns the exit code: kExitOk, kExitFailure (could not
// finish: I/O, cancelled) or kExitBadInput (exit_codes.h); it prints its
// own messages as "scaleacross import: ...". It runs after the whole
// command line has parsed, so a bad option never starts any work; parse
// errors are reported here, on one line, with exit code 2.

#include "commands.h"
#include "help_format.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <string>

namespace sa::cli {

void runWhenChosen(CLI::App& cmd, CommandRun& chosen, CommandRun run) {
    cmd.callback([&chosen, run = std::move(run)] { chosen = run; });
}

} // namespace sa::cli

namespace {

using namespace sa::cli;

// The subcommand the error arose in, or the application.
const CLI::App* commandOf(const CLI::App& app) {
    const auto chosen = app.get_subcommands();
    return chosen.empty() ? &app : chosen.front();
}

// One line for a parse error, naming the option: CLI11's own messages,
// except for unknown options and missing values, which it words for a
// programmer ("The following argument was not expected", "1 required INT
// missing").
std::string parseErrorMessage(const CLI::App& app, const CLI::ParseError& e) {
    const CLI::App* cmd = commandOf(app);
    const std::string prefix =
        "scaleacross" + (cmd == &app ? std::string() : " " + cmd->get_name()) + ": ";
    const std::string what = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
        const auto extras = cmd->remaining();
        if (!extras.empty()) {
            const std::string& first = extras.front();
            return prefix +
                   (first.rfind('-', 0) == 0 ? "unknown option " + first
                                             : "unexpected argument '" + first + "'") +
                   " (see --help)";
        }
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
        // "--top: 1 required INT missing": name it as --help does ("-o,--output").
        const auto colon = what.find(": ");
        const std::string name = what.substr(0, colon);
        if (colon != std::string::npos && what.size() > 8 &&
            what.compare(what.size() - 8, 8, " missing") == 0) {
            const CLI::Option* opt = cmd->get_option_no_throw(name);
            return prefix + "option " + (opt ? opt->get_name(false, true) : name) +
                   " needs a value";
        }
    }
    if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr)
        return prefix + what; // "--top: expected an integer from 1 to 100000, got '0'"
    return prefix + what + " (see --help)";
}

// -h or --help anywhere before "--": CLI11 checks the values first, but
// help wins over a bad option, as it always did.
bool asksForHelp(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--")
            return false;
        if (a == "-h" || a == "--help")
            return true;
    }
    return false;
}

bool isCommand(const CLI::App& app, const std::string& name) {
    return !app.get_subcommands([&](const CLI::App* s) { return s->get_name() == name; }).empty();
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app("", "scaleacross");
    describe(app, "scaleacross COMMAND [OPTIONS]",
             "scaleacross " SCALEACROSS_VERSION
             " — plan LLM training across datacenter buildings.\n"
             "COMMAND --help describes a command and its options.",
             "Exit codes: 0 ok, 1 failure, 2 bad input (message names file, JSON path, "
             "problem).");
    app.set_help_flag("-h,--help", "this text (COMMAND --help for a command)");
    app.set_version_flag("--version", "scaleacross " SCALEACROSS_VERSION, "print the version");
    // Exactly one command; this also keeps a file named like a command
    // (`scaleacross check evaluate`) a file.
    app.require_subcommand(1);
    // A repeated option keeps its last value, as scripts rely on
    // (tools/slurm/optimize-array.sbatch puts --threads before the user's).
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

    CommandRun chosen;
    addCheckCommand(app, chosen);
    addEvaluateCommand(app, chosen);
    addTraceCommand(app, chosen);
    addOptimizeCommand(app, chosen);
    addMergeCommand(app, chosen);
    addSweepCommand(app, chosen);
    addImportCommand(app, chosen);
    addExportCommand(app, chosen);
    addCalibrateCommand(app, chosen);
    addValidateCommand(app, chosen);
    for (CLI::App* cmd : app.get_subcommands([](CLI::App*) { return true; }))
        cmd->group("Commands");
    // `scaleacross help`: the same as --help (not listed).
    const auto printHelp = [&app] {
        const auto text = app.get_formatter()->make_help(&app, "scaleacross", {});
        std::fputs(text.c_str(), stdout);
    };
    runWhenChosen(*app.add_subcommand("help", "")->group(""), chosen, [printHelp] {
        printHelp();
        return kExitOk;
    });

    if (argc < 2) {
        printHelp();
        return kExitBadInput;
    }
    const std::string first = argv[1];
    if (first != "-h" && first != "--help" && first != "--version" && !isCommand(app, first)) {
        std::fprintf(stderr, "scaleacross: unknown command '%s' (see scaleacross --help)\n",
                     first.c_str());
        return kExitBadInput;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::fputs(app.help().c_str(), stdout); // the chosen command's help
        return kExitOk;
    } catch (const CLI::CallForVersion&) {
        std::printf("scaleacross %s\n", SCALEACROSS_VERSION);
        return kExitOk;
    } catch (const CLI::ParseError& e) {
        if (asksForHelp(argc, argv)) {
            std::fputs(commandOf(app)->help().c_str(), stdout);
            return kExitOk;
        }
        std::fprintf(stderr, "%s\n", parseErrorMessage(app, e).c_str());
        return kExitBadInput;
    }
    return chosen ? chosen() : kExitBadInput;
}

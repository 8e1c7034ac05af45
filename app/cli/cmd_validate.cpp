// scaleacross validate: the cost model against measured runs — an index of
// runs (cluster, model, plan and the throughput each was measured at),
// evaluated row by row with the error per source family and per class
// (core/calibrate/validate.h, docs/VALIDATION.md).

#include "commands.h"
#include "help_format.h"
#include "scenario_args.h"

#include "calibrate/validate.h"
#include "formats/documents.h"

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

struct ValidateArgs {
    std::vector<std::string> indexes;
    std::vector<std::string> search;
    bool json = false;
    bool checkTarget = false;
    std::optional<std::string> out;
};

int runValidate(const ValidateArgs& a) {
    if (a.indexes.empty()) {
        std::fprintf(stderr, "scaleacross validate: give one or more run indexes (see --help)\n");
        return kExitBadInput;
    }
    ValidationOptions options;
    if (!a.search.empty()) {
        ValidationSearch s;
        for (const std::string& knob : a.search) {
            s.micro_batch |= knob == "micro_batch_sequences";
            s.interleaving |= knob == "virtual_stages";
        }
        options.search = s;
    }
    std::vector<ValidationRow> rows;
    std::vector<Diagnostic> problems;
    for (const std::string& path : a.indexes) {
        std::string error;
        const auto text = readTextFile(path, &error);
        if (!text) {
            problems.push_back({path, "", error});
            continue;
        }
        const std::string stem = std::filesystem::path(path).stem().string();
        const ValidationIndex index = parseValidationIndex(*text, path, stem, problems);
        const std::string dir = std::filesystem::path(path).parent_path().string();
        for (auto& row : validateRuns(index, dir, options, problems))
            rows.push_back(std::move(row));
    }
    if (!problems.empty()) {
        for (const auto& p : problems)
            std::fprintf(stderr, "%s\n", p.str().c_str());
        return kExitBadInput;
    }
    const ValidationSummary summary = summarizeValidation(rows);
    const std::string text = a.json ? validationJson(rows, summary).dump(2) + "\n"
                                    : formatValidationTable(rows, summary);
    const int written = writeResult(a.out, text);
    if (written != kExitOk)
        return written;
    return a.checkTarget && !summary.target_met ? kExitFailure : kExitOk;
}

} // namespace

void addValidateCommand(CLI::App& app, CommandRun& chosen) {
    auto a = std::make_shared<ValidateArgs>();
    CLI::App* cmd = app.add_subcommand(
        "validate", "compare the model with measured runs: error per run, family and class");
    describe(*cmd, "scaleacross validate RUNS.json... [--json] [--check-target] [-o FILE]",
             "Evaluates every run of each index and compares the predicted tokens/s per GPU\n"
             "with the measured: per run, per source family (signed mean, mean |error|,\n"
             "worst), overall, and per class of run (GPU architecture and precision, CP,\n"
             "MoE with expert parallelism). An index is {\"runs\": [{\"id\", \"family\",\n"
             "\"cluster\", \"model\", \"plan\", \"measured_tokens_per_s_per_gpu\"}, ...]}, the\n"
             "documents' paths relative to it; a run's \"search\" names settings its source\n"
             "did not publish, chosen as the fastest that fits. docs/VALIDATION.md has the\n"
             "format and the published runs of tests/validation/published/runs.json.",
             "Exit codes: 0 every run evaluated, 1 the output could not be written (or, with\n"
             "--check-target, the accuracy target is missed), 2 bad input.");
    cmd->add_option("RUNS.json", a->indexes,
                    "run indexes (entries without a \"family\" take\nthe index file's name)")
        ->type_name("");
    cmd->add_option("--search", a->search,
                    "settings to choose for every run, in place of\nits own \"search\": "
                    "micro_batch_sequences,\nvirtual_stages")
        ->check(CLI::Validator(
            [](std::string& s) -> std::string {
                return s == "micro_batch_sequences" || s == "virtual_stages"
                           ? std::string()
                           : "expected micro_batch_sequences or virtual_stages, got '" + s + "'";
            },
            ""))
        ->delimiter(',')
        ->type_name("KNOB,...");
    cmd->add_flag("--json", a->json, "write the rows and summaries as JSON");
    cmd->add_flag("--check-target", a->checkTarget,
                  "exit 1 when the target (mean |error| <= 10% per\nfamily, no row over 25%) "
                  "is missed");
    addOutputOption(*cmd, a->out);
    runWhenChosen(*cmd, chosen, [a] { return runValidate(*a); });
}

} // namespace sa::cli

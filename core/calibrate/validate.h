#pragma once
// The cost model against measured training runs: an index of runs, each a
// cluster, model and plan document with the throughput it was measured at,
// evaluated and compared row by row, per source family and per class of
// run (`scaleacross validate`, tests/core/tst_validation.cpp,
// docs/VALIDATION.md).
//
// The index (JSON; every path relative to the index's folder):
//
//   {"runs": [
//     {"id": "nemo2407-llama3-8b-8", "family": "nemo-24.07",
//      "cluster": "clusters/dgx-h100.json", "model": "models/llama3-8b-fp8.json",
//      "plan": "plans/nemo2407-llama3-8b-8.json",
//      "measured_tokens_per_s_per_gpu": 12036,
//      "search": ["micro_batch_sequences", "virtual_stages"],   // optional
//      "interleaved_p2p_overlap": true},                          // optional
//     ...]}
//
// The measurement is tokens/s per GPU ("measured_tokens_per_s_per_gpu"),
// or a step time in seconds ("measured_metric": "step_time_s" with
// "measured_value", or "measured_step_time_s"), converted with the plan's
// global batch and sequence over its GPUs. Other keys ("source",
// "assumptions", ...) are carried along unread. "search" names the plan
// settings the source did not publish: each is then chosen as a user would,
// the fastest value that fits in memory (micro batch sizes dividing the
// per-replica batch, up to 16; interleaving depths up to 8 the framework
// accepts), with "interleaved_p2p_overlap" the P2P of the interleaved
// candidates where the run's framework sets it apart from its 1F1B.

#include "cost/evaluate.h"
#include "model/scenario.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace sa {

// The accuracy target of docs/VALIDATION.md.
inline constexpr double kValidationFamilyTarget = 0.10; // mean |error| per source family
inline constexpr double kValidationRowTarget = 0.25;    // no single row beyond this

struct ValidationSearch {
    bool micro_batch = false;
    bool interleaving = false;
    std::optional<bool> interleaved_p2p_overlap;
};

struct ValidationRun {
    std::string id;
    std::string family;
    std::string cluster, model, plan; // paths as the index gives them
    // One of the two: tokens/s per GPU, or a step time in seconds.
    std::optional<double> tokens_per_s_per_gpu;
    std::optional<double> step_time_s;
    std::string published; // what the source published, for display ("726 tok/s")
    ValidationSearch search;
};

struct ValidationIndex {
    std::string file;
    std::vector<ValidationRun> runs;
};

// Parses an index; problems name the file and the JSON pointer of the entry
// (/runs/3/measured_value). `family` is the family of entries that name none.
ValidationIndex parseValidationIndex(const std::string& text, const std::string& file,
                                     const std::string& family, std::vector<Diagnostic>& problems);

// The plan a run is evaluated with and its evaluation.
struct ValidationChoice {
    Plan plan;
    Evaluation evaluation;
};

// Every setting `search` opens, evaluated; the fastest plan that fits in
// memory, or with `mustFit` false the fastest of all when none fits.
// nullopt when no candidate evaluates.
std::optional<ValidationChoice> bestValidationPlan(const Scenario& base,
                                                   const ValidationSearch& search, bool mustFit);

struct ValidationRow {
    std::string id;
    std::string family;
    std::string kind;      // validationClass
    std::string published; // as the source published it
    Scenario scenario;     // as loaded
    ValidationChoice choice;
    ValidationSearch search;
    double predicted = 0; // tokens/s per GPU
    double measured = 0;  // tokens/s per GPU
    double error() const { return predicted / measured - 1.0; }
    std::string planText() const; // "4* interleaved v=2*": * marks a searched setting
};

// The schedule as the tables print it: "1f1b", "interleaved v=4".
std::string scheduleLabel(const Plan& plan);

// The class a run belongs to across families, where the model's error is
// known to depend on it (docs/VALIDATION.md): MoE layers with expert
// parallelism, else the GPU architecture and the GEMMs' precision, with
// context parallelism apart.
std::string validationClass(const Scenario& s, const Plan& plan);

struct ValidationOptions {
    // Applied to every run in place of its own "search" (the SC'21 table,
    // whose micro batch and interleaving were not published).
    std::optional<ValidationSearch> search;
    bool must_fit = false; // a run whose every candidate is over memory is a problem
};

// Loads and evaluates every run of `index` (documents relative to
// `baseDir`). A run whose documents do not load or evaluate is a problem
// naming the document's file and JSON path, or the index entry.
std::vector<ValidationRow> validateRuns(const ValidationIndex& index, const std::string& baseDir,
                                        const ValidationOptions& options,
                                        std::vector<Diagnostic>& problems);

struct ValidationStats {
    std::string name;
    int count = 0;
    double sum = 0, sum_abs = 0, max_abs = 0;
    void add(double error);
    double mean() const { return count ? sum / count : 0; }
    double meanAbs() const { return count ? sum_abs / count : 0; }
};

struct ValidationSummary {
    std::vector<ValidationStats> families; // in order of first appearance
    ValidationStats overall;
    std::vector<ValidationStats> classes; // sorted by name
    int rows_over_target = 0;
    bool target_met = false;
    std::string misses; // where the target is missed, "" when met
};

ValidationSummary summarizeValidation(const std::vector<ValidationRow>& rows);

// The rows, the per-family summary with the target line and the per-class
// summary, as text (tst_validation prints it; docs/VALIDATION.md records it).
std::string formatValidationTable(const std::vector<ValidationRow>& rows,
                                  const ValidationSummary& summary);

// The same as JSON: {"rows": [...], "families": [...], "overall": {...},
// "classes": [...], "target": {...}}.
nlohmann::json validationJson(const std::vector<ValidationRow>& rows,
                              const ValidationSummary& summary);

} // namespace sa

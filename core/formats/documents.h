#pragma once
// Strict JSON loading and canonical saving of the three documents and the
// scenario that bundles them. Every problem is a Diagnostic naming the file,
// the JSON pointer and what is wrong; nothing here throws to the caller.

#include "model/scenario.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace sa {

template <class T> struct Loaded {
    std::optional<T> value;
    std::vector<Diagnostic> problems;
    bool ok() const { return value.has_value() && problems.empty(); }
};

inline constexpr int kFormatVersion = 1;
inline constexpr const char* kClusterFormat = "scaleacross.cluster";
inline constexpr const char* kModelFormat = "scaleacross.model";
inline constexpr const char* kPlanFormat = "scaleacross.plan";
inline constexpr const char* kScenarioFormat = "scaleacross.scenario";

// Parse from text. `file` is only used in messages.
Loaded<Cluster> parseCluster(const std::string& text, const std::string& file);
Loaded<Model> parseModel(const std::string& text, const std::string& file);
Loaded<Plan> parsePlan(const std::string& text, const std::string& file);
// A scenario holds "cluster", "model", "plan" inline or as paths relative to
// `baseDir` (the scenario file's folder).
Loaded<Scenario> parseScenario(const std::string& text, const std::string& file,
                               const std::string& baseDir);

Loaded<Cluster> loadClusterFile(const std::string& path);
Loaded<Model> loadModelFile(const std::string& path);
Loaded<Plan> loadPlanFile(const std::string& path);
Loaded<Scenario> loadScenarioFile(const std::string& path);

// Loads three separate files and runs the cross-document checks.
Loaded<Scenario> loadScenarioFiles(const std::string& clusterPath, const std::string& modelPath,
                                   const std::string& planPath);

// Any document, detected from its "format" key (for `scaleacross check`).
using AnyDocument = std::variant<Cluster, Model, Plan, Scenario>;
Loaded<AnyDocument> loadAnyFile(const std::string& path);

// File names used in cross-document messages.
struct SourceNames {
    std::string cluster = "cluster";
    std::string model = "model";
    std::string plan = "plan";
};
// Semantic checks across documents (degrees divide, GPUs fit, placement
// names real buildings, ...). Empty when the scenario can be evaluated.
std::vector<Diagnostic> validateScenario(const Scenario& s, const SourceNames& names = {});
// The checks of a model and a plan with no cluster (degrees against the
// model's heads and layers, experts for EP, interleaving against the
// pipeline, ...), for a plan written out to a framework.
std::vector<Diagnostic> validateModelAndPlan(const Model& m, const Plan& p,
                                             const SourceNames& names = {});

// Canonical JSON: every key written (defaults included), stable order.
// Loading it back gives an equal object.
nlohmann::json toJson(const Cluster& c);
nlohmann::json toJson(const Model& m);
nlohmann::json toJson(const Plan& p);
nlohmann::json toJson(const Scenario& s);           // inline form
std::string dumpCanonical(const nlohmann::json& j); // 2-space indent, trailing newline

// Write-to-temporary then rename: a crash never leaves a half-written file.
// Returns an empty string on success, else a message naming the path.
std::string saveFileAtomically(const std::string& path, const std::string& contents);

// Read a whole file; nullopt with a message on failure (missing, too large, ...).
std::optional<std::string> readTextFile(const std::string& path, std::string* error);

} // namespace sa

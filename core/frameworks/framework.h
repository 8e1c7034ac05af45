#pragma once
// Framework configurations in and out: Megatron-LM arguments (and launch
// scripts), NeMo launcher YAML and torchtitan TOML become model and plan
// documents, and a plan becomes that framework's arguments or config again.
// Every setting read is reported: mapped (to which key), ignored (and why),
// or refused (a Diagnostic naming the setting: the plan cannot express it).

#include "model/model.h"
#include "model/plan.h"
#include "model/scenario.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sa::frameworks {

enum class Framework { Megatron, Nemo, Torchtitan };
const char* toString(Framework f);
std::optional<Framework> frameworkFromString(const std::string& s);

// A setting that became part of the documents: `setting` as the framework
// spells it (e.g. "--tensor-model-parallel-size", "model.micro_batch_size",
// "parallelism.pipeline_parallel_degree"), its value, and the document key it
// set (e.g. "plan:/parallelism/tp").
struct MappedSetting {
    std::string setting;
    std::string value;
    std::string target;
};

// A setting read and deliberately not used: logging, paths, optimizer
// hyper-parameters, ... `why` says so in a few words.
struct IgnoredSetting {
    std::string setting;
    std::string value;
    std::string why;
};

// What the caller knows that the configuration does not say.
struct ImportOptions {
    std::string file;            // for messages; the setting goes in Diagnostic::path
    std::string name;            // documents' name; empty = from the file's stem or the model
    std::int64_t world_size = 0; // GPUs; 0 = from the configuration (torchrun, trainer.*)
    std::int64_t vocab = 0;      // 0 = from the configuration or the model family
};

struct Imported {
    std::optional<Model> model;
    std::optional<Plan> plan;
    std::vector<MappedSetting> mapped;
    std::vector<IgnoredSetting> ignored;
    // Settings the documents cannot express, and missing or malformed
    // values: file = ImportOptions::file, path = the setting, message = why.
    std::vector<Diagnostic> problems;
    // The configuration leaves the GPU count to the launcher: give
    // ImportOptions::world_size (--world-size) and import again.
    bool needs_world_size = false;
    bool ok() const { return model && plan && problems.empty(); }
};

struct Exported {
    std::string text; // the arguments (one per line, shell-ready) or the config file
    // What the framework cannot express exactly, or what the user must add
    // (data paths, tokenizer): written as comments in `text` as well.
    std::vector<std::string> notes;
    std::vector<Diagnostic> problems; // the plan cannot be written for this framework
    bool ok() const { return problems.empty(); }
};

// Megatron-LM (pretrain_gpt.py) arguments, as argv words.
Imported importMegatronArgs(const std::vector<std::string>& args, const ImportOptions& opt);
// A launch script: the words after pretrain_gpt.py (or any *.py run by
// torchrun/python) with shell line continuations, comments, simple VAR=value
// assignments and $VAR / ${VAR} expansion; torchrun's --nnodes and
// --nproc-per-node (or --nproc_per_node) give the world size.
Imported importMegatronScript(const std::string& text, const ImportOptions& opt);
// NeMo launcher YAML (conf/training/*.yaml: trainer.*, model.*).
Imported importNemo(const std::string& yamlText, const ImportOptions& opt);
// torchtitan job TOML (train_configs/*.toml).
Imported importTorchtitan(const std::string& tomlText, const ImportOptions& opt);

Exported exportMegatron(const Model& model, const Plan& plan);
Exported exportNemo(const Model& model, const Plan& plan);
Exported exportTorchtitan(const Model& model, const Plan& plan);
Exported exportPlan(Framework f, const Model& model, const Plan& plan);
// The plan on its cluster: an outer-sync hsdp whose workers are equal
// blocks of consecutive replicas is written as the HSDP groups it is (the
// plan's dp_shard, one worker's replicas; outerHsdpAsDpShard), with a note,
// where the plan alone could only keep it in the comment.
Exported exportPlan(Framework f, const Cluster& cluster, const Model& model, const Plan& plan);

} // namespace sa::frameworks

#pragma once
// What Megatron-LM and NeMo share: NeMo's model.* keys are Megatron's
// TransformerConfig fields and arguments in snake_case, so both importers
// collect their settings under Megatron's argument names (argparse dest)
// and one resolver turns them into model and plan documents, with Megatron's
// defaults and refusals. The `# scaleacross: {...}` line that carries what the
// framework cannot say is written and read here too.

#include "frameworks/framework.h"
#include "model/framework_defaults.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sa::frameworks::detail {

// One setting as the configuration gave it.
struct RawSetting {
    std::string spelled; // "--tensor-model-parallel-size", "model.tensor_model_parallel_size"
    std::string value;   // the text; "true" for a bare flag; several words joined by spaces
    std::string shown; // the value as the configuration wrote it, when the front end translated it
    bool bare = false; // a Megatron flag given without a value
    bool null = false; // YAML null: the framework's default applies
    bool used = false;
};

enum class Dialect { Megatron, Nemo };

// Settings by Megatron's argument name (argparse dest, e.g.
// "tensor_model_parallel_size").
struct Settings {
    Dialect dialect = Dialect::Megatron;
    std::map<std::string, RawSetting> byKey;
    std::vector<IgnoredSetting> ignored; // read by the front end and not passed on
    std::vector<MappedSetting> mapped;   // mapped by the front end itself
    std::vector<Diagnostic> problems;    // found by the front end

    // A later value replaces an earlier one (argparse keeps the last); the
    // earlier is reported ignored.
    void set(const std::string& key, RawSetting s);
    // How the framework spells a setting that was not given (for messages).
    std::string spell(const std::string& key) const;
};

// What the `# scaleacross:` line carries: the plan and model keys the
// framework cannot express (canonical JSON, top level; null = leave out),
// and what an importer would otherwise need from ImportOptions.
struct Carried {
    std::int64_t world_size = 0;
    std::int64_t vocab = 0;
    nlohmann::json plan = nlohmann::json::object();
    nlohmann::json model = nlohmann::json::object();
};
inline constexpr const char* kCarriedPrefix = "# scaleacross:";
// Reads the JSON after kCarriedPrefix; a problem names the line.
std::optional<Carried> parseCarried(const std::string& json, const std::string& file,
                                    std::vector<Diagnostic>& problems);
std::string carriedLine(const Carried& c); // "# scaleacross: {...}" (no newline)

// Environment variables the imports read, as settings of the same name:
// Transformer Engine's attention backend switches NVTE_FUSED_ATTN and
// NVTE_FLASH_ATTN (DotProductAttention: int(os.getenv(..., "1"))).
inline bool readsEnvironment(const std::string& name) {
    return name == "NVTE_FUSED_ATTN" || name == "NVTE_FLASH_ATTN";
}

// Resolves the settings into documents. `world` / `vocab` come from the
// options, the launcher or the carried line (0 = unknown); worldSetting names
// where the world size came from, for messages.
struct ResolveInput {
    ImportOptions opt;
    std::int64_t world = 0;
    std::string worldSetting;
    std::int64_t vocab = 0; // the tokenizer's size before padding
    std::string name;       // documents' name
    std::string description;
    std::optional<Carried> carried;
};
Imported resolve(Settings& settings, const ResolveInput& in);

// The smallest multiple of divisibleBy·tp at or above vocab (Megatron's
// vocab_size_with_padding, megatron/training/vocab_utils.py).
std::int64_t paddedVocab(std::int64_t vocab, std::int64_t divisibleBy, int tp);
// A make-vocab-size-divisible-by that leaves `vocab` unpadded at this tp
// (0 when tp does not divide vocab).
std::int64_t identityDivisor(std::int64_t vocab, int tp);
// Known tokenizers' sizes before padding (0 = unknown).
std::int64_t knownTokenizerVocab(const std::string& name);

// How Megatron-Core is told a plan's layers per pipeline stage (NeMo
// passes the same TransformerConfig fields): an even split; the embedding
// and / or loss counted as a layer (--account-for-*-in-pipeline-split);
// the first and last stage apart (--decoder-first/last-pipeline-num-
// layers); or, when none of these splits every stage's layers evenly into
// its virtual chunks, only a per-chunk --pipeline-model-parallel-layout.
struct StageSplit {
    enum class Kind { Even, Accounted, FirstLast, Layout };
    Kind kind = Kind::Even;
    bool embedding = false, loss = false; // Accounted: what counts as a layer
    int per = 0;                          // the middle stages' layers
    std::vector<int> layers;              // per stage; empty when Even
    int chunks = 1;                       // virtual chunks per stage
};
StageSplit megatronStageSplit(const Model& m, const Plan& p);
// The layout string for `split`: one '|'-separated stage per (chunk,
// rank), chunk by chunk, a rank's layers spread evenly over its chunks
// (the first chunks take the remainder), the embedding first, the MTP
// modules and the loss last; written layer by layer, no repetition.
std::string megatronLayout(const Model& m, const StageSplit& split);
// The settings that say an Accounted or FirstLast split, named as a
// framework spells them: (key, value) pairs, `flag` the value of the two
// embedding / loss switches (empty for a command-line flag).
struct StageSplitNames {
    const char* embedding;
    const char* loss;
    const char* first;
    const char* last;
    const char* flag;
};
std::vector<std::pair<std::string, std::string>> stageSplitSettings(const StageSplit& split,
                                                                    const StageSplitNames& names);

// The plan and model keys of `want` that `got` does not reproduce, for the
// carried line. Name and description are not carried.
void carryDifferences(const Model& want, const Plan& want_plan, const Imported& got,
                      Carried& carried);
// Notes for the keys carried (one sentence each). A plan key the plan leaves
// unset (its default) that `got`, the settings read back, sets: the note
// says what the framework runs instead.
std::vector<std::string> carriedNotes(const Carried& c, const Imported& got, const char* framework);

// Megatron's defaults, shared with the plan's "framework" key
// (model/framework_defaults.h).
inline double defaultBucketMib(std::int64_t dpTimesCp, int gradBytes) {
    return megatronDefaultBucketMib(dpTimesCp, gradBytes);
}
using sa::megatronRankOrder;

// The documents' name: the options' name, else the file's stem, else `fallback`.
std::string documentName(const ImportOptions& opt, const std::string& fallback);

std::string integerText(std::int64_t v);
std::string numberText(double v);

} // namespace sa::frameworks::detail

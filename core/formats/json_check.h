#pragma once
// Private helpers of the document parsers: a diagnostics sink that remembers
// which JSON paths already failed (so later checks do not pile up follow-on
// errors), and a reader over one JSON object that checks types and ranges,
// and reports keys it did not expect.

#include "model/scenario.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace sa::formats {

using nlohmann::json;

// Limits that keep hostile or mistyped documents from overflowing the cost
// model's arithmetic. They are far above any real cluster or model.
// Buildings, links, zones and the plan's grid, schedule and EP products also
// bound the time of one evaluation (a few seconds at the limits; routes
// between every pair of buildings are precomputed).
inline constexpr std::int64_t kMaxBuildings = 1'000;
inline constexpr std::int64_t kMaxLinks = 1'000;
inline constexpr std::int64_t kMaxZones = 10'000;            // sum of gpus / zone_gpus
inline constexpr std::int64_t kMaxGridCells = 10'000'000;    // pp * dp
inline constexpr std::int64_t kMaxPipelineSlots = 1'000'000; // pp * virtual_stages * microbatches
inline constexpr std::int64_t kMaxExpertPairs = 100'000'000; // pp * dp * ep
inline constexpr std::int64_t kMaxGpusPerBuilding = 10'000'000;
inline constexpr std::int64_t kMaxGpusPerHost = 65'536;
inline constexpr std::int64_t kMaxLayers = 100'000;
inline constexpr std::int64_t kMaxVocab = 10'000'000;
inline constexpr std::int64_t kMaxWidth = 10'000'000; // hidden, ffn_hidden
inline constexpr std::int64_t kMaxHeads = 100'000;
inline constexpr std::int64_t kMaxExperts = 100'000;
inline constexpr std::int64_t kMaxSequenceLength = 100'000'000;
inline constexpr std::int64_t kMaxBatchSequences = 1'000'000'000;
inline constexpr std::int64_t kMaxDegree = 10'000'000;       // tp, cp, pp, dp, ep
inline constexpr std::int64_t kMaxJobGpus = 100'000'000'000; // buildings * GPUs per building
inline constexpr std::int64_t kMaxPlacementRuns = 100'000;
inline constexpr std::int64_t kMaxFlows = 1'000'000;
inline constexpr std::int64_t kMaxSms = 100'000;
inline constexpr std::size_t kMaxDiagnostics = 100;
inline constexpr int kMaxNesting = 64;

// Transport profiles every cluster knows without defining them.
inline const std::vector<std::string>& builtinTechnologies() {
    static const std::vector<std::string> names = {"roce", "roce-long-haul", "tcp", "tcp-multiflow",
                                                   "nvlink"};
    return names;
}

// JSON pointer of `key` inside the object at `parent` (RFC 6901 escaping).
std::string childPath(const std::string& parent, const std::string& key);
std::string childPath(const std::string& parent, std::size_t index);

// A short description of a value for "got ..." ('text', 42, 2.5, an object).
std::string describe(const json& v);
// A number as a person writes it: 1, 0.5, 1e-06.
std::string formatNumber(double v);
std::string joined(const std::vector<std::string>& items, const std::string& sep = ", ");

class Diagnostics {
public:
    // `prefix` is put before every reported path: a document inline in a
    // scenario reports "/plan/parallelism/tp" while its checks say "/parallelism/tp".
    explicit Diagnostics(std::string file, std::string prefix = {})
        : file_(std::move(file))
        , prefix_(std::move(prefix)) {}

    // A problem at `path`; the path counts as failed.
    void error(const std::string& path, const std::string& message);
    // A problem that does not make `path` unusable (an unknown or missing key
    // is reported at the object, which is still read).
    void report(const std::string& path, const std::string& message);
    // Marks a path as failed without a message of its own (a caller reported it).
    void markBad(const std::string& path) { bad_.insert(path); }
    // True when `path` or one of its ancestors failed.
    bool isBad(const std::string& path) const;
    // True when `path`, an ancestor or a descendant failed.
    bool touched(const std::string& path) const;
    bool anyBad(std::initializer_list<std::string> paths) const {
        for (const auto& p : paths)
            if (isBad(p))
                return true;
        return false;
    }

    const std::string& file() const { return file_; }
    bool empty() const { return list_.empty() && dropped_ == 0; }
    // The collected problems; a last entry says how many were left out.
    std::vector<Diagnostic> take();

private:
    std::string file_;
    std::string prefix_;
    std::vector<Diagnostic> list_;
    std::set<std::string> bad_;
    std::size_t dropped_ = 0;
};

enum class Presence { Required, Optional };

struct IntRange {
    std::int64_t min = 1;
    std::int64_t max = std::numeric_limits<int>::max();
    bool closed = false; // say "an integer from min to max" instead of "a positive integer"
    std::string rule() const;
};

struct NumberRange {
    double min = 0;
    bool minOpen = true; // min itself not allowed
    std::optional<double> max;
    bool maxOpen = false;
    // max is a bound beyond which no hardware goes, not part of the rule:
    // "a number >= 0", and above it "... no larger than 10000".
    bool sanityMax = false;
    std::string rule() const;
    // The rule as a message states it for `v` (a number, or nothing).
    std::string ruleFor(std::optional<double> v) const;
    bool contains(double v) const;
};

// Ranges shared by the parsers and the checks on values built in code.
inline constexpr IntRange kGpusRange{1, kMaxGpusPerBuilding};
inline constexpr IntRange kGpusPerHostRange{1, kMaxGpusPerHost};
inline constexpr IntRange kSmsRange{1, kMaxSms};
inline constexpr IntRange kOuterStepsRange{1, 1'000'000, true};
inline constexpr IntRange kCheckpointStepsRange{0, 1'000'000'000, true};
inline constexpr IntRange kFlowsRange{1, kMaxFlows};
// NCCL's knobs (core/cost/network.h): channels up to MAXCHANNELS (32 in
// older NCCL, 64 in newer), the socket transport's MAX_SOCKETS = 64 and
// net_ib's NCCL_IB_MAX_QPS = 128 per connection.
inline constexpr IntRange kNcclChannelsRange{1, 64, true};
inline constexpr IntRange kQpsPerConnectionRange{1, 128, true};
inline constexpr IntRange kSocketsPerConnectionRange{1, 64, true};
inline constexpr IntRange kHostNetCoresRange{1, 4096, true};
inline constexpr IntRange kLayersRange{1, kMaxLayers};
inline constexpr IntRange kWidthRange{1, kMaxWidth};
inline constexpr IntRange kWidthOrNoneRange{0, kMaxWidth}; // 0: the part is absent
inline constexpr IntRange kHeadsRange{1, kMaxHeads};
inline constexpr IntRange kVocabRange{1, kMaxVocab};
inline constexpr IntRange kExpertsRange{1, kMaxExperts};
inline constexpr IntRange kSharedExpertsRange{0, kMaxExperts};
inline constexpr IntRange kDenseLayersRange{0, kMaxLayers};
inline constexpr IntRange kMtpLayersRange{0, kMaxLayers}; // modules, each one block
inline constexpr IntRange kSequenceRange{1, kMaxSequenceLength};
inline constexpr IntRange kBatchRange{1, kMaxBatchSequences};
inline constexpr IntRange kDegreeRange{1, kMaxDegree};
inline constexpr IntRange kZeroStageRange{0, 3, true};
inline constexpr IntRange kVirtualStagesRange{1, kMaxLayers};
inline constexpr IntRange kRecomputeLayersRange{1, kMaxLayers};
inline constexpr IntRange kIndexRange{0, kMaxDegree};
// SMs a kernel may hold (0: its default).
inline constexpr IntRange kDispatcherSmsRange{0, kMaxSms, true};

inline constexpr NumberRange kPositive{0, true, std::nullopt, false};
inline constexpr NumberRange kNonNegative{0, false, std::nullopt, false};
inline constexpr NumberRange kAtLeastOne{1, false, std::nullopt, false};
inline constexpr NumberRange kOuterBytesRange{0.125, false, 8.0, false};
inline constexpr NumberRange kLossPenaltyRange{-0.5, false, 1.0, false};
inline constexpr NumberRange kFraction{0, true, 1.0, false};    // (0, 1]
inline constexpr NumberRange kProbability{0, false, 1.0, true}; // [0, 1)
// A cluster's physical quantities, bounded where no hardware goes (the
// explorer's fields take the same ranges, so a file's value is always one
// the inspector can show and edit). Beyond them the figures overflow (a
// latency of 1e308 ms, a TDP of 1e308 W) rather than mean anything.
inline constexpr NumberRange kScaleUpGbpsRange{0, true, 1e7, false, true};
inline constexpr NumberRange kScaleOutGbpsRange{0, true, 1e6, false, true};
inline constexpr NumberRange kOversubscriptionRange{1, false, 1000.0, false, true};
inline constexpr NumberRange kLinkGbpsRange{0, true, 1e9, false, true};
inline constexpr NumberRange kLinkGbpsOrNoneRange{0, false, 1e9, false, true}; // 0: none
inline constexpr NumberRange kLinkLatencyMsRange{0, false, 1e4, false, true};  // 10 s one way
inline constexpr NumberRange kTransportPriceRange{0, false, 1e4, false, true}; // $/GB
inline constexpr NumberRange kStragglerRange{1, false, 100.0, false, true};
inline constexpr NumberRange kStepJitterRange{0, false, 10.0, false, true};
inline constexpr NumberRange kPueRange{1, false, 10.0, false, true};
inline constexpr NumberRange kMtbfHoursRange{0, false, 1e9, false, true};   // 0: the default
inline constexpr NumberRange kRestartSRange{0, false, 1e7, false, true};    // 0: the default
inline constexpr NumberRange kStorageGbpsRange{0, false, 1e9, false, true}; // 0: the default
inline constexpr NumberRange kGpuHourUsdRange{0, false, 1e6, false, true};  // 0: not priced
inline constexpr NumberRange kHostPowerWRange{0, false, 1e6, false, true};  // 0: the default
inline constexpr NumberRange kNetworkPowerWRange{0, false, 1e5, false, true};
inline constexpr NumberRange kGpuPowerWRange{0, false, 1e5, false, true}; // tdp, limit, idle
// A calibrated ring step (Building::scale_up_latency_us, scale_out_latency_us):
// [0, 10000] us; a step of 10 ms is no fabric inside a building.
inline constexpr NumberRange kStepLatencyUs{0, false, 10000.0, false};

// Range checks on values; nothing is reported for a path that already failed.
bool checkInt(Diagnostics& d, const std::string& path, std::int64_t v, const IntRange& range);
bool checkNumber(Diagnostics& d, const std::string& path, double v, const NumberRange& range);
bool checkName(Diagnostics& d, const std::string& path, const std::string& v);

// Reads one JSON object. Every key asked for counts as known; finish()
// reports the rest. A reader over a missing or non-object value reads
// nothing and reports nothing more.
class ObjectReader {
public:
    ObjectReader(Diagnostics& d, const json* j, std::string path);

    bool valid() const { return j_ != nullptr; }
    const std::string& path() const { return path_; }
    std::string pathOf(const std::string& key) const { return childPath(path_, key); }
    const json* node() const { return j_; }

    // The value of `key`, or nullptr (and "missing required key" when required).
    const json* find(const std::string& key, Presence p);

    template <class T>
    bool integer(const std::string& key, T& out, Presence p, IntRange range = {}) {
        const json* v = find(key, p);
        if (!v)
            return false;
        std::int64_t x = 0;
        if (!readInteger(*v, pathOf(key), range, x))
            return false;
        out = static_cast<T>(x);
        return true;
    }
    bool number(const std::string& key, double& out, Presence p, NumberRange range = {});
    bool boolean(const std::string& key, bool& out, Presence p);
    bool string(const std::string& key, std::string& out, Presence p, bool nonEmpty);
    template <class E>
    bool choice(const std::string& key, E& out, Presence p,
                const std::vector<std::pair<std::string, E>>& options) {
        const json* v = find(key, p);
        if (!v)
            return false;
        std::vector<std::string> names;
        for (const auto& [name, value] : options) {
            if (v->is_string() && v->get_ref<const std::string&>() == name) {
                out = value;
                return true;
            }
            names.push_back(name);
        }
        diag_.error(pathOf(key), "must be one of " + joined(names) + ", got " + describe(*v));
        return false;
    }
    // A nested object; an invalid reader when absent or of the wrong type.
    ObjectReader object(const std::string& key, Presence p);
    // A nested array; nullptr when absent or of the wrong type.
    const json* array(const std::string& key, Presence p);

    // Reports keys nobody asked for.
    void finish();

    static bool readInteger(const json& v, const std::string& path, const IntRange& range,
                            Diagnostics& d, std::int64_t& out);

private:
    bool readInteger(const json& v, const std::string& path, const IntRange& range,
                     std::int64_t& out) {
        return readInteger(v, path, range, diag_, out);
    }

    Diagnostics& diag_;
    const json* j_;
    std::string path_;
    std::set<std::string> known_;
};

// Checks that `v` is an object; reports "must be an object, got ..." otherwise.
const json* requireObject(Diagnostics& d, const json& v, const std::string& path);

// For files that are not documents but hold some (the optimizer's results):
// parseJsonText parses text as the document parsers do (strict syntax with
// line and column, duplicate keys, nesting deeper than kMaxNesting) and
// gives nullopt when there is no JSON value to read; readPlanDocument reads
// and checks a complete plan document ("format" and "version" required),
// reporting under `d`'s prefix (e.g. "/top/0/plan").
std::optional<json> parseJsonText(const std::string& text, Diagnostics& d);
// A document path as the parsers resolve one a scenario names: relative to
// `baseDir` unless absolute (or no base is given), lexically normalised.
std::string resolveDocumentPath(const std::string& baseDir, const std::string& path);
Plan readPlanDocument(const json& j, Diagnostics& d);

} // namespace sa::formats

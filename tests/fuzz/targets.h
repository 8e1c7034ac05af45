#pragma once
// The fuzz targets as plain functions. fuzz_*.cpp hand them to libFuzzer
// (clang, ASan + UBSan, tools/fuzz.sh); tests/core/tst_badinputs.cpp
// replays the seed corpus in tests/fuzz/corpus/ through them in every build,
// so the seeds and the regression inputs run in CI with any compiler.
//
// Besides "no crash, no sanitizer report, no exception", the targets check
// two properties the documents promise (docs/FORMATS.md):
// - a document that loads writes a canonical form that loads back to an
//   equal value and is a fixed point of load + write;
// - a scenario that loads and stays within small bounds evaluates to a
//   finite, positive step time (or to an EvaluationError, never a crash).
// A violated property prints the input's canonical text and aborts.

#include "cost/evaluate.h"
#include "formats/documents.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include <unistd.h>

namespace sa::fuzz {

[[noreturn]] inline void fail(const char* what, const std::string& detail) {
    std::fprintf(stderr, "fuzz property violated: %s\n%s\n", what, detail.c_str());
    std::fflush(stderr);
    std::abort();
}

inline std::string problemsText(const std::vector<Diagnostic>& problems) {
    std::string s;
    for (const auto& p : problems)
        s += p.str() + "\n";
    return s;
}

// An empty folder that scenarios resolve their relative paths against: a
// referenced file is never found, so only inline parts load.
inline const std::string& emptyBaseDir() {
    static std::string dir;
    if (dir.empty()) {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "scaleacross-fuzz-XXXXXX").string();
        if (!::mkdtemp(pattern.data()))
            fail("cannot create a temporary folder", pattern);
        dir = pattern;
        std::atexit([] { ::rmdir(dir.c_str()); });
    }
    return dir;
}

template <class T, class Parse> void checkRoundTrip(const T& value, Parse parse, const char* kind) {
    const std::string text = dumpCanonical(toJson(value));
    auto again = parse(text, "canonical.json");
    if (!again.ok())
        fail(kind, "canonical form does not load:\n" + text + problemsText(again.problems));
    if (!(*again.value == value))
        fail(kind, "canonical form loads to a different value:\n" + text);
    if (dumpCanonical(toJson(*again.value)) != text)
        fail(kind, "canonical form is not a fixed point:\n" + text);
}

template <class T, class Parse>
int document(const std::uint8_t* data, std::size_t size, Parse parse, const char* kind) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto loaded = parse(text, "fuzz.json");
    if (loaded.ok())
        checkRoundTrip(*loaded.value, parse, kind);
    else if (loaded.problems.empty())
        fail(kind, "rejected without a message:\n" + text);
    return 0;
}

inline int cluster(const std::uint8_t* data, std::size_t size) {
    return document<Cluster>(data, size, parseCluster, "cluster");
}
inline int model(const std::uint8_t* data, std::size_t size) {
    return document<Model>(data, size, parseModel, "model");
}
inline int plan(const std::uint8_t* data, std::size_t size) {
    return document<Plan>(data, size, parsePlan, "plan");
}

// nullopt for text that names a device or kernel file (/dev/stdin would
// block the fuzzer; the CLI reads what the user names).
inline std::optional<Loaded<Scenario>> loadScenario(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const char* special : {"/dev", "/proc", "/sys"})
        if (text.find(special) != std::string::npos)
            return std::nullopt;
    return parseScenario(text, "fuzz.json", emptyBaseDir());
}

inline int scenario(const std::uint8_t* data, std::size_t size) {
    auto loaded = loadScenario(data, size);
    if (!loaded)
        return -1;
    if (loaded->ok()) {
        const auto parse = [](const std::string& t, const std::string& f) {
            return parseScenario(t, f, emptyBaseDir());
        };
        checkRoundTrip(*loaded->value, parse, "scenario");
    } else if (loaded->problems.empty()) {
        fail("scenario", "rejected without a message");
    }
    return 0;
}

// Bounds that keep one evaluation in the milliseconds: the cost model's
// work grows with the pp x dp grid, the microbatches, the zones and the
// buildings (routes are n x n).
inline bool smallEnough(const Scenario& s) {
    const Parallelism& g = s.plan.parallelism;
    if (s.cluster.buildings.size() > 16 || s.cluster.links.size() > 64)
        return false;
    std::int64_t zones = 0;
    for (const auto& b : s.cluster.buildings)
        zones += b.zones();
    if (zones > 512)
        return false;
    if (std::int64_t(g.pp) * g.dp * std::max(1, g.ep) > 65536)
        return false;
    const std::int64_t v = s.plan.schedule.virtual_stages;
    if (std::int64_t(g.pp) * v > 512 || s.plan.microbatches() > 512 ||
        std::int64_t(g.pp) * v * s.plan.microbatches() > 65536)
        return false;
    if (s.plan.placement && s.plan.placement->runs.size() > 64)
        return false;
    return true;
}

inline int evaluate(const std::uint8_t* data, std::size_t size) {
    auto loaded = loadScenario(data, size);
    if (!loaded)
        return -1;
    if (!loaded->ok())
        return 0;
    const Scenario& s = *loaded->value;
    if (!smallEnough(s))
        return -1; // libFuzzer: do not keep this input
    EvaluateOptions options;
    options.timeline = false;
    const EvaluationResult result = sa::evaluate(s, options);
    if (const auto* e = std::get_if<EvaluationError>(&result)) {
        if (e->problems.empty())
            fail("evaluate", "an EvaluationError without a message:\n" + dumpCanonical(toJson(s)));
        return 0;
    }
    const Evaluation& ev = std::get<Evaluation>(result);
    if (!std::isfinite(ev.step_time_s) || !(ev.step_time_s > 0))
        fail("evaluate",
             "step time " + std::to_string(ev.step_time_s) + " for:\n" + dumpCanonical(toJson(s)));
    return 0;
}

} // namespace sa::fuzz

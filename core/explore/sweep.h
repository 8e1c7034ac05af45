#pragma once
// Parameter sweeps: vary one or two fields of the scenario (a link's
// bandwidth or latency, the micro batch, the PP degree, ...) over a range
// and evaluate every point. Fields are named by dotted paths into the
// canonical scenario JSON; array elements by their "name" (buildings,
// links) or index: "links.B1-B2.bandwidth_gbps", "plan.parallelism.pp",
// "cluster.buildings.B1.scale_out_gbps".

#include "cost/evaluate.h"
#include "model/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace sa {

struct SweepAxis {
    std::string path;
    std::vector<double> values;
};

// "PATH=SPEC" with SPEC one of: "A:B:log10[:N]" (N geometric points, default
// 10), "A:B:lin[:N]" (N even points), "A:B:*F" (multiply by F), "A:B:+S"
// (add S), or "v1,v2,...". Returns nullopt with a message on error.
std::optional<SweepAxis> parseSweepAxis(const std::string& spec, std::string* error);

struct SweepPoint {
    std::vector<double> values; // one per axis
    std::optional<Evaluation> evaluation;
    std::string error; // set when the point cannot be evaluated
};

// The scenario with `path` set to `value`; nullopt + message when the path
// does not exist or the result is not a valid document.
std::optional<Scenario> withValue(const Scenario& base, const std::string& path, double value,
                                  std::string* error);

// Cartesian product of the axes, evaluated in parallel (oneTBB).
std::vector<SweepPoint> runSweep(const Scenario& base, const std::vector<SweepAxis>& axes);

// Where along `path` (between lo and hi, searched on a log scale) plan A
// and plan B take equally long: the crossover of two designs, e.g. DP vs PP
// across a link as its bandwidth grows. nullopt when the same plan wins at
// both ends (or a point cannot be evaluated).
struct Crossover {
    double value = 0; // the parameter where they meet
    bool a_wins_below = false;
};
std::optional<Crossover> findCrossover(const Scenario& a, const Scenario& b,
                                       const std::string& path, double lo, double hi,
                                       std::string* error);

} // namespace sa

#pragma once
// The heart of the cost model: a pure function of the scenario.
//
//   Scenario --place--> Placement --cost--> durations --schedule--> Timeline
//            --traffic--> link usage --> Evaluation
//
// Thread-safe: no hidden state. An Evaluator prepares what depends on the
// cluster alone (topology, routes) once, for callers that evaluate many
// plans on one cluster (the optimizer, the GUI on every drag).

#include "cost/evaluation.h"
#include "model/scenario.h"

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

namespace sa {

class Topology;

// A plan that cannot be evaluated (degrees do not divide, too many GPUs...):
// a value, not an exception. Messages name the JSON path as Diagnostics do.
struct EvaluationError {
    std::vector<Diagnostic> problems;
    std::string str() const;
};

using EvaluationResult = std::variant<Evaluation, EvaluationError>;

struct EvaluateOptions {
    bool timeline = true; // record every op (off in the optimizer's hot loop)
    bool validate = true; // run validateScenario first (callers that built a valid plan skip it)
    // Breakdown, per-link usage and warnings. Off in the optimizer's hot
    // loop: step time, memory, MFU and cross-building bytes stay exact.
    bool detail = true;
    // Names the plan in messages (e.g. the plan file's path).
    std::string plan_file = "plan";
    // Other traffic on the cluster's edges, Gbit/s, [topology edge id * 2 +
    // direction], on top of the links' background_gbps (several jobs on one
    // cluster: core/cost/jobs.h). Empty: none. Must leave every edge some
    // capacity.
    std::vector<double> background_gbps = {};
};

class Evaluator;
class EvaluationCache;
struct Model;
struct Plan;
// Plans with an outer sync (core/cost/outer.h).
EvaluationResult evaluateOuterSync(const Evaluator& evaluator, const Model& model, const Plan& plan,
                                   const EvaluateOptions& options, EvaluationCache* cache);

// What one thread's run of evaluations can reuse from the previous ones
// (the optimizer keeps one per thread): the layout (cell grid, replica
// blocks, DP groups, pipeline boundaries) while the degrees, rank order and
// placement runs stay the same; the transports, P2P, DP and ZeRO-3
// collective results, layer costs and the last few lean pipeline simulations,
// each while its own inputs are equal; and the evaluation's buffers. A kept
// result is reused only for equal inputs, so results are identical with or
// without a cache (tst_evalcache). Handing it to another Evaluator drops
// everything. Not thread-safe: one per thread.
class EvaluationCache {
public:
    EvaluationCache();
    ~EvaluationCache();
    EvaluationCache(const EvaluationCache&) = delete;
    EvaluationCache& operator=(const EvaluationCache&) = delete;

    // Evaluations that reused the layout / had to build it.
    std::int64_t layoutHits() const;
    std::int64_t layoutMisses() const;

    struct State;

private:
    friend class Evaluator;
    std::unique_ptr<State> state_;
};

class Evaluator {
public:
    explicit Evaluator(const Cluster& cluster);
    ~Evaluator();
    Evaluator(const Evaluator&) = delete;
    Evaluator& operator=(const Evaluator&) = delete;

    const Cluster& cluster() const { return cluster_; }
    // The cluster's topology under its own routing. Edge ids are the same
    // under every routing; only the paths between buildings differ.
    const Topology& topology() const { return *topology_; }

    EvaluationResult evaluate(const Model& model, const Plan& plan,
                              const EvaluateOptions& options = {}) const;
    // The same, reusing what `cache` kept from this thread's previous call.
    EvaluationResult evaluate(const Model& model, const Plan& plan, const EvaluateOptions& options,
                              EvaluationCache* cache) const;

private:
    friend EvaluationResult evaluateOuterSync(const Evaluator&, const Model&, const Plan&,
                                              const EvaluateOptions&, EvaluationCache*);
    // One step of a plan without an outer sync (and without the run's
    // reports): the stages of core/cost/stages.h.
    EvaluationResult evaluateStep(const Model& model, const Plan& plan,
                                  const EvaluateOptions& options, EvaluationCache* cache) const;
    void degradedSteps(const Model& model, const Plan& plan, const EvaluateOptions& options,
                       EvaluationCache* cache, Evaluation& ev) const;
    // The topology a plan runs on: the cluster's, or the one for the
    // routing the plan asks for (Plan::routing). The policies' defaults are
    // built once, on first use; any other routing into `scratch`, with a
    // new id (no cached result is reused for it).
    const Topology& topologyFor(const Plan& plan, std::unique_ptr<Topology>& scratch,
                                std::uint64_t& id) const;

    struct RoutingVariant {
        std::once_flag built;
        std::unique_ptr<Topology> topology;
        std::uint64_t id = 0;
    };

    Cluster cluster_;
    std::unique_ptr<Topology> topology_;
    std::uint64_t id_; // unique per Evaluator ever made: what a cache was filled by
    mutable std::array<RoutingVariant, 3> variants_; // by RoutingPolicy, default settings
};

EvaluationResult evaluate(const Scenario& scenario, const EvaluateOptions& options = {});

} // namespace sa

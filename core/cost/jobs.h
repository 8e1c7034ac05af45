#pragma once
// Several jobs on one cluster: each job's traffic is background for the
// others on the edges they share.
//
// Shared edges are the inter-building links and the building uplinks. Jobs
// in one building are assumed to use their own zones, so zone uplinks are
// not shared (and the GPUs each job's placement takes in a building must add
// up to at most what the building has).
//
// The sharing is by mean rate, not phase-aligned: a job's traffic on an edge
// is its bytes per step over its step time (each direction), and the other
// jobs see that as inelastic cross traffic (EvaluateOptions::background_gbps),
// the same model as a link's background_gbps. Where the others' mean rates
// would leave a job less than an equal share of the edge (what is left after
// the link's own background, split among the jobs crossing it), the job gets
// that equal share: max-min fairness among the jobs' transports.
//
// The rates depend on the step times and the step times on the rates: the
// jobs are re-evaluated one after another with the others' latest rates
// (Gauss-Seidel) until no step time moves by more than `tolerance`
// (relative) in a sweep, at most `max_iterations` sweeps.

#include "cost/evaluate.h"

#include <array>
#include <string>
#include <variant>
#include <vector>

namespace sa {

struct Job {
    std::string name; // names the job in messages and results (e.g. its file)
    Model model;
    Plan plan;
};

struct JobsOptions {
    double tolerance = 1e-6; // relative change of every step time in a sweep
    int max_iterations = 50; // sweeps over all jobs
};

struct JobOutcome {
    std::string name;
    Evaluation alone;  // on the cluster as it is (its links' background_gbps)
    Evaluation shared; // with the other jobs' traffic as background
    std::vector<std::int64_t> gpus_per_building;
};

// One shared edge that some job crosses.
struct SharedLink {
    std::string name;
    LinkTier tier = LinkTier::InterBuilding;
    int edge = -1;
    double capacity_gbps = 0;
    double background_gbps = 0; // the link's own (cluster document)
    // [job][direction]: the job's mean rate in the shared result, Gbit/s
    // (direction 0: the link's first building to its second, or up the uplink).
    std::vector<std::array<double, 2>> job_gbps;
};

struct JobsEvaluation {
    std::vector<JobOutcome> jobs;
    std::vector<SharedLink> links; // edge id order
    int iterations = 0;            // sweeps run (0: one job, nothing to share)
    bool converged = true;
};

using JobsResult = std::variant<JobsEvaluation, EvaluationError>;

JobsResult evaluateJobs(const Cluster& cluster, const std::vector<Job>& jobs,
                        const JobsOptions& options = {});

} // namespace sa

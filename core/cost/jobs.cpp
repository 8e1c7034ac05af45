#include "cost/jobs.h"

#include "cost/placement.h"
#include "topology/topology.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace sa {

namespace {

bool shared(const TopoEdge& e) {
    return e.kind == EdgeKind::InterBuilding || e.kind == EdgeKind::BuildingUplink;
}

// Mean rate of the job on every directed edge, Gbit/s, [edge * 2 + dir];
// zero on the edges the jobs do not share.
std::vector<double> meanRates(const Topology& topo, const Evaluation& ev) {
    std::vector<double> rate(topo.edges().size() * 2, 0.0);
    if (ev.step_time_s <= 0)
        return rate;
    for (const LinkUsage& l : ev.links) {
        if (l.edge < 0 || !shared(topo.edges()[std::size_t(l.edge)]))
            continue;
        for (int dir = 0; dir < 2; ++dir)
            rate[std::size_t(l.edge) * 2 + std::size_t(dir)] =
                l.direction_bytes_per_step[dir] * 8.0 / ev.step_time_s / 1e9;
    }
    return rate;
}

// The others' traffic as background for job `j`: their summed mean rates,
// but never more than leaves `j` an equal share of what the link's own
// background leaves.
std::vector<double> backgroundFor(const Cluster& cluster, const Topology& topo,
                                  const std::vector<std::vector<double>>& rates, std::size_t j) {
    std::vector<double> bg(topo.edges().size() * 2, 0.0);
    for (const TopoEdge& e : topo.edges()) {
        if (!shared(e))
            continue;
        const double own = e.kind == EdgeKind::InterBuilding && e.link >= 0
                               ? cluster.links[std::size_t(e.link)].background_gbps
                               : 0.0;
        const double left = e.bandwidth_gbps - own;
        for (int dir = 0; dir < 2; ++dir) {
            const std::size_t i = std::size_t(e.id) * 2 + std::size_t(dir);
            double others = 0;
            int crossing = 1; // job j itself
            for (std::size_t k = 0; k < rates.size(); ++k)
                if (k != j && rates[k][i] > 0) {
                    others += rates[k][i];
                    ++crossing;
                }
            bg[i] = std::min(others, left * double(crossing - 1) / double(crossing));
        }
    }
    return bg;
}

// GPUs each job takes in each building; an error naming the building where
// they add up to more than it has.
std::optional<EvaluationError> checkGpus(const Cluster& cluster, const std::vector<Job>& jobs,
                                         std::vector<std::vector<std::int64_t>>& perJob) {
    std::vector<std::int64_t> total(cluster.buildings.size(), 0);
    for (const Job& job : jobs) {
        PlacementResult placed = placeCells(cluster, job.plan, job.name);
        if (!placed.ok())
            return EvaluationError{placed.problems};
        std::vector<std::int64_t> used = placed.gpus_used;
        used.resize(cluster.buildings.size(), 0);
        for (std::size_t b = 0; b < used.size(); ++b) {
            total[b] += used[b];
            if (used[b] > 0 && total[b] > cluster.buildings[b].gpus) {
                std::string others;
                for (std::size_t k = 0; k < perJob.size(); ++k)
                    if (perJob[k][b] > 0)
                        others += (others.empty() ? "" : ", ") + jobs[k].name + " " +
                                  std::to_string(perJob[k][b]);
                return EvaluationError{{Diagnostic{
                    job.name, "/placement",
                    "building '" + cluster.buildings[b].name + "' has " +
                        std::to_string(cluster.buildings[b].gpus) + " GPUs; this job takes " +
                        std::to_string(used[b]) + " of them and the other jobs (" + others + ") " +
                        std::to_string(total[b] - used[b]) +
                        ": place the jobs on GPUs of their own (plan placement)"}}};
            }
        }
        perJob.push_back(std::move(used));
    }
    return std::nullopt;
}

} // namespace

JobsResult evaluateJobs(const Cluster& cluster, const std::vector<Job>& jobs,
                        const JobsOptions& options) {
    JobsEvaluation out;
    std::vector<std::vector<std::int64_t>> perJob;
    if (auto err = checkGpus(cluster, jobs, perJob))
        return *err;
    const Evaluator evaluator(cluster);
    const Topology& topo = evaluator.topology();
    auto run = [&](const Job& job, std::vector<double> background) -> EvaluationResult {
        EvaluateOptions o;
        o.timeline = false;
        o.plan_file = job.name;
        o.background_gbps = std::move(background);
        return evaluator.evaluate(job.model, job.plan, o);
    };
    std::vector<std::vector<double>> rates;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        EvaluationResult r = run(jobs[j], {});
        if (auto* err = std::get_if<EvaluationError>(&r))
            return std::move(*err);
        JobOutcome o;
        o.name = jobs[j].name;
        o.alone = std::get<Evaluation>(std::move(r));
        o.shared = o.alone;
        o.gpus_per_building = perJob[j];
        rates.push_back(meanRates(topo, o.alone));
        out.jobs.push_back(std::move(o));
    }
    if (jobs.size() > 1) {
        out.converged = false;
        for (int it = 1; it <= options.max_iterations && !out.converged; ++it) {
            double moved = 0;
            for (std::size_t j = 0; j < jobs.size(); ++j) {
                EvaluationResult r = run(jobs[j], backgroundFor(cluster, topo, rates, j));
                if (auto* err = std::get_if<EvaluationError>(&r))
                    return std::move(*err);
                Evaluation ev = std::get<Evaluation>(std::move(r));
                const double before = out.jobs[j].shared.step_time_s;
                if (before > 0)
                    moved = std::max(moved, std::abs(ev.step_time_s - before) / before);
                rates[j] = meanRates(topo, ev);
                out.jobs[j].shared = std::move(ev);
            }
            out.iterations = it;
            out.converged = moved <= options.tolerance;
        }
    }
    for (const TopoEdge& e : topo.edges()) {
        if (!shared(e))
            continue;
        SharedLink s;
        bool used = false;
        for (std::size_t j = 0; j < jobs.size(); ++j) {
            const std::size_t i = std::size_t(e.id) * 2;
            s.job_gbps.push_back({rates[j][i], rates[j][i + 1]});
            used = used || rates[j][i] > 0 || rates[j][i + 1] > 0;
        }
        if (!used)
            continue;
        s.name = e.name;
        s.tier =
            e.kind == EdgeKind::InterBuilding ? LinkTier::InterBuilding : LinkTier::BuildingUplink;
        s.edge = e.id;
        s.capacity_gbps = e.bandwidth_gbps;
        if (e.kind == EdgeKind::InterBuilding && e.link >= 0)
            s.background_gbps = cluster.links[std::size_t(e.link)].background_gbps;
        out.links.push_back(std::move(s));
    }
    return out;
}

} // namespace sa

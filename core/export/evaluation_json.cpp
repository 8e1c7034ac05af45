#include "export/evaluation_json.h"

#include "model/cluster.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sa {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}

std::string formatSeconds(double s) {
    char buf[64];
    if (s >= 1.0)
        std::snprintf(buf, sizeof buf, "%.3f s", s);
    else if (s >= 1e-3)
        std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
    return buf;
}

std::string formatBytes(double bytes) {
    char buf[64];
    const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int u = 0;
    while (bytes >= 1000.0 && u < 5) {
        bytes /= 1000.0;
        ++u;
    }
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
    return buf;
}

nlohmann::json evaluationToJson(const Evaluation& ev, bool timeline) {
    using nlohmann::json;
    json links = json::array();
    for (const LinkUsage& l : ev.links) {
        json dims = json::array();
        for (Dim d : l.dims)
            dims.push_back(toString(d));
        links.push_back({{"name", l.name},
                         {"tier", toString(l.tier)},
                         {"capacity_gbps", l.capacity_gbps},
                         {"latency_ms", l.latency_ms},
                         {"technology", l.technology},
                         {"bytes_per_step", l.bytes_per_step},
                         {"busy_s", l.busy_s},
                         {"utilization", l.utilization},
                         {"peak_utilization", l.peak_utilization},
                         {"dims", dims}});
        // Others' traffic on the link: only where there is some (without it
        // the totals are utilization and peak_utilization).
        if (l.background_gbps > 0) {
            json& j = links.back();
            j["background_gbps"] = l.background_gbps;
            j["total_utilization"] = l.total_utilization;
            j["total_peak_utilization"] = l.total_peak_utilization;
        }
    }
    auto breakdownJson = [](const Breakdown& x) {
        return json{{"compute_s", x.compute_s},       {"tp_exposed_s", x.tp_exposed_s},
                    {"cp_exposed_s", x.cp_exposed_s}, {"ep_exposed_s", x.ep_exposed_s},
                    {"pp_exposed_s", x.pp_exposed_s}, {"dp_exposed_s", x.dp_exposed_s},
                    {"bubble_s", x.bubble_s},         {"optimizer_s", x.optimizer_s}};
    };
    json stageBreakdown = json::array();
    for (const Breakdown& x : ev.stage_breakdown)
        stageBreakdown.push_back(breakdownJson(x));
    const MemoryUsage& m = ev.memory;
    json j = {
        {"step_time_s", ev.step_time_s},
        {"tokens_per_s", ev.tokens_per_s},
        {"mfu", ev.mfu},
        {"hfu", ev.hfu},
        {"tflops_per_gpu", ev.tflops_per_gpu},
        {"gpus", ev.gpus},
        {"microbatches", ev.microbatches},
        {"model_flops_per_step", ev.model_flops_per_step},
        {"hardware_flops_per_step", ev.hardware_flops_per_step},
        {"cross_building_bytes", ev.cross_building_bytes},
        {"breakdown", breakdownJson(ev.breakdown)},
        {"memory",
         {{"peak_gib_per_gpu", m.peak_gib_per_gpu},
          {"capacity_gib", m.capacity_gib},
          {"fits", m.fits},
          {"worst_stage", m.worst_stage},
          {"weights_gib", m.weights_gib},
          {"gradients_gib", m.gradients_gib},
          {"optimizer_gib", m.optimizer_gib},
          {"activations_gib", m.activations_gib},
          {"other_gib", m.other_gib},
          {"per_stage_peak_gib", m.per_stage_peak_gib}}},
        {"stages",
         {{"layers", ev.layers_per_stage},
          {"building", ev.stage_building},
          {"breakdown", stageBreakdown}}},
        {"links", links},
        {"warnings", ev.warnings},
    };
    if (ev.compression) {
        const CompressionReport& c = *ev.compression;
        j["compression"] = {{"dp",
                             {{"method", toString(c.method)},
                              {"applied", c.applied},
                              {"bytes_saved_per_step", c.bytes_saved_per_step},
                              {"compute_s", c.compute_s},
                              {"residual_gib_per_gpu", c.residual_gib}}}};
    }
    if (ev.outer_sync) {
        const OuterSyncReport& o = *ev.outer_sync;
        j["outer_sync"] = {{"method", toString(o.method)},
                           {"workers", o.workers},
                           {"inner_steps", o.inner_steps},
                           {"fragments", o.fragments},
                           {"inner_step_s", o.inner_step_s},
                           {"sync_s", o.sync_s},
                           {"exposed_per_step_s", o.exposed_per_step_s},
                           {"bytes_per_sync", o.bytes_per_sync},
                           {"loss_penalty", o.loss_penalty},
                           {"loss_penalty_from_curve", o.penalty_from_curve},
                           {"token_multiplier", o.token_multiplier}};
    }
    const GoodputReport& g = ev.goodput;
    j["goodput"] = {{"goodput", g.goodput},
                    {"job_mtbf_s", g.job_mtbf_s},
                    {"checkpoint_bytes", g.checkpoint_bytes},
                    {"checkpoint_write_s", g.checkpoint_write_s},
                    {"checkpoint_blocking_s", g.checkpoint_blocking_s},
                    {"restart_s", g.restart_s},
                    {"interval_steps", g.interval_steps},
                    {"interval_s", g.interval_s},
                    {"interval_optimal", g.interval_optimal},
                    {"lost_per_failure_s", g.lost_per_failure_s},
                    {"straggler_s", g.straggler_s}};
    if (!ev.degraded_steps.empty()) {
        j["goodput"]["degraded_links_s"] = g.degraded_links_s;
        json degraded = json::array();
        for (const auto& d : ev.degraded_steps)
            degraded.push_back(
                {{"link", d.link}, {"fraction", d.fraction}, {"step_time_s", d.step_time_s}});
        j["goodput"]["degraded_links"] = degraded;
    }
    const CostReport& c = ev.cost;
    j["per_step"] = {
        {"cost_usd", c.cost_usd_per_step},           {"energy_kwh", c.energy_kwh_per_step},
        {"transport_usd", c.transport_usd_per_step}, {"gpu_power_w", c.gpu_power_w},
        {"facility_power_kw", c.facility_power_kw},  {"priced", c.priced}};
    j["per_million_tokens"] = {{"cost_usd", c.usd_per_mtok},
                               {"energy_kwh", c.kwh_per_mtok},
                               {"time_s", c.time_s_per_mtok}};
    if (ev.run) {
        const RunReport& r = *ev.run;
        j["run"] = {{"tokens", r.tokens},
                    {"steps", r.steps},
                    {"time_s", r.time_s},
                    {"cost_usd", r.cost_usd},
                    {"energy_kwh", r.energy_kwh},
                    {"restarts", r.restarts},
                    {"target_loss", r.target_loss},
                    {"tokens_to_loss", r.tokens_to_loss},
                    {"time_to_loss_s", r.time_to_loss_s}};
    }
    if (timeline) {
        json ops = json::array();
        for (const TimelineOp& op : ev.timeline.ops)
            ops.push_back({{"kind", toString(op.kind)},
                           {"stage", op.stage},
                           {"chunk", op.chunk},
                           {"microbatch", op.microbatch},
                           {"start_s", op.start_s},
                           {"end_s", op.end_s},
                           {"cross_building", op.cross_building}});
        j["timeline"] = {{"stages", ev.timeline.stages},
                         {"chunks", ev.timeline.chunks},
                         {"microbatches", ev.timeline.microbatches},
                         {"ops", ops}};
    }
    return j;
}

std::string evaluationReport(const Evaluation& ev, const Cluster& cluster) {
    std::string out;
    char buf[512];
    auto line = [&](const char* fmt, auto... args) {
        std::snprintf(buf, sizeof buf, fmt, args...);
        out += buf;
        out += '\n';
    };
    line("step time        %s", formatSeconds(ev.step_time_s).c_str());
    line("throughput       %.0f tokens/s on %lld GPUs", ev.tokens_per_s, (long long)ev.gpus);
    line("MFU / HFU        %.1f%% / %.1f%%  (%.0f model TFLOP/s per GPU)", ev.mfu * 100,
         ev.hfu * 100, ev.tflops_per_gpu);
    const MemoryUsage& m = ev.memory;
    line("memory per GPU   %.1f of %.0f GiB (%s; worst stage %d: weights %.1f, grads %.1f, "
         "optimizer %.1f, activations %.1f, other %.1f)",
         m.peak_gib_per_gpu, m.capacity_gib, m.fits ? "fits" : "DOES NOT FIT", m.worst_stage,
         m.weights_gib, m.gradients_gib, m.optimizer_gib, m.activations_gib, m.other_gib);
    const Breakdown& b = ev.breakdown;
    out += "breakdown (critical stage):\n";
    const std::pair<const char*, double> parts[] = {
        {"compute", b.compute_s},       {"TP exposed", b.tp_exposed_s},
        {"CP exposed", b.cp_exposed_s}, {"EP exposed", b.ep_exposed_s},
        {"PP exposed", b.pp_exposed_s}, {"pipeline bubble", b.bubble_s},
        {"DP exposed", b.dp_exposed_s}, {"optimizer", b.optimizer_s}};
    for (const auto& [name, s] : parts)
        if (s > 0)
            line("  %-16s %10s  %5.1f%%", name, formatSeconds(s).c_str(),
                 ev.step_time_s > 0 ? 100 * s / ev.step_time_s : 0.0);
    // A stage whose own communication the critical one does not show (an
    // MoE stage's all-to-all behind a dense first stage).
    for (std::size_t s = 0; s < ev.stage_breakdown.size(); ++s) {
        const Breakdown& x = ev.stage_breakdown[s];
        if (x.ep_exposed_s > 2 * b.ep_exposed_s && x.ep_exposed_s > 0.01 * ev.step_time_s) {
            line("  (stage %zu: EP exposed %s, compute %s)", s,
                 formatSeconds(x.ep_exposed_s).c_str(), formatSeconds(x.compute_s).c_str());
            break;
        }
    }
    if (ev.compression && ev.compression->applied) {
        const CompressionReport& c = *ev.compression;
        line("DP compression   %s: %s/step less across buildings, %s encode/decode per step, "
             "%.2f GiB residual per GPU",
             toString(c.method), formatBytes(c.bytes_saved_per_step).c_str(),
             formatSeconds(c.compute_s).c_str(), c.residual_gib);
    }
    if (ev.outer_sync) {
        const OuterSyncReport& o = *ev.outer_sync;
        line("outer sync       %s over %d workers: inner step %s, one sync %s (%s across "
             "buildings), %s per step",
             toString(o.method), o.workers, formatSeconds(o.inner_step_s).c_str(),
             formatSeconds(o.sync_s).c_str(), formatBytes(o.bytes_per_sync).c_str(),
             formatSeconds(o.exposed_per_step_s).c_str());
        if (o.method != OuterSyncMethod::Hsdp)
            line("convergence      H %d: loss %+.2f%% over synchronous DP (%s), %.2fx the tokens",
                 o.inner_steps, 100 * o.loss_penalty,
                 o.penalty_from_curve ? "scaling-law curve" : "plan's loss_penalty",
                 o.token_multiplier);
    }
    const GoodputReport& g = ev.goodput;
    line("goodput          %.1f%%: job MTBF %s, checkpoint %s every %lld steps (%s, blocks %s), "
         "restart %s, stragglers %s/step",
         100 * g.goodput, formatSeconds(g.job_mtbf_s).c_str(),
         formatBytes(g.checkpoint_bytes).c_str(), (long long)g.interval_steps,
         formatSeconds(g.interval_s).c_str(), formatSeconds(g.checkpoint_blocking_s).c_str(),
         formatSeconds(g.restart_s).c_str(), formatSeconds(g.straggler_s).c_str());
    for (const auto& d : ev.degraded_steps)
        line("degraded link    %s %.1f%% of the time: step %s then, %s/step expected",
             d.link.c_str(), 100 * d.fraction, formatSeconds(d.step_time_s).c_str(),
             formatSeconds(d.fraction * std::max(0.0, d.step_time_s - ev.step_time_s)).c_str());
    const CostReport& c = ev.cost;
    if (c.priced)
        line("per step         $%.2f, %.2f kWh (GPUs %.0f W each, %.2f MW with hosts, network "
             "and PUE)",
             c.cost_usd_per_step, c.energy_kwh_per_step, c.gpu_power_w, c.facility_power_kw / 1000);
    else
        line("per step         %.2f kWh (GPUs %.0f W each, %.2f MW with hosts, network and PUE; "
             "no prices)",
             c.energy_kwh_per_step, c.gpu_power_w, c.facility_power_kw / 1000);
    if (std::isinf(c.time_s_per_mtok)) {
        // Goodput 0 (core/cost/run.cpp): the job fails before a checkpoint
        // interval of even one step completes, so no token is ever kept.
        line("per 1M tokens    never: goodput 0 (the job fails every %s, before a step and its "
             "checkpoint complete)",
             formatSeconds(g.job_mtbf_s).c_str());
    } else if (c.time_s_per_mtok > 0) {
        char price[64] = "";
        if (c.priced)
            std::snprintf(price, sizeof price, "$%.2f, ", c.usd_per_mtok);
        line("per 1M tokens    %s%.3f kWh, %s with goodput", price, c.kwh_per_mtok,
             formatSeconds(c.time_s_per_mtok).c_str());
    }
    if (ev.run && std::isinf(ev.run->time_s)) {
        line("run              %.3g tokens: never completes at goodput 0", ev.run->tokens);
    } else if (ev.run) {
        const RunReport& r = *ev.run;
        char price[64] = "";
        if (c.priced)
            std::snprintf(price, sizeof price, "$%.4g, ", r.cost_usd);
        line("run              %.3g tokens in %.4g days (%s%.3g MWh, %.1f restarts); loss %.3f in "
             "%.4g days",
             r.tokens, r.time_s / 86400, price, r.energy_kwh / 1000, r.restarts, r.target_loss,
             r.time_to_loss_s / 86400);
    }
    bool header = false;
    for (const LinkUsage& l : ev.links) {
        if (l.bytes_per_step <= 0 && l.tier != LinkTier::InterBuilding)
            continue;
        if (!header) {
            out += "links (busier direction):\n";
            header = true;
        }
        std::string dims;
        for (Dim d : l.dims)
            dims += (dims.empty() ? "" : ",") + std::string(toString(d));
        line("  %-22s %-15s %9s/step  busy %9s  util %5.1f%% (peak %5.1f%%)  %s", l.name.c_str(),
             toString(l.tier), formatBytes(l.bytes_per_step).c_str(),
             formatSeconds(l.busy_s).c_str(), l.utilization * 100, l.peak_utilization * 100,
             dims.empty() ? "-" : dims.c_str());
        if (l.background_gbps > 0)
            line("  %-22s + background %.0f of %.0f Gbit/s: total util %5.1f%% (peak %5.1f%%)", "",
                 l.background_gbps, l.capacity_gbps, l.total_utilization * 100,
                 l.total_peak_utilization * 100);
    }
    (void)cluster;
    if (!ev.warnings.empty()) {
        out += "warnings:\n";
        for (const auto& w : ev.warnings)
            out += "  - " + w + "\n";
    }
    (void)kGiB;
    return out;
}

} // namespace sa

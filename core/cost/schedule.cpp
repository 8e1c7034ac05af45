#include "cost/schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sa {

std::vector<IssuedOp> stageOrder(ScheduleKind kind, int p, int v, int m, int s, int extraWarmup) {
    std::vector<IssuedOp> out;
    out.reserve(std::size_t(std::max(0, 2 * m * v)));
    if (kind == ScheduleKind::GPipe) {
        // Huang et al. 2019: all forwards, then all backwards.
        for (int c = 0; c < v; ++c)
            for (int i = 0; i < m; ++i)
                out.push_back({true, c, i});
        for (int c = v - 1; c >= 0; --c)
            for (int i = 0; i < m; ++i)
                out.push_back({false, c, i});
        return out;
    }
    const int total = m * v;
    // Megatron-LM's interleaved order (Narayanan et al. 2021, Sec. 2.2):
    // microbatches go through the chunks in groups of p. With v = 1 this is
    // plain 1F1B (PipeDream-Flush).
    auto fwdAt = [&](int k) {
        const int c = (k / p) % v;
        const int mb = (k / (p * v)) * p + k % p;
        return IssuedOp{true, c, mb};
    };
    auto bwdAt = [&](int k) {
        const int c = v - 1 - (k / p) % v;
        const int mb = (k / (p * v)) * p + k % p;
        return IssuedOp{false, c, mb};
    };
    int warm = v == 1 ? std::min(p - s - 1, m) : std::min((p - s - 1) * 2 + (v - 1) * p, total);
    warm = std::clamp(warm + std::max(0, extraWarmup), 0, total);
    // With m not a multiple of p the grouped order would name microbatches
    // past m; fall back to chunk-major order for those (still valid).
    std::vector<IssuedOp> fwd, bwd;
    fwd.reserve(std::size_t(total));
    bwd.reserve(std::size_t(total));
    for (int k = 0; k < total; ++k) {
        fwd.push_back(fwdAt(k));
        bwd.push_back(bwdAt(k));
    }
    if (m % p != 0 && v > 1) {
        // All forwards first: the grouped warm-up count does not fit this
        // order, and a full warm-up can never deadlock.
        warm = total;
        fwd.clear();
        bwd.clear();
        for (int i = 0; i < m; ++i)
            for (int c = 0; c < v; ++c)
                fwd.push_back({true, c, i});
        for (int i = 0; i < m; ++i)
            for (int c = v - 1; c >= 0; --c)
                bwd.push_back({false, c, i});
    }
    for (int k = 0; k < warm; ++k)
        out.push_back(fwd[std::size_t(k)]);
    for (int k = 0; k < total - warm; ++k) {
        out.push_back(fwd[std::size_t(warm + k)]);
        out.push_back(bwd[std::size_t(k)]);
    }
    for (int k = total - warm; k < total; ++k)
        out.push_back(bwd[std::size_t(k)]);
    return out;
}

PipelineResult simulatePipeline(const PipelineInput& in) {
    const int p = std::max(1, in.stages);
    const int v = std::max(1, in.chunks);
    const int m = std::max(1, in.microbatches);
    const int V = p * v;
    const bool zb = in.kind == ScheduleKind::ZeroBubble;

    PipelineResult r;
    r.busy_s.assign(std::size_t(p), 0);
    r.end_s.assign(std::size_t(p), 0);
    r.last_bwd_start_s.assign(std::size_t(p), std::numeric_limits<double>::infinity());
    r.peak_activation_bytes.assign(std::size_t(p), 0);
    r.peak_in_flight.assign(std::size_t(p), 0);

    std::vector<std::vector<IssuedOp>> orders(static_cast<std::size_t>(p));
    std::size_t totalOps = 0;
    for (int s = 0; s < p; ++s) {
        orders[std::size_t(s)] = stageOrder(
            in.kind, p, v, m, s, in.extra_warmup.empty() ? 0 : in.extra_warmup[std::size_t(s)]);
        totalOps += orders[std::size_t(s)].size();
    }
    if (in.record)
        r.ops.reserve(totalOps * (zb ? 3 : 2) / 2 + totalOps);

    const double unset = -1.0;
    std::vector<double> fEnd(std::size_t(V) * m, unset), bEnd(std::size_t(V) * m, unset);
    auto at = [m](int vs, int mb) { return std::size_t(vs) * m + mb; };
    std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
    std::vector<double> freeAt(std::size_t(p), 0);
    std::vector<double> alive(std::size_t(p), 0);
    std::vector<int> aliveCount(std::size_t(p), 0);
    struct PendingW {
        int chunk, mb;
    };
    std::vector<std::vector<PendingW>> pendingW(static_cast<std::size_t>(p));

    auto dur = [&](const std::vector<std::vector<double>>& d, int s, int c) {
        return d.empty() ? 0.0 : d[std::size_t(s)][std::size_t(c)];
    };
    auto runW = [&](int s) {
        auto& q = pendingW[std::size_t(s)];
        const PendingW w = q.front();
        q.erase(q.begin());
        const double d = dur(in.wgrad, s, w.chunk);
        const double start = freeAt[std::size_t(s)];
        freeAt[std::size_t(s)] = start + d;
        r.busy_s[std::size_t(s)] += d;
        if (in.record)
            r.ops.push_back({OpKind::WeightGrad, s, w.chunk, w.mb, start, start + d, false, 0});
    };

    // When an op can start depends only on its stage's previous op and on
    // its input, so stages can be advanced in any order: sweep them round
    // robin, each as far as its inputs allow (O(ops + sweeps * stages)).
    auto readyOf = [&](int s, double& ready) {
        const IssuedOp& op = orders[std::size_t(s)][next[std::size_t(s)]];
        const int vs = op.chunk * p + s;
        ready = 0;
        if (op.forward) {
            if (vs > 0) {
                const double e = fEnd[at(vs - 1, op.microbatch)];
                if (e < 0)
                    return false;
                ready = e + in.p2p_fwd[std::size_t(vs - 1)];
            }
            return true;
        }
        const double e =
            vs == V - 1 ? fEnd[at(vs, op.microbatch)] : bEnd[at(vs + 1, op.microbatch)];
        if (e < 0)
            return false;
        ready = vs == V - 1 ? e : e + in.p2p_bwd[std::size_t(vs)];
        return true;
    };
    std::size_t done = 0;
    while (done < totalOps) {
        bool progressed = false;
        for (int s = 0; s < p; ++s) {
            double bestReady = 0;
            while (next[std::size_t(s)] < orders[std::size_t(s)].size() && readyOf(s, bestReady)) {
                // Zero-bubble (Qi et al. 2024, ZB-H1 style): a deferred weight
                // gradient fills the gap while the stage waits for its input.
                if (zb && !pendingW[std::size_t(s)].empty() &&
                    freeAt[std::size_t(s)] +
                            dur(in.wgrad, s, pendingW[std::size_t(s)].front().chunk) <=
                        bestReady) {
                    runW(s);
                    continue;
                }
                const double bestStart = std::max(freeAt[std::size_t(s)], bestReady);
                progressed = true;
                const IssuedOp& op = orders[std::size_t(s)][next[std::size_t(s)]];
                const int vs = op.chunk * p + s;
                const double d = op.forward ? dur(in.fwd, s, op.chunk) : dur(in.bwd, s, op.chunk);
                const double start = bestStart;
                const double end = start + d;
                freeAt[std::size_t(s)] = end;
                r.busy_s[std::size_t(s)] += d;
                const double act =
                    in.activation_bytes.empty() ? 0.0 : dur(in.activation_bytes, s, op.chunk);
                if (op.forward) {
                    fEnd[at(vs, op.microbatch)] = end;
                    alive[std::size_t(s)] += act;
                    ++aliveCount[std::size_t(s)];
                    r.peak_activation_bytes[std::size_t(s)] =
                        std::max(r.peak_activation_bytes[std::size_t(s)], alive[std::size_t(s)]);
                    r.peak_in_flight[std::size_t(s)] =
                        std::max(r.peak_in_flight[std::size_t(s)], aliveCount[std::size_t(s)]);
                    if (in.record) {
                        r.ops.push_back(
                            {OpKind::Forward, s, op.chunk, op.microbatch, start, end, false, 0});
                        if (vs < V - 1) {
                            const double t = in.p2p_fwd[std::size_t(vs)];
                            r.ops.push_back({OpKind::SendForward, s, op.chunk, op.microbatch, end,
                                             end + t, in.p2p_cross[std::size_t(vs)] != 0, 0});
                        }
                    }
                } else {
                    bEnd[at(vs, op.microbatch)] = end;
                    alive[std::size_t(s)] -= act;
                    --aliveCount[std::size_t(s)];
                    if (op.microbatch == m - 1)
                        r.last_bwd_start_s[std::size_t(s)] =
                            std::min(r.last_bwd_start_s[std::size_t(s)], start);
                    if (in.record) {
                        r.ops.push_back(
                            {OpKind::Backward, s, op.chunk, op.microbatch, start, end, false, 0});
                        if (vs > 0) {
                            const double t = in.p2p_bwd[std::size_t(vs - 1)];
                            r.ops.push_back({OpKind::SendBackward, s, op.chunk, op.microbatch, end,
                                             end + t, in.p2p_cross[std::size_t(vs - 1)] != 0, 0});
                        }
                    }
                    if (zb)
                        pendingW[std::size_t(s)].push_back({op.chunk, op.microbatch});
                }
                ++next[std::size_t(s)];
                ++done;
                // A stage with nothing left to issue drains its weight gradients.
                if (zb && next[std::size_t(s)] >= orders[std::size_t(s)].size())
                    while (!pendingW[std::size_t(s)].empty())
                        runW(s);
            }
        }
        if (!progressed) {
            r.ok = false; // no op can run: the order is inconsistent
            break;
        }
    }
    for (int s = 0; s < p; ++s) {
        r.end_s[std::size_t(s)] = freeAt[std::size_t(s)];
        r.makespan_s = std::max(r.makespan_s, freeAt[std::size_t(s)]);
        if (!std::isfinite(r.last_bwd_start_s[std::size_t(s)]))
            r.last_bwd_start_s[std::size_t(s)] = freeAt[std::size_t(s)];
    }
    return r;
}

} // namespace sa

#include "cost/schedule.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace sa {

namespace {

// Appends one stage's issue order to `out`; returns its warm-up forwards
// (the rest alternate forward, backward until the cool-down's backwards).
int appendStageOrder(std::vector<IssuedOp>& out, ScheduleKind kind, int p, int v, int m, int s,
                     int extraWarmup) {
    if (kind == ScheduleKind::GPipe) {
        // Huang et al. 2019: all forwards, then all backwards.
        for (int c = 0; c < v; ++c)
            for (int i = 0; i < m; ++i)
                out.push_back({true, c, i});
        for (int c = v - 1; c >= 0; --c)
            for (int i = 0; i < m; ++i)
                out.push_back({false, c, i});
        return m * v;
    }
    const int total = m * v;
    int warm = warmupForwards(p, v, m, s);
    warm = std::clamp(warm + std::max(0, extraWarmup), 0, total);
    // With m not a multiple of p the grouped order would name microbatches
    // past m; fall back to chunk-major order for those (still valid): all
    // forwards first, as the grouped warm-up count does not fit this order
    // and a full warm-up can never deadlock.
    const bool chunkMajor = m % p != 0 && v > 1;
    if (chunkMajor)
        warm = total;
    // Megatron-LM's interleaved order (Narayanan et al. 2021, Sec. 2.2):
    // microbatches go through the chunks in groups of p. With v = 1 this is
    // plain 1F1B (PipeDream-Flush). The k-th forward is chunk (k / p) % v of
    // microbatch (k / (p v)) p + k % p; the k-th backward walks the chunks
    // in reverse. Walked with counters rather than divisions.
    struct Walk {
        int p, v;
        bool chunkMajor, forward;
        // Grouped: k % p, (k / p) % v, k / (p v). Chunk-major: k % v, k / v.
        int r = 0, q = 0, g = 0;
        IssuedOp op() const {
            if (chunkMajor)
                return {forward, forward ? r : v - 1 - r, g};
            return {forward, forward ? q : v - 1 - q, g * p + r};
        }
        void advance() {
            if (chunkMajor) {
                if (++r == v) {
                    r = 0;
                    ++g;
                }
                return;
            }
            if (++r == p) {
                r = 0;
                if (++q == v) {
                    q = 0;
                    ++g;
                }
            }
        }
    };
    Walk f{p, v, chunkMajor, true}, b{p, v, chunkMajor, false};
    for (int k = 0; k < warm; ++k, f.advance())
        out.push_back(f.op());
    for (int k = 0; k < total - warm; ++k, f.advance(), b.advance()) {
        out.push_back(f.op());
        out.push_back(b.op());
    }
    for (int k = total - warm; k < total; ++k, b.advance())
        out.push_back(b.op());
    return warm;
}

} // namespace

int warmupForwards(int p, int v, int m, int s) {
    return v == 1 ? std::min(p - s - 1, m) : std::min((p - s - 1) * 2 + (v - 1) * p, m * v);
}

std::vector<IssuedOp> stageOrder(ScheduleKind kind, int p, int v, int m, int s, int extraWarmup) {
    std::vector<IssuedOp> out;
    out.reserve(std::size_t(std::max(0, 2 * m * v)));
    appendStageOrder(out, kind, p, v, m, s, extraWarmup);
    return out;
}

PipelineResult simulatePipeline(const PipelineInput& in) {
    PipelineResult r;
    PipelineScratch scratch;
    simulatePipeline(in, r, scratch);
    return r;
}

namespace {

void resetResult(PipelineResult& r, std::size_t np) {
    r.makespan_s = 0;
    r.ok = true;
    r.busy_s.assign(np, 0);
    r.end_s.assign(np, 0);
    r.last_bwd_start_s.assign(np, std::numeric_limits<double>::infinity());
    r.first_bwd_start_s.assign(np, std::numeric_limits<double>::infinity());
    r.peak_activation_bytes.assign(np, 0);
    r.peak_in_flight.assign(np, 0);
    r.ops.clear();
}

// The issue orders depend on the schedule's shape only: kept from the
// previous call when it had the same.
void prepareOrders(const PipelineInput& in, PipelineScratch& sc, int p, int v, int m) {
    if (sc.ordersValid && sc.kind == in.kind && sc.stages == p && sc.chunks == v &&
        sc.microbatches == m && sc.extraWarmup == in.extra_warmup)
        return;
    const std::size_t np = std::size_t(p);
    sc.orders.clear();
    sc.orderBegin.resize(np + 1);
    sc.steadyBegin.resize(np);
    sc.steadyEnd.resize(np);
    for (int s = 0; s < p; ++s) {
        const std::size_t begin = sc.orders.size();
        sc.orderBegin[std::size_t(s)] = begin;
        const int warm =
            appendStageOrder(sc.orders, in.kind, p, v, m, s,
                             in.extra_warmup.empty() ? 0 : in.extra_warmup[std::size_t(s)]);
        sc.steadyBegin[std::size_t(s)] = begin + std::size_t(warm);
        sc.steadyEnd[std::size_t(s)] = sc.orders.size() - std::size_t(warm);
    }
    sc.orderBegin[np] = sc.orders.size();
    sc.kind = in.kind;
    sc.stages = p;
    sc.chunks = v;
    sc.microbatches = m;
    sc.extraWarmup = in.extra_warmup;
    sc.ordersValid = true;
}

// Per-op state (ends of every forward and backward), per-stage state, the
// weight-gradient FIFOs and the flat per-(stage, chunk) costs.
void prepareBuffers(const PipelineInput& in, PipelineScratch& sc, int p, int v, int m, bool zb) {
    const std::size_t np = std::size_t(p);
    const double unset = -1.0;
    sc.fEnd.assign(std::size_t(p * v) * m, unset);
    sc.bEnd.assign(std::size_t(p * v) * m, unset);
    sc.next.assign(sc.orderBegin.begin(), sc.orderBegin.end() - 1);
    sc.freeAt.assign(np, 0);
    sc.alive.assign(np, 0);
    sc.aliveCount.assign(np, 0);
    // Deferred weight gradients: a FIFO per stage (each stage defers at most
    // one per backward, m * v in all).
    const std::size_t wPerStage = std::size_t(m) * std::size_t(v);
    if (zb) {
        sc.pendingW.resize(np * wPerStage);
        sc.wHead.resize(np);
        sc.wTail.resize(np);
        for (std::size_t s = 0; s < np; ++s)
            sc.wHead[s] = sc.wTail[s] = s * wPerStage;
    }
    sc.costs.resize(np * std::size_t(v));
    for (int s = 0; s < p; ++s)
        for (int c = 0; c < v; ++c) {
            sc.costs[std::size_t(s) * v + c] = {
                in.at(in.fwd, s, c), in.at(in.bwd, s, c), in.at(in.wgrad, s, c),
                in.at(in.activation_bytes, s, c), zb ? in.at(in.wgrad_held_bytes, s, c) : 0.0};
        }
    // 1F1B keeps at most its warm-up plus one microbatch alive per chunk:
    // what zero-bubble (ZB-H1) may not exceed with its pending weight
    // gradients' held bytes (one chunk per stage in this schedule).
    sc.aliveLimit.assign(np, 0.0);
    if (zb)
        for (int s = 0; s < p; ++s) {
            const int extra =
                in.extra_warmup.empty() ? 0 : std::max(0, in.extra_warmup[std::size_t(s)]);
            const int inFlight = std::min(m, std::min(p - s - 1, m) + extra + 1);
            sc.aliveLimit[std::size_t(s)] = inFlight * sc.costs[std::size_t(s) * v].activation;
        }
}

// One simulation's state as flat arrays, compiled once per (timeline
// recorded, zero-bubble, blocking P2P) so the inner loop carries none of
// these tests.
template <bool record, bool zb, bool blocking> struct Simulation {
    const PipelineInput& in;
    PipelineResult& r;
    int p, v, m, V;
    // Blocking P2P under interleaving: Megatron's steady-state exchange after
    // each forward-backward pair (see advance).
    bool exchange;
    const IssuedOp* orders;
    const std::size_t* orderEnd;
    const std::size_t *steadyBegin, *steadyEnd;
    double *fEnd, *bEnd, *freeAt, *alive;
    std::size_t* next;
    int* aliveCount;
    PipelineScratch::PendingW* pendingW;
    std::size_t *wHead, *wTail;
    const PipelineScratch::Cost* costs;
    const double* aliveLimit;
    const double *p2pFwd, *p2pBwd;
    double *busy, *peakAct, *lastBwdStart, *firstBwdStart;
    int* peakInFlight;

    Simulation(const PipelineInput& input, PipelineResult& result, PipelineScratch& sc, int stages,
               int chunks, int microbatches)
        : in(input)
        , r(result)
        , p(stages)
        , v(chunks)
        , m(microbatches)
        , V(stages * chunks)
        , exchange(blocking && !zb && chunks > 1)
        , orders(sc.orders.data())
        , orderEnd(sc.orderBegin.data() + 1)
        , steadyBegin(sc.steadyBegin.data())
        , steadyEnd(sc.steadyEnd.data())
        , fEnd(sc.fEnd.data())
        , bEnd(sc.bEnd.data())
        , freeAt(sc.freeAt.data())
        , alive(sc.alive.data())
        , next(sc.next.data())
        , aliveCount(sc.aliveCount.data())
        , pendingW(sc.pendingW.data())
        , wHead(sc.wHead.data())
        , wTail(sc.wTail.data())
        , costs(sc.costs.data())
        , aliveLimit(sc.aliveLimit.data())
        , p2pFwd(input.p2p_fwd.data())
        , p2pBwd(input.p2p_bwd.data())
        , busy(result.busy_s.data())
        , peakAct(result.peak_activation_bytes.data())
        , lastBwdStart(result.last_bwd_start_s.data())
        , firstBwdStart(result.first_bwd_start_s.data())
        , peakInFlight(result.peak_in_flight.data()) {}

    std::size_t at(int vs, int mb) const { return std::size_t(vs) * m + mb; }

    // Runs stage s's next deferred weight gradient from `free` on.
    void runW(int s, double& free) {
        const PipelineScratch::PendingW w = pendingW[wHead[s]++];
        const PipelineScratch::Cost& c = costs[std::size_t(s) * v + w.chunk];
        const double d = c.wgrad;
        const double start = free;
        free = start + d;
        busy[s] += d;
        alive[s] -= c.held;
        if constexpr (record)
            r.ops.push_back({OpKind::WeightGrad, s, w.chunk, w.mb, start, start + d, false, 0});
    }

    // When op's input is ready, or a negative time if it has not arrived.
    double readyAt(const IssuedOp& op, int vs) const {
        if (op.forward) {
            if (vs == 0)
                return 0;
            const double e = fEnd[at(vs - 1, op.microbatch)];
            return e < 0 ? -1 : e + p2pFwd[vs - 1];
        }
        const double e =
            vs == V - 1 ? fEnd[at(vs, op.microbatch)] : bEnd[at(vs + 1, op.microbatch)];
        if (e < 0)
            return -1;
        return vs == V - 1 ? e : e + p2pBwd[vs];
    }

    // P2P time of what `op` sends when it ends (nothing past the pipeline's ends).
    double sendTime(const IssuedOp& op, int vs) const {
        if (op.forward)
            return vs < V - 1 ? p2pFwd[vs] : 0.0;
        return vs > 0 ? p2pBwd[vs - 1] : 0.0;
    }

    void recordSendForward(int s, int chunk, int mb, int vs, double at) {
        r.ops.push_back({OpKind::SendForward, s, chunk, mb, at, at + p2pFwd[vs],
                         in.p2p_cross[std::size_t(vs)] != 0, 0});
    }

    // `deferSend`: the forward's output leaves later (blocking interleaved
    // exchange), so its receiver does not see it yet.
    void finish(const IssuedOp& op, int s, int vs, double start, double end,
                const PipelineScratch::Cost& c, bool deferSend) {
        if (op.forward) {
            if (!deferSend)
                fEnd[at(vs, op.microbatch)] = end;
            alive[s] += c.activation;
            ++aliveCount[s];
            peakAct[s] = std::max(peakAct[s], alive[s]);
            peakInFlight[s] = std::max(peakInFlight[s], aliveCount[s]);
            if constexpr (record) {
                r.ops.push_back(
                    {OpKind::Forward, s, op.chunk, op.microbatch, start, end, false, 0});
                if (vs < V - 1 && !deferSend)
                    recordSendForward(s, op.chunk, op.microbatch, vs, end);
            }
            return;
        }
        bEnd[at(vs, op.microbatch)] = end;
        alive[s] -= c.activation - c.held; // a deferred W keeps `held` (0 unless zero-bubble)
        --aliveCount[s];
        if (op.microbatch == m - 1)
            lastBwdStart[s] = std::min(lastBwdStart[s], start);
        firstBwdStart[s] = std::min(firstBwdStart[s], start);
        if constexpr (record) {
            r.ops.push_back({OpKind::Backward, s, op.chunk, op.microbatch, start, end, false, 0});
            if (vs > 0)
                r.ops.push_back({OpKind::SendBackward, s, op.chunk, op.microbatch, end,
                                 end + p2pBwd[vs - 1], in.p2p_cross[std::size_t(vs - 1)] != 0, 0});
        }
        if constexpr (zb)
            pendingW[wTail[s]++] = {op.chunk, op.microbatch};
    }

    // Issues stage s's ops as far as their inputs allow; returns how many.
    std::size_t advance(int s) {
        const PipelineScratch::Cost* cost = costs + std::size_t(s) * v;
        std::size_t k = next[s];
        const std::size_t kEnd = orderEnd[s];
        double free = freeAt[s];
        const std::size_t k0 = k;
        // The forward whose output waits for the backward after it (exchange).
        int heldVs = -1, heldChunk = 0, heldMb = 0;
        while (k < kEnd) {
            const IssuedOp op = orders[k];
            const int vs = op.chunk * p + s;
            double ready = readyAt(op, vs);
            if (ready < 0)
                break;
            // Megatron's interleaved schedule without P2P overlap (schedules.py
            // forward_backward_pipelining_with_interleaving, steady state):
            // forward, backward, then one send_forward_backward_recv_forward_
            // backward that sends both outputs and receives the next
            // forward's input and the next backward's gradient, waiting for
            // all four. So a steady-state forward starts only when the
            // gradient of the backward after it has arrived too (none comes
            // to the last virtual stage, whose loss starts it), and its output
            // leaves when that backward ends. (With every microbatch in the
            // warm-up there is no steady state: each op sends on its own.)
            bool paired = false;
            if constexpr (blocking) {
                if (exchange && op.forward && k >= steadyBegin[s] && k < steadyEnd[s]) {
                    paired = true;
                    const IssuedOp& following = orders[k + 1];
                    const int followingVs = following.chunk * p + s;
                    if (followingVs < V - 1) {
                        const double gradReady = readyAt(following, followingVs);
                        if (gradReady < 0)
                            break;
                        ready = std::max(ready, gradReady);
                    }
                }
            }
            // Zero-bubble (Qi et al. 2024, ZB-H1): a deferred weight gradient
            // fills the gap while the stage waits for its input.
            if (zb && wHead[s] != wTail[s] &&
                free + cost[pendingW[wHead[s]].chunk].wgrad <= ready) {
                runW(s, free);
                continue;
            }
            // ZB-H1: no forward past 1F1B's memory while weight gradients wait.
            if (zb && op.forward && wHead[s] != wTail[s] &&
                alive[s] + cost[op.chunk].activation > aliveLimit[s] * (1 + 1e-9)) {
                runW(s, free);
                continue;
            }
            const PipelineScratch::Cost& c = cost[op.chunk];
            const double d = op.forward ? c.fwd : c.bwd;
            const double start = std::max(free, ready);
            const double end = start + d;
            free = end;
            busy[s] += d;
            const bool hold = paired && vs < V - 1;
            finish(op, s, vs, start, end, c, hold);
            if constexpr (blocking) {
                if (hold) {
                    heldVs = vs;
                    heldChunk = op.chunk;
                    heldMb = op.microbatch;
                } else {
                    // The stage waits for its send (p2p_communication.py
                    // _communicate: req.wait() on every request).
                    double wait = sendTime(op, vs);
                    if (heldVs >= 0) { // the exchange: both outputs leave now, side by side
                        fEnd[at(heldVs, heldMb)] = end;
                        wait = std::max(wait, p2pFwd[heldVs]);
                        if constexpr (record)
                            recordSendForward(s, heldChunk, heldMb, heldVs, end);
                        heldVs = -1;
                    }
                    free = end + wait;
                }
            }
            ++k;
            // A stage with nothing left to issue drains its weight gradients.
            if (zb && k >= kEnd)
                while (wHead[s] != wTail[s])
                    runW(s, free);
        }
        // A held forward's backward is always ready: its gradient was waited for.
        assert(heldVs < 0);
        next[s] = k;
        freeAt[s] = free;
        return k - k0;
    }
};

template <bool record, bool zb, bool blocking>
void simulate(const PipelineInput& in, PipelineResult& r, PipelineScratch& sc) {
    const int p = std::max(1, in.stages);
    const int v = std::max(1, in.chunks);
    const int m = std::max(1, in.microbatches);
    resetResult(r, std::size_t(p));
    prepareOrders(in, sc, p, v, m);
    const std::size_t totalOps = sc.orders.size();
    if constexpr (record)
        r.ops.reserve(totalOps * (zb ? 3 : 2) / 2 + totalOps);
    prepareBuffers(in, sc, p, v, m, zb);
    Simulation<record, zb, blocking> sim(in, r, sc, p, v, m);

    // When an op can start depends only on its stage's previous op and on
    // its input, so stages can be advanced in any order: sweep them round
    // robin, each as far as its inputs allow (O(ops + sweeps * stages)).
    std::size_t done = 0;
    while (done < totalOps) {
        std::size_t issued = 0;
        for (int s = 0; s < p; ++s)
            issued += sim.advance(s);
        if (issued == 0) {
            r.ok = false; // no op can run: the order is inconsistent
            break;
        }
        done += issued;
    }
    for (int s = 0; s < p; ++s) {
        r.end_s[std::size_t(s)] = sc.freeAt[std::size_t(s)];
        r.makespan_s = std::max(r.makespan_s, sc.freeAt[std::size_t(s)]);
        if (!std::isfinite(r.last_bwd_start_s[std::size_t(s)]))
            r.last_bwd_start_s[std::size_t(s)] = sc.freeAt[std::size_t(s)];
        if (!std::isfinite(r.first_bwd_start_s[std::size_t(s)]))
            r.first_bwd_start_s[std::size_t(s)] = sc.freeAt[std::size_t(s)];
    }
}

template <bool record>
void simulateRecorded(const PipelineInput& in, PipelineResult& r, PipelineScratch& sc) {
    const bool zb = in.kind == ScheduleKind::ZeroBubble;
    if (in.blocking_p2p)
        zb ? simulate<record, true, true>(in, r, sc) : simulate<record, false, true>(in, r, sc);
    else
        zb ? simulate<record, true, false>(in, r, sc) : simulate<record, false, false>(in, r, sc);
}

} // namespace

void simulatePipeline(const PipelineInput& in, PipelineResult& r, PipelineScratch& sc) {
    if (in.record)
        simulateRecorded<true>(in, r, sc);
    else
        simulateRecorded<false>(in, r, sc);
}

} // namespace sa

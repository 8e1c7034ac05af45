#include "explore/designspace.h"

#include "cost/compute.h"
#include "cost/memory.h"
#include "cost/network.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <set>

namespace sa {

namespace {

// A margin so that the lower bound stays below the cost model's figure
// (core/cost/memory.h).
constexpr double kLowerBoundMargin = 0.97;
// Explicit placements per structure, so that a cluster with many buildings
// cannot blow up one axis.
constexpr std::size_t kMaxExplicitDefault = 48;
constexpr std::size_t kMaxExplicitFull = 512;

std::vector<int> divisorsOf(std::int64_t n, std::int64_t limit) {
    std::vector<int> out;
    for (std::int64_t d = 1; d <= std::min(n, limit); ++d)
        if (n % d == 0)
            out.push_back(int(d));
    return out;
}

bool isSmooth(int p) { // 2^a * 3^b
    while (p % 2 == 0)
        p /= 2;
    while (p % 3 == 0)
        p /= 3;
    return p == 1;
}

template <class T> void pushUnique(std::vector<T>& v, const T& x) {
    if (std::find(v.begin(), v.end(), x) == v.end())
        v.push_back(x);
}

template <class T> std::vector<T> withBaseFirst(const T& base, const std::vector<T>& rest) {
    std::vector<T> out{base};
    for (const T& x : rest)
        pushUnique(out, x);
    return out;
}

std::string linkNameOf(const Link& l) {
    return l.name.empty() ? l.a + "-" + l.b : l.name;
}

// Largest remainder split of `total` in proportion to `weights` (ties to
// the lower index).
std::vector<int> proportional(int total, const std::vector<double>& weights) {
    std::vector<int> out(weights.size(), 0);
    const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    if (sum <= 0 || weights.empty())
        return out;
    std::vector<std::pair<double, std::size_t>> rem;
    int given = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        const double exact = total * weights[i] / sum;
        out[i] = int(std::floor(exact));
        given += out[i];
        rem.push_back({exact - out[i], i});
    }
    std::stable_sort(rem.begin(), rem.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t k = 0; given < total && k < rem.size(); ++k, ++given)
        ++out[rem[k].second];
    return out;
}

// Parameters of one layer held by one GPU: the cost model's count
// (core/cost/compute.cpp) without the terms that only grow it.
double layerParamsLowerBound(const Model& m, int tp, int ep, bool moeLayer) {
    const double h = double(m.hidden);
    double p = m.attentionParams(tp);
    const double gated = m.mlp == MlpKind::SwiGlu ? 3.0 : 2.0;
    if (moeLayer && m.moe) {
        p += double(m.moe->experts) / ep * gated * h * double(m.moe->expert_ffn_hidden) / tp;
        p += h * m.moe->experts;
        p += gated * h * double(m.moe->expert_ffn_hidden) * m.moe->shared_experts / tp;
    } else {
        p += gated * h * double(m.ffn_hidden) / tp;
    }
    return p + 2.0 * h;
}

std::string scheduleLabel(const Schedule& s) {
    std::string out = toString(s.kind);
    if (s.kind == ScheduleKind::Interleaved)
        out += " v" + std::to_string(s.virtual_stages);
    if (s.latency_hiding)
        out += " latency-aware";
    return out;
}

std::vector<Dim> dpAcrossOrder() {
    return {Dim::TP, Dim::CP, Dim::PP, Dim::DP};
}
std::vector<Dim> ppAcrossOrder() {
    return {Dim::TP, Dim::CP, Dim::DP, Dim::PP};
}

// The rank orders: the default fill of GPUs building by building.
void addRankOrderPlacements(std::vector<PlacementChoice>& out, const Parallelism& par,
                            const std::vector<Dim>& baseOrder) {
    PlacementChoice a{"dp-across", dpAcrossOrder(), {}, {}};
    PlacementChoice b{"pp-across", ppAcrossOrder(), {}, {}};
    // The base plan's order first when PP is outside DP there.
    auto pos = [&](Dim d) {
        return std::find(baseOrder.begin(), baseOrder.end(), d) - baseOrder.begin();
    };
    const bool basePpOuter = pos(Dim::PP) > pos(Dim::DP);
    // With one stage or one replica both orders fill the GPUs alike.
    const bool distinct = par.pp > 1 && par.dp > 1;
    if (basePpOuter && distinct) {
        out.push_back(b);
        out.push_back(a);
    } else {
        out.push_back(a);
        if (distinct)
            out.push_back(b);
    }
}

// The groups of buildings a chain of stages may run through: every building
// on its own, and the regions when they group the buildings (neither one
// region nor one per building).
std::vector<std::vector<std::vector<int>>> buildingGroupings(const Cluster& cluster) {
    const std::size_t nb = cluster.buildings.size();
    std::vector<std::vector<std::vector<int>>> groupings;
    std::vector<std::vector<int>> byBuilding;
    for (std::size_t b = 0; b < nb; ++b)
        byBuilding.push_back({int(b)});
    groupings.push_back(byBuilding);
    std::vector<std::string> regions;
    std::vector<std::vector<int>> byRegion;
    for (std::size_t b = 0; b < nb; ++b) {
        const std::string& r = cluster.buildings[b].region;
        auto it = std::find(regions.begin(), regions.end(), r);
        if (it == regions.end()) {
            regions.push_back(r);
            byRegion.push_back({int(b)});
        } else {
            byRegion[std::size_t(it - regions.begin())].push_back(int(b));
        }
    }
    if (byRegion.size() > 1 && byRegion.size() < nb)
        groupings.push_back(byRegion);
    return groupings;
}

// Compute speed of each building relative to the fastest (1 = fastest), for
// the balanced layer split.
std::vector<double> relativeSpeeds(const Cluster& cluster) {
    const std::size_t nb = cluster.buildings.size();
    std::vector<double> speed(nb, 1.0);
    double fastest = 0;
    for (std::size_t b = 0; b < nb; ++b) {
        const GpuModel* g = cluster.gpuOf(cluster.buildings[b]);
        speed[b] = g ? g->peak_tflops_bf16 * g->gemm_efficiency * powerClockFactor(*g) : 1.0;
        fastest = std::max(fastest, speed[b]);
    }
    for (double& s : speed)
        s = fastest > 0 ? s / fastest : 1.0;
    return speed;
}

// A split of pp stages over a chain gives every group at least one stage
// and no more than it can hold.
bool isValidSplit(const std::vector<int>& n, const std::vector<int>& room, int pp) {
    for (std::size_t i = 0; i < n.size(); ++i)
        if (n[i] < 1 || n[i] > room[i])
            return false;
    return std::accumulate(n.begin(), n.end(), 0) == pp;
}

// Proportional to each group's room, with at least one stage each.
std::vector<int> proportionalSplit(const std::vector<int>& room, int pp) {
    std::vector<int> n(room.size(), 1);
    std::vector<double> extraRoom;
    for (std::size_t i = 0; i < room.size(); ++i)
        extraRoom.push_back(std::max(0.0, double(room[i]) - 1));
    const auto extra = proportional(pp - int(room.size()), extraRoom);
    for (std::size_t i = 0; i < n.size(); ++i)
        n[i] += extra[i];
    return n;
}

// Fill each group in turn, as the prior art does.
std::vector<int> greedySplit(const std::vector<int>& room, int pp) {
    std::vector<int> g(room.size(), 1);
    int left = pp - int(room.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
        const int take = std::min(left, room[i] - 1);
        g[i] += take;
        left -= take;
    }
    return g;
}

// Every composition of pp into the chain's groups, in lexicographic order,
// until there are more than `limit` splits.
void addCompositions(std::vector<std::vector<int>>& splits, const std::vector<int>& room, int pp,
                     std::size_t limit) {
    std::vector<int> n(room.size(), 1);
    // Odometer over compositions.
    std::function<void(std::size_t, int)> rec = [&](std::size_t i, int left) {
        if (splits.size() > limit)
            return;
        if (i + 1 == n.size()) {
            n[i] = left;
            if (isValidSplit(n, room, pp))
                pushUnique(splits, n);
            return;
        }
        for (int x = 1; x <= left - int(n.size() - i - 1); ++x) {
            n[i] = x;
            rec(i + 1, left - x);
        }
    };
    rec(0, pp);
}

// Splits of pp over a chain whose groups hold at most room[i] stages:
// proportional to capacity, greedy, and in the full space every composition.
std::vector<std::vector<int>> stageSplits(const std::vector<int>& room, int pp, bool full,
                                          std::size_t limit) {
    std::vector<std::vector<int>> splits;
    const std::vector<int> prop = proportionalSplit(room, pp);
    if (isValidSplit(prop, room, pp))
        splits.push_back(prop);
    const std::vector<int> greedy = greedySplit(room, pp);
    if (isValidSplit(greedy, room, pp))
        pushUnique(splits, greedy);
    // C(pp-1, k-1) compositions: only where that stays small.
    double compositions = 1;
    for (std::size_t i = 1; i < room.size(); ++i)
        compositions = compositions * double(pp - int(i)) / double(i);
    if (full && compositions <= 20000)
        addCompositions(splits, room, pp, limit);
    return splits;
}

// Explicit placements of whole stages: groups of buildings in a chain, each
// holding a run of stages; the replicas of a stage are split over the
// buildings of its group in proportion to their GPUs. At most `limit` of
// them, each distinct.
class StagePlacements {
public:
    StagePlacements(const Cluster& cluster, const Parallelism& par, bool full, std::size_t limit,
                    std::vector<PlacementChoice>& out)
        : cluster_(cluster)
        , par_(par)
        , full_(full)
        , limit_(limit)
        , speed_(relativeSpeeds(cluster))
        , out_(out) {
        const std::int64_t cell = std::int64_t(par.tp) * par.cp;
        for (const Building& b : cluster.buildings)
            capCells_.push_back(b.gpus / cell);
    }

    // Subsets of groups in every order (a chain and its reverse are the
    // same placement up to stage numbering: keep first < last). Beyond six
    // groups only the chain of all of them in cluster order.
    void addGrouping(const std::vector<std::vector<int>>& groups) {
        const bool regional = groups.size() < cluster_.buildings.size();
        const std::size_t k = groups.size();
        if (k > 31)
            return; // the rank orders remain
        const Capacity cap = capacityOf(groups);
        const bool everyOrder = k <= 6;
        const std::uint32_t all = (1u << k) - 1;
        for (std::uint32_t mask = everyOrder ? 1 : all; mask <= all && added_ < limit_; ++mask) {
            std::vector<int> subset;
            for (std::size_t g = 0; g < k; ++g)
                if (mask & (1u << g))
                    subset.push_back(int(g));
            if (int(subset.size()) > par_.pp)
                continue;
            int capacity = 0;
            for (int g : subset)
                capacity += cap.maxStages[std::size_t(g)];
            if (capacity < par_.pp)
                continue;
            std::vector<int> order = subset;
            do {
                if (order.size() <= 1 || order.front() <= order.back())
                    addChain(groups, cap, order, regional);
            } while (everyOrder && added_ < limit_ &&
                     std::next_permutation(order.begin(), order.end()));
        }
    }

private:
    // Per group: the replicas of a stage on each of its buildings, and the
    // most stages the group can hold at that share.
    struct Capacity {
        std::vector<std::vector<int>> share;
        std::vector<int> maxStages;
    };

    Capacity capacityOf(const std::vector<std::vector<int>>& groups) const {
        const std::size_t k = groups.size();
        Capacity cap{std::vector<std::vector<int>>(k), std::vector<int>(k, 0)};
        for (std::size_t g = 0; g < k; ++g) {
            std::vector<double> w;
            for (int b : groups[g])
                w.push_back(double(capCells_[std::size_t(b)]));
            cap.share[g] = proportional(par_.dp, w);
            std::int64_t m = -1;
            for (std::size_t i = 0; i < groups[g].size(); ++i)
                if (cap.share[g][i] > 0) {
                    const std::int64_t fit = capCells_[std::size_t(groups[g][i])] / cap.share[g][i];
                    m = m < 0 ? fit : std::min(m, fit);
                }
            cap.maxStages[g] = int(std::clamp<std::int64_t>(m, 0, par_.pp));
        }
        return cap;
    }

    void addChain(const std::vector<std::vector<int>>& groups, const Capacity& cap,
                  const std::vector<int>& order, bool regional) {
        std::vector<int> room;
        for (int g : order)
            room.push_back(cap.maxStages[std::size_t(g)]);
        for (const auto& n : stageSplits(room, par_.pp, full_, limit_)) {
            if (added_ >= limit_)
                break;
            PlacementChoice pc = placementOf(groups, cap, order, n, regional);
            // Another grouping can give the same runs (a region of one
            // building is that building).
            auto id = std::make_pair(pc.rank_order, pc.runs);
            if (std::find(seen_.begin(), seen_.end(), id) != seen_.end())
                continue;
            seen_.push_back(std::move(id));
            out_.push_back(std::move(pc));
            ++added_;
        }
    }

    // Group order[i] holds the next n[i] stages.
    PlacementChoice placementOf(const std::vector<std::vector<int>>& groups, const Capacity& cap,
                                const std::vector<int>& order, const std::vector<int>& n,
                                bool regional) const {
        PlacementChoice pc;
        pc.rank_order = ppAcrossOrder();
        pc.label = regional ? "regions" : "stages";
        pc.stage_speed.assign(std::size_t(par_.pp), 1.0);
        int s0 = 0;
        for (std::size_t i = 0; i < order.size(); ++i) {
            const auto& grp = groups[std::size_t(order[i])];
            const auto& sh = cap.share[std::size_t(order[i])];
            const int s1 = s0 + n[i] - 1;
            int r0 = 0;
            double slow = 1.0;
            std::string names;
            for (std::size_t j = 0; j < grp.size(); ++j) {
                if (sh[j] == 0)
                    continue;
                const Building& bld = cluster_.buildings[std::size_t(grp[j])];
                pc.runs.push_back({s0, s1, r0, r0 + sh[j] - 1, bld.name});
                r0 += sh[j];
                slow = std::min(slow, speed_[std::size_t(grp[j])]);
                names += (names.empty() ? "" : "+") + bld.name;
            }
            for (int s = s0; s <= s1; ++s)
                pc.stage_speed[std::size_t(s)] = slow;
            pc.label += " " + names + ":" + std::to_string(n[i]);
            s0 = s1 + 1;
        }
        return pc;
    }

    const Cluster& cluster_;
    const Parallelism& par_;
    bool full_;
    std::size_t limit_;
    std::vector<double> speed_;          // per building, relative to the fastest
    std::vector<std::int64_t> capCells_; // tp*cp cells per building
    std::vector<PlacementChoice>& out_;
    std::size_t added_ = 0;
    std::vector<std::pair<std::vector<Dim>, std::vector<PlacementRun>>> seen_;
};

} // namespace

DesignSpace::DesignSpace(const Cluster& cluster, const Model& model, const Plan& base,
                         const DesignSpaceOptions& options)
    : cluster_(cluster)
    , model_(model)
    , base_(base) {
    budget_ = options.gpu_budget > 0        ? options.gpu_budget
              : base.parallelism.gpus() > 1 ? base.parallelism.gpus()
                                            : cluster.totalGpus();
    budget_ = std::min(budget_, cluster.totalGpus());
    maxMemoryGiB_ = 0;
    for (const auto& b : cluster_.buildings)
        if (const GpuModel* g = cluster_.gpuOf(b))
            maxMemoryGiB_ = std::max(maxMemoryGiB_, g->memory_gib);
    // Logits per token 2*V*h FLOPs vs a layer's 2*P + 2*s*h (causal
    // attention): the last stage's extra work in layer equivalents.
    {
        const double h = double(model.hidden);
        double active = layerParamsLowerBound(model, 1, 1, false);
        if (model.moe) {
            const double gated = model.mlp == MlpKind::SwiGlu ? 3.0 : 2.0;
            active = layerParamsLowerBound(model, 1, model.moe->experts, true) -
                     gated * h * double(model.moe->expert_ffn_hidden) +
                     gated * h * double(model.moe->expert_ffn_hidden) * model.moe->top_k;
        }
        const double perLayer = 2.0 * active + 2.0 * double(base.sequence_length) * h;
        logitsLayers_ = perLayer > 0 ? 2.0 * double(model.vocab) * h / perLayer : 0.0;
    }
    buildLinks(options);
    buildRoutings(options);
    buildOuterSyncs(options);
    buildStructures(options);
}

void DesignSpace::buildLinks(const DesignSpaceOptions& o) {
    if (!o.vary_links)
        return;
    std::vector<std::string> techs;
    for (const auto& [name, t] : cluster_.technologies)
        techs.push_back(name);
    for (const char* b : {"roce", "roce-long-haul", "tcp-multiflow"})
        pushUnique(techs, std::string(b));
    // The NCCL knob values to try (0: the technology's own).
    std::vector<double> buffsizes{0};
    for (double b : o.nccl_buffsize_mib)
        if (b > 0)
            pushUnique(buffsizes, b);
    std::vector<int> channels{0};
    for (int c : o.nccl_channels)
        if (c > 0)
            pushUnique(channels, c);
    for (const Link& l : cluster_.links) {
        if (int(links_.size()) >= o.max_link_axes)
            break;
        const std::string name = linkNameOf(l);
        const double rtt = 2.0 * l.latency_ms * 1e-3;
        // Choice 0: the base plan's setting (an override or the link as built).
        LinkChoice first;
        if (auto it = base_.link_technologies.find(name); it != base_.link_technologies.end())
            first.setting = it->second;
        // The profile a setting runs the link with, as the cost model applies it.
        auto effective = [&](const LinkOverride& s) {
            const std::string tech = s.technology.empty() ? l.technology : s.technology;
            std::optional<Technology> t = resolveTechnology(cluster_, tech);
            if (!t)
                return std::optional<Technology>{};
            applyLinkOverride(*t, s);
            t->name = tech;
            return t;
        };
        auto labelOf = [&](const LinkOverride& s) {
            const auto t = effective(s);
            std::string out = (t ? t->name : s.technology) + "x" + std::to_string(t ? t->flows : 1);
            if (s.buffsize_mib > 0) {
                char buf[32];
                std::snprintf(buf, sizeof buf, " buf%gMiB", s.buffsize_mib);
                out += buf;
            }
            if (s.nccl_channels > 0)
                out += " ch" + std::to_string(s.nccl_channels);
            return out;
        };
        std::vector<LinkChoice> choices;
        std::vector<Technology> seen;
        const auto& allowed = o.link_technologies;
        auto add = [&](LinkOverride s) {
            // The base plan's NCCL knobs on this link stay with its
            // technology where a choice does not set them itself.
            if (s.technology == first.setting.technology) {
                const LinkOverride& b = first.setting;
                if (s.nccl_channels == 0)
                    s.nccl_channels = b.nccl_channels;
                if (s.qps_per_connection == 0 && s.sockets_per_connection == 0) {
                    s.qps_per_connection = b.qps_per_connection;
                    s.sockets_per_connection = b.sockets_per_connection;
                }
                if (s.buffsize_mib == 0)
                    s.buffsize_mib = b.buffsize_mib;
            }
            if (!allowed.empty() &&
                std::find(allowed.begin(), allowed.end(), s.technology) == allowed.end())
                return;
            const auto t = effective(s);
            if (t && std::find(seen.begin(), seen.end(), *t) != seen.end())
                return; // the same transport as an earlier choice
            if (t)
                seen.push_back(*t);
            choices.push_back({s, labelOf(s)});
        };
        add(first.setting);
        for (const std::string& tech : techs) {
            const auto t = resolveTechnology(cluster_, tech);
            if (!t)
                continue;
            add({tech, 0});
            // More flows, larger NCCL buffers or more channels only matter
            // where one transfer is window or loss limited on this link.
            const double line = gbpsToBytesPerS(l.bandwidth_gbps) * t->efficiency;
            if (transferRateBps(*t, l.bandwidth_gbps, rtt) < 0.999 * line) {
                const int more = std::min(1024, std::max(2, t->flows) * 4);
                add({tech, more});
                for (double b : buffsizes)
                    for (int c : channels) {
                        if (b == 0 && c == 0)
                            continue;
                        // A profile without NCCL knobs keeps its flows
                        // (a knob alone would re-derive them from NCCL's
                        // defaults).
                        LinkOverride knob{tech, usesNcclKnobs(*t) ? 0 : t->flows};
                        knob.buffsize_mib = b;
                        knob.nccl_channels = c;
                        add(knob);
                    }
            }
        }
        // One choice is an axis too when it is not the base plan's setting
        // (a recipe that sets every link's technology).
        const bool fixedOther = choices.size() == 1 && !(choices[0].setting == first.setting);
        if (choices.size() > 1 || fixedOther) {
            linkNames_.push_back(name);
            links_.push_back(std::move(choices));
        }
    }
}

void DesignSpace::buildRoutings(const DesignSpaceOptions& o) {
    if (o.routings.empty())
        return;
    // Choice 0: the base plan's routing (absent: the cluster's).
    routings_.push_back(base_.routing);
    const Routing own = base_.routing ? *base_.routing : cluster_.routing;
    std::vector<Routing> seen{own};
    for (const Routing& r : o.routings) {
        if (std::find(seen.begin(), seen.end(), r) != seen.end())
            continue;
        seen.push_back(r);
        routings_.push_back(r == cluster_.routing ? std::nullopt : std::optional<Routing>(r));
    }
    if (routings_.size() < 2)
        routings_.clear(); // nothing to choose
}

void DesignSpace::buildOuterSyncs(const DesignSpaceOptions& o) {
    if (o.outer_syncs.empty())
        return;
    outerSyncs_.push_back(base_.outer_sync); // choice 0: the base plan's
    for (const std::optional<OuterSync>& x : o.outer_syncs)
        if (std::find(outerSyncs_.begin(), outerSyncs_.end(), x) == outerSyncs_.end())
            outerSyncs_.push_back(x);
    if (outerSyncs_.size() < 2)
        outerSyncs_.clear();
}

static std::string outerSyncLabel(const std::optional<OuterSync>& o) {
    if (!o)
        return "sync dp";
    std::string s = toString(o->method);
    if (o->method != OuterSyncMethod::Hsdp)
        s += " H" + std::to_string(o->inner_steps);
    if (o->method == OuterSyncMethod::StreamingDiloco)
        s += " F" + std::to_string(o->fragments);
    return s;
}

void DesignSpace::buildStructures(const DesignSpaceOptions& o) {
    const Degrees d = degrees(o);
    const bool isMoe = model_.moe.has_value();
    for (int tp : d.tp)
        for (int cp : d.cp)
            for (int pp : d.pp)
                for (int mb : d.micro_batch) {
                    if (const char* why = unfitDegrees(d, tp, cp, pp, mb)) {
                        pruneStructure(why);
                        continue;
                    }
                    const std::vector<int> dps = dpChoices(tp, cp, pp, mb);
                    if (dps.empty()) {
                        pruneStructure("tp*cp*pp exceeds the GPU budget");
                        continue;
                    }
                    for (int dp : dps)
                        for (int etp : etpChoices(tp, o))
                            for (int ep : epChoices(Parallelism{tp, cp, pp, dp, 1, etp}, o)) {
                                const Parallelism par{tp, cp, pp, dp, ep, etp};
                                if (ep > 1 && (!isMoe || model_.moe->experts % ep != 0 ||
                                               !par.expertGroupsFit())) {
                                    pruneStructure("ep does not divide the experts or fit the "
                                                   "cells and replicas");
                                    continue;
                                }
                                // Experts off TP only where EP takes the ranks.
                                if (etp > 0 && ep == 1)
                                    continue;
                                addStructure(par, mb, o);
                            }
                }
    const auto known = [this](const Parallelism& par, std::int64_t mb) {
        return std::any_of(structures_.begin(), structures_.end(), [&](const auto& a) {
            return a.structure.parallelism == par && a.structure.micro_batch == mb;
        });
    };
    // The lists leave the experts split over tp: a base plan whose experts
    // fold TP ranks (etp) gets its own structure beside its lists' one.
    if (Parallelism folded = base_.parallelism; folded.etp > 0) {
        Parallelism listed = folded;
        listed.etp = 0;
        if (known(listed, base_.micro_batch_sequences) &&
            !known(folded, base_.micro_batch_sequences))
            addStructure(folded, int(base_.micro_batch_sequences), o);
    }
    // The seeds' structures: a baseline's degrees may lie outside the lists.
    for (const Plan& seed : o.seeds) {
        const Parallelism& par = seed.parallelism;
        const auto mb = seed.micro_batch_sequences;
        const std::int64_t G = base_.global_batch_sequences;
        if (known(par, mb) || mb < 1 || par.dp < 1 || G % (mb * par.dp) != 0 ||
            par.gpus() > budget_ || unfitDegrees(d, par.tp, par.cp, par.pp, int(mb)))
            continue;
        addStructure(par, int(mb), o);
    }
}

DesignSpace::Degrees DesignSpace::degrees(const DesignSpaceOptions& o) const {
    const bool full = o.size == SpaceSize::Full;
    const Parallelism& bp = base_.parallelism;
    Degrees d;
    for (const auto& b : cluster_.buildings) {
        d.host_gcd = std::gcd(d.host_gcd, b.gpus_per_host);
        d.biggest_building = std::max(d.biggest_building, b.gpus);
    }
    // A derived list holds the base plan's own degree, so that the base
    // plan's structure is in the space even where it is an odd one.
    d.tp = o.tp;
    if (d.tp.empty()) {
        d.tp = divisorsOf(std::max(1, d.host_gcd), 1 << 20);
        pushUnique(d.tp, bp.tp);
    }
    d.cp = o.cp;
    if (d.cp.empty()) {
        d.cp = full ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1, 2};
        pushUnique(d.cp, bp.cp);
    }
    d.pp = o.pp;
    if (d.pp.empty()) {
        const int maxPp = full ? model_.layers : std::min(model_.layers, 32);
        for (int p = 1; p <= maxPp; ++p)
            if (model_.layers % p == 0 || isSmooth(p))
                d.pp.push_back(p);
        if (bp.pp <= model_.layers)
            pushUnique(d.pp, bp.pp);
    }
    d.micro_batch = o.micro_batch;
    if (d.micro_batch.empty()) {
        d.micro_batch = full ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1, 2};
        pushUnique(d.micro_batch, int(base_.micro_batch_sequences));
    }
    for (auto* v : {&d.tp, &d.cp, &d.pp, &d.micro_batch})
        std::sort(v->begin(), v->end());
    return d;
}

const char* DesignSpace::unfitDegrees(const Degrees& d, int tp, int cp, int pp, int mb) const {
    const std::int64_t seq = base_.sequence_length;
    if (tp < 1 || cp < 1 || pp < 1 || mb < 1)
        return "degree below 1";
    if (d.host_gcd % tp != 0)
        return "tp does not divide gpus_per_host";
    if (model_.heads % tp != 0 || model_.ffn_hidden % tp != 0 ||
        (model_.kv_heads % tp != 0 && tp % model_.kv_heads != 0) ||
        (model_.moe && model_.moe->expert_ffn_hidden % tp != 0))
        return "tp does not divide heads, kv_heads or ffn_hidden";
    if (seq % cp != 0 || (cp > 1 && seq % (2 * cp) != 0))
        return "cp does not divide the sequence into chunk pairs";
    if (std::int64_t(tp) * cp > d.biggest_building)
        return "a tp*cp cell is larger than a building";
    if (pp > model_.layers)
        return "pp exceeds the layers";
    if (base_.global_batch_sequences % mb != 0)
        return "micro batch does not divide the global batch";
    return nullptr;
}

std::vector<int> DesignSpace::dpChoices(int tp, int cp, int pp, int mb) const {
    const Parallelism& bp = base_.parallelism;
    const std::int64_t G = base_.global_batch_sequences;
    // One dp per (tp, cp, pp, micro batch): the largest that divides the
    // batch and fits the budget.
    const std::int64_t cellStage = std::int64_t(tp) * cp * pp;
    std::vector<int> dps;
    for (std::int64_t d = std::min<std::int64_t>(G / mb, budget_ / cellStage); d >= 1; --d)
        if ((G / mb) % d == 0) {
            dps.push_back(int(d));
            break;
        }
    // And the base plan's own, so that the base plan itself is in the space.
    if (tp == bp.tp && cp == bp.cp && pp == bp.pp && mb == base_.micro_batch_sequences &&
        bp.dp >= 1 && (G / mb) % bp.dp == 0 && cellStage * bp.dp <= cluster_.totalGpus())
        pushUnique(dps, bp.dp);
    return dps;
}

std::vector<int> DesignSpace::epChoices(const Parallelism& par, const DesignSpaceOptions& o) const {
    std::vector<int> eps = o.ep;
    if (eps.empty()) {
        eps = {1};
        // Up to the replicas' worth of groups (the cells' folded ranks x dp).
        if (model_.moe)
            for (int e : divisorsOf(model_.moe->experts,
                                    std::int64_t(par.dp) *
                                        (par.expertTp() < par.tp ? par.expertRanksPerCell() : 1)))
                pushUnique(eps, e);
    }
    return eps;
}

std::vector<int> DesignSpace::etpChoices(int tp, const DesignSpaceOptions& o) const {
    // 0: the experts split over tp. Derived: also each expert whole on one
    // rank (Megatron-Core's MoE parallel folding, --expert-tensor-parallel-
    // size 1) for MoE models under TP with sequence parallelism.
    std::vector<int> out;
    for (int e : o.etp.empty() ? std::vector<int>{0, 1} : o.etp) {
        const int v = e == tp ? 0 : e;
        if (v != 0 && (!model_.moe || !base_.sequence_parallel || v < 1 || v >= tp || tp % v != 0))
            continue;
        pushUnique(out, v);
    }
    if (out.empty())
        out.push_back(0);
    return out;
}

void DesignSpace::addStructure(const Parallelism& par, int mb, const DesignSpaceOptions& o) {
    StructureAxes s;
    s.structure.parallelism = par;
    s.structure.micro_batch = mb;
    s.structure.microbatches = base_.global_batch_sequences / (std::int64_t(mb) * par.dp);
    buildPlacements(s, o);
    if (s.placements.empty()) {
        pruneStructure("no placement fits the buildings");
        return;
    }
    buildSchedules(s, o);
    if (s.schedules.empty()) {
        pruneStructure("no schedule fits the microbatches");
        return;
    }
    buildMemoryAxes(s, o);
    s.layers = {LayerSplit::Even};
    if (o.vary_layers && par.pp > 1)
        s.layers.push_back(LayerSplit::Balanced);
    if (isBaseStructure(s.structure) && base_.placement &&
        int(base_.placement->layers_per_stage.size()) == par.pp)
        s.layers.insert(s.layers.begin(), LayerSplit::Given);
    buildBalancedSplits(s);
    // With one replica there is no DP collective to choose.
    if (par.dp == 1)
        s.dp_algos = {base_.algoFor(Dim::DP)};
    else if (!o.dp_algos.empty())
        s.dp_algos = o.dp_algos;
    else
        s.dp_algos = withBaseFirst(base_.algoFor(Dim::DP),
                                   {CollectiveAlgo::Hierarchical, CollectiveAlgo::Ring,
                                    CollectiveAlgo::Tree, CollectiveAlgo::Auto});
    // Top-k compression runs only in the hierarchical scheme (the plan check
    // refuses it with the others).
    if (base_.dp_compression && base_.dp_compression->method == CompressionMethod::TopK)
        s.dp_algos = {CollectiveAlgo::Hierarchical};
    // The CP exchange, within the base plan's framework: PyTorch's two
    // rotations for a plan on PyTorch's ring (torchtitan), else Transformer
    // Engine's ring, its all-gather, its all-to-all and the ring's
    // hierarchical form over each proper divisor of cp; the all-to-alls only
    // where a TP rank's heads and KV heads split over their group (the plan
    // check's rule).
    s.cp_rings = {{base_.cp_ring, 1}};
    if (par.cp > 1) {
        const CpExchangeChoice base{base_.cp_ring, base_.cp_a2a_size};
        if (isTorchCpRing(base_.cp_ring)) {
            s.cp_rings = withBaseFirst<CpExchangeChoice>(
                {base_.cp_ring, 1}, {{CpRing::TorchAllGather, 1}, {CpRing::TorchAllToAll, 1}});
        } else {
            std::vector<CpExchangeChoice> te = {{CpRing::TeP2p, 1}, {CpRing::TeAllGather, 1}};
            if (model_.headsSplitOver(par.tp, par.cp))
                te.push_back({CpRing::TeA2a, 1});
            for (int a = 2; a < par.cp; ++a)
                if (par.cp % a == 0 && model_.headsSplitOver(par.tp, a))
                    te.push_back({CpRing::TeP2p, a});
            s.cp_rings =
                std::find(te.begin(), te.end(), base) != te.end() ? withBaseFirst(base, te) : te;
        }
    }
    structures_.push_back(std::move(s));
}

void DesignSpace::buildSchedules(StructureAxes& s, const DesignSpaceOptions& o) const {
    const int pp = s.structure.parallelism.pp;
    const auto m = s.structure.microbatches;
    std::vector<Schedule> sch = o.schedules;
    if (sch.empty()) {
        sch = {base_.schedule,
               {ScheduleKind::OneFOneB, 1},
               {ScheduleKind::Interleaved, 2},
               {ScheduleKind::ZeroBubble, 1}};
        if (o.size == SpaceSize::Full) {
            sch.push_back({ScheduleKind::Interleaved, 4});
            sch.push_back({ScheduleKind::GPipe, 1});
        }
    }
    for (const Schedule& x : sch) {
        const bool inter = x.kind == ScheduleKind::Interleaved;
        if (pp == 1) {
            if (!inter)
                pushUnique(s.schedules, Schedule{x.kind, 1});
            continue;
        }
        // Interleaving deals the microbatches out in rounds of pp and needs
        // at least one layer per virtual stage.
        if (inter && (x.virtual_stages < 2 || m % pp != 0 ||
                      std::int64_t(pp) * x.virtual_stages > model_.layers))
            continue;
        if (!inter && x.virtual_stages != 1)
            continue;
        pushUnique(s.schedules, x);
        // Latency-aware warm-up (CrossPipe) on every derived schedule that
        // has a warm-up to lengthen.
        if (o.schedules.empty() && o.vary_latency_hiding && !x.latency_hiding &&
            (x.kind == ScheduleKind::OneFOneB || x.kind == ScheduleKind::ZeroBubble))
            pushUnique(s.schedules, Schedule{x.kind, x.virtual_stages, true});
    }
    if (pp == 1 && !s.schedules.empty()) {
        s.schedules.resize(1); // one stage: every schedule is the same
        s.schedules[0].latency_hiding = false;
    }
}

void DesignSpace::buildMemoryAxes(StructureAxes& s, const DesignSpaceOptions& o) const {
    const bool full = o.size == SpaceSize::Full;
    s.recompute = o.recompute.empty()
                      ? withBaseFirst(base_.recompute,
                                      {Recompute::None, Recompute::Selective, Recompute::Full})
                      : o.recompute;
    // With one replica every ZeRO stage shards over nothing: they are all
    // the same plan.
    std::vector<int> stages;
    if (s.structure.parallelism.dp == 1)
        stages = {o.zero_stages.empty() ? base_.zero_stage : o.zero_stages.front()};
    else if (!o.zero_stages.empty())
        stages = o.zero_stages;
    else
        stages = withBaseFirst(base_.zero_stage,
                               full ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{1, 2, 3});
    // ZeRO-3 with the base plan's resharding policy; under PP also the other
    // behaviour when it differs: FSDP without resharding is ZeRO-1's traffic
    // and memory (already a choice), resharding every microbatch is not.
    const int pp = s.structure.parallelism.pp;
    const FsdpReshard baseReshard = base_.fsdp_reshard_after_forward;
    s.zero.clear();
    for (int z : stages)
        pushUnique(s.zero, ZeroChoice{z, z == 3 ? baseReshard : FsdpReshard::Default});
    const bool hasZero3 = std::find(stages.begin(), stages.end(), 3) != stages.end();
    if (hasZero3 && s.structure.parallelism.dp > 1 && o.zero_stages.empty() &&
        !fsdpPerMicrobatch(3, baseReshard, pp))
        pushUnique(s.zero, ZeroChoice{3, FsdpReshard::Always});
    // Computed once here so that precheck's memory bound costs no model call.
    Plan probe = base_;
    probe.parallelism = s.structure.parallelism;
    probe.micro_batch_sequences = s.structure.micro_batch;
    for (Recompute r : s.recompute) {
        probe.recompute = r;
        // An FP8 model: the smaller of BF16 and FP8 saved inputs (the GPU
        // decides which the layers run); of dense and MoE layers.
        const bool fp8 = model_.dtype == DType::FP8;
        auto perLayer = [&](bool moe) {
            const double bf16 = activationBytesPerLayer(model_, probe, moe);
            return fp8 ? std::min(bf16, activationBytesPerLayer(model_, probe, moe, true)) : bf16;
        };
        double act = perLayer(false);
        if (model_.moe)
            act = std::min(act, perLayer(true));
        // Uniform full recompute over groups of N layers keeps one input a
        // group: at least 1/N of a layer's each.
        if (r == Recompute::Full && base_.recompute_method == RecomputeMethod::Uniform)
            act /= std::max(1, base_.recompute_layers);
        s.activation_per_layer.push_back(act);
    }
}

void DesignSpace::buildPlacements(StructureAxes& axes, const DesignSpaceOptions& o) const {
    const Parallelism& par = axes.structure.parallelism;
    std::vector<PlacementChoice>& out = axes.placements;
    addRankOrderPlacements(out, par, base_.rank_order);
    if (o.vary_placement && cluster_.buildings.size() >= 2 && par.pp >= 2) {
        const bool full = o.size == SpaceSize::Full;
        StagePlacements stages(cluster_, par, full, full ? kMaxExplicitFull : kMaxExplicitDefault,
                               out);
        for (const auto& groups : buildingGroupings(cluster_))
            stages.addGrouping(groups);
    }
    // The base plan's own placement first, when it is none of these (an
    // explicit placement of its own, or another rank order).
    if (isBaseStructure(axes.structure)) {
        std::vector<PlacementRun> runs;
        if (base_.placement)
            runs = base_.placement->runs;
        const bool known = std::any_of(out.begin(), out.end(), [&](const PlacementChoice& c) {
            return c.rank_order == base_.rank_order && c.runs == runs;
        });
        if (!known)
            out.insert(out.begin(), PlacementChoice{"as-given", base_.rank_order, runs, {}});
    }
    const auto& kinds = o.placement_kinds;
    if (!kinds.empty())
        std::erase_if(out, [&](const PlacementChoice& c) {
            const std::string kind = c.label.substr(0, c.label.find(' '));
            return std::find(kinds.begin(), kinds.end(), kind) == kinds.end();
        });
}

bool DesignSpace::isBaseStructure(const Structure& st) const {
    return st.parallelism == base_.parallelism && st.micro_batch == base_.micro_batch_sequences;
}

std::string DesignSpace::axisName(int axis) const {
    switch (axis) {
    case kPlacement:
        return "placement";
    case kSchedule:
        return "schedule";
    case kRecompute:
        return "recompute";
    case kZero:
        return "zero";
    case kLayers:
        return "layers";
    case kDpAlgo:
        return "dp-collective";
    case kCpExchange:
        return "cp-exchange";
    default:
        if (axis == routingAxis())
            return "routing";
        if (axis == outerSyncAxis())
            return "outer-sync";
        return "link:" + linkNames_[std::size_t(axis - kFirstLink)];
    }
}

int DesignSpace::choices(std::size_t s, int axis) const {
    const StructureAxes& a = structures_[s];
    switch (axis) {
    case kPlacement:
        return int(a.placements.size());
    case kSchedule:
        return int(a.schedules.size());
    case kRecompute:
        return int(a.recompute.size());
    case kZero:
        return int(a.zero.size());
    case kLayers:
        return int(a.layers.size());
    case kDpAlgo:
        return int(a.dp_algos.size());
    case kCpExchange:
        return int(a.cp_rings.size());
    default:
        if (axis == routingAxis())
            return int(routings_.size());
        if (axis == outerSyncAxis())
            return int(outerSyncs_.size());
        return int(links_[std::size_t(axis - kFirstLink)].size());
    }
}

std::string DesignSpace::choiceLabel(std::size_t s, int axis, int c) const {
    const StructureAxes& a = structures_[s];
    const std::size_t i = std::size_t(c);
    switch (axis) {
    case kPlacement:
        return a.placements[i].label;
    case kSchedule:
        return scheduleLabel(a.schedules[i]);
    case kRecompute:
        return std::string("recompute ") + toString(a.recompute[i]);
    case kZero: {
        const ZeroChoice& z = a.zero[i];
        std::string out = "zero" + std::to_string(z.stage);
        if (z.stage == 3 && z.reshard != FsdpReshard::Default)
            out += std::string(" reshard-") + toString(z.reshard);
        return out;
    }
    case kLayers:
        return a.layers[i] == LayerSplit::Even       ? "layers even"
               : a.layers[i] == LayerSplit::Balanced ? "layers balanced"
                                                     : "layers as given";
    case kDpAlgo:
        return a.dp_algos[i] == CollectiveAlgo::Auto ? std::string("dp nccl-choice")
                                                     : std::string("dp ") + toString(a.dp_algos[i]);
    case kCpExchange:
        return std::string("cp ") + toString(a.cp_rings[i].ring) +
               (a.cp_rings[i].a2a > 1 ? " a2a " + std::to_string(a.cp_rings[i].a2a) : "");
    default:
        if (axis == outerSyncAxis())
            return outerSyncLabel(outerSyncs_[i]);
        if (axis == routingAxis()) {
            const Routing r = routings_[i] ? *routings_[i] : cluster_.routing;
            std::string out = std::string("routing ") + toString(r.policy);
            if (r.policy == RoutingPolicy::Ecmp &&
                (r.ecmp_metric != EcmpMetric::Hops || r.ecmp_tolerance != 0)) {
                char buf[64];
                std::snprintf(buf, sizeof buf, " (%s, within %g%%)", toString(r.ecmp_metric),
                              100 * r.ecmp_tolerance);
                out += buf;
            }
            return out;
        }
        return linkNames_[std::size_t(axis - kFirstLink)] + " " +
               links_[std::size_t(axis - kFirstLink)][i].label;
    }
}

double DesignSpace::size() const {
    double total = 0;
    for (std::size_t s = 0; s < structures_.size(); ++s) {
        double n = 1;
        for (int a = 0; a < axisCount(); ++a)
            n *= choices(s, a);
        total += n;
    }
    return total;
}

std::uint64_t DesignSpace::prefixCount(std::size_t s, int firstFixed) const {
    // Saturates at 2^62: many link axes can overflow 64 bits.
    constexpr std::uint64_t kCap = std::uint64_t(1) << 62;
    std::uint64_t n = 1;
    for (int a = 0; a < std::min(firstFixed, axisCount()); ++a)
        n = std::min(
            kCap, n * std::min(kCap / std::max<std::uint64_t>(n, 1), std::uint64_t(choices(s, a))));
    return n;
}

void DesignSpace::buildBalancedSplits(StructureAxes& axes) const {
    const int L = model_.layers;
    const int pp = axes.structure.parallelism.pp;
    axes.even.assign(std::size_t(pp), L / pp);
    for (int i = 0; i < L % pp; ++i)
        ++axes.even[std::size_t(i)];
    if (std::find(axes.layers.begin(), axes.layers.end(), LayerSplit::Balanced) ==
        axes.layers.end())
        return;
    // Water-filling: each layer goes to the stage whose work (layers plus
    // the logits on the last stage, over its building's speed) stays the
    // smallest; ties go to the earlier stage. Optimal for this min-max.
    auto split = [&](int v, const std::vector<double>& speed) {
        std::vector<int> out(std::size_t(pp), v);
        auto cost = [&](int s, int layers) {
            const double extra = s == pp - 1 ? logitsLayers_ : 0.0;
            return (layers + extra) / (speed.empty() ? 1.0 : speed[std::size_t(s)]);
        };
        for (int left = L - pp * v; left > 0; --left) {
            int best = 0;
            double bestCost = cost(0, out[0] + 1);
            for (int s = 1; s < pp; ++s) {
                const double x = cost(s, out[std::size_t(s)] + 1);
                if (x < bestCost) {
                    best = s;
                    bestCost = x;
                }
            }
            ++out[std::size_t(best)];
        }
        return out;
    };
    std::vector<std::pair<std::pair<int, std::vector<double>>, std::vector<int>>> cache;
    axes.balanced.resize(axes.placements.size());
    for (std::size_t p = 0; p < axes.placements.size(); ++p) {
        std::vector<double> speed = axes.placements[p].stage_speed;
        if (std::all_of(speed.begin(), speed.end(), [](double x) { return x == 1.0; }))
            speed.clear();
        for (const Schedule& sch : axes.schedules) {
            const int v = sch.kind == ScheduleKind::Interleaved ? sch.virtual_stages : 1;
            auto key = std::make_pair(v, speed);
            auto it = std::find_if(cache.begin(), cache.end(),
                                   [&](const auto& e) { return e.first == key; });
            if (it == cache.end()) {
                cache.push_back({key, split(v, speed)});
                it = cache.end() - 1;
            }
            axes.balanced[p].push_back(it->second);
        }
    }
}

const std::vector<int>& DesignSpace::layerSplit(const StructureAxes& axes,
                                                const Candidate& c) const {
    static const std::vector<int> kEvenByTheCostModel;
    const LayerSplit split = axes.layers[c.choice[kLayers]];
    if (split == LayerSplit::Balanced)
        return axes.balanced[c.choice[kPlacement]][c.choice[kSchedule]];
    if (split == LayerSplit::Given)
        return base_.placement->layers_per_stage;
    const Schedule& sch = axes.schedules[c.choice[kSchedule]];
    const int v = sch.kind == ScheduleKind::Interleaved ? sch.virtual_stages : 1;
    // The interleaved schedule needs an explicit split when the layers do
    // not divide into pp * v chunks.
    if (v > 1 && model_.layers % (axes.structure.parallelism.pp * v) != 0)
        return axes.even;
    return kEvenByTheCostModel;
}

double DesignSpace::staticMemoryLowerBoundGiB(const StructureAxes& axes, const Candidate& c,
                                              const std::vector<int>& split) const {
    const Parallelism& par = axes.structure.parallelism;
    const int pp = par.pp;
    const ZeroChoice& zc = axes.zero[c.choice[kZero]];
    const int zero = effectiveZeroStage(zc.stage, zc.reshard, pp);
    const Schedule& sch = axes.schedules[c.choice[kSchedule]];
    const int v = sch.kind == ScheduleKind::Interleaved ? sch.virtual_stages : 1;
    const std::vector<int>& layers = split.empty() ? axes.even : split;
    const double dense = layerParamsLowerBound(model_, par.tp, par.ep, false);
    const double moe = model_.moe ? layerParamsLowerBound(model_, par.tp, par.ep, true) : dense;
    // The cost model's bytes per parameter, all of them sharded over dp
    // (expert parameters over dp / ep, which holds more).
    const double perParam = paramBytes(zero, double(par.dp) * par.cp,
                                       double(base_.grad_reduce_bytes), optimizerPrecision(base_))
                                .total();

    // Activations: one stage-0 chunk per microbatch in flight; every schedule
    // runs min(m, pp) forwards on the first stage before its first backward
    // (gpipe all m).
    const double act = axes.activation_per_layer[c.choice[kRecompute]];
    const std::int64_t m = axes.structure.microbatches;
    const double inFlight =
        sch.kind == ScheduleKind::GPipe ? double(m) : double(std::min<std::int64_t>(m, pp));
    const double act0 = inFlight * (layers[0] / v) * act;

    double worst = 0;
    int first = 0;
    for (int s = 0; s < pp; ++s) {
        const int n = layers[std::size_t(s)];
        const int nMoe = model_.moeLayersIn(first, n);
        first += n;
        double p = (n - nMoe) * dense + nMoe * moe;
        if (s == 0)
            p += double(model_.vocab) * double(model_.hidden) / par.tp;
        if (s == pp - 1 && !model_.tied_embeddings)
            p += double(model_.vocab) * double(model_.hidden) / par.tp;
        const double bytes = p * perParam + (s == 0 ? act0 : 0.0);
        worst = std::max(worst, bytes);
    }
    return withRuntimeOverheadGiB(worst * kLowerBoundMargin);
}

double DesignSpace::memoryLowerBoundGiB(const Candidate& c) const {
    const StructureAxes& axes = structures_[c.structure];
    return staticMemoryLowerBoundGiB(axes, c, layerSplit(axes, c));
}

const char* DesignSpace::precheck(const Candidate& c) const {
    const StructureAxes& axes = structures_[c.structure];
    const std::vector<int>& split = layerSplit(axes, c);
    const Schedule& sch = axes.schedules[c.choice[kSchedule]];
    const int v = sch.kind == ScheduleKind::Interleaved ? sch.virtual_stages : 1;
    for (int n : split)
        if (n < v)
            return "layers: a stage holds fewer layers than virtual stages";
    if (axes.layers[c.choice[kLayers]] == LayerSplit::Balanced) {
        if (split == axes.even) // the same plan as the even split
            return "duplicate: the balanced split is the even one";
    }
    if (staticMemoryLowerBoundGiB(axes, c, split) > maxMemoryGiB_)
        return "memory (lower bound before evaluation)";
    return nullptr;
}

Plan DesignSpace::plan(const Candidate& c, bool describe) const {
    Plan p = base_;
    planInto(c, p);
    if (describe)
        p.description = label(c);
    return p;
}

void DesignSpace::planInto(const Candidate& c, Plan& p) const {
    const StructureAxes& axes = structures_[c.structure];
    p.parallelism = axes.structure.parallelism;
    p.micro_batch_sequences = axes.structure.micro_batch;
    p.schedule = axes.schedules[c.choice[kSchedule]];
    p.recompute = axes.recompute[c.choice[kRecompute]];
    // The base plan's choice of layers for full recompute; the other
    // policies always cover every layer.
    const bool full = p.recompute == Recompute::Full;
    p.recompute_method = full ? base_.recompute_method : RecomputeMethod::Uniform;
    p.recompute_layers = full ? base_.recompute_layers : 1;
    const ZeroChoice& zc = axes.zero[c.choice[kZero]];
    p.zero_stage = zc.stage;
    p.fsdp_reshard_after_forward = zc.stage == 3 ? zc.reshard : base_.fsdp_reshard_after_forward;
    const PlacementChoice& pl = axes.placements[c.choice[kPlacement]];
    p.rank_order = pl.rank_order;
    const std::vector<int>& layers = layerSplit(axes, c);
    if (pl.runs.empty() && layers.empty()) {
        p.placement.reset();
    } else {
        if (!p.placement)
            p.placement.emplace();
        p.placement->runs = pl.runs;
        p.placement->layers_per_stage = layers;
    }
    const CollectiveAlgo algo = axes.dp_algos[c.choice[kDpAlgo]];
    if (algo == CollectiveAlgo::Auto)
        p.collectives.erase(Dim::DP);
    else
        p.collectives[Dim::DP] = algo;
    p.cp_ring = axes.cp_rings[c.choice[kCpExchange]].ring;
    p.cp_a2a_size = axes.cp_rings[c.choice[kCpExchange]].a2a;
    for (std::size_t i = 0; i < links_.size(); ++i) {
        const LinkChoice& lc = links_[i][c.choice[kFirstLink + int(i)]];
        if (lc.setting == LinkOverride{})
            p.link_technologies.erase(linkNames_[i]);
        else
            p.link_technologies[linkNames_[i]] = lc.setting;
    }
    if (const int axis = routingAxis(); axis >= 0)
        p.routing = routings_[c.choice[std::size_t(axis)]];
    if (const int axis = outerSyncAxis(); axis >= 0)
        p.outer_sync = outerSyncs_[c.choice[std::size_t(axis)]];
    // The base plan's HSDP group where the candidate can run it (the plan
    // check's rules); else one group.
    p.dp_shard = base_.dp_shard;
    if (p.dp_shard >= p.parallelism.dp || dpShardProblem(p) != DpShardProblem::None)
        p.dp_shard = 0;
}

std::optional<Candidate> DesignSpace::locate(const Plan& p) const {
    auto indexOf = [](const auto& list, const auto& x) {
        const auto it = std::find(list.begin(), list.end(), x);
        return it == list.end() ? -1 : int(it - list.begin());
    };
    const std::vector<PlacementRun> runs =
        p.placement ? p.placement->runs : std::vector<PlacementRun>{};
    for (std::size_t s = 0; s < structures_.size(); ++s) {
        const StructureAxes& a = structures_[s];
        if (!(a.structure.parallelism == p.parallelism) ||
            a.structure.micro_batch != p.micro_batch_sequences)
            continue;
        Candidate c;
        c.structure = std::uint32_t(s);
        c.choice.assign(std::size_t(axisCount()), 0);
        int placement = -1;
        for (std::size_t i = 0; i < a.placements.size() && placement < 0; ++i)
            if (a.placements[i].rank_order == p.rank_order && a.placements[i].runs == runs)
                placement = int(i);
        const int found[] = {
            placement,
            indexOf(a.schedules, p.schedule),
            indexOf(a.recompute, p.recompute),
            indexOf(a.zero,
                    ZeroChoice{p.zero_stage, p.zero_stage == 3 ? p.fsdp_reshard_after_forward
                                                               : FsdpReshard::Default}),
            0,
            indexOf(a.dp_algos, p.algoFor(Dim::DP)),
            indexOf(a.cp_rings,
                    CpExchangeChoice{p.cp_ring, p.parallelism.cp > 1 ? p.cp_a2a_size : 1})};
        if (std::any_of(std::begin(found), std::end(found), [](int x) { return x < 0; }))
            continue;
        for (int axis = 0; axis < kFirstLink; ++axis)
            c.choice[std::size_t(axis)] = std::uint16_t(found[axis]);
        bool linksFound = true;
        for (std::size_t i = 0; i < links_.size() && linksFound; ++i) {
            LinkOverride want;
            if (auto it = p.link_technologies.find(linkNames_[i]); it != p.link_technologies.end())
                want = it->second;
            int x = -1;
            for (std::size_t j = 0; j < links_[i].size() && x < 0; ++j)
                if (links_[i][j].setting == want)
                    x = int(j);
            linksFound = x >= 0;
            c.choice[std::size_t(kFirstLink) + i] = std::uint16_t(std::max(0, x));
        }
        if (!linksFound)
            continue;
        if (const int axis = routingAxis(); axis >= 0) {
            const auto it = std::find(routings_.begin(), routings_.end(), p.routing);
            if (it == routings_.end())
                continue;
            c.choice[std::size_t(axis)] = std::uint16_t(it - routings_.begin());
        } else if (p.routing != base_.routing) {
            continue;
        }
        if (const int axis = outerSyncAxis(); axis >= 0) {
            const auto it = std::find(outerSyncs_.begin(), outerSyncs_.end(), p.outer_sync);
            if (it == outerSyncs_.end())
                continue;
            c.choice[std::size_t(axis)] = std::uint16_t(it - outerSyncs_.begin());
        } else if (p.outer_sync != base_.outer_sync) {
            continue;
        }
        // The layer split: whichever choice writes the same plan.
        for (std::size_t x = 0; x < a.layers.size(); ++x) {
            c.choice[kLayers] = std::uint16_t(x);
            Plan q = base_;
            planInto(c, q);
            q.name = p.name;
            q.description = p.description;
            if (q == p)
                return c;
        }
    }
    return std::nullopt;
}

double DesignSpace::hardwareFlopsFactor(const Candidate& c) const {
    const StructureAxes& axes = structures_[c.structure];
    // Block recompute re-runs only some layers: no extra FLOPs are certain.
    if (axes.recompute[c.choice[kRecompute]] != Recompute::Full ||
        base_.recompute_method == RecomputeMethod::Block)
        return 1.0;
    // Backward is twice the forward, so the layers' forward is a third of
    // their model FLOPs; the logits (logitsLayers_ layer equivalents) are
    // not recomputed. The margin keeps the bound below the cost model.
    const double layers = double(model_.layers);
    return 1.0 + kLowerBoundMargin * layers / (layers + logitsLayers_) / 3.0;
}

std::string DesignSpace::label(const Candidate& c) const {
    const Structure& st = structures_[c.structure].structure;
    const Parallelism& par = st.parallelism;
    std::string s = "tp" + std::to_string(par.tp) + " cp" + std::to_string(par.cp) + " pp" +
                    std::to_string(par.pp) + " dp" + std::to_string(par.dp);
    if (par.ep > 1)
        s += " ep" + std::to_string(par.ep);
    s += " mb" + std::to_string(st.micro_batch);
    for (int a = 0; a < axisCount(); ++a) {
        if (a >= kFirstLink && c.choice[std::size_t(a)] == 0)
            continue; // links as built and the routing as given are not worth a word
        if (a == kCpExchange && par.cp == 1)
            continue; // nothing to exchange
        s += " | " + choiceLabel(c.structure, a, c.choice[std::size_t(a)]);
    }
    return s;
}

std::vector<std::optional<OuterSync>> outerSyncChoices(const std::vector<int>& diloco_steps,
                                                       const std::vector<int>& fragments,
                                                       bool hsdp) {
    std::vector<std::optional<OuterSync>> out;
    if (!diloco_steps.empty() || hsdp)
        out.push_back(std::nullopt);
    for (int h : diloco_steps) {
        OuterSync d;
        d.inner_steps = h;
        out.push_back(d);
        for (int f : fragments) {
            if (f > h)
                continue;
            OuterSync s = d;
            s.method = OuterSyncMethod::StreamingDiloco;
            s.fragments = f;
            out.push_back(s);
        }
    }
    if (hsdp) {
        OuterSync h;
        h.method = OuterSyncMethod::Hsdp;
        h.inner_steps = 1;
        out.push_back(h);
    }
    return out;
}

} // namespace sa

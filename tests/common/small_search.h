#pragma once
// A search small enough to enumerate in a test: two or three buildings of 64
// GPUs, a 0.6B-parameter model and a few choices per axis (tst_optimizer,
// tst_optimizer_csv).

#include "explore/designspace.h"
#include "model/cluster.h"
#include "model/model.h"
#include "model/plan.h"

#include "fixtures.h"

namespace sa::testing {

// Two buildings of 64 GPUs on a campus, or three with a third one in
// another region behind thin 5 ms links. GPUs with 3.5 GiB so that memory
// prunes part of the space.
inline Cluster smallCluster(bool three) {
    Cluster c =
        clusterOf(three ? "three-small" : "two-small",
                  {building("B1", 64, {.region = "east"}), building("B2", 64, {.region = "east"})},
                  {link("B1", "B2", 3200, 0.1, "roce", "B1-B2")}, h100(3.5));
    if (three) {
        c.buildings.push_back(building("B3", 64, {.region = "west"}));
        c.links.push_back(link("B1", "B3", 200, 5, "tcp", "B1-B3"));
        c.links.push_back(link("B2", "B3", 200, 5, "tcp", "B2-B3"));
    }
    return c;
}

inline Model smallModel() {
    Model m;
    m.name = "tiny-0.6b";
    m.layers = 8;
    m.hidden = 2048;
    m.ffn_hidden = 8192;
    m.heads = 16;
    m.kv_heads = 4;
    m.vocab = 32000;
    return m;
}

// tp2 pp2 on `gpus` GPUs; a batch of 192 sequences divides by many dp.
inline Plan basePlan(int gpus) {
    return makePlan(2, 2, gpus / 4, 192, Recompute::Selective, "base");
}

// A space small enough to enumerate here.
inline DesignSpaceOptions smallSpace() {
    DesignSpaceOptions o;
    o.tp = {2, 4};
    o.cp = {1};
    o.pp = {1, 2, 4};
    o.micro_batch = {1};
    o.zero_stages = {1, 3};
    o.recompute = {Recompute::None, Recompute::Full};
    o.dp_algos = {CollectiveAlgo::Ring, CollectiveAlgo::Hierarchical};
    o.schedules = {
        {ScheduleKind::OneFOneB, 1}, {ScheduleKind::Interleaved, 2}, {ScheduleKind::ZeroBubble, 1}};
    o.vary_links = false;
    return o;
}

// The three-building problem: a search of a few hundred candidates that
// finishes in well under a second.
struct SmallProblem {
    Cluster cluster = smallCluster(true);
    Model model = smallModel();
    Plan base = basePlan(192);
};

} // namespace sa::testing

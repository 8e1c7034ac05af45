#pragma once
// A search small enough to enumerate in a test: two or three buildings of 64
// GPUs, a 0.6B-parameter model and a few choices per axis (tst_optimizer,
// tst_optimizer_csv).

#include "explore/designspace.h"
#include "model/cluster.h"
#include "model/model.h"
#include "model/plan.h"

#include <cstdint>
#include <string>

namespace sa::testing {

inline Building building(const std::string& name, const std::string& region, std::int64_t gpus) {
    Building b;
    b.name = name;
    b.region = region;
    b.gpu_model = "H100";
    b.gpus = gpus;
    b.gpus_per_host = 8;
    b.scale_up_gbps = 3600;
    b.scale_out_gbps = 400;
    return b;
}

inline Link link(const std::string& a, const std::string& b, double gbps, double ms,
                 const std::string& tech) {
    Link l;
    l.a = a;
    l.b = b;
    l.name = a + "-" + b;
    l.bandwidth_gbps = gbps;
    l.latency_ms = ms;
    l.technology = tech;
    return l;
}

// Two buildings of 64 GPUs on a campus, or three with a third one in
// another region behind thin 5 ms links. GPUs with 3.5 GiB so that memory
// prunes part of the space.
inline Cluster smallCluster(bool three) {
    Cluster c;
    c.name = three ? "three-small" : "two-small";
    GpuModel g;
    g.name = "H100";
    g.peak_tflops_bf16 = 989;
    g.peak_tflops_fp8 = 1979;
    g.memory_gib = 3.5;
    g.hbm_tbps = 3.35;
    g.sms = 132;
    c.gpu_models[g.name] = g;
    c.buildings = {building("B1", "east", 64), building("B2", "east", 64)};
    c.links = {link("B1", "B2", 3200, 0.1, "roce")};
    if (three) {
        c.buildings.push_back(building("B3", "west", 64));
        c.links.push_back(link("B1", "B3", 200, 5, "tcp"));
        c.links.push_back(link("B2", "B3", 200, 5, "tcp"));
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
    Plan p;
    p.name = "base";
    p.sequence_length = 2048;
    p.global_batch_sequences = 192;
    p.micro_batch_sequences = 1;
    p.parallelism = {2, 1, 2, gpus / 4, 1};
    p.zero_stage = 1;
    p.recompute = Recompute::Selective;
    return p;
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

} // namespace sa::testing

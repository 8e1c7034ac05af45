#pragma once
// What a training framework does for the plan knobs a document leaves out
// (plan "framework"). One place for each default: the framework importers
// (core/frameworks) start from the same values. docs/FRAMEWORKS.md
// "Framework defaults" lists them with their sources.

#include "model/plan.h"

#include <cstdint>
#include <vector>

namespace sa {

// A plan whose knobs are `f`'s defaults (and `framework` = f); the document
// fields (name, batch, parallelism, ...) are the Plan defaults.
Plan frameworkDefaults(TrainingFramework f);

// The knobs whose framework default depends on other keys, and whether the
// document gave them (then its value stays).
struct GivenKnobs {
    bool dp_bucket_mib = false;
    bool p2p_overlap = false;
};

// Defaults that depend on other keys of the plan (parallelism, the gradient
// bytes, the ZeRO stage, the schedule): applied after the document is read,
// to the knobs it did not give. dp_bucket_mib: Megatron's bucket with overlap
// on, torchtitan's DDP bucket without FSDP; p2p_overlap: the framework's for
// the plan's schedule (frameworkP2pOverlap).
void applyDerivedFrameworkDefaults(Plan& p, GivenKnobs given);

// Whether framework f runs pipeline sends beside compute (plan p2p_overlap)
// under schedule `kind`: Megatron-LM only in its interleaved schedule
// (--no-overlap-p2p-communication off), NeMo (Megatron-Core's
// ModelParallelConfig) never unless overlap_p2p_comm, torchtitan
// (torch.distributed.pipelining) except in Schedule1F1B, whose steady state
// waits for each send. Sources in framework_defaults.cpp.
bool frameworkP2pOverlap(TrainingFramework f, ScheduleKind kind);

// Gives `p` framework `f` and its software defaults (kernels, fusion, FP8,
// ZeRO, gradient bytes, DP overlap and bucket, sequence parallelism, P2P
// overlap for the plan's schedule), as
// choosing the framework in the explorer does; the plan's structure
// (degrees, rank order, schedule, recompute) stays.
void applyFrameworkSoftwareDefaults(Plan& p, TrainingFramework f);

// Megatron's default gradient bucket (megatron/core/distributed/
// distributed_data_parallel.py: max(40M, 1M x dp) parameters, dp the
// gradients' reduction group, dp x cp) in MiB of reduced gradients.
double megatronDefaultBucketMib(std::int64_t dpTimesCp, int gradBytes);
// Megatron's default 3D rank order "tp-cp-ep-dp-pp" as document rank order
// (innermost first), and the one --use-tp-pp-dp-mapping gives.
std::vector<Dim> megatronRankOrder(bool tpPpDp);
// torchtitan's DDP (apply_ddp: replicate(..., bucket_cap_mb=100)).
inline constexpr double kTorchtitanDdpBucketMib = 100;

} // namespace sa

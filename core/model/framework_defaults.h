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

// Defaults that depend on other keys of the plan (parallelism, the gradient
// bytes, the ZeRO stage): applied after the document is read, to the knobs it
// did not give. dp_bucket_mib: Megatron's bucket with overlap on, torchtitan's
// DDP bucket without FSDP.
void applyDerivedFrameworkDefaults(Plan& p, bool bucketGiven);

// Gives `p` framework `f` and its software defaults (kernels, fusion, FP8,
// ZeRO, gradient bytes, DP overlap and bucket, sequence parallelism), as
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

#include "model/plan.h"

namespace sa {

std::int64_t Plan::rankStride(Dim d) const {
    std::int64_t stride = 1;
    for (Dim o : rank_order) {
        if (o == d)
            break;
        stride *= parallelism.of(o);
    }
    return stride;
}

std::optional<std::pair<Dim, Dim>> Plan::modelParallelSplit() const {
    for (std::size_t i = 0; i < rank_order.size(); ++i) {
        const Dim outer = rank_order[i];
        if ((outer != Dim::TP && outer != Dim::CP) || parallelism.of(outer) <= 1)
            continue;
        for (std::size_t j = 0; j < i; ++j)
            if ((rank_order[j] == Dim::PP || rank_order[j] == Dim::DP) &&
                parallelism.of(rank_order[j]) > 1)
                return std::pair{outer, rank_order[j]};
    }
    return std::nullopt;
}

const char* toString(Dim d) {
    switch (d) {
    case Dim::TP:
        return "tp";
    case Dim::CP:
        return "cp";
    case Dim::PP:
        return "pp";
    case Dim::DP:
        return "dp";
    case Dim::EP:
        return "ep";
    }
    return "?";
}

const char* toString(FsdpReshard r) {
    switch (r) {
    case FsdpReshard::Default:
        return "default";
    case FsdpReshard::Always:
        return "always";
    case FsdpReshard::Never:
        return "never";
    }
    return "?";
}

const char* toString(AttentionKernel k) {
    switch (k) {
    case AttentionKernel::Auto:
        return "auto";
    case AttentionKernel::Flash2:
        return "flash2";
    case AttentionKernel::Flash3:
        return "flash3";
    case AttentionKernel::Cudnn:
        return "cudnn";
    }
    return "?";
}

const char* toString(Elementwise e) {
    switch (e) {
    case Elementwise::Fused:
        return "fused";
    case Elementwise::Eager:
        return "eager";
    case Elementwise::Compiled:
        return "compiled";
    }
    return "?";
}

const char* toString(RecomputeMethod m) {
    switch (m) {
    case RecomputeMethod::Uniform:
        return "uniform";
    case RecomputeMethod::Block:
        return "block";
    }
    return "?";
}

const char* toString(EpDispatcher d) {
    switch (d) {
    case EpDispatcher::Flex:
        return "flex";
    case EpDispatcher::HybridEp:
        return "hybridep";
    case EpDispatcher::AllToAll:
        break;
    }
    return "alltoall";
}

const char* toString(CpRing r) {
    switch (r) {
    case CpRing::TeP2p:
        return "te-p2p";
    case CpRing::TeAllGather:
        return "te-allgather";
    case CpRing::TeA2a:
        return "te-a2a";
    case CpRing::TorchAllGather:
        return "torch-allgather";
    case CpRing::TorchAllToAll:
        return "torch-alltoall";
    }
    return "?";
}

const char* toString(OptimizerMoments m) {
    switch (m) {
    case OptimizerMoments::Fp32:
        return "fp32";
    case OptimizerMoments::Bf16:
        return "bf16";
    }
    return "?";
}

const char* toString(MasterWeights m) {
    switch (m) {
    case MasterWeights::Fp32:
        return "fp32";
    case MasterWeights::Half:
        return "16bit";
    case MasterWeights::None:
        return "none";
    }
    return "?";
}

const char* toString(OptimizerImpl o) {
    switch (o) {
    case OptimizerImpl::Fused:
        return "fused";
    case OptimizerImpl::Foreach:
        return "foreach";
    }
    return "?";
}

const char* toString(CrossEntropy c) {
    switch (c) {
    case CrossEntropy::Megatron:
        return "megatron";
    case CrossEntropy::MegatronFused:
        return "megatron-fused";
    case CrossEntropy::Te:
        return "te";
    case CrossEntropy::Pytorch:
        return "pytorch";
    }
    return "?";
}

const char* toString(Fp8Recipe r) {
    switch (r) {
    case Fp8Recipe::Current:
        return "current";
    case Fp8Recipe::Delayed:
        return "delayed";
    }
    return "?";
}

const char* toString(Fp8Linear l) {
    switch (l) {
    case Fp8Linear::TransformerEngine:
        return "transformer-engine";
    case Fp8Linear::Torchao:
        return "torchao";
    }
    return "?";
}

const char* toString(TrainingFramework f) {
    switch (f) {
    case TrainingFramework::MegatronCore:
        return "megatron-core";
    case TrainingFramework::Nemo:
        return "nemo";
    case TrainingFramework::Torchtitan:
        return "torchtitan";
    }
    return "?";
}

const char* toString(CompressionMethod m) {
    switch (m) {
    case CompressionMethod::Bf16:
        return "bf16";
    case CompressionMethod::Fp8:
        return "fp8";
    case CompressionMethod::TopK:
        return "topk";
    }
    return "?";
}

const char* toString(OuterSyncMethod m) {
    switch (m) {
    case OuterSyncMethod::Diloco:
        return "diloco";
    case OuterSyncMethod::StreamingDiloco:
        return "streaming-diloco";
    case OuterSyncMethod::Hsdp:
        return "hsdp";
    }
    return "?";
}

const char* toString(Recompute r) {
    switch (r) {
    case Recompute::None:
        return "none";
    case Recompute::Selective:
        return "selective";
    case Recompute::Full:
        return "full";
    case Recompute::SelectiveOp:
        return "selective-op";
    }
    return "?";
}

const char* toString(ScheduleKind k) {
    switch (k) {
    case ScheduleKind::GPipe:
        return "gpipe";
    case ScheduleKind::OneFOneB:
        return "1f1b";
    case ScheduleKind::Interleaved:
        return "interleaved";
    case ScheduleKind::ZeroBubble:
        return "zero-bubble";
    }
    return "?";
}

const char* toString(CollectiveAlgo a) {
    switch (a) {
    case CollectiveAlgo::Auto:
        return "auto";
    case CollectiveAlgo::Ring:
        return "ring";
    case CollectiveAlgo::Tree:
        return "tree";
    case CollectiveAlgo::Hierarchical:
        return "hierarchical";
    }
    return "?";
}

std::optional<Dim> dimFromString(const std::string& s) {
    for (Dim d : kAllDims)
        if (s == toString(d))
            return d;
    return std::nullopt;
}

const char* toString(RecomputeModule m) {
    switch (m) {
    case RecomputeModule::CoreAttn:
        return "core_attn";
    case RecomputeModule::Layernorm:
        return "layernorm";
    case RecomputeModule::Mlp:
        return "mlp";
    case RecomputeModule::Moe:
        return "moe";
    case RecomputeModule::MoeAct:
        return "moe_act";
    case RecomputeModule::SharedExperts:
        return "shared_experts";
    case RecomputeModule::MlaUpProj:
        return "mla_up_proj";
    }
    return "?";
}

std::optional<RecomputeModule> recomputeModuleFromString(const std::string& s) {
    for (RecomputeModule m : kAllRecomputeModules)
        if (s == toString(m))
            return m;
    return std::nullopt;
}

std::string recomputeModulesText(unsigned modules, const char* separator) {
    std::string text;
    for (RecomputeModule m : kAllRecomputeModules)
        if (modules & recomputeBit(m))
            text += (text.empty() ? "" : separator) + std::string(toString(m));
    return text;
}

std::optional<Recompute> recomputeFromString(const std::string& s) {
    for (Recompute r :
         {Recompute::None, Recompute::Selective, Recompute::Full, Recompute::SelectiveOp})
        if (s == toString(r))
            return r;
    return std::nullopt;
}

std::optional<ScheduleKind> scheduleFromString(const std::string& s) {
    for (ScheduleKind k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
                           ScheduleKind::ZeroBubble})
        if (s == toString(k))
            return k;
    return std::nullopt;
}

std::optional<CollectiveAlgo> algoFromString(const std::string& s) {
    for (CollectiveAlgo a : {CollectiveAlgo::Auto, CollectiveAlgo::Ring, CollectiveAlgo::Tree,
                             CollectiveAlgo::Hierarchical})
        if (s == toString(a))
            return a;
    return std::nullopt;
}

std::optional<TrainingFramework> trainingFrameworkFromString(const std::string& s) {
    for (TrainingFramework f :
         {TrainingFramework::MegatronCore, TrainingFramework::Nemo, TrainingFramework::Torchtitan})
        if (s == toString(f))
            return f;
    return std::nullopt;
}

DpShardProblem dpShardProblem(const Plan& p) {
    const int dp = p.parallelism.dp;
    if (p.dp_shard <= 0 || dp <= 0)
        return DpShardProblem::None;
    if (dp % p.dp_shard != 0)
        return DpShardProblem::NotDividing;
    if (p.dp_shard >= dp)
        return DpShardProblem::None;
    if (p.zero_stage == 0)
        return DpShardProblem::NothingSharded;
    if (p.parallelism.ep > 1)
        return DpShardProblem::ExpertParallel;
    if (p.dp_compression)
        return DpShardProblem::Compression;
    if (p.outer_sync)
        return DpShardProblem::OuterSync;
    return DpShardProblem::None;
}

} // namespace sa

#pragma once
// Plain value type of a model document ("format": "scaleacross.model").

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace sa {

struct MoeConfig {
    int experts = 0;
    int top_k = 1;
    std::int64_t expert_ffn_hidden = 0;
    int shared_experts = 0; // always-active experts (DeepSeek style)
    int dense_layers = 0;   // leading layers with a dense MLP instead of experts
    double capacity_factor = 1.0;
    // Group-limited (node-limited) routing, DeepSeek-V3 §2.1.2 / Megatron
    // --moe-router-num-groups and --moe-router-group-topk: the experts in
    // `router_groups` contiguous groups, a token's top_k chosen inside its
    // `router_group_topk` best groups. 0: no limit.
    int router_groups = 0;
    int router_group_topk = 0;
    // Each expert's input padded to its capacity (Megatron
    // --moe-pad-expert-input-to-capacity): static shapes, the padding
    // executed. Unset: padded exactly when capacity_factor is above 1; at 1
    // and unpadded the layer is dropless (data-dependent shapes).
    std::optional<bool> pad_to_capacity{};

    bool padded() const { return pad_to_capacity.value_or(capacity_factor > 1.0); }
    // Routed copies an expert executes per routed copy: the capacity when
    // padded to it; without padding an even load drops nothing.
    double executedFactor() const { return padded() ? capacity_factor : 1.0; }

    bool operator==(const MoeConfig&) const = default;
};

// Multi-head latent attention (DeepSeek-V2 §2.1, DeepSeek-V3; Megatron-Core
// MLASelfAttention): queries, and keys and values, are projected down to
// low-rank latents and up again per head; keys and queries carry a
// decoupled RoPE part, the key's shared by all heads.
struct MlaConfig {
    std::int64_t q_lora_rank = 0; // 0: queries projected straight from the hidden state
    std::int64_t kv_lora_rank = 0;
    std::int64_t qk_head_dim = 0;   // per head, without the RoPE part
    std::int64_t rope_head_dim = 0; // the decoupled RoPE part of queries and keys
    std::int64_t v_head_dim = 0;

    bool operator==(const MlaConfig&) const = default;
};

// The attention's tensors per token, summed over the heads of one of `tp`
// ranks (tp 1: the whole layer).
// Sliding-window attention (Mistral, Gemma, GPT-OSS; Megatron-Core
// --window-size (size - 1, 0) and --window-attn-skip-freq): a query attends
// to itself and the size - 1 keys before it. With full_every N > 0 every
// N-th layer (N, 2N, ... counted from 1) attends the whole causal prefix
// (megatron/core/transformer/utils.py is_layer_window_attention); 0: every
// layer is windowed.
struct SlidingWindow {
    std::int64_t size = 0;
    int full_every = 0;

    bool operator==(const SlidingWindow&) const = default;
};

struct AttentionWidths {
    double q = 0, k = 0, v = 0; // queries, keys, values as the attention core reads them
    double out = 0;             // the core's output: the output projection's input
    double latent = 0;          // MLA's latents, the up projections' inputs (replicated over TP)
    double score_dim = 0;       // per head: the q·k dimension, and the value dimension
    double value_dim = 0;
};

enum class MlpKind { Gelu, SwiGlu };
enum class DType { BF16, FP8 };

struct Model {
    std::string name;
    std::string description;
    int layers = 0;
    std::int64_t hidden = 0;
    std::int64_t ffn_hidden = 0;
    int heads = 0;
    int kv_heads = 0;
    // Width of one attention head; 0: hidden / heads. Qwen3 and Gemma set it
    // apart (Qwen3-30B-A3B: hidden 2048, 32 heads of 128, a 4096-wide Q).
    std::int64_t head_dim = 0;
    std::int64_t vocab = 0;
    MlpKind mlp = MlpKind::SwiGlu;
    DType dtype = DType::BF16;
    bool tied_embeddings = false;
    std::optional<MoeConfig> moe;
    std::optional<MlaConfig> mla;
    // Multi-token prediction (DeepSeek-V3 Sec. 2.2; Megatron-Core
    // --mtp-num-layers): this many sequential modules after the last layer,
    // each one more transformer block of the last layer's kind (an MoE block
    // when the last layer has experts) behind two norms and a 2h -> h
    // projection of the hidden state joined with the next token's embedding,
    // predicting one token further through the shared output layer and loss.
    // 0: none.
    int mtp_layers = 0;
    std::optional<SlidingWindow> sliding_window;

    // The share of the layers whose attention is windowed (0 without a
    // window).
    double windowedLayerShare() const {
        if (!sliding_window || layers <= 0)
            return 0;
        const int n = sliding_window->full_every;
        return n > 0 ? double(layers - layers / n) / layers : 1.0;
    }
    std::int64_t headDim() const {
        return head_dim > 0 ? head_dim : heads > 0 ? hidden / heads : 0;
    }
    // Query heads on one of `tp` ranks; KV heads too, replicated across the
    // ranks when tp > kv_heads (GQA).
    double headsPerRank(double tp) const { return double(heads) / tp; }
    double kvHeadsPerRank(double tp) const { return std::max(1.0, double(kv_heads) / tp); }
    // Whether a TP rank's heads and KV heads split evenly over `cp` ranks, as
    // Transformer Engine's all-to-all CP asserts (AttnFuncWithCPAndQKVOA2A;
    // an MLA model's kv_heads equal its heads).
    bool headsSplitOver(int tp, int cp) const {
        return tp > 0 && cp > 0 && heads % tp == 0 && (heads / tp) % cp == 0 &&
               int(kvHeadsPerRank(tp)) % cp == 0;
    }
    AttentionWidths attentionWidths(double tp = 1) const {
        AttentionWidths w;
        const double a = headsPerRank(tp);
        if (mla) {
            w.score_dim = double(mla->qk_head_dim + mla->rope_head_dim);
            w.value_dim = double(mla->v_head_dim);
            w.q = w.k = a * w.score_dim;
            w.v = w.out = a * w.value_dim;
            w.latent = double(mla->q_lora_rank + mla->kv_lora_rank);
            return w;
        }
        w.score_dim = w.value_dim = double(headDim());
        w.q = w.out = a * w.score_dim;
        w.k = w.v = kvHeadsPerRank(tp) * w.score_dim;
        return w;
    }
    // Attention weights of one layer on one of `tp` ranks (tp 1: the whole
    // layer). MLA's down projections and their norms are replicated over
    // the ranks (Megatron-Core: linear_q_down_proj / linear_kv_down_proj
    // are not tensor-parallel), its up projections split by heads.
    double attentionParams(double tp = 1) const {
        const double h = double(hidden), a = headsPerRank(tp);
        if (mla) {
            const double ql = double(mla->q_lora_rank), kvl = double(mla->kv_lora_rank);
            const double qk = double(mla->qk_head_dim + mla->rope_head_dim);
            const double down =
                (ql > 0 ? h * ql + ql : 0.0) + h * (kvl + double(mla->rope_head_dim)) + kvl;
            const double up =
                (ql > 0 ? ql : h) * a * qk + kvl * a * double(mla->qk_head_dim + mla->v_head_dim);
            return down + up + a * double(mla->v_head_dim) * h;
        }
        const double dh = double(headDim());
        return h * (a + 2.0 * kvHeadsPerRank(tp)) * dh + a * dh * h;
    }
    // Layers with experts among the `n` layers from `first` on (the leading
    // dense_layers have a dense MLP).
    int moeLayersIn(int first, int n) const {
        if (!moe)
            return 0;
        return std::max(0, first + n - std::max(first, moe->dense_layers));
    }
    // Whether the last layer (and so each MTP module's block) has experts.
    bool lastLayerIsMoe() const { return moeLayersIn(layers - 1, 1) == 1; }
    bool operator==(const Model&) const = default;
};

} // namespace sa

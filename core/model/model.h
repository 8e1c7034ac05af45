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

    bool operator==(const MoeConfig&) const = default;
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

    std::int64_t headDim() const {
        return head_dim > 0 ? head_dim : heads > 0 ? hidden / heads : 0;
    }
    // Layers with experts among the `n` layers from `first` on (the leading
    // dense_layers have a dense MLP).
    int moeLayersIn(int first, int n) const {
        if (!moe)
            return 0;
        return std::max(0, first + n - std::max(first, moe->dense_layers));
    }
    bool operator==(const Model&) const = default;
};

} // namespace sa

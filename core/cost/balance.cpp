#include "cost/balance.h"

#include "cost/compute.h"
#include "cost/placement.h"

#include <algorithm>
#include <queue>

namespace sa {

std::vector<int> balancedLayers(const Cluster& cluster, const Model& model, const Plan& plan) {
    const int pp = std::max(1, plan.parallelism.pp);
    Plan even = plan;
    if (even.placement)
        even.placement->layers_per_stage.clear();
    const PlacementResult placed = placeCells(cluster, even);
    std::vector<double> perLayer(std::size_t(pp), 0.0), fixed(std::size_t(pp), 0.0);
    for (int s = 0; s < pp; ++s) {
        for (int d = 0; d < placed.grid.replicas; ++d) {
            const Building& b = cluster.buildings[std::size_t(placed.grid.at(s, d))];
            const LayerContext ctx = layerContext(cluster, b, model, plan);
            if (!ctx.gpu)
                continue;
            const LayerCost c = layerCost(ctx);
            const double t = c.fwd_s + c.bwd_input_s + c.bwd_weight_s + c.recompute_s + c.tp_fwd_s +
                             c.tp_bwd_s + c.tp_recompute_s;
            perLayer[std::size_t(s)] = std::max(perLayer[std::size_t(s)], t);
            double edge = 0;
            if (s == 0) {
                const EdgeCost e = embeddingCost(ctx);
                edge += e.fwd_s + e.bwd_s;
            }
            if (s == pp - 1) {
                const EdgeCost e = logitsCost(ctx);
                edge += e.fwd_s + e.bwd_s;
                // Multi-token prediction on the last stage: each module's own
                // work, a block (timed as this stage's layers) and the output
                // layer again.
                if (model.mtp_layers > 0) {
                    const EdgeCost m = mtpCost(ctx);
                    edge += model.mtp_layers * (m.fwd_s + m.bwd_s + e.fwd_s + e.bwd_s + t);
                }
            }
            fixed[std::size_t(s)] = std::max(fixed[std::size_t(s)], edge);
        }
    }
    // Every stage gets one layer; each further layer goes to the stage that
    // would finish soonest with it.
    std::vector<int> layers(std::size_t(pp), 1);
    using Item = std::pair<double, int>; // time with one more layer, stage
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    for (int s = 0; s < pp; ++s)
        heap.push({fixed[std::size_t(s)] + 2 * perLayer[std::size_t(s)], s});
    for (int left = model.layers - pp; left > 0; --left) {
        const auto [t, s] = heap.top();
        heap.pop();
        ++layers[std::size_t(s)];
        heap.push({t + perLayer[std::size_t(s)], s});
    }
    return layers;
}

} // namespace sa

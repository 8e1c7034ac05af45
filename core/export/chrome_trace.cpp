#include "export/chrome_trace.h"

#include <nlohmann/json.hpp>

namespace sa {

nlohmann::json chromeTrace(const Evaluation& ev, const Cluster& cluster) {
    using nlohmann::json;
    json events = json::array();
    const auto pidOf = [&](int stage) {
        return stage < int(ev.stage_building.size()) ? ev.stage_building[std::size_t(stage)] : 0;
    };
    for (std::size_t b = 0; b < cluster.buildings.size(); ++b)
        events.push_back({{"name", "process_name"},
                          {"ph", "M"},
                          {"pid", b},
                          {"tid", 0},
                          {"args", {{"name", cluster.buildings[b].name}}}});
    for (int s = 0; s < ev.timeline.stages; ++s) {
        events.push_back({{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", pidOf(s)},
                          {"tid", s},
                          {"args", {{"name", "stage " + std::to_string(s)}}}});
        events.push_back({{"name", "thread_sort_index"},
                          {"ph", "M"},
                          {"pid", pidOf(s)},
                          {"tid", s},
                          {"args", {{"sort_index", s}}}});
    }
    for (const TimelineOp& op : ev.timeline.ops) {
        std::string name = toString(op.kind);
        if (op.microbatch >= 0)
            name += " mb" + std::to_string(op.microbatch);
        if (ev.timeline.chunks > 1 && op.microbatch >= 0)
            name += " c" + std::to_string(op.chunk);
        json args = {{"microbatch", op.microbatch}, {"chunk", op.chunk}};
        if (op.kind == OpKind::SendForward || op.kind == OpKind::SendBackward)
            args["cross_building"] = op.cross_building;
        if (op.kind == OpKind::DpSync)
            args["exposed_us"] = op.exposed_s * 1e6;
        // P2P and DP traffic go on their own rows so that they do not
        // overlap the compute blocks of the stage.
        int tid = op.stage;
        if (op.kind == OpKind::SendForward || op.kind == OpKind::SendBackward)
            tid = 1000 + op.stage;
        else if (op.kind == OpKind::DpSync)
            tid = 2000 + op.stage;
        events.push_back({{"name", name},
                          {"cat", toString(op.kind)},
                          {"ph", "X"},
                          {"pid", pidOf(op.stage)},
                          {"tid", tid},
                          {"ts", op.start_s * 1e6},
                          {"dur", (op.end_s - op.start_s) * 1e6},
                          {"args", args}});
    }
    return json{{"traceEvents", events},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"step_time_s", ev.step_time_s}, {"mfu", ev.mfu}, {"generator", "scaleacross"}}}};
}

} // namespace sa

#include "export/sweep_csv.h"

#include <cstdio>

namespace sa {

namespace {

void appendNumber(std::string& out, const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    out += buf;
}

} // namespace

std::string sweepCsv(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points) {
    std::string text;
    for (const auto& a : axes)
        text += csvField(a.path) + ",";
    text += "step_time_s,tokens_per_s,mfu,peak_gib_per_gpu,fits,cross_building_bytes,"
            "pp_exposed_s,dp_exposed_s,bubble_s,error\n";
    for (const auto& p : points) {
        for (double v : p.values) {
            appendNumber(text, "%.6g", v);
            text += ',';
        }
        if (p.evaluation) {
            const Evaluation& e = *p.evaluation;
            char buf[512];
            std::snprintf(buf, sizeof buf, "%.6g,%.6g,%.5f,%.3f,%s,%.6g,%.6g,%.6g,%.6g,\n",
                          e.step_time_s, e.tokens_per_s, e.mfu, e.memory.peak_gib_per_gpu,
                          e.memory.fits ? "true" : "false", e.cross_building_bytes,
                          e.breakdown.pp_exposed_s, e.breakdown.dp_exposed_s, e.breakdown.bubble_s);
            text += buf;
        } else {
            text += ",,,,,,,,," + csvField(p.error, true) + "\n";
        }
    }
    return text;
}

std::string sweepSeriesCsv(const std::string& xColumn, const std::vector<SweepSeries>& series) {
    std::string text = "series," + csvField(xColumn) + ",step_time_s,error\n";
    for (const auto& c : series) {
        const std::string name = csvField(c.name);
        for (std::size_t i = 0; i < c.x.size(); ++i) {
            const bool failed = i < c.errors.size() && !c.errors[i].empty();
            text += name + ',';
            appendNumber(text, "%.6g", c.x[i]);
            text += ',';
            if (failed) {
                text += ',' + csvField(c.errors[i], true);
            } else if (i < c.step_time_s.size()) {
                appendNumber(text, "%.6g", c.step_time_s[i]);
                text += ',';
            } else {
                text += ',';
            }
            text += '\n';
        }
    }
    return text;
}

} // namespace sa

#include "explore/sweep.h"

#include "formats/documents.h"
#include "util/parallel.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

namespace sa {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep))
        out.push_back(cur);
    return out;
}

bool toDouble(const std::string& s, double& v) {
    if (s.empty())
        return false;
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return end && *end == '\0' && std::isfinite(v);
}

constexpr std::size_t kMaxPoints = 10000;

} // namespace

std::optional<SweepAxis> parseSweepAxis(const std::string& spec, std::string* error) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
        *error = "--vary '" + spec +
                 "': expected PATH=RANGE, e.g. links.B1-B2.bandwidth_gbps=100:100000:log10";
        return std::nullopt;
    }
    SweepAxis axis;
    axis.path = spec.substr(0, eq);
    const std::string range = spec.substr(eq + 1);
    auto bad = [&](const std::string& why) {
        *error = "--vary '" + spec + "': " + why;
        return std::nullopt;
    };
    if (range.find(':') == std::string::npos) {
        for (const auto& part : split(range, ',')) {
            double v;
            if (!toDouble(part, v))
                return bad("'" + part + "' is not a number");
            axis.values.push_back(v);
        }
        if (axis.values.empty())
            return bad("no values");
        return axis;
    }
    const auto parts = split(range, ':');
    double a, b;
    if (parts.size() < 3 || !toDouble(parts[0], a) || !toDouble(parts[1], b))
        return bad("expected A:B:log10[:N], A:B:lin[:N], A:B:*F, A:B:+S or v1,v2,...");
    const std::string kind = parts[2];
    if (kind == "log10" || kind == "lin") {
        double n = 10;
        if (parts.size() > 3 && (!toDouble(parts[3], n) || n < 2 || n > double(kMaxPoints)))
            return bad("the number of points must be 2.." + std::to_string(kMaxPoints));
        if (kind == "log10" && (a <= 0 || b <= 0))
            return bad("log10 ranges need positive ends");
        for (int i = 0; i < int(n); ++i) {
            const double t = i / (n - 1);
            axis.values.push_back(kind == "lin"
                                      ? a + (b - a) * t
                                      : std::exp(std::log(a) + (std::log(b) - std::log(a)) * t));
        }
        return axis;
    }
    double step;
    if (kind.size() > 1 && (kind[0] == '*' || kind[0] == '+') && toDouble(kind.substr(1), step)) {
        const bool mul = kind[0] == '*';
        if ((mul && (step <= 1 || a <= 0)) || (!mul && step <= 0) || b < a)
            return bad("the step must move from A towards B");
        for (double v = a; v <= b * (1 + 1e-12); v = mul ? v * step : v + step) {
            axis.values.push_back(v);
            if (axis.values.size() > kMaxPoints)
                return bad("more than " + std::to_string(kMaxPoints) + " points");
        }
        return axis;
    }
    return bad("unknown range kind '" + kind + "'");
}

std::optional<Scenario> withValue(const Scenario& base, const std::string& path, double value,
                                  std::string* error) {
    nlohmann::json doc = toJson(base);
    nlohmann::json* node = &doc;
    const auto segs = split(path, '.');
    // "links.X.key" is short for "cluster.links.X.key".
    std::vector<std::string> walk = segs;
    if (!walk.empty() && (walk[0] == "links" || walk[0] == "buildings" || walk[0] == "gpu_models" ||
                          walk[0] == "technologies"))
        walk.insert(walk.begin(), "cluster");
    for (std::size_t i = 0; i < walk.size(); ++i) {
        const std::string& seg = walk[i];
        if (node->is_object()) {
            auto it = node->find(seg);
            if (it == node->end()) {
                *error = "sweep path '" + path + "': no key '" + seg + "'";
                return std::nullopt;
            }
            node = &*it;
        } else if (node->is_array()) {
            nlohmann::json* found = nullptr;
            for (auto& el : *node)
                if (el.is_object() && el.contains("name") && el["name"] == seg)
                    found = &el;
            double idx;
            if (!found && toDouble(seg, idx) && idx >= 0 && idx < double(node->size()))
                found = &(*node)[std::size_t(idx)];
            if (!found) {
                *error = "sweep path '" + path + "': no element named '" + seg + "'";
                return std::nullopt;
            }
            node = found;
        } else {
            *error = "sweep path '" + path + "': '" + seg + "' is inside a value";
            return std::nullopt;
        }
    }
    if (node->is_number_integer() || node->is_number_unsigned())
        *node = std::int64_t(std::llround(value));
    else if (node->is_number())
        *node = value;
    else {
        *error = "sweep path '" + path + "' is not a number";
        return std::nullopt;
    }
    auto loaded = parseScenario(doc.dump(), "sweep point", ".");
    if (!loaded.ok()) {
        *error = loaded.problems.empty() ? "invalid point" : loaded.problems.front().str();
        return std::nullopt;
    }
    return loaded.value;
}

std::vector<SweepPoint> runSweep(const Scenario& base, const std::vector<SweepAxis>& axes) {
    std::vector<SweepPoint> points;
    std::size_t total = 1;
    for (const auto& a : axes)
        total *= a.values.size();
    points.resize(total);
    for (std::size_t i = 0; i < total; ++i) {
        std::size_t rest = i;
        for (std::size_t k = axes.size(); k-- > 0;) {
            points[i].values.insert(points[i].values.begin(),
                                    axes[k].values[rest % axes[k].values.size()]);
            rest /= axes[k].values.size();
        }
    }
    parallelChunks(total, 1, nullptr, [&](std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t i = begin; i != end; ++i) {
            SweepPoint& p = points[i];
            std::optional<Scenario> s = base;
            for (std::size_t k = 0; k < axes.size() && s; ++k)
                s = withValue(*s, axes[k].path, p.values[k], &p.error);
            if (!s)
                continue;
            EvaluateOptions opts;
            opts.timeline = false;
            auto r = evaluate(*s, opts);
            if (auto* ev = std::get_if<Evaluation>(&r))
                p.evaluation = std::move(*ev);
            else
                p.error = std::get<EvaluationError>(r).str();
        }
    });
    return points;
}

std::optional<Crossover> findCrossover(const Scenario& a, const Scenario& b,
                                       const std::string& path, double lo, double hi,
                                       std::string* error) {
    EvaluateOptions opts;
    opts.timeline = false;
    opts.detail = false;
    // Difference of step times (A - B) at one value of the parameter.
    auto diff = [&](double x, double& out) {
        auto sa_ = withValue(a, path, x, error);
        auto sb = withValue(b, path, x, error);
        if (!sa_ || !sb)
            return false;
        auto ra = evaluate(*sa_, opts);
        auto rb = evaluate(*sb, opts);
        if (!std::holds_alternative<Evaluation>(ra) || !std::holds_alternative<Evaluation>(rb)) {
            *error = "a plan cannot be evaluated at " + path + " = " + std::to_string(x);
            return false;
        }
        out = std::get<Evaluation>(ra).step_time_s - std::get<Evaluation>(rb).step_time_s;
        return true;
    };
    double dlo, dhi;
    if (lo <= 0 || hi <= lo || !diff(lo, dlo) || !diff(hi, dhi))
        return std::nullopt;
    if ((dlo < 0) == (dhi < 0))
        return std::nullopt;
    // Bisection on log(x): the step times are monotone in bandwidth and latency.
    double l = std::log(lo), h = std::log(hi);
    for (int i = 0; i < 40 && h - l > 1e-4; ++i) {
        const double mid = 0.5 * (l + h);
        double dm;
        if (!diff(std::exp(mid), dm))
            return std::nullopt;
        if ((dm < 0) == (dlo < 0))
            l = mid;
        else
            h = mid;
    }
    return Crossover{std::exp(0.5 * (l + h)), dlo < 0};
}

} // namespace sa

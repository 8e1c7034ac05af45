#include "calibrate/fit.h"

#include <algorithm>
#include <cmath>

namespace sa {

AlphaBetaFit fitAlphaBeta(const std::vector<FitPoint>& points) {
    AlphaBetaFit f;
    f.points = int(points.size());
    // Relative residual r_i = (alpha + x_i / B - t_i) / t_i = alpha a_i + beta b_i - 1
    // with a_i = 1 / t_i, b_i = x_i / t_i, beta = 1 / B: ordinary least squares
    // of the constant 1 on the columns a and b (normal equations).
    double aa = 0, ab = 0, bb = 0, a1 = 0, b1 = 0;
    double xMin = 1e300, xMax = 0;
    for (const FitPoint& p : points) {
        if (!(p.t > 0) || !(p.x > 0))
            continue;
        const double a = 1.0 / p.t, b = p.x / p.t;
        aa += a * a;
        ab += a * b;
        bb += b * b;
        a1 += a;
        b1 += b;
        xMin = std::min(xMin, p.x);
        xMax = std::max(xMax, p.x);
    }
    if (points.size() < 2 || !(xMax > xMin)) {
        f.problem = "fewer than two distinct sizes to fit";
        return f;
    }
    const double det = aa * bb - ab * ab;
    double alpha = 0, beta = 0;
    if (det > 0) {
        alpha = (a1 * bb - b1 * ab) / det;
        beta = (aa * b1 - ab * a1) / det;
    }
    if (!(det > 0) || alpha < 0) {
        // alpha >= 0: the constrained optimum lies on alpha = 0.
        f.alpha_clamped = det > 0;
        alpha = 0;
        beta = b1 / bb;
    }
    if (!(beta > 0)) {
        f.problem = "the times do not grow with the size: no bandwidth term to fit (are the "
                    "sizes all latency-bound?)";
        return f;
    }
    f.alpha_s = alpha;
    f.bus_bytes_per_s = 1.0 / beta;
    double sq = 0;
    for (const FitPoint& p : points) {
        const double r = (alpha + p.x * beta - p.t) / p.t;
        sq += r * r;
        f.max_relative_residual = std::max(f.max_relative_residual, std::abs(r));
    }
    f.rms_relative_residual = std::sqrt(sq / double(points.size()));
    f.ok = true;
    return f;
}

std::vector<FitPoint> tablePoints(const NcclTestsTable& t, NcclCollective c, int ranks,
                                  std::vector<std::int64_t>* sizes,
                                  std::vector<int>* skippedLines) {
    std::vector<FitPoint> out;
    const double factor = busFactor(c, ranks);
    for (const NcclTestsRow& row : t.rows) {
        bool used = false;
        for (const NcclTestsResult* r : {&row.out_of_place, &row.in_place}) {
            if (!r->present || r->wrong > 0)
                continue;
            out.push_back({factor * double(row.bytes), r->time_us * 1e-6});
            used = true;
        }
        if (used && sizes)
            sizes->push_back(row.bytes);
        if (!used && skippedLines)
            skippedLines->push_back(row.line);
    }
    if (sizes) {
        std::sort(sizes->begin(), sizes->end());
        sizes->erase(std::unique(sizes->begin(), sizes->end()), sizes->end());
    }
    return out;
}

AlphaBetaFit fitTable(const NcclTestsTable& t) {
    std::vector<std::int64_t> sizes;
    std::vector<int> skipped;
    const NcclCollective c = t.collective.value_or(NcclCollective::AllReduce);
    AlphaBetaFit f = fitAlphaBeta(tablePoints(t, c, t.ranks, &sizes, &skipped));
    f.sizes = std::move(sizes);
    f.skipped_lines = std::move(skipped);
    return f;
}

} // namespace sa

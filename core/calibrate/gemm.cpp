#include "calibrate/gemm.h"
#include "util/text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

namespace sa {

namespace {

using text::trim;

std::vector<std::string> cells(const std::string& line) {
    std::vector<std::string> out;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, ','))
        out.push_back(trim(cell));
    if (!line.empty() && line.back() == ',')
        out.emplace_back();
    return out;
}

std::optional<double> number(const std::string& s) {
    return text::finiteNumber(s);
}

// Relative residuals of the model at efficiency e over the rows.
double sumSquares(GpuModel gpu, const std::vector<const GemmRow*>& rows, GemmPrecision p, double e,
                  double* maxAbs = nullptr) {
    if (p == GemmPrecision::Fp8)
        gpu.gemm_efficiency_fp8 = e;
    else
        gpu.gemm_efficiency = e;
    double sq = 0;
    for (const GemmRow* r : rows) {
        const double rel = (modelGemmTflops(gpu, *r) - r->tflops) / r->tflops;
        sq += rel * rel;
        if (maxAbs)
            *maxAbs = std::max(*maxAbs, std::abs(rel));
    }
    return sq;
}

} // namespace

GemmTable readGemmCsv(const std::string& text, const std::string& file,
                      std::vector<Diagnostic>& problems) {
    GemmTable t;
    t.file = file;
    auto error = [&](int line, const std::string& message) {
        problems.push_back(
            {file, line > 0 ? "line " + std::to_string(line) : std::string{}, message});
    };
    std::map<std::string, std::size_t> col;
    int headerLine = 0;
    std::istringstream in(text);
    std::string raw;
    int lineNo = 0;
    const std::size_t before = problems.size();
    while (std::getline(in, raw)) {
        ++lineNo;
        const std::string line = trim(raw);
        if (line.empty())
            continue;
        if (line[0] == '#') {
            const std::string c = trim(line.substr(1));
            if (c.rfind("scaleacross-gpu:", 0) == 0)
                t.gpu_model = trim(c.substr(16));
            continue;
        }
        const std::vector<std::string> f = cells(line);
        if (headerLine == 0) {
            headerLine = lineNo;
            for (std::size_t i = 0; i < f.size(); ++i) {
                if (col.count(f[i]))
                    error(lineNo, "column '" + f[i] + "' appears twice");
                col[f[i]] = i;
            }
            for (const char* need : {"m", "n", "k", "dtype", "tflops"})
                if (!col.count(need))
                    error(lineNo, std::string("the header has no '") + need +
                                      "' column (expected m,n,k,dtype,tflops)");
            for (const auto& [name, i] : col)
                if (name != "m" && name != "n" && name != "k" && name != "dtype" &&
                    name != "tflops")
                    error(lineNo, "unknown column '" + name + "' (expected m,n,k,dtype,tflops)");
            if (problems.size() != before)
                return t;
            continue;
        }
        if (f.size() != col.size()) {
            error(lineNo, "a row of " + std::to_string(f.size()) + " cells, the header has " +
                              std::to_string(col.size()));
            continue;
        }
        GemmRow r;
        r.line = lineNo;
        bool ok = true;
        using Extent = std::pair<const char*, double*>;
        for (auto [name, out] : {Extent{"m", &r.m}, Extent{"n", &r.n}, Extent{"k", &r.k}}) {
            const std::string& s = f[col[name]];
            const auto v = number(s);
            if (!v || *v < 1 || *v != std::floor(*v) || *v > 1e9) {
                error(lineNo,
                      std::string(name) + " must be an integer from 1 to 1e9, got '" + s + "'");
                ok = false;
            } else {
                *out = *v;
            }
        }
        const std::string& dt = f[col["dtype"]];
        if (dt == "bf16")
            r.precision = GemmPrecision::Bf16;
        else if (dt == "fp8")
            r.precision = GemmPrecision::Fp8;
        else {
            error(lineNo, "dtype must be bf16 or fp8, got '" + dt + "'");
            ok = false;
        }
        const auto tf = number(f[col["tflops"]]);
        if (!tf || !(*tf > 0)) {
            error(lineNo, "tflops must be a positive number, got '" + f[col["tflops"]] + "'");
            ok = false;
        } else {
            r.tflops = *tf;
        }
        if (ok)
            t.rows.push_back(r);
    }
    if (problems.size() == before) {
        if (headerLine == 0)
            error(0, "no header line (m,n,k,dtype,tflops)");
        else if (t.rows.empty())
            error(headerLine, "a header without rows");
    }
    return t;
}

double modelGemmTflops(const GpuModel& gpu, const GemmRow& row) {
    // A GEMM benchmark runs at the boost clock: the efficiency fitted to it
    // is the one the GPU model's efficiencies stand for (docs/CALIBRATION.md).
    const GpuModel bench = atBoostClock(gpu);
    const GemmRate rate = gemmRate(bench, row.precision);
    const double t = gemmTime(bench, rate, row.m, row.n, row.k);
    return t > 0 ? 2.0 * row.m * row.n * row.k / t / 1e12 : 0.0;
}

GemmFit fitGemmEfficiency(const GpuModel& gpu, const std::vector<GemmRow>& rows,
                          GemmPrecision precision) {
    GemmFit f;
    f.precision = precision;
    std::vector<const GemmRow*> use;
    for (const GemmRow& r : rows)
        if (r.precision == precision)
            use.push_back(&r);
    f.points = int(use.size());
    if (use.empty()) {
        f.problem = "no rows of this dtype";
        return f;
    }
    if (precision == GemmPrecision::Fp8 && !(gpu.peak_tflops_fp8 > 0)) {
        f.problem = "the GPU model has no FP8 peak (peak_tflops.fp8)";
        return f;
    }
    // One parameter: a scan over (0, 1] brackets the minimum, golden-section
    // search refines it (the model's TFLOP/s rise monotonically with the
    // efficiency, so the sum of squares has one minimum in practice).
    constexpr int kScan = 1000;
    int best = 1;
    double bestSq = 1e300;
    for (int i = 1; i <= kScan; ++i) {
        const double sq = sumSquares(gpu, use, precision, double(i) / kScan);
        if (sq < bestSq) {
            bestSq = sq;
            best = i;
        }
    }
    double lo = double(std::max(1, best - 1)) / kScan,
           hi = double(std::min(kScan, best + 1)) / kScan;
    const double g = (std::sqrt(5.0) - 1) / 2;
    for (int it = 0; it < 60; ++it) {
        const double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
        if (sumSquares(gpu, use, precision, a) < sumSquares(gpu, use, precision, b))
            hi = b;
        else
            lo = a;
    }
    f.efficiency = std::min(1.0, 0.5 * (lo + hi));
    f.at_bound = best == kScan && f.efficiency > 0.999;
    const double sq = sumSquares(gpu, use, precision, f.efficiency, &f.max_relative_residual);
    f.rms_relative_residual = std::sqrt(sq / double(use.size()));
    f.ok = true;
    return f;
}

} // namespace sa

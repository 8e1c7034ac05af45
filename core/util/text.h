#pragma once
// Small strict text helpers for the readers of measurement files
// (core/calibrate): a cell without surrounding blanks, a whole-string number.

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

namespace sa::text {

// `s` without leading and trailing spaces, tabs and carriage returns.
inline std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

// The finite number `s` is, all of it; nullopt for "", "1.5x", "nan", "inf", 1e999.
inline std::optional<double> finiteNumber(const std::string& s) {
    if (s.empty())
        return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

} // namespace sa::text

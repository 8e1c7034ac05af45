#include "validators.h"

#include <charconv>
#include <cstdlib>

namespace sa::cli {

namespace {
bool parseInt(const std::string& s, long long lo, long long hi, long long& out) {
    const char* b = s.data();
    const char* e = b + s.size();
    auto [p, ec] = std::from_chars(b, e, out);
    return ec == std::errc() && p == e && out >= lo && out <= hi;
}
} // namespace

CLI::Validator integerIn(long long lo, long long hi, std::string expected) {
    if (expected.empty())
        expected = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
    return CLI::Validator(
        [lo, hi, expected](std::string& s) -> std::string {
            long long v = 0;
            if (!parseInt(s, lo, hi, v))
                return "expected " + expected + ", got '" + s + "'";
            s = std::to_string(v);
            return {};
        },
        "");
}

std::optional<Shard> parseShard(const std::string& s) {
    const auto slash = s.find('/');
    long long i = 0, n = 0;
    if (slash == std::string::npos || !parseInt(s.substr(0, slash), 0, 1000000, i) ||
        !parseInt(s.substr(slash + 1), 1, 1000000, n) || i >= n)
        return std::nullopt;
    return Shard{int(i), int(n)};
}

CLI::Validator shardSpec() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            return parseShard(s) ? std::string() : "expected I/N with 0 <= I < N, got '" + s + "'";
        },
        "");
}

std::optional<std::pair<std::string, double>> parseAssignment(const std::string& s) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
        return std::nullopt;
    const std::string text = s.substr(eq + 1);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (*end != '\0')
        return std::nullopt;
    return std::pair{s.substr(0, eq), value};
}

CLI::Validator assignment() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            return parseAssignment(s) ? std::string() : "expected PATH=NUMBER, got '" + s + "'";
        },
        "");
}

} // namespace sa::cli

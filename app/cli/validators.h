#pragma once
// CLI11 validators for the options of the subcommands. Each failure reads
// "--option: expected ..., got 'value'" (CLI11 prefixes the option's name).

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sa::cli {

// A decimal integer from `lo` to `hi`, rewritten in canonical form for
// CLI11's conversion (which would read "010" as octal and accept "+5" or
// " 5"). `expected` replaces "an integer from LO to HI" in the message.
CLI::Validator integerIn(long long lo, long long hi, std::string expected = {});

// One of the names, rewritten as its value so the option can be bound to
// an enum: "expected a, b or c, got 'x'".
template <class T> CLI::Validator oneOf(std::vector<std::pair<std::string, T>> choices) {
    return CLI::Validator(
        [choices = std::move(choices)](std::string& s) -> std::string {
            std::string list;
            for (std::size_t i = 0; i < choices.size(); ++i) {
                if (s == choices[i].first) {
                    s = std::to_string(static_cast<long long>(choices[i].second));
                    return {};
                }
                list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i].first;
            }
            return "expected " + list + ", got '" + s + "'";
        },
        "");
}

// --shard I/N: slice I of N, 0 <= I < N.
struct Shard {
    int index = 0;
    int count = 1;
};
std::optional<Shard> parseShard(const std::string& s);
CLI::Validator shardSpec();

// --set PATH=NUMBER.
std::optional<std::pair<std::string, double>> parseAssignment(const std::string& s);
CLI::Validator assignment();

} // namespace sa::cli

#pragma once
// A small argument reader shared by the CLI subcommands: "--key value",
// "--key=value", boolean flags and positional arguments.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sa::cli {

class Args {
public:
    // `flags` are options without a value (e.g. "--json").
    Args(int argc, char** argv, int first, const std::set<std::string>& flags);

    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::optional<std::string> value(const std::string& name) const;
    std::vector<std::string> values(const std::string& name) const; // repeated options
    const std::vector<std::string>& positional() const { return positional_; }
    // Options seen that are not in `known`; for "unknown option" errors.
    std::vector<std::string> unknown(const std::set<std::string>& known) const;
    const std::string& error() const { return error_; }

private:
    std::multimap<std::string, std::string> values_;
    std::vector<std::string> positional_;
    std::string error_;
};

// Exit codes of the CLI.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1; // a run that could not finish (I/O, internal)
inline constexpr int kExitBadInput = 2;

} // namespace sa::cli

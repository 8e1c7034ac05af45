#pragma once
// How `scaleacross ... --help` reads: the usage lines and what the command
// does first, then the positionals and options CLI11 lists from their
// declarations, then the footer (exit codes).

#include <CLI/CLI.hpp>

#include <string>

namespace sa::cli {

// Width of the option column; descriptions are wrapped by hand (with "\n")
// to about 54 characters so that the help fits 80 columns.
inline constexpr std::size_t kHelpColumn = 26;

class CommandHelp : public CLI::Formatter {
public:
    // `usage` is what follows "Usage: " (continuation lines indented by the
    // caller); `about` is the paragraph below it.
    CommandHelp(std::string usage, std::string about);
    std::string make_description(const CLI::App*) const override { return {}; }
    std::string make_usage(const CLI::App*, std::string) const override;
    std::string make_help(const CLI::App* app, std::string name,
                          CLI::AppFormatMode mode) const override;

private:
    std::string usage_;
    std::string about_;
};

// Gives `cmd` its help: usage, paragraph and footer (and, for a command,
// "-h,--help  this text").
void describe(CLI::App& cmd, std::string usage, std::string about, std::string footer);

} // namespace sa::cli

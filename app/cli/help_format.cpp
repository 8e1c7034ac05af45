#include "help_format.h"

#include <memory>

namespace sa::cli {

CommandHelp::CommandHelp(std::string usage, std::string about)
    : usage_(std::move(usage))
    , about_(std::move(about)) {
    column_width(kHelpColumn);
}

std::string CommandHelp::make_usage(const CLI::App*, std::string) const {
    std::string out = "Usage: " + usage_ + "\n";
    if (!about_.empty())
        out += "\n" + about_ + "\n";
    return out;
}

std::string CommandHelp::make_help(const CLI::App* app, std::string name,
                                   CLI::AppFormatMode mode) const {
    // CLI11 ends each group but the last with a blank line, also the one
    // before a hidden group (trace's --json): one blank line at most.
    std::string out = CLI::Formatter::make_help(app, std::move(name), mode);
    for (auto at = out.find("\n\n\n"); at != std::string::npos; at = out.find("\n\n\n", at))
        out.erase(at, 1);
    return out;
}

void describe(CLI::App& cmd, std::string usage, std::string about, std::string footer) {
    if (cmd.get_parent() != nullptr)
        cmd.set_help_flag("-h,--help", "this text");
    cmd.formatter(std::make_shared<CommandHelp>(std::move(usage), std::move(about)));
    cmd.footer(std::move(footer));
}

} // namespace sa::cli

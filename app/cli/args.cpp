#include "args.h"

namespace sa::cli {

Args::Args(int argc, char** argv, int first, const std::set<std::string>& flags) {
    for (int i = first; i < argc; ++i) {
        std::string a = argv[i];
        if (a.size() > 2 && a.rfind("--", 0) == 0) {
            std::string key = a.substr(2);
            std::string val;
            if (auto eq = key.find('='); eq != std::string::npos) {
                val = key.substr(eq + 1);
                key = key.substr(0, eq);
            } else if (!flags.count(key)) {
                if (i + 1 >= argc) {
                    error_ = "option --" + key + " needs a value";
                    continue;
                }
                val = argv[++i];
            }
            values_.emplace(key, val);
        } else if (a.size() == 2 && a[0] == '-' && a[1] != '-') {
            // short options: -o FILE, -h
            std::string key(1, a[1]);
            if (key == "h") {
                values_.emplace("help", "");
            } else if (i + 1 < argc) {
                values_.emplace(key, argv[++i]);
            } else {
                error_ = "option -" + key + " needs a value";
            }
        } else {
            positional_.push_back(a);
        }
    }
}

std::optional<std::string> Args::value(const std::string& name) const {
    auto range = values_.equal_range(name);
    if (range.first == range.second)
        return std::nullopt;
    return std::prev(range.second)->second;
}

std::vector<std::string> Args::values(const std::string& name) const {
    std::vector<std::string> out;
    auto range = values_.equal_range(name);
    for (auto it = range.first; it != range.second; ++it)
        out.push_back(it->second);
    return out;
}

std::vector<std::string> Args::unknown(const std::set<std::string>& known) const {
    std::vector<std::string> out;
    for (const auto& [k, v] : values_)
        if (!known.count(k))
            out.push_back(k);
    return out;
}

} // namespace sa::cli

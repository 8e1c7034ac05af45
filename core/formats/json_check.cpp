#include "formats/json_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sa::formats {

std::string childPath(const std::string& parent, const std::string& key) {
    std::string out = parent;
    out += '/';
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

std::string childPath(const std::string& parent, std::size_t index) {
    return parent + '/' + std::to_string(index);
}

std::string formatNumber(double v) {
    if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 1e15) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f", v);
        return buf;
    }
    return json(v).dump();
}

std::string describe(const json& v) {
    switch (v.type()) {
    case json::value_t::string: {
        const auto& s = v.get_ref<const std::string&>();
        constexpr std::size_t kShown = 60;
        if (s.size() > kShown)
            return "'" + s.substr(0, kShown) + "...'";
        return "'" + s + "'";
    }
    case json::value_t::object:
        return "an object";
    case json::value_t::array:
        return "an array";
    case json::value_t::null:
        return "null";
    default:
        return v.dump();
    }
}

std::string joined(const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i)
            out += sep;
        out += items[i];
    }
    return out;
}

void Diagnostics::report(const std::string& path, const std::string& message) {
    if (list_.size() >= kMaxDiagnostics) {
        ++dropped_;
        return;
    }
    list_.push_back({file_, prefix_ + path, message});
}

void Diagnostics::error(const std::string& path, const std::string& message) {
    report(path, message);
    bad_.insert(path);
}

bool Diagnostics::isBad(const std::string& path) const {
    if (bad_.empty()) // a sound document: no copy of the path to walk
        return false;
    std::string p = path;
    for (;;) {
        if (bad_.count(p))
            return true;
        if (p.empty())
            return false;
        p.erase(p.rfind('/'));
    }
}

bool Diagnostics::touched(const std::string& path) const {
    if (bad_.empty())
        return false;
    if (isBad(path))
        return true;
    const std::string below = path + '/';
    auto it = bad_.lower_bound(below);
    return it != bad_.end() && it->compare(0, below.size(), below) == 0;
}

std::vector<Diagnostic> Diagnostics::take() {
    std::vector<Diagnostic> out = std::move(list_);
    if (dropped_ > 0)
        out.push_back({file_, prefix_, std::to_string(dropped_) + " more problems not shown"});
    list_.clear();
    dropped_ = 0;
    return out;
}

std::string IntRange::rule() const {
    if (closed)
        return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    if (min == 1)
        return "a positive integer";
    if (min == 0)
        return "a non-negative integer";
    return "an integer >= " + std::to_string(min);
}

std::string NumberRange::ruleFor(std::optional<double> v) const {
    if (sanityMax && max && v && std::isfinite(*v) && (maxOpen ? *v >= *max : *v > *max))
        return rule() + " no larger than " + formatNumber(*max);
    return rule();
}

std::string NumberRange::rule() const {
    if (max && !sanityMax) {
        return std::string("a number in ") + (minOpen ? "(" : "[") + formatNumber(min) + ", " +
               formatNumber(*max) + (maxOpen ? ")" : "]");
    }
    return std::string("a number ") + (minOpen ? "> " : ">= ") + formatNumber(min);
}

bool NumberRange::contains(double v) const {
    if (!std::isfinite(v))
        return false;
    if (minOpen ? v <= min : v < min)
        return false;
    if (max && (maxOpen ? v >= *max : v > *max))
        return false;
    return true;
}

bool checkInt(Diagnostics& d, const std::string& path, std::int64_t v, const IntRange& range) {
    if (v >= range.min && v <= range.max)
        return true;
    if (d.isBad(path))
        return false;
    if (v > range.max && !range.closed)
        d.error(path, "must be " + range.rule() + " no larger than " + std::to_string(range.max) +
                          ", got " + std::to_string(v));
    else
        d.error(path, "must be " + range.rule() + ", got " + std::to_string(v));
    return false;
}

bool checkNumber(Diagnostics& d, const std::string& path, double v, const NumberRange& range) {
    if (range.contains(v))
        return true;
    if (!d.isBad(path))
        d.error(path, "must be " + range.ruleFor(v) + ", got " + formatNumber(v));
    return false;
}

bool checkName(Diagnostics& d, const std::string& path, const std::string& v) {
    if (!v.empty())
        return true;
    if (!d.isBad(path))
        d.error(path, "must be a non-empty string");
    return false;
}

namespace {

std::size_t editDistance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

} // namespace

ObjectReader::ObjectReader(Diagnostics& d, const json* j, std::string path)
    : diag_(d)
    , j_(j && j->is_object() ? j : nullptr)
    , path_(std::move(path)) {}

const json* ObjectReader::find(const std::string& key, Presence p) {
    known_.insert(key);
    if (!j_)
        return nullptr;
    auto it = j_->find(key);
    if (it == j_->end()) {
        if (p == Presence::Required) {
            diag_.report(path_, "missing required key '" + key + "'");
            diag_.markBad(pathOf(key));
        }
        return nullptr;
    }
    return &*it;
}

bool ObjectReader::readInteger(const json& v, const std::string& path, const IntRange& range,
                               Diagnostics& d, std::int64_t& out) {
    const auto tooBig = [&] {
        if (range.closed)
            d.error(path, "must be " + range.rule() + ", got " + describe(v));
        else
            d.error(path, "must be " + range.rule() + " no larger than " +
                              std::to_string(range.max) + ", got " + describe(v));
        return false;
    };
    std::int64_t x = 0;
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(range.max))
            return tooBig();
        x = static_cast<std::int64_t>(u);
    } else if (v.is_number_integer()) {
        x = v.get<std::int64_t>();
    } else {
        if (v.is_number_float()) {
            const double f = v.get<double>();
            if (std::floor(f) == f && f > static_cast<double>(range.max))
                return tooBig();
        }
        d.error(path, "must be " + range.rule() + ", got " + describe(v));
        return false;
    }
    if (x < range.min) {
        d.error(path, "must be " + range.rule() + ", got " + describe(v));
        return false;
    }
    if (x > range.max)
        return tooBig();
    out = x;
    return true;
}

bool ObjectReader::number(const std::string& key, double& out, Presence p, NumberRange range) {
    const json* v = find(key, p);
    if (!v)
        return false;
    if (!v->is_number() || !range.contains(v->get<double>())) {
        diag_.error(pathOf(key), "must be " +
                                     range.ruleFor(v->is_number() ? std::optional(v->get<double>())
                                                                  : std::nullopt) +
                                     ", got " + describe(*v));
        return false;
    }
    out = v->get<double>();
    return true;
}

bool ObjectReader::boolean(const std::string& key, bool& out, Presence p) {
    const json* v = find(key, p);
    if (!v)
        return false;
    if (!v->is_boolean()) {
        diag_.error(pathOf(key), "must be true or false, got " + describe(*v));
        return false;
    }
    out = v->get<bool>();
    return true;
}

bool ObjectReader::string(const std::string& key, std::string& out, Presence p, bool nonEmpty) {
    const json* v = find(key, p);
    if (!v)
        return false;
    if (!v->is_string()) {
        diag_.error(pathOf(key), std::string("must be a ") + (nonEmpty ? "non-empty " : "") +
                                     "string, got " + describe(*v));
        return false;
    }
    if (nonEmpty && v->get_ref<const std::string&>().empty()) {
        diag_.error(pathOf(key), "must be a non-empty string");
        return false;
    }
    out = v->get<std::string>();
    return true;
}

ObjectReader ObjectReader::object(const std::string& key, Presence p) {
    const json* v = find(key, p);
    if (v && !v->is_object()) {
        diag_.error(pathOf(key), "must be an object, got " + describe(*v));
        v = nullptr;
    }
    return ObjectReader(diag_, v, pathOf(key));
}

const json* ObjectReader::array(const std::string& key, Presence p) {
    const json* v = find(key, p);
    if (v && !v->is_array()) {
        diag_.error(pathOf(key), "must be an array, got " + describe(*v));
        return nullptr;
    }
    return v;
}

void ObjectReader::finish() {
    if (!j_)
        return;
    // Suggestions cost an edit distance per known key; a hostile object with
    // thousands of long keys gets plain messages after the first few.
    constexpr int kSuggestions = 20;
    constexpr std::size_t kLongestSuggested = 64;
    int suggested = 0;
    for (auto it = j_->begin(); it != j_->end(); ++it) {
        const std::string& key = it.key();
        if (known_.count(key))
            continue;
        std::string message = "unknown key " + describe(json(key));
        if (key.size() > kLongestSuggested || suggested++ >= kSuggestions) {
            diag_.report(path_, message);
            continue;
        }
        const std::size_t allowed =
            std::max<std::size_t>(1, std::min<std::size_t>(2, key.size() / 3));
        // Suggest a key only when one known key is clearly the closest.
        std::string best;
        std::size_t bestDistance = allowed + 1;
        bool tie = false;
        for (const auto& k : known_) {
            const std::size_t dist = editDistance(key, k);
            if (dist < bestDistance) {
                bestDistance = dist;
                best = k;
                tie = false;
            } else if (dist == bestDistance) {
                tie = true;
            }
        }
        if (!best.empty() && !tie)
            message += " (did you mean '" + best + "'?)";
        diag_.report(path_, message);
    }
}

const json* requireObject(Diagnostics& d, const json& v, const std::string& path) {
    if (v.is_object())
        return &v;
    d.error(path, "must be an object, got " + describe(v));
    return nullptr;
}

} // namespace sa::formats

// SPDX-License-Identifier: MIT
// Spec-string parsing.
#include <memfail/core/spec.hpp>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <memfail/core/text.hpp>

namespace memfail {

Result<Spec> Spec::parse(std::string_view input) {
    const std::string_view trimmed = text::trim(input);
    Spec spec;
    const std::size_t colon = trimmed.find(':');
    spec.name = std::string(text::trim(trimmed.substr(0, colon)));
    if (spec.name.empty())
        return make_error(ErrorKind::invalid_input,
                          "spec '" + std::string(input) + "' has no name before ':'");
    if (colon == std::string_view::npos) return spec;
    const std::string_view rest = trimmed.substr(colon + 1);
    if (text::trim(rest).empty()) return spec;
    for (const std::string& part : text::split(rest, ',')) {
        const std::size_t eq = part.find('=');
        if (eq == std::string::npos)
            return make_error(ErrorKind::invalid_input, "option '" + part + "' in spec '" +
                                                            std::string(input) +
                                                            "' is not of the form key=value");
        std::string key(text::trim(std::string_view(part).substr(0, eq)));
        std::string value(text::trim(std::string_view(part).substr(eq + 1)));
        if (key.empty())
            return make_error(ErrorKind::invalid_input,
                              "empty option name in spec '" + std::string(input) + "'");
        if (spec.options.count(key))
            return make_error(ErrorKind::invalid_input, "option '" + key + "' given twice in spec '" +
                                                            std::string(input) + "'");
        spec.options.emplace(std::move(key), std::move(value));
    }
    return spec;
}

std::string Spec::to_string() const {
    std::string out = name;
    char sep = ':';
    for (const auto& [key, value] : options) {
        out += sep;
        out += key + "=" + value;
        sep = ',';
    }
    return out;
}

std::string Spec::get(const std::string& key, const std::string& fallback) const {
    auto it = options.find(key);
    return it == options.end() ? fallback : it->second;
}

Result<std::int64_t> Spec::get_int(const std::string& key, std::int64_t fallback) const {
    auto it = options.find(key);
    if (it == options.end()) return fallback;
    try {
        std::size_t used = 0;
        const long long v = std::stoll(it->second, &used);
        if (used != it->second.size()) throw std::invalid_argument("trailing characters");
        return static_cast<std::int64_t>(v);
    } catch (const std::exception&) {
        return make_error(ErrorKind::invalid_input, "option '" + key + "' of '" + name +
                                                        "' must be a whole number, got '" +
                                                        it->second + "'");
    }
}

Result<std::chrono::milliseconds> Spec::get_duration(const std::string& key,
                                                     std::chrono::milliseconds fallback) const {
    auto it = options.find(key);
    if (it == options.end()) return fallback;
    const std::string& text = it->second;
    const auto bad = [&](const char* why) {
        return make_error(ErrorKind::invalid_input, "option '" + key + "' of '" + name + "' must be " + why +
                                                        ", got '" + text + "'");
    };
    std::size_t digits = 0;
    while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
        ++digits;
    const std::string number = text.substr(0, digits);
    const std::string unit = text.substr(digits);
    char* end = nullptr;
    const double value = number.empty() ? 0 : std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size())
        return bad("a duration such as 250ms, 30s or 2m");
    double ms = 0;
    if (unit == "ms") ms = value;
    else if (unit.empty() || unit == "s") ms = value * 1000;
    else if (unit == "m") ms = value * 60'000;
    else return bad("a duration such as 250ms, 30s or 2m");
    if (!(ms >= 1) || ms > 24.0 * 3600 * 1000) return bad("between 1ms and 24 hours");
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ms)));
}

Result<bool> Spec::get_bool(const std::string& key, bool fallback) const {
    auto it = options.find(key);
    if (it == options.end()) return fallback;
    const std::string v = text::to_lower(it->second);
    if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
    if (v == "false" || v == "0" || v == "no" || v == "off") return false;
    return make_error(ErrorKind::invalid_input, "option '" + key + "' of '" + name +
                                                    "' must be true or false, got '" + it->second + "'");
}

Result<std::string> Spec::get_choice(const std::string& key, const std::string& fallback,
                                     const std::vector<std::string>& allowed) const {
    const std::string value = get(key, fallback);
    for (const auto& a : allowed)
        if (a == value) return value;
    std::string hint = did_you_mean(value, allowed);
    return make_error(ErrorKind::invalid_input,
                      "option '" + key + "' of '" + name + "' must be one of " +
                          text::join(allowed, ", ") + "; got '" + value + "'" +
                          (hint.empty() ? "" : " (" + hint + ")"));
}

Result<void> Spec::check_keys(const std::set<std::string>& known) const {
    for (const auto& [key, value] : options) {
        if (known.count(key)) continue;
        std::vector<std::string> candidates(known.begin(), known.end());
        std::string hint = did_you_mean(key, candidates);
        return make_error(ErrorKind::invalid_input,
                          "unknown option '" + key + "' for '" + name + "'" +
                              (hint.empty() ? "" : " (" + hint + ")") + "; known options: " +
                              (known.empty() ? "none" : text::join(candidates, ", ")));
    }
    return {};
}

std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t best_distance = 3;  // farther than two edits is not a typo
    for (const auto& c : candidates) {
        const std::size_t d = text::edit_distance(given, c);
        if (d < best_distance) {
            best_distance = d;
            best = c;
        }
    }
    return best.empty() ? std::string{} : "did you mean '" + best + "'?";
}

}  // namespace memfail

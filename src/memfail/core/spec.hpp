// SPDX-License-Identifier: MIT
// Spec strings name a plug-in and its options: "verbatim:chunk=sentence,retriever=bm25".
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>

namespace memfail {

struct Spec {
    std::string name;
    std::map<std::string, std::string> options;

    // Parses "name" or "name:key=value,key=value". Errors (invalid_input) name the offending part.
    static Result<Spec> parse(std::string_view text);
    // Canonical text: options sorted by key. Two equal specs give the same text.
    std::string to_string() const;

    bool has(const std::string& key) const { return options.count(key) > 0; }
    std::string get(const std::string& key, const std::string& fallback) const;
    Result<std::int64_t> get_int(const std::string& key, std::int64_t fallback) const;
    Result<bool> get_bool(const std::string& key, bool fallback) const;
    // A duration: "250ms", "30s", "2m", or a bare number of seconds ("1.5" too), between 1 ms and
    // 24 hours; anything else is invalid_input naming the option.
    Result<std::chrono::milliseconds> get_duration(const std::string& key, std::chrono::milliseconds fallback) const;
    // Fails (invalid_input) when `key` holds a value outside `allowed`.
    Result<std::string> get_choice(const std::string& key, const std::string& fallback,
                                   const std::vector<std::string>& allowed) const;
    // Fails (invalid_input) on any option not in `known`, with a "did you mean" hint.
    Result<void> check_keys(const std::set<std::string>& known) const;
};

// "did you mean 'x'?" for the closest of `candidates` to `given`, or empty when none is close.
std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates);

}  // namespace memfail

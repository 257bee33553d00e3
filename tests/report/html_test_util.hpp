// SPDX-License-Identifier: MIT
// Helpers shared by the report tests that read rendered HTML (the HTML, integrity and profile
// reports): finding text in a page, and starting a run in a results file the way the fixtures do.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include <memfail/store/results_db.hpp>
#include <nlohmann/json.hpp>

namespace memfail::report::testing {

// How many times `needle` occurs in `text`, without overlaps.
inline std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

// The text between `from` and the next `to` after it.
inline std::string between(const std::string& text, const std::string& from, const std::string& to) {
    const auto a = text.find(from);
    if (a == std::string::npos) return {};
    const auto b = text.find(to, a + from.size());
    return b == std::string::npos ? std::string() : text.substr(a + from.size(), b - a - from.size());
}

// The body of the page's <section id="`id`">, or empty.
inline std::string section(const std::string& html, const std::string& id) {
    return between(html, "<section id=\"" + id + "\">", "</section>");
}

// A running run of `system` with `config`, at the fixtures' fixed start time and code version.
inline std::int64_t start_run(store::ResultsDb& db, const std::string& system, const nlohmann::json& config,
                              const std::string& config_hash) {
    store::RunRecord run;
    run.status = "running";
    run.system_spec = system;
    run.config_json = config.dump();
    run.config_hash = config_hash;
    run.code_version = "0.1.0-test";
    run.started_at = "2026-01-01T00:00:00Z";
    return db.create_run(run).value();
}

}  // namespace memfail::report::testing

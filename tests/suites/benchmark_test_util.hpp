// SPDX-License-Identifier: MIT
// Helpers shared by the published benchmarks' importer tests (test_benchmarks.cpp, test_halumem.cpp):
// import a file whole, read its notes, check its scenarios against every rule, find a probe.
#pragma once
#include <memfail/data/validate.hpp>
#include <memfail/suites/benchmarks/benchmarks_suite.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace memfail::testing::benchmarks {

// Every note, one per line, for failure messages.
inline std::string describe(const std::vector<suites::ImportNote>& notes) {
    std::string out;
    for (const auto& n : notes) out += n.file + " | " + n.json_path + " | " + n.message + "\n";
    return out;
}

// Whether a note sits at exactly `path` and says `words`.
inline bool noted(const std::vector<suites::ImportNote>& notes, const std::string& path, const std::string& words) {
    for (const auto& n : notes)
        if (n.json_path == path && n.message.find(words) != std::string::npos) return true;
    return false;
}

// Structural rules plus the benchmarks suite's own.
inline std::vector<data::Violation> violations_of(const data::Scenario& s) {
    std::vector<data::Violation> out;
    data::validate_structure(s, 0, out);
    suites::benchmarks::benchmarks_suite().validate(s, 0, out);
    return out;
}

struct Imported {
    std::vector<data::Scenario> scenarios;
    suites::ImportResult result;
};

// `path` imported as `format`, every scenario kept (the import must succeed).
inline Imported import_file(const std::string& format, const std::string& path) {
    Imported out;
    auto r = suites::benchmarks::benchmarks_suite().import_each(format, path, [&](data::Scenario&& s) -> Result<void> {
        out.scenarios.push_back(std::move(s));
        return {};
    });
    EXPECT_TRUE(r) << r.error().describe();
    if (r) out.result = std::move(*r);
    return out;
}

inline const data::Probe& probe(const data::Scenario& s, const std::string& id) {
    for (const auto& p : s.probes)
        if (p.id == id) return p;
    ADD_FAILURE() << "no probe " << id << " in " << s.id;
    static const data::Probe none;
    return none;
}

}  // namespace memfail::testing::benchmarks

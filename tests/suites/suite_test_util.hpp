// SPDX-License-Identifier: MIT
// Helpers shared by the dataset tests: every violation of a scenario, and lookups over them.
#pragma once
#include <memfail/data/validate.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <string>
#include <vector>

namespace memfail::testing {

// Structural violations plus the scenario's own dataset rules.
inline std::vector<data::Violation> all_violations(const data::Scenario& s) {
    std::vector<data::Violation> out;
    data::validate_structure(s, 0, out);
    suites::memfail_suite::check_dataset_rules(s, 0, out);
    return out;
}

// The first ten violations, one per line, for failure messages.
inline std::string describe(const std::vector<data::Violation>& vs) {
    std::string out;
    for (std::size_t i = 0; i < vs.size() && i < 10; ++i) out += vs[i].field + ": " + vs[i].message + "\n";
    return out;
}

inline bool has_violation(const std::vector<data::Violation>& vs, const std::string& field) {
    for (const auto& v : vs)
        if (v.field == field) return true;
    return false;
}

}  // namespace memfail::testing

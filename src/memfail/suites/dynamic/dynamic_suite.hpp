// SPDX-License-Identifier: MIT
// The long-horizon suite (DynamicMem): months of multi-app logs, a profile never stated outright,
// quarterly checkpoints, field-level grading and attribution of every miss by rule.
#pragma once
#include <memfail/suites/suite.hpp>

namespace memfail::suites::dynamic {

const Suite& dynamic_suite();

// The suite's own validation rules beyond data::validate_structure (checkpoints in order, each
// probe's checkpoint named, the profile's evidence real app logs stored by its checkpoint).
void validate_dynamic(const data::Scenario& scenario, std::size_t line, std::vector<data::Violation>& out);

}  // namespace memfail::suites::dynamic

// SPDX-License-Identifier: MIT
// The programmatic write-integrity dataset: all 16 WRIT categories, exact ground truth (a ledger whose
// every value cites the message that states it), deterministic per seed. Words and templates are
// data files under lexicon/, embedded at build time.
#pragma once
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/suites/suite.hpp>

namespace memfail::suites::writ {

inline constexpr const char* k_writ_generator_version = "writ-gen/1";

// The 16 categories in WRIT's order: drift, temporal, provenance, constraint, entity, forgetting,
// abstention, update, multi_hop, work_state, lifecycle, trust_hierarchy, extraction_drift,
// failure_injection, certification, closure.
const std::vector<std::string>& categories();

// Dataset name of a category: "writ_<category>".
std::string dataset_name(const std::string& category);

// The scenarios of one category. Parameters: scenarios=N (default 25, 1..10000).
Result<std::vector<data::Scenario>> generate_category(const std::string& category, const GenerateOptions& options);

}  // namespace memfail::suites::writ

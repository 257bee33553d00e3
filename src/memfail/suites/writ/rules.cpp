// SPDX-License-Identifier: MIT
// Placeholder until the write-integrity rules land (this session).
#include <memfail/suites/writ/rules.hpp>

namespace memfail::suites::writ {

void validate_writ(const data::Scenario&, std::size_t, std::vector<data::Violation>&) {}

}  // namespace memfail::suites::writ

// SPDX-License-Identifier: MIT
// The write-integrity suite's validation rules beyond the structural ones: the ledger checked against
// the sessions (every value and update is stated by the message it cites, histories agree with
// the sessions' dates, probes ask only about what was said before their checkpoint).
#pragma once
#include <vector>

#include <memfail/data/model.hpp>
#include <memfail/data/validate.hpp>

namespace memfail::suites::writ {

void validate_writ(const data::Scenario& scenario, std::size_t line, std::vector<data::Violation>& out);

}  // namespace memfail::suites::writ

// SPDX-License-Identifier: MIT
// The write-integrity memory-side checks, exact and offline: current value held and retrieved, stale
// exposure, retraction failure, over-retention, authority violation, history completeness, as-of
// correctness, provenance exactness. Gold values are found in the system's memories through
// provenance (a memory citing the stating message) or through the value's mentions in its text, so a
// system need not know the dataset's event ids.
#pragma once
#include <string>
#include <vector>

#include <memfail/suites/suite.hpp>

namespace memfail::suites::writ {

// The check names, in report order.
const std::vector<std::string>& check_names();

std::vector<CheckResult> check_writ_memory(const CheckContext& context);

}  // namespace memfail::suites::writ

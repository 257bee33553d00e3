// SPDX-License-Identifier: MIT
// The write-integrity suite (WRIT): facts that change, graded on what the memory holds, retrieves,
// remembers of the past and can trace to its source.
#pragma once
#include <memfail/suites/suite.hpp>

namespace memfail::suites::writ {

const Suite& writ_suite();

}  // namespace memfail::suites::writ

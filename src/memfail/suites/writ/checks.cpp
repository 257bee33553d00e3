// SPDX-License-Identifier: MIT
// Placeholder until the checks land (this session).
#include <memfail/suites/writ/checks.hpp>

namespace memfail::suites::writ {

const std::vector<std::string>& check_names() {
    static const std::vector<std::string> n;
    return n;
}

std::vector<CheckResult> check_writ_memory(const CheckContext&) { return {}; }

}  // namespace memfail::suites::writ

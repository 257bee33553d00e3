// SPDX-License-Identifier: MIT
// Placeholder until the generator lands (this session): says so instead of generating nothing.
#include <memfail/suites/writ/generate.hpp>

namespace memfail::suites::writ {

const std::vector<std::string>& categories() {
    static const std::vector<std::string> c = {"drift",     "temporal",   "provenance",      "constraint",
                                               "entity",    "forgetting", "abstention",      "update",
                                               "multi_hop", "work_state", "lifecycle",       "trust_hierarchy",
                                               "extraction_drift", "failure_injection", "certification", "closure"};
    return c;
}

std::string dataset_name(const std::string& category) { return "writ_" + category; }

Result<std::vector<data::Scenario>> generate_category(const std::string& category, const GenerateOptions&) {
    return make_error(ErrorKind::unsupported, "the write-integrity generator is not implemented yet", category);
}

}  // namespace memfail::suites::writ

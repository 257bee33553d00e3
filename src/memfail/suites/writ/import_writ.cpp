// SPDX-License-Identifier: MIT
// Placeholder until the importer lands (this session): says so instead of importing nothing.
#include <memfail/suites/writ/import_writ.hpp>

namespace memfail::suites::writ {

Result<ImportResult> import_writ_dir(const std::string& dir) {
    return make_error(ErrorKind::unsupported, "the WRIT importer is not implemented yet", dir);
}

Result<data::Scenario> import_writ_scenario(const nlohmann::json&, const std::string& file, std::vector<ImportNote>&) {
    return make_error(ErrorKind::unsupported, "the WRIT importer is not implemented yet", file);
}

}  // namespace memfail::suites::writ

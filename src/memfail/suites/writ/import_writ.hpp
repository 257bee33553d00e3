// SPDX-License-Identifier: MIT
// WRIT's scenario JSON (one file per scenario, version 1.0.0, as its release ships them) into the
// memfail/2 data model. Everything the release uses beyond its documented schema is mapped; what
// cannot be mapped is reported as an ImportNote with the file and JSON path, never dropped silently.
// docs/DATASETS.md gives the mapping.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/suites/suite.hpp>

namespace memfail::suites::writ {

// Every *.json file of `dir` (not recursive), in name order. A file that is not a WRIT scenario
// (bad JSON, missing sessions, a probe session that does not exist) is refused with a note and the
// others are still imported; a folder with no scenario at all is an error.
Result<ImportResult> import_writ_dir(const std::string& dir);

// One parsed scenario file; `file` names it in notes. Errors say what makes it unusable.
Result<data::Scenario> import_writ_scenario(const nlohmann::json& j, const std::string& file,
                                            std::vector<ImportNote>& notes);

}  // namespace memfail::suites::writ

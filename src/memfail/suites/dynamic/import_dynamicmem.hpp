// SPDX-License-Identifier: MIT
// DynamicMem's user folders (task_packs.json + app_log_large.json, as its authors publish them) into
// memfail/2 scenarios of the dynamic suite: one scenario per user, one session per calendar day of
// app logs, the quarterly checkpoints, the ground-truth profile and one probe per task item. What
// cannot be mapped as it stands becomes an ImportNote naming the file and JSON path; a bad file
// refuses its user and the other users still import. The .cpp's header comment gives the mapping.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/suites/suite.hpp>

namespace memfail::suites::dynamic {

// One DynamicMem user folder (holding task_packs.json and app_log_large.json), or a folder of user
// folders (one scenario per user, in folder-name order). A user whose files cannot be read is
// refused with a note and the others still import; nothing imported at all is an error.
Result<ImportResult> import_dynamicmem(const std::string& path);

// One user from its two files already parsed (what the folder import does after reading them, and
// what the fuzzers drive). `user` is the folder name the scenario id is made from; `task_file` and
// `log_file` name the files in notes. Errors say what makes the user unusable; notes are appended
// only when the user imports.
Result<data::Scenario> import_dynamicmem_user(const nlohmann::json& task_packs, const nlohmann::json& app_logs,
                                              const std::string& user, const std::string& task_file,
                                              const std::string& log_file, std::vector<ImportNote>& notes);

}  // namespace memfail::suites::dynamic

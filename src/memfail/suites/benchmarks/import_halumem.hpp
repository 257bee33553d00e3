// SPDX-License-Identifier: MIT
// HaluMem's user files (HaluMem-Medium.jsonl, HaluMem-Long.jsonl; MemTensor, 2025) -> scenarios of
// the benchmarks suite, dataset "halumem": one scenario per user line (its own store), its sessions
// in file order, each session's questions asked once that session is stored (as the authors'
// evaluation asks them), Memory Boundary questions to be declined. Streamed line by line: a Long
// user is about a million dialogue tokens. The .cpp's header comment gives the mapping.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/suites/benchmarks/common.hpp>

namespace memfail::suites::benchmarks {

inline constexpr const char* k_halumem = "halumem";

// The file, streamed user by user; each scenario goes to `sink` as soon as it is made. A file whose
// first character is '[' is read as a JSON list of users instead.
Result<ImportResult> import_halumem(const std::string& path, const ScenarioSink& sink);

// One user line (`index` counts from 0: the file's line index + 1 is named in notes).
Result<data::Scenario> import_halumem_user(const nlohmann::json& user, std::size_t index, const std::string& file,
                                           Notes& notes);

// HaluMem's six question types, in the order its authors print them.
const std::vector<std::string>& halumem_question_types();

}  // namespace memfail::suites::benchmarks

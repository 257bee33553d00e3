// SPDX-License-Identifier: MIT
// LongMemEval's instance files (longmemeval_s.json, longmemeval_m.json, longmemeval_oracle.json)
// -> scenarios of the benchmarks suite, dataset "longmemeval": one scenario per instance (its own
// haystack, its own memory store), one probe asked after the last haystack session, the turns
// marked has_answer its evidence. Streamed: the M file is 2.8 GB. The .cpp's header comment gives
// the mapping.
#pragma once
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/suites/benchmarks/common.hpp>

namespace memfail::suites::benchmarks {

inline constexpr const char* k_longmemeval = "longmemeval";

// The file, streamed instance by instance; each scenario goes to `sink` as soon as it is made.
Result<ImportResult> import_longmemeval(const std::string& path, const ScenarioSink& sink);

// One instance (the list's element `index` of `file`, named so in notes).
Result<data::Scenario> import_longmemeval_instance(const nlohmann::json& instance, std::size_t index,
                                                   const std::string& file, Notes& notes);

}  // namespace memfail::suites::benchmarks

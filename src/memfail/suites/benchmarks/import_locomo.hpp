// SPDX-License-Identifier: MIT
// LoCoMo's locomo10.json (snap-research/locomo) -> scenarios of the benchmarks suite, dataset
// "locomo": one scenario per sample, each dialogue turn a message whose id is its dia_id, each
// question a probe asked after the last session, each turn it cites an evidence fact. The .cpp's
// header comment gives the mapping and what is done with every oddity of the release.
#pragma once
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/suites/benchmarks/common.hpp>

namespace memfail::suites::benchmarks {

inline constexpr const char* k_locomo = "locomo";

// The file, streamed sample by sample; each scenario goes to `sink` as soon as it is made.
Result<ImportResult> import_locomo(const std::string& path, const ScenarioSink& sink);

// One sample (the list's element `index` of `file`, named so in notes).
Result<data::Scenario> import_locomo_sample(const nlohmann::json& sample, std::size_t index, const std::string& file,
                                            Notes& notes);

}  // namespace memfail::suites::benchmarks

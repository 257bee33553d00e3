// SPDX-License-Identifier: MIT
// Turns what the user named (`--datasets all`, a dataset name, a JSONL path) into scenarios.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>

namespace memfail::run {

struct LoadedDataset {
    data::Scenario scenario;
    std::string origin;  // "generated (seed 42)" or the file it was read from
    std::string hash;    // data::scenario_hash
};

// Resolves each entry: "all" -> the five MemFail datasets; a known dataset name -> DATA_DIR/<name>.jsonl
// when that file exists, else generated with `seed`; anything else -> a JSONL file (every scenario in
// it). Files are validated structurally; a file with violations is refused with the first few. A
// non-empty `data_dir` that is not an existing folder is an error (not_found), not a reason to generate.
Result<std::vector<LoadedDataset>> load_datasets(const std::vector<std::string>& names,
                                                 const std::string& data_dir, std::uint64_t seed);

}  // namespace memfail::run

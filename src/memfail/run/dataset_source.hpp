// SPDX-License-Identifier: MIT
// Turns what the user named (`--datasets all`, a dataset name, a JSONL path) into scenarios.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/run/shard.hpp>

namespace memfail::run {

struct LoadedDataset {
    data::Scenario scenario;
    std::string origin;  // "generated (seed 42)" or the file it was read from
    std::string hash;    // data::scenario_hash
    // A scenario another part of a sharded run runs: only its id, dataset, suite, hash and weight
    // are kept (no sessions, no probes), so a part holds just its own share in memory.
    bool skeleton = false;
    std::uint64_t weight = 0;  // shard.hpp's scenario_weight, when known in advance (0: compute it)
};

// Resolves each entry: "all" -> the five MemFail datasets; a known dataset name -> DATA_DIR/<name>.jsonl
// when that file exists, else generated with `seed`; anything else -> a JSONL file (every scenario in
// it). Files are validated structurally; a file with violations is refused with the first few. A
// non-empty `data_dir` that is not an existing folder is an error (not_found), not a reason to generate.
Result<std::vector<LoadedDataset>> load_datasets(const std::vector<std::string>& names,
                                                 const std::string& data_dir, std::uint64_t seed);

// The same for part `shard` of a sharded run: the files are streamed twice, first to weigh every
// scenario (after --limit `limit`, as the runner weighs and hashes it) and split the run, then to
// load in full only the scenarios this part runs (under any of `modes`); every other one is a
// skeleton with the hash and weight the runner needs. Every part so hashes and splits the whole
// run alike while holding only its own scenarios.
Result<std::vector<LoadedDataset>> load_datasets_for_shard(const std::vector<std::string>& names,
                                                           const std::string& data_dir, std::uint64_t seed,
                                                           std::size_t limit, const std::vector<std::string>& modes,
                                                           const ShardSpec& shard);

}  // namespace memfail::run

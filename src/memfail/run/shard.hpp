// SPDX-License-Identifier: MIT
// Splitting a run across processes or machines: `memfail run --shard I/N` runs the I-th of N
// disjoint parts of the work, by scenario, and `memfail merge` (merge.hpp) joins the parts' results
// files into one run equal to a single-process run of the same work.
//
// The assignment is deterministic and balances by size: every scenario (each mode of it under
// --modes) is weighed by the bytes of its messages and probe questions, the heaviest are placed
// first, each on the part with the least weight so far (ties: the lower part), equal weights in
// scenario-id order. Every part computes the same assignment from the same datasets, so the parts
// need no coordination and together cover each scenario exactly once.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>

namespace memfail::run {

struct ShardSpec {
    int index = 0;  // 1-based; 0 with count 0: not sharded
    int count = 0;
    bool active() const { return count > 0; }
    std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// Parses "I/N" (1 <= I <= N <= 100000); invalid_input naming --shard otherwise.
Result<ShardSpec> parse_shard(std::string_view text);

// The bytes of a scenario's message contents and probe questions (at least 1): the weight the
// assignment balances. With `probe_limit` (--limit), only the first that many probes count.
std::uint64_t scenario_weight(const data::Scenario& scenario, std::size_t probe_limit = 0);

// The id of a scenario's unit of work under a --modes mode: the scenario id for native (or no
// modes), "<id>@<mode>" otherwise ('@' is never part of a dataset id).
std::string mode_unit_id(const std::string& scenario_id, const std::string& mode);

// The part (0-based) of each unit, for `count` parts: units named `ids` (unique) weighing `weights`.
std::vector<int> assign_shards(const std::vector<std::string>& ids, const std::vector<std::uint64_t>& weights,
                               int count);

}  // namespace memfail::run

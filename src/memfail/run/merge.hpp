// SPDX-License-Identifier: MIT
// `memfail merge OUT.db IN.db...`: joins the results files of a sharded run (`memfail run --shard
// I/N`, shard.hpp) into one results file holding one run per configuration, equal to what a
// single process running all the work would have written (the timings aside), and joins the parts'
// LLM reply caches ("<IN>.llm-cache.db") into "<OUT>.llm-cache.db".
//
// Refused, with nothing written: an input run that is not a shard, or is unfinished or failed
// (finish it with --resume first); parts of one configuration that overlap (the same part twice,
// or a scenario in two parts) or leave a part out; parts whose configurations or code versions
// differ (they are different runs: each must be complete on its own); a damaged part, checked whole
// before anything is read: SQLite's integrity_check, a results file of a known schema version, and
// each run's rows against the integrity record (store::ResultsDb::verify_run) written when it
// finished (a part from before those records is merged and noted as unverified). OUT must not
// exist; it is written under a temporary name (OUT.merging-PID) and renamed when complete; such
// files left by merges whose process no longer exists are removed before writing, with a note.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>

namespace memfail::run {

struct MergeReport {
    std::vector<std::int64_t> runs;  // the run ids written to OUT, one per configuration
    std::vector<std::string> lines;  // one per merged run: system, parts, scenarios, rows
    std::size_t cache_files = 0;     // input caches found and joined
    std::size_t cache_entries = 0;   // replies in OUT's cache
    std::vector<std::string> notes;  // e.g. an input without a cache
};

Result<MergeReport> merge_shards(const std::string& out, const std::vector<std::string>& inputs);

}  // namespace memfail::run

// SPDX-License-Identifier: MIT
// What a run needs to know: which system, which datasets, which k values, where results go.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <memfail/llm/llm_config.hpp>
#include <memfail/run/shard.hpp>

namespace memfail::run {

struct RunConfig {
    std::string system_spec;               // e.g. "verbatim:retriever=bm25"
    std::vector<std::string> datasets;     // dataset names or JSONL paths
    std::vector<int> ks = {1, 3, 5, 10};
    std::string results_path = "results.db";
    std::string data_dir;                  // where named datasets are looked up before generating
    unsigned long long seed = 42;          // for datasets generated on the fly
    bool resume = false;
    // With resume: delete the run's probes that ended in error and grade exactly them again, in
    // place (the run may be finished; nothing else is redone).
    bool retry_errors = false;
    long long resume_run_id = 0;           // 0: the latest unfinished run with the same config
    bool quiet = false;
    std::string name;     // --name: what tables, charts and exports call the run (default: the system spec)
    std::size_t limit = 0;  // --limit: only the first N probes of each dataset (0: all); recorded

    // LLM stages (issue 3): models, limits and cache; no model means the memory side only.
    llm::LlmSettings llm;
    std::string grader = "auto";  // auto (llm when a judge model is set, else rules) | rules | llm | both
    bool store_replies = false;   // the test-taker replies to storage turns and the system stores them
    // memfail (its own grading, docs/TAXONOMY.md) or paper (the MemFail paper's evaluation as closely
    // as its text allows: per-dataset judge prompts deciding every stage, storage turns answered with
    // retrieved memories shown, answers restating the memories used; docs/PROTOCOLS.md).
    std::string protocol = "memfail";
    // --modes: each scenario run once per mode (WRIT's evaluation modes): native (the system under
    // test), no_memory (the `none` system: what the model invents) and oracle
    // (`ledger:extract=oracle`: the dataset's gold events as memory, with their history). Empty: native only. Rows of a mode other than native carry the
    // scenario id "<id>@<mode>" ('@' is never part of a dataset id).
    std::vector<std::string> modes;
    // --set KEY=VALUE: grading settings, recorded in the run and part of what --resume matches.
    // Known: writ.structured_threshold (0..1: every structured rubric passes at this share of its
    // elements, instead of the rubric's own; WRIT's scenarios carry 0.8).
    std::map<std::string, std::string> settings;
    // --shard I/N: only the scenarios assigned to part I of N (shard.hpp). The run records its part
    // and the hash of the unsharded configuration, which `memfail merge` checks across parts.
    ShardSpec shard;
    // Asked between sessions and between probes; returning false stops the run where it is, as a
    // kill would (nothing half-written; --resume continues). The CLI stops on SIGINT and SIGTERM.
    std::function<bool()> keep_going;
};

}  // namespace memfail::run

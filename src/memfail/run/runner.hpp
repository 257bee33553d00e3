// SPDX-License-Identifier: MIT
// The run loop: store every session of each scenario, then retrieve and grade each probe at each k,
// recording everything in the results database so a killed run resumes without losing or doubling
// a probe. Probes never write memory.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/llm/llm_client.hpp>
#include <memfail/memory/memory_system.hpp>
#include <memfail/run/dataset_source.hpp>
#include <memfail/run/run_config.hpp>

namespace memfail::run {

// Creates a fresh system for one scenario (each scenario gets its own store).
using SystemFactory =
    std::function<Result<std::unique_ptr<memory::MemorySystem>>(const memory::SystemContext&)>;

// The factory for a spec string, through the built-in registry.
SystemFactory factory_for_spec(const std::string& spec);

struct RunOutcome {
    std::int64_t run_id = 0;
    bool resumed = false;
    // --resume found the run already finished: nothing was done and no run was started (resume
    // never duplicates a finished run).
    bool already_finished = false;
    std::int64_t retried = 0;
    bool stopped = false;  // stopped early (test hook or RunConfig::keep_going): unfinished, resumable  // --retry-errors: probe x k rows in error that were graded again
    std::size_t probes_graded = 0;   // graded in this invocation
    std::size_t probes_skipped = 0;  // already recorded by an earlier attempt
};

// Called with progress lines ("conditional_facts_easy: stored 40/100 sessions"); may be empty.
using ProgressSink = std::function<void(const std::string&)>;

// Test hook: called after each probe is recorded; returning false stops the run as if killed
// (status stays 'running', so --resume continues it).
using AfterProbeHook = std::function<bool(const std::string& probe_id, int k)>;

// Runs `datasets` against systems made by `factory`, recording into config.results_path. The run's
// config hash covers the system spec, datasets (by content hash), ks, code version, grader, models
// and prompt versions; --resume continues the newest unfinished run with the same hash.
//
// With `client` (and models in config.llm) the test-taker answers every probe and the staged judge
// grades the stages that need meaning; the probes of a checkpoint are processed concurrently on
// config.llm.concurrency threads. Every call is accounted in the run's llm_calls table.
Result<RunOutcome> run_datasets(const RunConfig& config, const std::vector<LoadedDataset>& datasets,
                                const SystemFactory& factory, const ProgressSink& progress = {},
                                const AfterProbeHook& after_probe = {}, llm::LlmClient* client = nullptr);

// The grader a config resolves to: "rules", "llm" or "both"; errors for an unknown name or a judge
// grader without a judge model.
Result<std::string> resolve_grader(const RunConfig& config);

// Folder where a run keeps the memory systems' own databases: "<results>.memory/run-<id>".
std::string memory_dir_for(const std::string& results_path, std::int64_t run_id);

}  // namespace memfail::run

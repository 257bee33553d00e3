// SPDX-License-Identifier: MIT
// The run record: every run, scenario, stored session and graded probe lives in one SQLite file.
// Every other format (tables, JSON, HTML) is a rendering of it. Schema: docs/RESULTS.md.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/store/database.hpp>

namespace memfail::store {

inline constexpr int k_results_schema_version = 1;

struct RunRecord {
    std::int64_t id = 0;
    std::string status;  // running, finished, error
    std::string system_spec;
    std::string config_json;
    std::string config_hash;  // identifies "the same run" for --resume
    std::string code_version;
    std::string started_at;
    std::string finished_at;
    std::string error;
};

struct ScenarioRecord {
    std::int64_t run_id = 0;
    std::string scenario_id;
    std::string dataset;
    std::string dataset_hash;
    std::int64_t sessions = 0;
    std::int64_t probes = 0;
    std::string status;  // pending, storing, stored, graded
};

struct FactRow {
    std::string fact_id;
    std::string stage;
    std::string method;
    std::string stored_json = "[]";
    std::string retrieved_json = "[]";
    std::string missing_json = "[]";
    std::string explanation;
};

struct ProbeRow {
    std::string scenario_id;
    std::string dataset;
    std::string probe_id;
    int k = 0;
    std::string kind;
    std::string stage;  // a grade::Stage name, "needs_answer_stage" or "error"
    bool memory_success = false;
    std::string retrieved_json = "[]";  // [{"id","text","sources","score"}]
    std::int64_t retrieve_micros = 0;
    std::string error;
    std::vector<FactRow> facts;
};

// One line of the summary table: a run, dataset and k with counts per stage.
struct SummaryRow {
    std::int64_t run_id = 0;
    std::string system_spec;
    std::string dataset;
    int k = 0;
    std::int64_t graded = 0;  // probes with evidence (count toward memory-side success)
    std::int64_t success = 0;
    std::int64_t not_stored = 0;
    std::int64_t summary_error = 0;
    std::int64_t not_retrieved = 0;
    std::int64_t errors = 0;
    std::int64_t needs_answer_stage = 0;  // abstain probes, reported apart
};

struct LatencySummary {
    std::int64_t count = 0;
    double p50_ms = 0;
    double p99_ms = 0;
};

class ResultsDb {
public:
    // Opens or creates the results file. A file written by a newer schema is refused.
    static Result<ResultsDb> open(const std::string& path);

    Result<std::int64_t> create_run(const RunRecord& run);
    // The newest unfinished run with this config hash, if any.
    Result<std::optional<RunRecord>> find_resumable(const std::string& config_hash);
    Result<std::optional<RunRecord>> run(std::int64_t id);
    Result<std::vector<RunRecord>> runs();
    // Marks a run being resumed as running again and clears its last error.
    Result<void> reopen_run(std::int64_t id);
    Result<void> finish_run(std::int64_t id, const std::string& status, const std::string& error = {});

    Result<void> upsert_scenario(const ScenarioRecord& scenario);
    Result<void> set_scenario_status(std::int64_t run_id, const std::string& scenario_id,
                                     const std::string& status);
    Result<std::vector<ScenarioRecord>> scenarios(std::int64_t run_id);

    // Records that a session was stored (idempotent: a second record of the same session is ignored).
    Result<void> record_store(std::int64_t run_id, const std::string& scenario_id,
                              const std::string& session_id, std::int64_t micros);
    Result<std::set<std::string>> stored_sessions(std::int64_t run_id, const std::string& scenario_id);

    // (probe id, k) pairs already graded for a scenario of a run.
    Result<std::set<std::pair<std::string, int>>> graded_probes(std::int64_t run_id,
                                                                const std::string& scenario_id);
    // Writes a probe and its facts in one transaction: after a crash a probe is either fully
    // recorded or absent, so --resume neither loses nor doubles it.
    Result<void> record_probe(std::int64_t run_id, const ProbeRow& probe);

    Result<std::vector<SummaryRow>> summary(const std::vector<std::int64_t>& run_ids);
    Result<LatencySummary> store_latency(std::int64_t run_id, const std::string& dataset);
    Result<LatencySummary> retrieve_latency(std::int64_t run_id, const std::string& dataset);

    Database& database() { return m_db; }

private:
    explicit ResultsDb(Database db) : m_db(std::move(db)) {}
    Result<LatencySummary> latency_query(const std::string& sql, std::int64_t run_id,
                                         const std::string& dataset);
    Database m_db;
};

// Current UTC time as ISO 8601 ("2026-11-21T23:40:00Z").
std::string utc_now();

}  // namespace memfail::store

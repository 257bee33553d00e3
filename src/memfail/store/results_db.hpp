// SPDX-License-Identifier: MIT
// The run record: every run, scenario, stored session and graded probe lives in one SQLite file.
// Every other format (tables, JSON, HTML) is a rendering of it. Schema: docs/RESULTS.md.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <unordered_map>
#include <string>
#include <utility>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/store/database.hpp>

namespace memfail::store {

inline constexpr int k_results_schema_version = 3;

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
    // The evaluation protocol the run followed (config_json "protocol"): "memfail" or "paper"; runs
    // made before protocols existed followed memfail's.
    std::string protocol() const;
    // What tables, charts and exports call the run: its --name (config_json "name") when given,
    // else its system spec.
    std::string label() const;
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

// One check of one stage by one grader ("rules", "provenance" or "llm"). `decisive` marks the check
// the verdict rests on; the others are kept to measure agreement (--grader both).
struct StageCheckRow {
    std::string fact_id;  // empty for the answer stage
    std::string stage;    // storage, summary, retrieval, answer, abstention, benchmark (Suite::scores_every_answer)
    std::string grader;
    bool passed = false;
    bool decisive = false;
    std::string reason;
};

// A memory as a probe saw it at its checkpoint: the report's probe browser shows the memories each
// evidence fact was found stored in. Only memories some fact names are kept, once per checkpoint.
struct MemoryTextRow {
    std::string id;
    std::string text;
    std::string sources_json = "[]";  // the source message ids the system reported
};

// One suite memory-side check of one probe at one k (the write-integrity checks: stale exposure,
// retraction, over-retention, ...). `passed` empty: the check could not be decided (unverified).
struct MemoryCheckRow {
    std::string check;
    std::optional<bool> passed;
    std::string detail;
};

// One item a suite checked in the memory after a session was stored (HaluMem's operations).
// `score` in [0, 1], empty when undecided.
struct SessionCheckRow {
    std::string name;
    std::string item;
    std::optional<double> score;
    std::string label;
    double weight = 1;
    std::string grader;
    std::string detail;
};

// A profile task's results at one k (the dynamic suite): the memory side's evidence recall and
// attribution label, and, when answered, the item's score from its graded fields.
struct ProfileRow {
    std::string task;        // state_completion, personalized_service
    std::string state_key;
    std::string family;      // attribute, habit, preference
    std::string profile_checkpoint;  // C1..C5
    std::string state_change;        // retained, updated, new
    double recall = 0;       // gold evidence logs retrieved / gold evidence logs
    std::string label;       // memory-side attribution; all_clear once answered wrong with all evidence in
    std::string reason;
    std::string fields_json = "[]";  // per field: evidence counts and, when answered, its grade
    std::optional<double> item_score;  // empty: not answered, or a field undecided
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
    std::string reasoning = "not graded";  // not graded, not reached, correct, reasoning_error
    std::optional<std::string> answer;     // the test-taker's reply
    std::optional<bool> answer_correct;    // when the answer stage was graded
    std::string grader = "rules";          // rules, llm or both
    std::optional<std::int64_t> retrieved_tokens;  // tokens of the retrieved memories (when counted)
    std::vector<FactRow> facts;
    std::vector<StageCheckRow> checks;
    std::vector<MemoryCheckRow> memory_checks;  // applicable suite checks only
    std::optional<ProfileRow> profile;          // profile tasks only
    // Schema 3: the probe as the dataset states it and the memories its facts were found in, so a
    // results file explains itself without the dataset files. Written once per run, scenario and
    // probe (and checkpoint and memory); empty in rows read from a schema-2 run.
    std::string checkpoint;               // the session after which the probe is asked
    std::string probe_json;               // data::Probe as the dataset's JSON (question, choices, answer, evidence)
    std::vector<MemoryTextRow> stored_memories;
};

// The memory texts recorded for a run, by scenario and checkpoint.
struct RecordedMemory {
    std::string scenario_id;
    std::string checkpoint;
    MemoryTextRow memory;
};

// One LLM call as accounted (never its text: the cache holds that).
struct LlmCallRow {
    std::string role;
    std::string stage;
    std::string model;
    bool cache_hit = false;
    std::int64_t prompt_tokens = 0;
    std::int64_t completion_tokens = 0;
    bool counted_locally = false;
    std::int64_t latency_micros = 0;
    std::int64_t attempts = 0;
    std::string error_kind;  // empty on success
    std::string error;
    // Exact accounting across kill and --resume (record_llm_calls; docs/LLM.md, "Accounting").
    std::string cache_key{};  // the reply cache's key; empty with the cache off (then written as is)
    std::string session{};    // the recording process's token (run::CallRecorder)
    std::string work{};       // what the call was for (run::CallRecorder::Work); part of its identity
    // A sent call: the payer token the cache recorded with the reply. A cache hit with paid_elsewhere:
    // the token of the other process that paid for the reply.
    std::string payer{};
    // Not stored: how many successful calls with this cache key the session made before this one.
    std::int64_t occurrence = 0;
    // A cache hit whose reply another process writing this results file paid for; the paid_* fields
    // are what it paid. Recorded as the sent call when no sent row accounts that payment yet.
    bool paid_elsewhere = false;
    std::int64_t paid_prompt_tokens = 0;
    std::int64_t paid_completion_tokens = 0;
    bool paid_counted_locally = false;
    std::int64_t paid_attempts = 0;
    std::int64_t paid_latency_micros = 0;
};

struct LlmUsageRow {
    std::string role;
    std::int64_t calls = 0;
    std::int64_t cache_hits = 0;
    std::int64_t prompt_tokens = 0;
    std::int64_t completion_tokens = 0;
    std::int64_t counted_locally = 0;
    std::int64_t errors = 0;
    std::int64_t retries = 0;
    double p50_ms = 0;  // network calls only (cache hits excluded)
    double p95_ms = 0;
};

// Tokens of one role's calls to one model, split by whether this run paid for them (a network call)
// or replayed them from the cache.
struct LlmModelUsage {
    std::string role;
    std::string model;
    std::int64_t calls = 0;
    std::int64_t cache_hits = 0;
    std::int64_t paid_prompt_tokens = 0;  // network calls, including failed ones the server billed
    std::int64_t paid_completion_tokens = 0;
    std::int64_t cached_prompt_tokens = 0;
    std::int64_t cached_completion_tokens = 0;
};

// The store at a checkpoint: how many memories, and their tokens (the paper's tokens per memory).
struct MemoryStats {
    std::int64_t memories = 0;
    std::optional<std::int64_t> tokens;
    std::string encoding;
};

// What a run could see of its system: the largest store any checkpoint recorded (absent: none
// recorded) and how many probe rows were served at least one memory.
struct RunVisibility {
    std::optional<std::int64_t> max_memories;
    std::int64_t probe_rows = 0;
    std::int64_t served_rows = 0;
    bool stored_nothing() const { return max_memories && *max_memories == 0; }
    bool served_nothing() const { return probe_rows > 0 && served_rows == 0; }
};

struct AgreementRow {
    std::string stage;
    std::int64_t compared = 0;
    std::int64_t agreed = 0;
};

struct DisagreementRow {
    std::string probe_id;
    int k = 0;
    std::string fact_id;
    std::string stage;
    bool rules_passed = false;
    std::string rules_reason;
    bool llm_passed = false;
    std::string llm_reason;
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
    std::int64_t unverified = 0;  // storage or summary only a judge can decide; never success
    std::int64_t not_retrieved = 0;
    std::int64_t errors = 0;
    std::int64_t needs_answer_stage = 0;  // abstain probes, reported apart
    std::int64_t ambiguous = 0;           // misleading probes naming a stored person: reported apart, not graded
    std::int64_t incomplete = 0;          // probes with a fact whose key details could not all be derived
    std::int64_t correct = 0;             // end to end (answer stage graded)
    std::int64_t reasoning_error = 0;
    std::int64_t answered = 0;            // probes whose answer stage was graded
    std::int64_t abstain_graded = 0;      // abstain probes graded (correct or reasoning_error)
    std::optional<double> retrieved_tokens;  // mean tokens retrieved per probe (absent: not counted)
    // Probes that ended at `retrieved`: every memory-side check passed, the answer not graded.
    std::int64_t retrieved() const {
        return graded - errors - not_stored - summary_error - unverified - not_retrieved - correct - reasoning_error;
    }
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
    // Opens an existing results file for reading only (commands that read: report, compare, ls
    // runs): the file's bytes are never changed, and a file without write permission opens. A file
    // written by an older schema is read as it is, not migrated: the tables and columns it lacks
    // read as empty (their defaults), for this connection only. Errors: not_found (no such file),
    // invalid_input (not a memfail results file, or one written by a newer schema), database.
    static Result<ResultsDb> open_read_only(const std::string& path);

    Result<std::int64_t> create_run(const RunRecord& run);
    // The newest unfinished run with this config hash, if any.
    Result<std::optional<RunRecord>> find_resumable(const std::string& config_hash);
    // The newest finished run with this config hash, if any.
    Result<std::optional<RunRecord>> find_finished(const std::string& config_hash);
    Result<std::optional<RunRecord>> run(std::int64_t id);
    Result<std::vector<RunRecord>> runs();
    // Takes the run for this process (pid and host, in one IMMEDIATE transaction). Refused with
    // "run N is being written by pid P on HOST" while another live process holds it; a claim left
    // by a process that died on this host is taken over.
    Result<void> claim_run(std::int64_t run_id);
    // Gives this process's claim up (a no-op when it holds none).
    Result<void> release_run(std::int64_t run_id);
    // "pid P on HOST" while some process holds the run.
    Result<std::optional<std::string>> run_writer(std::int64_t run_id);
    // How many of the run's probe x k rows ended in error, and the commonest causes (at most
    // `causes`, most frequent first).
    struct ErrorSummary {
        std::int64_t rows = 0;
        std::int64_t errors = 0;
        std::vector<std::pair<std::string, std::int64_t>> causes;
    };
    Result<ErrorSummary> error_summary(std::int64_t run_id, std::size_t causes = 5);
    // Deletes the run's probes that ended in error (with their facts and checks), so resuming grades
    // exactly them again in place (--retry-errors). Returns how many probe x k rows were removed.
    Result<std::int64_t> clear_error_probes(std::int64_t run_id);
    // Marks a run being resumed as running again and clears its last error.
    Result<void> reopen_run(std::int64_t id);
    // Marks the run `status` (finished, error, interrupted). Finishing also writes the run's integrity
    // record (seal_run) in the same transaction; any other status drops the record an earlier finish
    // left.
    Result<void> finish_run(std::int64_t id, const std::string& status, const std::string& error = {});
    // Writes the run's integrity record (table run_integrity), replacing any: for its row in runs and
    // each table holding its rows (run_writers aside), the columns, the row count and a digest of the
    // rows' contents (XXH3 over each row's exact values, independent of row order).
    Result<void> seal_run(std::int64_t id);
    // Checks the run's rows against its integrity record: empty when they match, else one line per
    // table that differs (missing, other row count, other contents, rows the record does not
    // cover); no value when the run has no record (finished before records existed, or unfinished).
    Result<std::optional<std::vector<std::string>>> verify_run(std::int64_t id);

    Result<void> upsert_scenario(const ScenarioRecord& scenario);
    Result<void> set_scenario_status(std::int64_t run_id, const std::string& scenario_id,
                                     const std::string& status);
    Result<std::vector<ScenarioRecord>> scenarios(std::int64_t run_id);

    // Records that a session was stored (idempotent: a second record of the same session is ignored).
    Result<void> record_store(std::int64_t run_id, const std::string& scenario_id,
                              const std::string& session_id, std::int64_t micros);
    Result<std::set<std::string>> stored_sessions(std::int64_t run_id, const std::string& scenario_id);

    // A suite's checks after one session, in one transaction (a session with none is still marked
    // checked); the sessions of a scenario already checked, for --resume.
    Result<void> record_session_checks(std::int64_t run_id, const std::string& scenario_id, const std::string& session_id,
                                       const std::vector<SessionCheckRow>& rows);
    Result<std::set<std::string>> checked_sessions(std::int64_t run_id, const std::string& scenario_id);

    // (probe id, k) pairs already graded for a scenario of a run.
    Result<std::set<std::pair<std::string, int>>> graded_probes(std::int64_t run_id,
                                                                const std::string& scenario_id);
    // Writes a probe and its facts in one transaction: after a crash a probe is either fully
    // recorded or absent, so --resume neither loses nor doubles it.
    Result<void> record_probe(std::int64_t run_id, const ProbeRow& probe);
    // Every recorded probe x k of a run (or of one of its scenarios, to bound memory on big runs),
    // ordered by dataset, scenario, probe and k, with its facts, stage checks, checkpoint and
    // probe_json (stored_memories are left empty: see recorded_memories()).
    Result<std::vector<ProbeRow>> probe_rows(std::int64_t run_id, const std::string& scenario_id = {});
    // The memory texts recorded for a run's probes (schema 3 runs; empty for older ones).
    // The suite memory checks of a run: (scenario, probe, k) -> checks.
    struct RecordedCheck {
        std::string scenario_id, dataset, probe_id;
        int k = 0;
        MemoryCheckRow row;
    };
    Result<std::vector<RecordedCheck>> memory_checks(std::int64_t run_id);
    // The profile tasks' results of a run (the dynamic suite), error rows excluded.
    struct RecordedProfile {
        std::string scenario_id, dataset, probe_id;
        int k = 0;
        std::string stage;                    // the probe row's stage
        std::optional<bool> answer_correct;   // the probe row's
        ProfileRow row;
    };
    Result<std::vector<RecordedProfile>> profile_results(std::int64_t run_id);
    Result<std::vector<RecordedMemory>> recorded_memories(std::int64_t run_id, const std::string& scenario_id = {});

    // The size of the store at a checkpoint (tokens absent when no tokenizer was available).
    Result<void> record_memory_stats(std::int64_t run_id, const std::string& scenario_id, const std::string& checkpoint,
                                     std::int64_t memories, std::optional<std::int64_t> tokens,
                                     const std::string& encoding);
    Result<std::optional<MemoryStats>> memory_stats(std::int64_t run_id, const std::string& dataset);
    Result<RunVisibility> run_visibility(std::int64_t run_id);
    // What served retrieval at a checkpoint (MemorySystem::serving()), and every distinct one of a
    // run in the order first recorded.
    Result<void> record_serving(std::int64_t run_id, const std::string& scenario_id, const std::string& checkpoint,
                                const std::string& serving);
    Result<std::vector<std::string>> servings(std::int64_t run_id);

    // Writes one process's calls, in one transaction, so that a run killed at any moment and
    // resumed ends with the llm_calls an uninterrupted run has. A call is identified by its run,
    // its cache key and its occurrence (the n-th successful call with that key): a successful call
    // whose occurrence an earlier process of the run already recorded is a replay of accounted
    // work and is not written again; a cache hit whose reply another process of this results file
    // paid for, with no sent row accounting that payment yet, is written as the sent call (its
    // tokens, attempts and latency as paid); failed calls and calls without a cache key are always
    // written. Rows from files written before these columns existed keep their meaning.
    Result<void> record_llm_calls(std::int64_t run_id, const std::vector<LlmCallRow>& calls);
    // Per role: calls, cache hits, tokens, errors, retries, network latency p50/p95.
    Result<std::vector<LlmUsageRow>> llm_usage(std::int64_t run_id);
    Result<std::vector<LlmModelUsage>> llm_usage_by_model(std::int64_t run_id);
    // Per stage, how often the rules and the judge agreed where both checked (--grader both).
    Result<std::vector<AgreementRow>> agreement(std::int64_t run_id);
    Result<std::vector<DisagreementRow>> disagreements(std::int64_t run_id, std::size_t limit);

    Result<std::vector<SummaryRow>> summary(const std::vector<std::int64_t>& run_ids);
    Result<LatencySummary> store_latency(std::int64_t run_id, const std::string& dataset);
    Result<LatencySummary> retrieve_latency(std::int64_t run_id, const std::string& dataset);

    Database& database() { return m_db; }

    // A view setting for reports (`memfail report --exclude-leaky`): summary() and slice_counts()
    // leave out the probes a `none` run answered right (store/leaky_sql.hpp), matched by dataset
    // content hash. Never written to the file.
    void exclude_answerable_without_memory(bool on) { m_exclude_leaky = on; }
    bool excludes_answerable_without_memory() const { return m_exclude_leaky; }
    // "AND NOT <answered without memory> " for the probe_results and run_scenarios aliases given
    // while excluding; empty otherwise.
    std::string leaky_filter(const std::string& probe, const std::string& scenario) const;

private:
    explicit ResultsDb(Database db) : m_db(std::move(db)) {}
    // The statement for `sql` (a string literal: its address is the key), prepared on first use and
    // reset for reuse: the writes made once per probe or call are parsed once per connection.
    Result<Statement*> cached(const char* sql);
    Result<void> seal_rows(std::int64_t run_id);  // seal_run inside the caller's transaction
    Result<LatencySummary> latency_query(const std::string& sql, std::int64_t run_id,
                                         const std::string& dataset);
    Database m_db;
    // Declared after m_db so the statements are finalised before the connection closes.
    std::unordered_map<const char*, CachedStatement> m_statements;
    bool m_llm_calls_ready = false;  // llm_calls has the accounting columns (added to older files once)
    bool m_exclude_leaky = false;
};

// Current UTC time as ISO 8601 ("2026-11-21T23:40:00Z").
std::string utc_now();


// The labels a probe carries in its dataset's `meta` (docs/DATASETS.md), read from probe_texts by
// slice_counts(): absent where the probe's JSON lacks them (or the run predates schema 3).
struct ProbeLabelFields {
    std::string kind;
    std::optional<std::string> condition_met;   // as written: "yes"/"no", or 1/0 for a JSON boolean
    std::optional<bool> reference_yes;          // yes_no probes: the reference answer's polarity
    std::optional<std::string> condition_type;
    std::optional<std::int64_t> n;              // Coexisting: preferences in the row
    std::optional<std::int64_t> hops;           // Long-Hop
    std::optional<std::string> voice;           // Long-Hop: "named" or "first_person"
    std::optional<bool> is_misleading;          // Persona
    bool ambiguous = false;                     // meta.ambiguous, or the probe's stage is 'ambiguous'
    std::int64_t evidence = 0;                  // evidence facts
    // A published benchmark's label (the benchmarks suite): LoCoMo's meta.category and
    // meta.category_name ("1 multi-hop"), else LongMemEval's meta.question_type.
    std::optional<std::string> benchmark_type;
};

// Summary counts (as ResultsDb::summary counts them) for the probes of one run, dataset and k that
// share the same label fields, plus the answers that can be read as right or wrong: the answer
// stage's verdict where it was graded, else for a yes_no probe the polarity of the recorded answer
// against the reference's.
struct SliceCountsRow {
    SummaryRow counts;
    ProbeLabelFields labels;
    std::int64_t answers_read = 0;
    std::int64_t answers_right = 0;
};

// One row per run x dataset x k x distinct label fields, in the summary's order (run, dataset as
// first recorded, k). Errors: database.
Result<std::vector<SliceCountsRow>> slice_counts(ResultsDb& db, const std::vector<std::int64_t>& run_ids);


// One graded probe x k of a run, as `memfail compare` pairs it with the same probe of another run:
// its key, kind, final stage and memory-side verdict (no facts, checks or texts).
struct ProbeOutcomeRow {
    std::string dataset;
    std::string scenario_id;
    std::string probe_id;
    int k = 0;
    std::string kind;
    std::string stage;            // as in probe_results: a grade::Stage name, "needs_answer_stage", "error", ...
    bool memory_success = false;  // as recorded (the caller decides how error rows count)
};

// Every probe x k recorded for `run_id`, ordered by dataset, scenario, probe and k. Errors: database.
Result<std::vector<ProbeOutcomeRow>> probe_outcomes(ResultsDb& db, std::int64_t run_id);

}  // namespace memfail::store

// SPDX-License-Identifier: MIT
// The diagnostic tables built from a results database: memory-side success per dataset and k with
// its 95% Wilson interval and the count of each failure stage, plus run metadata.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/figures/table.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

// Runs to report: `requested` ids, or when empty every finished run in the file.
Result<std::vector<std::int64_t>> select_runs(store::ResultsDb& db, const std::vector<std::int64_t>& requested);


// Memory-side success per run x dataset x k, in one flat table (for CSV and JSON).
Result<Table> success_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                            TableStyle style = TableStyle::human);
// The same split into one table per run, titled with the run's id and system, without the run and
// system columns (narrower, for text and Markdown).
Result<std::vector<Table>> success_tables_by_run(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);
// One row per run: id, status, system, code version, datasets with their hash prefixes, latencies.
// LLM accounting per run and role: calls, cache hits, tokens, errors, retries, latency.
Result<Table> llm_usage_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);
// Per stage, how often the rules and the judge agreed (runs graded with --grader both or llm).
Result<Table> agreement_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);
Result<Table> disagreement_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids, std::size_t limit);

// A model's price in US dollars per million tokens, as `--price MODEL=INPUT/OUTPUT` gives it.
struct ModelPrice {
    double input_per_million = 0;
    double output_per_million = 0;
};
// Parses "gpt-4o-mini=0.15/0.60" (several flags add up; the last price of a model wins). Errors
// name the bad spec.
Result<std::map<std::string, ModelPrice>> parse_prices(const std::vector<std::string>& specs);
// Cost per run, role and model: what this run paid (network calls) and what the same calls would
// cost with an empty cache. Models without a price show "-" and are named in a note.
Result<Table> llm_cost_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                             const std::map<std::string, ModelPrice>& prices);

Result<Table> runs_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

// What a memory-side success rate includes, said the same way in every table and in the HTML report.
inline constexpr const char* k_memory_rate_definition =
    "Rate = success / probes: success counts probes whose every evidence fact was stored, kept faithfully "
    "(decided exactly by the rules) and retrieved; unverified probes are in the denominator, never the numerator; "
    "errors and abstain probes are in neither.";
inline constexpr const char* k_unverified_note =
    "unverified: summary unverified, needs a judge: a fact held in other words than it was stated (or with details "
    "the importer could not derive), whose storage or summary only a judge can decide (--judge-model); never "
    "counted as success.";


}  // namespace memfail::report

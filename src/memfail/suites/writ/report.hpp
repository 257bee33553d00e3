// SPDX-License-Identifier: MIT
// The write-integrity suite's report: its scorecard, a suite's memory-side checks (memory_checks of the results file)
// per run, mode and check, and the answer-side metrics of probes that carry a rubric, each with its
// 95% Wilson interval. Modes come from the scenario ids a --modes run records ("<id>@no_memory",
// "<id>@oracle"; plain ids are native).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/figures/section.hpp>
#include <memfail/figures/stats.hpp>
#include <memfail/figures/table.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::suites::writ {

// ("drift-001", "oracle") from "drift-001@oracle"; ("drift-001", "native") from "drift-001".
std::pair<std::string, std::string> split_mode(const std::string& scenario_id);

// One cell of the scorecard: a run, mode and check (memory side) or metric (answer side) at one k,
// counted as the tables count it. The tables, the HTML report's charts and the results JSON all
// read these, so their numbers agree.
struct IntegrityCount {
    std::int64_t run_id = 0;
    std::string mode;  // native, no_memory, oracle
    std::string name;  // the check (current_held, ...) or the answer metric (recall_accuracy, ...)
    int k = 0;
    std::int64_t applicable = 0;  // probe x k rows the check applies to
    std::int64_t decided = 0;     // of which decided: the tables' "probes"
    std::int64_t passed = 0;
    std::int64_t failed() const { return decided - passed; }
    std::int64_t unverified() const { return applicable - decided; }
    // passed / decided; empty when nothing was decided.
    std::optional<double> rate() const;
    // The 95% Wilson score interval of passed out of decided.
    report::Interval interval() const;
    std::string dataset;  // the dataset (category) counted; empty: every dataset of the run
};

// The counts behind integrity_table, in its row order (run, mode, check, k).
// `by_dataset`: one cell per dataset too (IntegrityCount::dataset), for the per-category figures.
Result<std::vector<IntegrityCount>> integrity_counts(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                                     bool by_dataset = false);

// The counts behind integrity_answer_table, in its row order (run, mode, metric); `k` is each run's
// largest k, at which the answer side is counted.
Result<std::vector<IntegrityCount>> integrity_answer_counts(store::ResultsDb& db,
                                                           const std::vector<std::int64_t>& run_ids,
                                                           bool by_dataset = false);

// Memory side: per run x mode x check x k, the probes the check applies to, how many it decided,
// how many passed, the rate over the decided ones and its interval, and the undecided count. Empty
// (no rows) when no run recorded memory checks.
Result<report::Table> integrity_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                              report::TableStyle style = report::TableStyle::human);

// integrity_table's rows for counts already gathered (integrity_counts), in their order, each run
// named as `run_names` says (its id when absent): the HTML report names runs as its charts do.
report::Table integrity_table(const std::vector<IntegrityCount>& counts, const std::map<std::int64_t, std::string>& run_names,
                      report::TableStyle style = report::TableStyle::human);

// Memory side by dataset (category) at each run's largest k: one column per check, "rate (n)".
Result<report::Table> integrity_by_dataset_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

// Answer side, for probes with write-integrity fields: per run x mode x metric (recall accuracy,
// update fidelity, temporal accuracy, constraint consistency, dedup accuracy, lifecycle accuracy,
// source-authority integrity, abstention precision and recall), at each run's largest k. Empty when
// no answer was graded.
Result<report::Table> integrity_answer_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                     report::TableStyle style = report::TableStyle::human);

// The gaps WRIT defines, per run and metric where the modes exist: native - oracle (memory's fault
// when negative), native - no_memory (memory that hurts when negative).
Result<report::Table> mode_gap_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

// Every memory check (each k) and answer metric (largest k) per run x mode x dataset, with rates and
// 95% Wilson intervals: the per-category scorecard (`memfail report --format csv --table
// integrity-datasets`, and the results JSON).
Result<report::Table> integrity_dataset_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                      report::TableStyle style = report::TableStyle::human);

// The suite's headline: per run x mode x dataset (category) at each run's largest k, the memory
// checks pooled (passed / decided) and the answers right (correct / decided), each with its 95%
// Wilson interval, and what was left undecided.
Result<report::Table> integrity_scorecard_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

// WRIT's distractor sensitivity per run x mode: recall of answerable probes in scenarios without
// interference minus with it (points), where both were decided. Empty when no probe says.
Result<report::Table> distractor_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

// WRIT's three layers for every wrong answer (at each run's largest k): `state` when a check of what
// the system wrote failed for the probe (current_held, stale_exposure, retraction, over_retention,
// authority, history_complete, as_of), else `retrieval` when current_retrieved failed, else
// `answer` (the agent policy: the memory was right and the answer was not).
// One row per run x mode.
Result<report::Table> layer_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

// The suite's part of every report: these tables, its HTML section and its results-JSON block.
const report::SuiteReport& writ_report();

}  // namespace memfail::suites::writ

// SPDX-License-Identifier: MIT
// The write-integrity scorecard: a suite's memory-side checks (memory_checks of the results file)
// per run, mode and check, and the answer-side metrics of probes that carry a rubric, each with its
// 95% Wilson interval. Modes come from the scenario ids a --modes run records ("<id>@no_memory",
// "<id>@oracle"; plain ids are native).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/report/table.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

// ("drift-001", "oracle") from "drift-001@oracle"; ("drift-001", "native") from "drift-001".
std::pair<std::string, std::string> split_mode(const std::string& scenario_id);

// Memory side: per run x mode x check x k, the probes the check applies to, how many it decided,
// how many passed, the rate over the decided ones and its interval, and the undecided count. Empty
// (no rows) when no run recorded memory checks.
Result<Table> integrity_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                              TableStyle style = TableStyle::human);

// Memory side by dataset (category) at each run's largest k: one column per check, "rate (n)".
Result<Table> integrity_by_dataset_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

// Answer side, for probes with write-integrity fields: per run x mode x metric (recall accuracy,
// update fidelity, temporal accuracy, constraint consistency, dedup accuracy, lifecycle accuracy,
// source-authority integrity, abstention precision and recall), at each run's largest k. Empty when
// no answer was graded.
Result<Table> integrity_answer_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                     TableStyle style = TableStyle::human);

// The gaps WRIT defines, per run and metric where the modes exist: native - oracle (memory's fault
// when negative), native - no_memory (memory that hurts when negative).
Result<Table> mode_gap_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

}  // namespace memfail::report

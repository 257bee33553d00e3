// SPDX-License-Identifier: MIT
// The long-horizon scorecard (the dynamic suite): per run, k, checkpoint and task, how much of the
// profile's gold evidence the memory brings back (evidence recall@k, complete items), why the rest
// is missing (the attribution labels, decided by rule) and, when an answer model ran, the items'
// field-level scores. Slices by state family and by retention (unchanged since C1) vs update.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/report/table.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

// The memory-side attribution labels, in report order (docs/DYNAMIC.md).
const std::vector<std::string>& profile_label_names();

// One cell: a run at k, a checkpoint and a task, over the probes of one slice ("all", a family, or a
// state change). The tables, the JSON export and the HTML chart all read these.
struct ProfileCount {
    std::int64_t run_id = 0;
    int k = 0;
    std::string checkpoint;  // C1..C5
    std::string task;        // state_completion, personalized_service
    std::string slice = "all";  // "all", "family:habit", "change:retained", ...
    std::int64_t probes = 0;
    double recall_sum = 0;                    // sum of per-probe evidence recall@k
    std::map<std::string, std::int64_t> labels;  // label -> probes ("" : undecidable)
    std::int64_t scored = 0;                  // items with a decided score (answered)
    double score_sum = 0;
    std::int64_t wrong = 0;                   // answered items not fully correct
    std::map<std::string, std::int64_t> wrong_labels;  // their attribution (all_clear: the answer model's)
    std::optional<double> recall() const;     // mean per-probe recall
    std::optional<double> complete() const;   // share with every gold log retrieved (label all_clear)
    std::optional<double> score() const;      // mean item score
};

// Every cell of the given runs: slice "all" plus one per family and per state change.
Result<std::vector<ProfileCount>> profile_counts(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

// Per run x k x checkpoint x task (slice "all"). Empty (no rows) when no run recorded profile tasks.
Result<Table> profile_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                            TableStyle style = TableStyle::human);
// Per run x slice x checkpoint at each run's largest k: evidence recall and complete share, and the
// score when answered. Rows for the family and state-change slices.
Result<Table> profile_slices_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                   TableStyle style = TableStyle::human);

}  // namespace memfail::report

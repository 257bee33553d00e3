// SPDX-License-Identifier: MIT
// The long-horizon scorecard (the dynamic suite): per run, k, checkpoint and task, how much of the
// profile's gold evidence the memory brings back (evidence recall@k, complete items), why the rest
// is missing (the attribution labels, decided by rule) and, when an answer model ran, the items'
// field-level scores. Slices by state family, by retention (unchanged since C1) vs update, and by
// the app whose logs are the evidence.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/figures/section.hpp>
#include <memfail/figures/table.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::suites::dynamic {

// The memory-side attribution labels, in report order (docs/DYNAMIC.md).
const std::vector<std::string>& profile_label_names();

// One cell: a run at k, a checkpoint and a task, over the probes of one slice ("all", a family, a
// state change, or an app). The tables, the JSON export and the HTML chart all read these.
//
// The log counts are per probe and gold log (a log that is evidence for two fields of a probe counts
// once; for two probes, twice), from the rows' fields_json. An "app:<app>" cell holds the probes with
// at least one gold log of that app: its log counts are that app's logs only, its recall_sum the
// per-probe share of those logs retrieved, and its labels and scores the whole probe's (a probe is
// one item; its label is not split by app). Its figure is log_recall(), not recall().
struct ProfileCount {
    std::int64_t run_id = 0;
    int k = 0;
    std::string checkpoint;  // C1..C5
    std::string task;        // state_completion, personalized_service
    std::string slice = "all";  // "all", "family:habit", "change:retained", "app:calendar", ...
    std::int64_t probes = 0;
    double recall_sum = 0;                    // sum of per-probe evidence recall@k
    std::map<std::string, std::int64_t> labels;  // label -> probes ("" : undecidable)
    std::int64_t scored = 0;                  // items with a decided score (answered)
    double score_sum = 0;
    std::int64_t wrong = 0;                   // answered items not fully correct
    std::map<std::string, std::int64_t> wrong_labels;  // their attribution (all_clear: the answer model's)
    std::int64_t gold_logs = 0;       // gold evidence logs (per probe and log)
    std::int64_t retrieved_logs = 0;  // of those, held by a retrieved memory ("yes"); never above gold_logs
    std::int64_t unsure_logs = 0;     // of those, undecidable ("unsure"): counted as not retrieved
    std::optional<double> recall() const;     // mean per-probe recall
    std::optional<double> complete() const;   // share with every gold log retrieved (label all_clear)
    std::optional<double> score() const;      // mean item score
    std::optional<double> log_recall() const; // retrieved_logs / gold_logs (log level, not per probe)
};

// Every cell of the given runs: slice "all" plus one per family, per state change and per app.
Result<std::vector<ProfileCount>> profile_counts(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

// Per run x k x checkpoint x task (slice "all"). Empty (no rows) when no run recorded profile tasks.
Result<report::Table> profile_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                            report::TableStyle style = report::TableStyle::human);
// Per run x slice x checkpoint at each run's largest k: evidence recall and complete share, and the
// score when answered. Rows for the family and state-change slices, then one per app whose cells are
// the log-level recall of that app's gold logs.
Result<report::Table> profile_slices_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                   report::TableStyle style = report::TableStyle::human);

// The suite's part of every report: these tables, its HTML section and its results-JSON block.
const report::SuiteReport& dynamic_report();

}  // namespace memfail::suites::dynamic

// SPDX-License-Identifier: MIT
// Probes that need no memory: those an answer model gets right when the memory system is `none`
// (it stores nothing and retrieves nothing). A dataset's question or common knowledge gives their
// answer away, so a system's success on them says nothing about its memory. The report flags them
// per dataset; `memfail report --exclude-leaky` leaves them out of every run's rates over the same
// dataset (same content hash).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/figures/table.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

// Per dataset (content hash): what the `none` runs in the results file show. Every finished run
// whose system is `none` and whose answers were graded counts, whether or not it is among the runs
// shown. Probes are counted once across k and across runs.
struct LeakyDataset {
    std::string dataset;
    std::string dataset_hash;
    std::vector<std::int64_t> none_runs;
    std::int64_t asked = 0;   // probes with something to find (not abstain) whose answer was graded
    std::int64_t leaky = 0;   // of those, answered right at some k by some `none` run
};
Result<std::vector<LeakyDataset>> leaky_datasets(store::ResultsDb& db);

// "Answerable without memory": one row per dataset a `none` run answered; no rows without one.
Result<Table> leaky_table(store::ResultsDb& db, TableStyle style = TableStyle::human);

}  // namespace memfail::report

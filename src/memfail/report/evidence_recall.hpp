// SPDX-License-Identifier: MIT
// Evidence recall as the benchmarks mean it (LoCoMo, LongMemEval): per run x dataset x k x category,
// beside memfail's "every cited turn retrieved" (its memory-side success), "any cited turn
// retrieved" and the share of cited turns retrieved (pooled), from the facts' recorded stages. A
// question whose evidence is unusable (meta.evidence_usable false: it cites most of the
// conversation, or no turn) is counted apart, in none of the rates.
#pragma once
#include <cstdint>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/figures/table.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

// No rows when no run covers locomo or longmemeval.
Result<Table> evidence_recall_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                    TableStyle style = TableStyle::human);

}  // namespace memfail::report

// SPDX-License-Identifier: MIT
// The self-contained HTML report: the paper's figures as inline SVG, the tables, run metadata and a
// probe browser, in one file that needs no server, no network and (but for the browser) no script.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

struct HtmlReportOptions {
    std::string title = "memfail report";
    // At most this many probe rows (probe x k x run) are embedded in the probe browser, in run
    // order; the report says when some were left out. Unset: all of them.
    std::optional<std::size_t> max_probes;
    // Shown in the header. Supplied by the caller so that rendering itself is deterministic.
    std::string generated_at;
    // Prices per model (report::parse_prices); when given, the runs section shows LLM cost per role.
    std::map<std::string, ModelPrice> prices;
};

// Renders the runs `run_ids` (already selected, e.g. by select_runs) of `db` as one HTML5 document.
// Sections: success per dataset x system x k with 95% Wilson error bars; the failure-stage
// breakdown; the slices; for runs with a suite's memory checks, the write-integrity scorecard (checks
// per mode and k as bars and tables, which checks fail, by dataset, the answer side and mode gaps);
// success against the system's internal model (when runs differ only in it); success against mean
// tokens per stored memory; run metadata; the probe browser (with each probe's memory checks).
Result<std::string> render_html_report(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                       const HtmlReportOptions& options);

}  // namespace memfail::report

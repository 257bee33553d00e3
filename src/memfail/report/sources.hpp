// SPDX-License-Identifier: MIT
// One report over several results files: the chosen runs of each file, copied into one in-memory
// results database under new run ids, which remembers where each run came from so every table,
// chart and export names it "FILE#ID".
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

// One results file of a report and the runs asked for from it (empty: its finished runs).
struct ReportInput {
    std::string path;
    std::vector<std::int64_t> runs;
};

// Where a run of a report came from.
struct RunOrigin {
    std::string file;        // as the report shows it: the file name, or the path when two names clash
    std::string path;        // as given
    std::int64_t id = 0;     // the run's id in that file
    std::string name;        // "FILE#ID"
};

// The short names of `paths` as a report shows them: each file's name, or its path as given when
// two of them share a name.
std::vector<std::string> display_names(const std::vector<std::string>& paths);

// Opens every file read-only (nothing is written to any of them), selects its runs as select_runs
// does, and copies them with everything recorded about them into a new in-memory results database,
// file after file, under run ids 1, 2, ...; returns it with the ids in report order. Errors name the
// file that failed: not_found (no such file, no such run, no finished run), invalid_input (not a
// results file, a newer schema, a file given twice), database.
struct MergedResults {
    store::ResultsDb db;
    std::vector<std::int64_t> run_ids;
};
Result<MergedResults> merge_results(const std::vector<ReportInput>& inputs);

// The origins of the runs of a database made by merge_results, by its run id; empty for a results
// file (a report over one file names runs by their own ids).
Result<std::map<std::int64_t, RunOrigin>> run_origins(store::ResultsDb& db);

// How tables name each of `run_ids`: "3" for a run of a results file, "A.db#3" for a run of a merged
// report.
Result<std::map<std::int64_t, std::string>> run_names(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

}  // namespace memfail::report

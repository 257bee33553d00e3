// SPDX-License-Identifier: MIT
// Machine-readable exports of a results database, shaped like lm-eval's output: one "results" JSON
// document per report and a "samples" JSONL file with one record per probe x k. Fields: docs/RESULTS.md.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

// Version of the two export formats below; bumped when a field changes meaning or is removed.
inline constexpr int k_export_version = 1;

// One JSON document for `runs`: each run's metadata, parsed config, datasets (hashes, store size,
// latencies), per dataset x k results (counts, rate, 95% Wilson interval, every stage's count,
// tokens) and LLM usage; for runs with a suite's memory checks (writ) an "integrity" object holding
// the write-integrity table's rows ("memory": per mode x check x k; "answers": per mode x metric at
// the largest k). Numbers are JSON numbers; rates are fractions (0.42, not "42.0"). What "success"
// means follows the success table: end to end when any of the runs graded answers.
Result<std::string> results_json(store::ResultsDb& db, const std::vector<std::int64_t>& runs);

// Writes one JSON object per line for every recorded probe x k of `runs`, run by run: the probe's
// question and reference answer, its stage, answer, retrieved memories, per-fact verdicts, stage
// checks, the suite's memory checks (write integrity; empty for other suites) and the stored
// memories its facts were found in. Lines are written as they are built (the
// file is not assembled in memory) and are valid UTF-8 whatever the dataset holds (invalid bytes
// become U+FFFD). Returns the number of lines written; an io error if the stream fails.
Result<std::size_t> write_samples_jsonl(store::ResultsDb& db, const std::vector<std::int64_t>& runs,
                                        std::ostream& out);

}  // namespace memfail::report

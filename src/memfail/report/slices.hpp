// SPDX-License-Identifier: MIT
// Slices: each MemFail dataset broken down by the labels its probes carry (condition met or not and
// condition type, N, hops and voice, direct / misleading / ambiguous), so a failure shows its
// fingerprint: a summariser that drops conditions fails the probes whose condition is not met.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/figures/table.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::report {

// One label of one probe: `dimension` is what is sliced by ("condition", "condition type", "N",
// "hops", "voice", "probe"), `label` the probe's value ("not met", "3", "first person", ...).
struct SliceLabel {
    std::string dimension;
    std::string label;
};

// The labels of a probe of `dataset` (conditional_facts_easy/hard, coexisting_facts,
// persona_retrieval, long_hop; locomo by category, longmemeval by question type; other datasets
// have none), from the label fields. A missing condition_met is derived from the yes/no reference
// answer; a missing N or hop count from the number of evidence facts.
std::vector<SliceLabel> probe_slices(const std::string& dataset, const store::ProbeLabelFields& fields);

// A dimension as a JSON key: "condition type" -> "condition_type", "N" -> "n".
std::string slice_key(const std::string& dimension);

// The label fields of a probe as a results file records it: its kind, stage and probe JSON (the
// same fields store::slice_counts() reads with SQL). Unparseable JSON gives fields with only the
// kind and stage.
store::ProbeLabelFields label_fields(const std::string& kind, const std::string& stage, const std::string& probe_json);

// One slice of one run x dataset x k: the summary counts of its probes (as ResultsDb::summary
// counts them) and how many answers could be read, and how many were right.
struct Slice {
    std::string dimension;
    std::string label;
    store::SummaryRow counts;  // run_id, system_spec, dataset and k are set
    std::int64_t answers_read = 0;
    std::int64_t answers_right = 0;
};

// Every slice of `run_ids`, ordered by run, dataset (as first recorded), k, dimension (in the
// order probe_slices gives them) and label (numbers ascending; met before not met; direct,
// misleading, ambiguous; other labels alphabetical).
Result<std::vector<Slice>> slices(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

// Rate of a slice as the success table computes it: success (end to end: correct) over probes
// (graded minus errors).
struct SliceRate {
    std::int64_t success = 0;
    std::int64_t probes = 0;
    double rate = 0;
};
SliceRate slice_rate(const Slice& slice, bool end_to_end);

// The slices in one flat table (run and system columns; for CSV and JSON), and split into one
// table per run (for text and Markdown). Columns: dataset, k, slice, label, probes, success (or
// correct), rate %, 95% CI, not_stored, summary_error, unverified, not_retrieved, errors, then
// answers right / read and their share when any answer was recorded, ambiguous when any probe is.
// `style` as for success_table: TableStyle::machine (CSV) has rate, ci_low and ci_high as fractions,
// answers_right, answers_read and right (a fraction), and snake_case headers.
Result<Table> slices_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                           TableStyle style = TableStyle::human);
Result<std::vector<Table>> slices_tables_by_run(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids);

}  // namespace memfail::report

// SPDX-License-Identifier: MIT
// Imports the MemFail paper's CSV release into memfail's scenario model.
//
// Each of the five dataset files becomes one scenario shaped like a generated one (one user message
// per session, probes asked after the last session, probe ids "cfe-001", "per-001-q1", ...), with
// evidence, key details and statements derived from the columns. The release states rules in its
// own words and its essays paraphrase them, so key details are the longest word runs the essay
// really contains; a detail that cannot be derived is left out and its fact marked
// `details_complete = false` (the grader then sends it to the judge), never silently dropped.
// A row that cannot be converted at all is reported and skipped; the rest of the file imports.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>

namespace memfail::suites::memfail_suite {

struct ImportReport {
    std::vector<std::string> warnings;  // "file:line: row N: ..." or "file: ..."
    // Rows skipped because they could not be converted: "file:line: column 'x': reason (row N
    // skipped)". The other rows of the file still import.
    std::vector<std::string> errors;
    std::vector<std::string> notes;      // files of the release folder that were ignored, and why
    std::size_t rows = 0;                // data rows read (skipped ones included)
    std::size_t skipped_rows = 0;        // rows listed in `errors`
    std::size_t probes = 0;              // probes created
    std::size_t incomplete_facts = 0;    // evidence facts with details_complete = false
};

// The dataset a file of the release folder holds, from its name: the release's own names
// ("conditional_facts_dataset_easy.csv", "coexisting_facts_dataset.csv", "persona_dataset.csv",
// "long_hop_chains.csv", ...) or memfail's ("<dataset>.csv"). Empty for any other name.
std::string dataset_of_file(const std::string& file_name);

// Reads the dataset files of DIR (at least one must exist; a dataset present under both names is
// an error) and returns one scenario per dataset found, in the paper's order, plus a report. The
// release's `*_raw.csv` copies and its `*.json` generation records are ignored with a note; other
// CSV files are skipped with a warning. A file whose header is wrong, or none of whose rows
// converts, fails the import (invalid_input, "file:line: column 'x'").
Result<std::pair<std::vector<data::Scenario>, ImportReport>> import_memfail_csv_dir(const std::string& dir);

// One file, dataset given explicitly. Rows that cannot be converted are listed in
// `report.errors` and skipped; the file fails only when its header is wrong or no row converts.
// On error `report` is left untouched.
Result<data::Scenario> import_memfail_csv_file(const std::string& path, const std::string& dataset,
                                               ImportReport& report);

// The same from CSV text already in memory; `source` names it in messages.
Result<data::Scenario> import_memfail_csv_text(std::string_view content, const std::string& source,
                                               const std::string& dataset, ImportReport& report);

// The longest contiguous run of `phrase`'s words found inside one of `sentences` (compared after
// text::normalize, on word boundaries), at least `min_words` long and starting and ending on a
// content word (edge stopwords carry no detail and only make matching brittle). Ties go to the run
// with more content words, then to the earlier one. Returns the run as the sentence spells it, or
// an empty string when none qualifies.
std::string longest_word_run(std::string_view phrase, const std::vector<std::string>& sentences,
                             std::size_t min_words);

}  // namespace memfail::suites::memfail_suite

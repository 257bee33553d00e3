// SPDX-License-Identifier: MIT
// Imports the MemFail paper's CSV release into memfail's scenario model.
//
// Each of the five dataset files becomes one scenario shaped like a generated one (one user message
// per session, probes asked after the last session, probe ids "cfe-001", "per-001-q1", ...), with
// evidence and key details derived from the columns. The release states rules in its own words and
// its essays paraphrase them, so key details are the longest word runs the essay really contains;
// anything that cannot be matched is reported as a warning rather than silently dropped.
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
    std::size_t rows = 0;               // data rows read
    std::size_t probes = 0;             // probes created
};

// Reads DIR/<dataset>.csv for each of the five datasets present (at least one must exist) and
// returns one scenario per dataset found, in the paper's order, plus a report.
Result<std::pair<std::vector<data::Scenario>, ImportReport>> import_memfail_csv_dir(const std::string& dir);

// One file, dataset given explicitly. On error `report` is left untouched.
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

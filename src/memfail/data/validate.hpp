// SPDX-License-Identifier: MIT
// Structural checks every scenario must pass, whatever its suite. Dataset-specific rules live beside
// their generators (suites/memfail/rules.hpp) and report through the same Violation type.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <memfail/data/model.hpp>

namespace memfail::data {

struct Violation {
    std::size_t line = 0;  // line of the JSONL file, 0 when not from a file
    std::string field;     // JSON path: "probes[12].evidence[0].key_details[1]"
    std::string message;   // what rule is broken, in a sentence
};

// Ids (scenario, session, message, probe and evidence-fact ids) are 1..k_max_id_length characters
// from [A-Za-z0-9._:-] and do not start with '.': they end up in file names, logs and SQL rows, and
// a restricted set keeps them from naming paths ("../x", "/etc/x") or hiding control characters.
inline constexpr std::size_t k_max_id_length = 128;
// Empty when `id` is acceptable, otherwise what is wrong with it ("contains '/' ...").
std::string id_problem(std::string_view id);
// `raw` made acceptable to id_problem, for importers of ids they did not write: other bytes become
// '-', so does a leading '.', and an id longer than the limit is cut and ended with 16 hex digits of
// the whole one's hash, so distinct long ids stay distinct. Empty stays empty.
std::string clean_id(const std::string& raw);

// Formats "path:line: field: message".
std::string format_violation(const std::string& path, const Violation& v);

// Appends a violation for every structural problem: duplicate, empty or malformed ids (see id_problem), probes whose checkpoint
// session does not exist, evidence that points at unknown messages, key details absent from the
// messages they cite or from the fact's own text, malformed multiple-choice probes, abstain probes
// with evidence and answerable probes without.
void validate_structure(const Scenario& scenario, std::size_t line, std::vector<Violation>& out);

}  // namespace memfail::data

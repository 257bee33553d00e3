// SPDX-License-Identifier: MIT
// Deterministic answer-stage checks: the multiple-choice letter parser (exact, as the paper grades
// Long-Hop), yes/no polarity, list coverage by key details, and a conservative abstention detector.
// `--grader rules` uses them for every kind; with a judge they are compared against its verdicts.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <memfail/data/model.hpp>

namespace memfail::grade {

// The letter a multiple-choice reply selects, tried in order: the whole reply as a JSON object
// (selected_choice, answer or choice), a JSON object embedded in the reply, then the last standalone
// capital letter A..`last` that is not the article "A" starting or inside a sentence. Empty when
// none is found.
std::optional<char> parse_choice_letter(std::string_view reply, char last = 'E');

// "yes" / "no" when the reply commits to one (first yes/no word of its first sentence), else empty.
std::optional<std::string> parse_yes_no(std::string_view reply);

// True when the reply says it lacks information about the subject instead of answering.
bool looks_like_abstention(std::string_view reply);

struct AnswerVerdict {
    bool correct = false;
    std::string parsed;  // what was read from the reply: a letter, yes/no, or matched items
    std::string reason;
};

// Grades `reply` against the probe's reference by rules. For open and list probes the answer must
// contain each evidence fact's deciding detail (for persona probes the one not naming the person).
AnswerVerdict grade_answer_by_rules(const data::Probe& probe, std::string_view reply);

}  // namespace memfail::grade

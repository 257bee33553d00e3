// SPDX-License-Identifier: MIT
// Deterministic answer-stage checks: the multiple-choice letter parser (exact, as the paper grades
// Long-Hop), yes/no polarity, list coverage by key details, and a conservative abstention detector.
// They decide only what they can prove (AnswerVerdict::decided); `--grader rules` leaves the rest
// unverified, and with a judge they are compared against its verdicts.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/data/model.hpp>

namespace memfail::grade {

// The letter a multiple-choice reply selects, tried in order: the whole reply as a JSON object
// (selected_choice, answer or choice), a JSON object embedded in the reply, then the last standalone
// capital letter A..`last` that is not the article "A" starting or inside a sentence. Empty when
// none is found.
std::optional<char> parse_choice_letter(std::string_view reply, char last = 'E');

// "yes" / "no" when the reply commits to one (first yes/no word of its first sentence), else empty.
std::optional<std::string> parse_yes_no(std::string_view reply);

// True when the reply only declines (says it has nothing to answer with) and guesses nothing
// (grade/declines.hpp).
bool looks_like_abstention(std::string_view reply);

struct AnswerVerdict {
    bool correct = false;
    // False when the rules cannot prove the verdict either way (a detail not found may be said in
    // other words; a reply with no yes or no; a reply that may decline in other words): only a judge
    // decides it, and offline the answer is unverified. `correct` is then false.
    bool decided = true;
    std::string parsed;  // what was read from the reply: a letter, yes/no, or matched items
    std::string reason;
};

// Grades `reply` against the probe's reference by rules, through the evidence matcher's tokens.
// Multiple choice is read exactly. Yes/no is decided when the reply's first sentence commits. An
// abstain probe is decided only when the reply declines in words the rules know. An open or list
// probe is correct when every evidence fact's deciding detail (for persona probes the one not
// naming the person) is stated in a unit with no negation or hedge, wrong when the reply declines,
// and undecided otherwise.
AnswerVerdict grade_answer_by_rules(const data::Probe& probe, std::string_view reply);

}  // namespace memfail::grade

// SPDX-License-Identifier: MIT
// The dynamic suite's answer grading by rule, one leaf field at a time. A task's output is a JSON
// object; each graded leaf (data::ProbeField) is compared with its reference after normalisation by
// its type: dates, weekdays, clock times, durations and numbers as values in any usual written form,
// enumerations against their options, lists as sets, free text by normalised equality. A rule decides
// only what it can decide exactly: a leaf it cannot (paraphrased text, an ambiguous "03/04/2024") is
// left undecided for the judge (judge.hpp), and offline it stays unverified, never a pass.
// Scores follow DynamicMem: field = 0.8 * core_correct + 0.2 * detail_quality / 2, item = mean.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>

namespace memfail::suites::dynamic {

// The leaf of `root` at `path`: "a.b" (object members), "a[0].b" (array elements), "items" (an array
// of scalars is one leaf, a list). Empty when any step is missing.
std::optional<nlohmann::json> value_at(const nlohmann::json& root, const std::string& path);

// A model's answer as JSON: the whole text when it is an object, else the first ```json fenced block
// that is one, else the first balanced {...} in the prose that parses. An error (invalid_output) when
// the text holds no JSON object.
Result<nlohmann::json> parse_answer_json(const std::string& text);

// Who decided a field: a rule, the judge, or nobody (offline, a field the rules leave open).
enum class Decider { rule, judge, unverified };
const char* decider_name(Decider decider);

struct FieldGrade {
    std::string path;
    std::optional<bool> core_correct;  // empty: undecided (the judge decides)
    int detail_quality = 0;            // 0..2
    double score = 0;                  // 0.8 * core + 0.2 * detail / 2, once decided
    Decider decided_by = Decider::rule;
    std::string reason;
};

// DynamicMem's field score.
double field_score(bool core_correct, int detail_quality);

// Grades one leaf by rule after normalisation. A missing leaf, null, or the template's "<fill>" left
// in place is wrong (decided). core_correct empty: the rule cannot decide; decided_by is then
// `unverified` until the judge replaces the grade.
FieldGrade grade_field(const data::ProbeField& field, const std::optional<nlohmann::json>& answer_leaf);

// Every field of `probe` graded by rule against `answer` (a parsed answer object).
std::vector<FieldGrade> grade_fields(const data::Probe& probe, const nlohmann::json& answer);
// The same from the model's text. A text without a JSON object leaves every field undecided (the
// values may be stated in prose, which only the judge can read), with a reason that says so.
std::vector<FieldGrade> grade_answer(const data::Probe& probe, const std::string& answer_text);

struct ItemGrade {
    std::vector<FieldGrade> fields;
    std::optional<double> score;  // empty while any field is undecided (unless gated)
    bool identity_gated = false;
    std::string reason;
};

// Combines field grades (in probe.fields order or any order: matched by path): the item score is the
// mean of the field scores. In personalized_service items a decided wrong identity field scores the
// whole item 0 (the service was for the wrong thing), even while other fields are undecided.
ItemGrade grade_item(const data::Probe& probe, const std::vector<FieldGrade>& fields);

}  // namespace memfail::suites::dynamic

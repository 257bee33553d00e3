// SPDX-License-Identifier: MIT
// Grades an answer against a probe's rubric (data::Rubric), each kind as it says: exact values
// compared as values (objects field by field, numbers as numbers), required elements counted for
// partial credit, numbers in any written form, addresses normalised, entities counted with their
// aliases merged, constraints, forbidden and rejected elements, abstention. Never by bare substring
// where the kind says more; `semantic`, and anything a rule cannot decide exactly, is `unsure` and
// goes to the judge (offline: unverified, never a pass).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <memfail/data/model.hpp>

namespace memfail::grade {

enum class RubricOutcome { pass, fail, unsure };
const char* rubric_outcome_name(RubricOutcome outcome);

struct RubricVerdict {
    RubricOutcome outcome = RubricOutcome::unsure;
    double score = 0;                   // 0..1: partial credit (structured, multi_field), else 0 or 1
    std::vector<std::string> missing;   // required elements / fields / values not found
    std::vector<std::string> offending; // forbidden, rejected or must-not-contain elements found
    std::string reason;                 // one sentence for reports and the probe browser
};

// The rubric the probe carries, or the one implied when it carries none: should_abstain ->
// abstention; otherwise exact against `expected` (or `answer` when expected is null).
data::Rubric effective_rubric(const data::Probe& probe);

// Grades `answer` for `probe`. Deterministic and offline.
RubricVerdict grade_rubric(const data::Probe& probe, std::string_view answer);

}  // namespace memfail::grade

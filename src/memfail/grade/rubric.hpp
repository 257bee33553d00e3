// SPDX-License-Identifier: MIT
// Grades an answer against a probe's rubric (data::Rubric), each kind as it says: exact values
// compared as values (objects field by field, numbers as numbers), required elements counted for
// partial credit, numbers in any written form, addresses normalised, entities counted with their
// aliases merged, constraints, forbidden and rejected elements, abstention. Never by bare substring
// where the kind says more; `semantic`, and anything a rule cannot decide exactly, is `unsure` and
// goes to the judge (offline: unverified, never a pass).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/data/model.hpp>

namespace memfail::grade {

enum class RubricOutcome { pass, fail, unsure };
const char* rubric_outcome_name(RubricOutcome outcome);

struct RubricVerdict {
    RubricOutcome outcome = RubricOutcome::unsure;
    double score = 0;                   // 0..1: partial credit (structured, multi_field, exact objects and
                                        // arrays: the share found), else 0 or 1
    std::vector<std::string> missing;   // required elements / fields / values not found
    std::vector<std::string> offending; // forbidden, rejected, must-not-contain or known-wrong values found
    std::string reason;                 // one sentence for reports and the probe browser
};

// The rubric the probe carries, or the one implied when it carries none: should_abstain (or a
// probe of kind abstain) -> abstention; otherwise exact against `expected` (or `answer` when expected is null).
data::Rubric effective_rubric(const data::Probe& probe);

// Grades `answer` for `probe`. Deterministic and offline.
RubricVerdict grade_rubric(const data::Probe& probe, std::string_view answer);

// What the caller knows beyond the probe. `wrong_values`: values known to be wrong for it, as they
// are written (the other values of its targets' histories, their distractors). An exact value the
// answer does not state fails when the answer states one of these instead (offending lists it);
// without them the probe's own forbidden, reject and must_not_contain lists are all there is.
struct RubricContext {
    std::vector<std::string> wrong_values;
    // Overrides every structured rubric's pass fraction (run --set writ.structured_threshold=1.0).
    std::optional<double> structured_threshold = std::nullopt;
};
RubricVerdict grade_rubric(const data::Probe& probe, std::string_view answer, const RubricContext& context);

// Whether `answer` declines (answer_rules' detector, the plain declines it leaves out, and the
// probe's rubric's accept_patterns): what abstention precision and recall count.
bool answer_declines(const data::Probe& probe, std::string_view answer);

// Whether `answer` states any value the probe's targets ever had (current, past or a distractor,
// by its mentions at word boundaries). An answerable probe answered wrongly, without declining and
// without any such value, answered with something memory never held: a hallucination.
bool answer_states_known_value(const data::Scenario& scenario, const data::Probe& probe, std::string_view answer);

// The context a scenario's ledger gives a probe: the mentions of every value of its targets'
// histories and distractors that is not its expected value.
RubricContext rubric_context(const data::Scenario& scenario, const data::Probe& probe);

}  // namespace memfail::grade

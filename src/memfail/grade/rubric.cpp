// SPDX-License-Identifier: MIT
// Placeholder until the rubric grader lands (this session): everything is unsure.
#include <memfail/grade/rubric.hpp>

namespace memfail::grade {

const char* rubric_outcome_name(RubricOutcome outcome) {
    switch (outcome) {
        case RubricOutcome::pass: return "pass";
        case RubricOutcome::fail: return "fail";
        case RubricOutcome::unsure: return "unsure";
    }
    return "unsure";
}

data::Rubric effective_rubric(const data::Probe& probe) {
    if (probe.rubric) return *probe.rubric;
    data::Rubric r;
    r.kind = probe.should_abstain ? data::RubricKind::abstention : data::RubricKind::exact;
    return r;
}

RubricVerdict grade_rubric(const data::Probe&, std::string_view) {
    RubricVerdict v;
    v.reason = "the rubric grader is not implemented yet";
    return v;
}

}  // namespace memfail::grade

// SPDX-License-Identifier: MIT
// How the long-horizon suite grades the answer to a profile task: each leaf field by rule, the judge
// deciding the fields the rules leave open (without a judge those stay unverified and the item has
// no score); under --grader both, a judge also labels each failure for agreement with the rules.
#pragma once
#include <optional>

#include <memfail/suites/suite.hpp>

namespace memfail::suites::dynamic {

// The grade of a profile task's answer; empty for a probe that is not one.
std::optional<AnswerGrade> grade_profile_answer(const AnswerContext& context);

}  // namespace memfail::suites::dynamic

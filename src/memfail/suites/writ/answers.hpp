// SPDX-License-Identifier: MIT
// How the write-integrity suite grades an answer: the probe's rubric decides what it can decide
// exactly (grade/rubric.hpp), the judge the rest; beside it, whether the answer declines, whether a
// wrong answer names a value memory ever held (hallucination) and whether a system answering for
// itself flagged the answers WRIT expects it to flag (pre-delivery detection).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <memfail/suites/suite.hpp>

namespace memfail::suites::writ {

// The grade of a probe's answer; empty for a probe outside memfail/2 (graded as every suite's is).
std::optional<AnswerGrade> grade_writ_answer(const AnswerContext& context);

// The suite's --set names and their check: structured_threshold (0 to 1).
const std::vector<std::string>& writ_setting_names();
Result<void> check_writ_setting(const std::string& name, const std::string& value);

}  // namespace memfail::suites::writ

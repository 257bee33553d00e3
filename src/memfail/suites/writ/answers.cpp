// SPDX-License-Identifier: MIT
// The write-integrity suite's answer grading (answers.hpp).
#include <memfail/grade/answer_rules.hpp>
#include <memfail/grade/rubric.hpp>
#include <memfail/suites/writ/answers.hpp>

#include <cmath>
#include <cstdlib>

namespace memfail::suites::writ {

namespace {

// structured_threshold as a number from 0 to 1, or empty when the text is not one.
std::optional<double> threshold_of(const std::string& value) {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(v) || v < 0 || v > 1)
        return std::nullopt;
    return v;
}

AnswerCheck answer_check(std::string stage, std::string grader, bool passed, bool decisive, std::string reason) {
    return {"", std::move(stage), std::move(grader), passed, decisive, std::move(reason)};
}

}  // namespace

const std::vector<std::string>& writ_setting_names() {
    static const std::vector<std::string> names = {"structured_threshold"};
    return names;
}

Result<void> check_writ_setting(const std::string& name, const std::string& value) {
    if (name == "structured_threshold") {
        if (!threshold_of(value))
            return make_error(ErrorKind::invalid_input,
                              "writ.structured_threshold must be a number from 0 to 1 (got '" + value + "')", "--set");
        return {};
    }
    return make_error(ErrorKind::invalid_input, "the write-integrity suite has no setting '" + name + "'", "--set");
}

std::optional<AnswerGrade> grade_writ_answer(const AnswerContext& c) {
    if (!c.probe.uses_v2()) return std::nullopt;
    AnswerGrade out;
    const bool abstain = c.probe.kind == data::ProbeKind::abstain;
    const std::string stage_label = abstain ? "abstention" : "answer";
    grade::RubricContext context = grade::rubric_context(c.scenario, c.probe);
    if (const auto it = c.settings.find("structured_threshold"); it != c.settings.end())
        context.structured_threshold = threshold_of(it->second);
    const grade::RubricVerdict by_rubric = grade::grade_rubric(c.probe, c.answer, context);
    const bool sure = by_rubric.outcome != grade::RubricOutcome::unsure;
    std::string reason = std::string("rubric ") + data::rubric_kind_name(grade::effective_rubric(c.probe).kind) +
                         ": " + by_rubric.reason;
    if (sure) out.checks.push_back(answer_check(stage_label, "rules", by_rubric.outcome == grade::RubricOutcome::pass,
                                                true, std::move(reason)));
    else out.checks.push_back(answer_check(stage_label, "rules_unsure", false, false, std::move(reason)));
    // WRIT's pre-delivery certification: a system answering for itself flags an answer it cannot
    // certify by a confidence below 1; right when it flags exactly where the dataset expects a flag
    // (never decisive; the report's pre_delivery_detection). No confidence is no flag, as in WRIT.
    if (const auto it = c.probe.meta.find("expected_integrity_flag");
        c.system_answered && it != c.probe.meta.end() && it->is_boolean()) {
        const bool expected = it->get<bool>();
        const bool flagged = c.system_confidence && *c.system_confidence < 1.0;
        std::string why = flagged ? "the system flagged its answer (confidence " + std::to_string(*c.system_confidence) + ")"
                          : c.system_confidence ? "the system did not flag its answer (confidence 1)"
                                                : "the system reports no confidence: no flag, as WRIT reads it";
        why += expected ? "; a flag was expected" : "; no flag was expected";
        out.checks.push_back(answer_check("integrity_flag", "rules", flagged == expected, false, std::move(why)));
    }
    // Whether the answer declined, for abstention precision and recall (never decisive).
    const bool declined = grade::answer_declines(c.probe, c.answer);
    out.checks.push_back(answer_check("declines", "rules", declined, false,
                                      declined ? "the answer declines" : "the answer does not decline"));
    if (sure) out.correct = by_rubric.outcome == grade::RubricOutcome::pass;
    else if (c.judge) {
        auto v = abstain ? c.judge->abstention(c.probe, c.answer, c.task) : c.judge->answer(c.probe, c.answer, c.task);
        if (!v) {
            out.error = v.error().describe();
            return out;
        }
        out.checks.push_back(answer_check(stage_label, "llm", v->passed, true, v->reason));
        out.correct = v->passed;
    }
    // A wrong answer to an answerable probe that declines nothing and names no value its facts
    // ever had: it answered with something memory never held (never decisive; the report's
    // hallucination rate).
    if (!abstain && !c.probe.targets.empty() && out.correct == false && !declined) {
        const bool known = grade::answer_states_known_value(c.scenario, c.probe, c.answer);
        out.checks.push_back(answer_check("hallucination", "rules", known, false,
                                          known ? "the wrong answer names a value memory held at some point"
                                                : "the wrong answer names no value this fact ever had"));
    }
    return out;
}

}  // namespace memfail::suites::writ

// SPDX-License-Identifier: MIT
// The long-horizon suite's answer grading (answers.hpp).
#include <memfail/suites/dynamic/answers.hpp>
#include <memfail/suites/dynamic/fields.hpp>
#include <memfail/suites/dynamic/judge.hpp>

#include <algorithm>
#include <set>

namespace memfail::suites::dynamic {

using nlohmann::json;

namespace {

const char* grader_name(Decider d) {
    return d == Decider::judge ? "llm" : d == Decider::rule ? "rules" : "rules_unsure";
}

}  // namespace

// The item is correct when every field's core is. Graded whatever the memory stage, so a wrong
// answer with every gold log retrieved (label all_clear) is the answer model's failure.
std::optional<AnswerGrade> grade_profile_answer(const AnswerContext& c) {
    if (c.probe.task.empty()) return std::nullopt;
    AnswerGrade out;
    std::vector<FieldGrade> grades = grade_answer(c.probe, c.answer);
    const bool open = std::any_of(grades.begin(), grades.end(), [](const FieldGrade& g) { return !g.core_correct; });
    if (open && c.judge) {
        DynamicJudge judge(c.judge->client(), c.judge->options());
        auto judged = judge.fields(c.probe, c.answer, grades);
        if (!judged) {
            out.error = judged.error().describe();
            return out;
        }
        grades = std::move(*judged);
    }
    const ItemGrade item = grade_item(c.probe, grades);
    if (item.identity_gated) out.correct = false;
    else if (item.score)
        out.correct = std::all_of(item.fields.begin(), item.fields.end(),
                                  [](const FieldGrade& g) { return g.core_correct.value_or(false); });
    for (const auto& g : item.fields)
        out.checks.push_back({g.path, "answer_field", grader_name(g.decided_by), g.core_correct.value_or(false), false,
                              g.reason});
    out.checks.push_back({"", "answer", open && c.judge ? "llm" : "rules", out.correct.value_or(false),
                          out.correct.has_value(), item.reason});
    // --grader both: a judge labels the same failure, for agreement with the rules' label; one check
    // per label (one-vs-rest), so the agreement table compares them label by label.
    const std::string rules_label = c.analysis ? c.analysis->label : std::string();
    if (c.grader == "both" && c.judge && out.correct == false && !rules_label.empty()) {
        AttributionJudgeInput in;
        in.task = c.probe.task;
        in.state_key = c.probe.state_key;
        in.question = c.probe.question;
        in.reference = c.probe.expected;
        in.predicted = c.answer;
        for (const auto& hit : c.hits) in.retrieved.push_back(hit.memory.text);
        const data::MessageIndex& messages = c.messages();
        std::set<std::string> gold;
        for (const auto& f : c.probe.fields) gold.insert(f.evidence.begin(), f.evidence.end());
        for (const auto& id : gold)
            if (const data::Message* m = messages.message(id)) in.gold.push_back(m->content);
        for (const auto& id : c.probe.conflicting)
            if (const data::Message* m = messages.message(id)) in.conflicting.push_back(m->content);
        DynamicJudge judge(c.judge->client(), c.judge->options());
        auto judged = judge.attribution(in);
        if (!judged) {
            out.error = judged.error().describe();
            return out;
        }
        const std::string judge_label = attribution_name(judged->label);
        for (const auto& name : {"irrelevant_evidence", "identity_miss", "detail_miss", "conflated", "all_clear"}) {
            const std::string stage = std::string("attribution:") + name;
            out.checks.push_back({"", stage, "rules", rules_label == name, false, "rules: " + rules_label});
            out.checks.push_back({"", stage, "llm", judge_label == name, false, "judge: " + judge_label + ": " + judged->reason});
        }
    }
    out.item_score = item.score;
    for (const auto& g : item.fields) {
        json grade = {{"core_correct", g.core_correct ? json(*g.core_correct) : json(nullptr)},
                      {"detail_quality", g.detail_quality},
                      {"score", g.core_correct ? json(g.score) : json(nullptr)},
                      {"decided_by", decider_name(g.decided_by)},
                      {"reason", g.reason}};
        out.fields.push_back({{"path", g.path}, {"grade", std::move(grade)}});
    }
    return out;
}

}  // namespace memfail::suites::dynamic

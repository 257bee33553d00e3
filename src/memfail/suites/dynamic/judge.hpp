// SPDX-License-Identifier: MIT
// The dynamic suite's judge: DynamicMem's per-field grading (core_correct, detail_quality 0-2) for
// the leaves the rules leave undecided (fields.hpp), and, for `--grader both`, a second opinion on
// the memory-side attribution label (evidence.hpp) of a failed item. Prompts are built here as chat
// requests with a JSON schema (as llm/prompts.hpp builds the staged judge's) and the replies are read
// strictly: a reply that misses a field, judges one twice or one it was not asked about, or carries no
// JSON at all is an error that says so, never a pass.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/grade/llm_judge.hpp>
#include <memfail/llm/llm_client.hpp>
#include <memfail/suites/dynamic/evidence.hpp>
#include <memfail/suites/dynamic/fields.hpp>

namespace memfail::suites::dynamic {

// Recorded with every run that uses these prompts; bump it when any prompt text here changes.
inline constexpr const char* k_dynamic_judge_version = "dynamic-judge/3";

// Schema names (response_format.json_schema.name): how scripted servers tell the calls apart.
inline constexpr const char* k_field_judge_schema = "memfail_judge_dynamic_fields";
inline constexpr const char* k_attribution_judge_schema = "memfail_judge_dynamic_attribution";

// ---- fields -------------------------------------------------------------------------------------

// What the field judge is shown.
struct FieldJudgeInput {
    std::string task;       // "state_completion" or "personalized_service"
    std::string state_key;  // "habits_state:morning_run"
    std::string question;   // the request or scenario the output answers
    nlohmann::json reference;  // the reference output (the template filled with the reference leaves)
    std::string predicted;     // the model's output as it gave it
    std::vector<data::ProbeField> fields;  // the leaves to judge, with their reference values
};

// The input for the fields of `probe` that `grades` leave undecided (all of them when `grades` is
// empty). The reference output is the probe's answer template with every graded leaf filled in.
FieldJudgeInput field_judge_input(const data::Probe& probe, const std::string& predicted,
                                  const std::vector<FieldGrade>& grades = {});

// The reference output: `answer_template` with each field's expected leaf written at its path.
nlohmann::json reference_output(const data::Probe& probe);

// The reply schema for judging `paths`: {"field_judgments": [{"field_path" (one of paths),
// "analysis", "core_correct", "detail_quality" (0..2)}]}, exactly one per path.
nlohmann::json field_judge_schema(const std::vector<std::string>& paths);

llm::ChatRequest field_judge_request(const std::string& model, const FieldJudgeInput& input);

// Reads a field judge's reply: every path in `paths` exactly once, core_correct a boolean,
// detail_quality an integer 0..2, analysis a string. Grades come back in `paths` order, decided_by
// judge, scored 0.8 * core + 0.2 * detail / 2. Anything else is an invalid_output error naming it.
Result<std::vector<FieldGrade>> parse_field_judgments(const nlohmann::json& reply, const std::vector<std::string>& paths);
// The same from a chat reply: its schema-checked JSON, else the first JSON object in its text; a reply
// with no JSON object is an error.
Result<std::vector<FieldGrade>> parse_field_judgments(const llm::ChatReply& reply, const std::vector<std::string>& paths);

// `rule` with each undecided grade replaced by the judge's grade of the same path.
std::vector<FieldGrade> merge_judged(std::vector<FieldGrade> rule, const std::vector<FieldGrade>& judged);

// ---- attribution --------------------------------------------------------------------------------

struct AttributionJudgeInput {
    std::string task;
    std::string state_key;
    std::string question;
    nlohmann::json reference;
    std::string predicted;
    std::vector<std::string> retrieved;    // the retrieved memories' texts, in rank order
    std::vector<std::string> gold;         // the gold evidence logs' texts
    std::vector<std::string> conflicting;  // logs of superseded or competing values (may be empty)
};

struct AttributionJudgment {
    Attribution label = Attribution::all_clear;
    std::string reason;
};

nlohmann::json attribution_judge_schema();
llm::ChatRequest attribution_judge_request(const std::string& model, const AttributionJudgeInput& input);
Result<AttributionJudgment> parse_attribution_judgment(const nlohmann::json& reply);
Result<AttributionJudgment> parse_attribution_judgment(const llm::ChatReply& reply);

// ---- calling the judge --------------------------------------------------------------------------

class DynamicJudge {
public:
    DynamicJudge(llm::LlmClient& client, grade::JudgeOptions options)
        : m_client(client), m_options(std::move(options)) {}

    // The rule grades with every undecided field decided by the judge (one call for all of them; none
    // when the rules decided everything).
    Result<std::vector<FieldGrade>> fields(const data::Probe& probe, const std::string& predicted,
                                           const std::vector<FieldGrade>& rule_grades);
    Result<AttributionJudgment> attribution(const AttributionJudgeInput& input);

private:
    Result<llm::ChatReply> ask(llm::ChatRequest request);

    llm::LlmClient& m_client;
    grade::JudgeOptions m_options;
};

}  // namespace memfail::suites::dynamic

// SPDX-License-Identifier: MIT
// The extractive stand-in (tools/fake-llm/extractive.hpp) on the dynamic suite's prompts, each built
// by memfail's own builders (llm::prompts::profile_task_answer, suites::dynamic::field_judge_request
// and attribution_judge_request), so a change of wording breaks these tests instead of silently
// leaving the stand-in behind: the test-taker's template comes back filled from the records by rule;
// the judges' replies validate against their schemas and memfail's readers accept them. (Here and not
// in tests/llm: test_llm does not link the suites.)
#include "extractive.hpp"
#include "fake_llm.hpp"

#include <memfail/data/model.hpp>
#include <memfail/llm/openai_client.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/llm/schema_check.hpp>
#include <memfail/suites/dynamic/judge.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using memfail::fake_llm::extractive_answer;
using memfail::fake_llm::extractive_reply;
using nlohmann::json;
namespace prompts = memfail::llm::prompts;
namespace dyn = memfail::suites::dynamic;
namespace data = memfail::data;
using memfail::llm::ChatRequest;

json messages_of(const ChatRequest& request) {
    json out = json::array();
    for (const auto& m : request.messages) out.push_back({{"role", m.role}, {"content", m.content}});
    return out;
}

std::string log_text(const std::string& timestamp, const std::string& api, json request) {
    data::AppLog log;
    log.timestamp = timestamp;
    log.app = "fitness_tracker";
    log.api = api;
    log.request = std::move(request);
    log.response = {{"status", "saved"}};
    return data::render_app_log(log);
}

// 2024-03-04 and 2024-03-11 are Mondays, 2024-03-06 a Wednesday.
const std::vector<std::string> k_records = {
    log_text("2024-03-04 07:20:11", "log_workout",
             {{"activity_type", "run"}, {"start_time", "06:30"}, {"end_time", "07:15"}, {"route_start", "Millbrook Greenway"}}),
    log_text("2024-03-06 07:18:40", "log_workout",
             {{"activity_type", "run"}, {"start_time", "06:30"}, {"end_time", "07:10"}, {"route_start", "Millbrook Greenway"}}),
    log_text("2024-03-11 19:02:05", "log_mindfulness", {{"session_kind", "guided breathing"}, {"start_time", "18:40"},
                                                        {"spot", "back porch"}}),
    log_text("2024-03-11 07:21:00", "log_workout",
             {{"activity_type", "run"}, {"start_time", "06:35"}, {"end_time", "07:15"}, {"route_start", "Frick Woods"}}),
};

const json k_template = {{"location", "<fill>"},
                         {"schedule", {{"days_of_week", "<fill>"}, {"frequency_type", "<fill>"}}},
                         {"timing", {{"start_time", "<fill>"}, {"end_time", "<fill>"}}},
                         {"reminder", {{"activity", "<fill>"}, {"place", "<fill>"}, {"time", "<fill>"}}},
                         {"provider", "<fill>"},
                         {"items", json::array({"<fill>"})}};

ChatRequest profile_request(const std::vector<std::string>& records) {
    return prompts::profile_task_answer("stand-in", records, "Fill in the user's current weekday morning run.",
                                        k_template.dump(2));
}

TEST(ExtractiveDynamic, ProfileTaskFillsEveryLeafFromTheRecordsByItsKey) {
    const auto reply = extractive_answer(messages_of(profile_request(k_records)));
    ASSERT_TRUE(reply.has_value());
    const json filled = json::parse(*reply);  // the filled JSON object only
    // Same keys and shape, no "<fill>" left.
    ASSERT_TRUE(filled.is_object());
    EXPECT_EQ(filled.size(), k_template.size());
    EXPECT_EQ(filled.dump().find("<fill>"), std::string::npos) << filled.dump(2);
    // A key some payload carries takes that key's most frequent value (ties: the higher-ranked record).
    EXPECT_EQ(filled["timing"]["start_time"], "06:30");
    EXPECT_EQ(filled["timing"]["end_time"], "07:15");
    // Days from the "[Mon 2024-..." timestamps, written out.
    EXPECT_EQ(filled["schedule"]["days_of_week"], "Monday");
    // Places from place-like payload keys; times from HH:MM values; activities from type-like keys.
    EXPECT_EQ(filled["location"], "Millbrook Greenway");
    EXPECT_EQ(filled["reminder"]["place"], "Millbrook Greenway");
    EXPECT_EQ(filled["reminder"]["time"], "06:30");
    EXPECT_EQ(filled["reminder"]["activity"], "run");
    // Nothing fits: "unknown", in arrays too.
    EXPECT_EQ(filled["schedule"]["frequency_type"], "unknown");
    EXPECT_EQ(filled["provider"], "unknown");
    EXPECT_EQ(filled["items"], json::array({"unknown"}));
    // Deterministic.
    EXPECT_EQ(extractive_answer(messages_of(profile_request(k_records))), reply);
}

TEST(ExtractiveDynamic, ProfileTaskWithoutRecordsAnswersUnknownEverywhere) {
    const auto reply = extractive_answer(messages_of(profile_request({})));
    ASSERT_TRUE(reply.has_value());
    const json filled = json::parse(*reply);
    EXPECT_EQ(filled["timing"]["start_time"], "unknown");
    EXPECT_EQ(filled["schedule"]["days_of_week"], "unknown");
    EXPECT_EQ(filled["items"], json::array({"unknown"}));
}

TEST(ExtractiveDynamic, OtherAnswerPromptsAreNotTakenForProfileTasks) {
    // The open-question prompt still gets its first note.
    const auto open = extractive_answer(messages_of(prompts::graded_answer("m", {{"User lives in Lisbon.", "2024-01-02 (Tue)"}}, {}, "Where?", {})));
    ASSERT_TRUE(open.has_value());
    EXPECT_EQ(*open, "User lives in Lisbon.");
    // A records prompt without the fill instruction is left to the script.
    json messages = messages_of(profile_request(k_records));
    messages[1]["content"] = "What does the user do on Mondays?";
    EXPECT_FALSE(extractive_answer(messages).has_value());
}

data::Probe run_probe() {
    data::Probe p;
    p.id = "u1.C1.sc.habits_state:morning_run";
    p.task = "state_completion";
    p.state_key = "habits_state:morning_run";
    p.question = "Fill in the user's current weekday morning run as of March 31, 2024.";
    p.answer_template = {{"location", "<fill>"},
                         {"schedule", {{"days_of_week", "<fill>"}, {"frequency_type", "<fill>"}}},
                         {"timing", {{"start_time", "<fill>"}}}};
    auto field = [](std::string path, data::FieldType type, data::FieldRole role, json expected) {
        data::ProbeField f;
        f.path = std::move(path);
        f.type = type;
        f.role = role;
        f.expected = std::move(expected);
        return f;
    };
    p.fields = {field("location", data::FieldType::text, data::FieldRole::detail, "Millbrook Greenway"),
                field("schedule.frequency_type", data::FieldType::enumeration, data::FieldRole::core, "weekly"),
                field("schedule.days_of_week", data::FieldType::weekday, data::FieldRole::core, json::array({1, 3})),
                field("timing.start_time", data::FieldType::time, data::FieldRole::core, "06:30")};
    p.fields[1].options = {"daily", "weekly", "biweekly"};
    return p;
}

TEST(ExtractiveDynamic, FieldJudgeGradesEveryListedFieldByNormalisedContainment) {
    const data::Probe probe = run_probe();
    const std::string predicted =
        R"({"location": "the Millbrook Greenway trail", "schedule": {"days_of_week": "Monday", "frequency_type": "Weekly"},)"
        R"( "timing": {"start_time": "unknown"}})";
    const ChatRequest request = dyn::field_judge_request("judge", dyn::field_judge_input(probe, predicted));
    ASSERT_TRUE(request.schema.has_value());
    EXPECT_EQ(request.schema->name, dyn::k_field_judge_schema);
    const auto reply = extractive_reply(request.schema->name, messages_of(request));
    ASSERT_TRUE(reply.has_value());
    const auto problem = memfail::llm::validate(*reply, request.schema->schema);
    EXPECT_FALSE(problem.has_value()) << problem.value_or("") << "\n" << reply->dump(2);

    std::vector<std::string> paths;
    for (const auto& f : probe.fields) paths.push_back(f.path);
    auto grades = dyn::parse_field_judgments(*reply, paths);  // memfail's own reader accepts it
    ASSERT_TRUE(grades.has_value()) << grades.error().describe();
    ASSERT_EQ(grades->size(), 4u);
    const auto& g = *grades;
    // Contains the reference: core right, detail 1; equal after normalisation: detail 2.
    EXPECT_TRUE(*g[0].core_correct);
    EXPECT_EQ(g[0].detail_quality, 1);
    EXPECT_TRUE(*g[1].core_correct);
    EXPECT_EQ(g[1].detail_quality, 2);
    // "Monday" against [1, 3], "unknown" against "06:30": wrong.
    EXPECT_FALSE(*g[2].core_correct);
    EXPECT_EQ(g[2].detail_quality, 0);
    EXPECT_FALSE(*g[3].core_correct);
    EXPECT_FALSE(g[3].reason.empty());

    // No JSON in the answer: every field wrong, still one judgment per field.
    const ChatRequest empty = dyn::field_judge_request("judge", dyn::field_judge_input(probe, ""));
    const auto none = extractive_reply(empty.schema->name, messages_of(empty));
    ASSERT_TRUE(none.has_value());
    auto none_grades = dyn::parse_field_judgments(*none, paths);
    ASSERT_TRUE(none_grades.has_value()) << none_grades.error().describe();
    for (const auto& grade : *none_grades) EXPECT_FALSE(*grade.core_correct) << grade.path;
}

dyn::AttributionJudgeInput attribution_input(std::vector<std::string> retrieved) {
    const data::Probe probe = run_probe();
    dyn::AttributionJudgeInput in;
    in.task = probe.task;
    in.state_key = probe.state_key;
    in.question = probe.question;
    in.reference = dyn::reference_output(probe);
    in.predicted = R"({"location": "Frick Woods"})";
    in.retrieved = std::move(retrieved);
    in.gold = {k_records[0], k_records[1]};
    in.conflicting = {k_records[3]};
    return in;
}

std::string label_for(const dyn::AttributionJudgeInput& in) {
    const ChatRequest request = dyn::attribution_judge_request("judge", in);
    EXPECT_TRUE(request.schema.has_value());
    EXPECT_EQ(request.schema->name, dyn::k_attribution_judge_schema);
    const auto reply = extractive_reply(request.schema->name, messages_of(request));
    if (!reply) {
        ADD_FAILURE() << "no reply";
        return {};
    }
    const auto problem = memfail::llm::validate(*reply, request.schema->schema);
    EXPECT_FALSE(problem.has_value()) << problem.value_or("") << "\n" << reply->dump(2);
    const auto parsed = dyn::parse_attribution_judgment(*reply);
    if (!parsed) {
        ADD_FAILURE() << parsed.error().describe();
        return {};
    }
    EXPECT_FALSE(parsed->reason.empty());
    return dyn::attribution_name(parsed->label);
}

TEST(ExtractiveDynamic, AttributionJudgeLabelsByHowManyGoldLogsWereRetrieved) {
    // Every gold log among the retrieved memories (a memory may hold more than the log).
    EXPECT_EQ(label_for(attribution_input({"Session of March 4: " + k_records[0], k_records[2], k_records[1]})),
              "all_clear");
    // Some of them.
    EXPECT_EQ(label_for(attribution_input({k_records[3], k_records[0]})), "detail_miss");
    // None, or nothing retrieved at all.
    EXPECT_EQ(label_for(attribution_input({k_records[2], k_records[3]})), "irrelevant_evidence");
    EXPECT_EQ(label_for(attribution_input({})), "irrelevant_evidence");
    // A gold log's text in the conflicting section does not count as retrieved.
    auto in = attribution_input({k_records[2]});
    in.conflicting = {k_records[0], k_records[1]};
    EXPECT_EQ(label_for(in), "irrelevant_evidence");
}

TEST(ExtractiveDynamic, ServerAnswersTheDynamicPromptsWhenExtractiveIsOn) {
    memfail::fake_llm::ServerOptions options;
    options.script = {{"extractive", true}};
    auto server = memfail::fake_llm::FakeLlmServer::start(options).value();
    memfail::llm::ClientOptions client_options;
    client_options.base_url = server->base_url();
    client_options.max_retries = 0;
    auto client = memfail::llm::make_openai_client(client_options).value();

    const auto answer = client->chat(profile_request(k_records));
    ASSERT_TRUE(answer.has_value()) << answer.error().describe();
    EXPECT_EQ(json::parse(answer->content)["timing"]["start_time"], "06:30");

    const auto judged = client->chat(dyn::attribution_judge_request("judge", attribution_input({k_records[0]})));
    ASSERT_TRUE(judged.has_value()) << judged.error().describe();
    const auto parsed = dyn::parse_attribution_judgment(*judged);
    ASSERT_TRUE(parsed.has_value()) << parsed.error().describe();
    EXPECT_EQ(dyn::attribution_name(parsed->label), std::string("detail_miss"));
    EXPECT_EQ(server->stats()["by_rule"]["extractive"], 2);
}

}  // namespace

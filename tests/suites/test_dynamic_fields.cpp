// SPDX-License-Identifier: MIT
// The dynamic suite's per-leaf rules (each type: right, wrong, and left to the judge, in the ways
// models really write values), item scoring with identity gating, answer parsing, and the strict
// reading of the judge's replies.
#include <memfail/suites/dynamic/fields.hpp>
#include <memfail/suites/dynamic/judge.hpp>

#include <gtest/gtest.h>

#include <string>

namespace memfail::suites::dynamic {
namespace {

using data::FieldRole;
using data::FieldType;
using nlohmann::json;

data::ProbeField field(FieldType type, json expected, FieldRole role = FieldRole::core,
                       std::vector<std::string> options = {}) {
    data::ProbeField f;
    f.path = "value";
    f.type = type;
    f.role = role;
    f.expected = std::move(expected);
    f.options = std::move(options);
    return f;
}

// The rule's verdict: "right", "wrong" or "judge".
std::string verdict(FieldType type, json expected, json answer, std::vector<std::string> options = {}) {
    const FieldGrade g = grade_field(field(type, std::move(expected), FieldRole::core, std::move(options)), answer);
    if (!g.core_correct) {
        EXPECT_EQ(g.decided_by, Decider::unverified);
        return "judge";
    }
    EXPECT_EQ(g.decided_by, Decider::rule);
    return *g.core_correct ? "right" : "wrong";
}

// ---- value_at and parse_answer_json ------------------------------------------------------------

TEST(DynamicFields, ValueAtFollowsObjectsAndArrays) {
    const json root = json::parse(R"({"schedule": {"start_time": "06:30", "days": ["Mon", "Wed"]},
                                      "items": [{"name": "oat milk"}, {"name": "bread"}]})");
    EXPECT_EQ(value_at(root, "schedule.start_time"), json("06:30"));
    EXPECT_EQ(value_at(root, "schedule.days"), json::parse(R"(["Mon", "Wed"])"));
    EXPECT_EQ(value_at(root, "items[1].name"), json("bread"));
    EXPECT_EQ(value_at(root, "schedule.days[0]"), json("Mon"));
    EXPECT_FALSE(value_at(root, "schedule.end_time"));
    EXPECT_FALSE(value_at(root, "items[2].name"));
    EXPECT_FALSE(value_at(root, "schedule.start_time.hour"));
}

TEST(DynamicFields, ParseAnswerJsonFindsTheObject) {
    EXPECT_EQ(parse_answer_json(R"({"a": 1})").value(), json::parse(R"({"a": 1})"));
    EXPECT_EQ(parse_answer_json("Here you go:\n```json\n{\"a\": {\"b\": \"x}\"}}\n```\nAnything else?").value(),
              json::parse(R"({"a": {"b": "x}"}})"));
    EXPECT_EQ(parse_answer_json("Sure! The record is {\"time\": \"06:30\"} as requested.").value(),
              json::parse(R"({"time": "06:30"})"));
    // A broken brace first, a good object later.
    EXPECT_EQ(parse_answer_json("{not json} then {\"ok\": true}").value(), json::parse(R"({"ok": true})"));
    const auto none = parse_answer_json("I could not find anything about your runs.");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().kind, ErrorKind::invalid_output);
    EXPECT_FALSE(parse_answer_json("```json\n{\"a\": 1,\n```"));
    EXPECT_FALSE(parse_answer_json("[1, 2, 3]"));
}

// ---- placeholders -------------------------------------------------------------------------------

TEST(DynamicFields, MissingOrUnfilledLeavesAreWrong) {
    const auto f = field(FieldType::text, "Riverside Park");
    for (const json& answer : {json("<fill>"), json(""), json("Unknown"), json("N/A"), json(nullptr)}) {
        const FieldGrade g = grade_field(f, answer);
        ASSERT_TRUE(g.core_correct) << answer.dump();
        EXPECT_FALSE(*g.core_correct) << answer.dump();
        EXPECT_EQ(g.score, 0);
        EXPECT_FALSE(g.reason.empty());
    }
    const FieldGrade absent = grade_field(f, std::nullopt);
    ASSERT_TRUE(absent.core_correct);
    EXPECT_FALSE(*absent.core_correct);
    EXPECT_EQ(verdict(FieldType::time, "06:30", "<fill>"), "wrong");
    EXPECT_EQ(verdict(FieldType::list, json::array({"yoga"}), json::array()), "wrong");
}

// ---- dates -------------------------------------------------------------------------------------

TEST(DynamicFields, DatesInAnyUsualForm) {
    for (const char* s : {"2024-03-05", "March 5, 2024", "5 Mar 2024", "Mar 5", "Tuesday, March 5th, 2024",
                          "the 5th of March", "2024/03/05", "2024-03-05T06:30:00", "Sept 5"}) {
        EXPECT_EQ(verdict(FieldType::date, "2024-03-05", s), std::string(s) == "Sept 5" ? "wrong" : "right") << s;
        EXPECT_EQ(verdict(FieldType::date, "2024-03-15", s), "wrong") << s;
    }
    EXPECT_EQ(verdict(FieldType::date, "2024-03-05", "March 5, 2023"), "wrong");
    EXPECT_EQ(verdict(FieldType::date, "2024-03-05", "2024-03-06"), "wrong");
}

TEST(DynamicFields, SlashedDatesDecideOnlyWhenUnambiguous) {
    // 03/04/2024 is March 4 or April 3: one reading matches, so only the judge can say.
    EXPECT_EQ(verdict(FieldType::date, "2024-03-04", "03/04/2024"), "judge");
    EXPECT_EQ(verdict(FieldType::date, "2024-04-03", "03/04/2024"), "judge");
    // Neither reading is May 1: wrong either way.
    EXPECT_EQ(verdict(FieldType::date, "2024-05-01", "03/04/2024"), "wrong");
    // 13 can only be a day.
    EXPECT_EQ(verdict(FieldType::date, "2024-03-13", "13/03/2024"), "right");
    EXPECT_EQ(verdict(FieldType::date, "2024-03-13", "03/13/2024"), "right");
    EXPECT_EQ(verdict(FieldType::date, "2024-03-03", "03/03/2024"), "right");
    EXPECT_EQ(verdict(FieldType::date, "2024-03-05", "early March"), "judge");
}

// ---- weekdays ----------------------------------------------------------------------------------

TEST(DynamicFields, WeekdaysAsSets) {
    const json mwf = json::array({"Monday", "Wednesday", "Friday"});
    EXPECT_EQ(verdict(FieldType::weekday, mwf, json::array({"Fri", "Mon", "Wed"})), "right");
    EXPECT_EQ(verdict(FieldType::weekday, mwf, "Mondays, Wednesdays and Fridays"), "right");
    EXPECT_EQ(verdict(FieldType::weekday, mwf, json::array({0, 2, 4})), "right");
    EXPECT_EQ(verdict(FieldType::weekday, mwf, "mon, wed."), "wrong");
    EXPECT_EQ(verdict(FieldType::weekday, mwf, json::array({"Mon", "Tue", "Fri"})), "wrong");
    EXPECT_EQ(verdict(FieldType::weekday, "Tuesday", "Tues"), "right");
    EXPECT_EQ(verdict(FieldType::weekday, "Tuesday", "Thursday"), "wrong");
    EXPECT_EQ(verdict(FieldType::weekday, json::array({0, 1, 2, 3, 4}), "weekdays"), "right");
    EXPECT_EQ(verdict(FieldType::weekday, json::array({0, 1, 2, 3, 4}), "Mon-Fri"), "right");
    EXPECT_EQ(verdict(FieldType::weekday, json::array({0, 1, 2, 3, 4}), "Monday through Friday"), "right");
    EXPECT_EQ(verdict(FieldType::weekday, json::array({"Saturday", "Sunday"}), "weekends"), "right");
    EXPECT_EQ(verdict(FieldType::weekday, json::array({0, 1, 2, 3, 4, 5, 6}), "every day"), "right");
    EXPECT_EQ(verdict(FieldType::weekday, mwf, "most weekday mornings"), "judge");
    EXPECT_EQ(verdict(FieldType::weekday, mwf, "three times a week"), "judge");
}

// ---- times -------------------------------------------------------------------------------------

TEST(DynamicFields, ClockTimesAsMinutes) {
    for (const char* s : {"06:30", "6:30 am", "6:30am", "6.30 a.m.", "06h30", "6:30"})
        EXPECT_EQ(verdict(FieldType::time, "06:30", s), "right") << s;
    for (const char* s : {"18:30", "6:30 pm", "6.30pm", "18h30"}) EXPECT_EQ(verdict(FieldType::time, "18:30", s), "right") << s;
    EXPECT_EQ(verdict(FieldType::time, "06:30", "07:00"), "wrong");
    EXPECT_EQ(verdict(FieldType::time, "06:30", "6:30 pm"), "wrong");
    EXPECT_EQ(verdict(FieldType::time, "18:30", "06:30"), "wrong");
    // "6:30" on its own may be said of the evening.
    EXPECT_EQ(verdict(FieldType::time, "18:30", "6:30"), "judge");
    EXPECT_EQ(verdict(FieldType::time, "06:30", "early morning"), "judge");
    EXPECT_EQ(verdict(FieldType::time, "06:30", "around 6:30"), "judge");
}

// DynamicMem's judge: a time within 5 minutes is the same timing (core) with detail 1; only the
// exact time earns detail 2; further off it is another time. Across midnight too.
TEST(DynamicFields, ClockTimesWithinFiveMinutesAreTheSameTiming) {
    auto grade = [](const char* expected, const char* got) {
        return grade_field(field(FieldType::time, expected, FieldRole::core), json(got));
    };
    for (const char* s : {"06:33", "6:25 am", "06:35", "06:25"}) {
        const FieldGrade g = grade("06:30", s);
        ASSERT_TRUE(g.core_correct) << s;
        EXPECT_TRUE(*g.core_correct) << s;
        EXPECT_EQ(g.detail_quality, 1) << s;
        EXPECT_DOUBLE_EQ(g.score, memfail::suites::dynamic::field_score(true, 1)) << s;
        EXPECT_EQ(g.decided_by, Decider::rule);
    }
    EXPECT_EQ(grade("06:30", "06:30").detail_quality, 2);
    for (const char* s : {"06:36", "06:24", "06:40", "18:30"}) EXPECT_EQ(verdict(FieldType::time, "06:30", s), "wrong") << s;
    EXPECT_EQ(verdict(FieldType::time, "23:58", "00:02"), "right");
    EXPECT_EQ(verdict(FieldType::time, "00:02", "23:58"), "right");
    // "6:33" on its own may mean the evening's 18:33, within 5 minutes of 18:30.
    EXPECT_EQ(verdict(FieldType::time, "18:30", "6:33"), "judge");
}

// ---- durations ---------------------------------------------------------------------------------

TEST(DynamicFields, DurationsAsMinutes) {
    for (const char* s : {"90 minutes", "1h 30m", "1h30", "1.5 hours", "90 min", "PT1H30M", "an hour and a half",
                          "1 hour 30 minutes", "1 and a half hours"})
        EXPECT_EQ(verdict(FieldType::duration, "1 hour 30 minutes", s), "right") << s;
    EXPECT_EQ(verdict(FieldType::duration, "45 minutes", "45 min"), "right");
    EXPECT_EQ(verdict(FieldType::duration, 45, "45 minutes"), "right");
    EXPECT_EQ(verdict(FieldType::duration, 30, "half an hour"), "right");
    EXPECT_EQ(verdict(FieldType::duration, "45 minutes", 45), "right");
    EXPECT_EQ(verdict(FieldType::duration, "45 minutes", "1 hour"), "wrong");
    EXPECT_EQ(verdict(FieldType::duration, 45, 60), "wrong");
    // A bare 1.5 may be hours: only with a unitless reference is it minutes.
    EXPECT_EQ(verdict(FieldType::duration, "1.5 hours", "1.5"), "judge");
    EXPECT_EQ(verdict(FieldType::duration, "45 minutes", "about three quarters of an hour"), "judge");
}

// ---- numbers -----------------------------------------------------------------------------------

TEST(DynamicFields, NumbersInAnyFormat) {
    for (const json& answer : {json(5000), json("5,000"), json("$5,000"), json("5k"), json("5000.00"),
                               json("5 thousand"), json("5000 dollars"), json("about $5,000 a month")})
        EXPECT_EQ(verdict(FieldType::number, 5000, answer), "right") << answer.dump();
    EXPECT_EQ(verdict(FieldType::number, "$1.2M", "1,200,000"), "right");
    EXPECT_EQ(verdict(FieldType::number, 15, "15%"), "right");
    EXPECT_EQ(verdict(FieldType::number, 0.15, "15%"), "right");
    EXPECT_EQ(verdict(FieldType::number, 5000, "4,800"), "wrong");
    EXPECT_EQ(verdict(FieldType::number, 5000, "around 4,800 per month"), "wrong");
    EXPECT_EQ(verdict(FieldType::number, 3, 4), "wrong");
    EXPECT_EQ(verdict(FieldType::number, 5000, "between 5,000 and 6,000"), "judge");
    EXPECT_EQ(verdict(FieldType::number, 5000, "a few thousand"), "judge");
}

// ---- enumerations ------------------------------------------------------------------------------

TEST(DynamicFields, EnumerationsAgainstOptions) {
    const std::vector<std::string> options = {"push_notification", "email", "sms"};
    EXPECT_EQ(verdict(FieldType::enumeration, "push_notification", "Push notification", options), "right");
    EXPECT_EQ(verdict(FieldType::enumeration, "push_notification", "email", options), "wrong");
    EXPECT_EQ(verdict(FieldType::enumeration, "push_notification", "SMS", options), "wrong");
    EXPECT_EQ(verdict(FieldType::enumeration, "push_notification", "a notification on my phone", options), "judge");
}

// ---- lists -------------------------------------------------------------------------------------

TEST(DynamicFields, ListsAsSets) {
    const json items = json::array({"oat milk", "sourdough bread"});
    const FieldGrade exact = grade_field(field(FieldType::list, items), json::array({"Sourdough bread", "Oat Milk"}));
    ASSERT_TRUE(exact.core_correct);
    EXPECT_TRUE(*exact.core_correct);
    EXPECT_EQ(exact.detail_quality, 2);
    EXPECT_DOUBLE_EQ(exact.score, 1.0);
    // Containment at word boundaries; a string split at commas.
    EXPECT_EQ(verdict(FieldType::list, items, "organic oat milk, a loaf of sourdough bread"), "right");
    // Extras: right but less precise.
    const FieldGrade extra = grade_field(field(FieldType::list, items), "oat milk, sourdough bread, eggs");
    ASSERT_TRUE(extra.core_correct);
    EXPECT_TRUE(*extra.core_correct);
    EXPECT_EQ(extra.detail_quality, 1);
    EXPECT_DOUBLE_EQ(extra.score, 0.9);
    // Missing with nothing that could stand for it: wrong. Missing beside an unknown item: the judge.
    EXPECT_EQ(verdict(FieldType::list, items, json::array({"oat milk"})), "wrong");
    EXPECT_EQ(verdict(FieldType::list, items, json::array({"oat milk", "rye loaf"})), "judge");
    // "oat" alone does not hold "oat milk".
    EXPECT_EQ(verdict(FieldType::list, json::array({"oat milk"}), json::array({"goat milk"})), "judge");
}

// ---- text --------------------------------------------------------------------------------------

TEST(DynamicFields, TextByNormalisedEqualityElseJudge) {
    EXPECT_EQ(verdict(FieldType::text, "Riverside Park", "riverside park!"), "right");
    EXPECT_EQ(verdict(FieldType::text, "Riverside Park", "the loop at Riverside Park"), "right");
    EXPECT_EQ(verdict(FieldType::text, "Riverside Park", "the park by the river"), "judge");
    EXPECT_EQ(verdict(FieldType::text, "Riverside Park", "Riverside"), "judge");
    EXPECT_EQ(verdict(FieldType::text, "Riverside Park", "unknown"), "wrong");
}

// ---- items -------------------------------------------------------------------------------------

data::Probe service_probe() {
    data::Probe p;
    p.id = "p";
    p.task = "personalized_service";
    p.state_key = "habits_state:morning_run";
    p.fields = {field(FieldType::text, "Riverside Park", FieldRole::identity),
                field(FieldType::time, "06:30", FieldRole::core),
                field(FieldType::list, json::array({"water bottle"}), FieldRole::detail)};
    p.fields[0].path = "location";
    p.fields[1].path = "start_time";
    p.fields[2].path = "bring";
    return p;
}

FieldGrade judged(const std::string& path, bool core, int detail) {
    FieldGrade g;
    g.path = path;
    g.core_correct = core;
    g.detail_quality = detail;
    g.score = field_score(core, detail);
    g.decided_by = Decider::judge;
    return g;
}

TEST(DynamicFields, ItemScoreIsTheMeanOfFieldScores) {
    EXPECT_DOUBLE_EQ(field_score(true, 2), 1.0);
    EXPECT_DOUBLE_EQ(field_score(true, 1), 0.9);
    EXPECT_DOUBLE_EQ(field_score(true, 0), 0.8);
    EXPECT_DOUBLE_EQ(field_score(false, 1), 0.1);
    EXPECT_DOUBLE_EQ(field_score(false, 0), 0.0);
    const data::Probe p = service_probe();
    const ItemGrade item = grade_item(p, {judged("location", true, 1), judged("start_time", true, 2),
                                          judged("bring", false, 2)});
    ASSERT_TRUE(item.score);
    EXPECT_DOUBLE_EQ(*item.score, (0.9 + 1.0 + 0.2) / 3);
    EXPECT_FALSE(item.identity_gated);
}

TEST(DynamicFields, UndecidedFieldsLeaveTheItemUnscored) {
    const data::Probe p = service_probe();
    const json answer = json::parse(R"({"location": "the park by the river", "start_time": "6:30 am", "bring": ["water bottle"]})");
    const auto grades = grade_fields(p, answer);
    ASSERT_EQ(grades.size(), 3u);
    EXPECT_FALSE(grades[0].core_correct);
    const ItemGrade item = grade_item(p, grades);
    EXPECT_FALSE(item.score);
    EXPECT_NE(item.reason.find("location"), std::string::npos);
}

TEST(DynamicFields, AnswersWithoutJsonGoToTheJudge) {
    const data::Probe p = service_probe();
    const auto prose = grade_answer(p, "You run at Riverside Park at 6:30 am.");
    ASSERT_EQ(prose.size(), 3u);
    for (const auto& g : prose) {
        EXPECT_FALSE(g.core_correct);
        EXPECT_EQ(g.decided_by, Decider::unverified);
    }
    const auto fenced = grade_answer(p, "```json\n{\"location\": \"Riverside Park\", \"start_time\": \"6:30 am\", "
                                        "\"bring\": \"water bottle\"}\n```");
    const ItemGrade item = grade_item(p, fenced);
    ASSERT_TRUE(item.score);
    EXPECT_DOUBLE_EQ(*item.score, 1.0);
}

TEST(DynamicFields, WrongIdentityGatesServiceItems) {
    data::Probe p = service_probe();
    // The identity is wrong by rule ("unknown"); another field is still undecided: the item is 0 anyway.
    const json answer = json::parse(R"({"location": "unknown", "start_time": "around dawn", "bring": ["water bottle"]})");
    const ItemGrade gated = grade_item(p, grade_fields(p, answer));
    EXPECT_TRUE(gated.identity_gated);
    ASSERT_TRUE(gated.score);
    EXPECT_EQ(*gated.score, 0);
    // A judge-decided wrong identity gates too.
    const ItemGrade by_judge = grade_item(p, {judged("location", false, 0), judged("start_time", true, 2),
                                              judged("bring", true, 2)});
    EXPECT_TRUE(by_judge.identity_gated);
    EXPECT_EQ(*by_judge.score, 0);
    // State completion items are not gated: the mean stands.
    p.task = "state_completion";
    const ItemGrade plain = grade_item(p, {judged("location", false, 0), judged("start_time", true, 2),
                                           judged("bring", true, 2)});
    EXPECT_FALSE(plain.identity_gated);
    EXPECT_DOUBLE_EQ(*plain.score, 2.0 / 3);
}

// ---- the judge's replies -----------------------------------------------------------------------

json judge_reply(const std::string& body) { return json::parse(body); }

TEST(DynamicFields, JudgeReplyReadStrictly) {
    const std::vector<std::string> paths = {"location", "note"};
    const auto good = parse_field_judgments(
        judge_reply(R"({"field_judgments": [
            {"field_path": "note", "analysis": "vaguer", "core_correct": true, "detail_quality": 1},
            {"field_path": "location", "analysis": "same park", "core_correct": true, "detail_quality": 2}]})"),
        paths);
    ASSERT_TRUE(good) << good.error().describe();
    ASSERT_EQ(good->size(), 2u);
    EXPECT_EQ((*good)[0].path, "location");
    EXPECT_EQ((*good)[0].decided_by, Decider::judge);
    EXPECT_DOUBLE_EQ((*good)[0].score, 1.0);
    EXPECT_DOUBLE_EQ((*good)[1].score, 0.9);
    EXPECT_EQ((*good)[1].reason, "vaguer");

    auto refuses = [&](const std::string& body, const std::string& names) {
        const auto r = parse_field_judgments(judge_reply(body), paths);
        ASSERT_FALSE(r) << body;
        EXPECT_EQ(r.error().kind, ErrorKind::invalid_output);
        EXPECT_NE(r.error().message.find(names), std::string::npos) << r.error().message;
    };
    refuses(R"({"field_judgments": [
        {"field_path": "location", "analysis": "x", "core_correct": true, "detail_quality": 2}]})", "'note'");
    refuses(R"({"field_judgments": [
        {"field_path": "location", "analysis": "x", "core_correct": true, "detail_quality": 2},
        {"field_path": "note", "analysis": "x", "core_correct": true, "detail_quality": 2},
        {"field_path": "time", "analysis": "x", "core_correct": true, "detail_quality": 2}]})", "'time'");
    refuses(R"({"field_judgments": [
        {"field_path": "location", "analysis": "x", "core_correct": true, "detail_quality": 2},
        {"field_path": "location", "analysis": "x", "core_correct": true, "detail_quality": 2}]})", "more than once");
    refuses(R"({"field_judgments": [
        {"field_path": "location", "analysis": "x", "core_correct": true, "detail_quality": 3},
        {"field_path": "note", "analysis": "x", "core_correct": true, "detail_quality": 2}]})", "detail_quality");
    refuses(R"({"field_judgments": [
        {"field_path": "location", "analysis": "x", "core_correct": "true", "detail_quality": 2},
        {"field_path": "note", "analysis": "x", "core_correct": true, "detail_quality": 2}]})", "core_correct");
    refuses(R"({"verdict": "fine"})", "field_judgments");
}

TEST(DynamicFields, JudgeReplyWithoutJsonIsAnError) {
    llm::ChatReply reply;
    reply.content = "Both fields look correct to me.";
    const auto r = parse_field_judgments(reply, {"location"});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_output);
    EXPECT_NE(r.error().message.find("no JSON"), std::string::npos);
    // Prose around a good object is read.
    reply.content = "Here:\n```json\n{\"field_judgments\": [{\"field_path\": \"location\", \"analysis\": \"ok\", "
                    "\"core_correct\": false, \"detail_quality\": 0}]}\n```";
    const auto ok = parse_field_judgments(reply, {"location"});
    ASSERT_TRUE(ok) << ok.error().describe();
    EXPECT_FALSE(*ok->front().core_correct);
}

TEST(DynamicFields, JudgeRequestAsksOnlyUndecidedFields) {
    data::Probe p = service_probe();
    p.question = "Set a reminder for my usual morning run.";
    p.answer_template = json::parse(R"({"location": "<fill>", "start_time": "<fill>", "bring": "<fill>"})");
    const json answer = json::parse(R"({"location": "the park by the river", "start_time": "06:30", "bring": ["water bottle"]})");
    const auto grades = grade_fields(p, answer);
    const FieldJudgeInput input = field_judge_input(p, answer.dump(), grades);
    ASSERT_EQ(input.fields.size(), 1u);
    EXPECT_EQ(input.fields[0].path, "location");
    EXPECT_EQ(input.reference["start_time"], "06:30");
    const llm::ChatRequest r = field_judge_request("judge-model", input);
    ASSERT_TRUE(r.schema);
    EXPECT_EQ(r.schema->name, k_field_judge_schema);
    EXPECT_EQ(r.role, llm::Role::judge);
    EXPECT_NE(r.messages.back().content.find("- location (text; identity"), std::string::npos);
    EXPECT_EQ(r.messages.back().content.find("- start_time"), std::string::npos);
    // The judge's grade replaces the undecided one only.
    const auto merged = merge_judged(grades, {judged("location", true, 1)});
    EXPECT_EQ(merged[0].decided_by, Decider::judge);
    EXPECT_EQ(merged[1].decided_by, Decider::rule);
    ASSERT_TRUE(grade_item(p, merged).score);
    EXPECT_DOUBLE_EQ(*grade_item(p, merged).score, (0.9 + 1 + 1) / 3);
}

TEST(DynamicFields, AttributionReplyReadStrictly) {
    const auto ok = parse_attribution_judgment(json::parse(R"({"label": "detail_miss", "reason": "no time"})"));
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->label, Attribution::detail_miss);
    EXPECT_FALSE(parse_attribution_judgment(json::parse(R"({"label": "wrong_person", "reason": "x"})")));
    EXPECT_FALSE(parse_attribution_judgment(json::parse(R"({"label": "all_clear"})")));
    llm::ChatReply none;
    none.content = "all clear";
    EXPECT_FALSE(parse_attribution_judgment(none));
    AttributionJudgeInput in;
    in.retrieved = {"ran 5 km at Riverside Park"};
    const auto r = attribution_judge_request("judge-model", in);
    EXPECT_EQ(r.schema->name, k_attribution_judge_schema);
    EXPECT_NE(r.messages.back().content.find("1. ran 5 km at Riverside Park"), std::string::npos);
}

}  // namespace
}  // namespace memfail::suites::dynamic

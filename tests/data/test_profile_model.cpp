// SPDX-License-Identifier: MIT
// memfail/2's long-horizon fields (the dynamic suite): app logs, checkpoints, the profile and
// profile tasks survive a round trip, a memfail/1 file cannot carry them, and the validator holds
// every task to checkpoint isolation.
#include <memfail/core/dates.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>

#include <gtest/gtest.h>

namespace memfail::data {
namespace {

using nlohmann::json;

Message app_message(const std::string& id, const std::string& timestamp, const std::string& park) {
    AppLog log;
    log.timestamp = timestamp;
    log.app = "fitness_tracker";
    log.api = "log_workout";
    log.request = {{"activity", "run"}, {"place", park}};
    log.response = {{"status", "ok"}};
    log.details = {park};
    Message m;
    m.id = id;
    m.role = "app";
    m.content = render_app_log(log);
    m.app_log = std::move(log);
    return m;
}

Scenario profile_user() {
    Scenario s;
    s.format = k_format_v2;
    s.id = "dynamic-u001";
    s.suite = "dynamic";
    s.dataset = "dynamic";
    s.sessions.push_back({"d2024-01-02", "2024-01-02T00:00:00Z", {app_message("log-1", "2024-01-02 06:31:00", "Riverside Park")}});
    s.sessions.push_back({"d2024-04-02", "2024-04-02T00:00:00Z", {app_message("log-2", "2024-04-02 06:40:00", "Hill Trail")}});
    s.checkpoints = {{"C1", "2024-03-31T23:59:59Z", "d2024-01-02"}, {"C2", "2024-06-30T23:59:59Z", "d2024-04-02"}};
    ProfileState st;
    st.key = "habits_state:morning_run";
    st.family = StateFamily::habit;
    st.domain = "health_and_self_care";
    st.snapshots.push_back({"C1", json{{"location", "Riverside Park"}}, {{"location", {"log-1"}}}});
    st.snapshots.push_back({"C2", json{{"location", "Hill Trail"}}, {{"location", {"log-2"}}}});
    s.profile.push_back(st);
    Probe p;
    p.id = "C2-sc-morning_run";
    p.after_session = "d2024-04-02";
    p.question = "Fill in the user's morning run as of 2024-06-30.";
    p.kind = ProbeKind::open;
    p.answer = "Hill Trail";
    p.task = "state_completion";
    p.state_key = st.key;
    p.checkpoint = "C2";
    p.answer_template = {{"location", "<fill>"}};
    p.fields.push_back({"location", FieldType::text, FieldRole::core, "Hill Trail", {}, {"log-2"}});
    p.conflicting = {"log-1"};
    p.state_change = "updated";
    s.probes.push_back(p);
    return s;
}

TEST(ProfileModel, RoundTripKeepsEveryField) {
    const Scenario s = profile_user();
    const json j = to_json(s);
    EXPECT_EQ(j.at("format"), "memfail/2");
    // An app log's content is its standard rendering, so the file leaves it out.
    EXPECT_FALSE(j["sessions"][0]["messages"][0].contains("content"));
    auto back = scenario_from_json(j);
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_EQ(to_json(*back), j);
    const Message& m = back->sessions[0].messages[0];
    ASSERT_TRUE(m.app_log);
    EXPECT_EQ(m.app_log->details, std::vector<std::string>{"Riverside Park"});
    EXPECT_EQ(m.content, render_app_log(*m.app_log));
    ASSERT_EQ(back->profile.size(), 1u);
    EXPECT_EQ(back->profile[0].family, StateFamily::habit);
    ASSERT_EQ(back->profile[0].snapshots.size(), 2u);
    EXPECT_EQ(back->profile[0].snapshots[1].evidence[0].log_ids, std::vector<std::string>{"log-2"});
    const Probe& p = back->probes[0];
    EXPECT_EQ(p.task, "state_completion");
    EXPECT_EQ(p.fields[0].type, FieldType::text);
    EXPECT_EQ(p.fields[0].expected, "Hill Trail");
    EXPECT_EQ(p.conflicting, std::vector<std::string>{"log-1"});
    EXPECT_EQ(p.state_change, "updated");
    EXPECT_EQ(back->checkpoints[1].after_session, "d2024-04-02");
    EXPECT_EQ(scenario_hash(*back), scenario_hash(s));
}

TEST(ProfileModel, ARenderingThatDiffersIsKept) {
    Scenario s = profile_user();
    s.sessions[0].messages[0].content = "ran at Riverside Park";
    const json j = to_json(s);
    EXPECT_EQ(j["sessions"][0]["messages"][0]["content"], "ran at Riverside Park");
    auto back = scenario_from_json(j);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->sessions[0].messages[0].content, "ran at Riverside Park");
}

TEST(ProfileModel, RenderingNamesTheWeekdayAppAndApi) {
    const Message m = app_message("log-1", "2024-03-05 06:31:00", "Riverside Park");
    EXPECT_EQ(m.content.rfind("[Tue 2024-03-05 06:31] fitness_tracker.log_workout request: ", 0), 0u) << m.content;
    EXPECT_NE(m.content.find("Riverside Park"), std::string::npos);
}

TEST(ProfileModel, AMemfail1FileCannotCarryProfileFields) {
    json j = to_json(profile_user());
    j["format"] = "memfail/1";
    auto r = scenario_from_json(j);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("memfail/2"), std::string::npos);
}

TEST(ProfileModel, BadEnumsAreRefusedWithTheirPath) {
    json j = to_json(profile_user());
    j["probes"][0]["fields"][0]["type"] = "colour";
    auto r = scenario_from_json(j);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().where, "probes[0].fields[0].type");
    j = to_json(profile_user());
    j["profile"][0]["family"] = "mood";
    r = scenario_from_json(j);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().where, "profile[0].family");
}

std::vector<Violation> validate_structure(const Scenario& s) {
    std::vector<Violation> out;
    data::validate_structure(s, 1, out);
    return out;
}

std::vector<std::string> fields_of(const std::vector<Violation>& v) {
    std::vector<std::string> out;
    for (const auto& x : v) out.push_back(x.field + ": " + x.message);
    return out;
}

TEST(ProfileModel, ValidatorHoldsTasksToCheckpointIsolation) {
    EXPECT_TRUE(validate_structure(profile_user()).empty()) << ::testing::PrintToString(fields_of(validate_structure(profile_user())));
    Scenario s = profile_user();
    // A C1 probe that cites the log of April: stored after its checkpoint.
    s.probes[0].after_session = "d2024-01-02";
    const auto v = fields_of(validate_structure(s));
    EXPECT_TRUE(std::any_of(v.begin(), v.end(), [](const std::string& x) {
        return x.find("probes[0].fields[0].evidence[0]") == 0 && x.find("after the probe's checkpoint") != std::string::npos;
    })) << ::testing::PrintToString(v);
}

TEST(ProfileModel, ValidatorChecksAppLogsAndTasks) {
    Scenario s = profile_user();
    s.sessions[0].messages[0].app_log->timestamp = "2024-13-02 06:31:00";
    s.sessions[1].messages[0].role = "user";
    s.probes[0].task = "guessing";
    s.probes[0].fields[0].evidence.push_back("log-404");
    const auto v = fields_of(validate_structure(s));
    auto has = [&](const std::string& prefix) {
        return std::any_of(v.begin(), v.end(), [&](const std::string& x) { return x.rfind(prefix, 0) == 0; });
    };
    EXPECT_TRUE(has("sessions[0].messages[0].app_log.timestamp")) << ::testing::PrintToString(v);
    EXPECT_TRUE(has("sessions[1].messages[0].app_log")) << ::testing::PrintToString(v);
    EXPECT_TRUE(has("probes[0].task")) << ::testing::PrintToString(v);
    EXPECT_TRUE(has("probes[0].fields[0].evidence[1]")) << ::testing::PrintToString(v);
}

}  // namespace
}  // namespace memfail::data

// SPDX-License-Identifier: MIT
// The adapter protocol in-process: JSON codec, error objects, the dispatcher over a built-in
// system, and AdapterSystem over the local transport and over a scripted one.
#include "memory_test_util.hpp"

#include <memfail/memory/adapter/adapter_system.hpp>
#include <memfail/memory/adapter/protocol.hpp>

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <stdexcept>

namespace memfail::memory::adapter {
namespace {

using nlohmann::json;
using test::ids_of;
using test::ok;

data::Session pets_session() {
    return test::session(
        "s1", "2026-03-01T09:00:00Z",
        {test::user("m1", "Our dog Biscuit hides under the bed during thunderstorms."),
         test::assistant("m2", "A snug crate might help Biscuit feel safe."),
         test::user("m3", "My sister Priya moved to Lisbon last spring.")});
}

std::unique_ptr<MemorySystem> verbatim() {
    return ok(make_memory_system("verbatim", {}));
}

// --- Codec
// ---------------------------------------------------------------------------------------------

TEST(AdapterCodec, MemoryAndHitRoundTrip) {
    const Memory memory{"m-17",
                        "Biscuit fears thunder.",
                        "2026-03-01T09:00:00Z",
                        "2026-03-02T10:00:00Z",
                        {"a", "b"}};
    const Hit hit{memory, 0.82};
    const Hit back = ok(hit_from_json(to_json(hit), ErrorKind::protocol, "memories[0]"));
    EXPECT_EQ(back.memory.id, memory.id);
    EXPECT_EQ(back.memory.text, memory.text);
    EXPECT_EQ(back.memory.created_at, memory.created_at);
    EXPECT_EQ(back.memory.updated_at, memory.updated_at);
    EXPECT_EQ(back.memory.sources, memory.sources);
    EXPECT_DOUBLE_EQ(back.score, 0.82);
}

TEST(AdapterCodec, SessionAndEventRoundTrip) {
    const data::Session session = pets_session();
    const data::Session back =
        ok(session_from_json(to_json(session), ErrorKind::invalid_input, "session"));
    EXPECT_EQ(back.id, "s1");
    EXPECT_EQ(back.timestamp, session.timestamp);
    ASSERT_EQ(back.messages.size(), 3u);
    EXPECT_EQ(back.messages[1].role, "assistant");
    EXPECT_EQ(back.messages[2].content, session.messages[2].content);

    const MemoryEvent event{"m-1", "update", "old", "new", "2026-03-01T09:00:00Z", {"x"}};
    const MemoryEvent e = ok(event_from_json(to_json(event), ErrorKind::protocol, "events[0]"));
    EXPECT_EQ(e.memory_id, "m-1");
    EXPECT_EQ(e.event, "update");
    EXPECT_EQ(e.old_text, "old");
    EXPECT_EQ(e.new_text, "new");
    EXPECT_EQ(e.sources, (std::vector<std::string>{"x"}));
}

// An app's log reaches an adapter as the app emitted it (its object and timestamp beside the text
// rendering), never with the grading aids its evidence is matched by.
TEST(AdapterCodec, AnAppLogTravelsAsItsObjectWithoutItsGradingDetails) {
    data::AppLog log;
    log.timestamp = "2024-03-05 06:31:00";
    log.app = "fitness_tracker";
    log.api = "log_workout";
    log.request = {{"activity", "run"}, {"place", "Riverside Park"}};
    log.response = {{"ok", true}};
    log.details = {"Riverside Park", "06:31"};
    const data::Message message("u1:log-17", "app", data::render_app_log(log), log);
    const nlohmann::json j = to_json(message);
    EXPECT_EQ(j.at("timestamp"), "2024-03-05 06:31:00");
    EXPECT_EQ(j.at("app_log").at("api"), "log_workout");
    EXPECT_EQ(j.at("app_log").at("request").at("place"), "Riverside Park");
    EXPECT_FALSE(j.at("app_log").contains("details"));
    EXPECT_EQ(j.dump().find("details"), std::string::npos);
    auto back = message_from_json(j, ErrorKind::protocol, "m");
    ASSERT_TRUE(back) << back.error().describe();
    ASSERT_TRUE(back->app_log.has_value());
    EXPECT_EQ(back->app_log->app, "fitness_tracker");
    EXPECT_EQ(back->app_log->response, log.response);
    EXPECT_TRUE(back->app_log->details.empty());
    EXPECT_EQ(back->content, message.content);
    // A plain message carries neither.
    const nlohmann::json plain = to_json(data::Message("m1", "user", "hello"));
    EXPECT_FALSE(plain.contains("app_log"));
    EXPECT_FALSE(plain.contains("timestamp"));
}

TEST(AdapterCodec, OptionalFieldsMayBeMissingOrNullAndUnknownOnesAreIgnored) {
    const Hit hit = ok(hit_from_json(json{{"id", "a"},
                                          {"text", "t"},
                                          {"created_at", nullptr},
                                          {"sources", nullptr},
                                          {"colour", "blue"}},
                                     ErrorKind::protocol, "memories[0]"));
    EXPECT_EQ(hit.memory.id, "a");
    EXPECT_TRUE(hit.memory.created_at.empty());
    EXPECT_TRUE(hit.memory.sources.empty());
    EXPECT_EQ(hit.score, 0);
}

TEST(AdapterCodec, ErrorsNameTheFieldAndUseTheGivenKind) {
    const auto wrong_text =
        memory_from_json(json{{"id", "a"}, {"text", 5}}, ErrorKind::protocol, "memories[3]");
    ASSERT_FALSE(wrong_text);
    EXPECT_EQ(wrong_text.error().kind, ErrorKind::protocol);
    EXPECT_EQ(wrong_text.error().where, "memories[3].text");
    EXPECT_NE(wrong_text.error().message.find("string"), std::string::npos);

    const auto bad_source =
        memory_from_json(json{{"id", "a"}, {"text", "t"}, {"sources", {"ok", 7}}},
                         ErrorKind::protocol, "memories[0]");
    ASSERT_FALSE(bad_source);
    EXPECT_EQ(bad_source.error().where, "memories[0].sources[1]");

    const auto no_id = memory_from_json(json{{"text", "t"}}, ErrorKind::invalid_input, "m");
    ASSERT_FALSE(no_id);
    EXPECT_EQ(no_id.error().kind, ErrorKind::invalid_input);
    EXPECT_EQ(no_id.error().where, "m.id");

    json session = to_json(pets_session());
    session["messages"][2].erase("content");
    const auto bad_session = session_from_json(session, ErrorKind::invalid_input, "session");
    ASSERT_FALSE(bad_session);
    EXPECT_EQ(bad_session.error().where, "session.messages[2].content");

    EXPECT_FALSE(hit_from_json(json{{"id", "a"}, {"text", "t"}, {"score", "high"}},
                               ErrorKind::protocol, "h"));
    EXPECT_FALSE(
        event_from_json(json{{"memory_id", "a"}, {"event", "merge"}}, ErrorKind::protocol, "e"));
    EXPECT_FALSE(memory_from_json(json::array(), ErrorKind::protocol, "memories[0]"));
}

TEST(AdapterCodec, CapabilitiesDefaultToFalse) {
    const Capabilities caps =
        ok(capabilities_from_json(json{{"history", true}}, ErrorKind::protocol, "capabilities"));
    EXPECT_TRUE(caps.history);
    EXPECT_FALSE(caps.provenance);
    EXPECT_FALSE(caps.as_of);
    EXPECT_FALSE(caps.idempotent_store);
    EXPECT_FALSE(caps.uses_ground_truth);
    const auto bad =
        capabilities_from_json(json{{"as_of", "yes"}}, ErrorKind::protocol, "capabilities");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().where, "capabilities.as_of");

    EXPECT_TRUE(has_provenance_op(json{{"provenance_op", true}}));
    EXPECT_FALSE(has_provenance_op(json{{"provenance_op", false}}));
    EXPECT_FALSE(has_provenance_op(json{{"provenance", true}}));
    EXPECT_FALSE(has_provenance_op(json::array()));
}

TEST(AdapterCodec, ErrorObjectsMapKindsBothWays) {
    const std::pair<ErrorKind, std::string> cases[] = {
        {ErrorKind::invalid_input, "invalid_request"},
        {ErrorKind::unsupported, "unsupported"},
        {ErrorKind::not_found, "not_found"},
        {ErrorKind::database, "internal"}};
    for (const auto& [kind, name] : cases) {
        const json j = error_json(make_error(kind, "it went wrong"));
        EXPECT_EQ(j["error"]["kind"], name);
        EXPECT_EQ(j["error"]["message"], "it went wrong");
        const Error back = error_from_json(j, "exec:x");
        EXPECT_EQ(back.kind, kind == ErrorKind::database ? ErrorKind::internal : kind);
        EXPECT_EQ(back.message, "it went wrong");
        EXPECT_EQ(back.where, "exec:x");
    }
    const Error odd =
        error_from_json(json{{"error", {{"kind", "quota"}, {"message", "full"}}}}, "exec:x");
    EXPECT_EQ(odd.kind, ErrorKind::internal);
    EXPECT_NE(odd.message.find("quota"), std::string::npos);
    EXPECT_EQ(error_from_json(json{{"error", "boom"}}, "exec:x").kind, ErrorKind::protocol);
    EXPECT_EQ(error_from_json(json{{"error", {{"message", "no kind"}}}}, "exec:x").kind,
              ErrorKind::protocol);
}

// --- Dispatcher
// ------------------------------------------------------------------------------------------

std::string error_kind(const json& answer) {
    if (!answer.contains("error"))
        return "";
    return answer["error"]["kind"].get<std::string>();
}

TEST(AdapterDispatch, HelloAnswersVersionNameAndCapabilities) {
    auto system = verbatim();
    const json hello = handle_operation(*system, "hello", json{{"protocol", 1}});
    EXPECT_EQ(hello["protocol"], 1);
    EXPECT_EQ(hello["system"], "verbatim");
    EXPECT_EQ(hello["capabilities"]["provenance"], true);
    EXPECT_EQ(hello["capabilities"]["provenance_op"], false);
    EXPECT_EQ(error_kind(handle_operation(*system, "hello", json::object())), "invalid_request");
}

TEST(AdapterDispatch, StoresRetrievesAndResets) {
    auto system = verbatim();
    EXPECT_EQ(
        handle_operation(*system, "store_conversation", json{{"session", to_json(pets_session())}}),
        json::object());
    const json found = handle_operation(
        *system, "retrieve_memories",
        json{{"query", "Where does Biscuit hide?"}, {"history", json::array()}, {"k", 1}});
    ASSERT_EQ(found["memories"].size(), 1u);
    EXPECT_EQ(found["memories"][0]["sources"], json({"m1"}));
    EXPECT_TRUE(found["memories"][0].contains("score"));
    EXPECT_EQ(handle_operation(*system, "all_memories", json::object())["memories"].size(), 3u);
    // Parameterless operations accept no parameters at all, too.
    EXPECT_EQ(handle_operation(*system, "reset", nullptr), json::object());
    EXPECT_EQ(handle_operation(*system, "all_memories", nullptr)["memories"], json::array());
}

TEST(AdapterDispatch, ClampsK) {
    auto system = verbatim();
    (void)handle_operation(*system, "store_conversation",
                           json{{"session", to_json(pets_session())}});
    const auto count = [&](const json& k) {
        const json answer = handle_operation(*system, "retrieve_memories",
                                             json{{"query", "Biscuit Priya crate"}, {"k", k}});
        EXPECT_FALSE(answer.contains("error")) << answer.dump();
        return answer["memories"].size();
    };
    EXPECT_EQ(count(0), 1u);
    EXPECT_EQ(count(-4), 1u);
    EXPECT_EQ(count(2), 2u);
    EXPECT_EQ(count(1'000'000), 3u);
    EXPECT_EQ(count(json(std::uint64_t{18'000'000'000'000'000'000u})), 3u);
}

TEST(AdapterDispatch, MalformedRequestsAnswerInvalidRequestNamingTheField) {
    auto system = verbatim();
    const auto message_of = [&](std::string_view op, const json& params) {
        const json answer = handle_operation(*system, op, params);
        EXPECT_EQ(error_kind(answer), "invalid_request") << op << " " << params.dump();
        return answer.contains("error") ? answer["error"]["message"].get<std::string>() : "";
    };
    EXPECT_NE(message_of("retrieve_memories", json{{"query", "q"}, {"k", "5"}}).find("k:"),
              std::string::npos);
    EXPECT_NE(message_of("retrieve_memories", json{{"query", "q"}, {"k", 2.5}}).find("k:"),
              std::string::npos);
    EXPECT_NE(message_of("retrieve_memories", json{{"k", 5}}).find("query"), std::string::npos);
    EXPECT_NE(message_of("retrieve_memories",
                         json{{"query", "q"}, {"k", 5}, {"history", {{{"id", "h1"}}}}})
                  .find("history[0].role"),
              std::string::npos);
    EXPECT_NE(message_of("store_conversation", json::object()).find("session"), std::string::npos);
    json session = to_json(pets_session());
    session["messages"][0]["content"] = 12;
    EXPECT_NE(message_of("store_conversation", json{{"session", session}})
                  .find("session.messages[0].content"),
              std::string::npos);
    message_of("reset", json::array({1, 2}));
    // Nothing was stored by the refused request.
    EXPECT_EQ(handle_operation(*system, "all_memories", json::object())["memories"], json::array());
}

TEST(AdapterDispatch, UnknownAndMissingOperationsAreUnsupported) {
    auto system = verbatim();
    const json unknown = handle_operation(*system, "forget_everything", json::object());
    EXPECT_EQ(error_kind(unknown), "unsupported");
    EXPECT_NE(unknown["error"]["message"].get<std::string>().find("retrieve_memories"),
              std::string::npos);
    EXPECT_EQ(error_kind(handle_operation(*system, "history", json{{"memory_id", "m1#0"}})),
              "unsupported");
    EXPECT_EQ(error_kind(handle_operation(*system, "state_as_of",
                                          json{{"timestamp", "2026-03-01T09:00:00Z"}})),
              "unsupported");
    EXPECT_EQ(error_kind(handle_operation(*system, "provenance", json{{"memory_id", "m1#0"}})),
              "unsupported");
}

// A system whose every operation throws or fails, to show the dispatcher never lets either out.
class BrokenSystem final : public MemorySystem {
  public:
    std::string spec() const override { return "broken"; }
    Capabilities capabilities() const override { return {.history = true}; }
    Result<void> store_conversation(const data::Session&) override {
        throw std::runtime_error("disk on fire");
    }
    Result<std::vector<Hit>> retrieve_memories(std::string_view, const std::vector<data::Message>&,
                                               int) override {
        return make_error(ErrorKind::database, "the index is corrupt", "broken.sqlite");
    }
    Result<std::vector<Memory>> all_memories() override { throw 42; }
    Result<void> reset() override { return {}; }
    Result<std::vector<MemoryEvent>> history(std::string_view id) override {
        return make_error(ErrorKind::not_found, "no memory " + std::string(id));
    }
};

TEST(AdapterDispatch, FailuresBecomeErrorObjectsAndNothingThrows) {
    BrokenSystem system;
    const json thrown =
        handle_operation(system, "store_conversation", json{{"session", to_json(pets_session())}});
    EXPECT_EQ(error_kind(thrown), "internal");
    EXPECT_NE(thrown["error"]["message"].get<std::string>().find("disk on fire"),
              std::string::npos);
    EXPECT_EQ(error_kind(handle_operation(system, "all_memories", json::object())), "internal");
    const json failed =
        handle_operation(system, "retrieve_memories", json{{"query", "q"}, {"k", 3}});
    EXPECT_EQ(error_kind(failed), "internal");
    EXPECT_NE(failed["error"]["message"].get<std::string>().find("the index is corrupt"),
              std::string::npos);
    EXPECT_EQ(error_kind(handle_operation(system, "history", json{{"memory_id", "zz"}})),
              "not_found");
}

// --- AdapterSystem
// -------------------------------------------------------------------------------------

TEST(AdapterSystemLocal, GivesTheSameAnswersAsTheSystemItWraps) {
    auto direct = verbatim();
    auto wrapped = ok(AdapterSystem::connect(make_local_transport(verbatim()), "local"));
    EXPECT_EQ(wrapped->system_name(), "verbatim");
    EXPECT_TRUE(wrapped->capabilities().provenance);
    EXPECT_EQ(wrapped->generation(), 0u);
    for (MemorySystem* s : {direct.get(), static_cast<MemorySystem*>(wrapped.get())})
        ok(s->store_conversation(pets_session()));
    for (const char* query : {"Where does Biscuit hide?", "Who moved to Lisbon?", "crate"}) {
        const auto a = ok(direct->retrieve_memories(query, {}, 2));
        const auto b = ok(wrapped->retrieve_memories(query, {}, 2));
        EXPECT_EQ(ids_of(a), ids_of(b)) << query;
        for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
            EXPECT_EQ(a[i].memory.sources, b[i].memory.sources);
            EXPECT_DOUBLE_EQ(a[i].score, b[i].score);
        }
    }
    EXPECT_EQ(ids_of(ok(direct->all_memories())), ids_of(ok(wrapped->all_memories())));
    ok(wrapped->reset());
    EXPECT_TRUE(ok(wrapped->all_memories()).empty());
    const auto history = wrapped->history("m1#0");
    ASSERT_FALSE(history);
    EXPECT_EQ(history.error().kind, ErrorKind::unsupported);
}

// Answers each operation from a queue of canned replies, recording what was asked.
class ScriptedTransport final : public Transport {
  public:
    std::deque<Result<json>> replies;
    std::vector<std::pair<std::string, json>> calls;

    Result<json> call(std::string_view op, const json& params) override {
        calls.emplace_back(std::string(op), params);
        if (replies.empty())
            return make_error(ErrorKind::internal, "no reply scripted for " + std::string(op));
        Result<json> reply = std::move(replies.front());
        replies.pop_front();
        return reply;
    }
    std::string describe() const override { return "scripted"; }
};

json hello_reply(int version, json caps = json{{"provenance", true}}) {
    return json{
        {"protocol", version}, {"system", "scripted-memory"}, {"capabilities", std::move(caps)}};
}

TEST(AdapterSystemScripted, RefusesAnotherProtocolVersion) {
    auto transport = std::make_unique<ScriptedTransport>();
    transport->replies.push_back(hello_reply(2));
    const auto system = AdapterSystem::connect(std::move(transport), "scripted");
    ASSERT_FALSE(system);
    EXPECT_EQ(system.error().kind, ErrorKind::protocol);
    EXPECT_NE(system.error().message.find("speaks protocol 2; memfail speaks 1"),
              std::string::npos);
}

TEST(AdapterSystemScripted, MoreThanKMemoriesIsAProtocolErrorNamingTheAdapter) {
    auto transport = std::make_unique<ScriptedTransport>();
    ScriptedTransport* raw = transport.get();
    transport->replies.push_back(hello_reply(1));
    auto system = ok(AdapterSystem::connect(std::move(transport), "scripted"));
    raw->replies.push_back(json{{"memories",
                                 {{{"id", "a"}, {"text", "1"}},
                                  {{"id", "b"}, {"text", "2"}},
                                  {{"id", "c"}, {"text", "3"}}}}});
    const auto hits = system->retrieve_memories("q", {test::user("h1", "earlier")}, 2);
    ASSERT_FALSE(hits);
    EXPECT_EQ(hits.error().kind, ErrorKind::protocol);
    EXPECT_NE(hits.error().describe().find("scripted"), std::string::npos);
    EXPECT_NE(hits.error().message.find("3 memories"), std::string::npos);
    // The request carried query, history and k as the protocol says.
    EXPECT_EQ(raw->calls.back().first, "retrieve_memories");
    EXPECT_EQ(raw->calls.back().second["k"], 2);
    EXPECT_EQ(raw->calls.back().second["history"][0]["id"], "h1");

    raw->replies.push_back(json{{"memories", {{{"id", "a"}, {"text", 1}}}}});
    const auto bad = system->retrieve_memories("q", {}, 2);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().describe().find("memories[0].text"), std::string::npos);
    raw->replies.push_back(json{{"hits", json::array()}});
    EXPECT_FALSE(system->all_memories());
}

TEST(AdapterSystemScripted, AsksForProvenanceWhenMemoriesLackSources) {
    auto transport = std::make_unique<ScriptedTransport>();
    ScriptedTransport* raw = transport.get();
    transport->replies.push_back(
        hello_reply(1, json{{"provenance", true}, {"provenance_op", true}}));
    auto system = ok(AdapterSystem::connect(std::move(transport), "scripted"));
    raw->replies.push_back(
        json{{"memories",
              {{{"id", "a"}, {"text", "x"}}, {{"id", "b"}, {"text", "y"}, {"sources", {"m9"}}}}}});
    raw->replies.push_back(json{{"sources", {"m1", "m2"}}});
    const auto memories = ok(system->all_memories());
    ASSERT_EQ(memories.size(), 2u);
    EXPECT_EQ(memories[0].sources, (std::vector<std::string>{"m1", "m2"}));
    EXPECT_EQ(memories[1].sources, (std::vector<std::string>{"m9"})); // had its own: not asked
    ASSERT_EQ(raw->calls.size(), 3u);
    EXPECT_EQ(raw->calls[2].first, "provenance");
    EXPECT_EQ(raw->calls[2].second, json({{"memory_id", "a"}}));
}

TEST(AdapterSystemScripted, AdapterErrorsKeepTheirKindAndOptionalOpsFollowCapabilities) {
    auto transport = std::make_unique<ScriptedTransport>();
    ScriptedTransport* raw = transport.get();
    transport->replies.push_back(hello_reply(1, json{{"history", true}}));
    auto system = ok(AdapterSystem::connect(std::move(transport), "scripted"));
    EXPECT_EQ(system->system_name(), "scripted-memory");
    raw->replies.push_back(error_from_json(
        json{{"error", {{"kind", "not_found"}, {"message", "no m-3"}}}}, "scripted"));
    const auto events = system->history("m-3");
    ASSERT_FALSE(events);
    EXPECT_EQ(events.error().kind, ErrorKind::not_found);
    raw->replies.push_back(
        json{{"events", {{{"memory_id", "m-3"}, {"event", "add"}, {"new_text", "hi"}}}}});
    EXPECT_EQ(ok(system->history("m-3")).at(0).new_text, "hi");
    // as_of was not announced: answered locally, without a call.
    const std::size_t calls = raw->calls.size();
    const auto as_of = system->state_as_of("2026-03-01T09:00:00Z");
    ASSERT_FALSE(as_of);
    EXPECT_EQ(as_of.error().kind, ErrorKind::unsupported);
    EXPECT_EQ(raw->calls.size(), calls);
}

TEST(AdapterSystemScripted, TransportsComeFromSpecNames) {
    const auto odd = make_transport(ok(Spec::parse("ftp:url=x")));
    ASSERT_FALSE(odd);
    EXPECT_EQ(odd.error().kind, ErrorKind::invalid_input);
    EXPECT_TRUE(make_transport(ok(Spec::parse("exec:cmd=true")))); // creating starts nothing
}

} // namespace
} // namespace memfail::memory::adapter

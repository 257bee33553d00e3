// SPDX-License-Identifier: MIT
// The optional `answer` operation (docs/ADAPTERS.md): a system that answers a question itself. Its
// codec, the dispatcher `memfail serve` uses, AdapterSystem over the local, exec: and http:
// transports, and the presets, which do not offer it. A system that does not announce it answers
// unsupported; a malformed reply is a protocol error naming the field, and (exec:) does not restart
// the adapter.
#include "adapter_test_util.hpp"

#include <memfail/memory/adapter/adapter_system.hpp>
#include <memfail/memory/adapter/protocol.hpp>

#include <gtest/gtest.h>
#include "loopback_server.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

namespace memfail::memory::adapter {
namespace {

using nlohmann::json;
using test::ok;
using fixture::connect;
using fixture::contains;
using fixture::k_adapter;
using fixture::tea_session;

std::string exec_spec(const std::string& args) {
    return "exec:cmd=python3 -S " + k_adapter + (args.empty() ? "" : " " + args);
}

// --- Codec ---------------------------------------------------------------------------------------

TEST(AdapterAnswerCodec, RoundTripsAndLeavesAnUnknownConfidenceOut) {
    const SystemAnswer given{"After dinner.", 0.75, {"m1", "m2"}};
    const json j = to_json(given);
    EXPECT_EQ(j, json({{"answer", "After dinner."}, {"confidence", 0.75}, {"sources", {"m1", "m2"}}}));
    const SystemAnswer back = ok(answer_from_json(j, ErrorKind::protocol, ""));
    EXPECT_EQ(back.text, given.text);
    EXPECT_EQ(back.confidence, given.confidence);
    EXPECT_EQ(back.sources, given.sources);

    const json bare = to_json(SystemAnswer{"I do not know.", std::nullopt, {}});
    EXPECT_FALSE(bare.contains("confidence"));
    const SystemAnswer read = ok(answer_from_json(
        json{{"answer", ""}, {"confidence", nullptr}, {"sources", nullptr}, {"reasoning", "ignored"}},
        ErrorKind::protocol, ""));
    EXPECT_EQ(read.text, "");
    EXPECT_FALSE(read.confidence.has_value());
    EXPECT_TRUE(read.sources.empty());
    // The ends of the range, and an integer, are numbers from 0 to 1.
    EXPECT_EQ(ok(answer_from_json(json{{"answer", "a"}, {"confidence", 0}}, ErrorKind::protocol, ""))
                  .confidence,
              0.0);
    EXPECT_EQ(ok(answer_from_json(json{{"answer", "a"}, {"confidence", 1}}, ErrorKind::protocol, ""))
                  .confidence,
              1.0);
}

TEST(AdapterAnswerCodec, ErrorsNameTheFieldAndUseTheGivenKind) {
    const auto where_of = [](const json& reply) {
        const auto parsed = answer_from_json(reply, ErrorKind::protocol, "answer");
        EXPECT_FALSE(parsed) << reply.dump();
        if (parsed)
            return std::string();
        EXPECT_EQ(parsed.error().kind, ErrorKind::protocol);
        return parsed.error().where;
    };
    EXPECT_EQ(where_of(json{{"text", "tea"}}), "answer.answer");
    EXPECT_EQ(where_of(json{{"answer", 42}}), "answer.answer");
    EXPECT_EQ(where_of(json{{"answer", "tea"}, {"confidence", "high"}}), "answer.confidence");
    EXPECT_EQ(where_of(json{{"answer", "tea"}, {"confidence", 1.5}}), "answer.confidence");
    EXPECT_EQ(where_of(json{{"answer", "tea"}, {"confidence", -0.25}}), "answer.confidence");
    EXPECT_EQ(where_of(json{{"answer", "tea"}, {"confidence", true}}), "answer.confidence");
    EXPECT_EQ(where_of(json{{"answer", "tea"}, {"sources", "m1"}}), "answer.sources");
    EXPECT_EQ(where_of(json{{"answer", "tea"}, {"sources", {"m1", 7}}}), "answer.sources[1]");
    EXPECT_EQ(where_of(json::array()), "answer");
    EXPECT_EQ(where_of(json{{"answer", std::string(k_max_answer_bytes + 1, 'x')}}), "answer.answer");
    EXPECT_EQ(where_of(json{{"answer", "tea"},
                            {"sources", json(std::vector<std::string>(k_max_answer_sources + 1, "m1"))}}),
              "answer.sources");

    const auto out_of_range =
        answer_from_json(json{{"answer", "tea"}, {"confidence", 1.5}}, ErrorKind::invalid_input, "");
    ASSERT_FALSE(out_of_range);
    EXPECT_EQ(out_of_range.error().kind, ErrorKind::invalid_input);
    EXPECT_EQ(out_of_range.error().where, "confidence");
    EXPECT_TRUE(contains(out_of_range.error().message, "from 0 to 1, got 1.5")) << out_of_range.error().message;
}

TEST(AdapterAnswerCodec, TheCapabilityIsTheFlagAnswer) {
    EXPECT_FALSE(Capabilities{}.answers);
    EXPECT_EQ(to_json(Capabilities{})["answer"], false);
    Capabilities caps;
    caps.answers = true;
    EXPECT_EQ(to_json(caps)["answer"], true);
    EXPECT_TRUE(ok(capabilities_from_json(json{{"answer", true}}, ErrorKind::protocol, "capabilities")).answers);
    EXPECT_FALSE(ok(capabilities_from_json(json{{"history", true}}, ErrorKind::protocol, "capabilities")).answers);
    const auto bad = capabilities_from_json(json{{"answer", "yes"}}, ErrorKind::protocol, "capabilities");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().where, "capabilities.answer");
}

// --- MemorySystem and the dispatcher ---------------------------------------------------------------

// Verbatim underneath, answering with the text of its best hit, as an agent with memory would
// (more or less). Records what it was asked.
class AnsweringSystem final : public MemorySystem {
  public:
    AnsweringSystem() : m_inner(ok(make_memory_system("verbatim", {}))) {}

    std::string spec() const override { return "answering"; }
    Capabilities capabilities() const override {
        Capabilities caps = m_inner->capabilities();
        caps.answers = true;
        return caps;
    }
    Result<void> store_conversation(const data::Session& session) override {
        return m_inner->store_conversation(session);
    }
    Result<std::vector<Hit>> retrieve_memories(std::string_view query,
                                               const std::vector<data::Message>& history,
                                               int k) override {
        return m_inner->retrieve_memories(query, history, k);
    }
    Result<std::vector<Memory>> all_memories() override { return m_inner->all_memories(); }
    Result<void> reset() override { return m_inner->reset(); }
    Result<SystemAnswer> answer(std::string_view query,
                                const std::vector<data::Message>& history) override {
        last_history = history;
        if (query == "fail")
            return make_error(ErrorKind::not_found, "nothing to answer from");
        MF_TRY_ASSIGN(const auto hits, m_inner->retrieve_memories(query, history, 1));
        if (hits.empty())
            return SystemAnswer{"I do not know.", std::nullopt, {}};
        return SystemAnswer{hits[0].memory.text, 0.9, hits[0].memory.sources};
    }

    std::vector<data::Message> last_history;

  private:
    std::unique_ptr<MemorySystem> m_inner;
};

std::string error_kind(const json& answer) {
    return answer.contains("error") ? answer["error"]["kind"].get<std::string>() : "";
}

TEST(AdapterAnswerDispatch, BuiltInsDoNotAnswerAndSaySo) {
    for (const char* spec : {"verbatim", "none", "oracle"}) {
        auto system = ok(make_memory_system(spec, {}));
        EXPECT_FALSE(system->capabilities().answers) << spec;
        const auto direct = system->answer("When do I drink tea?", {});
        ASSERT_FALSE(direct) << spec;
        EXPECT_EQ(direct.error().kind, ErrorKind::unsupported) << spec;
        EXPECT_EQ(handle_operation(*system, "hello", json{{"protocol", 1}})["capabilities"]["answer"], false);
        // The same error object as history and state_as_of: `memfail serve` answers it with 501.
        const json served =
            handle_operation(*system, "answer", json{{"query", "When do I drink tea?"}, {"history", json::array()}});
        EXPECT_EQ(error_kind(served), "unsupported") << served.dump();
        EXPECT_TRUE(contains(served["error"]["message"].get<std::string>(), "answer is not supported by"));
    }
}

TEST(AdapterAnswerDispatch, AnswersForASystemThatDoes) {
    AnsweringSystem system;
    EXPECT_EQ(handle_operation(system, "hello", json{{"protocol", 1}})["capabilities"]["answer"], true);
    (void)handle_operation(system, "store_conversation", json{{"session", to_json(tea_session())}});
    const json answered = handle_operation(
        system, "answer",
        json{{"query", "Where does Miso sleep?"}, {"history", json::array({to_json(test::user("h1", "hi"))})}});
    EXPECT_EQ(answered, json({{"answer", "My cat Miso sleeps on the radiator."},
                              {"confidence", 0.9},
                              {"sources", {"m3"}}}));
    ASSERT_EQ(system.last_history.size(), 1u);
    EXPECT_EQ(system.last_history[0].id, "h1");
    // History is optional, as for retrieve_memories.
    EXPECT_EQ(handle_operation(system, "answer", json{{"query", "radiator"}})["answer"],
              "My cat Miso sleeps on the radiator.");
    EXPECT_EQ(error_kind(handle_operation(system, "answer", json{{"query", "fail"}})), "not_found");
}

TEST(AdapterAnswerDispatch, MalformedRequestsAnswerInvalidRequestNamingTheField) {
    AnsweringSystem system;
    const auto message_of = [&](const json& params) {
        const json answer = handle_operation(system, "answer", params);
        EXPECT_EQ(error_kind(answer), "invalid_request") << params.dump();
        return answer.contains("error") ? answer["error"]["message"].get<std::string>() : "";
    };
    EXPECT_TRUE(contains(message_of(json::object()), "query"));
    EXPECT_TRUE(contains(message_of(json{{"query", 5}}), "query"));
    EXPECT_TRUE(contains(message_of(json{{"query", "q"}, {"history", "earlier"}}), "history"));
    EXPECT_TRUE(contains(message_of(json{{"query", "q"}, {"history", {{{"id", "h1"}}}}}), "history[0].role"));
}

TEST(AdapterAnswerLocal, AdapterSystemCarriesTheAnswerBothWays) {
    auto system = ok(AdapterSystem::connect(make_local_transport(std::make_unique<AnsweringSystem>()), "local"));
    EXPECT_TRUE(system->capabilities().answers);
    ok(system->store_conversation(tea_session()));
    const SystemAnswer answer = ok(system->answer("When do I drink tea?", {test::user("h1", "hi")}));
    EXPECT_EQ(answer.text, "I only drink tea after dinner.");
    EXPECT_EQ(answer.confidence, 0.9);
    EXPECT_EQ(answer.sources, (std::vector<std::string>{"m1"}));

    auto plain = ok(AdapterSystem::connect(make_local_transport(ok(make_memory_system("verbatim", {}))), "local"));
    EXPECT_FALSE(plain->capabilities().answers);
    const auto refused = plain->answer("When do I drink tea?", {});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, ErrorKind::unsupported);
}

// --- exec: with the fixture adapter ----------------------------------------------------------------

TEST(AdapterAnswerExec, RoundTrip) {
    auto system = connect(exec_spec("--answers"));
    EXPECT_TRUE(system->capabilities().answers);
    ok(system->store_conversation(tea_session()));
    const SystemAnswer answer =
        ok(system->answer("Where does my cat Miso sleep?", {test::user("h1", "A question about my cat.")}));
    EXPECT_EQ(answer.text, "My cat Miso sleeps on the radiator.");
    ASSERT_TRUE(answer.confidence.has_value());
    EXPECT_DOUBLE_EQ(*answer.confidence, 0.5);
    EXPECT_EQ(answer.sources, (std::vector<std::string>{"m3"}));
    // Nothing matches: an answer all the same, without confidence or sources.
    const SystemAnswer unsure = ok(system->answer("zebra", {}));
    EXPECT_EQ(unsure.text, "I do not know.");
    EXPECT_FALSE(unsure.confidence.has_value());
    EXPECT_TRUE(unsure.sources.empty());
    EXPECT_EQ(system->generation(), 0u);
}

TEST(AdapterAnswerExec, UnsupportedWhenNotAnnounced) {
    auto system = connect(exec_spec(""));
    EXPECT_FALSE(system->capabilities().answers);
    const auto refused = system->answer("When do I drink tea?", {});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, ErrorKind::unsupported);
    EXPECT_TRUE(contains(refused.error().describe(), "capabilities.answer is false")) << refused.error().describe();

    // Asked anyway (as the conformance battery does), the adapter itself answers unsupported and
    // keeps running.
    auto transport = ok(make_transport(ok(Spec::parse(exec_spec("")))));
    const auto asked = transport->call("answer", json{{"query", "tea"}, {"history", json::array()}});
    ASSERT_FALSE(asked);
    EXPECT_EQ(asked.error().kind, ErrorKind::unsupported);
    EXPECT_TRUE(transport->call("all_memories", json::object()));
    EXPECT_EQ(transport->restarts(), 0u);
}

TEST(AdapterAnswerExec, MalformedRepliesAreProtocolErrorsNamingTheField) {
    auto system = connect(exec_spec("--answers --faults"));
    ok(system->store_conversation(tea_session()));
    const std::string adapter = "exec:python3 -S " + k_adapter + " --answers --faults";
    const std::pair<const char*, const char*> cases[] = {
        {"answer_not_string", "answer: answer: expected a string, got an integer"},
        {"answer_missing", "answer: answer: required field is missing"},
        {"confidence_string", "answer: confidence: expected a number from 0 to 1, got a string"},
        {"confidence_high", "answer: confidence: expected a number from 0 to 1, got 1.5"},
        {"confidence_negative", "answer: confidence: expected a number from 0 to 1, got -0.25"},
        {"sources_not_array", "answer: sources: expected an array of strings, got a string"},
        {"source_not_string", "answer: sources[1]: expected a string, got an integer"},
        {"answer_too_big", "answer: answer: the answer is 1500000 bytes; at most 1048576 are read"},
        {"too_many_sources", "answer: sources: 1001 sources; at most 1000 are read"},
        {"answer_bad_utf8", "answer: answer: not valid UTF-8 (byte 0xff at offset 17)"},
    };
    for (const auto& [fault, expected] : cases) {
        SCOPED_TRACE(fault);
        const auto failed = system->answer(fault, {});
        ASSERT_FALSE(failed);
        EXPECT_EQ(failed.error().kind, ErrorKind::protocol);
        EXPECT_EQ(failed.error().describe(), adapter + ": " + expected);
    }
    // Each reply was one whole line: the same adapter still holds what it was given.
    EXPECT_EQ(system->generation(), 0u);
    EXPECT_EQ(ok(system->all_memories()).size(), 3u);
    EXPECT_EQ(ok(system->answer("radiator", {})).sources, (std::vector<std::string>{"m3"}));
}

// --- http: ----------------------------------------------------------------------------------------

// An http: peer announcing `answer` and replying to it from a fixed body.
class Peer : public fixture::LoopbackServer {
  public:
    std::atomic<int> answers{0};
    ~Peer() { stop(); }  // the routes count into this object

    explicit Peer(bool announce) {
        server.Post("/v1/hello", [announce](const httplib::Request&, httplib::Response& res) {
            res.set_content(json{{"protocol", 1},
                                 {"system", "agent"},
                                 {"capabilities", {{"provenance", true}, {"answer", announce}}}}
                                .dump(),
                            "application/json");
        });
    }
    void reply_with(int status, std::string body) {
        server.Post("/v1/answer", [this, status, body](const httplib::Request& req, httplib::Response& res) {
            ++answers;
            const std::lock_guard lock(m_mutex);
            m_last_request = req.body;
            res.status = status;
            res.set_content(body, "application/json");
        });
    }
    std::string last_request() {
        const std::lock_guard lock(m_mutex);
        return m_last_request;
    }

  private:
    std::mutex m_mutex;
    std::string m_last_request;
};

TEST(AdapterAnswerHttp, RoundTrip) {
    Peer peer(true);
    peer.reply_with(200, R"({"answer": "After dinner.", "confidence": 0.8, "sources": ["m1"]})");
    peer.start();
    auto system = connect("http:url=" + peer.url());
    EXPECT_TRUE(system->capabilities().answers);
    const SystemAnswer answer = ok(system->answer("When do I drink tea?", {test::user("h1", "hi")}));
    EXPECT_EQ(answer.text, "After dinner.");
    EXPECT_EQ(answer.confidence, 0.8);
    EXPECT_EQ(answer.sources, (std::vector<std::string>{"m1"}));
    const json sent = json::parse(peer.last_request());
    EXPECT_EQ(sent["query"], "When do I drink tea?");
    EXPECT_EQ(sent["history"][0]["id"], "h1");
}

TEST(AdapterAnswerHttp, MalformedReplyIsAProtocolErrorAndIsNotRetried) {
    Peer peer(true);
    peer.reply_with(200, R"({"answer": "After dinner.", "confidence": "very"})");
    peer.start();
    auto system = connect("http:url=" + peer.url() + ",retries=2");
    const auto failed = system->answer("When do I drink tea?", {});
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().kind, ErrorKind::protocol);
    EXPECT_EQ(failed.error().describe(),
              peer.url() + ": answer: confidence: expected a number from 0 to 1, got a string");
    EXPECT_EQ(peer.answers.load(), 1);
}

TEST(AdapterAnswerHttp, UnsupportedFromTheServerAndWithoutTheCapability) {
    // Announced, but the server says unsupported (501, as `memfail serve` does): the kind survives.
    Peer peer(true);
    peer.reply_with(501, R"({"error": {"kind": "unsupported", "message": "answer is not supported by verbatim"}})");
    peer.start();
    const auto refused = connect("http:url=" + peer.url())->answer("q", {});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, ErrorKind::unsupported);
    EXPECT_EQ(peer.answers.load(), 1);

    // Not announced: refused without a request.
    Peer quiet(false);
    quiet.reply_with(200, R"({"answer": "should not be asked"})");
    quiet.start();
    auto system = connect("http:url=" + quiet.url());
    EXPECT_FALSE(system->capabilities().answers);
    const auto local = system->answer("q", {});
    ASSERT_FALSE(local);
    EXPECT_EQ(local.error().kind, ErrorKind::unsupported);
    EXPECT_EQ(quiet.answers.load(), 0);
}

TEST(AdapterAnswerHttp, PresetsDoNotAnswer) {
    // Both presets answer hello themselves, so no server is needed: nothing is sent for `answer`.
    for (const char* preset : {"mem0", "graphiti"}) {
        SCOPED_TRACE(preset);
        auto transport =
            ok(make_transport(ok(Spec::parse(std::string("http:url=http://127.0.0.1:9,retries=0,preset=") + preset))));
        const json hello = ok(transport->call("hello", json{{"protocol", 1}}));
        EXPECT_EQ(hello["capabilities"]["answer"], false);
        const auto asked = transport->call("answer", json{{"query", "q"}, {"history", json::array()}});
        ASSERT_FALSE(asked);
        EXPECT_EQ(asked.error().kind, ErrorKind::unsupported);
        auto system = ok(AdapterSystem::connect(std::move(transport), preset));
        EXPECT_FALSE(system->capabilities().answers);
        const auto refused = system->answer("q", {});
        ASSERT_FALSE(refused);
        EXPECT_EQ(refused.error().kind, ErrorKind::unsupported);
    }
}

} // namespace
} // namespace memfail::memory::adapter

// SPDX-License-Identifier: MIT
// The http: transport against small httplib peers: retries and their limits, replies that break the
// protocol, and the mem0 / graphiti presets, whose request shapes are asserted exactly as
// docs/ADAPTERS.md ("Preset request shapes") lists them.
#include "serve_test_util.hpp"

#include <atomic>

namespace memfail::serve_test {
namespace {

using json = nlohmann::json;
using memory::adapter::AdapterSystem;

const json k_hello = {{"protocol", 1}, {"system", "peer"}, {"capabilities", {{"provenance", true}}}};

TEST(HttpTransport, RetriesA503ThenSucceeds) {
    PeerServer peer;
    std::atomic<int> calls{0};
    peer.server.Post("/v1/hello", [&](const httplib::Request& req, httplib::Response& res) {
        peer.record(req);
        if (++calls <= 2) {
            res.set_header("Retry-After", "0");
            return reply_json(res, 503, json{{"message", "warming up"}});
        }
        reply_json(res, 200, k_hello);
    });
    peer.start();
    auto transport = ok(http_transport("http:url=" + peer.url() + ",retries=2"));
    auto answer = transport->call("hello", json{{"protocol", 1}});
    ASSERT_TRUE(answer) << answer.error().describe();
    EXPECT_EQ((*answer)["system"], "peer");
    EXPECT_EQ(calls.load(), 3);
    EXPECT_EQ(json::parse(peer.seen().back().body), json({{"protocol", 1}}));
    EXPECT_EQ(transport->describe(), peer.url());
}

TEST(HttpTransport, GivesUpAfterTheRetriesItWasAllowed) {
    PeerServer peer;
    std::atomic<int> calls{0};
    peer.server.Post("/v1/reset", [&](const httplib::Request&, httplib::Response& res) {
        ++calls;
        res.set_header("Retry-After", "0");
        res.status = 503;
        res.set_content("<html>upstream down</html>", "text/html");
    });
    peer.start();
    auto transport = ok(http_transport("http:url=" + peer.url() + ",retries=1"));
    auto answer = transport->call("reset", json::object());
    ASSERT_FALSE(answer);
    EXPECT_EQ(calls.load(), 2);
    EXPECT_EQ(answer.error().kind, ErrorKind::network);
    const std::string text = answer.error().describe();
    EXPECT_NE(text.find("503"), std::string::npos) << text;
    EXPECT_NE(text.find("2 attempts"), std::string::npos) << text;
    EXPECT_NE(text.find(peer.url() + "/v1/reset"), std::string::npos) << text;
}

TEST(HttpTransport, AStructuredErrorIsFinal) {
    PeerServer peer;
    std::atomic<int> calls{0};
    peer.server.Post("/v1/store_conversation", [&](const httplib::Request&, httplib::Response& res) {
        ++calls;
        reply_json(res, 500, json{{"error", {{"kind", "internal"}, {"message", "the vector store is full"}}}});
    });
    peer.server.Post("/v1/history", [&](const httplib::Request&, httplib::Response& res) {
        reply_json(res, 404, json{{"error", {{"kind", "not_found"}, {"message", "no memory m-9"}}}});
    });
    peer.start();
    auto transport = ok(http_transport("http:url=" + peer.url() + ",retries=3"));
    auto stored = transport->call("store_conversation", json{{"session", {{"id", "s1"}, {"messages", json::array()}}}});
    ASSERT_FALSE(stored);
    EXPECT_EQ(calls.load(), 1);  // storing twice could duplicate memories
    EXPECT_EQ(stored.error().kind, ErrorKind::internal);
    EXPECT_NE(stored.error().describe().find("the vector store is full"), std::string::npos);
    auto history = transport->call("history", json{{"memory_id", "m-9"}});
    ASSERT_FALSE(history);
    EXPECT_EQ(history.error().kind, ErrorKind::not_found);
}

TEST(HttpTransport, RepliesOutsideTheProtocolAreProtocolErrors) {
    PeerServer peer;
    peer.server.Post("/v1/all_memories", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("memories: none", "text/plain");
    });
    peer.server.Post("/v1/reset", [](const httplib::Request&, httplib::Response& res) {
        reply_json(res, 400, json{{"oops", true}});
    });
    peer.start();
    auto transport = ok(http_transport("http:url=" + peer.url() + "/"));
    auto all = transport->call("all_memories", json::object());
    ASSERT_FALSE(all);
    EXPECT_EQ(all.error().kind, ErrorKind::protocol);
    EXPECT_NE(all.error().describe().find(peer.url() + "/v1/all_memories"), std::string::npos);
    EXPECT_NE(all.error().describe().find("200"), std::string::npos);
    auto reset = transport->call("reset", json::object());
    ASSERT_FALSE(reset);
    EXPECT_NE(reset.error().describe().find("400"), std::string::npos);
}

TEST(HttpTransport, ConnectionRefusedIsANetworkError) {
    int port = 0;
    {
        PeerServer closed;
        closed.start();
        port = std::stoi(closed.url().substr(closed.url().rfind(':') + 1));
    }
    auto transport = ok(http_transport("http:url=http://127.0.0.1:" + std::to_string(port) + ",retries=0,timeout=2s"));
    auto answer = transport->call("hello", json{{"protocol", 1}});
    ASSERT_FALSE(answer);
    EXPECT_EQ(answer.error().kind, ErrorKind::network);
}

TEST(HttpTransport, SpecIsChecked) {
    EXPECT_EQ(http_transport("http:timeout=3s").error().kind, ErrorKind::invalid_input);  // no url
    EXPECT_EQ(http_transport("http:url=ftp://h").error().kind, ErrorKind::invalid_input);
    EXPECT_EQ(http_transport("http:url=http://h,timeout=soon").error().kind, ErrorKind::invalid_input);
    EXPECT_EQ(http_transport("http:url=http://h,preset=zep").error().kind, ErrorKind::invalid_input);
    EXPECT_EQ(http_transport("http:url=http://h,retries=-1").error().kind, ErrorKind::invalid_input);
    const auto typo = http_transport("http:url=http://h,timout=3s");
    ASSERT_FALSE(typo);
    EXPECT_NE(typo.error().describe().find("timeout"), std::string::npos);  // did you mean
    EXPECT_TRUE(http_transport("http:url=http://h,timeout=250ms,retries=0,preset=mem0,user=alice"));
    // Credentials in the URL stay out of describe().
    EXPECT_EQ(ok(http_transport("http:url=http://bob:pw@127.0.0.1:1/"))->describe(), "http://127.0.0.1:1");
}

// --- Mem0 preset -------------------------------------------------------------------------------------

class Mem0Peer : public PeerServer {
public:
    Mem0Peer() {
        server.Post("/memories", [this](const httplib::Request& req, httplib::Response& res) {
            record(req);
            reply_json(res, 200, json{{"results", json::array({{{"id", "m1"}, {"memory", "Drinks green tea"}, {"event", "ADD"}}})}});
        });
        server.Post("/search", [this](const httplib::Request& req, httplib::Response& res) {
            record(req);
            json results = json::array();
            for (int i = 1; i <= 3; ++i)
                results.push_back({{"id", "m" + std::to_string(i)},
                                   {"memory", "memory number " + std::to_string(i)},
                                   {"hash", "h"},
                                   {"metadata", {{"session_id", "s1"}}},
                                   {"score", 1.0 - 0.1 * i},
                                   {"created_at", "2026-03-01T09:00:00+00:00"},
                                   {"updated_at", nullptr},
                                   {"user_id", "alice"}});
            reply_json(res, 200, json{{"results", results}});
        });
        server.Get("/memories", [this](const httplib::Request& req, httplib::Response& res) {
            record(req);
            reply_json(res, 200, json{{"results", json::array({{{"id", "m1"}, {"memory", "Drinks green tea"}},
                                                               {{"id", "m2"}, {"memory", "Runs on Tuesdays"}}})}});
        });
        server.Get(R"(/memories/([^/]+)/history)", [this](const httplib::Request& req, httplib::Response& res) {
            record(req);
            const std::string id = req.matches[1];
            reply_json(res, 200,
                       json::array({{{"id", "h1"}, {"memory_id", id}, {"old_memory", nullptr}, {"new_memory", "Drinks tea"},
                                     {"event", "ADD"}, {"created_at", "2026-03-01T09:00:00"}, {"updated_at", nullptr},
                                     {"is_deleted", false}},
                                    {{"id", "h2"}, {"memory_id", id}, {"old_memory", "Drinks tea"},
                                     {"new_memory", "Drinks green tea"}, {"event", "UPDATE"},
                                     {"created_at", "2026-03-01T09:00:00"}, {"updated_at", "2026-03-04T18:30:00"},
                                     {"is_deleted", false}}}));
        });
        server.Post("/reset", [this](const httplib::Request& req, httplib::Response& res) {
            record(req);
            reply_json(res, 200, json{{"message", "All memories reset"}});
        });
    }
};

TEST(HttpPresets, Mem0RequestShapes) {
    Mem0Peer peer;
    peer.start();
    ::setenv("MEMFAIL_SERVE_TEST_MEM0", "mem0-token-abcdefgh", 1);
    const std::string spec = "http:url=" + peer.url() + ",preset=mem0,user=alice,token_env=MEMFAIL_SERVE_TEST_MEM0";
    auto system = ok(AdapterSystem::connect(ok(http_transport(spec)), spec));
    EXPECT_TRUE(peer.seen().empty());  // hello is answered without a request
    EXPECT_EQ(system->system_name(), "mem0");
    EXPECT_FALSE(system->capabilities().provenance);
    EXPECT_TRUE(system->capabilities().history);

    const auto s = sample_sessions()[0];
    ASSERT_TRUE(system->store_conversation(s));
    const Seen add = peer.only("POST", "/memories");
    EXPECT_EQ(add.authorization, "Bearer mem0-token-abcdefgh");
    const json body = json::parse(add.body);
    json messages = json::array();
    json ids = json::array();
    for (const auto& m : s.messages) {
        messages.push_back({{"role", m.role}, {"content", m.content}});
        ids.push_back(m.id);
    }
    EXPECT_EQ(body, json({{"messages", messages},
                          {"user_id", "alice"},
                          {"metadata", {{"session_id", s.id}, {"timestamp", s.timestamp}, {"message_ids", ids}}}}));

    const auto hits = ok(system->retrieve_memories("what does alice drink?", {}, 2));
    EXPECT_EQ(json::parse(peer.only("POST", "/search").body),
              json({{"query", "what does alice drink?"}, {"user_id", "alice"}, {"limit", 2}}));
    ASSERT_EQ(hits.size(), 2u);  // the server answered 3: memfail keeps the first k
    EXPECT_EQ(hits[0].memory.id, "m1");
    EXPECT_EQ(hits[0].memory.text, "memory number 1");
    EXPECT_EQ(hits[0].memory.created_at, "2026-03-01T09:00:00+00:00");
    EXPECT_NEAR(hits[1].score, 0.8, 1e-9);

    const auto all = ok(system->all_memories());
    EXPECT_EQ(peer.only("GET", "/memories").query_user_id, "alice");
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1].text, "Runs on Tuesdays");

    const auto events = ok(system->history("m 1?x"));  // escaped into one path segment
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(peer.seen().back().path, "/memories/m 1?x/history");
    EXPECT_EQ(events[0].event, "add");
    EXPECT_EQ(events[0].new_text, "Drinks tea");
    EXPECT_EQ(events[1].event, "update");
    EXPECT_EQ(events[1].old_text, "Drinks tea");
    EXPECT_EQ(events[1].at, "2026-03-04T18:30:00");

    ASSERT_TRUE(system->reset());
    EXPECT_EQ(peer.only("POST", "/reset").body, "");

    auto as_of = system->state_as_of("2026-03-02T00:00:00Z");
    ASSERT_FALSE(as_of);
    EXPECT_EQ(as_of.error().kind, ErrorKind::unsupported);
}

TEST(HttpPresets, Mem0ReplyOfTheWrongShapeIsAProtocolError) {
    PeerServer peer;
    peer.server.Post("/search", [](const httplib::Request&, httplib::Response& res) {
        reply_json(res, 200, json{{"results", json::array({{{"id", 7}, {"text", "no memory field"}}})}});
    });
    peer.server.Post("/memories", [](const httplib::Request&, httplib::Response& res) {
        reply_json(res, 500, json{{"detail", "embedding service unavailable"}});
    });
    peer.start();
    auto transport = ok(http_transport("http:url=" + peer.url() + ",preset=mem0,retries=2"));
    auto hits = transport->call("retrieve_memories", json{{"query", "q"}, {"history", json::array()}, {"k", 3}});
    ASSERT_FALSE(hits);
    EXPECT_EQ(hits.error().kind, ErrorKind::protocol);
    EXPECT_NE(hits.error().describe().find("results[0]"), std::string::npos);
    const json session = {{"id", "s1"}, {"timestamp", "2026-03-01T09:00:00Z"}, {"messages", json::array({{{"id", "a"}, {"role", "user"}, {"content", "hi"}}})}};
    auto stored = transport->call("store_conversation", json{{"session", session}});
    ASSERT_FALSE(stored);
    EXPECT_NE(stored.error().describe().find("embedding service unavailable"), std::string::npos) << stored.error().describe();
    EXPECT_NE(stored.error().describe().find("1 attempt"), std::string::npos);  // FastAPI's detail: final
    auto bad = transport->call("retrieve_memories", json{{"query", "q"}});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().kind, ErrorKind::invalid_input);
}

// --- Graphiti preset ---------------------------------------------------------------------------------

TEST(HttpPresets, GraphitiRequestShapes) {
    PeerServer peer;
    peer.server.Post("/messages", [&](const httplib::Request& req, httplib::Response& res) {
        peer.record(req);
        reply_json(res, 202, json{{"message", "Messages added to processing queue"}, {"success", true}});
    });
    peer.server.Post("/search", [&](const httplib::Request& req, httplib::Response& res) {
        peer.record(req);
        json facts = json::array();
        for (int i = 1; i <= 4; ++i)
            facts.push_back({{"uuid", "f" + std::to_string(i)},
                             {"name", "DRINKS"},
                             {"fact", "fact number " + std::to_string(i)},
                             {"valid_at", nullptr},
                             {"invalid_at", nullptr},
                             {"created_at", "2026-03-01T09:00:00Z"},
                             {"expired_at", nullptr}});
        reply_json(res, 200, json{{"facts", facts}});
    });
    peer.server.Post("/clear", [&](const httplib::Request& req, httplib::Response& res) {
        peer.record(req);
        reply_json(res, 200, json{{"message", "Graph cleared"}, {"success", true}});
    });
    peer.start();
    const std::string spec = "http:url=" + peer.url() + ",preset=graphiti,user=team-7";
    auto system = ok(AdapterSystem::connect(ok(http_transport(spec)), spec));
    EXPECT_EQ(system->system_name(), "graphiti");
    EXPECT_FALSE(system->capabilities().provenance);
    EXPECT_FALSE(system->capabilities().history);

    const auto s = sample_sessions()[1];
    ASSERT_TRUE(system->store_conversation(s));
    const json body = json::parse(peer.only("POST", "/messages").body);
    json messages = json::array();
    for (const auto& m : s.messages)
        messages.push_back({{"content", m.content},
                            {"role_type", m.role},
                            {"role", m.role},
                            {"name", m.id},
                            {"source_description", "memfail session " + s.id},
                            {"timestamp", s.timestamp}});
    EXPECT_EQ(body, json({{"group_id", "team-7"}, {"messages", messages}}));

    const auto hits = ok(system->retrieve_memories("how does the user get to work?", {}, 3));
    EXPECT_EQ(json::parse(peer.only("POST", "/search").body),
              json({{"group_ids", {"team-7"}}, {"group_id", "team-7"}, {"query", "how does the user get to work?"},
                    {"max_facts", 3}}));
    ASSERT_EQ(hits.size(), 3u);
    EXPECT_EQ(hits[0].memory.id, "f1");
    EXPECT_EQ(hits[2].memory.text, "fact number 3");
    EXPECT_EQ(hits[0].memory.created_at, "2026-03-01T09:00:00Z");

    auto all = system->all_memories();
    ASSERT_FALSE(all);
    EXPECT_EQ(all.error().kind, ErrorKind::unsupported);

    ASSERT_TRUE(system->reset());
    peer.only("POST", "/clear");
    EXPECT_EQ(system->history("f1").error().kind, ErrorKind::unsupported);
}

}  // namespace
}  // namespace memfail::serve_test

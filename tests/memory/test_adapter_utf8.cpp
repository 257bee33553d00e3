// SPDX-License-Identifier: MIT
// A memory whose text or id from an adapter is not valid UTF-8 (raw bytes such as Latin-1, or an
// escaped lone surrogate as Python writes surrogateescape'd text) is never stored: the call fails
// with a protocol error naming the adapter, the operation and the field, the same over exec: and
// http:, and (exec:) the adapter is not restarted, since the stream is still in step.
#include "adapter_test_util.hpp"

#include <memfail/memory/adapter/adapter_system.hpp>

#include <gtest/gtest.h>
#include "loopback_server.hpp"

#include <atomic>
#include <chrono>
#include <thread>

namespace memfail::memory::adapter {
namespace {

using nlohmann::json;
using test::ok;
using fixture::connect;
using fixture::contains;
using fixture::k_adapter;
using fixture::tea_session;

void expect_utf8_error(const Error& error, const std::string& adapter, const std::string& op,
                       const std::string& field, const std::string& detail) {
    const std::string text = error.describe();
    EXPECT_EQ(error.kind, ErrorKind::protocol) << text;
    EXPECT_TRUE(contains(text, adapter)) << text;
    EXPECT_TRUE(contains(text, op + ": " + field + ": not valid UTF-8 (" + detail + ")")) << text;
}

TEST(AdapterUtf8, ExecRawBytesInATextAreAProtocolErrorNamingTheField) {
    auto system = connect("exec:cmd=python3 -S " + k_adapter + " --faults");
    ok(system->store_conversation(tea_session()));
    const auto hits = system->retrieve_memories("bad_utf8_text", {}, 5);
    ASSERT_FALSE(hits) << "stored raw: " << (hits ? (*hits)[2].memory.text : "");
    expect_utf8_error(hits.error(), "exec:python3 -S " + k_adapter, "retrieve_memories",
                      "memories[2].text", "byte 0xff at offset 17");
    // The answer was one whole line: the adapter keeps running and keeps what it held.
    EXPECT_EQ(system->generation(), 0u);
    EXPECT_EQ(ok(system->all_memories()).size(), 3u);
    EXPECT_EQ(ok(system->retrieve_memories("radiator", {}, 3)).size(), 1u);
}

TEST(AdapterUtf8, ExecRawBytesInAnIdAreAProtocolErrorNamingTheField) {
    auto system = connect("exec:cmd=python3 -S " + k_adapter + " --faults");
    const auto hits = system->retrieve_memories("bad_utf8_id", {}, 5);
    ASSERT_FALSE(hits);
    expect_utf8_error(hits.error(), "exec:python3 -S " + k_adapter, "retrieve_memories",
                      "memories[2].id", "byte 0xff at offset 17");
    EXPECT_EQ(system->generation(), 0u);
}

TEST(AdapterUtf8, ExecEscapedLoneSurrogateIsAProtocolError) {
    auto system = connect("exec:cmd=python3 -S " + k_adapter + " --faults");
    const auto hits = system->retrieve_memories("lone_surrogate", {}, 5);
    ASSERT_FALSE(hits);
    expect_utf8_error(hits.error(), "exec:python3 -S " + k_adapter, "retrieve_memories",
                      "memories[0].text", "lone surrogate \\udce9 at offset 3");
    EXPECT_EQ(system->generation(), 0u);
}

TEST(AdapterUtf8, ExecBytesOutsideAStringAreStillNotJson) {
    // Only strings are looked into: a reply whose structure is broken stays "not JSON".
    auto system = connect("exec:cmd=python3 -S " + k_adapter + " --faults");
    const auto hits = system->retrieve_memories("garbage", {}, 5);
    ASSERT_FALSE(hits);
    EXPECT_TRUE(contains(hits.error().message, "not JSON")) << hits.error().describe();
}

// An http: peer answering from fixed bodies.
class Peer : public fixture::LoopbackServer {
  public:
    std::atomic<int> retrievals{0};
    ~Peer() { stop(); }  // the routes count into this object

    Peer() {
        server.Post("/v1/hello", [](const httplib::Request&, httplib::Response& res) {
            res.set_content(R"({"protocol": 1, "system": "peer"})", "application/json");
        });
    }
};

TEST(AdapterUtf8, HttpRawBytesAreTheSameProtocolErrorAndAreNotRetried) {
    Peer peer;
    peer.server.Post("/v1/retrieve_memories", [&](const httplib::Request&, httplib::Response& res) {
        ++peer.retrievals;
        res.set_content("{\"memories\": [{\"id\": \"a\", \"text\": \"fine\"}, {\"id\": \"b\", \"text\": "
                        "\"fine\"}, {\"id\": \"c\", \"text\": \"tea after dinner \xff and caf\xe9\"}]}",
                        "application/json");
    });
    // Beside it, the noncharacters U+FDD0 (raw) and U+FDD1 (escaped), which the check must not
    // mistake for its own markers.
    peer.server.Post("/v1/all_memories", [&](const httplib::Request&, httplib::Response& res) {
        res.set_content("{\"memories\": [{\"text\": \"\xef\xb7\x90 \\ufdd1\", \"id\": \"caf\xe9\"}]}",
                        "application/json");
    });
    peer.start();
    auto system = connect("http:url=" + peer.url() + ",retries=2");
    const auto hits = system->retrieve_memories("tea", {}, 5);
    ASSERT_FALSE(hits) << "stored raw: " << (hits ? (*hits)[2].memory.text : "");
    expect_utf8_error(hits.error(), peer.url(), "retrieve_memories", "memories[2].text",
                      "byte 0xff at offset 17");
    EXPECT_EQ(peer.retrievals.load(), 1); // a final answer, not a transport failure

    const auto all = system->all_memories();
    ASSERT_FALSE(all);
    expect_utf8_error(all.error(), peer.url(), "all_memories", "memories[0].id",
                      "byte 0xe9 at offset 3");
}

TEST(AdapterUtf8, HttpEscapedLoneSurrogateIsAProtocolError) {
    Peer peer;
    peer.server.Post("/v1/retrieve_memories", [&](const httplib::Request&, httplib::Response& res) {
        res.set_content(R"({"memories": [{"id": "a", "text": "x\udce9"}]})", "application/json");
    });
    peer.start();
    auto transport = ok(make_transport(ok(Spec::parse("http:url=" + peer.url()))));
    const auto answer =
        transport->call("retrieve_memories", json{{"query", "q"}, {"k", 3}, {"history", json::array()}});
    ASSERT_FALSE(answer);
    expect_utf8_error(answer.error(), peer.url(), "retrieve_memories", "memories[0].text",
                      "lone surrogate \\udce9 at offset 1");
}

TEST(AdapterUtf8, Mem0PresetNamesTheFieldOfItsOwnReply) {
    Peer peer;
    peer.server.Post("/search", [&](const httplib::Request&, httplib::Response& res) {
        res.set_content("{\"results\": [{\"id\": \"a\", \"memory\": \"fine\"}, {\"id\": \"b\", "
                        "\"memory\": \"caf\xe9\"}]}",
                        "application/json");
    });
    peer.start();
    auto transport = ok(make_transport(ok(Spec::parse("http:url=" + peer.url() + ",preset=mem0"))));
    const auto answer =
        transport->call("retrieve_memories", json{{"query", "q"}, {"k", 3}, {"history", json::array()}});
    ASSERT_FALSE(answer);
    expect_utf8_error(answer.error(), peer.url(), "POST " + peer.url() + "/search", "results[1].memory",
                      "byte 0xe9 at offset 3");
}

TEST(AdapterUtf8, ValidTextOfEveryKindStillArrivesUnchanged) {
    // Raw multi-byte UTF-8, an escaped surrogate pair, and the noncharacters the check itself uses.
    // Declared before the peer, so the peer's server thread is joined before the text goes away.
    const std::string text = "caf\xc3\xa9 \xe6\xbc\xa2 \xf0\x9f\x8d\xb5 \xef\xb7\x90 \xf4\x8f\xbf\xbf";
    Peer peer;
    peer.server.Post("/v1/retrieve_memories", [&](const httplib::Request&, httplib::Response& res) {
        res.set_content("{\"memories\": [{\"id\": \"a\", \"text\": \"" + text +
                            " \\ud83c\\udf75 \\ufdd0\"}]}",
                        "application/json");
    });
    peer.start();
    auto system = connect("http:url=" + peer.url());
    const auto hits = ok(system->retrieve_memories("tea", {}, 5));
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].memory.text, text + " \xf0\x9f\x8d\xb5 \xef\xb7\x90");
}

} // namespace
} // namespace memfail::memory::adapter

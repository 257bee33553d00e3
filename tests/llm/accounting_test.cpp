// SPDX-License-Identifier: MIT
// What the client reports for accounting: a failed call carries the requests it sent, a request
// libcurl resends after a connection reset is an attempt, the cache records who paid for each reply
// (in the same transaction as the reply) and hands that payment only to another process of the same
// results file, and the preflight fails loudly and quickly on a dead endpoint.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include <memfail/llm/cached_client.hpp>
#include <memfail/llm/llm_stack.hpp>
#include <memfail/llm/preflight.hpp>

#include "llm_test_support.hpp"

namespace memfail::llm {
namespace {

using nlohmann::json;
using testing::fast_options;
using testing::make_client;
using testing::plain_request;
using testing::seconds_since;
using testing::start_fake;
using testing::TempDir;

TEST(Accounting, AFailedCallCarriesTheRequestsItSent) {
    auto server = start_fake({{"default", {{"fault", "http_500"}}}});
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.max_retries = 3;
    auto reply = make_client(options)->chat(plain_request("hello"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().attempts, 4);
    EXPECT_EQ(server->stats()["requests"].get<int>(), 4);

    auto refused = make_client(options)->embed(EmbeddingRequest{Role::embed, "e", {"x"}});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().attempts, 4);
}

TEST(Accounting, ANonRetryableFailureCountsItsOneAttempt) {
    auto server = start_fake({{"default", {{"fault", "http_400"}}}});
    ASSERT_TRUE(server);
    auto reply = make_client(fast_options(*server))->chat(plain_request("hello"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().attempts, 1);
}

// A minimal HTTP/1.1 server on loopback: the first request on each connection is answered with a
// chat completion and the connection kept alive; the second request on a connection is read and
// the connection closed without a byte of reply (a reset after the request arrived). libcurl then
// silently sends that request again on a fresh connection.
class ResettingServer {
public:
    ResettingServer() {
        m_listen = ::socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        ::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        ::listen(m_listen, 8);
        socklen_t len = sizeof addr;
        ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len);
        m_port = ntohs(addr.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    ~ResettingServer() {
        m_stop = true;
        ::shutdown(m_listen, SHUT_RDWR);
        ::close(m_listen);
        m_thread.join();
    }
    std::string base_url() const { return "http://127.0.0.1:" + std::to_string(m_port) + "/v1"; }
    int requests() const { return m_requests.load(); }

private:
    // Reads one request (headers and Content-Length body); false when the peer closed first.
    static bool read_request(int fd) {
        std::string data;
        char buffer[4096];
        while (true) {
            const auto end = data.find("\r\n\r\n");
            if (end != std::string::npos) {
                std::size_t length = 0;
                const auto at = data.find("Content-Length: ");
                if (at != std::string::npos) length = std::stoul(data.substr(at + 16));
                if (data.size() >= end + 4 + length) return true;
            }
            const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) return false;
            data.append(buffer, static_cast<std::size_t>(n));
        }
    }
    void serve() {
        while (!m_stop) {
            const int fd = ::accept(m_listen, nullptr, nullptr);
            if (fd < 0) return;
            for (int on_connection = 0;; ++on_connection) {
                if (!read_request(fd)) break;
                ++m_requests;
                if (on_connection == 1) break;  // close without replying
                const std::string body =
                    R"({"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],)"
                    R"("usage":{"prompt_tokens":3,"completion_tokens":1}})";
                const std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                          std::to_string(body.size()) + "\r\nConnection: keep-alive\r\n\r\n" + body;
                ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
            }
            ::close(fd);
        }
    }
    int m_listen = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_requests{0};
    std::thread m_thread;
};

TEST(Accounting, ARequestResentAfterAConnectionResetIsAnAttempt) {
    ResettingServer server;
    ClientOptions options;
    options.base_url = server.base_url();
    options.concurrency = 1;  // one connection, reused
    options.timeout_seconds = 5;
    auto client = make_client(options);
    auto first = client->chat(plain_request("one"));
    ASSERT_TRUE(first) << first.error().describe();
    EXPECT_EQ(first->attempts, 1);
    // Sent on the kept-alive connection, which the server closes after reading it: libcurl sends it
    // again on a new connection, and that second send is an attempt.
    auto second = client->chat(plain_request("two"));
    ASSERT_TRUE(second) << second.error().describe();
    EXPECT_EQ(server.requests(), 3);
    EXPECT_EQ(second->attempts, 2);
}

std::shared_ptr<LlmCache> open_cache(const std::filesystem::path& path) {
    auto cache = LlmCache::open(path.string());
    if (!cache) ADD_FAILURE() << cache.error().describe();
    return cache ? std::move(cache).value() : nullptr;
}

TEST(Accounting, TheCacheRecordsWhoPaidAndHandsItOnlyToAnotherProcessOfTheSameLedger) {
    auto server = start_fake();
    ASSERT_TRUE(server);
    TempDir dir;
    auto cache = open_cache(dir.path() / "cache.db");
    std::shared_ptr<LlmClient> http = make_client(fast_options(*server));
    CachedClient first(http, cache, CacheMode::on, "/results/a.db");
    auto paid = first.chat(plain_request("hello"));
    ASSERT_TRUE(paid);
    EXPECT_FALSE(paid->cache_hit);
    ASSERT_TRUE(paid->payment);
    EXPECT_EQ(paid->payment->payer, first.payer());
    EXPECT_EQ(paid->payment->ledger, "/results/a.db");
    EXPECT_FALSE(paid->cache_key.empty());

    // The same process replaying its own reply: its own sent row accounts it, no payment handed on.
    auto own = first.chat(plain_request("hello"));
    ASSERT_TRUE(own && own->cache_hit);
    EXPECT_FALSE(own->payment);
    EXPECT_EQ(own->cache_key, paid->cache_key);

    // Another process writing the same results file (a resumed run) learns what was paid.
    CachedClient resumed(http, open_cache(dir.path() / "cache.db"), CacheMode::on, "/results/a.db");
    auto replay = resumed.chat(plain_request("hello"));
    ASSERT_TRUE(replay && replay->cache_hit);
    ASSERT_TRUE(replay->payment);
    EXPECT_EQ(replay->payment->payer, first.payer());
    EXPECT_EQ(replay->payment->usage.prompt_tokens, paid->usage.prompt_tokens);
    EXPECT_EQ(replay->payment->usage.completion_tokens, paid->usage.completion_tokens);
    EXPECT_EQ(replay->payment->attempts, 1);

    // A run writing another results file through a shared cache never does.
    CachedClient other(http, open_cache(dir.path() / "cache.db"), CacheMode::on, "/results/b.db");
    auto elsewhere = other.chat(plain_request("hello"));
    ASSERT_TRUE(elsewhere && elsewhere->cache_hit);
    EXPECT_FALSE(elsewhere->payment);
    EXPECT_EQ(server->stats()["requests"].get<int>(), 1);
}

TEST(Accounting, CallersSharingAFailedFlightReportNoAttempts) {
    json script = {{"default", {{"fault", "http_500"}, {"delay_ms", 150}}}};
    auto server = start_fake(script);
    ASSERT_TRUE(server);
    TempDir dir;
    ClientOptions options = fast_options(*server);
    options.max_retries = 0;
    CachedClient client(make_client(options), open_cache(dir.path() / "cache.db"), CacheMode::on, "/r.db");
    std::vector<std::thread> threads;
    std::atomic<int> attempts{0};
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] {
            auto reply = client.chat(plain_request("same"));
            if (!reply) attempts += reply.error().attempts;
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(attempts.load(), server->stats()["requests"].get<int>());
}

TEST(Preflight, ADeadEndpointFailsInSecondsNamingTheModelAndTheEndpoint) {
    std::string base_url;
    {
        auto server = start_fake();
        ASSERT_TRUE(server);
        base_url = server->base_url();
    }  // stopped: the port refuses connections
    TempDir dir;
    LlmSettings settings;
    settings.base_url = base_url;
    settings.judge_model = "the-judge";
    settings.max_retries = 6;  // the run's own retries would take tens of seconds
    auto stack = make_llm_stack(settings, (dir.path() / "r.db").string());
    ASSERT_TRUE(stack) << stack.error().describe();
    const auto start = std::chrono::steady_clock::now();
    auto checked = preflight(*stack->preflight, settings);
    ASSERT_FALSE(checked);
    EXPECT_LT(seconds_since(start), 5.0);
    EXPECT_EQ(checked.error().kind, ErrorKind::network);
    const std::string message = checked.error().describe();
    EXPECT_NE(message.find("preflight: the judge model 'the-judge' at " + url_identity(base_url)), std::string::npos)
        << message;
}

TEST(Preflight, ChecksEachModelOnceAndIsCached) {
    auto server = start_fake({{"default", {{"reply", "ok"}}}});
    ASSERT_TRUE(server);
    TempDir dir;
    LlmSettings settings;
    settings.base_url = server->base_url();
    settings.answer_model = "m";
    settings.judge_model = "m";
    settings.embed_model = "e";
    auto stack = make_llm_stack(settings, (dir.path() / "r.db").string());
    ASSERT_TRUE(stack);
    auto first = preflight(*stack->preflight, settings);
    ASSERT_TRUE(first) << first.error().describe();
    ASSERT_EQ(first->size(), 2u);  // m once (answer and judge), e once
    EXPECT_FALSE((*first)[0].cache_hit);
    EXPECT_EQ(server->stats()["requests"].get<int>(), 2);
    auto again = preflight(*stack->preflight, settings);
    ASSERT_TRUE(again);
    EXPECT_TRUE((*again)[0].cache_hit);
    EXPECT_EQ(server->stats()["requests"].get<int>(), 2);
}

TEST(Preflight, ARateLimitedEndpointPassesWithANote) {
    auto server = start_fake({{"default", {{"fault", "http_429"}}}});
    ASSERT_TRUE(server);
    TempDir dir;
    LlmSettings settings;
    settings.base_url = server->base_url();
    settings.answer_model = "m";
    auto stack = make_llm_stack(settings, (dir.path() / "r.db").string());
    ASSERT_TRUE(stack);
    auto checked = preflight(*stack->preflight, settings);
    ASSERT_TRUE(checked) << checked.error().describe();
    ASSERT_EQ(checked->size(), 1u);
    EXPECT_NE((*checked)[0].note.find("429"), std::string::npos);
}

TEST(Preflight, AnUnknownModelIsRefusedWithTheServersWords) {
    auto server = start_fake({{"default", {{"fault", "http_400"}}}});
    ASSERT_TRUE(server);
    TempDir dir;
    LlmSettings settings;
    settings.base_url = server->base_url();
    settings.answer_model = "no-such-model";
    auto stack = make_llm_stack(settings, (dir.path() / "r.db").string());
    ASSERT_TRUE(stack);
    auto checked = preflight(*stack->preflight, settings);
    ASSERT_FALSE(checked);
    EXPECT_NE(checked.error().message.find("the answer model 'no-such-model'"), std::string::npos);
    EXPECT_NE(checked.error().message.find("HTTP 400"), std::string::npos) << checked.error().message;
}

}  // namespace
}  // namespace memfail::llm

// SPDX-License-Identifier: MIT
// memfail serve under hostile clients, over raw loopback sockets with bounded loops and time
// limits: an unauthenticated endless chunked body, an authenticated chunked body over --max-body,
// idle connections beyond the worker count, a slow header sender, too many connections, slow
// bodies next to a legitimate client, conflicting length headers, and
// --embeddings without a memory system.
#include "serve_test_util.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <memfail/serve/protocol_server.hpp>

namespace memfail::serve_test {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

std::unique_ptr<serve::ProtocolServer> start_server(serve::ServerOptions options) {
    if (!options.system && !options.embeddings)
        options.system = ok(memory::make_memory_system("verbatim", memory::SystemContext{}));
    options.port = 0;
    return ok(serve::ProtocolServer::start(std::move(options)));
}

// A raw client socket to the server; closed on destruction.
class RawSocket {
public:
    explicit RawSocket(int port) {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        m_connected = ::connect(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    }
    ~RawSocket() {
        if (m_fd >= 0) ::close(m_fd);
    }
    RawSocket(const RawSocket&) = delete;
    RawSocket& operator=(const RawSocket&) = delete;

    bool connected() const { return m_connected; }
    // False once the peer has closed or reset the connection.
    bool send_all(const std::string& data) {
        std::size_t done = 0;
        while (done < data.size()) {
            pollfd fd{m_fd, POLLOUT, 0};
            if (::poll(&fd, 1, 2000) <= 0) return false;
            const ssize_t n = ::send(m_fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
            if (n <= 0) return false;
            done += static_cast<std::size_t>(n);
        }
        return true;
    }
    bool readable(int timeout_ms) {
        pollfd fd{m_fd, POLLIN, 0};
        return ::poll(&fd, 1, timeout_ms) > 0;
    }
    // Everything the server sends until it closes, or until `timeout_ms` passed.
    std::string read_until_close(int timeout_ms) {
        std::string out;
        const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
        char buffer[4096];
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) break;
            pollfd fd{m_fd, POLLIN, 0};
            if (::poll(&fd, 1, static_cast<int>(left)) <= 0) break;
            const ssize_t n = ::recv(m_fd, buffer, sizeof buffer, 0);
            if (n <= 0) {
                m_closed = true;
                break;
            }
            out.append(buffer, static_cast<std::size_t>(n));
        }
        return out;
    }
    bool closed() const { return m_closed; }

private:
    int m_fd = -1;
    bool m_connected = false;
    bool m_closed = false;
};

int status_of(const std::string& response) {
    if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return 0;
    return std::stoi(response.substr(9, 3));
}

std::string chunk(std::size_t size) {
    char head[32];
    std::snprintf(head, sizeof head, "%zx\r\n", size);
    return head + std::string(size, 'a') + "\r\n";
}

// Sends a chunked POST whose body never ends (up to `cap` bytes), watching for an answer between
// chunks. Returns the bytes of body sent before the server answered or closed, and the answer.
std::pair<std::size_t, std::string> endless_chunked_post(int port, const std::string& headers, std::size_t cap) {
    RawSocket sock(port);
    EXPECT_TRUE(sock.connected());
    std::string request = "POST /v1/store_conversation HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers +
                          "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    if (!sock.send_all(request)) return {0, ""};
    const std::string piece = chunk(64 * 1024);
    std::size_t sent = 0;
    while (sent < cap) {
        if (sock.readable(0)) break;
        if (!sock.send_all(piece)) break;
        sent += 64 * 1024;
    }
    return {sent, sock.read_until_close(5000)};
}

TEST(ServeHostile, UnauthenticatedChunkedBodyIsRefusedOnTheHeaders) {
    serve::ServerOptions options;
    options.token = "tok-hostile-0123456789";
    options.max_body = 1024 * 1024;
    auto server = start_server(std::move(options));
    const auto start = Clock::now();
    const auto [sent, answer] = endless_chunked_post(server->port(), "", 64u * 1024u * 1024u);
    EXPECT_LT(seconds_since(start), 5.0);
    // Refused before the body: far less than the 64 MiB offered was taken (socket buffers hold a few MiB).
    EXPECT_LT(sent, 16u * 1024u * 1024u);
    EXPECT_EQ(status_of(answer), 401) << answer.substr(0, 200);
}

TEST(ServeHostile, AuthenticatedChunkedBodyOverMaxBodyGets413) {
    serve::ServerOptions options;
    options.token = "tok-hostile-0123456789";
    options.max_body = 256 * 1024;
    auto server = start_server(std::move(options));
    const auto start = Clock::now();
    const auto [sent, answer] =
        endless_chunked_post(server->port(), "Authorization: Bearer tok-hostile-0123456789\r\n", 64u * 1024u * 1024u);
    EXPECT_LT(seconds_since(start), 5.0);
    EXPECT_LT(sent, 16u * 1024u * 1024u);
    EXPECT_EQ(status_of(answer), 413) << answer.substr(0, 200);
    EXPECT_NE(answer.find("262144"), std::string::npos);  // the limit is named

    // A declared Content-Length over the limit is refused on the headers too, without reading it.
    RawSocket sock(server->port());
    ASSERT_TRUE(sock.send_all("POST /v1/reset HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok-hostile-0123456789\r\n"
                              "Content-Length: 1073741824\r\n\r\n"));
    EXPECT_EQ(status_of(sock.read_until_close(3000)), 413);
}

TEST(ServeHostile, ChunkedBodyWithinTheLimitIsServed) {
    serve::ServerOptions options;
    options.max_body = 64 * 1024;
    auto server = start_server(std::move(options));
    RawSocket sock(server->port());
    const std::string body = R"({"protocol": 1})";
    char head[16];
    std::snprintf(head, sizeof head, "%zx\r\n", body.size());
    ASSERT_TRUE(sock.send_all("POST /v1/hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n" +
                              std::string(head) + body + "\r\n0\r\n\r\n"));
    const std::string answer = sock.read_until_close(3000);
    EXPECT_EQ(status_of(answer), 200) << answer;

    // A POST that declares no body is answered at once (not after waiting for EOF).
    RawSocket bare(server->port());
    const auto start = Clock::now();
    ASSERT_TRUE(bare.send_all("POST /v1/all_memories HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_TRUE(bare.readable(3000));
    EXPECT_LT(seconds_since(start), 2.0);
    EXPECT_EQ(status_of(bare.read_until_close(300)), 200);
}

TEST(ServeHostile, IdleConnectionsBeyondTheWorkersDoNotStarveARequest) {
    serve::ServerOptions options;
    options.threads = 4;
    options.header_timeout_ms = 1000;
    auto server = start_server(std::move(options));
    std::vector<std::unique_ptr<RawSocket>> idle;
    for (int i = 0; i < 16; ++i) {
        idle.push_back(std::make_unique<RawSocket>(server->port()));
        ASSERT_TRUE(idle.back()->connected());
    }
    const auto start = Clock::now();
    httplib::Client client("127.0.0.1", server->port());
    client.set_connection_timeout(5, 0);
    client.set_read_timeout(5, 0);
    auto res = client.Get("/healthz");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    // Idle connections are dropped a header timeout after they were accepted, queued or not.
    EXPECT_LT(seconds_since(start), 3.0);
    for (auto& sock : idle) {
        sock->read_until_close(3000);
        EXPECT_TRUE(sock->closed());
    }
}

TEST(ServeHostile, SlowHeaderSenderIsCutOff) {
    serve::ServerOptions options;
    options.header_timeout_ms = 500;
    auto server = start_server(std::move(options));
    RawSocket sock(server->port());
    ASSERT_TRUE(sock.connected());
    const auto start = Clock::now();
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    bool cut = false;
    for (std::size_t i = 0; i < request.size() && seconds_since(start) < 4.0; ++i) {
        if (!sock.send_all(request.substr(i, 1))) {
            cut = true;
            break;
        }
        if (sock.readable(100)) {
            cut = true;
            break;
        }
    }
    ASSERT_TRUE(cut) << "the server was still reading headers after " << seconds_since(start) << " s";
    const std::string answer = sock.read_until_close(2000);
    EXPECT_TRUE(sock.closed());
    EXPECT_NE(status_of(answer), 200);
    EXPECT_LT(seconds_since(start), 3.0);
}

TEST(ServeHostile, TooManyConnectionsAreRefusedWith503) {
    serve::ServerOptions options;
    options.threads = 1;
    options.max_queued = 1;
    options.max_connections = 2;
    options.header_timeout_ms = 2000;
    auto server = start_server(std::move(options));
    std::vector<std::unique_ptr<RawSocket>> held;
    for (int i = 0; i < 4; ++i) held.push_back(std::make_unique<RawSocket>(server->port()));
    // Two are held open; the others are told to come back later.
    int refused = 0;
    for (auto& sock : held) {
        const std::string answer = sock->read_until_close(500);
        if (status_of(answer) == 503) ++refused;
    }
    EXPECT_GE(refused, 1);
}

// Issue 32: slow-body and idle connections (no token needed on the loopback default) must not hold
// the workers: a legitimate request is answered within a second while 30 clients trickle a body a
// few bytes a second and 200 more sit idle, all on the default options.
TEST(ServeHostile, SlowBodiesAndIdleConnectionsDoNotDelayALegitimateClient) {
    auto server = start_server(serve::ServerOptions{});
    const int port = server->port();
    std::vector<std::unique_ptr<RawSocket>> slow;
    for (int i = 0; i < 30; ++i) {
        slow.push_back(std::make_unique<RawSocket>(port));
        ASSERT_TRUE(slow.back()->connected());
        ASSERT_TRUE(slow.back()->send_all("POST /v1/store_conversation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                          "Content-Length: 100000\r\n\r\n{\"sessions\": ["));
    }
    std::vector<std::unique_ptr<RawSocket>> idle;
    for (int i = 0; i < 200; ++i) {
        idle.push_back(std::make_unique<RawSocket>(port));
        ASSERT_TRUE(idle.back()->connected());
    }
    // The slow clients go on trickling a few bytes a second while the legitimate one is timed.
    std::atomic<bool> done{false};
    std::thread trickle([&] {
        while (!done.load()) {
            for (auto& sock : slow) (void)sock->send_all(" ");
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // every connection accepted and held
    double first = 0;
    double worst = 0;
    int answered = 0;
    for (int i = 0; i < 3; ++i) {
        const auto start = Clock::now();
        httplib::Client client("127.0.0.1", port);
        client.set_connection_timeout(5, 0);
        client.set_read_timeout(5, 0);
        auto res = client.Post("/v1/hello", R"({"protocol": 1})", "application/json");
        const double took = seconds_since(start);
        if (i == 0) first = took;
        worst = std::max(worst, took);
        if (res && res->status == 200) ++answered;
    }
    done = true;
    trickle.join();
    std::printf("legitimate client under 30 slow-body + 200 idle connections: first %.3f s, worst %.3f s\n", first, worst);
    EXPECT_EQ(answered, 3);
    EXPECT_LT(worst, 1.0);
}

// Issue 32: a request with both Content-Length and Transfer-Encoding is refused with 400 and the
// connection closed, so bytes that one reading would take for a second request are never served.
TEST(ServeHostile, ContentLengthWithTransferEncodingIsRefusedNotSmuggled) {
    auto server = start_server(serve::ServerOptions{});
    for (const std::string te : {"chunked", "Chunked", "gzip, chunked"}) {
        RawSocket sock(server->port());
        ASSERT_TRUE(sock.connected());
        const std::string smuggled = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
        const std::string chunked_body = "0\r\n\r\n";
        ASSERT_TRUE(sock.send_all("POST /v1/hello HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                  "Content-Length: " + std::to_string(chunked_body.size() + smuggled.size()) +
                                  "\r\nTransfer-Encoding: " + te + "\r\n\r\n" + chunked_body + smuggled));
        const std::string answer = sock.read_until_close(3000);
        EXPECT_TRUE(sock.closed()) << te;
        EXPECT_EQ(status_of(answer), 400) << te << ": " << answer;
        std::size_t responses = 0;
        for (std::size_t at = answer.find("HTTP/1."); at != std::string::npos; at = answer.find("HTTP/1.", at + 1)) ++responses;
        EXPECT_EQ(responses, 1u) << te << ": " << answer;
    }
    // Two different Content-Length values, and a transfer coding other than chunked: refused too.
    for (const std::string headers : {"Content-Length: 3\r\nContent-Length: 40\r\n", "Transfer-Encoding: gzip\r\n"}) {
        RawSocket sock(server->port());
        ASSERT_TRUE(sock.send_all("POST /v1/hello HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n{}\r\n" +
                                  "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
        const std::string answer = sock.read_until_close(3000);
        EXPECT_TRUE(sock.closed()) << headers;
        EXPECT_GE(status_of(answer), 400) << headers << ": " << answer;
        EXPECT_EQ(answer.find("HTTP/1.", 1), std::string::npos) << headers << ": " << answer;
    }
}

TEST(ServeHostile, EmbeddingsWithoutASystem) {
    serve::ServerOptions options;
    options.embeddings = true;
    auto server = start_server(std::move(options));
    httplib::Client client("127.0.0.1", server->port());
    client.set_read_timeout(5, 0);
    auto res = client.Post("/v1/embeddings", R"({"input": "green tea after dinner"})", "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(json::parse(res->body)["data"][0]["embedding"].size(), static_cast<std::size_t>(serve::k_default_embedding_dim));
    res = client.Post("/v1/hello", R"({"protocol": 1})", "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 404);
    EXPECT_NE(res->body.find("only embeddings"), std::string::npos) << res->body;

    // Neither a system nor embeddings: nothing to serve.
    serve::ServerOptions nothing;
    nothing.port = 0;
    EXPECT_FALSE(serve::ProtocolServer::start(std::move(nothing)));
}

}  // namespace
}  // namespace memfail::serve_test

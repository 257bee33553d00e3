// SPDX-License-Identifier: MIT
// The protocol server behind `memfail serve`: cpp-httplib routes in front of
// adapter::handle_operation, a bearer-token check, body limits, and the hashed-embeddings endpoint.
#include <memfail/serve/protocol_server.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <regex>
#include <string_view>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <memfail/core/text.hpp>
#include <memfail/memory/adapter/protocol.hpp>
#include <memfail/memory/embedder.hpp>

namespace memfail::serve {

namespace {

using json = nlohmann::json;

constexpr int k_max_embedding_dim = 65536;
constexpr const char* k_embedding_model = "memfail-hashed";

std::string dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_json(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(dump(body), "application/json");
}

// A protocol error object. `openai` adds OpenAI's "type" so OpenAI clients read it too.
void send_error(httplib::Response& res, int status, ErrorKind kind, const std::string& message, bool openai = false) {
    json body = memory::adapter::error_json(make_error(kind, message));
    if (openai && body.contains("error") && body["error"].is_object())
        body["error"]["type"] = status >= 500 ? "server_error" : "invalid_request_error";
    send_json(res, status, body);
}

// The HTTP status for an operation's answer: 200 for a result, else by the error's kind.
int status_for(const json& answer) {
    if (!answer.is_object() || !answer.contains("error")) return 200;
    const json& error = answer["error"];
    const std::string kind = error.is_object() && error.contains("kind") && error["kind"].is_string()
                                 ? error["kind"].get<std::string>()
                                 : "internal";
    if (kind == "invalid_request") return 400;
    if (kind == "not_found") return 404;
    if (kind == "unsupported") return 501;
    return 500;
}

// Compares a presented token with the expected one in time that depends only on the expected
// token's length, so response timing does not reveal how much of a guess was right.
bool same_token(std::string_view given, std::string_view expected) {
    volatile unsigned char diff = given.size() == expected.size() ? 0 : 1;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
        diff = diff | static_cast<unsigned char>(g ^ static_cast<unsigned char>(expected[i]));
    }
    return diff == 0;
}

std::string base64(const std::vector<float>& values) {
    static constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string bytes;
    bytes.reserve(values.size() * 4);
    for (float v : values) {
        std::uint32_t bits = 0;
        std::memcpy(&bits, &v, sizeof bits);
        for (int i = 0; i < 4; ++i) bytes += static_cast<char>((bits >> (8 * i)) & 0xFF);  // little-endian
    }
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
        std::uint32_t chunk = 0;
        for (std::size_t j = 0; j < 3; ++j)
            chunk = (chunk << 8) | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0u);
        for (std::size_t j = 0; j < 4; ++j) out += j <= n ? k_alphabet[(chunk >> (18 - 6 * j)) & 0x3F] : '=';
    }
    return out;
}

using Clock = std::chrono::steady_clock;

// What a worker thread knows about the connection it serves. httplib calls the pre-routing
// handler and the route handlers on the thread that reads the request, so a thread-local is
// race-free.
class ConnectionStream;
thread_local ConnectionStream* t_connection = nullptr;
// Set by the accept queue while it hands a connection over that it has no room for.
thread_local bool t_refuse = false;
// When the connection handed to this thread was accepted.
thread_local Clock::time_point t_accepted_at{};

constexpr std::size_t k_header_allowance = 64u * 1024u;  // request line and headers, raw bytes

// The socket side of one connection, in place of httplib's own stream: every read waits at most
// until the current phase's deadline (headers, then body), and reads at most a byte allowance per
// phase, so neither a slow client nor an endless one (a chunked body, a header line without end)
// can hold a thread or memory past the limits.
class ConnectionStream final : public httplib::Stream {
public:
    ConnectionStream(socket_t sock, const std::atomic<socket_t>& listening, int write_timeout_ms)
        : m_sock(sock), m_listening(listening), m_write_timeout_ms(write_timeout_ms) {}

    void begin_phase(Clock::time_point deadline, std::size_t allowance) {
        m_deadline = deadline;
        m_allowance = allowance;
    }
    bool over_allowance() const { return m_over_allowance; }
    bool timed_out() const { return m_timed_out; }
    // Something a handler decided means this connection must not serve another request.
    void close_after_answer() { m_close = true; }
    bool closing() const { return m_close; }
    bool buffered() const { return m_begin < m_end; }

    bool is_readable() const override { return buffered() || wait(POLLIN, m_deadline); }
    bool is_writable() const override {
        return wait(POLLOUT, Clock::now() + std::chrono::milliseconds(m_write_timeout_ms));
    }

    ssize_t read(char* ptr, std::size_t size) override {
        if (size == 0) return 0;
        if (!buffered()) {
            if (m_allowance == 0) {
                m_over_allowance = true;
                return -1;
            }
            if (!wait(POLLIN, m_deadline)) {
                m_timed_out = true;
                return -1;
            }
            const std::size_t want = std::min(sizeof m_buffer, m_allowance);
            const ssize_t n = ::recv(m_sock, m_buffer, want, 0);
            if (n <= 0) return n < 0 ? -1 : 0;
            m_allowance -= static_cast<std::size_t>(n);
            m_begin = 0;
            m_end = static_cast<std::size_t>(n);
        }
        const std::size_t n = std::min(size, m_end - m_begin);
        std::memcpy(ptr, m_buffer + m_begin, n);
        m_begin += n;
        return static_cast<ssize_t>(n);
    }

    ssize_t write(const char* ptr, std::size_t size) override {
        std::size_t done = 0;
        const auto deadline = Clock::now() + std::chrono::milliseconds(m_write_timeout_ms);
        while (done < size) {
            if (!wait(POLLOUT, deadline)) return -1;
            const ssize_t n = ::send(m_sock, ptr + done, size - done, MSG_NOSIGNAL);
            if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
            if (n <= 0) return -1;
            done += static_cast<std::size_t>(n);
        }
        return static_cast<ssize_t>(done);
    }

    void get_remote_ip_and_port(std::string& ip, int& port) const override { address(false, ip, port); }
    void get_local_ip_and_port(std::string& ip, int& port) const override { address(true, ip, port); }
    socket_t socket() const override { return m_sock; }

    // Waits for `events` until `deadline`, in short slices so a stopping server is noticed.
    bool wait(short events, Clock::time_point deadline) const {
        for (;;) {
            if (m_listening.load() == INVALID_SOCKET) return false;
            // Past the deadline, what already arrived is still taken (a request that waited in the
            // accept queue was sent in time), but nothing more is waited for.
            const auto left = std::max<long long>(
                0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
            pollfd fd{m_sock, events, 0};
            const int ready = ::poll(&fd, 1, static_cast<int>(std::min<long long>(left, 100)));
            if (ready > 0) return true;  // readable, writable, or an error the next call reports
            if (left == 0 || (ready < 0 && errno != EINTR)) return false;
        }
    }

private:
    void address(bool local, std::string& ip, int& port) const {
        sockaddr_storage addr{};
        socklen_t len = sizeof addr;
        ip.clear();
        port = 0;
        const int rc = local ? ::getsockname(m_sock, reinterpret_cast<sockaddr*>(&addr), &len)
                             : ::getpeername(m_sock, reinterpret_cast<sockaddr*>(&addr), &len);
        if (rc != 0) return;
        char text[INET6_ADDRSTRLEN] = {};
        if (addr.ss_family == AF_INET) {
            const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
            ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
            port = ntohs(in->sin_port);
        } else if (addr.ss_family == AF_INET6) {
            const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
            ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
            port = ntohs(in6->sin6_port);
        }
        ip = text;
    }

    socket_t m_sock;
    const std::atomic<socket_t>& m_listening;
    int m_write_timeout_ms;
    Clock::time_point m_deadline{};
    std::size_t m_allowance = 0;
    bool m_over_allowance = false;
    bool m_timed_out = false;
    bool m_close = false;
    char m_buffer[4096];
    std::size_t m_begin = 0;
    std::size_t m_end = 0;
};

// The accept queue: `threads` workers, and at most `max_queued` accepted connections waiting for
// one. A connection beyond that is handed over at once with t_refuse set, which answers 503.
class BoundedPool final : public httplib::TaskQueue {
public:
    BoundedPool(int threads, int max_queued) : m_max_queued(static_cast<std::size_t>(max_queued)) {
        for (int i = 0; i < threads; ++i) m_threads.emplace_back([this] { work(); });
    }
    ~BoundedPool() override { shutdown(); }

    void enqueue(std::function<void()> fn) override {
        {
            std::lock_guard lock(m_mutex);
            if (!m_shutdown && m_jobs.size() < m_max_queued) {
                m_jobs.push_back({std::move(fn), Clock::now()});
                m_ready.notify_one();
                return;
            }
        }
        t_refuse = true;
        fn();
        t_refuse = false;
    }

    void shutdown() override {
        {
            std::lock_guard lock(m_mutex);
            if (m_shutdown) return;
            m_shutdown = true;
        }
        m_ready.notify_all();
        for (auto& t : m_threads)
            if (t.joinable()) t.join();
    }

private:
    struct Job {
        std::function<void()> fn;
        Clock::time_point accepted_at;
    };

    void work() {
        for (;;) {
            Job job;
            {
                std::unique_lock lock(m_mutex);
                m_ready.wait(lock, [&] { return m_shutdown || !m_jobs.empty(); });
                if (m_jobs.empty()) return;  // shut down and drained
                job = std::move(m_jobs.front());
                m_jobs.pop_front();
            }
            t_accepted_at = job.accepted_at;
            job.fn();
        }
    }

    std::size_t m_max_queued;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<Job> m_jobs;
    bool m_shutdown = false;
    std::vector<std::thread> m_threads;
};

struct ConnectionLimits {
    int header_timeout_ms = 5000;
    int body_timeout_ms = 30000;
    int idle_timeout_ms = 1000;
    int write_timeout_ms = 5000;
    std::size_t max_body = k_default_max_body;
    std::size_t max_requests = 100;  // per connection
};

// Discards what a refused client is still sending for a moment after the answer, so closing
// does not reset the connection before the client has read the answer.
void linger_close(socket_t sock) {
    ::shutdown(sock, SHUT_WR);
    const auto deadline = Clock::now() + std::chrono::milliseconds(300);
    std::size_t drained = 0;
    char sink[16384];
    while (drained < 4u * 1024u * 1024u) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) break;
        pollfd fd{sock, POLLIN, 0};
        if (::poll(&fd, 1, static_cast<int>(left)) <= 0) break;
        const ssize_t n = ::recv(sock, sink, sizeof sink, 0);
        if (n <= 0) break;
        drained += static_cast<std::size_t>(n);
    }
    ::close(sock);
}

// httplib's server with memfail's connection handling in place of its own (see ConnectionStream).
class Server : public httplib::Server {
public:
    ConnectionLimits limits;

    // httplib 0.11 listens with a backlog of 5; listening again on the bound socket raises it, so a
    // burst of clients is not left waiting for SYN retries.
    void widen_backlog() {
        const auto sock = svr_sock_.load();
        if (sock != INVALID_SOCKET) ::listen(sock, SOMAXCONN);
    }

private:
    bool process_and_close_socket(socket_t sock) override {
        if (t_refuse) {
            static const std::string k_busy = [] {
                const std::string body =
                    R"({"error": {"kind": "internal", "message": "memfail serve: too many connections, try again later"}})";
                return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
                       "Retry-After: 1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
            }();
            (void)::send(sock, k_busy.data(), k_busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            ::shutdown(sock, SHUT_RDWR);
            ::close(sock);
            return false;
        }
        ConnectionStream stream(sock, svr_sock_, limits.write_timeout_ms);
        t_connection = &stream;
        const auto accepted = t_accepted_at == Clock::time_point{} ? Clock::now() : t_accepted_at;
        t_accepted_at = {};
        bool ret = false;
        bool refused = false;
        for (std::size_t count = 0; count < limits.max_requests; ++count) {
            const auto start = count == 0 ? accepted : Clock::now();
            // The next request must begin within the idle timeout (the first one: the header timeout)
            // and its headers must be complete within the header timeout.
            const auto header_deadline = start + std::chrono::milliseconds(limits.header_timeout_ms);
            if (count > 0 && !stream.buffered() &&
                !stream.wait(POLLIN, std::min(header_deadline, start + std::chrono::milliseconds(limits.idle_timeout_ms))))
                break;
            stream.begin_phase(header_deadline, k_header_allowance);
            bool connection_closed = false;
            const bool last = count + 1 == limits.max_requests || svr_sock_.load() == INVALID_SOCKET;
            ret = process_request(stream, last, connection_closed, nullptr);
            if (stream.closing() || stream.over_allowance() || stream.timed_out()) refused = true;
            if (!ret || connection_closed || refused) break;
        }
        t_connection = nullptr;
        if (refused) {
            linger_close(sock);
        } else {
            ::shutdown(sock, SHUT_RDWR);
            ::close(sock);
        }
        return ret;
    }
};

// Reads a body through httplib's content reader up to `max_body` bytes. False, with a 413 answer
// and the connection marked for closing, when the body is larger; false with 400 when it could not
// be read whole (the client stopped or was too slow).
bool read_body(const httplib::ContentReader& reader, std::size_t max_body, std::string& body,
               httplib::Response& res, bool openai) {
    bool too_large = false;
    const bool ok = reader([&](const char* data, std::size_t length) {
        if (length > max_body - body.size()) {
            too_large = true;
            return false;
        }
        body.append(data, length);
        return true;
    });
    if (ok && !too_large) return true;
    if (t_connection) {
        t_connection->close_after_answer();
        if (t_connection->over_allowance()) too_large = true;
    }
    res.set_header("Connection", "close");
    if (too_large)
        send_error(res, 413, ErrorKind::invalid_input,
                   "the request body exceeds the server's limit of " + std::to_string(max_body) + " bytes", openai);
    else
        send_error(res, 400, ErrorKind::invalid_input, "the request body could not be read whole (incomplete or too slow)",
                   openai);
    return false;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
    if (host == "localhost" || host == "::1" || host == "[::1]") return true;
    in_addr address{};
    return ::inet_pton(AF_INET, host.c_str(), &address) == 1 && (ntohl(address.s_addr) >> 24) == 127;
}

struct ProtocolServer::Impl {
    ServerOptions options;
    Server server;
    std::thread thread;
    std::mutex system_mutex;  // memory systems are single-threaded
    std::mutex stop_mutex;
    std::atomic<bool> stopping{false};
    std::atomic<bool> listen_done{false};
    int port = 0;
    memory::HashedEmbedder embedder;

    explicit Impl(ServerOptions o) : options(std::move(o)), embedder(options.embedding_dim) {}

    // Wraps a handler so nothing escapes it: a throw becomes a JSON 500.
    template <class F>
    httplib::Server::Handler guarded(F f) {
        return [this, f](const httplib::Request& req, httplib::Response& res) {
            try {
                (this->*f)(req, res);
            } catch (const std::exception& e) {
                send_error(res, 500, ErrorKind::internal, std::string("memfail serve: internal error: ") + e.what());
            } catch (...) {
                send_error(res, 500, ErrorKind::internal, "memfail serve: internal error");
            }
        };
    }

    // The same for a route that reads its body itself, up to max_body.
    template <class F>
    httplib::Server::HandlerWithContentReader guarded_body(F f, bool openai) {
        return [this, f, openai](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
            try {
                std::string body;
                if (!read_body(reader, options.max_body, body, res, openai)) return;
                (this->*f)(req, body, res);
            } catch (const std::exception& e) {
                send_error(res, 500, ErrorKind::internal, std::string("memfail serve: internal error: ") + e.what(), openai);
            } catch (...) {
                send_error(res, 500, ErrorKind::internal, "memfail serve: internal error", openai);
            }
        };
    }

    // Runs on the headers, before any of the body is read: the token check for every /v1/ route,
    // a declared Content-Length over the limit, and a POST that declares no body at all (httplib
    // would read it until the client closes). A refusal closes the connection, so the unread body
    // is never taken for a next request.
    httplib::Server::HandlerResponse pre_routing(const httplib::Request& req, httplib::Response& res) {
        const bool v1 = req.path.rfind("/v1/", 0) == 0;
        const bool openai = req.path == "/v1/embeddings" || req.path == "/v1/models";
        auto refuse = [&] {
            if (t_connection) t_connection->close_after_answer();
            res.set_header("Connection", "close");
            return httplib::Server::HandlerResponse::Handled;
        };
        if (v1 && !authorized(req, res, openai)) return refuse();
        if (req.has_header("Content-Length")) {
            const std::string value = req.get_header_value("Content-Length");
            const bool digits = !value.empty() && value.size() <= 19 &&
                                std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
            if (!digits) {
                send_error(res, 400, ErrorKind::invalid_input, "the Content-Length header is not a number", openai);
                return refuse();
            }
            if (std::stoull(value) > options.max_body) {
                send_error(res, 413, ErrorKind::invalid_input,
                           "the request body exceeds the server's limit of " + std::to_string(options.max_body) + " bytes",
                           openai);
                return refuse();
            }
        } else if (!req.has_header("Transfer-Encoding") && req.method == "POST") {
            // No body (RFC 9112 6.3): served here, since httplib would wait for one until EOF.
            try {
                if (openai && options.embeddings && req.path == "/v1/embeddings") {
                    handle_embeddings(req, std::string(), res);
                    return httplib::Server::HandlerResponse::Handled;
                }
                static const std::regex k_operation(R"(/v1/([a-z_]+))");
                std::smatch match;
                if (!openai && std::regex_match(req.path, match, k_operation)) {
                    serve_operation(match[1].str(), std::string(), res);
                    return httplib::Server::HandlerResponse::Handled;
                }
            } catch (const std::exception& e) {
                send_error(res, 500, ErrorKind::internal, std::string("memfail serve: internal error: ") + e.what(), openai);
                return httplib::Server::HandlerResponse::Handled;
            }
            send_error(res, 404, ErrorKind::not_found, "no route for " + req.method + " " + req.path);
            return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
    }

    bool authorized(const httplib::Request& req, httplib::Response& res, bool openai = false) {
        if (options.token.empty()) return true;
        const std::string header = req.get_header_value("Authorization");
        constexpr std::string_view k_scheme = "bearer ";
        const bool bearer = header.size() > k_scheme.size() && text::to_lower(header.substr(0, k_scheme.size())) == k_scheme;
        if (bearer && same_token(text::trim(std::string_view(header).substr(k_scheme.size())), options.token)) return true;
        res.set_header("WWW-Authenticate", "Bearer");
        send_error(res, 401, ErrorKind::auth,
                   bearer ? "the bearer token is wrong" : "this server needs an Authorization: Bearer token", openai);
        return false;
    }

    void handle_operation(const httplib::Request& req, const std::string& body, httplib::Response& res) {
        serve_operation(req.matches[1], body, res);
    }

    void serve_operation(const std::string& op, const std::string& body, httplib::Response& res) {
        if (!options.system)
            return send_error(res, 404, ErrorKind::not_found,
                              "this server serves only embeddings (memfail serve --embeddings without --system): no "
                              "memory system answers /v1/" + op);
        json params = json::object();
        if (!text::trim(body).empty()) {
            params = json::parse(body, nullptr, false);
            if (params.is_discarded())
                return send_error(res, 400, ErrorKind::invalid_input, "the request body is not valid JSON");
            if (!params.is_object())
                return send_error(res, 400, ErrorKind::invalid_input, "the request body must be a JSON object of parameters");
        }
        json answer;
        {
            std::lock_guard lock(system_mutex);
            answer = memory::adapter::handle_operation(*options.system, op, params);
        }
        send_json(res, status_for(answer), answer);
    }

    void handle_healthz(const httplib::Request&, httplib::Response& res) {
        send_json(res, 200, json{{"status", "ok"}, {"protocol", memory::adapter::k_protocol_version}});
    }

    void handle_embeddings(const httplib::Request&, const std::string& text_body, httplib::Response& res) {
        auto bad = [&](const std::string& message) { send_error(res, 400, ErrorKind::invalid_input, message, true); };
        const json body = json::parse(text_body, nullptr, false);
        if (body.is_discarded() || !body.is_object()) return bad("the request body is not a JSON object");
        std::vector<std::string> inputs;
        if (!body.contains("input")) return bad("'input' is required: a string or an array of strings");
        if (body["input"].is_string()) {
            inputs.push_back(body["input"].get<std::string>());
        } else if (body["input"].is_array() && !body["input"].empty()) {
            for (const auto& item : body["input"]) {
                if (!item.is_string()) return bad("'input' must be a string or an array of strings (token arrays are not supported)");
                inputs.push_back(item.get<std::string>());
            }
        } else {
            return bad("'input' must be a string or a non-empty array of strings");
        }
        std::string model = k_embedding_model;
        if (body.contains("model")) {
            if (!body["model"].is_string()) return bad("'model' must be a string");
            model = body["model"].get<std::string>();
        }
        int dim = options.embedding_dim;
        if (body.contains("dimensions") && !body["dimensions"].is_null()) {
            if (!body["dimensions"].is_number_integer() || body["dimensions"].get<std::int64_t>() < 1 ||
                body["dimensions"].get<std::int64_t>() > k_max_embedding_dim)
                return bad("'dimensions' must be a whole number from 1 to " + std::to_string(k_max_embedding_dim));
            dim = static_cast<int>(body["dimensions"].get<std::int64_t>());
        }
        bool as_base64 = false;
        if (body.contains("encoding_format") && !body["encoding_format"].is_null()) {
            const json& format = body["encoding_format"];
            if (!format.is_string() || (format != "float" && format != "base64"))
                return bad("'encoding_format' must be \"float\" or \"base64\"");
            as_base64 = format == "base64";
        }
        const memory::HashedEmbedder other(dim);
        const memory::HashedEmbedder& embedder_used = dim == options.embedding_dim ? embedder : other;
        json data = json::array();
        std::int64_t tokens = 0;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const std::vector<float> vector = embedder_used.embed(inputs[i]);
            data.push_back({{"object", "embedding"},
                            {"index", i},
                            {"embedding", as_base64 ? json(base64(vector)) : json(vector)}});
            tokens += static_cast<std::int64_t>(text::split(std::string(text::trim(inputs[i])), ' ').size());
        }
        send_json(res, 200,
                  json{{"object", "list"},
                       {"data", std::move(data)},
                       {"model", model},
                       {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}});
    }

    void handle_models(const httplib::Request& req, httplib::Response& res) {
        if (!authorized(req, res, true)) return;
        send_json(res, 200,
                  json{{"object", "list"},
                       {"data", json::array({json{{"id", k_embedding_model},
                                                  {"object", "model"},
                                                  {"created", 0},
                                                  {"owned_by", "memfail"}}})}});
    }

    void install_routes() {
        server.new_task_queue = [n = options.threads, q = options.max_queued] { return new BoundedPool(n, q); };
        server.set_payload_max_length(options.max_body);
        server.limits.header_timeout_ms = options.header_timeout_ms;
        server.limits.body_timeout_ms = options.body_timeout_ms;
        server.limits.idle_timeout_ms = options.idle_timeout_ms;
        server.limits.write_timeout_ms = options.write_timeout_ms;
        server.limits.max_body = options.max_body;
        server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
            const auto handled = pre_routing(req, res);
            // Past the headers: the body (if any) gets its own deadline and allowance.
            if (handled == httplib::Server::HandlerResponse::Unhandled && t_connection)
                t_connection->begin_phase(Clock::now() + std::chrono::milliseconds(options.body_timeout_ms),
                                          2 * options.max_body + k_header_allowance);
            return handled;
        });
        // SO_REUSEADDR without httplib's default SO_REUSEPORT: a second server on a busy port must
        // fail loudly, not share it. TCP_NODELAY: httplib writes headers and body separately.
        server.set_socket_options([](socket_t sock) {
            int yes = 1;
            ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
            ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
        });
        server.set_tcp_nodelay(true);
        // Idle keep-alive connections are re-checked for shutdown only after this timeout.
        server.set_keep_alive_timeout(1);
        server.Get("/healthz", guarded(&Impl::handle_healthz));
        if (options.embeddings) {
            server.Post("/v1/embeddings", guarded_body(&Impl::handle_embeddings, true));
            server.Get("/v1/models", guarded(&Impl::handle_models));
        }
        server.Post(R"(/v1/([a-z_]+))", guarded_body(&Impl::handle_operation, false));
        server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
            send_error(res, 500, ErrorKind::internal, "memfail serve: internal error");
        });
        // httplib's own refusals (unknown path, body too large, unreadable request) get JSON bodies.
        const std::size_t max_body = options.max_body;
        server.set_error_handler(httplib::Server::HandlerWithResponse(
            [max_body](const httplib::Request& req, httplib::Response& res) {
                if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
                if (res.status == 404)
                    send_error(res, 404, ErrorKind::not_found, "no route for " + req.method + " " + req.path);
                else if (res.status == 413)
                    send_error(res, 413, ErrorKind::invalid_input,
                               "the request body exceeds the server's limit of " + std::to_string(max_body) + " bytes");
                else if (res.status >= 500)
                    send_error(res, res.status, ErrorKind::internal, "HTTP " + std::to_string(res.status));
                else
                    send_error(res, res.status, ErrorKind::invalid_input,
                               "HTTP " + std::to_string(res.status) + " for " + req.method + " " + req.path);
                return httplib::Server::HandlerResponse::Handled;
            }));
    }

    void stop() {
        std::lock_guard lock(stop_mutex);
        stopping = true;
        server.stop();
        if (thread.joinable()) thread.join();
    }
};

ProtocolServer::ProtocolServer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

ProtocolServer::~ProtocolServer() { stop(); }

Result<std::unique_ptr<ProtocolServer>> ProtocolServer::start(ServerOptions options) {
    if (!options.system && !options.embeddings)
        return make_error(ErrorKind::invalid_input, "no memory system to serve (and no embeddings)", "system");
    if (options.max_queued < 0) return make_error(ErrorKind::invalid_input, "max_queued must not be negative", "max_queued");
    for (const int ms : {options.header_timeout_ms, options.body_timeout_ms, options.idle_timeout_ms, options.write_timeout_ms})
        if (ms < 1 || ms > 24 * 3600 * 1000)
            return make_error(ErrorKind::invalid_input, "timeouts must be between 1 ms and 24 hours", "timeout");
    if (options.port < 0 || options.port > 65535)
        return make_error(ErrorKind::invalid_input, "port must be between 0 and 65535", "port");
    if (options.host.empty()) return make_error(ErrorKind::invalid_input, "host must not be empty", "host");
    if (options.max_body < 1) return make_error(ErrorKind::invalid_input, "max_body must be at least 1 byte", "max_body");
    if (options.embedding_dim < 1 || options.embedding_dim > k_max_embedding_dim)
        return make_error(ErrorKind::invalid_input,
                          "embedding_dim must be between 1 and " + std::to_string(k_max_embedding_dim), "embedding_dim");
    if (options.threads < 1 || options.threads > 1024)
        return make_error(ErrorKind::invalid_input, "threads must be between 1 and 1024", "threads");

    auto impl = std::make_unique<Impl>(std::move(options));
    impl->install_routes();
    const std::string& host = impl->options.host;
    if (impl->options.port == 0) {
        impl->port = impl->server.bind_to_any_port(host);
        if (impl->port < 0) return make_error(ErrorKind::network, "cannot bind a free port on " + host);
    } else {
        if (!impl->server.bind_to_port(host, impl->options.port))
            return make_error(ErrorKind::network, "cannot listen on " + host + ":" + std::to_string(impl->options.port) +
                                                      " (in use, or not an address of this machine)");
        impl->port = impl->options.port;
    }
    impl->server.widen_backlog();
    Impl* raw = impl.get();
    raw->thread = std::thread([raw] {
        raw->server.listen_after_bind();
        raw->listen_done = true;
    });
    // listen_after_bind either marks the server running before it accepts, or returns at once.
    while (!raw->server.is_running() && !raw->listen_done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!raw->server.is_running()) {
        raw->thread.join();
        return make_error(ErrorKind::network, "the server did not start listening on " + host);
    }
    return std::unique_ptr<ProtocolServer>(new ProtocolServer(std::move(impl)));
}

int ProtocolServer::port() const { return m_impl->port; }

std::string ProtocolServer::base_url() const {
    const std::string& host = m_impl->options.host;
    std::string shown = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host;
    if (shown.find(':') != std::string::npos && shown.front() != '[') shown = "[" + shown + "]";
    return "http://" + shown + ":" + std::to_string(m_impl->port);
}

void ProtocolServer::stop() { m_impl->stop(); }

bool ProtocolServer::running() const { return !m_impl->stopping && !m_impl->listen_done; }

}  // namespace memfail::serve

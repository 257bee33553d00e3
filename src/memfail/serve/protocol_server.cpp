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
#include <fcntl.h>
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

// What a worker thread knows about the request it serves. httplib calls the pre-routing handler
// and the route handlers on the thread that runs process_request, so a thread-local is race-free.
class ConnectionStream;
thread_local ConnectionStream* t_connection = nullptr;

constexpr std::size_t k_header_allowance = 64u * 1024u;  // request line and headers, raw bytes
constexpr int k_linger_ms = 300;

// Whether `header` (an Authorization value) carries `token` as a bearer token.
bool bearer_matches(std::string_view header, const std::string& token) {
    constexpr std::string_view k_scheme = "bearer ";
    if (header.size() <= k_scheme.size() || text::to_lower(std::string(header.substr(0, k_scheme.size()))) != k_scheme)
        return false;
    return same_token(text::trim(header.substr(k_scheme.size())), token);
}

// A complete answer the gate writes itself (the connection is then closed).
std::string canned_answer(int status, const char* reason, const std::string& message, const char* extra_header = "") {
    const std::string body = dump(json{{"error", {{"kind", status == 503 ? "internal" : "invalid_request"}, {"message", message}}}});
    return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: application/json\r\nConnection: close\r\n" +
           extra_header + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string_view trim_view(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

// How much of a connection's buffered bytes make one request, read from its framing alone (RFC
// 9112 6): the gate hands a request to a worker only once all of it has arrived, or at once, on
// the headers, when the worker will refuse it without reading a body. Resumable: each call goes on
// from where the previous one stopped, so a request sent a byte at a time is scanned once.
struct Framing {
    enum class State {
        more,          // the request is not complete yet
        ready,         // `end` bytes are one whole request
        headers_only,  // refused on the headers: the worker gets `end` (the head) and closes after answering
        too_large,     // the head exceeds k_header_allowance
    };
    State state = State::more;
    std::size_t end = 0;
    bool head_complete = false;
    bool body_too_large = false;         // with headers_only: answer 413
    std::size_t expect_continue_at = 0;  // offset of an "Expect: 100-continue" header name, or 0

    void scan(const std::string& buffer, std::size_t max_body, const std::string& token) {
        if (state != State::more) return;
        if (!head_complete && !scan_head(buffer, max_body, token)) return;
        if (!head_complete || state != State::more) return;
        if (m_chunked) scan_chunks(buffer, max_body);
        else if (buffer.size() - m_head_end >= m_length) ready(m_head_end + m_length);
    }

private:
    static std::string_view line_at(const std::string& buffer, std::size_t pos, std::size_t nl) {
        std::string_view line(buffer.data() + pos, nl - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return line;
    }
    void ready(std::size_t at) {
        state = State::ready;
        end = at;
    }
    void refuse_on_headers(bool too_large = false) {
        state = State::headers_only;
        end = m_head_end;
        body_too_large = too_large;
    }

    // False while the head is incomplete.
    bool scan_head(const std::string& buffer, std::size_t max_body, const std::string& token) {
        for (;;) {
            const std::size_t nl = buffer.find('\n', m_pos);
            if (nl == std::string::npos || nl + 1 > k_header_allowance) {
                if (buffer.size() > k_header_allowance) state = State::too_large;
                return false;
            }
            const std::string_view line = line_at(buffer, m_pos, nl);
            const std::size_t at = m_pos;
            m_pos = nl + 1;
            if (m_lines++ == 0) continue;  // the request line
            if (line.empty()) break;       // end of the head
            const std::size_t colon = line.find(':');
            // No colon, a folded line, or space before the colon: httplib and an intermediary could
            // disagree on what it means, so the request is refused.
            if (colon == std::string_view::npos || colon == 0 || line.front() == ' ' || line.front() == '\t' ||
                line[colon - 1] == ' ' || line[colon - 1] == '\t') {
                m_malformed = true;
                continue;
            }
            const std::string_view name = line.substr(0, colon);
            const std::string_view value = trim_view(line.substr(colon + 1));
            if (iequals(name, "Content-Length")) {
                ++m_content_lengths;
                m_content_length = std::string(value);
            } else if (iequals(name, "Transfer-Encoding")) {
                ++m_transfer_encodings;
                m_chunked = iequals(value, "chunked");
            } else if (iequals(name, "Authorization")) {
                m_authorized = !token.empty() && bearer_matches(value, token);
            } else if (iequals(name, "Expect") && iequals(value, "100-continue")) {
                expect_continue_at = at;
            }
        }
        head_complete = true;
        m_head_end = m_pos;
        // Anything the worker refuses on the headers (pre_routing) is handed over without its body.
        if ((!token.empty() && !m_authorized) || m_malformed || m_content_lengths > 1 || m_transfer_encodings > 1 ||
            (m_content_lengths > 0 && m_transfer_encodings > 0) || (m_transfer_encodings > 0 && !m_chunked)) {
            refuse_on_headers();
            return true;
        }
        if (m_transfer_encodings == 0) {
            const std::string& value = m_content_length;
            const bool digits = !value.empty() && value.size() <= 19 &&
                                std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
            if (m_content_lengths > 0 && !digits) {
                refuse_on_headers();
                return true;
            }
            const std::uint64_t length = m_content_lengths > 0 ? std::stoull(value) : 0;
            if (length > max_body) {
                refuse_on_headers(true);
                return true;
            }
            m_length = static_cast<std::size_t>(length);
        }
        return true;
    }

    // Chunked: sizes in hex (extensions after ';' ignored), each chunk's data followed by CRLF, a
    // zero-size chunk, then trailer lines up to an empty line.
    void scan_chunks(const std::string& buffer, std::size_t max_body) {
        if (m_pos < m_head_end) m_pos = m_head_end;
        for (;;) {
            if (m_pos - m_head_end > 2 * max_body + k_header_allowance) return refuse_on_headers(true);
            if (m_data_left > 0) {  // inside a chunk's data and its CRLF
                const std::size_t take = std::min(m_data_left, buffer.size() - m_pos);
                m_pos += take;
                m_data_left -= take;
                if (m_data_left > 0) return;
                continue;
            }
            const std::size_t nl = buffer.find('\n', m_pos);
            if (nl == std::string::npos) {
                if (buffer.size() - m_pos > 4096) refuse_on_headers();
                return;
            }
            std::string_view line = line_at(buffer, m_pos, nl);
            m_pos = nl + 1;
            if (m_in_trailers) {
                if (line.empty()) return ready(m_pos);
                continue;
            }
            if (m_after_data) {  // the CRLF closing a chunk's data
                m_after_data = false;
                if (!line.empty()) return refuse_on_headers();
                continue;
            }
            line = trim_view(line.substr(0, line.find(';')));
            if (line.empty() || line.size() > 15 ||
                !std::all_of(line.begin(), line.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }))
                return refuse_on_headers();
            const std::size_t size = std::stoull(std::string(line), nullptr, 16);
            if (size == 0) {
                m_in_trailers = true;
                continue;
            }
            if (size > max_body - m_data) return refuse_on_headers(true);
            m_data += size;
            m_data_left = size;
            m_after_data = true;
        }
    }

    std::size_t m_pos = 0;
    std::size_t m_lines = 0;
    std::size_t m_head_end = 0;
    std::size_t m_content_lengths = 0;
    std::size_t m_transfer_encodings = 0;
    std::string m_content_length;
    bool m_chunked = false;
    bool m_malformed = false;
    bool m_authorized = false;
    std::size_t m_length = 0;
    std::size_t m_data = 0;       // chunk data so far
    std::size_t m_data_left = 0;  // of the current chunk
    bool m_after_data = false;
    bool m_in_trailers = false;
};

// The worker's side of one request: it reads only the bytes the gate collected (the whole
// request, or its head when it is refused on the headers), never the socket, so no client can
// hold a worker by sending slowly; it writes to the socket with a deadline.
class ConnectionStream final : public httplib::Stream {
public:
    ConnectionStream(socket_t sock, std::string_view request, bool body_too_large, int write_timeout_ms)
        : m_sock(sock), m_request(request), m_body_too_large(body_too_large), m_write_timeout_ms(write_timeout_ms) {}

    bool over_allowance() const { return m_over_allowance; }
    // Something a handler decided means this connection must not serve another request.
    void close_after_answer() { m_close = true; }
    bool closing() const { return m_close; }

    bool is_readable() const override { return m_pos < m_request.size(); }
    bool is_writable() const override { return wait_writable(Clock::now() + std::chrono::milliseconds(m_write_timeout_ms)); }

    ssize_t read(char* ptr, std::size_t size) override {
        if (size == 0) return 0;
        if (m_pos >= m_request.size()) {
            // httplib wants more than the gate handed over: the body was refused as too large, or
            // the request is malformed; either way it ends here.
            if (m_body_too_large) m_over_allowance = true;
            return -1;
        }
        const std::size_t n = std::min(size, m_request.size() - m_pos);
        std::memcpy(ptr, m_request.data() + m_pos, n);
        m_pos += n;
        return static_cast<ssize_t>(n);
    }

    ssize_t write(const char* ptr, std::size_t size) override {
        std::size_t done = 0;
        const auto deadline = Clock::now() + std::chrono::milliseconds(m_write_timeout_ms);
        while (done < size) {
            if (!wait_writable(deadline)) return -1;
            const ssize_t n = ::send(m_sock, ptr + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
            if (n <= 0) return -1;
            done += static_cast<std::size_t>(n);
        }
        return static_cast<ssize_t>(done);
    }

    void get_remote_ip_and_port(std::string& ip, int& port) const override { address(false, ip, port); }
    void get_local_ip_and_port(std::string& ip, int& port) const override { address(true, ip, port); }
    socket_t socket() const override { return m_sock; }

private:
    bool wait_writable(Clock::time_point deadline) const {
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            pollfd fd{m_sock, POLLOUT, 0};
            const int ready = ::poll(&fd, 1, static_cast<int>(std::max<long long>(0, left)));
            if (ready > 0) return true;  // writable, or an error the next send reports
            if (left <= 0 || (ready < 0 && errno != EINTR)) return false;
        }
    }

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
    std::string_view m_request;
    std::size_t m_pos = 0;
    bool m_body_too_large;
    int m_write_timeout_ms;
    bool m_over_allowance = false;
    bool m_close = false;
};

// httplib's accept loop hands each connection to this queue; it runs the hand-over at once on
// the accepting thread, which only passes the socket to the gate (Server::process_and_close_socket).
class InlineQueue final : public httplib::TaskQueue {
public:
    void enqueue(std::function<void()> fn) override { fn(); }
    void shutdown() override {}
};

// The workers: `threads` of them, and at most `max_queued` complete requests waiting for one.
class WorkerPool {
public:
    WorkerPool(int threads, int max_queued) : m_max_queued(static_cast<std::size_t>(max_queued)) {
        for (int i = 0; i < threads; ++i) m_threads.emplace_back([this] { work(); });
    }
    ~WorkerPool() { shutdown(); }
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    // False when the queue is full (or the pool shut down): the caller refuses the request.
    bool try_enqueue(std::function<void()> fn) {
        {
            std::lock_guard lock(m_mutex);
            if (m_shutdown || m_jobs.size() >= m_max_queued + m_idle) return false;
            m_jobs.push_back(std::move(fn));
        }
        m_ready.notify_one();
        return true;
    }

    void shutdown() {
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
    void work() {
        for (;;) {
            std::function<void()> job;
            {
                std::unique_lock lock(m_mutex);
                ++m_idle;
                m_ready.wait(lock, [&] { return m_shutdown || !m_jobs.empty(); });
                --m_idle;
                if (m_jobs.empty()) return;  // shut down and drained
                job = std::move(m_jobs.front());
                m_jobs.pop_front();
            }
            job();
        }
    }

    std::size_t m_max_queued;
    std::size_t m_idle = 0;  // workers waiting: a job for one of them does not count as queued
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<std::function<void()>> m_jobs;
    bool m_shutdown = false;
    std::vector<std::thread> m_threads;
};

struct ConnectionLimits {
    int header_timeout_ms = 5000;
    int body_timeout_ms = 10000;
    int idle_timeout_ms = 1000;
    int write_timeout_ms = 5000;
    std::size_t max_body = k_default_max_body;
    std::size_t max_requests = 100;  // per connection
    int threads = 8;
    int max_queued = 64;
    int max_connections = 512;
    std::string token;
};

// httplib's server with memfail's connection handling in place of its own. One gate thread reads
// every open connection without blocking (poll), under a deadline per phase (the request line and
// headers, then the body) and a byte allowance, and hands a request to a worker only once all of it
// has arrived (or on its headers alone, when it is refused on them). Idle, slow and endless clients
// thus cost a file descriptor and a buffer each, never a worker, and a complete request from anyone
// else is served at once. A kept-alive connection returns to the gate after each answer.
class Server : public httplib::Server {
public:
    ConnectionLimits limits;

    ~Server() override { stop_gate(); }

    // httplib 0.11 listens with a backlog of 5; listening again on the bound socket raises it, so a
    // burst of clients is not left waiting for SYN retries.
    void widen_backlog() {
        const auto sock = svr_sock_.load();
        if (sock != INVALID_SOCKET) ::listen(sock, SOMAXCONN);
    }

    // Starts the gate and the workers; once bound, before listening.
    void start_gate() {
        new_task_queue = [] { return new InlineQueue(); };
        if (::pipe2(m_wake, O_NONBLOCK | O_CLOEXEC) != 0) m_wake[0] = m_wake[1] = -1;
        m_pool = std::make_unique<WorkerPool>(limits.threads, limits.max_queued);
        m_gate = std::thread([this] { run_gate(); });
    }

    // Closes every connection and joins the gate and the workers; after stop(). Idempotent.
    void stop_gate() {
        {
            std::lock_guard lock(m_inbox_mutex);
            m_gate_stopping = true;
        }
        wake();
        if (m_gate.joinable()) m_gate.join();
        if (m_pool) m_pool->shutdown();
        std::lock_guard lock(m_inbox_mutex);
        for (auto& c : m_inbox) ::close(c.sock);
        m_inbox.clear();
        for (int& fd : m_wake)
            if (fd >= 0) {
                ::close(fd);
                fd = -1;
            }
    }

private:
    struct Connection {
        socket_t sock = INVALID_SOCKET;
        std::string buffer;
        Clock::time_point phase_start{};  // accepted, or the previous answer sent
        Clock::time_point deadline{};     // of the current phase
        bool body_phase = false;
        bool continued = false;  // "100 Continue" sent
        bool draining = false;   // answered and refused: read and discard until the deadline, then close
        std::size_t served = 0;
        Framing framing;  // of the request being read
    };

    bool process_and_close_socket(socket_t sock) override {
        Connection c;
        c.sock = sock;
        c.phase_start = Clock::now();
        c.deadline = c.phase_start + std::chrono::milliseconds(limits.header_timeout_ms);
        hand_to_gate(std::move(c));
        return true;
    }

    void wake() {
        if (m_wake[1] >= 0) {
            const char byte = 1;
            (void)!::write(m_wake[1], &byte, 1);
        }
    }

    void hand_to_gate(Connection c) {
        {
            std::lock_guard lock(m_inbox_mutex);
            if (!m_gate_stopping) {
                m_inbox.push_back(std::move(c));
                c.sock = INVALID_SOCKET;
            }
        }
        if (c.sock != INVALID_SOCKET) {
            ::close(c.sock);
            return;
        }
        wake();
    }

    // Answers with `answer` (best effort, never blocking) and lets the gate drain and close.
    void refuse(Connection& c, const std::string& answer) {
        (void)::send(c.sock, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        linger(c);
    }
    // Closing with unread bytes would reset the connection before the client read the answer: the
    // gate discards what still arrives for a moment first.
    void linger(Connection& c) {
        ::shutdown(c.sock, SHUT_WR);
        c.draining = true;
        c.deadline = Clock::now() + std::chrono::milliseconds(k_linger_ms);
        c.buffer.clear();
        c.buffer.shrink_to_fit();
    }
    void close_connection(Connection& c) {
        ::close(c.sock);
        c.sock = INVALID_SOCKET;
    }

    // Reading more is paused for connections in their body while the gate holds this much.
    std::size_t buffer_budget() const { return std::max<std::size_t>(64u * 1024u * 1024u, 4 * limits.max_body); }

    void run_gate() {
        std::vector<Connection> conns;
        std::vector<pollfd> fds;
        std::vector<char> chunk(64 * 1024);
        for (;;) {
            {
                std::lock_guard lock(m_inbox_mutex);
                if (m_gate_stopping || svr_sock_.load() == INVALID_SOCKET) break;
                for (auto& c : m_inbox) {
                    const std::size_t held = static_cast<std::size_t>(std::count_if(
                        conns.begin(), conns.end(), [](const Connection& x) { return !x.draining; }));
                    if (c.served == 0 && held >= static_cast<std::size_t>(limits.max_connections)) {
                        static const std::string k_busy = canned_answer(
                            503, "Service Unavailable", "memfail serve: too many connections, try again later",
                            "Retry-After: 1\r\n");
                        refuse(c, k_busy);
                    }
                    // A kept-alive connection may come back with a whole pipelined request already.
                    if (!c.draining && !c.buffer.empty()) advance(c);
                    if (c.sock != INVALID_SOCKET) conns.push_back(std::move(c));
                }
                m_inbox.clear();
            }
            std::erase_if(conns, [](const Connection& c) { return c.sock == INVALID_SOCKET; });

            auto now = Clock::now();
            auto next = now + std::chrono::milliseconds(100);
            fds.assign(1, pollfd{m_wake[0], POLLIN, 0});
            std::size_t buffered = 0;
            for (const auto& c : conns) buffered += c.buffer.size();
            const bool over_budget = buffered >= buffer_budget();
            for (const auto& c : conns) {
                next = std::min(next, c.deadline);
                const bool paused = over_budget && c.body_phase && !c.draining;
                fds.push_back(pollfd{c.sock, static_cast<short>(paused ? 0 : POLLIN), 0});
            }
            const auto wait_ms = std::max<long long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count());
            const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(wait_ms) + 1);
            if (ready < 0 && errno != EINTR) break;
            if (fds[0].revents & POLLIN) {
                char sink[256];
                while (::read(m_wake[0], sink, sizeof sink) > 0) {
                }
            }
            now = Clock::now();
            for (std::size_t i = 0; i < conns.size(); ++i) {
                Connection& c = conns[i];
                if (fds[i + 1].revents != 0) receive(c, chunk);
                if (c.sock == INVALID_SOCKET || now < c.deadline) continue;
                if (c.draining || c.buffer.empty()) {
                    close_connection(c);  // done lingering, or idle
                } else {
                    static const std::string k_slow = canned_answer(
                        408, "Request Timeout", "memfail serve: the request did not arrive whole in time (too slow)");
                    refuse(c, k_slow);
                }
            }
            std::erase_if(conns, [](const Connection& c) { return c.sock == INVALID_SOCKET; });
        }
        for (auto& c : conns) close_connection(c);
    }

    void receive(Connection& c, std::vector<char>& chunk) {
        const ssize_t n = ::recv(c.sock, chunk.data(), chunk.size(), MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
        if (n <= 0) {
            close_connection(c);  // the client left (or reset), mid-request or not
            return;
        }
        if (c.draining) return;
        if (c.buffer.empty() && c.served > 0) {
            // The first byte of a next request: its head is due a header timeout from the last answer.
            c.deadline = c.phase_start + std::chrono::milliseconds(limits.header_timeout_ms);
        }
        c.buffer.append(chunk.data(), static_cast<std::size_t>(n));
        advance(c);
    }

    // Decides what the buffered bytes are: more to wait for, a request for a worker, or a refusal.
    void advance(Connection& c) {
        Framing& f = c.framing;
        f.scan(c.buffer, limits.max_body, limits.token);
        switch (f.state) {
        case Framing::State::too_large: {
            static const std::string k_431 = canned_answer(431, "Request Header Fields Too Large",
                                                           "memfail serve: the request line and headers exceed 64 KiB");
            refuse(c, k_431);
            return;
        }
        case Framing::State::more:
            if (f.head_complete && !c.body_phase) {
                c.body_phase = true;
                c.deadline = Clock::now() + std::chrono::milliseconds(limits.body_timeout_ms);
                if (f.expect_continue_at > 0 && !c.continued) {
                    // Answered here, since the worker sees the request only once its body arrived;
                    // the header is renamed (same length) so httplib does not answer it again.
                    static const std::string k_continue = "HTTP/1.1 100 Continue\r\n\r\n";
                    (void)::send(c.sock, k_continue.data(), k_continue.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
                    c.buffer.replace(f.expect_continue_at, 6, "X-Sent");
                    c.continued = true;
                }
            }
            return;
        case Framing::State::ready:
        case Framing::State::headers_only:
            dispatch(c, f);
            return;
        }
    }

    void dispatch(Connection& c, const Framing& f) {
        const bool headers_only = f.state == Framing::State::headers_only;
        const std::size_t end = f.end;
        const bool too_large = f.body_too_large;
        auto job = std::make_shared<Connection>(std::move(c));
        c.sock = INVALID_SOCKET;  // the worker owns it now
        const bool queued = m_pool->try_enqueue([this, job, end, headers_only, too_large] {
            serve_request(*job, end, headers_only, too_large);
        });
        if (!queued) {
            static const std::string k_busy = canned_answer(503, "Service Unavailable",
                                                            "memfail serve: too many requests waiting, try again later",
                                                            "Retry-After: 1\r\n");
            c = std::move(*job);
            refuse(c, k_busy);
        }
    }

    // On a worker: answers one whole request, then hands the connection back to the gate (kept
    // alive, with any pipelined bytes) or closes it.
    void serve_request(Connection& c, std::size_t end, bool headers_only, bool too_large) {
        ConnectionStream stream(c.sock, std::string_view(c.buffer).substr(0, end), too_large, limits.write_timeout_ms);
        t_connection = &stream;
        bool connection_closed = false;
        const bool last = headers_only || c.served + 1 >= limits.max_requests || svr_sock_.load() == INVALID_SOCKET;
        const bool ok = process_request(stream, last, connection_closed, nullptr);
        t_connection = nullptr;
        const bool refused = headers_only || stream.closing() || stream.over_allowance() || !ok;
        c.buffer.erase(0, end);
        c.served += 1;
        c.body_phase = false;
        c.continued = false;
        c.framing = Framing{};
        c.phase_start = Clock::now();
        c.deadline = c.phase_start + std::chrono::milliseconds(c.buffer.empty() ? std::min(limits.idle_timeout_ms, limits.header_timeout_ms)
                                                                                : limits.header_timeout_ms);
        if (refused) {
            linger(c);
        } else if (connection_closed || last) {
            ::shutdown(c.sock, SHUT_RDWR);
            ::close(c.sock);
            return;
        }
        hand_to_gate(std::move(c));
    }

    std::unique_ptr<WorkerPool> m_pool;
    std::thread m_gate;
    int m_wake[2] = {-1, -1};
    std::mutex m_inbox_mutex;
    std::vector<Connection> m_inbox;
    bool m_gate_stopping = false;
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
        // One framing only (RFC 9112 6.1, 6.3): a body announced twice, or in two ways, could be
        // read one way here and another by an intermediary, which then takes the rest for a second
        // request (request smuggling); and no transfer coding but chunked is understood.
        const std::size_t lengths = req.get_header_value_count("Content-Length");
        const std::size_t codings = req.get_header_value_count("Transfer-Encoding");
        if (lengths > 1 || codings > 1 || (lengths > 0 && codings > 0)) {
            send_error(res, 400, ErrorKind::invalid_input,
                       "the request gives its body's length more than once (Content-Length and Transfer-Encoding, or "
                       "either twice)",
                       openai);
            return refuse();
        }
        if (codings > 0 && text::to_lower(text::trim(req.get_header_value("Transfer-Encoding"))) != "chunked") {
            send_error(res, 400, ErrorKind::invalid_input, "the only transfer coding understood is chunked", openai);
            return refuse();
        }
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
        if (bearer_matches(header, options.token)) return true;
        const bool bearer = header.size() > 7 && text::to_lower(header.substr(0, 7)) == "bearer ";
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
        server.set_payload_max_length(options.max_body);
        server.limits.header_timeout_ms = options.header_timeout_ms;
        server.limits.body_timeout_ms = options.body_timeout_ms;
        server.limits.idle_timeout_ms = options.idle_timeout_ms;
        server.limits.write_timeout_ms = options.write_timeout_ms;
        server.limits.max_body = options.max_body;
        server.limits.threads = options.threads;
        server.limits.max_queued = options.max_queued;
        server.limits.max_connections = options.max_connections;
        server.limits.token = options.token;
        server.set_pre_routing_handler(
            [this](const httplib::Request& req, httplib::Response& res) { return pre_routing(req, res); });
        // SO_REUSEADDR without httplib's default SO_REUSEPORT: a second server on a busy port must
        // fail loudly, not share it. TCP_NODELAY: httplib writes headers and body separately.
        server.set_socket_options([](socket_t sock) {
            int yes = 1;
            ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
            ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
        });
        server.set_tcp_nodelay(true);
        // Only announced (the Keep-Alive header): the gate closes an idle kept-alive connection
        // after idle_timeout_ms and serves at most max_requests on one connection.
        server.set_keep_alive_timeout(std::max(1, options.idle_timeout_ms / 1000));
        server.set_keep_alive_max_count(server.limits.max_requests);
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
        server.stop_gate();
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
    if (options.max_connections < 1)
        return make_error(ErrorKind::invalid_input, "max_connections must be at least 1", "max_connections");

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
    impl->server.start_gate();
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

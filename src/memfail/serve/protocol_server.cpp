// SPDX-License-Identifier: MIT
// The protocol server behind `memfail serve`: cpp-httplib routes in front of
// adapter::handle_operation, a bearer-token check, body limits, and the hashed-embeddings endpoint.
#include <memfail/serve/protocol_server.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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

// httplib 0.11 listens with a backlog of 5; listening again on the bound socket raises it, so a
// burst of clients is not left waiting for SYN retries.
class Server : public httplib::Server {
public:
    void widen_backlog() {
        const auto sock = svr_sock_.load();
        if (sock != INVALID_SOCKET) ::listen(sock, SOMAXCONN);
    }
};

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

    void handle_operation(const httplib::Request& req, httplib::Response& res) {
        if (!authorized(req, res)) return;
        const std::string op = req.matches[1];
        json params = json::object();
        if (!text::trim(req.body).empty()) {
            params = json::parse(req.body, nullptr, false);
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

    void handle_embeddings(const httplib::Request& req, httplib::Response& res) {
        if (!authorized(req, res, true)) return;
        auto bad = [&](const std::string& message) { send_error(res, 400, ErrorKind::invalid_input, message, true); };
        const json body = json::parse(req.body, nullptr, false);
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
        server.new_task_queue = [n = options.threads] { return new httplib::ThreadPool(static_cast<std::size_t>(n)); };
        server.set_payload_max_length(options.max_body);
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
            server.Post("/v1/embeddings", guarded(&Impl::handle_embeddings));
            server.Get("/v1/models", guarded(&Impl::handle_models));
        }
        server.Post(R"(/v1/([a-z_]+))", guarded(&Impl::handle_operation));
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
    if (!options.system) return make_error(ErrorKind::invalid_input, "no memory system to serve", "system");
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

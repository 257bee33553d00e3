// SPDX-License-Identifier: MIT
// `memfail serve`: any MemorySystem over the adapter protocol's HTTP transport (POST /v1/<op>,
// docs/ADAPTERS.md), plus, on request, an OpenAI-compatible embeddings endpoint backed by the
// offline hashed embedder. httplib stays out of this header.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include <memfail/core/error.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::serve {

inline constexpr int k_default_port = 8420;
inline constexpr std::size_t k_default_max_body = 16u * 1024u * 1024u;
inline constexpr int k_default_embedding_dim = 256;

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = k_default_port;  // 0: the system picks a free port
    // The system served. Its calls are serialised: memory systems are single-threaded. May be null
    // with `embeddings`: then only the embeddings routes are served and /v1/<op> answers 404.
    std::unique_ptr<memory::MemorySystem> system;
    // Non-empty: every /v1/ request needs "Authorization: Bearer <token>", else 401, decided on the
    // headers before any of the body is read. Never logged.
    std::string token;
    // Larger request bodies get 413, chunked ones included (counted as they arrive, never buffered
    // past the limit); the connection is then closed.
    std::size_t max_body = k_default_max_body;
    // Also serve POST /v1/embeddings and GET /v1/models (OpenAI-compatible).
    bool embeddings = false;
    int embedding_dim = k_default_embedding_dim;  // when a request names no "dimensions"
    // Requests are read by one thread that waits on every connection at once (poll) and hands a
    // request to a worker only once all of it has arrived, so idle and slow clients never hold a
    // worker: they cost a file descriptor and a buffer each, within the limits below.
    int threads = 8;  // requests answered at the same time
    // Whole requests waiting for a free worker; beyond this many they get 503 and the connection is
    // closed.
    int max_queued = 64;
    // Open connections; a new one beyond this gets 503 at once and is closed.
    int max_connections = 512;
    // The request line and headers must arrive within this many milliseconds of the connection
    // being accepted, or of the previous answer on a kept-alive connection; otherwise the
    // connection is closed (408 when part of a request had arrived).
    int header_timeout_ms = 5000;
    // The whole body must arrive within this many milliseconds of the headers (else 408 and the
    // connection is closed): a request has header_timeout_ms + body_timeout_ms at most.
    int body_timeout_ms = 10000;
    // A kept-alive connection with no next request is closed after this many milliseconds.
    int idle_timeout_ms = 1000;
    // Writing the answer to a client that does not read it gives up after this many milliseconds.
    int write_timeout_ms = 5000;
};

// Routes (only when a system is served): POST /v1/<op> (the protocol; status 200 with the result, or 400 invalid_request,
// 404 not_found, 501 unsupported, 500 internal with the {"error"} object), GET /healthz, and with
// `embeddings` POST /v1/embeddings and GET /v1/models. Every other path is a JSON 404; no handler
// lets an exception escape.
class ProtocolServer {
public:
    // Validates the options, binds, and returns once the server accepts connections; requests are
    // served by background threads until stop().
    static Result<std::unique_ptr<ProtocolServer>> start(ServerOptions options);

    ProtocolServer(const ProtocolServer&) = delete;
    ProtocolServer& operator=(const ProtocolServer&) = delete;
    ~ProtocolServer();  // stops and joins

    int port() const;
    // "http://127.0.0.1:<port>": the url= of an http: spec that reaches this server.
    std::string base_url() const;
    // Stops serving; idempotent.
    void stop();
    // True until stop() or until the listening thread ended on its own.
    bool running() const;

    struct Impl;

private:
    explicit ProtocolServer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// True for addresses that only this machine can reach: 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

}  // namespace memfail::serve

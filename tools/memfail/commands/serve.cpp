// SPDX-License-Identifier: MIT
// memfail serve: any memory system memfail can drive, over the adapter protocol's HTTP transport,
// until SIGINT or SIGTERM.
#include <commands/cli.hpp>
#include <commands/common.hpp>
#include <commands/llm_options.hpp>

#include <memfail/llm/llm_stack.hpp>
#include <memfail/memory/adapter/protocol.hpp>
#include <memfail/memory/memory_system.hpp>
#include <memfail/serve/protocol_server.hpp>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <thread>

namespace memfail::cli {

namespace {

struct ServeOptions {
    std::string system;
    std::string storage;
    std::string host = "127.0.0.1";
    int port = serve::k_default_port;
    std::string token_env;
    bool allow_remote = false;
    std::size_t max_body = serve::k_default_max_body;
    bool embeddings = false;
    int embedding_dim = serve::k_default_embedding_dim;
    std::string port_file;
    bool stdio = false;
    int threads = 8;
    int max_queued = 64;
    int max_connections = 512;
    double header_timeout = 5.0;
    double body_timeout = 10.0;
    LlmOptions llm;
};

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int signal) { g_stop_signal = signal; }

// Handlers (not a blocked mask): a blocked mask would be inherited by adapter processes the
// served system starts, and they would then ignore SIGTERM.
class StopSignals {
public:
    StopSignals() {
        g_stop_signal = 0;
        struct sigaction action {};
        action.sa_handler = on_stop_signal;
        sigemptyset(&action.sa_mask);
        sigaction(SIGINT, &action, &m_old_int);
        sigaction(SIGTERM, &action, &m_old_term);
    }
    ~StopSignals() {
        sigaction(SIGINT, &m_old_int, nullptr);
        sigaction(SIGTERM, &m_old_term, nullptr);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

private:
    struct sigaction m_old_int {};
    struct sigaction m_old_term {};
};

// Written whole or not at all, so a script polling for the file never reads half a number.
void write_port_file(const std::string& path, int port) {
    const std::string partial = path + ".partial";
    {
        std::ofstream out(partial, std::ios::trunc);
        out << port << '\n';
        if (!out) throw Fatal(make_error(ErrorKind::io, "cannot write the port file", partial));
    }
    std::error_code ec;
    std::filesystem::rename(partial, path, ec);
    if (ec) throw Fatal(make_error(ErrorKind::io, "cannot write the port file: " + ec.message(), path));
}

// The exec: transport's side of the protocol: one request per stdin line, one answer per stdout
// line, in order, until stdin closes. stdout carries nothing else.
void serve_stdio(memory::MemorySystem& system) {
    using nlohmann::json;
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        json answer;
        json request = json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!request.is_object() || !request.contains("op") || !request["op"].is_string()) {
            answer = memory::adapter::error_json(make_error(
                ErrorKind::invalid_input, "a request is one JSON object per line with \"id\", \"op\" and \"params\""));
            answer["id"] = request.is_object() && request.contains("id") ? request["id"] : json();
        } else {
            const json params = request.contains("params") ? request["params"] : json::object();
            answer = memory::adapter::handle_operation(system, request["op"].get<std::string>(), params);
            if (!answer.contains("error")) answer = json{{"result", std::move(answer)}};
            answer["id"] = request.contains("id") ? request["id"] : json();
        }
        std::fputs(answer.dump(-1, ' ', false, json::error_handler_t::replace).c_str(), stdout);
        std::fputc('\n', stdout);
        std::fflush(stdout);
    }
}

void serve_command(const ServeOptions& opts) {
    if (!serve::is_loopback_host(opts.host) && opts.token_env.empty() && !opts.allow_remote)
        throw Fatal(make_error(ErrorKind::invalid_input,
                               "--host " + opts.host +
                                   " is reachable from other machines, and without a token anyone there could read "
                                   "and erase the memory: give --token-env NAME to require a bearer token, or "
                                   "--allow-remote if the network is trusted"));
    if (opts.max_body < 1) throw Fatal(make_error(ErrorKind::invalid_input, "--max-body must be at least 1 byte"));
    if (opts.system.empty() && !opts.embeddings)
        throw Fatal(make_error(ErrorKind::invalid_input,
                               "nothing to serve: give --system SPEC, or --embeddings to serve only embeddings"));
    if (opts.system.empty() && opts.stdio)
        throw Fatal(make_error(ErrorKind::invalid_input, "--stdio serves a memory system: give --system SPEC"));
    std::string token;
    if (!opts.token_env.empty()) {
        const char* value = std::getenv(opts.token_env.c_str());
        if (!value || !*value)
            throw Fatal(make_error(ErrorKind::invalid_input, "--token-env names the environment variable " + opts.token_env +
                                                                 ", which is not set (or empty)"));
        token = value;
    }

    const llm::LlmSettings settings = opts.llm.resolve();
    memory::SystemContext context;
    context.storage_dir = opts.storage;
    context.services.model = settings.system_model;
    context.services.embed_model = settings.embed_model;
    context.services.temperature = settings.temperature;
    context.services.seed = settings.seed;
    std::optional<llm::LlmStack> stack;
    if (settings.uses_llm()) {
        // The reply cache lives next to the stores, or in the working folder without --storage.
        const std::string cache_base = opts.storage.empty() ? "memfail-serve" : (std::filesystem::path(opts.storage) / "serve").string();
        stack = value_or_fatal(llm::make_llm_stack(settings, cache_base));
        context.services.client = stack->client.get();
    }
    if (!opts.storage.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(opts.storage, ec);
        if (ec) throw Fatal(make_error(ErrorKind::io, "cannot create the storage folder: " + ec.message(), opts.storage));
    }
    std::unique_ptr<memory::MemorySystem> system;
    if (!opts.system.empty()) system = value_or_fatal(memory::make_memory_system(opts.system, context));
    const std::string spec = system ? system->spec() : std::string();
    if (opts.stdio) {
        serve_stdio(*system);
        return;
    }

    const bool system_served = system != nullptr;
    serve::ServerOptions server_options;
    server_options.host = opts.host;
    server_options.port = opts.port;
    server_options.system = std::move(system);
    server_options.token = std::move(token);
    server_options.max_body = opts.max_body;
    server_options.embeddings = opts.embeddings;
    server_options.embedding_dim = opts.embedding_dim;
    server_options.threads = opts.threads;
    server_options.max_queued = opts.max_queued;
    server_options.max_connections = opts.max_connections;
    server_options.header_timeout_ms = static_cast<int>(opts.header_timeout * 1000.0);
    server_options.body_timeout_ms = static_cast<int>(opts.body_timeout * 1000.0);

    StopSignals signals;
    auto server = value_or_fatal(serve::ProtocolServer::start(std::move(server_options)));
    if (!opts.port_file.empty()) write_port_file(opts.port_file, server->port());
    if (system_served)
        std::printf("memfail serve: listening on %s (system %s)\n", server->base_url().c_str(), spec.c_str());
    else
        std::printf("memfail serve: listening on %s (embeddings only, no memory system)\n", server->base_url().c_str());
    if (opts.embeddings)
        std::printf("memfail serve: OpenAI-compatible embeddings at %s/v1/embeddings (%d dimensions)\n",
                    server->base_url().c_str(), opts.embedding_dim);
    std::fflush(stdout);
    while (g_stop_signal == 0 && server->running()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const bool signalled = g_stop_signal != 0;
    server->stop();
    if (!opts.port_file.empty()) {
        std::error_code ec;
        std::filesystem::remove(opts.port_file, ec);
    }
    if (!signalled) throw Fatal(make_error(ErrorKind::network, "the server stopped listening unexpectedly"));
    progress_line(std::string("serve: stopped on ") + (g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM"));
}

}  // namespace

void add_serve_command(CLI::App& app, std::function<void()>& action) {
    auto opts = std::make_shared<ServeOptions>();
    CLI::App* cmd = app.add_subcommand(
        "serve", "Serve a memory system over the adapter protocol's HTTP transport (docs/ADAPTERS.md) until "
                 "SIGINT or SIGTERM, so other harnesses and agents can use it; optionally also an "
                 "OpenAI-compatible embeddings endpoint");
    cmd->add_option("--system,-s", opts->system,
                    "Memory system spec to serve: a built-in one (see `memfail ls systems`) or an adapter "
                    "(exec:cmd=..., http:url=...); may be left out with --embeddings, which then serves only "
                    "the embeddings endpoint");
    cmd->add_option("--storage", opts->storage,
                    "Folder where the system keeps its SQLite stores (created when missing); default: in memory, "
                    "lost when the server stops");
    cmd->add_option("--host", opts->host,
                    "Address to listen on; anything but loopback needs --token-env or --allow-remote")
        ->capture_default_str();
    cmd->add_option("--port", opts->port, "Port to listen on; 0 picks a free one (see --port-file)")
        ->capture_default_str()
        ->check(CLI::Range(0, 65535));
    cmd->add_option("--token-env", opts->token_env,
                    "Name of the environment variable holding the bearer token every /v1/ request must send "
                    "(never the token itself); checked on the headers, before any body is read");
    cmd->add_flag("--allow-remote", opts->allow_remote,
                  "Allow a non-loopback --host without a token (only on a network you trust)");
    cmd->add_option("--max-body", opts->max_body,
                    "Largest request body in bytes, chunked ones included; larger ones are refused with 413 and the "
                    "connection closed")
        ->capture_default_str();
    cmd->add_option("--threads", opts->threads,
                    "Requests answered at the same time (a request reaches a thread only once all of it has "
                    "arrived, so slow and idle clients hold none)")
        ->capture_default_str()
        ->check(CLI::Range(1, 1024));
    cmd->add_option("--max-queued", opts->max_queued,
                    "Whole requests that may wait for a free thread; more are answered 503 at once")
        ->capture_default_str()
        ->check(CLI::Range(0, 100000));
    cmd->add_option("--max-connections", opts->max_connections,
                    "Open connections; a new one beyond this is answered 503 at once")
        ->capture_default_str()
        ->check(CLI::Range(1, 100000));
    cmd->add_option("--header-timeout", opts->header_timeout,
                    "Seconds a client has, from connecting or from the previous answer, to send the request line "
                    "and headers; idle and slow clients are disconnected after it")
        ->capture_default_str()
        ->check(CLI::Range(0.001, 86400.0));
    cmd->add_option("--body-timeout", opts->body_timeout,
                    "Seconds a client has, after the headers, to send the whole request body (else 408 and the "
                    "connection closed)")
        ->capture_default_str()
        ->check(CLI::Range(0.001, 86400.0));
    cmd->add_flag("--embeddings", opts->embeddings,
                  "Also serve POST /v1/embeddings and GET /v1/models (OpenAI-compatible) from the offline hashed "
                  "embedder, e.g. for Mem0 with infer=false");
    cmd->add_option("--embedding-dim", opts->embedding_dim,
                    "Dimensions of the served embeddings when a request names none")
        ->capture_default_str()
        ->check(CLI::Range(1, 65536));
    cmd->add_option("--port-file", opts->port_file,
                    "Write the port to this file once listening (removed on exit): for scripts that use --port 0");
    cmd->add_flag("--stdio", opts->stdio,
                  "Speak the protocol as JSON lines over stdin/stdout (the exec: transport) instead of HTTP, until "
                  "stdin closes: --system 'exec:cmd=memfail serve --stdio --system verbatim'");
    opts->llm.add_to(*cmd, "<storage>/serve.llm-cache.db, or ./memfail-serve.llm-cache.db without --storage");
    cmd->callback([opts, &action] { action = [opts] { serve_command(*opts); }; });
}

}  // namespace memfail::cli

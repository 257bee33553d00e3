// SPDX-License-Identifier: MIT
// fake-llm executable: serves a script over the OpenAI protocol until SIGINT or SIGTERM.
#include "fake_llm.hpp"

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <pthread.h>
#include <string>
#include <unistd.h>

namespace {

// Writes `text` to `path` through a temporary file and rename, so a reader polling for the file
// never sees it half written.
memfail::Result<void> write_atomically(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            return memfail::make_error(memfail::ErrorKind::io, "cannot write the port file", tmp);
        out << text;
        out.flush();
        if (!out)
            return memfail::make_error(memfail::ErrorKind::io, "cannot write the port file", tmp);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        return memfail::make_error(memfail::ErrorKind::io, "cannot rename the port file into place",
                                   path);
    }
    return {};
}

int fail(const memfail::Error& error) {
    std::cerr << "fake-llm: error: " << error.describe() << "\n";
    return memfail::exit_code_for(error.kind);
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "fake-llm: a local OpenAI-compatible server that answers from a script (see "
        "tools/fake-llm/README.md). Serves POST /v1/chat/completions, POST /v1/embeddings, "
        "GET /v1/models, GET /_fake/stats, POST /_fake/reset and POST /_fake/script.",
        "fake-llm"};
    std::string script_path;
    std::string port_file;
    std::string api_key_env;
    bool no_json_schema = false;
    bool extractive = false;
    memfail::fake_llm::ServerOptions options;
    app.add_option("--script", script_path,
                   "JSON script of rules; without it every request gets the auto reply")
        ->check(CLI::ExistingFile);
    app.add_option("--host", options.host, "Address to listen on")->capture_default_str();
    app.add_option("--port", options.port, "Port to listen on; 0 picks a free one")
        ->capture_default_str()
        ->check(CLI::Range(0, 65535));
    app.add_option("--port-file", port_file, "Write the chosen port to this file once listening");
    app.add_option(
        "--api-key-env", api_key_env,
        "Require 'Authorization: Bearer <key>' with the key read from this environment variable");
    app.add_flag(
        "--no-json-schema", no_json_schema,
        "Answer 400 to response_format json_schema, like servers that only know json_object");
    app.add_flag(
        "--extractive", extractive,
        "Answer memfail's memory-system prompts (facts, notes, graph) that no rule matches "
        "with the rule-based extractive stand-in (the script's \"extractive\": true)");
    app.add_option("--log", options.log_path,
                   "Append one JSON line per request to this file (never the key)");
    app.add_option("--threads", options.threads, "Requests served at the same time")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    app.add_option("--embedding-dim", options.embedding_dim,
                   "Embedding size when the request gives no dimensions")
        ->capture_default_str()
        ->check(CLI::Range(1, 65536));
    CLI11_PARSE(app, argc, argv);

    options.json_schema_supported = !no_json_schema;
    if (!script_path.empty()) {
        auto script = memfail::fake_llm::load_script(script_path);
        if (!script)
            return fail(script.error());
        options.script = std::move(script).value();
    }
    if (extractive)
        options.script["extractive"] = true;
    if (!api_key_env.empty()) {
        const char* key = std::getenv(api_key_env.c_str());
        if (key == nullptr || *key == '\0')
            return fail(memfail::make_error(
                memfail::ErrorKind::invalid_input,
                "environment variable " + api_key_env + " is not set or empty", "--api-key-env"));
        options.required_key = key;
    }

    // Block the stop signals before any thread exists so every server thread inherits the mask and
    // only sigwait below receives them: no async-signal-safety concerns in a handler.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    // A client that disconnects mid-reply must not kill the server.
    std::signal(SIGPIPE, SIG_IGN);

    auto server = memfail::fake_llm::FakeLlmServer::start(std::move(options));
    if (!server)
        return fail(server.error());
    if (!port_file.empty()) {
        auto written = write_atomically(port_file, std::to_string((*server)->port()) + "\n");
        if (!written)
            return fail(written.error());
    }
    std::cout << "fake-llm: listening on " << (*server)->base_url() << std::endl;

    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    std::cerr << "fake-llm: stopping on signal " << signal_number << "\n";
    (*server)->stop();
    return 0;
}

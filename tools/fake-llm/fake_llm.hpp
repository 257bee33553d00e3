// SPDX-License-Identifier: MIT
// fake-llm: a real local HTTP server speaking the OpenAI protocol that answers from a script.
//
// Tests start it in-process on a loopback port and point the real LLM client at base_url(); the
// executable (main.cpp) serves shell tests and offline demos. The script format is documented in
// tools/fake-llm/README.md. httplib stays out of this header so users of the library do not pay for
// compiling it.
#pragma once
#include <memfail/core/error.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace memfail::fake_llm {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 0;                                     // 0: the system picks a free port
    nlohmann::json script = nlohmann::json::object(); // validated by start()
    // Non-empty: requests to /v1/* need "Authorization: Bearer <key>", else 401.
    std::string required_key;
    // False: 400 for response_format.type == "json_schema", like servers that only know
    // json_object.
    bool json_schema_supported = true;
    std::string log_path; // JSONL log of requests (never the Authorization value); empty: none
    int threads = 64;     // worker threads: the number of requests served at the same time
    int embedding_dim = 64;
};

class FakeLlmServer {
  public:
    // Validates the options and the script, binds, and returns once the server is accepting
    // connections. Requests are served by `threads` background threads.
    static Result<std::unique_ptr<FakeLlmServer>> start(ServerOptions options);

    FakeLlmServer(const FakeLlmServer&) = delete;
    FakeLlmServer& operator=(const FakeLlmServer&) = delete;
    // Stops and joins; requests that are sleeping (delay_ms, stall) are cut short.
    ~FakeLlmServer();

    int port() const;
    std::string base_url() const; // "http://127.0.0.1:<port>/v1"
    // {"requests", "chat", "embeddings", "models", "in_flight", "peak_in_flight", "by_rule",
    //  "by_schema", "faults", "bad_requests", "auth_failures"}: the same as GET /_fake/stats.
    nlohmann::json stats() const;
    // Zeroes the counters and every rule's `times` count (peak_in_flight restarts from in_flight).
    void reset();
    // Replaces the rules (validated first; on error the old script stays). Counts restart.
    Result<void> set_script(nlohmann::json script);
    // Stops serving; idempotent. The destructor calls it.
    void stop();
    // True until stop() or until the listening thread ended on its own.
    bool running() const;

    struct Impl;

  private:
    explicit FakeLlmServer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

// Checks a script without starting a server. Errors (invalid_input) name the field:
// where = "rules[2].match.shema", message = "unknown key; did you mean 'schema'?".
Result<void> validate_script(const nlohmann::json& script);

// Reads, parses and validates a script file; errors name the file and the field
// ("s.json: rules[0].fault: ...", or "s.json:3:14: invalid JSON: ...").
Result<nlohmann::json> load_script(const std::string& path);

// The "auto" reply for a JSON schema: a small value valid for it (required properties filled,
// strings "ok", enums their first value, booleans true, numbers their minimum or 0, arrays
// minItems copies of their items). Follows local "$ref"s ("#/$defs/x").
nlohmann::json minimal_instance(const nlohmann::json& schema);

// The deterministic unit vector the embeddings endpoint answers for `text`.
std::vector<float> embedding_for(std::string_view text, int dimensions);

// Whitespace-separated words.
std::int64_t count_words(std::string_view text);

// The tokens `text` takes for `model`, counted as the API counts them: memfail's tokenizer with the
// model's encoding (o200k_base, or cl100k_base for gpt-4, gpt-3.5 and the older embedders). Without
// the tokenizer's rank files, whitespace words, said once on stderr.
std::int64_t count_tokens(std::string_view model, std::string_view text);

// A chat request's prompt tokens: each message's content and its 3 tokens of framing, and the 3 that
// prime the reply (OpenAI's accounting for its chat models).
std::int64_t count_chat_prompt(std::string_view model, const std::vector<std::string>& contents);

} // namespace memfail::fake_llm

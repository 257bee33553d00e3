// SPDX-License-Identifier: MIT
// The one interface every LLM call goes through: chat completions (optionally with a JSON schema the
// reply must satisfy) and embeddings. Implementations: the OpenAI-compatible HTTP client
// (openai_client.hpp) and the cache decorator (cached_client.hpp) that wraps it. Calls are blocking
// and thread-safe; callers get concurrency by calling from several threads, and the client bounds
// how many requests are in flight.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>

namespace memfail::llm {

// Who is calling: accounting is kept per role, and each role has its own model.
enum class Role { answer, judge, system, embed };
std::string_view role_name(Role role);

struct ChatMessage {
    std::string role;  // "system", "user" or "assistant"
    std::string content;
};

// A JSON schema the reply must satisfy. `name` is sent as response_format.json_schema.name and is
// how scripted servers (tools/fake-llm) tell prompts apart, so each prompt uses a distinct name.
struct JsonSchema {
    std::string name;
    nlohmann::json schema;
};

struct ChatRequest {
    Role role = Role::answer;
    std::string stage;  // what the call is for ("answer", "judge.storage", ...): accounting only, never sent
    std::string model;
    std::vector<ChatMessage> messages;
    std::optional<double> temperature;  // sent only when set
    std::optional<std::int64_t> seed;   // sent only when set
    std::optional<int> max_tokens;      // sent only when set
    std::optional<JsonSchema> schema;   // structured output; the reply is validated locally too
};

struct Usage {
    std::int64_t prompt_tokens = 0;
    std::int64_t completion_tokens = 0;
    bool counted_locally = false;  // the server sent no usage; counted with our tokenizer
};

// Who paid for a reply, as the reply cache records it beside the reply (cached_client.hpp). It
// lets a resumed run account exactly once a call that a killed process paid for but never wrote
// down: on a network call it is this process's own payment; on a reply read from the cache it is
// present only when another process writing the same results file paid for it.
struct Payment {
    std::string ledger;  // the results file the paying run writes (absolute path)
    std::string payer;   // the paying process's random token
    Usage usage;
    int attempts = 0;
    std::int64_t latency_micros = 0;
};

struct ChatReply {
    std::string content;                // the assistant message's text
    std::optional<nlohmann::json> json; // parsed and schema-valid, when the request had a schema
    Usage usage;
    std::string finish_reason;
    bool cache_hit = false;
    int attempts = 0;             // HTTP attempts made for this call (0 on a cache hit)
    std::int64_t latency_micros = 0;
    std::string cache_key;            // the reply cache's key for the request; empty with the cache off
    std::optional<Payment> payment;   // see Payment; absent with the cache off
};

struct EmbeddingRequest {
    Role role = Role::embed;
    std::string model;
    std::vector<std::string> inputs;
};

struct EmbeddingReply {
    std::vector<std::vector<float>> vectors;  // one per input, in input order
    Usage usage;
    bool cache_hit = false;
    int attempts = 0;
    std::int64_t latency_micros = 0;
    std::string cache_key;
    std::optional<Payment> payment;
};

// True when the server refused this one request as sent: an HTTP 4xx other than 401/403 (auth),
// 404 (not_found), 408 and 429, which the clients report as ErrorKind::protocol quoting the status
// ("POST <url>: HTTP 400 after 1 attempt: ..."). A content filter's 400 or a 422 for one prompt is
// that call's own error (its row ends in error and counts in the run's error rate), not a sign that
// the endpoint is down, so the run's fail-fast guard does not count it (run/call_recorder.hpp).
bool request_refused(const Error& error);

class LlmClient {
public:
    virtual ~LlmClient() = default;
    // Errors once retries are exhausted: rate_limited (429), network (5xx, connection), timeout,
    // auth (401/403), not_found (404), protocol (other 4xx, a broken reply), and invalid_output
    // when the reply never satisfied the schema. Messages never contain the API key; the error's
    // `attempts` says how many requests were sent (resends after a connection reset included).
    virtual Result<ChatReply> chat(const ChatRequest& request) = 0;
    virtual Result<EmbeddingReply> embed(const EmbeddingRequest& request) = 0;
    // What identifies the model server for caching: the base URL without credentials or query.
    virtual std::string identity() const = 0;
};

}  // namespace memfail::llm

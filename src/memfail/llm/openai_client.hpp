// SPDX-License-Identifier: MIT
// The OpenAI-compatible HTTP client (OpenAI, vLLM, llama.cpp server, Ollama, tools/fake-llm) over
// libcurl: chat completions with structured output and embeddings, bounded concurrency, rate
// limits, retries with backoff, and errors that never contain the API key.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <memfail/llm/llm_client.hpp>

namespace memfail::llm {

struct ClientOptions {
    std::string base_url = "https://api.openai.com/v1";  // OPENAI_BASE_URL convention (includes /v1)
    std::string api_key;                // secret: never in logs, errors, cache rows
    int concurrency = 8;                // max HTTP requests in flight (all threads together)
    double requests_per_minute = 0;     // 0: unlimited
    double tokens_per_minute = 0;       // 0: unlimited
    double timeout_seconds = 120;       // one HTTP attempt; connect timeout min(10, this)
    int max_retries = 6;                // 429 / 5xx / timeout / connection errors
    int max_schema_retries = 2;         // re-asks when the reply is not valid JSON for the schema
    double backoff_base_seconds = 0.5;
    double backoff_max_seconds = 30;    // also caps Retry-After
    std::string structured_output = "auto";  // auto | json_schema | json_object
    // Usage fallback when the server sends none; unset: bytes / 4.
    std::function<std::int64_t(std::string_view model, std::string_view text)> count_tokens;
};

// Checks `options` (base URL scheme, positive concurrency and timeout, structured_output value)
// and builds the client. Errors are ErrorKind::invalid_input naming the option.
Result<std::unique_ptr<LlmClient>> make_openai_client(ClientOptions options);

// The base URL without credentials, query or fragment, and without a trailing slash, and with
// any path segment holding `api_key` or looking like a credential replaced by "[redacted]"
// (redact_url): what identifies the model server in cache keys and messages
// ("https://user:pw@h/v1/?x" -> "https://h/v1").
std::string url_identity(std::string_view base_url, std::string_view api_key = {});

// Seconds to wait from a Retry-After header value: delta-seconds (fractions accepted) or an
// HTTP-date; nullopt when unparsable. A date in the past gives 0.
std::optional<double> parse_retry_after(std::string_view value);

}  // namespace memfail::llm

// SPDX-License-Identifier: MIT
// One HTTP exchange over a reusable libcurl easy handle, shared by the OpenAI-compatible client and
// the adapter protocol's http: transport: the same headers, timeouts, encodings and error text, and
// the bearer token handled in one place (sent, never kept, wiped afterwards).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <curl/curl.h>

namespace memfail::llm {

struct HttpReply {
    CURLcode code = CURLE_OK;  // transport outcome; CURLE_OK means `status` and `body` are the server's
    std::string curl_error;
    long status = 0;
    std::string body;
    std::optional<std::string> retry_after;  // the Retry-After header's value, when sent
    // How many times the request went out on the wire: libcurl silently sends it again on a fresh
    // connection when a reused one turns out to be dead (reset before any reply byte), so this can
    // exceed 1; 0 when no connection could be made.
    int sends = 0;
};

struct HttpExchange {
    std::string_view method = "POST";  // "POST" (with `body`, as JSON) or "GET"
    const std::string* url = nullptr;
    const std::string* body = nullptr;  // POST only; null sends an empty body
    const std::string* bearer_token = nullptr;  // null or empty: no Authorization header
    double timeout_seconds = 30;
};

// Performs `exchange` on `curl` (null: a failed reply saying libcurl could not start). The handle
// keeps its connection for the next call and holds no pointer into this call afterwards.
HttpReply perform_http(CURL* curl, const HttpExchange& exchange);

// Connection-level failures worth another attempt (refused, reset, timed out, ...).
bool transport_retryable(CURLcode code);

}  // namespace memfail::llm

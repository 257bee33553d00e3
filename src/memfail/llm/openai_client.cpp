// SPDX-License-Identifier: MIT
// OpenAI-compatible client over libcurl. A pool of curl easy handles per client keeps connections
// warm between calls; a semaphore bounds the requests in flight and is held only while a request is on the
// wire, never while backing off, so sleeping retries do not starve other callers.
#include <memfail/llm/openai_client.hpp>

#include <memfail/llm/http_exchange.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <curl/curl.h>

#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/llm/rate_limiter.hpp>
#include <memfail/llm/redact.hpp>
#include <memfail/llm/schema_check.hpp>

namespace memfail::llm {

std::string_view role_name(Role role) {
    switch (role) {
        case Role::answer: return "answer";
        case Role::judge: return "judge";
        case Role::system: return "system";
        case Role::embed: return "embed";
    }
    return "answer";
}

namespace {

// The status failure() quotes right after the URL ("POST <url>: HTTP <status> after ..."), nullopt
// when there is none (a transport failure, a broken reply; the server's own words come later and are
// never read).
std::optional<int> quoted_status(const std::string& message) {
    static constexpr std::string_view k_head = ": HTTP ", k_tail = " after ";
    const std::size_t at = message.find(": ");
    if (at == std::string::npos || message.compare(at, k_head.size(), k_head) != 0) return std::nullopt;
    const std::size_t digits = at + k_head.size();
    if (digits + 3 + k_tail.size() > message.size() || message.compare(digits + 3, k_tail.size(), k_tail) != 0)
        return std::nullopt;
    int status = 0;
    for (std::size_t i = digits; i < digits + 3; ++i) {
        if (!std::isdigit(static_cast<unsigned char>(message[i]))) return std::nullopt;
        status = status * 10 + (message[i] - '0');
    }
    return status;
}

}  // namespace

bool request_refused(const Error& error) {
    if (error.kind != ErrorKind::protocol) return false;
    const auto status = quoted_status(error.message);
    return status && *status >= 400 && *status < 500;
}

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t k_max_server_text = 400;     // server text quoted in an error
constexpr std::size_t k_max_reask_echo = 4000;     // bad reply echoed back when asking again

std::once_flag g_curl_once;

// Idle curl easy handles of one client. A handle keeps its connections open between requests
// (curl_easy_reset leaves the connection cache alone), so reusing the most recently returned one
// reuses a warm keep-alive connection; at most `concurrency` handles exist because a handle is
// only taken while holding a concurrency permit. The client's destructor closes them all, so no
// connection outlives the client.
class CurlPool {
public:
    CurlPool() {
        std::call_once(g_curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    }
    CurlPool(const CurlPool&) = delete;
    CurlPool& operator=(const CurlPool&) = delete;
    ~CurlPool() {
        for (CURL* curl : m_idle) curl_easy_cleanup(curl);
    }
    // Null only when libcurl cannot allocate a handle.
    CURL* take() {
        CURL* curl = nullptr;
        {
            std::lock_guard lock(m_mutex);
            if (!m_idle.empty()) {
                curl = m_idle.back();
                m_idle.pop_back();
            }
        }
        if (!curl) return curl_easy_init();
        curl_easy_reset(curl);
        return curl;
    }
    void give(CURL* curl) {
        std::lock_guard lock(m_mutex);
        m_idle.push_back(curl);
    }

private:
    std::mutex m_mutex;
    std::vector<CURL*> m_idle;
};

// A counting semaphore whose size is known only at run time.
class Semaphore {
public:
    explicit Semaphore(int permits) : m_permits(permits) {}
    void acquire() {
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [&] { return m_permits > 0; });
        --m_permits;
    }
    void release() {
        {
            std::lock_guard lock(m_mutex);
            ++m_permits;
        }
        m_cv.notify_one();
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    int m_permits;
};

// The message an OpenAI-shaped error body carries, else the body itself, shortened.
std::string server_text(const std::string& body) {
    std::string text;
    const json parsed = json::parse(body, nullptr, false);
    if (!parsed.is_discarded() && parsed.is_object() && parsed.contains("error")) {
        const json& error = parsed["error"];
        if (error.is_object() && error.contains("message") && error["message"].is_string())
            text = error["message"].get<std::string>();
        else if (error.is_string())
            text = error.get<std::string>();
    }
    if (text.empty()) text = body;
    std::string flat;
    for (char c : text) flat += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    flat = std::string(text::trim(flat));
    if (flat.size() > k_max_server_text) flat = flat.substr(0, k_max_server_text) + "...";
    return flat.empty() ? "(empty body)" : flat;
}

// Models asked for bare JSON sometimes wrap it in a Markdown code fence anyway.
std::string_view strip_code_fence(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return text;
    text.remove_prefix(first);
    if (text.substr(0, 3) != "```") return text;
    const auto newline = text.find('\n');
    const auto close = text.rfind("```");
    if (newline == std::string_view::npos || close <= newline) return text;
    return text.substr(newline + 1, close - newline - 1);
}

std::string attempts_text(int attempts) {
    return std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts");
}

// `error` as the outcome of a call that sent `attempts` requests (accounted in llm_calls).
Error sent(Error error, int attempts) {
    error.attempts = attempts;
    return error;
}

std::int64_t bytes_estimate(std::string_view text) {
    return static_cast<std::int64_t>((text.size() + 3) / 4);
}

class OpenAiClient final : public LlmClient {
public:
    explicit OpenAiClient(ClientOptions options)
        : m_options(std::move(options)),
          m_identity(url_identity(m_options.base_url, m_options.api_key)),
          m_permits(m_options.concurrency),
          m_requests(m_options.requests_per_minute),
          m_tokens(m_options.tokens_per_minute),
          m_json_object_mode(m_options.structured_output == "json_object"),
          m_seed(static_cast<std::uint64_t>(Clock::now().time_since_epoch().count())) {}

    Result<ChatReply> chat(const ChatRequest& request) override;
    Result<EmbeddingReply> embed(const EmbeddingRequest& request) override;
    std::string identity() const override { return m_identity; }

private:
    // The URL requests go to: the base URL as given (a query such as Azure's api-version stays
    // at the end) with the endpoint appended to its path.
    std::string endpoint_url(std::string_view endpoint) const {
        std::string base = m_options.base_url;
        std::string query;
        if (auto cut = base.find('?'); cut != std::string::npos) {
            query = base.substr(cut);
            base.erase(cut);
        }
        while (!base.empty() && base.back() == '/') base.pop_back();
        return base + "/" + std::string(endpoint) + query;
    }
    std::string display_url(std::string_view endpoint) const { return m_identity + "/" + std::string(endpoint); }

    std::int64_t count(std::string_view model, std::string_view text) const {
        return m_options.count_tokens ? m_options.count_tokens(model, text) : bytes_estimate(text);
    }

    // Waits for the rate limits, then sends one request holding a concurrency permit.
    HttpReply send(const std::string& url, const std::string& payload, double token_estimate) {
        m_requests.acquire(1);
        m_tokens.acquire(token_estimate);
        m_permits.acquire();
        CURL* curl = m_curl.take();
        HttpReply result = perform_http(curl, {"POST", &url, &payload, &m_options.api_key, m_options.timeout_seconds});
        if (curl) m_curl.give(curl);
        m_permits.release();
        return result;
    }

    // Seconds to sleep before retry number `retry` (1-based): Retry-After when the server gave
    // one, else full jitter over an exponentially growing window; both capped.
    double backoff_seconds(int retry, const HttpReply& http, Rng& rng) const {
        if (http.retry_after) {
            if (auto seconds = parse_retry_after(*http.retry_after))
                return std::min(*seconds, m_options.backoff_max_seconds);
        }
        const double window = std::min(m_options.backoff_max_seconds,
                                       m_options.backoff_base_seconds * std::pow(2.0, retry - 1));
        return rng.unit() * std::max(0.0, window);
    }

    // Errors may echo the URL (a server's 404 names the path): its secret parts go too.
    std::string redacted(std::string_view text) const {
        return redact_with_url(text, m_options.base_url, m_options.api_key);
    }

    // The error for a failed exchange that will not be retried: transport failures and HTTP
    // statuses mapped to ErrorKinds, with the server's own words, redacted. The "HTTP <status> after"
    // words are what request_refused() reads: keep them.
    Error failure(const std::string& shown_url, const HttpReply& http, int attempts) const {
        const std::string head = "POST " + shown_url + ": ";
        if (http.code != CURLE_OK) {
            const ErrorKind kind = http.code == CURLE_OPERATION_TIMEDOUT ? ErrorKind::timeout : ErrorKind::network;
            std::string problem = http.curl_error;
            if (http.code == CURLE_OPERATION_TIMEDOUT) {
                char limit[32];
                std::snprintf(limit, sizeof limit, "%g", m_options.timeout_seconds);
                problem = std::string("no answer within ") + limit + " s (" + http.curl_error + ")";
            }
            Error error = make_error(kind, redacted(head + problem + " after " + attempts_text(attempts)));
            error.attempts = attempts;
            return error;
        }
        ErrorKind kind = ErrorKind::protocol;
        if (http.status == 429) kind = ErrorKind::rate_limited;
        else if (http.status == 401 || http.status == 403) kind = ErrorKind::auth;
        else if (http.status == 404) kind = ErrorKind::not_found;
        else if (http.status >= 500 || http.status == 408) kind = ErrorKind::network;
        std::string message = head + "HTTP " + std::to_string(http.status) + " after " + attempts_text(attempts) +
                              ": " + server_text(http.body);
        if (kind == ErrorKind::auth) message += " (check the API key and its environment variable)";
        Error error = make_error(kind, redacted(message));
        error.attempts = attempts;
        return error;
    }

    static bool status_retryable(long status) { return status == 429 || status == 408 || status >= 500; }

    json chat_body(const ChatRequest& request, bool json_object, const std::vector<ChatMessage>& extra) const;

    ClientOptions m_options;
    std::string m_identity;
    Semaphore m_permits;
    CurlPool m_curl;
    RateLimiter m_requests;
    RateLimiter m_tokens;
    // Set once a server rejected json_schema: later calls go straight to json_object.
    std::atomic<bool> m_json_object_mode;
    std::atomic<std::uint64_t> m_seed;
};

json OpenAiClient::chat_body(const ChatRequest& request, bool json_object,
                             const std::vector<ChatMessage>& extra) const {
    json messages = json::array();
    for (const auto& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    for (const auto& m : extra) messages.push_back({{"role", m.role}, {"content", m.content}});
    json body = {{"model", request.model}};
    if (request.temperature) body["temperature"] = *request.temperature;
    if (request.seed) body["seed"] = *request.seed;
    if (request.max_tokens) body["max_tokens"] = *request.max_tokens;
    if (request.schema) {
        if (json_object) {
            // The schema travels in the prompt instead; "schema name:" lets scripted servers
            // recognise the prompt exactly as they would from response_format.
            const std::string instruction =
                "Reply with one JSON object and nothing else. It must satisfy this JSON schema:\n" +
                request.schema->schema.dump() + "\nschema name: " + request.schema->name;
            bool placed = false;
            for (auto& m : messages) {
                if (m["role"] == "system") {
                    m["content"] = m["content"].get<std::string>() + "\n\n" + instruction;
                    placed = true;
                    break;
                }
            }
            if (!placed) messages.insert(messages.begin(), json{{"role", "system"}, {"content", instruction}});
            body["response_format"] = {{"type", "json_object"}};
        } else {
            body["response_format"] = {
                {"type", "json_schema"},
                {"json_schema", {{"name", request.schema->name}, {"schema", request.schema->schema}, {"strict", true}}}};
        }
    }
    body["messages"] = std::move(messages);
    return body;
}

Result<ChatReply> OpenAiClient::chat(const ChatRequest& request) {
    const auto started = Clock::now();
    const std::string url = endpoint_url("chat/completions");
    const std::string shown_url = display_url("chat/completions");
    Rng rng(m_seed.fetch_add(0x9E3779B97F4A7C15ULL));
    ChatReply reply;
    std::vector<ChatMessage> reask;  // the bad reply and a correction, when asking again
    int attempts = 0;
    int transient_retries = 0;
    int schema_retries = 0;
    bool falling_back = false;  // this call switched to json_object after a rejection
    while (true) {
        const bool json_object = request.schema && (falling_back || m_json_object_mode.load());
        const json body = chat_body(request, json_object, reask);
        double token_estimate = 0;
        if (!m_tokens.unlimited()) {
            for (const auto& m : body["messages"]) token_estimate += count(request.model, m["content"].get<std::string>());
            if (request.max_tokens) token_estimate += *request.max_tokens;
        }
        const HttpReply http = send(url, body.dump(), token_estimate);
        attempts += std::max(1, http.sends);  // a resend after a reset is an attempt too

        const bool transport_ok = http.code == CURLE_OK;
        if (!transport_ok || http.status < 200 || http.status >= 300) {
            // A server without json_schema support rejects the request itself: fall back once.
            if (transport_ok && request.schema && !json_object && m_options.structured_output == "auto" &&
                (http.status == 400 || http.status == 422)) {
                falling_back = true;
                continue;
            }
            const bool retryable = transport_ok ? status_retryable(http.status) : transport_retryable(http.code);
            if (!retryable || transient_retries >= m_options.max_retries) return failure(shown_url, http, attempts);
            ++transient_retries;
            std::this_thread::sleep_for(std::chrono::duration<double>(backoff_seconds(transient_retries, http, rng)));
            continue;
        }

        const json envelope = json::parse(http.body, nullptr, false);
        const json* message = nullptr;
        if (!envelope.is_discarded() && envelope.is_object() && envelope.contains("choices") &&
            envelope["choices"].is_array() && !envelope["choices"].empty() && envelope["choices"][0].is_object() &&
            envelope["choices"][0].contains("message") && envelope["choices"][0]["message"].is_object())
            message = &envelope["choices"][0]["message"];
        if (!message) {
            // A broken envelope is the server's fault, like a 5xx: worth another try.
            if (transient_retries >= m_options.max_retries)
                return sent(make_error(ErrorKind::protocol,
                                       redacted("POST " + shown_url + ": the reply is not a chat completion after " +
                                                attempts_text(attempts) + ": " + server_text(http.body))),
                            attempts);
            ++transient_retries;
            std::this_thread::sleep_for(std::chrono::duration<double>(backoff_seconds(transient_retries, http, rng)));
            continue;
        }
        // json_object worked where json_schema was rejected: later calls go straight to it. (A 400
        // for another reason, such as an unknown model, does not switch the mode for good.)
        if (falling_back) m_json_object_mode.store(true);
        std::string content;
        if (message->contains("content") && (*message)["content"].is_string())
            content = (*message)["content"].get<std::string>();
        std::string finish_reason;
        if (envelope["choices"][0].contains("finish_reason") && envelope["choices"][0]["finish_reason"].is_string())
            finish_reason = envelope["choices"][0]["finish_reason"].get<std::string>();

        // Every answered request costs tokens, re-asks included.
        const json* usage = envelope.contains("usage") && envelope["usage"].is_object() ? &envelope["usage"] : nullptr;
        if (usage && usage->contains("prompt_tokens") && (*usage)["prompt_tokens"].is_number_integer()) {
            reply.usage.prompt_tokens += (*usage)["prompt_tokens"].get<std::int64_t>();
            if (usage->contains("completion_tokens") && (*usage)["completion_tokens"].is_number_integer())
                reply.usage.completion_tokens += (*usage)["completion_tokens"].get<std::int64_t>();
        } else {
            for (const auto& m : body["messages"]) reply.usage.prompt_tokens += count(request.model, m["content"].get<std::string>());
            reply.usage.completion_tokens += count(request.model, content);
            reply.usage.counted_locally = true;
        }

        if (request.schema) {
            std::optional<std::string> problem;
            json parsed = json::parse(strip_code_fence(content), nullptr, false);
            if (parsed.is_discarded()) {
                problem = "reply is not JSON";
                if (message->contains("refusal") && (*message)["refusal"].is_string())
                    problem = "the model refused: " + (*message)["refusal"].get<std::string>();
            } else {
                problem = validate(parsed, request.schema->schema);
            }
            if (problem) {
                if (schema_retries >= m_options.max_schema_retries) {
                    std::string shown = content.size() > 200 ? content.substr(0, 200) + "..." : content;
                    return sent(make_error(ErrorKind::invalid_output,
                                           redacted("POST " + shown_url + ": the reply never satisfied schema " +
                                                    request.schema->name + " after " + attempts_text(attempts) +
                                                    ": " + *problem + " (last reply: " + shown + ")")),
                                attempts);
                }
                ++schema_retries;
                // Ask again, showing the model what was wrong; the original messages stay first.
                reask = {{"assistant", content.size() > k_max_reask_echo ? content.substr(0, k_max_reask_echo) : content},
                         {"user", "That reply was not valid: " + *problem +
                                      ". Answer again with only a JSON object that satisfies the schema."}};
                continue;
            }
            reply.json = std::move(parsed);
        }
        reply.content = std::move(content);
        reply.finish_reason = std::move(finish_reason);
        reply.attempts = attempts;
        reply.latency_micros =
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count();
        return reply;
    }
}

Result<EmbeddingReply> OpenAiClient::embed(const EmbeddingRequest& request) {
    const auto started = Clock::now();
    const std::string url = endpoint_url("embeddings");
    const std::string shown_url = display_url("embeddings");
    Rng rng(m_seed.fetch_add(0x9E3779B97F4A7C15ULL));
    EmbeddingReply reply;
    if (request.inputs.empty()) return reply;
    const json body = {{"model", request.model}, {"input", request.inputs}};
    const std::string payload = body.dump();
    double token_estimate = 0;
    if (!m_tokens.unlimited())
        for (const auto& input : request.inputs) token_estimate += count(request.model, input);
    int attempts = 0;
    int transient_retries = 0;
    while (true) {
        const HttpReply http = send(url, payload, token_estimate);
        attempts += std::max(1, http.sends);  // a resend after a reset is an attempt too
        const bool transport_ok = http.code == CURLE_OK;
        if (!transport_ok || http.status < 200 || http.status >= 300) {
            const bool retryable = transport_ok ? status_retryable(http.status) : transport_retryable(http.code);
            if (!retryable || transient_retries >= m_options.max_retries) return failure(shown_url, http, attempts);
            ++transient_retries;
            std::this_thread::sleep_for(std::chrono::duration<double>(backoff_seconds(transient_retries, http, rng)));
            continue;
        }
        const json envelope = json::parse(http.body, nullptr, false);
        std::vector<std::vector<float>> vectors(request.inputs.size());
        std::string problem;
        if (envelope.is_discarded() || !envelope.is_object() || !envelope.contains("data") || !envelope["data"].is_array()) {
            problem = "the reply has no data array";
        } else {
            std::vector<bool> seen(request.inputs.size(), false);
            std::size_t position = 0;
            for (const auto& item : envelope["data"]) {
                std::size_t index = position++;
                if (item.is_object() && item.contains("index") && item["index"].is_number_unsigned())
                    index = item["index"].get<std::size_t>();
                if (index >= vectors.size() || seen[index] || !item.is_object() || !item.contains("embedding") ||
                    !item["embedding"].is_array()) {
                    problem = "data[" + std::to_string(position - 1) + "] is not an embedding for one of the inputs";
                    break;
                }
                seen[index] = true;
                auto& v = vectors[index];
                v.reserve(item["embedding"].size());
                for (const auto& x : item["embedding"]) {
                    if (!x.is_number()) {
                        problem = "data[" + std::to_string(position - 1) + "].embedding holds a non-number";
                        break;
                    }
                    v.push_back(x.get<float>());
                }
                if (!problem.empty()) break;
            }
            if (problem.empty() && std::find(seen.begin(), seen.end(), false) != seen.end())
                problem = "the reply has fewer embeddings than the " + std::to_string(request.inputs.size()) + " inputs";
        }
        if (!problem.empty()) {
            return sent(make_error(ErrorKind::protocol, redacted("POST " + shown_url + ": " + problem + " after " +
                                                                 attempts_text(attempts))),
                        attempts);
        }
        const json* usage = envelope.contains("usage") && envelope["usage"].is_object() ? &envelope["usage"] : nullptr;
        if (usage && usage->contains("prompt_tokens") && (*usage)["prompt_tokens"].is_number_integer()) {
            reply.usage.prompt_tokens = (*usage)["prompt_tokens"].get<std::int64_t>();
        } else {
            for (const auto& input : request.inputs) reply.usage.prompt_tokens += count(request.model, input);
            reply.usage.counted_locally = true;
        }
        reply.vectors = std::move(vectors);
        reply.attempts = attempts;
        reply.latency_micros =
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count();
        return reply;
    }
}

}  // namespace

std::string url_identity(std::string_view base_url, std::string_view api_key) {
    std::string url(base_url);
    if (auto cut = url.find_first_of("?#"); cut != std::string::npos) url.erase(cut);
    const auto scheme_end = url.find("://");
    const std::size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
    const auto path_start = url.find('/', host_start);
    const auto at = url.rfind('@', path_start == std::string::npos ? std::string::npos : path_start);
    if (at != std::string::npos && at >= host_start) url.erase(host_start, at + 1 - host_start);
    url = redact_url(url, api_key);  // a key or a key-like segment in the path
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url;
}

std::optional<double> parse_retry_after(std::string_view value) {
    const std::string text(text::trim(value));
    if (text.empty()) return std::nullopt;
    if (std::isdigit(static_cast<unsigned char>(text[0]))) {
        char* end = nullptr;
        const double seconds = std::strtod(text.c_str(), &end);
        if (end && *end == '\0' && std::isfinite(seconds) && seconds >= 0) return seconds;
        return std::nullopt;
    }
    const time_t when = curl_getdate(text.c_str(), nullptr);
    if (when < 0) return std::nullopt;
    return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

Result<std::unique_ptr<LlmClient>> make_openai_client(ClientOptions options) {
    auto bad = [](std::string message) { return make_error(ErrorKind::invalid_input, std::move(message)); };
    if (options.base_url.rfind("http://", 0) != 0 && options.base_url.rfind("https://", 0) != 0)
        return bad("base URL must start with http:// or https://, got \"" + redact_url(options.base_url, options.api_key) + "\"");
    if (options.concurrency < 1) return bad("concurrency must be at least 1");
    if (!(options.timeout_seconds > 0)) return bad("timeout must be positive");
    if (options.max_retries < 0 || options.max_schema_retries < 0) return bad("retry counts cannot be negative");
    if (options.backoff_base_seconds < 0 || options.backoff_max_seconds < 0) return bad("backoff cannot be negative");
    if (options.requests_per_minute < 0 || options.tokens_per_minute < 0) return bad("rate limits cannot be negative");
    if (options.structured_output != "auto" && options.structured_output != "json_schema" &&
        options.structured_output != "json_object")
        return bad("structured output must be auto, json_schema or json_object, got \"" + options.structured_output + "\"");
    return std::unique_ptr<LlmClient>(std::make_unique<OpenAiClient>(std::move(options)));
}

}  // namespace memfail::llm

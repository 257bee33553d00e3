// SPDX-License-Identifier: MIT
// The `http:` transport (docs/ADAPTERS.md): each operation as POST <url>/v1/<op> over libcurl, or,
// with preset=mem0 / preset=graphiti, mapped onto those projects' own REST servers. Retries and
// backoff follow the LLM client; the bearer token never reaches a message.
#include <memfail/memory/adapter/adapter_system.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <curl/curl.h>

#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/llm/http_exchange.hpp>
#include <memfail/llm/openai_client.hpp>
#include <memfail/llm/redact.hpp>

namespace memfail::memory::adapter {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr double k_backoff_base_seconds = 0.5;
constexpr double k_backoff_max_seconds = 30;  // also caps Retry-After
constexpr std::size_t k_max_quoted = 300;     // server text quoted in an error

std::once_flag g_curl_once;

enum class Preset { protocol, mem0, graphiti };

struct HttpSettings {
    std::string base_url;  // without a trailing slash
    std::string shown_url;  // base_url without credentials: what messages show
    std::string token;      // secret
    std::string token_env;
    double timeout_seconds = 30;
    int retries = 2;
    Preset preset = Preset::protocol;
    std::string user = "memfail";  // Mem0 user_id / Graphiti group_id
};

// One exchange's outcome and how many attempts it took.
struct HttpReply : llm::HttpReply {
    int attempts = 0;
};

// An error object the server chose to send ({"error": ...} from an adapter, {"detail": ...} from
// FastAPI): a deliberate answer, never retried, unlike a proxy's or a crashed server's 5xx.
bool structured_error(const std::string& body) {
    const json parsed = json::parse(body, nullptr, false);
    return !parsed.is_discarded() && parsed.is_object() && (parsed.contains("error") || parsed.contains("detail"));
}

bool retryable(const HttpReply& reply) {
    if (reply.code != CURLE_OK) return llm::transport_retryable(reply.code);
    switch (reply.status) {
        case 408:
        case 429:
        case 502:
        case 503:
        case 504: return true;
        case 500: return !structured_error(reply.body);
        default: return false;
    }
}

std::string one_line(std::string_view text) {
    std::string flat;
    for (char c : text) flat += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    flat = std::string(text::trim(flat));
    if (flat.size() > k_max_quoted) flat = flat.substr(0, k_max_quoted) + "...";
    return flat.empty() ? "(empty body)" : flat;
}

// What the server said: an error's message or FastAPI's detail when present, else the body.
std::string server_text(const std::string& body) {
    const json parsed = json::parse(body, nullptr, false);
    if (!parsed.is_discarded() && parsed.is_object()) {
        if (parsed.contains("error") && parsed["error"].is_object() && parsed["error"].contains("message") &&
            parsed["error"]["message"].is_string())
            return one_line(parsed["error"]["message"].get<std::string>());
        if (parsed.contains("detail"))
            return one_line(parsed["detail"].is_string() ? parsed["detail"].get<std::string>() : parsed["detail"].dump());
    }
    return one_line(body);
}

std::string attempts_text(int attempts) {
    return std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts");
}

// Optional string field; null and missing read as empty.
std::string string_field(const json& object, const char* key) {
    if (!object.contains(key) || !object[key].is_string()) return {};
    return object[key].get<std::string>();
}

// The memories of a Mem0 reply ({"results": [...]} since its v1.1 format, a bare array before),
// as protocol Memory objects: id <- id, text <- memory, created_at, updated_at, score.
Result<json> mem0_memories(const json& body, const std::string& where, std::optional<int> limit) {
    const json* list = nullptr;
    if (body.is_array()) list = &body;
    else if (body.is_object() && body.contains("results") && body["results"].is_array()) list = &body["results"];
    if (!list) return make_error(ErrorKind::protocol, "the reply has no \"results\" array: " + one_line(body.dump()), where);
    json memories = json::array();
    for (std::size_t i = 0; i < list->size(); ++i) {
        if (limit && static_cast<int>(memories.size()) >= *limit) break;
        const json& item = (*list)[i];
        const std::string at = "results[" + std::to_string(i) + "]";
        if (!item.is_object() || !item.contains("id") || !item["id"].is_string() || !item.contains("memory") ||
            !item["memory"].is_string())
            return make_error(ErrorKind::protocol, at + " is not a memory with string \"id\" and \"memory\"", where);
        json memory = {{"id", item["id"]}, {"text", item["memory"]}};
        if (auto created = string_field(item, "created_at"); !created.empty()) memory["created_at"] = created;
        if (auto updated = string_field(item, "updated_at"); !updated.empty()) memory["updated_at"] = updated;
        if (item.contains("score") && item["score"].is_number()) memory["score"] = item["score"];
        memories.push_back(std::move(memory));
    }
    return json{{"memories", std::move(memories)}};
}

// Mem0's history rows ({memory_id, old_memory, new_memory, event: ADD|UPDATE|DELETE, created_at,
// updated_at}) as protocol Events. Rows with other events (Mem0's NONE) say nothing changed.
Result<json> mem0_events(const json& body, const std::string& where) {
    const json* list = nullptr;
    if (body.is_array()) list = &body;
    else if (body.is_object() && body.contains("results") && body["results"].is_array()) list = &body["results"];
    if (!list) return make_error(ErrorKind::protocol, "the history reply is not an array: " + one_line(body.dump()), where);
    json events = json::array();
    for (std::size_t i = 0; i < list->size(); ++i) {
        const json& row = (*list)[i];
        const std::string event = row.is_object() ? text::to_lower(string_field(row, "event")) : "";
        if (!row.is_object() || string_field(row, "memory_id").empty())
            return make_error(ErrorKind::protocol, "[" + std::to_string(i) + "] is not a history row with a \"memory_id\"", where);
        if (event != "add" && event != "update" && event != "delete") continue;
        std::string at = string_field(row, "updated_at");
        if (at.empty()) at = string_field(row, "created_at");
        events.push_back({{"memory_id", row["memory_id"]},
                          {"event", event},
                          {"old_text", string_field(row, "old_memory")},
                          {"new_text", string_field(row, "new_memory")},
                          {"at", at}});
    }
    return json{{"events", std::move(events)}};
}

// Graphiti's facts ({"facts": [{uuid, name, fact, valid_at, invalid_at, created_at, expired_at}]})
// as protocol Memory objects: id <- uuid, text <- fact, created_at <- created_at, valid_at <- valid_at.
Result<json> graphiti_memories(const json& body, const std::string& where, int limit) {
    if (!body.is_object() || !body.contains("facts") || !body["facts"].is_array())
        return make_error(ErrorKind::protocol, "the reply has no \"facts\" array: " + one_line(body.dump()), where);
    json memories = json::array();
    const json& facts = body["facts"];
    for (std::size_t i = 0; i < facts.size() && static_cast<int>(memories.size()) < limit; ++i) {
        const json& fact = facts[i];
        if (!fact.is_object() || string_field(fact, "uuid").empty() || !fact.contains("fact") || !fact["fact"].is_string())
            return make_error(ErrorKind::protocol,
                              "facts[" + std::to_string(i) + "] is not a fact with string \"uuid\" and \"fact\"", where);
        json memory = {{"id", fact["uuid"]}, {"text", fact["fact"]}};
        if (auto created = string_field(fact, "created_at"); !created.empty()) memory["created_at"] = created;
        if (auto valid = string_field(fact, "valid_at"); !valid.empty()) memory["valid_at"] = valid;
        memories.push_back(std::move(memory));
    }
    return json{{"memories", std::move(memories)}};
}

struct RetrieveParams {
    std::string query;
    int k = 0;
};

Result<RetrieveParams> retrieve_params(const json& params) {
    if (!params.is_object() || !params.contains("query") || !params["query"].is_string())
        return make_error(ErrorKind::invalid_input, "retrieve_memories needs a string \"query\"", "query");
    if (!params.contains("k") || !params["k"].is_number_integer() || params["k"].get<std::int64_t>() < 0)
        return make_error(ErrorKind::invalid_input, "retrieve_memories needs a whole number \"k\" of at least 0", "k");
    return RetrieveParams{params["query"].get<std::string>(),
                          static_cast<int>(std::min<std::int64_t>(params["k"].get<std::int64_t>(), 1 << 20))};
}

Result<data::Session> session_param(const json& params) {
    if (!params.is_object() || !params.contains("session"))
        return make_error(ErrorKind::invalid_input, "store_conversation needs a \"session\" object", "session");
    return session_from_json(params["session"], ErrorKind::invalid_input, "session");
}

class HttpTransport final : public Transport {
public:
    explicit HttpTransport(HttpSettings settings)
        : m_settings(std::move(settings)),
          m_rng(static_cast<std::uint64_t>(Clock::now().time_since_epoch().count())) {
        std::call_once(g_curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    }
    HttpTransport(const HttpTransport&) = delete;
    HttpTransport& operator=(const HttpTransport&) = delete;
    ~HttpTransport() override {
        if (m_curl) curl_easy_cleanup(m_curl);
        std::fill(m_settings.token.begin(), m_settings.token.end(), '\0');
    }

    Result<json> call(std::string_view op, const json& params) override {
        switch (m_settings.preset) {
            case Preset::protocol: return call_protocol(op, params);
            case Preset::mem0: return call_mem0(op, params);
            case Preset::graphiti: return call_graphiti(op, params);
        }
        return make_error(ErrorKind::internal, "unknown preset");
    }

    std::string describe() const override { return m_settings.shown_url; }

private:
    // --- preset=protocol ---------------------------------------------------------------------------
    Result<json> call_protocol(std::string_view op, const json& params) {
        const std::string path = "/v1/" + std::string(op);
        const HttpReply reply = exchange("POST", path, params.dump(-1, ' ', false, json::error_handler_t::replace));
        const std::string head = "POST " + m_settings.shown_url + path;
        if (reply.code != CURLE_OK || reply.status == 401 || reply.status == 403) return failure(head, reply);
        // Text that is not UTF-8 in a reply is a protocol error naming the field (as over exec:),
        // and final: the server chose to send it.
        const ReplyJson parsed = ReplyJson::parse(reply.body);
        const json& body = parsed.value;
        if (reply.status >= 200 && reply.status < 300) {
            if (body.is_discarded() || !body.is_object())
                return bad("HTTP " + std::to_string(reply.status) + " with a body that is not a JSON object: " +
                               one_line(reply.body),
                           head);
            if (auto invalid = parsed.invalid_utf8(body, head)) return *invalid;
            return body;
        }
        if (!body.is_discarded() && body.is_object() && body.contains("error")) {
            if (auto invalid = parsed.invalid_utf8(body["error"], head, "error")) return *invalid;
            Error error = error_from_json(body, head);
            error.message = llm::redact(error.message, m_settings.token);
            return error;
        }
        return failure(head, reply);
    }

    // --- preset=mem0 -------------------------------------------------------------------------------
    Result<json> call_mem0(std::string_view op, const json& params) {
        if (op == "hello") {
            Capabilities caps;
            caps.history = true;
            return hello("mem0", caps);
        }
        if (op == "store_conversation") {
            MF_TRY_ASSIGN(const data::Session session, session_param(params));
            if (session.messages.empty()) return json::object();  // Mem0 refuses an empty list
            json messages = json::array();
            json ids = json::array();
            for (const auto& m : session.messages) {
                messages.push_back({{"role", m.role}, {"content", m.content}});
                ids.push_back(m.id);
            }
            const json body = {{"messages", std::move(messages)},
                               {"user_id", m_settings.user},
                               {"metadata", {{"session_id", session.id}, {"timestamp", session.timestamp}, {"message_ids", std::move(ids)}}}};
            MF_TRY(send_json("POST", "/memories", body));
            return json::object();
        }
        if (op == "retrieve_memories") {
            MF_TRY_ASSIGN(const RetrieveParams request, retrieve_params(params));
            const json body = {{"query", request.query}, {"user_id", m_settings.user}, {"limit", request.k}};
            MF_TRY_ASSIGN(const json reply, send_json("POST", "/search", body));
            return mem0_memories(reply, "POST " + m_settings.shown_url + "/search", request.k);
        }
        if (op == "all_memories") {
            const std::string path = "/memories?user_id=" + escape(m_settings.user);
            MF_TRY_ASSIGN(const json reply, send_json("GET", path, std::nullopt));
            return mem0_memories(reply, "GET " + m_settings.shown_url + path, std::nullopt);
        }
        if (op == "reset") {
            MF_TRY(send_json("POST", "/reset", std::nullopt));
            return json::object();
        }
        if (op == "history") {
            if (!params.is_object() || !params.contains("memory_id") || !params["memory_id"].is_string())
                return make_error(ErrorKind::invalid_input, "history needs a string \"memory_id\"", "memory_id");
            const std::string path = "/memories/" + escape(params["memory_id"].get<std::string>()) + "/history";
            MF_TRY_ASSIGN(const json reply, send_json("GET", path, std::nullopt));
            return mem0_events(reply, "GET " + m_settings.shown_url + path);
        }
        return unsupported(op, "Mem0's REST server");
    }

    // --- preset=graphiti ---------------------------------------------------------------------------
    Result<json> call_graphiti(std::string_view op, const json& params) {
        if (op == "hello") return hello("graphiti", Capabilities{});
        if (op == "store_conversation") {
            MF_TRY_ASSIGN(const data::Session session, session_param(params));
            if (session.messages.empty()) return json::object();
            json messages = json::array();
            for (const auto& m : session.messages) {
                const bool known = m.role == "user" || m.role == "assistant" || m.role == "system";
                // No "uuid": Graphiti reads a given uuid as an existing episode to load, so the
                // message id travels as the episode's name instead.
                json message = {{"content", m.content},
                                {"role_type", known ? m.role : std::string("user")},
                                {"role", m.role},
                                {"name", m.id},
                                {"source_description", "memfail session " + session.id}};
                if (!session.timestamp.empty()) message["timestamp"] = session.timestamp;
                messages.push_back(std::move(message));
            }
            MF_TRY(send_json("POST", "/messages", json{{"group_id", m_settings.user}, {"messages", std::move(messages)}}));
            return json::object();
        }
        if (op == "retrieve_memories") {
            MF_TRY_ASSIGN(const RetrieveParams request, retrieve_params(params));
            if (request.k == 0) return json{{"memories", json::array()}};
            // group_ids is what current servers read, group_id what older ones required; each
            // ignores the other.
            const json body = {{"group_ids", json::array({m_settings.user})},
                               {"group_id", m_settings.user},
                               {"query", request.query},
                               {"max_facts", request.k}};
            MF_TRY_ASSIGN(const json reply, send_json("POST", "/search", body));
            return graphiti_memories(reply, "POST " + m_settings.shown_url + "/search", request.k);
        }
        if (op == "reset") {
            MF_TRY(send_json("POST", "/clear", std::nullopt));
            return json::object();
        }
        if (op == "all_memories")
            return make_error(ErrorKind::unsupported,
                              "Graphiti's server has no endpoint that lists every fact, so all_memories is unsupported "
                              "with preset=graphiti",
                              m_settings.shown_url);
        return unsupported(op, "Graphiti's server");
    }

    json hello(const char* system, const Capabilities& caps) const {
        json capabilities = to_json(caps);
        capabilities["provenance_op"] = false;
        return json{{"protocol", k_protocol_version}, {"system", system}, {"capabilities", std::move(capabilities)}};
    }

    Error unsupported(std::string_view op, const char* server) const {
        return make_error(ErrorKind::unsupported,
                          "operation '" + std::string(op) + "' is not supported through " + server, m_settings.shown_url);
    }

    // One preset request: the JSON body of a 2xx reply (an empty body reads as {}), else an error.
    Result<json> send_json(const char* method, const std::string& path, const std::optional<json>& body) {
        const std::string head = std::string(method) + " " + m_settings.shown_url + path;
        const HttpReply reply =
            exchange(method, path, body ? std::optional<std::string>(body->dump(-1, ' ', false, json::error_handler_t::replace))
                                        : std::nullopt);
        if (reply.code != CURLE_OK || reply.status < 200 || reply.status >= 300) return failure(head, reply);
        if (text::trim(reply.body).empty()) return json::object();
        ReplyJson parsed = ReplyJson::parse(reply.body);
        if (parsed.value.is_discarded())
            return bad("HTTP " + std::to_string(reply.status) + " with a body that is not JSON: " + one_line(reply.body), head);
        if (auto invalid = parsed.invalid_utf8(parsed.value, head)) return *invalid;
        return std::move(parsed.value);
    }

    Error bad(const std::string& message, const std::string& where) const {
        return make_error(ErrorKind::protocol, llm::redact(message, m_settings.token), where);
    }

    // The error for an exchange that ended without a usable answer.
    Error failure(const std::string& head, const HttpReply& reply) const {
        std::string message;
        ErrorKind kind = ErrorKind::protocol;
        if (reply.code != CURLE_OK) {
            kind = reply.code == CURLE_OPERATION_TIMEDOUT ? ErrorKind::timeout : ErrorKind::network;
            message = reply.curl_error;
            if (reply.code == CURLE_OPERATION_TIMEDOUT) {
                char limit[32];
                std::snprintf(limit, sizeof limit, "%g", m_settings.timeout_seconds);
                message = std::string("no answer within ") + limit + " s (" + reply.curl_error + ")";
            }
            message += " after " + attempts_text(reply.attempts);
        } else {
            if (reply.status == 401 || reply.status == 403) kind = ErrorKind::auth;
            else if (reply.status == 404) kind = ErrorKind::not_found;
            else if (reply.status == 413 || reply.status == 400) kind = ErrorKind::invalid_input;
            else if (reply.status == 429) kind = ErrorKind::rate_limited;
            else if (reply.status >= 500) kind = structured_error(reply.body) ? ErrorKind::internal : ErrorKind::network;
            message = "HTTP " + std::to_string(reply.status) + " after " + attempts_text(reply.attempts) + ": " +
                      server_text(reply.body);
            if (kind == ErrorKind::auth)
                message += m_settings.token_env.empty()
                               ? " (the server wants a bearer token: name its environment variable with token_env)"
                               : " (check the token in the environment variable " + m_settings.token_env + ")";
        }
        return make_error(kind, llm::redact(message, m_settings.token), head);
    }

    std::string escape(const std::string& raw) {
        CURL* curl = handle();
        if (!curl) return raw;
        char* escaped = curl_easy_escape(curl, raw.c_str(), static_cast<int>(raw.size()));
        if (!escaped) return raw;
        std::string out(escaped);
        curl_free(escaped);
        return out;
    }

    CURL* handle() {
        if (!m_curl) m_curl = curl_easy_init();
        return m_curl;
    }

    // Sends one request, retrying connection errors, timeouts, 408, 429, 502-504 and unstructured
    // 500s with backoff (Retry-After when the server gives one).
    HttpReply exchange(const char* method, const std::string& path, const std::optional<std::string>& body) {
        const std::string url = m_settings.base_url + path;
        int attempts = 0;
        while (true) {
            HttpReply reply = perform(method, url, body);
            reply.attempts = ++attempts;
            if (!retryable(reply) || attempts > m_settings.retries) return reply;
            std::this_thread::sleep_for(std::chrono::duration<double>(backoff_seconds(attempts, reply)));
        }
    }

    double backoff_seconds(int retry, const HttpReply& reply) {
        if (reply.retry_after)
            if (auto seconds = llm::parse_retry_after(*reply.retry_after)) return std::min(*seconds, k_backoff_max_seconds);
        const double window = std::min(k_backoff_max_seconds, k_backoff_base_seconds * std::pow(2.0, retry - 1));
        return m_rng.unit() * window;
    }

    HttpReply perform(const char* method, const std::string& url, const std::optional<std::string>& body) {
        HttpReply reply;
        CURL* curl = handle();
        if (!curl) {
            reply.code = CURLE_FAILED_INIT;
            reply.curl_error = "cannot initialise libcurl";
            return reply;
        }
        curl_easy_reset(curl);  // this handle alternates GET and POST: start each from defaults
        static_cast<llm::HttpReply&>(reply) =
            llm::perform_http(curl, {method, &url, body ? &*body : nullptr, &m_settings.token, m_settings.timeout_seconds});
        return reply;
    }

    HttpSettings m_settings;
    Rng m_rng;
    CURL* m_curl = nullptr;
};

}  // namespace

Result<std::unique_ptr<Transport>> make_http_transport(const Spec& spec) {
    MF_TRY(spec.check_keys({"url", "token_env", "timeout", "retries", "preset", "user"}));
    HttpSettings settings;
    std::string url = spec.get("url", "");
    if (url.empty())
        return make_error(ErrorKind::invalid_input, "the http: transport needs url=http://HOST:PORT", "url");
    if (!text::starts_with(url, "http://") && !text::starts_with(url, "https://"))
        return make_error(ErrorKind::invalid_input, "url must start with http:// or https://, got '" + llm::url_identity(url) + "'",
                          "url");
    if (url.find_first_of("?#") != std::string::npos)
        return make_error(ErrorKind::invalid_input, "url must not have a query or fragment: operations are appended to it",
                          "url");
    while (!url.empty() && url.back() == '/') url.pop_back();
    settings.base_url = url;
    settings.shown_url = llm::url_identity(url);
    MF_TRY_ASSIGN(const std::chrono::milliseconds timeout, spec.get_duration("timeout", std::chrono::seconds(30)));
    settings.timeout_seconds = static_cast<double>(timeout.count()) / 1000.0;
    MF_TRY_ASSIGN(const std::int64_t retries, spec.get_int("retries", 2));
    if (retries < 0 || retries > 20)
        return make_error(ErrorKind::invalid_input, "retries must be between 0 and 20", "retries");
    settings.retries = static_cast<int>(retries);
    MF_TRY_ASSIGN(const std::string preset, spec.get_choice("preset", "protocol", {"protocol", "mem0", "graphiti"}));
    settings.preset = preset == "mem0" ? Preset::mem0 : preset == "graphiti" ? Preset::graphiti : Preset::protocol;
    settings.user = spec.get("user", "memfail");
    if (settings.user.empty()) return make_error(ErrorKind::invalid_input, "user must not be empty", "user");
    settings.token_env = spec.get("token_env", "");
    if (!settings.token_env.empty()) {
        const char* token = std::getenv(settings.token_env.c_str());
        if (!token || !*token)
            return make_error(ErrorKind::invalid_input,
                              "token_env names the environment variable " + settings.token_env +
                                  ", which is not set (or empty); export the bearer token in it",
                              "token_env");
        settings.token = token;
    }
    return std::unique_ptr<Transport>(std::make_unique<HttpTransport>(std::move(settings)));
}

}  // namespace memfail::memory::adapter

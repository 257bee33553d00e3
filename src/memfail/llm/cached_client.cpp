// SPDX-License-Identifier: MIT
// SQLite reply cache with single-flight deduplication of identical concurrent requests.
#include <memfail/llm/cached_client.hpp>

#include <chrono>
#include <ctime>

#include <memfail/core/hash.hpp>

namespace memfail::llm {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Bumped when the key's or the stored reply's layout changes, so old rows are simply not found.
constexpr int k_cache_format = 1;

json usage_json(const Usage& usage) {
    return {{"prompt_tokens", usage.prompt_tokens},
            {"completion_tokens", usage.completion_tokens},
            {"counted_locally", usage.counted_locally}};
}

Usage usage_from(const json& j) {
    Usage usage;
    usage.prompt_tokens = j.at("prompt_tokens").get<std::int64_t>();
    usage.completion_tokens = j.at("completion_tokens").get<std::int64_t>();
    usage.counted_locally = j.at("counted_locally").get<bool>();
    return usage;
}

json chat_response_json(const ChatReply& reply) {
    json j = {{"content", reply.content}, {"finish_reason", reply.finish_reason}, {"usage", usage_json(reply.usage)}};
    if (reply.json) j["json"] = *reply.json;
    return j;
}

// nullopt when the stored row is unreadable (then it is treated as a miss and overwritten).
std::optional<ChatReply> chat_reply_from(const std::string& text) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    try {
        ChatReply reply;
        reply.content = j.at("content").get<std::string>();
        reply.finish_reason = j.at("finish_reason").get<std::string>();
        reply.usage = usage_from(j.at("usage"));
        if (j.contains("json")) reply.json = j["json"];
        return reply;
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

json embedding_response_json(const EmbeddingReply& reply) {
    return {{"vectors", reply.vectors}, {"usage", usage_json(reply.usage)}};
}

std::optional<EmbeddingReply> embedding_reply_from(const std::string& text) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    try {
        EmbeddingReply reply;
        reply.vectors = j.at("vectors").get<std::vector<std::vector<float>>>();
        reply.usage = usage_from(j.at("usage"));
        return reply;
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

std::int64_t micros_since(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
}

template <class Reply>
Reply as_hit(Reply reply, Clock::time_point start) {
    reply.cache_hit = true;
    reply.attempts = 0;
    reply.latency_micros = micros_since(start);
    reply.payment.reset();
    return reply;
}

}  // namespace

std::string_view cache_mode_name(CacheMode mode) {
    switch (mode) {
        case CacheMode::off: return "off";
        case CacheMode::on: return "on";
        case CacheMode::refresh: return "refresh";
    }
    return "on";
}

Result<CacheMode> parse_cache_mode(std::string_view text) {
    if (text == "off") return CacheMode::off;
    if (text == "on") return CacheMode::on;
    if (text == "refresh") return CacheMode::refresh;
    return make_error(ErrorKind::invalid_input,
                      "cache mode must be off, on or refresh, got \"" + std::string(text) + "\"");
}

Result<std::shared_ptr<LlmCache>> LlmCache::open(const std::string& path) {
    MF_TRY_ASSIGN(store::Database db, store::Database::open(path));
    MF_TRY(db.exec(
        "CREATE TABLE IF NOT EXISTS llm_cache ("
        " key TEXT PRIMARY KEY,"
        " endpoint TEXT NOT NULL,"
        " model TEXT NOT NULL,"
        " request_json TEXT NOT NULL,"
        " response_json TEXT NOT NULL,"
        " created_at INTEGER NOT NULL)"));
    // Who paid for each reply (the ledger is the results file the paying run writes).
    MF_TRY(db.exec(
        "CREATE TABLE IF NOT EXISTS llm_payments ("
        " key TEXT PRIMARY KEY,"
        " ledger TEXT NOT NULL,"
        " payer TEXT NOT NULL,"
        " prompt_tokens INTEGER NOT NULL,"
        " completion_tokens INTEGER NOT NULL,"
        " counted_locally INTEGER NOT NULL,"
        " attempts INTEGER NOT NULL,"
        " latency_micros INTEGER NOT NULL)"));
    return std::shared_ptr<LlmCache>(new LlmCache(std::move(db), path));
}

Result<std::optional<LlmCache::Entry>> LlmCache::get(const std::string& key) {
    std::lock_guard lock(m_mutex);
    MF_TRY_ASSIGN(store::Statement stmt,
                  m_db.prepare("SELECT c.response_json, p.ledger, p.payer, p.prompt_tokens, p.completion_tokens,"
                               " p.counted_locally, p.attempts, p.latency_micros"
                               " FROM llm_cache c LEFT JOIN llm_payments p ON p.key = c.key WHERE c.key = ?"));
    stmt.bind(1, key);
    MF_TRY_ASSIGN(bool row, stmt.step());
    if (!row) return std::optional<Entry>();
    Entry entry;
    entry.response_json = stmt.column_text(0);
    if (!stmt.column_is_null(2)) {
        Payment p;
        p.ledger = stmt.column_text(1);
        p.payer = stmt.column_text(2);
        p.usage.prompt_tokens = stmt.column_int(3);
        p.usage.completion_tokens = stmt.column_int(4);
        p.usage.counted_locally = stmt.column_int(5) != 0;
        p.attempts = static_cast<int>(stmt.column_int(6));
        p.latency_micros = stmt.column_int(7);
        entry.payment = std::move(p);
    }
    return std::optional<Entry>(std::move(entry));
}

Result<void> LlmCache::put(const std::string& key, std::string_view endpoint, std::string_view model,
                           std::string_view request_json, std::string_view response_json,
                           const std::optional<Payment>& payment) {
    std::lock_guard lock(m_mutex);
    MF_TRY_ASSIGN(store::Transaction tx, store::Transaction::begin(m_db));
    {
        MF_TRY_ASSIGN(store::Statement stmt,
                      m_db.prepare("INSERT OR REPLACE INTO llm_cache"
                                   " (key, endpoint, model, request_json, response_json, created_at)"
                                   " VALUES (?, ?, ?, ?, ?, ?)"));
        stmt.bind(1, key).bind(2, endpoint).bind(3, model).bind(4, request_json).bind(5, response_json);
        stmt.bind(6, static_cast<std::int64_t>(std::time(nullptr)));
        MF_TRY(stmt.run());
    }
    if (payment) {
        MF_TRY_ASSIGN(store::Statement stmt,
                      m_db.prepare("INSERT OR REPLACE INTO llm_payments"
                                   " (key, ledger, payer, prompt_tokens, completion_tokens, counted_locally,"
                                   " attempts, latency_micros) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
        stmt.bind(1, key).bind(2, payment->ledger).bind(3, payment->payer);
        stmt.bind(4, payment->usage.prompt_tokens).bind(5, payment->usage.completion_tokens);
        stmt.bind(6, static_cast<std::int64_t>(payment->usage.counted_locally ? 1 : 0));
        stmt.bind(7, static_cast<std::int64_t>(payment->attempts)).bind(8, payment->latency_micros);
        MF_TRY(stmt.run());
    } else {
        // A reply stored without a payment (cache written by another tool) must not keep an old one.
        MF_TRY_ASSIGN(store::Statement stmt, m_db.prepare("DELETE FROM llm_payments WHERE key = ?"));
        stmt.bind(1, key);
        MF_TRY(stmt.run());
    }
    return tx.commit();
}

Result<std::int64_t> LlmCache::entry_count() {
    std::lock_guard lock(m_mutex);
    MF_TRY_ASSIGN(store::Statement stmt, m_db.prepare("SELECT COUNT(*) FROM llm_cache"));
    MF_TRY_ASSIGN(bool row, stmt.step());
    return row ? stmt.column_int(0) : 0;
}

json chat_cache_request(const std::string& identity, const ChatRequest& request) {
    json messages = json::array();
    for (const auto& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    json j = {{"format", k_cache_format},
              {"identity", identity},
              {"endpoint", "chat"},
              {"model", request.model},
              {"messages", std::move(messages)},
              {"temperature", nullptr},
              {"seed", nullptr},
              {"max_tokens", nullptr},
              {"schema", nullptr}};
    if (request.temperature) j["temperature"] = *request.temperature;
    if (request.seed) j["seed"] = *request.seed;
    if (request.max_tokens) j["max_tokens"] = *request.max_tokens;
    if (request.schema) j["schema"] = {{"name", request.schema->name}, {"schema", request.schema->schema}};
    return j;
}

json embedding_cache_request(const std::string& identity, const EmbeddingRequest& request) {
    return {{"format", k_cache_format},
            {"identity", identity},
            {"endpoint", "embeddings"},
            {"model", request.model},
            {"inputs", request.inputs}};
}

// nlohmann::json keeps object keys sorted, so dump() is canonical.
std::string cache_key(const json& cache_request) { return content_hash(cache_request.dump()); }

CachedClient::CachedClient(std::shared_ptr<LlmClient> inner, std::shared_ptr<LlmCache> cache, CacheMode mode,
                           std::string ledger)
    : m_inner(std::move(inner)), m_cache(std::move(cache)), m_mode(mode), m_ledger(std::move(ledger)),
      m_payer(random_token()) {
    MF_ASSERT(m_inner != nullptr, "CachedClient needs an inner client");
    MF_ASSERT(m_cache != nullptr || m_mode == CacheMode::off, "CachedClient needs a cache unless the mode is off");
}

CacheStats CachedClient::stats() const {
    std::lock_guard lock(m_mutex);
    return m_stats;
}

template <class Reply, class Compute>
Result<Reply> CachedClient::single_flight(Flights<Reply>& flights, const std::string& key, Compute&& compute) {
    const auto start = Clock::now();
    std::shared_ptr<Flight<Reply>> flight;
    bool leader = false;
    {
        std::lock_guard lock(m_mutex);
        auto& slot = flights[key];
        if (!slot) {
            slot = std::make_shared<Flight<Reply>>();
            leader = true;
        }
        flight = slot;
    }
    if (!leader) {
        std::unique_lock lock(flight->mutex);
        flight->done_cv.wait(lock, [&] { return flight->done; });
        Result<Reply> result = *flight->result;
        lock.unlock();
        if (!result) {
            // The leader's error accounts the requests sent; this caller sent none.
            Error error = result.error();
            error.attempts = 0;
            return error;
        }
        {
            std::lock_guard stats_lock(m_mutex);
            ++m_stats.shared;
        }
        return as_hit(std::move(result).value(), start);
    }
    Result<Reply> result = compute(start);
    {
        // Unregister before publishing: a request arriving now starts afresh (and will find the
        // database row the leader just wrote).
        std::lock_guard lock(m_mutex);
        flights.erase(key);
    }
    {
        std::lock_guard lock(flight->mutex);
        flight->result = result;
        flight->done = true;
    }
    flight->done_cv.notify_all();
    return result;
}

std::optional<Payment> CachedClient::own_payment(const Usage& usage, int attempts, std::int64_t latency_micros) const {
    if (m_ledger.empty()) return std::nullopt;
    return Payment{m_ledger, m_payer, usage, attempts, latency_micros};
}

std::optional<Payment> CachedClient::foreign(std::optional<Payment> payment) const {
    if (!payment || m_ledger.empty() || payment->ledger != m_ledger || payment->payer == m_payer) return std::nullopt;
    return payment;
}

void CachedClient::store(const std::string& key, std::string_view endpoint, std::string_view model,
                         const json& cache_request, const json& response, const std::optional<Payment>& payment) {
    auto written = m_cache->put(key, endpoint, model, cache_request.dump(), response.dump(), payment);
    if (!written) {
        std::lock_guard lock(m_mutex);
        ++m_stats.write_errors;
    }
}

Result<ChatReply> CachedClient::chat(const ChatRequest& request) {
    if (m_mode == CacheMode::off) {
        {
            std::lock_guard lock(m_mutex);
            ++m_stats.misses;
        }
        return m_inner->chat(request);
    }
    const json cache_request = chat_cache_request(m_inner->identity(), request);
    const std::string key = cache_key(cache_request);
    return single_flight(m_chat_flights, key, [&](Clock::time_point start) -> Result<ChatReply> {
        if (m_mode == CacheMode::on) {
            MF_TRY_ASSIGN(std::optional<LlmCache::Entry> stored, m_cache->get(key));
            if (stored) {
                if (auto reply = chat_reply_from(stored->response_json)) {
                    {
                        std::lock_guard lock(m_mutex);
                        ++m_stats.hits;
                    }
                    ChatReply hit = as_hit(std::move(*reply), start);
                    hit.cache_key = key;
                    hit.payment = foreign(std::move(stored->payment));
                    return hit;
                }
            }
        }
        {
            std::lock_guard lock(m_mutex);
            ++m_stats.misses;
        }
        auto reply = m_inner->chat(request);
        if (reply) {
            reply->cache_key = key;
            reply->payment = own_payment(reply->usage, reply->attempts, reply->latency_micros);
            store(key, "chat", request.model, cache_request, chat_response_json(*reply), reply->payment);
        }
        return reply;
    });
}

Result<EmbeddingReply> CachedClient::embed(const EmbeddingRequest& request) {
    if (m_mode == CacheMode::off) {
        {
            std::lock_guard lock(m_mutex);
            ++m_stats.misses;
        }
        return m_inner->embed(request);
    }
    const json cache_request = embedding_cache_request(m_inner->identity(), request);
    const std::string key = cache_key(cache_request);
    return single_flight(m_embed_flights, key, [&](Clock::time_point start) -> Result<EmbeddingReply> {
        if (m_mode == CacheMode::on) {
            MF_TRY_ASSIGN(std::optional<LlmCache::Entry> stored, m_cache->get(key));
            if (stored) {
                if (auto reply = embedding_reply_from(stored->response_json)) {
                    {
                        std::lock_guard lock(m_mutex);
                        ++m_stats.hits;
                    }
                    EmbeddingReply hit = as_hit(std::move(*reply), start);
                    hit.cache_key = key;
                    hit.payment = foreign(std::move(stored->payment));
                    return hit;
                }
            }
        }
        {
            std::lock_guard lock(m_mutex);
            ++m_stats.misses;
        }
        auto reply = m_inner->embed(request);
        if (reply) {
            reply->cache_key = key;
            reply->payment = own_payment(reply->usage, reply->attempts, reply->latency_micros);
            store(key, "embeddings", request.model, cache_request, embedding_response_json(*reply), reply->payment);
        }
        return reply;
    });
}

}  // namespace memfail::llm

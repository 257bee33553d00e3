// SPDX-License-Identifier: MIT
// The reply cache: a decorator over any LlmClient that stores successful replies in SQLite, keyed
// by everything that determines the answer (server identity, endpoint, model, messages,
// parameters, schema) and nothing secret. A re-run with the cache on makes no network call and
// reproduces every reply byte for byte; identical requests in flight together make one call.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include <memfail/llm/llm_client.hpp>
#include <memfail/store/database.hpp>

namespace memfail::llm {

// off: neither read nor write; on: read, and write misses; refresh: never read, write (replace).
enum class CacheMode { off, on, refresh };
std::string_view cache_mode_name(CacheMode mode);
// "off" | "on" | "refresh"; invalid_input otherwise.
Result<CacheMode> parse_cache_mode(std::string_view text);

// The SQLite store behind CachedClient: table llm_cache(key, endpoint, model, request_json,
// response_json, created_at), and llm_payments(key, ledger, payer, tokens, attempts, latency): who
// paid for each reply, written in the same transaction as the reply. One connection (WAL) guarded
// by a mutex; safe from many threads. Cache files written before llm_payments existed still open
// (their replies simply have no payment).
class LlmCache {
public:
    static Result<std::shared_ptr<LlmCache>> open(const std::string& path);

    struct Entry {
        std::string response_json;
        std::optional<Payment> payment;  // absent for replies stored without one
    };
    // The stored entry for `key`, or nullopt.
    Result<std::optional<Entry>> get(const std::string& key);
    // Inserts or replaces the entry for `key` and, when given, its payment, in one transaction:
    // after a crash a reply is never in the cache without the payment that bought it.
    Result<void> put(const std::string& key, std::string_view endpoint, std::string_view model,
                     std::string_view request_json, std::string_view response_json,
                     const std::optional<Payment>& payment = std::nullopt);
    Result<std::int64_t> entry_count();
    const std::string& path() const { return m_path; }

private:
    LlmCache(store::Database db, std::string path) : m_db(std::move(db)), m_path(std::move(path)) {}
    std::mutex m_mutex;
    store::Database m_db;
    std::string m_path;
};

// Canonical JSON of what determines a chat reply (never the API key; role and stage are
// accounting only and left out, so the same prompt from two stages shares one entry).
nlohmann::json chat_cache_request(const std::string& identity, const ChatRequest& request);
nlohmann::json embedding_cache_request(const std::string& identity, const EmbeddingRequest& request);
// content_hash of the canonical dump.
std::string cache_key(const nlohmann::json& cache_request);

struct CacheStats {
    std::int64_t hits = 0;          // answered from the database
    std::int64_t shared = 0;        // answered by an identical request already in flight
    std::int64_t misses = 0;        // went to the inner client
    std::int64_t write_errors = 0;  // replies that could not be stored (the reply was still returned)
};

class CachedClient final : public LlmClient {
public:
    // `ledger` names the results file this process accounts its calls in (make_llm_stack passes
    // its absolute path; empty: payments are not recorded). Each CachedClient has its own random
    // payer token, recorded with every reply it pays for.
    CachedClient(std::shared_ptr<LlmClient> inner, std::shared_ptr<LlmCache> cache, CacheMode mode,
                 std::string ledger = {});

    // Hits (and requests that shared an identical in-flight call) come back with cache_hit = true
    // and attempts = 0. Only successful, schema-valid replies are stored; errors are not cached.
    // A database read failure is returned as an ErrorKind::database error.
    // Accounting (llm_client.hpp, Payment): every reply carries its cache_key (mode on or
    // refresh); a network reply carries this client's payment (recorded with the reply); a reply
    // read from the database carries the recorded payment only when another process paid for it
    // for the same ledger; a reply shared from an identical in-flight call carries none, and a
    // failed call shared that way reports 0 attempts (the leader's error counts them).
    Result<ChatReply> chat(const ChatRequest& request) override;
    Result<EmbeddingReply> embed(const EmbeddingRequest& request) override;
    std::string identity() const override { return m_inner->identity(); }

    CacheMode mode() const { return m_mode; }
    const std::string& payer() const { return m_payer; }
    CacheStats stats() const;

private:
    template <class Reply>
    struct Flight {
        std::mutex mutex;
        std::condition_variable done_cv;
        bool done = false;
        std::optional<Result<Reply>> result;
    };
    template <class Reply>
    using Flights = std::unordered_map<std::string, std::shared_ptr<Flight<Reply>>>;

    template <class Reply, class Compute>
    Result<Reply> single_flight(Flights<Reply>& flights, const std::string& key, Compute&& compute);

    void store(const std::string& key, std::string_view endpoint, std::string_view model,
               const nlohmann::json& cache_request, const nlohmann::json& response,
               const std::optional<Payment>& payment);
    // This client's payment for a reply it just received from the network.
    std::optional<Payment> own_payment(const Usage& usage, int attempts, std::int64_t latency_micros) const;
    // The stored payment as a reply may carry it: only another process's, for this ledger.
    std::optional<Payment> foreign(std::optional<Payment> payment) const;

    std::shared_ptr<LlmClient> m_inner;
    std::shared_ptr<LlmCache> m_cache;
    CacheMode m_mode;
    std::string m_ledger;
    std::string m_payer;
    mutable std::mutex m_mutex;  // guards the flight maps and the stats
    Flights<ChatReply> m_chat_flights;
    Flights<EmbeddingReply> m_embed_flights;
    CacheStats m_stats;
};

}  // namespace memfail::llm

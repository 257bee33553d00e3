// SPDX-License-Identifier: MIT
// Accounting of LLM calls per role: calls, cache hits and misses, tokens (from the API, or counted
// locally), errors by kind, retries and network latency. MeteredClient, the outermost decorator,
// records every call into a UsageLedger; the run report prints ledger.summary().
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/llm/llm_client.hpp>

namespace memfail::llm {

struct RoleUsage {
    std::string role;                       // role_name(), or "all" for the total row
    std::int64_t calls = 0;                 // every call, failed ones included
    std::int64_t cache_hits = 0;
    std::int64_t cache_misses = 0;          // successful calls that went to the network
    std::int64_t prompt_tokens = 0;         // network calls only: what was paid for
    std::int64_t completion_tokens = 0;
    std::int64_t counted_locally = 0;       // network calls whose usage the server did not send
    std::int64_t retries = 0;               // attempts beyond the first, summed
    std::int64_t errors = 0;
    std::map<std::string, std::int64_t> errors_by_kind;  // error_kind_name -> count
    std::map<std::string, std::int64_t> calls_by_stage;
    double latency_p50_ms = 0;              // over successful network calls; 0 when none
    double latency_p95_ms = 0;
};

class UsageLedger {
public:
    // One successful call. `latency_micros` is the caller-observed time of a network call.
    void record(Role role, std::string_view stage, std::string_view model, const Usage& usage, bool cache_hit,
                int attempts, std::int64_t latency_micros);
    void record(Role role, std::string_view stage, std::string_view model, const ChatReply& reply);
    void record(Role role, std::string_view model, const EmbeddingReply& reply);
    // One failed call.
    void record_error(Role role, std::string_view stage, std::string_view model, const Error& error);

    // One row per role that made calls (in Role order), then the "all" row.
    std::vector<RoleUsage> summary() const;
    // {"roles": [{role, calls, cache_hits, ...}], "total": {...}, "models": {role: [models]}}.
    // Holds counts and names only: no prompts, replies, error texts or credentials.
    nlohmann::json to_json() const;

private:
    struct Tally {
        RoleUsage usage;
        std::vector<std::int64_t> latencies_micros;
        std::map<std::string, std::int64_t> models;
    };
    Tally& tally_locked(Role role);

    mutable std::mutex m_mutex;
    std::map<Role, Tally> m_tallies;
};

// The outermost decorator: forwards to `inner` and records each call (success or error) in `ledger`.
class MeteredClient final : public LlmClient {
public:
    MeteredClient(std::shared_ptr<LlmClient> inner, std::shared_ptr<UsageLedger> ledger);
    Result<ChatReply> chat(const ChatRequest& request) override;
    Result<EmbeddingReply> embed(const EmbeddingRequest& request) override;
    std::string identity() const override { return m_inner->identity(); }
    const std::shared_ptr<UsageLedger>& ledger() const { return m_ledger; }

private:
    std::shared_ptr<LlmClient> m_inner;
    std::shared_ptr<UsageLedger> m_ledger;
};

}  // namespace memfail::llm

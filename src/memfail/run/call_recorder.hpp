// SPDX-License-Identifier: MIT
// The run's accounting wrapper around its LLM client: every call (role, stage, model, tokens,
// latency, cache hit, attempts, error) becomes a row the run writes to its llm_calls table.
#pragma once
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/llm/llm_client.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::run {

// Wraps the run's client to account every call (role, stage, tokens, latency, cache, errors); the
// rows are written to llm_calls by the main thread.
class CallRecorder final : public llm::LlmClient {
public:
    explicit CallRecorder(llm::LlmClient& inner) : m_inner(inner) {}

    Result<llm::ChatReply> chat(const llm::ChatRequest& request) override {
        const auto start = std::chrono::steady_clock::now();
        auto reply = m_inner.chat(request);
        store::LlmCallRow row;
        row.role = std::string(llm::role_name(request.role));
        row.stage = request.stage;
        row.model = request.model;
        if (reply) fill(row, reply->usage, reply->cache_hit, reply->attempts, reply->latency_micros);
        else fail(row, reply.error(), std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
        push(std::move(row));
        return reply;
    }

    Result<llm::EmbeddingReply> embed(const llm::EmbeddingRequest& request) override {
        const auto start = std::chrono::steady_clock::now();
        auto reply = m_inner.embed(request);
        store::LlmCallRow row;
        row.role = std::string(llm::role_name(request.role));
        row.stage = "embed";
        row.model = request.model;
        if (reply) fill(row, reply->usage, reply->cache_hit, reply->attempts, reply->latency_micros);
        else fail(row, reply.error(), std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
        push(std::move(row));
        return reply;
    }

    std::string identity() const override { return m_inner.identity(); }

    std::vector<store::LlmCallRow> drain() {
        std::lock_guard lock(m_mutex);
        return std::exchange(m_rows, {});
    }

    // The first refusal of the key, when no call has succeeded yet: a run where the endpoint refuses
    // every call should stop at once rather than record a thousand identical errors.
    std::optional<Error> refused_outright() const {
        std::lock_guard lock(m_mutex);
        if (m_successes == 0 && m_refusal) return m_refusal;
        return std::nullopt;
    }

private:
    static void fill(store::LlmCallRow& row, const llm::Usage& usage, bool hit, int attempts, std::int64_t micros) {
        row.cache_hit = hit;
        row.prompt_tokens = usage.prompt_tokens;
        row.completion_tokens = usage.completion_tokens;
        row.counted_locally = usage.counted_locally;
        row.attempts = attempts;
        row.latency_micros = micros;
    }
    static void fail(store::LlmCallRow& row, const Error& error, std::int64_t micros) {
        row.error_kind = error_kind_name(error.kind);
        row.error = error.describe();
        row.latency_micros = micros;
    }
    void push(store::LlmCallRow row) {
        std::lock_guard lock(m_mutex);
        if (row.error_kind.empty()) ++m_successes;
        else if (row.error_kind == error_kind_name(ErrorKind::auth) && !m_refusal)
            m_refusal = make_error(ErrorKind::auth, "the endpoint refused every call: " + row.error);
        m_rows.push_back(std::move(row));
    }

    llm::LlmClient& m_inner;
    mutable std::mutex m_mutex;
    std::size_t m_successes = 0;
    std::optional<Error> m_refusal;
    std::vector<store::LlmCallRow> m_rows;
};

}  // namespace memfail::run

// SPDX-License-Identifier: MIT
// The run's accounting wrapper around its LLM client: every call (role, stage, model, tokens,
// latency, cache hit, attempts, error) becomes a row the run writes to its llm_calls table, and a
// run whose endpoint keeps failing is stopped (fail fast) instead of recording a thousand errors.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/core/hash.hpp>
#include <memfail/llm/llm_client.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::run {

// Wraps the run's client to account every call (role, stage, tokens, latency, cache, errors); the
// rows are written to llm_calls by the main thread (ResultsDb::record_llm_calls, which makes the
// accounting exact across kill and --resume: docs/LLM.md, "Accounting").
//
// Fail fast: `max_consecutive_failures` calls in a row to one endpoint (the server and the model)
// that fail after their retries with an error saying the endpoint is down or unusable (network:
// connection refused or reset, 5xx; timeout; rate_limited: 429 after the retries; auth: 401/403;
// not_found: 404; protocol: a broken reply) trip the recorder: from then on every call returns the
// tripping error at once, without being sent and without a row, and aborted() returns it. A request
// the server refused as sent (HTTP 400, 422, ...: a content filter, one prompt too long;
// llm::request_refused) is that call's error, counted in the run's error rate, and neither counts
// nor resets, like a reply that breaks its schema. A call answered by the network resets its
// endpoint's count; cache hits tell nothing about the endpoint and do not. 0 never trips.
class CallRecorder final : public llm::LlmClient {
public:
    static constexpr int k_default_max_consecutive_failures = 8;

    explicit CallRecorder(llm::LlmClient& inner, int max_consecutive_failures = k_default_max_consecutive_failures)
        : m_inner(inner), m_max_failures(max_consecutive_failures), m_session(random_token()) {}

    Result<llm::ChatReply> chat(const llm::ChatRequest& request) override {
        if (auto tripped = aborted()) return *tripped;
        const auto start = std::chrono::steady_clock::now();
        auto reply = m_inner.chat(request);
        store::LlmCallRow row;
        row.role = std::string(llm::role_name(request.role));
        row.stage = request.stage;
        row.model = request.model;
        if (reply) fill(row, reply->usage, reply->cache_hit, reply->attempts, reply->latency_micros, reply->cache_key, reply->payment);
        else fail(row, reply.error(), micros_since(start));
        push(std::move(row), reply ? nullptr : &reply.error());
        return reply;
    }

    Result<llm::EmbeddingReply> embed(const llm::EmbeddingRequest& request) override {
        if (auto tripped = aborted()) return *tripped;
        const auto start = std::chrono::steady_clock::now();
        auto reply = m_inner.embed(request);
        store::LlmCallRow row;
        row.role = std::string(llm::role_name(request.role));
        row.stage = "embed";
        row.model = request.model;
        if (reply) fill(row, reply->usage, reply->cache_hit, reply->attempts, reply->latency_micros, reply->cache_key, reply->payment);
        else fail(row, reply.error(), micros_since(start));
        push(std::move(row), reply ? nullptr : &reply.error());
        return reply;
    }

    std::string identity() const override { return m_inner.identity(); }

    std::vector<store::LlmCallRow> drain() {
        std::lock_guard lock(m_mutex);
        return std::exchange(m_rows, {});
    }

    // The error that tripped the fail-fast guard ("8 calls in a row to <endpoint> failed; the last:
    // ..."), of the last failure's kind; nullopt while the run may go on. The run should stop with
    // it (resumable: nothing of the current probe is recorded).
    std::optional<Error> aborted() const {
        std::lock_guard lock(m_mutex);
        return m_abort;
    }

    // The first refusal of the key, when no call has succeeded yet: a run where the endpoint refuses
    // every call should stop at once rather than record a thousand identical errors. Also returns
    // aborted()'s error once the fail-fast guard has tripped, so callers that check this alone stop too.
    std::optional<Error> refused_outright() const {
        std::lock_guard lock(m_mutex);
        if (m_abort) return m_abort;
        if (m_successes == 0 && m_refusal) return m_refusal;
        return std::nullopt;
    }

    // The token written to llm_calls.session for every row this recorder makes.
    const std::string& session() const { return m_session; }

    // What the calls made on this thread are for, while a Work lives ("scenario/probe@k" for a
    // probe's answer and verdicts; empty for work shared by probes). It is part of a call's
    // identity across kill and resume: two probes whose calls share a cache key (the same judge
    // prompt at k=1 and k=3) are not mistaken for one call made twice.
    class Work {
    public:
        explicit Work(std::string tag) : m_previous(std::exchange(current_work(), std::move(tag))) {}
        ~Work() { current_work() = std::move(m_previous); }
        Work(const Work&) = delete;
        Work& operator=(const Work&) = delete;

    private:
        std::string m_previous;
    };

private:
    static std::string& current_work() {
        thread_local std::string work;
        return work;
    }
    static std::int64_t micros_since(std::chrono::steady_clock::time_point start) {
        return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    }
    static void fill(store::LlmCallRow& row, const llm::Usage& usage, bool hit, int attempts, std::int64_t micros,
                     const std::string& key, const std::optional<llm::Payment>& payment) {
        row.cache_hit = hit;
        row.prompt_tokens = usage.prompt_tokens;
        row.completion_tokens = usage.completion_tokens;
        row.counted_locally = usage.counted_locally;
        row.attempts = attempts;
        row.latency_micros = micros;
        row.cache_key = key;
        if (!payment) return;
        if (!hit) {
            row.payer = payment->payer;  // this call paid: the cache recorded it under this token
        } else {
            // Another process of this results file paid for the reply: record_llm_calls decides
            // whether that payment is still unaccounted (the process died before writing it).
            row.paid_elsewhere = true;
            row.payer = payment->payer;
            row.paid_prompt_tokens = payment->usage.prompt_tokens;
            row.paid_completion_tokens = payment->usage.completion_tokens;
            row.paid_counted_locally = payment->usage.counted_locally;
            row.paid_attempts = payment->attempts;
            row.paid_latency_micros = payment->latency_micros;
        }
    }
    static void fail(store::LlmCallRow& row, const Error& error, std::int64_t micros) {
        row.error_kind = error_kind_name(error.kind);
        row.error = error.describe();
        row.latency_micros = micros;
        row.attempts = error.attempts;
    }
    // Failures that say the endpoint is down or unusable (not the model's output, not one refused
    // request, not our cache).
    static bool endpoint_failure(const Error& error) {
        switch (error.kind) {
            case ErrorKind::network:
            case ErrorKind::timeout:
            case ErrorKind::rate_limited:
            case ErrorKind::auth:
            case ErrorKind::not_found: return error.attempts > 0;
            case ErrorKind::protocol: return error.attempts > 0 && !llm::request_refused(error);
            default: return false;
        }
    }
    void push(store::LlmCallRow row, const Error* error) {
        std::lock_guard lock(m_mutex);
        row.session = m_session;
        row.work = current_work();
        const std::string endpoint = m_inner.identity() + " (model " + row.model + ")";
        if (row.error_kind.empty()) {
            ++m_successes;
            if (!row.cache_key.empty()) row.occurrence = m_occurrences[row.cache_key + '\n' + row.work]++;
            if (!row.cache_hit) m_failures[endpoint] = 0;
        } else {
            if (row.error_kind == error_kind_name(ErrorKind::auth) && !m_refusal)
                m_refusal = make_error(ErrorKind::auth, "the endpoint refused every call: " + row.error);
            if (error && endpoint_failure(*error) && m_max_failures > 0 && !m_abort &&
                ++m_failures[endpoint] >= m_max_failures)
                m_abort = make_error(error->kind, std::to_string(m_max_failures) + " calls in a row to " + endpoint +
                                                      " failed, so the run stops (--resume continues it once the "
                                                      "endpoint works; --max-consecutive-failures sets the limit); "
                                                      "the last: " + error->describe());
        }
        m_rows.push_back(std::move(row));
    }

    llm::LlmClient& m_inner;
    const int m_max_failures;
    const std::string m_session;
    mutable std::mutex m_mutex;
    std::size_t m_successes = 0;
    std::optional<Error> m_refusal;
    std::optional<Error> m_abort;
    std::map<std::string, int> m_failures;              // endpoint -> failures in a row
    std::map<std::string, std::int64_t> m_occurrences;  // cache key and work -> successful calls so far
    std::vector<store::LlmCallRow> m_rows;
};

}  // namespace memfail::run

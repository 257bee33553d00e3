// SPDX-License-Identifier: MIT
// Per-role usage accounting and the metering decorator.
#include <memfail/llm/usage_ledger.hpp>

#include <algorithm>
#include <cmath>

namespace memfail::llm {

namespace {

// Nearest-rank percentile of sorted values, in milliseconds.
double percentile_ms(const std::vector<std::int64_t>& sorted, double p) {
    if (sorted.empty()) return 0;
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
    const std::size_t index = std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1);
    return static_cast<double>(sorted[index]) / 1000.0;
}

void add(RoleUsage& into, const RoleUsage& from) {
    into.calls += from.calls;
    into.cache_hits += from.cache_hits;
    into.cache_misses += from.cache_misses;
    into.prompt_tokens += from.prompt_tokens;
    into.completion_tokens += from.completion_tokens;
    into.counted_locally += from.counted_locally;
    into.retries += from.retries;
    into.errors += from.errors;
    for (const auto& [kind, n] : from.errors_by_kind) into.errors_by_kind[kind] += n;
    for (const auto& [stage, n] : from.calls_by_stage) into.calls_by_stage[stage] += n;
}

nlohmann::json row_json(const RoleUsage& row) {
    return {{"role", row.role},
            {"calls", row.calls},
            {"cache_hits", row.cache_hits},
            {"cache_misses", row.cache_misses},
            {"prompt_tokens", row.prompt_tokens},
            {"completion_tokens", row.completion_tokens},
            {"counted_locally", row.counted_locally},
            {"retries", row.retries},
            {"errors", row.errors},
            {"errors_by_kind", row.errors_by_kind},
            {"calls_by_stage", row.calls_by_stage},
            {"latency_p50_ms", row.latency_p50_ms},
            {"latency_p95_ms", row.latency_p95_ms}};
}

}  // namespace

UsageLedger::Tally& UsageLedger::tally_locked(Role role) {
    Tally& tally = m_tallies[role];
    if (tally.usage.role.empty()) tally.usage.role = std::string(role_name(role));
    return tally;
}

void UsageLedger::record(Role role, std::string_view stage, std::string_view model, const Usage& usage,
                         bool cache_hit, int attempts, std::int64_t latency_micros) {
    std::lock_guard lock(m_mutex);
    Tally& tally = tally_locked(role);
    RoleUsage& u = tally.usage;
    ++u.calls;
    ++u.calls_by_stage[std::string(stage)];
    ++tally.models[std::string(model)];
    if (cache_hit) {
        ++u.cache_hits;
        return;
    }
    ++u.cache_misses;
    u.prompt_tokens += usage.prompt_tokens;
    u.completion_tokens += usage.completion_tokens;
    u.counted_locally += usage.counted_locally ? 1 : 0;
    u.retries += std::max(0, attempts - 1);
    tally.latencies_micros.push_back(latency_micros);
}

void UsageLedger::record(Role role, std::string_view stage, std::string_view model, const ChatReply& reply) {
    record(role, stage, model, reply.usage, reply.cache_hit, reply.attempts, reply.latency_micros);
}

void UsageLedger::record(Role role, std::string_view model, const EmbeddingReply& reply) {
    record(role, "embed", model, reply.usage, reply.cache_hit, reply.attempts, reply.latency_micros);
}

void UsageLedger::record_error(Role role, std::string_view stage, std::string_view model, const Error& error) {
    std::lock_guard lock(m_mutex);
    Tally& tally = tally_locked(role);
    ++tally.usage.calls;
    ++tally.usage.calls_by_stage[std::string(stage)];
    ++tally.models[std::string(model)];
    ++tally.usage.errors;
    ++tally.usage.errors_by_kind[error_kind_name(error.kind)];
}

std::vector<RoleUsage> UsageLedger::summary() const {
    std::lock_guard lock(m_mutex);
    std::vector<RoleUsage> rows;
    RoleUsage total;
    total.role = "all";
    std::vector<std::int64_t> all_latencies;
    for (const auto& [role, tally] : m_tallies) {
        RoleUsage row = tally.usage;
        std::vector<std::int64_t> sorted = tally.latencies_micros;
        std::sort(sorted.begin(), sorted.end());
        row.latency_p50_ms = percentile_ms(sorted, 0.50);
        row.latency_p95_ms = percentile_ms(sorted, 0.95);
        add(total, row);
        all_latencies.insert(all_latencies.end(), sorted.begin(), sorted.end());
        rows.push_back(std::move(row));
    }
    std::sort(all_latencies.begin(), all_latencies.end());
    total.latency_p50_ms = percentile_ms(all_latencies, 0.50);
    total.latency_p95_ms = percentile_ms(all_latencies, 0.95);
    rows.push_back(std::move(total));
    return rows;
}

nlohmann::json UsageLedger::to_json() const {
    const std::vector<RoleUsage> rows = summary();
    nlohmann::json roles = nlohmann::json::array();
    for (std::size_t i = 0; i + 1 < rows.size(); ++i) roles.push_back(row_json(rows[i]));
    nlohmann::json models = nlohmann::json::object();
    {
        std::lock_guard lock(m_mutex);
        for (const auto& [role, tally] : m_tallies) {
            nlohmann::json names = nlohmann::json::array();
            for (const auto& [model, n] : tally.models) names.push_back(model);
            models[std::string(role_name(role))] = std::move(names);
        }
    }
    return {{"roles", std::move(roles)}, {"total", row_json(rows.back())}, {"models", std::move(models)}};
}

MeteredClient::MeteredClient(std::shared_ptr<LlmClient> inner, std::shared_ptr<UsageLedger> ledger)
    : m_inner(std::move(inner)), m_ledger(std::move(ledger)) {
    MF_ASSERT(m_inner != nullptr && m_ledger != nullptr, "MeteredClient needs a client and a ledger");
}

Result<ChatReply> MeteredClient::chat(const ChatRequest& request) {
    auto reply = m_inner->chat(request);
    if (reply) m_ledger->record(request.role, request.stage, request.model, *reply);
    else m_ledger->record_error(request.role, request.stage, request.model, reply.error());
    return reply;
}

Result<EmbeddingReply> MeteredClient::embed(const EmbeddingRequest& request) {
    auto reply = m_inner->embed(request);
    if (reply) m_ledger->record(request.role, request.model, *reply);
    else m_ledger->record_error(request.role, "embed", request.model, reply.error());
    return reply;
}

}  // namespace memfail::llm

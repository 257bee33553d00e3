// SPDX-License-Identifier: MIT
// The facts memory system: Mem0's classic pipeline. An LLM extracts atomic facts from each
// conversation; each fact is compared with the most similar existing memories, and the LLM decides
// ADD / UPDATE / DELETE / NONE against them (real ids hidden behind small integers, so the model
// cannot mangle them); decisions are applied in one transaction and every change is kept in a
// history. add_only=true models Mem0's 2026 algorithm: no decisions, only exact-duplicate suppression.
// extract=careful swaps in tuned prompts that keep qualifying details (an opt-in variant, reported in
// the spec; the default follows Mem0's published design).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <memfail/llm/prompts.hpp>
#include <memfail/memory/memory_system.hpp>
#include <memfail/memory/retriever.hpp>
#include <memfail/store/database.hpp>

namespace memfail::memory {

struct FactsOptions {
    bool add_only = false;
    // extract=published (default): Mem0's published extraction and decision prompts. extract=careful:
    // memfail's tuned, detail-preserving prompts (llm::prompts::PromptStyle::careful), not Mem0's design.
    bool careful = false;
    int similar = 5;  // existing memories shown per new fact
    int dim = 512;    // hashed embeddings when no --embed-model is given
};

class FactsSystem final : public MemorySystem {
public:
    static Result<std::unique_ptr<MemorySystem>> create(const Spec& spec, const SystemContext& context);
    static SystemInfo info();

    std::string spec() const override;
    Capabilities capabilities() const override;
    Result<void> store_conversation(const data::Session& session) override;
    Result<std::vector<Hit>> retrieve_memories(std::string_view query, const std::vector<data::Message>& history,
                                               int k) override;
    Result<std::vector<Memory>> all_memories() override;
    Result<void> reset() override;
    Result<std::vector<MemoryEvent>> history(std::string_view memory_id) override;

    // Decisions the model made that could not be applied (unknown memory number, a memory already
    // changed in the same batch); each is kept in the history as event "rejected".
    Result<std::int64_t> rejected_decisions();

private:
    FactsSystem(FactsOptions options, SystemServices services)
        : m_options(options), m_services(std::move(services)) {}
    Result<void> initialise(const std::string& path);
    llm::prompts::PromptStyle style() const {
        return m_options.careful ? llm::prompts::PromptStyle::careful : llm::prompts::PromptStyle::published;
    }
    Result<void> store_in_transaction(const data::Session& session);
    // Reads the retired-row and id counters back from SQLite (on open, and after a rollback).
    Result<void> load_counters();
    // Up to `k` live memories nearest to `text`, best first: retired rows stay in the vector index,
    // so the search over-fetches, skips them, and widens while it finds too few.
    Result<std::vector<std::pair<std::int64_t, double>>> live_neighbours(std::string_view text, int k);

    FactsOptions m_options;
    SystemServices m_services;
    std::optional<store::Database> m_db;  // declared before what points into it
    std::unique_ptr<Retriever> m_retriever;
    std::int64_t m_retired = 0;  // rows superseded or deleted (kept for the history, never returned)
    std::int64_t m_ids = 0;      // fact ids given so far: the next is "fact-<m_ids + 1>"
    CachedStatement m_is_live{"SELECT 1 FROM facts WHERE seq = ? AND live = 1"};
    CachedStatement m_fetch_live{
        "SELECT id, text, created_at, updated_at, sources_json, seq FROM facts WHERE seq = ? AND live = 1"};
};

}  // namespace memfail::memory

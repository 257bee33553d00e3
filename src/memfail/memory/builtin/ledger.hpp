// SPDX-License-Identifier: MIT
// The ledger memory system: a bi-temporal fact ledger, the reference system of the write-integrity
// suite. Each memory is one (subject, attribute) key; its values are records (value, authority,
// valid_from, valid_to, source message ids, recorded_at) appended and never overwritten: a new value
// closes the open record (its valid_to is the new one's valid_from) and opens another, a retraction
// closes it without a successor. The records come from the --system-model (extract=model) or, as a
// reference for the ledger's mechanics alone, from the scenario's ground-truth ledger
// (extract=oracle). history=off is the naive key-value floor: one row per key, overwritten in place.
// Retrieval ranks the currently valid records by BM25 and hashed-vector cosine, fused by reciprocal
// rank (retriever=hybrid), or by either alone.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <memfail/memory/memory_system.hpp>
#include <memfail/memory/retriever.hpp>
#include <memfail/store/database.hpp>

namespace memfail::memory {

enum class LedgerExtract { model, oracle };
enum class LedgerRetriever { hybrid, bm25, hashed };

struct LedgerOptions {
    LedgerExtract extract = LedgerExtract::model;
    bool history = true;  // false: one row per key, overwritten in place (no history, no as-of)
    LedgerRetriever retriever = LedgerRetriever::hybrid;
    // serve=state: retrieval hands back every currently valid record, whatever k (WRIT's oracle mode:
    // the gold state given to the answerer whole, no retrieval).
    bool serve_state = false;
};

class LedgerSystem final : public MemorySystem {
public:
    static Result<std::unique_ptr<MemorySystem>> create(const Spec& spec, const SystemContext& context);
    static SystemInfo info();

    std::string spec() const override;
    Capabilities capabilities() const override;
    Result<void> store_conversation(const data::Session& session) override;
    // Over the currently valid records only.
    Result<std::vector<Hit>> retrieve_memories(std::string_view query, const std::vector<data::Message>& history,
                                               int k) override;
    // The currently valid records, one per key, in the order the keys were first recorded.
    Result<std::vector<Memory>> all_memories() override;
    // Empties the ledger. The ground truth (extract=oracle) is kept, as the oracle system keeps it.
    Result<void> reset() override;
    // Every record of the memory's key in time order: add, update (old and new text), delete (a
    // retraction or expiry, which leaves the key without a value).
    Result<std::vector<MemoryEvent>> history(std::string_view memory_id) override;
    // The records valid at `timestamp` (valid_from <= t < valid_to, ISO 8601 compared as text).
    Result<std::vector<Memory>> state_as_of(std::string_view timestamp) override;
    // extract=oracle: plans each session's changes from the scenario's ledger.
    void observe_ground_truth(const data::Scenario& scenario) override;

private:
    // One change a session makes to the ledger.
    struct Change {
        enum class Op { set, retract, expire };
        Op op = Op::set;
        std::string subject;
        std::string attribute;
        std::string value;       // set only
        std::string authority;   // set only: data::authority_name
        std::string valid_from;  // set only; empty: the session's time
        std::vector<std::string> sources;
    };

    LedgerSystem(LedgerOptions options, SystemServices services)
        : m_options(options), m_services(std::move(services)) {}
    Result<void> initialise(const std::string& path);
    Result<void> store_in_transaction(const data::Session& session);
    // The changes the system model reads in a session (extract=model).
    Result<std::vector<Change>> extract_changes(const data::Session& session);
    Result<void> apply(const Change& change, const data::Session& session);
    // The key's id, created when `create` and missing (nullopt when missing and not created).
    Result<std::optional<std::int64_t>> key_id(const std::string& subject, const std::string& attribute, bool create);
    // Takes the key's open record out of the current state: closed (history=on) or deleted (off).
    Result<void> close(std::int64_t seq, const std::string& at, const char* closed_by,
                       const std::vector<std::string>& sources);
    Result<void> reload_open();
    Result<std::optional<Memory>> memory_of(std::int64_t seq);

    LedgerOptions m_options;
    SystemServices m_services;
    std::optional<store::Database> m_db;  // declared before what points into it
    std::unordered_set<std::int64_t> m_open;  // seqs of the currently valid records
    std::unique_ptr<Retriever> m_dense;       // hashed vectors of the open records only
    std::unique_ptr<Bm25Retriever> m_bm25;    // every record added since its last rebuild; closed ones excluded
    // extract=oracle: the changes each session makes, by session id; nullopt until the ground truth
    // is observed.
    std::optional<std::map<std::string, std::vector<Change>>> m_plan;
    CachedStatement m_fetch{
        "SELECT k.id, k.subject, k.attribute, r.value, r.valid_from, r.updated_at, r.sources_json "
        "FROM ledger_records r JOIN ledger_keys k ON k.id = r.key WHERE r.seq = ?"};
};

}  // namespace memfail::memory

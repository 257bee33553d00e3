// SPDX-License-Identifier: MIT
// What every built-in system does with its SQLite file, in one place: where the file lives, opening
// it at a schema version, running a write in one transaction with its retrievers kept in step, and
// refusing to start without the model an LLM-based system needs.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/memory/memory_system.hpp>
#include <memfail/memory/retriever.hpp>
#include <memfail/store/database.hpp>

namespace memfail::memory {

// The file a store named `store_name` lives in, inside `storage_dir`. The name is never used as a
// path: the file is "<readable prefix>-<16 hex digits of the name's hash>.sqlite", the prefix being
// the name's first 40 characters with everything but letters, digits, '_' and '-' replaced by '_'.
// So a store name such as "../../x" or "/etc/x" stays inside `storage_dir`, and the same name
// always maps to the same file (a resumed run reopens its stores). A store written by an older
// memfail as "<store_name>.sqlite" is reopened when its name is a plain id (letters, digits, . _ : -).
std::string store_file_path(const std::string& storage_dir, const std::string& store_name);

// store_file_path in the context's folder (created when missing), or ":memory:" when the context
// names no folder.
Result<std::string> store_path(const SystemContext& context);

// Opens `path`, refuses a file from a newer schema, creates the tables (`schema` is idempotent SQL)
// and stamps `version` on a new file.
Result<store::Database> open_store(const std::string& path, const char* schema, int version);

// invalid_input unless the context names a --system-model; `what` says what the system uses it for.
Result<void> require_system_model(const SystemContext& context, std::string_view system, std::string_view what);

// The single integer a query returns (0 when it returns no row).
Result<std::int64_t> scalar_of(store::Database& db, const char* sql);

// An integer option within [low, high], with a message naming the system and the range.
Result<std::int64_t> bounded_option(const Spec& spec, const std::string& key, std::int64_t fallback,
                                    std::int64_t low, std::int64_t high, std::string_view system);

// Runs `insert_sql` ("INSERT OR IGNORE INTO <table> (session_id) VALUES (?)") and says whether it is new:
// false means the session was stored before, and storing it again must change nothing.
Result<bool> first_time_stored(store::Database& db, const char* insert_sql, const std::string& session_id);

// A session's non-empty messages as shown to a system's model ("[n] (role) text", n from 1) and the
// message ids behind the numbers, so replies citing numbers map back to provenance.
struct NumberedConversation {
    std::vector<llm::ChatMessage> shown;
    std::vector<std::string> message_ids;
};
NumberedConversation number_messages(const data::Session& session);

// Sends one of a system's own calls with the run's sampling options; invalid_input when the system
// was made without a client (only a spec check).
Result<llm::ChatReply> ask_system_model(const SystemServices& services, llm::ChatRequest request, std::string_view system);

// Removes from `index` each rowid `select_sql` lists (its first column): how an index from before
// retired rows left it is brought up to date without embedding anything again.
Result<void> remove_listed(store::Database& db, Retriever& index, const char* select_sql);

// Runs `body` in one transaction and flushes `retrievers` before committing. On any failure the
// rollback is followed by each retriever's undo_changes(), so their in-RAM state forgets the
// rolled-back rows too (undone from a journal, not rebuilt); callers with more derived state
// reload it themselves.
template <class Body>
Result<void> in_transaction(store::Database& db, std::initializer_list<Retriever*> retrievers, Body&& body) {
    for (Retriever* r : retrievers) r->begin_changes();
    Result<void> outcome = [&]() -> Result<void> {
        MF_TRY_ASSIGN(store::Transaction transaction, store::Transaction::begin(db));
        MF_TRY(body());
        for (Retriever* r : retrievers) MF_TRY(r->flush());
        return transaction.commit();
    }();
    for (Retriever* r : retrievers) {
        if (outcome) r->keep_changes();
        else if (!r->undo_changes()) (void)r->reload();  // the undo failed: the slow, sure way
    }
    return outcome;
}

}  // namespace memfail::memory

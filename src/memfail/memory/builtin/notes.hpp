// SPDX-License-Identifier: MIT
// The notes memory system: A-MEM's linked notes. For each stored turn the --system-model writes a
// note (content, keywords, tags, a one-line context); the note's nearest existing notes are shown to
// the model, which says which are related (they are linked both ways) and how their context and tags
// should change in the new note's light ("evolution"; their content is never rewritten). Retrieval is
// embedding top-k over the notes plus one hop along links, cut back to k.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/memory/memory_system.hpp>
#include <memfail/memory/retriever.hpp>
#include <memfail/store/database.hpp>

namespace memfail::memory {

struct NotesOptions {
    int neighbours = 5;       // existing notes shown to the model per new note
    bool user_only = false;   // roles=user: notes only for the user's turns
    int dim = 512;            // hashed embeddings when no --embed-model is given
};

// One note as stored, for callers that want more than Memory shows (keywords, tags).
struct Note {
    std::string id;
    std::string content;
    std::vector<std::string> keywords;
    std::vector<std::string> tags;
    std::string context;
    std::vector<std::string> sources;
    std::string created_at;
    std::string updated_at;
};

class NotesSystem final : public MemorySystem {
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
    // The note's creation ("add") and every evolution of its context and tags ("evolve").
    Result<std::vector<MemoryEvent>> history(std::string_view memory_id) override;

    // The note `id` with its keywords and tags; nullopt when there is none.
    Result<std::optional<Note>> note(std::string_view id);
    // Ids of the notes linked to `id`, in creation order.
    Result<std::vector<std::string>> links(std::string_view id);
    // Link or update numbers the model gave that were not among the notes shown (or repeated an
    // update); each is kept in notes_history as event "rejected" and otherwise ignored.
    Result<std::int64_t> rejected_decisions();

private:
    NotesSystem(NotesOptions options, SystemServices services)
        : m_options(options), m_services(std::move(services)) {}
    Result<void> initialise(const std::string& path);
    Result<void> store_in_transaction(const data::Session& session);
    Result<void> rebuild_index();
    Result<void> index_note(std::int64_t seq, const std::string& text);
    // Up to `want` live notes (seq, score) nearest `query`, best first, skipping index entries of
    // notes whose text has since changed.
    Result<std::vector<std::pair<std::int64_t, double>>> search_notes(std::string_view query, int want);

    NotesOptions m_options;
    SystemServices m_services;
    std::optional<store::Database> m_db;  // declared before what points into it
    std::unique_ptr<Retriever> m_retriever;
};

}  // namespace memfail::memory

// SPDX-License-Identifier: MIT
// verbatim: every message stored word for word, found again by BM25 or hashed-vector search. This
// is the paper's SimpleMem-style row (a flat list of turns with top-k retrieval) and the baseline
// that can never lose a detail at storage time.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <memfail/memory/memory_system.hpp>
#include <memfail/memory/retriever.hpp>
#include <memfail/store/database.hpp>

namespace memfail::memory {

enum class Chunking { turn, sentence };
enum class RetrieverKind { bm25, hashed, embed };
enum class StoredRoles { user, all };

struct VerbatimOptions {
    Chunking chunk = Chunking::turn;
    RetrieverKind retriever = RetrieverKind::bm25;
    int dim = HashedEmbedder::k_default_dim;  // hashed only
    StoredRoles roles = StoredRoles::all;
};

class VerbatimSystem final : public MemorySystem {
public:
    // From a parsed spec named "verbatim"; unknown options are invalid_input errors.
    static Result<std::unique_ptr<MemorySystem>> create(const Spec& spec, const SystemContext& context);
    static SystemInfo info();

    // Opens (creating when missing) the store at <storage_dir>/<store_name>.sqlite, or a private
    // in-memory one when storage_dir is empty. A store written with another chunking or role
    // filter is refused: its memories would not be what these options promise. A store indexed
    // by another retriever is re-indexed.
    static Result<std::unique_ptr<VerbatimSystem>> open(const VerbatimOptions& options,
                                                        const SystemContext& context);

    std::string spec() const override;
    std::string serving() const override;
    Capabilities capabilities() const override;
    Result<void> store_conversation(const data::Session& session) override;
    Result<std::vector<Hit>> retrieve_memories(std::string_view query,
                                               const std::vector<data::Message>& history,
                                               int k) override;
    Result<std::vector<Memory>> all_memories() override;
    Result<void> reset() override;

private:
    VerbatimSystem(VerbatimOptions options, SystemServices services)
        : m_options(options), m_services(std::move(services)) {}
    Result<void> initialise(const std::string& path);
    Result<void> reindex();
    Result<void> store_in_transaction(const data::Session& session);

    VerbatimOptions m_options;
    SystemServices m_services;  // the embeddings model, for retriever=embed
    // Declared before everything holding statements or pointers into it, so it closes last.
    std::optional<store::Database> m_db;
    std::unique_ptr<Retriever> m_retriever;
    std::optional<store::Statement> m_insert;
    std::optional<store::Statement> m_fetch;
};

}  // namespace memfail::memory

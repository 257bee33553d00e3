// SPDX-License-Identifier: MIT
// The verbatim memory system: one SQLite table of memories plus a retriever index beside it.
#include <memfail/memory/builtin/system_store.hpp>
#include <memfail/memory/builtin/verbatim.hpp>
#include <memfail/memory/text_embedder.hpp>

#include <filesystem>
#include <system_error>

#include <memfail/core/text.hpp>

namespace memfail::memory {

namespace {

constexpr int k_schema_version = 1;

constexpr const char* k_schema =
    "CREATE TABLE IF NOT EXISTS verbatim_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS memories ("
    "  seq INTEGER PRIMARY KEY,"  // insertion order, and the rowid retrievers index
    "  id TEXT NOT NULL UNIQUE,"  // '<message id>#<chunk index>': what makes storing idempotent
    "  session_id TEXT NOT NULL,"
    "  message_id TEXT NOT NULL,"
    "  role TEXT NOT NULL,"
    "  chunk_index INTEGER NOT NULL,"
    "  text TEXT NOT NULL,"
    "  created_at TEXT NOT NULL,"
    "  updated_at TEXT NOT NULL);";

const char* chunk_name(Chunking c) { return c == Chunking::turn ? "turn" : "sentence"; }
const char* retriever_name(RetrieverKind r) {
    switch (r) {
        case RetrieverKind::bm25: return "bm25";
        case RetrieverKind::hashed: return "hashed";
        case RetrieverKind::embed: return "embed";
    }
    return "bm25";
}
const char* roles_name(StoredRoles r) { return r == StoredRoles::user ? "user" : "all"; }

constexpr std::int64_t k_min_dim = 8;
constexpr std::int64_t k_max_dim = 65536;

Result<std::optional<std::string>> read_meta(store::Database& db, const char* key) {
    MF_TRY_ASSIGN(store::Statement select, db.prepare("SELECT value FROM verbatim_meta WHERE key = ?"));
    select.bind(1, key);
    MF_TRY_ASSIGN(const bool row, select.step());
    if (!row) return std::optional<std::string>{};
    return std::optional<std::string>(select.column_text(0));
}

Result<void> write_meta(store::Database& db, const char* key, const std::string& value) {
    MF_TRY_ASSIGN(store::Statement put,
                  db.prepare("INSERT OR REPLACE INTO verbatim_meta (key, value) VALUES (?, ?)"));
    put.bind(1, key).bind(2, value);
    return put.run();
}


}  // namespace

Result<std::unique_ptr<MemorySystem>> VerbatimSystem::create(const Spec& spec,
                                                             const SystemContext& context) {
    MF_TRY(spec.check_keys({"chunk", "retriever", "dim", "roles"}));
    VerbatimOptions options;
    MF_TRY_ASSIGN(const std::string chunk, spec.get_choice("chunk", "turn", {"turn", "sentence"}));
    MF_TRY_ASSIGN(const std::string retriever,
                  spec.get_choice("retriever", "bm25", {"bm25", "hashed", "embed"}));
    MF_TRY_ASSIGN(const std::string roles, spec.get_choice("roles", "all", {"user", "all"}));
    MF_TRY_ASSIGN(const std::int64_t dim, spec.get_int("dim", HashedEmbedder::k_default_dim));
    options.chunk = chunk == "turn" ? Chunking::turn : Chunking::sentence;
    options.retriever = retriever == "bm25" ? RetrieverKind::bm25
                        : retriever == "hashed" ? RetrieverKind::hashed
                                                : RetrieverKind::embed;
    if (options.retriever == RetrieverKind::embed && context.services.embed_model.empty())
        return make_error(ErrorKind::invalid_input,
                          "retriever=embed of 'verbatim' needs an embeddings model: pass --embed-model (and an "
                          "OpenAI-compatible endpoint with --base-url or OPENAI_BASE_URL)");
    options.roles = roles == "user" ? StoredRoles::user : StoredRoles::all;
    if (spec.has("dim") && options.retriever != RetrieverKind::hashed)
        return make_error(ErrorKind::invalid_input,
                          "option 'dim' of 'verbatim' applies only to retriever=hashed");
    if (dim < k_min_dim || dim > k_max_dim)
        return make_error(ErrorKind::invalid_input, "option 'dim' of 'verbatim' must be between " +
                                                        std::to_string(k_min_dim) + " and " +
                                                        std::to_string(k_max_dim) + ", got " +
                                                        std::to_string(dim));
    options.dim = static_cast<int>(dim);
    MF_TRY_ASSIGN(std::unique_ptr<VerbatimSystem> system, open(options, context));
    return std::unique_ptr<MemorySystem>(std::move(system));
}

SystemInfo VerbatimSystem::info() {
    return {"verbatim",
            "Stores every message word for word (the paper's SimpleMem row) and retrieves the top k "
            "by BM25 or hashed-vector cosine",
            {{"chunk", "turn", "turn: one memory per message; sentence: one memory per sentence"},
             {"retriever", "bm25",
              "bm25: SQLite FTS5 with the Porter stemmer; hashed: cosine over feature-hashed word "
              "and character n-gram vectors; embed: cosine over the --embed-model's embeddings"},
             {"dim", std::to_string(HashedEmbedder::k_default_dim),
              "vector dimensions (retriever=hashed only)"},
             {"roles", "all", "all: store user and assistant messages; user: user messages only"}}};
}

Result<std::unique_ptr<VerbatimSystem>> VerbatimSystem::open(const VerbatimOptions& options,
                                                             const SystemContext& context) {
    std::string path = ":memory:";
    if (!context.storage_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(context.storage_dir, ec);
        if (ec)
            return make_error(ErrorKind::io, "cannot create the storage folder: " + ec.message(),
                              context.storage_dir);
        path = store_file_path(context.storage_dir, context.store_name);
    }
    std::unique_ptr<VerbatimSystem> system(new VerbatimSystem(options, context.services));
    MF_TRY(system->initialise(path));
    return system;
}

Result<void> VerbatimSystem::initialise(const std::string& path) {
    MF_TRY_ASSIGN(store::Database db, store::Database::open(path));
    m_db.emplace(std::move(db));
    store::Database& database = *m_db;

    MF_TRY_ASSIGN(const int version, database.user_version());
    if (version > k_schema_version)
        return make_error(ErrorKind::invalid_input,
                          "this store was written by a newer memfail (schema " +
                              std::to_string(version) + ")",
                          path);
    MF_TRY(database.exec(k_schema));
    if (version == 0) MF_TRY(database.set_user_version(k_schema_version));

    // Chunking and role filtering decide what the stored memories are; mixing two settings in one
    // store would make its memories mean neither.
    const std::pair<const char*, std::string> fixed[] = {{"chunk", chunk_name(m_options.chunk)},
                                                         {"roles", roles_name(m_options.roles)}};
    for (const auto& [key, wanted] : fixed) {
        MF_TRY_ASSIGN(const std::optional<std::string> stored, read_meta(database, key));
        if (stored && *stored != wanted)
            return make_error(ErrorKind::invalid_input,
                              std::string("this store holds memories made with ") + key + "=" +
                                  *stored + ", not " + key + "=" + wanted +
                                  "; use a fresh storage folder or the same options",
                              path);
        if (!stored) MF_TRY(write_meta(database, key, wanted));
    }

    if (m_options.retriever == RetrieverKind::bm25) {
        MF_TRY_ASSIGN(m_retriever, Bm25Retriever::open(database));
    } else if (m_options.retriever == RetrieverKind::hashed) {
        MF_TRY_ASSIGN(m_retriever, HashedRetriever::open(database, {.dim = m_options.dim}));
    } else {
        MF_TRY_ASSIGN(std::unique_ptr<TextEmbedder> embedder, make_model_text_embedder(m_services));
        MF_TRY_ASSIGN(m_retriever, EmbeddingRetriever::open(database, std::move(embedder)));
    }

    MF_TRY_ASSIGN(store::Statement insert,
                  database.prepare("INSERT OR IGNORE INTO memories (id, session_id, message_id, "
                                   "role, chunk_index, text, created_at, updated_at) "
                                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    m_insert.emplace(std::move(insert));
    MF_TRY_ASSIGN(store::Statement fetch,
                  database.prepare("SELECT id, text, created_at, updated_at, message_id "
                                   "FROM memories WHERE seq = ?"));
    m_fetch.emplace(std::move(fetch));

    // The retriever index is derived data: rebuild it when it was made by another retriever or
    // does not cover exactly the stored rows.
    MF_TRY_ASSIGN(const std::optional<std::string> indexed_by, read_meta(database, "retriever"));
    MF_TRY_ASSIGN(store::Statement count, database.prepare("SELECT count(*) FROM memories"));
    MF_TRY_ASSIGN(const bool counted, count.step());
    const std::int64_t memories = counted ? count.column_int(0) : 0;
    MF_TRY_ASSIGN(const std::int64_t indexed, m_retriever->count());
    if (indexed_by != m_retriever->signature() || indexed != memories) MF_TRY(reindex());
    return {};
}

Result<void> VerbatimSystem::reindex() {
    store::Database& db = *m_db;
    return in_transaction(db, {m_retriever.get()}, [&]() -> Result<void> {
        MF_TRY(m_retriever->clear());
        MF_TRY_ASSIGN(store::Statement rows, db.prepare("SELECT seq, text FROM memories ORDER BY seq"));
        while (true) {
            MF_TRY_ASSIGN(const bool row, rows.step());
            if (!row) break;
            MF_TRY(m_retriever->add(rows.column_int(0), rows.column_text_view(1)));
        }
        return write_meta(db, "retriever", m_retriever->signature());
    });
}

std::string VerbatimSystem::serving() const { return m_retriever ? m_retriever->serving() : std::string(); }

std::string VerbatimSystem::spec() const {
    Spec spec{"verbatim",
              {{"chunk", chunk_name(m_options.chunk)},
               {"retriever", retriever_name(m_options.retriever)},
               {"roles", roles_name(m_options.roles)}}};
    if (m_options.retriever == RetrieverKind::hashed) spec.options["dim"] = std::to_string(m_options.dim);
    return spec.to_string();
}

Capabilities VerbatimSystem::capabilities() const {
    Capabilities caps;
    caps.provenance = true;
    caps.idempotent_store = true;
    return caps;
}

Result<void> VerbatimSystem::store_in_transaction(const data::Session& session) {
    store::Database& db = *m_db;
    store::Statement& insert = *m_insert;
    for (const data::Message& message : session.messages) {
        if (m_options.roles == StoredRoles::user && message.role != "user") continue;
        std::vector<std::string> chunks;
        if (m_options.chunk == Chunking::sentence) {
            chunks = text::split_sentences(message.content);
        } else if (!text::trim(message.content).empty()) {
            chunks.emplace_back(text::trim(message.content));
        }
        for (std::size_t i = 0; i < chunks.size(); ++i) {
            insert.reset();
            insert.bind(1, message.id + "#" + std::to_string(i))
                .bind(2, session.id)
                .bind(3, message.id)
                .bind(4, message.role)
                .bind(5, static_cast<std::int64_t>(i))
                .bind(6, chunks[i])
                .bind(7, session.timestamp)
                .bind(8, session.timestamp);
            MF_TRY(insert.run());
            // INSERT OR IGNORE changed nothing: this chunk is already stored and indexed.
            if (db.changes() == 0) continue;
            MF_TRY(m_retriever->add(db.last_insert_rowid(), chunks[i]));
        }
    }
    return {};
}

Result<void> VerbatimSystem::store_conversation(const data::Session& session) {
    Result<void> stored = in_transaction(*m_db, {m_retriever.get()},
                                         [&]() -> Result<void> { return store_in_transaction(session); });
    if (!stored) return stored.error().with_context("session " + session.id);
    return {};
}

Result<std::vector<Hit>> VerbatimSystem::retrieve_memories(std::string_view query,
                                                           const std::vector<data::Message>&,
                                                           int k) {
    std::vector<Hit> hits;
    if (k <= 0) return hits;
    MF_TRY_ASSIGN(const std::vector<RetrievedRow> rows, m_retriever->search(query, k));
    store::Statement& fetch = *m_fetch;
    for (const RetrievedRow& row : rows) {
        fetch.reset();
        fetch.bind(1, row.rowid);
        MF_TRY_ASSIGN(const bool found, fetch.step());
        MF_ASSERT(found, "retriever returned a row the memories table does not hold");
        Hit hit;
        hit.memory.id = fetch.column_text(0);
        hit.memory.text = fetch.column_text(1);
        hit.memory.created_at = fetch.column_text(2);
        hit.memory.updated_at = fetch.column_text(3);
        hit.memory.sources = {fetch.column_text(4)};
        hit.score = row.score;
        hits.push_back(std::move(hit));
    }
    fetch.reset();
    return hits;
}

Result<std::vector<Memory>> VerbatimSystem::all_memories() {
    std::vector<Memory> out;
    MF_TRY_ASSIGN(store::Statement rows,
                  m_db->prepare("SELECT id, text, created_at, updated_at, message_id FROM memories "
                                "ORDER BY seq"));
    while (true) {
        MF_TRY_ASSIGN(const bool row, rows.step());
        if (!row) break;
        Memory memory;
        memory.id = rows.column_text(0);
        memory.text = rows.column_text(1);
        memory.created_at = rows.column_text(2);
        memory.updated_at = rows.column_text(3);
        memory.sources = {rows.column_text(4)};
        out.push_back(std::move(memory));
    }
    return out;
}

Result<void> VerbatimSystem::reset() {
    return in_transaction(*m_db, {m_retriever.get()}, [&]() -> Result<void> {
        MF_TRY(m_db->exec("DELETE FROM memories"));
        return m_retriever->clear();
    });
}

}  // namespace memfail::memory

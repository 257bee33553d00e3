// SPDX-License-Identifier: MIT
// Retrievers: search indexes kept in a memory system's own SQLite database, keyed by the rowid of
// the system's memory rows. The owning system decides what a row is; a retriever only maps text to
// rowids.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/memory/embedder.hpp>
#include <memfail/memory/vector_index.hpp>
#include <memfail/store/database.hpp>

namespace memfail::memory {

// Prepared once per connection, reset on each use (store/database.hpp).
using store::CachedStatement;

struct RetrievedRow {
    std::int64_t rowid = 0;
    double score = 0;  // higher is better; comparable only within one search
};

// Writes (add, flush, remove, clear) belong inside the caller's transaction; after that transaction
// rolls back the caller must call undo_changes() (or reload()) so in-RAM state matches SQLite again. The database must
// outlive the retriever.
class Retriever {
public:
    virtual ~Retriever() = default;

    // "bm25" or "hashed:dim=512": changes when the index would differ, so owners know to rebuild.
    virtual std::string signature() const = 0;
    // What serves searches now, with the settings that decide recall (MemorySystem::serving()).
    virtual std::string serving() const { return signature(); }
    // Indexes `text` under `rowid`, which must not be indexed already.
    virtual Result<void> add(std::int64_t rowid, std::string_view text) = 0;
    // Persists whatever add() batched in RAM; call before committing.
    virtual Result<void> flush() { return {}; }
    // Re-reads in-RAM state from SQLite.
    virtual Result<void> reload() { return {}; }
    // Brackets one transaction's changes (in_transaction in builtin/system_store.hpp calls these):
    // begin_changes() before the first write; keep_changes() once the transaction committed;
    // undo_changes() once it rolled back, which brings in-RAM state back to what it was at
    // begin_changes(). The default undo is reload(). A retriever whose reload is costly (an HNSW
    // index over 100k vectors takes minutes to rebuild) journals its in-RAM changes instead, so a
    // session a model's malformed reply rolls back costs what the session cost, not a rebuild.
    virtual void begin_changes() {}
    virtual void keep_changes() {}
    virtual Result<void> undo_changes() { return reload(); }
    // Up to `k` rows, best first. Read-only.
    virtual Result<std::vector<RetrievedRow>> search(std::string_view query, int k) = 0;
    // Stops returning `rowid` (an owner's row that was retired but is kept for history), so
    // searches need not look past it. False when this retriever cannot (BM25: a contentless FTS5
    // row is deleted only with its original text, and dropping it would change every IDF) or does
    // not hold it; the owner then keeps skipping the row itself (BM25: see set_excluded).
    virtual Result<bool> remove(std::int64_t rowid) {
        (void)rowid;
        return false;
    }
    // Forgets every indexed row.
    virtual Result<void> clear() = 0;
    // Rows indexed.
    virtual Result<std::int64_t> count() = 0;
};

// Okapi BM25 (k1 = 1.2, b = 0.75, FTS5's constants) over an SQLite FTS5 table with
// tokenize='porter unicode61'. The table is contentless: the text lives in the owner's rows and the
// index keeps only postings. Both sides are indexed in text::normalize form, so "Gideon's" and
// "gideons" meet, as they do in key-detail matching.
//
// FTS5 is the store of record; searches run over a copy of its postings kept in RAM. The copy is
// built when the retriever opens (one pass over an fts5vocab table, with FTS5's own porter
// tokenizer used on every add so the tokens are the very ones FTS5 stores) and kept up to date by
// add(); document lengths are persisted in bm25_doclen. Why not let FTS5 rank: an FTS5 query reads
// every posting of every query word and calls the ranking function once per matching row, with no
// way to skip. Graph facts repeat a few hundred stems ("Ines" stems to "in"), so at 100k memories
// a query made only of common stems matched a quarter of the store, and those queries were the
// whole 99th percentile.
//
// search() is document-at-a-time MaxScore over the RAM postings: a row's score is a sum of one
// bounded term per query word (a word's bound uses the highest count and the shortest row of any
// row holding it; the term grows with the count and shrinks with the length), so once k rows
// score at least t, the words whose bounds add up to less than t cannot lift a row holding only
// them into the top k. Only the other, "essential" words' postings are walked; the rest are
// sought into per candidate row, and a row whose essential terms plus those bounds stay below t
// is not scored. Scores add the words' terms in query order, as memfail_bm25 (an FTS5 auxiliary
// function, the same formula and IDF as FTS5's bm25() with the sign flipped) does, so search()
// returns the same rows, scores (to the bit) and order as search_exhaustive(), which asks FTS5 to
// score every matching row and stays as the reference and for queries FTS5 tokenizes oddly.
class Bm25Retriever final : public Retriever {
public:
    struct Stats;  // document lengths shared with the registered ranking function

    // Only one Bm25Retriever may be open per connection: each registers memfail_bm25 anew.
    static Result<std::unique_ptr<Bm25Retriever>> open(store::Database& db);
    ~Bm25Retriever() override;

    std::string signature() const override { return "bm25"; }
    Result<void> add(std::int64_t rowid, std::string_view text) override;
    Result<void> reload() override;
    // Rows added since begin_changes() leave the RAM postings again (they are the newest ones).
    void begin_changes() override;
    void keep_changes() override;
    Result<void> undo_changes() override;
    Result<std::vector<RetrievedRow>> search(std::string_view query, int k) override;
    Result<void> clear() override;
    Result<std::int64_t> count() override;

    // Scores every row holding any query word (the reference search() must equal).
    Result<std::vector<RetrievedRow>> search_exhaustive(std::string_view query, int k);
    // Leaves the rows `excluded` names out of every search: they stay indexed and keep counting in
    // document frequencies and the average length (so no other row's score moves), but the k rows
    // returned are the best k of the others. This is remove() for an owner that retires rows and
    // keeps them: asking for more rows and skipping the retired ones afterwards could not know
    // how many more, and a store whose best matches were mostly retired paid for a second, deeper
    // search. The predicate is called once per matching row and must be cheap; it must outlive
    // the retriever's searches. Empty (the default): nothing is excluded.
    void set_excluded(std::function<bool(std::int64_t)> excluded);
    // Rows the last search given a full score (search_exhaustive: every FTS5 match), for tests and
    // benches.
    std::int64_t last_rows_scored() const { return m_last_scored; }

private:
    struct Tokenizer;
    Bm25Retriever(store::Database& db, std::shared_ptr<Stats> stats);
    Result<std::vector<RetrievedRow>> run_search(store::Statement& select);
    // Appends `rowid` to the RAM postings of each of its distinct tokens (`tokens` sorted).
    void post(std::int64_t rowid, const std::vector<std::string>& tokens, std::uint32_t length);

    store::Database* m_db;
    std::shared_ptr<Stats> m_stats;
    std::shared_ptr<Tokenizer> m_tokenizer;
    // Per FTS5 token: its postings (internal row numbers, ascending, and the token's count in each
    // row) and the most times and the fewest words of any row holding it, which bound what the
    // token can add to a score.
    struct TermStats {
        std::uint32_t max_tf = 0;
        std::uint32_t min_length = 0;
        std::vector<std::uint32_t> rows;
        std::vector<std::uint32_t> counts;
        std::int64_t df() const { return static_cast<std::int64_t>(rows.size()); }
    };
    std::unordered_map<std::string, TermStats> m_terms;
    std::vector<std::int64_t> m_rowids;  // internal row number -> the owner's rowid
    // Since begin_changes(): the terms of each row added, in add order; nullopt when not journaling
    // (or after clear(), which undo_changes() answers with reload()).
    std::optional<std::vector<std::vector<TermStats*>>> m_journal;
    bool m_journal_broken = false;
    std::int64_t m_last_scored = 0;
    CachedStatement m_insert_text;
    CachedStatement m_insert_length;
    CachedStatement m_search;
};

// The FTS5 MATCH expression for `query`: its distinct non-stopword words, each quoted (embedded
// quotes doubled) and OR-ed, e.g. "who hikes in rain?" -> "\"hikes\" OR \"rain\"". Empty when the
// query has no usable word.
std::string bm25_match_expression(std::string_view query);

struct HashedRetrieverOptions {
    int dim = HashedEmbedder::k_default_dim;
    std::size_t hnsw_threshold = VectorIndexOptions{}.hnsw_threshold;
};

// Cosine search over HashedEmbedder vectors. Vectors are BLOBs in SQLite and document frequencies
// per hashed bucket are persisted next to them; the in-RAM VectorIndex is rebuilt from SQLite on
// open, so the database is the only source of truth.
class HashedRetriever final : public Retriever {
public:
    // Opening with a `dim` other than the stored one discards the stored vectors (they cannot be
    // compared); count() then reports 0 and the owner re-adds its rows.
    static Result<std::unique_ptr<HashedRetriever>> open(store::Database& db,
                                                         HashedRetrieverOptions options);

    std::string signature() const override;
    std::string serving() const override;  // the signature and VectorIndex::describe()
    Result<void> add(std::int64_t rowid, std::string_view text) override;
    Result<void> flush() override;
    Result<void> reload() override;
    Result<std::vector<RetrievedRow>> search(std::string_view query, int k) override;
    Result<void> clear() override;
    Result<std::int64_t> count() override;

    const VectorIndex& index() const { return m_index; }

private:
    HashedRetriever(store::Database& db, HashedRetrieverOptions options);

    store::Database* m_db;
    HashedRetrieverOptions m_options;
    HashedEmbedder m_embedder;
    VectorIndex m_index;
    std::vector<std::int64_t> m_df;  // documents touching each bucket
    std::int64_t m_documents = 0;
    std::unordered_set<std::uint32_t> m_dirty;  // buckets whose df changed since the last flush
    CachedStatement m_insert_vector;
    CachedStatement m_upsert_df;
};

class TextEmbedder;

// Cosine search over vectors from a TextEmbedder (an embeddings model, or the hashed embedder).
// add() only queues rows; flush() embeds the queue in batches (one request per batch for a model)
// and persists the vectors as BLOBs, so a session's turns cost one embeddings call, not one each.
// The in-RAM VectorIndex is rebuilt from SQLite on open. Opening with another embedder signature
// (another model) drops the stored vectors: they are not comparable.
class EmbeddingRetriever final : public Retriever {
public:
    static Result<std::unique_ptr<EmbeddingRetriever>> open(store::Database& db, std::unique_ptr<TextEmbedder> embedder,
                                                           std::size_t hnsw_threshold = VectorIndexOptions{}.hnsw_threshold);
    ~EmbeddingRetriever() override;

    std::string signature() const override;
    std::string serving() const override;  // the signature and VectorIndex::describe()
    Result<void> add(std::int64_t rowid, std::string_view text) override;
    Result<void> flush() override;
    Result<void> reload() override;
    Result<std::vector<RetrievedRow>> search(std::string_view query, int k) override;
    // Deletes the row's vector (from SQLite and the index) or its queued text.
    Result<bool> remove(std::int64_t rowid) override;
    Result<void> clear() override;
    Result<std::int64_t> count() override;
    // Journals the vectors indexed and removed since begin_changes(), so undo takes them out or
    // puts them back instead of rebuilding the index. With HNSW a vector taken out stays as a
    // deleted node that still routes searches (as after remove()), so later approximate answers
    // can differ in their last places from those of a store reopened from SQLite.
    void begin_changes() override;
    void keep_changes() override;
    Result<void> undo_changes() override;

private:
    EmbeddingRetriever(store::Database& db, std::unique_ptr<TextEmbedder> embedder, std::size_t hnsw_threshold);
    void index_vector(std::int64_t rowid, const std::vector<float>& vector);
    // One indexed-vector change since begin_changes(): `removed` holds the vector remove() took
    // out, and is empty for a vector flush() put in.
    struct Change {
        std::int64_t rowid = 0;
        std::vector<float> removed;
    };

    store::Database* m_db;
    std::unique_ptr<TextEmbedder> m_embedder;
    std::size_t m_hnsw_threshold;
    std::optional<VectorIndex> m_index;  // created with the first vector, whose size fixes the dimension
    std::int64_t m_documents = 0;
    std::vector<std::pair<std::int64_t, std::string>> m_pending;
    CachedStatement m_insert_vector;
    CachedStatement m_delete_vector{"DELETE FROM embed_vectors WHERE doc = ?"};
    CachedStatement m_select_vector{"SELECT vector FROM embed_vectors WHERE doc = ?"};
    std::optional<std::vector<Change>> m_journal;  // nullopt when not journaling
    bool m_journal_broken = false;  // clear() or reload() since begin_changes(): undo reloads
    bool m_index_at_begin = false;
    bool m_approximate_at_begin = false;
};

}  // namespace memfail::memory

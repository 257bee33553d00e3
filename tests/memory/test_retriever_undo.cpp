// SPDX-License-Identifier: MIT
// Retriever::undo_changes: after a rolled-back transaction, the journaled undo leaves BM25 and the
// embedding index answering exactly as a retriever freshly opened on the rolled-back database.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <memfail/core/rng.hpp>
#include <memfail/memory/builtin/system_store.hpp>
#include <memfail/memory/retriever.hpp>
#include <memfail/memory/text_embedder.hpp>
#include <memfail/store/database.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using test::ok;

const std::vector<std::string> k_words = {"rain",  "lisbon", "porto", "coffee", "sister", "works", "hiking",
                                          "piano", "allergic", "peanuts", "moved", "friday", "teacher"};

std::string row_text(Rng& rng) {
    std::string out;
    const auto length = rng.between(2, 9);
    for (std::int64_t i = 0; i < length; ++i) out += (out.empty() ? "" : " ") + rng.pick(k_words);
    return out;
}

void expect_same(const std::vector<RetrievedRow>& got, const std::vector<RetrievedRow>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].rowid, want[i].rowid) << what << " rank " << i;
        EXPECT_EQ(got[i].score, want[i].score) << what << " rank " << i;
    }
}

TEST(RetrieverUndo, Bm25ForgetsRolledBackRowsAsAReopenedOneWould) {
    Rng rng(9);
    test::TempDir dir;
    const std::string path = dir.path() + "/bm25.sqlite";
    auto db = ok(store::Database::open(path));
    auto bm25 = ok(Bm25Retriever::open(db));
    ok(in_transaction(db, {bm25.get()}, [&]() -> Result<void> {
        for (std::int64_t row = 1; row <= 300; ++row) MF_TRY(bm25->add(row, row_text(rng)));
        return {};
    }));
    // A session that fails after indexing rows (new words among them) is rolled back and undone.
    const auto failed = in_transaction(db, {bm25.get()}, [&]() -> Result<void> {
        for (std::int64_t row = 301; row <= 360; ++row) MF_TRY(bm25->add(row, row_text(rng) + " zanzibar"));
        return make_error(ErrorKind::protocol, "malformed reply");
    });
    ASSERT_FALSE(failed);
    EXPECT_EQ(ok(bm25->count()), 300);
    EXPECT_TRUE(ok(bm25->search("zanzibar", 10)).empty());

    auto other = ok(store::Database::open(path));
    auto reopened = ok(Bm25Retriever::open(other));
    const std::vector<std::string> queries = {"rain lisbon", "coffee", "sister works friday", "piano teacher moved"};
    for (const auto& query : queries)
        for (const int k : {1, 5, 40}) expect_same(ok(bm25->search(query, k)), ok(reopened->search(query, k)), query);

    // Later rows take the numbers the undone ones had, and rank as FTS5 ranks them.
    ok(in_transaction(db, {bm25.get()}, [&]() -> Result<void> {
        for (std::int64_t row = 301; row <= 330; ++row) MF_TRY(bm25->add(row, row_text(rng)));
        return {};
    }));
    EXPECT_EQ(ok(bm25->count()), 330);
    for (const auto& query : queries)
        for (const int k : {1, 5, 40})
            expect_same(ok(bm25->search(query, k)), ok(bm25->search_exhaustive(query, k)), query + " after");
}

TEST(RetrieverUndo, Bm25UndoAfterClearReloads) {
    auto db = ok(store::Database::open(":memory:"));
    auto bm25 = ok(Bm25Retriever::open(db));
    ok(in_transaction(db, {bm25.get()}, [&]() -> Result<void> {
        MF_TRY(bm25->add(1, "rain in lisbon"));
        return bm25->add(2, "coffee in porto");
    }));
    ASSERT_FALSE(in_transaction(db, {bm25.get()}, [&]() -> Result<void> {
        MF_TRY(bm25->clear());
        MF_TRY(bm25->add(3, "rain again"));
        return make_error(ErrorKind::protocol, "malformed reply");
    }));
    EXPECT_EQ(ok(bm25->count()), 2);
    const auto rows = ok(bm25->search("rain coffee", 5));
    ASSERT_EQ(rows.size(), 2U);
    expect_same(rows, ok(bm25->search_exhaustive("rain coffee", 5)), "rain coffee");
}

// `threshold` 0: exact search throughout; 40: HNSW from the start of the rolled-back session on.
void embedding_undo_case(std::size_t threshold) {
    Rng rng(21);
    test::TempDir dir;
    const std::string path = dir.path() + "/dense.sqlite";
    auto db = ok(store::Database::open(path));
    auto dense = ok(EmbeddingRetriever::open(db, make_hashed_text_embedder(64), threshold));
    std::vector<std::string> texts(1, "");
    ok(in_transaction(db, {dense.get()}, [&]() -> Result<void> {
        for (std::int64_t row = 1; row <= 200; ++row) {
            texts.push_back(row_text(rng) + " number" + std::to_string(row));
            MF_TRY(dense->add(row, texts.back()));
        }
        return {};
    }));
    const auto failed = in_transaction(db, {dense.get()}, [&]() -> Result<void> {
        for (std::int64_t row = 201; row <= 230; ++row) MF_TRY(dense->add(row, row_text(rng) + " zanzibar"));
        MF_TRY(dense->flush());  // indexed mid-session, as notes does
        for (std::int64_t row = 10; row <= 200; row += 10) {
            MF_TRY_ASSIGN(const bool removed, dense->remove(row));
            if (!removed) return make_error(ErrorKind::internal, "row " + std::to_string(row) + " was not held");
        }
        MF_TRY(dense->add(231, "never embedded"));
        return make_error(ErrorKind::protocol, "malformed reply");
    });
    ASSERT_FALSE(failed);
    ASSERT_NE(failed.error().message.find("malformed"), std::string::npos) << failed.error().message;
    EXPECT_EQ(ok(dense->count()), 200);
    // Every removed row is back (its own text finds it first); no rolled-back row comes back.
    for (std::int64_t row = 10; row <= 200; row += 10) {
        const auto top = ok(dense->search(texts[static_cast<std::size_t>(row)], 1));
        ASSERT_EQ(top.size(), 1U);
        EXPECT_EQ(top[0].rowid, row);
    }
    for (const auto& row : ok(dense->search("zanzibar rain lisbon", 200))) EXPECT_LE(row.rowid, 200);
    if (threshold == 0) {  // exact: the same answers, to the score, as a freshly opened index
        auto other = ok(store::Database::open(path));
        auto reopened = ok(EmbeddingRetriever::open(other, make_hashed_text_embedder(64), threshold));
        for (const std::string query : {"rain lisbon", "coffee sister", "piano teacher number40"})
            expect_same(ok(dense->search(query, 10)), ok(reopened->search(query, 10)), query);
    }
}

TEST(RetrieverUndo, EmbeddingIndexTakesBackAddsAndRemovalsExactly) { embedding_undo_case(0); }

TEST(RetrieverUndo, EmbeddingIndexTakesBackAddsAndRemovalsUnderHnsw) { embedding_undo_case(40); }

TEST(RetrieverUndo, AnIndexCreatedByTheRolledBackSessionIsDropped) {
    auto db = ok(store::Database::open(":memory:"));
    auto dense = ok(EmbeddingRetriever::open(db, make_hashed_text_embedder(64)));
    ASSERT_FALSE(in_transaction(db, {dense.get()}, [&]() -> Result<void> {
        MF_TRY(dense->add(1, "rain in lisbon"));
        MF_TRY(dense->flush());
        return make_error(ErrorKind::protocol, "malformed reply");
    }));
    EXPECT_EQ(ok(dense->count()), 0);
    EXPECT_TRUE(ok(dense->search("rain", 5)).empty());
    // And the next session starts a fresh one, of whatever dimension.
    ok(in_transaction(db, {dense.get()}, [&]() -> Result<void> { return dense->add(2, "coffee in porto"); }));
    EXPECT_EQ(ok(dense->search("coffee", 5)).size(), 1U);
}

}  // namespace
}  // namespace memfail::memory

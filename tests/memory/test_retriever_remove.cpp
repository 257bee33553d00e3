// SPDX-License-Identifier: MIT
// Retriever::remove: retired rows leave the dense index (and stay out after a reload), and the
// work-based exact/HNSW switch of VectorIndex.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <memfail/memory/retriever.hpp>
#include <memfail/memory/text_embedder.hpp>
#include <memfail/store/database.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using test::ok;

bool holds(const std::vector<RetrievedRow>& rows, std::int64_t rowid) {
    return std::any_of(rows.begin(), rows.end(), [&](const RetrievedRow& r) { return r.rowid == rowid; });
}

TEST(RetrieverRemove, EmbeddingRetrieverForgetsARemovedRowForGood) {
    auto db = ok(store::Database::open(":memory:"));
    auto dense = ok(EmbeddingRetriever::open(db, make_hashed_text_embedder(64)));
    {
        auto txn = ok(store::Transaction::begin(db));
        ok(dense->add(1, "Priya lives in Lisbon."));
        ok(dense->add(2, "Priya lives in Porto."));
        ok(dense->add(3, "The dog is afraid of thunder."));
        ok(dense->flush());
        ok(txn.commit());
    }
    ASSERT_TRUE(holds(ok(dense->search("where does Priya live", 3)), 1));
    {
        auto txn = ok(store::Transaction::begin(db));
        EXPECT_TRUE(ok(dense->remove(1)));
        EXPECT_FALSE(ok(dense->remove(1)));   // already gone
        EXPECT_FALSE(ok(dense->remove(99)));  // never held
        ok(dense->add(4, "Priya lives in Faro."));
        EXPECT_TRUE(ok(dense->remove(4)));  // still queued: dropped before it is embedded
        ok(dense->flush());
        ok(txn.commit());
    }
    EXPECT_EQ(ok(dense->count()), 2);
    auto rows = ok(dense->search("where does Priya live", 3));
    EXPECT_FALSE(holds(rows, 1));
    EXPECT_FALSE(holds(rows, 4));
    EXPECT_TRUE(holds(rows, 2));
    // Reloaded from SQLite, the removal holds.
    ok(dense->reload());
    EXPECT_EQ(ok(dense->count()), 2);
    EXPECT_FALSE(holds(ok(dense->search("where does Priya live", 3)), 1));
}

TEST(RetrieverRemove, ARolledBackRemovalIsUndoneByReload) {
    auto db = ok(store::Database::open(":memory:"));
    auto dense = ok(EmbeddingRetriever::open(db, make_hashed_text_embedder(64)));
    {
        auto txn = ok(store::Transaction::begin(db));
        ok(dense->add(1, "Priya lives in Lisbon."));
        ok(dense->flush());
        ok(txn.commit());
    }
    {
        auto txn = ok(store::Transaction::begin(db));
        EXPECT_TRUE(ok(dense->remove(1)));
    }  // rolled back
    ok(dense->reload());
    EXPECT_TRUE(holds(ok(dense->search("Priya Lisbon", 1)), 1));
}

TEST(RetrieverRemove, Bm25CannotRemoveAndSaysSo) {
    auto db = ok(store::Database::open(":memory:"));
    auto bm25 = ok(Bm25Retriever::open(db));
    ok(bm25->add(1, "Priya lives in Lisbon."));
    EXPECT_FALSE(ok(bm25->remove(1)));
    EXPECT_TRUE(holds(ok(bm25->search("Priya", 1)), 1));
}

TEST(VectorIndexThreshold, ExactSearchEndsWithTheWorkNotTheCount) {
    const VectorIndex narrow({.dim = 64});
    const VectorIndex wide({.dim = 768});
    EXPECT_EQ(narrow.exact_limit(), VectorIndexOptions::k_exact_floats / 64);
    EXPECT_EQ(wide.exact_limit(), VectorIndexOptions::k_exact_floats / 768);
    EXPECT_EQ(VectorIndex({.dim = 64, .hnsw_threshold = 10}).exact_limit(), 10U);  // explicit wins
    // Switches over exactly past the limit.
    constexpr int k_wide = 1 << 19;  // so the limit is a handful of vectors
    VectorIndex index({.dim = k_wide});
    const std::size_t limit = index.exact_limit();
    ASSERT_EQ(limit, 4U);
    std::vector<float> v(k_wide, 0.0F);
    for (std::size_t i = 0; i <= limit; ++i) {
        std::fill(v.begin(), v.end(), 0.0F);
        v[i] = 1.0F;
        index.add(static_cast<std::int64_t>(i), v);
        EXPECT_EQ(index.is_approximate(), i + 1 > limit) << i;
    }
}

}  // namespace
}  // namespace memfail::memory

// SPDX-License-Identifier: MIT
// Retriever::remove: retired rows leave the dense index (and stay out after a reload), the
// work-based exact/approximate switch of VectorIndex, and which index serves which vectors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <memfail/core/hash.hpp>
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

// Dense vectors as a model gives them: every dimension carries mass (a deterministic stand-in
// for the test; the product has no such embedder).
class DenseTestEmbedder final : public TextEmbedder {
public:
    std::string signature() const override { return "test:dense"; }
    Result<std::vector<std::vector<float>>> embed(const std::vector<std::string>& texts) override {
        std::vector<std::vector<float>> out;
        for (const std::string& text : texts) {
            std::vector<float> v(32);
            for (std::size_t d = 0; d < v.size(); ++d)
                v[d] = static_cast<float>(hash64(text, d) % 1000) / 1000.0F - 0.5F;
            l2_normalize(v);
            out.push_back(std::move(v));
        }
        return out;
    }
};

// Hashed vectors (sparse) go to the column scan past the exact limit; a model's (dense) to HNSW.
// Either way serving() names it, for the run's record.
TEST(RetrieverServing, SparseVectorsAreScannedByColumnsDenseOnesGoToAGraph) {
    // One database each: the two embedding retrievers would share a table.
    auto db_hashed = ok(store::Database::open(":memory:"));
    auto db_sparse = ok(store::Database::open(":memory:"));
    auto db_dense = ok(store::Database::open(":memory:"));
    auto hashed = ok(HashedRetriever::open(db_hashed, {.dim = 64, .hnsw_threshold = 20}));
    auto sparse = ok(EmbeddingRetriever::open(db_sparse, make_hashed_text_embedder(64), 20));
    auto dense = ok(EmbeddingRetriever::open(db_dense, std::make_unique<DenseTestEmbedder>(), 20));
    EXPECT_NE(hashed->serving().find("exact("), std::string::npos) << hashed->serving();
    for (int i = 1; i <= 60; ++i) {
        const std::string text = "note " + std::to_string(i) + " about harbour " + std::to_string(i * 7);
        ok(hashed->add(i, text));
        ok(sparse->add(i, text));
        ok(dense->add(i, text));
    }
    ok(hashed->flush());
    ok(sparse->flush());
    ok(dense->flush());
    EXPECT_NE(hashed->serving().find("columns(int8,dims="), std::string::npos) << hashed->serving();
    EXPECT_NE(sparse->serving().find("columns(int8,dims="), std::string::npos) << sparse->serving();
    EXPECT_NE(dense->serving().find("hnsw(int8,"), std::string::npos) << dense->serving();
    // Past the limit each still finds a stored row by its own words.
    EXPECT_TRUE(holds(ok(hashed->search("note 42 about harbour 294", 3)), 42));
    EXPECT_TRUE(holds(ok(sparse->search("note 42 about harbour 294", 3)), 42));
    EXPECT_TRUE(holds(ok(dense->search("note 42 about harbour 294", 1)), 42));
}

}  // namespace
}  // namespace memfail::memory

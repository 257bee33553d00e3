// SPDX-License-Identifier: MIT
// The hashed embedder and the exact/HNSW vector index.
#include <cmath>

#include <gtest/gtest.h>

#include <memfail/core/rng.hpp>
#include <memfail/memory/embedder.hpp>
#include <memfail/memory/vector_index.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using test::dot;

std::vector<float> random_unit(Rng& rng, int dim) {
    std::vector<float> v(static_cast<std::size_t>(dim));
    for (float& x : v) x = static_cast<float>(rng.unit() * 2.0 - 1.0);
    l2_normalize(v);
    return v;
}

TEST(HashedEmbedder, RespectsDimensionAndNormalises) {
    for (const int dim : {16, 64, 512, 1000}) {
        const HashedEmbedder embedder(dim);
        const std::vector<float> v = embedder.embed("Priya moved to Lisbon to study octopuses.");
        ASSERT_EQ(v.size(), static_cast<std::size_t>(dim));
        EXPECT_NEAR(dot(v, v), 1.0F, 1e-5F) << dim;
        for (const HashedFeature& f : embedder.features("Priya moved to Lisbon."))
            EXPECT_LT(f.bucket, static_cast<std::uint32_t>(dim));
    }
}

TEST(HashedEmbedder, IsDeterministicAndNormalisesText) {
    const HashedEmbedder embedder;
    EXPECT_EQ(embedder.embed("Gideon\u2019s sail-boats!"), embedder.embed("gideon   SAIL boats"));
    EXPECT_EQ(embedder.embed("Gideon's boats"), embedder.embed("gideon boats"));  // possessive dropped
    EXPECT_NE(embedder.embed("Gideons boats"), embedder.embed("gideon boats"));
    EXPECT_NE(embedder.embed("sail boats"), embedder.embed("boats sail"));  // bigrams see order
}

TEST(HashedEmbedder, EmptyOrStopwordOnlyTextIsZero) {
    const HashedEmbedder embedder(32);
    for (const char* text : {"", "   ", "?!", "is it the"}) {
        const std::vector<float> v = embedder.embed(text);
        EXPECT_EQ(dot(v, v), 0.0F) << text;
        EXPECT_TRUE(embedder.features(text).empty()) << text;
    }
}

TEST(HashedEmbedder, OverlapScoresHigherThanUnrelatedText) {
    const HashedEmbedder embedder;
    const auto query = embedder.embed("Where does my sister work as a biologist?");
    const auto related = embedder.embed("My sister works as a marine biologist in Lisbon.");
    const auto unrelated = embedder.embed("The train to Porto leaves at nine tomorrow morning.");
    EXPECT_GT(dot(query, related), dot(query, unrelated) + 0.2F);
}

TEST(VectorIndex, ExactSearchFindsNearestAndRespectsK) {
    VectorIndex index({.dim = 4});
    index.add(10, std::vector<float>{1, 0, 0, 0});
    index.add(11, std::vector<float>{0, 1, 0, 0});
    index.add(12, std::vector<float>{0.6F, 0.8F, 0, 0});
    EXPECT_EQ(index.size(), 3U);
    EXPECT_FALSE(index.is_approximate());

    const auto hits = index.search(std::vector<float>{0, 1, 0, 0}, 2);
    ASSERT_EQ(hits.size(), 2U);
    EXPECT_EQ(hits[0].id, 11);
    EXPECT_NEAR(hits[0].score, 1.0F, 1e-6F);
    EXPECT_EQ(hits[1].id, 12);
    EXPECT_NEAR(hits[1].score, 0.8F, 1e-6F);

    // More than held, or none at all.
    EXPECT_EQ(index.search(std::vector<float>{1, 0, 0, 0}, 50).size(), 3U);
    EXPECT_TRUE(index.search(std::vector<float>{1, 0, 0, 0}, 0).empty());
}

TEST(VectorIndex, ReplaceRemoveAndClear) {
    VectorIndex index({.dim = 2});
    index.add(1, std::vector<float>{1, 0});
    index.add(2, std::vector<float>{0, 1});
    index.add(1, std::vector<float>{0, 1});  // replaces, does not add
    EXPECT_EQ(index.size(), 2U);
    EXPECT_NEAR(index.search(std::vector<float>{1, 0}, 1).at(0).score, 0.0F, 1e-6F);

    EXPECT_TRUE(index.remove(2));
    EXPECT_FALSE(index.remove(2));
    EXPECT_FALSE(index.remove(99));
    EXPECT_EQ(index.size(), 1U);
    EXPECT_EQ(index.search(std::vector<float>{0, 1}, 5).at(0).id, 1);

    index.clear();
    EXPECT_EQ(index.size(), 0U);
    EXPECT_TRUE(index.search(std::vector<float>{0, 1}, 5).empty());
}

TEST(VectorIndex, GrowsPastItsInitialCapacity) {
    Rng rng(7);
    VectorIndex index({.dim = 8});
    std::vector<std::vector<float>> stored;
    for (int i = 0; i < 3000; ++i) {
        stored.push_back(random_unit(rng, 8));
        index.add(i, stored.back());
    }
    EXPECT_EQ(index.size(), 3000U);
    EXPECT_FALSE(index.is_approximate());
    EXPECT_EQ(index.search(stored[2999], 1).at(0).id, 2999);
    EXPECT_EQ(index.search(stored[5], 1).at(0).id, 5);
}

// The HNSW path against exact search: same vectors, a threshold low enough to switch.
TEST(VectorIndex, HnswAgreesWithExactSearch) {
    constexpr int k_dim = 64;
    constexpr int k_count = 5000;
    Rng rng(42);
    VectorIndex exact({.dim = k_dim, .hnsw_threshold = 1'000'000});
    VectorIndex approximate({.dim = k_dim, .hnsw_threshold = 1000});
    std::vector<std::vector<float>> stored;
    for (int i = 0; i < k_count; ++i) {
        stored.push_back(random_unit(rng, k_dim));
        exact.add(i, stored.back());
        approximate.add(i, stored.back());
        if (i == 999) {
            EXPECT_FALSE(approximate.is_approximate());
        }
    }
    EXPECT_TRUE(approximate.is_approximate());
    EXPECT_FALSE(exact.is_approximate());
    EXPECT_EQ(approximate.size(), static_cast<std::size_t>(k_count));

    // Queries near stored vectors have one clear answer: both must find it.
    int near_agree = 0;
    int random_agree = 0;
    constexpr int k_queries = 200;
    for (int q = 0; q < k_queries; ++q) {
        const std::size_t target = rng.below(k_count);
        std::vector<float> query = stored[target];
        for (float& x : query) x += static_cast<float>((rng.unit() - 0.5) * 0.05);
        l2_normalize(query);
        const auto e = exact.search(query, 10);
        const auto a = approximate.search(query, 10);
        ASSERT_EQ(e.size(), 10U);
        ASSERT_EQ(a.size(), 10U);
        EXPECT_EQ(e[0].id, static_cast<std::int64_t>(target));
        near_agree += e[0].id == a[0].id ? 1 : 0;
        for (std::size_t i = 1; i < a.size(); ++i) EXPECT_GE(a[i - 1].score, a[i].score);

        const auto r = random_unit(rng, k_dim);
        random_agree += exact.search(r, 1).at(0).id == approximate.search(r, 1).at(0).id ? 1 : 0;
    }
    EXPECT_EQ(near_agree, k_queries);
    // Random queries in 64 dimensions have many near-ties; HNSW may miss a few.
    EXPECT_GE(random_agree, k_queries * 9 / 10);

    // Removal and replacement work on the HNSW side too.
    EXPECT_TRUE(approximate.remove(17));
    EXPECT_EQ(approximate.size(), static_cast<std::size_t>(k_count - 1));
    EXPECT_NE(approximate.search(stored[17], 1).at(0).id, 17);
    approximate.add(17, stored[17]);
    EXPECT_EQ(approximate.search(stored[17], 1).at(0).id, 17);
    EXPECT_EQ(approximate.size(), static_cast<std::size_t>(k_count));

    approximate.clear();
    EXPECT_FALSE(approximate.is_approximate());
    EXPECT_EQ(approximate.size(), 0U);
}

}  // namespace
}  // namespace memfail::memory

// SPDX-License-Identifier: MIT
// VectorIndex in each of its modes (exact, the column scan, HNSW over int8 codes with re-scoring,
// HNSW over floats): recall against exact search on hashed text vectors, describe(), and
// remove/replace/clear.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <memfail/core/rng.hpp>
#include <memfail/memory/embedder.hpp>
#include <memfail/memory/vector_index.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using test::dot;

// Sentences of made-up words drawn with a skew (a few words are common, most are rare), hashed as
// the `hashed` retriever does: near-orthogonal 512-dimension vectors, the hard case for graphs.
struct HashedCorpus {
    std::vector<std::vector<float>> vectors;
    std::vector<std::vector<float>> queries;  // a few words of one stored sentence each
};

HashedCorpus hashed_corpus(std::size_t count, std::size_t queries) {
    Rng rng(2026);
    std::vector<std::string> words;
    const std::vector<std::string> syllables = {"ba", "ko", "ri", "tu", "ne", "sa", "lo", "mi",
                                                "de", "ga", "pu", "ve", "zo", "fi", "ha", "ju"};
    for (int i = 0; i < 3000; ++i) {
        std::string w;
        for (int s = 0; s < 3; ++s) w += rng.pick(syllables);
        words.push_back(w);
    }
    auto word = [&]() -> const std::string& {
        // Skewed: the square of a uniform draw favours the first words.
        const double u = rng.unit();
        return words[static_cast<std::size_t>(u * u * double(words.size()))];
    };
    const HashedEmbedder embedder;
    HashedCorpus corpus;
    std::vector<std::vector<std::string>> sentences;
    for (std::size_t i = 0; i < count; ++i) {
        std::vector<std::string> sentence;
        const auto length = rng.between(6, 12);
        std::string text;
        for (std::int64_t w = 0; w < length; ++w) {
            sentence.push_back(word());
            text += sentence.back() + " ";
        }
        corpus.vectors.push_back(embedder.embed(text));
        sentences.push_back(std::move(sentence));
    }
    for (std::size_t q = 0; q < queries; ++q) {
        std::vector<std::string> sentence = sentences[rng.below(count)];
        rng.shuffle(sentence);
        std::string text;
        for (std::size_t w = 0; w < 3; ++w) text += sentence[w] + " ";
        corpus.queries.push_back(embedder.embed(text));
    }
    return corpus;
}

// Share of exact search's top 10 that `index` also returns in its top 10.
double recall_at_10(const VectorIndex& index, const VectorIndex& exact, const HashedCorpus& corpus) {
    std::size_t found = 0;
    std::size_t wanted = 0;
    for (const auto& query : corpus.queries) {
        std::set<std::int64_t> truth;
        for (const VectorMatch& m : exact.search(query, 10)) truth.insert(m.id);
        for (const VectorMatch& m : index.search(query, 10)) found += truth.count(m.id);
        wanted += truth.size();
    }
    return double(found) / double(wanted);
}

VectorIndexOptions quantized(std::size_t threshold) {
    return {.dim = HashedEmbedder::k_default_dim, .hnsw_threshold = threshold};
}

VectorIndexOptions columns(std::size_t threshold, std::size_t budget = ColumnIndexOptions{}.budget) {
    VectorIndexOptions options{.dim = HashedEmbedder::k_default_dim, .large = LargeIndex::columns,
                               .hnsw_threshold = threshold};
    options.columns.budget = budget;
    return options;
}

VectorIndexOptions floats(std::size_t threshold) {
    VectorIndexOptions options = quantized(threshold);
    options.hnsw_quantize = false;
    return options;
}

TEST(VectorIndexModes, RecallAgainstExactSearchOnHashedVectors) {
    const HashedCorpus corpus = hashed_corpus(2000, 100);
    VectorIndex exact({.dim = HashedEmbedder::k_default_dim, .hnsw_threshold = 1'000'000});
    VectorIndex int8(quantized(200));
    VectorIndex f32(floats(200));
    for (std::size_t i = 0; i < corpus.vectors.size(); ++i) {
        const auto id = static_cast<std::int64_t>(i);
        exact.add(id, corpus.vectors[i]);
        int8.add(id, corpus.vectors[i]);
        f32.add(id, corpus.vectors[i]);
    }
    ASSERT_FALSE(exact.is_approximate());
    ASSERT_TRUE(int8.is_approximate());
    ASSERT_TRUE(f32.is_approximate());
    const double int8_recall = recall_at_10(int8, exact, corpus);
    const double f32_recall = recall_at_10(f32, exact, corpus);
    RecordProperty("int8_recall", std::to_string(int8_recall));
    RecordProperty("f32_recall", std::to_string(f32_recall));
    EXPECT_GE(int8_recall, 0.95);
    EXPECT_GE(f32_recall, 0.95);

    // Re-scoring returns exact scores, best first, even though the graph ranks by int8 codes.
    for (std::size_t q = 0; q < 20; ++q) {
        const auto hits = int8.search(corpus.queries[q], 10);
        ASSERT_EQ(hits.size(), 10U);
        for (std::size_t i = 0; i < hits.size(); ++i) {
            EXPECT_NEAR(hits[i].score, dot(corpus.queries[q], corpus.vectors[static_cast<std::size_t>(hits[i].id)]),
                        1e-5F);
            if (i > 0) {
                EXPECT_GE(hits[i - 1].score, hits[i].score);
            }
        }
    }
}

// The column scan ranks by the query's heaviest dimensions only when the store is large (a budget
// of codes per search); budget 1 forces that narrowest scan (16 dimensions) on a small store.
TEST(VectorIndexModes, ColumnScanRecallAgainstExactSearchOnHashedVectors) {
    const HashedCorpus corpus = hashed_corpus(3000, 150);
    VectorIndex exact({.dim = HashedEmbedder::k_default_dim, .hnsw_threshold = 1'000'000});
    VectorIndex wide(columns(200));
    VectorIndex narrow(columns(200, 1));
    for (std::size_t i = 0; i < corpus.vectors.size(); ++i) {
        const auto id = static_cast<std::int64_t>(i);
        exact.add(id, corpus.vectors[i]);
        wide.add(id, corpus.vectors[i]);
        narrow.add(id, corpus.vectors[i]);
    }
    ASSERT_TRUE(wide.is_approximate());
    EXPECT_EQ(wide.describe().rfind("columns(int8,dims=512/512,pool=256,", 0), 0U) << wide.describe();
    EXPECT_EQ(narrow.describe().rfind("columns(int8,dims=16/512,pool=256,", 0), 0U) << narrow.describe();
    EXPECT_EQ(wide.ef_search(), 0U);
    const double wide_recall = recall_at_10(wide, exact, corpus);
    const double narrow_recall = recall_at_10(narrow, exact, corpus);
    RecordProperty("wide_recall", std::to_string(wide_recall));
    RecordProperty("narrow_recall", std::to_string(narrow_recall));
    EXPECT_GE(wide_recall, 0.999);
    EXPECT_GE(narrow_recall, 0.97);
    // Scores are the floats' own, best first, ties by id.
    for (std::size_t q = 0; q < 30; ++q) {
        const auto hits = narrow.search(corpus.queries[q], 10);
        ASSERT_EQ(hits.size(), 10U);
        for (std::size_t i = 0; i < hits.size(); ++i) {
            EXPECT_NEAR(hits[i].score, dot(corpus.queries[q], corpus.vectors[static_cast<std::size_t>(hits[i].id)]),
                        1e-5F);
            if (i > 0) {
                EXPECT_TRUE(hits[i - 1].score > hits[i].score ||
                            (hits[i - 1].score == hits[i].score && hits[i - 1].id < hits[i].id));
            }
        }
    }
}

// The scan's candidates must not depend on the CPU: the portable kernel returns what AVX2 does.
TEST(VectorIndexModes, ColumnScanGivesTheSameAnswersWithoutAvx2) {
    const HashedCorpus corpus = hashed_corpus(2500, 60);
    VectorIndex fast(columns(100, 1));
    VectorIndexOptions options = columns(100, 1);
    options.columns.use_avx2 = false;
    VectorIndex portable(options);
    for (std::size_t i = 0; i < corpus.vectors.size(); ++i) {
        fast.add(static_cast<std::int64_t>(i), corpus.vectors[i]);
        portable.add(static_cast<std::int64_t>(i), corpus.vectors[i]);
    }
    EXPECT_NE(portable.describe().find(",portable)"), std::string::npos) << portable.describe();
    for (const auto& query : corpus.queries) {
        const auto a = fast.search(query, 10);
        const auto b = portable.search(query, 10);
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            EXPECT_EQ(a[i].id, b[i].id);
            EXPECT_EQ(a[i].score, b[i].score);
        }
    }
}

// Fewer dimensions as the store grows, never fewer than min_dims or more than the vector has.
TEST(VectorIndexModes, ColumnScanNarrowsWithSize) {
    Rng rng(21);
    VectorIndex index(columns(10, 100'000));
    std::vector<std::size_t> scanned;
    for (int i = 0; i < 12'000; ++i) {
        std::vector<float> v(HashedEmbedder::k_default_dim);
        for (float& x : v) x = static_cast<float>(rng.unit() - 0.5);
        l2_normalize(v);
        index.add(i, v);
        if (i + 1 == 100 || i + 1 == 1000 || i + 1 == 5000 || i + 1 == 12'000) {
            const std::string d = index.describe();
            const auto at = d.find("dims=");
            ASSERT_NE(at, std::string::npos) << d;
            scanned.push_back(std::stoul(d.substr(at + 5)));
        }
    }
    EXPECT_EQ(scanned, (std::vector<std::size_t>{512, 100, 20, 16}));

    VectorIndexOptions small{.dim = 8, .large = LargeIndex::columns, .hnsw_threshold = 4};
    small.columns.budget = 1;
    VectorIndex eight(small);
    for (int i = 0; i < 40; ++i) {
        std::vector<float> v(8, 0.0F);
        v[static_cast<std::size_t>(i % 8)] = 1.0F;
        eight.add(i, v);
    }
    EXPECT_EQ(eight.describe().rfind("columns(int8,dims=8/8,", 0), 0U) << eight.describe();
    // A zero query ranks nothing above anything: it still answers k, all scored 0.
    const auto none = eight.search(std::vector<float>(8, 0.0F), 5);
    ASSERT_EQ(none.size(), 5U);
    for (const VectorMatch& m : none) EXPECT_EQ(m.score, 0.0F);
}

// Removing moves the last vector into the hole; across blocks (2,048 vectors each) every vector
// left must still be found under its own id with its own score, and an emptied block is dropped.
TEST(VectorIndexModes, ColumnScanRemovalsAcrossBlocks) {
    Rng rng(8);
    VectorIndex index({.dim = 64, .large = LargeIndex::columns, .hnsw_threshold = 20});
    std::vector<std::vector<float>> stored;
    for (int i = 0; i < 4200; ++i) {
        std::vector<float> v(64);
        for (float& x : v) x = static_cast<float>(rng.unit() - 0.5);
        l2_normalize(v);
        stored.push_back(v);
        index.add(i, v);
    }
    std::set<int> removed;
    for (int i = 0; i < 4200; i += 19) removed.insert(i);  // 222 of them, from every block
    removed.insert(4199);
    for (const int id : removed) ASSERT_TRUE(index.remove(id)) << id;
    ASSERT_EQ(index.size(), 4200U - removed.size());
    for (int id = 0; id < 4200; id += 7) {
        const auto top = index.search(stored[static_cast<std::size_t>(id)], 3);
        ASSERT_FALSE(top.empty());
        if (removed.count(id) != 0) {
            for (const VectorMatch& m : top) EXPECT_NE(m.id, id);
        } else {
            EXPECT_EQ(top[0].id, id);
            EXPECT_NEAR(top[0].score, 1.0F, 1e-5F);
        }
    }
    // Back under their ids, at the end of the store.
    for (const int id : removed) index.add(id, stored[static_cast<std::size_t>(id)]);
    EXPECT_EQ(index.size(), 4200U);
    for (const int id : removed) EXPECT_EQ(index.search(stored[static_cast<std::size_t>(id)], 1).at(0).id, id);
}

TEST(VectorIndexModes, DescribeNamesTheModeAndItsSettings) {
    Rng rng(5);
    VectorIndex int8(quantized(10));
    VectorIndex f32(floats(10));
    VectorIndexOptions fixed = quantized(10);
    fixed.hnsw_ef_search = 77;
    VectorIndex pinned(fixed);
    EXPECT_EQ(int8.describe().rfind("exact(f32,", 0), 0U) << int8.describe();
    EXPECT_EQ(int8.ef_search(), 0U);
    for (int i = 0; i < 11; ++i) {
        std::vector<float> v(HashedEmbedder::k_default_dim);
        for (float& x : v) x = static_cast<float>(rng.unit() - 0.5);
        l2_normalize(v);
        int8.add(i, v);
        f32.add(i, v);
        pinned.add(i, v);
    }
    const std::string a = int8.describe();
    EXPECT_EQ(a.rfind("hnsw(int8,M=32,", 0), 0U) << a;
    EXPECT_NE(a.find(",ef=" + std::to_string(int8.ef_search()) + ","), std::string::npos) << a;
    EXPECT_NE(a.find(")+rescore(f32,pool=64)"), std::string::npos) << a;
    const std::string b = f32.describe();
    EXPECT_EQ(b.rfind("hnsw(f32,", 0), 0U) << b;
    EXPECT_EQ(b.find("rescore"), std::string::npos) << b;
    EXPECT_EQ(pinned.ef_search(), 77U);
    EXPECT_NE(pinned.describe().find(",ef=77,"), std::string::npos) << pinned.describe();
    int8.clear();
    EXPECT_EQ(int8.describe().rfind("exact(", 0), 0U) << int8.describe();
}

// The same sequence of adds, replacements and removals in every mode.
void exercise_remove_replace_clear(VectorIndex& index, bool approximate) {
    Rng rng(11);
    constexpr int k_count = 400;
    std::vector<std::vector<float>> stored;
    for (int i = 0; i < k_count; ++i) {
        std::vector<float> v(static_cast<std::size_t>(index.dim()));
        for (float& x : v) x = static_cast<float>(rng.unit() - 0.5);
        l2_normalize(v);
        stored.push_back(v);
        index.add(i, v);
    }
    ASSERT_EQ(index.is_approximate(), approximate);
    ASSERT_EQ(index.size(), static_cast<std::size_t>(k_count));
    EXPECT_EQ(index.search(stored[3], 1).at(0).id, 3);

    // Removed: gone from results and from the count; removing again says so.
    EXPECT_TRUE(index.remove(3));
    EXPECT_FALSE(index.remove(3));
    EXPECT_FALSE(index.remove(k_count + 5));
    EXPECT_EQ(index.size(), static_cast<std::size_t>(k_count - 1));
    for (const VectorMatch& m : index.search(stored[3], 10)) EXPECT_NE(m.id, 3);

    // Re-added under the same id: found again, with its exact score.
    index.add(3, stored[3]);
    EXPECT_EQ(index.size(), static_cast<std::size_t>(k_count));
    auto top = index.search(stored[3], 1);
    ASSERT_EQ(top.size(), 1U);
    EXPECT_EQ(top[0].id, 3);
    EXPECT_NEAR(top[0].score, 1.0F, 1e-5F);

    // Replaced by another vector: id 7 now answers for stored[8]'s direction, not its own.
    index.add(7, stored[8]);
    EXPECT_EQ(index.size(), static_cast<std::size_t>(k_count));
    const auto hits = index.search(stored[8], 2);
    ASSERT_EQ(hits.size(), 2U);
    EXPECT_EQ(std::min(hits[0].id, hits[1].id), 7);
    EXPECT_EQ(std::max(hits[0].id, hits[1].id), 8);
    EXPECT_NEAR(hits[1].score, 1.0F, 1e-5F);
    for (const VectorMatch& m : index.search(stored[7], 5)) {
        if (m.id == 7) {
            EXPECT_NEAR(m.score, dot(stored[7], stored[8]), 1e-5F);
        }
    }

    // k larger than what is held: at most everything held (exactly that while exact).
    const std::size_t all = index.search(stored[0], k_count * 2).size();
    if (approximate) {
        EXPECT_LE(all, static_cast<std::size_t>(k_count));
    } else {
        EXPECT_EQ(all, static_cast<std::size_t>(k_count));
    }

    index.clear();
    EXPECT_EQ(index.size(), 0U);
    EXPECT_FALSE(index.is_approximate());
    EXPECT_TRUE(index.search(stored[0], 5).empty());
    index.add(1, stored[1]);
    EXPECT_EQ(index.search(stored[1], 5).at(0).id, 1);
}

TEST(VectorIndexModes, RemoveReplaceClearWhileExact) {
    VectorIndex index({.dim = 48, .hnsw_threshold = 10'000});
    exercise_remove_replace_clear(index, false);
    EXPECT_EQ(index.describe().rfind("exact(", 0), 0U);
}

TEST(VectorIndexModes, RemoveReplaceClearOverInt8Codes) {
    VectorIndex index({.dim = 48, .hnsw_threshold = 50});  // 48: codes padded to 64
    exercise_remove_replace_clear(index, true);
}

TEST(VectorIndexModes, RemoveReplaceClearOverColumns) {
    VectorIndex index({.dim = 48, .large = LargeIndex::columns, .hnsw_threshold = 50});
    exercise_remove_replace_clear(index, true);
    VectorIndexOptions narrow{.dim = 48, .large = LargeIndex::columns, .hnsw_threshold = 50};
    narrow.columns.budget = 1;  // 16 of the 48 dimensions
    VectorIndex partial(narrow);
    exercise_remove_replace_clear(partial, true);
}

TEST(VectorIndexModes, RemoveReplaceClearOverFloats) {
    VectorIndexOptions options{.dim = 48, .hnsw_threshold = 50};
    options.hnsw_quantize = false;
    VectorIndex index(options);
    exercise_remove_replace_clear(index, true);
}

// A removed element that comes back after the graph has grown (hnswlib resized it) keeps its
// number, so its floats must be found where they were.
TEST(VectorIndexModes, ReaddAfterGrowthKeepsExactScores) {
    Rng rng(3);
    VectorIndex index({.dim = 64, .hnsw_threshold = 20});
    std::vector<std::vector<float>> stored;
    for (int i = 0; i < 2500; ++i) {
        std::vector<float> v(64);
        for (float& x : v) x = static_cast<float>(rng.unit() - 0.5);
        l2_normalize(v);
        stored.push_back(v);
        index.add(i, v);
        if (i == 30) {
            EXPECT_TRUE(index.remove(25));
        }
    }
    index.add(25, stored[25]);
    for (const int id : {0, 25, 1023, 1024, 2499}) {
        const auto top = index.search(stored[static_cast<std::size_t>(id)], 1);
        ASSERT_EQ(top.size(), 1U);
        EXPECT_EQ(top[0].id, id);
        EXPECT_NEAR(top[0].score, 1.0F, 1e-5F);
    }
}

}  // namespace
}  // namespace memfail::memory

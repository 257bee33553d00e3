// SPDX-License-Identifier: MIT
// Bm25Retriever::set_excluded: excluded rows never come back, the rest keep their scores and order.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <memfail/core/rng.hpp>
#include <memfail/memory/retriever.hpp>
#include <memfail/store/database.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using test::ok;

// Common words in most rows and rare ones in few, so queries take both MaxScore paths: the rarest
// words fill k at once, or every word must be scored.
std::string row_text(Rng& rng, const std::vector<std::string>& common, const std::vector<std::string>& rare) {
    std::string out;
    const auto length = rng.between(3, 12);
    for (std::int64_t i = 0; i < length; ++i) {
        if (!out.empty()) out += " ";
        out += rng.chance(0.7) ? rng.pick(common) : rng.pick(rare);
    }
    return out;
}

// The first k rows of the unfiltered ranking that the predicate keeps.
std::vector<RetrievedRow> kept_prefix(const std::vector<RetrievedRow>& all, const std::set<std::int64_t>& excluded,
                                      int k) {
    std::vector<RetrievedRow> out;
    for (const auto& row : all) {
        if (excluded.count(row.rowid) != 0) continue;
        if (static_cast<int>(out.size()) == k) break;
        out.push_back(row);
    }
    return out;
}

TEST(Bm25Excluded, SearchesSkipExcludedRowsAndKeepEveryOtherScore) {
    Rng rng(4242);
    const std::vector<std::string> common = {"lives", "today", "coffee", "lisbon", "likes", "works", "sister"};
    std::vector<std::string> rare;
    for (int i = 0; i < 300; ++i) rare.push_back("word" + std::to_string(i));
    auto db = ok(store::Database::open(":memory:"));
    auto bm25 = ok(Bm25Retriever::open(db));
    constexpr std::int64_t k_rows = 2000;
    {
        auto txn = ok(store::Transaction::begin(db));
        for (std::int64_t row = 1; row <= k_rows; ++row) ok(bm25->add(row, row_text(rng, common, rare)));
        ok(txn.commit());
    }
    // Most rows retired, as in a graph whose facts were contradicted again and again.
    std::set<std::int64_t> excluded;
    for (std::int64_t row = 1; row <= k_rows; ++row)
        if (rng.chance(0.8)) excluded.insert(row);
    std::vector<std::string> queries = {"coffee today", "lives lisbon works", "sister likes coffee"};
    for (int i = 0; i < 40; ++i) queries.push_back(row_text(rng, common, rare));

    std::vector<std::vector<RetrievedRow>> unfiltered;
    for (const auto& query : queries) unfiltered.push_back(ok(bm25->search_exhaustive(query, static_cast<int>(k_rows))));
    std::int64_t calls = 0;
    bm25->set_excluded([&](std::int64_t rowid) {
        ++calls;
        return excluded.count(rowid) != 0;
    });
    for (std::size_t q = 0; q < queries.size(); ++q)
        for (const int k : {1, 5, 50}) {
            const auto want = kept_prefix(unfiltered[q], excluded, k);
            for (const bool pruned : {true, false}) {
                const auto got = ok(pruned ? bm25->search(queries[q], k) : bm25->search_exhaustive(queries[q], k));
                ASSERT_EQ(got.size(), want.size()) << queries[q] << " k=" << k << " pruned=" << pruned;
                for (std::size_t i = 0; i < got.size(); ++i) {
                    EXPECT_EQ(got[i].rowid, want[i].rowid) << queries[q] << " k=" << k << " rank " << i;
                    // Excluded rows still count in IDF and the average length: scores to the bit.
                    EXPECT_EQ(got[i].score, want[i].score) << queries[q] << " k=" << k << " rank " << i;
                }
            }
        }
    EXPECT_GT(calls, 0);
    // Cleared, every row can come back again.
    bm25->set_excluded(nullptr);
    const auto all = ok(bm25->search("coffee", 50));
    bool any_excluded = false;
    for (const auto& row : all) any_excluded = any_excluded || excluded.count(row.rowid) != 0;
    EXPECT_TRUE(any_excluded);
}

TEST(Bm25Excluded, FewerKeptRowsThanAskedForReturnsOnlyThose) {
    auto db = ok(store::Database::open(":memory:"));
    auto bm25 = ok(Bm25Retriever::open(db));
    {
        auto txn = ok(store::Transaction::begin(db));
        for (std::int64_t row = 1; row <= 40; ++row) ok(bm25->add(row, row % 10 == 0 ? "rain in lisbon" : "rain again"));
        ok(txn.commit());
    }
    bm25->set_excluded([](std::int64_t rowid) { return rowid % 10 != 0; });
    const auto got = ok(bm25->search("rain", 20));
    ASSERT_EQ(got.size(), 4U);
    for (const auto& row : got) EXPECT_EQ(row.rowid % 10, 0);
}

}  // namespace
}  // namespace memfail::memory

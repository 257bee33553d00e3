// SPDX-License-Identifier: MIT
// Bm25Retriever::search (MaxScore over postings kept in RAM) against FTS5 scoring every matching
// row, on random corpora.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <memfail/core/rng.hpp>
#include <memfail/memory/retriever.hpp>
#include <memfail/store/database.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using test::ok;

// A vocabulary of made-up stems with English endings, so porter folds some query words onto the
// same token ("darvel", "darvels", "darveling") and a query can name one token twice.
std::vector<std::string> vocabulary(Rng& rng, std::size_t size) {
    static const std::vector<std::string> syllables = {"ka", "dar", "vel", "mo", "ri", "tan", "shu", "pel",
                                                       "ost", "ne", "lum", "bra", "gi", "fo", "zen", "qua"};
    static const std::vector<std::string> endings = {"", "", "", "s", "ing", "ed"};
    std::vector<std::string> out;
    while (out.size() < size) {
        std::string word;
        const auto parts = rng.between(1, 3);
        for (std::int64_t i = 0; i < parts; ++i) word += rng.pick(syllables);
        out.push_back(word + rng.pick(endings));
    }
    return out;
}

// Zipf-like: a few words in most rows (as a chat history repeats "lives", "today", city names),
// most words rare.
const std::string& draw(Rng& rng, const std::vector<std::string>& words) {
    const double u = rng.unit();
    return words[static_cast<std::size_t>(u * u * u * static_cast<double>(words.size()))];
}

std::string sentence(Rng& rng, const std::vector<std::string>& words, int low, int high) {
    std::string out;
    const auto length = rng.between(low, high);
    for (std::int64_t i = 0; i < length; ++i) {
        if (!out.empty()) out += rng.chance(0.1) ? ", " : " ";
        out += draw(rng, words);
    }
    return out;
}

void expect_same(const std::vector<RetrievedRow>& got, const std::vector<RetrievedRow>& want, const std::string& query,
                 int k) {
    ASSERT_EQ(got.size(), want.size()) << query << " k=" << k;
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].rowid, want[i].rowid) << query << " k=" << k << " rank " << i;
        EXPECT_EQ(got[i].score, want[i].score) << query << " k=" << k << " rank " << i;  // to the bit
    }
}

TEST(Bm25TopK, PrunedSearchEqualsExhaustiveOnRandomCorpora) {
    std::int64_t pruned_rows = 0, exhaustive_rows = 0;
    for (const std::uint64_t seed : {11U, 12U, 13U}) {
        Rng rng(seed);
        const auto words = vocabulary(rng, 400);
        test::TempDir dir;
        const std::string path = dir.path() + "/bm25.sqlite";
        std::vector<std::string> queries;
        for (int i = 0; i < 60; ++i) queries.push_back(sentence(rng, words, 1, 7));
        queries.push_back("nothingmatchesthis " + words[0]);
        queries.push_back(words[0] + " " + words[0] + "s " + words[1]);

        auto db = ok(store::Database::open(path));
        {
            auto bm25 = ok(Bm25Retriever::open(db));
            auto txn = ok(store::Transaction::begin(db));
            for (std::int64_t row = 1; row <= 1500; ++row) ok(bm25->add(row, sentence(rng, words, 2, 24)));
            ok(txn.commit());
            for (const auto& query : queries)
                for (const int k : {1, 5, 10, 40}) {
                    const auto want = ok(bm25->search_exhaustive(query, k));
                    exhaustive_rows += bm25->last_rows_scored();
                    const auto got = ok(bm25->search(query, k));
                    pruned_rows += bm25->last_rows_scored();
                    expect_same(got, want, query, k);
                }
        }
        // Reopened, the document frequencies come back from FTS5's vocabulary: same answers.
        auto reopened = ok(Bm25Retriever::open(db));
        for (std::size_t i = 0; i < queries.size(); i += 7)
            expect_same(ok(reopened->search(queries[i], 5)), ok(reopened->search_exhaustive(queries[i], 5)),
                        queries[i], 5);
    }
    // The point of it: far fewer rows are scored.
    RecordProperty("rows_scored_pruned", std::to_string(pruned_rows));
    RecordProperty("rows_scored_exhaustive", std::to_string(exhaustive_rows));
    EXPECT_LT(pruned_rows * 2, exhaustive_rows);
}

// Many rows with the very same text tie to the bit; FTS5 breaks ties by rowid. Rows added in a
// shuffled rowid order get RAM row numbers in add order, and after reopening in rowid order: the
// ranking must not depend on either.
TEST(Bm25TopK, TiesAndRowsAddedOutOfRowidOrderRankAsFts5Does) {
    Rng rng(77);
    std::vector<std::int64_t> rowids;
    for (std::int64_t row = 1; row <= 600; ++row) rowids.push_back(row * 7 % 601 + 1000);
    const std::vector<std::string> texts = {"rain in lisbon", "rain in porto today", "sunny lisbon", "rain rain"};
    test::TempDir dir;
    const std::string path = dir.path() + "/ties.sqlite";
    auto db = ok(store::Database::open(path));
    const std::vector<std::string> queries = {"rain", "lisbon rain", "porto", "sunny today rain", "lisbon"};
    {
        auto bm25 = ok(Bm25Retriever::open(db));
        auto txn = ok(store::Transaction::begin(db));
        for (const std::int64_t rowid : rowids) ok(bm25->add(rowid, rng.pick(texts)));
        ok(txn.commit());
        for (const auto& query : queries)
            for (const int k : {1, 3, 10, 100})
                expect_same(ok(bm25->search(query, k)), ok(bm25->search_exhaustive(query, k)), query, k);
    }
    auto reopened = ok(Bm25Retriever::open(db));
    for (const auto& query : queries)
        for (const int k : {1, 10, 100})
            expect_same(ok(reopened->search(query, k)), ok(reopened->search_exhaustive(query, k)), query, k);
    // Ties do exist here: the first ten rows for "lisbon" share one score.
    const auto top = ok(reopened->search("lisbon", 10));
    ASSERT_EQ(top.size(), 10U);
    EXPECT_EQ(top.front().score, top.back().score);
    for (std::size_t i = 1; i < top.size(); ++i) EXPECT_LT(top[i - 1].rowid, top[i].rowid);
}

TEST(Bm25TopK, RolledBackAddsLeaveNoFrequencies) {
    auto db = ok(store::Database::open(":memory:"));
    auto bm25 = ok(Bm25Retriever::open(db));
    {
        auto txn = ok(store::Transaction::begin(db));
        for (std::int64_t row = 1; row <= 30; ++row)
            ok(bm25->add(row, row % 3 == 0 ? "rain in lisbon today" : "sunny day in porto"));
        ok(txn.commit());
    }
    {
        auto txn = ok(store::Transaction::begin(db));
        for (std::int64_t row = 31; row <= 60; ++row) ok(bm25->add(row, "rain rain rain"));
        // Dropped without commit: rolled back.
    }
    ok(bm25->reload());
    const auto got = ok(bm25->search("rain in porto", 10));
    expect_same(got, ok(bm25->search_exhaustive("rain in porto", 10)), "rain in porto", 10);
    for (const auto& row : got) EXPECT_LE(row.rowid, 30);
}

}  // namespace
}  // namespace memfail::memory

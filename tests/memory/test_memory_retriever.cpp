// SPDX-License-Identifier: MIT
// BM25 and hashed retrievers directly over a SQLite database.
#include <gtest/gtest.h>

#include <memfail/core/text.hpp>
#include <memfail/memory/retriever.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory {
namespace {

using test::ok;

const std::vector<std::string> k_corpus = {
    "My sister Priya moved to Lisbon last spring.",                  // 1
    "I only drink coffee when it is raining outside.",               // 2
    "Our dog Biscuit is afraid of thunderstorms.",                   // 3
    "The quarterly budget review moved to Thursday afternoon.",      // 4
    "Priya's new job is at the aquarium, caring for the octopuses.", // 5
    "I started learning the cello in January.",                      // 6
};

template <class R>
void add_corpus(store::Database& db, R& retriever) {
    auto txn = ok(store::Transaction::begin(db));
    for (std::size_t i = 0; i < k_corpus.size(); ++i)
        ok(retriever.add(static_cast<std::int64_t>(i + 1), k_corpus[i]));
    ok(retriever.flush());
    ok(txn.commit());
}

std::vector<std::int64_t> rowids(const std::vector<RetrievedRow>& rows) {
    std::vector<std::int64_t> out;
    for (const RetrievedRow& r : rows) out.push_back(r.rowid);
    return out;
}

TEST(Bm25MatchExpression, QuotesDistinctContentWords) {
    EXPECT_EQ(bm25_match_expression("Who hikes in the rain? Rain!"), "\"hikes\" OR \"rain\"");
    EXPECT_EQ(bm25_match_expression("What is \"Biscuit\" afraid of (NOT thunder)?"),
              "\"biscuit\" OR \"afraid\" OR \"thunder\"");
    EXPECT_EQ(bm25_match_expression("Gideon's AND-gate"), "\"gideons\" OR \"gate\"");
    EXPECT_EQ(bm25_match_expression(""), "");
    EXPECT_EQ(bm25_match_expression("is it the?"), "");
    EXPECT_EQ(bm25_match_expression("\"\" ' ; -- *"), "");
}

TEST(Bm25Retriever, RanksTheMatchingMemoryFirst) {
    auto db = ok(store::Database::open(":memory:"));
    auto bm25 = ok(Bm25Retriever::open(db));
    add_corpus(db, *bm25);
    EXPECT_EQ(ok(bm25->count()), 6);

    EXPECT_EQ(ok(bm25->search("Why is Biscuit scared during thunderstorms?", 3)).at(0).rowid, 3);
    EXPECT_EQ(ok(bm25->search("when do I drink coffee", 3)).at(0).rowid, 2);
    // Porter stemming: "learned" finds "learning".
    EXPECT_EQ(ok(bm25->search("What instrument have I learned?", 3)).at(0).rowid, 6);

    const auto priya = ok(bm25->search("Where does Priya work?", 5));
    ASSERT_EQ(priya.size(), 2U);  // only documents sharing a word come back
    for (std::size_t i = 1; i < priya.size(); ++i) EXPECT_GE(priya[i - 1].score, priya[i].score);
}

// memfail_bm25 must score exactly as FTS5's own bm25() does on an ordinary table of the same text
// (which keeps document lengths itself), only faster.
TEST(Bm25Retriever, ScoresMatchFts5Bm25) {
    auto db = ok(store::Database::open(":memory:"));
    auto bm25 = ok(Bm25Retriever::open(db));
    add_corpus(db, *bm25);
    ok(db.exec("CREATE VIRTUAL TABLE reference USING fts5(text, tokenize='porter unicode61')"));
    for (std::size_t i = 0; i < k_corpus.size(); ++i) {
        auto insert = ok(db.prepare("INSERT INTO reference (rowid, text) VALUES (?, ?)"));
        insert.bind(1, static_cast<std::int64_t>(i + 1)).bind(2, text::normalize(k_corpus[i]));
        ok(insert.run());
    }
    for (const char* query : {"Priya moved to Lisbon", "coffee rain thunderstorms", "the budget moved",
                              "Priya Priya aquarium octopuses cello"}) {
        auto reference = ok(db.prepare("SELECT rowid, -bm25(reference) FROM reference "
                                       "WHERE reference MATCH ? ORDER BY bm25(reference), rowid"));
        reference.bind(1, bm25_match_expression(query));
        const auto ours = ok(bm25->search(query, 10));
        std::size_t i = 0;
        while (ok(reference.step())) {
            ASSERT_LT(i, ours.size()) << query;
            EXPECT_EQ(ours[i].rowid, reference.column_int(0)) << query;
            EXPECT_NEAR(ours[i].score, reference.column_double(1), 1e-9) << query;
            ++i;
        }
        EXPECT_EQ(i, ours.size()) << query;
        EXPECT_GT(i, 0U) << query;
    }
}

TEST(Bm25Retriever, ToleratesPunctuationQuotesAndEmptyQueries) {
    auto db = ok(store::Database::open(":memory:"));
    auto bm25 = ok(Bm25Retriever::open(db));
    add_corpus(db, *bm25);
    for (const char* query : {"", "   ", "?", "is it the", "\"", "''", "NOT", "AND OR", "*", "-", "(",
                              "col:umn", "NEAR(a b)"}) {
        auto hits = bm25->search(query, 3);
        ASSERT_TRUE(hits.has_value()) << query << ": " << hits.error().describe();
    }
    EXPECT_TRUE(ok(bm25->search("is it the?", 3)).empty());
    EXPECT_EQ(ok(bm25->search("\"Biscuit\" (thunderstorms) -- OR NOT*", 1)).at(0).rowid, 3);
    EXPECT_EQ(ok(bm25->search("Priya\u2019s job at the aquarium", 1)).at(0).rowid, 5);
}

TEST(Bm25Retriever, RespectsKAndClears) {
    auto db = ok(store::Database::open(":memory:"));
    auto bm25 = ok(Bm25Retriever::open(db));
    add_corpus(db, *bm25);
    EXPECT_EQ(ok(bm25->search("Priya moved coffee", 1)).size(), 1U);
    EXPECT_EQ(ok(bm25->search("Priya moved coffee", 2)).size(), 2U);
    EXPECT_TRUE(ok(bm25->search("Priya", 0)).empty());
    ok(bm25->clear());
    EXPECT_EQ(ok(bm25->count()), 0);
    EXPECT_TRUE(ok(bm25->search("Priya", 3)).empty());
}

TEST(HashedRetriever, RanksOverlappingMemoryFirst) {
    auto db = ok(store::Database::open(":memory:"));
    auto hashed = ok(HashedRetriever::open(db, {.dim = 256}));
    add_corpus(db, *hashed);
    EXPECT_EQ(ok(hashed->count()), 6);
    // Paraphrase-ish: shares stems and character n-grams, not the exact phrasing.
    EXPECT_EQ(ok(hashed->search("Is the dog Biscuit scared of thunder?", 3)).at(0).rowid, 3);
    EXPECT_EQ(ok(hashed->search("coffee drinking on rainy days", 3)).at(0).rowid, 2);
    EXPECT_EQ(ok(hashed->search("what does Priya do at the aquarium?", 3)).at(0).rowid, 5);
    const auto hits = ok(hashed->search("budget review day", 6));
    EXPECT_EQ(hits.at(0).rowid, 4);
    EXPECT_EQ(hits.size(), 6U);
    EXPECT_EQ(ok(hashed->search("budget review day", 2)).size(), 2U);
    EXPECT_TRUE(ok(hashed->search("is it the?", 3)).empty());
}

TEST(HashedRetriever, PersistsVectorsAndFrequencies) {
    test::TempDir dir;
    const std::string path = dir.path() + "/hashed.sqlite";
    std::vector<std::int64_t> before;
    {
        auto db = ok(store::Database::open(path));
        auto hashed = ok(HashedRetriever::open(db, {.dim = 128}));
        add_corpus(db, *hashed);
        before = rowids(ok(hashed->search("Priya Lisbon aquarium", 6)));
    }
    auto db = ok(store::Database::open(path));
    auto hashed = ok(HashedRetriever::open(db, {.dim = 128}));
    EXPECT_EQ(ok(hashed->count()), 6);
    EXPECT_EQ(hashed->index().size(), 6U);
    EXPECT_EQ(rowids(ok(hashed->search("Priya Lisbon aquarium", 6))), before);

    // Another width cannot reuse the stored vectors: the retriever starts empty.
    auto db2 = ok(store::Database::open(path));
    auto wider = ok(HashedRetriever::open(db2, {.dim = 256}));
    EXPECT_EQ(ok(wider->count()), 0);
}

TEST(HashedRetriever, ReloadForgetsRolledBackRows) {
    auto db = ok(store::Database::open(":memory:"));
    auto hashed = ok(HashedRetriever::open(db, {.dim = 64}));
    add_corpus(db, *hashed);
    {
        auto txn = ok(store::Transaction::begin(db));
        ok(hashed->add(100, "A rolled back memory about penguins."));
        EXPECT_EQ(ok(hashed->count()), 7);
    }  // rolled back
    ok(hashed->reload());
    EXPECT_EQ(ok(hashed->count()), 6);
    for (const RetrievedRow& row : ok(hashed->search("penguins", 6))) EXPECT_NE(row.rowid, 100);
}

}  // namespace
}  // namespace memfail::memory

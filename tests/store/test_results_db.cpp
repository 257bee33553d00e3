// SPDX-License-Identifier: MIT
// The SQLite wrapper and the results database.
#include <memfail/store/results_db.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

namespace memfail::store {
namespace {

TEST(Database, TransactionsRollBackUnlessCommitted) {
    auto db = Database::open(":memory:").value();
    ASSERT_TRUE(db.exec("CREATE TABLE t(x INTEGER)").has_value());
    {
        auto tx = Transaction::begin(db).value();
        ASSERT_TRUE(db.exec("INSERT INTO t VALUES(1)").has_value());
    }  // no commit: rolled back
    {
        auto tx = Transaction::begin(db).value();
        ASSERT_TRUE(db.exec("INSERT INTO t VALUES(2)").has_value());
        ASSERT_TRUE(tx.commit().has_value());
    }
    auto s = db.prepare("SELECT group_concat(x) FROM t").value();
    ASSERT_TRUE(s.step().value());
    EXPECT_EQ(s.column_text(0), "2");
}

TEST(Database, ErrorsAreResults) {
    auto db = Database::open(":memory:").value();
    auto bad = db.prepare("SELECT * FROM missing_table");
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().kind, ErrorKind::database);
    EXPECT_NE(bad.error().message.find("missing_table"), std::string::npos);
}

RunRecord record(const std::string& hash) {
    RunRecord r;
    r.system_spec = "verbatim";
    r.config_json = "{}";
    r.config_hash = hash;
    r.code_version = "test";
    return r;
}

TEST(ResultsDb, ProbesAreRecordedOnceAndSummarised) {
    auto db = ResultsDb::open(":memory:").value();
    const auto id = db.create_run(record("h1")).value();
    ASSERT_TRUE(db.upsert_scenario({id, "sc", "long_hop", "abc", 2, 3, "storing"}).has_value());
    ProbeRow ok{"sc", "long_hop", "p1", 5, "mcq", "retrieved", true, "[]", 10, "", {}};
    ok.facts.push_back({"p1-f1", "retrieved", "provenance", "[]", "[]", "[]", "fine"});
    ASSERT_TRUE(db.record_probe(id, ok).has_value());
    ProbeRow miss{"sc", "long_hop", "p2", 5, "mcq", "not_retrieved", false, "[]", 30, "", {}};
    ASSERT_TRUE(db.record_probe(id, miss).has_value());
    ProbeRow abstain{"sc", "long_hop", "p3", 5, "abstain", "needs_answer_stage", false, "[]", 20, "", {}};
    ASSERT_TRUE(db.record_probe(id, abstain).has_value());
    // The same probe twice is refused, and the refused write leaves nothing behind.
    EXPECT_FALSE(db.record_probe(id, ok).has_value());

    const auto graded = db.graded_probes(id, "sc").value();
    EXPECT_EQ(graded.size(), 3u);
    EXPECT_TRUE(graded.count({"p1", 5}));

    const auto rows = db.summary({id}).value();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].graded, 2);
    EXPECT_EQ(rows[0].success, 1);
    EXPECT_EQ(rows[0].not_retrieved, 1);
    EXPECT_EQ(rows[0].needs_answer_stage, 1);

    const auto lat = db.retrieve_latency(id, "long_hop").value();
    EXPECT_EQ(lat.count, 3);
    EXPECT_DOUBLE_EQ(lat.p50_ms, 0.020);
    EXPECT_DOUBLE_EQ(lat.p99_ms, 0.030);
}

TEST(ResultsDb, ResumableRunsAreFoundByConfigHash) {
    auto db = ResultsDb::open(":memory:").value();
    const auto first = db.create_run(record("same")).value();
    ASSERT_TRUE(db.finish_run(first, "finished").has_value());
    EXPECT_FALSE(db.find_resumable("same").value().has_value());
    const auto second = db.create_run(record("same")).value();
    auto found = db.find_resumable("same").value();
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->id, second);
    EXPECT_FALSE(db.find_resumable("other").value().has_value());
}

TEST(ResultsDb, StoredSessionsAreIdempotent) {
    auto db = ResultsDb::open(":memory:").value();
    ASSERT_TRUE(db.record_store(1, "sc", "s1", 5).has_value());
    ASSERT_TRUE(db.record_store(1, "sc", "s1", 9).has_value());
    EXPECT_EQ(db.stored_sessions(1, "sc").value().size(), 1u);
}

TEST(ResultsDb, NewerSchemaIsRefused) {
    const auto path = (std::filesystem::temp_directory_path() /
                       ("memfail-schema-" + std::to_string(::getpid()) + ".db")).string();
    {
        auto db = Database::open(path).value();
        ASSERT_TRUE(db.set_user_version(k_results_schema_version + 1).has_value());
    }
    auto opened = ResultsDb::open(path);
    ASSERT_FALSE(opened.has_value());
    EXPECT_NE(opened.error().message.find("schema version"), std::string::npos);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

}  // namespace
}  // namespace memfail::store

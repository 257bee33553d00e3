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

// A probe row by name: aggregate initialisation would silently shift as the row gains columns.
ProbeRow probe_row(const std::string& probe_id, const std::string& kind, const std::string& stage, bool success,
                   std::int64_t micros) {
    ProbeRow row;
    row.scenario_id = "sc";
    row.dataset = "long_hop";
    row.probe_id = probe_id;
    row.k = 5;
    row.kind = kind;
    row.stage = stage;
    row.memory_success = success;
    row.retrieve_micros = micros;
    return row;
}

TEST(ResultsDb, ProbesAreRecordedOnceAndSummarised) {
    auto db = ResultsDb::open(":memory:").value();
    const auto id = db.create_run(record("h1")).value();
    ASSERT_TRUE(db.upsert_scenario({id, "sc", "long_hop", "abc", 2, 3, "storing"}).has_value());
    ProbeRow ok = probe_row("p1", "mcq", "retrieved", true, 10);
    ok.facts.push_back({"p1-f1", "retrieved", "provenance", "[]", "[]", "[]", "fine"});
    ASSERT_TRUE(db.record_probe(id, ok).has_value());
    ProbeRow miss = probe_row("p2", "mcq", "not_retrieved", false, 30);
    ASSERT_TRUE(db.record_probe(id, miss).has_value());
    ProbeRow abstain = probe_row("p3", "abstain", "needs_answer_stage", false, 20);
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

TEST(ResultsDb, ProbeRowsReadBackWithTheirFactsChecksProbeAndMemories) {
    auto db = ResultsDb::open(":memory:").value();
    const auto id = db.create_run(record("h1")).value();
    // Two ks of one probe and one other probe; rows must come back whole and in order.
    for (int k : {1, 5}) {
        ProbeRow row = probe_row("p1", "open", k == 1 ? "not_retrieved" : "retrieved", k == 5, 10);
        row.k = k;
        row.checkpoint = "s-3";
        row.probe_json = R"({"id":"p1","question":"Where does Ana live </script>?"})";
        row.facts.push_back({"p1-f1", row.stage, "provenance", R"(["m1","m2"])", "[]", "[]", "because"});
        row.checks.push_back({"p1-f1", "retrieval", "rules", k == 5, true, "ranked " + std::to_string(k)});
        row.stored_memories = {{"m1", "Ana lives in Porto", R"(["msg-1"])"}, {"m2", "Ana moved", "[]"}};
        ASSERT_TRUE(db.record_probe(id, row).has_value());
    }
    ProbeRow other = probe_row("p0", "abstain", "needs_answer_stage", false, 5);
    ASSERT_TRUE(db.record_probe(id, other).has_value());

    const auto rows = db.probe_rows(id).value();
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].probe_id, "p0");
    EXPECT_TRUE(rows[0].probe_json.empty());
    EXPECT_TRUE(rows[0].facts.empty());
    EXPECT_EQ(rows[1].probe_id, "p1");
    EXPECT_EQ(rows[1].k, 1);
    EXPECT_EQ(rows[2].k, 5);
    for (int i : {1, 2}) {
        EXPECT_EQ(rows[i].checkpoint, "s-3");
        EXPECT_NE(rows[i].probe_json.find("</script>"), std::string::npos);
        ASSERT_EQ(rows[i].facts.size(), 1u);
        EXPECT_EQ(rows[i].facts[0].stored_json, R"(["m1","m2"])");
        ASSERT_EQ(rows[i].checks.size(), 1u);
    }
    EXPECT_EQ(rows[1].checks[0].reason, "ranked 1");
    EXPECT_FALSE(rows[1].checks[0].passed);
    EXPECT_EQ(rows[2].checks[0].reason, "ranked 5");
    EXPECT_TRUE(rows[2].memory_success);

    // Memories are kept once per checkpoint however many ks named them.
    const auto memories = db.recorded_memories(id).value();
    ASSERT_EQ(memories.size(), 2u);
    EXPECT_EQ(memories[0].memory.id, "m1");
    EXPECT_EQ(memories[0].checkpoint, "s-3");
    EXPECT_EQ(memories[0].memory.text, "Ana lives in Porto");
    EXPECT_EQ(memories[0].memory.sources_json, R"(["msg-1"])");
    // Filtered by scenario: the same rows, or none for another scenario.
    EXPECT_EQ(db.probe_rows(id, "sc").value().size(), 3u);
    EXPECT_TRUE(db.probe_rows(id, "elsewhere").value().empty());
    EXPECT_EQ(db.recorded_memories(id, "sc").value().size(), 2u);
    EXPECT_TRUE(db.recorded_memories(id, "elsewhere").value().empty());
    // Another run sees none of them.
    const auto other_run = db.create_run(record("h2")).value();
    EXPECT_TRUE(db.probe_rows(other_run).value().empty());
    EXPECT_TRUE(db.recorded_memories(other_run).value().empty());
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

TEST(ResultsDb, VersionOneFilesAreMigratedKeepingTheirProbes) {
    const auto path = (std::filesystem::temp_directory_path() /
                       ("memfail-v1-" + std::to_string(::getpid()) + ".db")).string();
    {
        // A results file as the first release wrote it: probe_results without the answer columns.
        auto db = Database::open(path).value();
        ASSERT_TRUE(db.exec("CREATE TABLE probe_results(run_id INTEGER NOT NULL, scenario_id TEXT NOT NULL, "
                            "dataset TEXT NOT NULL, probe_id TEXT NOT NULL, k INTEGER NOT NULL, kind TEXT NOT NULL, "
                            "stage TEXT NOT NULL, memory_success INTEGER NOT NULL, "
                            "reasoning TEXT NOT NULL DEFAULT 'not graded', retrieved_json TEXT NOT NULL, "
                            "retrieve_micros INTEGER NOT NULL, error TEXT, PRIMARY KEY(run_id, scenario_id, probe_id, k));"
                            "INSERT INTO probe_results VALUES(1, 's', 'd', 'p1', 5, 'open', 'retrieved', 1, "
                            "'not graded', '[]', 10, NULL);")
                        .has_value());
        ASSERT_TRUE(db.set_user_version(1).has_value());
    }
    {
        auto db = ResultsDb::open(path);
        ASSERT_TRUE(db.has_value()) << db.error().describe();
        EXPECT_EQ(db->database().user_version().value(), k_results_schema_version);
        auto s = db->database().prepare("SELECT stage, grader, answer IS NULL, retrieved_tokens IS NULL FROM probe_results").value();
        ASSERT_TRUE(s.step().value());
        EXPECT_EQ(s.column_text(0), "retrieved");
        EXPECT_EQ(s.column_text(1), "rules");
        EXPECT_EQ(s.column_int(2), 1);
        EXPECT_EQ(s.column_int(3), 1);
        // New rows with answers go into the migrated table.
        ProbeRow row;
        row.scenario_id = "s";
        row.dataset = "d";
        row.probe_id = "p2";
        row.k = 5;
        row.kind = "open";
        row.stage = "correct";
        row.answer = "hot cocoa";
        row.answer_correct = true;
        row.checks.push_back({"", "answer", "llm", true, true, "right"});
        EXPECT_TRUE(db->record_probe(1, row).has_value());
    }
    {
        // Opening again is a no-op; the old row reads back without a recorded probe text.
        auto db = ResultsDb::open(path);
        ASSERT_TRUE(db.has_value()) << db.error().describe();
        const auto rows = db->probe_rows(1).value();
        ASSERT_EQ(rows.size(), 2u);
        EXPECT_EQ(rows[0].probe_id, "p1");
        EXPECT_TRUE(rows[0].probe_json.empty());
        EXPECT_EQ(rows[1].answer.value_or(""), "hot cocoa");
    }
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

}  // namespace
}  // namespace memfail::store

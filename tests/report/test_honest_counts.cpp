// SPDX-License-Identifier: MIT
// Counts that cannot lie: an error row is in no numerator and no denominator, whatever its memory
// side did, so no rate can pass 100% (issue 14: "memory ok 103.1 %", "probes 0, success 100"); a
// count above its denominator trips the table builder's assertion rather than printing.
#include <memfail/report/export.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/figures/stats.hpp>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "results_fixture.hpp"

namespace memfail::report {
namespace {

using nlohmann::json;

// One run whose probes all reached the memory side and then failed at the answer stage (every
// judge call failed), written as a file from before error rows cleared memory_success.
// A running run of `system` at k=5 with one Easy scenario of `probes` probes.
std::int64_t start_run(store::ResultsDb& db, const std::string& system, int probes) {
    store::RunRecord run;
    run.status = "running";
    run.system_spec = system;
    run.config_json = json{{"system", system}, {"ks", {5}}}.dump();
    run.config_hash = "honest-" + system;
    run.code_version = "test";
    const std::int64_t id = db.create_run(run).value();
    db.upsert_scenario({id, "cfe", "conditional_facts_easy", "hash", 1, probes, "graded"}).value();
    return id;
}

std::int64_t errors_after_memory_success(store::ResultsDb& db, int probes, int ok) {
    const std::int64_t id = start_run(db, "verbatim", probes);
    for (int p = 0; p < probes; ++p) {
        store::ProbeRow row;
        row.scenario_id = "cfe";
        row.dataset = "conditional_facts_easy";
        row.probe_id = "p" + std::to_string(p);
        row.k = 5;
        row.kind = "yes_no";
        const bool answered = p < ok;
        row.stage = answered ? "correct" : "error";
        row.memory_success = true;  // the memory side passed before the answer's judge failed
        if (answered) {
            row.answer = "Yes.";
            row.answer_correct = true;
            row.reasoning = "correct";
        } else {
            row.error = "the judge timed out";
        }
        db.record_probe(id, row).value();
    }
    db.finish_run(id, "finished").value();
    return id;
}

// The first row's cell under `name` ("?" when no column has it).
std::string column_of(const Table& t, const std::string& name) {
    for (std::size_t i = 0; i < t.columns.size(); ++i)
        if (t.columns[i].name == name) return t.rows.at(0).at(i);
    return "?";
}

TEST(HonestCounts, ErrorRowsAreInNoNumerator) {
    testing::TempResults file("honest-some");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto id = errors_after_memory_success(db, 10, 7);
    const auto rows = db.summary({id}).value();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].errors, 3);
    EXPECT_EQ(rows[0].success, 7);  // memory-side successes among the rows not in error
    const Table t = success_table(db, {id}).value();
    ASSERT_EQ(t.rows.size(), 1u);
    // End to end: 7 correct of 7 graded, memory ok 7 of 7, never 10 of 7.
    const auto col = [&](const std::string& name) { return column_of(t, name); };
    EXPECT_EQ(col("probes"), "7");
    EXPECT_EQ(col("rate %"), "100.0");
    EXPECT_EQ(col("memory ok %"), "100.0");
    EXPECT_EQ(col("errors"), "3");
    const json doc = json::parse(results_json(db, {id}).value());
    const auto& r = doc["runs"][0]["results"][0];
    EXPECT_EQ(r["probes"], 7);
    EXPECT_LE(r["rate"].get<double>(), 1.0);
    EXPECT_EQ(r["memory_success"], 7);
}

TEST(HonestCounts, EveryRowInErrorGivesNoRateAtAll) {
    testing::TempResults file("honest-all");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto id = errors_after_memory_success(db, 5, 0);
    const auto rows = db.summary({id}).value();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].success, 0);  // was 5: "probes 0, success 100"
    const Table t = success_table(db, {id}).value();
    EXPECT_EQ(t.rows[0][4], "0");  // probes
    EXPECT_EQ(t.rows[0][5], "0");  // success
}

TEST(HonestCountsDeathTest, ACountAboveItsDenominatorIsABugNotARate) {
    EXPECT_DEATH(wilson_interval(8, 7), "exceeds");
    EXPECT_DEATH(wilson_interval(1, 0), "exceeds");
    EXPECT_DEATH(wilson_interval(-1, 3), "exceeds");
    const Interval ok = wilson_interval(7, 7);
    EXPECT_LE(ok.high, 1.0);
}

// A run whose system stored `memories` at its one checkpoint and served memories to the first
// `served` probes; `unverified` of the probes are unverified, the rest not_stored.
std::int64_t seen_run(store::ResultsDb& db, std::int64_t memories, int probes, int served, int unverified) {
    const std::int64_t id = start_run(db, "adapter:exec", probes);
    db.record_memory_stats(id, "cfe", "s1", memories, std::nullopt, "").value();
    for (int p = 0; p < probes; ++p) {
        store::ProbeRow row;
        row.scenario_id = "cfe";
        row.dataset = "conditional_facts_easy";
        row.probe_id = "p" + std::to_string(p);
        row.k = 5;
        row.kind = "yes_no";
        row.stage = p < unverified ? "unverified" : "not_stored";
        row.retrieved_json = p < served ? R"([{"id":"m1","text":"x","score":1}])" : "[]";
        db.record_probe(id, row).value();
    }
    db.finish_run(id, "finished").value();
    return id;
}

// A run that could not see its system says so above the table, instead of a plain 100% not_stored.
TEST(HonestCounts, ARunThatSawNothingSaysSoAboveTheTable) {
    testing::TempResults file("honest-seen");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto empty = seen_run(db, 0, 4, 0, 0);
    Table t = success_table(db, {empty}).value();
    ASSERT_EQ(t.banners.size(), 1u);
    EXPECT_NE(t.banners[0].find("STORED NOTHING"), std::string::npos) << t.banners[0];
    const std::string text = render_text(t);
    EXPECT_EQ(text.rfind("!!! ", 0), 0u) << text;  // the first line
    EXPECT_NE(render_markdown(t).find("**Warning:**"), std::string::npos);

    const auto unserved = seen_run(db, 12, 4, 0, 0);
    t = success_table(db, {unserved}).value();
    ASSERT_EQ(t.banners.size(), 1u);
    EXPECT_NE(t.banners[0].find("SERVED NOTHING"), std::string::npos) << t.banners[0];

    // A store with memories that served some probe: no banner.
    const auto seen = seen_run(db, 12, 4, 1, 0);
    EXPECT_TRUE(success_table(db, {seen}).value().banners.empty());
}

// The decided share beside every rate: the probes the graders decided, over the rate's probes.
TEST(HonestCounts, DecidedShareBesideTheRate) {
    testing::TempResults file("honest-decided");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto id = seen_run(db, 12, 8, 8, 6);
    const Table t = success_table(db, {id}).value();
    EXPECT_EQ(column_of(t, "probes"), "8");
    EXPECT_EQ(column_of(t, "unverified"), "6");
    EXPECT_EQ(column_of(t, "decided %"), "25.0");
    const Table machine = success_table(db, {id}, TableStyle::machine).value();
    EXPECT_EQ(column_of(machine, "decided"), "0.25");
}

}  // namespace
}  // namespace memfail::report

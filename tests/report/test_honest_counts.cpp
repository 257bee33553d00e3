// SPDX-License-Identifier: MIT
// Counts that cannot lie: an error row is in no numerator and no denominator, whatever its memory
// side did, so no rate can pass 100% (issue 14: "memory ok 103.1 %", "probes 0, success 100"); a
// count above its denominator trips the table builder's assertion rather than printing.
#include <memfail/report/export.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/report/stats.hpp>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "results_fixture.hpp"

namespace memfail::report {
namespace {

using nlohmann::json;

// One run whose probes all reached the memory side and then failed at the answer stage (every
// judge call failed), written as a file from before error rows cleared memory_success.
std::int64_t errors_after_memory_success(store::ResultsDb& db, int probes, int ok) {
    store::RunRecord run;
    run.status = "running";
    run.system_spec = "verbatim";
    run.config_json = json{{"system", "verbatim"}, {"ks", {5}}}.dump();
    run.config_hash = "honest";
    run.code_version = "test";
    const std::int64_t id = db.create_run(run).value();
    db.upsert_scenario({id, "cfe", "conditional_facts_easy", "hash", 1, probes, "graded"}).value();
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
    const auto col = [&](const std::string& name) {
        for (std::size_t i = 0; i < t.columns.size(); ++i)
            if (t.columns[i].name == name) return t.rows[0][i];
        return std::string("?");
    };
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

}  // namespace
}  // namespace memfail::report

// SPDX-License-Identifier: MIT
// The report tables built from a real run agree with the recorded probes.
#include <memfail/report/run_report.hpp>
#include <memfail/run/runner.hpp>

#include <support/temp_dir.hpp>

#include <gtest/gtest.h>

namespace memfail::report {
namespace {

TEST(ReportTables, PerRunTablesMatchTheFlatTableAndTheRecordedProbes) {
    testing::TempDir dir;
    auto datasets = run::load_datasets({"long_hop", "persona_retrieval"}, "", 42).value();
    run::RunConfig config;
    config.results_path = dir.file("r.db");
    config.ks = {1, 10};
    for (const char* spec : {"verbatim", "none"}) {
        config.system_spec = spec;
        ASSERT_TRUE(run::run_datasets(config, datasets, run::factory_for_spec(spec)).has_value());
    }
    auto db = store::ResultsDb::open(config.results_path).value();
    const auto ids = select_runs(db, {}).value();
    ASSERT_EQ(ids.size(), 2u);

    const Table flat = success_table(db, ids).value();
    ASSERT_EQ(flat.rows.size(), 8u);  // 2 runs x 2 datasets x 2 k
    const auto per_run = success_tables_by_run(db, ids).value();
    ASSERT_EQ(per_run.size(), 2u);
    EXPECT_EQ(per_run[0].title, "run " + std::to_string(ids[0]) + ": verbatim");
    EXPECT_EQ(per_run[1].title, "run " + std::to_string(ids[1]) + ": none");
    EXPECT_EQ(per_run[0].columns.size() + 2, flat.columns.size());
    EXPECT_TRUE(per_run[0].notes.empty());
    EXPECT_FALSE(per_run[1].notes.empty());

    // Column positions in the flat table.
    auto col = [&](const std::string& name) {
        for (std::size_t i = 0; i < flat.columns.size(); ++i)
            if (flat.columns[i].name == name) return i;
        ADD_FAILURE() << "no column " << name;
        return std::size_t{0};
    };
    // Each row's success equals the probes recorded as memory-side successes.
    auto count = db.database().prepare(
        "SELECT SUM(memory_success), SUM(stage = 'needs_answer_stage') FROM probe_results "
        "WHERE run_id = ? AND dataset = ? AND k = ?").value();
    for (const auto& row : flat.rows) {
        count.bind(1, static_cast<std::int64_t>(std::stoll(row[col("run")])));
        count.bind(2, row[col("dataset")]);
        count.bind(3, static_cast<std::int64_t>(std::stoll(row[col("k")])));
        ASSERT_TRUE(count.step().value());
        EXPECT_EQ(row[col("success")], std::to_string(count.column_int(0)));
        EXPECT_EQ(row[col("abstain*")], std::to_string(count.column_int(1)));
        count.reset();
        if (row[col("run")] == std::to_string(ids[1])) {
            // The no-memory baseline: every graded probe is not_stored.
            EXPECT_EQ(row[col("not_stored")], row[col("probes")]);
            EXPECT_EQ(row[col("rate %")], "0.0");
        }
    }
}

TEST(ReportTables, NoFinishedRunIsAClearError) {
    testing::TempDir dir;
    auto db = store::ResultsDb::open(dir.file("empty.db")).value();
    auto none = select_runs(db, {});
    ASSERT_FALSE(none.has_value());
    EXPECT_NE(none.error().message.find("no run"), std::string::npos);
    EXPECT_FALSE(select_runs(db, {42}).has_value());
}

}  // namespace
}  // namespace memfail::report

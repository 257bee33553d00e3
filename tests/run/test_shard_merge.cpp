// SPDX-License-Identifier: MIT
// --shard I/N and merge: the parts of a run cover every scenario once, and merging them gives the
// results a single process writes (timings aside); merge refuses parts that do not make one run.
#include <memfail/data/jsonl.hpp>
#include <memfail/llm/cached_client.hpp>
#include <memfail/run/merge.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/run/shard.hpp>
#include <memfail/store/database.hpp>
#include <memfail/store/results_db.hpp>

#include <support/small_datasets.hpp>
#include <support/temp_dir.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace memfail::run {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

const std::vector<LoadedDataset>& all_datasets() { return testing::generated_datasets(); }

RunConfig config_for(const std::string& results, ShardSpec shard = {}) {
    RunConfig config;
    config.system_spec = "verbatim";
    config.ks = {1, 5};
    config.results_path = results;
    config.shard = shard;
    return config;
}

void run_part(const std::string& results, ShardSpec shard, const AfterProbeHook& hook = {}) {
    auto outcome = run_datasets(config_for(results, shard), all_datasets(), factory_for_spec("verbatim"), {}, hook);
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
}

// Every row of every table, timings, run times and row ids left out, sorted within each table (the
// order rows are written in within one scenario varies between runs of one process too).
std::vector<std::string> rows_of(const std::string& file) {
    auto db = store::Database::open_read_only(file).value();
    std::vector<std::string> out;
    std::vector<std::string> tables;
    {
        auto s = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").value();
        while (s.step().value()) tables.push_back(s.column_text(0));
    }
    const std::set<std::string> timing = {"micros", "retrieve_micros", "latency_micros", "started_at", "finished_at",
                                          "id", "pid", "host", "since"};
    for (const auto& table : tables) {
        std::vector<std::string> cols;
        auto info = db.prepare("SELECT name FROM pragma_table_info(?)").value();
        info.bind(1, table);
        while (info.step().value())
            if (!timing.count(info.column_text(0))) cols.push_back(info.column_text(0));
        std::string select;
        for (const auto& c : cols) select += (select.empty() ? "" : " || '|' || ") + ("COALESCE(" + c + ", 'null')");
        auto s = db.prepare("SELECT " + select + " FROM " + table).value();
        std::vector<std::string> rows;
        while (s.step().value()) rows.push_back(table + ": " + s.column_text(0));
        std::sort(rows.begin(), rows.end());
        out.insert(out.end(), rows.begin(), rows.end());
    }
    return out;
}

TEST(Shard, ParsesIOfNAndRefusesEverythingElse) {
    auto ok = parse_shard("2/4");
    ASSERT_TRUE(ok.has_value());
    EXPECT_EQ(ok->index, 2);
    EXPECT_EQ(ok->count, 4);
    EXPECT_EQ(ok->text(), "2/4");
    for (const char* bad : {"", "2", "0/4", "5/4", "-1/4", "2/0", "a/b", "2/4/1", "2 /4", "1/1000001", "/4", "2/"}) {
        auto parsed = parse_shard(bad);
        EXPECT_FALSE(parsed.has_value()) << bad;
        if (!parsed.has_value()) {
            EXPECT_NE(parsed.error().describe().find("--shard"), std::string::npos);
        }
    }
}

TEST(Shard, AssignmentCoversEveryUnitOnceAndBalancesBySize) {
    std::vector<std::string> ids;
    std::vector<std::uint64_t> weights;
    for (int i = 0; i < 40; ++i) {
        ids.push_back("s" + std::to_string(i));
        weights.push_back(static_cast<std::uint64_t>(1 + (i * 37) % 101));
    }
    const auto parts = assign_shards(ids, weights, 4);
    ASSERT_EQ(parts.size(), ids.size());
    std::vector<std::uint64_t> load(4, 0);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        ASSERT_GE(parts[i], 0);
        ASSERT_LT(parts[i], 4);
        load[static_cast<std::size_t>(parts[i])] += weights[i];
    }
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    EXPECT_LE(*hi - *lo, 101u) << "greedy largest-first keeps parts within one unit's weight";
    EXPECT_EQ(parts, assign_shards(ids, weights, 4)) << "deterministic";
    // More parts than units: some parts are empty, none holds two units.
    const auto sparse = assign_shards({"a", "b"}, {5, 5}, 4);
    EXPECT_NE(sparse[0], sparse[1]);
}

TEST(Merge, FourPartsEqualOneProcessExactly) {
    TempDir dir;
    auto single = run_datasets(config_for(dir.file("single.db")), all_datasets(), factory_for_spec("verbatim"));
    ASSERT_TRUE(single.has_value()) << single.error().describe();
    std::vector<std::string> parts;
    std::set<std::string> covered;
    std::size_t total = 0;
    for (int i = 1; i <= 4; ++i) {
        parts.push_back(dir.file("part" + std::to_string(i) + ".db"));
        run_part(parts.back(), {i, 4});
        auto db = store::ResultsDb::open_read_only(parts.back()).value();
        for (const auto& s : db.scenarios(1).value()) {
            EXPECT_TRUE(covered.insert(s.scenario_id).second) << s.scenario_id << " in two parts";
            ++total;
        }
    }
    EXPECT_EQ(total, all_datasets().size());
    auto report = merge_shards(dir.file("merged.db"), parts);
    ASSERT_TRUE(report.has_value()) << report.error().describe();
    ASSERT_EQ(report->runs.size(), 1u);
    const auto expected = rows_of(dir.file("single.db"));
    const auto got = rows_of(dir.file("merged.db"));
    ASSERT_GT(expected.size(), 5000u);
    EXPECT_EQ(got.size(), expected.size());
    EXPECT_TRUE(got == expected) << "the merged file differs from the single-process run";
    auto merged = store::ResultsDb::open_read_only(dir.file("merged.db")).value();
    auto run = merged.run(1).value();
    ASSERT_TRUE(run.has_value());
    auto one = store::ResultsDb::open_read_only(dir.file("single.db")).value().run(1).value();
    EXPECT_EQ(run->config_hash, one->config_hash) << "the merged run is the single run's configuration";
    EXPECT_EQ(run->status, "finished");
    // Merging again over the result is refused; nothing is overwritten.
    auto again = merge_shards(dir.file("merged.db"), parts);
    ASSERT_FALSE(again.has_value());
    EXPECT_NE(again.error().describe().find("already exists"), std::string::npos);
}

TEST(Merge, AKilledPartResumesAndMergesTheSame) {
    TempDir dir;
    std::vector<std::string> parts;
    for (int i = 1; i <= 2; ++i) parts.push_back(dir.file("p" + std::to_string(i) + ".db"));
    int recorded = 0;
    run_part(parts[0], {1, 2}, [&](const std::string&, int) { return ++recorded < 120; });
    auto unfinished = merge_shards(dir.file("m.db"), {parts[0], parts[1]});
    ASSERT_FALSE(unfinished.has_value());
    EXPECT_FALSE(fs::exists(dir.file("m.db"))) << "nothing half-written";
    run_part(parts[1], {2, 2});
    auto still = merge_shards(dir.file("m.db"), parts);
    ASSERT_FALSE(still.has_value());
    EXPECT_NE(still.error().describe().find("--resume"), std::string::npos) << still.error().describe();
    auto config = config_for(parts[0], {1, 2});
    config.resume = true;
    auto resumed = run_datasets(config, all_datasets(), factory_for_spec("verbatim"));
    ASSERT_TRUE(resumed.has_value()) << resumed.error().describe();
    EXPECT_TRUE(resumed->resumed);
    ASSERT_TRUE(merge_shards(dir.file("m.db"), parts).has_value());
    auto single = run_datasets(config_for(dir.file("s.db")), all_datasets(), factory_for_spec("verbatim"));
    ASSERT_TRUE(single.has_value());
    EXPECT_TRUE(rows_of(dir.file("m.db")) == rows_of(dir.file("s.db")));
}

TEST(Merge, PartsLoadingOnlyTheirOwnScenariosEqualOneProcess) {
    // The five datasets as a file, loaded per part with every other part's scenarios as skeletons,
    // under --limit (which changes hashes and weights): the parts still split and hash the run as
    // one process does, hold only their own scenarios, and merge to the single run.
    TempDir dir;
    std::vector<data::Scenario> scenarios;
    for (const auto& d : all_datasets()) scenarios.push_back(d.scenario);
    const std::string file = dir.file("five.jsonl");
    ASSERT_TRUE(data::write_jsonl(file, scenarios).has_value());
    auto whole = load_datasets({file}, "", 42);
    ASSERT_TRUE(whole.has_value());
    auto config = config_for(dir.file("single.db"));
    config.limit = 30;
    ASSERT_TRUE(run_datasets(config, *whole, factory_for_spec("verbatim")).has_value());
    std::vector<std::string> parts;
    std::size_t full = 0;
    for (int i = 1; i <= 3; ++i) {
        auto loaded = load_datasets_for_shard({file}, "", 42, 30, {}, {i, 3});
        ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
        ASSERT_EQ(loaded->size(), whole->size());
        for (const auto& d : *loaded) {
            if (d.skeleton) {
                EXPECT_TRUE(d.scenario.sessions.empty() && d.scenario.probes.empty()) << "a skeleton holds no data";
            } else {
                ++full;
                EXPECT_FALSE(d.scenario.sessions.empty());
            }
        }
        parts.push_back(dir.file("p" + std::to_string(i) + ".db"));
        auto part = config_for(parts.back(), {i, 3});
        part.limit = 30;
        auto outcome = run_datasets(part, *loaded, factory_for_spec("verbatim"));
        ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    }
    EXPECT_EQ(full, whole->size()) << "each scenario is loaded in full by exactly one part";
    ASSERT_TRUE(merge_shards(dir.file("m.db"), parts).has_value());
    EXPECT_TRUE(rows_of(dir.file("m.db")) == rows_of(dir.file("single.db")));
    // Loaded for one part, run as another: refused before anything runs.
    auto loaded = load_datasets_for_shard({file}, "", 42, 30, {}, {1, 3});
    auto wrong = config_for(dir.file("wrong.db"), {2, 3});
    wrong.limit = 30;
    auto refused = run_datasets(wrong, *loaded, factory_for_spec("verbatim"));
    ASSERT_FALSE(refused.has_value());
    EXPECT_NE(refused.error().describe().find("another part"), std::string::npos);
}

TEST(Merge, RefusesPartsThatDoNotMakeOneRun) {
    TempDir dir;
    const std::string p1 = dir.file("p1.db"), p2 = dir.file("p2.db"), p3 = dir.file("p3.db");
    run_part(p1, {1, 3});
    run_part(p2, {2, 3});
    auto expect_refused = [&](const std::vector<std::string>& inputs, const std::string& says) {
        auto merged = merge_shards(dir.file("out.db"), inputs);
        ASSERT_FALSE(merged.has_value()) << says;
        EXPECT_NE(merged.error().describe().find(says), std::string::npos) << merged.error().describe();
        EXPECT_FALSE(fs::exists(dir.file("out.db")));
    };
    expect_refused({p1, p2}, "missing: 3 of 3");
    expect_refused({p1, p1}, "named twice");
    fs::copy_file(p1, dir.file("p1-copy.db"));
    expect_refused({p1, dir.file("p1-copy.db"), p2}, "overlapping parts");
    // Part 3 of another configuration (another k list) is another run: both stay incomplete.
    auto other = config_for(p3, {3, 3});
    other.ks = {1};
    ASSERT_TRUE(run_datasets(other, all_datasets(), factory_for_spec("verbatim")).has_value());
    expect_refused({p1, p2, p3}, "another configuration");
    // A run made without --shard is not a part.
    auto plain = run_datasets(config_for(dir.file("plain.db")), {all_datasets().front()}, factory_for_spec("verbatim"));
    ASSERT_TRUE(plain.has_value());
    expect_refused({dir.file("plain.db")}, "not a shard");
    expect_refused({dir.file("nope.db")}, "no such results file");
}

TEST(Merge, JoinsThePartsReplyCachesAndMovesTheirPaymentsToTheMergedFile) {
    TempDir dir;
    std::vector<std::string> parts = {dir.file("a.db"), dir.file("b.db")};
    for (int i = 0; i < 2; ++i) {
        run_part(parts[static_cast<std::size_t>(i)], {i + 1, 2});
        const std::string cache = parts[static_cast<std::size_t>(i)] + ".llm-cache.db";
        { auto created = llm::LlmCache::open(cache).value(); }
        auto db = store::Database::open(cache).value();
        auto put = db.prepare("INSERT INTO llm_cache VALUES (?, 'e', 'm', '{}', '{}', 0)").value();
        put.bind(1, "key-" + std::to_string(i));
        ASSERT_TRUE(put.run().has_value());
        auto shared = db.prepare("INSERT INTO llm_cache VALUES ('shared', 'e', 'm', '{}', '{}', 0)").value();
        ASSERT_TRUE(shared.run().has_value());
        auto pay = db.prepare("INSERT INTO llm_payments VALUES (?, ?, 'tok', 10, 2, 0, 1, 5)").value();
        pay.bind(1, "key-" + std::to_string(i)).bind(2, fs::absolute(parts[static_cast<std::size_t>(i)]).string());
        ASSERT_TRUE(pay.run().has_value());
    }
    auto report = merge_shards(dir.file("m.db"), parts);
    ASSERT_TRUE(report.has_value()) << report.error().describe();
    EXPECT_EQ(report->cache_files, 2u);
    EXPECT_EQ(report->cache_entries, 3u) << "key-0, key-1 and the shared reply once";
    auto cache = store::Database::open_read_only(dir.file("m.db") + ".llm-cache.db").value();
    auto ledgers = cache.prepare("SELECT DISTINCT ledger FROM llm_payments").value();
    std::set<std::string> seen;
    while (ledgers.step().value()) seen.insert(ledgers.column_text(0));
    EXPECT_EQ(seen, std::set<std::string>{fs::absolute(dir.file("m.db")).lexically_normal().string()});
}

}  // namespace
}  // namespace memfail::run

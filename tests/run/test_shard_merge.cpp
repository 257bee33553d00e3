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
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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
                                          "id", "pid", "host", "since", "digest"};
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


// Two finished parts of one run and their clean merge, made once for the corruption tests.
struct CleanParts {
    TempDir dir;
    std::string p1, p2, merged;
    std::vector<std::string> rows;
};

const CleanParts& clean_parts() {
    static CleanParts c;  // its folder is removed at exit
    static const bool made = [] {
        c.p1 = c.dir.file("p1.db");
        c.p2 = c.dir.file("p2.db");
        run_part(c.p1, {1, 2});
        run_part(c.p2, {2, 2});
        c.merged = c.dir.file("clean.db");
        auto report = merge_shards(c.merged, {c.p1, c.p2});
        EXPECT_TRUE(report.has_value()) << report.error().describe();
        if (report.has_value()) c.rows = rows_of(c.merged);
        return true;
    }();
    (void)made;
    return c;
}

std::string read_bytes(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& file, const std::string& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Nothing of OUT left: neither OUT nor a temporary file beside it.
void expect_nothing_written(const TempDir& dir, const std::string& out_name) {
    EXPECT_FALSE(fs::exists(dir.file(out_name))) << out_name;
    for (const auto& entry : fs::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename().string().find(out_name + ".merging-"), std::string::npos)
            << "left behind: " << entry.path();
}

TEST(Merge, APartWithBytesChangedIsRefusedOrMergesIdentically) {
    // Bytes changed at twenty places in the part's pages (past the first, which holds the header and
    // the schema's root): each merge is refused naming the part, or, where the change touched
    // nothing the part holds (free space), equals the clean merge. Never another result.
    const CleanParts& clean = clean_parts();
    ASSERT_FALSE(clean.rows.empty());
    TempDir dir;
    const std::string bytes = read_bytes(clean.p1);
    const std::size_t page = 4096;
    ASSERT_GT(bytes.size(), 8 * page);
    const std::size_t pages = bytes.size() / page;
    int refused = 0, identical = 0;
    for (int i = 0; i < 20; ++i) {
        const std::size_t at_page = 1 + static_cast<std::size_t>(i) * (pages - 1) / 20;
        const std::size_t offset = at_page * page + 100 + (static_cast<std::size_t>(i) * 733) % (page - 200);
        std::string damaged = bytes;
        for (std::size_t j = 0; j < 3; ++j) damaged[offset + j] = static_cast<char>(damaged[offset + j] ^ 0x5a);
        const std::string part = dir.file("damaged-" + std::to_string(i) + ".db");
        write_bytes(part, damaged);
        const std::string out = "out-" + std::to_string(i) + ".db";
        auto merged = merge_shards(dir.file(out), {part, clean.p2});
        if (!merged.has_value()) {
            ++refused;
            EXPECT_NE(merged.error().describe().find(part), std::string::npos)
                << "offset " << offset << ": " << merged.error().describe();
            expect_nothing_written(dir, out);
        } else {
            ++identical;
            EXPECT_TRUE(rows_of(dir.file(out)) == clean.rows)
                << "offset " << offset << ": merged with exit 0 into a result that differs from the clean merge";
        }
    }
    std::printf("[          ] 20 damaged parts: %d refused, %d merged identically\n", refused, identical);
    EXPECT_GT(refused, 10) << "most changes inside a part's pages change what it holds";
}

TEST(Merge, ATruncatedPartIsRefused) {
    const CleanParts& clean = clean_parts();
    TempDir dir;
    const std::string bytes = read_bytes(clean.p1);
    for (const std::size_t keep : {bytes.size() / 2, bytes.size() - 4096}) {
        const std::string part = dir.file("truncated.db");
        write_bytes(part, bytes.substr(0, keep));
        auto merged = merge_shards(dir.file("out.db"), {part, clean.p2});
        ASSERT_FALSE(merged.has_value()) << "kept " << keep << " of " << bytes.size() << " bytes";
        const std::string says = merged.error().describe();
        EXPECT_NE(says.find(part), std::string::npos) << says;
        EXPECT_NE(says.find("damaged"), std::string::npos) << says;
        expect_nothing_written(dir, "out.db");
    }
}

TEST(Merge, APartMissingARowIsRefusedByItsIntegrityRecord) {
    // Valid SQLite, one probe row fewer than the part recorded when its run finished.
    const CleanParts& clean = clean_parts();
    TempDir dir;
    const std::string part = dir.file("edited.db");
    fs::copy_file(clean.p1, part);
    {
        auto db = store::Database::open(part).value();
        ASSERT_TRUE(db.exec("DELETE FROM probe_results WHERE rowid = (SELECT MAX(rowid) FROM probe_results)").has_value());
    }
    auto merged = merge_shards(dir.file("out.db"), {part, clean.p2});
    ASSERT_FALSE(merged.has_value()) << "a part missing a row merged";
    const std::string says = merged.error().describe();
    EXPECT_NE(says.find(part), std::string::npos) << says;
    EXPECT_NE(says.find("probe_results"), std::string::npos) << says;
    expect_nothing_written(dir, "out.db");
    // A changed value (valid SQLite, same row count) is refused too.
    const std::string changed = dir.file("changed.db");
    fs::copy_file(clean.p1, changed);
    {
        auto db = store::Database::open(changed).value();
        ASSERT_TRUE(db.exec("UPDATE fact_results SET stage = 'not_stored' WHERE rowid = 1").has_value());
    }
    auto refused = merge_shards(dir.file("out.db"), {changed, clean.p2});
    ASSERT_FALSE(refused.has_value());
    EXPECT_NE(refused.error().describe().find("fact_results"), std::string::npos) << refused.error().describe();
    // A part written before integrity records existed still merges, said to be unverified.
    const std::string old = dir.file("old.db");
    fs::copy_file(clean.p1, old);
    {
        auto db = store::Database::open(old).value();
        ASSERT_TRUE(db.exec("DROP TABLE run_integrity").has_value());
    }
    auto unverified = merge_shards(dir.file("old-out.db"), {old, clean.p2});
    ASSERT_TRUE(unverified.has_value()) << unverified.error().describe();
    EXPECT_TRUE(rows_of(dir.file("old-out.db")) == clean.rows);
    bool said = false;
    for (const auto& note : unverified->notes) said = said || (note.find(old) != std::string::npos &&
                                                                note.find("unverified") != std::string::npos);
    EXPECT_TRUE(said) << "the old part is named unverified";
}

TEST(Merge, RemovesTheTemporaryFilesOfDeadMergesAndKeepsLiveOnes) {
    const CleanParts& clean = clean_parts();
    TempDir dir;
    const std::string out = dir.file("out.db");
    ASSERT_EQ(::kill(999999, 0), -1);
    ASSERT_EQ(errno, ESRCH) << "pid 999999 is alive here";
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    const std::string dead = out + ".merging-999999", live = out + ".merging-" + std::to_string(child);
    for (const auto& f : {dead, dead + "-wal", live}) write_bytes(f, "half a merge");
    auto merged = merge_shards(out, {clean.p1, clean.p2});
    const bool live_kept = fs::exists(live);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ASSERT_TRUE(merged.has_value()) << merged.error().describe();
    EXPECT_FALSE(fs::exists(dead)) << "a dead merge's temporary file is removed";
    EXPECT_FALSE(fs::exists(dead + "-wal"));
    EXPECT_TRUE(live_kept) << "a live merge's temporary file is kept";
    bool said = false;
    for (const auto& note : merged->notes) said = said || note.find(dead) != std::string::npos;
    EXPECT_TRUE(said) << "the removal is noted";
    EXPECT_TRUE(rows_of(out) == clean.rows);
}

}  // namespace
}  // namespace memfail::run

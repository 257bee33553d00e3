// SPDX-License-Identifier: MIT
// End-to-end runs on the generated datasets: planted faults show their own stage, verbatim shows
// the paper's retrieval pattern, oracles reach the ceiling, and a killed run resumes exactly.
#include <memfail/memory/builtin/system_store.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>
#include <memfail/suites/benchmarks/benchmarks_suite.hpp>
#include <memfail/data/jsonl.hpp>

#include <support/planted_systems.hpp>
#include <support/small_datasets.hpp>
#include <support/temp_dir.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

namespace memfail::run {
namespace {

using testing::TempDir;

// Generating all five datasets takes a moment; do it once for the whole file.
const std::vector<LoadedDataset>& all_datasets() { return testing::generated_datasets(); }

struct StageCounts {
    long graded = 0, success = 0, not_stored = 0, summary_error = 0, not_retrieved = 0, abstain = 0;
};

// dataset -> k -> counts, for one run.
std::map<std::string, std::map<int, StageCounts>> run_and_count(const std::string& results, const SystemFactory& factory,
                                                                std::vector<int> ks, const std::string& spec = "test") {
    RunConfig config;
    config.system_spec = spec;
    config.ks = std::move(ks);
    config.results_path = results;
    auto outcome = run_datasets(config, all_datasets(), factory);
    EXPECT_TRUE(outcome.has_value()) << outcome.error().describe();
    auto db = store::ResultsDb::open(results).value();
    std::map<std::string, std::map<int, StageCounts>> out;
    for (const auto& row : db.summary({outcome->run_id}).value()) {
        auto& c = out[row.dataset][row.k];
        c.graded = row.graded;
        c.success = row.success;
        c.not_stored = row.not_stored;
        c.summary_error = row.summary_error;
        c.not_retrieved = row.not_retrieved;
        c.abstain = row.needs_answer_stage;
    }
    return out;
}

TEST(PlantedFaults, StoringNothingIsAlwaysNotStored) {
    TempDir dir;
    auto counts = run_and_count(dir.file("r.db"), [](const memory::SystemContext&) -> Result<std::unique_ptr<memory::MemorySystem>> {
        return testing::make_stores_nothing();
    }, {5});
    ASSERT_EQ(counts.size(), 5u);
    for (const auto& [dataset, by_k] : counts) {
        const auto& c = by_k.at(5);
        EXPECT_GT(c.graded, 0) << dataset;
        EXPECT_EQ(c.not_stored, c.graded) << dataset;
        EXPECT_EQ(c.success, 0) << dataset;
    }
    EXPECT_GT(counts["persona_retrieval"][5].abstain, 0);
}

TEST(PlantedFaults, DroppingConditionsIsASummaryErrorOnConditionalFacts) {
    TempDir dir;
    auto counts = run_and_count(dir.file("r.db"), [](const memory::SystemContext& c) -> Result<std::unique_ptr<memory::MemorySystem>> {
        return testing::make_drops_conditions(c);
    }, {5});
    // Easy states the condition in the rule's sentence: the rest of it verbatim, the condition
    // removed, is a decided summary error. Hard spreads it over sentences that stay otherwise
    // intact: what is lost is for a judge to say. Never a success either way.
    const auto& easy = counts.at("conditional_facts_easy").at(5);
    EXPECT_EQ(easy.summary_error, easy.graded);
    for (const char* ds : {"conditional_facts_easy", "conditional_facts_hard"}) {
        const auto& c = counts.at(ds).at(5);
        EXPECT_EQ(c.success, 0) << ds;
        EXPECT_EQ(c.not_stored, 0) << ds;
    }
    // Datasets without conditions are untouched: no summary errors there.
    for (const char* ds : {"coexisting_facts", "persona_retrieval", "long_hop"})
        EXPECT_EQ(counts.at(ds).at(5).summary_error, 0) << ds;
}

TEST(PlantedFaults, RandomRetrievalIsNotRetrieved) {
    TempDir dir;
    auto counts = run_and_count(dir.file("r.db"), [](const memory::SystemContext& c) -> Result<std::unique_ptr<memory::MemorySystem>> {
        return testing::make_random_retriever(c, 7);
    }, {3});
    for (const auto& [dataset, by_k] : counts) {
        const auto& c = by_k.at(3);
        EXPECT_EQ(c.not_stored + c.summary_error, 0) << dataset;
        EXPECT_GE(c.not_retrieved, c.graded * 9 / 10) << dataset;
    }
}

TEST(Verbatim, RetrievalIsTheBottleneckOnCoexistingAndLongHopAndImprovesWithK) {
    TempDir dir;
    auto counts = run_and_count(dir.file("r.db"), factory_for_spec("verbatim:retriever=bm25"), {1, 3, 5, 10});
    for (const char* ds : {"coexisting_facts", "long_hop"}) {
        const auto& k1 = counts.at(ds).at(1);
        const auto& k10 = counts.at(ds).at(10);
        // Verbatim stores everything faithfully: failures are retrieval failures.
        EXPECT_EQ(k1.not_stored + k1.summary_error, 0) << ds;
        EXPECT_GT(k1.not_retrieved, k1.graded / 2) << ds;
        EXPECT_GT(k10.success, k1.success) << ds;
        EXPECT_LT(k10.not_retrieved, k1.not_retrieved) << ds;
    }
    // On single-fact datasets a verbatim store keeps every detail.
    EXPECT_EQ(counts.at("conditional_facts_easy").at(10).summary_error, 0);
}

TEST(Runner, EveryProbeRecordsItsQuestionAndTheMemoriesItsFactsWereStoredIn) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "verbatim";
    config.ks = {1, 5};
    config.results_path = dir.file("r.db");
    const std::vector<LoadedDataset> one = {all_datasets().front()};
    auto outcome = run_datasets(config, one, factory_for_spec("verbatim"));
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    auto db = store::ResultsDb::open(config.results_path).value();
    const auto rows = db.probe_rows(outcome->run_id).value();
    const data::Scenario& scenario = one.front().scenario;
    ASSERT_EQ(rows.size(), scenario.probes.size() * 2);
    std::map<std::string, const data::Probe*> probes;
    for (const auto& p : scenario.probes) probes[p.id] = &p;
    std::set<std::string> stored_ids;
    for (const auto& row : rows) {
        const data::Probe& probe = *probes.at(row.probe_id);
        EXPECT_EQ(row.checkpoint, probe.after_session);
        const auto j = nlohmann::json::parse(row.probe_json);
        EXPECT_EQ(j.at("question"), probe.question);
        EXPECT_EQ(j.at("evidence").size(), probe.evidence.size());
        for (const auto& fact : row.facts)
            for (const auto& id : nlohmann::json::parse(fact.stored_json)) stored_ids.insert(id.get<std::string>());
    }
    // Verbatim stores every fact, so the memories shown for them are the turns that state them.
    ASSERT_FALSE(stored_ids.empty());
    const auto memories = db.recorded_memories(outcome->run_id).value();
    std::set<std::string> recorded;
    for (const auto& m : memories) {
        recorded.insert(m.memory.id);
        EXPECT_FALSE(m.memory.text.empty());
        EXPECT_NE(m.memory.sources_json, "[]");
    }
    for (const auto& id : stored_ids) EXPECT_TRUE(recorded.count(id)) << id;
}

TEST(Oracle, ReachesTheCeilingOnEveryDataset) {
    TempDir dir;
    auto counts = run_and_count(dir.file("r.db"), factory_for_spec("oracle"), {1, 5});
    ASSERT_EQ(counts.size(), 5u);
    for (const auto& [dataset, by_k] : counts)
        for (const auto& [k, c] : by_k) EXPECT_EQ(c.success, c.graded) << dataset << " k=" << k;
}

TEST(Oracle, IdealRetrievalOverVerbatimRemovesEveryRetrievalFailure) {
    TempDir dir;
    auto counts = run_and_count(dir.file("r.db"), factory_for_spec("oracle:stage=retrieval,over=verbatim"), {1});
    for (const auto& [dataset, by_k] : counts) EXPECT_EQ(by_k.at(1).not_retrieved, 0) << dataset;
}

// A scenario id never becomes a path: even given programmatically (the reader refuses such ids),
// "../../../victim" or an absolute id writes nothing outside the run's folder.
TEST(Runner, HostileScenarioIdsStayInsideTheRunFolder) {
    TempDir dir;
    namespace fs = std::filesystem;
    const fs::path runs = dir.path() / "a" / "b" / "runs";
    const fs::path absolute = dir.path() / "absolute-victim";
    for (const std::string& id : {std::string("../../../victim"), std::string("../../../../victim"), absolute.string(),
                                 std::string("/dev/null/x")}) {
        RunConfig config;
        config.system_spec = "verbatim";
        config.ks = {1};
        config.results_path = (runs / "r.db").string();
        LoadedDataset d = all_datasets().front();
        d.scenario.id = id;
        auto outcome = run_datasets(config, {d}, factory_for_spec("verbatim"));
        ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
        // The same id maps to the same store: a second run on it reopens nothing else.
        const std::string store = memory::store_file_path(memory_dir_for(config.results_path, outcome->run_id), id);
        EXPECT_TRUE(fs::exists(store)) << store;
    }
    for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
        if (entry.is_directory()) continue;
        const auto relative = entry.path().lexically_relative(runs);
        EXPECT_FALSE(relative.empty() || *relative.begin() == "..") << entry.path();
    }
    EXPECT_FALSE(fs::exists(absolute.string() + ".sqlite"));
}

TEST(Runner, RepeatedKIsRefusedBeforeAnythingIsWritten) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "verbatim";
    config.ks = {5, 5};
    config.results_path = dir.file("sub/r.db");
    auto outcome = run_datasets(config, {all_datasets().front()}, factory_for_spec("verbatim"));
    ASSERT_FALSE(outcome.has_value());
    EXPECT_EQ(outcome.error().kind, ErrorKind::invalid_input);
    EXPECT_NE(outcome.error().message.find("listed twice"), std::string::npos) << outcome.error().describe();
    EXPECT_FALSE(std::filesystem::exists(config.results_path));
}

TEST(Resume, AKilledRunContinuesWithoutLosingOrDoublingProbes) {
    TempDir dir;
    const std::string results = dir.file("r.db");
    RunConfig config;
    config.system_spec = "verbatim:retriever=bm25";
    config.ks = {1, 5};
    config.results_path = results;
    const std::vector<LoadedDataset> two = {all_datasets()[0], all_datasets()[4]};
    const auto factory = factory_for_spec(config.system_spec);

    int recorded = 0;
    auto first = run_datasets(config, two, factory, {}, [&](const std::string&, int) { return ++recorded < 150; });
    ASSERT_TRUE(first.has_value()) << first.error().describe();
    EXPECT_EQ(first->probes_graded, 150u);

    config.resume = true;
    auto second = run_datasets(config, two, factory);
    ASSERT_TRUE(second.has_value()) << second.error().describe();
    EXPECT_TRUE(second->resumed);
    EXPECT_EQ(second->run_id, first->run_id);
    const std::size_t expected = (two[0].scenario.probes.size() + two[1].scenario.probes.size()) * 2;
    EXPECT_EQ(first->probes_graded + second->probes_graded, expected);
    EXPECT_EQ(second->probes_skipped, 150u);

    auto db = store::ResultsDb::open(results).value();
    EXPECT_EQ(db.run(first->run_id).value()->status, "finished");
    auto count = db.database().prepare("SELECT COUNT(*), COUNT(DISTINCT scenario_id || probe_id || k) FROM probe_results").value();
    ASSERT_TRUE(count.step().value());
    EXPECT_EQ(static_cast<std::size_t>(count.column_int(0)), expected);
    EXPECT_EQ(count.column_int(0), count.column_int(1));
    // The resumed run's memory-side results equal an uninterrupted run's.
    RunConfig fresh = config;
    fresh.resume = false;
    fresh.results_path = dir.file("fresh.db");
    auto clean = run_datasets(fresh, two, factory);
    ASSERT_TRUE(clean.has_value());
    auto clean_db = store::ResultsDb::open(fresh.results_path).value();
    const auto a = db.summary({first->run_id}).value();
    const auto b = clean_db.summary({clean->run_id}).value();
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].success, b[i].success) << a[i].dataset << " k=" << a[i].k;
        EXPECT_EQ(a[i].not_retrieved, b[i].not_retrieved) << a[i].dataset << " k=" << a[i].k;
    }
}

// The HaluMem fixture's two users, imported, as a run loads them.
std::vector<LoadedDataset> halumem_fixture() {
    std::vector<LoadedDataset> out;
    auto imported = suites::benchmarks::benchmarks_suite().import_each(
        "halumem", std::string(MEMFAIL_TEST_FIXTURES) + "/halumem/halumem-medium-fixture.jsonl",
        [&](data::Scenario&& s) -> Result<void> {
            LoadedDataset d;
            d.hash = data::scenario_hash(s);
            d.origin = "fixture";
            d.scenario = std::move(s);
            out.push_back(std::move(d));
            return {};
        });
    EXPECT_TRUE(imported) << imported.error().describe();
    return out;
}

// A suite's checks after each session (HaluMem's operations) under --resume: a run stopped after
// a few rows and resumed records every session's checks once, equal to an uninterrupted run's.
TEST(Resume, SessionChecksAreRecordedOnceAndEqualAnUninterruptedRuns) {
    TempDir dir;
    const std::vector<LoadedDataset> halumem = halumem_fixture();
    ASSERT_EQ(halumem.size(), 2u);
    RunConfig config;
    config.system_spec = "verbatim:retriever=bm25";
    config.ks = {1, 5};
    config.results_path = dir.file("r.db");
    const auto factory = factory_for_spec(config.system_spec);
    int recorded = 0;
    auto first = run_datasets(config, halumem, factory, {}, [&](const std::string&, int) { return ++recorded < 5; });
    ASSERT_TRUE(first.has_value()) << first.error().describe();
    config.resume = true;
    auto second = run_datasets(config, halumem, factory);
    ASSERT_TRUE(second.has_value()) << second.error().describe();
    EXPECT_EQ(second->run_id, first->run_id);
    RunConfig fresh = config;
    fresh.resume = false;
    fresh.results_path = dir.file("fresh.db");
    ASSERT_TRUE(run_datasets(fresh, halumem, factory).has_value());
    auto rows = [](const std::string& path) {
        auto db = store::ResultsDb::open(path).value();
        auto s = db.database()
                     .prepare("SELECT scenario_id, session_id, name, item, COALESCE(score, -1), label, grader "
                              "FROM session_checks ORDER BY 1, 2, 3, 4")
                     .value();
        std::vector<std::string> out;
        EXPECT_TRUE(s.for_each_row([&] {
                         out.push_back(s.column_text(0) + "|" + s.column_text(1) + "|" + s.column_text(2) + "|" +
                                       s.column_text(3) + "|" + std::to_string(s.column_double(4)) + "|" +
                                       s.column_text(5) + "|" + s.column_text(6));
                     }).has_value());
        return out;
    };
    const auto resumed = rows(config.results_path);
    const auto clean = rows(fresh.results_path);
    // 8 sessions: 16 extraction, 3 update and 5 false-memory items, and the 50 memories they added.
    EXPECT_EQ(resumed.size(), 74u);
    EXPECT_EQ(resumed, clean);
}

// A run killed after it stored sessions past a checkpoint whose rows were not yet written (rows are
// written after the sessions that follow are stored): resumed, the persisted store (every built-in
// store is idempotent) starts again, so that checkpoint's probes and the suite's session checks see
// exactly the sessions up to it. Made deterministic by removing a finished run's rows for the first
// checkpoint and for one session's checks, as a kill at that moment would have left the file.
TEST(Resume, AStoreAheadOfTheFirstCheckpointToGradeStartsAgain) {
    TempDir dir;
    const std::vector<LoadedDataset> halumem = halumem_fixture();
    ASSERT_EQ(halumem.size(), 2u);
    const std::string priya = halumem.at(0).scenario.id;
    RunConfig config;
    config.system_spec = "verbatim:retriever=bm25";
    config.ks = {5};
    config.results_path = dir.file("r.db");
    const auto factory = factory_for_spec(config.system_spec);
    auto first = run_datasets(config, halumem, factory);
    ASSERT_TRUE(first.has_value()) << first.error().describe();
    RunConfig fresh = config;
    fresh.results_path = dir.file("clean.db");
    ASSERT_TRUE(run_datasets(fresh, halumem, factory).has_value());
    {
        auto db = store::ResultsDb::open(config.results_path).value();
        for (const char* table : {"probe_results", "fact_results", "stage_checks", "memory_checks", "probe_texts"})
            ASSERT_TRUE(db.database()
                            .exec(std::string("DELETE FROM ") + table + " WHERE scenario_id = '" + priya +
                                  "' AND probe_id IN ('s1-q1', 's1-q2')")
                            .has_value());
        ASSERT_TRUE(db.database().exec("DELETE FROM session_checks WHERE scenario_id = '" + priya + "' AND session_id = 's4'").has_value());
        ASSERT_TRUE(db.database().exec("UPDATE runs SET status = 'running', finished_at = NULL").has_value());
        ASSERT_TRUE(db.database().exec("UPDATE run_scenarios SET status = 'storing' WHERE scenario_id = '" + priya + "'").has_value());
    }
    config.resume = true;
    auto resumed = run_datasets(config, halumem, factory);
    ASSERT_TRUE(resumed.has_value()) << resumed.error().describe();
    EXPECT_TRUE(resumed->resumed);
    EXPECT_EQ(resumed->probes_graded, 2u);
    auto rows = [&](const std::string& path, const std::string& sql, int columns) {
        auto db = store::ResultsDb::open(path).value();
        auto q = db.database().prepare(sql).value();
        std::vector<std::string> out;
        EXPECT_TRUE(q.for_each_row([&] {
                         std::string row;
                         for (int c = 0; c < columns; ++c) row += (q.column_is_null(c) ? "NULL" : q.column_text(c)) + "|";
                         out.push_back(row);
                     }).has_value());
        return out;
    };
    const std::string probes = "SELECT probe_id, k, stage, retrieved_json FROM probe_results WHERE scenario_id = '" + priya +
                               "' AND probe_id IN ('s1-q1', 's1-q2') ORDER BY 1, 2";
    const std::string checks = "SELECT scenario_id, session_id, name, item, score, label FROM session_checks ORDER BY 1, 2, 3, 4";
    const auto clean_probes = rows(fresh.results_path, probes, 4);
    ASSERT_EQ(clean_probes.size(), 2u);
    EXPECT_EQ(rows(config.results_path, probes, 4), clean_probes);
    EXPECT_EQ(rows(config.results_path, checks, 6), rows(fresh.results_path, checks, 6));
}

TEST(Resume, AFinishedRunIsNeverDuplicated) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "none";
    config.ks = {1};
    config.results_path = dir.file("r.db");
    const std::vector<LoadedDataset> one = {all_datasets()[2]};
    auto first = run_datasets(config, one, factory_for_spec("none"));
    ASSERT_TRUE(first.has_value()) << first.error().describe();
    config.resume = true;
    for (long long id : {0LL, static_cast<long long>(first->run_id)}) {
        config.resume_run_id = id;
        auto again = run_datasets(config, one, factory_for_spec("none"));
        ASSERT_TRUE(again.has_value()) << again.error().describe();
        EXPECT_TRUE(again->already_finished);
        EXPECT_EQ(again->run_id, first->run_id);
        EXPECT_EQ(again->probes_graded, 0u);
    }
    auto db = store::ResultsDb::open(config.results_path).value();
    EXPECT_EQ(db.runs().value().size(), 1u);
    auto rows = db.database().prepare("SELECT COUNT(*) FROM probe_results").value();
    ASSERT_TRUE(rows.step().value());
    EXPECT_EQ(static_cast<std::size_t>(rows.column_int(0)), one[0].scenario.probes.size());
}

TEST(Resume, OneRunHasOneWriter) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "none";
    config.ks = {1};
    config.results_path = dir.file("r.db");
    const std::vector<LoadedDataset> one = {all_datasets()[2]};
    auto first = run_datasets(config, one, factory_for_spec("none"), {}, [](const std::string&, int) { return false; });
    ASSERT_TRUE(first.has_value());
    auto db = store::ResultsDb::open(config.results_path).value();
    EXPECT_FALSE(db.run_writer(first->run_id).value().has_value());  // given up when it stopped
    char host[256] = {};
    ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
    const auto hold = [&](long long pid) {
        auto s = db.database().prepare("INSERT OR REPLACE INTO run_writers(run_id, pid, host, since) VALUES(?, ?, ?, 'then')").value();
        s.bind(1, first->run_id).bind(2, static_cast<std::int64_t>(pid)).bind(3, std::string(host));
        ASSERT_TRUE(s.run().has_value());
    };
    // A live process (this test's parent) holds it: a second writer is refused and changes nothing.
    hold(static_cast<long long>(::getppid()));
    config.resume = true;
    auto refused = run_datasets(config, one, factory_for_spec("none"));
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().kind, ErrorKind::invalid_input);  // exit 2
    EXPECT_NE(refused.error().message.find("is being written by pid " + std::to_string(::getppid())), std::string::npos)
        << refused.error().message;
    EXPECT_EQ(db.run(first->run_id).value()->status, "running");
    // A claim left by a process that died is taken over, and the run finishes.
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ASSERT_GT(child, 0);
    ::waitpid(child, nullptr, 0);
    hold(child);
    auto resumed = run_datasets(config, one, factory_for_spec("none"));
    ASSERT_TRUE(resumed.has_value()) << resumed.error().describe();
    EXPECT_EQ(db.run(first->run_id).value()->status, "finished");
    EXPECT_FALSE(db.run_writer(first->run_id).value().has_value());
}

TEST(Runner, LimitAsksTheFirstProbesAndNameLabelsTheRun) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "verbatim";
    config.ks = {1, 5};
    config.results_path = dir.file("r.db");
    config.limit = 7;
    config.name = "baseline";
    const std::vector<LoadedDataset> two = {all_datasets()[0], all_datasets()[4]};
    auto outcome = run_datasets(config, two, factory_for_spec("verbatim"));
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    EXPECT_EQ(outcome->probes_graded, 2u * 7u * 2u);
    auto db = store::ResultsDb::open(config.results_path).value();
    auto s = db.database().prepare("SELECT COUNT(DISTINCT probe_id) FROM probe_results GROUP BY dataset").value();
    EXPECT_TRUE(s.for_each_row([&] { EXPECT_EQ(s.column_int(0), 7); }).has_value());
    const auto run = db.run(outcome->run_id).value();
    EXPECT_EQ(run->label(), "baseline");
    EXPECT_EQ(nlohmann::json::parse(run->config_json)["limit"], 7);
    // The hash names the probes asked, not the whole file.
    for (const auto& sc : db.scenarios(outcome->run_id).value())
        for (const auto& d : two)
            if (d.scenario.id == sc.scenario_id) {
                EXPECT_NE(sc.dataset_hash, d.hash);
            }
    const auto tables = report::success_tables_by_run(db, {outcome->run_id});
    ASSERT_TRUE(tables.has_value());
    EXPECT_NE(tables->front().title.find("baseline"), std::string::npos);
}

TEST(Resume, AnotherConfigurationIsNotResumedByMistake) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "none";
    config.ks = {1};
    config.results_path = dir.file("r.db");
    const std::vector<LoadedDataset> one = {all_datasets()[2]};
    auto first = run_datasets(config, one, factory_for_spec("none"), {}, [](const std::string&, int) { return false; });
    ASSERT_TRUE(first.has_value());
    config.ks = {3};
    config.resume = true;
    config.resume_run_id = first->run_id;
    auto refused = run_datasets(config, one, factory_for_spec("none"));
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().kind, ErrorKind::invalid_input);
}

// Stores through verbatim but fails every third retrieval, as a flaky adapter would.
class FlakyRetriever final : public memory::MemorySystem {
public:
    explicit FlakyRetriever(const memory::SystemContext& c)
        : m_inner(memory::make_memory_system("verbatim", c).value()) {}
    std::string spec() const override { return "test:flaky"; }
    memory::Capabilities capabilities() const override { return m_inner->capabilities(); }
    Result<void> store_conversation(const data::Session& s) override { return m_inner->store_conversation(s); }
    Result<std::vector<memory::Hit>> retrieve_memories(std::string_view q, const std::vector<data::Message>& h,
                                                       int k) override {
        if (++m_calls % 3 == 0) return make_error(ErrorKind::timeout, "adapter did not answer in time");
        return m_inner->retrieve_memories(q, h, k);
    }
    Result<std::vector<memory::Memory>> all_memories() override { return m_inner->all_memories(); }
    Result<void> reset() override { return m_inner->reset(); }

private:
    std::unique_ptr<memory::MemorySystem> m_inner;
    int m_calls = 0;
};

TEST(Runner, AFailedRetrievalIsRecordedAndTheRunGoesOn) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "test:flaky";
    config.ks = {5};
    config.results_path = dir.file("r.db");
    const std::vector<LoadedDataset> one = {all_datasets()[4]};
    auto outcome = run_datasets(config, one, [](const memory::SystemContext& c) -> Result<std::unique_ptr<memory::MemorySystem>> {
        return std::unique_ptr<memory::MemorySystem>(std::make_unique<FlakyRetriever>(c));
    });
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    auto db = store::ResultsDb::open(config.results_path).value();
    EXPECT_EQ(db.run(outcome->run_id).value()->status, "finished");
    const auto rows = db.summary({outcome->run_id}).value();
    ASSERT_EQ(rows.size(), 1u);
    const auto probes = static_cast<long>(one[0].scenario.probes.size());
    EXPECT_EQ(rows[0].errors, probes / 3);
    EXPECT_EQ(rows[0].graded, probes);
    auto message = db.database().prepare("SELECT error FROM probe_results WHERE stage = 'error' LIMIT 1").value();
    ASSERT_TRUE(message.step().value());
    EXPECT_NE(message.column_text(0).find("did not answer"), std::string::npos);
}

TEST(Runner, RetryErrorsGradesExactlyTheProbesInErrorAgainInPlace) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "test:flaky";
    config.ks = {5};
    config.results_path = dir.file("r.db");
    const std::vector<LoadedDataset> one = {all_datasets()[4]};
    // The same spec either way (same configuration); the second process's system happens to answer.
    bool flaky = true;
    const SystemFactory factory = [&](const memory::SystemContext& c) -> Result<std::unique_ptr<memory::MemorySystem>> {
        if (flaky) return std::unique_ptr<memory::MemorySystem>(std::make_unique<FlakyRetriever>(c));
        return memory::make_memory_system("verbatim", c);
    };
    auto first = run_datasets(config, one, factory);
    ASSERT_TRUE(first.has_value()) << first.error().describe();
    auto db = store::ResultsDb::open(config.results_path).value();
    const auto probes = static_cast<long>(one[0].scenario.probes.size());
    ASSERT_EQ(db.summary({first->run_id}).value()[0].errors, probes / 3);
    // Plain --resume does nothing to a finished run, errors included.
    config.resume = true;
    auto resumed = run_datasets(config, one, factory);
    ASSERT_TRUE(resumed.has_value());
    EXPECT_TRUE(resumed->already_finished);
    EXPECT_EQ(db.summary({first->run_id}).value()[0].errors, probes / 3);

    flaky = false;
    config.retry_errors = true;
    auto retried = run_datasets(config, one, factory);
    ASSERT_TRUE(retried.has_value()) << retried.error().describe();
    EXPECT_EQ(retried->run_id, first->run_id);
    EXPECT_EQ(retried->retried, probes / 3);
    EXPECT_EQ(static_cast<long>(retried->probes_graded), probes / 3);  // exactly those, nothing else
    const auto after = db.summary({first->run_id}).value();
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0].errors, 0);
    EXPECT_EQ(after[0].graded, probes);
    EXPECT_EQ(db.runs().value().size(), 1u);
    EXPECT_EQ(db.run(first->run_id).value()->status, "finished");
    // Nothing left to retry, and no run to retry in an empty file.
    auto again = run_datasets(config, one, factory);
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->retried, 0);
    config.results_path = dir.file("empty.db");
    EXPECT_FALSE(run_datasets(config, one, factory).has_value());
}

// An outside system that "crashes" on its Nth store or Nth retrieval (with `repeat`, on every Nth):
// like an exec adapter, it comes back empty with a new generation, and the call that crashed fails.
class RestartingAdapter final : public memory::MemorySystem {
public:
    RestartingAdapter(const memory::SystemContext& c, int crash_on_store, int crash_on_retrieve = -1,
                      bool repeat = false)
        : m_context(c), m_inner(memory::make_memory_system("verbatim", c).value()), m_crash_on(crash_on_store),
          m_crash_on_retrieve(crash_on_retrieve), m_repeat(repeat) {}
    std::string spec() const override { return "test:restarting"; }
    memory::Capabilities capabilities() const override {
        auto caps = m_inner->capabilities();
        caps.external = true;
        return caps;
    }
    Result<void> store_conversation(const data::Session& s) override {
        if (hit(++m_stores, m_crash_on)) {
            ++m_generation;
            MF_TRY(m_inner->reset());
            return make_error(ErrorKind::io, "the adapter exited with status 1");
        }
        return m_inner->store_conversation(s);
    }
    Result<std::vector<memory::Hit>> retrieve_memories(std::string_view q, const std::vector<data::Message>& h,
                                                       int k) override {
        if (hit(++m_retrieves, m_crash_on_retrieve)) {
            ++m_generation;
            MF_TRY(m_inner->reset());
            return make_error(ErrorKind::protocol, "the adapter printed a line that is not JSON");
        }
        return m_inner->retrieve_memories(q, h, k);
    }
    Result<std::vector<memory::Memory>> all_memories() override { return m_inner->all_memories(); }
    Result<void> reset() override { return m_inner->reset(); }
    std::uint64_t generation() const override { return m_generation; }

private:
    bool hit(int count, int on) const { return on > 0 && (m_repeat ? count % on == 0 : count == on); }

    memory::SystemContext m_context;
    std::unique_ptr<memory::MemorySystem> m_inner;
    int m_crash_on;
    int m_crash_on_retrieve;
    bool m_repeat;
    int m_stores = 0;
    int m_retrieves = 0;
    std::uint64_t m_generation = 0;
};

// probe@k -> stage of every row of a run.
std::map<std::string, std::string> stages_of(const std::string& results, std::int64_t run_id) {
    auto db = store::ResultsDb::open(results).value();
    auto s = db.database().prepare("SELECT dataset, probe_id, k, stage FROM probe_results WHERE run_id = ?").value();
    s.bind(1, run_id);
    std::map<std::string, std::string> out;
    EXPECT_TRUE(s.for_each_row([&] {
        out[s.column_text(0) + "/" + s.column_text(1) + "@" + std::to_string(s.column_int(2))] = s.column_text(3);
    }).has_value());
    return out;
}

// The same datasets through a RestartingAdapter that never crashes: what a recovered run must equal.
std::map<std::string, std::string> clean_stages(const std::vector<LoadedDataset>& datasets, const std::vector<int>& ks) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "test:restarting";
    config.ks = ks;
    config.results_path = dir.file("clean.db");
    auto outcome = run_datasets(config, datasets, [](const memory::SystemContext& c) -> Result<std::unique_ptr<memory::MemorySystem>> {
        return std::unique_ptr<memory::MemorySystem>(std::make_unique<RestartingAdapter>(c, -1));
    });
    MF_ASSERT(outcome.has_value(), "the clean run must succeed");
    return stages_of(config.results_path, outcome->run_id);
}

TEST(Runner, AnAdapterThatLosesItsMemoryWhileStoringIsRestoredAndNothingIsLost) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "test:restarting";
    config.ks = {3, 5};
    config.results_path = dir.file("r.db");
    const std::vector<LoadedDataset> two = {all_datasets()[4], all_datasets()[0]};
    int made = 0;
    std::vector<std::string> progress;
    auto outcome = run_datasets(config, two, [&made](const memory::SystemContext& c) -> Result<std::unique_ptr<memory::MemorySystem>> {
        // Only the first dataset's adapter crashes, once, on its 4th store.
        return std::unique_ptr<memory::MemorySystem>(std::make_unique<RestartingAdapter>(c, made++ == 0 ? 4 : -1));
    }, [&](const std::string& line) { progress.push_back(line); });
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    auto db = store::ResultsDb::open(config.results_path).value();
    EXPECT_EQ(db.run(outcome->run_id).value()->status, "finished");
    // The sessions stored before the crash were stored again into the restarted adapter, the failed
    // store was sent again, and every probe ends as in a run without the crash.
    EXPECT_EQ(stages_of(config.results_path, outcome->run_id), clean_stages(two, config.ks));
    EXPECT_TRUE(std::any_of(progress.begin(), progress.end(), [](const std::string& line) {
        return line.find("storing its 3 sessions again (restore 1 of 3)") != std::string::npos;
    }));
}

TEST(Runner, AnAdapterThatKeepsLosingItsMemoryHasTheRestOfItsScenarioRecordedAsLost) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "test:restarting";
    config.ks = {3, 5};
    config.results_path = dir.file("r.db");
    const std::vector<LoadedDataset> two = {all_datasets()[4], all_datasets()[0]};
    int made = 0;
    auto outcome = run_datasets(config, two, [&made](const memory::SystemContext& c) -> Result<std::unique_ptr<memory::MemorySystem>> {
        // The first dataset's adapter crashes on every 4th store, restores included.
        return std::unique_ptr<memory::MemorySystem>(std::make_unique<RestartingAdapter>(c, made++ == 0 ? 4 : -1, -1, true));
    });
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    auto db = store::ResultsDb::open(config.results_path).value();
    EXPECT_EQ(db.run(outcome->run_id).value()->status, "finished");
    std::map<std::string, store::SummaryRow> by_dataset;
    for (const auto& row : db.summary({outcome->run_id}).value())
        if (row.k == 5) by_dataset[row.dataset] = row;
    const auto& crashed = by_dataset.at(two[0].scenario.dataset);
    const auto& fine = by_dataset.at(two[1].scenario.dataset);
    // Every probe is recorded exactly once, as an error (not as not_stored), and the next dataset runs.
    EXPECT_EQ(crashed.graded, static_cast<long>(two[0].scenario.probes.size()));
    EXPECT_EQ(crashed.errors, crashed.graded);
    EXPECT_EQ(fine.errors, 0);
    EXPECT_EQ(fine.graded, static_cast<long>(two[1].scenario.probes.size()));
    auto message = db.database().prepare("SELECT error FROM probe_results WHERE stage = 'error' LIMIT 1").value();
    ASSERT_TRUE(message.step().value());
    EXPECT_NE(message.column_text(0).find("lost its memory more than 3 times"), std::string::npos) << message.column_text(0);
    EXPECT_NE(message.column_text(0).find("exited with status 1"), std::string::npos) << message.column_text(0);
}

TEST(Runner, AnAdapterRestartMidCheckpointIsRestoredAndGoesOnFromTheProbeItWasOn) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "test:restarting";
    config.ks = {5};
    config.results_path = dir.file("r.db");
    const std::vector<LoadedDataset> one = {all_datasets()[4]};
    static constexpr int crash_on = 10;
    int written = 0;
    auto outcome = run_datasets(config, one, [&](const memory::SystemContext& c) -> Result<std::unique_ptr<memory::MemorySystem>> {
        return std::unique_ptr<memory::MemorySystem>(std::make_unique<RestartingAdapter>(c, -1, crash_on));
    }, {}, [&](const std::string&, int) { ++written; return true; });
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    auto db = store::ResultsDb::open(config.results_path).value();
    const auto rows = db.summary({outcome->run_id}).value();
    ASSERT_EQ(rows.size(), 1u);
    const auto probes = static_cast<long>(one[0].scenario.probes.size());
    EXPECT_EQ(rows[0].graded, probes);
    EXPECT_EQ(rows[0].errors, 0);
    EXPECT_EQ(stages_of(config.results_path, outcome->run_id), clean_stages(one, config.ks));
    EXPECT_EQ(written, probes);  // each row written once
}

TEST(Runner, BadKAndUnknownSystemAreClearErrors) {
    TempDir dir;
    RunConfig config;
    config.results_path = dir.file("r.db");
    config.ks = {0};
    EXPECT_FALSE(run_datasets(config, {all_datasets()[0]}, factory_for_spec("none")).has_value());
    config.ks = {1};
    auto unknown = run_datasets(config, {all_datasets()[0]}, factory_for_spec("verbatm"));
    ASSERT_FALSE(unknown.has_value());
    EXPECT_NE(unknown.error().message.find("verbatim"), std::string::npos) << unknown.error().message;
}

}  // namespace
}  // namespace memfail::run

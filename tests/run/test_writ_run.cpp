// SPDX-License-Identifier: MIT
// The write-integrity suite end to end through the runner: generated datasets, the ledger reference
// system and its naive floor, a raw-turn store, the three modes, and the answer side graded by
// rubric. Each figure asserted here is one a faithful system must reach and a broken one cannot.
#include <memfail/data/jsonl.hpp>
#include <memfail/suites/writ/report.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>
#include <memfail/suites/suite.hpp>

#include <support/temp_dir.hpp>

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace memfail::run {
namespace {

using testing::TempDir;

// Three scenarios of every category, generated with the default seed.
std::vector<LoadedDataset> writ_datasets(std::size_t per_category = 3) {
    const suites::Suite* writ = suites::find_suite("writ");
    EXPECT_NE(writ, nullptr);
    std::vector<LoadedDataset> out;
    for (const auto& name : writ->dataset_names()) {
        auto scenarios = writ->generate(name, {42, {{"scenarios", std::to_string(per_category)}}});
        EXPECT_TRUE(scenarios.has_value()) << name << ": " << scenarios.error().describe();
        if (!scenarios) continue;
        for (auto& s : *scenarios) {
            std::string hash = data::scenario_hash(s);
            out.push_back({std::move(s), "generated", std::move(hash)});
        }
    }
    return out;
}

struct Rate {
    std::int64_t decided = 0, passed = 0, undecided = 0;
    double rate() const { return decided ? static_cast<double>(passed) / static_cast<double>(decided) : -1; }
};

// check -> mode -> counts, at k.
std::map<std::string, std::map<std::string, Rate>> rates(const std::string& results, std::int64_t run, int k) {
    auto db = store::ResultsDb::open(results);
    EXPECT_TRUE(db.has_value());
    auto checks = db->memory_checks(run);
    EXPECT_TRUE(checks.has_value());
    std::map<std::string, std::map<std::string, Rate>> out;
    for (const auto& c : *checks) {
        if (c.k != k) continue;
        Rate& r = out[c.row.check][suites::writ::split_mode(c.scenario_id).second];
        if (!c.row.passed) ++r.undecided;
        else {
            ++r.decided;
            r.passed += *c.row.passed ? 1 : 0;
        }
    }
    return out;
}

RunOutcome run_system(const TempDir& dir, const std::string& system, const std::vector<LoadedDataset>& datasets,
                      const std::vector<std::string>& modes = {}, llm::LlmClient* client = nullptr) {
    RunConfig config;
    config.system_spec = system;
    config.ks = {1, 5};
    config.results_path = dir.file("results.db");
    config.modes = modes;
    if (client) {
        config.llm.answer_model = "taker";
        config.llm.concurrency = 4;
    }
    auto outcome = run_datasets(config, datasets, factory_for_spec(system), {}, {}, client);
    EXPECT_TRUE(outcome.has_value()) << outcome.error().describe();
    return outcome ? *outcome : RunOutcome{};
}

TEST(WritRun, TheLedgerWithGoldExtractionKeepsEveryWriteIntegrityCheck) {
    TempDir dir;
    const auto outcome = run_system(dir, "ledger:extract=oracle", writ_datasets());
    const auto r = rates(dir.file("results.db"), outcome.run_id, 5);
    for (const char* check : {"current_held", "stale_exposure", "retraction", "over_retention", "authority",
                              "history_complete", "as_of", "provenance"}) {
        ASSERT_TRUE(r.count(check)) << check << " never applied";
        const Rate& x = r.at(check).at("native");
        EXPECT_GT(x.decided, 0) << check;
        EXPECT_EQ(x.passed, x.decided) << check;
        EXPECT_EQ(x.undecided, 0) << check;
    }
}

TEST(WritRun, LastWriteWinsVisiblyFailsHistoryAndAsOf) {
    TempDir dir;
    const auto outcome = run_system(dir, "ledger:extract=oracle,history=off", writ_datasets());
    const auto r = rates(dir.file("results.db"), outcome.run_id, 5);
    EXPECT_LT(r.at("history_complete").at("native").rate(), 0.25);
    EXPECT_EQ(r.at("as_of").at("native").passed, 0);
    // What it does keep, it keeps: the current value.
    EXPECT_EQ(r.at("current_held").at("native").rate(), 1.0);
}

TEST(WritRun, ARawTurnStoreKeepsWhatShouldHaveGone) {
    TempDir dir;
    const auto outcome = run_system(dir, "verbatim", writ_datasets());
    const auto r = rates(dir.file("results.db"), outcome.run_id, 5);
    EXPECT_EQ(r.at("retraction").at("native").passed, 0);
    EXPECT_EQ(r.at("over_retention").at("native").passed, 0);
    EXPECT_LT(r.at("stale_exposure").at("native").rate(), 0.9);
    EXPECT_EQ(r.at("history_complete").at("native").rate(), 1.0);  // it forgets nothing
}

TEST(WritRun, ModesRunEveryScenarioOncePerMode) {
    TempDir dir;
    auto datasets = writ_datasets(1);
    const auto outcome = run_system(dir, "verbatim", datasets, {"native", "no_memory", "oracle"});
    auto db = store::ResultsDb::open(dir.file("results.db"));
    ASSERT_TRUE(db.has_value());
    auto scenarios = db->scenarios(outcome.run_id);
    ASSERT_TRUE(scenarios.has_value());
    EXPECT_EQ(scenarios->size(), 3 * datasets.size());
    std::set<std::string> modes;
    for (const auto& s : *scenarios) {
        const auto [id, mode] = suites::writ::split_mode(s.scenario_id);
        modes.insert(mode);
        EXPECT_EQ(suites::writ::split_mode(s.dataset).second, mode) << s.dataset;
    }
    EXPECT_EQ(modes, (std::set<std::string>{"native", "no_memory", "oracle"}));
    const auto r = rates(dir.file("results.db"), outcome.run_id, 5);
    EXPECT_EQ(r.at("current_held").at("no_memory").passed, 0);  // nothing remembered
    EXPECT_EQ(r.at("as_of").at("oracle").rate(), 1.0);           // the gold events, with their history
    EXPECT_EQ(r.at("as_of").at("native").passed, 0);             // verbatim has no state as of a date
}

TEST(WritRun, AnUnknownOrRepeatedModeIsRefused) {
    TempDir dir;
    RunConfig config;
    config.system_spec = "verbatim";
    config.results_path = dir.file("results.db");
    config.modes = {"native", "orcale"};
    auto r = run_datasets(config, writ_datasets(1), factory_for_spec("verbatim"));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message.find("did you mean 'oracle'"), std::string::npos) << r.error().message;
    config.modes = {"native", "native"};
    r = run_datasets(config, writ_datasets(1), factory_for_spec("verbatim"));
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message.find("listed twice"), std::string::npos);
}

// A test-taker that always declines.
class Decliner final : public llm::LlmClient {
public:
    Result<llm::ChatReply> chat(const llm::ChatRequest&) override {
        llm::ChatReply reply;
        reply.content = "I don't know; you never told me.";
        reply.attempts = 1;
        reply.usage = {10, 5, false};
        return reply;
    }
    Result<llm::EmbeddingReply> embed(const llm::EmbeddingRequest&) override {
        return make_error(ErrorKind::unsupported, "no embeddings here");
    }
    std::string identity() const override { return "decliner://test"; }
};

TEST(WritRun, AnswersAreGradedByRubricInEveryModeAndAbstentionIsMeasured) {
    TempDir dir;
    Decliner client;
    const auto outcome = run_system(dir, "ledger:extract=oracle", writ_datasets(2), {"native", "no_memory"}, &client);
    auto db = store::ResultsDb::open(dir.file("results.db"));
    ASSERT_TRUE(db.has_value());
    auto rows = db->probe_rows(outcome.run_id);
    ASSERT_TRUE(rows.has_value());
    std::size_t abstain_right = 0, answerable_wrong = 0, graded_unreached = 0;
    for (const auto& row : *rows) {
        ASSERT_NE(row.stage, "error") << row.error;
        ASSERT_TRUE(row.answer.has_value());
        if (!row.answer_correct) continue;  // unverified: a semantic rubric without a judge
        if (row.kind == "abstain") abstain_right += *row.answer_correct;
        else answerable_wrong += !*row.answer_correct;
        // No memory: nothing stored, yet the answer is graded (the mode comparison needs it).
        if (row.reasoning == "not reached") ++graded_unreached;
    }
    EXPECT_GT(abstain_right, 0u);
    EXPECT_GT(answerable_wrong, 0u);
    EXPECT_GT(graded_unreached, 0u);
    auto table = suites::writ::integrity_answer_table(*db, {outcome.run_id}, report::TableStyle::machine);
    ASSERT_TRUE(table.has_value());
    std::map<std::pair<std::string, std::string>, std::string> rate;  // (mode, metric) -> rate
    for (const auto& r : table->rows) rate[{r[1], r[2]}] = r[5];
    const std::pair<std::string, std::string> recall{"native", "abstention_recall"};
    const std::pair<std::string, std::string> precision{"native", "abstention_precision"};
    const std::pair<std::string, std::string> accuracy{"native", "recall_accuracy"};
    EXPECT_EQ(rate[recall], "1");     // declined every probe it should have
    EXPECT_NE(rate[precision], "1");  // and every other one too
    EXPECT_EQ(rate[accuracy], "0");
}


// Counts the read operations a run asks of a system that holds the past (the ledger under it).
class CountingReads final : public memory::MemorySystem {
public:
    CountingReads(std::unique_ptr<memory::MemorySystem> inner, std::map<std::string, int>& as_of_calls)
        : m_inner(std::move(inner)), m_calls(as_of_calls) {}
    std::string spec() const override { return m_inner->spec(); }
    memory::Capabilities capabilities() const override { return m_inner->capabilities(); }
    Result<void> store_conversation(const data::Session& session) override {
        m_stored = session.id;
        return m_inner->store_conversation(session);
    }
    Result<std::vector<memory::Hit>> retrieve_memories(std::string_view q, const std::vector<data::Message>& h,
                                                       int k) override {
        return m_inner->retrieve_memories(q, h, k);
    }
    Result<std::vector<memory::Memory>> all_memories() override { return m_inner->all_memories(); }
    Result<void> reset() override { return m_inner->reset(); }
    Result<std::vector<memory::MemoryEvent>> history(std::string_view id) override { return m_inner->history(id); }
    Result<std::vector<memory::Memory>> state_as_of(std::string_view when) override {
        ++m_calls[m_scenario + "/" + m_stored + "@" + std::string(when)];
        return m_inner->state_as_of(when);
    }
    void observe_ground_truth(const data::Scenario& scenario) override {
        m_scenario = scenario.id;
        m_inner->observe_ground_truth(scenario);
    }

private:
    std::unique_ptr<memory::MemorySystem> m_inner;
    std::map<std::string, int>& m_calls;
    std::string m_scenario, m_stored;
};

TEST(WritRun, EachDateIsAskedOfTheSystemOncePerCheckpoint) {
    TempDir dir;
    const suites::Suite* writ = suites::find_suite("writ");
    auto scenarios = writ->generate("writ_temporal", {42, {{"scenarios", "3"}}});
    ASSERT_TRUE(scenarios.has_value());
    std::vector<LoadedDataset> datasets;
    for (auto& s : *scenarios) {
        std::string hash = data::scenario_hash(s);
        datasets.push_back({std::move(s), "generated", std::move(hash)});
    }
    std::map<std::string, int> calls;
    RunConfig config;
    config.system_spec = "ledger:extract=oracle";
    config.ks = {1, 3, 5};
    config.results_path = dir.file("results.db");
    const SystemFactory factory = [&](const memory::SystemContext& context) -> Result<std::unique_ptr<memory::MemorySystem>> {
        MF_TRY_ASSIGN(auto inner, memory::make_memory_system("ledger:extract=oracle", context));
        return std::unique_ptr<memory::MemorySystem>(std::make_unique<CountingReads>(std::move(inner), calls));
    };
    auto outcome = run_datasets(config, datasets, factory);
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    ASSERT_FALSE(calls.empty());  // temporal probes ask about the past
    // The snapshot and the as_of check share one answer per checkpoint and date, at every k.
    for (const auto& [where, n] : calls) EXPECT_EQ(n, 1) << where;
}

}  // namespace
}  // namespace memfail::run

// SPDX-License-Identifier: MIT
// The LLM stages end to end against the scripted OpenAI-compatible server (tools/fake-llm) over real
// HTTP: the judge's verdicts land on the right stage, a repeated run makes no request and
// reproduces every row, the key reaches no artefact, failures are recorded per probe, concurrency
// is real, and a killed run resumes from the cache.
#include <memfail/data/jsonl.hpp>
#include <memfail/llm/llm_stack.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>

#include <fake_llm.hpp>
#include <support/small_datasets.hpp>
#include <support/temp_dir.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace memfail::run {
namespace {

using nlohmann::json;
using testing::TempDir;

constexpr const char* k_key = "sk-memfail-test-7f3a9c21b4d84e0f";

using testing::small_datasets;

// A script under which every judge stage passes except where a rule says otherwise.
json passing_script() {
    json script = json::parse(R"({
      "rules": [
        {"name": "summary", "match": {"schema": "memfail_judge_summary"},
         "json": {"faithful": true, "missing": [], "reason": "kept"}},
        {"name": "retrieval", "match": {"schema": "memfail_judge_retrieval"},
         "json": {"present": true, "reason": "shown"}},
        {"name": "answer", "match": {"schema": "memfail_judge_answer"},
         "json": {"correct": true, "reason": "right"}},
        {"name": "abstention", "match": {"schema": "memfail_judge_abstention"},
         "json": {"abstained": true, "reason": "declined"}},
        {"name": "mcq", "match": {"contains": "selected_choice"}, "reply": "{\"selected_choice\": \"B\"}"}
      ],
      "default": {"reply": "Yes, I think so."}
    })");
    json results = json::array();
    for (int i = 1; i <= 20; ++i)
        results.push_back(json{{"fact", i}, {"present", true}, {"memories", json::array({"m1"})}, {"reason", "found"}});
    json storage = json::object();
    storage["name"] = "storage";
    storage["match"] = json{{"schema", "memfail_judge_storage"}};
    storage["json"] = json{{"results", results}};
    script["rules"].insert(script["rules"].begin(), storage);
    return script;
}

// A rule from its JSON text.
json rule(const char* text) { return json::parse(text); }

struct Harness {
    TempDir dir;
    std::unique_ptr<fake_llm::FakeLlmServer> server;
    RunConfig config;

    explicit Harness(json script, std::string required_key = "") {
        fake_llm::ServerOptions options;
        options.script = std::move(script);
        options.required_key = std::move(required_key);
        auto started = fake_llm::FakeLlmServer::start(std::move(options));
        if (!started) std::fprintf(stderr, "fake server: %s\n", started.error().describe().c_str());
        MF_ASSERT(started.has_value(), "the fake server must start");
        server = std::move(started).value();
        config.system_spec = "verbatim";
        config.ks = {3};
        config.results_path = dir.file("results.db");
        config.llm.base_url = server->base_url();
        config.llm.api_key_env = "MEMFAIL_TEST_KEY";
        config.llm.answer_model = "taker";
        config.llm.judge_model = "judge";
        config.llm.concurrency = 4;
        config.llm.max_retries = 1;
        config.llm.timeout_seconds = 10;
    }

    Result<RunOutcome> run(const std::vector<LoadedDataset>& datasets, const AfterProbeHook& hook = {}) {
        auto stack = llm::make_llm_stack(config.llm, config.results_path);
        if (!stack) return stack.error();
        return run_datasets(config, datasets, factory_for_spec(config.system_spec), {}, hook, stack->client.get());
    }

    std::int64_t requests() const { return server->stats()["requests"].get<std::int64_t>(); }
};

// probe_id/k -> (stage, answer) for one run.
std::map<std::string, std::pair<std::string, std::string>> rows_of(const std::string& results, std::int64_t run_id) {
    auto db = store::ResultsDb::open(results).value();
    auto s = db.database().prepare("SELECT probe_id, k, stage, COALESCE(answer, '') FROM probe_results WHERE run_id = ?").value();
    s.bind(1, run_id);
    std::map<std::string, std::pair<std::string, std::string>> out;
    EXPECT_TRUE(s.for_each_row([&] {
        out[s.column_text(0) + "@" + std::to_string(s.column_int(1))] = {s.column_text(2), s.column_text(3)};
    }).has_value());
    return out;
}

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

class LlmRun : public ::testing::Test {
protected:
    void SetUp() override { ::setenv("MEMFAIL_TEST_KEY", k_key, 1); }
    void TearDown() override { ::unsetenv("MEMFAIL_TEST_KEY"); }
};

TEST_F(LlmRun, ProducesTheFullTaxonomyAndReplaysFromTheCache) {
    Harness h(passing_script(), k_key);
    const auto datasets = small_datasets({"conditional_facts_easy", "long_hop", "persona_retrieval"}, 12);
    auto first = h.run(datasets);
    ASSERT_TRUE(first.has_value()) << first.error().describe();
    const std::int64_t after_first = h.requests();
    EXPECT_GT(after_first, 36);  // at least one answer per probe

    const auto rows = rows_of(h.config.results_path, first->run_id);
    ASSERT_EQ(rows.size(), 36u);
    std::map<std::string, int> stages;
    for (const auto& [id, row] : rows) ++stages[row.first];
    // Conditional facts: verbatim stores and retrieves; "Yes" matches the half whose condition holds.
    EXPECT_GT(stages["correct"], 0);
    // Long-Hop: every answer is B, so most are reasoning errors once retrieval succeeds.
    EXPECT_GT(stages["reasoning_error"] + stages["not_retrieved"], 0);
    EXPECT_EQ(stages["error"], 0);

    // The same command again: zero requests, the same rows byte for byte.
    auto second = h.run(datasets);
    ASSERT_TRUE(second.has_value()) << second.error().describe();
    EXPECT_EQ(h.requests(), after_first);
    EXPECT_EQ(rows_of(h.config.results_path, second->run_id), rows);

    // Accounting: the second run's calls are all cache hits.
    auto db = store::ResultsDb::open(h.config.results_path).value();
    for (const auto& u : db.llm_usage(second->run_id).value()) {
        EXPECT_EQ(u.cache_hits, u.calls) << u.role;
        EXPECT_GT(u.prompt_tokens, 0) << u.role;
    }
}

TEST_F(LlmRun, ExactRulesOutrankTheJudgeWhoseVerdictIsKeptForComparison) {
    // The judge calls the facts about one entity unfaithful; the answer judge rejects everything.
    // verbatim keeps every statement verbatim, so the rules decide the summary exactly: with
    // --grader both the judge is asked too, and its contrary verdict is recorded, never decisive.
    // (Unsure summaries, which the judge does decide, are tested with planted distortions.)
    json script = passing_script();
    script["rules"].insert(script["rules"].begin(),
                           rule(R"({"name": "unfaithful", "match": {"schema": "memfail_judge_summary", "contains": "Ignatius"},
                                    "json": {"faithful": false, "missing": ["condition"], "reason": "condition lost"}})"));
    script["rules"][4]["json"] = rule(R"({"correct": false, "reason": "wrong"})");  // the answer rule
    Harness h(script);
    h.config.grader = "both";
    h.config.ks = {10};  // deep enough that every fact is retrieved and the answer stage is reached
    const auto datasets = small_datasets({"conditional_facts_easy"}, 10);
    auto outcome = h.run(datasets);
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    const auto rows = rows_of(h.config.results_path, outcome->run_id);
    int about_ignatius = 0;
    for (const auto& p : datasets[0].scenario.probes) {
        about_ignatius += p.evidence[0].text.find("Ignatius") != std::string::npos;
        EXPECT_EQ(rows.at(p.id + "@10").first, "reasoning_error") << p.id;
    }
    EXPECT_GT(about_ignatius, 0);
    auto db = store::ResultsDb::open(h.config.results_path).value();
    auto s = db.database().prepare(
        "SELECT SUM(grader = 'llm' AND passed = 0 AND reason = 'condition lost' AND decisive = 0), "
        "       SUM(grader = 'llm' AND decisive = 1), SUM(grader = 'rules' AND passed = 1 AND decisive = 1) "
        "FROM stage_checks WHERE run_id = ? AND stage = 'summary'").value();
    s.bind(1, outcome->run_id);
    ASSERT_TRUE(s.step().value());
    EXPECT_EQ(s.column_int(0), about_ignatius);  // the judge's contrary verdicts, kept
    EXPECT_EQ(s.column_int(1), 0);               // none of them decided anything
    EXPECT_EQ(s.column_int(2), 10);              // the rules' exact verdicts did
    // And the disagreement is there for the report to show.
    EXPECT_GE(db.disagreements(outcome->run_id, 100).value().size(), static_cast<std::size_t>(about_ignatius));
}

TEST_F(LlmRun, CertainRulesSpareTheJudge) {
    // verbatim reports provenance and keeps every detail literally: storage, summary and retrieval
    // are certain, so the judge is asked only about answers.
    Harness h(passing_script());
    h.config.ks = {10};
    auto outcome = h.run(small_datasets({"conditional_facts_easy"}, 6));
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    const auto by_schema = h.server->stats()["by_schema"];
    EXPECT_FALSE(by_schema.contains("memfail_judge_storage"));
    EXPECT_FALSE(by_schema.contains("memfail_judge_summary"));
    EXPECT_FALSE(by_schema.contains("memfail_judge_retrieval"));
    EXPECT_EQ(by_schema["memfail_judge_answer"].get<int>(), 6);
}

TEST_F(LlmRun, BothGradersMeasureAgreement) {
    Harness h(passing_script());
    h.config.grader = "both";
    auto outcome = h.run(small_datasets({"conditional_facts_easy"}, 6));
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    auto db = store::ResultsDb::open(h.config.results_path).value();
    std::map<std::string, store::AgreementRow> by_stage;
    for (const auto& a : db.agreement(outcome->run_id).value()) by_stage[a.stage] = a;
    // With --grader both the judge is asked even where provenance decides.
    for (const char* stage : {"storage", "summary", "retrieval", "answer"}) {
        ASSERT_TRUE(by_stage.count(stage)) << stage;
        EXPECT_EQ(by_stage[stage].compared, 6) << stage;
    }
    EXPECT_EQ(by_stage["storage"].agreed, 6);
}

TEST_F(LlmRun, AJudgeThatNeverFitsTheSchemaIsAnErrorForThatProbeOnly) {
    json script = passing_script();
    script["rules"].insert(script["rules"].begin(),
                           rule(R"({"name": "broken", "match": {"schema": "memfail_judge_answer", "contains": "Mango"},
                                    "fault": "schema_violation"})"));
    Harness h(script);
    h.config.llm.max_schema_retries = 1;
    h.config.ks = {10};
    const auto datasets = small_datasets({"conditional_facts_easy"}, 8);
    auto outcome = h.run(datasets);
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    const auto rows = rows_of(h.config.results_path, outcome->run_id);
    int errors = 0;
    for (const auto& p : datasets[0].scenario.probes) {
        const bool about_mango = p.question.find("Mango") != std::string::npos;
        const std::string stage = rows.at(p.id + "@10").first;
        if (about_mango) {
            EXPECT_EQ(stage, "error") << p.id;
            ++errors;
        } else {
            EXPECT_NE(stage, "error") << p.id;
        }
    }
    EXPECT_GT(errors, 0);
    auto db = store::ResultsDb::open(h.config.results_path).value();
    std::int64_t judge_errors = 0;
    for (const auto& u : db.llm_usage(outcome->run_id).value())
        if (u.role == "judge") judge_errors = u.errors;
    EXPECT_EQ(judge_errors, errors);
}

TEST_F(LlmRun, TheKeyReachesNoArtefact) {
    // The server demands another key and echoes what it was sent in its 401 message. A run whose
    // every call is refused stops at once, with the reason and without the key.
    Harness h(passing_script(), "sk-the-right-key-which-we-do-not-have");
    auto outcome = h.run(small_datasets({"conditional_facts_easy"}, 3));
    ASSERT_FALSE(outcome.has_value());
    EXPECT_EQ(outcome.error().kind, ErrorKind::auth);
    EXPECT_NE(outcome.error().message.find("401"), std::string::npos) << outcome.error().describe();
    EXPECT_EQ(outcome.error().describe().find(std::string(k_key).substr(0, 12)), std::string::npos);
    for (const std::string& path : {h.config.results_path, h.config.results_path + "-wal",
                                    llm::default_cache_path(h.config.results_path)}) {
        const std::string bytes = file_bytes(path);
        EXPECT_EQ(bytes.find(k_key), std::string::npos) << path;
        EXPECT_EQ(bytes.find(std::string(k_key).substr(0, 12)), std::string::npos) << path;
    }
    // The refused calls are accounted, and the run is marked as failed with the reason.
    auto db = store::ResultsDb::open(h.config.results_path).value();
    auto runs = db.runs().value();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, "error");
    EXPECT_EQ(runs[0].error.find(std::string(k_key).substr(0, 12)), std::string::npos);
    auto s = db.database().prepare("SELECT COUNT(*) FROM llm_calls WHERE error_kind = 'auth'").value();
    ASSERT_TRUE(s.step().value());
    EXPECT_GT(s.column_int(0), 0);
}

TEST_F(LlmRun, IndependentProbesRunConcurrently) {
    json script = passing_script();
    script["default"]["delay_ms"] = 60;
    Harness h(script);
    h.config.llm.concurrency = 6;
    auto outcome = h.run(small_datasets({"conditional_facts_easy"}, 12));
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    const auto peak = h.server->stats()["peak_in_flight"].get<int>();
    EXPECT_GT(peak, 1);
    EXPECT_LE(peak, 6);
}

TEST_F(LlmRun, AKilledRunResumesWithoutLosingDoublingOrPayingTwice) {
    Harness h(passing_script());
    const auto datasets = small_datasets({"conditional_facts_easy", "persona_retrieval"}, 10);
    int recorded = 0;
    auto first = h.run(datasets, [&](const std::string&, int) { return ++recorded < 13; });
    ASSERT_TRUE(first.has_value()) << first.error().describe();
    h.config.resume = true;
    auto resumed = h.run(datasets);
    ASSERT_TRUE(resumed.has_value()) << resumed.error().describe();
    EXPECT_EQ(resumed->run_id, first->run_id);
    EXPECT_EQ(resumed->probes_skipped, 13u);
    EXPECT_EQ(resumed->probes_graded, 7u);
    const std::int64_t requests_after_resume = h.requests();

    // A clean run of the same work makes no new request and agrees row for row.
    h.config.resume = false;
    auto clean = h.run(datasets);
    ASSERT_TRUE(clean.has_value());
    EXPECT_EQ(h.requests(), requests_after_resume);
    EXPECT_EQ(rows_of(h.config.results_path, clean->run_id), rows_of(h.config.results_path, first->run_id));
}

TEST_F(LlmRun, StoredRepliesComeFromTheTestTakerAndKeepProvenance) {
    json script = passing_script();
    script["rules"].push_back(rule(R"({"name": "reply", "match": {"contains": "friendly assistant in an ongoing chat"},
                                       "reply": "Thanks for telling me, I will keep that in mind."})"));
    Harness h(script);
    h.config.store_replies = true;
    h.config.llm.judge_model.clear();  // answers only: the rules grade
    const auto datasets = small_datasets({"long_hop"}, 4);
    auto outcome = h.run(datasets);
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    std::size_t user_turns = 0;
    for (const auto& session : datasets[0].scenario.sessions) user_turns += session.messages.size();
    const auto by_rule = h.server->stats()["by_rule"];
    ASSERT_TRUE(by_rule.contains("reply"));
    EXPECT_EQ(by_rule["reply"].get<std::size_t>(), user_turns);
    // verbatim stored each reply as its own memory, citing the reply's id.
    auto system = memory::make_memory_system(
        "verbatim", memory::SystemContext{memory_dir_for(h.config.results_path, outcome->run_id), datasets[0].scenario.id});
    ASSERT_TRUE(system.has_value());
    std::size_t replies = 0;
    for (const auto& m : (*system)->all_memories().value())
        if (m.text.find("keep that in mind") != std::string::npos) {
            ++replies;
            ASSERT_EQ(m.sources.size(), 1u);
            EXPECT_NE(m.sources[0].find("-reply"), std::string::npos);
        }
    EXPECT_EQ(replies, user_turns);
    // Storing replies without an answer model is refused before anything runs.
    h.config.llm.answer_model.clear();
    EXPECT_FALSE(h.run(datasets).has_value());
}

TEST(LlmRunConfig, JudgeGraderNeedsAJudgeModel) {
    RunConfig config;
    config.grader = "llm";
    auto r = resolve_grader(config);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message.find("--judge-model"), std::string::npos);
    config.grader = "fancy";
    EXPECT_FALSE(resolve_grader(config).has_value());
    config.grader = "auto";
    EXPECT_EQ(resolve_grader(config).value(), "rules");
    config.llm.judge_model = "j";
    EXPECT_EQ(resolve_grader(config).value(), "llm");
}

}  // namespace
}  // namespace memfail::run

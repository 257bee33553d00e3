// SPDX-License-Identifier: MIT
// --protocol paper end to end against the scripted server (tools/fake-llm) over HTTP: every
// dataset's own judge prompt is asked at every stage (storage, summary, retrieval, answer or
// abstention), the judge decides every stage, storage turns are answered with memories shown,
// misleading Persona probes are graded through their essay first, the run records its protocol, and
// `compare` refuses to set a paper run against a memfail one without --force.
#include <memfail/llm/llm_stack.hpp>
#include <memfail/report/compare.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>
#include <memfail/suites/memfail/protocol.hpp>

#include <fake_llm.hpp>
#include <support/temp_dir.hpp>

#include <gtest/gtest.h>

#include <map>

namespace memfail::run {
namespace {

using nlohmann::json;
using testing::TempDir;

// A phrase each per-dataset prompt, and only it, contains: the rule named after it counts its calls.
struct Marked {
    const char* rule;
    const char* schema;
    const char* phrase;
};
const std::vector<Marked> k_paper_prompts = {
    {"storage.easy", "memfail_judge_storage", "qualifying condition is still there"},
    {"storage.hard", "memfail_judge_storage", "permissively, whether the two parts"},
    {"storage.coexisting", "memfail_judge_storage", "one specific preference of a person is in a memory store"},
    {"storage.persona", "memfail_judge_storage", "essays about named people are in a memory store"},
    {"storage.long_hop", "memfail_judge_storage", "one link of a chain of facts is in a memory store"},
    {"summary.easy", "memfail_judge_summary", "kept a conditional fact that it does hold"},
    {"summary.hard", "memfail_judge_summary", "kept a conditional rule that can be recovered"},
    {"summary.coexisting", "memfail_judge_summary", "kept one specific preference that it does hold"},
    {"summary.persona", "memfail_judge_summary", "kept an essay about a named person"},
    {"summary.long_hop", "memfail_judge_summary", "kept one link of a chain of facts"},
    {"retrieval.easy", "memfail_judge_retrieval", "whether a conditional fact was among the memories shown"},
    {"retrieval.hard", "memfail_judge_retrieval", "whether a conditional rule can be recovered from the memories shown"},
    {"retrieval.coexisting", "memfail_judge_retrieval", "whether one specific preference was among the memories shown"},
    {"retrieval.persona", "memfail_judge_retrieval", "whether a person's essay was among the memories shown"},
    {"retrieval.long_hop", "memfail_judge_retrieval", "whether one link of a chain of facts was among the memories shown"},
    {"answer.conditional", "memfail_judge_answer", "used a conditional fact it was shown"},
    {"answer.coexisting", "memfail_judge_answer", "used every preference it was shown"},
    {"answer.persona", "memfail_judge_answer", "specific details of a person's essay"},
    {"abstention.persona", "memfail_judge_abstention", "rightly declined to answer about a person it knows nothing of"},
};

json verdict_for(const std::string& schema) {
    if (schema == "memfail_judge_storage") {
        json results = json::array();
        for (int i = 1; i <= 20; ++i)
            results.push_back(json{{"fact", i}, {"present", true}, {"memories", json::array({"m1"})}, {"reason", "found"}});
        return json{{"results", results}};
    }
    if (schema == "memfail_judge_summary") return json{{"faithful", true}, {"missing", json::array()}, {"reason", "kept"}};
    if (schema == "memfail_judge_retrieval") return json{{"present", true}, {"reason", "shown"}};
    if (schema == "memfail_judge_answer") return json{{"correct", true}, {"reason", "right"}};
    return json{{"abstained", true}, {"reason", "declined"}};
}

json paper_script() {
    json rules = json::array();
    for (const auto& m : k_paper_prompts)
        rules.push_back(json{{"name", m.rule}, {"match", {{"schema", m.schema}, {"contains", m.phrase}}}, {"json", verdict_for(m.schema)}});
    // The test-taker under the paper's prompts: storage turns see memories, answers restate them.
    rules.push_back(json{{"name", "taker.storage_reply"},
                         {"match", {{"contains", "take note of any new personal information"}}},
                         {"reply", "Noted, thank you for telling me."}});
    rules.push_back(json{{"name", "taker.mcq"}, {"match", {{"contains", "selected_choice"}}},
                         {"reply", "{\"selected_choice\": \"B\"}"}});
    rules.push_back(json{{"name", "taker.answer"},
                         {"match", {{"contains", "restate after your answer exactly which memories you used"}}},
                         {"reply", "Yes. I used memory 1."}});
    // Anything else (memfail's own judge prompts, the memfail test-taker) is a failure of the test.
    return json{{"rules", rules}, {"default", {{"fault", "http_400"}}}};
}

// The first `probes` probes of each dataset (every session kept).
std::vector<LoadedDataset> small(std::size_t probes) {
    auto loaded = load_datasets({"all"}, "", 42);
    MF_ASSERT(loaded.has_value(), "the generators must produce valid datasets");
    auto out = std::move(loaded).value();
    for (auto& d : out) {
        auto& ps = d.scenario.probes;
        if (d.scenario.dataset == "persona_retrieval") {
            // Keep some misleading probes: they are the ones graded through their essay.
            std::vector<data::Probe> kept;
            std::size_t direct = 0, misleading = 0;
            for (auto& p : ps) {
                const bool m = p.kind == data::ProbeKind::abstain;
                if ((m ? misleading : direct) < probes) {
                    (m ? misleading : direct)++;
                    kept.push_back(std::move(p));
                }
            }
            ps = std::move(kept);
        } else if (ps.size() > probes) {
            ps.resize(probes);
        }
    }
    return out;
}

struct Server {
    std::unique_ptr<fake_llm::FakeLlmServer> server;
    explicit Server(json script) {
        fake_llm::ServerOptions options;
        options.script = std::move(script);
        server = fake_llm::FakeLlmServer::start(std::move(options)).value();
    }
};

RunConfig paper_config(const TempDir& dir, const std::string& base_url) {
    RunConfig config;
    config.system_spec = "verbatim";
    config.protocol = "paper";
    config.ks = {5};
    config.results_path = dir.file("paper.db");
    config.llm.base_url = base_url;
    config.llm.answer_model = "taker";
    config.llm.judge_model = "judge";
    config.llm.concurrency = 4;
    config.llm.max_retries = 0;
    config.llm.timeout_seconds = 10;
    return config;
}

Result<RunOutcome> run_with(const RunConfig& config, const std::vector<LoadedDataset>& datasets) {
    auto stack = llm::make_llm_stack(config.llm, config.results_path);
    if (!stack) return stack.error();
    return run_datasets(config, datasets, factory_for_spec(config.system_spec), {}, {}, stack->client.get());
}

TEST(PaperProtocol, EveryDatasetsOwnJudgePromptDecidesEveryStage) {
    TempDir dir;
    Server fake(paper_script());
    const RunConfig config = paper_config(dir, fake.server->base_url());
    auto outcome = run_with(config, small(3));
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();

    const json stats = fake.server->stats();
    const json& by_rule = stats["by_rule"];
    for (const auto& m : k_paper_prompts)
        EXPECT_GT(by_rule.value(m.rule, 0), 0) << m.rule << " was never asked";
    EXPECT_GT(by_rule.value("taker.storage_reply", 0), 0);
    EXPECT_GT(by_rule.value("taker.answer", 0), 0);
    // Nothing fell through to the default: no memfail prompt was sent.
    EXPECT_EQ(stats.value("faults", 0) + stats.value("bad_requests", 0), 0);

    auto db = store::ResultsDb::open(config.results_path).value();
    EXPECT_EQ(db.run(outcome->run_id).value()->protocol(), "paper");
    // No probe is in error, every decisive memory-side check is the judge's, and the rules' checks
    // are recorded beside it.
    auto s = db.database().prepare(
        "SELECT (SELECT COUNT(*) FROM probe_results WHERE run_id = ?1 AND stage = 'error'), "
        "       (SELECT COUNT(*) FROM stage_checks WHERE run_id = ?1 AND decisive = 1 "
        "          AND stage IN ('storage', 'summary', 'retrieval') AND grader != 'llm'), "
        "       (SELECT COUNT(*) FROM stage_checks WHERE run_id = ?1 AND decisive = 0 AND grader = 'rules'), "
        "       (SELECT COUNT(*) FROM fact_results WHERE run_id = ?1 AND fact_id LIKE '%-essay'), "
        "       (SELECT COUNT(*) FROM probe_results WHERE run_id = ?1 AND kind = 'abstain' AND stage = 'correct')").value();
    s.bind(1, outcome->run_id);
    ASSERT_TRUE(s.step().value());
    EXPECT_EQ(s.column_int(0), 0);
    EXPECT_EQ(s.column_int(1), 0);
    EXPECT_GT(s.column_int(2), 0);
    EXPECT_EQ(s.column_int(3), 3);  // the three misleading Persona probes, graded through their essay
    EXPECT_EQ(s.column_int(4), 3);  // then abstention, which the script passes
}

TEST(PaperProtocol, MisleadingPersonaProbesCarryTheirEssay) {
    auto datasets = small(3);
    for (const auto& d : datasets) {
        const auto paper = suites::memfail_suite::paper_protocol_scenario(d.scenario);
        ASSERT_EQ(paper.probes.size(), d.scenario.probes.size());
        const data::MessageIndex messages(paper);
        for (std::size_t i = 0; i < paper.probes.size(); ++i) {
            const auto& before = d.scenario.probes[i];
            const auto& after = paper.probes[i];
            if (d.scenario.dataset != "persona_retrieval" || before.kind != data::ProbeKind::abstain) {
                EXPECT_EQ(after.evidence.size(), before.evidence.size()) << after.id;
                continue;
            }
            ASSERT_EQ(after.evidence.size(), 1u) << after.id;
            const auto& essay = after.evidence.front();
            const auto* message = messages.message(essay.message_ids.at(0));
            ASSERT_NE(message, nullptr);
            EXPECT_EQ(essay.text, message->content);
            // The essay is the one about the person the question was made from, not the one it names.
            const std::string entity = after.meta["entity"].get<std::string>();
            EXPECT_NE(message->content.find(entity.substr(0, entity.find(' '))), std::string::npos) << after.id;
            EXPECT_TRUE(after.meta["paper_essay"].get<bool>());
        }
    }
}

TEST(PaperProtocol, CompareRefusesToMixProtocolsUnlessForced) {
    TempDir dir;
    Server fake(paper_script());
    RunConfig paper = paper_config(dir, fake.server->base_url());
    auto datasets = small(2);
    datasets.resize(1);  // conditional_facts_easy
    auto a = run_with(paper, datasets);
    ASSERT_TRUE(a.has_value()) << a.error().describe();
    RunConfig own;
    own.system_spec = "verbatim";
    own.ks = {5};
    own.results_path = paper.results_path;
    auto b = run_datasets(own, datasets, factory_for_spec(own.system_spec));
    ASSERT_TRUE(b.has_value()) << b.error().describe();

    auto db = store::ResultsDb::open(paper.results_path).value();
    auto refused = report::compare_runs(db, {a->run_id}, db, {b->run_id});
    ASSERT_FALSE(refused.has_value());
    EXPECT_NE(refused.error().message.find("--force"), std::string::npos);
    report::CompareOptions force;
    force.force = true;
    auto forced = report::compare_runs(db, {a->run_id}, db, {b->run_id}, force);
    ASSERT_TRUE(forced.has_value()) << forced.error().describe();
    bool warned = false;
    for (const auto& w : forced->warnings) warned |= w.find("protocol") != std::string::npos;
    EXPECT_TRUE(warned);
    // A bad protocol name is refused before anything is written.
    RunConfig bad = own;
    bad.protocol = "papr";
    bad.results_path = dir.file("bad.db");
    auto rejected = run_datasets(bad, datasets, factory_for_spec(bad.system_spec));
    ASSERT_FALSE(rejected.has_value());
    EXPECT_NE(rejected.error().message.find("unknown protocol"), std::string::npos);
}

}  // namespace
}  // namespace memfail::run

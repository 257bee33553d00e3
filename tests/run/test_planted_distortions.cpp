// SPDX-License-Identifier: MIT
// Issue 13's planted faults: a memory that distorts each rule the way summarising systems do must
// never pass as faithful, and must get the same diagnosis whether or not it reports provenance.
#include <memfail/llm/llm_stack.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/database.hpp>
#include <memfail/store/results_db.hpp>

#include <fake_llm.hpp>
#include <support/planted_systems.hpp>
#include <support/temp_dir.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <map>

namespace memfail::run {
namespace {

using testing::Distortion;
using testing::TempDir;

const std::vector<LoadedDataset>& conditional_datasets() {
    static const std::vector<LoadedDataset> datasets = [] {
        auto loaded = load_datasets({"conditional_facts_easy", "conditional_facts_hard"}, "", 42);
        MF_ASSERT(loaded.has_value(), "the generators must produce valid datasets");
        return std::move(loaded).value();
    }();
    return datasets;
}

// dataset -> stage -> probes, at one k.
using Counts = std::map<std::string, std::map<std::string, long>>;

Counts count_stages(const std::string& results, std::int64_t run_id) {
    auto db = store::Database::open(results).value();
    auto s = db.prepare("SELECT dataset, stage, COUNT(*) FROM probe_results WHERE run_id = ? GROUP BY dataset, stage").value();
    s.bind(1, run_id);
    Counts out;
    EXPECT_TRUE(s.for_each_row([&] { out[s.column_text(0)][s.column_text(1)] = s.column_int(2); }).has_value());
    return out;
}

Counts run_planted(const std::string& results, const SystemFactory& factory) {
    RunConfig config;
    config.system_spec = "planted";
    config.ks = {10};
    config.results_path = results;
    auto outcome = run_datasets(config, conditional_datasets(), factory);
    EXPECT_TRUE(outcome.has_value()) << outcome.error().describe();
    return outcome ? count_stages(results, outcome->run_id) : Counts{};
}

Counts run_distortion(const TempDir& dir, Distortion distortion, bool provenance) {
    const std::string name = std::string(testing::distortion_name(distortion)) + (provenance ? "-p.db" : "-n.db");
    return run_planted(dir.file(name), [=](const memory::SystemContext& c) -> Result<std::unique_ptr<memory::MemorySystem>> {
        return testing::make_distorting(c, distortion, provenance);
    });
}

long at(const Counts& counts, const std::string& dataset, const std::string& stage) {
    auto d = counts.find(dataset);
    if (d == counts.end()) return 0;
    auto s = d->second.find(stage);
    return s == d->second.end() ? 0 : s->second;
}

void print(const char* label, const Counts& counts) {
    for (const auto& [dataset, stages] : counts) {
        std::string line;
        for (const auto& [stage, n] : stages) line += " " + stage + "=" + std::to_string(n);
        std::printf("[planted] %-18s %-24s%s\n", label, dataset.c_str(), line.c_str());
    }
}

constexpr const char* k_easy = "conditional_facts_easy";
constexpr const char* k_hard = "conditional_facts_hard";
const std::vector<std::string> k_stages = {"not_stored", "summary_error", "unverified", "not_retrieved", "retrieved"};

// Every distortion, with and without provenance: never success where the rule was changed, and
// the same stage counts both ways (within two probes, for a memory that happens to repeat another
// message's words).
TEST(PlantedDistortions, SameDiagnosisWithAndWithoutProvenanceAndNeverSuccess) {
    TempDir dir;
    for (Distortion d : testing::k_all_distortions) {
        const Counts with = run_distortion(dir, d, true);
        const Counts without = run_distortion(dir, d, false);
        print((std::string(testing::distortion_name(d)) + "+prov").c_str(), with);
        print((std::string(testing::distortion_name(d)) + "-prov").c_str(), without);
        for (const char* ds : {k_easy, k_hard})
            for (const auto& stage : k_stages)
                EXPECT_NEAR(at(with, ds, stage), at(without, ds, stage), 2)
                    << testing::distortion_name(d) << " " << ds << " " << stage;
    }
}

TEST(PlantedDistortions, EachDistortionIsCaughtAtItsStage) {
    TempDir dir;
    // Dropping "only"/"except": the rule's exclusivity is a qualifier detail of every Easy rule.
    // Hard rules state no exclusivity word, so only Easy is changed.
    auto c = run_distortion(dir, Distortion::drop_exclusivity, true);
    EXPECT_LE(at(c, k_easy, "retrieved"), 5);
    EXPECT_GE(at(c, k_easy, "summary_error"), 95);
    EXPECT_EQ(at(c, k_hard, "retrieved"), 100);

    c = run_distortion(dir, Distortion::drop_condition, false);
    EXPECT_EQ(at(c, k_easy, "summary_error"), 100);
    EXPECT_EQ(at(c, k_hard, "summary_error"), 100);

    // A rule turned into a tendency loses its exclusivity or polarity word.
    c = run_distortion(dir, Distortion::hedge, false);
    EXPECT_EQ(at(c, k_easy, "summary_error"), 100);

    // Negation keeps every listed phrase: only a judge can tell, so offline it is unverified, and
    // never success, also where the negation only prefixes the rule's sentence ("Not only when ...
    // does Mira ...": the rule verbatim, but not as a whole sentence).
    c = run_distortion(dir, Distortion::negate, true);
    EXPECT_EQ(at(c, k_easy, "retrieved"), 0);
    EXPECT_EQ(at(c, k_easy, "unverified"), 100);

    // The person's name gone: the rule is detached from whom it is about.
    c = run_distortion(dir, Distortion::detach_entity, false);
    EXPECT_LE(at(c, k_easy, "retrieved"), 5);
    EXPECT_LE(at(c, k_hard, "retrieved"), 5);
    EXPECT_GE(at(c, k_hard, "summary_error"), 95);

    // Two persons' rules swapped: each rule is stored under the wrong person.
    c = run_distortion(dir, Distortion::swap_entities, true);
    EXPECT_EQ(at(c, k_easy, "retrieved"), 0);
    EXPECT_EQ(at(c, k_hard, "retrieved"), 0);
    EXPECT_GE(at(c, k_easy, "summary_error"), 95);

    // Twelve words keep at most the introduction: never success. Where the behaviour survives and
    // the condition does not, the rules know it is a summary error; where nothing of the rule
    // survives, a paraphrase cannot be ruled out offline: unverified (storage), for the judge.
    c = run_distortion(dir, Distortion::truncate, true);
    EXPECT_EQ(at(c, k_easy, "retrieved"), 0);
    EXPECT_EQ(at(c, k_hard, "retrieved"), 0);
    EXPECT_EQ(at(c, k_easy, "unverified") + at(c, k_easy, "summary_error"), 100);
    EXPECT_GE(at(c, k_hard, "summary_error"), 20);
}

// The control: an undistorted verbatim store passes every probe at k=10 on both variants.
TEST(PlantedDistortions, VerbatimControlPassesEverything) {
    TempDir dir;
    const Counts c = run_planted(dir.file("control.db"), [](const memory::SystemContext& ctx) {
        return memory::make_memory_system("verbatim:retriever=bm25", ctx);
    });
    print("verbatim", c);
    EXPECT_EQ(at(c, k_easy, "retrieved"), 100);
    EXPECT_EQ(at(c, k_hard, "retrieved"), 100);
}

// With a judge, the unsure verdicts (and only those) reach it, and its word decides them.
struct JudgedRun {
    Counts counts;
    nlohmann::json by_schema;
};

JudgedRun run_judged(const TempDir& dir, const std::string& name, Distortion distortion, bool provenance) {
    fake_llm::ServerOptions options;
    options.script = nlohmann::json::parse(R"({
      "rules": [
        {"name": "summary", "match": {"schema": "memfail_judge_summary"},
         "json": {"faithful": false, "missing": ["the rule's meaning"], "reason": "the rule is negated"}},
        {"name": "retrieval", "match": {"schema": "memfail_judge_retrieval"}, "json": {"present": true, "reason": "shown"}}
      ],
      "default": {"reply": "unexpected"}
    })");
    auto server = fake_llm::FakeLlmServer::start(std::move(options)).value();
    RunConfig config;
    config.system_spec = "planted";
    config.ks = {10};
    config.results_path = dir.file(name);
    config.llm.base_url = server->base_url();
    config.llm.judge_model = "judge";
    config.llm.concurrency = 2;
    config.llm.max_retries = 0;
    auto datasets = conditional_datasets();
    for (auto& d : datasets) d.scenario.probes.resize(10);
    auto stack = llm::make_llm_stack(config.llm, config.results_path).value();
    auto outcome = run_datasets(config, datasets, [=](const memory::SystemContext& c) -> Result<std::unique_ptr<memory::MemorySystem>> {
        return testing::make_distorting(c, distortion, provenance);
    }, {}, {}, stack.client.get());
    EXPECT_TRUE(outcome.has_value()) << outcome.error().describe();
    JudgedRun out;
    if (outcome) out.counts = count_stages(config.results_path, outcome->run_id);
    out.by_schema = server->stats()["by_schema"];
    return out;
}

long schema_calls(const nlohmann::json& by_schema, const char* schema) {
    return by_schema.contains(schema) ? by_schema[schema].get<long>() : 0;
}

TEST(PlantedDistortions, UnsureVerdictsReachTheJudgeAndOnlyThose) {
    TempDir dir;
    for (bool provenance : {true, false}) {
        // Negation keeps every phrase: each Easy fact is unsure and the judge decides it.
        auto negated = run_judged(dir, provenance ? "neg-p.db" : "neg-n.db", Distortion::negate, provenance);
        EXPECT_EQ(at(negated.counts, k_easy, "summary_error"), 10);
        EXPECT_EQ(at(negated.counts, k_easy, "unverified"), 0);
        EXPECT_GE(schema_calls(negated.by_schema, "memfail_judge_summary"), 10);
        EXPECT_EQ(schema_calls(negated.by_schema, "memfail_judge_storage"), 0);
        // A dropped exclusivity word is decided by the rules: the judge is never asked about it.
        auto dropped = run_judged(dir, provenance ? "drop-p.db" : "drop-n.db", Distortion::drop_exclusivity, provenance);
        EXPECT_EQ(at(dropped.counts, k_easy, "summary_error"), 10);
        EXPECT_EQ(schema_calls(dropped.by_schema, "memfail_judge_summary"), 0);
    }
}

}  // namespace
}  // namespace memfail::run

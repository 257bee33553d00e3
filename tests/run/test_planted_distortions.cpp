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
// Under a sanitizer (ten times slower, there to find memory errors) every other distortion is run
// both ways; the release build runs them all.
#if defined(MEMFAIL_SANITIZED)
constexpr std::size_t k_distortion_stride = 2;
#else
constexpr std::size_t k_distortion_stride = 1;
#endif

TEST(PlantedDistortions, SameDiagnosisWithAndWithoutProvenanceAndNeverSuccess) {
    TempDir dir;
    std::size_t n = 0;
    for (Distortion d : testing::k_all_distortions) {
        if (n++ % k_distortion_stride != 0) continue;
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
    // Dropping "only"/"except": the rule's exclusivity is a qualifier detail of every Easy rule,
    // in an otherwise verbatim sentence (a decided summary error) unless the sentence had two such
    // words changed elsewhere (left to the judge). Hard rules state no exclusivity word.
    auto c = run_distortion(dir, Distortion::drop_exclusivity, true);
    EXPECT_EQ(at(c, k_easy, "retrieved"), 0);
    EXPECT_GE(at(c, k_easy, "summary_error"), 80);
    EXPECT_EQ(at(c, k_easy, "summary_error") + at(c, k_easy, "unverified"), 100);
    // Hard is untouched: every rule kept; a rule BM25 leaves out of the top 10 is a retrieval miss.
    EXPECT_EQ(at(c, k_hard, "retrieved") + at(c, k_hard, "not_retrieved"), 100);
    EXPECT_LE(at(c, k_hard, "not_retrieved"), 3);

    c = run_distortion(dir, Distortion::drop_condition, false);
    EXPECT_EQ(at(c, k_easy, "summary_error"), 100);
    EXPECT_EQ(at(c, k_hard, "retrieved"), 0);

    // A rule turned into a tendency, or negated: an otherwise verbatim sentence with its qualifier
    // changed is a decided loss; never a success.
    for (Distortion d : {Distortion::hedge, Distortion::negate}) {
        c = run_distortion(dir, d, false);
        EXPECT_EQ(at(c, k_easy, "retrieved"), 0) << testing::distortion_name(d);
        EXPECT_GE(at(c, k_easy, "summary_error"), 80) << testing::distortion_name(d);
    }

    // The person's name gone or swapped: never success; where the rule's sentence named the
    // person, a decided summary error.
    for (Distortion d : {Distortion::detach_entity, Distortion::swap_entities}) {
        c = run_distortion(dir, d, true);
        EXPECT_EQ(at(c, k_easy, "retrieved"), 0) << testing::distortion_name(d);
        EXPECT_EQ(at(c, k_hard, "retrieved"), 0) << testing::distortion_name(d);
        EXPECT_GE(at(c, k_easy, "summary_error"), 25) << testing::distortion_name(d);
    }

    // Twelve words keep at most the introduction: never success; where no word of the rule's
    // behaviour survives anywhere, not stored.
    c = run_distortion(dir, Distortion::truncate, true);
    EXPECT_EQ(at(c, k_easy, "retrieved"), 0);
    EXPECT_EQ(at(c, k_hard, "retrieved"), 0);
    EXPECT_GE(at(c, k_hard, "not_stored"), 50);
}

// The control: an undistorted verbatim store never has a summary error or an unsure verdict on
// either variant; at k=10 a rule is retrieved but for the odd one BM25 ranks lower (a retrieval
// miss, which is not what this file tests).
TEST(PlantedDistortions, VerbatimControlPassesEverything) {
    TempDir dir;
    const Counts c = run_planted(dir.file("control.db"), [](const memory::SystemContext& ctx) {
        return memory::make_memory_system("verbatim:retriever=bm25", ctx);
    });
    print("verbatim", c);
    for (const char* ds : {k_easy, k_hard}) {
        EXPECT_EQ(at(c, ds, "retrieved") + at(c, ds, "not_retrieved"), 100) << ds;
        EXPECT_LE(at(c, ds, "not_retrieved"), 3) << ds;
    }
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
        // Moving the person's name out of the rule: the rules decide some facts and leave the rest
        // to the judge, who decides them (here: not faithful); none stays unverified.
        auto detached = run_judged(dir, provenance ? "det-p.db" : "det-n.db", Distortion::detach_entity, provenance);
        EXPECT_EQ(at(detached.counts, k_hard, "summary_error"), 10);
        EXPECT_EQ(at(detached.counts, k_hard, "unverified"), 0);
        EXPECT_GE(schema_calls(detached.by_schema, "memfail_judge_summary"), 10);
        EXPECT_EQ(schema_calls(detached.by_schema, "memfail_judge_storage"), 0);
        // A dropped condition in Easy's one-sentence rules is decided by the rules: the judge is
        // never asked about it.
        auto dropped = run_judged(dir, provenance ? "drop-p.db" : "drop-n.db", Distortion::drop_condition, provenance);
        EXPECT_EQ(at(dropped.counts, k_easy, "summary_error"), 10);
        EXPECT_LE(schema_calls(dropped.by_schema, "memfail_judge_summary"), 10);
    }
}

}  // namespace
}  // namespace memfail::run

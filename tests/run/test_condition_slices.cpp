// SPDX-License-Identifier: MIT
// The fingerprint of a dropped condition in the report's slices: a real run of the planted
// "drops conditions" system on Conditional-Facts Easy, answered by a scripted test-taker over real
// HTTP (tools/fake-llm) that reads memories literally: it says "No." to a probe whose condition is
// not met only when the condition phrase is in the memories it was shown, and "Yes." otherwise, as a
// reader of an unconditional rule would. The memory side catches the drop on every probe alike
// (summary_error in both condition slices); the answers fail exactly on "condition not met". A
// faithful store (verbatim) answered by the same reader gets most "not met" probes right.
#include <memfail/llm/llm_stack.hpp>
#include <memfail/report/slices.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>

#include <fake_llm.hpp>
#include <support/planted_systems.hpp>
#include <support/temp_dir.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

namespace memfail::run {
namespace {

using nlohmann::json;
using testing::TempDir;

constexpr const char* k_key = "sk-memfail-test-slices-5e1d";

const LoadedDataset& easy() {
    static const LoadedDataset dataset = [] {
        auto loaded = load_datasets({"conditional_facts_easy"}, "", 42);
        MF_ASSERT(loaded.has_value() && loaded->size() == 1, "the generator must produce the dataset");
        return std::move(loaded->front());
    }();
    return dataset;
}

// The literal reader: for each probe whose condition is not met, "No." when the memories shown hold
// the condition's canonical phrase; every other answer "Yes.".
json literal_reader_script() {
    json rules = json::array();
    for (const auto& p : easy().scenario.probes) {
        if (p.meta.value("condition_met", "") != "no") continue;
        std::string condition;
        for (const auto& f : p.evidence)
            for (const auto& d : f.key_details)
                if (d.name == "condition" && !d.variants.empty()) condition = d.variants.front();
        if (condition.empty()) continue;
        rules.push_back({{"name", "sees the condition of " + p.id},
                         {"match", {{"last_user_contains", p.question}, {"contains", condition}}},
                         {"reply", "No."}});
    }
    return {{"rules", rules}, {"default", {{"reply", "Yes."}}}};
}

struct Outcome {
    report::Slice met;
    report::Slice not_met;
};

Outcome run_and_slice(const TempDir& dir, const std::string& name, const SystemFactory& factory,
                      const std::string& base_url) {
    RunConfig config;
    config.system_spec = name;
    config.ks = {5};
    config.results_path = dir.file(name + ".db");
    config.llm.base_url = base_url;
    config.llm.api_key_env = "MEMFAIL_TEST_KEY";
    config.llm.answer_model = "literal-reader";
    config.llm.concurrency = 4;
    config.llm.max_retries = 1;
    config.llm.timeout_seconds = 10;
    auto stack = llm::make_llm_stack(config.llm, config.results_path);
    EXPECT_TRUE(stack.has_value()) << stack.error().describe();
    auto outcome = run_datasets(config, {easy()}, factory, {}, {}, stack->client.get());
    EXPECT_TRUE(outcome.has_value()) << outcome.error().describe();
    auto db = store::ResultsDb::open(config.results_path).value();
    Outcome out;
    for (const auto& s : report::slices(db, {outcome->run_id}).value()) {
        if (s.dimension != "condition") continue;
        if (s.label == "met") out.met = s;
        else if (s.label == "not met") out.not_met = s;
        else ADD_FAILURE() << "unexpected condition label " << s.label;
    }
    return out;
}

class ConditionSlices : public ::testing::Test {
protected:
    void SetUp() override { ::setenv("MEMFAIL_TEST_KEY", k_key, 1); }
    void TearDown() override { ::unsetenv("MEMFAIL_TEST_KEY"); }
};

TEST_F(ConditionSlices, ADroppedConditionFailsTheProbesWhoseConditionIsNotMet) {
    std::int64_t met_probes = 0, not_met_probes = 0;
    for (const auto& p : easy().scenario.probes) {
        met_probes += p.meta.at("condition_met") == "yes";
        not_met_probes += p.meta.at("condition_met") == "no";
    }
    ASSERT_GT(met_probes, 20);
    ASSERT_GT(not_met_probes, 20);

    fake_llm::ServerOptions options;
    options.script = literal_reader_script();
    options.required_key = k_key;
    auto server = fake_llm::FakeLlmServer::start(std::move(options));
    ASSERT_TRUE(server.has_value()) << server.error().describe();
    TempDir dir;

    const Outcome dropped = run_and_slice(
        dir, "drops_conditions",
        [](const memory::SystemContext& c) -> Result<std::unique_ptr<memory::MemorySystem>> {
            return testing::make_drops_conditions(c);
        },
        (*server)->base_url());
    // Memory side: the drop is a summary error on every probe, whichever slice it is in.
    EXPECT_EQ(dropped.met.counts.graded, met_probes);
    EXPECT_EQ(dropped.not_met.counts.graded, not_met_probes);
    EXPECT_EQ(dropped.met.counts.summary_error, met_probes);
    EXPECT_EQ(dropped.not_met.counts.summary_error, not_met_probes);
    EXPECT_EQ(dropped.met.counts.success + dropped.not_met.counts.success, 0);
    // Answers: every one read; the wrong ones are exactly the probes whose condition is not met.
    EXPECT_EQ(dropped.met.answers_read, met_probes);
    EXPECT_EQ(dropped.not_met.answers_read, not_met_probes);
    EXPECT_EQ(dropped.met.answers_right, met_probes);
    EXPECT_EQ(dropped.not_met.answers_right, 0);

    // The same reader over a faithful store sees the conditions and gets most "not met" probes right,
    // so the concentration above is the dropped condition's doing.
    const Outcome faithful = run_and_slice(dir, "verbatim", factory_for_spec("verbatim"), (*server)->base_url());
    EXPECT_EQ(faithful.met.answers_right, met_probes);
    EXPECT_GT(faithful.not_met.answers_right * 2, not_met_probes);
    EXPECT_EQ(faithful.met.counts.summary_error + faithful.not_met.counts.summary_error, 0);
}

}  // namespace
}  // namespace memfail::run

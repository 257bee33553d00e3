// SPDX-License-Identifier: MIT
// Dates in every answer request: run through the scripted OpenAI-compatible server (tools/fake-llm)
// over LoCoMo and LongMemEval fixtures in their published schemas and a generated MemFail dataset,
// under memfail's protocol and the paper's, and read the requests the server logged: every memory
// shown to the test-taker carries a date and every question the date it is asked on (LongMemEval:
// its question_date; LoCoMo: the last session's date).
#include <memfail/data/jsonl.hpp>
#include <memfail/llm/llm_stack.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/run/test_taker.hpp>
#include <memfail/suites/suite.hpp>

#include <fake_llm.hpp>
#include <support/small_datasets.hpp>
#include <support/temp_dir.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace memfail::run {
namespace {

using nlohmann::json;
using testing::TempDir;

const std::string k_fixtures = MEMFAIL_TEST_FIXTURES;

std::vector<LoadedDataset> imported(const std::string& format, const std::string& path, std::size_t scenarios) {
    const suites::Suite* suite = suites::find_suite("benchmarks");
    EXPECT_NE(suite, nullptr);
    auto result = suite->import(format, path);
    EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().describe());
    std::vector<LoadedDataset> out;
    for (auto& s : result->scenarios) {
        if (out.size() == scenarios) break;
        LoadedDataset d;
        d.hash = data::scenario_hash(s);
        d.origin = path;
        d.scenario = std::move(s);
        out.push_back(std::move(d));
    }
    return out;
}

struct Requests {
    std::size_t answers = 0, memories = 0, undated = 0, without_question_date = 0;
    std::vector<std::string> question_dates;
};

// The answer requests in the server's log: each numbered memory line with or without its "[date]",
// and the "Today's date" line.
Requests answer_requests(const std::string& log_path) {
    Requests r;
    std::ifstream in(log_path);
    std::string line;
    const std::regex item(R"(^(\d+)\. (.*)$)");
    while (std::getline(in, line)) {
        const json entry = json::parse(line, nullptr, false);
        if (!entry.is_object() || !entry.contains("messages") || !entry["messages"].is_array() || entry["messages"].empty())
            continue;
        const json& first = entry["messages"].front();
        if (!first.is_object() || !first.value("content", json()).is_string()) continue;
        const std::string system = first["content"].get<std::string>();
        std::string marker = "Notes from memory:\n";
        auto at = system.find(marker);
        if (at == std::string::npos) {
            marker = "Relevant memories:\n";
            at = system.find(marker);
        }
        if (at == std::string::npos) continue;
        ++r.answers;
        std::string block = system.substr(at + marker.size());
        std::istringstream lines(block);
        std::string l;
        std::smatch m;
        while (std::getline(lines, l)) {
            if (!std::regex_match(l, m, item)) continue;
            ++r.memories;
            if (m[2].str().rfind("[", 0) != 0) ++r.undated;
        }
        const auto today = system.find("Today's date: ");
        if (today == std::string::npos) ++r.without_question_date;
        else r.question_dates.push_back(system.substr(today + 14, system.find('\n', today) - today - 14));
    }
    return r;
}

class AnswerDates : public ::testing::Test {
protected:
    void SetUp() override { ::setenv("MEMFAIL_TEST_KEY", "sk-test-dates", 1); }
    void TearDown() override { ::unsetenv("MEMFAIL_TEST_KEY"); }

    Requests run(const std::vector<LoadedDataset>& datasets, const std::string& protocol = "memfail") {
        fake_llm::ServerOptions options;
        options.script = json::parse(R"({"rules": [], "default": {"reply": "Not mentioned in the conversation."}})");
        const std::string log_path = dir.file("requests-" + std::to_string(++runs) + ".jsonl");
        options.log_path = log_path;
        auto server = fake_llm::FakeLlmServer::start(std::move(options));
        EXPECT_TRUE(server.has_value());
        RunConfig config;
        config.system_spec = "verbatim";
        config.ks = {3};
        config.protocol = protocol;
        config.results_path = dir.file("results-" + std::to_string(runs) + ".db");
        config.llm.base_url = (*server)->base_url();
        config.llm.api_key_env = "MEMFAIL_TEST_KEY";
        config.llm.answer_model = "taker";
        config.llm.concurrency = 2;
        config.llm.timeout_seconds = 10;
        auto stack = llm::make_llm_stack(config.llm, config.results_path);
        EXPECT_TRUE(stack.has_value());
        auto outcome = run_datasets(config, datasets, factory_for_spec(config.system_spec), {}, {}, stack->client.get());
        EXPECT_TRUE(outcome.has_value()) << (outcome ? "" : outcome.error().describe());
        (*server)->stop();
        return answer_requests(log_path);
    }

    TempDir dir;
    int runs = 0;
};

TEST_F(AnswerDates, LocomoEveryMemoryAndQuestionDated) {
    const auto datasets = imported("locomo", k_fixtures + "/locomo/locomo10-fixture.json", 1);
    ASSERT_FALSE(datasets.empty());
    const Requests r = run(datasets);
    EXPECT_GT(r.answers, 0u);
    EXPECT_GT(r.memories, 0u);
    EXPECT_EQ(r.undated, 0u);
    EXPECT_EQ(r.without_question_date, 0u);
    // LoCoMo asks after the last session: its date.
    const auto& s = datasets.front().scenario;
    const std::string last = shown_date(s.sessions.back().timestamp);
    ASSERT_FALSE(last.empty());
    for (const auto& d : r.question_dates) EXPECT_EQ(d, last + ".");
}

TEST_F(AnswerDates, LongMemEvalQuestionDateIsTheDatasets) {
    const auto datasets = imported("longmemeval", k_fixtures + "/longmemeval/longmemeval-fixture.json", 3);
    ASSERT_FALSE(datasets.empty());
    std::vector<std::string> expected;
    for (const auto& d : datasets)
        for (const auto& p : d.scenario.probes)
            if (p.meta.contains("question_date")) expected.push_back(shown_date(p.meta["question_date"].get<std::string>()) + ".");
    ASSERT_FALSE(expected.empty());
    const Requests r = run(datasets);
    EXPECT_GT(r.answers, 0u);
    EXPECT_EQ(r.undated, 0u);
    EXPECT_EQ(r.without_question_date, 0u);
    for (const auto& d : r.question_dates)
        EXPECT_NE(std::find(expected.begin(), expected.end(), d), expected.end()) << d;
}

TEST_F(AnswerDates, MemFailDatasetsUnderBothProtocols) {
    for (const std::string protocol : {"memfail", "paper"}) {
        const Requests r = run(testing::small_datasets({"persona_retrieval", "conditional_facts_easy", "long_hop"}, 4), protocol);
        EXPECT_GT(r.answers, 0u) << protocol;
        EXPECT_GT(r.memories, 0u) << protocol;
        EXPECT_EQ(r.undated, 0u) << protocol;
        EXPECT_EQ(r.without_question_date, 0u) << protocol;
    }
}

TEST(ShownDate, IsoFormsAndOthers) {
    EXPECT_EQ(shown_date("2023-05-08T13:56:00Z"), "2023-05-08 (Mon) 13:56");
    EXPECT_EQ(shown_date("2023-05-08"), "2023-05-08 (Mon)");
    EXPECT_EQ(shown_date("2025-03-01T12:00:00.123456+02:00"), "2025-03-01 (Sat) 12:00");
    EXPECT_EQ(shown_date("1:56 pm on 8 May, 2023"), "1:56 pm on 8 May, 2023");
    EXPECT_EQ(shown_date("   "), "");
}

TEST(MemoryDate, SourcesFirstThenTheSystemsOwn) {
    data::Scenario s;
    s.sessions = {{"s1", "2023-05-08T13:56:00Z", {{"m1", "user", "a"}}}, {"s2", "2023-06-01T09:00:00Z", {{"m2", "user", "b"}}}};
    const data::MessageIndex index(s);
    memory::Memory m;
    m.sources = {"m1", "m2"};
    m.created_at = "2026-11-29T10:00:00Z";
    EXPECT_EQ(memory_date(m, &index), "2023-06-01 (Thu) 09:00");  // the latest session it cites
    m.sources = {"unknown-id"};
    m.valid_at = "2023-01-02";
    EXPECT_EQ(memory_date(m, &index), "2023-01-02 (Mon)");
    m.valid_at.clear();
    EXPECT_EQ(memory_date(m, &index), "2026-11-29 (Sun) 10:00");
    EXPECT_EQ(memory_date(memory::Memory{}, nullptr), "");
}

}  // namespace
}  // namespace memfail::run

// SPDX-License-Identifier: MIT
// Write-integrity answers through a run, from a system that answers for itself. run --set: grading
// settings change verdicts as they say, are recorded in the run and keep a run with other settings
// from being resumed, and a setting the run does not know, or a bad value, is refused before
// anything is written. Pre-delivery certification: the system's confidence read as WRIT reads it.
#include <memfail/data/jsonl.hpp>
#include <memfail/memory/memory_system.hpp>
#include <memfail/suites/writ/report.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>

#include <support/temp_dir.hpp>

#include <gtest/gtest.h>

#include <filesystem>

namespace memfail::run {
namespace {

using testing::TempDir;

// A system that keeps every message and answers every question with the same text.
class FixedAnswer final : public memory::MemorySystem {
public:
    explicit FixedAnswer(std::string answer, std::optional<double> confidence = std::nullopt)
        : m_answer(std::move(answer)), m_confidence(confidence) {}
    std::string spec() const override { return "fixed-answer"; }
    memory::Capabilities capabilities() const override {
        memory::Capabilities c;
        c.answers = true;
        return c;
    }
    Result<void> store_conversation(const data::Session& session) override {
        for (const auto& m : session.messages) m_held.push_back({m.id, m.content, "", "", {m.id}});
        return {};
    }
    Result<std::vector<memory::Hit>> retrieve_memories(std::string_view, const std::vector<data::Message>&,
                                                       int k) override {
        std::vector<memory::Hit> out;
        for (std::size_t i = 0; i < m_held.size() && static_cast<int>(i) < k; ++i) out.push_back({m_held[i], 1.0});
        return out;
    }
    Result<std::vector<memory::Memory>> all_memories() override { return m_held; }
    Result<void> reset() override {
        m_held.clear();
        return {};
    }
    Result<memory::SystemAnswer> answer(std::string_view, const std::vector<data::Message>&) override {
        return memory::SystemAnswer{m_answer, m_confidence, {}};
    }

private:
    std::string m_answer;
    std::optional<double> m_confidence;
    std::vector<memory::Memory> m_held;
};

// update-003's shape: an address of five required elements.
LoadedDataset address_dataset() {
    data::Scenario s;
    s.id = "addr";
    s.suite = "writ";
    s.dataset = "writ_update";
    s.sessions = {{"1", "2026-01-10T09:00:00Z", {{"1:0", "user", "I live at 88 Oak Avenue, Apt 3B, Portland, OR 97201.", {}}}},
                  {"2", "2026-02-10T09:00:00Z", {{"2:0", "user", "What is my address?", {}}}}};
    data::Probe p;
    p.id = "addr:probe";
    p.after_session = "1";
    p.question = "What is my address?";
    p.expected = "88 Oak Avenue, Apt 3B, Portland, OR 97201";
    p.answer = p.expected.get<std::string>();
    data::Rubric r;
    r.kind = data::RubricKind::structured;
    r.method = "structured";
    r.required = {"88 Oak Avenue", "Apt 3B", "Portland", "OR", "97201"};
    r.pass_fraction = 0.8;
    p.rubric = r;
    p.evidence.push_back({"addr:probe:e", s.sessions[0].messages[0].content, {"1:0"}, {}, {}, false});
    s.probes.push_back(p);
    LoadedDataset d;
    d.scenario = s;
    d.origin = "test";
    d.hash = data::scenario_hash(s);
    return d;
}

SystemFactory fixed(const std::string& answer, std::optional<double> confidence = std::nullopt) {
    return [answer, confidence](const memory::SystemContext&) -> Result<std::unique_ptr<memory::MemorySystem>> {
        return std::unique_ptr<memory::MemorySystem>(std::make_unique<FixedAnswer>(answer, confidence));
    };
}

std::optional<bool> answer_correct(const std::string& results, std::int64_t run_id) {
    auto db = store::ResultsDb::open(results).value();
    const auto rows = db.probe_rows(run_id).value();
    EXPECT_EQ(rows.size(), 1u);
    return rows.empty() ? std::nullopt : rows.front().answer_correct;
}

TEST(RunSettings, StructuredThresholdDecidesAFourOfFiveAnswerAndIsRecorded) {
    TempDir dir;
    const std::vector<LoadedDataset> data = {address_dataset()};
    // Four of five elements ("Oregon" for "OR"): WRIT's 80% passes it, the strict setting does not.
    const std::string four = "88 Oak Avenue, Apt 3B, Portland, Oregon 97201";
    RunConfig config;
    config.system_spec = "fixed-answer";
    config.ks = {1};
    config.quiet = true;
    config.results_path = dir.file("r.db");
    auto lenient = run_datasets(config, data, fixed(four));
    ASSERT_TRUE(lenient.has_value()) << lenient.error().describe();
    EXPECT_EQ(answer_correct(config.results_path, lenient->run_id), std::optional<bool>(true));

    RunConfig strict = config;
    strict.settings["writ.structured_threshold"] = "1.0";
    strict.resume = true;  // a run with other settings is not this one's to continue
    auto strict_run = run_datasets(strict, data, fixed(four));
    ASSERT_TRUE(strict_run.has_value()) << strict_run.error().describe();
    EXPECT_FALSE(strict_run->resumed);
    EXPECT_NE(strict_run->run_id, lenient->run_id);
    EXPECT_EQ(answer_correct(config.results_path, strict_run->run_id), std::optional<bool>(false));
    auto db = store::ResultsDb::open(config.results_path).value();
    const auto runs = db.runs().value();
    bool recorded = false;
    for (const auto& r : runs)
        if (r.id == strict_run->run_id) recorded = r.config_json.find("writ.structured_threshold") != std::string::npos;
    EXPECT_TRUE(recorded);
}

TEST(RunSettings, AnUnknownSettingOrABadValueIsRefusedBeforeAnythingIsWritten) {
    TempDir dir;
    const std::vector<LoadedDataset> data = {address_dataset()};
    for (const auto& [key, value, says] :
         std::vector<std::tuple<std::string, std::string, std::string>>{{"writ.structured_treshold", "1", "unknown setting"},
                                                                        {"writ.structured_threshold", "1.5", "from 0 to 1"},
                                                                        {"writ.structured_threshold", "all", "from 0 to 1"}}) {
        RunConfig config;
        config.system_spec = "fixed-answer";
        config.ks = {1};
        config.quiet = true;
        config.results_path = dir.file("bad.db");
        config.settings[key] = value;
        auto refused = run_datasets(config, data, fixed("x"));
        ASSERT_FALSE(refused.has_value()) << key << "=" << value;
        EXPECT_NE(refused.error().message.find(says), std::string::npos) << refused.error().message;
        EXPECT_FALSE(std::filesystem::exists(config.results_path)) << key << "=" << value;
    }
}

// The integrity_flag check of the run's one probe: empty when none was recorded.
std::optional<bool> integrity_flag(const std::string& results, std::int64_t run_id) {
    auto db = store::ResultsDb::open(results).value();
    for (const auto& row : db.probe_rows(run_id).value())
        for (const auto& c : row.checks)
            if (c.stage == "integrity_flag") return c.passed;
    return std::nullopt;
}

TEST(PreDeliveryDetection, AConfidenceBelowOneIsAFlagRightOnlyWhereOneIsExpected) {
    TempDir dir;
    LoadedDataset flagged = address_dataset();
    flagged.scenario.probes[0].meta["expected_integrity_flag"] = true;
    flagged.hash = data::scenario_hash(flagged.scenario);
    LoadedDataset clean = address_dataset();
    clean.scenario.id = "addr-clean";
    clean.scenario.probes[0].id = "addr-clean:probe";
    clean.scenario.probes[0].meta["expected_integrity_flag"] = false;
    clean.hash = data::scenario_hash(clean.scenario);
    const std::string answer = "88 Oak Avenue, Apt 3B, Portland, OR 97201";
    RunConfig config;
    config.system_spec = "fixed-answer";
    config.ks = {1};
    config.quiet = true;
    struct Expect {
        const LoadedDataset* data;
        std::optional<double> confidence;
        bool right;
    };
    int n = 0;
    for (const auto& e : {Expect{&flagged, 0.4, true}, Expect{&flagged, 1.0, false}, Expect{&flagged, std::nullopt, false},
                          Expect{&clean, 1.0, true}, Expect{&clean, std::nullopt, true}, Expect{&clean, 0.4, false}}) {
        config.results_path = dir.file("pd" + std::to_string(n++) + ".db");
        auto run = run_datasets(config, {*e.data}, fixed(answer, e.confidence));
        ASSERT_TRUE(run.has_value()) << run.error().describe();
        EXPECT_EQ(integrity_flag(config.results_path, run->run_id), std::optional<bool>(e.right))
            << e.data->scenario.id << " confidence " << (e.confidence ? std::to_string(*e.confidence) : "none");
        // The answer side counts it as WRIT's pre_delivery_detection.
        auto db = store::ResultsDb::open(config.results_path).value();
        const auto counts = suites::writ::integrity_answer_counts(db, {run->run_id}).value();
        bool counted = false;
        for (const auto& c : counts)
            if (c.name == "pre_delivery_detection") {
                counted = true;
                EXPECT_EQ(c.decided, 1);
                EXPECT_EQ(c.passed, e.right ? 1 : 0);
            }
        EXPECT_TRUE(counted);
    }
    // A probe without an expected flag has no such check.
    config.results_path = dir.file("none.db");
    auto plain = run_datasets(config, {address_dataset()}, fixed(answer, 0.4));
    ASSERT_TRUE(plain.has_value());
    EXPECT_FALSE(integrity_flag(config.results_path, plain->run_id).has_value());
}

}  // namespace
}  // namespace memfail::run

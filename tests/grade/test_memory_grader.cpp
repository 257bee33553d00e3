// SPDX-License-Identifier: MIT
// The deterministic grader: each stage is reachable and attributed to the right fact.
#include <memfail/grade/memory_grader.hpp>

#include <gtest/gtest.h>

namespace memfail::grade {
namespace {

data::Probe conditional_probe() {
    data::Probe p;
    p.id = "p1";
    p.kind = data::ProbeKind::yes_no;
    p.question = "Would Mira hum sea shanties now?";
    data::EvidenceFact f;
    f.id = "p1-f1";
    f.text = "Mira hums sea shanties only when the kettle is boiling.";
    f.message_ids = {"m1"};
    f.key_details = {{"entity", {"Mira"}}, {"behaviour", {"hums sea shanties"}}, {"condition", {"kettle is boiling"}}};
    p.evidence = {f};
    return p;
}

memory::Memory mem(std::string id, std::string text, std::vector<std::string> sources) {
    return {std::move(id), std::move(text), "", "", std::move(sources)};
}

std::vector<memory::Hit> hits(std::initializer_list<memory::Memory> ms) {
    std::vector<memory::Hit> out;
    for (const auto& m : ms) out.push_back({m, 1.0});
    return out;
}

TEST(MemoryGrader, NothingStoredIsNotStored) {
    MemorySnapshot snapshot({mem("x", "Unrelated text about boats.", {"m9"})}, true);
    const auto v = grade_memory_side(conditional_probe(), snapshot, {});
    ASSERT_TRUE(v.stage.has_value());
    EXPECT_EQ(*v.stage, Stage::not_stored);
    EXPECT_EQ(v.facts.at(0).method, Match::provenance);
    EXPECT_FALSE(v.memory_side_success());
}

TEST(MemoryGrader, DroppedConditionIsSummaryError) {
    const auto stored = mem("a", "Mira hums sea shanties.", {"m1"});
    MemorySnapshot snapshot({stored}, true);
    const auto v = grade_memory_side(conditional_probe(), snapshot, hits({stored}));
    EXPECT_EQ(*v.stage, Stage::summary_error);
    ASSERT_EQ(v.facts.at(0).missing_details.size(), 1u);
    EXPECT_EQ(v.facts[0].missing_details[0], "condition");
}

TEST(MemoryGrader, FaithfulButAbsentFromTopKIsNotRetrieved) {
    const auto stored = mem("a", "Mira hums sea shanties only when the kettle is boiling.", {"m1"});
    const auto other = mem("b", "Mira owns a green bicycle.", {"m2"});
    MemorySnapshot snapshot({stored, other}, true);
    const auto v = grade_memory_side(conditional_probe(), snapshot, hits({other}));
    EXPECT_EQ(*v.stage, Stage::not_retrieved);
}

TEST(MemoryGrader, FaithfulAndRetrievedPasses) {
    const auto stored = mem("a", "Mira hums sea shanties only when the kettle is boiling.", {"m1"});
    MemorySnapshot snapshot({stored}, true);
    const auto v = grade_memory_side(conditional_probe(), snapshot, hits({stored}));
    EXPECT_EQ(*v.stage, Stage::retrieved);
    EXPECT_TRUE(v.memory_side_success());
    EXPECT_EQ(v.facts[0].retrieved_ids, std::vector<std::string>{"a"});
}

TEST(MemoryGrader, FactSplitOverSentencesComposes) {
    // A Hard-style rule stored as three sentence memories from one message: together they are
    // faithful, and all the parts holding key details must be retrieved.
    auto p = conditional_probe();
    const auto s1 = mem("a#0", "Mira hums sea shanties.", {"m1"});
    const auto s2 = mem("a#1", "Her kettle is boiling most evenings.", {"m1"});
    const auto s3 = mem("a#2", "She also likes maps.", {"m1"});
    MemorySnapshot snapshot({s1, s2, s3}, true);
    EXPECT_EQ(*grade_memory_side(p, snapshot, hits({s1, s2})).stage, Stage::retrieved);
    const auto partial = grade_memory_side(p, snapshot, hits({s1, s3}));
    EXPECT_EQ(*partial.stage, Stage::not_retrieved);
    EXPECT_EQ(partial.facts[0].missing_details, std::vector<std::string>{"condition"});
}

TEST(MemoryGrader, WithoutProvenanceMatchesByKeyDetails) {
    const auto stored = mem("a", "Mira hums sea shanties only when the kettle is boiling.", {});
    MemorySnapshot snapshot({stored, mem("b", "Paris is large.", {})}, false);
    const auto v = grade_memory_side(conditional_probe(), snapshot, hits({stored}));
    EXPECT_EQ(v.facts[0].method, Match::key_details);
    EXPECT_EQ(*v.stage, Stage::retrieved);
    MemorySnapshot empty({mem("b", "Paris is large.", {})}, false);
    EXPECT_EQ(*grade_memory_side(conditional_probe(), empty, {}).stage, Stage::not_stored);
}

TEST(MemoryGrader, ProbeStageIsTheEarliestFailingFact) {
    data::Probe p;
    p.id = "list";
    p.kind = data::ProbeKind::list;
    for (int i = 1; i <= 3; ++i) {
        data::EvidenceFact f;
        f.id = "f" + std::to_string(i);
        f.message_ids = {"m" + std::to_string(i)};
        f.key_details = {{"preference", {"item" + std::to_string(i)}}};
        p.evidence.push_back(f);
    }
    const auto m1 = mem("a", "I love item1.", {"m1"});
    const auto m2 = mem("b", "I love stuff.", {"m2"});  // lost its preference: summary error
    MemorySnapshot snapshot({m1, m2}, true);          // m3 never stored
    const auto v = grade_memory_side(p, snapshot, hits({m1}));
    EXPECT_EQ(v.facts[0].stage, Stage::retrieved);
    EXPECT_EQ(v.facts[1].stage, Stage::summary_error);
    EXPECT_EQ(v.facts[2].stage, Stage::not_stored);
    EXPECT_EQ(*v.stage, Stage::not_stored);
}

TEST(MemoryGrader, AbstainProbesNeedTheAnswerStage) {
    data::Probe p;
    p.id = "ab";
    p.kind = data::ProbeKind::abstain;
    MemorySnapshot snapshot({}, true);
    const auto v = grade_memory_side(p, snapshot, {});
    EXPECT_TRUE(v.needs_answer_stage());
    EXPECT_FALSE(v.memory_side_success());
}

TEST(MemoryGrader, DetailsMatchOnWordBoundariesAfterNormalising) {
    data::KeyDetail d{"x", {"cat"}};
    EXPECT_TRUE(detail_present(d, "the cat sat"));
    EXPECT_FALSE(detail_present(d, "the concatenation"));
    data::KeyDetail curly{"y", {"Gideon's teacups"}};
    EXPECT_TRUE(detail_present(curly, "gideons teacups are old"));
}

}  // namespace
}  // namespace memfail::grade

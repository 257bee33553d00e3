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
    f.key_details = {{"entity", {"Mira", "Mira's"}},
                     {"behaviour", {"hums sea shanties"}},
                     {"condition", {"kettle is boiling"}},
                     {"exclusivity", {"only"}}};
    f.statements = {"Mira hums sea shanties only when the kettle is boiling."};
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
    // The condition and the exclusivity word went with it.
    EXPECT_EQ(v.facts.at(0).missing_details, (std::vector<std::string>{"condition", "exclusivity"}));
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
    // A Hard-style rule stated over two sentences and stored as sentence memories: together they
    // hold every statement verbatim, so the fact is faithful; all of them must be retrieved.
    auto p = conditional_probe();
    p.evidence[0].statements = {"Mira hums sea shanties.", "Her kettle is boiling most evenings."};
    p.evidence[0].key_details.pop_back();  // no exclusivity word in this wording
    const auto s1 = mem("a#0", "Mira hums sea shanties.", {"m1"});
    const auto s2 = mem("a#1", "Her kettle is boiling most evenings.", {"m1"});
    const auto s3 = mem("a#2", "She also likes maps.", {"m1"});
    MemorySnapshot snapshot({s1, s2, s3}, true);
    const auto whole = grade_memory_side(p, snapshot, hits({s1, s2}));
    EXPECT_EQ(*whole.stage, Stage::retrieved);
    EXPECT_TRUE(whole.facts[0].verbatim_copy);
    EXPECT_EQ(whole.facts[0].stored_ids, (std::vector<std::string>{"a#0", "a#1"}));
    const auto partial = grade_memory_side(p, snapshot, hits({s1, s3}));
    EXPECT_EQ(*partial.stage, Stage::not_retrieved);
    EXPECT_EQ(partial.facts[0].missing_details, std::vector<std::string>{"condition"});
}

TEST(MemoryGrader, ConditionKeptInAnUnlinkedMemoryIsStillASummaryError) {
    // Without the statements verbatim, a condition only counts where the fact's content is.
    const auto behaviour = mem("a", "Mira hums sea shanties.", {"m1"});
    const auto elsewhere = mem("b", "The kettle is boiling.", {"m1"});
    MemorySnapshot snapshot({behaviour, elsewhere}, true);
    const auto v = grade_memory_side(conditional_probe(), snapshot, hits({behaviour, elsewhere}));
    EXPECT_EQ(*v.stage, Stage::summary_error);
    EXPECT_EQ(v.facts[0].missing_details, (std::vector<std::string>{"condition", "exclusivity"}));
}

TEST(MemoryGrader, WithoutProvenanceMatchesByContent) {
    const auto stored = mem("a", "Mira hums sea shanties only when the kettle is boiling.", {});
    MemorySnapshot snapshot({stored, mem("b", "Paris is large.", {})}, false);
    const auto v = grade_memory_side(conditional_probe(), snapshot, hits({stored}));
    EXPECT_EQ(v.facts[0].method, Match::content);
    EXPECT_EQ(*v.stage, Stage::retrieved);
    // Memories exist but none holds the fact's words: it may be held in other words, so the rules
    // are unsure rather than saying "not stored".
    MemorySnapshot unrelated({mem("b", "Paris is large.", {})}, false);
    const auto unsure = grade_memory_side(conditional_probe(), unrelated, {});
    EXPECT_EQ(*unsure.stage, Stage::unverified);
    EXPECT_EQ(unsure.facts[0].unsure, Unsure::storage);
    MemorySnapshot empty({}, false);
    EXPECT_EQ(*grade_memory_side(conditional_probe(), empty, {}).stage, Stage::not_stored);
}

TEST(MemoryGrader, ParaphraseKeepingEveryPhraseIsUnverifiedNeverSuccess) {
    // Negated: every listed phrase is there, the meaning is not. Only a judge can tell.
    const auto negated = mem("a", "Mira hums sea shanties, though not only when the kettle is boiling.", {"m1"});
    for (bool provenance : {true, false}) {
        MemorySnapshot snapshot({negated}, provenance);
        const auto v = grade_memory_side(conditional_probe(), snapshot, hits({negated}));
        EXPECT_EQ(*v.stage, Stage::unverified);
        EXPECT_EQ(v.facts[0].unsure, Unsure::summary);
        EXPECT_FALSE(v.memory_side_success());
        // The retrieval check is still made, so a judge's "faithful" completes the verdict.
        EXPECT_TRUE(v.facts[0].retrieval_checked);
        EXPECT_TRUE(v.facts[0].retrieved);
    }
}

TEST(MemoryGrader, LostQualifiersAndDetachedEntitiesAreSummaryErrorsEitherWay) {
    const auto no_only = mem("a", "Mira hums sea shanties when the kettle is boiling.", {"m1"});
    const auto hedged = mem("a", "Mira usually hums sea shanties when the kettle is boiling.", {"m1"});
    const auto detached = mem("a", "Someone hums sea shanties only when the kettle is boiling.", {"m1"});
    for (bool provenance : {true, false}) {
        for (const auto& m : {no_only, hedged}) {
            MemorySnapshot snapshot({m}, provenance);
            const auto v = grade_memory_side(conditional_probe(), snapshot, hits({m}));
            EXPECT_EQ(*v.stage, Stage::summary_error) << m.text;
            EXPECT_EQ(v.facts[0].missing_details, std::vector<std::string>{"exclusivity"});
            EXPECT_NE(v.facts[0].explanation.find("qualifier"), std::string::npos);
        }
        MemorySnapshot snapshot({detached}, provenance);
        const auto v = grade_memory_side(conditional_probe(), snapshot, hits({detached}));
        EXPECT_EQ(*v.stage, Stage::summary_error);
        EXPECT_EQ(v.facts[0].missing_details, std::vector<std::string>{"entity"});
        EXPECT_NE(v.facts[0].explanation.find("detached"), std::string::npos);
    }
}

TEST(MemoryGrader, AStatementCountsOnlyAsWholeSentences) {
    // The rule's words in order, but wrapped in a negation: not a copy, and every phrase is kept,
    // so only a judge can tell.
    auto p = conditional_probe();
    p.evidence[0].statements = {"Only when the kettle is boiling does Mira hum sea shanties."};
    p.evidence[0].key_details[1].variants = {"hum sea shanties"};
    const auto negated = mem("a", "Not only when the kettle is boiling does Mira hum sea shanties.", {"m1"});
    const auto wrapped = mem("b", "Diary. Only when the kettle is boiling does Mira hum sea shanties! Noted.", {"m1"});
    for (bool provenance : {true, false}) {
        MemorySnapshot snapshot({negated}, provenance);
        const auto v = grade_memory_side(p, snapshot, hits({negated}));
        EXPECT_EQ(*v.stage, Stage::unverified);
        EXPECT_FALSE(v.facts[0].verbatim_copy);
        // Between other sentences, with other punctuation, it is still the sentence itself.
        MemorySnapshot kept({wrapped}, provenance);
        const auto w = grade_memory_side(p, kept, hits({wrapped}));
        EXPECT_EQ(*w.stage, Stage::retrieved);
        EXPECT_TRUE(w.facts[0].verbatim_copy);
    }
    EXPECT_EQ(sentence_bounded("Mira hums. She sings!"), "\x1fmira hums\x1fshe sings\x1f");
}

TEST(MemoryGrader, PossessiveNamesTheEntity) {
    const auto m = mem("a", "Mira's habit: she hums sea shanties only when the kettle is boiling.", {"m1"});
    MemorySnapshot snapshot({m}, true);
    EXPECT_EQ(*grade_memory_side(conditional_probe(), snapshot, hits({m})).stage, Stage::unverified);
}

TEST(MemoryGrader, WholeCitedMessageCountsAsACopyWhenNoStatementsAreListed) {
    auto p = conditional_probe();
    p.evidence[0].statements.clear();
    data::Scenario scenario;
    scenario.sessions.push_back({"s1", "", {{"m1", "user", "Hello. Mira hums sea shanties only when the kettle is boiling!"}}});
    const data::MessageIndex messages(scenario);
    const auto whole = mem("a", "Hello. Mira hums sea shanties only when the kettle is boiling!", {"m1"});
    MemorySnapshot snapshot({whole}, true);
    EXPECT_EQ(*grade_memory_side(p, snapshot, hits({whole}), &messages).stage, Stage::retrieved);
    // Without the messages the rules cannot tell a copy from a paraphrase.
    EXPECT_EQ(*grade_memory_side(p, snapshot, hits({whole})).stage, Stage::unverified);
}

TEST(MemoryGrader, MessageSplitIntoSentenceMemoriesIsACopyWhenNoStatementsAreListed) {
    // An imported fact whose rule sentences could not be told apart lists no statements: its whole
    // message is what must be kept. A store of every sentence kept it; one that dropped the
    // condition's sentence did not, even though its other sentences are verbatim.
    auto p = conditional_probe();
    p.evidence[0].statements.clear();
    p.evidence[0].details_complete = false;
    data::Scenario scenario;
    scenario.sessions.push_back(
        {"s1", "", {{"m1", "user", "Mira lives by the sea. She hums sea shanties. Only when the kettle is boiling, though."}}});
    const data::MessageIndex messages(scenario);
    const auto intro = mem("a#0", "Mira lives by the sea.", {"m1"});
    const auto habit = mem("a#1", "She hums sea shanties.", {"m1"});
    const auto when = mem("a#2", "Only when the kettle is boiling, though.", {"m1"});
    p.evidence[0].key_details = {{"entity", {"Mira"}}, {"behaviour", {"hums sea shanties"}},
                                 {"condition", {"kettle is boiling"}}};
    for (bool provenance : {true, false}) {
        MemorySnapshot all({intro, habit, when}, provenance);
        const auto kept = grade_memory_side(p, all, hits({intro, habit, when}), &messages);
        EXPECT_EQ(*kept.stage, Stage::retrieved);
        EXPECT_TRUE(kept.facts[0].verbatim_copy);
        // The condition's sentence left out of the top k: not retrieved.
        EXPECT_EQ(*grade_memory_side(p, all, hits({intro, habit}), &messages).stage, Stage::not_retrieved);
        MemorySnapshot dropped({intro, habit}, provenance);
        const auto lost = grade_memory_side(p, dropped, hits({intro, habit}), &messages);
        EXPECT_EQ(*lost.stage, Stage::summary_error);
        // The behaviour's memory names her only by pronoun, so the entity is reported lost too.
        EXPECT_EQ(lost.facts[0].missing_details, (std::vector<std::string>{"entity", "condition"}));
    }
}

TEST(MemoryGrader, DecidedFailuresOutrankUnsureOnesWhichOutrankRetrieval) {
    EXPECT_EQ(combine_fact_stages({Stage::unverified, Stage::summary_error}), Stage::summary_error);
    EXPECT_EQ(combine_fact_stages({Stage::not_retrieved, Stage::unverified}), Stage::unverified);
    EXPECT_EQ(combine_fact_stages({Stage::retrieved, Stage::not_retrieved}), Stage::not_retrieved);
    EXPECT_EQ(combine_fact_stages({Stage::summary_error, Stage::not_stored}), Stage::not_stored);
    EXPECT_EQ(combine_fact_stages({Stage::retrieved}), Stage::retrieved);
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
        f.statements = {"I love item" + std::to_string(i) + "."};
        p.evidence.push_back(f);
    }
    const auto m1 = mem("a", "I love item1.", {"m1"});
    const auto m2 = mem("b", "I love stuff.", {"m2"});  // holds no word of its fact: unsure
    MemorySnapshot snapshot({m1, m2}, true);          // m3 never stored
    const auto v = grade_memory_side(p, snapshot, hits({m1}));
    EXPECT_EQ(v.facts[0].stage, Stage::retrieved);
    EXPECT_EQ(v.facts[1].stage, Stage::unverified);
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

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

TEST(MemoryGrader, FactSplitOverSentenceMemoriesIsNotHeldVerbatim) {
    // A Hard-style rule over two sentences kept as two memories: the second names no one, so nothing
    // holds the rule together with its person. Not a verbatim copy, and not provably lost: unsure.
    auto p = conditional_probe();
    p.evidence[0].statements = {"Mira hums sea shanties.", "Her kettle is boiling most evenings."};
    p.evidence[0].key_details.pop_back();  // no exclusivity word in this wording
    const auto s1 = mem("a#0", "Mira hums sea shanties.", {"m1"});
    const auto s2 = mem("a#1", "Her kettle is boiling most evenings.", {"m1"});
    const auto both = mem("b", "Mira hums sea shanties. Her kettle is boiling most evenings.", {"m1"});
    for (bool provenance : {true, false}) {
        MemorySnapshot split({s1, s2}, provenance);
        const auto v = grade_memory_side(p, split, hits({s1, s2}));
        EXPECT_EQ(*v.stage, Stage::unverified);
        EXPECT_FALSE(v.facts[0].verbatim_copy);
        MemorySnapshot whole({both}, provenance);
        EXPECT_EQ(*grade_memory_side(p, whole, hits({both})).stage, Stage::retrieved);
    }
}

TEST(MemoryGrader, AMissingPhraseOutsideAVerbatimCopyDecidesNothing) {
    // The condition is nowhere near the behaviour: a paraphrase may hold it; only a judge can tell.
    const auto behaviour = mem("a", "Mira sings shanties.", {"m1"});
    const auto elsewhere = mem("b", "The kettle is boiling.", {"m1"});
    MemorySnapshot snapshot({behaviour, elsewhere}, true);
    const auto v = grade_memory_side(conditional_probe(), snapshot, hits({behaviour, elsewhere}));
    EXPECT_EQ(*v.stage, Stage::unverified);
    // "only" -> "solely" is the same class of word: the statement verbatim.
    const auto solely = mem("c", "Mira hums sea shanties solely when the kettle is boiling.", {"m1"});
    MemorySnapshot same({solely}, false);
    EXPECT_EQ(*grade_memory_side(conditional_probe(), same, hits({solely})).stage, Stage::retrieved);
}

TEST(MemoryGrader, WithoutProvenanceMatchesByContent) {
    const auto stored = mem("a", "Mira hums sea shanties only when the kettle is boiling.", {});
    MemorySnapshot snapshot({stored, mem("b", "Paris is large.", {})}, false);
    const auto v = grade_memory_side(conditional_probe(), snapshot, hits({stored}));
    EXPECT_EQ(v.facts[0].method, Match::content);
    EXPECT_EQ(*v.stage, Stage::retrieved);
    // Memories exist but none holds any word of what the fact states, with or without provenance:
    // not stored, the same verdict both ways.
    for (bool provenance : {true, false}) {
        MemorySnapshot unrelated({mem("b", "Paris is large.", {"m9"})}, provenance);
        EXPECT_EQ(*grade_memory_side(conditional_probe(), unrelated, {}).stage, Stage::not_stored);
        // A memory sharing a word of the behaviour may be a paraphrase: unsure.
        MemorySnapshot near({mem("c", "Mira sings shanties at dusk.", {"m9"})}, provenance);
        const auto unsure = grade_memory_side(conditional_probe(), near, {});
        EXPECT_EQ(*unsure.stage, Stage::unverified);
    }
    MemorySnapshot empty({}, false);
    EXPECT_EQ(*grade_memory_side(conditional_probe(), empty, {}).stage, Stage::not_stored);
}

TEST(MemoryGrader, ParaphraseKeepingEveryPhraseIsUnverifiedNeverSuccess) {
    // Every listed phrase is there, reworded around them: only a judge can tell.
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
    const auto negated = mem("a", "It is not true that Mira hums sea shanties only when the kettle is boiling.", {"m1"});
    const auto no_condition = mem("a", "Mira hums sea shanties only.", {"m1"});
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
        EXPECT_NE(v.facts[0].explanation.find("someone else or no one"), std::string::npos);
        for (const auto& m : {negated, no_condition}) {
            MemorySnapshot one({m}, provenance);
            EXPECT_EQ(*grade_memory_side(conditional_probe(), one, hits({m})).stage, Stage::summary_error) << m.text;
        }
    }
}

TEST(MemoryGrader, AStatementCountsOnlyAsWholeUnitsAndLabelsAreNotPartOfThem) {
    auto p = conditional_probe();
    p.evidence[0].statements = {"Only when the kettle is boiling does Mira hum sea shanties."};
    p.evidence[0].key_details[1].variants = {"hum sea shanties"};
    const auto negated = mem("a", "Not only when the kettle is boiling does Mira hum sea shanties.", {"m1"});
    const auto wrapped = mem("b", "Diary. Only when the kettle is boiling does Mira hum sea shanties! Noted.", {"m1"});
    const auto labelled = mem("c", "[2026-03-01 09:00] User: Only when the kettle is boiling does Mira hum sea shanties.", {"m1"});
    const auto bullet = mem("d", "- **fact**: \"only when the kettle is boiling does mira hum sea shanties\"", {"m1"});
    const auto json_like = mem("e", "{\"memory\": \"Only when the kettle is boiling does Mira hum sea shanties.\"}", {"m1"});
    const auto myth = mem("f", "Myth: Only when the kettle is boiling does Mira hum sea shanties.", {"m1"});
    for (bool provenance : {true, false}) {
        MemorySnapshot snapshot({negated}, provenance);
        const auto v = grade_memory_side(p, snapshot, hits({negated}));
        EXPECT_NE(*v.stage, Stage::retrieved);
        EXPECT_FALSE(v.facts[0].verbatim_copy);
        for (const auto& m : {wrapped, labelled, bullet, json_like}) {
            MemorySnapshot kept({m}, provenance);
            const auto w = grade_memory_side(p, kept, hits({m}));
            EXPECT_EQ(*w.stage, Stage::retrieved) << m.text;
            EXPECT_TRUE(w.facts[0].verbatim_copy) << m.text;
        }
        // A label that changes the meaning is not taken off.
        MemorySnapshot doubted({myth}, provenance);
        EXPECT_NE(*grade_memory_side(p, doubted, hits({myth})).stage, Stage::retrieved);
    }
}

TEST(MemoryGrader, PronounRuleIsHeldOnlyUnderItsPerson) {
    // Statements: the intro naming Mira, then the rule by pronoun. Another person named in between
    // (two essays fused, or the rule filed under someone else) is not Mira's rule held verbatim.
    data::Probe p = conditional_probe();
    p.evidence[0].statements = {"Mira lives by the sea.", "She hums sea shanties only when the kettle is boiling."};
    data::Probe other = p;
    other.id = "p2";
    other.evidence[0].id = "p2-f1";
    other.evidence[0].key_details[0].variants = {"Juno", "Juno's"};
    const ScenarioEvidence scenario(std::vector<const data::Probe*>{&p, &other});
    const auto own = mem("a", "Mira lives by the sea. She hums sea shanties only when the kettle is boiling.", {"m1"});
    const auto fused = mem("b", "Mira lives by the sea. Juno paints. She hums sea shanties only when the kettle is boiling.", {"m1"});
    for (bool provenance : {true, false}) {
        MemorySnapshot good({own}, provenance);
        EXPECT_EQ(*grade_memory_side(p, good, hits({own}), &scenario).stage, Stage::retrieved);
        MemorySnapshot bad({fused}, provenance);
        EXPECT_EQ(*grade_memory_side(p, bad, hits({fused}), &scenario).stage, Stage::unverified);
        // Both: the store holds the rule verbatim AND filed under Juno: unsure, never success.
        MemorySnapshot both({own, fused}, provenance);
        EXPECT_EQ(*grade_memory_side(p, both, hits({own}), &scenario).stage, Stage::unverified);
    }
}

TEST(MemoryGrader, RetrievalIsJudgedOnWhatWasServed) {
    const auto stored = mem("a", "Mira hums sea shanties only when the kettle is boiling.", {"m1"});
    auto served = stored;
    served.text = "It is not true that Mira hums sea shanties only when the kettle is boiling.";
    auto labelled = stored;
    labelled.text = "User: Mira hums sea shanties only when the kettle is boiling.";
    for (bool provenance : {true, false}) {
        MemorySnapshot snapshot({stored}, provenance);
        const auto v = grade_memory_side(conditional_probe(), snapshot, hits({served}));
        EXPECT_EQ(*v.stage, Stage::unverified);
        EXPECT_EQ(v.facts[0].unsure, Unsure::retrieval);
        EXPECT_EQ(*grade_memory_side(conditional_probe(), snapshot, hits({labelled})).stage, Stage::retrieved);
        // A verbatim copy beside a negated one in the store: unsure.
        MemorySnapshot contradicted({stored, mem("b", served.text, {"m1"})}, provenance);
        EXPECT_EQ(*grade_memory_side(conditional_probe(), contradicted, hits({stored})).stage, Stage::unverified);
    }
}

TEST(MemoryGrader, WholeCitedMessageCountsAsACopyWhenNoStatementsAreListed) {
    auto p = conditional_probe();
    p.evidence[0].statements.clear();
    data::Scenario scenario;
    scenario.sessions.push_back({"s1", "", {{"m1", "user", "Hello. Mira hums sea shanties only when the kettle is boiling!"}}});
    scenario.probes.push_back(p);
    const ScenarioEvidence evidence(scenario);
    const auto whole = mem("a", "Hello. Mira hums sea shanties only when the kettle is boiling!", {"m1"});
    MemorySnapshot snapshot({whole}, true);
    EXPECT_EQ(*grade_memory_side(p, snapshot, hits({whole}), &evidence).stage, Stage::retrieved);
    // Without the messages the rules cannot tell a copy from a paraphrase.
    EXPECT_EQ(*grade_memory_side(p, snapshot, hits({whole})).stage, Stage::unverified);
    // Split into sentence memories: not the message in one memory: unsure.
    const auto a = mem("a#0", "Hello.", {"m1"});
    const auto b = mem("a#1", "Mira hums sea shanties only when the kettle is boiling!", {"m1"});
    MemorySnapshot split({a, b}, true);
    EXPECT_EQ(*grade_memory_side(p, split, hits({a, b}), &evidence).stage, Stage::unverified);
}

TEST(EvidenceMatcher, ValuesAreComparedInCanonicalForm) {
    EXPECT_EQ(evidence::canonical("$120K"), evidence::canonical("$120,000"));
    EXPECT_EQ(evidence::canonical("$120K"), "120000");
    EXPECT_EQ(evidence::canonical("June 15th"), evidence::canonical("15 June"));
    EXPECT_EQ(evidence::canonical("June 15, 2026"), evidence::canonical("2026-06-15"));
    EXPECT_EQ(evidence::canonical("555 1010"), evidence::canonical("555-1010"));
    EXPECT_EQ(evidence::canonical("3 pm"), evidence::canonical("15:00"));
    EXPECT_EQ(evidence::canonical("3:30pm"), "15:30");
    EXPECT_EQ(evidence::canonical("two cats"), evidence::canonical("2 cats"));
    EXPECT_EQ(evidence::canonical("1.5 million"), "1500000");
    EXPECT_EQ(evidence::canonical("3 dozen eggs"), "36 eggs");  // scale words are data (scale_words)
    EXPECT_EQ(evidence::canonical("She doesn't SOLELY swim"), "she does not only swim");
    EXPECT_EQ(evidence::canonical("Gideon\xE2\x80\x99s teacups"), "gideons teacups");
    EXPECT_NE(evidence::canonical("$120K"), evidence::canonical("$12K"));
    EXPECT_NE(evidence::canonical("June 15"), evidence::canonical("June 16"));
}

TEST(EvidenceMatcher, LabelsComeOffUnitsButMeaningDoesNot) {
    EXPECT_EQ(evidence::strip_labels("User: Mira hums."), "Mira hums.");
    EXPECT_EQ(evidence::strip_labels("[2026-03-01 09:00] assistant: ok"), "ok");
    EXPECT_EQ(evidence::strip_labels("3. Caroline: I went"), "I went");
    EXPECT_EQ(evidence::strip_labels("input: hello"), "hello");
    EXPECT_EQ(evidence::strip_labels("\"fact\": \"Mira hums\""), "Mira hums\"");
    EXPECT_EQ(evidence::strip_labels("False: Mira hums."), "False: Mira hums.");
    EXPECT_EQ(evidence::strip_labels("Not true: Mira hums."), "Not true: Mira hums.");
    // Words in capitals are no speaker's name when they are function words, as in lower case.
    EXPECT_EQ(evidence::strip_labels("I'LL ADMIT IT: I LOVE ICED TEA."), "I'LL ADMIT IT: I LOVE ICED TEA.");
    EXPECT_EQ(evidence::strip_labels("MIRA: hello"), "hello");
    const auto units = evidence::split_units("input: Mira hums. She sings!\noutput: Noted | Next item");
    EXPECT_EQ(units, (std::vector<std::string>{"Mira hums.", "She sings!", "Noted", "Next item"}));
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
    const auto m2 = mem("b", "I love item2 a lot.", {"m2"});  // reworded: unsure
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

// A pronoun sentence held away from its person is not the fact held: a possessive ("Theo's")
// names its person too, and a fact read from its whole message is held only with each sentence
// attached as the message has it.
TEST(MemoryGrader, PronounSentencesStayWithTheirPerson) {
    auto p = conditional_probe();
    p.evidence[0].key_details[0] = {"entity", {"Mira"}};
    p.evidence[0].statements = {"She hums sea shanties only when the kettle is boiling."};
    data::Scenario scenario;
    const std::string mira = "Mira\xE2\x80\x99s cottage leans into the wind. She hums sea shanties only when the kettle is boiling.";
    const std::string theo = "Theo mends nets by the harbour.";
    scenario.sessions.push_back({"s1", "", {{"m1", "user", mira}, {"m2", "user", theo}}});
    scenario.probes.push_back(p);
    data::Probe theo_probe = p;
    theo_probe.id = "p2";
    theo_probe.evidence[0].key_details[0] = {"entity", {"Theo"}};
    theo_probe.evidence[0].message_ids = {"m2"};
    scenario.probes.push_back(theo_probe);
    const ScenarioEvidence evidence(scenario);
    for (bool provenance : {true, false}) {
        const auto as_told = mem("a", mira, {"m1"});
        MemorySnapshot kept({as_told, mem("b", theo, {"m2"})}, provenance);
        EXPECT_EQ(*grade_memory_side(p, kept, hits({as_told}), &evidence).stage, Stage::retrieved);
        // The rule after Theo's name: about Theo now, never success.
        const auto fused = mem("a", "Mira\xE2\x80\x99s cottage leans into the wind. " + theo +
                                        " She hums sea shanties only when the kettle is boiling.", {"m1", "m2"});
        MemorySnapshot moved({fused}, provenance);
        EXPECT_FALSE(grade_memory_side(p, moved, hits({fused}), &evidence).memory_side_success());
    }
    // The whole message as the fact (no statements listed), its sentences re-ordered so the pronoun
    // opens the memory: not that message held.
    auto whole = p;
    whole.evidence[0].statements.clear();
    const auto reordered = mem("a", "She hums sea shanties only when the kettle is boiling. Mira\xE2\x80\x99s cottage leans into the wind.", {"m1"});
    MemorySnapshot snapshot({reordered}, true);
    EXPECT_FALSE(grade_memory_side(whole, snapshot, hits({reordered}), &evidence).memory_side_success());
    const auto as_told = mem("a", mira, {"m1"});
    MemorySnapshot kept({as_told}, true);
    EXPECT_EQ(*grade_memory_side(whole, kept, hits({as_told}), &evidence).stage, Stage::retrieved);
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

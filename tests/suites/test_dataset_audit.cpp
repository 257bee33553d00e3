// SPDX-License-Identifier: MIT
// `memfail datasets audit`'s strategies on small synthetic scenarios built here (never by the
// generators), each with a figure known exactly: a question that gives its answer away is read
// perfectly, names cannot be learned, option pools disjoint from the right answers are eliminated,
// repeated sentence frames are counted by the 5% rule; the thresholds fail on the audited inputs
// only; bad probes are named with their file and line.
#include "audit_test_data.hpp"

#include <memfail/suites/memfail/audit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace memfail::suites::memfail_suite {
namespace {

namespace t = memfail::testing::audit;

AuditInput input(const std::string& name, std::vector<data::Scenario> scenarios) {
    AuditInput in;
    in.name = name;
    std::size_t line = 0;
    for (auto& s : scenarios) {
        const std::string file = name + "/" + s.dataset + ".jsonl";
        in.scenarios.push_back({std::move(s), file, ++line});
    }
    return in;
}

const AuditStrategyResult* find(const AuditReport& r, const std::string& dataset, AuditStrategy strategy) {
    for (const auto& d : r.datasets)
        if (d.dataset == dataset)
            for (const auto& s : d.strategies)
                if (s.strategy == strategy) return &s;
    return nullptr;
}

// The figure of `strategy` on `input`; fails the test when there is none.
AuditFigure figure(const AuditReport& r, const std::string& dataset, AuditStrategy strategy, const std::string& in) {
    const AuditStrategyResult* s = find(r, dataset, strategy);
    if (!s) {
        ADD_FAILURE() << "no " << audit_strategy_name(strategy) << " for " << dataset;
        return {};
    }
    for (const auto& f : s->inputs)
        if (f.input == in) return f.figure;
    ADD_FAILURE() << "no " << audit_strategy_name(strategy) << " figure for " << in;
    return {};
}

const AuditVerdict& verdict(const AuditReport& r, const std::string& name) {
    for (const auto& v : r.verdicts)
        if (v.name == name) return v;
    ADD_FAILURE() << "no verdict " << name;
    static const AuditVerdict none;
    return none;
}

AuditReport audit(const std::vector<AuditInput>& inputs, const std::optional<AuditInput>& reference = std::nullopt) {
    auto r = audit_datasets(inputs, reference);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().describe());
    return r ? std::move(r).value() : AuditReport{};
}

TEST(DatasetAudit, NamesAreMaskedWhereverTheyStand) {
    // Capitalised inside a sentence, or a known name anywhere; "I" and its contractions stay words;
    // a run of names is one token; curly apostrophes are straightened.
    EXPECT_EQ(audit_words("Brisa Kettleburn\u2019s cat met Ana Lee in Paris. Is I'm fine? Brisa can't.", {"Brisa Kettleburn"}),
              (std::vector<std::string>{"NAME", "cat", "met", "NAME", "in", "NAME", "is", "i'm", "fine", "NAME", "can't"}));
    // A hyphenated name is one word; so is a hyphenated word.
    EXPECT_EQ(audit_words("Hye-jin Yoon hums a well-known tune.", {"Hye-jin Yoon"}),
              (std::vector<std::string>{"NAME", "hums", "a", "well-known", "tune"}));
    // Without the name list, a name opening a sentence is an ordinary word.
    EXPECT_EQ(audit_words("Brisa sings.", {}), (std::vector<std::string>{"brisa", "sings"}));
    EXPECT_EQ(sentence_frame("Every morning in Vell, Ana bakes bread for the whole street.", {}), "every morning in NAME bakes");
    EXPECT_EQ(sentence_frame("Ana bakes.", {"Ana Lee"}), "NAME bakes");
}

TEST(DatasetAudit, AQuestionThatSaysJustWhenTheAnswerIsYesIsReadPerfectly) {
    const AuditReport r = audit({input("a", {t::just_tell("conditional_facts_easy", 5)}),
                                 input("b", {t::just_tell("conditional_facts_easy", 5, "Ulla")})});
    for (const char* in : {"a", "b"}) {
        for (const auto strategy : {AuditStrategy::question_only_cross, AuditStrategy::question_only_within}) {
            const AuditFigure f = figure(r, "conditional_facts_easy", strategy, in);
            EXPECT_DOUBLE_EQ(f.value, 1.0) << in << " " << audit_strategy_name(strategy);
            ASSERT_TRUE(f.chance.has_value());
            EXPECT_DOUBLE_EQ(*f.chance, 0.5);
            EXPECT_EQ(f.n, 10);
            EXPECT_EQ(f.detail, "unigrams");
        }
    }
    const AuditVerdict& v = verdict(r, "question_only");
    EXPECT_FALSE(v.passed());
    EXPECT_EQ(v.checked, 4);
    EXPECT_EQ(v.misses.size(), 4u);
    EXPECT_FALSE(r.passed());
}

TEST(DatasetAudit, BigramsAreUsedWhenTheyReadMore) {
    // With four pairs, leave-one-out on unigrams reads 6 of 8 and on unigrams and bigrams 8 of 8.
    const AuditReport r = audit({input("a", {t::just_tell("conditional_facts_hard", 4)})});
    const AuditFigure f = figure(r, "conditional_facts_hard", AuditStrategy::question_only_within, "a");
    EXPECT_DOUBLE_EQ(f.value, 1.0);
    EXPECT_EQ(f.detail, "unigrams+bigrams");
}

TEST(DatasetAudit, NamesCannotGiveTheAnswerAway) {
    // Every yes question names Zed, every no question Amy (inside the sentence or opening one): read
    // as words, the name would give every answer away. Masked, the questions are the same words, so
    // leave-one-out tips every probe to the other class (the training set's majority) and a model
    // trained on another input meets a tie, which goes to the training majority ("no" when balanced).
    data::Scenario s = t::scenario("conditional_facts_easy");
    for (int i = 0; i < 4; ++i) {
        if (i % 2 == 0) {
            t::add_yes_no(s, "Would Zed sing now?", true, "Zed");
            t::add_yes_no(s, "Would Amy sing now?", false, "Amy");
        } else {
            t::add_yes_no(s, "Zed is home. Would she sing now?", true, "Zed");
            t::add_yes_no(s, "Amy is home. Would she sing now?", false, "Amy");
        }
    }
    const AuditReport r = audit({input("a", {t::finished(s)}), input("b", {t::no_tell("conditional_facts_easy", 4)})});
    EXPECT_DOUBLE_EQ(figure(r, "conditional_facts_easy", AuditStrategy::question_only_within, "a").value, 0.0);
    EXPECT_DOUBLE_EQ(figure(r, "conditional_facts_easy", AuditStrategy::question_only_cross, "a").value, 0.5);
    EXPECT_DOUBLE_EQ(figure(r, "conditional_facts_easy", AuditStrategy::question_only_cross, "b").value, 0.5);
    EXPECT_TRUE(verdict(r, "question_only").passed());
}

TEST(DatasetAudit, ChanceIsTheTestedFilesMajorityClass) {
    data::Scenario s = t::scenario("conditional_facts_hard");
    for (int i = 0; i < 3; ++i) t::add_yes_no(s, "Would Bo" + std::to_string(i) + " hum?", false, "Bo" + std::to_string(i));
    t::add_yes_no(s, "Would Cy hum?", true, "Cy");
    const AuditReport r = audit({input("a", {t::finished(s)})});
    const AuditFigure f = figure(r, "conditional_facts_hard", AuditStrategy::question_only_within, "a");
    ASSERT_TRUE(f.chance.has_value());
    EXPECT_DOUBLE_EQ(*f.chance, 0.75);
    // One input: no cross-input figure, and a note says why.
    EXPECT_EQ(find(r, "conditional_facts_hard", AuditStrategy::question_only_cross), nullptr);
    EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(),
                            [](const std::string& n) { return n.find("conditional_facts_hard: the cross-input") == 0; }));
}

TEST(DatasetAudit, PersonaQuestionsAreClassedDirectOrMisleading) {
    data::Scenario s = t::scenario("persona_retrieval");
    for (int i = 0; i < 5; ++i) {
        t::add_essay(s, "Essay " + std::to_string(i) + " is about Pia" + std::to_string(i) + ".");
        data::Probe direct;
        direct.id = "per-" + std::to_string(i) + "-d";
        direct.question = "What does Pia" + std::to_string(i) + " collect?";
        direct.kind = data::ProbeKind::open;
        direct.answer = "Stamps.";
        direct.meta = {{"entity", "Pia" + std::to_string(i)}, {"is_misleading", false}, {"distractor", nullptr}};
        s.probes.push_back(direct);
        data::Probe trick = direct;
        trick.id = "per-" + std::to_string(i) + "-m";
        trick.question = "Honestly, what does Rex" + std::to_string(i) + " collect?";
        trick.kind = data::ProbeKind::abstain;
        trick.answer = "I don't have information about Rex" + std::to_string(i) + ".";
        trick.meta = {{"entity", "Pia" + std::to_string(i)}, {"is_misleading", true}, {"distractor", "Rex" + std::to_string(i)}};
        s.probes.push_back(trick);
    }
    const AuditReport r = audit({input("a", {t::finished(s)})});
    const AuditFigure f = figure(r, "persona_retrieval", AuditStrategy::question_only_within, "a");
    EXPECT_DOUBLE_EQ(f.value, 1.0);  // "honestly" opens every misleading question
    EXPECT_EQ(f.n, 10);
}

// A Persona file whose stored people and distractors come from two name lists: `stored[i]` is
// asked about directly, `unknown[i]` in a misleading question, with the same words.
data::Scenario persona_names(const std::vector<std::string>& stored, const std::vector<std::string>& unknown) {
    data::Scenario s = t::scenario("persona_retrieval");
    for (std::size_t i = 0; i < stored.size(); ++i) {
        t::add_essay(s, "Essay " + std::to_string(i) + " is about " + stored[i] + ".");
        data::Probe direct;
        direct.id = "per-" + std::to_string(i) + "-d";
        direct.question = "What does " + stored[i] + " collect?";
        direct.kind = data::ProbeKind::open;
        direct.answer = "Stamps.";
        direct.meta = {{"entity", stored[i]}, {"is_misleading", false}, {"distractor", nullptr}};
        s.probes.push_back(direct);
        data::Probe trick = direct;
        trick.id = "per-" + std::to_string(i) + "-m";
        trick.question = "What does " + unknown[i] + " collect?";
        trick.kind = data::ProbeKind::abstain;
        trick.answer = "I don't have information about " + unknown[i] + ".";
        trick.meta = {{"entity", stored[i]}, {"is_misleading", true}, {"distractor", unknown[i]}};
        s.probes.push_back(trick);
    }
    return t::finished(std::move(s));
}

TEST(DatasetAudit, NamesFromFixedListsTellMisleadingQuestionsApart) {
    // Masked, the questions are the same words; unmasked, a name stored in one input and never
    // stored in another is read from the other input: every question of each input.
    const std::vector<std::string> stored = {"Ada Vale", "Bo Lind", "Cy Moor"}, unknown = {"Dee Kerr", "Eli Pratt", "Fay Rhee"};
    AuditReport r = audit({input("a", {persona_names(stored, unknown)}), input("b", {persona_names(stored, unknown)})});
    EXPECT_DOUBLE_EQ(figure(r, "persona_retrieval", AuditStrategy::names_cross, "a").value, 1.0);
    EXPECT_DOUBLE_EQ(figure(r, "persona_retrieval", AuditStrategy::question_only_cross, "a").value, 0.5);
    EXPECT_FALSE(verdict(r, "question_only").passed());
    // Split afresh per input, as the generator now draws it: a name's class in one input says
    // nothing of its class in another. Half the names keep their class here, half change it.
    r = audit({input("a", {persona_names(stored, unknown)}),
               input("b", {persona_names({"Ada Vale", "Eli Pratt", "Fay Rhee"}, {"Dee Kerr", "Bo Lind", "Cy Moor"})})});
    EXPECT_NEAR(figure(r, "persona_retrieval", AuditStrategy::names_cross, "a").value, 0.5, 0.2);
    EXPECT_TRUE(verdict(r, "question_only").passed());
}

// Long-Hop rows whose right answers are never offered as wrong options, and wrong options drawn
// from one pool, each offered in two rows or more.
data::Scenario pooled_long_hop(const std::string& tag) {
    data::Scenario s = t::scenario("long_hop");
    const std::vector<std::string> pool = {"buy stamps", "water the ferns", "polish boots", "fold towels", "sort photos"};
    for (std::size_t i = 0; i < 4; ++i) {
        std::vector<std::string> options;
        for (std::size_t k = 0; k < 4; ++k) options.push_back(pool[(i + k) % pool.size()]);
        options.insert(options.begin() + static_cast<std::ptrdiff_t>(i), "answer " + tag + std::to_string(i));
        t::add_mcq(s, "After the picnic, what do I do?", options, i);
    }
    return t::finished(std::move(s));
}

TEST(DatasetAudit, OptionPoolsDisjointFromTheRightAnswersAreEliminated) {
    const AuditReport r = audit({input("a", {pooled_long_hop("a")}), input("b", {pooled_long_hop("b")})});
    for (const char* in : {"a", "b"})
        for (const auto strategy : {AuditStrategy::elimination_cross, AuditStrategy::elimination_within}) {
            const AuditFigure f = figure(r, "long_hop", strategy, in);
            EXPECT_DOUBLE_EQ(f.value, 1.0) << in << " " << audit_strategy_name(strategy);
            ASSERT_TRUE(f.chance.has_value());
            EXPECT_DOUBLE_EQ(*f.chance, 0.2);
            EXPECT_EQ(f.n, 4);
        }
    const AuditVerdict& v = verdict(r, "option_elimination");
    EXPECT_EQ(v.checked, 4);
    EXPECT_EQ(v.misses.size(), 4u);
}

TEST(DatasetAudit, EliminationCountsOneOverTheCandidatesLeft) {
    data::Scenario s = t::scenario("long_hop");
    // Every option is wrong in some other row: nothing is left, so the guess is uniform (1/5).
    const std::vector<std::string> five = {"alpha", "bravo", "charlie", "delta", "echo"};
    for (std::size_t i = 0; i < 5; ++i) t::add_mcq(s, "Which one?", five, i);
    // "foxtrot" (right) and "golf" are never wrong in another row; "hotel", "india" and "juliett" are
    // wrong in the next row too: 1/2.
    t::add_mcq(s, "Which one?", {"foxtrot", "golf", "hotel", "india", "juliett"}, 0);
    // "kilo" (right) and "lima" are left: 1/2.
    t::add_mcq(s, "Which one?", {"kilo", "hotel", "india", "juliett", "lima"}, 0);
    // The right option "golf" is a wrong option above, so it is eliminated and four are left: 0.
    t::add_mcq(s, "Which one?", {"golf", "mike", "november", "oscar", "papa"}, 0);
    const AuditReport r = audit({input("a", {t::finished(s)})});
    const AuditFigure f = figure(r, "long_hop", AuditStrategy::elimination_within, "a");
    EXPECT_NEAR(f.value, (5 * 0.2 + 0.5 + 0.5 + 0.0) / 8, 1e-12);
    EXPECT_TRUE(verdict(r, "option_elimination").passed());
}

TEST(DatasetAudit, QuestionWordsAndLengthPickAnOptionWithTiesShared) {
    data::Scenario s = t::scenario("long_hop");
    // The right option alone shares "garden" with the question; two options tie as the longest (10
    // characters), one of them right.
    t::add_mcq(s, "What do I do after the garden party?", {"tea", "mow garden", "knit", "sing", "nap indoor"}, 1);
    // No option shares a word: a uniform guess. The right option is the longest alone.
    t::add_mcq(s, "What do I crave after a run?", {"porridge bowls", "jam", "figs", "tea", "rice"}, 0);
    // "crave" is shared by a wrong option and the right one: 1/2. The longest is wrong.
    t::add_mcq(s, "What do I crave at noon?", {"crave soup", "crave bread and butter", "olives", "kale", "leeks"}, 0);
    const AuditReport r = audit({input("a", {t::finished(s)})});
    EXPECT_NEAR(figure(r, "long_hop", AuditStrategy::question_overlap, "a").value, (1.0 + 0.2 + 0.5) / 3, 1e-12);
    EXPECT_NEAR(figure(r, "long_hop", AuditStrategy::longest_option, "a").value, (0.5 + 1.0 + 0.0) / 3, 1e-12);
}

TEST(DatasetAudit, AFileWithoutRepeatedFramesHasNoRecurringFrame) {
    data::Scenario s = t::no_tell("conditional_facts_hard", 5);
    const AuditReport r = audit({input("a", {s})});
    const AuditFigure f = figure(r, "conditional_facts_hard", AuditStrategy::recurring_frames, "a");
    EXPECT_DOUBLE_EQ(f.value, 0.0);
    EXPECT_EQ(f.n, 10);
    EXPECT_TRUE(f.top_frames.empty());
    EXPECT_FALSE(f.chance.has_value());
    EXPECT_TRUE(verdict(r, "recurring_frames").passed());
}

TEST(DatasetAudit, AFrameRecursWhenFivePercentOfTheEssaysOpenASentenceOnIt) {
    // 60 essays of one sentence each, unique but for `shared` of them opening "NAME is a baker"
    // (names masked by meta.entity at the start of a sentence): 5% of 60 is 3 essays.
    for (const int shared : {2, 3}) {
        data::Scenario s = t::scenario("persona_retrieval");
        for (int i = 0; i < 60; ++i) {
            const std::string name = "Ida" + std::to_string(i);
            t::add_essay(s, i < shared ? name + " is a baker in town." : "Essay " + std::to_string(i) + " tells of " + name + ".");
            data::Probe p;
            p.id = "per-" + std::to_string(i);
            p.question = "What does " + name + " bake?";
            p.kind = data::ProbeKind::abstain;
            p.answer = "I don't have information about them.";
            p.meta = {{"entity", name}, {"is_misleading", true}};
            s.probes.push_back(p);
        }
        const AuditReport r = audit({input("a", {t::finished(s)})});
        const AuditFigure f = figure(r, "persona_retrieval", AuditStrategy::recurring_frames, "a");
        EXPECT_EQ(f.n, 60);
        EXPECT_DOUBLE_EQ(f.value, shared == 3 ? 3.0 / 60 : 0.0) << shared;
        ASSERT_EQ(f.top_frames.size(), 1u);
        EXPECT_EQ(f.top_frames[0].frame, "NAME is a baker in");
        EXPECT_EQ(f.top_frames[0].essays, shared);
        // 5% is the limit, and is within it.
        EXPECT_TRUE(verdict(r, "recurring_frames").passed());
    }
}

TEST(DatasetAudit, EveryEssayOpeningOnOneFrameFailsTheThreshold) {
    data::Scenario s = t::scenario("conditional_facts_easy");
    for (int i = 0; i < 4; ++i) {
        t::add_yes_no(s, "Would Lu" + std::to_string(i) + " dance?", i % 2 == 0, "Lu" + std::to_string(i));
        s.sessions.back().messages[0].content =
            "Everyone in the town knows Lu" + std::to_string(i) + ". Item " + std::to_string(i) + " is unique.";
    }
    const AuditReport r = audit({input("a", {t::finished(s)})});
    const AuditFigure f = figure(r, "conditional_facts_easy", AuditStrategy::recurring_frames, "a");
    EXPECT_DOUBLE_EQ(f.value, 0.5);
    EXPECT_EQ(f.n, 8);
    ASSERT_FALSE(f.top_frames.empty());
    EXPECT_EQ(f.top_frames[0].frame, "everyone in the town knows");
    EXPECT_EQ(f.top_frames[0].essays, 4);
    EXPECT_FALSE(verdict(r, "recurring_frames").passed());
}

TEST(DatasetAudit, PersonaAnswersFoundInTwoEssaysAreShared) {
    data::Scenario s = t::scenario("persona_retrieval");
    const std::string first = t::add_essay(s, "Noor will not eat olives.");
    t::add_essay(s, "Ravi grows olives and keeps a ferret named Pudding.");
    t::add_essay(s, "Lea hates figs.");
    auto direct = [&](const std::string& id, const std::string& detail) {
        data::Probe p;
        p.id = id;
        p.question = "What should I leave out?";
        p.kind = data::ProbeKind::open;
        p.answer = "Leave out the " + detail + ", please.";
        p.evidence.push_back({id + "-f1", "x", {first}, {{"entity", {"Noor"}}, {"detail", {detail}}}, {}});
        p.meta = {{"entity", "Noor"}, {"is_misleading", false}};
        s.probes.push_back(p);
    };
    direct("per-1", "olives");   // in two essays
    direct("per-2", "Pudding");  // in one
    direct("per-3", "figs");     // in one
    data::Probe trick;
    trick.id = "per-4";
    trick.question = "What should Zoe leave out?";
    trick.kind = data::ProbeKind::abstain;
    trick.answer = "olives";  // misleading probes are not counted
    s.probes.push_back(trick);
    const AuditReport r = audit({input("a", {t::finished(s)})});
    const AuditFigure f = figure(r, "persona_retrieval", AuditStrategy::shared_answers, "a");
    EXPECT_EQ(f.n, 3);
    EXPECT_NEAR(f.value, 1.0 / 3, 1e-12);
    // 33% is over the 30% threshold, which applies to Persona only.
    const AuditVerdict& v = verdict(r, "shared_answers");
    EXPECT_FALSE(v.passed());
    EXPECT_EQ(v.checked, 1);
    ASSERT_EQ(v.misses.size(), 1u);
    EXPECT_EQ(v.misses[0].dataset, "persona_retrieval");
    EXPECT_EQ(v.misses[0].strategy, AuditStrategy::shared_answers);
    EXPECT_NE(audit_text(r).find("FAIL  direct answers in 2+ essays <= 30.0% (persona_retrieval): 1 of 1 figure(s) over"),
              std::string::npos)
        << audit_text(r);
    // One shared answer in four is 25%: within.
    direct("per-5", "figs");
    const AuditReport under = audit({input("a", {t::finished(s)})});
    EXPECT_NEAR(figure(under, "persona_retrieval", AuditStrategy::shared_answers, "a").value, 0.25, 1e-12);
    EXPECT_TRUE(verdict(under, "shared_answers").passed());
}

TEST(DatasetAudit, EasyRulesNamingTheirPersonAreCounted) {
    data::Scenario s = t::scenario("conditional_facts_easy");
    auto rule = [&](const std::string& entity, const std::vector<std::string>& statements, const std::string& condition) {
        std::string essay;
        for (const auto& st : statements) essay += (essay.empty() ? "" : " ") + st;
        const std::string message = t::add_essay(s, essay);
        data::Probe p;
        p.id = "cfe-" + std::to_string(s.probes.size() + 1);
        p.question = "Would " + entity + " do it?";
        p.kind = data::ProbeKind::yes_no;
        p.answer = "Yes.";
        p.evidence.push_back({p.id + "-f1", essay, {message},
                              {{"entity", {entity, entity + "'s"}}, {"behaviour", {"bakes bread"}}, {"condition", {condition}}},
                              statements});
        p.meta = {{"entity", entity}};
        s.probes.push_back(p);
    };
    rule("Mara", {"Mara lives in Vell.", "Mara bakes bread only when it rains."}, "when it rains");
    rule("Odo", {"Odo lives in Vell.", "He bakes bread only at dawn."}, "at dawn");
    rule("Pim", {"Pim lives in Vell.", "Pim's oven bakes bread only on Sundays."}, "on Sundays");
    // No statement holds the condition or the behaviour: unknown, left out of the share.
    rule("Quin", {"Quin lives in Vell.", "He sings."}, "at noon");
    const AuditReport r = audit({input("a", {t::finished(s)})});
    const AuditFigure f = figure(r, "conditional_facts_easy", AuditStrategy::easy_rule_named, "a");
    EXPECT_EQ(f.n, 3);
    EXPECT_EQ(f.unknown, 1);
    EXPECT_NEAR(f.value, 2.0 / 3, 1e-12);
    const AuditVerdict& v = verdict(r, "easy_rules_named");
    ASSERT_EQ(v.misses.size(), 1u);
    EXPECT_EQ(v.misses[0].input, "a");
    // Hard has no such threshold.
    EXPECT_EQ(find(r, "conditional_facts_hard", AuditStrategy::easy_rule_named), nullptr);
}

TEST(DatasetAudit, TheReferenceIsPrintedBesideAndNeverJudged) {
    // The reference gives its answers away; the audited inputs do not.
    AuditInput reference = input("release", {t::just_tell("conditional_facts_easy", 5, "Rho")});
    const AuditReport r = audit({input("a", {t::no_tell("conditional_facts_easy", 4)}), input("b", {t::no_tell("conditional_facts_easy", 4, "Ulla")})},
                                reference);
    const AuditStrategyResult* within = find(r, "conditional_facts_easy", AuditStrategy::question_only_within);
    ASSERT_NE(within, nullptr);
    ASSERT_TRUE(within->reference.has_value());
    EXPECT_DOUBLE_EQ(within->reference->value, 1.0);
    // Its cross-input figure is trained on both audited inputs, which have no tell: every question
    // ties and goes to "no", half of the reference.
    const AuditStrategyResult* cross = find(r, "conditional_facts_easy", AuditStrategy::question_only_cross);
    ASSERT_NE(cross, nullptr);
    ASSERT_TRUE(cross->reference.has_value());
    EXPECT_DOUBLE_EQ(cross->reference->value, 0.5);
    EXPECT_TRUE(r.passed());
    const std::string text = audit_text(r);
    EXPECT_NE(text.find("100.0 (chance 50.0, n 10)"), std::string::npos) << text;
    EXPECT_NE(text.find("audit: PASS"), std::string::npos) << text;
    const auto j = audit_json(r);
    EXPECT_EQ(j["reference"], "release");
    EXPECT_TRUE(j["passed"].get<bool>());
    EXPECT_EQ(j["verdicts"].size(), 5u);
}

TEST(DatasetAudit, OnlyTheFiveDatasetsAreAudited) {
    data::Scenario other = t::scenario("writ_drift");
    other.suite = "writ";
    const AuditReport r = audit({input("a", {other, t::no_tell("conditional_facts_hard", 2)})});
    ASSERT_EQ(r.datasets.size(), 1u);
    EXPECT_EQ(r.datasets[0].dataset, "conditional_facts_hard");
    EXPECT_TRUE(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("'writ_drift'") == 0; }));
    // Strategies that do not apply are absent: no option strategy on a yes/no dataset.
    EXPECT_EQ(find(r, "conditional_facts_hard", AuditStrategy::longest_option), nullptr);
}

TEST(DatasetAudit, AProbeWithoutWhatItsStrategiesReadIsNamedWithItsFileAndLine) {
    data::Scenario s = t::no_tell("conditional_facts_easy", 2);
    s.probes[1].answer = "Perhaps.";
    s.probes[1].meta.erase("condition_met");
    auto r = audit_datasets({input("a", {t::scenario("long_hop"), s})});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
    EXPECT_EQ(r.error().where, "a/conditional_facts_easy.jsonl:2: probes[1].answer (cf-0002)");
    // The importer's boolean condition_met is read when the answer does not say.
    s.probes[1].meta["condition_met"] = false;
    EXPECT_TRUE(audit_datasets({input("a", {s})}).has_value());

    data::Scenario lh = pooled_long_hop("x");
    lh.probes[2].correct_choice = "F";
    auto bad = audit_datasets({input("b", {lh})});
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().where, "b/long_hop.jsonl:1: probes[2].correct_choice (lh-0003)");
    EXPECT_NE(bad.error().message.find("'F' names none of the 5 options"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace memfail::suites::memfail_suite

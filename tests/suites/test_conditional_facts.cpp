// SPDX-License-Identifier: MIT
// Conditional-Facts Easy/Hard generators, lexicons and rules: shapes, determinism, the paper's
// construction rules, and planted corruptions the rules must catch.
// Set MEMFAIL_PRINT_CONDITIONAL=<n> to print the first n Easy and Hard rows of the default seed.
#include "suite_test_util.hpp"
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/memfail/audit.hpp>
#include <memfail/suites/memfail/common.hpp>
#include <memfail/suites/memfail/conditional_lexicon.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace mf = memfail::suites::memfail_suite;
namespace cf = memfail::suites::memfail_suite::conditional;
using memfail::data::Scenario;
using memfail::data::Violation;
namespace text = memfail::text;

using memfail::testing::all_violations;
using memfail::testing::describe;
using memfail::testing::has_violation;

namespace {

const Scenario& easy() {
    static const Scenario s = mf::generate_conditional_facts_easy({});
    return s;
}

const Scenario& hard() {
    static const Scenario s = mf::generate_conditional_facts_hard({});
    return s;
}

std::vector<Violation> rule_violations(const Scenario& s, bool is_hard) {
    std::vector<Violation> out;
    mf::check_conditional_facts_rules(s, is_hard, 0, out);
    return out;
}

const Violation* find_violation(const std::vector<Violation>& vs, const std::string& field) {
    for (const auto& v : vs)
        if (v.field == field) return &v;
    return nullptr;
}

std::string meta(const memfail::data::Probe& p, const char* key) { return p.meta.at(key).get<std::string>(); }

const std::string& essay_of(const Scenario& s, std::size_t row) {
    return s.sessions[row].messages[0].content;
}

std::string essay_path(std::size_t row) {
    return "sessions[" + std::to_string(row) + "].messages[0].content";
}

// Index of the essay sentence holding the key detail `name` of row `row`.
std::size_t sentence_with(const Scenario& s, std::size_t row, const char* name) {
    const auto sentences = text::split_sentences(essay_of(s, row));
    for (const auto& d : s.probes[row].evidence[0].key_details)
        if (d.name == name)
            for (std::size_t i = 0; i < sentences.size(); ++i)
                if (text::contains_phrase(sentences[i], d.variants[0])) return i;
    return std::string::npos;
}

// The canonical variant of the key detail `name` of a row's fact (details are looked up by name:
// their order is not part of the format).
std::string detail_variant(const Scenario& s, std::size_t row, const char* name) {
    for (const auto& d : s.probes[row].evidence[0].key_details)
        if (d.name == name && !d.variants.empty()) return d.variants[0];
    ADD_FAILURE() << "row " << row << " has no key detail " << name;
    return "?";
}

std::vector<cf::Pronouns> pronoun_sets(std::uint32_t fit) {
    std::vector<cf::Pronouns> out = {cf::pronouns_for('m'), cf::pronouns_for('f')};
    if (fit & cf::fit_human) out.push_back(cf::pronouns_for('n'));
    return out;
}

// Rendered text must have no template debris and no glaring subject-verb disagreement.
void expect_clean(const std::string& rendered, const std::string& from) {
    EXPECT_EQ(rendered.find_first_of("{}[]|"), std::string::npos) << rendered << "  <- " << from;
    static const std::regex k_plural_wrong(R"(\b[Tt]hey (is|has|was|does|doesn't|hasn't|isn't)\b)");
    static const std::regex k_singular_wrong(R"(\b([Hh]e|[Ss]he) (are|have|were|do|don't|haven't|aren't)\b)");
    EXPECT_FALSE(std::regex_search(rendered, k_plural_wrong)) << rendered << "  <- " << from;
    EXPECT_FALSE(std::regex_search(rendered, k_singular_wrong)) << rendered << "  <- " << from;
}

}  // namespace

// --- lexicons -----------------------------------------------------------------------------------

TEST(ConditionalLexicon, IsLargeEnoughAndCoversAll32Types) {
    EXPECT_EQ(cf::condition_types().size(), 32u);
    EXPECT_EQ(cf::observable_condition_types().size(), 9u);
    for (const auto& t : cf::observable_condition_types()) EXPECT_TRUE(cf::is_condition_type(t)) << t;
    EXPECT_GE(cf::lexicon().behaviours.size(), 110u);
    std::map<std::string, std::size_t> per_type, pet_per_type;
    for (const auto& c : cf::lexicon().conditions) {
        EXPECT_TRUE(cf::is_condition_type(c.type)) << c.type;
        ++per_type[std::string(c.type)];
        if (c.fit & cf::fit_pet) {
            EXPECT_TRUE(cf::is_observable_condition_type(c.type)) << "pet condition of type " << c.type;
            ++pet_per_type[std::string(c.type)];
        }
    }
    for (const auto& t : cf::condition_types()) EXPECT_GE(per_type[t], 4u) << t;
    for (const auto& t : cf::observable_condition_types()) EXPECT_GE(pet_per_type[t], 3u) << t;
    EXPECT_GE(cf::lexicon().background.size(), 200u);
}

TEST(ConditionalLexicon, ConditionKeysAppearWhereTheyMustAndNowhereElse) {
    std::set<std::string> keys;
    for (const auto& c : cf::lexicon().conditions) {
        const std::string key(c.key);
        EXPECT_TRUE(keys.insert(text::normalize(key)).second) << "duplicate condition key " << key;
        EXPECT_FALSE(text::contains_phrase(c.anchor, key)) << c.anchor;
        EXPECT_EQ(cf::find_forbidden_connective(c.sentence), "") << c.sentence;
        EXPECT_EQ(cf::find_forbidden_connective(c.anchor), "") << c.anchor;
        for (const auto& p : pronoun_sets(c.fit)) {
            const std::string clause = cf::render_fragment(c.clause, "Robin", p);
            const std::string sentence = cf::render(c.sentence, "Robin", p);
            const std::string yes = cf::render(c.yes_context, "Robin", p);
            const std::string no = cf::render(c.no_context, "Robin", p);
            EXPECT_TRUE(text::contains_phrase(clause, key)) << clause << " lacks " << key;
            EXPECT_TRUE(text::contains_phrase(sentence, key)) << sentence << " lacks " << key;
            EXPECT_FALSE(text::contains_phrase(yes, key)) << yes << " gives away " << key;
            EXPECT_FALSE(text::contains_phrase(no, key)) << no << " gives away " << key;
            EXPECT_NE(yes, no);
            for (const auto& s : {clause, sentence, yes, no}) expect_clean(s, std::string(c.clause));
            EXPECT_EQ(text::split_sentences(sentence).size(), 1u) << sentence;
        }
    }
}

TEST(ConditionalLexicon, BehavioursHaveTheirKeysAndDistinctForms) {
    std::set<std::string> seen;
    for (const auto& b : cf::lexicon().behaviours) {
        EXPECT_TRUE(seen.insert(std::string(b.verb_s) + " " + std::string(b.rest)).second) << b.rest;
        for (const auto& p : pronoun_sets(b.fit)) {
            const std::string rest = cf::render_fragment(b.rest, "Robin", p);
            const std::string key = b.key.empty() ? rest : std::string(b.key);
            EXPECT_TRUE(text::contains_phrase(rest, key)) << rest << " lacks " << key;
            EXPECT_FALSE(text::contains_phrase(b.habit, key)) << b.habit;
            expect_clean(rest, std::string(b.rest));
        }
        EXPECT_TRUE(text::starts_with(b.habit, "the ")) << b.habit;
        EXPECT_EQ(cf::find_forbidden_connective(std::string(b.verb_s) + " " + std::string(b.rest)), "");
    }
}

TEST(ConditionalLexicon, FillersAndTemplatesAreUnconditional) {
    for (const auto& f : cf::lexicon().background) {
        EXPECT_EQ(cf::find_forbidden_connective(f.text), "") << f.text;
        EXPECT_FALSE(text::contains_phrase(f.text, "when")) << f.text;
        EXPECT_TRUE(f.avoid_type.empty() || cf::is_condition_type(f.avoid_type)) << f.avoid_type;
        for (const auto& p : pronoun_sets(f.fit)) {
            const std::string s = cf::render(f.text, "Robin", p);
            expect_clean(s, std::string(f.text));
            EXPECT_EQ(text::split_sentences(s).size(), 1u) << s;
        }
    }
    const auto& lex = cf::lexicon();
    for (const auto* families : {&lex.hard_behaviour_person, &lex.hard_behaviour_character, &lex.hard_behaviour_pet,
                                 &lex.hard_link})
        for (const auto& [name, templates] : *families)
            for (const auto& t : templates) EXPECT_EQ(cf::find_forbidden_connective(t), "") << name << ": " << t;
}

TEST(ConditionalLexicon, NamePoolsAreDisjoint) {
    std::set<std::string> names;
    for (const auto* pool : {&cf::lexicon().person_names, &cf::lexicon().character_names, &cf::lexicon().pet_names})
        for (const auto& n : *pool) EXPECT_TRUE(names.insert(std::string(n.name)).second) << n.name;
}

TEST(ConditionalLexicon, ForbiddenConnectivesMatchWholeWordsOnly) {
    EXPECT_EQ(cf::find_forbidden_connective("She paints, if asked."), "if");
    EXPECT_EQ(cf::find_forbidden_connective("He sings whenever it rains."), "whenever");
    EXPECT_EQ(cf::find_forbidden_connective("Unless it snows, they walk."), "unless");
    EXPECT_EQ(cf::find_forbidden_connective("The cliff is iffy in the afternoon."), "");
    EXPECT_EQ(cf::find_forbidden_connective("She is the only one after all."), "");
}

// --- generated data ------------------------------------------------------------------------------

TEST(ConditionalFacts, ShapesAndIds) {
    for (const Scenario* s : {&easy(), &hard()}) {
        const bool is_hard = s == &hard();
        EXPECT_EQ(s->dataset, is_hard ? "conditional_facts_hard" : "conditional_facts_easy");
        ASSERT_EQ(s->probes.size(), 100u);
        ASSERT_EQ(s->sessions.size(), 100u);
        for (std::size_t i = 0; i < 100; ++i) {
            const auto& p = s->probes[i];
            EXPECT_EQ(p.id.substr(0, 4), is_hard ? "cfh-" : "cfe-");
            EXPECT_EQ(p.kind, memfail::data::ProbeKind::yes_no);
            ASSERT_EQ(p.evidence.size(), 1u);
            EXPECT_EQ(p.evidence[0].message_ids, std::vector<std::string>{s->sessions[i].messages[0].id});
            EXPECT_EQ(p.after_session, s->sessions.back().id);
            const std::size_t n = text::split_sentences(essay_of(*s, i)).size();
            if (is_hard) {
                EXPECT_GE(n, 8u) << p.id;
                EXPECT_LE(n, 12u) << p.id;
            } else {
                EXPECT_GE(n, 5u) << p.id;
                EXPECT_LE(n, 8u) << p.id;
            }
            for (const char* key : {"entity", "entity_category", "behaviour", "condition_type", "condition",
                                    "condition_met", "question_context", "rule"})
                EXPECT_TRUE(p.meta.contains(key)) << p.id << " lacks meta." << key;
        }
        EXPECT_EQ(s->meta.at("dedup").at("kept").get<std::size_t>(), 100u);
        EXPECT_DOUBLE_EQ(s->meta.at("dedup").at("threshold").get<double>(), 0.8);
    }
}

TEST(ConditionalFacts, EasyAndHardShareSpecsButNotEssays) {
    for (std::size_t i = 0; i < 100; ++i) {
        const auto& e = easy().probes[i];
        const auto& h = hard().probes[i];
        for (const char* key : {"entity", "entity_category", "behaviour", "condition_type", "condition",
                                "condition_met", "question_context", "rule"})
            EXPECT_EQ(e.meta.at(key), h.meta.at(key)) << i << " " << key;
        // One question per row, worded per variant: the same unless one variant names the
        // behaviour in other words (Hard paraphrases more, and every question Easy paraphrases).
        if (e.meta.at("question_wording") == h.meta.at("question_wording")) {
            EXPECT_EQ(e.question, h.question) << i;
        } else {
            EXPECT_NE(e.question, h.question) << i;
        }
        if (e.meta.at("question_wording") == "paraphrase") {
            EXPECT_EQ(h.meta.at("question_wording"), "paraphrase") << i;
        }
        EXPECT_EQ(e.answer, h.answer);
        EXPECT_NE(essay_of(easy(), i), essay_of(hard(), i));
    }
}

TEST(ConditionalFacts, DeterministicForASeedAndDifferentAcrossSeeds) {
    const auto again = memfail::data::to_json(mf::generate_conditional_facts_easy({})).dump();
    EXPECT_EQ(again, memfail::data::to_json(easy()).dump());
    const auto again_hard = memfail::data::to_json(mf::generate_conditional_facts_hard({})).dump();
    EXPECT_EQ(again_hard, memfail::data::to_json(hard()).dump());
    const Scenario other = mf::generate_conditional_facts_easy({7});
    EXPECT_NE(memfail::data::to_json(other).dump(), again);
    EXPECT_NE(other.probes[0].question, easy().probes[0].question);
}

TEST(ConditionalFacts, PassesStructureAndRulesWithNoViolations) {
    for (std::uint64_t seed : {42ull, 1ull, 4242ull}) {
        const Scenario e = seed == 42 ? easy() : mf::generate_conditional_facts_easy({seed});
        const Scenario h = seed == 42 ? hard() : mf::generate_conditional_facts_hard({seed});
        for (const Scenario* s : {&e, &h}) {
            std::vector<Violation> out;
            memfail::data::validate_structure(*s, 0, out);
            mf::check_dataset_rules(*s, 0, out);
            EXPECT_TRUE(out.empty()) << "seed " << seed << " " << s->dataset << "\n" << describe(out);
        }
    }
}

TEST(ConditionalFacts, YesRatioQuestionsAndDistinctness) {
    std::size_t yes = 0;
    std::set<std::string> questions, behaviours, conditions, types;
    // Names are reused on purpose (name_reuse, 0.2 by default), within a category only: a reused
    // name is another entity of the same kind, never the only clue to its essay.
    std::map<std::string, std::string> category_of_name;
    for (const auto& p : easy().probes) {
        const std::string met = meta(p, "condition_met");
        yes += met == "yes";
        EXPECT_EQ(text::words(p.answer)[0], met) << p.id;
        EXPECT_TRUE(questions.insert(p.question).second) << p.question;
        const auto [it, fresh] = category_of_name.emplace(meta(p, "entity"), meta(p, "entity_category"));
        EXPECT_TRUE(fresh || it->second == meta(p, "entity_category")) << meta(p, "entity") << " changes category";
        EXPECT_TRUE(behaviours.insert(meta(p, "behaviour")).second);
        EXPECT_TRUE(conditions.insert(meta(p, "condition")).second);
        types.insert(meta(p, "condition_type"));
        EXPECT_NE(p.question.find('?'), std::string::npos) << p.question;
    }
    EXPECT_EQ(questions.size(), 100u);
    EXPECT_LT(category_of_name.size(), 100u) << "some names are reused";
    EXPECT_GE(category_of_name.size(), 65u) << "most names are fresh";
    EXPECT_GE(yes, 35u);
    EXPECT_LE(yes, 60u);
    EXPECT_GE(types.size(), 24u) << "most of the 32 condition types should be used";
}

TEST(ConditionalFacts, EssaysAreTidyProse) {
    static const std::regex k_bad_article(R"(\ba (?!one\b)[aeioAEIO])");
    for (const Scenario* s : {&easy(), &hard()})
        for (std::size_t i = 0; i < 100; ++i) {
            const std::string& essay = essay_of(*s, i);
            EXPECT_EQ(essay.find("  "), std::string::npos) << essay;
            EXPECT_EQ(essay.find_first_of("{}[]|"), std::string::npos) << essay;
            EXPECT_FALSE(std::regex_search(essay, k_bad_article)) << essay;
            const std::string name = meta(s->probes[i], "entity");
            const auto sentences = text::split_sentences(essay);
            EXPECT_TRUE(text::starts_with(sentences[0], name) ||
                        sentences[0].find(", " + name + " ") != std::string::npos)
                << "the intro names the entity: " << sentences[0];
            for (std::size_t k = 0; k < sentences.size(); ++k) {
                EXPECT_TRUE(text::ends_with(sentences[k], ".")) << sentences[k];
                EXPECT_TRUE(std::isupper(static_cast<unsigned char>(sentences[k][0]))) << sentences[k];
            }
        }
}

TEST(ConditionalFacts, PetsOnlyGetObservableConditionsAndCategoriesMix) {
    std::map<std::string, std::size_t> categories;
    for (std::uint64_t seed : {42ull, 9ull}) {
        const Scenario s = seed == 42 ? easy() : mf::generate_conditional_facts_easy({seed});
        for (const auto& p : s.probes) {
            const std::string category = meta(p, "entity_category");
            ++categories[category];
            if (category == "pet") {
                EXPECT_TRUE(cf::is_observable_condition_type(meta(p, "condition_type"))) << p.id;
                EXPECT_TRUE(meta(p, "pronoun") == "he" || meta(p, "pronoun") == "she") << p.id;
            }
        }
    }
    EXPECT_GT(categories["person"], 40u);
    EXPECT_GT(categories["character"], 20u);
    EXPECT_GT(categories["pet"], 20u);
}

TEST(ConditionalFacts, HardEssaysSpreadTheRuleWithoutConnectives) {
    for (std::size_t i = 0; i < 100; ++i) {
        EXPECT_EQ(cf::find_forbidden_connective(essay_of(hard(), i)), "") << essay_of(hard(), i);
        const std::size_t b = sentence_with(hard(), i, "behaviour");
        const std::size_t c = sentence_with(hard(), i, "condition");
        const std::size_t l = sentence_with(hard(), i, "link");
        ASSERT_NE(b, std::string::npos);
        ASSERT_NE(c, std::string::npos);
        ASSERT_NE(l, std::string::npos);
        auto apart = [](std::size_t x, std::size_t y) { return (x > y ? x - y : y - x) >= 2; };
        EXPECT_TRUE(apart(b, c) && apart(c, l) && apart(b, l)) << essay_of(hard(), i);
        // The question never restates the condition.
        EXPECT_FALSE(text::contains_phrase(hard().probes[i].question, detail_variant(hard(), i, "condition")));
    }
}

TEST(ConditionalFacts, EasyEssaysStateTheRuleInOneSentence) {
    for (std::size_t i = 0; i < 100; ++i) {
        const std::size_t e = sentence_with(easy(), i, "entity");
        const std::size_t b = sentence_with(easy(), i, "behaviour");
        const std::size_t c = sentence_with(easy(), i, "condition");
        EXPECT_EQ(b, c) << essay_of(easy(), i);
        ASSERT_NE(b, std::string::npos) << essay_of(easy(), i);
        ASSERT_NE(e, std::string::npos) << essay_of(easy(), i);
        // As the validator checks: the rule sentence names the entity, or refers to it by pronoun
        // after an earlier sentence (the intro) named it; the fact then holds that sentence too.
        const auto sentences = text::split_sentences(essay_of(easy(), i));
        const std::string entity = meta(easy().probes[i], "entity");
        const auto& statements = easy().probes[i].evidence[0].statements;
        ASSERT_FALSE(statements.empty());
        EXPECT_EQ(statements.back(), sentences[b]);
        if (text::contains_phrase(sentences[b], entity)) {
            EXPECT_EQ(statements.size(), 1u) << sentences[b];
        } else {
            EXPECT_LT(e, b) << essay_of(easy(), i);
            static const std::regex k_pronoun(R"(\b([Hh]e|[Ss]he|[Tt]hey|[Hh]is|[Hh]er|[Tt]heir|[Hh]im|[Tt]hem)\b)");
            EXPECT_TRUE(std::regex_search(sentences[b], k_pronoun)) << sentences[b];
            ASSERT_EQ(statements.size(), 2u) << sentences[b];
            EXPECT_EQ(statements[0], sentences[e]);
        }
    }
}

// --- planted corruptions ------------------------------------------------------------------------

TEST(ConditionalRules, CatchAnIfInAHardEssay) {
    Scenario s = hard();
    std::string& content = s.sessions[4].messages[0].content;
    const std::size_t end = content.find(". ");
    ASSERT_NE(end, std::string::npos);
    // "as if" and "even if" state no condition (the release's essays use both).
    content.insert(end, ", as if by magic, even if nobody watched");
    EXPECT_EQ(find_violation(rule_violations(s, true), essay_path(4)), nullptr);
    // Nor does an "if" in a sentence stating neither half of the rule (issue 31: the release's
    // "Her tail paints lazy arcs ... whenever the doorbell rings" in a Hard essay about a toy whale).
    content.insert(end, ", if the weather allowed");
    EXPECT_EQ(find_violation(rule_violations(s, true), essay_path(4)), nullptr)
        << describe(rule_violations(s, true));
    // An "if" joining behaviour and condition in one sentence states the rule: reported.
    content += " It comes down to " + detail_variant(s, 4, "behaviour") + " if " + detail_variant(s, 4, "condition") + ".";
    const auto vs = rule_violations(s, true);
    bool named = false;
    for (const auto& v : vs)
        named = named || (v.field == essay_path(4) && v.message.find("conditional connective 'if'") != std::string::npos);
    EXPECT_TRUE(named) << describe(vs);
}

TEST(ConditionalRules, CatchAdjacentRuleSentences) {
    Scenario s = hard();
    const std::size_t row = 7;
    auto sentences = text::split_sentences(essay_of(s, row));
    const std::size_t b = sentence_with(s, row, "behaviour");
    const std::size_t c = sentence_with(s, row, "condition");
    // Move the condition sentence right after the behaviour sentence.
    const std::string moved = sentences[c];
    sentences.erase(sentences.begin() + static_cast<std::ptrdiff_t>(c));
    const std::size_t b_now = c < b ? b - 1 : b;
    sentences.insert(sentences.begin() + static_cast<std::ptrdiff_t>(b_now + 1), moved);
    s.sessions[row].messages[0].content = text::join(sentences, " ");
    const auto vs = rule_violations(s, true);
    const Violation* v = find_violation(vs, essay_path(row));
    ASSERT_NE(v, nullptr) << describe(vs);
    EXPECT_NE(v->message.find("non-adjacent"), std::string::npos) << v->message;
}

TEST(ConditionalRules, CatchAMergedRuleSentenceInHard) {
    Scenario s = hard();
    const std::size_t row = 11;
    // Replace the essay's link sentence by one stating behaviour and condition together.
    const std::string behaviour = detail_variant(s, row, "behaviour");
    const std::string condition = detail_variant(s, row, "condition");
    s.sessions[row].messages[0].content += " It involves " + behaviour + " and " + condition + ".";
    const auto vs = rule_violations(s, true);
    const Violation* v = find_violation(vs, essay_path(row));
    ASSERT_NE(v, nullptr) << describe(vs);
}

TEST(ConditionalRules, CatchADuplicatedBehaviour) {
    Scenario s = easy();
    s.probes[5].meta["behaviour"] = s.probes[2].meta["behaviour"];
    const auto vs = rule_violations(s, false);
    const Violation* v = find_violation(vs, "probes[5].meta.behaviour");
    ASSERT_NE(v, nullptr) << describe(vs);
    EXPECT_NE(v->message.find("probes[2]"), std::string::npos);
}

TEST(ConditionalRules, CatchAFlippedConditionMet) {
    Scenario s = easy();
    s.probes[3].meta["condition_met"] = meta(s.probes[3], "condition_met") == "yes" ? "no" : "yes";
    const auto vs = rule_violations(s, false);
    ASSERT_NE(find_violation(vs, "probes[3].meta.condition_met"), nullptr) << describe(vs);

    // Imported tables may store the label as a boolean: checked the same way.
    Scenario imported = easy();
    imported.probes[6].meta["condition_met"] = meta(imported.probes[6], "condition_met") != "yes";
    imported.probes[8].meta["condition_met"] = meta(imported.probes[8], "condition_met") == "yes";
    const auto iv = rule_violations(imported, false);
    EXPECT_NE(find_violation(iv, "probes[6].meta.condition_met"), nullptr) << describe(iv);
    EXPECT_EQ(find_violation(iv, "probes[8].meta.condition_met"), nullptr) << describe(iv);
}

TEST(ConditionalRules, CatchAPetWithAnInternalStateAndUnknownTypes) {
    Scenario s = easy();
    std::size_t pet = s.probes.size();
    for (std::size_t i = 0; i < s.probes.size() && pet == s.probes.size(); ++i)
        if (meta(s.probes[i], "entity_category") == "pet") pet = i;
    ASSERT_LT(pet, s.probes.size());
    s.probes[pet].meta["condition_type"] = "mood";
    s.probes[0].meta["condition_type"] = "phase_of_moon";
    const auto vs = rule_violations(s, false);
    EXPECT_NE(find_violation(vs, "probes[" + std::to_string(pet) + "].meta.condition_type"), nullptr)
        << describe(vs);
    EXPECT_NE(find_violation(vs, "probes[0].meta.condition_type"), nullptr) << describe(vs);
}

TEST(ConditionalRules, CatchSentenceCountsAndGiveawayQuestions) {
    Scenario s = easy();
    s.sessions[9].messages[0].content += " One more fact. And another. And a third. And a fourth.";
    s.probes[12].question +=
        " Note that it depends on " + detail_variant(s, 12, "condition") + ".";
    s.probes.pop_back();
    const auto vs = rule_violations(s, false);
    EXPECT_NE(find_violation(vs, essay_path(9)), nullptr) << describe(vs);
    EXPECT_NE(find_violation(vs, "probes[12].question"), nullptr) << describe(vs);
    EXPECT_NE(find_violation(vs, "probes"), nullptr) << describe(vs);
}

TEST(ConditionalRules, SkipChecksWhoseInputsImportedDataLacks) {
    Scenario s = easy();
    for (auto& p : s.probes) {
        p.meta = nlohmann::json::object();
        p.evidence[0].key_details.clear();
    }
    EXPECT_TRUE(rule_violations(s, false).empty()) << describe(rule_violations(s, false));
}

// --- traits of issue 17 ---------------------------------------------------------------------------

TEST(ConditionalLexicon, BadFieldsFailWithFileAndJsonPath) {
    auto r = cf::parse_lexicon("conditional.json", R"({"names": {"person": [{"name": "Ada", "gender": "x"}]}})");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().describe().find("conditional.json"), std::string::npos) << r.error().describe();
    EXPECT_NE(r.error().describe().find("$.names.person[0].gender"), std::string::npos) << r.error().describe();
}

TEST(ConditionalLexicon, ALooseWordingThatIsTheBehaviourItselfIsRefused) {
    // The lexicon as shipped, with one field broken.
    auto doc = nlohmann::json::parse(cf::embedded_lexicon_text());
    ASSERT_TRUE(cf::parse_lexicon("conditional.json", doc.dump()));
    auto& b = doc.at("behaviours").at(3);
    b["loose"] = text::capitalize(b.at("verb").get<std::string>() + " " + b.at("rest").get<std::string>());
    auto r = cf::parse_lexicon("conditional.json", doc.dump());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().describe().find("$.behaviours[3].loose"), std::string::npos) << r.error().describe();
    doc.at("behaviours").at(3).erase("loose");
    r = cf::parse_lexicon("conditional.json", doc.dump());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().describe().find("loose"), std::string::npos) << r.error().describe();
}

// A group's members exclude each other, so a member whose situation names a sibling's key (it would
// state the condition it is asked against) is refused, and so is a group of one.
TEST(ConditionalLexicon, GroupsAreCheckedOnLoad) {
    auto doc = nlohmann::json::parse(cf::embedded_lexicon_text());
    auto& conditions = doc.at("conditions");
    std::size_t a = conditions.size(), b = conditions.size();
    for (std::size_t i = 0; i < conditions.size() && b == conditions.size(); ++i)
        for (std::size_t j = 0; j < conditions.size(); ++j)
            if (i != j && conditions[i].contains("group") && conditions[j].contains("group") &&
                conditions[i]["group"] == conditions[j]["group"] && conditions[i]["type"] == conditions[j]["type"]) {
                a = i, b = j;
                break;
            }
    ASSERT_LT(b, conditions.size());
    auto broken = doc;
    broken["conditions"][a]["yes_context"] = "Right now, " + conditions[b]["key"].get<std::string>() + ".";
    auto r = cf::parse_lexicon("conditional.json", broken.dump());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().describe().find("$.conditions[" + std::to_string(a) + "].yes_context"), std::string::npos)
        << r.error().describe();
    broken = doc;
    broken["conditions"][a]["group"] = "nobody_else";
    r = cf::parse_lexicon("conditional.json", broken.dump());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().describe().find("has no other member"), std::string::npos) << r.error().describe();
}

// The question's situation does not give the answer away: a "no" question takes a group sibling's
// yes-situation, so across seeds most situations are asked with both answers, and a "no" question's
// situation always belongs to a sibling of its own condition (same type, same group).
TEST(ConditionalTraits, SituationsAreAskedWithBothAnswers) {
    const auto& lex = cf::lexicon();
    std::map<std::string, const cf::ConditionEntry*> by_key;
    for (const auto& c : lex.conditions) by_key[c.key] = &c;
    std::map<std::string, std::set<std::string>> labels;  // situation, names masked -> answers seen
    std::size_t probes = 0, no = 0, sibling = 0, yes = 0;
    std::vector<std::pair<std::string, std::string>> asked;  // (situation, answer)
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        mf::GenerateOptions o;
        o.seed = seed;
        for (const bool hard : {false, true}) {
            const Scenario s = hard ? mf::generate_conditional_facts_hard(o) : mf::generate_conditional_facts_easy(o);
            for (const auto& p : s.probes) {
                const std::string met = p.meta.at("condition_met").get<std::string>();
                const std::string of = p.meta.at("context_of").get<std::string>();
                std::string situation = p.meta.at("question_context").get<std::string>();
                situation = text::replace_all(situation, p.meta.at("entity").get<std::string>(), "NAME");
                if (!hard) {
                    labels[situation].insert(met);
                    asked.emplace_back(situation, met);
                    ++probes;
                    yes += met == "yes";
                }
                if (of == "own") continue;
                // A sibling's situation: only for "no", of the same type and group.
                EXPECT_EQ(met, "no") << p.id;
                ASSERT_TRUE(by_key.count(of)) << of;
                const cf::ConditionEntry& sib = *by_key.at(of);
                EXPECT_EQ(sib.type, p.meta.at("condition_type").get<std::string>()) << p.id;
                EXPECT_FALSE(sib.group.empty()) << p.id;
                if (!hard) ++sibling;
            }
            for (const auto& p : s.probes) no += !hard && p.meta.at("condition_met") == "no";
        }
    }
    std::size_t both = 0;
    for (const auto& [situation, met] : asked) both += labels.at(situation).size() == 2;
    EXPECT_GE(static_cast<double>(sibling) / static_cast<double>(no), 0.75) << sibling << " of " << no;
    EXPECT_GE(static_cast<double>(both) / static_cast<double>(probes), 0.6) << both << " of " << probes;
    EXPECT_GE(yes, 8u * 46u);
    EXPECT_LE(yes, 8u * 50u);
}

// The paper's Easy states the whole rule in one sentence: the rule sentence names its person (a
// template that refers to the person twice names it first). And no sentence frame (first five
// words, names masked) opens sentences in more than 3 of the 100 essays, so no template frame is
// there for a model to learn; the openers that vary them change no rule.
TEST(ConditionalTraits, EasyRulesNameTheirPersonAndNoFrameRecurs) {
    for (std::uint64_t seed : {42ull, 1ull, 7ull}) {
        mf::GenerateOptions o;
        o.seed = seed;
        for (const bool hard : {false, true}) {
            const Scenario s = hard ? mf::generate_conditional_facts_hard(o) : mf::generate_conditional_facts_easy(o);
            std::size_t named = 0;
            std::map<std::string, std::set<std::size_t>> essays_of;
            for (std::size_t i = 0; i < s.probes.size(); ++i) {
                const auto& p = s.probes[i];
                const std::string name = p.meta.at("entity").get<std::string>();
                const auto& rule = p.evidence.front().statements.back();
                named += text::contains_phrase(rule, name);
                std::vector<std::string> names = {name};
                for (const auto& part : memfail::text::split(name, ' ')) names.push_back(part);
                const auto* m = memfail::data::MessageIndex(s).message(p.evidence.front().message_ids.front());
                ASSERT_NE(m, nullptr);
                for (const auto& sentence : text::split_sentences(m->content))
                    essays_of[mf::sentence_frame(sentence, names)].insert(i);
                if (!hard) {
                    // The rule keeps its qualifier and its person.
                    EXPECT_TRUE(text::contains_phrase(rule, "only") || text::contains_phrase(rule, "except")) << rule;
                }
            }
            if (!hard) {
                EXPECT_GE(named, 90u) << "seed " << seed;
            }
            for (const auto& [frame, essays] : essays_of) {
                EXPECT_LE(essays.size(), 3u) << frame << " seed " << seed;
            }
        }
    }
}

TEST(FrameVariation, VariesOnlyWhatWouldRecur) {
    mf::FrameVariation frames(2);
    memfail::Rng rng(7);
    const std::vector<std::string> essay = {"Ada keeps bees on the roof of the old mill.", "The local lord of the valley admires her."};
    for (int i = 0; i < 2; ++i) {
        const auto v = frames.vary(essay, {"Ada"}, rng);
        EXPECT_EQ(v, essay) << i;  // under the limit: as written
        frames.commit(v, {"Ada"});
    }
    const auto third = frames.vary(essay, {"Ada"}, rng);
    ASSERT_EQ(third.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_NE(third[i], essay[i]);
        EXPECT_NE(mf::sentence_frame(third[i], {"Ada"}), mf::sentence_frame(essay[i], {"Ada"}));
        // The sentence itself follows its opener, a name keeping its capital.
        EXPECT_NE(third[i].find(i == 0 ? ", Ada keeps bees" : ", the local lord"), std::string::npos) << third[i];
    }
    EXPECT_EQ(mf::sentence_frame("Truth be told, Ada keeps bees.", {"Ada"}), "truth be told NAME keeps");
}

TEST(ConditionalTraits, RowsRespectTheCompatibilityTable) {
    const auto& lex = cf::lexicon();
    for (const bool hard : {false, true}) {
        const Scenario s = hard ? mf::generate_conditional_facts_hard(mf::GenerateOptions{}) : mf::generate_conditional_facts_easy(mf::GenerateOptions{});
        for (const auto& p : s.probes) {
            const std::string kind = p.meta.at("behaviour_kind").get<std::string>();
            EXPECT_TRUE(lex.compatible(kind, p.meta.at("condition_type").get<std::string>())) << p.id << " " << kind;
        }
    }
}

TEST(ConditionalTraits, QuestionsHoldNoAnswerDetail) {
    for (const std::uint64_t seed : {1ull, 42ull, 7777ull}) {
        mf::GenerateOptions o;
        o.seed = seed;
        const Scenario s = mf::generate_conditional_facts_hard(o);
        for (const auto& p : s.probes) {
            const std::string q = text::normalize(p.question);
            for (const auto& d : p.evidence[0].key_details) {
                if (d.name == "condition" || d.name == "link") {
                    EXPECT_FALSE(text::normalized_contains(q, text::normalize(d.variants[0]))) << p.question;
                }
            }
            // Nor does it state the rule ("only after ten at night"). A bare "only" is no answer
            // detail: situations may say it in passing ("only a third of the way through").
            EXPECT_FALSE(text::normalized_contains(q, text::normalize("only " + meta(p, "condition")))) << p.question;
        }
    }
}

TEST(ConditionalTraits, EssaysUsePronounsAfterTheIntroAndParaphraseSomeQuestions) {
    const Scenario s = mf::generate_conditional_facts_hard(mf::GenerateOptions{});
    std::size_t pronoun_rules = 0, paraphrased = 0;
    std::set<std::string> names;
    for (const auto& p : s.probes) {
        const std::string entity = p.meta.at("entity").get<std::string>();
        names.insert(entity);
        // After the intro (statements[0]) the behaviour and link sentences refer to the entity by
        // pronoun or role only; the condition sentence names it (or its home, "Mango's home") only
        // where its wording in the lexicon does. The entity detail's variants are the name and
        // its possessive.
        const auto& statements = p.evidence[0].statements;
        ASSERT_EQ(statements.size(), 4u) << p.id;
        auto names_entity = [&](const std::string& sentence) {
            return text::contains_phrase(sentence, entity) || text::contains_phrase(sentence, entity + "'s");
        };
        EXPECT_FALSE(names_entity(statements[1])) << statements[1];
        EXPECT_FALSE(names_entity(statements[3])) << statements[3];
        if (!names_entity(statements[2])) ++pronoun_rules;
        if (p.meta.at("question_wording") == "paraphrase") {
            ++paraphrased;
            for (const auto& d : p.evidence[0].key_details) {
                if (d.name == "behaviour") {
                    EXPECT_FALSE(text::normalized_contains(text::normalize(p.question), text::normalize(d.variants[0])))
                        << p.question;
                }
            }
        }
    }
    // About half of the lexicon's condition sentences name the entity: the other rules hang on
    // the intro alone.
    EXPECT_GE(pronoun_rules, 35u);
    EXPECT_GE(paraphrased, 3u);
    EXPECT_LT(names.size(), 100u) << "names are reused across rows";
    EXPECT_TRUE(s.meta.contains("settings"));
}

TEST(ConditionalTraits, HardQuestionsMostlyRestateTheBehaviourLooselyKeepingSomeOfItsWords) {
    const Scenario s = mf::generate_conditional_facts_hard(mf::GenerateOptions{});
    const Scenario e = mf::generate_conditional_facts_easy(mf::GenerateOptions{});
    std::size_t loose = 0;
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const auto& p = s.probes[i];
        EXPECT_NE(e.probes[i].meta.at("question_wording"), "loose") << "Easy keeps the essay's words by default";
        if (p.meta.at("question_wording") != "loose") continue;
        ++loose;
        // Not the essay's wording of the behaviour (meta.behaviour is "brews elaborate pots of
        // smoky tea"; the question's verb is in base form, so compare from the second word on)...
        const std::string behaviour = p.meta.at("behaviour").get<std::string>();
        const std::string q = text::normalize(p.question);
        const std::string rest = text::normalize(behaviour.substr(behaviour.find(' ') + 1));
        EXPECT_FALSE(text::normalized_contains(q, rest)) << p.question << " | " << behaviour;
        // ...but a content word of it survives, perhaps in another number ("a fox" for "foxes",
        // "the top stair" for "the top step of the staircase"), so the question still points at
        // the habit.
        const auto same_word = [](const std::string& a, const std::string& b) {
            const std::size_t shorter = std::min(a.size(), b.size());
            if (shorter < 3) return false;
            std::size_t common = 0;
            while (common < shorter && a[common] == b[common]) ++common;
            return common >= std::min<std::size_t>(4, shorter);
        };
        std::size_t shared = 0;
        for (const auto& w : text::words(rest)) {
            if (text::is_stopword(w)) continue;
            for (const auto& v : text::words(q)) shared += same_word(w, v);
        }
        EXPECT_GE(shared, 1u) << p.question << " | " << behaviour;
    }
    // 0.2 of the 85% not paraphrased: about 17 of 100.
    EXPECT_GE(loose, 8u);
    EXPECT_LE(loose, 28u);

    // The share is a setting: none at 0, and all of the unparaphrased questions at 1.
    for (const char* value : {"0", "1"}) {
        mf::GenerateOptions o;
        ASSERT_TRUE(mf::apply_settings({{"conditional.hard_loose_share", value}}, o));
        std::size_t n = 0, essay = 0;
        for (const auto& p : mf::generate_conditional_facts_hard(o).probes) {
            n += p.meta.at("question_wording") == "loose";
            essay += p.meta.at("question_wording") == "essay";
        }
        if (std::string(value) == "0") EXPECT_EQ(n, 0u);
        else EXPECT_EQ(essay, 0u);
    }
}

TEST(ConditionalTraits, EasyEssaysNameTheEntityInTheRuleAndSomeOtherSentences) {
    // The release's Easy essays name their entity in 2-4 sentences, the rule sentence among them;
    // Hard essays name it in the intro (and, where the lexicon's wording does, in the condition).
    const Scenario s = mf::generate_conditional_facts_easy(mf::GenerateOptions{});
    std::size_t named_rules = 0, mentions = 0;
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const auto& p = s.probes[i];
        const std::string entity = p.meta.at("entity").get<std::string>();
        const auto& statements = p.evidence[0].statements;
        const std::string& rule = statements.back();
        if (text::contains_phrase(rule, entity)) ++named_rules;
        for (const auto& sentence : text::split_sentences(essay_of(s, i)))
            mentions += text::contains_phrase(sentence, entity) || text::contains_phrase(sentence, entity + "'s");
    }
    EXPECT_GE(named_rules, 40u);
    EXPECT_GE(mentions, 220u) << "about 2.5 sentences per essay name the entity";

    mf::GenerateOptions none;
    ASSERT_TRUE(mf::apply_settings({{"conditional.easy_rule_named_share", "0"}, {"conditional.easy_name_share", "0"}}, none));
    std::size_t plain = 0;
    const Scenario t = mf::generate_conditional_facts_easy(none);
    for (std::size_t i = 0; i < t.probes.size(); ++i)
        for (const auto& sentence : text::split_sentences(essay_of(t, i)))
            plain += text::contains_phrase(sentence, t.probes[i].meta.at("entity").get<std::string>());
    EXPECT_LT(plain, 130u) << "without naming, the intro (and the one lexicon template that names) remain";
}

TEST(ConditionalTraits, ValidatorPassesForSeveralSeedsAndSettings) {
    for (const std::uint64_t seed : {3ull, 42ull, 2024ull}) {
        mf::GenerateOptions o;
        o.seed = seed;
        ASSERT_TRUE(mf::apply_settings({{"conditional.paraphrase_share", "0.8"}, {"conditional.name_reuse", "0.4"},
                                    {"conditional.hard_max_sentences", "12"}, {"conditional.easy_loose_share", "0.5"},
                                    {"conditional.easy_name_share", "0.9"}}, o));
        for (const bool hard : {false, true}) {
            const Scenario s = hard ? mf::generate_conditional_facts_hard(o) : mf::generate_conditional_facts_easy(o);
            std::vector<Violation> v;
            mf::check_conditional_facts_rules(s, hard, 1, v);
            EXPECT_TRUE(v.empty()) << seed << ": " << (v.empty() ? "" : v[0].field + " " + v[0].message);
        }
    }
    mf::GenerateOptions o;
    EXPECT_FALSE(mf::apply_settings({{"conditional.hard_min_sentences", "7"}}, o));
    EXPECT_FALSE(mf::apply_settings({{"conditional.name_reuse", "2"}}, o));
    EXPECT_FALSE(mf::apply_settings({{"conditional.hard_loose_share", "-0.1"}}, o));
    const auto typo = mf::apply_settings({{"conditional.hard_lose_share", "0.5"}}, o);
    ASSERT_FALSE(typo);
    EXPECT_NE(typo.error().describe().find("conditional.hard_loose_share"), std::string::npos) << typo.error().describe();
}

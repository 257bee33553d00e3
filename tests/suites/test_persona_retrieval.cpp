// SPDX-License-Identifier: MIT
// Persona-Retrieval lexicon, generator and rules: pools, shapes, determinism, planted corruptions.
// Set MEMFAIL_PRINT_SAMPLES=<n> to print the first n essays (with probes) of the default seed.
#include "suite_test_util.hpp"
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/persona_lexicon.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace mf = memfail::suites::memfail_suite;
namespace pr = memfail::suites::memfail_suite::persona;
using memfail::data::Scenario;
using memfail::data::Violation;
namespace text = memfail::text;

using memfail::testing::all_violations;
using memfail::testing::describe;
using memfail::testing::has_violation;

namespace {

const Scenario& default_scenario() {
    static const Scenario s = mf::generate_persona_retrieval({});
    return s;
}

bool misleading(const memfail::data::Probe& p) { return p.meta["is_misleading"].get<bool>(); }

std::size_t first_probe(const Scenario& s, bool want_misleading) {
    for (std::size_t i = 0; i < s.probes.size(); ++i)
        if (misleading(s.probes[i]) == want_misleading) return i;
    return s.probes.size();
}

}  // namespace

// ---- Lexicon ----

TEST(PersonaLexicon, NamePoolsAreLargeDistinctAndDisjoint) {
    const auto& entities = pr::entity_names();
    const auto& distractors = pr::distractor_names();
    EXPECT_GE(entities.size(), 110u);
    EXPECT_GE(distractors.size(), 60u);
    std::set<std::string> firsts, lasts, entity_tokens;
    for (const auto& n : entities) {
        EXPECT_TRUE(firsts.insert(n.first).second) << "first name reused: " << n.first;
        EXPECT_TRUE(lasts.insert(n.last).second) << "last name reused: " << n.last;
        for (const auto& w : text::words(n.full())) entity_tokens.insert(w);
    }
    std::set<std::string> distractor_full;
    for (const auto& d : distractors) {
        EXPECT_TRUE(distractor_full.insert(d.full()).second) << d.full();
        for (const auto& w : text::words(d.full()))
            EXPECT_FALSE(entity_tokens.count(w)) << d.full() << " shares '" << w << "' with an entity";
    }
    std::size_t female = 0;
    for (const auto& n : entities) female += n.female;
    EXPECT_GE(female, entities.size() / 3);
    EXPECT_LE(female, 2 * entities.size() / 3);
}

TEST(PersonaLexicon, FlavorsAndFactTypesAreVaried) {
    EXPECT_GE(pr::flavors().size(), 30u);
    std::set<std::string> professions;
    for (const auto& f : pr::flavors()) {
        EXPECT_TRUE(professions.insert(f.profession).second) << f.profession;
        EXPECT_GE(f.sentences.size(), 3u) << f.profession;
    }
    EXPECT_GE(pr::fact_types().size(), 8u);
    for (const auto& t : pr::fact_types()) {
        EXPECT_GE(t.instances.size(), 8u) << t.id;
        EXPECT_GE(t.sentences.size(), 2u) << t.id;
        for (const auto& q : t.questions) EXPECT_NE(q.find("{name}"), std::string::npos) << q;
    }
}

TEST(PersonaLexicon, EveryFactSentenceNamesThePersonAndStatesItsDetail) {
    const pr::PersonName she{"Aiko", "Testperson", true};
    const pr::PersonName he{"Kenji", "Testperson", false};
    for (const auto& t : pr::fact_types())
        for (const auto& inst : t.instances)
            for (const pr::PersonName* person : {&she, &he}) {
                pr::Bindings b;
                b.person = person;
                b.fact = &inst;
                for (const auto& tmpl : t.sentences) {
                    const std::string s = pr::render(tmpl, b);
                    EXPECT_EQ(s.find('{'), std::string::npos) << s;
                    EXPECT_TRUE(text::contains_phrase(s, person->first)) << s;
                    EXPECT_EQ(text::split_sentences(s).size(), 1u) << s;
                    for (const auto& d : inst.details) EXPECT_TRUE(text::contains_phrase(s, d)) << t.id << ": " << s;
                    // Pronouns agree with the person.
                    const auto w = text::words(s);
                    const bool has_wrong = std::find(w.begin(), w.end(), person->female ? "his" : "her") != w.end() ||
                                           std::find(w.begin(), w.end(), person->female ? "he" : "she") != w.end();
                    EXPECT_FALSE(has_wrong) << s;
                }
                for (const auto& q : t.questions) {
                    // Possessives would hide the name from normalised matching ("Aiko's" -> "aikos").
                    const std::string rendered = pr::render(q, b);
                    EXPECT_EQ(rendered.find('{'), std::string::npos) << rendered;
                    EXPECT_TRUE(text::contains_phrase(rendered, person->full())) << rendered;
                }
                EXPECT_EQ(pr::render(t.answer, b).find('{'), std::string::npos);
            }
}

TEST(PersonaLexicon, OrdinarySentencesRenderCleanly) {
    const pr::PersonName she{"Aiko", "Testperson", true};
    for (const auto& slot : pr::ordinary_slots())
        for (const auto& fill : slot.fillers) {
            pr::Bindings b;
            b.person = &she;
            b.fill = fill;
            const std::string s = pr::render(slot.tmpl, b);
            EXPECT_EQ(s.find('{'), std::string::npos) << s;
            EXPECT_EQ(text::split_sentences(s).size(), 1u) << s;
        }
}

// ---- Generator ----

TEST(PersonaRetrieval, SameSeedSameJsonDifferentSeedDiffers) {
    const auto a = memfail::data::to_json(mf::generate_persona_retrieval({7})).dump();
    const auto b = memfail::data::to_json(mf::generate_persona_retrieval({7})).dump();
    const auto c = memfail::data::to_json(mf::generate_persona_retrieval({8})).dump();
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}

TEST(PersonaRetrieval, HasHundredEssaysWithThreeProbesEach) {
    const Scenario& s = default_scenario();
    EXPECT_EQ(s.dataset, "persona_retrieval");
    ASSERT_EQ(s.sessions.size(), 100u);
    ASSERT_EQ(s.probes.size(), 300u);
    std::size_t words = 0;
    for (std::size_t i = 0; i < s.sessions.size(); ++i) {
        ASSERT_EQ(s.sessions[i].messages.size(), 1u);
        const std::string& essay = s.sessions[i].messages[0].content;
        const std::size_t n = text::split_sentences(essay).size();
        EXPECT_GE(n, 10u);
        EXPECT_LE(n, 15u);
        words += text::words(essay).size();
        for (std::size_t k = 0; k < 3; ++k) {
            const auto& p = s.probes[3 * i + k];
            char id[64];
            std::snprintf(id, sizeof id, "per-%03zu-q%zu", i + 1, k + 1);
            EXPECT_EQ(p.id, id);
            EXPECT_EQ(p.meta["row"].get<std::size_t>(), i + 1);
            // The essay is about the row's entity.
            EXPECT_TRUE(text::contains_phrase(essay, p.meta["entity"].get<std::string>())) << p.id;
        }
    }
    // The paper's essays average about 230 words.
    const double mean = static_cast<double>(words) / 100.0;
    EXPECT_GE(mean, 180.0);
    EXPECT_LE(mean, 300.0);
}

TEST(PersonaRetrieval, GeneratedDataHasNoViolations) {
    for (std::uint64_t seed : {42ULL, 1ULL, 2026ULL}) {
        const Scenario s = mf::generate_persona_retrieval({seed});
        const auto vs = all_violations(s);
        EXPECT_TRUE(vs.empty()) << "seed " << seed << ":\n" << describe(vs);
    }
}

TEST(PersonaRetrieval, AboutHalfTheProbesAreMisleading) {
    std::size_t mis = 0, total = 0;
    for (std::uint64_t seed : {1ULL, 2ULL, 3ULL, 4ULL}) {
        const Scenario s = mf::generate_persona_retrieval({seed});
        for (const auto& p : s.probes) {
            mis += misleading(p);
            ++total;
        }
    }
    const double share = static_cast<double>(mis) / static_cast<double>(total);
    EXPECT_GT(share, 0.44);
    EXPECT_LT(share, 0.56);
}

TEST(PersonaRetrieval, DistractorsAreStrangersToEveryEssay) {
    const Scenario& s = default_scenario();
    std::set<std::string> essay_words, entities;
    for (const auto& session : s.sessions)
        for (const auto& w : text::words(session.messages[0].content)) essay_words.insert(w);
    for (const auto& p : s.probes) entities.insert(p.meta["entity"].get<std::string>());
    EXPECT_EQ(entities.size(), 100u);
    for (const auto& p : s.probes) {
        if (!misleading(p)) continue;
        const std::string d = p.meta["distractor"].get<std::string>();
        EXPECT_FALSE(entities.count(d)) << d;
        for (const auto& w : text::words(d)) EXPECT_FALSE(essay_words.count(w)) << d << " appears in an essay";
        EXPECT_EQ(p.answer, "I don't have information about " + d + ".");
        EXPECT_TRUE(p.evidence.empty());
    }
}

TEST(PersonaRetrieval, AnEntitysNameAppearsOnlyInItsOwnEssay) {
    const Scenario& s = default_scenario();
    std::vector<std::set<std::string>> session_words;
    for (const auto& session : s.sessions) {
        const auto w = text::words(session.messages[0].content);
        session_words.emplace_back(w.begin(), w.end());
    }
    for (std::size_t i = 0; i < s.sessions.size(); ++i) {
        const std::string entity = s.probes[3 * i].meta["entity"].get<std::string>();
        for (const auto& t : text::words(entity))
            for (std::size_t j = 0; j < s.sessions.size(); ++j)
                EXPECT_TRUE(j == i || !session_words[j].count(t)) << entity << " leaks into sessions[" << j << "]";
    }
}

TEST(PersonaRetrieval, SlotsOfARowAskAboutDifferentFactsAndDistractors) {
    const Scenario& s = default_scenario();
    std::set<std::string> questions;
    for (std::size_t row = 0; row < 100; ++row) {
        std::set<std::string> types, distractors;
        for (std::size_t k = 0; k < 3; ++k) {
            const auto& p = s.probes[3 * row + k];
            EXPECT_TRUE(types.insert(p.meta["fact_type"].get<std::string>()).second) << p.id;
            if (misleading(p)) {
                EXPECT_TRUE(distractors.insert(p.meta["distractor"].get<std::string>()).second);
            }
            EXPECT_TRUE(questions.insert(p.question).second) << "repeated question: " << p.question;
        }
    }
}

TEST(PersonaRetrieval, DirectProbesCiteTheSentenceStatingTheirDetail) {
    const Scenario& s = default_scenario();
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const auto& p = s.probes[i];
        if (misleading(p)) continue;
        ASSERT_EQ(p.evidence.size(), 1u);
        const auto& f = p.evidence[0];
        EXPECT_EQ(f.message_ids, std::vector<std::string>{s.sessions[i / 3].messages[0].id});
        EXPECT_NE(s.sessions[i / 3].messages[0].content.find(f.text), std::string::npos) << f.text;
        ASSERT_EQ(f.key_details.size(), 2u);
        EXPECT_EQ(f.key_details[0].name, "entity");
        EXPECT_EQ(f.key_details[1].name, "detail");
        EXPECT_TRUE(text::contains_phrase(p.answer, f.key_details[1].variants[0]) ||
                    text::contains_phrase(p.question, f.key_details[1].variants[0]))
            << p.question << " / " << p.answer;
    }
}

TEST(PersonaRetrieval, RecordsTheEssayDedup) {
    const Scenario& s = default_scenario();
    ASSERT_TRUE(s.meta.contains("dedup"));
    EXPECT_EQ(s.meta["dedup"]["key"], "essay");
    EXPECT_DOUBLE_EQ(s.meta["dedup"]["threshold"].get<double>(), 0.7);
    EXPECT_EQ(s.meta["dedup"]["kept"].get<std::size_t>(), 100u);
}

// ---- Rules catch planted corruptions ----

TEST(PersonaRetrievalRules, CatchADistractorThatIsAStoredEntity) {
    Scenario s = default_scenario();
    const std::size_t i = first_probe(s, true);
    ASSERT_LT(i, s.probes.size());
    // Name another row's entity as the distractor, in the metadata and the question alike.
    const std::string old_d = s.probes[i].meta["distractor"].get<std::string>();
    const std::string stored = s.probes[(i + 30) % s.probes.size()].meta["entity"].get<std::string>();
    s.probes[i].meta["distractor"] = stored;
    s.probes[i].question = text::replace_all(s.probes[i].question, old_d, stored);
    EXPECT_TRUE(has_violation(all_violations(s), "probes[" + std::to_string(i) + "].meta.distractor"));
}

TEST(PersonaRetrievalRules, CatchADistractorSharingANameWithAnEntity) {
    Scenario s = default_scenario();
    const std::size_t i = first_probe(s, true);
    ASSERT_LT(i, s.probes.size());
    const std::string first = text::split(s.probes[0].meta["entity"].get<std::string>(), ' ')[0];
    s.probes[i].meta["distractor"] = first + " Nobodyknows";
    EXPECT_TRUE(has_violation(all_violations(s), "probes[" + std::to_string(i) + "].meta.distractor"));
}

TEST(PersonaRetrievalRules, CatchABrokenDirectAndMisleadingProbe) {
    Scenario s = default_scenario();
    const std::size_t d = first_probe(s, false);
    const std::size_t m = first_probe(s, true);
    ASSERT_LT(d, s.probes.size());
    ASSERT_LT(m, s.probes.size());
    s.probes[d].question = "What does this person collect?";
    s.probes[m].kind = memfail::data::ProbeKind::open;
    const auto vs = all_violations(s);
    EXPECT_TRUE(has_violation(vs, "probes[" + std::to_string(d) + "].question"));
    EXPECT_TRUE(has_violation(vs, "probes[" + std::to_string(m) + "].kind"));
}

TEST(PersonaRetrievalRules, CatchAShortEssayAndAReusedDistractor) {
    Scenario s = default_scenario();
    s.sessions[4].messages[0].content = "Too short. Far too short.";
    // Make every slot of row 1 misleading with the same distractor.
    for (std::size_t k = 0; k < 3; ++k) {
        auto& p = s.probes[k];
        p.meta["is_misleading"] = true;
        p.meta["distractor"] = "Cormac Doyle";
        p.kind = memfail::data::ProbeKind::abstain;
        p.evidence.clear();
        p.question = "What does Cormac Doyle collect?";
    }
    const auto vs = all_violations(s);
    EXPECT_TRUE(has_violation(vs, "sessions[4].messages[0].content"));
    EXPECT_TRUE(has_violation(vs, "probes[1].meta.distractor"));
}

TEST(PersonaRetrievalRules, CatchALopsidedMisleadingShare) {
    Scenario s = default_scenario();
    for (auto& p : s.probes) {
        if (misleading(p)) continue;
        p.meta["is_misleading"] = true;
        p.meta["distractor"] = "Cormac Doyle";
        p.kind = memfail::data::ProbeKind::abstain;
        p.evidence.clear();
    }
    EXPECT_TRUE(has_violation(all_violations(s), "probes"));
}

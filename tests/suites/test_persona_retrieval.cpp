// SPDX-License-Identifier: MIT
// Persona-Retrieval lexicon, generator and rules: pools, shapes, determinism, planted corruptions.
// Set MEMFAIL_PRINT_SAMPLES=<n> to print the first n essays (with probes) of the default seed.
#include "suite_test_util.hpp"
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/memfail/audit.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/persona_lexicon.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <nlohmann/json.hpp>

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

mf::GenerateOptions with_seed(std::uint64_t seed) {
    mf::GenerateOptions o;
    o.seed = seed;
    return o;
}

// The direct probes of a scenario, with the essay each cites.
struct Direct {
    const memfail::data::Probe* probe;
    const std::string* essay;
};
std::vector<Direct> direct_probes(const Scenario& s) {
    std::vector<Direct> out;
    for (std::size_t i = 0; i < s.probes.size(); ++i)
        if (!s.probes[i].meta["is_misleading"].get<bool>())
            out.push_back({&s.probes[i], &s.sessions[i / 3].messages[0].content});
    return out;
}

// The sentences stating a direct probe's fact: its statements without the essay's opening.
std::vector<std::string> fact_statements(const Direct& d) {
    const auto& f = d.probe->evidence.at(0);
    const std::string opening = text::split_sentences(*d.essay).at(0);
    std::vector<std::string> out;
    for (const auto& st : f.statements)
        if (st != opening) out.push_back(st);
    return out;
}

bool misleading(const memfail::data::Probe& p) { return p.meta["is_misleading"].get<bool>(); }

std::size_t first_probe(const Scenario& s, bool want_misleading) {
    for (std::size_t i = 0; i < s.probes.size(); ++i)
        if (misleading(s.probes[i]) == want_misleading) return i;
    return s.probes.size();
}

}  // namespace

// ---- Lexicon ----

TEST(PersonaLexicon, NamePoolsAreDistinctAndDisjoint) {
    const auto& lex = pr::lexicon();
    EXPECT_GE(lex.entity_names.size(), 100u);  // enough for distinct_names
    EXPECT_GE(lex.distractor_names.size(), 60u);
    std::set<std::string> firsts, lasts, entity_tokens;
    for (const auto& n : lex.entity_names) {
        EXPECT_TRUE(firsts.insert(n.first).second) << "first name reused: " << n.first;
        EXPECT_TRUE(lasts.insert(n.last).second) << "last name reused: " << n.last;
        for (const auto& w : text::words(n.full())) entity_tokens.insert(w);
    }
    std::set<std::string> distractor_full;
    for (const auto& d : lex.distractor_names) {
        EXPECT_TRUE(distractor_full.insert(d.full()).second) << d.full();
        for (const auto& w : text::words(d.full()))
            EXPECT_FALSE(entity_tokens.count(w)) << d.full() << " shares '" << w << "' with an entity";
    }
    // The default pool (the first 30) is half women, half men.
    std::size_t female = 0;
    for (std::size_t i = 0; i < 30; ++i) female += lex.entity_names[i].female;
    EXPECT_EQ(female, 15u);
}

TEST(PersonaLexicon, FlavorsAndFactTypesAreVaried) {
    const auto& lex = pr::lexicon();
    EXPECT_EQ(lex.flavors.size(), 30u);
    std::set<std::string> professions;
    for (const auto& f : lex.flavors) {
        EXPECT_TRUE(professions.insert(f.profession).second) << f.profession;
        EXPECT_GE(f.sentences.size(), 3u) << f.profession;
    }
    EXPECT_GE(lex.fillers.size(), 10u);
    EXPECT_GE(lex.fact_types.size(), 10u);
    for (const auto& t : lex.fact_types) {
        EXPECT_GE(t.instances.size(), 8u) << t.id;
        EXPECT_GE(t.sentences.size(), 2u) << t.id;
        EXPECT_GE(t.pairs.size(), 1u) << t.id;
        EXPECT_GE(t.questions.size(), 2u) << t.id;
    }
}

TEST(PersonaLexicon, FactTemplatesReferToThePersonAsToldAndStateTheDetail) {
    const pr::PersonName she{"Aiko", "Testperson", true};
    const pr::PersonName he{"Kenji", "Testperson", false};
    const auto& lex = pr::lexicon();
    for (const auto& flavor : lex.flavors)
        for (const auto& t : lex.fact_types)
            for (const auto& inst : t.instances)
                for (const pr::PersonName* person : {&she, &he})
                    for (auto ref : {pr::Reference::name, pr::Reference::pronoun, pr::Reference::role}) {
                        pr::Bindings b;
                        b.person = person;
                        b.flavor = &flavor;
                        b.fact = &inst;
                        b.reference = ref;
                        std::vector<std::vector<std::string>> forms;
                        for (const auto& tmpl : t.sentences) forms.push_back({pr::render(tmpl, b)});
                        for (const auto& pair : t.pairs) forms.push_back({pr::render(pair[0], b), pr::render(pair[1], b)});
                        for (const auto& form : forms) {
                            const std::string all = text::join(form, " ");
                            ASSERT_EQ(all.find('{'), std::string::npos) << all;
                            for (const auto& s : form) EXPECT_EQ(text::split_sentences(s).size(), 1u) << s;
                            // The first sentence states the key; the person is named only by name.
                            for (const auto& d : inst.details)
                                EXPECT_TRUE(text::contains_phrase(form[0], d)) << t.id << ": " << form[0];
                            EXPECT_EQ(text::contains_phrase(all, person->first), ref == pr::Reference::name) << all;
                            const auto w = text::words(all);
                            const bool wrong = std::find(w.begin(), w.end(), person->female ? "his" : "her") != w.end() ||
                                               std::find(w.begin(), w.end(), person->female ? "he" : "she") != w.end();
                            EXPECT_FALSE(wrong) << all;
                        }
                    }
}

TEST(PersonaLexicon, QuestionsNameThePersonAndNeverGiveAwayTheAnswer) {
    const pr::PersonName she{"Aiko", "Testperson", true};
    for (const auto& flavor : pr::lexicon().flavors)
    for (const auto& t : pr::lexicon().fact_types)
        for (const auto& inst : t.instances) {
            pr::Bindings b;
            b.person = &she;
            b.fact = &inst;
            b.flavor = &flavor;
            for (const auto& q : t.questions) {
                const std::string rendered = pr::render(q, b);
                EXPECT_EQ(rendered.find('{'), std::string::npos) << rendered;
                EXPECT_TRUE(text::contains_phrase(rendered, she.full())) << rendered;
                for (const auto& d : inst.details) EXPECT_FALSE(text::contains_phrase(rendered, d)) << rendered;
            }
            const std::string answer = pr::render(t.answer, b);
            EXPECT_EQ(answer.find('{'), std::string::npos) << answer;
            for (const auto& d : inst.details) EXPECT_TRUE(text::contains_phrase(answer, d)) << answer;
        }
}

TEST(PersonaLexicon, OpeningsAndFillersRenderCleanly) {
    const pr::PersonName she{"Aiko", "Testperson", true};
    const auto& lex = pr::lexicon();
    for (const auto& flavor : lex.flavors) {
        pr::Bindings b;
        b.person = &she;
        b.flavor = &flavor;
        std::vector<std::string> all;
        for (const auto& t : lex.intros) {
            const std::string s = pr::render(t, b);
            EXPECT_TRUE(text::contains_phrase(s, she.full())) << s;
            all.push_back(s);
        }
        for (auto ref : {pr::Reference::pronoun, pr::Reference::role}) {
            b.reference = ref;
            for (const auto& t : lex.fillers) all.push_back(pr::render(t, b));
            for (const auto& t : flavor.sentences) all.push_back(pr::render(t, b));
        }
        for (const auto& s : all) {
            EXPECT_EQ(s.find('{'), std::string::npos) << s;
            EXPECT_EQ(text::split_sentences(s).size(), 1u) << s;
        }
    }
}

namespace {

// A minimal lexicon: one person, one distractor, one flavour, and the given fact types.
nlohmann::json small_lexicon(nlohmann::json fact_types) {
    return {{"entity_names", {{{"name", "Ada Lovelace"}, {"pronoun", "she"}}}},
            {"distractor_names", {{{"name", "Bo Nobody"}, {"pronoun", "he"}}}},
            {"intros", {"{Name} is {profession}."}},
            {"fillers", {"{Subj} works at {place}."}},
            {"flavors",
             {{{"profession", "a baker"}, {"role", "the baker"}, {"place", "the bakery"}, {"interest", "rowing"},
               {"sentences", {"Bread."}}}}},
            {"fact_types", std::move(fact_types)}};
}

}  // namespace

TEST(PersonaLexicon, AMissingFieldIsReportedWithItsJsonPath) {
    nlohmann::json doc = small_lexicon({{{"id", "t"},
                                         {"sentences", {"{Subj} likes {key}."}},
                                         {"pairs", nlohmann::json::array()},
                                         {"questions", {"What for {name}?"}},
                                         {"answer", "{Key}."},
                                         {"instances", {{{"key", "figs"}, {"details", {"figs"}}}}}}});
    ASSERT_TRUE(pr::parse_lexicon("persona.json", doc.dump()).has_value());
    nlohmann::json broken = doc;
    broken["fact_types"][0]["instances"][0].erase("details");
    auto r = pr::parse_lexicon("persona.json", broken.dump());
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().describe().find("persona.json: $.fact_types[0].instances[0].details"), std::string::npos)
        << r.error().describe();
    broken = doc;
    broken["flavors"][0].erase("role");
    r = pr::parse_lexicon("persona.json", broken.dump());
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().describe().find("$.flavors[0].role"), std::string::npos) << r.error().describe();
    broken = doc;
    broken["fact_types"][0]["questions"][0] = "What does {name} like, {key}?";
    EXPECT_FALSE(pr::parse_lexicon("persona.json", broken.dump()).has_value());
}

TEST(PersonaLexicon, ADetailFoundInAnotherInstanceIsRefusedWithItsJsonPath) {
    // Two fact types; "figs" (an instance's detail) is also in another instance's key, so an essay
    // holding that other fact would hold the first fact's answer too.
    auto lexicon = [](const nlohmann::json& liked, const nlohmann::json& feared) {
        return small_lexicon({{{"id", "liked"},
                               {"sentences", {"{Subj} likes {key}."}},
                               {"pairs", nlohmann::json::array()},
                               {"questions", {"What does {name} like?"}},
                               {"answer", "{Key}."},
                               {"instances", liked}},
                              {{"id", "feared"},
                               {"sentences", {"{Subj} fears {key}, since {extra}."}},
                               {"pairs", nlohmann::json::array()},
                               {"questions", {"What does {name} fear?"}},
                               {"answer", "{Key}."},
                               {"instances", feared}}});
    };
    const nlohmann::json liked = {{{"key", "figs"}, {"details", {"figs"}}}, {{"key", "ripe pears"}, {"details", {"ripe pears"}}}};
    const nlohmann::json feared = {{{"key", "geese"}, {"details", {"geese"}}, {"extra", "one bit {him}"}}};
    ASSERT_TRUE(pr::parse_lexicon("persona.json", lexicon(liked, feared).dump()).has_value());

    // In another instance's key, normalised ("Dried FIGS!" holds "figs"), across fact types.
    nlohmann::json bad = feared;
    bad.push_back({{"key", "Dried FIGS!"}, {"details", {"Dried FIGS"}}, {"extra", "a crate fell on {him}"}});
    auto r = pr::parse_lexicon("persona.json", lexicon(liked, bad).dump());
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().describe().find("persona.json: $.fact_types[0].instances[0].details[0]"), std::string::npos)
        << r.error().describe();
    EXPECT_NE(r.error().describe().find("$.fact_types[1].instances[1].key"), std::string::npos) << r.error().describe();

    // Within one fact type, and in a clause rather than a key.
    nlohmann::json pears = liked;
    pears.push_back({{"key", "quinces"}, {"details", {"quinces"}}});
    bad = feared;
    bad[0]["extra"] = "a goose chased {him} past the ripe pears";
    r = pr::parse_lexicon("persona.json", lexicon(pears, bad).dump());
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().describe().find("$.fact_types[0].instances[1].details[0]"), std::string::npos) << r.error().describe();
    EXPECT_NE(r.error().describe().find("$.fact_types[1].instances[0].extra"), std::string::npos) << r.error().describe();

    // A word inside another word is not the phrase: "fig" is not in "figs".
    nlohmann::json fig = liked;
    fig.push_back({{"key", "a fig roll"}, {"details", {"fig roll"}}});
    EXPECT_TRUE(pr::parse_lexicon("persona.json", lexicon(fig, feared).dump()).has_value());
}

TEST(PersonaLexicon, EveryFactTypeHasAPoolLargerThanAFilesUse) {
    // 100 essays of 4-5 facts over the fact types use each type about 37 times: a pool of 45 or
    // more gives every essay its own instance.
    for (const auto& t : pr::lexicon().fact_types) EXPECT_GE(t.instances.size(), 45u) << t.id;
}

// ---- Generator ----

TEST(PersonaRetrieval, DirectAnswersAreFoundInOneEssayEach) {
    // The audit's shared_answers: direct probes whose detail is in two essays or more (the paper's
    // release: 26 of 143, 18%). Each essay draws its own instances, so almost none is.
    mf::AuditInput input;
    input.name = "seed-42";
    input.scenarios.push_back({default_scenario(), "seed-42/persona_retrieval.jsonl", 1});
    const auto report = mf::audit_datasets({input});
    ASSERT_TRUE(report.has_value()) << report.error().describe();
    const mf::AuditFigure* shared = nullptr;
    for (const auto& d : report->datasets)
        for (const auto& st : d.strategies)
            if (st.strategy == mf::AuditStrategy::shared_answers && !st.inputs.empty()) shared = &st.inputs[0].figure;
    ASSERT_NE(shared, nullptr);
    EXPECT_GE(shared->n, 120);
    EXPECT_LE(shared->value, 0.20) << shared->n << " direct probes";
}


TEST(PersonaRetrieval, SameSeedSameJsonDifferentSeedDiffers) {
    const auto a = memfail::data::to_json(mf::generate_persona_retrieval(with_seed(7))).dump();
    const auto b = memfail::data::to_json(mf::generate_persona_retrieval(with_seed(7))).dump();
    const auto c = memfail::data::to_json(mf::generate_persona_retrieval(with_seed(8))).dump();
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
        const auto sentences = text::split_sentences(essay);
        EXPECT_GE(sentences.size(), 10u);
        EXPECT_LE(sentences.size(), 15u);
        words += text::words(essay).size();
        for (std::size_t k = 0; k < 3; ++k) {
            const auto& p = s.probes[3 * i + k];
            char id[64];
            std::snprintf(id, sizeof id, "per-%03zu-q%zu", i + 1, k + 1);
            EXPECT_EQ(p.id, id);
            EXPECT_EQ(p.meta["row"].get<std::size_t>(), i + 1);
            // The essay opens by naming the row's entity in full, and only there.
            const std::string entity = p.meta["entity"].get<std::string>();
            EXPECT_TRUE(text::contains_phrase(sentences[0], entity)) << p.id;
            for (std::size_t j = 1; j < sentences.size(); ++j)
                EXPECT_FALSE(text::contains_phrase(sentences[j], entity)) << sentences[j];
        }
    }
    // The paper's essays average about 230 words.
    const double mean = static_cast<double>(words) / 100.0;
    EXPECT_GE(mean, 180.0);
    EXPECT_LE(mean, 300.0);
}

TEST(PersonaRetrieval, GeneratedDataHasNoViolations) {
    for (std::uint64_t seed : {42ULL, 1ULL, 2026ULL}) {
        const Scenario s = mf::generate_persona_retrieval(with_seed(seed));
        const auto vs = all_violations(s);
        EXPECT_TRUE(vs.empty()) << "seed " << seed << ":\n" << describe(vs);
    }
    mf::GenerateOptions easy;
    easy.persona.distinct_names = true;
    easy.persona.name_pool = 110;
    const auto vs = all_violations(mf::generate_persona_retrieval(easy));
    EXPECT_TRUE(vs.empty()) << describe(vs);
}

TEST(PersonaRetrieval, AboutHalfTheProbesAreMisleading) {
    std::size_t mis = 0, total = 0;
    for (std::uint64_t seed : {1ULL, 2ULL, 3ULL, 4ULL}) {
        const Scenario s = mf::generate_persona_retrieval(with_seed(seed));
        for (const auto& p : s.probes) {
            mis += misleading(p);
            ++total;
        }
    }
    const double share = static_cast<double>(mis) / static_cast<double>(total);
    EXPECT_GT(share, 0.44);
    EXPECT_LT(share, 0.56);
}

// The release draws 100 entity names with replacement from 30 (27 distinct, up to 8 essays a name).
TEST(PersonaRetrieval, NamesAreReusedAsInTheReleaseByDefault) {
    for (std::uint64_t seed : {42ULL, 1ULL, 2ULL}) {
        const Scenario s = mf::generate_persona_retrieval(with_seed(seed));
        std::map<std::string, std::size_t> essays_of;
        for (std::size_t i = 0; i < 100; ++i) ++essays_of[s.probes[3 * i].meta["entity"].get<std::string>()];
        std::size_t most = 0;
        for (const auto& [name, n] : essays_of) most = std::max(most, n);
        EXPECT_GE(essays_of.size(), 24u) << "seed " << seed;
        EXPECT_LE(essays_of.size(), 30u) << "seed " << seed;
        EXPECT_GE(most, 5u) << "seed " << seed;
        // Namesakes are listed, and two essays about one name are about two different people.
        std::map<std::string, std::set<std::string>> openings;
        for (std::size_t i = 0; i < 100; ++i) {
            const auto& p = s.probes[3 * i];
            const std::string name = p.meta["entity"].get<std::string>();
            EXPECT_EQ(p.meta.contains("entity_rows"), essays_of[name] > 1) << p.id;
            EXPECT_TRUE(openings[name].insert(text::split_sentences(s.sessions[i].messages[0].content)[0]).second);
        }
    }
    mf::GenerateOptions distinct;
    distinct.persona.distinct_names = true;
    distinct.persona.name_pool = 110;
    const Scenario s = mf::generate_persona_retrieval(distinct);
    std::set<std::string> names;
    for (std::size_t i = 0; i < 100; ++i) names.insert(s.probes[3 * i].meta["entity"].get<std::string>());
    EXPECT_EQ(names.size(), 100u);
}

TEST(PersonaRetrieval, DistractorsAreStrangersToEveryEssay) {
    const Scenario& s = default_scenario();
    std::set<std::string> essay_words, entities;
    for (const auto& session : s.sessions)
        for (const auto& w : text::words(session.messages[0].content)) essay_words.insert(w);
    std::set<std::string> entity_words;
    for (const auto& p : s.probes) {
        entities.insert(p.meta["entity"].get<std::string>());
        for (const auto& w : text::words(p.meta["entity"].get<std::string>())) entity_words.insert(w);
    }
    for (const auto& p : s.probes) {
        if (!misleading(p)) continue;
        const std::string d = p.meta["distractor"].get<std::string>();
        EXPECT_FALSE(entities.count(d)) << d;
        for (const auto& w : text::words(d)) {
            EXPECT_FALSE(essay_words.count(w)) << d << " appears in an essay";
            EXPECT_FALSE(entity_words.count(w)) << d << " shares a name with a stored person";
        }
        EXPECT_EQ(p.answer, "I don't have information about " + d + ".");
        EXPECT_TRUE(p.evidence.empty());
    }
}

// Who is stored and who is a distractor is drawn per file: a name that is never stored in any file
// would let a system abstain on the name alone.
TEST(PersonaRetrieval, StoredPeopleAndDistractorsAreSplitAfreshPerSeed) {
    std::map<std::string, std::set<bool>> roles;  // name -> {misleading?} over the seeds
    for (std::uint64_t seed : {42u, 1u, 7u, 3u}) {
        const Scenario s = mf::generate_persona_retrieval(with_seed(seed));
        for (const auto& p : s.probes) {
            if (misleading(p)) roles[p.meta["distractor"].get<std::string>()].insert(true);
            else roles[p.meta["entity"].get<std::string>()].insert(false);
        }
    }
    std::size_t both = 0;
    for (const auto& [name, seen] : roles) both += seen.size() == 2;
    EXPECT_GE(both, 20u) << "names stored in one seed's file and distractors in another's";
}

TEST(PersonaRetrieval, ANameAppearsOnlyInEssaysAboutThatName) {
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
                EXPECT_TRUE(s.probes[3 * j].meta["entity"].get<std::string>() == entity || !session_words[j].count(t))
                    << entity << " leaks into sessions[" << j << "]";
    }
}

// The release: 96 of 143 direct facts sit in a sentence that does not name the person.
TEST(PersonaRetrieval, MostDirectFactsSitInSentencesThatDoNotNameThePerson) {
    std::size_t unnamed = 0, total = 0;
    for (std::uint64_t seed : {42ULL, 1ULL, 2ULL}) {
        const Scenario s = mf::generate_persona_retrieval(with_seed(seed));
        for (const auto& d : direct_probes(s)) {
            const auto& f = d.probe->evidence.at(0);
            const auto& entity = f.key_details.at(0);
            bool named = false;
            for (const auto& st : fact_statements(d))
                for (const auto& v : entity.variants) named = named || text::contains_phrase(st, v);
            EXPECT_EQ(named, d.probe->meta["names_person"].get<bool>()) << d.probe->id;
            // A fact whose sentences do not name the person cites the opening that does.
            const std::string opening = text::split_sentences(*d.essay).at(0);
            EXPECT_EQ(f.statements.front() == opening, !named) << d.probe->id;
            unnamed += !named;
            ++total;
        }
    }
    const double share = static_cast<double>(unnamed) / static_cast<double>(total);
    EXPECT_GT(share, 0.55) << unnamed << " of " << total;
    EXPECT_LT(share, 0.80) << unnamed << " of " << total;
}

TEST(PersonaRetrieval, SomeFactsRunOverTwoSentences) {
    std::size_t two = 0, total = 0;
    for (std::uint64_t seed : {42ULL, 1ULL, 2ULL}) {
        const Scenario s = mf::generate_persona_retrieval(with_seed(seed));
        for (const auto& d : direct_probes(s)) {
            const auto sentences = fact_statements(d);
            ASSERT_EQ(sentences.size(), d.probe->meta["fact_sentences"].get<std::size_t>()) << d.probe->id;
            if (sentences.size() == 2) {
                // Adjacent in the essay: the second carries the reason or detail.
                EXPECT_NE(d.essay->find(sentences[0] + " " + sentences[1]), std::string::npos) << d.probe->id;
                ++two;
            }
            ++total;
        }
    }
    const double share = static_cast<double>(two) / static_cast<double>(total);
    EXPECT_GT(share, 0.2) << two << " of " << total;
    EXPECT_LT(share, 0.5) << two << " of " << total;
}

TEST(PersonaRetrieval, NoDirectQuestionContainsItsAnswersDetail) {
    for (std::uint64_t seed : {42ULL, 1ULL, 2ULL}) {
        const Scenario s = mf::generate_persona_retrieval(with_seed(seed));
        for (const auto& d : direct_probes(s)) {
            const auto& p = *d.probe;
            const std::string entity = p.meta["entity"].get<std::string>();
            EXPECT_TRUE(text::contains_phrase(p.question, entity)) << p.question;
            for (const auto& v : p.evidence.at(0).key_details.at(1).variants) {
                EXPECT_FALSE(text::normalized_contains(text::normalize(p.question), text::normalize(v)))
                    << p.question << " gives away '" << v << "'";
                EXPECT_TRUE(text::contains_phrase(p.answer, v)) << p.answer;
            }
            // First person, about a situation.
            const auto w = text::words(p.question);
            const bool first_person = std::any_of(w.begin(), w.end(), [](const std::string& x) {
                return x == "i" || x == "im" || x == "me" || x == "my" || x == "we" || x == "us" || x == "our";
            });
            EXPECT_TRUE(first_person) << p.question;
        }
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

TEST(PersonaRetrieval, DirectProbesCiteTheNamingAndTheStatingSentences) {
    const Scenario& s = default_scenario();
    std::set<std::string> fact_sentences;
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const auto& p = s.probes[i];
        if (misleading(p)) continue;
        ASSERT_EQ(p.evidence.size(), 1u);
        const auto& f = p.evidence[0];
        const std::string& essay = s.sessions[i / 3].messages[0].content;
        EXPECT_EQ(f.message_ids, std::vector<std::string>{s.sessions[i / 3].messages[0].id});
        const auto sentences = text::split_sentences(essay);
        for (const auto& st : f.statements)
            EXPECT_NE(std::find(sentences.begin(), sentences.end(), st), sentences.end()) << st;
        EXPECT_EQ(f.text, text::join(f.statements, " "));
        ASSERT_EQ(f.key_details.size(), 2u);
        EXPECT_EQ(f.key_details[0].name, "entity");
        EXPECT_EQ(f.key_details[1].name, "detail");
        // A fact sentence belongs to one essay only, so no other essay's sentence stands in for it.
        for (const auto& st : fact_statements({&p, &essay})) {
            if (st != sentences[0]) {
                EXPECT_TRUE(fact_sentences.insert(st).second) << st;
            }
        }
    }
}

TEST(PersonaRetrieval, TheSettingsChangeWhatTheyName) {
    mf::GenerateOptions named;
    named.persona.pronoun_share = 0.0;
    named.persona.multi_sentence_share = 0.0;
    const Scenario s = mf::generate_persona_retrieval(named);
    for (const auto& d : direct_probes(s)) {
        EXPECT_TRUE(d.probe->meta["names_person"].get<bool>()) << d.probe->id;
        EXPECT_EQ(d.probe->evidence.at(0).statements.size(), 1u) << d.probe->id;
    }
    EXPECT_TRUE(all_violations(s).empty()) << describe(all_violations(s));
}

TEST(PersonaRetrieval, PrintsSamplesOnRequest) {
    const char* env = std::getenv("MEMFAIL_PRINT_SAMPLES");
    if (!env) GTEST_SKIP() << "set MEMFAIL_PRINT_SAMPLES=<n> to print essays";
    const Scenario& s = default_scenario();
    const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(std::atoi(env)), s.sessions.size());
    for (std::size_t i = 0; i < n; ++i) {
        std::printf("\n[%s] %s\n", s.probes[3 * i].meta["entity"].get<std::string>().c_str(),
                    s.sessions[i].messages[0].content.c_str());
        for (std::size_t k = 0; k < 3; ++k) {
            const auto& p = s.probes[3 * i + k];
            std::printf("  %s %s\n    -> %s\n", misleading(p) ? "(misleading)" : "(direct)", p.question.c_str(),
                        p.answer.c_str());
        }
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

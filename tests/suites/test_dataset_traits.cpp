// SPDX-License-Identifier: MIT
// `memfail datasets stats`: the difficulty traits (words per message, name reuse, facts in pronoun
// sentences, chain voice, question/evidence word overlap). Small hand-built scenarios whose every
// figure is known; the generated datasets and the release-shaped fixture for what must always hold;
// malformed entries counted as unknown, never a crash.
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/import_csv.hpp>
#include <memfail/suites/memfail/stats.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace memfail::suites::memfail_suite {
namespace {

using nlohmann::json;

data::Session session(const std::string& id, std::vector<std::pair<std::string, std::string>> messages) {
    data::Session s;
    s.id = id;
    s.timestamp = "2026-03-01T09:00:00Z";
    for (auto& [mid, content] : messages) s.messages.emplace_back(mid, "user", content);
    return s;
}

data::EvidenceFact fact(const std::string& id, std::vector<std::string> message_ids,
                        std::vector<data::KeyDetail> details, std::vector<std::string> statements = {}) {
    data::EvidenceFact f;
    f.id = id;
    f.message_ids = std::move(message_ids);
    f.key_details = std::move(details);
    f.statements = std::move(statements);
    f.text = f.statements.empty() ? std::string() : f.statements.front();
    return f;
}

data::Probe probe(const std::string& id, const std::string& question, std::vector<data::EvidenceFact> evidence,
                  json meta = json::object()) {
    data::Probe p;
    p.id = id;
    p.question = question;
    p.kind = evidence.empty() ? data::ProbeKind::abstain : data::ProbeKind::open;
    p.answer = "x";
    p.evidence = std::move(evidence);
    p.meta = std::move(meta);
    return p;
}

// Three essays, two of them about Noah Brooks (one named only by its first sentence); a fact in a
// pronoun sentence, two in named sentences, one citing a message that does not exist.
data::Scenario persona_fixture() {
    data::Scenario s;
    s.id = "traits-persona";
    s.dataset = "persona_retrieval";
    s.sessions = {session("s1", {{"m1", "Yuki Tanaka is a cartographer. She inks maps with salmon ink. "
                                        "Yuki keeps a brass sextant."}}),
                  session("s2", {{"m2", "Noah Brooks is a baker. He bakes rye bread at dawn."}}),
                  session("s3", {{"m3", "Noah Brooks is a pilot. On Sundays Noah's glider leaves the hangar."}})};
    s.probes = {
        probe("p1", "Which ink does Yuki Tanaka use?", {fact("p1-f1", {"m1"}, {{"entity", {"Yuki Tanaka"}}, {"detail", {"salmon ink"}}})},
              {{"entity", "Yuki Tanaka"}}),
        probe("p2", "What does Yuki carry?", {fact("p2-f1", {"m1"}, {{"entity", {"Yuki"}}, {"detail", {"brass sextant"}}})},
              {{"entity", "Yuki Tanaka"}}),
        probe("p3", "What does Noah fly?", {fact("p3-f1", {"m3"}, {{"detail", {"glider"}}})}, {{"entity", "Noah Brooks"}}),
        probe("p4", "What does Noah cook?", {fact("p4-f1", {"m404"}, {{"detail", {"rye bread"}}})}, {{"entity", "Noah Brooks"}}),
        probe("p5", "Where does Mia Chen live?", {}, {{"entity", "Yuki Tanaka"}, {"is_misleading", true}}),
    };
    return s;
}

TEST(DatasetTraits, NameReuseCountsEntriesSharingANameAndSaysHowEachWasNamed) {
    const auto t = dataset_traits(persona_fixture());
    ASSERT_TRUE(t.names.has_value());
    EXPECT_EQ(t.names->entries, 3);
    EXPECT_EQ(t.names->from_meta, 2);  // s1 and s3 are cited by probes with meta.entity
    EXPECT_EQ(t.names->from_text, 1);  // s2 is cited only by p4, whose message id is unknown
    EXPECT_EQ(t.names->unknown, 0);
    EXPECT_EQ(t.names->distinct, 2);
    EXPECT_EQ(t.names->max_per_name, 2);
    EXPECT_EQ(t.names->most_shared, "noah brooks");
    EXPECT_EQ(t.names->distinct_first, 2);
    EXPECT_EQ(t.names->max_per_first_name, 2);
    EXPECT_FALSE(t.chains.has_value());
}

TEST(DatasetTraits, EntriesCitedByNoProbeAreNamedByMetaRowOrTheirFirstSentence) {
    data::Scenario s;
    s.dataset = "persona_retrieval";
    s.sessions = {session("s1", {{"m1", "By trade Mia Chen is a welder. She forges gates."}}),
                  session("s2", {{"m2", "Most people know Omar Haddad as a chef, though he sails."}}),
                  session("s3", {{"m3", "The lighthouse stands alone. Nobody lives there."}}),
                  session("s4", {{"m4", "Selene's kiln runs hot. She fires bowls."}})};
    s.probes = {
        // Misleading questions cite nothing: meta.row links them, when the entry names the person.
        probe("a1", "Where does Noah Brooks work?", {}, {{"entity", "Mia Chen"}, {"row", 1}, {"is_misleading", true}}),
        probe("a2", "Where does Noah Brooks eat?", {}, {{"entity", "Zed Quill"}, {"row", 2}, {"is_misleading", true}}),
        probe("a3", "Where does Noah Brooks sleep?", {}, {{"entity", "Zed Quill"}, {"row", 99}}),
    };
    const auto t = dataset_traits(s);
    ASSERT_TRUE(t.names.has_value());
    EXPECT_EQ(t.names->from_meta, 1);  // s1
    EXPECT_EQ(t.names->from_text, 2);  // s2 "Omar Haddad" after the opener, s4 "Selene" before the possessive
    EXPECT_EQ(t.names->unknown, 1);    // s3: "The", then no capitalised word in the sentence
    EXPECT_EQ(t.names->distinct, 3);
    EXPECT_EQ(t.names->distinct_first, 3);
    EXPECT_EQ(t.names->max_per_name, 1);
    EXPECT_EQ(t.names->most_shared, "");  // no name is shared
    EXPECT_TRUE(stats_json(dataset_stats(s))["traits"]["names"]["most_shared"].is_null());
}

TEST(DatasetTraits, PronounFactsAreThoseWhoseSentencesDoNotNameThePerson) {
    const auto t = dataset_traits(persona_fixture());
    ASSERT_TRUE(t.pronoun_facts.has_value());
    EXPECT_EQ(t.pronoun_facts->facts, 4);
    EXPECT_EQ(t.pronoun_facts->pronoun, 1);  // "She inks maps with salmon ink."
    EXPECT_EQ(t.pronoun_facts->named, 2);    // "Yuki keeps ...", "... Noah's glider ..." (possessive)
    EXPECT_EQ(t.pronoun_facts->mixed, 0);
    EXPECT_EQ(t.pronoun_facts->unknown, 1);  // p4 cites no stored message
}

TEST(DatasetTraits, ConditionalRuleSplitOverSentencesIsMixedOrPronoun) {
    data::Scenario s;
    s.dataset = "conditional_facts_hard";
    s.sessions = {session("s1", {{"m1", "Gideon keeps a studio only for tea. He paints sailboats in teacups. "
                                        "It happens when he feels wistful."}}),
                  session("s2", {{"m2", "Hannah annotates margins with metaphors. She does it only when editing "
                                        "fiction."}}),
                  session("s3", {{"m3", ""}})};
    const std::vector<data::KeyDetail> gideon = {{"entity", {"Gideon"}}, {"behaviour", {"paints sailboats"}},
                                                 {"condition", {"feels wistful"}},
                                                 // A one-word qualifier places nothing: "only" in the
                                                 // naming sentence does not make the rule named.
                                                 {"exclusivity", {"only"}}};
    const std::vector<data::KeyDetail> hannah = {{"entity", {"Hannah"}}, {"behaviour", {"annotates margins"}},
                                                 {"condition", {"editing fiction"}}};
    s.probes = {probe("c1", "Would Gideon paint now?", {fact("c1-f1", {"m1"}, gideon)}, {{"entity", "Gideon"}}),
                // meta.entity of the wrong type: the entry's first sentence names the person instead.
                probe("c2", "Would Hannah annotate now?", {fact("c2-f1", {"m2"}, hannah)}, {{"entity", 7}}),
                // An empty essay: no name, and the fact is unknown.
                probe("c3", "Would it rain?", {fact("c3-f1", {"m3"}, {{"behaviour", {"rain"}}})}, json::array())};
    const auto t = dataset_traits(s);
    ASSERT_TRUE(t.pronoun_facts.has_value());
    EXPECT_EQ(t.pronoun_facts->facts, 3);
    EXPECT_EQ(t.pronoun_facts->pronoun, 1);  // Gideon: both rule sentences say "he"
    EXPECT_EQ(t.pronoun_facts->mixed, 1);    // Hannah: behaviour named, condition by pronoun
    EXPECT_EQ(t.pronoun_facts->named, 0);
    EXPECT_EQ(t.pronoun_facts->unknown, 1);
    ASSERT_TRUE(t.names.has_value());
    EXPECT_EQ(t.names->from_meta, 1);
    EXPECT_EQ(t.names->from_text, 1);
    EXPECT_EQ(t.names->unknown, 1);
    EXPECT_EQ(t.names->distinct, 2);
    EXPECT_EQ(t.names->max_per_name, 1);
    // Words per message: 18, 12 and 0.
    EXPECT_EQ(t.words.messages, 3);
    EXPECT_DOUBLE_EQ(*t.words.mean, 10.0);
    EXPECT_DOUBLE_EQ(*t.words.median, 12.0);
    // The figures reach both output formats.
    const auto st = dataset_stats(s);
    const auto j = stats_json(st);
    EXPECT_EQ(j["traits"]["pronoun_facts"]["mixed"], 1);
    EXPECT_EQ(j["traits"]["names"]["method"]["unknown"], 1);
    EXPECT_DOUBLE_EQ(j["traits"]["words_per_message"]["median"].get<double>(), 12.0);
    const std::string text = stats_text(st, "");
    EXPECT_NE(text.find("pronoun facts    1 of 3 facts"), std::string::npos) << text;
    EXPECT_NE(text.find("median 12.0 over 3 messages"), std::string::npos) << text;
    EXPECT_NE(text.find("name method      meta.entity 1, first sentence 1, unknown 1"), std::string::npos) << text;
}

TEST(DatasetTraits, ChainVoiceNamedInEveryFactOrFirstPerson) {
    data::Scenario s;
    s.dataset = "long_hop";
    s.sessions = {session("s1", {{"m1", "Priya enjoys acoustic guitar whenever she unwinds."},
                                 {"m2", "Hearing acoustic guitar makes Priya start soft singing."},
                                 {"m3", "Early yoga gives me a calm mind."},
                                 {"m4", "A calm mind leads me to finish journaling."}}),
                  session("s2", {{"m5", "Esme's garden fills her with calm."},
                                 {"m6", "Calm makes Esme hum."},
                                 {"m7", "Omar bakes bread on Sundays."},
                                 {"m8", "Fresh bread puts him in a good mood."},
                                 {"m9", "Rain makes the cat sleep."},
                                 {"m10", "Whenever I eat Greek yogurt, I feel calm."},
                                 {"m11", "Feeling calm, Greek music plays in my head."}})};
    auto chain = [](const std::string& id, std::vector<std::string> messages, json meta) {
        std::vector<data::EvidenceFact> facts;
        for (std::size_t i = 0; i < messages.size(); ++i)
            facts.push_back(fact(id + "-f" + std::to_string(i + 1), {messages[i]}, {}));
        data::Probe p = probe(id, "What happens?", std::move(facts), std::move(meta));
        p.kind = data::ProbeKind::mcq;
        return p;
    };
    s.probes = {
        chain("named", {"m1", "m2"}, {{"voice", "named"}, {"chain", {"Priya", "acoustic guitar", "soft singing"}}}),
        chain("first", {"m3", "m4"}, {{"voice", "first_person"}, {"chain", {"early yoga", "calm mind", "finish journaling"}}}),
        chain("by-text", {"m5", "m6"}, json::object()),  // no labels: the person is found in the text
        chain("partly", {"m7", "m8"}, {{"voice", "named"}, {"chain", {"Omar", "bread", "good mood"}}}),
        chain("no-facts", {}, {{"voice", "named"}}),
        chain("nobody", {"m9"}, json("not an object")),
        // "Greek" in every fact names nobody: a fact in the first person makes the chain first person.
        chain("greek", {"m10", "m11"}, {{"voice", "first_person"}}),
    };
    const auto t = dataset_traits(s);
    ASSERT_TRUE(t.chains.has_value());
    EXPECT_EQ(t.chains->chains, 7);
    EXPECT_EQ(t.chains->named, 2);  // Priya (meta.chain), Esme (text, possessive included)
    EXPECT_EQ(t.chains->first_person, 2);
    EXPECT_EQ(t.chains->partly_named, 1);  // "Fresh bread puts him ..."
    EXPECT_EQ(t.chains->other, 1);
    EXPECT_EQ(t.chains->unknown, 1);
    EXPECT_EQ(t.chains->person_from_meta, 2);
    EXPECT_EQ(t.chains->person_from_text, 1);
    EXPECT_FALSE(t.names.has_value());
    EXPECT_FALSE(t.pronoun_facts.has_value());
    const auto j = stats_json(dataset_stats(s));
    EXPECT_EQ(j["traits"]["chains"]["named"], 2);
    EXPECT_EQ(j["traits"]["chains"]["person_method"]["text"], 1);
}

TEST(DatasetTraits, LexicalOverlapIsTheShareOfQuestionContentWordsInTheEvidence) {
    data::Scenario s;
    s.dataset = "coexisting_facts";
    s.sessions = {session("s1", {{"m1", "I love fedora hats."}}), session("s2", {{"m2", "Gideon wears a fedora."}})};
    s.probes = {
        // fedora, hats, suit, rain: two of four.
        probe("q1", "Which fedora hats suit rain?", {fact("q1-f1", {"m1"}, {})}),
        // gideon (possessive dropped), fedora, fit: two of three.
        probe("q2", "Does Gideon's fedora fit?", {fact("q2-f1", {"m2"}, {})}),
        probe("q3", "What is it?", {fact("q3-f1", {"m1"}, {})}),         // no content word
        probe("q4", "Which boots?", {fact("q4-f1", {"missing"}, {})}),   // cites no stored message
        probe("q5", "Which fedora?", {fact("q5-f1", {"m1"}, {})}, {{"ambiguous", true}}),  // not graded
        probe("q6", "Which scarves?", {}),                                // no evidence
    };
    const auto t = dataset_traits(s);
    EXPECT_EQ(t.overlap.probes, 2);
    EXPECT_EQ(t.overlap.no_content_words, 1);
    EXPECT_EQ(t.overlap.no_messages, 1);
    ASSERT_TRUE(t.overlap.mean.has_value());
    EXPECT_DOUBLE_EQ(*t.overlap.mean, (0.5 + 2.0 / 3.0) / 2.0);
    EXPECT_FALSE(t.names.has_value());
    const auto j = stats_json(dataset_stats(s));
    EXPECT_EQ(j["traits"]["overlap"]["probes"], 2);
    // The existing figures are still there, unchanged in place.
    EXPECT_EQ(j.begin().key(), "dataset");
    EXPECT_TRUE(j.contains("by_n"));
}

TEST(DatasetTraits, EmptyScenarioHasNoMeans) {
    data::Scenario s;
    s.dataset = "persona_retrieval";
    const auto t = dataset_traits(s);
    EXPECT_EQ(t.words.messages, 0);
    EXPECT_FALSE(t.words.mean.has_value());
    EXPECT_FALSE(t.overlap.mean.has_value());
    ASSERT_TRUE(t.names.has_value());
    EXPECT_EQ(t.names->entries, 0);
    EXPECT_TRUE(stats_json(dataset_stats(s))["traits"]["overlap"]["mean"].is_null());
    EXPECT_NE(stats_text(dataset_stats(s), "").find("mean share - over 0"), std::string::npos);
}

// What must hold on any generated dataset: counts add up, shares are shares.
void expect_consistent(const data::Scenario& s, const DatasetTraits& t) {
    const auto name = s.dataset;
    EXPECT_EQ(t.words.messages, static_cast<std::int64_t>(data::message_count(s))) << name;
    ASSERT_TRUE(t.words.mean.has_value()) << name;
    EXPECT_GT(*t.words.mean, 0) << name;
    EXPECT_GT(*t.words.median, 0) << name;
    ASSERT_TRUE(t.overlap.mean.has_value()) << name;
    EXPECT_GE(*t.overlap.mean, 0.0) << name;
    EXPECT_LE(*t.overlap.mean, 1.0) << name;
    std::int64_t with_evidence = 0;
    for (const auto& p : s.probes) with_evidence += !p.evidence.empty() && !p.meta.value("ambiguous", false);
    EXPECT_EQ(t.overlap.probes + t.overlap.no_content_words + t.overlap.no_messages, with_evidence) << name;
    if (t.names) {
        EXPECT_EQ(t.names->entries, static_cast<std::int64_t>(s.sessions.size())) << name;
        EXPECT_EQ(t.names->from_meta + t.names->from_text + t.names->unknown, t.names->entries) << name;
        EXPECT_GE(t.names->distinct, 1) << name;
        EXPECT_LE(t.names->distinct, t.names->entries - t.names->unknown) << name;
        EXPECT_GE(t.names->max_per_name, 1) << name;
        EXPECT_LE(t.names->distinct_first, t.names->distinct) << name;
        EXPECT_GE(t.names->max_per_first_name, t.names->max_per_name) << name;
    }
    if (t.pronoun_facts) {
        std::int64_t facts = 0;
        for (const auto& p : s.probes) facts += static_cast<std::int64_t>(p.evidence.size());
        const auto& f = *t.pronoun_facts;
        EXPECT_EQ(f.facts, facts) << name;
        EXPECT_EQ(f.pronoun + f.mixed + f.named + f.unknown, f.facts) << name;
    }
    if (t.chains) {
        const auto& c = *t.chains;
        EXPECT_EQ(c.chains, static_cast<std::int64_t>(s.probes.size())) << name;
        EXPECT_EQ(c.named + c.first_person + c.partly_named + c.other + c.unknown, c.chains) << name;
        EXPECT_LE(c.person_from_meta + c.person_from_text, c.chains) << name;
    }
}

TEST(DatasetTraits, GeneratedDatasetsAreConsistent) {
    for (const char* name : {"conditional_facts_easy", "conditional_facts_hard", "persona_retrieval", "long_hop",
                             "coexisting_facts"}) {
        const auto s = generate_dataset(name, {42}).value();
        const auto t = dataset_traits(s);
        expect_consistent(s, t);
        const bool named_family = std::string(name) != "long_hop" && std::string(name) != "coexisting_facts";
        EXPECT_EQ(t.names.has_value(), named_family) << name;
        EXPECT_EQ(t.pronoun_facts.has_value(), named_family) << name;
        EXPECT_EQ(t.chains.has_value(), std::string(name) == "long_hop") << name;
        if (named_family) {
            // Every generated essay opens with its person's name; a Persona essay all of whose
            // questions mislead is cited by no probe, so its name comes from that first sentence.
            EXPECT_EQ(t.names->unknown, 0) << name;
            EXPECT_GT(t.names->from_meta, 0) << name;
            EXPECT_EQ(t.pronoun_facts->unknown, 0) << name;
        }
        if (t.chains) {
            // The generator's named chains carry their person in meta.chain's head.
            std::int64_t labelled = 0;
            for (const auto& p : s.probes) labelled += p.meta.at("voice") == "named";
            EXPECT_EQ(t.chains->person_from_meta, labelled);
            EXPECT_EQ(t.chains->unknown, 0);
        }
    }
}

TEST(DatasetTraits, ImportedReleaseFixtureIsConsistent) {
    auto imported = import_memfail_csv_dir(std::string(MEMFAIL_TEST_FIXTURES) + "/memfail-csv-release");
    ASSERT_TRUE(imported.has_value()) << imported.error().describe();
    for (const auto& s : imported->first) {
        const auto t = dataset_traits(s);
        expect_consistent(s, t);
        if (s.dataset == "long_hop") {
            // Esme's chain names her in every fact; the others speak in the first person.
            EXPECT_GE(t.chains->named, 1);
            EXPECT_GE(t.chains->first_person, 1);
        }
    }
}

}  // namespace
}  // namespace memfail::suites::memfail_suite

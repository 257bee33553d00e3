// SPDX-License-Identifier: MIT
// Long-Hop generator and rules: counts, determinism, construction rules, planted corruptions.
// Set MEMFAIL_PRINT_CHAINS=<n> to print the first n chains of the default seed for reading.
#include "suite_test_util.hpp"
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/long_hop_lexicon.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace mf = memfail::suites::memfail_suite;
namespace lh = memfail::suites::memfail_suite::long_hop;
using memfail::data::Scenario;
using memfail::data::Violation;
namespace text = memfail::text;

using memfail::testing::all_violations;
using memfail::testing::describe;
using memfail::testing::has_violation;

namespace {

const Scenario& default_scenario() {
    static const Scenario s = mf::generate_long_hop({});
    return s;
}

std::size_t hops_of(const memfail::data::Probe& p) { return p.meta.at("hops").get<std::size_t>(); }

bool named(const memfail::data::Probe& p) { return p.meta.at("voice") == "named"; }

Scenario with_named_share(double share, std::uint64_t seed = 42) {
    mf::GenerateOptions o;
    o.seed = seed;
    o.long_hop.named_share = share;
    return mf::generate_long_hop(o);
}

bool first_person_word(const std::string& fact) {
    for (const char* w : {"i", "me", "my", "myself", "i'm"})
        if (text::contains_phrase(fact, w))
            return true;
    return false;
}

} // namespace

TEST(LongHop, ExactCounts) {
    const Scenario& s = default_scenario();
    EXPECT_EQ(s.dataset, "long_hop");
    ASSERT_EQ(s.probes.size(), 92u);
    std::map<std::size_t, std::size_t> per_hops;
    std::size_t facts = 0;
    for (const auto& p : s.probes) {
        ++per_hops[hops_of(p)];
        EXPECT_EQ(p.evidence.size(), hops_of(p) + 1) << p.id;
        EXPECT_EQ(p.meta.at("chain").size(), hops_of(p) + 2) << p.id;
        EXPECT_EQ(p.kind, memfail::data::ProbeKind::mcq);
        EXPECT_EQ(p.choices.size(), 5u);
        EXPECT_EQ(p.after_session, s.sessions.back().id);
        facts += p.evidence.size();
    }
    EXPECT_EQ(per_hops[1], 31u);
    EXPECT_EQ(per_hops[2], 32u);
    EXPECT_EQ(per_hops[3], 29u);
    EXPECT_EQ(facts, 274u);
    EXPECT_EQ(memfail::data::message_count(s), 274u);
    for (const auto& session : s.sessions) {
        EXPECT_GE(session.messages.size(), 3u) << session.id;
        EXPECT_LE(session.messages.size(), 5u) << session.id;
    }
    EXPECT_EQ(s.probes.front().id, "lhp-001");
    EXPECT_EQ(s.probes.back().id, "lhp-092");
}

TEST(LongHop, DeterministicForASeed) {
    const Scenario again = mf::generate_long_hop({});
    EXPECT_EQ(memfail::data::to_json(again), memfail::data::to_json(default_scenario()));
    const Scenario other = mf::generate_long_hop({7});
    EXPECT_NE(memfail::data::scenario_hash(other),
              memfail::data::scenario_hash(default_scenario()));
}

TEST(LongHop, GeneratedDataPassesStructureAndRules) {
    const auto vs = all_violations(default_scenario());
    EXPECT_TRUE(vs.empty()) << describe(vs);
    for (std::uint64_t seed : {1ull, 2026ull, 4242ull}) {
        const auto other = all_violations(mf::generate_long_hop({seed}));
        EXPECT_TRUE(other.empty()) << "seed " << seed << "\n" << describe(other);
    }
}

TEST(LongHop, DispatchRunsLongHopRules) {
    Scenario s = default_scenario();
    s.probes.pop_back();
    std::vector<Violation> out;
    mf::check_dataset_rules(s, 3, out);
    ASSERT_TRUE(has_violation(out, "probes"));
    EXPECT_EQ(out.front().line, 3u);
}

// A hop count read as int would wrap: 4294967297 became 1 and passed.
TEST(LongHop, HugeHopCountsAreRefusedNotWrapped) {
    const nlohmann::json huge[] = {4294967297ULL, 18446744073709551615ULL, -4294967295LL, 0, 1e30};
    for (const auto& value : huge) {
        Scenario s = default_scenario();
        s.probes[0].meta["hops"] = value;
        std::vector<Violation> out;
        mf::check_dataset_rules(s, 5, out);
        EXPECT_TRUE(has_violation(out, "probes[0].meta.hops")) << value.dump() << "\n" << describe(out);
    }
}

TEST(LongHop, CatchesTwoFactsOfOneChainInOneSession) {
    Scenario s = default_scenario();
    std::size_t probe = 0;
    while (hops_of(s.probes[probe]) < 2)
        ++probe;
    const std::string first = s.probes[probe].evidence[0].message_ids[0];
    const std::string second = s.probes[probe].evidence[1].message_ids[0];
    // Move the second fact's message into the session that holds the first.
    memfail::data::Message moved;
    for (auto& session : s.sessions)
        for (auto it = session.messages.begin(); it != session.messages.end(); ++it)
            if (it->id == second) {
                moved = *it;
                session.messages.erase(it);
                break;
            }
    for (auto& session : s.sessions)
        for (const auto& m : session.messages)
            if (m.id == first) {
                session.messages.push_back(moved);
                break;
            }
    std::vector<Violation> out;
    mf::check_long_hop_rules(s, 0, out);
    const std::string field = "probes[" + std::to_string(probe) + "].evidence[1].message_ids[0]";
    EXPECT_TRUE(has_violation(out, field)) << describe(out);
    EXPECT_EQ(out.size(), 1u) << describe(out);
}

TEST(LongHop, CatchesQuestionNamingAnIntermediateAnchor) {
    Scenario s = default_scenario();
    std::size_t probe = 5;
    auto& p = s.probes[probe];
    const std::string middle = p.meta.at("chain")[1].get<std::string>();
    p.question = p.question.substr(0, p.question.size() - 1) + ", given " + middle + "?";
    std::vector<Violation> out;
    mf::check_long_hop_rules(s, 0, out);
    EXPECT_TRUE(has_violation(out, "probes[" + std::to_string(probe) + "].question"))
        << describe(out);
}

TEST(LongHop, CatchesWrongCorrectChoice) {
    Scenario s = default_scenario();
    auto& p = s.probes[11];
    p.correct_choice = std::string(1, static_cast<char>('A' + (p.correct_choice[0] - 'A' + 1) % 5));
    std::vector<Violation> out;
    mf::check_long_hop_rules(s, 0, out);
    EXPECT_TRUE(has_violation(out, "probes[11].correct_choice")) << describe(out);
}

TEST(LongHop, CatchesReusedAnchorAndLeakedAnchor) {
    Scenario s = default_scenario();
    // A later chain reusing the terminal anchor of the first chain.
    s.probes[1].meta["chain"].back() = s.probes[0].meta["chain"].back();
    // A middle anchor leaking into the last fact of its chain.
    std::size_t probe = 2;
    while (hops_of(s.probes[probe]) < 2)
        ++probe;
    auto& p = s.probes[probe];
    p.evidence.back().text += " " + p.meta.at("chain")[1].get<std::string>();
    std::vector<Violation> out;
    mf::check_long_hop_rules(s, 0, out);
    EXPECT_TRUE(has_violation(out, "probes[1].meta.chain[" +
                                       std::to_string(hops_of(s.probes[1]) + 1) + "]"))
        << describe(out);
    EXPECT_TRUE(has_violation(out, "probes[" + std::to_string(probe) + "].evidence[" +
                                       std::to_string(p.evidence.size() - 1) + "].text"))
        << describe(out);
}

TEST(LongHop, CorrectLettersAreSpreadOverAllChoices) {
    std::map<std::string, int> letters;
    for (const auto& p : default_scenario().probes) {
        ++letters[p.correct_choice];
        EXPECT_EQ(p.choices[static_cast<std::size_t>(p.correct_choice[0] - 'A')], p.answer);
        EXPECT_EQ(p.answer, p.meta.at("chain").back().get<std::string>());
    }
    for (const char* l : {"A", "B", "C", "D", "E"})
        EXPECT_GE(letters[l], 8) << l;
}

TEST(LongHop, NoFactRepeatsAndAnchorsAreUnique) {
    std::set<std::string> facts, anchors;
    for (const auto& p : default_scenario().probes) {
        for (const auto& f : p.evidence)
            EXPECT_TRUE(facts.insert(text::normalize(f.text)).second) << f.text;
        for (const auto& a : p.meta.at("chain"))
            EXPECT_TRUE(anchors.insert(text::normalize(a.get<std::string>())).second);
    }
    EXPECT_EQ(facts.size(), 274u);
    const auto& dedup = default_scenario().meta.at("dedup");
    EXPECT_EQ(dedup.at("key"), "fact");
    EXPECT_DOUBLE_EQ(dedup.at("threshold").get<double>(), 0.7);
    EXPECT_EQ(dedup.at("kept").get<std::size_t>(), 274u);
}

TEST(LongHop, AnchorsStayInsideTheirOwnChain) {
    const auto& probes = default_scenario().probes;
    for (std::size_t i = 0; i < probes.size(); ++i)
        for (const auto& a : probes[i].meta.at("chain"))
            for (std::size_t k = 0; k < probes.size(); ++k) {
                if (k == i)
                    continue;
                for (const auto& f : probes[k].evidence)
                    EXPECT_FALSE(text::contains_phrase(f.text, a.get<std::string>()))
                        << probes[i].id << " anchor '" << a << "' in " << probes[k].id;
            }
}

TEST(LongHop, DistractorsAreShapedLikeTheAnswerAndOffTheChain) {
    for (const auto& p : default_scenario().probes) {
        const std::size_t answer_words = text::words(p.answer).size();
        std::set<std::string> seen;
        for (const auto& c : p.choices) {
            EXPECT_TRUE(seen.insert(text::normalize(c)).second) << p.id;
            if (c == p.answer)
                continue;
            const std::size_t words = text::words(c).size();
            EXPECT_LE(words > answer_words ? words - answer_words : answer_words - words, 3u)
                << p.id << ": " << c;
            for (const auto& f : p.evidence)
                EXPECT_FALSE(text::contains_phrase(f.text, c)) << p.id << ": " << c;
        }
    }
}

TEST(LongHop, SentencesReadCleanly) {
    const std::regex leftover(R"([{}\[\]<>|])");
    const std::regex repeated_verb(R"(\b(take|make|go|do)s? (the )?time to \1\b)");
    // No lexicon thing ending in "s" is singular, so this catches "salted pistachios is".
    const std::regex plural_is(R"(s is (his|her) favorite)");
    const std::regex bad_article(R"(\b[Aa] [aeio])");
    const std::regex doubled(R"(\b(\w+) \1\b)");
    for (const auto& p : default_scenario().probes) {
        const bool named = p.meta.at("voice") == "named";
        const std::string head = p.meta.at("chain")[0].get<std::string>();
        std::vector<std::string> texts = {p.question};
        for (const auto& f : p.evidence)
            texts.push_back(f.text);
        for (const auto& c : p.choices)
            texts.push_back(c);
        for (const auto& t : texts) {
            EXPECT_FALSE(std::regex_search(t, leftover)) << t;
            EXPECT_FALSE(std::regex_search(t, bad_article)) << t;
            EXPECT_FALSE(std::regex_search(t, doubled)) << t;
            EXPECT_FALSE(std::regex_search(t, repeated_verb)) << t;
            EXPECT_FALSE(std::regex_search(t, plural_is)) << t;
        }
        EXPECT_TRUE(text::ends_with(p.question, "?")) << p.question;
        for (const auto& f : p.evidence) {
            EXPECT_TRUE(text::ends_with(f.text, ".")) << f.text;
            EXPECT_TRUE(std::isupper(static_cast<unsigned char>(f.text[0]))) << f.text;
            // Self-contained: a named chain repeats the name in every fact; a first-person chain
            // has no third-person pronoun whose antecedent would sit in another fact.
            if (named)
                EXPECT_TRUE(text::contains_phrase(f.text, head)) << f.text;
            else
                for (const char* pronoun : {"he", "she", "him", "his", "her", "they", "it"})
                    EXPECT_FALSE(text::contains_phrase(f.text, pronoun)) << f.text;
        }
    }
}

TEST(LongHopLexicon, IsLargeAndUnique) {
    EXPECT_GE(lh::anchor_lexicon_size(), 500u);
    std::set<std::string> anchors;
    auto add = [&](const std::string& t) { EXPECT_TRUE(anchors.insert(text::normalize(t)).second) << t; };
    for (const auto& e : lh::moment_anchors())
        add(e.text);
    for (const auto& e : lh::act_anchors())
        add(e.text);
    for (const auto& e : lh::feel_anchors())
        add(e.text);
    for (const auto& e : lh::thing_anchors())
        add(e.text);
    EXPECT_EQ(anchors.size(), lh::anchor_lexicon_size());
    std::set<std::string> names;
    for (const auto& person : lh::people())
        EXPECT_TRUE(names.insert(person.name).second) << person.name;
    // Relations are symmetric, so checking either side of a chain blocks the pair.
    bool found = false;
    for (const std::string& r : lh::related_topics("tired"))
        found = found || r == "exercise";
    EXPECT_TRUE(found);
}

// The release's main retrieval trait: 40% of its chains are about a named person. The share is exact
// per hop count (round(share x chains of that K)), so it cannot drift with the seed.
TEST(LongHop, NamedShareFollowsTheSetting) {
    for (std::uint64_t seed : {42ull, 1ull, 4242ull}) {
        const Scenario s = mf::generate_long_hop({seed});
        std::map<std::size_t, std::size_t> named_per_hops;
        for (const auto& p : s.probes)
            named_per_hops[hops_of(p)] += named(p);
        EXPECT_EQ(named_per_hops[1], 12u) << seed;  // round(0.4 x 31)
        EXPECT_EQ(named_per_hops[2], 13u) << seed;  // round(0.4 x 32)
        EXPECT_EQ(named_per_hops[3], 12u) << seed;  // round(0.4 x 29)
        EXPECT_DOUBLE_EQ(s.meta.at("settings").at("long_hop.named_share").get<double>(), 0.4);
    }
    EXPECT_DOUBLE_EQ(mf::LongHopSettings{}.named_share, 0.4);
    for (double share : {0.0, 0.25, 0.6, 1.0}) {
        const Scenario s = with_named_share(share);
        std::size_t n = 0;
        for (const auto& p : s.probes)
            n += named(p);
        const double expected = share * 92.0;
        EXPECT_NEAR(static_cast<double>(n), expected, 1.5) << share;
        EXPECT_DOUBLE_EQ(s.meta.at("settings").at("long_hop.named_share").get<double>(), share);
    }
}

// A named chain names its person in every fact (the release's "the name finds every fact" trait) and
// in its question, never says "I"; a first-person chain says "I", "me" or "my" in every fact.
TEST(LongHop, NamedChainsNameTheirPersonInEveryFact) {
    for (const Scenario& s : {default_scenario(), with_named_share(1.0, 7)}) {
        std::size_t named_chains = 0;
        for (const auto& p : s.probes) {
            const std::string head = p.meta.at("chain")[0].get<std::string>();
            if (named(p)) {
                ++named_chains;
                EXPECT_TRUE(std::isupper(static_cast<unsigned char>(head[0]))) << p.id << ": " << head;
                EXPECT_TRUE(text::contains_phrase(p.question, head)) << p.id << ": " << p.question;
                for (const auto& f : p.evidence) {
                    EXPECT_TRUE(text::contains_phrase(f.text, head)) << p.id << ": " << f.text;
                    EXPECT_FALSE(first_person_word(f.text)) << p.id << ": " << f.text;
                }
            } else {
                for (const auto& f : p.evidence)
                    EXPECT_TRUE(first_person_word(f.text)) << p.id << ": " << f.text;
            }
        }
        EXPECT_GT(named_chains, 30u);
    }
}

// Each person heads one chain only, so a name leads to one chain.
TEST(LongHop, EveryPersonHeadsOneChain) {
    std::set<std::string> people;
    for (const auto& p : with_named_share(1.0).probes) {
        ASSERT_TRUE(named(p)) << p.id;
        EXPECT_TRUE(people.insert(p.meta.at("chain")[0].get<std::string>()).second) << p.id;
    }
    EXPECT_EQ(people.size(), 92u);
}

TEST(LongHop, ValidatorPassesForSeveralSeedsAndSettings) {
    for (std::uint64_t seed : {3ull, 11ull, 99ull, 123456ull})
        for (double share : {0.0, 0.4, 1.0}) {
            const auto vs = all_violations(with_named_share(share, seed));
            EXPECT_TRUE(vs.empty()) << "seed " << seed << " named_share " << share << "\n" << describe(vs);
        }
}

// Facts do not all read alike: over the dataset they open in many different ways.
TEST(LongHop, FactsUseSeveralPhrasings) {
    std::set<std::string> openings;
    for (const auto& p : default_scenario().probes) {
        for (const auto& f : p.evidence) {
            const auto w = text::words(f.text);
            openings.insert(w[0] + " " + (named(p) ? std::string() : w[1]));
        }
    }
    EXPECT_GE(openings.size(), 40u);
}

TEST(LongHopLexicon, EveryLinkHasSeveralParaphraseFamilies) {
    const auto& lex = lh::lexicon();
    std::map<std::string, std::set<std::string>> families;  // "named thing>act" -> families
    for (const auto& t : lex.facts)
        families[std::string(t.named ? "named " : "first_person ") + lh::kind_name(t.from) + ">" + lh::kind_name(t.to)]
            .insert(t.family);
    EXPECT_EQ(families.size(), 16u);  // 10 first-person links, 6 named ones
    for (const auto& [link, fams] : families)
        EXPECT_GE(fams.size(), 2u) << link;
    // Enough people and categorised things for a dataset of named chains only.
    std::size_t favorites = 0;
    for (const auto& t : lex.things)
        favorites += !t.category.empty();
    EXPECT_GE(lex.people.size(), 100u);
    EXPECT_GE(favorites, 100u);
}

TEST(LongHopLexicon, BadFieldsAreNamedByFileAndJsonPath) {
    const nlohmann::json doc = nlohmann::json::parse(lh::embedded_lexicon_text());
    ASSERT_TRUE(lh::parse_lexicon("long_hop.json", doc.dump())) << "the embedded lexicon parses";
    struct Case {
        std::function<void(nlohmann::json&)> corrupt;
        std::string path;
    };
    const Case cases[] = {
        {[](nlohmann::json& d) { d["anchors"]["moments"][0]["plural"] = "yes"; }, "$.anchors.moments[0].plural"},
        {[](nlohmann::json& d) { d["anchors"]["acts"][2].erase("topic"); }, "$.anchors.acts[2].topic"},
        {[](nlohmann::json& d) { d["people"][1]["pronoun"] = "they"; }, "$.people[1].pronoun"},
        {[](nlohmann::json& d) { d["facts"][0]["first_person"][0] = "I usually {b}."; }, "$.facts[0].first_person[0]"},
        {[](nlohmann::json& d) { d["facts"][0]["first_person"][1] = "{Lead}, I {bb}."; }, "$.facts[0].first_person[1]"},
        {[](nlohmann::json& d) { d["facts"][1]["link"] = "moment>person"; }, "$.facts[1].link"},
        {[](nlohmann::json& d) { d["questions"][0]["templates"][0] = "What do I end up doing?"; },
         "$.questions[0].templates[0]"},
        {[](nlohmann::json& d) { d["anchors"]["feelings"][0]["text"] = d["anchors"]["acts"][0]["text"]; },
         "$.anchors.feelings[0].text"},
    };
    for (const auto& c : cases) {
        nlohmann::json bad = doc;
        c.corrupt(bad);
        const auto r = lh::parse_lexicon("long_hop.json", bad.dump());
        ASSERT_FALSE(r) << c.path;
        const std::string where = r.error().describe();
        EXPECT_NE(where.find("long_hop.json: " + c.path), std::string::npos) << where;
    }
    EXPECT_FALSE(lh::parse_lexicon("long_hop.json", "[1, 2]"));
}

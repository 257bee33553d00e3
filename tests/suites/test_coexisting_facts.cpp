// SPDX-License-Identifier: MIT
// Coexisting-Facts lexicon, generator and rules: shapes, determinism, rules, planted corruptions.
// Set MEMFAIL_PRINT_SAMPLES=<n> to print the first n rows of the default seed for reading.
#include "suite_test_util.hpp"
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/memfail/coexisting_lexicon.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace mf = memfail::suites::memfail_suite;
namespace cx = memfail::suites::memfail_suite::coexisting;
using memfail::data::Scenario;
using memfail::data::Violation;
namespace text = memfail::text;

using memfail::testing::all_violations;
using memfail::testing::describe;
using memfail::testing::has_violation;

namespace {

const Scenario& default_scenario() {
    static const Scenario s = mf::generate_coexisting_facts({});
    return s;
}

bool names_preference(const std::string& s, const cx::Preference& p) {
    for (const auto& v : p.variants)
        if (text::contains_phrase(s, v)) return true;
    return false;
}

// Every template a category can use: its own, plus the shared ones when they suit it.
std::vector<std::string> templates_of(const cx::Category& c) {
    std::vector<std::string> out = c.statement_templates;
    if (c.general_templates)
        out.insert(out.end(), cx::general_statement_templates().begin(), cx::general_statement_templates().end());
    return out;
}

}  // namespace

// ---- Lexicon ----

TEST(CoexistingLexicon, HasTheHundredPaperCategoriesWithRichPools) {
    const auto& cats = cx::categories();
    ASSERT_EQ(cats.size(), 100u);
    std::set<std::string> names;
    for (const auto& c : cats) {
        EXPECT_TRUE(names.insert(c.name).second) << "duplicate category " << c.name;
        EXPECT_GE(c.preferences.size(), 6u) << c.name;
        EXPECT_GE(c.questions.size(), 2u) << c.name;
        // Five statements per row must all use distinct templates.
        EXPECT_GE(templates_of(c).size(), 5u) << c.name;
        std::set<std::string> canon;
        for (const auto& p : c.preferences) {
            EXPECT_TRUE(canon.insert(text::normalize(p.canonical)).second) << c.name << ": " << p.canonical;
            ASSERT_FALSE(p.variants.empty());
            EXPECT_EQ(p.variants[0], p.canonical);
        }
    }
    // A few names straight from the paper's table, spread over its groups.
    for (const char* expected : {"foods", "hat styles", "music genres", "sports to watch on TV", "types of naps",
                                 "astrology interests", "budget planning methods", "language learning methods"})
        EXPECT_TRUE(names.count(expected)) << expected;
}

TEST(CoexistingLexicon, PreferencesOfACategoryNeverContainEachOther) {
    for (const auto& c : cx::categories())
        for (std::size_t i = 0; i < c.preferences.size(); ++i)
            for (std::size_t j = 0; j < c.preferences.size(); ++j) {
                if (i == j) continue;
                for (const auto& v : c.preferences[i].variants)
                    EXPECT_FALSE(names_preference(v, c.preferences[j]))
                        << c.name << ": '" << v << "' contains '" << c.preferences[j].canonical << "'";
            }
}

TEST(CoexistingLexicon, EveryStatementNamesItsOwnPreferenceAndNoOther) {
    for (const auto& c : cx::categories())
        for (const auto& t : templates_of(c))
            for (const auto& p : c.preferences) {
                const std::string s = cx::render_statement(t, p, c);
                EXPECT_EQ(s.find('{'), std::string::npos) << s;
                EXPECT_TRUE(names_preference(s, p)) << s;
                const auto lead = static_cast<unsigned char>(s[0]);
                EXPECT_TRUE(std::isupper(lead) || std::isdigit(lead)) << s;
                for (const auto& other : c.preferences) {
                    if (&other == &p) continue;
                    EXPECT_FALSE(names_preference(s, other)) << c.name << ": " << s;
                }
            }
}

TEST(CoexistingLexicon, QuestionsNameNoPreferenceOfTheirCategory) {
    for (const auto& c : cx::categories()) {
        std::vector<std::string> qs = c.questions;
        for (const auto& t : cx::fallback_question_templates()) qs.push_back(cx::render_question(t, c));
        for (const auto& q : qs) {
            EXPECT_EQ(q.find('{'), std::string::npos) << q;
            EXPECT_TRUE(text::ends_with(q, "?")) << q;
            for (const auto& p : c.preferences) EXPECT_FALSE(names_preference(q, p)) << c.name << ": " << q;
        }
    }
}

TEST(CoexistingLexicon, AgreementFollowsTheNumberOfThePhrase) {
    const cx::Category& c = cx::categories().front();
    cx::Preference one{"jazz", "jazz", false, {"jazz"}};
    cx::Preference many{"fedora", "fedoras", true, {"fedora", "fedoras"}};
    EXPECT_EQ(cx::render_statement("{P} {is} fine and {has} {s}.", one, c), "Jazz is fine and has s.");
    EXPECT_EQ(cx::render_statement("{P} {is} fine and {has} {s}.", many, c), "Fedoras are fine and have .");
    EXPECT_EQ(cx::render_statement("my next {c}", many, c), "my next fedora");
}

// ---- Generator ----

TEST(CoexistingFacts, SameSeedSameJsonDifferentSeedDiffers) {
    const auto a = memfail::data::to_json(mf::generate_coexisting_facts({7})).dump();
    const auto b = memfail::data::to_json(mf::generate_coexisting_facts({7})).dump();
    const auto c = memfail::data::to_json(mf::generate_coexisting_facts({8})).dump();
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}

TEST(CoexistingFacts, HasOneRowPerCategoryWithTwoToFivePreferences) {
    const Scenario& s = default_scenario();
    EXPECT_EQ(s.dataset, "coexisting_facts");
    EXPECT_EQ(s.suite, "memfail");
    ASSERT_EQ(s.probes.size(), 100u);
    std::size_t statements = 0;
    std::map<std::size_t, std::size_t> by_n;
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const auto& p = s.probes[i];
        char id[32];
        std::snprintf(id, sizeof id, "cof-%03zu", i + 1);
        EXPECT_EQ(p.id, id);
        EXPECT_EQ(p.kind, memfail::data::ProbeKind::list);
        EXPECT_EQ(p.meta["category"], cx::categories()[i].name);
        const auto n = p.meta["n"].get<std::size_t>();
        EXPECT_GE(n, 2u);
        EXPECT_LE(n, 5u);
        EXPECT_EQ(p.evidence.size(), n);
        EXPECT_EQ(p.meta["preferences"].size(), n);
        EXPECT_EQ(p.after_session, s.sessions.back().id);
        statements += n;
        ++by_n[n];
    }
    // One session with one user message per statement.
    EXPECT_EQ(s.sessions.size(), statements);
    for (const auto& session : s.sessions) {
        ASSERT_EQ(session.messages.size(), 1u);
        EXPECT_EQ(session.messages[0].role, "user");
    }
    // N is drawn uniformly: every value occurs, none dominates.
    for (std::size_t n = 2; n <= 5; ++n) {
        EXPECT_GE(by_n[n], 10u) << "n=" << n;
        EXPECT_LE(by_n[n], 40u) << "n=" << n;
    }
}

TEST(CoexistingFacts, GeneratedDataHasNoViolations) {
    for (std::uint64_t seed : {42ULL, 1ULL, 2026ULL}) {
        const Scenario s = mf::generate_coexisting_facts({seed});
        const auto vs = all_violations(s);
        EXPECT_TRUE(vs.empty()) << "seed " << seed << ":\n" << describe(vs);
    }
}

TEST(CoexistingFacts, NoPreferenceRepeatsWithinARowAndQuestionsAreDistinct) {
    const Scenario& s = default_scenario();
    std::set<std::string> questions;
    for (const auto& p : s.probes) {
        std::set<std::string> prefs;
        for (const auto& v : p.meta["preferences"]) EXPECT_TRUE(prefs.insert(v.get<std::string>()).second) << p.id;
        EXPECT_TRUE(questions.insert(text::normalize(p.question)).second) << p.id << ": " << p.question;
        // The answer is exactly the canonical preferences in order.
        std::vector<std::string> canon;
        for (const auto& v : p.meta["preferences"]) canon.push_back(v.get<std::string>());
        EXPECT_EQ(p.answer, text::join(canon, ", "));
    }
}

TEST(CoexistingFacts, StatementsOfARowUseDistinctTemplatesAndVaryAcrossTheDataset) {
    const Scenario& s = default_scenario();
    // Opening three words of every statement: a crude template fingerprint.
    std::map<std::string, std::size_t> openings;
    for (const auto& p : s.probes) {
        std::set<std::string> texts;
        for (const auto& f : p.evidence) {
            EXPECT_TRUE(texts.insert(f.text).second) << p.id;
            const auto w = text::words(f.text);
            ++openings[w.size() >= 3 ? w[0] + " " + w[1] + " " + w[2] : f.text];
        }
    }
    std::size_t most = 0;
    for (const auto& [k, count] : openings) most = std::max(most, count);
    EXPECT_GE(openings.size(), 150u);
    EXPECT_LE(most, 25u) << "one opening dominates the statements";
}

TEST(CoexistingFacts, StatementsOfARowAreScatteredAcrossSessions) {
    const Scenario& s = default_scenario();
    const memfail::data::MessageIndex index(s);
    std::size_t adjacent_rows = 0;
    for (const auto& p : s.probes) {
        std::vector<std::size_t> positions;
        for (const auto& f : p.evidence) positions.push_back(index.session_position(index.session_of(f.message_ids[0])->id));
        std::sort(positions.begin(), positions.end());
        if (positions.back() - positions.front() + 1 == positions.size()) ++adjacent_rows;
    }
    EXPECT_LT(adjacent_rows, 10u) << "rows should not arrive as consecutive blocks";
}

TEST(CoexistingFacts, RecordsTheQuestionDedup) {
    const Scenario& s = default_scenario();
    ASSERT_TRUE(s.meta.contains("dedup"));
    EXPECT_EQ(s.meta["dedup"]["key"], "question");
    EXPECT_DOUBLE_EQ(s.meta["dedup"]["threshold"].get<double>(), 0.7);
    EXPECT_EQ(s.meta["dedup"]["kept"].get<std::size_t>(), 100u);
    EXPECT_GE(s.meta["dedup"]["candidates"].get<std::size_t>(), 100u);
}

// ---- Rules catch planted corruptions ----

TEST(CoexistingFactsRules, CatchAQuestionNamingAPreference) {
    Scenario s = default_scenario();
    const std::string pref = s.probes[3].evidence[1].key_details[0].variants[0];
    s.probes[3].question += " Should " + pref + " be on the list?";
    EXPECT_TRUE(has_violation(all_violations(s), "probes[3].question"));
}

TEST(CoexistingFactsRules, CatchASessionHoldingTwoPreferences) {
    Scenario s = default_scenario();
    auto& probe = s.probes[10];
    const std::string other_statement = probe.evidence[1].text;
    const std::string target = probe.evidence[0].message_ids[0];
    for (auto& session : s.sessions)
        for (auto& m : session.messages)
            if (m.id == target) m.content += " " + other_statement;
    EXPECT_TRUE(has_violation(all_violations(s), "probes[10].evidence[0].message_ids[0]"));
}

TEST(CoexistingFactsRules, CatchTwoFactsSharingASession) {
    Scenario s = default_scenario();
    auto& probe = s.probes[20];
    // Both facts cite the first statement's message: a shared session (and a key detail mismatch).
    probe.evidence[1].message_ids = probe.evidence[0].message_ids;
    EXPECT_TRUE(has_violation(all_violations(s), "probes[20].evidence[1].message_ids[0]"));
}

TEST(CoexistingFactsRules, CatchAWrongN) {
    Scenario s = default_scenario();
    s.probes[5].meta["n"] = 6;
    const auto n = s.probes[6].meta["n"].get<int>();
    s.probes[6].meta["n"] = n == 2 ? 3 : n - 1;  // in range but not the evidence count
    const auto vs = all_violations(s);
    EXPECT_TRUE(has_violation(vs, "probes[5].meta.n"));
    EXPECT_TRUE(has_violation(vs, "probes[6].meta.n"));
}

TEST(CoexistingFactsRules, CatchARepeatedCategoryAndAnIncompleteAnswer) {
    Scenario s = default_scenario();
    s.probes[9].meta["category"] = s.probes[8].meta["category"];
    const std::string first = s.probes[12].meta["preferences"][0].get<std::string>();
    s.probes[12].answer = text::replace_all(s.probes[12].answer, first, "something else");
    const auto vs = all_violations(s);
    EXPECT_TRUE(has_violation(vs, "probes[9].meta.category"));
    EXPECT_TRUE(has_violation(vs, "probes[12].answer"));
}

TEST(CoexistingFactsRules, CatchAMissingRow) {
    Scenario s = default_scenario();
    s.probes.pop_back();
    EXPECT_TRUE(has_violation(all_violations(s), "probes"));
}

// SPDX-License-Identifier: MIT
// `memfail datasets stats`: the paper's Table 2 figures, computed on the generated datasets (counts
// per N and K equal what the generator produced, the yes/no split equals the probes' answers) and on
// the release-shaped fixture after import (the importer's voice label, ambiguous probes not graded).
#include <memfail/core/text.hpp>
#include <memfail/suites/memfail/generators.hpp>
#include <memfail/suites/memfail/import_csv.hpp>
#include <memfail/suites/memfail/stats.hpp>

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace memfail::suites::memfail_suite {
namespace {

// Whitespace words stand in for tokens here (the tokenizer is tested in tests/text).
std::size_t word_count(std::string_view text) {
    std::size_t n = 0;
    bool in_word = false;
    for (char c : text) {
        const bool space = c == ' ' || c == '\n' || c == '\t';
        n += !space && !in_word;
        in_word = !space;
    }
    return n;
}

const data::Scenario& generated(const std::string& name) {
    static std::map<std::string, data::Scenario> cache;
    auto it = cache.find(name);
    if (it == cache.end()) it = cache.emplace(name, generate_dataset(name, {42}).value()).first;
    return it->second;
}

TEST(DatasetStats, CommonFiguresCountEntriesProbesAndTokens) {
    const auto& s = generated("conditional_facts_easy");
    const auto st = dataset_stats(s, word_count);
    EXPECT_EQ(st.dataset, "conditional_facts_easy");
    EXPECT_EQ(st.sessions, static_cast<std::int64_t>(s.sessions.size()));
    EXPECT_EQ(st.messages, static_cast<std::int64_t>(data::message_count(s)));
    EXPECT_EQ(st.probes, 100);
    EXPECT_EQ(st.graded, 100);
    double words = 0;
    for (const auto& session : s.sessions)
        for (const auto& m : session.messages) words += static_cast<double>(word_count(m.content));
    ASSERT_TRUE(st.mean_entry_tokens.has_value());
    EXPECT_DOUBLE_EQ(*st.mean_entry_tokens, words / static_cast<double>(s.sessions.size()));
    // Without a counter no token figure is made up.
    const auto untokenised = dataset_stats(s);
    EXPECT_FALSE(untokenised.mean_entry_tokens.has_value());
    EXPECT_TRUE(stats_json(untokenised)["entries"]["mean_tokens"].is_null());
}

// Table 2's "mean tokens per dataset entry" counts an entry with its graded questions: a
// Conditional or Persona essay with the question(s) asked of it, a Long-Hop chain's facts with its
// question and the options appended as the release's graded_question holds them.
TEST(DatasetStats, Table2CountsAnEntryWithItsGradedQuestions) {
    for (const char* name : {"conditional_facts_hard", "persona_retrieval"}) {
        const auto& s = generated(name);
        const auto st = dataset_stats(s, word_count);
        double words = 0;
        for (const auto& session : s.sessions)
            for (const auto& m : session.messages) words += static_cast<double>(word_count(m.content));
        for (const auto& p : s.probes) words += static_cast<double>(word_count(p.question));
        ASSERT_TRUE(st.table2_entry_tokens.has_value()) << name;
        EXPECT_DOUBLE_EQ(*st.table2_entry_tokens, words / static_cast<double>(s.sessions.size())) << name;
        EXPECT_GT(*st.table2_entry_tokens, *st.mean_entry_tokens) << name;
        EXPECT_EQ(stats_json(st)["entries"]["table2_mean_tokens"], *st.table2_entry_tokens);
    }
    const auto& lh = generated("long_hop");
    const auto st = dataset_stats(lh, word_count);
    std::map<std::int64_t, double> entry;
    std::map<std::int64_t, int> rows;
    for (const auto& p : lh.probes) {
        const std::int64_t k = p.meta.at("hops").get<std::int64_t>();
        double w = static_cast<double>(word_count(p.question)) + 1;  // "Options:"
        for (const auto& c : p.choices) w += 1 + static_cast<double>(word_count(c));  // "A." and the option
        for (const auto& f : p.evidence)
            for (const auto& sentence : f.statements) w += static_cast<double>(word_count(sentence));
        entry[k] += w;
        ++rows[k];
    }
    for (const auto& [k, g] : st.by_hops) {
        ASSERT_TRUE(g.mean_entry_tokens.has_value());
        EXPECT_DOUBLE_EQ(*g.mean_entry_tokens, entry[k] / rows[k]) << k;
    }
    EXPECT_FALSE(dataset_stats(lh, word_count).table2_entry_tokens.has_value());  // per K instead
}

TEST(DatasetStats, ConditionalSplitEqualsTheProbesAnswersAndLabels) {
    for (const char* name : {"conditional_facts_easy", "conditional_facts_hard"}) {
        const auto& s = generated(name);
        const auto st = dataset_stats(s, word_count);
        std::int64_t yes = 0, no = 0;
        std::set<std::string> types;
        for (const auto& p : s.probes) {
            const auto words = text::words(p.answer);
            ASSERT_FALSE(words.empty()) << p.id;
            yes += words[0] == "yes";
            no += words[0] == "no";
            EXPECT_EQ(p.meta.at("condition_met").get<std::string>(), words[0]) << p.id;
            types.insert(p.meta.at("condition_type").get<std::string>());
        }
        EXPECT_EQ(st.yes, yes) << name;
        EXPECT_EQ(st.no, no) << name;
        EXPECT_EQ(st.yes + st.no, 100) << name;
        EXPECT_EQ(st.unreadable, 0) << name;
        EXPECT_EQ(st.condition_met_mismatch, 0) << name;
        EXPECT_EQ(st.condition_types.size(), types.size()) << name;
        EXPECT_GE(st.condition_types.size(), 20u) << name;  // the paper used 27 of its 32 types
        const auto j = stats_json(st);
        EXPECT_EQ(j["yes_no"]["yes"], yes);
        EXPECT_EQ(j["condition_types"]["count"], types.size());
    }
    // Easy and Hard share their specs: the same split.
    EXPECT_EQ(dataset_stats(generated("conditional_facts_easy")).yes, dataset_stats(generated("conditional_facts_hard")).yes);
}

TEST(DatasetStats, CoexistingRowsAndFactsPerNAreTheGenerators) {
    const auto& s = generated("coexisting_facts");
    const auto st = dataset_stats(s, word_count);
    std::map<std::int64_t, std::int64_t> rows;
    std::map<std::int64_t, double> fact_words;
    for (const auto& p : s.probes) {
        const auto n = p.meta.at("n").get<std::int64_t>();
        ++rows[n];
        for (const auto& f : p.evidence)
            for (const auto& statement : f.statements) fact_words[n] += static_cast<double>(word_count(statement));
    }
    ASSERT_EQ(st.by_n.size(), rows.size());
    std::int64_t total = 0;
    for (const auto& [n, g] : st.by_n) {
        EXPECT_GE(n, 2);
        EXPECT_LE(n, 5);
        EXPECT_EQ(g.rows, rows[n]) << n;
        EXPECT_EQ(g.facts, n * g.rows) << n;
        ASSERT_TRUE(g.mean_fact_tokens.has_value());
        EXPECT_DOUBLE_EQ(*g.mean_fact_tokens, fact_words[n] / static_cast<double>(g.rows)) << n;
        total += g.rows;
    }
    EXPECT_EQ(total, 100);
    // More preferences, more to store.
    EXPECT_LT(*st.by_n.at(2).mean_fact_tokens, *st.by_n.at(5).mean_fact_tokens);
}

TEST(DatasetStats, LongHopChainsPerKMatchTheDocumentedSplit) {
    const auto& s = generated("long_hop");
    const auto st = dataset_stats(s, word_count);
    // docs/DATASETS.md: 92 chains, K = 1/2/3 as 31/32/29, 274 facts (K + 1 per chain).
    ASSERT_EQ(st.by_hops.size(), 3u);
    EXPECT_EQ(st.by_hops.at(1).rows, 31);
    EXPECT_EQ(st.by_hops.at(2).rows, 32);
    EXPECT_EQ(st.by_hops.at(3).rows, 29);
    for (const auto& [k, g] : st.by_hops) EXPECT_EQ(g.facts, (k + 1) * g.rows) << k;
    EXPECT_EQ(st.facts, 274);
    std::map<std::string, std::int64_t> voices;
    for (const auto& p : s.probes) ++voices[p.meta.at("voice").get<std::string>()];
    EXPECT_EQ(st.voices, voices);
    EXPECT_GT(st.voices.at("first_person"), st.voices.at("named"));
    EXPECT_LT(*st.by_hops.at(1).mean_fact_tokens, *st.by_hops.at(3).mean_fact_tokens);
}

TEST(DatasetStats, PersonaShareOfMisleadingQuestions) {
    const auto& s = generated("persona_retrieval");
    const auto st = dataset_stats(s, word_count);
    std::int64_t abstain = 0;
    for (const auto& p : s.probes) abstain += p.kind == data::ProbeKind::abstain;
    EXPECT_EQ(st.probes, 300);
    EXPECT_EQ(st.graded, 300);
    EXPECT_EQ(st.misleading, abstain);
    EXPECT_EQ(st.abstain, abstain);
    const auto j = stats_json(st);
    EXPECT_DOUBLE_EQ(j["misleading"]["share"].get<double>(), static_cast<double>(abstain) / 300.0);
    EXPECT_NE(stats_text(st, "words").find("misleading       " + std::to_string(abstain) + " of 300"), std::string::npos);
}

TEST(DatasetStats, ImportedReleaseFixture) {
    auto imported = import_memfail_csv_dir(std::string(MEMFAIL_TEST_FIXTURES) + "/memfail-csv-release");
    ASSERT_TRUE(imported.has_value()) << imported.error().describe();
    std::set<std::string> seen;
    for (const auto& s : imported->first) {
        seen.insert(s.dataset);
        const auto st = dataset_stats(s, word_count);
        EXPECT_EQ(st.probes, static_cast<std::int64_t>(s.probes.size())) << s.dataset;
        EXPECT_EQ(st.graded + st.ambiguous, st.probes) << s.dataset;
        if (s.dataset == "long_hop") {
            // Facts bin-packed into conversations, as the paper's harness stores them.
            EXPECT_LT(st.sessions, st.facts);
            std::int64_t chains = 0;
            for (const auto& [k, g] : st.by_hops) {
                EXPECT_EQ(g.facts, (k + 1) * g.rows) << k;
                chains += g.rows;
            }
            EXPECT_EQ(chains, st.probes);
            // The importer labels the voice: "I"/"my" chains are first person, Esme's chain is named.
            for (const auto& p : s.probes) {
                const auto id = p.meta.at("id").get<std::string>();
                if (id == "longhop-1hop-001" || id == "longhop-3hop-001") {
                    EXPECT_EQ(p.meta.at("voice"), "first_person") << id;
                }
                if (id == "longhop-2hop-001") {
                    EXPECT_EQ(p.meta.at("voice"), "named") << id;
                }
            }
            EXPECT_GT(st.voices.at("named"), 0);
            EXPECT_EQ(st.voices.count("unknown"), 0u);
        }
        if (s.dataset.rfind("conditional_facts", 0) == 0) {
            std::int64_t yes = 0, mismatch = 0;
            for (const auto& p : s.probes) {
                const auto words = text::words(p.answer);
                const bool says_yes = !words.empty() && words[0] == "yes";
                yes += says_yes;
                mismatch += !words.empty() && (words[0] == "yes" || words[0] == "no") &&
                            says_yes != p.meta.at("condition_met").get<bool>();
            }
            EXPECT_EQ(st.yes + st.no + st.unreadable, st.probes) << s.dataset;
            EXPECT_EQ(st.yes, yes) << s.dataset;
            EXPECT_EQ(st.condition_met_mismatch, mismatch) << s.dataset;
            EXPECT_GT(st.condition_types.size(), 0u) << s.dataset;
        }
        if (s.dataset == "persona_retrieval") {
            EXPECT_EQ(st.misleading, st.abstain);
            EXPECT_GT(st.ambiguous, 0);  // the fixture has a distractor who is a stored person
        }
        if (s.dataset == "coexisting_facts") {
            for (const auto& [n, g] : st.by_n) EXPECT_EQ(g.facts, n * g.rows) << n;
        }
    }
    EXPECT_EQ(seen.size(), 5u);
}

}  // namespace
}  // namespace memfail::suites::memfail_suite

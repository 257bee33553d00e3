// SPDX-License-Identifier: MIT
// Tests of the CSV reader and of importing the MemFail CSV release (fixtures in fixtures/memfail-csv,
// and in fixtures/memfail-csv-release the release's file names and traits), with a fuzzer.
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/memfail/conditional_lexicon.hpp>
#include <memfail/suites/memfail/csv.hpp>
#include <memfail/suites/memfail/import_csv.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include "suite_test_util.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;
namespace mf = memfail::suites::memfail_suite;
using memfail::data::ProbeKind;
using memfail::data::Scenario;

const std::string k_fixtures = std::string(MEMFAIL_TEST_FIXTURES) + "/memfail-csv";
const std::vector<std::string> k_datasets = {"conditional_facts_easy", "conditional_facts_hard",
                                             "coexisting_facts", "persona_retrieval", "long_hop"};

std::string fixture(const std::string& dataset) { return k_fixtures + "/" + dataset + ".csv"; }

using memfail::testing::ScratchDir;

Scenario import_fixture(const std::string& dataset, mf::ImportReport& report) {
    auto result = mf::import_memfail_csv_file(fixture(dataset), dataset, report);
    if (!result) ADD_FAILURE() << result.error().describe();
    return result ? *result : Scenario{};
}

std::vector<std::string> violations_of(const Scenario& s) {
    std::vector<memfail::data::Violation> found;
    memfail::data::validate_structure(s, 0, found);
    std::vector<std::string> out;
    for (const auto& v : found) out.push_back(memfail::data::format_violation(s.id, v));
    return out;
}

const memfail::data::Probe* probe_by_id(const Scenario& s, const std::string& id) {
    for (const auto& p : s.probes)
        if (p.id == id) return &p;
    return nullptr;
}

const memfail::data::KeyDetail* detail_named(const memfail::data::EvidenceFact& f, const std::string& name) {
    for (const auto& d : f.key_details)
        if (d.name == name) return &d;
    return nullptr;
}

const std::string k_easy_header =
    "entity,entity_category,behavior,condition_type,condition,entity_facts,question,question_context,"
    "condition_met,ground_truth_answer\n";

// ---------------------------------------------------------------------------------------------
// CSV reader

TEST(CsvReader, QuotedFieldsDoubledQuotesAndEmbeddedNewlines) {
    const std::string csv =
        "a,b,c\n"
        "1,\"x, y\",\"say \"\"hi\"\"\"\n"
        "2,\"line one\nline two\",z\n"
        "3,,\n";
    auto table = mf::parse_csv(csv, "t.csv");
    ASSERT_TRUE(table) << table.error().describe();
    ASSERT_EQ(table->header, (std::vector<std::string>{"a", "b", "c"}));
    ASSERT_EQ(table->records.size(), 3u);
    EXPECT_EQ(table->records[0].fields, (std::vector<std::string>{"1", "x, y", "say \"hi\""}));
    EXPECT_EQ(table->records[0].line, 2u);
    EXPECT_EQ(table->records[1].fields[1], "line one\nline two");
    EXPECT_EQ(table->records[1].line, 3u);
    // The record after a two-line field starts on physical line 5, not 4.
    EXPECT_EQ(table->records[2].line, 5u);
    EXPECT_EQ(table->records[2].fields, (std::vector<std::string>{"3", "", ""}));
}

TEST(CsvReader, CrlfBomAndBlankLines) {
    const std::string csv = "\xEF\xBB\xBFname,text\r\nAda,\"two\r\nlines\"\r\n\r\nBo,plain\r\n";
    auto table = mf::parse_csv(csv, "t.csv");
    ASSERT_TRUE(table) << table.error().describe();
    EXPECT_EQ(table->header[0], "name");  // no byte-order mark glued to the first name
    ASSERT_EQ(table->records.size(), 2u);
    EXPECT_EQ(table->records[0].fields[1], "two\nlines");
    EXPECT_EQ(table->records[1].fields[1], "plain");  // no stray '\r'
    EXPECT_EQ(table->records[1].line, 5u);
    EXPECT_TRUE(table->column_index("text").has_value());
    EXPECT_FALSE(table->column_index("missing").has_value());
}

TEST(CsvReader, LastLineWithoutNewlineAndTrailingEmptyField) {
    auto table = mf::parse_csv("a,b\n1,", "t.csv");
    ASSERT_TRUE(table) << table.error().describe();
    ASSERT_EQ(table->records.size(), 1u);
    EXPECT_EQ(table->records[0].fields, (std::vector<std::string>{"1", ""}));
}

TEST(CsvReader, UnterminatedQuoteNamesTheLineWhereItOpened) {
    auto table = mf::parse_csv("a,b\n1,2\n3,\"never closed\nmore text\n", "t.csv");
    ASSERT_FALSE(table);
    EXPECT_EQ(table.error().kind, memfail::ErrorKind::invalid_input);
    EXPECT_NE(table.error().describe().find("t.csv:3: column 'b'"), std::string::npos)
        << table.error().describe();
}

TEST(CsvReader, TextAfterAClosingQuoteIsAnError) {
    auto table = mf::parse_csv("a,b\n1,\"x\"y\n", "t.csv");
    ASSERT_FALSE(table);
    EXPECT_NE(table.error().describe().find("t.csv:2: column 'b'"), std::string::npos)
        << table.error().describe();
}

TEST(CsvReader, WrongFieldCountNamesTheLine) {
    auto table = mf::parse_csv("a,b\n1,2\n\"x\ny\",2,3\n", "t.csv");
    ASSERT_FALSE(table);
    EXPECT_NE(table.error().describe().find("t.csv:3"), std::string::npos) << table.error().describe();
    EXPECT_NE(table.error().describe().find("3 fields"), std::string::npos);
}

TEST(CsvReader, EmptyInputIsAnError) {
    EXPECT_FALSE(mf::parse_csv("", "t.csv"));
    EXPECT_FALSE(mf::parse_csv("\xEF\xBB\xBF\n\n", "t.csv"));
}

TEST(CsvReader, FixtureRecordsKnowTheirPhysicalLines) {
    // Row 2 of this fixture holds a pretty-printed JSON list over lines 3-7.
    auto table = mf::read_csv_file(fixture("coexisting_facts"));
    ASSERT_TRUE(table) << table.error().describe();
    ASSERT_EQ(table->records.size(), 3u);
    EXPECT_EQ(table->records[0].line, 2u);
    EXPECT_EQ(table->records[1].line, 3u);
    EXPECT_EQ(table->records[2].line, 8u);
    EXPECT_FALSE(mf::read_csv_file(k_fixtures + "/absent.csv"));
}

TEST(CsvColumns, MissingUnknownAndDuplicateColumns) {
    auto table = mf::parse_csv("id,behaviour,extra\n1,2,3\n", "t.csv");
    ASSERT_TRUE(table);
    auto missing = mf::check_columns(*table, {"id", "behavior"});
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().describe().find("t.csv:1: column 'behavior'"), std::string::npos);
    EXPECT_NE(missing.error().message.find("'behaviour'"), std::string::npos);  // the near miss

    auto unknown = mf::check_columns(*table, {"id"}, {"behaviour"});
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().describe().find("column 'extra'"), std::string::npos);

    auto twice = mf::parse_csv("id,id\n1,2\n", "t.csv");
    ASSERT_TRUE(twice);
    EXPECT_FALSE(mf::check_columns(*twice, {"id"}));
    EXPECT_TRUE(mf::check_columns(*table, {"id"}, {"behaviour", "extra"}));
}

// ---------------------------------------------------------------------------------------------
// Key-detail derivation

TEST(KeyDetails, LongestRunOfThePhraseWins) {
    const std::vector<std::string> essay = {"Juno writes secret riddles in a leather notebook.",
                                            "Her leather notebook has a brass clasp."};
    // "secret riddles in a leather notebook" (6 words) beats "leather notebook" (2).
    EXPECT_EQ(mf::longest_word_run("composes secret riddles in a leather notebook", essay, 2),
              "secret riddles in a leather notebook");
}

TEST(KeyDetails, RunsStartAndEndOnContentWords) {
    EXPECT_EQ(mf::longest_word_run("in the old boathouse", {"We met in the old boathouse."}, 2),
              "old boathouse");
    // Only stopwords match: nothing qualifies.
    EXPECT_EQ(mf::longest_word_run("when she is in the mood", {"She is in the garden."}, 2), "");
}

TEST(KeyDetails, RunsKeepTheSentenceSpellingAndNeverSpanSentences) {
    EXPECT_EQ(mf::longest_word_run("vira's anxiety level", {"By noon Vira\u2019s anxiety level rose."}, 2),
              "Vira\u2019s anxiety level");
    EXPECT_EQ(mf::longest_word_run("quiet harbour lights", {"It was quiet.", "Harbour lights flickered."}, 2),
              "Harbour lights");
    EXPECT_EQ(mf::longest_word_run("cold tea", {"I like tea."}, 2), "");
    EXPECT_EQ(mf::longest_word_run("cold tea", {"I like tea."}, 1), "tea");
}

TEST(KeyDetails, CraftedConditionalRowsUseRunThenRareWordThenWarn) {
    const std::string csv =
        k_easy_header +
        "Juno,person,composes secret riddles in a leather notebook,weather,whenever thunder rumbles,"
        "\"[\"\"Juno keeps a leather notebook by the window. Juno writes secret riddles in a leather "
        "notebook "
        "only when thunder rolls over the hills. Her cat hides under the bed.\"\"]\","
        "Thunder is rolling right now. Is Juno writing riddles?,thunder,yes,Yes \u2014 thunder sets her "
        "off.\n"
        "Rafe,person,juggles flaming torches,place,on the pier,"
        "\"[\"\"Rafe mends fishing nets on the pier every morning.\"\"]\","
        "Rafe is on the pier. Is he juggling?,on the pier,yes,Yes.\n";
    mf::ImportReport report;
    auto scenario = mf::import_memfail_csv_text(csv, "crafted.csv", "conditional_facts_easy", report);
    ASSERT_TRUE(scenario) << scenario.error().describe();
    ASSERT_EQ(scenario->probes.size(), 2u);

    const auto& fact = scenario->probes[0].evidence.at(0);
    ASSERT_NE(detail_named(fact, "behaviour"), nullptr);
    EXPECT_EQ(detail_named(fact, "behaviour")->variants,
              (std::vector<std::string>{"secret riddles in a leather notebook"}));
    // No two-word run of the condition occurs; its rarest content word present does.
    EXPECT_EQ(detail_named(fact, "condition")->variants, (std::vector<std::string>{"thunder"}));
    // Easy: the one sentence holding entity, behaviour and condition.
    EXPECT_EQ(fact.text,
              "Juno writes secret riddles in a leather notebook only when thunder rolls over the hills.");

    // Row 2's behaviour shares no content word with the essay: left out of the key details (so the
    // scenario stays valid), with a warning.
    const auto& lost = scenario->probes[1].evidence.at(0);
    EXPECT_EQ(detail_named(lost, "behaviour"), nullptr);
    std::vector<memfail::data::Violation> violations;
    memfail::data::validate_structure(*scenario, 1, violations);
    EXPECT_TRUE(violations.empty()) << memfail::data::format_violation("crafted", violations.front());
    ASSERT_EQ(report.warnings.size(), 1u);
    EXPECT_NE(
        report.warnings[0].find("crafted.csv:3: row 2: behaviour 'juggles flaming torches' not found in the "
                                "essay"),
        std::string::npos)
        << report.warnings[0];
    EXPECT_NE(report.warnings[0].find("left out of the key details"), std::string::npos);
}

TEST(KeyDetails, ConditionMetContradictingTheAnswerIsReported) {
    const std::string csv = k_easy_header +
                            "Lio,pet,barks at kites,weather,when it is windy,"
                            "\"[\"\"Lio barks at kites whenever it is windy.\"\"]\",Is Lio barking?,calm day,"
                            "no,Yes \u2014 he barks.\n";
    mf::ImportReport report;
    auto scenario = mf::import_memfail_csv_text(csv, "lio.csv", "conditional_facts_easy", report);
    ASSERT_TRUE(scenario) << scenario.error().describe();
    EXPECT_EQ(scenario->probes[0].meta.at("condition_met"), false);
    ASSERT_EQ(report.warnings.size(), 1u);
    EXPECT_NE(report.warnings[0].find("condition_met"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// The fixture files

TEST(ImportCsv, EveryFixtureImportsAndPassesStructuralValidation) {
    for (const auto& dataset : k_datasets) {
        SCOPED_TRACE(dataset);
        mf::ImportReport report;
        const Scenario s = import_fixture(dataset, report);
        EXPECT_EQ(violations_of(s), std::vector<std::string>{});
        EXPECT_EQ(s.id, dataset + "-imported");
        EXPECT_EQ(s.suite, "memfail");
        EXPECT_EQ(s.dataset, dataset);
        EXPECT_EQ(s.meta.at("source"), "memfail-csv");
        EXPECT_EQ(s.meta.at("file"), dataset + ".csv");
        EXPECT_EQ(s.meta.at("rows"), report.rows);
        EXPECT_EQ(report.probes, s.probes.size());
        ASSERT_FALSE(s.sessions.empty());
        for (const auto& session : s.sessions) {
            // One storage unit per conversation; Long-Hop's facts bin-packed, at most 5 a conversation.
            if (dataset == "long_hop") {
                ASSERT_GE(session.messages.size(), 1u);
                ASSERT_LE(session.messages.size(), 5u);
            } else {
                ASSERT_EQ(session.messages.size(), 1u);
            }
            for (const auto& m : session.messages) EXPECT_EQ(m.role, "user");
        }
        for (const auto& p : s.probes) EXPECT_EQ(p.after_session, s.sessions.back().id);
    }
}

TEST(ImportCsv, ConditionalEasyIsOneSessionAndOneYesNoProbePerRow) {
    mf::ImportReport report;
    const Scenario s = import_fixture("conditional_facts_easy", report);
    EXPECT_TRUE(report.warnings.empty());
    ASSERT_EQ(report.rows, 4u);
    ASSERT_EQ(s.sessions.size(), 4u);
    ASSERT_EQ(s.probes.size(), 4u);
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const auto& p = s.probes[i];
        EXPECT_EQ(p.id, "cfe-00" + std::to_string(i + 1));
        EXPECT_EQ(p.kind, ProbeKind::yes_no);
        ASSERT_EQ(p.evidence.size(), 1u);
        EXPECT_EQ(p.evidence[0].message_ids, std::vector<std::string>{s.sessions[i].messages[0].id});
        std::set<std::string> names;
        for (const auto& d : p.evidence[0].key_details) names.insert(d.name);
        names.erase("exclusivity");  // qualifiers where the rule sentence states them ("only when")
        names.erase("polarity");
        EXPECT_EQ(names, (std::set<std::string>{"entity", "behaviour", "condition"}));
        EXPECT_TRUE(p.evidence[0].details_complete) << p.id;
        EXPECT_FALSE(p.evidence[0].statements.empty()) << p.id;
        // The label and the reference answer agree.
        const bool yes = p.answer.rfind("Yes", 0) == 0;
        EXPECT_EQ(p.meta.at("condition_met").get<bool>(), yes) << p.id;
        for (const char* key :
             {"entity", "entity_category", "behaviour", "condition_type", "condition", "question_context"})
            EXPECT_TRUE(p.meta.contains(key)) << key;
    }
    // The essay's multi-line, quote-laden row survives intact.
    EXPECT_NE(s.sessions[1].messages[0].content.find("\"M., with apologies\""), std::string::npos);
    EXPECT_NE(s.sessions[1].messages[0].content.find("call it.\nMarguerite writes"), std::string::npos);
}

TEST(ImportCsv, ConditionalHardFactJoinsTheSentencesHoldingTheRule) {
    mf::ImportReport report;
    const Scenario s = import_fixture("conditional_facts_hard", report);
    // Row 3 links its rule without a pointing-back phrase ("Around the time a suitcase appears in the
    // hall, the sock collection tends to grow."): no link detail, so incomplete.
    ASSERT_EQ(report.warnings.size(), 1u);
    EXPECT_NE(report.warnings[0].find("row 3: no link phrase"), std::string::npos) << report.warnings[0];
    ASSERT_EQ(s.probes.size(), 3u);
    const auto& fact = s.probes[0].evidence.at(0);
    EXPECT_EQ(s.probes[0].id, "cfh-001");
    // Behaviour and condition come from different, non-adjacent sentences; both are in the fact.
    EXPECT_NE(fact.text.find("polishing every brass doorknob"), std::string::npos);
    EXPECT_NE(fact.text.find("past midnight on weekdays"), std::string::npos);
    EXPECT_EQ(fact.text.find("crosswords"), std::string::npos);  // an unrelated sentence stays out
    EXPECT_EQ(detail_named(fact, "condition")->variants, (std::vector<std::string>{"midnight on weekdays"}));
    EXPECT_EQ(detail_named(fact, "link")->variants, (std::vector<std::string>{"those small, empty hours"}));
    ASSERT_NE(detail_named(fact, "entity"), nullptr);
    EXPECT_TRUE(fact.details_complete);
    // The intro naming him, then behaviour, condition and link sentences, in essay order.
    ASSERT_EQ(fact.statements.size(), 4u);
    EXPECT_EQ(fact.statements[0].rfind("Bartholomew has been the night porter", 0), 0u);
    EXPECT_EQ(fact.statements[3].rfind("It's usually in those small, empty hours", 0), 0u);
    // Row 2's link sentence ("Those are the nights the lullabies ...") is found, and its "those are
    // the nights" is the link phrase (issue 31: the release points back in more ways than "usually
    // in those ...").
    const auto& saoirse = s.probes[1].evidence.at(0);
    EXPECT_TRUE(saoirse.details_complete);
    ASSERT_NE(detail_named(saoirse, "link"), nullptr);
    EXPECT_EQ(detail_named(saoirse, "link")->variants, (std::vector<std::string>{"Those are the nights"}));
    EXPECT_EQ(saoirse.statements.back(), "Those are the nights the lullabies drift over the fence.");
    // Row 3's link sentence is found, its phrase is not.
    const auto& biscotti = s.probes[2].evidence.at(0);
    EXPECT_FALSE(biscotti.details_complete);
    EXPECT_EQ(detail_named(biscotti, "link"), nullptr);
    EXPECT_EQ(biscotti.statements.back(), "Around the time a suitcase appears in the hall, the sock collection tends to grow.");

    // An essay with no sentence pointing back at all: the warning, and the fact goes to the judge.
    const std::string csv =
        k_easy_header +
        "Odo,person,oils the garden gate,weather,after heavy rain,\"[\"\"Odo lives at the end of a muddy lane. He oils "
        "the garden gate with a feather dipped in a jar. Heavy rain floods the lane most winters. His dog sleeps by "
        "the stove. That's when the bus leaves for town.\"\"]\",It has poured all night. Will Odo be oiling the "
        "gate?,a night of rain,yes,Yes.\n";
    mf::ImportReport alone;
    auto odo = mf::import_memfail_csv_text(csv, "odo.csv", "conditional_facts_hard", alone);
    ASSERT_TRUE(odo) << odo.error().describe();
    EXPECT_EQ(detail_named(odo->probes.at(0).evidence.at(0), "link"), nullptr);
    EXPECT_FALSE(odo->probes.at(0).evidence.at(0).details_complete);
    EXPECT_TRUE(std::any_of(alone.warnings.begin(), alone.warnings.end(), [](const std::string& w) { return w.find("odo.csv:2: row 1: no link phrase") != std::string::npos; })) << memfail::text::join(alone.warnings, "\n");
}

TEST(ImportCsv, CoexistingStoresEachPreferenceInItsOwnSession) {
    mf::ImportReport report;
    const Scenario s = import_fixture("coexisting_facts", report);
    EXPECT_TRUE(report.warnings.empty());
    ASSERT_EQ(s.probes.size(), 3u);
    EXPECT_EQ(s.sessions.size(), 3u + 3u + 4u);
    std::set<std::string> cited;
    for (const auto& p : s.probes) {
        EXPECT_EQ(p.kind, ProbeKind::list);
        EXPECT_EQ(p.evidence.size(), p.meta.at("n").get<std::size_t>());
        EXPECT_EQ(p.meta.at("preferences").size(), p.evidence.size());
        for (const auto& f : p.evidence) {
            ASSERT_EQ(f.message_ids.size(), 1u);
            EXPECT_TRUE(cited.insert(f.message_ids[0]).second) << "two facts share " << f.message_ids[0];
            ASSERT_EQ(f.key_details.size(), 1u);
            EXPECT_EQ(f.key_details[0].name, "preference");
        }
    }
    EXPECT_EQ(cited.size(), s.sessions.size());
    const auto* games = probe_by_id(s, "cof-002");
    ASSERT_NE(games, nullptr);
    // The statement with an embedded newline and quotes is one message, unchanged.
    EXPECT_EQ(
        games->evidence[2].text,
        "Dominoes remind me of my grandfather;\nhe\u2019d slam each tile down like a judge\u2019s gavel.");
    const auto& domino = games->evidence[2].key_details[0].variants;
    EXPECT_NE(std::find(domino.begin(), domino.end(), "domino"), domino.end());
    // "smoked salmon bagel" is not in its statement: the longest matching run joins the variants.
    const auto& bagel = probe_by_id(s, "cof-003")->evidence[0].key_details[0].variants;
    EXPECT_EQ(bagel.front(), "smoked salmon bagel");
    EXPECT_NE(std::find(bagel.begin(), bagel.end(), "smoked salmon"), bagel.end());
}

TEST(ImportCsv, PersonaQuestionsBecomeOpenOrAbstainProbes) {
    mf::ImportReport report;
    const Scenario s = import_fixture("persona_retrieval", report);
    ASSERT_EQ(s.sessions.size(), 3u);
    ASSERT_EQ(s.probes.size(), 9u);
    EXPECT_EQ(s.probes[0].id, "per-001-q1");
    EXPECT_EQ(s.probes[8].id, "per-003-q3");
    std::size_t abstain = 0;
    for (const auto& p : s.probes) {
        const bool misleading = p.meta.at("is_misleading").get<bool>();
        EXPECT_EQ(p.kind, misleading ? ProbeKind::abstain : ProbeKind::open) << p.id;
        EXPECT_EQ(p.evidence.empty(), misleading) << p.id;
        EXPECT_TRUE(p.meta.contains("row"));
        if (misleading) {
            ++abstain;
            EXPECT_TRUE(p.meta.contains("distractor"));
            continue;
        }
        const auto& f = p.evidence[0];
        ASSERT_NE(detail_named(f, "entity"), nullptr);
        ASSERT_NE(detail_named(f, "detail"), nullptr);
        EXPECT_EQ(detail_named(f, "entity")->variants.size(), 4u);  // full and first name, and possessives
    }
    EXPECT_EQ(abstain, 4u);
    const auto& tomasz = probe_by_id(s, "per-001-q1")->evidence[0];
    EXPECT_EQ(detail_named(tomasz, "entity")->variants,
              (std::vector<std::string>{"Tomasz W\u00f3jcik", "Tomasz W\u00f3jcik's", "Tomasz", "Tomasz's"}));
    // The detail comes from the sentence the question is about, in the answer's own words.
    const auto& kayak = probe_by_id(s, "per-003-q1")->evidence[0];
    EXPECT_EQ(detail_named(kayak, "detail")->variants,
              (std::vector<std::string>{"western red cedar strips"}));
    EXPECT_NE(kayak.text.find("western red cedar strips"), std::string::npos);
    EXPECT_EQ(kayak.text.find("Labrador"), std::string::npos);
}

TEST(ImportCsv, PersonaMarksDistractorsThatAreStoredEntities) {
    mf::ImportReport report;
    const Scenario s = import_fixture("persona_retrieval", report);
    std::map<std::string, bool> flags;
    for (const auto& p : s.probes)
        if (p.kind == ProbeKind::abstain) flags[p.id] = p.meta.at("distractor_is_stored").get<bool>();
    EXPECT_EQ(flags,
              (std::map<std::string, bool>{
                  {"per-001-q2", false}, {"per-002-q2", true}, {"per-002-q3", false}, {"per-003-q2", true}}));
    ASSERT_EQ(report.warnings.size(), 1u);
    EXPECT_NE(report.warnings[0].find("2 misleading questions name a person stored elsewhere"),
              std::string::npos)
        << report.warnings[0];
}

TEST(ImportCsv, LongHopProbesAreMultipleChoiceWithAnchorDetails) {
    mf::ImportReport report;
    const Scenario s = import_fixture("long_hop", report);  // this fixture has CRLF line ends and a BOM
    EXPECT_TRUE(report.warnings.empty());
    ASSERT_EQ(s.probes.size(), 4u);
    const std::vector<std::string> letters = {"B", "B", "D", "A"};
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const auto& p = s.probes[i];
        SCOPED_TRACE(p.id);
        EXPECT_EQ(p.kind, ProbeKind::mcq);
        EXPECT_EQ(p.choices.size(), 5u);
        EXPECT_EQ(p.correct_choice, letters[i]);
        EXPECT_EQ(p.choices[static_cast<std::size_t>(p.correct_choice[0] - 'A')], p.answer);
        EXPECT_EQ(p.question.find("Options"), std::string::npos);
        EXPECT_EQ(p.question.back(), '?');
        const std::size_t hops = p.meta.at("hops").get<std::size_t>();
        EXPECT_EQ(p.evidence.size(), hops + 1);
        EXPECT_EQ(p.meta.at("chain").size(), hops + 2);
        for (std::size_t f = 0; f < p.evidence.size(); ++f) {
            ASSERT_EQ(p.evidence[f].key_details.size(), 2u);
            EXPECT_EQ(p.evidence[f].key_details[0].name, "anchor_" + std::to_string(f + 1));
            EXPECT_EQ(p.evidence[f].key_details[1].name, "anchor_" + std::to_string(f + 2));
        }
    }
    // A choice holding a comma survives the quoted cell.
    EXPECT_EQ(s.probes[1].choices[2], "tidying the garage, top to bottom");
    // "crave porridge" is not literally in "Craving porridge ...": the same words in another form are.
    EXPECT_EQ(s.probes[0].evidence[1].key_details[0].variants, (std::vector<std::string>{"Craving porridge"}));
}

// Long-Hop's facts, one per message, bin-packed into conversations with no two facts of one chain
// together (Appendix B.6), as the generator stores them.
TEST(ImportCsv, LongHopPacksFactsWithNoTwoOfAChainInAConversation) {
    mf::ImportReport report;
    const Scenario s = import_fixture("long_hop", report);
    std::set<std::string> messages;
    std::size_t facts = 0;
    const memfail::data::MessageIndex index(s);
    for (const auto& p : s.probes) {
        for (const auto& f : p.evidence) {
            ASSERT_EQ(f.message_ids.size(), 1u);
            EXPECT_TRUE(messages.insert(f.message_ids[0]).second) << p.id << " shares a message";
            ++facts;
            // The message is the fact, as the paper's harness stores it.
            const auto* message = index.message(f.message_ids[0]);
            ASSERT_NE(message, nullptr);
            EXPECT_EQ(message->content, f.text);
        }
        std::set<std::string> sessions;
        for (const auto& f : p.evidence)
            EXPECT_TRUE(sessions.insert(index.session_of(f.message_ids[0])->id).second)
                << p.id << ": two facts of the chain in one conversation";
    }
    EXPECT_EQ(facts, 2u + 3u + 4u + 2u);
    std::size_t stored = 0;
    for (const auto& session : s.sessions) stored += session.messages.size();
    EXPECT_EQ(stored, facts);
    EXPECT_LT(s.sessions.size(), facts) << "conversations hold several facts";
    EXPECT_GE(s.sessions.size(), 4u) << "a 3-hop chain needs four conversations";
}

TEST(ImportCsv, ImportIsDeterministic) {
    mf::ImportReport first_report, second_report;
    const Scenario first = import_fixture("long_hop", first_report);
    const Scenario second = import_fixture("long_hop", second_report);
    EXPECT_EQ(memfail::data::to_json(first), memfail::data::to_json(second));
}

// ---------------------------------------------------------------------------------------------
// Directories

TEST(ImportCsvDir, ImportsEveryDatasetInThePapersOrder) {
    auto result = mf::import_memfail_csv_dir(k_fixtures);
    ASSERT_TRUE(result) << result.error().describe();
    const auto& [scenarios, report] = *result;
    ASSERT_EQ(scenarios.size(), 5u);
    for (std::size_t i = 0; i < scenarios.size(); ++i) EXPECT_EQ(scenarios[i].dataset, k_datasets[i]);
    EXPECT_EQ(report.rows, 4u + 3u + 3u + 3u + 4u);
    EXPECT_EQ(report.probes, 4u + 3u + 3u + 9u + 4u);
    // The stored-distractor count, and the Hard row linked without a pointing-back phrase (row 3's
    // "Around the time a suitcase appears ...").
    EXPECT_EQ(report.warnings.size(), 2u);
    EXPECT_TRUE(report.errors.empty());
    EXPECT_TRUE(report.notes.empty());
}

TEST(ImportCsvDir, ImportsTheFilesPresentAndPointsOutStrangers) {
    ScratchDir dir;
    fs::copy_file(fixture("long_hop"), dir.file("long_hop.csv"));
    fs::copy_file(fixture("coexisting_facts"), dir.file("coexisting_facts.csv"));
    std::ofstream(dir.file("notes.csv")) << "a,b\n1,2\n";
    auto result = mf::import_memfail_csv_dir(dir.path());
    ASSERT_TRUE(result) << result.error().describe();
    const auto& [scenarios, report] = *result;
    ASSERT_EQ(scenarios.size(), 2u);
    EXPECT_EQ(scenarios[0].dataset, "coexisting_facts");
    EXPECT_EQ(scenarios[1].dataset, "long_hop");
    ASSERT_EQ(report.warnings.size(), 1u);
    EXPECT_NE(report.warnings[0].find("notes.csv"), std::string::npos);
}

TEST(ImportCsvDir, ADirectoryWithoutDatasetFilesIsAnError) {
    ScratchDir dir;
    auto empty = mf::import_memfail_csv_dir(dir.path());
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().kind, memfail::ErrorKind::not_found);
    EXPECT_NE(empty.error().message.find("long_hop.csv"), std::string::npos);
    EXPECT_FALSE(mf::import_memfail_csv_dir(dir.file("no-such-dir")));
}

TEST(ImportCsvDir, OneBadFileFailsTheWholeImport) {
    ScratchDir dir;
    fs::copy_file(fixture("long_hop"), dir.file("long_hop.csv"));
    std::ofstream(dir.file("persona_retrieval.csv")) << "entity,entity_facts\nAda,\"[\"\"x\"\"]\"\n";
    auto result = mf::import_memfail_csv_dir(dir.path());
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().describe().find("persona_retrieval.csv:1: column 'questions'"),
              std::string::npos)
        << result.error().describe();
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(ImportCsvErrors, MissingColumnNamesFileLineAndColumn) {
    const std::string csv =
        "entity,entity_category,condition_type,condition,entity_facts,question,"
        "question_context,condition_met,ground_truth_answer\n";
    mf::ImportReport report;
    auto result = mf::import_memfail_csv_text(csv + "a,b,c,d,\"[\"\"e\"\"]\",f,g,yes,h\n", "cfe.csv",
                                              "conditional_facts_easy", report);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, memfail::ErrorKind::invalid_input);
    EXPECT_NE(result.error().describe().find("cfe.csv:1: column 'behavior'"), std::string::npos)
        << result.error().describe();
}

TEST(ImportCsvErrors, UnknownColumnIsRejected) {
    mf::ImportReport report;
    auto result = mf::import_memfail_csv_text(
        "preference_category,preferences,preference_facts,question,ground_truth_answer,rating\n"
        "tea,\"[\"\"oolong\"\"]\",\"[\"\"I like oolong.\"\"]\",Which tea?,oolong,5\n",
        "cof.csv", "coexisting_facts", report);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().describe().find("cof.csv:1: column 'rating'"), std::string::npos);
}

TEST(ImportCsvErrors, BadJsonCellNamesItsPhysicalLine) {
    // Row 1 spans lines 2-3 (a pretty-printed JSON list), so row 2 starts on line 4.
    const std::string csv =
        k_easy_header +
        "Ada,person,hums,mood,when calm,\"[\n  \"\"Ada hums when calm. She likes tea.\"\"]\","
        "Q?,ctx,yes,Yes.\n"
        "Bo,person,sings,mood,when sad,\"[\"\"Bo sings when sad.\",Q?,ctx,no,No.\n";
    mf::ImportReport report;
    auto result = mf::import_memfail_csv_text(csv, "bad.csv", "conditional_facts_easy", report);
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_EQ(report.errors.size(), 1u);
    EXPECT_EQ(report.errors[0].rfind("bad.csv:4: column 'entity_facts': not valid JSON", 0), 0u) << report.errors[0];

    // When no row converts the file fails, naming the first refusal, and the caller's report is
    // as it was: nothing half-done.
    mf::ImportReport untouched;
    untouched.warnings.push_back("earlier warning");
    auto none = mf::import_memfail_csv_text(
        k_easy_header + "Bo,person,sings,mood,when sad,\"[\"\"Bo sings when sad.\",Q?,ctx,no,No.\n", "bad.csv",
        "conditional_facts_easy", untouched);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().kind, memfail::ErrorKind::invalid_input);
    EXPECT_EQ(none.error().describe().rfind("bad.csv:2: column 'entity_facts': not valid JSON", 0), 0u)
        << none.error().describe();
    EXPECT_EQ(untouched.warnings, std::vector<std::string>{"earlier warning"});
    EXPECT_TRUE(untouched.errors.empty());
    EXPECT_EQ(untouched.rows, 0u);
}

TEST(ImportCsvErrors, WrongJsonTypesAreNamed) {
    mf::ImportReport report;
    auto object_essay = mf::import_memfail_csv_text(
        k_easy_header +
            "Ada,person,hums,mood,when calm,\"{\"\"essay\"\": \"\"Ada hums.\"\"}\",Q?,ctx,yes,Yes.\n",
        "t.csv", "conditional_facts_easy", report);
    ASSERT_FALSE(object_essay);
    EXPECT_NE(object_essay.error().describe().find("t.csv:2: column 'entity_facts': expected a JSON list"),
              std::string::npos)
        << object_essay.error().describe();

    auto bad_flag = mf::import_memfail_csv_text(
        "entity,entity_facts,questions\n"
        "Ada Low,\"[\"\"Ada Low hums.\"\"]\",\"[{\"\"text\"\": \"\"Q?\"\", \"\"is_misleading\"\": "
        "\"\"maybe\"\", "
        "\"\"distractor\"\": null, \"\"ground_truth_answer\"\": \"\"A\"\"}]\"\n",
        "p.csv", "persona_retrieval", report);
    ASSERT_FALSE(bad_flag);
    EXPECT_NE(bad_flag.error().describe().find("p.csv:2: column 'questions': questions[0].is_misleading"),
              std::string::npos)
        << bad_flag.error().describe();

    auto bad_letter = mf::import_memfail_csv_text(
        "id,hop_count,fact_1,fact_2,chain_1,chain_2,chain_3,graded_question,ground_truth_answer,choice_a,"
        "choice_b,"
        "correct_choice\n"
        "x,1,Tea calms me.,Calm makes me read.,tea,calm,read,What do I do?,read,read,run,C\n",
        "l.csv", "long_hop", report);
    ASSERT_FALSE(bad_letter);
    EXPECT_NE(bad_letter.error().describe().find("l.csv:2: column 'correct_choice'"), std::string::npos);

    auto short_chain = mf::import_memfail_csv_text(
        "id,hop_count,fact_1,fact_2,chain_1,chain_2,chain_3,graded_question,ground_truth_answer,choice_a,"
        "choice_b,"
        "correct_choice\n"
        "x,2,Tea calms me.,Calm makes me read.,tea,calm,read,What do I do?,read,read,run,A\n",
        "l.csv", "long_hop", report);
    ASSERT_FALSE(short_chain);
    EXPECT_NE(short_chain.error().describe().find("l.csv:2: column 'fact_3'"), std::string::npos)
        << short_chain.error().describe();
    EXPECT_TRUE(report.warnings.empty());
}

TEST(ImportCsvErrors, UnknownDatasetAndMissingFile) {
    mf::ImportReport report;
    auto unknown = mf::import_memfail_csv_file(fixture("long_hop"), "long_hops", report);
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("did you mean 'long_hop'"), std::string::npos);
    EXPECT_FALSE(mf::import_memfail_csv_file(k_fixtures + "/absent.csv", "long_hop", report));
    auto header_only = mf::import_memfail_csv_text(k_easy_header, "h.csv", "conditional_facts_easy", report);
    EXPECT_FALSE(header_only);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The release as released (fixtures/memfail-csv-release: the release's file names and traits, in
// sentences written for these tests)

namespace release {

const std::string k_dir = std::string(MEMFAIL_TEST_FIXTURES) + "/memfail-csv-release";

struct Imported {
    std::vector<Scenario> scenarios;
    mf::ImportReport report;
    const Scenario& dataset(const std::string& name) const {
        for (const auto& s : scenarios)
            if (s.dataset == name) return s;
        ADD_FAILURE() << "no scenario " << name;
        static const Scenario none;
        return none;
    }
};

const Imported& imported() {
    static const Imported result = [] {
        auto r = mf::import_memfail_csv_dir(k_dir);
        if (!r) ADD_FAILURE() << r.error().describe();
        return r ? Imported{r->first, r->second} : Imported{};
    }();
    return result;
}

const memfail::data::EvidenceFact& fact_of(const std::string& dataset, const std::string& probe, std::size_t i = 0) {
    const auto* p = probe_by_id(imported().dataset(dataset), probe);
    EXPECT_NE(p, nullptr) << probe;
    static const memfail::data::EvidenceFact none;
    return p && i < p->evidence.size() ? p->evidence[i] : none;
}

std::vector<std::string> variants_of(const memfail::data::EvidenceFact& f, const std::string& name) {
    const auto* d = detail_named(f, name);
    return d ? d->variants : std::vector<std::string>{};
}

std::vector<std::string> rule_violations(const Scenario& s) {
    std::vector<memfail::data::Violation> found;
    memfail::data::validate_structure(s, 1, found);
    mf::check_dataset_rules(s, 1, found);
    std::vector<std::string> out;
    for (const auto& v : found) out.push_back(memfail::data::format_violation(s.dataset, v));
    return out;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

}  // namespace release

TEST(ImportRelease, TheFolderImportsAsReleasedAndIgnoresRawCopiesAndConfigs) {
    const auto& [scenarios, report] = release::imported();
    ASSERT_EQ(scenarios.size(), 5u);
    const std::vector<std::string> files = {"conditional_facts_dataset_easy.csv", "conditional_facts_dataset_hard.csv",
                                            "coexisting_facts_dataset.csv", "persona_dataset.csv",
                                            "long_hop_chains.csv"};
    for (std::size_t i = 0; i < scenarios.size(); ++i) {
        SCOPED_TRACE(k_datasets[i]);
        EXPECT_EQ(scenarios[i].dataset, k_datasets[i]);
        EXPECT_EQ(scenarios[i].meta.at("file"), files[i]);
        EXPECT_EQ(violations_of(scenarios[i]), std::vector<std::string>{});
        EXPECT_EQ(mf::dataset_of_file(files[i]), k_datasets[i]);
        EXPECT_EQ(mf::dataset_of_file(k_datasets[i] + ".csv"), k_datasets[i]);
    }
    EXPECT_EQ(mf::dataset_of_file("conditional_facts_dataset_raw.csv"), "");
    EXPECT_TRUE(report.errors.empty()) << report.errors.front();
    EXPECT_EQ(report.skipped_rows, 0u);
    // The raw copy and both generation records are passed over, each with a note, not a warning.
    ASSERT_EQ(report.notes.size(), 3u);
    EXPECT_NE(report.notes[0].find("conditional_facts_dataset_raw.csv: the release's raw copy"), std::string::npos)
        << report.notes[0];
    EXPECT_NE(report.notes[1].find("generation_config_easy.json"), std::string::npos);
    EXPECT_NE(report.notes[2].find("long_hop_chains_meta.json"), std::string::npos);
    EXPECT_FALSE(release::any_contains(report.warnings, "_raw.csv"));
}

TEST(ImportRelease, BothNamesForOneDatasetAreRefused) {
    ScratchDir dir;
    fs::copy_file(release::k_dir + "/long_hop_chains.csv", dir.file("long_hop_chains.csv"));
    fs::copy_file(fixture("long_hop"), dir.file("long_hop.csv"));
    auto result = mf::import_memfail_csv_dir(dir.path());
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("both 'long_hop_chains.csv' and 'long_hop.csv'"), std::string::npos)
        << result.error().describe();
}

// The Hard row that crashed the importer: its essay names the person only as "Alaric’s" (curly
// apostrophe), so the bare name never matched; the importer then dropped the entity detail and read
// the Hard rule's details past the end of the shortened list.
TEST(ImportRelease, HardEssayNamingThePersonOnlyInThePossessive) {
    const auto& f = release::fact_of("conditional_facts_hard", "cfh-001");
    EXPECT_TRUE(f.details_complete);
    const auto entity = release::variants_of(f, "entity");
    EXPECT_NE(std::find(entity.begin(), entity.end(), "Alaric's"), entity.end());
    EXPECT_EQ(detail_named(f, "entity")->effective_role(), memfail::data::DetailRole::identity);
    EXPECT_EQ(release::variants_of(f, "behaviour"),
              (std::vector<std::string>{"playing old music boxes one after another"}));
    EXPECT_EQ(release::variants_of(f, "condition"), (std::vector<std::string>{"Late autumn storms"}));
    EXPECT_EQ(release::variants_of(f, "link"), (std::vector<std::string>{"those stormy weeks"}));
    EXPECT_EQ(detail_named(f, "link")->effective_role(), memfail::data::DetailRole::qualifier);
    // The statements: the sentence naming him (the rule's sentences say "he"), then the behaviour,
    // condition and link sentences, verbatim and in essay order.
    ASSERT_EQ(f.statements.size(), 4u);
    EXPECT_EQ(f.statements[0].rfind("Alaric\u2019s workshop", 0), 0u);
    EXPECT_EQ(f.statements[1].rfind("He has a habit of playing", 0), 0u);
    EXPECT_EQ(f.statements[2].rfind("Late autumn storms", 0), 0u);
    EXPECT_EQ(f.statements[3].rfind("It's usually in those stormy weeks", 0), 0u);
    EXPECT_EQ(f.text, memfail::text::join(f.statements, " "));

    // The same row alone, with the entity's every variant gone from the essay: no crash, the
    // entity left out and the fact flagged.
    const std::string csv =
        k_easy_header +
        "Zora,person,mends fishing nets,mood,,\"[\"\"The harbour wall is lined with drying nets. She mends fishing "
        "nets with a wooden needle. Gulls argue over the scraps. It's usually in those grey hours that the "
        "mending happens.\"\"]\",Is she mending?,ctx,yes,Yes.\n";
    mf::ImportReport report;
    auto hard = mf::import_memfail_csv_text(csv, "zora.csv", "conditional_facts_hard", report);
    ASSERT_TRUE(hard) << hard.error().describe();
    const auto& zora = hard->probes.at(0).evidence.at(0);
    EXPECT_FALSE(zora.details_complete);
    EXPECT_EQ(detail_named(zora, "entity"), nullptr);
    EXPECT_EQ(detail_named(zora, "condition"), nullptr);
    EXPECT_NE(detail_named(zora, "behaviour"), nullptr);
    EXPECT_EQ(violations_of(*hard), std::vector<std::string>{});
    EXPECT_TRUE(release::any_contains(report.warnings, "zora.csv:2: row 1: entity 'Zora' not found in the essay"));
}

TEST(ImportRelease, PossessivesAndBothApostrophesMatch) {
    using memfail::text::normalize;
    EXPECT_EQ(normalize("Thorne\u2019s"), normalize("Thorne's"));
    EXPECT_EQ(normalize("\u2018Thorne\u2019s\u2019"), "thornes");
    EXPECT_EQ(memfail::text::split_sentences("She said \u201cnever.\u201d Then she left.").size(), 2u);
    // A detail stated in the possessive takes the essay's spelling as its variant.
    const auto italy = release::variants_of(release::fact_of("coexisting_facts", "cof-002", 0), "preference");
    EXPECT_NE(std::find(italy.begin(), italy.end(), "Italy\u2019s"), italy.end());
    EXPECT_EQ(italy.front(), "Italy");
    // A straight apostrophe in the column matches a curly one in the essay.
    EXPECT_EQ(release::variants_of(release::fact_of("conditional_facts_easy", "cfe-003"), "behaviour"),
              (std::vector<std::string>{"digs holes in the neighbour's flower beds"}));
    // Entity details carry the possessive like the generators', for full and first names.
    EXPECT_EQ(release::variants_of(release::fact_of("persona_retrieval", "per-001-q2"), "entity"),
              (std::vector<std::string>{"Noor Haddad", "Noor Haddad's", "Noor", "Noor's"}));
    const auto esme = release::variants_of(release::fact_of("long_hop", "lhp-002", 0), "anchor_1");
    EXPECT_EQ(esme, (std::vector<std::string>{"Esme\u2019s"}));
}

TEST(ImportRelease, RuleSentencesSayingHeKeepTheSentenceNamingThePerson) {
    const auto& f = release::fact_of("conditional_facts_easy", "cfe-001");
    ASSERT_EQ(f.statements.size(), 2u);
    EXPECT_EQ(f.statements[0], "Thorne is a lighthouse keeper on a windswept island off the northern coast.");
    EXPECT_EQ(f.statements[1], "He hums sea shanties only when he feels homesick for the mainland.");
    EXPECT_EQ(release::variants_of(f, "condition"), (std::vector<std::string>{"when he feels homesick"}));
    EXPECT_TRUE(f.details_complete);
    // The validator accepts a rule sentence that names the person by pronoun after an earlier
    // sentence named them.
    EXPECT_FALSE(release::any_contains(release::rule_violations(release::imported().dataset("conditional_facts_easy")),
                                       "states the whole rule"));
}

TEST(ImportRelease, ExclusivityAndPolarityQualifiersComeFromTheRuleSentence) {
    auto qualifiers = [](const std::string& probe) {
        std::vector<std::string> out;
        for (const auto& d : release::fact_of("conditional_facts_easy", probe).key_details)
            if (d.effective_role() == memfail::data::DetailRole::qualifier && d.name != "condition")
                out.push_back(d.name + ":" + d.variants.at(0));
        return out;
    };
    EXPECT_EQ(qualifiers("cfe-001"), (std::vector<std::string>{"exclusivity:only"}));
    EXPECT_EQ(qualifiers("cfe-002"), (std::vector<std::string>{"exclusivity:except", "polarity:never"}));
    // "never" in another sentence of the essay ("barks at pigeons but never at people") is no
    // qualifier of the rule.
    EXPECT_EQ(qualifiers("cfe-003"), (std::vector<std::string>{"exclusivity:solely"}));
    EXPECT_EQ(qualifiers("cfe-004"), (std::vector<std::string>{"exclusivity:exclusively"}));
    EXPECT_EQ(qualifiers("cfe-005"), (std::vector<std::string>{"exclusivity:unless", "polarity:refuses"}));
}

TEST(ImportRelease, AsIfAndEvenIfAreNoConditions) {
    namespace cond = mf::conditional;
    EXPECT_EQ(cond::find_forbidden_connective("He paints boats, as if making voyages."), "");
    EXPECT_EQ(cond::find_forbidden_connective("She lends books even if the borrower is a friend."), "");
    EXPECT_EQ(cond::find_forbidden_connective("As if by magic, it stopped."), "");
    EXPECT_EQ(cond::find_forbidden_connective("He naps as if tired, and if it rains he sleeps."), "if");
    EXPECT_EQ(cond::find_forbidden_connective("The gift was modest."), "");  // "if" inside a word
    const auto easy = release::rule_violations(release::imported().dataset("conditional_facts_easy"));
    EXPECT_FALSE(release::any_contains(easy, "second conditional")) << memfail::text::join(easy, "\n");
    const auto hard = release::rule_violations(release::imported().dataset("conditional_facts_hard"));
    EXPECT_FALSE(release::any_contains(hard, "conditional connective")) << memfail::text::join(hard, "\n");
}

TEST(ImportRelease, SingleWordConditionsAndOtherWordForms) {
    EXPECT_EQ(release::variants_of(release::fact_of("conditional_facts_easy", "cfe-002"), "condition"),
              (std::vector<std::string>{"Sundays"}));
    EXPECT_EQ(release::variants_of(release::fact_of("conditional_facts_easy", "cfe-003"), "condition"),
              (std::vector<std::string>{"rain"}));
    EXPECT_EQ(release::variants_of(release::fact_of("conditional_facts_hard", "cfh-004"), "condition"),
              (std::vector<std::string>{"dusk"}));
    // "takes the bus" / "when it snows" against "He refuses to take the bus unless it is snowing".
    const auto& corwin = release::fact_of("conditional_facts_easy", "cfe-005");
    EXPECT_EQ(release::variants_of(corwin, "behaviour"), (std::vector<std::string>{"take the bus"}));
    EXPECT_EQ(release::variants_of(corwin, "condition"), (std::vector<std::string>{"snowing"}));
    // A condition the essay words differently: the rule sentence's own clause stands in.
    EXPECT_EQ(release::variants_of(release::fact_of("conditional_facts_easy", "cfe-006"), "condition"),
              (std::vector<std::string>{"the sky turns dark and loud over the valley"}));
}

TEST(ImportRelease, HardRowsWithoutASeparableConditionAreFlaggedNotDropped) {
    for (const std::string probe : {"cfh-002", "cfh-003"}) {
        SCOPED_TRACE(probe);
        const auto& f = release::fact_of("conditional_facts_hard", probe);
        EXPECT_FALSE(f.details_complete);
        EXPECT_EQ(detail_named(f, "condition"), nullptr);
        EXPECT_NE(detail_named(f, "behaviour"), nullptr);
        EXPECT_NE(detail_named(f, "link"), nullptr);
        // With the condition's sentence unknown, only the whole essay is a copy of the rule.
        EXPECT_TRUE(f.statements.empty());
        const auto* p = probe_by_id(release::imported().dataset("conditional_facts_hard"), probe);
        EXPECT_EQ(f.text, release::imported().dataset("conditional_facts_hard")
                              .sessions.at(std::stoul(probe.substr(4)) - 1)
                              .messages.at(0)
                              .content);
        EXPECT_EQ(p->meta.at("condition"), probe == "cfh-003" ? "" : "when the mood takes her");
    }
    EXPECT_TRUE(release::fact_of("conditional_facts_hard", "cfh-004").details_complete);
    const auto& report = release::imported().report;
    EXPECT_TRUE(release::any_contains(report.warnings, "row 3: condition is empty"));
    EXPECT_TRUE(release::any_contains(report.warnings, "row 2: condition 'when the mood takes her' not found"));
    EXPECT_GE(report.incomplete_facts, 3u);
}

TEST(ImportRelease, ParaphrasedPreferencesKeepTheFileImportable) {
    const auto& s = release::imported().dataset("coexisting_facts");
    // "reading", stated as "I read every night": the statement's form joins the variants.
    const auto& reading = release::fact_of("coexisting_facts", "cof-001", 0);
    EXPECT_TRUE(reading.details_complete);
    const auto read = release::variants_of(reading, "preference");
    EXPECT_EQ(read.front(), "reading");
    EXPECT_NE(std::find(read.begin(), read.end(), "read"), read.end());
    // "basketball", stated as "Shooting hoops": no detail to check literally; the fact keeps its
    // statement and goes to the judge.
    const auto& hoops = release::fact_of("coexisting_facts", "cof-001", 1);
    EXPECT_FALSE(hoops.details_complete);
    EXPECT_TRUE(hoops.key_details.empty());
    EXPECT_EQ(hoops.statements,
              (std::vector<std::string>{"Shooting hoops at the park on Saturday mornings clears my head."}));
    EXPECT_EQ(s.meta.at("incomplete_facts"), 1u);
    // Nothing refuses the file: structure and Coexisting rules report neither fact.
    const auto found = release::rule_violations(s);
    EXPECT_FALSE(release::any_contains(found, "probes[0].evidence")) << memfail::text::join(found, "\n");
    EXPECT_EQ(violations_of(s), std::vector<std::string>{});
}

TEST(ImportRelease, LongHopStoresOneFactPerMessageBinPacked) {
    const auto& s = release::imported().dataset("long_hop");
    const memfail::data::MessageIndex index(s);
    std::size_t facts = 0;
    std::set<std::string> messages;
    for (const auto& p : s.probes) {
        EXPECT_EQ(p.evidence.size(), p.meta.at("hops").get<std::size_t>() + 1);
        for (const auto& f : p.evidence) {
            ++facts;
            ASSERT_EQ(f.message_ids.size(), 1u);
            EXPECT_TRUE(messages.insert(f.message_ids[0]).second);
            EXPECT_EQ(index.message(f.message_ids[0])->content, f.text);
            EXPECT_EQ(f.statements, std::vector<std::string>{f.text});
        }
    }
    EXPECT_EQ(probe_by_id(s, "lhp-003")->evidence.size(), 4u);  // a 3-hop chain lists 4 facts
    EXPECT_EQ(facts, 2u + 3u + 4u + 2u + 2u);
    std::size_t stored = 0;
    for (const auto& session : s.sessions) {
        EXPECT_LE(session.messages.size(), 5u);
        stored += session.messages.size();
    }
    EXPECT_EQ(stored, facts);
    EXPECT_LT(s.sessions.size(), facts) << "bin-packed: conversations hold several facts";
    // No two links of one chain in one conversation.
    for (const auto& p : s.probes) {
        std::set<std::string> sessions;
        for (const auto& f : p.evidence) EXPECT_TRUE(sessions.insert(index.session_of(f.message_ids[0])->id).second) << p.id;
    }
    const auto found = release::rule_violations(s);
    EXPECT_FALSE(release::any_contains(found, "must name anchor")) << memfail::text::join(found, "\n");
}

TEST(ImportRelease, MisleadingProbesNamingAStoredPersonAreAmbiguous) {
    const auto& s = release::imported().dataset("persona_retrieval");
    std::map<std::string, bool> ambiguous;
    for (const auto& p : s.probes) {
        if (p.kind != ProbeKind::abstain) {
            EXPECT_FALSE(p.meta.contains("ambiguous")) << p.id;
            continue;
        }
        ambiguous[p.id] = p.meta.value("ambiguous", false);
        EXPECT_EQ(p.meta.at("distractor_is_stored").get<bool>(), ambiguous[p.id]) << p.id;
    }
    EXPECT_EQ(ambiguous, (std::map<std::string, bool>{{"per-001-q1", true},
                                                       {"per-001-q3", false},
                                                       {"per-002-q2", false},
                                                       {"per-003-q2", true},
                                                       {"per-003-q3", false}}));
    // Two essays share the name "Noor Haddad": their direct probes say which rows carry it.
    EXPECT_EQ(probe_by_id(s, "per-002-q1")->meta.at("entity_rows"), nlohmann::json({1, 2}));
    EXPECT_FALSE(probe_by_id(s, "per-003-q1")->meta.contains("entity_rows"));
    const auto& report = release::imported().report;
    EXPECT_TRUE(release::any_contains(report.warnings, "1 name is given to more than one essay"));
    EXPECT_TRUE(release::any_contains(report.warnings, "2 misleading questions name a person stored elsewhere"));
    // The validator says so once per probe, not once per consequence (stored, shares a first name,
    // shares a last name, appears in a session).
    const auto found = release::rule_violations(s);
    std::size_t about_henrik = 0;
    for (const auto& line : found) about_henrik += line.find("probes[0].meta.distractor") != std::string::npos;
    EXPECT_EQ(about_henrik, 1u) << memfail::text::join(found, "\n");
    EXPECT_TRUE(release::any_contains(found, "is a stored entity, so abstaining is not strictly right (marked "
                                             "meta.ambiguous)"));
}

TEST(ImportRelease, StatementsAreVerbatimSentencesOfTheCitedMessages) {
    for (const auto& s : release::imported().scenarios) {
        const memfail::data::MessageIndex index(s);
        for (const auto& p : s.probes)
            for (const auto& f : p.evidence) {
                for (const auto& statement : f.statements) {
                    const auto* m = index.message(f.message_ids.at(0));
                    ASSERT_NE(m, nullptr);
                    EXPECT_NE(m->content.find(statement), std::string::npos) << p.id << ": " << statement;
                }
                for (const auto& d : f.key_details) EXPECT_TRUE(d.role.has_value()) << p.id << " " << d.name;
            }
    }
}

// ---------------------------------------------------------------------------------------------
// Issue 31 item 7: false findings of the validator and the importer on the paper's release. Each
// trait has a release-shaped row of the fixture (the Hard rows in memfail-csv-release/issue31-hard,
// a folder the release-folder import passes over, so the main fixture keeps its four Hard rows) and
// a planted fault the relaxed rule must still report.

namespace release {

const Imported& issue31_hard() {
    static const Imported result = [] {
        auto r = mf::import_memfail_csv_dir(k_dir + "/issue31-hard");
        if (!r) ADD_FAILURE() << r.error().describe();
        return r ? Imported{r->first, r->second} : Imported{};
    }();
    return result;
}

// The essay a Conditional probe's fact cites.
std::string& essay_of(Scenario& s, const std::string& probe) {
    for (std::size_t i = 0; i < s.probes.size(); ++i)
        if (s.probes[i].id == probe)
            for (auto& session : s.sessions)
                for (auto& m : session.messages)
                    if (m.id == s.probes[i].evidence.at(0).message_ids.at(0)) return m.content;
    ADD_FAILURE() << "no essay for " << probe;
    static std::string none;
    return none;
}

void replace(std::string& text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
}

std::vector<std::string> about(const std::vector<std::string>& lines, const std::string& needle) {
    std::vector<std::string> out;
    for (const auto& l : lines)
        if (l.find(needle) != std::string::npos) out.push_back(l);
    return out;
}

}  // namespace release

// Finding 1: a Long-Hop chain whose head is a person named in the possessive ("Mei’s evening tea").
TEST(ImportRelease, PossessiveHeadAnchorNamesTheAnchor) {
    const Scenario& s = release::imported().dataset("long_hop");
    const auto* mei = probe_by_id(s, "lhp-005");
    ASSERT_NE(mei, nullptr);
    ASSERT_EQ(mei->meta.at("chain").at(0), "Mei");
    auto found = release::rule_violations(s);
    EXPECT_TRUE(release::about(found, "probes[4]").empty()) << memfail::text::join(found, "\n");

    // The rule reads the text, not the importer's key details, and takes either apostrophe.
    for (const std::string apostrophe : {"\u2019", "'"}) {
        Scenario bare = s;
        auto& p = bare.probes[4];
        for (auto& f : p.evidence) f.key_details.clear();
        p.evidence[0].text = "Mei" + apostrophe + "s evening tea always leaves her drowsy.";
        p.question = "What does Mei" + apostrophe + "s evening tea end up making her do?";
        found = release::rule_violations(bare);
        EXPECT_FALSE(release::any_contains(found, "must name")) << memfail::text::join(found, "\n");
    }

    // Planted: a fact and a question that do not name her at all are still reported.
    Scenario planted = s;
    planted.probes[4].evidence[0].text = "The evening tea always leaves her drowsy.";
    planted.probes[4].evidence[0].key_details.clear();
    planted.probes[4].question = "What does the evening tea end up making her do?";
    found = release::rule_violations(planted);
    EXPECT_TRUE(release::any_contains(found, "probes[4].evidence[0].text: fact 1 must name anchor 1 'Mei'"))
        << memfail::text::join(found, "\n");
    EXPECT_TRUE(release::any_contains(found, "probes[4].question: must name the head anchor 'Mei'"))
        << memfail::text::join(found, "\n");
    // A name that merely starts like hers is no possessive of it.
    planted.probes[4].question = "What does Meiling's evening tea end up making her do?";
    EXPECT_TRUE(release::any_contains(release::rule_violations(planted), "must name the head anchor 'Mei'"));
}

// Finding 2: Easy rows stating the whole rule in one sentence pass, though the importer found the
// condition's word in another sentence (cfe-007: "rain" in "the smell of rain", the rule says "a
// downpour") or an earlier sentence holds both details (cfe-008: the intro names the harmonica and
// a crowded platform, the rule sentence says "only when").
TEST(ImportRelease, EasyRulesInOneSentencePass) {
    const Scenario& s = release::imported().dataset("conditional_facts_easy");
    EXPECT_EQ(release::variants_of(release::fact_of("conditional_facts_easy", "cfe-007"), "condition"),
              (std::vector<std::string>{"rain"}));
    EXPECT_EQ(release::variants_of(release::fact_of("conditional_facts_easy", "cfe-008"), "condition"),
              (std::vector<std::string>{"platform"}));
    const auto found = release::rule_violations(s);
    EXPECT_FALSE(release::any_contains(found, "states the whole rule")) << memfail::text::join(found, "\n");
    EXPECT_FALSE(release::any_contains(found, "second conditional")) << memfail::text::join(found, "\n");
    EXPECT_TRUE(release::about(found, "content").empty()) << memfail::text::join(found, "\n");

    // Planted: the rule split over two sentences, neither stating a condition, is reported; so is
    // an unrelated "if" clause beside the rule.
    Scenario split = s;
    release::replace(release::essay_of(split, "cfe-007"),
                     "She wears a yellow sou'wester whenever a downpour rolls in off the estuary.",
                     "She wears a yellow sou'wester at the stall. Downpours roll in off the estuary most weeks.");
    release::replace(release::essay_of(split, "cfe-008"), "His lunch is a cheese roll eaten standing up.",
                     "If the ticket machine jams, he eats his lunch standing up.");
    // A question saying the one-word condition, in another form ("Thunder" for "when it thunders").
    for (auto& p : split.probes)
        if (p.id == "cfe-009") p.question = "Thunder is crashing over the farm right now. Would Pepper run down to the pond?";
    const auto planted = release::rule_violations(split);
    EXPECT_TRUE(release::any_contains(planted, "probes[8].question: the question repeats the condition's key phrase (\"thunder\")"))
        << memfail::text::join(planted, "\n");
    EXPECT_TRUE(release::any_contains(planted, "no single sentence of the Easy essay of cfe-007 states the whole rule"))
        << memfail::text::join(planted, "\n");
    EXPECT_TRUE(release::any_contains(planted, "sentence 5 of the Easy essay of cfe-008 adds a second conditional ('if')"))
        << memfail::text::join(planted, "\n");
}

// Finding 3: a refusal ("refuses to leave the porch") asked about as the opposite ("Would Pepper
// run down to herd them?") answers No where the condition is met: no mismatch, from the validator
// or the importer. A plain behaviour whose answer contradicts the label still is one.
TEST(ImportRelease, RefusalBehavioursAreNoYesNoMismatch) {
    const Scenario& s = release::imported().dataset("conditional_facts_easy");
    const auto* pepper = probe_by_id(s, "cfe-009");
    ASSERT_NE(pepper, nullptr);
    EXPECT_EQ(pepper->meta.at("condition_met"), true);
    EXPECT_EQ(pepper->answer.rfind("No", 0), 0u);
    auto found = release::rule_violations(s);
    EXPECT_FALSE(release::any_contains(found, "meta.condition_met")) << memfail::text::join(found, "\n");
    EXPECT_FALSE(release::any_contains(release::imported().report.warnings, "condition_met is"))
        << memfail::text::join(release::imported().report.warnings, "\n");
    for (const char* refusal : {"refuses to move", "won\u2019t budge", "never barks", "avoids the garden",
                                "Would she not go out?", "won't"})
        EXPECT_TRUE(mf::refusal_worded(refusal)) << refusal;
    for (const char* plain : {"wears a yellow sou'wester", "Would she herd the ducks?", "knots her scarf"})
        EXPECT_FALSE(mf::refusal_worded(plain)) << plain;

    // Planted: the plain rule of cfe-007 (Ilse's sou'wester) with its answer turned to No.
    Scenario flipped = s;
    for (auto& p : flipped.probes)
        if (p.id == "cfe-007") p.answer = "No \u2014 she leaves it on the hook.";
    found = release::rule_violations(flipped);
    EXPECT_TRUE(release::any_contains(found, "probes[6].meta.condition_met: says \"yes\" but the reference answer says No"))
        << memfail::text::join(found, "\n");
    // And the importer still warns about such a row.
    const std::string csv = k_easy_header +
                            "Pip,pet,herds the ducks,weather,when it thunders,\"[\"\"Pip herds the ducks only when it "
                            "thunders.\"\"]\",A storm is crashing over the farm. Would Pip herd the ducks?,storm,yes,"
                            "No \u2014 not now.\n";
    mf::ImportReport report;
    ASSERT_TRUE(mf::import_memfail_csv_text(csv, "pip.csv", "conditional_facts_easy", report));
    EXPECT_TRUE(release::any_contains(report.warnings, "condition_met is 'yes' but the answer begins with 'no'"))
        << memfail::text::join(report.warnings, "\n");
}

// Finding 4: Hard placement, adjacency, connective and key-phrase findings only where proven.
// cfh-001 (Corentin): the condition's one word "melancholy" sits in the link sentence only, the
// condition being stated in sentences 4-5 without it (the paper's cfh-001 with "wistful");
// cfh-002 (Tansy): "whenever the kettle clicks off" in an unrelated sentence, and the condition's
// word "Brushing" in a passing mention next to the behaviour while the condition is sentence 5;
// cfh-003 (Bramble): the question says "kitchen", one word of "when the kitchen radiator is
// switched off".
TEST(ImportRelease, HardPlacementIsReportedOnlyWhereProven) {
    const Scenario& s = release::issue31_hard().dataset("conditional_facts_hard");
    ASSERT_EQ(s.probes.size(), 5u);
    EXPECT_EQ(release::variants_of(s.probes[0].evidence.at(0), "condition"), (std::vector<std::string>{"melancholy"}));
    EXPECT_EQ(release::variants_of(s.probes[1].evidence.at(0), "condition"), (std::vector<std::string>{"Brushing"}));
    EXPECT_EQ(release::variants_of(s.probes[2].evidence.at(0), "condition"), (std::vector<std::string>{"kitchen"}));
    auto found = release::rule_violations(s);
    for (const char* needle : {"conditional connective", "non-adjacent", "key phrase", "states both", "lacks a rule"})
        EXPECT_FALSE(release::any_contains(found, needle)) << needle << "\n" << memfail::text::join(found, "\n");
    // The main fixture's Hard rows too.
    const auto main = release::rule_violations(release::imported().dataset("conditional_facts_hard"));
    EXPECT_FALSE(release::any_contains(main, "non-adjacent")) << memfail::text::join(main, "\n");

    // Planted, on cfh-005 (Bastien: "bakes a plum cake", "sister visits", both two-word details).
    Scenario planted = s;
    std::string& essay = release::essay_of(planted, "cfh-005");
    // The rule in one sentence joined by "whenever".
    release::replace(essay, "He supports the local football team with more loyalty than hope.",
                     "He bakes a plum cake whenever his sister visits.");
    // A question repeating the condition's two-word phrase.
    planted.probes[4].question = "Bastien's sister visits this weekend. Will he be baking?";
    found = release::rule_violations(planted);
    EXPECT_TRUE(release::any_contains(
        found, "sentence 5 of the Hard essay of cfh-005 states the rule with the conditional connective 'whenever'"))
        << memfail::text::join(found, "\n");
    EXPECT_TRUE(release::any_contains(found, "states both the behaviour and the condition")) << memfail::text::join(found, "\n");
    EXPECT_TRUE(release::any_contains(found, "probes[4].question: the question repeats the condition's key phrase"))
        << memfail::text::join(found, "\n");

    // Behaviour and condition sentences moved side by side: adjacency is certain and reported.
    Scenario adjacent = s;
    std::string& moved = release::essay_of(adjacent, "cfh-005");
    release::replace(moved, " Twice a year his sister visits from Lyon with a suitcase of books.", "");
    release::replace(moved, "belonged to his grandmother.",
                     "belonged to his grandmother. Twice a year his sister visits from Lyon with a suitcase of books.");
    found = release::rule_violations(adjacent);
    EXPECT_TRUE(release::any_contains(found, "of the Hard essay of cfh-005 are not three pairwise non-adjacent sentences"))
        << memfail::text::join(found, "\n");

    // A one-word condition that is the whole condition ("dusk", the main fixture's cfh-004) is
    // repeated by a question saying it.
    Scenario dusk = release::imported().dataset("conditional_facts_hard");
    dusk.probes[3].question = "It is dusk by the river. Is Maren chatting to her bees?";
    found = release::rule_violations(dusk);
    EXPECT_TRUE(release::any_contains(found, "probes[3].question: the question repeats the condition's key phrase (\"dusk\")"))
        << memfail::text::join(found, "\n");
}

// Finding 5: link sentences point back in more ways than "usually in those ...".
TEST(ImportRelease, LinkSentencesPointBackInTheReleasesWays) {
    const auto& hard = release::issue31_hard();
    EXPECT_FALSE(release::any_contains(hard.report.warnings, "no link phrase")) << memfail::text::join(hard.report.warnings, "\n");
    std::vector<std::string> links;
    for (const auto& p : hard.dataset("conditional_facts_hard").probes) {
        EXPECT_TRUE(p.evidence.at(0).details_complete) << p.id;
        const auto v = release::variants_of(p.evidence.at(0), "link");
        links.push_back(v.empty() ? std::string() : v[0]);
    }
    EXPECT_EQ(links, (std::vector<std::string>{"those melancholy, lamplit hours", "days like that", "That's when",
                                               "It is then that", "Whenever that happens"}));

    // Each family in one essay; a pointer that alludes to no behaviour, "such as" and "like that"
    // before a noun link nothing.
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"At times like those, the shed door usually stays shut.", "times like those"},
        {"In moments like these, the gate gets a fresh coat of oil.", "moments like these"},
        {"Such grey evenings usually end with the oil can out.", "Such grey evenings"},
        {"Those are the times the gate gets oiled.", "Those are the times"},
        {"It's then that the gate gets oiled.", "It's then that"},
        {"When this happens, the oiling starts before breakfast.", "When this happens"},
        {"That's when the bus leaves for town.", ""},
        {"He likes tools such as chisels and planes.", ""},
        {"He paints gates like that neighbour does.", ""},
    };
    for (const auto& [link_sentence, phrase] : cases) {
        SCOPED_TRACE(link_sentence);
        const std::string csv =
            k_easy_header + "Odo,person,oils the garden gate,weather,after heavy rain,\"[\"\"Odo lives at the end of a "
                            "muddy lane. He oils the garden gate with a feather dipped in a jar. His dog sleeps by the "
                            "stove. Heavy rain floods the lane most winters. His sister sends postcards from Spain. " +
            link_sentence + "\"\"]\",It has poured all night. Will Odo be at the gate?,a night of rain,yes,Yes.\n";
        mf::ImportReport report;
        auto imported = mf::import_memfail_csv_text(csv, "odo.csv", "conditional_facts_hard", report);
        ASSERT_TRUE(imported) << imported.error().describe();
        const auto* link = detail_named(imported->probes.at(0).evidence.at(0), "link");
        EXPECT_EQ(link ? link->variants.at(0) : std::string(), phrase);
        EXPECT_EQ(release::any_contains(report.warnings, "no link phrase"), phrase.empty())
            << memfail::text::join(report.warnings, "\n");
    }
}

// ---------------------------------------------------------------------------------------------
// Rows that cannot be converted

TEST(ImportCsvRows, ABadRowIsReportedAndTheRestImport) {
    const std::string csv =
        k_easy_header +
        "Ada,person,hums,mood,when calm,\"[\"\"Ada hums only when calm. She likes tea.\"\"]\",Is Ada humming?,ctx,"
        "yes,Yes.\n"
        "Bo,person,sings,mood,when sad,\"[\"\"Bo sings when sad.\",Q?,ctx,no,No.\n"
        "Cy,person,whistles,mood,when bored,\"[\"\"Cy whistles when bored.\"\"]\",Q?,ctx,perhaps,No.\n"
        "Di,person,dances,mood,when happy,\"[\"\"Di dances when happy.\"\"]\",Is Di dancing?,ctx,no,No.\n";
    mf::ImportReport report;
    auto s = mf::import_memfail_csv_text(csv, "rows.csv", "conditional_facts_easy", report);
    ASSERT_TRUE(s) << s.error().describe();
    ASSERT_EQ(s->probes.size(), 2u);
    // Probe ids keep their row numbers.
    EXPECT_EQ(s->probes[0].id, "cfe-001");
    EXPECT_EQ(s->probes[1].id, "cfe-004");
    ASSERT_EQ(report.errors.size(), 2u);
    EXPECT_EQ(report.errors[0].rfind("rows.csv:3: column 'entity_facts': not valid JSON", 0), 0u) << report.errors[0];
    EXPECT_NE(report.errors[0].find("(row 2 skipped)"), std::string::npos);
    EXPECT_EQ(report.errors[1].rfind("rows.csv:4: column 'condition_met': expected yes or no", 0), 0u)
        << report.errors[1];
    EXPECT_EQ(report.skipped_rows, 2u);
    EXPECT_EQ(report.rows, 4u);
    EXPECT_EQ(s->meta.at("skipped_rows"), 2u);
    EXPECT_EQ(violations_of(*s), std::vector<std::string>{});
}

TEST(ImportCsvRows, CellsThatAreNotUtf8AreRefusedByRow) {
    const std::string csv = "preference_category,preferences,preference_facts,question,ground_truth_answer\n"
                            "tea,\"[\"\"oolong\"\"]\",\"[\"\"I like oolong.\"\"]\",Which tea?,oolong\n"
                            "co\xff" "ffee,\"[\"\"mocha\"\"]\",\"[\"\"I like mocha.\"\"]\",Which coffee?,mocha\n";
    mf::ImportReport report;
    auto s = mf::import_memfail_csv_text(csv, "u.csv", "coexisting_facts", report);
    ASSERT_TRUE(s) << s.error().describe();
    EXPECT_EQ(s->probes.size(), 1u);
    ASSERT_EQ(report.errors.size(), 1u);
    EXPECT_EQ(report.errors[0].rfind("u.csv:3: column 'preference_category': cell is not valid UTF-8", 0), 0u)
        << report.errors[0];
    EXPECT_NO_THROW((void)memfail::data::to_json(*s).dump());
}

// ---------------------------------------------------------------------------------------------
// Fuzzing: deterministic random mutations of the release fixtures' rows. Whatever the bytes, the
// importer must not crash or throw, and must either import (listing each refused row as
// "file:line: ...") or fail with an error that names the file and line.

namespace fuzz {

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string csv_field(const std::string& value) {
    std::string out = "\"";
    for (char c : value) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string serialize(const mf::CsvTable& table) {
    std::string out;
    auto line = [&](const std::vector<std::string>& fields) {
        for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
        out += "\n";
    };
    line(table.header);
    for (const auto& r : table.records) line(r.fields);
    return out;
}

// One cell-level mutation: what a broken export or a hand edit does to a cell.
void mutate_cell(memfail::Rng& rng, mf::CsvTable& table) {
    auto& record = table.records[rng.below(table.records.size())];
    std::string& cell = record.fields[rng.below(record.fields.size())];
    static const std::vector<std::string> k_values = {
        "", "[]", "[1]", "{}", "null", "\"x\"", "[\"\"]", "[\"a\", 2]", "[{\"text\": null}]", "1e999", "0", "9",
        "E", "a", "[\"It\u2019s usually in those\"]", "[{\"text\": \"Q?\", \"is_misleading\": true}]",
        "[{\"text\": \"Q?\", \"is_misleading\": \"yes\", \"distractor\": 3, \"ground_truth_answer\": \"A\"}]",
        "\xE2\x80", "\xff\xfe", "as if", "Options:\nA. x", "[\"\xE2\x80\x99s\"]", "\xE2\x80\x99\xE2\x80\x99"};
    switch (rng.below(6)) {
        case 0: cell = rng.pick(k_values); break;
        case 1: cell = cell.substr(0, rng.below(cell.size() + 1)); break;  // truncated
        case 2: {  // a cell from elsewhere in the file
            const auto& other = table.records[rng.below(table.records.size())];
            cell = other.fields[rng.below(other.fields.size())];
            break;
        }
        case 3:
            if (!cell.empty()) cell.erase(rng.below(cell.size()), 1 + rng.below(8));
            break;
        case 4: cell.insert(rng.below(cell.size() + 1), rng.pick(k_values)); break;
        default: cell += cell; break;
    }
}

// The bytes a CSV file's damage is made of, for testing::fuzz::mutate_bytes.
const std::vector<std::string>& csv_bytes() {
    static const std::vector<std::string> k_bytes = {"\"", ",", "\n", "\r\n", "\\", "[", "]", "{",
                                                     "\xE2\x80\x99", "\xff", "\x00", "'", "\xEF\xBB\xBF"};
    return k_bytes;
}

}  // namespace fuzz

TEST(ImportCsvFuzz, MutatedRowsNeverCrashAndAreReportedByLine) {
    const std::vector<std::pair<std::string, std::string>> files = {
        {"conditional_facts_dataset_easy.csv", "conditional_facts_easy"},
        {"conditional_facts_dataset_hard.csv", "conditional_facts_hard"},
        {"coexisting_facts_dataset.csv", "coexisting_facts"},
        {"persona_dataset.csv", "persona_retrieval"},
        {"long_hop_chains.csv", "long_hop"}};
    memfail::Rng rng(20260513);
    std::size_t imported = 0, refused = 0, rows_skipped = 0;
    for (const auto& [file, dataset] : files) {
        const std::string original = fuzz::read(release::k_dir + "/" + file);
        auto table = mf::parse_csv(original, file);
        ASSERT_TRUE(table) << table.error().describe();
        for (int round = 0; round < 160; ++round) {
            std::string text;
            if (round % 4 == 3) {
                text = original;
                for (std::size_t n = 1 + rng.below(3); n > 0; --n) memfail::testing::fuzz::mutate_bytes(rng, text, fuzz::csv_bytes());
            } else {
                mf::CsvTable mutated = *table;
                for (std::size_t n = 1 + rng.below(4); n > 0; --n) fuzz::mutate_cell(rng, mutated);
                text = fuzz::serialize(mutated);
            }
            SCOPED_TRACE(file + " round " + std::to_string(round));
            mf::ImportReport report;
            auto s = mf::import_memfail_csv_text(text, file, dataset, report);
            if (!s) {
                ++refused;
                // "file:line..." (or the file alone when it is empty).
                EXPECT_EQ(s.error().describe().rfind(file, 0), 0u) << s.error().describe();
                EXPECT_EQ(s.error().kind, memfail::ErrorKind::invalid_input);
                continue;
            }
            ++imported;
            rows_skipped += report.skipped_rows;
            EXPECT_EQ(report.errors.size(), report.skipped_rows);
            for (const auto& e : report.errors) {
                EXPECT_EQ(e.rfind(file + ":", 0), 0u) << e;
                const std::size_t colon = e.find(':', file.size() + 1);
                ASSERT_NE(colon, std::string::npos) << e;
                const std::string line = e.substr(file.size() + 1, colon - file.size() - 1);
                EXPECT_FALSE(line.empty()) << e;
                EXPECT_TRUE(std::all_of(line.begin(), line.end(), [](char c) { return c >= '0' && c <= '9'; })) << e;
            }
            // What was imported is writable and checkable.
            std::string dumped;
            EXPECT_NO_THROW(dumped = memfail::data::to_json(*s).dump());
            std::vector<memfail::data::Violation> violations;
            memfail::data::validate_structure(*s, 1, violations);
            mf::check_dataset_rules(*s, 1, violations);
            for (const auto& v : violations) {
                // Derived details always come from the text they are checked against.
                EXPECT_EQ(v.message.find("appears in none of the cited messages"), std::string::npos)
                    << memfail::data::format_violation(file, v);
                EXPECT_EQ(v.message.find("not in the cited messages verbatim"), std::string::npos)
                    << memfail::data::format_violation(file, v);
            }
        }
    }
    // The mutations exercised both outcomes and the row-skipping path.
    EXPECT_GT(imported, 0u);
    EXPECT_GT(refused, 0u);
    EXPECT_GT(rows_skipped, 0u);
}

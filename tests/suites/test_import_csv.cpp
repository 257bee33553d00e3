// SPDX-License-Identifier: MIT
// Tests of the CSV reader and of importing the MemFail CSV release (fixtures in fixtures/memfail-csv).
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/memfail/csv.hpp>
#include <memfail/suites/memfail/import_csv.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

// A directory under the system temp folder, removed when the test ends.
class ScratchDir {
public:
    ScratchDir() {
        static int counter = 0;
        m_path = fs::temp_directory_path() /
                 ("memfail-import-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::remove_all(m_path);
        fs::create_directories(m_path);
    }
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    std::string path() const { return m_path.string(); }
    std::string file(const std::string& name) const { return (m_path / name).string(); }

private:
    fs::path m_path;
};

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
            ASSERT_EQ(session.messages.size(), 1u);
            EXPECT_EQ(session.messages[0].role, "user");
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
        EXPECT_EQ(names, (std::set<std::string>{"entity", "behaviour", "condition"}));
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
    EXPECT_TRUE(report.warnings.empty());
    ASSERT_EQ(s.probes.size(), 3u);
    const auto& fact = s.probes[0].evidence.at(0);
    EXPECT_EQ(s.probes[0].id, "cfh-001");
    // Behaviour and condition come from different, non-adjacent sentences; both are in the fact.
    EXPECT_NE(fact.text.find("polishing every brass doorknob"), std::string::npos);
    EXPECT_NE(fact.text.find("past midnight on weekdays"), std::string::npos);
    EXPECT_EQ(fact.text.find("crosswords"), std::string::npos);  // an unrelated sentence stays out
    EXPECT_EQ(detail_named(fact, "condition")->variants, (std::vector<std::string>{"midnight on weekdays"}));
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
        EXPECT_EQ(detail_named(f, "entity")->variants.size(), 2u);  // full name and first name
    }
    EXPECT_EQ(abstain, 4u);
    const auto& tomasz = probe_by_id(s, "per-001-q1")->evidence[0];
    EXPECT_EQ(detail_named(tomasz, "entity")->variants,
              (std::vector<std::string>{"Tomasz W\u00f3jcik", "Tomasz"}));
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
    // "crave porridge" is not literally in "Craving porridge ...": its rarest word stands in.
    EXPECT_EQ(s.probes[0].evidence[1].key_details[0].variants, (std::vector<std::string>{"porridge"}));
}

TEST(ImportCsv, LongHopSessionsNeverHoldTwoLinksOfOneChain) {
    mf::ImportReport report;
    const Scenario s = import_fixture("long_hop", report);
    std::map<std::string, std::size_t> facts_per_message;
    std::size_t facts = 0;
    const memfail::data::MessageIndex index(s);
    for (const auto& p : s.probes) {
        std::set<std::string> messages;
        for (const auto& f : p.evidence) {
            ASSERT_EQ(f.message_ids.size(), 1u);
            EXPECT_TRUE(messages.insert(f.message_ids[0]).second) << p.id << " has two links in one session";
            ++facts_per_message[f.message_ids[0]];
            ++facts;
            // The session's message holds the fact.
            const auto* message = index.message(f.message_ids[0]);
            ASSERT_NE(message, nullptr);
            EXPECT_NE(message->content.find(f.text), std::string::npos);
        }
    }
    EXPECT_EQ(facts, 2u + 3u + 4u + 2u);
    EXPECT_EQ(facts_per_message.size(), s.sessions.size());  // no empty session
    for (const auto& [message, count] : facts_per_message) EXPECT_LE(count, 4u) << message;
    // The 4-fact chain needs four sessions, and packing should not waste more than one.
    EXPECT_GE(s.sessions.size(), 4u);
    EXPECT_LE(s.sessions.size(), (facts + 3) / 4 + 1);
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
    EXPECT_EQ(report.warnings.size(), 1u);  // the stored-distractor count
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
    report.warnings.push_back("earlier warning");
    auto result = mf::import_memfail_csv_text(csv, "bad.csv", "conditional_facts_easy", report);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, memfail::ErrorKind::invalid_input);
    EXPECT_EQ(result.error().describe().rfind("bad.csv:4: column 'entity_facts': not valid JSON", 0), 0u)
        << result.error().describe();
    // Nothing half-done: the caller's report is as it was.
    EXPECT_EQ(report.warnings, std::vector<std::string>{"earlier warning"});
    EXPECT_EQ(report.rows, 0u);
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

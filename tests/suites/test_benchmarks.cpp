// SPDX-License-Identifier: MIT
// Tests of the benchmarks suite (suites/benchmarks/): LoCoMo's token F1 and NLTK's Porter stemmer
// against the authors' code (fixtures/porter: NLTK 3.8's stems of 8,654 words); the LoCoMo and
// LongMemEval importers on fixtures written in the published schemas (fixtures/locomo,
// fixtures/longmemeval), every oddity noted; fuzzers over mutated fixture JSON and bytes; and the
// LongMemEval stream: instances handed over before the file ends, memory bounded on a large file.
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/benchmarks/benchmarks_suite.hpp>
#include <memfail/suites/benchmarks/common.hpp>
#include <memfail/suites/benchmarks/import_locomo.hpp>
#include <memfail/suites/benchmarks/import_longmemeval.hpp>
#include <memfail/suites/benchmarks/metric.hpp>

#include "benchmark_test_util.hpp"
#include "suite_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace {

namespace bm = memfail::suites::benchmarks;
using memfail::data::ProbeKind;
using memfail::data::Scenario;
using memfail::suites::ImportNote;
using memfail::suites::ImportResult;
using memfail::testing::ScratchDir;
using memfail::testing::benchmarks::describe;
using memfail::testing::benchmarks::Imported;
using memfail::testing::benchmarks::noted;
using memfail::testing::benchmarks::probe;
using memfail::testing::benchmarks::violations_of;
using memfail::testing::benchmarks::import_file;
using nlohmann::json;

const std::string k_fixtures = MEMFAIL_TEST_FIXTURES;
const std::string k_locomo = k_fixtures + "/locomo/locomo10-fixture.json";
const std::string k_longmemeval = k_fixtures + "/longmemeval/longmemeval-fixture.json";

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}







const memfail::data::Message* message(const Scenario& s, const std::string& id) {
    return memfail::data::MessageIndex(s).message(id);  // points into `s`, not the index
}

// ---------------------------------------------------------------------------------------------
// The metric.

TEST(BenchmarkMetric, PorterStemMatchesNltkOnEveryListedWord) {
    std::ifstream in(k_fixtures + "/porter/nltk-3.8-stems.tsv");
    std::string line;
    std::size_t checked = 0, wrong = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        const auto tab = line.find('\t');
        ASSERT_NE(tab, std::string::npos) << line;
        const std::string word = line.substr(0, tab), stem = line.substr(tab + 1);
        ++checked;
        if (bm::porter_stem(word) != stem && ++wrong <= 20)
            ADD_FAILURE() << word << ": NLTK " << stem << ", ours " << bm::porter_stem(word);
    }
    EXPECT_GT(checked, 8000u);
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(bm::porter_stem("Skies"), "sky");  // lower-cased first
    EXPECT_EQ(bm::porter_stem("café"), "café");
    EXPECT_EQ(bm::porter_stem(""), "");
}

TEST(BenchmarkMetric, LocomoNormalizeDropsCommasPunctuationAndArticles) {
    EXPECT_EQ(bm::locomo_normalize("The cat, and a Dog!"), "cat dog");
    EXPECT_EQ(bm::locomo_normalize("an apple-pie; the end"), "applepie end");
    EXPECT_EQ(bm::locomo_normalize("  Théâtre   AND  Ã  "), "théâtre ã");
    EXPECT_EQ(bm::locomo_normalize("band the theatre"), "band theatre");  // whole words only
}

TEST(BenchmarkMetric, LocomoScoresMatchTheAuthorsCode) {
    // Each expected value computed by LoCoMo's task_eval/evaluation.py (NLTK 3.8, regex).
    struct Case {
        int category;
        const char* prediction;
        const char* answer;
        double expected;
    };
    const Case cases[] = {
        {4, "Biscuit", "Biscuit", 1.0},
        {4, "Her dog is called Biscuit.", "Biscuit", 0.33333333333333337},
        {2, "She adopted him the weekend before March 3, 2023", "The weekend before 3 March 2023", 0.7692307692307693},
        {1, "pottery and camping", "pottery, camping", 0.6666666666666666},
        {1, "camping, pottery classes, running", "pottery, camping", 0.8333333333333333},
        {3, "watercolour paintings", "watercolour painting; painting", 1.0},
        {4, "1 hour and 52 minutes", "1 hour 52 minutes", 1.0},
        {4, "", "blue", 0.0},
        {5, "That is not mentioned in the conversation.", "x", 1.0},
        {5, "No information available.", "x", 1.0},
        {5, "A greyhound", "x", 0.0},
        {2, "The running, the jumping and the generalizations", "runs jumped generalization", 1.0},
        {4, "Café au lait — délicieux!", "cafe au lait", 0.5},
        {4, "the the the", "the", 0.0},
    };
    for (const auto& c : cases) {
        const auto score = bm::locomo_score(c.category, c.prediction, c.answer);
        ASSERT_TRUE(score.has_value()) << c.prediction;
        EXPECT_NEAR(*score, c.expected, 1e-12) << "category " << c.category << ": '" << c.prediction << "' vs '" << c.answer << "'";
    }
    EXPECT_FALSE(bm::locomo_score(6, "x", "x").has_value());
    EXPECT_FALSE(bm::locomo_score(0, "x", "x").has_value());
    EXPECT_EQ(bm::locomo_category_name(1), "multi-hop");
    EXPECT_EQ(bm::locomo_category_name(5), "adversarial");
    EXPECT_EQ(bm::longmemeval_question_types().size(), 6u);
}

TEST(BenchmarkDates, BothBenchmarksDatesBecomeIso8601) {
    EXPECT_EQ(bm::locomo_date_time("1:56 pm on 8 May, 2023").value_or(""), "2023-05-08T13:56:00Z");
    EXPECT_EQ(bm::locomo_date_time("12:09 am on 27 June, 2023").value_or(""), "2023-06-27T00:09:00Z");
    EXPECT_EQ(bm::locomo_date_time("10:37 AM on 1 Sept, 2023").value_or(""), "2023-09-01T10:37:00Z");
    EXPECT_EQ(bm::locomo_date_time("8 May, 2023").value_or(""), "2023-05-08T00:00:00Z");
    EXPECT_FALSE(bm::locomo_date_time("31 April, 2023"));
    EXPECT_FALSE(bm::locomo_date_time("not a date"));
    EXPECT_FALSE(bm::locomo_date_time(""));
    EXPECT_EQ(bm::longmemeval_date("2023/05/20 (Sat) 02:21").value_or(""), "2023-05-20T02:21:00Z");
    EXPECT_EQ(bm::longmemeval_date("2023/05/20").value_or(""), "2023-05-20T00:00:00Z");
    EXPECT_FALSE(bm::longmemeval_date("bad date"));
}

// ---------------------------------------------------------------------------------------------
// LoCoMo.

TEST(LocomoImport, FixtureGivesOneValidScenarioPerSample) {
    const Imported in = import_file("locomo", k_locomo);
    ASSERT_EQ(in.scenarios.size(), 2u);
    EXPECT_EQ(in.result.files_read, 1u);
    EXPECT_TRUE(in.result.scenarios.empty());  // handed over one by one
    for (const auto& s : in.scenarios) {
        EXPECT_EQ(s.suite, "benchmarks");
        EXPECT_EQ(s.dataset, "locomo");
        EXPECT_FALSE(s.uses_v2());
        const auto v = violations_of(s);
        EXPECT_TRUE(v.empty()) << memfail::testing::describe(v);
        auto back = memfail::data::scenario_from_json(json::parse(memfail::data::to_json(s).dump()));
        ASSERT_TRUE(back) << back.error().describe();
    }
    EXPECT_EQ(in.scenarios[0].id, "conv-fx1");
    EXPECT_EQ(in.scenarios[0].probes.size(), 13u);  // every question kept
    EXPECT_EQ(in.scenarios[1].probes.size(), 6u);
}

TEST(LocomoImport, SessionsInNumericOrderTurnsNamedByDiaIdImagesCaptioned) {
    const Imported in = import_file("locomo", k_locomo);
    ASSERT_EQ(in.scenarios.size(), 2u);
    const Scenario& s = in.scenarios[0];
    ASSERT_EQ(s.sessions.size(), 3u);
    EXPECT_EQ(s.sessions[0].id, "session_1");
    EXPECT_EQ(s.sessions[1].id, "session_2");
    EXPECT_EQ(s.sessions[2].id, "session_10");  // not key order (session_10 < session_2)
    EXPECT_EQ(s.sessions[0].timestamp, "2023-03-03T09:05:00Z");
    EXPECT_EQ(s.sessions[2].timestamp, "2023-04-02T12:15:00Z");
    const auto* turn = message(s, "D1:1");
    ASSERT_NE(turn, nullptr);
    EXPECT_EQ(turn->role, "user");
    EXPECT_EQ(turn->content, "Priya: Morning Tomas! I finally adopted a rescue greyhound named Biscuit last weekend.");
    const auto* image = message(s, "D1:5");
    ASSERT_NE(image, nullptr);
    EXPECT_EQ(image->content,
              "Priya: Here is the first bowl I made. It is a bit crooked! [shared a photo of a lopsided blue ceramic bowl on a table]");
    const auto* only_image = message(s, "D2:5");
    ASSERT_NE(only_image, nullptr);
    EXPECT_EQ(only_image->content, "Tomas: [shared a photo of a finisher medal with a red ribbon]");
    // The repeated dia_id: the second turn renamed, noted.
    ASSERT_NE(message(s, "D10:2-2"), nullptr);
    EXPECT_TRUE(noted(in.result.notes, "[0].conversation.session_10[2].dia_id", "imported as 'D10:2-2'")) << describe(in.result.notes);
    // An unreadable date takes the previous session's.
    const Scenario& t = in.scenarios[1];
    EXPECT_EQ(t.sessions[1].timestamp, t.sessions[0].timestamp);
    EXPECT_TRUE(noted(in.result.notes, "[1].conversation.session_2_date_time", "unreadable date")) << describe(in.result.notes);
    EXPECT_EQ(s.meta["speakers"], json::array({"Priya", "Tomas"}));
    EXPECT_EQ(s.meta["unmapped"]["release_note"], "a key the importer does not know");
}

TEST(LocomoImport, QuestionsCarryTheirCategoryAndEvidenceWithDerivedDetails) {
    const Imported in = import_file("locomo", k_locomo);
    ASSERT_EQ(in.scenarios.size(), 2u);
    const Scenario& s = in.scenarios[0];
    for (const auto& p : s.probes) EXPECT_EQ(p.after_session, "session_10") << p.id;
    const auto& dog = probe(s, "qa-1");
    EXPECT_EQ(dog.kind, ProbeKind::open);
    EXPECT_EQ(dog.answer, "Biscuit");
    EXPECT_EQ(dog.meta["category"], 4);
    EXPECT_EQ(dog.meta["category_name"], "single-hop");
    ASSERT_EQ(dog.evidence.size(), 1u);
    EXPECT_EQ(dog.evidence[0].message_ids, std::vector<std::string>{"D1:1"});
    ASSERT_EQ(dog.evidence[0].key_details.size(), 1u);
    EXPECT_EQ(dog.evidence[0].key_details[0].variants[0], "Biscuit");
    EXPECT_TRUE(dog.evidence[0].details_complete);
    // A date the answer computes from the session date is in no turn: the judge decides.
    const auto& when = probe(s, "qa-2");
    EXPECT_EQ(when.meta["category_name"], "temporal");
    ASSERT_EQ(when.evidence.size(), 1u);
    EXPECT_FALSE(when.evidence[0].details_complete);
    EXPECT_TRUE(when.evidence[0].key_details.empty());
    // Multi-hop: one fact per cited turn, each with the part of the answer it holds.
    const auto& hobbies = probe(s, "qa-3");
    ASSERT_EQ(hobbies.evidence.size(), 2u);
    EXPECT_EQ(memfail::text::to_lower(hobbies.evidence[0].key_details.at(0).variants[0]), "pottery");
    EXPECT_EQ(memfail::text::to_lower(hobbies.evidence[1].key_details.at(0).variants[0]), "camping");
    EXPECT_EQ(hobbies.evidence[1].statements,
              std::vector<std::string>{"I went camping in Snowdonia with my sister over the weekend."});
}

TEST(LocomoImport, EmptyEvidenceIsFilledOnlyFromTheSpeakerAskedAboutAndWholeConversationsAreUnusable) {
    ScratchDir dir;
    json turns = json::array();
    for (int i = 1; i <= 30; ++i)
        turns.push_back({{"speaker", i % 2 ? "Ann" : "Ben"}, {"dia_id", "D1:" + std::to_string(i)},
                         {"text", i == 2 ? "I bought a red kayak last spring." : "Turn " + std::to_string(i) + " about nothing."}});
    json every = json::array();
    for (int i = 1; i <= 30; ++i) every.push_back("D1:" + std::to_string(i));
    const json sample = json::array({{{"sample_id", "conv-ev"},
                                      {"conversation", {{"speaker_a", "Ann"}, {"speaker_b", "Ben"},
                                                        {"session_1", turns}, {"session_1_date_time", "1:56 pm on 8 May, 2023"}}},
                                      {"qa", json::array({
                                          // Ben's turn holds the words; the question is about Ann: not Ben's turn.
                                          {{"question", "What did Ann buy?"}, {"answer", "a red kayak"}, {"evidence", json::array()}, {"category", 4}},
                                          // About Ben, whose turn holds them: cited.
                                          {{"question", "What did Ben buy last spring?"}, {"answer", "a red kayak"}, {"evidence", json::array()}, {"category", 4}},
                                          // Names both speakers: no single one to take evidence from.
                                          {{"question", "What did Ann and Ben talk about?"}, {"answer", "a red kayak"}, {"evidence", json::array()}, {"category", 4}},
                                          // Cites the whole conversation.
                                          {{"question", "What is Ben like?"}, {"answer", "outdoorsy"}, {"evidence", every}, {"category", 3}}})}}});
    const std::string path = dir.path() + "/locomo.json";
    std::ofstream(path) << sample.dump();
    const Imported in = import_file("locomo", path);
    ASSERT_EQ(in.scenarios.size(), 1u);
    const Scenario& s = in.scenarios[0];
    const auto& ann = probe(s, "qa-1");
    EXPECT_TRUE(ann.evidence.empty());
    EXPECT_EQ(ann.meta["evidence_usable"], false);
    const auto& ben = probe(s, "qa-2");
    ASSERT_EQ(ben.evidence.size(), 1u);
    EXPECT_EQ(ben.evidence[0].message_ids, std::vector<std::string>{"D1:2"});
    EXPECT_EQ(ben.meta["evidence_resolution"], "derived from the answer");
    const auto& both = probe(s, "qa-3");
    EXPECT_TRUE(both.evidence.empty());
    EXPECT_TRUE(noted(in.result.notes, "[0].qa[2].evidence", "names no single speaker")) << describe(in.result.notes);
    const auto& whole = probe(s, "qa-4");
    EXPECT_TRUE(whole.evidence.empty());
    EXPECT_EQ(whole.meta["evidence_usable"], false);
    EXPECT_EQ(whole.meta["evidence_cited_turns"], 30);
    EXPECT_TRUE(noted(in.result.notes, "[0].qa[3].evidence", "cites 30 of the conversation's 30 turns")) << describe(in.result.notes);
    EXPECT_TRUE(violations_of(s).empty());
}

TEST(LocomoImport, EveryOddityIsKeptAndNoted) {
    const Imported in = import_file("locomo", k_locomo);
    ASSERT_EQ(in.scenarios.size(), 2u);
    const auto& notes = in.result.notes;
    const Scenario& s = in.scenarios[0];
    // Two ids in one string.
    const auto& race = probe(s, "qa-4");
    ASSERT_EQ(race.evidence.size(), 2u);
    EXPECT_EQ(race.evidence[0].message_ids[0], "D2:1");
    EXPECT_EQ(race.evidence[1].message_ids[0], "D1:4");
    EXPECT_TRUE(noted(notes, "[0].qa[3].evidence[0]", "read as D2:1, D1:4")) << describe(notes);
    // A numeric answer kept as text.
    const auto& nights = probe(s, "qa-5");
    EXPECT_EQ(nights.answer, "3");
    EXPECT_TRUE(noted(notes, "[0].qa[4].answer", "numeric answer")) << describe(notes);
    // A leading zero; an extra colon.
    EXPECT_EQ(probe(s, "qa-6").evidence.at(0).message_ids[0], "D1:5");
    EXPECT_TRUE(noted(notes, "[0].qa[5].evidence[0]", "read as D1:5")) << describe(notes);
    EXPECT_EQ(probe(s, "qa-13").evidence.at(0).message_ids[0], "D2:1");
    // An id naming no turn: dropped; the turn holding the answer is cited instead.
    const auto& camping = probe(s, "qa-9");
    EXPECT_TRUE(noted(notes, "[0].qa[8].evidence[0]", "D2:9 names no turn")) << describe(notes);
    ASSERT_EQ(camping.evidence.size(), 1u);
    EXPECT_EQ(camping.evidence[0].message_ids[0], "D2:2");
    EXPECT_EQ(camping.meta["evidence_resolution"], "derived from the answer");
    // No evidence and no turn of the speaker asked about holding the answer: left without evidence,
    // its memory side not decided (never a whole conversation cited, never another speaker's turn).
    const auto& year = probe(s, "qa-10");
    EXPECT_EQ(year.answer, "2023");
    EXPECT_TRUE(year.evidence.empty());
    EXPECT_EQ(year.meta["evidence_resolution"], "none");
    EXPECT_EQ(year.meta["evidence_usable"], false);
    EXPECT_TRUE(noted(notes, "[0].qa[9].evidence", "no turn of Priya holds the answer's words")) << describe(notes);
    // Adversarial: declined, with and without the answer field.
    const auto& breed = probe(s, "qa-11");
    EXPECT_EQ(breed.kind, ProbeKind::abstain);
    EXPECT_TRUE(breed.evidence.empty());
    EXPECT_EQ(breed.meta["adversarial_answer"], "greyhound");
    EXPECT_EQ(breed.meta["evidence"], json::array({"D1:1"}));
    const auto& both = probe(s, "qa-12");
    EXPECT_EQ(both.kind, ProbeKind::abstain);
    EXPECT_EQ(both.meta["answer"], "a blue bowl");
    EXPECT_TRUE(noted(notes, "[0].qa[11]", "both answer and adversarial_answer")) << describe(notes);
    // Both fields on a non-adversarial item: the answer.
    EXPECT_EQ(probe(s, "qa-13").answer, "Lisbon");
    EXPECT_TRUE(noted(notes, "[0].qa[12]", "answer used")) << describe(notes);
    // Category 3's alternatives: details from the first the turn holds.
    EXPECT_EQ(probe(s, "qa-7").meta["category_name"], "open-domain");
    // A category written as text; one outside 1..5.
    const Scenario& t = in.scenarios[1];
    EXPECT_EQ(probe(t, "qa-2").meta["category"], 4);
    EXPECT_EQ(probe(t, "qa-6").meta["category"], 0);
    EXPECT_EQ(probe(t, "qa-6").meta["category_written"], 9);
    EXPECT_TRUE(noted(notes, "[1].qa[5].category", "not 1..5")) << describe(notes);
    // The generated annotations: one note for the file.
    std::size_t annotations = 0;
    for (const auto& n : notes) annotations += n.message.find("generated annotations") != std::string::npos;
    EXPECT_EQ(annotations, 1u);
    for (const auto& n : notes) EXPECT_EQ(n.file, k_locomo);
}

// ---------------------------------------------------------------------------------------------
// LongMemEval.

TEST(LongMemEvalImport, FixtureGivesOneValidScenarioPerInstance) {
    const Imported in = import_file("longmemeval", k_longmemeval);
    ASSERT_EQ(in.scenarios.size(), 8u);
    for (const auto& s : in.scenarios) {
        EXPECT_EQ(s.dataset, "longmemeval");
        ASSERT_EQ(s.probes.size(), 1u);
        EXPECT_EQ(s.probes[0].after_session, s.sessions.back().id);
        const auto v = violations_of(s);
        EXPECT_TRUE(v.empty()) << s.id << "\n" << memfail::testing::describe(v);
    }
    const Scenario& first = in.scenarios[0];
    EXPECT_EQ(first.id, "fx_ssu_01");
    ASSERT_EQ(first.sessions.size(), 3u);
    EXPECT_EQ(first.sessions[1].id, "answer_fx_ssu_1");
    EXPECT_EQ(first.sessions[0].timestamp, "2023-05-20T02:21:00Z");
    const auto& p = first.probes[0];
    EXPECT_EQ(p.meta["question_type"], "single-session-user");
    EXPECT_EQ(p.meta["question_date"], "2023-05-30T23:40:00Z");
    ASSERT_EQ(p.evidence.size(), 1u);
    EXPECT_EQ(p.evidence[0].message_ids[0], "answer_fx_ssu_1:1");
    EXPECT_EQ(p.evidence[0].key_details.at(0).variants[0], "Business Administration");
}

TEST(LongMemEvalImport, EvidenceFromHasAnswerTurnsAcrossSessions) {
    const Imported in = import_file("longmemeval", k_longmemeval);
    ASSERT_EQ(in.scenarios.size(), 8u);
    // The assistant's turn.
    const auto& ssa = in.scenarios[1].probes[0];
    ASSERT_EQ(ssa.evidence.size(), 1u);
    EXPECT_EQ(message(in.scenarios[1], ssa.evidence[0].message_ids[0])->role, "assistant");
    // A preference rubric is not words of a turn: the judge decides.
    const auto& pref = in.scenarios[2].probes[0];
    ASSERT_EQ(pref.evidence.size(), 1u);
    EXPECT_FALSE(pref.evidence[0].details_complete);
    // A numeric answer.
    EXPECT_EQ(in.scenarios[3].probes[0].answer, "12");
    EXPECT_EQ(in.scenarios[3].probes[0].evidence.size(), 2u);
    // Knowledge update: the old value and the new one.
    const auto& ku = in.scenarios[4].probes[0];
    ASSERT_EQ(ku.evidence.size(), 2u);
    EXPECT_EQ(ku.evidence[0].message_ids[0], "answer_fx_ku_1:1");
    EXPECT_EQ(ku.evidence[1].message_ids[0], "answer_fx_ku_2:1");
    EXPECT_FALSE(ku.evidence[0].details_complete);  // "hallway": not the current answer
    EXPECT_TRUE(ku.evidence[1].details_complete);
    // Multi-session: a repeated session id renamed; evidence in two sessions.
    const Scenario& ms = in.scenarios[5];
    EXPECT_EQ(ms.sessions[1].id, "answer_fx_ms_1-2");
    ASSERT_EQ(ms.probes[0].evidence.size(), 2u);
    EXPECT_EQ(ms.probes[0].evidence[1].message_ids[0], "answer_fx_ms_2:1");
}

TEST(LongMemEvalImport, AbstentionAndOdditiesAreKeptAndNoted) {
    const Imported in = import_file("longmemeval", k_longmemeval);
    ASSERT_EQ(in.scenarios.size(), 8u);
    const auto& notes = in.result.notes;
    const auto& abs = in.scenarios[6].probes[0];
    EXPECT_EQ(abs.kind, ProbeKind::abstain);
    EXPECT_TRUE(abs.evidence.empty());
    EXPECT_EQ(abs.meta["abstention"], true);
    EXPECT_EQ(abs.meta["related_turns"], json::array({"answer_fx_abs_1:1"}));
    EXPECT_TRUE(noted(notes, "[2].answer", "") == false);
    EXPECT_TRUE(noted(notes, "[3].answer", "numeric answer")) << describe(notes);
    EXPECT_TRUE(noted(notes, "[4].haystack_sessions[2][1].role", "'tool'; taken as user")) << describe(notes);
    EXPECT_TRUE(noted(notes, "[5].haystack_session_ids[1]", "imported as 'answer_fx_ms_1-2'")) << describe(notes);
    EXPECT_TRUE(noted(notes, "[5].haystack_dates[1]", "unreadable date")) << describe(notes);
    // No has_answer turn: the answer session's turn holding the answer's words.
    const auto& cat = in.scenarios[7].probes[0];
    ASSERT_EQ(cat.evidence.size(), 1u);
    EXPECT_EQ(cat.evidence[0].message_ids[0], "answer_fx_ssu_8:1");
    EXPECT_EQ(cat.meta["evidence_resolution"], "derived from the answer");
    EXPECT_TRUE(noted(notes, "[7].haystack_sessions", "no turn has has_answer")) << describe(notes);
    EXPECT_EQ(in.scenarios[7].meta["unmapped"]["release_note"], "kept in meta.unmapped");
}

TEST(BenchmarkImport, UnreadableFilesAreRefusedByName) {
    ScratchDir dir;
    auto refused = [&](const std::string& format, const std::string& content, const std::string& words) {
        dir.write("x.json", content);
        auto r = bm::benchmarks_suite().import_each(format, dir.file("x.json"), [](Scenario&&) -> memfail::Result<void> { return {}; });
        ASSERT_FALSE(r) << content;
        EXPECT_NE(r.error().describe().find(dir.file("x.json")), std::string::npos) << r.error().describe();
        EXPECT_NE(r.error().message.find(words), std::string::npos) << r.error().message;
    };
    refused("locomo", "{\"sample_id\": 1}", "must hold a JSON list");
    refused("longmemeval", "[", "not valid JSON");
    refused("longmemeval", "[]", "the list is empty");
    refused("locomo", "[1, 2]", "a sample must be an object");
    refused("longmemeval", std::string(100, '[') + std::string(100, ']'), "nesting deeper than 64");
    auto missing = bm::benchmarks_suite().import_each("locomo", dir.file("nope.json"), [](Scenario&&) -> memfail::Result<void> { return {}; });
    EXPECT_FALSE(missing);
    // A sink's error stops the import and is returned as it is.
    auto stopped = bm::benchmarks_suite().import_each("longmemeval", k_longmemeval, [](Scenario&&) -> memfail::Result<void> {
        return memfail::make_error(memfail::ErrorKind::io, "disk full");
    });
    ASSERT_FALSE(stopped);
    EXPECT_EQ(stopped.error().message, "disk full");
}

// ---------------------------------------------------------------------------------------------
// Fuzzing: whatever the input, the importers do not crash or throw, and every scenario they hand
// over passes structural validation and the JSONL round trip; an element that cannot be imported
// is skipped with a note, a file that cannot be read is refused by name.

json random_value(memfail::Rng& rng, const json& root) {
    static const std::vector<json> k_values = {
        nullptr, 0, -1, 1, 2, 3, 5, 6, 3.5, 1e300, true, false, "", " ", "x", "D1:1", "D1:1; D2:2", "D0:0", "D:1:2",
        "D99999999:1", "user", "assistant", "tool", "_abs", "multi-session", "single-session-preference",
        "1:56 pm on 8 May, 2023", "2023/05/20 (Sat) 02:21", "../etc/passwd", ".hidden", "\xC3\xA9t\xC3\xA9",
        std::string(300, 'a'), json::array(), json::object(), json::array({1, "a", nullptr}),
        json{{"speaker", "A"}, {"dia_id", "D1:1"}, {"text", "hi"}}, json{{"role", "user"}, {"content", "hello"}, {"has_answer", true}}};
    return memfail::testing::fuzz::random_value(rng, root, k_values);
}

template <class ImportOne>
void fuzz_elements(const std::string& fixture, std::uint64_t seed, int rounds, ImportOne import_one) {
    memfail::Rng rng(seed);
    const json all = json::parse(read_text(fixture));
    std::size_t imported = 0, refused = 0;
    for (int round = 0; round < rounds; ++round) {
        json j = all[static_cast<std::size_t>(round) % all.size()];
        for (std::size_t n = 1 + rng.below(4); n > 0; --n) memfail::testing::fuzz::mutate(rng, j, random_value);
        SCOPED_TRACE("round " + std::to_string(round) + ": " + j.dump().substr(0, 300));
        std::vector<ImportNote> notes;
        bm::Notes sink(notes);
        memfail::Result<Scenario> s = memfail::make_error(memfail::ErrorKind::internal, "not run");
        ASSERT_NO_THROW(s = import_one(j, sink));
        if (!s) {
            ++refused;
            EXPECT_FALSE(s.error().message.empty());
            continue;
        }
        ++imported;
        const auto violations = violations_of(*s);
        ASSERT_TRUE(violations.empty()) << memfail::testing::describe(violations);
        json written;
        ASSERT_NO_THROW(written = memfail::data::to_json(*s));
        auto back = memfail::data::scenario_from_json(json::parse(written.dump()));
        ASSERT_TRUE(back) << back.error().describe();
        for (const auto& n : notes) EXPECT_NO_THROW((void)json({n.file, n.json_path, n.message}).dump());
    }
    EXPECT_GT(imported, static_cast<std::size_t>(rounds) / 4);
    EXPECT_GT(refused, 5u);
}

TEST(BenchmarkImportFuzz, MutatedLocomoSamplesImportValidOrAreRefused) {
    fuzz_elements(k_locomo, 20260718, 400, [](const json& j, bm::Notes& notes) {
        return bm::import_locomo_sample(j, 0, "fuzz.json", notes);
    });
}

TEST(BenchmarkImportFuzz, MutatedLongMemEvalInstancesImportValidOrAreRefused) {
    fuzz_elements(k_longmemeval, 9119, 400, [](const json& j, bm::Notes& notes) {
        return bm::import_longmemeval_instance(j, 0, "fuzz.json", notes);
    });
}

TEST(BenchmarkImportFuzz, MutatedBytesAreImportedOrRefusedByFile) {
    memfail::Rng rng(4242);
    ScratchDir dir;
    const std::string files[] = {k_locomo, k_longmemeval};
    const char* formats[] = {"locomo", "longmemeval"};
    std::size_t imported = 0, refused = 0;
    for (int round = 0; round < 300; ++round) {
        const std::size_t f = static_cast<std::size_t>(round) % 2;
        std::string text = read_text(files[f]);
        for (std::size_t n = 1 + rng.below(3); n > 0; --n) memfail::testing::fuzz::mutate_bytes(rng, text);
        dir.write("file.json", text);
        SCOPED_TRACE("round " + std::to_string(round));
        std::vector<Scenario> got;
        memfail::Result<ImportResult> r = memfail::make_error(memfail::ErrorKind::internal, "not run");
        ASSERT_NO_THROW(r = bm::benchmarks_suite().import_each(formats[f], dir.file("file.json"), [&](Scenario&& s) -> memfail::Result<void> {
            got.push_back(std::move(s));
            return {};
        }));
        if (!r) {
            ++refused;
            EXPECT_NE(r.error().describe().find(dir.file("file.json")), std::string::npos) << r.error().describe();
            EXPECT_NO_THROW((void)json(r.error().message).dump());
            continue;
        }
        ++imported;
        EXPECT_FALSE(got.empty());
        for (const auto& s : got) EXPECT_TRUE(violations_of(s).empty()) << memfail::testing::describe(violations_of(s));
        for (const auto& n : r->notes) EXPECT_NO_THROW((void)json({n.file, n.json_path, n.message}).dump());
    }
    EXPECT_GT(imported, 20u);
    EXPECT_GT(refused, 20u);
}

// ---------------------------------------------------------------------------------------------
// Streaming.

// A LongMemEval-shaped instance of about `bytes` bytes of turns.
json big_instance(std::size_t n, std::size_t bytes) {
    json sessions = json::array(), ids = json::array(), dates = json::array();
    const std::string filler = "This is a long haystack turn about weather, recipes and travel plans, kept for the memory. ";
    std::size_t size = 0;
    for (std::size_t s = 0; size < bytes; ++s) {
        json turns = json::array();
        for (int t = 0; t < 8; ++t) {
            std::string content;
            for (int k = 0; k < 20; ++k) content += filler;
            if (s == 0 && t == 0) content = "I keep my spare key under the blue flowerpot. " + content;
            size += content.size();
            turns.push_back({{"role", t % 2 ? "assistant" : "user"}, {"content", content}});
            if (s == 0 && t == 0) turns.back()["has_answer"] = true;
        }
        sessions.push_back(turns);
        ids.push_back("s" + std::to_string(n) + "_" + std::to_string(s));
        dates.push_back("2023/05/20 (Sat) 02:21");
    }
    return {{"question_id", "big_" + std::to_string(n)}, {"question_type", "single-session-user"},
            {"question", "Where is my spare key?"}, {"answer", "under the blue flowerpot"},
            {"question_date", "2023/06/01 (Thu) 10:00"}, {"haystack_session_ids", ids}, {"haystack_dates", dates},
            {"haystack_sessions", sessions}, {"answer_session_ids", json::array({ids[0]})}};
}

TEST(LongMemEvalStreaming, EachInstanceIsHandedOverBeforeTheFileEnds) {
    // The file is a pipe whose writer sends the second instance only once the first has reached
    // the sink: an importer that read the whole file first would wait for ever (the test times out
    // after 20 s instead).
    ScratchDir dir;
    const std::string fifo = dir.file("stream.json");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::mutex mutex;
    std::condition_variable cv;
    bool first_seen = false;
    std::atomic<bool> timed_out{false};
    std::thread writer([&] {
        std::ofstream out(fifo, std::ios::binary);
        out << "[" << big_instance(1, 20000).dump() << "," << std::flush;
        std::unique_lock lock(mutex);
        if (!cv.wait_for(lock, std::chrono::seconds(20), [&] { return first_seen; })) timed_out = true;
        out << big_instance(2, 20000).dump() << "]" << std::flush;
    });
    std::vector<std::string> ids;
    auto r = bm::import_longmemeval(fifo, [&](Scenario&& s) -> memfail::Result<void> {
        ids.push_back(s.id);
        {
            std::lock_guard lock(mutex);
            first_seen = true;
        }
        cv.notify_all();
        return {};
    });
    writer.join();
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_FALSE(timed_out.load()) << "the first instance reached the sink only after the whole file was sent";
    EXPECT_EQ(ids, (std::vector<std::string>{"big_1", "big_2"}));
}

[[maybe_unused]] long resident_kib() {
    std::ifstream statm("/proc/self/statm");
    long pages = 0, resident = 0;
    statm >> pages >> resident;
    return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

TEST(LongMemEvalStreaming, MemoryStaysBoundedOnAMultiMegabyteFile) {
#if defined(MEMFAIL_SANITIZED_ADDRESS)
    GTEST_SKIP() << "AddressSanitizer keeps freed memory in quarantine: resident size says nothing here";
#else
    ScratchDir dir;
    const std::string path = dir.file("big.json");
    constexpr std::size_t k_instances = 24, k_instance_bytes = 2u << 20;  // ~48 MiB in all
    {
        std::ofstream out(path, std::ios::binary);
        out << "[";
        for (std::size_t i = 0; i < k_instances; ++i) out << (i ? "," : "") << big_instance(i, k_instance_bytes).dump();
        out << "]";
    }
    const long file_kib = static_cast<long>(std::filesystem::file_size(path) / 1024);
    const long before = resident_kib();
    long peak = before;
    std::size_t count = 0;
    auto r = bm::import_longmemeval(path, [&](Scenario&& s) -> memfail::Result<void> {
        ++count;
        EXPECT_EQ(s.probes.at(0).evidence.size(), 1u);
        peak = std::max(peak, resident_kib());
        return {};
    });
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_EQ(count, k_instances);
    // One instance's tree and scenario at a time: far below the file's size.
    RecordProperty("resident_growth_kib", static_cast<int>(peak - before));
    RecordProperty("file_kib", static_cast<int>(file_kib));
    EXPECT_LT(peak - before, file_kib / 3) << "resident grew by " << (peak - before) << " KiB over a " << file_kib << " KiB file";
#endif
}

}  // namespace

// SPDX-License-Identifier: MIT
// HaluMem's importer (suites/benchmarks/import_halumem.cpp) on fixtures written in the schema the
// authors' scripts write (fixtures/halumem: string booleans, sessions without a questions key,
// every memory point stamped with its session's end, interference points that repeat a real fact,
// "[...]" prefixes leaked into evidence, a Long line with an inserted question-answer session);
// its oddities noted; a broken line skipped, counted and the rest imported; mutated users imported
// valid or refused; and the grader's reading of a fact placed only among several messages, with
// and without provenance, in harmless formats and after corrupting changes.
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/grade/memory_grader.hpp>
#include <memfail/suites/benchmarks/benchmarks_suite.hpp>
#include <memfail/suites/benchmarks/common.hpp>
#include <memfail/suites/benchmarks/halumem_ops.hpp>
#include <memfail/suites/benchmarks/import_halumem.hpp>

#include "benchmark_test_util.hpp"
#include "suite_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace bm = memfail::suites::benchmarks;
namespace grade = memfail::grade;
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

Imported import_file(const std::string& path) { return memfail::testing::benchmarks::import_file("halumem", path); }
using nlohmann::json;

const std::string k_fixtures = MEMFAIL_TEST_FIXTURES;
const std::string k_medium = k_fixtures + "/halumem/halumem-medium-fixture.jsonl";
const std::string k_long = k_fixtures + "/halumem/halumem-long-fixture.jsonl";

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<json> fixture_users(const std::string& path) {
    std::vector<json> out;
    for (const auto& line : memfail::text::split(read_text(path), '\n'))
        if (!memfail::text::trim(line).empty()) out.push_back(json::parse(line));
    return out;
}







Scenario import_user(const json& user, std::vector<ImportNote>& notes) {
    bm::Notes sink(notes);
    auto s = bm::import_halumem_user(user, 0, "users.jsonl", sink);
    EXPECT_TRUE(s) << s.error().describe();
    return s ? *s : Scenario{};
}

TEST(HalumemDates, TheFilesClockBecomesIso8601) {
    EXPECT_EQ(bm::halumem_date("Jan 15, 2029, 15:12:20"), "2029-01-15T15:12:20Z");
    EXPECT_EQ(bm::halumem_date("Sep 04, 2030, 00:17:40"), "2030-09-04T00:17:40Z");
    EXPECT_EQ(bm::halumem_date("May 01, 2029, 13:23:58"), "2029-05-01T13:23:58Z");
    EXPECT_FALSE(bm::halumem_date("Feb 30, 2030, 10:00:00"));  // no such day
    EXPECT_FALSE(bm::halumem_date("Jan 15, 2029"));            // the clock is part of the form
    EXPECT_FALSE(bm::halumem_date("Jan 15, 2029, 24:00:00"));
    EXPECT_FALSE(bm::halumem_date("Jan 15, 2029, 9:5:0"));
    EXPECT_FALSE(bm::halumem_date("2029-01-15 15:12:20"));
}

TEST(HalumemImport, FixtureGivesOneValidScenarioPerUserWithItsSessionsPointsAndQuestions) {
    const Imported imported = import_file(k_medium);
    ASSERT_EQ(imported.scenarios.size(), 2u);
    EXPECT_EQ(imported.result.elements_skipped, 0u);
    for (const auto& s : imported.scenarios) {
        EXPECT_TRUE(violations_of(s).empty()) << memfail::testing::describe(violations_of(s));
        EXPECT_EQ(s.dataset, "halumem");
        EXPECT_EQ(s.meta.at("variant"), "medium");
    }
    const Scenario& priya = imported.scenarios[0];
    EXPECT_EQ(priya.id, "7c1e4a90-3b2d-a1f0-9e44-0d5b62c8f113");
    EXPECT_EQ(priya.meta.at("user_name"), "Priya Natarajan");
    ASSERT_EQ(priya.sessions.size(), 5u);
    EXPECT_EQ(priya.sessions[3].id, "s4");
    EXPECT_EQ(priya.sessions[3].timestamp, "2030-09-03T21:47:40Z");  // its start; it ends past midnight
    EXPECT_EQ(priya.sessions[0].messages.size(), 10u);
    EXPECT_EQ(priya.sessions[0].messages[4].id, "s1:5");
    EXPECT_EQ(priya.sessions[0].messages[4].role, "user");
    // Nine questions; the two sessions without a questions key ask none.
    ASSERT_EQ(priya.probes.size(), 9u);
    EXPECT_EQ(priya.probes[0].after_session, "s1");
    EXPECT_EQ(probe(priya, "s4-q1").after_session, "s4");
    EXPECT_EQ(probe(priya, "s4-q1").meta.at("question_date"), "2030-09-04T00:17:40Z");  // asked at the session's end
    EXPECT_EQ(probe(priya, "s4-q1").meta.at("question_type"), "Dynamic Update");
    EXPECT_EQ(probe(priya, "s1-q2").kind, ProbeKind::abstain);
    EXPECT_EQ(probe(priya, "s4-q5").kind, ProbeKind::abstain);
    EXPECT_TRUE(probe(priya, "s1-q2").evidence.empty());
    EXPECT_EQ(probe(priya, "s4-q3").kind, ProbeKind::open);
    EXPECT_EQ(probe(priya, "s4-q3").answer, "No, she started a weekly mentoring circle for new analysts.");

    // Memory points: every one kept, "True"/"False" read as strings are written, prefixes taken off.
    const json& points = priya.meta.at("memory_points");
    ASSERT_EQ(points.size(), 18u);
    std::size_t updates = 0, interference = 0;
    for (const auto& p : points) {
        updates += p.at("is_update").get<bool>();
        interference += p.at("memory_source") == "interference";
    }
    EXPECT_EQ(updates, 3u);  // the string "False" is not true
    EXPECT_EQ(interference, 4u);
    const json* title = nullptr;
    for (const auto& p : points)
        if (p.at("id") == "s4-m1") title = &p;
    ASSERT_TRUE(title);
    EXPECT_EQ(title->at("session"), "s4");
    EXPECT_EQ(title->at("original_memories").at(0),
              "Priya Natarajan was promoted to Lab Supervisor at Three Rivers Utility.");  // "[date][type]" taken off
    EXPECT_EQ(title->at("importance"), 1.0);

    // The one note: an evidence item that is no memory point leaves its question without facts.
    EXPECT_TRUE(noted(imported.result.notes, "line 1.sessions[4].questions[1].evidence[0]", "no memory point"))
        << describe(imported.result.notes);
    const auto& unresolved = probe(priya, "s5-q2");
    EXPECT_TRUE(unresolved.evidence.empty());
    EXPECT_EQ(unresolved.meta.at("evidence_usable"), false);
}

TEST(HalumemImport, EvidenceIsPlacedInOneMessageOnlyWhenNoOtherMessageHoldsTheAnswer) {
    const Imported imported = import_file(k_medium);
    ASSERT_EQ(imported.scenarios.size(), 2u);
    const Scenario& priya = imported.scenarios[0];
    // "Pittsburgh": one message of the point's session holds it, and no other message does.
    const auto& city = probe(priya, "s1-q1");
    ASSERT_EQ(city.evidence.size(), 1u);
    EXPECT_EQ(city.evidence[0].message_ids, std::vector<std::string>{"s1:5"});
    EXPECT_TRUE(city.evidence[0].details_complete);
    EXPECT_EQ(city.evidence[0].text, "Priya Natarajan lives in Pittsburgh.");
    EXPECT_EQ(city.evidence[0].statements, std::vector<std::string>{"I live in Pittsburgh, near the Strip District."});
    EXPECT_EQ(city.meta.at("evidence_resolution"), "message");
    // A computed answer ("2200 dollars"): its word "dollars" is in many messages, so each point is
    // placed among its session's user messages, for the judge.
    const auto& income = probe(priya, "s4-q2");
    ASSERT_EQ(income.evidence.size(), 2u);
    EXPECT_EQ(income.evidence[0].id, "s3-m2");
    EXPECT_EQ(income.evidence[1].id, "s4-m3");  // the real point, not the interference point with its text
    EXPECT_FALSE(income.evidence[0].details_complete);
    EXPECT_EQ(income.evidence[0].message_ids, (std::vector<std::string>{"s3:1", "s3:3", "s3:5"}));
    EXPECT_EQ(income.meta.at("evidence_resolution"), "session");
    // An evidence item with "[Persona Memory]" leaked into its text is still found.
    EXPECT_EQ(probe(priya, "s4-q4").evidence.at(0).id, "s2-m3");

    // The same point stated in two sessions: placed among both sessions' user messages, because
    // the earlier statement also holds the answer.
    const Scenario& tomasz = imported.scenarios[1];
    const auto& starter = probe(tomasz, "s3-q1");
    ASSERT_EQ(starter.evidence.size(), 1u);
    EXPECT_EQ(starter.evidence[0].message_ids, (std::vector<std::string>{"s2:1", "s2:3", "s3:1", "s3:3"}));
    EXPECT_FALSE(starter.evidence[0].details_complete);
    // "Friday" is held once: placed in its message.
    EXPECT_EQ(probe(tomasz, "s3-q2").evidence.at(0).message_ids, std::vector<std::string>{"s3:3"});
}

TEST(HalumemImport, TheLongVariantStoresItsInsertedQuestionAnswerSessions) {
    const Imported imported = import_file(k_long);
    ASSERT_EQ(imported.scenarios.size(), 1u);
    const Scenario& s = imported.scenarios[0];
    EXPECT_TRUE(violations_of(s).empty()) << memfail::testing::describe(violations_of(s));
    EXPECT_EQ(s.meta.at("variant"), "long");
    ASSERT_EQ(s.sessions.size(), 4u);
    EXPECT_EQ(s.sessions[2].messages.size(), 4u);  // the inserted session, stored like the others
    EXPECT_EQ(s.sessions[1].messages.size(), 6u);  // a question-answer pair inserted inside a session
    ASSERT_EQ(s.probes.size(), 2u);
    EXPECT_EQ(s.probes[0].after_session, "s4");
    EXPECT_TRUE(imported.result.notes.empty()) << describe(imported.result.notes);
}

TEST(HalumemImport, EveryOddityIsKeptAndNoted) {
    json user = fixture_users(k_medium).at(0);
    user.erase("uuid");
    user["release"] = "v2";
    json& s1 = user["sessions"][0];
    s1["memory_points"][0]["is_update"] = true;      // a JSON boolean where HaluMem writes a string
    s1["memory_points"][1]["is_update"] = "maybe";
    s1["memory_points"][2].erase("importance");
    s1["memory_points"][3]["memory_type"] = "[Sep 04, 2025, 09:58:00][Persona Memory]";
    s1["dialogue"][3]["role"] = "narrator";
    s1["dialogue"][5]["content"] = "   ";
    s1["questions"][1]["evidence"] = json::array({{{"memory_content", "Priya Natarajan lives in Pittsburgh."}}});
    user["sessions"][4]["dialogue"] = json::array();  // a session with no dialogue that asks questions
    user["sessions"][3]["questions"][0]["question_type"] = "Temporal Drift";
    std::vector<ImportNote> notes;
    const Scenario s = import_user(user, notes);
    EXPECT_TRUE(violations_of(s).empty()) << memfail::testing::describe(violations_of(s));
    EXPECT_EQ(s.id, "halumem-1");
    EXPECT_TRUE(noted(notes, "line 1.uuid", "no uuid")) << describe(notes);
    EXPECT_EQ(s.meta.at("unmapped").at("release"), "v2");
    EXPECT_TRUE(noted(notes, "line 1.sessions[0].memory_points[0].is_update", "JSON boolean")) << describe(notes);
    EXPECT_TRUE(noted(notes, "line 1.sessions[0].memory_points[1].is_update", "neither")) << describe(notes);
    EXPECT_TRUE(noted(notes, "line 1.sessions[0].memory_points[2].importance", "weighs nothing")) << describe(notes);
    EXPECT_TRUE(noted(notes, "line 1.sessions[0].dialogue[3].role", "taken as user")) << describe(notes);
    EXPECT_TRUE(noted(notes, "line 1.sessions[0].dialogue[5]", "without content")) << describe(notes);
    EXPECT_TRUE(noted(notes, "line 1.sessions[0].questions[1].evidence", "still to be declined")) << describe(notes);
    EXPECT_TRUE(noted(notes, "line 1.sessions[4]", "no dialogue")) << describe(notes);
    EXPECT_TRUE(noted(notes, "line 1.sessions[3].questions[0].question_type", "unknown question_type")) << describe(notes);
    const json& points = s.meta.at("memory_points");
    EXPECT_EQ(points[0].at("is_update"), true);
    EXPECT_EQ(points[1].at("is_update"), false);
    EXPECT_TRUE(points[2].at("importance").is_null());
    EXPECT_EQ(points[3].at("memory_type"), "Persona Memory");
    // The empty session is not stored; its questions are asked after the session before it.
    EXPECT_EQ(s.sessions.size(), 4u);
    EXPECT_EQ(probe(s, "s5-q1").after_session, "s4");
    EXPECT_EQ(probe(s, "s1-q2").kind, ProbeKind::abstain);
    // The message left out leaves a gap in the ids, never a renumbering.
    EXPECT_EQ(memfail::data::MessageIndex(s).message("s1:6"), nullptr);
    EXPECT_NE(memfail::data::MessageIndex(s).message("s1:7"), nullptr);
}

TEST(HalumemImport, ABrokenLineIsSkippedCountedAndTheRestImported) {
    ScratchDir dir;
    const std::vector<json> users = fixture_users(k_medium);
    dir.write("u.jsonl", users[0].dump() + "\n{\"uuid\": \"x\", \"sessions\": [\n\n" + users[1].dump() + "\n");
    const Imported imported = import_file(dir.file("u.jsonl"));
    EXPECT_EQ(imported.scenarios.size(), 2u);
    EXPECT_EQ(imported.result.elements_skipped, 1u);
    EXPECT_TRUE(noted(imported.result.notes, "line 2", "not valid JSON")) << describe(imported.result.notes);
    // A line that is valid JSON but no user is skipped the same way; a file with nothing importable
    // is refused by name.
    dir.write("bad.jsonl", "[1]\n");
    auto none = bm::benchmarks_suite().import_each("halumem", dir.file("bad.jsonl"), [](Scenario&&) -> memfail::Result<void> { return {}; });
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().describe().find("bad.jsonl"), std::string::npos);
    dir.write("list.json", "[" + users[1].dump() + "]");
    EXPECT_EQ(import_file(dir.file("list.json")).scenarios.size(), 1u);  // a converted copy, a JSON list
    dir.write("deep.jsonl", std::string(100, '[') + std::string(100, ']') + "\n");
    auto deep = bm::benchmarks_suite().import_each("halumem", dir.file("deep.jsonl"), [](Scenario&&) -> memfail::Result<void> { return {}; });
    ASSERT_FALSE(deep);
}

TEST(HalumemImport, ABoundaryQuestionIsToBeDeclinedAndValidationHoldsItToThat) {
    std::vector<ImportNote> notes;
    Scenario s = import_user(fixture_users(k_medium).at(0), notes);
    ASSERT_TRUE(violations_of(s).empty());
    for (auto& p : s.probes)
        if (p.id == "s1-q2") p.kind = ProbeKind::open;
    EXPECT_TRUE(memfail::testing::has_violation(violations_of(s), "probes[1].kind"));
}

// Under a sanitizer a third of the rounds (see test_dynamic_import.cpp).
#if defined(MEMFAIL_SANITIZED)
constexpr int k_halumem_fuzz_rounds = 100;
#else
constexpr int k_halumem_fuzz_rounds = 300;
#endif

TEST(HalumemImportFuzz, MutatedUsersImportValidOrAreRefused) {
    memfail::Rng rng(29029);
    const std::vector<json> users = fixture_users(k_medium);
    static const std::vector<json> k_values = {
        nullptr, 0, -1, 1, 2.5, true, false, "", " ", "x", "True", "False", "Memory Boundary", "interference",
        "Jan 15, 2029, 15:12:20", "Feb 30, 2029, 10:00:00", "[Persona Memory]", "../etc/passwd", std::string(300, 'a'),
        json::array(), json::object(), json{{"role", "user"}, {"content", "hello"}},
        json{{"memory_content", "Priya Natarajan lives in Pittsburgh."}, {"memory_type", "Persona Memory"}}};
    std::size_t imported = 0, refused = 0;
    for (int round = 0; round < k_halumem_fuzz_rounds; ++round) {
        json j = users[static_cast<std::size_t>(round) % users.size()];
        for (std::size_t n = 1 + rng.below(4); n > 0; --n)
            memfail::testing::fuzz::mutate(rng, j, [&](memfail::Rng& r, const json& root) {
                return memfail::testing::fuzz::random_value(r, root, k_values);
            });
        SCOPED_TRACE("round " + std::to_string(round));
        std::vector<ImportNote> notes;
        bm::Notes sink(notes);
        memfail::Result<Scenario> s = memfail::make_error(memfail::ErrorKind::internal, "not run");
        ASSERT_NO_THROW(s = bm::import_halumem_user(j, 0, "fuzz.jsonl", sink));
        if (!s) {
            ++refused;
            continue;
        }
        ++imported;
        const auto violations = violations_of(*s);
        ASSERT_TRUE(violations.empty()) << memfail::testing::describe(violations);
        auto back = memfail::data::scenario_from_json(json::parse(memfail::data::to_json(*s).dump()));
        ASSERT_TRUE(back) << back.error().describe();
    }
    EXPECT_GT(imported, static_cast<std::size_t>(k_halumem_fuzz_rounds) / 2);
    EXPECT_GT(refused, 0u);
}

// ---------------------------------------------------------------------------------------------
// A fact placed only among several messages (HaluMem's points; LongMemEval's unresolved evidence).

memfail::memory::Memory mem(std::string id, std::string text, std::vector<std::string> sources) {
    return {std::move(id), std::move(text), "", "", std::move(sources)};
}

struct Placed {
    Scenario scenario;
    memfail::data::Probe probe;
};

Placed placed_fact() {
    Placed out;
    out.scenario.id = "u";
    out.scenario.suite = "benchmarks";
    out.scenario.dataset = "halumem";
    out.scenario.sessions.push_back({"s1", "2029-01-15T15:12:20Z",
                                     {{"s1:1", "user", "I joined a rowing club last month."},
                                      {"s1:2", "assistant", "Kayaking is fun too."},
                                      {"s1:3", "user", "We go out on the Allegheny River every Saturday morning."},
                                      {"s1:4", "assistant", "Lovely routine."}}});
    out.probe.id = "q";
    out.probe.after_session = "s1";
    out.probe.question = "Where does Priya row?";
    out.probe.answer = "On a river near her home.";
    memfail::data::EvidenceFact f;
    f.id = "s1-m1";
    f.text = "Priya goes rowing on the Allegheny River every Saturday morning.";
    f.message_ids = {"s1:1", "s1:3"};
    f.details_complete = false;
    out.probe.evidence = {f};
    out.scenario.probes = {out.probe};
    return out;
}

grade::FactVerdict verdict(const Placed& placed, const std::vector<memfail::memory::Memory>& store,
                           const std::vector<std::size_t>& top, bool provenance) {
    const grade::ScenarioEvidence evidence(placed.scenario);
    const grade::MemorySnapshot snapshot(store, provenance);
    std::vector<memfail::memory::Hit> hits;
    for (std::size_t i : top) hits.push_back({store[i], 1.0});
    const auto v = grade::grade_memory_side(placed.probe, snapshot, hits, &evidence);
    EXPECT_EQ(v.facts.size(), 1u);
    return v.facts.empty() ? grade::FactVerdict{} : v.facts.front();
}

TEST(PlacedFact, HoldingOrServingItsMessagesProvesNothingOnlyAnEmptyStoreDecides) {
    const Placed placed = placed_fact();
    const std::vector<memfail::memory::Memory> verbatim = {
        mem("a", "I joined a rowing club last month.", {"s1:1"}), mem("b", "Kayaking is fun too.", {"s1:2"}),
        mem("c", "We go out on the Allegheny River every Saturday morning.", {"s1:3"})};
    for (bool provenance : {true, false}) {
        SCOPED_TRACE(provenance ? "with provenance" : "without provenance");
        // Every message verbatim, one or all of them served: never decided, never success.
        for (const auto& top : std::vector<std::vector<std::size_t>>{{}, {0}, {2}, {0, 1, 2}}) {
            const auto v = verdict(placed, verbatim, top, provenance);
            EXPECT_EQ(v.stage, grade::Stage::unverified);
            EXPECT_TRUE(v.placed_only);
            EXPECT_FALSE(v.retrieved);
        }
        // Harmless formats (labels, bullets, a date) change nothing.
        const std::vector<memfail::memory::Memory> formatted = {
            mem("a", "- [2029-01-15] user: I joined a rowing club last month.", {"s1:1"}),
            mem("c", "* User said: We go out on the Allegheny River every Saturday morning.", {"s1:3"})};
        EXPECT_EQ(verdict(placed, formatted, {0, 1}, provenance).stage, grade::Stage::unverified);
        // Corrupting changes are never a success either.
        const std::vector<memfail::memory::Memory> corrupted = {
            mem("c", "We go out on the Monongahela River every Sunday evening.", {"s1:3"})};
        const auto bad = verdict(placed, corrupted, {0}, provenance);
        EXPECT_NE(bad.stage, grade::Stage::retrieved);
        EXPECT_FALSE(bad.retrieved);
        // Nothing of its messages held: not stored, decided.
        EXPECT_EQ(verdict(placed, {}, {}, provenance).stage, grade::Stage::not_stored);
        EXPECT_EQ(verdict(placed, {mem("z", "Tax forms are due in April.", {"x"})}, {0}, provenance).stage,
                  grade::Stage::not_stored);
    }
    // The same fact pinned to one message is decided as every fact is.
    Placed one = placed_fact();
    one.probe.evidence[0].message_ids = {"s1:3"};
    one.scenario.probes = {one.probe};
    EXPECT_EQ(verdict(one, verbatim, {2}, true).stage, grade::Stage::retrieved);
    EXPECT_EQ(verdict(one, verbatim, {0}, false).stage, grade::Stage::not_retrieved);
}

// ---------------------------------------------------------------------------------------------
// HaluMem's operations by rule (halumem_ops.hpp): what a store added after one session decides a
// point covered or missing, a false memory stored or resisted, a memory accurate, an update
// omitted; everything else is undecided and carries what the judge needs. Harmless formats change
// nothing; corrupting changes never become a pass.

// Priya's fourth session (its update points, a mentoring point and two interference points, one
// with a real point's text) and the store after it.
struct OpsCase {
    Scenario scenario;
    std::size_t session = 3;
    std::vector<memfail::memory::Memory> held;
    std::vector<std::size_t> added;
    std::vector<memfail::memory::Hit> hits;
    bool retrieval_fails = false;
};

Scenario priya() {
    std::vector<ImportNote> notes;
    return import_user(fixture_users(k_medium).at(0), notes);
}

std::vector<memfail::suites::SessionCheck> run_ops(const OpsCase& c) {
    const memfail::suites::SessionCheckContext context{
        c.scenario, c.session, c.held, c.added,
        [&](const std::string&, int k) -> memfail::Result<std::vector<memfail::memory::Hit>> {
            EXPECT_EQ(k, 10);
            if (c.retrieval_fails) return memfail::make_error(memfail::ErrorKind::network, "adapter down");
            return c.hits;
        }};
    return bm::halumem_check_session(context);
}

// A copy: the checks are often a temporary.
std::optional<memfail::suites::SessionCheck> find(const std::vector<memfail::suites::SessionCheck>& checks,
                                                  const std::string& name, const std::string& item) {
    for (const auto& c : checks)
        if (c.name == name && c.item == item) return c;
    return std::nullopt;
}

OpsCase with_added(std::vector<std::string> texts) {
    OpsCase c;
    c.scenario = priya();
    for (std::size_t i = 0; i < texts.size(); ++i) {
        c.held.push_back(mem("m" + std::to_string(i), texts[i], {}));
        c.added.push_back(i);
    }
    return c;
}

TEST(HalumemOps, TheSessionsHoldingPointsAreChecked) {
    const Scenario s = priya();
    for (std::size_t i = 0; i < s.sessions.size(); ++i) EXPECT_TRUE(bm::halumem_checks_session(s, i)) << i;
    Scenario other = s;
    other.dataset = "locomo";
    EXPECT_FALSE(bm::halumem_checks_session(other, 0));
}

TEST(HalumemOps, APointHeldWordForWordIsCoveredInAnyHarmlessFormat) {
    const std::string point = "Priya Natarajan started a weekly mentoring circle for new analysts.";
    for (const std::string& stored : std::vector<std::string>{
             point, "- Priya Natarajan started a weekly mentoring circle for new analysts.",
          "[2030-09-04 00:17] user: Priya Natarajan started a weekly mentoring circle for new analysts.",
          "Fact: PRIYA NATARAJAN started a weekly mentoring circle for new analysts\nOther: she is tired"}) {
        SCOPED_TRACE(stored);
        const auto checks = run_ops(with_added({stored}));
        const auto c = find(checks, "extraction", "s4-m2");
        ASSERT_TRUE(c);
        EXPECT_EQ(c->score, 1.0);
        EXPECT_EQ(c->label, "covered");
        EXPECT_EQ(c->grader, "rules");
    }
}

TEST(HalumemOps, CorruptedCopiesAreNeverCoveredAndNothingOfThePointIsMissing) {
    for (const std::string& stored : std::vector<std::string>{
             "Priya Natarajan stopped a weekly mentoring circle for new analysts.",
          "Priya Natarajan might have started a mentoring circle.",
          "Tomasz started a weekly mentoring circle for new analysts."}) {
        SCOPED_TRACE(stored);
        const auto c = find(run_ops(with_added({stored})), "extraction", "s4-m2");
        ASSERT_TRUE(c);
        EXPECT_FALSE(c->score.has_value());
        EXPECT_EQ(c->grader, "rules_unsure");
        EXPECT_EQ(c->judge_input.value("kind", ""), "integrity");
        EXPECT_EQ(c->judge_input.at("memories").at(0), stored);
    }
    // No content word of the point (the person's name aside), or nothing added: missing, decided.
    for (const auto& added : std::vector<std::vector<std::string>>{{"Priya Natarajan likes tea."}, {}}) {
        const auto c = find(run_ops(with_added(added)), "extraction", "s4-m2");
        ASSERT_TRUE(c);
        EXPECT_EQ(c->score, 0.0);
        EXPECT_EQ(c->label, "missing");
    }
}

TEST(HalumemOps, FalseMemoriesStoredResistedOrExcluded) {
    const std::string false_memory = "Priya Natarajan stopped mentoring because of burnout.";
    const auto stored = run_ops(with_added({"- " + false_memory}));
    const auto c = find(stored, "false_memory", "s4-m5");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->score, 0.0);
    EXPECT_EQ(c->label, "stored");
    const auto resisted = find(run_ops(with_added({"Priya Natarajan likes tea."})), "false_memory", "s4-m5");
    ASSERT_TRUE(resisted);
    EXPECT_EQ(resisted->score, 1.0);
    // The interference point with a real point's text cannot be told from the real fact.
    const auto excluded = find(stored, "false_memory", "s4-m4");
    ASSERT_TRUE(excluded);
    EXPECT_EQ(excluded->label, "excluded");
    EXPECT_FALSE(excluded->score.has_value());
    EXPECT_TRUE(excluded->judge_input.is_null());
}

TEST(HalumemOps, AMemoryThatIsARealPointIsAccurateAndOnTargetElseTheJudges) {
    const auto checks = run_ops(with_added({"Priya Natarajan started a weekly mentoring circle for new analysts.",
                                            "user: I never stopped mentoring."}));
    const auto point = find(checks, "accuracy", "m0");
    ASSERT_TRUE(point);
    EXPECT_EQ(point->score, 1.0);
    EXPECT_EQ(point->label, "target");
    const auto message = find(checks, "accuracy", "m1");
    ASSERT_TRUE(message);
    EXPECT_FALSE(message->score.has_value());
    EXPECT_EQ(message->judge_input.value("kind", ""), "accuracy");
    EXPECT_NE(message->judge_input.value("dialogue", "").find("Late night update"), std::string::npos);
    EXPECT_EQ(message->judge_input.at("golden").size(), 3u);  // the session's real points, not its interference
}

TEST(HalumemOps, AnUpdateIsProbedWithItsOwnTextAndOmittedWhenTheTopTenHoldsNoneOfIt) {
    OpsCase c = with_added({});
    c.hits = {{mem("h1", "Priya Natarajan likes tea.", {}), 1.0}};
    const auto omitted = run_ops(c);
    const auto title = find(omitted, "update", "s4-m1");
    ASSERT_TRUE(title);
    EXPECT_EQ(title->label, "omission");
    EXPECT_EQ(title->score, 0.0);
    EXPECT_FALSE(find(omitted, "extraction", "s4-m1"));
    c.hits = {{mem("h1", "Priya is Laboratory Manager now.", {}), 1.0}};
    const auto unsure = find(run_ops(c), "update", "s4-m1");
    ASSERT_TRUE(unsure);
    EXPECT_FALSE(unsure->score.has_value());
    EXPECT_EQ(unsure->judge_input.value("kind", ""), "update");
    EXPECT_NE(unsure->judge_input.value("original", "").find("Lab Supervisor"), std::string::npos);
    // Nothing retrieved: graded for extraction instead, as HaluMem routes it.
    c.hits.clear();
    const auto routed = run_ops(c);
    EXPECT_FALSE(find(routed, "update", "s4-m1"));
    EXPECT_TRUE(find(routed, "extraction", "s4-m1"));
    // A retrieval that fails is an error item, never a verdict.
    c.retrieval_fails = true;
    const auto failed = find(run_ops(c), "update", "s4-m1");
    ASSERT_TRUE(failed);
    EXPECT_EQ(failed->label, "error");
    EXPECT_FALSE(failed->score.has_value());
}

}  // namespace

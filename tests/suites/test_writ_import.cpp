// SPDX-License-Identifier: MIT
// Tests of the WRIT scenario importer (suites/writ/import_writ.*): the mapping field by field on
// fixtures written in the release's shape (fixtures/writ/release: one scenario per category, with the
// release's traits beyond the documented schema), the notes, refused files (fixtures/writ/broken),
// and fuzzers over mutated fixture JSON and bytes.
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/writ/generate.hpp>
#include <memfail/suites/writ/import_writ.hpp>
#include <memfail/suites/writ/rules.hpp>

#include "suite_test_util.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace writ = memfail::suites::writ;
using memfail::data::Authority;
using memfail::data::MemoryType;
using memfail::data::ProbeKind;
using memfail::data::RubricKind;
using memfail::data::Scenario;
using memfail::suites::ImportNote;
using nlohmann::json;

const std::string k_release = std::string(MEMFAIL_TEST_FIXTURES) + "/writ/release";
const std::string k_broken = std::string(MEMFAIL_TEST_FIXTURES) + "/writ/broken";

std::string release_file(const std::string& id) { return k_release + "/" + id + ".json"; }

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

json read_json(const std::string& path) { return json::parse(read_text(path)); }

// The release fixtures' scenario ids (file names without .json), in name order.
std::vector<std::string> release_ids() {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(k_release))
        if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
    std::sort(out.begin(), out.end());
    return out;
}

using memfail::testing::ScratchDir;

std::vector<std::string> violations_of(const Scenario& s) {
    std::vector<memfail::data::Violation> found;
    memfail::data::validate_structure(s, 0, found);
    std::vector<std::string> out;
    for (const auto& v : found) out.push_back(memfail::data::format_violation(s.id, v));
    return out;
}

std::string joined(const std::vector<std::string>& lines) { return memfail::text::join(lines, "\n"); }

std::string describe(const std::vector<ImportNote>& notes) {
    std::string out;
    for (const auto& n : notes) out += n.file + ": " + n.json_path + ": " + n.message + "\n";
    return out;
}

// Imports one scenario from JSON; fails the test (and returns an empty scenario) when refused.
Scenario import_json(const json& j, const std::string& file, std::vector<ImportNote>& notes) {
    auto s = writ::import_writ_scenario(j, file, notes);
    if (!s) {
        ADD_FAILURE() << file << ": " << s.error().describe();
        return Scenario{};
    }
    return std::move(s).value();
}

Scenario import_release(const std::string& id, std::vector<ImportNote>& notes) {
    return import_json(read_json(release_file(id)), release_file(id), notes);
}

Scenario import_release(const std::string& id) {
    std::vector<ImportNote> notes;
    return import_release(id, notes);
}

// Notes at exactly `path`, optionally holding `words`.
std::vector<ImportNote> notes_at(const std::vector<ImportNote>& notes, const std::string& path,
                                 const std::string& words = {}) {
    std::vector<ImportNote> out;
    for (const auto& n : notes)
        if (n.json_path == path && (words.empty() || n.message.find(words) != std::string::npos)) out.push_back(n);
    return out;
}

const memfail::data::LedgerEvent& event(const Scenario& s, const std::string& id) {
    static const memfail::data::LedgerEvent none;
    const auto* e = s.event(id);
    if (!e) ADD_FAILURE() << "no ledger event '" << id << "' in " << s.id;
    return e ? *e : none;
}

const memfail::data::Probe& probe(const Scenario& s) {
    static const memfail::data::Probe none;
    if (s.probes.size() != 1) ADD_FAILURE() << s.id << " has " << s.probes.size() << " probes, not 1";
    return s.probes.empty() ? none : s.probes.front();
}

const memfail::data::Rubric& rubric(const Scenario& s) {
    static const memfail::data::Rubric none;
    const auto& p = probe(s);
    if (!p.rubric) ADD_FAILURE() << s.id << " has no rubric";
    return p.rubric ? *p.rubric : none;
}

// ---------------------------------------------------------------------------------------------
// The release folder.

// The suite's own rules hold for imported data too (a number and its written form are one value).
TEST(WritImportDir, EveryReleaseFixturePassesTheSuitesRules) {
    auto result = writ::import_writ_dir(std::string(MEMFAIL_TEST_FIXTURES) + "/writ/release");
    ASSERT_TRUE(result.has_value()) << result.error().describe();
    ASSERT_FALSE(result->scenarios.empty());
    for (const auto& s : result->scenarios) {
        std::vector<memfail::data::Violation> found;
        writ::validate_writ(s, 0, found);
        std::vector<std::string> lines;
        for (const auto& v : found) lines.push_back(memfail::data::format_violation(s.id, v));
        EXPECT_TRUE(found.empty()) << joined(lines);
    }
}

TEST(WritImportDir, ImportsEveryReleaseFixtureOneCategoryEach) {
    auto result = writ::import_writ_dir(k_release);
    ASSERT_TRUE(result) << result.error().describe();
    EXPECT_EQ(result->files_read, 16u);
    EXPECT_EQ(result->files_refused, 0u) << describe(result->notes);
    ASSERT_EQ(result->scenarios.size(), 16u);
    std::set<std::string> datasets, expected_datasets, methods;
    for (const auto& c : writ::categories()) expected_datasets.insert(writ::dataset_name(c));
    for (const auto& s : result->scenarios) {
        SCOPED_TRACE(s.id);
        EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
        EXPECT_EQ(s.suite, "writ");
        EXPECT_EQ(s.format, memfail::data::k_format_v2);
        EXPECT_TRUE(s.uses_v2());
        EXPECT_EQ(s.dataset, "writ_" + s.meta.value("category", std::string{}));
        EXPECT_EQ(s.meta.value("source", std::string{}), "writ-release");
        EXPECT_EQ(s.meta.value("file", std::string{}), s.id + ".json");
        EXPECT_FALSE(s.ledger.empty());
        ASSERT_EQ(s.probes.size(), 1u);
        EXPECT_EQ(s.probes[0].id, s.id + ":probe");
        datasets.insert(s.dataset);
        if (s.probes[0].rubric) methods.insert(s.probes[0].rubric->method);
    }
    EXPECT_EQ(datasets, expected_datasets);
    // Every rubric method the release uses appears in the fixtures.
    for (const char* m : {"structured", "exact", "semantic", "abstention", "constraint", "multi_criterion", "contains",
                          "entity_count_and_equivalence", "numeric_equivalence", "entity_count_and_event_merge",
                          "address_normalization", "entity_count_and_org_merge", "multi_field_exact"})
        EXPECT_TRUE(methods.count(m)) << m;
    // Scenarios come in file-name order.
    std::vector<std::string> ids;
    for (const auto& s : result->scenarios) ids.push_back(s.id);
    EXPECT_EQ(ids, release_ids());
}

TEST(WritImport, EveryReleaseFixtureValidatesOnItsOwn) {
    for (const auto& id : release_ids()) {
        SCOPED_TRACE(id);
        std::vector<ImportNote> notes;
        const Scenario s = import_release(id, notes);
        EXPECT_EQ(s.id, id);
        EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
        for (const auto& n : notes) {
            EXPECT_EQ(n.file, release_file(id));
            EXPECT_FALSE(n.json_path.empty()) << n.message;
            EXPECT_FALSE(n.message.empty());
        }
    }
}

TEST(WritImport, ImportIsDeterministicAndRoundTripsThroughJsonl) {
    for (const auto& id : release_ids()) {
        SCOPED_TRACE(id);
        const Scenario a = import_release(id), b = import_release(id);
        EXPECT_EQ(memfail::data::scenario_hash(a), memfail::data::scenario_hash(b));
        const json written = memfail::data::to_json(a);
        EXPECT_EQ(written.value("format", std::string{}), "memfail/2");
        auto back = memfail::data::scenario_from_json(json::parse(written.dump()));
        ASSERT_TRUE(back) << back.error().describe();
        EXPECT_EQ(memfail::data::to_json(*back), written);
    }
}

// ---------------------------------------------------------------------------------------------
// The mapping, field by field.

TEST(WritImport, ScenarioMetaSessionsAndMessages) {
    const Scenario s = import_release("drift-001-phone-carrier");
    EXPECT_EQ(s.id, "drift-001-phone-carrier");
    EXPECT_EQ(s.suite, "writ");
    EXPECT_EQ(s.dataset, "writ_drift");
    EXPECT_EQ(s.meta.at("category"), "drift");
    EXPECT_EQ(s.meta.at("version"), "1.0.0");
    EXPECT_EQ(s.meta.at("source"), "writ-release");
    EXPECT_EQ(s.meta.at("file"), "drift-001-phone-carrier.json");
    EXPECT_NE(s.meta.at("description").get<std::string>().find("mobile carrier"), std::string::npos);
    // A plain string becomes {type: unspecified, description}; an object is kept.
    ASSERT_EQ(s.meta.at("interference").size(), 2u);
    EXPECT_EQ(s.meta.at("interference")[0]["type"], "unspecified");
    EXPECT_EQ(s.meta.at("interference")[0]["description"],
              "The partner's carrier (Verizon) is a near-duplicate of the user's first carrier.");
    EXPECT_EQ(s.meta.at("interference")[1],
              (json{{"type", "near_duplicate"}, {"description", "Session 3 names Verizon for someone else."}}));
    EXPECT_FALSE(s.meta.contains("unmapped"));

    ASSERT_EQ(s.sessions.size(), 5u);
    for (std::size_t i = 0; i < s.sessions.size(); ++i) EXPECT_EQ(s.sessions[i].id, std::to_string(i + 1));
    EXPECT_EQ(s.sessions[0].timestamp, "2026-01-08T18:30:00Z");
    ASSERT_EQ(s.sessions[0].messages.size(), 2u);
    EXPECT_EQ(s.sessions[0].messages[0].id, "1:0");
    EXPECT_EQ(s.sessions[0].messages[0].role, "user");
    EXPECT_EQ(s.sessions[0].messages[0].content, "My phone plan is with Verizon and it runs me $85 a month.");
    EXPECT_EQ(s.sessions[0].messages[1].id, "1:1");
    EXPECT_EQ(s.sessions[0].messages[1].role, "assistant");
    ASSERT_EQ(s.sessions[4].messages.size(), 1u);
    EXPECT_EQ(s.sessions[4].messages[0].id, "5:0");
}

TEST(WritImport, LedgerHistoriesCiteTheMessagesStatingEachValue) {
    std::vector<ImportNote> notes;
    const Scenario s = import_release("drift-001-phone-carrier", notes);
    ASSERT_EQ(s.ledger.size(), 2u);
    const auto& carrier = event(s, "carrier");
    EXPECT_EQ(carrier.type, MemoryType::mutable_fact);
    EXPECT_EQ(carrier.value, "Mint Mobile");
    EXPECT_EQ(carrier.introduced_in, "1");
    EXPECT_EQ(carrier.updated_in, "4");
    EXPECT_EQ(carrier.retracted_in, "");
    EXPECT_EQ(carrier.retracted_by, "");
    EXPECT_TRUE(carrier.should_persist);
    ASSERT_EQ(carrier.history.size(), 3u);
    const std::vector<std::string> values = {"Verizon", "T-Mobile", "Mint Mobile"}, sessions = {"1", "2", "4"},
                                   as_of = {"2026-01-08T18:30:00Z", "2026-02-19T12:05:00Z", "2026-06-11T20:10:00Z"};
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& r = carrier.history[i];
        EXPECT_EQ(r.value, values[i]);
        EXPECT_EQ(r.as_of, as_of[i]);
        EXPECT_EQ(r.session_id, sessions[i]);
        EXPECT_EQ(r.message_id, sessions[i] + ":0");  // the user's message states it first
        EXPECT_EQ(r.mentions, std::vector<std::string>{values[i]});
        EXPECT_EQ(r.authority, Authority::user_stated);
    }
    // Numbers are found as the messages write them ("$85", "$40").
    const auto& bill = event(s, "monthly_bill");
    ASSERT_EQ(bill.history.size(), 2u);
    EXPECT_EQ(bill.history[0].value, 85);
    EXPECT_EQ(bill.history[0].message_id, "1:0");
    EXPECT_EQ(bill.history[1].value, 40);
    EXPECT_EQ(bill.history[1].message_id, "4:0");
    EXPECT_EQ(bill.history[1].mentions, std::vector<std::string>{"40"});
}

TEST(WritImport, NumbersWrittenWithSeparatorsAndEmptyPreviousValues) {
    std::vector<ImportNote> notes;
    const Scenario s = import_release("provenance-001-down-payment", notes);
    const auto& down = event(s, "down_payment");
    EXPECT_EQ(down.type, MemoryType::explicit_fact);
    EXPECT_EQ(down.value, 5000);
    ASSERT_EQ(down.history.size(), 1u);
    EXPECT_EQ(down.history[0].message_id, "1:0");
    EXPECT_EQ(down.history[0].mentions, std::vector<std::string>{"5,000"});  // "$5,000" in the text
    // previous_values empty: one record of the value as of the introducing session.
    const auto& term = event(s, "loan_term_months");
    ASSERT_EQ(term.history.size(), 1u);
    EXPECT_EQ(term.history[0].value, 48);
    EXPECT_EQ(term.history[0].as_of, s.sessions[1].timestamp);
    EXPECT_EQ(term.history[0].session_id, "2");
    EXPECT_EQ(term.history[0].message_id, "2:0");

    const auto& p = probe(s);
    EXPECT_EQ(p.expected, "$5,000");
    EXPECT_EQ(p.answer, "$5,000");
    EXPECT_EQ(p.expected_source, "1:0");
    // The string "$5,000" is the number 5000: the event is the target, the rubric's number parsed.
    EXPECT_EQ(p.targets, std::vector<std::string>{"down_payment"});
    const auto& r = rubric(s);
    EXPECT_EQ(r.kind, RubricKind::numeric);
    EXPECT_EQ(r.method, "numeric_equivalence");
    ASSERT_TRUE(r.number.has_value());
    EXPECT_DOUBLE_EQ(*r.number, 5000);
    EXPECT_EQ(r.tolerance, 0);
    EXPECT_FALSE(r.notes.empty());
    ASSERT_EQ(p.evidence.size(), 1u);
    const auto& f = p.evidence[0];
    EXPECT_EQ(f.id, "provenance-001-down-payment:probe:down_payment");
    EXPECT_EQ(f.message_ids, std::vector<std::string>{"1:0"});
    EXPECT_EQ(f.text, s.sessions[0].messages[0].content);
    EXPECT_TRUE(f.details_complete);
    ASSERT_EQ(f.key_details.size(), 1u);
    EXPECT_EQ(f.key_details[0].name, "value");
    EXPECT_EQ(f.key_details[0].variants, std::vector<std::string>{"5,000"});
    EXPECT_EQ(f.key_details[0].effective_role(), memfail::data::DetailRole::identity);
}

TEST(WritImport, ProbeFieldsOfATemporalQuery) {
    std::vector<ImportNote> notes;
    const Scenario s = import_release("temporal-001-manager-as-of", notes);
    const auto& p = probe(s);
    EXPECT_EQ(p.id, "temporal-001-manager-as-of:probe");
    EXPECT_EQ(p.after_session, "3");  // the probe's session (4) holds the question itself
    EXPECT_EQ(p.question, "Who was my manager in April 2026?");
    EXPECT_EQ(p.kind, ProbeKind::open);
    EXPECT_FALSE(p.should_abstain);
    EXPECT_EQ(p.capabilities, (std::vector<std::string>{"retrieval", "temporal_replay"}));
    ASSERT_TRUE(p.temporal.has_value());
    EXPECT_EQ(p.temporal->as_of, "2026-04-15T00:00:00Z");
    EXPECT_FALSE(p.temporal->expect_current);
    EXPECT_EQ(p.expected, "Tomasz Wren");
    EXPECT_EQ(p.answer, "Tomasz Wren");
    EXPECT_EQ(p.expected_source, "2:0");
    EXPECT_EQ(p.failure_modes, (std::vector<std::string>{"stale_memory", "temporal_confusion"}));
    EXPECT_EQ(p.targets, std::vector<std::string>{"manager"});
    EXPECT_EQ(p.meta.at("category"), "temporal");
    EXPECT_EQ(p.meta.at("provenance")["source_session"], 2);
    EXPECT_EQ(p.meta.at("value_history").size(), 3u);
    ASSERT_TRUE(p.rubric.has_value());
    EXPECT_EQ(p.rubric->kind, RubricKind::exact);
    // The evidence is the message stating the expected (past) value, not the latest one.
    ASSERT_EQ(p.evidence.size(), 1u);
    EXPECT_EQ(p.evidence[0].message_ids, std::vector<std::string>{"2:0"});
    EXPECT_EQ(p.evidence[0].key_details[0].variants, std::vector<std::string>{"Tomasz Wren"});
    EXPECT_EQ(notes_at(notes, "failure_modes").size(), 1u) << describe(notes);  // temporal_confusion
}

TEST(WritImport, ObjectValuesStayObjects) {
    const Scenario s = import_release("work_state-001-kitchen-remodel");
    const json current = {{"stage", "cabinets installed"},
                          {"blocker", "countertop delivery"},
                          {"contractor", "Dana Kowalski"}};
    const auto& p = probe(s);
    EXPECT_TRUE(p.expected.is_object());
    EXPECT_EQ(p.expected, current);
    EXPECT_EQ(p.answer, current.dump());  // compact JSON
    const auto& status = event(s, "remodel_status");
    EXPECT_EQ(status.type, MemoryType::work_state);
    EXPECT_EQ(status.value, current);
    ASSERT_EQ(status.history.size(), 2u);
    EXPECT_EQ(status.history[0].value, (json{{"stage", "demolition"}, {"contractor", "Dana Kowalski"}}));
    EXPECT_EQ(status.history[0].message_id, "1:0");
    EXPECT_EQ(status.history[1].message_id, "3:0");
    const auto& wifi = event(s, "site_wifi_password");
    EXPECT_EQ(wifi.type, MemoryType::non_memory);
    EXPECT_FALSE(wifi.should_persist);
    EXPECT_EQ(p.targets, std::vector<std::string>{"remodel_status"});
    ASSERT_EQ(p.evidence.size(), 1u);
    EXPECT_EQ(p.evidence[0].message_ids, std::vector<std::string>{"3:0"});
    const auto& r = rubric(s);
    EXPECT_EQ(r.kind, RubricKind::multi_field);
    EXPECT_EQ(r.fields, current);  // the rubric's field names picked from current_value
}

TEST(WritImport, AProbeSessionBeforeTheLastIsAskedAfterTheSessionBeforeIt) {
    std::vector<ImportNote> notes;
    const Scenario s = import_release("lifecycle-001-dental-appointments", notes);
    ASSERT_EQ(s.sessions.size(), 5u);  // the session after the probe is kept (stored later)
    const auto& p = probe(s);
    EXPECT_EQ(p.after_session, "3");
    EXPECT_EQ(p.question, "How many dental appointments does our family have this month?");
    EXPECT_EQ(p.meta.at("checkpoint"), "mid");  // as the generator labels a probe before the end
    // The retraction comes after the probe; retracted_by is a guess, and says so.
    const auto& cleaning = event(s, "son_cleaning");
    EXPECT_EQ(cleaning.retracted_in, "5");
    EXPECT_EQ(cleaning.retracted_by, "5:0");
    EXPECT_EQ(notes_at(notes, "memory_events[1].retracted_in", "guess").size(), 1u) << describe(notes);
    // A count has no ledger event: no target, one incomplete fact citing expected_source.
    EXPECT_EQ(p.expected, 2);
    EXPECT_TRUE(p.targets.empty());
    EXPECT_EQ(notes_at(notes, "ground_truth.current_value", "no targets").size(), 1u) << describe(notes);
    ASSERT_EQ(p.evidence.size(), 1u);
    EXPECT_EQ(p.evidence[0].message_ids, std::vector<std::string>{"3:0"});
    EXPECT_EQ(p.evidence[0].id, p.id + ":expected");
    EXPECT_FALSE(p.evidence[0].details_complete);
    EXPECT_TRUE(p.evidence[0].key_details.empty());
    EXPECT_EQ(notes_at(notes, "ground_truth", "no target").size(), 1u) << describe(notes);
    const auto& r = rubric(s);
    EXPECT_EQ(r.kind, RubricKind::entity_count);
    EXPECT_EQ(r.expected_count, 2);
    ASSERT_EQ(r.groups.size(), 2u);
    EXPECT_EQ(r.groups[0], (std::vector<std::string>{"March 9 appointment", "March 11 appointment"}));
}

TEST(WritImport, AbstentionProbesHaveNoEvidence) {
    std::vector<ImportNote> notes;
    const Scenario forget = import_release("forgetting-001-lockbox-code", notes);
    const auto& p = probe(forget);
    EXPECT_EQ(p.kind, ProbeKind::abstain);
    EXPECT_TRUE(p.should_abstain);
    EXPECT_TRUE(p.evidence.empty());
    EXPECT_TRUE(p.expected.is_null());
    EXPECT_EQ(p.answer, "");
    EXPECT_FALSE(event(forget, "lockbox_code").should_persist);
    EXPECT_EQ(event(forget, "lockbox_code").type, MemoryType::non_memory);
    const auto& r = rubric(forget);
    EXPECT_EQ(r.kind, RubricKind::abstention);
    EXPECT_EQ(r.reject, std::vector<std::string>{"4417"});
    EXPECT_EQ(r.accept_patterns.size(), 4u);

    notes.clear();
    const Scenario blood = import_release("abstention-001-blood-type", notes);
    const auto& q = probe(blood);
    EXPECT_EQ(q.kind, ProbeKind::abstain);
    EXPECT_FALSE(q.rubric.has_value());  // no eval_rubric: the grader infers abstention
    ASSERT_TRUE(q.temporal.has_value());
    EXPECT_EQ(q.temporal->as_of, "");  // as_of null
    EXPECT_TRUE(q.temporal->expect_current);
    EXPECT_EQ(q.expected_source, "");
    // Nothing to say about a provenance of nulls when the probe should be abstained on.
    EXPECT_TRUE(notes_at(notes, "ground_truth.provenance").empty()) << describe(notes);
}

TEST(WritImport, RetractionsAndForbiddenElements) {
    std::vector<ImportNote> notes;
    const Scenario s = import_release("update-001-retracted-trip", notes);
    const auto& denver = event(s, "trip_denver");
    EXPECT_TRUE(denver.value.is_null());
    EXPECT_EQ(denver.retracted_in, "2");
    EXPECT_EQ(denver.retracted_by, "2:0");
    ASSERT_EQ(denver.history.size(), 1u);
    EXPECT_EQ(denver.history[0].value, "Denver");
    EXPECT_EQ(denver.history[0].message_id, "1:0");
    EXPECT_EQ(notes_at(notes, "memory_events[0].retracted_in", "guess").size(), 1u) << describe(notes);
    const auto& p = probe(s);
    EXPECT_EQ(p.targets, std::vector<std::string>{"trip_austin"});
    const auto& r = rubric(s);
    EXPECT_EQ(r.kind, RubricKind::contains);
    EXPECT_EQ(r.required, (std::vector<std::string>{"Austin", "June 3"}));
    EXPECT_EQ(r.expected_terms, r.required);
    EXPECT_EQ(r.forbidden, std::vector<std::string>{"Denver"});
}

TEST(WritImport, AuthorityFromTheStatingRoleOrTheEventsOwnField) {
    const Scenario s = import_release("trust_hierarchy-001-allergy-summary");
    const auto& user = event(s, "mira_allergy");
    EXPECT_EQ(user.history[0].message_id, "1:0");
    EXPECT_EQ(user.history[0].authority, Authority::user_stated);  // "authority": "user_stated"
    const auto& summary = event(s, "mira_allergy_summary");
    EXPECT_FALSE(summary.should_persist);
    EXPECT_EQ(summary.history[0].message_id, "2:1");  // only the assistant's recap says it
    EXPECT_EQ(summary.history[0].authority, Authority::ai_summarized);  // "source": "ai_summarized"
    const auto& doctor = event(s, "pediatrician");
    EXPECT_EQ(doctor.history[0].message_id, "2:1");
    EXPECT_EQ(doctor.history[0].authority, Authority::agent_extracted);  // stated by the assistant
    const auto& r = rubric(s);
    EXPECT_EQ(r.kind, RubricKind::semantic);
    EXPECT_EQ(r.keywords, std::vector<std::string>{"penicillin"});
    EXPECT_EQ(r.forbidden, std::vector<std::string>{"amoxicillin"});
    EXPECT_EQ(probe(s).targets, std::vector<std::string>{"mira_allergy"});
}

TEST(WritImport, RubricOfEveryReleaseMethod) {
    {
        const Scenario s = import_release("drift-001-phone-carrier");
        EXPECT_EQ(rubric(s).kind, RubricKind::structured);
        EXPECT_EQ(rubric(s).required, (std::vector<std::string>{"Verizon", "T-Mobile", "Mint Mobile"}));
    }
    {
        const Scenario s = import_release("constraint-001-dinner-menu");
        const auto& r = rubric(s);
        EXPECT_EQ(r.kind, RubricKind::constraint);
        EXPECT_EQ(r.method, "constraint");
        EXPECT_EQ(r.must_contain, std::vector<std::string>{"vegetarian"});
        EXPECT_EQ(r.must_not_contain, (std::vector<std::string>{"shrimp", "crab", "lobster", "paella"}));
        EXPECT_FALSE(r.notes.empty());
        EXPECT_EQ(event(s, "shellfish_allergy").type, MemoryType::latent);
    }
    {
        const Scenario s = import_release("entity-001-cousin-aliases");
        const auto& r = rubric(s);
        EXPECT_EQ(r.kind, RubricKind::entity_count);
        EXPECT_EQ(r.method, "entity_count_and_equivalence");
        EXPECT_EQ(r.expected_count, 2);
        ASSERT_EQ(r.groups.size(), 2u);
        EXPECT_EQ(r.groups[0], (std::vector<std::string>{"Robert Alvarez", "Bobby", "Rob"}));
    }
    {
        const Scenario s = import_release("multi_hop-001-sister-visit");
        const auto& r = rubric(s);
        EXPECT_EQ(r.kind, RubricKind::structured);  // multi_criterion with elements
        EXPECT_EQ(r.method, "multi_criterion");
        EXPECT_EQ(r.required, (std::vector<std::string>{"Lisbon", "bakery"}));
        EXPECT_EQ(r.criteria.size(), 3u);
    }
    {
        const Scenario s = import_release("failure_injection-001-flight-number");
        const auto& r = rubric(s);
        EXPECT_EQ(r.kind, RubricKind::semantic);  // multi_criterion with criteria only
        EXPECT_EQ(r.criteria.size(), 2u);
        EXPECT_FALSE(r.notes.empty());
        EXPECT_EQ(s.meta.at("interference").size(), 2u);
    }
    {
        const Scenario s = import_release("extraction_drift-001-mailing-address");
        EXPECT_EQ(rubric(s).kind, RubricKind::address);
        EXPECT_EQ(probe(s).targets, std::vector<std::string>{"mailing_address"});
    }
    {
        const Scenario s = import_release("certification-001-issuing-orgs");
        const auto& r = rubric(s);
        EXPECT_EQ(r.kind, RubricKind::entity_count);
        EXPECT_EQ(r.method, "entity_count_and_org_merge");
        EXPECT_EQ(r.expected_count, 2);  // from "expected_org_count"
        EXPECT_EQ(r.groups.size(), 2u);  // from "org_equivalence"
        EXPECT_EQ(r.keywords.size(), 2u);
        EXPECT_TRUE(probe(s).expected.is_array());
    }
    {
        const Scenario s = import_release("closure-001-apartment-search");
        const auto& r = rubric(s);
        EXPECT_EQ(r.kind, RubricKind::contains);
        EXPECT_EQ(r.required, (std::vector<std::string>{"closed", "Maple Street"}));  // from keywords
        EXPECT_EQ(probe(s).targets, std::vector<std::string>{"apartment_search"});
        EXPECT_EQ(probe(s).evidence[0].message_ids, std::vector<std::string>{"3:0"});
    }
}

// ---------------------------------------------------------------------------------------------
// Variations on the fixtures: what the importer does with what it cannot map as it stands.

json fixture_json(const std::string& id) { return read_json(release_file(id)); }

TEST(WritImportRubric, UnknownMethodsAndMissingPartsFallBackToSemanticWithANote) {
    {
        json j = fixture_json("temporal-001-manager-as-of");
        j["ground_truth"]["eval_rubric"] = {{"method", "vibes"}};
        std::vector<ImportNote> notes;
        const Scenario s = import_json(j, "vibes.json", notes);
        EXPECT_EQ(rubric(s).kind, RubricKind::semantic);
        EXPECT_EQ(rubric(s).method, "vibes");
        EXPECT_EQ(notes_at(notes, "ground_truth.eval_rubric.method", "unknown rubric method").size(), 1u)
            << describe(notes);
    }
    {
        json j = fixture_json("entity-001-cousin-aliases");
        j["ground_truth"]["eval_rubric"].erase("expected_count");
        std::vector<ImportNote> notes;
        const Scenario s = import_json(j, "nocount.json", notes);
        EXPECT_EQ(rubric(s).kind, RubricKind::semantic);
        EXPECT_EQ(rubric(s).groups.size(), 2u);  // kept
        EXPECT_EQ(notes_at(notes, "ground_truth.eval_rubric", "no count").size(), 1u) << describe(notes);
        EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
    }
    {
        json j = fixture_json("provenance-001-down-payment");
        j["ground_truth"]["current_value"] = 5000;
        std::vector<ImportNote> notes;
        const Scenario s = import_json(j, "number.json", notes);
        EXPECT_EQ(rubric(s).kind, RubricKind::numeric);
        EXPECT_DOUBLE_EQ(rubric(s).number.value_or(-1), 5000);
        EXPECT_EQ(probe(s).answer, "5000");
    }
    {
        json j = fixture_json("provenance-001-down-payment");
        j["ground_truth"]["current_value"] = "about five grand";
        std::vector<ImportNote> notes;
        const Scenario s = import_json(j, "words.json", notes);
        EXPECT_EQ(rubric(s).kind, RubricKind::semantic);
        EXPECT_EQ(notes_at(notes, "ground_truth.eval_rubric.method", "no number").size(), 1u) << describe(notes);
    }
    {
        json j = fixture_json("work_state-001-kitchen-remodel");
        j["ground_truth"]["eval_rubric"].erase("fields");
        std::vector<ImportNote> notes;
        const Scenario s = import_json(j, "fields.json", notes);
        EXPECT_EQ(rubric(s).kind, RubricKind::multi_field);
        EXPECT_EQ(rubric(s).fields, probe(s).expected);
    }
    {
        json j = fixture_json("constraint-001-dinner-menu");
        j["ground_truth"].erase("eval_rubric");
        std::vector<ImportNote> notes;
        const Scenario s = import_json(j, "check-only.json", notes);
        EXPECT_EQ(rubric(s).kind, RubricKind::constraint);
        EXPECT_EQ(rubric(s).method, "constraint_check");
        EXPECT_EQ(rubric(s).must_not_contain.size(), 4u);
    }
    {
        json j = fixture_json("closure-001-apartment-search");
        j["ground_truth"]["eval_rubric"] = {{"method", "abstention"}, {"weight", 2}};
        std::vector<ImportNote> notes;
        const Scenario s = import_json(j, "misplaced.json", notes);
        EXPECT_EQ(rubric(s).kind, RubricKind::semantic);  // the probe should not abstain
        EXPECT_EQ(notes_at(notes, "ground_truth.eval_rubric.method", "should not").size(), 1u) << describe(notes);
        EXPECT_EQ(notes_at(notes, "ground_truth.eval_rubric.weight", "unknown rubric key").size(), 1u);
        EXPECT_EQ(s.meta.at("unmapped")["ground_truth.eval_rubric.weight"], 2);
        EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
    }
    {
        json j = fixture_json("drift-001-phone-carrier");
        j["ground_truth"].erase("eval_rubric");
        std::vector<ImportNote> notes;
        const Scenario s = import_json(j, "none.json", notes);
        EXPECT_FALSE(probe(s).rubric.has_value());
        EXPECT_FALSE(probe(s).meta.contains("checkpoint"));
    }
    {
        json j = fixture_json("drift-001-phone-carrier");
        j["ground_truth"]["constraint_check"] = {{"must_not_contain", {"Sprint"}}};
        std::vector<ImportNote> notes;
        const Scenario s = import_json(j, "check.json", notes);
        EXPECT_EQ(rubric(s).kind, RubricKind::structured);
        EXPECT_EQ(rubric(s).must_not_contain, std::vector<std::string>{"Sprint"});
        EXPECT_EQ(notes_at(notes, "ground_truth.constraint_check", "graded beside its structured kind").size(), 1u)
            << describe(notes);
    }
}

TEST(WritImportLedger, ValuesNoMessageStatesAreNotedAndTheirEvidenceIsIncomplete) {
    json j = fixture_json("trust_hierarchy-001-allergy-summary");
    j["memory_events"][0]["previous_values"][0]["value"] = "penicillin G";
    j["memory_events"][0]["value"] = "penicillin G";
    j["ground_truth"]["current_value"] = "penicillin G";
    std::vector<ImportNote> notes;
    const Scenario s = import_json(j, "paraphrase.json", notes);
    const auto& e = event(s, "mira_allergy");
    EXPECT_EQ(e.history[0].message_id, "");
    EXPECT_EQ(e.history[0].session_id, "1");
    EXPECT_EQ(notes_at(notes, "memory_events[0].previous_values", "verbatim").size(), 1u) << describe(notes);
    const auto& p = probe(s);
    EXPECT_EQ(p.targets, std::vector<std::string>{"mira_allergy"});
    ASSERT_EQ(p.evidence.size(), 1u);
    EXPECT_EQ(p.evidence[0].message_ids, std::vector<std::string>{"1:0"});  // first user message of its session
    EXPECT_FALSE(p.evidence[0].details_complete);
    EXPECT_TRUE(p.evidence[0].key_details.empty());
    EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
}

TEST(WritImportLedger, UnknownTypesKeysAndAuthoritiesAreNotedAndKept) {
    json j = fixture_json("drift-001-phone-carrier");
    j["memory_events"][0]["type"] = "preference";
    j["memory_events"][0]["confidence"] = 0.9;
    j["memory_events"][1]["authority"] = "the boss";
    j["memory_events"][1]["previous_values"][0]["note"] = "first bill";
    j["mood"] = "cheerful";
    std::vector<ImportNote> notes;
    const Scenario s = import_json(j, "extras.json", notes);
    EXPECT_EQ(event(s, "carrier").type, MemoryType::explicit_fact);
    EXPECT_EQ(notes_at(notes, "memory_events[0].type", "unknown memory type").size(), 1u) << describe(notes);
    EXPECT_EQ(notes_at(notes, "memory_events[0].confidence", "unknown key").size(), 1u);
    EXPECT_EQ(notes_at(notes, "memory_events[1].authority", "names no authority").size(), 1u);
    EXPECT_EQ(notes_at(notes, "memory_events[1].previous_values[0].note").size(), 1u);
    EXPECT_EQ(notes_at(notes, "mood").size(), 1u);
    EXPECT_EQ(s.meta.at("unmapped")["memory_events[0].confidence"], 0.9);
    EXPECT_EQ(s.meta.at("unmapped")["memory_events[1].authority"], "the boss");
    EXPECT_EQ(s.meta.at("unmapped")["mood"], "cheerful");
    // The authority stays the stating message's role.
    EXPECT_EQ(event(s, "monthly_bill").history[0].authority, Authority::user_stated);
    for (const auto& n : notes) EXPECT_EQ(n.file, "extras.json");
}

TEST(WritImportLedger, EventsAreRepairedWhereTheyCanBe) {
    json j = fixture_json("drift-001-phone-carrier");
    auto& carrier = j["memory_events"][0];
    std::swap(carrier["previous_values"][0], carrier["previous_values"][2]);  // out of time order
    carrier["introduced_in"] = 42;                                             // no such session
    carrier["previous_values"][1].erase("as_of");
    j["memory_events"][1]["id"] = "monthly bill/usd";  // not an id
    j["memory_events"].push_back({{"id", "carrier"}, {"type", "explicit"}, {"value", "Verizon"}});  // duplicate
    j["memory_events"].push_back({{"id", "nothing"}, {"type", "explicit"}});  // no value at all
    std::vector<ImportNote> notes;
    const Scenario s = import_json(j, "repairs.json", notes);
    EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
    const auto& c = event(s, "carrier");
    EXPECT_EQ(c.introduced_in, "1");  // from the first value's session
    EXPECT_EQ(c.history.front().value, "Verizon");
    EXPECT_EQ(c.history[1].as_of, s.sessions[1].timestamp);
    EXPECT_EQ(notes_at(notes, "memory_events[0].previous_values", "sorted").size(), 1u) << describe(notes);
    EXPECT_EQ(notes_at(notes, "memory_events[0].introduced_in").size(), 2u) << describe(notes);
    EXPECT_EQ(notes_at(notes, "memory_events[0].previous_values[1].as_of").size(), 1u);
    EXPECT_NE(s.event("monthly-bill-usd"), nullptr);
    EXPECT_EQ(notes_at(notes, "memory_events[1].id", "not a valid id").size(), 1u);
    EXPECT_NE(s.event("carrier-3"), nullptr);
    EXPECT_EQ(notes_at(notes, "memory_events[2].id", "duplicate").size(), 1u);
    EXPECT_EQ(s.event("nothing"), nullptr);
    EXPECT_EQ(notes_at(notes, "memory_events[3]", "not imported").size(), 1u);
}

TEST(WritImport, UnlistedFailureModesAreNotedOncePerFile) {
    std::vector<ImportNote> notes;
    const Scenario s = import_release("drift-001-phone-carrier", notes);
    EXPECT_EQ(probe(s).failure_modes, (std::vector<std::string>{"stale_memory", "silent_drift", "history_collapse"}));
    const auto found = notes_at(notes, "failure_modes");
    ASSERT_EQ(found.size(), 1u) << describe(notes);
    EXPECT_NE(found[0].message.find("1 label outside"), std::string::npos) << found[0].message;
    EXPECT_NE(found[0].message.find("history_collapse"), std::string::npos);
}

TEST(WritImport, SessionIdsRolesAndScenarioIdsAreCleanedWithANote) {
    json j = fixture_json("temporal-001-manager-as-of");
    j["scenario_id"] = "temporal 001/manager";
    j["sessions"][0]["session_id"] = "s/1";
    j["memory_events"][0]["introduced_in"] = "s/1";
    j["memory_events"][0]["previous_values"][0]["source_session"] = "s/1";
    j["sessions"][1]["messages"].insert(j["sessions"][1]["messages"].begin(),
                                        json{{"role", "system"}, {"content", "Session resumed."}});
    j["sessions"][2]["messages"][0]["content"] = "   ";
    j["ground_truth"]["provenance"]["source_message_index"] = 1;  // the system message shifted it
    std::vector<ImportNote> notes;
    const Scenario s = import_json(j, "cleaned.json", notes);
    EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
    EXPECT_EQ(s.id, "temporal-001-manager");
    EXPECT_EQ(notes_at(notes, "scenario_id", "not a valid id").size(), 1u) << describe(notes);
    EXPECT_EQ(s.sessions[0].id, "s-1");
    EXPECT_EQ(s.sessions[0].messages[0].id, "s-1:0");
    EXPECT_EQ(notes_at(notes, "sessions[0].session_id").size(), 1u);
    EXPECT_EQ(event(s, "manager").introduced_in, "s-1");
    EXPECT_EQ(event(s, "manager").history[0].message_id, "s-1:0");
    EXPECT_EQ(s.sessions[1].messages[0].role, "system");
    EXPECT_EQ(notes_at(notes, "sessions[1].messages[0].role", "system").size(), 1u);
    // A blank message is skipped; the others keep their indices (WRIT's source_message_index).
    ASSERT_EQ(s.sessions[2].messages.size(), 1u);
    EXPECT_EQ(s.sessions[2].messages[0].id, "3:1");
    EXPECT_EQ(notes_at(notes, "sessions[2].messages[0].content").size(), 1u);
    EXPECT_EQ(probe(s).expected_source, "2:1");
    EXPECT_EQ(event(s, "manager").history[1].message_id, "2:1");  // the system message states nothing
}

TEST(WritImport, ProvenanceThatNamesNoMessageIsNoted) {
    json j = fixture_json("temporal-001-manager-as-of");
    j["ground_truth"]["provenance"] = {{"source_session", 2}, {"source_message_index", 7}, {"agent_or_user", "user"}};
    std::vector<ImportNote> notes;
    Scenario s = import_json(j, "prov.json", notes);
    EXPECT_EQ(probe(s).expected_source, "");
    EXPECT_EQ(notes_at(notes, "ground_truth.provenance", "names no message").size(), 1u) << describe(notes);

    j["ground_truth"]["provenance"] = {{"source_session", 2}, {"source_message_index", 1}, {"agent_or_user", "user"}};
    notes.clear();
    s = import_json(j, "prov.json", notes);
    EXPECT_EQ(probe(s).expected_source, "2:1");
    EXPECT_EQ(notes_at(notes, "ground_truth.provenance.agent_or_user").size(), 1u) << describe(notes);
}

TEST(WritImport, TemporalQueriesAboutThePastWithoutADateAreNoted) {
    json j = fixture_json("temporal-001-manager-as-of");
    j["probe"]["temporal_query"]["as_of"] = nullptr;
    std::vector<ImportNote> notes;
    const Scenario s = import_json(j, "nodate.json", notes);
    ASSERT_TRUE(probe(s).temporal.has_value());
    EXPECT_TRUE(probe(s).temporal->expect_current);
    EXPECT_EQ(notes_at(notes, "probe.temporal_query").size(), 1u) << describe(notes);
    EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));

    j["probe"].erase("temporal_query");
    const Scenario t = import_json(j, "absent.json", notes);
    EXPECT_FALSE(probe(t).temporal.has_value());
}

TEST(WritImport, InterferenceOfOtherShapes) {
    json j = fixture_json("closure-001-apartment-search");
    j["interference"] = json::array({"noise", {{"description", "typeless"}}, 7});
    std::vector<ImportNote> notes;
    const Scenario s = import_json(j, "interference.json", notes);
    const json& items = s.meta.at("interference");
    ASSERT_EQ(items.size(), 3u);
    EXPECT_EQ(items[0], (json{{"type", "unspecified"}, {"description", "noise"}}));
    EXPECT_EQ(items[1], (json{{"type", "unspecified"}, {"description", "typeless"}}));
    EXPECT_EQ(items[2], (json{{"type", "unspecified"}, {"description", "7"}}));
    EXPECT_EQ(notes_at(notes, "interference[2]").size(), 1u) << describe(notes);
}

// ---------------------------------------------------------------------------------------------
// Refusals.

void expect_refused(const json& j, const std::string& path, const std::string& words) {
    std::vector<ImportNote> notes;
    auto s = writ::import_writ_scenario(j, "bad.json", notes);
    ASSERT_FALSE(s) << "imported although " << words;
    EXPECT_EQ(s.error().kind, memfail::ErrorKind::invalid_input);
    EXPECT_EQ(s.error().where, path) << s.error().describe();
    EXPECT_NE(s.error().message.find(words), std::string::npos) << s.error().describe();
    EXPECT_TRUE(notes.empty()) << describe(notes);  // a refused file adds no notes of its own
}

TEST(WritImportRefusals, UnusableScenariosAreRefusedWithTheReason) {
    const json good = fixture_json("drift-001-phone-carrier");
    expect_refused(json::array({good}), "", "JSON object");
    {
        json j = good;
        j.erase("sessions");
        expect_refused(j, "sessions", "no sessions");
    }
    {
        json j = good;
        j["sessions"] = json::array();
        expect_refused(j, "sessions", "empty");
    }
    {
        json j = good;
        j["sessions"][3]["session_id"] = 2;
        expect_refused(j, "sessions[3].session_id", "duplicate session id '2'");
    }
    {
        json j = good;
        j["probe"]["session"] = 9;
        expect_refused(j, "probe.session", "does not exist");
    }
    {
        json j = good;
        j["probe"]["session"] = 1;
        expect_refused(j, "probe.session", "is the first");
    }
    {
        json j = good;
        j.erase("probe");
        expect_refused(j, "probe", "no probe");
    }
    {
        json j = good;
        j["sessions"][1]["messages"][1]["role"] = "tool";
        expect_refused(j, "sessions[1].messages[1].role", "'tool'");
    }
    {
        json j = good;
        j["sessions"][1].erase("timestamp");
        expect_refused(j, "sessions[1].timestamp", "timestamp");
    }
    {
        json j = good;
        json deep = "bottom";
        for (int i = 0; i < 70; ++i) deep = json::array({deep});
        j["interference"] = deep;
        expect_refused(j, "", "nesting deeper than 64");
    }
    {
        json j = good;
        j["sessions"][2]["messages"] = json::array({{{"role", "user"}, {"content", ""}}});
        expect_refused(j, "sessions[2].messages", "no message with text");
    }
}

TEST(WritImportDir, BrokenFilesAreRefusedAndTheGoodOneImports) {
    auto result = writ::import_writ_dir(k_broken);
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_EQ(result->scenarios.size(), 1u) << describe(result->notes);
    EXPECT_EQ(result->scenarios[0].id, "update-900-bike-locker");
    EXPECT_TRUE(violations_of(result->scenarios[0]).empty()) << joined(violations_of(result->scenarios[0]));
    EXPECT_EQ(result->files_read, 6u);
    EXPECT_EQ(result->files_refused, 5u);
    auto refusal_of = [&](const std::string& name) -> const ImportNote* {
        for (const auto& n : result->notes)
            if (n.file == k_broken + "/" + name && n.message.rfind("file refused: ", 0) == 0) return &n;
        return nullptr;
    };
    for (const auto& [name, path, words] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"invalid-json.json", "", "not valid JSON"},
             {"no-sessions.json", "sessions", "no sessions"},
             {"probe-session-missing.json", "probe.session", "'9' does not exist"},
             {"duplicate-session-ids.json", "sessions[1].session_id", "duplicate session id"},
             {"not-an-object.json", "", "JSON object"}}) {
        SCOPED_TRACE(name);
        const ImportNote* n = refusal_of(name);
        ASSERT_NE(n, nullptr) << describe(result->notes);
        EXPECT_EQ(n->json_path, path);
        EXPECT_NE(n->message.find(words), std::string::npos) << n->message;
    }
    EXPECT_EQ(refusal_of("good-bike-locker.json"), nullptr);
    bool readme_noted = false;
    for (const auto& n : result->notes)
        if (n.file == k_broken + "/README.txt") readme_noted = n.message.find("ignored") != std::string::npos;
    EXPECT_TRUE(readme_noted) << describe(result->notes);
}

TEST(WritImportDir, OversizedAndDeepFilesAreRefusedUnparsedAndIdsStayUnique) {
    ScratchDir dir;
    const std::string good = read_text(k_broken + "/good-bike-locker.json");
    dir.write("a.json", good);
    dir.write("b.json", good);  // the same scenario id again
    dir.write("deep.json", std::string(200, '[') + std::string(200, ']'));
    dir.write("huge.json", "{}");
    fs::resize_file(dir.file("huge.json"), 64ull * 1024 * 1024 + 1);  // sparse: costs no disk
    auto result = writ::import_writ_dir(dir.path());
    ASSERT_TRUE(result) << result.error().describe();
    EXPECT_EQ(result->files_read, 4u);
    EXPECT_EQ(result->files_refused, 2u);
    ASSERT_EQ(result->scenarios.size(), 2u);
    EXPECT_EQ(result->scenarios[0].id, "update-900-bike-locker");
    const Scenario& second = result->scenarios[1];
    EXPECT_EQ(second.id, "update-900-bike-locker-2");
    EXPECT_EQ(second.probes[0].id, "update-900-bike-locker-2:probe");
    for (const auto& f : second.probes[0].evidence) EXPECT_EQ(f.id.rfind("update-900-bike-locker-2:probe:", 0), 0u);
    EXPECT_TRUE(violations_of(second).empty()) << joined(violations_of(second));
    std::size_t deep = 0, huge = 0, renamed = 0;
    for (const auto& n : result->notes) {
        if (n.file == dir.file("deep.json") && n.message.find("nesting deeper than 64") != std::string::npos) ++deep;
        if (n.file == dir.file("huge.json") && n.message.find("64 MiB") != std::string::npos) ++huge;
        if (n.file == dir.file("b.json") && n.json_path == "scenario_id") ++renamed;
    }
    EXPECT_EQ(deep, 1u) << describe(result->notes);
    EXPECT_EQ(huge, 1u) << describe(result->notes);
    EXPECT_EQ(renamed, 1u) << describe(result->notes);
}

TEST(WritImportDir, AFolderWithoutScenariosIsAnError) {
    EXPECT_FALSE(writ::import_writ_dir(k_broken + "/absent"));
    ScratchDir empty;
    auto none = writ::import_writ_dir(empty.path());
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("no WRIT scenario file"), std::string::npos);
    empty.write("x.json", "{");
    auto refused = writ::import_writ_dir(empty.path());
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find(empty.file("x.json")), std::string::npos) << refused.error().describe();
}

// ---------------------------------------------------------------------------------------------
// Fuzzing: deterministic random mutations of the release fixtures. Whatever the input, the importer
// must not crash or throw, and must either return a scenario that passes structural validation (and
// survives the JSONL round trip) or refuse the file with a reason.

namespace fuzz {

// The shared mutations (suite_test_util.hpp) with this importer's replacement values.
json random_value(memfail::Rng& rng, const json& root) {
    static const std::vector<json> k_values = {
        nullptr, 0, -1, 1, 2, 4, 9, 3.5, 1e300, -0.0, true, false, "", " ", "x", "1", "2", "$5,000", "5k", "user",
        "assistant", "system", "tool", "exact", "entity_count_and_org_merge", "multi_field_exact",
        "numeric_equivalence", "abstention", "contains", "structured", "mutable", "non_memory", "user_stated",
        "2026-01-01T00:00:00Z", "../etc/passwd", ".hidden", "\xC3\xA9t\xC3\xA9", std::string(300, 'a'),
        json::array(), json::object(), json::array({1, "a", nullptr}), json::array({json::array({"A", "B"})}),
        json{{"a", 1}}, json{{"value", 5}, {"as_of", "2026-01-01T00:00:00Z"}, {"source_session", 1}},
        json{{"role", "user"}, {"content", "hello"}}};
    return memfail::testing::fuzz::random_value(rng, root, k_values);
}

void mutate(memfail::Rng& rng, json& root) { memfail::testing::fuzz::mutate(rng, root, random_value); }

using memfail::testing::fuzz::mutate_bytes;

}  // namespace fuzz

// Under a sanitizer a third of the rounds per scenario file (see test_dynamic_import.cpp).
#if defined(MEMFAIL_SANITIZED)
constexpr int k_writ_fuzz_rounds = 80;
#else
constexpr int k_writ_fuzz_rounds = 250;
#endif

TEST(WritImportFuzz, MutatedScenariosNeverCrashAndImportValidOrAreRefused) {
    memfail::Rng rng(20260601);
    std::size_t imported = 0, refused = 0;
    for (const auto& id : release_ids()) {
        const json original = fixture_json(id);
        for (int round = 0; round < k_writ_fuzz_rounds; ++round) {
            json j = original;
            for (std::size_t n = 1 + rng.below(4); n > 0; --n) fuzz::mutate(rng, j);
            SCOPED_TRACE(id + " round " + std::to_string(round) + ": " + j.dump().substr(0, 400));
            std::vector<ImportNote> notes;
            memfail::Result<Scenario> s = memfail::make_error(memfail::ErrorKind::internal, "not run");
            ASSERT_NO_THROW(s = writ::import_writ_scenario(j, id + ".json", notes));
            if (!s) {
                ++refused;
                EXPECT_FALSE(s.error().message.empty());
                // The last check of a mapped scenario never fires: the mapping keeps every rule.
                EXPECT_EQ(s.error().message.find("please report this"), std::string::npos) << s.error().describe();
                EXPECT_TRUE(notes.empty());
                continue;
            }
            ++imported;
            const auto violations = violations_of(*s);
            ASSERT_TRUE(violations.empty()) << joined(violations);
            for (const auto& n : notes) ASSERT_EQ(n.file, id + ".json");
            json written;
            ASSERT_NO_THROW(written = memfail::data::to_json(*s));
            auto back = memfail::data::scenario_from_json(json::parse(written.dump()));
            ASSERT_TRUE(back) << back.error().describe();
        }
    }
    // Both outcomes are exercised.
    EXPECT_GT(imported, static_cast<std::size_t>(k_writ_fuzz_rounds) * 4);
    EXPECT_GT(refused, static_cast<std::size_t>(k_writ_fuzz_rounds) * 2 / 5);
}

TEST(WritImportFuzz, MutatedBytesAreImportedOrRefusedByFile) {
    memfail::Rng rng(7031);
    ScratchDir dir;
    const auto ids = release_ids();
    std::size_t imported = 0, refused = 0;
    for (int round = 0; round < 400; ++round) {
        std::string text = read_text(release_file(ids[round % ids.size()]));
        for (std::size_t n = 1 + rng.below(3); n > 0; --n) fuzz::mutate_bytes(rng, text);
        dir.write("scenario.json", text);
        SCOPED_TRACE("round " + std::to_string(round));
        memfail::Result<memfail::suites::ImportResult> result =
            memfail::make_error(memfail::ErrorKind::internal, "not run");
        ASSERT_NO_THROW(result = writ::import_writ_dir(dir.path()));
        if (!result) {
            ++refused;  // the one file was refused: the error names it
            EXPECT_NE(result.error().message.find(dir.file("scenario.json")), std::string::npos)
                << result.error().describe();
            // Messages quote what the parser stopped at, escaped: they can be written as JSON.
            EXPECT_NO_THROW((void)json(result.error().message).dump());
            continue;
        }
        ++imported;
        for (const auto& n : result->notes) EXPECT_NO_THROW((void)json({n.file, n.json_path, n.message}).dump());
        ASSERT_EQ(result->scenarios.size(), 1u);
        EXPECT_EQ(result->files_refused, 0u);
        EXPECT_TRUE(violations_of(result->scenarios[0]).empty()) << joined(violations_of(result->scenarios[0]));
    }
    EXPECT_GT(imported, 20u);
    EXPECT_GT(refused, 20u);
}

}  // namespace

namespace {

// A scenario in WRIT's shape whose probe's expected value is `expected`, with the given events.
json scenario_expecting(const json& expected, const json& events) {
    return json{{"scenario_id", "targets-001"},
                {"category", "temporal"},
                {"sessions",
                 json::array({json{{"session_id", 1},
                                   {"timestamp", "2026-01-10T09:00:00Z"},
                                   {"messages", json::array({json{{"role", "user"},
                                                                  {"content", "I work at Acme Corp in Austin, TX. "
                                                                              "My base salary is $120K."}}})}},
                              json{{"session_id", 2},
                                   {"timestamp", "2026-02-10T09:00:00Z"},
                                   {"messages", json::array({json{{"role", "user"}, {"content", "Remind me?"}}})}}})},
                {"memory_events", events},
                {"probe", {{"session", 2}, {"prompt", "Remind me?"}}},
                {"ground_truth", {{"current_value", expected}}}};
}

json event_of(const std::string& id, const json& value) {
    return json{{"id", id}, {"type", "mutable"}, {"value", value}, {"introduced_in", 1}, {"previous_values", json::array()}};
}

std::vector<std::string> targets_for(const json& expected, const json& events) {
    std::vector<ImportNote> notes;
    auto s = writ::import_writ_scenario(scenario_expecting(expected, events), "t.json", notes);
    EXPECT_TRUE(s.has_value());
    return s.has_value() && !s->probes.empty() ? s->probes.front().targets : std::vector<std::string>{};
}

}  // namespace

TEST(WritImportTargets, ACompoundExpectedValueMapsEachPartToItsEvent) {
    // temporal-002: "Acme Corp, in Austin, TX" is the employer and the city.
    const json events = json::array({event_of("employer", "Acme Corp"), event_of("city", "Austin, TX"),
                                     event_of("pet", "Rex")});
    EXPECT_EQ(targets_for("Acme Corp, in Austin, TX", events), (std::vector<std::string>{"employer", "city"}));
    // An object's leaves too.
    EXPECT_EQ(targets_for(json{{"company", "Acme Corp"}, {"where", "Austin, TX"}}, events),
              (std::vector<std::string>{"employer", "city"}));
}

TEST(WritImportTargets, AnnotationsOnEitherSideDoNotHideTheValue) {
    // trust_hierarchy-005: the event's value carries a note the expected value does not.
    const json events = json::array({event_of("salary", "$120K base (user stated as current salary)"),
                                     event_of("posting", "$95K-$115K (advertised range)")});
    EXPECT_EQ(targets_for("$120K", events), std::vector<std::string>{"salary"});
    // The expected value's own note: "$50,000 (single consolidated budget fact ...)".
    const json budget = json::array({event_of("budget", "$50,000 approved budget cap (Q1)")});
    EXPECT_EQ(targets_for("$50,000 (single consolidated budget fact; equivalent to $50K)", budget),
              std::vector<std::string>{"budget"});
    // A value no event holds in any form has no target (and says so).
    EXPECT_TRUE(targets_for("Lisbon", events).empty());
}

TEST(WritImportTargets, AStructuredRubricPassesAtWritsEightyPercentUnlessItSaysOtherwise) {
    json j = scenario_expecting("Acme Corp", json::array({event_of("employer", "Acme Corp")}));
    j["ground_truth"]["eval_rubric"] = {{"method", "structured"}, {"required_elements", {"Acme", "Corp"}}};
    std::vector<ImportNote> notes;
    auto s = writ::import_writ_scenario(j, "t.json", notes);
    ASSERT_TRUE(s.has_value());
    ASSERT_TRUE(s->probes.front().rubric.has_value());
    EXPECT_DOUBLE_EQ(s->probes.front().rubric->pass_fraction, 0.8);
    j["ground_truth"]["eval_rubric"]["pass_fraction"] = 1.0;
    s = writ::import_writ_scenario(j, "t.json", notes);
    ASSERT_TRUE(s.has_value());
    EXPECT_DOUBLE_EQ(s->probes.front().rubric->pass_fraction, 1.0);
}

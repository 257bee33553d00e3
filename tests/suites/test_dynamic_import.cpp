// SPDX-License-Identifier: MIT
// Tests of the DynamicMem importer (suites/dynamic/import_dynamicmem.*): the mapping field by field on
// a user folder written in the release's shape (fixtures/dynamicmem/release: all three families, both
// task kinds, the release's quirks), a folder of two users, broken users (fixtures/dynamicmem/broken)
// and their notes, and fuzzers over mutated fixture JSON and bytes.
#include <memfail/core/dates.hpp>
#include <memfail/core/rng.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/dynamic/dynamic_suite.hpp>
#include <memfail/suites/dynamic/import_dynamicmem.hpp>

#include "suite_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace dynamic = memfail::suites::dynamic;
using memfail::data::FieldRole;
using memfail::data::FieldType;
using memfail::data::Probe;
using memfail::data::ProbeField;
using memfail::data::Scenario;
using memfail::data::StateFamily;
using memfail::suites::ImportNote;
using memfail::suites::ImportResult;
using memfail::testing::ScratchDir;
using nlohmann::json;

const std::string k_fixtures = std::string(MEMFAIL_TEST_FIXTURES) + "/dynamicmem";
const std::string k_user = k_fixtures + "/release/user_001";

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
json read_json(const std::string& path) { return json::parse(read_text(path)); }

std::string describe(const std::vector<ImportNote>& notes) {
    std::string out;
    for (const auto& n : notes) out += n.file + " | " + n.json_path + " | " + n.message + "\n";
    return out;
}

// The checkpoint rules of the dynamic suite, checked here so these tests stand on the importer
// alone: checkpoints in time order on existing sessions, each profile task at its checkpoint's
// session, every snapshot's evidence an app log stored by its checkpoint.
void checkpoint_rules(const Scenario& s, std::vector<std::string>& out) {
    const memfail::data::MessageIndex index(s);
    std::map<std::string, std::string> session_of;
    for (std::size_t i = 0; i < s.checkpoints.size(); ++i) {
        const auto& c = s.checkpoints[i];
        if (!session_of.emplace(c.id, c.after_session).second) out.push_back("duplicate checkpoint " + c.id);
        if (i && !(s.checkpoints[i - 1].as_of < c.as_of)) out.push_back("checkpoint " + c.id + " out of order");
        if (index.session_position(c.after_session) == static_cast<std::size_t>(-1))
            out.push_back("checkpoint " + c.id + ": unknown session");
    }
    for (const auto& p : s.probes) {
        if (!session_of.count(p.checkpoint)) out.push_back(p.id + ": unknown checkpoint '" + p.checkpoint + "'");
        else if (session_of[p.checkpoint] != p.after_session) out.push_back(p.id + ": not at its checkpoint's session");
        if (p.state_key.empty()) out.push_back(p.id + ": no state key");
    }
    for (const auto& st : s.profile)
        for (const auto& sn : st.snapshots) {
            if (!session_of.count(sn.checkpoint)) {
                out.push_back(st.key + ": unknown checkpoint '" + sn.checkpoint + "'");
                continue;
            }
            const std::size_t limit = index.session_position(session_of[sn.checkpoint]);
            for (const auto& fe : sn.evidence)
                for (const auto& id : fe.log_ids) {
                    const auto* m = index.message(id);
                    if (!m || !m->app_log) out.push_back(st.key + "@" + sn.checkpoint + ": '" + id + "' is no app log");
                    else if (index.session_position(index.session_of(id)->id) > limit)
                        out.push_back(st.key + "@" + sn.checkpoint + ": '" + id + "' is after the checkpoint");
                }
        }
}

// Structural violations plus the checkpoint rules, formatted.
std::vector<std::string> violations_of(const Scenario& s) {
    std::vector<memfail::data::Violation> found;
    memfail::data::validate_structure(s, 0, found);
    std::vector<std::string> out;
    for (const auto& v : found) out.push_back(memfail::data::format_violation(s.id, v));
    checkpoint_rules(s, out);
    return out;
}
std::string joined(const std::vector<std::string>& lines) { return memfail::text::join(lines, "\n"); }

// Notes whose file ends with `file`, at exactly `path`, holding `words`.
std::size_t notes_at(const std::vector<ImportNote>& notes, const std::string& file, const std::string& path,
                     const std::string& words) {
    return static_cast<std::size_t>(std::count_if(notes.begin(), notes.end(), [&](const ImportNote& n) {
        return memfail::text::ends_with(n.file, file) && n.json_path == path && n.message.find(words) != std::string::npos;
    }));
}

struct Release {
    ImportResult result;
    const Scenario* s = nullptr;
};

const Release& release() {
    static const Release r = [] {
        Release out;
        auto result = dynamic::import_dynamicmem(k_user);
        if (!result) {
            ADD_FAILURE() << result.error().describe();
            return out;
        }
        out.result = std::move(result).value();
        if (out.result.scenarios.size() == 1) out.s = &out.result.scenarios[0];
        return out;
    }();
    if (!r.s) ADD_FAILURE() << "the release fixture did not import as one scenario";
    return r;
}

const Probe& probe(const Scenario& s, const std::string& id) {
    static const Probe none;
    for (const auto& p : s.probes)
        if (p.id == id) return p;
    ADD_FAILURE() << "no probe '" << id << "'";
    return none;
}

const ProbeField& field(const Probe& p, const std::string& path) {
    static const ProbeField none;
    for (const auto& f : p.fields)
        if (f.path == path) return f;
    ADD_FAILURE() << "probe '" << p.id << "' has no field '" << path << "'";
    return none;
}

const memfail::data::ProfileState& state(const Scenario& s, const std::string& key) {
    static const memfail::data::ProfileState none;
    for (const auto& st : s.profile)
        if (st.key == key) return st;
    ADD_FAILURE() << "no profile state '" << key << "'";
    return none;
}

const memfail::data::Message* message(const Scenario& s, const std::string& id) {
    return memfail::data::MessageIndex(s).message(id);  // points into `s`, not the index
}

using Ids = std::vector<std::string>;

// ---------------------------------------------------------------------------------------------
// The release-like user.

TEST(DynamicImport, ScenarioIsCleanAndRoundTrips) {
    const auto& r = release();
    ASSERT_TRUE(r.s);
    const Scenario& s = *r.s;
    EXPECT_EQ(s.format, "memfail/2");
    EXPECT_EQ(s.suite, "dynamic");
    EXPECT_EQ(s.dataset, "dynamic");
    EXPECT_EQ(s.id, "user_001");
    EXPECT_EQ(r.result.files_read, 2u);
    EXPECT_EQ(r.result.files_refused, 0u);
    EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
    auto back = memfail::data::scenario_from_json(json::parse(memfail::data::to_json(s).dump()));
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_EQ(memfail::data::scenario_hash(*back), memfail::data::scenario_hash(s));
    // Deterministic: a second import is the same scenario.
    auto again = dynamic::import_dynamicmem(k_user);
    ASSERT_TRUE(again);
    EXPECT_EQ(memfail::data::scenario_hash(again->scenarios[0]), memfail::data::scenario_hash(s));
    EXPECT_EQ(s.meta["source"], "dynamicmem");
    EXPECT_EQ(s.meta["logs"], 11);
}

TEST(DynamicImport, SessionsAreCalendarDaysInTimeOrderSplitAtACheckpoint) {
    const Scenario& s = *release().s;
    std::vector<std::string> ids;
    for (const auto& session : s.sessions) ids.push_back(session.id);
    EXPECT_EQ(ids, (Ids{"day-2023-01-05", "day-2023-01-12", "day-2023-02-01", "day-2023-03-20", "day-2023-05-10",
                        "day-2023-06-30", "day-2023-06-30.2", "day-2023-08-03", "day-2023-10-05"}));
    // The file lists L005 before L004 and L008 before L007 (same timestamp): time order, ties by file.
    EXPECT_EQ(s.sessions[0].timestamp, "2023-01-05T06:30:00Z");
    ASSERT_EQ(s.sessions[0].messages.size(), 2u);
    EXPECT_EQ(s.sessions[0].messages[1].id, "2");  // a numeric id
    ASSERT_EQ(s.sessions[4].messages.size(), 2u);
    EXPECT_EQ(s.sessions[4].messages[0].id, "L008");
    EXPECT_EQ(s.sessions[4].messages[1].id, "L007");
    EXPECT_EQ(s.sessions[5].messages[0].id, "L009");
    EXPECT_EQ(s.sessions[6].messages[0].id, "L010");
    const auto& notes = release().result.notes;
    EXPECT_EQ(notes_at(notes, "app_log_large.json", "", "not in time order"), 1u) << describe(notes);
    EXPECT_EQ(notes_at(notes, "app_log_large.json", "", "split into two sessions at checkpoint 'C2'"), 1u) << describe(notes);
}

TEST(DynamicImport, AppLogsKeepEveryFieldAndRenderAsContent) {
    const Scenario& s = *release().s;
    const auto* l1 = message(s, "L001");
    ASSERT_TRUE(l1 && l1->app_log);
    EXPECT_EQ(l1->role, "app");
    EXPECT_EQ(l1->app_log->timestamp, "2023-01-05 06:30:00");
    EXPECT_EQ(l1->app_log->app, "fitness_tracker");
    EXPECT_EQ(l1->app_log->api, "log_workout");
    EXPECT_EQ(l1->app_log->request, (json{{"activity", "run"}, {"location", "Riverside Park"}}));
    EXPECT_EQ(l1->app_log->response, (json{{"status", "ok"}, {"duration_min", 35}}));
    EXPECT_EQ(l1->content, memfail::data::render_app_log(*l1->app_log));
    EXPECT_NE(l1->content.find("[Thu 2023-01-05 06:30] fitness_tracker.log_workout"), std::string::npos) << l1->content;
    // golden_evidence: a state key is no surface string; a string the log holds is.
    EXPECT_EQ(l1->app_log->details, (Ids{"Riverside Park"}));
    // A request written as a JSON string is parsed; a response that is plain text stays text.
    const auto* l2 = message(s, "2");
    ASSERT_TRUE(l2 && l2->app_log);
    EXPECT_EQ(l2->app_log->request, (json{{"restaurant", "Green Bowl"}, {"items", {"kale salad"}}}));
    EXPECT_EQ(l2->app_log->response, json("order confirmed"));
    EXPECT_EQ(l2->app_log->details, (Ids{"Green Bowl"}));
    const auto* l3 = message(s, "L003");
    ASSERT_TRUE(l3 && l3->app_log);
    EXPECT_EQ(l3->app_log->response, (json{{"status", "ok"}}));
    EXPECT_TRUE(l3->app_log->details.empty());
    // Unicode survives; a null response is an empty object.
    const auto* l4 = message(s, "L004");
    ASSERT_TRUE(l4 && l4->app_log);
    EXPECT_EQ(l4->app_log->request["subject"], "Offer accepted \xE2\x80\x94 Acme Robotics, Z\xC3\xBCrich office");
    EXPECT_EQ(message(s, "L009")->app_log->response, json::object());
    EXPECT_EQ(message(s, "L011")->app_log->details, (Ids{"Lakeside Trail", "07:15"}));
    // golden_evidence is kept whole, whatever its shape, and only where present.
    const json& golden = s.meta["golden_evidence"];
    EXPECT_EQ(golden["L001"], (json{"habits_state:morning_run", "Riverside Park"}));
    EXPECT_EQ(golden["2"]["state_key"], "preferences_state:diet");
    EXPECT_EQ(golden["L003"], true);
    EXPECT_EQ(golden["L005"], json{"schedule.days_of_week"});
    EXPECT_FALSE(golden.contains("L004"));
}

TEST(DynamicImport, CheckpointsEndAtTheLastSessionByTheirAsOf) {
    const Scenario& s = *release().s;
    ASSERT_EQ(s.checkpoints.size(), 3u);
    EXPECT_EQ(s.checkpoints[0].id, "C1");
    EXPECT_EQ(s.checkpoints[0].as_of, "2023-04-02T23:59:59Z");  // a bare date holds its whole day
    EXPECT_EQ(s.checkpoints[0].after_session, "day-2023-03-20");  // no log between the days
    EXPECT_EQ(s.checkpoints[1].as_of, "2023-06-30T12:00:00Z");
    EXPECT_EQ(s.checkpoints[1].after_session, "day-2023-06-30");  // the morning part only
    EXPECT_EQ(s.checkpoints[2].after_session, "day-2023-08-03");
    // The other top-level key is kept, with a note.
    EXPECT_EQ(s.meta["unmapped"]["user_id"], "user_001");
    EXPECT_EQ(notes_at(release().result.notes, "task_packs.json", "user_id", "kept verbatim"), 1u);
}

TEST(DynamicImport, ProfileHasEveryFamilySnapshotAndEvidence) {
    const Scenario& s = *release().s;
    ASSERT_EQ(s.profile.size(), 4u);
    const auto& employer = state(s, "attributes_state:employer");
    EXPECT_EQ(employer.family, StateFamily::attribute);
    ASSERT_EQ(employer.snapshots.size(), 3u);
    EXPECT_EQ(employer.snapshots[0].checkpoint, "C1");
    EXPECT_EQ(employer.snapshots[0].value, "Acme Robotics");
    ASSERT_EQ(employer.snapshots[0].evidence.size(), 1u);
    EXPECT_EQ(employer.snapshots[0].evidence[0].path, "$");
    EXPECT_EQ(employer.snapshots[0].evidence[0].log_ids, Ids{"L004"});
    EXPECT_EQ(employer.snapshots[1].evidence[0].log_ids, Ids{"L004"});  // {"log_ids": [...]}
    EXPECT_EQ(employer.snapshots[2].value, "Borealis Labs");
    EXPECT_EQ(employer.snapshots[2].evidence[0].log_ids, Ids{"L010"});

    const auto& run = state(s, "habits_state:morning_run");
    EXPECT_EQ(run.family, StateFamily::habit);
    ASSERT_EQ(run.snapshots.size(), 3u);
    ASSERT_EQ(run.snapshots[0].evidence.size(), 3u);  // in key order
    EXPECT_EQ(run.snapshots[0].evidence[1].path, "schedule.days_of_week");
    EXPECT_EQ(run.snapshots[0].evidence[1].log_ids, (Ids{"L001", "L003"}));
    EXPECT_EQ(run.snapshots[0].evidence[2].path, "timing.start_time");
    EXPECT_EQ(run.snapshots[0].evidence[2].log_ids, Ids{"L001"});
    EXPECT_EQ(run.snapshots[2].value["timing"]["start_time"], "07:15");
    ASSERT_EQ(run.snapshots[2].evidence.size(), 3u);  // per field under "fields"
    EXPECT_EQ(run.snapshots[2].evidence[2].log_ids, Ids{"L011"});

    // Absent at C1, present from C2 on.
    const auto& modality = state(s, "preferences_state:learning_modality");
    EXPECT_EQ(modality.family, StateFamily::preference);
    ASSERT_EQ(modality.snapshots.size(), 2u);
    EXPECT_EQ(modality.snapshots[0].checkpoint, "C2");
    EXPECT_EQ(modality.snapshots[0].evidence[0].log_ids, (Ids{"L007", "L008"}));

    // Numeric evidence ids name the log with that id, as a number or a string; an explicit null is a
    // snapshot of a state that no longer holds.
    const auto& diet = state(s, "preferences_state:diet");
    ASSERT_EQ(diet.snapshots.size(), 3u);
    EXPECT_EQ(diet.snapshots[0].evidence[0].log_ids, Ids{"2"});
    EXPECT_EQ(diet.snapshots[1].evidence[0].log_ids, Ids{"2"});
    EXPECT_TRUE(diet.snapshots[2].value.is_null());
    EXPECT_TRUE(diet.snapshots[2].evidence.empty());
}

TEST(DynamicImport, StateCompletionProbesFillTheTemplatesLeaves) {
    const Scenario& s = *release().s;
    ASSERT_EQ(s.probes.size(), 9u);
    const Probe& run = probe(s, "C1:state_completion:0");
    EXPECT_EQ(run.task, "state_completion");
    EXPECT_EQ(run.checkpoint, "C1");
    EXPECT_EQ(run.after_session, "day-2023-03-20");
    EXPECT_EQ(run.state_key, "habits_state:morning_run");
    EXPECT_EQ(run.question, "Complete the user's morning run routine.");
    EXPECT_EQ(run.state_change, "new");
    EXPECT_TRUE(run.conflicting.empty());
    EXPECT_EQ(run.answer_template["timing"]["start_time"], "<fill>");
    ASSERT_EQ(run.fields.size(), 3u);  // frequency_type is given, not asked
    const auto& days = field(run, "schedule.days_of_week");
    EXPECT_EQ(days.type, FieldType::weekday);
    EXPECT_EQ(days.role, FieldRole::core);
    EXPECT_EQ(days.expected, json::array({3}));
    EXPECT_EQ(days.evidence, (Ids{"L001", "L003"}));
    const auto& start = field(run, "timing.start_time");
    EXPECT_EQ(start.type, FieldType::time);
    EXPECT_EQ(start.expected, "06:30");
    EXPECT_EQ(start.evidence, Ids{"L001"});
    const auto& where = field(run, "location");
    EXPECT_EQ(where.type, FieldType::text);
    EXPECT_EQ(where.role, FieldRole::detail);  // from scoring_points
    EXPECT_EQ(run.meta["source_id"], "sc-1");
    EXPECT_EQ(run.meta["scoring_points"].size(), 3u);

    // A template that is one fill leaf: the whole value, path "$".
    const Probe& employer = probe(s, "C1:state_completion:1");
    ASSERT_EQ(employer.fields.size(), 1u);
    EXPECT_EQ(employer.fields[0].path, "$");
    EXPECT_EQ(employer.fields[0].expected, "Acme Robotics");
    EXPECT_EQ(employer.fields[0].evidence, Ids{"L004"});
    EXPECT_EQ(employer.answer, "Acme Robotics");
    EXPECT_EQ(employer.meta["source_id"], 7);

    const Probe& modality = probe(s, "C2:state_completion:0");
    EXPECT_EQ(modality.state_change, "new");
    EXPECT_EQ(modality.after_session, "day-2023-06-30");
    EXPECT_EQ(field(modality, "statement").evidence, (Ids{"L007", "L008"}));
    EXPECT_EQ(probe(s, "C2:state_completion:1").state_change, "retained");
}

TEST(DynamicImport, ChangedValuesAreUpdatedWithTheOldEvidenceConflicting) {
    const Scenario& s = *release().s;
    const Probe& employer = probe(s, "C3:state_completion:0");
    EXPECT_EQ(employer.state_change, "updated");
    EXPECT_EQ(employer.fields[0].expected, "Borealis Labs");
    EXPECT_EQ(employer.fields[0].evidence, Ids{"L010"});  // after C2's as_of, before C3's
    EXPECT_EQ(employer.conflicting, Ids{"L004"});
    const Probe& run = probe(s, "C3:state_completion:1");
    EXPECT_EQ(run.state_change, "updated");
    EXPECT_EQ(field(run, "timing.start_time").expected, "07:15");
    EXPECT_EQ(field(run, "location").expected, "Lakeside Trail");  // "<FILL>" is a fill leaf too
    EXPECT_EQ(field(run, "location").evidence, Ids{"L011"});
    EXPECT_EQ(run.conflicting, (Ids{"L001", "L003"}));  // C2's evidence, in key order of its fields
}

TEST(DynamicImport, ServiceProbesOfEveryKind) {
    const Scenario& s = *release().s;
    // A habit reminder (wrapped in "item"): every leaf of the habit's value is a field. Sub-packs are
    // read in key order: attribute_form (0) before habit_reminder (1).
    const Probe& reminder = probe(s, "C1:personalized_service:1");
    EXPECT_EQ(reminder.task, "personalized_service");
    EXPECT_EQ(reminder.state_key, "habits_state:morning_run");
    EXPECT_EQ(reminder.meta["service_kind"], "habit_reminder");
    EXPECT_EQ(reminder.question, "It is Thursday 06:00. The running shoes have not been laid out yet.\n\n"
                                 "Write one short reminder message to the user for this moment.");
    EXPECT_EQ(reminder.answer, "Your weekly Thursday run at Riverside Park starts at 06:30: time to get your shoes on.");
    EXPECT_TRUE(reminder.answer_template.is_null());
    ASSERT_EQ(reminder.fields.size(), 4u);
    EXPECT_EQ(field(reminder, "schedule.frequency_type").expected, "weekly");
    EXPECT_EQ(field(reminder, "schedule.days_of_week").type, FieldType::weekday);
    EXPECT_EQ(field(reminder, "timing.start_time").evidence, Ids{"L001"});

    // An attribute form: fill leaves only, expected from reference_output, anchors' roles.
    const Probe& form = probe(s, "C1:personalized_service:0");
    EXPECT_EQ(form.meta["service_kind"], "attribute_form");
    ASSERT_EQ(form.fields.size(), 1u);
    EXPECT_EQ(form.fields[0].path, "employment.company");
    EXPECT_EQ(form.fields[0].expected, "Acme Robotics");
    EXPECT_EQ(form.fields[0].role, FieldRole::core);
    EXPECT_EQ(form.fields[0].evidence, Ids{"L004"});
    EXPECT_EQ(form.expected["employment"]["country"], "Switzerland");

    // A preference form from a "*_pack" key of the checkpoint.
    const Probe& pref = probe(s, "C2:personalized_service:0");
    EXPECT_EQ(pref.meta["service_kind"], "preference_service");
    EXPECT_EQ(pref.state_change, "new");
    const auto& formats = field(pref, "preferred_formats");
    EXPECT_EQ(formats.type, FieldType::list);
    EXPECT_EQ(formats.role, FieldRole::core);
    EXPECT_EQ(formats.evidence, (Ids{"L007", "L008"}));
    EXPECT_EQ(field(pref, "avoid").role, FieldRole::detail);
    EXPECT_EQ(pref.meta["reference_anchors"].size(), 2u);
}

TEST(DynamicImport, FieldTypesFollowTheHeuristic) {
    // Each value through a one-field form: the type is the heuristic's.
    ScratchDir dir;
    json logs = json::array({{{"app_log_id", "a"}, {"timestamp", "2024-01-01 08:00:00"}, {"app_name", "x"}, {"api_name", "y"}}});
    json reference = {{"start_time", "6:45 pm"},       {"date", "2024-03-05"},  {"days_of_week", json::array({0, 2})},
                      {"count", 3},                     {"duration_minutes", 45}, {"items", json::array({"a", "b"})},
                      {"enabled", true},                {"day", "Tuesday"},      {"note", "quiet corner table"}};
    json templ = json::object();
    for (auto it = reference.begin(); it != reference.end(); ++it) templ[it.key()] = "<fill>";
    json packs = json::array({{{"checkpoint_id", "C1"}, {"as_of", "2024-02-01"},
                               {"expected_snapshot_state", {{"attributes_state:x", "v"}}},
                               {"state_observability", {{"attributes_state:x", {"a"}}}},
                               {"attribute_form_pack", json::array({{{"state_key", "attributes_state:x"},
                                                                     {"scenario", "A form."},
                                                                     {"output_template", templ},
                                                                     {"reference_output", reference}}})}}});
    std::vector<ImportNote> notes;
    auto s = dynamic::import_dynamicmem_user(packs, logs, "u", "task_packs.json", "app_log_large.json", notes);
    ASSERT_TRUE(s) << s.error().describe();
    ASSERT_EQ(s->probes.size(), 1u);
    const Probe& p = s->probes[0];
    EXPECT_EQ(field(p, "start_time").type, FieldType::time);
    EXPECT_EQ(field(p, "date").type, FieldType::date);
    EXPECT_EQ(field(p, "days_of_week").type, FieldType::weekday);
    EXPECT_EQ(field(p, "count").type, FieldType::number);
    EXPECT_EQ(field(p, "duration_minutes").type, FieldType::duration);
    EXPECT_EQ(field(p, "items").type, FieldType::list);
    EXPECT_EQ(field(p, "enabled").type, FieldType::enumeration);
    EXPECT_EQ(field(p, "enabled").options, (Ids{"true", "false"}));
    EXPECT_EQ(field(p, "day").type, FieldType::weekday);
    EXPECT_EQ(field(p, "note").type, FieldType::text);
    EXPECT_EQ(field(p, "note").evidence, Ids{"a"});  // no anchor: the state's whole evidence
    EXPECT_TRUE(violations_of(*s).empty()) << joined(violations_of(*s));
}

// ---------------------------------------------------------------------------------------------
// Folders of users and broken users.

TEST(DynamicImportDir, AFolderOfUsersGivesOneScenarioEach) {
    auto result = dynamic::import_dynamicmem(k_fixtures + "/two_users");
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_EQ(result->scenarios.size(), 2u);
    EXPECT_EQ(result->files_read, 4u);
    EXPECT_EQ(result->scenarios[0].id, "user-b");  // "user b": folder names are cleaned into ids
    EXPECT_EQ(result->scenarios[1].id, "user_a");
    EXPECT_EQ(notes_at(result->notes, "user b/task_packs.json", "", "not a valid id; imported as 'user-b'"), 1u)
        << describe(result->notes);
    for (const auto& s : result->scenarios) {
        EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
        ASSERT_EQ(s.probes.size(), 1u);
        ASSERT_EQ(s.probes[0].fields.size(), 1u);
        EXPECT_EQ(s.probes[0].fields[0].path, "employer");
        EXPECT_EQ(s.probes[0].fields[0].evidence, Ids{"1"});
        EXPECT_EQ(s.checkpoints[0].after_session, s.sessions.back().id);
    }
    EXPECT_EQ(result->scenarios[0].probes[0].fields[0].expected, "Contoso");
    EXPECT_EQ(result->scenarios[1].probes[0].fields[0].expected, "Northwind");
}

TEST(DynamicImportDir, BrokenUsersAreRefusedByFileAndTheOthersImport) {
    auto result = dynamic::import_dynamicmem(k_fixtures + "/broken");
    ASSERT_TRUE(result) << result.error().describe();
    const auto& notes = result->notes;
    ASSERT_EQ(result->scenarios.size(), 1u) << describe(notes);
    EXPECT_EQ(result->scenarios[0].id, "quirks");
    EXPECT_EQ(result->files_refused, 3u) << describe(notes);
    EXPECT_EQ(notes_at(notes, "bad_json/task_packs.json", "", "file refused: not valid JSON"), 1u) << describe(notes);
    EXPECT_EQ(notes_at(notes, "bad_log_json/app_log_large.json", "", "file refused: not valid JSON"), 1u) << describe(notes);
    EXPECT_EQ(notes_at(notes, "missing_file/task_packs.json", "", "file refused: missing"), 1u) << describe(notes);
}

TEST(DynamicImportDir, BadRowsAndEvidenceAreNotedWithFileAndPath) {
    auto result = dynamic::import_dynamicmem(k_fixtures + "/broken/quirks");
    ASSERT_TRUE(result) << result.error().describe();
    const auto& notes = result->notes;
    ASSERT_EQ(result->scenarios.size(), 1u);
    const Scenario& s = result->scenarios[0];
    EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
    // The bad timestamp, the duplicate id and the row without id are skipped; the rest import.
    EXPECT_EQ(notes_at(notes, "app_log_large.json", "[1].timestamp", "'2023-13-45 25:00:00'"), 1u) << describe(notes);
    EXPECT_EQ(notes_at(notes, "app_log_large.json", "[2].app_log_id", "duplicate app_log_id 'Q1'"), 1u);
    EXPECT_EQ(notes_at(notes, "app_log_large.json", "[3].app_log_id", "without an app_log_id"), 1u);
    EXPECT_EQ(memfail::data::message_count(s), 3u);
    EXPECT_EQ(message(s, "Q1")->app_log->request["time"], "08:00");  // the first Q1 is kept
    // Evidence naming no log and evidence after the checkpoint are dropped from the field.
    const std::string obs = "checkpoints[0].state_observability.habits_state:walk";
    EXPECT_EQ(notes_at(notes, "task_packs.json", obs, "'Q9' names no log"), 1u) << describe(notes);
    EXPECT_EQ(notes_at(notes, "task_packs.json", obs, "'Q4' logged after checkpoint 'C1'"), 1u) << describe(notes);
    ASSERT_EQ(s.probes.size(), 1u);
    ASSERT_EQ(s.probes[0].fields.size(), 1u);
    EXPECT_EQ(s.probes[0].fields[0].evidence, Ids{"Q1"});
    EXPECT_EQ(s.probes[0].fields[0].type, FieldType::time);
    // An unknown family prefix: left out of the profile, its item skipped, both noted.
    EXPECT_EQ(s.profile.size(), 1u);
    EXPECT_EQ(notes_at(notes, "task_packs.json", "checkpoints[0].expected_snapshot_state.moods_state:calm",
                       "no known family prefix"),
              1u);
    EXPECT_EQ(notes_at(notes, "task_packs.json", "checkpoints[0].state_completion_pack[1].state_key",
                       "family prefix is unknown"),
              1u) << describe(notes);
    // The later log stays in the history, after the checkpoint's session.
    EXPECT_EQ(s.checkpoints[0].after_session, "day-2023-02-10");
    EXPECT_EQ(s.sessions.back().id, "day-2023-05-01");
}

TEST(DynamicImportDir, NothingToImportIsAnErrorNamingTheFile) {
    auto missing = dynamic::import_dynamicmem(k_fixtures + "/no-such-folder");
    ASSERT_FALSE(missing);
    auto one = dynamic::import_dynamicmem(k_fixtures + "/broken/bad_json");
    ASSERT_FALSE(one);
    EXPECT_NE(one.error().message.find("bad_json/task_packs.json"), std::string::npos) << one.error().describe();
    ScratchDir empty;
    auto none = dynamic::import_dynamicmem(empty.path());
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("no DynamicMem user folder"), std::string::npos);
}

TEST(DynamicImportDir, StreamedAndParsedLogsImportAlike) {
    // The folder import streams the app log; the in-memory entry takes it parsed. Same scenario.
    std::vector<ImportNote> notes;
    auto s = dynamic::import_dynamicmem_user(read_json(k_user + "/task_packs.json"),
                                             read_json(k_user + "/app_log_large.json"), "user_001",
                                             k_user + "/task_packs.json", k_user + "/app_log_large.json", notes);
    ASSERT_TRUE(s) << s.error().describe();
    EXPECT_EQ(memfail::data::scenario_hash(*s), memfail::data::scenario_hash(*release().s));
    EXPECT_EQ(describe(notes), describe(release().result.notes));
}

TEST(DynamicImportDir, AppLogsKeyedByIdAndDeepFilesAreHandled) {
    ScratchDir dir;
    fs::create_directories(dir.file("u"));
    json logs = {{"L1", {{"timestamp", "2024-01-02 08:00:00"}, {"app_name", "a"}, {"api_name", "b"}}},
                 {"meta", {{"version", 1}}}};
    dir.write("u/app_log_large.json", logs.dump());
    dir.write("u/task_packs.json", read_text(k_fixtures + "/two_users/user_a/task_packs.json"));
    auto result = dynamic::import_dynamicmem(dir.file("u"));
    ASSERT_TRUE(result) << result.error().describe();
    const Scenario& s = result->scenarios[0];
    ASSERT_EQ(s.probes.size(), 1u);
    EXPECT_EQ(s.sessions[0].messages[0].id, "L1");
    EXPECT_EQ(s.meta["unmapped"]["app_log_large.json:meta"], (json{{"version", 1}}));
    // The task's evidence id 1 names no log here: dropped, noted.
    EXPECT_TRUE(s.probes[0].fields[0].evidence.empty());
    std::string deep = "[";
    for (int i = 0; i < 200; ++i) deep += "[";
    dir.write("u/app_log_large.json", deep);
    auto refused = dynamic::import_dynamicmem(dir.file("u"));
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("nesting deeper than 64"), std::string::npos) << refused.error().describe();
}

TEST(DynamicImportDir, ALargerLogIsStreamedIntoDaySessions) {
    // 6,000 entries over 120 days, written newest first: sorted, one session per day, every row kept.
    ScratchDir dir;
    fs::create_directories(dir.file("big"));
    std::string text = "{\"logs\": [";
    const int n = 6000;
    for (int i = n - 1; i >= 0; --i) {
        const auto date = memfail::dates::add_days(memfail::dates::Date{2024, 1, 1}, i / 50);
        const json row = {{"app_log_id", i}, {"timestamp", memfail::dates::format_date(date) + " 08:" + (i % 50 < 10 ? "0" : "") + std::to_string(i % 50) + ":00"},
                          {"app_name", "app"}, {"api_name", "call"}, {"request", {{"n", i}}}, {"response", "ok"}};
        text += row.dump() + (i ? "," : "");
    }
    text += "]}";
    dir.write("big/app_log_large.json", text);
    dir.write("big/task_packs.json", read_text(k_fixtures + "/two_users/user_a/task_packs.json"));
    auto result = dynamic::import_dynamicmem(dir.file("big"));
    ASSERT_TRUE(result) << result.error().describe();
    const Scenario& s = result->scenarios[0];
    EXPECT_EQ(memfail::data::message_count(s), static_cast<std::size_t>(n));
    EXPECT_EQ(s.sessions.size(), 120u);
    EXPECT_EQ(s.sessions[0].messages[0].id, "0");
    EXPECT_EQ(s.sessions.back().messages.back().id, std::to_string(n - 1));
    EXPECT_EQ(s.checkpoints[0].after_session, "day-2024-03-31");
    EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
}

// ---------------------------------------------------------------------------------------------
// Fuzzing: deterministic mutations of the release fixture. Whatever the input, the importer must not
// crash or throw, and must either return a scenario that passes validation (and survives the JSONL
// round trip) or refuse the user with a reason.

namespace fuzz {

// The shared mutations (suite_test_util.hpp) with this importer's replacement values.
json random_value(memfail::Rng& rng, const json& root) {
    static const std::vector<json> k_values = {
        nullptr, 0, -1, 1, 2, 7, 3.5, 1e300, -0.0, 18446744073709551615ull, true, false, "", " ", "x", "1", "2",
        "L001", "L004", "L010", "L012", "Q9", "<fill>", "<FILL>", "C1", "C3", "2023-02-30", "2023-06-30 12:00:00",
        "2023-13-01 00:00:00", "2024-01-01", "06:30", "habits_state:x", "attributes_state:employer", "weird_state:y",
        "core", "detail", "identity", "nonsense", "../etc/passwd", ".hidden", "\xC3\xA9t\xC3\xA9",
        std::string(300, 'a'), "{\"a\": 1}", "[1, 2", json::array(), json::object(), json::array({1, "L001", nullptr}),
        json{{"a", "<fill>"}}, json{{"log_ids", {"L001"}}}, json{{"fields", {{"location", {"L003"}}}}}};
    return memfail::testing::fuzz::random_value(rng, root, k_values);
}

void mutate(memfail::Rng& rng, json& root) { memfail::testing::fuzz::mutate(rng, root, random_value); }

using memfail::testing::fuzz::mutate_bytes;

}  // namespace fuzz

// Under a sanitizer (ten times slower, there to find memory errors, not to count) a quarter of the
// rounds: each still mutates the whole user.
#if defined(MEMFAIL_SANITIZED)
constexpr int k_dynamic_fuzz_rounds = 600;
#else
constexpr int k_dynamic_fuzz_rounds = 2500;
#endif

TEST(DynamicImportFuzz, MutatedJsonNeverCrashesAndImportsValidOrIsRefused) {
    memfail::Rng rng(20260616);
    // Both shapes: the release-like user and the one written as DynamicMem's code writes it.
    const std::string schema_user = std::string(MEMFAIL_TEST_FIXTURES) + "/dynamicmem/schema/001_user_001";
    const json packs[] = {read_json(k_user + "/task_packs.json"), read_json(schema_user + "/task_packs.json")};
    const json logs[] = {read_json(k_user + "/app_log_large.json"), read_json(schema_user + "/app_log_large.json")};
    std::size_t imported = 0, refused = 0;
    for (int round = 0; round < k_dynamic_fuzz_rounds; ++round) {
        json p = packs[round % 2], l = logs[round % 2];
        for (std::size_t n = 1 + rng.below(4); n > 0; --n) fuzz::mutate(rng, rng.chance(0.6) ? p : l);
        SCOPED_TRACE("round " + std::to_string(round));
        std::vector<ImportNote> notes;
        memfail::Result<Scenario> s = memfail::make_error(memfail::ErrorKind::internal, "not run");
        ASSERT_NO_THROW(s = dynamic::import_dynamicmem_user(p, l, "user_001", "task_packs.json", "app_log_large.json", notes));
        if (!s) {
            ++refused;
            EXPECT_FALSE(s.error().message.empty());
            EXPECT_EQ(s.error().message.find("please report this"), std::string::npos) << s.error().describe();
            EXPECT_EQ(s.error().message.find("internal error"), std::string::npos) << s.error().describe();
            EXPECT_TRUE(notes.empty());
            continue;
        }
        ++imported;
        const auto violations = violations_of(*s);
        ASSERT_TRUE(violations.empty()) << joined(violations) << "\n" << p.dump().substr(0, 600);
        for (const auto& n : notes) {
            ASSERT_TRUE(n.file == "task_packs.json" || n.file == "app_log_large.json") << n.file;
            ASSERT_NO_THROW((void)json({n.file, n.json_path, n.message}).dump());
        }
        json written;
        ASSERT_NO_THROW(written = memfail::data::to_json(*s));
        auto back = memfail::data::scenario_from_json(json::parse(written.dump()));
        ASSERT_TRUE(back) << back.error().describe();
    }
    EXPECT_GT(imported, static_cast<std::size_t>(k_dynamic_fuzz_rounds) * 12 / 25);
    EXPECT_GT(refused, static_cast<std::size_t>(k_dynamic_fuzz_rounds) / 125);
}

TEST(DynamicImportFuzz, MutatedBytesAreImportedOrRefusedByFile) {
    memfail::Rng rng(1616);
    ScratchDir dir;
    fs::create_directories(dir.file("user"));
    const std::string packs = read_text(k_user + "/task_packs.json");
    const std::string logs = read_text(k_user + "/app_log_large.json");
    std::size_t imported = 0, refused = 0;
    for (int round = 0; round < 300; ++round) {
        std::string p = packs, l = logs;
        for (std::size_t n = 1 + rng.below(3); n > 0; --n) fuzz::mutate_bytes(rng, round % 2 ? p : l);
        dir.write("user/task_packs.json", p);
        dir.write("user/app_log_large.json", l);
        SCOPED_TRACE("round " + std::to_string(round));
        memfail::Result<ImportResult> result = memfail::make_error(memfail::ErrorKind::internal, "not run");
        ASSERT_NO_THROW(result = dynamic::import_dynamicmem(dir.file("user")));
        if (!result) {
            ++refused;
            const std::string& m = result.error().message;
            EXPECT_TRUE(m.find("task_packs.json") != std::string::npos || m.find("app_log_large.json") != std::string::npos)
                << m;
            EXPECT_EQ(m.find("please report this"), std::string::npos) << m;
            EXPECT_NO_THROW((void)json(m).dump());
            continue;
        }
        ++imported;
        for (const auto& n : result->notes) EXPECT_NO_THROW((void)json({n.file, n.json_path, n.message}).dump());
        ASSERT_EQ(result->scenarios.size(), 1u);
        EXPECT_TRUE(violations_of(result->scenarios[0]).empty()) << joined(violations_of(result->scenarios[0]));
    }
    // Most byte edits break the JSON; both outcomes are still exercised.
    EXPECT_GT(imported, 10u);
    EXPECT_GT(refused, 100u);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// A user written the way DynamicMem's own code writes one (fixtures/dynamicmem/schema: its
// checkpoint builder's as_of objects, nested and validated snapshots, observability objects, the
// State Completion pack under "keys" with "<fill the blank>" templates and spv4 scoring points, the
// Personalized Service items under rq3_apply_service_qa, a legacy change_tracking_pack, and app logs
// {"app_logs": [...]} with golden_evidence and the generator's bookkeeping).

namespace schema {

const std::string k_schema_user = std::string(MEMFAIL_TEST_FIXTURES) + "/dynamicmem/schema/001_user_001";

const memfail::data::ProfileState& state_of(const Scenario& s, const std::string& key) {
    for (const auto& st : s.profile)
        if (st.key == key) return st;
    ADD_FAILURE() << "no state '" << key << "'";
    static const memfail::data::ProfileState none;
    return none;
}

std::vector<std::string> evidence_at(const memfail::data::ProfileState& st, const std::string& checkpoint) {
    for (const auto& sn : st.snapshots)
        if (sn.checkpoint == checkpoint) {
            std::vector<std::string> out;
            for (const auto& fe : sn.evidence) out.insert(out.end(), fe.log_ids.begin(), fe.log_ids.end());
            return out;
        }
    return {};
}

TEST(DynamicImportSchema, AUserWrittenByDynamicMemsCodeImportsWithProbesProfileAndEvidence) {
    auto result = dynamic::import_dynamicmem(k_schema_user);
    ASSERT_TRUE(result) << result.error().describe();
    ASSERT_EQ(result->scenarios.size(), 1u);
    const Scenario& s = result->scenarios[0];
    EXPECT_TRUE(violations_of(s).empty()) << joined(violations_of(s));
    std::vector<memfail::data::Violation> suite_rules;
    dynamic::validate_dynamic(s, 0, suite_rules);
    EXPECT_TRUE(suite_rules.empty());
    // as_of objects: their timestamp; the builder's header kept aside.
    ASSERT_EQ(s.checkpoints.size(), 2u);
    EXPECT_EQ(s.checkpoints[0].id, "cal_quarterly_001");
    EXPECT_EQ(s.checkpoints[0].as_of, "2024-03-31T18:00:00Z");
    EXPECT_EQ(s.checkpoints[1].after_session, "day-2024-06-30");
    EXPECT_EQ(s.meta.at("dynamicmem").at("task_contract_version"), "taskabc_v2");
    // Nested snapshots flattened; the validated one is the gold (no schedule_dates), a {from, to}
    // change read as its `to`.
    const auto& walk = state_of(s, "habits_state:weekend_walk");
    ASSERT_EQ(walk.snapshots.size(), 2u);
    EXPECT_FALSE(walk.snapshots[0].value.contains("schedule_dates"));
    EXPECT_EQ(walk.snapshots[1].value.at("timing").at("start_time"), "07:30");
    const auto& job = state_of(s, "user_attributes_state:employer");
    EXPECT_EQ(job.snapshots[1].value.at("organization"), "Juniper Labs");
    EXPECT_EQ(job.family, memfail::data::StateFamily::attribute);
    // Observability objects: evidence_app_log_ids, less the logs whose golden_evidence states an
    // earlier value (they become the updated probes' conflicting logs).
    EXPECT_EQ(evidence_at(walk, "cal_quarterly_001"), (std::vector<std::string>{"log_00001", "log_00002", "log_00003"}));
    EXPECT_EQ(evidence_at(walk, "cal_quarterly_002"), (std::vector<std::string>{"log_00011", "log_00012", "log_00013"}));
    const auto& sc = probe(s, "cal_quarterly_002:state_completion:0");
    EXPECT_EQ(sc.state_key, "habits_state:weekend_walk");
    EXPECT_EQ(sc.state_change, "updated");
    EXPECT_EQ(sc.conflicting, (std::vector<std::string>{"log_00001", "log_00002", "log_00003"}));
    // State Completion under "keys": "<fill the blank>" leaves, scoring points' dotted list paths.
    std::set<std::string> paths;
    for (const auto& f : sc.fields) paths.insert(f.path);
    EXPECT_TRUE(paths.count("schedule.days_of_week[0]")) << joined(std::vector<std::string>(paths.begin(), paths.end()));
    EXPECT_TRUE(paths.count("timing.start_time"));
    // Personalized Service from rq3_apply_service_qa: every family, roles from reference_anchors.
    std::map<std::string, int> families;
    for (const auto& p : s.probes)
        if (p.task == "personalized_service") ++families[p.meta.value("service_kind", "")];
    EXPECT_EQ(families, (std::map<std::string, int>{{"action_configuration", 2},
                                                      {"information_request_construction", 2},
                                                      {"user_communication", 2}}));
    const auto& order = probe(s, "cal_quarterly_001:personalized_service:1");
    ASSERT_EQ(order.fields.size(), 2u);
    for (const auto& f : order.fields)
        EXPECT_EQ(f.role, f.path == "order_filters.extras_to_avoid" ? memfail::data::FieldRole::detail
                                                                    : memfail::data::FieldRole::core)
            << f.path;
    EXPECT_TRUE(probe(s, "cal_quarterly_001:personalized_service:0").meta.contains("answer_scoring_points"));
    EXPECT_EQ(s.probes.size(), 12u);
    // Notes: the legacy pack and the builder's filtered keys; nothing the builder writes is "unknown".
    const auto& notes = result->notes;
    EXPECT_EQ(notes_at(notes, "task_packs.json", "checkpoints[1].change_tracking_pack", "not mapped"), 1u) << describe(notes);
    EXPECT_EQ(notes_at(notes, "task_packs.json", "checkpoints[0].state_completion_pack.filtered_keys", "filtered out"), 1u);
    for (const auto& n : notes) {
        EXPECT_EQ(n.message.find("unknown"), std::string::npos) << n.json_path << ": " << n.message;
        if (n.json_path.find("change_tracking_pack") == std::string::npos) {
            EXPECT_EQ(n.message.find("not mapped"), std::string::npos) << n.json_path << ": " << n.message;
        }
    }
}

// The release's logs may carry no golden_evidence: the evidence is then DynamicMem's cumulative list
// as it stands (the benchmark's own gold), said in a note, and nothing is set aside.
TEST(DynamicImportSchema, WithoutGoldenEvidenceTheCumulativeListIsTheEvidenceAndSaysSo) {
    memfail::testing::ScratchDir dir;
    std::filesystem::create_directories(dir.file("001_user_001"));
    json logs = read_json(k_schema_user + "/app_log_large.json");
    for (auto& l : logs["app_logs"]) {
        l.erase("golden_evidence");
        l.erase("metadata");
    }
    dir.write("001_user_001/app_log_large.json", logs.dump());
    dir.write("001_user_001/task_packs.json", read_text(k_schema_user + "/task_packs.json"));
    auto result = dynamic::import_dynamicmem(dir.file("001_user_001"));
    ASSERT_TRUE(result) << result.error().describe();
    const Scenario& s = result->scenarios.at(0);
    const auto& walk = state_of(s, "habits_state:weekend_walk");
    EXPECT_EQ(evidence_at(walk, "cal_quarterly_002").size(), 6u);
    EXPECT_GE(notes_at(result->notes, "task_packs.json", "checkpoints[1].state_observability.habits_state:weekend_walk",
                       "carry no golden_evidence"),
              1u)
        << describe(result->notes);
}

}  // namespace schema

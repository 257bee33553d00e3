// SPDX-License-Identifier: MIT
// The one data model every suite uses: scenarios of sessions and probes with structured evidence.
// Its JSONL form is specified in docs/DATASETS.md; keep the two in step. "memfail/1" is the original
// format; "memfail/2" adds the write-integrity ledger (facts whose values change) and the probe fields
// that grade it. A scenario that uses none of them is still written as "memfail/1", so its hash (and
// every run recorded against it) is unchanged.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace memfail::data {

inline constexpr const char* k_format = "memfail/1";
inline constexpr const char* k_format_v2 = "memfail/2";

// One request/response an app logged (memfail/2, the dynamic suite): a message whose role is "app".
struct AppLog {
    std::string timestamp;  // when it was logged, "YYYY-MM-DD HH:MM:SS" (within its session's day)
    std::string app;   // "fitness_tracker", "food_delivery", ...
    std::string api;   // "log_workout"
    nlohmann::json request = nlohmann::json::object();
    nlohmann::json response = nlohmann::json::object();
    // Surface strings this log carries that evidence profile fields ("Riverside Park", "06:30"):
    // a memory without provenance holds the log's evidence when its text holds every one of them
    // (normalised, at word boundaries). Empty: only provenance can tell whether a memory holds it.
    std::vector<std::string> details;
};

struct Message {
    Message() = default;
    Message(std::string id_, std::string role_, std::string content_, std::optional<AppLog> app_log_ = std::nullopt)
        : id(std::move(id_)), role(std::move(role_)), content(std::move(content_)), app_log(std::move(app_log_)) {}

    std::string id;       // stable and unique across the whole scenario: the provenance handle
    std::string role;     // "user", "assistant", "system", or "app" (an app log: see app_log)
    std::string content;  // for an app log, its text rendering (render_app_log unless the file says otherwise)
    std::optional<AppLog> app_log;
};

// The text an app log is stored as by systems that take text: one line naming the time, the app and
// the API, then the request and the response as compact JSON. Deterministic: a file may omit a
// message's content when it is this rendering.
std::string render_app_log(const AppLog& log);

struct Session {
    std::string id;
    std::string timestamp;  // ISO 8601, e.g. "2026-03-01T09:00:00Z"
    std::vector<Message> messages;
};

// What a key detail is to its fact (docs/TAXONOMY.md). Identity details say who or what the fact
// is about and the thing stated (entity, behaviour, preference, a chain's anchors): a memory that
// holds none of the fact's content holds nothing of it. Qualifier details say how the thing holds
// (condition, exclusivity, polarity, time, quantity): losing one is a summary error.
enum class DetailRole { identity, qualifier };
const char* detail_role_name(DetailRole role);
std::optional<DetailRole> parse_detail_role(const std::string& name);
// The role a detail has when its file does not say: "entity", "behaviour", "preference", "detail"
// and "anchor_*" are identity; everything else ("condition", "link", "exclusivity", ...) qualifier.
DetailRole default_detail_role(const std::string& name);

// One literal detail a memory must keep for a fact to count as faithfully stored, e.g. the
// condition of a conditional rule. `variants` are accepted phrasings; the first is canonical.
// Matching is on normalised text at word boundaries (text::normalize).
struct KeyDetail {
    KeyDetail() = default;
    KeyDetail(std::string name_, std::vector<std::string> variants_, std::optional<DetailRole> role_ = std::nullopt)
        : name(std::move(name_)), variants(std::move(variants_)), role(role_) {}

    std::string name;  // "entity", "behaviour", "condition", "preference", "anchor_1", ...
    std::vector<std::string> variants;
    std::optional<DetailRole> role;  // absent: default_detail_role(name)
    DetailRole effective_role() const { return role ? *role : default_detail_role(name); }
};

// One fact a probe needs, with where it was stated and what must survive summarisation.
struct EvidenceFact {
    std::string id;
    std::string text;                      // the fact stated canonically, holding every key detail
    std::vector<std::string> message_ids;  // messages that state it (several for a split rule)
    std::vector<KeyDetail> key_details;
    // The sentences of the cited messages that state the fact, verbatim. A set of memories that
    // holds every one of them (after normalisation) kept the fact faithfully, whatever its details.
    // Optional: without them only the key details are checked.
    std::vector<std::string> statements;
    // False when the fact's key details could not all be derived (an imported row whose condition
    // is not a separable phrase): the listed details are still checked, but keeping them all does
    // not show the fact was kept, and the report says the summary stage is incomplete.
    bool details_complete = true;
};

// ---- The write-integrity ledger (format memfail/2) ------------------------------------------------

// What kind of memory a ledger event is (WRIT's memory types).
enum class MemoryType { explicit_fact, mutable_fact, latent, entity, work_state, non_memory };
const char* memory_type_name(MemoryType type);  // "explicit", "mutable", "latent", ...
std::optional<MemoryType> parse_memory_type(const std::string& name);

// Who a value comes from, strongest first. A value the user stated outranks one an assistant
// summarised: holding the latter as current over the former is an authority violation.
enum class Authority { user_stated, user_confirmed, agreed_upon, agent_extracted, ai_summarized };
const char* authority_name(Authority authority);
std::optional<Authority> parse_authority(const std::string& name);

// One value a ledger event had, from `as_of` on, as stated by message `message_id`.
struct ValueRecord {
    nlohmann::json value;      // any JSON: a string, a number, an object of fields
    std::string as_of;         // ISO 8601: from when the value holds
    std::string message_id;    // the message that states it; empty when no message states it verbatim
    std::string session_id;    // the session it was stated in; empty: the session of message_id
    Authority authority = Authority::user_stated;
    // How the value is written in messages and memories ("$5,000" for 5000), matched on normalised
    // text at word boundaries. Empty: derived from `value` (value_mentions()).
    std::vector<std::string> mentions;
};

// A fact of a scenario with its whole life: every value it had, when it changed, whether it was
// retracted, whether it should have been kept at all.
struct LedgerEvent {
    std::string id;
    MemoryType type = MemoryType::explicit_fact;
    nlohmann::json value;              // the value at the end of the scenario (the last of history)
    std::vector<ValueRecord> history;  // every value in time order; non-empty
    std::string introduced_in;         // session ids
    std::string updated_in;            // empty: never updated
    std::string retracted_in;          // empty: never retracted
    std::string retracted_by;          // message id of the retraction; empty when not retracted
    bool should_persist = true;
    // A one-off item (should_persist false) must be gone once this session is stored; empty: the
    // session that introduced it.
    std::string expires_after;
    std::vector<std::string> aliases;  // other names of the same entity ("Bob", "Robert Lee")
    // Values that must not be taken for this fact's: near-duplicates of another fact, an assistant's
    // summary that contradicts the user (authority ai_summarized), a conflicting update that was
    // withdrawn. Each cites the message that says it.
    std::vector<ValueRecord> distractors;
    std::string description;
};

// Surface forms of a value record: its own mentions, else the value itself (strings as they are,
// numbers in plain and thousands-separated form, objects by their leaf values).
std::vector<std::string> value_mentions(const ValueRecord& record);

// How a probe's answer is graded (a rubric kind). Every kind is graded as it says
// (grade/rubric.hpp); only `semantic` needs the judge.
enum class RubricKind {
    exact,         // the expected value, normalised, is what the answer states
    structured,    // required elements, each present; partial credit by fraction
    contains,      // every expected term present
    numeric,       // the number (any format: "$5,000", "5000", "5k") equals the expected within tolerance
    address,       // the address, normalised ("Street" = "St", state names = codes), is present
    multi_field,   // every field's value present
    entity_count,  // the number of distinct entities named equals the expected (aliases merged)
    constraint,    // must contain every one of must_contain, none of must_not_contain
    abstention,    // declines; naming a rejected value is not declining
    semantic,      // meaning must be judged: the judge decides, offline it is unverified
};
const char* rubric_kind_name(RubricKind kind);
std::optional<RubricKind> parse_rubric_kind(const std::string& name);

struct Rubric {
    RubricKind kind = RubricKind::exact;
    std::string method;  // the source's own name for it ("entity_count_and_org_merge"), for reports
    std::vector<std::string> required;         // structured, contains: elements that must appear
    double pass_fraction = 1.0;                // structured: passes when at least this share appears
    std::vector<std::string> must_contain;     // constraint
    std::vector<std::string> must_not_contain; // constraint
    std::vector<std::string> forbidden;        // any kind: an answer naming one of these fails
    std::vector<std::string> reject;           // abstention: naming one of these is answering
    std::vector<std::string> accept_patterns;  // abstention: phrasings that count as declining
    std::optional<double> number;              // numeric
    double tolerance = 0;                      // numeric: absolute
    std::optional<int> expected_count;         // entity_count
    std::vector<std::vector<std::string>> groups;  // entity_count: the names of each entity
    nlohmann::json fields = nlohmann::json::object();  // multi_field: field -> expected value
    std::vector<std::string> keywords, criteria, expected_terms;  // kept for the judge and reports
    std::string notes;
};

// A probe about a past date ("what was my address in March").
struct TemporalQuery {
    std::string as_of;  // ISO 8601; empty: now
    bool expect_current = true;
};

enum class ProbeKind { yes_no, list, open, mcq, abstain };
const char* probe_kind_name(ProbeKind kind);
std::optional<ProbeKind> parse_probe_kind(const std::string& name);

// ---- The long-horizon profile (memfail/2, the dynamic suite) ---------------------------------------

// The three families of profile state (DynamicMem): what the user has or is (changes discretely),
// what they routinely do (schedules, times, places), what they prefer (drifts slowly, never stated).
enum class StateFamily { attribute, habit, preference };
const char* state_family_name(StateFamily family);
std::optional<StateFamily> parse_state_family(const std::string& name);

// How a leaf field of a task's output is graded: typed fields by rule after normalisation, `text`
// by the judge (core_correct, detail_quality).
enum class FieldType { date, weekday, time, duration, number, enumeration, list, text };
const char* field_type_name(FieldType type);
std::optional<FieldType> parse_field_type(const std::string& name);

// A field's part in its item: `identity` says which entity or routine it is (a wrong identity gates
// the whole item to 0 in service tasks), `core` the value asked for, `detail` precision beyond it.
enum class FieldRole { identity, core, detail };
const char* field_role_name(FieldRole role);
std::optional<FieldRole> parse_field_role(const std::string& name);

// The logs that evidence one leaf field of a state's value ("schedule.days_of_week").
struct FieldEvidence {
    std::string path;
    std::vector<std::string> log_ids;  // message ids of app logs
};

// A state's value at one checkpoint, with the logs up to that checkpoint that evidence each field.
struct StateSnapshot {
    std::string checkpoint;  // "C1".."C5"
    nlohmann::json value;    // null: the state does not hold at this checkpoint (not yet, or dropped)
    std::vector<FieldEvidence> evidence;
};

// One profile state key ("habits_state:morning_run") over the whole history.
struct ProfileState {
    std::string key;
    StateFamily family = StateFamily::attribute;
    std::string domain;  // one of six life domains ("health_and_self_care", ...)
    std::vector<StateSnapshot> snapshots;  // one per checkpoint where it is known, in checkpoint order
    std::vector<std::string> competing;    // keys a system may confuse it with (same kind of thing)
};

// A checkpoint: the system has seen exactly the logs up to `as_of`, i.e. up to session `after_session`.
struct Checkpoint {
    std::string id;       // "C1"
    std::string as_of;    // ISO 8601
    std::string after_session;
};

// One leaf field a task's output must fill, with what grades it.
struct ProbeField {
    std::string path;                 // JSON path in the template: "schedule.start_time", "items[0]"
    FieldType type = FieldType::text;
    FieldRole role = FieldRole::core;
    nlohmann::json expected;          // the reference leaf value
    std::vector<std::string> options;  // enumeration: the allowed values
    std::vector<std::string> evidence;  // app-log message ids that evidence this field (gold evidence)
};

struct Probe {
    std::string id;
    std::string after_session;  // the checkpoint: asked once this session is stored
    std::string question;
    ProbeKind kind = ProbeKind::open;
    std::vector<std::string> choices;  // mcq only: option texts in letter order A, B, ...
    std::string correct_choice;        // mcq only: "A".."E"
    std::string answer;                // reference answer
    std::vector<EvidenceFact> evidence;  // empty for abstain probes: nothing to find
    nlohmann::json meta = nlohmann::json::object();  // dataset-specific labels (condition_met, hops)

    // memfail/2: write-integrity fields (all optional).
    std::vector<std::string> capabilities;   // "retrieval", "update_tracking", "temporal_replay", ...
    std::optional<TemporalQuery> temporal;
    bool should_abstain = false;
    std::optional<Rubric> rubric;
    std::vector<std::string> targets;        // ledger event ids the probe is about
    nlohmann::json expected;                 // the expected value (any JSON); null: see `answer`
    std::string expected_source;             // message id the expected value was stated in
    std::vector<std::string> failure_modes;  // labels the source gives the probe

    // memfail/2, the dynamic suite: a task over one profile state key at one checkpoint.
    std::string task;        // "state_completion" or "personalized_service"; empty: not a profile task
    std::string state_key;
    std::string checkpoint;  // "C1".."C5"
    nlohmann::json answer_template;   // the JSON to fill: every leaf to fill is the string "<fill>"
    std::vector<ProbeField> fields;   // the leaves graded, each with its gold evidence
    // Logs of a value the key no longer has, or of a competing key: retrieving them beside or
    // instead of the current evidence is `conflated`.
    std::vector<std::string> conflicting;
    std::string state_change;  // "new" (first known here), "updated" (changed since the previous
                               // checkpoint), "retained" (the same since first known), "settled"
                               // (as at the previous checkpoint, after an earlier change); or empty

    bool uses_v2() const;
};

struct Scenario {
    std::string format = k_format;
    std::string id;
    std::string suite;    // "memfail", "writ", "dynamic"
    std::string dataset;  // "conditional_facts_easy", ...
    std::vector<Session> sessions;
    std::vector<Probe> probes;
    nlohmann::json meta = nlohmann::json::object();  // generator, seed, version, dedup report
    std::vector<LedgerEvent> ledger;  // memfail/2: the facts that change, with their histories
    std::vector<Checkpoint> checkpoints;  // memfail/2 (dynamic): in time order
    std::vector<ProfileState> profile;    // memfail/2 (dynamic): the ground-truth profile

    bool uses_v2() const;
    const LedgerEvent* event(const std::string& id) const;
};

// Maps message ids to their messages (and sessions) for one scenario. Pointers stay valid while the
// scenario is neither modified nor moved.
class MessageIndex {
public:
    explicit MessageIndex(const Scenario& scenario);
    const Message* message(const std::string& id) const;
    const Session* session_of(const std::string& message_id) const;
    // Position of a session in scenario order, or npos.
    std::size_t session_position(const std::string& session_id) const;

private:
    std::map<std::string, std::pair<const Message*, const Session*>> m_messages;
    std::map<std::string, std::size_t> m_session_positions;
};

// All messages of a scenario in order.
std::size_t message_count(const Scenario& scenario);

}  // namespace memfail::data

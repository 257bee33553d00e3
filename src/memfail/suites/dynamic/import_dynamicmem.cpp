// SPDX-License-Identifier: MIT
// DynamicMem user folders -> memfail/2 scenarios of the dynamic suite. The mapping:
//
// - One scenario per user (format memfail/2, suite and dataset "dynamic"); its id is the folder
//   name made a valid id (ids from data never become paths). A folder of user folders gives one
//   scenario per user, in name order; a duplicate id after cleaning gets a suffix (noted).
// - app_log_large.json (a list of log entries, or an object holding the list under "logs",
//   "app_logs", ...; entries keyed by their id are taken too) is streamed entry by entry: the file
//   may be hundreds of MB and its tree is never built. Each entry becomes a message of role "app"
//   whose id is its app_log_id (cleaned), with app_log {timestamp, app, api, request, response,
//   details} and content render_app_log(). A request or response given as a string holding JSON is
//   parsed; any other string stays a string. golden_evidence is kept verbatim, without notes, in
//   meta.golden_evidence (message id -> value); those of its strings that the log's own text holds
//   (surface strings such as "Riverside Park") also become the log's `details`.
// - Logs are sorted by timestamp (ties keep file order) and laid on one session per calendar day,
//   "day-YYYY-MM-DD". A checkpoint whose as_of falls inside a day splits that day in two sessions
//   ("day-YYYY-MM-DD" and "day-YYYY-MM-DD.2", noted) so a checkpoint is always a session boundary
//   and no probe can see a log after its as_of.
// - task_packs.json's checkpoints (a list, an object keyed by checkpoint id, or either under
//   "checkpoints") become scenario checkpoints in time order; as_of is written as ISO 8601 to the
//   second, a bare date meaning the end of that day. after_session is the last session stored by
//   as_of; a checkpoint before every log is dropped (noted).
// - expected_snapshot_state gives the profile: one ProfileState per state key, with one snapshot
//   per checkpoint whose snapshot names the key (an explicit null is a snapshot of a state that
//   does not hold). The family comes from the key's prefix ("attributes_state",
//   "user_attributes_state" -> attribute, "habits_state" -> habit, "preferences_state" ->
//   preference); a key with any other prefix is left out, noted. state_observability gives each
//   snapshot's evidence: a list of log ids is evidence of the whole value (path "$"), an object of
//   field path -> ids is evidence per field. An id naming no log, or a log after the checkpoint's
//   as_of, is dropped from its field (noted): evidence never points past its checkpoint.
// - Every state_completion_pack item becomes a probe (task "state_completion") whose fields are
//   the template's fill leaves ("<fill>", "<blank>", "[fill]", ...: see is_fill) with the expected
//   value taken from the snapshot at the same place. Every service item (personalized_service_pack,
//   or any other "*_pack" of the checkpoint) becomes a probe (task "personalized_service"): an item
//   with an output_template is a form (preference or attribute service) whose fields are its fill
//   leaves, expected from reference_output, role and state field from reference_anchors; an item
//   with only a reference_answer is a habit reminder whose fields are the leaves of the state's
//   value (a correct reminder uses all of them).
// - A field's type is a heuristic over its name and expected value (field_type below): a
//   days_of_week-like name -> weekday; a list -> list; a boolean -> enumeration (true/false); a
//   number -> number (duration when its name says minutes/hours/duration); a string "HH:MM" ->
//   time; a date or date-time -> date; a weekday name -> weekday; anything else -> text (the judge).
//   Its role is the one scoring_points or reference_anchors give for its path, else core.
// - state_change compares the key's value with its snapshots before: no value at the previous
//   checkpoint -> "new", a different one -> "updated", the same as every earlier value ->
//   "retained", the same as the previous after an earlier change -> "settled". conflicting lists the evidence logs of
//   the most recent earlier value that differs from the current one, less the current evidence.
//
// - DynamicMem's own files (docs/DYNAMIC.md has the table): as_of objects (their timestamp), the
//   header beside the checkpoints (meta.dynamicmem), validated snapshots nested by category (the
//   current value as its Task A reads it), observability objects (evidence_app_log_ids, less the
//   logs whose golden_evidence states a superseded value), packs under "keys", service items under
//   rq3_apply_service_qa, spv4 scoring points, the legacy change_tracking_pack noted.
//
// JSON objects are read in key order (nlohmann::json sorts them): observability paths, sub-packs
// and probes numbered within a checkpoint follow it, whatever order the file wrote.
//
// Everything else found is noted with the file and JSON path; unknown keys are kept verbatim in
// meta.unmapped (a checkpoint's, the files' top level) or the probe's meta.unmapped (an item's); unknown keys
// of log entries are counted, one note per key, not kept (one per row would double a large file).
#include <memfail/suites/dynamic/import_dynamicmem.hpp>

#include <memfail/core/dates.hpp>
#include <memfail/core/hash.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/import_json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

namespace memfail::suites::dynamic {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// task_packs.json is parsed whole: a user's packs are megabytes. The app log is streamed, so its
// cap only bounds what one user may cost; the row cap bounds the scenario built from it.
constexpr std::uintmax_t k_max_task_bytes = 256ull * 1024 * 1024;
constexpr std::uintmax_t k_max_log_bytes = 4ull * 1024 * 1024 * 1024;
constexpr std::size_t k_max_logs = 2'000'000;
// Notes of one kind (a bad row, a dropped evidence id) after this many are counted, not listed:
// a release with a systematic quirk must not bury the other notes.
constexpr std::size_t k_max_notes_per_kind = 20;
constexpr std::size_t k_max_details = 16;

constexpr const char* k_task_file = "task_packs.json";
constexpr const char* k_log_file = "app_log_large.json";

// ---------------------------------------------------------------------------------------------
// Small helpers over JSON values.

using import_json::as_text;
using import_json::at;
using import_json::compact;
using import_json::deeper_than;
using import_json::parser_message;
using import_json::shown;
using import_json::type_name;

// The first of `keys` that `obj` holds with a non-null value, with the key found.
std::pair<const json*, std::string_view> first_member(const json& obj, std::initializer_list<std::string_view> keys) {
    if (!obj.is_object()) return {nullptr, {}};
    for (const auto key : keys) {
        const auto it = obj.find(key);
        if (it != obj.end() && !it->is_null()) return {&*it, key};
    }
    return {nullptr, {}};
}
const json* member(const json& obj, std::initializer_list<std::string_view> keys) { return first_member(obj, keys).first; }

// A non-empty string member, trimmed.
std::optional<std::string> string_member(const json& obj, std::initializer_list<std::string_view> keys) {
    const json* v = member(obj, keys);
    if (!v || !v->is_string()) return std::nullopt;
    std::string s(text::trim(v->get_ref<const std::string&>()));
    if (s.empty()) return std::nullopt;
    return s;
}

using data::clean_id;

// A log id as the files write it: a string (trimmed) or a whole number (its digits), so "17" and 17
// name the same log. Anything else names none.
std::optional<std::string> id_text(const json& v) {
    if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15)
            return std::to_string(static_cast<long long>(d));
        return std::nullopt;
    }
    if (v.is_string()) {
        std::string s(text::trim(v.get_ref<const std::string&>()));
        if (!s.empty()) return s;
    }
    return std::nullopt;
}



// ---------------------------------------------------------------------------------------------
// Notes of one file, with repetitive kinds capped.

class FileNotes {
public:
    FileNotes(std::string file, std::vector<ImportNote>& out) : m_file(std::move(file)), m_out(out) {}
    FileNotes(const FileNotes&) = delete;
    FileNotes& operator=(const FileNotes&) = delete;

    const std::string& file() const { return m_file; }
    void note(const std::string& path, std::string message) { m_out.push_back({m_file, path, std::move(message)}); }
    // A note of a kind that may repeat once per row: the first k_max_notes_per_kind are listed.
    void note_capped(const std::string& kind, const std::string& path, std::string message) {
        if (++m_counts[kind] <= k_max_notes_per_kind) note(path, std::move(message));
    }
    // Says how many notes of each capped kind were not listed; call once, at the end.
    void finish() {
        for (const auto& [kind, count] : m_counts)
            if (count > k_max_notes_per_kind)
                note("", std::to_string(count - k_max_notes_per_kind) + " more notes like '" + kind +
                             "' not listed (" + std::to_string(count) + " in all)");
        m_counts.clear();
    }
    void keep(const std::string& path, const json& value, const std::string& what) {
        m_unmapped[path] = value;
        note(path, what + "; kept verbatim in meta.unmapped");
    }
    const json& unmapped() const { return m_unmapped; }

private:
    std::string m_file;
    std::vector<ImportNote>& m_out;
    std::map<std::string, std::size_t> m_counts;
    json m_unmapped = json::object();
};

// ---------------------------------------------------------------------------------------------
// The app log, row by row.

struct RawLog {
    std::string raw_id;  // as the file names it (id_text)
    std::string id;      // the message id
    dates::DateTime time;
    std::int64_t seconds = 0;
    std::size_t order = 0;  // position in the file, for ties
    data::AppLog log;
    json golden;  // golden_evidence as found; null when absent
};

// A request or response: JSON written as a string is parsed (objects and lists only: "42" stays the
// string it is); null or absent is an empty object; anything else is kept as it is.
json payload(const json* v) {
    if (!v || v->is_null()) return json::object();
    if (v->is_string()) {
        const std::string& s = v->get_ref<const std::string&>();
        const std::string_view t = text::trim(s);
        if (!t.empty() && (t.front() == '{' || t.front() == '[') && data::json_nesting_depth(t) <= data::k_max_json_depth) {
            json parsed = json::parse(t, nullptr, false);
            if (!parsed.is_discarded()) return parsed;
        }
    }
    return *v;
}

// Collects the rows of one user's app log, whether streamed or given parsed.
class LogReader {
public:
    explicit LogReader(FileNotes& notes) : m_notes(notes) {}

    // One entry at `path`; `key` is its member name when the file keys entries by id.
    void row(const json& j, const std::string& path, const std::string& key = {}) {
        ++m_rows;
        if (m_logs.size() >= k_max_logs) {
            if (!m_over_cap) m_notes.note(path, "more than " + std::to_string(k_max_logs) + " log entries; the rest are not read");
            m_over_cap = true;
            return;
        }
        if (!j.is_object()) {
            m_notes.note_capped("entry not an object", path,
                                std::string("a log entry must be an object, not ") + type_name(j) + "; skipped");
            return;
        }
        RawLog r;
        const auto [idv, id_key] = first_member(j, {"app_log_id", "log_id", "id"});
        std::optional<std::string> raw = idv ? id_text(*idv) : std::nullopt;
        if (!raw && !key.empty()) raw = std::string(text::trim(key));
        if (!raw || raw->empty()) {
            m_notes.note_capped("entry without id", at(path, "app_log_id"),
                                "a log entry without an app_log_id (a string or a whole number); skipped");
            return;
        }
        if (m_by_raw.count(*raw)) {
            m_notes.note_capped("duplicate log id", at(path, std::string(id_key.empty() ? "app_log_id" : id_key)),
                                "duplicate app_log_id " + shown(json(*raw)) +
                                    "; this entry is skipped, the first one with the id is kept");
            return;
        }
        const json* ts = member(j, {"timestamp", "time", "ts"});
        const std::string ts_text = ts && ts->is_string() ? std::string(text::trim(ts->get_ref<const std::string&>())) : "";
        const auto time = dates::parse_date_time(ts_text);
        if (!time) {
            m_notes.note_capped("bad timestamp", at(path, "timestamp"),
                                "log " + shown(json(*raw)) + " has " +
                                    (ts ? "timestamp " + shown(*ts) : std::string("no timestamp")) +
                                    ", not \"YYYY-MM-DD HH:MM:SS\"; skipped");
            return;
        }
        if (ts_text.size() == 10)
            m_notes.note_capped("date without time", at(path, "timestamp"),
                                "log " + shown(json(*raw)) + " has a date without a time of day; taken as 00:00:00");
        r.raw_id = *raw;
        r.time = *time;
        r.seconds = dates::to_seconds(*time);
        r.order = m_logs.size();
        r.log.timestamp = dates::format_log(*time);
        auto name = [&](std::optional<std::string> found, const char* label) {
            if (found) return std::move(*found);
            m_notes.note_capped(std::string("no ") + label, at(path, label),
                                "log " + shown(json(*raw)) + " has no " + label + "; written as 'unknown'");
            return std::string("unknown");
        };
        r.log.app = name(string_member(j, {"app_name", "app"}), "app_name");
        r.log.api = name(string_member(j, {"api_name", "api"}), "api_name");
        r.log.request = payload(member(j, {"request"}));
        r.log.response = payload(member(j, {"response"}));
        if (const json* g = member(j, {"golden_evidence"})) r.golden = *g;
        for (auto it = j.begin(); it != j.end(); ++it) {
            static const std::set<std::string, std::less<>> known = {
                "app_log_id", "log_id", "id", "timestamp", "time", "ts", "app_name", "app",
                "api_name", "api", "request", "response", "golden_evidence",
                // DynamicMem's generator's bookkeeping (stage3_app_logs.py): not what the app logged.
                "event_id", "atomic_event_id", "metadata"};
            if (!known.count(it.key())) {
                auto& [count, first] = m_unknown[it.key()];
                if (count++ == 0) first = at(path, it.key());
            }
        }
        m_by_raw.emplace(*raw, m_logs.size());
        m_logs.push_back(std::move(r));
    }

    // A top-level member of an object-shaped file that holds no entries.
    void other(const std::string& key, const json& value) { m_notes.keep(key, value, "top-level key '" + key + "' holds no log entries"); }

    // Notes what the rows carried beyond the mapped keys; call once all rows are read.
    void finish() {
        for (const auto& [key, seen] : m_unknown)
            m_notes.note(seen.second, "key '" + key + "' in " + std::to_string(seen.first) +
                                          " log entr" + (seen.first == 1 ? "y" : "ies") + "; not mapped");
    }

    std::vector<RawLog>& logs() { return m_logs; }
    const std::map<std::string, std::size_t>& by_raw() const { return m_by_raw; }
    std::size_t rows() const { return m_rows; }

private:
    FileNotes& m_notes;
    std::vector<RawLog> m_logs;
    std::map<std::string, std::size_t> m_by_raw;  // raw id -> index in m_logs
    std::map<std::string, std::pair<std::size_t, std::string>> m_unknown;
    std::size_t m_rows = 0;
    bool m_over_cap = false;
};

// Where an object-shaped app log keeps its entries.
bool rows_key(const std::string& key) {
    static const std::set<std::string> keys = {"logs", "app_logs", "app_log", "entries", "records", "data", "items"};
    return keys.count(key) > 0;
}

// An entry keyed by its id in an object-shaped file looks like an entry.
bool looks_like_entry(const json& v) {
    return v.is_object() && (v.contains("timestamp") || v.contains("app_name") || v.contains("api_name"));
}

// The rows of an already parsed app log. False (with `why`) when the file holds no entries at all.
bool read_parsed_logs(const json& j, LogReader& reader, std::string& why) {
    if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i) reader.row(j[i], at("", i));
        return true;
    }
    if (!j.is_object()) {
        why = std::string("the app log must be a list of entries (or an object holding one), not ") + type_name(j);
        return false;
    }
    bool found = false;
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (rows_key(it.key()) && it->is_array()) {
            found = true;
            for (std::size_t i = 0; i < it->size(); ++i) reader.row((*it)[i], at(it.key(), i));
        } else if (looks_like_entry(*it)) {
            found = true;
            reader.row(*it, it.key(), it.key());
        } else {
            reader.other(it.key(), *it);
        }
    }
    if (!found) why = "no log entries: neither a list nor an object holding one under 'logs' or 'app_logs'";
    return found;
}

// ---------------------------------------------------------------------------------------------
// State keys, field paths and field types.

std::optional<data::StateFamily> family_of(const std::string& key) {
    const std::size_t colon = key.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == key.size()) return std::nullopt;
    const std::string prefix = text::to_lower(key.substr(0, colon));
    if (prefix.find("habit") != std::string::npos) return data::StateFamily::habit;
    if (prefix.find("preference") != std::string::npos) return data::StateFamily::preference;
    if (prefix.find("attribute") != std::string::npos) return data::StateFamily::attribute;
    return std::nullopt;
}

bool looks_like_state_key(const std::string& s) {
    return s.find(' ') == std::string::npos && family_of(s).has_value();
}

// The template leaves a task asks to fill: "<fill>", "<FILL>", "<fill: start time>", "<blank>",
// "[fill]", "{fill}", "__FILL__". Any other leaf is context the template gives.
bool is_fill(const json& v) {
    if (!v.is_string()) return false;
    const std::string s = text::to_lower(text::trim(v.get_ref<const std::string&>()));
    if (s.size() < 4) return false;
    const char open = s.front(), close = s.back();
    const bool bracketed = (open == '<' && close == '>') || (open == '[' && close == ']') || (open == '{' && close == '}') ||
                           (text::starts_with(s, "__") && text::ends_with(s, "__"));
    return bracketed && (s.find("fill") != std::string::npos || s.find("blank") != std::string::npos);
}

// A leaf of a JSON value: its path ("schedule.days_of_week", "items[0]", "$" for the whole value) and
// pointer (to read the same place in another value of the same shape).
struct Leaf {
    std::string path;
    json::json_pointer pointer;
    const json* value = nullptr;
};

std::string join_path(const std::string& base, const std::string& key) { return base == "$" ? key : base + "." + key; }

// Leaves of `v` for which `take` holds; `v` is walked at most data::k_max_json_depth deep.
template <class Take>
void leaves(const json& v, const std::string& path, const json::json_pointer& pointer, std::size_t depth,
            const Take& take, std::vector<Leaf>& out) {
    if (depth > data::k_max_json_depth) return;
    if (v.is_object() && !v.empty()) {
        for (auto it = v.begin(); it != v.end(); ++it)
            leaves(it.value(), join_path(path, it.key()), pointer / it.key(), depth + 1, take, out);
    } else if (v.is_array() && !v.empty() && take.descend_arrays) {
        for (std::size_t i = 0; i < v.size(); ++i)
            leaves(v[i], (path == "$" ? std::string() : path) + "[" + std::to_string(i) + "]", pointer / i, depth + 1,
                   take, out);
    } else if (take(v)) {
        out.push_back({path, pointer, &v});
    }
}

struct FillLeaves {
    bool descend_arrays = true;  // a template may fill list elements one by one
    bool operator()(const json& v) const { return is_fill(v); }
};
struct ValueLeaves {
    bool descend_arrays = false;  // a list in a state's value ("days_of_week": [0, 2]) is one field
    bool operator()(const json&) const { return true; }
};

std::vector<Leaf> fill_leaves(const json& templ) {
    std::vector<Leaf> out;
    leaves(templ, "$", json::json_pointer(), 0, FillLeaves{}, out);
    return out;
}
std::vector<Leaf> value_leaves(const json& value) {
    std::vector<Leaf> out;
    leaves(value, "$", json::json_pointer(), 0, ValueLeaves{}, out);
    return out;
}

const json* value_at(const json& v, const json::json_pointer& pointer) {
    try {
        if (!v.contains(pointer)) return nullptr;
        const json& found = v.at(pointer);
        return found.is_null() ? nullptr : &found;
    } catch (const json::exception&) {
        return nullptr;  // a pointer through a string or past a list's end names nothing
    }
}

// A path as the files write it, in the form fields use: "$.a.b" and "a.b" are the same, "" and "$"
// the whole value.
std::string normal_path(std::string p) {
    p = std::string(text::trim(p));
    if (text::starts_with(p, "$.")) p.erase(0, 2);
    // DynamicMem's scoring points alias the value's root as "current_value" and index lists with a
    // dot ("days_of_week.0"); memfail writes "days_of_week[0]".
    if (p == "current_value") return "$";
    if (text::starts_with(p, "current_value.")) p.erase(0, 14);
    if (p.empty() || p == "$" || p == "*" || p == ".") return "$";
    std::string out;
    for (const auto& part : text::split(p, '.')) {
        const bool index = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (index && !out.empty()) out += "[" + part + "]";
        else out += (out.empty() ? "" : ".") + part;
    }
    return out;
}

// The last name along a path, without list indices: "schedule.days_of_week[1]" -> "days_of_week".
std::string last_name(const std::string& path) {
    std::string p = path;
    while (!p.empty() && p.back() == ']') {
        const std::size_t open = p.rfind('[');
        if (open == std::string::npos) break;
        p.resize(open);
    }
    const std::size_t dot = p.rfind('.');
    return text::to_lower(dot == std::string::npos ? p : p.substr(dot + 1));
}

// "06:30", "6:30", "18:05:00", "6:30 pm": a clock time written with a colon (a bare number is not).
bool is_clock_text(const std::string& s) {
    if (s.find(':') == std::string::npos || s.size() > 11) return false;
    if (!(s[0] >= '0' && s[0] <= '9')) return false;
    if (dates::parse_clock(s)) return true;
    // parse_clock reads minutes; "18:05:00" adds seconds.
    return s.size() == 8 && s[5] == ':' && dates::parse_clock(s.substr(0, 5));
}

// The type a field is graded as, from its name and expected value (the header's heuristic).
data::FieldType field_type(const std::string& path, const json& expected) {
    const std::string name = last_name(path);
    const bool weekday_name = name.find("days_of_week") != std::string::npos || name == "day_of_week" ||
                              name == "weekday" || name == "weekdays";
    const bool duration_name = name.find("duration") != std::string::npos || text::ends_with(name, "_minutes") ||
                               text::ends_with(name, "_mins") || text::ends_with(name, "_hours");
    if (weekday_name) return data::FieldType::weekday;
    if (expected.is_array()) return data::FieldType::list;
    if (expected.is_boolean()) return data::FieldType::enumeration;
    if (expected.is_number()) return duration_name ? data::FieldType::duration : data::FieldType::number;
    if (expected.is_string()) {
        const std::string s(text::trim(expected.get_ref<const std::string&>()));
        if (is_clock_text(s)) return data::FieldType::time;
        if (s.size() >= 10 && s[4] == '-' && dates::parse_date_time(s)) return data::FieldType::date;
        if (duration_name) return data::FieldType::duration;
        if (s.size() <= 10 && dates::parse_weekday(s)) return data::FieldType::weekday;
    }
    return data::FieldType::text;
}

// Two paths are related when one is the other, an ancestor of it, or the whole value ("$").
bool related(const std::string& a, const std::string& b) {
    if (a == b || a == "$" || b == "$") return true;
    auto under = [](const std::string& x, const std::string& y) {
        return x.size() > y.size() && text::starts_with(x, y) && (x[y.size()] == '.' || x[y.size()] == '[');
    };
    return under(a, b) || under(b, a);
}

// ---------------------------------------------------------------------------------------------
// One user's import.

struct CheckpointIn {
    data::Checkpoint c;
    std::int64_t as_of = 0;  // seconds, inclusive
    std::optional<std::int64_t> log_index;  // as_of.log_index when the file gives it
    const json* j = nullptr;
    std::string path;  // in task_packs.json
    std::size_t position = 0;  // in the file
};

struct Refusal {
    std::string file;
    std::string path;
    std::string message;
};

class UserImport {
public:
    UserImport(const std::string& user, const std::string& task_file, const std::string& log_file,
               std::vector<ImportNote>& notes)
        : m_user(user), m_tasks(task_file, notes), m_logs_notes(log_file, notes), m_reader(m_logs_notes) {}

    LogReader& reader() { return m_reader; }
    FileNotes& log_notes() { return m_logs_notes; }

    std::optional<Refusal> run(const json& task_packs, data::Scenario& s) {
        m_reader.finish();
        if (m_reader.logs().empty())
            return Refusal{m_logs_notes.file(), "",
                           m_reader.rows() ? "no usable log entry: every entry was skipped (see the notes)"
                                           : "no log entries"};
        if (!task_packs.is_object() && !task_packs.is_array())
            return Refusal{m_tasks.file(), "",
                           std::string("the task packs must be an object or a list of checkpoints, not ") +
                               type_name(task_packs)};
        s.format = data::k_format_v2;
        s.suite = "dynamic";
        s.dataset = "dynamic";
        s.id = clean_id(m_user);
        if (s.id.empty()) s.id = "dynamicmem-user";
        if (s.id != m_user) m_tasks.note("", "user folder name " + shown(json(m_user)) + " is not a valid id; imported as '" + s.id + "'");
        read_checkpoints(task_packs);
        if (m_checkpoints.empty())
            return Refusal{m_tasks.file(), "checkpoints", "no usable checkpoint (each needs an as_of date): nothing to ask"};
        build_sessions(s);
        place_checkpoints(s);
        if (m_checkpoints.empty())
            return Refusal{m_tasks.file(), "checkpoints", "every checkpoint's as_of is before the first log: nothing to ask"};
        for (const auto& c : m_checkpoints) s.checkpoints.push_back(c.c);
        build_profile(s);
        build_probes(s);
        s.meta = {{"source", "dynamicmem"},
                  {"user", m_user},
                  {"files", json::array({k_task_file, k_log_file})},
                  {"logs", m_reader.logs().size()}};
        if (!m_golden.empty()) s.meta["golden_evidence"] = m_golden;
        if (!m_header.empty()) s.meta["dynamicmem"] = m_header;
        json unmapped = m_tasks.unmapped();
        for (auto it = m_logs_notes.unmapped().begin(); it != m_logs_notes.unmapped().end(); ++it)
            unmapped[std::string(k_log_file) + ":" + it.key()] = it.value();
        if (!unmapped.empty()) s.meta["unmapped"] = std::move(unmapped);
        m_tasks.finish();
        m_logs_notes.finish();
        return std::nullopt;
    }

private:
    // ---- checkpoints

    void read_checkpoints(const json& tp) {
        // The checkpoints: under "checkpoints", or the file itself (a list, or an object keyed by id).
        const json* list = &tp;
        std::string base;
        if (const json* c = member(tp, {"checkpoints"})) {
            list = c;
            base = "checkpoints";
            // What DynamicMem's checkpoint builder writes beside its checkpoints (the user, counts, the
            // sampling and the task contract): kept in the scenario's meta.dynamicmem, not noted.
            static const std::set<std::string> header = {
                "user_id", "source_total_app_logs", "total_chains", "source_total_checkpoints",
                "skipped_checkpoints_no_valid_states", "skipped_checkpoints_no_new_valid_observation",
                "total_checkpoints", "sampling_strategy", "task_contract_version", "research_frame_version",
                "canonical_research_doc"};
            for (auto it = tp.begin(); it != tp.end(); ++it) {
                if (it.key() == "checkpoints") continue;
                if (header.count(it.key())) m_header[it.key()] = it.value();
                else m_tasks.keep(it.key(), it.value(), "top-level key '" + it.key() + "'");
            }
        }
        std::vector<CheckpointIn> found;
        if (list->is_array()) {
            for (std::size_t i = 0; i < list->size(); ++i) read_checkpoint((*list)[i], at(base, i), {}, i, found);
        } else if (list->is_object()) {
            std::size_t i = 0;
            for (auto it = list->begin(); it != list->end(); ++it) {
                // At the file's top level, keys beside the checkpoints (a user id) are kept aside.
                if (base.empty() && !looks_like_checkpoint(it.key(), *it)) {
                    m_tasks.keep(at(base, it.key()), it.value(), "top-level key '" + it.key() + "' is no checkpoint");
                    continue;
                }
                read_checkpoint(it.value(), at(base, it.key()), it.key(), i++, found);
            }
        } else {
            m_tasks.note(base, std::string("checkpoints must be a list or an object, not ") + type_name(*list));
        }
        std::stable_sort(found.begin(), found.end(),
                         [](const CheckpointIn& a, const CheckpointIn& b) { return a.as_of < b.as_of; });
        std::set<std::string> ids;
        for (std::size_t i = 0; i < found.size(); ++i) {
            auto& c = found[i];
            if (!ids.insert(c.c.id).second) {
                m_tasks.note(c.path, "a second checkpoint '" + c.c.id + "'; skipped");
                continue;
            }
            if (!m_checkpoints.empty() && m_checkpoints.back().as_of == c.as_of) {
                m_tasks.note(c.path, "checkpoint '" + c.c.id + "' has the same as_of as '" + m_checkpoints.back().c.id +
                                         "'; skipped");
                continue;
            }
            m_checkpoints.push_back(std::move(c));
        }
        for (std::size_t i = 1; i < m_checkpoints.size(); ++i)
            if (m_checkpoints[i].position < m_checkpoints[i - 1].position) {
                m_tasks.note(base, "checkpoints are not in time order in the file; taken in as_of order");
                break;
            }
    }

    static bool looks_like_checkpoint(const std::string& key, const json& v) {
        if (!v.is_object()) return false;
        if (v.contains("as_of") || v.contains("expected_snapshot_state")) return true;
        return key.size() >= 2 && (key[0] == 'C' || key[0] == 'c') &&
               std::all_of(key.begin() + 1, key.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    }

    void read_checkpoint(const json& cj, const std::string& path, const std::string& key, std::size_t position,
                         std::vector<CheckpointIn>& out) {
        if (!cj.is_object()) {
            m_tasks.note(path, std::string("a checkpoint must be an object, not ") + type_name(cj) + "; skipped");
            return;
        }
        CheckpointIn c;
        c.j = &cj;
        c.path = path;
        c.position = position;
        std::string raw = key;
        if (const json* v = member(cj, {"checkpoint_id", "checkpoint", "id"}); v && id_text(*v)) raw = *id_text(*v);
        if (raw.empty()) {
            raw = "C" + std::to_string(position + 1);
            m_tasks.note(at(path, "checkpoint_id"), "a checkpoint without an id; named '" + raw + "' by its position");
        }
        c.c.id = clean_id(raw);
        if (c.c.id != raw) m_tasks.note(at(path, "checkpoint_id"), "checkpoint id " + shown(json(raw)) + " imported as '" + c.c.id + "'");
        const json* as_of = member(cj, {"as_of", "as_of_date", "date"});
        // DynamicMem's checkpoint builder writes an object: {"log_index", "app_log_id", "timestamp",
        // "window_id", "domain", "completed_chain_ids"}; its harness shows the logs up to that
        // timestamp (up to log_index in time order: the same logs unless two share its second).
        if (as_of && as_of->is_object()) {
            if (const json* ts = member(*as_of, {"timestamp"})) {
                if (const json* index = member(*as_of, {"log_index"}); index && index->is_number_integer())
                    c.log_index = index->get<std::int64_t>();
                as_of = ts;
            }
        }
        const std::string as_of_text = as_of && as_of->is_string() ? std::string(text::trim(as_of->get_ref<const std::string&>())) : "";
        auto t = dates::parse_date_time(as_of_text);
        if (!t) {
            m_tasks.note(at(path, "as_of"), "checkpoint '" + c.c.id + "' has " +
                                                (as_of ? "as_of " + shown(*as_of) : std::string("no as_of")) +
                                                ", not a date; the checkpoint and its tasks are skipped");
            return;
        }
        // A bare date holds every log of that day.
        if (as_of_text.size() == 10) t->hour = 23, t->minute = 59, t->second = 59;
        c.as_of = dates::to_seconds(*t);
        c.c.as_of = dates::format_iso(*t);
        static const std::set<std::string> known = {"checkpoint_id", "checkpoint", "id", "as_of", "as_of_date", "date",
                                                    "expected_snapshot_state", "validated_snapshot_state",
                                                    "state_observability", "state_completion_pack",
                                                    "personalized_service_pack", "rq3_apply_service_qa"};
        // What DynamicMem's builders write beside the tasks (sampling, validation records): read by
        // no task, so neither kept nor noted key by key.
        static const std::set<std::string> provenance = {"validity", "sampling", "state_questionability",
                                                         "state_validation_summary"};
        for (auto it = cj.begin(); it != cj.end(); ++it) {
            if (known.count(it.key()) || provenance.count(it.key())) continue;
            if (it.key() == "change_tracking_pack") {
                m_tasks.note_capped("change tracking", at(path, it.key()),
                                    "a change_tracking_pack (DynamicMem's legacy Task B, dropped from its v2 task contract) "
                                    "is not mapped; its items are not imported");
                continue;
            }
            if (!text::ends_with(it.key(), "_pack"))
                m_tasks.keep(at(path, it.key()), it.value(), "unknown checkpoint key '" + it.key() + "'");
        }
        out.push_back(std::move(c));
    }

    // ---- sessions

    // The index of the first checkpoint whose as_of is at or after `seconds` (the log's segment).
    std::size_t segment(std::int64_t seconds) const {
        std::size_t n = 0;
        while (n < m_checkpoints.size() && m_checkpoints[n].as_of < seconds) ++n;
        return n;
    }

    void build_sessions(data::Scenario& s) {
        auto& logs = m_reader.logs();
        std::stable_sort(logs.begin(), logs.end(), [](const RawLog& a, const RawLog& b) {
            return a.seconds != b.seconds ? a.seconds < b.seconds : a.order < b.order;
        });
        bool out_of_order = false;
        for (std::size_t i = 0; i < logs.size(); ++i)
            if (logs[i].order != i) out_of_order = true;
        if (out_of_order) m_logs_notes.note("", "log entries are not in time order in the file; sorted by timestamp (ties keep file order)");
        // DynamicMem's harness shows a checkpoint the logs up to as_of.log_index in time order; memfail
        // shows those up to as_of.timestamp. The two agree unless the file's order differs from the
        // one the index was computed on, or logs share the cut's second: said when they differ.
        for (const auto& c : m_checkpoints) {
            if (!c.log_index) continue;
            const auto upto = static_cast<std::int64_t>(std::count_if(
                logs.begin(), logs.end(), [&](const RawLog& r) { return r.seconds <= c.as_of; }));
            if (upto != *c.log_index + 1)
                m_tasks.note(at(c.path, "as_of"), "checkpoint '" + c.c.id + "': as_of.log_index " +
                                                      std::to_string(*c.log_index) + " shows " +
                                                      std::to_string(*c.log_index + 1) + " logs, as_of.timestamp " +
                                                      std::to_string(upto) + "; the timestamp is used");
        }
        // After sorting, the raw-id index points at the new positions.
        std::map<std::string, std::size_t> by_raw;
        std::set<std::string> message_ids;
        std::string day, previous_day;
        std::size_t previous_segment = 0, part = 0;
        for (std::size_t i = 0; i < logs.size(); ++i) {
            RawLog& r = logs[i];
            by_raw.emplace(r.raw_id, i);
            r.id = clean_id(r.raw_id);
            if (message_ids.count(r.id)) {
                std::string unique;
                for (std::size_t n = 2; unique.empty() || message_ids.count(unique); ++n)
                    unique = clean_id(r.raw_id + "-" + std::to_string(n));
                m_logs_notes.note_capped("log id made unique", "", "log id " + shown(json(r.raw_id)) + " is, as an id, '" + r.id +
                                                                       "', which another log has; imported as '" + unique + "'");
                r.id = unique;
            } else if (r.id != r.raw_id) {
                m_logs_notes.note_capped("log id cleaned", "", "log id " + shown(json(r.raw_id)) + " imported as '" + r.id + "'");
            }
            message_ids.insert(r.id);
            day = dates::format_date(r.time.date);
            const std::size_t seg = segment(r.seconds);
            if (s.sessions.empty() || day != previous_day || seg != previous_segment) {
                part = day == previous_day ? part + 1 : 1;
                data::Session session;
                session.id = "day-" + day + (part > 1 ? "." + std::to_string(part) : "");
                session.timestamp = dates::format_iso(r.time);
                if (part > 1)
                    m_logs_notes.note("", "the logs of " + day + " are split into two sessions at checkpoint '" +
                                              m_checkpoints[previous_segment].c.id + "' (as_of " +
                                              m_checkpoints[previous_segment].c.as_of + ")");
                s.sessions.push_back(std::move(session));
                previous_day = day;
                previous_segment = seg;
            }
            data::Message m;
            m.id = r.id;
            m.role = "app";
            // Moved, not copied: the log may be hundreds of MB, and only its id and time are read later.
            m.app_log = std::move(r.log);
            m.content = data::render_app_log(*m.app_log);
            if (!r.golden.is_null()) {
                m.app_log->details = surface_strings(r.golden, m.content);
                m_golden[m.id] = std::move(r.golden);
            }
            s.sessions.back().messages.push_back(std::move(m));
            m_session_of.push_back(s.sessions.size() - 1);
        }
        m_by_raw = std::move(by_raw);
    }

    // The strings of golden_evidence the log's own text holds (normalised, at word boundaries),
    // state keys excepted: those are surface strings a memory without provenance must keep.
    static std::vector<std::string> surface_strings(const json& golden, const std::string& content) {
        std::vector<std::string> strings;
        std::vector<std::pair<const json*, std::size_t>> stack = {{&golden, 0}};
        while (!stack.empty() && strings.size() < 256) {
            auto [v, depth] = stack.back();
            stack.pop_back();
            if (v->is_string()) strings.push_back(v->get<std::string>());
            else if (v->is_structured() && depth < 8)
                for (auto it = v->rbegin(); it != v->rend(); ++it) stack.push_back({&*it, depth + 1});
        }
        const std::string haystack = text::normalize(content);
        std::vector<std::string> out;
        std::set<std::string> seen;
        for (const auto& s : strings) {
            const std::string n = text::normalize(s);
            if (n.empty() || looks_like_state_key(s) || !seen.insert(n).second) continue;
            if (text::normalized_contains(haystack, n)) out.push_back(std::string(text::trim(s)));
            if (out.size() >= k_max_details) break;
        }
        return out;
    }

    void place_checkpoints(const data::Scenario& s) {
        const auto& logs = m_reader.logs();
        std::vector<CheckpointIn> kept;
        for (auto& c : m_checkpoints) {
            // The last log at or before as_of; its session ends at or before as_of (a checkpoint
            // inside a day split that day).
            std::size_t last = logs.size();
            for (std::size_t i = 0; i < logs.size() && logs[i].seconds <= c.as_of; ++i) last = i;  // sorted: stops at as_of
            if (last == logs.size()) {
                m_tasks.note(c.path, "checkpoint '" + c.c.id + "' (as_of " + c.c.as_of +
                                         ") is before the first log; it and its tasks are skipped");
                continue;
            }
            c.c.after_session = s.sessions[m_session_of[last]].id;
            kept.push_back(std::move(c));
        }
        m_checkpoints = std::move(kept);
    }

    // ---- the profile

    // The evidence a state_observability entry gives, per field path ("$": the whole value).
    std::vector<data::FieldEvidence> observed(const json& v, const std::string& path) {
        std::map<std::string, std::vector<std::string>> by_path;
        std::vector<std::string> order;
        auto add_ids = [&](const std::string& field, const json& ids, const std::string& where) {
            const std::string p = normal_path(field);
            if (!by_path.count(p)) order.push_back(p);
            auto& list = by_path[p];
            auto add = [&](const json& id, const std::string& at_path) {
                const json* idv = &id;
                if (id.is_object()) idv = member(id, {"app_log_id", "log_id", "id"});
                auto t = idv ? id_text(*idv) : std::nullopt;
                if (!t) {
                    m_tasks.note_capped("bad evidence id", at_path, shown(id) + " names no log; ignored");
                    return;
                }
                if (std::find(list.begin(), list.end(), *t) == list.end()) list.push_back(*t);
            };
            if (ids.is_array())
                for (std::size_t i = 0; i < ids.size(); ++i) add(ids[i], at(where, i));
            else
                add(ids, where);
        };
        // DynamicMem's observability of a key: {"evidence_app_log_ids": [...], "evidence_count",
        // "is_valid", "last_change_reason", "provenance_evidenced_fields", ...}. Its ids are the
        // whole value's evidence, accumulated over every chain (superseded values' logs too, as the
        // benchmark's own gold is); the rest describes them.
        if (const json* ids = v.is_object() ? member(v, {"evidence_app_log_ids"}) : nullptr) {
            add_ids("$", *ids, at(path, "evidence_app_log_ids"));
            if (const json* valid = member(v, {"is_valid"}); valid && valid->is_boolean() && !valid->get<bool>())
                m_tasks.note_capped("observability not valid", at(path, "is_valid"),
                                    "the key's observability is marked is_valid: false; its evidence is still imported");
        } else if (v.is_array() || v.is_string() || v.is_number()) {
            add_ids("$", v, path);
        } else if (v.is_object()) {
            for (auto it = v.begin(); it != v.end(); ++it) {
                const std::string& k = it.key();
                const std::string kpath = at(path, k);
                if (it->is_null()) continue;
                if (k == "log_ids" || k == "evidence_log_ids" || k == "app_log_ids" || k == "evidence" ||
                    k == "evidence_ids") {
                    add_ids("$", *it, kpath);
                } else if (k == "fields" || k == "field_evidence" || k == "per_field" || k == "field_paths") {
                    if (!it->is_object()) {
                        m_tasks.note(kpath, std::string("per-field evidence must be an object of field path -> log ids, not ") +
                                                type_name(*it) + "; ignored");
                        continue;
                    }
                    for (auto f = it->begin(); f != it->end(); ++f)
                        if (!f->is_null()) add_ids(f.key(), *f, at(kpath, f.key()));
                } else if (it->is_array() || it->is_string() || it->is_number()) {
                    add_ids(k, *it, kpath);  // a field path -> its log ids
                } else {
                    m_tasks.note(kpath, std::string("evidence for field '") + k + "' is " + type_name(*it) +
                                            ", not a list of log ids; ignored");
                }
            }
        } else if (!v.is_null()) {
            m_tasks.note(path, std::string("observability must be a list of log ids or an object of field path -> "
                                           "log ids, not ") + type_name(v) + "; ignored");
        }
        std::vector<data::FieldEvidence> out;
        for (const auto& p : order) out.push_back({p, by_path[p]});
        return out;
    }

    // Keeps the ids that name a log stored by the checkpoint, as message ids; notes the others.
    void isolate(std::vector<data::FieldEvidence>& evidence, const CheckpointIn& c, const std::string& path) {
        const auto& logs = m_reader.logs();
        for (auto& fe : evidence) {
            std::vector<std::string> kept, unknown, later;
            for (const auto& raw : fe.log_ids) {
                const auto it = m_by_raw.find(raw);
                if (it == m_by_raw.end()) unknown.push_back(raw);
                else if (logs[it->second].seconds > c.as_of) later.push_back(raw);
                else if (std::find(kept.begin(), kept.end(), logs[it->second].id) == kept.end())
                    kept.push_back(logs[it->second].id);
            }
            const std::string fpath = fe.path == "$" ? path : at(path, fe.path);
            auto listed = [](const std::vector<std::string>& ids) {
                std::string out;
                for (std::size_t i = 0; i < ids.size() && i < 5; ++i) out += (i ? ", " : "") + shown(json(ids[i]));
                if (ids.size() > 5) out += " and " + std::to_string(ids.size() - 5) + " more";
                return out;
            };
            if (!unknown.empty())
                m_tasks.note_capped("evidence names no log", fpath,
                                    "evidence id" + std::string(unknown.size() == 1 ? " " : "s ") + listed(unknown) +
                                        " name" + (unknown.size() == 1 ? "s" : "") + " no log of " + k_log_file +
                                        "; dropped from field '" + fe.path + "'");
            if (!later.empty())
                m_tasks.note_capped("evidence after checkpoint", fpath,
                                    "evidence log" + std::string(later.size() == 1 ? " " : "s ") + listed(later) +
                                        " logged after checkpoint '" + c.c.id + "' (as_of " + c.c.as_of +
                                        "); dropped from field '" + fe.path + "' (a probe never points past its checkpoint)");
            fe.log_ids = std::move(kept);
        }
        evidence.erase(std::remove_if(evidence.begin(), evidence.end(),
                                      [](const data::FieldEvidence& fe) { return fe.log_ids.empty(); }),
                       evidence.end());
    }

    // A snapshot or observability object keyed "category:state_name", or nested as DynamicMem's
    // builders write it, {category: {state_name: ...}}: its flat keys.
    static std::vector<std::pair<std::string, const json*>> flattened(const json& v) {
        std::vector<std::pair<std::string, const json*>> out;
        if (!v.is_object()) return out;
        for (auto it = v.begin(); it != v.end(); ++it) {
            const bool category = it.key().find(':') == std::string::npos && it->is_object() &&
                                  text::ends_with(it.key(), "_state");
            if (category)
                for (auto in = it->begin(); in != it->end(); ++in) out.push_back({it.key() + ":" + in.key(), &*in});
            else
                out.push_back({it.key(), &*it});
        }
        return out;
    }

    // A state's current value as DynamicMem's Task A reads it (tce_contracts.py,
    // normalize_task_a_current_value): a {from, to} transition is its `to`; priority, schedule_date
    // and schedule_dates are left out, and what that leaves empty is pruned.
    static json current_value(const json& v) {
        if (v.is_object() && v.contains("to") && (v.size() == 1 || (v.size() == 2 && v.contains("from"))))
            return current_value(v["to"]);
        if (v.is_object()) {
            json out = json::object();
            for (auto it = v.begin(); it != v.end(); ++it) {
                if (it.key() == "priority" || it.key() == "schedule_date" || it.key() == "schedule_dates") continue;
                json c = current_value(*it);
                if ((c.is_object() || c.is_array()) && c.empty()) continue;
                out[it.key()] = std::move(c);
            }
            return out;
        }
        if (v.is_array()) {
            json out = json::array();
            for (const auto& e : v) out.push_back(current_value(e));
            return out;
        }
        return v;
    }

    // Whether `part` (a log's golden_evidence state_value: the whole value, some of its fields, or a
    // {from, to} change) agrees with `value` wherever both say something.
    static bool agrees(const json& part, const json& value) {
        const json p = current_value(part);
        if (p.is_object() && value.is_object()) {
            for (auto it = p.begin(); it != p.end(); ++it) {
                const auto v = value.find(it.key());
                if (v != value.end() && !agrees(*it, *v)) return false;
            }
            return true;
        }
        return p == value;
    }

    // DynamicMem's observability accumulates every log that ever evidenced a key, superseded values'
    // too. Where a log's golden_evidence gives the value it evidences (its generator writes it; its
    // release may not), a log whose every entry for this key states a value the key no longer has is
    // set aside: it evidences an earlier value (a probe's `conflicting`), not the current one.
    void set_aside_superseded(data::StateSnapshot& sn, const std::string& key, const std::string& path) {
        if (sn.value.is_null()) return;
        std::size_t set_aside = 0, without = 0;
        for (auto& fe : sn.evidence) {
            std::vector<std::string> kept;
            for (const auto& id : fe.log_ids) {
                bool stated = false, current = false;
                if (const auto g = m_golden.find(id); g != m_golden.end() && g->is_array())
                    for (const auto& e : *g) {
                        const auto cat = e.is_object() ? string_member(e, {"state_category"}) : std::nullopt;
                        const auto name = e.is_object() ? string_member(e, {"state_name"}) : std::nullopt;
                        const json* v = e.is_object() ? member(e, {"state_value"}) : nullptr;
                        if (!cat || !name || !v || *cat + ":" + *name != key) continue;
                        stated = true;
                        current = current || agrees(*v, sn.value);
                    }
                if (!stated) ++without;
                if (stated && !current) ++set_aside;
                else kept.push_back(id);
            }
            fe.log_ids = std::move(kept);
        }
        sn.evidence.erase(std::remove_if(sn.evidence.begin(), sn.evidence.end(),
                                         [](const data::FieldEvidence& fe) { return fe.log_ids.empty(); }),
                          sn.evidence.end());
        if (set_aside > 0)
            m_tasks.note_capped("superseded evidence", path,
                                std::to_string(set_aside) + " evidence log(s) of '" + key + "' at checkpoint '" + sn.checkpoint +
                                    "' state an earlier value (golden_evidence); kept out of the current evidence");
        if (without > 0)
            m_tasks.note_capped("cumulative evidence", path,
                                std::to_string(without) + " evidence log(s) of '" + key + "' at checkpoint '" + sn.checkpoint +
                                    "' carry no golden_evidence value for it: taken as current (DynamicMem's list "
                                    "accumulates every value's logs, so a superseded value's may be among them)");
    }

    void build_profile(data::Scenario& s) {
        std::map<std::string, data::ProfileState> states;
        std::set<std::string> refused_keys;
        for (const auto& c : m_checkpoints) {
            // DynamicMem's gold is the validated snapshot (the expected one pruned to the fields an LLM
            // validated as observable); the expected one when a file has no validated one.
            const char* snapshot_name = member(*c.j, {"validated_snapshot_state"}) ? "validated_snapshot_state"
                                                                                   : "expected_snapshot_state";
            const json* snapshot = member(*c.j, {snapshot_name});
            const std::string spath = at(c.path, snapshot_name);
            std::vector<std::pair<std::string, const json*>> values;  // key -> value (null allowed)
            if (!snapshot) {
                m_tasks.note(spath, "checkpoint '" + c.c.id + "' has no expected_snapshot_state; its tasks have no gold values");
            } else if (snapshot->is_object()) {
                for (const auto& [key, value] : flattened(*snapshot)) values.push_back({key, value});
            } else if (snapshot->is_array()) {
                for (std::size_t i = 0; i < snapshot->size(); ++i) {
                    const json& e = (*snapshot)[i];
                    auto key = string_member(e, {"state_key", "key"});
                    if (!key || !e.contains("value")) {
                        m_tasks.note(at(spath, i), "a snapshot entry needs state_key and value; skipped");
                        continue;
                    }
                    values.push_back({*key, &e["value"]});
                }
            } else {
                m_tasks.note(spath, std::string("expected_snapshot_state must be an object, not ") + type_name(*snapshot) +
                                        "; ignored");
            }
            const json* observability = member(*c.j, {"state_observability"});
            const std::string opath = at(c.path, "state_observability");
            if (observability && !observability->is_object()) {
                m_tasks.note(opath, std::string("state_observability must be an object of state key -> evidence, not ") +
                                        type_name(*observability) + "; ignored");
                observability = nullptr;
            }
            std::map<std::string, const json*> observed_keys;
            if (observability)
                for (const auto& [key, value] : flattened(*observability)) observed_keys[key] = value;
            std::set<std::string> keys_here;
            for (const auto& [key, value] : values) {
                const std::string kpath = at(spath, key);
                const auto family = family_of(key);
                if (!family) {
                    if (refused_keys.insert(key).second)
                        m_tasks.note(kpath, "state key '" + key +
                                                "' has no known family prefix (attributes_state, habits_state, "
                                                "preferences_state); left out of the profile with its tasks");
                    continue;
                }
                keys_here.insert(key);
                auto& st = states[key];
                st.key = key;
                st.family = *family;
                data::StateSnapshot sn;
                sn.checkpoint = c.c.id;
                sn.value = current_value(*value);
                if (deeper_than(sn.value, data::k_max_json_depth - 8)) {
                    m_tasks.note(kpath, "the value nests too deep; taken as absent at this checkpoint");
                    sn.value = nullptr;
                }
                if (observability)
                    if (const auto it = observed_keys.find(key); it != observed_keys.end()) {
                        sn.evidence = observed(*it->second, at(opath, key));
                        isolate(sn.evidence, c, at(opath, key));
                        set_aside_superseded(sn, key, at(opath, key));
                    }
                if (!sn.value.is_null() && sn.evidence.empty())
                    m_tasks.note_capped("state without evidence", at(opath, key),
                                        "state '" + key + "' at checkpoint '" + c.c.id + "' has no evidence log");
                st.snapshots.push_back(std::move(sn));
            }
            for (const auto& [key, value] : observed_keys)
                if (!keys_here.count(key) && !refused_keys.count(key))
                    m_tasks.note(at(opath, key), "observability of '" + key +
                                                     "', which the checkpoint's snapshot does not name; ignored");
        }
        for (auto& [key, st] : states) s.profile.push_back(std::move(st));
    }

    const data::ProfileState* state(const data::Scenario& s, const std::string& key) const {
        for (const auto& st : s.profile)
            if (st.key == key) return &st;
        return nullptr;
    }

    // The key's snapshot at checkpoint `position` (in m_checkpoints), or nullptr.
    const data::StateSnapshot* snapshot(const data::ProfileState& st, std::size_t position) const {
        for (const auto& sn : st.snapshots)
            if (sn.checkpoint == m_checkpoints[position].c.id) return &sn;
        return nullptr;
    }

    // ---- probes

    struct Roles {
        std::map<std::string, data::FieldRole> by_path;
        std::map<std::string, std::string> state_path;  // fill path -> field of the state it fills
    };

    std::optional<data::FieldRole> role_named(const json& v, const std::string& path) {
        if (!v.is_string()) {
            m_tasks.note(path, "role " + shown(v) + " is not core, detail or identity; taken as core");
            return std::nullopt;
        }
        std::string r = text::to_lower(text::trim(v.get_ref<const std::string&>()));
        if (r == "details") r = "detail";
        if (auto role = data::parse_field_role(r)) return role;
        m_tasks.note(path, "role " + shown(v) + " is not core, detail or identity; taken as core");
        return std::nullopt;
    }

    // Roles (and, for anchors, the state field) given per target path by scoring_points or
    // reference_anchors: a list of objects {target_path|field_path|path, role, state_reference}, or
    // an object of path -> role (or -> such an object). Strings in the list carry no path: kept in
    // the probe's meta only.
    Roles roles_of(const json* list, const std::string& path, const std::string& state_key) {
        Roles out;
        if (!list) return out;
        auto one = [&](const std::string& target, const json& v, const std::string& vpath) {
            const std::string p = normal_path(target);
            if (v.is_string()) {
                if (auto r = role_named(v, vpath)) out.by_path[p] = *r;
                return;
            }
            if (const json* r = member(v, {"role"}))
                if (auto role = role_named(*r, at(vpath, "role"))) out.by_path[p] = *role;
            // DynamicMem's scoring points (spv4): an identity gate says which entity or routine it is.
            if (const json* r = member(v, {"point_role"}); r && r->is_string() && r->get<std::string>() == "identity_gate")
                out.by_path[p] = data::FieldRole::identity;
            if (auto ref = string_member(v, {"state_reference", "state_path", "state_field"})) {
                // "preferences_state:learning_modality.statement" or "statement": the state key, when
                // written, is the item's own (evidence of another key is not this probe's).
                std::string field = *ref;
                if (const std::size_t colon = field.find(':'); colon != std::string::npos) {
                    const std::size_t dot = field.find('.', colon);
                    if (field.compare(0, dot == std::string::npos ? field.size() : dot, state_key) != 0)
                        m_tasks.note(at(vpath, "state_reference"), "refers to another state than the item's '" + state_key +
                                                                       "'; the field's evidence is the item's state's");
                    field = dot == std::string::npos ? std::string() : field.substr(dot + 1);
                }
                out.state_path[p] = normal_path(field);
            }
        };
        if (list->is_array()) {
            for (std::size_t i = 0; i < list->size(); ++i) {
                const json& e = (*list)[i];
                if (auto target = string_member(e, {"target_path", "field_path", "path", "field"})) one(*target, e, at(path, i));
            }
        } else if (list->is_object()) {
            for (auto it = list->begin(); it != list->end(); ++it) one(it.key(), *it, at(path, it.key()));
        }
        return out;
    }

    // The ids of the snapshot's evidence for the state field `state_path`.
    static std::vector<std::string> evidence_for(const data::StateSnapshot* sn, const std::string& state_path) {
        std::vector<std::string> out;
        if (!sn) return out;
        for (const auto& fe : sn->evidence)
            if (related(fe.path, state_path))
                for (const auto& id : fe.log_ids)
                    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
        return out;
    }

    data::ProbeField make_field(const std::string& path, const json& expected, const Roles& roles,
                                const data::StateSnapshot* sn, const std::string& state_path) {
        data::ProbeField f;
        f.path = path;
        f.expected = expected;
        f.type = field_type(path, expected);
        if (f.type == data::FieldType::enumeration) f.options = {"true", "false"};
        if (auto it = roles.by_path.find(path); it != roles.by_path.end()) f.role = it->second;
        f.evidence = evidence_for(sn, state_path);
        return f;
    }

    // state_change and conflicting for a probe on `st` at checkpoint `position`.
    void change_of(const data::ProfileState& st, std::size_t position, data::Probe& p) const {
        const data::StateSnapshot* now = snapshot(st, position);
        if (!now || now->value.is_null()) return;
        const data::StateSnapshot* before = position > 0 ? snapshot(st, position - 1) : nullptr;
        if (!before || before->value.is_null()) {
            p.state_change = "new";
        } else if (before->value != now->value) {
            p.state_change = "updated";
        } else {
            p.state_change = "retained";
            for (std::size_t k = position; k-- > 0;)
                if (const data::StateSnapshot* earlier = snapshot(st, k);
                    earlier && !earlier->value.is_null() && earlier->value != now->value)
                    p.state_change = "settled";
        }
        std::set<std::string> current;
        for (const auto& fe : now->evidence) current.insert(fe.log_ids.begin(), fe.log_ids.end());
        for (std::size_t k = position; k-- > 0;) {
            const data::StateSnapshot* earlier = snapshot(st, k);
            if (!earlier || earlier->value.is_null() || earlier->value == now->value) continue;
            for (const auto& fe : earlier->evidence)
                for (const auto& id : fe.log_ids)
                    if (!current.count(id) && std::find(p.conflicting.begin(), p.conflicting.end(), id) == p.conflicting.end())
                        p.conflicting.push_back(id);
            break;
        }
    }

    // An item of a pack: the object itself, or the one it wraps under "item".
    static const json& unwrap(const json& item) {
        if (const json* inner = member(item, {"item"}); inner && inner->is_object() && !item.contains("state_key"))
            return *inner;
        return item;
    }

    // The items of a pack: a list, an object holding one under "items", or an object keyed by state key.
    std::vector<std::tuple<const json*, std::string, std::string>> items_of(const json& pack, const std::string& path) {
        std::vector<std::tuple<const json*, std::string, std::string>> out;  // item, path, key
        if (pack.is_array()) {
            for (std::size_t i = 0; i < pack.size(); ++i) out.push_back({&pack[i], at(path, i), ""});
        } else if (const json* keys = member(pack, {"keys"}); keys && keys->is_object()) {
            // DynamicMem's packs: {"version", ..., "keys": {state_key: item}} (State Completion) or
            // {state_key: {"items": [item, ...], ...}} (rq3_apply_service_qa); "filtered_keys" are
            // the keys its builder left out, with their reason codes.
            for (auto it = keys->begin(); it != keys->end(); ++it) {
                const std::string kpath = at(at(path, "keys"), it.key());
                if (const json* items = member(*it, {"items"}); items && items->is_array())
                    for (std::size_t i = 0; i < items->size(); ++i)
                        out.push_back({&(*items)[i], at(at(kpath, "items"), i), it.key()});
                else
                    out.push_back({&*it, kpath, it.key()});
            }
            if (const json* filtered = member(pack, {"filtered_keys"}); filtered && filtered->is_object() && !filtered->empty())
                m_tasks.note(at(path, "filtered_keys"), std::to_string(filtered->size()) +
                                                            " state key(s) the benchmark's builder filtered out (with its "
                                                            "reason codes); no item to import");
        } else if (const json* items = member(pack, {"items", "tasks"}); items && items->is_array()) {
            for (std::size_t i = 0; i < items->size(); ++i) out.push_back({&(*items)[i], at(at(path, "items"), i), ""});
        } else if (pack.is_object()) {
            for (auto it = pack.begin(); it != pack.end(); ++it) out.push_back({&*it, at(path, it.key()), it.key()});
        } else {
            m_tasks.note(path, std::string("a pack must be a list of items, not ") + type_name(pack) + "; ignored");
        }
        return out;
    }

    // The state key an item is about, and its state (nullptr when the profile has none).
    const data::ProfileState* item_state(const data::Scenario& s, const json& item, const std::string& path,
                                         const std::string& key_hint, std::string& key) {
        key = string_member(item, {"state_key", "key", "target_state"}).value_or(key_hint);
        if (key.empty()) {
            m_tasks.note(path, "an item without a state_key; skipped");
            return nullptr;
        }
        const data::ProfileState* st = state(s, key);
        if (!st)
            m_tasks.note(at(path, "state_key"), "state '" + key + "' is not in the profile (" +
                                                    (family_of(key) ? "no checkpoint gives its value" : "its family prefix is unknown") +
                                                    "); the item is skipped");
        return st;
    }

    // "C2:state_completion:0": probes are numbered per checkpoint and task, in file order.
    std::string probe_id(const std::string& checkpoint, const char* task) {
        return clean_id(checkpoint + ":" + task + ":" + std::to_string(m_probe_count[checkpoint + ":" + task]++));
    }

    // What every task's item opens with: the item unwrapped, its state key, its state and the state's
    // snapshot at checkpoint `position` (nullptr when the checkpoint names none). Empty, with a note,
    // when the item is no object or its state is unknown.
    struct ItemIn {
        const json& item;
        std::string key;
        const data::ProfileState* st = nullptr;
        const data::StateSnapshot* sn = nullptr;
    };
    std::optional<ItemIn> open_item(const data::Scenario& s, std::size_t position, const json& raw_item,
                                    const std::string& path, const std::string& key_hint) {
        const json& item = unwrap(raw_item);
        if (!item.is_object()) {
            m_tasks.note(path, std::string("an item must be an object, not ") + type_name(item) + "; skipped");
            return std::nullopt;
        }
        std::string key;
        const data::ProfileState* st = item_state(s, item, path, key_hint, key);
        if (!st) return std::nullopt;
        return ItemIn{item, std::move(key), st, snapshot(*st, position)};
    }

    void state_completion(data::Scenario& s, const CheckpointIn& c, std::size_t position, const json& raw_item,
                          const std::string& path, const std::string& key_hint) {
        auto in = open_item(s, position, raw_item, path, key_hint);
        if (!in) return;
        const json& item = in->item;
        const std::string& key = in->key;
        const data::ProfileState* st = in->st;
        const data::StateSnapshot* sn = in->sn;
        if (!sn || sn->value.is_null()) {
            m_tasks.note(path, "state '" + key + "' holds no value at checkpoint '" + c.c.id +
                                   "': nothing to complete; the item is skipped");
            return;
        }
        const json* templ = member(item, {"answer_template", "template", "output_template"});
        if (!templ) {
            m_tasks.note(at(path, "answer_template"), "an item without an answer_template; skipped");
            return;
        }
        auto fills = fill_leaves(*templ);
        if (fills.empty()) {
            m_tasks.note(at(path, "answer_template"), "the template has no leaf to fill (\"<fill>\"); the item is skipped");
            return;
        }
        const json* scoring = member(item, {"scoring_points"});
        const Roles roles = roles_of(scoring, at(path, "scoring_points"), key);
        data::Probe p;
        p.id = probe_id(c.c.id, "state_completion");
        p.task = "state_completion";
        p.after_session = c.c.after_session;
        p.checkpoint = c.c.id;
        p.state_key = key;
        p.answer_template = *templ;
        // A scalar state asked through a one-leaf template ({"employer": "<fill>"}) fills it whole.
        const bool whole = !sn->value.is_structured() && fills.size() == 1;
        for (const auto& leaf : fills) {
            const json* expected = value_at(sn->value, leaf.pointer);
            if (!expected && (leaf.path == "$" || whole)) expected = &sn->value;
            if (!expected) {
                m_tasks.note(at(at(path, "answer_template"), leaf.path),
                             "the state's value at '" + c.c.id + "' has nothing at '" + leaf.path + "'; the field is left out");
                continue;
            }
            p.fields.push_back(make_field(leaf.path, *expected, roles, sn, leaf.path));
        }
        if (p.fields.empty()) {
            m_tasks.note(path, "no field of the template has a gold value; the item is skipped");
            return;
        }
        if (auto q = string_member(item, {"question_text", "question", "prompt"})) {
            p.question = *q;
        } else {
            p.question = "Fill in what the user's " + key + " is as of " + c.c.as_of.substr(0, 10) + ".";
            m_tasks.note(at(path, "question_text"), "an item without question_text; asked as \"" + p.question + "\"");
        }
        p.expected = sn->value;
        p.answer = as_text(sn->value);
        p.meta = {{"source_path", path}};
        if (const json* id = member(item, {"item_id", "task_id", "id"})) p.meta["source_id"] = *id;
        if (scoring) p.meta["scoring_points"] = *scoring;
        change_of(*st, position, p);
        keep_unknown(item, path, {"state_key", "key", "target_state", "answer_template", "template", "output_template",
                                  "question_text", "question", "prompt", "scoring_points", "item_id", "task_id", "id",
                                  "retrieval_query", "pack_source", "pack_identity",
                                  "task_type", "family", "domain"},
                     p);
        s.probes.push_back(std::move(p));
    }

    void service(data::Scenario& s, const CheckpointIn& c, std::size_t position, const json& raw_item,
                 const std::string& path, const std::string& key_hint, const std::string& kind) {
        auto in = open_item(s, position, raw_item, path, key_hint);
        if (!in) return;
        const json& item = in->item;
        const std::string& key = in->key;
        const data::ProfileState* st = in->st;
        const data::StateSnapshot* sn = in->sn;
        data::Probe p;
        p.id = probe_id(c.c.id, "personalized_service");
        p.task = "personalized_service";
        p.after_session = c.c.after_session;
        p.checkpoint = c.c.id;
        p.state_key = key;
        const auto scenario = string_member(item, {"scenario"});
        const auto instruction = string_member(item, {"task_instruction", "instruction"});
        if (!scenario && !instruction) {
            m_tasks.note(path, "a service item without scenario or task_instruction; skipped");
            return;
        }
        p.question = scenario.value_or("");
        if (instruction) p.question += (p.question.empty() ? "" : "\n\n") + *instruction;
        p.meta = {{"source_path", path}, {"service_kind", kind}};
        if (const auto family = string_member(item, {"service_family"})) p.meta["service_kind"] = *family;
        if (const json* id = member(item, {"item_id", "task_id", "qa_id", "id"})) p.meta["source_id"] = *id;
        if (const json* gold = member(item, {"gold_memory_evidence_app_log_ids"})) p.meta["gold_memory_evidence_app_log_ids"] = *gold;
        if (const json* points = member(item, {"answer_scoring_points"})) p.meta["answer_scoring_points"] = *points;
        if (const json* templ = member(item, {"output_template", "answer_template"})) {
            // A form: fill leaves, expected from reference_output, role and state field from anchors.
            const json* reference = member(item, {"reference_output"});
            if (!reference) {
                m_tasks.note(at(path, "reference_output"), "a form without reference_output: no gold values; skipped");
                return;
            }
            const json* anchors = member(item, {"reference_anchors"});
            const Roles roles = roles_of(anchors, at(path, "reference_anchors"), key);
            p.answer_template = *templ;
            for (const auto& leaf : fill_leaves(*templ)) {
                const json* expected = value_at(*reference, leaf.pointer);
                if (!expected && leaf.path == "$") expected = reference;
                if (!expected) {
                    m_tasks.note(at(at(path, "reference_output"), leaf.path),
                                 "reference_output has nothing at '" + leaf.path + "'; the field is left out");
                    continue;
                }
                const auto sp = roles.state_path.find(leaf.path);
                p.fields.push_back(make_field(leaf.path, *expected, roles, sn,
                                              sp == roles.state_path.end() ? "$" : sp->second));
            }
            p.expected = *reference;
            p.answer = as_text(*reference);
            if (anchors) p.meta["reference_anchors"] = *anchors;
        } else {
            // A reminder: a correct message uses every leaf of the state's value.
            if (!sn || sn->value.is_null()) {
                m_tasks.note(path, "state '" + key + "' holds no value at checkpoint '" + c.c.id +
                                       "': the reminder has nothing to use; skipped");
                return;
            }
            for (const auto& leaf : value_leaves(sn->value))
                if (!leaf.value->is_null()) p.fields.push_back(make_field(leaf.path, *leaf.value, Roles{}, sn, leaf.path));
            if (const json* ref = member(item, {"reference_answer", "reference"})) p.answer = as_text(*ref);
            else m_tasks.note(at(path, "reference_answer"), "a reminder without reference_answer");
        }
        if (p.fields.empty()) {
            m_tasks.note(path, "the item has no field to grade; skipped");
            return;
        }
        if (!sn || sn->value.is_null())
            m_tasks.note(path, "state '" + key + "' holds no value at checkpoint '" + c.c.id + "': the fields have no evidence");
        if (scenario) p.meta["scenario"] = *scenario;
        if (instruction) p.meta["task_instruction"] = *instruction;
        change_of(*st, position, p);
        keep_unknown(item, path, {"state_key", "key", "target_state", "scenario", "task_instruction", "instruction",
                                  "output_template", "answer_template", "reference_output", "reference_anchors",
                                  "reference_answer", "reference", "item_id", "task_id", "id", "task_type", "family",
                                  "domain", "qa_id", "service_family", "retrieval_query", "answer_scoring_points",
                                  "gold_memory_evidence_app_log_ids", "item_validation", "scoring_validation",
                                  "pack_source", "pack_identity"},
                     p);
        s.probes.push_back(std::move(p));
    }

    // Keys of an item beyond the mapped ones: noted, kept in the probe's meta.
    void keep_unknown(const json& item, const std::string& path, std::initializer_list<std::string_view> known,
                      data::Probe& p) {
        for (auto it = item.begin(); it != item.end(); ++it) {
            if (std::find(known.begin(), known.end(), it.key()) != known.end()) {
                if (it.key() == "task_type" || it.key() == "family" || it.key() == "domain") p.meta[it.key()] = it.value();
                continue;
            }
            p.meta["unmapped"][it.key()] = it.value();
            m_tasks.note_capped("unknown item key", at(path, it.key()),
                                "unknown item key '" + it.key() + "'; kept verbatim in the probe's meta.unmapped");
        }
    }

    void build_probes(data::Scenario& s) {
        for (std::size_t position = 0; position < m_checkpoints.size(); ++position) {
            const CheckpointIn& c = m_checkpoints[position];
            for (auto it = c.j->begin(); it != c.j->end(); ++it) {
                const std::string& k = it.key();
                const std::string kpath = at(c.path, k);
                if (it->is_null()) continue;
                if (k == "state_completion_pack") {
                    for (const auto& [item, ipath, key] : items_of(*it, kpath))
                        state_completion(s, c, position, *item, ipath, key);
                } else if (k == "personalized_service_pack" && it->is_object() && !it->contains("items") &&
                           !it->contains("tasks")) {
                    // Sub-packs by kind: {"habit_reminder": [...], "preference_service": [...]}.
                    for (auto sub = it->begin(); sub != it->end(); ++sub)
                        for (const auto& [item, ipath, key] : items_of(*sub, at(kpath, sub.key())))
                            service(s, c, position, *item, ipath, key, sub.key());
                } else if (k == "rq3_apply_service_qa") {
                    // DynamicMem's Personalized Service (Task C): each item names its service_family.
                    for (const auto& [item, ipath, key] : items_of(*it, kpath))
                        service(s, c, position, *item, ipath, key, "rq3_apply");
                } else if (k == "personalized_service_pack" || text::ends_with(k, "_pack")) {
                    const std::string kind = k == "personalized_service_pack" ? "service" : k.substr(0, k.size() - 5);
                    for (const auto& [item, ipath, key] : items_of(*it, kpath))
                        service(s, c, position, *item, ipath, key, kind);
                }
            }
        }
        for (auto& p : s.probes) {
            // A service item's own kind, when it names one, is clearer than its pack's.
            if (p.task == "personalized_service" && p.meta.contains("task_type") && p.meta["task_type"].is_string())
                p.meta["service_kind"] = p.meta["task_type"];
        }
    }

    std::string m_user;
    FileNotes m_tasks;
    FileNotes m_logs_notes;
    LogReader m_reader;
    std::vector<CheckpointIn> m_checkpoints;
    std::map<std::string, std::size_t> m_by_raw;  // raw log id -> index in the sorted logs
    std::vector<std::size_t> m_session_of;        // sorted log index -> session index
    std::map<std::string, std::size_t> m_probe_count;
    json m_golden = json::object();
    json m_header = json::object();  // DynamicMem's top-level bookkeeping (meta.dynamicmem)
};

// The imported scenario must keep every structural rule; a break is a bug, but it costs one user.
std::optional<Refusal> checked(const data::Scenario& s, const std::string& file) {
    std::vector<data::Violation> violations;
    data::validate_structure(s, 0, violations);
    if (violations.empty()) return std::nullopt;
    return Refusal{file, violations.front().field,
                   "the imported scenario breaks a structural rule (" + violations.front().message + "); please report this"};
}

// ---------------------------------------------------------------------------------------------
// Reading the files.

// Thrown from the streaming parser's callback to stop it.
struct StreamStop {
    std::string message;
};

// Streams `file` into `reader`: entries are handed over one by one and dropped from the tree, so
// memory holds one entry at a time (plus what the scenario keeps of each).
std::optional<std::string> stream_logs(const std::string& file, LogReader& reader) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return "cannot open the file";
    // The containers open around the value being parsed: true for an object. Entries are the
    // values completed directly inside the root list, or inside the list under a rows key of the
    // root object; a root object's member that looks like an entry is one too (keyed by id).
    std::vector<bool> open;
    std::string root_key;  // the last key read at the root object's level
    std::size_t index = 0;
    bool found = false, root_object = false;
    auto entry_done = [&](json& parsed) {
        if (open.size() == 1 && !open[0]) {
            reader.row(parsed, at("", index++));
            found = true;
            return false;
        }
        if (open.size() == 2 && open[0] && !open[1] && rows_key(root_key)) {
            reader.row(parsed, at(root_key, index++));
            found = true;
            return false;
        }
        if (open.size() == 1 && open[0] && looks_like_entry(parsed)) {
            reader.row(parsed, root_key, root_key);
            found = true;
            return false;
        }
        return true;
    };
    try {
        json root = json::parse(in, [&](int depth, json::parse_event_t event, json& parsed) -> bool {
            switch (event) {
                case json::parse_event_t::object_start:
                case json::parse_event_t::array_start:
                    if (static_cast<std::size_t>(depth) >= data::k_max_json_depth)
                        throw StreamStop{"nesting deeper than " + std::to_string(data::k_max_json_depth)};
                    if (open.empty()) root_object = event == json::parse_event_t::object_start;
                    open.push_back(event == json::parse_event_t::object_start);
                    if (open.size() == 2 && root_object) index = 0;
                    return true;
                case json::parse_event_t::key:
                    if (open.size() == 1 && parsed.is_string()) root_key = parsed.get<std::string>();
                    return true;
                case json::parse_event_t::object_end:
                case json::parse_event_t::array_end:
                    if (!open.empty()) open.pop_back();
                    return open.empty() ? true : entry_done(parsed);
                case json::parse_event_t::value:
                    return open.empty() ? true : entry_done(parsed);
            }
            return true;
        });
        if (root.is_object()) {
            for (auto it = root.begin(); it != root.end(); ++it)
                if (!(rows_key(it.key()) && it->is_array())) reader.other(it.key(), *it);
        } else if (!root.is_array()) {
            return std::string("the app log must be a list of entries (or an object holding one), not ") + type_name(root);
        }
    } catch (const StreamStop& stop) {
        return stop.message;
    } catch (const json::parse_error& e) {
        return "not valid JSON: " + parser_message(e.what());
    } catch (const json::exception& e) {
        return "not readable JSON: " + parser_message(e.what());
    }
    if (!found && reader.rows() == 0) return "no log entries: neither a list nor an object holding one under 'logs' or 'app_logs'";
    return std::nullopt;
}

Result<json> read_task_packs(const std::string& file) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(file, ec);
    if (ec) return make_error(ErrorKind::io, "cannot read its size: " + ec.message(), file);
    if (size > k_max_task_bytes)
        return make_error(ErrorKind::invalid_input, std::to_string(size) + " bytes; task packs over 256 MiB are not read", file);
    auto content = data::read_file(file);
    if (!content) return content.error();
    if (data::json_nesting_depth(*content, data::k_max_json_depth) > data::k_max_json_depth)
        return make_error(ErrorKind::invalid_input, "nesting deeper than " + std::to_string(data::k_max_json_depth), file);
    try {
        return json::parse(*content);
    } catch (const json::parse_error& e) {
        return make_error(ErrorKind::invalid_input, "not valid JSON: " + parser_message(e.what()), file);
    } catch (const json::exception& e) {
        return make_error(ErrorKind::invalid_input, "not readable JSON: " + parser_message(e.what()), file);
    }
}

// The name a folder goes by: its last component, even when written with a trailing slash.
std::string folder_name(const std::string& dir) {
    fs::path p = fs::path(dir).lexically_normal();
    if (p.filename().empty()) p = p.parent_path();
    std::string name = p.filename().string();
    if (name.empty() || name == "." || name == "..") {
        std::error_code ec;
        name = fs::absolute(p, ec).lexically_normal().filename().string();
    }
    return name;
}

bool is_user_folder(const fs::path& dir) {
    std::error_code ec;
    return fs::exists(dir / k_task_file, ec) || fs::exists(dir / k_log_file, ec);
}

// One user folder into `out`: its scenario, or a refusal note.
void import_user_folder(const fs::path& dir, ImportResult& out, std::set<std::string>& ids, std::string& first_refusal) {
    const std::string task_file = (dir / k_task_file).string();
    const std::string log_file = (dir / k_log_file).string();
    auto refuse = [&](const std::string& file, const std::string& where, const std::string& why) {
        out.notes.push_back({file, where, "file refused: " + why + "; user '" + folder_name(dir.string()) + "' not imported"});
        ++out.files_refused;
        if (first_refusal.empty()) first_refusal = file + (where.empty() ? "" : ": " + where) + ": " + why;
    };
    std::error_code ec;
    for (const auto& file : {task_file, log_file})
        if (!fs::is_regular_file(file, ec)) {
            ++out.files_read;
            refuse(file, "", "missing: a DynamicMem user folder holds task_packs.json and app_log_large.json");
            return;
        }
    out.files_read += 2;
    try {
        auto packs = read_task_packs(task_file);
        if (!packs) {
            refuse(task_file, "", packs.error().message);
            return;
        }
        const std::uintmax_t log_size = fs::file_size(log_file, ec);
        if (ec) {
            refuse(log_file, "", "cannot read its size: " + ec.message());
            return;
        }
        if (log_size > k_max_log_bytes) {
            refuse(log_file, "", std::to_string(log_size) + " bytes; app logs over 4 GiB are not read");
            return;
        }
        std::vector<ImportNote> notes;
        UserImport user(folder_name(dir.string()), task_file, log_file, notes);
        if (auto why = stream_logs(log_file, user.reader())) {
            refuse(log_file, "", *why);
            return;
        }
        data::Scenario s;
        auto refusal = user.run(*packs, s);
        if (!refusal) refusal = checked(s, task_file);
        if (refusal) {
            refuse(refusal->file, refusal->path, refusal->message);
            return;
        }
        out.notes.insert(out.notes.end(), notes.begin(), notes.end());
        if (!ids.insert(s.id).second) {
            std::string unique;
            for (std::size_t n = 2; unique.empty() || ids.count(unique); ++n) unique = clean_id(s.id + "-" + std::to_string(n));
            out.notes.push_back({task_file, "", "scenario id '" + s.id + "' is already used by another user; imported as '" + unique + "'"});
            s.id = unique;
            ids.insert(unique);
        }
        out.scenarios.push_back(std::move(s));
    } catch (const std::exception& e) {
        // Never expected; one user's failure must not end the import.
        refuse(task_file, "", std::string("internal error while importing: ") + e.what());
    }
}

}  // namespace

Result<data::Scenario> import_dynamicmem_user(const json& task_packs, const json& app_logs, const std::string& user,
                                              const std::string& task_file, const std::string& log_file,
                                              std::vector<ImportNote>& notes) {
    std::vector<ImportNote> local;
    try {
        // The files' text is checked for depth before parsing; parsed values get the same check.
        if (deeper_than(task_packs, data::k_max_json_depth))
            return make_error(ErrorKind::invalid_input, "nesting deeper than " + std::to_string(data::k_max_json_depth), task_file);
        if (deeper_than(app_logs, data::k_max_json_depth))
            return make_error(ErrorKind::invalid_input, "nesting deeper than " + std::to_string(data::k_max_json_depth), log_file);
        UserImport in(user, task_file, log_file, local);
        std::string why;
        if (!read_parsed_logs(app_logs, in.reader(), why)) return make_error(ErrorKind::invalid_input, why, log_file);
        data::Scenario s;
        auto refusal = in.run(task_packs, s);
        if (!refusal) refusal = checked(s, task_file);
        if (refusal)
            return make_error(ErrorKind::invalid_input, refusal->message,
                              refusal->file + (refusal->path.empty() ? "" : ": " + refusal->path));
        notes.insert(notes.end(), local.begin(), local.end());
        return s;
    } catch (const std::exception& e) {
        return make_error(ErrorKind::internal, std::string("internal error while importing: ") + e.what(), task_file);
    }
}

Result<ImportResult> import_dynamicmem(const std::string& path) {
    std::error_code ec;
    if (!fs::is_directory(path, ec))
        return make_error(ErrorKind::not_found,
                          "not a directory; expected a DynamicMem user folder (task_packs.json, app_log_large.json) "
                          "or a folder of them",
                          path);
    ImportResult out;
    std::set<std::string> ids;
    std::string first_refusal;
    if (is_user_folder(path)) {
        import_user_folder(path, out, ids, first_refusal);
    } else {
        std::vector<fs::path> entries;
        for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
        if (ec) return make_error(ErrorKind::io, "cannot list the folder: " + ec.message(), path);
        std::sort(entries.begin(), entries.end(),
                  [](const fs::path& a, const fs::path& b) { return a.filename().string() < b.filename().string(); });
        for (const auto& entry : entries) {
            if (!fs::is_directory(entry, ec)) {
                out.notes.push_back({entry.string(), "", "not a user folder; ignored"});
                continue;
            }
            if (!is_user_folder(entry)) {
                out.notes.push_back({entry.string(), "", "a folder without task_packs.json or app_log_large.json; ignored"});
                continue;
            }
            import_user_folder(entry, out, ids, first_refusal);
        }
    }
    if (out.scenarios.empty())
        return make_error(ErrorKind::invalid_input,
                          first_refusal.empty() ? "no DynamicMem user folder (task_packs.json + app_log_large.json) found"
                                                : "no user imported; the first refusal: " + first_refusal,
                          path);
    return out;
}

}  // namespace memfail::suites::dynamic

// SPDX-License-Identifier: MIT
// WRIT scenario files -> memfail/2 scenarios. Sessions and messages as they are (message ids
// "<session>:<index>", WRIT's provenance handle); memory_events become the ledger, each value tied
// to the message that states it; the probe keeps its rubric, temporal query and ground truth and gets
// evidence from the ledger. Whatever cannot be mapped as it stands becomes an ImportNote naming the
// file and JSON path (unknown keys are also kept, verbatim, in the scenario's meta.unmapped); a file
// that cannot be a scenario at all is refused and the others still import. docs/DATASETS.md
// ("Importing WRIT") gives the mapping table.
#include <memfail/suites/writ/import_writ.hpp>

#include <memfail/core/hash.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/grade/evidence.hpp>
#include <memfail/suites/import_json.hpp>
#include <memfail/suites/writ/generate.hpp>
#include <memfail/suites/writ/values.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string_view>

namespace memfail::suites::writ {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Larger files are refused unread: a WRIT scenario is kilobytes, not megabytes.
constexpr std::uintmax_t k_max_file_bytes = 64ull * 1024 * 1024;
constexpr std::size_t k_npos = static_cast<std::size_t>(-1);

// WRIT's documented failure modes (its README's table and schema); the release uses many more.
const std::set<std::string>& documented_failure_modes() {
    static const std::set<std::string> modes = {
        "stale_memory",    "missing_memory",   "incorrect_generalization", "memory_hallucination",
        "constraint_violation", "retrieval_miss", "over_retention",       "false_confidence",
        "silent_drift",    "provenance_loss",
        "hallucinated_memory"};  // the schema's spelling of memory_hallucination
    return modes;
}

// ---------------------------------------------------------------------------------------------
// Small helpers over JSON values.

using import_json::as_text;
using import_json::at;
using import_json::compact;
using import_json::deeper_than;
using import_json::parser_message;
using import_json::shown;
using import_json::type_name;

// The member `key` of `obj` when `obj` is an object holding it with a non-null value.
const json* member(const json& obj, std::string_view key) {
    if (!obj.is_object()) return nullptr;
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
}


// The same on JSON text before parsing it (data::json_nesting_depth: one pass, no recursion).
bool text_deeper_than(std::string_view text, std::size_t limit) { return data::json_nesting_depth(text, limit) > limit; }

using data::clean_id;

// A session reference (session_id, introduced_in, probe.session, source_session): a whole number as
// its decimal digits, a string as a cleaned id. Anything else names no session.
std::optional<std::string> session_ref(const json& v) {
    if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15)
            return std::to_string(static_cast<long long>(d));
        return std::nullopt;
    }
    if (v.is_string()) {
        const std::string s(text::trim(v.get_ref<const std::string&>()));
        if (!s.empty()) return clean_id(s);
    }
    return std::nullopt;
}

std::string message_id(const std::string& session, std::size_t index) {
    return clean_id(session + ":" + std::to_string(index));
}

// A number written as text: "5000", "$5,000", "5,000 USD", "12.5", "5k", "1.2 million". Nothing else.
std::optional<double> number_in_text(std::string_view s) {
    std::string t(text::trim(s));
    bool negative = false;
    if (!t.empty() && t[0] == '-') {
        negative = true;
        t.erase(0, 1);
    }
    for (const std::string_view currency : {"$", "\xE2\x82\xAC", "\xC2\xA3", "USD", "EUR", "GBP"})
        if (text::starts_with(t, currency)) {
            t = std::string(text::trim(std::string_view(t).substr(currency.size())));
            break;
        }
    if (!negative && !t.empty() && t[0] == '-') {
        negative = true;
        t.erase(0, 1);
    }
    std::string digits;
    std::size_t i = 0;
    for (; i < t.size(); ++i) {
        const char c = t[i];
        if ((c >= '0' && c <= '9') || c == '.') digits += c;
        else if (c == ',' && i > 0 && i + 1 < t.size() && t[i + 1] >= '0' && t[i + 1] <= '9') continue;
        else break;
    }
    if (digits.empty() || digits == ".") return std::nullopt;
    double value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    const std::string rest = text::to_lower(text::trim(std::string_view(t).substr(i)));
    if (rest == "k" || rest == "thousand") value *= 1e3;
    else if (rest == "m" || rest == "million") value *= 1e6;
    else if (!(rest.empty() || rest == "usd" || rest == "dollars" || rest == "eur" || rest == "euros"))
        return std::nullopt;
    if (!std::isfinite(value)) return std::nullopt;
    return negative ? -value : value;
}

std::optional<double> number_of(const json& v) {
    if (v.is_number()) {
        const double d = v.get<double>();
        return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
    }
    if (v.is_string()) return number_in_text(v.get_ref<const std::string&>());
    return std::nullopt;
}

// Two values are the same when equal as JSON, equal as text after normalisation, or the same
// number however written ("$5,000" and 5000).
bool same_value(const json& a, const json& b) {
    if (a.is_null() || b.is_null()) return false;
    if (a == b) return true;
    if (a.is_structured() || b.is_structured()) return false;
    const std::string na = text::normalize(as_text(a)), nb = text::normalize(as_text(b));
    if (!na.empty() && na == nb) return true;
    const auto x = number_of(a), y = number_of(b);
    return x && y && *x == *y;
}

// ---------------------------------------------------------------------------------------------
// Which ledger events an expected value is about.

// The leaf values of a JSON value (strings and numbers, as text), objects and arrays walked.
void leaf_texts(const json& v, std::vector<std::string>& out) {
    if (v.is_string()) out.push_back(v.get<std::string>());
    else if (v.is_number()) out.push_back(as_text(v));
    else if (v.is_structured())
        for (const auto& x : v) leaf_texts(x, out);
}

// A value's canonical text (the evidence matcher's), its leaves joined by a separator no phrase crosses.
std::string canonical_of(const json& v) {
    std::vector<std::string> leaves;
    leaf_texts(v, leaves);
    std::string out;
    for (const auto& l : leaves) {
        const std::string c = grade::evidence::canonical(l);
        if (c.empty()) continue;
        if (!out.empty()) out += " | ";
        out += c;
    }
    return out;
}

// Whether `value` is a part of the expected value whose canonical text is `expected`: a string or
// number found in it at word boundaries ("$115,000" in "$115,000 base + $5,000 bonus target",
// "Austin, TX" in "Acme Corp, in Austin, TX"); an object or array when most of its leaves are.
bool part_of(const json& value, const std::string& expected) {
    if (value.is_null() || expected.empty()) return false;
    if (!value.is_structured()) {
        const std::string c = grade::evidence::canonical(as_text(value));
        return c.size() >= 2 && text::normalized_contains(expected, c);
    }
    std::vector<std::string> leaves;
    leaf_texts(value, leaves);
    std::size_t counted = 0, found = 0;
    for (const auto& l : leaves) {
        const std::string c = grade::evidence::canonical(l);
        if (c.size() < 2) continue;
        ++counted;
        if (text::normalized_contains(expected, c)) ++found;
    }
    return counted > 0 && found * 2 > counted;
}

// Whether an event's id names a part of the expected value: every word of the id but a generic
// prefix ("task_cms_migration" in "CMS migration: completed") occurs in it.
bool id_names_part(const std::string& id, const std::string& expected) {
    const std::vector<std::string> words = id_words(id);
    return !words.empty() && std::all_of(words.begin(), words.end(), [&](const std::string& x) {
               return text::normalized_contains(expected, x);
           });
}

// Whether a text value and a text expected value say the same thing up to annotations: one's lead
// found in the other ("$120K" in "$120K base (user stated ...)", "Acme Corporation" in "1 distinct
// client company (Acme / Acme Corp / Acme Corporation ...)"), or their leads made of nearly the same
// words (at least 80% shared, three words or more).
bool same_up_to_annotations(const json& value, const json& expected) {
    if (!value.is_string() || !expected.is_string()) return false;
    const std::string& v = value.get_ref<const std::string&>();
    const std::string& x = expected.get_ref<const std::string&>();
    const std::string vl = grade::evidence::canonical(lead_of(v)), xl = grade::evidence::canonical(lead_of(x));
    if (vl.size() < 3 || xl.size() < 3) return false;
    if (text::normalized_contains(grade::evidence::canonical(x), vl) ||
        text::normalized_contains(grade::evidence::canonical(v), xl))
        return true;
    const auto a = text::split(vl, ' '), b = text::split(xl, ' ');
    const std::set<std::string> sa(a.begin(), a.end()), sb(b.begin(), b.end());
    std::size_t shared = 0;
    for (const auto& w : sa) shared += sb.count(w);
    const std::size_t all = sa.size() + sb.size() - shared;
    return shared >= 3 && shared * 5 >= all * 4;
}

// Every value an event had or has: its history, then its own `value`.
template <class F>
bool any_value(const data::LedgerEvent& e, F&& test) {
    for (const auto& r : e.history)
        if (test(r.value)) return true;
    return test(e.value);
}

// The targets of an expected value, by the first rule that finds any: the events whose value (now
// or in their history) is it; those whose value says it up to annotations; those holding one of its
// parts (an object's leaves, a compound text's pieces) or named by it; those whose values name a term
// of the probe's constraint check ("declined cheese" for must_not_contain "cheese").
std::vector<std::string> targets_of(const data::Scenario& s, const json& expected,
                                    const std::vector<std::string>& constraint_terms) {
    std::vector<std::string> out;
    auto collect = [&](auto&& test) {
        for (const auto& e : s.ledger)
            if (test(e)) out.push_back(e.id);
        return !out.empty();
    };
    if (collect([&](const data::LedgerEvent& e) {
            return any_value(e, [&](const json& v) { return same_value(v, expected) || (v.is_structured() && v == expected); });
        }))
        return out;
    if (collect([&](const data::LedgerEvent& e) {
            return any_value(e, [&](const json& v) { return same_up_to_annotations(v, expected); });
        }))
        return out;
    const std::string canon = canonical_of(expected);
    if (collect([&](const data::LedgerEvent& e) {
            return any_value(e, [&](const json& v) { return part_of(v, canon); }) || id_names_part(e.id, canon);
        }))
        return out;
    collect([&](const data::LedgerEvent& e) {
        return any_value(e, [&](const json& v) {
            const std::string c = canonical_of(v);
            return std::any_of(constraint_terms.begin(), constraint_terms.end(), [&](const std::string& t) {
                const std::string ct = grade::evidence::canonical(t);
                return ct.size() >= 3 && text::normalized_contains(c, ct);
            });
        });
    });
    return out;
}

// ---------------------------------------------------------------------------------------------
// One file's import: the notes it makes and what it keeps unmapped.

class FileImport {
public:
    FileImport(const std::string& file, std::vector<ImportNote>& notes) : m_file(file), m_notes(notes) {}

    void note(const std::string& path, std::string message) { m_notes.push_back({m_file, path, std::move(message)}); }

    // Keeps `value` verbatim under meta.unmapped[path] and says so.
    void keep(const std::string& path, const json& value, const std::string& what) {
        m_unmapped[path] = value;
        note(path, what + "; kept verbatim in meta.unmapped");
    }

    // Notes (and keeps) every key of `obj` outside `known`.
    void unknown_keys(const json& obj, const std::string& path, std::initializer_list<std::string_view> known) {
        if (!obj.is_object()) return;
        for (auto it = obj.begin(); it != obj.end(); ++it)
            if (std::find(known.begin(), known.end(), it.key()) == known.end())
                keep(at(path, it.key()), it.value(), "unknown key '" + it.key() + "'");
    }

    // Strings of a list (numbers and booleans as written; empty strings and nulls skipped). A single
    // string is one element; nested values are written as compact JSON. Each oddity is noted.
    std::vector<std::string> strings(const json& v, const std::string& path) {
        std::vector<std::string> out;
        if (v.is_null()) return out;
        if (v.is_string()) {
            note(path, "a single string where a list was expected; taken as a list of one");
            if (!text::trim(v.get_ref<const std::string&>()).empty()) out.push_back(v.get<std::string>());
            return out;
        }
        if (!v.is_array()) {
            if (v.is_object()) keep(path, v, "an object where a list of strings was expected");
            else {
                note(path, std::string(type_name(v)) + " where a list was expected; taken as a list of one");
                out.push_back(as_text(v));
            }
            return out;
        }
        bool skipped = false, nested = false;
        for (const auto& item : v) {
            if (item.is_string()) {
                if (text::trim(item.get_ref<const std::string&>()).empty()) skipped = true;
                else out.push_back(item.get<std::string>());
            } else if (item.is_null()) {
                skipped = true;
            } else {
                if (item.is_structured()) nested = true;
                out.push_back(as_text(item));
            }
        }
        if (skipped) note(path, "empty or null elements skipped");
        if (nested) note(path, "objects or lists among the elements; each written as compact JSON");
        return out;
    }

    const json& unmapped() const { return m_unmapped; }

private:
    const std::string& m_file;
    std::vector<ImportNote>& m_notes;
    json m_unmapped = json::object();
};

Error refusal(const std::string& path, std::string message) {
    return make_error(ErrorKind::invalid_input, std::move(message), path);
}

// ---------------------------------------------------------------------------------------------
// Sessions.

struct SessionTable {
    std::map<std::string, std::size_t> position;  // session id -> index in scenario.sessions
    std::size_t find(const std::string& id) const {
        const auto it = position.find(id);
        return it == position.end() ? k_npos : it->second;
    }
};

Result<void> import_sessions(const json& j, FileImport& in, data::Scenario& s, SessionTable& table) {
    const json* sessions = member(j, "sessions");
    if (!sessions) return refusal("sessions", "no sessions: a scenario needs its conversation");
    if (!sessions->is_array()) return refusal("sessions", std::string("must be a list, not ") + type_name(*sessions));
    if (sessions->empty()) return refusal("sessions", "the list of sessions is empty");
    for (std::size_t i = 0; i < sessions->size(); ++i) {
        const json& sj = (*sessions)[i];
        const std::string path = at("sessions", i);
        if (!sj.is_object()) return refusal(path, std::string("a session must be an object, not ") + type_name(sj));
        in.unknown_keys(sj, path, {"session_id", "timestamp", "messages"});
        data::Session session;
        const json* sid = member(sj, "session_id");
        const auto id = sid ? session_ref(*sid) : std::nullopt;
        if (!id) return refusal(at(path, "session_id"), "a session needs its session_id (a number or a string)");
        if (sid->is_string() && *id != text::trim(sid->get_ref<const std::string&>()))
            in.note(at(path, "session_id"),
                    "session id " + shown(*sid) + " is not a valid id; imported as '" + *id + "'");
        session.id = *id;
        if (table.position.count(session.id))
            return refusal(at(path, "session_id"), "duplicate session id '" + session.id + "'");
        const json* ts = member(sj, "timestamp");
        if (!ts || !ts->is_string() || text::trim(ts->get_ref<const std::string&>()).empty())
            return refusal(at(path, "timestamp"), "a session needs its ISO 8601 timestamp (a string)");
        session.timestamp = std::string(text::trim(ts->get_ref<const std::string&>()));
        const json* messages = member(sj, "messages");
        if (!messages || !messages->is_array())
            return refusal(at(path, "messages"), "a session needs a list of messages");
        for (std::size_t m = 0; m < messages->size(); ++m) {
            const json& mj = (*messages)[m];
            const std::string mpath = at(at(path, "messages"), m);
            if (!mj.is_object()) {
                in.note(mpath, std::string("a message must be an object, not ") + type_name(mj) +
                                   "; skipped (the other messages keep their indices)");
                continue;
            }
            in.unknown_keys(mj, mpath, {"role", "content"});
            const json* role = member(mj, "role");
            if (!role || !role->is_string())
                return refusal(at(mpath, "role"), "a message needs a role (user or assistant)");
            const std::string& r = role->get_ref<const std::string&>();
            if (r == "system")
                in.note(at(mpath, "role"), "a system message; kept, stored like the others");
            else if (r != "user" && r != "assistant")
                return refusal(at(mpath, "role"), "role " + shown(*role) + " is not user, assistant or system");
            const json* content = member(mj, "content");
            if (!content || !content->is_string() || text::trim(content->get_ref<const std::string&>()).empty()) {
                in.note(at(mpath, "content"),
                        "the message has no text; skipped (the other messages keep their indices)");
                continue;
            }
            session.messages.push_back({message_id(session.id, m), r, content->get<std::string>()});
        }
        if (session.messages.empty())
            return refusal(at(path, "messages"), "session '" + session.id + "' has no message with text");
        table.position.emplace(session.id, s.sessions.size());
        s.sessions.push_back(std::move(session));
    }
    return {};
}

// ---------------------------------------------------------------------------------------------
// The ledger.

// The first message of `session` stating one of `mentions` (user messages first, then assistant):
// the message and the mention found, or nulls.
std::pair<const data::Message*, std::string> stating_message(const data::Session& session,
                                                             const std::vector<std::string>& mentions) {
    std::vector<std::string> normalized;
    for (const auto& m : mentions) normalized.push_back(text::normalize(m));
    for (const char* role : {"user", "assistant"})
        for (const auto& message : session.messages) {
            if (message.role != role) continue;
            const std::string content = text::normalize(message.content);
            for (std::size_t i = 0; i < normalized.size(); ++i)
                if (text::normalized_contains(content, normalized[i])) return {&message, mentions[i]};
        }
    return {nullptr, {}};
}

// The first message of a session, user messages first.
const data::Message* first_message(const data::Session& session) {
    for (const auto& m : session.messages)
        if (m.role == "user") return &m;
    return session.messages.empty() ? nullptr : &session.messages.front();
}

// An authority named by one of the source-authority keys of `obj` ("authority", "source_authority",
// "source"); a key naming none of the five is noted and kept.
std::optional<data::Authority> named_authority(const json& obj, const std::string& path, FileImport& in) {
    std::optional<data::Authority> found;
    for (const char* key : {"authority", "source_authority", "source"}) {
        const json* v = member(obj, key);
        if (!v) continue;
        const auto a = v->is_string() ? data::parse_authority(v->get_ref<const std::string&>()) : std::nullopt;
        if (!a) {
            in.keep(at(path, key), *v,
                    shown(*v) + " names no authority (user_stated, user_confirmed, agreed_upon, agent_extracted, "
                                "ai_summarized)");
            continue;
        }
        if (!found) found = a;
    }
    return found;
}

// A session reference of an event that must name a session of the file; empty when absent.
std::string event_session(const json& ej, const char* key, const std::string& path, const SessionTable& table,
                          FileImport& in) {
    const json* v = member(ej, key);
    if (!v) return {};
    const auto id = session_ref(*v);
    if (!id || table.find(*id) == k_npos) {
        in.note(at(path, key), shown(*v) + " names no session of the file; left empty");
        return {};
    }
    return *id;
}

// A history record being imported, with whether its authority was given explicitly (by the record
// or its event) rather than left to the role of the stating message.
struct PendingRecord {
    data::ValueRecord record;
    bool authority_given = false;
};

bool earlier(const PendingRecord& a, const PendingRecord& b) { return a.record.as_of < b.record.as_of; }

// The previous values of an event, each tied to its source session (when it names one of the file).
std::vector<PendingRecord> import_history(const json& ej, const std::string& path, const data::Scenario& s,
                                          const SessionTable& table, std::optional<data::Authority> authority,
                                          FileImport& in) {
    std::vector<PendingRecord> out;
    const json* pv = member(ej, "previous_values");
    if (!pv) return out;
    const std::string hpath = at(path, "previous_values");
    if (!pv->is_array()) {
        in.keep(hpath, *pv, std::string("must be a list, not ") + type_name(*pv));
        return out;
    }
    for (std::size_t h = 0; h < pv->size(); ++h) {
        const json& rj = (*pv)[h];
        const std::string rpath = at(hpath, h);
        if (!rj.is_object()) {
            in.keep(rpath, rj, std::string("a previous value must be an object, not ") + type_name(rj) + "; skipped");
            continue;
        }
        in.unknown_keys(rj, rpath, {"value", "as_of", "source_session", "authority", "source_authority", "source"});
        const json* value = member(rj, "value");
        if (!value) {
            in.note(at(rpath, "value"), "a previous value without a value; skipped");
            continue;
        }
        PendingRecord p;
        p.record.value = *value;
        if (member(rj, "source_session"))
            p.record.session_id = event_session(rj, "source_session", rpath, table, in);
        else
            in.note(at(rpath, "source_session"), "no source session: the value cites no message");
        const json* as_of = member(rj, "as_of");
        if (as_of && as_of->is_string() && !text::trim(as_of->get_ref<const std::string&>()).empty()) {
            p.record.as_of = std::string(text::trim(as_of->get_ref<const std::string&>()));
        } else if (!p.record.session_id.empty()) {
            p.record.as_of = s.sessions[table.find(p.record.session_id)].timestamp;
            in.note(at(rpath, "as_of"), (as_of ? shown(*as_of) + " is not a timestamp" : std::string("no as_of")) +
                                            "; taken from session '" + p.record.session_id + "'");
        } else {
            in.note(at(rpath, "as_of"), (as_of ? shown(*as_of) + " is not a timestamp" : std::string("no as_of")) +
                                            "; taken from the introducing session");
        }
        const auto own = named_authority(rj, rpath, in);
        if (own || authority) {
            p.record.authority = own ? *own : *authority;
            p.authority_given = true;
        }
        out.push_back(std::move(p));
    }
    return out;
}

void import_ledger(const json& j, FileImport& in, data::Scenario& s, const SessionTable& table) {
    const json* events = member(j, "memory_events");
    if (!events) {
        in.note("memory_events", "no memory_events: the scenario's ledger is empty");
        return;
    }
    if (!events->is_array()) {
        in.keep("memory_events", *events, std::string("must be a list, not ") + type_name(*events));
        return;
    }
    std::set<std::string> ids;
    for (std::size_t i = 0; i < events->size(); ++i) {
        const json& ej = (*events)[i];
        const std::string path = at("memory_events", i);
        if (!ej.is_object()) {
            in.keep(path, ej, std::string("an event must be an object, not ") + type_name(ej) + "; skipped");
            continue;
        }
        in.unknown_keys(ej, path,
                        {"id", "type", "value", "introduced_in", "updated_in", "retracted_in", "should_persist",
                         "previous_values", "authority", "source_authority", "source", "description", "aliases"});
        data::LedgerEvent e;
        const json* id = member(ej, "id");
        const std::string raw_id =
            id && (id->is_string() || id->is_number()) ? std::string(text::trim(as_text(*id))) : std::string{};
        e.id = clean_id(raw_id);
        if (e.id.empty()) {
            e.id = "event-" + std::to_string(i + 1);
            in.note(at(path, "id"), "the event has no usable id; named '" + e.id + "'");
        } else if (raw_id != e.id) {
            in.note(at(path, "id"), "event id " + shown(*id) + " is not a valid id; imported as '" + e.id + "'");
        }
        if (!ids.insert(e.id).second) {
            std::string unique = clean_id(e.id + "-" + std::to_string(i + 1));
            for (std::size_t n = 2; ids.count(unique); ++n)
                unique = clean_id(e.id + "-" + std::to_string(i + 1) + "-" + std::to_string(n));
            in.note(at(path, "id"), "duplicate event id '" + e.id + "'; this one imported as '" + unique + "'");
            e.id = unique;
            ids.insert(e.id);
        }
        if (const json* type = member(ej, "type")) {
            const auto t =
                type->is_string() ? data::parse_memory_type(type->get_ref<const std::string&>()) : std::nullopt;
            if (t) e.type = *t;
            else in.note(at(path, "type"), "unknown memory type " + shown(*type) + "; imported as explicit");
        } else {
            in.note(at(path, "type"), "no memory type; imported as explicit");
        }
        if (const json* v = member(ej, "value")) e.value = *v;
        if (const json* d = member(ej, "description")) {
            if (d->is_string()) e.description = d->get<std::string>();
            else in.keep(at(path, "description"), *d, "a description that is not a string");
        }
        if (const json* a = member(ej, "aliases")) e.aliases = in.strings(*a, at(path, "aliases"));
        const auto authority = named_authority(ej, path, in);
        std::string introduced = event_session(ej, "introduced_in", path, table, in);
        e.updated_in = event_session(ej, "updated_in", path, table, in);
        e.retracted_in = event_session(ej, "retracted_in", path, table, in);
        if (const json* p = member(ej, "should_persist")) {
            if (p->is_boolean()) e.should_persist = p->get<bool>();
            else in.note(at(path, "should_persist"), shown(*p) + " is not true or false; taken as true");
        }

        std::vector<PendingRecord> history = import_history(ej, path, s, table, authority, in);
        const bool from_value = history.empty();  // its one record is `value`
        if (introduced.empty()) {
            // The session of the earliest value that names one (such a value always has a time).
            const PendingRecord* first = nullptr;
            for (const auto& p : history)
                if (!p.record.session_id.empty() && (!first || earlier(p, *first))) first = &p;
            introduced = first ? first->record.session_id : s.sessions.front().id;
            in.note(at(path, "introduced_in"), "no usable introducing session; taken as '" + introduced + "'");
        }
        e.introduced_in = introduced;
        const data::Session& intro = s.sessions[table.find(introduced)];
        if (history.empty()) {
            if (e.value.is_null()) {
                in.note(path, "event '" + e.id + "' has neither a value nor previous values; not imported");
                continue;
            }
            // WRIT leaves previous_values empty for a value that never changed: it holds from the
            // session that introduced it.
            PendingRecord p;
            p.record.value = e.value;
            p.record.as_of = intro.timestamp;
            p.record.session_id = introduced;
            if (authority) {
                p.record.authority = *authority;
                p.authority_given = true;
            }
            history.push_back(std::move(p));
        }
        for (auto& p : history)
            if (p.record.as_of.empty()) p.record.as_of = intro.timestamp;
        if (!std::is_sorted(history.begin(), history.end(), earlier)) {
            std::stable_sort(history.begin(), history.end(), earlier);
            in.note(at(path, "previous_values"), "not in time order; sorted by as_of");
        }
        // Each value's stating message: the first of its session (user first) holding a mention.
        for (auto& p : history) {
            data::ValueRecord& r = p.record;
            if (!r.session_id.empty()) {
                const auto [message, mention] =
                    stating_message(s.sessions[table.find(r.session_id)], data::value_mentions(r));
                if (message) {
                    r.message_id = message->id;
                    r.mentions = {mention};
                    if (!p.authority_given)
                        r.authority = message->role == "user" ? data::Authority::user_stated
                                                              : data::Authority::agent_extracted;
                } else {
                    in.note(at(path, from_value ? "value" : "previous_values"),
                            "no message of session '" + r.session_id + "' states value " + shown(r.value) + " of '" +
                                e.id + "' verbatim; its message_id is left empty");
                }
            }
            e.history.push_back(std::move(r));
        }
        if (!e.retracted_in.empty())
            if (const data::Message* m = first_message(s.sessions[table.find(e.retracted_in)])) {
                e.retracted_by = m->id;
                in.note(at(path, "retracted_in"), "retracted_by is a guess: the first message of session '" +
                                                      e.retracted_in + "' (" + m->id + ")");
            }
        s.ledger.push_back(std::move(e));
    }
}

// ---------------------------------------------------------------------------------------------
// The rubric.

// Multi-field expectations from a rubric's `fields`: an object as it is; a list of field names picks
// those fields of an object current_value.
json rubric_fields(const json& v, const json& expected, const std::string& path, FileImport& in) {
    if (v.is_object()) return v;
    if (v.is_array() && expected.is_object()) {
        json out = json::object();
        for (const auto& name : v) {
            const auto it = name.is_string() ? expected.find(name.get_ref<const std::string&>()) : expected.end();
            if (it == expected.end()) {
                in.note(path, "field " + shown(name) + " is not a field of current_value; left out");
                continue;
            }
            out[name.get<std::string>()] = *it;
        }
        return out;
    }
    in.keep(path, v, "fields that are neither an object nor names of current_value's fields");
    return json::object();
}

// What keeps `r` from being graded as its kind says (data::validate_structure's rubric rules), or
// empty.
std::string rubric_problem(const data::Rubric& r, const data::Probe& probe) {
    using K = data::RubricKind;
    switch (r.kind) {
        case K::structured:
        case K::contains:
            return r.required.empty() ? "lists no required element" : "";
        case K::constraint:
            return r.must_contain.empty() && r.must_not_contain.empty() ? "has no must_contain or must_not_contain"
                                                                          : "";
        case K::numeric: return r.number ? "" : "has no number (neither in the rubric nor as current_value)";
        case K::entity_count: return r.expected_count ? "" : "gives no count";
        case K::multi_field:
            return r.fields.empty() ? "has no fields (neither in the rubric nor an object current_value)" : "";
        case K::abstention:
            return probe.should_abstain ? "" : "is for a probe that should abstain, and this one should not";
        case K::exact:
        case K::address:
            return probe.expected.is_null() && text::trim(probe.answer).empty() ? "has no expected value" : "";
        case K::semantic: return "";
    }
    return "";
}

// A count from a value: a whole number from 0 to 1000000, or such a number written as text.
std::optional<int> count_of(const json& v) {
    const auto n = number_of(v);
    if (!n || *n < 0 || *n > 1e6 || *n != std::floor(*n)) return std::nullopt;
    return static_cast<int>(*n);
}

// Equivalence groups from a list of lists of names, or an object of name -> other names.
std::vector<std::vector<std::string>> groups_of(const json& v) {
    std::vector<std::vector<std::string>> out;
    auto names = [](const json& list, std::vector<std::string>& into) {
        if (!list.is_array() || list.empty()) return false;
        for (const auto& n : list) {
            if (!n.is_string() || text::trim(n.get_ref<const std::string&>()).empty()) return false;
            into.push_back(n.get<std::string>());
        }
        return true;
    };
    if (v.is_array() && !v.empty()) {
        for (const auto& g : v) {
            std::vector<std::string> group;
            if (!names(g, group)) return {};
            out.push_back(std::move(group));
        }
    } else if (v.is_object() && !v.empty()) {
        for (auto it = v.begin(); it != v.end(); ++it) {
            std::vector<std::string> group = {it.key()};
            if (!names(it.value(), group)) return {};
            out.push_back(std::move(group));
        }
    }
    return out;
}

std::optional<data::Rubric> import_rubric(const json& gt, const data::Probe& probe, FileImport& in) {
    using K = data::RubricKind;
    const std::string rpath = "ground_truth.eval_rubric", cpath = "ground_truth.constraint_check";
    std::vector<std::string> must, must_not;
    auto add_unique = [](std::vector<std::string>& into, const std::vector<std::string>& from) {
        for (const auto& x : from)
            if (std::find(into.begin(), into.end(), x) == into.end()) into.push_back(x);
    };
    if (const json* cc = member(gt, "constraint_check")) {
        if (cc->is_object()) {
            in.unknown_keys(*cc, cpath, {"must_contain", "must_not_contain"});
            if (const json* v = member(*cc, "must_contain")) must = in.strings(*v, at(cpath, "must_contain"));
            if (const json* v = member(*cc, "must_not_contain"))
                must_not = in.strings(*v, at(cpath, "must_not_contain"));
        } else {
            in.keep(cpath, *cc, std::string("must be an object, not ") + type_name(*cc));
        }
    }
    const json* rj = member(gt, "eval_rubric");
    if (rj && !rj->is_object()) {
        in.keep(rpath, *rj, std::string("must be an object, not ") + type_name(*rj) + "; no rubric taken from it");
        rj = nullptr;
    }
    data::Rubric r;
    if (!rj) {
        if (must.empty() && must_not.empty()) return std::nullopt;  // the grader infers exact or abstention
        r.kind = K::constraint;
        r.method = "constraint_check";
        r.must_contain = must;
        r.must_not_contain = must_not;
        return r;
    }

    std::set<std::string> used = {"method"};
    auto take = [&](const char* key) -> const json* {
        if (rj->find(key) != rj->end()) used.insert(key);
        return member(*rj, key);
    };
    if (const json* m = member(*rj, "method"); m && m->is_string())
        r.method = m->get<std::string>();
    else
        in.note(at(rpath, "method"), m ? shown(*m) + " is not a method name" : std::string("no method"));

    // Kept whatever the method.
    auto list = [&](const char* key, std::vector<std::string>& into) {
        if (const json* v = take(key)) into = in.strings(*v, at(rpath, key));
    };
    std::vector<std::string> required_elements, rubric_must, rubric_must_not;
    list("required_elements", required_elements);
    list("forbidden_elements", r.forbidden);
    list("reject_elements", r.reject);
    list("accept_patterns", r.accept_patterns);
    list("keywords", r.keywords);
    list("criteria", r.criteria);
    list("expected_terms", r.expected_terms);
    list("must_contain", rubric_must);
    list("must_not_contain", rubric_must_not);
    add_unique(must, rubric_must);
    add_unique(must_not, rubric_must_not);
    r.must_contain = must;
    r.must_not_contain = must_not;
    if (const json* v = take("notes")) {
        if (v->is_string()) r.notes = v->get<std::string>();
        else r.notes = text::join(in.strings(*v, at(rpath, "notes")), "\n");
    }
    if (const json* v = take("fields")) r.fields = rubric_fields(*v, probe.expected, at(rpath, "fields"), in);
    if (const json* v = take("tolerance")) {
        const auto t = number_of(*v);
        if (t && *t >= 0) r.tolerance = *t;
        else in.keep(at(rpath, "tolerance"), *v, "a tolerance that is not a number of at least 0");
    }
    if (const json* v = take("pass_fraction")) {
        const auto f = number_of(*v);
        if (f && *f >= 0 && *f <= 1) r.pass_fraction = *f;
        else in.keep(at(rpath, "pass_fraction"), *v, "a pass fraction that is not a number from 0 to 1");
    }

    const std::string& method = r.method;
    if (method == "exact") {
        r.kind = K::exact;
    } else if (method == "structured") {
        r.kind = K::structured;
        r.required = required_elements;
        // WRIT's evaluator passes a structured rubric at 80% of its elements (checkStructuredRecall:
        // score >= 0.8); a rubric's own pass_fraction says otherwise, and run --set
        // writ.structured_threshold overrides both.
        if (rj->find("pass_fraction") == rj->end()) r.pass_fraction = 0.8;
    } else if (method == "semantic") {
        r.kind = K::semantic;
    } else if (method == "abstention") {
        r.kind = K::abstention;
    } else if (method == "constraint") {
        r.kind = K::constraint;
    } else if (method == "contains") {
        r.kind = K::contains;
        r.required = !r.expected_terms.empty() ? r.expected_terms
                     : !r.keywords.empty()     ? r.keywords
                                               : required_elements;
    } else if (method == "multi_criterion") {
        // Graded by its elements when it lists them; its criteria alone need the judge.
        r.required = !required_elements.empty() ? required_elements : r.expected_terms;
        r.kind = r.required.empty() ? K::semantic : K::structured;
        // A criterion naming a value ("correct_value_1800") is necessary, not sufficient: an answer
        // without that value fails; one with it still needs the judge for the other criteria.
        for (const auto& c : r.criteria) {
            const std::string prefix = "correct_value_";
            if (c.rfind(prefix, 0) != 0) continue;
            const std::string value = c.substr(prefix.size());
            if (number_in_text(value) && std::find(r.must_contain.begin(), r.must_contain.end(), value) == r.must_contain.end())
                r.must_contain.push_back(value);
        }
    } else if (method == "numeric_equivalence") {
        r.kind = K::numeric;
        for (const char* key : {"number", "expected_number", "expected_value", "expected_amount", "amount", "value",
                                "expected", "target"}) {
            const json* v = take(key);
            if (!v) continue;
            if (const auto n = number_of(*v)) {
                r.number = n;
                break;
            }
            in.keep(at(rpath, key), *v, shown(*v) + " is not a number");
        }
        if (!r.number) r.number = number_of(probe.expected);
        // "$50,000 (single consolidated budget fact; ...)": the number is the annotated value's lead.
        if (!r.number && probe.expected.is_string()) r.number = number_in_text(lead_of(probe.expected.get<std::string>()));
    } else if (method == "address_normalization") {
        r.kind = K::address;
    } else if (method == "multi_field_exact") {
        r.kind = K::multi_field;
        if (r.fields.empty() && probe.expected.is_object()) r.fields = probe.expected;
    } else if (method == "entity_count_and_equivalence" || method == "entity_count_and_event_merge" ||
               method == "entity_count_and_org_merge") {
        r.kind = K::entity_count;
        // The count: expected_count, else the first other key naming a count; the groups: the first
        // key holding lists of names.
        if (const json* v = take("expected_count")) {
            r.expected_count = count_of(*v);
            if (!r.expected_count) in.keep(at(rpath, "expected_count"), *v, shown(*v) + " is not a count");
        }
        for (auto it = rj->begin(); !r.expected_count && it != rj->end(); ++it)
            if (!used.count(it.key()) && it.key().find("count") != std::string::npos)
                if (const auto c = count_of(it.value())) {
                    r.expected_count = c;
                    used.insert(it.key());
                }
        for (auto it = rj->begin(); r.groups.empty() && it != rj->end(); ++it)
            if (!used.count(it.key()))
                if (auto g = groups_of(it.value()); !g.empty()) {
                    r.groups = std::move(g);
                    used.insert(it.key());
                }
        // WRIT 0.2.0 gives the count beside the rubric, as ground_truth.expected_entity_count.
        if (!r.expected_count)
            if (const json* v = member(gt, "expected_entity_count")) r.expected_count = count_of(*v);
        if (!r.expected_count) {
            in.note(rpath, "method '" + method + "' gives no count (no count-like key); graded as semantic");
            r.kind = K::semantic;
        }
    } else {
        r.kind = K::semantic;
        if (!method.empty())
            in.note(at(rpath, "method"),
                    "unknown rubric method '" + method + "'; graded as semantic (the judge decides)");
    }
    if (r.required.empty()) r.required = required_elements;

    for (auto it = rj->begin(); it != rj->end(); ++it)
        if (!used.count(it.key())) in.keep(at(rpath, it.key()), it.value(), "unknown rubric key '" + it.key() + "'");
    if (const std::string problem = rubric_problem(r, probe); !problem.empty()) {
        in.note(at(rpath, "method"), "a " + std::string(data::rubric_kind_name(r.kind)) + " rubric (method '" +
                                         method + "') " + problem + "; graded as semantic");
        r.kind = K::semantic;
    }
    if (member(gt, "constraint_check") && r.kind != K::constraint && (!must.empty() || !must_not.empty()))
        in.note(cpath, "kept as the rubric's must_contain and must_not_contain, graded beside its " +
                           std::string(data::rubric_kind_name(r.kind)) +
                           " kind: a violated constraint fails the answer, a kept one decides nothing more");
    return r;
}

// ---------------------------------------------------------------------------------------------
// The probe.

// One evidence fact per target (the message stating the expected value, or the event's latest value
// stored by the checkpoint); a target stated only after the checkpoint is dropped. An answerable probe
// left without a target cites expected_source, its details marked incomplete.
void add_evidence(const data::Scenario& s, data::Probe& p, FileImport& in) {
    const data::MessageIndex index(s);
    const std::size_t checkpoint = index.session_position(p.after_session);
    auto stored_by_then = [&](const std::string& session) {
        const std::size_t pos = index.session_position(session);
        return pos != k_npos && pos <= checkpoint;
    };
    std::vector<std::string> targets;
    for (const auto& target : p.targets) {
        const data::LedgerEvent* e = s.event(target);
        if (!e) continue;
        const data::ValueRecord* chosen = nullptr;
        for (auto it = e->history.rbegin(); !chosen && it != e->history.rend(); ++it)
            if (stored_by_then(it->session_id) && same_value(it->value, p.expected)) chosen = &*it;
        // A part of a compound expected value ("Austin, TX" of "Acme Corp, in Austin, TX").
        const std::string canon = canonical_of(p.expected);
        for (auto it = e->history.rbegin(); !chosen && it != e->history.rend(); ++it)
            if (stored_by_then(it->session_id) &&
                (same_up_to_annotations(it->value, p.expected) || part_of(it->value, canon)))
                chosen = &*it;
        for (auto it = e->history.rbegin(); !chosen && it != e->history.rend(); ++it)
            if (stored_by_then(it->session_id)) chosen = &*it;
        if (!chosen) {
            in.note("ground_truth.current_value", "event '" + e->id +
                                                      "' has no value stated by the probe's checkpoint (session '" +
                                                      p.after_session + "'); not a target");
            continue;
        }
        targets.push_back(target);
        if (p.kind == data::ProbeKind::abstain) continue;
        data::EvidenceFact f;
        f.id = clean_id(p.id + ":" + e->id);
        const data::Message* m = chosen->message_id.empty() ? nullptr : index.message(chosen->message_id);
        if (m && !chosen->mentions.empty()) {
            f.message_ids = {m->id};
            f.text = m->content;
            f.key_details.emplace_back("value", chosen->mentions, data::DetailRole::identity);
        } else {
            m = first_message(s.sessions[index.session_position(chosen->session_id)]);
            f.message_ids = {m->id};
            f.text = e->id + ": " + as_text(chosen->value);
            f.details_complete = false;
            in.note("ground_truth.current_value", "no message states " + shown(chosen->value) + " of '" + e->id +
                                                      "' verbatim; its evidence cites " + m->id +
                                                      " with no key details (details_complete false)");
        }
        p.evidence.push_back(std::move(f));
    }
    p.targets = std::move(targets);
    if (p.kind == data::ProbeKind::abstain || !p.evidence.empty()) return;
    const data::Message* m = nullptr;
    if (!p.expected_source.empty())
        if (const data::Session* in_session = index.session_of(p.expected_source);
            in_session && stored_by_then(in_session->id))
            m = index.message(p.expected_source);
    if (!m) m = first_message(s.sessions[checkpoint]);
    data::EvidenceFact f;
    f.id = clean_id(p.id + ":expected");
    f.message_ids = {m->id};
    f.text = p.answer.empty() ? m->content : p.answer;
    f.details_complete = false;
    const std::string which =
        m->id == p.expected_source ? " (expected_source)" : " (expected_source is not stored by the checkpoint)";
    in.note("ground_truth", "the probe has no target in the ledger; its one evidence fact cites " + m->id + which +
                                " with no key details (details_complete false)");
    p.evidence.push_back(std::move(f));
}

Result<void> import_probe(const json& j, FileImport& in, data::Scenario& s, const SessionTable& table,
                          const std::string& category) {
    const json* pj = member(j, "probe");
    if (!pj) return refusal("probe", "no probe: a scenario needs its question");
    if (!pj->is_object()) return refusal("probe", std::string("must be an object, not ") + type_name(*pj));
    in.unknown_keys(*pj, "probe",
                    {"session", "prompt", "required_capabilities", "temporal_query", "should_abstain",
                     "failure_modes"});
    const json* ps = member(*pj, "session");
    const auto probe_session = ps ? session_ref(*ps) : std::nullopt;
    if (!probe_session) return refusal("probe.session", "the probe names no session");
    const std::size_t pos = table.find(*probe_session);
    if (pos == k_npos) return refusal("probe.session", "the probe's session '" + *probe_session + "' does not exist");
    if (pos == 0)
        return refusal("probe.session", "the probe's session '" + *probe_session +
                                            "' is the first: nothing is stored before the question");

    data::Probe p;
    p.id = clean_id(s.id + ":probe");
    // The probe's session holds the question itself: it is asked once the session before it is stored.
    p.after_session = s.sessions[pos - 1].id;
    if (const json* prompt = member(*pj, "prompt");
        prompt && prompt->is_string() && !text::trim(prompt->get_ref<const std::string&>()).empty()) {
        p.question = prompt->get<std::string>();
    } else {
        const data::Message* m = first_message(s.sessions[pos]);
        p.question = m->content;
        in.note("probe.prompt", "no prompt; the question is the first message of the probe's session (" + m->id + ")");
    }
    if (const json* v = member(*pj, "should_abstain")) {
        if (v->is_boolean()) p.should_abstain = v->get<bool>();
        else in.note("probe.should_abstain", shown(*v) + " is not true or false; taken as false");
    }
    p.kind = p.should_abstain ? data::ProbeKind::abstain : data::ProbeKind::open;
    if (const json* v = member(*pj, "required_capabilities"))
        p.capabilities = in.strings(*v, "probe.required_capabilities");
    if (const json* tq = member(*pj, "temporal_query")) {
        if (!tq->is_object()) {
            in.keep("probe.temporal_query", *tq, std::string("must be an object, not ") + type_name(*tq));
        } else {
            in.unknown_keys(*tq, "probe.temporal_query", {"as_of", "expect_current"});
            data::TemporalQuery t;
            if (const json* as_of = member(*tq, "as_of")) {
                if (as_of->is_string()) t.as_of = std::string(text::trim(as_of->get_ref<const std::string&>()));
                else in.keep("probe.temporal_query.as_of", *as_of, "an as_of that is not a timestamp");
            }
            if (const json* ec = member(*tq, "expect_current")) {
                if (ec->is_boolean()) t.expect_current = ec->get<bool>();
                else
                    in.note("probe.temporal_query.expect_current",
                            shown(*ec) + " is not true or false; taken as true");
            }
            if (!t.expect_current && t.as_of.empty()) {
                in.note("probe.temporal_query", "expect_current is false but as_of gives no date; taken as a question "
                                                "about the current value");
                t.expect_current = true;
            }
            p.temporal = t;
        }
    }

    const json no_ground_truth = json::object();
    const json* gt = member(j, "ground_truth");
    if (!gt) {
        in.note("ground_truth", "no ground truth: the probe has no expected value");
        gt = &no_ground_truth;
    } else if (!gt->is_object()) {
        in.keep("ground_truth", *gt, std::string("must be an object, not ") + type_name(*gt));
        gt = &no_ground_truth;
    }
    in.unknown_keys(*gt, "ground_truth",
                    {"current_value", "value_history", "provenance", "eval_rubric", "constraint_check",
                     "expected_entity_count", "expected_integrity_flag", "lifecycle_history"});
    if (const json* v = member(*gt, "current_value")) p.expected = *v;
    else if (!p.should_abstain) in.note("ground_truth.current_value", "no current value for an answerable probe");
    p.answer = as_text(p.expected);
    p.meta = {{"category", category}};
    // As the generator labels a probe asked before the scenario's end.
    if (pos + 1 < s.sessions.size()) p.meta["checkpoint"] = "mid";
    if (const json* v = member(*gt, "value_history")) p.meta["value_history"] = *v;
    // WRIT 0.2.0's extended ground truth: the entities a deduplicating system should end with, whether
    // a certifying system should flag the answer before delivering it, and the fact's life (active,
    // superseded, expired, reinstated). Kept on the probe for the answer metrics (docs/WRIT.md).
    if (const json* v = member(*gt, "expected_entity_count")) {
        if (const auto c = count_of(*v)) p.meta["expected_entity_count"] = *c;
        else in.keep("ground_truth.expected_entity_count", *v, shown(*v) + " is not a count");
    }
    if (const json* v = member(*gt, "expected_integrity_flag")) {
        if (v->is_boolean()) p.meta["expected_integrity_flag"] = *v;
        else in.keep("ground_truth.expected_integrity_flag", *v, shown(*v) + " is not true or false");
    }
    if (const json* v = member(*gt, "lifecycle_history")) {
        if (v->is_array()) p.meta["lifecycle_history"] = *v;
        else in.keep("ground_truth.lifecycle_history", *v, std::string("must be a list, not ") + type_name(*v));
    }
    if (const json* prov = member(*gt, "provenance")) {
        if (!prov->is_object()) {
            in.keep("ground_truth.provenance", *prov, std::string("must be an object, not ") + type_name(*prov));
        } else {
            in.unknown_keys(*prov, "ground_truth.provenance",
                            {"source_session", "source_message_index", "agent_or_user"});
            p.meta["provenance"] = *prov;
            const json* ss = member(*prov, "source_session");
            const json* mi = member(*prov, "source_message_index");
            const auto session = ss ? session_ref(*ss) : std::nullopt;
            const bool index_ok =
                mi && (mi->is_number_unsigned() || (mi->is_number_integer() && mi->get<long long>() >= 0));
            const std::string candidate = session && index_ok ? message_id(*session, mi->get<std::size_t>()) : "";
            const data::MessageIndex index(s);
            if (const data::Message* m = candidate.empty() ? nullptr : index.message(candidate)) {
                p.expected_source = m->id;
                if (const json* who = member(*prov, "agent_or_user"); who && who->is_string()) {
                    const std::string& w = who->get_ref<const std::string&>();
                    const bool agrees = w == m->role || (w == "agent" && m->role == "assistant");
                    if (!agrees)
                        in.note("ground_truth.provenance.agent_or_user", "says " + shown(*who) + " but message " +
                                                                             m->id + " is the " + m->role + "'s");
                }
            } else if (ss || mi || !p.should_abstain) {
                in.note("ground_truth.provenance", "names no message of the file (session " +
                                                       (ss ? shown(*ss) : std::string("missing")) + ", index " +
                                                       (mi ? shown(*mi) : std::string("missing")) +
                                                       "); expected_source left empty");
            }
        }
    } else if (!p.should_abstain) {
        in.note("ground_truth.provenance", "no provenance: expected_source left empty");
    }

    // Failure modes: the scenario's (and the probe's own, if any), verbatim.
    std::vector<std::string> modes;
    if (const json* v = member(j, "failure_modes")) modes = in.strings(*v, "failure_modes");
    if (const json* v = member(*pj, "failure_modes"))
        for (auto& m : in.strings(*v, "probe.failure_modes"))
            if (std::find(modes.begin(), modes.end(), m) == modes.end()) modes.push_back(std::move(m));
    std::vector<std::string> unlisted;
    for (const auto& m : modes)
        if (!documented_failure_modes().count(m) && std::find(unlisted.begin(), unlisted.end(), m) == unlisted.end())
            unlisted.push_back(m);
    if (!unlisted.empty())
        in.note("failure_modes", std::to_string(unlisted.size()) + " label" + (unlisted.size() == 1 ? "" : "s") +
                                     " outside WRIT's documented failure modes, kept as they are: " +
                                     text::join(unlisted, ", "));
    p.failure_modes = std::move(modes);

    p.rubric = import_rubric(*gt, p, in);
    // Targets: the events whose value is the expected value, else those holding a part of it.
    if (!p.expected.is_null()) {
        std::vector<std::string> constraint_terms;
        if (p.rubric) {
            constraint_terms = p.rubric->must_contain;
            constraint_terms.insert(constraint_terms.end(), p.rubric->must_not_contain.begin(),
                                    p.rubric->must_not_contain.end());
        }
        p.targets = targets_of(s, p.expected, constraint_terms);
        if (p.targets.empty())
            in.note("ground_truth.current_value",
                    "no ledger event holds " + shown(p.expected) +
                        " or a part of it; the probe has no targets (its answer goes to the judge where no rule "
                        "decides it)");
    }
    add_evidence(s, p, in);
    s.probes.push_back(std::move(p));
    return {};
}

// ---------------------------------------------------------------------------------------------
// The scenario.

std::string file_name_of(const std::string& file) { return fs::path(file).filename().string(); }

// Category as a dataset-name part: lower case, [a-z0-9_] only (it names the dataset's file).
std::string clean_category(const std::string& raw) {
    std::string out = text::to_lower(text::trim(raw));
    for (char& c : out)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) c = '_';
    return out.substr(0, 64);
}

json interference_of(const json& v, FileImport& in) {
    json out = json::array();
    auto item = [&](const json& x, const std::string& path) {
        if (x.is_string()) return json{{"type", "unspecified"}, {"description", x}};
        if (x.is_object()) {
            json o = x;
            if (!o.contains("type")) o["type"] = "unspecified";
            return o;
        }
        in.note(path, std::string("an interference item that is ") + type_name(x) + "; kept as its description");
        return json{{"type", "unspecified"}, {"description", as_text(x)}};
    };
    if (v.is_array())
        for (std::size_t i = 0; i < v.size(); ++i) out.push_back(item(v[i], at("interference", i)));
    else if (!v.is_null())
        out.push_back(item(v, "interference"));
    return out;
}

Result<data::Scenario> import_scenario(const json& j, const std::string& file, FileImport& in) {
    if (!j.is_object()) return refusal("", std::string("a WRIT scenario is a JSON object, not ") + type_name(j));
    if (deeper_than(j, data::k_max_json_depth))
        return refusal("", "nesting deeper than " + std::to_string(data::k_max_json_depth));
    in.unknown_keys(j, "",
                    {"scenario_id", "version", "category", "description", "sessions", "memory_events", "probe",
                     "ground_truth", "failure_modes", "interference"});
    data::Scenario s;
    s.format = data::k_format_v2;
    s.suite = "writ";

    const json* sid = member(j, "scenario_id");
    const std::string raw_id =
        sid && (sid->is_string() || sid->is_number()) ? std::string(text::trim(as_text(*sid))) : std::string{};
    s.id = clean_id(raw_id);
    if (s.id.empty()) {
        s.id = clean_id(fs::path(file).stem().string());
        if (s.id.empty()) s.id = "writ-scenario";
        in.note("scenario_id", "no usable scenario_id; named '" + s.id + "' after the file");
    } else if (s.id != raw_id) {
        in.note("scenario_id", "scenario id " + shown(*sid) + " is not a valid id; imported as '" + s.id + "'");
    }

    const auto& known = categories();
    std::string category;
    if (const json* c = member(j, "category"); c && c->is_string()) {
        category = clean_category(c->get<std::string>());
        if (category != c->get_ref<const std::string&>())
            in.note("category", "category " + shown(*c) + " imported as '" + category + "'");
    }
    if (category.empty()) {
        for (const auto& k : known)
            if (text::starts_with(s.id, k + "-")) category = k;
        if (category.empty()) category = "uncategorized";
        in.note("category", "no category; taken as '" + category + "'" +
                                (category == "uncategorized" ? "" : " from the scenario id"));
    } else if (std::find(known.begin(), known.end(), category) == known.end()) {
        in.note("category", "'" + category + "' is none of WRIT's 16 categories; imported as dataset writ_" + category);
    }
    s.dataset = dataset_name(category);

    s.meta = {{"category", category}, {"source", "writ-release"}, {"file", file_name_of(file)}};
    if (const json* v = member(j, "version")) s.meta["version"] = as_text(*v);
    else in.note("version", "no version");
    if (const json* d = member(j, "description")) {
        if (!d->is_string())
            in.note("description", std::string("a description that is ") + type_name(*d) + "; kept as compact JSON");
        s.meta["description"] = as_text(*d);
    }
    s.meta["interference"] = json::array();
    if (const json* v = member(j, "interference")) s.meta["interference"] = interference_of(*v, in);

    SessionTable table;
    MF_TRY(import_sessions(j, in, s, table));
    import_ledger(j, in, s, table);
    MF_TRY(import_probe(j, in, s, table, category));
    // The interference types on the probe too, for WRIT's distractor sensitivity (the answer table
    // compares probes of scenarios with interference and without).
    json kinds = json::array();
    for (const auto& item : s.meta["interference"])
        if (item.is_object() && item.contains("type")) kinds.push_back(item["type"]);
    for (auto& p : s.probes) p.meta["interference"] = kinds;
    if (!in.unmapped().empty()) s.meta["unmapped"] = in.unmapped();

    // The mapping above keeps every structural rule; a break here is a bug, but it must cost one file,
    // not the import.
    std::vector<data::Violation> violations;
    data::validate_structure(s, 0, violations);
    if (!violations.empty())
        return refusal(violations.front().field, "the imported scenario breaks a structural rule (" +
                                                     violations.front().message + "); please report this");
    return s;
}

// Renames a scenario whose id another file already used, with its probe and evidence ids.
void rename_scenario(data::Scenario& s, const std::string& id) {
    for (auto& p : s.probes) {
        const std::string old_probe = p.id;
        p.id = clean_id(id + ":probe");
        for (auto& f : p.evidence)
            if (text::starts_with(f.id, old_probe)) f.id = clean_id(p.id + f.id.substr(old_probe.size()));
    }
    s.id = id;
}


}  // namespace

Result<data::Scenario> import_writ_scenario(const nlohmann::json& j, const std::string& file,
                                            std::vector<ImportNote>& notes) {
    std::vector<ImportNote> local;
    FileImport in(file, local);
    auto s = import_scenario(j, file, in);
    if (!s) return s.error();
    notes.insert(notes.end(), local.begin(), local.end());
    return s;
}

Result<ImportResult> import_writ_dir(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return make_error(ErrorKind::not_found,
                          "not a directory; expected the folder of WRIT's scenario files (*.json)", dir);
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
    if (ec) return make_error(ErrorKind::io, "cannot list the folder: " + ec.message(), dir);
    std::sort(entries.begin(), entries.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename().string() < b.filename().string(); });

    ImportResult out;
    std::set<std::string> ids;
    std::string first_refusal;
    for (const auto& path : entries) {
        const std::string file = path.string();
        if (fs::is_directory(path, ec)) {
            out.notes.push_back({file, "", "a folder; not read (the import reads the folder's own files only)"});
            continue;
        }
        if (path.extension() != ".json") {
            out.notes.push_back({file, "", "not a .json file; ignored"});
            continue;
        }
        ++out.files_read;
        auto refuse = [&](const std::string& where, const std::string& why) {
            out.notes.push_back({file, where, "file refused: " + why});
            ++out.files_refused;
            if (first_refusal.empty()) first_refusal = file + (where.empty() ? "" : ": " + where) + ": " + why;
        };
        const std::uintmax_t size = fs::file_size(path, ec);
        if (ec) {
            refuse("", "cannot read its size: " + ec.message());
            continue;
        }
        if (size > k_max_file_bytes) {
            refuse("", std::to_string(size) + " bytes; files over 64 MiB are not read");
            continue;
        }
        auto content = data::read_file(file);
        if (!content) {
            refuse("", content.error().message);
            continue;
        }
        if (text_deeper_than(*content, data::k_max_json_depth)) {
            refuse("", "nesting deeper than " + std::to_string(data::k_max_json_depth));
            continue;
        }
        try {
            json j;
            try {
                j = json::parse(*content);
            } catch (const json::parse_error& e) {
                refuse("", "not valid JSON: " + parser_message(e.what()));
                continue;
            } catch (const json::exception& e) {
                refuse("", "not readable JSON: " + parser_message(e.what()));
                continue;
            }
            std::vector<ImportNote> notes;
            auto s = import_writ_scenario(j, file, notes);
            if (!s) {
                refuse(s.error().where, s.error().message);
                continue;
            }
            out.notes.insert(out.notes.end(), notes.begin(), notes.end());
            if (!ids.insert(s->id).second) {
                std::string unique;
                for (std::size_t n = 2; unique.empty() || ids.count(unique); ++n)
                    unique = clean_id(s->id + "-" + std::to_string(n));
                out.notes.push_back({file, "scenario_id", "scenario id '" + s->id +
                                                              "' is already used by another file; imported as '" +
                                                              unique + "'"});
                rename_scenario(*s, unique);
                ids.insert(unique);
            }
            out.scenarios.push_back(std::move(s).value());
        } catch (const std::exception& e) {
            // Never expected; one file's failure must not end the import.
            refuse("", std::string("internal error while importing: ") + e.what());
        }
    }
    if (out.scenarios.empty())
        return make_error(ErrorKind::invalid_input,
                          out.files_read == 0   ? "no WRIT scenario file (*.json) in the folder"
                          : out.files_read == 1 ? "no scenario imported: the one file was refused: " + first_refusal
                                                : "no scenario imported: all " + std::to_string(out.files_read) +
                                                      " files were refused; the first: " + first_refusal,
                          dir);
    return out;
}

}  // namespace memfail::suites::writ

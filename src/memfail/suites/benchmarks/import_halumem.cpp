// SPDX-License-Identifier: MIT
// HaluMem -> memfail/1 scenarios. The files are what the authors' scripts write
// (scripts/stage6_2_final_result_medium.py, stage6_3_final_result_long.py) and their evaluation
// reads (eval/eval_*.py, eval/evaluation.py). The mapping:
//
// - One scenario per line (suite "benchmarks", dataset "halumem"), id = the user's uuid made a valid
//   id (missing: "halumem-<line>", noted; repeated: "-2", noted). meta: source, uuid, user_name (as
//   the authors read it: persona_info's "Name: ...; Gender:"), persona_info, variant ("long" when a
//   session carries session_id or is_generated_qa_session, else "medium"), the user's
//   total_question_count, memory_points (below), unmapped (unknown keys, kept verbatim).
// - sessions[i] -> session "s<i+1>" dated by its start_time ("Jan 15, 2029, 15:12:20", naive time;
//   unreadable or missing: the previous session's, noted), in file order. A Long file's inserted
//   question-answer sessions (is_generated_qa_session) are stored like any other and ask nothing, as
//   the authors' evaluation does. A session with no dialogue is skipped (noted); its questions are
//   then asked after the previous session (noted).
// - dialogue[j] -> message "s<i+1>:<j+1>" with its role (user, assistant; any other is taken as
//   user, noted) and content; an empty message is skipped (noted).
// - memory_points -> the scenario's meta.memory_points, one entry per point: session, index,
//   memory_content, memory_type (a "[...]" prefix the generator's listing leaked is taken off),
//   memory_source (system, secondary, primary, interference), is_update (the file's "True"/"False"
//   strings, read as a boolean: the string "False" is false), original_memories, importance. They
//   are what HaluMem's extraction and updating operations grade.
// - questions[j] (absent on a session that asks none) -> probe "s<i+1>-q<j+1>" asked once session
//   i+1 is stored, its date the session's end_time (meta.question_date). meta: question_type,
//   difficulty. A Memory Boundary question (the answer is that the user never said) is kind
//   "abstain" with no evidence; any other is kind "open", answer = `answer` as text.
// - Evidence: each evidence item's memory_content is looked up (normalised, "[...]" prefixes taken
//   off) among the memory points of the question's session and the sessions before it, the latest
//   first, a real point before an interference point. A point cannot be placed in a turn: its
//   timestamp is its session's end, whatever round stated it. So its fact cites the one message of
//   the sessions holding the point (a point may be restated later) that holds the run of the
//   answer's words the point also holds, when exactly one does and no other message up to the
//   question holds that run (common.hpp: answer_fact, the run its key detail and its sentences the
//   statements); else those sessions' user messages, with details_complete = false, which the
//   grader reads as "somewhere in these messages": the judge decides its storage and retrieval
//   unless no memory holds any of their words. An item that is no memory point of those sessions leaves the
//   question without facts, meta.evidence_usable = false (noted): a fact cited by text alone
//   would be a guess. meta.evidence_resolution says which of these each question got.
#include <memfail/suites/benchmarks/import_halumem.hpp>

#include <memfail/core/hash.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/import_json.hpp>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <utility>

namespace memfail::suites::benchmarks {

namespace {

using import_json::as_text;
using import_json::at;
using import_json::shown;
using import_json::type_name;
using nlohmann::json;

const std::vector<std::string> k_user_keys = {"uuid",  "persona_info", "sessions", "total_dialogue_token_length",
                                              "total_question_count", "token_cost"};
const std::vector<std::string> k_session_keys = {
    "start_time", "end_time",       "memory_points_count",    "memory_points",    "dialogue_turn_num",
    "dialogue",   "dialogue_token_length", "questions",       "question_count",   "session_id",
    "title",      "is_generated_qa_session", "generation_source"};

// "[Sep 06, 2025, 22:43:36][Persona Memory]Martin ..." -> "Martin ...": the generator listed points
// with these prefixes and its model sometimes copied them into the data.
std::string without_prefixes(std::string_view raw) {
    std::string_view s = text::trim(raw);
    while (!s.empty() && s.front() == '[') {
        const auto close = s.find(']');
        if (close == std::string_view::npos) break;
        s = text::trim(s.substr(close + 1));
    }
    return std::string(s);
}

// A memory_type as written, or with its brackets: "[Persona Memory]" and
// "[Mar 19, 2038, 21:31:06][Event Memory]" -> the last bracket's content.
std::string memory_type_of(std::string_view raw) {
    std::string out = without_prefixes(raw);
    if (!out.empty()) return out;
    const std::string_view s = text::trim(raw);
    const auto open = s.rfind('[');
    const auto close = s.rfind(']');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return {};
    return std::string(text::trim(s.substr(open + 1, close - open - 1)));
}

// The evidence matcher's key for a point's text.
std::string point_key(std::string_view text) { return text::normalize(without_prefixes(text)); }

struct Point {
    std::size_t session = 0;  // position in the scenario's sessions
    std::string session_id;
    std::string id;            // "s3-m4"
    std::string content;
    bool interference = false;
};

class UserImport {
public:
    UserImport(const json& user, std::size_t index, const std::string& file, Notes& notes)
        : m_in(user), m_base("line " + std::to_string(index + 1)), m_index(index), m_file(file), m_notes(notes) {}

    Result<data::Scenario> run() {
        if (!m_in.is_object())
            return make_error(ErrorKind::invalid_input, std::string("a user must be an object, not ") + type_name(m_in));
        data::Scenario s;
        s.suite = k_suite;
        s.dataset = k_halumem;
        s.meta = {{"source", "halumem"}};
        const auto uuid = m_in.find("uuid");
        if (uuid != m_in.end() && (uuid->is_string() || uuid->is_number()) && !text::trim(as_text(*uuid)).empty()) {
            s.meta["uuid"] = as_text(*uuid);
            s.id = data::clean_id(std::string(text::trim(as_text(*uuid))));
        } else {
            s.id = "halumem-" + std::to_string(m_index + 1);
            note("uuid", at(m_base, "uuid"), "no uuid; the scenario is named '" + s.id + "'");
        }
        if (const auto p = m_in.find("persona_info"); p != m_in.end() && p->is_string()) {
            s.meta["persona_info"] = *p;
            // As the authors' evaluation names the user.
            static const std::regex k_name(R"(Name:\s*(.*?); Gender:)");
            std::smatch m;
            const std::string& persona = p->get_ref<const std::string&>();
            if (std::regex_search(persona, m, k_name)) s.meta["user_name"] = std::string(text::trim(m[1].str()));
        }
        if (const auto t = m_in.find("total_question_count"); t != m_in.end() && t->is_number_integer())
            s.meta["total_question_count"] = *t;
        for (auto it = m_in.begin(); it != m_in.end(); ++it)
            if (std::find(k_user_keys.begin(), k_user_keys.end(), it.key()) == k_user_keys.end()) {
                s.meta["unmapped"][it.key()] = it.value();
                note("unknown key", at(m_base, it.key()), "unknown key of a user; kept in the scenario's meta.unmapped");
            }
        const auto sessions = m_in.find("sessions");
        if (sessions == m_in.end() || !sessions->is_array() || sessions->empty())
            return make_error(ErrorKind::invalid_input, at(m_base, "sessions") + ": the user needs a list of sessions");
        s.meta["memory_points"] = json::array();
        bool long_variant = false;
        std::string previous_date;
        for (std::size_t i = 0; i < sessions->size(); ++i) {
            const json& in = (*sessions)[i];
            const std::string path = at(at(m_base, "sessions"), i);
            if (!in.is_object()) {
                note("session", path, std::string("a session must be an object, not ") + type_name(in) + "; skipped");
                continue;
            }
            long_variant = long_variant || in.contains("session_id") || in.contains("is_generated_qa_session");
            read_session(in, path, i, previous_date, s);
        }
        s.meta["variant"] = long_variant ? "long" : "medium";
        if (s.sessions.empty())
            return make_error(ErrorKind::invalid_input, at(m_base, "sessions") + ": no session could be imported");
        if (s.probes.empty()) note("no question", m_base, "the user asks no question; imported for its memory points only");
        return s;
    }

private:
    void note(const std::string& kind, const std::string& path, const std::string& message) {
        m_notes.add(kind, m_file, path, message);
    }

    static std::string text_of(const json& object, const char* key) {
        const auto it = object.find(key);
        if (it == object.end() || !(it->is_string() || it->is_number())) return {};
        return std::string(text::trim(as_text(*it)));
    }

    void read_session(const json& in, const std::string& path, std::size_t position, std::string& previous_date,
                      data::Scenario& s) {
        for (auto it = in.begin(); it != in.end(); ++it)
            if (std::find(k_session_keys.begin(), k_session_keys.end(), it.key()) == k_session_keys.end())
                note("unknown session key " + it.key(), at(path, it.key()), "unknown key of a session; not kept");
        const std::string id = "s" + std::to_string(position + 1);
        std::optional<std::string> start;
        const std::string start_raw = text_of(in, "start_time");
        if (!start_raw.empty()) start = halumem_date(start_raw);
        if (!start) {
            start = previous_date.empty() ? std::string("1970-01-01T00:00:00Z") : previous_date;
            note("date", at(path, "start_time"),
                 (start_raw.empty() ? std::string("no start_time") : "unreadable start_time '" + start_raw + "'") +
                     "; the session is dated " + *start);
        }
        previous_date = *start;
        std::optional<std::string> end;
        const std::string end_raw = text_of(in, "end_time");
        if (!end_raw.empty()) end = halumem_date(end_raw);
        if (!end && !end_raw.empty()) note("date", at(path, "end_time"), "unreadable end_time '" + end_raw + "'; its start is used");
        if (!end) end = start;

        data::Session session{id, *start, {}};
        if (const auto dialogue = in.find("dialogue"); dialogue != in.end() && dialogue->is_array()) {
            for (std::size_t j = 0; j < dialogue->size(); ++j) read_message((*dialogue)[j], at(at(path, "dialogue"), j), j, session);
        } else if (dialogue != in.end()) {
            note("dialogue", at(path, "dialogue"), std::string("a dialogue must be a list, not ") + type_name(*dialogue) + "; none read");
        }
        const bool stored = !session.messages.empty();
        if (stored) {
            m_normalized.emplace_back();
            for (const auto& m : session.messages) m_normalized.back().push_back(text::normalize(m.content));
            s.sessions.push_back(std::move(session));
        } else {
            note("session", path, "a session with no dialogue; skipped" +
                                      std::string(s.sessions.empty() ? "" : " (its questions are asked after the session before)"));
        }
        read_points(in, path, id, stored ? s.sessions.size() - 1 : std::string::npos, s);
        const auto questions = in.find("questions");
        if (questions == in.end() || questions->is_null()) return;
        if (!questions->is_array()) {
            note("questions", at(path, "questions"), std::string("questions must be a list, not ") + type_name(*questions) + "; none read");
            return;
        }
        if (questions->empty()) return;
        if (s.sessions.empty()) {
            note("questions", at(path, "questions"), "questions before any stored session; not imported");
            return;
        }
        for (std::size_t j = 0; j < questions->size(); ++j)
            read_question((*questions)[j], at(at(path, "questions"), j), id + "-q" + std::to_string(j + 1), *end, end_raw, s);
    }

    void read_message(const json& turn, const std::string& path, std::size_t position, data::Session& out) {
        const auto chat = read_chat_turn(turn, path, "message", {"timestamp", "dialogue_turn"}, m_notes, m_file);
        if (chat) out.messages.emplace_back(out.id + ":" + std::to_string(position + 1), chat->role, chat->content);
    }

    // "True"/"False" as the authors write and compare them; a JSON boolean is read too (noted).
    bool is_update(const json& point, const std::string& path) {
        const auto u = point.find("is_update");
        if (u == point.end() || u->is_null()) return false;
        if (u->is_string()) {
            const std::string v(text::trim(u->get_ref<const std::string&>()));
            if (v == "True") return true;
            if (v == "False") return false;
            note("is_update", at(path, "is_update"), "is_update " + shown(*u) + " is neither \"True\" nor \"False\"; read as not an update");
            return false;
        }
        if (u->is_boolean()) {
            note("is_update boolean", at(path, "is_update"),
                 "is_update is a JSON boolean where HaluMem writes the string \"True\" or \"False\"; read as written");
            return u->get<bool>();
        }
        note("is_update", at(path, "is_update"), "is_update " + shown(*u) + " is not \"True\" or \"False\"; read as not an update");
        return false;
    }

    void read_points(const json& in, const std::string& path, const std::string& session_id, std::size_t stored_at,
                     data::Scenario& s) {
        const auto points = in.find("memory_points");
        if (points == in.end() || points->is_null()) return;
        if (!points->is_array()) {
            note("memory_points", at(path, "memory_points"),
                 std::string("memory_points must be a list, not ") + type_name(*points) + "; none read");
            return;
        }
        std::set<std::string> ids;
        for (std::size_t j = 0; j < points->size(); ++j) {
            const json& p = (*points)[j];
            const std::string ppath = at(at(path, "memory_points"), j);
            if (!p.is_object()) {
                note("memory point", ppath, std::string("a memory point must be an object, not ") + type_name(p) + "; skipped");
                continue;
            }
            const std::string content = without_prefixes(text_of(p, "memory_content"));
            if (content.empty()) {
                note("memory point", at(ppath, "memory_content"), "a memory point without memory_content; skipped");
                continue;
            }
            std::string index = text_of(p, "index");
            if (index.empty()) index = std::to_string(j + 1);
            std::string id = data::clean_id(session_id + "-m" + index);
            if (!ids.insert(id).second) {
                id = data::clean_id(session_id + "-m" + index + "-" + std::to_string(j + 1));
                ids.insert(id);
                note("memory point index", at(ppath, "index"), "index " + index + " is used by an earlier point of the session; named '" + id + "'");
            }
            const std::string source = text_of(p, "memory_source");
            json entry = {{"id", id},
                          {"session", session_id},
                          {"index", p.contains("index") ? p["index"] : json(j + 1)},
                          {"memory_content", content},
                          {"memory_type", memory_type_of(text_of(p, "memory_type"))},
                          {"memory_source", source},
                          {"is_update", is_update(p, ppath)},
                          {"original_memories", json::array()},
                          {"importance", nullptr}};
            if (const auto o = p.find("original_memories"); o != p.end() && o->is_array())
                for (const auto& m : *o)
                    if (m.is_string() && !without_prefixes(m.get_ref<const std::string&>()).empty())
                        entry["original_memories"].push_back(without_prefixes(m.get_ref<const std::string&>()));
            if (const auto w = p.find("importance"); w != p.end() && w->is_number()) entry["importance"] = *w;
            else note("importance", at(ppath, "importance"), "no numeric importance; the point weighs nothing in weighted recall");
            if (stored_at == std::string::npos) entry["session_stored"] = false;
            s.meta["memory_points"].push_back(std::move(entry));
            if (stored_at != std::string::npos)
                m_points[point_key(content)].push_back({stored_at, session_id, id, content, source == "interference"});
        }
    }

    // The point an evidence item cites: the latest of the question's session and those before,
    // a real point before an interference point; null when none has its text.
    const Point* find_point(const std::string& content, std::size_t asked_at) const {
        const auto it = m_points.find(point_key(content));
        if (it == m_points.end()) return nullptr;
        const Point* best = nullptr;
        for (const auto& p : it->second) {
            if (p.session > asked_at) continue;
            if (!best || (best->interference && !p.interference) ||
                (best->interference == p.interference && p.session >= best->session))
                best = &p;
        }
        return best;
    }

    // The fact of one cited point (see the header comment). `sessions`: every stored session up to
    // the question's that holds the point's text (the same point may be restated later).
    data::EvidenceFact point_fact(const Point& point, const std::vector<std::size_t>& sessions,
                                  const std::vector<std::string>& forms, std::size_t asked_at, const data::Scenario& s,
                                  bool& located) const {
        located = false;
        const std::string point_text = text::normalize(point.content);
        std::optional<data::EvidenceFact> only;
        std::size_t holders = 0;
        for (std::size_t at : sessions)
            for (const auto& m : s.sessions[at].messages) {
                data::EvidenceFact f = answer_fact(point.id, m, forms);
                if (!f.details_complete) continue;
                if (!text::normalized_contains(point_text, text::normalize(f.key_details.front().variants.front()))) continue;
                ++holders;
                only = std::move(f);
            }
        // The run must be the only copy of its words the reader could be shown: no other message up
        // to the question holds it.
        if (holders == 1) {
            const std::string run = text::normalize(only->key_details.front().variants.front());
            std::size_t copies = 0;
            for (std::size_t at = 0; at <= asked_at && at < m_normalized.size() && copies < 2; ++at)
                for (const auto& text : m_normalized[at])
                    if (text::normalized_contains(text, run) && ++copies >= 2) break;
            if (copies == 1) {
                located = true;
                only->text = point.content;
                // The same point located for another answer may hold another run: its own fact id.
                only->id = data::clean_id(point.id + "-" +
                                          content_hash(only->message_ids.front() + "\x1f" + only->key_details.front().variants.front())
                                              .substr(0, 8));
                return *only;
            }
        }
        data::EvidenceFact f;
        f.id = point.id;
        f.text = point.content;
        f.details_complete = false;
        for (std::size_t at : sessions)
            for (const auto& m : s.sessions[at].messages)
                if (m.role == "user") f.message_ids.push_back(m.id);
        if (f.message_ids.empty())
            for (std::size_t at : sessions)
                for (const auto& m : s.sessions[at].messages) f.message_ids.push_back(m.id);
        return f;
    }

    // The stored sessions up to `asked_at` holding a point with this text and the same standing
    // (real or interference) as `point`, in order.
    std::vector<std::size_t> sessions_of(const Point& point, std::size_t asked_at) const {
        std::vector<std::size_t> out;
        const auto it = m_points.find(point_key(point.content));
        if (it != m_points.end())
            for (const auto& p : it->second)
                if (p.session <= asked_at && p.interference == point.interference &&
                    std::find(out.begin(), out.end(), p.session) == out.end())
                    out.push_back(p.session);
        std::sort(out.begin(), out.end());
        return out;
    }

    void read_question(const json& q, const std::string& path, const std::string& id, const std::string& asked_on,
                       const std::string& asked_on_raw, data::Scenario& s) {
        if (!q.is_object()) {
            note("question", path, std::string("a question must be an object, not ") + type_name(q) + "; skipped");
            return;
        }
        data::Probe p;
        p.id = data::clean_id(id);
        p.question = text_of(q, "question");
        if (p.question.empty()) {
            note("question", at(path, "question"), "a question without its text; skipped");
            return;
        }
        p.after_session = s.sessions.back().id;
        const std::size_t asked_at = s.sessions.size() - 1;
        for (auto it = q.begin(); it != q.end(); ++it)
            if (it.key() != "question" && it.key() != "answer" && it.key() != "evidence" && it.key() != "difficulty" &&
                it.key() != "question_type")
                p.meta["unmapped"][it.key()] = it.value();
        const std::string type = text_of(q, "question_type");
        const auto& types = halumem_question_types();
        p.meta["question_type"] = type.empty() ? "unknown" : type;
        if (std::find(types.begin(), types.end(), type) == types.end())
            note("question_type", at(path, "question_type"),
                 (type.empty() ? std::string("no question_type") : "unknown question_type '" + type + "'") +
                     "; kept, outside the per-type figures");
        if (const std::string d = text_of(q, "difficulty"); !d.empty()) p.meta["difficulty"] = d;
        p.meta["question_date"] = asked_on;
        if (!asked_on_raw.empty()) p.meta["question_date_raw"] = asked_on_raw;
        if (const auto a = q.find("answer"); a != q.end() && !a->is_null()) p.answer = std::string(text::trim(as_text(*a)));
        else note("answer", at(path, "answer"), "no answer; the reference answer is empty");

        std::vector<std::string> cited;
        if (const auto e = q.find("evidence"); e != q.end() && e->is_array()) {
            for (std::size_t j = 0; j < e->size(); ++j) {
                const json& item = (*e)[j];
                std::string content;
                if (item.is_object()) content = without_prefixes(text_of(item, "memory_content"));
                else if (item.is_string()) content = without_prefixes(item.get_ref<const std::string&>());
                if (content.empty()) note("evidence", at(at(path, "evidence"), j), "an evidence item without memory_content; ignored");
                else cited.push_back(content);
            }
        } else if (e != q.end() && !e->is_null()) {
            note("evidence", at(path, "evidence"), std::string("evidence must be a list, not ") + type_name(*e) + "; none read");
        }
        if (type == "Memory Boundary") {
            p.kind = data::ProbeKind::abstain;
            if (!cited.empty())
                note("boundary evidence", at(path, "evidence"),
                     "a Memory Boundary question cites " + std::to_string(cited.size()) + " memory point(s); the question is still to be declined");
            p.meta["related_points"] = cited;
            s.probes.push_back(std::move(p));
            return;
        }
        p.kind = data::ProbeKind::open;
        const std::vector<std::string> forms = answer_forms(p.answer);
        std::size_t located = 0;
        for (std::size_t j = 0; j < cited.size(); ++j) {
            const Point* point = find_point(cited[j], asked_at);
            if (!point) {
                p.evidence.clear();
                p.meta["evidence_usable"] = false;
                p.meta["evidence_resolution"] = "unresolved";
                p.meta["unresolved_evidence"] = cited[j];
                note("evidence unresolved", at(at(path, "evidence"), j),
                     "the cited memory_content is no memory point of this session or an earlier one; the question has no "
                     "evidence facts (meta.evidence_usable=false), for the judge");
                break;
            }
            bool one = false;
            data::EvidenceFact f = point_fact(*point, sessions_of(*point, asked_at), forms, asked_at, s, one);
            located += one;
            if (std::none_of(p.evidence.begin(), p.evidence.end(), [&](const data::EvidenceFact& g) { return g.id == f.id; }))
                p.evidence.push_back(std::move(f));
        }
        if (cited.empty()) {
            p.meta["evidence_usable"] = false;
            p.meta["evidence_resolution"] = "none";
            note("no evidence", at(path, "evidence"), "an answerable question that cites no memory point; no evidence facts (meta.evidence_usable=false)");
        } else if (!p.evidence.empty()) {
            p.meta["evidence_resolution"] = located == p.evidence.size() ? "message"
                                            : located == 0             ? "session"
                                                                       : "message and session";
        }
        s.probes.push_back(std::move(p));
    }

    const json& m_in;
    std::string m_base;
    std::size_t m_index = 0;
    const std::string& m_file;
    Notes& m_notes;
    std::map<std::string, std::vector<Point>> m_points;                 // by point_key
    std::vector<std::vector<std::string>> m_normalized;                 // each stored session's messages, normalised
};

}  // namespace

const std::vector<std::string>& halumem_question_types() {
    static const std::vector<std::string> types = {"Basic Fact Recall", "Multi-hop Inference", "Dynamic Update",
                                                   "Memory Boundary",   "Generalization & Application",
                                                   "Memory Conflict"};
    return types;
}

Result<data::Scenario> import_halumem_user(const json& user, std::size_t index, const std::string& file, Notes& notes) {
    if (import_json::deeper_than(user, data::k_max_json_depth))
        return make_error(ErrorKind::invalid_input, "nesting deeper than " + std::to_string(data::k_max_json_depth));
    return UserImport(user, index, file, notes).run();
}

Result<ImportResult> import_halumem(const std::string& path, const ScenarioSink& sink) {
    return import_jsonl_file(path, "HaluMem user", import_halumem_user, sink);
}

}  // namespace memfail::suites::benchmarks

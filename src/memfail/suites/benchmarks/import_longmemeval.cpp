// SPDX-License-Identifier: MIT
// LongMemEval -> memfail/1 scenarios. The mapping:
//
// - One scenario per instance (suite "benchmarks", dataset "longmemeval"), id = question_id made a
//   valid id (missing: "longmemeval-<n>", noted; repeated: "-2", noted). meta: source, question_id,
//   unmapped (unknown keys, kept verbatim).
// - haystack_sessions[i] -> a session whose id is haystack_session_ids[i] (made a valid id; missing:
//   "session-<i+1>"; repeated: "-2"; noted) and whose timestamp is haystack_dates[i]
//   ("2023/05/20 (Sat) 02:21") as ISO 8601 (unreadable or missing: the previous session's, noted),
//   in file order. Lists of different lengths: the sessions take what is there (noted).
// - Each turn -> a message "<session id>:<n>" (n from 1) with its role (user, assistant; any other
//   is taken as user, noted) and content; an empty turn is skipped (noted). An empty session is
//   skipped (noted).
// - The question -> one probe (id = the scenario id) asked after the last session. meta:
//   question_type, question_date (ISO 8601) and question_date_raw, answer_session_ids. A
//   question_id holding "_abs" (as the authors test it) is an abstention question: kind "abstain", no evidence (the turns
//   marked has_answer, which hold what the question twists, are listed in meta.related_turns).
//   Otherwise kind "open", answer = `answer` as text (a number kept as written, noted).
// - Evidence: each turn with has_answer true -> a fact (id = the message id) whose key detail is
//   derived from the answer (common.hpp: answer_fact; a single-session-preference answer is a rubric,
//   so its facts go to the judge: details_complete = false). No has_answer turn: the turns of the
//   answer_session_ids sessions holding most of the answer's words (noted), else one fact citing
//   every turn of those sessions (or of the haystack) with details_complete = false (noted).
//   meta.evidence_resolution says which.
#include <memfail/suites/benchmarks/import_longmemeval.hpp>

#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/benchmarks/metric.hpp>
#include <memfail/suites/import_json.hpp>

#include <algorithm>
#include <set>
#include <utility>

namespace memfail::suites::benchmarks {

namespace {

using import_json::as_text;
using import_json::at;
using import_json::shown;
using import_json::type_name;
using nlohmann::json;

// Turns cited when no turn is marked and the answer's words are found in several.
constexpr std::size_t k_max_derived = 5;

const std::vector<std::string> k_known_keys = {"question_id",          "question_type",     "question",
                                               "answer",               "question_date",     "haystack_session_ids",
                                               "haystack_dates",       "haystack_sessions", "answer_session_ids"};

class InstanceImport {
public:
    InstanceImport(const json& instance, std::size_t index, const std::string& file, Notes& notes)
        : m_in(instance), m_base(at("", index)), m_index(index), m_file(file), m_notes(notes) {}

    Result<data::Scenario> run() {
        if (!m_in.is_object())
            return make_error(ErrorKind::invalid_input, std::string("an instance must be an object, not ") + type_name(m_in));
        data::Scenario s;
        s.suite = k_suite;
        s.dataset = k_longmemeval;
        s.meta = {{"source", "longmemeval"}};
        const std::string qid = string_of("question_id");
        if (!qid.empty()) {
            s.id = data::clean_id(qid);
            s.meta["question_id"] = qid;
        } else {
            s.id = "longmemeval-" + std::to_string(m_index + 1);
            note("question_id", at(m_base, "question_id"), "no question_id; the scenario is named '" + s.id + "'");
        }
        const std::string question = string_of("question");
        if (question.empty())
            return make_error(ErrorKind::invalid_input, at(m_base, "question") + ": the instance needs its question");
        for (auto it = m_in.begin(); it != m_in.end(); ++it)
            if (std::find(k_known_keys.begin(), k_known_keys.end(), it.key()) == k_known_keys.end()) {
                s.meta["unmapped"][it.key()] = it.value();
                note("unknown key", at(m_base, it.key()), "unknown key; kept in the scenario's meta.unmapped");
            }
        MF_TRY(read_haystack(s));

        data::Probe p;
        p.id = s.id;
        p.question = question;
        p.after_session = s.sessions.back().id;
        const std::string type = string_of("question_type");
        const auto& types = longmemeval_question_types();
        p.meta["question_type"] = type.empty() ? "unknown" : type;
        if (std::find(types.begin(), types.end(), type) == types.end())
            note("question_type", at(m_base, "question_type"),
                 (type.empty() ? std::string("no question_type") : "unknown question_type '" + type + "'") +
                     "; kept, outside the per-type figures");
        const auto date = m_in.find("question_date");
        if (date != m_in.end() && date->is_string()) {
            p.meta["question_date_raw"] = *date;
            if (const auto iso = longmemeval_date(date->get_ref<const std::string&>())) p.meta["question_date"] = *iso;
            else note("date", at(m_base, "question_date"), "unreadable question_date " + shown(*date) + "; kept as written");
        }
        if (const auto a = m_in.find("answer_session_ids"); a != m_in.end()) p.meta["answer_session_ids"] = *a;
        const auto answer = m_in.find("answer");
        if (answer == m_in.end() || answer->is_null()) {
            note("answer", at(m_base, "answer"), "no answer; the reference answer is empty");
        } else {
            if (answer->is_number())
                note("numeric answer", at(m_base, "answer"), "a numeric answer (" + shown(*answer) + "); kept as the text '" + as_text(*answer) + "'");
            else if (!answer->is_string())
                note("answer", at(m_base, "answer"), std::string("an answer that is ") + type_name(*answer) + "; kept as its JSON text");
            p.answer = std::string(text::trim(as_text(*answer)));
        }
        // As the authors tell one: "_abs" anywhere in the id (evaluate_qa.py).
        const bool abstention = qid.find("_abs") != std::string::npos;
        p.meta["abstention"] = abstention;
        if (abstention) {
            p.kind = data::ProbeKind::abstain;
            p.meta["related_turns"] = m_has_answer;
        } else {
            p.kind = data::ProbeKind::open;
            add_evidence(p, s, type);
        }
        s.probes.push_back(std::move(p));
        return s;
    }

private:
    std::string string_of(const char* key) const {
        const auto it = m_in.find(key);
        if (it == m_in.end() || !(it->is_string() || it->is_number_integer() || it->is_number_unsigned())) return {};
        return std::string(text::trim(as_text(*it)));
    }
    void note(const std::string& kind, const std::string& path, const std::string& message) {
        m_notes.add(kind, m_file, path, message);
    }
    const json* list(const char* key) {
        const auto it = m_in.find(key);
        if (it == m_in.end() || it->is_null()) return nullptr;
        if (!it->is_array()) {
            note(key, at(m_base, key), std::string("must be a list, not ") + type_name(*it) + "; ignored");
            return nullptr;
        }
        return &*it;
    }

    Result<void> read_haystack(data::Scenario& s) {
        const json* sessions = list("haystack_sessions");
        const json* ids = list("haystack_session_ids");
        const json* dates = list("haystack_dates");
        if (!sessions || sessions->empty())
            return make_error(ErrorKind::invalid_input, at(m_base, "haystack_sessions") + ": the instance needs its haystack (a list of sessions)");
        if ((ids && ids->size() != sessions->size()) || (dates && dates->size() != sessions->size()))
            note("haystack", m_base, "haystack_sessions, haystack_session_ids and haystack_dates differ in length (" +
                                         std::to_string(sessions->size()) + ", " + std::to_string(ids ? ids->size() : 0) +
                                         ", " + std::to_string(dates ? dates->size() : 0) + "); missing ids and dates are supplied");
        std::set<std::string> used;
        std::string previous;
        for (std::size_t i = 0; i < sessions->size(); ++i) {
            const std::string path = at(at(m_base, "haystack_sessions"), i);
            const json& turns = (*sessions)[i];
            std::string raw_id;
            if (ids && i < ids->size() && ((*ids)[i].is_string() || (*ids)[i].is_number())) raw_id = text::trim(as_text((*ids)[i]));
            std::string id = raw_id.empty() ? "session-" + std::to_string(i + 1) : data::clean_id(raw_id);
            if (raw_id.empty()) note("session id", at(at(m_base, "haystack_session_ids"), i), "no session id; named '" + id + "'");
            if (used.count(id)) {
                std::string unique;
                for (std::size_t n = 2; unique.empty() || used.count(unique); ++n) unique = data::clean_id(id + "-" + std::to_string(n));
                note("duplicate session", at(at(m_base, "haystack_session_ids"), i),
                     "session id '" + id + "' is used by an earlier session; imported as '" + unique + "'");
                id = unique;
            }
            used.insert(id);
            std::optional<std::string> when;
            const json* date = dates && i < dates->size() ? &(*dates)[i] : nullptr;
            if (date && date->is_string()) when = longmemeval_date(date->get_ref<const std::string&>());
            if (!when) {
                when = previous.empty() ? std::string("1970-01-01T00:00:00Z") : previous;
                note("date", at(at(m_base, "haystack_dates"), i),
                     (date ? "unreadable date " + shown(*date) : std::string("no date")) + "; the session is dated " + *when);
            }
            previous = *when;
            if (!turns.is_array()) {
                note("session", path, std::string("a session must be a list of turns, not ") + type_name(turns) + "; skipped");
                continue;
            }
            data::Session session{id, *when, {}};
            for (std::size_t t = 0; t < turns.size(); ++t) read_turn(turns[t], at(path, t), t, session);
            if (session.messages.empty()) {
                note("session", path, "a session with no turn; skipped");
                continue;
            }
            s.sessions.push_back(std::move(session));
        }
        if (s.sessions.empty())
            return make_error(ErrorKind::invalid_input, at(m_base, "haystack_sessions") + ": no session could be imported");
        return {};
    }

    void read_turn(const json& turn, const std::string& path, std::size_t position, data::Session& out) {
        const auto chat = read_chat_turn(turn, path, "turn", {"has_answer"}, m_notes, m_file);
        if (!chat) return;
        const std::string id = data::clean_id(out.id + ":" + std::to_string(position + 1));
        out.messages.emplace_back(id, chat->role, chat->content);
        const auto has = turn.find("has_answer");
        if (has != turn.end() && has->is_boolean() && has->get<bool>()) m_has_answer.push_back(id);
        else if (has != turn.end() && !has->is_boolean())
            note("has_answer", at(path, "has_answer"), "has_answer " + shown(*has) + " is not true or false; read as false");
    }

    void add_evidence(data::Probe& p, const data::Scenario& s, const std::string& type) {
        const data::MessageIndex index(s);
        // A preference question's answer is a rubric of what a good reply does, not words a turn holds.
        const std::vector<std::string> forms =
            type == "single-session-preference" ? std::vector<std::string>{} : answer_forms(p.answer);
        for (const auto& id : m_has_answer) p.evidence.push_back(answer_fact(id, *index.message(id), forms));
        if (!p.evidence.empty()) {
            p.meta["evidence_resolution"] = "has_answer";
            return;
        }
        // No turn is marked: the answer sessions' turns holding the answer's words, else the judge's.
        std::set<std::string> answer_sessions;
        if (const auto a = m_in.find("answer_session_ids"); a != m_in.end() && a->is_array())
            for (const auto& v : *a)
                if (v.is_string() || v.is_number()) answer_sessions.insert(data::clean_id(std::string(text::trim(as_text(v)))));
        std::vector<const data::Message*> pool;
        for (const auto& session : s.sessions)
            if (answer_sessions.count(session.id))
                for (const auto& m : session.messages) pool.push_back(&m);
        const bool from_answer_sessions = !pool.empty();
        if (pool.empty())
            for (const auto& session : s.sessions)
                for (const auto& m : session.messages) pool.push_back(&m);
        for (const data::Message* m : pool) {
            auto f = answer_fact(m->id, *m, forms);
            if (f.details_complete && p.evidence.size() < k_max_derived) p.evidence.push_back(std::move(f));
        }
        const std::string where = at(m_base, "haystack_sessions");
        if (!p.evidence.empty()) {
            p.meta["evidence_resolution"] = "derived from the answer";
            note("evidence derived", where,
                 "no turn has has_answer; cited the " + std::string(from_answer_sessions ? "answer sessions' " : "") +
                     "turns holding the answer's words (at most " + std::to_string(k_max_derived) + ")");
            return;
        }
        data::EvidenceFact all;
        all.id = "haystack";
        all.text = p.answer.empty() ? p.question : p.answer;
        all.details_complete = false;
        for (const data::Message* m : pool) all.message_ids.push_back(m->id);
        p.evidence.push_back(std::move(all));
        p.meta["evidence_resolution"] = "unresolved";
        note("evidence unresolved", where,
             "no turn has has_answer and none holds the answer's words; the fact cites every turn of " +
                 std::string(from_answer_sessions ? "the answer sessions" : "the haystack") +
                 " with details_complete=false, for the judge");
    }

    const json& m_in;
    std::string m_base;
    std::size_t m_index = 0;
    const std::string& m_file;
    Notes& m_notes;
    std::vector<std::string> m_has_answer;
};

}  // namespace

Result<data::Scenario> import_longmemeval_instance(const json& instance, std::size_t index, const std::string& file,
                                                   Notes& notes) {
    if (import_json::deeper_than(instance, data::k_max_json_depth))
        return make_error(ErrorKind::invalid_input, "nesting deeper than " + std::to_string(data::k_max_json_depth));
    return InstanceImport(instance, index, file, notes).run();
}

Result<ImportResult> import_longmemeval(const std::string& path, const ScenarioSink& sink) {
    return import_list_file(path, "LongMemEval instance", import_longmemeval_instance, sink);
}

}  // namespace memfail::suites::benchmarks

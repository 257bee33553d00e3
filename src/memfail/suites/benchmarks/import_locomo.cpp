// SPDX-License-Identifier: MIT
// LoCoMo -> memfail/1 scenarios. The mapping:
//
// - One scenario per sample (suite "benchmarks", dataset "locomo"), id = sample_id made a valid id
//   (ids from data never become paths); missing: "locomo-<n>"; a repeated id gets "-2" (noted).
//   meta: source, sample_id, speakers, session_dates (as written), unmapped (unknown keys, kept).
// - conversation.session_<N> (in N order, not key order) -> session "session_<N>", its timestamp
//   session_<N>_date_time ("1:56 pm on 8 May, 2023") as ISO 8601; an unreadable or missing date takes
//   the previous session's (noted). An empty or non-list session is skipped (noted).
// - Each turn -> a message, role "user" (both speakers are people), id = its dia_id ("D1:3"); its
//   content "<speaker>: <text>", plus, for a turn that shares an image, " [shared <blip_caption>]" as
//   the dataset's own prompts render it ("... and shared a photo of ..."); img_url and query are not
//   kept. A turn without dia_id gets "D<N>:<position>" (noted); a dia_id seen before gets "-2"
//   (noted; evidence naming it cites the first); a turn with neither text nor caption is skipped.
// - Each qa item -> a probe "qa-<n>" asked after the last session, meta.category (1..5),
//   meta.category_name (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial) and
//   meta.evidence (the ids as written). Categories 1-4: kind "open", answer = `answer` as text (a
//   number is kept as written, noted; missing: adversarial_answer, noted). Category 5: kind
//   "abstain" (the question's premise is false; the right answer is to decline), answer "Not
//   mentioned in the conversation", meta.adversarial_answer the bait; an item carrying `answer` too
//   keeps it in meta.answer (noted). A category outside 1..5 is kept as an open probe with
//   meta.category 0 and the value written in meta.category_written (noted).
// - Evidence ids: each string is split on ';' and ',' and read as pairs of numbers, so
//   "D8:6; D9:17" is two ids, "D30:05" is D30:5 and "D:11:26" D11:26 (each noted). An id naming no
//   turn is dropped (noted). Each turn cited -> an evidence fact (id = the message id) whose key
//   detail is derived from the answer (common.hpp: answer_fact), else details_complete = false.
//   When no id resolves, the turn of the speaker the question names (the only one it names) holding
//   most of the answer's words is cited (noted); a question naming neither or both speakers, or
//   whose speaker has no such turn, is left without evidence, meta.evidence_usable = false (noted).
//   A question citing more than 20 turns and at least half the conversation gets no evidence fact
//   either, meta.evidence_usable = false (noted). meta.evidence_resolution says which. A question
//   without evidence has no memory-side verdict (as an abstain probe: in no memory-side rate); its
//   answer is still graded, and the evidence-recall table counts it apart.
// - event_summary, observation and session_summary (the authors' generated annotations, not the
//   conversation) are not imported (one note per file).
#include <memfail/suites/benchmarks/import_locomo.hpp>

#include <memfail/core/text.hpp>
#include <memfail/data/jsonl.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/benchmarks/metric.hpp>
#include <memfail/suites/import_json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace memfail::suites::benchmarks {

namespace {

using import_json::as_text;
using import_json::at;
using import_json::shown;
using import_json::type_name;
using nlohmann::json;

constexpr const char* k_adversarial_answer = "Not mentioned in the conversation";

// "session_12" -> 12; "session_12_date_time" -> 12 with `date` set.
std::optional<int> session_number(const std::string& key, bool& date) {
    if (!text::starts_with(key, "session_")) return std::nullopt;
    std::string rest = key.substr(8);
    date = text::ends_with(rest, "_date_time");
    if (date) rest.resize(rest.size() - 10);
    if (rest.empty() || rest.size() > 6 || !std::all_of(rest.begin(), rest.end(), [](unsigned char c) { return std::isdigit(c); }))
        return std::nullopt;
    return std::stoi(rest);
}

// The pairs of numbers in an evidence string, as canonical ids: "D8:6; D9:17" -> D8:6, D9:17.
std::vector<std::string> evidence_ids(const std::string& written) {
    std::vector<std::string> ids;
    for (const auto& part : text::split(text::replace_all(written, ";", ","), ',')) {
        std::vector<std::string> numbers;
        std::string digits;
        for (const char c : part + " ") {
            if (std::isdigit(static_cast<unsigned char>(c))) {
                digits += c;
            } else if (!digits.empty()) {
                const auto first = digits.find_first_not_of('0');
                numbers.push_back(first == std::string::npos ? "0" : digits.substr(first));
                digits.clear();
            }
        }
        for (std::size_t i = 0; i + 1 < numbers.size(); i += 2)
            if (numbers[i].size() <= 6 && numbers[i + 1].size() <= 6) ids.push_back("D" + numbers[i] + ":" + numbers[i + 1]);
    }
    return ids;
}

// A category as written: a whole number, or a string holding one.
std::optional<int> category_of(const json& v) {
    if (v.is_number_integer() || v.is_number_unsigned()) {
        const auto n = v.get<long long>();
        if (n >= -1000 && n <= 1000) return static_cast<int>(n);
        return std::nullopt;
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) <= 1000) return static_cast<int>(d);
        return std::nullopt;
    }
    if (v.is_string()) {
        const std::string s(text::trim(v.get_ref<const std::string&>()));
        if (!s.empty() && s.size() < 5 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
            return std::stoi(s);
    }
    return std::nullopt;
}

std::size_t detail_words(const data::EvidenceFact& f) {
    if (f.key_details.empty()) return 0;
    return text::words(f.key_details.front().variants.front()).size();
}

class SampleImport {
public:
    SampleImport(const json& sample, std::size_t index, const std::string& file, Notes& notes)
        : m_sample(sample), m_base(at("", index)), m_index(index), m_file(file), m_notes(notes) {}

    Result<data::Scenario> run() {
        if (!m_sample.is_object())
            return make_error(ErrorKind::invalid_input, std::string("a sample must be an object, not ") + type_name(m_sample));
        data::Scenario s;
        s.suite = k_suite;
        s.dataset = k_locomo;
        s.meta = {{"source", "locomo"}};
        const json* id = find("sample_id");
        if (id && (id->is_string() || id->is_number_integer() || id->is_number_unsigned()) && !as_text(*id).empty()) {
            s.id = data::clean_id(as_text(*id));
            s.meta["sample_id"] = *id;
        } else {
            s.id = "locomo-" + std::to_string(m_index + 1);
            note("sample_id", at(m_base, "sample_id"), "no sample_id; the scenario is named '" + s.id + "'");
        }
        const json* conversation = find("conversation");
        if (!conversation || !conversation->is_object())
            return make_error(ErrorKind::invalid_input, at(m_base, "conversation") + ": the sample needs its conversation (an object)");
        MF_TRY(read_conversation(*conversation, s));
        for (auto it = m_sample.begin(); it != m_sample.end(); ++it) {
            const std::string& key = it.key();
            if (key == "sample_id" || key == "conversation" || key == "qa") continue;
            if (key == "event_summary" || key == "observation" || key == "session_summary") {
                m_notes.once("annotations", m_file, "", "event_summary, observation and session_summary (the authors' generated annotations, "
                                        "not the conversation) are not imported");
                continue;
            }
            s.meta["unmapped"][key] = it.value();
            note("unknown key", at(m_base, key), "unknown key; kept in the scenario's meta.unmapped");
        }
        const json* qa = find("qa");
        if (!qa || !qa->is_array()) {
            return make_error(ErrorKind::invalid_input, at(m_base, "qa") + ": the sample needs its questions (a list), not " +
                                                            (qa ? type_name(*qa) : "nothing"));
        }
        for (std::size_t i = 0; i < qa->size(); ++i) read_question((*qa)[i], at(at(m_base, "qa"), i), i, s);
        if (s.probes.empty()) return make_error(ErrorKind::invalid_input, at(m_base, "qa") + ": no question could be imported");
        return s;
    }

private:
    const json* find(const char* key) const {
        const auto it = m_sample.find(key);
        return it == m_sample.end() || it->is_null() ? nullptr : &*it;
    }
    void note(const std::string& kind, const std::string& path, const std::string& message) {
        m_notes.add(kind, m_file, path, message);
    }

    Result<void> read_conversation(const json& c, data::Scenario& s) {
        std::map<int, std::pair<const json*, const json*>> sessions;  // N -> (turns, date)
        json speakers = json::array();
        for (auto it = c.begin(); it != c.end(); ++it) {
            const std::string& key = it.key();
            bool date = false;
            if (key == "speaker_a" || key == "speaker_b") {
                speakers.push_back(it.value());
            } else if (const auto n = session_number(key, date)) {
                (date ? sessions[*n].second : sessions[*n].first) = &it.value();
            } else {
                s.meta["unmapped"]["conversation"][key] = it.value();
                note("unknown key", at(at(m_base, "conversation"), key), "unknown key; kept in the scenario's meta.unmapped");
            }
        }
        s.meta["speakers"] = speakers;
        s.meta["session_dates"] = json::object();
        const std::string cpath = at(m_base, "conversation");
        std::string previous_time;
        for (const auto& [n, entry] : sessions) {
            const std::string key = "session_" + std::to_string(n);
            const auto [turns, date] = entry;
            if (!turns) {
                note("session", at(cpath, key + "_date_time"), "a date without a session; ignored");
                continue;
            }
            if (!turns->is_array() || turns->empty()) {
                note("session", at(cpath, key), std::string("a session must be a non-empty list of turns, not ") +
                                                    (turns->is_array() ? "an empty list" : type_name(*turns)) + "; skipped");
                continue;
            }
            data::Session session;
            session.id = key;
            std::optional<std::string> when;
            if (date && date->is_string()) when = locomo_date_time(date->get_ref<const std::string&>());
            if (date) s.meta["session_dates"][key] = *date;
            if (!when) {
                when = previous_time.empty() ? std::string("1970-01-01T00:00:00Z") : previous_time;
                note("date", at(cpath, key + "_date_time"),
                     (date ? "unreadable date " + shown(*date) : std::string("no date")) + "; the session is dated " + *when +
                         (previous_time.empty() ? "" : " (the previous session's)"));
            }
            session.timestamp = previous_time = *when;
            for (std::size_t t = 0; t < turns->size(); ++t) read_turn((*turns)[t], at(at(cpath, key), t), n, t, session);
            if (session.messages.empty()) {
                note("session", at(cpath, key), "no turn could be imported; the session is skipped");
                continue;
            }
            s.sessions.push_back(std::move(session));
        }
        if (s.sessions.empty())
            return make_error(ErrorKind::invalid_input, cpath + ": no session (session_1, session_2, ...) could be imported");
        return {};
    }

    void read_turn(const json& turn, const std::string& path, int session, std::size_t position, data::Session& out) {
        if (!turn.is_object()) {
            note("turn", path, std::string("a turn must be an object, not ") + type_name(turn) + "; skipped");
            return;
        }
        auto str = [&](const char* key) -> std::string {
            const auto it = turn.find(key);
            return it != turn.end() && it->is_string() ? std::string(text::trim(it->get_ref<const std::string&>())) : std::string();
        };
        const std::string text = str("text"), caption = str("blip_caption"), speaker = str("speaker");
        const bool image = turn.contains("img_url") || !caption.empty();
        std::string content = text;
        if (image) content += std::string(content.empty() ? "" : " ") + "[shared " + (caption.empty() ? "an image" : caption) + "]";
        if (text.empty() && caption.empty()) {
            note("turn", path, "a turn with neither text nor a caption; skipped");
            return;
        }
        if (!speaker.empty()) content = speaker + ": " + content;
        for (auto it = turn.begin(); it != turn.end(); ++it) {
            const std::string& key = it.key();
            if (key != "speaker" && key != "dia_id" && key != "text" && key != "img_url" && key != "blip_caption" &&
                key != "query")
                note("unknown turn key " + key, at(path, key), "unknown key of a turn; not kept");
        }
        std::string dia = str("dia_id");
        const std::string written = dia;
        const auto canonical = evidence_ids(dia);
        if (dia.empty()) {
            dia = "D" + std::to_string(session) + ":" + std::to_string(position + 1);
            note("dia_id", at(path, "dia_id"), "no dia_id; the turn is named '" + dia + "'");
        }
        std::string id = data::clean_id(dia);
        if (m_message_ids.count(id)) {
            std::string unique;
            for (std::size_t n = 2; unique.empty() || m_message_ids.count(unique); ++n) unique = data::clean_id(dia + "-" + std::to_string(n));
            note("duplicate dia_id", at(path, "dia_id"),
                 "dia_id '" + dia + "' names an earlier turn too; this one is imported as '" + unique +
                     "' and evidence naming it cites the first");
            id = unique;
        }
        m_message_ids.insert(id);
        const std::string key = canonical.size() == 1 ? canonical.front() : (written.empty() ? dia : id);
        m_by_dia.try_emplace(key, std::make_pair(out.id, id));
        out.messages.emplace_back(id, "user", content);
    }

    const data::Message* message(const std::string& id, const data::Scenario& s) const {
        for (const auto& session : s.sessions)
            for (const auto& m : session.messages)
                if (m.id == id) return &m;
        return nullptr;
    }

    void read_question(const json& item, const std::string& path, std::size_t index, data::Scenario& s) {
        if (!item.is_object()) {
            note("question", path, std::string("a question must be an object, not ") + type_name(item) + "; skipped");
            return;
        }
        const auto q = item.find("question");
        if (q == item.end() || !q->is_string() || text::trim(q->get_ref<const std::string&>()).empty()) {
            note("question", at(path, "question"), "no question text; the item is skipped");
            return;
        }
        data::Probe p;
        p.id = "qa-" + std::to_string(index + 1);
        p.question = std::string(text::trim(q->get_ref<const std::string&>()));
        p.after_session = s.sessions.back().id;
        const auto cat = item.find("category");
        // 0: no category 1..5.
        const int category = cat == item.end() ? 0 : category_of(*cat).value_or(0);
        if (category >= 1 && category <= 5) {
            p.meta["category"] = category;
            p.meta["category_name"] = locomo_category_name(category);
            if (!cat->is_number_integer() && !cat->is_number_unsigned())
                note("category", at(path, "category"), "category written as " + shown(*cat) + "; read as " + std::to_string(category));
        } else {
            p.meta["category"] = 0;
            p.meta["category_written"] = cat == item.end() ? json(nullptr) : *cat;
            p.meta["category_name"] = "unknown";
            note("category", at(path, "category"),
                 (cat == item.end() ? std::string("no category") : "category " + shown(*cat) + " is not 1..5") +
                     "; kept as an open question, outside the per-category figures");
        }
        const auto answer = item.find("answer");
        const auto adversarial = item.find("adversarial_answer");
        const bool has_answer = answer != item.end() && !answer->is_null();
        const bool has_adversarial = adversarial != item.end() && !adversarial->is_null();
        auto answer_text = [&](const json& v, const std::string& where) {
            if (v.is_number()) note("numeric answer", where, "a numeric answer (" + shown(v) + "); kept as the text '" + as_text(v) + "'");
            else if (!v.is_string()) note("answer", where, std::string("an answer that is ") + type_name(v) + "; kept as its JSON text");
            return std::string(text::trim(as_text(v)));
        };
        if (has_adversarial) p.meta["adversarial_answer"] = *adversarial;
        const auto ev = item.find("evidence");
        if (ev != item.end()) p.meta["evidence"] = *ev;
        if (category == 5) {
            p.kind = data::ProbeKind::abstain;
            p.answer = k_adversarial_answer;
            if (has_answer) {
                p.meta["answer"] = *answer;
                note("both answers", path,
                     std::string("an adversarial item with both answer and adversarial_answer") +
                         (has_adversarial ? "" : " (no adversarial_answer: only answer)") +
                         "; kept as adversarial (to be declined), answer kept in meta.answer");
            } else if (!has_adversarial) {
                note("answer", path, "an adversarial item with no adversarial_answer; kept as adversarial (to be declined)");
            }
            s.probes.push_back(std::move(p));
            return;
        }
        p.kind = data::ProbeKind::open;
        if (has_answer) {
            p.answer = answer_text(*answer, at(path, "answer"));
            if (has_adversarial)
                note("both answers", path, "both answer and adversarial_answer on a category " +
                                               (category > 0 ? std::to_string(category) : std::string("unknown")) +
                                               " item; answer used, adversarial_answer kept in meta.adversarial_answer");
        } else if (has_adversarial) {
            p.answer = answer_text(*adversarial, at(path, "adversarial_answer"));
            note("answer", path, "no answer, only adversarial_answer, on a non-adversarial item; adversarial_answer used as the answer");
        } else {
            note("answer", path, "no answer; the reference answer is empty");
        }
        add_evidence(ev == item.end() ? json() : *ev, at(path, "evidence"), p, s);
        s.probes.push_back(std::move(p));
    }

    void add_evidence(const json& ev, const std::string& path, data::Probe& p, const data::Scenario& s) {
        std::vector<std::pair<std::string, std::string>> written;  // (as written, its json path)
        if (ev.is_array()) {
            for (std::size_t i = 0; i < ev.size(); ++i) {
                if (ev[i].is_string() || ev[i].is_number()) written.emplace_back(as_text(ev[i]), at(path, i));
                else note("evidence", at(path, i), std::string("an evidence id that is ") + type_name(ev[i]) + "; dropped");
            }
        } else if (ev.is_string()) {
            written.emplace_back(ev.get<std::string>(), path);
            note("evidence", path, "evidence written as one string, not a list; read as a list");
        } else if (!ev.is_null()) {
            note("evidence", path, std::string("evidence that is ") + type_name(ev) + "; ignored");
        }
        const std::vector<std::string> forms = answer_forms(p.answer.empty() ? p.question : p.answer);
        std::vector<std::string> cited;
        std::set<int> sessions_named;
        std::size_t dropped = 0;
        for (const auto& [raw, where] : written) {
            const auto ids = evidence_ids(raw);
            const std::string trimmed(text::trim(raw));
            if (ids.empty()) {
                note("evidence", where, "evidence id " + shown(json(raw)) + " names no turn (D<session>:<turn>); dropped");
                ++dropped;
                continue;
            }
            if (ids.size() > 1 || ids.front() != trimmed)
                note("evidence written oddly", where, "evidence " + shown(json(raw)) + " read as " + text::join(ids, ", "));
            for (const auto& id : ids) {
                sessions_named.insert(std::stoi(id.substr(1, id.find(':') - 1)));
                const auto it = m_by_dia.find(id);
                if (it == m_by_dia.end()) {
                    note("evidence not found", where, "evidence id " + id + " names no turn of the conversation; dropped");
                    ++dropped;
                    continue;
                }
                if (std::find(cited.begin(), cited.end(), it->second.second) == cited.end()) cited.push_back(it->second.second);
            }
        }
        for (const auto& id : cited) p.evidence.push_back(answer_fact(id, *message(id, s), forms));
        if (!p.evidence.empty()) {
            p.meta["evidence_resolution"] = dropped > 0 ? "partly dropped" : "as cited";
            // A question citing most of the conversation says nothing of where its answer is: any
            // retrieval would find a cited turn. Its memory side is not decided (reported apart).
            std::size_t turns = 0;
            for (const auto& session : s.sessions) turns += session.messages.size();
            if (cited.size() > 20 && 2 * cited.size() >= turns) {
                // Kept in meta.evidence as written; no fact, so no memory-side verdict.
                p.evidence.clear();
                p.meta["evidence_usable"] = false;
                p.meta["evidence_cited_turns"] = cited.size();
                note("evidence unusable", path,
                     "the evidence cites " + std::to_string(cited.size()) + " of the conversation's " + std::to_string(turns) +
                         " turns; no fact is made of it: the question's memory side is not decided and it is reported "
                         "apart");
            }
            return;
        }
        // Nothing cited resolves: the turn of the speaker the question is about that holds most of
        // the answer's words. A question naming neither speaker, or both, is left without evidence.
        const std::string about = speaker_asked_about(p.question, s);
        if (about.empty()) {
            p.meta["evidence_resolution"] = "none";
            p.meta["evidence_usable"] = false;
            note("evidence empty", path,
                 "no evidence id names a turn and the question names no single speaker; left without evidence: the "
                 "question's memory side is not decided");
            return;
        }
        const data::Message* best = nullptr;
        data::EvidenceFact best_fact;
        for (const auto& session : s.sessions)
            for (const auto& m : session.messages) {
                if (m.content.rfind(about + ": ", 0) != 0) continue;
                auto f = answer_fact(m.id, m, forms);
                if (f.details_complete && (!best || detail_words(f) > detail_words(best_fact))) {
                    best = &m;
                    best_fact = std::move(f);
                }
            }
        if (best) {
            p.evidence.push_back(std::move(best_fact));
            p.meta["evidence_resolution"] = "derived from the answer";
            note("evidence derived", path,
                 "no evidence id names a turn; cited " + best->id + ", the turn of " + about +
                     " (the speaker the question is about) holding most of the answer's words");
            return;
        }
        p.meta["evidence_resolution"] = "none";
        p.meta["evidence_usable"] = false;
        note("evidence empty", path,
             "no evidence id names a turn and no turn of " + about +
                 " holds the answer's words; left without evidence: the question's memory side is not decided");
    }

    // The one speaker a question names (as a word, possessive included), or "" for none or both.
    static std::string speaker_asked_about(const std::string& question, const data::Scenario& s) {
        const auto speakers = s.meta.find("speakers");
        if (speakers == s.meta.end() || !speakers->is_array()) return {};
        const std::string q = " " + text::to_lower(question) + " ";
        std::string found;
        for (const auto& sp : *speakers) {
            if (!sp.is_string() || sp.get_ref<const std::string&>().empty()) continue;
            const std::string name = text::to_lower(sp.get<std::string>());
            bool named = false;
            for (std::size_t at = q.find(name); at != std::string::npos; at = q.find(name, at + 1)) {
                const unsigned char before = static_cast<unsigned char>(q[at - 1]);
                const unsigned char after = static_cast<unsigned char>(q[at + name.size()]);
                if (!std::isalnum(before) && !std::isalnum(after)) named = true;
            }
            if (!named) continue;
            if (!found.empty()) return {};
            found = sp.get<std::string>();
        }
        return found;
    }

    const json& m_sample;
    std::string m_base;
    std::size_t m_index = 0;
    const std::string& m_file;
    Notes& m_notes;
    std::set<std::string> m_message_ids;
    std::map<std::string, std::pair<std::string, std::string>> m_by_dia;  // canonical dia id -> (session, message id)
};

}  // namespace

Result<data::Scenario> import_locomo_sample(const json& sample, std::size_t index, const std::string& file, Notes& notes) {
    if (import_json::deeper_than(sample, data::k_max_json_depth))
        return make_error(ErrorKind::invalid_input, "nesting deeper than " + std::to_string(data::k_max_json_depth));
    return SampleImport(sample, index, file, notes).run();
}

Result<ImportResult> import_locomo(const std::string& path, const ScenarioSink& sink) {
    return import_list_file(path, "LoCoMo sample", import_locomo_sample, sink);
}

}  // namespace memfail::suites::benchmarks

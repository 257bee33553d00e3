// SPDX-License-Identifier: MIT
// Structural validation of scenarios.
#include <memfail/core/dates.hpp>
#include <memfail/core/hash.hpp>
#include <memfail/core/text.hpp>
#include <memfail/data/validate.hpp>

#include <algorithm>
#include <cstdio>
#include <set>

namespace memfail::data {

std::string format_violation(const std::string& path, const Violation& v) {
    std::string out = path;
    if (v.line) out += ":" + std::to_string(v.line);
    if (!v.field.empty()) out += ": " + v.field;
    return out + ": " + v.message;
}

std::string clean_id(const std::string& raw) {
    auto ok = [](unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
               c == ':' || c == '-';
    };
    std::string out = raw;
    for (char& c : out)
        if (!ok(static_cast<unsigned char>(c))) c = '-';
    if (!out.empty() && out.front() == '.') out.front() = '-';
    if (out.size() > k_max_id_length) out = out.substr(0, k_max_id_length - 17) + "-" + content_hash(raw).substr(0, 16);
    return out;
}

std::string id_problem(std::string_view id) {
    if (id.empty()) return "is empty";
    if (id.size() > k_max_id_length)
        return "is " + std::to_string(id.size()) + " characters long; at most " + std::to_string(k_max_id_length) +
               " are allowed";
    if (id.front() == '.') return "starts with '.'; ids may not";
    for (const char c : id) {
        const auto u = static_cast<unsigned char>(c);
        const bool ok = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '.' ||
                        u == '_' || u == ':' || u == '-';
        if (ok) continue;
        std::string shown;
        if (u >= 0x21 && u < 0x7f) shown = std::string("'") + c + "'";
        else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "0x%02X", u);
            shown = std::string("byte ") + buf;
        }
        return "contains " + shown + "; ids use only letters, digits and . _ : -";
    }
    return {};
}

namespace {
// An id as a message may quote it: control and non-ASCII bytes escaped, long ids cut.
std::string shown_id(std::string_view id) {
    std::string out;
    for (const char c : id.substr(0, 48)) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7f) out += c;
        else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", u);
            out += buf;
        }
    }
    if (id.size() > 48) out += "...";
    return out;
}

bool any_variant_in(const KeyDetail& detail, const std::string& normalized_text) {
    for (const auto& v : detail.variants)
        if (text::normalized_contains(normalized_text, text::normalize(v))) return true;
    return false;
}
}  // namespace

void validate_structure(const Scenario& s, std::size_t line, std::vector<Violation>& out) {
    auto add = [&](std::string field, std::string message) {
        out.push_back({line, std::move(field), std::move(message)});
    };
    // Every id is checked where it is defined; references to ids (after_session, message_ids) must
    // name a defined id, so they need no check of their own.
    auto check_id = [&](const std::string& field, const char* what, const std::string& id) {
        if (const std::string problem = id_problem(id); !problem.empty())
            add(field, std::string(what) + " id " + (id.empty() ? "" : "'" + shown_id(id) + "' ") + problem);
    };
    check_id("id", "scenario", s.id);
    if (s.sessions.empty()) add("sessions", "a scenario needs at least one session");

    std::set<std::string> session_ids, message_ids;
    for (std::size_t i = 0; i < s.sessions.size(); ++i) {
        const auto& session = s.sessions[i];
        const std::string path = "sessions[" + std::to_string(i) + "]";
        check_id(path + ".id", "session", session.id);
        if (!session_ids.insert(session.id).second)
            add(path + ".id", "duplicate session id '" + session.id + "'");
        if (session.messages.empty()) add(path + ".messages", "a session needs at least one message");
        for (std::size_t m = 0; m < session.messages.size(); ++m) {
            const auto& msg = session.messages[m];
            const std::string mpath = path + ".messages[" + std::to_string(m) + "]";
            check_id(mpath + ".id", "message", msg.id);
            if (!message_ids.insert(msg.id).second)
                add(mpath + ".id", "duplicate message id '" + msg.id + "'");
            if (msg.role != "user" && msg.role != "assistant" && msg.role != "system" && msg.role != "app")
                add(mpath + ".role", "role must be user, assistant, system or app; got '" + msg.role + "'");
            if ((msg.role == "app") != msg.app_log.has_value())
                add(mpath + ".app_log", msg.app_log ? "an app log's role must be \"app\"" : "a message with role \"app\" needs its app_log");
            if (msg.app_log && !dates::parse_date_time(msg.app_log->timestamp))
                add(mpath + ".app_log.timestamp", "must be \"YYYY-MM-DD HH:MM:SS\", not '" + msg.app_log->timestamp + "'");
            if (text::trim(msg.content).empty()) add(mpath + ".content", "message content is empty");
        }
    }

    const MessageIndex index(s);
    std::set<std::string> probe_ids;
    for (std::size_t i = 0; i < s.probes.size(); ++i) {
        const auto& p = s.probes[i];
        const std::string path = "probes[" + std::to_string(i) + "]";
        check_id(path + ".id", "probe", p.id);
        if (!probe_ids.insert(p.id).second) add(path + ".id", "duplicate probe id '" + p.id + "'");
        if (!session_ids.count(p.after_session))
            add(path + ".after_session", "checkpoint session '" + p.after_session + "' does not exist");
        if (text::trim(p.question).empty()) add(path + ".question", "question is empty");
        if (p.kind == ProbeKind::mcq) {
            if (p.choices.size() < 2) add(path + ".choices", "a multiple-choice probe needs choices");
            const bool letter_ok = p.correct_choice.size() == 1 && p.correct_choice[0] >= 'A' &&
                                   static_cast<std::size_t>(p.correct_choice[0] - 'A') < p.choices.size();
            if (!letter_ok)
                add(path + ".correct_choice",
                    "must be a letter naming one of the " + std::to_string(p.choices.size()) + " choices");
            std::set<std::string> seen;
            for (std::size_t c = 0; c < p.choices.size(); ++c)
                if (!seen.insert(text::normalize(p.choices[c])).second)
                    add(path + ".choices[" + std::to_string(c) + "]", "duplicate choice");
        }
        if (p.kind == ProbeKind::abstain && !p.evidence.empty())
            add(path + ".evidence", "an abstain probe must have no evidence: there is nothing to find");
        // An imported question whose source evidence is unusable (meta.evidence_usable false: it cites
        // most of the conversation, or no turn) has none: its memory side is not decided.
        const auto usable = p.meta.find("evidence_usable");
        const bool unusable = usable != p.meta.end() && usable->is_boolean() && !usable->get<bool>();
        if (p.kind != ProbeKind::abstain && p.evidence.empty() && p.fields.empty() && !unusable)
            add(path + ".evidence", "an answerable probe needs at least one evidence fact (or meta.evidence_usable false)");
        const std::size_t checkpoint = index.session_position(p.after_session);
        // Profile tasks (memfail/2, the dynamic suite): every gold evidence log exists, is an app log
        // and is stored by the checkpoint. A probe at C2 must be answerable from the logs up to C2.
        if (!p.task.empty() && p.task != "state_completion" && p.task != "personalized_service")
            add(path + ".task", "must be state_completion or personalized_service, not '" + p.task + "'");
        if (!p.task.empty() && p.fields.empty()) add(path + ".fields", "a profile task needs at least one field to fill");
        std::set<std::string> field_paths;
        auto check_log = [&](const std::string& id, const std::string& where) {
            const Message* msg = index.message(id);
            if (!msg) return add(where, "unknown app log id '" + id + "'");
            if (!msg->app_log) return add(where, "message '" + id + "' is not an app log");
            const Session* session = index.session_of(id);
            if (checkpoint != static_cast<std::size_t>(-1) && index.session_position(session->id) > checkpoint)
                add(where, "app log '" + id + "' is stored after the probe's checkpoint");
        };
        for (std::size_t f = 0; f < p.fields.size(); ++f) {
            const auto& field = p.fields[f];
            const std::string fpath = path + ".fields[" + std::to_string(f) + "]";
            if (field.path.empty()) add(fpath + ".path", "a field needs its path");
            else if (!field_paths.insert(field.path).second) add(fpath + ".path", "duplicate field '" + field.path + "'");
            if (field.type == FieldType::enumeration && field.options.empty())
                add(fpath + ".options", "an enumeration field needs its options");
            for (std::size_t e = 0; e < field.evidence.size(); ++e)
                check_log(field.evidence[e], fpath + ".evidence[" + std::to_string(e) + "]");
        }
        for (std::size_t c = 0; c < p.conflicting.size(); ++c)
            check_log(p.conflicting[c], path + ".conflicting[" + std::to_string(c) + "]");
        std::set<std::string> fact_ids;
        for (std::size_t e = 0; e < p.evidence.size(); ++e) {
            const auto& f = p.evidence[e];
            const std::string fpath = path + ".evidence[" + std::to_string(e) + "]";
            check_id(fpath + ".id", "fact", f.id);
            if (!fact_ids.insert(f.id).second) add(fpath + ".id", "duplicate fact id '" + f.id + "' in this probe");
            if (f.message_ids.empty()) add(fpath + ".message_ids", "a fact must cite at least one message");
            // A fact whose details could not all be derived (details_complete: false, an imported
            // row in other words) may list none: its statements or cited messages are then what a
            // memory must keep, and the judge decides the rest.
            if (f.key_details.empty() && f.details_complete)
                add(fpath + ".key_details", "a fact needs at least one key detail");
            std::string cited;
            for (std::size_t m = 0; m < f.message_ids.size(); ++m) {
                const Message* msg = index.message(f.message_ids[m]);
                const std::string mpath = fpath + ".message_ids[" + std::to_string(m) + "]";
                if (!msg) {
                    add(mpath, "unknown message id '" + f.message_ids[m] + "'");
                    continue;
                }
                const Session* session = index.session_of(f.message_ids[m]);
                if (checkpoint != static_cast<std::size_t>(-1) &&
                    index.session_position(session->id) > checkpoint)
                    add(mpath, "message '" + msg->id + "' is stored after the probe's checkpoint");
                cited += ' ';
                cited += text::normalize(msg->content);
            }
            for (std::size_t t = 0; t < f.statements.size(); ++t) {
                const std::string statement = text::normalize(f.statements[t]);
                const std::string tpath = fpath + ".statements[" + std::to_string(t) + "]";
                if (statement.empty()) add(tpath, "a statement is empty");
                else if (!cited.empty() && !text::normalized_contains(cited, statement))
                    add(tpath, "the statement is not in the cited messages verbatim");
            }
            if (!f.key_details.empty() && f.details_complete &&
                std::none_of(f.key_details.begin(), f.key_details.end(),
                             [](const KeyDetail& d) { return d.effective_role() == DetailRole::identity; }))
                add(fpath + ".key_details", "a fact needs at least one identity detail (what it is about)");
            const std::string fact_text = text::normalize(f.text);
            for (std::size_t d = 0; d < f.key_details.size(); ++d) {
                const auto& detail = f.key_details[d];
                const std::string dpath = fpath + ".key_details[" + std::to_string(d) + "]";
                if (detail.variants.empty()) {
                    add(dpath + ".variants", "a key detail needs at least one phrasing");
                    continue;
                }
                // One flaw, one line: a detail absent from the messages is usually absent from the
                // fact's text too, and saying so twice only buries the next finding.
                const bool in_cited = cited.empty() || any_variant_in(detail, cited);
                const bool in_text = any_variant_in(detail, fact_text);
                if (!in_cited)
                    add(dpath, "key detail '" + detail.name + "' (\"" + detail.variants[0] +
                                   "\") appears in none of the cited messages" +
                                   (in_text ? "" : " nor in the fact's own text"));
                else if (!in_text)
                    add(dpath, "key detail '" + detail.name + "' (\"" + detail.variants[0] +
                                   "\") is missing from the fact's own text");
            }
        }
        // memfail/2 probe fields.
        for (std::size_t t = 0; t < p.targets.size(); ++t)
            if (!s.event(p.targets[t]))
                add(path + ".targets[" + std::to_string(t) + "]", "unknown ledger event '" + p.targets[t] + "'");
        if (!p.expected_source.empty() && !index.message(p.expected_source))
            add(path + ".expected_source", "unknown message id '" + p.expected_source + "'");
        if (p.temporal && !p.temporal->expect_current && p.temporal->as_of.empty())
            add(path + ".temporal.as_of", "a probe about the past (expect_current false) needs as_of");
        if (p.should_abstain != (p.kind == ProbeKind::abstain) && p.uses_v2())
            add(path + ".should_abstain", p.should_abstain ? "a probe that should be abstained on must be of kind abstain"
                                                           : "an abstain probe must have should_abstain true");
        if (p.rubric) {
            const Rubric& r = *p.rubric;
            const std::string rpath = path + ".rubric";
            switch (r.kind) {
                case RubricKind::structured:
                case RubricKind::contains:
                    if (r.required.empty()) add(rpath + ".required", std::string("a ") + rubric_kind_name(r.kind) +
                                                                         " rubric needs at least one required element");
                    break;
                case RubricKind::constraint:
                    if (r.must_contain.empty() && r.must_not_contain.empty())
                        add(rpath, "a constraint rubric needs must_contain or must_not_contain");
                    break;
                case RubricKind::numeric:
                    if (!r.number) add(rpath + ".number", "a numeric rubric needs the expected number");
                    break;
                case RubricKind::entity_count:
                    if (!r.expected_count) add(rpath + ".expected_count", "an entity_count rubric needs expected_count");
                    break;
                case RubricKind::multi_field:
                    if (r.fields.empty()) add(rpath + ".fields", "a multi_field rubric needs fields");
                    break;
                case RubricKind::abstention:
                    if (!p.should_abstain) add(rpath, "an abstention rubric belongs to a probe that should abstain");
                    break;
                case RubricKind::exact:
                case RubricKind::address:
                    if (p.expected.is_null() && text::trim(p.answer).empty())
                        add(rpath, std::string("an ") + rubric_kind_name(r.kind) + " rubric needs an expected value");
                    break;
                case RubricKind::semantic: break;
            }
        }
    }

    // memfail/2: the ledger.
    std::set<std::string> event_ids;
    for (std::size_t i = 0; i < s.ledger.size(); ++i) {
        const LedgerEvent& e = s.ledger[i];
        const std::string path = "ledger[" + std::to_string(i) + "]";
        check_id(path + ".id", "ledger event", e.id);
        if (!event_ids.insert(e.id).second) add(path + ".id", "duplicate ledger event id '" + e.id + "'");
        auto check_session = [&](const char* field, const std::string& id, bool required) {
            if (id.empty()) {
                if (required) add(path + "." + field, "required field is empty");
                return;
            }
            if (!session_ids.count(id)) add(path + "." + field, "session '" + id + "' does not exist");
        };
        check_session("introduced_in", e.introduced_in, true);
        check_session("updated_in", e.updated_in, false);
        check_session("retracted_in", e.retracted_in, false);
        check_session("expires_after", e.expires_after, false);
        if (!e.retracted_by.empty() && !index.message(e.retracted_by))
            add(path + ".retracted_by", "unknown message id '" + e.retracted_by + "'");
        if (e.history.empty()) add(path + ".history", "an event needs at least one value");
        auto check_record = [&](const ValueRecord& r, const std::string& rpath) {
            if (r.value.is_null()) add(rpath + ".value", "a value is required");
            if (r.as_of.empty()) add(rpath + ".as_of", "as_of is empty");
            if (!r.message_id.empty() && !index.message(r.message_id))
                add(rpath + ".message_id", "unknown message id '" + r.message_id + "'");
            if (!r.session_id.empty() && !session_ids.count(r.session_id))
                add(rpath + ".session_id", "session '" + r.session_id + "' does not exist");
            if (!r.session_id.empty() && !r.message_id.empty())
                if (const Session* in = index.session_of(r.message_id); in && in->id != r.session_id)
                    add(rpath + ".session_id", "message '" + r.message_id + "' is in session '" + in->id + "', not '" +
                                                   r.session_id + "'");
        };
        for (std::size_t h = 0; h < e.history.size(); ++h) {
            const std::string rpath = path + ".history[" + std::to_string(h) + "]";
            check_record(e.history[h], rpath);
            if (h && !e.history[h].as_of.empty() && e.history[h].as_of < e.history[h - 1].as_of)
                add(rpath + ".as_of", "history is not in time order ('" + e.history[h].as_of + "' after '" +
                                          e.history[h - 1].as_of + "')");
        }
        for (std::size_t d = 0; d < e.distractors.size(); ++d)
            check_record(e.distractors[d], path + ".distractors[" + std::to_string(d) + "]");
    }
}

}  // namespace memfail::data

// SPDX-License-Identifier: MIT
// The write-integrity rules: the ledger checked against the sessions it cites, and every probe
// against the ledger at its checkpoint. data::validate_structure has already checked that the ids
// exist; these rules check that what the ledger says is what the conversation says:
//
// - a value record (history or distractor) citing a message is stated by it: one of its mentions
//   (value_mentions) appears in the message, on normalised words; records citing no message (an
//   import that found no verbatim statement, a latent constraint) are not checked for this;
// - a record's as_of is not before the timestamp of its session;
// - retracted_by is a message of retracted_in; retracted_by is set exactly when retracted_in is;
//   expires_after is not before introduced_in;
// - a probe's targets are introduced at or before its checkpoint, its expected_source is stored at
//   or before it, its temporal as_of is before the checkpoint session's timestamp;
// - a probe about one target graded exact, numeric, address or multi_field expects the target's
//   value at the probe's time (its as_of, else the checkpoint), and its expected_source states it.
#include <memfail/core/text.hpp>
#include <memfail/grade/evidence.hpp>
#include <memfail/grade/rubric.hpp>
#include <memfail/suites/writ/rules.hpp>
#include <memfail/suites/writ/values.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

namespace memfail::suites::writ {

namespace {

using data::MessageIndex;

// Seconds since 1970 of an ISO 8601 time: "2026-03-15", "2026-03-15T12:00", "2026-03-15T12:00:00Z",
// fractions of a second and "+02:00"-style offsets included. Nothing else is accepted.
std::optional<long long> iso_seconds(std::string_view s) {
    auto digits = [&](std::size_t at, std::size_t count) -> std::optional<int> {
        if (at + count > s.size()) return std::nullopt;
        int v = 0;
        for (std::size_t i = at; i < at + count; ++i) {
            if (s[i] < '0' || s[i] > '9') return std::nullopt;
            v = v * 10 + (s[i] - '0');
        }
        return v;
    };
    const auto y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2);
    if (!y || !mo || !d || s[4] != '-' || s[7] != '-' || *mo < 1 || *mo > 12 || *d < 1 || *d > 31) return std::nullopt;
    int h = 0, mi = 0, sec = 0;
    std::size_t at = 10;
    if (at < s.size()) {
        if (s[at] != 'T' && s[at] != ' ') return std::nullopt;
        const auto hh = digits(at + 1, 2), mm = digits(at + 4, 2);
        if (!hh || !mm || s[at + 3] != ':' || *hh > 23 || *mm > 59) return std::nullopt;
        h = *hh;
        mi = *mm;
        at += 6;
        if (at < s.size() && s[at] == ':') {
            const auto ss = digits(at + 1, 2);
            if (!ss || *ss > 60) return std::nullopt;
            sec = *ss;
            at += 3;
        }
        if (at < s.size() && s[at] == '.') {
            ++at;
            while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
        }
    }
    long long offset = 0;
    if (at < s.size()) {
        if (s[at] == 'Z' && at + 1 == s.size()) {
            at = s.size();
        } else if ((s[at] == '+' || s[at] == '-') && at + 6 == s.size() && s[at + 3] == ':') {
            const auto oh = digits(at + 1, 2), om = digits(at + 4, 2);
            if (!oh || !om) return std::nullopt;
            offset = (s[at] == '+' ? 1 : -1) * (*oh * 3600LL + *om * 60LL);
            at = s.size();
        } else {
            return std::nullopt;
        }
    }
    // Days from civil (H. Hinnant).
    const int yy = *y - (*mo <= 2 ? 1 : 0);
    const long long era = (yy >= 0 ? yy : yy - 399) / 400;
    const long long yoe = yy - era * 400;
    const long long doy = (153 * (*mo > 2 ? *mo - 3 : *mo + 9) + 2) / 5 + *d - 1;
    const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    const long long days = era * 146097 + doe - 719468;
    return days * 86400 + h * 3600LL + mi * 60LL + sec - offset;
}

// Through the evidence matcher's canonical form, so "June 15th" states "June 15" and "$50K" states 50000.
bool states(const data::Message& message, const std::vector<std::string>& mentions) {
    const std::string haystack = grade::evidence::canonical(message.content);
    for (const auto& m : mentions) {
        const std::string needle = grade::evidence::canonical(m);
        if (!needle.empty() && text::normalized_contains(haystack, needle)) return true;
    }
    return false;
}

std::string quoted_list(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size() && i < 4; ++i) out += (i ? ", \"" : "\"") + items[i] + "\"";
    if (items.size() > 4) out += ", ...";
    return out.empty() ? "(nothing)" : out;
}

// Values compared as what they mean: numbers as numbers, strings on normalised words, objects and
// arrays element by element.
// A string that is only a written number ("$5,000", "5000", "1,200.50"), as that number.
std::optional<double> written_number(const std::string& s) {
    std::string digits;
    bool seen_digit = false;
    for (const char c : s) {
        if (c >= '0' && c <= '9') {
            digits += c;
            seen_digit = true;
        } else if (c == '.') {
            digits += c;
        } else if (c == ',' || c == '$' || c == ' ' || c == '-' || c == '+') {
            if (c == '-' && !seen_digit) digits += c;
        } else {
            return std::nullopt;
        }
    }
    if (!seen_digit) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(digits.c_str(), &end);
    if (!end || *end != '\0') return std::nullopt;
    return v;
}

bool same_value(const nlohmann::json& a, const nlohmann::json& b) {
    if (a.is_number() && b.is_number()) return std::fabs(a.get<double>() - b.get<double>()) < 1e-9;
    // A number and its written form ("$5,000" and 5000, as an import keeps them) are one value.
    if (a.is_number() && b.is_string())
        if (auto n = written_number(b.get<std::string>())) return std::fabs(a.get<double>() - *n) < 1e-9;
    if (a.is_string() && b.is_number()) return same_value(b, a);
    // The same text, or the same lead under different annotations ("123 Main Street, Springfield, IL
    // (single location; ...)" and "123 Main Street, Springfield, IL (dock / receiving; ...)").
    if (a.is_string() && b.is_string())
        return grade::evidence::canonical(a.get<std::string>()) == grade::evidence::canonical(b.get<std::string>()) ||
               same_lead(a.get<std::string>(), b.get<std::string>());
    if (a.is_object() && b.is_object()) {
        if (a.size() != b.size()) return false;
        for (const auto& [key, value] : a.items())
            if (!b.contains(key) || !same_value(value, b.at(key))) return false;
        return true;
    }
    if (a.is_array() && b.is_array()) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!same_value(a[i], b[i])) return false;
        return true;
    }
    return a == b;
}

class Checker {
public:
    Checker(const data::Scenario& s, std::size_t line, std::vector<data::Violation>& out)
        : m_s(s), m_index(s), m_line(line), m_out(out) {}

    void run() {
        for (std::size_t i = 0; i < m_s.ledger.size(); ++i) check_event(i);
        for (std::size_t i = 0; i < m_s.probes.size(); ++i) check_probe(i);
    }

private:
    void add(std::string field, std::string message) { m_out.push_back({m_line, std::move(field), std::move(message)}); }

    static constexpr std::size_t npos = static_cast<std::size_t>(-1);

    std::size_t position(const std::string& session_id) const {
        return session_id.empty() ? npos : m_index.session_position(session_id);
    }
    const data::Session* session(const std::string& session_id) const {
        const std::size_t p = position(session_id);
        return p == npos ? nullptr : &m_s.sessions[p];
    }
    // The session a record belongs to: its own session_id, else its message's.
    const data::Session* record_session(const data::ValueRecord& r) const {
        if (!r.session_id.empty()) return session(r.session_id);
        return r.message_id.empty() ? nullptr : m_index.session_of(r.message_id);
    }

    // Where a message is in its session (npos when it is not there).
    static std::size_t order_in(const data::Session& s, const std::string& message_id) {
        for (std::size_t i = 0; i < s.messages.size(); ++i)
            if (s.messages[i].id == message_id) return i;
        return npos;
    }

    void check_record(const data::ValueRecord& r, const std::string& path) {
        if (!r.message_id.empty())
            if (const data::Message* m = m_index.message(r.message_id)) {
                const std::vector<std::string> mentions = data::value_mentions(r);
                if (!states(*m, mentions))
                    add(path + ".message_id", "message '" + r.message_id + "' does not state the value: none of " +
                                                  quoted_list(mentions) + " appears in it");
            }
        const data::Session* s = record_session(r);
        if (!s || r.as_of.empty()) return;
        const auto as_of = iso_seconds(r.as_of);
        const auto started = iso_seconds(s->timestamp);
        if (!as_of) add(path + ".as_of", "'" + r.as_of + "' is not an ISO 8601 time");
        else if (started && *as_of < *started)
            add(path + ".as_of", "'" + r.as_of + "' is before its session '" + s->id + "' (" + s->timestamp + ")");
    }

    void check_event(std::size_t i) {
        const data::LedgerEvent& e = m_s.ledger[i];
        const std::string path = "ledger[" + std::to_string(i) + "]";
        for (std::size_t h = 0; h < e.history.size(); ++h)
            check_record(e.history[h], path + ".history[" + std::to_string(h) + "]");
        for (std::size_t d = 0; d < e.distractors.size(); ++d)
            check_record(e.distractors[d], path + ".distractors[" + std::to_string(d) + "]");
        if (!e.retracted_by.empty() && e.retracted_in.empty())
            add(path + ".retracted_in", "the event has retracted_by '" + e.retracted_by + "' but no retracted_in");
        if (!e.retracted_by.empty() && !e.retracted_in.empty())
            if (const data::Session* s = m_index.session_of(e.retracted_by); s && s->id != e.retracted_in)
                add(path + ".retracted_by", "message '" + e.retracted_by + "' is in session '" + s->id +
                                                "', not in retracted_in '" + e.retracted_in + "'");
        const std::size_t introduced = position(e.introduced_in), expires = position(e.expires_after);
        if (introduced != npos && expires != npos && expires < introduced)
            add(path + ".expires_after", "session '" + e.expires_after + "' is before introduced_in '" +
                                             e.introduced_in + "'");
    }

    // The value of `e` at time `at`, as stored once session `checkpoint` is: the last history record
    // stated by then, unless a retraction after it came first. nullopt: no value then.
    std::optional<const data::ValueRecord*> value_at(const data::LedgerEvent& e, long long at,
                                                     std::size_t checkpoint) const {
        const data::ValueRecord* found = nullptr;
        long long found_time = 0;
        for (const auto& r : e.history) {
            const auto t = iso_seconds(r.as_of);
            const data::Session* s = record_session(r);
            if (!t || *t > at) continue;
            if (s && position(s->id) > checkpoint) continue;
            found = &r;
            found_time = *t;
        }
        if (!found) return std::nullopt;
        if (const data::Session* s = session(e.retracted_in)) {
            const auto t = iso_seconds(s->timestamp);
            if (t && *t >= found_time && *t <= at && position(s->id) <= checkpoint) {
                // Retracted after the value was stated; a record in the retraction's own session
                // re-introduces it only if it is stated after the retraction message.
                const data::Session* rs = record_session(*found);
                if (!(rs && rs->id == s->id && order_in(*s, found->message_id) > order_in(*s, e.retracted_by)))
                    return std::nullopt;
            }
        }
        return found;
    }

    void check_probe(std::size_t i) {
        const data::Probe& p = m_s.probes[i];
        const std::string path = "probes[" + std::to_string(i) + "]";
        const std::size_t checkpoint = position(p.after_session);
        if (checkpoint == npos) return;  // validate_structure reports it
        const data::Session& cp = m_s.sessions[checkpoint];
        const auto cp_time = iso_seconds(cp.timestamp);

        for (std::size_t t = 0; t < p.targets.size(); ++t) {
            const data::LedgerEvent* e = m_s.event(p.targets[t]);
            if (!e) continue;
            const std::size_t introduced = position(e->introduced_in);
            if (introduced != npos && introduced > checkpoint)
                add(path + ".targets[" + std::to_string(t) + "]",
                    "ledger event '" + e->id + "' is introduced in session '" + e->introduced_in +
                        "', after the probe's checkpoint '" + p.after_session + "'");
        }
        if (!p.expected_source.empty())
            if (const data::Session* s = m_index.session_of(p.expected_source); s && position(s->id) > checkpoint)
                add(path + ".expected_source", "message '" + p.expected_source + "' is in session '" + s->id +
                                                   "', after the probe's checkpoint '" + p.after_session + "'");
        std::optional<long long> as_of;
        if (p.temporal && !p.temporal->as_of.empty()) {
            as_of = iso_seconds(p.temporal->as_of);
            if (!as_of) add(path + ".temporal.as_of", "'" + p.temporal->as_of + "' is not an ISO 8601 time");
            // A date after the checkpoint with expect_current (WRIT's temporal-004: "what will my
            // salary be in December?") asks for the value now; only a question about the past must
            // name a past date.
            else if (cp_time && *as_of >= *cp_time && !p.temporal->expect_current)
                add(path + ".temporal.as_of", "'" + p.temporal->as_of + "' is not before the checkpoint session '" +
                                                  cp.id + "' (" + cp.timestamp + ")");
        }

        // The expected value of a single-target value probe is the target's value at the probe's time.
        if (p.targets.size() != 1 || p.expected.is_null() || !p.rubric || p.should_abstain) return;
        const data::RubricKind kind = p.rubric->kind;
        if (kind != data::RubricKind::exact && kind != data::RubricKind::numeric &&
            kind != data::RubricKind::address && kind != data::RubricKind::multi_field)
            return;
        const data::LedgerEvent* e = m_s.event(p.targets[0]);
        if (!e || !cp_time) return;
        const bool past = p.temporal && !p.temporal->expect_current && as_of;
        // "Now" at a checkpoint is the end of that session: just before the next one begins.
        long long at = std::numeric_limits<long long>::max();
        if (checkpoint + 1 < m_s.sessions.size())
            if (const auto next = iso_seconds(m_s.sessions[checkpoint + 1].timestamp)) at = *next - 1;
        if (past) at = *as_of;
        const auto value = value_at(*e, at, checkpoint);
        const std::string when = past ? "on " + p.temporal->as_of : "at checkpoint '" + p.after_session + "'";
        if (!value) {
            add(path + ".expected", "target '" + e->id + "' has no value " + when +
                                        " (not yet stated, or retracted), yet the probe expects " + p.expected.dump());
            return;
        }
        const data::ValueRecord& record = **value;
        // A numeric rubric compares numbers: "$50,000 (single consolidated budget fact; ...)" expects
        // the 50000 of "$50,000 approved budget cap (...)".
        const bool same_number = kind == data::RubricKind::numeric && p.expected.is_string() && record.value.is_string() &&
                                 [&] {
                                     auto first = [](const std::string& v) {
                                         const std::string lead = lead_of(v);
                                         return written_number(lead.substr(0, lead.find(' ')));
                                     };
                                     const auto a = first(p.expected.get<std::string>());
                                     const auto b = first(record.value.get<std::string>());
                                     return a && b && std::fabs(*a - *b) < 1e-9;
                                 }();
        if (!same_number && !same_value(p.expected, record.value)) {
            add(path + ".expected", "expects " + p.expected.dump() + " but target '" + e->id + "' is " +
                                        record.value.dump() + " " + when);
            return;
        }
        if (p.expected_source.empty()) return;
        const data::Message* source = m_index.message(p.expected_source);
        if (!source) return;
        // The record that message states, if any, says how the value is written there.
        std::vector<std::string> mentions;
        for (const auto& r : e->history)
            if (r.message_id == p.expected_source && same_value(r.value, p.expected)) mentions = data::value_mentions(r);
        if (mentions.empty()) {
            data::ValueRecord expected;
            // An annotated value ("123 Main Street, Springfield, IL (single location; ...)") is stated
            // by its lead; the annotation is the dataset's comment, said by no one.
            expected.value = p.expected.is_string() ? nlohmann::json(lead_of(p.expected.get<std::string>())) : p.expected;
            mentions = data::value_mentions(expected);
        }
        if (states(*source, mentions)) return;
        // An address is stated however it is written ("123 Main St, Springfield" for "123 Main Street,
        // Springfield, IL"): read as the rubric reads an answer, the message fails to state it only
        // when the address grader says so; a component it cannot find as written proves nothing.
        if (kind == data::RubricKind::address &&
            grade::grade_rubric(p, source->content).outcome != grade::RubricOutcome::fail)
            return;
        add(path + ".expected_source", "message '" + p.expected_source + "' does not state the expected value " +
                                           quoted_list(mentions));
    }

    const data::Scenario& m_s;
    const MessageIndex m_index;
    std::size_t m_line;
    std::vector<data::Violation>& m_out;
};

}  // namespace

void validate_writ(const data::Scenario& scenario, std::size_t line, std::vector<data::Violation>& out) {
    Checker(scenario, line, out).run();
}

}  // namespace memfail::suites::writ

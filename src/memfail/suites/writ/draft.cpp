// SPDX-License-Identifier: MIT
// The shared machinery of the write-integrity generator: timeline, messages, ledger, probes, filler.
#include <memfail/core/text.hpp>
#include <memfail/suites/writ/draft.hpp>
#include <memfail/suites/writ/generate.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace memfail::suites::writ {

namespace {

// Days since 1970-01-01 of a civil date and back (H. Hinnant's algorithms), so dates never depend
// on the C library's time zone handling.
long days_from_civil(int y, unsigned m, unsigned d) {
    y -= m <= 2;
    const long era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long>(doe) - 719468;
}

struct Civil {
    int year;
    unsigned month, day;
};

Civil civil_from_days(long z) {
    z += 719468;
    const long era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const long y = static_cast<long>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    return {static_cast<int>(y + (m <= 2)), m, d};
}

// Day 0 of a scenario's calendar is 2026-01-01.
Civil civil_of(int day) { return civil_from_days(days_from_civil(2026, 1, 1) + day); }

constexpr std::array<const char*, 12> k_months = {"January", "February", "March",     "April",   "May",      "June",
                                                  "July",    "August",   "September", "October", "November", "December"};

// "412 Maple Street, Portland, OR" -> "Maple Street".
std::string street_of(const std::string& address) {
    const std::size_t space = address.find(' ');
    return address.substr(space + 1, address.find(',') - space - 1);
}

bool overlaps(const std::string& a, const std::string& b) {
    const std::string na = text::normalize(a), nb = text::normalize(b);
    return na == nb || text::normalized_contains(na, nb) || text::normalized_contains(nb, na);
}

}  // namespace

std::string prose_list(const std::vector<std::string>& items) {
    if (items.empty()) return "";
    if (items.size() == 1) return items[0];
    std::string out;
    for (std::size_t i = 0; i + 1 < items.size(); ++i) out += (i ? ", " : "") + items[i];
    return out + " and " + items.back();
}

std::string written_number(double value, int decimals, const std::string& prefix, const std::string& suffix) {
    const double scale = decimals == 2 ? 100.0 : decimals == 1 ? 10.0 : 1.0;
    const long long scaled = std::llround(value * scale);
    const long long whole = scaled / static_cast<long long>(scale);
    const long long frac = scaled % static_cast<long long>(scale);
    std::string digits = std::to_string(whole), grouped;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) grouped += ',';
        grouped += digits[i];
    }
    if (decimals > 0) {
        char buf[8];
        std::snprintf(buf, sizeof buf, decimals == 2 ? ".%02lld" : ".%01lld", frac);
        grouped += buf;
    }
    return prefix + grouped + suffix;
}

nlohmann::json number_json(double value, int decimals) {
    if (decimals == 0) return static_cast<long long>(std::llround(value));
    const double scale = decimals == 2 ? 100.0 : 10.0;
    return static_cast<double>(std::llround(value * scale)) / scale;
}

Draft::Draft(const Lexicon& lex_, const std::string& category, std::size_t number, std::uint64_t seed, Rng rng_)
    : rng(rng_), lex(lex_), m_category(category), m_seed(seed) {
    char id[64];
    std::snprintf(id, sizeof id, "writ-%s-%03zu", category.c_str(), number);
    m_s.format = data::k_format_v2;
    m_s.id = id;
    m_s.suite = "writ";
    m_s.dataset = dataset_name(category);
    const auto& exchanges = lex.table("filler.json", "exchanges");
    for (std::size_t i = 0; i < exchanges.size(); ++i) m_filler_deck.push_back(i);
    rng.shuffle(m_filler_deck);
    for (std::size_t i = 0; i < lex.pool("filler.json", "asides").size(); ++i) m_aside_deck.push_back(i);
    rng.shuffle(m_aside_deck);
}

// ---- text ------------------------------------------------------------------------------------------

std::string Draft::say(const std::vector<std::string>& templates, const Vars& vars) {
    // Phrasing varies within a scenario: a template already used is picked again only when every
    // template of its list has been.
    std::vector<const std::string*> fresh;
    for (const auto& t : templates)
        if (!m_used_templates.count(&t)) fresh.push_back(&t);
    const std::string* chosen = fresh.empty() ? &rng.pick(templates) : fresh[rng.below(fresh.size())];
    m_used_templates.insert(chosen);
    return fill(*chosen, vars);
}

std::string Draft::maybe_bury(const std::string& statement, double p) {
    if (!rng.chance(p)) return statement;
    trap("low_salience");
    const auto& asides = lex.pool("filler.json", "asides");
    const std::size_t before = static_cast<std::size_t>(rng.between(2, 4));
    const std::size_t after = static_cast<std::size_t>(rng.between(1, 3));
    std::vector<std::string> parts;
    auto next_aside = [&] {
        if (m_aside_deck.empty()) {
            for (std::size_t i = 0; i < asides.size(); ++i) m_aside_deck.push_back(i);
            rng.shuffle(m_aside_deck);
        }
        const std::size_t i = m_aside_deck.back();
        m_aside_deck.pop_back();
        return asides[i];
    };
    for (std::size_t i = 0; i < before; ++i) parts.push_back(next_aside());
    // Sometimes a segue announces the change of subject; the statement itself is kept verbatim.
    if (rng.chance(0.5)) parts.push_back(rng.pick(lex.pool("filler.json", "segues")));
    parts.push_back(statement);
    for (std::size_t i = 0; i < after; ++i) parts.push_back(next_aside());
    return text::join(parts, " ");
}

std::vector<std::string> Draft::distinct(const std::vector<std::string>& pool, std::size_t count,
                                         const std::vector<std::string>& avoid) {
    std::vector<std::string> order = pool;
    rng.shuffle(order);
    std::vector<std::string> out;
    for (const auto& v : order) {
        if (out.size() == count) break;
        const bool clash = std::any_of(out.begin(), out.end(), [&](const std::string& o) { return overlaps(o, v); }) ||
                           std::any_of(avoid.begin(), avoid.end(), [&](const std::string& o) { return overlaps(o, v); });
        if (!clash) out.push_back(v);
    }
    MF_ASSERT(out.size() == count, "a lexicon pool has too few distinct values for a scenario");
    return out;
}

std::string Draft::first_name() {
    const auto& names = lex.pool("people.json", "first_names");
    for (int attempt = 0; attempt < 1000; ++attempt) {
        const std::string& n = rng.pick(names);
        if (m_names.insert(n).second) return n;
    }
    MF_ASSERT(false, "ran out of first names");
    return {};
}

Person Draft::person() {
    Person p;
    p.first = first_name();
    const auto& lasts = lex.pool("people.json", "last_names");
    for (int attempt = 0; attempt < 1000; ++attempt) {
        const std::string& n = rng.pick(lasts);
        if (m_names.insert(n).second) {
            p.last = n;
            break;
        }
    }
    MF_ASSERT(!p.last.empty(), "ran out of last names");
    p.full = p.first + " " + p.last;
    p.relation = rng.pick(lex.pool("people.json", "relations"));
    return p;
}

namespace {

// Where two adjacent digits differ and swapping them leaves no leading zero.
std::vector<std::size_t> swap_positions(const std::string& digits) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i + 1 < digits.size(); ++i)
        if (digits[i] != digits[i + 1] && !(i == 0 && digits[1] == '0')) out.push_back(i);
    return out;
}

}  // namespace

std::string Draft::digit_string(std::size_t digits) {
    for (;;) {
        std::string s;
        s += static_cast<char>('1' + rng.below(9));
        while (s.size() < digits) s += static_cast<char>('0' + rng.below(10));
        if (!swap_positions(s).empty()) return s;
    }
}

std::string Draft::swapped_digits(const std::string& digits) {
    const std::vector<std::size_t> positions = swap_positions(digits);
    MF_ASSERT(!positions.empty(), "no digits to swap");
    const std::size_t i = rng.pick(positions);
    std::string out = digits;
    std::swap(out[i], out[i + 1]);
    return out;
}

std::string Draft::address(const std::vector<std::string>& avoid) {
    const auto& cities = lex.table("places.json", "cities");
    for (;;) {
        const std::string number = digit_string(static_cast<std::size_t>(rng.between(3, 4)));
        const LexEntry& city = rng.pick(cities);
        const std::string a = number + " " + rng.pick(lex.pool("places.json", "street_names")) + " " +
                              rng.pick(lex.pool("places.json", "street_types")) + ", " + city.text("city") + ", " +
                              city.text("state");
        // Another address may share the city, never the street: moves go somewhere new.
        const bool clash = std::any_of(avoid.begin(), avoid.end(),
                                       [&](const std::string& o) { return street_of(o) == street_of(a); });
        if (!clash) return a;
    }
}

std::string Draft::near_address(const std::string& address) {
    const std::size_t space = address.find(' ');
    return swapped_digits(address.substr(0, space)) + address.substr(space);
}

// ---- timeline --------------------------------------------------------------------------------------

void Draft::make_sessions(std::size_t count, int min_gap_days) {
    MF_ASSERT(count >= 1 && m_days.empty(), "sessions are made once");
    const int n = static_cast<int>(count);
    const int least = (n - 1) * min_gap_days;
    const double u = rng.unit();
    int span;
    if (u < 0.25) span = static_cast<int>(rng.between(std::max(least, n - 1), std::max(least, 21)));
    else if (u < 0.7) span = static_cast<int>(rng.between(std::max(least, 30), std::max(least, 120)));
    else span = static_cast<int>(rng.between(std::max(least, 150), std::max(least, 365)));
    std::vector<int> weights;
    long total = 0;
    for (int i = 1; i < n; ++i) {
        weights.push_back(static_cast<int>(rng.between(1, 100)));
        total += weights.back();
    }
    const long extra = span - least;
    int day = static_cast<int>(rng.between(0, 45));
    static const std::array<int, 4> k_minutes = {0, 15, 30, 45};
    for (int i = 0; i < n; ++i) {
        if (i) day += min_gap_days + static_cast<int>(extra * weights[static_cast<std::size_t>(i - 1)] / total);
        m_days.push_back(day);
        const Civil c = civil_of(day);
        char ts[64];
        std::snprintf(ts, sizeof ts, "%04d-%02u-%02uT%02d:%02d:00Z", c.year, c.month, c.day,
                      static_cast<int>(rng.between(8, 20)), k_minutes[rng.below(k_minutes.size())]);
        m_s.sessions.push_back({std::to_string(i + 1), ts, {}});
    }
}

std::vector<std::size_t> Draft::slots(std::size_t needed) { return slots_between(needed, 0, last_session()); }

std::vector<std::size_t> Draft::slots_between(std::size_t needed, std::size_t first, std::size_t last) {
    MF_ASSERT(first <= last && needed <= last - first + 1, "not enough sessions for the slots asked");
    std::vector<std::size_t> out = rng.sample_indices(last - first + 1, needed);
    for (auto& i : out) i += first;
    std::sort(out.begin(), out.end());
    return out;
}

const std::string& Draft::timestamp(std::size_t session) const { return m_s.sessions.at(session).timestamp; }
const std::string& Draft::session_id(std::size_t session) const { return m_s.sessions.at(session).id; }

int Draft::day_between(std::size_t first, std::size_t second) {
    MF_ASSERT(first < second && m_days[second] - m_days[first] >= 2, "no day lies between these sessions");
    return static_cast<int>(rng.between(m_days[first] + 1, m_days[second] - 1));
}

std::string Draft::date_text(int day) {
    const Civil c = civil_of(day);
    return std::string(k_months[c.month - 1]) + " " + std::to_string(c.day) + ", " + std::to_string(c.year);
}

std::string Draft::date_text_plus_years(int day, int years) {
    const Civil c = civil_of(day);
    const unsigned d = c.month == 2 && c.day == 29 ? 28 : c.day;
    return std::string(k_months[c.month - 1]) + " " + std::to_string(d) + ", " + std::to_string(c.year + years);
}

std::string Draft::noon(int day) {
    const Civil c = civil_of(day);
    char ts[64];
    std::snprintf(ts, sizeof ts, "%04d-%02u-%02uT12:00:00Z", c.year, c.month, c.day);
    return ts;
}

// ---- messages --------------------------------------------------------------------------------------

void Draft::filler_exchange(std::size_t session) {
    const auto& exchanges = lex.table("filler.json", "exchanges");
    if (m_filler_deck.empty()) {
        for (std::size_t i = 0; i < exchanges.size(); ++i) m_filler_deck.push_back(i);
        rng.shuffle(m_filler_deck);
    }
    const LexEntry& e = exchanges[m_filler_deck.back()];
    m_filler_deck.pop_back();
    data::Session& s = m_s.sessions.at(session);
    s.messages.push_back({s.id + ":" + std::to_string(s.messages.size()), "user", e.text("user")});
    s.messages.push_back({s.id + ":" + std::to_string(s.messages.size()), "assistant", e.text("assistant")});
}

Msg Draft::user(std::size_t session, const std::string& content) {
    // A fact is not always the first thing said in its session.
    if (m_s.sessions.at(session).messages.empty() && rng.chance(0.3)) filler_exchange(session);
    data::Session& s = m_s.sessions.at(session);
    const std::string id = s.id + ":" + std::to_string(s.messages.size());
    s.messages.push_back({id, "user", content});
    return {id, s.id, s.timestamp, session, content};
}

Msg Draft::assistant(std::size_t session, const std::string& content) {
    data::Session& s = m_s.sessions.at(session);
    const std::string id = s.id + ":" + std::to_string(s.messages.size());
    s.messages.push_back({id, "assistant", content});
    return {id, s.id, s.timestamp, session, content};
}

Msg Draft::ack(std::size_t session, const std::string& value, double p_repeat, const std::string& old) {
    if (!rng.chance(p_repeat)) return ack_plain(session);
    if (old.empty()) return assistant(session, say("conversation.json", "ack_value", {{"value", value}}));
    return assistant(session, say("conversation.json", "ack_update", {{"value", value}, {"old", old}}));
}

Msg Draft::ack_plain(std::size_t session) { return assistant(session, say("conversation.json", "ack_plain", {})); }

// ---- ledger ----------------------------------------------------------------------------------------

void Draft::event(const std::string& id, data::MemoryType type, const std::string& description) {
    MF_ASSERT(!m_s.event(id), "duplicate ledger event id");
    data::LedgerEvent e;
    e.id = id;
    e.type = type;
    e.description = description;
    m_s.ledger.push_back(std::move(e));
}

data::LedgerEvent& Draft::ev(const std::string& id) {
    for (auto& e : m_s.ledger)
        if (e.id == id) return e;
    MF_ASSERT(false, "unknown ledger event");
    return m_s.ledger.front();
}

void Draft::value(const std::string& event_id, const nlohmann::json& value, const Msg& m,
                  std::vector<std::string> mentions, data::Authority authority) {
    data::LedgerEvent& e = ev(event_id);
    data::ValueRecord r;
    r.value = value;
    r.as_of = m.timestamp;
    r.message_id = m.id;
    r.session_id = m.session_id;
    r.authority = authority;
    r.mentions = std::move(mentions);
    if (e.history.empty()) e.introduced_in = m.session_id;
    else e.updated_in = m.session_id;
    e.value = value;
    e.history.push_back(std::move(r));
}

void Draft::unstated_value(const std::string& event_id, const nlohmann::json& value, std::size_t session) {
    data::LedgerEvent& e = ev(event_id);
    data::ValueRecord r;
    r.value = value;
    r.as_of = timestamp(session);
    r.session_id = session_id(session);
    if (e.history.empty()) e.introduced_in = r.session_id;
    else e.updated_in = r.session_id;
    e.value = value;
    e.history.push_back(std::move(r));
}

void Draft::distractor(const std::string& event_id, const nlohmann::json& value, const Msg& m,
                       std::vector<std::string> mentions, data::Authority authority) {
    data::ValueRecord r;
    r.value = value;
    r.as_of = m.timestamp;
    r.message_id = m.id;
    r.session_id = m.session_id;
    r.authority = authority;
    r.mentions = std::move(mentions);
    ev(event_id).distractors.push_back(std::move(r));
}

void Draft::retract(const std::string& event_id, const Msg& m) {
    data::LedgerEvent& e = ev(event_id);
    e.retracted_in = m.session_id;
    e.retracted_by = m.id;
}

// ---- probes ----------------------------------------------------------------------------------------

data::Probe Draft::new_probe(std::size_t after_session, const std::string& question, const std::string& asks) {
    data::Probe p;
    p.after_session = session_id(after_session);
    p.question = question;
    p.meta = {{"category", m_category}, {"asks", asks}};
    if (after_session != last_session()) p.meta["checkpoint"] = "mid";
    return p;
}

void Draft::evidence(data::Probe& probe, const std::string& event_id, const std::vector<Msg>& messages,
                     const std::vector<std::pair<std::string, std::vector<std::string>>>& details) {
    data::EvidenceFact f;
    f.id = event_id;  // prefixed with the probe id in finish()
    std::vector<std::string> texts;
    for (const auto& m : messages) {
        if (std::find(f.message_ids.begin(), f.message_ids.end(), m.id) != f.message_ids.end()) continue;
        f.message_ids.push_back(m.id);
        texts.push_back(m.content);
    }
    f.text = text::join(texts, " ");
    for (const auto& [name, variants] : details) f.key_details.emplace_back(name, variants, data::DetailRole::identity);
    probe.evidence.push_back(std::move(f));
}

void Draft::add_probe(data::Probe probe) { m_s.probes.push_back(std::move(probe)); }

std::string Draft::answer(std::string_view shape, const Vars& vars) {
    return text::capitalize(say("answers.json", shape, vars));
}

data::Scenario Draft::finish() {
    for (std::size_t i = 0; i < m_s.sessions.size(); ++i) {
        if (m_s.sessions[i].messages.empty()) {
            const int exchanges = static_cast<int>(rng.between(1, 3));
            for (int k = 0; k < exchanges; ++k) filler_exchange(i);
        } else if (rng.chance(0.3)) {
            filler_exchange(i);
        }
    }
    // Probes in checkpoint order, numbered in that order.
    std::stable_sort(m_s.probes.begin(), m_s.probes.end(), [](const data::Probe& a, const data::Probe& b) {
        return std::stoi(a.after_session) < std::stoi(b.after_session);
    });
    for (std::size_t i = 0; i < m_s.probes.size(); ++i) {
        data::Probe& p = m_s.probes[i];
        p.id = m_s.id + "-p" + std::to_string(i + 1);
        for (auto& f : p.evidence) f.id = p.id + ":" + f.id;
    }
    nlohmann::json traps = nlohmann::json::array();
    for (const auto& t : m_traps) traps.push_back(t);
    m_s.meta = {{"category", m_category},
                {"source", "generated"},
                {"generator", k_writ_generator_version},
                {"seed", m_seed},
                {"traps", traps}};
    return std::move(m_s);
}

}  // namespace memfail::suites::writ

// SPDX-License-Identifier: MIT
// A write-integrity scenario being written: its timeline, messages, ledger and probes, with the
// conventions every category shares (ids, timestamps, filler, traps, evidence). Private to the writ
// generator; each category (build_*.cpp) only decides what is said when and what is asked.
//
// Conventions: session ids "1".."N", message ids "<session>:<index>" (0-based), timestamps
// "2026-01-15T10:00:00Z" strictly increasing by whole days; every value record's as_of is the
// timestamp of the session that states it; probe ids "<scenario id>-p<k>" in checkpoint order;
// evidence ids "<probe id>:<event id>".
#pragma once
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/rng.hpp>
#include <memfail/data/model.hpp>
#include <memfail/suites/writ/lexicon.hpp>

namespace memfail::suites::writ {

// A message once written: where it is and what it says.
struct Msg {
    std::string id;
    std::string session_id;
    std::string timestamp;
    std::size_t session = 0;  // index into the scenario's sessions
    std::string content;
};

// Someone other than the user.
struct Person {
    std::string first, last, full;
    std::string relation;  // "my sister"
};

class Draft {
public:
    Draft(const Lexicon& lex, const std::string& category, std::size_t number, std::uint64_t seed, Rng rng);

    Rng rng;
    const Lexicon& lex;

    // ---- text ------------------------------------------------------------------------------------
    const std::vector<std::string>& pool(std::string_view file, std::string_view key) const {
        return lex.pool(file, key);
    }
    const std::vector<LexEntry>& table(std::string_view file, std::string_view key) const {
        return lex.table(file, key);
    }
    // A template of the list, filled; one not yet used in this scenario when there is one.
    std::string say(const std::vector<std::string>& templates, const Vars& vars);
    std::string say(std::string_view file, std::string_view key, const Vars& vars) {
        return say(pool(file, key), vars);
    }
    // The statement inside a long turn of asides (the low_salience trap), with probability p.
    std::string maybe_bury(const std::string& statement, double p);
    // `count` distinct values of `pool`, none containing another or any of `avoid` (on normalised
    // words), so that no value can be mistaken for a part of another.
    std::vector<std::string> distinct(const std::vector<std::string>& pool, std::size_t count,
                                      const std::vector<std::string>& avoid = {});
    // Someone new: first and last name unused in this scenario, and a relation to the user.
    Person person();
    // A first name unused in this scenario.
    std::string first_name();
    // Marks a name as used (a person made elsewhere, e.g. from the nickname table).
    void use_name(const std::string& name) { m_names.insert(name); }
    // "Oak Street"-style addresses: "412 Maple Street, Portland, OR".
    std::string address(const std::vector<std::string>& avoid = {});
    // The same street and city with the house number's digits permuted: a near-duplicate address.
    std::string near_address(const std::string& address);
    // A string of `digits` digits, not starting with 0, in which two adjacent digits can be swapped
    // without a leading 0 (so swapped_digits() always has a near-duplicate to offer).
    std::string digit_string(std::size_t digits);
    // The same digits with one adjacent pair of different digits swapped (never a leading 0).
    std::string swapped_digits(const std::string& digits);

    // ---- timeline ----------------------------------------------------------------------------------
    // Creates `count` sessions, consecutive ones at least `min_gap_days` apart, spanning days to a
    // year.
    void make_sessions(std::size_t count, int min_gap_days = 1);
    std::size_t session_count() const { return m_days.size(); }
    std::size_t last_session() const { return m_days.size() - 1; }
    // `needed` distinct session indices in increasing order.
    std::vector<std::size_t> slots(std::size_t needed);
    // `needed` distinct session indices in increasing order, all in [first, last].
    std::vector<std::size_t> slots_between(std::size_t needed, std::size_t first, std::size_t last);
    int day(std::size_t session) const { return m_days[session]; }
    const std::string& timestamp(std::size_t session) const;
    const std::string& session_id(std::size_t session) const;
    // A day strictly between the days of two sessions (first < second, at least 2 days apart).
    int day_between(std::size_t first, std::size_t second);
    static std::string date_text(int day);  // "March 15, 2026"
    static std::string noon(int day);       // "2026-03-15T12:00:00Z"
    // The same month and day `years` later ("March 31, 2029"); February 29 becomes the 28th.
    static std::string date_text_plus_years(int day, int years);

    // ---- messages ----------------------------------------------------------------------------------
    Msg user(std::size_t session, const std::string& text);
    Msg assistant(std::size_t session, const std::string& text);
    // The assistant's reply to a statement: repeating the value (ack_value / ack_update) with
    // probability p_repeat, else a plain acknowledgement.
    Msg ack(std::size_t session, const std::string& value, double p_repeat = 0.6, const std::string& old = {});
    Msg ack_plain(std::size_t session);

    // ---- ledger ------------------------------------------------------------------------------------
    void event(const std::string& id, data::MemoryType type, const std::string& description);
    data::LedgerEvent& ev(const std::string& id);
    // Appends a value stated by `m` (introduced_in / updated_in follow).
    void value(const std::string& event_id, const nlohmann::json& value, const Msg& m,
               std::vector<std::string> mentions, data::Authority authority = data::Authority::user_stated);
    // A value no message states verbatim (a latent constraint): holds from `session` on.
    void unstated_value(const std::string& event_id, const nlohmann::json& value, std::size_t session);
    void distractor(const std::string& event_id, const nlohmann::json& value, const Msg& m,
                    std::vector<std::string> mentions, data::Authority authority);
    void retract(const std::string& event_id, const Msg& m);

    // ---- probes ------------------------------------------------------------------------------------
    data::Probe new_probe(std::size_t after_session, const std::string& question, const std::string& asks);
    // One evidence fact for `event_id`: the cited messages, their text, and identity key details
    // (name -> accepted phrasings; the first detail is conventionally "value").
    void evidence(data::Probe& probe, const std::string& event_id, const std::vector<Msg>& messages,
                  const std::vector<std::pair<std::string, std::vector<std::string>>>& details);
    void add_probe(data::Probe probe);
    // A reference answer from answers.json.
    std::string answer(std::string_view shape, const Vars& vars);

    void trap(const std::string& name) { m_traps.insert(name); }
    bool has_trap(const std::string& name) const { return m_traps.count(name) > 0; }

    // Fills sessions that hold nothing (and some that do) with chatter, orders and numbers the
    // probes, and returns the scenario.
    data::Scenario finish();

private:
    void filler_exchange(std::size_t session);

    std::string m_category;
    data::Scenario m_s;
    std::vector<int> m_days;
    std::set<std::string> m_traps;
    std::set<std::string> m_names;
    std::set<const std::string*> m_used_templates;  // lexicon strings live as long as the lexicon
    std::vector<std::size_t> m_filler_deck;
    std::vector<std::size_t> m_aside_deck;
    std::uint64_t m_seed = 0;
};

// Joins values as prose: "a", "a and b", "a, b and c".
std::string prose_list(const std::vector<std::string>& items);
// "$5,000", "$4,375.50", "12.7 km": a number written with a prefix, thousands separators,
// `decimals` decimals and a suffix.
std::string written_number(double value, int decimals, const std::string& prefix, const std::string& suffix);
// A value as JSON: an integer when decimals is 0, else a double.
nlohmann::json number_json(double value, int decimals);

}  // namespace memfail::suites::writ

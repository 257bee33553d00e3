// SPDX-License-Identifier: MIT
// Per-leaf grading rules. Each typed reader turns a leaf into a value (a date, a set of weekdays,
// minutes after midnight, minutes of duration, a number) or says it cannot; two values that both read
// are compared exactly. A leaf that does not read is never guessed at: it goes to the judge, unless it
// is a placeholder ("<fill>", "unknown"), which is plainly no answer.
#include <memfail/suites/dynamic/fields.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <memfail/core/dates.hpp>
#include <memfail/core/text.hpp>
#include <memfail/grade/evidence.hpp>
#include <memfail/grade/rubric.hpp>

namespace memfail::suites::dynamic {

using nlohmann::json;

namespace {

constexpr const char* k_fill = "<fill>";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// A scalar leaf as text ("" for null); arrays and objects as compact JSON.
std::string leaf_text(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_null()) return {};
    return v.dump();
}

// Answers that say nothing: the template's own placeholder and the usual ways of leaving a slot empty.
bool is_placeholder(const json& v) {
    if (v.is_null()) return true;
    if (v.is_array()) return v.empty();
    if (!v.is_string()) return false;
    const std::string raw(text::trim(v.get<std::string>()));
    if (raw == k_fill) return true;
    static const std::set<std::string> empty = {"",        "unknown",     "n a",     "na",          "not known",
                                                "unsure",  "not sure",    "tbd",     "not specified", "unspecified",
                                                "not available", "no information", "fill"};
    return empty.count(grade::evidence::canonical(raw)) > 0;
}

FieldGrade decided(const std::string& path, bool correct, int detail, std::string reason) {
    FieldGrade g;
    g.path = path;
    g.core_correct = correct;
    g.detail_quality = correct ? detail : 0;
    g.score = correct ? field_score(true, g.detail_quality) : 0;
    g.decided_by = Decider::rule;
    g.reason = std::move(reason);
    return g;
}

FieldGrade right(const std::string& path, std::string reason) { return decided(path, true, 2, std::move(reason)); }
FieldGrade wrong(const std::string& path, std::string reason) { return decided(path, false, 0, std::move(reason)); }

FieldGrade undecided(const std::string& path, std::string reason) {
    FieldGrade g;
    g.path = path;
    g.decided_by = Decider::unverified;
    g.reason = std::move(reason);
    return g;
}

std::string quoted(const json& v) { return "'" + leaf_text(v) + "'"; }

// ---- words ------------------------------------------------------------------------------------

// Lower-case tokens of letters or of digits (a '.' between digits stays inside: "1.5"); a hyphen or
// an en or em dash becomes its own token "-" so ranges ("Mon-Fri") can be read. Everything else
// separates.
std::vector<std::string> tokens(std::string_view s) {
    std::vector<std::string> out;
    std::string cur;
    bool digits = false;
    auto flush = [&] {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
    };
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (is_digit(c) || (c == '.' && digits && i + 1 < s.size() && is_digit(s[i + 1]) && !cur.empty())) {
            if (!digits) flush();
            digits = true;
            cur.push_back(c);
        } else if (is_alpha(c)) {
            if (digits) flush();
            digits = false;
            cur.push_back(static_cast<char>(c | 0x20));
        } else if (c == '\'') {
            continue;  // "Monday's" -> "mondays"
        } else {
            flush();
            digits = false;
            if (c == '-') out.push_back("-");
            else if (static_cast<unsigned char>(c) == 0xE2 && i + 2 < s.size() &&
                     static_cast<unsigned char>(s[i + 1]) == 0x80) {  // en or em dash
                out.push_back("-");
                i += 2;
            }
        }
    }
    flush();
    return out;
}

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return is_digit(c); });
}

int to_int(std::string_view s) {
    int v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
}

std::optional<double> to_double(std::string_view s) {
    double v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

// ---- dates ------------------------------------------------------------------------------------

struct DayOfYear {
    std::optional<int> year;
    int month = 0, day = 0;
};

// A month's name or abbreviation, from the evidence matcher's table (grade/lexicon/evidence.json).
std::optional<int> month_of(std::string_view w) {
    const auto& months = grade::evidence::lexicon().months;
    const auto it = months.find(std::string(w));
    if (it == months.end()) return std::nullopt;
    return it->second;
}

bool valid_day(const DayOfYear& d) {
    if (d.month < 1 || d.month > 12 || d.day < 1) return false;
    return d.day <= (d.year ? dates::days_in_month(*d.year, d.month) : (d.month == 2 ? 29 : dates::days_in_month(2001, d.month)));
}

int full_year(std::string_view digits) {
    const int y = to_int(digits);
    return digits.size() == 2 ? 2000 + y : y;
}

// "5", "5th", "21st" as a day of the month.
std::optional<int> day_number(const std::vector<std::string>& t, std::size_t& i) {
    if (i >= t.size() || !all_digits(t[i]) || t[i].size() > 2) return std::nullopt;
    const int d = to_int(t[i]);
    ++i;
    if (i < t.size() && (t[i] == "st" || t[i] == "nd" || t[i] == "rd" || t[i] == "th")) ++i;
    return d;
}

// Every reading of a written date: one for an unambiguous date, two for a slashed date whose day and
// month could be either way round ("03/04/2024"), none when it is not a date.
std::vector<DayOfYear> read_date(std::string_view raw) {
    const std::string s(text::trim(raw));
    if (auto t = dates::parse_date_time(s)) return {DayOfYear{t->date.year, t->date.month, t->date.day}};
    std::vector<DayOfYear> out;
    auto keep = [&](DayOfYear d) {
        if (valid_day(d)) out.push_back(d);
    };
    // Numeric with separators: 2024/03/05, 05/03/2024, 3.5.24, 03/05.
    std::vector<std::string> parts;
    char sep = 0;
    {
        std::string cur;
        bool numeric = !s.empty();
        for (char c : s) {
            if (is_digit(c)) cur.push_back(c);
            else if ((c == '/' || c == '.' || c == '-') && (sep == 0 || sep == c) && !cur.empty()) {
                sep = c;
                parts.push_back(cur);
                cur.clear();
            } else {
                numeric = false;
                break;
            }
        }
        if (numeric && !cur.empty()) parts.push_back(cur);
        else parts.clear();
    }
    if (parts.size() == 3 && parts[0].size() == 4) {
        keep({to_int(parts[0]), to_int(parts[1]), to_int(parts[2])});
        return out;
    }
    if ((parts.size() == 3 && (parts[2].size() == 4 || parts[2].size() == 2)) || parts.size() == 2) {
        std::optional<int> year;
        if (parts.size() == 3) year = full_year(parts[2]);
        const int a = to_int(parts[0]), b = to_int(parts[1]);
        keep({year, a, b});            // month first
        if (a != b) keep({year, b, a});  // day first
        return out;
    }
    // Words: "March 5, 2024", "5 Mar 2024", "Tuesday, March 5th", "the 5th of March".
    std::vector<std::string> t;
    for (auto& w : tokens(s))
        if (w != "the" && w != "of" && w != "on" && w != "-" && !dates::parse_weekday(w)) t.push_back(w);
    std::size_t i = 0;
    DayOfYear d;
    if (i < t.size() && month_of(t[i])) {
        d.month = *month_of(t[i++]);
        const auto day = day_number(t, i);
        if (!day) return {};
        d.day = *day;
    } else if (auto day = day_number(t, i); day && i < t.size() && month_of(t[i])) {
        d.day = *day;
        d.month = *month_of(t[i++]);
    } else {
        return {};
    }
    if (i < t.size() && all_digits(t[i]) && t[i].size() == 4) d.year = to_int(t[i++]);
    if (i != t.size()) return {};
    keep(d);
    return out;
}

bool same_day(const DayOfYear& a, const DayOfYear& b) {
    return a.month == b.month && a.day == b.day && (!a.year || !b.year || *a.year == *b.year);
}

FieldGrade grade_date(const data::ProbeField& f, const json& got) {
    const auto expected = read_date(leaf_text(f.expected));
    if (expected.size() != 1) return undecided(f.path, "the reference " + quoted(f.expected) + " is not one date");
    const auto readings = read_date(leaf_text(got));
    if (readings.empty()) return undecided(f.path, "the answer " + quoted(got) + " is not a date the rules read");
    const auto matching = std::count_if(readings.begin(), readings.end(),
                                        [&](const DayOfYear& r) { return same_day(r, expected.front()); });
    if (matching == static_cast<long>(readings.size()))
        return right(f.path, "the answer " + quoted(got) + " is the date " + quoted(f.expected));
    if (matching == 0) return wrong(f.path, "the answer " + quoted(got) + " is not the date " + quoted(f.expected));
    return undecided(f.path, "the answer " + quoted(got) + " could be day-first or month-first");
}

// ---- weekdays ---------------------------------------------------------------------------------

using Days = std::set<int>;

void add_range(Days& out, int from, int to) {
    for (int d = from;; d = (d + 1) % 7) {
        out.insert(d);
        if (d == to) break;
    }
}

// A set of weekdays from a phrase ("Mon, Wed and Fri", "Mondays", "weekdays", "Mon-Fri", "every day").
std::optional<Days> read_days_text(std::string_view s) {
    static const std::set<std::string> fillers = {"and", "or", "on", "every", "each", "the", "s", "all", "also"};
    const auto t = tokens(s);
    Days out;
    int last = -1;  // the weekday just read (-1: none), for a range
    bool range = false;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const std::string& w = t[i];
        if (w == "-" || w == "to" || w == "through" || w == "thru" || w == "until") {
            if (last < 0) return std::nullopt;
            range = true;
            continue;
        }
        if (auto d = dates::parse_weekday(w); d && !all_digits(w)) {
            if (range) add_range(out, last, *d);
            else out.insert(*d);
            last = *d;
            range = false;
            continue;
        }
        if (range) return std::nullopt;
        last = -1;
        if (w == "weekday" || w == "weekdays") add_range(out, 0, 4);
        else if (w == "weekend" || w == "weekends") add_range(out, 5, 6);
        else if (w == "daily" || w == "everyday" || ((w == "day" || w == "days") && i > 0 && t[i - 1] == "every"))
            add_range(out, 0, 6);
        else if (!fillers.count(w)) return std::nullopt;
    }
    if (range || out.empty()) return std::nullopt;
    return out;
}

// JSON ints count from 0 = Monday (DynamicMem's days_of_week); strings are read as phrases.
std::optional<Days> read_days(const json& v) {
    if (v.is_number_integer()) {
        const auto d = v.get<long long>();
        if (d < 0 || d > 6) return std::nullopt;
        return Days{static_cast<int>(d)};
    }
    if (v.is_string()) return read_days_text(v.get<std::string>());
    if (v.is_array()) {
        Days out;
        for (const auto& e : v) {
            auto d = read_days(e);
            if (!d) return std::nullopt;
            out.insert(d->begin(), d->end());
        }
        if (out.empty()) return std::nullopt;
        return out;
    }
    return std::nullopt;
}

std::string days_text(const Days& days) {
    std::vector<std::string> names;
    for (int d : days) names.emplace_back(dates::weekday_short_name(d));
    return text::join(names, ", ");
}

FieldGrade grade_weekday(const data::ProbeField& f, const json& got) {
    const auto expected = read_days(f.expected);
    if (!expected) return undecided(f.path, "the reference " + quoted(f.expected) + " is not a set of weekdays");
    const auto days = read_days(got);
    if (!days) return undecided(f.path, "the answer " + quoted(got) + " is not weekdays the rules read");
    if (*days == *expected) return right(f.path, "the answer names the weekdays " + days_text(*days));
    return wrong(f.path, "the answer names " + days_text(*days) + ", not " + days_text(*expected));
}

// ---- clock times ------------------------------------------------------------------------------

// True when a time is written on a 12-hour dial without saying which half ("6:30", "6"): a speaker
// may mean 18:30 by it.
bool twelve_hour_without_half(std::string_view raw, int minutes) {
    const std::string_view s = text::trim(raw);
    if (s.empty() || s.front() == '0') return false;
    for (char c : s)
        if (is_alpha(c)) return false;  // am, pm, h, noon
    const int hour = minutes / 60;
    return hour >= 1 && hour <= 12;
}

// How far a time may be from the reference and still be the same timing (DynamicMem's judge).
constexpr int k_time_tolerance = 5;

FieldGrade grade_time(const data::ProbeField& f, const json& got) {
    const auto expected = f.expected.is_string() ? dates::parse_clock(text::trim(f.expected.get<std::string>()))
                                                 : std::nullopt;
    if (!expected) return undecided(f.path, "the reference " + quoted(f.expected) + " is not a clock time");
    if (!got.is_string()) return undecided(f.path, "the answer " + quoted(got) + " is not a clock time the rules read");
    const std::string raw = got.get<std::string>();
    const auto minutes = dates::parse_clock(text::trim(raw));
    if (!minutes) return undecided(f.path, "the answer " + quoted(got) + " is not a clock time the rules read");
    // Minutes apart on the dial (23:58 and 00:02 are 4 apart).
    auto apart = [](int a, int b) {
        const int d = std::abs(a - b) % (24 * 60);
        return std::min(d, 24 * 60 - d);
    };
    const int off = apart(*minutes, *expected);
    if (off == 0) return right(f.path, "the answer is " + dates::format_clock(*minutes));
    if (twelve_hour_without_half(raw, *minutes) && apart((*minutes + 12 * 60) % (24 * 60), *expected) <= k_time_tolerance)
        return undecided(f.path, "the answer " + quoted(got) + " does not say am or pm");
    // DynamicMem's judge: a time within 5 minutes is the same timing (core), exact earns full detail.
    if (off <= k_time_tolerance)
        return decided(f.path, true, 1,
                       "the answer " + dates::format_clock(*minutes) + " is " + std::to_string(off) + " min from " +
                           dates::format_clock(*expected) + ": the same timing, not exact");
    return wrong(f.path, "the answer is " + dates::format_clock(*minutes) + ", not " + dates::format_clock(*expected));
}

// ---- durations --------------------------------------------------------------------------------

struct Duration {
    double minutes = 0;
    bool unitless = false;  // a bare number: minutes only by convention
};

std::optional<double> unit_minutes(std::string_view w) {
    static const std::pair<std::string_view, double> units[] = {
        {"s", 1.0 / 60},   {"sec", 1.0 / 60}, {"secs", 1.0 / 60}, {"second", 1.0 / 60}, {"seconds", 1.0 / 60},
        {"m", 1},          {"min", 1},        {"mins", 1},        {"minute", 1},        {"minutes", 1},
        {"h", 60},         {"hr", 60},        {"hrs", 60},        {"hour", 60},         {"hours", 60},
        {"d", 1440},       {"day", 1440},     {"days", 1440},     {"week", 10080},      {"weeks", 10080}};
    for (const auto& [name, m] : units)
        if (w == name) return m;
    return std::nullopt;
}

// A count of units: digits, "a" / "an", or a number word from the evidence matcher's table.
std::optional<double> small_number(std::string_view w) {
    const auto& words = grade::evidence::lexicon().number_words;
    if (auto it = words.find(std::string(w)); it != words.end()) return to_double(it->second);
    if (w == "a" || w == "an") return 1.0;
    if (all_digits(w) || (!w.empty() && is_digit(w.front()))) return to_double(w);
    return std::nullopt;
}

// ISO 8601 "PT1H30M", "P1DT2H", "PT45M".
std::optional<double> iso_duration(std::string_view s) {
    if (s.size() < 3 || (s[0] != 'P' && s[0] != 'p')) return std::nullopt;
    double total = 0;
    bool in_time = false, any = false;
    std::string num;
    for (std::size_t i = 1; i < s.size(); ++i) {
        const char c = static_cast<char>(s[i] & ~0x20);
        if (is_digit(s[i]) || s[i] == '.') {
            num.push_back(s[i]);
            continue;
        }
        if (c == 'T' && num.empty()) {
            in_time = true;
            continue;
        }
        const auto v = to_double(num);
        if (!v) return std::nullopt;
        num.clear();
        if (c == 'D' && !in_time) total += *v * 1440;
        else if (c == 'W' && !in_time) total += *v * 10080;
        else if (c == 'H' && in_time) total += *v * 60;
        else if (c == 'M' && in_time) total += *v;
        else if (c == 'S' && in_time) total += *v / 60;
        else return std::nullopt;
        any = true;
    }
    if (!num.empty() || !any) return std::nullopt;
    return total;
}

// "45 minutes", "1h 30m", "1h30", "1.5 hours", "90 min", "an hour and a half", "half an hour", "PT1H30M".
std::optional<Duration> read_duration(const json& v) {
    if (v.is_number()) return Duration{v.get<double>(), true};
    if (!v.is_string()) return std::nullopt;
    const std::string s(text::trim(v.get<std::string>()));
    if (auto m = iso_duration(s)) return Duration{*m, false};
    const auto t = tokens(s);
    if (t.size() == 1 && is_digit(t[0].front()))
        if (auto n = to_double(t[0])) return Duration{*n, true};
    double total = 0;
    std::optional<double> last_unit;
    std::size_t i = 0;
    auto at = [&](std::size_t k, std::string_view w) { return k < t.size() && t[k] == w; };
    while (i < t.size()) {
        if (at(i, "and") && at(i + 1, "a") && at(i + 2, "half") && last_unit) {  // "an hour and a half"
            total += 0.5 * *last_unit;
            i += 3;
            continue;
        }
        if (at(i, "and")) {
            ++i;
            continue;
        }
        if (at(i, "half") && (at(i + 1, "an") || at(i + 1, "a")) && i + 2 < t.size() && unit_minutes(t[i + 2])) {
            total += 0.5 * *unit_minutes(t[i + 2]);  // "half an hour"
            last_unit = unit_minutes(t[i + 2]);
            i += 3;
            continue;
        }
        if (at(i, "half") && i + 1 < t.size() && unit_minutes(t[i + 1])) {  // "half hour"
            total += 0.5 * *unit_minutes(t[i + 1]);
            last_unit = unit_minutes(t[i + 1]);
            i += 2;
            continue;
        }
        auto q = small_number(t[i]);
        if (!q) return std::nullopt;
        ++i;
        if (at(i, "and") && at(i + 1, "a") && at(i + 2, "half")) {  // "1 and a half hours"
            *q += 0.5;
            i += 3;
        }
        if (i < t.size() && unit_minutes(t[i])) {
            last_unit = unit_minutes(t[i]);
            total += *q * *last_unit;
            ++i;
        } else if (last_unit && *last_unit == 60 && i == t.size() && all_digits(t[i - 1])) {
            total += *q;  // "1h30": the minutes after the hours
        } else {
            return std::nullopt;
        }
    }
    if (!last_unit) return std::nullopt;
    return Duration{total, false};
}

bool same_amount(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }

std::string minutes_text(double m) {
    const double r = std::round(m);
    return (same_amount(m, r) ? std::to_string(static_cast<long long>(r)) : std::to_string(m)) + " min";
}

FieldGrade grade_duration(const data::ProbeField& f, const json& got) {
    const auto expected = read_duration(f.expected);
    if (!expected) return undecided(f.path, "the reference " + quoted(f.expected) + " is not a duration");
    const auto d = read_duration(got);
    if (!d) return undecided(f.path, "the answer " + quoted(got) + " is not a duration the rules read");
    if (same_amount(d->minutes, expected->minutes))
        return right(f.path, "the answer lasts " + minutes_text(d->minutes));
    // A bare number is minutes by convention only: with a reference in hours it may mean hours.
    if (d->unitless && !expected->unitless)
        return undecided(f.path, "the answer " + quoted(got) + " gives no unit");
    return wrong(f.path, "the answer lasts " + minutes_text(d->minutes) + ", not " + minutes_text(expected->minutes));
}

// ---- numbers ----------------------------------------------------------------------------------

struct Amount {
    double value = 0;
    bool percent = false;
};

// A leaf that is nothing but one number: "$5,000", "5k", "1.2 million", "15%", "€30", "12 USD".
std::optional<Amount> read_amount(const json& v) {
    if (v.is_number()) return Amount{v.get<double>(), false};
    if (!v.is_string()) return std::nullopt;
    std::string s(text::trim(v.get<std::string>()));
    Amount a;
    auto strip_prefix = [&](std::string_view p) {
        if (s.size() > p.size() && text::to_lower(s.substr(0, p.size())) == p) {
            s = std::string(text::trim(s.substr(p.size())));
            return true;
        }
        return false;
    };
    auto strip_suffix = [&](std::string_view p) {
        if (s.size() > p.size() && text::to_lower(s.substr(s.size() - p.size())) == p) {
            s = std::string(text::trim(s.substr(0, s.size() - p.size())));
            return true;
        }
        return false;
    };
    bool negative = strip_prefix("-");
    bool currency = false;
    for (std::string_view p : {"$", "\xE2\x82\xAC", "\xC2\xA3", "usd", "eur", "gbp"})
        if (strip_prefix(p)) {
            currency = true;
            break;
        }
    if (!negative) negative = strip_prefix("-");
    if (strip_suffix("%") || strip_suffix("percent") || strip_suffix("pct")) a.percent = true;
    for (std::string_view p : {"dollars", "dollar", "usd", "euros", "euro", "eur", "gbp", "bucks"})
        if (strip_suffix(p)) {
            currency = true;
            break;
        }
    double mult = 1;
    // The lexicon's scale words (a dozen is no amount suffix), then the short suffixes; built once.
    static const std::vector<std::pair<std::string, double>> multipliers = [] {
        std::vector<std::pair<std::string, double>> out;
        for (const auto& [word, m] : grade::evidence::lexicon().scale_words)
            if (word != "dozen") out.emplace_back(word, m);
        out.insert(out.end(), {{"k", 1e3}, {"bn", 1e9}, {"m", 1e6}});
        return out;
    }();
    for (const auto& [p, m] : multipliers) {
        // Short suffixes only attached to the digits ("5k", "$1.2m"), and a lower-case "m" only after
        // a currency sign: "5m" alone may be minutes or metres.
        if (s.size() > p.size() && text::to_lower(s.substr(s.size() - p.size())) == p &&
            (p.size() > 2 || is_digit(s[s.size() - p.size() - 1])) &&
            (p != "m" || currency || s.back() == 'M')) {
            s = std::string(text::trim(s.substr(0, s.size() - p.size())));
            mult = m;
            break;
        }
    }
    // Digits with optional thousands separators in threes and a decimal part.
    std::string clean;
    std::size_t i = 0, group = 0;
    bool seen_comma = false, seen_point = false;
    for (; i < s.size(); ++i) {
        const char c = s[i];
        if (is_digit(c)) {
            clean.push_back(c);
            ++group;
        } else if (c == ',' && !seen_point && group > 0 && (seen_comma ? group == 3 : group <= 3)) {
            seen_comma = true;
            group = 0;
        } else if (c == '.' && !seen_point && group > 0) {
            if (seen_comma && group != 3) return std::nullopt;
            seen_point = true;
            clean.push_back('.');
            group = 0;
        } else {
            return std::nullopt;
        }
    }
    if (clean.empty() || clean.back() == '.' || (seen_comma && !seen_point && group != 3)) return std::nullopt;
    const auto value = to_double(clean);
    if (!value) return std::nullopt;
    a.value = *value * mult * (negative ? -1 : 1);
    return a;
}

std::size_t digit_runs(std::string_view s) {
    std::size_t runs = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (is_digit(s[i]) && (i == 0 || !(is_digit(s[i - 1]) || s[i - 1] == ',' || s[i - 1] == '.'))) ++runs;
    return runs;
}

std::string number_text(double v) {
    const double r = std::round(v);
    if (std::fabs(v - r) < 1e-9 && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(r));
    std::string s = std::to_string(v);
    while (!s.empty() && s.back() == '0') s.pop_back();
    return s;
}

FieldGrade grade_number(const data::ProbeField& f, const json& got) {
    const auto expected = read_amount(f.expected);
    if (!expected) return undecided(f.path, "the reference " + quoted(f.expected) + " is not a number");
    const double want = expected->value;
    if (const auto a = read_amount(got)) {
        // "15%" states 15 percent: it equals a reference of 15 or of 0.15.
        if (same_amount(a->value, want) || (a->percent && !expected->percent && same_amount(a->value / 100, want)))
            return right(f.path, "the answer is " + number_text(a->value) + (a->percent ? "%" : ""));
        return wrong(f.path, "the answer is " + number_text(a->value) + ", not " + number_text(want));
    }
    // Prose around the number ("about 5,000 a month", "five thousand"): the rubric's number reader
    // decides when the answer states one number, or only numbers other than the reference.
    if (!got.is_string()) return undecided(f.path, "the answer " + quoted(got) + " is not a number the rules read");
    data::Probe as_probe;
    data::Rubric rubric;
    rubric.kind = data::RubricKind::numeric;
    rubric.number = want;
    as_probe.rubric = rubric;
    const std::string raw = got.get<std::string>();
    const auto v = grade::grade_rubric(as_probe, raw);
    if (v.outcome == grade::RubricOutcome::fail) return wrong(f.path, v.reason);
    if (v.outcome == grade::RubricOutcome::pass && digit_runs(raw) <= 1) return right(f.path, v.reason);
    return undecided(f.path, "the answer " + quoted(got) + " is not one number the rules read");
}

// ---- enumerations -----------------------------------------------------------------------------

FieldGrade grade_enumeration(const data::ProbeField& f, const json& got) {
    const std::string answer = grade::evidence::canonical(leaf_text(got));
    if (answer == grade::evidence::canonical(leaf_text(f.expected)))
        return right(f.path, "the answer is the option " + quoted(f.expected));
    for (const auto& option : f.options)
        if (answer == grade::evidence::canonical(option))
            return wrong(f.path, "the answer chooses the option '" + option + "', not " + quoted(f.expected));
    return undecided(f.path, "the answer " + quoted(got) + " is none of the options as written");
}

// ---- lists ------------------------------------------------------------------------------------

// Items of a list leaf, normalised: array elements, or a string split at commas, semicolons and lines
// (a leading "and"/"or" dropped). "and" inside an item is kept: "mac and cheese" is one item.
std::vector<std::string> list_items(const json& v) {
    std::vector<std::string> raw;
    if (v.is_array()) {
        for (const auto& e : v) raw.push_back(leaf_text(e));
    } else {
        std::string cur;
        for (char c : leaf_text(v)) {
            if (c == ',' || c == ';' || c == '\n') {
                raw.push_back(cur);
                cur.clear();
            } else {
                cur.push_back(c);
            }
        }
        raw.push_back(cur);
    }
    std::vector<std::string> out;
    for (const auto& r : raw) {
        std::string n = grade::evidence::canonical(r);
        for (std::string_view lead : {"and ", "or "})
            if (text::starts_with(n, lead)) n = n.substr(lead.size());
        if (!n.empty() && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(std::move(n));
    }
    return out;
}

bool item_matches(const std::string& answer_item, const std::string& expected_item) {
    return answer_item == expected_item || text::normalized_contains(answer_item, expected_item);
}

FieldGrade grade_list(const data::ProbeField& f, const json& got) {
    const auto expected = list_items(f.expected);
    const auto items = list_items(got);
    std::vector<std::string> missing;
    for (const auto& e : expected)
        if (std::none_of(items.begin(), items.end(), [&](const std::string& a) { return item_matches(a, e); }))
            missing.push_back(e);
    std::vector<std::string> extra;
    for (const auto& a : items)
        if (std::none_of(expected.begin(), expected.end(), [&](const std::string& e) { return item_matches(a, e); }))
            extra.push_back(a);
    if (missing.empty()) {
        if (extra.empty()) return right(f.path, "the answer lists every item and nothing else");
        return decided(f.path, true, 1, "the answer lists every item, and also '" + text::join(extra, "', '") + "'");
    }
    // An item the rules do not recognise may be a rewording of a missing one: only the judge can say.
    if (!extra.empty())
        return undecided(f.path, "the answer does not list '" + text::join(missing, "', '") + "' as written but lists '" +
                                     text::join(extra, "', '") + "'");
    return wrong(f.path, "the answer does not list '" + text::join(missing, "', '") + "'");
}

// ---- free text --------------------------------------------------------------------------------

FieldGrade grade_text(const data::ProbeField& f, const json& got) {
    const std::string expected = grade::evidence::canonical(leaf_text(f.expected));
    const std::string answer = grade::evidence::canonical(leaf_text(got));
    if (!expected.empty() && (answer == expected || text::normalized_contains(answer, expected)))
        return right(f.path, "the answer states " + quoted(f.expected));
    return undecided(f.path, "the answer " + quoted(got) + " does not state " + quoted(f.expected) +
                                 " as written; it may paraphrase it");
}

}  // namespace

const char* decider_name(Decider decider) {
    switch (decider) {
        case Decider::rule: return "rule";
        case Decider::judge: return "judge";
        case Decider::unverified: return "unverified";
    }
    return "unverified";
}

double field_score(bool core_correct, int detail_quality) {
    return 0.8 * (core_correct ? 1.0 : 0.0) + 0.2 * std::clamp(detail_quality, 0, 2) / 2.0;
}

std::optional<json> value_at(const json& root, const std::string& path) {
    const json* at = &root;
    std::size_t i = 0;
    const std::size_t n = path.size();
    if (n == 0) return root;
    while (i < n) {
        if (path[i] == '[') {
            const std::size_t close = path.find(']', i);
            if (close == std::string::npos || close == i + 1) return std::nullopt;
            const std::string_view digits = std::string_view(path).substr(i + 1, close - i - 1);
            if (!all_digits(digits) || !at->is_array()) return std::nullopt;
            const auto index = static_cast<std::size_t>(to_int(digits));
            if (index >= at->size()) return std::nullopt;
            at = &(*at)[index];
            i = close + 1;
            if (i < n && path[i] == '.') ++i;
            continue;
        }
        std::size_t end = i;
        while (end < n && path[end] != '.' && path[end] != '[') ++end;
        const std::string key = path.substr(i, end - i);
        if (!at->is_object()) return std::nullopt;
        const auto it = at->find(key);
        if (it == at->end()) return std::nullopt;
        at = &*it;
        i = end;
        if (i < n && path[i] == '.') ++i;
    }
    return *at;
}

namespace {

std::optional<json> object_in(std::string_view s) {
    json v = json::parse(s, nullptr, false);
    if (!v.is_discarded() && v.is_object()) return v;
    return std::nullopt;
}

// The end (one past) of the balanced object starting at `open`, skipping braces inside strings.
std::optional<std::size_t> object_end(std::string_view s, std::size_t open) {
    int depth = 0;
    bool in_string = false, escaped = false;
    for (std::size_t i = open; i < s.size(); ++i) {
        const char c = s[i];
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '{') ++depth;
        else if (c == '}' && --depth == 0) return i + 1;
    }
    return std::nullopt;
}

}  // namespace

Result<json> parse_answer_json(const std::string& text_in) {
    const std::string_view s = text::trim(text_in);
    if (auto v = object_in(s)) return std::move(*v);
    // Fenced blocks, ```json or plain.
    for (std::size_t open = s.find("```"); open != std::string_view::npos;) {
        const std::size_t body = s.find('\n', open);
        if (body == std::string_view::npos) break;
        const std::size_t close = s.find("```", body);
        if (close == std::string_view::npos) break;
        if (auto v = object_in(s.substr(body + 1, close - body - 1))) return std::move(*v);
        open = s.find("```", close + 3);
    }
    for (std::size_t open = s.find('{'); open != std::string_view::npos; open = s.find('{', open + 1))
        if (auto end = object_end(s, open))
            if (auto v = object_in(s.substr(open, *end - open))) return std::move(*v);
    return make_error(ErrorKind::invalid_output, "the answer holds no JSON object");
}

FieldGrade grade_field(const data::ProbeField& field, const std::optional<json>& answer_leaf) {
    if (!answer_leaf) return wrong(field.path, "the answer has no field '" + field.path + "'");
    const json& got = *answer_leaf;
    // A reference that is itself empty ("none") is matched, not taken for a placeholder.
    if (is_placeholder(got) && got != field.expected)
        return wrong(field.path, got.is_string() && text::trim(got.get<std::string>()) == k_fill
                                     ? "the answer leaves '" + field.path + "' unfilled"
                                     : "the answer gives no value for '" + field.path + "' (" + quoted(got) + ")");
    switch (field.type) {
        case data::FieldType::date: return grade_date(field, got);
        case data::FieldType::weekday: return grade_weekday(field, got);
        case data::FieldType::time: return grade_time(field, got);
        case data::FieldType::duration: return grade_duration(field, got);
        case data::FieldType::number: return grade_number(field, got);
        case data::FieldType::enumeration: return grade_enumeration(field, got);
        case data::FieldType::list: return grade_list(field, got);
        case data::FieldType::text: return grade_text(field, got);
    }
    return undecided(field.path, "the field's type has no rule");
}

std::vector<FieldGrade> grade_fields(const data::Probe& probe, const json& answer) {
    std::vector<FieldGrade> out;
    out.reserve(probe.fields.size());
    for (const auto& f : probe.fields) out.push_back(grade_field(f, value_at(answer, f.path)));
    return out;
}

std::vector<FieldGrade> grade_answer(const data::Probe& probe, const std::string& answer_text) {
    auto parsed = parse_answer_json(answer_text);
    if (parsed) return grade_fields(probe, *parsed);
    std::vector<FieldGrade> out;
    for (const auto& f : probe.fields)
        out.push_back(undecided(f.path, "the answer holds no JSON object; only the judge can read values from its prose"));
    return out;
}

ItemGrade grade_item(const data::Probe& probe, const std::vector<FieldGrade>& fields) {
    ItemGrade item;
    item.fields = fields;
    if (fields.empty()) {
        item.reason = "the probe grades no field";
        return item;
    }
    auto role_of = [&](const std::string& path) {
        for (const auto& f : probe.fields)
            if (f.path == path) return f.role;
        return data::FieldRole::core;
    };
    if (probe.task == "personalized_service") {
        for (const auto& g : fields)
            if (role_of(g.path) == data::FieldRole::identity && g.core_correct && !*g.core_correct) {
                item.identity_gated = true;
                item.score = 0;
                item.reason = "the identity field '" + g.path + "' is wrong, so the service is for the wrong thing: " + g.reason;
                return item;
            }
    }
    double sum = 0;
    std::vector<std::string> open;
    for (const auto& g : fields) {
        if (!g.core_correct) open.push_back(g.path);
        else sum += g.score;
    }
    if (!open.empty()) {
        item.reason = "undecided: " + text::join(open, ", ");
        return item;
    }
    item.score = sum / static_cast<double>(fields.size());
    std::size_t correct = 0;
    for (const auto& g : fields) correct += *g.core_correct ? 1 : 0;
    item.reason = std::to_string(correct) + " of " + std::to_string(fields.size()) + " fields correct";
    return item;
}

}  // namespace memfail::suites::dynamic

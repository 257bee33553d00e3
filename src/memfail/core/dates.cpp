// SPDX-License-Identifier: MIT
#include <memfail/core/dates.hpp>

#include <array>
#include <cctype>
#include <cstdio>

namespace memfail::dates {

// Howard Hinnant's days_from_civil / civil_from_days.
std::int64_t days_from_civil(const Date& date) {
    std::int64_t y = date.year;
    const int m = date.month;
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;
    const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + date.day - 1;
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

Date civil_from_days(std::int64_t z) {
    z += 719468;
    const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const std::int64_t doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t y = yoe + era * 400;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
    const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
    return Date{static_cast<int>(y + (m <= 2)), m, d};
}

int weekday(const Date& date) {
    const std::int64_t z = days_from_civil(date);  // 1970-01-01 was a Thursday (3)
    return static_cast<int>(((z % 7) + 7 + 3) % 7);
}

namespace {
constexpr std::array<const char*, 7> k_names = {"Monday", "Tuesday", "Wednesday", "Thursday",
                                                "Friday", "Saturday", "Sunday"};
constexpr std::array<const char*, 7> k_short = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};

std::string lower_letters(std::string_view text) {
    std::string out;
    for (char c : text)
        if (std::isalpha(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool digits(std::string_view s, std::size_t from, std::size_t n, int& out) {
    if (from + n > s.size()) return false;
    int v = 0;
    for (std::size_t i = from; i < from + n; ++i) {
        if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
        v = v * 10 + (s[i] - '0');
    }
    out = v;
    return true;
}
}  // namespace

const char* weekday_name(int weekday) { return k_names[static_cast<std::size_t>(((weekday % 7) + 7) % 7)]; }
const char* weekday_short_name(int weekday) { return k_short[static_cast<std::size_t>(((weekday % 7) + 7) % 7)]; }

std::optional<int> parse_weekday(std::string_view text) {
    const std::string t = lower_letters(text);
    if (t.size() < 2) return std::nullopt;
    for (int i = 0; i < 7; ++i) {
        const std::string full = lower_letters(k_names[static_cast<std::size_t>(i)]);
        // A prefix of at least three letters ("tue", "tues", "thurs"), or the whole name, or its plural.
        if (t == full || t == full + "s" || (t.size() >= 3 && full.compare(0, t.size(), t) == 0)) return i;
    }
    return std::nullopt;
}

int days_in_month(int year, int month) {
    static constexpr int k_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12) return 0;
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : k_days[month - 1];
}

Date add_days(const Date& date, std::int64_t days) { return civil_from_days(days_from_civil(date) + days); }

Date add_months(const Date& date, int months) {
    int index = date.year * 12 + (date.month - 1) + months;
    return Date{index / 12, index % 12 + 1, 1};
}

std::optional<Date> parse_date(std::string_view s) {
    Date d;
    if (s.size() < 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
    if (!digits(s, 0, 4, d.year) || !digits(s, 5, 2, d.month) || !digits(s, 8, 2, d.day)) return std::nullopt;
    if (d.month < 1 || d.month > 12 || d.day < 1 || d.day > days_in_month(d.year, d.month)) return std::nullopt;
    if (s.size() > 10) return std::nullopt;
    return d;
}

std::optional<DateTime> parse_date_time(std::string_view s) {
    DateTime t;
    auto date = parse_date(s.substr(0, std::min<std::size_t>(10, s.size())));
    if (!date) return std::nullopt;
    t.date = *date;
    if (s.size() == 10) return t;
    if (s[10] != ' ' && s[10] != 'T') return std::nullopt;
    if (!digits(s, 11, 2, t.hour) || s.size() < 16 || s[13] != ':' || !digits(s, 14, 2, t.minute)) return std::nullopt;
    std::size_t at = 16;
    if (s.size() >= 19 && s[16] == ':') {
        if (!digits(s, 17, 2, t.second)) return std::nullopt;
        at = 19;
    }
    if (at < s.size() && s.substr(at) != "Z") return std::nullopt;
    if (t.hour > 23 || t.minute > 59 || t.second > 59) return std::nullopt;
    return t;
}

std::int64_t to_seconds(const DateTime& t) {
    return days_from_civil(t.date) * 86400 + t.hour * 3600 + t.minute * 60 + t.second;
}

DateTime from_seconds(std::int64_t seconds) {
    std::int64_t days = seconds >= 0 ? seconds / 86400 : -((-seconds + 86399) / 86400);
    std::int64_t rest = seconds - days * 86400;
    DateTime t;
    t.date = civil_from_days(days);
    t.hour = static_cast<int>(rest / 3600);
    t.minute = static_cast<int>(rest % 3600 / 60);
    t.second = static_cast<int>(rest % 60);
    return t;
}

std::string format_date(const Date& d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", d.year, d.month, d.day);
    return buf;
}

std::string format_iso(const DateTime& t) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", t.date.year, t.date.month, t.date.day, t.hour,
                  t.minute, t.second);
    return buf;
}

std::string format_log(const DateTime& t) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d", t.date.year, t.date.month, t.date.day, t.hour,
                  t.minute, t.second);
    return buf;
}

std::string format_shown(const DateTime& t) {
    char buf[64];
    const int w = weekday(t.date);
    if (t.hour == 0 && t.minute == 0 && t.second == 0)
        std::snprintf(buf, sizeof buf, "%04d-%02d-%02d (%s)", t.date.year, t.date.month, t.date.day, weekday_short_name(w));
    else
        std::snprintf(buf, sizeof buf, "%04d-%02d-%02d (%s) %02d:%02d", t.date.year, t.date.month, t.date.day,
                      weekday_short_name(w), t.hour, t.minute);
    return buf;
}

std::optional<int> parse_clock(std::string_view text) {
    std::string t;
    for (char c : text)
        if (!std::isspace(static_cast<unsigned char>(c))) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t == "noon" || t == "midday") return 12 * 60;
    if (t == "midnight") return 0;
    int suffix = 0;  // 1 am, 2 pm
    auto ends = [&](const char* s) {
        const std::string e = s;
        if (t.size() > e.size() && t.compare(t.size() - e.size(), e.size(), e) == 0) {
            t.resize(t.size() - e.size());
            return true;
        }
        return false;
    };
    if (ends("a.m.") || ends("am")) suffix = 1;
    else if (ends("p.m.") || ends("pm")) suffix = 2;
    int hour = 0, minute = 0;
    std::size_t i = 0;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) hour = hour * 10 + (t[i++] - '0');
    if (i == 0 || i > 2) return std::nullopt;
    if (i < t.size()) {
        if (t[i] != ':' && t[i] != '.' && t[i] != 'h') return std::nullopt;
        ++i;
        if (i < t.size()) {
            if (!digits(t, i, 2, minute) || i + 2 != t.size()) {
                // "18:30:00": seconds are allowed and ignored when zero
                if (!(t.size() == i + 5 && t[i + 2] == ':' && digits(t, i, 2, minute) && t.compare(i + 3, 2, "00") == 0))
                    return std::nullopt;
            }
        }
    }
    if (minute > 59) return std::nullopt;
    if (suffix) {
        if (hour < 1 || hour > 12) return std::nullopt;
        hour = hour % 12 + (suffix == 2 ? 12 : 0);
    }
    if (hour > 23) return std::nullopt;
    return hour * 60 + minute;
}

std::string format_clock(int minutes) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%02d:%02d", minutes / 60 % 24, minutes % 60);
    return buf;
}

}  // namespace memfail::dates

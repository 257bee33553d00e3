// SPDX-License-Identifier: MIT
// Calendar arithmetic on the proleptic Gregorian calendar, without time zones: what the dynamic
// suite needs to lay months of logs on days, name weekdays and compare dates and times exactly.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memfail::dates {

struct Date {
    int year = 1970;
    int month = 1;  // 1..12
    int day = 1;    // 1..31
    friend bool operator==(const Date&, const Date&) = default;
};

// Days since 1970-01-01 (negative before), and back.
std::int64_t days_from_civil(const Date& date);
Date civil_from_days(std::int64_t days);
// 0 = Monday .. 6 = Sunday (ISO order, as DynamicMem's days_of_week).
int weekday(const Date& date);
const char* weekday_name(int weekday);        // "Monday"
const char* weekday_short_name(int weekday);  // "Mon"
// "monday", "Mon", "mon.", "tues", "thurs" ... -> 0..6
std::optional<int> parse_weekday(std::string_view text);
int days_in_month(int year, int month);
Date add_days(const Date& date, std::int64_t days);
// The first day of the month `months` after `date`'s month.
Date add_months(const Date& date, int months);

// A timestamp to the second. Parses "YYYY-MM-DD", "YYYY-MM-DD HH:MM[:SS]" and
// "YYYY-MM-DDTHH:MM[:SS][Z]"; refuses anything else (month 13, day 31 of April, hour 24).
struct DateTime {
    Date date;
    int hour = 0, minute = 0, second = 0;
    friend bool operator==(const DateTime&, const DateTime&) = default;
};
std::optional<Date> parse_date(std::string_view text);
std::optional<DateTime> parse_date_time(std::string_view text);
// Seconds since the epoch, for ordering.
std::int64_t to_seconds(const DateTime& t);
DateTime from_seconds(std::int64_t seconds);
std::string format_date(const Date& date);            // "2024-03-05"
std::string format_iso(const DateTime& t);            // "2024-03-05T06:31:00Z"
std::string format_log(const DateTime& t);            // "2024-03-05 06:31:00" (DynamicMem's form)
// For people and answer models: "2024-03-05 (Tue) 06:31", or "2024-03-05 (Tue)" at midnight.
std::string format_shown(const DateTime& t);
// "06:30", "6:30", "6:30 am", "6.30pm", "18h30", "noon" -> minutes after midnight.
std::optional<int> parse_clock(std::string_view text);
std::string format_clock(int minutes);  // "06:30"

}  // namespace memfail::dates

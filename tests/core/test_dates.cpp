// SPDX-License-Identifier: MIT
#include <memfail/core/dates.hpp>

#include <gtest/gtest.h>

namespace memfail::dates {
namespace {

TEST(Dates, CivilDaysRoundTripAcrossCenturiesAndLeapDays) {
    for (std::int64_t d = -800000; d <= 800000; d += 37) EXPECT_EQ(days_from_civil(civil_from_days(d)), d);
    EXPECT_EQ(days_from_civil({1970, 1, 1}), 0);
    EXPECT_EQ(days_from_civil({2000, 3, 1}) - days_from_civil({2000, 2, 28}), 2);  // 2000 is a leap year
    EXPECT_EQ(days_from_civil({1900, 3, 1}) - days_from_civil({1900, 2, 28}), 1);  // 1900 is not
}

TEST(Dates, WeekdaysAreIsoOrdered) {
    EXPECT_EQ(weekday({2024, 3, 4}), 0);  // a Monday
    EXPECT_EQ(weekday({2024, 3, 10}), 6);
    EXPECT_STREQ(weekday_name(weekday({2026, 11, 26})), "Thursday");
    EXPECT_EQ(parse_weekday("tues"), 1);
    EXPECT_EQ(parse_weekday("Thurs."), 3);
    EXPECT_EQ(parse_weekday("Sundays"), 6);
    EXPECT_FALSE(parse_weekday("tu"));
    EXPECT_FALSE(parse_weekday("mondayish"));
}

TEST(Dates, ParsingRefusesImpossibleDatesAndTimes) {
    EXPECT_TRUE(parse_date("2024-02-29"));
    EXPECT_FALSE(parse_date("2023-02-29"));
    EXPECT_FALSE(parse_date("2024-04-31"));
    EXPECT_FALSE(parse_date("2024-13-01"));
    auto t = parse_date_time("2024-03-05 06:31:07");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->hour, 6);
    EXPECT_EQ(t->second, 7);
    EXPECT_TRUE(parse_date_time("2024-03-05T06:31:07Z"));
    EXPECT_TRUE(parse_date_time("2024-03-05T06:31"));
    EXPECT_FALSE(parse_date_time("2024-03-05 24:00:00"));
    EXPECT_FALSE(parse_date_time("2024-03-05 06:31:07+02:00"));
    EXPECT_EQ(format_log(from_seconds(to_seconds(*t))), "2024-03-05 06:31:07");
    EXPECT_EQ(format_iso(*t), "2024-03-05T06:31:07Z");
}

TEST(Dates, ClockTimesInTheirUsualSpellings) {
    EXPECT_EQ(parse_clock("06:30"), 390);
    EXPECT_EQ(parse_clock("6:30 am"), 390);
    EXPECT_EQ(parse_clock("6.30pm"), 18 * 60 + 30);
    EXPECT_EQ(parse_clock("18h30"), 18 * 60 + 30);
    EXPECT_EQ(parse_clock("12 am"), 0);
    EXPECT_EQ(parse_clock("12pm"), 720);
    EXPECT_EQ(parse_clock("noon"), 720);
    EXPECT_EQ(parse_clock("18:30:00"), 18 * 60 + 30);
    EXPECT_FALSE(parse_clock("25:00"));
    EXPECT_FALSE(parse_clock("13 pm"));
    EXPECT_FALSE(parse_clock("6:7"));
    EXPECT_FALSE(parse_clock("soon"));
    EXPECT_EQ(format_clock(390), "06:30");
}

TEST(Dates, MonthArithmetic) {
    EXPECT_EQ(add_months({2024, 11, 15}, 3), (Date{2025, 2, 1}));
    EXPECT_EQ(days_in_month(2024, 2), 29);
    EXPECT_EQ(add_days({2024, 12, 31}, 1), (Date{2025, 1, 1}));
}

}  // namespace
}  // namespace memfail::dates

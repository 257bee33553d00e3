// SPDX-License-Identifier: MIT
// Wilson intervals and table printers.
#include <memfail/figures/stats.hpp>
#include <memfail/figures/table.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace memfail::report {
namespace {

TEST(Wilson, MatchesKnownValues) {
    // 8 of 10: the textbook Wilson 95% interval is about [0.490, 0.943].
    const auto ci = wilson_interval(8, 10);
    EXPECT_NEAR(ci.low, 0.4902, 1e-3);
    EXPECT_NEAR(ci.high, 0.9433, 1e-3);
    const auto zero = wilson_interval(0, 50);
    EXPECT_NEAR(zero.low, 0.0, 1e-12);
    EXPECT_NEAR(zero.high, 0.0713, 1e-3);
    const auto none = wilson_interval(0, 0);
    EXPECT_EQ(none.low, 0.0);
    EXPECT_EQ(none.high, 1.0);
}

TEST(Wilson, AllSuccessesStaysBelowOne) {
    const auto ci = wilson_interval(100, 100);
    EXPECT_NEAR(ci.high, 1.0, 1e-12);
    EXPECT_LT(ci.low, 1.0);
    EXPECT_GT(ci.low, 0.95);
}

Table sample() {
    Table t;
    t.columns = {{"name", Align::left}, {"value", Align::right}};
    t.rows = {{"a,b", "1"}, {"quote\"d", "22"}};
    return t;
}

TEST(Table, TextAlignsColumns) {
    const std::string out = render_text(sample());
    EXPECT_NE(out.find("name     value"), std::string::npos) << out;
    EXPECT_NE(out.find("a,b          1"), std::string::npos) << out;
}

TEST(Table, CsvQuotesSpecialCells) {
    const std::string out = render_csv(sample());
    EXPECT_NE(out.find("\"a,b\",1"), std::string::npos) << out;
    EXPECT_NE(out.find("\"quote\"\"d\",22"), std::string::npos) << out;
}

TEST(Table, JsonRoundTrips) {
    const auto j = nlohmann::json::parse(render_json(sample()));
    ASSERT_EQ(j.size(), 2u);
    EXPECT_EQ(j[1]["name"], "quote\"d");
    EXPECT_EQ(j[1]["value"], "22");
}

TEST(Table, MarkdownEscapesPipes) {
    Table t = sample();
    t.rows.push_back({"x|y", "3"});
    EXPECT_NE(render_markdown(t).find("x\\|y"), std::string::npos);
}

TEST(Table, UnknownFormatIsAnError) {
    EXPECT_FALSE(parse_format("yaml").has_value());
    EXPECT_TRUE(parse_format("md").has_value());
}

}  // namespace
}  // namespace memfail::report

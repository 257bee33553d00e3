// SPDX-License-Identifier: MIT
// LLM cost from --price: parsing, what a run paid against what the same calls cost uncached.
#include <memfail/report/run_report.hpp>
#include <memfail/store/results_db.hpp>

#include <gtest/gtest.h>

namespace memfail::report {
namespace {

store::LlmCallRow call(const std::string& role, const std::string& model, bool cache_hit, std::int64_t prompt,
                       std::int64_t completion) {
    store::LlmCallRow c;
    c.role = role;
    c.stage = role;
    c.model = model;
    c.cache_hit = cache_hit;
    c.prompt_tokens = prompt;
    c.completion_tokens = completion;
    c.attempts = 1;
    return c;
}

TEST(Prices, ParseAndRefuseWithTheBadSpecNamed) {
    const auto prices = parse_prices({"gpt-4o-mini=0.15/0.60", "org/model:tag=3/15"}).value();
    ASSERT_EQ(prices.size(), 2u);
    EXPECT_DOUBLE_EQ(prices.at("gpt-4o-mini").input_per_million, 0.15);
    EXPECT_DOUBLE_EQ(prices.at("gpt-4o-mini").output_per_million, 0.60);
    // A model name may hold '/' and ':'; the price is after the last '='.
    EXPECT_DOUBLE_EQ(prices.at("org/model:tag").output_per_million, 15);
    for (const char* bad : {"gpt", "=1/2", "m=1", "m=a/2", "m=1/-2", "m=1/2x"}) {
        const auto r = parse_prices({bad});
        ASSERT_FALSE(r.has_value()) << bad;
        EXPECT_NE(r.error().message.find(bad), std::string::npos) << r.error().message;
    }
}

TEST(Prices, CostCountsPaidCallsAndWhatTheCacheSaved) {
    auto db = store::ResultsDb::open(":memory:").value();
    store::RunRecord run;
    run.system_spec = "verbatim";
    run.config_json = "{}";
    run.config_hash = "h";
    run.code_version = "test";
    const auto id = db.create_run(run).value();
    ASSERT_TRUE(db.record_llm_calls(id, {call("answer", "small", false, 1'000'000, 100'000),
                                         call("answer", "small", true, 2'000'000, 0),
                                         call("judge", "big", false, 10'000, 2'000),
                                         call("system", "unknown", false, 5, 5)})
                    .has_value());
    const auto table = llm_cost_table(db, {id}, parse_prices({"small=1/10", "big=3/15"}).value()).value();
    ASSERT_EQ(table.rows.size(), 3u);
    // answer/small: paid 1M prompt + 0.1M completion = $1 + $1; uncached adds 2M prompt = $2.
    EXPECT_EQ(table.rows[0][1], "answer");
    EXPECT_EQ(table.rows[0][3], "1");  // paid calls: the cache hit is free
    EXPECT_EQ(table.rows[0][6], "2.00");
    EXPECT_EQ(table.rows[0][7], "4.00");
    // judge/big: 0.01M * 3 + 0.002M * 15 = 0.06.
    EXPECT_EQ(table.rows[1][6], "0.0600");
    EXPECT_EQ(table.rows[2][6], "-");
    ASSERT_EQ(table.notes.size(), 2u);
    EXPECT_NE(table.notes[0].find("$2.06 paid"), std::string::npos) << table.notes[0];
    EXPECT_NE(table.notes[1].find("unknown"), std::string::npos);
}

}  // namespace
}  // namespace memfail::report

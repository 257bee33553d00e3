// SPDX-License-Identifier: MIT
// Accounting per role through the full stack Metered(Cached(OpenAi)), percentiles, and no key in
// the ledger's JSON.
#include <memfail/llm/cached_client.hpp>
#include <memfail/llm/usage_ledger.hpp>

#include "llm_test_support.hpp"

namespace memfail::llm {
namespace {

using nlohmann::json;
using testing::fast_options;
using testing::make_client;
using testing::plain_request;
using testing::schema_request;
using testing::start_fake;
using testing::TempDir;

const RoleUsage* row_for(const std::vector<RoleUsage>& rows, std::string_view role) {
    for (const auto& row : rows)
        if (row.role == role) return &row;
    return nullptr;
}

TEST(UsageLedger, CountsCallsHitsTokensErrorsAndRetriesPerRole) {
    TempDir dir;
    const std::string api_key = "sk-test-LEDGER-qrstuvwxyz98765432";
    auto server = start_fake({{"rules",
                               {{{"name", "flaky"}, {"match", {{"contains", "flaky"}}}, {"fault", "http_500"}, {"times", 1}},
                                {{"match", {{"contains", "broken"}}}, {"fault", "schema_violation"}},
                                {{"match", {{"contains", "local"}}}, {"usage", false}, {"reply", "abcd"}}}}},
                             api_key);
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.api_key = api_key;
    options.max_schema_retries = 0;
    auto cache = LlmCache::open((dir.path() / "c.sqlite").string()).value();
    auto ledger = std::make_shared<UsageLedger>();
    MeteredClient client(std::make_shared<CachedClient>(make_client(options), cache, CacheMode::on), ledger);

    ChatRequest answer = plain_request("a flaky question");  // 500 once, then answered: one retry
    ASSERT_TRUE(client.chat(answer));
    ASSERT_TRUE(client.chat(answer));  // cache hit
    ChatRequest local = plain_request("count me local");
    ASSERT_TRUE(client.chat(local));
    ChatRequest judge = schema_request("is it there?");
    ASSERT_TRUE(client.chat(judge));
    ChatRequest bad = schema_request("broken judge call");
    EXPECT_FALSE(client.chat(bad));
    EmbeddingRequest embed;
    embed.model = "e";
    embed.inputs = {"x", "y"};
    ASSERT_TRUE(client.embed(embed));

    const auto rows = ledger->summary();
    const RoleUsage* a = row_for(rows, "answer");
    const RoleUsage* j = row_for(rows, "judge");
    const RoleUsage* e = row_for(rows, "embed");
    const RoleUsage* all = row_for(rows, "all");
    ASSERT_TRUE(a && j && e && all);
    EXPECT_EQ(row_for(rows, "system"), nullptr);  // no calls, no row
    EXPECT_EQ(a->calls, 3);
    EXPECT_EQ(a->cache_hits, 1);
    EXPECT_EQ(a->cache_misses, 2);
    EXPECT_EQ(a->retries, 1);
    EXPECT_EQ(a->counted_locally, 1);
    EXPECT_GT(a->prompt_tokens, 0);
    EXPECT_EQ(a->calls_by_stage.at("test"), 3);
    EXPECT_GT(a->latency_p50_ms, 0);
    EXPECT_GE(a->latency_p95_ms, a->latency_p50_ms);
    EXPECT_EQ(j->calls, 2);
    EXPECT_EQ(j->errors, 1);
    EXPECT_EQ(j->errors_by_kind.at("invalid_output"), 1);
    EXPECT_EQ(j->cache_misses, 1);
    EXPECT_EQ(e->calls, 1);
    EXPECT_EQ(e->prompt_tokens, 2);  // "x" and "y": one token each
    EXPECT_EQ(all->calls, 6);
    EXPECT_EQ(all->errors, 1);
    EXPECT_EQ(all->prompt_tokens, a->prompt_tokens + j->prompt_tokens + e->prompt_tokens);

    const std::string dumped = ledger->to_json().dump();
    EXPECT_EQ(dumped.find(api_key), std::string::npos);
    EXPECT_EQ(dumped.find("qrstuvwxyz"), std::string::npos);
    const json parsed = json::parse(dumped);
    EXPECT_EQ(parsed["total"]["calls"], 6);
    EXPECT_EQ(parsed["roles"].size(), 3u);
    EXPECT_EQ(parsed["models"]["embed"], json::array({"e"}));
}

TEST(UsageLedger, AuthErrorsAreCountedWithoutTheKey) {
    const std::string key = "sk-test-AUTH-ledger-0011223344556677";
    auto server = start_fake(json::object(), "the-real-key-is-different");
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.api_key = key;
    auto ledger = std::make_shared<UsageLedger>();
    MeteredClient client(make_client(options), ledger);
    auto reply = client.chat(plain_request("x"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(ledger->summary().back().errors_by_kind.at("auth"), 1);
    EXPECT_EQ(ledger->to_json().dump().find("0011223344"), std::string::npos);
}

TEST(UsageLedger, LatencyPercentilesAreNearestRank) {
    UsageLedger ledger;
    for (int ms = 100; ms >= 1; --ms) ledger.record(Role::answer, "s", "m", Usage{}, false, 1, ms * 1000);
    ledger.record(Role::answer, "s", "m", Usage{}, true, 0, 999'000);  // hits have no network latency
    const auto rows = ledger.summary();
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_DOUBLE_EQ(rows[0].latency_p50_ms, 50);
    EXPECT_DOUBLE_EQ(rows[0].latency_p95_ms, 95);
    EXPECT_EQ(rows[0].calls, 101);
    EXPECT_EQ(rows[0].cache_hits, 1);
    EXPECT_EQ(rows[0].retries, 0);
}

}  // namespace
}  // namespace memfail::llm

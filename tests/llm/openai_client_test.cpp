// SPDX-License-Identifier: MIT
// The OpenAI-compatible client against the real fake-llm server: retries, timeouts, structured
// output and its fallback, re-asks, the concurrency bound, rate limits, usage and key redaction.
#include <atomic>
#include <thread>
#include <vector>

#include "llm_test_support.hpp"

namespace memfail::llm {
namespace {

using nlohmann::json;
using testing::fast_options;
using testing::make_client;
using testing::plain_request;
using testing::schema_request;
using testing::seconds_since;
using testing::start_fake;
using Clock = std::chrono::steady_clock;

TEST(OpenAiClient, PlainChatReturnsContentUsageAndOneAttempt) {
    auto server = start_fake({{"rules", {{{"match", {{"last_user_contains", "capital"}}}, {"reply", "Paris is."}}}}});
    ASSERT_TRUE(server);
    auto client = make_client(fast_options(*server));
    auto reply = client->chat(plain_request("What is the capital of France?"));
    ASSERT_TRUE(reply) << reply.error().describe();
    EXPECT_EQ(reply->content, "Paris is.");
    EXPECT_EQ(reply->attempts, 1);
    EXPECT_FALSE(reply->cache_hit);
    EXPECT_FALSE(reply->usage.counted_locally);
    EXPECT_GT(reply->usage.prompt_tokens, 0);
    EXPECT_EQ(reply->usage.completion_tokens, 3);  // the server counts tokens: "Paris", " is", "."
    EXPECT_FALSE(reply->json.has_value());
    EXPECT_EQ(server->stats()["chat"], 1);
}

TEST(OpenAiClient, RetriesA429AfterTheRetryAfterDelay) {
    auto server = start_fake({{"rules", {{{"name", "limited"}, {"fault", "http_429"}, {"retry_after", 1}, {"times", 1}}}}});
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.backoff_max_seconds = 5;  // Retry-After is capped by this, so leave room for 1 s
    auto client = make_client(options);
    const auto start = Clock::now();
    auto reply = client->chat(plain_request("hello"));
    const double waited = seconds_since(start);
    ASSERT_TRUE(reply) << reply.error().describe();
    EXPECT_EQ(reply->content, "OK");
    EXPECT_EQ(reply->attempts, 2);
    EXPECT_GE(waited, 0.95);  // the header said one second; jitter alone would be ~0.01 s
    EXPECT_LT(waited, 2.5);
    EXPECT_EQ(server->stats()["by_rule"]["limited"], 1);
}

TEST(OpenAiClient, RetryAfterIsCappedByTheBackoffMaximum) {
    auto server = start_fake({{"rules", {{{"fault", "http_429"}, {"retry_after", 30}, {"times", 1}}}}});
    ASSERT_TRUE(server);
    auto client = make_client(fast_options(*server));  // backoff_max_seconds 0.05
    const auto start = Clock::now();
    auto reply = client->chat(plain_request("hello"));
    ASSERT_TRUE(reply) << reply.error().describe();
    EXPECT_LT(seconds_since(start), 2.0);
    EXPECT_EQ(reply->attempts, 2);
}

TEST(OpenAiClient, RetriesServerErrors) {
    auto server = start_fake({{"rules", {{{"fault", "http_500"}, {"times", 2}}}}});
    ASSERT_TRUE(server);
    auto client = make_client(fast_options(*server));
    auto reply = client->chat(plain_request("hello"));
    ASSERT_TRUE(reply) << reply.error().describe();
    EXPECT_EQ(reply->attempts, 3);
    EXPECT_EQ(server->stats()["requests"], 3);
}

TEST(OpenAiClient, GivesUpAfterMaxRetriesWithAHelpfulMessage) {
    auto server = start_fake({{"rules", {{{"fault", "http_503"}}}}});
    ASSERT_TRUE(server);
    auto client = make_client(fast_options(*server));  // max_retries 3
    auto reply = client->chat(plain_request("hello"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().kind, ErrorKind::network);
    const std::string message = reply.error().describe();
    EXPECT_NE(message.find("POST " + server->base_url() + "/chat/completions: HTTP 503 after 4 attempts: "),
              std::string::npos)
        << message;
    EXPECT_EQ(server->stats()["requests"], 4);
}

TEST(OpenAiClient, RateLimitedErrorKindWhen429Persists) {
    auto server = start_fake({{"rules", {{{"fault", "http_429"}, {"retry_after", 0}}}}});
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.max_retries = 1;
    auto reply = make_client(options)->chat(plain_request("hello"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().kind, ErrorKind::rate_limited);
    EXPECT_NE(reply.error().message.find("HTTP 429 after 2 attempts"), std::string::npos) << reply.error().message;
}

TEST(OpenAiClient, ClientErrorsAreNotRetried) {
    auto server = start_fake({{"rules", {{{"fault", "http_400"}}}}});
    ASSERT_TRUE(server);
    auto reply = make_client(fast_options(*server))->chat(plain_request("hello"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().kind, ErrorKind::protocol);
    EXPECT_EQ(server->stats()["requests"], 1);
}

TEST(OpenAiClient, TimesOutAStalledRequestAndRetries) {
    auto server = start_fake({{"rules", {{{"name", "stall"}, {"fault", "stall"}, {"delay_ms", 3000}, {"times", 1}}}}});
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.timeout_seconds = 0.5;
    auto client = make_client(options);
    const auto start = Clock::now();
    auto reply = client->chat(plain_request("hello"));
    const double waited = seconds_since(start);
    ASSERT_TRUE(reply) << reply.error().describe();
    EXPECT_EQ(reply->content, "OK");
    EXPECT_EQ(reply->attempts, 2);
    EXPECT_GE(waited, 0.45);
    EXPECT_LT(waited, 2.5);  // did not wait for the stalled answer
}

TEST(OpenAiClient, TimeoutErrorKindWhenEveryAttemptStalls) {
    auto server = start_fake({{"rules", {{{"fault", "stall"}, {"delay_ms", 2000}}}}});
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.timeout_seconds = 0.2;
    options.max_retries = 1;
    auto reply = make_client(options)->chat(plain_request("hello"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().kind, ErrorKind::timeout);
    EXPECT_NE(reply.error().message.find("after 2 attempts"), std::string::npos) << reply.error().message;
}

TEST(OpenAiClient, ConnectionRefusedIsANetworkErrorAfterRetries) {
    std::string base_url;
    {
        auto server = start_fake();
        ASSERT_TRUE(server);
        base_url = server->base_url();
    }  // stopped: the port now refuses connections
    ClientOptions options;
    options.base_url = base_url;
    options.max_retries = 2;
    options.backoff_base_seconds = 0.01;
    options.backoff_max_seconds = 0.02;
    auto reply = make_client(options)->chat(plain_request("hello"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().kind, ErrorKind::network);
    EXPECT_NE(reply.error().message.find("after 3 attempts"), std::string::npos) << reply.error().message;
}

TEST(OpenAiClient, SchemaReplyIsParsedAndValidated) {
    auto server = start_fake({{"rules", {{{"match", {{"schema", "memfail_test_verdict"}}},
                                          {"json", {{"verdict", "no"}, {"reason", "not stated"}}}}}}});
    ASSERT_TRUE(server);
    auto reply = make_client(fast_options(*server))->chat(schema_request("Is it stated?"));
    ASSERT_TRUE(reply) << reply.error().describe();
    ASSERT_TRUE(reply->json.has_value());
    EXPECT_EQ((*reply->json)["verdict"], "no");
    EXPECT_EQ(json::parse(reply->content), *reply->json);
    EXPECT_EQ(server->stats()["by_schema"]["memfail_test_verdict"], 1);
}

TEST(OpenAiClient, AsksAgainAfterMalformedJson) {
    auto server = start_fake({{"rules", {{{"name", "broken"}, {"fault", "malformed_json"}, {"times", 1}}}}});
    ASSERT_TRUE(server);
    auto reply = make_client(fast_options(*server))->chat(schema_request("Is it stated?"));
    ASSERT_TRUE(reply) << reply.error().describe();
    EXPECT_EQ(reply->attempts, 2);
    ASSERT_TRUE(reply->json.has_value());
    EXPECT_EQ((*reply->json)["verdict"], "yes");  // the server's auto reply: the enum's first value
    EXPECT_EQ(server->stats()["by_rule"]["broken"], 1);
}

TEST(OpenAiClient, SchemaViolationForeverIsAnInvalidOutputError) {
    auto server = start_fake({{"rules", {{{"fault", "schema_violation"}}}}});
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.max_schema_retries = 2;
    auto reply = make_client(options)->chat(schema_request("Is it stated?"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().kind, ErrorKind::invalid_output);
    EXPECT_NE(reply.error().message.find("reply.verdict: missing required property"), std::string::npos)
        << reply.error().message;
    EXPECT_NE(reply.error().message.find("memfail_test_verdict"), std::string::npos);
    EXPECT_EQ(server->stats()["requests"], 3);  // the first ask and two re-asks
}

TEST(OpenAiClient, MalformedJsonForeverSaysTheReplyIsNotJson) {
    auto server = start_fake({{"rules", {{{"fault", "malformed_json"}}}}});
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.max_schema_retries = 1;
    auto reply = make_client(options)->chat(schema_request("Is it stated?"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().kind, ErrorKind::invalid_output);
    EXPECT_NE(reply.error().message.find("reply is not JSON"), std::string::npos) << reply.error().message;
    EXPECT_EQ(server->stats()["requests"], 2);
}

TEST(OpenAiClient, FallsBackToJsonObjectAndRemembersIt) {
    auto server = start_fake({{"rules", {{{"match", {{"schema", "memfail_test_verdict"}}},
                                          {"json", {{"verdict", "yes"}, {"reason", "found"}}}}}}},
                             "", /*json_schema_supported=*/false);
    ASSERT_TRUE(server);
    auto client = make_client(fast_options(*server));
    auto first = client->chat(schema_request("first"));
    ASSERT_TRUE(first) << first.error().describe();
    EXPECT_EQ(first->attempts, 2);  // rejected json_schema, then json_object
    EXPECT_EQ((*first->json)["reason"], "found");
    const auto after_first = server->stats()["requests"].get<int>();
    EXPECT_EQ(after_first, 2);

    // A request without a system message gets one carrying the schema.
    ChatRequest second_request = schema_request("second");
    second_request.messages = {{"user", "second"}};
    auto second = client->chat(second_request);
    ASSERT_TRUE(second) << second.error().describe();
    EXPECT_EQ(second->attempts, 1);  // straight to json_object
    EXPECT_EQ((*second->json)["verdict"], "yes");
    EXPECT_EQ(server->stats()["requests"], after_first + 1);
}

TEST(OpenAiClient, StrictJsonSchemaModeDoesNotFallBack) {
    auto server = start_fake(json::object(), "", /*json_schema_supported=*/false);
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.structured_output = "json_schema";
    auto reply = make_client(options)->chat(testing::schema_request("x"));
    ASSERT_FALSE(reply);
    EXPECT_NE(reply.error().message.find("HTTP 400"), std::string::npos) << reply.error().message;
}

TEST(OpenAiClient, JsonObjectModeFromTheStart) {
    auto server = start_fake({{"rules", {{{"match", {{"schema", "memfail_test_verdict"}}},
                                          {"json", {{"verdict", "no"}, {"reason", "r"}}}}}}});
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.structured_output = "json_object";
    auto reply = make_client(options)->chat(testing::schema_request("x"));
    ASSERT_TRUE(reply) << reply.error().describe();
    EXPECT_EQ(reply->attempts, 1);
    EXPECT_EQ((*reply->json)["verdict"], "no");
}

TEST(OpenAiClient, ConcurrencyIsBoundedAcrossThreads) {
    auto server = start_fake({{"default", {{"delay_ms", 100}}}});
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.concurrency = 4;
    auto client = make_client(options);
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 16; ++i) {
        threads.emplace_back([&, i] {
            if (client->chat(plain_request("question " + std::to_string(i)))) ++ok;
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(ok.load(), 16);
    const json stats = server->stats();
    EXPECT_EQ(stats["requests"], 16);
    EXPECT_EQ(stats["peak_in_flight"], 4);
}

TEST(OpenAiClient, RequestsPerMinuteSpacesCalls) {
    auto server = start_fake();
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.requests_per_minute = 300;  // 5 a second, at most a second's worth at once
    auto client = make_client(options);
    const auto start = Clock::now();
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(client->chat(plain_request("q" + std::to_string(i))));
    EXPECT_GE(seconds_since(start), 0.38);  // five at once, then two gaps of 200 ms
}

TEST(OpenAiClient, TokensPerMinuteSpacesCalls) {
    auto server = start_fake();
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.count_tokens = [](std::string_view, std::string_view text) {
        return static_cast<std::int64_t>(text.size());
    };
    options.tokens_per_minute = 60 * 100;  // 100 "tokens" (characters here) a second
    auto client = make_client(options);
    ChatRequest request;
    request.model = "m";
    request.messages = {{"user", std::string(50, 'a')}};
    const auto start = Clock::now();
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(client->chat(request));
    // 250 characters against a bucket of 100 refilled at 100/s: at least 1.5 s.
    EXPECT_GE(seconds_since(start), 1.4);
}

TEST(OpenAiClient, UsageCountedLocallyWhenTheServerOmitsIt) {
    auto server = start_fake({{"default", {{"usage", false}, {"reply", "four words in reply"}}}});
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.count_tokens = [](std::string_view model, std::string_view text) {
        EXPECT_EQ(model, "m");
        return static_cast<std::int64_t>(text.size());
    };
    ChatRequest request = plain_request("abcdefghij");  // system "You are terse." (14) + 10
    auto reply = make_client(options)->chat(request);
    ASSERT_TRUE(reply) << reply.error().describe();
    EXPECT_TRUE(reply->usage.counted_locally);
    EXPECT_EQ(reply->usage.prompt_tokens, 24);
    EXPECT_EQ(reply->usage.completion_tokens, 19);

    // Without a counter: bytes / 4, rounded up.
    auto estimated = make_client(fast_options(*server))->chat(request);
    ASSERT_TRUE(estimated);
    EXPECT_TRUE(estimated->usage.counted_locally);
    EXPECT_EQ(estimated->usage.prompt_tokens, 4 + 3);
    EXPECT_EQ(estimated->usage.completion_tokens, 5);
}

TEST(OpenAiClient, TheApiKeyNeverAppearsInErrors) {
    const std::string right_key = "sk-test-RIGHT-0123456789abcdefghij";
    const std::string wrong_key = "sk-test-WRONG-9876543210zyxwvutsrq";
    auto server = start_fake(json::object(), right_key);
    ASSERT_TRUE(server);
    ClientOptions options = fast_options(*server);
    options.api_key = wrong_key;
    auto reply = make_client(options)->chat(plain_request("hello"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().kind, ErrorKind::auth);
    const std::string message = reply.error().describe();
    EXPECT_NE(message.find("HTTP 401"), std::string::npos) << message;
    EXPECT_NE(message.find("[redacted]"), std::string::npos) << message;  // the server did echo it
    EXPECT_EQ(message.find(wrong_key), std::string::npos) << message;
    EXPECT_EQ(message.find("9876543210zyx"), std::string::npos) << message;
    EXPECT_EQ(server->stats()["requests"], 1);  // 401 is not retried

    options.api_key = right_key;
    auto ok = make_client(options)->chat(plain_request("hello"));
    ASSERT_TRUE(ok) << ok.error().describe();
}

TEST(OpenAiClient, EmbeddingsComeBackInInputOrder) {
    auto server = start_fake();
    ASSERT_TRUE(server);
    EmbeddingRequest request;
    request.model = "e";
    request.inputs = {"alpha", "beta", "gamma"};
    auto reply = make_client(fast_options(*server))->embed(request);
    ASSERT_TRUE(reply) << reply.error().describe();
    ASSERT_EQ(reply->vectors.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(reply->vectors[i], fake_llm::embedding_for(request.inputs[i], 64));
    EXPECT_NE(reply->vectors[0], reply->vectors[1]);
    EXPECT_EQ(reply->attempts, 1);
    EXPECT_EQ(server->stats()["embeddings"], 1);
}

TEST(OpenAiClient, RejectsBadOptions) {
    ClientOptions options;
    options.base_url = "ftp://example.com";
    EXPECT_FALSE(make_openai_client(options));
    options.base_url = "http://localhost:1/v1";
    options.concurrency = 0;
    EXPECT_FALSE(make_openai_client(options));
    options.concurrency = 1;
    options.structured_output = "xml";
    auto bad = make_openai_client(options);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().kind, ErrorKind::invalid_input);
}

TEST(OpenAiClientHelpers, UrlIdentityDropsCredentialsQueryAndSlash) {
    EXPECT_EQ(url_identity("https://user:pw@api.example.com/v1/?key=abc"), "https://api.example.com/v1");
    EXPECT_EQ(url_identity("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080/v1");
    EXPECT_EQ(url_identity("http://h/v1#frag"), "http://h/v1");
}

TEST(OpenAiClientHelpers, ParsesRetryAfterSecondsAndDates) {
    EXPECT_EQ(parse_retry_after("3"), 3.0);
    EXPECT_EQ(parse_retry_after(" 1.5 "), 1.5);
    EXPECT_FALSE(parse_retry_after("soon"));
    EXPECT_FALSE(parse_retry_after("3x"));
    EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0);  // in the past
    const auto later = parse_retry_after("Fri, 31 Dec 2100 23:59:59 GMT");
    ASSERT_TRUE(later);
    EXPECT_GT(*later, 1e9);
}

TEST(RoleName, NamesEveryRole) {
    EXPECT_EQ(role_name(Role::answer), "answer");
    EXPECT_EQ(role_name(Role::judge), "judge");
    EXPECT_EQ(role_name(Role::system), "system");
    EXPECT_EQ(role_name(Role::embed), "embed");
}

}  // namespace
}  // namespace memfail::llm

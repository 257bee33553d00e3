// SPDX-License-Identifier: MIT
// API key redaction and the token-bucket rate limiter.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <memfail/llm/rate_limiter.hpp>
#include <memfail/llm/redact.hpp>

namespace memfail::llm {
namespace {

using Clock = std::chrono::steady_clock;

// Issue 32 item 7: the base URL as stored and printed.
TEST(Redact, UrlKeepsNoCredentialInItsPathQueryOrUserinfo) {
    const std::string key = "sk-proj-Zq7Rt2Lm9Xw4Kp8Vb3Nc6Hd1Jf5Gs0Ay";
    EXPECT_EQ(redact_url("http://proxy:8080/" + key + "/v1", key), "http://proxy:8080/[redacted]/v1");
    // Without the key, by its look.
    EXPECT_EQ(redact_url("http://proxy/" + key + "/v1"), "http://proxy/[redacted]/v1");
    EXPECT_EQ(redact_url("http://proxy/Ak9dPq2Lw8Rt5Zy3Xn7Vb1Mc/v1"), "http://proxy/[redacted]/v1");
    EXPECT_EQ(redact_url("http://proxy/0123456789abcdef0123456789abcdef/v1"), "http://proxy/[redacted]/v1");
    EXPECT_EQ(redact_url("https://u:pw@h/v1?api-version=2024-02-01&x#frag"), "https://[redacted]@h/v1?api-version=[redacted]&x");
    // Names stay.
    for (const std::string url : {"https://api.openai.com/v1", "http://127.0.0.1:8000/v1",
                                  "https://x.openai.azure.com/openai/deployments/gpt-4o-mini-2024-07-18"})
        EXPECT_EQ(redact_url(url), url);
    EXPECT_FALSE(looks_like_secret("text-embedding-3-small"));
    EXPECT_FALSE(looks_like_secret("sk-short"));
    EXPECT_TRUE(looks_like_secret("token_abcdef123456"));
    // Messages: every secret part of the URL, wherever it is echoed.
    EXPECT_EQ(redact_with_url("404 for /Ak9dPq2Lw8Rt5Zy3Xn7Vb1Mc/v1/chat?d=qv-7Hd2Lm9X", "http://h/Ak9dPq2Lw8Rt5Zy3Xn7Vb1Mc/v1?d=qv-7Hd2Lm9X", ""),
              "404 for /[redacted]/v1/chat?d=[redacted]");
}

TEST(Redact, ReplacesTheKeyAndLongFragmentsOfIt) {
    const std::string key = "sk-proj-ABCDEFGHIJKLMNOP";
    EXPECT_EQ(redact("Incorrect API key provided: " + key + ".", key), "Incorrect API key provided: [redacted].");
    EXPECT_EQ(redact("key sk-proj-ABCD****MNOP", key), "key [redacted]****MNOP");  // "sk-proj-ABCD" is 12 chars
    EXPECT_EQ(redact("tail HIJKLMNOP here", key), "tail [redacted] here");
    EXPECT_EQ(redact("short HIJKLMN ok", key), "short HIJKLMN ok");  // 7 characters stay
    EXPECT_EQ(redact(key + key, key), "[redacted][redacted]");
    EXPECT_EQ(redact("nothing secret", key), "nothing secret");
}

TEST(Redact, EmptyAndShortKeys) {
    EXPECT_EQ(redact("abc", ""), "abc");
    EXPECT_EQ(redact("the key is abc, ab stays", "abc"), "the key is [redacted], ab stays");
}

TEST(RateLimiter, UnlimitedNeverWaits) {
    RateLimiter limiter(0);
    EXPECT_TRUE(limiter.unlimited());
    const auto start = Clock::now();
    for (int i = 0; i < 1000; ++i) limiter.acquire();
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 0.5);
}

TEST(RateLimiter, SpacesAcquisitionsAcrossThreads) {
    RateLimiter limiter(1200);  // 20 a second, burst 20
    for (int i = 0; i < 20; ++i) limiter.acquire();  // drain the burst
    EXPECT_GT(limiter.wait_for(1).count(), 0.0);
    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 2; ++i) limiter.acquire();
        });
    for (auto& t : threads) t.join();
    // Eight more acquisitions at 20/s after an empty bucket: about 0.4 s, never much less.
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_GE(elapsed, 0.35);
    EXPECT_LT(elapsed, 2.0);
}

TEST(RateLimiter, AnAmountLargerThanTheBurstWaitsOnlyForAFullBucket) {
    RateLimiter limiter(600, 5);  // 10 a second, burst 5
    EXPECT_EQ(limiter.wait_for(50).count(), 0.0);  // full bucket: go (and run into debt)
    limiter.acquire(50);
    EXPECT_NEAR(limiter.wait_for(1).count(), 4.6, 0.1);  // 45 owed + 1 needed, at 10/s
}

}  // namespace
}  // namespace memfail::llm

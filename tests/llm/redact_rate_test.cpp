// SPDX-License-Identifier: MIT
// API key redaction and the token-bucket rate limiter.
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <memfail/llm/rate_limiter.hpp>
#include <memfail/llm/redact.hpp>

namespace memfail::llm {
namespace {

using Clock = std::chrono::steady_clock;

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

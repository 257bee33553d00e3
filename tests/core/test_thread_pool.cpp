// SPDX-License-Identifier: MIT
// The worker pool: every task runs once, results come back through futures, work really overlaps,
// and destruction drains the queue.
#include <memfail/core/thread_pool.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

namespace memfail {
namespace {

TEST(ThreadPool, RunsEveryTaskOnceAndReturnsResults) {
    ThreadPool pool(4);
    std::vector<std::future<int>> futures;
    for (int i = 0; i < 100; ++i) futures.push_back(pool.submit([i] { return i * i; }));
    long sum = 0;
    for (auto& f : futures) sum += f.get();
    long expected = 0;
    for (int i = 0; i < 100; ++i) expected += i * i;
    EXPECT_EQ(sum, expected);
}

TEST(ThreadPool, TasksOverlapUpToThePoolSize) {
    ThreadPool pool(4);
    std::atomic<int> running{0}, peak{0};
    std::vector<std::future<void>> futures;
    for (int i = 0; i < 12; ++i)
        futures.push_back(pool.submit([&] {
            const int now = ++running;
            int seen = peak.load();
            while (now > seen && !peak.compare_exchange_weak(seen, now)) {
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            --running;
        }));
    for (auto& f : futures) f.get();
    EXPECT_GT(peak.load(), 1);
    EXPECT_LE(peak.load(), 4);
}

TEST(ThreadPool, DestructionFinishesQueuedWork) {
    std::atomic<int> done{0};
    {
        ThreadPool pool(2);
        for (int i = 0; i < 20; ++i) (void)pool.submit([&] { ++done; });
    }
    EXPECT_EQ(done.load(), 20);
    ThreadPool zero(0);  // asking for none still gives one worker
    EXPECT_EQ(zero.size(), 1u);
    EXPECT_EQ(zero.submit([] { return 7; }).get(), 7);
}

}  // namespace
}  // namespace memfail

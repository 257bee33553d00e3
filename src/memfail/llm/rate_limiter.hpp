// SPDX-License-Identifier: MIT
// A token bucket that blocks callers until a per-minute budget (requests or tokens) allows them.
#pragma once
#include <chrono>
#include <mutex>

namespace memfail::llm {

class RateLimiter {
public:
    // `per_minute` <= 0 means unlimited. `burst` is how much may be spent at once after a quiet
    // spell; 0 picks one second's worth (at least 1), so a small budget spaces calls evenly.
    explicit RateLimiter(double per_minute, double burst = 0);

    // Takes `amount` from the bucket, sleeping first when the budget is spent. Callers reserve in
    // arrival order: each reservation pushes the next caller's start further out, so many threads
    // never overshoot together. An amount larger than the burst waits only for a full bucket.
    void acquire(double amount = 1);

    // How long acquire(amount) would sleep now, without reserving: for tests and diagnostics.
    std::chrono::duration<double> wait_for(double amount = 1);

    bool unlimited() const { return m_rate_per_second <= 0; }

private:
    using Clock = std::chrono::steady_clock;
    void refill_locked(Clock::time_point now);
    double wait_seconds_locked(double amount) const;

    std::mutex m_mutex;
    double m_rate_per_second;
    double m_capacity;
    double m_level;  // may go negative: that is time already promised to earlier callers
    Clock::time_point m_last;
};

}  // namespace memfail::llm

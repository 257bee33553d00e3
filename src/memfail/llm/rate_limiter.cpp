// SPDX-License-Identifier: MIT
// Token bucket with reservations (callers sleep outside the lock).
#include <memfail/llm/rate_limiter.hpp>

#include <algorithm>
#include <thread>

namespace memfail::llm {

RateLimiter::RateLimiter(double per_minute, double burst)
    : m_rate_per_second(per_minute > 0 ? per_minute / 60.0 : 0),
      m_capacity(burst > 0 ? burst : std::max(1.0, m_rate_per_second)),
      m_level(m_capacity),
      m_last(Clock::now()) {}

void RateLimiter::refill_locked(Clock::time_point now) {
    const double elapsed = std::chrono::duration<double>(now - m_last).count();
    m_last = now;
    m_level = std::min(m_capacity, m_level + elapsed * m_rate_per_second);
}

double RateLimiter::wait_seconds_locked(double amount) const {
    // A request larger than the whole bucket waits for a full bucket rather than forever.
    const double needed = std::min(amount, m_capacity);
    return m_level >= needed ? 0.0 : (needed - m_level) / m_rate_per_second;
}

void RateLimiter::acquire(double amount) {
    if (unlimited() || amount <= 0) return;
    double wait = 0;
    {
        std::lock_guard lock(m_mutex);
        refill_locked(Clock::now());
        wait = wait_seconds_locked(amount);
        m_level -= amount;
    }
    if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
}

std::chrono::duration<double> RateLimiter::wait_for(double amount) {
    if (unlimited() || amount <= 0) return std::chrono::duration<double>(0);
    std::lock_guard lock(m_mutex);
    refill_locked(Clock::now());
    return std::chrono::duration<double>(wait_seconds_locked(amount));
}

}  // namespace memfail::llm

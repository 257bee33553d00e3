// SPDX-License-Identifier: MIT
// Fixed worker pool.
#include <memfail/core/thread_pool.hpp>

namespace memfail {

ThreadPool::ThreadPool(std::size_t threads) {
    if (threads == 0) threads = 1;
    m_workers.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) m_workers.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_ready.notify_all();
    for (auto& t : m_workers) t.join();
}

void ThreadPool::work() {
    for (;;) {
        std::function<void()> task;
        {
            std::unique_lock lock(m_mutex);
            m_ready.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
            if (m_queue.empty()) return;  // stopping and drained
            task = std::move(m_queue.front());
            m_queue.pop_front();
        }
        task();
    }
}

}  // namespace memfail

// SPDX-License-Identifier: MIT
// A fixed pool of worker threads for I/O-bound work (LLM calls): the run loop submits independent
// probes and collects futures. Tasks must not throw; Result<T> carries their failures.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace memfail {

class ThreadPool {
public:
    explicit ThreadPool(std::size_t threads);
    ~ThreadPool();  // finishes queued tasks, then joins
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    std::size_t size() const { return m_workers.size(); }

    template <class F>
    auto submit(F&& task) -> std::future<std::invoke_result_t<F>> {
        using R = std::invoke_result_t<F>;
        auto packaged = std::make_shared<std::packaged_task<R()>>(std::forward<F>(task));
        std::future<R> future = packaged->get_future();
        {
            std::lock_guard lock(m_mutex);
            m_queue.emplace_back([packaged] { (*packaged)(); });
        }
        m_ready.notify_one();
        return future;
    }

private:
    void work();

    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<std::function<void()>> m_queue;
    bool m_stopping = false;
    std::vector<std::thread> m_workers;
};

}  // namespace memfail

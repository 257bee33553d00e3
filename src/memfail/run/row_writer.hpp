// SPDX-License-Identifier: MIT
// The run's writer: probe x k rows written in probe order, on the main thread, as soon as each is
// graded, with the run's LLM calls accounted beside them; and the count of pool tasks that use the
// run, so nothing they reference goes away while they run.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>

#include <memfail/core/error.hpp>
#include <memfail/run/call_recorder.hpp>
#include <memfail/run/run_config.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::run {

// Writes the rows of every scenario in probe order as soon as each (and every row before it) is
// graded, on the main thread, between its own storing and retrieving: no barrier between
// checkpoints or datasets, and a resumed run still finds a prefix of each checkpoint recorded.
// Actions (a scenario marked graded) run in their place in the same order. The destructor waits
// for rows still being graded: their tasks hold references into the run.
class RowWriter {
public:
    RowWriter(store::ResultsDb& db, std::int64_t run_id, const RunConfig& config, const AfterProbeHook& hook,
              RunOutcome& outcome, CallRecorder* recorder)
        : m_db(db), m_run_id(run_id), m_config(config), m_hook(hook), m_outcome(outcome), m_recorder(recorder) {}
    RowWriter(const RowWriter&) = delete;
    RowWriter& operator=(const RowWriter&) = delete;
    ~RowWriter() {
        wait_all();
        wait_tasks();
    }

    // Tasks on the pool that use the run (a fact's judge calls may outlive every row that needs
    // them): counted so nothing they use goes away while they run.
    void task_started() {
        std::lock_guard lock(m_task_mutex);
        ++m_tasks;
    }
    void task_finished() {
        // Notified under the lock: once the waiter sees no task left, it may destroy the writer, so
        // nothing here may touch it after the lock is released.
        std::lock_guard lock(m_task_mutex);
        --m_tasks;
        m_task_done.notify_all();
    }
    void wait_tasks() {
        std::unique_lock lock(m_task_mutex);
        m_task_done.wait(lock, [&] { return m_tasks == 0; });
    }

    void push_row(std::shared_future<store::ProbeRow> row, std::string probe_id, int k, std::function<void()> after) {
        Entry e;
        e.is_row = true;
        e.row = std::move(row);
        e.probe_id = std::move(probe_id);
        e.k = k;
        e.after = std::move(after);
        m_queue.push_back(std::move(e));
        ++m_rows;
    }
    // An action runs in its place once `ready` is (when given): a suite's session checks wait for
    // their judge calls without holding up the rows before them.
    void push_action(std::function<Result<void>()> action, std::shared_future<void> ready = {}) {
        Entry e;
        e.action = std::move(action);
        e.ready = std::move(ready);
        m_queue.push_back(std::move(e));
    }

    // Writes what is graded at the front of the queue; with `block`, waits until at most `keep`
    // rows are still queued. False: the test hook or keep_going asked to stop (tasks have finished).
    Result<bool> write(bool block, std::size_t keep = 0) {
        while (!m_queue.empty()) {
            Entry& e = m_queue.front();
            if (!e.is_row) {
                if (e.ready.valid() && e.ready.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
                    if (!block || m_rows <= keep) break;
                    e.ready.wait();
                }
                auto action = std::move(e.action);
                m_queue.pop_front();
                MF_TRY(action());
                continue;
            }
            const bool ready = e.row.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
            if (!ready && (!block || m_rows <= keep)) break;
            // An endpoint that refuses the key, or that failed too many times in a row, stops the
            // run before rows graded against its failures are written (resumable).
            if (auto failed = endpoint_failure()) {
                wait_all();
                MF_TRY(flush_calls());
                return *failed;
            }
            store::ProbeRow row = e.row.get();
            const std::string probe_id = std::move(e.probe_id);
            const int k = e.k;
            auto after = std::move(e.after);
            m_queue.pop_front();
            --m_rows;
            MF_TRY(m_db.record_probe(m_run_id, row));
            MF_TRY(flush_calls());
            ++m_outcome.probes_graded;
            if (after) after();
            if ((m_hook && !m_hook(probe_id, k)) || (m_config.keep_going && !m_config.keep_going())) {
                wait_all();
                return false;
            }
        }
        return true;
    }

    Result<void> flush_calls() {
        if (!m_recorder) return {};
        return m_db.record_llm_calls(m_run_id, m_recorder->drain());
    }

private:
    struct Entry {
        bool is_row = false;
        std::shared_future<store::ProbeRow> row;
        std::string probe_id;
        int k = 0;
        std::function<void()> after;
        std::function<Result<void>()> action;
        std::shared_future<void> ready;  // an action's: run it once this is ready (invalid: at once)
    };

    std::optional<Error> endpoint_failure() const {
        if (!m_recorder) return std::nullopt;
        return m_recorder->refused_outright();
    }
    void wait_all() {
        for (auto& e : m_queue)
            if (e.is_row) e.row.wait();
            else if (e.ready.valid()) e.ready.wait();
    }

    store::ResultsDb& m_db;
    std::int64_t m_run_id;
    const RunConfig& m_config;
    const AfterProbeHook& m_hook;
    RunOutcome& m_outcome;
    CallRecorder* m_recorder;
    std::deque<Entry> m_queue;
    std::size_t m_rows = 0;  // rows in the queue
    std::mutex m_task_mutex;
    std::condition_variable m_task_done;
    std::size_t m_tasks = 0;
};

}  // namespace memfail::run

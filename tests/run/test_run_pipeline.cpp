// SPDX-License-Identifier: MIT
// The run has no barrier between datasets: the next dataset is stored and retrieved while the
// previous one's model calls are still out, and the rows are still written in probe order.
#include <memfail/data/jsonl.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>

#include <support/small_datasets.hpp>
#include <support/temp_dir.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace memfail::run {
namespace {

using testing::TempDir;

using testing::small_datasets;

// A test-taker whose answers are held back until a gate opens (or a deadline passes, when the
// call fails); every other call answers at once.
class GatedClient final : public llm::LlmClient {
public:
    void open() {
        {
            std::lock_guard lock(m_mutex);
            m_open = true;
        }
        m_changed.notify_all();
    }
    std::chrono::milliseconds delay_for_answer{0};

    Result<llm::ChatReply> chat(const llm::ChatRequest& request) override {
        {
            std::unique_lock lock(m_mutex);
            if (!m_changed.wait_for(lock, std::chrono::seconds(20), [&] { return m_open; }))
                return make_error(ErrorKind::timeout, "the gate never opened: the run waited for this answer "
                                                      "before starting the next dataset");
        }
        // Earlier calls wait longer, so answers complete out of order.
        const int n = m_calls++;
        std::this_thread::sleep_for(std::chrono::milliseconds(std::max(0, 40 - 2 * n)));
        llm::ChatReply reply;
        reply.content = request.messages.empty() ? "" : "I do not know.";
        reply.attempts = 1;
        reply.usage = {10, 3, false};
        return reply;
    }
    Result<llm::EmbeddingReply> embed(const llm::EmbeddingRequest&) override {
        return make_error(ErrorKind::unsupported, "no embeddings here");
    }
    std::string identity() const override { return "gated://test"; }

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    bool m_open = false;
    std::atomic<int> m_calls{0};
};

RunConfig config_for(const TempDir& dir) {
    RunConfig config;
    config.system_spec = "verbatim";
    config.ks = {1, 3};
    config.results_path = dir.file("results.db");
    config.llm.answer_model = "taker";
    config.llm.concurrency = 8;
    return config;
}

TEST(RunPipeline, TheNextDatasetStartsWhileThePreviousOnesAnswersAreOut) {
    TempDir dir;
    const auto datasets = small_datasets({"long_hop", "conditional_facts_easy", "coexisting_facts"}, 6);
    GatedClient client;
    std::atomic<int> systems{0};
    // The answers of the first dataset are held until the third dataset's system is made: with a
    // barrier after each dataset that never happens, and the held calls fail.
    SystemFactory factory = [&](const memory::SystemContext& context) {
        if (++systems == 3) client.open();
        return memory::make_memory_system("verbatim", context);
    };
    auto outcome = run_datasets(config_for(dir), datasets, factory, {}, {}, &client);
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();
    EXPECT_EQ(outcome->probes_graded, 3u * 6u * 2u);

    auto db = store::ResultsDb::open(dir.file("results.db")).value();
    auto s = db.database().prepare("SELECT count(*), sum(stage = 'error') FROM probe_results").value();
    ASSERT_TRUE(s.step().value());
    EXPECT_EQ(s.column_int(0), 36);
    EXPECT_EQ(s.column_int(1), 0) << "an answer was waited for before the next dataset started";
    auto run = db.run(outcome->run_id).value();
    ASSERT_TRUE(run.has_value());
    EXPECT_EQ(run->status, "finished");
}

TEST(RunPipeline, RowsAreWrittenInProbeOrderThoughAnswersFinishOutOfOrder) {
    TempDir dir;
    const auto datasets = small_datasets({"conditional_facts_easy", "long_hop"}, 8);
    GatedClient client;
    client.open();
    auto outcome = run_datasets(config_for(dir), datasets, factory_for_spec("verbatim"), {}, {}, &client);
    ASSERT_TRUE(outcome.has_value()) << outcome.error().describe();

    // The expected order: dataset by dataset, each probe at each k, as the scenarios list them.
    std::vector<std::string> expected;
    for (const auto& d : datasets) {
        // Probes are graded checkpoint by checkpoint, in the order their sessions were stored.
        for (const auto& session : d.scenario.sessions)
            for (const auto& p : d.scenario.probes)
                if (p.after_session == session.id)
                    for (int k : {1, 3}) expected.push_back(d.scenario.dataset + "/" + p.id + "@" + std::to_string(k));
    }
    auto db = store::ResultsDb::open(dir.file("results.db")).value();
    auto s = db.database().prepare("SELECT dataset, probe_id, k FROM probe_results ORDER BY rowid").value();
    std::vector<std::string> written;
    ASSERT_TRUE(s.for_each_row([&] {
        written.push_back(s.column_text(0) + "/" + s.column_text(1) + "@" + std::to_string(s.column_int(2)));
    }).has_value());
    EXPECT_EQ(written, expected);
}

// Stopped by the after-probe hook while later datasets' calls are out: nothing is written after
// the stop, the run stays resumable, and resuming completes it without a doubled row.
TEST(RunPipeline, AStopMidwayLeavesAResumableRunWithoutDoubledRows) {
    TempDir dir;
    const auto datasets = small_datasets({"long_hop", "conditional_facts_easy"}, 6);
    GatedClient client;
    client.open();
    RunConfig config = config_for(dir);
    int seen = 0;
    auto first = run_datasets(config, datasets, factory_for_spec("verbatim"), {},
                              [&](const std::string&, int) { return ++seen < 5; }, &client);
    ASSERT_TRUE(first.has_value()) << first.error().describe();
    EXPECT_TRUE(first->stopped);
    config.resume = true;
    auto second = run_datasets(config, datasets, factory_for_spec("verbatim"), {}, {}, &client);
    ASSERT_TRUE(second.has_value()) << second.error().describe();
    EXPECT_EQ(second->run_id, first->run_id);
    auto db = store::ResultsDb::open(dir.file("results.db")).value();
    auto s = db.database().prepare("SELECT count(*), count(DISTINCT dataset || probe_id || ':' || k) FROM probe_results").value();
    ASSERT_TRUE(s.step().value());
    EXPECT_EQ(s.column_int(0), 24);
    EXPECT_EQ(s.column_int(1), 24);
}

}  // namespace
}  // namespace memfail::run

// SPDX-License-Identifier: MIT
// LLM accounting in a run: failed calls keep their attempts, the fail-fast guard stops a run whose
// endpoint keeps failing (and the run resumes once it works), and llm_calls is exact across a kill:
// a call is its run, cache key and occurrence, so replays of accounted work are not counted again
// and a reply a killed process paid for but never wrote down is counted once, as sent.
#include <memfail/data/jsonl.hpp>
#include <memfail/llm/llm_stack.hpp>
#include <memfail/run/call_recorder.hpp>
#include <memfail/run/runner.hpp>
#include <memfail/store/results_db.hpp>

#include <fake_llm.hpp>
#include <support/temp_dir.hpp>
#include "served_run.hpp"

#include <gtest/gtest.h>

#include <atomic>

namespace memfail::run {
namespace {

using nlohmann::json;
using testing::TempDir;

// Answers from a list of outcomes, in order; counts what it was asked.
class StubClient final : public llm::LlmClient {
public:
    std::vector<std::optional<ErrorKind>> outcomes;  // nullopt: success
    bool hits = false;                               // successes come back as cache hits
    std::atomic<int> calls{0};

    Result<llm::ChatReply> chat(const llm::ChatRequest&) override {
        const int i = calls++;
        const auto outcome = i < static_cast<int>(outcomes.size()) ? outcomes[i] : std::nullopt;
        if (outcome) {
            Error e = make_error(*outcome, "POST http://stub/v1/chat/completions: HTTP 503 after 3 attempts");
            e.attempts = 3;
            return e;
        }
        llm::ChatReply reply;
        reply.content = "ok";
        reply.cache_hit = hits;
        reply.attempts = hits ? 0 : 1;
        reply.usage = {10, 2, false};
        reply.cache_key = "key" + std::to_string(i);
        return reply;
    }
    Result<llm::EmbeddingReply> embed(const llm::EmbeddingRequest&) override {
        return make_error(ErrorKind::unsupported, "no embeddings");
    }
    std::string identity() const override { return "http://stub/v1"; }
};

llm::ChatRequest request(std::string model = "m") {
    llm::ChatRequest r;
    r.role = llm::Role::judge;
    r.stage = "judge.answer";
    r.model = std::move(model);
    r.messages = {{"user", "q"}};
    return r;
}

TEST(CallRecorder, AFailedCallIsRecordedWithItsAttempts) {
    StubClient stub;
    stub.outcomes = {ErrorKind::network};
    CallRecorder recorder(stub);
    ASSERT_FALSE(recorder.chat(request()));
    const auto rows = recorder.drain();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].attempts, 3);
    EXPECT_EQ(rows[0].error_kind, "network");
}

TEST(CallRecorder, TripsAfterNFailuresInARowAndThenSendsNothing) {
    StubClient stub;
    stub.outcomes = {ErrorKind::network, ErrorKind::network, std::nullopt,  // a success resets the count
                     ErrorKind::timeout, ErrorKind::network, ErrorKind::rate_limited};
    CallRecorder recorder(stub, 3);
    for (int i = 0; i < 5; ++i) {
        (void)recorder.chat(request());
        EXPECT_FALSE(recorder.aborted()) << "after call " << i + 1;
    }
    ASSERT_FALSE(recorder.chat(request()));
    ASSERT_TRUE(recorder.aborted());
    EXPECT_EQ(recorder.aborted()->kind, ErrorKind::rate_limited);
    EXPECT_NE(recorder.aborted()->message.find("3 calls in a row to http://stub/v1 (model m) failed"),
              std::string::npos)
        << recorder.aborted()->message;
    EXPECT_NE(recorder.aborted()->message.find("HTTP 503"), std::string::npos);
    ASSERT_TRUE(recorder.refused_outright());  // callers checking only this stop too
    EXPECT_EQ(recorder.drain().size(), 6u);

    // Tripped: the error at once, nothing sent, nothing recorded.
    auto later = recorder.chat(request("another"));
    ASSERT_FALSE(later);
    EXPECT_EQ(later.error().message, recorder.aborted()->message);
    EXPECT_EQ(stub.calls.load(), 6);
    EXPECT_TRUE(recorder.drain().empty());
}

TEST(CallRecorder, CacheHitsDoNotResetTheCountAndZeroNeverTrips) {
    StubClient stub;
    stub.outcomes = {ErrorKind::network, std::nullopt, ErrorKind::network};
    stub.hits = true;
    CallRecorder recorder(stub, 2);
    for (int i = 0; i < 3; ++i) (void)recorder.chat(request());
    EXPECT_TRUE(recorder.aborted());

    StubClient failing;
    failing.outcomes.assign(50, ErrorKind::network);
    CallRecorder patient(failing, 0);
    for (int i = 0; i < 50; ++i) (void)patient.chat(request());
    EXPECT_FALSE(patient.aborted());
}

TEST(CallRecorder, ModelOutputErrorsDoNotTrip) {
    StubClient stub;
    stub.outcomes.assign(10, ErrorKind::invalid_output);
    CallRecorder recorder(stub, 2);
    for (int i = 0; i < 10; ++i) (void)recorder.chat(request());
    EXPECT_FALSE(recorder.aborted());
}

// --- record_llm_calls: one identity per call --------------------------------------------------

store::LlmCallRow call(const std::string& key, const std::string& session, std::int64_t occurrence, bool hit,
                       const std::string& payer = {}) {
    store::LlmCallRow r;
    r.role = "judge";
    r.stage = "judge.answer";
    r.model = "m";
    r.cache_hit = hit;
    r.prompt_tokens = 100;
    r.completion_tokens = 5;
    r.attempts = hit ? 0 : 1;
    r.latency_micros = hit ? 10 : 50000;
    r.cache_key = key;
    r.session = session;
    r.occurrence = occurrence;
    r.payer = payer;
    return r;
}

store::LlmCallRow paid_elsewhere(store::LlmCallRow r, const std::string& payer) {
    r.paid_elsewhere = true;
    r.payer = payer;
    r.paid_prompt_tokens = 100;
    r.paid_completion_tokens = 5;
    r.paid_attempts = 2;
    r.paid_latency_micros = 70000;
    return r;
}

struct Totals {
    std::int64_t calls = 0, hits = 0, prompt = 0, retries = 0;
};

Totals totals(store::ResultsDb& db, std::int64_t run) {
    Totals t;
    for (const auto& u : db.llm_usage(run).value()) {
        t.calls += u.calls;
        t.hits += u.cache_hits;
        t.prompt += u.prompt_tokens;
        t.retries += u.retries;
    }
    return t;
}

std::int64_t new_run(store::ResultsDb& db) {
    store::RunRecord r;
    r.system_spec = "verbatim";
    r.config_json = "{}";
    r.config_hash = "h";
    r.code_version = "test";
    return db.create_run(r).value();
}

TEST(RecordLlmCalls, ReplaysOfAccountedWorkAreNotCountedAgain) {
    TempDir dir;
    auto db = store::ResultsDb::open(dir.file("r.db")).value();
    const auto run = new_run(db);
    // Process A: the call sent, then the same prompt again (a hit), both written.
    ASSERT_TRUE(db.record_llm_calls(run, {call("K", "A", 0, false, "pA"), call("K", "A", 1, true)}).has_value());
    // Killed; process B redoes the same work: both calls replay from the cache.
    ASSERT_TRUE(db.record_llm_calls(run, {call("K", "B", 0, true), call("K", "B", 1, true)}).has_value());
    const Totals t = totals(db, run);
    EXPECT_EQ(t.calls, 2);
    EXPECT_EQ(t.hits, 1);
    // B goes further than A got: its third call with the key is new work.
    ASSERT_TRUE(db.record_llm_calls(run, {call("K", "B", 2, true)}).has_value());
    EXPECT_EQ(totals(db, run).calls, 3);
}

// Two probes whose calls share a cache key (the same judge prompt at k=1 and k=3): process A wrote
// the k=1 probe's call and was killed; B grades only the k=3 probe. Its replay is that probe's own
// call, not a replay of A's: it is written (as a hit), as in a run that was never killed.
TEST(RecordLlmCalls, CallsOfDifferentWorkSharingAKeyAreNotTakenForReplays) {
    TempDir dir;
    auto db = store::ResultsDb::open(dir.file("r.db")).value();
    const auto run = new_run(db);
    auto for_work = [](store::LlmCallRow row, std::string work) {
        row.work = std::move(work);
        return row;
    };
    ASSERT_TRUE(db.record_llm_calls(run, {for_work(call("K", "A", 0, false, "pA"), "s/p@1")}).has_value());
    ASSERT_TRUE(db.record_llm_calls(run, {for_work(call("K", "B", 0, true), "s/p@3")}).has_value());
    Totals t = totals(db, run);
    EXPECT_EQ(t.calls, 2);
    EXPECT_EQ(t.hits, 1);
    // Redoing the k=1 probe's call after the kill is a replay of accounted work: not written.
    ASSERT_TRUE(db.record_llm_calls(run, {for_work(call("K", "B", 0, true), "s/p@1")}).has_value());
    EXPECT_EQ(totals(db, run).calls, 2);
}

TEST(RecordLlmCalls, AReplyPaidForByAKilledProcessIsCountedOnceAsSent) {
    TempDir dir;
    auto db = store::ResultsDb::open(dir.file("r.db")).value();
    const auto run = new_run(db);
    // Process A paid for K and died before writing the call. B replays it: the payment becomes the
    // sent call (A's tokens, attempts and latency), and a second replay is an ordinary hit.
    ASSERT_TRUE(db.record_llm_calls(run, {paid_elsewhere(call("K", "B", 0, true), "pA"),
                                          paid_elsewhere(call("K", "B", 1, true), "pA")})
                    .has_value());
    Totals t = totals(db, run);
    EXPECT_EQ(t.calls, 2);
    EXPECT_EQ(t.hits, 1);
    EXPECT_EQ(t.retries, 1);  // the payment's 2 attempts
    // C, after another kill, replays both again: nothing new.
    ASSERT_TRUE(db.record_llm_calls(run, {paid_elsewhere(call("K", "C", 0, true), "pA"),
                                          paid_elsewhere(call("K", "C", 1, true), "pA")})
                    .has_value());
    t = totals(db, run);
    EXPECT_EQ(t.calls, 2);
    EXPECT_EQ(t.hits, 1);
}

TEST(RecordLlmCalls, AHitWrittenBeforeTheLostSentCallIsUpgraded) {
    TempDir dir;
    auto db = store::ResultsDb::open(dir.file("r.db")).value();
    const auto run = new_run(db);
    // A: a caller that shared the in-flight call wrote its hit; the paying call's row was lost.
    ASSERT_TRUE(db.record_llm_calls(run, {call("K", "A", 0, true)}).has_value());
    ASSERT_TRUE(db.record_llm_calls(run, {paid_elsewhere(call("K", "B", 0, true), "pA"),
                                          paid_elsewhere(call("K", "B", 1, true), "pA")})
                    .has_value());
    const Totals t = totals(db, run);
    EXPECT_EQ(t.calls, 2);
    EXPECT_EQ(t.hits, 1);
}

TEST(RecordLlmCalls, FailuresAndCallsWithoutAKeyAreAlwaysWritten) {
    TempDir dir;
    auto db = store::ResultsDb::open(dir.file("r.db")).value();
    const auto run = new_run(db);
    store::LlmCallRow failed = call("K", "A", 0, false);
    failed.error_kind = "network";
    failed.error = "HTTP 503 after 7 attempts";
    failed.attempts = 7;
    store::LlmCallRow uncached = call("", "A", 0, false);
    ASSERT_TRUE(db.record_llm_calls(run, {failed, uncached}).has_value());
    failed.session = "B";
    ASSERT_TRUE(db.record_llm_calls(run, {failed, uncached}).has_value());
    const auto usage = db.llm_usage(run).value();
    ASSERT_EQ(usage.size(), 1u);
    EXPECT_EQ(usage[0].calls, 4);
    EXPECT_EQ(usage[0].errors, 2);
    EXPECT_EQ(usage[0].retries, 12);
}

TEST(RecordLlmCalls, OlderResultsFilesGainTheColumns) {
    TempDir dir;
    const std::string path = dir.file("old.db");
    {
        auto db = store::ResultsDb::open(path).value();
        ASSERT_TRUE(db.database().exec("DROP TABLE llm_calls; CREATE TABLE llm_calls(id INTEGER PRIMARY KEY, "
                                       "run_id INTEGER NOT NULL, role TEXT NOT NULL, stage TEXT NOT NULL, model TEXT "
                                       "NOT NULL, cache_hit INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, "
                                       "completion_tokens INTEGER NOT NULL, counted_locally INTEGER NOT NULL, "
                                       "latency_micros INTEGER NOT NULL, attempts INTEGER NOT NULL, error_kind TEXT, "
                                       "error TEXT)")
                        .has_value());
    }
    auto db = store::ResultsDb::open(path).value();
    const auto run = new_run(db);
    ASSERT_TRUE(db.record_llm_calls(run, {call("K", "A", 0, false, "pA")}).has_value());
    EXPECT_EQ(totals(db, run).calls, 1);
}

// --- through the real client and server -----------------------------------------------------

struct Served : testing::ServedRun {
    explicit Served(json script) : ServedRun(std::move(script), "MEMFAIL_ACCOUNTING_NO_KEY", 16, 4, 2) {}
};

TEST(LlmAccountingRun, FailedCallsAreStoredWithTheAttemptsTheyMade) {
    Served s(json::parse(R"({"default": {"fault": "http_503"}})"));
    s.config.llm.max_consecutive_failures = 0;
    auto outcome = s.run(s.datasets(2));
    auto db = store::ResultsDb::open(s.config.results_path).value();
    auto q = db.database().prepare("SELECT COUNT(*), SUM(attempts), MIN(attempts) FROM llm_calls WHERE error_kind IS NOT NULL").value();
    ASSERT_TRUE(q.step().value());
    ASSERT_GT(q.column_int(0), 0);
    EXPECT_EQ(q.column_int(2), 3);  // 1 + 2 retries, each call
    EXPECT_EQ(q.column_int(1), s.server->stats()["requests"].get<std::int64_t>());
}

TEST(LlmAccountingRun, AnEndpointThatKeepsFailingStopsTheRunWhichResumesOnceItWorks) {
    Served s(json::parse(R"({"default": {"fault": "http_503"}})"));
    s.config.llm.max_retries = 0;
    const auto datasets = s.datasets(20);
    auto failed = s.run(datasets);
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().kind, ErrorKind::network);
    EXPECT_NE(failed.error().message.find("calls in a row to"), std::string::npos) << failed.error().describe();
    // At most the limit and the calls already in flight were sent, not one per probe.
    EXPECT_LE(s.server->stats()["requests"].get<int>(), CallRecorder::k_default_max_consecutive_failures +
                                                            s.config.llm.concurrency);
    {
        auto db = store::ResultsDb::open(s.config.results_path).value();
        auto runs = db.runs().value();
        ASSERT_EQ(runs.size(), 1u);
        EXPECT_NE(runs[0].status, "finished");
    }
    ASSERT_TRUE(s.server->set_script(json::parse(R"({"default": {"reply": "Yes."}})")).has_value());
    s.config.resume = true;
    auto resumed = s.run(datasets);
    ASSERT_TRUE(resumed) << resumed.error().describe();
    EXPECT_TRUE(resumed->resumed);
}

}  // namespace
}  // namespace memfail::run

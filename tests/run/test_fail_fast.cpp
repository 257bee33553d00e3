// SPDX-License-Identifier: MIT
// The fail-fast guard counts only failures that say the endpoint is down: a request the server
// refused for one prompt (HTTP 400 or 422: a content filter) is that call's error, neither counted
// nor a reset, while 5xx, timeouts, refused connections, auth, 404 and 429 after the retries still
// trip it. Through the recorder alone and through a whole run against the scripted server.
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
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace memfail::run {
namespace {

using nlohmann::json;
using testing::TempDir;

// Fails with the given errors, in order, then answers.
class Failing final : public llm::LlmClient {
public:
    std::vector<std::optional<Error>> outcomes;  // nullopt: success
    std::atomic<int> calls{0};

    Result<llm::ChatReply> chat(const llm::ChatRequest&) override {
        const int i = calls++;
        if (i < static_cast<int>(outcomes.size()) && outcomes[i]) return *outcomes[i];
        llm::ChatReply reply;
        reply.content = "ok";
        reply.attempts = 1;
        return reply;
    }
    Result<llm::EmbeddingReply> embed(const llm::EmbeddingRequest&) override {
        return make_error(ErrorKind::unsupported, "no embeddings");
    }
    std::string identity() const override { return "http://stub/v1"; }
};

Error http_error(ErrorKind kind, int status, int attempts) {
    Error e = make_error(kind, "POST http://stub/v1/chat/completions: HTTP " + std::to_string(status) + " after " +
                                   std::to_string(attempts) + " attempts: the server's words");
    e.attempts = attempts;
    return e;
}

llm::ChatRequest request() {
    llm::ChatRequest r;
    r.role = llm::Role::answer;
    r.stage = "answer";
    r.model = "m";
    r.messages = {{"user", "q"}};
    return r;
}

TEST(FailFast, RefusedRequestsNeverTrip) {
    Failing client;
    for (int i = 0; i < 20; ++i)
        client.outcomes.push_back(http_error(ErrorKind::protocol, i % 2 ? 400 : 422, 1));
    CallRecorder recorder(client, 2);
    for (int i = 0; i < 20; ++i) EXPECT_FALSE(recorder.chat(request()));
    EXPECT_FALSE(recorder.aborted());
    EXPECT_EQ(client.calls.load(), 20) << "every refused prompt was still sent";
    const auto rows = recorder.drain();
    ASSERT_EQ(rows.size(), 20u);
    EXPECT_EQ(rows[0].error_kind, "protocol");
}

TEST(FailFast, RefusedRequestsDoNotResetTheCountOfAnEndpointThatIsDown) {
    Failing client;
    client.outcomes = {http_error(ErrorKind::network, 503, 3), http_error(ErrorKind::protocol, 400, 1),
                       http_error(ErrorKind::network, 503, 3)};
    CallRecorder recorder(client, 2);
    for (int i = 0; i < 3; ++i) (void)recorder.chat(request());
    ASSERT_TRUE(recorder.aborted());
    EXPECT_NE(recorder.aborted()->message.find("2 calls in a row"), std::string::npos) << recorder.aborted()->message;
    EXPECT_NE(recorder.aborted()->message.find("HTTP 503"), std::string::npos);
}

TEST(FailFast, EveryDownKindStillTrips) {
    const std::vector<Error> down = {http_error(ErrorKind::network, 500, 3), http_error(ErrorKind::auth, 401, 1),
                                     http_error(ErrorKind::not_found, 404, 1),
                                     http_error(ErrorKind::rate_limited, 429, 7),
                                     [] {
                                         Error e = make_error(ErrorKind::timeout, "POST http://stub/v1/chat/completions: "
                                                                                  "no answer within 5 s after 3 attempts");
                                         e.attempts = 3;
                                         return e;
                                     }(),
                                     [] {
                                         Error e = make_error(ErrorKind::protocol, "POST http://stub/v1/chat/completions: "
                                                                                   "the reply is not a chat completion "
                                                                                   "after 3 attempts: <html>");
                                         e.attempts = 3;
                                         return e;
                                     }()};
    for (const Error& e : down) {
        Failing client;
        client.outcomes = {e, e};
        CallRecorder recorder(client, 2);
        (void)recorder.chat(request());
        (void)recorder.chat(request());
        EXPECT_TRUE(recorder.aborted()) << e.describe();
    }
}

// A whole run whose answer prompts are all refused with 400: it finishes (every row in error, for
// the error rate to judge) instead of stopping as if the endpoint were down; one that gets 503
// stops.
// The run: answers by fake-llm, no retries, fail-fast after two endpoint failures in a row.
struct Served : testing::ServedRun {
    explicit Served(json script) : ServedRun(std::move(script), "MEMFAIL_FAIL_FAST_NO_KEY", 8, 2, 0) {
        config.llm.max_consecutive_failures = 2;
    }
};

TEST(FailFastRun, APromptRefusedEverywhereIsEachRowsErrorNotAnAbort) {
    Served s(json::parse(R"({"default": {"fault": "http_400"}})"));
    auto outcome = s.run(6);
    ASSERT_TRUE(outcome) << outcome.error().describe();
    EXPECT_EQ(s.server->stats()["requests"].get<int>(), 6) << "every probe's answer was asked";
    auto db = store::ResultsDb::open(s.config.results_path).value();
    const auto summary = db.error_summary(outcome->run_id).value();
    EXPECT_EQ(summary.errors, 6);
    EXPECT_EQ(summary.rows, 6);
}

TEST(FailFastRun, AnEndpointThatIsDownStops) {
    Served s(json::parse(R"({"default": {"fault": "http_503"}})"));
    auto outcome = s.run(6);
    ASSERT_FALSE(outcome);
    EXPECT_EQ(outcome.error().kind, ErrorKind::network);
    EXPECT_NE(outcome.error().message.find("2 calls in a row"), std::string::npos) << outcome.error().describe();
}

}  // namespace
}  // namespace memfail::run

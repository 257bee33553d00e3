// SPDX-License-Identifier: MIT
// `memfail run` exit codes a supervisor can trust, through the real binary against the scripted
// server (tools/fake-llm): --resume of a finished run that failed --max-error-rate exits 1 again
// with the same message; a request the server refuses for one prompt (HTTP 400: a content filter)
// is that row's error, counted in the error rate, and never trips the endpoint fail-fast, while an
// endpoint that is down still does (exit 3).
#include "cli_test_util.hpp"

#include <fake_llm.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace memfail {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Ran;

// The preflight's one request is answered; `rules` and `fallback` answer the rest.
json script(json rules, json fallback) {
    json all = json::array({{{"name", "preflight"}, {"match", {{"contains", "memfail preflight"}}}, {"reply", "ok"}}});
    for (auto& r : rules) all.push_back(r);
    return {{"rules", all}, {"default", fallback}};
}

class RunExitCodes : public testing::CliTest {
protected:
    RunExitCodes() : CliTest("memfail-cli-run-exit") {}

    void serve(json s) {
        fake_llm::ServerOptions options;
        options.script = std::move(s);
        options.threads = 8;
        auto started = fake_llm::FakeLlmServer::start(std::move(options));
        ASSERT_TRUE(started) << started.error().describe();
        m_server = std::move(started).value();
    }

    // long_hop written to DATA (seed 42), and its first `n` questions: what --limit n asks.
    std::vector<std::string> questions(std::size_t n) {
        const Ran generated = memfail("datasets generate long_hop -o '" + (m_dir / "data").string() + "'");
        EXPECT_EQ(generated.code, 0) << generated.err;
        std::ifstream in(m_dir / "data" / "long_hop.jsonl");
        std::string line;
        std::getline(in, line);
        const json scenario = json::parse(line);
        std::vector<std::string> out;
        for (const auto& p : scenario["probes"]) {
            if (out.size() == n) break;
            out.push_back(p["question"].get<std::string>());
        }
        return out;
    }

    // The run over the first 9 long_hop questions at k=1 (9 probe x k rows), answered by `taker`.
    Ran run(const std::string& extra, const std::string& out = "r.db") {
        return memfail("run --system verbatim --data-dir '" + (m_dir / "data").string() +
                       "' --datasets long_hop --limit 9 --k 1 --answer-model taker --base-url " +
                       m_server->base_url() + " --api-key-env MEMFAIL_RUN_EXIT_NO_KEY --retries 0 --concurrency 1 "
                       "--out '" + (m_dir / out).string() + "' -q " + extra);
    }

    std::unique_ptr<fake_llm::FakeLlmServer> m_server;
};

TEST_F(RunExitCodes, ResumingAFinishedRunThatFailedTheErrorRateExitsOneAgain) {
    questions(9);
    serve(script(json::array(), {{"fault", "http_503"}}));
    // Every answer fails; the fail-fast guard is off, so the run finishes with every row in error.
    const Ran first = run("--max-consecutive-failures 0");
    ASSERT_EQ(first.code, 1) << first.out << first.err;
    EXPECT_NE(first.err.find("9 of 9 probe x k rows (100.0%) ended in error, more than --max-error-rate"),
              std::string::npos)
        << first.err;

    const Ran resumed = run("--max-consecutive-failures 0 --resume");
    EXPECT_EQ(resumed.code, 1) << resumed.out << resumed.err;
    EXPECT_NE(resumed.out.find("already finished: nothing to resume"), std::string::npos) << resumed.out;
    EXPECT_NE(resumed.err.find("9 of 9 probe x k rows (100.0%) ended in error, more than --max-error-rate"),
              std::string::npos)
        << resumed.err;

    // Within the rate it exits 0, on resume as on the run.
    const Ran lenient = run("--max-consecutive-failures 0 --resume --max-error-rate 1");
    EXPECT_EQ(lenient.code, 0) << lenient.out << lenient.err;
}

TEST_F(RunExitCodes, ARefusedPromptIsItsRowsErrorAndNeverTripsFailFast) {
    // Every third question is refused with HTTP 400 (a content filter); the others are answered.
    const auto asked = questions(9);
    ASSERT_EQ(asked.size(), 9u);
    json refused = json::array();
    for (std::size_t i = 2; i < asked.size(); i += 3)
        refused.push_back({{"name", "filtered"}, {"match", {{"last_user_contains", asked[i]}}}, {"fault", "http_400"}});
    serve(script(refused, {{"reply", "B"}}));

    // Even with a fail-fast limit of one failure, no refused prompt stops the run: it finishes, and
    // the 3 rows in error fail the error rate (exit 1), not the endpoint (exit 3).
    const Ran strict = run("--max-consecutive-failures 1");
    EXPECT_EQ(strict.code, 1) << strict.out << strict.err;
    EXPECT_EQ(strict.err.find("calls in a row"), std::string::npos) << strict.err;
    EXPECT_NE(strict.err.find("3 of 9 probe x k rows (33.3%) ended in error, more than --max-error-rate"),
              std::string::npos)
        << strict.err;
    EXPECT_NE(strict.err.find("HTTP 400"), std::string::npos) << "the cause is shown: " << strict.err;
    EXPECT_EQ(m_server->stats()["by_rule"].value("filtered", 0), 3);

    // A rate that allows them: the run passes, the errors noted.
    const Ran allowed = run("--max-consecutive-failures 1 --max-error-rate 0.5", "lenient.db");
    EXPECT_EQ(allowed.code, 0) << allowed.out << allowed.err;
    EXPECT_NE(allowed.err.find("3 of 9 probe x k rows ended in error"), std::string::npos) << allowed.err;
}

TEST_F(RunExitCodes, AnEndpointThatIsDownStillTripsFailFast) {
    questions(9);
    serve(script(json::array(), {{"fault", "http_503"}}));
    const Ran down = run("--max-consecutive-failures 2");
    EXPECT_EQ(down.code, 3) << down.out << down.err;
    EXPECT_NE(down.err.find("2 calls in a row to " + m_server->base_url() + " (model taker) failed"), std::string::npos)
        << down.err;
    EXPECT_NE(down.err.find("HTTP 503"), std::string::npos) << down.err;
}

}  // namespace
}  // namespace memfail

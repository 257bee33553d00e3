// SPDX-License-Identifier: MIT
// The exec: transport against real child processes: a well-behaved Python adapter, and the same
// adapter misbehaving (crashing, hanging, printing garbage, breaking the protocol). Every failure
// must be a clear error for that call, and the next call must work again after a restart.
#include "adapter_test_util.hpp"

#include <memfail/memory/adapter/adapter_system.hpp>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <sys/wait.h>
#include <thread>

namespace memfail::memory::adapter {
namespace {

using test::ok;
using fixture::connect;
using fixture::contains;
using fixture::k_adapter;
using fixture::tea_session;
using Clock = std::chrono::steady_clock;

// python3 -S skips site-packages (the fixture needs only the standard library): half the start-up.
std::string spec_for(const std::string& args, const std::string& extra = "") {
    return "exec:cmd=python3 -S " + k_adapter + (args.empty() ? "" : " " + args) +
           (extra.empty() ? "" : "," + extra);
}

// No child of this test process is left unreaped (each test runs its adapters to completion).
void expect_no_children() {
    int status = 0;
    EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
}

TEST(AdapterExec, RoundTripThroughTheRegistry) {
    {
        auto system = ok(make_memory_system(spec_for(""), {}));
        EXPECT_TRUE(system->capabilities().provenance);
        ok(system->store_conversation(tea_session()));
        const auto hits =
            ok(system->retrieve_memories("When do I drink tea?", {test::user("h", "hi")}, 1));
        ASSERT_EQ(hits.size(), 1u);
        EXPECT_EQ(hits[0].memory.sources, (std::vector<std::string>{"m1"}));
        EXPECT_EQ(hits[0].memory.created_at, "2026-03-01T09:00:00Z");
        EXPECT_GT(hits[0].score, 0);
        EXPECT_EQ(ok(system->all_memories()).size(), 3u);
        ok(system->reset());
        EXPECT_TRUE(ok(system->all_memories()).empty());
        EXPECT_EQ(system->generation(), 0u);
        EXPECT_TRUE(contains(system->spec(), "exec:cmd=python3"));
        const auto history = system->history("m-1");
        ASSERT_FALSE(history);
        EXPECT_EQ(history.error().kind, ErrorKind::unsupported);
    }
    expect_no_children();
}

TEST(AdapterExec, SplitsTheCommandLikeAShellWithoutOne) {
    EXPECT_EQ(connect(spec_for("--name 'my adapter'"))->system_name(), "my adapter");
    EXPECT_EQ(connect(spec_for(R"(--name "say \"hi\" \\ $HOME")"))->system_name(),
              R"(say "hi" \ $HOME)");
    EXPECT_EQ(connect(spec_for("--name a\\ b"))->system_name(), "a b");
    // A relative script path, resolved in cwd.
    EXPECT_EQ(connect("exec:cmd=python3 -S adapter.py --name here,cwd=" +
                      std::string(MEMFAIL_TEST_FIXTURES) + "/adapters")
                  ->system_name(),
              "here");
    const auto open_quote = make_transport(ok(Spec::parse("exec:cmd=python3 'x.py")));
    ASSERT_FALSE(open_quote);
    EXPECT_EQ(open_quote.error().kind, ErrorKind::invalid_input);
    EXPECT_TRUE(contains(open_quote.error().message, "unterminated single quote"));
}

TEST(AdapterExec, BadOptionsAreRefusedBeforeAnythingStarts) {
    for (const char* spec :
         {"exec", "exec:cmd=", "exec:cmd=  ", "exec:cmd=x,timeout=soon", "exec:cmd=x,timeout=0s",
          "exec:cmd=x,startup_timeout=5h", "exec:cmd=x,timout=3s"}) {
        const auto t = make_transport(ok(Spec::parse(spec)));
        ASSERT_FALSE(t) << spec;
        EXPECT_EQ(t.error().kind, ErrorKind::invalid_input) << spec;
    }
    EXPECT_TRUE(make_transport(ok(Spec::parse("exec:cmd=x,timeout=250ms,startup_timeout=2m"))));
    EXPECT_TRUE(make_transport(ok(Spec::parse("exec:cmd=x,timeout=1.5"))));
}

TEST(AdapterExec, AMissingCommandFailsClearly) {
    const auto system = make_memory_system("exec:cmd=/nonexistent/memfail-adapter --serve", {});
    ASSERT_FALSE(system);
    EXPECT_EQ(system.error().kind, ErrorKind::io);
    EXPECT_TRUE(contains(system.error().describe(), "exec:/nonexistent/memfail-adapter --serve"));
    EXPECT_TRUE(contains(system.error().message, "not found"));
}

// Runs `query` (a fault the adapter commits) and checks the error, the restart, and that the next
// call works on a fresh adapter that has lost what the old one held.
void expect_recovery(const std::string& query, ErrorKind kind, const std::string& message_part,
                     const std::string& extra = "") {
    SCOPED_TRACE(query);
    {
        auto system = connect(spec_for("--faults", extra));
        ok(system->store_conversation(tea_session()));
        const auto failed = system->retrieve_memories(query, {}, 3);
        ASSERT_FALSE(failed);
        EXPECT_EQ(failed.error().kind, kind);
        EXPECT_TRUE(contains(failed.error().message, message_part)) << failed.error().describe();
        EXPECT_TRUE(contains(failed.error().describe(), "exec:python3 -S " + k_adapter))
            << failed.error().describe();
        EXPECT_EQ(system->generation(), 1u);
        EXPECT_TRUE(ok(system->all_memories()).empty()); // a new process: the old memories are gone
        ok(system->store_conversation(tea_session()));
        EXPECT_EQ(ok(system->retrieve_memories("radiator", {}, 3)).size(), 1u);
        EXPECT_EQ(system->generation(), 1u);
    }
    expect_no_children();
}

TEST(AdapterExec, CrashMidCallIsReportedWithItsExitStatus) {
    expect_recovery("crash", ErrorKind::io, "exited with status 3 during retrieve_memories");
}

TEST(AdapterExec, CrashHalfwayThroughAnAnswer) {
    expect_recovery("partial", ErrorKind::io, "exited with status 5");
}

TEST(AdapterExec, DeathBySignalIsNamed) {
    expect_recovery("signal", ErrorKind::io, "killed by signal 9");
}

TEST(AdapterExec, HangIsStoppedAtTheTimeout) {
    const auto start = Clock::now();
    expect_recovery("hang", ErrorKind::timeout, "did not answer retrieve_memories within 300ms",
                    "timeout=300ms");
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
}

TEST(AdapterExec, GarbageOnStdoutIsAProtocolError) {
    expect_recovery("garbage", ErrorKind::protocol, "not JSON during retrieve_memories");
}

TEST(AdapterExec, WrongIdIsAProtocolError) {
    expect_recovery("wrong_id", ErrorKind::protocol, "with id ");
}

TEST(AdapterExec, AnswerWithoutResultOrErrorIsAProtocolError) {
    expect_recovery("neither", ErrorKind::protocol, "neither \"result\" nor \"error\"");
}

TEST(AdapterExec, ContentErrorsDoNotRestartTheAdapter) {
    auto system = connect(spec_for("--faults"));
    ok(system->store_conversation(tea_session()));
    const auto too_many = system->retrieve_memories("too_many", {}, 2);
    ASSERT_FALSE(too_many);
    EXPECT_EQ(too_many.error().kind, ErrorKind::protocol);
    EXPECT_TRUE(contains(too_many.error().describe(), "exec:python3"));
    EXPECT_TRUE(contains(too_many.error().message, "4 memories"));

    const auto not_found = system->retrieve_memories("error", {}, 2);
    ASSERT_FALSE(not_found);
    EXPECT_EQ(not_found.error().kind, ErrorKind::not_found);

    const auto not_object = system->retrieve_memories("not_object", {}, 2);
    ASSERT_FALSE(not_object);
    EXPECT_EQ(not_object.error().kind, ErrorKind::protocol);

    EXPECT_EQ(system->generation(), 0u);
    EXPECT_EQ(ok(system->all_memories()).size(), 3u); // the same process still holds them
}

TEST(AdapterExec, AnotherProtocolVersionIsRefused) {
    const auto system = make_memory_system(spec_for("--protocol 2"), {});
    ASSERT_FALSE(system);
    EXPECT_EQ(system.error().kind, ErrorKind::protocol);
    EXPECT_TRUE(contains(system.error().message, "speaks protocol 2; memfail speaks 1"))
        << system.error().describe();
    expect_no_children();
}

TEST(AdapterExec, StartupFailuresAreClearAndRetried) {
    auto transport =
        ok(make_transport(ok(Spec::parse(spec_for("--hello hang", "startup_timeout=300ms")))));
    const auto start = Clock::now();
    const auto hung = transport->call("all_memories", nlohmann::json::object());
    ASSERT_FALSE(hung);
    EXPECT_EQ(hung.error().kind, ErrorKind::timeout);
    EXPECT_TRUE(contains(hung.error().message, "hello within 300ms"));
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
    EXPECT_EQ(transport->restarts(), 0u); // it never held anything

    testing::internal::CaptureStderr();
    {
        auto crashing = ok(make_transport(ok(Spec::parse(spec_for("--hello crash")))));
        for (int attempt = 0; attempt < 2; ++attempt) { // each call tries a fresh start
            const auto crashed = crashing->call("reset", nlohmann::json::object());
            ASSERT_FALSE(crashed);
            EXPECT_TRUE(contains(crashed.error().message, "exited with status 4 during hello"));
        }
    }
    EXPECT_TRUE(
        contains(testing::internal::GetCapturedStderr(), "[adapter] cannot start: no database"));

    const auto garbage =
        ok(make_transport(ok(Spec::parse(spec_for("--hello garbage")))))->call("reset", {});
    ASSERT_FALSE(garbage);
    EXPECT_TRUE(contains(garbage.error().message, "Loading model weights"));
    expect_no_children();
}

TEST(AdapterExec, WritingToAnAdapterThatHasGoneIsAnErrorNotSigpipe) {
    auto transport = ok(make_transport(ok(Spec::parse(spec_for("--hello quit")))));
    ASSERT_TRUE(transport->call("hello", nlohmann::json{{"protocol", 1}}));
    std::this_thread::sleep_for(
        std::chrono::milliseconds(200)); // let it exit: the write then hits EPIPE
    data::Session big = tea_session();
    big.messages[0].content.assign(512 * 1024, 'x'); // more than a pipe holds, whatever the timing
    const auto failed =
        transport->call("store_conversation", nlohmann::json{{"session", to_json(big)}});
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().kind, ErrorKind::io);
    EXPECT_TRUE(contains(failed.error().message, "exited with status 0 during store_conversation"))
        << failed.error().describe();
    EXPECT_EQ(transport->restarts(), 1u);
}

TEST(AdapterExec, StderrIsForwardedWithAPrefix) {
    testing::internal::CaptureStderr();
    {
        auto system = connect(spec_for("--faults"));
        EXPECT_TRUE(ok(system->retrieve_memories("stderr", {}, 3)).empty());
        // More than a pipe holds, written before answering: the reader must keep draining it.
        EXPECT_TRUE(ok(system->retrieve_memories("stderr_flood", {}, 3)).empty());
        EXPECT_EQ(system->generation(), 0u);
    } // the adapter is shut down, so everything it wrote has been forwarded
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(contains(err, "[adapter] note from the adapter\n[adapter] second note\n"));
    std::size_t floods = 0;
    for (std::size_t at = err.find("[adapter] xxx"); at != std::string::npos;
         at = err.find("[adapter] xxx", at + 1))
        ++floods;
    EXPECT_EQ(floods, 3000u);
}

TEST(AdapterExec, RestartIsAnnouncedOnStderr) {
    testing::internal::CaptureStderr();
    {
        auto system = connect(spec_for("--faults"));
        EXPECT_FALSE(system->retrieve_memories("crash", {}, 3));
        ok(system->reset());
    }
    EXPECT_TRUE(contains(testing::internal::GetCapturedStderr(), "restarting the adapter"));
}

TEST(AdapterExec, LongAnswerLinesArriveWhole) {
    auto system = connect(spec_for("--faults"));
    const auto hits = ok(system->retrieve_memories("big", {}, 3));
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].memory.text.size(), 1'500'000u);
}

TEST(AdapterExec, ProvenanceOperationFillsMissingSources) {
    auto system = connect(spec_for("--provenance-op"));
    ok(system->store_conversation(tea_session()));
    const auto hits = ok(system->retrieve_memories("Miso radiator", {}, 2));
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].memory.sources, (std::vector<std::string>{"m3"}));
    const auto all = ok(system->all_memories());
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[1].sources, (std::vector<std::string>{"m2"}));
}

TEST(AdapterExec, AnAdapterThatIgnoresShutdownIsKilled) {
    const auto start = Clock::now();
    {
        auto system = connect(spec_for("--ignore-term"));
        ok(system->reset());
    }
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(4));
    expect_no_children();
}

} // namespace
} // namespace memfail::memory::adapter

// SPDX-License-Identifier: MIT
// The conformance battery: built-in systems pass it, and deliberately broken systems and transports
// fail exactly the checks that name their fault.
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <memfail/memory/adapter/conformance.hpp>
#include <memfail/memory/adapter/protocol.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory::adapter {
namespace {

using nlohmann::json;
using test::ok;

const std::vector<std::string> k_every_check = {
    "hello",
    "reset empties (start)",
    "store sessions",
    "round trip (k=3)",
    "best first",
    "k=1 respected",
    "k=2 respected",
    "stable ids: all_memories",
    "stable ids: retrieve",
    "sources echo message ids",
    "optional op: history",
    "optional op: state_as_of",
    "optional op: provenance",
    "optional op: answer",
    "idempotent store",
    "malformed: store without session",
    "malformed: k is not a number",
    "malformed: unknown op",
    "reset empties (end)",
};

std::set<std::string> names_with(const ConformanceReport& report, CheckStatus status) {
    std::set<std::string> out;
    for (const auto& c : report.checks)
        if (c.status == status) out.insert(c.name);
    return out;
}

std::string dump(const ConformanceReport& report) { return to_json(report).dump(2); }

ConformanceReport builtin(const std::string& spec) {
    return ok(run_conformance_builtin(ok(Spec::parse(spec)), SystemContext{}));
}

TEST(Conformance, EveryCheckIsReportedOnceInOrder) {
    const auto report = builtin("verbatim");
    std::vector<std::string> names;
    for (const auto& c : report.checks) names.push_back(c.name);
    EXPECT_EQ(names, k_every_check);
}

TEST(Conformance, VerbatimPassesWithEveryRetriever) {
    for (const std::string spec : {"verbatim", "verbatim:retriever=hashed", "verbatim:chunk=sentence"}) {
        const auto report = builtin(spec);
        EXPECT_TRUE(report.passed()) << spec << "\n" << dump(report);
        // Verbatim claims provenance and idempotent storage, so those are checked, not skipped.
        EXPECT_EQ(report.find("sources echo message ids")->status, CheckStatus::pass) << spec;
        EXPECT_EQ(report.find("idempotent store")->status, CheckStatus::pass) << spec;
        // It offers no history: the dispatcher must say unsupported, which passes.
        EXPECT_EQ(report.find("optional op: history")->status, CheckStatus::pass) << spec;
        EXPECT_FALSE(report.system.empty());
        EXPECT_TRUE(report.capabilities.is_object());
    }
}

TEST(Conformance, NoneSystemFailsStorageAndRoundTripOnly) {
    // "none" forgets everything: a legal system, but one that cannot keep a fact.
    const auto report = builtin("none");
    EXPECT_FALSE(report.passed());
    EXPECT_EQ(names_with(report, CheckStatus::fail), (std::set<std::string>{"store sessions", "round trip (k=3)"}))
        << dump(report);
    EXPECT_EQ(report.find("sources echo message ids")->status, CheckStatus::skip);
}

TEST(Conformance, UnknownBuiltinIsAnError) {
    auto r = run_conformance_builtin(ok(Spec::parse("verbatm")), SystemContext{});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_input);
}

// --- A system broken on purpose --------------------------------------------------------------------

enum class Fault { unstable_ids, reset_keeps, foreign_sources, claims_history };

// Verbatim underneath, with one planted fault. (Faults the dispatcher itself prevents -- more than k
// memories, an optional op answered without its capability -- are planted in the transport below.)
class BrokenSystem final : public MemorySystem {
public:
    explicit BrokenSystem(Fault fault) : m_fault(fault), m_inner(ok(make_memory_system("verbatim", SystemContext{}))) {}

    std::string spec() const override { return "broken"; }
    Capabilities capabilities() const override {
        auto caps = m_inner->capabilities();
        if (m_fault == Fault::claims_history) caps.history = true;
        return caps;
    }
    Result<void> store_conversation(const data::Session& session) override {
        return m_inner->store_conversation(session);
    }
    Result<std::vector<Hit>> retrieve_memories(std::string_view query, const std::vector<data::Message>& history,
                                               int k) override {
        MF_TRY_ASSIGN(auto hits, m_inner->retrieve_memories(query, history, k));
        for (auto& h : hits) mangle(h.memory);
        ++m_calls;
        return hits;
    }
    Result<std::vector<Memory>> all_memories() override {
        MF_TRY_ASSIGN(auto all, m_inner->all_memories());
        for (auto& m : all) mangle(m);
        ++m_calls;
        return all;
    }
    Result<void> reset() override {
        if (m_fault == Fault::reset_keeps) return {};
        return m_inner->reset();
    }

private:
    void mangle(Memory& m) const {
        if (m_fault == Fault::unstable_ids) m.id += "-v" + std::to_string(m_calls);
        if (m_fault == Fault::foreign_sources) m.sources = {"msg-never-stored"};
    }

    Fault m_fault;
    std::unique_ptr<MemorySystem> m_inner;
    int m_calls = 0;
};

std::set<std::string> failures_of(Fault fault) {
    auto transport = make_local_transport(std::make_unique<BrokenSystem>(fault));
    return names_with(run_conformance(*transport), CheckStatus::fail);
}

TEST(Conformance, UnstableIdsFailTheStabilityChecks) {
    EXPECT_EQ(failures_of(Fault::unstable_ids),
              (std::set<std::string>{"stable ids: all_memories", "stable ids: retrieve"}));
}

TEST(Conformance, ResetThatKeepsMemoriesFailsTheFinalReset) {
    // The battery starts on a fresh (empty) system, so only the closing reset can show the fault.
    EXPECT_EQ(failures_of(Fault::reset_keeps), (std::set<std::string>{"reset empties (end)"}));
}

TEST(Conformance, SourcesThatWereNeverStoredFailTheSourcesCheck) {
    EXPECT_EQ(failures_of(Fault::foreign_sources), (std::set<std::string>{"sources echo message ids"}));
}

TEST(Conformance, ClaimedOptionalOpThatAnswersUnsupportedFails) {
    EXPECT_EQ(failures_of(Fault::claims_history), (std::set<std::string>{"optional op: history"}));
}

// --- Transports broken on purpose ------------------------------------------------------------------

// Forwards to a local verbatim system, letting a test rewrite any answer.
class TamperingTransport final : public Transport {
public:
    // Returns the answer to give instead, or nullopt to pass the call through; `inner` answers honestly.
    using Hook = std::function<std::optional<Result<json>>(std::string_view op, const json& params, Transport& inner)>;
    explicit TamperingTransport(Hook hook)
        : m_inner(make_local_transport(ok(make_memory_system("verbatim", SystemContext{})))), m_hook(std::move(hook)) {}

    Result<json> call(std::string_view op, const json& params) override {
        if (auto answer = m_hook(op, params, *m_inner)) {
            if (!*answer && answer->error().kind == ErrorKind::protocol) ++m_restarts;  // as exec would
            return std::move(*answer);
        }
        return m_inner->call(op, params);
    }
    std::uint64_t restarts() const override { return m_restarts; }
    std::string describe() const override { return "tampering"; }

private:
    std::unique_ptr<Transport> m_inner;
    Hook m_hook;
    std::uint64_t m_restarts = 0;
};

TEST(Conformance, WrongProtocolVersionFailsHelloAndSkipsTheRest) {
    TamperingTransport transport([](std::string_view op, const json&, Transport&) -> std::optional<Result<json>> {
        if (op == "hello") return Result<json>(json{{"protocol", 2}, {"system", "future"}, {"capabilities", json::object()}});
        return std::nullopt;
    });
    const auto report = run_conformance(transport);
    EXPECT_FALSE(report.passed());
    EXPECT_EQ(names_with(report, CheckStatus::fail), (std::set<std::string>{"hello"}));
    EXPECT_EQ(report.count(CheckStatus::skip), k_every_check.size() - 1);
    EXPECT_NE(report.find("hello")->detail.find("protocol 2"), std::string::npos) << report.find("hello")->detail;
}

TEST(Conformance, CrashOnUnknownOpIsNotAStructuredError) {
    TamperingTransport transport([](std::string_view op, const json&, Transport&) -> std::optional<Result<json>> {
        if (op == "conformance_no_such_op")
            return Result<json>(make_error(ErrorKind::protocol, "the adapter printed a line that is not JSON"));
        return std::nullopt;
    });
    const auto report = run_conformance(transport);
    EXPECT_EQ(names_with(report, CheckStatus::fail), (std::set<std::string>{"malformed: unknown op"}));
    EXPECT_NE(report.find("malformed: unknown op")->detail.find("not a structured error"), std::string::npos);
}

TEST(Conformance, AcceptingMalformedRequestsFails) {
    TamperingTransport transport([](std::string_view op, const json& params, Transport&) -> std::optional<Result<json>> {
        if (op == "store_conversation" && !params.contains("session")) return Result<json>(json::object());
        // A string k answered with a generic error instead of invalid_request.
        if (op == "retrieve_memories" && params["k"].is_string())
            return Result<json>(make_error(ErrorKind::internal, "TypeError: bad k"));
        return std::nullopt;
    });
    const auto report = run_conformance(transport);
    EXPECT_EQ(names_with(report, CheckStatus::fail),
              (std::set<std::string>{"malformed: store without session", "malformed: k is not a number"}));
    EXPECT_NE(report.find("malformed: k is not a number")->detail.find("expected invalid_request"), std::string::npos);
}

TEST(Conformance, MoreThanKFailsTheKChecksOnly) {
    // Answers k+2 memories (padded from all_memories): the k checks name it; the round trip, which
    // looks at the first 3 only, does not fail for it.
    TamperingTransport transport([](std::string_view op, const json& params, Transport& inner) -> std::optional<Result<json>> {
        if (op != "retrieve_memories" || !params["k"].is_number_integer()) return std::nullopt;
        const auto k = params["k"].get<std::size_t>();
        auto answer = inner.call(op, params);
        auto all = inner.call("all_memories", json::object());
        if (!answer || !all) return std::nullopt;
        json out = (*answer)["memories"];
        for (const json& m : (*all)["memories"])
            if (out.size() < k + 2) out.push_back(m);
        return Result<json>(json{{"memories", out}});
    });
    const auto report = run_conformance(transport);
    EXPECT_EQ(names_with(report, CheckStatus::fail), (std::set<std::string>{"k=1 respected", "k=2 respected"}))
        << dump(report);
    EXPECT_EQ(report.find("k=1 respected")->detail, "asked for 1, got 3");
}

TEST(Conformance, UnclaimedOptionalOpThatWorksFails) {
    // Answers state_as_of although hello did not claim as_of: memfail would never call it.
    TamperingTransport transport([](std::string_view op, const json&, Transport&) -> std::optional<Result<json>> {
        if (op == "state_as_of") return Result<json>(json{{"memories", json::array()}});
        return std::nullopt;
    });
    const auto report = run_conformance(transport);
    EXPECT_EQ(names_with(report, CheckStatus::fail), (std::set<std::string>{"optional op: state_as_of"}));
}

TEST(Conformance, StateAsOfThatLeaksLaterSessionsFails) {
    // Claims as_of, and answers with everything, including what was stored a week after the timestamp.
    TamperingTransport transport([](std::string_view op, const json& params, Transport& inner) -> std::optional<Result<json>> {
        if (op == "hello") {
            auto answer = inner.call(op, params);
            (*answer)["capabilities"]["as_of"] = true;
            return answer;
        }
        if (op == "state_as_of") return inner.call("all_memories", json::object());
        return std::nullopt;
    });
    const auto report = run_conformance(transport);
    EXPECT_EQ(names_with(report, CheckStatus::fail), (std::set<std::string>{"optional op: state_as_of"}));
    EXPECT_NE(report.find("optional op: state_as_of")->detail.find("stored a week later"), std::string::npos);
}

// Claims the answer operation (hello gains "answer": true) and answers it with `reply`.
TamperingTransport answering(Result<json> reply, bool claim = true) {
    return TamperingTransport([reply = std::move(reply), claim](std::string_view op, const json& params,
                                                               Transport& inner) -> std::optional<Result<json>> {
        if (op == "hello" && claim) {
            auto answer = inner.call(op, params);
            (*answer)["capabilities"]["answer"] = true;
            return answer;
        }
        if (op == "answer") return reply;
        return std::nullopt;
    });
}

TEST(Conformance, AnswerIsUnsupportedForBuiltIns) {
    const auto report = builtin("verbatim");
    EXPECT_EQ(report.capabilities["answer"], false);
    const Check* check = report.find("optional op: answer");
    ASSERT_NE(check, nullptr);
    EXPECT_EQ(check->status, CheckStatus::pass) << check->detail;
    EXPECT_NE(check->detail.find("unsupported"), std::string::npos) << check->detail;
}

TEST(Conformance, ClaimedAnswerOfTheRightShapePasses) {
    // Sources may name the stored messages and the conversation the question came with (conf-h1).
    for (const json& reply : {json{{"answer", "Lisbon."}, {"confidence", 0.7}, {"sources", {"conf-m1", "conf-h1"}}},
                              json{{"answer", "I do not know."}}}) {
        auto transport = answering(Result<json>(reply));
        const auto report = run_conformance(transport);
        EXPECT_TRUE(report.passed()) << reply.dump() << "\n" << dump(report);
        EXPECT_EQ(report.find("optional op: answer")->status, CheckStatus::pass) << reply.dump();
    }
}

TEST(Conformance, ClaimedAnswerOfTheWrongShapeFails) {
    const std::pair<json, std::string> cases[] = {
        {json{{"text", "Lisbon."}}, "answer.answer: required field is missing"},
        {json{{"answer", 7}}, "answer.answer: expected a string"},
        {json{{"answer", "Lisbon."}, {"confidence", 1.5}}, "answer.confidence: expected a number from 0 to 1, got 1.5"},
        {json{{"answer", "Lisbon."}, {"confidence", "sure"}}, "answer.confidence: expected a number from 0 to 1"},
        {json{{"answer", "Lisbon."}, {"sources", {"conf-m1", 3}}}, "answer.sources[1]: expected a string"},
        {json{{"answer", "Lisbon."}, {"sources", {"msg-never-given"}}}, "source 'msg-never-given' is not the id of a message"},
    };
    for (const auto& [reply, detail] : cases) {
        auto transport = answering(Result<json>(reply));
        const auto report = run_conformance(transport);
        EXPECT_EQ(names_with(report, CheckStatus::fail), (std::set<std::string>{"optional op: answer"})) << reply.dump();
        EXPECT_NE(report.find("optional op: answer")->detail.find(detail), std::string::npos)
            << report.find("optional op: answer")->detail;
    }
}

TEST(Conformance, ClaimedAnswerThatAnswersUnsupportedFails) {
    auto transport = answering(Result<json>(make_error(ErrorKind::unsupported, "no agent here")));
    const auto report = run_conformance(transport);
    EXPECT_EQ(names_with(report, CheckStatus::fail), (std::set<std::string>{"optional op: answer"}));
    EXPECT_NE(report.find("optional op: answer")->detail.find("capabilities.answer is true"), std::string::npos);
}

TEST(Conformance, UnclaimedAnswerMustSayUnsupported) {
    // Answers without announcing it: memfail would never ask.
    auto works = answering(Result<json>(json{{"answer", "Lisbon."}}), /*claim=*/false);
    auto report = run_conformance(works);
    EXPECT_EQ(names_with(report, CheckStatus::fail), (std::set<std::string>{"optional op: answer"}));
    EXPECT_NE(report.find("optional op: answer")->detail.find("announce it"), std::string::npos);
    // Refuses with another kind of error.
    auto wrong_kind = answering(Result<json>(make_error(ErrorKind::internal, "KeyError: 'answer'")), /*claim=*/false);
    report = run_conformance(wrong_kind);
    EXPECT_EQ(names_with(report, CheckStatus::fail), (std::set<std::string>{"optional op: answer"}));
    EXPECT_NE(report.find("optional op: answer")->detail.find("must answer the kind unsupported; got internal"),
              std::string::npos)
        << report.find("optional op: answer")->detail;
}

TEST(Conformance, JsonReportCarriesEveryCheck) {
    const auto report = builtin("verbatim");
    const json j = to_json(report);
    EXPECT_EQ(j["passed"], true);
    ASSERT_EQ(j["checks"].size(), k_every_check.size());
    EXPECT_EQ(j["checks"][0]["name"], "hello");
    EXPECT_EQ(j["checks"][0]["status"], "pass");
}

}  // namespace
}  // namespace memfail::memory::adapter

// SPDX-License-Identifier: MIT
// The Python adapter example users copy (examples/adapters/python) passes the conformance battery
// over the real exec: transport.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include <memfail/memory/adapter/adapter_system.hpp>
#include <memfail/memory/adapter/conformance.hpp>

#include "memory_test_util.hpp"

namespace memfail::memory::adapter {
namespace {

using test::ok;

std::filesystem::path example_adapter() {
    return std::filesystem::weakly_canonical(std::filesystem::path(MEMFAIL_TEST_FIXTURES) / ".." / ".." / "examples" /
                                             "adapters" / "python" / "memfail_adapter.py");
}

bool have_python3() { return std::system("python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null") == 0; }

std::unique_ptr<Transport> python_transport(const std::string& args = "") {
    const auto script = example_adapter();
    if (!std::filesystem::exists(script)) throw std::runtime_error("missing " + script.string());
    // Spec values cannot hold ','; quoting keeps a path with spaces one word.
    return ok(make_transport(
        ok(Spec::parse("exec:cmd=python3 \"" + script.string() + "\"" + (args.empty() ? "" : " " + args) + ",timeout=20s"))));
}

TEST(ConformancePython, ExampleAdapterPassesEveryCheck) {
    if (!have_python3()) GTEST_SKIP() << "python3 >= 3.9 is not installed";
    auto transport = python_transport();
    const auto report = run_conformance(*transport);
    EXPECT_TRUE(report.passed()) << to_json(report).dump(2);
    EXPECT_EQ(report.system, "python-example");
    // The example implements state_as_of and provenance, answers unsupported for history, and
    // returns scores: every check applies, none is skipped.
    EXPECT_EQ(report.count(CheckStatus::skip), 0u) << to_json(report).dump(2);
    EXPECT_EQ(report.find("optional op: state_as_of")->status, CheckStatus::pass);
    EXPECT_EQ(report.find("optional op: provenance")->status, CheckStatus::pass);
    // Its answer() is a placeholder, not announced by default: the operation answers unsupported.
    EXPECT_EQ(report.capabilities["answer"], false);
    EXPECT_EQ(report.find("optional op: answer")->status, CheckStatus::pass);
    // Malformed requests did not kill the process.
    EXPECT_EQ(transport->restarts(), 0u);
}

TEST(ConformancePython, ExampleAdapterWithAnswersPassesEveryCheck) {
    if (!have_python3()) GTEST_SKIP() << "python3 >= 3.9 is not installed";
    auto transport = python_transport("--answers");
    const auto report = run_conformance(*transport);
    EXPECT_TRUE(report.passed()) << to_json(report).dump(2);
    EXPECT_EQ(report.capabilities["answer"], true);
    EXPECT_EQ(report.find("optional op: answer")->status, CheckStatus::pass);
    EXPECT_NE(report.find("optional op: answer")->detail.find("works"), std::string::npos);

    auto system = ok(AdapterSystem::connect(python_transport("--answers"), "exec:python-example"));
    EXPECT_TRUE(system->capabilities().answers);
    ok(system->store_conversation(test::session(
        "s1", "2026-03-01T09:00:00Z",
        {test::user("u1", "Héloïse waters the ferns every Sunday morning."), test::assistant("a1", "Lovely routine.")})));
    const SystemAnswer answer = ok(system->answer("When does Héloïse water the ferns?", {test::user("h1", "Hi")}));
    EXPECT_EQ(answer.text, "Héloïse waters the ferns every Sunday morning.");
    EXPECT_EQ(answer.confidence, 0.5);
    EXPECT_EQ(answer.sources, std::vector<std::string>{"u1"});
}

TEST(ConformancePython, ExampleAdapterWorksAsAMemorySystem) {
    if (!have_python3()) GTEST_SKIP() << "python3 >= 3.9 is not installed";
    auto system = ok(AdapterSystem::connect(python_transport(), "exec:python-example"));
    EXPECT_TRUE(system->capabilities().provenance);
    ok(system->store_conversation(test::session(
        "s1", "2026-03-01T09:00:00Z",
        {test::user("u1", "Héloïse waters the ferns every Sunday morning."), test::assistant("a1", "Lovely routine.")})));
    const auto hits = ok(system->retrieve_memories("When does Héloïse water the ferns?", {}, 1));
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].memory.sources, std::vector<std::string>{"u1"});
    EXPECT_EQ(hits[0].memory.text, "Héloïse waters the ferns every Sunday morning.");  // UTF-8 survives the trip
    ok(system->reset());
    EXPECT_TRUE(ok(system->all_memories()).empty());
}

}  // namespace
}  // namespace memfail::memory::adapter

// SPDX-License-Identifier: MIT
// What the adapter tests share: the fixture adapter (tests/fixtures/adapters/adapter.py), a
// connection to an adapter from a spec, and a small session to store in it.
#pragma once
#include "memory_test_util.hpp"

#include <memfail/memory/adapter/adapter_system.hpp>

#include <memory>
#include <string>

namespace memfail::memory::adapter::fixture {

using memory::test::ok;

inline const std::string k_adapter = std::string(MEMFAIL_TEST_FIXTURES) + "/adapters/adapter.py";

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

inline data::Session tea_session() {
    return memory::test::session("s1", "2026-03-01T09:00:00Z",
                                 {memory::test::user("m1", "I only drink tea after dinner."),
                                  memory::test::assistant("m2", "Noted: tea, but only in the evening."),
                                  memory::test::user("m3", "My cat Miso sleeps on the radiator.")});
}

inline std::unique_ptr<AdapterSystem> connect(const std::string& spec) {
    const Spec parsed = ok(Spec::parse(spec));
    return ok(AdapterSystem::connect(ok(make_transport(parsed)), parsed.to_string()));
}

}  // namespace memfail::memory::adapter::fixture

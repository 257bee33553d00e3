// SPDX-License-Identifier: MIT
// `memfail conformance`: a fixed battery of protocol checks (docs/ADAPTERS.md, version 1) run against
// any adapter through a Transport, so it can also send requests a MemorySystem never would
// (missing fields, wrong types, unknown operations).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/core/spec.hpp>
#include <memfail/memory/adapter/protocol.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::memory::adapter {

enum class CheckStatus { pass, fail, skip };
// "pass", "fail", "skip".
const char* check_status_name(CheckStatus status);

struct Check {
    std::string name;    // stable, e.g. "round trip", "k=1 respected"; tests and CI refer to it
    CheckStatus status = CheckStatus::skip;
    std::string detail;  // what was seen, why it failed, or why it was skipped
};

struct ConformanceReport {
    std::string target;           // transport->describe()
    std::string system;           // the name `hello` answered; empty when hello failed
    nlohmann::json capabilities;  // as `hello` answered them (null when hello failed)
    std::vector<Check> checks;    // in the order they ran

    // True when no check failed (skips are fine).
    bool passed() const;
    std::size_t count(CheckStatus status) const;
    const Check* find(const std::string& name) const;
};

// Runs every check, in order, against the adapter behind `transport`. The battery resets the
// system at its start and at its end: never point it at a store whose contents you want to keep.
// Never fails as a whole: a transport failure fails the check it happened in, and when `hello`
// fails the remaining checks are skipped.
ConformanceReport run_conformance(Transport& transport);

// The same battery for a built-in system ("verbatim:retriever=hashed"), answered in-process through
// make_local_transport(). Errors: the system could not be created (unknown name, bad option, a
// model it needs is not configured).
Result<ConformanceReport> run_conformance_builtin(const Spec& spec, const SystemContext& context);

// {"target", "system", "capabilities", "passed", "checks": [{"name", "status", "detail"}]}
nlohmann::json to_json(const ConformanceReport& report);

}  // namespace memfail::memory::adapter

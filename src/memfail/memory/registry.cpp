// SPDX-License-Identifier: MIT
// The built-in memory systems by name: spec strings in, systems out.
#include <memfail/memory/memory_system.hpp>

#include <array>

#include <memfail/core/text.hpp>
#include <memfail/memory/adapter/adapter_system.hpp>
#include <memfail/memory/builtin/facts.hpp>
#include <memfail/memory/builtin/graph.hpp>
#include <memfail/memory/builtin/ledger.hpp>
#include <memfail/memory/builtin/mixture.hpp>
#include <memfail/memory/builtin/none.hpp>
#include <memfail/memory/builtin/notes.hpp>
#include <memfail/memory/builtin/oracle.hpp>
#include <memfail/memory/builtin/verbatim.hpp>

namespace memfail::memory {

namespace {

struct Entry {
    const char* name;
    Result<std::unique_ptr<MemorySystem>> (*create)(const Spec&, const SystemContext&);
    SystemInfo (*info)();
};

// Listed in the order `memfail ls systems` shows them.
constexpr std::array<Entry, 10> k_systems = {{
    {"verbatim", &VerbatimSystem::create, &VerbatimSystem::info},
    {"facts", &FactsSystem::create, &FactsSystem::info},
    {"notes", &NotesSystem::create, &NotesSystem::info},
    {"graph", &GraphSystem::create, &GraphSystem::info},
    {"mixture", &MixtureSystem::create, &MixtureSystem::info},
    {"none", &NoneSystem::create, &NoneSystem::info},
    {"oracle", &OracleSystem::create, &OracleSystem::info},
    // The write-integrity suite's reference: a bi-temporal fact ledger (docs/SYSTEMS.md).
    {"ledger", &LedgerSystem::create, &LedgerSystem::info},
    // Outside systems through the adapter protocol (docs/ADAPTERS.md).
    {"exec", &adapter::make_adapter_system, &adapter::exec_system_info},
    {"http", &adapter::make_adapter_system, &adapter::http_system_info},
}};

}  // namespace

Result<std::unique_ptr<MemorySystem>> make_memory_system(std::string_view spec,
                                                         const SystemContext& context) {
    MF_TRY_ASSIGN(const Spec parsed, Spec::parse(spec));
    return make_memory_system(parsed, context);
}

Result<std::unique_ptr<MemorySystem>> make_memory_system(const Spec& spec, const SystemContext& context) {
    std::vector<std::string> names;
    for (const Entry& entry : k_systems) {
        if (spec.name == entry.name) return entry.create(spec, context);
        names.emplace_back(entry.name);
    }
    const std::string hint = did_you_mean(spec.name, names);
    return make_error(ErrorKind::invalid_input,
                      "unknown memory system '" + spec.name + "'" +
                          (hint.empty() ? "" : " (" + hint + ")") +
                          "; systems: " + text::join(names, ", "));
}

std::vector<SystemInfo> list_memory_systems() {
    std::vector<SystemInfo> out;
    for (const Entry& entry : k_systems) out.push_back(entry.info());
    return out;
}

}  // namespace memfail::memory

// SPDX-License-Identifier: MIT
// The mixture memory system, the direction the MemFail paper proposes: each incoming unit (a
// message) goes to the store whose architecture keeps its kind best — conditional and causal
// statements to a graph, long descriptive text to a store that keeps it whole, short preferences to
// a fact store — and retrieval asks every substore and fuses their rankings by reciprocal rank.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <memfail/memory/memory_system.hpp>

namespace memfail::memory {

// The kind of unit a message is, by rules (docs/SYSTEMS.md lists them).
enum class UnitKind { conditional, long_text, preference, other };
const char* unit_kind_name(UnitKind kind);
UnitKind classify_unit(std::string_view text, int long_words);

struct MixtureOptions {
    std::map<UnitKind, std::string> route = {{UnitKind::conditional, "graph"},
                                             {UnitKind::long_text, "verbatim"},
                                             {UnitKind::preference, "facts"},
                                             {UnitKind::other, "verbatim"}};
    int long_words = 60;
    bool llm_router = false;  // router=llm: the system model names each message's kind
};

class MixtureSystem final : public MemorySystem {
public:
    static Result<std::unique_ptr<MemorySystem>> create(const Spec& spec, const SystemContext& context);
    static SystemInfo info();

    std::string spec() const override;
    Capabilities capabilities() const override;
    Result<void> store_conversation(const data::Session& session) override;
    // Every substore's top k, fused by reciprocal rank (constant 60), cut to k.
    Result<std::vector<Hit>> retrieve_memories(std::string_view query, const std::vector<data::Message>& history,
                                               int k) override;
    // Every substore's memories; ids are prefixed with the substore's name ("facts/fact-3").
    Result<std::vector<Memory>> all_memories() override;
    Result<void> reset() override;

private:
    MixtureSystem(MixtureOptions options, SystemServices services,
                  std::map<std::string, std::unique_ptr<MemorySystem>> stores)
        : m_options(std::move(options)), m_services(std::move(services)), m_stores(std::move(stores)) {}

    // Each message's kind: by the rules, or by the system model with the rules filling any message
    // the model left out or numbered wrongly.
    Result<std::vector<UnitKind>> classify(const data::Session& session);

    MixtureOptions m_options;
    SystemServices m_services;
    std::map<std::string, std::unique_ptr<MemorySystem>> m_stores;  // by system name
};

}  // namespace memfail::memory

// SPDX-License-Identifier: MIT
// none: the memory-less floor. It stores nothing, so every answer must come from the question alone.
#pragma once
#include <memory>

#include <memfail/memory/memory_system.hpp>

namespace memfail::memory {

class NoneSystem final : public MemorySystem {
public:
    static Result<std::unique_ptr<MemorySystem>> create(const Spec& spec, const SystemContext& context);
    static SystemInfo info();

    std::string spec() const override { return "none"; }
    // Provenance is reported truthfully: there are no memories, hence no sources to hide.
    Capabilities capabilities() const override;
    Result<void> store_conversation(const data::Session&) override { return {}; }
    Result<std::vector<Hit>> retrieve_memories(std::string_view, const std::vector<data::Message>&,
                                               int) override {
        return std::vector<Hit>{};
    }
    Result<std::vector<Memory>> all_memories() override { return std::vector<Memory>{}; }
    Result<void> reset() override { return {}; }
};

}  // namespace memfail::memory

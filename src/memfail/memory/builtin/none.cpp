// SPDX-License-Identifier: MIT
// The none memory system.
#include <memfail/memory/builtin/none.hpp>

namespace memfail::memory {

Result<std::unique_ptr<MemorySystem>> NoneSystem::create(const Spec& spec, const SystemContext&) {
    MF_TRY(spec.check_keys({}));
    return std::unique_ptr<MemorySystem>(new NoneSystem());
}

SystemInfo NoneSystem::info() {
    return {"none", "Remembers nothing: the floor every real system should beat", {}};
}

Capabilities NoneSystem::capabilities() const {
    Capabilities caps;
    caps.provenance = true;
    caps.idempotent_store = true;
    return caps;
}

}  // namespace memfail::memory

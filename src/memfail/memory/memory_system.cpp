// SPDX-License-Identifier: MIT
// Default answers of the optional memory-system operations.
#include <memfail/memory/memory_system.hpp>

namespace memfail::memory {

Result<std::vector<MemoryEvent>> MemorySystem::history(std::string_view) {
    return make_error(ErrorKind::unsupported, "history is not supported by " + spec());
}

Result<std::vector<Memory>> MemorySystem::state_as_of(std::string_view) {
    return make_error(ErrorKind::unsupported, "state_as_of is not supported by " + spec());
}

Result<SystemAnswer> MemorySystem::answer(std::string_view, const std::vector<data::Message>&) {
    return make_error(ErrorKind::unsupported, "answer is not supported by " + spec());
}

}  // namespace memfail::memory

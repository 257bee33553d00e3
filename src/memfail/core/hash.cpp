// SPDX-License-Identifier: MIT
// xxHash wrappers.
#include <memfail/core/hash.hpp>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <random>

namespace memfail {
namespace {
std::string to_hex(XXH128_hash_t h) {
    char buffer[33];
    std::snprintf(buffer, sizeof buffer, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                  static_cast<unsigned long long>(h.low64));
    return buffer;
}
}  // namespace

std::string content_hash(std::string_view bytes) {
    return to_hex(XXH3_128bits(bytes.data(), bytes.size()));
}

std::uint64_t hash64(std::string_view bytes, std::uint64_t seed) {
    return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

ContentHasher::ContentHasher() : m_state(XXH3_createState()) {
    XXH3_128bits_reset(static_cast<XXH3_state_t*>(m_state));
}
ContentHasher::~ContentHasher() { XXH3_freeState(static_cast<XXH3_state_t*>(m_state)); }
void ContentHasher::update(std::string_view bytes) {
    XXH3_128bits_update(static_cast<XXH3_state_t*>(m_state), bytes.data(), bytes.size());
}
std::string ContentHasher::hex_digest() const {
    return to_hex(XXH3_128bits_digest(static_cast<XXH3_state_t*>(m_state)));
}

std::string random_token() {
    std::random_device device;
    std::mt19937_64 mix((static_cast<std::uint64_t>(device()) << 32) ^ device() ^
                        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
    char buffer[33];
    std::snprintf(buffer, sizeof buffer, "%016llx%016llx", static_cast<unsigned long long>(mix()),
                  static_cast<unsigned long long>(mix()));
    return buffer;
}

}  // namespace memfail

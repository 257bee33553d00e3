// SPDX-License-Identifier: MIT
// Content hashing (xxHash3-128): dataset hashes, cache keys, stable ids.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace memfail {

// 32 lower-case hex digits of the XXH3-128 hash of `bytes`.
std::string content_hash(std::string_view bytes);

// 64-bit XXH3 of `bytes` with `seed`: for feature hashing and MinHash, not for identity.
std::uint64_t hash64(std::string_view bytes, std::uint64_t seed = 0);

// 128 random bits as 32 hex characters, different in every call: names one process (who paid for a
// cached reply, which process recorded a call). Never reproducible, so never in anything hashed.
std::string random_token();

// Incremental form of content_hash for large inputs.
class ContentHasher {
public:
    ContentHasher();
    ~ContentHasher();
    ContentHasher(const ContentHasher&) = delete;
    ContentHasher& operator=(const ContentHasher&) = delete;
    void update(std::string_view bytes);
    std::string hex_digest() const;

private:
    void* m_state;
};

}  // namespace memfail

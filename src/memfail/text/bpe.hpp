// SPDX-License-Identifier: MIT
// Private to memfail_text: the rank table and the byte-pair merge, exposed here so tests can check
// the two merge strategies against each other.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace memfail::text::detail {

inline constexpr std::uint32_t k_no_rank = std::numeric_limits<std::uint32_t>::max();

// Byte string -> rank, open addressing. Keys up to 8 bytes (nearly every lookup BPE makes) are
// stored packed in the slot itself, so a lookup touches one cache line and compares one integer;
// longer keys live in a byte arena behind a 16-bit hash tag. Lookups take a string_view and never
// allocate.
class RankTable {
public:
    // Sizes the table for `count` entries and `arena_bytes` bytes of long keys (hints only).
    void reserve(std::size_t count, std::size_t arena_bytes);
    // False when `bytes` is already present (the rank file is then malformed).
    bool insert(std::string_view bytes, std::uint32_t rank);

    std::uint32_t find(std::string_view bytes) const {
        const std::size_t n = bytes.size();
        if (n == 2) return m_pairs[pair_index(bytes[0], bytes[1])];
        if (n == 0 || n > m_max_length || m_slots.empty()) return k_no_rank;
        return find_hashed(bytes, hash_of(bytes));
    }
    std::size_t size() const { return m_count; }
    std::size_t max_length() const { return m_max_length; }

    // Builds the pair index the merge runs on; call once after the last insert (every single byte
    // must be a token by then). For every token and every split of it into two tokens, the index
    // maps (left rank, right rank) to the token's rank. Since a part during the merge is always a
    // token and a rank is its id, the rank of joining two parts is then an integer-keyed probe
    // instead of a hash over their bytes, which matters when parts grow past 8 bytes (CJK, Thai).
    void index_pairs();
    bool pairs_indexed() const { return !m_pair_slots.empty(); }
    std::uint32_t byte_rank(char b) const { return m_bytes[static_cast<unsigned char>(b)]; }
    std::uint32_t byte_pair_rank(char a, char b) const { return m_pairs[pair_index(a, b)]; }
    std::uint32_t pair_rank(std::uint32_t left, std::uint32_t right) const {
        const std::uint64_t key = (std::uint64_t{left} << 32) | right;
        for (std::size_t i = mix(key) & m_pair_mask;; i = (i + 1) & m_pair_mask) {
            const PairSlot& slot = m_pair_slots[i];
            if (slot.key == key) return slot.rank;
            if (slot.rank == k_no_rank) return k_no_rank;
        }
    }
    std::size_t pair_count() const { return m_pair_count; }

private:
    struct Slot {
        std::uint64_t key = 0;       // packed bytes (length <= 8) or arena offset
        std::uint32_t rank = k_no_rank;  // k_no_rank marks an empty slot
        std::uint16_t length = 0;
        std::uint16_t tag = 0;       // long keys only
    };

    static std::size_t pair_index(char a, char b) {
        return (std::size_t{static_cast<unsigned char>(a)} << 8) | static_cast<unsigned char>(b);
    }
    // The n (1..8) bytes as a little-endian integer, without a byte loop: two overlapping loads
    // whose shared bytes are equal, so OR-ing them is exact.
    static std::uint64_t pack(const char* p, std::size_t n) {
        const auto byte = [p](std::size_t i) { return std::uint64_t{static_cast<unsigned char>(p[i])}; };
        if (n >= 4) {
            std::uint32_t lo, hi;
            std::memcpy(&lo, p, 4);
            std::memcpy(&hi, p + n - 4, 4);
            return std::uint64_t{lo} | (std::uint64_t{hi} << (8 * (n - 4)));
        }
        return byte(0) | (byte(n / 2) << (8 * (n / 2))) | (byte(n - 1) << (8 * (n - 1)));
    }
    static std::uint64_t mix(std::uint64_t x) {
        x ^= x >> 32;
        x *= 0xD6E8FEB86659FD93ull;
        x ^= x >> 32;
        x *= 0xD6E8FEB86659FD93ull;
        x ^= x >> 32;
        return x;
    }
    static std::uint64_t hash_packed(std::uint64_t key, std::size_t n) {
        return mix(key ^ (std::uint64_t{n} * 0x9E3779B97F4A7C15ull));
    }
    static std::uint64_t hash_long(std::string_view bytes) {
        std::uint64_t h = bytes.size() * 0x9E3779B97F4A7C15ull;
        const char* p = bytes.data();
        std::size_t n = bytes.size();
        for (; n >= 8; p += 8, n -= 8) {
            std::uint64_t w;
            std::memcpy(&w, p, 8);
            h = mix(h ^ w);
        }
        return n ? mix(h ^ pack(p, n)) : h;
    }
    static std::uint64_t hash_of(std::string_view bytes) {
        return bytes.size() <= 8 ? hash_packed(pack(bytes.data(), bytes.size()), bytes.size()) : hash_long(bytes);
    }
    // `bytes` non-empty and at most max_length(); `h` is hash_of(bytes).
    std::uint32_t find_hashed(std::string_view bytes, std::uint64_t h) const {
        const std::size_t n = bytes.size();
        if (n <= 8) {
            const std::uint64_t key = pack(bytes.data(), n);
            for (std::size_t i = h & m_mask;; i = (i + 1) & m_mask) {
                const Slot& slot = m_slots[i];
                if (slot.key == key && slot.length == n) return slot.rank;
                if (slot.rank == k_no_rank) return k_no_rank;
            }
        }
        const auto tag = static_cast<std::uint16_t>(h >> 48);
        for (std::size_t i = h & m_mask;; i = (i + 1) & m_mask) {
            const Slot& slot = m_slots[i];
            if (slot.rank == k_no_rank) return k_no_rank;
            if (slot.tag == tag && slot.length == n &&
                std::memcmp(m_arena.data() + slot.key, bytes.data(), n) == 0)
                return slot.rank;
        }
    }
    void rehash(std::size_t capacity);
    std::string_view key_bytes(const Slot& slot, char (&buffer)[8]) const;

    struct PairSlot {
        std::uint64_t key = 0;  // left rank << 32 | right rank
        std::uint32_t rank = k_no_rank;
    };

    std::vector<Slot> m_slots;
    std::vector<PairSlot> m_pair_slots;
    std::size_t m_pair_mask = 0;
    std::size_t m_pair_count = 0;
    std::uint32_t m_bytes[256] = {};
    std::vector<std::uint32_t> m_pairs = std::vector<std::uint32_t>(65536, k_no_rank);  // every 2-byte key
    std::string m_arena;
    std::size_t m_mask = 0;
    std::size_t m_count = 0;
    std::size_t m_max_length = 0;
};

// Scratch space reused across pieces by one thread.
struct MergeScratch {
    std::vector<std::uint32_t> ids;
    std::vector<std::uint32_t> ranks;
    std::vector<std::uint32_t> next;
    std::vector<std::uint32_t> prev;
    std::vector<std::uint64_t> heap;
};

// Appends the tokens of `piece` (not itself in the table, at least 2 bytes; the table's pairs
// indexed) to `out`: repeatedly merges the adjacent pair whose concatenation has the lowest rank,
// the leftmost on ties, as the reference does. The linear form rescans all pairs after each merge
// (fastest for a few bytes); the heap form keeps the pairs in a priority queue ordered by (rank,
// position), which picks the same pair every step, in O(n log n).
void merge_linear(const RankTable& ranks, std::string_view piece, MergeScratch& scratch,
                  std::vector<std::uint32_t>& out);
void merge_heap(const RankTable& ranks, std::string_view piece, MergeScratch& scratch,
                std::vector<std::uint32_t>& out);
// Chooses the form by length.
void byte_pair_merge(const RankTable& ranks, std::string_view piece, MergeScratch& scratch,
                     std::vector<std::uint32_t>& out);

// Decodes standard base64 (with or without padding) and appends to `out`; false when malformed.
bool base64_decode(std::string_view text, std::string& out);

// Replaces every ill-formed UTF-8 sequence with U+FFFD, one per maximal subpart (the WHATWG and
// Unicode "best practice" rule, as TextDecoder and Rust's from_utf8_lossy do). Returns false, and
// leaves `out` untouched, when `text` is already valid.
bool repair_utf8(std::string_view text, std::string& out);

}  // namespace memfail::text::detail

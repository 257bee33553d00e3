// SPDX-License-Identifier: MIT
// Rank table, byte-pair merge (linear and heap forms), base64 and UTF-8 repair for the tokenizer.
#include <memfail/text/bpe.hpp>

#include <algorithm>
#include <array>
#include <functional>

#include <memfail/core/error.hpp>

namespace memfail::text::detail {

void RankTable::reserve(std::size_t count, std::size_t arena_bytes) {
    m_arena.reserve(arena_bytes);
    std::size_t capacity = 16;
    // Load factor at most 1/2 keeps probe sequences short for the misses BPE makes constantly.
    while (capacity < count * 2) capacity *= 2;
    if (capacity > m_slots.size()) rehash(capacity);
}

void RankTable::rehash(std::size_t capacity) {
    std::vector<Slot> old = std::move(m_slots);
    m_slots.assign(capacity, Slot{});
    m_mask = capacity - 1;
    for (const Slot& slot : old) {
        if (slot.rank == k_no_rank) continue;
        const std::uint64_t h = slot.length <= 8
                                    ? hash_packed(slot.key, slot.length)
                                    : hash_long(std::string_view(m_arena.data() + slot.key, slot.length));
        std::size_t i = h & m_mask;
        while (m_slots[i].rank != k_no_rank) i = (i + 1) & m_mask;
        m_slots[i] = slot;
    }
}

bool RankTable::insert(std::string_view bytes, std::uint32_t rank) {
    MF_ASSERT(rank != k_no_rank, "rank value reserved for empty slots");
    MF_ASSERT(!bytes.empty() && bytes.size() <= 0xFFFF, "token length fits the slot");
    if (find(bytes) != k_no_rank) return false;
    if ((m_count + 1) * 2 > m_slots.size()) rehash(std::max<std::size_t>(16, m_slots.size() * 2));
    Slot slot;
    slot.rank = rank;
    slot.length = static_cast<std::uint16_t>(bytes.size());
    std::uint64_t h = 0;
    if (bytes.size() <= 8) {
        slot.key = pack(bytes.data(), bytes.size());
        h = hash_packed(slot.key, bytes.size());
    } else {
        h = hash_long(bytes);
        slot.tag = static_cast<std::uint16_t>(h >> 48);
        slot.key = m_arena.size();
        m_arena.append(bytes);
    }
    std::size_t i = h & m_mask;
    while (m_slots[i].rank != k_no_rank) i = (i + 1) & m_mask;
    m_slots[i] = slot;
    if (bytes.size() == 2) m_pairs[pair_index(bytes[0], bytes[1])] = rank;
    ++m_count;
    m_max_length = std::max(m_max_length, bytes.size());
    return true;
}

std::string_view RankTable::key_bytes(const Slot& slot, char (&buffer)[8]) const {
    if (slot.length > 8) return std::string_view(m_arena.data() + slot.key, slot.length);
    for (std::size_t i = 0; i < slot.length; ++i) buffer[i] = static_cast<char>((slot.key >> (8 * i)) & 0xFF);
    return std::string_view(buffer, slot.length);
}

void RankTable::index_pairs() {
    for (int b = 0; b < 256; ++b) {
        const char c = static_cast<char>(b);
        m_bytes[b] = find(std::string_view(&c, 1));
        MF_ASSERT(m_bytes[b] != k_no_rank, "every single byte is a token before pairs are indexed");
    }
    // Collect first so the index is sized once. The rank table is megabytes and each probe a
    // likely cache miss, so every lookup one token needs is hashed and prefetched before any is made.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> entries;
    entries.reserve(m_count * 3);
    std::vector<std::uint64_t> hashes;
    char buffer[8];
    const auto rank_of_part = [&](std::string_view part, std::uint64_t h) {
        if (part.size() == 1) return m_bytes[static_cast<unsigned char>(part[0])];
        if (part.size() == 2) return m_pairs[pair_index(part[0], part[1])];
        return find_hashed(part, h);
    };
    for (const Slot& slot : m_slots) {
        if (slot.rank == k_no_rank || slot.length < 2) continue;
        const std::string_view bytes = key_bytes(slot, buffer);
        const std::size_t n = bytes.size();
        // hashes[2s] for the prefix of s bytes, hashes[2s + 1] for the suffix after it.
        hashes.assign(2 * n, 0);
        for (std::size_t split = 1; split < n; ++split) {
            for (const std::size_t side : {std::size_t{0}, std::size_t{1}}) {
                const std::string_view part = side == 0 ? bytes.substr(0, split) : bytes.substr(split);
                if (part.size() <= 2) continue;
                const std::uint64_t h = hash_of(part);
                hashes[2 * split + side] = h;
                __builtin_prefetch(&m_slots[h & m_mask]);
            }
        }
        for (std::size_t split = 1; split < n; ++split) {
            const std::uint32_t left = rank_of_part(bytes.substr(0, split), hashes[2 * split]);
            if (left == k_no_rank) continue;
            const std::uint32_t right = rank_of_part(bytes.substr(split), hashes[2 * split + 1]);
            if (right == k_no_rank) continue;
            entries.emplace_back((std::uint64_t{left} << 32) | right, slot.rank);
        }
    }
    std::size_t capacity = 16;
    while (capacity < entries.size() * 2) capacity *= 2;
    m_pair_slots.assign(capacity, PairSlot{});
    m_pair_mask = capacity - 1;
    constexpr std::size_t k_ahead = 16;
    for (std::size_t e = 0; e < entries.size(); ++e) {
        if (e + k_ahead < entries.size()) __builtin_prefetch(&m_pair_slots[mix(entries[e + k_ahead].first) & m_pair_mask]);
        const auto [key, rank] = entries[e];
        std::size_t i = mix(key) & m_pair_mask;
        while (m_pair_slots[i].rank != k_no_rank) i = (i + 1) & m_pair_mask;
        m_pair_slots[i] = PairSlot{key, rank};
    }
    m_pair_count = entries.size();
}

namespace {

// Pieces up to this many bytes use the linear form. With pair ranks an integer probe, the heap's
// bookkeeping pays for itself early: on phrase-long CJK and Thai pieces the heap from 16 bytes was
// 1.2-1.9x the rescan from 128 (bench_tokenizer --scripts), and no script was slower.
constexpr std::size_t k_linear_limit = 16;

}  // namespace

void merge_linear(const RankTable& ranks, std::string_view piece, MergeScratch& scratch,
                  std::vector<std::uint32_t>& out) {
    const std::size_t n = piece.size();
    MF_ASSERT(n >= 2, "single bytes are tokens and never reach the merge");
    MF_ASSERT(ranks.pairs_indexed(), "index_pairs() runs after loading");
    // ids[i] is part i's token; part_ranks[i] is the rank of joining part i with part i + 1, which
    // is also the joined part's id.
    auto& ids = scratch.ids;
    auto& part_ranks = scratch.ranks;
    ids.resize(n);
    part_ranks.resize(n);
    for (std::size_t i = 0; i + 1 < n; ++i) {
        ids[i] = ranks.byte_rank(piece[i]);
        part_ranks[i] = ranks.byte_pair_rank(piece[i], piece[i + 1]);
    }
    ids[n - 1] = ranks.byte_rank(piece[n - 1]);
    part_ranks[n - 1] = k_no_rank;
    std::size_t parts = n;

    for (;;) {
        std::uint32_t best = k_no_rank;
        std::size_t at = 0;
        for (std::size_t i = 0; i + 1 < parts; ++i) {
            if (part_ranks[i] < best) {  // strict: the leftmost wins ties
                best = part_ranks[i];
                at = i;
            }
        }
        if (best == k_no_rank) break;
        // Part at + 1 joins part at.
        ids[at] = best;
        std::copy(ids.begin() + at + 2, ids.begin() + parts, ids.begin() + at + 1);
        std::copy(part_ranks.begin() + at + 2, part_ranks.begin() + parts, part_ranks.begin() + at + 1);
        --parts;
        part_ranks[at] = at + 1 < parts ? ranks.pair_rank(best, ids[at + 1]) : k_no_rank;
        if (at > 0) part_ranks[at - 1] = ranks.pair_rank(ids[at - 1], best);
    }
    out.insert(out.end(), ids.begin(), ids.begin() + parts);
}

void merge_heap(const RankTable& ranks, std::string_view piece, MergeScratch& scratch,
                std::vector<std::uint32_t>& out) {
    const std::size_t n = piece.size();
    MF_ASSERT(n >= 2, "single bytes are tokens and never reach the merge");
    MF_ASSERT(n < k_no_rank, "pieces are far below 4 GiB");
    MF_ASSERT(ranks.pairs_indexed(), "index_pairs() runs after loading");
    // Node i is the part starting at byte i; it survives merges with its right neighbour, so its
    // start never changes and (rank, start) orders pairs exactly as the reference's leftmost rule.
    auto& next = scratch.next;
    auto& prev = scratch.prev;
    auto& ids = scratch.ids;
    auto& node_ranks = scratch.ranks;
    auto& heap = scratch.heap;
    next.resize(n + 1);
    prev.resize(n + 1);
    ids.resize(n);
    node_ranks.resize(n + 1);
    heap.clear();
    const auto pair_rank = [&](std::size_t i) -> std::uint32_t {
        if (next[i] >= n) return k_no_rank;
        return ranks.pair_rank(ids[i], ids[next[i]]);
    };
    for (std::size_t i = 0; i <= n; ++i) {
        next[i] = static_cast<std::uint32_t>(i < n ? i + 1 : n);
        prev[i] = static_cast<std::uint32_t>(i == 0 ? 0 : i - 1);
        if (i < n) ids[i] = ranks.byte_rank(piece[i]);
    }
    const auto push = [&](std::size_t i, std::uint32_t rank) {
        heap.push_back((std::uint64_t{rank} << 32) | i);
        std::push_heap(heap.begin(), heap.end(), std::greater<>());
    };
    for (std::size_t i = 0; i < n; ++i) {
        node_ranks[i] = i + 1 < n ? ranks.byte_pair_rank(piece[i], piece[i + 1]) : k_no_rank;
        if (node_ranks[i] != k_no_rank) heap.push_back((std::uint64_t{node_ranks[i]} << 32) | i);
    }
    std::make_heap(heap.begin(), heap.end(), std::greater<>());
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<>());
        const std::uint64_t key = heap.back();
        heap.pop_back();
        const auto rank = static_cast<std::uint32_t>(key >> 32);
        const auto i = static_cast<std::size_t>(key & 0xFFFFFFFFu);
        // Stale entries (node merged away, or its pair changed since) no longer match node_ranks;
        // a merged-away node has k_no_rank, which is never pushed.
        if (node_ranks[i] != rank) continue;
        const std::size_t j = next[i];
        const std::size_t k = next[j];
        next[i] = static_cast<std::uint32_t>(k);
        if (k < n) prev[k] = static_cast<std::uint32_t>(i);
        ids[i] = rank;
        node_ranks[j] = k_no_rank;
        node_ranks[i] = pair_rank(i);
        if (node_ranks[i] != k_no_rank) push(i, node_ranks[i]);
        if (i > 0) {
            const std::size_t p = prev[i];
            node_ranks[p] = pair_rank(p);
            if (node_ranks[p] != k_no_rank) push(p, node_ranks[p]);
        }
    }
    for (std::size_t i = 0; i < n; i = next[i]) out.push_back(ids[i]);
}

void byte_pair_merge(const RankTable& ranks, std::string_view piece, MergeScratch& scratch,
                     std::vector<std::uint32_t>& out) {
    if (piece.size() <= k_linear_limit)
        merge_linear(ranks, piece, scratch, out);
    else
        merge_heap(ranks, piece, scratch, out);
}

namespace {

constexpr std::array<std::int8_t, 256> make_base64_table() {
    std::array<std::int8_t, 256> table{};
    for (auto& v : table) v = -1;
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) table[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
    return table;
}
constexpr auto k_base64 = make_base64_table();

}  // namespace

bool base64_decode(std::string_view text, std::string& out) {
    while (!text.empty() && text.back() == '=') text.remove_suffix(1);
    if (text.size() % 4 == 1) return false;
    std::uint32_t buffer = 0;
    int bits = 0;
    for (const char c : text) {
        const int v = k_base64[static_cast<unsigned char>(c)];
        if (v < 0) return false;
        buffer = (buffer << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
        }
    }
    return true;
}

namespace {

// Length of the well-formed sequence at `i`, or 0 with `bad` set to the length of the maximal
// subpart to replace (at least 1).
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::size_t& bad) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) return 1;
    std::size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 1;
    } else if (b0 == 0xE0) {
        need = 2, lo = 0xA0;
    } else if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) {
        need = 2;
    } else if (b0 == 0xED) {
        need = 2, hi = 0x9F;  // no surrogates
    } else if (b0 == 0xF0) {
        need = 3, lo = 0x90;
    } else if (b0 >= 0xF1 && b0 <= 0xF3) {
        need = 3;
    } else if (b0 == 0xF4) {
        need = 3, hi = 0x8F;
    } else {
        bad = 1;
        return 0;
    }
    for (std::size_t k = 1; k <= need; ++k) {
        if (i + k >= s.size()) {
            bad = k;
            return 0;
        }
        const auto b = static_cast<unsigned char>(s[i + k]);
        const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
        if (b < l || b > h) {
            bad = k;
            return 0;
        }
    }
    return need + 1;
}

}  // namespace

bool repair_utf8(std::string_view text, std::string& out) {
    std::size_t i = 0;
    std::size_t bad = 0;
    // Fast scan: most text is valid and stays untouched; ASCII goes eight bytes at a time.
    while (i < text.size()) {
        std::uint64_t word;
        if (i + 8 <= text.size() && (std::memcpy(&word, text.data() + i, 8), (word & 0x8080808080808080ull) == 0)) {
            i += 8;
            continue;
        }
        const std::size_t len = utf8_sequence(text, i, bad);
        if (len == 0) break;
        i += len;
    }
    if (i == text.size()) return false;
    out.assign(text.substr(0, i));
    while (i < text.size()) {
        const std::size_t len = utf8_sequence(text, i, bad);
        if (len == 0) {
            out += "\xEF\xBF\xBD";
            i += bad;
        } else {
            out.append(text.substr(i, len));
            i += len;
        }
    }
    return true;
}

}  // namespace memfail::text::detail

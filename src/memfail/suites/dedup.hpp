// SPDX-License-Identifier: MIT
// MinHash-LSH near-duplicate filtering, as the MemFail generators use: each kept text is compared
// with earlier kept texts that share an LSH band, and a candidate whose estimated Jaccard similarity
// of word 3-shingles reaches the threshold is dropped.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace memfail::suites {

struct DedupDrop {
    std::string id;          // the dropped item
    std::string kept_id;     // the kept item it collided with
    double jaccard = 0;      // estimated similarity
};

class MinHashDeduper {
public:
    // `threshold` is the Jaccard similarity at or above which a candidate counts as a duplicate.
    explicit MinHashDeduper(double threshold, int permutations = 128, int bands = 32);

    // Estimated Jaccard similarity of `a` and `b` (word 3-shingles of the normalised text).
    double similarity(std::string_view a, std::string_view b) const;

    // True (and keeps it) when `text` is not a near-duplicate of anything kept so far; otherwise
    // records the drop and returns false.
    bool offer(const std::string& id, std::string_view text);
    // Checks without keeping: the id of the kept item `text` collides with, or empty.
    std::string collides(std::string_view text) const;
    // Keeps `text` unconditionally (for items admitted as a group after checking each one).
    void keep(const std::string& id, std::string_view text);

    const std::vector<DedupDrop>& drops() const { return m_drops; }
    double threshold() const { return m_threshold; }

private:
    std::vector<std::uint64_t> signature(std::string_view text) const;
    std::string best_collision(const std::vector<std::uint64_t>& sig, double* jaccard) const;

    double m_threshold;
    int m_permutations;
    int m_bands;
    std::vector<std::vector<std::uint64_t>> m_kept_signatures;
    std::vector<std::string> m_kept_ids;
    std::vector<std::unordered_map<std::uint64_t, std::vector<std::size_t>>> m_buckets;  // per band
    std::vector<DedupDrop> m_drops;
};

}  // namespace memfail::suites

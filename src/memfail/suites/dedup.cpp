// SPDX-License-Identifier: MIT
// MinHash-LSH near-duplicate filter.
#include <memfail/core/hash.hpp>
#include <memfail/core/text.hpp>
#include <memfail/suites/dedup.hpp>

#include <algorithm>
#include <set>

namespace memfail::suites {

MinHashDeduper::MinHashDeduper(double threshold, int permutations, int bands)
    : m_threshold(threshold), m_permutations(permutations), m_bands(bands), m_buckets(bands) {}

std::vector<std::uint64_t> MinHashDeduper::signature(std::string_view input) const {
    const std::vector<std::string> w = text::words(input);
    std::set<std::uint64_t> shingles;
    if (w.size() < 3) {
        shingles.insert(hash64(text::join(w, " ")));
    } else {
        for (std::size_t i = 0; i + 3 <= w.size(); ++i)
            shingles.insert(hash64(w[i] + ' ' + w[i + 1] + ' ' + w[i + 2]));
    }
    std::vector<std::uint64_t> sig(static_cast<std::size_t>(m_permutations), UINT64_MAX);
    for (std::uint64_t s : shingles)
        for (int p = 0; p < m_permutations; ++p) {
            // One independent hash function per permutation, seeded by its index.
            std::uint64_t h = s ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(p + 1));
            h ^= h >> 33;
            h *= 0xff51afd7ed558ccdULL;
            h ^= h >> 33;
            h *= 0xc4ceb9fe1a85ec53ULL;
            h ^= h >> 33;
            sig[static_cast<std::size_t>(p)] = std::min(sig[static_cast<std::size_t>(p)], h);
        }
    return sig;
}

namespace {
double estimate(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
    return static_cast<double>(same) / static_cast<double>(a.size());
}
std::uint64_t band_key(const std::vector<std::uint64_t>& sig, int band, int rows) {
    std::uint64_t h = static_cast<std::uint64_t>(band) * 0x9e3779b97f4a7c15ULL;
    for (int r = 0; r < rows; ++r) h = (h ^ sig[static_cast<std::size_t>(band * rows + r)]) * 0x100000001b3ULL;
    return h;
}
}  // namespace

double MinHashDeduper::similarity(std::string_view a, std::string_view b) const {
    return estimate(signature(a), signature(b));
}

std::string MinHashDeduper::best_collision(const std::vector<std::uint64_t>& sig, double* jaccard) const {
    const int rows = m_permutations / m_bands;
    std::set<std::size_t> candidates;
    for (int b = 0; b < m_bands; ++b) {
        const std::uint64_t key = band_key(sig, b, rows);
        const auto& bucket = m_buckets[static_cast<std::size_t>(b)];
        if (auto it = bucket.find(key); it != bucket.end()) candidates.insert(it->second.begin(), it->second.end());
    }
    std::string best;
    double best_j = 0;
    for (std::size_t idx : candidates) {
        const double j = estimate(sig, m_kept_signatures[idx]);
        if (j >= m_threshold && j > best_j) {
            best_j = j;
            best = m_kept_ids[idx];
        }
    }
    if (jaccard) *jaccard = best_j;
    return best;
}

std::string MinHashDeduper::collides(std::string_view text) const {
    return best_collision(signature(text), nullptr);
}

void MinHashDeduper::keep(const std::string& id, std::string_view text) {
    const auto sig = signature(text);
    const int rows = m_permutations / m_bands;
    const std::size_t idx = m_kept_ids.size();
    for (int b = 0; b < m_bands; ++b)
        m_buckets[static_cast<std::size_t>(b)][band_key(sig, b, rows)].push_back(idx);
    m_kept_signatures.push_back(sig);
    m_kept_ids.push_back(id);
}

bool MinHashDeduper::offer(const std::string& id, std::string_view text) {
    double j = 0;
    const std::string hit = best_collision(signature(text), &j);
    if (!hit.empty()) {
        m_drops.push_back({id, hit, j});
        return false;
    }
    keep(id, text);
    return true;
}

}  // namespace memfail::suites

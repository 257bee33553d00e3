// SPDX-License-Identifier: MIT
// An in-RAM cosine index over L2-normalised vectors: exact search while small, HNSW once large.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace memfail::memory {

struct VectorIndexOptions {
    int dim = 0;
    // Exact (brute-force) search up to this many vectors; the index moves to HNSW when an add would
    // exceed it and stays there. 0 (the default) sets it by work rather than count: exact while
    // the vectors hold at most k_exact_floats floats (4,096 vectors at 512 dimensions, 2,730 at
    // 768). An exact search reads every vector, so its cost is size x dim: at 10k x 768 it took
    // 2 ms, and moving 20k vectors into HNSW at once took 14-16 s inside one store call.
    std::size_t hnsw_threshold = 0;
    static constexpr std::size_t k_exact_floats = std::size_t{1} << 21;
    std::size_t hnsw_m = 16;
    std::size_t hnsw_ef_construction = 100;
    // Searches use max(this, k). Hashed text vectors are close to orthogonal, a hard case for
    // graph search: on 100k of them (M=16) recall@10 against exact search measured 0.80 at ef=64,
    // 0.87 at 128 and 0.93 at 256, at about 0.7, 1.3 and 2.6 ms per query.
    std::size_t hnsw_ef_search = 128;
    std::uint64_t hnsw_seed = 100;    // fixed, so one insertion order always builds one graph
};

struct VectorMatch {
    std::int64_t id = 0;
    float score = 0;  // inner product = cosine for normalised vectors; higher is closer
};

// Backed by hnswlib (BruteforceSearch, then HierarchicalNSW) with InnerProductSpace. Not safe for
// concurrent use: callers serialise adds and searches.
class VectorIndex {
public:
    explicit VectorIndex(VectorIndexOptions options);
    ~VectorIndex();
    VectorIndex(VectorIndex&&) noexcept;
    VectorIndex& operator=(VectorIndex&&) noexcept;

    int dim() const;
    // Adds `vector` (dim() floats, L2-normalised) under `id` (>= 0), replacing any vector already
    // held under that id.
    void add(std::int64_t id, std::span<const float> vector);
    // Forgets `id`; false when it was not held.
    bool remove(std::int64_t id);
    // Forgets everything and returns to exact search.
    void clear();
    // Up to `k` nearest vectors, best first (ties by ascending id). Exact below the threshold,
    // approximate (HNSW) above it.
    std::vector<VectorMatch> search(std::span<const float> query, int k) const;
    std::size_t size() const;
    // True once the index has moved to HNSW.
    bool is_approximate() const;
    // The size up to which search is exact (hnsw_threshold, or the one derived from the dimension).
    std::size_t exact_limit() const;
    // True when distances use the AVX2/FMA kernel (chosen at run time; SSE/portable otherwise).
    static bool uses_avx2();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace memfail::memory

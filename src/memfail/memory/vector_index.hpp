// SPDX-License-Identifier: MIT
// An in-RAM cosine index over L2-normalised vectors: exact search while small, HNSW once large.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <memfail/memory/column_index.hpp>

namespace memfail::memory {

// What serves searches past the exact limit.
enum class LargeIndex {
    // ColumnIndex: a scan of the query's heaviest dimensions over int8 codes, then float
    // re-scoring. For sparse vectors (hashed text features): on 1M hashed 512-d text vectors it
    // returned 99.9% of exact search's top 10 at 1.6 ms median (bench/README.md), where the graph
    // below reached 91% at 2.6 ms; adding a vector is one quantisation instead of a graph insert.
    columns,
    // HNSW over int8 codes (or floats), then float re-scoring. For dense vectors (embedding
    // models), whose mass is spread over every dimension so no few columns rank them.
    hnsw,
};

struct VectorIndexOptions {
    int dim = 0;
    LargeIndex large = LargeIndex::hnsw;
    ColumnIndexOptions columns = ColumnIndexOptions{};  // large == columns
    // Exact (brute-force) search up to this many vectors; the index moves to HNSW when an add would
    // exceed it and stays there. 0 (the default) sets it by work rather than count: exact while
    // the vectors hold at most k_exact_floats floats (4,096 vectors at 512 dimensions, 2,730 at
    // 768). An exact search reads every vector, so its cost is size x dim: at 10k x 768 it took
    // 2 ms, and moving 20k vectors into HNSW at once took 14-16 s inside one store call.
    std::size_t hnsw_threshold = 0;
    static constexpr std::size_t k_exact_floats = std::size_t{1} << 21;
    // Graph degree (level 0 holds 2M links). Hashed text vectors are close to orthogonal, a hard
    // case for graph search, and the degree buys more recall per unit of search work than ef does:
    // on 100k of them recall@10 against exact search measured 0.78, 0.87, 0.93 at ef=128, 256, 512
    // with M=16, and 0.94 at ef=256 with M=32 (bench/README.md). M=32 costs more per insert, which
    // the int8 codes below pay for.
    std::size_t hnsw_m = 32;
    std::size_t hnsw_ef_construction = 100;
    // Searches use max(this, k, rescore pool). 0 (the default) sets it by size, since the ef a
    // given recall needs grows with the graph: see auto_ef_search() in vector_index.cpp.
    std::size_t hnsw_ef_search = 0;
    // True: the graph holds each vector as int8 codes (one scale per vector), a quarter of the
    // bytes, so a distance reads 8 cache lines instead of 32 at 512 dimensions; graph search is
    // bound by those reads (at 100k, M=16: inserts 3.8x and searches 1.8x faster than floats, at
    // the same recall within 0.005). The full float vectors
    // are kept beside the graph and the best `rescore_pool` candidates are re-scored with them, so
    // returned scores are exact and quantisation only decides which candidates reach the pool.
    // False: floats in the graph and no re-scoring (the configuration before 2026-11-26).
    bool hnsw_quantize = true;
    std::size_t rescore_pool = 64;
    std::uint64_t hnsw_seed = 100;    // fixed, so one insertion order always builds one graph
};

struct VectorMatch {
    std::int64_t id = 0;
    float score = 0;  // inner product = cosine for normalised vectors; higher is closer
};

// Backed by hnswlib's BruteforceSearch while small, then ColumnIndex or hnswlib's HierarchicalNSW
// (options.large), with inner-product spaces of our own (AVX2 kernels chosen at run time). Not safe
// for concurrent use: callers serialise adds and searches.
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
    // approximate (columns or HNSW) above it; returned scores are exact either way.
    std::vector<VectorMatch> search(std::span<const float> query, int k) const;
    std::size_t size() const;
    // True once the index has moved past exact search (to columns or HNSW).
    bool is_approximate() const;
    // The size up to which search is exact (hnsw_threshold, or the one derived from the dimension).
    std::size_t exact_limit() const;
    // The ef a search at the current size uses (before max with k and the rescore pool); 0 while
    // exact or served by columns.
    std::size_t ef_search() const;
    // What serves a search now, with the settings that decide its recall, for a run's record:
    //   "exact(f32,avx2)"                                          while exact ("sse" without AVX2)
    //   "columns(int8,dims=16/512,pool=256,avx2)+rescore(f32)"     the column scan at this size
    //   "hnsw(int8,M=32,efc=100,ef=256,avx2)+rescore(f32,pool=64)" quantised graph, then re-scoring
    //   "hnsw(f32,M=16,efc=100,ef=128,avx2)"                       hnsw_quantize = false
    // ef is the one in effect at the current size. Recall measured for these settings on hashed
    // text vectors is in bench/README.md (bench_retrieval).
    std::string describe() const;
    // True when distances use the AVX2/FMA kernel (chosen at run time; SSE/portable otherwise).
    static bool uses_avx2();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace memfail::memory

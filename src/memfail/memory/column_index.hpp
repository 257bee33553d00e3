// SPDX-License-Identifier: MIT
// A scan over int8 codes stored by column, reading only the query's heaviest dimensions, whose best
// candidates are re-scored with the float vectors kept beside the codes. Built for sparse vectors
// such as hashed text features, where a query's mass sits in a few dimensions (on hashed 512-d text
// vectors the 16 largest of a query's ~84 non-zero dimensions carry 84% of its squared norm): the
// scan then reads 16 bytes per stored vector instead of 512, and needs no graph, so adding a
// vector costs one quantisation. The dimensions scanned grow as the store shrinks (a fixed budget of
// codes per search), so small stores scan every dimension.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace memfail::memory {

struct VectorMatch;

struct ColumnIndexOptions {
    // Codes read per search: dimensions scanned = clamp(ceil(budget / size), min_dims, dim).
    std::size_t budget = 8'000'000;
    std::size_t min_dims = 16;
    // Candidates re-scored with floats (at least k).
    std::size_t pool = 256;
    bool use_avx2 = true;  // false forces the portable kernel (same results)
};

class ColumnIndex {
public:
    ColumnIndex(std::size_t dim, ColumnIndexOptions options);
    ~ColumnIndex();
    ColumnIndex(ColumnIndex&&) noexcept;
    ColumnIndex& operator=(ColumnIndex&&) noexcept;

    // Adds `vector` (dim floats) under `id`, replacing any vector held under it.
    void add(std::int64_t id, const float* vector);
    bool remove(std::int64_t id);
    bool holds(std::int64_t id) const;
    // Up to `want` best matches, best first (ties by ascending id), with exact float scores.
    std::vector<VectorMatch> search(const float* query, std::size_t want) const;
    std::size_t size() const { return m_count; }
    // The dimensions a search scans at the current size.
    std::size_t dims_scanned() const;
    // "columns(int8,dims=16/512,pool=256,avx2)".
    std::string describe() const;

private:
    struct Block;
    float* floats_at(std::size_t slot) const;
    void write(std::size_t slot, std::int64_t id, const float* vector);

    std::size_t m_dim;
    ColumnIndexOptions m_options;
    std::vector<std::unique_ptr<Block>> m_blocks;
    std::unordered_map<std::int64_t, std::size_t> m_slot;  // id -> slot; slots 0..m_count-1 are live
    std::size_t m_count = 0;
};

}  // namespace memfail::memory

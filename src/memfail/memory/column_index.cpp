// SPDX-License-Identifier: MIT
// ColumnIndex: blocks of k_block vectors, each holding its vectors' int8 codes dimension by
// dimension (one contiguous run of k_block codes per dimension), their scales, their floats and ids.
// A search quantises the query's heaviest dimensions to int16 weights, scans those runs block by
// block (kernels::accumulate_columns), keeps the best `pool` by approximate score, and re-scores
// them with the floats.
#include <memfail/memory/column_index.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <utility>

#include <memfail/core/error.hpp>
#include <memfail/memory/vector_index.hpp>
#include <memfail/memory/vector_kernels.hpp>

namespace memfail::memory {

namespace {
// Vectors per block: a multiple of 32 (the kernel's stride); 2,048 keeps a block's codes for one
// dimension within two pages and its accumulator within L1.
constexpr std::size_t k_block = 2048;
// Query weights are quantised to +-k_weight_max: with codes within +-127 a sum over 512 dimensions
// stays far inside int32, and the weights' rounding (1 in 8,190 of the largest) is far below the
// codes' own.
constexpr float k_weight_max = 4095.0F;
const std::int8_t k_zeros[k_block] = {};
}  // namespace

struct ColumnIndex::Block {
    explicit Block(std::size_t dim)
        : codes(new std::int8_t[dim * k_block]()), scales(k_block, 0.0F), floats(new float[dim * k_block]()),
          ids(k_block, 0) {}
    std::unique_ptr<std::int8_t[]> codes;  // codes[d * k_block + row]
    std::vector<float> scales;             // value = code x scale
    std::unique_ptr<float[]> floats;       // floats[row * dim + d]
    std::vector<std::int64_t> ids;
};

ColumnIndex::ColumnIndex(std::size_t dim, ColumnIndexOptions options) : m_dim(dim), m_options(options) {
    MF_ASSERT(dim > 0, "a column index needs at least one dimension");
    MF_ASSERT(options.min_dims > 0 && options.pool > 0, "a column index scans at least one dimension");
}

ColumnIndex::~ColumnIndex() = default;
ColumnIndex::ColumnIndex(ColumnIndex&&) noexcept = default;
ColumnIndex& ColumnIndex::operator=(ColumnIndex&&) noexcept = default;

float* ColumnIndex::floats_at(std::size_t slot) const {
    return m_blocks[slot / k_block]->floats.get() + (slot % k_block) * m_dim;
}

void ColumnIndex::write(std::size_t slot, std::int64_t id, const float* vector) {
    Block& block = *m_blocks[slot / k_block];
    const std::size_t row = slot % k_block;
    float top = 0;
    for (std::size_t d = 0; d < m_dim; ++d) top = std::max(top, std::fabs(vector[d]));
    const float inverse = top > 0 ? 127.0F / top : 0.0F;
    for (std::size_t d = 0; d < m_dim; ++d)
        block.codes[d * k_block + row] = static_cast<std::int8_t>(std::lrintf(vector[d] * inverse));
    block.scales[row] = top > 0 ? top / 127.0F : 0.0F;
    std::copy(vector, vector + m_dim, block.floats.get() + row * m_dim);
    block.ids[row] = id;
    m_slot[id] = slot;
}

void ColumnIndex::add(std::int64_t id, const float* vector) {
    if (auto it = m_slot.find(id); it != m_slot.end()) {
        write(it->second, id, vector);
        return;
    }
    if (m_count == m_blocks.size() * k_block) m_blocks.push_back(std::make_unique<Block>(m_dim));
    write(m_count, id, vector);
    ++m_count;
}

bool ColumnIndex::remove(std::int64_t id) {
    auto it = m_slot.find(id);
    if (it == m_slot.end()) return false;
    const std::size_t slot = it->second;
    m_slot.erase(it);
    const std::size_t last = m_count - 1;
    if (slot != last) {
        // The last vector moves into the hole, so live slots stay 0..size-1.
        Block& from = *m_blocks[last / k_block];
        const std::size_t from_row = last % k_block;
        write(slot, from.ids[from_row], from.floats.get() + from_row * m_dim);
    }
    Block& tail = *m_blocks[last / k_block];
    const std::size_t tail_row = last % k_block;
    for (std::size_t d = 0; d < m_dim; ++d) tail.codes[d * k_block + tail_row] = 0;
    tail.scales[tail_row] = 0;
    --m_count;
    if (m_count + k_block <= m_blocks.size() * k_block) m_blocks.pop_back();  // a whole empty block
    return true;
}

bool ColumnIndex::holds(std::int64_t id) const { return m_slot.count(id) > 0; }

std::size_t ColumnIndex::dims_scanned() const {
    if (m_count == 0) return std::min(m_dim, m_options.min_dims);
    const std::size_t by_budget = (m_options.budget + m_count - 1) / m_count;
    return std::clamp(by_budget, std::min(m_options.min_dims, m_dim), m_dim);
}

std::vector<VectorMatch> ColumnIndex::search(const float* query, std::size_t want) const {
    if (want == 0 || m_count == 0) return {};
    // The heaviest dimensions of the query, as int16 weights (ties by dimension, so one query
    // always scans the same ones).
    std::vector<std::uint32_t> order(m_dim);
    std::iota(order.begin(), order.end(), 0U);
    const std::size_t scan = dims_scanned();
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(scan), order.end(),
                      [&](std::uint32_t a, std::uint32_t b) {
                          const float fa = std::fabs(query[a]);
                          const float fb = std::fabs(query[b]);
                          return fa != fb ? fa > fb : a < b;
                      });
    const float top = std::fabs(query[order[0]]);
    std::vector<std::uint32_t> dims;
    std::vector<std::int32_t> weights;
    if (top > 0) {
        const float to_weight = k_weight_max / top;
        for (std::size_t j = 0; j < scan; ++j) {
            const auto w = static_cast<std::int32_t>(std::lrintf(query[order[j]] * to_weight));
            if (w == 0) continue;
            dims.push_back(order[j]);
            weights.push_back(w);
        }
    }
    const std::size_t pairs = (dims.size() + 1) / 2;
    std::vector<std::uint32_t> packed(pairs);
    for (std::size_t p = 0; p < pairs; ++p) {
        const std::int32_t lo = weights[2 * p];
        const std::int32_t hi = 2 * p + 1 < weights.size() ? weights[2 * p + 1] : 0;
        packed[p] = (static_cast<std::uint32_t>(static_cast<std::uint16_t>(hi)) << 16) |
                    static_cast<std::uint16_t>(lo);
    }

    // The best `pool` slots by approximate score (code sum x the vector's scale).
    const std::size_t pool = std::max(want, m_options.pool);
    using Candidate = std::pair<float, std::size_t>;  // approximate score, slot
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> best;
    std::vector<const std::int8_t*> columns(2 * pairs);
    std::vector<std::int32_t> sums(k_block);
    std::vector<std::uint32_t> hit_rows(k_block);
    std::vector<float> hit_scores(k_block);
    for (std::size_t b = 0; b < m_blocks.size(); ++b) {
        const Block& block = *m_blocks[b];
        const std::size_t rows = std::min(k_block, m_count - b * k_block);
        for (std::size_t j = 0; j < 2 * pairs; ++j)
            columns[j] = j < dims.size() ? block.codes.get() + dims[j] * k_block : k_zeros;
        const std::size_t padded = (rows + 31) / 32 * 32;
        kernels::accumulate_columns(columns.data(), packed.data(), pairs, padded, sums.data(), m_options.use_avx2);
        // Rows the pool can take: all while it fills, then those above its worst (which only rises).
        const float bar = best.size() < pool ? -std::numeric_limits<float>::infinity() : best.top().first;
        const std::size_t found = kernels::rows_above(sums.data(), block.scales.data(), rows, bar, hit_rows.data(),
                                                      hit_scores.data(), m_options.use_avx2);
        for (std::size_t h = 0; h < found; ++h) {
            const std::size_t slot = b * k_block + hit_rows[h];
            if (best.size() < pool) {
                best.emplace(hit_scores[h], slot);
            } else if (hit_scores[h] > best.top().first) {
                best.pop();
                best.emplace(hit_scores[h], slot);
            }
        }
    }

    std::vector<VectorMatch> out;
    out.reserve(best.size());
    while (!best.empty()) {
        const std::size_t slot = best.top().second;
        best.pop();
        const Block& block = *m_blocks[slot / k_block];
        out.push_back({block.ids[slot % k_block], kernels::dot_f32(query, floats_at(slot), m_dim)});
    }
    std::sort(out.begin(), out.end(), [](const VectorMatch& a, const VectorMatch& b) {
        return a.score != b.score ? a.score > b.score : a.id < b.id;
    });
    if (out.size() > want) out.resize(want);
    return out;
}

std::string ColumnIndex::describe() const {
    return "columns(int8,dims=" + std::to_string(dims_scanned()) + "/" + std::to_string(m_dim) +
           ",pool=" + std::to_string(m_options.pool) + "," +
           (m_options.use_avx2 && kernels::cpu_has_avx2() ? "avx2" : "portable") + ")+rescore(f32)";
}

}  // namespace memfail::memory

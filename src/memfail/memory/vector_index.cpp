// SPDX-License-Identifier: MIT
// VectorIndex over hnswlib: exact float search while small, then an HNSW graph over int8 codes whose
// best candidates are re-scored with the float vectors kept beside it. hnswlib 0.6 has sharp edges
// this file keeps away from callers: BruteforceSearch has a fixed capacity and reads past its data
// when k exceeds its size, and both indexes throw on unknown labels, so every call is guarded here.
#include <memfail/memory/vector_index.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include <hnswlib/hnswlib.h>

#include <memfail/core/error.hpp>
#include <memfail/memory/vector_kernels.hpp>

namespace memfail::memory {

namespace {
constexpr std::size_t k_initial_capacity = 1024;

// The system hnswlib is compiled here with SSE only (no -mavx in the build flags), so its inner
// product reads 4 floats per step. Every distance in exact search and HNSW goes through this space
// instead: kernels::dot_f32 (AVX2/FMA when the CPU has it).
float inner_product_distance(const void* a, const void* b, const void* dim) {
    return 1.0F - kernels::dot_f32(static_cast<const float*>(a), static_cast<const float*>(b),
                                   *static_cast<const std::size_t*>(dim));
}

class DotSpace final : public hnswlib::SpaceInterface<float> {
public:
    explicit DotSpace(std::size_t dim) : m_dim(dim) {}
    std::size_t get_data_size() override { return m_dim * sizeof(float); }
    hnswlib::DISTFUNC<float> get_dist_func() override { return &inner_product_distance; }
    void* get_dist_func_param() override { return &m_dim; }

private:
    std::size_t m_dim;
};

// The graph's element: the vector as int8 codes, padded with zeros to a multiple of 64, then its
// float scale (value = code x scale). Per-vector max-abs scaling keeps the error of an inner product
// near 1e-3 for unit vectors, far below the gaps re-scoring has to settle.
class Int8Space final : public hnswlib::SpaceInterface<float> {
public:
    explicit Int8Space(std::size_t dim) : m_param{dim, (dim + 63) / 64 * 64} {}
    std::size_t get_data_size() override { return m_param.padded + sizeof(float); }
    hnswlib::DISTFUNC<float> get_dist_func() override { return &distance; }
    void* get_dist_func_param() override { return &m_param; }

    // Writes the element for `vector` (dim floats) into `out` (get_data_size() bytes).
    void encode(const float* vector, char* out) const {
        float top = 0;
        for (std::size_t i = 0; i < m_param.dim; ++i) top = std::max(top, std::fabs(vector[i]));
        auto* codes = reinterpret_cast<std::int8_t*>(out);
        std::fill(codes, codes + m_param.padded, std::int8_t{0});
        const float scale = top > 0 ? top / 127.0F : 0.0F;
        if (top > 0) {
            const float inverse = 127.0F / top;
            for (std::size_t i = 0; i < m_param.dim; ++i)
                codes[i] = static_cast<std::int8_t>(std::lrintf(vector[i] * inverse));
        }
        std::memcpy(out + m_param.padded, &scale, sizeof scale);
    }

private:
    struct Param {
        std::size_t dim;
        std::size_t padded;
    };
    static float distance(const void* a_ptr, const void* b_ptr, const void* param_ptr) {
        const std::size_t n = static_cast<const Param*>(param_ptr)->padded;
        const auto* a = static_cast<const std::int8_t*>(a_ptr);
        const auto* b = static_cast<const std::int8_t*>(b_ptr);
        float scale_a = 0;
        float scale_b = 0;
        std::memcpy(&scale_a, a + n, sizeof scale_a);
        std::memcpy(&scale_b, b + n, sizeof scale_b);
        const std::int32_t dot = kernels::dot_int8(a, b, n);
        return 1.0F - static_cast<float>(dot) * scale_a * scale_b;
    }

    Param m_param;
};

using Exact = hnswlib::BruteforceSearch<float>;
using Hnsw = hnswlib::HierarchicalNSW<float>;

std::vector<VectorMatch> drain(std::priority_queue<std::pair<float, hnswlib::labeltype>> queue) {
    // hnswlib queues pop the farthest first; distance is 1 - inner product.
    std::vector<VectorMatch> out;
    out.reserve(queue.size());
    while (!queue.empty()) {
        const auto [distance, label] = queue.top();
        queue.pop();
        out.push_back({static_cast<std::int64_t>(label), 1.0F - distance});
    }
    std::sort(out.begin(), out.end(), [](const VectorMatch& a, const VectorMatch& b) {
        return a.score != b.score ? a.score > b.score : a.id < b.id;
    });
    return out;
}

// The ef searches use when the options leave it to the index. The ef a given recall needs grows
// with the graph, and so does the cost of each step, so ef steps up with the size while the tail
// stays under 5 ms. Measured by bench_retrieval (hashed 512-dimension vectors, M=32, int8 codes,
// re-scoring; bench/README.md), recall@10 against exact search: 0.976 at 10k (ef=128), 0.943 at
// 100k and 0.90 at 300k (ef=256), 0.907 at 1M (ef=512: 2.6 ms median, 3.0 ms CPU p99). At 1M,
// ef=1024 and 2048 reached 0.95 and 0.97 but at 4.6 and 8.3 ms median, past the 5 ms budget.
std::size_t auto_ef_search(std::size_t size) {
    if (size <= 30'000) return 128;
    if (size <= 300'000) return 256;
    return 512;
}
}  // namespace

struct VectorIndex::Impl {
    explicit Impl(VectorIndexOptions o)
        : options(o), dim(static_cast<std::size_t>(o.dim)), space(dim), codes(dim),
          scratch(codes.get_data_size()), float_distance(space.get_dist_func()),
          float_param(space.get_dist_func_param()) {
        reset_exact(k_initial_capacity);
    }

    void reset_exact(std::size_t capacity) {
        hnsw.reset();
        columns.reset();
        full.clear();
        full.shrink_to_fit();
        exact = std::make_unique<Exact>(&space, capacity);
        exact_capacity = capacity;
        live = 0;
    }

    // Calls visit(vector, label) for each vector the exact index holds, in its order.
    template <class Visit>
    void each_exact(Visit&& visit) const {
        for (std::size_t i = 0; i < exact->cur_element_count; ++i) {
            const char* element = exact->data_ + exact->size_per_element_ * i;
            hnswlib::labeltype label = 0;
            std::memcpy(&label, element + exact->data_size_, sizeof label);
            visit(reinterpret_cast<const float*>(element), label);
        }
    }

    // Copies the exact index into one with twice the room (BruteforceSearch cannot grow).
    void grow_exact() {
        auto bigger = std::make_unique<Exact>(&space, exact_capacity * 2);
        each_exact([&](const float* vector, hnswlib::labeltype label) { bigger->addPoint(vector, label); });
        exact = std::move(bigger);
        exact_capacity *= 2;
    }

    // Past the exact limit: into the column index, or into a graph.
    void move_to_large() {
        if (options.large == LargeIndex::hnsw) {
            move_to_hnsw();
            return;
        }
        columns = std::make_unique<ColumnIndex>(dim, options.columns);
        each_exact([&](const float* vector, hnswlib::labeltype label) {
            columns->add(static_cast<std::int64_t>(label), vector);
        });
        exact.reset();
    }

    void move_to_hnsw() {
        const std::size_t count = exact->cur_element_count;
        hnswlib::SpaceInterface<float>* graph_space = options.hnsw_quantize
                                                          ? static_cast<hnswlib::SpaceInterface<float>*>(&codes)
                                                          : &space;
        hnsw = std::make_unique<Hnsw>(graph_space, std::max(count * 2, k_initial_capacity), options.hnsw_m,
                                      options.hnsw_ef_construction, options.hnsw_seed);
        if (options.hnsw_quantize) full.reserve(std::max(count * 2, k_initial_capacity) * dim);
        each_exact([&](const float* vector, hnswlib::labeltype label) { graph_add(vector, label); });
        live = count;
        exact.reset();
        sync_ef();
    }

    // Inserts (or replaces) `label` in the graph, and keeps its floats beside it when the graph
    // holds codes. hnswlib numbers new elements 0, 1, 2... and keeps a replaced element's number.
    void graph_add(const float* vector, hnswlib::labeltype label) {
        if (hnsw->cur_element_count == hnsw->max_elements_ &&
            hnsw->label_lookup_.find(label) == hnsw->label_lookup_.end())
            hnsw->resizeIndex(hnsw->max_elements_ * 2);
        if (!options.hnsw_quantize) {
            hnsw->addPoint(vector, label);
            return;
        }
        codes.encode(vector, scratch.data());
        const std::size_t internal = hnsw->addPoint(scratch.data(), label, -1);
        if (internal * dim == full.size()) {
            full.insert(full.end(), vector, vector + dim);
        } else {
            std::copy(vector, vector + dim, full.begin() + static_cast<std::ptrdiff_t>(internal * dim));
        }
    }

    std::size_t exact_limit() const {
        if (options.hnsw_threshold != 0) return options.hnsw_threshold;
        return std::max<std::size_t>(VectorIndexOptions::k_exact_floats / dim, 1);
    }

    std::size_t ef_search() const {
        if (!hnsw) return 0;
        return options.hnsw_ef_search != 0 ? options.hnsw_ef_search : auto_ef_search(live);
    }

    // The ef for the current size, set where the size changes.
    void sync_ef() { hnsw->setEf(ef_search()); }

    bool hnsw_holds(hnswlib::labeltype label) const {
        auto it = hnsw->label_lookup_.find(label);
        return it != hnsw->label_lookup_.end() && !hnsw->isMarkedDeleted(it->second);
    }

    std::vector<VectorMatch> search_hnsw(const float* query, std::size_t want) const {
        // hnswlib searches with max(ef, k); ef itself is set by adds and removals (sync_ef), so a
        // search writes nothing.
        if (!options.hnsw_quantize) return drain(hnsw->searchKnn(query, want));
        // A pool wider than k: the codes rank candidates only roughly, the floats settle the order.
        const std::size_t pool = std::max(want, options.rescore_pool);
        std::vector<char> encoded(scratch.size());
        codes.encode(query, encoded.data());
        auto candidates = hnsw->searchKnn(encoded.data(), pool);
        std::vector<VectorMatch> out;
        out.reserve(candidates.size());
        while (!candidates.empty()) {
            const hnswlib::labeltype label = candidates.top().second;
            candidates.pop();
            const std::size_t internal = hnsw->label_lookup_.at(label);
            const float score = 1.0F - float_distance(query, full.data() + internal * dim, float_param);
            out.push_back({static_cast<std::int64_t>(label), score});
        }
        std::sort(out.begin(), out.end(), [](const VectorMatch& a, const VectorMatch& b) {
            return a.score != b.score ? a.score > b.score : a.id < b.id;
        });
        if (out.size() > want) out.resize(want);
        return out;
    }

    VectorIndexOptions options;
    std::size_t dim;
    DotSpace space;   // outlives both indexes, which keep a pointer to it
    Int8Space codes;  // the graph's space when options.hnsw_quantize
    std::vector<char> scratch;  // one encoded element, for inserts
    hnswlib::DISTFUNC<float> float_distance;  // space's, for re-scoring
    void* float_param;
    std::unique_ptr<Exact> exact;
    std::size_t exact_capacity = 0;
    std::unique_ptr<Hnsw> hnsw;
    std::unique_ptr<ColumnIndex> columns;  // options.large == columns, past the exact limit
    std::vector<float> full;  // HNSW with codes only: dim floats per element, by hnswlib's number
    std::size_t live = 0;     // HNSW only: elements not marked deleted
};

VectorIndex::VectorIndex(VectorIndexOptions options) {
    MF_ASSERT(options.dim > 0, "a vector index needs at least one dimension");
    MF_ASSERT(options.hnsw_m >= 2, "HNSW needs M >= 2");
    m_impl = std::make_unique<Impl>(options);
}

VectorIndex::~VectorIndex() = default;
VectorIndex::VectorIndex(VectorIndex&&) noexcept = default;
VectorIndex& VectorIndex::operator=(VectorIndex&&) noexcept = default;

int VectorIndex::dim() const { return m_impl->options.dim; }

void VectorIndex::add(std::int64_t id, std::span<const float> vector) {
    MF_ASSERT(id >= 0, "vector ids are non-negative");
    MF_ASSERT(vector.size() == static_cast<std::size_t>(m_impl->options.dim),
              "vector size differs from the index dimension");
    Impl& impl = *m_impl;
    const auto label = static_cast<hnswlib::labeltype>(id);
    if (impl.exact) {
        const bool known = impl.exact->dict_external_to_internal.count(label) > 0;
        if (!known) {
            if (impl.exact->cur_element_count + 1 > impl.exact_limit()) {
                impl.move_to_large();
            } else if (impl.exact->cur_element_count == impl.exact_capacity) {
                impl.grow_exact();
            }
        }
        if (impl.exact) {
            impl.exact->addPoint(vector.data(), label);
            return;
        }
    }
    if (impl.columns) {
        impl.columns->add(id, vector.data());
        return;
    }
    Hnsw& hnsw = *impl.hnsw;
    auto it = hnsw.label_lookup_.find(label);
    // Replacing (or reviving a deleted) element updates it in place.
    if (it == hnsw.label_lookup_.end() || hnsw.isMarkedDeleted(it->second)) ++impl.live;
    impl.graph_add(vector.data(), label);
    impl.sync_ef();
}

bool VectorIndex::remove(std::int64_t id) {
    if (id < 0) return false;
    Impl& impl = *m_impl;
    const auto label = static_cast<hnswlib::labeltype>(id);
    if (impl.columns) return impl.columns->remove(id);
    if (impl.exact) {
        if (impl.exact->dict_external_to_internal.count(label) == 0) return false;
        impl.exact->removePoint(label);
        // hnswlib 0.6 re-registers the label when the removed element was the last one.
        impl.exact->dict_external_to_internal.erase(label);
        return true;
    }
    if (!impl.hnsw_holds(label)) return false;
    impl.hnsw->markDelete(label);
    --impl.live;
    impl.sync_ef();
    return true;
}

void VectorIndex::clear() { m_impl->reset_exact(k_initial_capacity); }

std::vector<VectorMatch> VectorIndex::search(std::span<const float> query, int k) const {
    MF_ASSERT(query.size() == static_cast<std::size_t>(m_impl->options.dim),
              "query size differs from the index dimension");
    const std::size_t held = size();
    if (k <= 0 || held == 0) return {};
    const std::size_t want = std::min(static_cast<std::size_t>(k), held);
    if (m_impl->columns) return m_impl->columns->search(query.data(), want);
    if (m_impl->hnsw) return m_impl->search_hnsw(query.data(), want);
    return drain(m_impl->exact->searchKnn(query.data(), want));
}

std::size_t VectorIndex::size() const {
    if (m_impl->columns) return m_impl->columns->size();
    return m_impl->hnsw ? m_impl->live : m_impl->exact->cur_element_count;
}

bool VectorIndex::is_approximate() const { return m_impl->exact == nullptr; }

std::size_t VectorIndex::exact_limit() const { return m_impl->exact_limit(); }

std::size_t VectorIndex::ef_search() const { return m_impl->ef_search(); }

std::string VectorIndex::describe() const {
    const Impl& impl = *m_impl;
    const std::string kernel = kernels::cpu_has_avx2() ? "avx2" : "portable";
    if (impl.columns) return impl.columns->describe();
    if (!impl.hnsw) return "exact(f32," + kernel + ")";
    const VectorIndexOptions& o = impl.options;
    std::string out = std::string("hnsw(") + (o.hnsw_quantize ? "int8" : "f32") +
                      ",M=" + std::to_string(o.hnsw_m) + ",efc=" + std::to_string(o.hnsw_ef_construction) +
                      ",ef=" + std::to_string(impl.ef_search()) + "," + kernel + ")";
    if (o.hnsw_quantize) out += "+rescore(f32,pool=" + std::to_string(o.rescore_pool) + ")";
    return out;
}

bool VectorIndex::uses_avx2() { return kernels::cpu_has_avx2(); }

}  // namespace memfail::memory

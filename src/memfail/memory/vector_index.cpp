// SPDX-License-Identifier: MIT
// VectorIndex over hnswlib. hnswlib 0.6 has sharp edges this file keeps away from callers:
// BruteforceSearch has a fixed capacity and reads past its data when k exceeds its size, and both
// indexes throw on unknown labels, so every call is guarded here.
#include <memfail/memory/vector_index.hpp>

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <hnswlib/hnswlib.h>

#include <memfail/core/error.hpp>

namespace memfail::memory {

namespace {
constexpr std::size_t k_initial_capacity = 1024;

// The system hnswlib is compiled here with SSE only (no -mavx in the build flags), so its inner
// product reads 4 floats per step. Every distance in exact search and HNSW goes through this space
// instead: an AVX2/FMA kernel when the CPU has it (checked at run time, so a binary built here still
// runs on an older CPU), else hnswlib's own function.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MEMFAIL_HAS_AVX2_KERNEL 1
__attribute__((target("avx2,fma"))) float inner_product_distance_avx2(const void* a_ptr, const void* b_ptr,
                                                                      const void* dim_ptr) {
    const auto* a = static_cast<const float*>(a_ptr);
    const auto* b = static_cast<const float*>(b_ptr);
    const std::size_t dim = *static_cast<const std::size_t*>(dim_ptr);
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(),
           s3 = _mm256_setzero_ps();
    std::size_t i = 0;
    for (; i + 32 <= dim; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= dim; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    const __m256 sum = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    __m128 half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
    half = _mm_add_ps(half, _mm_movehl_ps(half, half));
    half = _mm_add_ss(half, _mm_movehdup_ps(half));
    float total = _mm_cvtss_f32(half);
    for (; i < dim; ++i) total += a[i] * b[i];
    return 1.0F - total;
}

bool cpu_has_avx2() {
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return has;
}
#else
bool cpu_has_avx2() { return false; }
#endif

class DotSpace final : public hnswlib::SpaceInterface<float> {
public:
    explicit DotSpace(std::size_t dim) : m_fallback(dim), m_dim(dim) {
        m_function = m_fallback.get_dist_func();
#ifdef MEMFAIL_HAS_AVX2_KERNEL
        if (cpu_has_avx2()) m_function = &inner_product_distance_avx2;
#endif
    }
    std::size_t get_data_size() override { return m_dim * sizeof(float); }
    hnswlib::DISTFUNC<float> get_dist_func() override { return m_function; }
    void* get_dist_func_param() override { return &m_dim; }

private:
    hnswlib::InnerProductSpace m_fallback;
    std::size_t m_dim;
    hnswlib::DISTFUNC<float> m_function;
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
}  // namespace

struct VectorIndex::Impl {
    explicit Impl(VectorIndexOptions o) : options(o), space(static_cast<std::size_t>(o.dim)) {
        reset_exact(k_initial_capacity);
    }

    void reset_exact(std::size_t capacity) {
        hnsw.reset();
        exact = std::make_unique<Exact>(&space, capacity);
        exact_capacity = capacity;
        live = 0;
    }

    // Copies the exact index into one with twice the room (BruteforceSearch cannot grow).
    void grow_exact() {
        auto bigger = std::make_unique<Exact>(&space, exact_capacity * 2);
        for (std::size_t i = 0; i < exact->cur_element_count; ++i) {
            const char* element = exact->data_ + exact->size_per_element_ * i;
            hnswlib::labeltype label = 0;
            std::memcpy(&label, element + exact->data_size_, sizeof label);
            bigger->addPoint(element, label);
        }
        exact = std::move(bigger);
        exact_capacity *= 2;
    }

    void move_to_hnsw() {
        const std::size_t count = exact->cur_element_count;
        hnsw = std::make_unique<Hnsw>(&space, std::max(count * 2, k_initial_capacity), options.hnsw_m,
                                      options.hnsw_ef_construction, options.hnsw_seed);
        hnsw->setEf(options.hnsw_ef_search);
        for (std::size_t i = 0; i < count; ++i) {
            const char* element = exact->data_ + exact->size_per_element_ * i;
            hnswlib::labeltype label = 0;
            std::memcpy(&label, element + exact->data_size_, sizeof label);
            hnsw->addPoint(element, label);
        }
        live = count;
        exact.reset();
    }

    std::size_t exact_limit() const {
        if (options.hnsw_threshold != 0) return options.hnsw_threshold;
        return std::max<std::size_t>(VectorIndexOptions::k_exact_floats / static_cast<std::size_t>(options.dim), 1);
    }

    bool hnsw_holds(hnswlib::labeltype label) const {
        auto it = hnsw->label_lookup_.find(label);
        return it != hnsw->label_lookup_.end() && !hnsw->isMarkedDeleted(it->second);
    }

    VectorIndexOptions options;
    DotSpace space;  // outlives both indexes, which keep a pointer to it
    std::unique_ptr<Exact> exact;
    std::size_t exact_capacity = 0;
    std::unique_ptr<Hnsw> hnsw;
    std::size_t live = 0;  // HNSW only: elements not marked deleted
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
    if (!impl.hnsw) {
        const bool known = impl.exact->dict_external_to_internal.count(label) > 0;
        if (!known) {
            if (impl.exact->cur_element_count + 1 > impl.exact_limit()) {
                impl.move_to_hnsw();
            } else if (impl.exact->cur_element_count == impl.exact_capacity) {
                impl.grow_exact();
            }
        }
        if (!impl.hnsw) {
            impl.exact->addPoint(vector.data(), label);
            return;
        }
    }
    Hnsw& hnsw = *impl.hnsw;
    auto it = hnsw.label_lookup_.find(label);
    if (it != hnsw.label_lookup_.end()) {
        // Replacing (or reviving a deleted) element updates it in place.
        if (hnsw.isMarkedDeleted(it->second)) ++impl.live;
        hnsw.addPoint(vector.data(), label);
        return;
    }
    if (hnsw.cur_element_count == hnsw.max_elements_) hnsw.resizeIndex(hnsw.max_elements_ * 2);
    hnsw.addPoint(vector.data(), label);
    ++impl.live;
}

bool VectorIndex::remove(std::int64_t id) {
    if (id < 0) return false;
    Impl& impl = *m_impl;
    const auto label = static_cast<hnswlib::labeltype>(id);
    if (!impl.hnsw) {
        if (impl.exact->dict_external_to_internal.count(label) == 0) return false;
        impl.exact->removePoint(label);
        // hnswlib 0.6 re-registers the label when the removed element was the last one.
        impl.exact->dict_external_to_internal.erase(label);
        return true;
    }
    if (!impl.hnsw_holds(label)) return false;
    impl.hnsw->markDelete(label);
    --impl.live;
    return true;
}

void VectorIndex::clear() { m_impl->reset_exact(k_initial_capacity); }

std::vector<VectorMatch> VectorIndex::search(std::span<const float> query, int k) const {
    MF_ASSERT(query.size() == static_cast<std::size_t>(m_impl->options.dim),
              "query size differs from the index dimension");
    const std::size_t held = size();
    if (k <= 0 || held == 0) return {};
    const std::size_t want = std::min(static_cast<std::size_t>(k), held);
    if (m_impl->hnsw) return drain(m_impl->hnsw->searchKnn(query.data(), want));
    return drain(m_impl->exact->searchKnn(query.data(), want));
}

std::size_t VectorIndex::size() const {
    return m_impl->hnsw ? m_impl->live : m_impl->exact->cur_element_count;
}

bool VectorIndex::is_approximate() const { return m_impl->hnsw != nullptr; }

std::size_t VectorIndex::exact_limit() const { return m_impl->exact_limit(); }

bool VectorIndex::uses_avx2() { return cpu_has_avx2(); }

}  // namespace memfail::memory

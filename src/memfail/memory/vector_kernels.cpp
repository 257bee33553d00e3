// SPDX-License-Identifier: MIT
// Vector kernels: AVX2 where the CPU has it (target attributes, so the rest of the build needs no
// -mavx2), portable loops otherwise, with identical integer results.
#include <memfail/memory/vector_kernels.hpp>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace memfail::memory::kernels {

namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MEMFAIL_HAS_AVX2_KERNELS 1

__attribute__((target("avx2,fma"))) float dot_f32_avx2(const float* a, const float* b, std::size_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(),
           s3 = _mm256_setzero_ps();
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    const __m256 sum = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    __m128 half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
    half = _mm_add_ps(half, _mm_movehl_ps(half, half));
    half = _mm_add_ss(half, _mm_movehdup_ps(half));
    float total = _mm_cvtss_f32(half);
    for (; i < n; ++i) total += a[i] * b[i];
    return total;
}

// |a| times sign(b, a) turns signed x signed into the unsigned x signed pairs vpmaddubsw takes
// (codes lie in [-127, 127], so a pair sum stays within int16).
__attribute__((target("avx2"))) std::int32_t dot_int8_avx2(const std::int8_t* a, const std::int8_t* b,
                                                           std::size_t n) {
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    const __m256i ones = _mm256_set1_epi16(1);
    for (std::size_t i = 0; i < n; i += 64) {
        const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
        const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i));
        const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i + 32));
        const __m256i y1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i + 32));
        const __m256i p0 = _mm256_maddubs_epi16(_mm256_sign_epi8(x0, x0), _mm256_sign_epi8(y0, x0));
        const __m256i p1 = _mm256_maddubs_epi16(_mm256_sign_epi8(x1, x1), _mm256_sign_epi8(y1, x1));
        acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(p0, ones));
        acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(p1, ones));
    }
    const __m256i acc = _mm256_add_epi32(acc0, acc1);
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

// 32 rows at a time, all in registers: two columns' int8 codes widened to int16 and interleaved
// (row i of the first column beside row i of the second), so one vpmaddwd multiplies both by their
// weights and adds them into int32. The interleave works within 128-bit lanes, leaving rows in the
// order [0-3, 8-11] and [4-7, 12-15]; the lane permutes at the end put them back.
__attribute__((target("avx2"))) void accumulate_columns_avx2(const std::int8_t* const* columns,
                                                             const std::uint32_t* weights, std::size_t pairs,
                                                             std::size_t count, std::int32_t* out) {
    for (std::size_t i = 0; i < count; i += 32) {
        __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256(), a2 = _mm256_setzero_si256(),
                a3 = _mm256_setzero_si256();
        for (std::size_t p = 0; p < pairs; ++p) {
            const __m256i w = _mm256_set1_epi32(static_cast<int>(weights[p]));
            const std::int8_t* first = columns[2 * p] + i;
            const std::int8_t* second = columns[2 * p + 1] + i;
            const __m256i x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(first)));
            const __m256i y0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(second)));
            const __m256i x1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(first + 16)));
            const __m256i y1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(second + 16)));
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, y0), w));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, y0), w));
            a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_unpacklo_epi16(x1, y1), w));
            a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_unpackhi_epi16(x1, y1), w));
        }
        auto* o = reinterpret_cast<__m256i*>(out + i);
        _mm256_storeu_si256(o, _mm256_permute2x128_si256(a0, a1, 0x20));
        _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(a0, a1, 0x31));
        _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(a2, a3, 0x20));
        _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(a2, a3, 0x31));
    }
}

// Eight scores per step; rows below the threshold (nearly all, once the pool has filled) cost one
// compare and a movemask.
__attribute__((target("avx2"))) std::size_t rows_above_avx2(const std::int32_t* sums, const float* scales,
                                                             std::size_t count, float threshold,
                                                             std::uint32_t* rows_out, float* scores_out) {
    std::size_t found = 0;
    const __m256 bar = _mm256_set1_ps(threshold);
    std::size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256 score = _mm256_mul_ps(
            _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sums + i))),
            _mm256_loadu_ps(scales + i));
        auto mask = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(score, bar, _CMP_GT_OQ)));
        if (mask == 0) continue;
        alignas(32) float lane[8];
        _mm256_store_ps(lane, score);
        while (mask != 0) {
            const int bit = __builtin_ctz(mask);
            mask &= mask - 1;
            rows_out[found] = static_cast<std::uint32_t>(i) + static_cast<std::uint32_t>(bit);
            scores_out[found++] = lane[bit];
        }
    }
    for (; i < count; ++i) {
        const float score = static_cast<float>(sums[i]) * scales[i];
        if (score > threshold) {
            rows_out[found] = static_cast<std::uint32_t>(i);
            scores_out[found++] = score;
        }
    }
    return found;
}
#endif

std::int32_t low_weight(std::uint32_t packed) { return static_cast<std::int16_t>(packed & 0xFFFFU); }
std::int32_t high_weight(std::uint32_t packed) { return static_cast<std::int16_t>(packed >> 16); }

}  // namespace

bool cpu_has_avx2() {
#ifdef MEMFAIL_HAS_AVX2_KERNELS
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return has;
#else
    return false;
#endif
}

float dot_f32(const float* a, const float* b, std::size_t n) {
#ifdef MEMFAIL_HAS_AVX2_KERNELS
    if (cpu_has_avx2()) return dot_f32_avx2(a, b, n);
#endif
    float total = 0;
    for (std::size_t i = 0; i < n; ++i) total += a[i] * b[i];
    return total;
}

std::int32_t dot_int8(const std::int8_t* a, const std::int8_t* b, std::size_t n) {
#ifdef MEMFAIL_HAS_AVX2_KERNELS
    if (cpu_has_avx2()) return dot_int8_avx2(a, b, n);
#endif
    std::int32_t total = 0;
    for (std::size_t i = 0; i < n; ++i) total += std::int32_t{a[i]} * std::int32_t{b[i]};
    return total;
}

void accumulate_columns(const std::int8_t* const* columns, const std::uint32_t* weights, std::size_t pairs,
                        std::size_t count, std::int32_t* out, bool use_avx2) {
#ifdef MEMFAIL_HAS_AVX2_KERNELS
    if (use_avx2 && cpu_has_avx2()) {
        accumulate_columns_avx2(columns, weights, pairs, count, out);
        return;
    }
#endif
    for (std::size_t i = 0; i < count; ++i) out[i] = 0;
    for (std::size_t p = 0; p < pairs; ++p) {
        const std::int32_t lo = low_weight(weights[p]);
        const std::int32_t hi = high_weight(weights[p]);
        const std::int8_t* first = columns[2 * p];
        const std::int8_t* second = columns[2 * p + 1];
        for (std::size_t i = 0; i < count; ++i) out[i] += first[i] * lo + second[i] * hi;
    }
}

std::size_t rows_above(const std::int32_t* sums, const float* scales, std::size_t count, float threshold,
                       std::uint32_t* rows_out, float* scores_out, bool use_avx2) {
#ifdef MEMFAIL_HAS_AVX2_KERNELS
    if (use_avx2 && cpu_has_avx2()) return rows_above_avx2(sums, scales, count, threshold, rows_out, scores_out);
#endif
    std::size_t found = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const float score = static_cast<float>(sums[i]) * scales[i];
        if (score > threshold) {
            rows_out[found] = static_cast<std::uint32_t>(i);
            scores_out[found++] = score;
        }
    }
    return found;
}

}  // namespace memfail::memory::kernels

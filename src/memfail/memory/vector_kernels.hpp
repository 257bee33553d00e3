// SPDX-License-Identifier: MIT
// The inner loops of vector search, with an AVX2 version chosen at run time (a binary built here
// still runs on a CPU without it) and a portable one that returns the same numbers: float and int8
// dot products, and the column scan behind ColumnIndex.
#pragma once
#include <cstddef>
#include <cstdint>

namespace memfail::memory::kernels {

// True when the CPU has AVX2 and FMA (checked once).
bool cpu_has_avx2();

// Inner product of two float vectors (AVX2/FMA when the CPU has it).
float dot_f32(const float* a, const float* b, std::size_t n);

// Inner product of two int8 code vectors whose length is a multiple of 64 (codes in [-127, 127]).
std::int32_t dot_int8(const std::int8_t* a, const std::int8_t* b, std::size_t n);

// The column scan: for each of `count` rows (a multiple of 32),
//   out[i] = sum over p < pairs of  columns[2p][i] * lo16(weights[p]) + columns[2p+1][i] * hi16(weights[p])
// where weights[p] packs two int16 weights (the first column's in the low half). Exact int32
// arithmetic: with weights within +-4095 and codes within +-127 no sum of 512 terms overflows.
// `use_avx2` false forces the portable loop (same results; for tests).
void accumulate_columns(const std::int8_t* const* columns, const std::uint32_t* weights, std::size_t pairs,
                        std::size_t count, std::int32_t* out, bool use_avx2 = true);

// The rows i < count whose score sums[i] x scales[i] is above `threshold`: their numbers go to
// rows_out and their scores to scores_out (each with room for `count`); returns how many. Rows
// beyond a block's live ones carry scale 0 and score 0.
std::size_t rows_above(const std::int32_t* sums, const float* scales, std::size_t count, float threshold,
                       std::uint32_t* rows_out, float* scores_out, bool use_avx2 = true);

}  // namespace memfail::memory::kernels

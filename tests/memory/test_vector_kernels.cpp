// SPDX-License-Identifier: MIT
// The vector kernels against naive loops: the AVX2 and portable versions must give the same
// numbers (the column scan's candidates, and so the diagnosis, must not depend on the CPU).
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <memfail/core/rng.hpp>
#include <memfail/memory/vector_kernels.hpp>

namespace memfail::memory {
namespace {

std::int8_t code(Rng& rng) {
    // A third of the codes at the extremes, where an overflow or a wrong sign would show.
    const auto r = rng.below(3);
    if (r == 0) return rng.below(2) == 0 ? std::int8_t{127} : std::int8_t{-127};
    return static_cast<std::int8_t>(static_cast<int>(rng.below(255)) - 127);
}

std::uint32_t pack(std::int32_t lo, std::int32_t hi) {
    return (static_cast<std::uint32_t>(static_cast<std::uint16_t>(hi)) << 16) | static_cast<std::uint16_t>(lo);
}

TEST(VectorKernels, ColumnScanMatchesANaiveSumOnBothPaths) {
    Rng rng(17);
    constexpr std::size_t k_rows = 96;
    for (const std::size_t column_count : {2U, 6U, 64U, 512U}) {
        std::vector<std::vector<std::int8_t>> columns(column_count, std::vector<std::int8_t>(k_rows));
        for (auto& column : columns)
            for (auto& c : column) c = code(rng);
        std::vector<std::int32_t> weights(column_count);
        for (auto& w : weights) w = rng.below(4) == 0 ? 4095 : static_cast<std::int32_t>(rng.below(8191)) - 4095;
        std::vector<const std::int8_t*> pointers;
        for (const auto& column : columns) pointers.push_back(column.data());
        std::vector<std::uint32_t> packed;
        for (std::size_t p = 0; p < column_count / 2; ++p) packed.push_back(pack(weights[2 * p], weights[2 * p + 1]));

        std::vector<std::int32_t> fast(k_rows, -1);
        std::vector<std::int32_t> portable(k_rows, -1);
        kernels::accumulate_columns(pointers.data(), packed.data(), packed.size(), k_rows, fast.data(), true);
        kernels::accumulate_columns(pointers.data(), packed.data(), packed.size(), k_rows, portable.data(), false);
        for (std::size_t i = 0; i < k_rows; ++i) {
            std::int64_t expected = 0;
            for (std::size_t c = 0; c < column_count; ++c) expected += std::int64_t{columns[c][i]} * weights[c];
            ASSERT_EQ(fast[i], expected) << "row " << i << " of " << column_count << " columns";
            ASSERT_EQ(portable[i], expected) << "row " << i << " of " << column_count << " columns";
        }
    }
}

TEST(VectorKernels, RowsAboveAThresholdAreTheSameOnBothPaths) {
    Rng rng(5);
    constexpr std::size_t k_rows = 203;  // not a multiple of 8: the tail loop runs too
    std::vector<std::int32_t> sums(k_rows);
    std::vector<float> scales(k_rows);
    for (std::size_t i = 0; i < k_rows; ++i) {
        sums[i] = static_cast<std::int32_t>(rng.below(200001)) - 100000;
        scales[i] = static_cast<float>(rng.unit()) * 1e-3F;
    }
    scales[7] = 0;  // a padding row: never above a positive bar
    for (const float bar : {-1e30F, 0.0F, 20.0F, 1e30F}) {
        std::vector<std::uint32_t> rows_a(k_rows), rows_b(k_rows);
        std::vector<float> scores_a(k_rows), scores_b(k_rows);
        const std::size_t a = kernels::rows_above(sums.data(), scales.data(), k_rows, bar, rows_a.data(), scores_a.data(), true);
        const std::size_t b = kernels::rows_above(sums.data(), scales.data(), k_rows, bar, rows_b.data(), scores_b.data(), false);
        std::size_t expected = 0;
        for (std::size_t i = 0; i < k_rows; ++i) expected += static_cast<float>(sums[i]) * scales[i] > bar ? 1 : 0;
        ASSERT_EQ(a, expected) << bar;
        ASSERT_EQ(b, expected) << bar;
        for (std::size_t i = 0; i < a; ++i) {
            EXPECT_EQ(rows_a[i], rows_b[i]);
            EXPECT_EQ(scores_a[i], scores_b[i]);
            EXPECT_EQ(scores_a[i], static_cast<float>(sums[rows_a[i]]) * scales[rows_a[i]]);
        }
    }
}

TEST(VectorKernels, DotProductsMatchNaiveLoops) {
    Rng rng(9);
    std::vector<std::int8_t> a(512), b(512);
    for (auto& c : a) c = code(rng);
    for (auto& c : b) c = code(rng);
    std::int32_t expected = 0;
    for (std::size_t i = 0; i < a.size(); ++i) expected += std::int32_t{a[i]} * b[i];
    EXPECT_EQ(kernels::dot_int8(a.data(), b.data(), a.size()), expected);

    std::vector<float> x(77), y(77);  // not a multiple of 8: the tail loop runs too
    double exact = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(rng.unit() - 0.5);
        y[i] = static_cast<float>(rng.unit() - 0.5);
        exact += double(x[i]) * y[i];
    }
    EXPECT_NEAR(kernels::dot_f32(x.data(), y.data(), x.size()), exact, 1e-5);
}

}  // namespace
}  // namespace memfail::memory

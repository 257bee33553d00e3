// SPDX-License-Identifier: MIT
// A deterministic random generator whose output is fixed by this code alone.
//
// std::uniform_int_distribution and std::shuffle may differ between standard libraries, which would
// make `--seed 42` produce different datasets on different machines; everything here is spelled out.
#pragma once
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include <memfail/core/error.hpp>

namespace memfail {

class Rng {
public:
    explicit Rng(std::uint64_t seed) : m_state(seed) {}

    // A child generator for a named stream, so adding draws to one part of a generator does not
    // shift every other part: Rng(seed).fork("persona").
    Rng fork(std::string_view stream) const;

    std::uint64_t next_u64();
    // Uniform in [0, n); n > 0.
    std::uint64_t below(std::uint64_t n);
    // Uniform in [lo, hi], inclusive.
    std::int64_t between(std::int64_t lo, std::int64_t hi);
    // True with probability p.
    bool chance(double p);
    double unit();  // in [0, 1)

    template <class T>
    void shuffle(std::vector<T>& items) {
        for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[below(i)]);
    }
    template <class T>
    const T& pick(const std::vector<T>& items) {
        MF_ASSERT(!items.empty(), "pick from an empty list");
        return items[below(items.size())];
    }
    // `count` distinct indices from [0, n), in random order.
    std::vector<std::size_t> sample_indices(std::size_t n, std::size_t count);

private:
    std::uint64_t m_state;
};

}  // namespace memfail

// SPDX-License-Identifier: MIT
// SplitMix64 generator with explicit, portable derived distributions.
#include <memfail/core/hash.hpp>
#include <memfail/core/rng.hpp>

namespace memfail {

Rng Rng::fork(std::string_view stream) const { return Rng(hash64(stream, m_state)); }

std::uint64_t Rng::next_u64() {
    std::uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::uint64_t Rng::below(std::uint64_t n) {
    MF_ASSERT(n > 0, "below(0) has no value");
    // Rejection sampling removes the modulo bias.
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    std::uint64_t x = next_u64();
    while (x >= limit) x = next_u64();
    return x % n;
}

std::int64_t Rng::between(std::int64_t lo, std::int64_t hi) {
    MF_ASSERT(lo <= hi, "between needs lo <= hi");
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
}

double Rng::unit() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

bool Rng::chance(double p) { return unit() < p; }

std::vector<std::size_t> Rng::sample_indices(std::size_t n, std::size_t count) {
    MF_ASSERT(count <= n, "cannot sample more indices than exist");
    std::vector<std::size_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = i;
    for (std::size_t i = 0; i < count; ++i) std::swap(all[i], all[i + below(n - i)]);
    all.resize(count);
    return all;
}

}  // namespace memfail

// SPDX-License-Identifier: MIT
// Wilson score interval.
#include <memfail/core/error.hpp>
#include <memfail/figures/stats.hpp>

#include <algorithm>
#include <cmath>

namespace memfail::report {

Interval wilson_interval(long successes, long trials, double z) {
    // Every rate memfail prints goes through here: a count above its denominator is a bug in the
    // counting (an error row in a numerator), never a rate above 100% to print.
    MF_ASSERT(successes >= 0 && successes <= std::max(trials, 0L), "a success count exceeds its probes");
    if (trials <= 0) return {0.0, 1.0};
    const double n = static_cast<double>(trials);
    const double p = static_cast<double>(successes) / n;
    const double z2 = z * z;
    const double denom = 1 + z2 / n;
    const double centre = (p + z2 / (2 * n)) / denom;
    const double half = z * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom;
    return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace memfail::report

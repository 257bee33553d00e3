// SPDX-License-Identifier: MIT
// Interval estimates for success rates.
#pragma once

namespace memfail::report {

struct Interval {
    double low = 0;
    double high = 0;
};

// 95% Wilson score interval for `successes` out of `trials` (the paper's error bars). For zero
// trials returns [0, 1].
Interval wilson_interval(long successes, long trials, double z = 1.959963984540054);

}  // namespace memfail::report

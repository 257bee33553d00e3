// SPDX-License-Identifier: MIT
// The published benchmarks (LoCoMo, LongMemEval), imported with their turn-level evidence so each
// miss is attributed to a stage; their own answer metrics are in metric.hpp.
#pragma once
#include <memfail/suites/suite.hpp>

namespace memfail::suites::benchmarks {

const Suite& benchmarks_suite();

}  // namespace memfail::suites::benchmarks

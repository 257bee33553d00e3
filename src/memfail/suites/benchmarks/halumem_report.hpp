// SPDX-License-Identifier: MIT
// HaluMem's operation figures in every report (the benchmarks suite's report section).
#pragma once
#include <memfail/figures/section.hpp>

namespace memfail::suites::benchmarks {

const report::SuiteReport& halumem_report();

}  // namespace memfail::suites::benchmarks

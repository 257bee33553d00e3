// SPDX-License-Identifier: MIT
// The version of the code that produced a result, recorded in every run.
#pragma once
#include <string_view>

namespace memfail {
// Returns "<project version>+<git describe>" as of the last CMake configure.
std::string_view code_version();
}  // namespace memfail

# SPDX-License-Identifier: MIT
# Warnings applied to every memfail target through memfail_warnings.
add_library(memfail_warnings INTERFACE)
target_compile_options(memfail_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter)

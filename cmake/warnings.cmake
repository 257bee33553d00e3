# SPDX-License-Identifier: MIT
# Warnings applied to every memfail target through memfail_warnings. Third-party code never gets
# them: every dependency is a Debian package whose headers are system headers (/usr/include, or
# SYSTEM include folders), so -Werror below can only trip on memfail's own code.
add_library(memfail_warnings INTERFACE)
target_compile_options(memfail_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
# GCC 12 at -O2 warns -Wrestrict inside libstdc++'s own memcpy when it inlines `"text" + str`
# (operator+ inserting at the front of a std::string): a false positive, GCC bugs 105329 and 105651
# (~30 places, e.g. text/tokenizer.cpp `"'" + std::string(encoding) + "'..."`). Each of GCC's
# warnings suppresses the next for the same statement, so with -Wrestrict off the same inlined memcpy
# is reported as -Wstringop-overflow ("bound ... exceeds maximum object size"), and with that off as
# -Warray-bounds ("pointer overflow between offset ..."): one false positive under three names. Only
# GCC 12 gets these three turned off; other compilers keep them.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(memfail_warnings INTERFACE -Wno-restrict -Wno-stringop-overflow -Wno-array-bounds)
endif()
# CI builds with MEMFAIL_WERROR=ON (`make test` passes it when CI=true), so a new warning fails CI.
option(MEMFAIL_WERROR "Treat warnings in memfail's own code as errors" OFF)
if(MEMFAIL_WERROR)
  target_compile_options(memfail_warnings INTERFACE -Werror)
endif()

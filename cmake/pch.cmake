# SPDX-License-Identifier: MIT
# Precompiled headers: the standard library headers most files use and nlohmann/json,
# parsed once per build instead of once per file. One PCH serves every library (made by
# memfail_core): the macros that differ between the libraries appear in none of these headers. The
# tests have none: GCC 12 refused one shared by the test executables (-Winvalid-pch).
# On by default in the sanitizer builds, where each file is compiled at -O0 with instrumentation
# (measured 2026-11-25 under ASan+UBSan with GCC 12: the 19 files of src/memfail/memory took 98 s
# of CPU without and 85 s with it, -13 %, for one PCH of ~5 s per build). Off in the release build,
# which so keeps checking that every file includes what it uses.
if(MEMFAIL_SANITIZE)
  set(_memfail_pch_default ON)
else()
  set(_memfail_pch_default OFF)
endif()
option(MEMFAIL_PCH "Precompile the standard and JSON headers (default: on in sanitizer builds)" ${_memfail_pch_default})

set(MEMFAIL_PCH_HEADERS
  <algorithm> <chrono> <cstdint> <functional> <map> <memory> <optional> <set> <string>
  <string_view> <utility> <vector> <nlohmann/json.hpp>)

# memfail_precompile(TARGET HOST [EXTRA header...]): TARGET makes the PCH when it is HOST, else
# reuses HOST's.
function(memfail_precompile target host)
  if(NOT MEMFAIL_PCH)
    return()
  endif()
  if(target STREQUAL host)
    target_precompile_headers(${target} PRIVATE ${MEMFAIL_PCH_HEADERS} ${ARGN})
  else()
    target_precompile_headers(${target} REUSE_FROM ${host})
  endif()
endfunction()

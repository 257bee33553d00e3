# SPDX-License-Identifier: MIT
# The code version recorded in every run: "<project version>+<git describe>". It is refreshed on every
# build (not only at configure time), so a result never names a stale commit; the generated file is
# rewritten only when the text changes, so an unchanged tree rebuilds nothing.
set(MEMFAIL_VERSION_CPP ${CMAKE_BINARY_DIR}/generated/version.cpp)
add_custom_target(memfail_version ALL
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DPROJECT_VERSION=${PROJECT_VERSION}
          -DINPUT=${CMAKE_SOURCE_DIR}/src/memfail/core/version.cpp.in
          -DOUTPUT=${MEMFAIL_VERSION_CPP}
          -P ${CMAKE_SOURCE_DIR}/cmake/write_version.cmake
  BYPRODUCTS ${MEMFAIL_VERSION_CPP}
  COMMENT "memfail: code version")

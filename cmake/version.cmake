# SPDX-License-Identifier: MIT
# The code version recorded in every run: `git describe` when built from a checkout, else the project version.
execute_process(
  COMMAND git describe --always --dirty --tags
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  OUTPUT_VARIABLE MEMFAIL_GIT_DESCRIBE
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT MEMFAIL_GIT_DESCRIBE)
  set(MEMFAIL_GIT_DESCRIBE "unknown")
endif()
set(MEMFAIL_CODE_VERSION "${PROJECT_VERSION}+${MEMFAIL_GIT_DESCRIBE}")

# SPDX-License-Identifier: MIT
# Script mode (cmake -P): writes OUTPUT from INPUT with MEMFAIL_CODE_VERSION, only when it changed.
execute_process(
  COMMAND git describe --always --dirty --tags
  WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE describe
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT describe)
  set(describe "unknown")
endif()
set(MEMFAIL_CODE_VERSION "${PROJECT_VERSION}+${describe}")
configure_file(${INPUT} ${OUTPUT}.new @ONLY)
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)

# SPDX-License-Identifier: MIT
# Compile through ccache when it is installed (scripts/install-deps installs it). Paths under the
# source tree are hashed relative to it (CCACHE_BASEDIR) and the build folder is not hashed, so a
# fresh clone in another folder (CI's) reuses what earlier builds of the same code compiled. The
# sloppiness lets ccache cache files compiled with a precompiled header (cmake/pch.cmake).
option(MEMFAIL_CCACHE "Compile through ccache when it is installed" ON)
if(MEMFAIL_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(MEMFAIL_CCACHE_PROGRAM ccache)
  find_program(MEMFAIL_ENV_PROGRAM env)
  if(MEMFAIL_CCACHE_PROGRAM AND MEMFAIL_ENV_PROGRAM)
    message(STATUS "memfail: compiling through ${MEMFAIL_CCACHE_PROGRAM}")
    set(_memfail_launcher ${MEMFAIL_ENV_PROGRAM} CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=true
        CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime ${MEMFAIL_CCACHE_PROGRAM})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${_memfail_launcher})
    set(CMAKE_C_COMPILER_LAUNCHER ${_memfail_launcher})
  endif()
endif()

# SPDX-License-Identifier: MIT
# Every dependency comes from a Debian package (scripts/install-deps) and is exposed as a dep_* target.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
pkg_check_modules(LIBCURL REQUIRED IMPORTED_TARGET libcurl)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(ICU REQUIRED IMPORTED_TARGET icu-uc)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)

# hnswlib is header-only (libhnswlib-dev); see docs/ARCHITECTURE.md for why it was chosen over FAISS.
find_path(HNSWLIB_INCLUDE_DIR hnswlib/hnswlib.h REQUIRED)

add_library(dep_sqlite INTERFACE)
target_link_libraries(dep_sqlite INTERFACE PkgConfig::SQLITE3)
add_library(dep_curl INTERFACE)
target_link_libraries(dep_curl INTERFACE PkgConfig::LIBCURL)
add_library(dep_xxhash INTERFACE)
target_link_libraries(dep_xxhash INTERFACE PkgConfig::XXHASH)
add_library(dep_fmt INTERFACE)
target_link_libraries(dep_fmt INTERFACE fmt::fmt)
add_library(dep_json INTERFACE)
target_link_libraries(dep_json INTERFACE nlohmann_json::nlohmann_json)
add_library(dep_cli11 INTERFACE)
target_link_libraries(dep_cli11 INTERFACE CLI11::CLI11)
# PCRE2 (JIT, Unicode properties) runs the tokenizers' pre-tokenization patterns exactly as written.
# ICU: Unicode case mapping and character properties (the benchmarks' token F1 lower-cases and finds
# word characters as Python does).
add_library(dep_icu INTERFACE)
target_link_libraries(dep_icu INTERFACE PkgConfig::ICU)
add_library(dep_pcre2 INTERFACE)
target_link_libraries(dep_pcre2 INTERFACE PkgConfig::PCRE2)
# cpp-httplib serves tools/fake-llm (and later `memfail serve`); clients use libcurl.
add_library(dep_httplib INTERFACE)
target_link_libraries(dep_httplib INTERFACE PkgConfig::HTTPLIB)
add_library(dep_toml INTERFACE)
target_link_libraries(dep_toml INTERFACE PkgConfig::TOMLPP)
add_library(dep_hnswlib INTERFACE)
target_include_directories(dep_hnswlib SYSTEM INTERFACE ${HNSWLIB_INCLUDE_DIR})
# hnswlib 0.6.2's SSE path prefetches datal[j + 1] one element past the end of a link list (a read
# whose value only feeds _mm_prefetch; fixed upstream later). AddressSanitizer rightly reports it, so
# sanitizer builds use hnswlib's portable distance code, which has no such prefetch. Our own code is
# identical in both builds.
if(MEMFAIL_SANITIZE MATCHES "address")
  target_compile_definitions(dep_hnswlib INTERFACE NO_MANUAL_VECTORIZATION)
endif()

if(MEMFAIL_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(MEMFAIL_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

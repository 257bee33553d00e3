# SPDX-License-Identifier: MIT
# MEMFAIL_SANITIZE="address;undefined" or "thread": instrument every target in the build.
if(MEMFAIL_SANITIZE)
  string(REPLACE ";" "," _memfail_san "${MEMFAIL_SANITIZE}")
  message(STATUS "memfail: sanitizers ${_memfail_san}")
  add_compile_options(-fsanitize=${_memfail_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_memfail_san})
  # The code may ask which build it is, whatever the compiler (GCC and clang name it differently):
  # MEMFAIL_SANITIZED, and MEMFAIL_SANITIZED_ADDRESS under AddressSanitizer.
  add_compile_definitions(MEMFAIL_SANITIZED=1)
  if(MEMFAIL_SANITIZE MATCHES "address")
    add_compile_definitions(MEMFAIL_SANITIZED_ADDRESS=1)
  endif()
endif()

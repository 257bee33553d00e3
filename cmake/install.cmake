# SPDX-License-Identifier: MIT
# `make install` and the Debian package (CPack). What a user of the installed memfail needs: the two
# programs (memfail, fake-llm), the tokenizer rank files scripts/install-deps fetched (when they are
# there at configure time), the demo script, the docs and the examples. Tests and benchmarks are not
# installed. The package's dependencies are computed from the binaries (dpkg-shlibdeps).
include(GNUInstallDirs)

install(TARGETS memfail_cli fake_llm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES README.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/memfail/examples USE_SOURCE_PERMISSIONS
        PATTERN "node_modules" EXCLUDE PATTERN "package-lock.json" EXCLUDE)
install(PROGRAMS scripts/demo DESTINATION ${CMAKE_INSTALL_DATADIR}/memfail)
# The rank files (data of the npm package tiktoken, MIT). memfail finds them beside its binary
# (../share/memfail/tokenizers, src/memfail/text/tokenizer.cpp) when the source tree's are absent.
set(MEMFAIL_TOKENIZER_SOURCE ${PROJECT_SOURCE_DIR}/.deps/npm/node_modules/tiktoken/encoders)
file(GLOB _memfail_rank_files ${MEMFAIL_TOKENIZER_SOURCE}/*.json)
if(_memfail_rank_files)
  install(FILES ${_memfail_rank_files} DESTINATION ${CMAKE_INSTALL_DATADIR}/memfail/tokenizers)
else()
  message(STATUS "memfail: no tokenizer rank files in ${MEMFAIL_TOKENIZER_SOURCE} (scripts/install-deps fetches them); "
                 "the install will need --tokenizer-dir or MEMFAIL_TOKENIZER_DIR for token counts")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME memfail)
set(CPACK_PACKAGE_VENDOR "the memfail authors")
set(CPACK_PACKAGE_CONTACT "memfail maintainers <memfail@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "where an LLM memory system fails: staged diagnosis of summarize, store, retrieve")
set(CPACK_PACKAGE_DESCRIPTION "memfail drives a memory system for LLM agents through adversarial datasets (MemFail, WRIT, \
DynamicMem, LoCoMo, LongMemEval) and attributes every miss to one stage: not stored, summary error, not retrieved, \
reasoning error. Offline by default (SQLite, built-in systems, rule grading); an OpenAI-compatible endpoint adds the \
model stages.")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.org/memfail")
set(CPACK_PACKAGE_FILE_NAME_SUFFIX "")
set(CPACK_OUTPUT_FILE_PREFIX ${PROJECT_BINARY_DIR}/package)
include(CPack)

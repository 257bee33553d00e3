// SPDX-License-Identifier: MIT
// Temporary directories for tests.
#include <support/temp_dir.hpp>

#include <cstdlib>
#include <stdexcept>

namespace memfail::testing {

TempDir::TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "memfail-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    m_path = pattern;
}

TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
}

}  // namespace memfail::testing

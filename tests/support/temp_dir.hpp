// SPDX-License-Identifier: MIT
// A temporary directory removed at the end of a test.
#pragma once
#include <filesystem>
#include <string>

namespace memfail::testing {

class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return m_path; }
    std::string file(const std::string& name) const { return (m_path / name).string(); }

private:
    std::filesystem::path m_path;
};

}  // namespace memfail::testing

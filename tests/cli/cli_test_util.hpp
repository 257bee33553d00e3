// SPDX-License-Identifier: MIT
// The CLI tests' shared fixture: a folder of the test's own, and the real `memfail` binary
// (MEMFAIL_BINARY) run with its output captured.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace memfail::testing {

struct Ran {
    int code = -1;
    std::string out;
    std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class CliTest : public ::testing::Test {
protected:
    explicit CliTest(std::string prefix) : m_prefix(std::move(prefix)) {}
    void SetUp() override {
        m_dir = std::filesystem::temp_directory_path() /
                (m_prefix + "-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(m_dir);
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override {
        // A test may have taken write permission away; give it back so the folder can go.
        std::error_code ec;
        for (const auto& entry : std::filesystem::recursive_directory_iterator(m_dir, ec))
            std::filesystem::permissions(entry.path(), std::filesystem::perms::owner_all,
                                         std::filesystem::perm_options::add, ec);
        std::filesystem::remove_all(m_dir, ec);
    }
    // `memfail ARGS`, stdout and stderr kept apart.
    Ran memfail(const std::string& args) const {
        const auto out = m_dir / "stdout.txt", err = m_dir / "stderr.txt";
        const std::string command =
            std::string(MEMFAIL_BINARY) + " " + args + " >" + out.string() + " 2>" + err.string();
        const int status = std::system(command.c_str());
        Ran ran;
        ran.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        ran.out = slurp(out);
        ran.err = slurp(err);
        return ran;
    }
    std::filesystem::path m_dir;

private:
    std::string m_prefix;
};

}  // namespace memfail::testing

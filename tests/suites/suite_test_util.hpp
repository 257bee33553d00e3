// SPDX-License-Identifier: MIT
// Helpers shared by the dataset tests: every violation of a scenario, and lookups over them.
#pragma once
#include <memfail/data/validate.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace memfail::testing {

// Structural violations plus the scenario's own dataset rules.
inline std::vector<data::Violation> all_violations(const data::Scenario& s) {
    std::vector<data::Violation> out;
    data::validate_structure(s, 0, out);
    suites::memfail_suite::check_dataset_rules(s, 0, out);
    return out;
}

// The first ten violations, one per line, for failure messages.
inline std::string describe(const std::vector<data::Violation>& vs) {
    std::string out;
    for (std::size_t i = 0; i < vs.size() && i < 10; ++i) out += vs[i].field + ": " + vs[i].message + "\n";
    return out;
}

inline bool has_violation(const std::vector<data::Violation>& vs, const std::string& field) {
    for (const auto& v : vs)
        if (v.field == field) return true;
    return false;
}

// A directory under the system temp folder, removed when the test ends.
class ScratchDir {
public:
    ScratchDir() {
        static int counter = 0;
        m_path = std::filesystem::temp_directory_path() /
                 ("memfail-suites-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::remove_all(m_path);
        std::filesystem::create_directories(m_path);
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    std::string path() const { return m_path.string(); }
    std::string file(const std::string& name) const { return (m_path / name).string(); }
    void write(const std::string& name, const std::string& content) const {
        std::ofstream out(file(name), std::ios::binary);
        out << content;
    }

private:
    std::filesystem::path m_path;
};

}  // namespace memfail::testing

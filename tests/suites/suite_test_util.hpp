// SPDX-License-Identifier: MIT
// Helpers shared by the dataset tests: every violation of a scenario, and lookups over them; a
// scratch directory; the importer fuzzers' mutations of JSON and of bytes.
#pragma once
#include <memfail/core/rng.hpp>
#include <memfail/data/validate.hpp>
#include <memfail/suites/memfail/rules.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
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

// The JSON importers' fuzzers (DynamicMem, write integrity): deterministic mutations of a fixture,
// driven by the test's seeded Rng. Each test keeps its own replacement values; the draws from the Rng
// are what they were when each test had its own copy, so the tests' outcome counts hold.
namespace fuzz {

// Every value's JSON pointer, the root included.
inline void pointers(const nlohmann::json& v, const nlohmann::json::json_pointer& at,
                     std::vector<nlohmann::json::json_pointer>& out) {
    out.push_back(at);
    if (v.is_object())
        for (auto it = v.begin(); it != v.end(); ++it) pointers(it.value(), at / it.key(), out);
    else if (v.is_array())
        for (std::size_t i = 0; i < v.size(); ++i) pointers(v[i], at / i, out);
}

// One of `values`, or now and then a value from elsewhere in the file.
inline nlohmann::json random_value(Rng& rng, const nlohmann::json& root, const std::vector<nlohmann::json>& values) {
    if (rng.chance(0.15)) {
        std::vector<nlohmann::json::json_pointer> all;
        pointers(root, nlohmann::json::json_pointer(), all);
        return root.at(rng.pick(all));
    }
    return rng.pick(values);
}

// One structural mutation somewhere in `root`; new values come from `value(rng, root)`.
template <class RandomValue>
void mutate(Rng& rng, nlohmann::json& root, RandomValue value) {
    using nlohmann::json;
    std::vector<json::json_pointer> all;
    pointers(root, json::json_pointer(), all);
    const json::json_pointer at = all[rng.below(all.size())];
    switch (rng.below(5)) {
        case 0: {  // delete the key or element
            if (at.empty()) return;
            json& parent = root.at(at.parent_pointer());
            if (parent.is_object()) parent.erase(at.back());
            else if (parent.is_array()) parent.erase(static_cast<std::size_t>(std::stoul(at.back())));
            return;
        }
        case 1:  // another type, another value
        case 2: root[at] = value(rng, root); return;
        case 3: {  // deep nesting, sometimes past the limit
            json v = root.at(at);
            const std::size_t depth = 1 + rng.below(80);
            for (std::size_t i = 0; i < depth; ++i) v = rng.chance(0.5) ? json::array({v}) : json{{"k", v}};
            root[at] = v;
            return;
        }
        default: {  // duplicate an element of a list, or add a stray key to an object
            json& v = root.at(at);
            if (v.is_array() && !v.empty()) v.push_back(v[rng.below(v.size())]);
            else if (v.is_object()) v["extra_" + std::to_string(rng.below(100))] = value(rng, root);
            return;
        }
    }
}

// The bytes a JSON file's damage is made of: its punctuation, a curly quote, invalid UTF-8, NUL.
inline const std::vector<std::string>& json_bytes() {
    static const std::vector<std::string> k_bytes = {"\"", ",", "\n", "\\", "[", "]", "{", "}", ":", "0",
                                                     "\xE2\x80\x99", "\xff", std::string(1, '\0'), "null"};
    return k_bytes;
}

// One byte-level mutation of a file's text (what a bad download or an editor does): a cut, an
// insertion of one of `bytes`, a repeated stretch, or a truncation.
inline void mutate_bytes(Rng& rng, std::string& text, const std::vector<std::string>& bytes = json_bytes()) {
    if (text.empty()) return;
    const std::size_t at = rng.below(text.size());
    switch (rng.below(4)) {
        case 0: text.erase(at, 1 + rng.below(16)); break;
        case 1: text.insert(at, rng.pick(bytes)); break;
        case 2: text.insert(at, text.substr(rng.below(text.size()), rng.below(64))); break;
        default: text.resize(at); break;
    }
}

}  // namespace fuzz

}  // namespace memfail::testing

// SPDX-License-Identifier: MIT
// Reading a suite's embedded lexicon (JSON): the typed fields are read through a reader that keeps
// the first problem, named by file and JSON path ("persona.json: $.fact_types[3].key: is missing"),
// and lets parsing run on with defaults, so one function per definition kind reads like the file it
// parses. Used by the dynamic suite's and the Persona generator's lexicons.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>

namespace memfail::suites {

class LexiconReader {
public:
    using json = nlohmann::json;
    explicit LexiconReader(std::string file) : m_file(std::move(file)) {}

    void fail(const std::string& path, const std::string& message) {
        if (!m_error) m_error = make_error(ErrorKind::invalid_input, message, m_file + ": " + path);
    }
    const std::optional<Error>& error() const { return m_error; }

    // obj[key], or null (and, when required, a "missing" problem).
    const json& member(const json& obj, const char* key, const std::string& path, bool required = true) {
        static const json k_null;
        if (!obj.is_object() || !obj.contains(key)) {
            if (required) fail(path + "." + key, "is missing");
            return k_null;
        }
        return obj.at(key);
    }
    std::string str(const json& obj, const char* key, const std::string& path, bool required = true) {
        const json& v = member(obj, key, path, required);
        if (v.is_string() && !v.get_ref<const std::string&>().empty()) return v.get<std::string>();
        if (!v.is_null() || required) fail(path + "." + key, "must be a non-empty string");
        return {};
    }
    std::vector<std::string> strings(const json& obj, const char* key, const std::string& path, bool required = true) {
        std::vector<std::string> out;
        const json& v = member(obj, key, path, required);
        if (v.is_null() && !required) return out;
        if (!v.is_array() || (v.empty() && required)) {
            fail(path + "." + key, required ? "must be a non-empty list of strings" : "must be a list of strings");
            return out;
        }
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (v[i].is_string() && !v[i].get_ref<const std::string&>().empty()) out.push_back(v[i].get<std::string>());
            else fail(path + "." + key + "[" + std::to_string(i) + "]", "must be a non-empty string");
        }
        return out;
    }
    std::vector<int> ints(const json& obj, const char* key, const std::string& path) {
        std::vector<int> out;
        const json& v = member(obj, key, path);
        if (!v.is_array() || v.empty()) {
            if (!v.is_null()) fail(path + "." + key, "must be a non-empty list of integers");
            return out;
        }
        for (const auto& x : v) {
            if (x.is_number_integer()) out.push_back(x.get<int>());
            else fail(path + "." + key, "must hold only integers");
        }
        return out;
    }
    // A non-empty list (an empty one when it is not, with the problem recorded).
    const json& array(const json& obj, const char* key, const std::string& path) {
        static const json k_empty = json::array();
        const json& v = member(obj, key, path);
        if (!v.is_array() || v.empty()) {
            if (!v.is_null()) fail(path + "." + key, "must be a non-empty list");
            return k_empty;
        }
        return v;
    }

private:
    std::string m_file;
    std::optional<Error> m_error;
};

}  // namespace memfail::suites

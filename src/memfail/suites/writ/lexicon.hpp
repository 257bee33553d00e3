// SPDX-License-Identifier: MIT
// The write-integrity generator's word lists and templates: the JSON files under lexicon/, compiled
// in by cmake/embed.cmake, parsed once and checked against the schema in lexicon.cpp (every key the
// generator reads, list sizes, the placeholders each template must and may hold). A malformed file is
// an error naming the file and the JSON path, never a crash halfway through generating.
//
// Every file is {"about": "...", "pools": {name: [strings]}, "tables": {name: [entries]}}; an entry
// is an object with an "id", string lists and scalar fields. Templates hold placeholders "{value}"
// that fill() replaces.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>

namespace memfail::suites::writ {

// One object of a lexicon table.
struct LexEntry {
    std::string id;
    std::map<std::string, std::vector<std::string>, std::less<>> lists;
    std::map<std::string, nlohmann::json, std::less<>> fields;  // strings and integers

    // The schema guarantees what the generator asks for; asking for anything else is a bug (asserts).
    const std::vector<std::string>& list(std::string_view key) const;
    const std::string& text(std::string_view key) const;
    std::int64_t integer(std::string_view key) const;
};

struct LexFile {
    std::string name;   // "attributes.json"
    std::string about;  // what the file is for, for the researcher reading it
    std::map<std::string, std::vector<std::string>, std::less<>> pools;
    std::map<std::string, std::vector<LexEntry>, std::less<>> tables;

    const std::vector<std::string>& pool(std::string_view key) const;
    const std::vector<LexEntry>& table(std::string_view key) const;
};

class Lexicon {
public:
    const LexFile& file(std::string_view name) const;
    const std::vector<std::string>& pool(std::string_view file, std::string_view key) const {
        return this->file(file).pool(key);
    }
    const std::vector<LexEntry>& table(std::string_view file, std::string_view key) const {
        return this->file(file).table(key);
    }

    std::map<std::string, LexFile, std::less<>> files;
};

// Parses one file and checks it against the schema for its name. Errors are invalid_input with
// `where` = "<file>: <json path>" ("attributes.json: tables.attributes[2].intro[0]").
Result<LexFile> parse_lexicon_file(std::string_view name, std::string_view content);

// Parses a whole set of files: every file the schema names must be there, and no other.
Result<Lexicon> parse_lexicon(const std::vector<std::pair<std::string, std::string>>& files);

// The embedded lexicon, parsed and checked on first use (thread-safe), then shared.
const Result<Lexicon>& writ_lexicon();

// The names of the embedded files, in build order.
std::vector<std::string> embedded_lexicon_files();

// Placeholders a template holds, in order of appearance ("{value}" -> "value").
std::vector<std::string> placeholders(std::string_view text);

// Replaces every "{name}" of `tmpl` by its value. A placeholder without a value is a bug (asserts).
using Vars = std::vector<std::pair<std::string, std::string>>;
std::string fill(std::string_view tmpl, const Vars& vars);

}  // namespace memfail::suites::writ

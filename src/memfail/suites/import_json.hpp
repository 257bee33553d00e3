// SPDX-License-Identifier: MIT
// Small helpers the suites' importers share over JSON they did not write: the JSON path of a
// value for notes ("probes[2].rubric"), values as text, values quoted in a note, and what kind of
// value was found where another was expected.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace memfail::suites::import_json {

// "base.key" ("key" when base is empty) and "base[index]".
std::string at(const std::string& base, std::string_view key);
std::string at(const std::string& base, std::size_t index);
// Compact JSON; bytes that are not UTF-8 (possible only in values built in memory) are replaced
// instead of throwing.
std::string compact(const nlohmann::json& v);
// A value as an answer states it: strings as they are, numbers as written, the rest as compact JSON.
std::string as_text(const nlohmann::json& v);
// A value quoted in a note, cut to a readable length (never inside a UTF-8 character); strings quoted.
std::string shown(const nlohmann::json& v);
// "a string", "a list", "an object", "a number", ...
const char* type_name(const nlohmann::json& v);
// True when `v` nests arrays and objects more than `limit` deep (a top-level object is depth 1);
// recurses at most limit + 1 levels, whatever the value.
bool deeper_than(const nlohmann::json& v, std::size_t limit, std::size_t depth = 0);
// A parser's message without its exception id ("[json.exception.parse_error.101] parse error at
// ..." -> "parse error at ..."), every byte outside printable ASCII escaped: it quotes the bytes it
// stopped at, which need not be UTF-8, and notes are written as JSON.
std::string parser_message(const std::string& what);

}  // namespace memfail::suites::import_json

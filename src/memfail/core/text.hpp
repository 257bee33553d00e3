// SPDX-License-Identifier: MIT
// Small text utilities shared by generators, retrievers and graders. ASCII-oriented by design: the
// generated datasets are English, and imported text is matched after the same normalisation.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace memfail::text {

std::string to_lower(std::string_view s);
std::string_view trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string replace_all(std::string s, std::string_view from, std::string_view to);

// Lower-cases, maps curly quotes and dashes to plain ones, turns every character that is not a
// letter, digit or apostrophe into a space, drops apostrophes, and collapses runs of spaces:
// "Gideon's  sail-boats!" -> "gideons sail boats". This is the form key details are matched in.
std::string normalize(std::string_view s);

// Words of normalize(s).
std::vector<std::string> words(std::string_view s);

// True when normalize(phrase) occurs in normalize(haystack) on word boundaries.
bool contains_phrase(std::string_view haystack, std::string_view phrase);
// Same, with `normalized_haystack` already normalised (avoids re-normalising a large text).
bool normalized_contains(std::string_view normalized_haystack, std::string_view normalized_phrase);

// Splits prose into sentences at '.', '!' or '?' followed by a space and an upper-case letter, a
// digit or a quote; keeps the terminator with its sentence; never splits inside "e.g." style
// abbreviations of one or two letters, nor "Mr." / "Dr." / "Ms." / "Mrs." / "St.".
std::vector<std::string> split_sentences(std::string_view prose);

// True for common English function words ("the", "and", "is", ...), used by lexical retrievers.
bool is_stopword(std::string_view lower_word);

// Capitalises the first letter.
std::string capitalize(std::string_view s);

// Levenshtein distance, for "did you mean" hints.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace memfail::text

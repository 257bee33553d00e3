// SPDX-License-Identifier: MIT
// The one text-evidence matcher (docs/TAXONOMY.md, "The evidence contract"): how every suite's
// memory-side checks and the answer rules read text a memory system or a model wrote.
//
// Text is read as units: lines, then sentences, each with its leading labels taken off (a role or
// speaker and a colon, a bracketed timestamp, a list marker, quotes, markup, a JSON-like `"fact":`
// key), then put in canonical tokens: case folded, apostrophes and quotes unified, contractions
// expanded, values written one way ("$120K" = "$120,000" = 120000; "June 15th" = "15 June";
// "3 pm" = "15:00"), exclusivity words one class ("solely" = "only"). Two texts whose canonical
// tokens are equal say the same thing in the contract's sense; everything else is decided by the
// callers' rules or left unsure. The words are data: lexicon/evidence.json.
#pragma once
#include <cstddef>
#include <unordered_map>
#include <unordered_set>
#include <string>
#include <string_view>
#include <vector>

namespace memfail::grade::evidence {

// Hash containers: every token of every text is looked up in several of them.
struct Lexicon {
    std::unordered_set<std::string> label_words;     // "user", "fact", "input", ... (may be two words)
    std::unordered_set<std::string> meaning_labels;  // words that make a label part of the meaning: "false", "myth"
    std::unordered_map<std::string, std::string> contractions;
    std::unordered_map<std::string, std::string> word_class;  // "solely" -> "only"
    std::unordered_map<std::string, std::string> number_words;  // "twelve" -> "12", "hundred" -> "100"
    std::unordered_map<std::string, double> scale_words;          // a multiplier after a number: "thousand", "dozen"
    std::unordered_map<std::string, int> months;  // full names and their abbreviations -> 1..12
    std::unordered_set<std::string> weekdays;
    std::unordered_set<std::string> negators;
    std::unordered_set<std::string> hedges;
    std::unordered_set<std::string> operator_glue;
    std::unordered_set<std::string> indefinite_persons;  // "someone", "a person": a name replaced by no one in particular
    bool is_negator(const std::string& token) const { return negators.count(token) > 0; }
    bool is_hedge(const std::string& token) const { return hedges.count(token) > 0; }
};
// The embedded lexicon, parsed once (a broken file is a build error caught by the tests).
const Lexicon& lexicon();

using Tokens = std::vector<std::string>;

// Canonical tokens of a phrase (no labels taken off): what key details and statements are compared in.
Tokens tokens(std::string_view text);
// The tokens joined by single spaces.
std::string canonical(std::string_view text);
std::string join(const Tokens& tokens);

// The text's units, raw (labels already taken off), in order: lines, then sentences within a line,
// also split at " | " separators.
std::vector<std::string> split_units(std::string_view text);
// Takes leading labels off one unit (and the quotes or JSON punctuation closing it).
std::string strip_labels(std::string_view unit);

struct Unit {
    std::string canon;  // join(tokens)
    Tokens tokens;
};
// split_units, each in canonical tokens; empty units dropped.
std::vector<Unit> units(std::string_view text);

// Start positions of `phrase` in `haystack` on token boundaries.
std::vector<std::size_t> find_all(const Tokens& haystack, const Tokens& phrase);
bool contains(const Tokens& haystack, const Tokens& phrase);

// The token alignment of `copy` against `original` (longest common subsequence): which tokens of
// the original are kept, and what was inserted before each original position (index n: at the end).
struct Alignment {
    std::size_t common = 0;
    std::vector<bool> kept;                      // per original token
    std::vector<Tokens> inserted;                // size original.size() + 1
};
Alignment align(const Tokens& original, const Tokens& copy);

// A five-character prefix of a word, the loose form identity words are looked for in when the rules
// must show that nothing of a fact is held ("painting" and "paints" share "paint").
std::string stem(const std::string& token);
// True for function words that say nothing of a fact ("the", "when", "is").
bool is_function_word(const std::string& token);

}  // namespace memfail::grade::evidence

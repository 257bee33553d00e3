// SPDX-License-Identifier: MIT
// Lexicon of the Long-Hop generator, read from the embedded data file
// suites/memfail/lexicon/long_hop.json: the personal anchors chains are built from (by kind; an
// answer's wrong options are other anchors of its kind), the people of named chains, the topics that
// imply each other, the fact templates per link kind (in paraphrase families) and the question
// templates per chain shape.
//
// Anchors are subjective on purpose (moods, routines, personal objects, small activities), so no
// fact can be answered from world knowledge. Each anchor is used by at most one chain of a dataset.
// Anchor text may hold "{pos}" (my / his / her) and "{self}" (myself / himself / herself), filled
// in for the chain's voice. Every entry carries a topic; the generator keeps distractors off the
// topics of the chain they belong to, so no option is a natural "next step" of any fact.
//
// Template tokens: {a}/{A} the anchor a fact starts from (lower / capitalised), {b} the anchor it
// leads to; {lead}/{Lead} a moment with its preposition; {av}/{av3} the starting thing's verb (base /
// third person) and {bv} the next thing's verb; {N} a named person with {he} {He} {his} {him};
// {cat}/{cats} a thing's category. [x|y] picks x when the starting anchor is plural, <x|y> when the
// anchor it leads to is.
#pragma once
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>

namespace memfail::suites::memfail_suite::long_hop {

enum class Kind { person, moment, act, feel, thing };
inline constexpr std::size_t k_kind_count = 5;

// A recurring situation, only ever a chain head: "on" + "rainy afternoons".
struct MomentEntry {
    std::string prep;  // the preposition that introduces it in a sentence
    std::string text;
    bool plural = false;  // for verb agreement: "rainy afternoons leave" / "a sleepless night leaves"
    std::string topic;
};

// An activity (a base-form verb phrase: "bake banana bread") or a feeling (an adjective phrase
// that reads after "feel", "I'm" and "leaves me"); also the shape of a distractor option.
struct ActEntry {
    std::string text;
    std::string topic;  // a feeling's topic is its family ("tired", "calm"), shared with act topics
};
using FeelEntry = ActEntry;

// A personal object, food or drink, with the verb one uses it with ("snack on" salted pistachios).
struct ThingEntry {
    std::string text;
    std::string verb;      // base form
    std::string category;  // "snack", as in "his favorite snack"; empty when unnatural
    bool plural = false;
    std::string topic;
};

struct PersonEntry {
    std::string name;
    bool female = false;  // picks he/she and his/her
};

// One way of stating a link from an anchor of kind `from` to one of kind `to`. Templates of one
// family share their relation (conditional, temporal, causal, habit, preference, opinion); a chain
// does not use one family twice in a row.
struct FactTemplate {
    Kind from = Kind::act;
    Kind to = Kind::act;
    bool named = false;
    std::string family;
    std::string text;
};

// A question naming the head (a first-person chain's first anchor, or a named chain's person and
// the category of their favorite thing) and asking for the terminal anchor.
struct QuestionTemplate {
    Kind head = Kind::act;
    Kind terminal = Kind::act;
    bool named = false;
    std::string text;
};

struct Lexicon {
    std::vector<MomentEntry> moments;
    std::vector<ActEntry> acts;
    std::vector<FeelEntry> feels;
    std::vector<ThingEntry> things;
    std::vector<PersonEntry> people;
    std::map<std::string, std::vector<std::string>, std::less<>> related;  // symmetric
    std::vector<FactTemplate> facts;
    std::vector<QuestionTemplate> questions;
};

// Parses and checks a lexicon file; the error names the file and the JSON path of the first problem.
Result<Lexicon> parse_lexicon(const std::string& file, const std::string& content);
// The embedded long_hop.json, parsed once; a broken file stops the program with its JSON path.
const Lexicon& lexicon();
// The embedded long_hop.json as text (for tests that check how a corrupted copy is refused).
std::string_view embedded_lexicon_text();

std::span<const MomentEntry> moment_anchors();
std::span<const ActEntry> act_anchors();
std::span<const FeelEntry> feel_anchors();
std::span<const ThingEntry> thing_anchors();
std::span<const PersonEntry> people();

// Ordinary options that are never anchors: shape-matched wrong answers for act and feel terminals.

// Topics whose items would be a natural consequence of an item of `topic` ("exercise" leaves one
// "tired" or "hungry"); a distractor on any of them is kept out of a chain that touches `topic`.
std::span<const std::string> related_topics(std::string_view topic);

// All anchor entries (moments, acts, feelings, things), without people or distractors.
std::size_t anchor_lexicon_size();

// "moment", "act", "feel", "thing", "person".
const char* kind_name(Kind k);

}  // namespace memfail::suites::memfail_suite::long_hop

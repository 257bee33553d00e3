// SPDX-License-Identifier: MIT
// Word lists of the Long-Hop generator: the personal anchors chains are built from, the named
// people of third-person chains, and the distractor options of the multiple-choice questions.
//
// Anchors are subjective on purpose (moods, routines, personal objects, small activities), so no
// fact can be answered from world knowledge. Each anchor is used by at most one chain of a dataset.
// Text may hold "{pos}" (my / his / her) and "{self}" (myself / himself / herself), filled in for
// the chain's voice. Every entry carries a topic; the generator keeps distractors off the topics of
// the chain they belong to, so no option is a natural "next step" of any fact.
#pragma once
#include <span>
#include <string_view>

namespace memfail::suites::memfail_suite::long_hop {

// A recurring situation, only ever a chain head: "on" + "rainy afternoons".
struct MomentEntry {
    const char* prep; // the preposition that introduces it in a sentence
    const char* text;
    bool plural; // for verb agreement: "rainy afternoons leave" / "a sleepless night leaves"
    const char* topic;
};

// An activity or routine: a verb phrase in the base form ("bake banana bread"), so it reads right
// after "I", "to", "makes me" and "can't ... without wanting to".
struct ActEntry {
    const char* text;
    const char* topic;
};

// A feeling: an adjective phrase that reads right after "feel", "I'm", "leaves me" and "Feeling".
struct FeelEntry {
    const char* text;
    const char* topic; // the feeling's family ("tired", "calm", ...), shared with act topics
};

// A personal object, food or drink, with the verb one uses it with ("snack on" salted pistachios).
struct ThingEntry {
    const char* text;
    const char* verb;     // base form
    const char* category; // "snack", used as "Tomas's favorite snack"; empty when unnatural
    bool plural;
    const char* topic;
};

struct PersonEntry {
    const char* name;
    bool female; // picks he/she and his/her
};

std::span<const MomentEntry> moment_anchors();
std::span<const ActEntry> act_anchors();
std::span<const FeelEntry> feel_anchors();
std::span<const ThingEntry> thing_anchors();
std::span<const PersonEntry> people();

// Ordinary options that are never anchors: shape-matched wrong answers for act and feel terminals.
std::span<const ActEntry> act_distractors();
std::span<const FeelEntry> feel_distractors();

// Topics whose items would be a natural consequence of an item of `topic` ("exercise" leaves one
// "tired" or "hungry"); a distractor on any of them is kept out of a chain that touches `topic`.
std::span<const char* const> related_topics(std::string_view topic);

// All anchor entries (moments, acts, feelings, things), without people or distractors.
std::size_t anchor_lexicon_size();

} // namespace memfail::suites::memfail_suite::long_hop

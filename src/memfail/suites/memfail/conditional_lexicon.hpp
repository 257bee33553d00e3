// SPDX-License-Identifier: MIT
// The Conditional-Facts lexicon, read from the embedded data file suites/memfail/lexicon/conditional.json:
// entities and their settings, behaviours, conditions of the paper's 32 types, the compatibility table
// (behaviour kind -> condition types), fillers, paraphrase families per rule shape and question
// templates; plus the condition-type tables, the connective check and the template renderer.
//
// Templates use these tokens, resolved per entity by render():
//   {Name} {Name's}            the entity's name, and its possessive
//   {subj} {obj} {pos} {refl}  he/him/his/himself, she/her/her/herself, they/them/their/themselves
//   {Subj} {Pos}               capitalised forms
//   [singular|plural]          verb agreement with the pronoun: "{Subj} [keeps|keep]" -> "They keep"
// The entity's name is always grammatically singular, so "{Name} has" needs no brackets.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>

namespace memfail::suites::memfail_suite::conditional {

// Who a lexicon entry fits: the three entity categories, with pets split by species so a parrot
// is never asked to dig holes.
enum Fit : std::uint32_t {
    fit_person = 1u << 0,
    fit_character = 1u << 1,
    fit_cat = 1u << 2,
    fit_dog = 1u << 3,
    fit_parrot = 1u << 4,
    fit_rabbit = 1u << 5,
    fit_ferret = 1u << 6,
    fit_human = fit_person | fit_character,
    fit_pet = fit_cat | fit_dog | fit_parrot | fit_rabbit | fit_ferret,
    fit_any = fit_human | fit_pet,
};

// The paper's 32 condition types (Appendix B.2, Table 3), in table order.
const std::vector<std::string>& condition_types();
// The 9 externally observable types a pet's rule may depend on.
const std::vector<std::string>& observable_condition_types();
bool is_condition_type(std::string_view type);
bool is_observable_condition_type(std::string_view type);

// The explicit conditional connectives a Hard essay must not contain anywhere (Appendix B.3).
const std::vector<std::string>& forbidden_connectives();
// The first forbidden connective found in `text` (whole words, normalised), or empty. "if" in "as
// if" and "even if" is not one: those introduce a comparison or a concession, never a condition
// ("he paints sailboats, as if making voyages").
std::string find_forbidden_connective(std::string_view text);

struct Pronouns {
    std::string subj, obj, pos, refl;
    bool plural = false;
};
// 'm' he, 'f' she, anything else singular they.
Pronouns pronouns_for(char gender);

// Resolves the template tokens above and capitalises the first letter; unknown {tokens} are kept
// for the caller. render_fragment() does the same without capitalising (for mid-sentence pieces).
std::string render(std::string_view tmpl, const std::string& name, const Pronouns& p);
std::string render_fragment(std::string_view tmpl, const std::string& name, const Pronouns& p);

// Where a behaviour can happen: anywhere (it travels), at home, or outdoors at home (a garden).
enum class Place { anywhere, home, yard };

// A behaviour in three verb forms: "<verb_s|verb|verb_ing> <rest>".
struct BehaviourEntry {
    std::uint32_t fit = 0;
    Place place = Place::anywhere;  // conditions that take the entity away need Place::anywhere
    std::string kind;        // its row of the compatibility table: "craft", "pet_active", ...
    std::string verb_s;      // "sketches"
    std::string verb;        // "sketch"
    std::string verb_ing;    // "sketching"
    std::string rest;        // "foxes on paper napkins" (may use {pos} etc.)
    std::string ask;         // the behaviour in other words, base form, for questions
    std::string loose;       // the behaviour loosely restated, its key nouns kept: "paint sailboats in a teacup"
    std::string key;         // distinctive literal phrase of rest; empty = rest itself
    std::string habit;       // singular noun phrase for link sentences: "the napkin sketching"
    std::string avoid_type;  // a condition type this behaviour reads oddly with, or empty
};

enum ConditionFlag : std::uint32_t {
    cond_needs_portable = 1u << 0,  // the context places the entity away from home ("away")
    cond_context_after = 1u << 1,   // the context refers back to the behaviour ("did it"): ask first
    cond_indoors = 1u << 2,         // the contexts place the entity indoors (no garden behaviours)
};

// One concrete condition. `key` appears literally in `clause` and `sentence`, never in the contexts
// or the anchor; the anchor ("in those late hours") is what the Hard link sentence ties back with.
struct ConditionEntry {
    std::string type;
    std::uint32_t fit = 0;
    std::uint32_t flags = 0;
    std::string clause;       // Easy rule clause, read after "only": "after ten at night"
    std::string key;          // "after ten at night"
    std::string yes_context;  // a present situation that satisfies the condition
    std::string no_context;   // one that plainly does not
    std::string sentence;     // Hard condition sentence: the condition as part of life
    std::string anchor;       // Hard link phrase: "in those late hours"
    // Conditions of one type sharing a group are mutually exclusive: each one's yes_context plainly
    // does not meet any other's condition. A "no" question then takes a group sibling's yes_context,
    // so every such context is asked as often with "yes" as with "no" and the answer comes from the
    // essay, never from the question. Empty: no sibling; the "no" question uses no_context.
    std::string group;
};

struct NameEntry {
    std::string name;
    char gender = 'n';  // 'm', 'f', or 'n' for names used with either
};

struct PetKind {
    std::uint32_t fit = 0;  // exactly one species bit
    std::string breed;      // "tabby cat"
    std::string species;    // "cat"
};

struct Profession {
    std::string profession;  // with article: "a hospital porter"
    std::string role;        // how a sentence may call the person: "the porter"
    std::string place;       // where the work happens: "the hospital wards"
};
struct CharacterRole {
    std::string title;  // "a retired airship captain"
    std::string role;   // "the old captain"
};
struct Household {
    std::string household;  // "a retired postman in a terraced house"
    std::string home;       // "the terraced house"
};

// An unconditional fact about an entity. Facts sharing a non-empty `group` contradict or repeat
// each other (two descriptions of siblings), so an essay takes at most one per group.
struct FillerEntry {
    std::uint32_t fit = 0;
    std::string text;
    std::string avoid_type;  // condition type it would muddle (a music fact vs music_playing)
    std::string group;
};

// One rule shape's paraphrase families: family name -> templates.
using Families = std::vector<std::pair<std::string, std::vector<std::string>>>;

// Entity categories as lexicon sections: person, character, pet.
struct ByCategory {
    std::vector<std::string> person, character, pet;
};

struct Lexicon {
    std::vector<NameEntry> person_names, character_names, pet_names;
    std::vector<PetKind> pet_kinds;
    std::vector<Profession> professions;
    std::vector<std::string> towns;
    std::vector<CharacterRole> character_roles;
    std::vector<std::string> realms;
    std::vector<Household> households;
    // Intro templates. Besides the entity tokens they use {occupation} {town} {age} (person),
    // {role} {realm} (character), {a_age} {breed} {household} (pet; {a_age} = "a three-year-old").
    ByCategory intros;
    std::vector<BehaviourEntry> behaviours;
    // Behaviour kind -> the condition types a behaviour of that kind can depend on.
    std::map<std::string, std::set<std::string>> compatibility;
    std::vector<ConditionEntry> conditions;
    ByCategory setting_fillers;             // sentences of the entity's world: {role} {place} {town} {habit}
    std::vector<FillerEntry> background;    // personal facts
    Families easy_rules;                    // {vp_name} {vp} {base} {ing} {clause}
    Families hard_behaviour_person, hard_behaviour_character, hard_behaviour_pet;  // {vp} {ing}
    Families hard_link;                     // {anchor} {habit}
    std::vector<std::string> questions_before, questions_after;  // {ctx} {do} {subject} {object} {Be} {Name}
    std::vector<std::string> answers_yes, answers_no;            // {stated}

    // True when the compatibility table lets a behaviour of `kind` depend on a condition of `type`.
    bool compatible(const std::string& kind, const std::string& type) const {
        const auto it = compatibility.find(kind);
        return it != compatibility.end() && it->second.count(type) != 0;
    }
};

// Parses and checks a lexicon file; the error names the file and the JSON path of the first problem.
Result<Lexicon> parse_lexicon(const std::string& file, const std::string& content);
// The embedded conditional.json, parsed once; a broken file stops the program with its JSON path.
const Lexicon& lexicon();
// The embedded conditional.json as text (for tests that check how a corrupted copy is refused).
std::string_view embedded_lexicon_text();

}  // namespace memfail::suites::memfail_suite::conditional

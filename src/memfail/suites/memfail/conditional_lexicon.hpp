// SPDX-License-Identifier: MIT
// Hand-written lexicons of the Conditional-Facts generators: entities, behaviours, conditions of the
// paper's 32 types, filler facts, and the small template language they are written in.
//
// Templates use these tokens, resolved per entity by render():
//   {Name} {Name's}            the entity's name, and its possessive
//   {subj} {obj} {pos} {refl}  he/him/his/himself, she/her/her/herself, they/them/their/themselves
//   {Subj} {Pos}               capitalised forms
//   [singular|plural]          verb agreement with the pronoun: "{Subj} [keeps|keep]" -> "They keep"
// The entity's name is always grammatically singular, so "{Name} has" needs no brackets.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
    std::uint32_t fit;
    Place place;                  // conditions that take the entity away need Place::anywhere
    std::string_view verb_s;      // "sketches"
    std::string_view verb;        // "sketch"
    std::string_view verb_ing;    // "sketching"
    std::string_view rest;        // "foxes on paper napkins" (may use {pos} etc.)
    std::string_view key;         // distinctive literal phrase of rest; empty = rest itself
    std::string_view habit;       // singular noun phrase for link sentences: "the napkin sketching"
    std::string_view avoid_type;  // a condition type this behaviour reads oddly with, or empty
};
const std::vector<BehaviourEntry>& behaviours();

enum ConditionFlag : std::uint32_t {
    cond_needs_portable = 1u << 0,  // the context places the entity away from home
    cond_context_after = 1u << 1,   // the context refers back to the behaviour ("did it"): ask first
    cond_indoors = 1u << 2,         // the contexts place the entity indoors (no garden behaviours)
};

// One concrete condition. `key` appears literally in `clause` and `sentence`, never in the contexts
// or the anchor; the anchor ("in those late hours") is what the Hard link sentence ties back with.
struct ConditionEntry {
    std::string_view type;
    std::uint32_t fit;
    std::uint32_t flags;
    std::string_view clause;       // Easy rule clause, read after "only": "after ten at night"
    std::string_view key;          // "after ten at night"
    std::string_view yes_context;  // a present situation that satisfies the condition
    std::string_view no_context;   // one that plainly does not
    std::string_view sentence;     // Hard condition sentence: the condition as part of life
    std::string_view anchor;       // Hard link phrase: "in those late hours"
};
const std::vector<ConditionEntry>& conditions();

struct NameEntry {
    std::string_view name;
    char gender;  // 'm', 'f', or 'n' for names used with either
};
const std::vector<NameEntry>& person_names();
const std::vector<NameEntry>& character_names();
const std::vector<NameEntry>& pet_names();

struct PetKind {
    std::uint32_t fit;       // exactly one species bit
    std::string_view breed;  // "tabby cat"
    std::string_view species;  // "cat"
};
const std::vector<PetKind>& pet_kinds();

// Profile slots of the intro sentence.
const std::vector<std::string_view>& occupations();    // with article: "a hospital porter"
const std::vector<std::string_view>& towns();
const std::vector<std::string_view>& character_roles();  // with article: "a retired airship captain"
const std::vector<std::string_view>& realms();
const std::vector<std::string_view>& households();     // "a retired postman in a terraced house"

// Intro templates. Besides the entity tokens they use {occupation} {town} {age} (person),
// {role} {realm} (character), {a_age} {breed} {household} (pet; {a_age} = "a three-year-old").
const std::vector<std::string_view>& person_intros();
const std::vector<std::string_view>& character_intros();
const std::vector<std::string_view>& pet_intros();

// An unconditional fact about an entity. Facts sharing a non-empty `group` contradict or repeat
// each other (two descriptions of siblings), so an essay takes at most one per group.
struct FillerEntry {
    std::uint32_t fit;
    std::string_view text;
    std::string_view avoid_type;  // condition type it would muddle (a music fact vs music_playing)
    std::string_view group;
};
const std::vector<FillerEntry>& fillers();

// Sentence templates around the behaviour and link. Behaviour templates use {vp} (the verb phrase
// agreeing with the pronoun subject) or {ing} (the gerund phrase); link templates use {anchor}
// and {habit}; Easy rule templates use {vp_name} (third person), {base}, {ing} and {clause}.
const std::vector<std::string_view>& easy_rule_templates();
const std::vector<std::string_view>& hard_behaviour_templates_human();
const std::vector<std::string_view>& hard_behaviour_templates_pet();
const std::vector<std::string_view>& hard_link_templates();

}  // namespace memfail::suites::memfail_suite::conditional

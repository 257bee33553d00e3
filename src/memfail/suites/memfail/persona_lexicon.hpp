// SPDX-License-Identifier: MIT
// Lexicon of the Persona-Retrieval generator, read from the embedded data file
// suites/memfail/lexicon/persona.json: entity and distractor name pools, persona flavours, the
// idiosyncratic fact types (sentence templates, two-sentence templates, questions, answer,
// instances), the opening sentences and the flavour-bound filler sentences.
//
// Templates use these tokens, filled by render():
//   {Name} full name  {First} first name  {name} the person a question is about (full name)
//   {Subj} {subj}  how the sentence refers to the essay's person: first name, pronoun or role
//   {he} {him} {his} {himself} and capitalised {He} {His}: the pronouns of that person
//   {role} {Role} {place} {interest} {profession}: the persona flavour's parts
//   {key} {Key} a fact's key phrase  {cue} a fact's cue  {extra} {Extra} a fact's clause
#pragma once
#include <array>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>

namespace memfail::suites::memfail_suite::persona {

struct PersonName {
    std::string first;
    std::string last;
    bool female = false;
    std::string full() const { return first + " " + last; }
};

struct Flavor {
    std::string profession;  // with its article: "a ferry mechanic"
    std::string role;        // how a sentence may call the person: "the mechanic"
    std::string place;       // where the work happens: "the ferry terminal"
    std::string interest;    // gerund phrase: "restoring old pinball machines"
    std::vector<std::string> sentences;  // ordinary sentences about the work and the interest
    std::vector<std::string> excludes;   // fact keys that would contradict this persona
};

// One idiosyncratic fact: `key` is what a direct question asks for and what the answer gives.
struct FactInstance {
    std::string key;                    // "mushrooms", "eats a whole orange in the departure lounge"
    std::vector<std::string> details;   // distinctive phrases from the key, for key_details
    std::string cue;                    // what the question names, when it needs one ("a long flight")
    std::string extra;                  // the reason or note clause
    std::string tag;                    // instances sharing a tag contradict each other in one essay
};

struct FactType {
    std::string id;                                   // "refused_food"
    std::vector<std::string> sentences;               // one sentence stating the fact
    std::vector<std::array<std::string, 2>> pairs;    // the fact over two sentences: key, then reason
    std::vector<std::string> questions;               // first-person, {name}, never the key
    std::string answer;                               // short reference answer
    std::vector<FactInstance> instances;
};

struct Lexicon {
    std::vector<PersonName> entity_names;      // stored people; the first N are the default pool
    std::vector<PersonName> distractor_names;  // no first or last name shared with any entity name
    std::vector<std::string> intros;           // the opening sentence, naming the person in full
    std::vector<std::string> fillers;          // flavour-bound ordinary sentences ({place}, {interest})
    std::vector<Flavor> flavors;
    std::vector<FactType> fact_types;
};

// Parses and checks a lexicon file; the error names the file and the JSON path of the first problem.
// Among the checks: an instance's `details` are phrases of its own key and occur (normalised, on
// word boundaries) in no other instance's key, cue or extra, so an essay holds no other fact's answer.
Result<Lexicon> parse_lexicon(const std::string& file, const std::string& content);
// The embedded persona.json, parsed once; a broken file stops the program with its JSON path.
const Lexicon& lexicon();

// How a sentence refers to the essay's person through {Subj}/{subj}.
enum class Reference { name, pronoun, role };

struct Bindings {
    const PersonName* person = nullptr;  // fills {Name}, {First}, {name}, {Subj} (name) and the pronouns
    const Flavor* flavor = nullptr;      // fills {role}, {place}, {interest}, {profession}
    const FactInstance* fact = nullptr;  // fills {key}, {Key}, {cue}, {extra}, {Extra}
    Reference reference = Reference::pronoun;
};

// Fills every token; fact clauses are rendered first, so they may hold pronoun tokens themselves.
std::string render(const std::string& tmpl, const Bindings& b);

}  // namespace memfail::suites::memfail_suite::persona

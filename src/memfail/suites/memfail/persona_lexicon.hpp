// SPDX-License-Identifier: MIT
// Lexicon of the Persona-Retrieval generator: entity and distractor name pools, persona flavours,
// idiosyncratic fact types, and the ordinary sentences that pad an essay.
//
// Templates use these tokens, filled by render():
//   {Name} full name  {First} first name  {name} the person a question is about (full name)
//   {he} {him} {his} {himself} and capitalised {He} {His}: the pronouns of that person
//   {key} {Key} a fact's key phrase (capitalised)  {cue} a fact's cue  {extra} a fact's clause
//   {fill} an ordinary sentence's filler
#pragma once
#include <string>
#include <vector>

namespace memfail::suites::memfail_suite::persona {

struct PersonName {
    std::string first;
    std::string last;
    bool female = false;
    std::string full() const { return first + " " + last; }
};

// Stored entities: >= 110 full names from many cultures, first and last names all distinct.
const std::vector<PersonName>& entity_names();
// Distractors: >= 60 full names sharing no first or last name with any entity name.
const std::vector<PersonName>& distractor_names();

struct Flavor {
    std::string profession;  // with its article: "a ferry mechanic"
    std::string interest;    // gerund phrase: "restoring old pinball machines"
    std::vector<std::string> sentences;  // ordinary sentences about the work and the interest
    std::vector<std::string> excludes;   // fact keys that would contradict this persona
};
const std::vector<Flavor>& flavors();
// Opening sentences naming the entity, its profession and its interest.
const std::vector<std::string>& intro_templates();

// One idiosyncratic fact: `key` is what a direct question asks for and what the answer gives.
struct FactInstance {
    std::string key;                    // "mushrooms", "eats a whole orange in the departure lounge"
    std::vector<std::string> details;   // distinctive phrases from the key, for key_details
    std::string cue;                    // what the question names, when it needs one ("a long flight")
    std::string extra;                  // the reason or note clause of the sentence
    std::string tag;                    // instances sharing a tag contradict each other in one essay
};

struct FactType {
    std::string id;                          // "refused_food"
    std::vector<std::string> sentences;      // each states the fact naming {First}
    std::vector<std::string> questions;      // each asks for {key} about {name}
    std::string answer;                      // short reference answer
    std::vector<FactInstance> instances;
};
const std::vector<FactType>& fact_types();

// Ordinary descriptive sentences: a template with {fill} and the fillers that fit it.
struct OrdinarySlot {
    std::string tmpl;
    std::vector<std::string> fillers;
};
const std::vector<OrdinarySlot>& ordinary_slots();

struct Bindings {
    const PersonName* person = nullptr;   // fills {Name}, {First}, {name} and the pronouns
    const FactInstance* fact = nullptr;   // fills {key}, {Key}, {cue}, {extra}
    std::string fill;                     // fills {fill}
    std::string profession;               // fills {profession}
    std::string interest;                 // fills {interest}
};

// Fills every token, repeatedly, so fillers may themselves hold pronoun tokens.
std::string render(const std::string& tmpl, const Bindings& b);

}  // namespace memfail::suites::memfail_suite::persona

// SPDX-License-Identifier: MIT
// Lexicon of the Coexisting-Facts generator: the paper's 100 preference categories, each with a
// pool of preferences, first-person statement templates and holistic scenario questions.
//
// Statement templates use these tokens, filled by render_statement():
//   {p} the preference as used in a sentence ("bucket hats", "the cello", "jazz")
//   {P} the same, capitalised;  {c} the canonical form ("bucket hat")
//   {is} {has} {was} {s}  verb agreement with {p} ("is"/"are", "has"/"have", "was"/"were", "s"/"")
//   {label} the category's plural label ("hat styles")
#pragma once
#include <string>
#include <vector>

namespace memfail::suites::memfail_suite::coexisting {

struct Preference {
    std::string canonical;              // the answer form: "bucket hat"
    std::string phrase;                 // the sentence form: "bucket hats"
    bool plural = false;                // agreement of `phrase`
    std::vector<std::string> variants;  // canonical first; every accepted phrasing
};

struct Category {
    std::string name;   // the paper's category name: "hat styles"
    std::string label;  // plural noun phrase for templates: "hat styles"
    std::vector<Preference> preferences;
    std::vector<std::string> statement_templates;  // written for this category
    std::vector<std::string> questions;            // holistic scenario questions, naming no preference
    bool general_templates = true;  // whether the shared templates read naturally for this category
};

// The 100 categories in the paper's Table 4 order.
const std::vector<Category>& categories();

// Statement templates that read naturally for any category with general_templates set.
const std::vector<std::string>& general_statement_templates();

// Scenario questions built from {label}, used when a category's own questions collide in dedup.
const std::vector<std::string>& fallback_question_templates();

std::string render_statement(const std::string& tmpl, const Preference& preference, const Category& category);
std::string render_question(const std::string& tmpl, const Category& category);

}  // namespace memfail::suites::memfail_suite::coexisting

// SPDX-License-Identifier: MIT
// Shared by model_generate.cpp (the engine: requests, retries, dedup, assembly) and
// model_generate_rows.cpp (per dataset: what the code chooses, how a reply is checked, the CSV row).
#pragma once
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/suites/memfail/model_generate.hpp>

namespace memfail::suites::memfail_suite::model_gen {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

struct Prompt {
    std::string schema_name;
    std::string system;
    json schema;
};

struct Named {
    std::string name;
    std::string pronoun;
};

// lexicon/generation.json, read once.
struct Lexicon {
    std::string version;
    std::string hash;                      // content hash of the file
    std::map<std::string, Prompt> prompts;  // by dataset, "long_hop_distractors" and "long_hop_audit"
    // Conditional-Facts
    std::vector<std::pair<std::string, std::vector<std::string>>> condition_groups;  // group -> types
    std::vector<std::string> pet_condition_types;
    double share_person = 0.45, share_character = 0.30;
    std::array<int, 2> easy_sentences{6, 8}, hard_sentences{9, 11};
    std::map<std::string, std::vector<Named>> entities;  // "person", "character", "pet"
    // Coexisting-Facts
    std::vector<std::string> categories;
    std::array<int, 2> counts{2, 5};
    // Persona-Retrieval
    std::array<int, 2> persona_sentences{10, 14};
    std::vector<Named> persona_names;
    std::vector<std::string> distractor_names;
    std::vector<std::string> flavors;
    // Long-Hop
    std::array<std::size_t, 3> chains_per_hops{31, 32, 29};
    double named_share = 0.4;
    std::size_t wave = 8;
    std::vector<std::string> hop_names;
};
const Lexicon& lexicon();

// An item: one request's plan (sent on the PLAN line) and what the checks need besides it.
struct Item {
    std::size_t row = 0;
    ojson plan;
    json context = json::object();  // never sent
};

// A reply that passed its item's own checks.
struct Built {
    std::vector<std::string> cells;  // the row in the release's CSV columns; empty: not a whole row
    std::vector<std::string> dedup;  // texts compared (MinHash) with the kept rows' texts
    std::vector<std::pair<std::string, std::string>> unique;  // (what, text) no other kept row may use
    json kept = json::object();      // what later stages need
    // The row as <name>_raw.csv lists it, when `cells` is empty (a Long-Hop chain before its options).
    std::vector<std::string> raw;
};

// The checks of one stage: the reply against its plan; an error's message says what is wrong
// (it becomes the retry's PREVIOUS PROBLEM).
Result<Built> check_easy(const Item& item, const json& reply);
Result<Built> check_hard(const Item& item, const json& reply);
Result<Built> check_coexisting(const Item& item, const json& reply);
Result<Built> check_persona(const Item& item, const json& reply);
Result<Built> check_chain(const Item& item, const json& reply);
// The chain's item context holds the accepted chain (its `kept`); builds the whole CSV row.
Result<Built> check_distractors(const Item& item, const json& reply);
// The cross-chain audit of Long-Hop (Appendix B.6): the context lists the ids the reply may drop
// ("new") and the ids it may not ("fixed"); `kept` is {to_drop: [{id, reason}]}.
Result<Built> check_audit(const Item& item, const json& reply);

// The plans (see plan_rows) and the follow-up items.
std::vector<Item> plan_items(const std::string& dataset, const GenerateModelOptions& options);
Item hard_item(const Item& easy, const json& easy_kept);
Item distractor_item(const Item& chain, const json& chain_kept, std::uint64_t seed);
// Top-up (the paper's "oversample, then truncate each bucket to its target"). A row's bucket: what
// the plan fixes per bucket and the targets count (Conditional: condition_met and entity category;
// Coexisting: the preference count; Persona: the misleading slots; Long-Hop: hop count and voice).
std::string bucket_of(const std::string& dataset, const Item& item);
// What a row holds that no other row of the dataset may (a Coexisting category, a Long-Hop name),
// or empty.
std::string held_by(const std::string& dataset, const Item& item);
// A new row numbered after `planned`, in the bucket of `like`, the rest drawn afresh from the seed
// and its row number; `held`: what kept and pending rows hold (held_by). nullopt: none can be
// planned (every Coexisting category is taken).
std::optional<Item> top_up_item(const std::string& dataset, const GenerateModelOptions& options,
                                const std::vector<Item>& planned, const std::set<std::string>& held, const Item& like);
// "early yoga -> finish journaling"
std::string chain_summary(const json& chain_kept);

// The release's CSV columns of a dataset, and one CSV line (RFC 4180, "\n"-terminated).
const std::vector<std::string>& csv_columns(const std::string& dataset);
std::string csv_line(const std::vector<std::string>& cells);

}  // namespace memfail::suites::memfail_suite::model_gen

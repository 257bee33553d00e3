// SPDX-License-Identifier: MIT
// The five MemFail datasets, generated offline and deterministically from a seed. Each generator
// returns one scenario: every storage conversation of the dataset (stored into one memory) and every
// graded probe (asked after the last session), with structured evidence and key details.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <memfail/data/model.hpp>
#include <memfail/core/error.hpp>
#include <memfail/suites/dedup.hpp>

namespace memfail::suites::memfail_suite {

inline constexpr const char* k_generator_version = "memfail-gen/1";

// The dataset names, in the paper's order.
const std::vector<std::string>& dataset_names();

// Persona-Retrieval difficulty. The defaults match the paper's release (measured on its 100 rows);
// `memfail datasets generate --set persona.KEY=VALUE` changes them (apply_settings).
struct PersonaSettings {
    // Entity names are drawn with replacement from the first `name_pool` names of the lexicon
    // (30: about 27 distinct names per 100 rows, some on several essays, so a name alone does not
    // identify the essay). With `distinct_names` every row gets its own name (needs >= 100).
    std::size_t name_pool = 30;
    bool distinct_names = false;
    // Share of facts stated in a sentence that does not name the person (pronoun or role), so
    // knowing who the fact is about needs the essay's opening sentence too (release: 96 of 143).
    double pronoun_share = 0.67;
    // Share of facts stated over two sentences, the second giving the reason or detail.
    double multi_sentence_share = 0.35;
    // Share of direct questions set in the person's own world ("after a long week at the ferry
    // terminal, ..."), which with the name points to one essay; the others name only the person
    // and a situation (a dinner, a gift, a trip).
    double context_share = 0.6;
};

// Long-Hop difficulty. The defaults match the paper's release; `memfail datasets generate --set
// long_hop.KEY=VALUE` changes them (apply_settings).
struct LongHopSettings {
    // Share of chains about a named person ("Tobias says ... is his favorite snack"), who is named in
    // every fact of the chain and in its question, so the name alone finds every fact; the others
    // speak in the first person ("I ..."). Release: 40% of the 92 chains. The count is exact per
    // hop count (round(share x chains of that K)).
    double named_share = 0.40;
};

struct GenerateOptions {
    std::uint64_t seed = 42;
    PersonaSettings persona{};
    LongHopSettings long_hop{};
};

// Reads settings given as text ("persona.name_pool" = "100"), as `datasets generate --set` passes
// them; invalid_input naming the key for an unknown key or a value out of range. Every memfail
// dataset accepts them (those for Persona change only Persona), so `generate all --set ...` works.
Result<void> apply_settings(const std::map<std::string, std::string>& params, GenerateOptions& options);

// Conditional-Facts: 100 rules "entity does behaviour only under condition", Easy (one sentence) and
// Hard (behaviour, condition and link sentences, never adjacent, no conditional connective).
// Easy and Hard share the same entity and condition specs for one seed.
data::Scenario generate_conditional_facts_easy(const GenerateOptions& options);
data::Scenario generate_conditional_facts_hard(const GenerateOptions& options);
// Coexisting-Facts: 100 categories, N in 2..5 preferences each, one statement per conversation.
data::Scenario generate_coexisting_facts(const GenerateOptions& options);
// Persona-Retrieval: 100 essays, 3 probes each, about half misleading (abstain).
data::Scenario generate_persona_retrieval(const GenerateOptions& options);
// Long-Hop: 92 chains (K=1/2/3: 31/32/29), 5-way multiple choice.
data::Scenario generate_long_hop(const GenerateOptions& options);

// Generates the named dataset; empty optional-like error when the name is unknown.
Result<data::Scenario> generate_dataset(const std::string& name, const GenerateOptions& options);

// Records a dedup pass in scenario.meta["dedup"]: threshold, key, counts before/after, drops.
void record_dedup(data::Scenario& scenario, const std::string& key, const MinHashDeduper& deduper,
                  std::size_t candidates);

}  // namespace memfail::suites::memfail_suite

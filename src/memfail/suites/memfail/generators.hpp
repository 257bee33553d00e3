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
    double context_share = 0.65;
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

// Conditional-Facts difficulty (Easy and Hard). The defaults match the paper's release; `memfail
// datasets generate --set conditional.KEY=VALUE` changes them (apply_settings).
struct ConditionalSettings {
    // Share of rows whose entity takes a name an earlier row of its category already has (LLM-written
    // rows reuse popular names), so a name alone does not identify the essay.
    double name_reuse = 0.2;
    // Share of questions that name the behaviour in other words than the essay ("make origami birds
    // from till slips" for "folds paper cranes out of old receipts"), per variant: the release's Easy
    // questions nearly always reuse the essay's words, its Hard ones paraphrase more. One draw per row
    // decides both, so every question Easy paraphrases Hard paraphrases too (the key
    // `conditional.paraphrase_share` sets both shares).
    double easy_paraphrase_share = 0.02;
    double hard_paraphrase_share = 0.15;
    // Share of the questions not paraphrased that restate the behaviour loosely, keeping a noun or
    // two of it but not its wording ("paint tiny sailboats in a teacup" for "paints tiny sailboats
    // inside used teacups"), as the release's Hard questions do (all five sample rows). Easy keeps the essay's words: loose Easy questions put the hashed Easy
    // cells 8-10 points under the release (docs/CALIBRATION.md).
    double easy_loose_share = 0.0;
    double hard_loose_share = 0.2;
    // Share of filler sentences that refer to the entity by its role ("the porter") instead of a pronoun.
    double role_share = 0.4;
    // Easy only (a Hard essay names the entity in its intro alone): the share of rule sentences,
    // and of filler sentences, that name the entity where the template refers to it once.
    double easy_rule_named_share = 0.97;
    double easy_name_share = 0.25;
    // Essay length in sentences (the validator allows Easy 5-8, Hard 8-12).
    std::size_t easy_min_sentences = 6, easy_max_sentences = 8;
    std::size_t hard_min_sentences = 9, hard_max_sentences = 11;
};

struct GenerateOptions {
    std::uint64_t seed = 42;
    PersonaSettings persona{};
    ConditionalSettings conditional{};
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

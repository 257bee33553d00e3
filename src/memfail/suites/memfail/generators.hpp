// SPDX-License-Identifier: MIT
// The five MemFail datasets, generated offline and deterministically from a seed. Each generator
// returns one scenario: every storage conversation of the dataset (stored into one memory) and every
// graded probe (asked after the last session), with structured evidence and key details.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <memfail/data/model.hpp>
#include <memfail/core/error.hpp>
#include <memfail/suites/dedup.hpp>

namespace memfail::suites::memfail_suite {

inline constexpr const char* k_generator_version = "memfail-gen/1";

// The dataset names, in the paper's order.
const std::vector<std::string>& dataset_names();

struct GenerateOptions {
    std::uint64_t seed = 42;
};

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

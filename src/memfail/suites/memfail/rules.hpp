// SPDX-License-Identifier: MIT
// Dataset-specific validation rules of the five MemFail datasets (the construction rules of the
// paper's Section 4 and Appendix B). `memfail datasets validate` runs validate_structure() and then
// the rule set named by the scenario's `dataset` field.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/data/validate.hpp>

namespace memfail::suites::memfail_suite {

void check_conditional_facts_rules(const data::Scenario& s, bool hard, std::size_t line,
                                   std::vector<data::Violation>& out);
void check_coexisting_facts_rules(const data::Scenario& s, std::size_t line,
                                  std::vector<data::Violation>& out);
void check_persona_retrieval_rules(const data::Scenario& s, std::size_t line,
                                   std::vector<data::Violation>& out);
void check_long_hop_rules(const data::Scenario& s, std::size_t line, std::vector<data::Violation>& out);

// True when `text` is worded as a refusal, an avoidance or a negation ("refuses to move", "won't",
// "never", "avoids", "not", "unless", "except"): a Conditional rule or question so worded may answer
// No where the condition is met (and Yes where it is not) without contradicting its label.
bool refusal_worded(std::string_view text);
// True when a Conditional probe's Yes/No may legitimately be the opposite of its condition_met: one
// of `texts` (its question, its behaviour) or its fact's polarity or exclusivity detail is
// refusal-worded. The validator and the importer's warning decide by it.
bool polarity_may_invert(std::initializer_list<std::string_view> texts, const data::EvidenceFact* fact);

// Runs the rule set for s.dataset; a dataset name with no rules adds nothing.
void check_dataset_rules(const data::Scenario& s, std::size_t line, std::vector<data::Violation>& out);

}  // namespace memfail::suites::memfail_suite

// SPDX-License-Identifier: MIT
// The staged failure taxonomy: the first stage a probe fails at is its verdict.
#pragma once
#include <optional>
#include <string>

namespace memfail::grade {

// In pipeline order. `retrieved` means every memory-side check passed and the answer stage was not
// graded (no LLM): it is memory-side success, never answer accuracy. `unverified` is no stage of the
// pipeline but a verdict the rules could not reach: a fact held in other words than it was stated,
// whose storage or summary only a judge can decide (docs/TAXONOMY.md). It is never success.
enum class Stage { not_stored, summary_error, unverified, not_retrieved, retrieved, reasoning_error, correct };

const char* stage_name(Stage stage);
std::optional<Stage> parse_stage(const std::string& name);
// True for the stages that are memory-system failures.
bool is_memory_failure(Stage stage);

}  // namespace memfail::grade

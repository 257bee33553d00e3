// SPDX-License-Identifier: MIT
// A generative stand-in for a model on memfail's dataset-generation prompts (`memfail datasets
// generate NAME --model M`; schemas memfail_gen_*): from the request's `PLAN: {json}` line alone (and
// its `ATTEMPT: N` line, so a retry differs) it writes a deterministic, rule-based reply that keeps
// every rule of the request/reply contract (Conditional essays with the rule woven in, first-person
// preference statements, persona essays and questions, Long-Hop chains and distractors). Its word
// pools and sentence templates are data (generative.json, embedded at build time). A test double so
// `datasets generate` runs offline; it is not a model and its datasets measure nothing about one.
#pragma once
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace memfail::fake_llm {

// True for the six schema names the stand-in writes: memfail_gen_conditional_easy,
// memfail_gen_conditional_hard, memfail_gen_coexisting, memfail_gen_persona, memfail_gen_long_hop,
// memfail_gen_long_hop_distractors, memfail_gen_long_hop_audit.
bool is_generative_schema(std::string_view schema_name);

// The reply for a chat request whose schema is one of those names, read from the last user message
// of `messages` that holds a `PLAN: ` line; nullopt for other schemas or when no PLAN line parses
// as a JSON object. Deterministic: the same plan and attempt give the same reply; another ATTEMPT
// gives another one.
std::optional<nlohmann::json> generative_reply(std::string_view schema_name, const nlohmann::json& messages);

}  // namespace memfail::fake_llm

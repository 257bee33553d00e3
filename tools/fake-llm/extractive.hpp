// SPDX-License-Identifier: MIT
// An extractive stand-in for a model on memfail's own memory-system prompts (facts, notes, graph):
// it derives a schema-valid reply from the request text by rules — sentences become facts, a turn
// becomes its own note, capitalised names become entities — so the model-backed systems store
// something meaningful with no model at all. It measures the systems' mechanics (routing, storage,
// retrieval, provenance), not what a real model would extract; docs say so wherever it is used.
#pragma once
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace memfail::fake_llm {

// The reply for a chat request whose response_format names `schema_name` (memfail_facts_extract,
// memfail_facts_decide, memfail_notes_write, memfail_notes_link, memfail_graph_extract,
// memfail_graph_resolve, memfail_graph_invalidate, memfail_ledger_extract), derived from `messages` (the request's
// "messages" array). nullopt for any other schema. Deterministic: same input, same reply.
std::optional<nlohmann::json> extractive_reply(std::string_view schema_name, const nlohmann::json& messages);

// The stand-in test-taker: for memfail's open-question answer prompt (no schema; its system message
// lists "Notes from memory:"), the first note word for word, or a decline when there is none. Empty
// for every other request. A reader that trusts the top memory: it shows what retrieval hands the
// answer stage, never what a model would make of it.
std::optional<std::string> extractive_answer(const nlohmann::json& messages);

}  // namespace memfail::fake_llm

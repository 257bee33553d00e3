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
// "messages" array). It also stands in for the dynamic suite's judge (memfail_judge_dynamic_fields:
// a field is core-correct when its predicted leaf, normalised, contains the reference's or the other
// way round, detail 2 when they are equal; memfail_judge_dynamic_attribution: all_clear when every
// gold log's text is in a retrieved memory, irrelevant_evidence when none is, else detail_miss).
// nullopt for any other schema. Deterministic: same input, same reply.
std::optional<nlohmann::json> extractive_reply(std::string_view schema_name, const nlohmann::json& messages);

// The stand-in test-taker: for memfail's open-question answer prompt (no schema; its system message
// lists "Notes from memory:"), the first note word for word, or a decline when there is none; for a
// profile task (its system message lists "Records from memory:", its user message asks to fill every
// "<fill>" of a JSON template), the template with each "<fill>" replaced by rule from the records: a
// request-payload value under the leaf's own key name, else by the key's kind (days: the most frequent
// weekday of the records' timestamps, written out; times: the most frequent "HH:MM", start times first; places and
// activities: place-like and type-like payload values), else "unknown". Empty for every other
// request. A reader that trusts what it is shown: it shows what retrieval hands the answer stage,
// never what a model would make of it.
std::optional<std::string> extractive_answer(const nlohmann::json& messages);

}  // namespace memfail::fake_llm

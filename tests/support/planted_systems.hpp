// SPDX-License-Identifier: MIT
// Memory systems with one planted fault each, to prove the grader attributes failures to the right
// stage: one stores nothing, one drops every condition clause, one retrieves at random.
#pragma once
#include <memory>
#include <string>

#include <memfail/memory/memory_system.hpp>

namespace memfail::testing {

// Accepts every conversation and keeps nothing; claims provenance, so every fact is not_stored.
std::unique_ptr<memory::MemorySystem> make_stores_nothing();

// Stores every message verbatim (one memory per message, with sources) but first deletes every
// phrase that the ground truth marks as a "condition" key detail: the summariser that strips the
// qualifying condition of a conditional fact. Retrieval is the real BM25 retriever over what it kept.
std::unique_ptr<memory::MemorySystem> make_drops_conditions(const memory::SystemContext& context);

// The distortions summarising systems make to what they keep (issue 13's planted faults). Each is
// applied to every user message before a verbatim store keeps it, one memory per message.
enum class Distortion {
    drop_exclusivity,  // deletes "only", "solely", "exclusively", "except", "unless"
    drop_condition,    // deletes each ground-truth condition phrase
    hedge,             // "only" -> "usually", "never" -> "rarely": a rule becomes a tendency
    negate,            // "only" -> "not only", "never" -> "not never": every phrase kept, meaning lost
    detach_entity,     // every ground-truth entity name (and its possessive) becomes "someone"
    swap_entities,     // each message's entity name becomes the next message's: two persons' facts swapped
    truncate,          // keeps the first 12 words
};
const char* distortion_name(Distortion distortion);
inline constexpr Distortion k_all_distortions[] = {Distortion::drop_exclusivity, Distortion::drop_condition,
                                                   Distortion::hedge,            Distortion::negate,
                                                   Distortion::detach_entity,    Distortion::swap_entities,
                                                   Distortion::truncate};

// A verbatim store (BM25 retrieval) that keeps each message distorted. With `provenance` false it
// reports none (no sources, capability off): the grader must reach the same verdicts either way.
std::unique_ptr<memory::MemorySystem> make_distorting(const memory::SystemContext& context, Distortion distortion,
                                                      bool provenance);

// Stores faithfully through `verbatim` but answers each query with k memories drawn at random.
std::unique_ptr<memory::MemorySystem> make_random_retriever(const memory::SystemContext& context,
                                                            unsigned long long seed);

}  // namespace memfail::testing

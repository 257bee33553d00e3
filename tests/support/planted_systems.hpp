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

// Stores faithfully through `verbatim` but answers each query with k memories drawn at random.
std::unique_ptr<memory::MemorySystem> make_random_retriever(const memory::SystemContext& context,
                                                            unsigned long long seed);

}  // namespace memfail::testing

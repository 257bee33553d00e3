// SPDX-License-Identifier: MIT
// The memory-system interface memfail drives: the paper's three operations plus reset and optional
// extras. Built-in systems live in builtin/, are created from spec strings in registry.cpp, and
// external systems will plug in through adapters that implement this same interface.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/core/spec.hpp>
#include <memfail/data/model.hpp>
#include <memfail/llm/llm_client.hpp>

namespace memfail::memory {

struct Memory {
    std::string id;
    std::string text;
    std::string created_at;  // ISO 8601 of the session that created it
    std::string updated_at;
    // Message ids the memory came from; empty when the system cannot tell. Graders use these for
    // exact storage and retrieval checks and fall back to key-detail matching without them.
    std::vector<std::string> sources;
    // When what the memory says became true, as the system tells it (Graphiti's valid_at); empty
    // when it does not. Shown to the answer model as the memory's date when no source message dates it.
    std::string valid_at{};
};

struct Hit {
    Memory memory;
    double score = 0;  // higher is more relevant; comparable only within one call
};

struct MemoryEvent {
    std::string memory_id;
    std::string event;  // "add", "update", "delete"
    std::string old_text;
    std::string new_text;
    std::string at;
    std::vector<std::string> sources;
};

// A system's own answer to a question (answer()), for systems that are agents with memory.
struct SystemAnswer {
    std::string text;
    std::optional<double> confidence;  // in [0, 1]; absent when the system does not say
    // Message ids the answer rests on; empty when the system does not tell.
    std::vector<std::string> sources;
};

struct Capabilities {
    bool provenance = false;        // memories report their source message ids
    bool history = false;           // history() works
    bool as_of = false;             // state_as_of() works
    bool idempotent_store = false;  // storing the same session twice leaves one copy (safe resume)
    // answer() works: the system answers a question itself (an agent with memory), so a suite may
    // grade that answer instead of the test-taker's answer from retrieved memories.
    bool answers = false;
    bool uses_ground_truth = false; // wants observe_ground_truth() before storage (oracle only)
    // Lives outside memfail (an adapter): its failures are recorded against the probes they affect
    // and the run goes on, where a built-in system's failure stops the run (it is a bug or a model
    // error that a resume can retry).
    bool external = false;
};

class MemorySystem {
public:
    virtual ~MemorySystem() = default;

    // The canonical spec this system was made from, e.g. "verbatim:chunk=turn,retriever=bm25".
    virtual std::string spec() const = 0;
    virtual Capabilities capabilities() const = 0;

    // Summarise and store one conversation (the paper's store_conversation).
    virtual Result<void> store_conversation(const data::Session& session) = 0;
    // Top-`k` memories for `query`, best first; fewer when fewer are held. Never writes memory.
    virtual Result<std::vector<Hit>> retrieve_memories(std::string_view query,
                                                       const std::vector<data::Message>& history,
                                                       int k) = 0;
    // Everything currently held, in a stable order.
    virtual Result<std::vector<Memory>> all_memories() = 0;
    // Forgets everything.
    virtual Result<void> reset() = 0;

    // Optional operations: these defaults answer ErrorKind::unsupported.
    virtual Result<std::vector<MemoryEvent>> history(std::string_view memory_id);
    virtual Result<std::vector<Memory>> state_as_of(std::string_view timestamp);
    // The system's own answer to `query`, given the conversation so far (possibly empty). Works
    // when capabilities().answers. Should leave what the system holds as it was: the same
    // question may be asked more than once.
    virtual Result<SystemAnswer> answer(std::string_view query, const std::vector<data::Message>& history);

    // Called before storage when capabilities().uses_ground_truth: only reference systems (oracle)
    // may look at the answers. The scenario outlives the system's use of it.
    virtual void observe_ground_truth(const data::Scenario& scenario) {}

    // Counts the times the system lost what it held without reset() — an adapter process that
    // crashed and was restarted. The runner compares it before and after a scenario and records
    // that scenario's probes as errors instead of grading them against a memory that is gone.
    virtual std::uint64_t generation() const { return 0; }

    // What serves retrieve_memories() now: the index and the settings that decide its recall
    // ("bm25", "hashed:dim=512 hnsw(int8,M=32,efc=100,ef=256)+rescore(f32,pool=64)"), recorded per
    // checkpoint in the results file; an approximate index's misses read as not_retrieved, so a
    // reader must know which served. Empty: nothing to say (no index of its own, or an adapter).
    virtual std::string serving() const { return {}; }
};

// The models a system may call: its own chat model (--system-model) and an embeddings model
// (--embed-model), both through the run's client, so every call is cached, accounted (roles
// `system` and `embed`) and replayed on a re-run. A null client means offline: systems that need a
// model refuse to start, saying which flag is missing.
struct SystemServices {
    llm::LlmClient* client = nullptr;
    std::string model;        // chat model for the system's own LLM calls; empty: none
    std::string embed_model;  // embeddings model; empty: the offline hashed embedder
    std::optional<double> temperature;
    std::optional<std::int64_t> seed;
};

// Where a system may keep its files. Systems persist everything they hold in SQLite under
// `storage_dir` (created when missing); an empty `storage_dir` means a private in-memory database.
struct SystemContext {
    std::string storage_dir;
    std::string store_name = "memory";  // file stem, so several stores can share one folder
    SystemServices services = {};
};

struct OptionInfo {
    std::string name;
    std::string default_value;
    std::string help;
};

struct SystemInfo {
    std::string name;
    std::string summary;
    std::vector<OptionInfo> options;
};

// Creates a system from a spec such as "verbatim:chunk=sentence,retriever=hashed". Unknown names or
// options are invalid_input errors with a "did you mean" hint.
Result<std::unique_ptr<MemorySystem>> make_memory_system(std::string_view spec,
                                                         const SystemContext& context);
Result<std::unique_ptr<MemorySystem>> make_memory_system(const Spec& spec, const SystemContext& context);

// Every built-in system with its options, for `memfail ls systems`.
std::vector<SystemInfo> list_memory_systems();

}  // namespace memfail::memory

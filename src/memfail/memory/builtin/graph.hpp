// SPDX-License-Identifier: MIT
// The graph memory system: StructMem / Graphiti. An LLM extracts typed entities and the relations
// between them from each conversation (prompts following Graphiti's published design; extract=careful
// for memfail's tuned ones); every relation becomes an edge carrying a fact sentence, the time it
// became valid, the time it stopped being valid (none while it holds) and its
// source message ids. Entities are merged by normalised name, else by an LLM decision among close
// candidates; a new edge that contradicts older edges between the same two entities closes them
// (kept, never deleted). Retrieval starts from the entities the query names or whose facts it
// resembles, walks their neighbourhood up to a hop limit and ranks those edges by reciprocal-rank
// fusion of BM25 and cosine similarity.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <memfail/memory/memory_system.hpp>
#include <memfail/memory/retriever.hpp>
#include <memfail/store/database.hpp>

namespace memfail::memory {

struct GraphOptions {
    int hops = 2;                  // neighbourhood walked from the query's entities
    bool include_invalid = false;  // also show edges a later fact contradicted
    // extract=careful: memfail's tuned extraction and contradiction prompts (keep conditions, compatible
    // facts stand), not the published Graphiti/StructMem design that the default follows.
    bool careful = false;
    int dim = 512;                 // hashed embeddings when no --embed-model is given
};

class GraphSystem final : public MemorySystem {
public:
    static Result<std::unique_ptr<MemorySystem>> create(const Spec& spec, const SystemContext& context);
    static SystemInfo info();

    std::string spec() const override;
    Capabilities capabilities() const override;
    Result<void> store_conversation(const data::Session& session) override;
    Result<std::vector<Hit>> retrieve_memories(std::string_view query, const std::vector<data::Message>& history,
                                               int k) override;
    Result<std::vector<Memory>> all_memories() override;
    Result<void> reset() override;
    // Events of one edge: "add", "repeat" (said again: sources merged), "invalidate".
    Result<std::vector<MemoryEvent>> history(std::string_view memory_id) override;
    // The edges that held at `timestamp` (valid_at <= timestamp < invalid_at).
    Result<std::vector<Memory>> state_as_of(std::string_view timestamp) override;

    // Answers from the model that named something that was not shown (an entity, candidate or older
    // edge number out of range); each was ignored and is kept in graph_history as event "rejected".
    Result<std::int64_t> rejected_decisions();

    struct Entity {
        std::string id;  // "ent-<n>"
        std::string name;
        std::string type;
    };
    // Every entity, in creation order (for inspection and tests).
    Result<std::vector<Entity>> entities();
    // The entity an edge runs from and to.
    Result<std::pair<std::string, std::string>> edge_endpoints(std::string_view edge_id);

private:
    struct EntityState {
        Entity entity;
        std::vector<std::string> names;  // every normalised name it was mentioned by
    };

    GraphSystem(GraphOptions options, SystemServices services)
        : m_options(options), m_services(std::move(services)) {}
    Result<void> initialise(const std::string& path);
    Result<void> reload_entities();
    template <class Body>
    Result<void> in_transaction(Body&& body);
    Result<void> store_in_transaction(const data::Session& session);
    Result<std::string> resolve_entity(const std::string& name, const std::string& type,
                                       const std::vector<std::string>& context_facts,
                                       const std::vector<std::string>& created_now, const data::Session& session);
    Result<std::string> create_entity(const std::string& name, const std::string& norm, const std::string& type);
    Result<void> add_name(const std::string& norm, const std::string& entity_id);
    Result<std::vector<std::string>> facts_of(const std::string& entity_id, int limit);

    GraphOptions m_options;
    SystemServices m_services;
    std::optional<store::Database> m_db;  // declared before what points into it
    std::unique_ptr<Retriever> m_dense;
    std::unique_ptr<Retriever> m_bm25;
    // Entities in RAM (small next to edges), so name lookups in queries cost no SQL.
    std::vector<EntityState> m_entities;
    std::unordered_map<std::string, std::size_t> m_entity_index;  // id -> position in m_entities
    std::unordered_map<std::string, std::string> m_by_name;       // normalised name -> entity id
    std::size_t m_longest_name = 0;                               // words in the longest name
    // The graph's shape in RAM (derived from SQLite like m_entities, reloaded with it): each edge's
    // endpoints by entity position, and per entity the edges retrieval may walk (valid ones, or all
    // with include_invalid) by ascending seq. Retrieval needs only the shape: reading a busy
    // entity's edges through SQLite cost a row step and two strings per edge.
    struct EdgeShape {
        std::int32_t source = -1, target = -1;  // positions in m_entities; -1: no such edge
        bool valid = true;
    };
    std::vector<EdgeShape> m_edge_shapes;                 // by seq
    std::vector<std::vector<std::int64_t>> m_adjacent;    // by entity position
    Result<void> reload_shapes();
    // The shape of edge `seq`, or nullptr when there is no such walkable edge.
    EdgeShape* edge_shape(std::int64_t seq);
    void shape_added(std::int64_t seq, const std::string& source, const std::string& target);
    void shape_invalidated(std::int64_t seq);
    // An edge was invalidated: updates the shape and, without include_invalid, the dense index.
    Result<void> edge_closed(std::int64_t seq);

    CachedStatement m_edge_row{"SELECT id, fact, valid_at, invalid_at, sources_json FROM edges WHERE seq = ?"};
};

}  // namespace memfail::memory

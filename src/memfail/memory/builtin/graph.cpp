// SPDX-License-Identifier: MIT
// graph: extraction, entity resolution, contradiction handling with validity times, and retrieval by
// neighbourhood walk plus BM25/cosine reciprocal-rank fusion.
#include <memfail/memory/builtin/graph.hpp>
#include <memfail/memory/builtin/system_store.hpp>

#include <algorithm>
#include <filesystem>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include <memfail/core/text.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/memory/text_embedder.hpp>

namespace memfail::memory {

using nlohmann::json;

namespace {

constexpr int k_schema_version = 1;
constexpr std::size_t k_max_candidates = 5;     // known entities shown when resolving one
constexpr std::size_t k_max_compared = 10;      // older edges shown when checking a contradiction
constexpr int k_rrf_k = 60;                     // the usual reciprocal-rank-fusion constant
constexpr int k_dense_seeds = 3;                // best cosine matches whose entities seed the walk

// Edges are never rewritten: invalidation only sets invalid_at, so the retrievers index each edge's
// fact once, under its seq. entity_names holds every normalised name an entity was mentioned by,
// so an alias the model resolved once is merged without asking again.
constexpr const char* k_schema = R"sql(
CREATE TABLE IF NOT EXISTS entities (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  norm_name TEXT NOT NULL,
  type TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entity_names (
  norm_name TEXT PRIMARY KEY,
  entity TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS edges (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  source TEXT NOT NULL,
  target TEXT NOT NULL,
  relation TEXT NOT NULL,
  fact TEXT NOT NULL,
  valid_at TEXT NOT NULL,
  invalid_at TEXT,
  sources_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS edges_by_source ON edges (source, target);
CREATE INDEX IF NOT EXISTS edges_by_target ON edges (target);
CREATE INDEX IF NOT EXISTS edges_invalid ON edges (seq) WHERE invalid_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS edges_valid_pair ON edges (source, target) WHERE invalid_at IS NULL;
CREATE INDEX IF NOT EXISTS edges_valid_by_target ON edges (target) WHERE invalid_at IS NULL;
CREATE TABLE IF NOT EXISTS graph_history (
  n INTEGER PRIMARY KEY,
  edge_id TEXT NOT NULL,
  event TEXT NOT NULL,
  old_text TEXT NOT NULL,
  new_text TEXT NOT NULL,
  at TEXT NOT NULL,
  sources_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS graph_sessions (session_id TEXT PRIMARY KEY);
)sql";

std::vector<std::string> merged(std::vector<std::string> a, const std::vector<std::string>& b) {
    for (const auto& s : b)
        if (std::find(a.begin(), a.end(), s) == a.end()) a.push_back(s);
    return a;
}

std::vector<std::string> parse_sources(std::string_view text) {
    return json::parse(text).get<std::vector<std::string>>();
}

Result<void> add_history(store::Database& db, const std::string& edge_id, const std::string& event,
                         const std::string& old_text, const std::string& new_text, const std::string& at,
                         const std::vector<std::string>& sources) {
    MF_TRY_ASSIGN(store::Statement s, db.prepare(
        "INSERT INTO graph_history (edge_id, event, old_text, new_text, at, sources_json) VALUES (?,?,?,?,?,?)"));
    s.bind(1, edge_id).bind(2, event).bind(3, old_text).bind(4, new_text).bind(5, at).bind(6, json(sources).dump());
    return s.run();
}

// Words that carry meaning, for comparing names and facts.
std::set<std::string> content_words(std::string_view text) {
    std::set<std::string> out;
    for (auto& w : text::words(text))
        if (!text::is_stopword(w)) out.insert(std::move(w));
    return out;
}

double overlap(const std::set<std::string>& a, const std::set<std::string>& b) {
    if (a.empty() || b.empty()) return 0;
    std::size_t shared = 0;
    for (const auto& w : a) shared += b.count(w);
    return static_cast<double>(shared) / static_cast<double>(a.size() + b.size() - shared);
}

// How alike two normalised names are, from 0 to 1: one inside the other ("priya" / "priya shah"),
// shared words, or a near spelling ("priya" / "pria").
double name_similarity(const std::string& a, const std::string& b) {
    if (a == b) return 1;
    double best = overlap(content_words(a), content_words(b));
    if (text::normalized_contains(a, b) || text::normalized_contains(b, a)) best = std::max(best, 0.8);
    const std::size_t longest = std::max(a.size(), b.size());
    if (longest >= 4) {
        const double close = 1.0 - static_cast<double>(text::edit_distance(a, b)) / static_cast<double>(longest);
        if (close >= 0.75) best = std::max(best, close);
    }
    return best;
}

std::string lower_trimmed(std::string_view s) { return text::to_lower(text::trim(s)); }

llm::prompts::PromptStyle prompt_style(const GraphOptions& options) {
    return options.careful ? llm::prompts::PromptStyle::careful : llm::prompts::PromptStyle::published;
}

Memory edge_memory(std::string id, std::string fact, std::string valid_at, const std::optional<std::string>& invalid_at,
                   std::vector<std::string> sources, bool mark_stale = true) {
    Memory m;
    m.id = std::move(id);
    m.text = std::move(fact);
    m.created_at = valid_at;
    m.updated_at = invalid_at ? *invalid_at : valid_at;
    // Shown only when asked for: say the fact is stale, or the reader cannot tell which one holds.
    if (invalid_at && mark_stale) m.text += " (no longer true as of " + invalid_at->substr(0, 10) + ")";
    m.sources = std::move(sources);
    return m;
}

}  // namespace

Result<std::unique_ptr<MemorySystem>> GraphSystem::create(const Spec& spec, const SystemContext& context) {
    MF_TRY(spec.check_keys({"hops", "include_invalid", "extract", "dim"}));
    GraphOptions options;
    MF_TRY_ASSIGN(const std::string extract, spec.get_choice("extract", "published", {"published", "careful"}));
    options.careful = extract == "careful";
    MF_TRY_ASSIGN(const std::int64_t hops, bounded_option(spec, "hops", 2, 1, 5, "graph"));
    MF_TRY_ASSIGN(options.include_invalid, spec.get_bool("include_invalid", false));
    MF_TRY_ASSIGN(const std::int64_t dim, bounded_option(spec, "dim", 512, 16, 8192, "graph"));
    options.hops = static_cast<int>(hops);
    options.dim = static_cast<int>(dim);
    MF_TRY(require_system_model(context, "graph", "extracts entities and relations"));
    MF_TRY_ASSIGN(const std::string path, store_path(context));
    std::unique_ptr<GraphSystem> system(new GraphSystem(options, context.services));
    MF_TRY(system->initialise(path));
    return std::unique_ptr<MemorySystem>(std::move(system));
}

SystemInfo GraphSystem::info() {
    return {"graph",
            "StructMem / Graphiti: the --system-model extracts entities and relations; facts are time-stamped "
            "edges, contradicted ones are closed, not deleted; retrieval walks the query's entities' "
            "neighbourhood and fuses BM25 and cosine ranks",
            {{"hops", "2", "edges walked from the entities a query names (1-5)"},
             {"include_invalid", "false", "true: also retrieve facts a later fact contradicted, marked as stale"},
             {"extract", "published",
              "published: Graphiti/StructMem-style entity, edge and invalidation prompts; careful: memfail's tuned "
              "prompts that keep every condition, exception, time and quantity and leave compatible facts valid "
              "(tuned, not the published design)"},
             {"dim", "512", "hashed embedding size when no --embed-model is given"}}};
}

template <class Body>
Result<void> GraphSystem::in_transaction(Body&& body) {
    Result<void> outcome = memory::in_transaction(*m_db, {m_dense.get(), m_bm25.get()}, std::forward<Body>(body));
    // The entity table in RAM is derived from SQLite too: read it back as the rollback left it.
    if (!outcome) (void)reload_entities();
    return outcome;
}

Result<void> GraphSystem::initialise(const std::string& path) {
    MF_TRY_ASSIGN(store::Database db, open_store(path, k_schema, k_schema_version));
    m_db.emplace(std::move(db));
    MF_TRY_ASSIGN(std::unique_ptr<TextEmbedder> embedder, make_text_embedder(m_services, m_options.dim));
    MF_TRY_ASSIGN(m_dense, EmbeddingRetriever::open(*m_db, std::move(embedder)));
    MF_TRY_ASSIGN(std::unique_ptr<Bm25Retriever> bm25, Bm25Retriever::open(*m_db));
    // BM25 keeps invalidated edges (dropping one would move every IDF) but, unless they are asked
    // for, leaves them out of its searches, so its top rows are the eligible ones.
    if (!m_options.include_invalid)
        bm25->set_excluded([this](std::int64_t seq) {
            const EdgeShape* shape = edge_shape(seq);
            return shape == nullptr || !shape->valid;
        });
    m_bm25 = std::move(bm25);
    MF_TRY(reload_entities());
    // Both indexes are derived from the edges. BM25 holds every edge; the dense index holds the
    // edges retrieval may return (without include_invalid, an invalidated edge leaves it, so
    // searches need not look past a pair's closed history). A dense index from before that holds
    // every edge has its invalidated ones removed; any other mismatch (another embedder, never
    // built, or include_invalid now asking for closed edges) rebuilds the index.
    MF_TRY_ASSIGN(const std::int64_t rows, scalar_of(*m_db, "SELECT count(*) FROM edges"));
    MF_TRY_ASSIGN(const std::int64_t valid, scalar_of(*m_db, "SELECT count(*) FROM edges WHERE invalid_at IS NULL"));
    for (Retriever* index : {m_dense.get(), m_bm25.get()}) {
        const bool dense_only_valid = index == m_dense.get() && !m_options.include_invalid;
        const std::int64_t wanted = dense_only_valid ? valid : rows;
        MF_TRY_ASSIGN(const std::int64_t indexed, index->count());
        if (indexed == wanted) continue;
        MF_TRY(in_transaction([&]() -> Result<void> {
            if (dense_only_valid && indexed == rows)
                return remove_listed(*m_db, *index, "SELECT seq FROM edges WHERE invalid_at IS NOT NULL");
            MF_TRY(index->clear());
            MF_TRY_ASSIGN(store::Statement all,
                          m_db->prepare(dense_only_valid ? "SELECT seq, fact FROM edges WHERE invalid_at IS NULL ORDER BY seq"
                                                         : "SELECT seq, fact FROM edges ORDER BY seq"));
            Result<void> added;
            MF_TRY(all.for_each_row([&] {
                if (added) added = index->add(all.column_int(0), all.column_text_view(1));
            }));
            return added;
        }));
    }
    return {};
}

Result<void> GraphSystem::reload_entities() {
    m_entities.clear();
    m_entity_index.clear();
    m_by_name.clear();
    m_longest_name = 0;
    MF_TRY_ASSIGN(store::Statement all, m_db->prepare("SELECT id, name, type FROM entities ORDER BY seq"));
    MF_TRY(all.for_each_row([&] {
        m_entity_index[all.column_text(0)] = m_entities.size();
        m_entities.push_back({{all.column_text(0), all.column_text(1), all.column_text(2)}, {}});
    }));
    MF_TRY_ASSIGN(store::Statement names, m_db->prepare("SELECT norm_name, entity FROM entity_names ORDER BY rowid"));
    MF_TRY(names.for_each_row([&] {
        const std::string norm = names.column_text(0), entity = names.column_text(1);
        m_by_name[norm] = entity;
        const auto it = m_entity_index.find(entity);
        if (it != m_entity_index.end()) m_entities[it->second].names.push_back(norm);
        m_longest_name = std::max(m_longest_name, text::words(norm).size());
    }));
    return reload_shapes();
}

Result<void> GraphSystem::reload_shapes() {
    m_edge_shapes.clear();
    m_adjacent.assign(m_entities.size(), {});
    MF_TRY_ASSIGN(store::Statement all,
                  m_db->prepare("SELECT seq, source, target, invalid_at IS NULL FROM edges ORDER BY seq"));
    MF_TRY(all.for_each_row([&] {
        const std::int64_t seq = all.column_int(0);
        shape_added(seq, all.column_text(1), all.column_text(2));
        // Not shape_invalidated(): erasing from the front of a long list, once per closed edge,
        // would make opening quadratic.
        if (all.column_int(3) == 0 && seq < static_cast<std::int64_t>(m_edge_shapes.size())) {
            EdgeShape& shape = m_edge_shapes[static_cast<std::size_t>(seq)];
            shape.valid = false;
            if (!m_options.include_invalid && shape.source >= 0) {
                m_adjacent[static_cast<std::size_t>(shape.source)].pop_back();
                if (shape.target != shape.source) m_adjacent[static_cast<std::size_t>(shape.target)].pop_back();
            }
        }
    }));
    return {};
}

void GraphSystem::shape_added(std::int64_t seq, const std::string& source, const std::string& target) {
    const auto s = m_entity_index.find(source), t = m_entity_index.find(target);
    if (seq <= 0 || s == m_entity_index.end() || t == m_entity_index.end()) return;  // not walkable
    if (static_cast<std::size_t>(seq) >= m_edge_shapes.size()) m_edge_shapes.resize(static_cast<std::size_t>(seq) + 1);
    m_edge_shapes[static_cast<std::size_t>(seq)] = {static_cast<std::int32_t>(s->second),
                                                    static_cast<std::int32_t>(t->second), true};
    if (m_adjacent.size() < m_entities.size()) m_adjacent.resize(m_entities.size());
    // Seqs only grow, so each list stays sorted.
    m_adjacent[s->second].push_back(seq);
    if (t->second != s->second) m_adjacent[t->second].push_back(seq);
}

Result<void> GraphSystem::edge_closed(std::int64_t seq) {
    shape_invalidated(seq);
    if (m_options.include_invalid) return {};
    MF_TRY_ASSIGN(const bool removed, m_dense->remove(seq));
    (void)removed;  // retrieval looks past closed edges an index still holds
    return {};
}

GraphSystem::EdgeShape* GraphSystem::edge_shape(std::int64_t seq) {
    if (seq <= 0 || static_cast<std::size_t>(seq) >= m_edge_shapes.size()) return nullptr;
    EdgeShape& shape = m_edge_shapes[static_cast<std::size_t>(seq)];
    return shape.source < 0 ? nullptr : &shape;
}

void GraphSystem::shape_invalidated(std::int64_t seq) {
    EdgeShape* const found = edge_shape(seq);
    if (found == nullptr || !found->valid) return;
    EdgeShape& shape = *found;
    shape.valid = false;
    if (m_options.include_invalid) return;  // still walked
    for (const std::int32_t entity : {shape.source, shape.target}) {
        auto& list = m_adjacent[static_cast<std::size_t>(entity)];
        const auto it = std::lower_bound(list.begin(), list.end(), seq);
        if (it != list.end() && *it == seq) list.erase(it);
    }
}

std::string GraphSystem::spec() const {
    return Spec{"graph",
                {{"hops", std::to_string(m_options.hops)},
                 {"include_invalid", m_options.include_invalid ? "true" : "false"},
                 {"extract", m_options.careful ? "careful" : "published"},
                 {"dim", std::to_string(m_options.dim)}}}
        .to_string();
}

Capabilities GraphSystem::capabilities() const {
    Capabilities caps;
    caps.provenance = true;
    caps.history = true;
    caps.as_of = true;
    caps.idempotent_store = true;  // a session already stored is skipped
    return caps;
}

Result<void> GraphSystem::store_conversation(const data::Session& session) {
    Result<void> stored = in_transaction([&] { return store_in_transaction(session); });
    if (!stored) return stored.error().with_context("graph: session " + session.id);
    return {};
}

Result<std::string> GraphSystem::create_entity(const std::string& name, const std::string& norm, const std::string& type) {
    MF_TRY_ASSIGN(const std::int64_t seq, scalar_of(*m_db, "SELECT COALESCE(MAX(seq), 0) + 1 FROM entities"));
    const std::string id = "ent-" + std::to_string(seq);
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare(
        "INSERT INTO entities (seq, id, name, norm_name, type) VALUES (?,?,?,?,?)"));
    s.bind(1, seq).bind(2, id).bind(3, name).bind(4, norm).bind(5, type);
    MF_TRY(s.run());
    m_entity_index[id] = m_entities.size();
    m_entities.push_back({{id, name, type}, {}});
    MF_TRY(add_name(norm, id));
    return id;
}

Result<void> GraphSystem::add_name(const std::string& norm, const std::string& entity_id) {
    if (m_by_name.count(norm)) return {};
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare("INSERT INTO entity_names (norm_name, entity) VALUES (?,?)"));
    s.bind(1, norm).bind(2, entity_id);
    MF_TRY(s.run());
    m_by_name[norm] = entity_id;
    m_entities[m_entity_index.at(entity_id)].names.push_back(norm);
    m_longest_name = std::max(m_longest_name, text::words(norm).size());
    return {};
}

Result<std::vector<std::string>> GraphSystem::facts_of(const std::string& entity_id, int limit) {
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare(
        "SELECT fact FROM edges WHERE invalid_at IS NULL AND (source = ?1 OR target = ?1) ORDER BY seq DESC LIMIT ?2"));
    s.bind(1, entity_id).bind(2, limit);
    std::vector<std::string> out;
    MF_TRY(s.for_each_row([&] { out.push_back(s.column_text(0)); }));
    return out;
}

Result<std::string> GraphSystem::resolve_entity(const std::string& name, const std::string& type,
                                                const std::vector<std::string>& context_facts,
                                                const std::vector<std::string>& created_now,
                                                const data::Session& session) {
    const std::string norm = text::normalize(name);
    if (const auto it = m_by_name.find(norm); it != m_by_name.end()) return it->second;

    // Close candidates among the entities known before this conversation: alike in name, or of the
    // same type (a description such as "my sister" shares no word with the name it stands for).
    struct Candidate {
        std::size_t index;
        double score;
    };
    std::vector<Candidate> candidates;
    for (std::size_t i = 0; i < m_entities.size(); ++i) {
        const EntityState& e = m_entities[i];
        if (std::find(created_now.begin(), created_now.end(), e.entity.id) != created_now.end()) continue;
        double lexical = 0;
        for (const auto& known : e.names) lexical = std::max(lexical, name_similarity(norm, known));
        const bool same_type = !type.empty() && e.entity.type == type;
        if (lexical <= 0 && !same_type) continue;
        candidates.push_back({i, lexical + (same_type ? 0.25 : 0.0)});
    }
    if (candidates.empty()) return create_entity(name, norm, type);
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
    if (candidates.size() > k_max_candidates) candidates.resize(k_max_candidates);

    llm::prompts::GraphEntityView shown{name, type, context_facts};
    std::vector<llm::prompts::GraphEntityView> known;
    for (const Candidate& c : candidates) {
        const Entity& e = m_entities[c.index].entity;
        MF_TRY_ASSIGN(auto facts, facts_of(e.id, 2));
        known.push_back({e.name, e.type, std::move(facts)});
    }
    MF_TRY_ASSIGN(llm::ChatReply reply,
                  ask_system_model(m_services, llm::prompts::graph_resolve(m_services.model, shown, known), "graph"));
    std::int64_t match = -1;
    try {
        match = reply.json.value().at("match").get<std::int64_t>();
    } catch (const std::exception& e) {
        return make_error(ErrorKind::invalid_output, std::string("the entity-resolution reply has the wrong shape: ") + e.what());
    }
    if (match == -1) return create_entity(name, norm, type);
    if (match < 1 || match > static_cast<std::int64_t>(candidates.size())) {
        MF_TRY(add_history(*m_db, "", "rejected",
                           "resolve: names candidate " + std::to_string(match) + " of " +
                               std::to_string(candidates.size()) + " shown",
                           name, session.timestamp, {}));
        return create_entity(name, norm, type);
    }
    const std::string id = m_entities[candidates[static_cast<std::size_t>(match - 1)].index].entity.id;
    MF_TRY(add_name(norm, id));  // the alias resolves without asking next time
    return id;
}

Result<void> GraphSystem::store_in_transaction(const data::Session& session) {
    store::Database& db = *m_db;
    MF_TRY_ASSIGN(const bool fresh, first_time_stored(db, "INSERT OR IGNORE INTO graph_sessions (session_id) VALUES (?)", session.id));
    if (!fresh) return {};  // stored before: storing is idempotent
    // 1. Extraction, citing message numbers.
    const NumberedConversation conversation = number_messages(session);
    const std::vector<std::string>& message_ids = conversation.message_ids;
    if (conversation.shown.empty()) return {};
    MF_TRY_ASSIGN(llm::ChatReply extracted,
                  ask_system_model(m_services, llm::prompts::graph_extract(m_services.model, conversation.shown, prompt_style(m_options)), "graph"));
    struct NewEntity {
        std::string name;
        std::string type;
    };
    struct NewRelation {
        std::int64_t source = 0, target = 0;
        std::string relation;
        std::string fact;
        std::vector<std::string> sources;
    };
    std::vector<NewEntity> new_entities;
    std::vector<NewRelation> relations;
    try {
        const json& reply = extracted.json.value();
        for (const auto& e : reply.at("entities")) {
            std::string type = lower_trimmed(e.at("type").get<std::string>());
            new_entities.push_back({std::string(text::trim(e.at("name").get<std::string>())),
                                    type.empty() ? "other" : type});
        }
        for (const auto& r : reply.at("relations")) {
            NewRelation nr{r.at("source").get<std::int64_t>(), r.at("target").get<std::int64_t>(),
                           std::string(text::trim(r.at("relation").get<std::string>())),
                           std::string(text::trim(r.at("fact").get<std::string>())), {}};
            for (const auto& n : r.at("messages")) {
                const auto i = n.get<std::int64_t>();
                if (i >= 1 && i <= static_cast<std::int64_t>(message_ids.size()))
                    nr.sources = merged(std::move(nr.sources), {message_ids[static_cast<std::size_t>(i - 1)]});
            }
            // A fact citing nothing valid still came from this conversation.
            if (nr.sources.empty()) nr.sources = message_ids;
            if (nr.relation.empty()) nr.relation = "RELATED_TO";
            relations.push_back(std::move(nr));
        }
    } catch (const std::exception& e) {
        return make_error(ErrorKind::invalid_output, std::string("the extraction reply has the wrong shape: ") + e.what());
    }

    // 2. Entity resolution, only for entities some relation uses (a bare mention stores nothing).
    const auto entity_count = static_cast<std::int64_t>(new_entities.size());
    auto names_entity = [&](std::int64_t n) {
        return n >= 1 && n <= entity_count && !text::normalize(new_entities[static_cast<std::size_t>(n - 1)].name).empty();
    };
    std::vector<bool> used(new_entities.size(), false);
    for (const auto& r : relations) {
        if (r.fact.empty() || !names_entity(r.source) || !names_entity(r.target)) continue;
        used[static_cast<std::size_t>(r.source - 1)] = used[static_cast<std::size_t>(r.target - 1)] = true;
    }
    std::vector<std::string> resolved(new_entities.size());
    std::vector<std::string> created_now;
    for (std::size_t i = 0; i < new_entities.size(); ++i) {
        if (!used[i]) continue;
        std::vector<std::string> context;
        for (const auto& r : relations)
            if (r.source == static_cast<std::int64_t>(i + 1) || r.target == static_cast<std::int64_t>(i + 1))
                context.push_back(r.fact);
        const std::size_t before = m_entities.size();
        MF_TRY_ASSIGN(resolved[i], resolve_entity(new_entities[i].name, new_entities[i].type, context, created_now, session));
        if (m_entities.size() > before) created_now.push_back(resolved[i]);
    }

    // 3. Edges: a repeat of a valid fact credits its sources; a new one may close older edges
    // between the same two entities.
    for (const NewRelation& r : relations) {
        if (r.fact.empty()) continue;
        if (!names_entity(r.source) || !names_entity(r.target)) {
            MF_TRY(add_history(db, "", "rejected",
                               "relation names entity " + std::to_string(r.source) + " -> " + std::to_string(r.target) +
                                   " of " + std::to_string(entity_count) + " extracted",
                               r.fact, session.timestamp, r.sources));
            continue;
        }
        const std::string& source = resolved[static_cast<std::size_t>(r.source - 1)];
        const std::string& target = resolved[static_cast<std::size_t>(r.target - 1)];
        struct Older {
            std::int64_t seq;
            std::string id, fact, valid_at;
            // Parsed only for the few edges that need it: a pair of entities with a long history
            // (the user and a close friend) has hundreds of valid edges, read for every new one.
            std::string sources_json;
            double likeness = 0;  // word overlap with the new fact, when there are too many to show
        };
        std::vector<Older> older;
        {
            MF_TRY_ASSIGN(store::Statement s, db.prepare(
                "SELECT seq, id, fact, valid_at, sources_json FROM edges WHERE invalid_at IS NULL AND "
                "((source = ?1 AND target = ?2) OR (source = ?2 AND target = ?1)) ORDER BY seq DESC"));
            s.bind(1, source).bind(2, target);
            MF_TRY(s.for_each_row([&] {
                older.push_back({s.column_int(0), s.column_text(1), s.column_text(2), s.column_text(3),
                                 s.column_text(4), 0.0});
            }));
        }
        const std::string norm_fact = text::normalize(r.fact);
        const auto same = std::find_if(older.begin(), older.end(),
                                       [&](const Older& o) { return text::normalize(o.fact) == norm_fact; });
        if (same != older.end()) {
            MF_TRY_ASSIGN(store::Statement s, db.prepare("UPDATE edges SET sources_json = ? WHERE seq = ?"));
            s.bind(1, json(merged(parse_sources(same->sources_json), r.sources)).dump()).bind(2, same->seq);
            MF_TRY(s.run());
            MF_TRY(add_history(db, same->id, "repeat", same->fact, r.fact, session.timestamp, r.sources));
            continue;
        }

        MF_TRY_ASSIGN(const std::int64_t seq, scalar_of(db, "SELECT COALESCE(MAX(seq), 0) + 1 FROM edges"));
        const std::string id = "edge-" + std::to_string(seq);
        {
            MF_TRY_ASSIGN(store::Statement s, db.prepare(
                "INSERT INTO edges (seq, id, source, target, relation, fact, valid_at, invalid_at, sources_json) "
                "VALUES (?,?,?,?,?,?,?,NULL,?)"));
            s.bind(1, seq).bind(2, id).bind(3, source).bind(4, target).bind(5, r.relation).bind(6, r.fact)
                .bind(7, session.timestamp).bind(8, json(r.sources).dump());
            MF_TRY(s.run());
        }
        MF_TRY(m_dense->add(seq, r.fact));
        MF_TRY(m_bm25->add(seq, r.fact));
        shape_added(seq, source, target);
        MF_TRY(add_history(db, id, "add", "", r.fact, session.timestamp, r.sources));
        if (older.empty()) continue;

        // The older edges most alike the new fact (ties: the most recent), shown numbered from 1.
        if (older.size() > k_max_compared) {
            // Each older fact's words once: measured inside the comparison, a pair of entities
            // with a long history (the user and a close friend) re-read its facts n log n times.
            const auto words = content_words(r.fact);
            for (Older& o : older) o.likeness = overlap(words, content_words(o.fact));
            std::stable_sort(older.begin(), older.end(),
                             [](const Older& a, const Older& b) { return a.likeness > b.likeness; });
            older.resize(k_max_compared);
        }
        std::vector<llm::prompts::DatedFact> dated;
        for (const Older& o : older) dated.push_back({o.fact, o.valid_at});
        MF_TRY_ASSIGN(llm::ChatReply checked,
                      ask_system_model(m_services, llm::prompts::graph_invalidate(m_services.model, {r.fact, session.timestamp}, dated,
                                                                    prompt_style(m_options)), "graph"));
        std::vector<std::int64_t> numbers;
        try {
            for (const auto& n : checked.json.value().at("invalidated")) numbers.push_back(n.get<std::int64_t>());
        } catch (const std::exception& e) {
            return make_error(ErrorKind::invalid_output, std::string("the contradiction reply has the wrong shape: ") + e.what());
        }
        std::set<std::int64_t> done;
        for (const std::int64_t n : numbers) {
            if (n < 1 || n > static_cast<std::int64_t>(older.size())) {
                MF_TRY(add_history(db, "", "rejected",
                                   "invalidate: names older fact " + std::to_string(n) + " of " +
                                       std::to_string(older.size()) + " shown",
                                   r.fact, session.timestamp, r.sources));
                continue;
            }
            if (!done.insert(n).second) continue;
            const Older& o = older[static_cast<std::size_t>(n - 1)];
            if (o.valid_at <= session.timestamp) {
                MF_TRY_ASSIGN(store::Statement s, db.prepare("UPDATE edges SET invalid_at = ? WHERE seq = ?"));
                s.bind(1, session.timestamp).bind(2, o.seq);
                MF_TRY(s.run());
                MF_TRY(edge_closed(o.seq));
                MF_TRY(add_history(db, o.id, "invalidate", o.fact, r.fact, session.timestamp, r.sources));
            } else {
                // Sessions stored out of order: the "older" edge is the later fact, so it is the new
                // edge that stopped holding, when the later one became true.
                MF_TRY_ASSIGN(store::Statement s, db.prepare(
                    "UPDATE edges SET invalid_at = ?1 WHERE seq = ?2 AND (invalid_at IS NULL OR invalid_at > ?1)"));
                s.bind(1, o.valid_at).bind(2, seq);
                MF_TRY(s.run());
                if (m_db->changes() > 0) MF_TRY(edge_closed(seq));
                MF_TRY(add_history(db, id, "invalidate", r.fact, o.fact, o.valid_at, parse_sources(o.sources_json)));
            }
        }
    }
    return {};
}

Result<std::vector<Hit>> GraphSystem::retrieve_memories(std::string_view query, const std::vector<data::Message>&,
                                                        int k) {
    std::vector<Hit> out;
    if (k <= 0) return out;
    auto eligible = [&](bool valid) { return valid || m_options.include_invalid; };

    // 1. Lexical and dense ranks of eligible edges (1-based). Neither index returns an edge
    // retrieval may not show: the dense one drops invalidated edges, BM25 keeps them but leaves
    // them out of its searches (set_excluded), so each is asked for `depth` rows. Should an
    // ineligible row come back all the same, the index is asked for four times as many, up to
    // depth + every invalidated edge, which always suffices; a longer list starts with the
    // shorter one, so the answer is the same as asking for the bound at once.
    const int depth = std::max(50, 4 * k);
    using Ranked = std::vector<std::pair<RetrievedRow, EdgeShape>>;
    std::optional<int> bound;  // depth + invalidated edges, counted when first needed
    auto eligible_rows = [&](Retriever& index) -> Result<Ranked> {
        Ranked out;
        for (int asked = depth;;) {
            MF_TRY_ASSIGN(auto rows, index.search(query, asked));
            out.clear();
            for (const auto& row : rows) {
                const EdgeShape* edge = edge_shape(row.rowid);
                if (edge == nullptr || !eligible(edge->valid)) continue;
                out.emplace_back(row, *edge);
                if (static_cast<int>(out.size()) == depth) return out;
            }
            if (static_cast<int>(rows.size()) < asked || m_options.include_invalid) return out;
            if (!bound) {
                MF_TRY_ASSIGN(const std::int64_t invalid,
                              scalar_of(*m_db, "SELECT count(*) FROM edges WHERE invalid_at IS NOT NULL"));
                bound = static_cast<int>(std::min<std::int64_t>(depth + invalid, 1 << 24));
            }
            if (asked >= *bound) return out;  // every eligible edge the index holds is here
            asked = std::min(*bound, 4 * asked);
        }
    };
    std::unordered_map<std::int64_t, double> fused;
    std::set<std::int32_t> seeds;  // entity positions
    MF_TRY_ASSIGN(const Ranked lexical_rows, eligible_rows(*m_bm25));
    MF_TRY_ASSIGN(const Ranked dense_rows, eligible_rows(*m_dense));
    for (const Ranked* rows : {&lexical_rows, &dense_rows}) {
        int rank = 0;
        double best = 0;
        for (const auto& [row, edge] : *rows) {
            if (++rank == 1) best = row.score;
            fused[row.rowid] += 1.0 / (k_rrf_k + rank);
            // The entities of the few facts the query clearly resembles are where the walk starts
            // too. "Clearly" is relative to the best match, as the scale of cosines differs
            // between embedders (hashed vectors of unrelated texts score near 0, model ones do not).
            if (rows == &dense_rows && rank <= k_dense_seeds && row.score > 0 && row.score >= 0.5 * best) {
                seeds.insert(edge.source);
                seeds.insert(edge.target);
            }
        }
    }

    // 2. Entities the query names: every run of its words that is a known name.
    const auto words = text::words(query);
    for (std::size_t n = 1; n <= std::min(m_longest_name, words.size()); ++n)
        for (std::size_t start = 0; start + n <= words.size(); ++start) {
            bool meaningful = false;
            for (std::size_t i = start; i < start + n; ++i) meaningful = meaningful || !text::is_stopword(words[i]);
            if (!meaningful) continue;
            std::string phrase = words[start];
            for (std::size_t i = start + 1; i < start + n; ++i) phrase += " " + words[i];
            if (const auto it = m_by_name.find(phrase); it != m_by_name.end()) {
                const auto at = m_entity_index.find(it->second);
                if (at != m_entity_index.end()) seeds.insert(static_cast<std::int32_t>(at->second));
            }
        }
    if (seeds.empty()) return out;

    // 3. The neighbourhood: an edge is `hop` steps away when an endpoint is hop - 1 entity steps
    // from a seed (breadth first over the walkable edges), and is walked when hop <= hops. Only
    // distances are computed here, not the edge set: the ranking below needs each fused edge's
    // hop, then the nearest, most recent other edges, and a busy entity (the user, on most
    // edges) would otherwise mean reading thousands of edges per query.
    const auto entity_count = static_cast<std::int32_t>(m_adjacent.size());
    auto adjacent = [&](std::int32_t entity) -> const std::vector<std::int64_t>& {
        static const std::vector<std::int64_t> none;
        return entity >= 0 && entity < entity_count ? m_adjacent[static_cast<std::size_t>(entity)] : none;
    };
    // A flat array: the first step from the user touches most entities.
    std::vector<int> distance(std::max(m_entities.size(), m_adjacent.size()), -1);
    std::vector<std::vector<std::int32_t>> level(1, std::vector<std::int32_t>(seeds.begin(), seeds.end()));
    for (const std::int32_t seed : seeds) distance[static_cast<std::size_t>(seed)] = 0;
    for (int d = 1; d < m_options.hops && !level.back().empty(); ++d) {
        std::vector<std::int32_t> next;
        for (const std::int32_t entity : level.back())
            for (const std::int64_t seq : adjacent(entity)) {
                const EdgeShape& edge = m_edge_shapes[static_cast<std::size_t>(seq)];
                const std::int32_t other = edge.source == entity ? edge.target : edge.source;
                if (distance[static_cast<std::size_t>(other)] >= 0) continue;
                distance[static_cast<std::size_t>(other)] = d;
                next.push_back(other);
            }
        // Left in the order reached, unsorted: a distance does not depend on the order a level is
        // walked in, and the merge below orders its cursors by (seq, entity) whatever order they
        // are pushed in. Sorting the first level (every entity the user ever spoke of) was most
        // of the walk's cost.
        level.push_back(std::move(next));
    }
    auto distance_of = [&](std::int32_t entity) { return distance[static_cast<std::size_t>(entity)]; };
    auto hop_of = [&](const EdgeShape& edge) {
        const int a = distance_of(edge.source), b = distance_of(edge.target);
        const int nearest = a < 0 ? b : (b < 0 ? a : std::min(a, b));
        return nearest < 0 || nearest + 1 > m_options.hops ? 0 : nearest + 1;  // 0: not walked
    };

    // 4. Fused rank first, then nearness to the seeds, then recency.
    std::vector<std::tuple<double, int, std::int64_t>> ranked;
    for (const auto& [seq, score] : fused) {
        const EdgeShape* edge = edge_shape(seq);
        if (edge == nullptr || !eligible(edge->valid)) continue;
        if (const int hop = hop_of(*edge); hop > 0) ranked.emplace_back(score, hop, seq);
    }
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
        if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) > std::get<0>(b);
        if (std::get<1>(a) != std::get<1>(b)) return std::get<1>(a) < std::get<1>(b);
        return std::get<2>(a) > std::get<2>(b);
    });
    if (ranked.size() > static_cast<std::size_t>(k)) ranked.resize(static_cast<std::size_t>(k));
    // The rest, unranked by either index: hop by hop, newest first. The edges `hop` steps away are
    // those of the entities hop - 1 steps away that lead nowhere nearer; their lists are merged from
    // the newest end, so only as many edges are read as are wanted (plus the fused ones skipped).
    for (int hop = 1; hop <= m_options.hops && ranked.size() < static_cast<std::size_t>(k); ++hop) {
        if (static_cast<std::size_t>(hop - 1) >= level.size()) break;
        using Cursor = std::tuple<std::int64_t, std::int32_t, std::size_t>;  // seq, entity, position
        std::priority_queue<Cursor> newest;
        for (const std::int32_t entity : level[static_cast<std::size_t>(hop - 1)]) {
            const auto& list = adjacent(entity);
            if (!list.empty()) newest.emplace(list.back(), entity, list.size() - 1);
        }
        std::int64_t last = -1;
        while (!newest.empty() && ranked.size() < static_cast<std::size_t>(k)) {
            const auto [seq, entity, position] = newest.top();
            newest.pop();
            if (position > 0) newest.emplace(adjacent(entity)[position - 1], entity, position - 1);
            if (seq == last) continue;  // both endpoints at this distance: met twice in a row
            last = seq;
            if (fused.count(seq) != 0) continue;
            if (hop_of(m_edge_shapes[static_cast<std::size_t>(seq)]) != hop) continue;
            ranked.emplace_back(0.0, hop, seq);
        }
    }
    for (const auto& [score, hop, seq] : ranked) {
        if (static_cast<int>(out.size()) == k) break;
        MF_TRY_ASSIGN(store::Statement* const s, m_edge_row.get(*m_db));
        s->bind(1, seq);
        MF_TRY_ASSIGN(bool row, s->step());
        if (!row) continue;
        std::optional<std::string> invalid_at;
        if (!s->column_is_null(3)) invalid_at = s->column_text(3);
        out.push_back({edge_memory(s->column_text(0), s->column_text(1), s->column_text(2), invalid_at,
                                   parse_sources(s->column_text_view(4))),
                       score});
    }
    return out;
}

namespace {

Result<std::vector<Memory>> edges_where(store::Database& db, const std::string& where, std::string_view bound,
                                        bool mark_stale) {
    MF_TRY_ASSIGN(store::Statement s, db.prepare(
        "SELECT id, fact, valid_at, invalid_at, sources_json FROM edges" + where + " ORDER BY seq"));
    if (!bound.empty()) s.bind(1, bound);
    std::vector<Memory> out;
    MF_TRY(s.for_each_row([&] {
        std::optional<std::string> invalid_at;
        if (!s.column_is_null(3)) invalid_at = s.column_text(3);
        out.push_back(edge_memory(s.column_text(0), s.column_text(1), s.column_text(2), invalid_at,
                                  parse_sources(s.column_text_view(4)), mark_stale));
    }));
    return out;
}

}  // namespace

Result<std::vector<Memory>> GraphSystem::all_memories() {
    return edges_where(*m_db, m_options.include_invalid ? "" : " WHERE invalid_at IS NULL", {}, true);
}

Result<std::vector<Memory>> GraphSystem::state_as_of(std::string_view timestamp) {
    // As of then they held: no staleness note, whatever happened later.
    return edges_where(*m_db, " WHERE valid_at <= ?1 AND (invalid_at IS NULL OR invalid_at > ?1)", timestamp, false);
}

Result<void> GraphSystem::reset() {
    return in_transaction([&]() -> Result<void> {
        MF_TRY(m_db->exec("DELETE FROM edges; DELETE FROM entities; DELETE FROM entity_names; "
                          "DELETE FROM graph_history; DELETE FROM graph_sessions;"));
        MF_TRY(m_dense->clear());
        MF_TRY(m_bm25->clear());
        return reload_entities();
    });
}

Result<std::vector<MemoryEvent>> GraphSystem::history(std::string_view memory_id) {
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare(
        "SELECT edge_id, event, old_text, new_text, at, sources_json FROM graph_history WHERE edge_id = ? ORDER BY n"));
    s.bind(1, memory_id);
    std::vector<MemoryEvent> out;
    MF_TRY(s.for_each_row([&] {
        out.push_back(MemoryEvent{s.column_text(0), s.column_text(1), s.column_text(2), s.column_text(3),
                                  s.column_text(4), parse_sources(s.column_text_view(5))});
    }));
    if (out.empty()) return make_error(ErrorKind::not_found, "no edge '" + std::string(memory_id) + "'");
    return out;
}

Result<std::int64_t> GraphSystem::rejected_decisions() {
    return scalar_of(*m_db, "SELECT count(*) FROM graph_history WHERE event = 'rejected'");
}

Result<std::vector<GraphSystem::Entity>> GraphSystem::entities() {
    std::vector<Entity> out;
    for (const auto& e : m_entities) out.push_back(e.entity);
    return out;
}

Result<std::pair<std::string, std::string>> GraphSystem::edge_endpoints(std::string_view edge_id) {
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare("SELECT source, target FROM edges WHERE id = ?"));
    s.bind(1, edge_id);
    MF_TRY_ASSIGN(bool row, s.step());
    if (!row) return make_error(ErrorKind::not_found, "no edge '" + std::string(edge_id) + "'");
    return std::pair<std::string, std::string>{s.column_text(0), s.column_text(1)};
}

}  // namespace memfail::memory

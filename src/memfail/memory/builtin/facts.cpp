// SPDX-License-Identifier: MIT
// facts: extraction, decisions against similar memories, atomic application, history.
#include <memfail/memory/builtin/facts.hpp>
#include <memfail/memory/builtin/system_store.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include <memfail/core/text.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/memory/text_embedder.hpp>

namespace memfail::memory {

using nlohmann::json;

namespace {

constexpr int k_schema_version = 1;

// A fact has one live row; an update writes a new row under the same id (the retriever indexes rows
// by seq) and retires the old one, so the index never holds a vector for text that changed.
constexpr const char* k_schema = R"sql(
CREATE TABLE IF NOT EXISTS facts (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  text TEXT NOT NULL,
  sources_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  live INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS facts_by_id ON facts (id, live);
CREATE TABLE IF NOT EXISTS facts_history (
  n INTEGER PRIMARY KEY,
  memory_id TEXT NOT NULL,
  event TEXT NOT NULL,
  old_text TEXT NOT NULL,
  new_text TEXT NOT NULL,
  at TEXT NOT NULL,
  sources_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS facts_sessions (session_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS facts_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql";

struct LiveFact {
    std::int64_t seq = 0;
    std::string id;
    std::string text;
    std::vector<std::string> sources;
    std::string created_at;
};

std::vector<std::string> merged(std::vector<std::string> a, const std::vector<std::string>& b) {
    for (const auto& s : b)
        if (std::find(a.begin(), a.end(), s) == a.end()) a.push_back(s);
    return a;
}

Result<std::optional<LiveFact>> live_row(store::Database& db, std::int64_t seq) {
    MF_TRY_ASSIGN(store::Statement s, db.prepare(
        "SELECT seq, id, text, sources_json, created_at FROM facts WHERE seq = ? AND live = 1"));
    s.bind(1, seq);
    MF_TRY_ASSIGN(bool row, s.step());
    if (!row) return std::optional<LiveFact>{};
    LiveFact f{s.column_int(0), s.column_text(1), s.column_text(2),
               json::parse(s.column_text(3)).get<std::vector<std::string>>(), s.column_text(4)};
    return std::optional<LiveFact>{std::move(f)};
}

Result<void> add_history(store::Database& db, const std::string& id, const std::string& event,
                         const std::string& old_text, const std::string& new_text, const std::string& at,
                         const std::vector<std::string>& sources) {
    MF_TRY_ASSIGN(store::Statement s, db.prepare(
        "INSERT INTO facts_history (memory_id, event, old_text, new_text, at, sources_json) VALUES (?,?,?,?,?,?)"));
    s.bind(1, id).bind(2, event).bind(3, old_text).bind(4, new_text).bind(5, at).bind(6, json(sources).dump());
    return s.run();
}


}  // namespace

Result<std::unique_ptr<MemorySystem>> FactsSystem::create(const Spec& spec, const SystemContext& context) {
    MF_TRY(spec.check_keys({"add_only", "extract", "similar", "dim"}));
    FactsOptions options;
    MF_TRY_ASSIGN(options.add_only, spec.get_bool("add_only", false));
    MF_TRY_ASSIGN(const std::string extract, spec.get_choice("extract", "published", {"published", "careful"}));
    options.careful = extract == "careful";
    MF_TRY_ASSIGN(const std::int64_t similar, bounded_option(spec, "similar", 5, 1, 50, "facts"));
    MF_TRY_ASSIGN(const std::int64_t dim, bounded_option(spec, "dim", 512, 16, 8192, "facts"));
    options.similar = static_cast<int>(similar);
    options.dim = static_cast<int>(dim);
    MF_TRY(require_system_model(context, "facts", "extracts facts"));
    MF_TRY_ASSIGN(const std::string path, store_path(context));
    std::unique_ptr<FactsSystem> system(new FactsSystem(options, context.services));
    MF_TRY(system->initialise(path));
    return std::unique_ptr<MemorySystem>(std::move(system));
}

SystemInfo FactsSystem::info() {
    return {"facts",
            "Mem0's classic pipeline: the --system-model extracts facts from each conversation and decides "
            "ADD/UPDATE/DELETE/NONE against the most similar memories; full history",
            {{"add_only", "false", "true: Mem0's 2026 algorithm, every fact added unless an exact duplicate"},
             {"extract", "published",
              "published: Mem0's published extraction and update prompts; careful: memfail's tuned prompts that "
              "keep conditions and exceptions and treat compatible facts as no conflict (tuned, not Mem0's "
              "published design)"},
             {"similar", "5", "existing memories shown to the model per new fact"},
             {"dim", "512", "hashed embedding size when no --embed-model is given"}}};
}

Result<void> FactsSystem::initialise(const std::string& path) {
    MF_TRY_ASSIGN(store::Database db, open_store(path, k_schema, k_schema_version));
    m_db.emplace(std::move(db));
    MF_TRY_ASSIGN(std::unique_ptr<TextEmbedder> embedder, make_text_embedder(m_services, m_options.dim));
    MF_TRY_ASSIGN(m_retriever, EmbeddingRetriever::open(*m_db, std::move(embedder)));
    // The index is derived and holds the live rows only (a retired row leaves it, so searches need
    // not look past a fact's old versions). A store from before that holds every row: its retired
    // ones are removed without embedding anything again. Otherwise (another embedder was used, or
    // it was never built) it is rebuilt.
    MF_TRY_ASSIGN(const std::int64_t rows, scalar_of(*m_db, "SELECT count(*) FROM facts"));
    MF_TRY_ASSIGN(const std::int64_t live, scalar_of(*m_db, "SELECT count(*) FROM facts WHERE live = 1"));
    MF_TRY_ASSIGN(const std::int64_t indexed, m_retriever->count());
    MF_TRY(load_counters());
    if (indexed == live) return {};
    return in_transaction(*m_db, {m_retriever.get()}, [&]() -> Result<void> {
        if (indexed == rows) return remove_listed(*m_db, *m_retriever, "SELECT seq FROM facts WHERE live = 0");
        MF_TRY(m_retriever->clear());
        MF_TRY_ASSIGN(store::Statement all, m_db->prepare("SELECT seq, text FROM facts WHERE live = 1 ORDER BY seq"));
        return all.for_each_row([&] { (void)m_retriever->add(all.column_int(0), all.column_text_view(1)); });
    });
}

Result<void> FactsSystem::load_counters() {
    MF_TRY_ASSIGN(m_retired, scalar_of(*m_db, "SELECT count(*) FROM facts WHERE live = 0"));
    // Ids are never reused: a retired fact keeps its rows, so the distinct ids are all ever given.
    MF_TRY_ASSIGN(m_ids, scalar_of(*m_db, "SELECT count(DISTINCT id) FROM facts"));
    return {};
}

Result<std::vector<std::pair<std::int64_t, double>>> FactsSystem::live_neighbours(std::string_view text, int k) {
    std::vector<std::pair<std::int64_t, double>> out;
    if (k <= 0) return out;
    // Retired rows leave the index, so the first request almost always settles it. The live check
    // stays as a guard (a row retired in a transaction that is still open, say): when too few of
    // the rows are live, ask for k + every retired row, which always suffices.
    const int bound = k + static_cast<int>(std::min<std::int64_t>(m_retired, 1 << 24));
    for (int asked = m_retired > 0 ? std::min(2 * k + 8, bound) : k;; asked = bound) {
        MF_TRY_ASSIGN(auto rows, m_retriever->search(text, asked));
        out.clear();
        for (const auto& r : rows) {
            MF_TRY_ASSIGN(store::Statement* const live, m_is_live.get(*m_db));
            live->bind(1, r.rowid);
            MF_TRY_ASSIGN(const bool found, live->step());
            if (!found) continue;
            out.emplace_back(r.rowid, r.score);
            if (static_cast<int>(out.size()) == k) return out;
        }
        // The index has nothing more, or the bound was asked: every live row it holds is here.
        if (static_cast<int>(rows.size()) < asked || asked >= bound) return out;
    }
}

std::string FactsSystem::spec() const {
    return Spec{"facts",
                {{"add_only", m_options.add_only ? "true" : "false"},
                 {"extract", llm::prompts::prompt_style_name(style())},
                 {"similar", std::to_string(m_options.similar)},
                 {"dim", std::to_string(m_options.dim)}}}
        .to_string();
}

Capabilities FactsSystem::capabilities() const {
    Capabilities caps;
    caps.provenance = true;
    caps.history = true;
    caps.idempotent_store = true;  // a session already stored is skipped
    return caps;
}

Result<void> FactsSystem::store_conversation(const data::Session& session) {
    Result<void> stored = in_transaction(*m_db, {m_retriever.get()}, [&] { return store_in_transaction(session); });
    if (!stored) {
        (void)load_counters();  // the rolled-back additions and retirements no longer count
        return stored.error().with_context("facts: session " + session.id);
    }
    return {};
}

Result<void> FactsSystem::store_in_transaction(const data::Session& session) {
    store::Database& db = *m_db;
    MF_TRY_ASSIGN(const bool fresh, first_time_stored(db, "INSERT OR IGNORE INTO facts_sessions (session_id) VALUES (?)", session.id));
    if (!fresh) return {};  // stored before: storing is idempotent
    // 1. Extraction, citing message numbers.
    const NumberedConversation conversation = number_messages(session);
    const std::vector<std::string>& message_ids = conversation.message_ids;
    if (conversation.shown.empty()) return {};
    MF_TRY_ASSIGN(llm::ChatReply extracted,
                  ask_system_model(m_services, llm::prompts::facts_extract(m_services.model, conversation.shown, style()), "facts"));
    struct NewFact {
        std::string text;
        std::vector<std::string> sources;
    };
    std::vector<NewFact> facts;
    try {
        for (const auto& f : extracted.json.value()["facts"]) {
            NewFact nf{std::string(text::trim(f["text"].get<std::string>())), {}};
            if (nf.text.empty()) continue;
            for (const auto& n : f["messages"]) {
                const auto i = n.get<std::int64_t>();
                if (i >= 1 && i <= static_cast<std::int64_t>(message_ids.size()))
                    nf.sources = merged(std::move(nf.sources), {message_ids[static_cast<std::size_t>(i - 1)]});
            }
            // A fact citing nothing valid still came from this conversation.
            if (nf.sources.empty()) nf.sources = message_ids;
            facts.push_back(std::move(nf));
        }
    } catch (const std::exception& e) {
        return make_error(ErrorKind::invalid_output, std::string("the extraction reply has the wrong shape: ") + e.what());
    }
    if (facts.empty()) return {};

    // 2. The most similar live memories for each fact, shown under small integers.
    std::vector<LiveFact> candidates;
    std::map<std::int64_t, std::size_t> candidate_of_seq;
    for (const auto& f : facts) {
        MF_TRY_ASSIGN(auto neighbours, live_neighbours(f.text, m_options.similar));
        for (const auto& [seq, score] : neighbours) {
            MF_TRY_ASSIGN(auto live, live_row(db, seq));
            if (!live) continue;
            if (!candidate_of_seq.count(live->seq)) {
                candidate_of_seq[live->seq] = candidates.size();
                candidates.push_back(std::move(*live));
            }
        }
    }

    // 3. Decisions (or, add_only, exact-duplicate suppression).
    struct Decision {
        std::string event = "ADD";
        int memory = -1;
        std::string text;
    };
    std::vector<Decision> decisions(facts.size());
    if (m_options.add_only) {
        for (std::size_t i = 0; i < facts.size(); ++i)
            for (std::size_t c = 0; c < candidates.size(); ++c)
                if (text::normalize(candidates[c].text) == text::normalize(facts[i].text)) {
                    decisions[i] = {"NONE", static_cast<int>(c), ""};
                    break;
                }
    } else {
        std::vector<std::string> existing, new_texts;
        for (const auto& c : candidates) existing.push_back(c.text);
        for (const auto& f : facts) new_texts.push_back(f.text);
        MF_TRY_ASSIGN(llm::ChatReply decided,
                      ask_system_model(m_services, llm::prompts::facts_decide(m_services.model, existing, new_texts, style()), "facts"));
        try {
            for (const auto& d : decided.json.value()["decisions"]) {
                const auto fact = d["fact"].get<std::int64_t>();
                if (fact < 1 || fact > static_cast<std::int64_t>(facts.size())) continue;  // no such fact: ignored
                decisions[static_cast<std::size_t>(fact - 1)] = {d["event"].get<std::string>(),
                                                                 static_cast<int>(d["memory"].get<std::int64_t>()),
                                                                 d["text"].get<std::string>()};
            }
        } catch (const std::exception& e) {
            return make_error(ErrorKind::invalid_output, std::string("the decision reply has the wrong shape: ") + e.what());
        }
    }

    // 4. Apply. A decision naming a memory that was not shown, or one already changed in this batch,
    // is rejected (kept in the history) and its fact is added instead, so nothing said is lost.
    std::set<int> touched;
    auto insert_row = [&](const std::string& id, const std::string& text, const std::vector<std::string>& sources,
                          const std::string& created_at) -> Result<void> {
        MF_TRY_ASSIGN(store::Statement ins, db.prepare(
            "INSERT INTO facts (id, text, sources_json, created_at, updated_at) VALUES (?,?,?,?,?)"));
        ins.bind(1, id).bind(2, text).bind(3, json(sources).dump()).bind(4, created_at).bind(5, session.timestamp);
        MF_TRY(ins.run());
        return m_retriever->add(db.last_insert_rowid(), text);
    };
    auto retire = [&](std::int64_t seq) -> Result<void> {
        MF_TRY_ASSIGN(store::Statement s, db.prepare("UPDATE facts SET live = 0 WHERE seq = ?"));
        s.bind(1, seq);
        MF_TRY(s.run());
        ++m_retired;
        MF_TRY_ASSIGN(const bool removed, m_retriever->remove(seq));
        (void)removed;  // an index that cannot remove is looked past in live_neighbours
        return {};
    };
    for (std::size_t i = 0; i < facts.size(); ++i) {
        const NewFact& fact = facts[i];
        Decision d = decisions[i];
        if (d.event == "NONE" && d.memory < 0) continue;  // nothing new, and no memory to credit
        const bool names_memory = d.event == "UPDATE" || d.event == "DELETE" || d.event == "NONE";
        if (names_memory && (d.memory < 0 || d.memory >= static_cast<int>(candidates.size()) || touched.count(d.memory))) {
            const std::string why = d.memory < 0 || d.memory >= static_cast<int>(candidates.size())
                                        ? "names memory " + std::to_string(d.memory) + ", which was not shown"
                                        : "names a memory already changed in this conversation";
            MF_TRY(add_history(db, "", "rejected", d.event + ": " + why, fact.text, session.timestamp, fact.sources));
            d = {"ADD", -1, ""};
        }
        if (d.event == "ADD") {
            const std::string id = "fact-" + std::to_string(++m_ids);
            MF_TRY(insert_row(id, fact.text, fact.sources, session.timestamp));
            MF_TRY(add_history(db, id, "add", "", fact.text, session.timestamp, fact.sources));
            continue;
        }
        LiveFact& target = candidates[static_cast<std::size_t>(d.memory)];
        touched.insert(d.memory);
        if (d.event == "NONE") {
            // Already known: the memory now also cites where it was said again.
            const auto sources = merged(target.sources, fact.sources);
            MF_TRY_ASSIGN(store::Statement s, db.prepare("UPDATE facts SET sources_json = ? WHERE seq = ?"));
            s.bind(1, json(sources).dump()).bind(2, target.seq);
            MF_TRY(s.run());
        } else if (d.event == "UPDATE") {
            const std::string new_text = text::trim(d.text).empty() ? fact.text : std::string(text::trim(d.text));
            const auto sources = merged(target.sources, fact.sources);
            MF_TRY(retire(target.seq));
            MF_TRY(insert_row(target.id, new_text, sources, target.created_at));
            MF_TRY(add_history(db, target.id, "update", target.text, new_text, session.timestamp, fact.sources));
        } else if (d.event == "DELETE") {
            MF_TRY(retire(target.seq));
            MF_TRY(add_history(db, target.id, "delete", target.text, "", session.timestamp, fact.sources));
        }
    }
    return {};
}

Result<std::vector<Hit>> FactsSystem::retrieve_memories(std::string_view query, const std::vector<data::Message>&,
                                                        int k) {
    std::vector<Hit> out;
    if (k <= 0) return out;
    MF_TRY_ASSIGN(const auto live, live_neighbours(query, k));
    for (const auto& [seq, score] : live) {
        MF_TRY_ASSIGN(store::Statement* const s, m_fetch_live.get(*m_db));
        s->bind(1, seq);
        MF_TRY_ASSIGN(bool row, s->step());
        if (!row) continue;
        out.push_back({Memory{s->column_text(0), s->column_text(1), s->column_text(2), s->column_text(3),
                              json::parse(s->column_text(4)).get<std::vector<std::string>>()},
                       score});
    }
    return out;
}

Result<std::vector<Memory>> FactsSystem::all_memories() {
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare(
        "SELECT f.id, f.text, f.created_at, f.updated_at, f.sources_json FROM facts f WHERE f.live = 1 "
        "ORDER BY (SELECT MIN(seq) FROM facts g WHERE g.id = f.id)"));
    std::vector<Memory> out;
    MF_TRY(s.for_each_row([&] {
        out.push_back(Memory{s.column_text(0), s.column_text(1), s.column_text(2), s.column_text(3),
                             json::parse(s.column_text(4)).get<std::vector<std::string>>()});
    }));
    return out;
}

Result<void> FactsSystem::reset() {
    return in_transaction(*m_db, {m_retriever.get()}, [&]() -> Result<void> {
        MF_TRY(m_db->exec("DELETE FROM facts; DELETE FROM facts_history; DELETE FROM facts_sessions;"));
        m_retired = 0;
        m_ids = 0;
        return m_retriever->clear();
    });
}

Result<std::vector<MemoryEvent>> FactsSystem::history(std::string_view memory_id) {
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare(
        "SELECT memory_id, event, old_text, new_text, at, sources_json FROM facts_history WHERE memory_id = ? ORDER BY n"));
    s.bind(1, memory_id);
    std::vector<MemoryEvent> out;
    MF_TRY(s.for_each_row([&] {
        out.push_back(MemoryEvent{s.column_text(0), s.column_text(1), s.column_text(2), s.column_text(3),
                                  s.column_text(4), json::parse(s.column_text(5)).get<std::vector<std::string>>()});
    }));
    if (out.empty()) return make_error(ErrorKind::not_found, "no memory '" + std::string(memory_id) + "'");
    return out;
}

Result<std::int64_t> FactsSystem::rejected_decisions() {
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare("SELECT count(*) FROM facts_history WHERE event = 'rejected'"));
    MF_TRY_ASSIGN(bool row, s.step());
    return row ? s.column_int(0) : 0;
}

}  // namespace memfail::memory

// SPDX-License-Identifier: MIT
// notes: a note per turn, links to related neighbours, evolution of their context and tags, and
// retrieval by embedding top-k plus one hop along links.
#include <memfail/memory/builtin/notes.hpp>
#include <memfail/memory/builtin/system_store.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include <memfail/core/text.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/memory/text_embedder.hpp>

namespace memfail::memory {

using nlohmann::json;

namespace {

constexpr int k_schema_version = 1;
// A note reached through a link scores this fraction of the hit that links to it: close enough to
// outrank weak direct hits, never above the hit itself.
constexpr double k_hop_factor = 0.9;

// Evolution changes a note's context and tags, which are part of its indexed text, and an index
// entry cannot be edited: each change indexes the note again under a new entry (notes_docs) and
// notes.doc names the current one. Superseded entries are skipped by searches and dropped when the
// index is rebuilt, which happens once they outnumber the notes.
constexpr const char* k_schema = R"sql(
CREATE TABLE IF NOT EXISTS notes (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  content TEXT NOT NULL,
  keywords_json TEXT NOT NULL,
  tags_json TEXT NOT NULL,
  context TEXT NOT NULL,
  sources_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  doc INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS notes_by_doc ON notes (doc);
CREATE TABLE IF NOT EXISTS notes_docs (doc INTEGER PRIMARY KEY, note_seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS notes_links (
  a TEXT NOT NULL,
  b TEXT NOT NULL,
  PRIMARY KEY (a, b)
);
CREATE INDEX IF NOT EXISTS notes_links_by_b ON notes_links (b);
-- The links again by seq, once in each direction: retrieval reads a hit's first k linked notes
-- through the key alone, however many links a busy note has. Derived from notes_links.
CREATE TABLE IF NOT EXISTS notes_link_seqs (
  a INTEGER NOT NULL,
  b INTEGER NOT NULL,
  PRIMARY KEY (a, b)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS notes_history (
  n INTEGER PRIMARY KEY,
  note_id TEXT NOT NULL,
  event TEXT NOT NULL,
  old_context TEXT NOT NULL,
  old_tags_json TEXT NOT NULL,
  new_context TEXT NOT NULL,
  new_tags_json TEXT NOT NULL,
  at TEXT NOT NULL,
  sources_json TEXT NOT NULL,
  detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS notes_history_by_note ON notes_history (note_id);
CREATE TABLE IF NOT EXISTS notes_sessions (session_id TEXT PRIMARY KEY);
)sql";

constexpr const char* k_note_columns =
    "seq, id, content, keywords_json, tags_json, context, sources_json, created_at, updated_at";

using Strings = std::vector<std::string>;

std::string joined(const Strings& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

// What the embedder sees: everything the note says about itself.
std::string index_text(const Note& note) {
    std::string out = note.content;
    if (!note.keywords.empty()) out.append("\n").append(joined(note.keywords));
    if (!note.tags.empty()) out.append("\n").append(joined(note.tags));
    if (!note.context.empty()) out.append("\n").append(note.context);
    return out;
}

// What graders and the test-taker see: the content keeps the details; the context situates them.
std::string memory_text(const std::string& content, const std::string& context) {
    return context.empty() ? content : content + "\n" + context;
}

std::string state_text(const std::string& content, const std::string& context, const Strings& tags) {
    return content + "\ncontext: " + context + "\ntags: " + joined(tags);
}

// The context is one line: keep the first non-empty one.
std::string one_line(std::string_view text) {
    for (const auto& line : text::split(std::string(text), '\n')) {
        const auto trimmed = text::trim(line);
        if (!trimmed.empty()) return std::string(trimmed);
    }
    return {};
}

// Trimmed, non-empty, without repeats (compared normalised), in the model's order.
Strings cleaned(const json& items) {
    Strings out;
    std::set<std::string> seen;
    for (const auto& item : items) {
        std::string value(text::trim(item.get<std::string>()));
        if (value.empty() || !seen.insert(text::normalize(value)).second) continue;
        out.push_back(std::move(value));
    }
    return out;
}

Note note_from_row(const store::Statement& s) {
    // Columns as in k_note_columns; seq (0) is the caller's.
    return Note{s.column_text(1),
                s.column_text(2),
                json::parse(s.column_text(3)).get<Strings>(),
                json::parse(s.column_text(4)).get<Strings>(),
                s.column_text(5),
                json::parse(s.column_text(6)).get<Strings>(),
                s.column_text(7),
                s.column_text(8)};
}

Result<std::optional<std::pair<std::int64_t, Note>>> note_by_seq(store::Database& db, std::int64_t seq) {
    MF_TRY_ASSIGN(store::Statement s,
                  db.prepare(std::string("SELECT ") + k_note_columns + " FROM notes WHERE seq = ?"));
    s.bind(1, seq);
    MF_TRY_ASSIGN(const bool row, s.step());
    if (!row) return std::optional<std::pair<std::int64_t, Note>>{};
    return std::optional<std::pair<std::int64_t, Note>>{std::pair{seq, note_from_row(s)}};
}

struct HistoryRow {
    std::string note_id;
    std::string event;
    std::string old_context;
    Strings old_tags;
    std::string new_context;
    Strings new_tags;
    std::string at;
    Strings sources;
    std::string detail;
};

Result<void> add_history(store::Database& db, const HistoryRow& h) {
    MF_TRY_ASSIGN(store::Statement s, db.prepare(
        "INSERT INTO notes_history (note_id, event, old_context, old_tags_json, new_context, new_tags_json, at, "
        "sources_json, detail) VALUES (?,?,?,?,?,?,?,?,?)"));
    s.bind(1, h.note_id).bind(2, h.event).bind(3, h.old_context).bind(4, json(h.old_tags).dump());
    s.bind(5, h.new_context).bind(6, json(h.new_tags).dump()).bind(7, h.at).bind(8, json(h.sources).dump());
    s.bind(9, h.detail);
    return s.run();
}


}  // namespace

Result<std::unique_ptr<MemorySystem>> NotesSystem::create(const Spec& spec, const SystemContext& context) {
    MF_TRY(spec.check_keys({"neighbours", "roles", "dim"}));
    NotesOptions options;
    MF_TRY_ASSIGN(const std::int64_t neighbours, bounded_option(spec, "neighbours", 5, 1, 50, "notes"));
    MF_TRY_ASSIGN(const std::string roles, spec.get_choice("roles", "all", {"user", "all"}));
    MF_TRY_ASSIGN(const std::int64_t dim, bounded_option(spec, "dim", 512, 16, 8192, "notes"));
    options.neighbours = static_cast<int>(neighbours);
    options.user_only = roles == "user";
    options.dim = static_cast<int>(dim);
    MF_TRY(require_system_model(context, "notes", "writes and links its notes"));
    MF_TRY_ASSIGN(const std::string path, store_path(context));
    std::unique_ptr<NotesSystem> system(new NotesSystem(options, context.services));
    MF_TRY(system->initialise(path));
    return std::unique_ptr<MemorySystem>(std::move(system));
}

SystemInfo NotesSystem::info() {
    return {"notes",
            "A-MEM: the --system-model writes a note per turn (content, keywords, tags, context), links it "
            "to related notes and evolves their context and tags; retrieval is top-k plus one hop along links",
            {{"neighbours", "5", "existing notes shown to the model when linking a new note"},
             {"roles", "all", "all: a note for every user and assistant turn; user: user turns only"},
             {"dim", "512", "hashed embedding size when no --embed-model is given"}}};
}

Result<void> NotesSystem::initialise(const std::string& path) {
    MF_TRY_ASSIGN(store::Database db, open_store(path, k_schema, k_schema_version));
    m_db.emplace(std::move(db));
    MF_TRY_ASSIGN(std::unique_ptr<TextEmbedder> embedder, make_text_embedder(m_services, m_options.dim));
    MF_TRY_ASSIGN(m_retriever, EmbeddingRetriever::open(*m_db, std::move(embedder)));
    // The index is derived: rebuild it when it does not hold exactly the recorded entries (another
    // embedder was used, or it was never built).
    MF_TRY_ASSIGN(const std::int64_t entries, scalar_of(*m_db, "SELECT count(*) FROM notes_docs"));
    MF_TRY_ASSIGN(const std::int64_t indexed, m_retriever->count());
    if (indexed != entries) MF_TRY(in_transaction(*m_db, {m_retriever.get()}, [&] { return rebuild_index(); }));
    // The links by seq are derived too (and absent from stores written before they existed).
    MF_TRY_ASSIGN(const std::int64_t links, scalar_of(*m_db, "SELECT count(*) FROM notes_links WHERE a <> b"));
    MF_TRY_ASSIGN(const std::int64_t by_seq, scalar_of(*m_db, "SELECT count(*) FROM notes_link_seqs"));
    if (by_seq != 2 * links)
        MF_TRY(in_transaction(*m_db, {}, [&] {
            return m_db->exec(
                "DELETE FROM notes_link_seqs;"
                "INSERT OR IGNORE INTO notes_link_seqs (a, b) SELECT na.seq, nb.seq FROM notes_links l "
                "JOIN notes na ON na.id = l.a JOIN notes nb ON nb.id = l.b WHERE l.a <> l.b;"
                "INSERT OR IGNORE INTO notes_link_seqs (a, b) SELECT nb.seq, na.seq FROM notes_links l "
                "JOIN notes na ON na.id = l.a JOIN notes nb ON nb.id = l.b WHERE l.a <> l.b;");
        }));
    return {};
}

Result<void> NotesSystem::rebuild_index() {
    MF_TRY(m_retriever->clear());
    MF_TRY(m_db->exec("DELETE FROM notes_docs;"));
    std::vector<std::pair<std::int64_t, std::string>> texts;
    {
        MF_TRY_ASSIGN(store::Statement all,
                      m_db->prepare(std::string("SELECT ") + k_note_columns + " FROM notes ORDER BY seq"));
        MF_TRY(all.for_each_row([&] { texts.emplace_back(all.column_int(0), index_text(note_from_row(all))); }));
    }
    for (const auto& [seq, text] : texts) MF_TRY(index_note(seq, text));
    return {};
}

Result<void> NotesSystem::index_note(std::int64_t seq, const std::string& text) {
    MF_TRY_ASSIGN(store::Statement entry, m_db->prepare("INSERT INTO notes_docs (note_seq) VALUES (?)"));
    entry.bind(1, seq);
    MF_TRY(entry.run());
    const std::int64_t doc = m_db->last_insert_rowid();
    MF_TRY_ASSIGN(store::Statement point, m_db->prepare("UPDATE notes SET doc = ? WHERE seq = ?"));
    point.bind(1, doc).bind(2, seq);
    MF_TRY(point.run());
    return m_retriever->add(doc, text);
}

Result<std::vector<std::pair<std::int64_t, double>>> NotesSystem::search_notes(std::string_view query, int want) {
    std::vector<std::pair<std::int64_t, double>> out;
    if (want <= 0) return out;
    MF_TRY_ASSIGN(store::Statement live, m_db->prepare("SELECT seq FROM notes WHERE doc = ?"));
    // Superseded entries are at most as many as the notes (rebuild_index), so a few widenings suffice.
    for (int asked = want * 2 + 8;; asked *= 4) {
        MF_TRY_ASSIGN(auto rows, m_retriever->search(query, asked));
        out.clear();
        std::set<std::int64_t> seen;
        for (const auto& r : rows) {
            live.reset();
            live.bind(1, r.rowid);
            MF_TRY_ASSIGN(const bool found, live.step());
            if (!found || !seen.insert(live.column_int(0)).second) continue;
            out.emplace_back(live.column_int(0), r.score);
            if (static_cast<int>(out.size()) == want) return out;
        }
        if (static_cast<int>(rows.size()) < asked) return out;  // the index has nothing more
    }
}

std::string NotesSystem::spec() const {
    return Spec{"notes",
                {{"neighbours", std::to_string(m_options.neighbours)},
                 {"roles", m_options.user_only ? "user" : "all"},
                 {"dim", std::to_string(m_options.dim)}}}
        .to_string();
}

Capabilities NotesSystem::capabilities() const {
    Capabilities caps;
    caps.provenance = true;
    caps.history = true;
    caps.idempotent_store = true;  // a session already stored is skipped
    return caps;
}

Result<void> NotesSystem::store_conversation(const data::Session& session) {
    Result<void> stored = in_transaction(*m_db, {m_retriever.get()}, [&] { return store_in_transaction(session); });
    if (!stored) return stored.error().with_context("notes: session " + session.id);
    return {};
}

Result<void> NotesSystem::store_in_transaction(const data::Session& session) {
    store::Database& db = *m_db;
    MF_TRY_ASSIGN(const bool fresh, first_time_stored(db, "INSERT OR IGNORE INTO notes_sessions (session_id) VALUES (?)", session.id));
    if (!fresh) return {};  // stored before: storing is idempotent
    if (!m_services.client)
        return make_error(ErrorKind::invalid_input, "'notes' needs an OpenAI-compatible endpoint for its --system-model");

    llm::ChatMessage previous;  // the turn before, shown so the note can resolve pronouns
    for (const data::Message& message : session.messages) {
        if (text::trim(message.content).empty()) continue;
        const llm::ChatMessage turn{message.role, message.content};
        const llm::ChatMessage before = std::exchange(previous, turn);
        if (m_options.user_only && message.role != "user") continue;
        const Strings sources{message.id};

        // 1. The note.
        MF_TRY_ASSIGN(llm::ChatReply written,
                      ask_system_model(m_services, llm::prompts::notes_write(m_services.model, turn, before, session.timestamp), "notes"));
        Note note;
        try {
            const json& reply = written.json.value();
            note.content = std::string(text::trim(reply.at("content").get<std::string>()));
            note.keywords = cleaned(reply.at("keywords"));
            note.tags = cleaned(reply.at("tags"));
            note.context = one_line(reply.at("context").get<std::string>());
        } catch (const std::exception& e) {
            return make_error(ErrorKind::invalid_output, std::string("the note reply has the wrong shape: ") + e.what());
        }
        // The content is never revised, so a note that lost it would lose the turn for good.
        if (note.content.empty()) note.content = std::string(text::trim(message.content));
        note.sources = sources;
        note.created_at = note.updated_at = session.timestamp;

        // 2. Its nearest existing notes, found before it is stored so it cannot meet itself.
        MF_TRY_ASSIGN(const auto near, search_notes(index_text(note), m_options.neighbours));
        std::vector<std::pair<std::int64_t, Note>> neighbours;
        for (const auto& hit : near) {
            MF_TRY_ASSIGN(auto found, note_by_seq(db, hit.first));
            if (found) neighbours.push_back(std::move(*found));
        }

        // 3. Store and index it.
        MF_TRY_ASSIGN(const std::int64_t last, scalar_of(db, "SELECT COALESCE(MAX(seq), 0) FROM notes"));
        const std::int64_t seq = last + 1;
        note.id = "note-" + std::to_string(seq);
        {
            MF_TRY_ASSIGN(store::Statement ins, db.prepare(
                "INSERT INTO notes (seq, id, content, keywords_json, tags_json, context, sources_json, created_at, "
                "updated_at) VALUES (?,?,?,?,?,?,?,?,?)"));
            ins.bind(1, seq).bind(2, note.id).bind(3, note.content).bind(4, json(note.keywords).dump());
            ins.bind(5, json(note.tags).dump()).bind(6, note.context).bind(7, json(note.sources).dump());
            ins.bind(8, note.created_at).bind(9, note.updated_at);
            MF_TRY(ins.run());
        }
        MF_TRY(add_history(db, {note.id, "add", "", {}, note.context, note.tags, session.timestamp, sources, ""}));
        MF_TRY(index_note(seq, index_text(note)));

        // 4. Links and evolution, against the neighbours shown under 1..n.
        if (!neighbours.empty()) {
            std::vector<llm::prompts::NoteView> shown;
            for (const auto& [nseq, n] : neighbours) shown.push_back({n.content, n.keywords, n.tags, n.context});
            MF_TRY_ASSIGN(llm::ChatReply linked,
                          ask_system_model(m_services, llm::prompts::notes_link(
                m_services.model, {note.content, note.keywords, note.tags, note.context}, shown), "notes"));
            struct Update {
                std::int64_t number = 0;
                std::string context;
                Strings tags;
            };
            std::vector<std::int64_t> link_numbers;
            std::vector<Update> updates;
            try {
                const json& reply = linked.json.value();
                for (const auto& n : reply.at("links")) link_numbers.push_back(n.get<std::int64_t>());
                for (const auto& u : reply.at("updates"))
                    updates.push_back({u.at("note").get<std::int64_t>(), one_line(u.at("context").get<std::string>()),
                                       cleaned(u.at("tags"))});
            } catch (const std::exception& e) {
                return make_error(ErrorKind::invalid_output, std::string("the link reply has the wrong shape: ") + e.what());
            }
            const auto shown_count = static_cast<std::int64_t>(neighbours.size());
            auto reject = [&](const std::string& why) {
                return add_history(db, {note.id, "rejected", "", {}, "", {}, session.timestamp, sources, why});
            };
            for (const std::int64_t number : link_numbers) {
                if (number < 1 || number > shown_count) {
                    MF_TRY(reject("link to note " + std::to_string(number) + ", which was not shown"));
                    continue;
                }
                // Undirected: one row per pair, the smaller id first.
                const auto& [other_seq, other] = neighbours[static_cast<std::size_t>(number - 1)];
                std::string a = note.id, b = other.id;
                if (b < a) std::swap(a, b);
                MF_TRY_ASSIGN(store::Statement ins, db.prepare("INSERT OR IGNORE INTO notes_links (a, b) VALUES (?, ?)"));
                ins.bind(1, a).bind(2, b);
                MF_TRY(ins.run());
                if (db.changes() == 0 || other_seq == seq) continue;  // known already
                MF_TRY_ASSIGN(store::Statement by_seq, db.prepare(
                    "INSERT OR IGNORE INTO notes_link_seqs (a, b) VALUES (?1, ?2), (?2, ?1)"));
                by_seq.bind(1, seq).bind(2, other_seq);
                MF_TRY(by_seq.run());
            }
            std::set<std::int64_t> evolved;
            for (const Update& u : updates) {
                if (u.number < 1 || u.number > shown_count) {
                    MF_TRY(reject("update of note " + std::to_string(u.number) + ", which was not shown"));
                    continue;
                }
                if (!evolved.insert(u.number).second) {
                    MF_TRY(reject("second update of note " + std::to_string(u.number)));
                    continue;
                }
                auto& [nseq, target] = neighbours[static_cast<std::size_t>(u.number - 1)];
                const std::string context = u.context.empty() ? target.context : u.context;
                const Strings tags = u.tags.empty() ? target.tags : u.tags;
                if (context == target.context && tags == target.tags) continue;
                MF_TRY_ASSIGN(store::Statement up, db.prepare(
                    "UPDATE notes SET context = ?, tags_json = ?, updated_at = ? WHERE seq = ?"));
                up.bind(1, context).bind(2, json(tags).dump()).bind(3, session.timestamp).bind(4, nseq);
                MF_TRY(up.run());
                MF_TRY(add_history(db, {target.id, "evolve", target.context, target.tags, context, tags,
                                        session.timestamp, sources, ""}));
                target.context = context;
                target.tags = tags;
                MF_TRY(index_note(nseq, index_text(target)));
            }
        }
        // The next turn's neighbours include this note and the new state of those it evolved.
        MF_TRY(m_retriever->flush());
    }

    MF_TRY_ASSIGN(const std::int64_t notes, scalar_of(db, "SELECT count(*) FROM notes"));
    MF_TRY_ASSIGN(const std::int64_t entries, scalar_of(db, "SELECT count(*) FROM notes_docs"));
    if (entries - notes > std::max<std::int64_t>(notes, 64)) MF_TRY(rebuild_index());
    return {};
}

Result<std::vector<Hit>> NotesSystem::retrieve_memories(std::string_view query, const std::vector<data::Message>&,
                                                        int k) {
    std::vector<Hit> out;
    if (k <= 0) return out;
    MF_TRY_ASSIGN(const auto hits, search_notes(query, k));
    std::map<std::int64_t, double> score_of;
    auto offer = [&](std::int64_t seq, double score) {
        auto [it, added] = score_of.emplace(seq, score);
        if (!added) it->second = std::max(it->second, score);
    };
    // A hit's linked notes all score the same and ties go to the lowest seq, so only its first k
    // linked notes by seq can make the top k: reading just those gives the same result as reading
    // all, and a note linked to thousands of others (a stock reply said many times) costs k rows.
    MF_TRY_ASSIGN(store::Statement linked, m_db->prepare(
        "SELECT b FROM notes_link_seqs WHERE a = ?1 ORDER BY b LIMIT ?2"));
    for (const auto& [seq, score] : hits) {
        offer(seq, score);
        const double hop = score >= 0 ? score * k_hop_factor : score / k_hop_factor;
        linked.reset();
        linked.bind(1, seq).bind(2, static_cast<std::int64_t>(k));
        MF_TRY(linked.for_each_row([&] { offer(linked.column_int(0), hop); }));
    }
    std::vector<std::pair<std::int64_t, double>> ranked(score_of.begin(), score_of.end());
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    if (static_cast<int>(ranked.size()) > k) ranked.resize(static_cast<std::size_t>(k));
    for (const auto& [seq, score] : ranked) {
        MF_TRY_ASSIGN(auto found, note_by_seq(*m_db, seq));
        if (!found) continue;
        Note& n = found->second;
        out.push_back({Memory{n.id, memory_text(n.content, n.context), n.created_at, n.updated_at, n.sources}, score});
    }
    return out;
}

Result<std::vector<Memory>> NotesSystem::all_memories() {
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare(std::string("SELECT ") + k_note_columns + " FROM notes ORDER BY seq"));
    std::vector<Memory> out;
    MF_TRY(s.for_each_row([&] {
        Note n = note_from_row(s);
        out.push_back(Memory{n.id, memory_text(n.content, n.context), n.created_at, n.updated_at, n.sources});
    }));
    return out;
}

Result<void> NotesSystem::reset() {
    return in_transaction(*m_db, {m_retriever.get()}, [&]() -> Result<void> {
        MF_TRY(m_db->exec("DELETE FROM notes; DELETE FROM notes_docs; DELETE FROM notes_links; DELETE FROM notes_link_seqs; "
                          "DELETE FROM notes_history; DELETE FROM notes_sessions;"));
        return m_retriever->clear();
    });
}

Result<std::vector<MemoryEvent>> NotesSystem::history(std::string_view memory_id) {
    MF_TRY_ASSIGN(store::Statement content, m_db->prepare("SELECT content FROM notes WHERE id = ?"));
    content.bind(1, memory_id);
    MF_TRY_ASSIGN(const bool exists, content.step());
    if (!exists) return make_error(ErrorKind::not_found, "no note '" + std::string(memory_id) + "'");
    const std::string text = content.column_text(0);
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare(
        "SELECT event, old_context, old_tags_json, new_context, new_tags_json, at, sources_json FROM notes_history "
        "WHERE note_id = ? AND event IN ('add', 'evolve') ORDER BY n"));
    s.bind(1, memory_id);
    std::vector<MemoryEvent> out;
    MF_TRY(s.for_each_row([&] {
        const std::string event = s.column_text(0);
        out.push_back(MemoryEvent{
            std::string(memory_id), event,
            event == "add" ? "" : state_text(text, s.column_text(1), json::parse(s.column_text(2)).get<Strings>()),
            state_text(text, s.column_text(3), json::parse(s.column_text(4)).get<Strings>()), s.column_text(5),
            json::parse(s.column_text(6)).get<Strings>()});
    }));
    return out;
}

Result<std::optional<Note>> NotesSystem::note(std::string_view id) {
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare(std::string("SELECT ") + k_note_columns + " FROM notes WHERE id = ?"));
    s.bind(1, id);
    MF_TRY_ASSIGN(const bool row, s.step());
    if (!row) return std::optional<Note>{};
    return std::optional<Note>{note_from_row(s)};
}

Result<std::vector<std::string>> NotesSystem::links(std::string_view id) {
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare(
        "SELECT n.id FROM notes n WHERE n.id IN (SELECT l.b FROM notes_links l WHERE l.a = ?1 UNION "
        "SELECT l.a FROM notes_links l WHERE l.b = ?1) ORDER BY n.seq"));
    s.bind(1, id);
    std::vector<std::string> out;
    MF_TRY(s.for_each_row([&] { out.push_back(s.column_text(0)); }));
    return out;
}

Result<std::int64_t> NotesSystem::rejected_decisions() {
    return scalar_of(*m_db, "SELECT count(*) FROM notes_history WHERE event = 'rejected'");
}

}  // namespace memfail::memory

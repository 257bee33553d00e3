// SPDX-License-Identifier: MIT
// ledger: records appended per (subject, attribute), closed rather than overwritten, read by the
// system model or planned from the ground truth; BM25 and hashed-vector retrieval over the open ones.
#include <memfail/memory/builtin/ledger.hpp>
#include <memfail/memory/builtin/system_store.hpp>

#include <algorithm>
#include <charconv>
#include <limits>
#include <tuple>

#include <nlohmann/json.hpp>

#include <memfail/core/text.hpp>
#include <memfail/llm/prompts.hpp>
#include <memfail/memory/text_embedder.hpp>

namespace memfail::memory {

using nlohmann::json;

namespace {

constexpr int k_schema_version = 1;
constexpr double k_rrf_constant = 60.0;  // the usual reciprocal-rank-fusion damping
constexpr const char* k_id_prefix = "ledger-";

// A key is a memory; its records are its values over time. A record is open while valid_to is
// NULL; with history=off the open record is the only one a key ever has (a new value deletes the
// old row). Record seqs are never reused (AUTOINCREMENT), because BM25 keeps a deleted row's
// postings (excluded from its searches) and a rowid may be indexed only once.
constexpr const char* k_schema = R"sql(
CREATE TABLE IF NOT EXISTS ledger_keys (
  id INTEGER PRIMARY KEY,
  subject TEXT NOT NULL,
  attribute TEXT NOT NULL,
  UNIQUE (subject, attribute)
);
CREATE TABLE IF NOT EXISTS ledger_records (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  key INTEGER NOT NULL,
  value TEXT NOT NULL,
  authority TEXT NOT NULL,
  valid_from TEXT NOT NULL,
  valid_to TEXT,
  closed_by TEXT NOT NULL DEFAULT '',
  close_sources_json TEXT NOT NULL DEFAULT '[]',
  sources_json TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_records_by_key ON ledger_records (key, seq);
CREATE TABLE IF NOT EXISTS ledger_sessions (session_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql";

// Why a record stopped being valid (ledger_records.closed_by).
constexpr const char* k_closed_by_update = "update";
constexpr const char* k_closed_by_retract = "retract";
constexpr const char* k_closed_by_expire = "expire";

const char* extract_name(LedgerExtract e) { return e == LedgerExtract::model ? "model" : "oracle"; }
const char* retriever_name(LedgerRetriever r) {
    switch (r) {
        case LedgerRetriever::hybrid: return "hybrid";
        case LedgerRetriever::bm25: return "bm25";
        case LedgerRetriever::hashed: return "hashed";
    }
    return "hybrid";
}

// How keys are compared: lower case, trimmed, inner runs of spaces collapsed.
std::string key_form(std::string_view s) {
    std::string out;
    for (const auto& word : text::split(text::to_lower(text::trim(s)), ' '))
        if (!text::trim(word).empty()) out += (out.empty() ? "" : " ") + std::string(text::trim(word));
    return out;
}

std::string record_text(const std::string& subject, const std::string& attribute, const std::string& value) {
    return subject + " " + attribute + ": " + value;
}

std::vector<std::string> merged(std::vector<std::string> a, const std::vector<std::string>& b) {
    for (const auto& s : b)
        if (std::find(a.begin(), a.end(), s) == a.end()) a.push_back(s);
    return a;
}

std::vector<std::string> parse_sources(std::string_view text) {
    return json::parse(text).get<std::vector<std::string>>();
}

// Authority ranks: 0 (user_stated) is the strongest; an unknown name ranks below every known one.
int authority_rank(const std::string& name) {
    const auto parsed = data::parse_authority(name);
    return parsed ? static_cast<int>(*parsed) : 1 << 16;
}

// A ground-truth value as memories write it: strings as they are, numbers as written, yes/no,
// lists joined by ", ", objects as "field: value, ...".
std::string value_text(const json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
    if (value.is_null()) return "";
    if (value.is_array()) {
        std::vector<std::string> parts;
        for (const auto& v : value) parts.push_back(value_text(v));
        return text::join(parts, ", ");
    }
    if (value.is_object()) {
        std::vector<std::string> parts;
        for (const auto& [field, v] : value.items()) parts.push_back(field + ": " + value_text(v));
        return text::join(parts, ", ");
    }
    return value.dump();
}

Result<std::optional<std::string>> read_meta(store::Database& db, const char* key) {
    MF_TRY_ASSIGN(store::Statement select, db.prepare("SELECT value FROM ledger_meta WHERE key = ?"));
    select.bind(1, key);
    MF_TRY_ASSIGN(const bool row, select.step());
    if (!row) return std::optional<std::string>{};
    return std::optional<std::string>(select.column_text(0));
}

Result<void> write_meta(store::Database& db, const char* key, const std::string& value) {
    MF_TRY_ASSIGN(store::Statement put, db.prepare("INSERT OR REPLACE INTO ledger_meta (key, value) VALUES (?, ?)"));
    put.bind(1, key).bind(2, value);
    return put.run();
}

// Rows BM25 holds: every record added since it was last rebuilt, deleted ones (history=off)
// included, so a reopened store knows whether its postings are whole.
constexpr const char* k_bm25_rows_sql = "SELECT CAST(value AS INTEGER) FROM ledger_meta WHERE key = 'bm25_rows'";

struct OpenRecord {
    std::int64_t seq = 0;
    std::string value;
    std::string authority;
    std::string valid_from;
    std::vector<std::string> sources;
};

Result<std::optional<OpenRecord>> open_record(store::Database& db, std::int64_t key) {
    MF_TRY_ASSIGN(store::Statement s, db.prepare(
        "SELECT seq, value, authority, valid_from, sources_json FROM ledger_records "
        "WHERE key = ? AND valid_to IS NULL ORDER BY seq DESC LIMIT 1"));
    s.bind(1, key);
    MF_TRY_ASSIGN(const bool row, s.step());
    if (!row) return std::optional<OpenRecord>{};
    return std::optional<OpenRecord>(
        OpenRecord{s.column_int(0), s.column_text(1), s.column_text(2), s.column_text(3), parse_sources(s.column_text(4))});
}

// The key id a memory id names ("ledger-12" -> 12), or nullopt.
std::optional<std::int64_t> key_of_memory(std::string_view memory_id) {
    if (!text::starts_with(memory_id, k_id_prefix)) return std::nullopt;
    const std::string_view digits = memory_id.substr(std::string_view(k_id_prefix).size());
    std::int64_t key = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), key);
    if (ec != std::errc{} || end != digits.data() + digits.size() || digits.empty()) return std::nullopt;
    return key;
}

// The columns m_fetch and the listing queries select, as a Memory.
Memory memory_from(const store::Statement& s) {
    return Memory{k_id_prefix + std::to_string(s.column_int(0)),
                  record_text(s.column_text(1), s.column_text(2), s.column_text(3)), s.column_text(4),
                  s.column_text(5), parse_sources(s.column_text(6))};
}

constexpr const char* k_memory_columns =
    "SELECT k.id, k.subject, k.attribute, r.value, r.valid_from, r.updated_at, r.sources_json "
    "FROM ledger_records r JOIN ledger_keys k ON k.id = r.key ";

}  // namespace

Result<std::unique_ptr<MemorySystem>> LedgerSystem::create(const Spec& spec, const SystemContext& context) {
    MF_TRY(spec.check_keys({"extract", "history", "retriever", "serve"}));
    LedgerOptions options;
    MF_TRY_ASSIGN(const std::string extract, spec.get_choice("extract", "model", {"model", "oracle"}));
    MF_TRY_ASSIGN(const std::string history, spec.get_choice("history", "on", {"on", "off"}));
    MF_TRY_ASSIGN(const std::string retriever, spec.get_choice("retriever", "hybrid", {"hybrid", "bm25", "hashed"}));
    MF_TRY_ASSIGN(const std::string serve, spec.get_choice("serve", "topk", {"topk", "state"}));
    options.serve_state = serve == "state";
    options.extract = extract == "model" ? LedgerExtract::model : LedgerExtract::oracle;
    options.history = history == "on";
    options.retriever = retriever == "hybrid" ? LedgerRetriever::hybrid
                        : retriever == "bm25" ? LedgerRetriever::bm25
                                              : LedgerRetriever::hashed;
    if (options.extract == LedgerExtract::model) MF_TRY(require_system_model(context, "ledger", "extracts its records"));
    MF_TRY_ASSIGN(const std::string path, store_path(context));
    std::unique_ptr<LedgerSystem> system(new LedgerSystem(options, context.services));
    MF_TRY(system->initialise(path));
    return std::unique_ptr<MemorySystem>(std::move(system));
}

SystemInfo LedgerSystem::info() {
    return {"ledger",
            "Bi-temporal fact ledger, the write-integrity suite's reference: a record per (subject, attribute) value "
            "with its authority, validity interval and source messages; a new value closes the old record, a "
            "retraction closes it without a successor; history and as-of queries",
            {{"extract", "model",
              "model: the --system-model reads each session into set/retract records; oracle: records planned from "
              "the scenario's ground-truth ledger (a perfect extractor: tests the ledger's mechanics alone)"},
             {"history", "on",
              "on: records are appended and closed, never overwritten (history and state as of a time); off: the "
              "naive key-value floor, one row per key overwritten in place"},
             {"retriever", "hybrid",
              "hybrid: BM25 and hashed-vector cosine fused by reciprocal rank; bm25 or hashed: one of them alone "
              "(always over the currently valid records)"},
             {"serve", "topk",
              "topk: a query gets the top k records; state: every currently valid record, whatever k, in the order "
              "of all_memories (WRIT's oracle mode with extract=oracle: the gold state handed to the answerer whole)"}}};
}

Result<void> LedgerSystem::initialise(const std::string& path) {
    MF_TRY_ASSIGN(store::Database db, open_store(path, k_schema, k_schema_version));
    m_db.emplace(std::move(db));
    store::Database& database = *m_db;
    // What a record is (read by a model or planned from the ground truth) and whether closed ones
    // are kept decide what the store means; mixing two settings in one store would mean neither.
    const std::pair<const char*, std::string> fixed[] = {{"extract", extract_name(m_options.extract)},
                                                         {"history", m_options.history ? "on" : "off"}};
    for (const auto& [key, wanted] : fixed) {
        MF_TRY_ASSIGN(const std::optional<std::string> stored, read_meta(database, key));
        if (stored && *stored != wanted)
            return make_error(ErrorKind::invalid_input,
                              std::string("this store holds a ledger made with ") + key + "=" + *stored + ", not " +
                                  key + "=" + wanted + "; use a fresh storage folder or the same options",
                              path);
        if (!stored) MF_TRY(write_meta(database, key, wanted));
    }
    MF_TRY_ASSIGN(m_dense, EmbeddingRetriever::open(database, make_hashed_text_embedder(HashedEmbedder::k_default_dim)));
    MF_TRY_ASSIGN(m_bm25, Bm25Retriever::open(database));
    // BM25 keeps closed and deleted records (dropping one would move every IDF) but leaves them out
    // of its searches, so its top rows are current ones; the dense index holds current ones only.
    m_bm25->set_excluded([this](std::int64_t seq) { return m_open.count(seq) == 0; });
    MF_TRY(reload_open());

    // Both indexes are derived: rebuilt when they do not cover what they should.
    MF_TRY_ASSIGN(const std::int64_t dense, m_dense->count());
    if (dense != static_cast<std::int64_t>(m_open.size()))
        MF_TRY(in_transaction(database, {m_dense.get()}, [&]() -> Result<void> {
            MF_TRY(m_dense->clear());
            MF_TRY_ASSIGN(store::Statement open, database.prepare(
                "SELECT r.seq, k.subject, k.attribute, r.value FROM ledger_records r "
                "JOIN ledger_keys k ON k.id = r.key WHERE r.valid_to IS NULL ORDER BY r.seq"));
            Result<void> added;
            MF_TRY(open.for_each_row([&] {
                if (added)
                    added = m_dense->add(open.column_int(0),
                                         record_text(open.column_text(1), open.column_text(2), open.column_text(3)));
            }));
            return added;
        }));
    MF_TRY_ASSIGN(const std::int64_t lexical, m_bm25->count());
    MF_TRY_ASSIGN(const std::int64_t bm25_rows, scalar_of(database, k_bm25_rows_sql));
    if (lexical != bm25_rows)
        MF_TRY(in_transaction(database, {m_bm25.get()}, [&]() -> Result<void> {
            MF_TRY(m_bm25->clear());
            MF_TRY_ASSIGN(store::Statement all, database.prepare(
                "SELECT r.seq, k.subject, k.attribute, r.value FROM ledger_records r "
                "JOIN ledger_keys k ON k.id = r.key ORDER BY r.seq"));
            Result<void> added;
            std::int64_t rows = 0;
            MF_TRY(all.for_each_row([&] {
                ++rows;
                if (added)
                    added = m_bm25->add(all.column_int(0),
                                        record_text(all.column_text(1), all.column_text(2), all.column_text(3)));
            }));
            MF_TRY(added);
            return write_meta(database, "bm25_rows", std::to_string(rows));
        }));
    return {};
}

Result<void> LedgerSystem::reload_open() {
    m_open.clear();
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare("SELECT seq FROM ledger_records WHERE valid_to IS NULL"));
    return s.for_each_row([&] { m_open.insert(s.column_int(0)); });
}

std::string LedgerSystem::spec() const {
    Spec s{"ledger",
           {{"extract", extract_name(m_options.extract)},
            {"history", m_options.history ? "on" : "off"},
            {"retriever", retriever_name(m_options.retriever)}}};
    if (m_options.serve_state) s.options["serve"] = "state";
    return s.to_string();
}

Capabilities LedgerSystem::capabilities() const {
    Capabilities caps;
    caps.provenance = true;
    caps.history = m_options.history;
    caps.as_of = m_options.history;
    caps.idempotent_store = true;  // a session already stored is skipped
    caps.uses_ground_truth = m_options.extract == LedgerExtract::oracle;
    return caps;
}

void LedgerSystem::observe_ground_truth(const data::Scenario& scenario) {
    // Where each message is: its session and its place in it, so a session's changes apply in the
    // order they were said.
    std::map<std::string, std::pair<std::string, std::size_t>> where;
    for (const data::Session& session : scenario.sessions)
        for (std::size_t i = 0; i < session.messages.size(); ++i) where[session.messages[i].id] = {session.id, i};
    auto session_of = [&](const std::string& message_id) -> std::string {
        const auto it = where.find(message_id);
        return it == where.end() ? std::string{} : it->second.first;
    };
    auto position_of = [&](const std::string& message_id) -> std::size_t {
        const auto it = where.find(message_id);
        return it == where.end() ? std::numeric_limits<std::size_t>::max() : it->second.second;
    };
    // Per session: (position of the message saying it, phase, order of appearance, change); values
    // come before retractions said at the same place, expiries after everything.
    std::map<std::string, std::vector<std::tuple<std::size_t, int, std::size_t, Change>>> planned;
    std::size_t order = 0;
    auto plan = [&](const std::string& session, std::size_t position, int phase, Change change) {
        if (session.empty()) return;
        planned[session].emplace_back(position, phase, order++, std::move(change));
    };
    for (const data::LedgerEvent& event : scenario.ledger) {
        const std::string attribute = text::replace_all(event.id, "_", " ");
        for (std::size_t h = 0; h < event.history.size(); ++h) {
            const data::ValueRecord& record = event.history[h];
            std::string session = record.session_id;
            if (session.empty() && !record.message_id.empty()) session = session_of(record.message_id);
            if (session.empty()) session = h == 0 ? event.introduced_in : event.updated_in;
            Change change;
            change.op = Change::Op::set;
            change.subject = "user";
            change.attribute = attribute;
            change.value = record.mentions.empty() ? value_text(record.value) : record.mentions.front();
            change.authority = data::authority_name(record.authority);
            change.valid_from = record.as_of;
            if (!record.message_id.empty()) change.sources = {record.message_id};
            plan(session, record.message_id.empty() ? std::numeric_limits<std::size_t>::max() : position_of(record.message_id),
                 0, std::move(change));
        }
        if (!event.retracted_in.empty()) {
            Change change;
            change.op = Change::Op::retract;
            change.subject = "user";
            change.attribute = attribute;
            if (!event.retracted_by.empty()) change.sources = {event.retracted_by};
            plan(event.retracted_in,
                 event.retracted_by.empty() ? std::numeric_limits<std::size_t>::max() : position_of(event.retracted_by), 1,
                 std::move(change));
        }
        // A one-off item: what a perfect extractor keeps only while it matters.
        if (!event.should_persist) {
            Change change;
            change.op = Change::Op::expire;
            change.subject = "user";
            change.attribute = attribute;
            plan(event.expires_after.empty() ? event.introduced_in : event.expires_after,
                 std::numeric_limits<std::size_t>::max(), 2, std::move(change));
        }
    }
    m_plan.emplace();
    for (auto& [session, changes] : planned) {
        std::sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) {
            return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
                   std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
        });
        std::vector<Change>& out = (*m_plan)[session];
        for (auto& entry : changes) out.push_back(std::move(std::get<3>(entry)));
    }
}

Result<void> LedgerSystem::store_conversation(const data::Session& session) {
    Result<void> stored =
        in_transaction(*m_db, {m_dense.get(), m_bm25.get()}, [&] { return store_in_transaction(session); });
    if (!stored) {
        (void)reload_open();  // the rolled-back closings and additions no longer count
        return stored.error().with_context("ledger: session " + session.id);
    }
    return {};
}

Result<void> LedgerSystem::store_in_transaction(const data::Session& session) {
    if (m_options.extract == LedgerExtract::oracle && !m_plan)
        return make_error(ErrorKind::invalid_input,
                          "ledger:extract=oracle plans its records from the scenario's ledger, and no ground truth "
                          "was observed before storage");
    MF_TRY_ASSIGN(const bool fresh, first_time_stored(*m_db, "INSERT OR IGNORE INTO ledger_sessions (session_id) VALUES (?)",
                                                      session.id));
    if (!fresh) return {};  // stored before: storing is idempotent
    std::vector<Change> changes;
    if (m_options.extract == LedgerExtract::oracle) {
        if (const auto it = m_plan->find(session.id); it != m_plan->end()) changes = it->second;
    } else {
        MF_TRY_ASSIGN(changes, extract_changes(session));
    }
    for (const Change& change : changes) MF_TRY(apply(change, session));
    return {};
}

Result<std::vector<LedgerSystem::Change>> LedgerSystem::extract_changes(const data::Session& session) {
    std::vector<Change> out;
    const NumberedConversation conversation = number_messages(session);
    if (conversation.shown.empty()) return out;
    MF_TRY_ASSIGN(llm::ChatReply reply,
                  ask_system_model(m_services, llm::prompts::ledger_extract(m_services.model, conversation.shown), "ledger"));
    const std::vector<std::string>& message_ids = conversation.message_ids;
    try {
        for (const auto& r : reply.json.value()["records"]) {
            Change change;
            const auto op = r["op"].get<std::string>();
            if (op != "set" && op != "retract")
                return make_error(ErrorKind::invalid_output, "the extraction reply names an unknown op '" + op + "'");
            change.op = op == "set" ? Change::Op::set : Change::Op::retract;
            change.subject = r["subject"].get<std::string>();
            change.attribute = r["attribute"].get<std::string>();
            change.value = std::string(text::trim(r["value"].get<std::string>()));
            change.authority = r["authority"].get<std::string>();
            if (!data::parse_authority(change.authority))
                return make_error(ErrorKind::invalid_output,
                                  "the extraction reply names an unknown authority '" + change.authority + "'");
            for (const auto& n : r["messages"]) {
                const auto i = n.get<std::int64_t>();
                if (i >= 1 && i <= static_cast<std::int64_t>(message_ids.size()))
                    change.sources = merged(std::move(change.sources), {message_ids[static_cast<std::size_t>(i - 1)]});
            }
            // A record citing nothing valid still came from this conversation.
            if (change.sources.empty()) change.sources = message_ids;
            out.push_back(std::move(change));
        }
    } catch (const std::exception& e) {
        return make_error(ErrorKind::invalid_output, std::string("the extraction reply has the wrong shape: ") + e.what());
    }
    return out;
}

Result<std::optional<std::int64_t>> LedgerSystem::key_id(const std::string& subject, const std::string& attribute,
                                                         bool create) {
    MF_TRY_ASSIGN(store::Statement find, m_db->prepare("SELECT id FROM ledger_keys WHERE subject = ? AND attribute = ?"));
    find.bind(1, subject).bind(2, attribute);
    MF_TRY_ASSIGN(const bool found, find.step());
    if (found) return std::optional<std::int64_t>(find.column_int(0));
    if (!create) return std::optional<std::int64_t>{};
    MF_TRY_ASSIGN(store::Statement insert, m_db->prepare("INSERT INTO ledger_keys (subject, attribute) VALUES (?, ?)"));
    insert.bind(1, subject).bind(2, attribute);
    MF_TRY(insert.run());
    return std::optional<std::int64_t>(m_db->last_insert_rowid());
}

Result<void> LedgerSystem::close(std::int64_t seq, const std::string& at, const char* closed_by,
                                 const std::vector<std::string>& sources) {
    if (m_options.history) {
        MF_TRY_ASSIGN(store::Statement s, m_db->prepare(
            "UPDATE ledger_records SET valid_to = ?, closed_by = ?, close_sources_json = ? WHERE seq = ?"));
        s.bind(1, at).bind(2, closed_by).bind(3, json(sources).dump()).bind(4, seq);
        MF_TRY(s.run());
    } else {
        MF_TRY_ASSIGN(store::Statement s, m_db->prepare("DELETE FROM ledger_records WHERE seq = ?"));
        s.bind(1, seq);
        MF_TRY(s.run());
    }
    m_open.erase(seq);
    MF_TRY_ASSIGN(const bool removed, m_dense->remove(seq));
    (void)removed;  // not indexed: nothing to take out
    return {};
}

Result<void> LedgerSystem::apply(const Change& change, const data::Session& session) {
    const std::string subject = key_form(text::trim(change.subject).empty() ? "user" : change.subject);
    const std::string attribute = key_form(change.attribute);
    if (attribute.empty()) return {};
    const std::string& now = session.timestamp;

    if (change.op != Change::Op::set) {
        MF_TRY_ASSIGN(const auto key, key_id(subject, attribute, false));
        if (!key) return {};
        MF_TRY_ASSIGN(const auto open, open_record(*m_db, *key));
        if (!open) return {};  // nothing held to withdraw
        return close(open->seq, std::max(now, open->valid_from),
                     change.op == Change::Op::retract ? k_closed_by_retract : k_closed_by_expire, change.sources);
    }

    const std::string value(text::trim(change.value));
    if (value.empty()) return {};
    MF_TRY_ASSIGN(const auto key, key_id(subject, attribute, true));
    MF_TRY_ASSIGN(const auto open, open_record(*m_db, *key));
    std::string valid_from = change.valid_from.empty() ? now : change.valid_from;
    if (open) {
        // A model's record does not replace a value of stronger authority: an assistant's summary
        // never overrides what the user stated. (The oracle's records are the truth.)
        if (m_options.extract == LedgerExtract::model && authority_rank(change.authority) > authority_rank(open->authority))
            return {};
        if (text::normalize(open->value) == text::normalize(value)) {
            // Said again: the record also cites where, and holds the stronger authority of the two.
            const std::string authority =
                authority_rank(change.authority) < authority_rank(open->authority) ? change.authority : open->authority;
            MF_TRY_ASSIGN(store::Statement s, m_db->prepare(
                "UPDATE ledger_records SET sources_json = ?, authority = ?, updated_at = ? WHERE seq = ?"));
            s.bind(1, json(merged(open->sources, change.sources)).dump()).bind(2, authority).bind(3, now).bind(4, open->seq);
            return s.run();
        }
        valid_from = std::max(valid_from, open->valid_from);  // an interval never ends before it starts
        MF_TRY(close(open->seq, valid_from, k_closed_by_update, change.sources));
    }
    MF_TRY_ASSIGN(store::Statement insert, m_db->prepare(
        "INSERT INTO ledger_records (key, value, authority, valid_from, sources_json, recorded_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"));
    insert.bind(1, *key).bind(2, value).bind(3, change.authority).bind(4, valid_from)
        .bind(5, json(change.sources).dump()).bind(6, now).bind(7, now);
    MF_TRY(insert.run());
    const std::int64_t seq = m_db->last_insert_rowid();
    m_open.insert(seq);
    const std::string text = record_text(subject, attribute, value);
    MF_TRY(m_dense->add(seq, text));
    MF_TRY(m_bm25->add(seq, text));
    return m_db->exec(
        "INSERT INTO ledger_meta (key, value) VALUES ('bm25_rows', '1') "
        "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1");
}

Result<std::optional<Memory>> LedgerSystem::memory_of(std::int64_t seq) {
    MF_TRY_ASSIGN(store::Statement* const s, m_fetch.get(*m_db));
    s->bind(1, seq);
    MF_TRY_ASSIGN(const bool row, s->step());
    if (!row) return std::optional<Memory>{};
    return std::optional<Memory>(memory_from(*s));
}

Result<std::vector<Hit>> LedgerSystem::retrieve_memories(std::string_view query, const std::vector<data::Message>&,
                                                         int k) {
    std::vector<Hit> out;
    if (k <= 0 || m_open.empty()) return out;
    if (m_options.serve_state) {
        // The whole current state, in all_memories() order.
        MF_TRY_ASSIGN(std::vector<Memory> state, all_memories());
        for (auto& memory : state) out.push_back({std::move(memory), 1.0});
        return out;
    }
    // Fusion needs each ranking deeper than k; one retriever alone is asked for k.
    const int depth = m_options.retriever == LedgerRetriever::hybrid ? std::max(50, 4 * k) : k;
    auto current = [&](Retriever& index) -> Result<std::vector<RetrievedRow>> {
        MF_TRY_ASSIGN(std::vector<RetrievedRow> rows, index.search(query, depth));
        std::erase_if(rows, [&](const RetrievedRow& row) { return m_open.count(row.rowid) == 0; });
        return rows;
    };
    std::vector<RetrievedRow> ranked;
    if (m_options.retriever == LedgerRetriever::bm25) {
        MF_TRY_ASSIGN(ranked, current(*m_bm25));
    } else if (m_options.retriever == LedgerRetriever::hashed) {
        MF_TRY_ASSIGN(ranked, current(*m_dense));
    } else {
        MF_TRY_ASSIGN(const auto lexical, current(*m_bm25));
        MF_TRY_ASSIGN(const auto dense, current(*m_dense));
        std::map<std::int64_t, double> fused;
        for (const auto* rows : {&lexical, &dense})
            for (std::size_t rank = 0; rank < rows->size(); ++rank)
                fused[(*rows)[rank].rowid] += 1.0 / (k_rrf_constant + static_cast<double>(rank + 1));
        for (const auto& [seq, score] : fused) ranked.push_back({seq, score});
        // Best first; equal scores by record order, so the answer is deterministic.
        std::stable_sort(ranked.begin(), ranked.end(),
                         [](const RetrievedRow& a, const RetrievedRow& b) { return a.score > b.score; });
    }
    for (const RetrievedRow& row : ranked) {
        if (static_cast<int>(out.size()) == k) break;
        MF_TRY_ASSIGN(std::optional<Memory> memory, memory_of(row.rowid));
        if (memory) out.push_back({std::move(*memory), row.score});
    }
    return out;
}

Result<std::vector<Memory>> LedgerSystem::all_memories() {
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare(std::string(k_memory_columns) +
                                                    "WHERE r.valid_to IS NULL ORDER BY r.key, r.seq"));
    std::vector<Memory> out;
    MF_TRY(s.for_each_row([&] { out.push_back(memory_from(s)); }));
    return out;
}

Result<void> LedgerSystem::reset() {
    Result<void> emptied = in_transaction(*m_db, {m_dense.get(), m_bm25.get()}, [&]() -> Result<void> {
        MF_TRY(m_db->exec("DELETE FROM ledger_records; DELETE FROM ledger_keys; DELETE FROM ledger_sessions; "
                          "DELETE FROM ledger_meta WHERE key = 'bm25_rows';"));
        m_open.clear();
        MF_TRY(m_dense->clear());
        return m_bm25->clear();
    });
    if (!emptied) (void)reload_open();
    return emptied;
}

Result<std::vector<MemoryEvent>> LedgerSystem::history(std::string_view memory_id) {
    if (!m_options.history) return MemorySystem::history(memory_id);
    const std::optional<std::int64_t> key = key_of_memory(memory_id);
    std::vector<MemoryEvent> out;
    if (key) {
        MF_TRY_ASSIGN(store::Statement s, m_db->prepare(
            "SELECT k.subject, k.attribute, r.value, r.valid_from, r.valid_to, r.closed_by, r.sources_json, "
            "r.close_sources_json FROM ledger_records r JOIN ledger_keys k ON k.id = r.key WHERE r.key = ? "
            "ORDER BY r.seq"));
        s.bind(1, *key);
        const std::string id(memory_id);
        std::string previous;  // the text of the record a successor replaced; empty after a close
        MF_TRY(s.for_each_row([&] {
            const std::string current = record_text(s.column_text(0), s.column_text(1), s.column_text(2));
            auto sources = parse_sources(s.column_text(6));
            if (previous.empty())
                out.push_back({id, "add", "", current, s.column_text(3), std::move(sources)});
            else
                out.push_back({id, "update", previous, current, s.column_text(3), std::move(sources)});
            previous.clear();
            if (s.column_is_null(4)) return;
            if (s.column_text(5) == k_closed_by_update)
                previous = current;
            else
                out.push_back({id, "delete", current, "", s.column_text(4), parse_sources(s.column_text(7))});
        }));
    }
    if (out.empty()) return make_error(ErrorKind::not_found, "no memory '" + std::string(memory_id) + "'");
    return out;
}

Result<std::vector<Memory>> LedgerSystem::state_as_of(std::string_view timestamp) {
    if (!m_options.history) return MemorySystem::state_as_of(timestamp);
    MF_TRY_ASSIGN(store::Statement s, m_db->prepare(std::string(k_memory_columns) +
                                                    "WHERE r.valid_from <= ?1 AND (r.valid_to IS NULL OR ?1 < r.valid_to) "
                                                    "ORDER BY r.key, r.seq"));
    s.bind(1, timestamp);
    std::vector<Memory> out;
    MF_TRY(s.for_each_row([&] { out.push_back(memory_from(s)); }));
    return out;
}

}  // namespace memfail::memory

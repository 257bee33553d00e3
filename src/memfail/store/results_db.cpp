// SPDX-License-Identifier: MIT
// Results database: schema, writes and the summary queries reports are built from.
#include <memfail/store/results_db.hpp>
#include <memfail/store/leaky_sql.hpp>

#include <memfail/core/hash.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <tuple>

#include <signal.h>
#include <unistd.h>

namespace memfail::store {

std::string RunRecord::label() const {
    const auto j = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
    if (j.is_object())
        if (auto it = j.find("name"); it != j.end() && it->is_string() && !it->get<std::string>().empty())
            return it->get<std::string>();
    return system_spec;
}

std::string RunRecord::protocol() const {
    const auto j = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
    if (j.is_object())
        if (auto it = j.find("protocol"); it != j.end() && it->is_string()) return it->get<std::string>();
    return "memfail";
}

namespace {

// Schema version 3 (version 1 lacked the answer columns, stage_checks and llm_calls; version 2 lacked
// probe_texts and memory_texts; open() migrates both). Changing it means bumping k_results_schema_version and adding a migration.
constexpr const char* k_schema = R"sql(
-- Who is writing a run: one process at a time (ResultsDb::claim_run). A row left by a process that
-- died is taken over by the next writer on the same host.
CREATE TABLE IF NOT EXISTS run_writers(
  run_id          INTEGER PRIMARY KEY,
  pid             INTEGER NOT NULL,
  host            TEXT NOT NULL,
  since           TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs(
  id            INTEGER PRIMARY KEY,
  status        TEXT NOT NULL,
  system_spec   TEXT NOT NULL,
  config_json   TEXT NOT NULL,
  config_hash   TEXT NOT NULL,
  code_version  TEXT NOT NULL,
  started_at    TEXT NOT NULL,
  finished_at   TEXT,
  error         TEXT
);
CREATE TABLE IF NOT EXISTS run_scenarios(
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  scenario_id   TEXT NOT NULL,
  dataset       TEXT NOT NULL,
  dataset_hash  TEXT NOT NULL,
  sessions      INTEGER NOT NULL,
  probes        INTEGER NOT NULL,
  status        TEXT NOT NULL,
  PRIMARY KEY(run_id, scenario_id)
);
CREATE TABLE IF NOT EXISTS stored_sessions(
  run_id        INTEGER NOT NULL,
  scenario_id   TEXT NOT NULL,
  session_id    TEXT NOT NULL,
  micros        INTEGER NOT NULL,
  PRIMARY KEY(run_id, scenario_id, session_id)
);
CREATE TABLE IF NOT EXISTS probe_results(
  run_id          INTEGER NOT NULL,
  scenario_id     TEXT NOT NULL,
  dataset         TEXT NOT NULL,
  probe_id        TEXT NOT NULL,
  k               INTEGER NOT NULL,
  kind            TEXT NOT NULL,
  stage           TEXT NOT NULL,
  memory_success  INTEGER NOT NULL,
  reasoning       TEXT NOT NULL DEFAULT 'not graded',
  retrieved_json  TEXT NOT NULL,
  retrieve_micros INTEGER NOT NULL,
  error           TEXT,
  answer          TEXT,
  answer_correct  INTEGER,
  grader          TEXT NOT NULL DEFAULT 'rules',
  retrieved_tokens INTEGER,
  PRIMARY KEY(run_id, scenario_id, probe_id, k)
);
CREATE TABLE IF NOT EXISTS memory_stats(
  run_id          INTEGER NOT NULL,
  scenario_id     TEXT NOT NULL,
  checkpoint      TEXT NOT NULL,
  memories        INTEGER NOT NULL,
  tokens          INTEGER,
  encoding        TEXT,
  PRIMARY KEY(run_id, scenario_id, checkpoint)
);
-- What served retrieval at a checkpoint (the index and the settings that decide its recall: "bm25",
-- "hashed:dim=512 hnsw(int8,M=32,...)"), as the system said. Added within schema 3: older files
-- lack it and read as having none.
CREATE TABLE IF NOT EXISTS retrieval_serving(
  run_id          INTEGER NOT NULL,
  scenario_id     TEXT NOT NULL,
  checkpoint      TEXT NOT NULL,
  serving         TEXT NOT NULL,
  PRIMARY KEY(run_id, scenario_id, checkpoint)
);
CREATE TABLE IF NOT EXISTS fact_results(
  run_id          INTEGER NOT NULL,
  scenario_id     TEXT NOT NULL,
  probe_id        TEXT NOT NULL,
  k               INTEGER NOT NULL,
  fact_id         TEXT NOT NULL,
  stage           TEXT NOT NULL,
  method          TEXT NOT NULL,
  stored_json     TEXT NOT NULL,
  retrieved_json  TEXT NOT NULL,
  missing_json    TEXT NOT NULL,
  explanation     TEXT NOT NULL,
  PRIMARY KEY(run_id, scenario_id, probe_id, k, fact_id)
);
CREATE TABLE IF NOT EXISTS stage_checks(
  run_id          INTEGER NOT NULL,
  scenario_id     TEXT NOT NULL,
  probe_id        TEXT NOT NULL,
  k               INTEGER NOT NULL,
  fact_id         TEXT NOT NULL,
  stage           TEXT NOT NULL,
  grader          TEXT NOT NULL,
  passed          INTEGER NOT NULL,
  decisive        INTEGER NOT NULL,
  reason          TEXT NOT NULL,
  PRIMARY KEY(run_id, scenario_id, probe_id, k, fact_id, stage, grader)
);
-- A suite's memory-side checks (write integrity): one row per applicable check of a probe at a k.
-- passed is NULL when the check could not be decided. Added within schema 3: older files lack it and
-- read as having none.
CREATE TABLE IF NOT EXISTS memory_checks(
  run_id          INTEGER NOT NULL,
  scenario_id     TEXT NOT NULL,
  probe_id        TEXT NOT NULL,
  k               INTEGER NOT NULL,
  name            TEXT NOT NULL,
  passed          INTEGER,
  detail          TEXT NOT NULL,
  PRIMARY KEY(run_id, scenario_id, probe_id, k, name)
);
-- A suite's checks of the memory after one session is stored (HaluMem's extraction, false-memory
-- resistance, memory accuracy and updating), one row per checked item: score in [0, 1], NULL when
-- undecided; label a verdict's name (an update's correct / hallucination / omission / other); weight
-- the item's share of a weighted figure. Added within schema 3: older files lack it and read as
-- having none.
CREATE TABLE IF NOT EXISTS session_checks(
  run_id          INTEGER NOT NULL,
  scenario_id     TEXT NOT NULL,
  session_id      TEXT NOT NULL,
  name            TEXT NOT NULL,
  item            TEXT NOT NULL,
  score           REAL,
  label           TEXT NOT NULL,
  weight          REAL NOT NULL,
  grader          TEXT NOT NULL,
  detail          TEXT NOT NULL,
  PRIMARY KEY(run_id, scenario_id, session_id, name, item)
);
-- A profile task's results (the dynamic suite): one row per probe at a k. Added within schema 3:
-- older files lack it and read as having none.
CREATE TABLE IF NOT EXISTS profile_results(
  run_id          INTEGER NOT NULL,
  scenario_id     TEXT NOT NULL,
  probe_id        TEXT NOT NULL,
  k               INTEGER NOT NULL,
  task            TEXT NOT NULL,
  state_key       TEXT NOT NULL,
  family          TEXT NOT NULL,
  checkpoint      TEXT NOT NULL,
  state_change    TEXT NOT NULL,
  recall          REAL NOT NULL,
  label           TEXT NOT NULL,
  reason          TEXT NOT NULL,
  fields_json     TEXT NOT NULL,
  item_score      REAL,
  PRIMARY KEY(run_id, scenario_id, probe_id, k)
);
CREATE TABLE IF NOT EXISTS llm_calls(
  id                INTEGER PRIMARY KEY,
  run_id            INTEGER NOT NULL,
  role              TEXT NOT NULL,
  stage             TEXT NOT NULL,
  model             TEXT NOT NULL,
  cache_hit         INTEGER NOT NULL,
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  counted_locally   INTEGER NOT NULL,
  latency_micros    INTEGER NOT NULL,
  attempts          INTEGER NOT NULL,
  error_kind        TEXT,
  error             TEXT,
  cache_key         TEXT,
  session           TEXT,
  payer             TEXT,
  work              TEXT
);
CREATE INDEX IF NOT EXISTS llm_calls_by_run ON llm_calls(run_id, role);
CREATE TABLE IF NOT EXISTS probe_texts(
  run_id          INTEGER NOT NULL,
  scenario_id     TEXT NOT NULL,
  probe_id        TEXT NOT NULL,
  checkpoint      TEXT NOT NULL,
  probe_json      TEXT NOT NULL,
  PRIMARY KEY(run_id, scenario_id, probe_id)
);
CREATE TABLE IF NOT EXISTS memory_texts(
  run_id          INTEGER NOT NULL,
  scenario_id     TEXT NOT NULL,
  checkpoint      TEXT NOT NULL,
  memory_id       TEXT NOT NULL,
  text            TEXT NOT NULL,
  sources_json    TEXT NOT NULL,
  PRIMARY KEY(run_id, scenario_id, checkpoint, memory_id)
);
-- A finished run's integrity record (ResultsDb::seal_run), written when it finishes: for the run's
-- row in runs and each table holding its rows, the columns covered, how many rows and a digest of
-- their contents, which `memfail merge` checks a part against. Added within schema 3: older files
-- lack it and their runs read as unverified.
CREATE TABLE IF NOT EXISTS run_integrity(
  run_id          INTEGER NOT NULL,
  table_name      TEXT NOT NULL,
  columns         TEXT NOT NULL,
  row_count       INTEGER NOT NULL,
  digest          TEXT NOT NULL,
  PRIMARY KEY(run_id, table_name)
);
)sql";

constexpr const char* k_migrate_1_to_2 = R"sql(
ALTER TABLE probe_results ADD COLUMN answer TEXT;
ALTER TABLE probe_results ADD COLUMN answer_correct INTEGER;
ALTER TABLE probe_results ADD COLUMN grader TEXT NOT NULL DEFAULT 'rules';
ALTER TABLE probe_results ADD COLUMN retrieved_tokens INTEGER;
)sql";

RunRecord read_run(Statement& s) {
    RunRecord r;
    r.id = s.column_int(0);
    r.status = s.column_text(1);
    r.system_spec = s.column_text(2);
    r.config_json = s.column_text(3);
    r.config_hash = s.column_text(4);
    r.code_version = s.column_text(5);
    r.started_at = s.column_text(6);
    r.finished_at = s.column_text(7);
    r.error = s.column_text(8);
    return r;
}

std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = text.find(',', start);
        out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

// The q-quantile of sorted microsecond values, in milliseconds (nearest rank).
double quantile_ms(const std::vector<std::int64_t>& sorted, double q) {
    if (sorted.empty()) return 0;
    const std::size_t i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size()))) - 1;
    return static_cast<double>(sorted[std::min(i, sorted.size() - 1)]) / 1000.0;
}

// Each rules check of a run (r) beside the judge's check of the same fact, stage, probe and k (l).
constexpr const char* k_rules_beside_judge =
    "FROM stage_checks r JOIN stage_checks l "
    "ON l.run_id = r.run_id AND l.scenario_id = r.scenario_id AND l.probe_id = r.probe_id AND l.k = r.k "
    "AND l.fact_id = r.fact_id AND l.stage = r.stage AND l.grader = 'llm' "
    "WHERE r.run_id = ? AND r.grader = 'rules' ";

constexpr const char* k_run_columns =
    "SELECT id, status, system_spec, config_json, config_hash, code_version, started_at, "
    "COALESCE(finished_at, ''), COALESCE(error, '') FROM runs ";

}  // namespace

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
}

// A results file written by a newer memfail: refused, read-write or read-only.
static Error newer_schema(const std::string& path, int version) {
    return make_error(ErrorKind::invalid_input,
                      "results file has schema version " + std::to_string(version) + "; this build reads up to " +
                          std::to_string(k_results_schema_version) + " (upgrade memfail)",
                      path);
}

Result<ResultsDb> ResultsDb::open(const std::string& path) {
    MF_TRY_ASSIGN(Database db, Database::open(path));
    MF_TRY_ASSIGN(int version, db.user_version());
    if (version > k_results_schema_version) return newer_schema(path, version);
    if (version == 1) MF_TRY(db.exec(k_migrate_1_to_2));
    MF_TRY(db.exec(k_schema));
    if (version < k_results_schema_version) MF_TRY(db.set_user_version(k_results_schema_version));
    return ResultsDb(std::move(db));
}

namespace {

// What the current schema has and an older file lacks, supplied for one read-only connection by
// TEMP objects, which shadow the file's own (unqualified names resolve to temp first): a missing
// table becomes an empty temp table, a table missing columns a temp view adding them with their
// defaults. The file itself is never written.
Result<void> overlay_missing_schema(Database& file) {
    MF_TRY_ASSIGN(Database reference, Database::open(":memory:"));
    MF_TRY(reference.exec(k_schema));
    MF_TRY_ASSIGN(Statement tables, reference.prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"));
    std::vector<std::pair<std::string, std::string>> wanted;
    MF_TRY(tables.for_each_row([&] { wanted.emplace_back(tables.column_text(0), tables.column_text(1)); }));
    auto quote = [](const std::string& name) {
        std::string out = "\"";
        for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
        return out + "\"";
    };
    for (const auto& [name, sql] : wanted) {
        MF_TRY_ASSIGN(Statement have, file.prepare("SELECT name FROM pragma_table_info(?1, 'main')"));
        have.bind(1, name);
        std::set<std::string> columns;
        MF_TRY(have.for_each_row([&] { columns.insert(have.column_text(0)); }));
        if (columns.empty()) {
            const std::string prefix = "CREATE TABLE ";
            MF_ASSERT(sql.rfind(prefix, 0) == 0, "sqlite_master keeps CREATE TABLE statements as written");
            MF_TRY(file.exec("CREATE TEMP TABLE " + sql.substr(prefix.size())));
            continue;
        }
        MF_TRY_ASSIGN(Statement all, reference.prepare("SELECT name, dflt_value FROM pragma_table_info(?1)"));
        all.bind(1, name);
        std::string select;
        bool missing = false;
        MF_TRY(all.for_each_row([&] {
            const std::string column = all.column_text(0);
            if (!select.empty()) select += ", ";
            if (columns.count(column)) {
                select += quote(column);
            } else {
                missing = true;
                select += (all.column_is_null(1) ? std::string("NULL") : all.column_text(1)) + " AS " + quote(column);
            }
        }));
        if (missing)
            MF_TRY(file.exec("CREATE TEMP VIEW " + quote(name) + " AS SELECT " + select + ", rowid AS rowid FROM main." +
                             quote(name)));
    }
    return {};
}

}  // namespace

Result<ResultsDb> ResultsDb::open_read_only(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return make_error(ErrorKind::not_found, "no such results file", path);
    MF_TRY_ASSIGN(Database db, Database::open_read_only(path));
    MF_TRY_ASSIGN(int version, db.user_version());
    MF_TRY_ASSIGN(Statement runs, db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'"));
    MF_TRY_ASSIGN(bool row, runs.step());
    if (!row || runs.column_int(0) == 0)
        return make_error(ErrorKind::invalid_input,
                          "not a memfail results file (it has no runs table; results files are written by `memfail run`)",
                          path);
    if (version > k_results_schema_version) return newer_schema(path, version);
    // Always: a table added within a schema version (run_writers) may be missing from older files of it.
    MF_TRY(overlay_missing_schema(db));
    return ResultsDb(std::move(db));
}

Result<Statement*> ResultsDb::cached(const char* sql) {
    return m_statements.try_emplace(sql, sql).first->second.get(m_db);
}

Result<std::int64_t> ResultsDb::create_run(const RunRecord& run) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "INSERT INTO runs(status, system_spec, config_json, config_hash, code_version, started_at) "
        "VALUES('running', ?, ?, ?, ?, ?)"));
    s.bind(1, run.system_spec).bind(2, run.config_json).bind(3, run.config_hash);
    s.bind(4, run.code_version).bind(5, run.started_at.empty() ? utc_now() : run.started_at);
    MF_TRY(s.run());
    return m_db.last_insert_rowid();
}

Result<std::optional<RunRecord>> ResultsDb::find_resumable(const std::string& config_hash) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(std::string(k_run_columns) +
                                            "WHERE config_hash = ? AND status != 'finished' "
                                            "ORDER BY id DESC LIMIT 1"));
    s.bind(1, config_hash);
    MF_TRY_ASSIGN(bool row, s.step());
    if (!row) return std::optional<RunRecord>{};
    return std::optional<RunRecord>{read_run(s)};
}

Result<std::optional<RunRecord>> ResultsDb::find_finished(const std::string& config_hash) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(std::string(k_run_columns) +
                                            "WHERE config_hash = ? AND status = 'finished' "
                                            "ORDER BY id DESC LIMIT 1"));
    s.bind(1, config_hash);
    MF_TRY_ASSIGN(bool row, s.step());
    if (!row) return std::optional<RunRecord>{};
    return std::optional<RunRecord>{read_run(s)};
}

Result<std::optional<RunRecord>> ResultsDb::run(std::int64_t id) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(std::string(k_run_columns) + "WHERE id = ?"));
    s.bind(1, id);
    MF_TRY_ASSIGN(bool row, s.step());
    if (!row) return std::optional<RunRecord>{};
    return std::optional<RunRecord>{read_run(s)};
}

Result<std::vector<RunRecord>> ResultsDb::runs() {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(std::string(k_run_columns) + "ORDER BY id"));
    std::vector<RunRecord> out;
    MF_TRY(s.for_each_row([&] {
        out.push_back(read_run(s));
    }));
    return out;
}

Result<void> ResultsDb::finish_run(std::int64_t id, const std::string& status, const std::string& error) {
    auto update = [&]() -> Result<void> {
        MF_TRY_ASSIGN(Statement s,
                      m_db.prepare("UPDATE runs SET status = ?, finished_at = ?, error = ? WHERE id = ?"));
        s.bind(1, status).bind(2, utc_now());
        if (error.empty()) s.bind_null(3);
        else s.bind(3, error);
        s.bind(4, id);
        return s.run();
    };
    if (status != "finished") {
        // Not finished (error, interrupted): whatever record an earlier finish left no longer holds.
        MF_TRY(update());
        MF_TRY_ASSIGN(Statement drop, m_db.prepare("DELETE FROM run_integrity WHERE run_id = ?"));
        drop.bind(1, id);
        return drop.run();
    }
    // Finished: the status and the integrity record together, or neither.
    MF_TRY_ASSIGN(Transaction tx, Transaction::begin(m_db));
    MF_TRY(update());
    MF_TRY(seal_rows(id));
    return tx.commit();
}

namespace {

std::string quote_name(const std::string& name) {
    std::string out = "\"";
    for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// One table's share of a run, as the integrity record holds it.
struct TableDigest {
    std::string table;
    std::string run_column;            // "id" for runs, else "run_id"
    std::vector<std::string> columns;  // every column, in the table's order
    std::int64_t rows = 0;
    std::string digest;
};

Result<std::vector<std::string>> main_columns(Database& db, const std::string& table) {
    MF_TRY_ASSIGN(Statement s, db.prepare("SELECT name FROM pragma_table_info(?1, 'main')"));
    s.bind(1, table);
    std::vector<std::string> out;
    MF_TRY(s.for_each_row([&] { out.push_back(s.column_text(0)); }));
    return out;
}

// The file's tables that hold a run's rows (by its run_id; runs by its id), with their columns:
// all but run_writers (who is writing, not what was written) and the record itself.
Result<std::vector<TableDigest>> run_tables(Database& db) {
    MF_TRY_ASSIGN(Statement s, db.prepare(
        "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"));
    std::vector<std::string> names;
    MF_TRY(s.for_each_row([&] { names.push_back(s.column_text(0)); }));
    std::vector<TableDigest> out;
    for (const auto& name : names) {
        if (name == "run_writers" || name == "run_integrity") continue;
        MF_TRY_ASSIGN(auto columns, main_columns(db, name));
        TableDigest t;
        t.table = name;
        t.columns = std::move(columns);
        t.run_column = name == "runs" ? "id" : "run_id";
        if (std::find(t.columns.begin(), t.columns.end(), t.run_column) == t.columns.end()) continue;
        out.push_back(std::move(t));
    }
    return out;
}

// Counts and digests the run's rows of `t` over `t.columns`: each row's values as SQLite quotes them
// (exact for every type), hashed twice with XXH3-64 under two seeds and summed, so the digest does
// not depend on the order rows are stored in.
Result<void> digest_rows(Database& db, TableDigest& t, std::int64_t run_id) {
    std::string select;
    for (const auto& c : t.columns) select += (select.empty() ? "" : " || char(31) || ") + ("quote(" + quote_name(c) + ")");
    MF_TRY_ASSIGN(Statement s, db.prepare("SELECT " + (select.empty() ? std::string("''") : select) + " FROM main." +
                                          quote_name(t.table) + " WHERE " + quote_name(t.run_column) + " = ?1"));
    s.bind(1, run_id);
    std::uint64_t a = 0, b = 0;
    t.rows = 0;
    MF_TRY(s.for_each_row([&] {
        const std::string_view row = s.column_text_view(0);
        a += hash64(row, 0x6d656d6661696c31ULL);
        b += hash64(row, 0x6d656d6661696c32ULL);
        ++t.rows;
    }));
    char hex[33];
    std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    t.digest = hex;
    return {};
}

std::string join_columns(const std::vector<std::string>& columns) {
    std::string out;
    for (const auto& c : columns) out += (out.empty() ? "" : ",") + c;
    return out;
}

}  // namespace

Result<void> ResultsDb::seal_rows(std::int64_t run_id) {
    MF_TRY_ASSIGN(auto tables, run_tables(m_db));
    MF_TRY_ASSIGN(Statement drop, m_db.prepare("DELETE FROM run_integrity WHERE run_id = ?"));
    drop.bind(1, run_id);
    MF_TRY(drop.run());
    MF_TRY_ASSIGN(Statement put, m_db.prepare(
        "INSERT INTO run_integrity(run_id, table_name, columns, row_count, digest) VALUES(?, ?, ?, ?, ?)"));
    for (auto& t : tables) {
        MF_TRY(digest_rows(m_db, t, run_id));
        put.reset();
        put.bind(1, run_id).bind(2, t.table).bind(3, join_columns(t.columns)).bind(4, t.rows).bind(5, t.digest);
        MF_TRY(put.run());
    }
    return {};
}

Result<void> ResultsDb::seal_run(std::int64_t run_id) {
    MF_TRY_ASSIGN(Transaction tx, Transaction::begin(m_db));
    MF_TRY(seal_rows(run_id));
    return tx.commit();
}

Result<std::optional<std::vector<std::string>>> ResultsDb::verify_run(std::int64_t run_id) {
    struct Sealed {
        std::string table, columns, digest;
        std::int64_t rows = 0;
    };
    std::vector<Sealed> sealed;
    {
        MF_TRY_ASSIGN(Statement s, m_db.prepare(
            "SELECT table_name, columns, row_count, digest FROM run_integrity WHERE run_id = ? ORDER BY table_name"));
        s.bind(1, run_id);
        MF_TRY(s.for_each_row([&] { sealed.push_back({s.column_text(0), s.column_text(1), s.column_text(3), s.column_int(2)}); }));
    }
    if (sealed.empty()) return std::optional<std::vector<std::string>>{};
    std::vector<std::string> problems;
    MF_TRY_ASSIGN(auto present, run_tables(m_db));
    std::set<std::string> covered;
    for (const auto& record : sealed) {
        covered.insert(record.table);
        const auto it = std::find_if(present.begin(), present.end(),
                                     [&](const TableDigest& t) { return t.table == record.table; });
        if (it == present.end()) {
            problems.push_back("table " + record.table + " is missing");
            continue;
        }
        TableDigest t = *it;
        t.columns = split_commas(record.columns);
        bool columns_ok = true;
        for (const auto& c : t.columns)
            if (std::find(it->columns.begin(), it->columns.end(), c) == it->columns.end()) {
                problems.push_back("table " + record.table + " lacks its column " + c);
                columns_ok = false;
            }
        if (!columns_ok) continue;
        MF_TRY(digest_rows(m_db, t, run_id));
        if (t.rows != record.rows)
            problems.push_back("table " + record.table + " holds " + std::to_string(t.rows) + " row(s) of run " +
                               std::to_string(run_id) + " where its integrity record says " +
                               std::to_string(record.rows));
        else if (t.digest != record.digest)
            problems.push_back("the contents of table " + record.table + " for run " + std::to_string(run_id) +
                               " differ from its integrity record");
    }
    for (auto& t : present) {
        if (covered.count(t.table)) continue;
        MF_TRY(digest_rows(m_db, t, run_id));
        if (t.rows > 0)
            problems.push_back("table " + t.table + " holds " + std::to_string(t.rows) + " row(s) of run " +
                               std::to_string(run_id) + " that its integrity record does not cover");
    }
    return std::optional<std::vector<std::string>>{std::move(problems)};
}

namespace {

std::string this_host() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
    return name;
}

// A process on this host is alive when signal 0 reaches it (EPERM: it exists, owned by another user).
bool process_alive(std::int64_t pid) {
    if (pid <= 0) return false;
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

Result<void> ResultsDb::claim_run(std::int64_t run_id) {
    const std::int64_t me = static_cast<std::int64_t>(::getpid());
    const std::string host = this_host();
    MF_TRY_ASSIGN(Transaction tx, Transaction::begin(m_db));  // BEGIN IMMEDIATE: one claimant at a time
    MF_TRY_ASSIGN(Statement q, m_db.prepare("SELECT pid, host, since FROM run_writers WHERE run_id = ?"));
    q.bind(1, run_id);
    MF_TRY_ASSIGN(bool held, q.step());
    if (held) {
        const std::int64_t pid = q.column_int(0);
        const std::string their_host = q.column_text(1);
        const bool mine = pid == me && their_host == host;
        // Another host's process cannot be checked from here: only a dead process on this host, or
        // this very process, gives its claim up.
        if (!mine && (their_host != host || process_alive(pid)))
            return make_error(ErrorKind::invalid_input,
                              "run " + std::to_string(run_id) + " is being written by pid " + std::to_string(pid) +
                                  " on " + their_host + " (since " + q.column_text(2) +
                                  "); wait for it to finish, or stop it",
                              m_db.path());
    }
    q.reset();
    MF_TRY_ASSIGN(Statement w, m_db.prepare(
        "INSERT INTO run_writers(run_id, pid, host, since) VALUES(?, ?, ?, ?) "
        "ON CONFLICT(run_id) DO UPDATE SET pid = excluded.pid, host = excluded.host, since = excluded.since"));
    w.bind(1, run_id).bind(2, me).bind(3, host).bind(4, utc_now());
    MF_TRY(w.run());
    return tx.commit();
}

Result<void> ResultsDb::release_run(std::int64_t run_id) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare("DELETE FROM run_writers WHERE run_id = ? AND pid = ? AND host = ?"));
    s.bind(1, run_id).bind(2, static_cast<std::int64_t>(::getpid())).bind(3, this_host());
    return s.run();
}

Result<std::optional<std::string>> ResultsDb::run_writer(std::int64_t run_id) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare("SELECT pid, host FROM run_writers WHERE run_id = ?"));
    s.bind(1, run_id);
    MF_TRY_ASSIGN(bool row, s.step());
    if (!row) return std::optional<std::string>{};
    return std::optional<std::string>{"pid " + std::to_string(s.column_int(0)) + " on " + s.column_text(1)};
}

namespace {

// A run's rows of a per-probe table (alias t) with their probe row (alias p) for the dataset, error
// rows excluded, in probe order; `columns` and `read_rest` are the table's own, after the key's four.
template <class Row, class ReadRest>
Result<std::vector<Row>> rows_with_probe(Database& db, std::int64_t run_id, const char* table, const char* columns,
                                         const char* then_by, ReadRest read_rest) {
    std::vector<Row> out;
    MF_TRY_ASSIGN(Statement s, db.prepare(
        std::string("SELECT t.scenario_id, p.dataset, t.probe_id, t.k, ") + columns + " FROM " + table + " t "
        "JOIN probe_results p ON p.run_id = t.run_id AND p.scenario_id = t.scenario_id AND p.probe_id = t.probe_id "
        "AND p.k = t.k WHERE t.run_id = ? AND p.stage != 'error' ORDER BY t.scenario_id, t.probe_id, t.k" + then_by));
    s.bind(1, run_id);
    MF_TRY(s.for_each_row([&] {
        Row r;
        r.scenario_id = s.column_text(0);
        r.dataset = s.column_text(1);
        r.probe_id = s.column_text(2);
        r.k = static_cast<int>(s.column_int(3));
        read_rest(s, r);
        out.push_back(std::move(r));
    }));
    return out;
}

}  // namespace

Result<std::vector<ResultsDb::RecordedCheck>> ResultsDb::memory_checks(std::int64_t run_id) {
    return rows_with_probe<RecordedCheck>(m_db, run_id, "memory_checks", "t.name, t.passed, t.detail", ", t.name",
                                          [](Statement& s, RecordedCheck& r) {
                                              r.row.check = s.column_text(4);
                                              if (!s.column_is_null(5)) r.row.passed = s.column_int(5) != 0;
                                              r.row.detail = s.column_text(6);
                                          });
}

Result<std::vector<ResultsDb::RecordedProfile>> ResultsDb::profile_results(std::int64_t run_id) {
    return rows_with_probe<RecordedProfile>(
        m_db, run_id, "profile_results",
        "p.stage, p.answer_correct, t.task, t.state_key, t.family, t.checkpoint, t.state_change, t.recall, t.label, "
        "t.reason, t.fields_json, t.item_score",
        "", [](Statement& s, RecordedProfile& r) {
            r.stage = s.column_text(4);
            if (!s.column_is_null(5)) r.answer_correct = s.column_int(5) != 0;
            r.row.task = s.column_text(6);
            r.row.state_key = s.column_text(7);
            r.row.family = s.column_text(8);
            r.row.profile_checkpoint = s.column_text(9);
            r.row.state_change = s.column_text(10);
            r.row.recall = s.column_double(11);
            r.row.label = s.column_text(12);
            r.row.reason = s.column_text(13);
            r.row.fields_json = s.column_text(14);
            if (!s.column_is_null(15)) r.row.item_score = s.column_double(15);
        });
}

Result<ResultsDb::ErrorSummary> ResultsDb::error_summary(std::int64_t run_id, std::size_t causes) {
    ErrorSummary out;
    MF_TRY_ASSIGN(Statement counts, m_db.prepare(
        "SELECT COUNT(*), COALESCE(SUM(stage = 'error'), 0) FROM probe_results WHERE run_id = ?"));
    counts.bind(1, run_id);
    MF_TRY_ASSIGN(bool row, counts.step());
    if (row) {
        out.rows = counts.column_int(0);
        out.errors = counts.column_int(1);
    }
    MF_TRY_ASSIGN(Statement why, m_db.prepare(
        "SELECT COALESCE(error, '(no message)'), COUNT(*) FROM probe_results WHERE run_id = ? AND stage = 'error' "
        "GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ?"));
    why.bind(1, run_id).bind(2, static_cast<std::int64_t>(causes));
    MF_TRY(why.for_each_row([&] { out.causes.emplace_back(why.column_text(0), why.column_int(1)); }));
    return out;
}

Result<std::int64_t> ResultsDb::clear_error_probes(std::int64_t run_id) {
    MF_TRY_ASSIGN(Transaction tx, Transaction::begin(m_db));
    for (const char* table : {"stage_checks", "fact_results", "memory_checks", "profile_results"}) {
        MF_TRY_ASSIGN(Statement s, m_db.prepare(
            std::string("DELETE FROM ") + table + " WHERE run_id = ?1 AND (scenario_id, probe_id, k) IN "
            "(SELECT scenario_id, probe_id, k FROM probe_results WHERE run_id = ?1 AND stage = 'error')"));
        s.bind(1, run_id);
        MF_TRY(s.run());
    }
    MF_TRY_ASSIGN(Statement s, m_db.prepare("DELETE FROM probe_results WHERE run_id = ? AND stage = 'error'"));
    s.bind(1, run_id);
    MF_TRY(s.run());
    const std::int64_t removed = m_db.changes();
    MF_TRY(tx.commit());
    return removed;
}

Result<void> ResultsDb::reopen_run(std::int64_t id) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare("UPDATE runs SET status = 'running', error = NULL WHERE id = ?"));
    s.bind(1, id);
    return s.run();
}

Result<void> ResultsDb::upsert_scenario(const ScenarioRecord& r) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "INSERT INTO run_scenarios(run_id, scenario_id, dataset, dataset_hash, sessions, probes, status) "
        "VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(run_id, scenario_id) DO UPDATE SET "
        "dataset = excluded.dataset, dataset_hash = excluded.dataset_hash, "
        "sessions = excluded.sessions, probes = excluded.probes"));
    s.bind(1, r.run_id).bind(2, r.scenario_id).bind(3, r.dataset).bind(4, r.dataset_hash);
    s.bind(5, r.sessions).bind(6, r.probes).bind(7, r.status.empty() ? "pending" : r.status);
    return s.run();
}

Result<void> ResultsDb::set_scenario_status(std::int64_t run_id, const std::string& scenario_id,
                                            const std::string& status) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "UPDATE run_scenarios SET status = ? WHERE run_id = ? AND scenario_id = ?"));
    s.bind(1, status).bind(2, run_id).bind(3, scenario_id);
    return s.run();
}

Result<std::vector<ScenarioRecord>> ResultsDb::scenarios(std::int64_t run_id) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT run_id, scenario_id, dataset, dataset_hash, sessions, probes, status "
        "FROM run_scenarios WHERE run_id = ? ORDER BY rowid"));
    s.bind(1, run_id);
    std::vector<ScenarioRecord> out;
    MF_TRY(s.for_each_row([&] {
        out.push_back({s.column_int(0), s.column_text(1), s.column_text(2), s.column_text(3),
                       s.column_int(4), s.column_int(5), s.column_text(6)});
    }));
    return out;
}

Result<void> ResultsDb::record_store(std::int64_t run_id, const std::string& scenario_id,
                                     const std::string& session_id, std::int64_t micros) {
    MF_TRY_ASSIGN(Statement* s, cached(
        "INSERT OR IGNORE INTO stored_sessions(run_id, scenario_id, session_id, micros) VALUES(?, ?, ?, ?)"));
    s->bind(1, run_id).bind(2, scenario_id).bind(3, session_id).bind(4, micros);
    return s->run();
}

Result<std::set<std::string>> ResultsDb::stored_sessions(std::int64_t run_id, const std::string& scenario_id) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT session_id FROM stored_sessions WHERE run_id = ? AND scenario_id = ?"));
    s.bind(1, run_id).bind(2, scenario_id);
    std::set<std::string> out;
    MF_TRY(s.for_each_row([&] {
        out.insert(s.column_text(0));
    }));
    return out;
}

Result<void> ResultsDb::record_session_checks(std::int64_t run_id, const std::string& scenario_id,
                                              const std::string& session_id, const std::vector<SessionCheckRow>& rows) {
    MF_TRY_ASSIGN(Transaction tx, Transaction::begin(m_db));
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "INSERT OR REPLACE INTO session_checks(run_id, scenario_id, session_id, name, item, score, label, weight, "
        "grader, detail) VALUES(?,?,?,?,?,?,?,?,?,?)"));
    for (const auto& r : rows) {
        s.reset();
        s.bind(1, run_id).bind(2, scenario_id).bind(3, session_id).bind(4, r.name).bind(5, r.item);
        if (r.score) s.bind(6, *r.score);
        else s.bind_null(6);
        s.bind(7, r.label).bind(8, r.weight).bind(9, r.grader).bind(10, r.detail);
        MF_TRY(s.run());
    }
    // A session with nothing to record is still marked checked (name ""), so a resumed run skips it.
    if (rows.empty()) {
        s.reset();
        s.bind(1, run_id).bind(2, scenario_id).bind(3, session_id).bind(4, "").bind(5, "");
        s.bind_null(6).bind(7, "").bind(8, 0.0).bind(9, "").bind(10, "nothing to check");
        MF_TRY(s.run());
    }
    return tx.commit();
}

Result<std::set<std::string>> ResultsDb::checked_sessions(std::int64_t run_id, const std::string& scenario_id) {
    std::set<std::string> out;
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT DISTINCT session_id FROM session_checks WHERE run_id = ? AND scenario_id = ?"));
    s.bind(1, run_id).bind(2, scenario_id);
    MF_TRY(s.for_each_row([&] { out.insert(s.column_text(0)); }));
    return out;
}

Result<std::set<std::pair<std::string, int>>> ResultsDb::graded_probes(std::int64_t run_id,
                                                                       const std::string& scenario_id) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT probe_id, k FROM probe_results WHERE run_id = ? AND scenario_id = ?"));
    s.bind(1, run_id).bind(2, scenario_id);
    std::set<std::pair<std::string, int>> out;
    MF_TRY(s.for_each_row([&] {
        out.emplace(s.column_text(0), static_cast<int>(s.column_int(1)));
    }));
    return out;
}

Result<void> ResultsDb::record_probe(std::int64_t run_id, const ProbeRow& p) {
    MF_TRY_ASSIGN(Transaction tx, Transaction::begin(m_db));
    MF_TRY_ASSIGN(Statement* sp, cached(
        "INSERT INTO probe_results(run_id, scenario_id, dataset, probe_id, k, kind, stage, "
        "memory_success, retrieved_json, retrieve_micros, error, reasoning, answer, answer_correct, grader, "
        "retrieved_tokens) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
    Statement& s = *sp;
    s.bind(1, run_id).bind(2, p.scenario_id).bind(3, p.dataset).bind(4, p.probe_id).bind(5, p.k);
    s.bind(6, p.kind).bind(7, p.stage).bind(8, p.memory_success ? 1 : 0).bind(9, p.retrieved_json);
    s.bind(10, p.retrieve_micros);
    if (p.error.empty()) s.bind_null(11);
    else s.bind(11, p.error);
    s.bind(12, p.reasoning);
    if (p.answer) s.bind(13, *p.answer);
    else s.bind_null(13);
    if (p.answer_correct) s.bind(14, *p.answer_correct ? 1 : 0);
    else s.bind_null(14);
    s.bind(15, p.grader);
    if (p.retrieved_tokens) s.bind(16, *p.retrieved_tokens);
    else s.bind_null(16);
    MF_TRY(s.run());
    MF_TRY_ASSIGN(Statement* fp, cached(
        "INSERT INTO fact_results(run_id, scenario_id, probe_id, k, fact_id, stage, method, "
        "stored_json, retrieved_json, missing_json, explanation) VALUES(?,?,?,?,?,?,?,?,?,?,?)"));
    Statement& f = *fp;
    for (const auto& fact : p.facts) {
        f.bind(1, run_id).bind(2, p.scenario_id).bind(3, p.probe_id).bind(4, p.k).bind(5, fact.fact_id);
        f.bind(6, fact.stage).bind(7, fact.method).bind(8, fact.stored_json);
        f.bind(9, fact.retrieved_json).bind(10, fact.missing_json).bind(11, fact.explanation);
        MF_TRY(f.run());
    }
    if (!p.checks.empty()) {
        MF_TRY_ASSIGN(Statement* cp, cached(
            "INSERT OR REPLACE INTO stage_checks(run_id, scenario_id, probe_id, k, fact_id, stage, grader, "
            "passed, decisive, reason) VALUES(?,?,?,?,?,?,?,?,?,?)"));
        Statement& c = *cp;
        for (const auto& check : p.checks) {
            c.bind(1, run_id).bind(2, p.scenario_id).bind(3, p.probe_id).bind(4, p.k).bind(5, check.fact_id);
            c.bind(6, check.stage).bind(7, check.grader).bind(8, check.passed ? 1 : 0);
            c.bind(9, check.decisive ? 1 : 0).bind(10, check.reason);
            MF_TRY(c.run());
        }
    }
    if (!p.memory_checks.empty()) {
        MF_TRY_ASSIGN(Statement* cp, cached(
            "INSERT OR REPLACE INTO memory_checks(run_id, scenario_id, probe_id, k, name, passed, detail) "
            "VALUES(?,?,?,?,?,?,?)"));
        Statement& c = *cp;
        for (const auto& check : p.memory_checks) {
            c.bind(1, run_id).bind(2, p.scenario_id).bind(3, p.probe_id).bind(4, p.k).bind(5, check.check);
            if (check.passed) c.bind(6, *check.passed ? 1 : 0);
            else c.bind_null(6);
            c.bind(7, check.detail);
            MF_TRY(c.run());
        }
    }
    if (p.profile) {
        const ProfileRow& r = *p.profile;
        MF_TRY_ASSIGN(Statement* pp, cached(
            "INSERT OR REPLACE INTO profile_results(run_id, scenario_id, probe_id, k, task, state_key, family, "
            "checkpoint, state_change, recall, label, reason, fields_json, item_score) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
        Statement& c = *pp;
        c.bind(1, run_id).bind(2, p.scenario_id).bind(3, p.probe_id).bind(4, p.k).bind(5, r.task);
        c.bind(6, r.state_key).bind(7, r.family).bind(8, r.profile_checkpoint).bind(9, r.state_change);
        c.bind(10, r.recall).bind(11, r.label).bind(12, r.reason).bind(13, r.fields_json);
        if (r.item_score) c.bind(14, *r.item_score);
        else c.bind_null(14);
        MF_TRY(c.run());
    }
    // The probe and the memories are the same for every k: the first row of a probe writes them.
    if (!p.probe_json.empty()) {
        MF_TRY_ASSIGN(Statement* tp, cached(
            "INSERT OR IGNORE INTO probe_texts(run_id, scenario_id, probe_id, checkpoint, probe_json) "
            "VALUES(?,?,?,?,?)"));
        tp->bind(1, run_id).bind(2, p.scenario_id).bind(3, p.probe_id).bind(4, p.checkpoint).bind(5, p.probe_json);
        MF_TRY(tp->run());
    }
    if (!p.stored_memories.empty()) {
        MF_TRY_ASSIGN(Statement* mp, cached(
            "INSERT OR IGNORE INTO memory_texts(run_id, scenario_id, checkpoint, memory_id, text, sources_json) "
            "VALUES(?,?,?,?,?,?)"));
        for (const auto& m : p.stored_memories) {
            mp->bind(1, run_id).bind(2, p.scenario_id).bind(3, p.checkpoint).bind(4, m.id).bind(5, m.text);
            mp->bind(6, m.sources_json);
            MF_TRY(mp->run());
        }
    }
    return tx.commit();
}

Result<std::vector<ProbeRow>> ResultsDb::probe_rows(std::int64_t run_id, const std::string& scenario_id) {
    std::vector<ProbeRow> rows;
    // (scenario, probe, k) -> row index, to attach facts and checks read in one pass each.
    std::map<std::tuple<std::string, std::string, int>, std::size_t> index;
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT p.scenario_id, p.dataset, p.probe_id, p.k, p.kind, p.stage, p.memory_success, p.retrieved_json, "
        "p.retrieve_micros, p.error, p.reasoning, p.answer, p.answer_correct, p.grader, p.retrieved_tokens, "
        "t.checkpoint, t.probe_json FROM probe_results p LEFT JOIN probe_texts t ON t.run_id = p.run_id "
        "AND t.scenario_id = p.scenario_id AND t.probe_id = p.probe_id WHERE p.run_id = ? "
        "AND (?2 = '' OR p.scenario_id = ?2) ORDER BY p.dataset, p.scenario_id, p.probe_id, p.k"));
    s.bind(1, run_id).bind(2, scenario_id);
    MF_TRY(s.for_each_row([&] {
        ProbeRow r;
        r.scenario_id = s.column_text(0);
        r.dataset = s.column_text(1);
        r.probe_id = s.column_text(2);
        r.k = static_cast<int>(s.column_int(3));
        r.kind = s.column_text(4);
        r.stage = s.column_text(5);
        r.memory_success = s.column_int(6) != 0;
        r.retrieved_json = s.column_text(7);
        r.retrieve_micros = s.column_int(8);
        if (!s.column_is_null(9)) r.error = s.column_text(9);
        r.reasoning = s.column_text(10);
        if (!s.column_is_null(11)) r.answer = s.column_text(11);
        if (!s.column_is_null(12)) r.answer_correct = s.column_int(12) != 0;
        r.grader = s.column_text(13);
        if (!s.column_is_null(14)) r.retrieved_tokens = s.column_int(14);
        if (!s.column_is_null(15)) r.checkpoint = s.column_text(15);
        if (!s.column_is_null(16)) r.probe_json = s.column_text(16);
        index.emplace(std::make_tuple(r.scenario_id, r.probe_id, r.k), rows.size());
        rows.push_back(std::move(r));
    }));
    MF_TRY_ASSIGN(Statement f, m_db.prepare(
        "SELECT scenario_id, probe_id, k, fact_id, stage, method, stored_json, retrieved_json, missing_json, "
        "explanation FROM fact_results WHERE run_id = ? AND (?2 = '' OR scenario_id = ?2) "
        "ORDER BY scenario_id, probe_id, k, fact_id"));
    f.bind(1, run_id).bind(2, scenario_id);
    MF_TRY(f.for_each_row([&] {
        auto it = index.find(std::make_tuple(f.column_text(0), f.column_text(1), static_cast<int>(f.column_int(2))));
        if (it == index.end()) return;
        FactRow fact;
        fact.fact_id = f.column_text(3);
        fact.stage = f.column_text(4);
        fact.method = f.column_text(5);
        fact.stored_json = f.column_text(6);
        fact.retrieved_json = f.column_text(7);
        fact.missing_json = f.column_text(8);
        fact.explanation = f.column_text(9);
        rows[it->second].facts.push_back(std::move(fact));
    }));
    MF_TRY_ASSIGN(Statement c, m_db.prepare(
        "SELECT scenario_id, probe_id, k, fact_id, stage, grader, passed, decisive, reason FROM stage_checks "
        "WHERE run_id = ? AND (?2 = '' OR scenario_id = ?2) ORDER BY scenario_id, probe_id, k, fact_id, stage, grader"));
    c.bind(1, run_id).bind(2, scenario_id);
    MF_TRY(c.for_each_row([&] {
        auto it = index.find(std::make_tuple(c.column_text(0), c.column_text(1), static_cast<int>(c.column_int(2))));
        if (it == index.end()) return;
        StageCheckRow check;
        check.fact_id = c.column_text(3);
        check.stage = c.column_text(4);
        check.grader = c.column_text(5);
        check.passed = c.column_int(6) != 0;
        check.decisive = c.column_int(7) != 0;
        check.reason = c.column_text(8);
        rows[it->second].checks.push_back(std::move(check));
    }));
    return rows;
}

Result<std::vector<RecordedMemory>> ResultsDb::recorded_memories(std::int64_t run_id, const std::string& scenario_id) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT scenario_id, checkpoint, memory_id, text, sources_json FROM memory_texts WHERE run_id = ? "
        "AND (?2 = '' OR scenario_id = ?2) ORDER BY scenario_id, checkpoint, memory_id"));
    s.bind(1, run_id).bind(2, scenario_id);
    std::vector<RecordedMemory> out;
    MF_TRY(s.for_each_row([&] {
        RecordedMemory m;
        m.scenario_id = s.column_text(0);
        m.checkpoint = s.column_text(1);
        m.memory.id = s.column_text(2);
        m.memory.text = s.column_text(3);
        m.memory.sources_json = s.column_text(4);
        out.push_back(std::move(m));
    }));
    return out;
}

Result<void> ResultsDb::record_memory_stats(std::int64_t run_id, const std::string& scenario_id,
                                            const std::string& checkpoint, std::int64_t memories,
                                            std::optional<std::int64_t> tokens, const std::string& encoding) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "INSERT OR REPLACE INTO memory_stats(run_id, scenario_id, checkpoint, memories, tokens, encoding) "
        "VALUES(?,?,?,?,?,?)"));
    s.bind(1, run_id).bind(2, scenario_id).bind(3, checkpoint).bind(4, memories);
    if (tokens) s.bind(5, *tokens).bind(6, encoding);
    else s.bind_null(5).bind_null(6);
    return s.run();
}

Result<void> ResultsDb::record_serving(std::int64_t run_id, const std::string& scenario_id, const std::string& checkpoint,
                                      const std::string& serving) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "INSERT OR REPLACE INTO retrieval_serving(run_id, scenario_id, checkpoint, serving) VALUES(?,?,?,?)"));
    s.bind(1, run_id).bind(2, scenario_id).bind(3, checkpoint).bind(4, serving);
    return s.run();
}

Result<std::vector<std::string>> ResultsDb::servings(std::int64_t run_id) {
    std::vector<std::string> out;
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT serving FROM retrieval_serving WHERE run_id = ? GROUP BY serving ORDER BY MIN(rowid)"));
    s.bind(1, run_id);
    MF_TRY(s.for_each_row([&] { out.push_back(s.column_text(0)); }));
    return out;
}

Result<std::optional<MemoryStats>> ResultsDb::memory_stats(std::int64_t run_id, const std::string& dataset) {
    // The last checkpoint of the dataset's scenarios: the store as the final probes saw it.
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT m.memories, m.tokens, COALESCE(m.encoding, '') FROM memory_stats m JOIN run_scenarios sc "
        "ON sc.run_id = m.run_id AND sc.scenario_id = m.scenario_id WHERE m.run_id = ? AND sc.dataset = ? "
        "ORDER BY m.checkpoint DESC LIMIT 1"));
    s.bind(1, run_id).bind(2, dataset);
    MF_TRY_ASSIGN(bool row, s.step());
    if (!row) return std::optional<MemoryStats>{};
    MemoryStats out;
    out.memories = s.column_int(0);
    if (!s.column_is_null(1)) out.tokens = s.column_int(1);
    out.encoding = s.column_text(2);
    return std::optional<MemoryStats>{out};
}

Result<RunVisibility> ResultsDb::run_visibility(std::int64_t run_id) {
    RunVisibility out;
    {
        MF_TRY_ASSIGN(Statement s, m_db.prepare("SELECT COUNT(*), MAX(memories) FROM memory_stats WHERE run_id = ?"));
        s.bind(1, run_id);
        MF_TRY_ASSIGN(bool row, s.step());
        if (row && s.column_int(0) > 0) out.max_memories = s.column_int(1);
    }
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT COUNT(*), COALESCE(SUM(TRIM(retrieved_json) NOT IN ('', '[]')), 0) FROM probe_results "
        "WHERE run_id = ? AND stage != 'error'"));
    s.bind(1, run_id);
    MF_TRY_ASSIGN(bool row, s.step());
    if (row) {
        out.probe_rows = s.column_int(0);
        out.served_rows = s.column_int(1);
    }
    return out;
}

Result<void> ResultsDb::record_llm_calls(std::int64_t run_id, const std::vector<LlmCallRow>& calls) {
    if (calls.empty()) return {};
    if (!m_llm_calls_ready) {
        // Files written before exact accounting lack its columns: add them once (writers only, so a
        // read-only open never changes a file).
        bool has_key = false, has_work = false;
        {
            MF_TRY_ASSIGN(Statement info, m_db.prepare("SELECT name FROM pragma_table_info('llm_calls')"));
            MF_TRY(info.for_each_row([&] {
                has_key |= info.column_text(0) == "cache_key";
                has_work |= info.column_text(0) == "work";
            }));
        }
        if (!has_key)
            MF_TRY(m_db.exec("ALTER TABLE llm_calls ADD COLUMN cache_key TEXT;"
                             "ALTER TABLE llm_calls ADD COLUMN session TEXT;"
                             "ALTER TABLE llm_calls ADD COLUMN payer TEXT;"));
        if (!has_work) MF_TRY(m_db.exec("ALTER TABLE llm_calls ADD COLUMN work TEXT;"));
        MF_TRY(m_db.exec("CREATE INDEX IF NOT EXISTS llm_calls_by_key ON llm_calls(cache_key, run_id)"));
        m_llm_calls_ready = true;
    }
    MF_TRY_ASSIGN(Transaction tx, Transaction::begin(m_db));
    MF_TRY_ASSIGN(Statement* insert, cached(
        "INSERT INTO llm_calls(run_id, role, stage, model, cache_hit, prompt_tokens, completion_tokens, "
        "counted_locally, latency_micros, attempts, error_kind, error, cache_key, session, payer, work) "
        "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
    // Successful calls with this key that earlier processes of the run recorded.
    MF_TRY_ASSIGN(Statement* earlier, cached(
        "SELECT COUNT(*) FROM llm_calls WHERE cache_key = ? AND run_id = ? AND error_kind IS NULL "
        "AND session IS NOT NULL AND session != ? AND COALESCE(work, '') = ?"));
    // A sent row, in any run of this file, already accounts the payment.
    MF_TRY_ASSIGN(Statement* accounted, cached(
        "SELECT EXISTS(SELECT 1 FROM llm_calls WHERE cache_key = ? AND payer = ? AND cache_hit = 0)"));
    // An earlier process's replay of the call becomes the sent call its payment says it was.
    MF_TRY_ASSIGN(Statement* upgrade, cached(
        "UPDATE llm_calls SET cache_hit = 0, prompt_tokens = ?, completion_tokens = ?, counted_locally = ?, "
        "attempts = ?, latency_micros = ?, payer = ? WHERE id = (SELECT id FROM llm_calls WHERE cache_key = ? "
        "AND run_id = ? AND cache_hit = 1 AND error_kind IS NULL AND session IS NOT NULL AND session != ? "
        "ORDER BY id LIMIT 1)"));
    auto write = [&](const LlmCallRow& c) -> Result<void> {
        Statement& s = *insert;
        s.bind(1, run_id).bind(2, c.role).bind(3, c.stage).bind(4, c.model).bind(5, c.cache_hit ? 1 : 0);
        s.bind(6, c.prompt_tokens).bind(7, c.completion_tokens).bind(8, c.counted_locally ? 1 : 0);
        s.bind(9, c.latency_micros).bind(10, c.attempts);
        if (c.error_kind.empty()) s.bind_null(11).bind_null(12);
        else s.bind(11, c.error_kind).bind(12, c.error);
        if (c.cache_key.empty()) s.bind_null(13);
        else s.bind(13, c.cache_key);
        if (c.session.empty()) s.bind_null(14);
        else s.bind(14, c.session);
        if (c.payer.empty() || c.cache_hit) s.bind_null(15);
        else s.bind(15, c.payer);
        if (c.work.empty()) s.bind_null(16);
        else s.bind(16, c.work);
        return s.run();
    };
    for (const auto& c : calls) {
        if (c.cache_key.empty() || c.session.empty() || !c.error_kind.empty()) {
            // No identity to reconcile (cache off), or a failure: every failed call really happened.
            MF_TRY(write(c));
            continue;
        }
        bool claim = false;
        if (c.cache_hit && c.paid_elsewhere && !c.payer.empty()) {
            accounted->bind(1, c.cache_key).bind(2, c.payer);
            MF_TRY_ASSIGN(bool row, accounted->step());
            claim = row && accounted->column_int(0) == 0;
            accounted->reset();
        }
        earlier->bind(1, c.cache_key).bind(2, run_id).bind(3, c.session).bind(4, c.work);
        MF_TRY_ASSIGN(bool counted, earlier->step());
        const std::int64_t recorded = counted ? earlier->column_int(0) : 0;
        earlier->reset();
        if (c.occurrence < recorded) {
            // A replay of a call an earlier process of this run recorded (work redone after a kill).
            if (claim) {
                upgrade->bind(1, c.paid_prompt_tokens).bind(2, c.paid_completion_tokens);
                upgrade->bind(3, c.paid_counted_locally ? 1 : 0).bind(4, c.paid_attempts);
                upgrade->bind(5, c.paid_latency_micros).bind(6, c.payer).bind(7, c.cache_key).bind(8, run_id);
                upgrade->bind(9, c.session);
                MF_TRY(upgrade->run());
            }
            continue;
        }
        if (!claim) {
            MF_TRY(write(c));
            continue;
        }
        // The reply was paid for by a process that died before writing its call: this is that call.
        LlmCallRow sent = c;
        sent.cache_hit = false;
        sent.prompt_tokens = c.paid_prompt_tokens;
        sent.completion_tokens = c.paid_completion_tokens;
        sent.counted_locally = c.paid_counted_locally;
        sent.attempts = c.paid_attempts;
        sent.latency_micros = c.paid_latency_micros;
        MF_TRY(write(sent));
    }
    return tx.commit();
}

Result<std::vector<LlmUsageRow>> ResultsDb::llm_usage(std::int64_t run_id) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT role, COUNT(*), SUM(cache_hit), SUM(prompt_tokens), SUM(completion_tokens), "
        "SUM(counted_locally), SUM(error_kind IS NOT NULL), SUM(MAX(attempts - 1, 0)), "
        "GROUP_CONCAT(CASE WHEN cache_hit = 0 AND error_kind IS NULL THEN latency_micros END) "
        "FROM llm_calls WHERE run_id = ? GROUP BY role ORDER BY role"));
    s.bind(1, run_id);
    std::vector<LlmUsageRow> out;
    MF_TRY(s.for_each_row([&] {
        LlmUsageRow r;
        r.role = s.column_text(0);
        r.calls = s.column_int(1);
        r.cache_hits = s.column_int(2);
        r.prompt_tokens = s.column_int(3);
        r.completion_tokens = s.column_int(4);
        r.counted_locally = s.column_int(5);
        r.errors = s.column_int(6);
        r.retries = s.column_int(7);
        std::vector<std::int64_t> latencies;
        for (const auto& part : split_commas(s.column_text(8)))
            if (!part.empty()) latencies.push_back(std::stoll(part));
        std::sort(latencies.begin(), latencies.end());
        r.p50_ms = quantile_ms(latencies, 0.50);
        r.p95_ms = quantile_ms(latencies, 0.95);
        out.push_back(std::move(r));
    }));
    return out;
}

Result<std::vector<LlmModelUsage>> ResultsDb::llm_usage_by_model(std::int64_t run_id) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT role, model, COUNT(*), SUM(cache_hit), "
        "SUM(CASE WHEN cache_hit = 0 THEN prompt_tokens ELSE 0 END), "
        "SUM(CASE WHEN cache_hit = 0 THEN completion_tokens ELSE 0 END), "
        "SUM(CASE WHEN cache_hit = 1 THEN prompt_tokens ELSE 0 END), "
        "SUM(CASE WHEN cache_hit = 1 THEN completion_tokens ELSE 0 END) "
        "FROM llm_calls WHERE run_id = ? GROUP BY role, model ORDER BY role, model"));
    s.bind(1, run_id);
    std::vector<LlmModelUsage> out;
    MF_TRY(s.for_each_row([&] {
        LlmModelUsage u;
        u.role = s.column_text(0);
        u.model = s.column_text(1);
        u.calls = s.column_int(2);
        u.cache_hits = s.column_int(3);
        u.paid_prompt_tokens = s.column_int(4);
        u.paid_completion_tokens = s.column_int(5);
        u.cached_prompt_tokens = s.column_int(6);
        u.cached_completion_tokens = s.column_int(7);
        out.push_back(std::move(u));
    }));
    return out;
}

Result<std::vector<AgreementRow>> ResultsDb::agreement(std::int64_t run_id) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        std::string("SELECT r.stage, COUNT(*), SUM(r.passed = l.passed) ") + k_rules_beside_judge +
        "GROUP BY r.stage "
        "ORDER BY CASE r.stage WHEN 'storage' THEN 1 WHEN 'summary' THEN 2 WHEN 'retrieval' THEN 3 ELSE 4 END"));
    s.bind(1, run_id);
    std::vector<AgreementRow> out;
    MF_TRY(s.for_each_row([&] {
        out.push_back({s.column_text(0), s.column_int(1), s.column_int(2)});
    }));
    return out;
}

Result<std::vector<DisagreementRow>> ResultsDb::disagreements(std::int64_t run_id, std::size_t limit) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        std::string("SELECT r.probe_id, r.k, r.fact_id, r.stage, r.passed, r.reason, l.passed, l.reason ") +
        k_rules_beside_judge + "AND r.passed != l.passed "
        "ORDER BY r.probe_id, r.k, r.fact_id LIMIT ?"));
    s.bind(1, run_id).bind(2, static_cast<std::int64_t>(limit));
    std::vector<DisagreementRow> out;
    MF_TRY(s.for_each_row([&] {
        out.push_back({s.column_text(0), static_cast<int>(s.column_int(1)), s.column_text(2), s.column_text(3),
                       s.column_int(4) != 0, s.column_text(5), s.column_int(6) != 0, s.column_text(7)});
    }));
    return out;
}

namespace {

// The stage counts of a group of probe_results rows `p`, as read_stage_sums reads them (15 columns).
// `incomplete` is an SQL condition on a row: its probe has a fact whose details are incomplete.
std::string stage_sums_sql(const std::string& incomplete) {
    // An error row is in no numerator, whatever its memory side did (files written before it was
    // cleared on error rows carry memory_success = 1 on some).
    return "SUM(p.stage NOT IN ('needs_answer_stage', 'ambiguous')), SUM(p.memory_success AND p.stage != 'error'), "
           "SUM(p.stage = 'not_stored'), SUM(p.stage = 'summary_error'), "
           "SUM(p.stage = 'not_retrieved'), SUM(p.stage = 'error'), SUM(p.stage = 'needs_answer_stage'), "
           "SUM(p.stage = 'correct'), SUM(p.stage = 'reasoning_error'), SUM(p.answer_correct IS NOT NULL), "
           "SUM(p.kind = 'abstain' AND p.stage IN ('correct', 'reasoning_error')), "
           "AVG(p.retrieved_tokens), SUM(p.stage = 'unverified'), SUM(p.stage = 'ambiguous'), "
           "SUM(" + incomplete + ")";
}

void read_stage_sums(Statement& s, int at, SummaryRow& r) {
    r.graded = s.column_int(at);
    r.success = s.column_int(at + 1);
    r.not_stored = s.column_int(at + 2);
    r.summary_error = s.column_int(at + 3);
    r.not_retrieved = s.column_int(at + 4);
    r.errors = s.column_int(at + 5);
    r.needs_answer_stage = s.column_int(at + 6);
    r.correct = s.column_int(at + 7);
    r.reasoning_error = s.column_int(at + 8);
    r.answered = s.column_int(at + 9);
    r.abstain_graded = s.column_int(at + 10);
    if (!s.column_is_null(at + 11)) r.retrieved_tokens = s.column_double(at + 11);
    r.unverified = s.column_int(at + 12);
    r.ambiguous = s.column_int(at + 13);
    r.incomplete = s.column_int(at + 14);
}

}  // namespace

std::string ResultsDb::leaky_filter(const std::string& probe, const std::string& scenario) const {
    return m_exclude_leaky ? "AND NOT " + answered_without_memory_sql(probe, scenario) + " " : std::string();
}

Result<std::vector<SummaryRow>> ResultsDb::summary(const std::vector<std::int64_t>& run_ids) {
    std::vector<SummaryRow> out;
    MF_TRY_ASSIGN(Statement s, m_db.prepare(
        "SELECT r.system_spec, p.dataset, p.k, " +
        stage_sums_sql("EXISTS (SELECT 1 FROM probe_texts t, json_each(t.probe_json, '$.evidence') e "
                       "WHERE t.run_id = p.run_id AND t.scenario_id = p.scenario_id AND t.probe_id = p.probe_id "
                       "AND json_valid(t.probe_json) AND json_extract(e.value, '$.details_complete') = 0)") +
        " FROM probe_results p JOIN runs r ON r.id = p.run_id "
        "JOIN run_scenarios sc ON sc.run_id = p.run_id AND sc.scenario_id = p.scenario_id "
        "WHERE p.run_id = ? " + leaky_filter("p", "sc") + "GROUP BY p.dataset, p.k ORDER BY MIN(sc.rowid), p.k"));
    for (std::int64_t run_id : run_ids) {
        s.reset();
        s.bind(1, run_id);
        MF_TRY(s.for_each_row([&] {
            SummaryRow r;
            r.run_id = run_id;
            r.system_spec = s.column_text(0);
            r.dataset = s.column_text(1);
            r.k = static_cast<int>(s.column_int(2));
            read_stage_sums(s, 3, r);
            out.push_back(std::move(r));
        }));
    }
    return out;
}

Result<LatencySummary> ResultsDb::latency_query(const std::string& sql, std::int64_t run_id,
                                                const std::string& dataset) {
    MF_TRY_ASSIGN(Statement s, m_db.prepare(sql));
    s.bind(1, run_id).bind(2, dataset);
    std::vector<std::int64_t> values;
    MF_TRY(s.for_each_row([&] {
        values.push_back(s.column_int(0));
    }));
    LatencySummary out;
    out.count = static_cast<std::int64_t>(values.size());
    if (values.empty()) return out;
    std::sort(values.begin(), values.end());
    out.p50_ms = quantile_ms(values, 0.50);
    out.p99_ms = quantile_ms(values, 0.99);
    return out;
}

Result<LatencySummary> ResultsDb::store_latency(std::int64_t run_id, const std::string& dataset) {
    return latency_query(
        "SELECT s.micros FROM stored_sessions s JOIN run_scenarios sc ON sc.run_id = s.run_id "
        "AND sc.scenario_id = s.scenario_id WHERE s.run_id = ? AND sc.dataset = ?",
        run_id, dataset);
}

Result<LatencySummary> ResultsDb::retrieve_latency(std::int64_t run_id, const std::string& dataset) {
    return latency_query(
        "SELECT retrieve_micros FROM probe_results WHERE run_id = ? AND dataset = ? AND stage != 'error'",
        run_id, dataset);
}


namespace {

// 1 when `x` (lower-cased, leading blanks dropped) opens on the word yes, 0 on the word no, else NULL.
std::string polarity_sql(const std::string& x) {
    const std::string v = "lower(ltrim(" + x + "))";
    return "(CASE WHEN " + v + " = 'yes' OR " + v + " GLOB 'yes[^a-z]*' THEN 1 WHEN " + v + " = 'no' OR " + v +
           " GLOB 'no[^a-z]*' THEN 0 END)";
}

}  // namespace

Result<std::vector<SliceCountsRow>> slice_counts(ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    const std::string answer = polarity_sql("p.answer");
    const std::string reference = polarity_sql("json_extract(p.pj, '$.answer')");
    const std::string read_by_polarity = "(p.answer_correct IS NULL AND p.kind = 'yes_no' AND " + answer +
                                         " IS NOT NULL AND " + reference + " IS NOT NULL)";
    const std::string sql =
        "SELECT r.system_spec, p.dataset, p.k, p.kind, "
        "  json_extract(p.pj, '$.meta.condition_met'), "
        "  CASE WHEN p.kind = 'yes_no' THEN " + reference + " END, "
        "  json_extract(p.pj, '$.meta.condition_type'), json_extract(p.pj, '$.meta.n'), "
        "  json_extract(p.pj, '$.meta.hops'), json_extract(p.pj, '$.meta.voice'), "
        "  json_extract(p.pj, '$.meta.is_misleading'), "
        "  (COALESCE(json_extract(p.pj, '$.meta.ambiguous'), 0) != 0 OR p.stage = 'ambiguous'), "
        "  COALESCE(json_array_length(p.pj, '$.evidence'), 0), "
        // A published benchmark's own label: LoCoMo's "1 multi-hop", LongMemEval's question type.
        "  CASE WHEN json_extract(p.pj, '$.meta.category_name') IS NOT NULL "
        "       THEN json_extract(p.pj, '$.meta.category') || ' ' || json_extract(p.pj, '$.meta.category_name') "
        "       ELSE json_extract(p.pj, '$.meta.question_type') END, "
        // The counts of ResultsDb::summary, in its order.
        + stage_sums_sql("EXISTS (SELECT 1 FROM json_each(p.pj, '$.evidence') e "
                         "WHERE json_extract(e.value, '$.details_complete') = 0)") + ", "
        "  SUM(p.answer_correct IS NOT NULL OR " + read_by_polarity + "), "
        "  SUM(CASE WHEN p.answer_correct IS NOT NULL THEN p.answer_correct = 1 "
        "           WHEN " + read_by_polarity + " THEN " + answer + " = " + reference + " ELSE 0 END) "
        "FROM (SELECT q.*, CASE WHEN json_valid(t.probe_json) THEN t.probe_json END AS pj "
        "      FROM probe_results q LEFT JOIN probe_texts t ON t.run_id = q.run_id "
        "      AND t.scenario_id = q.scenario_id AND t.probe_id = q.probe_id WHERE q.run_id = ?) p "
        "JOIN runs r ON r.id = p.run_id "
        "JOIN run_scenarios sc ON sc.run_id = p.run_id AND sc.scenario_id = p.scenario_id "
        "WHERE 1 " + db.leaky_filter("p", "sc") +
        "GROUP BY p.dataset, p.k, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 ORDER BY MIN(sc.rowid), p.k";
    MF_TRY_ASSIGN(Statement s, db.database().prepare(sql));
    std::vector<SliceCountsRow> out;
    for (std::int64_t run_id : run_ids) {
        s.reset();
        s.bind(1, run_id);
        MF_TRY(s.for_each_row([&] {
            SliceCountsRow row;
            SummaryRow& r = row.counts;
            r.run_id = run_id;
            r.system_spec = s.column_text(0);
            r.dataset = s.column_text(1);
            r.k = static_cast<int>(s.column_int(2));
            ProbeLabelFields& l = row.labels;
            l.kind = s.column_text(3);
            if (!s.column_is_null(4)) l.condition_met = s.column_text(4);
            if (!s.column_is_null(5)) l.reference_yes = s.column_int(5) != 0;
            if (!s.column_is_null(6)) l.condition_type = s.column_text(6);
            if (!s.column_is_null(7)) l.n = s.column_int(7);
            if (!s.column_is_null(8)) l.hops = s.column_int(8);
            if (!s.column_is_null(9)) l.voice = s.column_text(9);
            if (!s.column_is_null(10)) l.is_misleading = s.column_int(10) != 0;
            l.ambiguous = s.column_int(11) != 0;
            l.evidence = s.column_int(12);
            if (!s.column_is_null(13)) l.benchmark_type = s.column_text(13);
            read_stage_sums(s, 14, r);
            row.answers_read = s.column_int(29);
            row.answers_right = s.column_int(30);
            out.push_back(std::move(row));
        }));
    }
    return out;
}


Result<std::vector<ProbeOutcomeRow>> probe_outcomes(ResultsDb& db, std::int64_t run_id) {
    MF_TRY_ASSIGN(Statement s, db.database().prepare(
        "SELECT dataset, scenario_id, probe_id, k, kind, stage, memory_success FROM probe_results "
        "WHERE run_id = ? ORDER BY dataset, scenario_id, probe_id, k"));
    s.bind(1, run_id);
    std::vector<ProbeOutcomeRow> out;
    MF_TRY(s.for_each_row([&] {
        ProbeOutcomeRow r;
        r.dataset = s.column_text(0);
        r.scenario_id = s.column_text(1);
        r.probe_id = s.column_text(2);
        r.k = static_cast<int>(s.column_int(3));
        r.kind = s.column_text(4);
        r.stage = s.column_text(5);
        r.memory_success = s.column_int(6) != 0;
        out.push_back(std::move(r));
    }));
    return out;
}

}  // namespace memfail::store

// SPDX-License-Identifier: MIT
// SQLite RAII wrapper.
#include <memfail/store/database.hpp>

#include <sqlite3.h>

#include <string>

#include <sys/stat.h>
#include <unistd.h>

namespace memfail::store {

namespace {
Error db_error(sqlite3* db, std::string_view what) {
    return make_error(ErrorKind::database,
                      std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}
}  // namespace

void Database::Closer::operator()(sqlite3* db) const {
    if (!db) return;
    // A read-only connection to a WAL database leaves the -wal and -shm files it made for reading
    // behind (it may not checkpoint). When the -wal is empty, a plain read-write connection that
    // only reads removes both as SQLite always does for the last connection, and only when it is
    // the last one: the database file itself is not written (there is nothing to checkpoint).
    std::string tidy;
    if (const char* name = sqlite3_db_filename(db, "main");
        name && *name && sqlite3_db_readonly(db, "main") == 1)
        tidy = name;
    sqlite3_close_v2(db);
    if (tidy.empty()) return;
    struct stat wal{};
    if (::stat((tidy + "-wal").c_str(), &wal) != 0 || wal.st_size != 0 || ::access(tidy.c_str(), W_OK) != 0) return;
    sqlite3* rw = nullptr;
    if (sqlite3_open_v2(tidy.c_str(), &rw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) == SQLITE_OK)
        sqlite3_exec(rw, "PRAGMA query_only=1; SELECT COUNT(*) FROM sqlite_master", nullptr, nullptr, nullptr);
    sqlite3_close_v2(rw);
}
void Statement::Finalizer::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

Result<Database> Database::open(const std::string& path) {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                   nullptr);
    if (rc != SQLITE_OK) {
        Error e = db_error(raw, "cannot open database");
        e.where = path;
        sqlite3_close_v2(raw);
        return e;
    }
    Database db(raw, path);
    sqlite3_busy_timeout(raw, 10000);
    if (path != ":memory:") MF_TRY(db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"));
    MF_TRY(db.exec("PRAGMA foreign_keys=ON;"));
    return db;
}

namespace {

// `path` as an SQLite URI ("file:" with '%', '?' and '#' percent-encoded) that opens it immutable.
std::string immutable_uri(const std::string& path) {
    std::string out = "file:";
    for (char c : path) {
        if (c == '%') out += "%25";
        else if (c == '?') out += "%3f";
        else if (c == '#') out += "%23";
        else out += c;
    }
    return out + "?immutable=1";
}

}  // namespace

Result<Database> Database::open_read_only(const std::string& path) {
    // Reading a WAL database needs its -wal and -shm files, which SQLite creates beside it. Where
    // that is impossible (a directory or mount we cannot write) and no -wal exists, nothing is
    // being written (a writer would need those files too), so the file is read as immutable.
    for (const bool immutable : {false, true}) {
        if (immutable) {
            struct stat wal{};
            if (::stat((path + "-wal").c_str(), &wal) == 0) break;
        }
        sqlite3* raw = nullptr;
        const std::string name = immutable ? immutable_uri(path) : path;
        const int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0);
        if (sqlite3_open_v2(name.c_str(), &raw, flags, nullptr) != SQLITE_OK) {
            Error e = db_error(raw, "cannot open database for reading");
            e.where = path;
            sqlite3_close_v2(raw);
            return e;
        }
        Database db(raw, path);
        sqlite3_busy_timeout(raw, 10000);
        // Reading the schema finds a file that is not a database now rather than at the first query.
        sqlite3_stmt* probe = nullptr;
        int rc = sqlite3_prepare_v2(raw, "SELECT COUNT(*) FROM sqlite_master", -1, &probe, nullptr);
        if (rc == SQLITE_OK) rc = sqlite3_step(probe);
        sqlite3_finalize(probe);
        if (rc == SQLITE_ROW) return db;
        const int primary = rc & 0xff;
        if (!immutable && (primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN)) continue;
        Error e = db_error(raw, "cannot read database");
        e.where = path;
        return e;
    }
    return make_error(ErrorKind::database,
                      "cannot read database: its -wal file exists but cannot be opened (no permission to read it)", path);
}

Database::~Database() = default;

Result<void> Database::exec(std::string_view sql) {
    char* message = nullptr;
    const std::string text(sql);
    if (sqlite3_exec(m_db.get(), text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
        std::string detail = message ? message : "unknown error";
        sqlite3_free(message);
        return make_error(ErrorKind::database, detail, m_path);
    }
    return {};
}

Result<Statement> Database::prepare(std::string_view sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(m_db.get(), sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) !=
        SQLITE_OK) {
        Error e = db_error(m_db.get(), "cannot prepare statement");
        e.where = m_path;
        return e;
    }
    return Statement(stmt, m_db.get());
}

std::int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(m_db.get()); }
int Database::changes() const { return sqlite3_changes(m_db.get()); }

Result<int> Database::user_version() {
    MF_TRY_ASSIGN(Statement stmt, prepare("PRAGMA user_version"));
    MF_TRY_ASSIGN(bool row, stmt.step());
    return row ? static_cast<int>(stmt.column_int(0)) : 0;
}

Result<void> Database::set_user_version(int version) {
    return exec("PRAGMA user_version=" + std::to_string(version));
}

Statement::~Statement() = default;

Statement& Statement::bind(int index, std::int64_t value) {
    sqlite3_bind_int64(m_stmt.get(), index, value);
    return *this;
}
Statement& Statement::bind(int index, double value) {
    sqlite3_bind_double(m_stmt.get(), index, value);
    return *this;
}
Statement& Statement::bind(int index, std::string_view value) {
    sqlite3_bind_text64(m_stmt.get(), index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    return *this;
}
Statement& Statement::bind_blob(int index, const void* data, std::size_t size) {
    sqlite3_bind_blob64(m_stmt.get(), index, data, size, SQLITE_TRANSIENT);
    return *this;
}
Statement& Statement::bind_null(int index) {
    sqlite3_bind_null(m_stmt.get(), index);
    return *this;
}

Result<bool> Statement::step() {
    const int rc = sqlite3_step(m_stmt.get());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return db_error(m_db, "statement failed");
}

Result<void> Statement::run() {
    while (true) {
        MF_TRY_ASSIGN(bool row, step());
        if (!row) break;
    }
    reset();
    return {};
}

void Statement::reset() {
    sqlite3_reset(m_stmt.get());
    sqlite3_clear_bindings(m_stmt.get());
}

std::int64_t Statement::column_int(int index) const { return sqlite3_column_int64(m_stmt.get(), index); }
double Statement::column_double(int index) const { return sqlite3_column_double(m_stmt.get(), index); }
std::string Statement::column_text(int index) const { return std::string(column_text_view(index)); }
std::string_view Statement::column_text_view(int index) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt.get(), index));
    return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(m_stmt.get(), index)))
             : std::string_view{};
}
std::string_view Statement::column_blob(int index) const {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(m_stmt.get(), index));
    return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(m_stmt.get(), index)))
             : std::string_view{};
}
bool Statement::column_is_null(int index) const {
    return sqlite3_column_type(m_stmt.get(), index) == SQLITE_NULL;
}

Result<Transaction> Transaction::begin(Database& db) {
    MF_TRY(db.exec("BEGIN IMMEDIATE"));
    return Transaction(&db);
}

Transaction::~Transaction() {
    if (m_db) (void)m_db->exec("ROLLBACK");
}

Result<void> Transaction::commit() {
    MF_ASSERT(m_db, "commit on a finished transaction");
    MF_TRY(m_db->exec("COMMIT"));
    m_db = nullptr;
    return {};
}

Result<Statement*> CachedStatement::get(Database& db) {
    if (!m_statement) {
        MF_TRY_ASSIGN(Statement statement, db.prepare(m_sql));
        m_statement.emplace(std::move(statement));
    }
    m_statement->reset();  // a statement left mid-way by an earlier error starts clean
    return &*m_statement;
}

}  // namespace memfail::store

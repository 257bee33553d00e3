// SPDX-License-Identifier: MIT
// RAII over sqlite3: a connection, prepared statements and transactions. Every failure is a
// Result with ErrorKind::database naming the statement's purpose.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <memfail/core/error.hpp>

struct sqlite3;
struct sqlite3_stmt;

namespace memfail::store {

class Statement;

class Database {
public:
    // Opens (creating when missing) the database at `path`; ":memory:" for a private in-memory one.
    // Turns on WAL, foreign keys and a busy timeout so a second reader never fails at once.
    static Result<Database> open(const std::string& path);
    // Opens the existing database at `path` for reading only (SQLITE_OPEN_READONLY): nothing is
    // created, no PRAGMA changes the file, and a file without write permission opens. Temporary
    // objects (CREATE TEMP ...) can still be made; they live in memory with the connection. When
    // the connection closes, the empty -wal and -shm files SQLite made for reading a WAL database
    // are removed again (only when no other connection uses them). Errors: database (missing or
    // unreadable file, or not an SQLite database).
    static Result<Database> open_read_only(const std::string& path);

    Database(Database&&) noexcept = default;
    Database& operator=(Database&&) noexcept = default;
    ~Database();

    // Runs one or more statements with no results.
    Result<void> exec(std::string_view sql);
    Result<Statement> prepare(std::string_view sql);
    std::int64_t last_insert_rowid() const;
    int changes() const;
    const std::string& path() const { return m_path; }

    // PRAGMA user_version: the schema's format version.
    Result<int> user_version();
    Result<void> set_user_version(int version);

    sqlite3* raw() const { return m_db.get(); }

private:
    struct Closer {
        void operator()(sqlite3* db) const;
    };
    Database(sqlite3* db, std::string path) : m_db(db), m_path(std::move(path)) {}
    std::unique_ptr<sqlite3, Closer> m_db;
    std::string m_path;
};

// A prepared statement. Bind with 1-based indices, step, read columns with 0-based indices.
class Statement {
public:
    Statement(Statement&&) noexcept = default;
    Statement& operator=(Statement&&) noexcept = default;
    ~Statement();

    Statement& bind(int index, std::int64_t value);
    Statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
    Statement& bind(int index, double value);
    Statement& bind(int index, std::string_view value);
    Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
    Statement& bind(int index, const std::string& value) { return bind(index, std::string_view(value)); }
    Statement& bind_blob(int index, const void* data, std::size_t size);
    Statement& bind_null(int index);

    // Advances: true when a row is ready, false when done.
    Result<bool> step();
    // Steps to completion, for statements without rows.
    Result<void> run();
    // Steps through every row, calling `on_row()` while the statement sits on it; stops at the
    // first error.
    template <class OnRow>
    Result<void> for_each_row(OnRow&& on_row) {
        while (true) {
            MF_TRY_ASSIGN(bool row, step());
            if (!row) return {};
            on_row();
        }
    }
    // Resets for re-use with new bindings (bindings are cleared).
    void reset();

    std::int64_t column_int(int index) const;
    double column_double(int index) const;
    std::string column_text(int index) const;
    std::string_view column_text_view(int index) const;  // valid until the next step/reset
    std::string_view column_blob(int index) const;       // valid until the next step/reset
    bool column_is_null(int index) const;

private:
    friend class Database;
    struct Finalizer {
        void operator()(sqlite3_stmt* stmt) const;
    };
    Statement(sqlite3_stmt* stmt, sqlite3* db) : m_stmt(stmt), m_db(db) {}
    std::unique_ptr<sqlite3_stmt, Finalizer> m_stmt;
    sqlite3* m_db;
};

// A statement prepared on first use and reset on every later one: for writes made once per row,
// preparing per call cost more than the inserts it ran.
class CachedStatement {
public:
    explicit CachedStatement(const char* sql) : m_sql(sql) {}
    // The statement, reset and with no bindings. Valid until the database closes.
    Result<Statement*> get(Database& db);

private:
    const char* m_sql;
    std::optional<Statement> m_statement;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() succeeded.
class Transaction {
public:
    static Result<Transaction> begin(Database& db);
    Transaction(Transaction&& other) noexcept : m_db(other.m_db) { other.m_db = nullptr; }
    Transaction& operator=(Transaction&&) = delete;
    ~Transaction();
    Result<void> commit();

private:
    explicit Transaction(Database* db) : m_db(db) {}
    Database* m_db;
};

}  // namespace memfail::store

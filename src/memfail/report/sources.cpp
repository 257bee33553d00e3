// SPDX-License-Identifier: MIT
// Several results files merged into one in-memory results database for one report.
#include <memfail/report/sources.hpp>

#include <memfail/report/run_report.hpp>

#include <filesystem>
#include <set>

namespace memfail::report {

namespace {

constexpr const char* k_origins_table = "report_run_origins";

std::string quote(const std::string& name) {
    std::string out = "\"";
    for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

// Errors from a file carry its path, whatever layer they came from.
Error in_file(Error error, const std::string& path) {
    if (error.where.empty() || error.where == ":memory:") error.where = path;
    return error;
}

struct CopyPlan {
    std::string table;
    std::string run_column;            // "id" for runs, else "run_id"
    std::vector<std::string> columns;  // copied as they are (the run column excluded)
};

// Every table of the results schema that holds rows of a run, with its columns.
Result<std::vector<CopyPlan>> copy_plans(store::Database& merged) {
    MF_TRY_ASSIGN(store::Statement tables, merged.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != ?1 ORDER BY rowid"));
    tables.bind(1, k_origins_table);
    std::vector<std::string> names;
    MF_TRY(tables.for_each_row([&] { names.push_back(tables.column_text(0)); }));
    std::vector<CopyPlan> plans;
    for (const auto& name : names) {
        MF_TRY_ASSIGN(store::Statement info, merged.prepare("SELECT name, pk, type FROM pragma_table_info(?1)"));
        info.bind(1, name);
        CopyPlan plan;
        plan.table = name;
        MF_TRY(info.for_each_row([&] {
            const std::string column = info.column_text(0);
            const bool rowid_key = info.column_int(1) == 1 && info.column_text(2) == "INTEGER";
            if ((name == "runs" && column == "id") || column == "run_id") plan.run_column = column;
            else if (!rowid_key) plan.columns.push_back(column);  // another table's own row id is assigned anew
        }));
        if (!plan.run_column.empty()) plans.push_back(std::move(plan));
    }
    return plans;
}

// Copies every row of `run` in `plan.table` from `source` into `merged` as run `new_id`.
Result<void> copy_rows(store::Database& source, store::Database& merged, const CopyPlan& plan, std::int64_t run,
                       std::int64_t new_id) {
    std::string select = "SELECT ";
    std::string insert = "INSERT INTO " + quote(plan.table) + "(" + quote(plan.run_column);
    std::string values = "?1";
    for (std::size_t i = 0; i < plan.columns.size(); ++i) {
        select += (i ? ", typeof(" : "typeof(") + quote(plan.columns[i]) + "), " + quote(plan.columns[i]);
        insert += ", " + quote(plan.columns[i]);
        values += ", ?" + std::to_string(i + 2);
    }
    if (plan.columns.empty()) select += "1";
    select += " FROM " + quote(plan.table) + " WHERE " + quote(plan.run_column) + " = ?1 ORDER BY rowid";
    insert += ") VALUES(" + values + ")";
    MF_TRY_ASSIGN(store::Statement read, source.prepare(select));
    MF_TRY_ASSIGN(store::Statement write, merged.prepare(insert));
    read.bind(1, run);
    while (true) {
        MF_TRY_ASSIGN(bool row, read.step());
        if (!row) return {};
        write.reset();
        write.bind(1, new_id);
        for (std::size_t i = 0; i < plan.columns.size(); ++i) {
            const int at = static_cast<int>(2 * i), index = static_cast<int>(i + 2);
            const std::string_view type = read.column_text_view(at);
            if (type == "integer") write.bind(index, read.column_int(at + 1));
            else if (type == "real") write.bind(index, read.column_double(at + 1));
            else if (type == "text") write.bind(index, read.column_text(at + 1));
            else if (type == "blob") {
                const std::string_view blob = read.column_blob(at + 1);
                write.bind_blob(index, blob.data(), blob.size());
            } else write.bind_null(index);
        }
        MF_TRY(write.run());
    }
}

}  // namespace

std::vector<std::string> display_names(const std::vector<std::string>& paths) {
    std::map<std::string, int> count;
    for (const auto& p : paths) ++count[std::filesystem::path(p).filename().string()];
    std::vector<std::string> out;
    for (const auto& p : paths) {
        const std::string name = std::filesystem::path(p).filename().string();
        out.push_back(count[name] > 1 || name.empty() ? p : name);
    }
    return out;
}

Result<MergedResults> merge_results(const std::vector<ReportInput>& inputs) {
    std::vector<std::string> paths;
    std::set<std::string> seen;
    for (const auto& input : inputs) {
        std::error_code ec;
        const auto canonical = std::filesystem::weakly_canonical(input.path, ec);
        if (!seen.insert(ec ? input.path : canonical.string()).second)
            return make_error(ErrorKind::invalid_input, "this results file is given twice", input.path);
        paths.push_back(input.path);
    }
    const std::vector<std::string> names = display_names(paths);
    MF_TRY_ASSIGN(store::ResultsDb merged, store::ResultsDb::open(":memory:"));
    store::Database& target = merged.database();
    MF_TRY(target.exec(std::string("CREATE TABLE ") + k_origins_table +
                       "(run_id INTEGER PRIMARY KEY, file TEXT NOT NULL, path TEXT NOT NULL, source_id INTEGER NOT NULL)"));
    MF_TRY_ASSIGN(auto plans, copy_plans(target));
    MergedResults out{std::move(merged), {}};
    std::int64_t next_id = 1;
    for (std::size_t f = 0; f < inputs.size(); ++f) {
        const std::string& path = inputs[f].path;
        auto opened = store::ResultsDb::open_read_only(path);
        if (!opened) return in_file(opened.error(), path);
        auto ids = select_runs(*opened, inputs[f].runs);
        if (!ids) return in_file(ids.error(), path);
        MF_TRY_ASSIGN(auto transaction, store::Transaction::begin(out.db.database()));
        for (std::int64_t id : *ids) {
            const std::int64_t new_id = next_id++;
            for (const auto& plan : plans)
                if (auto copied = copy_rows(opened->database(), out.db.database(), plan, id, new_id); !copied)
                    return in_file(copied.error(), path);
            MF_TRY_ASSIGN(store::Statement origin, out.db.database().prepare(
                std::string("INSERT INTO ") + k_origins_table + "(run_id, file, path, source_id) VALUES(?, ?, ?, ?)"));
            origin.bind(1, new_id).bind(2, names[f]).bind(3, path).bind(4, id);
            MF_TRY(origin.run());
            out.run_ids.push_back(new_id);
        }
        MF_TRY(transaction.commit());
    }
    return out;
}

Result<std::map<std::int64_t, RunOrigin>> run_origins(store::ResultsDb& db) {
    std::map<std::int64_t, RunOrigin> out;
    MF_TRY_ASSIGN(store::Statement exists, db.database().prepare(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1"));
    exists.bind(1, k_origins_table);
    MF_TRY_ASSIGN(bool row, exists.step());
    if (!row || exists.column_int(0) == 0) return out;
    MF_TRY_ASSIGN(store::Statement s, db.database().prepare(std::string("SELECT run_id, file, path, source_id FROM ") +
                                                            k_origins_table));
    MF_TRY(s.for_each_row([&] {
        RunOrigin o;
        o.file = s.column_text(1);
        o.path = s.column_text(2);
        o.id = s.column_int(3);
        o.name = o.file + "#" + std::to_string(o.id);
        out.emplace(s.column_int(0), std::move(o));
    }));
    return out;
}

Result<std::map<std::int64_t, std::string>> run_names(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto origins, run_origins(db));
    std::map<std::int64_t, std::string> out;
    for (std::int64_t id : run_ids) {
        const auto it = origins.find(id);
        out[id] = it == origins.end() ? std::to_string(id) : it->second.name;
    }
    return out;
}

}  // namespace memfail::report

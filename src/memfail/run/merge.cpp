// SPDX-License-Identifier: MIT
#include <memfail/run/merge.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <map>
#include <set>

#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <memfail/llm/cached_client.hpp>
#include <memfail/llm/llm_stack.hpp>
#include <memfail/store/results_db.hpp>

namespace memfail::run {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Part {
    std::string file;       // the input it came from
    store::RunRecord run;   // its record there
    json config;            // config_json, parsed
    int index = 0, count = 0;
    std::vector<std::string> scenarios;
    std::vector<std::size_t> positions;  // each scenario's place in the whole run
};

std::string short_hash(const std::string& hash) { return hash.substr(0, std::min<std::size_t>(hash.size(), 12)); }

// SQLite's full integrity check of `file` (every page, record and index; quick_check skips the
// indexes' agreement with their tables). Refused naming the file and SQLite's first complaints.
Result<void> check_sqlite(const std::string& file, const std::string& what) {
    auto damaged = [&](const std::string& detail) {
        return make_error(ErrorKind::invalid_input,
                          what + " is damaged: " + detail + "; nothing was merged (run that part again, or restore it)",
                          file);
    };
    auto db = store::Database::open_read_only(file);
    if (!db) return damaged("it cannot be read as SQLite (" + db.error().message + ")");
    auto check = db->prepare("PRAGMA integrity_check(5)");
    if (!check) return damaged("SQLite's integrity check cannot run (" + check.error().message + ")");
    std::vector<std::string> found;
    auto ran = check->for_each_row([&] { found.push_back(check->column_text(0)); });
    if (!ran) return damaged("SQLite's integrity check failed (" + ran.error().message + ")");
    if (found.size() == 1 && found.front() == "ok") return {};
    std::string said;
    for (const auto& line : found) said += (said.empty() ? "" : "; ") + line;
    return damaged("SQLite's integrity check found: " + (said.empty() ? std::string("no answer") : said));
}

// Every check of a part before anything is read from it: SQLite's integrity check, a memfail
// results file of a schema this build knows, and each run's rows against the integrity record its
// run wrote when it finished. A run finished before records existed is merged, noted as unverified.
Result<void> check_part(const std::string& file, std::vector<std::string>& notes) {
    MF_TRY(check_sqlite(file, "this part"));
    auto damaged = [&](const std::string& detail) {
        return make_error(ErrorKind::invalid_input,
                          "this part is damaged: " + detail + "; nothing was merged (run that part again, or restore it)",
                          file);
    };
    {
        MF_TRY_ASSIGN(store::Database raw, store::Database::open_read_only(file));
        MF_TRY_ASSIGN(const int version, raw.user_version());
        if (version < 1 || version > store::k_results_schema_version)
            return make_error(ErrorKind::invalid_input,
                              "not a memfail results file of a known schema version (it has version " +
                                  std::to_string(version) + "; this build reads 1 to " +
                                  std::to_string(store::k_results_schema_version) + ")",
                              file);
    }
    MF_TRY_ASSIGN(store::ResultsDb db, store::ResultsDb::open_read_only(file));
    MF_TRY_ASSIGN(auto runs, db.runs());
    std::set<std::int64_t> ids;
    std::vector<std::int64_t> unverified;
    for (const auto& run : runs) {
        ids.insert(run.id);
        MF_TRY_ASSIGN(auto problems, db.verify_run(run.id));
        if (!problems) {
            if (run.status == "finished") unverified.push_back(run.id);
            continue;
        }
        if (!problems->empty()) {
            std::string said;
            for (const auto& p : *problems) said += (said.empty() ? "" : "; ") + p;
            return damaged("run " + std::to_string(run.id) + " no longer matches the integrity record written when "
                                                               "it finished: " + said);
        }
    }
    // A record of a run the file does not have: a run's id or its record's changed.
    MF_TRY_ASSIGN(store::Statement sealed, db.database().prepare("SELECT DISTINCT run_id FROM run_integrity ORDER BY 1"));
    std::vector<std::int64_t> orphans;
    MF_TRY(sealed.for_each_row([&] {
        if (!ids.count(sealed.column_int(0))) orphans.push_back(sealed.column_int(0));
    }));
    if (!orphans.empty())
        return damaged("it holds an integrity record for run " + std::to_string(orphans.front()) +
                       ", which its runs table lacks");
    for (const auto id : unverified)
        notes.push_back(file + ": run " + std::to_string(id) +
                        " is unverified (it finished before memfail wrote integrity records; SQLite's integrity "
                        "check passed)");
    return {};
}

Result<std::vector<Part>> read_parts(const std::string& file) {
    MF_TRY_ASSIGN(store::ResultsDb db, store::ResultsDb::open_read_only(file));
    MF_TRY_ASSIGN(auto runs, db.runs());
    if (runs.empty()) return make_error(ErrorKind::invalid_input, "holds no run", file);
    std::vector<Part> parts;
    for (auto& run : runs) {
        Part p;
        p.file = file;
        p.config = json::parse(run.config_json, nullptr, /*allow_exceptions=*/false);
        const std::string name = "run " + std::to_string(run.id) + " (" + run.system_spec + ")";
        const json* shard = p.config.is_object() && p.config.contains("shard") ? &p.config["shard"] : nullptr;
        if (!shard || !shard->is_object() || !p.config.contains("unsharded_hash") ||
            !p.config["unsharded_hash"].is_string())
            return make_error(ErrorKind::invalid_input,
                              name + " is not a shard (it was made without --shard): merge joins the parts of a "
                                     "sharded run",
                              file);
        p.index = shard->value("index", 0);
        p.count = shard->value("count", 0);
        if (p.index < 1 || p.count < p.index || !shard->contains("scenarios") || !(*shard)["scenarios"].is_array())
            return make_error(ErrorKind::invalid_input, name + " has an unreadable shard record", file);
        for (const auto& id : (*shard)["scenarios"])
            if (id.is_string()) p.scenarios.push_back(id.get<std::string>());
        if (const auto it = shard->find("positions"); it != shard->end() && it->is_array())
            for (const auto& at : *it)
                if (at.is_number_unsigned()) p.positions.push_back(at.get<std::size_t>());
        if (p.positions.size() != p.scenarios.size())
            return make_error(ErrorKind::invalid_input, name + " has an unreadable shard record", file);
        if (run.status != "finished")
            return make_error(ErrorKind::invalid_input,
                              name + ", shard " + std::to_string(p.index) + "/" + std::to_string(p.count) + ", is " +
                                  run.status +
                                  ": finish it first (the same command with --resume), then merge",
                              file);
        p.run = std::move(run);
        parts.push_back(std::move(p));
    }
    return parts;
}

// The columns of `table` in the attached database `schema`, in order.
Result<std::vector<std::string>> columns(store::Database& db, const std::string& schema, const std::string& table) {
    MF_TRY_ASSIGN(store::Statement s, db.prepare("SELECT name FROM pragma_table_info(?, ?)"));
    s.bind(1, table).bind(2, schema);
    std::vector<std::string> names;
    MF_TRY(s.for_each_row([&] { names.push_back(s.column_text(0)); }));
    return names;
}

// One table's copy from an attached part into main: the INSERT ... SELECT over the columns both
// have (?1 the new run id, ?2 the part's run id, ?3 the scenario for tables with a scenario_id).
struct TableCopy {
    std::string table;
    std::string sql;
    bool by_scenario = false;
};

// The copies for every table with a run_id column except runs and run_writers (llm_calls gets new
// ids), worked out once per part from the schemas of main and the attached `src`.
Result<std::vector<TableCopy>> copy_plan(store::Database& db) {
    std::vector<std::string> tables;
    {
        MF_TRY_ASSIGN(store::Statement s, db.prepare("SELECT name FROM main.sqlite_master WHERE type = 'table' ORDER BY name"));
        MF_TRY(s.for_each_row([&] { tables.push_back(s.column_text(0)); }));
    }
    std::vector<TableCopy> plan;
    for (const auto& table : tables) {
        // run_integrity: each part's record is of its own rows; the merged run gets its own.
        if (table == "runs" || table == "run_writers" || table == "run_integrity") continue;
        MF_TRY_ASSIGN(auto ours, columns(db, "main", table));
        MF_TRY_ASSIGN(auto theirs, columns(db, "src", table));
        if (std::find(ours.begin(), ours.end(), "run_id") == ours.end()) continue;
        if (theirs.empty()) continue;  // an older file without this table has no rows for it
        TableCopy copy;
        copy.table = table;
        copy.by_scenario = std::find(ours.begin(), ours.end(), "scenario_id") != ours.end();
        std::string names, values;
        for (const auto& c : ours) {
            if (table == "llm_calls" && c == "id") continue;
            if (std::find(theirs.begin(), theirs.end(), c) == theirs.end()) continue;  // keeps its default
            if (!names.empty()) names += ", ", values += ", ";
            names += "\"" + c + "\"";
            values += c == "run_id" ? std::string("?1") : "\"" + c + "\"";
        }
        copy.sql = "INSERT INTO main.\"" + table + "\"(" + names + ") SELECT " + values + " FROM src.\"" + table +
                   "\" WHERE run_id = ?2" + (copy.by_scenario ? " AND scenario_id = ?3" : "");
        plan.push_back(std::move(copy));
    }
    return plan;
}

// Copies the rows of run `from` in the attached `src` into run `to` of main along `plan`. With a
// `scenario`, only the tables with a scenario_id column and only that scenario's rows; without, only
// the others (llm_calls).
Result<std::size_t> copy_run(store::Database& db, const std::vector<TableCopy>& plan, std::int64_t from,
                             std::int64_t to, const std::string* scenario, std::size_t& probe_rows) {
    std::size_t rows = 0;
    for (const auto& copy : plan) {
        if (copy.by_scenario != (scenario != nullptr)) continue;
        MF_TRY_ASSIGN(store::Statement s, db.prepare(copy.sql));
        s.bind(1, to).bind(2, from);
        if (scenario) s.bind(3, *scenario);
        auto done = s.run();
        if (!done) {
            Error e = done.error();
            e.message = "table " + copy.table + ": " + e.message +
                        (e.message.find("UNIQUE") != std::string::npos ? " (two parts hold the same rows)" : "");
            return e;
        }
        const auto n = static_cast<std::size_t>(db.changes());
        rows += n;
        if (copy.table == "probe_results") probe_rows += n;
    }
    return rows;
}

struct TempFile {
    std::string path;
    bool keep = false;
    ~TempFile() {
        if (keep || path.empty()) return;
        std::error_code ec;
        for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix, ec);
    }
};

std::string temp_name(const std::string& target) {
    return target + ".merging-" + std::to_string(::getpid());
}

// Removes the temporary files (TARGET.merging-PID and its -wal, -shm and -journal) of merges that
// died: those whose process no longer exists, and any named after this process (it has not begun
// writing). Those of a live process are left alone. One note per removed file.
void remove_stale_temps(const std::string& target, std::vector<std::string>& notes) {
    const fs::path path(target);
    const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    const std::string prefix = path.filename().string() + ".merging-";
    std::error_code ec;
    std::vector<std::pair<fs::path, long long>> stale;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        std::size_t at = prefix.size(), digits = 0;
        while (at + digits < name.size() && std::isdigit(static_cast<unsigned char>(name[at + digits]))) ++digits;
        const std::string rest = name.substr(at + digits);
        if (digits == 0 || digits > 9 || !(rest.empty() || rest == "-wal" || rest == "-shm" || rest == "-journal"))
            continue;
        const long long pid = std::stoll(name.substr(at, digits));
        if (pid <= 0) continue;
        const bool mine = pid == static_cast<long long>(::getpid());
        if (!mine && !(::kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH)) continue;
        stale.emplace_back(it->path(), pid);
    }
    std::sort(stale.begin(), stale.end());
    for (const auto& [file, pid] : stale) {
        std::error_code removed;
        if (fs::remove(file, removed))
            notes.push_back("removed " + (dir / file.filename()).string() + ", left by a merge (pid " +
                            std::to_string(pid) + ") that " +
                            (pid == static_cast<long long>(::getpid()) ? "had this process's pid and died"
                                                                       : "is no longer running"));
        else if (removed)
            notes.push_back("cannot remove " + file.string() + ", left by a merge that died: " + removed.message());
    }
}

Result<void> publish(TempFile& temp, const std::string& target) {
    std::error_code ec;
    fs::rename(temp.path, target, ec);
    if (ec) return make_error(ErrorKind::io, "cannot rename " + temp.path + ": " + ec.message(), target);
    temp.keep = true;
    return {};
}

}  // namespace

Result<MergeReport> merge_shards(const std::string& out, const std::vector<std::string>& inputs) {
    if (inputs.empty()) return make_error(ErrorKind::invalid_input, "no input results files to merge");
    std::error_code ec;
    if (fs::exists(out, ec))
        return make_error(ErrorKind::invalid_input, "already exists: merge writes a new results file", out);
    const std::string out_abs = fs::absolute(out, ec).lexically_normal().string();
    std::set<std::string> seen;
    for (const auto& in : inputs) {
        if (!fs::is_regular_file(in, ec)) return make_error(ErrorKind::not_found, "no such results file", in);
        const std::string canon = fs::canonical(in, ec).string();
        if (!seen.insert(canon).second)
            return make_error(ErrorKind::invalid_input, "named twice: each part is merged once", in);
    }
    // Every part (and the reply cache beside it) is checked whole before anything is read from any.
    std::vector<std::string> notes;
    for (const auto& in : inputs) {
        MF_TRY(check_part(in, notes));
        const std::string cache = llm::default_cache_path(in);
        if (fs::is_regular_file(cache, ec)) MF_TRY(check_sqlite(cache, "this part's reply cache"));
    }

    // Every input run, grouped by the configuration it is a part of, in order of first appearance.
    std::vector<std::string> order;
    std::map<std::string, std::vector<Part>> groups;
    for (const auto& in : inputs) {
        MF_TRY_ASSIGN(auto parts, read_parts(in));
        for (auto& p : parts) {
            const std::string key = p.config["unsharded_hash"].get<std::string>();
            if (!groups.count(key)) order.push_back(key);
            groups[key].push_back(std::move(p));
        }
    }
    auto describe = [](const Part& p) {
        return p.file + " run " + std::to_string(p.run.id) + " (" + p.run.system_spec + ", shard " +
               std::to_string(p.index) + "/" + std::to_string(p.count) + ", code " + p.run.code_version + ")";
    };
    for (const auto& key : order) {
        auto& parts = groups[key];
        std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.index < b.index; });
        const Part& first = parts.front();
        std::map<int, const Part*> by_index;
        std::map<std::string, const Part*> owner;
        for (const auto& p : parts) {
            if (p.count != first.count)
                return make_error(ErrorKind::invalid_input,
                                  describe(p) + " and " + describe(first) + " split the same run into different "
                                                                            "numbers of parts");
            if (auto [it, fresh] = by_index.emplace(p.index, &p); !fresh)
                return make_error(ErrorKind::invalid_input,
                                  "overlapping parts: " + describe(*it->second) + " and " + describe(p));
            for (const auto& id : p.scenarios)
                if (auto [it, fresh] = owner.emplace(id, &p); !fresh)
                    return make_error(ErrorKind::invalid_input, "overlapping parts: scenario '" + id + "' is in " +
                                                                    describe(*it->second) + " and " + describe(p));
        }
        if (static_cast<int>(parts.size()) != first.count) {
            std::string missing;
            for (int i = 1; i <= first.count; ++i)
                if (!by_index.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
            std::string others;
            for (const auto& k : order)
                if (k != key) others += "; " + describe(groups[k].front()) + " is of another configuration";
            return make_error(ErrorKind::invalid_input,
                              "parts of " + first.run.system_spec + " (configuration " + short_hash(key) +
                                  ", code " + first.run.code_version + ") are missing: " + missing + " of " +
                                  std::to_string(first.count) +
                                  " (run them, or name their files; a part made with another system, dataset, k "
                                  "list, model or code version belongs to another run" +
                                  others + ")");
        }
    }

    MergeReport report;
    report.notes = std::move(notes);
    // Left by merges that were killed: removed now that this one writes.
    remove_stale_temps(out, report.notes);
    remove_stale_temps(llm::default_cache_path(out), report.notes);
    TempFile temp{temp_name(out)};
    {
        MF_TRY_ASSIGN(store::ResultsDb db, store::ResultsDb::open(temp.path));
        store::Database& raw = db.database();
        for (const auto& key : order) {
            const auto& parts = groups[key];
            json config = parts.front().config;
            config.erase("shard");
            config.erase("unsharded_hash");
            store::RunRecord record;
            record.system_spec = parts.front().run.system_spec;
            record.config_json = config.dump();
            record.config_hash = key;
            record.code_version = parts.front().run.code_version;
            std::string started = parts.front().run.started_at, finished = parts.front().run.finished_at;
            for (const auto& p : parts) {
                started = std::min(started, p.run.started_at);
                finished = std::max(finished, p.run.finished_at);
            }
            record.started_at = started;
            // The file is a temporary one, discarded on any error, so each part is copied in its own
            // transaction (SQLite attaches outside transactions).
            MF_TRY_ASSIGN(const std::int64_t id, db.create_run(record));
            std::size_t rows = 0, probe_rows = 0, scenarios = 0;
            // Scenario by scenario in the whole run's order (so every table lists them as a single
            // process would), then each part's rows that belong to no scenario.
            struct Unit {
                std::size_t position;
                const Part* part;
                const std::string* scenario;
            };
            std::vector<Unit> units;
            for (const auto& p : parts)
                for (std::size_t i = 0; i < p.scenarios.size(); ++i) units.push_back({p.positions[i], &p, &p.scenarios[i]});
            std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.position < b.position; });
            for (const auto& p : parts) units.push_back({0, &p, nullptr});
            std::map<const Part*, std::vector<TableCopy>> plans;  // each part's, worked out once
            for (const auto& unit : units) {
                MF_TRY_ASSIGN(store::Statement attach, raw.prepare("ATTACH DATABASE ? AS src"));
                attach.bind(1, unit.part->file);
                MF_TRY(attach.run());
                Result<std::size_t> copied = std::size_t{0};
                auto plan = plans.find(unit.part);
                if (plan == plans.end()) {
                    auto made = copy_plan(raw);
                    if (made) plan = plans.emplace(unit.part, std::move(made).value()).first;
                    else copied = made.error();
                }
                if (copied) {
                    if (auto begun = raw.exec("BEGIN"); !begun) {
                        copied = begun.error();
                    } else {
                        copied = copy_run(raw, plan->second, unit.part->run.id, id, unit.scenario, probe_rows);
                        if (!copied) (void)raw.exec("ROLLBACK");
                        else if (auto committed = raw.exec("COMMIT"); !committed) copied = committed.error();
                    }
                }
                (void)raw.exec("DETACH DATABASE src");
                if (!copied) {
                    Error e = copied.error();
                    e.where = unit.part->file;
                    return e;
                }
                rows += *copied;
                if (unit.scenario) ++scenarios;
            }
            MF_TRY_ASSIGN(store::Statement when,
                          raw.prepare("UPDATE runs SET status = 'finished', finished_at = ?, error = NULL WHERE id = ?"));
            when.bind(1, finished).bind(2, id);
            MF_TRY(when.run());
            MF_TRY(db.seal_run(id));  // the merged run's own integrity record
            report.runs.push_back(id);
            report.lines.push_back("run " + std::to_string(id) + ": " + record.system_spec + ", " +
                                   std::to_string(parts.size()) + " part(s), " + std::to_string(scenarios) +
                                   " scenario(s), " + std::to_string(probe_rows) + " probe x k rows, " +
                                   std::to_string(rows) + " rows in all");
        }
    }

    // The reply caches: every reply of every part, with the payments made by a part's run now
    // recorded under OUT (the file whose llm_calls now account for them).
    std::vector<std::pair<std::string, std::string>> caches;  // (input, its cache)
    std::vector<std::string> without;
    for (const auto& in : inputs) {
        const std::string cache = llm::default_cache_path(in);
        if (fs::is_regular_file(cache, ec)) caches.emplace_back(in, cache);
        else without.push_back(in);
    }
    // A part that called no model has no cache; say so only when others have one (a cache kept
    // elsewhere with --cache-db is not found here).
    if (!caches.empty())
        for (const auto& in : without)
            report.notes.push_back(in + ": no reply cache beside it (" + llm::default_cache_path(in) +
                                   "); a part run with --cache-db keeps its replies there");
    TempFile temp_cache;
    if (!caches.empty()) {
        temp_cache.path = temp_name(llm::default_cache_path(out));
        if (fs::exists(llm::default_cache_path(out), ec))
            return make_error(ErrorKind::invalid_input, "already exists: merge writes a new reply cache",
                              llm::default_cache_path(out));
        {
            MF_TRY_ASSIGN(auto created, llm::LlmCache::open(temp_cache.path));  // its schema
        }
        MF_TRY_ASSIGN(store::Database db, store::Database::open(temp_cache.path));
        for (const auto& [in, cache_file] : caches) {
            const std::string in_abs = fs::absolute(in, ec).lexically_normal().string();
            MF_TRY_ASSIGN(store::Statement attach, db.prepare("ATTACH DATABASE ? AS src"));
            attach.bind(1, cache_file);
            MF_TRY(attach.run());
            auto joined = db.exec(
                "INSERT OR IGNORE INTO main.llm_cache SELECT key, endpoint, model, request_json, response_json, "
                "created_at FROM src.llm_cache");
            Result<void> paid = joined ? Result<void>{} : Result<void>{joined.error()};
            if (joined) {
                MF_TRY_ASSIGN(store::Statement pay,
                              db.prepare("INSERT OR IGNORE INTO main.llm_payments SELECT key, CASE WHEN ledger = ? "
                                         "THEN ? ELSE ledger END, payer, prompt_tokens, completion_tokens, "
                                         "counted_locally, attempts, latency_micros FROM src.llm_payments"));
                pay.bind(1, in_abs).bind(2, out_abs);
                paid = pay.run();
            }
            (void)db.exec("DETACH DATABASE src");
            if (!paid) {
                Error e = paid.error();
                e.where = cache_file;
                return e;
            }
        }
        MF_TRY_ASSIGN(store::Statement count, db.prepare("SELECT COUNT(*) FROM llm_cache"));
        MF_TRY_ASSIGN(bool row, count.step());
        if (row) report.cache_entries = static_cast<std::size_t>(count.column_int(0));
        report.cache_files = caches.size();
    }
    MF_TRY(publish(temp, out));
    if (!caches.empty()) MF_TRY(publish(temp_cache, llm::default_cache_path(out)));
    return report;
}

}  // namespace memfail::run

// SPDX-License-Identifier: MIT
#include <memfail/suites/dynamic/report.hpp>

#include <algorithm>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

namespace memfail::suites::dynamic {

using namespace memfail::report;

namespace {

using Key = std::tuple<std::int64_t, int, std::string, std::string, std::string>;  // run, k, checkpoint, task, slice

std::string share(std::optional<double> v, bool machine) {
    if (!v) return machine ? "" : "-";
    return machine ? fraction(*v) : percent(*v);
}

Result<std::map<std::int64_t, std::string>> run_names(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    std::map<std::int64_t, std::string> out;
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto run, db.run(id));
        out[id] = run ? run->label() : std::to_string(id);
    }
    return out;
}

// One gold log of a probe as fields_json records it.
struct GoldLog {
    std::string app;
    std::string retrieved;  // "yes", "no" or "unsure"
};

// A probe's gold logs by id, from fields_json. A log that is evidence for several fields is one log:
// its status does not depend on the field. Logs without an id cannot be matched across fields and
// count once each; a malformed document yields none (the probe-level counts stand without it).
std::map<std::string, GoldLog> gold_logs(const std::string& fields_json) {
    using nlohmann::json;
    std::map<std::string, GoldLog> out;
    const json fields = json::parse(fields_json, nullptr, false);
    if (!fields.is_array()) return out;
    std::size_t anonymous = 0;
    for (const auto& f : fields) {
        if (!f.is_object()) continue;
        const auto logs = f.find("logs");
        if (logs == f.end() || !logs->is_array()) continue;
        for (const auto& l : *logs) {
            if (!l.is_object()) continue;
            auto text = [&](const char* key) {
                const auto it = l.find(key);
                return it != l.end() && it->is_string() ? it->get<std::string>() : std::string();
            };
            std::string id = text("id");
            // '\n' cannot occur in a log id, so these keys never collide with a real one.
            if (id.empty()) id = "\n" + std::to_string(anonymous++);
            out.emplace(std::move(id), GoldLog{text("app"), text("retrieved")});
        }
    }
    return out;
}

// Family and state-change rows first (in their old order), then the per-app rows.
bool slice_row_less(const std::string& a, const std::string& b) {
    const bool app_a = a.rfind("app:", 0) == 0, app_b = b.rfind("app:", 0) == 0;
    if (app_a != app_b) return app_b;
    return a < b;
}

}  // namespace

const std::vector<std::string>& profile_label_names() {
    static const std::vector<std::string> names = {"irrelevant_evidence", "identity_miss", "detail_miss", "conflated",
                                                   "all_clear"};
    return names;
}

std::optional<double> ProfileCount::recall() const {
    if (probes == 0) return std::nullopt;
    return recall_sum / static_cast<double>(probes);
}

std::optional<double> ProfileCount::complete() const {
    if (probes == 0) return std::nullopt;
    const auto it = labels.find("all_clear");
    return static_cast<double>(it == labels.end() ? 0 : it->second) / static_cast<double>(probes);
}

std::optional<double> ProfileCount::score() const {
    if (scored == 0) return std::nullopt;
    return score_sum / static_cast<double>(scored);
}

std::optional<double> ProfileCount::log_recall() const {
    if (gold_logs == 0) return std::nullopt;
    return static_cast<double>(retrieved_logs) / static_cast<double>(gold_logs);
}

Result<std::vector<ProfileCount>> profile_counts(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    std::map<Key, ProfileCount> cells;
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto rows, db.profile_results(id));
        for (const auto& r : rows) {
            // The probe's gold logs, over all its apps and per app: {gold, retrieved, unsure}.
            struct Logs {
                std::int64_t gold = 0, retrieved = 0, unsure = 0;
            };
            Logs probe_logs;
            std::map<std::string, Logs> by_app;
            for (const auto& entry : gold_logs(r.row.fields_json)) {
                const GoldLog& log = entry.second;
                for (Logs* l : {&probe_logs, log.app.empty() ? nullptr : &by_app[log.app]}) {
                    if (!l) continue;
                    ++l->gold;
                    if (log.retrieved == "yes") ++l->retrieved;
                    else if (log.retrieved == "unsure") ++l->unsure;
                }
            }
            std::vector<std::pair<std::string, const Logs*>> slices = {{"all", &probe_logs}};
            if (!r.row.family.empty()) slices.emplace_back("family:" + r.row.family, &probe_logs);
            if (!r.row.state_change.empty()) slices.emplace_back("change:" + r.row.state_change, &probe_logs);
            for (const auto& [app, logs] : by_app) slices.emplace_back("app:" + app, &logs);
            for (const auto& [slice, logs] : slices) {
                ProfileCount& c = cells[{id, r.k, r.row.profile_checkpoint, r.row.task, slice}];
                c.run_id = id;
                c.k = r.k;
                c.checkpoint = r.row.profile_checkpoint;
                c.task = r.row.task;
                c.slice = slice;
                ++c.probes;
                // An app slice's probe recall is the share of that app's logs the probe got back.
                const bool app = slice.rfind("app:", 0) == 0;
                c.recall_sum += app ? static_cast<double>(logs->retrieved) / static_cast<double>(logs->gold)
                                    : r.row.recall;
                c.gold_logs += logs->gold;
                c.retrieved_logs += logs->retrieved;
                c.unsure_logs += logs->unsure;
                ++c.labels[r.row.label];
                if (r.row.item_score) {
                    ++c.scored;
                    c.score_sum += *r.row.item_score;
                }
                if (r.answer_correct && !*r.answer_correct) {
                    ++c.wrong;
                    ++c.wrong_labels[r.row.label];
                }
            }
        }
    }
    std::vector<ProfileCount> out;
    out.reserve(cells.size());
    for (auto& [key, c] : cells) out.push_back(std::move(c));
    return out;
}

Result<Table> profile_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids, TableStyle style) {
    const bool machine = style == TableStyle::machine;
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    MF_TRY_ASSIGN(auto counts, profile_counts(db, run_ids));
    Table t;
    t.title = "Profile tasks per checkpoint: evidence recall@k, items with all their evidence retrieved, and why the "
              "rest miss it";
    t.columns = {{"run", Align::left}, {"k", Align::right}, {"checkpoint", Align::left}, {"task", Align::left},
                 {"probes", Align::right}, {machine ? "recall" : "recall@k", Align::right},
                 {machine ? "complete" : "complete", Align::right}};
    for (const auto& label : profile_label_names())
        if (label != "all_clear") t.columns.push_back({label, Align::right});
    t.columns.push_back({"unverified", Align::right});
    t.columns.push_back({"score", Align::right});
    t.columns.push_back({"scored", Align::right});
    t.columns.push_back({machine ? "wrong_all_clear" : "wrong, all clear", Align::right});
    for (const auto& c : counts) {
        if (c.slice != "all") continue;
        std::vector<std::string> row = {names[c.run_id], std::to_string(c.k), c.checkpoint, c.task,
                                        std::to_string(c.probes), share(c.recall(), machine), share(c.complete(), machine)};
        auto count_of = [](const std::map<std::string, std::int64_t>& m, const std::string& k) {
            const auto it = m.find(k);
            return it == m.end() ? std::int64_t{0} : it->second;
        };
        for (const auto& label : profile_label_names())
            if (label != "all_clear") row.push_back(std::to_string(count_of(c.labels, label)));
        row.push_back(std::to_string(count_of(c.labels, "")));
        row.push_back(c.score() ? (machine ? fraction(*c.score()) : fraction(*c.score())) : (machine ? "" : "-"));
        row.push_back(std::to_string(c.scored));
        row.push_back(std::to_string(count_of(c.wrong_labels, "all_clear")));
        t.rows.push_back(std::move(row));
    }
    if (!t.rows.empty()) {
        t.notes.push_back("recall@k: the mean share of a probe's gold evidence logs held by the top k memories. "
                          "complete: probes whose every gold log was retrieved; the label columns count the others "
                          "by their first missing piece (docs/DYNAMIC.md).");
        t.notes.push_back("unverified: the rules could not tell which logs the memories hold (no provenance and no "
                          "details to match); never counted as retrieved.");
        t.notes.push_back("score: mean item score (0.8 core + 0.2 detail/2 per field) over the items whose every field "
                          "was decided; empty without an answer model. wrong, all clear: answered wrong with every "
                          "gold log retrieved, the answer model's failure.");
    }
    return t;
}

Result<Table> profile_slices_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids, TableStyle style) {
    const bool machine = style == TableStyle::machine;
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    MF_TRY_ASSIGN(auto counts, profile_counts(db, run_ids));
    std::map<std::int64_t, int> kmax;
    std::set<std::string> checkpoints;
    for (const auto& c : counts) {
        kmax[c.run_id] = std::max(kmax[c.run_id], c.k);
        checkpoints.insert(c.checkpoint);
    }
    // (run, task, slice) -> checkpoint -> cell
    std::map<std::tuple<std::int64_t, std::string, std::string>, std::map<std::string, const ProfileCount*>> cells;
    for (const auto& c : counts)
        if (c.k == kmax[c.run_id] && c.slice != "all") cells[{c.run_id, c.task, c.slice}][c.checkpoint] = &c;
    std::vector<std::pair<std::tuple<std::int64_t, std::string, std::string>, std::map<std::string, const ProfileCount*>>>
        rows(cells.begin(), cells.end());
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        const auto& [run_a, task_a, slice_a] = a.first;
        const auto& [run_b, task_b, slice_b] = b.first;
        if (run_a != run_b) return run_a < run_b;
        if (task_a != task_b) return task_a < task_b;
        return slice_row_less(slice_a, slice_b);
    });
    Table t;
    t.title = "Profile tasks by slice at each run's largest k: evidence recall@k per checkpoint (score when answered); "
              "per app, the share of its gold logs retrieved";
    t.columns = {{"run", Align::left}, {"task", Align::left}, {"slice", Align::left}};
    for (const auto& cp : checkpoints) t.columns.push_back({cp, Align::right});
    bool apps = false;
    for (const auto& [key, by_cp] : rows) {
        const auto& [run, task, slice] = key;
        const bool app = slice.rfind("app:", 0) == 0;
        apps |= app;
        std::vector<std::string> row = {names[run], task, slice};
        for (const auto& cp : checkpoints) {
            const auto it = by_cp.find(cp);
            if (it == by_cp.end()) {
                row.push_back(machine ? "" : "-");
                continue;
            }
            const ProfileCount& c = *it->second;
            // An app's figure is log level: its logs retrieved over its logs, whichever probes they serve.
            std::string cell = share(app ? c.log_recall() : c.recall(), machine);
            if (!machine) {
                if (app) {
                    cell += " (" + std::to_string(c.retrieved_logs) + "/" + std::to_string(c.gold_logs) + " logs";
                    if (c.unsure_logs > 0) cell += ", " + std::to_string(c.unsure_logs) + " unsure";
                    cell += ")";
                } else {
                    cell += " (" + std::to_string(c.probes) + ")";
                    if (c.score()) cell += " s=" + fraction(*c.score());
                }
            }
            row.push_back(cell);
        }
        t.rows.push_back(std::move(row));
    }
    if (!t.rows.empty())
        t.notes.push_back("change:retained: keys whose value is the same since they first held; change:updated: "
                          "changed since the previous checkpoint; change:settled: the same as at the previous "
                          "checkpoint, after an earlier change; change:new: first holding at that checkpoint.");
    if (apps)
        t.notes.push_back("app:<app>: log-level recall, the gold evidence logs of that app held by the top k memories "
                          "over all of them (per probe and log), not the mean over probes; unsure logs (no provenance "
                          "and no details to match) count as not retrieved.");
    return t;
}

}  // namespace memfail::suites::dynamic

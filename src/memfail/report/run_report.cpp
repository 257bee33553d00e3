// SPDX-License-Identifier: MIT
// Diagnostic tables.
#include <memfail/report/run_report.hpp>
#include <memfail/report/stats.hpp>

#include <cstdio>
#include <set>

namespace memfail::report {

std::string percent(double fraction) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.1f", 100.0 * fraction);
    return buffer;
}

Result<std::vector<std::int64_t>> select_runs(store::ResultsDb& db, const std::vector<std::int64_t>& requested) {
    std::vector<std::int64_t> out;
    if (!requested.empty()) {
        for (std::int64_t id : requested) {
            MF_TRY_ASSIGN(auto run, db.run(id));
            if (!run) return make_error(ErrorKind::not_found, "no run " + std::to_string(id), db.database().path());
            out.push_back(id);
        }
        return out;
    }
    MF_TRY_ASSIGN(auto runs, db.runs());
    for (const auto& r : runs)
        if (r.status == "finished") out.push_back(r.id);
    if (out.empty())
        return make_error(ErrorKind::not_found,
                          runs.empty() ? "the results file holds no run"
                                       : "the results file holds no finished run (name one with --run to see a partial one)",
                          db.database().path());
    return out;
}

Result<Table> success_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    MF_TRY_ASSIGN(auto rows, db.summary(run_ids));
    Table t;
    t.title = "Memory-side success (stored, faithful and retrieved; the answer stage is not graded)";
    t.columns = {{"run", Align::right},         {"system", Align::left},      {"dataset", Align::left},
                 {"k", Align::right},           {"probes", Align::right},     {"success", Align::right},
                 {"rate %", Align::right},      {"95% CI", Align::left},     {"not_stored", Align::right},
                 {"summary_error", Align::right}, {"not_retrieved", Align::right}, {"errors", Align::right},
                 {"abstain*", Align::right}};
    bool any_abstain = false, any_error = false;
    for (const auto& r : rows) {
        const Interval ci = wilson_interval(r.success, r.graded - r.errors);
        const double rate = r.graded - r.errors > 0 ? static_cast<double>(r.success) / static_cast<double>(r.graded - r.errors) : 0.0;
        t.rows.push_back({std::to_string(r.run_id), r.system_spec, r.dataset, std::to_string(r.k),
                          std::to_string(r.graded - r.errors), std::to_string(r.success), percent(rate),
                          "[" + percent(ci.low) + ", " + percent(ci.high) + "]", std::to_string(r.not_stored),
                          std::to_string(r.summary_error), std::to_string(r.not_retrieved),
                          std::to_string(r.errors), std::to_string(r.needs_answer_stage)});
        any_abstain |= r.needs_answer_stage > 0;
        any_error |= r.errors > 0;
    }
    if (any_abstain)
        t.notes.push_back(
            "* abstain: probes that must be abstained on (misleading questions) have no evidence to find; "
            "they need the answer stage and are not in the success rate.");
    if (any_error)
        t.notes.push_back("errors: probes whose retrieval failed; excluded from the rate (the message is in probe_results.error of the results file).");
    t.notes.push_back("reasoning: not graded (needs an LLM). Rate = success / probes; CI = 95% Wilson score interval.");
    return t;
}

Result<std::vector<Table>> success_tables_by_run(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    std::vector<Table> out;
    for (std::size_t i = 0; i < run_ids.size(); ++i) {
        MF_TRY_ASSIGN(Table flat, success_table(db, {run_ids[i]}));
        MF_TRY_ASSIGN(auto run, db.run(run_ids[i]));
        Table t;
        t.title = "run " + std::to_string(run_ids[i]) + ": " + (run ? run->system_spec : std::string("?"));
        t.columns.assign(flat.columns.begin() + 2, flat.columns.end());
        for (auto& row : flat.rows) t.rows.emplace_back(row.begin() + 2, row.end());
        // The notes explain columns once, under the last table.
        if (i + 1 == run_ids.size()) t.notes = flat.notes;
        out.push_back(std::move(t));
    }
    return out;
}

Result<Table> runs_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) {
    Table t;
    t.title = "Runs";
    t.columns = {{"run", Align::right},   {"status", Align::left},        {"system", Align::left},
                 {"dataset", Align::left}, {"dataset hash", Align::left},  {"store p50 ms", Align::right},
                 {"retrieve p50 ms", Align::right}, {"retrieve p99 ms", Align::right},
                 {"code", Align::left}};
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto run, db.run(id));
        if (!run) continue;
        MF_TRY_ASSIGN(auto scenarios, db.scenarios(id));
        for (const auto& s : scenarios) {
            MF_TRY_ASSIGN(auto store_lat, db.store_latency(id, s.dataset));
            MF_TRY_ASSIGN(auto retrieve_lat, db.retrieve_latency(id, s.dataset));
            char a[32], b[32], c[32];
            std::snprintf(a, sizeof a, "%.3f", store_lat.p50_ms);
            std::snprintf(b, sizeof b, "%.3f", retrieve_lat.p50_ms);
            std::snprintf(c, sizeof c, "%.3f", retrieve_lat.p99_ms);
            t.rows.push_back({std::to_string(id), run->status, run->system_spec, s.dataset,
                              s.dataset_hash.substr(0, 12), a, b, c, run->code_version});
        }
    }
    return t;
}

}  // namespace memfail::report

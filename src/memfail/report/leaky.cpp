// SPDX-License-Identifier: MIT
// Probes answered right without memory, from the `none` runs of a results file.
#include <memfail/report/leaky.hpp>

#include <algorithm>
#include <cstdio>

#include <memfail/core/text.hpp>

#include <memfail/store/leaky_sql.hpp>

namespace memfail::report {

Result<std::vector<LeakyDataset>> leaky_datasets(store::ResultsDb& db) {
    // One row per dataset content: its `none` runs, the probes they asked and those answered right,
    // each probe counted once over k and over runs.
    MF_TRY_ASSIGN(store::Statement s, db.database().prepare(
        "SELECT MIN(sc.dataset), sc.dataset_hash, group_concat(DISTINCT p.run_id), "
        "  COUNT(DISTINCT p.scenario_id || char(31) || p.probe_id), "
        "  COUNT(DISTINCT CASE WHEN p.answer_correct = 1 THEN p.scenario_id || char(31) || p.probe_id END) "
        "FROM probe_results p JOIN runs r ON r.id = p.run_id "
        "JOIN run_scenarios sc ON sc.run_id = p.run_id AND sc.scenario_id = p.scenario_id "
        "WHERE " + store::no_memory_run_sql("r") + " AND p.kind != 'abstain' AND p.answer_correct IS NOT NULL "
        "GROUP BY sc.dataset_hash ORDER BY MIN(sc.rowid)"));
    std::vector<LeakyDataset> out;
    MF_TRY(s.for_each_row([&] {
        LeakyDataset d{s.column_text(0), s.column_text(1), {}, s.column_int(3), s.column_int(4)};
        for (const std::string& id : text::split(s.column_text(2), ',')) d.none_runs.push_back(std::stoll(id));
        std::sort(d.none_runs.begin(), d.none_runs.end());
        out.push_back(std::move(d));
    }));
    return out;
}

Result<Table> leaky_table(store::ResultsDb& db, TableStyle style) {
    MF_TRY_ASSIGN(auto datasets, leaky_datasets(db));
    const bool machine = style == TableStyle::machine;
    Table t;
    t.title = "Answerable without memory (probes an answer model got right with the `none` system)";
    t.columns = {{"dataset", Align::left}, {machine ? "dataset_hash" : "hash", Align::left},
                 {machine ? "none_runs" : "none runs", Align::left}, {"asked", Align::right},
                 {machine ? "right_without_memory" : "right without memory", Align::right},
                 {machine ? "share" : "share %", Align::right}};
    for (const LeakyDataset& d : datasets) {
        std::string runs;
        for (const std::int64_t id : d.none_runs) runs += (runs.empty() ? "" : ",") + std::to_string(id);
        const double share = d.asked > 0 ? static_cast<double>(d.leaky) / static_cast<double>(d.asked) : 0.0;
        char rate[32];
        std::snprintf(rate, sizeof rate, machine ? "%.4f" : "%.1f", machine ? share : 100.0 * share);
        t.rows.push_back({d.dataset, machine ? d.dataset_hash : d.dataset_hash.substr(0, 12), runs,
                          std::to_string(d.asked), std::to_string(d.leaky), rate});
    }
    if (!t.rows.empty())
        t.notes.push_back(
            "asked: probes with something to find (abstain probes aside) whose answer was graded in a `none` run; "
            "right without memory: answered right at some k with nothing stored. The question or common knowledge "
            "gives these away, so success on them says nothing about a memory: `memfail report --exclude-leaky` "
            "leaves them out of every run's rates over the same dataset.");
    return t;
}

}  // namespace memfail::report

// SPDX-License-Identifier: MIT
// Evidence recall per benchmark category (evidence_recall.hpp).
#include <memfail/report/evidence_recall.hpp>

#include <memfail/report/benchmark.hpp>
#include <memfail/report/sources.hpp>

#include <algorithm>
#include <map>
#include <tuple>

#include <nlohmann/json.hpp>

namespace memfail::report {

namespace {

using nlohmann::json;

struct Sums {
    std::int64_t questions = 0, every = 0, any = 0, cited = 0, retrieved = 0, unsure = 0, unusable = 0;
};

std::string rate(std::int64_t n, std::int64_t of, bool machine) {
    if (of == 0) return machine ? "" : "-";
    return benchmark_share(static_cast<double>(n) / static_cast<double>(of), machine);
}

}  // namespace

Result<Table> evidence_recall_table(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids, TableStyle style) {
    const bool machine = style == TableStyle::machine;
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    MF_TRY_ASSIGN(store::Statement s, db.database().prepare(
        "SELECT p.dataset, p.k, p.scenario_id, p.probe_id, t.probe_json, "
        "COUNT(f.fact_id), COALESCE(SUM(f.stage = 'retrieved'), 0), COALESCE(SUM(f.stage = 'unverified'), 0) "
        "FROM probe_results p JOIN run_scenarios sc ON sc.run_id = p.run_id AND sc.scenario_id = p.scenario_id "
        "LEFT JOIN probe_texts t ON t.run_id = p.run_id AND t.scenario_id = p.scenario_id AND t.probe_id = p.probe_id "
        "LEFT JOIN fact_results f ON f.run_id = p.run_id AND f.scenario_id = p.scenario_id AND f.probe_id = p.probe_id "
        "AND f.k = p.k "
        "WHERE p.run_id = ? AND p.dataset IN ('locomo', 'longmemeval') AND p.stage != 'error' AND p.kind != 'abstain' " +
        db.leaky_filter("p", "sc") + " GROUP BY p.dataset, p.k, p.scenario_id, p.probe_id ORDER BY sc.rowid, p.k"));
    // (run position, dataset, k, slice) -> sums; "all" too.
    std::map<std::tuple<std::size_t, std::string, int, std::string>, Sums> sums;
    for (std::size_t run = 0; run < run_ids.size(); ++run) {
        s.reset();
        s.bind(1, run_ids[run]);
        MF_TRY(s.for_each_row([&] {
            const std::string dataset = s.column_text(0);
            const int k = static_cast<int>(s.column_int(1));
            const json probe = s.column_is_null(4) ? json() : json::parse(s.column_text(4), nullptr, false);
            const json meta = probe.is_object() ? probe.value("meta", json::object()) : json::object();
            const std::int64_t cited = s.column_int(5), retrieved = s.column_int(6), unsure = s.column_int(7);
            const bool usable = meta.value("evidence_usable", true) && cited > 0;
            for (const std::string slice : {benchmark_slice(dataset, meta), std::string("all")}) {
                Sums& x = sums[{run, dataset, k, slice}];
                if (!usable) {
                    ++x.unusable;
                    continue;
                }
                ++x.questions;
                x.every += retrieved == cited;
                x.any += retrieved > 0;
                x.cited += cited;
                x.retrieved += retrieved;
                x.unsure += unsure;
            }
        }));
    }
    Table t;
    t.title = "Evidence recall per benchmark category: questions whose every cited turn was retrieved (memfail's "
              "memory-side success), any cited turn, and the share of cited turns retrieved";
    t.columns = {{"run", Align::left},          {"dataset", Align::left},     {"k", Align::right},
                 {"slice", Align::left},        {"questions", Align::right},  {machine ? "every_cited" : "every cited %", Align::right},
                 {machine ? "any_cited" : "any cited %", Align::right},       {"cited turns", Align::right},
                 {"retrieved", Align::right},   {machine ? "turn_share" : "turns %", Align::right},
                 {"unsure", Align::right},      {"unusable", Align::right}};
    for (const auto& [key, x] : sums) {
        const auto& [run, dataset, k, slice] = key;
        t.rows.push_back({names[run_ids[run]], dataset, std::to_string(k), slice, std::to_string(x.questions),
                          rate(x.every, x.questions, machine), rate(x.any, x.questions, machine), std::to_string(x.cited),
                          std::to_string(x.retrieved), rate(x.retrieved, x.cited, machine), std::to_string(x.unsure),
                          std::to_string(x.unusable)});
    }
    if (!t.rows.empty())
        t.notes.push_back("questions: answerable questions whose evidence is usable; every cited / any cited: the share "
                          "of them with every / at least one cited turn held by a retrieved memory; turns: retrieved / "
                          "cited turns, pooled; unsure: cited turns whose retrieval the rules could not decide (counted "
                          "as not retrieved); unusable: questions citing most of the conversation or no turn, in none "
                          "of the rates (their memory side is unverified).");
    return t;
}

}  // namespace memfail::report

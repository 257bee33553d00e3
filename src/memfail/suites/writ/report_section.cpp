// SPDX-License-Identifier: MIT
// The write-integrity suite's part of every report (report.hpp: writ_report): its scorecard tables
// opening the text report, the tables --table names, its HTML section and each run's results-JSON
// block.
#include <memfail/figures/html.hpp>
#include <memfail/figures/svg.hpp>
#include <memfail/suites/writ/checks.hpp>
#include <memfail/suites/writ/report.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace memfail::suites::writ {

using namespace memfail::report;
using nlohmann::json;

namespace {

// Where a memory check sorts (the report's order, unknown checks after) and so its colour.
std::size_t check_rank(const std::string& name) {
    const auto& names = check_names();
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

// The modes of a --modes run in report order, each in a fixed colour: the system under test, the
// floor without memory and the ceiling of a memory holding the ground truth.
const std::vector<std::string>& integrity_modes() {
    static const std::vector<std::string> modes = {"native", "no_memory", "oracle", "oracle_retrieval"};
    return modes;
}

std::string mode_colour(const std::string& mode, std::size_t k_index, std::size_t k_count) {
    const auto& modes = integrity_modes();
    const auto at = static_cast<std::size_t>(std::find(modes.begin(), modes.end(), mode) - modes.begin());
    // Blue, grey (the floor), green (the ceiling) and teal (the ceiling behind retrieval) of the report's palette.
    static const std::vector<std::size_t> colours = {0, 9, 4, 3};
    const std::string base = svg::palette_colour(at < colours.size() ? colours[at] : at + 3);
    const double amount = k_count > 1 ? 0.55 * static_cast<double>(k_count - 1 - k_index) / static_cast<double>(k_count - 1) : 0.0;
    return svg::tint(base, amount);
}

// "current_retrieved: 61.7% (29/47), 95% CI [47.4, 74.2]": a cell of the integrity table in words.
std::string integrity_text(const IntegrityCount& c) {
    std::string out;
    if (const auto rate = c.rate()) {
        const Interval ci = c.interval();
        out = percent(*rate) + "% (" + std::to_string(c.passed) + "/" + std::to_string(c.decided) + "), 95% CI [" +
              percent(ci.low) + ", " + percent(ci.high) + "]";
    } else {
        out = "no probe decided";
    }
    if (c.unverified() > 0) out += ", " + std::to_string(c.unverified()) + " unverified";
    return out;
}

// The write-integrity scorecard (a suite's memory checks, docs/WRIT.md) from `counts`
// (integrity_counts) and `table` (their integrity_table): the checks per run, mode and k as bars and
// as the table `memfail report` prints, which checks the failures are, by dataset, the answer side
// and the mode gaps.
Result<std::string> section_integrity(store::ResultsDb& db, const SectionContext& m, const std::vector<IntegrityCount>& counts,
                                      const Table& table) {
    std::vector<std::int64_t> ids;
    for (const auto& run : m.runs) ids.push_back(run.id);
    std::string out = m.heading("integrity", "Write integrity");
    out += "<p>Exact checks of what each system holds, retrieves and can recall of the past, made on every probe "
           "at every k by the suite (the write-integrity suite, docs/WRIT.md), with no model involved. A check "
           "counts only the probes it applies to: its rate is passed / decided, with the 95% Wilson score interval "
           "as the whisker; a check the system's read operation failed to answer is <em>unverified</em>, in neither. "
           "Modes (<code>--modes</code>): <strong>native</strong> is the system under test, <strong>no_memory</strong> "
           "the same probes with no memory at all (the floor) and <strong>oracle</strong> a memory holding exactly "
           "the ground truth (the ceiling). A check native fails and the oracle passes is the memory's fault.</p>";
    // (b) One chart per run: a group per check, a bar per mode x k.
    for (const auto& run : m.runs) {
        std::vector<const IntegrityCount*> own;
        for (const auto& c : counts)
            if (c.run_id == run.id) own.push_back(&c);
        if (own.empty()) continue;
        std::vector<std::string> checks, modes;
        std::vector<int> run_ks;
        for (const auto* c : own) {
            if (std::find(checks.begin(), checks.end(), c->name) == checks.end()) checks.push_back(c->name);
            if (std::find(modes.begin(), modes.end(), c->mode) == modes.end()) modes.push_back(c->mode);
            if (std::find(run_ks.begin(), run_ks.end(), c->k) == run_ks.end()) run_ks.push_back(c->k);
        }
        std::sort(run_ks.begin(), run_ks.end());
        std::stable_sort(checks.begin(), checks.end(), [](const std::string& a, const std::string& b) {
            return check_rank(a) < check_rank(b);
        });
        svg::GroupedBarChart chart;
        chart.title = "Write integrity of " + run.label + ": checks passed by mode and k";
        chart.y_label = "checks passed (%)";
        for (const auto& mode : modes)
            for (std::size_t ki = 0; ki < run_ks.size(); ++ki)
                chart.series.push_back({mode + (run_ks.size() > 1 ? " \u00b7 k=" + std::to_string(run_ks[ki]) : ""),
                                        mode_colour(mode, ki, run_ks.size()), mode});
        for (const auto& check : checks) {
            svg::BarGroup g;
            g.label = check;
            for (const auto& mode : modes)
                for (int k : run_ks) {
                    const IntegrityCount* cell = nullptr;
                    for (const auto* c : own)
                        if (c->mode == mode && c->name == check && c->k == k) cell = c;
                    if (!cell || !cell->rate()) {
                        g.bars.emplace_back(std::nullopt);
                        continue;
                    }
                    svg::BarValue b;
                    b.value = *cell->rate();
                    b.interval = cell->interval();
                    b.tooltip = run.label + " \u00b7 " + mode + " \u00b7 " + check + " \u00b7 k=" + std::to_string(k) + ": " +
                                integrity_text(*cell);
                    g.bars.emplace_back(std::move(b));
                }
            chart.groups.push_back(std::move(g));
        }
        chart.legend = svg::Legend::none;
        out += "<div class=\"integrity-run\">";
        if (m.runs.size() > 1) out += "<h3>" + html::escape(run.label) + "</h3>";
        out += html::figure(svg::render(chart),
                      chart.title + ": each bar is the share of the probes a check decided that passed, for one mode "
                                    "and k (error bars: 95% Wilson intervals; no bar: the check decided no probe "
                                    "there). Hover a bar for its counts.",
                      svg::legend_html(chart.series));
        out += "</div>";
    }
    // (a) The table: every check per run, mode and k.
    out += html::folded_table(table, "integrity");
    // (e) Which checks the failures are: failed probe x k rows per run, mode and check, over every k.
    out += "<h3>Which checks fail</h3>";
    out += "<p>Where each mode's failures come from: for every run and mode, the probe x k rows (all k together) on "
           "which each check failed. A row can fail several checks, so a bar splits the failed checks, not the "
           "rows; its n is their number. The table gives the counts with the rows each check decided.</p>";
    std::vector<std::string> all_checks;
    for (const auto& c : counts)
        if (std::find(all_checks.begin(), all_checks.end(), c.name) == all_checks.end()) all_checks.push_back(c.name);
    std::stable_sort(all_checks.begin(), all_checks.end(), [](const std::string& a, const std::string& b) {
        return check_rank(a) < check_rank(b);
    });
    svg::StackedBarChart failures;
    failures.title = "Failed checks by run and mode (probe x k rows, every k)";
    failures.x_label = "share of the failed checks (%)";
    // A check keeps its colour whichever others occur.
    for (const auto& check : all_checks)
        failures.categories.push_back({check, svg::palette_colour(check_rank(check)), check});
    Table dist;
    dist.title = "Failed checks by run and mode: probe x k rows failed / decided, every k";
    dist.columns = {{"run", Align::right}, {"mode", Align::left}, {"rows checked", Align::right},
                    {"rows failing", Align::right}};
    for (const auto& check : all_checks) dist.columns.push_back({check, Align::right});
    for (const auto& run : m.runs) {
        // Probe x k rows checked, and those failing any check, per mode.
        MF_TRY_ASSIGN(auto recorded, db.memory_checks(run.id));
        std::map<std::string, std::set<std::tuple<std::string, std::string, int>>> rows, failing;
        for (const auto& c : recorded) {
            const std::string mode = split_mode(c.scenario_id).second;
            rows[mode].insert({c.scenario_id, c.probe_id, c.k});
            if (c.row.passed && !*c.row.passed) failing[mode].insert({c.scenario_id, c.probe_id, c.k});
        }
        std::vector<std::string> modes;
        for (const auto& c : counts)
            if (c.run_id == run.id && std::find(modes.begin(), modes.end(), c.mode) == modes.end())
                modes.push_back(c.mode);
        if (modes.empty()) continue;
        svg::StackedBarGroup g;
        g.label = m.runs.size() > 1 ? run.label : std::string();
        for (const auto& mode : modes) {
            std::map<std::string, std::pair<std::int64_t, std::int64_t>> by_check;  // failed, decided
            std::int64_t total = 0;
            for (const auto& c : counts)
                if (c.run_id == run.id && c.mode == mode) {
                    by_check[c.name].first += c.failed();
                    by_check[c.name].second += c.decided;
                    total += c.failed();
                }
            svg::StackedBar bar;
            bar.label = mode;
            bar.empty_label = "no check failed";
            std::vector<std::string> row = {run.name, mode, std::to_string(rows[mode].size()),
                                            std::to_string(failing[mode].size())};
            for (const auto& check : all_checks) {
                const auto it = by_check.find(check);
                const std::int64_t failed = it == by_check.end() ? 0 : it->second.first;
                const std::int64_t decided = it == by_check.end() ? 0 : it->second.second;
                bar.counts.push_back(failed);
                bar.tooltips.push_back(run.label + " \u00b7 " + mode + ": " + check + " failed on " +
                                       std::to_string(failed) + " of " + std::to_string(decided) +
                                       " probe x k rows it decided (" +
                                       percent(total > 0 ? static_cast<double>(failed) / static_cast<double>(total) : 0.0) +
                                       "% of this mode's " + std::to_string(total) + " failed checks)");
                row.push_back(it == by_check.end() ? "" : std::to_string(failed) + " / " + std::to_string(decided));
            }
            g.bars.push_back(std::move(bar));
            dist.rows.push_back(std::move(row));
        }
        failures.groups.push_back(std::move(g));
    }
    dist.notes.push_back("rows checked: probe x k rows some check applies to; rows failing: those on which at least one "
                         "check failed; each check: the rows it failed on / the rows it decided (an empty cell: the "
                         "check applies to none of the mode's probes). Unverified checks are in neither count.");
    failures.legend = svg::Legend::none;
    out += html::figure(svg::render(failures),
                  failures.title + ": each segment is one check's share of the mode's failed checks; hover it for the "
                                   "counts",
                  svg::legend_html(failures.categories));
    out += html::table(dist, "integrity-failures");
    // (c) By dataset.
    MF_TRY_ASSIGN(Table by_dataset, integrity_by_dataset_table(db, ids));
    out += "<h3>By dataset</h3>";
    out += "<p>The same checks for each dataset (a write-integrity category) at each run's largest k: the rate, with "
           "the number of probes the check decided in brackets.</p>";
    out += html::folded_table(by_dataset, "integrity-datasets");
    // (d) The answer side and the mode gaps.
    MF_TRY_ASSIGN(Table answers, integrity_answer_table(db, ids));
    out += "<h3>Answer side and mode gaps</h3>";
    if (answers.rows.empty()) {
        out += "<p class=\"empty\">No answer of these runs was graded, so the answer-side metrics (recall, update "
               "fidelity, temporal accuracy, abstention, ...) and the gaps between modes are not shown: run with "
               "<code>--answer-model</code> to have the test-taker answer and each probe's rubric grade it.</p>";
    } else {
        out += "<p>The test-taker's answers graded by each probe's rubric, per mode, at each run's largest k; then, "
               "per metric, native against the oracle (negative: the memory's fault) and against no memory "
               "(negative: memory that hurts).</p>";
        out += html::folded_table(answers, "integrity-answers");
        MF_TRY_ASSIGN(Table gaps, mode_gap_table(db, ids));
        if (gaps.rows.empty())
            out += "<p class=\"note\">No mode gaps: these runs graded answers in one mode only (run with "
                   "<code>--modes native,no_memory,oracle</code>).</p>";
        else
            out += html::table(gaps, "integrity-gaps");
        MF_TRY_ASSIGN(Table layers, layer_table(db, ids));
        if (!layers.rows.empty()) {
            out += "<p>Where each wrong answer fails, in WRIT's three layers: the state the system keeps, what it "
                   "retrieved, or the answer itself.</p>";
            out += html::table(layers, "integrity-layers");
        }
    }
    return out + "</section>";
}


// One row of the write-integrity table (memory side: `check`) or of its answer-side table
// (`metric`), its numbers as numbers: rate and interval bounds as fractions, null when no probe x k
// was decided.
json integrity_json(const IntegrityCount& c, const char* name_key) {
    const auto rate = c.rate();
    const Interval ci = c.interval();
    return {{"mode", c.mode},
            {name_key, c.name},
            {"k", c.k},
            {"probes", c.decided},
            {"passed", c.passed},
            {"rate", rate ? json(*rate) : json(nullptr)},
            {"ci_low", rate ? json(ci.low) : json(nullptr)},
            {"ci_high", rate ? json(ci.high) : json(nullptr)},
            {"unverified", c.unverified()}};
}

class WritReport final : public SuiteReport {
public:
    std::string id() const override { return "integrity"; }
    std::string title() const override { return "Write integrity"; }
    Result<bool> present(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) const override {
        MF_TRY_ASSIGN(auto counts, integrity_counts(db, run_ids));
        return !counts.empty();
    }
    // A report of write-integrity datasets only opens with their scorecard: the staged success
    // charts that follow are a diagnostic there (docs/WRIT.md, "The report's first table").
    bool leads(const std::vector<std::string>& datasets) const override {
        return !datasets.empty() && std::all_of(datasets.begin(), datasets.end(), [](const std::string& d) {
            return d.rfind("writ_", 0) == 0;
        });
    }
    Result<std::vector<Table>> scorecard(store::ResultsDb& db, const std::vector<std::int64_t>& ids) const override {
        std::vector<Table> out;
        MF_TRY_ASSIGN(Table integrity, integrity_table(db, ids));
        if (integrity.rows.empty()) return out;
        MF_TRY_ASSIGN(Table headline, integrity_scorecard_table(db, ids));
        out.push_back(std::move(headline));
        out.push_back(std::move(integrity));
        MF_TRY_ASSIGN(Table by_dataset, integrity_by_dataset_table(db, ids));
        out.push_back(std::move(by_dataset));
        MF_TRY_ASSIGN(Table answers, integrity_answer_table(db, ids));
        MF_TRY_ASSIGN(Table gaps, mode_gap_table(db, ids));
        MF_TRY_ASSIGN(Table distractors, distractor_table(db, ids));
        MF_TRY_ASSIGN(Table layers, layer_table(db, ids));
        for (auto* t : {&answers, &gaps, &distractors, &layers})
            if (!t->rows.empty()) out.push_back(std::move(*t));
        return out;
    }
    std::vector<NamedTable> tables() const override {
        return {{"integrity", "write-integrity memory checks per run x mode x check x k"},
                {"integrity-answers", "write-integrity answer metrics per run x mode"},
                {"integrity-datasets", "both per run x mode x dataset"}};
    }
    Result<Table> table(const std::string& name, store::ResultsDb& db, const std::vector<std::int64_t>& ids,
                        TableStyle style) const override {
        if (name == "integrity") return integrity_table(db, ids, style);
        if (name == "integrity-answers") return integrity_answer_table(db, ids, style);
        if (name == "integrity-datasets") return integrity_dataset_table(db, ids, style);
        return SuiteReport::table(name, db, ids, style);
    }
    Result<std::string> html(store::ResultsDb& db, const SectionContext& context) const override {
        std::vector<std::int64_t> ids;
        std::map<std::int64_t, std::string> run_labels;
        for (const auto& run : context.runs) {
            ids.push_back(run.id);
            run_labels[run.id] = run.label;
        }
        MF_TRY_ASSIGN(auto counts, integrity_counts(db, ids));
        // The table with its runs named as the report names them.
        return section_integrity(db, context, counts, integrity_table(counts, run_labels));
    }
    std::string json_key() const override { return "integrity"; }
    Result<json> run_json(store::ResultsDb& db, std::int64_t id) const override {
        MF_TRY_ASSIGN(auto memory_counts, integrity_counts(db, {id}));
        if (memory_counts.empty()) return json(nullptr);
        MF_TRY_ASSIGN(auto answer_counts, integrity_answer_counts(db, {id}));
        json memory = json::array(), answers = json::array();
        for (const auto& c : memory_counts) memory.push_back(integrity_json(c, "check"));
        for (const auto& c : answer_counts) answers.push_back(integrity_json(c, "metric"));
        // The same per dataset (category), each row with its `dataset`.
        MF_TRY_ASSIGN(auto memory_by_dataset, integrity_counts(db, {id}, /*by_dataset=*/true));
        MF_TRY_ASSIGN(auto answers_by_dataset, integrity_answer_counts(db, {id}, /*by_dataset=*/true));
        json memory_datasets = json::array(), answer_datasets = json::array();
        for (const auto& c : memory_by_dataset) {
            json row = integrity_json(c, "check");
            row["dataset"] = c.dataset;
            memory_datasets.push_back(std::move(row));
        }
        for (const auto& c : answers_by_dataset) {
            json row = integrity_json(c, "metric");
            row["dataset"] = c.dataset;
            answer_datasets.push_back(std::move(row));
        }
        return json{{"memory", std::move(memory)},
                    {"answers", std::move(answers)},
                    {"memory_by_dataset", std::move(memory_datasets)},
                    {"answers_by_dataset", std::move(answer_datasets)}};
    }
    std::vector<std::string> check_order() const override { return check_names(); }
    std::string browser_note() const override {
        return "Write-integrity probes also show the value they expect, how the answer is graded (the rubric), the "
               "date a question about the past asks about, and every memory check at every k with its verdict and "
               "what it found; the <em>Check</em> filter lists the probes on which a check failed.";
    }
};

}  // namespace

const SuiteReport& writ_report() {
    static const WritReport report;
    return report;
}

}  // namespace memfail::suites::writ

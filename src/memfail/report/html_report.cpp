// SPDX-License-Identifier: MIT
// The HTML report: every number comes from the same summary rows as the tables, formatted by the
// same helpers, so a tooltip and the table cell beside it always agree.
#include <memfail/report/html_report.hpp>
#include <memfail/report/benchmark.hpp>
#include <memfail/report/evidence_recall.hpp>
#include <memfail/report/leaky.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/report/slices.hpp>
#include <memfail/report/sources.hpp>
#include <memfail/suites/suite.hpp>
#include <memfail/figures/html.hpp>
#include <memfail/figures/stats.hpp>
#include <memfail/figures/svg.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

namespace memfail::report {

namespace {

using nlohmann::json;
using html::figure;
using html::fixed;
using html::folded_table;

std::string h(std::string_view text) { return html::escape(text); }
std::string html_table(const Table& t, const std::string& cls = {}) { return html::table(t, cls); }


// One run as the report names it: "run 3 · mem0".
struct RunInfo {
    store::RunRecord record;
    json config = json::object();
    std::string label;
    std::string name;        // the run's id as tables show it: "3", or "A.db#3" in a report over several files
    std::string short_name;  // beside its points in a chart: its --name, else "run 3" / "A.db#3"
};

// Success of one summary row as the success table computes it.
struct Success {
    std::int64_t success = 0;
    std::int64_t trials = 0;
    double rate = 0;
    Interval ci;
};

Success success_of(const store::SummaryRow& r, bool end_to_end) {
    Success s;
    s.trials = r.graded - r.errors;
    s.success = end_to_end ? r.correct : r.success;
    s.rate = s.trials > 0 ? static_cast<double>(s.success) / static_cast<double>(s.trials) : 0.0;
    s.ci = wilson_interval(static_cast<long>(s.success), static_cast<long>(s.trials));
    return s;
}

// "42.1% (59/140), 95% CI [34.2, 50.4]": the table's rate, counts and interval, formatted alike.
std::string success_text(const Success& s) {
    return percent(s.rate) + "% (" + std::to_string(s.success) + "/" + std::to_string(s.trials) + "), 95% CI [" +
           percent(s.ci.low) + ", " + percent(s.ci.high) + "]";
}

std::string json_string_or(const json& j, const char* key, const std::string& fallback = {}) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// The system's internal model named in a run's configuration, if any.
std::optional<std::string> system_model(const json& config) {
    auto llm = config.find("llm");
    if (llm == config.end() || !llm->is_object()) return std::nullopt;
    auto models = llm->find("models");
    if (models == llm->end() || !models->is_object()) return std::nullopt;
    auto m = models->find("system");
    if (m == models->end() || !m->is_string() || m->get<std::string>().empty()) return std::nullopt;
    return m->get<std::string>();
}

double quantile_ms(std::vector<std::int64_t>& values, double q) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size()))) - 1;
    return static_cast<double>(values[std::min(i, values.size() - 1)]) / 1000.0;
}

// Store and retrieve latencies with p95 (the results file's own summary gives p50 and p99).
Result<std::vector<std::int64_t>> micros(store::ResultsDb& db, const char* sql, std::int64_t run_id,
                                        const std::string& dataset) {
    MF_TRY_ASSIGN(store::Statement s, db.database().prepare(sql));
    s.bind(1, run_id).bind(2, dataset);
    std::vector<std::int64_t> out;
    MF_TRY(s.for_each_row([&] { out.push_back(s.column_int(0)); }));
    return out;
}

constexpr const char* k_store_micros =
    "SELECT s.micros FROM stored_sessions s JOIN run_scenarios sc ON sc.run_id = s.run_id "
    "AND sc.scenario_id = s.scenario_id WHERE s.run_id = ? AND sc.dataset = ?";
constexpr const char* k_retrieve_micros =
    "SELECT retrieve_micros FROM probe_results WHERE run_id = ? AND dataset = ? AND stage != 'error'";

// The report's data, gathered once.
struct Model {
    std::vector<RunInfo> runs;
    std::vector<store::SummaryRow> summary;
    bool end_to_end = false;
    std::vector<std::string> datasets;  // in order of first appearance
    std::vector<int> ks;                // ascending
    // Section id -> its number: the write-integrity section is there only for runs with memory
    // checks, and the sections after it count on from it.
    std::map<std::string, int> number;
    std::string heading(const std::string& id, const std::string& title) const {
        return "<section id=\"" + id + "\"><h2>" + std::to_string(number.at(id)) + ". " + title + "</h2>";
    }
    const store::SummaryRow* find(std::int64_t run, const std::string& dataset, int k) const {
        for (const auto& r : summary)
            if (r.run_id == run && r.dataset == dataset && r.k == k) return &r;
        return nullptr;
    }
};

std::string series_colour(std::size_t run_index, std::size_t k_index, std::size_t k_count) {
    // One hue per run; smaller k lighter, the largest k full strength.
    const double amount = k_count > 1 ? 0.6 * static_cast<double>(k_count - 1 - k_index) / static_cast<double>(k_count - 1) : 0.0;
    return svg::tint(svg::palette_colour(run_index), amount);
}

std::string section_success(const Model& m, const Table& table, const Table& leaky) {
    svg::GroupedBarChart chart;
    chart.title = m.end_to_end ? "End-to-end success by dataset, system and k" : "Memory-side success by dataset, system and k";
    chart.y_label = m.end_to_end ? "end-to-end success (%)" : "memory-side success (%)";
    struct SeriesKey {
        std::size_t run;
        std::size_t k;
    };
    std::vector<SeriesKey> keys;
    for (std::size_t ri = 0; ri < m.runs.size(); ++ri)
        for (std::size_t ki = 0; ki < m.ks.size(); ++ki) {
            bool any = false;
            for (const auto& d : m.datasets) any |= m.find(m.runs[ri].record.id, d, m.ks[ki]) != nullptr;
            if (!any) continue;
            keys.push_back({ri, ki});
            std::string label = m.runs.size() > 1 || m.ks.size() == 1 ? m.runs[ri].label : std::string();
            if (m.ks.size() > 1) label += (label.empty() ? "" : " \u00b7 ") + std::string("k=") + std::to_string(m.ks[ki]);
            chart.series.push_back({label, series_colour(ri, ki, m.ks.size()), {}});
        }
    for (const auto& d : m.datasets) {
        svg::BarGroup g;
        g.label = d;
        for (const auto& key : keys) {
            const auto& run = m.runs[key.run];
            const store::SummaryRow* r = m.find(run.record.id, d, m.ks[key.k]);
            if (!r) {
                g.bars.emplace_back(std::nullopt);
                continue;
            }
            const Success s = success_of(*r, m.end_to_end);
            svg::BarValue b;
            b.value = s.rate;
            b.interval = s.ci;
            b.tooltip = d + " \u00b7 " + run.label + " \u00b7 k=" + std::to_string(r->k) + ": " + success_text(s);
            g.bars.emplace_back(std::move(b));
        }
        chart.groups.push_back(std::move(g));
    }
    std::string out = m.heading("success", "Success by dataset, system and k");
    out += "<p>Each bar is the share of probes a system got right at one k (memories retrieved); the whisker is the "
           "95% Wilson score interval. Hover a bar for its exact numbers.</p>";
    chart.legend = svg::Legend::none;
    out += figure(svg::render(chart), chart.title + " (error bars: 95% Wilson intervals)", svg::legend_html(chart.series));
    // A long table (many runs x datasets x k) is folded so the charts stay in view.
    if (table.rows.size() > 24)
        out += "<details class=\"fold\"><summary>The table (" + std::to_string(table.rows.size()) + " rows)</summary>" +
               html_table(table, "success") + "</details>";
    else
        out += html_table(table, "success");
    // Probes a model answered right with nothing stored (a `none` run with an answer model).
    if (!leaky.rows.empty()) {
        out += "<h3>Answerable without memory</h3>";
        out += "<p>Probes with something to find that an answer model got right with the <code>none</code> system, "
               "which stores nothing: their question or common knowledge gives them away, so success on them says "
               "nothing about a memory. <code>memfail report --exclude-leaky</code> leaves them out of every rate.</p>";
        out += html_table(leaky, "leaky");
    }
    return out + "</section>";
}

// Probes per stage (svg::stage_order's names) of one summary row.
std::map<std::string, std::int64_t> stage_counts(const store::SummaryRow& r) {
    return {{"not_stored", r.not_stored},       {"summary_error", r.summary_error},
            {"unverified", r.unverified},       {"not_retrieved", r.not_retrieved},
            {"reasoning_error", r.reasoning_error}, {"retrieved", r.retrieved()},
            {"correct", r.correct},             {"needs_answer_stage", r.needs_answer_stage},
            {"ambiguous", r.ambiguous},         {"error", r.errors}};
}

// The stages a stage chart shows, in pipeline order: those that occur in `rows`, and the
// taxonomy's own always, so colours read the same in every chart.
std::vector<std::string> shown_stages(const std::vector<const store::SummaryRow*>& rows, bool end_to_end) {
    std::map<std::string, bool> present;
    for (const auto* r : rows)
        for (const auto& [stage, count] : stage_counts(*r)) present[stage] |= count > 0;
    std::vector<std::string> stages;
    for (const auto& s : svg::stage_order())
        if (s == "not_stored" || s == "summary_error" || s == "not_retrieved" || present[s] ||
            (s == "correct" && end_to_end) || (s == "reasoning_error" && end_to_end) ||
            (s == "retrieved" && !end_to_end))
            stages.push_back(s);
    return stages;
}

// One stacked bar: `r`'s probes by stage, each segment's tooltip "<what>: <stage> c of n probes (p%)".
svg::StackedBar stage_bar(const store::SummaryRow& r, const std::vector<std::string>& stages, std::string label,
                          const std::string& what) {
    const auto counts = stage_counts(r);
    std::int64_t total = 0;
    for (const auto& s : stages) total += counts.at(s);
    svg::StackedBar bar;
    bar.label = std::move(label);
    for (const auto& s : stages) {
        const std::int64_t c = counts.at(s);
        bar.counts.push_back(c);
        bar.tooltips.push_back(what + ": " + svg::stage_label(s) + " " + std::to_string(c) + " of " +
                               std::to_string(total) + " probes (" +
                               percent(total > 0 ? static_cast<double>(c) / static_cast<double>(total) : 0.0) + "%)");
    }
    return bar;
}

std::string section_stages(const Model& m) {
    std::vector<const store::SummaryRow*> rows;
    for (const auto& r : m.summary) rows.push_back(&r);
    const std::vector<std::string> stages = shown_stages(rows, m.end_to_end);
    std::string out = m.heading("stages", "Where probes fail: the stage breakdown");
    out += "<p>Each bar splits one system's probes on one dataset by the first stage that failed: not stored, "
           "stored but summarised without a key detail, held in other words the rules cannot vouch for (summary "
           "unverified: needs a judge; never success), stored but not in the top k, or (when the answer is "
           "graded) retrieved but reasoned wrongly. Shares are of all probes in the bar, including errors and "
           "abstain probes.</p>";
    if (m.ks.size() > 1) {
        out += "<p class=\"k-picker\" hidden><label>k: <select id=\"stage-k\">";
        for (int k : m.ks)
            out += "<option value=\"" + std::to_string(k) + "\"" + (k == m.ks.back() ? " selected" : "") + ">" +
                   std::to_string(k) + "</option>";
        out += "</select></label></p>";
    }
    for (int k : m.ks) {
        svg::StackedBarChart chart;
        chart.title = "Failure stages at k=" + std::to_string(k);
        chart.x_label = "share of probes (%)";
        for (const auto& s : stages) chart.categories.push_back({svg::stage_label(s), svg::stage_colour(s), s});
        for (const auto& d : m.datasets) {
            svg::StackedBarGroup g;
            g.label = d;
            for (const auto& run : m.runs) {
                const store::SummaryRow* r = m.find(run.record.id, d, k);
                if (!r) continue;
                g.bars.push_back(stage_bar(*r, stages, run.label,
                                           d + " \u00b7 " + run.label + " \u00b7 k=" + std::to_string(k)));
            }
            if (!g.bars.empty()) chart.groups.push_back(std::move(g));
        }
        out += "<div class=\"k-view\" data-k=\"" + std::to_string(k) + "\">";
        if (m.ks.size() > 1) out += "<h3>k = " + std::to_string(k) + "</h3>";
        chart.legend = svg::Legend::none;
        out += figure(svg::render(chart), chart.title + ": probes of each dataset and system by the stage they reached",
                      svg::legend_html(chart.categories));
        out += "</div>";
    }
    return out + "</section>";
}

// Each dataset by its probes' labels: a stacked stage bar per label and run at the largest k (for
// dimensions of at most 8 labels), and the slice table of every run and k.
std::string section_slices(const Model& m, const std::vector<Slice>& all, const Table& table) {
    std::string out = m.heading("slices", "Slices: each dataset by its probes' labels");
    if (all.empty()) {
        out += "<p class=\"empty\">None of these datasets has probe labels to slice by (Conditional-Facts, "
               "Coexisting-Facts, Persona-Retrieval and Long-Hop do; runs recorded before results schema 3 "
               "keep no probe text).</p>";
        return out + "</section>";
    }
    out += "<p>Each dataset split by what its probes are about: whether the question's context meets the rule's "
           "condition and the condition's type (Conditional-Facts), the number of coexisting preferences N, "
           "the hops and the voice of a Long-Hop chain, and direct, misleading and ambiguous Persona questions. "
           "A failure leaves its fingerprint here: a summariser that drops conditions answers yes whatever the "
           "context, so its wrong answers sit on \"not met\". Bars are drawn at the largest k; the table has "
           "every k.</p>";
    const int k = m.ks.empty() ? 0 : m.ks.back();
    std::vector<const store::SummaryRow*> rows;
    for (const auto& sl : all) rows.push_back(&sl.counts);
    const std::vector<std::string> stages = shown_stages(rows, m.end_to_end);
    for (const auto& d : m.datasets) {
        std::vector<std::string> dimensions;
        for (const auto& sl : all)
            if (sl.counts.dataset == d && std::find(dimensions.begin(), dimensions.end(), sl.dimension) == dimensions.end())
                dimensions.push_back(sl.dimension);
        if (dimensions.empty()) continue;
        out += "<h3>" + h(d) + "</h3>";
        for (const auto& dim : dimensions) {
            std::vector<std::string> labels;
            for (const auto& sl : all)
                if (sl.counts.dataset == d && sl.dimension == dim &&
                    std::find(labels.begin(), labels.end(), sl.label) == labels.end())
                    labels.push_back(sl.label);
            if (labels.size() > 8) continue;  // condition types: the table says it better than 27 bars
            svg::StackedBarChart chart;
            chart.title = d + " by " + dim + " at k=" + std::to_string(k);
            chart.x_label = "share of probes (%)";
            for (const auto& st : stages) chart.categories.push_back({svg::stage_label(st), svg::stage_colour(st), st});
            for (const auto& label : labels) {
                svg::StackedBarGroup g;
                g.label = dim + ": " + label;
                for (const auto& run : m.runs)
                    for (const auto& sl : all) {
                        if (sl.counts.run_id != run.record.id || sl.counts.dataset != d || sl.dimension != dim ||
                            sl.label != label || sl.counts.k != k)
                            continue;
                        g.bars.push_back(stage_bar(sl.counts, stages, run.label,
                                                   d + " \u00b7 " + dim + " " + label + " \u00b7 " + run.label +
                                                       " \u00b7 k=" + std::to_string(k)));
                    }
                if (!g.bars.empty()) chart.groups.push_back(std::move(g));
            }
            chart.legend = svg::Legend::none;
            if (!chart.groups.empty())
                out += figure(svg::render(chart), chart.title + ": probes of each label and run by the stage they reached",
                              svg::legend_html(chart.categories));
        }
        // The dataset's rows of the slice table, without the dataset and system columns.
        Table t;
        t.title = d + ": slices";
        for (std::size_t c = 0; c < table.columns.size(); ++c)
            if (c != 1 && c != 2) t.columns.push_back(table.columns[c]);
        for (const auto& row : table.rows) {
            if (row.size() < 3 || row[2] != d) continue;
            std::vector<std::string> cells;
            for (std::size_t c = 0; c < row.size(); ++c)
                if (c != 1 && c != 2) cells.push_back(row[c]);
            t.rows.push_back(std::move(cells));
        }
        if (t.rows.size() > 24)
            out += "<details class=\"fold\"><summary>The table (" + std::to_string(t.rows.size()) + " rows)</summary>" +
                   html_table(t, "slices") + "</details>";
        else
            out += html_table(t, "slices");
    }
    for (const auto& n : table.notes) out += "<p class=\"note\">" + h(n) + "</p>";
    return out + "</section>";
}

std::string section_models(const Model& m) {
    std::string out = m.heading("models", "Success against the system's internal model");
    // Runs whose configurations are equal once the system model is removed form a comparison.
    std::map<std::string, std::vector<std::size_t>> groups;
    std::vector<std::string> order;
    for (std::size_t i = 0; i < m.runs.size(); ++i) {
        if (!system_model(m.runs[i].config)) continue;
        json key = m.runs[i].config;
        key["llm"]["models"].erase("system");
        const std::string k = key.dump();
        if (!groups.count(k)) order.push_back(k);
        groups[k].push_back(i);
    }
    int charts = 0;
    for (const auto& key : order) {
        const auto& members = groups[key];
        // One run per model: a rerun of the same configuration keeps its latest run.
        std::vector<std::string> models;
        std::map<std::string, std::size_t> run_of_model;
        for (std::size_t i : members) {
            const std::string model = *system_model(m.runs[i].config);
            if (!run_of_model.count(model)) models.push_back(model);
            run_of_model[model] = i;
        }
        if (models.size() < 2) continue;
        // The largest k every run of the group has.
        int k = 0;
        for (auto it = m.ks.rbegin(); it != m.ks.rend() && k == 0; ++it) {
            bool all = true;
            for (const auto& [model, i] : run_of_model) {
                bool has = false;
                for (const auto& d : m.datasets) has |= m.find(m.runs[i].record.id, d, *it) != nullptr;
                all &= has;
            }
            if (all) k = *it;
        }
        if (k == 0) continue;
        ++charts;
        svg::LineChart chart;
        const std::string system = json_string_or(m.runs[members.front()].config, "system");
        chart.title = "Success of " + system + " by internal model at k=" + std::to_string(k);
        chart.x_label = "the system's internal model (in run order)";
        chart.y_label = m.end_to_end ? "end-to-end success (%)" : "memory-side success (%)";
        chart.x_categories = models;
        Table t;
        t.columns = {{"model", Align::left}, {"run", Align::right}, {"dataset", Align::left}, {"k", Align::right},
                     {"rate %", Align::right}, {"95% CI", Align::left}, {"probes", Align::right}};
        for (std::size_t di = 0; di < m.datasets.size(); ++di) {
            svg::LineSeries s;
            s.name = m.datasets[di];
            s.colour = svg::palette_colour(di);
            for (std::size_t mi = 0; mi < models.size(); ++mi) {
                const auto& run = m.runs[run_of_model[models[mi]]];
                const store::SummaryRow* r = m.find(run.record.id, m.datasets[di], k);
                if (!r) continue;
                const Success su = success_of(*r, m.end_to_end);
                s.points.push_back({static_cast<double>(mi), su.rate, su.ci,
                                    m.datasets[di] + " \u00b7 " + models[mi] + " (" + run.label + ") \u00b7 k=" +
                                        std::to_string(k) + ": " + success_text(su),
                                    {}});
                t.rows.push_back({models[mi], run.name, m.datasets[di], std::to_string(k),
                                  percent(su.rate), "[" + percent(su.ci.low) + ", " + percent(su.ci.high) + "]",
                                  std::to_string(su.trials)});
            }
            if (!s.points.empty()) chart.series.push_back(std::move(s));
        }
        chart.legend = svg::Legend::none;
        out += figure(svg::render(chart), chart.title + " (runs whose configurations differ only in that model)",
                      svg::legend_html(svg::legend_entries(chart)));
        out += "<details class=\"fold\"><summary>The numbers</summary>" + html_table(t) + "</details>";
    }
    if (charts == 0)
        out += "<p class=\"empty\">No two of these runs differ only in the system's internal model, so there is "
               "nothing to compare here (run the same system and datasets with another <code>--system-model</code> "
               "to fill this section).</p>";
    return out + "</section>";
}

Result<std::string> section_tokens(store::ResultsDb& db, const Model& m) {
    std::string out = m.heading("tokens", "Success against tokens per stored memory");
    // One k for every point, so points compare: the largest k all runs have; else each run's largest.
    int common_k = 0;
    for (auto it = m.ks.rbegin(); it != m.ks.rend() && common_k == 0; ++it) {
        bool all = true;
        for (const auto& run : m.runs) {
            bool has = false;
            for (const auto& d : m.datasets) has |= m.find(run.record.id, d, *it) != nullptr;
            all &= has;
        }
        if (all) common_k = *it;
    }
    svg::LineChart chart;
    chart.title = "Success against mean tokens per stored memory";
    chart.x_label = "mean tokens per stored memory (cl100k_base tokens)";
    chart.y_label = m.end_to_end ? "end-to-end success (%)" : "memory-side success (%)";
    Table t;
    t.columns = {{"dataset", Align::left}, {"run", Align::right},     {"system", Align::left},
                 {"memories", Align::right}, {"tokens", Align::right}, {"tok/memory", Align::right},
                 {"k", Align::right},        {"rate %", Align::right}};
    std::vector<std::string> uncounted;
    // One series per run, in its own colour: a line joins only one system's points (its datasets,
    // by tokens per memory), and every point is labelled with the run's short name.
    for (std::size_t ri = 0; ri < m.runs.size(); ++ri) {
        const RunInfo& run = m.runs[ri];
        svg::LineSeries s;
        s.name = run.label;
        s.colour = svg::palette_colour(ri);
        for (const auto& d : m.datasets) {
            MF_TRY_ASSIGN(auto stats, db.memory_stats(run.record.id, d));
            if (!stats) continue;
            int k = common_k;
            if (k == 0)
                for (int candidate : m.ks)
                    if (m.find(run.record.id, d, candidate)) k = candidate;
            const store::SummaryRow* r = m.find(run.record.id, d, k);
            if (!stats->tokens || stats->memories <= 0) {
                uncounted.push_back(d + " (" + run.label + ")");
                continue;
            }
            if (!r) continue;
            const double per_memory = static_cast<double>(*stats->tokens) / static_cast<double>(stats->memories);
            const Success su = success_of(*r, m.end_to_end);
            svg::LinePoint point{per_memory, su.rate, std::nullopt,
                                 d + " \u00b7 " + run.label + ": " + fixed(per_memory, 1) + " tokens per memory (" +
                                     std::to_string(*stats->tokens) + " tokens in " + std::to_string(stats->memories) +
                                     " memories); success at k=" + std::to_string(k) + " " + success_text(su),
                                 run.short_name};
            s.points.push_back(std::move(point));
            t.rows.push_back({d, run.name, run.record.system_spec, std::to_string(stats->memories),
                              std::to_string(*stats->tokens), fixed(per_memory, 1), std::to_string(k),
                              percent(su.rate)});
        }
        if (!s.points.empty()) chart.series.push_back(std::move(s));
    }
    // The numbers grouped by dataset, as they are read against each other.
    std::stable_sort(t.rows.begin(), t.rows.end(), [&](const std::vector<std::string>& a, const std::vector<std::string>& b) {
        return std::find(m.datasets.begin(), m.datasets.end(), a[0]) < std::find(m.datasets.begin(), m.datasets.end(), b[0]);
    });
    if (chart.series.empty()) {
        out += "<p class=\"empty\">Tokens per stored memory were not counted for these runs (no tokenizer was "
               "available when they ran), so this trade-off cannot be drawn.</p>";
    } else {
        out += "<p>The paper's token/accuracy trade-off: longer memories keep more detail but cost more to store and "
               "retrieve. Each point is one run on one dataset (hover it for which), labelled with the run and measured "
               "on the store at the dataset's last checkpoint; a line joins one run's datasets only";
        out += common_k ? ", with success at k=" + std::to_string(common_k) + ".</p>"
                        : "; success is at each run's largest k (the runs share no k).</p>";
        chart.legend = svg::Legend::none;
        out += figure(svg::render(chart), chart.title + " (one line per run)", svg::legend_html(svg::legend_entries(chart)));
        out += "<details class=\"fold\"><summary>The numbers</summary>" + html_table(t) + "</details>";
    }
    if (!uncounted.empty() && !chart.series.empty()) {
        std::string list;
        for (std::size_t i = 0; i < uncounted.size(); ++i) list += (i ? ", " : "") + uncounted[i];
        out += "<p class=\"note\">Tokens were not counted for " + h(list) + "; those are left out.</p>";
    }
    return out + "</section>";
}

Result<std::string> section_runs(store::ResultsDb& db, const Model& m, const HtmlReportOptions& options) {
    std::string out = m.heading("runs", "Runs");
    std::vector<std::int64_t> ids;
    for (const auto& run : m.runs) ids.push_back(run.record.id);
    Table runs;
    runs.title = "Runs";
    runs.columns = {{"run", Align::right},         {"system", Align::left},     {"status", Align::left},
                    {"started", Align::left},      {"finished", Align::left},   {"code", Align::left},
                    {"config hash", Align::left},  {"protocol", Align::left},   {"grader", Align::left},
                    {"prompts", Align::left},
                    {"models (system / answer / judge / embed)", Align::left}};
    for (const auto& run : m.runs) {
        const json& c = run.config;
        std::string grader = c.contains("grader") && c["grader"].is_string() ? c["grader"].get<std::string>() : "-";
        std::string prompts = json_string_or(c, "prompt_version", "-");
        if (c.contains("judge_version")) prompts += " (judge " + json_string_or(c, "judge_version", "-") + ")";
        std::string models = "-";
        if (auto llm = c.find("llm"); llm != c.end() && llm->is_object() && llm->contains("models")) {
            const json& ms = (*llm)["models"];
            auto name = [&](const char* role) { return json_string_or(ms, role, "-"); };
            models = name("system") + " / " + name("answer") + " / " + name("judge") + " / " + name("embed");
        }
        runs.rows.push_back({run.name, run.record.system_spec, run.record.status,
                             run.record.started_at, run.record.finished_at.empty() ? "-" : run.record.finished_at,
                             run.record.code_version, run.record.config_hash.substr(0, 12), run.record.protocol(),
                             grader, prompts, models});
    }
    out += html_table(runs);
    for (const auto& run : m.runs)
        if (!run.record.error.empty())
            out += "<p class=\"error\">Run " + h(run.name) + " stopped with an error: " +
                   h(run.record.error) + "</p>";

    Table data;
    data.title = "Datasets, stores and latencies";
    data.columns = {{"run", Align::right},          {"dataset", Align::left},        {"hash", Align::left},
                    {"scenarios", Align::right},    {"sessions", Align::right},      {"probes", Align::right},
                    {"memories", Align::right},     {"tok/memory", Align::right},    {"store p50 ms", Align::right},
                    {"store p95 ms", Align::right}, {"retrieve p50 ms", Align::right}, {"retrieve p95 ms", Align::right}};
    for (const auto& run : m.runs) {
        MF_TRY_ASSIGN(auto scenarios, db.scenarios(run.record.id));
        // Scenarios of one dataset share a row.
        std::vector<std::string> names;
        std::map<std::string, std::tuple<std::set<std::string>, std::int64_t, std::int64_t, std::int64_t>> per;
        for (const auto& s : scenarios) {
            if (!per.count(s.dataset)) names.push_back(s.dataset);
            auto& [hashes, count, sessions, probes] = per[s.dataset];
            hashes.insert(s.dataset_hash.substr(0, 12));
            ++count;
            sessions += s.sessions;
            probes += s.probes;
        }
        for (const auto& d : names) {
            const auto& [hashes, count, sessions, probes] = per[d];
            std::string hash;
            for (const auto& x : hashes) hash += (hash.empty() ? "" : " ") + x;
            MF_TRY_ASSIGN(auto stats, db.memory_stats(run.record.id, d));
            std::string memories = "-", per_memory = "-";
            if (stats) {
                memories = std::to_string(stats->memories);
                if (stats->tokens && stats->memories > 0)
                    per_memory = fixed(static_cast<double>(*stats->tokens) / static_cast<double>(stats->memories), 1);
            }
            MF_TRY_ASSIGN(auto store_us, micros(db, k_store_micros, run.record.id, d));
            MF_TRY_ASSIGN(auto retrieve_us, micros(db, k_retrieve_micros, run.record.id, d));
            auto ms = [](std::vector<std::int64_t>& v, double q) { return v.empty() ? std::string("-") : fixed(quantile_ms(v, q), 2); };
            data.rows.push_back({run.name, d, hash, std::to_string(count), std::to_string(sessions),
                                 std::to_string(probes), memories, per_memory, ms(store_us, 0.5), ms(store_us, 0.95),
                                 ms(retrieve_us, 0.5), ms(retrieve_us, 0.95)});
        }
    }
    data.notes.push_back("hash: the first 12 hex digits of each scenario file's content hash. memories, tok/memory: the "
                         "store at the dataset's last checkpoint, in cl100k_base tokens. Latencies: store per session, "
                         "retrieve per probe and k.");
    out += html_table(data);

    MF_TRY_ASSIGN(Table usage, llm_usage_table(db, ids));
    if (usage.rows.empty()) {
        out += "<p>No LLM calls were made by these runs (rules grading, no model-backed system).</p>";
    } else {
        out += html_table(usage);
        if (options.prices.empty()) {
            out += "<p class=\"small\">No prices were given, so no cost is shown (<code>memfail report --html ... "
                   "--price MODEL=INPUT/OUTPUT</code>, US dollars per million tokens).</p>";
        } else {
            MF_TRY_ASSIGN(Table cost, llm_cost_table(db, ids, options.prices));
            out += html_table(cost);
        }
    }
    MF_TRY_ASSIGN(Table agreement, agreement_table(db, ids));
    if (!agreement.rows.empty()) out += html_table(agreement);

    for (const auto& run : m.runs)
        out += "<details class=\"fold\"><summary>Configuration of run " + h(run.name) + "</summary><pre>" +
               h(run.config.dump(2, ' ', false, json::error_handler_t::replace)) + "</pre></details>";
    return out + "</section>";
}

// Orders "p2" before "p10": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
        const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
        if (da && db) {
            std::size_t ei = i, ej = j;
            while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
            while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
            std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
            na.erase(0, std::min(na.find_first_not_of('0'), na.size()));
            nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size()));
            if (na.size() != nb.size()) return na.size() < nb.size();
            if (na != nb) return na < nb;
            i = ei;
            j = ej;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

// A write-integrity probe's own fields (format memfail/2) for the browser: the expected value and
// the message stating it, the rubric, the temporal query, the targets, whether it should be
// abstained on, and the targets' value histories when the recorded probe carries them ("ledger":
// ledger events as a dataset states them).
void add_integrity_fields(json& probe, const json& pj) {
    if (auto it = pj.find("expected"); it != pj.end() && !it->is_null()) probe["x"] = *it;
    if (pj.contains("expected_source")) probe["xs"] = json_string_or(pj, "expected_source");
    if (auto it = pj.find("rubric"); it != pj.end() && it->is_object()) {
        probe["rk"] = json_string_or(*it, "kind");
        if (it->contains("method")) probe["rm"] = json_string_or(*it, "method");
    }
    if (auto it = pj.find("temporal"); it != pj.end() && it->is_object()) {
        json t = json::object();
        if (it->contains("as_of")) t["as_of"] = json_string_or(*it, "as_of");
        t["current"] = !it->contains("expect_current") || !(*it)["expect_current"].is_boolean() ||
                       (*it)["expect_current"].get<bool>();
        probe["tq"] = std::move(t);
    }
    if (auto it = pj.find("targets"); it != pj.end() && it->is_array() && !it->empty()) probe["tg"] = *it;
    if (auto it = pj.find("should_abstain"); it != pj.end() && it->is_boolean() && it->get<bool>()) probe["sa"] = true;
    if (auto it = pj.find("ledger"); it != pj.end() && it->is_array()) {
        json events = json::array();
        for (const auto& e : *it) {
            if (!e.is_object()) continue;
            json history = json::array();
            if (auto hs = e.find("history"); hs != e.end() && hs->is_array())
                for (const auto& r : *hs)
                    if (r.is_object())
                        history.push_back({r.contains("value") ? r["value"] : json(nullptr), json_string_or(r, "as_of"),
                                           json_string_or(r, "message_id"), json_string_or(r, "authority")});
            json event = {{"id", json_string_or(e, "id")}, {"h", std::move(history)}};
            if (e.contains("retracted_in")) event["ri"] = json_string_or(e, "retracted_in");
            if (e.contains("should_persist") && e["should_persist"].is_boolean() && !e["should_persist"].get<bool>())
                event["np"] = true;
            events.push_back(std::move(event));
        }
        if (!events.empty()) probe["lg"] = std::move(events);
    }
    if (probe.contains("x") || probe.contains("rk") || probe.contains("tg")) probe["v2"] = true;
}

// The probe browser's data: texts that repeat (probes across k and runs, memories across k) are
// stored once and referenced by index.
Result<std::string> probe_data(store::ResultsDb& db, const Model& m, const HtmlReportOptions& options,
                               std::size_t& embedded, std::size_t& total) {
    json runs = json::array();
    for (const auto& run : m.runs) runs.push_back({{"id", run.record.id}, {"label", run.label}});
    json stages = json::array();
    for (const auto& s : svg::stage_order()) stages.push_back({s, svg::stage_label(s), svg::stage_colour(s)});
    std::map<std::string, std::size_t> dataset_index;
    json datasets = json::array();
    json probes = json::array();
    std::map<std::string, std::size_t> probe_index;
    json memories = json::array();
    std::map<std::string, std::size_t> memory_index;
    auto intern_memory = [&](const std::string& id, const std::string& text, const json& sources) {
        const std::string key = id + '\x1f' + text + '\x1f' + sources.dump();
        auto it = memory_index.find(key);
        if (it != memory_index.end()) return it->second;
        memories.push_back({id, text, sources});
        return memory_index[key] = memories.size() - 1;
    };
    // Explanations and reasons are often templated and repeat across k: kept once each.
    json strings = json::array();
    std::map<std::string, std::size_t> string_index;
    auto intern = [&](const std::string& text) {
        auto [it, added] = string_index.emplace(text, strings.size());
        if (added) strings.push_back(text);
        return it->second;
    };
    auto parse = [](const std::string& text, json fallback) {
        json j = json::parse(text, nullptr, false);
        return j.is_discarded() ? fallback : j;
    };
    // Memory checks in the suites' order (SuiteReport::check_order), any other after them by name.
    std::vector<std::string> order;
    for (const suites::Suite* suite : suites::all_suites())
        if (const SuiteReport* section = suite->report())
            for (auto& name : section->check_order()) order.push_back(std::move(name));
    auto check_rank = [&order](const std::string& name) {
        return static_cast<std::size_t>(std::find(order.begin(), order.end(), name) - order.begin());
    };
    std::set<std::pair<std::size_t, std::string>> check_names;
    json rows = json::array();
    embedded = total = 0;
    for (std::size_t ri = 0; ri < m.runs.size(); ++ri) {
        const std::int64_t run_id = m.runs[ri].record.id;
        MF_TRY_ASSIGN(auto recorded, db.recorded_memories(run_id));
        std::map<std::tuple<std::string, std::string, std::string>, std::size_t> stored;
        for (const auto& r : recorded)
            stored[{r.scenario_id, r.checkpoint, r.memory.id}] =
                intern_memory(r.memory.id, r.memory.text, parse(r.memory.sources_json, json::array()));
        // The suite's memory checks (write integrity) of each probe x k, in report order.
        MF_TRY_ASSIGN(auto recorded_checks, db.memory_checks(run_id));
        std::map<std::tuple<std::string, std::string, int>, std::vector<const store::MemoryCheckRow*>> memory_checks;
        for (const auto& c : recorded_checks) memory_checks[{c.scenario_id, c.probe_id, c.k}].push_back(&c.row);
        for (auto& [key, list] : memory_checks)
            std::stable_sort(list.begin(), list.end(), [&](const store::MemoryCheckRow* a, const store::MemoryCheckRow* b) {
                return check_rank(a->check) < check_rank(b->check);
            });
        MF_TRY_ASSIGN(auto probe_rows, db.probe_rows(run_id));
        total += probe_rows.size();
        // Datasets in the report's order, probes in natural order, then k.
        auto dataset_rank = [&](const std::string& d) {
            return static_cast<std::size_t>(std::find(m.datasets.begin(), m.datasets.end(), d) - m.datasets.begin());
        };
        std::stable_sort(probe_rows.begin(), probe_rows.end(), [&](const store::ProbeRow& a, const store::ProbeRow& b) {
            const std::size_t ra = dataset_rank(a.dataset), rb = dataset_rank(b.dataset);
            if (ra != rb) return ra < rb;
            if (a.scenario_id != b.scenario_id) return natural_less(a.scenario_id, b.scenario_id);
            if (a.probe_id != b.probe_id) return natural_less(a.probe_id, b.probe_id);
            return a.k < b.k;
        });
        for (const auto& p : probe_rows) {
            if (options.max_probes && embedded >= *options.max_probes) continue;
            ++embedded;
            if (!dataset_index.count(p.dataset)) {
                dataset_index[p.dataset] = datasets.size();
                datasets.push_back(p.dataset);
            }
            json row = {{"r", ri}, {"d", dataset_index[p.dataset]}, {"p", p.probe_id}, {"k", p.k}, {"st", p.stage},
                        {"kind", p.kind}};
            if (!p.probe_json.empty()) {
                auto it = probe_index.find(p.probe_json);
                if (it == probe_index.end()) {
                    const json pj = parse(p.probe_json, json::object());
                    json evidence = json::array();
                    if (pj.contains("evidence") && pj["evidence"].is_array())
                        for (const auto& f : pj["evidence"])
                            evidence.push_back({{"id", json_string_or(f, "id")}, {"text", json_string_or(f, "text")}});
                    json probe = {{"q", json_string_or(pj, "question")}, {"a", json_string_or(pj, "answer")},
                                  {"ev", evidence}};
                    if (pj.contains("choices") && pj["choices"].is_array()) probe["ch"] = pj["choices"];
                    if (pj.contains("correct_choice")) probe["cc"] = json_string_or(pj, "correct_choice");
                    add_integrity_fields(probe, pj);
                    probes.push_back(std::move(probe));
                    it = probe_index.emplace(p.probe_json, probes.size() - 1).first;
                }
                row["pi"] = it->second;
            }
            json retrieved = json::array();
            const json hits = parse(p.retrieved_json, json::array());
            if (hits.is_array())
                for (const auto& hit : hits) {
                    const double score = hit.contains("score") && hit["score"].is_number() ? hit["score"].get<double>() : 0.0;
                    retrieved.push_back({intern_memory(json_string_or(hit, "id"), json_string_or(hit, "text"),
                                                       hit.contains("sources") ? hit["sources"] : json::array()),
                                         std::round(score * 10000) / 10000});
                }
            row["t"] = std::move(retrieved);
            json facts = json::array();
            for (const auto& f : p.facts) {
                json in_store = json::array();
                const json ids = parse(f.stored_json, json::array());
                if (ids.is_array())
                    for (const auto& id : ids) {
                        const std::string sid = id.is_string() ? id.get<std::string>() : id.dump();
                        auto it = stored.find({p.scenario_id, p.checkpoint, sid});
                        if (it != stored.end()) in_store.push_back(it->second);
                        else in_store.push_back(sid);  // the id alone: its text was not recorded
                    }
                json fact = {{"id", f.fact_id}, {"st", f.stage}, {"m", f.method}, {"x", intern(f.explanation)}, {"s", in_store},
                             {"rt", parse(f.retrieved_json, json::array())}};
                const json missing = parse(f.missing_json, json::array());
                if (missing.is_array() && !missing.empty()) fact["miss"] = missing;
                facts.push_back(std::move(fact));
            }
            row["f"] = std::move(facts);
            json checks = json::array();
            for (const auto& c : p.checks)
                checks.push_back({c.fact_id, c.stage, c.grader, c.passed, c.decisive, intern(c.reason)});
            if (!checks.empty()) row["c"] = std::move(checks);
            if (auto it = memory_checks.find({p.scenario_id, p.probe_id, p.k}); it != memory_checks.end()) {
                // [check name, passed (true, false or null: unverified), detail], texts as string indexes.
                json list = json::array();
                for (const auto* c : it->second) {
                    list.push_back({intern(c->check), c->passed ? json(*c->passed) : json(nullptr), intern(c->detail)});
                    check_names.insert({check_rank(c->check), c->check});
                }
                row["mc"] = std::move(list);
                row["s"] = intern(p.scenario_id);  // pairs the probe's rows at other k
            }
            if (p.answer) row["a"] = *p.answer;
            if (p.answer_correct) row["ac"] = *p.answer_correct;
            if (p.reasoning != "not graded") row["rs"] = p.reasoning;
            if (!p.error.empty()) row["e"] = p.error;
            rows.push_back(std::move(row));
        }
    }
    json all = {{"runs", runs},     {"stages", stages},     {"datasets", datasets},
                {"probes", probes}, {"memories", memories}, {"strings", strings}, {"rows", rows}};
    json checks = json::array();
    for (const auto& [rank, name] : check_names) checks.push_back(name);
    all["checks"] = std::move(checks);
    std::string text = all.dump(-1, ' ', false, json::error_handler_t::replace);
    // '<' only occurs inside JSON strings, where \u003c means the same: no "</script>" or "<!--" can
    // end or confuse the script element.
    std::string out;
    out.reserve(text.size() + text.size() / 64);
    for (char c : text) {
        if (c == '<') out += "\\u003c";
        else out += c;
    }
    return out;
}

constexpr const char* k_css = R"css(
:root{--fg:#1d1f21;--muted:#5b6168;--line:#d8dce0;--bg:#ffffff;--soft:#f5f7f9;--accent:#2b5d8a}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg)}
header,main{max-width:1180px;margin:0 auto;padding:0 20px}
header{padding-top:18px;border-bottom:1px solid var(--line)}
h1{font-size:1.6em;margin:0 0 4px}
h2{font-size:1.25em;margin:32px 0 8px;padding-top:8px;border-top:1px solid var(--line)}
h3{font-size:1.05em;margin:16px 0 4px}
nav ol{display:flex;flex-wrap:wrap;gap:4px 18px;padding:0;margin:8px 0 12px;list-style:none}
nav a{color:var(--accent)}
.meta{color:var(--muted);margin:0}
.banner{border:2px solid #b42318;background:#fef3f2;color:#7a271a;padding:.6em .9em;border-radius:6px;font-size:1.05em}
figure{margin:12px 0}
figcaption{color:var(--muted);font-size:.9em}
.chart-wrap{overflow-x:auto}
.legend{display:flex;flex-wrap:wrap;gap:2px 14px;list-style:none;margin:4px 0;padding:0;max-width:100%;font-size:.85em}
.legend-entry{display:flex;align-items:baseline;gap:6px;min-width:0;overflow-wrap:anywhere}
.swatch{flex:none;display:inline-block;width:11px;height:11px;border-radius:2px;border:1px solid rgba(0,0,0,.2)}
svg.chart{max-width:100%;height:auto;display:block}
.table-wrap{overflow-x:auto;margin:10px 0}
table{border-collapse:collapse;font-size:.86em}
caption{text-align:left;font-weight:600;padding:4px 0}
th,td{border-bottom:1px solid var(--line);padding:3px 8px;vertical-align:top;text-align:left}
th{background:var(--soft)}
td{white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.note{color:var(--muted);font-size:.85em;margin:2px 0}
.empty{font-style:italic}
.error{color:#a4262c}
pre{background:var(--soft);padding:8px;overflow-x:auto;font-size:.82em}
details>summary{cursor:pointer}
.controls{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:center;margin:8px 0}
.controls input[type=search]{min-width:16em}
.probe{border:1px solid var(--line);border-radius:4px;margin:4px 0;padding:2px 8px}
.probe[open]{background:var(--soft)}
.probe>summary{display:flex;gap:10px;align-items:baseline;flex-wrap:wrap}
.chip{display:inline-block;border-radius:3px;padding:0 6px;font-size:.82em;border:1px solid rgba(0,0,0,.15)}
.pid{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em}
.q{color:var(--muted)}
.probe-body{padding:4px 0 8px}
.probe-body h4{margin:10px 0 2px;font-size:.95em}
.probe-body ol,.probe-body ul{margin:2px 0;padding-left:22px}
.mem{white-space:pre-wrap}
.small{color:var(--muted);font-size:.85em}
.pass{color:#0b6b3a}.fail{color:#a4262c}.unv{color:var(--muted)}
.probe-body table.checks{margin:4px 0}
.probe-body td.detail{white-space:normal;min-width:18em}
.probe-body tr.cur td{font-weight:600}
.pager{display:flex;gap:10px;align-items:center;margin:8px 0}
@media print{
  .controls,.pager,.k-picker,#browser{display:none!important}
  .k-view[hidden]{display:block!important}
  details{display:block}
  details>summary{display:none}
  h2{break-after:avoid}
  figure,table{break-inside:avoid}
  .chart-wrap{overflow:visible}
}
)css";

// Vanilla script: the k picker of section 2 and the probe browser. Data goes in through
// textContent only, never innerHTML, so nothing in the results file can become markup.
constexpr const char* k_script = R"js(
(function () {
  'use strict';
  var picker = document.getElementById('stage-k');
  if (picker) {
    var showK = function () {
      var views = document.querySelectorAll('.k-view');
      for (var i = 0; i < views.length; i++) views[i].hidden = views[i].getAttribute('data-k') !== picker.value;
    };
    picker.addEventListener('change', showK);
    picker.closest('.k-picker').hidden = false;
    showK();
  }
  // Printing shows folded tables.
  window.addEventListener('beforeprint', function () {
    var folds = document.querySelectorAll('details.fold');
    for (var i = 0; i < folds.length; i++) folds[i].open = true;
  });
  var blob = document.getElementById('probe-data');
  var root = document.getElementById('browser');
  if (!blob || !root) return;
  var D = JSON.parse(blob.textContent);
  root.hidden = false;
  var stageInfo = {};
  D.stages.forEach(function (s) { stageInfo[s[0]] = { label: s[1], colour: s[2] }; });
  stageInfo.needs_answer_stage = stageInfo.needs_answer_stage || { label: 'abstain', colour: '#c9d3dd' };
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function chip(stage) {
    var info = stageInfo[stage] || { label: stage, colour: '#8c8c8c' };
    var c = el('span', 'chip', info.label);
    c.style.background = info.colour;
    return c;
  }
  function option(select, value, label) {
    var o = el('option', null, label);
    o.value = value;
    select.appendChild(o);
  }
  var fRun = document.getElementById('f-run'), fData = document.getElementById('f-dataset'),
      fStage = document.getElementById('f-stage'), fK = document.getElementById('f-k'),
      fText = document.getElementById('f-text'), list = document.getElementById('probe-list'),
      status = document.getElementById('probe-status'), prev = document.getElementById('prev'),
      next = document.getElementById('next');
  D.runs.forEach(function (r, i) { option(fRun, String(i), r.label); });
  D.datasets.forEach(function (d, i) { option(fData, String(i), d); });
  var seenStage = {}, seenK = {};
  D.rows.forEach(function (r) { seenStage[r.st] = true; seenK[r.k] = true; });
  D.stages.forEach(function (s) { if (seenStage[s[0]]) option(fStage, s[0], s[1]); });
  Object.keys(seenStage).forEach(function (s) { if (!stageInfo[s] || !D.stages.some(function (x) { return x[0] === s; })) option(fStage, s, s); });
  Object.keys(seenK).map(Number).sort(function (a, b) { return a - b; }).forEach(function (k) { option(fK, String(k), 'k=' + k); });
  var fCheck = document.getElementById('f-check');
  var checkNames = D.checks || [];
  if (checkNames.length) {
    document.getElementById('f-check-label').hidden = false;
    checkNames.forEach(function (c) { option(fCheck, c, c + ' failed'); });
  }
  // The rows of one probe (run, dataset, scenario, probe) at every k, in k order.
  var siblings = {};
  function probeKey(r) { return r.r + '|' + r.d + '|' + r.s + '|' + r.p; }
  D.rows.forEach(function (r) {
    if (r.mc === undefined) return;
    (siblings[probeKey(r)] = siblings[probeKey(r)] || []).push(r);
  });
  function failedChecks(r) { return (r.mc || []).filter(function (c) { return c[1] === false; }); }
  var PAGE = 50, page = 0, shown = [];
  function question(r) { return r.pi === undefined ? '' : D.probes[r.pi].q; }
  function matches(r) {
    if (fRun.value !== '' && String(r.r) !== fRun.value) return false;
    if (fData.value !== '' && String(r.d) !== fData.value) return false;
    if (fStage.value !== '' && r.st !== fStage.value) return false;
    if (fK.value !== '' && String(r.k) !== fK.value) return false;
    if (fCheck.value !== '' && !failedChecks(r).some(function (c) {
      return fCheck.value === '*' || D.strings[c[0]] === fCheck.value;
    })) return false;
    var t = fText.value.trim().toLowerCase();
    if (t && (r.p + ' ' + question(r)).toLowerCase().indexOf(t) < 0) return false;
    return true;
  }
  function memoryItem(ref, parent, extra) {
    var li = add(parent, el('li', 'mem'));
    if (typeof ref === 'string') {
      li.textContent = ref + ' (its text was not recorded)';
      return;
    }
    var m = D.memories[ref];
    li.appendChild(document.createTextNode(m[1]));
    var info = 'id ' + m[0] + (m[2] && m[2].length ? '; sources ' + m[2].join(', ') : '') + (extra || '');
    add(li, el('div', 'small', info));
  }
  function valueText(v) { return typeof v === 'string' ? v : JSON.stringify(v); }
  // A write-integrity probe: what it expects, how it is graded, and its memory checks at every k.
  function integrity(body, r, probe) {
    var own = r.mc ? siblings[probeKey(r)] || [r] : [];
    var v2 = probe && probe.v2;
    if (!v2 && !own.length) return;
    var box = add(body, el('div', 'integrity'));
    box.setAttribute('data-integrity', '');
    add(box, el('h4', null, 'Write integrity'));
    if (v2) {
      if (probe.x !== undefined)
        add(box, el('p', null, 'Expected: ' + valueText(probe.x) + (probe.xs ? ' (stated in message ' + probe.xs + ')' : '')));
      var about = [];
      if (probe.rk) about.push('answer graded by the ' + probe.rk + ' rubric' + (probe.rm ? ' (' + probe.rm + ')' : ''));
      if (probe.tq) about.push(probe.tq.current ? 'asks about now' : 'asks about the past: the value valid on ' + (probe.tq.as_of || '(no date)'));
      if (probe.tg) about.push('about ' + probe.tg.join(', '));
      if (probe.sa) about.push('should be abstained on');
      if (about.length) add(box, el('p', 'small', about.join(' \u00b7 ')));
      if (probe.lg) {
        add(box, el('div', 'small', 'Value history:'));
        var hl = add(box, el('ul', 'small'));
        probe.lg.forEach(function (e) {
          var steps = e.h.map(function (v) {
            return '\u201c' + valueText(v[0]) + '\u201d from ' + (v[1] || '(no date)') +
              (v[2] ? ' (message ' + v[2] + (v[3] ? ', ' + v[3] : '') + ')' : '');
          });
          add(hl, el('li', null, e.id + ': ' + steps.join(' \u2192 ') + (e.ri ? '; retracted in session ' + e.ri : '') +
            (e.np ? '; should not persist' : '')));
        });
      } else if (probe.tg) {
        add(box, el('p', 'small', 'The full value history of ' + (probe.tg.length > 1 ? 'these facts' : 'this fact') +
          ' is in the dataset file (its scenario\u2019s ledger), not in the results file; the checks below name the values they found.'));
      }
    }
    if (!own.length) {
      add(box, el('p', 'empty', 'No memory check was recorded for this probe (none applies to it, or its row ended in error).'));
      return;
    }
    var names = [];
    own.forEach(function (o) { o.mc.forEach(function (c) { if (names.indexOf(c[0]) < 0) names.push(c[0]); }); });
    names.sort(function (a, b) { return checkNames.indexOf(D.strings[a]) - checkNames.indexOf(D.strings[b]); });
    var table = add(add(box, el('div', 'table-wrap')), el('table', 'checks'));
    var head = add(add(table, el('thead')), el('tr'));
    ['memory check', 'k', 'verdict', 'what it found'].forEach(function (t) { add(head, el('th', null, t)); });
    var tbody = add(table, el('tbody'));
    names.forEach(function (n) {
      own.forEach(function (o) {
        o.mc.forEach(function (c) {
          if (c[0] !== n) return;
          var tr = add(tbody, el('tr', o === r ? 'cur' : null));
          tr.setAttribute('data-check', D.strings[n]);
          add(tr, el('td', null, D.strings[n]));
          add(tr, el('td', 'num', o.k));
          add(tr, el('td', c[1] === true ? 'pass' : c[1] === false ? 'fail' : 'unv',
            c[1] === true ? 'passed' : c[1] === false ? 'failed' : 'unverified'));
          add(tr, el('td', 'detail', D.strings[c[2]]));
        });
      });
    });
    add(box, el('p', 'small', 'Each memory check of this probe at every k (in bold: k=' + r.k + ', this row). ' +
      'unverified: a read operation of the system failed, so the check could not be decided.'));
  }
  function fill(body, r) {
    var probe = r.pi === undefined ? null : D.probes[r.pi];
    add(body, el('h4', null, 'Probe'));
    if (!probe) {
      add(body, el('p', 'empty', 'Probe ' + r.p + ': its question was not recorded (this run predates schema 3).'));
    } else {
      add(body, el('p', null, probe.q));
      if (probe.ch) {
        var ol = add(body, el('ol'));
        ol.type = 'A';
        probe.ch.forEach(function (c, i) {
          var letter = String.fromCharCode(65 + i);
          add(ol, el('li', letter === probe.cc ? 'pass' : null, c + (letter === probe.cc ? '  (correct)' : '')));
        });
      }
      add(body, el('p', 'small', 'Reference answer: ' + (probe.a || '(none)') + ' \u00b7 kind ' + r.kind + ' \u00b7 k=' + r.k));
    }
    integrity(body, r, probe);
    var facts = r.f || [], checks = r.c || [];
    var factText = {};
    if (probe) probe.ev.forEach(function (e) { factText[e.id] = e.text; });
    add(body, el('h4', null, facts.length ? 'Evidence facts' : 'Evidence facts: none (nothing to find; the answer decides)'));
    facts.forEach(function (f) {
      var box = add(body, el('div', 'fact'));
      var line = add(box, el('p'));
      line.appendChild(chip(f.st));
      line.appendChild(document.createTextNode(' ' + f.id + ': ' + (factText[f.id] || '(fact text not recorded)')));
      add(box, el('div', 'small', 'decided by ' + f.m + (D.strings[f.x] ? ': ' + D.strings[f.x] : '') + (f.miss ? ' \u00b7 missing: ' + f.miss.join(', ') : '')));
      var own = checks.filter(function (c) { return c[0] === f.id; });
      if (own.length) {
        var ul = add(box, el('ul', 'small'));
        own.forEach(function (c) {
          add(ul, el('li', c[3] ? 'pass' : 'fail', c[1] + ' check by ' + c[2] + ': ' + (c[3] ? 'passed' : 'failed') +
            (c[4] ? ' (decisive)' : '') + (D.strings[c[5]] ? ' \u2014 ' + D.strings[c[5]] : '')));
        });
      }
      add(box, el('div', 'small', f.s.length ? 'Stored in:' : 'Stored in no memory.'));
      if (f.s.length) {
        var sl = add(box, el('ul'));
        f.s.forEach(function (ref) {
          var inTop = typeof ref !== 'string' && (r.t || []).some(function (t) { return t[0] === ref; });
          memoryItem(ref, sl, inTop ? '; in the top k' : '');
        });
      }
    });
    var answerChecks = checks.filter(function (c) { return !c[0]; });
    add(body, el('h4', null, 'Retrieved (k=' + r.k + ')'));
    if (!r.t || !r.t.length) add(body, el('p', 'empty', 'Nothing was retrieved.'));
    else {
      var tl = add(body, el('ol'));
      r.t.forEach(function (t) { memoryItem(t[0], tl, '; score ' + t[1]); });
    }
    add(body, el('h4', null, 'Answer'));
    if (r.a === undefined) add(body, el('p', 'empty', 'The answer stage was not graded in this run.'));
    else {
      add(body, el('p', 'mem', r.a));
      var verdict = r.ac === undefined ? 'not graded' : (r.ac ? 'correct' : 'wrong');
      add(body, el('p', r.ac ? 'pass' : 'fail', 'Verdict: ' + verdict + (r.rs ? ' (' + r.rs + ')' : '')));
    }
    if (answerChecks.length) {
      var al = add(body, el('ul', 'small'));
      answerChecks.forEach(function (c) {
        add(al, el('li', c[3] ? 'pass' : 'fail', c[1] + ' check by ' + c[2] + ': ' + (c[3] ? 'passed' : 'failed') +
          (c[4] ? ' (decisive)' : '') + (D.strings[c[5]] ? ' \u2014 ' + D.strings[c[5]] : '')));
      });
    }
    if (r.e) add(body, el('p', 'error', 'Error: ' + r.e));
  }
  function draw() {
    list.textContent = '';
    var start = page * PAGE, end = Math.min(shown.length, start + PAGE);
    for (var i = start; i < end; i++) {
      (function (r) {
        var d = el('details', 'probe');
        // Stable hooks for tests and user scripts: the probe id and its stage.
        d.setAttribute('data-probe', r.p);
        d.setAttribute('data-stage', r.st);
        var s = add(d, el('summary'));
        s.appendChild(chip(r.st));
        add(s, el('span', 'pid', r.p));
        add(s, el('span', 'small', D.runs[r.r].label + ' \u00b7 ' + D.datasets[r.d] + ' \u00b7 k=' + r.k));
        var failed = failedChecks(r);
        if (failed.length)
          add(s, el('span', 'small fail', failed.length + (failed.length === 1 ? ' memory check failed' : ' memory checks failed')));
        var q = question(r);
        add(s, el('span', 'q', q ? (q.length > 110 ? q.slice(0, 108) + '\u2026' : q) : '(question not recorded)'));
        var body = add(d, el('div', 'probe-body'));
        body.setAttribute('data-probe-detail', '');
        d.addEventListener('toggle', function () {
          if (d.open && !body.firstChild) fill(body, r);
        });
        list.appendChild(d);
      })(shown[i]);
    }
    status.textContent = shown.length ? 'Probes ' + (start + 1) + '\u2013' + end + ' of ' + shown.length : 'No probe matches these filters.';
    prev.disabled = page === 0;
    next.disabled = end >= shown.length;
  }
  function apply() { shown = D.rows.filter(matches); page = 0; draw(); }
  [fRun, fData, fStage, fK, fCheck].forEach(function (s) { s.addEventListener('change', apply); });
  fText.addEventListener('input', apply);
  prev.addEventListener('click', function () { if (page > 0) { page--; draw(); } });
  next.addEventListener('click', function () { if ((page + 1) * PAGE < shown.length) { page++; draw(); } });
  apply();
})();
)js";

}  // namespace

Result<std::string> render_html_report(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids,
                                       const HtmlReportOptions& options) {
    Model m;
    MF_TRY_ASSIGN(auto names, run_names(db, run_ids));
    MF_TRY_ASSIGN(auto origins, run_origins(db));
    for (std::int64_t id : run_ids) {
        MF_TRY_ASSIGN(auto record, db.run(id));
        if (!record) return make_error(ErrorKind::not_found, "no run " + std::to_string(id), db.database().path());
        RunInfo info;
        info.record = *record;
        json config = json::parse(record->config_json, nullptr, false);
        if (config.is_object()) info.config = std::move(config);
        info.name = names[id];
        info.label = "run " + info.name + " \u00b7 " + record->label();
        // A --name is short by choice; a system spec can run to dozens of characters.
        info.short_name = record->label() != record->system_spec ? record->label() : (origins.count(id) ? info.name : "run " + info.name);
        m.runs.push_back(std::move(info));
    }
    // Runs of one system spec that differ in the internal model are told apart by it.
    for (auto& run : m.runs) {
        const auto model = system_model(run.config);
        if (!model) continue;
        for (const auto& other : m.runs)
            if (other.record.system_spec == run.record.system_spec && system_model(other.config) != model) {
                run.label += " (" + *model + ")";
                break;
            }
    }
    MF_TRY_ASSIGN(m.summary, db.summary(run_ids));
    std::set<int> ks;
    for (const auto& r : m.summary) {
        m.end_to_end |= r.answered > 0;
        ks.insert(r.k);
        if (std::find(m.datasets.begin(), m.datasets.end(), r.dataset) == m.datasets.end()) m.datasets.push_back(r.dataset);
    }
    m.ks.assign(ks.begin(), ks.end());
    MF_TRY_ASSIGN(Table success, success_table(db, run_ids));
    // The suites' own sections (their scorecards), for the suites these runs have rows of; one whose
    // datasets are all these runs hold opens the report (SuiteReport::leads), the others follow the
    // staged sections.
    std::vector<const SuiteReport*> leading, following;
    for (const suites::Suite* suite : suites::all_suites()) {
        const SuiteReport* section = suite->report();
        if (!section) continue;
        MF_TRY_ASSIGN(const bool present, section->present(db, run_ids));
        if (present) (section->leads(m.datasets) ? leading : following).push_back(section);
    }
    // The sections in order, numbered.
    std::vector<std::pair<std::string, std::string>> sections;
    for (const auto* section : leading) sections.emplace_back(section->id(), section->title());
    for (const auto& s : std::vector<std::pair<std::string, std::string>>{
             {"success", "Success"}, {"stages", "Failure stages"}, {"slices", "Slices"}})
        sections.push_back(s);
    // The published benchmarks' own metric only for runs over locomo or longmemeval.
    MF_TRY_ASSIGN(Table benchmark, benchmark_table(db, run_ids));
    if (!benchmark.rows.empty()) sections.emplace_back("benchmark", "Benchmark metric");
    for (const auto* section : following) sections.emplace_back(section->id(), section->title());
    for (const auto& s : std::vector<std::pair<std::string, std::string>>{
             {"models", "Internal model"}, {"tokens", "Tokens per memory"}, {"runs", "Runs"}, {"probes", "Probes"}})
        sections.push_back(s);
    for (std::size_t i = 0; i < sections.size(); ++i) m.number[sections[i].first] = static_cast<int>(i + 1);

    std::string out;
    out.reserve(1 << 20);
    out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
    out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
           "script-src 'unsafe-inline'; img-src data:\">";
    out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
    out += "<meta name=\"generator\" content=\"memfail\">";
    out += "<title>" + h(options.title) + "</title><style>" + k_css + "</style></head><body>";
    out += "<header><h1>" + h(options.title) + "</h1><p class=\"meta\">";
    std::string runs_line;
    for (std::size_t i = 0; i < m.runs.size(); ++i) runs_line += (i ? "; " : "") + m.runs[i].label;
    out += h(std::to_string(m.runs.size()) + (m.runs.size() == 1 ? " run: " : " runs: ") + runs_line);
    if (!options.generated_at.empty()) out += "<br>Generated " + h(options.generated_at);
    out += "</p><nav><ol>";
    for (const auto& [id, name] : sections)
        out += "<li><a href=\"#" + id + "\">" + std::to_string(m.number[id]) + ". " + name + "</a></li>";
    out += "</ol></nav></header><main>";
    // What makes every figure below mean something else (a system that stored or served nothing),
    // before anything else.
    for (const auto& b : success.banners) out += "<p class=\"banner\" role=\"alert\"><strong>Warning:</strong> " + h(b) + "</p>";
    if (m.summary.empty()) {
        out += "<p class=\"empty\">These runs have no graded probes yet, so there is nothing to chart.</p>";
    }
    SectionContext context;
    for (const auto& run : m.runs) context.runs.push_back({run.record.id, run.name, run.label});
    context.heading = [&m](const std::string& id, const std::string& title) { return m.heading(id, title); };
    for (const auto* section : leading) {
        MF_TRY_ASSIGN(std::string text, section->html(db, context));
        out += text;
    }
    MF_TRY_ASSIGN(Table leaky, leaky_table(db));
    out += section_success(m, success, leaky);
    out += section_stages(m);
    MF_TRY_ASSIGN(auto all_slices, slices(db, run_ids));
    MF_TRY_ASSIGN(Table slice_table, slices_table(db, run_ids));
    out += section_slices(m, all_slices, slice_table);
    if (!benchmark.rows.empty()) {
        out += m.heading("benchmark", "Benchmark metric");
        out += "<p>The published benchmarks' own scores, computed from the recorded answers, beside memfail's stages "
               "(the slices above break those down by the same categories).</p>";
        out += folded_table(benchmark, "benchmark");
        for (const auto& n : benchmark.notes) out += "<p class=\"note\">" + h(n) + "</p>";
        MF_TRY_ASSIGN(Table recall, evidence_recall_table(db, run_ids));
        if (!recall.rows.empty()) {
            out += "<h3>Evidence recall</h3><p>How much of each question's cited evidence the top k brought back, "
                   "as the benchmarks' own retrieval figures count it: every cited turn (memfail's memory-side "
                   "success), any cited turn, and the share of cited turns.</p>";
            out += folded_table(recall, "evidence-recall");
        }
        out += "</section>";
    }
    for (const auto* section : following) {
        MF_TRY_ASSIGN(std::string text, section->html(db, context));
        out += text;
    }
    out += section_models(m);
    MF_TRY_ASSIGN(std::string tokens, section_tokens(db, m));
    out += tokens;
    MF_TRY_ASSIGN(std::string runs, section_runs(db, m, options));
    out += runs;

    std::size_t embedded = 0, total = 0;
    MF_TRY_ASSIGN(std::string data, probe_data(db, m, options, embedded, total));
    out += m.heading("probes", "Probe browser");
    out += "<p>Every graded probe at every k: its question, evidence facts and the stage each reached (with who "
           "decided it and why), the memories each fact was stored in, the top k retrieved and the answer. Open a "
           "probe to see it.</p>";
    for (const auto* section : leading)
        if (const std::string note = section->browser_note(); !note.empty()) out += "<p>" + note + "</p>";
    for (const auto* section : following)
        if (const std::string note = section->browser_note(); !note.empty()) out += "<p>" + note + "</p>";
    if (embedded < total)
        out += "<p class=\"note\">" + std::to_string(embedded) + " of " + std::to_string(total) +
               " probe rows are included (the report was written with a limit); the results file holds all of them.</p>";
    out += "<noscript><p class=\"empty\">The probe browser needs JavaScript; the sections above do not.</p></noscript>";
    out += "<div id=\"browser\" hidden><div class=\"controls\">"
           "<label>Run <select id=\"f-run\"><option value=\"\">all</option></select></label>"
           "<label>Dataset <select id=\"f-dataset\"><option value=\"\">all</option></select></label>"
           "<label>Stage <select id=\"f-stage\"><option value=\"\">all</option></select></label>"
           "<label>k <select id=\"f-k\"><option value=\"\">all</option></select></label>"
           "<label id=\"f-check-label\" hidden>Check <select id=\"f-check\"><option value=\"\">all</option>"
           "<option value=\"*\">any check failed</option></select></label>"
           "<label>Search <input id=\"f-text\" type=\"search\" placeholder=\"probe id or words of the question\"></label>"
           "</div><div class=\"pager\"><button id=\"prev\" type=\"button\">\u2190 Previous</button>"
           "<span id=\"probe-status\"></span><button id=\"next\" type=\"button\">Next \u2192</button></div>"
           "<div id=\"probe-list\"></div></div>";
    out += "<script type=\"application/json\" id=\"probe-data\">" + data + "</script>";
    out += "</section></main><script>" + std::string(k_script) + "</script></body></html>\n";
    return out;
}

}  // namespace memfail::report

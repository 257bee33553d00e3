// SPDX-License-Identifier: MIT
// The long-horizon suite's part of every report (report.hpp: dynamic_report): its scorecard tables
// opening the text report, the tables --table names, its HTML section and each run's results-JSON
// block.
#include <memfail/figures/html.hpp>
#include <memfail/figures/svg.hpp>
#include <memfail/suites/dynamic/report.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace memfail::suites::dynamic {

using namespace memfail::report;
using nlohmann::json;

namespace {

// Profile tasks in report order: the suite's two, then any other a results file names.
std::size_t profile_task_rank(const std::string& task) {
    if (task == "state_completion") return 0;
    if (task == "personalized_service") return 1;
    return 2;
}

// "recall 62.5% over 8 probes, 5 complete (62.5%)": a cell of the profile table in words.
std::string profile_text(const ProfileCount& c) {
    std::int64_t complete = 0;
    if (const auto it = c.labels.find("all_clear"); it != c.labels.end()) complete = it->second;
    std::string out = "recall " + (c.recall() ? percent(*c.recall()) + "%" : std::string("-")) + " over " +
                      std::to_string(c.probes) + (c.probes == 1 ? " probe" : " probes") + ", " +
                      std::to_string(complete) + " complete";
    if (c.gold_logs > 0)
        out += "; " + std::to_string(c.retrieved_logs) + " of " + std::to_string(c.gold_logs) + " gold logs retrieved";
    return out;
}

// The long-horizon scorecard (the dynamic suite, docs/DYNAMIC.md) from `counts` (profile_counts):
// evidence recall per checkpoint as one line per run for each task, the item score when an answer
// model ran, the two tables `memfail report` prints and what the attribution labels mean. Each run
// is drawn at its own largest k, as the slices table reads it.
Result<std::string> section_profile(store::ResultsDb& db, const SectionContext& m, const std::vector<ProfileCount>& counts) {
    std::vector<std::int64_t> ids;
    for (const auto& run : m.runs) ids.push_back(run.id);
    std::map<std::int64_t, int> kmax;
    std::set<std::string> checkpoint_set;
    std::vector<std::string> tasks;
    for (const auto& c : counts) {
        kmax[c.run_id] = std::max(kmax[c.run_id], c.k);
        checkpoint_set.insert(c.checkpoint);
        if (std::find(tasks.begin(), tasks.end(), c.task) == tasks.end()) tasks.push_back(c.task);
    }
    std::stable_sort(tasks.begin(), tasks.end(), [](const std::string& a, const std::string& b) {
        return profile_task_rank(a) < profile_task_rank(b);
    });
    const std::vector<std::string> checkpoints(checkpoint_set.begin(), checkpoint_set.end());
    auto x_of = [&](const std::string& cp) {
        return static_cast<double>(std::find(checkpoints.begin(), checkpoints.end(), cp) - checkpoints.begin());
    };
    // The "all" cell of a run, task and checkpoint at the run's largest k.
    auto cell = [&](std::int64_t run, const std::string& task, const std::string& cp) -> const ProfileCount* {
        for (const auto& c : counts)
            if (c.run_id == run && c.k == kmax[run] && c.task == task && c.checkpoint == cp && c.slice == "all") return &c;
        return nullptr;
    };

    std::string out = m.heading("profile", "Long-horizon profile");
    out += "<p>The profile tasks of the long-horizon suite (docs/DYNAMIC.md): months of a user's app logs are stored, "
           "and at each checkpoint the memory is asked to complete the user's profile (<em>state_completion</em>) or "
           "to serve a request that depends on it (<em>personalized_service</em>). <strong>Evidence recall@k</strong> "
           "is the share of a probe's gold evidence logs held by the top k memories, averaged over the probes; an item "
           "is <strong>complete</strong> when every one of its gold logs was retrieved. Each run is drawn at its "
           "largest k; hover a point for its counts.</p>";
    // (a) Evidence recall per checkpoint, one chart per task and one line per run.
    for (const auto& task : tasks) {
        svg::LineChart chart;
        chart.title = "Evidence recall@k per checkpoint: " + task;
        chart.x_label = "checkpoint";
        chart.y_label = "evidence recall@k (%)";
        chart.x_categories = checkpoints;
        for (std::size_t ri = 0; ri < m.runs.size(); ++ri) {
            const SectionRun& run = m.runs[ri];
            svg::LineSeries s;
            s.name = run.label + " \u00b7 k=" + std::to_string(kmax[run.id]);
            s.colour = svg::palette_colour(ri);
            for (const auto& cp : checkpoints) {
                const ProfileCount* c = cell(run.id, task, cp);
                if (!c || !c->recall()) continue;
                s.points.push_back({x_of(cp), *c->recall(), std::nullopt,
                                    run.label + " \u00b7 " + task + " \u00b7 " + cp + " \u00b7 k=" + std::to_string(c->k) +
                                        ": " + profile_text(*c),
                                    {}});
            }
            if (!s.points.empty()) chart.series.push_back(std::move(s));
        }
        if (chart.series.empty()) continue;
        chart.legend = svg::Legend::none;
        out += html::figure(svg::render(chart), chart.title + " (one line per run, at its largest k)",
                      svg::legend_html(svg::legend_entries(chart)));
    }
    // The item score, only where an answer model answered: a line per run and task.
    svg::LineChart scores;
    scores.title = "Mean item score per checkpoint";
    scores.x_label = "checkpoint";
    scores.y_label = "mean item score (x100)";
    scores.x_categories = checkpoints;
    for (std::size_t ri = 0; ri < m.runs.size(); ++ri) {
        const SectionRun& run = m.runs[ri];
        for (std::size_t ti = 0; ti < tasks.size(); ++ti) {
            svg::LineSeries s;
            s.name = run.label + " \u00b7 " + tasks[ti];
            // One hue per run; the second task lighter.
            s.colour = svg::tint(svg::palette_colour(ri), ti == 0 ? 0.0 : 0.45);
            for (const auto& cp : checkpoints) {
                const ProfileCount* c = cell(run.id, tasks[ti], cp);
                if (!c || !c->score()) continue;
                s.points.push_back({x_of(cp), *c->score(), std::nullopt,
                                    run.label + " \u00b7 " + tasks[ti] + " \u00b7 " + cp + " \u00b7 k=" +
                                        std::to_string(c->k) + ": mean score " + html::fixed(*c->score(), 3) + " over " +
                                        std::to_string(c->scored) + " of " + std::to_string(c->probes) +
                                        " items scored, " + std::to_string(c->wrong) + " answered wrong",
                                    {}});
            }
            if (!s.points.empty()) scores.series.push_back(std::move(s));
        }
    }
    if (scores.series.empty()) {
        out += "<p class=\"empty\">No item was scored (no answer model ran, or no item had every field decided), so "
               "item scores are not drawn: run with <code>--answer-model</code> to have them.</p>";
    } else {
        scores.legend = svg::Legend::none;
        out += html::figure(svg::render(scores),
                      scores.title + " (over the items whose every field was decided; one line per run and task, at "
                                     "the run's largest k)",
                      svg::legend_html(svg::legend_entries(scores)));
    }
    // (c) What the labels mean, before the tables that count them.
    out += "<h3>Why evidence is missing</h3>";
    out += "<p>Each probe gets one label, decided by rule with no model involved (docs/DYNAMIC.md); the tables count "
           "the probes per label (<em>complete</em> is the all_clear share).</p><dl class=\"labels\">"
           "<dt><code>irrelevant_evidence</code></dt><dd>Nothing retrieved comes from this key's logs.</dd>"
           "<dt><code>identity_miss</code></dt><dd>No log saying which entity or routine it is came back (one "
           "would do).</dd>"
           "<dt><code>detail_miss</code></dt><dd>The identity is there; the failing field's logs are missing.</dd>"
           "<dt><code>conflated</code></dt><dd>Everything came back, and with it logs of a superseded value or of a "
           "competing key.</dd>"
           "<dt><code>all_clear</code></dt><dd>All evidence was retrieved: a wrong answer is the answer model's "
           "fault (the <em>wrong, all clear</em> column).</dd>"
           "<dt><code>unverified</code></dt><dd>The rules could not tell which logs the memories hold (no "
           "provenance and no details to match); never counted as retrieved.</dd></dl>";
    // (b) The tables as `memfail report` prints them.
    MF_TRY_ASSIGN(Table table, profile_table(db, ids));
    out += html::folded_table(table, "profile");
    MF_TRY_ASSIGN(Table slices, profile_slices_table(db, ids));
    if (!slices.rows.empty()) {
        out += "<h3>By family, state change and app</h3>";
        out += "<p>The same recall per checkpoint for each state family, for keys retained since C1 against those "
               "updated or new, and, per app, the share of that app's gold logs retrieved (log level: where in the "
               "user's apps the memory loses the evidence).</p>";
        out += html::folded_table(slices, "profile-slices");
    }
    return out + "</section>";
}


class DynamicReport final : public SuiteReport {
public:
    std::string id() const override { return "profile"; }
    std::string title() const override { return "Long-horizon profile"; }
    Result<bool> present(store::ResultsDb& db, const std::vector<std::int64_t>& run_ids) const override {
        MF_TRY_ASSIGN(auto counts, profile_counts(db, run_ids));
        return !counts.empty();
    }
    Result<std::vector<Table>> scorecard(store::ResultsDb& db, const std::vector<std::int64_t>& ids) const override {
        std::vector<Table> out;
        MF_TRY_ASSIGN(Table profile, profile_table(db, ids));
        if (profile.rows.empty()) return out;
        out.push_back(std::move(profile));
        MF_TRY_ASSIGN(Table slices, profile_slices_table(db, ids));
        out.push_back(std::move(slices));
        return out;
    }
    std::vector<NamedTable> tables() const override {
        return {{"profile", "profile tasks per run x k x checkpoint x task"},
                {"profile-slices", "per run x task x family, state change or app, one column per checkpoint"}};
    }
    Result<Table> table(const std::string& name, store::ResultsDb& db, const std::vector<std::int64_t>& ids,
                        TableStyle style) const override {
        if (name == "profile") return profile_table(db, ids, style);
        if (name == "profile-slices") return profile_slices_table(db, ids, style);
        return SuiteReport::table(name, db, ids, style);
    }
    Result<std::string> html(store::ResultsDb& db, const SectionContext& context) const override {
        std::vector<std::int64_t> ids;
        for (const auto& run : context.runs) ids.push_back(run.id);
        MF_TRY_ASSIGN(auto counts, profile_counts(db, ids));
        return section_profile(db, context, counts);
    }
    // Every cell, slice "all" and the others.
    std::string json_key() const override { return "profile"; }
    Result<json> run_json(store::ResultsDb& db, std::int64_t id) const override {
        MF_TRY_ASSIGN(auto cells, profile_counts(db, {id}));
        if (cells.empty()) return json(nullptr);
        json profile = json::array();
        for (const auto& c : cells) {
            json labels = json::object(), wrong_labels = json::object();
            for (const auto& [label, n] : c.labels) labels[label.empty() ? "unverified" : label] = n;
            for (const auto& [label, n] : c.wrong_labels) wrong_labels[label.empty() ? "unverified" : label] = n;
            auto opt = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
            profile.push_back({{"k", c.k}, {"checkpoint", c.checkpoint}, {"task", c.task}, {"slice", c.slice},
                               {"probes", c.probes}, {"recall", opt(c.recall())}, {"complete", opt(c.complete())},
                               {"labels", labels}, {"scored", c.scored}, {"score", opt(c.score())},
                               {"wrong", c.wrong}, {"wrong_labels", wrong_labels},
                               {"gold_logs", c.gold_logs}, {"retrieved_logs", c.retrieved_logs},
                               {"unsure_logs", c.unsure_logs}, {"log_recall", opt(c.log_recall())}});
        }
        return profile;
    }
};

}  // namespace

const SuiteReport& dynamic_report() {
    static const DynamicReport report;
    return report;
}

}  // namespace memfail::suites::dynamic

// SPDX-License-Identifier: MIT
// The long-horizon scorecard (the dynamic suite's profile tasks): the cells profile_counts builds
// (recall, complete, labels, scores and the per-app log-level recall read from fields_json), the two
// tables `memfail report` prints, and the HTML report's "Long-horizon profile" section. A results
// file without profile rows has none of it.
#include "html_test_util.hpp"
#include "report_fixture.hpp"

#include <memfail/report/html_report.hpp>
#include <memfail/suites/dynamic/report.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace memfail::report {
namespace {

using nlohmann::json;
using namespace memfail::suites::dynamic;

using testing::between;
using testing::count;
using testing::section;

// One gold log as fields_json records it.
struct Log {
    std::string id, app, retrieved;  // retrieved: yes, no, unsure
};

// One profile probe at one k: its fields' logs (one vector per field) and what the rules decided.
struct ProfileProbe {
    std::string probe_id;
    int k = 10;
    std::string checkpoint;
    std::string task = "state_completion";
    std::string key;
    std::string family;
    std::string change;
    double recall = 0;
    std::string label;
    std::vector<std::vector<Log>> fields;
    std::optional<double> score;          // answered, every field decided
    std::optional<bool> answer_correct;   // answered
    std::string stage = "retrieved";      // "error": the SQL leaves it out
};

std::int64_t add_profile_run(store::ResultsDb& db, const std::string& system, const std::vector<ProfileProbe>& probes) {
    const std::int64_t id = testing::start_run(db, system, {{"system", system}, {"ks", {5, 10}}, {"seed", 7}},
                                               "profile-" + system + "-0123456789abcdef");
    db.upsert_scenario({id, "dynamic-u1", "dynamic", "feedc0de0099887766554433", 6, 8, "graded"}).value();
    for (const auto& p : probes) {
        store::ProbeRow row;
        row.scenario_id = "dynamic-u1";
        row.dataset = "dynamic";
        row.probe_id = p.probe_id;
        row.k = p.k;
        row.kind = "open";
        row.stage = p.stage;
        row.memory_success = p.label == "all_clear";
        if (p.stage == "error") row.error = "the retrieval call failed";
        if (p.answer_correct) {
            row.answer = "an answer";
            row.answer_correct = p.answer_correct;
            row.reasoning = *p.answer_correct ? "correct" : "reasoning_error";
        }
        store::ProfileRow pr;
        pr.task = p.task;
        pr.state_key = p.key;
        pr.family = p.family;
        pr.profile_checkpoint = p.checkpoint;
        pr.state_change = p.change;
        pr.recall = p.recall;
        pr.label = p.label;
        pr.reason = "by rule";
        json fields = json::array();
        for (std::size_t f = 0; f < p.fields.size(); ++f) {
            json logs = json::array();
            std::size_t retrieved = 0;
            for (const auto& l : p.fields[f]) {
                logs.push_back({{"id", l.id}, {"app", l.app}, {"retrieved", l.retrieved}});
                if (l.retrieved == "yes") ++retrieved;
            }
            fields.push_back({{"path", "field" + std::to_string(f)}, {"gold", p.fields[f].size()}, {"stored", p.fields[f].size()},
                              {"retrieved", retrieved}, {"unsure", 0}, {"logs", logs}});
        }
        pr.fields_json = fields.dump();
        pr.item_score = p.score;
        row.profile = pr;
        db.record_probe(id, row).value();
    }
    db.finish_run(id, "finished").value();
    return id;
}

// The app name that must come out escaped wherever it is shown.
const std::string k_odd_app = "a<b>&\"c";

// Run 1 ("verbatim", k 5 and 10): at k = 10,
//   C1 state_completion: s1 (habit, new) all clear and right; s2 (preference, new) detail_miss,
//     1 of its 4 logs retrieved, answered wrong;
//   C2 state_completion: s3 (habit, retained) identity_miss, 1 of 3 fitness logs (1 unsure), not
//     answered; s4 (attribute, retained) all clear but answered wrong (the answer model's fault);
//     s5 an error row (left out);
//   personalized_service: C1 irrelevant_evidence, C2 conflated.
// At k = 5 only s1, detail_miss.
std::vector<ProfileProbe> verbatim_probes() {
    return {
        {"s1", 10, "C1", "state_completion", "k1", "habit", "new", 1.0, "all_clear",
         {{{"l1", "fitness", "yes"}, {"l2", "fitness", "yes"}}, {{"l2", "fitness", "yes"}, {"l3", "mail", "yes"}}},
         1.0, true},
        {"s2", 10, "C1", "state_completion", "k2", "preference", "new", 0.25, "detail_miss",
         {{{"l4", "mail", "yes"}, {"l9", "mail", "no"}}, {{"l5", k_odd_app, "no"}, {"l10", "mail", "no"}}}, 0.4, false},
        {"s3", 10, "C2", "state_completion", "k1", "habit", "retained", 1.0 / 3.0, "identity_miss",
         {{{"l1", "fitness", "yes"}, {"l6", "fitness", "no"}, {"l7", "fitness", "unsure"}}}, std::nullopt, std::nullopt},
        {"s4", 10, "C2", "state_completion", "k3", "attribute", "retained", 1.0, "all_clear",
         {{{"l8", "calendar", "yes"}}}, 0.6, false},
        {"s5", 10, "C2", "state_completion", "k4", "attribute", "new", 1.0, "all_clear",
         {{{"l11", "calendar", "yes"}}}, std::nullopt, std::nullopt, "error"},
        {"p1", 10, "C1", "personalized_service", "k1", "habit", "new", 0.0, "irrelevant_evidence",
         {{{"l1", "fitness", "no"}}}, std::nullopt, std::nullopt},
        {"p2", 10, "C2", "personalized_service", "k2", "preference", "updated", 1.0, "conflated",
         {{{"l4", "mail", "yes"}}}, std::nullopt, std::nullopt},
        {"s1", 5, "C1", "state_completion", "k1", "habit", "new", 0.5, "detail_miss",
         {{{"l1", "fitness", "yes"}, {"l2", "fitness", "no"}}}, std::nullopt, std::nullopt},
    };
}

// Run 2 ("oracle", k 10): the same probes with every log retrieved, all clear, not answered.
std::vector<ProfileProbe> oracle_probes() {
    std::vector<ProfileProbe> out;
    for (auto p : verbatim_probes()) {
        if (p.k != 10 || p.stage == "error") continue;
        p.recall = 1.0;
        p.label = "all_clear";
        for (auto& f : p.fields)
            for (auto& l : f) l.retrieved = "yes";
        p.score.reset();
        p.answer_correct.reset();
        out.push_back(p);
    }
    return out;
}

struct Fixture {
    store::ResultsDb db;
    std::vector<std::int64_t> ids;
};

Fixture build() {
    auto db = store::ResultsDb::open(":memory:").value();
    std::vector<std::int64_t> ids;
    ids.push_back(add_profile_run(db, "verbatim", verbatim_probes()));
    ids.push_back(add_profile_run(db, "oracle", oracle_probes()));
    return {std::move(db), std::move(ids)};
}

const ProfileCount* find_cell(const std::vector<ProfileCount>& cells, std::int64_t run, int k, const std::string& cp,
                              const std::string& task, const std::string& slice) {
    for (const auto& c : cells)
        if (c.run_id == run && c.k == k && c.checkpoint == cp && c.task == task && c.slice == slice) return &c;
    return nullptr;
}

// The row of `t` whose leading cells are `lead`.
const std::vector<std::string>* find_row(const Table& t, const std::vector<std::string>& lead) {
    for (const auto& row : t.rows)
        if (row.size() >= lead.size() && std::equal(lead.begin(), lead.end(), row.begin())) return &row;
    return nullptr;
}

std::size_t column(const Table& t, const std::string& name) {
    for (std::size_t i = 0; i < t.columns.size(); ++i)
        if (t.columns[i].name == name) return i;
    ADD_FAILURE() << "no column " << name;
    return 0;
}

TEST(ProfileReport, CellsCountProbesLabelsScoresAndLogs) {
    auto f = build();
    const auto cells = profile_counts(f.db, f.ids).value();
    const std::int64_t a = f.ids[0], b = f.ids[1];

    const auto* c1 = find_cell(cells, a, 10, "C1", "state_completion", "all");
    ASSERT_NE(c1, nullptr);
    EXPECT_EQ(c1->probes, 2);
    EXPECT_DOUBLE_EQ(*c1->recall(), 0.625);
    EXPECT_DOUBLE_EQ(*c1->complete(), 0.5);
    EXPECT_EQ(c1->labels.at("detail_miss"), 1);
    EXPECT_DOUBLE_EQ(*c1->score(), 0.7);
    EXPECT_EQ(c1->wrong, 1);
    EXPECT_EQ(c1->wrong_labels.count("all_clear"), 0u);
    // l2 is evidence for two fields of s1: one log. s1: 3 logs, 3 back; s2: 4 logs, 1 back.
    EXPECT_EQ(c1->gold_logs, 7);
    EXPECT_EQ(c1->retrieved_logs, 4);

    // The error row s5 is not counted.
    const auto* c2 = find_cell(cells, a, 10, "C2", "state_completion", "all");
    ASSERT_NE(c2, nullptr);
    EXPECT_EQ(c2->probes, 2);
    EXPECT_EQ(c2->scored, 1);
    EXPECT_EQ(c2->wrong_labels.at("all_clear"), 1);
    EXPECT_EQ(c2->unsure_logs, 1);

    // Per app, log level: mail at C1 is s1's 1 of 1 and s2's 1 of 3, so 2 of 4 (50%), not the
    // per-probe mean (66.7%).
    const auto* mail = find_cell(cells, a, 10, "C1", "state_completion", "app:mail");
    ASSERT_NE(mail, nullptr);
    EXPECT_EQ(mail->probes, 2);
    EXPECT_EQ(mail->gold_logs, 4);
    EXPECT_EQ(mail->retrieved_logs, 2);
    EXPECT_DOUBLE_EQ(*mail->log_recall(), 0.5);
    EXPECT_NEAR(*mail->recall(), 2.0 / 3.0, 1e-12);
    const auto* odd = find_cell(cells, a, 10, "C1", "state_completion", "app:" + k_odd_app);
    ASSERT_NE(odd, nullptr);
    EXPECT_DOUBLE_EQ(*odd->log_recall(), 0.0);
    EXPECT_EQ(find_cell(cells, a, 10, "C2", "state_completion", "app:calendar")->gold_logs, 1);  // s5 left out

    // No cell claims more than it holds.
    for (const auto& c : cells) {
        EXPECT_LE(c.retrieved_logs + c.unsure_logs, c.gold_logs) << c.slice;
        if (c.log_recall()) {
            EXPECT_LE(*c.log_recall(), 1.0);
        }
        if (c.recall()) {
            EXPECT_LE(*c.recall(), 1.0);
        }
        if (c.complete()) {
            EXPECT_LE(*c.complete(), 1.0);
        }
    }
    const auto* oracle_fitness = find_cell(cells, b, 10, "C2", "state_completion", "app:fitness");
    ASSERT_NE(oracle_fitness, nullptr);
    EXPECT_DOUBLE_EQ(*oracle_fitness->log_recall(), 1.0);
}

TEST(ProfileReport, TableHasARowPerRunKCheckpointAndTask) {
    auto f = build();
    const Table t = profile_table(f.db, f.ids).value();
    // Run 1: 2 checkpoints x 2 tasks at k 10 and one at k 5; run 2: 4 at k 10.
    EXPECT_EQ(t.rows.size(), 9u);
    const auto* row = find_row(t, {"verbatim", "10", "C1", "state_completion"});
    ASSERT_NE(row, nullptr);
    EXPECT_EQ((*row)[column(t, "probes")], "2");
    EXPECT_EQ((*row)[column(t, "recall@k")], "62.5");
    EXPECT_EQ((*row)[column(t, "complete")], "50.0");
    EXPECT_EQ((*row)[column(t, "detail_miss")], "1");
    EXPECT_EQ((*row)[column(t, "identity_miss")], "0");
    EXPECT_EQ((*row)[column(t, "score")], "0.7");
    EXPECT_EQ((*row)[column(t, "scored")], "2");
    const auto* c2 = find_row(t, {"verbatim", "10", "C2", "state_completion"});
    ASSERT_NE(c2, nullptr);
    EXPECT_EQ((*c2)[column(t, "identity_miss")], "1");
    EXPECT_EQ((*c2)[column(t, "wrong, all clear")], "1");
    const auto* k5 = find_row(t, {"verbatim", "5", "C1", "state_completion"});
    ASSERT_NE(k5, nullptr);
    EXPECT_EQ((*k5)[column(t, "recall@k")], "50.0");
    const auto* service = find_row(t, {"verbatim", "10", "C2", "personalized_service"});
    ASSERT_NE(service, nullptr);
    EXPECT_EQ((*service)[column(t, "conflated")], "1");
    const auto* oracle = find_row(t, {"oracle", "10", "C1", "personalized_service"});
    ASSERT_NE(oracle, nullptr);
    EXPECT_EQ((*oracle)[column(t, "recall@k")], "100.0");
    EXPECT_EQ((*oracle)[column(t, "complete")], "100.0");
    EXPECT_EQ((*oracle)[column(t, "score")], "-");

    const Table machine = profile_table(f.db, f.ids, TableStyle::machine).value();
    const auto* m = find_row(machine, {"verbatim", "10", "C1", "state_completion"});
    ASSERT_NE(m, nullptr);
    EXPECT_EQ((*m)[column(machine, "recall")], "0.625");
}

TEST(ProfileReport, SlicesTableHasAppRowsWithLogLevelRecallPerCheckpoint) {
    auto f = build();
    const Table t = profile_slices_table(f.db, f.ids).value();
    ASSERT_GE(t.columns.size(), 5u);
    EXPECT_EQ(t.columns[3].name, "C1");
    EXPECT_EQ(t.columns[4].name, "C2");
    const auto* mail = find_row(t, {"verbatim", "state_completion", "app:mail"});
    ASSERT_NE(mail, nullptr);
    EXPECT_EQ((*mail)[3], "50.0 (2/4 logs)");
    EXPECT_EQ((*mail)[4], "-");  // no mail log is evidence at C2
    const auto* fitness = find_row(t, {"verbatim", "state_completion", "app:fitness"});
    ASSERT_NE(fitness, nullptr);
    EXPECT_EQ((*fitness)[3], "100.0 (2/2 logs)");  // l2 counted once
    EXPECT_EQ((*fitness)[4], "33.3 (1/3 logs, 1 unsure)");
    const auto* odd = find_row(t, {"verbatim", "state_completion", "app:" + k_odd_app});
    ASSERT_NE(odd, nullptr);
    EXPECT_EQ((*odd)[3], "0.0 (0/1 logs)");
    // The slices keep their meaning: probe-level recall at the largest k, probes in brackets.
    const auto* habit = find_row(t, {"verbatim", "state_completion", "family:habit"});
    ASSERT_NE(habit, nullptr);
    EXPECT_EQ((*habit)[3], "100.0 (1) s=1");
    EXPECT_EQ((*habit)[4], "33.3 (1)");
    const auto* oracle_mail = find_row(t, {"oracle", "state_completion", "app:mail"});
    ASSERT_NE(oracle_mail, nullptr);
    EXPECT_EQ((*oracle_mail)[3], "100.0 (4/4 logs)");
    // Family and state-change rows come before a run's app rows.
    std::size_t last_other = 0, first_app = t.rows.size();
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
        if (t.rows[i][0] != "verbatim" || t.rows[i][1] != "state_completion") continue;
        if (t.rows[i][2].rfind("app:", 0) == 0) first_app = std::min(first_app, i);
        else last_other = i;
    }
    EXPECT_LT(last_other, first_app);
    EXPECT_EQ(count(t.notes.back(), "log-level"), 1u);

    const Table machine = profile_slices_table(f.db, f.ids, TableStyle::machine).value();
    const auto* m = find_row(machine, {"verbatim", "state_completion", "app:mail"});
    ASSERT_NE(m, nullptr);
    EXPECT_EQ((*m)[3], "0.5");
    EXPECT_EQ((*m)[4], "");
}

TEST(ProfileReport, HtmlSectionChartsEachRunPerCheckpointAndShowsTheTables) {
    auto f = build();
    HtmlReportOptions options;
    options.generated_at = "2026-01-02T03:04:05Z";
    const std::string html = render_html_report(f.db, f.ids, options).value();
    EXPECT_NE(html.find("<a href=\"#profile\">"), std::string::npos);
    const std::string s = section(html, "profile");
    ASSERT_FALSE(s.empty());
    EXPECT_NE(s.find("Long-horizon profile</h2>"), std::string::npos);
    // Recall: a chart per task, a line per run; the score chart: only run 1 answered, one line per task.
    EXPECT_EQ(count(s, "<svg"), 3u);
    EXPECT_NE(s.find("Evidence recall@k per checkpoint: state_completion"), std::string::npos);
    EXPECT_NE(s.find("Evidence recall@k per checkpoint: personalized_service"), std::string::npos);
    EXPECT_NE(s.find("Mean item score per checkpoint"), std::string::npos);
    EXPECT_EQ(count(s, "class=\"series-line\""), 2u + 2u + 1u);  // the score chart: run 1's C1-C2 state line
    const std::string first = between(s, "<svg", "</svg>");
    EXPECT_EQ(count(first, "class=\"series-line\""), 2u);
    EXPECT_NE(first.find("verbatim"), std::string::npos);
    EXPECT_NE(first.find("oracle"), std::string::npos);
    // A point's tooltip gives the table's numbers.
    EXPECT_NE(first.find("C1 \u00b7 k=10: recall 62.5% over 2 probes, 1 complete; 4 of 7 gold logs retrieved"),
              std::string::npos);
    // The labels explained, the two tables, data escaped.
    for (const char* label : {"irrelevant_evidence", "identity_miss", "conflated", "detail_miss", "all_clear"})
        EXPECT_NE(s.find(std::string("<dt><code>") + label + "</code></dt>"), std::string::npos) << label;
    EXPECT_NE(s.find("<table class=\"profile\">"), std::string::npos);
    EXPECT_NE(s.find("<table class=\"profile-slices\">"), std::string::npos);
    EXPECT_NE(s.find("<td>app:a&lt;b&gt;&amp;&quot;c</td>"), std::string::npos);
    EXPECT_EQ(html.find(k_odd_app), std::string::npos);
    EXPECT_NE(s.find("<td class=\"num\">50.0 (2/4 logs)</td>"), std::string::npos);
    // Still offline: nothing the page would fetch.
    EXPECT_EQ(s.find("http://"), std::string::npos);
    EXPECT_EQ(s.find("https://"), std::string::npos);
}

TEST(ProfileReport, NoScoreChartWithoutAnswers) {
    auto db = store::ResultsDb::open(":memory:").value();
    const std::vector<std::int64_t> ids = {add_profile_run(db, "oracle", oracle_probes())};
    const std::string html = render_html_report(db, ids, {}).value();
    const std::string s = section(html, "profile");
    ASSERT_FALSE(s.empty());
    EXPECT_EQ(count(s, "<svg"), 2u);
    EXPECT_NE(s.find("No item was scored"), std::string::npos);
}

TEST(ProfileReport, AResultsFileWithoutProfileRowsHasNoSection) {
    auto db = store::ResultsDb::open(":memory:").value();
    const auto ids = testing::build_fixture(db, {});
    EXPECT_TRUE(profile_counts(db, ids).value().empty());
    EXPECT_TRUE(profile_table(db, ids).value().rows.empty());
    EXPECT_TRUE(profile_slices_table(db, ids).value().rows.empty());
    const std::string html = render_html_report(db, ids, {}).value();
    EXPECT_EQ(html.find("<section id=\"profile\">"), std::string::npos);
    EXPECT_EQ(html.find("#profile"), std::string::npos);
    EXPECT_EQ(html.find("Long-horizon profile"), std::string::npos);
}

}  // namespace
}  // namespace memfail::report

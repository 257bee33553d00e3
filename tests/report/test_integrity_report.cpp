// SPDX-License-Identifier: MIT
// The write-integrity scorecard outside the text report: the HTML report's "Write integrity"
// section (the table's numbers in its bars, the failure distribution, by dataset, the answer side),
// the probe browser's memory checks and write-integrity fields, and the results JSON and samples
// JSONL. A results file without memory checks has none of it.
#include "html_test_util.hpp"
#include "report_fixture.hpp"

#include <memfail/report/export.hpp>
#include <memfail/report/html_report.hpp>
#include <memfail/suites/writ/report.hpp>
#include <memfail/figures/svg.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>

namespace memfail::report {
namespace {

using nlohmann::json;
using namespace memfail::suites::writ;

using testing::between;
using testing::count;
using testing::section;

json probe_blob(const std::string& html) {
    return json::parse(between(html, "<script type=\"application/json\" id=\"probe-data\">", "</script>"));
}

struct WritSpec {
    bool grade_answers = false;
    bool ledger = false;  // the recorded probe JSON carries its targets' value histories
};

// The verdict of one check of one probe in one mode at one k, by a fixed rule: the oracle passes
// everything, no memory holds nothing (so nothing stale either), native keeps what it was told but
// retrieves the current value only at k = 5 and the superseded one first for p0; as_of of the
// temporal probe p2 is unverified in native (its read failed).
std::optional<bool> verdict(const std::string& mode, const std::string& check, int probe, int k) {
    if (mode == "oracle") return true;
    const bool negative = check == "stale_exposure";
    if (mode == "no_memory") return negative;
    if (check == "current_held") return true;
    if (check == "current_retrieved") return k == 5;
    if (check == "stale_exposure") return probe != 0;
    if (check == "as_of") return probe == 2 ? std::optional<bool>() : std::optional<bool>(false);
    return true;
}

const std::vector<std::string>& fixture_checks() {
    static const std::vector<std::string> checks = {"current_held", "current_retrieved", "stale_exposure", "as_of"};
    return checks;
}

// One run of "ledger" in three modes over one writ_update scenario of three probes (p2 asks about
// the past), at k = 1 and 5, every check recorded through record_probe.
std::int64_t build_writ(store::ResultsDb& db, const WritSpec& spec) {
    const std::int64_t id = testing::start_run(
        db, "ledger", {{"system", "ledger"}, {"ks", {1, 5}}, {"modes", {"native", "no_memory", "oracle"}}},
        "writ0123456789abcdef");
    for (const std::string mode : {"native", "no_memory", "oracle"}) {
        const std::string suffix = mode == "native" ? "" : "@" + mode;
        const std::string scenario = "writ-update-001" + suffix, dataset = "writ_update" + suffix;
        db.upsert_scenario({id, scenario, dataset, "c0ffee0123456789", 2, 3, "graded"}).value();
        for (int p = 0; p < 3; ++p) {
            const std::string probe_id = "writ-update-001-p" + std::to_string(p);
            json probe = {{"id", probe_id},
                          {"after_session", "2"},
                          {"question", p == 2 ? "Who was my dentist in March?" : "Who is my dentist now?"},
                          {"kind", "open"},
                          {"answer", "Sunrise Dental."},
                          {"evidence", json::array({{{"id", probe_id + ":dentist"},
                                                     {"text", "I switched to Sunrise Dental."},
                                                     {"message_ids", json::array({"2:0"})},
                                                     {"key_details", json::array()}}})},
                          {"capabilities", json::array({"retrieval", "update_tracking"})},
                          {"meta", {{"category", "update"}}},
                          {"rubric", {{"kind", "exact"}}},
                          {"targets", json::array({"dentist"})},
                          {"expected", p == 2 ? "Clearwater Dental" : "Sunrise Dental"},
                          {"expected_source", p == 2 ? "1:0" : "2:0"}};
            if (p == 2) probe["temporal"] = {{"as_of", "2026-03-22T12:00:00Z"}, {"expect_current", false}};
            if (spec.ledger)
                probe["ledger"] = json::array(
                    {{{"id", "dentist"},
                      {"type", "mutable"},
                      {"value", "Sunrise Dental"},
                      {"introduced_in", "1"},
                      {"history", json::array({{{"value", "Clearwater Dental"}, {"as_of", "2026-01-05T09:00:00Z"},
                                                {"message_id", "1:0"}, {"authority", "user_stated"}},
                                               {{"value", "Sunrise Dental"}, {"as_of", "2026-04-02T09:00:00Z"},
                                                {"message_id", "2:0"}, {"authority", "user_stated"}}})}}});
            for (int k : {1, 5}) {
                store::ProbeRow row;
                row.scenario_id = scenario;
                row.dataset = dataset;
                row.probe_id = probe_id;
                row.k = k;
                row.kind = "open";
                const bool found = mode == "oracle" || (mode == "native" && k == 5);
                row.stage = found ? "retrieved" : mode == "no_memory" ? "not_stored" : "not_retrieved";
                row.memory_success = found;
                row.retrieved_json = "[]";
                row.retrieve_micros = 100;
                row.facts.push_back({probe_id + ":dentist", row.stage, "provenance", "[]", "[]", "[]", "checked"});
                if (spec.grade_answers) {
                    row.answer = found ? "Sunrise Dental" : "I am not sure";
                    row.answer_correct = found;
                    row.reasoning = found ? "correct" : "not reached";
                    if (found) row.stage = "correct";
                }
                for (const auto& check : fixture_checks()) {
                    if (check == "stale_exposure" && p == 2) continue;  // not about now
                    store::MemoryCheckRow c;
                    c.check = check;
                    c.passed = verdict(mode, check, p, k);
                    c.detail = c.passed ? (*c.passed ? check + " passed" : check + " failed: \"Clearwater Dental\" at rank 1")
                                        : "state_as_of(2026-03-22T12:00:00Z) failed: timeout";
                    row.memory_checks.push_back(std::move(c));
                }
                row.checkpoint = "2";
                row.probe_json = probe.dump();
                db.record_probe(id, row).value();
            }
        }
    }
    db.finish_run(id, "finished").value();
    auto fixed = db.database().prepare("UPDATE runs SET finished_at = '2026-01-01T00:10:00Z' WHERE id = ?").value();
    fixed.bind(1, id);
    fixed.run().value();
    return id;
}

struct Rendered {
    store::ResultsDb db;
    std::int64_t id = 0;
    std::string html;
};

Rendered render_writ(const WritSpec& spec) {
    auto db = store::ResultsDb::open(":memory:").value();
    const auto id = build_writ(db, spec);
    HtmlReportOptions options;
    options.generated_at = "2026-01-02T03:04:05Z";
    auto html = render_html_report(db, {id}, options);
    EXPECT_TRUE(html.has_value()) << (html ? "" : html.error().describe());
    return {std::move(db), id, html ? *html : std::string()};
}

TEST(IntegrityHtml, SectionIsNumberedAndListed) {
    // Write-integrity datasets only: the report opens with their scorecard, the staged charts follow.
    const auto r = render_writ({});
    ASSERT_FALSE(section(r.html, "integrity").empty());
    EXPECT_NE(r.html.find("<li><a href=\"#integrity\">1. Write integrity</a></li>"), std::string::npos);
    EXPECT_NE(r.html.find("<h2>1. Write integrity</h2>"), std::string::npos);
    EXPECT_LT(r.html.find("<h2>1. Write integrity</h2>"), r.html.find("<h2>2. Success"));
    // The sections after it count on from it.
    EXPECT_NE(r.html.find("<h2>4. Slices"), std::string::npos);
    EXPECT_NE(r.html.find("<h2>5. Success against the system's internal model</h2>"), std::string::npos);
    EXPECT_NE(r.html.find("<h2>7. Runs</h2>"), std::string::npos);
    EXPECT_NE(r.html.find("<h2>8. Probe browser</h2>"), std::string::npos);
    EXPECT_NE(r.html.find("<li><a href=\"#probes\">8. Probes</a></li>"), std::string::npos);
    // Beside another suite's datasets it comes after the staged sections.
    auto db = store::ResultsDb::open(":memory:").value();
    const auto writ = build_writ(db, {});
    testing::FixtureSpec one;
    one.systems = {"extractive"};
    const auto plain = testing::build_fixture(db, one);
    const std::string mixed = render_html_report(db, {writ, plain.front()}, {}).value();
    EXPECT_NE(mixed.find("<h2>4. Write integrity</h2>"), std::string::npos);
}

TEST(IntegrityHtml, BarsCarryTheTableNumbers) {
    auto r = render_writ({});
    const Table table = integrity_table(r.db, {r.id}).value();
    const std::string s = section(r.html, "integrity");
    // run, mode, check, k, probes, passed, rate %, 95% CI, unverified
    ASSERT_EQ(table.columns.size(), 9u);
    // 3 modes x (4 checks at k 1 and 5): every cell decided something, so every one has a bar.
    ASSERT_EQ(table.rows.size(), 3u * 4u * 2u);
    EXPECT_EQ(count(s, "<g class=\"bar\">"), table.rows.size());
    EXPECT_EQ(count(s, "<g class=\"error-bar\">"), table.rows.size());
    for (const auto& row : table.rows) {
        std::string tooltip = "run 1 \u00b7 " + row[0] + " \u00b7 " + row[1] + " \u00b7 " + row[2] + " \u00b7 k=" + row[3] +
                              ": " + row[6] + "% (" + row[5] + "/" + row[4] + "), 95% CI " + row[7];
        if (row[8] != "0") tooltip += ", " + row[8] + " unverified";
        EXPECT_NE(s.find("<title>" + svg::escape(tooltip) + "</title>"), std::string::npos) << tooltip;
        // The table is in the section too, cell by cell.
        EXPECT_NE(s.find("<td>" + row[2] + "</td><td class=\"num\">" + row[3] + "</td><td class=\"num\">" + row[4] +
                         "</td><td class=\"num\">" + row[5] + "</td><td class=\"num\">" + row[6] + "</td>"),
                  std::string::npos)
            << row[2];
    }
    // The page's table names the run as its charts do; the text table keeps the run's label.
    EXPECT_NE(s.find("<td class=\"num\">run 1 \u00b7 ledger</td><td>native</td><td>current_held</td>"), std::string::npos);
    EXPECT_EQ(table.rows[0][0], "ledger");
    // Known cells: native current_retrieved passes at k=5 only; native as_of decided 4 of 6 rows.
    EXPECT_NE(s.find("run 1 \u00b7 ledger \u00b7 native \u00b7 current_retrieved \u00b7 k=1: 0.0% (0/3), 95% CI [0.0, 56.1]"),
              std::string::npos);
    EXPECT_NE(s.find("run 1 \u00b7 ledger \u00b7 native \u00b7 as_of \u00b7 k=5: 0.0% (0/2), 95% CI [0.0, 65.8], 1 unverified"),
              std::string::npos);
    // One legend entry per mode x k, and the notes say what the numbers are.
    EXPECT_EQ(count(s, "<li class=\"legend-entry\" data-key=\"native\""), 2u);
    EXPECT_EQ(count(s, "<li class=\"legend-entry\" data-key=\"oracle\""), 2u);
    EXPECT_NE(s.find("rate = passed / decided, CI = 95% Wilson score interval"), std::string::npos);
    EXPECT_NE(s.find("error bars: 95% Wilson intervals"), std::string::npos);
}

TEST(IntegrityHtml, FailureDistributionCountsFailedRowsPerCheck) {
    const auto r = render_writ({});
    const std::string s = section(r.html, "integrity");
    ASSERT_NE(s.find("Which checks fail"), std::string::npos);
    const std::string table = between(s, "<table class=\"integrity-failures\">", "</table>");
    ASSERT_FALSE(table.empty());
    // native: 6 rows, 5 failing some check (all but p2 at k=5: its as_of is unverified); current_held
    // 0 of 6, current_retrieved 3 of 6 (k=1), stale_exposure 2 of 4 (p0 at both k), as_of 4 of 4 decided.
    EXPECT_NE(table.find("<td>native</td><td class=\"num\">6</td><td class=\"num\">5</td><td class=\"num\">0 / 6</td>"
                         "<td class=\"num\">3 / 6</td><td class=\"num\">2 / 4</td><td class=\"num\">4 / 4</td>"),
              std::string::npos);
    // The oracle fails nothing, and its bar says so instead of "no probes".
    EXPECT_NE(table.find("<td>oracle</td><td class=\"num\">6</td><td class=\"num\">0</td><td class=\"num\">0 / 6</td>"),
              std::string::npos);
    EXPECT_NE(s.find(">no check failed</text>"), std::string::npos);
    EXPECT_NE(s.find(svg::escape("run 1 \u00b7 ledger \u00b7 native: stale_exposure failed on 2 of 4 probe x k rows it "
                                 "decided (22.2% of this mode's 9 failed checks)")),
              std::string::npos);
    // One segment colour per check, the same in the legend.
    EXPECT_EQ(count(s, "<g class=\"segment\" data-key=\"as_of\">"), 2u);  // native and no_memory
}

TEST(IntegrityHtml, ByDatasetAndAnswerSide) {
    const auto offline = render_writ({});
    const std::string s = section(offline.html, "integrity");
    EXPECT_NE(s.find("Write integrity by dataset at each run"), std::string::npos);
    EXPECT_NE(s.find("<td>writ_update</td>"), std::string::npos);
    EXPECT_NE(s.find("No answer of these runs was graded"), std::string::npos);
    EXPECT_EQ(s.find("Mode gaps"), std::string::npos);

    const auto graded = render_writ({.grade_answers = true});
    const std::string g = section(graded.html, "integrity");
    EXPECT_EQ(g.find("No answer of these runs was graded"), std::string::npos);
    EXPECT_NE(g.find("Write integrity, answer side"), std::string::npos);
    EXPECT_NE(g.find("Mode gaps (WRIT)"), std::string::npos);
    // Answers at the largest k: native right on every probe, no_memory on none, so the gaps are
    // +0.0 against the oracle and +100.0 against no memory for recall (p0 and p1).
    EXPECT_NE(g.find("<td>recall_accuracy</td><td class=\"num\">100.0 (2)</td><td class=\"num\">0.0 (2)</td>"
                     "<td class=\"num\">100.0 (2)</td><td class=\"num\">+0.0</td><td class=\"num\">+100.0</td>"),
              std::string::npos);
}

TEST(IntegrityHtml, ProbeBrowserCarriesTheChecksAndTheProbesFields) {
    const auto r = render_writ({});
    const auto blob = probe_blob(r.html);
    EXPECT_EQ(blob["checks"], json::array({"current_held", "current_retrieved", "stale_exposure", "as_of"}));
    std::size_t with_checks = 0;
    for (const auto& row : blob["rows"]) {
        ASSERT_TRUE(row.contains("mc")) << row.dump();
        ++with_checks;
        ASSERT_TRUE(row.contains("s"));
        EXPECT_EQ(blob["strings"][row["s"].get<std::size_t>()].get<std::string>().rfind("writ-update-001", 0), 0u);
    }
    EXPECT_EQ(with_checks, 3u * 3u * 2u);
    // Native p2 at k=5: as_of unverified (null) with the read's failure as its detail.
    bool found = false;
    for (const auto& row : blob["rows"]) {
        if (row["p"] != "writ-update-001-p2" || row["k"] != 5 || blob["datasets"][row["d"].get<std::size_t>()] != "writ_update")
            continue;
        for (const auto& c : row["mc"])
            if (blob["strings"][c[0].get<std::size_t>()] == "as_of") {
                found = true;
                EXPECT_TRUE(c[1].is_null());
                EXPECT_EQ(blob["strings"][c[2].get<std::size_t>()], "state_as_of(2026-03-22T12:00:00Z) failed: timeout");
            }
        // Checks in report order.
        ASSERT_EQ(row["mc"].size(), 3u);
        EXPECT_EQ(blob["strings"][row["mc"][0][0].get<std::size_t>()], "current_held");
    }
    EXPECT_TRUE(found);
    // The probes' memfail/2 fields: expected value and its message, rubric, temporal query, targets.
    bool past = false;
    for (const auto& p : blob["probes"]) {
        EXPECT_EQ(p["v2"], true);
        EXPECT_EQ(p["rk"], "exact");
        EXPECT_EQ(p["tg"], json::array({"dentist"}));
        EXPECT_FALSE(p.contains("lg"));
        if (p.contains("tq")) {
            past = true;
            EXPECT_EQ(p["tq"]["as_of"], "2026-03-22T12:00:00Z");
            EXPECT_EQ(p["tq"]["current"], false);
            EXPECT_EQ(p["x"], "Clearwater Dental");
            EXPECT_EQ(p["xs"], "1:0");
        }
    }
    EXPECT_TRUE(past);
    // The browser's check filter and what it says when the value history is not recorded.
    const std::string probes = section(r.html, "probes");
    EXPECT_NE(probes.find("id=\"f-check\""), std::string::npos);
    EXPECT_NE(r.html.find("is in the dataset file (its scenario"), std::string::npos);
}

TEST(IntegrityHtml, ValueHistoryShownWhenTheProbeRecordsIt) {
    const auto r = render_writ({.ledger = true});
    const auto blob = probe_blob(r.html);
    ASSERT_FALSE(blob["probes"].empty());
    const auto& lg = blob["probes"][0]["lg"];
    ASSERT_EQ(lg.size(), 1u);
    EXPECT_EQ(lg[0]["id"], "dentist");
    ASSERT_EQ(lg[0]["h"].size(), 2u);
    EXPECT_EQ(lg[0]["h"][0], json::array({"Clearwater Dental", "2026-01-05T09:00:00Z", "1:0", "user_stated"}));
}

TEST(IntegrityHtml, NoSectionWithoutMemoryChecks) {
    auto db = store::ResultsDb::open(":memory:").value();
    const auto ids = testing::build_fixture(db, {});
    const std::string html = render_html_report(db, ids, {}).value();
    EXPECT_EQ(html.find("id=\"integrity\""), std::string::npos);
    EXPECT_EQ(html.find("#integrity"), std::string::npos);
    EXPECT_EQ(html.find("<h2>4. Write integrity"), std::string::npos);
    EXPECT_NE(html.find("<h2>4. Success against the system's internal model</h2>"), std::string::npos);
    EXPECT_NE(html.find("<h2>7. Probe browser</h2>"), std::string::npos);
    const auto blob = probe_blob(html);
    EXPECT_TRUE(blob["checks"].empty());
    for (const auto& row : blob["rows"]) EXPECT_FALSE(row.contains("mc"));
    for (const auto& p : blob["probes"]) EXPECT_FALSE(p.contains("v2"));
}

TEST(IntegrityJson, RunsCarryTheTableRowsAsNumbers) {
    auto db = store::ResultsDb::open(":memory:").value();
    const auto writ = build_writ(db, {.grade_answers = true});
    testing::FixtureSpec one;
    one.systems = {"extractive"};
    const auto plain = testing::build_fixture(db, one);
    const auto doc = json::parse(results_json(db, {writ, plain.front()}).value());
    ASSERT_EQ(doc["runs"].size(), 2u);
    EXPECT_FALSE(doc["runs"][1].contains("integrity"));
    const auto& integrity = doc["runs"][0]["integrity"];
    const Table table = integrity_table(db, {writ}, TableStyle::machine).value();
    ASSERT_EQ(integrity["memory"].size(), table.rows.size());
    // run, mode, check, k, probes, passed, rate, ci_low, ci_high, unverified
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
        const auto& row = table.rows[i];
        const auto& j = integrity["memory"][i];
        EXPECT_EQ(j["mode"], row[1]);
        EXPECT_EQ(j["check"], row[2]);
        EXPECT_EQ(j["k"], std::stoi(row[3]));
        EXPECT_EQ(j["probes"], std::stoll(row[4]));
        EXPECT_EQ(j["passed"], std::stoll(row[5]));
        EXPECT_NEAR(j["rate"].get<double>(), std::stod(row[6]), 1e-6);
        EXPECT_NEAR(j["ci_low"].get<double>(), std::stod(row[7]), 1e-6);
        EXPECT_NEAR(j["ci_high"].get<double>(), std::stod(row[8]), 1e-6);
        EXPECT_EQ(j["unverified"], std::stoll(row[9]));
    }
    const auto& first = integrity["memory"][0];
    EXPECT_EQ(first["mode"], "native");
    EXPECT_EQ(first["check"], "current_held");
    EXPECT_EQ(first["rate"], 1.0);
    const Interval ci = wilson_interval(3, 3);
    EXPECT_DOUBLE_EQ(first["ci_low"].get<double>(), ci.low);
    // The answer side, at the largest k.
    const Table answers = integrity_answer_table(db, {writ}, TableStyle::machine).value();
    ASSERT_EQ(integrity["answers"].size(), answers.rows.size());
    ASSERT_FALSE(answers.rows.empty());
    EXPECT_EQ(integrity["answers"][0]["metric"], answers.rows[0][2]);
    EXPECT_EQ(integrity["answers"][0]["k"], 5);
}

TEST(IntegrityJson, SamplesCarryEachProbesChecks) {
    auto db = store::ResultsDb::open(":memory:").value();
    const auto writ = build_writ(db, {});
    testing::FixtureSpec small;
    small.systems = {"extractive"};
    small.probes_per_dataset = 2;
    const auto plain = testing::build_fixture(db, small);
    std::ostringstream out;
    ASSERT_TRUE(write_samples_jsonl(db, {writ, plain.front()}, out).has_value());
    std::istringstream in(out.str());
    std::string line;
    std::size_t writ_lines = 0, plain_lines = 0;
    while (std::getline(in, line)) {
        const auto l = json::parse(line);
        ASSERT_TRUE(l.contains("memory_checks")) << line;
        if (l["system"] != "ledger") {
            ++plain_lines;
            EXPECT_TRUE(l["memory_checks"].empty());
            continue;
        }
        ++writ_lines;
        const auto& checks = l["memory_checks"];
        ASSERT_EQ(checks.size(), l["probe_id"] == "writ-update-001-p2" ? 3u : 4u) << line;
        EXPECT_EQ(checks[0]["check"], "current_held");
        if (l["scenario_id"] == "writ-update-001" && l["probe_id"] == "writ-update-001-p2" && l["k"] == 1) {
            EXPECT_TRUE(checks[2]["passed"].is_null());
            EXPECT_EQ(checks[2]["check"], "as_of");
            EXPECT_EQ(checks[2]["detail"], "state_as_of(2026-03-22T12:00:00Z) failed: timeout");
        }
        if (l["scenario_id"] == "writ-update-001@no_memory") {
            EXPECT_EQ(checks[0]["passed"], false);
        }
    }
    EXPECT_EQ(writ_lines, 3u * 3u * 2u);
    EXPECT_EQ(plain_lines, 2u * 2u * 2u);
}


TEST(IntegrityTables, WrongAnswersArePutInOneLayerEach) {
    auto db = store::ResultsDb::open(":memory:").value();
    const auto id = build_writ(db, {true, false});
    const auto t = layer_table(db, {id});
    ASSERT_TRUE(t.has_value()) << t.error().describe();
    std::map<std::string, std::vector<std::string>> by_mode;
    for (const auto& row : t->rows) by_mode[row[1]] = row;
    // No memory: every answer wrong, and no layer to put them on (WRIT attributes nothing there):
    // the memory checks that fail there fail because nothing was remembered by design.
    ASSERT_TRUE(by_mode.count("no_memory"));
    EXPECT_EQ(by_mode["no_memory"][2], "3");
    for (std::size_t column = 3; column <= 6; ++column) EXPECT_EQ(by_mode["no_memory"][column], "-") << column;
    // Native and oracle answer right at k = 5, the largest: no wrong answer to place.
    EXPECT_FALSE(by_mode.count("oracle"));
    EXPECT_FALSE(by_mode.count("native"));
}

TEST(IntegrityTables, TheScorecardPoolsChecksAndAnswersPerDatasetAtTheLargestK) {
    auto db = store::ResultsDb::open(":memory:").value();
    const auto id = build_writ(db, {.grade_answers = true});
    const auto t = integrity_scorecard_table(db, {id});
    ASSERT_TRUE(t.has_value()) << t.error().describe();
    std::map<std::string, std::vector<std::string>> by_mode;
    for (const auto& row : t->rows) by_mode[row[1]] = row;
    ASSERT_EQ(by_mode.size(), 3u);
    // run, mode, dataset, checks passed, checks %, CI, answers right, answers %, CI, unverified.
    // At k = 5: native holds everything, retrieves the current value, exposes the stale one for p0
    // and fails as_of (p2's as_of unverified); its answers are right.
    EXPECT_EQ(by_mode["native"][2], "writ_update");
    EXPECT_EQ(by_mode["native"][3], "7/10");
    EXPECT_EQ(by_mode["native"][4], "70.0");
    EXPECT_EQ(by_mode["native"][6], "3/3");
    EXPECT_EQ(by_mode["native"][9], "1");
    EXPECT_EQ(by_mode["oracle"][3], "11/11");
    EXPECT_EQ(by_mode["oracle"][6], "3/3");
    EXPECT_EQ(by_mode["no_memory"][3], "2/11");
    EXPECT_EQ(by_mode["no_memory"][6], "0/3");
    EXPECT_EQ(by_mode["no_memory"][7], "0.0");
    EXPECT_EQ(by_mode["no_memory"][8].front(), '[');
    // Without graded answers the answer cells are blank, not zero.
    auto plain = store::ResultsDb::open(":memory:").value();
    const auto no_answers = build_writ(plain, {});
    for (const auto& row : integrity_scorecard_table(plain, {no_answers}).value().rows) EXPECT_EQ(row[6], "") << row[1];
}

TEST(IntegrityTables, DistractorSensitivityIsRecallWithoutInterferenceMinusWith) {
    auto db = store::ResultsDb::open(":memory:").value();
    const std::int64_t id = testing::start_run(db, "ledger", {{"system", "ledger"}, {"ks", {5}}}, "distractor0123456");
    // Four answerable probes with interference (one right), two without (both right).
    int n = 0;
    auto add = [&](bool interfered, bool correct) {
        const std::string scenario = "s" + std::to_string(n++);
        db.upsert_scenario({id, scenario, "writ_drift", "c0ffee0123456789", 1, 1, "graded"}).value();
        store::ProbeRow row;
        row.scenario_id = scenario;
        row.dataset = "writ_drift";
        row.probe_id = scenario + ":probe";
        row.k = 5;
        row.kind = "open";
        row.stage = correct ? "correct" : "reasoning_error";
        row.retrieved_json = "[]";
        row.answer = correct ? "right" : "wrong";
        row.answer_correct = correct;
        row.probe_json = json{{"id", row.probe_id},
                              {"expected", "x"},
                              {"rubric", {{"kind", "exact"}}},
                              {"meta", {{"interference", interfered ? json::array({"near_duplicate"}) : json::array()}}}}
                             .dump();
        db.record_probe(id, row).value();
    };
    add(true, true);
    add(true, false);
    add(true, false);
    add(true, false);
    add(false, true);
    add(false, true);
    db.finish_run(id, "finished").value();
    const auto t = distractor_table(db, {id});
    ASSERT_TRUE(t.has_value()) << t.error().describe();
    ASSERT_EQ(t->rows.size(), 1u);
    EXPECT_EQ(t->rows[0][2], "25.0 (4)");
    EXPECT_EQ(t->rows[0][3], "100.0 (2)");
    EXPECT_EQ(t->rows[0][4], "+75.0");
}

TEST(IntegrityTables, PerDatasetRowsCarryRatesAndIntervals) {
    auto db = store::ResultsDb::open(":memory:").value();
    const auto id = build_writ(db, {true, false});
    const auto t = integrity_dataset_table(db, {id}, TableStyle::machine);
    ASSERT_TRUE(t.has_value()) << t.error().describe();
    std::map<std::string, std::vector<std::string>> rows;  // "mode/side/metric/k" -> row
    for (const auto& row : t->rows) {
        EXPECT_EQ(row[2], "writ_update");
        rows[row[1] + "/" + row[3] + "/" + row[4] + "/" + row[5]] = row;
    }
    // native current_retrieved: never at k = 1, always at k = 5 (three probes each).
    ASSERT_TRUE(rows.count("native/memory/current_retrieved/1"));
    EXPECT_EQ(rows["native/memory/current_retrieved/1"][6], "3");
    EXPECT_EQ(rows["native/memory/current_retrieved/1"][8], "0");
    EXPECT_EQ(rows["native/memory/current_retrieved/5"][8], "1");
    // The interval's bounds are fractions around the rate.
    EXPECT_EQ(rows["native/memory/current_retrieved/5"][10], "1");
    EXPECT_LT(std::stod(rows["native/memory/current_retrieved/5"][9]), 1.0);
    // as_of of the probe about the past is unverified in native: counted apart, never passed.
    EXPECT_EQ(rows["native/memory/as_of/5"][11], "1");
    ASSERT_TRUE(rows.count("no_memory/answer/recall_accuracy/5"));
    EXPECT_EQ(rows["no_memory/answer/recall_accuracy/5"][8], "0");
}

}  // namespace
}  // namespace memfail::report

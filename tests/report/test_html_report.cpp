// SPDX-License-Identifier: MIT
// The HTML report built from a fixed results database: structure, numbers that match the tables,
// escaping, the embedded probe data and the sections that must say when they have nothing to show.
#include "html_test_util.hpp"
#include "report_fixture.hpp"

#include <memfail/report/html_report.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/figures/svg.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>

namespace memfail::report {
namespace {

using testing::build_fixture;
using testing::FixtureSpec;

using testing::between;
using testing::count;
using testing::section;

struct Rendered {
    store::ResultsDb db;
    std::vector<std::int64_t> ids;
    std::string html;
};

Rendered render_fixture(const FixtureSpec& spec, HtmlReportOptions options = {}) {
    auto db = store::ResultsDb::open(":memory:").value();
    auto ids = build_fixture(db, spec);
    options.generated_at = "2026-01-02T03:04:05Z";
    auto html = render_html_report(db, ids, options);
    EXPECT_TRUE(html.has_value()) << (html ? "" : html.error().describe());
    return {std::move(db), std::move(ids), html ? *html : std::string()};
}

nlohmann::json probe_blob(const std::string& html) {
    const std::string text = between(html, "<script type=\"application/json\" id=\"probe-data\">", "</script>");
    EXPECT_FALSE(text.empty());
    EXPECT_EQ(text.find("</"), std::string::npos);
    return nlohmann::json::parse(text);
}

TEST(HtmlReport, IsOneSelfContainedDocument) {
    const auto r = render_fixture({});
    const std::string& html = r.html;
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
                        "script-src 'unsafe-inline'; img-src data:\""),
              std::string::npos);
    // Nothing is fetched: no URLs, no external scripts, styles or images.
    EXPECT_EQ(html.find("http://"), std::string::npos);
    EXPECT_EQ(html.find("https://"), std::string::npos);
    EXPECT_EQ(html.find(" src="), std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_EQ(html.find("@import"), std::string::npos);
    EXPECT_EQ(html.find("url("), std::string::npos);
    for (const char* id : {"success", "stages", "models", "tokens", "runs", "probes"})
        EXPECT_FALSE(section(html, id).empty()) << id;
    EXPECT_NE(html.find("2026-01-02T03:04:05Z"), std::string::npos);
    EXPECT_EQ(html.substr(html.size() - 8), "</html>\n");
}

TEST(HtmlReport, RenderingIsDeterministic) {
    const auto a = render_fixture({});
    const auto b = render_fixture({});
    EXPECT_EQ(a.html, b.html);
}

TEST(HtmlReport, CostIsShownOnlyWithPrices) {
    const auto without = render_fixture({});
    EXPECT_EQ(section(without.html, "runs").find("LLM cost"), std::string::npos);
    EXPECT_NE(section(without.html, "runs").find("--price"), std::string::npos);
    HtmlReportOptions options;
    options.prices = parse_prices({"jdg=1000/2000"}).value();
    const auto with = render_fixture({}, options);
    const std::string runs = section(with.html, "runs");
    ASSERT_NE(runs.find("LLM cost"), std::string::npos);
    // One paid call of 120 prompt and 8 completion tokens: 0.12 + 0.016 dollars per run.
    EXPECT_NE(runs.find("0.1360"), std::string::npos);
}

TEST(HtmlReport, SuccessBarsCarryTheTableNumbers) {
    auto r = render_fixture({});
    const Table table = success_table(r.db, r.ids).value();
    const std::string success = section(r.html, "success");
    // One bar and one error bar per table row; one legend entry per system x k.
    EXPECT_EQ(count(success, "<g class=\"bar\">"), table.rows.size());
    EXPECT_EQ(count(success, "<g class=\"error-bar\">"), table.rows.size());
    EXPECT_EQ(count(success, "<li class=\"legend-entry\""), 2u * 2u);
    ASSERT_EQ(table.columns[5].name, "success");
    for (const auto& row : table.rows) {
        // run, system, dataset, k, probes, success, rate %, 95% CI
        const std::string tooltip = row[2] + " \u00b7 run " + row[0] + " \u00b7 " + row[1] + " \u00b7 k=" + row[3] +
                                    ": " + row[6] + "% (" + row[5] + "/" + row[4] + "), 95% CI " + row[7];
        EXPECT_NE(success.find("<title>" + svg::escape(tooltip) + "</title>"), std::string::npos) << tooltip;
        // The table is in the page too, cell by cell.
        EXPECT_NE(success.find("<td class=\"num\">" + row[6] + "</td>"), std::string::npos);
    }
}

TEST(HtmlReport, StageBreakdownCountsMatchTheTableAndKeepStageColours) {
    auto r = render_fixture({});
    const Table table = success_table(r.db, r.ids).value();
    const std::string stages = section(r.html, "stages");
    // One chart per k, with a picker.
    EXPECT_EQ(count(stages, "<div class=\"k-view\""), 2u);
    EXPECT_NE(stages.find("id=\"stage-k\""), std::string::npos);
    auto column = [&](const char* name) {
        for (std::size_t c = 0; c < table.columns.size(); ++c)
            if (table.columns[c].name == name) return c;
        ADD_FAILURE() << "no column " << name;
        return std::size_t{0};
    };
    const std::size_t not_stored = column("not_stored"), not_retrieved = column("not_retrieved");
    for (const auto& row : table.rows) {
        // not_stored, summary_error, not_retrieved counts of the table appear in the segments' tooltips.
        const std::string prefix = row[2] + " \u00b7 run " + row[0] + " \u00b7 " + row[1] + " \u00b7 k=" + row[3] + ": ";
        if (row[not_stored] != "0") {
            EXPECT_NE(stages.find(svg::escape(prefix + "not stored " + row[not_stored] + " of ")), std::string::npos);
        }
        if (row[not_retrieved] != "0") {
            EXPECT_NE(stages.find(svg::escape(prefix + "not retrieved " + row[not_retrieved] + " of ")),
                      std::string::npos);
        }
    }
    const std::regex re("<g class=\"(segment|legend-entry)\" data-key=\"([a-z_]+)\"><title>[^<]*</title><rect [^>]*fill=\"([^\"]+)\"");
    std::size_t segments = 0;
    for (auto it = std::sregex_iterator(stages.begin(), stages.end(), re); it != std::sregex_iterator(); ++it) {
        EXPECT_EQ((*it)[3].str(), svg::stage_colour((*it)[2].str()));
        segments += (*it)[1] == "segment";
    }
    EXPECT_GT(segments, 0u);
    // The legends are HTML beside the charts, in the same colours.
    const std::regex legend("<li class=\"legend-entry\" data-key=\"([a-z_]+)\"><span class=\"swatch\" style=\"background:([^\"]+)\">");
    std::size_t entries = 0;
    for (auto it = std::sregex_iterator(stages.begin(), stages.end(), legend); it != std::sregex_iterator(); ++it, ++entries)
        EXPECT_EQ((*it)[2].str(), svg::stage_colour((*it)[1].str()));
    EXPECT_GT(entries, 0u);
}

TEST(HtmlReport, SystemNamesAreInertEverywhere) {
    FixtureSpec spec;
    spec.systems = {"evil<script>alert(\"x&'\")</script>", "plain"};
    spec.datasets = {"data<img onerror=x>"};
    const auto r = render_fixture(spec);
    // The only script elements are the report's own: the JSON data and the code.
    EXPECT_EQ(count(r.html, "<script"), 2u);
    EXPECT_EQ(r.html.find("<img"), std::string::npos);
    EXPECT_NE(r.html.find("evil&lt;script&gt;alert(&quot;x&amp;&#39;&quot;)&lt;/script&gt;"), std::string::npos);
    const auto blob = probe_blob(r.html);
    EXPECT_EQ(blob["runs"][0]["label"], "run 1 \u00b7 evil<script>alert(\"x&'\")</script>");
}

TEST(HtmlReport, ProbeDataRoundTripsAQuestionThatClosesTheScript) {
    FixtureSpec spec;
    spec.first_question = "Is </script><script>alert(1)</script> <!-- a question?";
    const auto r = render_fixture(spec);
    const auto blob = probe_blob(r.html);
    bool found = false;
    for (const auto& p : blob["probes"]) found |= p["q"] == spec.first_question;
    EXPECT_TRUE(found);
    // Every probe x k x run is embedded, referring to deduplicated probe texts and memories.
    const std::size_t rows = 2u * 2u * 12u * 2u;
    EXPECT_EQ(blob["rows"].size(), rows);
    // The fixture's two datasets ask word-for-word the same probes: their texts are stored once.
    EXPECT_EQ(blob["probes"].size(), 12u);
    const auto& row = blob["rows"][0];
    EXPECT_TRUE(row.contains("pi"));
    ASSERT_FALSE(row["t"].empty());
    const auto memory = blob["memories"][row["t"][0][0].get<std::size_t>()];
    EXPECT_EQ(memory[1].get<std::string>().rfind("retrieved memory 0 for", 0), 0u);
    // A fact that was stored points at the recorded memory's text.
    bool resolved = false;
    for (const auto& rr : blob["rows"])
        for (const auto& f : rr["f"])
            for (const auto& ref : f["s"])
                if (ref.is_number())
                    resolved |= blob["memories"][ref.get<std::size_t>()][1].get<std::string>().rfind("The user owns", 0) == 0;
    EXPECT_TRUE(resolved);
    EXPECT_EQ(blob["rows"][0]["c"][0][2], "rules");
    ASSERT_EQ(blob["rows"][0]["st"], "not_stored");
    EXPECT_EQ(blob["strings"][blob["rows"][0]["c"][0][5].get<std::size_t>()], "no memory holds the fact");
    EXPECT_EQ(blob["strings"][blob["rows"][0]["f"][0]["x"].get<std::size_t>()], "the fact's key details were checked");
    // Probes in natural order within a dataset: p2 before p10.
    std::vector<std::string> order;
    for (const auto& rr : blob["rows"])
        if (rr["r"] == 0 && rr["d"] == 0 && rr["k"] == 5) order.push_back(rr["p"]);
    ASSERT_GE(order.size(), 11u);
    EXPECT_EQ(order[2], "p2");
    EXPECT_EQ(order[10], "p10");
}

TEST(HtmlReport, OlderRunsWithoutProbeTextsStillBrowse) {
    FixtureSpec spec;
    spec.record_texts = false;
    const auto r = render_fixture(spec);
    const auto blob = probe_blob(r.html);
    EXPECT_TRUE(blob["probes"].empty());
    ASSERT_FALSE(blob["rows"].empty());
    EXPECT_FALSE(blob["rows"][0].contains("pi"));
    // Stored memory ids stay, without text.
    bool by_id = false;
    for (const auto& rr : blob["rows"])
        for (const auto& f : rr["f"])
            for (const auto& ref : f["s"]) by_id |= ref.is_string();
    EXPECT_TRUE(by_id);
}

TEST(HtmlReport, MaxProbesLimitsTheBrowserAndSaysSo) {
    HtmlReportOptions options;
    options.max_probes = 10;
    const auto r = render_fixture({}, options);
    EXPECT_EQ(probe_blob(r.html)["rows"].size(), 10u);
    EXPECT_NE(section(r.html, "probes").find("10 of 96 probe rows"), std::string::npos);
}

TEST(HtmlReport, ModelSectionComparesRunsThatDifferOnlyInTheSystemModel) {
    FixtureSpec spec;
    spec.systems = {"mem0", "mem0", "mem0"};
    spec.system_models = {"small-model", "large-model", "small-model"};
    const auto r = render_fixture(spec);
    const std::string models = section(r.html, "models");
    // Two models (the second small-model run replaces the first), two datasets.
    EXPECT_EQ(count(models, "<g class=\"point\">"), 2u * 2u);
    EXPECT_EQ(count(models, "<g class=\"category-label\">"), 2u);
    EXPECT_NE(models.find("run 3 \u00b7 mem0 (small-model)"), std::string::npos);
    EXPECT_EQ(models.find("No two of these runs"), std::string::npos);

    const auto plain = render_fixture({});
    EXPECT_NE(section(plain.html, "models").find("No two of these runs differ only in the system"), std::string::npos);
    EXPECT_EQ(section(plain.html, "models").find("<svg"), std::string::npos);
}

TEST(HtmlReport, TokenSectionPlotsTokensPerMemoryOrSaysTheyWereNotCounted) {
    const auto r = render_fixture({});
    const std::string tokens = section(r.html, "tokens");
    EXPECT_EQ(count(tokens, "<g class=\"point\">"), 2u * 2u);
    // Run 1, first dataset: 1200 tokens in 30 memories.
    EXPECT_NE(tokens.find("40.0 tokens per memory (1200 tokens in 30 memories)"), std::string::npos);
    EXPECT_NE(tokens.find("cl100k_base tokens"), std::string::npos);

    FixtureSpec spec;
    spec.count_tokens = false;
    const auto none = render_fixture(spec);
    EXPECT_NE(section(none.html, "tokens").find("were not counted"), std::string::npos);
    EXPECT_EQ(section(none.html, "tokens").find("<svg"), std::string::npos);
}

TEST(HtmlReport, RunSectionHasHashesLatenciesAndLlmUsage) {
    const auto r = render_fixture({});
    const std::string runs = section(r.html, "runs");
    EXPECT_NE(runs.find("feedc0de0998"), std::string::npos);  // dataset hash prefix
    EXPECT_NE(runs.find("hash00123456"), std::string::npos);  // config hash prefix
    EXPECT_NE(runs.find("store p95 ms"), std::string::npos);
    EXPECT_NE(runs.find("retrieve p95 ms"), std::string::npos);
    // Store latencies of run 1: 1.00, 1.25, 1.50 ms -> p50 1.25, p95 1.50.
    EXPECT_NE(runs.find("<td class=\"num\">1.25</td><td class=\"num\">1.50</td>"), std::string::npos);
    EXPECT_NE(runs.find("LLM calls"), std::string::npos);
    EXPECT_NE(runs.find("0.1.0-test"), std::string::npos);
}

TEST(HtmlReport, EightSystemsAndSixKStayInsideTheirCharts) {
    FixtureSpec spec;
    spec.systems.clear();
    for (int i = 0; i < 8; ++i) spec.systems.push_back("system-with-a-longish-name-" + std::to_string(i));
    spec.ks = {1, 3, 5, 10, 20, 50};
    spec.datasets = {"a_first_dataset", "second", "third_dataset_name"};
    spec.probes_per_dataset = 4;
    const auto r = render_fixture(spec);
    const std::string success = section(r.html, "success");
    EXPECT_EQ(count(success, "<g class=\"bar\">"), 8u * 6u * 3u);
    EXPECT_EQ(count(success, "<li class=\"legend-entry\""), 8u * 6u);
    // Every chart: rectangles with a size, inside the view box.
    std::size_t charts = 0;
    for (auto at = r.html.find("<svg"); at != std::string::npos; at = r.html.find("<svg", at + 4), ++charts) {
        const std::string chart = r.html.substr(at, r.html.find("</svg>", at) - at);
        std::smatch box;
        ASSERT_TRUE(std::regex_search(chart, box, std::regex("viewBox=\"0 0 ([0-9.]+) ([0-9.]+)\"")));
        const double width = std::stod(box[1]), height = std::stod(box[2]);
        const std::regex rect("<rect x=\"([-0-9.]+)\" y=\"([-0-9.]+)\" width=\"([-0-9.]+)\" height=\"([-0-9.]+)\"");
        for (auto it = std::sregex_iterator(chart.begin(), chart.end(), rect); it != std::sregex_iterator(); ++it) {
            EXPECT_GT(std::stod((*it)[3]), 0);
            EXPECT_GE(std::stod((*it)[1]), 0);
            EXPECT_LE(std::stod((*it)[1]) + std::stod((*it)[3]), width + 0.1);
            EXPECT_LE(std::stod((*it)[2]) + std::stod((*it)[4]), height + 0.1);
        }
    }
    EXPECT_EQ(charts, 1u + 6u + 1u);  // success, one stage chart per k, tokens
}

TEST(HtmlReport, EndToEndRunsShowAnswerStages) {
    FixtureSpec spec;
    spec.grade_answers = true;
    const auto r = render_fixture(spec);
    const std::string stages = section(r.html, "stages");
    EXPECT_NE(stages.find("data-key=\"correct\""), std::string::npos);
    EXPECT_NE(stages.find("data-key=\"reasoning_error\""), std::string::npos);
    EXPECT_NE(section(r.html, "success").find("end-to-end success (%)"), std::string::npos);
    EXPECT_TRUE(probe_blob(r.html)["rows"][0].contains("a"));
}

// A development aid, not a check: MEMFAIL_HTML_DEMO=/path/report.html writes a report of 5 datasets
// x 5 systems x 4 k (about 3500 probe rows per run) to look at in a browser.
TEST(HtmlReportDemo, WritesADemoReportWhenAsked) {
    const char* path = std::getenv("MEMFAIL_HTML_DEMO");
    if (!path) GTEST_SKIP() << "set MEMFAIL_HTML_DEMO=/path/report.html to write the demo report";
    FixtureSpec spec;
    spec.systems = {"extractive", "summarizing", "mem0:model=small", "letta", "zep<\"&'>"};
    spec.datasets = {"conditional_facts_easy", "conditional_facts_hard", "multi_hop_facts", "implicit_preferences",
                     "dynamic_updates"};
    spec.ks = {1, 5, 10, 20};
    spec.probes_per_dataset = 175;
    spec.grade_answers = std::getenv("MEMFAIL_HTML_DEMO_ANSWERS") != nullptr;
    if (std::getenv("MEMFAIL_HTML_DEMO_MODELS")) {  // one system under three internal models
        spec.systems = {"mem0", "mem0", "mem0"};
        spec.system_models = {"qwen2.5-7b-instruct", "llama-3.1-8b-instruct", "gpt-4o-mini"};
    }
    spec.first_question = "Does </script> in a question break the page?";
    HtmlReportOptions options;
    options.title = "memfail demo report";
    const auto r = render_fixture(spec, options);
    std::ofstream(path, std::ios::binary) << r.html;
    std::printf("wrote %s (%zu bytes)\n", path, r.html.size());
}

}  // namespace
}  // namespace memfail::report

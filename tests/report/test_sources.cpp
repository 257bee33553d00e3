// SPDX-License-Identifier: MIT
// Reports over several results files (merge_results, run names in every table and export), the
// machine-friendly CSV (rate, ci_low, ci_high as fractions), reading a results file without
// writing to it, and the tokens-per-memory chart (one series per run, points labelled by run).
#include "report_fixture.hpp"
#include "results_fixture.hpp"

#include <memfail/report/export.hpp>
#include <memfail/report/html_report.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/report/slices.hpp>
#include <memfail/report/sources.hpp>
#include <memfail/figures/svg.hpp>
#include <memfail/figures/stats.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>

namespace memfail::report {
namespace {

using testing::build_fixture;
using testing::FixtureSpec;
using testing::TempResults;

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

std::vector<std::string> split(const std::string& line, char by = ',') {
    std::vector<std::string> out;
    std::stringstream in(line);
    for (std::string cell; std::getline(in, cell, by);) out.push_back(cell);
    if (!line.empty() && line.back() == by) out.emplace_back();
    return out;
}

// Two results files of one system each (run ids 1 in both).
struct TwoFiles {
    TempResults a{"merge-a"};
    TempResults b{"merge-b"};
    TwoFiles() {
        FixtureSpec one;
        one.systems = {"verbatim"};
        auto da = store::ResultsDb::open(a.path()).value();
        build_fixture(da, one);
        FixtureSpec two;
        two.systems = {"oracle"};
        auto db = store::ResultsDb::open(b.path()).value();
        build_fixture(db, two);
    }
    std::string name_a() const { return std::filesystem::path(a.path()).filename().string(); }
    std::string name_b() const { return std::filesystem::path(b.path()).filename().string(); }
};

TEST(MergeResults, RunsOfSeveralFilesAreNamedByFileAndId) {
    TwoFiles files;
    auto merged = merge_results({{files.a.path(), {}}, {files.b.path(), {}}});
    ASSERT_TRUE(merged.has_value()) << merged.error().describe();
    ASSERT_EQ(merged->run_ids.size(), 2u);
    const auto names = run_names(merged->db, merged->run_ids).value();
    EXPECT_EQ(names.at(merged->run_ids[0]), files.name_a() + "#1");
    EXPECT_EQ(names.at(merged->run_ids[1]), files.name_b() + "#1");

    // Every probe, fact and check came along: the summaries equal each file's own.
    auto own = store::ResultsDb::open_read_only(files.b.path()).value();
    const auto expected = own.summary({1}).value();
    const auto got = merged->db.summary({merged->run_ids[1]}).value();
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].success, expected[i].success);
        EXPECT_EQ(got[i].not_stored, expected[i].not_stored);
        EXPECT_EQ(got[i].errors, expected[i].errors);
    }
    EXPECT_EQ(merged->db.probe_rows(merged->run_ids[1]).value().size(), own.probe_rows(1).value().size());
    EXPECT_EQ(merged->db.llm_usage(merged->run_ids[1]).value().size(), own.llm_usage(1).value().size());

    // Text tables: the run column and the per-run titles say FILE#ID.
    const Table flat = success_table(merged->db, merged->run_ids).value();
    EXPECT_EQ(flat.rows.front()[0], files.name_a() + "#1");
    EXPECT_EQ(flat.rows.back()[0], files.name_b() + "#1");
    const auto by_run = success_tables_by_run(merged->db, merged->run_ids).value();
    ASSERT_EQ(by_run.size(), 2u);
    EXPECT_EQ(by_run[1].title, "run " + files.name_b() + "#1: oracle");
    EXPECT_EQ(runs_table(merged->db, merged->run_ids).value().rows.front()[0], files.name_a() + "#1");
    const auto slices_by_run = slices_tables_by_run(merged->db, merged->run_ids).value();
    ASSERT_FALSE(slices_by_run.empty());

    // CSV: a file column beside the run's own id.
    const Table csv = success_table(merged->db, merged->run_ids, TableStyle::machine).value();
    EXPECT_EQ(csv.columns[0].name, "file");
    EXPECT_EQ(csv.columns[1].name, "run");
    EXPECT_EQ(csv.rows.back()[0], files.name_b());
    EXPECT_EQ(csv.rows.back()[1], "1");

    // JSON: each run with its file and its id there; JSONL: each line likewise.
    const auto doc = nlohmann::json::parse(results_json(merged->db, merged->run_ids).value());
    ASSERT_EQ(doc["runs"].size(), 2u);
    EXPECT_EQ(doc["runs"][1]["file"], files.name_b());
    EXPECT_EQ(doc["runs"][1]["path"], files.b.path());
    EXPECT_EQ(doc["runs"][1]["id"], 1);
    EXPECT_EQ(doc["runs"][1]["system"], "oracle");
    std::ostringstream lines;
    write_samples_jsonl(merged->db, merged->run_ids, lines).value();
    std::istringstream in(lines.str());
    std::string first;
    std::getline(in, first);
    const auto sample = nlohmann::json::parse(first);
    EXPECT_EQ(sample["file"], files.name_a());
    EXPECT_EQ(sample["run_id"], 1);

    // The HTML report names runs the same way.
    HtmlReportOptions options;
    const std::string html = render_html_report(merged->db, merged->run_ids, options).value();
    EXPECT_NE(html.find("run " + files.name_b() + "#1 \u00b7 oracle"), std::string::npos);
}

TEST(MergeResults, ChosenRunsAndErrorsNameTheirFile) {
    TwoFiles files;
    auto chosen = merge_results({{files.a.path(), {1}}, {files.b.path(), {1}}});
    ASSERT_TRUE(chosen.has_value()) << chosen.error().describe();
    EXPECT_EQ(chosen->run_ids.size(), 2u);

    auto missing_run = merge_results({{files.a.path(), {}}, {files.b.path(), {7}}});
    ASSERT_FALSE(missing_run.has_value());
    EXPECT_EQ(missing_run.error().where, files.b.path());
    EXPECT_NE(missing_run.error().message.find("no run 7"), std::string::npos);

    const std::string nowhere = files.b.path() + ".missing";
    auto missing_file = merge_results({{files.a.path(), {}}, {nowhere, {}}});
    ASSERT_FALSE(missing_file.has_value());
    EXPECT_EQ(missing_file.error().kind, ErrorKind::not_found);
    EXPECT_EQ(missing_file.error().where, nowhere);

    TempResults junk("merge-junk");
    std::ofstream(junk.path()) << "this is not a database, just text long enough to be read as a header.......";
    auto not_db = merge_results({{files.a.path(), {}}, {junk.path(), {}}});
    ASSERT_FALSE(not_db.has_value());
    EXPECT_EQ(not_db.error().where, junk.path());

    auto twice = merge_results({{files.a.path(), {}}, {files.a.path(), {}}});
    ASSERT_FALSE(twice.has_value());
    EXPECT_NE(twice.error().message.find("given twice"), std::string::npos);
}

TEST(MergeResults, DisplayNamesFallBackToPathsWhenNamesClash) {
    EXPECT_EQ(display_names({"x/results.db", "y/other.db"}), (std::vector<std::string>{"results.db", "other.db"}));
    EXPECT_EQ(display_names({"x/results.db", "y/results.db"}),
              (std::vector<std::string>{"x/results.db", "y/results.db"}));
}

TEST(MachineCsv, RatesAndIntervalsAreNumbersWithPlainHeaders) {
    auto db = store::ResultsDb::open(":memory:").value();
    const auto ids = build_fixture(db, {});
    const Table human = success_table(db, ids).value();
    const Table machine = success_table(db, ids, TableStyle::machine).value();
    const std::string csv = render_csv(machine);
    const std::string header = csv.substr(0, csv.find('\n'));
    EXPECT_EQ(header.find('%'), std::string::npos) << header;
    EXPECT_EQ(header.find(' '), std::string::npos) << header;
    EXPECT_EQ(header.find('*'), std::string::npos) << header;
    EXPECT_EQ(header.find('/'), std::string::npos) << header;
    const auto columns = split(header);
    auto at = [&](const std::string& name) {
        const auto it = std::find(columns.begin(), columns.end(), name);
        EXPECT_NE(it, columns.end()) << name;
        return static_cast<std::size_t>(it - columns.begin());
    };
    const std::size_t probes = at("probes"), success = at("success"), rate = at("rate"), low = at("ci_low"),
                      high = at("ci_high");
    at("tokens_per_probe");
    at("abstain");
    // The human table keeps its columns as they were.
    EXPECT_EQ(human.columns[6].name, "rate %");
    EXPECT_EQ(human.columns[7].name, "95% CI");
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    std::size_t rows = 0;
    while (std::getline(in, line)) {
        const auto cells = split(line);
        ASSERT_EQ(cells.size(), columns.size()) << line;
        const long n = std::stol(cells[probes]), s = std::stol(cells[success]);
        const Interval ci = wilson_interval(s, n);
        // Fractions between 0 and 1, the same numbers the results JSON gives.
        EXPECT_NEAR(std::stod(cells[rate]), static_cast<double>(s) / static_cast<double>(n), 1e-6);
        EXPECT_NEAR(std::stod(cells[low]), ci.low, 1e-6);
        EXPECT_NEAR(std::stod(cells[high]), ci.high, 1e-6);
        EXPECT_LE(std::stod(cells[high]), 1.0);
        ++rows;
    }
    EXPECT_EQ(rows, human.rows.size());
    // The slices table likewise.
    const std::string slices_csv = render_csv(slices_table(db, ids, TableStyle::machine).value());
    const std::string slices_header = slices_csv.substr(0, slices_csv.find('\n'));
    EXPECT_NE(slices_header.find(",rate,ci_low,ci_high,"), std::string::npos) << slices_header;
    EXPECT_EQ(slices_header.find('%'), std::string::npos) << slices_header;
}

// A results file as the first release wrote it (schema 1): runs and probe_results without the
// answer columns, no stage_checks, llm_calls, probe_texts or memory_texts.
void write_version_one(const std::string& path) {
    auto db = store::Database::open(path).value();
    ASSERT_TRUE(db.exec("CREATE TABLE runs(id INTEGER PRIMARY KEY, status TEXT NOT NULL, system_spec TEXT NOT NULL, "
                        "config_json TEXT NOT NULL, config_hash TEXT NOT NULL, code_version TEXT NOT NULL, "
                        "started_at TEXT NOT NULL, finished_at TEXT, error TEXT);"
                        "CREATE TABLE run_scenarios(run_id INTEGER NOT NULL, scenario_id TEXT NOT NULL, dataset TEXT NOT NULL, "
                        "dataset_hash TEXT NOT NULL, sessions INTEGER NOT NULL, probes INTEGER NOT NULL, "
                        "status TEXT NOT NULL, PRIMARY KEY(run_id, scenario_id));"
                        "CREATE TABLE probe_results(run_id INTEGER NOT NULL, scenario_id TEXT NOT NULL, "
                        "dataset TEXT NOT NULL, probe_id TEXT NOT NULL, k INTEGER NOT NULL, kind TEXT NOT NULL, "
                        "stage TEXT NOT NULL, memory_success INTEGER NOT NULL, "
                        "reasoning TEXT NOT NULL DEFAULT 'not graded', retrieved_json TEXT NOT NULL, "
                        "retrieve_micros INTEGER NOT NULL, error TEXT, PRIMARY KEY(run_id, scenario_id, probe_id, k));"
                        "INSERT INTO runs VALUES(1, 'finished', 'verbatim', '{}', 'h', 'old', '2025-01-01T00:00:00Z', "
                        "'2025-01-01T00:01:00Z', NULL);"
                        "INSERT INTO run_scenarios VALUES(1, 's', 'd', 'hash', 1, 2, 'graded');"
                        "INSERT INTO probe_results VALUES(1, 's', 'd', 'p1', 5, 'open', 'retrieved', 1, "
                        "'not graded', '[]', 10, NULL);"
                        "INSERT INTO probe_results VALUES(1, 's', 'd', 'p2', 5, 'open', 'not_stored', 0, "
                        "'not graded', '[]', 12, NULL);")
                    .has_value());
    ASSERT_TRUE(db.set_user_version(1).has_value());
}

TEST(ReadOnlyOpen, AnOlderFileIsReadAsItIsWithoutBeingMigrated) {
    TempResults old("read-only-v1");
    write_version_one(old.path());
    const std::string before = file_bytes(old.path());
    const auto mtime = std::filesystem::last_write_time(old.path());
    {
        auto db = store::ResultsDb::open_read_only(old.path());
        ASSERT_TRUE(db.has_value()) << db.error().describe();
        EXPECT_EQ(db->database().user_version().value(), 1);
        const auto rows = db->probe_rows(1).value();
        ASSERT_EQ(rows.size(), 2u);
        EXPECT_EQ(rows[0].grader, "rules");
        EXPECT_FALSE(rows[0].answer.has_value());
        EXPECT_TRUE(db->llm_usage(1).value().empty());
        EXPECT_FALSE(db->run_writer(1).value().has_value());
        // The whole report renders.
        const auto ids = select_runs(*db, {}).value();
        EXPECT_EQ(success_table(*db, ids).value().rows.size(), 1u);
        EXPECT_TRUE(render_html_report(*db, ids, {}).has_value());
        EXPECT_TRUE(results_json(*db, ids).has_value());
        // Writing is refused by SQLite itself.
        EXPECT_FALSE(db->finish_run(1, "error", "x").has_value());
    }
    EXPECT_EQ(file_bytes(old.path()), before);
    EXPECT_EQ(std::filesystem::last_write_time(old.path()), mtime);
    // No -wal or -shm file is left beside it.
    EXPECT_FALSE(std::filesystem::exists(old.path() + "-wal"));
    EXPECT_FALSE(std::filesystem::exists(old.path() + "-shm"));
}

TEST(ReadOnlyOpen, ACurrentFileIsNotWrittenAndOthersAreRefused) {
    TempResults current("read-only-v3");
    {
        auto db = store::ResultsDb::open(current.path()).value();
        build_fixture(db, {});
    }
    const std::string before = file_bytes(current.path());
    {
        auto db = store::ResultsDb::open_read_only(current.path());
        ASSERT_TRUE(db.has_value()) << db.error().describe();
        EXPECT_EQ(select_runs(*db, {}).value().size(), 2u);
    }
    EXPECT_EQ(file_bytes(current.path()), before);
    EXPECT_FALSE(std::filesystem::exists(current.path() + "-wal"));

    TempResults missing("read-only-missing");
    auto none = store::ResultsDb::open_read_only(missing.path());
    ASSERT_FALSE(none.has_value());
    EXPECT_EQ(none.error().kind, ErrorKind::not_found);
    EXPECT_FALSE(std::filesystem::exists(missing.path()));  // never created

    TempResults other("read-only-other");
    {
        auto db = store::Database::open(other.path()).value();
        ASSERT_TRUE(db.exec("CREATE TABLE notes(x TEXT)").has_value());
    }
    auto foreign = store::ResultsDb::open_read_only(other.path());
    ASSERT_FALSE(foreign.has_value());
    EXPECT_EQ(foreign.error().kind, ErrorKind::invalid_input);
    EXPECT_NE(foreign.error().message.find("not a memfail results file"), std::string::npos);

    TempResults newer("read-only-newer");
    {
        auto db = store::ResultsDb::open(newer.path()).value();
        ASSERT_TRUE(db.database().set_user_version(store::k_results_schema_version + 1).has_value());
    }
    auto refused = store::ResultsDb::open_read_only(newer.path());
    ASSERT_FALSE(refused.has_value());
    EXPECT_NE(refused.error().message.find("upgrade memfail"), std::string::npos);
}

std::string section(const std::string& html, const std::string& id) {
    const auto a = html.find("<section id=\"" + id + "\">");
    const auto b = html.find("</section>", a);
    return a == std::string::npos || b == std::string::npos ? std::string() : html.substr(a, b - a);
}

TEST(TokensChart, OneSeriesPerRunWithPointsLabelledByRun) {
    auto db = store::ResultsDb::open(":memory:").value();
    FixtureSpec spec;
    spec.systems = {"verbatim", "oracle:stage=retrieval,over=verbatim", "notes"};
    spec.datasets = {"conditional_facts_easy", "long_hop", "coexisting_facts"};
    const auto ids = build_fixture(db, spec);
    // A run with a --name is labelled by it.
    auto named = db.database().prepare("UPDATE runs SET config_json = json_set(config_json, '$.name', 'my-notes') WHERE id = ?").value();
    named.bind(1, ids[2]);
    named.run().value();
    const std::string html = render_html_report(db, ids, {}).value();
    const std::string tokens = section(html, "tokens");
    ASSERT_FALSE(tokens.empty());
    // One series (one line) per run, each with one labelled point per dataset.
    EXPECT_EQ(count(tokens, "<g class=\"series\">"), spec.systems.size());
    EXPECT_EQ(count(tokens, "<polyline class=\"series-line\""), spec.systems.size());
    EXPECT_EQ(count(tokens, "<g class=\"point\">"), spec.systems.size() * spec.datasets.size());
    EXPECT_EQ(count(tokens, "class=\"point-label\""), spec.systems.size() * spec.datasets.size());
    const std::vector<std::string> expected = {"run 1", "run 2", "my-notes"};
    for (std::size_t r = 0; r < expected.size(); ++r) {
        const std::string series = "<g class=\"series\"><title>" +
                                   svg::escape("run " + std::to_string(ids[r]) + " \u00b7 " +
                                               (r == 2 ? std::string("my-notes") : spec.systems[r])) +
                                   "</title>";
        const auto start = tokens.find(series);
        ASSERT_NE(start, std::string::npos) << series;
        const std::string group = tokens.substr(start, tokens.find("</g></g>", start) - start);
        // Every point of the series is this run's, by its tooltip and its label.
        std::regex label("class=\"point-label\"[^>]*>([^<]*)</text>");
        std::size_t labels = 0;
        for (auto it = std::sregex_iterator(group.begin(), group.end(), label); it != std::sregex_iterator(); ++it, ++labels)
            EXPECT_EQ((*it)[1].str(), expected[r]);
        EXPECT_EQ(labels, spec.datasets.size());
    }
    // The legend is HTML and names every run.
    EXPECT_EQ(count(tokens, "<li class=\"legend-entry\""), spec.systems.size());
    EXPECT_EQ(count(tokens, "<g class=\"legend-entry\""), 0u);
}

}  // namespace
}  // namespace memfail::report

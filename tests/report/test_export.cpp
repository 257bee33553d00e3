// SPDX-License-Identifier: MIT
// Exports: the samples JSONL (one valid line per probe x k with its documented fields), the results
// JSON (numbers equal to the success table's) and RFC 4180 CSV of the success table.
#include <memfail/report/export.hpp>
#include <memfail/report/run_report.hpp>
#include <memfail/figures/stats.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "results_fixture.hpp"

namespace memfail::report {
namespace {

using nlohmann::json;
using testing::add_run;
using testing::TempResults;

// A schema-3 run with two probes at k = 1 and 5: one fully recorded (probe text, facts, checks,
// stored memories, an answer holding invalid UTF-8), one without probe text as a schema-2 run left it.
std::int64_t detailed_run(store::ResultsDb& db) {
    store::RunRecord run;
    run.system_spec = "facts";
    run.config_json = R"({"system":"facts","ks":[1,5]})";
    run.config_hash = "cfg";
    run.code_version = "test";
    const std::int64_t id = db.create_run(run).value();
    store::ScenarioRecord scenario{id, "sc1", "long_hop", "abc123", 3, 2, "graded"};
    EXPECT_TRUE(db.upsert_scenario(scenario).has_value());
    const json probe = {{"id", "q1"},
                        {"after_session", "s3"},
                        {"question", "Which city does Mara's sister live in?"},
                        {"kind", "open"},
                        {"answer", "Lisbon"},
                        {"evidence", json::array({{{"id", "f1"}, {"text", "Mara's sister lives in Lisbon."}}})}};
    for (int k : {1, 5}) {
        store::ProbeRow p;
        p.scenario_id = "sc1";
        p.dataset = "long_hop";
        p.probe_id = "q1";
        p.k = k;
        p.kind = "open";
        p.stage = k == 1 ? "not_retrieved" : "correct";
        p.memory_success = k == 5;
        p.retrieved_json = R"([{"id":"m2","text":"Mara likes tea","sources":["s1.m1"],"score":0.5}])";
        p.retrieve_micros = 2500;
        p.reasoning = k == 5 ? "correct" : "not reached";
        if (k == 5) {
            p.answer = std::string("Lisbon \xff\xfe (her sister)");
            p.answer_correct = true;
            p.retrieved_tokens = 42;
        }
        p.facts.push_back({"f1", k == 1 ? "not_retrieved" : "retrieved", "provenance", R"(["m1"])",
                           k == 1 ? "[]" : R"(["m1"])", "[]", "stored in m1"});
        p.checks.push_back({"f1", "storage", "rules", true, true, "m1 cites s3.m2"});
        p.checks.push_back({"", "answer", "rules", k == 5, true, "the reply names Lisbon"});
        p.checkpoint = "s3";
        p.probe_json = probe.dump();
        p.stored_memories.push_back({"m1", "Mara's sister moved to Lisbon", R"(["s3.m2"])"});
        EXPECT_TRUE(db.record_probe(id, p).has_value());
    }
    store::ProbeRow old;
    old.scenario_id = "sc1";
    old.dataset = "long_hop";
    old.probe_id = "q2";
    old.k = 1;
    old.kind = "yes_no";
    old.stage = "error";
    old.error = "the retrieval call failed";
    EXPECT_TRUE(db.record_probe(id, old).has_value());
    EXPECT_TRUE(db.record_memory_stats(id, "sc1", "s3", 10, 250, "cl100k_base").has_value());
    EXPECT_TRUE(db.record_llm_calls(id, {{"answer", "answer", "m", false, 100, 10, false, 5000, 1, "", ""},
                                         {"answer", "answer", "m", true, 100, 10, false, 0, 1, "", ""}})
                    .has_value());
    EXPECT_TRUE(db.finish_run(id, "finished").has_value());
    return id;
}

std::vector<json> jsonl_lines(const std::string& text) {
    std::vector<json> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        auto value = json::parse(line, nullptr, false);
        EXPECT_FALSE(value.is_discarded()) << line;
        out.push_back(value);
    }
    return out;
}

TEST(Samples, OneValidLinePerProbeAndK) {
    TempResults file("samples");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto id = detailed_run(db);
    const auto other = add_run(db, "mem0", {{"d", 5, {{"retrieved", 4}, {"not_stored", 3}}}});
    std::ostringstream out;
    auto written = write_samples_jsonl(db, {id, other}, out);
    ASSERT_TRUE(written.has_value()) << written.error().describe();
    EXPECT_EQ(*written, 3u + 7u);
    const std::string text = out.str();
    EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), *written);
    const auto lines = jsonl_lines(text);
    ASSERT_EQ(lines.size(), 10u);
    std::set<std::tuple<std::int64_t, std::string, int>> keys;
    for (const auto& l : lines) {
        for (const char* field : {"run_id", "system", "dataset", "scenario_id", "probe_id", "k", "kind", "checkpoint",
                                  "question", "reference_answer", "stage", "memory_success", "answer",
                                  "answer_correct", "reasoning", "error", "retrieved", "facts", "checks",
                                  "stored_memories", "retrieve_ms", "retrieved_tokens"})
            EXPECT_TRUE(l.contains(field)) << field << " missing in " << l.dump();
        EXPECT_TRUE(l["k"].is_number_integer());
        EXPECT_TRUE(l["retrieve_ms"].is_number());
        EXPECT_TRUE(l["retrieved"].is_array());
        keys.emplace(l["run_id"].get<std::int64_t>(), l["probe_id"].get<std::string>(), l["k"].get<int>());
    }
    EXPECT_EQ(keys.size(), lines.size());  // no probe x k twice

    // The fully recorded probe at k = 5.
    const json* full = nullptr;
    for (const auto& l : lines)
        if (l["probe_id"] == "q1" && l["k"] == 5) full = &l;
    ASSERT_NE(full, nullptr);
    EXPECT_EQ((*full)["question"], "Which city does Mara's sister live in?");
    EXPECT_EQ((*full)["reference_answer"], "Lisbon");
    EXPECT_EQ((*full)["checkpoint"], "s3");
    EXPECT_EQ((*full)["stage"], "correct");
    EXPECT_EQ((*full)["answer_correct"], true);
    EXPECT_EQ((*full)["retrieved_tokens"], 42);
    EXPECT_DOUBLE_EQ((*full)["retrieve_ms"].get<double>(), 2.5);
    EXPECT_EQ((*full)["retrieved"][0]["id"], "m2");
    EXPECT_EQ((*full)["evidence"][0]["id"], "f1");
    ASSERT_EQ((*full)["facts"].size(), 1u);
    EXPECT_EQ((*full)["facts"][0]["stored"], json::array({"m1"}));
    EXPECT_EQ((*full)["facts"][0]["method"], "provenance");
    ASSERT_EQ((*full)["checks"].size(), 2u);
    EXPECT_TRUE((*full)["checks"][0]["fact_id"].is_null() || (*full)["checks"][1]["fact_id"].is_null());
    ASSERT_EQ((*full)["stored_memories"].size(), 1u);
    EXPECT_EQ((*full)["stored_memories"][0]["text"], "Mara's sister moved to Lisbon");
    EXPECT_EQ((*full)["stored_memories"][0]["sources"], json::array({"s3.m2"}));
    // The invalid bytes became U+FFFD; the rest of the answer is intact.
    const std::string answer = (*full)["answer"];
    EXPECT_NE(answer.find("Lisbon \xEF\xBF\xBD"), std::string::npos);
    EXPECT_NE(answer.find("(her sister)"), std::string::npos);

    // The probe without probe text (as a schema-2 run recorded it).
    for (const auto& l : lines) {
        if (l["probe_id"] != "q2") continue;
        EXPECT_TRUE(l["question"].is_null());
        EXPECT_TRUE(l["answer"].is_null());
        EXPECT_EQ(l["stage"], "error");
        EXPECT_EQ(l["error"], "the retrieval call failed");
    }
}

TEST(Samples, FailedStreamIsAnError) {
    TempResults file("samples-fail");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto id = add_run(db, "facts", {{"d", 5, {{"retrieved", 2}}}});
    std::ostringstream out;
    out.setstate(std::ios::badbit);
    auto written = write_samples_jsonl(db, {id}, out);
    ASSERT_FALSE(written.has_value());
    EXPECT_EQ(written.error().kind, ErrorKind::io);
}

// Column index by name in a table.
std::size_t column(const Table& t, const std::string& name) {
    for (std::size_t i = 0; i < t.columns.size(); ++i)
        if (t.columns[i].name == name) return i;
    ADD_FAILURE() << "no column " << name;
    return 0;
}

void expect_results_match_table(store::ResultsDb& db, const std::vector<std::int64_t>& ids) {
    const auto doc = json::parse(results_json(db, ids).value());
    const Table table = success_table(db, ids).value();
    std::size_t row = 0;
    for (const auto& run : doc["runs"]) {
        for (const auto& r : run["results"]) {
            ASSERT_LT(row, table.rows.size());
            const auto& cells = table.rows[row++];
            EXPECT_EQ(std::to_string(run["id"].get<std::int64_t>()), cells[column(table, "run")]);
            EXPECT_EQ(r["dataset"].get<std::string>(), cells[column(table, "dataset")]);
            EXPECT_EQ(std::to_string(r["k"].get<int>()), cells[column(table, "k")]);
            EXPECT_TRUE(r["probes"].is_number_integer());
            EXPECT_TRUE(r["rate"].is_number());
            EXPECT_EQ(std::to_string(r["probes"].get<std::int64_t>()), cells[column(table, "probes")]);
            const std::string success_column = doc["measure"] == "end_to_end" ? "correct" : "success";
            EXPECT_EQ(std::to_string(r["success"].get<std::int64_t>()), cells[column(table, success_column)]);
            EXPECT_EQ(percent(r["rate"].get<double>()), cells[column(table, "rate %")]);
            EXPECT_EQ("[" + percent(r["ci95"][0].get<double>()) + ", " + percent(r["ci95"][1].get<double>()) + "]",
                      cells[column(table, "95% CI")]);
            for (const char* stage : {"not_stored", "summary_error", "not_retrieved"})
                EXPECT_EQ(std::to_string(r["stages"][stage].get<std::int64_t>()), cells[column(table, stage)]);
            EXPECT_EQ(std::to_string(r["stages"]["error"].get<std::int64_t>()), cells[column(table, "errors")]);
            // The stage counts add up to every recorded probe x k.
            std::int64_t total = 0;
            for (const auto& [name, count] : r["stages"].items()) total += count.get<std::int64_t>();
            EXPECT_EQ(total, r["probes"].get<std::int64_t>() + r["stages"]["error"].get<std::int64_t>() +
                                 r["stages"]["needs_answer_stage"].get<std::int64_t>());
        }
    }
    EXPECT_EQ(row, table.rows.size());
}

TEST(ResultsJson, NumbersMatchTheSuccessTable) {
    TempResults file("results-memory");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto a = add_run(db, "facts", {{"long_hop", 1, {{"retrieved", 7}, {"not_retrieved", 5}, {"error", 1}}},
                                         {"implicit", 1, {{"retrieved", 3}, {"not_stored", 2}, {"summary_error", 4}}}});
    const auto b = add_run(db, "mem0", {{"long_hop", 1, {{"retrieved", 2}, {"needs_answer_stage", 3}}}});
    expect_results_match_table(db, {a, b});
    const auto doc = json::parse(results_json(db, {a, b}).value());
    EXPECT_EQ(doc["memfail_results"], 1);
    EXPECT_EQ(doc["measure"], "memory");
    EXPECT_EQ(doc["runs"].size(), 2u);
    const auto& first = doc["runs"][0];
    EXPECT_EQ(first["system"], "facts");
    EXPECT_EQ(first["config"]["seed"], 7);  // parsed, not a string
    EXPECT_EQ(first["status"], "finished");
    EXPECT_EQ(first["datasets"].size(), 2u);
    EXPECT_EQ(first["datasets"][0]["hash"], "hash-of-long_hop");
    const auto& r = first["results"][0];
    EXPECT_EQ(r["probes"], 12);
    EXPECT_NEAR(r["rate"].get<double>(), 7.0 / 12.0, 1e-12);
    const auto ci = wilson_interval(7, 12);
    EXPECT_NEAR(r["ci95"][0].get<double>(), ci.low, 1e-12);
    EXPECT_EQ(r["stages"]["retrieved"], 7);
    EXPECT_TRUE(r["tokens_per_probe"].is_null());
}

TEST(ResultsJson, EndToEndAndRunMetadata) {
    TempResults file("results-e2e");
    auto db = store::ResultsDb::open(file.path()).value();
    const auto id = detailed_run(db);
    const auto other = add_run(db, "mem0", {{"long_hop", 1, {{"correct", 5}, {"reasoning_error", 2}}}});
    expect_results_match_table(db, {id, other});
    const auto doc = json::parse(results_json(db, {id, other}).value());
    EXPECT_EQ(doc["measure"], "end_to_end");
    const auto& run = doc["runs"][0];
    const auto& dataset = run["datasets"][0];
    EXPECT_EQ(dataset["name"], "long_hop");
    EXPECT_EQ(dataset["hash"], "abc123");
    EXPECT_EQ(dataset["memories"], 10);
    EXPECT_DOUBLE_EQ(dataset["tokens_per_memory"].get<double>(), 25.0);
    EXPECT_EQ(dataset["latency"]["retrieve"]["count"], 2);  // the error probe is left out
    EXPECT_DOUBLE_EQ(dataset["latency"]["retrieve"]["p50_ms"].get<double>(), 2.5);
    ASSERT_EQ(run["llm_usage"].size(), 1u);
    EXPECT_EQ(run["llm_usage"][0]["role"], "answer");
    EXPECT_EQ(run["llm_usage"][0]["calls"], 2);
    EXPECT_EQ(run["llm_usage"][0]["cache_hits"], 1);
    for (const auto& r : run["results"]) {
        EXPECT_DOUBLE_EQ(r["tokens_per_memory"].get<double>(), 25.0);
        if (r["k"] == 5) {
            EXPECT_DOUBLE_EQ(r["tokens_per_probe"].get<double>(), 42.0);
        }
    }
}

// A small RFC 4180 reader: quoted fields may hold commas, doubled quotes and line breaks.
std::vector<std::vector<std::string>> read_csv(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (quoted) {
            if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
            else if (ch == '"') quoted = false;
            else field += ch;
        } else if (ch == '"') {
            quoted = true;
        } else if (ch == ',') {
            rows.back().push_back(field), field.clear();
        } else if (ch == '\n') {
            rows.back().push_back(field), field.clear();
            rows.emplace_back();
        } else if (ch != '\r') {
            field += ch;
        }
    }
    if (!rows.back().empty() || !field.empty()) rows.back().push_back(field);
    else rows.pop_back();
    return rows;
}

TEST(Csv, SuccessTableRoundTripsThroughRfc4180) {
    TempResults file("csv");
    auto db = store::ResultsDb::open(file.path()).value();
    // System specs carry commas and quotes (mixture lists, adapter commands).
    const auto id = add_run(db, "mixture:facts,graph \"v2\"", {{"long_hop", 5, {{"retrieved", 3}}}});
    const Table table = success_table(db, {id}).value();
    Table tricky = table;
    tricky.rows[0][column(tricky, "dataset")] = "two\nlines, \"quoted\"";
    const auto rows = read_csv(render_csv(tricky));
    ASSERT_EQ(rows.size(), 2u);
    ASSERT_EQ(rows[0].size(), table.columns.size());
    EXPECT_EQ(rows[1], tricky.rows[0]);
    EXPECT_EQ(rows[1][column(table, "system")], "mixture:facts,graph \"v2\"");
}

}  // namespace
}  // namespace memfail::report

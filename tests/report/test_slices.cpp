// SPDX-License-Identifier: MIT
// Slices: a results file whose probes carry known labels is broken down into the right counts per
// label (condition met or not, derived when the label is missing; condition type; N; hops and voice;
// direct, misleading and ambiguous), the slices of a dimension add up to the dataset's summary, and
// the tables, the JSON and JSONL exports and the HTML report all carry them.
#include <memfail/report/export.hpp>
#include <memfail/report/html_report.hpp>
#include <memfail/report/slices.hpp>
#include <memfail/figures/table.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <sstream>
#include <tuple>

#include "report_fixture.hpp"
#include "results_fixture.hpp"

namespace memfail::report {
namespace {

using nlohmann::json;
using testing::TempResults;

// One probe of the labelled fixture.
struct LabelledProbe {
    std::string dataset;
    std::string id;
    std::string kind;
    std::string stage;
    json meta;
    std::string answer;                 // the reference answer
    int facts = 1;
    std::optional<std::string> reply;   // the test-taker's answer (recorded, answer stage not graded)
};

std::vector<LabelledProbe> labelled_probes() {
    const auto cond = [](const char* id, const char* met, const char* type, const char* answer, const char* stage) {
        json meta = {{"condition_type", type}};
        if (met) meta["condition_met"] = met;
        return LabelledProbe{"conditional_facts_easy", id, "yes_no", stage, meta, answer, 1, std::nullopt};
    };
    std::vector<LabelledProbe> out = {
        cond("cfe-001", "yes", "weather", "Yes, she does.", "retrieved"),
        cond("cfe-002", "yes", "weather", "Yes.", "retrieved"),
        cond("cfe-003", "yes", "weather", "Yes.", "not_retrieved"),
        cond("cfe-004", "yes", "weather", "Yes.", "summary_error"),
        cond("cfe-005", "no", "time_of_day", "No.", "summary_error"),
        cond("cfe-006", "no", "time_of_day", "No, not then.", "summary_error"),
        cond("cfe-007", "no", "time_of_day", "No.", "error"),
        // No condition_met: derived from the reference answer ("No ...": not met).
        cond("cfe-008", nullptr, "time_of_day", "No, never at night.", "not_stored"),
        {"coexisting_facts", "cof-001", "list", "retrieved", {{"n", 2}}, "a, b", 2, std::nullopt},
        {"coexisting_facts", "cof-002", "list", "not_retrieved", {{"n", 2}}, "a, b", 2, std::nullopt},
        {"coexisting_facts", "cof-003", "list", "retrieved", {{"n", 3}}, "a, b, c", 3, std::nullopt},
        // No n: the number of evidence facts.
        {"coexisting_facts", "cof-004", "list", "not_stored", json::object(), "a, b, c, d", 4, std::nullopt},
        {"long_hop", "lhp-001", "mcq", "retrieved", {{"hops", 1}, {"voice", "first_person"}}, "x", 2, std::nullopt},
        {"long_hop", "lhp-002", "mcq", "not_retrieved", {{"hops", 2}, {"voice", "named"}}, "x", 3, std::nullopt},
        {"long_hop", "lhp-003", "mcq", "retrieved", {{"hops", 1}, {"voice", "named"}}, "x", 2, std::nullopt},
        {"long_hop", "lhp-004", "mcq", "summary_error", json::object(), "x", 4, std::nullopt},
        {"persona_retrieval", "per-001-q1", "open", "retrieved", {{"is_misleading", false}}, "tea", 1, std::nullopt},
        {"persona_retrieval", "per-001-q2", "open", "not_stored", {{"is_misleading", false}}, "tea", 1, std::nullopt},
        {"persona_retrieval", "per-001-q3", "abstain", "needs_answer_stage", {{"is_misleading", true}}, "I don't know", 0, std::nullopt},
        {"persona_retrieval", "per-002-q1", "abstain", "ambiguous", {{"is_misleading", true}, {"ambiguous", true}}, "I don't know", 0, std::nullopt},
    };
    out[0].reply = "Yes.";            // right
    out[4].reply = "Yes, she does.";  // wrong: the condition is not met
    out[5].reply = "No.";             // right
    return out;
}

std::int64_t labelled_run(store::ResultsDb& db, const std::string& system = "verbatim") {
    store::RunRecord run;
    run.system_spec = system;
    run.config_json = R"({"system":")" + system + R"(","ks":[5]})";
    run.config_hash = "cfg-" + system;
    run.code_version = "test";
    const std::int64_t id = db.create_run(run).value();
    std::vector<std::string> datasets;
    for (const auto& p : labelled_probes())
        if (std::find(datasets.begin(), datasets.end(), p.dataset) == datasets.end()) datasets.push_back(p.dataset);
    for (const auto& d : datasets) db.upsert_scenario({id, d + "-sc", d, "hash-" + d, 3, 4, "graded"}).value();
    for (const auto& lp : labelled_probes()) {
        store::ProbeRow row;
        row.scenario_id = lp.dataset + "-sc";
        row.dataset = lp.dataset;
        row.probe_id = lp.id;
        row.k = 5;
        row.kind = lp.kind;
        row.stage = lp.stage;
        row.memory_success = lp.stage == "retrieved";
        if (lp.stage == "error") row.error = "the retrieval call failed";
        if (lp.reply) {
            row.answer = *lp.reply;
            row.reasoning = "not reached";
        }
        json evidence = json::array();
        for (int f = 0; f < lp.facts; ++f)
            evidence.push_back({{"id", lp.id + "-f" + std::to_string(f + 1)}, {"text", "fact"}, {"message_ids", {"m1"}},
                                {"key_details", json::array()}});
        row.checkpoint = "s3";
        row.probe_json = json{{"id", lp.id}, {"after_session", "s3"}, {"question", "Q?"}, {"kind", lp.kind},
                              {"answer", lp.answer}, {"evidence", evidence}, {"meta", lp.meta}}
                             .dump();
        db.record_probe(id, row).value();
    }
    db.finish_run(id, "finished").value();
    return id;
}

// (dataset, dimension, label) -> slice, for one k.
std::map<std::tuple<std::string, std::string, std::string>, Slice> by_label(const std::vector<Slice>& all) {
    std::map<std::tuple<std::string, std::string, std::string>, Slice> out;
    for (const auto& s : all) out[{s.counts.dataset, s.dimension, s.label}] = s;
    return out;
}

TEST(Slices, CountEachLabelAsTheSuccessTableCountsADataset) {
    TempResults file("slices-labels");
    auto db = store::ResultsDb::open(file.path()).value();
    const std::int64_t id = labelled_run(db);
    const auto all = slices(db, {id}).value();
    const auto s = by_label(all);

    const auto& met = s.at({"conditional_facts_easy", "condition", "met"});
    EXPECT_EQ(met.counts.graded, 4);
    EXPECT_EQ(met.counts.success, 2);
    EXPECT_EQ(met.counts.not_retrieved, 1);
    EXPECT_EQ(met.counts.summary_error, 1);
    EXPECT_EQ(met.answers_read, 1);
    EXPECT_EQ(met.answers_right, 1);
    const auto& not_met = s.at({"conditional_facts_easy", "condition", "not met"});
    EXPECT_EQ(not_met.counts.graded, 4);  // cfe-008 has no condition_met: its "No" answer says not met
    EXPECT_EQ(not_met.counts.errors, 1);
    EXPECT_EQ(not_met.counts.success, 0);
    EXPECT_EQ(not_met.counts.summary_error, 2);
    EXPECT_EQ(not_met.counts.not_stored, 1);
    EXPECT_EQ(not_met.answers_read, 2);
    EXPECT_EQ(not_met.answers_right, 1);
    EXPECT_EQ(slice_rate(not_met, false).probes, 3);  // errors leave the denominator
    EXPECT_EQ(s.count({"conditional_facts_easy", "condition", "unknown"}), 0u);
    EXPECT_EQ(s.at({"conditional_facts_easy", "condition type", "weather"}).counts.success, 2);
    EXPECT_EQ(s.at({"conditional_facts_easy", "condition type", "time_of_day"}).counts.graded, 4);

    EXPECT_EQ(s.at({"coexisting_facts", "N", "2"}).counts.graded, 2);
    EXPECT_EQ(s.at({"coexisting_facts", "N", "2"}).counts.success, 1);
    EXPECT_EQ(s.at({"coexisting_facts", "N", "3"}).counts.success, 1);
    EXPECT_EQ(s.at({"coexisting_facts", "N", "4"}).counts.not_stored, 1);  // from its 4 facts

    EXPECT_EQ(s.at({"long_hop", "hops", "1"}).counts.graded, 2);
    EXPECT_EQ(s.at({"long_hop", "hops", "1"}).counts.success, 2);
    EXPECT_EQ(s.at({"long_hop", "hops", "2"}).counts.not_retrieved, 1);
    EXPECT_EQ(s.at({"long_hop", "hops", "3"}).counts.summary_error, 1);  // from its 4 facts
    EXPECT_EQ(s.at({"long_hop", "voice", "first person"}).counts.success, 1);
    EXPECT_EQ(s.at({"long_hop", "voice", "named"}).counts.graded, 2);
    EXPECT_EQ(s.at({"long_hop", "voice", "unknown"}).counts.graded, 1);

    const auto& direct = s.at({"persona_retrieval", "probe", "direct"});
    EXPECT_EQ(direct.counts.graded, 2);
    EXPECT_EQ(direct.counts.success, 1);
    EXPECT_EQ(direct.counts.not_stored, 1);
    const auto& misleading = s.at({"persona_retrieval", "probe", "misleading"});
    EXPECT_EQ(misleading.counts.graded, 0);
    EXPECT_EQ(misleading.counts.needs_answer_stage, 1);
    const auto& ambiguous = s.at({"persona_retrieval", "probe", "ambiguous"});
    EXPECT_EQ(ambiguous.counts.graded, 0);
    EXPECT_EQ(ambiguous.counts.ambiguous, 1);
    EXPECT_EQ(ambiguous.counts.needs_answer_stage, 0);

    // Order: datasets as recorded, dimensions as probe_slices gives them, labels in their order.
    std::vector<std::string> order;
    for (const auto& sl : all)
        if (sl.counts.dataset == "conditional_facts_easy" || sl.counts.dataset == "persona_retrieval")
            order.push_back(sl.dimension + "=" + sl.label);
    EXPECT_EQ(order, (std::vector<std::string>{"condition=met", "condition=not met", "condition type=time_of_day",
                                               "condition type=weather", "probe=direct", "probe=misleading",
                                               "probe=ambiguous"}));
}

TEST(Slices, EachDimensionAddsUpToTheDatasetSummary) {
    TempResults file("slices-sum");
    auto db = store::ResultsDb::open(file.path()).value();
    testing::FixtureSpec spec;
    spec.datasets = {"conditional_facts_easy", "long_hop"};
    const auto ids = testing::build_fixture(db, spec);
    const std::int64_t labelled = labelled_run(db, "facts");
    std::vector<std::int64_t> all_ids = ids;
    all_ids.push_back(labelled);
    const auto summary = db.summary(all_ids).value();
    const auto all = slices(db, all_ids).value();
    std::map<std::tuple<std::int64_t, std::string, int, std::string>, store::SummaryRow> sums;
    for (const auto& s : all) {
        auto& t = sums[{s.counts.run_id, s.counts.dataset, s.counts.k, s.dimension}];
        t.graded += s.counts.graded;
        t.success += s.counts.success;
        t.not_stored += s.counts.not_stored;
        t.summary_error += s.counts.summary_error;
        t.not_retrieved += s.counts.not_retrieved;
        t.errors += s.counts.errors;
        t.needs_answer_stage += s.counts.needs_answer_stage;
        t.ambiguous += s.counts.ambiguous;
    }
    std::size_t checked = 0;
    for (const auto& entry : sums) {
        const auto& key = entry.first;
        const auto& t = entry.second;
        const auto& [run, dataset, k, dimension] = key;
        // The lambda reads `key`: clang 14 cannot capture a structured binding.
        const auto it = std::find_if(summary.begin(), summary.end(), [&key](const store::SummaryRow& r) {
            return r.run_id == std::get<0>(key) && r.dataset == std::get<1>(key) && r.k == std::get<2>(key);
        });
        ASSERT_NE(it, summary.end());
        EXPECT_EQ(t.graded, it->graded) << dataset << " " << dimension;
        EXPECT_EQ(t.success, it->success) << dataset << " " << dimension;
        EXPECT_EQ(t.not_stored, it->not_stored) << dataset << " " << dimension;
        EXPECT_EQ(t.summary_error, it->summary_error) << dataset << " " << dimension;
        EXPECT_EQ(t.not_retrieved, it->not_retrieved) << dataset << " " << dimension;
        EXPECT_EQ(t.errors, it->errors) << dataset << " " << dimension;
        EXPECT_EQ(t.needs_answer_stage, it->needs_answer_stage) << dataset << " " << dimension;
        EXPECT_EQ(t.ambiguous, it->ambiguous) << dataset << " " << dimension;
        ++checked;
    }
    // Fixture: 2 runs x 2 datasets x 2 k x 2 dimensions (the fixture's probes carry no labels: one
    // "unknown" slice each); labelled run: 2 + 1 + 2 + 1 dimensions.
    EXPECT_EQ(checked, 2u * 2u * 2u * 2u + 6u);
}

TEST(Slices, TablesExportsAndHtmlCarryThem) {
    TempResults file("slices-render");
    auto db = store::ResultsDb::open(file.path()).value();
    const std::int64_t id = labelled_run(db);

    const Table flat = slices_table(db, {id}).value();
    ASSERT_FALSE(flat.rows.empty());
    EXPECT_EQ(flat.columns[4].name, "slice");
    EXPECT_EQ(flat.columns[5].name, "label");
    bool found = false;
    for (const auto& row : flat.rows)
        if (row[2] == "conditional_facts_easy" && row[5] == "not met") {
            found = true;
            EXPECT_EQ(row[6], "3");    // probes
            EXPECT_EQ(row[7], "0");    // success
            EXPECT_EQ(row[8], "0.0");  // rate %
            EXPECT_EQ(row[11], "2");   // summary_error
        }
    EXPECT_TRUE(found);
    const auto& cols = flat.columns;
    EXPECT_NE(std::find_if(cols.begin(), cols.end(), [](const Column& c) { return c.name == "answers right"; }), cols.end());
    const auto by_run = slices_tables_by_run(db, {id}).value();
    ASSERT_EQ(by_run.size(), 1u);
    EXPECT_EQ(by_run[0].rows.size(), flat.rows.size());
    EXPECT_EQ(by_run[0].columns.front().name, "dataset");
    EXPECT_NE(render_csv(flat).find("not met"), std::string::npos);

    const json doc = json::parse(results_json(db, {id}).value());
    const auto& js = doc["runs"][0]["slices"];
    ASSERT_EQ(js.size(), flat.rows.size());
    bool json_found = false;
    for (const auto& s : js)
        if (s["dataset"] == "conditional_facts_easy" && s["slice"] == "condition" && s["label"] == "not met") {
            json_found = true;
            EXPECT_EQ(s["probes"], 3);
            EXPECT_EQ(s["success"], 0);
            EXPECT_EQ(s["stages"]["summary_error"], 2);
            EXPECT_EQ(s["stages"]["not_stored"], 1);
            EXPECT_EQ(s["stages"]["error"], 1);
            EXPECT_EQ(s["answers"]["read"], 2);
            EXPECT_EQ(s["answers"]["right"], 1);
            EXPECT_EQ(s["ci95"].size(), 2u);
        }
    EXPECT_TRUE(json_found);

    std::ostringstream samples;
    ASSERT_TRUE(write_samples_jsonl(db, {id}, samples).has_value());
    std::istringstream lines(samples.str());
    std::map<std::string, json> labels;
    for (std::string line; std::getline(lines, line);) {
        const json j = json::parse(line);
        labels[j["probe_id"]] = j["slices"];
    }
    ASSERT_EQ(labels.size(), labelled_probes().size());
    EXPECT_EQ(labels["cfe-008"], (json{{"condition", "not met"}, {"condition_type", "time_of_day"}}));
    EXPECT_EQ(labels["cof-004"], (json{{"n", "4"}}));
    EXPECT_EQ(labels["lhp-001"], (json{{"hops", "1"}, {"voice", "first person"}}));
    EXPECT_EQ(labels["per-001-q3"], (json{{"probe", "misleading"}}));
    EXPECT_EQ(labels["per-002-q1"], (json{{"probe", "ambiguous"}}));

    HtmlReportOptions options;
    options.generated_at = "2026-01-01T00:00:00Z";
    const std::string html = render_html_report(db, {id}, options).value();
    const auto start = html.find("<section id=\"slices\">");
    ASSERT_NE(start, std::string::npos);
    const std::string section = html.substr(start, html.find("</section>", start) - start);
    for (const char* d : {"conditional_facts_easy", "coexisting_facts", "long_hop", "persona_retrieval"})
        EXPECT_NE(section.find(std::string("<caption>") + d + ": slices</caption>"), std::string::npos) << d;
    EXPECT_NE(section.find("condition: not met"), std::string::npos);
    EXPECT_NE(section.find("<svg"), std::string::npos);
    // Deterministic: the same file renders to the same bytes.
    EXPECT_EQ(render_html_report(db, {id}, options).value(), html);
}

TEST(Slices, LabelFieldsFromProbeJsonMatchTheQuery) {
    // The JSONL path (label_fields over probe JSON) and the SQL path agree on importer-style labels.
    const json probe = {{"answer", "No, she does not."},
                        {"evidence", json::array({json::object()})},
                        {"meta", {{"condition_met", false}, {"condition_type", "weather"}}}};
    const auto f = label_fields("yes_no", "summary_error", probe.dump());
    ASSERT_TRUE(f.condition_met.has_value());
    EXPECT_EQ(*f.condition_met, "0");
    EXPECT_EQ(probe_slices("conditional_facts_hard", f).front().label, "not met");
    EXPECT_TRUE(probe_slices("some_other_dataset", f).empty());
    EXPECT_EQ(probe_slices("persona_retrieval", label_fields("abstain", "ambiguous", "")).front().label, "ambiguous");
    EXPECT_EQ(probe_slices("conditional_facts_easy", label_fields("yes_no", "retrieved", "not json")).front().label,
              "unknown");
}

}  // namespace
}  // namespace memfail::report

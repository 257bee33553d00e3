// SPDX-License-Identifier: MIT
// The published benchmarks in the report: LoCoMo probes sliced by category and LongMemEval probes by
// question type; the "Benchmark metric" table scores recorded answers (LoCoMo token F1 per category,
// LongMemEval accuracy per question type, abstention, task-averaged, overall) and, for a run that
// recorded no answer, says it needs an answer model.
#include <memfail/report/benchmark.hpp>
#include <memfail/report/evidence_recall.hpp>
#include <memfail/report/slices.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <optional>

#include "results_fixture.hpp"

namespace memfail::report {
namespace {

using nlohmann::json;
using testing::TempResults;

struct Row {
    std::string dataset, id, kind, stage;
    json meta;
    std::string reference;
    std::optional<std::string> answer;
    std::optional<bool> correct;
    std::optional<bool> benchmark;  // the verdict kept for a dataset that scores every answer
    std::vector<std::string> fact_stages = {};  // one fact per cited turn, with its recorded stage
};

std::int64_t run_with(store::ResultsDb& db, const std::vector<Row>& rows) {
    store::RunRecord run;
    run.system_spec = "verbatim";
    run.config_json = R"({"system":"verbatim","ks":[5]})";
    run.config_hash = "cfg";
    run.code_version = "test";
    const std::int64_t id = db.create_run(run).value();
    for (const char* d : {"locomo", "longmemeval"}) db.upsert_scenario({id, std::string(d) + "-sc", d, "h", 1, 1, "graded"}).value();
    for (const auto& r : rows) {
        store::ProbeRow row;
        row.scenario_id = r.dataset + "-sc";
        row.dataset = r.dataset;
        row.probe_id = r.id;
        row.k = 5;
        row.kind = r.kind;
        row.stage = r.stage;
        row.memory_success = r.stage == "retrieved" || r.stage == "correct";
        if (r.answer) row.answer = *r.answer;
        if (r.correct) row.answer_correct = *r.correct;
        if (r.benchmark) row.checks.push_back({"", "benchmark", "llm", *r.benchmark, false, "judge"});
        for (std::size_t f = 0; f < r.fact_stages.size(); ++f) {
            store::FactRow fact;
            fact.fact_id = "D1:" + std::to_string(f + 1);
            fact.stage = r.fact_stages[f];
            fact.method = "rules";
            row.facts.push_back(std::move(fact));
        }
        row.checkpoint = "s1";
        row.probe_json = json{{"id", r.id}, {"after_session", "s1"}, {"question", "Q?"}, {"kind", r.kind},
                              {"answer", r.reference}, {"evidence", json::array()}, {"meta", r.meta}}
                             .dump();
        db.record_probe(id, row).value();
    }
    db.finish_run(id, "finished").value();
    return id;
}

json locomo(int category, const char* name) { return {{"category", category}, {"category_name", name}}; }
json lme(const char* type, bool abstention = false) { return {{"question_type", type}, {"abstention", abstention}}; }

std::vector<Row> answered_rows() {
    return {
        {"locomo", "qa-1", "open", "correct", locomo(4, "single-hop"), "Biscuit", "Biscuit", true, std::nullopt},
        {"locomo", "qa-2", "open", "not_retrieved", locomo(4, "single-hop"), "Biscuit", "Her dog is called Biscuit.", std::nullopt, std::nullopt},
        {"locomo", "qa-3", "open", "correct", locomo(1, "multi-hop"), "pottery, camping", "pottery and camping", true, std::nullopt},
        {"locomo", "qa-4", "abstain", "correct", locomo(5, "adversarial"), "Not mentioned", "That is not mentioned.", true, std::nullopt},
        {"locomo", "qa-5", "open", "correct", locomo(0, "unknown"), "x", "x", true, std::nullopt},
        {"longmemeval", "a", "open", "correct", lme("single-session-user"), "x", "x", true, std::nullopt},
        {"longmemeval", "b", "open", "reasoning_error", lme("single-session-user"), "x", "y", false, std::nullopt},
        {"longmemeval", "c", "open", "not_retrieved", lme("knowledge-update"), "x", "y", std::nullopt, false},
        {"longmemeval", "d_abs", "abstain", "correct", lme("knowledge-update", true), "x", "none", true, std::nullopt},
        // Memory failed, answer right anyway (and judged so): in LongMemEval's accuracy, not in a stage rate.
        {"longmemeval", "e", "open", "not_stored", lme("multi-session"), "x", "x", std::nullopt, true},
        // Memory failed and the judge call failed: no verdict, so not scored.
        {"longmemeval", "f", "open", "not_retrieved", lme("multi-session"), "x", "x", std::nullopt, std::nullopt},
    };
}

std::map<std::pair<std::string, std::string>, BenchmarkCell> by_slice(const std::vector<BenchmarkCell>& cells) {
    std::map<std::pair<std::string, std::string>, BenchmarkCell> out;
    for (const auto& c : cells) out[{c.dataset, c.slice}] = c;
    return out;
}

TEST(BenchmarkReport, ScoresRecordedAnswersAsTheBenchmarksDo) {
    TempResults file("benchmark-cells");
    auto db = store::ResultsDb::open(file.path()).value();
    const std::int64_t id = run_with(db, answered_rows());
    const auto cells = by_slice(benchmark_cells(db, {id}).value());
    const auto& single = cells.at({"locomo", "4 single-hop"});
    EXPECT_EQ(single.metric, "token F1");
    EXPECT_EQ(single.scored, 2);  // every recorded answer, whatever its memory stage
    // Each question's F1 rounded to 3 decimals before the mean, as the authors store it.
    EXPECT_NEAR(*single.score, (1.0 + 0.333) / 2.0, 1e-12);
    EXPECT_NEAR(*cells.at({"locomo", "1 multi-hop"}).score, 0.667, 1e-12);
    EXPECT_NEAR(*cells.at({"locomo", "5 adversarial"}).score, 1.0, 1e-12);
    EXPECT_EQ(cells.at({"locomo", "all"}).scored, 4);  // category 0 is outside every figure
    EXPECT_EQ(cells.count({"locomo", "0 unknown"}), 0u);
    // LongMemEval: every answer with a verdict, the ones whose memory failed first included (their
    // `benchmark` check), as the authors score every question.
    const auto& ssu = cells.at({"longmemeval", "single-session-user"});
    EXPECT_EQ(ssu.metric, "accuracy");
    EXPECT_NEAR(*ssu.score, 0.5, 1e-12);
    const auto& ku = cells.at({"longmemeval", "knowledge-update"});
    EXPECT_EQ(ku.probes, 2);
    EXPECT_EQ(ku.scored, 2);
    EXPECT_NEAR(*ku.score, 0.5, 1e-12);
    const auto& ms = cells.at({"longmemeval", "multi-session"});
    EXPECT_EQ(ms.probes, 2);
    EXPECT_EQ(ms.scored, 1);  // the one without a verdict is left out, never counted right
    EXPECT_EQ(ms.answered, 2);
    // The authors' accuracy is over every question: a slice with an answer left unscored has no score,
    // and neither have the figures over every slice.
    EXPECT_FALSE(ms.score.has_value());
    EXPECT_FALSE(cells.at({"longmemeval", "task-averaged"}).score.has_value());
    EXPECT_FALSE(cells.at({"longmemeval", "overall"}).score.has_value());
    EXPECT_NEAR(*cells.at({"longmemeval", "abstention"}).score, 1.0, 1e-12);
    {
        // Every answer with a verdict: the averages have their values.
        auto rows = answered_rows();
        rows.pop_back();
        const std::int64_t complete = run_with(db, rows);
        const auto c = by_slice(benchmark_cells(db, {complete}).value());
        EXPECT_NEAR(*c.at({"longmemeval", "multi-session"}).score, 1.0, 1e-12);
        EXPECT_NEAR(*c.at({"longmemeval", "task-averaged"}).score, (0.5 + 0.5 + 1.0) / 3.0, 1e-12);
        EXPECT_NEAR(*c.at({"longmemeval", "overall"}).score, 3.0 / 5.0, 1e-12);
    }

    const Table t = benchmark_table(db, {id}).value();
    ASSERT_FALSE(t.rows.empty());
    for (const auto& row : t.rows) EXPECT_NE(row.back(), "needs an answer model");
    const Table machine = benchmark_table(db, {id}, TableStyle::machine).value();
    EXPECT_EQ(machine.columns.back().name, "score");

    // Slices by the benchmarks' own labels.
    std::map<std::pair<std::string, std::string>, Slice> s;
    for (const auto& sl : slices(db, {id}).value()) s[{sl.dimension, sl.label}] = sl;
    EXPECT_EQ(s.at({"category", "4 single-hop"}).counts.graded, 2);
    EXPECT_EQ(s.at({"question type", "knowledge-update"}).counts.graded, 2);
    const auto fields = label_fields("open", "correct", json{{"meta", locomo(2, "temporal")}}.dump());
    EXPECT_EQ(fields.benchmark_type.value_or(""), "2 temporal");
}

TEST(BenchmarkReport, OfflineRunsNeedAnAnswerModel) {
    TempResults file("benchmark-offline");
    auto db = store::ResultsDb::open(file.path()).value();
    std::vector<Row> rows = answered_rows();
    for (auto& r : rows) {
        r.answer.reset();
        r.correct.reset();
        r.benchmark.reset();
        if (r.stage == "correct" || r.stage == "reasoning_error") r.stage = "retrieved";
    }
    const std::int64_t id = run_with(db, rows);
    const Table t = benchmark_table(db, {id}).value();
    ASSERT_FALSE(t.rows.empty());
    for (const auto& row : t.rows) EXPECT_EQ(row.back(), "needs an answer model");
    // No benchmark dataset, no table.
    TempResults other("benchmark-none");
    auto empty = store::ResultsDb::open(other.path()).value();
    EXPECT_TRUE(benchmark_table(empty, {}).value().rows.empty());
}

TEST(EvidenceRecall, EveryAnyAndTheShareOfCitedTurnsPerCategoryUnusableApart) {
    TempResults file("evidence-recall");
    auto db = store::ResultsDb::open(file.path()).value();
    json unusable = locomo(3, "open-domain");
    unusable["evidence_usable"] = false;
    Row whole{"locomo", "qa-4", "open", "needs_answer_stage", unusable, "x", std::nullopt, std::nullopt, std::nullopt};
    Row all_in{"locomo", "qa-1", "open", "retrieved", locomo(1, "multi-hop"), "x", std::nullopt, std::nullopt, std::nullopt};
    all_in.fact_stages = {"retrieved", "retrieved"};
    Row one_of_three{"locomo", "qa-2", "open", "not_retrieved", locomo(1, "multi-hop"), "x", std::nullopt, std::nullopt, std::nullopt};
    one_of_three.fact_stages = {"retrieved", "not_retrieved", "unverified"};
    Row none_in{"locomo", "qa-3", "open", "not_retrieved", locomo(4, "single-hop"), "x", std::nullopt, std::nullopt, std::nullopt};
    none_in.fact_stages = {"not_retrieved"};
    Row declined{"locomo", "qa-5", "abstain", "correct", locomo(5, "adversarial"), "x", std::nullopt, std::nullopt, std::nullopt};
    const std::int64_t id = run_with(db, {whole, all_in, one_of_three, none_in, declined});
    const Table t = evidence_recall_table(db, {id}, TableStyle::machine).value();
    std::map<std::string, std::vector<std::string>> rows;
    for (const auto& r : t.rows) rows[r[3]] = r;
    // Columns: run, dataset, k, slice, questions, every, any, cited, retrieved, share, unsure, unusable.
    ASSERT_TRUE(rows.count("1 multi-hop"));
    EXPECT_EQ(rows["1 multi-hop"][4], "2");
    EXPECT_EQ(rows["1 multi-hop"][5], "0.5000");  // qa-1 only
    EXPECT_EQ(rows["1 multi-hop"][6], "1.0000");  // both had one
    EXPECT_EQ(rows["1 multi-hop"][7], "5");
    EXPECT_EQ(rows["1 multi-hop"][8], "3");
    EXPECT_EQ(rows["1 multi-hop"][9], "0.6000");
    EXPECT_EQ(rows["1 multi-hop"][10], "1");
    EXPECT_EQ(rows["4 single-hop"][6], "0.0000");
    // The question citing the whole conversation is counted apart, in no rate; the adversarial one
    // (nothing to find) in none at all.
    ASSERT_TRUE(rows.count("3 open-domain"));
    EXPECT_EQ(rows["3 open-domain"][4], "0");
    EXPECT_EQ(rows["3 open-domain"][5], "");
    EXPECT_EQ(rows["3 open-domain"][11], "1");
    EXPECT_FALSE(rows.count("5 adversarial"));
    EXPECT_EQ(rows["all"][4], "3");
    EXPECT_EQ(rows["all"][11], "1");
}

}  // namespace
}  // namespace memfail::report

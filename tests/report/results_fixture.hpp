// SPDX-License-Identifier: MIT
// Builds small results databases through the ResultsDb API for the export and compare tests.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include <memfail/store/results_db.hpp>

namespace memfail::report::testing {

// A results file in the temp directory, removed when the test ends.
class TempResults {
public:
    explicit TempResults(const std::string& name)
        : m_path((std::filesystem::temp_directory_path() /
                  ("memfail-report-" + name + "-" + std::to_string(::getpid()) + ".db"))
                     .string()) {
        std::filesystem::remove(m_path);
    }
    ~TempResults() { std::filesystem::remove(m_path); }
    TempResults(const TempResults&) = delete;
    TempResults& operator=(const TempResults&) = delete;
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
};

// How many probes of one dataset and k ended at each stage ("retrieved", "not_stored", "correct", ...).
struct CellSpec {
    std::string dataset;
    int k = 5;
    std::map<std::string, int> stages;
    std::string hash = "hash-of-" + dataset;
};

// Whether a probe that ended at `stage` passed the memory side.
inline bool memory_passed(const std::string& stage) {
    return stage == "retrieved" || stage == "correct" || stage == "reasoning_error";
}

// Records one run of `system` holding `cells` (one scenario per dataset) and finishes it. Probes
// ending at correct or reasoning_error get a graded answer, making the run end to end.
inline std::int64_t add_run(store::ResultsDb& db, const std::string& system, const std::vector<CellSpec>& cells,
                            bool finish = true) {
    store::RunRecord run;
    run.system_spec = system;
    run.config_json = R"({"system":")" + system + R"(","ks":[5],"seed":7})";
    run.config_hash = "cfg-" + system;
    run.code_version = "test";
    auto id = db.create_run(run);
    EXPECT_TRUE(id.has_value());
    const std::int64_t run_id = id.has_value() ? *id : 0;
    for (const auto& cell : cells) {
        store::ScenarioRecord scenario;
        scenario.run_id = run_id;
        scenario.scenario_id = cell.dataset + "-s1";
        scenario.dataset = cell.dataset;
        scenario.dataset_hash = cell.hash;
        scenario.sessions = 2;
        EXPECT_TRUE(db.upsert_scenario(scenario).has_value());
        int n = 0;
        for (const auto& [stage, count] : cell.stages) {
            for (int i = 0; i < count; ++i, ++n) {
                store::ProbeRow p;
                p.scenario_id = scenario.scenario_id;
                p.dataset = cell.dataset;
                p.probe_id = "p" + std::to_string(n);
                p.k = cell.k;
                p.kind = "open";
                p.stage = stage;
                p.memory_success = memory_passed(stage);
                p.retrieve_micros = 1000 + n;
                if (stage == "error") p.error = "the retrieval call failed";
                if (stage == "correct" || stage == "reasoning_error") {
                    p.answer = "an answer";
                    p.answer_correct = stage == "correct";
                    p.reasoning = stage;
                }
                EXPECT_TRUE(db.record_probe(run_id, p).has_value());
            }
        }
    }
    if (finish) {
        EXPECT_TRUE(db.finish_run(run_id, "finished").has_value());
    }
    return run_id;
}

}  // namespace memfail::report::testing

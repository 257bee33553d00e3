// SPDX-License-Identifier: MIT
// A fixed results database for the report tests, written through the ResultsDb API: N systems x M
// datasets x a k list, with stages spread by a fixed rule so every chart has something to draw.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <memfail/store/results_db.hpp>
#include <nlohmann/json.hpp>

namespace memfail::report::testing {

struct FixtureSpec {
    std::vector<std::string> systems = {"extractive", "summarizing"};
    std::vector<std::string> datasets = {"conditional_facts_easy", "multi_hop_facts"};
    std::vector<int> ks = {5, 10};
    int probes_per_dataset = 12;
    bool record_texts = true;        // schema 3: probe_json and memory texts
    bool count_tokens = true;        // memory_stats with tokens
    bool grade_answers = false;      // the answer stage (correct / reasoning_error)
    std::vector<std::string> system_models;  // per system: llm.models.system in config_json
    std::string first_question;      // overrides the question of the first probe when set
};

// The stage a probe reaches: a fixed spread in which larger k retrieves more and systems differ.
inline std::string fixture_stage(std::size_t system, std::size_t dataset, int probe, std::size_t k_index,
                                 bool answers) {
    const int v = static_cast<int>((static_cast<std::size_t>(probe) * 7 + system * 3 + dataset * 5) % 10);
    if (v < 2) return "not_stored";
    if (v < 3) return "summary_error";
    if (v < 6 - static_cast<int>(k_index)) return "not_retrieved";
    if (probe % 13 == 5) return "error";
    if (!answers) return "retrieved";
    return v == 9 ? "reasoning_error" : "correct";
}

inline std::vector<std::int64_t> build_fixture(store::ResultsDb& db, const FixtureSpec& spec) {
    using nlohmann::json;
    std::vector<std::int64_t> ids;
    for (std::size_t si = 0; si < spec.systems.size(); ++si) {
        store::RunRecord run;
        run.status = "running";
        run.system_spec = spec.systems[si];
        json config = {{"system", spec.systems[si]}, {"ks", spec.ks}, {"seed", 7}, {"grader", "rules"}};
        if (si < spec.system_models.size())
            config["llm"] = {{"models", {{"system", spec.system_models[si]}, {"answer", "ans"}, {"judge", "jdg"}, {"embed", ""}}}};
        run.config_json = config.dump();
        run.config_hash = "hash" + std::to_string(si) + "0123456789abcdef";
        run.code_version = "0.1.0-test";
        run.started_at = "2026-01-01T00:00:00Z";
        const std::int64_t id = db.create_run(run).value();
        ids.push_back(id);
        for (std::size_t di = 0; di < spec.datasets.size(); ++di) {
            const std::string& dataset = spec.datasets[di];
            const std::string scenario = dataset + "-001";
            db.upsert_scenario({id, scenario, dataset, "feedc0de" + std::to_string(di) + "99887766554433", 3,
                                spec.probes_per_dataset, "graded"}).value();
            for (int s = 0; s < 3; ++s)
                db.record_store(id, scenario, "s" + std::to_string(s + 1), 1000 + 250 * s + 10 * static_cast<int>(si)).value();
            std::optional<std::int64_t> tokens;
            if (spec.count_tokens) tokens = 40 * static_cast<std::int64_t>(si + 1) * 30 + 17 * static_cast<std::int64_t>(di);
            db.record_memory_stats(id, scenario, "s3", 30, tokens, spec.count_tokens ? "cl100k_base" : "").value();
            for (int p = 0; p < spec.probes_per_dataset; ++p) {
                const std::string probe_id = "p" + std::to_string(p);
                const std::string memory_id = "m-" + probe_id;
                for (std::size_t ki = 0; ki < spec.ks.size(); ++ki) {
                    store::ProbeRow row;
                    row.scenario_id = scenario;
                    row.dataset = dataset;
                    row.probe_id = probe_id;
                    row.k = spec.ks[ki];
                    row.kind = "open";
                    row.stage = fixture_stage(si, di, p, ki, spec.grade_answers);
                    row.memory_success = row.stage == "retrieved" || row.stage == "correct" || row.stage == "reasoning_error";
                    json hits = json::array();
                    for (int h = 0; h < std::min(3, row.k); ++h)
                        hits.push_back({{"id", h == 0 && row.memory_success ? memory_id : "other-" + std::to_string(h)},
                                        {"text", "retrieved memory " + std::to_string(h) + " for " + probe_id},
                                        {"sources", json::array({"msg-" + std::to_string(h)})},
                                        {"score", 0.9 - 0.1 * h}});
                    row.retrieved_json = hits.dump();
                    row.retrieve_micros = 200 + 10 * p;
                    if (row.stage == "error") row.error = "the judge timed out";
                    if (spec.grade_answers && row.stage != "error") {
                        row.answer = "an answer to " + probe_id;
                        row.answer_correct = row.stage == "correct";
                        row.reasoning = row.stage == "correct" ? "correct" : row.memory_success ? "reasoning_error" : "not reached";
                    }
                    store::FactRow fact;
                    fact.fact_id = "f1";
                    fact.stage = row.stage == "error" ? "retrieved" : row.stage;
                    fact.method = "rules";
                    fact.stored_json = row.stage == "not_stored" ? "[]" : json::array({memory_id}).dump();
                    fact.retrieved_json = row.memory_success ? json::array({memory_id}).dump() : "[]";
                    fact.explanation = "the fact's key details were checked";
                    row.facts.push_back(fact);
                    row.checks.push_back({"f1", "storage", "rules", row.stage != "not_stored", true,
                                         row.stage == "not_stored" ? "no memory holds the fact" : "found in a memory"});
                    if (spec.record_texts) {
                        row.checkpoint = "s3";
                        json probe = {{"id", probe_id},
                                      {"after_session", "s3"},
                                      {"question", p == 0 && !spec.first_question.empty()
                                                       ? spec.first_question
                                                       : "What did the user say about item " + std::to_string(p) + "?"},
                                      {"kind", "open"},
                                      {"answer", "item " + std::to_string(p)},
                                      {"evidence", json::array({{{"id", "f1"}, {"text", "The user owns item " + std::to_string(p) + "."},
                                                                 {"message_ids", json::array({"msg-1"})},
                                                                 {"key_details", json::array()}}})}};
                        row.probe_json = probe.dump();
                        if (row.stage != "not_stored")
                            row.stored_memories.push_back({memory_id, "The user owns item " + std::to_string(p), "[\"msg-1\"]"});
                    }
                    db.record_probe(id, row).value();
                }
            }
        }
        db.record_llm_calls(id, {{"judge", "storage", "jdg", false, 120, 8, false, 150000, 1, "", ""},
                                 {"judge", "storage", "jdg", true, 120, 8, false, 0, 1, "", ""}}).value();
        db.finish_run(id, "finished").value();
        // A fixed finish time: two fixtures built a second apart must render the same.
        auto fixed = db.database().prepare("UPDATE runs SET finished_at = '2026-01-01T00:10:00Z' WHERE id = ?").value();
        fixed.bind(1, id);
        fixed.run().value();
    }
    return ids;
}

}  // namespace memfail::report::testing

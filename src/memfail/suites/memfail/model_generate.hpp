// SPDX-License-Identifier: MIT
// The five MemFail datasets written by a model, following the paper's Appendix B pipeline
// (`memfail datasets generate NAME --model M`, issue 17).
//
// The code chooses what the paper's code chooses, deterministically from the seed: per row the
// entity, category, condition type and whether the condition holds (Conditional-Facts), the
// category and preference count (Coexisting-Facts), the person, flavour, misleading slots and their
// distractors (Persona-Retrieval), the hop count and voice (Long-Hop). The model writes the text:
// one chat request per item, a JSON reply under a schema (prompts, schemas and pools live in
// lexicon/generation.json; the request/reply contract is in docs/DATASETS.md). Every reply is
// checked against the dataset's construction rules and must import cleanly as a one-row release CSV
// (import_csv.hpp) with complete key details; a failing item is asked again (the same PLAN line plus
// "ATTEMPT: N" and "PREVIOUS PROBLEM: ..."), at most `max_attempts` times in all, then dropped and
// reported. Near-duplicates (MinHash-LSH at the paper's thresholds) count as failed attempts. As the
// paper oversamples and truncates each hop bucket to a fixed target, dropped rows are topped up:
// new rows are planned (row numbers after the plan's, drawn from the seed, in the dropped rows'
// buckets: Conditional condition_met and entity category, Coexisting preference count, Persona
// misleading slots, Long-Hop hop count and voice) and generated in waves until every bucket is back
// at its target or `max_planned` times the target were planned; each bucket keeps its first whole
// rows in plan order. The dataset is the import of every kept row's CSV, so it grades exactly like
// any other; its meta["generation"] is the generation record.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>
#include <memfail/data/model.hpp>
#include <memfail/llm/llm_client.hpp>

namespace memfail::suites::memfail_suite {

inline constexpr const char* k_model_generator_version = "memfail-gen-model/1";

struct GenerateModelOptions {
    std::string model;        // sent as the request's model
    // A dataset's own model, as the paper's Table 2 names one per dataset (Easy gpt-4.1-mini, Hard
    // gpt-5-mini, ...): dataset name -> model, for the requests that write that dataset's text (a
    // Hard rule is the Hard dataset's even though its Easy source is the Easy one's; Long-Hop's
    // distractors are Long-Hop's). Others use `model`.
    std::map<std::string, std::string> models;
    const std::string& model_for(const std::string& dataset) const {
        const auto it = models.find(dataset);
        return it == models.end() ? model : it->second;
    }
    std::uint64_t seed = 42;  // what the code chooses; the model's own sampling is `temperature`/`llm_seed`
    // Rows to plan; 0: the paper's sizes (100 rules, 100 categories, 100 personas, 92 chains).
    // Tests use a few. Long-Hop splits them over K = 1/2/3 as evenly as it can.
    std::size_t rows = 0;
    int max_attempts = 4;          // one attempt and three retries, as the paper
    // Top-up bound: rows planned in all (the plan's and the top-up rows) at most this many times
    // the target; 1 plans no top-up rows.
    double max_planned = 2.0;
    std::size_t concurrency = 8;   // requests in flight at most (the client bounds them too)
    std::size_t wave = 8;          // Long-Hop chains per wave (`previous` lists earlier waves' chains)
    std::optional<double> temperature;
    std::optional<std::int64_t> llm_seed;
    std::function<void(const std::string&)> progress;  // a line of progress ("long_hop: 40/92 chains")
};

struct ModelDataset {
    data::Scenario scenario;   // the import of `csv`; meta["generation"] = record without "this_run"
    std::string csv_file;      // the release's file name ("conditional_facts_dataset_easy.csv", ...)
    std::string csv;           // the kept rows in the release's CSV format
    // Every row a reply wrote that passed its own checks, before the checks across rows and before
    // each bucket is cut to its target, in the order judged: the rows refused as near-duplicates
    // or for a value another row holds, and the top-up surplus, included (the paper writes <name>_raw.csv before its MinHash pass). A Long-Hop
    // row is listed as its chain was checked, with empty options (the options are written only for
    // chains that survive deduplication).
    std::string raw_csv_file;  // "<release name>_raw.csv"
    std::string raw_csv;
    // The generation record: model, seed, code version, prompts hash, thresholds, schema, counts,
    // drops, dedup collisions, calls and tokens. "this_run" (cached and new calls and the tokens
    // paid for now) depends on the reply cache's state; it is left out of the scenario so a
    // resumed generation writes the same dataset file as an uninterrupted one.
    nlohmann::json record;
    std::vector<std::string> drops;  // "row 17 dropped after 4 attempts: ..."
    // Violations of the dataset's size rules (fewer rows than the paper's after drops or with
    // `rows`): `memfail datasets validate` reports them; every other rule holds.
    std::vector<std::string> size_notes;
    std::size_t target = 0;  // the rows planned at first (the paper's size, or `rows`)
    // Non-empty when the dataset has fewer rows than its target: rows kept dropping until the
    // top-up bound (`max_planned`) was reached. Says which buckets are short.
    std::string shortfall;
};

// Generates datasets through `client` (thread-safe; normally the cached client of make_llm_stack).
// Conditional-Facts Hard is written from the Easy rows (same entity, behaviour and condition), and
// the two are kept as pairs (a row is kept in both or in neither), so asking for either generates
// both (once per generator; the calls are cached, so `all` pays for them once).
class ModelGenerator {
public:
    ModelGenerator(llm::LlmClient& client, GenerateModelOptions options);
    ~ModelGenerator();
    ModelGenerator(const ModelGenerator&) = delete;
    ModelGenerator& operator=(const ModelGenerator&) = delete;

    // One of the five MemFail datasets. Errors: invalid_input for an unknown dataset; the call's
    // error when the endpoint fails (network, timeout, auth, ...: everything answered so far is in
    // the cache, so the same command resumes); invalid_output when every item failed its attempts
    // (a dataset short of its target after top-up is returned, with `shortfall` set);
    // internal when the kept rows break a construction rule (a bug).
    Result<ModelDataset> generate(const std::string& dataset);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

// The release's CSV file name for a MemFail dataset ("long_hop" -> "long_hop_chains.csv").
std::string release_csv_name(const std::string& dataset);
// Its raw copy's name ("long_hop" -> "long_hop_chains_raw.csv").
std::string raw_csv_name(const std::string& dataset);

// What the code chooses for each row before the model writes anything, as the PLAN line's object
// (Long-Hop without `previous`, Hard without the Easy row's behaviour and condition).
std::vector<nlohmann::ordered_json> plan_rows(const std::string& dataset, const GenerateModelOptions& options);

// The content hash of the embedded lexicon/generation.json (prompts, schemas and pools).
std::string generation_prompts_hash();

}  // namespace memfail::suites::memfail_suite

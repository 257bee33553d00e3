// SPDX-License-Identifier: MIT
// A verbatim run whose answer model is tools/fake-llm on a loopback port, scripted by the test: the
// run tests that look at what the runner does with the endpoint's answers (accounting, fail-fast)
// build it here. The results file is in a folder of the test's own.
#pragma once
#include <memfail/data/jsonl.hpp>
#include <memfail/llm/llm_stack.hpp>
#include <memfail/run/runner.hpp>

#include <fake_llm.hpp>
#include <support/temp_dir.hpp>

#include <memory>
#include <string>
#include <vector>

namespace memfail::testing {

struct ServedRun {
    TempDir dir;
    std::unique_ptr<fake_llm::FakeLlmServer> server;
    run::RunConfig config;
    // `script`: fake-llm's script; `key_env`: an environment variable no test sets (no key sent).
    ServedRun(nlohmann::json script, const std::string& key_env, int threads, int concurrency, int max_retries) {
        fake_llm::ServerOptions options;
        options.script = std::move(script);
        options.threads = threads;
        server = fake_llm::FakeLlmServer::start(std::move(options)).value();
        config.system_spec = "verbatim";
        config.ks = {3};
        config.results_path = dir.file("results.db");
        config.llm.base_url = server->base_url();
        config.llm.api_key_env = key_env;
        config.llm.answer_model = "taker";
        config.llm.concurrency = concurrency;
        config.llm.max_retries = max_retries;
        config.llm.timeout_seconds = 10;
    }
    // The first `probes` probes of the seed-42 Conditional-Facts Easy dataset.
    std::vector<run::LoadedDataset> datasets(std::size_t probes) {
        auto loaded = run::load_datasets({"conditional_facts_easy"}, "", 42).value();
        for (auto& d : loaded) {
            if (d.scenario.probes.size() > probes) d.scenario.probes.resize(probes);
            d.hash = data::scenario_hash(d.scenario);
        }
        return loaded;
    }
    Result<run::RunOutcome> run(const std::vector<run::LoadedDataset>& datasets) {
        auto stack = llm::make_llm_stack(config.llm, config.results_path);
        if (!stack) return stack.error();
        return run::run_datasets(config, datasets, run::factory_for_spec(config.system_spec), {}, {}, stack->client.get());
    }
    Result<run::RunOutcome> run(std::size_t probes) { return run(datasets(probes)); }
};

}  // namespace memfail::testing

// SPDX-License-Identifier: MIT
// Shared LLM options.
#include <commands/llm_options.hpp>

#include <memfail/core/error.hpp>

#include <CLI/CLI.hpp>

namespace memfail::cli {

struct LlmOptions::Given {
    CLI::Option *base_url = nullptr, *api_key_env = nullptr, *answer = nullptr, *judge = nullptr,
                *system = nullptr, *embed = nullptr, *temperature = nullptr, *seed = nullptr,
                *concurrency = nullptr, *rpm = nullptr, *tpm = nullptr, *timeout = nullptr,
                *retries = nullptr, *structured = nullptr, *cache = nullptr, *cache_db = nullptr,
                *tokenizer_dir = nullptr, *max_failures = nullptr, *no_preflight = nullptr;
};

void LlmOptions::add_to(CLI::App& cmd, const std::string& cache_default) {
    m_given = std::make_shared<Given>();
    Given& g = *m_given;
    const std::string group = "LLM (any OpenAI-compatible endpoint; docs/LLM.md)";
    const llm::LlmSettings defaults;
    cmd.add_option("--config", m_config, "TOML file with LLM settings; flags override it")->group(group);
    g.base_url = cmd.add_option("--base-url", m_flags.base_url,
                                "API base URL, e.g. http://127.0.0.1:8000/v1 (default: $OPENAI_BASE_URL, else " +
                                    std::string(llm::k_default_base_url) + ")")->group(group);
    g.api_key_env = cmd.add_option("--api-key-env", m_flags.api_key_env,
                                   "Name of the environment variable holding the API key (never the key itself)")
                        ->default_str(defaults.api_key_env)->group(group);
    g.answer = cmd.add_option("--answer-model", m_flags.answer_model,
                              "Test-taker model: answers every probe from the retrieved memories")->group(group);
    g.judge = cmd.add_option("--judge-model", m_flags.judge_model,
                             "Judge model: grades the stages that need meaning")->group(group);
    g.system = cmd.add_option("--system-model", m_flags.system_model,
                              "Memory systems' own model: facts, notes, graph, mixture and ledger call it (docs/SYSTEMS.md)")->group(group);
    g.embed = cmd.add_option("--embed-model", m_flags.embed_model, "Embeddings model for systems that embed (verbatim:retriever=embed, facts, notes, graph); default: hashed vectors")->group(group);
    g.temperature = cmd.add_option("--temperature", m_temperature, "Sampling temperature (sent only when set)")->group(group);
    g.seed = cmd.add_option("--llm-seed", m_seed, "Sampling seed (sent only when set)")->group(group);
    g.concurrency = cmd.add_option("--concurrency", m_flags.concurrency, "LLM requests in flight at most")
                        ->default_str(std::to_string(defaults.concurrency))->group(group);
    g.rpm = cmd.add_option("--rpm", m_flags.requests_per_minute, "Requests per minute limit (0: none)")
                ->default_str("0")->group(group);
    g.tpm = cmd.add_option("--tpm", m_flags.tokens_per_minute, "Tokens per minute limit (0: none)")
                ->default_str("0")->group(group);
    g.timeout = cmd.add_option("--timeout", m_flags.timeout_seconds, "Seconds per HTTP attempt")
                    ->default_str("120")->group(group);
    g.retries = cmd.add_option("--retries", m_flags.max_retries, "Retries on 429, 5xx, timeouts and connection errors")
                    ->default_str(std::to_string(defaults.max_retries))->group(group);
    g.structured = cmd.add_option("--structured-output", m_flags.structured_output,
                                  "auto | json_schema | json_object (auto falls back when a server lacks json_schema)")
                       ->default_str("auto")->group(group);
    g.cache = cmd.add_option("--cache", m_flags.cache, "Reply cache: off | on | refresh")->default_str("on")->group(group);
    g.cache_db = cmd.add_option("--cache-db", m_flags.cache_db, "Reply cache file (default: " + cache_default + ")")->group(group);
    g.tokenizer_dir = cmd.add_option("--tokenizer-dir", m_flags.tokenizer_dir,
                                     "Folder with cl100k_base.json / o200k_base.json (default: <prefix>/share/memfail/tokenizers beside an installed memfail, else the folder scripts/install-deps fills)")
                          ->group(group);
    g.max_failures = cmd.add_option("--max-consecutive-failures", m_flags.max_consecutive_failures,
                                    "Stop the run (resumable, exit 3) when this many calls in a row to one endpoint "
                                    "and model fail after their retries in a way that says the endpoint is down "
                                    "(no connection, timeouts, 5xx, 401/403/404, 429); a request the server refused "
                                    "as sent (another 4xx, e.g. a content filter's 400) is its row's error and does "
                                    "not count (0: never)")
                         ->default_str(std::to_string(defaults.max_consecutive_failures))
                         ->check(CLI::Range(0, 1000000))
                         ->group(group);
    g.no_preflight = cmd.add_flag("--no-preflight", m_no_preflight,
                                  "Skip the one tiny request made to each configured model before any work")
                         ->group(group);
}

llm::LlmSettings LlmOptions::resolve() const {
    llm::LlmSettings s;
    llm::apply_environment(s);
    if (!m_config.empty()) value_or_fatal(llm::apply_toml_file(m_config, s));
    const Given& g = *m_given;
    auto given = [](const CLI::Option* o) { return o && o->count() > 0; };
    if (given(g.base_url)) s.base_url = m_flags.base_url;
    if (given(g.api_key_env)) s.api_key_env = m_flags.api_key_env;
    if (given(g.answer)) s.answer_model = m_flags.answer_model;
    if (given(g.judge)) s.judge_model = m_flags.judge_model;
    if (given(g.system)) s.system_model = m_flags.system_model;
    if (given(g.embed)) s.embed_model = m_flags.embed_model;
    if (given(g.concurrency)) s.concurrency = m_flags.concurrency;
    if (given(g.rpm)) s.requests_per_minute = m_flags.requests_per_minute;
    if (given(g.tpm)) s.tokens_per_minute = m_flags.tokens_per_minute;
    if (given(g.timeout)) s.timeout_seconds = m_flags.timeout_seconds;
    if (given(g.retries)) s.max_retries = m_flags.max_retries;
    if (given(g.structured)) s.structured_output = m_flags.structured_output;
    if (given(g.cache)) s.cache = m_flags.cache;
    if (given(g.cache_db)) s.cache_db = m_flags.cache_db;
    if (given(g.tokenizer_dir)) s.tokenizer_dir = m_flags.tokenizer_dir;
    if (given(g.max_failures)) s.max_consecutive_failures = m_flags.max_consecutive_failures;
    if (given(g.no_preflight)) s.preflight = false;
    auto number = [](const std::string& text, const char* flag, auto parse) {
        try {
            std::size_t used = 0;
            auto value = parse(text, &used);
            if (used == text.size()) return value;
        } catch (const std::exception&) {
        }
        throw Fatal(make_error(ErrorKind::invalid_input, "expected a number, got '" + text + "'", flag));
    };
    if (given(g.temperature))
        s.temperature = number(m_temperature, "--temperature", [](const std::string& t, std::size_t* n) { return std::stod(t, n); });
    if (given(g.seed))
        s.seed = number(m_seed, "--llm-seed", [](const std::string& t, std::size_t* n) { return static_cast<std::int64_t>(std::stoll(t, n)); });
    value_or_fatal(s.validate());
    return s;
}

}  // namespace memfail::cli

// SPDX-License-Identifier: MIT
// How memfail reaches models: endpoint, one model per role, limits, cache. Resolved in layers —
// defaults, then the environment (OPENAI_BASE_URL), then a TOML file (--config), then flags — so a
// team can commit a config file and still override one value on the command line. The API key is
// never a setting: only the NAME of the environment variable holding it is (docs/LLM.md).
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <memfail/core/error.hpp>

namespace memfail::llm {

inline constexpr const char* k_default_base_url = "https://api.openai.com/v1";

struct LlmSettings {
    std::string base_url = k_default_base_url;
    std::string api_key_env = "OPENAI_API_KEY";
    std::string answer_model;  // the test-taker; empty: no answer stage
    std::string judge_model;   // the staged judge; empty: rules only
    std::string system_model;  // memory systems' own model (issue 4)
    std::string embed_model;   // embeddings endpoint model (issue 4)
    std::optional<double> temperature;
    std::optional<std::int64_t> seed;
    int concurrency = 8;
    double requests_per_minute = 0;
    double tokens_per_minute = 0;
    double timeout_seconds = 120;
    int max_retries = 6;
    int max_schema_retries = 2;
    std::string structured_output = "auto";  // auto | json_schema | json_object
    std::string cache = "on";                // off | on | refresh
    std::string cache_db;                    // empty: "<results>.llm-cache.db"
    std::string tokenizer_dir;               // empty: text::default_tokenizer_dir()
    // Fail fast: this many calls in a row to one endpoint (base URL and model) failing after their
    // retries stop the run with the endpoint's last error (resumable); 0 never stops.
    int max_consecutive_failures = 8;
    // Send one tiny request to each configured model before any work (llm/preflight.hpp).
    bool preflight = true;

    bool uses_llm() const {
        return !answer_model.empty() || !judge_model.empty() || !system_model.empty() || !embed_model.empty();
    }
    // Everything that is safe to record with a run (never the key itself).
    nlohmann::json to_json() const;
    // Checks ranges and enumerations; `where` names the source for messages ("--concurrency").
    Result<void> validate() const;
};

// Applies OPENAI_BASE_URL when set.
void apply_environment(LlmSettings& settings);

// Applies a TOML file. Keys: base_url, api_key_env, concurrency, requests_per_minute,
// tokens_per_minute, timeout, max_retries, max_schema_retries, max_consecutive_failures,
// structured_output, cache, cache_db, tokenizer_dir, temperature, seed, and a [models] table with
// answer, judge, system, embed.
// Unknown keys, wrong types and an `api_key` key are errors naming file:line and the key.
Result<void> apply_toml_file(const std::string& path, LlmSettings& settings);

// The key from the environment variable the settings name; empty when unset (local servers).
std::string api_key_from_environment(const LlmSettings& settings);

}  // namespace memfail::llm

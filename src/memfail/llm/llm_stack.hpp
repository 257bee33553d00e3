// SPDX-License-Identifier: MIT
// Builds the client every LLM call goes through from settings: the OpenAI-compatible HTTP client,
// wrapped by the SQLite reply cache. Token usage the server does not report is counted with the
// exact tokenizer for the model's encoding (text/tokenizer.hpp) when its rank files are present.
#pragma once
#include <memory>
#include <string>

#include <memfail/core/error.hpp>
#include <memfail/llm/cached_client.hpp>
#include <memfail/llm/llm_client.hpp>
#include <memfail/llm/llm_config.hpp>

namespace memfail::llm {

struct LlmStack {
    std::shared_ptr<LlmClient> client;  // use this one
    std::shared_ptr<CachedClient> cached;
    std::string cache_path;
    // The same endpoint and cache with a short fuse (at most 2 retries, backoff of at most 1 s,
    // attempts of at most 30 s): what preflight() calls through, so a dead endpoint is reported in
    // seconds. Its replies are cached but pay for nothing the run accounts.
    std::shared_ptr<LlmClient> preflight;
};

// The cache file a results file uses unless settings.cache_db names one: "<results>.llm-cache.db".
std::string default_cache_path(const std::string& results_path);

// The stack for a run writing `results_path`: its cache records each reply's payment under the
// results file's absolute path (the ledger; llm_client.hpp, Payment).
Result<LlmStack> make_llm_stack(const LlmSettings& settings, const std::string& results_path);

}  // namespace memfail::llm

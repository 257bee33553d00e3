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
};

// The cache file a results file uses unless settings.cache_db names one: "<results>.llm-cache.db".
std::string default_cache_path(const std::string& results_path);

Result<LlmStack> make_llm_stack(const LlmSettings& settings, const std::string& results_path);

}  // namespace memfail::llm

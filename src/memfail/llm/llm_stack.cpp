// SPDX-License-Identifier: MIT
// Client assembly.
#include <memfail/llm/llm_stack.hpp>
#include <memfail/llm/openai_client.hpp>
#include <memfail/text/tokenizer.hpp>

#include <algorithm>
#include <filesystem>

namespace memfail::llm {

std::string default_cache_path(const std::string& results_path) { return results_path + ".llm-cache.db"; }

Result<LlmStack> make_llm_stack(const LlmSettings& settings, const std::string& results_path) {
    MF_TRY(settings.validate());
    ClientOptions options;
    options.base_url = settings.base_url;
    options.api_key = api_key_from_environment(settings);
    // Local servers need no key; OpenAI's own endpoint always does, so say so before any call.
    if (options.api_key.empty() && url_identity(settings.base_url).find("api.openai.com") != std::string::npos)
        return make_error(ErrorKind::auth,
                          "no API key: the environment variable " + settings.api_key_env +
                              " is not set (name another with --api-key-env, or point --base-url at a local server)");
    options.concurrency = settings.concurrency;
    options.requests_per_minute = settings.requests_per_minute;
    options.tokens_per_minute = settings.tokens_per_minute;
    options.timeout_seconds = settings.timeout_seconds;
    options.max_retries = settings.max_retries;
    options.max_schema_retries = settings.max_schema_retries;
    options.structured_output = settings.structured_output;
    // Exact counts when the model's encoding can be loaded; otherwise the client's bytes/4 estimate
    // (still flagged as counted locally).
    const std::string tokenizer_dir = settings.tokenizer_dir;
    options.count_tokens = [tokenizer_dir](std::string_view model, std::string_view text) -> std::int64_t {
        auto tokenizer = text::shared_tokenizer(text::encoding_for_model(model), tokenizer_dir);
        if (!tokenizer) return static_cast<std::int64_t>((text.size() + 3) / 4);
        return static_cast<std::int64_t>((*tokenizer)->count(text));
    };
    ClientOptions quick = options;
    quick.max_retries = std::min(options.max_retries, 2);
    quick.backoff_base_seconds = 0.25;
    quick.backoff_max_seconds = 1;
    quick.timeout_seconds = std::min(options.timeout_seconds, 30.0);
    MF_TRY_ASSIGN(std::unique_ptr<LlmClient> http, make_openai_client(std::move(options)));
    MF_TRY_ASSIGN(std::unique_ptr<LlmClient> quick_http, make_openai_client(std::move(quick)));

    MF_TRY_ASSIGN(CacheMode mode, parse_cache_mode(settings.cache));
    LlmStack stack;
    stack.cache_path = settings.cache_db.empty() ? default_cache_path(results_path) : settings.cache_db;
    if (const auto parent = std::filesystem::path(stack.cache_path).parent_path(); !parent.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(parent, ec);
    }
    MF_TRY_ASSIGN(std::shared_ptr<LlmCache> cache, LlmCache::open(stack.cache_path));
    std::error_code ec;
    std::string ledger = std::filesystem::weakly_canonical(std::filesystem::absolute(results_path, ec), ec).string();
    if (ledger.empty()) ledger = results_path;
    stack.preflight = std::make_shared<CachedClient>(std::shared_ptr<LlmClient>(std::move(quick_http)), cache, mode);
    stack.cached = std::make_shared<CachedClient>(std::shared_ptr<LlmClient>(std::move(http)), std::move(cache), mode,
                                                  std::move(ledger));
    stack.client = stack.cached;
    return stack;
}

}  // namespace memfail::llm

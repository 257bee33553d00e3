// SPDX-License-Identifier: MIT
// Layered LLM settings and the TOML reader.
#include <memfail/core/spec.hpp>
#include <memfail/core/text.hpp>
#include <memfail/llm/llm_config.hpp>
#include <memfail/llm/redact.hpp>

#include <cctype>
#include <cstdlib>
#include <toml++/toml.h>

namespace memfail::llm {

nlohmann::json LlmSettings::to_json() const {
    // Stored with every run and shown in reports: never the credential parts (redact_url).
    nlohmann::json j = {{"base_url", redact_url(base_url, api_key_from_environment(*this))},
                        {"api_key_env", api_key_env},
                        {"models",
                         {{"answer", answer_model}, {"judge", judge_model}, {"system", system_model},
                          {"embed", embed_model}}},
                        {"concurrency", concurrency},
                        {"requests_per_minute", requests_per_minute},
                        {"tokens_per_minute", tokens_per_minute},
                        {"timeout", timeout_seconds},
                        {"max_retries", max_retries},
                        {"max_schema_retries", max_schema_retries},
                        {"structured_output", structured_output},
                        {"cache", cache}};
    if (temperature) j["temperature"] = *temperature;
    if (seed) j["seed"] = *seed;
    return j;
}

namespace {

// A base URL is recorded with every run (runs table, exports, the HTML report), so a credential in
// it would be written everywhere: "user:key@host" or a key-like query parameter.
bool carries_credential(const std::string& url) {
    const auto scheme = url.find("://");
    const std::size_t start = scheme == std::string::npos ? 0 : scheme + 3;
    const std::size_t end = url.find_first_of("/?#", start);
    const std::string authority = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (authority.find('@') != std::string::npos) return true;
    const auto query = url.find('?');
    if (query == std::string::npos) return false;
    std::string rest = url.substr(query + 1);
    for (auto& c : rest) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& part : text::split(rest, '&')) {
        const std::string name = part.substr(0, part.find('='));
        if (name.find("key") != std::string::npos || name.find("token") != std::string::npos ||
            name.find("secret") != std::string::npos || name.find("password") != std::string::npos ||
            name == "sig" || name == "signature")
            return true;
    }
    return false;
}

}  // namespace

Result<void> LlmSettings::validate() const {
    auto bad = [](const std::string& what) { return make_error(ErrorKind::invalid_input, what); };
    if (concurrency < 1 || concurrency > 1024) return bad("concurrency must be between 1 and 1024, got " + std::to_string(concurrency));
    if (requests_per_minute < 0) return bad("requests_per_minute must not be negative");
    if (tokens_per_minute < 0) return bad("tokens_per_minute must not be negative");
    if (timeout_seconds <= 0) return bad("timeout must be positive");
    if (max_retries < 0 || max_schema_retries < 0) return bad("retry counts must not be negative");
    if (max_consecutive_failures < 0 || max_consecutive_failures > 1000000)
        return bad("max_consecutive_failures must be between 0 and 1000000, got " +
                   std::to_string(max_consecutive_failures));
    if (cache != "off" && cache != "on" && cache != "refresh")
        return bad("cache must be off, on or refresh, got '" + cache + "'");
    if (structured_output != "auto" && structured_output != "json_schema" && structured_output != "json_object")
        return bad("structured_output must be auto, json_schema or json_object, got '" + structured_output + "'");
    // Checked first, so no message below can echo a URL that carries a key.
    if (carries_credential(base_url))
        return bad("the base URL carries a credential (user:key@ or a key or token parameter), and the URL is "
                   "recorded with every run: put the key in an environment variable and name it with --api-key-env "
                   "(default OPENAI_API_KEY)");
    if (base_url.rfind("http://", 0) != 0 && base_url.rfind("https://", 0) != 0)
        return bad("base URL must start with http:// or https://, got '" + redact_url(base_url) + "'");
    if (temperature && (*temperature < 0 || *temperature > 2)) return bad("temperature must be between 0 and 2");
    return {};
}

void apply_environment(LlmSettings& settings) {
    if (const char* url = std::getenv("OPENAI_BASE_URL"); url && *url) settings.base_url = url;
}

std::string api_key_from_environment(const LlmSettings& settings) {
    if (settings.api_key_env.empty()) return {};
    const char* key = std::getenv(settings.api_key_env.c_str());
    return key ? std::string(key) : std::string();
}

namespace {

std::string where_of(const std::string& path, const toml::node& node, const std::string& key) {
    return path + ":" + std::to_string(node.source().begin.line) + ": " + key;
}

// Reads one value of type T (with integers accepted where floats are expected).
template <class T>
Result<T> read_value(const std::string& path, const toml::node& node, const std::string& key) {
    if constexpr (std::is_same_v<T, double>) {
        if (auto v = node.value<double>()) return *v;
        return make_error(ErrorKind::invalid_input, "expected a number", where_of(path, node, key));
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
        if (node.is_integer()) return *node.value<std::int64_t>();
        return make_error(ErrorKind::invalid_input, "expected an integer", where_of(path, node, key));
    } else {
        if (node.is_string()) return *node.value<std::string>();
        return make_error(ErrorKind::invalid_input, "expected a string", where_of(path, node, key));
    }
}

}  // namespace

Result<void> apply_toml_file(const std::string& path, LlmSettings& s) {
    toml::table table;
    try {
        table = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
        const auto& where = e.source().begin;
        std::string message(e.description());
        if (!e.source().path)
            return make_error(ErrorKind::not_found, "cannot read the config file", path);
        return make_error(ErrorKind::invalid_input, message,
                          path + ":" + std::to_string(where.line) + ":" + std::to_string(where.column));
    }
    const std::vector<std::string> top_keys = {
        "base_url",  "api_key_env",       "concurrency", "requests_per_minute", "tokens_per_minute",
        "timeout",   "max_retries",       "max_schema_retries", "max_consecutive_failures", "structured_output", "cache",
        "cache_db",  "tokenizer_dir",     "temperature", "seed", "models"};
    const std::vector<std::string> model_keys = {"answer", "judge", "system", "embed"};
    for (auto&& [key_view, node] : table) {
        const std::string key(key_view.str());
        if (key == "api_key")
            return make_error(ErrorKind::invalid_input,
                              "API keys do not belong in config files; put the key in an environment variable "
                              "and name that variable with api_key_env",
                              where_of(path, node, key));
        if (std::find(top_keys.begin(), top_keys.end(), key) == top_keys.end())
            return make_error(ErrorKind::invalid_input, "unknown key" + did_you_mean(key, top_keys),
                              where_of(path, node, key));
        if (key == "models") {
            const toml::table* models = node.as_table();
            if (!models) return make_error(ErrorKind::invalid_input, "expected a table [models]", where_of(path, node, key));
            for (auto&& [model_key_view, model_node] : *models) {
                const std::string model_key(model_key_view.str());
                if (std::find(model_keys.begin(), model_keys.end(), model_key) == model_keys.end())
                    return make_error(ErrorKind::invalid_input,
                                      "unknown model role" + did_you_mean(model_key, model_keys),
                                      where_of(path, model_node, "models." + model_key));
                MF_TRY_ASSIGN(std::string name, read_value<std::string>(path, model_node, "models." + model_key));
                if (model_key == "answer") s.answer_model = name;
                else if (model_key == "judge") s.judge_model = name;
                else if (model_key == "system") s.system_model = name;
                else s.embed_model = name;
            }
            continue;
        }
        if (key == "base_url") { MF_TRY_ASSIGN(s.base_url, read_value<std::string>(path, node, key)); }
        else if (key == "api_key_env") { MF_TRY_ASSIGN(s.api_key_env, read_value<std::string>(path, node, key)); }
        else if (key == "structured_output") { MF_TRY_ASSIGN(s.structured_output, read_value<std::string>(path, node, key)); }
        else if (key == "cache") { MF_TRY_ASSIGN(s.cache, read_value<std::string>(path, node, key)); }
        else if (key == "cache_db") { MF_TRY_ASSIGN(s.cache_db, read_value<std::string>(path, node, key)); }
        else if (key == "tokenizer_dir") { MF_TRY_ASSIGN(s.tokenizer_dir, read_value<std::string>(path, node, key)); }
        else if (key == "requests_per_minute") { MF_TRY_ASSIGN(s.requests_per_minute, read_value<double>(path, node, key)); }
        else if (key == "tokens_per_minute") { MF_TRY_ASSIGN(s.tokens_per_minute, read_value<double>(path, node, key)); }
        else if (key == "timeout") { MF_TRY_ASSIGN(s.timeout_seconds, read_value<double>(path, node, key)); }
        else if (key == "temperature") { MF_TRY_ASSIGN(double t, read_value<double>(path, node, key)); s.temperature = t; }
        else if (key == "seed") { MF_TRY_ASSIGN(std::int64_t v, read_value<std::int64_t>(path, node, key)); s.seed = v; }
        else {
            MF_TRY_ASSIGN(std::int64_t v, read_value<std::int64_t>(path, node, key));
            // Range-checked here, with the line: a cast alone would wrap 4294967297 to 1.
            const std::int64_t most = key == "concurrency" ? 1024 : key == "max_consecutive_failures" ? 1000000 : 100;
            const std::int64_t least = key == "concurrency" ? 1 : 0;
            if (v < least || v > most)
                return make_error(ErrorKind::invalid_input,
                                  key + " must be between " + std::to_string(least) + " and " + std::to_string(most) +
                                      ", got " + std::to_string(v),
                                  where_of(path, node, key));
            if (key == "concurrency") s.concurrency = static_cast<int>(v);
            else if (key == "max_retries") s.max_retries = static_cast<int>(v);
            else if (key == "max_consecutive_failures") s.max_consecutive_failures = static_cast<int>(v);
            else s.max_schema_retries = static_cast<int>(v);
        }
    }
    auto valid = s.validate();
    if (!valid) return valid.error().with_context(path);
    return {};
}

}  // namespace memfail::llm

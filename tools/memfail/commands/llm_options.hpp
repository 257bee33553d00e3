// SPDX-License-Identifier: MIT
// The LLM options every command that calls a model shares (run, and later serve and conformance):
// registered once here so their names, defaults and help texts never drift apart. Resolution order:
// defaults < environment (OPENAI_BASE_URL) < --config TOML file < flags.
#pragma once
#include <memory>
#include <string>

#include <memfail/llm/llm_config.hpp>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace memfail::cli {

class LlmOptions {
public:
    // Adds the options to `cmd` under an "LLM" group; `cache_default` says in --cache-db's help
    // where the command keeps its reply cache when the flag is not given.
    void add_to(CLI::App& cmd, const std::string& cache_default = "<out>.llm-cache.db");
    // Settings from every layer; throws Fatal (invalid_input) naming the file or flag on bad input.
    llm::LlmSettings resolve() const;

private:
    std::string m_config;
    llm::LlmSettings m_flags;  // values as parsed; applied only where the flag was given
    std::string m_temperature, m_seed;
    bool m_no_preflight = false;
    struct Given;
    std::shared_ptr<Given> m_given;
};

}  // namespace memfail::cli

// SPDX-License-Identifier: MIT
// The preflight: one tiny request to each configured model before a run does any work, so a wrong
// base URL, a refused key or an unknown model stops the run in seconds with a message naming the
// model and the endpoint, instead of turning every probe into an error row.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <memfail/core/error.hpp>
#include <memfail/llm/llm_client.hpp>
#include <memfail/llm/llm_config.hpp>

namespace memfail::llm {

struct PreflightCheck {
    Role role = Role::answer;
    std::string model;
    bool cache_hit = false;        // answered from the reply cache (checked on an earlier run)
    std::int64_t latency_micros = 0;
    std::string note;              // non-empty when the endpoint answered but not cleanly (429)
};

// Sends one request to each model `settings` names (answer, judge and system models: a one-line
// chat completion with the run's temperature and seed; the embed model: one embedding), each
// distinct model once, through `client` (LlmStack::preflight: cached, short retries). A model that
// is rate limited (429) passes with a note: the endpoint exists and took the key. Any other failure
// is returned as an error of the call's kind (network, timeout, auth, not_found, protocol, ...)
// whose message starts "preflight: the <role> model '<model>' at <endpoint> did not answer: ".
// These calls go through no CallRecorder, so they are not in any run's llm_calls.
Result<std::vector<PreflightCheck>> preflight(LlmClient& client, const LlmSettings& settings);

}  // namespace memfail::llm

// SPDX-License-Identifier: MIT
// One tiny request per configured model before any work.
#include <memfail/llm/preflight.hpp>

#include <set>
#include <utility>

namespace memfail::llm {

namespace {

Result<PreflightCheck> check_one(LlmClient& client, const LlmSettings& settings, Role role, const std::string& model) {
    PreflightCheck check;
    check.role = role;
    check.model = model;
    auto failed = [&](const Error& error) -> Result<PreflightCheck> {
        if (error.kind == ErrorKind::rate_limited) {
            check.note = "rate limited (429): the endpoint answered and took the key; the run goes on";
            return check;
        }
        Error out = error;
        out.message = "preflight: the " + std::string(role_name(role)) + " model '" + model + "' at " +
                      client.identity() + " did not answer: " + error.message;
        return out;
    };
    if (role == Role::embed) {
        EmbeddingRequest request;
        request.role = role;
        request.model = model;
        request.inputs = {"memfail preflight"};
        auto reply = client.embed(request);
        if (!reply) return failed(reply.error());
        check.cache_hit = reply->cache_hit;
        check.latency_micros = reply->latency_micros;
        return check;
    }
    ChatRequest request;
    request.role = role;
    request.stage = "preflight";
    request.model = model;
    request.temperature = settings.temperature;
    request.seed = settings.seed;
    request.messages = {{"system", "You are a connectivity check. Answer with one word."},
                        {"user", "memfail preflight: reply with the word ok."}};
    auto reply = client.chat(request);
    if (!reply) return failed(reply.error());
    check.cache_hit = reply->cache_hit;
    check.latency_micros = reply->latency_micros;
    return check;
}

}  // namespace

Result<std::vector<PreflightCheck>> preflight(LlmClient& client, const LlmSettings& settings) {
    std::vector<PreflightCheck> out;
    std::set<std::pair<bool, std::string>> seen;  // (embeddings?, model): each model checked once
    const std::pair<Role, const std::string*> roles[] = {{Role::answer, &settings.answer_model},
                                                         {Role::judge, &settings.judge_model},
                                                         {Role::system, &settings.system_model},
                                                         {Role::embed, &settings.embed_model}};
    for (const auto& [role, model] : roles) {
        if (model->empty() || !seen.insert({role == Role::embed, *model}).second) continue;
        MF_TRY_ASSIGN(PreflightCheck check, check_one(client, settings, role, *model));
        out.push_back(std::move(check));
    }
    return out;
}

}  // namespace memfail::llm

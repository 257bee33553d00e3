// SPDX-License-Identifier: MIT
// Helpers for the memory tests: a self-removing temporary folder and small hand-built sessions.
// (test_memory links only memfail_memory, so it carries its own copy rather than tests/support.)
#pragma once
#include <fake_llm.hpp>
#include <memfail/llm/openai_client.hpp>
#include <nlohmann/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <memfail/data/model.hpp>
#include <memfail/memory/memory_system.hpp>

namespace memfail::memory::test {

class TempDir {
public:
    TempDir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "memfail-memory-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) std::abort();
        m_path = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string path() const { return m_path.string(); }

private:
    std::filesystem::path m_path;
};

inline data::Message user(std::string id, std::string content) {
    return {std::move(id), "user", std::move(content)};
}
inline data::Message assistant(std::string id, std::string content) {
    return {std::move(id), "assistant", std::move(content)};
}

inline data::Session session(std::string id, std::string timestamp, std::vector<data::Message> messages) {
    return {std::move(id), std::move(timestamp), std::move(messages)};
}

// Unwraps a Result in a test; a failure throws, which GoogleTest reports as a failed test with the
// error's text while the remaining tests still run.
template <class T>
T ok(Result<T> result) {
    if (!result) throw std::runtime_error(result.error().describe());
    return std::move(result).value();
}
// A plain inner product: the reference the vector indexes' scores are checked against (not the
// product's own kernel).
inline float dot(const std::vector<float>& a, const std::vector<float>& b) {
    float s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

inline void ok(const Result<void>& result) {
    if (!result) throw std::runtime_error(result.error().describe());
}

inline std::vector<std::string> ids_of(const std::vector<Memory>& memories) {
    std::vector<std::string> out;
    for (const Memory& m : memories) out.push_back(m.id);
    return out;
}
inline std::vector<std::string> ids_of(const std::vector<Hit>& hits) {
    std::vector<std::string> out;
    for (const Hit& h : hits) out.push_back(h.memory.id);
    return out;
}

// A fake-llm script answering in order: each (schema, reply) pair is used once, in order among the
// pairs of its schema; a string reply names a fault ("schema_violation", "http_500", ...).
inline nlohmann::json script_of(const std::vector<std::pair<std::string, nlohmann::json>>& replies) {
    nlohmann::json rules = nlohmann::json::array();
    for (const auto& [schema, reply] : replies) {
        nlohmann::json rule = nlohmann::json::object();
        rule["match"] = nlohmann::json{{"schema", schema}};
        rule["times"] = 1;
        if (reply.is_string()) rule["fault"] = reply;
        else rule["json"] = reply;
        rules.push_back(rule);
    }
    return nlohmann::json{{"rules", rules}};
}

// A scripted model: tools/fake-llm in-process answering `script`, and a client that neither retries
// nor re-asks, so each scripted reply is consumed exactly once.
struct ScriptedModel {
    std::unique_ptr<fake_llm::FakeLlmServer> server;
    std::unique_ptr<llm::LlmClient> client;

    explicit ScriptedModel(nlohmann::json script) {
        fake_llm::ServerOptions options;
        options.script = std::move(script);
        server = ok(fake_llm::FakeLlmServer::start(std::move(options)));
        llm::ClientOptions client_options;
        client_options.base_url = server->base_url();
        client_options.max_schema_retries = 0;
        client_options.max_retries = 0;
        client = ok(llm::make_openai_client(client_options));
    }
    // A context whose system model is this scripted one.
    SystemContext context(const std::string& storage_dir = "") const {
        SystemContext c;
        c.storage_dir = storage_dir;
        c.services.client = client.get();
        c.services.model = "scripted";
        return c;
    }
};

// fake-llm's extractive stand-in (tools/fake-llm/extractive.cpp) in-process as the system model
// "stand-in", with a client that does not retry.
struct StandIn {
    std::unique_ptr<fake_llm::FakeLlmServer> server;
    std::unique_ptr<llm::LlmClient> client;

    StandIn() {
        fake_llm::ServerOptions options;
        options.script = nlohmann::json{{"extractive", true}, {"rules", nlohmann::json::array()}};
        server = ok(fake_llm::FakeLlmServer::start(std::move(options)));
        llm::ClientOptions client_options;
        client_options.base_url = server->base_url();
        client_options.max_retries = 0;
        client = ok(llm::make_openai_client(client_options));
    }
    SystemContext context() const {
        SystemContext c;
        c.services.client = client.get();
        c.services.model = "stand-in";
        return c;
    }
};

}  // namespace memfail::memory::test

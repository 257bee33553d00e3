// SPDX-License-Identifier: MIT
// Shared helpers for the LLM client tests: an in-process fake-llm server and fast client options.
#pragma once
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fake_llm.hpp>
#include <memfail/llm/openai_client.hpp>

namespace memfail::llm::testing {

inline std::unique_ptr<fake_llm::FakeLlmServer> start_fake(nlohmann::json script = nlohmann::json::object(),
                                                           std::string required_key = {},
                                                           bool json_schema_supported = true) {
    fake_llm::ServerOptions options;
    options.script = std::move(script);
    options.required_key = std::move(required_key);
    options.json_schema_supported = json_schema_supported;
    options.threads = 48;
    auto server = fake_llm::FakeLlmServer::start(std::move(options));
    if (!server) ADD_FAILURE() << "fake-llm did not start: " << server.error().describe();
    return server ? std::move(server).value() : nullptr;
}

// Small backoffs so failure paths finish in milliseconds.
inline ClientOptions fast_options(const fake_llm::FakeLlmServer& server) {
    ClientOptions options;
    options.base_url = server.base_url();
    options.timeout_seconds = 5;
    options.max_retries = 3;
    options.backoff_base_seconds = 0.01;
    options.backoff_max_seconds = 0.05;
    return options;
}

inline std::unique_ptr<LlmClient> make_client(ClientOptions options) {
    auto client = make_openai_client(std::move(options));
    if (!client) ADD_FAILURE() << client.error().describe();
    return client ? std::move(client).value() : nullptr;
}

inline ChatRequest plain_request(std::string text, std::string model = "m") {
    ChatRequest request;
    request.model = std::move(model);
    request.stage = "test";
    request.messages = {{"system", "You are terse."}, {"user", std::move(text)}};
    return request;
}

inline JsonSchema verdict_schema(std::string name = "memfail_test_verdict") {
    return {std::move(name),
            {{"type", "object"},
             {"properties",
              {{"verdict", {{"type", "string"}, {"enum", {"yes", "no"}}}}, {"reason", {{"type", "string"}}}}},
             {"required", {"verdict", "reason"}},
             {"additionalProperties", false}}};
}

inline ChatRequest schema_request(std::string text, std::string schema_name = "memfail_test_verdict") {
    ChatRequest request = plain_request(std::move(text));
    request.role = Role::judge;
    request.stage = "judge.test";
    request.schema = verdict_schema(std::move(schema_name));
    return request;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline std::string read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A fresh empty folder under the system temp folder, removed by the destructor.
class TempDir {
public:
    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path = std::filesystem::temp_directory_path() /
                 ("memfail-llm-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" +
                  std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
        std::filesystem::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }
    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
};

}  // namespace memfail::llm::testing

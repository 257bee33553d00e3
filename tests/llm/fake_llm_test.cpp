// SPDX-License-Identifier: MIT
// tools/fake-llm: the scripted OpenAI-compatible server, driven over real HTTP with httplib's
// client.
#include "fake_llm.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <httplib.h>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using memfail::fake_llm::count_chat_prompt;
using memfail::fake_llm::count_tokens;
using memfail::fake_llm::FakeLlmServer;
using memfail::fake_llm::ServerOptions;
using nlohmann::json;

std::unique_ptr<FakeLlmServer> start_server(ServerOptions options) {
    auto server = FakeLlmServer::start(std::move(options));
    if (!server) {
        ADD_FAILURE() << server.error().describe();
        return nullptr;
    }
    return std::move(server).value();
}

std::unique_ptr<FakeLlmServer> start_script(const json& script) {
    ServerOptions options;
    options.script = script;
    return start_server(std::move(options));
}

struct Reply {
    int status = 0; // 0: no HTTP answer (timeout, connection error)
    json body;
    std::string raw;
    std::string retry_after;
};

Reply post(const FakeLlmServer& server, const std::string& path, const json& body,
           const std::string& key = {}, double timeout_seconds = 5) {
    httplib::Client client("127.0.0.1", server.port());
    client.set_read_timeout(std::chrono::milliseconds(static_cast<int>(timeout_seconds * 1000)));
    httplib::Headers headers;
    if (!key.empty())
        headers.emplace("Authorization", "Bearer " + key);
    const std::string text = body.is_string() ? body.get<std::string>() : body.dump();
    auto res = client.Post(path.c_str(), headers, text, "application/json");
    Reply reply;
    if (!res)
        return reply;
    reply.status = res->status;
    reply.raw = res->body;
    reply.body = json::parse(res->body, nullptr, false);
    reply.retry_after = res->get_header_value("Retry-After");
    return reply;
}

json chat_body(const std::string& user, const json& response_format = nullptr,
               const std::string& system = {}) {
    json messages = json::array();
    if (!system.empty())
        messages.push_back({{"role", "system"}, {"content", system}});
    messages.push_back({{"role", "user"}, {"content", user}});
    json body{{"model", "test-model"}, {"messages", messages}};
    if (!response_format.is_null())
        body["response_format"] = response_format;
    return body;
}

json schema_format(const std::string& name, const json& schema) {
    return {{"type", "json_schema"},
            {"json_schema", {{"name", name}, {"strict", true}, {"schema", schema}}}};
}

std::string content_of(const Reply& r) {
    return r.body["choices"][0]["message"]["content"].get<std::string>();
}

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() /
            ("fake_llm_test_" + std::to_string(::getpid()) + "_" + name))
        .string();
}

TEST(FakeLlm, RuleMatchedBySchemaAnswersItsJsonInOpenAiShape) {
    const json verdict{{"verdict", "correct"}, {"reason", "It names the city."}};
    auto server = start_script({{"rules",
                                 {{{"name", "judge"},
                                   {"match", {{"schema", "memfail_judge_answer"}}},
                                   {"json", verdict}}}}});
    ASSERT_TRUE(server);
    EXPECT_EQ(server->base_url(), "http://127.0.0.1:" + std::to_string(server->port()) + "/v1");

    const Reply r =
        post(*server, "/v1/chat/completions",
             chat_body("grade this", schema_format("memfail_judge_answer", {{"type", "object"}})));
    ASSERT_EQ(r.status, 200) << r.raw;
    EXPECT_EQ(r.body["object"], "chat.completion");
    EXPECT_EQ(r.body["model"], "test-model");
    EXPECT_TRUE(r.body["id"].is_string());
    EXPECT_TRUE(r.body["created"].is_number_integer());
    ASSERT_EQ(r.body["choices"].size(), 1u);
    EXPECT_EQ(r.body["choices"][0]["index"], 0);
    EXPECT_EQ(r.body["choices"][0]["message"]["role"], "assistant");
    EXPECT_EQ(r.body["choices"][0]["finish_reason"], "stop");
    EXPECT_EQ(json::parse(content_of(r)), verdict);
    const json& usage = r.body["usage"];
    // Counted as the API counts them: the model's encoding, 3 tokens of framing per message, 3 to
    // prime the reply ("grade this" is 2 tokens in o200k_base).
    EXPECT_EQ(usage["prompt_tokens"], 2 + 3 + 3);
    EXPECT_EQ(usage["prompt_tokens"], count_chat_prompt("test-model", {"grade this"}));
    EXPECT_EQ(usage["completion_tokens"], count_tokens("test-model", content_of(r)));
    EXPECT_GT(usage["completion_tokens"].get<int>(), 0);
    EXPECT_EQ(usage["total_tokens"],
              usage["prompt_tokens"].get<int>() + usage["completion_tokens"].get<int>());

    // Another schema falls through to the auto reply.
    const Reply other = post(*server, "/v1/chat/completions",
                             chat_body("x", schema_format("memfail_other", {{"type", "object"}})));
    ASSERT_EQ(other.status, 200);
    EXPECT_EQ(content_of(other), "{}");

    const json stats = server->stats();
    EXPECT_EQ(stats["requests"], 2);
    EXPECT_EQ(stats["chat"], 2);
    EXPECT_EQ(stats["by_rule"]["judge"], 1);
    EXPECT_EQ(stats["by_rule"]["default"], 1);
    EXPECT_EQ(stats["by_schema"]["memfail_judge_answer"], 1);
    EXPECT_EQ(stats["by_schema"]["memfail_other"], 1);
}

TEST(FakeLlm, TimesFallsThroughAndResetRestartsCounts) {
    auto server = start_script({{"rules",
                                 {{{"name", "first"}, {"times", 2}, {"reply", "one"}},
                                  {{"name", "later"}, {"reply", "two"}}}}});
    ASSERT_TRUE(server);
    std::vector<std::string> answers;
    for (int i = 0; i < 3; ++i)
        answers.push_back(content_of(post(*server, "/v1/chat/completions", chat_body("q"))));
    EXPECT_EQ(answers, (std::vector<std::string>{"one", "one", "two"}));
    EXPECT_EQ(server->stats()["by_rule"]["first"], 2);
    EXPECT_EQ(server->stats()["by_rule"]["later"], 1);

    server->reset();
    const json stats = server->stats();
    EXPECT_EQ(stats["requests"], 0);
    EXPECT_EQ(stats["peak_in_flight"], 0);
    EXPECT_TRUE(stats["by_rule"].empty());
    EXPECT_EQ(content_of(post(*server, "/v1/chat/completions", chat_body("q"))), "one");

    // The HTTP reset endpoint does the same.
    EXPECT_EQ(post(*server, "/_fake/reset", json::object()).status, 200);
    EXPECT_EQ(server->stats()["requests"], 0);
}

// A bare `curl -X POST .../_fake/reset` sends no Content-Length: the HTTP library refuses it before
// any handler, and the refusal says what to send instead of a bare "HTTP 400".
TEST(FakeLlm, APostWithoutALengthIsToldWhatToSend) {
    auto server = start_script({{"rules", json::array()}});
    ASSERT_TRUE(server);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(server->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    const std::string request = "POST /_fake/reset HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
    std::string response;
    char buffer[4096];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, static_cast<std::size_t>(n));
    ::close(fd);
    EXPECT_NE(response.find("400"), std::string::npos) << response;
    EXPECT_NE(response.find("needs a Content-Length header"), std::string::npos) << response;
    EXPECT_NE(response.find("missing_content_length"), std::string::npos) << response;
    // With a length (empty body) the reset works.
    EXPECT_EQ(post(*server, "/_fake/reset", std::string()).status, 200);
}

TEST(FakeLlm, HttpFaultsAreOpenAiShapedAndCarryRetryAfter) {
    auto server = start_script(
        {{"rules",
          {{{"match", {{"contains", "rate"}}}, {"fault", "http_429"}, {"retry_after", 3}},
           {{"match", {{"contains", "busy"}}}, {"fault", "http_503"}, {"retry_after", 2}},
           {{"match", {{"contains", "crash"}}}, {"fault", "http_500"}},
           {{"match", {{"contains", "broken"}}}, {"fault", "malformed_json"}},
           {{"match", {{"contains", "wrong"}}}, {"fault", "schema_violation"}},
           {{"match", {{"contains", "hang"}}}, {"fault", "stall"}, {"delay_ms", 50}}}}});
    ASSERT_TRUE(server);
    const Reply limited = post(*server, "/v1/chat/completions", chat_body("rate me"));
    EXPECT_EQ(limited.status, 429);
    EXPECT_EQ(limited.retry_after, "3");
    EXPECT_EQ(limited.body["error"]["code"], "rate_limit_exceeded");
    EXPECT_TRUE(limited.body["error"]["message"].is_string());
    EXPECT_TRUE(limited.body["error"].contains("param"));
    EXPECT_TRUE(limited.body["error"].contains("type"));

    const Reply busy = post(*server, "/v1/chat/completions", chat_body("busy"));
    EXPECT_EQ(busy.status, 503);
    EXPECT_EQ(busy.retry_after, "2");
    const Reply crash = post(*server, "/v1/chat/completions", chat_body("crash"));
    EXPECT_EQ(crash.status, 500);
    EXPECT_EQ(crash.retry_after, "");
    EXPECT_EQ(crash.body["error"]["type"], "server_error");

    const Reply broken = post(*server, "/v1/chat/completions", chat_body("broken"));
    ASSERT_EQ(broken.status, 200);
    EXPECT_TRUE(json::parse(content_of(broken), nullptr, false).is_discarded());
    const Reply wrong = post(*server, "/v1/chat/completions", chat_body("wrong"));
    ASSERT_EQ(wrong.status, 200);
    EXPECT_EQ(json::parse(content_of(wrong)), (json{{"unexpected", true}}));

    const Reply hang = post(*server, "/v1/chat/completions", chat_body("hang"));
    EXPECT_EQ(hang.status, 504);
    EXPECT_EQ(server->stats()["faults"], 6);
}

TEST(FakeLlm, StallIsCutShortWhenTheServerStops) {
    auto server = start_script({{"rules", {{{"fault", "stall"}}}}}); // default hold: 60 s
    ASSERT_TRUE(server);
    // A client that gives up early gets no answer.
    EXPECT_EQ(post(*server, "/v1/chat/completions", chat_body("q"), {}, 0.2).status, 0);

    Reply waiting;
    std::thread client(
        [&] { waiting = post(*server, "/v1/chat/completions", chat_body("q"), {}, 30); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (server->stats()["in_flight"] != 2 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(server->stats()["in_flight"], 2);
    const auto t0 = std::chrono::steady_clock::now();
    server->stop();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
    client.join();
    EXPECT_EQ(waiting.status, 503)
        << waiting.raw; // told the server is going away, not a minute later
    EXPECT_FALSE(server->running());
}

TEST(FakeLlm, AuthIsRequiredAndTheLogNeverHoldsTheKey) {
    const std::string log_path = temp_path("auth.jsonl");
    std::remove(log_path.c_str());
    ServerOptions options;
    options.required_key = "sk-fake-secret-123";
    options.log_path = log_path;
    auto server = start_server(options);
    ASSERT_TRUE(server);

    const Reply missing = post(*server, "/v1/chat/completions", chat_body("q"));
    EXPECT_EQ(missing.status, 401);
    EXPECT_EQ(missing.body["error"]["type"], "invalid_request_error");
    const Reply wrong = post(*server, "/v1/chat/completions", chat_body("q"), "sk-wrong-456");
    EXPECT_EQ(wrong.status, 401);
    // A worst-case server: it echoes the key it was sent, so memfail's redaction gets tested.
    EXPECT_NE(wrong.body["error"]["message"].get<std::string>().find("sk-wrong-456"),
              std::string::npos);
    const Reply ok = post(*server, "/v1/chat/completions", chat_body("q"), "sk-fake-secret-123");
    EXPECT_EQ(ok.status, 200);
    EXPECT_EQ(content_of(ok), "OK");
    const Reply embed = post(*server, "/v1/embeddings", {{"model", "e"}, {"input", "hello"}});
    EXPECT_EQ(embed.status, 401);
    EXPECT_EQ(server->stats()["auth_failures"], 3);
    server.reset();

    std::ifstream in(log_path);
    std::stringstream all;
    all << in.rdbuf();
    const std::string log = all.str();
    EXPECT_EQ(log.find("sk-fake-secret-123"), std::string::npos);
    EXPECT_EQ(log.find("sk-wrong-456"), std::string::npos);
    std::vector<json> lines;
    std::istringstream stream(log);
    for (std::string line; std::getline(stream, line);)
        lines.push_back(json::parse(line));
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[0]["auth_present"], false);
    EXPECT_EQ(lines[0]["status"], 401);
    EXPECT_EQ(lines[2]["auth_present"], true);
    EXPECT_EQ(lines[2]["endpoint"], "chat");
    EXPECT_EQ(lines[2]["model"], "test-model");
    EXPECT_EQ(lines[2]["rule"], "default");
    EXPECT_EQ(lines[2]["messages"][0]["content"], "q");
    EXPECT_EQ(lines[3]["endpoint"], "embeddings");
    std::remove(log_path.c_str());
}

TEST(FakeLlm, JsonSchemaUnsupportedModeAnswers400AndJsonObjectFindsTheSchemaName) {
    ServerOptions options;
    options.json_schema_supported = false;
    options.script = {
        {"rules",
         {{{"match", {{"schema", "memfail_judge_storage"}}}, {"json", {{"verdict", "yes"}}}}}}};
    auto server = start_server(options);
    ASSERT_TRUE(server);
    const Reply refused =
        post(*server, "/v1/chat/completions",
             chat_body("q", schema_format("memfail_judge_storage", {{"type", "object"}})));
    EXPECT_EQ(refused.status, 400);
    EXPECT_EQ(refused.body["error"]["param"], "response_format");

    const Reply fallback = post(*server, "/v1/chat/completions",
                                chat_body("q", {{"type", "json_object"}},
                                          "Answer in JSON.\nschema name: memfail_judge_storage\n"));
    ASSERT_EQ(fallback.status, 200);
    EXPECT_EQ(json::parse(content_of(fallback)), (json{{"verdict", "yes"}}));
    const Reply plain_object =
        post(*server, "/v1/chat/completions", chat_body("q", {{"type", "json_object"}}));
    EXPECT_EQ(content_of(plain_object), "{}");
    EXPECT_EQ(server->stats()["by_schema"]["memfail_judge_storage"], 1);
}

TEST(FakeLlm, AutoReplySatisfiesTheRequestedSchema) {
    const json schema = {
        {"type", "object"},
        {"$defs", {{"stage", {{"type", "string"}, {"enum", {"storage", "retrieval"}}}}}},
        {"properties",
         {{"verdict", {{"type", "string"}, {"enum", {"pass", "fail"}}}},
          {"reason", {{"type", "string"}, {"minLength", 5}}},
          {"score", {{"type", "integer"}, {"minimum", 3}}},
          {"ratio", {{"type", "number"}, {"exclusiveMinimum", 0.5}}},
          {"ok", {{"type", "boolean"}}},
          {"note", {{"type", {"string", "null"}}}},
          {"stage", {{"$ref", "#/$defs/stage"}}},
          {"facts",
           {{"type", "array"},
            {"minItems", 2},
            {"items",
             {{"type", "object"},
              {"properties", {{"id", {{"type", "integer"}}}}},
              {"required", {"id"}}}}}},
          {"optional", {{"type", "string"}}}}},
        {"required", {"verdict", "reason", "score", "ratio", "ok", "note", "stage", "facts"}}};
    auto server = start_script(json::object());
    ASSERT_TRUE(server);
    const Reply r =
        post(*server, "/v1/chat/completions", chat_body("q", schema_format("any", schema)));
    ASSERT_EQ(r.status, 200) << r.raw;
    const json v = json::parse(content_of(r));
    EXPECT_EQ(v["verdict"], "pass");
    EXPECT_TRUE(v["reason"].is_string());
    EXPECT_GE(v["reason"].get<std::string>().size(), 5u);
    EXPECT_EQ(v["score"], 3);
    EXPECT_GT(v["ratio"].get<double>(), 0.5);
    EXPECT_EQ(v["ok"], true);
    EXPECT_TRUE(v["note"].is_string());
    EXPECT_EQ(v["stage"], "storage");
    ASSERT_TRUE(v["facts"].is_array());
    ASSERT_EQ(v["facts"].size(), 2u);
    EXPECT_EQ(v["facts"][0], (json{{"id", 0}}));
    EXPECT_FALSE(v.contains("optional"));
    EXPECT_FALSE(v.contains("$defs"));

    // Plain requests get "OK"; distinct items when uniqueItems asks for them.
    EXPECT_EQ(content_of(post(*server, "/v1/chat/completions", chat_body("q"))), "OK");
    const json unique = memfail::fake_llm::minimal_instance({{"type", "array"},
                                                             {"minItems", 3},
                                                             {"uniqueItems", true},
                                                             {"items", {{"type", "string"}}}});
    ASSERT_EQ(unique.size(), 3u);
    EXPECT_NE(unique[0], unique[1]);
    EXPECT_NE(unique[1], unique[2]);
}

TEST(FakeLlm, EmbeddingsAreDeterministicUnitVectorsInInputOrder) {
    ServerOptions options;
    options.embedding_dim = 16;
    auto server = start_server(options);
    ASSERT_TRUE(server);
    const Reply many = post(*server, "/v1/embeddings",
                            {{"model", "emb"}, {"input", {"alpha beta", "gamma", "alpha beta"}}});
    ASSERT_EQ(many.status, 200) << many.raw;
    EXPECT_EQ(many.body["object"], "list");
    EXPECT_EQ(many.body["model"], "emb");
    const std::int64_t counted = 2 * count_tokens("emb", "alpha beta") + count_tokens("emb", "gamma");
    EXPECT_GE(counted, 5); // at least a token a word
    EXPECT_EQ(many.body["usage"]["prompt_tokens"], counted);
    EXPECT_EQ(many.body["usage"]["total_tokens"], counted);
    const json& data = many.body["data"];
    ASSERT_EQ(data.size(), 3u);
    for (std::size_t i = 0; i < data.size(); ++i) {
        EXPECT_EQ(data[i]["object"], "embedding");
        EXPECT_EQ(data[i]["index"], i);
        const auto vec = data[i]["embedding"].get<std::vector<double>>();
        ASSERT_EQ(vec.size(), 16u);
        double norm = 0;
        for (double x : vec)
            norm += x * x;
        EXPECT_NEAR(norm, 1.0, 1e-5);
    }
    EXPECT_EQ(data[0]["embedding"], data[2]["embedding"]);
    EXPECT_NE(data[0]["embedding"], data[1]["embedding"]);

    // A single string, another request and the library function all agree; dimensions is honoured.
    const Reply one = post(*server, "/v1/embeddings", {{"model", "emb"}, {"input", "gamma"}});
    ASSERT_EQ(one.status, 200);
    EXPECT_EQ(one.body["data"][0]["embedding"], data[1]["embedding"]);
    const auto direct = memfail::fake_llm::embedding_for("gamma", 16);
    for (std::size_t i = 0; i < direct.size(); ++i)
        EXPECT_FLOAT_EQ(static_cast<float>(data[1]["embedding"][i].get<double>()), direct[i]);
    const Reply small =
        post(*server, "/v1/embeddings", {{"model", "emb"}, {"input", "gamma"}, {"dimensions", 4}});
    EXPECT_EQ(small.body["data"][0]["embedding"].size(), 4u);
    const Reply b64 = post(
        *server, "/v1/embeddings",
        {{"model", "emb"}, {"input", "gamma"}, {"dimensions", 3}, {"encoding_format", "base64"}});
    EXPECT_EQ(b64.body["data"][0]["embedding"].get<std::string>().size(), 16u); // 12 bytes

    const Reply tokens = post(*server, "/v1/embeddings", {{"model", "emb"}, {"input", {1, 2, 3}}});
    EXPECT_EQ(tokens.status, 400);
    EXPECT_EQ(tokens.body["error"]["param"], "input");
    EXPECT_EQ(server->stats()["embeddings"], 5);
}

TEST(FakeLlm, PeakInFlightCountsConcurrentDelayedRequests) {
    constexpr int k_clients = 32;
    constexpr int k_delay_ms = 300;
    auto server = start_script({{"default", {{"delay_ms", k_delay_ms}, {"reply", "late"}}}});
    ASSERT_TRUE(server);
    std::atomic<int> ok{0};
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> clients;
    for (int i = 0; i < k_clients; ++i)
        clients.emplace_back([&] {
            if (post(*server, "/v1/chat/completions", chat_body("q")).status == 200)
                ++ok;
        });
    for (auto& c : clients)
        c.join();
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(ok.load(), k_clients);
    const json stats = server->stats();
    EXPECT_EQ(stats["peak_in_flight"], k_clients);
    EXPECT_EQ(stats["in_flight"], 0);
    // Served in parallel: far below the serial time of 32 x 300 ms.
    EXPECT_LT(elapsed, std::chrono::milliseconds(k_clients * k_delay_ms / 3));
    EXPECT_GE(elapsed, std::chrono::milliseconds(k_delay_ms));
}

TEST(FakeLlm, MatchConditionsCombine) {
    auto server = start_script(
        {{"rules",
          {{{"name", "model"}, {"match", {{"model", "other-model"}}}, {"reply", "by model"}},
           {{"name", "last"},
            {"match", {{"last_user_contains", "weather"}}},
            {"reply", "sunny"},
            {"finish_reason", "length"}},
           {{"name", "regex"},
            {"match", {{"regex", "order #[0-9]+"}}},
            {"reply", "found order"},
            {"usage", false}},
           {{"name", "embed"},
            {"match", {{"endpoint", "embeddings"}, {"contains", "fail"}}},
            {"fault", "http_500"}}}}});
    ASSERT_TRUE(server);
    json body = chat_body("hello");
    body["model"] = "other-model";
    EXPECT_EQ(content_of(post(*server, "/v1/chat/completions", body)), "by model");
    // last_user_contains looks at the last user message only, not the system prompt.
    const Reply sys =
        post(*server, "/v1/chat/completions", chat_body("hi", nullptr, "talk about weather"));
    EXPECT_EQ(content_of(sys), "OK");
    const Reply last = post(*server, "/v1/chat/completions", chat_body("what weather today"));
    EXPECT_EQ(content_of(last), "sunny");
    EXPECT_EQ(last.body["choices"][0]["finish_reason"], "length");
    const Reply re = post(*server, "/v1/chat/completions", chat_body("about order #42 please"));
    EXPECT_EQ(content_of(re), "found order");
    EXPECT_FALSE(re.body.contains("usage"));
    EXPECT_EQ(post(*server, "/v1/embeddings", {{"model", "e"}, {"input", "please fail"}}).status,
              500);
    EXPECT_EQ(post(*server, "/v1/embeddings", {{"model", "e"}, {"input", "fine"}}).status, 200);
}

TEST(FakeLlm, BadRequestBodiesGet400AndTheServerKeepsServing) {
    auto server = start_script(json::object());
    ASSERT_TRUE(server);
    const std::vector<json> bad_bodies = {
        json("{not json"),
        json("[1, 2]"),
        json{{"messages", {{{"role", "user"}, {"content", "q"}}}}}, // no model
        json{{"model", "m"}, {"messages", json::array()}},
        json{{"model", "m"}, {"messages", {{{"role", "wizard"}, {"content", "q"}}}}},
        json{{"model", "m"}, {"messages", {{{"role", "user"}, {"content", 42}}}}},
        json{{"model", "m"},
             {"messages", {{{"role", "user"}, {"content", "q"}}}},
             {"response_format", {{"type", "yaml"}}}},
        json{{"model", "m"},
             {"messages", {{{"role", "user"}, {"content", "q"}}}},
             {"response_format",
              {{"type", "json_schema"}, {"json_schema", {{"schema", json::object()}}}}}},
    };
    for (const auto& b : bad_bodies) {
        const Reply r = post(*server, "/v1/chat/completions", b);
        EXPECT_EQ(r.status, 400) << b.dump();
        EXPECT_TRUE(r.body["error"]["message"].is_string()) << r.raw;
    }
    EXPECT_EQ(server->stats()["bad_requests"], static_cast<int>(bad_bodies.size()));
    const Reply unknown = post(*server, "/v1/completions", json::object());
    EXPECT_EQ(unknown.status, 404);
    EXPECT_EQ(unknown.body["error"]["code"], "unknown_url");
    // Content parts are accepted and joined.
    const Reply parts = post(
        *server, "/v1/chat/completions",
        {{"model", "m"},
         {"messages", {{{"role", "user"}, {"content", {{{"type", "text"}, {"text", "a b"}}}}}}}});
    EXPECT_EQ(parts.status, 200);
    EXPECT_EQ(parts.body["usage"]["prompt_tokens"], count_chat_prompt("m", {"a b"}));
}

// Validation errors name the offending field: {script, where, message fragment}.
TEST(FakeLlm, ScriptValidationNamesTheField) {
    struct Case {
        json script;
        std::string where;
        std::string fragment;
    };
    const std::vector<Case> cases = {
        {json::array(), "", "must be a JSON object"},
        {{{"rulez", json::array()}}, "rulez", "did you mean 'rules'?"},
        {{{"rules", {{{"match", {{"schema", "a"}}}}, {{"match", {{"shema", "b"}}}}}}},
         "rules[1].match.shema",
         "did you mean 'schema'?"},
        {{{"rules", {{{"fault", "http_249"}}}}}, "rules[0].fault", "unknown fault 'http_249'"},
        {{{"rules", {{{"reply", "a"}, {"json", {{"b", 1}}}}}}},
         "rules[0]",
         "both \"reply\" and \"json\""},
        {{{"rules", {{{"reply", "a"}, {"fault", "http_500"}}}}},
         "rules[0]",
         "a fault replaces the reply"},
        {{{"rules", {{{"times", "2"}}}}}, "rules[0].times", "whole number"},
        {{{"rules", {{{"times", -1}}}}}, "rules[0].times", "between 0"},
        {{{"rules", {{{"delay_ms", 1.5}}}}}, "rules[0].delay_ms", "whole number"},
        {{{"rules", {{{"fault", "http_500"}, {"retry_after", 1}}}}},
         "rules[0].retry_after",
         "http_429"},
        {{{"rules", {{{"usage", "no"}}}}}, "rules[0].usage", "true or false"},
        {{{"rules", {{{"finish_reason", "done"}}}}},
         "rules[0].finish_reason",
         "unknown finish_reason"},
        {{{"rules", {{{"schema", "x"}}}}}, "rules[0].schema", "inside \"match\""},
        {{{"rules", {{{"match", {{"endpoint", "completions"}}}}}}},
         "rules[0].match.endpoint",
         "unknown endpoint"},
        {{{"rules", {{{"match", {{"regex", "(["}}}}}}},
         "rules[0].match.regex",
         "invalid regular expression"},
        {{{"rules", {{{"match", {{"endpoint", "embeddings"}}}, {"reply", "x"}}}}},
         "rules[0].reply",
         "embeddings"},
        {{{"rules", {{{"match", {{"endpoint", "embeddings"}}}, {"fault", "malformed_json"}}}}},
         "rules[0].fault",
         "embeddings"},
        {{{"rules", {{{"match", {{"endpoint", "embeddings"}, {"schema", "s"}}}}}}},
         "rules[0].match.schema",
         "embeddings"},
        {{{"rules", {{{"match", {{"times", 1}}}}}}}, "rules[0].match.times", "belongs to the rule"},
        {{{"default", {{"times", 1}}}}, "default.times", "only the action fields"},
        {{{"rules", {{{"name", 3}}}}}, "rules[0].name", "must be a string"},
    };
    for (const auto& c : cases) {
        auto result = memfail::fake_llm::validate_script(c.script);
        ASSERT_FALSE(result) << c.script.dump();
        EXPECT_EQ(result.error().kind, memfail::ErrorKind::invalid_input);
        EXPECT_EQ(result.error().where, c.where) << c.script.dump();
        EXPECT_NE(result.error().message.find(c.fragment), std::string::npos)
            << c.script.dump() << " -> " << result.error().describe();
    }
    EXPECT_TRUE(memfail::fake_llm::validate_script(
        {{"description", "ok"},
         {"rules",
          {{{"name", "a"},
            {"match", {{"schema", "s"}, {"model", "m"}}},
            {"times", 0},
            {"json", nullptr}}}},
         {"default", {{"fault", "http_503"}, {"retry_after", 1}}}}));

    // start() and set_script() refuse bad scripts; a failed set_script keeps the old rules.
    ServerOptions options;
    options.script = {{"rules", {{{"fault", "nope"}}}}};
    EXPECT_FALSE(FakeLlmServer::start(options));
    auto server = start_script({{"default", {{"reply", "old"}}}});
    ASSERT_TRUE(server);
    EXPECT_FALSE(server->set_script({{"default", {{"reply", 1}}}}));
    EXPECT_EQ(content_of(post(*server, "/v1/chat/completions", chat_body("q"))), "old");
    EXPECT_TRUE(server->set_script({{"default", {{"reply", "new"}}}}));
    EXPECT_EQ(content_of(post(*server, "/v1/chat/completions", chat_body("q"))), "new");
}

TEST(FakeLlm, BusyPortIsAnErrorNotASharedPort) {
    auto first = start_script(json::object());
    ASSERT_TRUE(first);
    ServerOptions options;
    options.port = first->port();
    auto second = FakeLlmServer::start(options);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().kind, memfail::ErrorKind::network);
    options.port = 0;
    options.threads = 0;
    EXPECT_FALSE(FakeLlmServer::start(options));
}

TEST(FakeLlm, LoadScriptNamesTheFileAndLine) {
    const std::string path = temp_path("script.json");
    {
        std::ofstream out(path);
        out << "{\n  \"rules\": [\n    {\"fault\": }\n  ]\n}\n";
    }
    auto bad_json = memfail::fake_llm::load_script(path);
    ASSERT_FALSE(bad_json);
    EXPECT_EQ(bad_json.error().where, path + ":3:15");
    {
        std::ofstream out(path);
        out << R"({"rules": [{"match": {"modle": "m"}}]})";
    }
    auto bad_field = memfail::fake_llm::load_script(path);
    ASSERT_FALSE(bad_field);
    EXPECT_EQ(bad_field.error().describe(),
              path + ": rules[0].match.modle: unknown key; did you mean 'model'?");
    {
        std::ofstream out(path);
        out << R"({"rules": [{"match": {"model": "m"}, "reply": "hi"}]})";
    }
    auto good = memfail::fake_llm::load_script(path);
    ASSERT_TRUE(good) << good.error().describe();
    EXPECT_EQ((*good)["rules"][0]["reply"], "hi");
    std::remove(path.c_str());
    EXPECT_FALSE(memfail::fake_llm::load_script(path));
}

} // namespace
